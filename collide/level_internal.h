/* level_internal.h: shared by the level readers and generators (collide/obj.c, level_common.c,
 * levelgen.c, showcase.c) and their tests: the growable level builder and the generators' helpers;
 * the number readers come from text_internal.h.
 * Never installed; not part of the public API. */
#ifndef KCC_LEVEL_INTERNAL_H
#define KCC_LEVEL_INTERNAL_H

#include "kcc_level.h"
#include "text_internal.h"

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


/// The OBJ parser with explicit vertex / triangle limits (tests use small ones to reach the
/// "too large" path). Same contract as kcc_level_parse_obj otherwise.
kcc_status kcc_level_parse_obj_limited(const char *text, size_t length, kcc_level *out,
                                       char *err, size_t err_size,
                                       uint32_t max_vertices, uint32_t max_triangles);

/* Procedural level helpers (levelgen.c), shared by the generators. Coordinates are given in
 * level units before `scale`; every solid is a closed convex prism with outward, counter-
 * clockwise faces, and its bounds are remembered so spawn points can be kept clear of it. */
typedef struct kcc_gen {
    kcc_level_builder b;
    float    scale;                    ///< multiplies every coordinate written
    float   *solids;                   ///< 6 floats (min, max) per solid, unscaled
    uint32_t solid_count, solid_cap;
} kcc_gen;

void     kcc_gen_init(kcc_gen *g, float scale);
uint32_t kcc_gen_vertex(kcc_gen *g, float x, float y, float z);
/// Adds abc wound so its normal points away from centre (unscaled).
void     kcc_gen_tri_out(kcc_gen *g, uint32_t a, uint32_t b, uint32_t c, const float centre[3]);
/// A prism: the convex planar polygon base[0..n) (3 <= n <= 16) swept along e.
void     kcc_gen_prism(kcc_gen *g, const float (*base)[3], int n, const float e[3]);
void     kcc_gen_box(kcc_gen *g, float x0, float y0, float z0, float x1, float y1, float z1);
/// A wedge across [x0, x1] rising by h from (z0, y0) to z1.
void     kcc_gen_ramp(kcc_gen *g, float x0, float x1, float z0, float z1, float y0, float h);
/// Floor slabs (top y = 0, 0.5 thick) over a rectangle minus holes (x0 z0 x1 z1 each, <= 8).
void     kcc_gen_floor_with_holes(kcc_gen *g, float x0, float z0, float x1, float z1,
                                  const float (*holes)[4], int hole_count);
/// Four walls 1 m thick around [x0, x1] x [z0, z1] from y0 to y1, overlapping at the corners.
void     kcc_gen_walls(kcc_gen *g, float x0, float z0, float x1, float z1, float y0, float y1);
/// Adds a spawn point (feet) when a box of 0.9 x 2.0 x 0.9 m standing there clears every solid's
/// bounds; returns whether it did.
bool     kcc_gen_spawn(kcc_gen *g, float x, float y, float z);
kcc_status kcc_gen_finish(kcc_gen *g, kcc_level *out);

/// The "showcase" course (showcase.c); scale multiplies every coordinate.
kcc_status kcc_level_showcase(float scale, kcc_level *out);

#endif
