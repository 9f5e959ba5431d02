/* world_static_tree.c: owns the world-space tree over the static bodies' triangle runs that the ray
 * cast, the box and the sphere queries walk (kcc_static_tree, kcc_world_internal.h): which bodies
 * are members, each entry's placed bounds (laid out four to a block after the build) and its place
 * in the overlaps' order, a rotated body's slot list, the build into the storage inside the world's
 * block, and the entries' layers.
 * Allocates nothing; only kcc_world_step and kcc_world_shift_bodies rebuild it. */
#include "kcc_world_internal.h"

/// A body whose leaves may enter the tree: live, static, solid, a tree mesh with triangles.
static bool static_candidate(const kcc_body *b)
{
    return b->mesh && b->kind == KCC_BODY_STATIC && !b->sensor && !b->mesh->hf &&
           b->mesh->quad_count > 0;
}

/// A static-tree entry is a run of consecutive slots of one leaf of a member's tree. A leaf's
/// runs are the cut of its triangles that costs a ray least, a run of one triangle costing the
/// surface area of its placed bounds and a longer run its bounds' area times STATIC_SPLIT_AREA per
/// four triangles (the leaf test takes four at once): a leaf of a few large triangles facing
/// different ways (a small piece's tree has to group what it has) is a box a ray enters
/// everywhere, where the triangles' own, or a few runs', are thin. Measured on the shared levels
/// cut into 27 rotated pieces (callgrind, instructions a ray, with the leaf kept whole or cut into
/// single triangles only): 1.6 costs 4-14% less than 1.0 on oa_dm1 and ctf_inyard and 1% more on
/// wrackdm17; 1.3 and 2.0 cost more than 1.6 on all three. Runs between the two (bench_world,
/// docs/world.md "World queries") leave 13% fewer entries on ctf_inyard and 18% on oa_dm4.
#define STATIC_SPLIT_AREA 1.6f

static float box_area(const float lo[3], const float hi[3])
{
    const float dx = hi[0] - lo[0], dy = hi[1] - lo[1], dz = hi[2] - lo[2];
    return dx * dy + dy * dz + dz * dx;
}

/// What an entry of len triangles whose placed bounds have surface area `area` costs a ray.
static float run_cost(float area, uint32_t len)
{
    return len == 1 ? area : area * STATIC_SPLIT_AREA * (float)((len + 3) / 4);
}

/// [lo, hi] = the empty box, which box_grow grows to the first box it is given.
static void box_empty(float lo[3], float hi[3])
{
    for (int k = 0; k < 3; ++k)
        lo[k] = INFINITY, hi[k] = -INFINITY;
}

/// Grows [lo, hi] by [add_lo, add_hi].
static void box_grow(float lo[3], float hi[3], const float add_lo[3], const float add_hi[3])
{
    for (int k = 0; k < 3; ++k) {
        lo[k] = kcc_minf(lo[k], add_lo[k]);
        hi[k] = kcc_maxf(hi[k], add_hi[k]);
    }
}

/// The cheapest cut (run_cost summed) of count <= KCC_LEAF_MAX triangles with placed bounds lo,
/// hi into runs of consecutive ones, over every cut: writes the runs' ends, ascending, to ends
/// and returns how many runs there are. Of equally cheap cuts the one whose last run is shortest;
/// where no cost compares (an area beyond float range) single triangles, so a cut always exists.
static uint32_t cheapest_runs(const float (*lo)[3], const float (*hi)[3], uint32_t count,
                              uint32_t ends[KCC_LEAF_MAX])
{
    float cost[KCC_LEAF_MAX + 1];
    uint32_t start[KCC_LEAF_MAX + 1];
    cost[0] = 0.0f;
    for (uint32_t end = 1; end <= count; ++end) {
        float run_lo[3], run_hi[3];
        box_empty(run_lo, run_hi);
        cost[end] = INFINITY;
        start[end] = end - 1;
        for (uint32_t i = end; i-- > 0;) {
            box_grow(run_lo, run_hi, lo[i], hi[i]);
            const float c = cost[i] + run_cost(box_area(run_lo, run_hi), end - i);
            if (c < cost[end]) {
                cost[end] = c;
                start[end] = i;
            }
        }
    }
    uint32_t runs = 0;
    for (uint32_t end = count; end > 0; end = start[end])
        ++runs;
    uint32_t r = runs;
    for (uint32_t end = count; end > 0; end = start[end])
        ends[--r] = end;
    return runs;
}

