/* collide_internal.h: the private layout of kcc_mesh (32-byte tree nodes stored four siblings to a
 * group, triangles in leaf order as index triples into shared vertices, stored as floats or coded
 * through per-axis tables) and the kernels shared by mesh.c, tree.c, ray.c and tri_box.c:
 * the per-triangle tests and the four-children node tests. Never installed. */
#ifndef KCC_COLLIDE_INTERNAL_H
#define KCC_COLLIDE_INTERNAL_H

#include <float.h>
#include <math.h>
#include <string.h>

#include "kcc_collide.h"
#include "kcc_local_internal.h" /* KCC_HOT, KCC_RARE */

/// SSE2 node tests when the target has them (every x86-64); a scalar path with the same results
/// (same operations, same NaN rules) otherwise.
#if defined(__SSE2__) && !defined(KCC_NO_SIMD)
#define KCC_SSE 1
#include <emmintrin.h>
#if defined(__SSE4_1__)
#include <smmintrin.h> /* the AVX2 build's byte widening (kcc_qnode4_counts) */
#endif
#else
#define KCC_SSE 0
#endif


/// Smallest and largest of three, in float and in double. Where values tie (+0 and -0 included),
/// min3f and max3f return the earliest of them, min3d and max3d the latest.
/// FNV-1a 64 over triangle corners, the unit of kcc_level_hash and kcc_trace_mesh_hash (which
/// must agree: a_mesh_hash_is_its_triangles_level_hash): the hash starts at KCC_FNV_BASIS and takes
/// each float's four bytes, low byte first.
#define KCC_FNV_BASIS 0xcbf29ce484222325ull
static inline uint64_t kcc_fnv_float(uint64_t h, float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    for (int byte = 0; byte < 4; ++byte) {
        h ^= (bits >> (8 * byte)) & 0xffu;
        h *= 0x100000001b3ull; /* FNV-1a 64 prime */
    }
    return h;
}

static inline float min3f(float a, float b, float c)
{
    float m = b < a ? b : a;
    return c < m ? c : m;
}

static inline float max3f(float a, float b, float c)
{
    float m = b > a ? b : a;
    return c > m ? c : m;
}

static inline double min3d(double a, double b, double c)
{
    double m = a < b ? a : b;
    return m < c ? m : c;
}

static inline double max3d(double a, double b, double c)
{
    double m = a > b ? a : b;
    return m > c ? m : c;
}

/// A box's centre and half extents, in double (kcc_box_center_half is the float one): both are exact
/// there (the sum and the difference of two floats, halved), so every test about the box centre
/// starts from the box as given.
static inline void kcc_box_center_half_d(const float lo[3], const float hi[3], double center[3],
                                       double half[3])
{
    for (int k = 0; k < 3; ++k) {
        center[k] = 0.5 * ((double)lo[k] + (double)hi[k]);
        half[k] = 0.5 * ((double)hi[k] - (double)lo[k]);
    }
}

/// The watertight ray/triangle tests (ray.c, and the controller's rays down) compute the three edge
/// functions in float. Where one of them is below this magnitude, zero included, float cannot be
/// trusted with it: zero means the ray passes exactly through an edge's line, where the float sign
/// may be wrong, and below FLT_MIN the products underflow, so a ray beside a triangle with denormal
/// coordinates must not count as a hit (ray_beside_a_triangle_whose_edge_functions_underflow_misses).
/// Such a triangle is decided by kcc_edge_hit_exact instead. 2^-100 leaves room for the depth's
/// products too; real levels have edge functions far above it, or zero.
#define KCC_EDGE_TINY 0x1p-100f

/// An edge function float cannot be trusted with (zero included).
static inline bool kcc_edge_tiny(float e)
{
    return fabsf(e) < KCC_EDGE_TINY;
}

#if KCC_SSE
/// Lane i set when edge function a, b or c is tiny in lane i: kcc_edge_tiny, four lanes at a time
/// (the same compare, so the four-wide tests defer exactly the triangles the scalar ones do).
static inline int kcc_edge_tiny4(__m128 a, __m128 b, __m128 c)
{
    const __m128 mag = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff)), tiny = _mm_set1_ps(KCC_EDGE_TINY);
    return _mm_movemask_ps(_mm_or_ps(_mm_or_ps(_mm_cmplt_ps(_mm_and_ps(a, mag), tiny),
                                               _mm_cmplt_ps(_mm_and_ps(b, mag), tiny)),
                                     _mm_cmplt_ps(_mm_and_ps(c, mag), tiny)));
}
#endif

/// The watertight decision where a float edge function is zero or tiny: x, y are the three
/// vertices' coordinates across the ray (relative to its origin, sheared onto it), z their depths
/// along it; fe the float edge functions (edge i faces vertex i), or NULL. An edge function is
/// recomputed in double where fe is NULL or its float value is zero or tiny: the products of two
/// floats are exact in double and a difference rounds symmetrically, so two triangles sharing an
/// edge see exactly opposite values and no ray slips between them. The others keep their float
/// values. Their signs decide. Returns false when the ray's line misses the triangle or lies in its
/// plane; otherwise *depth is the depth of the crossing, interpolated from the edge functions in
/// float, as the float test does (a ray through an edge of an ordinary triangle gets the float
/// test's depth), or in double where a recomputed one is nonzero but below KCC_EDGE_TINY, which
/// float would lose.
static inline bool kcc_edge_hit_exact(const float x[3], const float y[3], const float z[3],
                                      const float fe[3], float *depth)
{
    double e[3];
    bool lost = false;
    for (int i = 0; i < 3; ++i) {
        const int j = (i + 1) % 3, k = (i + 2) % 3;
        if (fe && !kcc_edge_tiny(fe[i])) {
            e[i] = fe[i];
        } else {
            e[i] = (double)x[j] * (double)y[k] - (double)y[j] * (double)x[k];
            lost = lost || (e[i] != 0.0 && fabs(e[i]) < (double)KCC_EDGE_TINY);
        }
    }
    if ((e[0] < 0.0 || e[1] < 0.0 || e[2] < 0.0) && (e[0] > 0.0 || e[1] > 0.0 || e[2] > 0.0))
        return false;
    const double det = e[0] + e[1] + e[2];
    if (det == 0.0)
        return false;
    if (lost) {
        *depth = (float)((e[0] * z[0] + e[1] * z[1] + e[2] * z[2]) / det);
        return true;
    }
    const float f0 = (float)e[0], f1 = (float)e[1], f2 = (float)e[2];
    *depth = (f0 * z[0] + f1 * z[1] + f2 * z[2]) / (f0 + f1 + f2);
    return true;
}

/// Traversal stack size (entries). The builder guarantees depth <= KCC_TREE_MAX_DEPTH (the four-wide
/// tree is no deeper than the binary one), and a traversal holds at most three pending siblings
/// per level plus the four of the current group, so the stack cannot overflow: kcc_mesh_validate
/// checks the depth, and the walks assert their stack bound in KCC_DEBUG builds.
#define KCC_TREE_STACK      (3 * KCC_TREE_MAX_DEPTH + 8)
/// Deepest tree the builder produces (nodes on a root-to-leaf path, root = 1). Below
/// KCC_TREE_SAH_DEPTH the builder uses SAH; deeper it halves ranges (object median), which adds at
/// most 28 levels for 2^30 triangles, so depth stays <= KCC_TREE_SAH_DEPTH + 32.
#define KCC_TREE_SAH_DEPTH  28
#define KCC_TREE_MAX_DEPTH  (KCC_TREE_SAH_DEPTH + 32)
/// Most triangles one leaf holds.
#define KCC_LEAF_MAX        8
/// Ranges this small are never split.
#define KCC_LEAF_MIN        4
/// Largest triangle count accepted (node ids are 32-bit, 2n nodes).
#define KCC_MESH_MAX_TRIANGLES (1u << 30)

/// The binary SAH tree as the builder makes it (scratch only): two sibling nodes per pair, lane c
/// of every field is node 2 * pair + c. Node 0 is the root; node 1 an empty dummy (lo = +inf,
/// hi = -inf). A node is a leaf when count > 0 (triangles first .. first + count - 1 in leaf
/// order); an inner node's children are the pair `first`.
typedef struct kcc_node_pair {
    float    x[2][2];     ///< x[0] = lo.x of both nodes, x[1] = hi.x (m)
    float    y[2][2];
    float    z[2][2];
    uint32_t first[2];
    uint32_t count[2];
} kcc_node_pair;
_Static_assert(sizeof(kcc_node_pair) == 64, "a binary node is 32 bytes (a sibling pair 64)");

/// A triangle's corners a, b, c as wound in the input: what the per-triangle tests read (the mesh
/// stores index triples into its shared vertices and gathers a triangle's corners into one).
typedef struct kcc_tri {
    float v[3][3];    ///< m
} kcc_tri;
_Static_assert(sizeof(kcc_tri) == 36, "triangle record must be 36 bytes");

/// A triangle's plane: the unit normal as wound (the cross product (b - a) x (c - a) in float,
/// divided by its float length, or by its length in double when the float one underflows) and
/// d = n . a (kcc_tri_plane). The mesh does not store them: a character's cache computes them as
/// it copies triangles in, the same bits every time.
typedef struct kcc_plane {
    float n[3];
    float d;
} kcc_plane;

/// Four sibling tree nodes, 32 bytes each, stored structure-of-arrays so one SSE pass tests all
/// four: lane i of every field is child i. A child is a leaf when count > 0 (triangles first ..
/// first + count - 1 in leaf order), an inner node when count == 0 (its children are the group
/// `first`), and an empty slot when its box is empty (lo = +inf, hi = -inf: no test enters it).
/// Group 0 holds the root's children (or the root itself when it is a leaf).
typedef struct kcc_node4 {
    float    x[2][4];     ///< x[0] = lo.x of the four children, x[1] = hi.x (m)
    float    y[2][4];
    float    z[2][4];
    uint32_t first[4];
    uint32_t count[4];
} kcc_node4;
_Static_assert(sizeof(kcc_node4) == 4 * 32, "a tree node is 32 bytes (four siblings per group)");

