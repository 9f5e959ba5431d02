/* obj.c: the OBJ and .spawns readers behind kcc_level_parse_obj / kcc_level_load_obj, and the
 * locale-independent, correctly rounded decimal-to-float parser they share. Reads `v` and `f`
 * lines, ignores the rest; never trusts a count from the input; allocates only the level arrays
 * (grown geometrically) and the file buffer. No global state. */
#include "level_internal.h"

#include <float.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------ */
/* Decimal to float.                                                                          */
/*                                                                                            */
/* Fast path (almost every number in a level file): at most 19 significant digits w and a    */
/* decimal exponent |e| <= 22 with w <= 2^53, so w and 10^|e| are exact doubles and one IEEE   */
/* multiply or divide gives the correctly rounded double d. Rounding d to float then gives    */
/* the correctly rounded float unless d sits exactly on a midpoint between two floats (every  */
/* float midpoint is a double, and rounding is monotonic), which is checked; those rare cases */
/* and everything else go to the exact path: compare the decimal value against float          */
/* midpoints with big integers and step to the right float.                                   */
/* ------------------------------------------------------------------------------------------ */

/* A float midpoint has at most 113 significant decimal digits (odd 25-bit integer times 2^-150
 * at worst), so keeping 120 digits plus a sticky non-zero digit decides every rounding exactly. */
#define NUM_MAX_DIGITS 120
#define BIG_LIMBS      56     /* 1792 bits; the largest operand needs under 800 */

typedef struct big {
    uint32_t w[BIG_LIMBS];    /* little-endian limbs */
    int n;                    /* limbs in use */
} big;

static void big_set_u32(big *b, uint32_t v)
{
    b->w[0] = v;
    b->n = v ? 1 : 0;
}

static void big_mul_add(big *b, uint32_t m, uint32_t add)
{
    uint64_t carry = add;
    for (int i = 0; i < b->n; ++i) {
        uint64_t t = (uint64_t)b->w[i] * m + carry;
        b->w[i] = (uint32_t)t;
        carry = t >> 32;
    }
    if (carry && b->n < BIG_LIMBS)
        b->w[b->n++] = (uint32_t)carry;
}

static void big_mul_pow10(big *b, int e)
{
    while (e >= 9) {
        big_mul_add(b, 1000000000u, 0);
        e -= 9;
    }
    static const uint32_t p10[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
                                    100000000};
    if (e > 0)
        big_mul_add(b, p10[e], 0);
}

static void big_shl(big *b, int bits)
{
    if (b->n == 0 || bits <= 0)
        return;
    int limbs = bits / 32, r = bits % 32;
    if (b->n + limbs + 1 > BIG_LIMBS)
        return;                    /* cannot happen within the clamped exponent range */
    b->w[b->n] = 0;
    int n = b->n + 1;
    for (int i = n - 1; i >= 0; --i) {
        uint32_t hi = b->w[i] << r;
        if (r && i > 0)
            hi |= b->w[i - 1] >> (32 - r);
        b->w[i + limbs] = hi;
    }
    for (int i = 0; i < limbs; ++i)
        b->w[i] = 0;
    b->n = n + limbs;
    while (b->n > 0 && b->w[b->n - 1] == 0)
        b->n--;
}

static int big_cmp(const big *a, const big *b)
{
    if (a->n != b->n)
        return a->n < b->n ? -1 : 1;
    for (int i = a->n - 1; i >= 0; --i)
        if (a->w[i] != b->w[i])
            return a->w[i] < b->w[i] ? -1 : 1;
    return 0;
}

typedef struct decimal {
    uint8_t digits[NUM_MAX_DIGITS + 1];  /* significant digits, first one non-zero */
    int     count;
    int     exp10;                        /* value = digits * 10^exp10 */
} decimal;

