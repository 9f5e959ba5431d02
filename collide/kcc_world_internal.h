/* kcc_world_internal.h: the private layout of kcc_world (bodies with their poses, ids, the body
 * tree the queries walk) and the pose arithmetic every world file shares. Never installed. */
#ifndef KCC_WORLD_INTERNAL_H
#define KCC_WORLD_INTERNAL_H

#include "collide_internal.h"
#include "kcc_broadphase_internal.h"
#include "kcc_world.h"


/// A live body's triangle range, in the table sorted by base (the order bodies were added in).
typedef struct kcc_body_base {
    uint32_t base;
    uint32_t slot;
} kcc_body_base;

/// A transform with its rotation as a matrix (rows), derived once per pose: every placed point is
/// m * p + position in float, in the order kcc_pose_point fixes, so each body's placed triangles
/// are the same bits whichever query or build computes them.
typedef struct kcc_pose {
    kcc_transform transform;
    float         m[3][3];
    bool          rotated;    ///< false: m is the identity (the rotation is exactly 0 0 0 1)
} kcc_pose;

/// One body slot.
typedef struct kcc_body {
    const kcc_mesh *mesh;         ///< borrowed; NULL when the slot is free
    kcc_pose        pose;         ///< where the body is
    kcc_pose        start;        ///< where it was at the start of the last step (its motion)
    kcc_transform   target;       ///< a kinematic body's pose at the end of the next step
    float           bounds[2][3]; ///< conservative world bounds of the placed mesh (m)
    uint64_t        user_data;
    uint32_t        layers;
    uint32_t        generation;   ///< of the slot (see KCC_ID_INDEX_BITS)
    uint32_t        tri_base;     ///< its triangles' first id in the world source
    kcc_body_kind   kind;
    bool            has_target;   ///< a target was set since the last step
    bool            sensor;       ///< not solid: no query or character source sees it
    uint32_t        first_piece;  ///< its pieces, linked by kcc_piece.next (KCC_WORLD_NO_PIECE: none)
} kcc_body;

/// A piece of a body for the broadphase: the subtree under one child of a group of its mesh's
/// tree (first, count as the child holds them; (0, 0): the whole tree), with its own proxy. A
/// static body larger than a grid cell is split along its tree into pieces no larger than a cell
/// (or single leaves), so a big level does not land in every cell; any other body is one piece.
typedef struct kcc_piece {
    uint32_t body;        ///< body slot
    uint32_t first, count;
    uint32_t slot_lo;     ///< the first leaf-order slot under it: pieces sort into the tree's order
    uint32_t proxy;
    uint32_t next;        ///< the body's next piece, or the free list's next
    float    bounds[2][3];///< placed bounds (m)
} kcc_piece;
#define KCC_WORLD_NO_PIECE 0xffffffffu

/// The tree over the live bodies' world bounds that the queries walk (the mesh tree's builder
/// over one primitive per body). Rebuilt by kcc_world_step; until then, after bodies are added,
/// removed or set, `valid` is false and queries test every body's bounds instead (the same
/// answers, linear cost).
typedef struct kcc_body_tree {
    kcc_build_prim *prims;    ///< body_capacity: a body's bounds and slot (id field)
    kcc_node_pair  *pairs;    ///< body_capacity + 1
    kcc_node4      *quads;    ///< body_capacity + 1
    uint32_t       *scratch;  ///< 2 * (body_capacity + 1): the collapse's queue
    uint32_t       *slot;     ///< leaf order -> body slot
    uint32_t        count;    ///< bodies in the tree
    bool            valid;
} kcc_body_tree;