/// A group's four children's boxes in float, laid out as kcc_node4's first 96 bytes: all the box
/// test (kcc_pbox_test4) and the slab test (kcc_pray_test_planes, by kcc_pray's byte offsets) read.
typedef struct kcc_box4 {
    float x[2][4];
    float y[2][4];
    float z[2][4];
} kcc_box4;
_Static_assert(offsetof(kcc_box4, y) == offsetof(kcc_node4, y) &&
               offsetof(kcc_box4, z) == offsetof(kcc_node4, z) && sizeof(kcc_box4) == 96,
               "a group's float boxes sit where kcc_node4 holds them");

/// Input indices, slots and duplicate-list offsets as a mesh stores them: 16-bit where the mesh has
/// at most 65,536 input triangles (kcc_mesh.narrow_ids: every such value is at most 65,535), 32-bit
/// above. Read through kcc_index_at (and the accessors below), never directly.
typedef union kcc_index_array {
    uint16_t *narrow;
    uint32_t *wide;
} kcc_index_array;

/// A mesh's node group: kcc_node4's four children in 64 bytes (one cache line), their boxes
/// quantised outward. Along axis k child i's box is decoded (kcc_qnode4_coord) as
/// base[k] + q[k][0][i] * step and base[k] + q[k][1][i] * step, step = 2^(exp[k] - 127) (the float
/// whose exponent field is exp[k]; (float)q * step is exact, so the add is the one rounding). The
/// builder (kcc_qnode4_encode) rounds lo down and hi up and checks each with this very evaluation,
/// so a decoded box always contains the exact one: a walk enters every node the exact boxes would
/// and the exact per-triangle tests decide every answer
/// (quantised_boxes_contain_the_exact_boxes). The children fill slots 0 .. n - 1; the other
/// slots are empty (all zero), decoded as lo = +inf, hi = -inf. first and count are kcc_node4's
/// (count <= KCC_LEAF_MAX).
typedef struct kcc_qnode4 {
    float    base[3];       ///< the group's box lo: the union of its children's (m)
    uint8_t  exp[3];        ///< per axis the step's float exponent field, 1 .. 253 (the
                            ///< encoder's stay at or below 249; kcc_mesh_validate checks it)
    uint8_t  slots;         ///< bit i set when slot i holds a child: 1, 3, 7 or 15
    uint8_t  q[3][2][4];    ///< q[k][0][i], q[k][1][i]: child i's lo and hi along k, in steps
    uint32_t first[4];
    uint8_t  count[4];
    uint32_t pad;           ///< 0
} kcc_qnode4;
_Static_assert(sizeof(kcc_qnode4) == 64, "a quantised group is one 64-byte line");