/* Sign of (decimal value) - (2m+1) * 2^(q-1), the midpoint above the float mantissa m * 2^q. */
static int cmp_midpoint(const decimal *d, uint32_t m, int q)
{
    big lhs, rhs;
    big_set_u32(&lhs, 0);
    for (int i = 0; i < d->count; ++i)
        big_mul_add(&lhs, 10, d->digits[i]);     /* 0 * 10 + digit seeds an empty number */
    big_set_u32(&rhs, 2u * m + 1u);
    int p = q - 1;
    if (d->exp10 >= 0)
        big_mul_pow10(&lhs, d->exp10);
    else
        big_mul_pow10(&rhs, -d->exp10);
    if (p >= 0)
        big_shl(&rhs, p);
    else
        big_shl(&lhs, -p);
    return big_cmp(&lhs, &rhs);
}

static void float_parts(uint32_t bits, uint32_t *m, int *q)
{
    uint32_t ef = bits >> 23, frac = bits & 0x7fffffu;
    if (ef == 0) {
        *m = frac;
        *q = -149;
    } else {
        *m = frac | 0x800000u;
        *q = (int)ef - 150;
    }
}

static float bits_to_float(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof(f));
    return f;
}

static uint32_t float_to_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof(b));
    return b;
}

/* Exact rounding of a positive decimal, starting from an estimate (at most a few floats away).
 * Returns false when the value rounds to infinity. */
static bool decimal_to_float_exact(const decimal *d, float estimate, float *out)
{
    uint32_t b = float_to_bits(estimate);
    if (b > 0x7f7fffffu)
        b = 0x7f7fffffu;
    for (int iter = 0; iter < 64; ++iter) {
        uint32_t m;
        int q;
        float_parts(b, &m, &q);
        int up = cmp_midpoint(d, m, q);             /* against the midpoint above b */
        if (up > 0 || (up == 0 && (b & 1u))) {
            if (b == 0x7f7fffffu)
                return false;                       /* at or past FLT_MAX + half an ulp */
            b++;
            continue;
        }
        if (b > 0) {
            float_parts(b - 1u, &m, &q);
            int down = cmp_midpoint(d, m, q);       /* against the midpoint below b */
            if (down < 0 || (down == 0 && (b & 1u))) {
                b--;
                continue;
            }
        }
        break;
    }
    *out = bits_to_float(b);
    return true;
}

static const double pow10_exact[23] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/* An estimate of w * 10^e (a few double ulps off at most; e within [-200, 60]). */
static double scale_pow10(double w, int e)
{
    while (e > 22) {
        w *= 1e22;
        e -= 22;
    }
    while (e < -22) {
        w /= 1e22;
        e += 22;
    }
    return e >= 0 ? w * pow10_exact[e] : w / pow10_exact[-e];
}

/* True when the double d lies exactly halfway between two adjacent floats. */
static bool is_float_midpoint(double d)
{
    float f = (float)d;
    if ((double)f == d)
        return false;
    uint32_t b = float_to_bits(f);
    /* the neighbour of f on d's side (d > 0 here) */
    uint32_t nb = (double)f < d ? b + 1u : b - 1u;
    if (nb >= 0x7f800000u)
        return d == (double)FLT_MAX + 0x1p103;      /* halfway to 2^128 */
    double mid = ((double)f + (double)bits_to_float(nb)) * 0.5;
    return d == mid;
}