/// The world-space tree over the static bodies' triangle runs that the ray cast, the box and the
/// sphere queries walk (world_static_tree.c): entries that are runs of consecutive slots of the
/// leaves of a member body's tree (an unrotated body), or runs of the leaves of the world's build
/// over a rotated member's placed triangles, their slots in the slot list (`listed`), each
/// bounded by its triangles placed by the body's pose (kcc_pose_points_bounds: conservative), so a
/// ray walks one tree nearest first instead of each body's from its root, and a box or sphere query
/// tests the entries the world shape touches instead of every leaf under a rotated body's (looser)
/// local bounds of the shape.
/// Members are the live static bodies that are solid (not sensors) and have a tree (not
/// heightfields), in ascending slot order while their entries fit `capacity`
/// (kcc_static_tree_capacity); the others are cast through the body tree as kinematic bodies
/// are. Rebuilt by kcc_world_step (and kcc_world_shift_bodies) into storage inside the world's
/// block; while `valid` is false (a static body added, removed or placed since) the queries
/// do without it, with the same answers.
typedef struct kcc_static_leaf {
    uint32_t body;    ///< body slot
    uint32_t first;   ///< the run's first slot (leaf order) within one leaf of the body's mesh, or
                      ///< (listed) its first entry in the slot list
    uint16_t count;   ///< its triangles (1 .. KCC_LEAF_MAX)
    uint16_t listed;  ///< 1: a rotated body's run, its slots slots[first .. first + count)
    uint32_t layers;  ///< the body's layers (kcc_world_set_body_layers keeps them)
} kcc_static_leaf;
_Static_assert(sizeof(kcc_static_leaf) == 16, "a static leaf entry is 16 bytes");
/// Static-tree entries per body of body_capacity, at most KCC_STATIC_LEAVES_MAX; the tree's groups
/// are a quarter of its entries. Per entry 32 (bounds) + 16 (entry) + 64 (build pairs) + 32
/// (groups) + 2 (collapse queue) bytes: 146, so 4,672 bytes per body of body_capacity (4.8 MB at
/// the default 1024), 38 MB at most. The shared levels cut into 27 pieces use 0.46-0.60 entries
/// per triangle (STATIC_SPLIT_AREA): 19,360 for ctf_inyard's 32,444 triangles.
#define KCC_STATIC_LEAVES_PER_BODY 32u
#define KCC_STATIC_LEAVES_MAX (1u << 18)
/// The static tree's entries for a world of body_capacity bodies.
static inline uint32_t kcc_static_tree_capacity(uint32_t body_capacity)
{
    const uint32_t n = body_capacity * KCC_STATIC_LEAVES_PER_BODY; /* < 2^25: no overflow */
    return n < KCC_STATIC_LEAVES_MAX ? n : KCC_STATIC_LEAVES_MAX;
}
/// Four static-tree entries' bounds, structure of arrays as kcc_node4's boxes (the same byte
/// offsets, so kcc_pray's plane offsets select them): lane i of block b is entry 4 b + i. A leaf's
/// entries are tested four at a time, as a node's children are; lanes past the last entry hold
/// the empty box (lo = +inf, hi = -inf).
typedef struct kcc_static_box4 {
    float x[2][4];    ///< x[0] = lo.x of the four entries, x[1] = hi.x (m)
    float y[2][4];
    float z[2][4];
} kcc_static_box4;
_Static_assert(offsetof(kcc_static_box4, y) == offsetof(kcc_node4, y) &&
                   offsetof(kcc_static_box4, z) == offsetof(kcc_node4, z),
               "an entry block's planes sit where a group's do");
typedef struct kcc_static_tree {
    union {
        kcc_build_prim  *prims;     ///< capacity: each entry's bounds, id its build index (the
                                    ///< build's input and scratch)
        kcc_static_box4 *boxes;     ///< the same storage after the build: (count + 3) / 4 blocks
                                    ///< of the entries' bounds in leaf order (24 bytes an entry)
    };
    kcc_static_leaf *leaves;        ///< capacity: the entries, in leaf order after the build
    union {
        kcc_node_pair *pairs;       ///< capacity: the builder's binary tree (scratch)
        uint32_t      *order;       ///< the same storage after the build: by leaf order, the
                                    ///< entry's rank in ascending body slot, then the body's
                                    ///< entries as added (an unrotated body's leaves in
                                    ///< kcc_mesh_box_walk's order, then slot; a rotated one's in
                                    ///< its world build's leaf order): a box overlap's report
                                    ///< order, its entries sorted by it
    };
    kcc_node4       *quads;         ///< quad_capacity
    uint32_t        *scratch;       ///< 2 * (quad_capacity + KCC_TREE_STACK): the collapse's queue
                                    ///< (a count that finds too many groups stops within it)
    uint8_t         *member;        ///< body_capacity: 1 when the body's leaves are in the tree
    uint32_t         capacity;      ///< entries at most
    uint32_t         quad_capacity; ///< groups at most (a build needing more keeps the tree empty)
    uint32_t        *slots;         ///< listed: the rotated members' slots the listed entries
                                    ///< name, in the prims' storage after the entry blocks
    uint32_t         count;         ///< entries in the tree
    uint32_t         listed;        ///< slots in the slot list
    uint32_t         members;       ///< bodies whose leaves are in it
    float            coord_scale;   ///< the largest |coordinate| of the entries' bounds (m)
    bool             valid;
} kcc_static_tree;