/// The step 2^(e - 127) of exponent field e (1 .. 254): a normal power of two.
static inline float kcc_qnode4_step(uint8_t e)
{
    const uint32_t bits = (uint32_t)e << 23;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/// The one evaluation of a quantised bound: base + q * step (the encoder and every walk).
static inline float kcc_qnode4_coord(float base, float step, uint32_t q)
{
    return base + (float)q * step;
}

#if KCC_SSE
/// A group's per-axis base and step, each in all four lanes.
typedef struct kcc_qnode4_frame {
    __m128 base[3], step[3];
} kcc_qnode4_frame;

/// The exponent bytes of g widened to 32-bit lanes: lane k holds exp[k] (lane 3 the slots byte).
KCC_HOT __m128i kcc_qnode4_exponents(const kcc_qnode4 *g)
{
    int32_t word;
    memcpy(&word, g->exp, sizeof word);
#if defined(__SSE4_1__)
    return _mm_cvtepu8_epi32(_mm_cvtsi32_si128(word));
#else
    const __m128i zero = _mm_setzero_si128();
    return _mm_unpacklo_epi16(_mm_unpacklo_epi8(_mm_cvtsi32_si128(word), zero), zero);
#endif
}

/// g's frame: the bases from its first three floats, each step from its exponent byte moved into
/// a float's exponent field (kcc_qnode4_step).
KCC_HOT void kcc_qnode4_frame_load(const kcc_qnode4 *g, kcc_qnode4_frame *f)
{
    const __m128i head = _mm_castps_si128(_mm_loadu_ps(g->base));
    const __m128i steps = _mm_slli_epi32(kcc_qnode4_exponents(g), 23);
    f->base[0] = _mm_castsi128_ps(_mm_shuffle_epi32(head, 0x00));
    f->base[1] = _mm_castsi128_ps(_mm_shuffle_epi32(head, 0x55));
    f->base[2] = _mm_castsi128_ps(_mm_shuffle_epi32(head, 0xAA));
    f->step[0] = _mm_castsi128_ps(_mm_shuffle_epi32(steps, 0x00));
    f->step[1] = _mm_castsi128_ps(_mm_shuffle_epi32(steps, 0x55));
    f->step[2] = _mm_castsi128_ps(_mm_shuffle_epi32(steps, 0xAA));
}

/// The four step counts at p (four bytes) as floats.
KCC_HOT __m128 kcc_qnode4_counts(const uint8_t *p)
{
    int32_t packed;
    memcpy(&packed, p, sizeof packed);
#if defined(__SSE4_1__)
    return _mm_cvtepi32_ps(_mm_cvtepu8_epi32(_mm_cvtsi32_si128(packed)));
#else
    const __m128i zero = _mm_setzero_si128();
    const __m128i wide = _mm_unpacklo_epi8(_mm_cvtsi32_si128(packed), zero);
    return _mm_cvtepi32_ps(_mm_unpacklo_epi16(wide, zero));
#endif
}

/// The four children's decoded bound along axis k from the four step counts at byte offset off of
/// g (that of q[k][0] for lo, q[k][1] for hi): the very values kcc_qnode4_decode gives a live slot.
KCC_HOT __m128 kcc_qnode4_plane(const kcc_qnode4 *g, const kcc_qnode4_frame *f, int k, uint32_t off)
{
    return _mm_add_ps(f->base[k], _mm_mul_ps(kcc_qnode4_counts((const uint8_t *)g + off), f->step[k]));
}

/// All six planes of g: planes[k][0] = lo along k, planes[k][1] = hi (kcc_qnode4_plane).
KCC_HOT void kcc_qnode4_planes(const kcc_qnode4 *g, const kcc_qnode4_frame *f, __m128 planes[3][2])
{
    for (int k = 0; k < 3; ++k)
        for (int side = 0; side < 2; ++side)
            planes[k][side] = kcc_qnode4_plane(g, f, k, (uint32_t)offsetof(kcc_qnode4, q[k][side]));
}
#endif

/// Decodes group g into *out (a float kcc_node4, what the tests of float groups read) and returns
/// out.
KCC_HOT const kcc_node4 *kcc_qnode4_decode(const kcc_qnode4 *g, kcc_node4 *out)
{
    float *const planes[3][2] = {{out->x[0], out->x[1]}, {out->y[0], out->y[1]},
                                 {out->z[0], out->z[1]}};
#if KCC_SSE
    const __m128i bits = _mm_setr_epi32(1, 2, 4, 8);
    const __m128 live = _mm_castsi128_ps(
        _mm_cmpeq_epi32(_mm_and_si128(_mm_set1_epi32(g->slots), bits), bits));
    /* lo = max(lo, floor), hi = min(hi, -floor): floor is -inf in live lanes, +inf in empty ones. */
    const __m128 floor_v = _mm_or_ps(_mm_and_ps(live, _mm_set1_ps(-INFINITY)),
                                     _mm_andnot_ps(live, _mm_set1_ps(INFINITY)));
    const __m128 ceil_v = _mm_xor_ps(floor_v, _mm_set1_ps(-0.0f));
    kcc_qnode4_frame f;
    kcc_qnode4_frame_load(g, &f);
    __m128 decoded[3][2];
    kcc_qnode4_planes(g, &f, decoded);
    for (int k = 0; k < 3; ++k) {
        _mm_storeu_ps(planes[k][0], _mm_max_ps(decoded[k][0], floor_v));
        _mm_storeu_ps(planes[k][1], _mm_min_ps(decoded[k][1], ceil_v));
    }
#else
    for (int k = 0; k < 3; ++k) {
        const float step = kcc_qnode4_step(g->exp[k]);
        for (int i = 0; i < 4; ++i) {
            const bool live = (g->slots >> i & 1) != 0;
            planes[k][0][i] = live ? kcc_qnode4_coord(g->base[k], step, g->q[k][0][i]) : INFINITY;
            planes[k][1][i] = live ? kcc_qnode4_coord(g->base[k], step, g->q[k][1][i]) : -INFINITY;
        }
    }
#endif
    for (int i = 0; i < 4; ++i)
        out->count[i] = g->count[i];
    memcpy(out->first, g->first, sizeof out->first);
    return out;
}

/// Exact duplicates (the same three corners in the same order, bit for bit: the same float answer
/// to every test) share one slot. The tree holds the set's lowest input index, its representative;
/// the others are listed beside its slot (kcc_mesh_duplicates). Overlap and bounds queries report
/// every listed duplicate with its representative; rays and sweeps report the representative (the
/// lowest index among equal answers); the slot query, the move's list, sees the one slot. A move's
/// cost thus stays bounded on a mesh of many copies of one triangle
/// (move_on_a_million_identical_triangles_gathers_one). Rotations and opposite windings of a
/// triangle are not duplicates: a ray's float answer depends on the corner order, and a face with
/// both windings is a real two-sided face.
struct kcc_mesh {
    kcc_allocator   allocator;     ///< the one used to build (resolved: never NULL functions)
    size_t          block_bytes;   ///< bytes of the single allocation holding everything
    kcc_qnode4     *groups;        ///< quad_count node groups, quantised; none when the mesh has
                                   ///< no live triangle
    kcc_node4       root;          ///< groups[0] decoded (kcc_qnode4_decode): every walk tests the
                                   ///< root group, so it is decoded once per mesh, not per query
    kcc_box4       *top;           ///< the boxes of groups 1 .. KCC_MESH_TOP_GROUPS (those of them
                                   ///< the mesh has) decoded: top[g - 1] (kcc_mesh_top_count)
    float         (*verts)[3];     ///< vertex_count corners (the exact input floats), numbered in
                                   ///< order of first use by the slots, and one float of padding
                                   ///< after them (four-float loads); a corner repeats only where
                                   ///< a block's offsets cannot reach its earlier copy. NULL on a
                                   ///< mesh with vertex tables
    uint32_t       *corner_base;   ///< per block of KCC_CORNER_BLOCK slots (s / KCC_CORNER_BLOCK):
                                   ///< the vertex its offsets count from
    uint8_t       (*corners)[3];   ///< slot_count triangles: the tree's first, degenerate last;
                                   ///< corner c of slot s is vertex corner_base[s /
                                   ///< KCC_CORNER_BLOCK] + corners[s][c] (kcc_mesh_vertex_of)
    kcc_index_array tri_id;        ///< slot -> input index (slot_count entries): kcc_mesh_tri_id
    uint64_t       *link_marks;    ///< bit p % 64 of word p / 64 set where position p (an index of
                                   ///< kcc_mesh_input_at) carries a back link ((triangle_count +
                                   ///< 63) / 64 words, the bits past triangle_count clear)
    uint32_t       *link_rank;     ///< per KCC_RANK_WORDS words of link_marks: the marks before them
    kcc_index_array links;         ///< per marked position, in position order: the position
                                   ///< KCC_LINK_STEPS steps before it on its cycle (link_count
                                   ///< entries): kcc_mesh_slot_of
    uint64_t       *dup_marks;     ///< bit s % 64 of word s / 64 set where tree slot s has
                                   ///< duplicates ((tree_triangles + 63) / 64 words, the bits past
                                   ///< the tree's clear); NULL when duplicate_count is 0
    uint32_t       *dup_rank;      ///< per KCC_RANK_WORDS words of dup_marks: the marks before them
    kcc_index_array dup_first;     ///< the r-th marked slot's duplicates are dup_ids[dup_first[r] ..
                                   ///< dup_first[r + 1]) (dup_sets + 1 entries)
    kcc_index_array dup_ids;       ///< input indices of the duplicates, ascending within a slot:
                                   ///< kcc_mesh_dup_id
    bool            narrow_ids;    ///< tri_id, links, dup_first and dup_ids are 16-bit
                                   ///< (triangle_count <= 65,536)
    uint32_t        triangle_count;///< input triangles
    uint32_t        vertex_count;  ///< distinct corners of the stored triangles
    uint32_t        slot_count;    ///< stored triangles: tree_triangles + the degenerate ones
    uint32_t        tree_triangles;///< the tree's triangles: one representative per set of exact
                                   ///< duplicates (the lowest input index), degenerate ones left out
    uint32_t        duplicate_count;///< live input triangles that are not representatives
    uint32_t        dup_sets;      ///< tree slots with duplicates (the marked ones)
    uint32_t        link_count;    ///< marked positions (back links)
    uint32_t        quad_count;
    uint32_t        node_count;    ///< nodes of the four-wide tree (non-empty slots + the root)
    uint32_t        leaf_count;
    uint32_t        depth;         ///< of the binary SAH tree the four-wide one was collapsed from
    float           bounds[2][3];  ///< of the tree's triangles; all zero when there are none
    float           coord_scale;   ///< largest |coordinate| of any tree triangle (m)
    const struct kcc_hf *hf;       ///< a heightfield's grid (heightfield_internal.h), NULL for a
                                   ///< tree mesh: every walk over a mesh dispatches on it
    uint64_t        key;           ///< hash of the tree's triangles, their input indices and the
                                   ///< build's stamp (never 0): a character's cache or clear note
                                   ///< from another build at the same address (a rebuilt level, or
                                   ///< another process that saved the character) is never used
    const struct kcc_vertex_tables *tables; ///< the same vertices coded through per-axis tables
                                   ///< (kcc_mesh_table_vertex), chosen at build
                                   ///< (kcc_vertex_coding); NULL for float vertices (verts), as
                                   ///< on a heightfield's view
};

/// Groups after the root whose boxes a tree mesh keeps decoded (kcc_mesh.top): in the depth-first
/// layout the root's inner children (and, below a root with fewer, the first one's children), the
/// groups every walk that leaves the root tests next. 384 bytes a mesh.
#define KCC_MESH_TOP_GROUPS 4u

/// How many of groups 1 .. KCC_MESH_TOP_GROUPS a mesh of quad_count groups has.
static inline uint32_t kcc_mesh_top_count(uint32_t quad_count)
{
    if (quad_count > KCC_MESH_TOP_GROUPS)
        return KCC_MESH_TOP_GROUPS;
    return quad_count > 0 ? quad_count - 1u : 0u;
}

/// Most input triangles a mesh stores its indices for in 16 bits (kcc_mesh.narrow_ids).
#define KCC_MESH_NARROW_IDS 65536u

/// Entry i of one of the mesh's index arrays, at the mesh's width.
static inline uint32_t kcc_index_at(const kcc_mesh *mesh, kcc_index_array a, uint32_t i)
{
    return mesh->narrow_ids ? a.narrow[i] : a.wide[i];
}

/// Sets entry i of one of the mesh's index arrays (value fits the mesh's width).
static inline void kcc_index_set(const kcc_mesh *mesh, kcc_index_array a, uint32_t i, uint32_t value)
{
    if (mesh->narrow_ids)
        a.narrow[i] = (uint16_t)value;
    else
        a.wide[i] = value;
}

/// The input index of slot s (every answer reports input indices).
static inline uint32_t kcc_mesh_tri_id(const kcc_mesh *mesh, uint32_t s)
{
    return kcc_index_at(mesh, mesh->tri_id, s);
}


/// The mesh's two bitmaps (dup_marks over the tree's slots, link_marks over the positions) count
/// their marks once per KCC_RANK_WORDS 64-bit words: the marks before bit i are its group's rank
/// plus the popcounts of at most KCC_RANK_WORDS words, read only where bit i is marked (a mark's
/// number: rare on every path). 0.008 bytes a bit, against 0.06 with a rank per word.
#define KCC_RANK_WORDS 8u

/// Rank entries of a bitmap of `words` words.
static inline uint32_t kcc_rank_count(uint32_t words)
{
    return (words + KCC_RANK_WORDS - 1u) / KCC_RANK_WORDS;
}

/// How many bits of marks below bit i are set (rank: its ranks).
static inline uint32_t kcc_marks_before(const uint64_t *marks, const uint32_t *rank, uint32_t i)
{
    const uint32_t w = i / 64u, first = w / KCC_RANK_WORDS * KCC_RANK_WORDS;
    uint32_t before = rank[w / KCC_RANK_WORDS];
    for (uint32_t v = first; v < w; ++v)
        before += (uint32_t)__builtin_popcountll(marks[v]);
    return before + (uint32_t)__builtin_popcountll(marks[w] & ((UINT64_C(1) << (i % 64u)) - 1u));
}

/// Sets the ranks of the `words` words of marks; returns how many bits are set.
static inline uint32_t kcc_marks_rank(const uint64_t *marks, uint32_t words, uint32_t *rank)
{
    uint32_t set = 0;
    for (uint32_t w = 0; w < words; ++w) {
        if (w % KCC_RANK_WORDS == 0)
            rank[w / KCC_RANK_WORDS] = set;
        set += (uint32_t)__builtin_popcountll(marks[w]);
    }
    return set;
}

/// Whether the ranks of the `words` words of marks count them, no bit at or past `bits` is set and
/// `set` bits are set in all (kcc_mesh_validate).
static inline bool kcc_marks_valid(const uint64_t *marks, const uint32_t *rank, uint32_t words,
                                   uint32_t bits, uint32_t set)
{
    uint32_t counted = 0;
    for (uint32_t w = 0; w < words; ++w) {
        if (w % KCC_RANK_WORDS == 0 && rank[w / KCC_RANK_WORDS] != counted)
            return false;
        counted += (uint32_t)__builtin_popcountll(marks[w]);
    }
    return counted == set && (bits % 64u == 0 || marks[words - 1u] >> (bits % 64u) == 0);
}

/// How many duplicates tree slot s has (none on a mesh without any); *begin is where they start
/// in the duplicate lists (kcc_mesh_dup_id). A slot's mark and the marks before it
/// (kcc_marks_before) find its list: 0.13-0.29 bytes a triangle where a mesh has duplicates.
static inline uint32_t kcc_mesh_duplicates(const kcc_mesh *mesh, uint32_t s, uint32_t *begin)
{
    *begin = 0;
    if (mesh->duplicate_count == 0)
        return 0;
    if (!(mesh->dup_marks[s / 64u] >> (s % 64u) & 1u))
        return 0;
    const uint32_t rank = kcc_marks_before(mesh->dup_marks, mesh->dup_rank, s);
    *begin = kcc_index_at(mesh, mesh->dup_first, rank);
    return kcc_index_at(mesh, mesh->dup_first, rank + 1u) - *begin;
}

/// The input index of entry i of the duplicate lists.
static inline uint32_t kcc_mesh_dup_id(const kcc_mesh *mesh, uint32_t i)
{
    return kcc_index_at(mesh, mesh->dup_ids, i);
}

/// The mesh stores no input -> slot map. The slots' input indices (tri_id) followed by the
/// duplicates' (dup_ids, in list order) name every input triangle once: position p (0 ..
/// triangle_count - 1) holds input kcc_mesh_input_at(p), a permutation. Followed from an input
/// index i (i, input_at(i), input_at(input_at(i)), ...) it comes back to i, and the position just
/// before holds i. On a cycle longer than KCC_LINK_STEPS every KCC_LINK_STEPS-th position carries a
/// link KCC_LINK_STEPS positions back (link_marks, links), so kcc_mesh_slot_of takes at most
/// 2 KCC_LINK_STEPS steps (the shortcut representation of a permutation and its inverse of Munro,
/// Raman, Raman and Rao, "Succinct representations of permutations", ICALP 2003): 0.20-0.26 bytes
/// a triangle against 2 or 4 for a stored inverse (docs/collide.md, Memory layout). Tested by
/// slot_of_every_input_matches_a_scan_of_the_index_maps.
#define KCC_LINK_STEPS 32u

/// The input index at position p (p < triangle_count): slot p's, or the duplicate lists' entry
/// p - slot_count.
static inline uint32_t kcc_mesh_input_at(const kcc_mesh *mesh, uint32_t p)
{
    return p < mesh->slot_count ? kcc_mesh_tri_id(mesh, p)
                                : kcc_mesh_dup_id(mesh, p - mesh->slot_count);
}

/// The slot of input triangle `input` (< triangle_count; a duplicate's: its representative's), at
/// most 2 KCC_LINK_STEPS reads of the index maps and an O(log) search of the duplicate lists for a
/// duplicate; UINT32_MAX on a mesh kcc_mesh_validate rejects. On a move's path only through the
/// face normals of the ground and contact triangles a move examines (kcc_local_face_normal).
uint32_t kcc_mesh_slot_of(const kcc_mesh *mesh, uint32_t input);

/// The position holding `input` (kcc_mesh_input_at(position) == input), UINT32_MAX when the links
/// do not lead to it within 2 KCC_LINK_STEPS steps (a corrupt mesh).
uint32_t kcc_mesh_position_of(const kcc_mesh *mesh, uint32_t input);

/// Slots per corner block: the slots s with the same s / KCC_CORNER_BLOCK share one base vertex
/// number, and their corners are 8-bit offsets (in vertices) from it. Sixteen minimises the bytes
/// of bases, offsets and copied corners together on the shared and imported levels (docs/collide.md,
/// Memory layout).
#define KCC_CORNER_BLOCK 16

/// Most distinct values an axis's table holds (16-bit indices); a mesh with more on any axis keeps
/// float vertices whatever its desc asks (kcc_vertex_coding).
#define KCC_MESH_TABLE_VALUES 65536u
/// Bytes after a mesh's vertex codes: every code is read as one 64-bit word.
#define KCC_MESH_CODE_PAD 8u

/// A mesh's vertices coded through tables (kcc_mesh.tables), in the mesh's block before the codes
/// and values it points to: vertex v is code_bytes bytes at codes + v code_bytes, little endian,
/// axis k's index in its bits code_shift[k] .. (code_mask[k] wide), an index into values[k], the
/// axis's value_count[k] distinct coordinates (the exact floats, +0 and -0 apart) ascending by
/// their bits. KCC_MESH_CODE_PAD bytes follow the codes.
typedef struct kcc_vertex_tables {
    uint8_t  *codes;
    float    *values[3];
    uint32_t  value_count[3];
    uint32_t  code_mask[3];    ///< (1 << the bits axis k's index takes) - 1 (0: a single value)
    uint8_t   code_shift[3];
    uint8_t   code_bytes;      ///< 1..6: the fewest whole bytes holding the three indices
} kcc_vertex_tables;

/// The vertex number of corner c (0..2) of slot s: its block's base plus its offset.
static inline uint32_t kcc_mesh_vertex_of(const kcc_mesh *mesh, uint32_t s, int c)
{
    return mesh->corner_base[s / KCC_CORNER_BLOCK] + mesh->corners[s][c];
}

/// Little-endian 64-bit word at p (any alignment).
static inline uint64_t kcc_load_le64(const uint8_t *p)
{
    uint64_t w;
    memcpy(&w, p, sizeof w);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    return w;
}

/// Vertex v of vertex tables t, decoded: each axis's index read from the vertex's code, its value
/// from the axis's table (the exact input float).
static inline void kcc_tables_vertex(const kcc_vertex_tables *t, uint32_t v, float out[3])
{
    const uint64_t code = kcc_load_le64(t->codes + (size_t)v * t->code_bytes);
    for (int k = 0; k < 3; ++k)
        out[k] = t->values[k][(uint32_t)(code >> t->code_shift[k]) & t->code_mask[k]];
}

/// kcc_tables_vertex of the mesh's tables.
static inline void kcc_mesh_table_vertex(const kcc_mesh *mesh, uint32_t v, float out[3])
{
    kcc_tables_vertex(mesh->tables, v, out);
}

/// How a kernel reads a mesh's vertices: as the mesh stores them (KCC_READ_ANY: a branch on
/// kcc_mesh.tables at every read), or as a walk compiled for one coding knows they are stored
/// (KCC_READ_FLOATS, KCC_READ_TABLES: a constant). The hot walks (rays, box queries, sweeps) are
/// compiled once for each coding and chosen once a query, so the float walk has no branch of the
/// tables' in its loops: a branch at every four-triangle load and corner read cost rays 7.2% more
/// instructions on bench_layout's workload (oa_dm1; docs/collide.md, "Measured and not used").
typedef enum kcc_vertex_read { KCC_READ_ANY, KCC_READ_FLOATS, KCC_READ_TABLES } kcc_vertex_read;

/// A walk compiled for vertex tables is kept out of line (and not cold: it is every query of such
/// a mesh), so the float walk beside it compiles as it would without it.
#if defined(__GNUC__)
#define KCC_TABLES_WALK static __attribute__((noinline))
#else
#define KCC_TABLES_WALK static
#endif

/// Whether reads of `read` on this mesh decode tables.
static inline bool kcc_reads_tables(const kcc_mesh *mesh, kcc_vertex_read read)
{
    return read == KCC_READ_ANY ? mesh->tables != NULL : read == KCC_READ_TABLES;
}

/// The first float of slot s's block's base vertex on a mesh of float vertices: corner c of slot s
/// is the vertex corners[s][c] from it, 3 corners[s][c] floats further.
static inline const float *kcc_mesh_block_verts(const kcc_mesh *mesh, uint32_t s)
{
    return mesh->verts[mesh->corner_base[s / KCC_CORNER_BLOCK]];
}

/// Slot s's three corners, read as `read` says: on a mesh of float vertices where they are stored
/// (no copy: the tests that take corners read them in place), with vertex tables decoded into buf.
static inline void kcc_mesh_corners(const kcc_mesh *mesh, uint32_t s, kcc_vertex_read read,
                                    float buf[3][3], const float *out[3])
{
    if (kcc_reads_tables(mesh, read)) {
        for (int c = 0; c < 3; ++c) {
            kcc_mesh_table_vertex(mesh, kcc_mesh_vertex_of(mesh, s, c), buf[c]);
            out[c] = buf[c];
        }
        return;
    }
    const float *block = kcc_mesh_block_verts(mesh, s);
    for (int c = 0; c < 3; ++c)
        out[c] = block + 3u * mesh->corners[s][c];
}

/// Slot s's corners, gathered from the shared vertices. A branch on the coding a corner: gcc 12
/// compiles the ray cast's hit record 14 instructions shorter so than with one branch a triangle,
/// the tables' decode inline or out of line (bench_layout, oa_dm1, callgrind).
static inline void kcc_mesh_tri(const kcc_mesh *mesh, uint32_t s, kcc_tri *out)
{
    for (int c = 0; c < 3; ++c) {
        if (mesh->tables)
            kcc_mesh_table_vertex(mesh, kcc_mesh_vertex_of(mesh, s, c), out->v[c]);
        else
            memcpy(out->v[c], kcc_mesh_block_verts(mesh, s) + 3u * mesh->corners[s][c],
                   sizeof out->v[c]);
    }
}

/* ------------------------------------------------------------------------------------------------
 * Four-children slab test, shared by ray casts (grow = 0) and box sweeps (nodes grown by the box's
 * half extents plus a margin). A node's box is entered at tn = max over axes of the near-plane
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
    uint32_t off_n[3];     ///< byte offset of the near-plane field per axis (lo or hi)
    uint32_t off_f[3];
    uint32_t qoff_n[3];    ///< the same in a quantised group (kcc_qnode4: q[k][0] or q[k][1])
    uint32_t qoff_f[3];
#if KCC_SSE
    __m128   v_org_n[3], v_org_f[3], v_inv[3];
#endif
} kcc_pray;

/// Sets up the node test for the segment org + t dir; grow >= 0 widens every node by grow[k].
static inline void kcc_pray_setup(kcc_pray *r, const float org[3], const float dir[3],
                                  const float grow[3])
{
    for (int k = 0; k < 3; ++k) {
        r->inv[k] = 1.0f / dir[k];
        bool neg = signbit(r->inv[k]) != 0;
        /* Near plane lo - grow (or hi + grow when moving toward -k): plane - (org +- grow). */
        r->org_n[k] = neg ? org[k] - grow[k] : org[k] + grow[k];
        r->org_f[k] = neg ? org[k] + grow[k] : org[k] - grow[k];
        uint32_t lo = (uint32_t)(offsetof(kcc_node4, x) + (size_t)k * 32);
        r->off_n[k] = neg ? lo + 16 : lo;
        r->off_f[k] = neg ? lo : lo + 16;
        uint32_t qlo = (uint32_t)(offsetof(kcc_qnode4, q) + (size_t)k * 8);
        r->qoff_n[k] = neg ? qlo + 4 : qlo;
        r->qoff_f[k] = neg ? qlo : qlo + 4;
#if KCC_SSE
        r->v_org_n[k] = _mm_set1_ps(r->org_n[k]);
        r->v_org_f[k] = _mm_set1_ps(r->org_f[k]);
        r->v_inv[k] = _mm_set1_ps(r->inv[k]);
#endif
    }
}

