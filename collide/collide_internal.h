/* collide_internal.h: the private layout of kcc_mesh (32-byte tree nodes stored as sibling pairs,
 * triangles in leaf order) and the kernels shared by mesh.c, tree.c, ray.c and tri_box.c: the
 * per-triangle tests and the two-children node tests. Never installed. */
#ifndef KCC_COLLIDE_INTERNAL_H
#define KCC_COLLIDE_INTERNAL_H

#include <math.h>
#include <string.h>

#include "kcc_collide.h"

/// SSE2 node tests when the target has them (every x86-64); a scalar path with the same results
/// (same operations, same NaN rules) otherwise.
#if defined(__SSE2__) && !defined(KCC_NO_SIMD)
#define KCC_SSE 1
#include <emmintrin.h>
#else
#define KCC_SSE 0
#endif

/// Traversal stack size (entries). The builder guarantees depth <= KCC_TREE_MAX_DEPTH, and a
/// traversal never holds more than one pending entry per level, so the stack cannot overflow.
#define KCC_TREE_STACK      64
/// Deepest tree the builder produces (nodes on a root-to-leaf path, root = 1). Below
/// KCC_TREE_SAH_DEPTH the builder uses SAH; deeper it halves ranges (object median), which adds at
/// most 28 levels for 2^30 triangles, so depth stays <= KCC_TREE_SAH_DEPTH + 32 < KCC_TREE_STACK.
#define KCC_TREE_SAH_DEPTH  28
#define KCC_TREE_MAX_DEPTH  (KCC_TREE_SAH_DEPTH + 32)
/// Most triangles one leaf holds.
#define KCC_LEAF_MAX        8
/// Ranges this small are never split.
#define KCC_LEAF_MIN        4
/// Largest triangle count accepted (node ids are 32-bit, 2n nodes).
#define KCC_MESH_MAX_TRIANGLES (1u << 30)

/// Two sibling tree nodes, 32 bytes each, stored together structure-of-arrays so one SSE pass tests
/// both: lane c of every field is node 2 * pair + c. Node 0 is the root; node 1 an empty dummy
/// (lo = +inf, hi = -inf) that no test ever hits. A node is a leaf when count > 0 (triangles
/// first .. first + count - 1 in leaf order); an inner node's children are the pair `first`.
typedef struct kcc_node_pair {
    float    x[2][2];     ///< x[0] = lo.x of both nodes, x[1] = hi.x (m)
    float    y[2][2];
    float    z[2][2];
    uint32_t first[2];
    uint32_t count[2];
} kcc_node_pair;
_Static_assert(sizeof(kcc_node_pair) == 64, "a tree node is 32 bytes (a sibling pair 64)");

/// Triangle corners in leaf order: a, b, c as wound in the input.
typedef struct kcc_tri {
    float v[3][3];    ///< m
} kcc_tri;
_Static_assert(sizeof(kcc_tri) == 36, "triangle record must be 36 bytes");

struct kcc_mesh {
    kcc_allocator   allocator;     ///< the one used to build (resolved: never NULL functions)
    size_t          block_bytes;   ///< bytes of the single allocation holding everything
    kcc_node_pair  *pairs;         ///< pair_count pairs; empty when the mesh has no live triangle
    kcc_tri        *tris;          ///< triangle_count triangles: the tree's first, degenerate last
    uint32_t       *tri_id;        ///< leaf order -> input index (triangle_count entries)
    uint32_t       *tri_slot;      ///< input index -> leaf order (triangle_count entries)
    uint32_t        triangle_count;
    uint32_t        tree_triangles;///< non-degenerate triangles (the ones the tree holds)
    uint32_t        pair_count;
    uint32_t        node_count;    ///< real nodes (2 * pair_count - 1: the dummy is not counted)
    uint32_t        leaf_count;
    uint32_t        depth;
    float           bounds[2][3];  ///< of the tree's triangles; all zero when there are none
    float           coord_scale;   ///< largest |coordinate| of any tree triangle (m)
};

/// Node accessors (tests and tools).
static inline float kcc_node_lo(const kcc_mesh *m, uint32_t node, int axis)
{
    const kcc_node_pair *p = &m->pairs[node >> 1];
    const float (*b)[2] = axis == 0 ? p->x : axis == 1 ? p->y : p->z;
    return b[0][node & 1];
}
static inline float kcc_node_hi(const kcc_mesh *m, uint32_t node, int axis)
{
    const kcc_node_pair *p = &m->pairs[node >> 1];
    const float (*b)[2] = axis == 0 ? p->x : axis == 1 ? p->y : p->z;
    return b[1][node & 1];
}

/* ------------------------------------------------------------------------------------------------
 * Two-children slab test, shared by ray casts (grow = 0) and box sweeps (nodes grown by the box's
 * half extents plus a margin). Each node's box is entered at tn = max over axes of the near-plane
 * distance and left at tf = min of the far-plane distances. Zero direction components give
 * inv = +-inf; a segment start exactly on such a slab's plane gives 0 * inf = NaN, which the
 * max(x, 0) / min(x, tmax) operand order drops (that axis constrains nothing), and a start off the
 * plane gives +-inf, which culls or passes exactly as the infinite line would. The far distance is
 * grown by 1 + 2 gamma(3) and the near one shrunk alike (Ize 2013), so rounding never culls a node
 * whose triangle the exact test would hit. */

