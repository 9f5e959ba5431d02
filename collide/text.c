/* text.c: the number readers behind text_internal.h, shared by the OBJ, spawn and trace readers:
 * text to float correctly rounded (decimal always, C hex and inf/nan on request) and decimal
 * integers within a range. Locale-independent; no allocation, no global state. */
#include "text_internal.h"

#include <float.h>
#include <math.h>
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

/* Reads an optional sign at *p and steps over it; true for '-'. */
static bool read_sign(const char **p, const char *end)
{
    bool neg = false;
    if (*p < end && (**p == '+' || **p == '-')) {
        neg = **p == '-';
        (*p)++;
    }
    return neg;
}

/* "(chars)" after nan, chars letters, digits and '_' (what C's strtof accepts). */
static bool is_nan_payload(const char *p, const char *end)
{
    if (end - p < 2 || p[0] != '(' || end[-1] != ')')
        return false;
    for (const char *c = p + 1; c < end - 1; ++c) {
        unsigned char u = (unsigned char)*c;
        bool alnum = (u >= '0' && u <= '9') || ((u | 0x20) >= 'a' && (u | 0x20) <= 'z');
        if (!alnum && u != '_')
            return false;
    }
    return true;
}

/* inf, infinity, nan or nan(chars) in any case spanning [p, end) (the sign already read). */
static kcc_num_result read_special(const char *p, const char *end, bool neg, uint32_t options,
                                   float *out)
{
    static const char *const words[] = {"inf", "infinity", "nan"};
    size_t len = (size_t)(end - p);
    for (int k = 0; k < 3; ++k) {
        size_t word_len = strlen(words[k]);
        if (len < word_len)
            continue;
        bool same = true;
        for (size_t i = 0; i < word_len; ++i)
            if ((p[i] | 0x20) != words[k][i])
                same = false;
        if (!same || (len != word_len && !(k == 2 && is_nan_payload(p + 3, end))))
            continue;
        if (!(options & KCC_NUM_NAN_INF))
            return KCC_NUM_NON_FINITE;
        float v = k == 2 ? NAN : INFINITY;
        *out = neg ? -v : v;
        return KCC_NUM_OK;
    }
    return KCC_NUM_SYNTAX;
}

/* The digits of a decimal mantissa as read: the first NUM_MAX_DIGITS significant ones, the
 * first 19 of them as an integer, and the decimal exponent of the last one kept. */
typedef struct mantissa {
    decimal  d;
    uint64_t first19;     /* the first 19 significant digits */
    int64_t  exp10;       /* saturates near +-1e15: beyond any input that fits in memory */
    bool     sticky;      /* a non-zero digit beyond NUM_MAX_DIGITS */
} mantissa;

/* Reads digits[.digits] at *p into m; KCC_NUM_SYNTAX when there is no digit or two points. */
static kcc_num_result read_mantissa(const char **pp, const char *end, mantissa *m)
{
    const char *p = *pp;
    m->d.count = 0;
    m->first19 = 0;
    m->exp10 = 0;
    m->sticky = false;
    bool any_digit = false, seen_point = false;
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
        any_digit = true;
        int v = c - '0';
        if (m->d.count == 0 && v == 0) {
            if (seen_point && m->exp10 > -1000000000000000)
                m->exp10--;                  /* leading zero after the point */
            continue;
        }
        if (m->d.count < NUM_MAX_DIGITS) {
            m->d.digits[m->d.count++] = (uint8_t)v;
            if (m->d.count <= 19)
                m->first19 = m->first19 * 10u + (uint64_t)v;
            if (seen_point)
                m->exp10--;
        } else {
            m->sticky |= v != 0;
            if (!seen_point && m->exp10 < 1000000000000000)
                m->exp10++;
        }
    }
    *pp = p;
    return any_digit ? KCC_NUM_OK : KCC_NUM_SYNTAX;
}

/* Reads [(e|E)[+-]digits] at *p (saturating near +-1e15); KCC_NUM_SYNTAX for an 'e' without
 * digits. `marker` is 'e' for decimals and 'p' for hex floats. */
static kcc_num_result read_exponent(const char **pp, const char *end, char marker, int64_t *out)
{
    const char *p = *pp;
    *out = 0;
    if (p >= end || (*p | 0x20) != marker)
        return KCC_NUM_OK;
    p++;
    bool neg = read_sign(&p, end);
    if (p >= end || *p < '0' || *p > '9')
        return KCC_NUM_SYNTAX;
    int64_t e = 0;
    for (; p < end && *p >= '0' && *p <= '9'; ++p)
        if (e < 1000000000000000)
            e = e * 10 + (*p - '0');
    *out = neg ? -e : e;
    *pp = p;
    return KCC_NUM_OK;
}

