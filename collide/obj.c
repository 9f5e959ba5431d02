/* obj.c: the OBJ and .spawns readers behind kcc_level_parse_obj / kcc_level_load_obj (numbers
 * through text_internal.h). Reads `v` and `f` lines, ignores the rest; never trusts a count
 * from the input; allocates only the level arrays (grown geometrically) and the file buffer.
 * No global state. */
#include "level_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------ */
/* Line reader                                                                                */
/* ------------------------------------------------------------------------------------------ */

typedef struct parse_error {
    uint64_t   line;         /* 0: not tied to a line */
    kcc_status status;
    char       msg[192];
} parse_error;

/* Byte classes for the tokenizer: 1 = blank (space \t \r \v \f), 2 = '#' (comment). Immutable. */
static const uint8_t byte_class[256] = {
    ['\t'] = 1, ['\v'] = 1, ['\f'] = 1, ['\r'] = 1, [' '] = 1, ['#'] = 2,
};

/* Next token of a line [*p, end): skips blanks, stops at '#'. False at the end of the line. */
static bool next_token(const char **p, const char *end, const char **tok, const char **tok_end)
{
    const char *s = *p;
    while (s < end && byte_class[(uint8_t)*s] == 1)
        s++;
    if (s >= end || *s == '#') {
        *p = end;
        return false;
    }
    const char *t = s;
    while (t < end && byte_class[(uint8_t)*t] == 0)
        t++;
    *tok = s;
    *tok_end = t;
    *p = t;
    return true;
}

/* A printable excerpt of a token for messages: at most 24 bytes, odd bytes as '?'. */
static void excerpt(const char *s, const char *e, char *buf, size_t size)
{
    size_t n = (size_t)(e - s), k = 0;
    bool cut = n > 24;
    if (cut)
        n = 24;
    for (size_t i = 0; i < n && k + 1 < size; ++i) {
        unsigned char c = (unsigned char)s[i];
        buf[k++] = (c >= 32 && c < 127) ? (char)c : '?';
    }
    for (int i = 0; cut && i < 3 && k + 1 < size; ++i)
        buf[k++] = '.';
    buf[k] = '\0';
}

static bool fail(parse_error *pe, uint64_t line, kcc_status st, const char *fmt, ...)
{
    pe->line = line;
    pe->status = st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pe->msg, sizeof(pe->msg), fmt, ap);
    va_end(ap);
    return false;
}

/* Parses `count` numbers (min_count..max_count of them) of one line into vals. */
static bool parse_numbers(const char *p, const char *end, float *vals, int min_count,
                          int max_count, const char *what, uint64_t line, parse_error *pe)
{
    const char *t, *te;
    int n = 0;
    char ex[32];
    while (next_token(&p, end, &t, &te)) {
        if (n >= max_count)
            return fail(pe, line, KCC_ERR_PARSE, "too many numbers (at most %d)", max_count);
        float v = 0.0f;
        kcc_num_result r = kcc_text_to_float(t, te, 0, &v);
        if (r != KCC_NUM_OK) {
            excerpt(t, te, ex, sizeof(ex));
            if (r == KCC_NUM_SYNTAX)
                return fail(pe, line, KCC_ERR_PARSE, "'%s' is not a number", ex);
            if (r == KCC_NUM_NON_FINITE)
                return fail(pe, line, KCC_ERR_PARSE, "'%s' is not a finite number", ex);
            return fail(pe, line, KCC_ERR_PARSE, "number '%s' is out of range (overflows float)",
                        ex);
        }
        vals[n++] = v;
    }
    if (n < min_count)
        return fail(pe, line, KCC_ERR_PARSE, "expected %s coordinates, found %d", what, n);
    return true;
}

/* True when [s, e) is an integer (any size): the t and n of a face vertex are checked, not used. */
static bool is_int(const char *s, const char *e)
{
    int64_t ignored;
    return kcc_text_to_int(s, e, -INT64_MAX, INT64_MAX, &ignored) != KCC_NUM_SYNTAX;
}

