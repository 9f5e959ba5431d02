/* kcc_collide.h: the triangle-mesh query layer: an immutable mesh with an AABB tree, closest-hit
 * ray casts, exact box overlap and swept-box queries, plus the per-triangle primitives they use. */
#ifndef KCC_COLLIDE_H
#define KCC_COLLIDE_H

#include "kcc_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/// A triangle soup with its AABB tree. Opaque, immutable once built; queries on one mesh are
/// safe to run from many threads at once and never allocate.
typedef struct kcc_mesh kcc_mesh;

/// How a mesh stores its vertices (kcc_mesh_desc.vertex_coding). Both answer every query on the
/// exact input floats, bit for bit alike; they differ in bytes and speed (docs/collide.md, Memory
/// layout).
typedef enum kcc_vertex_coding {
    /// KCC_VERTEX_FLOATS where the mesh takes at most KCC_MESH_BUDGET_BYTES_PER_TRIANGLE bytes a
    /// triangle with them, else KCC_VERTEX_TABLES where the tables make it smaller. Small meshes
    /// (a few hundred triangles) pass the budget more often; a world of many small bodies whose
    /// queries matter more than their bytes asks for KCC_VERTEX_FLOATS.
    KCC_VERTEX_AUTO = 0,
    /// Three floats a vertex: the fastest queries.
    KCC_VERTEX_FLOATS = 1,
    /// Each vertex as three indices, packed into the fewest whole bytes, into per-axis tables of
    /// the mesh's distinct coordinate values: 30-70% of the float vertices' bytes, rays and
    /// box queries 7-18% slower, sweeps 3-6%. Falls back to floats where an axis has more than
    /// 65,536 distinct values.
    KCC_VERTEX_TABLES = 2
} kcc_vertex_coding;

/// The bytes a triangle (kcc_mesh_memory_bytes / input triangles) within which KCC_VERTEX_AUTO
/// keeps float vertices: the memory the layout aims at (docs/collide.md, "Memory layout").
#define KCC_MESH_BUDGET_BYTES_PER_TRIANGLE 20u

/// What to build a mesh from. The arrays are borrowed for the duration of kcc_mesh_build only.
typedef struct kcc_mesh_desc {
    const float    *positions;       ///< x y z per vertex (m)
    uint32_t        vertex_count;
    uint32_t        vertex_stride;   ///< bytes between vertices; 0 means 12
    const uint32_t *indices;         ///< 3 per triangle; NULL: vertices 3i, 3i+1, 3i+2
    uint32_t        triangle_count;
    kcc_allocator   allocator;       ///< all zero: malloc/free
    kcc_vertex_coding vertex_coding; ///< 0 (KCC_VERTEX_AUTO): chosen by size; or force one
} kcc_mesh_desc;

/// Builds the mesh and its tree (binned SAH, deterministic). Copies what it needs. Degenerate
/// (zero-area) triangles are accepted and never reported by any query. Exact duplicates (the same
/// three corners in the same order, bit for bit) are stored once: the tree holds the lowest input
/// index of each set, so a query's cost does not grow with the copies; overlap and bounds queries
/// still report every copy, rays and sweeps the lowest index (their tie rule).
/// Errors: KCC_ERR_NULL_ARGUMENT (desc, out_mesh), KCC_ERR_NO_TRIANGLES (zero triangles, or only
/// degenerate ones), KCC_ERR_NO_VERTICES (positions NULL or no vertices), KCC_ERR_BAD_STRIDE,
/// KCC_ERR_INDEX_OUT_OF_RANGE, KCC_ERR_NON_FINITE (a NaN or infinite coordinate),
/// KCC_ERR_BAD_DESC (only one of the allocator's functions set, or a vertex_coding not in
/// kcc_vertex_coding), KCC_ERR_TOO_LARGE (over 2^30 triangles, or sizes that overflow),
/// KCC_ERR_OUT_OF_MEMORY.
KCC_API kcc_status kcc_mesh_build(const kcc_mesh_desc *desc, kcc_mesh **out_mesh);
/// Frees everything the mesh owns. NULL is fine.
KCC_API void       kcc_mesh_destroy(kcc_mesh *mesh);
KCC_API uint32_t   kcc_mesh_triangle_count(const kcc_mesh *mesh);
/// Every byte the mesh owns (vertices, tree, the struct itself).
KCC_API size_t     kcc_mesh_memory_bytes(const kcc_mesh *mesh);