/// Whether a box sweep's slab r (set up for box moving by delta) keeps its grown, swept bounds within
/// float range. Beyond it (boxes and sweeps near FLT_MAX) the slab distances overflow to infinities
/// that enter a tree's empty slots, so the sweep tests its triangles without the tree
/// (sweep_near_float_max_answers_without_walking_the_tree).
static inline bool kcc_swept_slab_is_finite(const kcc_pray *r, const float box[2][3], const float delta[3])
{
    for (int k = 0; k < 3; ++k) {
        const float grown = fabsf(box[0][k]) + fabsf(box[1][k]) + fabsf(delta[k]) + r->org_n[k] - r->org_f[k];
        if (!isfinite(grown) || !isfinite(r->org_n[k]) || !isfinite(r->org_f[k]))
            return false;
    }
    return true;
}

/// The cheap part of a swept test (box, sphere, capsule): the triangle's bounds as slabs, grown like
/// the nodes (kcc_pray_setup's grow). A triangle this rejects cannot touch the swept shape before
/// `limit` (the exact swept box test's box axes are the same slabs without the margin; a sphere or
/// capsule lies inside its grown bounds).
static inline bool kcc_corners_bounds_swept(const float *const v[3], const kcc_pray *r, float limit)
{
    float tn = 0.0f, tf = limit;
    for (int k = 0; k < 3; ++k) {
        float mn = min3f(v[0][k], v[1][k], v[2][k]);
        float mx = max3f(v[0][k], v[1][k], v[2][k]);
        bool neg = signbit(r->inv[k]) != 0;
        float pn = neg ? mx : mn, pf = neg ? mn : mx;
        float x = (pn - r->org_n[k]) * r->inv[k];
        float y = (pf - r->org_f[k]) * r->inv[k] * KCC_SLAB_GROW;
        tn = x > tn ? x : tn;
        tf = y < tf ? y : tf;
    }
    return tn * KCC_SLAB_SHRINK <= tf;
}