typedef struct obj_state {
    kcc_level_builder b;
    uint64_t max_index;         /* largest 1-based index any face used */
    uint64_t max_index_line;    /* the first line that used it */
    uint64_t last_vertex_line;  /* the line of the last v statement */
} obj_state;

/* The index part of a face vertex, [t, ie), read as `read` with value idx, as a 1-based index into
 * the vertices so far (negative indices resolved); false with a message when it is 0 or out of
 * range. */
static bool face_index(obj_state *st, const char *t, const char *ie, kcc_num_result read,
                       int64_t idx, uint64_t line, uint64_t *out, parse_error *pe)
{
    uint32_t vc = st->b.level.vertex_count;
    bool in_range = read == KCC_NUM_OK;
    bool neg = *t == '-';
    if (in_range && idx == 0)
        return fail(pe, line, KCC_ERR_PARSE, "face index 0 is invalid (indices start at 1)");
    if (in_range && neg && -idx <= (int64_t)vc) {
        *out = (uint64_t)((int64_t)vc + idx + 1);
        return true;
    }
    if (!in_range || neg || idx > (int64_t)st->b.max_vertices) {
        char ex[32];
        excerpt(t, ie, ex, sizeof(ex));               /* the digits as written */
        if (neg)
            return fail(pe, line, KCC_ERR_PARSE,
                        "face index %s is out of range (%lu vertices so far)", ex,
                        (unsigned long)vc);
        return fail(pe, line, KCC_ERR_PARSE, "face index %s is out of range", ex);
    }
    *out = (uint64_t)idx;
    return true;
}

/* One vertex reference of an f line: i, i/t, i//n or i/t/n. Resolves to a 0-based index or
 * checks later (positive indices may refer to vertices defined further down). */
static bool face_vertex(obj_state *st, const char *t, const char *te, uint64_t line,
                        uint32_t *out, parse_error *pe)
{
    const char *s1 = memchr(t, '/', (size_t)(te - t));
    const char *ie = s1 ? s1 : te;
    int64_t value = 0;
    kcc_num_result read = kcc_text_to_int(t, ie, -INT64_MAX, INT64_MAX, &value);
    bool ok = read != KCC_NUM_SYNTAX;
    if (ok && s1) {
        const char *s2 = memchr(s1 + 1, '/', (size_t)(te - s1 - 1));
        if (s2)   /* i//n or i/t/n: t may be empty, n may not */
            ok = (s2 == s1 + 1 || is_int(s1 + 1, s2)) && is_int(s2 + 1, te);
        else
            ok = is_int(s1 + 1, te);
    }
    if (!ok) {
        char ex[32];
        excerpt(t, te, ex, sizeof(ex));
        return fail(pe, line, KCC_ERR_PARSE,
                    "bad face vertex '%s' (expected i, i/t, i//n or i/t/n)", ex);
    }
    uint64_t idx = 0;
    if (!face_index(st, t, ie, read, value, line, &idx, pe))
        return false;
    if (idx > st->max_index) {
        st->max_index = idx;
        st->max_index_line = line;
    }
    *out = (uint32_t)(idx - 1);
    return true;
}

static bool face_line(obj_state *st, const char *p, const char *end, uint64_t line,
                      parse_error *pe)
{
    const char *t, *te;
    uint32_t first = 0, prev = 0;
    uint64_t n = 0;
    while (next_token(&p, end, &t, &te)) {
        uint32_t v = 0;
        if (!face_vertex(st, t, te, line, &v, pe))
            return false;
        if (n == 0)
            first = v;
        else if (n >= 2)
            kcc_lb_triangle(&st->b, first, prev, v);   /* fan around the first vertex */
        prev = v;
        n++;
        if (st->b.status != KCC_OK)
            break;
    }
    if (st->b.status == KCC_ERR_TOO_LARGE)
        return fail(pe, line, KCC_ERR_TOO_LARGE, "more than %lu triangles",
                    (unsigned long)st->b.max_triangles);
    if (st->b.status != KCC_OK)
        return fail(pe, line, st->b.status, "out of memory");
    if (n < 3)
        return fail(pe, line, KCC_ERR_PARSE, "face with fewer than 3 vertices (%llu)",
                    (unsigned long long)n);
    return true;
}

