/* collide_internal.h: the private layout of kcc_mesh (32-byte tree nodes, triangles stored in leaf
 * order) and the per-triangle kernels shared by mesh.c, tree.c, ray.c and tri_box.c. Never installed. */
#ifndef KCC_COLLIDE_INTERNAL_H
#define KCC_COLLIDE_INTERNAL_H

#include "kcc_collide.h"

/// Traversal stack size (entries). The builder guarantees depth <= KCC_TREE_MAX_DEPTH, and a
/// traversal never holds more than one pending entry per level, so the stack cannot overflow.
#define KCC_TREE_STACK      64
/// Deepest tree the builder produces (nodes on a root-to-leaf path, root = 1). Below
/// KCC_TREE_SAH_DEPTH the builder uses SAH; deeper it halves ranges (object median), which adds at
/// most 31 levels for 2^31 triangles, so depth stays <= KCC_TREE_SAH_DEPTH + 32 < KCC_TREE_STACK.
#define KCC_TREE_SAH_DEPTH  28
#define KCC_TREE_MAX_DEPTH  (KCC_TREE_SAH_DEPTH + 32)
/// Most triangles one leaf holds.
#define KCC_LEAF_MAX        8
/// Ranges this small are never split.
#define KCC_LEAF_MIN        4
/// Largest triangle count accepted (node indices are 32-bit, 2n - 1 nodes).
#define KCC_MESH_MAX_TRIANGLES (1u << 30)

/// One tree node: bounds plus either two children (count == 0: children are nodes[first] and
/// nodes[first + 1]) or a leaf (count > 0: triangles first .. first + count - 1 in leaf order).
typedef struct kcc_node {
    float    lo[3];   ///< m
    uint32_t first;   ///< leaf: first triangle (leaf order); inner: index of the left child
    float    hi[3];   ///< m
    uint32_t count;   ///< leaf: triangle count (1..KCC_LEAF_MAX); inner: 0
} kcc_node;
_Static_assert(sizeof(kcc_node) == 32, "tree node must be 32 bytes");

/// Triangle corners in leaf order: a, b, c as wound in the input.
typedef struct kcc_tri {
    float v[3][3];    ///< m
} kcc_tri;
_Static_assert(sizeof(kcc_tri) == 36, "triangle record must be 36 bytes");

struct kcc_mesh {
    kcc_allocator   allocator;     ///< the one used to build (resolved: never NULL functions)
    size_t          block_bytes;   ///< bytes of the single allocation holding everything
    kcc_node       *nodes;         ///< node_count nodes, root = nodes[0]
    kcc_tri        *tris;          ///< triangle_count triangles: the tree's first, degenerate last
    uint32_t       *tri_id;        ///< leaf order -> input index (triangle_count entries)
    uint32_t       *tri_slot;      ///< input index -> leaf order (triangle_count entries)
    uint32_t        triangle_count;
    uint32_t        tree_triangles;///< non-degenerate triangles (the ones the tree holds)
    uint32_t        node_count;
    uint32_t        leaf_count;
    uint32_t        depth;
    float           bounds[2][3];  ///< of the tree's triangles; max < min when there are none
    float           coord_scale;   ///< largest |coordinate| of any tree triangle (m)
};

/* tri_box.c */
/// True when (b-a)x(c-a) computed in float is zero or not finite: never reported by any query.
bool kcc_tri_is_degenerate(const float a[3], const float b[3], const float c[3]);
/// Exact SAT test without the degenerate check (the mesh only stores live triangles).
bool kcc_tri_overlap_box_internal(const float a[3], const float b[3], const float c[3],
                                  const float lo[3], const float hi[3]);
/// Swept SAT without argument checks. Box given as centre and half extents in double.
bool kcc_tri_sweep_internal(const float a[3], const float b[3], const float c[3],
                            const double center[3], const double half[3], const double delta[3],
                            double *out_t, double out_normal[3], bool *out_start);

/* tree.c */
/// One build primitive: a triangle's bounds and its slot in the live-triangle array.
typedef struct kcc_build_prim {
    float    lo[3];
    uint32_t id;      ///< input triangle index (also the builder's final tie-break key)
    float    hi[3];
    float    pad;     ///< 0
} kcc_build_prim;
_Static_assert(sizeof(kcc_build_prim) == 32, "build prim must be 32 bytes");
/// Builds the tree over prims[0..n) (reordered in place into leaf order) into nodes (room for
/// 2n - 1). Returns the node count; writes leaves and depth. Allocates nothing.
uint32_t kcc_tree_build(kcc_build_prim *prims, uint32_t n, kcc_node *nodes,
                        uint32_t *out_leaves, uint32_t *out_depth);

#endif