/// Statistics of the built tree, for benchmarks and docs.
typedef struct kcc_mesh_stats {
    uint32_t triangles;        ///< input triangles
    uint32_t degenerate;       ///< zero-area triangles, kept out of every answer
    uint32_t nodes;            ///< tree nodes
    uint32_t leaves;
    uint32_t depth;            ///< longest root-to-leaf path (nodes)
    size_t   tree_bytes;       ///< tree nodes plus per-triangle index/reorder arrays
    size_t   vertex_bytes;     ///< triangle vertex data
    uint32_t duplicates;       ///< exact copies of an earlier triangle, stored once (see the build)
    kcc_vertex_coding vertex_coding; ///< what the build chose: KCC_VERTEX_FLOATS or _TABLES
    uint32_t axis_values[3];   ///< with tables: each axis's distinct coordinate values; else 0
} kcc_mesh_stats;
KCC_API void kcc_mesh_get_stats(const kcc_mesh *mesh, kcc_mesh_stats *out);

/// Checks the tree against the triangles it holds: every group well formed, every triangle of a
/// leaf inside every node box on the leaf's path, every non-degenerate triangle in exactly one leaf or
/// listed once as a duplicate of one there, no degenerate one in any, and no path deeper than the queries' fixed traversal stacks allow.
/// KCC_OK, KCC_ERR_NULL_ARGUMENT, or KCC_ERR_CORRUPT (the mesh's memory was overwritten: every
/// kcc_mesh_build result passes, and debug builds, with KCC_DEBUG defined, assert it after each
/// build). Linear in the triangle count; allocates nothing; safe beside queries on other threads.
KCC_API kcc_status kcc_mesh_validate(const kcc_mesh *mesh);

/// Bounds of all non-degenerate triangles (m). out[0] = min, out[1] = max.
KCC_API void kcc_mesh_bounds(const kcc_mesh *mesh, vec3 out[2]);

/// Copies triangle i's corners (input winding) into out. False when i is out of range.
KCC_API bool kcc_mesh_triangle(const kcc_mesh *mesh, uint32_t i, vec3 out[3]);

typedef struct kcc_ray_hit {
    float    t;          ///< hit point = origin + t * dir
    vec3     point;      ///< m
    vec3     normal;     ///< unit geometric normal, (b-a)x(c-a) normalised, as wound
    uint32_t triangle;   ///< input index
} kcc_ray_hit;

/// Closest hit with 0 <= t <= max_t, either face. dir need not be unit length but must be non-zero
/// and finite. Watertight: a ray through an edge or vertex shared by two triangles hits one of them.
/// Returns false (hit untouched) on a miss or invalid arguments. Ties go to the lowest triangle index.
KCC_API bool kcc_mesh_raycast(const kcc_mesh *mesh, const vec3 origin, const vec3 dir,
                      float max_t, kcc_ray_hit *hit);

/// Exact triangle/box intersection (13 separating axes; touching counts as overlap). Returns how many
/// triangles overlap the box; writes the first `capacity` of them. out_triangles may be NULL when
/// capacity is 0. Degenerate triangles are never reported.
KCC_API uint32_t kcc_mesh_overlap_aabb(const kcc_mesh *mesh, const vec3 box[2],
                               uint32_t *out_triangles, uint32_t capacity);

/// Bounds-only query: triangles whose bounding box overlaps `box` (a superset of the exact answer;
/// cheap candidate gathering). Same return convention as kcc_mesh_overlap_aabb.
KCC_API uint32_t kcc_mesh_query_bounds(const kcc_mesh *mesh, const vec3 box[2],
                               uint32_t *out_triangles, uint32_t capacity);

