/* trace.c: the input-trace format (docs/traces.md): the writer engines call alongside their moves, the
 * parser (allocates the kcc_trace; numbers through collide/text_internal.h), the level check against
 * the recorded level_hash, the replayer (no allocation) and the rewrite used by --update. Owns no
 * global state; never calls setlocale; never prints. */
#include "kcc_trace.h"
#include "kcc_level.h"
#include "text_internal.h"
#include "trace_internal.h"

#include <ctype.h>
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

// ------------------------------------------------------------------------------------- tables


// Every kcc_character_desc field, in the order `desc` lines list them. A field added to the desc must
// be added here (test_trace checks that a default desc written and read back compares equal).
const kcc_tr_desc_field kcc_tr_desc_fields[KCC_TR_DESC_FIELD_COUNT] = {
    { "half_extents",  offsetof(kcc_character_desc, half_extents),  3, false },
    { "step_height",   offsetof(kcc_character_desc, step_height),   1, false },
    { "max_slope_deg", offsetof(kcc_character_desc, max_slope_deg), 1, false },
    { "up_axis",       offsetof(kcc_character_desc, up_axis),       1, true  },
    { "skin_width",    offsetof(kcc_character_desc, skin_width),    1, false },
    { "ground_snap",   offsetof(kcc_character_desc, ground_snap),   1, false },
    { "max_push_out",  offsetof(kcc_character_desc, max_push_out),  1, false },
};
_Static_assert(KCC_TR_DESC_FIELD_COUNT <= 32, "set_fields is a 32-bit mask");

typedef struct flag_name {
    uint32_t    bit;
    const char *name;
} flag_name;

static const flag_name flag_names[] = {
    { KCC_MOVE_ON_GROUND, "ON_GROUND" },       { KCC_MOVE_HIT_WALL, "HIT_WALL" },
    { KCC_MOVE_HIT_CEILING, "HIT_CEILING" },   { KCC_MOVE_STEPPED_UP, "STEPPED_UP" },
    { KCC_MOVE_SLID, "SLID" },                 { KCC_MOVE_STUCK, "STUCK" },
    { KCC_MOVE_ON_STEEP, "ON_STEEP" },         { KCC_MOVE_SNAPPED_DOWN, "SNAPPED_DOWN" },
    { KCC_MOVE_PUSHED_OUT, "PUSHED_OUT" },     { KCC_MOVE_BAD_INPUT, "BAD_INPUT" },
    { KCC_MOVE_LANDED, "LANDED" },             { KCC_MOVE_CONTACT_CAP, "CONTACT_CAP" },
    { KCC_MOVE_CRUSHED, "CRUSHED" },
};
#define FLAG_NAME_COUNT (sizeof(flag_names) / sizeof(flag_names[0]))

static const char *const status_names[KCC_STATUS_COUNT] = {
    [KCC_OK] = "KCC_OK",
    [KCC_ERR_NULL_ARGUMENT] = "KCC_ERR_NULL_ARGUMENT",
    [KCC_ERR_NO_TRIANGLES] = "KCC_ERR_NO_TRIANGLES",
    [KCC_ERR_NO_VERTICES] = "KCC_ERR_NO_VERTICES",
    [KCC_ERR_BAD_STRIDE] = "KCC_ERR_BAD_STRIDE",
    [KCC_ERR_INDEX_OUT_OF_RANGE] = "KCC_ERR_INDEX_OUT_OF_RANGE",
    [KCC_ERR_NON_FINITE] = "KCC_ERR_NON_FINITE",
    [KCC_ERR_TOO_LARGE] = "KCC_ERR_TOO_LARGE",
    [KCC_ERR_OUT_OF_MEMORY] = "KCC_ERR_OUT_OF_MEMORY",
    [KCC_ERR_BAD_DESC] = "KCC_ERR_BAD_DESC",
    [KCC_ERR_OVERLAP] = "KCC_ERR_OVERLAP",
    [KCC_ERR_IO] = "KCC_ERR_IO",
    [KCC_ERR_PARSE] = "KCC_ERR_PARSE",
    [KCC_ERR_VERSION] = "KCC_ERR_VERSION",
    [KCC_ERR_NOT_FOUND] = "KCC_ERR_NOT_FOUND",
    [KCC_ERR_BUFFER_TOO_SMALL] = "KCC_ERR_BUFFER_TOO_SMALL",
    [KCC_ERR_CORRUPT] = "KCC_ERR_CORRUPT",
    [KCC_ERR_LEVEL_CHANGED] = "KCC_ERR_LEVEL_CHANGED",
};

const char *kcc_trace_status_name(kcc_status s)
{
    if ((int)s >= 0 && (int)s < KCC_STATUS_COUNT && status_names[s])
        return status_names[s];
    return "KCC_STATUS_UNKNOWN";
}

const char *kcc_trace_desc_field(uint32_t i)
{
    return i < KCC_TR_DESC_FIELD_COUNT ? kcc_tr_desc_fields[i].name : NULL;
}

// ------------------------------------------------------------------------------------- numbers

// The C library formats with the LC_NUMERIC decimal point. Traces always use '.', so a program that
// called setlocale() still writes the same text (and reads it: kcc_text_to_float knows no locale).
static void to_c_decimal(char *s)
{
    const char *dp = localeconv()->decimal_point;
    if (!dp || !dp[0] || (dp[0] == '.' && !dp[1]))
        return;
    char *at = strstr(s, dp);
    if (!at)
        return;
    size_t n = strlen(dp);
    *at = '.';
    memmove(at + 1, at + n, strlen(at + n) + 1);
}

int kcc_trace_float_to_text(float v, char *out)
{
    if (isnan(v))
        return snprintf(out, KCC_TRACE_FLOAT_CHARS, "nan");
    if (isinf(v))
        return snprintf(out, KCC_TRACE_FLOAT_CHARS, v < 0 ? "-inf" : "inf");
    // Shortest of %.6g..%.9g that reads back to the same bits: readable diffs, exact values.
    // (9 significant digits always round-trip a binary32.)
    for (int digits = 6; digits <= 9; ++digits) {
        snprintf(out, KCC_TRACE_FLOAT_CHARS, "%.*g", digits, (double)v);
        to_c_decimal(out);
        float back;
        if (digits == 9 || (kcc_trace_text_to_float(out, &back) && memcmp(&back, &v, sizeof v) == 0))
            break;
    }
    return (int)strlen(out);
}

bool kcc_trace_text_to_float(const char *text, float *out)
{
    float v = 0.0f;
    if (!text || !out ||
        kcc_text_to_float(text, text + strlen(text), KCC_NUM_HEX | KCC_NUM_NAN_INF, &v) != KCC_NUM_OK)
        return false;
    *out = v;
    return true;
}

int kcc_trace_flags_to_text(uint32_t flags, char *out, size_t size)
{
    if (!out || size == 0)
        return 0;
    if (flags == 0)
        return snprintf(out, size, "-");
    size_t len = 0;
    out[0] = '\0';
    uint32_t rest = flags;
    for (size_t i = 0; i < FLAG_NAME_COUNT; ++i) {
        if (!(rest & flag_names[i].bit))
            continue;
        rest &= ~flag_names[i].bit;
        int n = snprintf(out + len, len < size ? size - len : 0, "%s%s", len ? "|" : "",
                         flag_names[i].name);
        len += (size_t)n;
        if (len >= size)
            return (int)len;
    }
    if (rest) {
        int n = snprintf(out + len, len < size ? size - len : 0, "%s0x%x", len ? "|" : "", rest);
        len += (size_t)n;
    }
    return (int)len;
}

