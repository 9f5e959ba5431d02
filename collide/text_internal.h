/* text_internal.h: the number readers shared by the OBJ and spawn readers (collide/obj.c) and the
 * trace reader (controller/trace.c): exact, locale-independent text to float and range-checked
 * decimal integers. Never installed; not part of the public API. */
#ifndef KCC_TEXT_INTERNAL_H
#define KCC_TEXT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum kcc_num_result {
    KCC_NUM_OK = 0,
    KCC_NUM_SYNTAX,      ///< not a number of the accepted forms
    KCC_NUM_NON_FINITE,  ///< inf / nan spelled out, and KCC_NUM_NAN_INF not given
    KCC_NUM_RANGE,       ///< magnitude beyond the range (a float past FLT_MAX rounds to infinity)
} kcc_num_result;

/// Options of kcc_text_to_float.
enum {
    KCC_NUM_HEX     = 1u,   ///< also read C hex floats: [+-]0x hexdigits[.hexdigits][p[+-]digits]
    KCC_NUM_NAN_INF = 2u,   ///< read inf, infinity, nan, nan(chars) (any case, signed) as values
};

/// Parses one number spanning exactly [s, end): [+-]digits[.digits][(e|E)[+-]digits] (".5" and
/// "5." too), plus the forms `options` adds. Correctly rounded to float (round half to even)
/// whatever the locale, so any float printed with "%.9g" reads back bit-exactly; values below
/// half the smallest subnormal become a signed zero. Any length of mantissa or exponent is read
/// exactly. *out is written only on KCC_NUM_OK.
kcc_num_result kcc_text_to_float(const char *s, const char *end, uint32_t options, float *out);

/// Parses a decimal integer [+-]digits spanning exactly [s, end) within [min, max]; KCC_NUM_RANGE
/// outside (however many digits). *out is written only on KCC_NUM_OK.
kcc_num_result kcc_text_to_int(const char *s, const char *end, int64_t min, int64_t max,
                               int64_t *out);

#endif