/// First contact of a box translated along delta.
typedef struct kcc_sweep_hit {
    float    t;          ///< fraction of delta in [0, 1] at first contact
    vec3     normal;     ///< unit contact normal (separating axis), pointing from the triangle to the box
    uint32_t triangle;   ///< input index
    bool     start_overlap; ///< the box already overlapped this triangle at t = 0
} kcc_sweep_hit;

/// Sweeps `box` along `delta` (m) and reports the earliest triangle it would touch, exactly (the swept
/// separating-axis test over the same 13 axes). Only approaching contacts count: a triangle whose contact
/// normal n has dot(n, delta) >= 0 is ignored. A triangle the box already overlaps at t = 0 is reported
/// at t = 0 with start_overlap and the axis of least penetration as normal, if delta pushes deeper
/// along that axis (dot(normal, delta) < -1e-6 |delta|); otherwise it is ignored. Ties go to the lowest triangle index. False on no contact.
KCC_API bool kcc_mesh_sweep_aabb(const kcc_mesh *mesh, const vec3 box[2], const vec3 delta,
                         kcc_sweep_hit *hit);

/// First contact of a sphere (or a capsule) translated along delta.
typedef struct kcc_sphere_hit {
    float    t;              ///< fraction of delta in [0, 1] at first contact
    vec3     point;          ///< m: the contact point on the triangle
    vec3     normal;         ///< unit: from the contact point toward the sphere's centre (the
                             ///< capsule's segment)
    uint32_t triangle;       ///< input index
    bool     start_overlap;  ///< the sphere overlapped (or touched) this triangle at t = 0
} kcc_sphere_hit;

/// Sweeps the sphere (`center`, `radius`, m) along `delta` (m) and reports the earliest triangle it
/// touches, either face, exactly (Fauerby: the plane, then the three vertices and three edges as
/// quadratics; in double). A sphere already touching or overlapping a triangle at t = 0 is reported
/// at t = 0 with start_overlap when delta goes deeper: dot(normal, delta) < -1e-6 |delta|, normal
/// from the closest point of the triangle toward the centre (the face normal against delta when the
/// centre lies on the triangle); otherwise that triangle is ignored (it can only get farther).
/// Ties (equal reported t) go to the lowest triangle index. False (hit untouched) on no contact, a
/// zero delta, or bad input: NULL, NaN or infinite coordinates, radius <= 0, NaN or infinite.
/// Never allocates; safe from many threads. For the third-person camera that pulls in before a
/// wall, a projectile with a radius.
KCC_API bool kcc_mesh_sweep_sphere(const kcc_mesh *mesh, const vec3 center, float radius,
                                   const vec3 delta, kcc_sphere_hit *hit);

/// Sweeps the capsule (the segment p0..p1 plus `radius`, m) along `delta` (m): the earliest contact,
/// with the conventions of kcc_mesh_sweep_sphere (normal from the contact point toward the closest
/// point of the capsule's segment; start_overlap when the segment is within radius of a triangle at
/// t = 0 and delta goes deeper). p0 == p1 is a sphere. Same bad-input rules.
KCC_API bool kcc_mesh_sweep_capsule(const kcc_mesh *mesh, const vec3 p0, const vec3 p1,
                                    float radius, const vec3 delta, kcc_sphere_hit *hit);

/// Triangles within `radius` of `center` (point-to-triangle distance <= radius in double: touching
/// counts). Returns how many; writes the first `capacity` of them (any order). out_triangles may be
/// NULL when capacity is 0. Bad input (as for the sweep) returns 0. An explosion's reach.
KCC_API uint32_t kcc_mesh_overlap_sphere(const kcc_mesh *mesh, const vec3 center, float radius,
                                         uint32_t *out_triangles, uint32_t capacity);