static bool vertex_line(obj_state *st, const char *p, const char *end, uint64_t line,
                        parse_error *pe)
{
    float v[7];
    /* x y z, optionally w, or x y z r g b (vertex colours, a common extension) */
    if (!parse_numbers(p, end, v, 3, 7, "3", line, pe))
        return false;
    kcc_lb_vertex(&st->b, v[0], v[1], v[2]);
    if (st->b.status == KCC_ERR_TOO_LARGE)
        return fail(pe, line, KCC_ERR_TOO_LARGE, "more than %lu vertices",
                    (unsigned long)st->b.max_vertices);
    if (st->b.status != KCC_OK)
        return fail(pe, line, st->b.status, "out of memory");
    st->last_vertex_line = line;
    return true;
}

/* True when [s, e) is UTF-8 text without control characters (a keyword of a text file). */
static bool is_text(const char *s, const char *e)
{
    while (s < e) {
        unsigned char c = (unsigned char)*s++;
        if (c < 0x20 || c == 0x7f)
            return false;
        if (c < 0x80)
            continue;
        int more = c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2
                 : c >= 0xf0 && c <= 0xf4 ? 3 : -1;
        if (more < 0 || e - s < more)
            return false;
        for (int k = 0; k < more; ++k)
            if (((unsigned char)*s++ & 0xc0) != 0x80)
                return false;
    }
    return true;
}

static bool obj_line(void *ctx, const char *s, const char *e, uint64_t line, parse_error *pe)
{
    obj_state *st = ctx;
    const char *t, *te, *p = s;
    if (!next_token(&p, e, &t, &te))
        return true;
    if (te - t == 1 && *t == 'v')
        return vertex_line(st, p, e, line, pe);
    if (te - t == 1 && *t == 'f')
        return face_line(st, p, e, line, pe);
    if (!is_text(t, te)) {
        char ex[32];
        excerpt(t, te, ex, sizeof(ex));
        return fail(pe, line, KCC_ERR_PARSE,
                    "statement '%s' is not UTF-8 text: binary data, not an OBJ file", ex);
    }
    return true;                                   /* vn, vt, o, g, s, usemtl, mtllib, ... */
}

/* ------------------------------------------------------------------------------------------ */
/* Lines                                                                                      */
/* ------------------------------------------------------------------------------------------ */

/* Called on each line [s, e) with its 1-based number. */
typedef bool (*line_fn)(void *ctx, const char *s, const char *e, uint64_t line, parse_error *pe);

typedef struct line_reader {
    line_fn      fn;
    void        *ctx;
    parse_error *pe;
    uint64_t     line;    /* lines delivered so far */
} line_reader;

/* Delivers line [s, e); `nul` is the first NUL byte of the text at or after s, or NULL. */
static bool deliver(line_reader *r, const char *s, const char *e, const char *nul)
{
    r->line++;
    if (nul && nul <= e)
        return fail(r->pe, r->line, KCC_ERR_PARSE, "NUL byte: binary data, not a text file");
    return r->fn(r->ctx, s, e, r->line, r->pe);
}

/* Delivers the complete lines of [text, text + length): lines end at \n, \r\n or a lone \r. With
 * `final` the text ends the file, so its last line needs no end; otherwise a last line without
 * one (or ending in a \r that may start a \r\n) is left for the next call. *consumed: the bytes
 * delivered. */
static bool feed_lines(line_reader *r, const char *text, size_t length, bool final,
                       size_t *consumed)
{
    *consumed = 0;
    if (length == 0)
        return true;                    /* text may be NULL then: not even NULL + 0 */
    const char *p = text, *end = text + length;
    const char *nl = p;                 /* the next \n at or after p (end: none), kept across */
    bool nl_known = false;              /* lines so that \r-only files stay linear */
    const bool has_cr = memchr(text, '\r', length) != NULL;
    const char *nul = memchr(text, '\0', length);   /* any NUL fails the line that holds it */
    while (p < end) {
        if (!nl_known || nl < p) {
            nl = memchr(p, '\n', (size_t)(end - p));
            if (!nl)
                nl = end;
            nl_known = true;
        }
        const char *e = nl;
        /* a \r right before the \n (CRLF) is a blank; any other \r ends the line */
        const char *cr = has_cr ? memchr(p, '\r', (size_t)(e - p)) : NULL;
        if (cr && cr + 1 < e)
            e = cr;
        if (e == end && !final)
            break;
        if (!deliver(r, p, e, nul))
            return false;
        p = e + 1;
    }
    *consumed = (size_t)((p < end ? p : end) - text);
    return true;
}