#define KCC_SLAB_GROW   1.0000004f
#define KCC_SLAB_SHRINK 0.9999996f

typedef struct kcc_pray {
    float    org_n[3];     ///< start, shifted so near plane - org_n = grown near plane - start
    float    org_f[3];     ///< same for the far plane
    float    inv[3];       ///< 1 / dir
    uint32_t off_n[3];     ///< byte offset of the near-plane pair field per axis (lo or hi)
    uint32_t off_f[3];
#if KCC_SSE
    __m128   v_org_n_xy, v_org_n_z, v_org_f_xy, v_org_f_z, v_inv_xy, v_inv_z;
#endif
} kcc_pray;

/// Sets up the pair test for the segment org + t dir; grow >= 0 widens every node by grow[k].
static inline void kcc_pray_setup(kcc_pray *r, const float org[3], const float dir[3],
                                  const float grow[3])
{
    for (int k = 0; k < 3; ++k) {
        r->inv[k] = 1.0f / dir[k];
        bool neg = signbit(r->inv[k]) != 0;
        /* Near plane lo - grow (or hi + grow when moving toward -k): plane - (org +- grow). */
        r->org_n[k] = neg ? org[k] - grow[k] : org[k] + grow[k];
        r->org_f[k] = neg ? org[k] + grow[k] : org[k] - grow[k];
        uint32_t lo = (uint32_t)(offsetof(kcc_node_pair, x) + (size_t)k * 16);
        r->off_n[k] = neg ? lo + 8 : lo;
        r->off_f[k] = neg ? lo : lo + 8;
    }
#if KCC_SSE
    r->v_org_n_xy = _mm_set_ps(r->org_n[1], r->org_n[1], r->org_n[0], r->org_n[0]);
    r->v_org_n_z = _mm_set_ps(0.0f, 0.0f, r->org_n[2], r->org_n[2]);
    r->v_org_f_xy = _mm_set_ps(r->org_f[1], r->org_f[1], r->org_f[0], r->org_f[0]);
    r->v_org_f_z = _mm_set_ps(0.0f, 0.0f, r->org_f[2], r->org_f[2]);
    r->v_inv_xy = _mm_set_ps(r->inv[1], r->inv[1], r->inv[0], r->inv[0]);
    r->v_inv_z = _mm_set_ps(0.0f, 0.0f, r->inv[2], r->inv[2]);
#endif
}

#if KCC_SSE
static inline __m128 kcc_load2(const kcc_node_pair *p, uint32_t off)
{
    return _mm_castpd_ps(_mm_load_sd((const double *)(const void *)((const char *)p + off)));
}
static inline __m128 kcc_load22(const kcc_node_pair *p, uint32_t off_lo, uint32_t off_hi)
{
    return _mm_movelh_ps(kcc_load2(p, off_lo), kcc_load2(p, off_hi));
}
#endif

/// Tests both nodes of a pair against the segment [0, tmax]; bit c of the result is set when node
/// c is entered, and out_t[c] is its (shrunk) entry distance.
static inline int kcc_pray_test(const kcc_pray *r, const kcc_node_pair *p, float tmax,
                                float out_t[2])
{
#if KCC_SSE
    __m128 n_xy = kcc_load22(p, r->off_n[0], r->off_n[1]);
    __m128 n_z = kcc_load2(p, r->off_n[2]);
    __m128 f_xy = kcc_load22(p, r->off_f[0], r->off_f[1]);
    __m128 f_z = kcc_load2(p, r->off_f[2]);
    const __m128 grow = _mm_set1_ps(KCC_SLAB_GROW), zero = _mm_setzero_ps(), vt = _mm_set1_ps(tmax);
    __m128 a1 = _mm_max_ps(_mm_mul_ps(_mm_sub_ps(n_xy, r->v_org_n_xy), r->v_inv_xy), zero);
    __m128 a2 = _mm_max_ps(_mm_mul_ps(_mm_sub_ps(n_z, r->v_org_n_z), r->v_inv_z), zero);
    __m128 b1 = _mm_min_ps(_mm_mul_ps(_mm_mul_ps(_mm_sub_ps(f_xy, r->v_org_f_xy), r->v_inv_xy), grow), vt);
    __m128 b2 = _mm_min_ps(_mm_mul_ps(_mm_mul_ps(_mm_sub_ps(f_z, r->v_org_f_z), r->v_inv_z), grow), vt);
    __m128 tn = _mm_max_ps(_mm_max_ps(a1, _mm_movehl_ps(a1, a1)), a2);
    __m128 tf = _mm_min_ps(_mm_min_ps(b1, _mm_movehl_ps(b1, b1)), b2);
    tn = _mm_mul_ps(tn, _mm_set1_ps(KCC_SLAB_SHRINK));
    _mm_storel_pi((__m64 *)(void *)out_t, tn);
    return _mm_movemask_ps(_mm_cmple_ps(tn, tf)) & 3;
#else
    int mask = 0;
    for (int c = 0; c < 2; ++c) {
        float tn = 0.0f, tf = tmax;
        for (int k = 0; k < 3; ++k) {
            float pn = *(const float *)(const void *)((const char *)p + r->off_n[k] + 4u * (uint32_t)c);
            float pf = *(const float *)(const void *)((const char *)p + r->off_f[k] + 4u * (uint32_t)c);
            float a = (pn - r->org_n[k]) * r->inv[k];
            float b = (pf - r->org_f[k]) * r->inv[k] * KCC_SLAB_GROW;
            tn = a > tn ? a : tn;   /* a NaN a keeps tn */
            tf = b < tf ? b : tf;   /* a NaN b keeps tf */
        }
        tn *= KCC_SLAB_SHRINK;
        out_t[c] = tn;
        mask |= tn <= tf ? 1 << c : 0;
    }
    return mask;
#endif
}