/// What to build a heightfield from (kcc_heightfield_build). Y is up: sample (i, j), i along x and
/// j along z, is the corner (origin[0] + i * spacing[0], origin[1] + heights[j * columns + i],
/// origin[2] + j * spacing[1]), each operation in float. The arrays are borrowed for the build only.
typedef struct kcc_heightfield_desc {
    const float   *heights;     ///< columns * rows heights (m), row-major: row j is z = j
    uint32_t       columns;     ///< samples along x (>= 2)
    uint32_t       rows;        ///< samples along z (>= 2)
    float          spacing[2];  ///< x and z distance between samples (m, > 0)
    vec3           origin;      ///< m: where sample (0, 0) lies at height 0
    const uint8_t *holes;       ///< NULL, or one byte per cell ((columns - 1) * (rows - 1),
                                ///< row-major): nonzero makes the cell a hole (no triangles)
    kcc_allocator  allocator;   ///< all zero: malloc/free
} kcc_heightfield_desc;

/// Builds a heightfield: a kcc_mesh of two triangles per cell, answered from the grid (4 bytes a
/// sample plus a min/max pyramid, docs/collide.md "Heightfields") exactly as kcc_mesh_build answers
/// the same triangles. Usable wherever a mesh is: every kcc_mesh_* query and accessor, characters,
/// kcc_mesh_destroy. Cell (i, j) (i < columns - 1, j < rows - 1) is c = j * (columns - 1) + i; its
/// triangles are 2c = (p(i,j), p(i,j+1), p(i+1,j+1)) and 2c + 1 = (p(i,j), p(i+1,j+1), p(i+1,j)),
/// split along the diagonal p(i,j)..p(i+1,j+1) and wound so that (b-a)x(c-a) points up (+y). A
/// hole cell's two triangles do not exist (kcc_mesh_triangle is false for them; no query reports
/// them). kcc_mesh_overlap_mesh takes a heightfield on either side or both and reports what the
/// tree mesh of the same triangles would; kcc_mesh_self_intersections gives 0 for one (its cells
/// never cut each other). A heightfield is a world body like any mesh (kcc_world_add_body: static
/// or kinematic, any transform).
/// Errors: KCC_ERR_NULL_ARGUMENT (desc, out_mesh), KCC_ERR_NO_VERTICES (heights NULL),
/// KCC_ERR_NO_TRIANGLES (columns or rows below 2, or every cell a hole), KCC_ERR_NON_FINITE (a NaN
/// or infinite height, spacing or origin, or a corner height that overflows), KCC_ERR_BAD_DESC
/// (spacing <= 0, only one of the allocator's functions set, or a cell whose triangles float
/// cannot represent: spacing below the coordinates' precision, or heights whose cross products
/// overflow), KCC_ERR_TOO_LARGE (over 2^30 triangles), KCC_ERR_OUT_OF_MEMORY.
KCC_API kcc_status kcc_heightfield_build(const kcc_heightfield_desc *desc, kcc_mesh **out_mesh);

/* Per-triangle primitives (the exact tests the mesh queries use; handy for tests and tools). */

/// Exact SAT overlap of triangle abc with box (touching counts). Degenerate triangles never overlap.
KCC_API bool kcc_tri_overlap_aabb(const vec3 a, const vec3 b, const vec3 c, const vec3 box[2]);
/// Watertight ray/triangle intersection (either face); writes t on a hit with 0 <= t <= max_t.
KCC_API bool kcc_tri_raycast(const vec3 a, const vec3 b, const vec3 c, const vec3 origin, const vec3 dir,
                     float max_t, float *out_t);
/// Exact triangle/triangle intersection (either face; touching counts, coplanar overlaps too):
/// every orientation sign is decided exactly from the float corners. On an intersection writes
/// to out_segment (may be NULL) where the two cut each other: the segment's two ends, or for a
/// coplanar overlap two points of the overlap region (its farthest pair of boundary points), in
/// double rounded to float. Degenerate triangles (kcc_tri_is_degenerate's rule) never intersect.
KCC_API bool kcc_tri_intersect_tri(const vec3 a0, const vec3 a1, const vec3 a2, const vec3 b0,
                                   const vec3 b1, const vec3 b2, vec3 out_segment[2]);
