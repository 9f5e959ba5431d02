/* replay.c: kcc-replay, the command-line replayer of input traces (docs/traces.md). Replays each file
 * through the controller and reports the first divergence per file; can rewrite expected outcomes
 * (--update) and print the replayed positions (--print). Exit 0 when every frame of every file
 * matches, 1 when some file diverges, 2 on usage errors or unreadable/bad files. */
#include "kcc.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *to)
{
    fprintf(to,
            "usage: kcc-replay [options] FILE...\n"
            "Replays kcc input traces and checks every frame against its expected outcome.\n"
            "  --tolerance M   accept position differences up to M metres per component\n"
            "                  (default 0: bit-exact); flags and retune statuses always match exactly\n"
            "  --update        rewrite the expected outcomes in each FILE with the replayed ones\n"
            "  --print         write the replayed outcome of every step to stdout\n"
            "  --verbose, -v   one line per file even when it matches\n"
            "  --isa           print the instruction set moves run on (avx2 or baseline) and exit;\n"
            "                  KCC_ISA=baseline in the environment forces the baseline\n"
            "  --help, -h      this text\n"
            "Exit status: 0 all frames match (or were updated), 1 a trace diverges, 2 an error.\n");
}

// Meshes already built, keyed by level kind and description: golden sets reuse a few levels.
#define CACHE_SIZE 16
typedef struct mesh_cache {
    char     *key[CACHE_SIZE];
    kcc_mesh *mesh[CACHE_SIZE];
    int       count;
} mesh_cache;

static kcc_status cached_level(mesh_cache *c, const kcc_trace *t, kcc_mesh **out, char *err,
                               size_t err_size)
{
    char key[KCC_TRACE_LEVEL_MAX + 8];
    snprintf(key, sizeof key, "%d %s", (int)t->level_kind, t->level);
    for (int i = 0; i < c->count; ++i) {
        if (strcmp(c->key[i], key) == 0) {
            *out = c->mesh[i];
            return KCC_OK;
        }
    }
    kcc_mesh *m = NULL;
    kcc_status st = kcc_trace_build_level(t, &m, err, err_size);
    if (st != KCC_OK)
        return st;
    if (c->count == CACHE_SIZE) {   // evict the oldest
        free(c->key[0]);
        kcc_mesh_destroy(c->mesh[0]);
        memmove(c->key, c->key + 1, (CACHE_SIZE - 1) * sizeof c->key[0]);
        memmove(c->mesh, c->mesh + 1, (CACHE_SIZE - 1) * sizeof c->mesh[0]);
        c->count--;
    }
    size_t n = strlen(key) + 1;
    c->key[c->count] = malloc(n);
    if (!c->key[c->count]) {
        kcc_mesh_destroy(m);
        return KCC_ERR_OUT_OF_MEMORY;
    }
    memcpy(c->key[c->count], key, n);
    c->mesh[c->count++] = m;
    *out = m;
    return KCC_OK;
}

static void print_float(float v)
{
    char t[KCC_TRACE_FLOAT_CHARS];
    kcc_trace_float_to_text(v, t);
    fputs(t, stdout);
}

static void print_outcomes(const kcc_trace *t, const kcc_trace_outcome *o)
{
    printf("# %s\n", t->name);
    uint32_t frame = 0;
    for (uint32_t i = 0; i < t->step_count; ++i) {
        const kcc_trace_step *s = &t->steps[i];
        if (s->kind == KCC_TRACE_MOVE) {
            char flags[KCC_TRACE_FLAGS_CHARS];
            kcc_trace_flags_to_text(o[i].flags, flags, sizeof flags);
            printf("%u ", (unsigned)frame++);
            print_float(o[i].position[0]);
            putchar(' ');
            print_float(o[i].position[1]);
            putchar(' ');
            print_float(o[i].position[2]);
            printf(" %s\n", flags);
        } else if (s->kind == KCC_TRACE_SET) {
            printf("set %s\n", kcc_trace_status_name(o[i].status));
        } else {
            printf("start ");
            print_float(o[i].position[0]);
            putchar(' ');
            print_float(o[i].position[1]);
            putchar(' ');
            print_float(o[i].position[2]);
            putchar('\n');
        }
    }
}