/// Box query constants: the box's lo and hi replicated for both lanes.
typedef struct kcc_pbox {
    float lo[3], hi[3];
#if KCC_SSE
    __m128 v_lo_xy, v_lo_z, v_hi_xy, v_hi_z;
#endif
} kcc_pbox;

static inline void kcc_pbox_setup(kcc_pbox *q, const float lo[3], const float hi[3])
{
    memcpy(q->lo, lo, sizeof q->lo);
    memcpy(q->hi, hi, sizeof q->hi);
#if KCC_SSE
    q->v_lo_xy = _mm_set_ps(lo[1], lo[1], lo[0], lo[0]);
    q->v_lo_z = _mm_set_ps(0.0f, 0.0f, lo[2], lo[2]);
    q->v_hi_xy = _mm_set_ps(hi[1], hi[1], hi[0], hi[0]);
    q->v_hi_z = _mm_set_ps(0.0f, 0.0f, hi[2], hi[2]);
#endif
}

/// Bit c set when node c's box overlaps the query box (touching counts).
static inline int kcc_pbox_test(const kcc_pbox *q, const kcc_node_pair *p)
{
#if KCC_SSE
    __m128 lo_xy = kcc_load22(p, offsetof(kcc_node_pair, x), offsetof(kcc_node_pair, y));
    __m128 hi_xy = kcc_load22(p, offsetof(kcc_node_pair, x) + 8, offsetof(kcc_node_pair, y) + 8);
    __m128 lo_z = kcc_load2(p, offsetof(kcc_node_pair, z));
    __m128 hi_z = kcc_load2(p, offsetof(kcc_node_pair, z) + 8);
    int m = _mm_movemask_ps(_mm_and_ps(_mm_cmple_ps(lo_xy, q->v_hi_xy), _mm_cmpge_ps(hi_xy, q->v_lo_xy)));
    int mz = _mm_movemask_ps(_mm_and_ps(_mm_cmple_ps(lo_z, q->v_hi_z), _mm_cmpge_ps(hi_z, q->v_lo_z)));
    return m & (m >> 2) & mz & 3;
#else
    int mask = 0;
    for (int c = 0; c < 2; ++c) {
        bool in = p->x[0][c] <= q->hi[0] && p->x[1][c] >= q->lo[0] && p->y[0][c] <= q->hi[1] &&
                  p->y[1][c] >= q->lo[1] && p->z[0][c] <= q->hi[2] && p->z[1][c] >= q->lo[2];
        mask |= in ? 1 << c : 0;
    }
    return mask;
#endif
}

/* tri_box.c */
/// True when (b-a)x(c-a) computed in float is zero or not finite, or exactly zero in double: such
/// a triangle is never reported by any query.
bool kcc_tri_is_degenerate(const float a[3], const float b[3], const float c[3]);
/// Exact SAT test without the degenerate check (the mesh only stores live triangles).
bool kcc_tri_overlap_box_internal(const float a[3], const float b[3], const float c[3],
                                  const float lo[3], const float hi[3]);
/// Swept SAT without argument checks. Box given as centre and half extents in double; contacts
/// later than t_max (<= 1) are not reported (the mesh passes its best time so far).
bool kcc_tri_sweep_internal(const float a[3], const float b[3], const float c[3],
                            const double center[3], const double half[3], const double delta[3],
                            double t_max, double *out_t, double out_normal[3], bool *out_start);

/* tree.c */
/// One build primitive: a triangle's bounds and its input index.
typedef struct kcc_build_prim {
    float    lo[3];
    uint32_t id;      ///< input triangle index (also the builder's final tie-break key)
    float    hi[3];
    float    pad;     ///< 0
} kcc_build_prim;
_Static_assert(sizeof(kcc_build_prim) == 32, "build prim must be 32 bytes");
/// Builds the tree over prims[0..n) (n > 0; reordered in place into leaf order) into pairs (room
/// for n pairs). Returns the pair count; writes leaves and depth. Allocates nothing.
uint32_t kcc_tree_build(kcc_build_prim *prims, uint32_t n, kcc_node_pair *pairs,
                        uint32_t *out_leaves, uint32_t *out_depth);

#endif