/// The mesh slot of triangle i (< e->count) of static-tree entry e: a run of consecutive slots, or
/// (listed: a rotated member's) the slot list's.
static inline uint32_t kcc_static_entry_slot(const kcc_static_tree *st, const kcc_static_leaf *e,
                                             uint32_t i)
{
    return e->listed ? st->slots[e->first + i] : e->first + i;
}
/// The lanes of static-tree entry block b (entries 4 b .. 4 b + 3) that entries first .. end - 1
/// (a leaf's) fill, as a mask.
static inline int kcc_static_block_lanes(uint32_t first, uint32_t end, uint32_t b)
{
    const uint32_t lo = first > 4 * b ? first - 4 * b : 0, hi = end - 4 * b < 4 ? end - 4 * b : 4;
    return (1 << hi) - (1 << lo);
}
/// Static-tree entries the box and sphere overlaps gather before testing them in report order; a
/// shape touching more is answered through every body's own tree (the same answers).
#define KCC_STATIC_GATHER_MAX 512
/// The static-tree entries that layer_mask sees and whose placed bounds overlap [lo, hi] (touching
/// counts), in an overlap's report order (ascending kcc_static_tree.order), each as its order rank
/// (high half) and its entry index (low half). Returns how many, or UINT32_MAX when they are more
/// than KCC_STATIC_GATHER_MAX. The tree is valid and not empty (world_query.c).
uint32_t kcc_static_entries_in_box(const kcc_static_tree *st, const float lo[3], const float hi[3],
                                  uint32_t layer_mask, uint64_t out[KCC_STATIC_GATHER_MAX]);
/// The entries of static-tree leaf (first, count <= KCC_LEAF_MAX) that layer_mask sees and whose
/// grown bounds the slab enters within limit (four at a time, each block masked to the leaf's
/// lanes), nearest entry first: their indices to item, their entry distances to entry. Returns
/// how many (the box and sphere sweeps' leaf visitors, world_query.c).
uint32_t kcc_static_leaf_entries_nearest(const kcc_static_tree *st, const kcc_pray *slab,
                                         float limit, uint32_t layer_mask, uint32_t first,
                                         uint32_t count, uint32_t item[KCC_LEAF_MAX],
                                         float entry[KCC_LEAF_MAX]);
/// Rebuilds the static tree over the member bodies' leaves and marks it valid. Allocates nothing.
void kcc_world_rebuild_static_tree(kcc_world *world);
/// Copies body slot's layers into its static-tree entries.
void kcc_world_static_tree_set_layers(kcc_world *world, uint32_t slot);
/// Conservative bounds (lo, hi) of the points placed by pose and of every point of their convex
/// hull (transform.c): each placed in double, grown by the placement's rounding allowance for the
/// points' largest |coordinate|, as kcc_pose_box_bounds grows a box.
void kcc_pose_points_bounds(const kcc_pose *pose, const float (*points)[3], uint32_t count,
                            float out_lo[3], float out_hi[3]);

/// What a body call did, for the world's recorder.
typedef enum kcc_body_event {
    KCC_BODY_ADDED,     ///< kcc_world_add_body (given: the desc's transform)
    KCC_BODY_REMOVED,   ///< kcc_world_remove_body
    KCC_BODY_PLACED,    ///< kcc_world_set_body_transform (given: the caller's transform)
    KCC_BODY_TARGETED,  ///< kcc_world_move_body (given: the caller's target)
    KCC_BODY_LAYERED,   ///< kcc_world_set_body_layers (given: NULL; the body has its new layers)
} kcc_body_event;
/// The recorder's hook (controller/world_trace.c): called after each body call that succeeded, with
/// the transform exactly as the caller gave it.
typedef void kcc_world_record_body_fn(kcc_world *world, kcc_body_event event, uint32_t body,
                                      const kcc_transform *given);