/* Reading a file keeps at most LINE_BUFFER bytes of it: a longer line fails, unless it holds a
 * comment, whose rest is read and dropped (a comment of any length costs one read). */
#define LINE_BUFFER (1u << 20)

/* The pending line buf[0, *have) fills the buffer. Keeps it up to its '#' and drops the rest of
 * the line from the file, leaving the line's end in the buffer. */
static bool skip_long_comment(FILE *f, line_reader *r, char *buf, size_t *have)
{
    const char *hash = memchr(buf, '#', *have);
    if (!hash)
        return fail(r->pe, r->line + 1, KCC_ERR_TOO_LARGE, "line longer than %u bytes",
                    (unsigned)LINE_BUFFER);
    if (memchr(buf, '\0', (size_t)(hash - buf)))
        return fail(r->pe, r->line + 1, KCC_ERR_PARSE, "NUL byte: binary data, not a text file");
    size_t keep = (size_t)(hash - buf) + 1;
    for (;;) {
        size_t got = fread(buf + keep, 1, LINE_BUFFER - keep, f);
        const char *s = buf + keep, *e = s + got;
        const char *nl = memchr(s, '\n', got), *cr = memchr(s, '\r', got);
        const char *stop = nl && (!cr || nl < cr) ? nl : cr;
        if (memchr(s, '\0', (size_t)((stop ? stop : e) - s)))
            return fail(r->pe, r->line + 1, KCC_ERR_PARSE, "NUL byte: binary data, not a text file");
        if (stop || got == 0) {
            memmove(buf + keep, stop ? stop : e, (size_t)(e - (stop ? stop : e)));
            *have = keep + (size_t)(e - (stop ? stop : e));
            return true;
        }
    }
}

/* Delivers every line of a file, reading it once through one LINE_BUFFER. */
static bool read_lines(FILE *f, line_reader *r, kcc_status *io_error)
{
    char *buf = malloc(LINE_BUFFER);
    if (!buf) {
        *io_error = KCC_ERR_OUT_OF_MEMORY;
        return false;
    }
    size_t have = 0;
    bool ok = true;
    for (;;) {
        size_t want = LINE_BUFFER - have, got = fread(buf + have, 1, want, f);
        have += got;
        bool eof = got < want;
        if (eof && ferror(f)) {
            *io_error = KCC_ERR_IO;
            ok = false;
            break;
        }
        size_t used = 0;
        ok = feed_lines(r, buf, have, eof, &used);
        if (!ok || eof)
            break;
        memmove(buf, buf + used, have - used);
        have -= used;
        if (have == LINE_BUFFER && !(ok = skip_long_comment(f, r, buf, &have)))
            break;
    }
    free(buf);
    return ok;
}

/* ------------------------------------------------------------------------------------------ */
/* OBJ text                                                                                   */
/* ------------------------------------------------------------------------------------------ */

static void obj_begin(obj_state *st, uint32_t max_vertices, uint32_t max_triangles)
{
    memset(st, 0, sizeof(*st));
    kcc_lb_init(&st->b);
    st->b.max_vertices = max_vertices;
    st->b.max_triangles = max_triangles;
}

