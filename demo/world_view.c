/* demo/world_view.c: reads a world trace (kcc-trace 2, docs/traces.md) into per-step character
 * positions and body poses for the viewer and the headless picture (demo/world_view.h). Two passes:
 * the first counts levels, bodies, characters and steps, the second fills the tables, `.` repeating
 * the value the same place had in the body's or character's previous line. Row S holds what the
 * lines up to step S's last outcome line leave (a character removed after it is still in row S);
 * row 0 what the lines before the first step leave (its targets included); `+` adds the
 * displacement the character's `d` lines left. Lines it has no use for (sensor events, lines of
 * later versions) are skipped. */
#include "world_view.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TOKENS 16

typedef struct reader {
    demo_world_view *v;
    const char      *path;
    float           *body_now;   /* body_count x 7: the poses as the lines so far leave them */
    float           *centre_now; /* character_count x 3 */
    float           *disp_now;   /* character_count x 3: the displacement each `d` line left */
    uint32_t        *flags_now;
    uint32_t         pending;    /* a step whose outcome lines are being read (0: none) */
    uint32_t         line;
    char            *err;
    size_t           err_size;
} reader;

/* Splits a line (its comment cut) into blank-separated tokens, `|` dropped; returns how many. */
static uint32_t tokens_of(char *line, char **tok)
{
    char *hash = strchr(line, '#');
    if (hash)
        *hash = '\0';
    uint32_t n = 0;
    for (char *t = strtok(line, " \t\r|"); t && n < MAX_TOKENS; t = strtok(NULL, " \t\r|"))
        tok[n++] = t;
    return n;
}

/* Reads count numbers from tok into now: `.` keeps what now holds, `+` (when plus is not NULL: an
 * `=` line) adds plus to it in float, as the library's reader does. */
static bool numbers_plus(char **tok, uint32_t count, float *now, const float *plus)
{
    for (uint32_t i = 0; i < count; ++i) {
        if (strcmp(tok[i], ".") == 0)
            continue;
        if (plus && strcmp(tok[i], "+") == 0)
            now[i] = now[i] + plus[i];
        else if (!kcc_trace_text_to_float(tok[i], &now[i]))
            return false;
    }
    return true;
}

static bool numbers(char **tok, uint32_t count, float *now)
{
    return numbers_plus(tok, count, now, NULL);
}

static bool id_of(const char *text, uint32_t count, uint32_t *out)
{
    char *end;
    unsigned long n = strtoul(text, &end, 10);
    if (*end || n < 1 || n > count)
        return false;
    *out = (uint32_t)n - 1;
    return true;
}

/* The first pass: how many of each. */
static void count_lines(char *text, demo_world_view *v)
{
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        char *tok[MAX_TOKENS];
        uint32_t n = tokens_of(line, tok);
        if (n == 0)
            continue;
        unsigned long id = n > 1 ? strtoul(tok[1], NULL, 10) : 0;
        if (id > 1000000)
            continue;
        if (strcmp(tok[0], "level") == 0 && n > 1 && id > v->level_count)
            v->level_count = (uint32_t)id;
        else if (strcmp(tok[0], "body") == 0 && id > v->body_count)
            v->body_count = (uint32_t)id;
        else if (strcmp(tok[0], "character") == 0 && id > v->character_count)
            v->character_count = (uint32_t)id;
        else if (strcmp(tok[0], "step") == 0 && id > v->steps)
            v->steps = (uint32_t)id;
    }
}