/// A query box the mesh and world queries accept: every bound finite and lo <= hi on each axis.
static inline bool kcc_box_valid(const vec3 box[2])
{
    for (int k = 0; k < 3; ++k) {
        if (!isfinite(box[0][k]) || !isfinite(box[1][k]) || !(box[0][k] <= box[1][k]))
            return false;
    }
    return true;
}

/// The bounds of triangle t touch box [lo, hi] (touching counts): the cheap test before an exact
/// one, a triangle this rejects cannot overlap or be touched by anything inside the box.
static inline bool kcc_tri_bounds_touch(const kcc_tri *t, const float lo[3], const float hi[3])
{
    for (int k = 0; k < 3; ++k)
        if (min3f(t->v[0][k], t->v[1][k], t->v[2][k]) > hi[k] ||
            max3f(t->v[0][k], t->v[1][k], t->v[2][k]) < lo[k])
            return false;
    return true;
}

/// kcc_corners_bounds_swept of a triangle record.
static inline bool kcc_tri_bounds_swept(const kcc_tri *t, const kcc_pray *r, float limit)
{
    const float *const v[3] = {t->v[0], t->v[1], t->v[2]};
    return kcc_corners_bounds_swept(v, r, limit);
}

#if KCC_SSE
/// The slab test of four boxes whose near and far planes along axis k are pn[k], pf[k] (chosen by
/// the ray's direction) against the segment [0, tmax]: bit i set when box i is entered, out_t[i]
/// its (shrunk) entry distance.
KCC_HOT int kcc_pray_slabs(const kcc_pray *r, const __m128 pn[3], const __m128 pf[3], float tmax,
                           float out_t[4])
{
    const __m128 grow = _mm_set1_ps(KCC_SLAB_GROW);
    __m128 tn = _mm_setzero_ps(), tf = _mm_set1_ps(tmax);
    for (int k = 0; k < 3; ++k) {
        __m128 a = _mm_mul_ps(_mm_sub_ps(pn[k], r->v_org_n[k]), r->v_inv[k]);
        __m128 c = _mm_mul_ps(_mm_mul_ps(_mm_sub_ps(pf[k], r->v_org_f[k]), r->v_inv[k]), grow);
        tn = _mm_max_ps(a, tn);   /* a NaN a keeps tn */
        tf = _mm_min_ps(c, tf);   /* a NaN c keeps tf */
    }
    tn = _mm_mul_ps(tn, _mm_set1_ps(KCC_SLAB_SHRINK));
    _mm_storeu_ps(out_t, tn);
    return _mm_movemask_ps(_mm_cmple_ps(tn, tf));
}
#endif

/// Tests the four children of a group against the segment [0, tmax]; bit i of the result is set
/// when child i is entered, and out_t[i] is its (shrunk) entry distance. The boxes are read at
/// kcc_pray's byte offsets from `planes`: a kcc_node4 or a kcc_box4.
KCC_HOT int kcc_pray_test_planes(const kcc_pray *r, const void *planes, float tmax, float out_t[4])
{
    const char *b = (const char *)planes;
#if KCC_SSE
    __m128 pn[3], pf[3];
    for (int k = 0; k < 3; ++k) {
        pn[k] = _mm_loadu_ps((const float *)(const void *)(b + r->off_n[k]));
        pf[k] = _mm_loadu_ps((const float *)(const void *)(b + r->off_f[k]));
    }
    return kcc_pray_slabs(r, pn, pf, tmax, out_t);
#else
    int mask = 0;
    for (int i = 0; i < 4; ++i) {
        float tn = 0.0f, tf = tmax;
        for (int k = 0; k < 3; ++k) {
            float pn = ((const float *)(const void *)(b + r->off_n[k]))[i];
            float pf = ((const float *)(const void *)(b + r->off_f[k]))[i];
            float a = (pn - r->org_n[k]) * r->inv[k];
            float c = (pf - r->org_f[k]) * r->inv[k] * KCC_SLAB_GROW;
            tn = a > tn ? a : tn;   /* a NaN a keeps tn */
            tf = c < tf ? c : tf;   /* a NaN c keeps tf */
        }
        tn *= KCC_SLAB_SHRINK;
        out_t[i] = tn;
        mask |= tn <= tf ? 1 << i : 0;
    }
    return mask;
#endif
}

/// kcc_pray_test_planes of float group q.
KCC_HOT int kcc_pray_test(const kcc_pray *r, const kcc_node4 *q, float tmax, float out_t[4])
{
    return kcc_pray_test_planes(r, q, tmax, out_t);
}

/// kcc_pray_test of the decoded group g (kcc_qnode4_decode), computed from g in place: the same
/// planes in the same float operations for the live slots; an empty slot, which the decoded test
/// never enters, is masked out.
KCC_HOT int kcc_pray_qtest(const kcc_pray *r, const kcc_qnode4 *g, float tmax, float out_t[4])
{
#if KCC_SSE
    kcc_qnode4_frame f;
    kcc_qnode4_frame_load(g, &f);
    __m128 pn[3], pf[3];
    for (int k = 0; k < 3; ++k) {
        pn[k] = kcc_qnode4_plane(g, &f, k, r->qoff_n[k]);
        pf[k] = kcc_qnode4_plane(g, &f, k, r->qoff_f[k]);
    }
    return kcc_pray_slabs(r, pn, pf, tmax, out_t) & g->slots;
#else
    kcc_node4 decoded;
    return kcc_pray_test(r, kcc_qnode4_decode(g, &decoded), tmax, out_t);
#endif
}

/// A pending child on a traversal stack: its (first, count) and its entry distance.
typedef struct kcc_stack_entry {
    uint32_t first;
    uint32_t count;
    float    t;
} kcc_stack_entry;

/// A group's children's links: first[i] and the count of child i, count[i] for float groups,
/// count8[i] for quantised ones (the other NULL).
typedef struct kcc_links {
    const uint32_t *first;
    const uint32_t *count;
    const uint8_t  *count8;
} kcc_links;

/// The count of child i of links l.
KCC_HOT uint32_t kcc_link_count(const kcc_links *l, int i)
{
    return l->count8 ? l->count8[i] : l->count[i];
}

/// Continues with the nearest child among mask (mask != 0; ties: the lowest slot; child i's links
/// in *l) in *out and pushes the others farthest first, so the next nearest is popped next.
/// Returns the new stack size.
KCC_HOT uint32_t kcc_descend_links(kcc_stack_entry *stack, uint32_t sp, const kcc_links *l,
                                   int mask, const float t[4], kcc_stack_entry *out)
{
    const uint32_t *first = l->first;
    if ((mask & (mask - 1)) == 0) {              /* one child: no stack traffic */
        int i = (mask >> 1) - (mask >> 3);       /* 1, 2, 4, 8 -> 0, 1, 2, 3 */
        out->first = first[i];
        out->count = kcc_link_count(l, i);
        out->t = t[i];
        return sp;
    }
    int idx[4], n = 0;
    for (int i = 0; i < 4; ++i)
        if (mask >> i & 1)
            idx[n++] = i;
    /* Sort farthest first (ties: the higher slot first). */
    for (int a = 1; a < n; ++a) {
        int v = idx[a], b = a;
        while (b > 0 && (t[idx[b - 1]] < t[v] || (t[idx[b - 1]] == t[v] && idx[b - 1] < v))) {
            idx[b] = idx[b - 1];
            --b;
        }
        idx[b] = v;
    }
    for (int k = 0; k < n - 1; ++k) {
        stack[sp].first = first[idx[k]];
        stack[sp].count = kcc_link_count(l, idx[k]);
        stack[sp].t = t[idx[k]];
        ++sp;
    }
    out->first = first[idx[n - 1]];
    out->count = kcc_link_count(l, idx[n - 1]);
    out->t = t[idx[n - 1]];
    return sp;
}

/// kcc_descend_links over the children of float group q.
KCC_HOT uint32_t kcc_descend(kcc_stack_entry *stack, uint32_t sp, const kcc_node4 *q, int mask,
                             const float t[4], kcc_stack_entry *out)
{
    const kcc_links l = {q->first, q->count, NULL};
    return kcc_descend_links(stack, sp, &l, mask, t, out);
}

/// Visits one leaf of a nearest-first walk (triangles first .. first + count - 1 in leaf order) and
/// returns the walk's new limit: children entered beyond it are neither tested nor popped.
typedef float (*kcc_leaf_visit)(void *ctx, uint32_t first, uint32_t count);

/// The slab test of group g of a walk's groups (kcc_pray_test's mask and distances) and its links:
/// kcc_node4_ray for float groups, kcc_mesh_group_ray for a tree mesh's.
typedef int (*kcc_group_ray)(const void *groups, uint32_t g, const kcc_pray *r, float tmax,
                             float out_t[4], kcc_links *links);

KCC_HOT int kcc_node4_ray(const void *groups, uint32_t g, const kcc_pray *r, float tmax,
                          float out_t[4], kcc_links *links)
{
    const kcc_node4 *q = &((const kcc_node4 *)groups)[g];
    links->first = q->first;
    links->count = q->count;
    links->count8 = NULL;
    return kcc_pray_test(r, q, tmax, out_t);
}