/* The checks that need the whole file, then the level. `lines`: how many the file has. */
static bool obj_finish(obj_state *st, uint64_t lines, kcc_level *out, parse_error *pe)
{
    const kcc_level *l = &st->b.level;
    bool ok = false;
    if (st->max_index > l->vertex_count)
        fail(pe, st->max_index_line, KCC_ERR_PARSE,
             "face index %llu is out of range (the file has %lu vertices)",
             (unsigned long long)st->max_index, (unsigned long)l->vertex_count);
    else if (l->triangle_count == 0 && lines == 0)
        fail(pe, 1, KCC_ERR_NO_TRIANGLES, "empty: no faces, not an OBJ level");
    else if (l->triangle_count == 0)
        fail(pe, lines, KCC_ERR_NO_TRIANGLES, "no faces in %llu lines (%lu vertices): not an OBJ "
             "level", (unsigned long long)lines, (unsigned long)l->vertex_count);
    else if (st->max_index < l->vertex_count)
        fail(pe, st->last_vertex_line, KCC_ERR_PARSE, "the last vertex (%lu) is used by no face: "
             "the file looks truncated", (unsigned long)l->vertex_count);
    else
        ok = true;
    if (!ok) {
        kcc_lb_discard(&st->b);
        return false;
    }
    kcc_status s = kcc_lb_finish(&st->b, out);
    if (s != KCC_OK)
        return fail(pe, 0, s, "out of memory");
    return true;
}

static void report(const parse_error *pe, const char *path, char *err, size_t err_size)
{
    if (!err || err_size == 0)
        return;
    if (path && pe->line)
        snprintf(err, err_size, "%s:%llu: %s", path, (unsigned long long)pe->line, pe->msg);
    else if (path)
        snprintf(err, err_size, "%s: %s", path, pe->msg);
    else if (pe->line)
        snprintf(err, err_size, "line %llu: %s", (unsigned long long)pe->line, pe->msg);
    else
        snprintf(err, err_size, "%s", pe->msg);
}

static void set_err(char *err, size_t err_size, const char *msg)
{
    if (err && err_size)
        snprintf(err, err_size, "%s", msg);
}

kcc_status kcc_level_parse_obj_limited(const char *text, size_t length, kcc_level *out,
                                       char *err, size_t err_size,
                                       uint32_t max_vertices, uint32_t max_triangles)
{
    if (!out || (!text && length)) {
        set_err(err, err_size, "NULL argument");
        return KCC_ERR_NULL_ARGUMENT;
    }
    obj_state st;
    obj_begin(&st, max_vertices < KCC_LEVEL_MAX_VERTICES ? max_vertices : KCC_LEVEL_MAX_VERTICES,
              max_triangles < KCC_LEVEL_MAX_TRIANGLES ? max_triangles : KCC_LEVEL_MAX_TRIANGLES);
    parse_error pe;
    memset(&pe, 0, sizeof(pe));
    line_reader r = {obj_line, &st, &pe, 0};
    size_t used;
    if (!feed_lines(&r, text, length, true, &used)) {
        kcc_lb_discard(&st.b);
        report(&pe, NULL, err, err_size);
        return pe.status;
    }
    if (!obj_finish(&st, r.line, out, &pe)) {
        report(&pe, NULL, err, err_size);
        return pe.status;
    }
    return KCC_OK;
}

kcc_status kcc_level_parse_obj(const char *text, size_t length, kcc_level *out, char *err,
                               size_t err_size)
{
    return kcc_level_parse_obj_limited(text, length, out, err, err_size, KCC_LEVEL_MAX_VERTICES,
                                       KCC_LEVEL_MAX_TRIANGLES);
}

/* ------------------------------------------------------------------------------------------ */
/* Files                                                                                      */
/* ------------------------------------------------------------------------------------------ */

/* Reads the file at path line by line into fn. False with pe filled (line 0 for "cannot open"
 * and read errors); *missing tells a file that does not exist from one that cannot be read. */
static bool read_file_lines(const char *path, line_fn fn, void *ctx, uint64_t *lines,
                            parse_error *pe, bool *missing)
{
    *missing = false;
    FILE *f = fopen(path, "rb");
    if (!f) {
        *missing = true;
        return fail(pe, 0, KCC_ERR_IO, "cannot open");
    }
    line_reader r = {fn, ctx, pe, 0};
    kcc_status io = KCC_OK;
    bool ok = read_lines(f, &r, &io);
    fclose(f);
    *lines = r.line;
    if (!ok && io != KCC_OK)
        return fail(pe, 0, io, "%s", io == KCC_ERR_IO ? "read error" : kcc_status_str(io));
    return ok;
}