/// The recorder's hook for kcc_world_destroy (controller/world_trace.c): the writer still
/// recording the world lets go of it, and the recording's tables are freed.
typedef void kcc_world_release_recorder_fn(kcc_world *world);

struct kcc_world {
    kcc_allocator   allocator;     ///< resolved (never NULL functions)
    size_t          block_bytes;   ///< of the single allocation holding everything
    kcc_world_desc  desc;          ///< resolved: every 0 replaced by its default
    kcc_body       *bodies;        ///< body_capacity slots
    kcc_id_pool     body_ids;
    uint32_t        body_count;    ///< live bodies
    uint32_t        body_end;      ///< 1 + the highest slot ever used: loops stop there
    kcc_body_base  *bases;         ///< base_count live bodies' triangle ranges, by base
    uint32_t        base_count;
    uint32_t        tri_next;      ///< the next body's tri_base
    uint32_t        tri_live;      ///< the live bodies' triangles
    uint64_t        key;           ///< changes whenever a placed triangle does (never 0)
    uint64_t        static_key;    ///< changes whenever a body is added or placed, or a static one
                                   ///< removed or given other layers (0 before the first;
                                   ///< world_broadphase.c and kcc_world_set_body_layers keep it)
    uint32_t       *movers;        ///< kinematic body slots that moved in the last step
    uint32_t        mover_count;
    uint32_t       *sensors;       ///< live sensor body slots, ascending (listed by the step)
    uint32_t        sensor_count;
    kcc_body_tree   tree;
    kcc_static_tree statics;       ///< the ray, box and sphere queries' tree over static leaves
    kcc_piece      *pieces;        ///< piece_capacity
    uint32_t        free_piece;    ///< the free list's head
    uint32_t        piece_count;   ///< pieces in use
    kcc_broadphase *broadphase;
    struct kcc_world_characters *characters;
    void           *recorder;      ///< the world's recording (controller/world_trace.c; NULL: none)
    kcc_world_record_body_fn *record_body; ///< its hooks, set with it
    kcc_world_release_recorder_fn *release_recorder; ///< (kcc_world_destroy's)
};

/* world_broadphase.c */
/// Splits body slot's mesh into pieces and gives each a proxy; KCC_ERR_TOO_LARGE (nothing kept)
/// when the pieces or the proxies would exceed their capacities.
kcc_status kcc_world_add_pieces(kcc_world *world, uint32_t slot);
/// How many pieces body (at its pose and bounds) splits into.
uint32_t kcc_world_count_pieces(const kcc_world *world, const kcc_body *body);
/// Removes body slot's pieces and their proxies.
void kcc_world_remove_pieces(kcc_world *world, uint32_t slot);
/// Moves the proxy of a body that is one piece (not a split static one) to its bounds over its
/// motion in the last step (kcc_world_body_motion).
void kcc_world_move_pieces(kcc_world *world, uint32_t slot);

/// The live body whose triangle range holds id, or NULL; *out_triangle the input index.
const kcc_body *kcc_world_body_of_triangle(const kcc_world *world, uint32_t id,
                                           uint32_t *out_triangle);

