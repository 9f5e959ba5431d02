/* replay.c: kcc-replay, the command-line replayer of input traces (docs/traces.md). Replays each file
 * (single-character traces through the controller, world traces through a world on --workers
 * threads) and reports the first divergence per file; can rewrite expected outcomes (--update,
 * listing the frames it changed) and print the replayed positions (--print). Exit 0 when
 * every frame of every file matches, 1 when some file diverges, 2 on usage errors or a file that
 * cannot be replayed (unreadable, malformed, its level missing or changed: a changed level is named
 * "level changed"); kcc-demo uses the same three statuses. Warns, as kcc-demo does, about a KCC_ISA
 * the library does not know (isa_env.h). `make replay-check` runs each of these cases. */
#include "kcc.h"
#include "isa_env.h"
#include "jobs.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EXIT_PASS = 0, EXIT_DIVERGED = 1, EXIT_BAD_INPUT = 2 };

static void usage(FILE *to)
{
    fprintf(to,
            "usage: kcc-replay [options] FILE...\n"
            "Replays kcc input traces and checks every frame against its expected outcome.\n"
            "  --tolerance M   accept position differences up to M metres per component\n"
            "                  (default 0: bit-exact); flags and retune statuses always match exactly\n"
            "  --update        rewrite the expected outcomes in each FILE with the replayed ones and\n"
            "                  list the frames that changed (on stderr)\n"
            "  --print         write the replayed outcome of every step to stdout (a world trace:\n"
            "                  the trace its replay records)\n"
            "  --workers N     replay world traces on N worker threads (1..64, default 1); the\n"
            "                  outcomes must not depend on it\n"
            "  --shrink OUT    (one world trace) write to OUT a smaller trace that still fails:\n"
            "                  steps, characters and bodies cut by delta debugging\n"
            "  --shrink-check C  what it must still do: divergence (default: diverge first at the\n"
            "                  same recorded outcome), penetration (a box 1 cm into a body), or\n"
            "                  flag=NAME (a step result with KCC_MOVE_NAME, e.g. flag=CRUSHED)\n"
            "  --verbose, -v   one line per file even when it matches\n"
            "  --isa           print the instruction set moves run on (avx2 or baseline) and exit;\n"
            "                  KCC_ISA=baseline in the environment forces the baseline (any other\n"
            "                  value than baseline, avx2 or empty is warned about and ignored)\n"
            "  --help, -h      this text\n"
            "Exit status: 0 every frame of every FILE matches (or was updated); 1 a trace diverges;\n"
            "2 a usage error or a FILE that cannot be replayed (unreadable, malformed, its level\n"
            "missing or changed since it was recorded: \"level changed\"), reported as FILE:LINE: what.\n");
}

// Meshes already built, keyed by level kind and description, with the content hash of their
// triangles: golden sets reuse a few levels.
#define CACHE_SIZE 16
typedef struct mesh_cache {
    char     *key[CACHE_SIZE];
    kcc_mesh *mesh[CACHE_SIZE];
    uint64_t  hash[CACHE_SIZE];
    int       count;
} mesh_cache;

static void cache_add(mesh_cache *c, char *key, kcc_mesh *mesh, uint64_t hash)
{
    if (c->count == CACHE_SIZE) {   // evict the oldest
        free(c->key[0]);
        kcc_mesh_destroy(c->mesh[0]);
        memmove(c->key, c->key + 1, (CACHE_SIZE - 1) * sizeof c->key[0]);
        memmove(c->mesh, c->mesh + 1, (CACHE_SIZE - 1) * sizeof c->mesh[0]);
        memmove(c->hash, c->hash + 1, (CACHE_SIZE - 1) * sizeof c->hash[0]);
        c->count--;
    }
    c->key[c->count] = key;
    c->mesh[c->count] = mesh;
    c->hash[c->count++] = hash;
}