/* Rounds m * 10^exp_part to the nearest float. */
static kcc_num_result round_mantissa(mantissa *m, int64_t exp_part, bool neg, float *out)
{
    decimal *d = &m->d;
    if (d->count == 0) {
        *out = neg ? -0.0f : 0.0f;
        return KCC_NUM_OK;
    }
    /* both terms saturate near +-1e15, so the sum cannot overflow; then clamp far outside the
     * float range */
    int64_t e = m->exp10 + exp_part;
    e = e > 100000 ? 100000 : e < -100000 ? -100000 : e;
    int64_t order = d->count + e;                   /* value in [10^(order-1), 10^order) */
    if (order - 1 > 38)
        return KCC_NUM_RANGE;                       /* >= 1e39 > FLT_MAX */
    if (order < -46) {                              /* < 1e-46, below half the least subnormal */
        *out = neg ? -0.0f : 0.0f;
        return KCC_NUM_OK;
    }
    d->exp10 = (int)e;
    if (m->sticky) {                                /* "slightly more than the kept digits" */
        d->digits[d->count++] = 1;
        d->exp10--;
    }
    float f;
    uint64_t w = m->first19;
    if (d->count <= 19 && w <= (1ull << 53) && d->exp10 >= -22 && d->exp10 <= 22) {
        double dv = d->exp10 >= 0 ? (double)w * pow10_exact[d->exp10]
                                  : (double)w / pow10_exact[-d->exp10];
        const double limit = (double)FLT_MAX + 0x1p103;   /* halfway from FLT_MAX to 2^128 */
        if (dv > limit)
            return KCC_NUM_RANGE;
        if (dv < limit && !is_float_midpoint(dv)) {
            f = (float)dv;
            *out = neg ? -f : f;
            return KCC_NUM_OK;
        }
    }
    int dropped = d->count > 19 ? d->count - 19 : 0;
    double est = scale_pow10((double)w, d->exp10 + dropped);
    float estimate = est > (double)FLT_MAX ? FLT_MAX : (float)est;
    if (!decimal_to_float_exact(d, estimate, &f))
        return KCC_NUM_RANGE;
    *out = neg ? -f : f;
    return KCC_NUM_OK;
}

/* The general decimal path at [p, end) (the sign already read): any number of digits, any
 * exponent. */
static kcc_num_result parse_decimal(const char *p, const char *end, bool neg, float *out)
{
    mantissa m;
    kcc_num_result r = read_mantissa(&p, end, &m);
    int64_t exp_part = 0;
    if (r == KCC_NUM_OK)
        r = read_exponent(&p, end, 'e', &exp_part);
    if (r != KCC_NUM_OK)
        return r;
    if (p != end)
        return KCC_NUM_SYNTAX;
    return round_mantissa(&m, exp_part, neg, out);
}

/* The common case in level files, decided in one pass: at most 19 significant digits, no
 * exponent part, and a value on the exact-double fast path. False when parse_decimal must
 * decide (exponent, more digits, syntax errors, midpoints). */
static bool parse_plain(const char *p, const char *end, bool neg, float *out)
{
    uint64_t w = 0;
    int digits = 0, e = 0;
    bool any = false, point = false;
    for (; p < end; ++p) {
        char c = *p;
        if (c >= '0' && c <= '9') {
            any = true;
            if (digits == 0 && c == '0') {
                e -= point ? 1 : 0;
                if (e < -300)
                    return false;
                continue;
            }
            if (digits == 19)
                return false;
            w = w * 10u + (uint64_t)(c - '0');
            digits++;
            e -= point ? 1 : 0;
        } else if (c == '.' && !point) {
            point = true;
        } else {
            return false;
        }
    }
    if (!any || w > (1ull << 53))
        return false;
    if (w == 0) {
        *out = neg ? -0.0f : 0.0f;
        return true;
    }
    if (e < -22)
        return false;
    double dv = (double)w / pow10_exact[-e];           /* e <= 0 here: no exponent part */
    if (is_float_midpoint(dv))
        return false;
    float f = (float)dv;
    *out = neg ? -f : f;
    return true;
}