/// The pose of a valid transform (unit rotation).
void kcc_pose_set(kcc_pose *pose, const kcc_transform *t);
/// out = pose applied to p, in the fixed order (((m0 p0 + m1 p1) + m2 p2) + position).
static inline void kcc_pose_point(const kcc_pose *pose, const float p[3], float out[3])
{
    const float *t = pose->transform.position;
    const float x = p[0], y = p[1], z = p[2];
    for (int i = 0; i < 3; ++i)
        out[i] = pose->m[i][0] * x + pose->m[i][1] * y + pose->m[i][2] * z + t[i];
}
/// out = the pose's rotation applied to v.
static inline void kcc_pose_vector(const kcc_pose *pose, const float v[3], float out[3])
{
    const float x = v[0], y = v[1], z = v[2];
    for (int i = 0; i < 3; ++i)
        out[i] = pose->m[i][0] * x + pose->m[i][1] * y + pose->m[i][2] * z;
}
/// out = the inverse rotation applied to v (the transpose).
static inline void kcc_pose_vector_inverse(const kcc_pose *pose, const float v[3], float out[3])
{
    const float x = v[0], y = v[1], z = v[2];
    for (int i = 0; i < 3; ++i)
        out[i] = pose->m[0][i] * x + pose->m[1][i] * y + pose->m[2][i] * z;
}
/// Triangle t's three corners placed by pose, as every world query sees them.
static inline void kcc_pose_tri(const kcc_pose *pose, const kcc_tri *t, float out[3][3])
{
    for (int k = 0; k < 3; ++k)
        kcc_pose_point(pose, t->v[k], out[k]);
}
/// Body i's three placed corners of mesh slot s (leaf order), as every world query sees them.
static inline void kcc_body_corners(const kcc_body *body, uint32_t s, float out[3][3])
{
    kcc_tri t;
    kcc_mesh_tri(body->mesh, s, &t);
    kcc_pose_tri(&body->pose, &t, out);
}
/// A pose whose placed corners are the mesh's corners bit for bit (no rotation, position 0): its
/// queries test the mesh's own triangles and, for rays, the world ray as is.
static inline bool kcc_pose_is_identity(const kcc_pose *pose)
{
    const float *p = pose->transform.position;
    return !pose->rotated && p[0] == 0.0f && p[1] == 0.0f && p[2] == 0.0f;
}
/// The live body an id names, or NULL (0, stale, removed, never issued).
const kcc_body *kcc_world_find_body(const kcc_world *world, uint32_t body);
/// The id of live slot i.
static inline uint32_t kcc_body_id(const kcc_world *world, uint32_t slot)
{
    return kcc_id_make(world->bodies[slot].generation, slot);
}
/// Conservative bounds (lo, hi) of local box [lo, hi] placed by pose: every kcc_pose_point of a
/// point inside lies inside (rounding margin included).
void kcc_pose_box_bounds(const kcc_pose *pose, const float lo[3], const float hi[3],
                         float out_lo[3], float out_hi[3]);
/// Conservative local bounds of world box [lo, hi] seen from a body at pose (the box is an
/// oriented box in the body's frame; these are its bounds there), for triangles whose local
/// corners lie within local_extent of the origin on every axis (a mesh's coord_scale): every
/// point of such a triangle whose placed triangle (kcc_pose_point of its corners) meets the box
/// lies inside them. The placed corners' rounding grows with the corners' size, not the box's,
/// so local_extent is part of the margin (world_box_queries_find_triangles_placed_near_zero).
void kcc_pose_box_local_bounds(const kcc_pose *pose, const float lo[3], const float hi[3],
                               float local_extent, float out_lo[3], float out_hi[3]);

/* world_query.c */
/// Rebuilds the body tree over the live bodies' bounds and marks it valid. Allocates nothing.
void kcc_world_rebuild_body_tree(kcc_world *world);
/// Calls visit(ctx, slot) for every body seen by layer_mask whose bounds overlap [lo, hi], in
/// ascending slot order: through the body tree when it is valid, else by scanning every slot.
void kcc_world_for_bodies_in_box(const kcc_world *world, const float lo[3], const float hi[3],
                                 uint32_t layer_mask, void (*visit)(void *ctx, uint32_t slot),
                                 void *ctx);
/// Appends the triangle in mesh slot s of body body_id, then every exact duplicate listed beside
/// it, to out while there is room (out[found..capacity)); counts them all. Returns found plus
/// their number (the box and sphere overlaps' report).
uint32_t kcc_body_append_slot(const kcc_mesh *mesh, uint32_t s, uint32_t body_id,
                              kcc_body_triangle *out, uint32_t capacity, uint32_t found);
/// Visits one leaf of a body's mesh tree: slots first .. first + count - 1 of `leaf` (the mesh
/// itself, or for a heightfield the view holding one batch of its cells' triangles).
typedef void (*kcc_mesh_leaf_visit)(void *ctx, const kcc_mesh *leaf, uint32_t first, uint32_t count);
/// The box walk of a mesh's tree in kcc_mesh_overlap_aabb's order (a group's overlapping leaves in
/// slot order, then its inner children in slot order): calls visit on every leaf whose box
/// overlaps [lo, hi] (touching counts); a heightfield's cells under the box, batch by batch in
/// ascending triangle order (kcc_hf_box_next). lo <= hi.
void kcc_mesh_box_walk(const kcc_mesh *mesh, const float lo[3], const float hi[3],
                       kcc_mesh_leaf_visit visit, void *ctx);

#endif
