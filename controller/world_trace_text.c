/* world_trace_text.c: the world recorder's number writer (docs/traces.md, "Cost"): floats in plain
 * decimal with as few digits as read back to the same bits, and whole numbers, written straight
 * into the recorder's block (no stdio, no allocation, no strlen). */
#include <math.h>
#include <string.h>

#include "world_trace_internal.h"

/// 10^i, exact in double, i = 0..15.
static const double powers_of_ten[16] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
                                         1e11, 1e12, 1e13, 1e14, 1e15};
/// 10^(i - 7), i = 0..15 (the doubles nearest: only compared with).
static const double decades[16] = {1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1e0,
                                   1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8};

/// The two decimal digits of 0..99, tens first: "00" "01" ... "99".
static const char pair_digits[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

char *kcc_wt_put_uint(char *at, uint32_t v)
{
    char digits[10];
    int n = 0;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n > 0)
        *at++ = digits[--n];
    return at;
}

/// The decimal exponent of a's first digit: the largest k in [-7, 8] with a >= decades[k + 7]
/// (-7 when none), from an estimate of the binary exponent's (within one) corrected by the table.
static int decimal_exponent(double a, uint32_t bits)
{
    int k = (int)((bits >> 23 & 0xff) * 1233u >> 12) - 38;   // ~ (e - 127) log10(2)
    k = k < -7 ? -7 : k > 8 ? 8 : k;
    while (k < 8 && a >= decades[k + 8])
        ++k;
    while (k > -7 && a < decades[k + 7])
        --k;
    return k;
}

/// Writes q's decimal digits (q >= 1), two at a time, so that the last ends just before `end`;
/// returns where the first begins.
static char *digits_before(char *end, uint32_t q)
{
    for (; q >= 100; q /= 100) {
        end -= 2;
        memcpy(end, pair_digits + 2 * (q % 100), 2);
    }
    if (q >= 10) {
        end -= 2;
        memcpy(end, pair_digits + 2 * q, 2);
    } else
        *--end = (char)('0' + q);
    return end;
}

/// Writes a positive number in plain decimal ("1200", "12.5", "0.0035") from its significant
/// digits (`count` of them, no trailing zero; 10 bytes readable) with `point` digits before the
/// decimal point (<= 0: none). Copies 10 bytes at a time: `at` has 32 bytes of room.
static char *put_plain(char *at, const char *digits, int count, int point)
{
    if (point <= 0) {
        memcpy(at, "0.00000000", 10);   // at most 7 zeros: the first digit is of 1e-7 or more
        at += 2 - point;
        memcpy(at, digits, 10);
        return at + count;
    }
    memcpy(at, digits, 10);
    if (point >= count) {   // an integer: its digits, then its zeros
        memcpy(at + count, "0000000000", 10);
        return at + point;
    }
    at[point] = '.';
    memcpy(at + point + 1, digits + point, 10);
    return at + count + 1;
}

/* The digits: v scaled to 9 significant digits in double (one rounding, at most 1.1e-7 of a unit:
 * 9 digits always read back), then rounded to fewer digits, one at a time, while the rounded value
 * stays strictly within the half ulp less a margin of 1e-3 units of the scaled v (far above the
 * double's error: a borderline case keeps a digit), so that a correctly rounding reader
 * (kcc_text_to_float) gets v's bits back. Each rounding is of the value the previous one left, half
 * up, in whole numbers: q units of 10^dropped. Plain double and integer arithmetic: the same text
 * on every build. */
char *kcc_wt_put_float(char *at, float v)
{
    const double a = fabs((double)v);
    if (!(a >= 1e-7 && a < 1e9))
        return NULL;
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    const int k = decimal_exponent(a, bits);
    const double scaled = a * powers_of_ten[8 - k];   // in [1e8, 1e9]: one rounding
    const uint64_t ulp_bits = (uint64_t)((bits >> 23 & 0xff) - 150 + 1023) << 52;   // 2^(e - 150)
    double ulp;
    memcpy(&ulp, &ulp_bits, sizeof ulp);
    ulp *= powers_of_ten[8 - k];
    const double half = ((bits & 0x7fffff) == 0 ? 0.25 : 0.5) * ulp - 1e-3;
    uint32_t q = (uint32_t)(scaled + 0.5);
    int dropped = 0;
    for (; dropped < 8; ++dropped) {
        const uint32_t rounded = q / 10 + (q % 10 >= 5);
        if (!(fabs((double)rounded * powers_of_ten[dropped + 1] - scaled) < half))
            break;
        q = rounded;
    }
    for (; q % 10 == 0; q /= 10)
        ++dropped;
    char text[24];
    memset(text + 10, '0', 10);
    const char *first = digits_before(text + 10, q);
    const int count = (int)(text + 10 - first);
    if (v < 0.0f)
        *at++ = '-';
    return put_plain(at, first, count, count + dropped + k - 8);
}