static void put_entry(kcc_static_tree *st, uint32_t n, const float lo[3], const float hi[3],
                      kcc_static_leaf entry)
{
    kcc_build_prim *p = &st->prims[n];
    memcpy(p->lo, lo, sizeof p->lo);
    memcpy(p->hi, hi, sizeof p->hi);
    p->id = n;
    p->pad = 0.0f;
    st->leaves[n] = entry;
}

/// Adds count (<= KCC_LEAF_MAX) triangles of body b (in slot `slot`), their placed bounds lo, hi,
/// from entry n as their cheapest runs (cheapest_runs): triangle i is slot first + i of the body's
/// mesh, or (listed) the slot in slot list entry first + i. Returns the new entry count, or
/// UINT32_MAX when they would pass the capacity.
static uint32_t add_runs(kcc_static_tree *st, const kcc_body *b, uint32_t slot,
                         const float (*lo)[3], const float (*hi)[3], uint32_t count, uint32_t first,
                         bool listed, uint32_t n)
{
    uint32_t ends[KCC_LEAF_MAX];
    const uint32_t runs = cheapest_runs(lo, hi, count, ends);
    if (runs > st->capacity - n)
        return UINT32_MAX;
    for (uint32_t r = 0, begin = 0; r < runs; begin = ends[r++]) {
        float run_lo[3], run_hi[3];
        box_empty(run_lo, run_hi);
        for (uint32_t i = begin; i < ends[r]; ++i)
            box_grow(run_lo, run_hi, lo[i], hi[i]);
        const kcc_static_leaf entry = {.body = slot, .first = first + begin,
                                       .count = (uint16_t)(ends[r] - begin), .listed = listed,
                                       .layers = b->layers};
        put_entry(st, n++, run_lo, run_hi, entry);
    }
    return n;
}

/// Adds leaf (first, count) of body slot's mesh from entry n (add_runs), each triangle bounded
/// as placed by the body's pose (kcc_pose_points_bounds).
static uint32_t add_leaf(kcc_static_tree *st, const kcc_body *b, uint32_t slot, uint32_t first,
                         uint32_t count, uint32_t n)
{
    float lo[KCC_LEAF_MAX][3], hi[KCC_LEAF_MAX][3];
    KCC_ASSERT(count >= 1 && count <= KCC_LEAF_MAX);
    for (uint32_t i = 0; i < count; ++i) {
        kcc_tri t;
        kcc_mesh_tri(b->mesh, first + i, &t);
        kcc_pose_points_bounds(&b->pose, (const float(*)[3])t.v, 3, lo[i], hi[i]);
    }
    return add_runs(st, b, slot, (const float(*)[3])lo, (const float(*)[3])hi, count, first, false,
                    n);
}

/// Whether the build's storage holds `entries` entries and a slot list of `listed` slots with
/// `pairs` pairs of a binary tree in use: the entries' bounds in the prims, the tree before the
/// slot list in the pairs' storage (which keeps the list until the build ends), and at the end the
/// list after the entry blocks in the prims' storage.
static bool room_for(const kcc_static_tree *st, uint32_t entries, uint32_t listed, uint32_t pairs)
{
    const uint64_t cap = st->capacity, list = 4u * (uint64_t)listed;
    const uint64_t tree = 64u * (uint64_t)(pairs > entries ? pairs : entries);
    const uint64_t blocks = (uint64_t)(entries + 3) / 4 * sizeof(kcc_static_box4);
    return entries <= cap && list + tree <= 64u * cap &&
           list + blocks <= cap * sizeof(kcc_build_prim);
}

/// Slot list entry i while the tree is built: the pairs' storage's words from its end backwards
/// (entry 0 the last word), so a body's slots are appended without moving the earlier ones.
static uint32_t *building_slot(const kcc_static_tree *st, uint32_t i)
{
    return (uint32_t *)(void *)(st->pairs + st->capacity) - 1 - i;
}