// One flag: a name or a hex number 0x1..0xffffffff, spanning [s, s + n).
static bool flag_from_text(const char *s, size_t n, uint32_t *flags)
{
    for (size_t i = 0; i < FLAG_NAME_COUNT; ++i) {
        if (strlen(flag_names[i].name) == n && memcmp(flag_names[i].name, s, n) == 0) {
            *flags |= flag_names[i].bit;
            return true;
        }
    }
    if (n < 3 || n > 10 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
        return false;
    uint32_t v = 0;
    for (size_t i = 2; i < n; ++i) {
        int c = (unsigned char)s[i], d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
        else return false;
        v = v * 16u + (uint32_t)d;
    }
    *flags |= v;
    return true;
}

// Flags joined by '|' with any blanks (spaces, tabs) around each one, spanning [s, s + n).
bool kcc_tr_flags_from_text(const char *s, size_t n, uint32_t *out)
{
    const char *p = s, *end = s + n;
    while (p < end && (*p == ' ' || *p == '\t'))
        ++p;
    while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
        --end;
    if (end - p == 1 && (*p == '-' || *p == '0')) {
        *out = 0;
        return true;
    }
    uint32_t flags = 0;
    for (;;) {
        const char *bar = memchr(p, '|', (size_t)(end - p));
        const char *b = p, *e = bar ? bar : end;
        while (b < e && (*b == ' ' || *b == '\t'))
            ++b;
        while (e > b && (e[-1] == ' ' || e[-1] == '\t'))
            --e;
        if (!flag_from_text(b, (size_t)(e - b), &flags))
            return false;
        if (!bar)
            break;
        p = bar + 1;
    }
    *out = flags;
    return true;
}

bool kcc_trace_text_to_flags(const char *text, uint32_t *out)
{
    return text && out && kcc_tr_flags_from_text(text, strlen(text), out);
}

bool kcc_tr_vec3_finite(const float *v)
{
    return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]);
}

// ------------------------------------------------------------------------------------- writer

void kcc_tr_emit(kcc_trace_writer *w, const char *s, size_t n)
{
    if (w->status != KCC_OK)
        return;
    if (w->file) {
        if (fwrite(s, 1, n, w->file) != n) {
            w->status = KCC_ERR_IO;
            return;
        }
    } else {
        if (n + 1 > w->capacity - w->length) {
            w->status = KCC_ERR_BUFFER_TOO_SMALL;
            return;
        }
        memcpy(w->buffer + w->length, s, n);
        w->buffer[w->length + n] = '\0';
    }
    w->length += n;
}


void kcc_tr_lb_str(kcc_tr_line *b, const char *s)
{
    size_t n = strlen(s);
    if (n > sizeof b->text - 1 - b->len)
        n = sizeof b->text - 1 - b->len;
    memcpy(b->text + b->len, s, n);
    b->len += n;
    b->text[b->len] = '\0';
}

void kcc_tr_lb_float(kcc_tr_line *b, float v)
{
    char t[KCC_TRACE_FLOAT_CHARS];
    kcc_trace_float_to_text(v, t);
    kcc_tr_lb_str(b, t);
}

void kcc_tr_lb_vec3(kcc_tr_line *b, const float *v)
{
    for (int i = 0; i < 3; ++i) {
        kcc_tr_lb_str(b, " ");
        kcc_tr_lb_float(b, v[i]);
    }
}

void kcc_tr_lb_status(kcc_tr_line *b, kcc_status s)
{
    const char *name = kcc_trace_status_name(s);
    char t[32];
    if (strcmp(name, "KCC_STATUS_UNKNOWN") == 0) {
        snprintf(t, sizeof t, "%d", (int)s);
        name = t;
    }
    kcc_tr_lb_str(b, name);
}

void kcc_tr_lb_field(kcc_tr_line *b, const kcc_tr_desc_field *f, const kcc_character_desc *d)
{
    const char *base = (const char *)d + f->offset;
    kcc_tr_lb_str(b, " ");
    kcc_tr_lb_str(b, f->name);
    kcc_tr_lb_str(b, "=");
    if (f->is_int) {
        char t[24];
        int v;
        memcpy(&v, base, sizeof v);
        snprintf(t, sizeof t, "%d", v);
        kcc_tr_lb_str(b, t);
        return;
    }
    for (uint32_t i = 0; i < f->count; ++i) {
        float v;
        memcpy(&v, base + i * sizeof(float), sizeof v);
        if (i)
            kcc_tr_lb_str(b, ",");
        kcc_tr_lb_float(b, v);
    }
}

size_t kcc_tr_field_bytes(const kcc_tr_desc_field *f)
{
    return f->is_int ? sizeof(int) : f->count * sizeof(float);
}

bool kcc_tr_level_string_ok(const char *level)
{
    size_t n = strlen(level);
    if (n < 5 || n >= KCC_TRACE_LEVEL_MAX)
        return false;
    if (strncmp(level, "obj ", 4) != 0 && strncmp(level, "gen ", 4) != 0)
        return false;
    if (isspace((unsigned char)level[4]))
        return false;
    for (size_t i = 0; i < n; ++i)
        if (level[i] == '#' || (unsigned char)level[i] < 0x20)
            return false;
    return true;
}

void kcc_tr_writer_init(kcc_trace_writer *w, FILE *file, char *buffer, size_t capacity)
{
    memset(w, 0, sizeof *w);
    w->file = file;
    w->buffer = buffer;
    w->capacity = capacity;
    w->status = KCC_OK;
    w->begun = true;
    if (buffer)
        buffer[0] = '\0';
}

static kcc_status begin(kcc_trace_writer *w, FILE *file, char *buffer, size_t capacity,
                        const char *level, const kcc_character_desc *desc, const vec3 start)
{
    if (!w || !level || !start || (!file && !buffer))
        return KCC_ERR_NULL_ARGUMENT;
    if (!file && capacity == 0)
        return KCC_ERR_BUFFER_TOO_SMALL;
    if (!kcc_tr_level_string_ok(level))
        return KCC_ERR_BAD_DESC;
    kcc_character_desc d = desc ? *desc : kcc_character_default_desc();
    kcc_status st = kcc_character_desc_validate(&d);
    if (st != KCC_OK)
        return st;
    if (!kcc_tr_vec3_finite(start))
        return KCC_ERR_NON_FINITE;

    kcc_tr_writer_init(w, file, buffer, capacity);
    w->desc = d;

    char head[32];
    int n = snprintf(head, sizeof head, "kcc-trace %d\nlevel ", KCC_TRACE_VERSION);
    kcc_tr_emit(w, head, (size_t)n);
    kcc_tr_emit(w, level, strlen(level));
    kcc_tr_emit(w, "\n", 1);
    kcc_tr_line b = { .len = 0 };
    kcc_tr_lb_str(&b, "desc");
    for (uint32_t i = 0; i < KCC_TR_DESC_FIELD_COUNT; ++i)
        kcc_tr_lb_field(&b, &kcc_tr_desc_fields[i], &d);
    kcc_tr_lb_str(&b, "\nstart");
    kcc_tr_lb_vec3(&b, start);
    kcc_tr_lb_str(&b, "\n");
    kcc_tr_emit(w, b.text, b.len);
    w->header_length = w->length;
    return w->status;
}

kcc_status kcc_trace_begin(kcc_trace_writer *w, FILE *file, const char *level,
                           const kcc_character_desc *desc, const vec3 start)
{
    if (!file)
        return KCC_ERR_NULL_ARGUMENT;
    return begin(w, file, NULL, 0, level, desc, start);
}

kcc_status kcc_trace_begin_buffer(kcc_trace_writer *w, char *buffer, size_t capacity,
                                  const char *level, const kcc_character_desc *desc,
                                  const vec3 start)
{
    if (!buffer)
        return KCC_ERR_NULL_ARGUMENT;
    return begin(w, NULL, buffer, capacity, level, desc, start);
}

// Common entry check of the per-frame calls: a writer that is not begun, or already ended.
kcc_status kcc_tr_writer_ready(kcc_trace_writer *w)
{
    if (!w || !w->begun)
        return KCC_ERR_NULL_ARGUMENT;
    if (w->ended && w->status == KCC_OK)
        w->status = KCC_ERR_NULL_ARGUMENT;
    return w->status;
}