/* The general path: any number of digits, any exponent. */
static kcc_num_result parse_float_full(const char *s, const char *end, float *out)
{
    const char *p = s;
    bool neg = false;
    if (p < end && (*p == '+' || *p == '-')) {
        neg = *p == '-';
        p++;
    }
    if (p < end && (*p == 'i' || *p == 'I' || *p == 'n' || *p == 'N')) {
        /* inf, infinity, nan, nan(...) */
        static const char *const words[] = {"inf", "infinity", "nan"};
        size_t len = (size_t)(end - p);
        for (int k = 0; k < 3; ++k) {
            size_t wl = strlen(words[k]);
            if (len < wl)
                continue;
            bool same = true;
            for (size_t i = 0; i < wl; ++i)
                if ((p[i] | 0x20) != words[k][i])
                    same = false;
            if (same && (len == wl || (k == 2 && p[3] == '(' && end[-1] == ')')))
                return KCC_NUM_NON_FINITE;
        }
        return KCC_NUM_SYNTAX;
    }

    decimal d;
    d.count = 0;
    int64_t dexp = 0;        /* decimal exponent of the kept digits (64-bit: inputs are huge) */
    uint64_t w = 0;          /* the first 19 significant digits */
    bool sticky = false;     /* a non-zero digit beyond NUM_MAX_DIGITS */
    int any_digit = 0;
    bool seen_point = false;
    for (; p < end; ++p) {
        char c = *p;
        if (c == '.') {
            if (seen_point)
                return KCC_NUM_SYNTAX;
            seen_point = true;
            continue;
        }
        if (c < '0' || c > '9')
            break;
        any_digit = 1;
        int v = c - '0';
        if (d.count == 0 && v == 0) {
            if (seen_point && dexp > -1000000000000000)
                dexp--;                  /* leading zero after the point */
            continue;
        }
        if (d.count < NUM_MAX_DIGITS) {
            d.digits[d.count++] = (uint8_t)v;
            if (d.count <= 19)
                w = w * 10u + (uint64_t)v;
            if (seen_point)
                dexp--;
        } else {
            if (v)
                sticky = true;
            if (!seen_point && dexp < 1000000000000000)
                dexp++;
        }
    }
    if (!any_digit)
        return KCC_NUM_SYNTAX;
    int64_t exp_part = 0;
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        bool eneg = false;
        if (p < end && (*p == '+' || *p == '-')) {
            eneg = *p == '-';
            p++;
        }
        if (p >= end || *p < '0' || *p > '9')
            return KCC_NUM_SYNTAX;
        for (; p < end && *p >= '0' && *p <= '9'; ++p)
            if (exp_part < 1000000000000000)
                exp_part = exp_part * 10 + (*p - '0');
        if (eneg)
            exp_part = -exp_part;
    }
    if (p != end)
        return KCC_NUM_SYNTAX;

    if (d.count == 0) {
        *out = neg ? -0.0f : 0.0f;
        return KCC_NUM_OK;
    }
    /* dexp and exp_part saturate near +-1e16 (beyond any input that fits in memory), so the
     * sum cannot overflow; then clamp far outside the float range */
    int64_t e = dexp + exp_part;
    if (e > 100000)
        e = 100000;
    if (e < -100000)
        e = -100000;
    int64_t order = d.count + e;                    /* value in [10^(order-1), 10^order) */
    if (order - 1 > 38)
        return KCC_NUM_RANGE;                       /* >= 1e39 > FLT_MAX */
    if (order < -46) {                              /* < 1e-46, below half the least subnormal */
        *out = neg ? -0.0f : 0.0f;
        return KCC_NUM_OK;
    }
    d.exp10 = (int)e;
    if (sticky) {                                   /* "slightly more than the kept digits" */
        d.digits[d.count++] = 1;
        d.exp10--;
    }

    float f;
    if (d.count <= 19 && w <= (1ull << 53) && d.exp10 >= -22 && d.exp10 <= 22) {
        double dv = d.exp10 >= 0 ? (double)w * pow10_exact[d.exp10]
                                 : (double)w / pow10_exact[-d.exp10];
        const double limit = (double)FLT_MAX + 0x1p103;   /* halfway from FLT_MAX to 2^128 */
        if (dv > limit)
            return KCC_NUM_RANGE;
        if (dv < limit && !is_float_midpoint(dv)) {
            f = (float)dv;
            *out = neg ? -f : f;
            return KCC_NUM_OK;
        }
    }
    int dropped = d.count > 19 ? d.count - 19 : 0;
    double est = scale_pow10((double)w, d.exp10 + dropped);
    float fe = est > (double)FLT_MAX ? FLT_MAX : (float)est;
    if (!decimal_to_float_exact(&d, fe, &f))
        return KCC_NUM_RANGE;
    *out = neg ? -f : f;
    return KCC_NUM_OK;
}