// The trace's level as a mesh, checked against the trace's level_hash (a changed level is an
// error naming the level, not a divergence).
static kcc_status cached_level(mesh_cache *c, const kcc_trace *t, kcc_mesh **out, char *err,
                               size_t err_size)
{
    char key[KCC_TRACE_LEVEL_MAX + 8];
    snprintf(key, sizeof key, "%d %s", (int)t->level_kind, t->level);
    for (int i = 0; i < c->count; ++i) {
        if (strcmp(c->key[i], key) == 0) {
            *out = c->mesh[i];
            return kcc_trace_check_level_hash(t, c->hash[i], err, err_size);
        }
    }
    kcc_level level;
    kcc_status st = kcc_trace_load_level(t, &level, err, err_size);
    if (st != KCC_OK)
        return st;
    uint64_t hash = kcc_level_hash(&level);
    kcc_mesh *m = NULL;
    st = kcc_level_build_mesh(&level, &m);
    kcc_level_free(&level);
    char *k = st == KCC_OK ? malloc(strlen(key) + 1) : NULL;
    if (st == KCC_OK && !k) {
        kcc_mesh_destroy(m);
        st = KCC_ERR_OUT_OF_MEMORY;
    }
    if (st != KCC_OK) {
        snprintf(err, err_size, "%s:%u: level: cannot build its mesh: %s", t->name,
                 (unsigned)t->level_line, kcc_status_str(st));
        return st;
    }
    memcpy(k, key, strlen(key) + 1);
    cache_add(c, k, m, hash);
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
        return EXIT_BAD_INPUT;
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
        return EXIT_BAD_INPUT;
    }
    free(tmp);
    return EXIT_PASS;
}

// Whether --update changes the text of step s: a missing outcome, or one not bit for bit equal.
static bool step_changes(const kcc_trace_step *s, const kcc_trace_outcome *o)
{
    if (s->kind == KCC_TRACE_START)
        return false;
    if (!s->has_expected)
        return true;
    if (s->kind == KCC_TRACE_SET)
        return s->expected_status != o->status;
    return memcmp(s->expected_position, o->position, sizeof o->position) != 0 ||
           s->expected_flags != o->flags;
}

// Prints "N" or "N-M" on stderr.
static void print_range(uint32_t first, uint32_t last)
{
    if (first == last)
        fprintf(stderr, "%u", (unsigned)first);
    else
        fprintf(stderr, "%u-%u", (unsigned)first, (unsigned)last);
}

// Lists on stderr the runs of steps --update changes: "frames 3-5 (lines 8-10)", "retune (line
// 12)"; at most 12 runs, then a count of the rest. Returns how many steps change.
static uint32_t report_changes(const char *path, const kcc_trace *t, const kcc_trace_outcome *o)
{
    enum { LISTED = 12 };
    uint32_t changed = 0, runs = 0, frame = 0;
    for (uint32_t i = 0; i < t->step_count; ++i)
        changed += step_changes(&t->steps[i], &o[i]);
    if (changed == 0)
        return 0;
    fprintf(stderr, "%s: updated %u of %u steps:", path, (unsigned)changed, (unsigned)t->step_count);
    for (uint32_t i = 0; i < t->step_count;) {
        const kcc_trace_step *s = &t->steps[i];
        if (!step_changes(s, &o[i])) {
            frame += s->kind == KCC_TRACE_MOVE;
            ++i;
            continue;
        }
        uint32_t j = i, first_frame = frame;
        while (j < t->step_count && t->steps[j].kind == s->kind && step_changes(&t->steps[j], &o[j]))
            frame += t->steps[j++].kind == KCC_TRACE_MOVE;
        const char *plural = j - i > 1 ? "s" : "";
        if (runs++ < LISTED) {
            fputs(runs > 1 ? ", " : " ", stderr);
            if (s->kind == KCC_TRACE_MOVE) {
                fprintf(stderr, "frame%s ", plural);
                print_range(first_frame, frame - 1);
                fputs(" (line", stderr);
            } else {
                fprintf(stderr, "retune%s (line", plural);
            }
            fprintf(stderr, "%s ", plural);
            print_range(s->line, t->steps[j - 1].line);
            fputc(')', stderr);
        }
        i = j;
    }
    if (runs > LISTED)
        fprintf(stderr, ", and %u more", (unsigned)(runs - LISTED));
    fputc('\n', stderr);
    return changed;
}

typedef struct options {
    float    tolerance;   // m
    bool     update, print, verbose;
    uint32_t workers;     // world traces' worker threads
    const char *shrink;   // --shrink OUT
    kcc_world_shrink_desc shrink_desc;
} options;

typedef struct totals {
    int           files, matched, diverged, errors;
    int           levels_changed;   // errors that are a level changed since recording
    uint32_t      updated_steps;
    unsigned long frames;
} totals;

// "file:line: what (STATUS)" for a file that cannot be replayed; a changed level is named so.
static void report_unreplayable(const char *message, kcc_status st, totals *tot)
{
    bool changed = st == KCC_ERR_LEVEL_CHANGED;
    fprintf(stderr, "%s (%s%s)\n", message, changed ? "level changed: " : "",
            kcc_trace_status_name(st));
    tot->errors++;
    tot->levels_changed += changed;
}