kcc_status kcc_trace_level_hash(kcc_trace_writer *w, uint64_t level_hash)
{
    kcc_status st = kcc_tr_writer_ready(w);
    if (st != KCC_OK)
        return st;
    if (w->recorder)
        return KCC_ERR_BAD_DESC;   // a world trace records the world's calls itself
    if (w->length != w->header_length)
        return KCC_ERR_BAD_DESC;   // not sticky: nothing was written
    char line[40];
    int n = snprintf(line, sizeof line, "level_hash %016llx\n", (unsigned long long)level_hash);
    kcc_tr_emit(w, line, (size_t)n);
    return w->status;
}

kcc_status kcc_trace_record(kcc_trace_writer *w, const vec3 displacement, const kcc_character *ch,
                            const kcc_move_result *result)
{
    kcc_status st = kcc_tr_writer_ready(w);
    if (st != KCC_OK)
        return st;
    if (w->recorder)
        return KCC_ERR_BAD_DESC;   // a world trace records the world's calls itself
    if (!displacement || !ch || !result)
        return w->status = KCC_ERR_NULL_ARGUMENT;   // sticky: the trace would miss a frame
    kcc_tr_line b = { .len = 0 };
    kcc_tr_lb_str(&b, "f");
    kcc_tr_lb_vec3(&b, displacement);
    kcc_tr_lb_str(&b, " |");
    kcc_tr_lb_vec3(&b, ch->position);
    kcc_tr_lb_str(&b, " | ");
    char flags[KCC_TRACE_FLAGS_CHARS];
    kcc_trace_flags_to_text(result->flags, flags, sizeof flags);
    kcc_tr_lb_str(&b, flags);
    kcc_tr_lb_str(&b, "\n");
    kcc_tr_emit(w, b.text, b.len);
    if (w->status == KCC_OK)
        w->frames++;
    return w->status;
}

kcc_status kcc_trace_set_desc(kcc_trace_writer *w, const kcc_character_desc *desc,
                              kcc_status status)
{
    kcc_status st = kcc_tr_writer_ready(w);
    if (st != KCC_OK)
        return st;
    if (w->recorder)
        return KCC_ERR_BAD_DESC;   // a world trace records the world's calls itself
    if (!desc)
        return w->status = KCC_ERR_NULL_ARGUMENT;
    kcc_tr_line b = { .len = 0 };
    kcc_tr_lb_str(&b, "set");
    for (uint32_t i = 0; i < KCC_TR_DESC_FIELD_COUNT; ++i) {
        const kcc_tr_desc_field *f = &kcc_tr_desc_fields[i];
        if (memcmp((const char *)desc + f->offset, (const char *)&w->desc + f->offset,
                   kcc_tr_field_bytes(f)) != 0)
            kcc_tr_lb_field(&b, f, desc);
    }
    kcc_tr_lb_str(&b, " | ");
    kcc_tr_lb_status(&b, status);
    kcc_tr_lb_str(&b, "\n");
    kcc_tr_emit(w, b.text, b.len);
    if (w->status == KCC_OK && status == KCC_OK)
        w->desc = *desc;
    return w->status;
}

kcc_status kcc_trace_restart(kcc_trace_writer *w, const vec3 center)
{
    kcc_status st = kcc_tr_writer_ready(w);
    if (st != KCC_OK)
        return st;
    if (w->recorder)
        return KCC_ERR_BAD_DESC;   // a world trace records the world's calls itself
    if (!center)
        return w->status = KCC_ERR_NULL_ARGUMENT;
    if (!kcc_tr_vec3_finite(center))
        return w->status = KCC_ERR_NON_FINITE;
    kcc_tr_line b = { .len = 0 };
    kcc_tr_lb_str(&b, "start");
    kcc_tr_lb_vec3(&b, center);
    kcc_tr_lb_str(&b, "\n");
    kcc_tr_emit(w, b.text, b.len);
    return w->status;
}

kcc_status kcc_trace_comment(kcc_trace_writer *w, const char *text)
{
    kcc_status st = kcc_tr_writer_ready(w);
    if (st != KCC_OK)
        return st;
    if (!text)
        return KCC_ERR_NULL_ARGUMENT;
    if (strpbrk(text, "\r\n"))
        return KCC_ERR_BAD_DESC;   // not sticky: nothing was written
    kcc_tr_world_flush(w);
    kcc_tr_emit(w, "# ", 2);
    kcc_tr_emit(w, text, strlen(text));
    kcc_tr_emit(w, "\n", 1);
    return w->status;
}

kcc_status kcc_trace_end(kcc_trace_writer *w)
{
    if (w && w->begun)
        kcc_tr_world_detach(w);   // whatever the status: the world must not keep the writer
    kcc_status st = kcc_tr_writer_ready(w);
    if (st != KCC_OK)
        return st;
    char t[32];
    int n = snprintf(t, sizeof t, "end %u\n", (unsigned)w->frames);
    kcc_tr_emit(w, t, (size_t)n);
    if (w->file && w->status == KCC_OK && fflush(w->file) != 0)
        w->status = KCC_ERR_IO;
    w->ended = true;
    return w->status;
}

size_t kcc_trace_writer_length(const kcc_trace_writer *w)
{
    return w ? w->length : 0;
}

// ------------------------------------------------------------------------------------- parser