/* `level L obj PATH` (PATH against the trace's directory) or `level L gen SPEC`. */
static bool read_level(reader *r, const char *raw)
{
    char copy[KCC_TRACE_LEVEL_MAX + 64], kind[8];
    unsigned id;
    int at = 0;
    snprintf(copy, sizeof(copy), "%s", raw);
    copy[strcspn(copy, "#\r")] = '\0';
    if (sscanf(copy, "level %u %7s %n", &id, kind, &at) != 2 || id < 1 || id > r->v->level_count || !at)
        return false;
    char *rest = copy + at, *name = r->v->level_names[id - 1];
    for (size_t n = strlen(rest); n > 0 && (rest[n - 1] == ' ' || rest[n - 1] == '\t'); --n)
        rest[n - 1] = '\0';
    const char *slash = strrchr(r->path, '/');
    kcc_level *lv = &r->v->levels[id - 1];
    char lerr[256];
    kcc_status s;
    if (strcmp(kind, "obj") == 0) {
        if (rest[0] == '/' || !slash)
            snprintf(name, KCC_TRACE_LEVEL_MAX, "obj %s", rest);
        else
            snprintf(name, KCC_TRACE_LEVEL_MAX, "obj %.*s/%s", (int)(slash - r->path), r->path, rest);
        s = kcc_level_load_obj_geometry(name + 4, lv, lerr, sizeof(lerr));
    } else if (strcmp(kind, "gen") == 0) {
        snprintf(name, KCC_TRACE_LEVEL_MAX, "gen %s", rest);
        s = kcc_level_generate(rest, lv, lerr, sizeof(lerr));
    } else { /* `hf`: the view draws OBJ and generated levels only; kcc-replay replays the trace */
        snprintf(lerr, sizeof(lerr), "a '%s' level is not drawn here (kcc-replay replays the trace)", kind);
        s = KCC_ERR_PARSE;
    }
    if (s != KCC_OK)
        snprintf(r->err, r->err_size, "%s:%u: level %u: %s", r->path, r->line, id, lerr);
    return true;
}

static bool read_body(reader *r, char **tok, uint32_t n)
{
    uint32_t b, l;
    if (n < 11 || !id_of(tok[1], r->v->body_count, &b) || !id_of(tok[2], r->v->level_count, &l))
        return false;
    demo_world_body *body = &r->v->bodies[b];
    body->level = l;
    body->kinematic = strcmp(tok[3], "kinematic") == 0;
    for (uint32_t i = 11; i < n; ++i)
        body->sensor = body->sensor || strcmp(tok[i], "sensor") == 0;
    return numbers(tok + 4, 7, r->body_now + 7 * (size_t)b);
}

static bool read_character(reader *r, char **tok, uint32_t n)
{
    uint32_t c;
    if (n < 5 || !id_of(tok[1], r->v->character_count, &c))
        return false;
    float *he = r->v->half_extents + 3 * (size_t)c;
    for (uint32_t i = 5; i < n; ++i)
        if (strncmp(tok[i], "half_extents=", 13) == 0 &&
            sscanf(tok[i] + 13, "%f,%f,%f", &he[0], &he[1], &he[2]) != 3)
            return false;
    return numbers(tok + 2, 3, r->centre_now + 3 * (size_t)c);
}

/* `= C x y z [FLAGS]` */
static bool read_outcome(reader *r, char **tok, uint32_t n)
{
    uint32_t c;
    if (n < 5 || !id_of(tok[1], r->v->character_count, &c))
        return false;
    if (n > 5 && !kcc_trace_text_to_flags(tok[5], &r->flags_now[c]))
        return false;
    return numbers_plus(tok + 2, 3, r->centre_now + 3 * (size_t)c, r->disp_now + 3 * (size_t)c);
}

/* Copies the state the lines so far leave into row `step`. */
static void store_row(reader *r, uint32_t step)
{
    demo_world_view *v = r->v;
    if (step > v->steps)
        return;
    memcpy(v->poses + (size_t)step * v->body_count * 7, r->body_now, sizeof(float) * 7 * v->body_count);
    memcpy(v->centres + (size_t)step * v->character_count * 3, r->centre_now,
           sizeof(float) * 3 * v->character_count);
    memcpy(v->flags + (size_t)step * v->character_count, r->flags_now, sizeof(uint32_t) * v->character_count);
}