kcc_status kcc_level_load_obj_geometry(const char *path, kcc_level *out, char *err,
                                       size_t err_size)
{
    if (!path || !out) {
        set_err(err, err_size, "NULL argument");
        return KCC_ERR_NULL_ARGUMENT;
    }
    obj_state st;
    obj_begin(&st, KCC_LEVEL_MAX_VERTICES, KCC_LEVEL_MAX_TRIANGLES);
    parse_error pe;
    memset(&pe, 0, sizeof(pe));
    uint64_t lines = 0;
    bool missing;
    bool ok = read_file_lines(path, obj_line, &st, &lines, &pe, &missing);
    if (!ok)
        kcc_lb_discard(&st.b);
    if (!ok || !obj_finish(&st, lines, out, &pe)) {
        report(&pe, path, err, err_size);
        return pe.status;
    }
    return KCC_OK;
}

static bool spawn_line(void *ctx, const char *s, const char *e, uint64_t line, parse_error *pe)
{
    kcc_level_builder *b = ctx;
    const char *t, *te, *p = s;
    if (!next_token(&p, e, &t, &te))
        return true;                                /* blank or comment */
    float v[3];
    if (!parse_numbers(s, e, v, 3, 3, "3", line, pe))
        return false;
    kcc_lb_spawn(b, v[0], v[1], v[2]);
    if (b->status != KCC_OK)
        return fail(pe, line, b->status, "out of memory");
    return true;
}

/* The .spawns path beside an .obj path: the extension of the last component replaced. */
static char *spawns_path(const char *path)
{
    size_t n = strlen(path);
    size_t stem = n;
    for (size_t i = n; i > 0; --i) {
        char c = path[i - 1];
        if (c == '/' || c == '\\')
            break;
        if (c == '.') {
            stem = i - 1;
            break;
        }
    }
    if (stem == 0 || path[stem - 1] == '/' || path[stem - 1] == '\\')
        stem = n;                                   /* ".obj" alone or a dot file: append */
    char *sp = malloc(stem + sizeof(".spawns"));
    if (!sp)
        return NULL;
    memcpy(sp, path, stem);
    memcpy(sp + stem, ".spawns", sizeof(".spawns"));
    return sp;
}

kcc_status kcc_level_load_spawns(const char *path, kcc_level *level, char *err, size_t err_size)
{
    if (!path || !level) {
        set_err(err, err_size, "NULL argument");
        return KCC_ERR_NULL_ARGUMENT;
    }
    char *sp = spawns_path(path);
    if (!sp) {
        set_err(err, err_size, "out of memory");
        return KCC_ERR_OUT_OF_MEMORY;
    }
    kcc_level_builder b;
    kcc_lb_init(&b);
    parse_error pe;
    memset(&pe, 0, sizeof(pe));
    uint64_t lines = 0;
    bool missing;
    bool ok = read_file_lines(sp, spawn_line, &b, &lines, &pe, &missing);
    kcc_level spawns;
    kcc_status st = KCC_OK;
    if (ok)
        st = kcc_lb_finish(&b, &spawns);
    else
        kcc_lb_discard(&b);
    if (!ok && !missing)
        report(&pe, sp, err, err_size);
    else if (st != KCC_OK)
        set_err(err, err_size, "out of memory");
    free(sp);
    if (!ok)
        return missing ? KCC_OK : pe.status;        /* no spawns file: no spawn points */
    if (st != KCC_OK)
        return st;
    free(level->spawns);
    level->spawns = spawns.spawns;
    level->spawn_count = spawns.spawn_count;
    return KCC_OK;
}

kcc_status kcc_level_load_obj(const char *path, kcc_level *out, char *err, size_t err_size)
{
    kcc_level level;
    kcc_status st = kcc_level_load_obj_geometry(path, &level, err, err_size);
    if (st != KCC_OK)
        return st;
    st = kcc_level_load_spawns(path, &level, err, err_size);
    if (st != KCC_OK) {
        kcc_level_free(&level);
        return st;
    }
    *out = level;
    return KCC_OK;
}
