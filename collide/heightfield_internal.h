/* heightfield_internal.h: the private layout of a heightfield mesh (a grid of heights with a min/max
 * pyramid over 8 x 8-cell blocks) and the walks the mesh queries dispatch to. Never installed. */
#ifndef KCC_HEIGHTFIELD_INTERNAL_H
#define KCC_HEIGHTFIELD_INTERNAL_H

#include "collide_internal.h"

/// Cells per block side: a block's 64 cells are culled by one stored height range.
#define KCC_HF_BLOCK       8
/// Triangles one batch holds: one block's.
#define KCC_HF_BATCH       (2 * KCC_HF_BLOCK * KCC_HF_BLOCK)
/// Pyramid levels at most (level 0: the blocks; each level above halves both counts).
#define KCC_HF_MAX_LEVELS  32

/// A heightfield's grid, in the mesh's single block beside the struct kcc_mesh that points at it.
/// Sample (i, j) is the corner (origin x + i * spacing x, y[j * columns + i], origin z + j *
/// spacing z), each sum in float; y holds origin y + the input height, in float.
struct kcc_hf {
    uint32_t        columns, rows;        ///< samples along x and z (>= 2)
    uint32_t        cells_x, cells_z;     ///< columns - 1, rows - 1
    float           origin[3];            ///< m
    float           spacing[2];           ///< x, z (m, > 0)
    const float    *y;                    ///< columns * rows corner heights (m), row-major
    const uint32_t *holes;                ///< bit c of the cells (row-major) set: cell c is a hole;
                                          ///< NULL when there is none
    uint32_t        levels;               ///< pyramid levels; the top one is a single node
    uint32_t        level_w[KCC_HF_MAX_LEVELS], level_h[KCC_HF_MAX_LEVELS];
    const float    *range[KCC_HF_MAX_LEVELS]; ///< level l: (min, max) y per node, row-major;
                                          ///< (+inf, -inf) where every cell under it is a hole
};

/// A batch of a heightfield's triangles seen as a tree mesh's leaf: the walks' visitors read
/// slots 0..n of view.mesh (corners and tri_id) as they read a leaf's slots; the records in tris
/// are the view mesh's vertices.
typedef struct kcc_hf_view {
    kcc_mesh mesh;
    kcc_tri  tris[KCC_HF_BATCH];
    uint32_t ids[KCC_HF_BATCH];
} kcc_hf_view;

/// Sets the view up for heightfield mesh hf; returns &view->mesh (what a walk's state points at).
const kcc_mesh *kcc_hf_view_init(kcc_hf_view *view, const kcc_mesh *hf);

/// The counterpart of kcc_walk_nearest: descends the pyramid nearest first by the same slab test,
/// gathers the cells of each block the slab enters within the limit into the view (ascending
/// triangle ids), and calls visit(ctx, 0, n) on them; the limit it returns prunes the rest.
void kcc_hf_walk_nearest(const kcc_mesh *mesh, kcc_hf_view *view, const kcc_pray *r, float limit,
                         kcc_leaf_visit visit, void *ctx);
/// Every live triangle, batch by batch, visit(ctx, 0, n) (the far-reach fallbacks of the sweeps).
void kcc_hf_visit_all(const kcc_mesh *mesh, kcc_hf_view *view, kcc_leaf_visit visit, void *ctx);

/// The cells under a box, row by row: the box queries' candidates in ascending triangle order.
typedef struct kcc_hf_box_iter {
    const kcc_mesh *mesh;
    float           lo[3], hi[3];
    uint32_t        i0, i1, j1;     ///< cells [i0, i1) of rows up to j1 (exclusive)
    uint32_t        i, j;           ///< the next cell
} kcc_hf_box_iter;
/// Starts at the cells under [lo, hi] (finite or clamped to +-FLT_MAX, lo <= hi).
void kcc_hf_box_begin(kcc_hf_box_iter *it, const kcc_mesh *mesh, const float lo[3], const float hi[3]);
/// Fills the view with the next batch: the triangles of the live cells whose box overlaps the query
/// box, ascending ids. Returns how many (0: done).
uint32_t kcc_hf_box_next(kcc_hf_box_iter *it, kcc_hf_view *view);

/// Triangle id's corners; false for an id out of range or in a hole.
bool kcc_hf_triangle(const kcc_mesh *mesh, uint32_t id, kcc_tri *out);
/// kcc_mesh_get_stats and kcc_mesh_validate of a heightfield.
void kcc_hf_stats(const kcc_mesh *mesh, kcc_mesh_stats *out);
kcc_status kcc_hf_validate(const kcc_mesh *mesh);

#endif