// Writes the updated trace next to the file and renames it over the original.
static int update_file(const char *path, const kcc_trace *t, const kcc_trace_outcome *o)
{
    size_t n = strlen(path);
    char *tmp = malloc(n + 16);
    if (!tmp) {
        fprintf(stderr, "%s: out of memory\n", path);
        return 2;
    }
    snprintf(tmp, n + 16, "%s.update-tmp", path);
    FILE *f = fopen(tmp, "wb");
    kcc_status st = f ? kcc_trace_write(t, o, f) : KCC_ERR_IO;
    if (f && fclose(f) != 0)
        st = KCC_ERR_IO;
    if (st != KCC_OK || rename(tmp, path) != 0) {
        fprintf(stderr, "%s: cannot write the updated trace: %s\n", path,
                st != KCC_OK ? kcc_status_str(st) : strerror(errno));
        remove(tmp);
        free(tmp);
        return 2;
    }
    free(tmp);
    return 0;
}

int main(int argc, char **argv)
{
    float tolerance = 0.0f;
    bool update = false, print = false, verbose = false;
    int first_file = argc;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            first_file = i + 1;
            break;
        }
        if (a[0] != '-' || a[1] == '\0') {
            first_file = i;
            break;
        }
        if (strcmp(a, "--update") == 0) {
            update = true;
        } else if (strcmp(a, "--print") == 0) {
            print = true;
        } else if (strcmp(a, "--verbose") == 0 || strcmp(a, "-v") == 0) {
            verbose = true;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--isa") == 0) {
            printf("%s\n", kcc_character_isa());
            return 0;
        } else if (strncmp(a, "--tolerance", 11) == 0 && (a[11] == '=' || a[11] == '\0')) {
            const char *v = a[11] == '=' ? a + 12 : (i + 1 < argc ? argv[++i] : "");
            if (!kcc_trace_text_to_float(v, &tolerance) || !(tolerance >= 0.0f) ||
                tolerance == INFINITY) {
                fprintf(stderr, "kcc-replay: --tolerance needs a number of metres >= 0, got '%s'\n", v);
                return 2;
            }
        } else {
            fprintf(stderr, "kcc-replay: unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (first_file >= argc) {
        usage(stderr);
        return 2;
    }
    mesh_cache cache;
    memset(&cache, 0, sizeof cache);
    int worst = 0, files = 0, diverged_files = 0;
    unsigned long frames = 0;
    for (int i = first_file; i < argc; ++i) {
        const char *path = argv[i];
        char err[1024];
        kcc_trace *t = NULL;
        kcc_mesh *mesh = NULL;
        kcc_status st = kcc_trace_load(path, &t, err, sizeof err);
        if (st == KCC_OK)
            st = cached_level(&cache, t, &mesh, err, sizeof err);
        if (st != KCC_OK) {
            fprintf(stderr, "%s (%s)\n", err[0] ? err : path, kcc_status_str(st));
            kcc_trace_free(t);
            worst = 2;
            continue;
        }
        kcc_trace_outcome *o = calloc(t->step_count ? t->step_count : 1, sizeof *o);
        kcc_trace_report r;
        st = o ? kcc_trace_replay(t, mesh, tolerance, o, &r) : KCC_ERR_OUT_OF_MEMORY;
        if (st != KCC_OK) {
            fprintf(stderr, "%s: cannot replay: %s\n", path, kcc_status_str(st));
            free(o);
            kcc_trace_free(t);
            worst = 2;
            continue;
        }
        files++;
        frames += r.frames;
        if (print)
            print_outcomes(t, o);
        if (update) {
            int u = update_file(path, t, o);
            if (u)
                worst = u;
            else if (verbose || r.diverged)
                fprintf(stderr, "%s: updated (%u of %u steps changed)\n", path, (unsigned)r.diverged,
                        (unsigned)r.steps);
        } else if (r.diverged) {
            char msg[1024];
            kcc_trace_format_divergence(t, &r, msg, sizeof msg);
            char e[KCC_TRACE_FLOAT_CHARS];
            kcc_trace_float_to_text(r.max_error, e);
            fprintf(stderr, "%s\n%s: %u of %u steps diverge; largest position difference %s m\n", msg,
                    path, (unsigned)r.diverged, (unsigned)r.steps, e);
            diverged_files++;
            if (worst < 1)
                worst = 1;
        } else if (verbose) {
            fprintf(stderr, "%s: %u frames match\n", path, (unsigned)r.frames);
        }
        free(o);
        kcc_trace_free(t);
    }
    for (int i = 0; i < cache.count; ++i) {
        free(cache.key[i]);
        kcc_mesh_destroy(cache.mesh[i]);
    }
    if (!update)
        fprintf(stderr, "kcc-replay: %d trace%s, %lu frames: %s\n", files, files == 1 ? "" : "s",
                frames, worst == 0 ? "all match" : diverged_files ? "DIVERGED" : "ERRORS");
    return worst;
}