// A world trace's replay recorded into a temporary file renamed over path (--update).
static int update_world_file(const char *path, const kcc_world_trace *t, kcc_world_replay_desc desc)
{
    char *tmp = malloc(strlen(path) + 16);
    if (!tmp)
        return EXIT_BAD_INPUT;
    sprintf(tmp, "%s.update-tmp", path);
    char err[1024] = "";
    kcc_world_trace_report r;
    desc.record = fopen(tmp, "wb");
    kcc_status st = desc.record ? kcc_world_trace_replay(t, &desc, &r, err, sizeof err) : KCC_ERR_IO;
    if (desc.record && fclose(desc.record) != 0 && st == KCC_OK)
        st = KCC_ERR_IO;
    if (st != KCC_OK || rename(tmp, path) != 0) {
        fprintf(stderr, "%s: cannot write the updated trace: %s\n", path,
                err[0] ? err : st != KCC_OK ? kcc_status_str(st) : strerror(errno));
        remove(tmp);
        free(tmp);
        return EXIT_BAD_INPUT;
    }
    free(tmp);
    return EXIT_PASS;
}

// Replays (or updates) one world trace; returns its exit status.
static int replay_world_file(const char *path, const options *opt, totals *tot)
{
    char err[1024] = "";
    kcc_world_trace *t = NULL;
    demo_jobs jobs = {.workers = opt->workers};
    kcc_world_replay_desc desc = kcc_world_replay_default_desc();
    desc.tolerance = opt->tolerance;
    desc.worker_count = opt->workers;
    if (opt->workers > 1) {
        desc.enqueue_task = demo_jobs_enqueue;
        desc.finish_task = demo_jobs_finish;
        desc.user_task_context = &jobs;
    }
    if (opt->print) {
        printf("# %s\n", path);
        fflush(stdout);
        desc.record = stdout;
    }
    kcc_world_trace_report r;
    kcc_status st = kcc_world_trace_load(path, &t, err, sizeof err);
    if (st == KCC_OK)
        st = kcc_world_trace_replay(t, &desc, &r, err, sizeof err);
    desc.record = NULL;
    int code = EXIT_PASS;
    if (st != KCC_OK) {
        report_unreplayable(err[0] ? err : path, st, tot);
        code = EXIT_BAD_INPUT;
    } else if (opt->update) {
        code = r.diverged ? update_world_file(path, t, desc) : EXIT_PASS;
        tot->updated_steps += r.diverged ? r.steps : 0;
        tot->errors += code != EXIT_PASS;
        if (r.diverged)
            fprintf(stderr, "%s: updated: %u outcomes differed (first at step %u); the trace is "
                    "written again from its replay (comments are not kept)\n", path,
                    (unsigned)r.diverged, (unsigned)r.step);
    } else if (r.diverged) {
        char msg[1024], e[KCC_TRACE_FLOAT_CHARS];
        kcc_world_trace_format_divergence(t, &r, msg, sizeof msg);
        kcc_trace_float_to_text(r.max_error, e);
        fprintf(stderr, "%s\n%s: %u outcomes diverge over %u steps; largest position difference "
                "%s m\n", msg, path, (unsigned)r.diverged, (unsigned)r.steps, e);
        tot->diverged++;
        code = EXIT_DIVERGED;
    } else {
        tot->matched++;
        if (opt->verbose)
            fprintf(stderr, "%s: %u steps match\n", path, (unsigned)r.steps);
    }
    if (st == KCC_OK)
        tot->frames += r.steps;
    kcc_world_trace_free(t);
    return code;
}