/// A rotated body's entries: the mesh tree's builder run over its triangles placed by its pose
/// (their world bounds at the top of the prims), each of its leaves cut into runs (add_runs) that
/// list their slots in the slot list. A rotated body's own leaves are tight in its frame, not in
/// the world's, where a floor tilted into it fills a box as high as it is wide; the world's build
/// groups what is close in the world. Returns the new entry count, or UINT32_MAX when they do not
/// fit (room_for).
static uint32_t add_rotated_body(kcc_static_tree *st, const kcc_body *b, uint32_t slot, uint32_t n)
{
    const uint32_t nb = b->mesh->tree_triangles, listed = st->listed;
    /* its placed bounds above the entries, its tree below the earlier slots, and all at the end */
    if (nb > st->capacity - n || !room_for(st, 0, listed, nb) ||
        !room_for(st, n + nb, listed + nb, 0))
        return UINT32_MAX;
    kcc_build_prim *tp = st->prims + (st->capacity - nb);
    for (uint32_t s = 0; s < nb; ++s) {
        kcc_tri t;
        kcc_mesh_tri(b->mesh, s, &t);
        kcc_pose_points_bounds(&b->pose, (const float(*)[3])t.v, 3, tp[s].lo, tp[s].hi);
        tp[s].id = s;
        tp[s].pad = 0.0f;
    }
    uint32_t leaves = 0, depth = 0;
    if (!room_for(st, 0, listed + nb, kcc_tree_build(tp, nb, st->pairs, &leaves, &depth)))
        return UINT32_MAX; /* its slots would reach its tree */
    for (uint32_t i = 0; i < nb; ++i)
        *building_slot(st, listed + i) = tp[i].id;
    /* The leaves in slot order (the builder's depth first, left first), so an entry written at
     * n + (runs so far) <= n + first never reaches the bounds still to read at cap - nb + first. */
    uint32_t stack[KCC_TREE_MAX_DEPTH + 2], sp = 0;
    stack[sp++] = 0;
    while (sp > 0) {
        const uint32_t node = stack[--sp];
        const kcc_node_pair *p = &st->pairs[node >> 1];
        const uint32_t c = node & 1, first = p->first[c], count = p->count[c];
        if (count == 0) {
            stack[sp++] = 2 * first + 1;
            stack[sp++] = 2 * first;
            continue;
        }
        float lo[KCC_LEAF_MAX][3], hi[KCC_LEAF_MAX][3];
        for (uint32_t i = 0; i < count; ++i) {
            memcpy(lo[i], tp[first + i].lo, sizeof lo[i]);
            memcpy(hi[i], tp[first + i].hi, sizeof hi[i]);
        }
        n = add_runs(st, b, slot, (const float(*)[3])lo, (const float(*)[3])hi, count,
                     listed + first, true, n);
        KCC_ASSERT(n != UINT32_MAX); /* room_for counted a run a triangle */
    }
    st->listed = listed + nb;
    return n;
}

/// Appends body slot's entries from entry n: a rotated body's from the world's build over its
/// triangles (add_rotated_body), any other's from its tree's leaves (placed by a translation, they
/// are as tight in the world as in its frame) in the order the box walk visits them
/// (kcc_mesh_box_walk: a group's leaves in slot order, then its inner children's subtrees in slot
/// order), so that entry indices ascend in the order a box overlap reports the body's triangles
/// (kcc_static_tree.order). Returns the new entry count, or UINT32_MAX when they do not fit.
static uint32_t add_body_entries(kcc_static_tree *st, const kcc_body *b, uint32_t slot, uint32_t n)
{
    if (b->pose.rotated)
        return add_rotated_body(st, b, slot, n);
    const kcc_mesh *mesh = b->mesh;
    uint32_t stack[KCC_TREE_STACK], sp = 0;
    stack[sp++] = 0;
    while (sp > 0 && n != UINT32_MAX) {
        const kcc_qnode4 *g = &mesh->groups[stack[--sp]];
        KCC_ASSERT(sp + 4 <= KCC_TREE_STACK);
        for (int i = 3; i >= 0; --i)
            if ((g->slots >> i & 1) && g->count[i] == 0)
                stack[sp++] = g->first[i];
        for (int i = 0; i < 4 && n != UINT32_MAX; ++i)
            if ((g->slots >> i & 1) && g->count[i] > 0)
                n = add_leaf(st, b, slot, g->first[i], g->count[i], n);
    }
    if (n != UINT32_MAX && !room_for(st, n, st->listed, 0))
        return UINT32_MAX;
    return n;
}