/* ------------------------------------------------------------------------------------------ */
/* Hex floats: the value is a binary mantissa, so rounding needs only its bits and a sticky   */
/* bit for the digits beyond 64 bits.                                                          */
/* ------------------------------------------------------------------------------------------ */

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
        return (c | 0x20) - 'a' + 10;
    return -1;
}

/* Rounds (bits * 2^exp2, plus a little more when sticky) to the nearest float, ties to even;
 * bits != 0. False when it rounds to infinity. */
static bool round_binary(uint64_t bits, int64_t exp2, bool sticky, float *out)
{
    while (!(bits >> 63)) {                         /* normalise: the top bit set */
        bits <<= 1;
        exp2--;
    }
    int64_t e = exp2 + 63;                          /* value = 1.xxx * 2^e */
    if (e > 127)
        return false;
    int64_t keep = e >= -126 ? 24 : 24 - (-126 - e);  /* mantissa bits a float holds there */
    if (keep < 0) {
        *out = 0.0f;                                /* below half the least subnormal */
        return true;
    }
    int shift = 64 - (int)keep;                     /* 40..64 */
    uint64_t m = shift == 64 ? 0 : bits >> shift;
    uint64_t rest = shift == 64 ? bits : bits & ((1ull << shift) - 1u);
    uint64_t half = 1ull << (shift - 1);
    if (rest > half || (rest == half && (sticky || (m & 1u))))
        m++;
    /* a carry out of the mantissa lands in the exponent field, as it should */
    uint64_t out_bits = e >= -126 ? ((uint64_t)(e + 127) << 23) + (m - 0x800000u) : m;
    if (out_bits >= 0x7f800000u)
        return false;
    *out = bits_to_float((uint32_t)out_bits);
    return true;
}

/* A C hex float after its "0x": hexdigits[.hexdigits][(p|P)[+-]digits]. */
static kcc_num_result parse_hex(const char *p, const char *end, bool neg, float *out)
{
    uint64_t bits = 0;
    int64_t exp2 = 0;
    bool sticky = false, any = false, point = false;
    for (; p < end; ++p) {
        if (*p == '.' && !point) {
            point = true;
            continue;
        }
        int v = hex_digit(*p);
        if (v < 0)
            break;
        any = true;
        if (bits >> 60) {                           /* no room for four more bits */
            sticky |= v != 0;
            exp2 += point ? 0 : 4;
        } else {
            bits = bits * 16u + (uint64_t)v;
            exp2 -= point ? 4 : 0;
        }
    }
    int64_t exp_part = 0;
    if (!any || read_exponent(&p, end, 'p', &exp_part) != KCC_NUM_OK || p != end)
        return KCC_NUM_SYNTAX;
    float f = 0.0f;
    exp2 += exp_part;
    if (bits && !round_binary(bits, exp2 < -100000 ? -100000 : exp2 > 100000 ? 100000 : exp2,
                              sticky, &f))
        return KCC_NUM_RANGE;
    *out = neg ? -f : f;
    return KCC_NUM_OK;
}

kcc_num_result kcc_text_to_float(const char *s, const char *end, uint32_t options, float *out)
{
    const char *p = s;
    bool neg = read_sign(&p, end);
    if (p < end && ((*p | 0x20) == 'i' || (*p | 0x20) == 'n'))
        return read_special(p, end, neg, options, out);
    if ((options & KCC_NUM_HEX) && end - p > 2 && p[0] == '0' && (p[1] | 0x20) == 'x')
        return parse_hex(p + 2, end, neg, out);
    if (parse_plain(p, end, neg, out))
        return KCC_NUM_OK;
    return parse_decimal(p, end, neg, out);
}

kcc_num_result kcc_text_to_int(const char *s, const char *end, int64_t min, int64_t max,
                               int64_t *out)
{
    const char *p = s;
    bool neg = read_sign(&p, end);
    if (p >= end)
        return KCC_NUM_SYNTAX;
    uint64_t v = 0;
    bool huge = false;
    for (; p < end; ++p) {
        if (*p < '0' || *p > '9')
            return KCC_NUM_SYNTAX;
        if (v <= (UINT64_MAX - 9u) / 10u)
            v = v * 10u + (uint64_t)(*p - '0');
        else
            huge = true;
    }
    if (huge || v > (uint64_t)INT64_MAX)
        return KCC_NUM_RANGE;                       /* (INT64_MIN itself is never a bound here) */
    int64_t x = neg ? -(int64_t)v : (int64_t)v;
    if (x < min || x > max)
        return KCC_NUM_RANGE;
    *out = x;
    return KCC_NUM_OK;
}