/* The common case in level files, decided in one pass: at most 19 significant digits and an
 * exponent that keeps w * 10^e on the exact-double fast path; everything else is re-read by
 * parse_float_full. */
kcc_num_result kcc_parse_float(const char *s, const char *end, float *out)
{
    const char *p = s;
    bool neg = false;
    if (p < end && (*p == '+' || *p == '-')) {
        neg = *p == '-';
        p++;
    }
    uint64_t w = 0;
    int nd = 0, e = 0;
    bool any = false, point = false;
    for (; p < end; ++p) {
        char c = *p;
        if (c >= '0' && c <= '9') {
            any = true;
            if (nd == 0 && c == '0') {
                e -= point ? 1 : 0;
                if (e < -300)
                    return parse_float_full(s, end, out);
                continue;
            }
            if (nd == 19)
                return parse_float_full(s, end, out);
            w = w * 10u + (uint64_t)(c - '0');
            nd++;
            e -= point ? 1 : 0;
        } else if (c == '.' && !point) {
            point = true;
        } else {
            break;
        }
    }
    if (!any || p != end || w > (1ull << 53))
        return parse_float_full(s, end, out);          /* exponent, syntax error, inf, nan ... */
    if (w == 0) {
        *out = neg ? -0.0f : 0.0f;
        return KCC_NUM_OK;
    }
    if (e < -22)
        return parse_float_full(s, end, out);
    double dv = (double)w / pow10_exact[-e];           /* e <= 0 here: no exponent part */
    if (is_float_midpoint(dv))
        return parse_float_full(s, end, out);
    float f = (float)dv;
    *out = neg ? -f : f;
    return KCC_NUM_OK;
}

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
        kcc_num_result r = kcc_parse_float(t, te, &v);
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

/* Parses a decimal integer with optional sign spanning [s, e); saturates at +-2^40. */
static bool parse_int(const char *s, const char *e, int64_t *out)
{
    bool neg = false;
    if (s < e && (*s == '+' || *s == '-')) {
        neg = *s == '-';
        s++;
    }
    if (s >= e)
        return false;
    int64_t v = 0;
    for (; s < e; ++s) {
        if (*s < '0' || *s > '9')
            return false;
        if (v < ((int64_t)1 << 40))
            v = v * 10 + (*s - '0');
    }
    *out = neg ? -v : v;
    return true;
}

typedef struct obj_state {
    kcc_level_builder b;
    uint64_t max_index;       /* largest positive (1-based) index seen */
    uint64_t max_index_line;  /* the first line that used it */
} obj_state;

/* One vertex reference of an f line: i, i/t, i//n or i/t/n. Resolves to a 0-based index or
 * checks later (positive indices may refer to vertices defined further down). */