/// Swept box vs one triangle, same semantics as kcc_mesh_sweep_aabb.
KCC_API bool kcc_tri_sweep_aabb(const vec3 a, const vec3 b, const vec3 c, const vec3 box[2],
                        const vec3 delta, float *out_t, vec3 out_normal, bool *out_start_overlap);

/// Swept sphere vs one triangle, same semantics as kcc_mesh_sweep_sphere; out_hit->triangle is 0.
/// Degenerate triangles never touch.
KCC_API bool kcc_tri_sweep_sphere(const vec3 a, const vec3 b, const vec3 c, const vec3 center,
                                  float radius, const vec3 delta, kcc_sphere_hit *out_hit);
/// Swept capsule vs one triangle, same semantics as kcc_mesh_sweep_capsule; out_hit->triangle is 0.
KCC_API bool kcc_tri_sweep_capsule(const vec3 a, const vec3 b, const vec3 c, const vec3 p0,
                                   const vec3 p1, float radius, const vec3 delta,
                                   kcc_sphere_hit *out_hit);
/// Point-to-triangle distance <= radius, in double (touching counts). Degenerate triangles never
/// overlap.
KCC_API bool kcc_tri_overlap_sphere(const vec3 a, const vec3 b, const vec3 c, const vec3 center,
                                    float radius);
/* Mesh against mesh (collide/mesh_mesh.c). kcc_transform is the world's placement (kcc_world.h);
 * declared here as well so this header stands alone. */
typedef struct kcc_transform kcc_transform;

/// Two triangles that intersect: one of each mesh, or two of one mesh.
typedef struct kcc_tri_pair {
    uint32_t a, b;           ///< input indices in the first and the second mesh
    vec3     segment[2];     ///< m, world frame: where the two triangles cut each other
                             ///< (for coplanar overlaps: two points of the overlap)
} kcc_tri_pair;

/// Every pair of intersecting triangles of two placed meshes (touching counts): a's triangles
/// placed by pose_a, b's by pose_b, each corner by kcc_transform_point's float arithmetic (a NULL
/// pose is the identity; the rotation need not be exactly unit: the corners are placed as that
/// arithmetic places them), then tested exactly (kcc_tri_intersect_tri). A mesh's degenerate
/// triangles (zero area as built) never pair, even where placement rounds their corners apart,
/// nor do live ones that placement flattens. Returns how many pairs intersect, all of them
/// whatever the capacity (the count saturates at UINT32_MAX), and writes the first `capacity` in
/// ascending (a, b) order: capacity 1 gives the lowest pair, not an early stop. out_pairs NULL or
/// capacity 0: count only. Exact duplicates are reported as themselves. A NULL mesh or a pose with
/// a NaN or infinite component: 0. The two trees are walked together, node pairs culled by a
/// conservative 15-axis oriented-box test (docs/collide.md, "Mesh against mesh"). Allocates
/// nothing (about 45 KB of stack, 11 KB more with a heightfield); safe from many threads at once.
KCC_API uint32_t kcc_mesh_overlap_mesh(const kcc_mesh *a, const kcc_transform *pose_a,
                                       const kcc_mesh *b, const kcc_transform *pose_b,
                                       kcc_tri_pair *out_pairs, uint32_t capacity);

/// A mesh's self-intersections, what a level's author wants found before shipping: every pair
/// a < b of its triangles that cut each other, that is meet anywhere other than only at the
/// corners or the edge they share (corners compare by coordinates, the mesh keeps no indices).
/// So adjacent triangles are not reported, but two coplanar ones folded onto one side of their
/// common edge are. Pairs with the same three corners (duplicate faces, either winding) are not
/// reported either: kcc-check lists them as duplicates. segment as kcc_mesh_overlap_mesh's; the
/// same return, order and capacity rules. NULL mesh: 0. Allocates nothing; thread-safe.
KCC_API uint32_t kcc_mesh_self_intersections(const kcc_mesh *mesh, kcc_tri_pair *out_pairs,
                                             uint32_t capacity);

#ifdef __cplusplus
}
#endif
#endif