kcc_status kcc_tr_fail(kcc_tr_parser *p, kcc_status st, const char *fmt, ...)
{
    if (p->err && p->err_size) {
        int n = snprintf(p->err, p->err_size, "%s:%u: ", p->name, (unsigned)p->line);
        if (n >= 0 && (size_t)n < p->err_size) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(p->err + n, p->err_size - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    return st;
}

// Copies token i into out (NUL-terminated). Long tokens are cut (and then fail to parse).
const char *kcc_tr_tok(const kcc_tr_parser *p, uint32_t i, char out[KCC_TR_MAX_TOKEN_CHARS + 1])
{
    size_t n = p->tok_end[i] - p->tok_begin[i];
    if (n > KCC_TR_MAX_TOKEN_CHARS)
        n = KCC_TR_MAX_TOKEN_CHARS;
    memcpy(out, p->text + p->tok_begin[i], n);
    out[n] = '\0';
    return out;
}

bool kcc_tr_tok_is(const kcc_tr_parser *p, uint32_t i, const char *s)
{
    size_t n = p->tok_end[i] - p->tok_begin[i];
    return strlen(s) == n && memcmp(p->text + p->tok_begin[i], s, n) == 0;
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

// Splits [begin, end) into tokens: runs of non-blanks, and every '|' a token of its own whatever
// the spacing around it. Fails on control characters (binary data, NUL bytes).
static kcc_status tokenize(kcc_tr_parser *p, uint32_t begin, uint32_t end)
{
    const char *t = p->text;
    uint32_t ce = end;
    for (uint32_t i = begin; i < end; ++i) {
        unsigned char c = (unsigned char)t[i];
        if (c == '#') {
            ce = i;
            break;
        }
        if (c < 0x20 && c != '\t' && c != '\r')
            return kcc_tr_fail(p, KCC_ERR_PARSE, "unexpected control character (byte %u): not a text trace", c);
    }
    while (ce > begin && is_blank(t[ce - 1]))
        --ce;
    p->content_end = ce;
    p->ntok = 0;
    uint32_t i = begin;
    for (;;) {
        while (i < ce && is_blank(t[i]))
            ++i;
        if (i >= ce)
            break;
        if (p->ntok == KCC_TR_MAX_TOKENS)
            return kcc_tr_fail(p, KCC_ERR_PARSE, "too many fields on one line (at most %d)", KCC_TR_MAX_TOKENS);
        p->tok_begin[p->ntok] = i;
        if (t[i] == '|')
            ++i;
        else
            while (i < ce && !is_blank(t[i]) && t[i] != '|')
                ++i;
        p->tok_end[p->ntok++] = i;
    }
    return KCC_OK;
}

// Parses [s, e) as a float (decimal, C hex, inf/nan). finite_only rejects nan/inf (positions,
// tuning at the start).
kcc_status kcc_tr_parse_float_text(kcc_tr_parser *p, const char *s, const char *e, bool finite_only,
                                   const char *what, float *out)
{
    float v = 0.0f;
    int n = (int)(e - s);
    kcc_num_result r = kcc_text_to_float(s, e, KCC_NUM_HEX | KCC_NUM_NAN_INF, &v);
    if (r == KCC_NUM_RANGE)
        return kcc_tr_fail(p, KCC_ERR_PARSE, "number '%.*s' for %s is out of range (overflows float)", n,
                    s, what);
    if (r != KCC_NUM_OK)
        return kcc_tr_fail(p, KCC_ERR_PARSE, "bad number '%.*s' for %s", n, s, what);
    if (finite_only && !isfinite(v))
        return kcc_tr_fail(p, KCC_ERR_PARSE, "%s must be finite, found '%.*s'", what, n, s);
    *out = v;
    return KCC_OK;
}

kcc_status kcc_tr_parse_vec3(kcc_tr_parser *p, uint32_t first, bool finite_only, const char *what, float *out)
{
    for (uint32_t k = 0; k < 3; ++k) {
        const char *s = p->text + p->tok_begin[first + k], *e = p->text + p->tok_end[first + k];
        kcc_status st = kcc_tr_parse_float_text(p, s, e, finite_only, what, &out[k]);
        if (st != KCC_OK)
            return st;
    }
    return KCC_OK;
}

// Parses [s, e) as a decimal integer within [min, max], or fails naming `what`.
kcc_status kcc_tr_parse_int_text(kcc_tr_parser *p, const char *s, const char *e, int64_t min, int64_t max,
                                 const char *what, int64_t *out)
{
    kcc_num_result r = kcc_text_to_int(s, e, min, max, out);
    if (r == KCC_NUM_RANGE)
        return kcc_tr_fail(p, KCC_ERR_PARSE, "%s '%.*s' is out of range (%lld to %lld)", what, (int)(e - s),
                    s, (long long)min, (long long)max);
    if (r != KCC_NUM_OK)
        return kcc_tr_fail(p, KCC_ERR_PARSE, "bad %s '%.*s' (expected an integer)", what, (int)(e - s), s);
    return KCC_OK;
}

// A line of two fields, `usage` (e.g. "end <frame count>"), whose second is an integer.
kcc_status kcc_tr_int_line(kcc_tr_parser *p, const char *usage, int64_t min, int64_t max, const char *what,
                           int64_t *out)
{
    if (p->ntok != 2)
        return kcc_tr_fail(p, KCC_ERR_PARSE, "expected '%s'", usage);
    return kcc_tr_parse_int_text(p, p->text + p->tok_begin[1], p->text + p->tok_end[1], min, max, what, out);
}

kcc_status kcc_tr_parse_status(kcc_tr_parser *p, uint32_t i, kcc_status *out)
{
    char t[KCC_TR_MAX_TOKEN_CHARS + 1];
    kcc_tr_tok(p, i, t);
    for (int s = 0; s < KCC_STATUS_COUNT; ++s) {
        if (status_names[s] && strcmp(status_names[s], t) == 0) {
            *out = (kcc_status)s;
            return KCC_OK;
        }
    }
    int64_t v;
    if (kcc_text_to_int(t, t + strlen(t), 0, 99999, &v) == KCC_NUM_OK) {
        *out = (kcc_status)v;
        return KCC_OK;
    }
    return kcc_tr_fail(p, KCC_ERR_PARSE, "unknown status '%s' (expected a name like KCC_OK)", t);
}

// Parses one field value: an integer, or count comma-separated floats.
static kcc_status parse_field_value(kcc_tr_parser *p, const kcc_tr_desc_field *df, const char *value,
                                    bool finite_only, char *base)
{
    const char *end = value + strlen(value);
    if (df->is_int) {
        int64_t v;
        kcc_status st = kcc_tr_parse_int_text(p, value, end, -1000000, 1000000, df->name, &v);
        if (st != KCC_OK)
            return st;
        int iv = (int)v;
        memcpy(base, &iv, sizeof iv);
        return KCC_OK;
    }
    const char *s = value;
    for (uint32_t k = 0; k < df->count; ++k) {
        const char *comma = strchr(s, ',');
        if ((k + 1 < df->count) != (comma != NULL))
            return kcc_tr_fail(p, KCC_ERR_PARSE, "%s needs %u comma-separated numbers, found '%s'",
                        df->name, (unsigned)df->count, value);
        const char *e = comma ? comma : end;
        float v = 0.0f;
        kcc_status st = kcc_tr_parse_float_text(p, s, e, finite_only, df->name, &v);
        if (st != KCC_OK)
            return st;
        memcpy(base + k * sizeof(float), &v, sizeof v);
        s = comma ? comma + 1 : e;
    }
    return KCC_OK;
}

// Parses `key=value` tokens [first, last) into d, marking the given fields in *mask.
kcc_status kcc_tr_parse_fields(kcc_tr_parser *p, uint32_t first, uint32_t last, bool finite_only,
                               kcc_character_desc *d, uint32_t *mask)
{
    for (uint32_t i = first; i < last; ++i) {
        char t[KCC_TR_MAX_TOKEN_CHARS + 1];
        kcc_tr_tok(p, i, t);
        char *eq = strchr(t, '=');
        if (!eq)
            return kcc_tr_fail(p, KCC_ERR_PARSE, "expected key=value, found '%s'", t);
        *eq = '\0';
        uint32_t f = 0;
        while (f < KCC_TR_DESC_FIELD_COUNT && strcmp(kcc_tr_desc_fields[f].name, t) != 0)
            ++f;
        if (f == KCC_TR_DESC_FIELD_COUNT)
            return kcc_tr_fail(p, KCC_ERR_PARSE, "unknown desc field '%s'", t);
        if (*mask & (1u << f))
            return kcc_tr_fail(p, KCC_ERR_PARSE, "desc field '%s' given twice", t);
        kcc_status st = parse_field_value(p, &kcc_tr_desc_fields[f], eq + 1, finite_only,
                                          (char *)d + kcc_tr_desc_fields[f].offset);
        if (st != KCC_OK)
            return st;
        *mask |= 1u << f;
    }
    return KCC_OK;
}

char *kcc_tr_dup_range(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

// `level obj <path>` resolves a relative path against the directory of the trace's name.
char *kcc_tr_resolve_obj_path(const char *name, const char *path, size_t n)
{
    const char *slash = strrchr(name, '/');
    if (path[0] == '/' || !slash)
        return kcc_tr_dup_range(path, n);
    size_t dn = (size_t)(slash - name) + 1;
    char *d = malloc(dn + n + 1);
    if (d) {
        memcpy(d, name, dn);
        memcpy(d + dn, path, n);
        d[dn + n] = '\0';
    }
    return d;
}

static kcc_status push_step(kcc_tr_parser *p, const kcc_trace_step *s)
{
    kcc_trace *t = p->trace;
    if (t->step_count == p->step_cap) {
        uint32_t nc = p->step_cap ? p->step_cap * 2 : 256;
        kcc_trace_step *ns = nc < p->step_cap ? NULL : realloc(t->steps, (size_t)nc * sizeof *ns);
        if (!ns) {
            kcc_status st = nc < p->step_cap ? KCC_ERR_TOO_LARGE : KCC_ERR_OUT_OF_MEMORY;
            return kcc_tr_fail(p, st, "%s", kcc_status_str(st));
        }
        t->steps = ns;
        p->step_cap = nc;
    }
    t->steps[t->step_count++] = *s;
    return KCC_OK;
}

// `kcc-trace <version>`: the first statement.
static kcc_status header_line(kcc_tr_parser *p, const char *t0)
{
    if (!kcc_tr_tok_is(p, 0, "kcc-trace"))
        return kcc_tr_fail(p, KCC_ERR_PARSE, "not a kcc trace: expected 'kcc-trace %d', found '%s'",
                    KCC_TRACE_VERSION, t0);
    int64_t version;
    kcc_status st = kcc_tr_int_line(p, "kcc-trace <version>", 0, INT32_MAX, "version", &version);
    if (st != KCC_OK)
        return st;
    if (version == KCC_WORLD_TRACE_VERSION)
        return kcc_tr_fail(p, KCC_ERR_VERSION, "a world trace (version %d): load it with "
                           "kcc_world_trace_load", KCC_WORLD_TRACE_VERSION);
    if (version != KCC_TRACE_VERSION)
        return kcc_tr_fail(p, KCC_ERR_VERSION, "trace format version %lld is not supported (this "
                           "library reads versions %d and %d)", (long long)version,
                           KCC_TRACE_VERSION, KCC_WORLD_TRACE_VERSION);
    p->state = WANT_LEVEL;
    return KCC_OK;
}

// `level obj <path>` (the path runs to the end of the content) or `level gen <spec>`.
static kcc_status level_line(kcc_tr_parser *p, const char *t0)
{
    kcc_trace *t = p->trace;
    if (!kcc_tr_tok_is(p, 0, "level"))
        return kcc_tr_fail(p, KCC_ERR_PARSE, "expected the 'level' line, found '%s'", t0);
    if (p->ntok < 3 || (!kcc_tr_tok_is(p, 1, "obj") && !kcc_tr_tok_is(p, 1, "gen")))
        return kcc_tr_fail(p, KCC_ERR_PARSE, "expected 'level obj <path>' or 'level gen <spec>'");
    const char *rest = p->text + p->tok_begin[2];
    size_t n = p->content_end - p->tok_begin[2];
    if (n >= KCC_TRACE_LEVEL_MAX)
        return kcc_tr_fail(p, KCC_ERR_PARSE, "level description too long");
    t->level_line = p->line;
    bool obj = kcc_tr_tok_is(p, 1, "obj");
    t->level_kind = obj ? KCC_TRACE_LEVEL_OBJ : KCC_TRACE_LEVEL_GEN;
    t->level = obj ? kcc_tr_resolve_obj_path(p->name, rest, n) : kcc_tr_dup_range(rest, n);
    if (!t->level)
        return kcc_tr_fail(p, KCC_ERR_OUT_OF_MEMORY, "out of memory");
    if (obj) {
        FILE *f = fopen(t->level, "rb");
        if (!f)
            return kcc_tr_fail(p, KCC_ERR_NOT_FOUND, "level file '%s' not found", t->level);
        fclose(f);
    }
    p->state = WANT_DESC;
    return KCC_OK;
}

kcc_status kcc_tr_parse_hash(kcc_tr_parser *p, uint32_t i, uint64_t *out)
{
    const char *s = p->text + p->tok_begin[i];
    uint64_t h = 0;
    bool ok = i < p->ntok && p->tok_end[i] - p->tok_begin[i] == 16;
    for (int k = 0; ok && k < 16; ++k) {
        char c = s[k];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        ok = d >= 0;
        h = h * 16u + (uint64_t)(d & 15);
    }
    if (!ok)
        return KCC_ERR_PARSE;
    *out = h;
    return KCC_OK;
}

// `level_hash <16 hex digits>`: optional, once, between the level line and the first step.
static kcc_status level_hash_line(kcc_tr_parser *p)
{
    kcc_trace *t = p->trace;
    if (p->state < WANT_DESC || t->step_count > 0 || t->has_level_hash)
        return kcc_tr_fail(p, KCC_ERR_PARSE, "'level_hash' belongs once between the 'level' line and the "
                    "first step");
    uint64_t h = 0;
    if (p->ntok != 2 || kcc_tr_parse_hash(p, 1, &h) != KCC_OK)
        return kcc_tr_fail(p, KCC_ERR_PARSE, "expected 'level_hash' and 16 lowercase hex digits");
    t->has_level_hash = true;
    t->level_hash = h;
    t->level_hash_line = p->line;
    return KCC_OK;
}

// `desc key=value ...`: every field, within the documented ranges.
static kcc_status desc_line(kcc_tr_parser *p, const char *t0)
{
    if (!kcc_tr_tok_is(p, 0, "desc"))
        return kcc_tr_fail(p, KCC_ERR_PARSE, "expected the 'desc' line, found '%s'", t0);
    uint32_t mask = 0;
    kcc_character_desc d = kcc_character_default_desc();
    kcc_status st = kcc_tr_parse_fields(p, 1, p->ntok, true, &d, &mask);
    if (st != KCC_OK)
        return st;
    for (uint32_t f = 0; f < KCC_TR_DESC_FIELD_COUNT; ++f)
        if (!(mask & (1u << f)))
            return kcc_tr_fail(p, KCC_ERR_PARSE, "desc is missing field '%s'", kcc_tr_desc_fields[f].name);
    st = kcc_character_desc_validate(&d);
    if (st != KCC_OK)
        return kcc_tr_fail(p, st, "desc rejected: %s", kcc_status_str(st));
    p->trace->desc = d;
    p->state = WANT_START;
    return KCC_OK;
}

// `start x y z`: the initial centre (the first one) or a restart step.
static kcc_status start_line(kcc_tr_parser *p)
{
    if (p->ntok != 4)
        return kcc_tr_fail(p, KCC_ERR_PARSE, "expected 'start x y z'");
    float c[3];
    kcc_status st = kcc_tr_parse_vec3(p, 1, true, "start position", c);
    if (st != KCC_OK)
        return st;
    if (p->state == WANT_START) {
        memcpy(p->trace->start, c, sizeof c);
        p->state = IN_BODY;
        return KCC_OK;
    }
    kcc_trace_step s = { .kind = KCC_TRACE_START, .line = p->line, .has_expected = true };
    memcpy(s.vec, c, sizeof c);
    s.cut_begin = s.cut_end = p->content_end;
    return push_step(p, &s);
}

// `f dx dy dz [| px py pz | FLAGS]`; FLAGS may have blanks around its '|'.
static kcc_status frame_line(kcc_tr_parser *p)
{
    if (p->ntok != 4 && p->ntok < 10)
        return kcc_tr_fail(p, KCC_ERR_PARSE, "incomplete frame line: expected 'f dx dy dz | px py pz | flags'");
    kcc_trace_step s = { .kind = KCC_TRACE_MOVE, .line = p->line };
    kcc_status st = kcc_tr_parse_vec3(p, 1, false, "displacement", s.vec);
    if (st != KCC_OK)
        return st;
    s.cut_begin = s.cut_end = p->tok_end[3];
    if (p->ntok >= 10) {
        if (!kcc_tr_tok_is(p, 4, "|") || !kcc_tr_tok_is(p, 8, "|"))
            return kcc_tr_fail(p, KCC_ERR_PARSE, "expected 'f dx dy dz | px py pz | flags'");
        st = kcc_tr_parse_vec3(p, 5, true, "expected position", s.expected_position);
        if (st != KCC_OK)
            return st;
        const char *flags = p->text + p->tok_begin[9];
        size_t n = p->content_end - p->tok_begin[9];
        if (!kcc_tr_flags_from_text(flags, n, &s.expected_flags))
            return kcc_tr_fail(p, KCC_ERR_PARSE, "bad flags '%.*s'", (int)n, flags);
        s.has_expected = true;
        s.cut_end = p->content_end;
    }
    p->trace->frame_count++;
    return push_step(p, &s);
}

// `set key=value ... [| STATUS]`.
static kcc_status set_line(kcc_tr_parser *p)
{
    kcc_trace_step s = { .kind = KCC_TRACE_SET, .line = p->line };
    uint32_t last = p->ntok;
    if (p->ntok >= 2 && kcc_tr_tok_is(p, p->ntok - 2, "|"))
        last = p->ntok - 2;
    for (uint32_t i = 1; i < p->ntok; ++i)
        if (kcc_tr_tok_is(p, i, "|") && i != last)
            return kcc_tr_fail(p, KCC_ERR_PARSE, "expected 'set key=value ... | STATUS'");
    kcc_status st = kcc_tr_parse_fields(p, 1, last, false, &s.desc, &s.set_fields);
    if (st != KCC_OK)
        return st;
    s.cut_begin = s.cut_end = p->tok_end[last - 1];
    if (last != p->ntok) {
        st = kcc_tr_parse_status(p, p->ntok - 1, &s.expected_status);
        if (st != KCC_OK)
            return st;
        s.has_expected = true;
        s.cut_end = p->tok_end[p->ntok - 1];
    }
    return push_step(p, &s);
}

// `end N`: N must be the number of frames read.
static kcc_status end_line(kcc_tr_parser *p)
{
    int64_t n;
    kcc_status st = kcc_tr_int_line(p, "end <frame count>", 0, UINT32_MAX, "frame count", &n);
    if (st != KCC_OK)
        return st;
    if (n != (int64_t)p->trace->frame_count)
        return kcc_tr_fail(p, KCC_ERR_PARSE, "truncated or edited: 'end' says %lld frames, the file "
                    "has %u", (long long)n, (unsigned)p->trace->frame_count);
    p->state = AFTER_END;
    return KCC_OK;
}

// One line with at least one token, dispatched by the parser's state and its first token.
static kcc_status statement(kcc_tr_parser *p)
{
    char t0[KCC_TR_MAX_TOKEN_CHARS + 1];
    kcc_tr_tok(p, 0, t0);
    // Only the level line carries free text (a path); elsewhere a huge field is garbage, and
    // cutting it could turn it into a different valid one.
    for (uint32_t i = 0; i < p->ntok && !kcc_tr_tok_is(p, 0, "level"); ++i)
        if (p->tok_end[i] - p->tok_begin[i] > KCC_TR_MAX_TOKEN_CHARS)
            return kcc_tr_fail(p, KCC_ERR_PARSE, "field %u is longer than %d characters", (unsigned)i + 1,
                        KCC_TR_MAX_TOKEN_CHARS);
    switch (p->state) {
    case WANT_HEADER: return header_line(p, t0);
    case WANT_LEVEL: return level_line(p, t0);
    case AFTER_END: return kcc_tr_fail(p, KCC_ERR_PARSE, "unexpected '%s' after the 'end' line", t0);
    default: break;
    }
    if (kcc_tr_tok_is(p, 0, "level_hash"))
        return level_hash_line(p);
    if (p->state == WANT_DESC)
        return desc_line(p, t0);
    if (p->state == WANT_START && !kcc_tr_tok_is(p, 0, "start"))
        return kcc_tr_fail(p, KCC_ERR_PARSE, "expected the 'start' line, found '%s'", t0);
    if (kcc_tr_tok_is(p, 0, "start"))
        return start_line(p);
    if (kcc_tr_tok_is(p, 0, "f"))
        return frame_line(p);
    if (kcc_tr_tok_is(p, 0, "set"))
        return set_line(p);
    if (kcc_tr_tok_is(p, 0, "end"))
        return end_line(p);
    return kcc_tr_fail(p, KCC_ERR_PARSE, "unknown line '%s' (expected f, set, start or end)", t0);
}

// The text ended: fine only after the `end` line.
static kcc_status end_of_text(kcc_tr_parser *p)
{
    if (p->line == 0)
        p->line = 1;
    switch (p->state) {
    case WANT_HEADER: return kcc_tr_fail(p, KCC_ERR_PARSE, "empty file: expected 'kcc-trace %d'", KCC_TRACE_VERSION);
    case WANT_LEVEL: return kcc_tr_fail(p, KCC_ERR_PARSE, "truncated: missing the 'level' line");
    case WANT_DESC: return kcc_tr_fail(p, KCC_ERR_PARSE, "truncated: missing the 'desc' line");
    case WANT_START: return kcc_tr_fail(p, KCC_ERR_PARSE, "truncated: missing the 'start' line");
    case IN_BODY: return kcc_tr_fail(p, KCC_ERR_PARSE, "truncated: missing the 'end' line after frame %u",
                              (unsigned)p->trace->frame_count);
    default: return KCC_OK;
    }
}

// A UTF-8 byte order mark at the very start (editors add one) is skipped.
static uint32_t skip_bom(const char *text, size_t length)
{
    return length >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0 ? 3u : 0u;
}

uint32_t kcc_tr_text_version(const char *text, size_t length)
{
    // The first line that is not blank or a comment, after a byte order mark.
    size_t pos = text ? skip_bom(text, length) : length;
    while (pos < length) {
        const char *nl = memchr(text + pos, '\n', length - pos);
        size_t eol = nl ? (size_t)(nl - text) : length, b = pos;
        pos = eol + 1;
        while (b < eol && is_blank(text[b]))
            ++b;
        if (b == eol || text[b] == '#')
            continue;
        int64_t v = 0;
        size_t e = b + 10;
        if (eol - b < 11 || memcmp(text + b, "kcc-trace ", 10) != 0)
            return 0;
        while (e < eol && !is_blank(text[e]) && text[e] != '#')
            ++e;
        return kcc_text_to_int(text + b + 10, text + e, 1, 1000, &v) == KCC_NUM_OK ? (uint32_t)v : 0;
    }
    return 0;
}

kcc_status kcc_tr_parse_lines(kcc_tr_parser *p, size_t length, kcc_tr_statement_fn *on_line,
                              kcc_tr_statement_fn *on_end)
{
    const char *text = p->text;
    uint32_t pos = skip_bom(text, length);
    p->line = 0;
    p->state = WANT_HEADER;
    while (pos < length) {
        const char *nl = memchr(text + pos, '\n', length - pos);
        uint32_t eol = nl ? (uint32_t)(nl - text) : (uint32_t)length;
        p->line++;
        kcc_status st = tokenize(p, pos, eol);
        pos = eol < length ? eol + 1 : eol;
        if (st == KCC_OK && p->ntok > 0)
            st = on_line(p);
        if (st != KCC_OK)
            return st;
    }
    return on_end(p);
}

kcc_status kcc_trace_parse(const char *text, size_t length, const char *name, kcc_trace **out,
                           char *err, size_t err_size)
{
    if (err && err_size)
        err[0] = '\0';
    if (!out || (!text && length))
        return KCC_ERR_NULL_ARGUMENT;
    if (!name)
        name = "<trace>";
    kcc_tr_parser p;
    memset(&p, 0, sizeof p);
    p.name = name;
    p.err = err;
    p.err_size = err_size;
    p.text = text ? text : "";
    if (length >= UINT32_MAX) {
        p.line = 1;
        return kcc_tr_fail(&p, KCC_ERR_TOO_LARGE, "file too large");
    }
    kcc_trace *t = calloc(1, sizeof *t);
    if (!t)
        return kcc_tr_fail(&p, KCC_ERR_OUT_OF_MEMORY, "out of memory");
    t->name = kcc_tr_dup_range(name, strlen(name));
    t->text = kcc_tr_dup_range(p.text, length);
    t->text_length = length;
    if (!t->name || !t->text) {
        kcc_trace_free(t);
        return kcc_tr_fail(&p, KCC_ERR_OUT_OF_MEMORY, "out of memory");
    }
    p.text = t->text;   // a private, NUL-terminated copy
    p.trace = t;
    kcc_status st = kcc_tr_parse_lines(&p, length, statement, end_of_text);
    if (st != KCC_OK) {
        kcc_trace_free(t);
        return st;
    }
    *out = t;
    return KCC_OK;
}

kcc_status kcc_tr_read_file(const char *path, char **out_text, size_t *out_length, char *err,
                            size_t err_size)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (err && err_size)
            snprintf(err, err_size, "%s: cannot open: %s", path, strerror(errno));
        return KCC_ERR_IO;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    kcc_status st = buf ? KCC_OK : KCC_ERR_OUT_OF_MEMORY;
    while (st == KCC_OK) {
        if (len == cap) {
            if (cap >= ((size_t)1 << 31)) {
                st = KCC_ERR_TOO_LARGE;
                break;
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                st = KCC_ERR_OUT_OF_MEMORY;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (n == 0) {
            if (ferror(f))
                st = KCC_ERR_IO;
            break;
        }
    }
    fclose(f);
    if (st != KCC_OK) {
        free(buf);
        if (err && err_size)
            snprintf(err, err_size, "%s: cannot read: %s", path, kcc_status_str(st));
        return st;
    }
    *out_text = buf;
    *out_length = len;
    return KCC_OK;
}

kcc_status kcc_trace_load(const char *path, kcc_trace **out, char *err, size_t err_size)
{
    if (err && err_size)
        err[0] = '\0';
    if (!path || !out)
        return KCC_ERR_NULL_ARGUMENT;
    char *buf = NULL;
    size_t len = 0;
    kcc_status st = kcc_tr_read_file(path, &buf, &len, err, err_size);
    if (st != KCC_OK)
        return st;
    st = kcc_trace_parse(buf, len, path, out, err, err_size);
    free(buf);
    return st;
}

uint32_t kcc_trace_file_version(const char *path)
{
    char *text = NULL;
    size_t length = 0;
    if (!path || kcc_tr_read_file(path, &text, &length, NULL, 0) != KCC_OK)
        return 0;
    uint32_t v = kcc_tr_text_version(text, length);
    free(text);
    return v;
}

void kcc_trace_free(kcc_trace *trace)
{
    if (!trace)
        return;
    free(trace->name);
    free(trace->level);
    free(trace->steps);
    free(trace->text);
    free(trace);
}

kcc_status kcc_trace_check_level_hash(const kcc_trace *trace, uint64_t level_hash, char *err,
                                      size_t err_size)
{
    if (!trace)
        return KCC_ERR_NULL_ARGUMENT;
    if (!trace->has_level_hash || trace->level_hash == level_hash)
        return KCC_OK;
    if (err && err_size)
        snprintf(err, err_size, "%s:%u: level '%s' has changed since the trace was recorded (its "
                 "triangles hash to %016llx, the trace recorded %016llx): re-record the trace, or "
                 "delete its level_hash line to replay it on the new level", trace->name,
                 (unsigned)trace->level_hash_line, trace->level, (unsigned long long)level_hash,
                 (unsigned long long)trace->level_hash);
    return KCC_ERR_LEVEL_CHANGED;
}

kcc_status kcc_trace_load_level(const kcc_trace *trace, kcc_level *out_level, char *err,
                                size_t err_size)
{
    if (err && err_size)
        err[0] = '\0';
    if (!trace || !out_level)
        return KCC_ERR_NULL_ARGUMENT;
    kcc_level level;
    memset(&level, 0, sizeof level);
    char e[512] = "";
    kcc_status st = trace->level_kind == KCC_TRACE_LEVEL_OBJ
                        ? kcc_level_load_obj(trace->level, &level, e, sizeof e)
                        : kcc_level_generate(trace->level, &level, e, sizeof e);
    if (st != KCC_OK) {
        if (err && err_size)
            snprintf(err, err_size, "%s:%u: level: %s", trace->name, (unsigned)trace->level_line,
                     e[0] ? e : kcc_status_str(st));
        return st;
    }
    st = kcc_trace_check_level_hash(trace, kcc_level_hash(&level), err, err_size);
    if (st != KCC_OK) {
        kcc_level_free(&level);
        return st;
    }
    *out_level = level;
    return KCC_OK;
}

kcc_status kcc_trace_build_level(const kcc_trace *trace, kcc_mesh **out_mesh, char *err,
                                 size_t err_size)
{
    if (!out_mesh)
        return KCC_ERR_NULL_ARGUMENT;
    kcc_level level;
    kcc_status st = kcc_trace_load_level(trace, &level, err, err_size);
    if (st != KCC_OK)
        return st;
    st = kcc_level_build_mesh(&level, out_mesh);
    kcc_level_free(&level);
    if (st != KCC_OK && err && err_size)
        snprintf(err, err_size, "%s:%u: level: cannot build its mesh: %s", trace->name,
                 (unsigned)trace->level_line, kcc_status_str(st));
    return st;
}

// ------------------------------------------------------------------------------------- replay

bool kcc_tr_position_matches(const float *expected, const float *actual, float tolerance)
{
    if (tolerance == 0.0f)
        return memcmp(expected, actual, 3 * sizeof(float)) == 0;
    for (int k = 0; k < 3; ++k)
        if (!(fabsf(actual[k] - expected[k]) <= tolerance))
            return false;
    return true;
}

kcc_status kcc_trace_replay(const kcc_trace *trace, const kcc_mesh *mesh, float tolerance,
                            kcc_trace_outcome *outcomes, kcc_trace_report *out)
{
    if (!trace || !mesh || !out)
        return KCC_ERR_NULL_ARGUMENT;
    if (!isfinite(tolerance) || tolerance < 0.0f)
        return KCC_ERR_NON_FINITE;
    kcc_character ch;
    kcc_character_desc cur = trace->desc;
    kcc_status st = kcc_character_init(&ch, &cur, trace->start);
    if (st != KCC_OK)
        return st;
    kcc_trace_report r;
    memset(&r, 0, sizeof r);
    for (uint32_t i = 0; i < trace->step_count; ++i) {
        const kcc_trace_step *s = &trace->steps[i];
        kcc_trace_outcome o;
        memset(&o, 0, sizeof o);
        bool ok = true;
        if (s->kind == KCC_TRACE_MOVE) {
            kcc_move_result res;
            kcc_character_move(&ch, mesh, s->vec, &res);
            memcpy(o.position, ch.position, sizeof o.position);
            o.flags = res.flags;
            if (s->has_expected) {
                for (int k = 0; k < 3; ++k) {
                    float e = fabsf(o.position[k] - s->expected_position[k]);
                    if (e > r.max_error || isnan(e))
                        r.max_error = isnan(e) ? INFINITY : e;
                }
                ok = kcc_tr_position_matches(s->expected_position, o.position, tolerance) &&
                     o.flags == s->expected_flags;
            } else {
                ok = false;
            }
        } else if (s->kind == KCC_TRACE_SET) {
            kcc_character_desc req = cur;
            for (uint32_t f = 0; f < KCC_TR_DESC_FIELD_COUNT; ++f) {
                if (s->set_fields & (1u << f))
                    memcpy((char *)&req + kcc_tr_desc_fields[f].offset,
                           (const char *)&s->desc + kcc_tr_desc_fields[f].offset, kcc_tr_field_bytes(&kcc_tr_desc_fields[f]));
            }
            o.status = kcc_character_set_desc_checked(&ch, &req, mesh);
            if (o.status == KCC_OK)
                cur = req;
            memcpy(o.position, ch.position, sizeof o.position);
            ok = s->has_expected && o.status == s->expected_status;
        } else {
            o.status = kcc_character_init(&ch, &cur, s->vec);
            memcpy(o.position, ch.position, sizeof o.position);
            ok = o.status == KCC_OK;
        }
        if (outcomes)
            outcomes[i] = o;
        if (!ok) {
            if (r.diverged++ == 0) {
                r.step = i;
                r.frame = r.frames;
                r.line = s->line;
                r.kind = s->kind;
                r.missing_expected = !s->has_expected;
                memcpy(r.expected_position, s->expected_position, sizeof r.expected_position);
                memcpy(r.actual_position, o.position, sizeof r.actual_position);
                r.expected_flags = s->expected_flags;
                r.actual_flags = o.flags;
                r.expected_status = s->kind == KCC_TRACE_START ? KCC_OK : s->expected_status;
                r.actual_status = o.status;
            }
        }
        if (s->kind == KCC_TRACE_MOVE)
            r.frames++;
        r.steps++;
    }
    *out = r;
    return KCC_OK;
}

void kcc_tr_outcome_text_of(const float *expected, uint32_t expected_flags, const float *actual,
                            uint32_t actual_flags, kcc_tr_outcome_text *out)
{
    for (int k = 0; k < 3; ++k) {
        kcc_trace_float_to_text(expected[k], out->expected[k]);
        kcc_trace_float_to_text(actual[k], out->actual[k]);
    }
    kcc_trace_flags_to_text(expected_flags, out->expected_flags, sizeof out->expected_flags);
    kcc_trace_flags_to_text(actual_flags, out->actual_flags, sizeof out->actual_flags);
}

int kcc_trace_format_divergence(const kcc_trace *trace, const kcc_trace_report *report, char *buf,
                                size_t size)
{
    if (!trace || !report)
        return 0;
    if (report->diverged == 0)
        return snprintf(buf, size, "%s: %u frames replay as recorded", trace->name,
                        (unsigned)report->frames);
    kcc_tr_outcome_text o;
    kcc_tr_outcome_text_of(report->expected_position, report->expected_flags,
                           report->actual_position, report->actual_flags, &o);
    char (*e)[KCC_TRACE_FLOAT_CHARS] = o.expected, (*a)[KCC_TRACE_FLOAT_CHARS] = o.actual;
    const char *ef = o.expected_flags, *af = o.actual_flags;
    const char *name = trace->name;
    unsigned line = (unsigned)report->line, frame = (unsigned)report->frame;
    if (report->kind == KCC_TRACE_MOVE && report->missing_expected)
        return snprintf(buf, size, "%s:%u: frame %u: no expected outcome (got position (%s %s %s) "
                        "flags %s)", name, line, frame, a[0], a[1], a[2], af);
    if (report->kind == KCC_TRACE_MOVE)
        return snprintf(buf, size, "%s:%u: frame %u: expected position (%s %s %s) flags %s, got "
                        "(%s %s %s) flags %s", name, line, frame, e[0], e[1], e[2], ef, a[0], a[1],
                        a[2], af);
    if (report->kind == KCC_TRACE_SET && report->missing_expected)
        return snprintf(buf, size, "%s:%u: retune before frame %u: no expected status (got %s)",
                        name, line, frame, kcc_trace_status_name(report->actual_status));
    if (report->kind == KCC_TRACE_SET)
        return snprintf(buf, size, "%s:%u: retune before frame %u: expected %s, got %s", name, line,
                        frame, kcc_trace_status_name(report->expected_status),
                        kcc_trace_status_name(report->actual_status));
    return snprintf(buf, size, "%s:%u: restart before frame %u failed: %s", name, line, frame,
                    kcc_trace_status_name(report->actual_status));
}

kcc_status kcc_trace_write(const kcc_trace *trace, const kcc_trace_outcome *outcomes, FILE *out)
{
    if (!trace || !out)
        return KCC_ERR_NULL_ARGUMENT;
    size_t cursor = 0;
    bool ok = true;
    for (uint32_t i = 0; i < trace->step_count && ok; ++i) {
        const kcc_trace_step *s = &trace->steps[i];
        if (s->kind == KCC_TRACE_START)
            continue;
        ok = fwrite(trace->text + cursor, 1, s->cut_begin - cursor, out) == s->cut_begin - cursor;
        cursor = s->cut_end;
        kcc_tr_line b = { .len = 0 };
        if (s->kind == KCC_TRACE_MOVE) {
            if (!outcomes && !s->has_expected)
                continue;
            kcc_tr_lb_str(&b, " |");
            kcc_tr_lb_vec3(&b, outcomes ? outcomes[i].position : s->expected_position);
            kcc_tr_lb_str(&b, " | ");
            char flags[KCC_TRACE_FLAGS_CHARS];
            kcc_trace_flags_to_text(outcomes ? outcomes[i].flags : s->expected_flags, flags,
                                    sizeof flags);
            kcc_tr_lb_str(&b, flags);
        } else {
            if (!outcomes && !s->has_expected)
                continue;
            kcc_tr_lb_str(&b, " | ");
            kcc_tr_lb_status(&b, outcomes ? outcomes[i].status : s->expected_status);
        }
        ok = ok && fwrite(b.text, 1, b.len, out) == b.len;
    }
    if (ok && cursor < trace->text_length)
        ok = fwrite(trace->text + cursor, 1, trace->text_length - cursor, out) ==
             trace->text_length - cursor;
    if (ok && fflush(out) != 0)
        ok = false;
    return ok ? KCC_OK : KCC_ERR_IO;
}

// ------------------------------------------------------------------------------- check a file

// Keeps `message` to one line: a level or file name could carry a line break into it.
static void one_line(char *message)
{
    for (char *c = message; c && *c; ++c)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
}

// A world trace: loaded, replayed on one worker, its first divergence as the message.
static bool check_world_file(const char *path, float tolerance, char *message, size_t message_size)
{
    kcc_world_trace *trace = NULL;
    if (kcc_world_trace_load(path, &trace, message, message_size) != KCC_OK)
        return false;
    kcc_world_replay_desc desc = kcc_world_replay_default_desc();
    desc.tolerance = tolerance;
    kcc_world_trace_report report;
    kcc_status st = kcc_world_trace_replay(trace, &desc, &report, message, message_size);
    bool passed = st == KCC_OK && report.diverged == 0;
    if (st == KCC_OK && !passed) {
        int n = kcc_world_trace_format_divergence(trace, &report, message, message_size);
        if (tolerance > 0.0f && n >= 0 && (size_t)n < message_size)
            snprintf(message + n, message_size - (size_t)n, " (tolerance %g m)", (double)tolerance);
    }
    kcc_world_trace_free(trace);
    return passed;
}

// Loads the trace at path, builds its level and replays it; a message for whatever stops the
// check, or the first divergence. False on any of them.
static bool check_file(const char *path, float tolerance, char *message, size_t message_size)
{
    if (!path) {
        snprintf(message, message_size, "kcc_trace_check_file: no trace path given (NULL)");
        return false;
    }
    if (!isfinite(tolerance) || tolerance < 0.0f) {
        snprintf(message, message_size, "%s: tolerance must be a finite number of metres >= 0, "
                 "got %g", path, (double)tolerance);
        return false;
    }
    if (kcc_trace_file_version(path) == KCC_WORLD_TRACE_VERSION)
        return check_world_file(path, tolerance, message, message_size);
    kcc_trace *trace = NULL;
    if (kcc_trace_load(path, &trace, message, message_size) != KCC_OK)
        return false;
    kcc_mesh *mesh = NULL;
    kcc_status st = kcc_trace_build_level(trace, &mesh, message, message_size);
    kcc_trace_report report;
    memset(&report, 0, sizeof report);
    if (st == KCC_OK) {
        st = kcc_trace_replay(trace, mesh, tolerance, NULL, &report);
        if (st != KCC_OK)
            snprintf(message, message_size, "%s: cannot replay: %s", trace->name,
                     kcc_status_str(st));
    }
    bool passed = st == KCC_OK && report.diverged == 0;
    if (st == KCC_OK && !passed) {
        int n = kcc_trace_format_divergence(trace, &report, message, message_size);
        if (tolerance > 0.0f && n >= 0 && (size_t)n < message_size)
            snprintf(message + n, message_size - (size_t)n, " (tolerance %g m)", (double)tolerance);
    }
    kcc_mesh_destroy(mesh);
    kcc_trace_free(trace);
    return passed;
}

bool kcc_trace_check_file(const char *path, float tolerance, char *message, size_t message_size)
{
    if (!message)
        message_size = 0;
    if (message_size)
        message[0] = '\0';
    bool passed = check_file(path, tolerance, message_size ? message : NULL, message_size);
    if (message_size)
        one_line(message);
    return passed;
}