// Replays (or updates) one file; returns its exit status.
static int replay_file(const char *path, const options *opt, mesh_cache *cache, totals *tot)
{
    tot->files++;
    if (kcc_trace_file_version(path) == KCC_WORLD_TRACE_VERSION)
        return replay_world_file(path, opt, tot);
    char err[1024] = "";
    kcc_trace *t = NULL;
    kcc_mesh *mesh = NULL;
    kcc_status st = kcc_trace_load(path, &t, err, sizeof err);
    if (st == KCC_OK)
        st = cached_level(cache, t, &mesh, err, sizeof err);
    kcc_trace_outcome *o = NULL;
    kcc_trace_report r;
    if (st == KCC_OK) {
        o = calloc(t->step_count ? t->step_count : 1, sizeof *o);
        st = o ? kcc_trace_replay(t, mesh, opt->tolerance, o, &r) : KCC_ERR_OUT_OF_MEMORY;
        if (st != KCC_OK)
            snprintf(err, sizeof err, "%s: cannot replay: %s", path, kcc_status_str(st));
    }
    int code = EXIT_PASS;
    if (st != KCC_OK) {
        report_unreplayable(err[0] ? err : path, st, tot);
        code = EXIT_BAD_INPUT;
    } else {
        tot->frames += r.frames;
        if (opt->print)
            print_outcomes(t, o);
        if (opt->update) {
            uint32_t changed = report_changes(path, t, o);
            tot->updated_steps += changed;
            code = changed ? update_file(path, t, o) : EXIT_PASS;
            tot->errors += code != EXIT_PASS;
            if (!changed && opt->verbose)
                fprintf(stderr, "%s: up to date (%u steps)\n", path, (unsigned)r.steps);
        } else if (r.diverged) {
            char msg[1024], e[KCC_TRACE_FLOAT_CHARS];
            kcc_trace_format_divergence(t, &r, msg, sizeof msg);
            kcc_trace_float_to_text(r.max_error, e);
            fprintf(stderr, "%s\n%s: %u of %u steps diverge; largest position difference %s m\n",
                    msg, path, (unsigned)r.diverged, (unsigned)r.steps, e);
            tot->diverged++;
            code = EXIT_DIVERGED;
        } else {
            tot->matched++;
            if (opt->verbose)
                fprintf(stderr, "%s: %u frames match\n", path, (unsigned)r.frames);
        }
    }
    free(o);
    kcc_trace_free(t);
    return code;
}

// `divergence`, `penetration` or `flag=NAME` (a flag name as traces write them).
static bool parse_shrink_check(const char *v, kcc_world_shrink_desc *d)
{
    if (strcmp(v, "divergence") == 0) {
        d->check = KCC_WORLD_SHRINK_DIVERGENCE;
    } else if (strcmp(v, "penetration") == 0) {
        d->check = KCC_WORLD_SHRINK_PENETRATION;
    } else if (strncmp(v, "flag=", 5) == 0 && kcc_trace_text_to_flags(v + 5, &d->flag) && d->flag) {
        d->check = KCC_WORLD_SHRINK_FLAG;
    } else {
        fprintf(stderr, "kcc-replay: --shrink-check takes divergence, penetration or flag=NAME "
                "(e.g. flag=CRUSHED), got '%s'\n", v);
        return false;
    }
    return true;
}

// --shrink: the one world trace at path shrunk into opt->shrink.
static int shrink_file(const char *path, const options *opt)
{
    char err[1024] = "";
    kcc_world_trace *t = NULL;
    kcc_status st = kcc_world_trace_load(path, &t, err, sizeof err);
    FILE *out = st == KCC_OK ? fopen(opt->shrink, "wb") : NULL;
    if (st == KCC_OK && !out) {
        snprintf(err, sizeof err, "%s: cannot write: %s", opt->shrink, strerror(errno));
        st = KCC_ERR_IO;
    }
    kcc_world_shrink_desc d = opt->shrink_desc;
    d.tolerance = opt->tolerance;
    kcc_world_shrink_report r;
    if (st == KCC_OK)
        st = kcc_world_trace_shrink(t, &d, out, &r, err, sizeof err);
    if (out && fclose(out) != 0 && st == KCC_OK)
        st = KCC_ERR_IO;
    kcc_world_trace_free(t);
    if (st != KCC_OK) {
        fprintf(stderr, "%s (%s)\n", err[0] ? err : path, kcc_trace_status_name(st));
        return EXIT_BAD_INPUT;
    }
    fprintf(stderr, "kcc-replay: shrunk %s into %s: %u -> %u steps, %u -> %u characters, %u -> %u "
            "bodies (%u replays)\n", path, opt->shrink, (unsigned)r.steps[0], (unsigned)r.steps[1],
            (unsigned)r.characters[0], (unsigned)r.characters[1], (unsigned)r.bodies[0],
            (unsigned)r.bodies[1], (unsigned)r.replays);
    return EXIT_PASS;
}