/// Rewrites the built entries' bounds (prims, in leaf order) as blocks of four (boxes, the same
/// storage: 24 bytes an entry where a prim takes 32), through the pairs' storage (scratch once the
/// tree is collapsed and the entries reordered: n pairs of 64 bytes hold n prims of 32); then
/// each entry's index before the build (the prim's id) into the same storage as `order`, and the
/// largest |coordinate| of the bounds as coord_scale.
static void lay_out_boxes(kcc_static_tree *st, uint32_t n)
{
    kcc_build_prim *built = (kcc_build_prim *)(void *)st->pairs;
    memcpy(built, st->prims, (size_t)n * sizeof *built);
    float scale = 0.0f;
    for (uint32_t k = 0; k < n; ++k)
        for (int a = 0; a < 3; ++a)
            scale = fmaxf(scale, fmaxf(fabsf(built[k].lo[a]), fabsf(built[k].hi[a])));
    st->coord_scale = scale;
    for (uint32_t b = 0; b < (n + 3) / 4; ++b) {
        kcc_static_box4 *box = &st->boxes[b];
        for (uint32_t i = 0; i < 4; ++i) {
            const uint32_t k = 4 * b + i;
            const kcc_build_prim *p = k < n ? &built[k] : NULL;
            box->x[0][i] = p ? p->lo[0] : INFINITY, box->x[1][i] = p ? p->hi[0] : -INFINITY;
            box->y[0][i] = p ? p->lo[1] : INFINITY, box->y[1][i] = p ? p->hi[1] : -INFINITY;
            box->z[0][i] = p ? p->lo[2] : INFINITY, box->z[1][i] = p ? p->hi[2] : -INFINITY;
        }
    }
    for (uint32_t k = 0; k < n; ++k) { /* order[k] (4 k bytes in) overwrites prims already read */
        const uint32_t index = built[k].id;
        st->order[k] = index;
    }
}

/// Builds the four-wide tree over entries 0 .. n - 1 (n > 0) and puts the entries in its leaf
/// order. False (nothing kept) when it needs more groups than quad_capacity.
static bool build_tree(kcc_static_tree *st, uint32_t n)
{
    uint32_t leaves = 0, depth = 0;
    kcc_tree_build(st->prims, n, st->pairs, &leaves, &depth);
    if (kcc_tree_collapse(st->pairs, NULL, NULL, NULL, st->scratch) > st->quad_capacity)
        return false;
    kcc_tree_collapse(st->pairs, NULL, st->quads, NULL, st->scratch);
    /* The build reordered the bounds; the entries follow, through the pairs' storage (free now:
     * n pairs of 64 bytes hold n entries of 16). */
    kcc_static_leaf *built = (kcc_static_leaf *)(void *)st->pairs;
    memcpy(built, st->leaves, (size_t)n * sizeof *built);
    for (uint32_t i = 0; i < n; ++i)
        st->leaves[i] = built[st->prims[i].id];
    lay_out_boxes(st, n);
    st->slots = (uint32_t *)(void *)(st->boxes + (n + 3) / 4);
    for (uint32_t i = 0; i < st->listed; ++i)
        st->slots[i] = *building_slot(st, i);
    return true;
}

void kcc_world_rebuild_static_tree(kcc_world *world)
{
    kcc_static_tree *st = &world->statics;
    memset(st->member, 0, world->desc.body_capacity);
    st->count = 0;
    st->members = 0;
    st->listed = 0;
    st->valid = true;
    uint32_t n = 0;
    for (uint32_t slot = 0; slot < world->body_end; ++slot) {
        const kcc_body *b = &world->bodies[slot];
        if (!static_candidate(b) || b->mesh->leaf_count > st->capacity - n)
            continue;
        const uint32_t added = add_body_entries(st, b, slot, n);
        if (added == UINT32_MAX)
            continue; /* its entries stop at the capacity: the body tree casts it */
        st->member[slot] = 1;
        ++st->members;
        n = added;
    }
    if (n == 0)
        return;
    if (!build_tree(st, n)) { /* no member: every body is cast through the body tree */
        memset(st->member, 0, world->desc.body_capacity);
        st->members = 0;
        return;
    }
    st->count = n;
}

void kcc_world_static_tree_set_layers(kcc_world *world, uint32_t slot)
{
    kcc_static_tree *st = &world->statics;
    if (!st->member[slot])
        return;
    for (uint32_t i = 0; i < st->count; ++i)
        if (st->leaves[i].body == slot)
            st->leaves[i].layers = world->bodies[slot].layers;
}