/// The slab test of group g of the tree mesh `mesh` (not the root): on its decoded boxes for the
/// top groups (kcc_mesh.top; the same mask and distances as kcc_pray_qtest), in place otherwise.
KCC_HOT int kcc_mesh_group_ray(const void *mesh, uint32_t g, const kcc_pray *r, float tmax,
                               float out_t[4], kcc_links *links)
{
    const kcc_mesh *m = (const kcc_mesh *)mesh;
    const kcc_qnode4 *q = &m->groups[g];
    links->first = q->first;
    links->count = NULL;
    links->count8 = q->count;
    if (g - 1u < KCC_MESH_TOP_GROUPS)
        return kcc_pray_test_planes(r, &m->top[g - 1u], tmax, out_t);
    return kcc_pray_qtest(r, q, tmax, out_t);
}

/// The nearest-first tree walk of the ray cast and the box sweep: descends into the nearest child a
/// group's test enters within [0, limit], keeps the others on a fixed stack, and after each leaf
/// pops the nearest pending child not beyond the limit the leaf visit returned. The root group is
/// tested as the float group root (groups[0] itself, or a mesh's decoded copy: the same mask and
/// distances as its quantised test, kcc_pray_qtest); `groups` is what `test` reads the others from
/// (the float groups, or the mesh). Forced inline, so the group test and the
/// visit (constant functions) are inlined into each query.
KCC_HOT void kcc_walk_groups(const void *groups, const kcc_node4 *root, kcc_group_ray test,
                             const kcc_pray *r, float limit, kcc_leaf_visit visit, void *ctx)
{
    kcc_stack_entry stack[KCC_TREE_STACK], cur;
    kcc_links links;
    float entry_t[4];
    int mask = kcc_node4_ray(root, 0, r, limit, entry_t, &links);
    if (mask == 0)
        return;
    uint32_t sp = kcc_descend_links(stack, 0, &links, mask, entry_t, &cur);
    for (;;) {
        if (cur.count == 0) {
            mask = test(groups, cur.first, r, limit, entry_t, &links);
            if (mask != 0) {
                KCC_ASSERT(sp + 3 <= KCC_TREE_STACK);
                sp = kcc_descend_links(stack, sp, &links, mask, entry_t, &cur);
                continue;
            }
        } else {
            limit = visit(ctx, cur.first, cur.count);
        }
        do {
            if (sp == 0)
                return;
            cur = stack[--sp];
        } while (!(cur.t <= limit));
    }
}

/// kcc_walk_groups over float groups (the world's trees).
KCC_HOT void kcc_walk_nearest(const kcc_node4 *quads, const kcc_pray *r, float limit,
                              kcc_leaf_visit visit, void *ctx)
{
    kcc_walk_groups(quads, quads, kcc_node4_ray, r, limit, visit, ctx);
}

/// kcc_walk_groups over a tree mesh's groups.
KCC_HOT void kcc_mesh_walk_nearest(const kcc_mesh *mesh, const kcc_pray *r, float limit,
                                   kcc_leaf_visit visit, void *ctx)
{
    kcc_walk_groups(mesh, &mesh->root, kcc_mesh_group_ray, r, limit, visit, ctx);
}

/// Group g of a tree mesh decoded into *scratch (kcc_qnode4_decode): for the walks that read
/// boxes (the broadphase's pieces, mesh against mesh).
KCC_HOT const kcc_node4 *kcc_mesh_group(const kcc_mesh *mesh, uint32_t g, kcc_node4 *scratch)
{
    return kcc_qnode4_decode(&mesh->groups[g], scratch);
}

/// Bit i set when slot i of the group is an inner node (count == 0; empty slots too, which no
/// test ever selects).
KCC_HOT int kcc_inner_mask(const kcc_node4 *q)
{
#if KCC_SSE
    __m128i c = _mm_loadu_si128((const __m128i *)(const void *)q->count);
    return _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(c, _mm_setzero_si128())));
#else
    return (q->count[0] == 0 ? 1 : 0) | (q->count[1] == 0 ? 2 : 0) | (q->count[2] == 0 ? 4 : 0) |
           (q->count[3] == 0 ? 8 : 0);
#endif
}

/// Box query constants: the box, and for the quantised groups' test (kcc_pbox_qtest) its bounds
/// pushed outward past the next float (up above hi, down below lo: kcc_pbox_setup).
typedef struct kcc_pbox {
    float lo[3], hi[3];
#if KCC_SSE
    __m128 v_lo[3], v_hi[3];
    __m128 v_up, v_down;     ///< lanes 0..2: up and down; lane 3: 0
#else
    float up[3], down[3];
#endif
} kcc_pbox;

/// Infinite bounds are clamped to +-FLT_MAX (no triangle lies beyond): an empty child slot has
/// bounds +inf .. -inf and no first child, which an infinite query box would otherwise match (the
/// walk would then revisit the root for ever). NaN bounds stay NaN and match nothing.
static inline void kcc_pbox_setup(kcc_pbox *q, const float lo[3], const float hi[3])
{
    for (int k = 0; k < 3; ++k) {
        q->lo[k] = lo[k] < -FLT_MAX ? -FLT_MAX : lo[k];
        q->hi[k] = hi[k] > FLT_MAX ? FLT_MAX : hi[k];
    }
    /* up = hi + (|hi| 2^-23 + 2^-149) is at least the float above hi: that float lies at most
     * ulp(hi) above hi, ulp(hi) <= |hi| 2^-23 for a normal hi (a float at most that, so the
     * product's rounding keeps it below), ulp = 2^-149 for a subnormal one or zero, and rounding is
     * monotone. Likewise down below lo. A NaN bound becomes up = -inf (down = +inf): no group's
     * child passes, as no decoded box overlaps a NaN box. */
#if KCC_SSE
    for (int k = 0; k < 3; ++k) {
        q->v_lo[k] = _mm_set1_ps(q->lo[k]);
        q->v_hi[k] = _mm_set1_ps(q->hi[k]);
    }
    const __m128 mag = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff));
    const __m128 hi4 = _mm_setr_ps(q->hi[0], q->hi[1], q->hi[2], 0.0f);
    const __m128 lo4 = _mm_setr_ps(q->lo[0], q->lo[1], q->lo[2], 0.0f);
    const __m128 rel = _mm_set1_ps(0x1p-23f), tiny = _mm_set1_ps(0x1p-149f);
    const __m128 up = _mm_add_ps(hi4, _mm_add_ps(_mm_mul_ps(_mm_and_ps(hi4, mag), rel), tiny));
    const __m128 down = _mm_sub_ps(lo4, _mm_add_ps(_mm_mul_ps(_mm_and_ps(lo4, mag), rel), tiny));
    q->v_up = _mm_max_ps(up, _mm_set1_ps(-INFINITY));      /* NaN -> -inf */
    q->v_down = _mm_min_ps(down, _mm_set1_ps(INFINITY));   /* NaN -> +inf */
#else
    for (int k = 0; k < 3; ++k) {
        const float up = q->hi[k] + (fabsf(q->hi[k]) * 0x1p-23f + 0x1p-149f);
        const float down = q->lo[k] - (fabsf(q->lo[k]) * 0x1p-23f + 0x1p-149f);
        q->up[k] = up > -INFINITY ? up : -INFINITY;
        q->down[k] = down < INFINITY ? down : INFINITY;
    }
#endif
}

/// Bit i set when box i of four overlaps the query box (touching counts); the four boxes' bounds
/// along each axis are given as four minima (xlo, ...) and four maxima (xhi, ...).
static inline int kcc_pbox_test4(const kcc_pbox *q, const float xlo[4], const float xhi[4],
                                 const float ylo[4], const float yhi[4], const float zlo[4],
                                 const float zhi[4])
{
#if KCC_SSE
    __m128 m = _mm_and_ps(_mm_cmple_ps(_mm_loadu_ps(xlo), q->v_hi[0]),
                          _mm_cmpge_ps(_mm_loadu_ps(xhi), q->v_lo[0]));
    m = _mm_and_ps(m, _mm_and_ps(_mm_cmple_ps(_mm_loadu_ps(ylo), q->v_hi[1]),
                                 _mm_cmpge_ps(_mm_loadu_ps(yhi), q->v_lo[1])));
    m = _mm_and_ps(m, _mm_and_ps(_mm_cmple_ps(_mm_loadu_ps(zlo), q->v_hi[2]),
                                 _mm_cmpge_ps(_mm_loadu_ps(zhi), q->v_lo[2])));
    return _mm_movemask_ps(m);
#else
    int mask = 0;
    for (int i = 0; i < 4; ++i) {
        bool in = xlo[i] <= q->hi[0] && xhi[i] >= q->lo[0] && ylo[i] <= q->hi[1] &&
                  yhi[i] >= q->lo[1] && zlo[i] <= q->hi[2] && zhi[i] >= q->lo[2];
        mask |= in ? 1 << i : 0;
    }
    return mask;
#endif
}

/// Bit i set when child i's box overlaps the query box (touching counts).
KCC_HOT int kcc_pbox_test(const kcc_pbox *q, const kcc_node4 *n)
{
    return kcc_pbox_test4(q, n->x[0], n->x[1], n->y[0], n->y[1], n->z[0], n->z[1]);
}

/* The quantised groups' box test: the query box brought into the group's frame (kcc_pbox_qtest).
 * Along axis k (base b, step s = 2^(e - 127), inv = 1 / s, exact) the decoded test passes child i
 * when fl(b + lo_i s) <= hi and fl(b + hi_i s) >= lo (lo_i, hi_i its step counts). Rounding is
 * monotone, so fl(x) <= hi implies x <= up (the float above hi; x > up would give
 * fl(x) >= up > hi), and likewise fl(x) >= lo implies x >= down. Let d = fl(up - b), r = up - b
 * exactly. When |d| <= 2^9 s, |r - d| <= ulp(d) / 2 <= 2^-15 s, so a passing child has
 * lo_i <= r / s <= d inv + 2^-15 (d inv is exact: inv is a power of two; a product that
 * underflows lies below 2^-126, where lo_i <= 0 follows all the same), hence
 * lo_i <= fl(d inv + 2^-15) =: U (monotone again, and lo_i is a float). When d > 2^9 s, U > 2^9
 * passes every child. With d' = fl(down - b) the hi side gives hi_i >= fl(d' inv - 2^-15) =: W the
 * same way (when d' < -2^9 s, W < -2^9 passes every child). So child i passes when lo_i <= U and
 * hi_i >= W on all three axes, compared in float: every child the decoded test passes, and the
 * others only when the box falls short of them by less than 2^-14 s plus a rounding
 * (quantised_box_test_passes_the_decoded_boxes_and_few_more). An infinite or overflowing U (W)
 * passes every child; a NaN box bound is -inf as up (+inf as down: kcc_pbox_setup), whose U (W)
 * passes none. One exception: where hi_i s overflows float (steps of 2^121 and more: a group
 * spanning more than 3.39e38) the decoded hi is +inf, and the test reads the real bound
 * b + hi_i s instead, which the encoder (qnode_reaches) makes cover the exact box too.
 * inv = 2^(127 - e) is the float whose exponent field is 254 - e: normal, since the encoder's steps
 * are at most 2^122 (a group spans less than 2^129, so e <= 249) and kcc_mesh_validate rejects
 * e > 253. */