// Reads the options; returns -1 to go on (files from *first_file), or an exit status.
static int parse_args(int argc, char **argv, options *opt, int *first_file)
{
    *first_file = argc;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0 || a[0] != '-' || a[1] == '\0') {
            *first_file = strcmp(a, "--") == 0 ? i + 1 : i;
            break;
        }
        if (strcmp(a, "--update") == 0) {
            opt->update = true;
        } else if (strcmp(a, "--print") == 0) {
            opt->print = true;
        } else if (strcmp(a, "--verbose") == 0 || strcmp(a, "-v") == 0) {
            opt->verbose = true;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return EXIT_PASS;
        } else if (strcmp(a, "--isa") == 0) {
            demo_isa_warn_if_invalid("kcc-replay");
            printf("%s\n", kcc_character_isa());
            return EXIT_PASS;
        } else if (strcmp(a, "--shrink") == 0 && i + 1 < argc) {
            opt->shrink = argv[++i];
        } else if (strcmp(a, "--shrink-check") == 0 && i + 1 < argc) {
            if (!parse_shrink_check(argv[++i], &opt->shrink_desc))
                return EXIT_BAD_INPUT;
        } else if (strncmp(a, "--workers", 9) == 0 && (a[9] == '=' || a[9] == '\0')) {
            const char *v = a[9] == '=' ? a + 10 : (i + 1 < argc ? argv[++i] : "");
            char *end = NULL;
            long n = strtol(v, &end, 10);
            if (!v[0] || *end || n < 1 || n > DEMO_JOBS_MAX) {
                fprintf(stderr, "kcc-replay: --workers needs a number from 1 to %d, got '%s'\n",
                        DEMO_JOBS_MAX, v);
                return EXIT_BAD_INPUT;
            }
            opt->workers = (uint32_t)n;
        } else if (strncmp(a, "--tolerance", 11) == 0 && (a[11] == '=' || a[11] == '\0')) {
            const char *v = a[11] == '=' ? a + 12 : (i + 1 < argc ? argv[++i] : "");
            float tol = 0.0f;
            if (!kcc_trace_text_to_float(v, &tol) || !(tol >= 0.0f) || tol == INFINITY) {
                fprintf(stderr, "kcc-replay: --tolerance needs a number of metres >= 0, got '%s'\n", v);
                return EXIT_BAD_INPUT;
            }
            opt->tolerance = tol;
        } else {
            fprintf(stderr, "kcc-replay: unknown option '%s'\n", a);
            usage(stderr);
            return EXIT_BAD_INPUT;
        }
    }
    if (*first_file >= argc) {
        fprintf(stderr, "kcc-replay: no trace file given\n");
        usage(stderr);
        return EXIT_BAD_INPUT;
    }
    return -1;
}

static void print_summary(const options *opt, const totals *tot)
{
    if (opt->update) {
        fprintf(stderr, "kcc-replay: %d trace%s, %u steps updated, %d error%s\n", tot->files,
                tot->files == 1 ? "" : "s", (unsigned)tot->updated_steps, tot->errors,
                tot->errors == 1 ? "" : "s");
        return;
    }
    if (tot->matched == tot->files) {
        fprintf(stderr, "kcc-replay: %d trace%s, %lu frames: all match\n", tot->files,
                tot->files == 1 ? "" : "s", tot->frames);
        return;
    }
    char changed[48] = "";
    if (tot->levels_changed)
        snprintf(changed, sizeof changed, "%d level changed; ", tot->levels_changed);
    fprintf(stderr, "kcc-replay: %d trace%s: %d match, %d diverge%s, %d could not be replayed "
            "(%s%lu frames replayed): %s\n", tot->files, tot->files == 1 ? "" : "s", tot->matched,
            tot->diverged, tot->diverged == 1 ? "s" : "", tot->errors, changed, tot->frames,
            tot->errors ? "ERRORS" : "DIVERGED");
}

int main(int argc, char **argv)
{
    options opt = { .tolerance = 0.0f, .workers = 1 };
    int first_file = argc;
    int code = parse_args(argc, argv, &opt, &first_file);
    if (code >= 0)
        return code;
    demo_isa_warn_if_invalid("kcc-replay");
    if (opt.shrink) {
        if (argc - first_file != 1) {
            fprintf(stderr, "kcc-replay: --shrink takes one world trace\n");
            return EXIT_BAD_INPUT;
        }
        return shrink_file(argv[first_file], &opt);
    }
    mesh_cache cache;
    memset(&cache, 0, sizeof cache);
    totals tot;
    memset(&tot, 0, sizeof tot);
    int worst = EXIT_PASS;
    for (int i = first_file; i < argc; ++i) {
        int c = replay_file(argv[i], &opt, &cache, &tot);
        worst = c > worst ? c : worst;
    }
    for (int i = 0; i < cache.count; ++i) {
        free(cache.key[i]);
        kcc_mesh_destroy(cache.mesh[i]);
    }
    print_summary(&opt, &tot);
    return worst;
}
