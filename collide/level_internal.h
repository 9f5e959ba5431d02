/* level_internal.h: shared by the level readers and generators (collide/obj.c, level_common.c,
 * levels.c, showcase.c) and their tests: the growable level builder and the number parser.
 * Never installed; not part of the public API. */
#ifndef KCC_LEVEL_INTERNAL_H
#define KCC_LEVEL_INTERNAL_H

#include "kcc_level.h"

/// Largest vertex / triangle count a level may hold: 3 * count must fit a uint32_t, so that
/// flat index arithmetic (3 * i + k) can never wrap in the mesh or in callers.
#define KCC_LEVEL_MAX_VERTICES  (UINT32_MAX / 3u)
#define KCC_LEVEL_MAX_TRIANGLES (UINT32_MAX / 3u)

/// A level under construction. Arrays grow geometrically; the first failure (out of memory or a
/// limit) is sticky in `status`: later calls do nothing, so generators check once at the end.
typedef struct kcc_level_builder {
    kcc_level  level;
    uint32_t   vertex_cap, triangle_cap, spawn_cap;
    uint32_t   max_vertices, max_triangles;   ///< limits (KCC_LEVEL_MAX_* by default)
    kcc_status status;                        ///< KCC_OK until something failed
} kcc_level_builder;

void     kcc_lb_init(kcc_level_builder *b);
/// Adds a vertex and returns its index (UINT32_MAX after a failure).
uint32_t kcc_lb_vertex(kcc_level_builder *b, float x, float y, float z);
void     kcc_lb_triangle(kcc_level_builder *b, uint32_t i0, uint32_t i1, uint32_t i2);
void     kcc_lb_spawn(kcc_level_builder *b, float x, float y, float z);
/// Trims the arrays and moves the level to out (status KCC_OK) or frees it (returns the error).
kcc_status kcc_lb_finish(kcc_level_builder *b, kcc_level *out);
void     kcc_lb_discard(kcc_level_builder *b);

/// Parses one decimal number spanning exactly [s, end): [+-]digits[.digits][(e|E)[+-]digits]
/// (".5" and "5." too). Correctly rounded to float (round half to even) whatever the locale, so
/// any float printed with "%.9g" reads back bit-exactly. Values below half the smallest
/// subnormal become a signed zero.
typedef enum kcc_num_result {
    KCC_NUM_OK = 0,
    KCC_NUM_SYNTAX,      ///< not a decimal number
    KCC_NUM_NON_FINITE,  ///< inf / nan spelled out
    KCC_NUM_RANGE,       ///< magnitude beyond FLT_MAX (would round to infinity)
} kcc_num_result;
kcc_num_result kcc_parse_float(const char *s, const char *end, float *out);

/// The OBJ parser with explicit vertex / triangle limits (tests use small ones to reach the
/// "too large" path). Same contract as kcc_level_parse_obj otherwise.
kcc_status kcc_level_parse_obj_limited(const char *text, size_t length, kcc_level *out,
                                       char *err, size_t err_size,
                                       uint32_t max_vertices, uint32_t max_triangles);

#endif