static bool face_vertex(obj_state *st, const char *t, const char *te, uint64_t line,
                        uint32_t *out, parse_error *pe)
{
    /* the index: [-]digits, read in one pass up to the end of the token or a '/' */
    const char *q = t;
    bool neg = q < te && *q == '-';
    q += (q < te && (*q == '-' || *q == '+')) ? 1 : 0;
    int64_t idx = 0, other;
    const char *digits = q;
    for (; q < te && *q >= '0' && *q <= '9'; ++q)
        if (idx < ((int64_t)1 << 40))
            idx = idx * 10 + (*q - '0');
    idx = neg ? -idx : idx;
    const char *s1 = q < te && *q == '/' ? q : NULL;
    const char *ie = q;
    bool ok = q > digits && (q == te || s1);
    if (ok && s1) {
        const char *s2 = memchr(s1 + 1, '/', (size_t)(te - s1 - 1));
        if (s2)   /* i//n or i/t/n: t may be empty, n may not */
            ok = (s2 == s1 + 1 || parse_int(s1 + 1, s2, &other)) && parse_int(s2 + 1, te, &other);
        else
            ok = parse_int(s1 + 1, te, &other);
    }
    if (!ok) {
        char ex[32];
        excerpt(t, te, ex, sizeof(ex));
        return fail(pe, line, KCC_ERR_PARSE,
                    "bad face vertex '%s' (expected i, i/t, i//n or i/t/n)", ex);
    }
    uint32_t vc = st->b.level.vertex_count;
    if (idx == 0)
        return fail(pe, line, KCC_ERR_PARSE, "face index 0 is invalid (indices start at 1)");
    if (idx < 0 && -idx <= (int64_t)vc) {
        *out = (uint32_t)((int64_t)vc + idx);
        return true;
    }
    if (idx < 0 || idx > (int64_t)st->b.max_vertices) {
        char ex[32];
        excerpt(t, ie, ex, sizeof(ex));   /* the digits as written (idx saturates) */
        if (idx < 0)
            return fail(pe, line, KCC_ERR_PARSE,
                        "face index %s is out of range (%lu vertices so far)", ex,
                        (unsigned long)vc);
        return fail(pe, line, KCC_ERR_PARSE, "face index %s is out of range", ex);
    }
    if ((uint64_t)idx > st->max_index) {
        st->max_index = (uint64_t)idx;
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
    return true;
}

/* Calls fn on each line [s, e) with its 1-based number. Lines end at \n, \r\n or a lone \r. */
typedef bool (*line_fn)(void *ctx, const char *s, const char *e, uint64_t line, parse_error *pe);

static bool for_each_line(const char *text, size_t length, line_fn fn, void *ctx,
                          parse_error *pe)
{
    if (length == 0)
        return true;                    /* text may be NULL then: not even NULL + 0 */
    const char *p = text, *end = text + length;
    uint64_t line = 1;
    const char *nl = p;                 /* the next \n at or after p (end: none), kept across */
    bool nl_known = false;              /* lines so that \r-only files stay linear */
    const bool has_cr = length > 0 && memchr(text, '\r', length) != NULL;
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
        if (!fn(ctx, p, e, line, pe))
            return false;
        p = e + 1;
        line++;
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
    return true;                                   /* vn, vt, o, g, s, usemtl, mtllib, ... */
}

static bool parse_obj_text(const char *text, size_t length, uint32_t max_vertices,
                           uint32_t max_triangles, kcc_level *out, parse_error *pe)
{
    obj_state st;
    memset(&st, 0, sizeof(st));
    kcc_lb_init(&st.b);
    st.b.max_vertices = max_vertices;
    st.b.max_triangles = max_triangles;
    if (!for_each_line(text, length, obj_line, &st, pe)) {
        kcc_lb_discard(&st.b);
        return false;
    }
    if (st.max_index > st.b.level.vertex_count) {
        fail(pe, st.max_index_line, KCC_ERR_PARSE,
             "face index %llu is out of range (the file has %lu vertices)",
             (unsigned long long)st.max_index, (unsigned long)st.b.level.vertex_count);
        kcc_lb_discard(&st.b);
        return false;
    }
    kcc_status s = kcc_lb_finish(&st.b, out);
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
    if (max_vertices > KCC_LEVEL_MAX_VERTICES)
        max_vertices = KCC_LEVEL_MAX_VERTICES;
    if (max_triangles > KCC_LEVEL_MAX_TRIANGLES)
        max_triangles = KCC_LEVEL_MAX_TRIANGLES;
    parse_error pe;
    memset(&pe, 0, sizeof(pe));
    if (!parse_obj_text(text, length, max_vertices, max_triangles, out, &pe)) {
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

/* Reads a whole file. 1 on success, 0 when it cannot be opened, -1 on a read error or OOM. */
static int read_file(const char *path, char **out, size_t *out_len, kcc_status *st)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t cap = 1u << 16, len = 0;
    char *buf = malloc(cap);
    if (!buf) {
        fclose(f);
        *st = KCC_ERR_OUT_OF_MEMORY;
        return -1;
    }
    for (;;) {
        if (len == cap) {
            if (cap > SIZE_MAX / 2) {
                free(buf);
                fclose(f);
                *st = KCC_ERR_TOO_LARGE;
                return -1;
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                fclose(f);
                *st = KCC_ERR_OUT_OF_MEMORY;
                return -1;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    bool bad = ferror(f) != 0;
    fclose(f);
    if (bad) {
        free(buf);
        *st = KCC_ERR_IO;
        return -1;
    }
    *out = buf;
    *out_len = len;
    return 1;
}

typedef struct spawn_state {
    kcc_level_builder b;
} spawn_state;

static bool spawn_line(void *ctx, const char *s, const char *e, uint64_t line, parse_error *pe)
{
    spawn_state *st = ctx;
    const char *t, *te, *p = s;
    if (!next_token(&p, e, &t, &te))
        return true;                                /* blank or comment */
    float v[3];
    if (!parse_numbers(s, e, v, 3, 3, "3", line, pe))
        return false;
    kcc_lb_spawn(&st->b, v[0], v[1], v[2]);
    if (st->b.status != KCC_OK)
        return fail(pe, line, st->b.status, "out of memory");
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

kcc_status kcc_level_load_obj(const char *path, kcc_level *out, char *err, size_t err_size)
{
    if (!path || !out) {
        set_err(err, err_size, "NULL argument");
        return KCC_ERR_NULL_ARGUMENT;
    }
    char *text = NULL;
    size_t len = 0;
    kcc_status st = KCC_OK;
    parse_error pe;
    memset(&pe, 0, sizeof(pe));
    int r = read_file(path, &text, &len, &st);
    if (r <= 0) {
        pe.status = r == 0 ? KCC_ERR_IO : st;
        snprintf(pe.msg, sizeof(pe.msg), "%s",
                 r == 0 ? "cannot open" : st == KCC_ERR_IO ? "read error" : kcc_status_str(st));
        report(&pe, path, err, err_size);
        return pe.status;
    }
    kcc_level level;
    bool ok = parse_obj_text(text, len, KCC_LEVEL_MAX_VERTICES, KCC_LEVEL_MAX_TRIANGLES, &level,
                             &pe);
    free(text);
    if (!ok) {
        report(&pe, path, err, err_size);
        return pe.status;
    }

    char *sp = spawns_path(path);
    if (!sp) {
        kcc_level_free(&level);
        set_err(err, err_size, "out of memory");
        return KCC_ERR_OUT_OF_MEMORY;
    }
    r = read_file(sp, &text, &len, &st);
    if (r < 0) {
        pe.status = st;
        pe.line = 0;
        snprintf(pe.msg, sizeof(pe.msg), "%s",
                 st == KCC_ERR_IO ? "read error" : kcc_status_str(st));
        report(&pe, sp, err, err_size);
        free(sp);
        kcc_level_free(&level);
        return st;
    }
    if (r > 0) {
        spawn_state ss;
        kcc_lb_init(&ss.b);
        ok = for_each_line(text, len, spawn_line, &ss, &pe);
        free(text);
        if (!ok) {
            report(&pe, sp, err, err_size);
            free(sp);
            kcc_lb_discard(&ss.b);
            kcc_level_free(&level);
            return pe.status;
        }
        kcc_level sl;
        kcc_status fs = kcc_lb_finish(&ss.b, &sl);
        if (fs != KCC_OK) {
            free(sp);
            kcc_level_free(&level);
            set_err(err, err_size, "out of memory");
            return fs;
        }
        level.spawns = sl.spawns;
        level.spawn_count = sl.spawn_count;
    }
    free(sp);
    *out = level;
    return KCC_OK;
}