/* One line of the second pass; false when it cannot be read. */
static bool read_line(reader *r, char *line)
{
    char raw[KCC_TRACE_LEVEL_MAX + 64];
    snprintf(raw, sizeof(raw), "%s", line);
    char *tok[MAX_TOKENS];
    uint32_t n = tokens_of(line, tok), id;
    if (n == 0)
        return true;
    const char *k = tok[0];
    if (r->pending && strcmp(k, "=") != 0 && strcmp(k, "sensor") != 0) {
        store_row(r, r->pending);   /* the step's outcome lines are all read */
        r->pending = 0;
    }
    if (strcmp(k, "level") == 0)
        return read_level(r, raw);
    if (strcmp(k, "body") == 0)
        return read_body(r, tok, n);
    if ((strcmp(k, "place") == 0 || strcmp(k, "target") == 0) && n >= 9 && id_of(tok[1], r->v->body_count, &id))
        return numbers(tok + 2, 7, r->body_now + 7 * (size_t)id);
    if (strcmp(k, "remove_body") == 0 && n >= 2 && id_of(tok[1], r->v->body_count, &id)) {
        r->body_now[7 * (size_t)id] = NAN;
        return true;
    }
    if (strcmp(k, "character") == 0)
        return read_character(r, tok, n);
    if (strcmp(k, "remove_character") == 0 && n >= 2 && id_of(tok[1], r->v->character_count, &id)) {
        r->centre_now[3 * (size_t)id] = NAN;
        return true;
    }
    if (strcmp(k, "step") == 0 && n >= 2 && id_of(tok[1], r->v->steps, &id)) {
        if (id == 0)
            store_row(r, 0);
        r->pending = id + 1;
        return true;
    }
    if (strcmp(k, "=") == 0)
        return read_outcome(r, tok, n);
    if (strcmp(k, "d") == 0)
        return n >= 5 && id_of(tok[1], r->v->character_count, &id) &&
               numbers(tok + 2, 3, r->disp_now + 3 * (size_t)id);
    return strcmp(k, "place") != 0 && strcmp(k, "target") != 0 && strcmp(k, "remove_body") != 0 &&
           strcmp(k, "remove_character") != 0 && strcmp(k, "step") != 0;
}

static char *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *text = NULL;
    long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (text = malloc((size_t)n + 1)) != NULL) {
        *size = fread(text, 1, (size_t)n, f);
        text[*size] = '\0';
    }
    fclose(f);
    return text;
}

static kcc_status allocate(demo_world_view *v, reader *r)
{
    const size_t rows = (size_t)v->steps + 1;
    v->levels = calloc(v->level_count + 1, sizeof(kcc_level));
    v->level_names = calloc(v->level_count + 1, sizeof(*v->level_names));
    v->bodies = calloc(v->body_count + 1, sizeof(demo_world_body));
    v->poses = malloc(sizeof(float) * 7 * (rows * v->body_count + 1));
    v->centres = malloc(sizeof(float) * 3 * (rows * v->character_count + 1));
    v->flags = calloc(rows * v->character_count + 1, sizeof(uint32_t));
    v->half_extents = malloc(sizeof(float) * 3 * (v->character_count + 1));
    r->body_now = malloc(sizeof(float) * 7 * (v->body_count + 1));
    r->centre_now = malloc(sizeof(float) * 3 * (v->character_count + 1));
    r->flags_now = calloc(v->character_count + 1, sizeof(uint32_t));
    r->disp_now = calloc(3 * (size_t)v->character_count + 1, sizeof(float));
    if (!r->disp_now || !v->levels || !v->level_names || !v->bodies || !v->poses || !v->centres || !v->flags ||
        !v->half_extents || !r->body_now || !r->centre_now || !r->flags_now)
        return KCC_ERR_OUT_OF_MEMORY;
    const kcc_character_desc d = kcc_character_default_desc();
    for (uint32_t c = 0; c < v->character_count; ++c)
        memcpy(v->half_extents + 3 * c, d.half_extents, sizeof(float) * 3);
    for (size_t i = 0; i < 7 * (size_t)v->body_count; ++i)
        r->body_now[i] = NAN;
    for (size_t i = 0; i < 3 * (size_t)v->character_count; ++i)
        r->centre_now[i] = NAN;
    return KCC_OK;
}