#define KCC_QBOX_SLACK 0x1p-15f

/// Bit i set when live child i's box overlaps the query box, for every child whose decoded box
/// (kcc_qnode4_decode) does (kcc_pbox_test on it), and perhaps a child the box misses by less than
/// a step's 2^-14 (the frame test above).
KCC_HOT int kcc_pbox_qtest(const kcc_pbox *q, const kcc_qnode4 *g)
{
#if KCC_SSE
    const __m128 head = _mm_loadu_ps(g->base);
    /* lane k: inv = 2^(127 - e_k), the float whose exponent field is 254 - e_k (lane 3 unused) */
    const __m128i e = kcc_qnode4_exponents(g);
    const __m128 inv = _mm_castsi128_ps(_mm_slli_epi32(_mm_sub_epi32(_mm_set1_epi32(254), e), 23));
    const __m128 slack = _mm_set1_ps(KCC_QBOX_SLACK);
    const __m128 u = _mm_add_ps(_mm_mul_ps(_mm_sub_ps(q->v_up, head), inv), slack);
    const __m128 w = _mm_sub_ps(_mm_mul_ps(_mm_sub_ps(q->v_down, head), inv), slack);
    const __m128 ux = _mm_shuffle_ps(u, u, 0x00), wx = _mm_shuffle_ps(w, w, 0x00);
    const __m128 uy = _mm_shuffle_ps(u, u, 0x55), wy = _mm_shuffle_ps(w, w, 0x55);
    const __m128 uz = _mm_shuffle_ps(u, u, 0xAA), wz = _mm_shuffle_ps(w, w, 0xAA);
    __m128 pass = _mm_and_ps(_mm_cmple_ps(kcc_qnode4_counts(g->q[0][0]), ux),
                             _mm_cmpge_ps(kcc_qnode4_counts(g->q[0][1]), wx));
    pass = _mm_and_ps(pass, _mm_and_ps(_mm_cmple_ps(kcc_qnode4_counts(g->q[1][0]), uy),
                                       _mm_cmpge_ps(kcc_qnode4_counts(g->q[1][1]), wy)));
    pass = _mm_and_ps(pass, _mm_and_ps(_mm_cmple_ps(kcc_qnode4_counts(g->q[2][0]), uz),
                                       _mm_cmpge_ps(kcc_qnode4_counts(g->q[2][1]), wz)));
    return _mm_movemask_ps(pass) & g->slots;
#else
    int mask = g->slots;
    for (int k = 0; k < 3; ++k) {
        uint32_t field = 254u - g->exp[k];
        field <<= 23;
        float inv;
        memcpy(&inv, &field, sizeof inv);
        const float u = (q->up[k] - g->base[k]) * inv + KCC_QBOX_SLACK;
        const float w = (q->down[k] - g->base[k]) * inv - KCC_QBOX_SLACK;
        for (int i = 0; i < 4; ++i)
            if (!((float)g->q[k][0][i] <= u && (float)g->q[k][1][i] >= w))
                mask &= ~(1 << i);
    }
    return mask;
#endif
}

/// Bit i set when slot i of quantised group g is an inner node (count == 0; empty slots too,
/// which no test ever selects).
KCC_HOT int kcc_qnode4_inner_mask(const kcc_qnode4 *g)
{
#if KCC_SSE
    int32_t counts;
    memcpy(&counts, g->count, sizeof counts);
    const __m128i c = _mm_cvtsi32_si128(counts);
    return _mm_movemask_epi8(_mm_cmpeq_epi8(c, _mm_setzero_si128())) & 0xF;
#else
    return (g->count[0] == 0 ? 1 : 0) | (g->count[1] == 0 ? 2 : 0) | (g->count[2] == 0 ? 4 : 0) |
           (g->count[3] == 0 ? 8 : 0);
#endif
}

/// The box test of group g (not the root) of a tree mesh: in float on the decoded boxes of the top
/// groups (kcc_mesh.top), in the group's frame otherwise (kcc_pbox_qtest).
KCC_HOT int kcc_mesh_inner_group_box_test(const kcc_mesh *mesh, uint32_t g, const kcc_pbox *q)
{
    if (g - 1u < KCC_MESH_TOP_GROUPS) {
        const kcc_box4 *b = &mesh->top[g - 1u];
        return kcc_pbox_test4(q, b->x[0], b->x[1], b->y[0], b->y[1], b->z[0], b->z[1]);
    }
    return kcc_pbox_qtest(q, &mesh->groups[g]);
}

/// The box test of group g of a tree mesh (kcc_pbox_qtest), the root group's and the top groups' in
/// float on their decoded copies (kcc_mesh.root, kcc_mesh.top; kcc_pbox_test): every child whose
/// decoded box the box overlaps, as the quantised test passes them, without the few more that
/// test may pass.
KCC_HOT int kcc_mesh_group_box_test(const kcc_mesh *mesh, uint32_t g, const kcc_pbox *q)
{
    return g == 0 ? kcc_pbox_test(q, &mesh->root) : kcc_mesh_inner_group_box_test(mesh, g, q);
}

/* mesh.c */
/// A key no other build or change had: content folded with a process-wide stamp that every call
/// increments (atomically). Never 0.
uint64_t kcc_fresh_key(uint64_t content);
/// A triangle's plane as the mesh stores it (kcc_plane: the float cross product, normalised).
void kcc_tri_plane(const kcc_tri *t, kcc_plane *out);
/// Leaf-order slots (indices into mesh->tris) of the triangles whose bounds overlap [lo, hi], in
/// ascending order: one slot per set of duplicates. Returns how many there are; writes them only
/// when that is at most capacity. No argument checks: lo <= hi, finite.
uint32_t kcc_mesh_query_slots(const kcc_mesh *mesh, const float lo[3], const float hi[3],
                              uint32_t *out, uint32_t capacity);
/// The same over the subtree under one child of a group (its first and count: a leaf's slot range
/// when count > 0, else the group of an inner node): a piece of the mesh (the world's broadphase
/// splits large static bodies into pieces).
uint32_t kcc_mesh_query_slots_under(const kcc_mesh *mesh, uint32_t first, uint32_t count,
                                    const float lo[3], const float hi[3], uint32_t *out,
                                    uint32_t capacity);
/// Appends the duplicates listed beside tree slot s to out while there is room (out[found..capacity));
/// counts them all. Returns found plus their number.
uint32_t kcc_mesh_append_duplicates(const kcc_mesh *mesh, uint32_t s, uint32_t *out, uint32_t capacity,
                                    uint32_t found);
/// kcc_mesh_overlap_aabb reporting each set of duplicates by its representative alone: the move's
/// overlap query, so that a duplicate set pushes a box as its representative does.
uint32_t kcc_mesh_overlap_once(const kcc_mesh *mesh, const vec3 box[2], uint32_t *out_triangles,
                               uint32_t capacity);

/* ray.c */
/// Per-ray constants of the watertight test: the axis permutation (kz = largest |dir| component)
/// and the shear that maps the ray onto +z.
typedef struct kcc_ray_pre {
    float org[3];
    int   kx, ky, kz;
    float sx, sy, sz;
} kcc_ray_pre;
/// One ray's closest-hit cast through one mesh's leaves: the ray (borrowed origin and dir, in the
/// mesh's frame), its watertight constants and the best hit so far.
typedef struct kcc_ray_walk {
    const kcc_mesh *mesh;
    kcc_ray_pre     pre;
    const float    *origin;
    const float    *dir;
    float           max_t;
    float           best;        ///< distance of the best hit so far (max_t before any)
    uint32_t        best_slot;   ///< its leaf slot, UINT32_MAX before any
    uint32_t        best_id;     ///< its input index
} kcc_ray_walk;
/// Sets up the cast of origin + t dir (finite, dir non-zero), t in [0, max_t], through a tree mesh:
/// no hit yet.
void kcc_ray_walk_init(kcc_ray_walk *w, const kcc_mesh *mesh, const float origin[3],
                       const float dir[3], float max_t);
/// The mesh ray cast's leaf test on slots first .. first + count - 1: every triangle the watertight
/// test accepts becomes the best when its distance is below w->best, or equal with an input index
/// below w->best_id. Returns w->best.
float kcc_ray_walk_leaf(kcc_ray_walk *w, uint32_t first, uint32_t count);
/// kcc_ray_walk_leaf on the triangles in slots slots[0 .. count - 1] (any slots of the mesh, four
/// at a time). Returns w->best.
float kcc_ray_walk_slots(kcc_ray_walk *w, const uint32_t *slots, uint32_t count);
/// The hit record of w's best (w->best_slot valid) as kcc_mesh_raycast writes it.
void kcc_ray_walk_hit(const kcc_ray_walk *w, kcc_ray_hit *hit);
/// kcc_mesh_raycast without argument checks (origin and dir finite, dir non-zero, max_t >= 0) and
/// with the walk's limit given: the closest hit with t <= limit (limit <= max_t), ties to the
/// lowest input index; t is the accurate distance clamped to [0, max_t], as kcc_mesh_raycast
/// reports it. The world's ray cast passes its best distance so far over other bodies as limit.
bool kcc_mesh_raycast_internal(const kcc_mesh *mesh, const float origin[3], const float dir[3],
                               float max_t, float limit, kcc_ray_hit *hit);