kcc_status demo_world_view_load(const char *path, demo_world_view *out, char *err, size_t err_size)
{
    memset(out, 0, sizeof(*out));
    if (err_size)
        err[0] = '\0';
    size_t size = 0;
    char *text = read_file(path, &size), *second = text ? malloc(size + 1) : NULL;
    if (!second) {
        free(text);
        snprintf(err, err_size, "%s: cannot read", path);
        return text ? KCC_ERR_OUT_OF_MEMORY : KCC_ERR_IO;
    }
    memcpy(second, text, size + 1);
    if (strncmp(text + (strncmp(text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0), "kcc-trace 2", 11) != 0) {
        free(text);
        free(second);
        snprintf(err, err_size, "%s: not a world trace (kcc-trace 2)", path);
        return KCC_ERR_VERSION;
    }
    count_lines(text, out);
    reader r = {out, path, NULL, NULL, NULL, NULL, 0, 0, err, err_size};
    kcc_status s = allocate(out, &r);
    store_row(&r, 0);
    for (char *line = second, *next; s == KCC_OK && line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        r.line++;
        if (!read_line(&r, line)) {
            snprintf(err, err_size, "%s:%u: cannot read this line", path, r.line);
            s = KCC_ERR_PARSE;
        }
    }
    if (s == KCC_OK && r.pending)
        store_row(&r, r.pending);
    free(r.body_now);
    free(r.centre_now);
    free(r.flags_now);
    free(r.disp_now);
    free(text);
    free(second);
    if (s != KCC_OK)
        demo_world_view_free(out);
    return s;
}

void demo_world_view_free(demo_world_view *v)
{
    for (uint32_t l = 0; v->levels && l < v->level_count; ++l)
        kcc_level_free(&v->levels[l]);
    free(v->levels);
    free(v->level_names);
    free(v->bodies);
    free(v->poses);
    free(v->centres);
    free(v->flags);
    free(v->half_extents);
    memset(v, 0, sizeof(*v));
}

const float *demo_world_view_pose(const demo_world_view *v, uint32_t step, uint32_t body)
{
    if (step > v->steps || body >= v->body_count)
        return NULL;
    const float *p = v->poses + ((size_t)step * v->body_count + body) * 7;
    return isnan(p[0]) ? NULL : p;
}

const float *demo_world_view_centre(const demo_world_view *v, uint32_t step, uint32_t character)
{
    if (step > v->steps || character >= v->character_count)
        return NULL;
    const float *p = v->centres + ((size_t)step * v->character_count + character) * 3;
    return isnan(p[0]) ? NULL : p;
}

uint32_t demo_world_view_level_body(const demo_world_view *v)
{
    uint32_t best = UINT32_MAX, most = 0;
    for (uint32_t b = 0; b < v->body_count; ++b) {
        const demo_world_body *body = &v->bodies[b];
        uint32_t n = v->levels[body->level].triangle_count;
        if (!body->kinematic && !body->sensor && n > most) {
            most = n;
            best = b;
        }
    }
    return best;
}

void demo_world_view_place(const demo_world_view *v, uint32_t level, const float pose[7], float *out)
{
    const kcc_level *lv = &v->levels[level];
    const float x = pose[3], y = pose[4], z = pose[5], w = pose[6];
    const float len = sqrtf(x * x + y * y + z * z + w * w);
    const float qx = len > 0.0f ? x / len : 0.0f, qy = len > 0.0f ? y / len : 0.0f,
                qz = len > 0.0f ? z / len : 0.0f, qw = len > 0.0f ? w / len : 1.0f;
    for (uint32_t i = 0; i < lv->vertex_count; ++i) {
        const float *p = lv->positions + 3 * (size_t)i;
        /* p + 2 w (q x p) + 2 q x (q x p) */
        float tx = 2.0f * (qy * p[2] - qz * p[1]), ty = 2.0f * (qz * p[0] - qx * p[2]),
              tz = 2.0f * (qx * p[1] - qy * p[0]);
        out[3 * i + 0] = p[0] + qw * tx + (qy * tz - qz * ty) + pose[0];
        out[3 * i + 1] = p[1] + qw * ty + (qz * tx - qx * tz) + pose[1];
        out[3 * i + 2] = p[2] + qw * tz + (qx * ty - qy * tx) + pose[2];
    }
}

bool demo_world_view_place_body(const demo_world_view *v, uint32_t step, uint32_t body, float *out,
                                float box[2][3])
{
    const float *pose = demo_world_view_pose(v, step, body);
    const kcc_level *lv = body < v->body_count ? &v->levels[v->bodies[body].level] : NULL;
    if (!pose || !lv || lv->vertex_count == 0)
        return false;
    demo_world_view_place(v, v->bodies[body].level, pose, out);
    for (int k = 0; k < 3; ++k) {
        box[0][k] = INFINITY;
        box[1][k] = -INFINITY;
    }
    for (uint32_t i = 0; i < lv->vertex_count; ++i)
        for (int k = 0; k < 3; ++k) {
            box[0][k] = fminf(box[0][k], out[3 * i + k]);
            box[1][k] = fmaxf(box[1][k], out[3 * i + k]);
        }
    return true;
}