/* sphere.c */
/// One swept sphere (seg zero, capsule false) or capsule: its start p0 and segment p1 - p0 in
/// double, its motion and radius, as kcc_mesh_sweep_sphere and kcc_mesh_sweep_capsule set it up.
typedef struct kcc_shape_sweep {
    double origin[3], seg[3], delta[3], radius;
    double reach;     ///< m: the largest |p0| + |seg| + |delta| + radius over the axes
    bool   capsule;
} kcc_shape_sweep;
/// Sets up the sweep; false on the mesh sweeps' bad input (a NaN or infinite coordinate, a radius
/// not finite and positive) or a zero delta (nothing approaches anything).
bool kcc_shape_sweep_setup(kcc_shape_sweep *s, const float p0[3], const float p1[3], float radius,
                           const float delta[3], bool capsule);
/// The contact of the sweep with triangle abc (not degenerate) exactly as kcc_tri_sweep_sphere
/// (or _capsule) reports it; hit->triangle is left as it is. False: no contact.
bool kcc_shape_sweep_tri(const kcc_shape_sweep *s, const float a[3], const float b[3],
                         const float c[3], kcc_sphere_hit *hit);
/// Triangle t (not degenerate) within radius of center, as kcc_tri_overlap_sphere decides it.
bool kcc_tri_within_sphere(const kcc_tri *t, const double center[3], double radius);

/* tri_box.c */
/// True when (b-a)x(c-a) computed in float is zero or not finite, or exactly zero in double: such
/// a triangle is never reported by any query.
bool kcc_tri_is_degenerate(const float a[3], const float b[3], const float c[3]);
/// Exact SAT test without the degenerate check (the mesh only stores live triangles).
bool kcc_tri_overlap_box_internal(const float a[3], const float b[3], const float c[3],
                                  const float lo[3], const float hi[3]);
#if KCC_SSE
/// The exact test for up to four triangles (n in 1..4) loaded as per-component vectors (A[k]:
/// component k of corner a in each lane, as kcc_tri4_load and kcc_mesh_tri4_load give them): float
/// SIMD with per-lane rounding bounds, undecided lanes redone by kcc_tri_overlap_box_internal (same
/// answers). Returns the mask of overlapping lanes.
int kcc_tri4_overlap_box_lanes(const __m128 A[3], const __m128 B[3], const __m128 C[3], uint32_t n,
                               const float lo[3], const float hi[3]);

/* Loads n (1..4) consecutive triangles as per-component vectors: A[k] holds corner a's component k
 * of each lane (missing lanes repeat the first triangle), likewise B and C. */
static inline void kcc_tri4_load(const kcc_tri *t, uint32_t n, __m128 A[3], __m128 B[3], __m128 C[3])
{
    const kcc_tri *p1 = n > 1 ? t + 1 : t, *p2 = n > 2 ? t + 2 : t, *p3 = n > 3 ? t + 3 : t;
    /* Rows of floats 0..3 and 4..7 of each record, transposed into per-component vectors. */
    __m128 r0 = _mm_loadu_ps(&t->v[0][0]), r1 = _mm_loadu_ps(&p1->v[0][0]);
    __m128 r2 = _mm_loadu_ps(&p2->v[0][0]), r3 = _mm_loadu_ps(&p3->v[0][0]);
    _MM_TRANSPOSE4_PS(r0, r1, r2, r3);          /* a.x a.y a.z b.x */
    __m128 s0 = _mm_loadu_ps(&t->v[1][1]), s1 = _mm_loadu_ps(&p1->v[1][1]);
    __m128 s2 = _mm_loadu_ps(&p2->v[1][1]), s3 = _mm_loadu_ps(&p3->v[1][1]);
    _MM_TRANSPOSE4_PS(s0, s1, s2, s3);          /* b.y b.z c.x c.y */
    A[0] = r0, A[1] = r1, A[2] = r2;
    B[0] = r3, B[1] = s0, B[2] = s1;
    C[0] = s2, C[1] = s3, C[2] = _mm_set_ps(p3->v[2][2], p2->v[2][2], p1->v[2][2], t->v[2][2]);
}

/// kcc_mesh_tri4_load_slots on a mesh with vertex tables, out of line (mesh.c): the four lanes'
/// slots, each corner decoded (kcc_mesh_table_vertex) and its components set lane by lane.
void kcc_mesh_tri4_load_tables(const kcc_mesh *mesh, const uint32_t slot[4], __m128 A[3],
                               __m128 B[3], __m128 C[3]);

/* The same from the mesh's slots slot[0 .. n - 1] (n = 1..4; lanes past n repeat slot[0]): each
 * corner's four vertices loaded as rows (x, y, z and the next float, which the padding after the
 * vertices keeps in bounds), transposed. */
static inline void kcc_mesh_tri4_load_slots(const kcc_mesh *mesh, const uint32_t *slot, uint32_t n,
                                            kcc_vertex_read read, __m128 A[3], __m128 B[3],
                                            __m128 C[3])
{
    const uint32_t s0 = slot[0], s1 = n > 1 ? slot[1] : s0, s2 = n > 2 ? slot[2] : s0;
    const uint32_t s3 = n > 3 ? slot[3] : s0;
    if (kcc_reads_tables(mesh, read)) {
        const uint32_t lanes[4] = {s0, s1, s2, s3};
        kcc_mesh_tri4_load_tables(mesh, lanes, A, B, C);
        return;
    }
    const float *v0 = kcc_mesh_block_verts(mesh, s0), *v1 = kcc_mesh_block_verts(mesh, s1);
    const float *v2 = kcc_mesh_block_verts(mesh, s2), *v3 = kcc_mesh_block_verts(mesh, s3);
    const uint8_t *k0 = mesh->corners[s0], *k1 = mesh->corners[s1], *k2 = mesh->corners[s2];
    const uint8_t *k3 = mesh->corners[s3];
    __m128 *out[3] = {A, B, C};
    for (int c = 0; c < 3; ++c) {
        __m128 r0 = _mm_loadu_ps(v0 + 3u * k0[c]), r1 = _mm_loadu_ps(v1 + 3u * k1[c]);
        __m128 r2 = _mm_loadu_ps(v2 + 3u * k2[c]), r3 = _mm_loadu_ps(v3 + 3u * k3[c]);
        _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
        out[c][0] = r0, out[c][1] = r1, out[c][2] = r2;
    }
}

/* The same from the mesh's consecutive slots s0 .. s0 + n - 1. */
static inline void kcc_mesh_tri4_load(const kcc_mesh *mesh, uint32_t s0, uint32_t n,
                                      kcc_vertex_read read, __m128 A[3], __m128 B[3], __m128 C[3])
{
    const uint32_t slot[4] = {s0, s0 + 1, s0 + 2, s0 + 3};
    kcc_mesh_tri4_load_slots(mesh, slot, n, read, A, B, C);
}

/// kcc_tri4_overlap_box_lanes of n (1..4) consecutive triangle records.
static inline int kcc_tri4_overlap_box(const kcc_tri *t, uint32_t n, const float lo[3],
                                       const float hi[3])
{
    __m128 A[3], B[3], C[3];
    kcc_tri4_load(t, n, A, B, C);
    return kcc_tri4_overlap_box_lanes(A, B, C, n, lo, hi);
}
#endif
/// The t_max a sweep passes kcc_tri_sweep_internal when its best contact so far is at best_t: a
/// hair past it, because the test rejects a contact whose entry fraction en/ed rounds to best_t
/// while en > best_t * ed rounds the other way; a tie must reach the caller's comparison, where
/// the lower index wins (sweep_ties_in_double_go_to_the_lowest_index_on_a_tiled_slope).
static inline double kcc_sweep_tie_limit(double best_t)
{
    const double limit = best_t * (1.0 + 0x1p-40);
    return limit < 1.0 ? limit : 1.0;
}

/// Swept SAT without argument checks. Box given as centre and half extents in double; contacts
/// later than t_max (<= 1) are not reported (the mesh and the world pass kcc_sweep_tie_limit of
/// their best time so far).
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
/// Builds the binary tree over prims[0..n) (n > 0; reordered in place into leaf order) into pairs
/// (room for n pairs). Returns the pair count; writes leaves and depth. Allocates nothing.
uint32_t kcc_tree_build(kcc_build_prim *prims, uint32_t n, kcc_node_pair *pairs,
                        uint32_t *out_leaves, uint32_t *out_depth);
/// Plans the collapse of the binary tree in pairs (pair_count pairs, as kcc_tree_build returns)
/// into four-wide groups: which inner nodes become groups, which are opened into their parent's and
/// which subtrees of at most KCC_LEAF_MAX triangles become one leaf, the choice that costs least in
/// the sum of each group's and leaf's area as a share of the root's times its tests, plus a fixed
/// cost a group for the memory it takes (a dynamic program over the tree: Ylitie, Karras and Laine,
/// "Efficient incoherent ray traversal on GPUs through compressed wide BVHs", 2017). cost is
/// scratch and plan the result, 2 * pair_count entries each. Keeps the slots' order. Allocates
/// nothing.
void kcc_tree_plan_collapse(const kcc_node_pair *pairs, uint32_t pair_count, float (*cost)[4],
                            uint8_t (*plan)[4]);
/// The plan's costs (tree.c explains and measures them): a group's beside its area's share, and a
/// four-triangle test's in group tests.
#define KCC_COLLAPSE_GROUP_COST 0.01f
#define KCC_COLLAPSE_TRI4_COST  4.0f
/// Collapses the binary tree into four-wide groups laid out depth first, as float groups (quads)
/// or quantised ones (qgroups); with both NULL it only counts. The groups follow plan
/// (kcc_tree_plan_collapse), or without one open the largest inner child first. stack needs room
/// for 2 entries per group. Returns the group count. Allocates nothing.
uint32_t kcc_tree_collapse(const kcc_node_pair *pairs, const uint8_t (*plan)[4], kcc_node4 *quads,
                           kcc_qnode4 *qgroups, uint32_t *stack);
/// Quantises float group *g (its n children in slots 0 .. n - 1, the others empty) into
/// *out, each decoded box containing the exact one (kcc_qnode4).
void kcc_qnode4_encode(const kcc_node4 *g, int n, kcc_qnode4 *out);

#endif
