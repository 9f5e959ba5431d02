/* world_static_tree.c: owns the world-space tree over the static bodies' mesh leaves that the ray
 * cast walks (kcc_static_tree, kcc_world_internal.h): which bodies are members, each entry's placed
 * bounds, the build into the storage inside the world's block, and the layers the entries carry.
 * Allocates nothing; only kcc_world_step and kcc_world_shift_bodies rebuild it. */
#include "kcc_world_internal.h"

/// A body whose leaves may enter the tree: live, static, solid, a tree mesh with triangles.
static bool static_candidate(const kcc_body *b)
{
    return b->mesh && b->kind == KCC_BODY_STATIC && !b->sensor && !b->mesh->hf &&
           b->mesh->quad_count > 0;
}

/// Entry n: leaf (first, count) of body slot's mesh, bounded by its triangles' corners placed by
/// the body's pose.
static void add_entry(kcc_static_tree *st, const kcc_body *b, uint32_t slot, uint32_t first,
                      uint32_t count, uint32_t n)
{
    float corners[3 * KCC_LEAF_MAX][3];
    KCC_ASSERT(count <= KCC_LEAF_MAX);
    for (uint32_t i = 0; i < count; ++i) {
        kcc_tri t;
        kcc_mesh_tri(b->mesh, first + i, &t);
        memcpy(corners[3 * i], t.v, sizeof t.v);
    }
    kcc_build_prim *p = &st->prims[n];
    kcc_pose_points_bounds(&b->pose, (const float(*)[3])corners, 3 * count, p->lo, p->hi);
    p->id = n;
    p->pad = 0.0f;
    st->leaves[n] = (kcc_static_leaf){.body = slot, .first = first, .count = count,
                                      .layers = b->layers};
}

/// Appends body slot's leaves (in the order of its tree's groups) from entry n; returns the new
/// entry count.
static uint32_t add_body_entries(kcc_static_tree *st, const kcc_body *b, uint32_t slot, uint32_t n)
{
    const kcc_mesh *mesh = b->mesh;
    for (uint32_t g = 0; g < mesh->quad_count; ++g)
        for (int i = 0; i < 4; ++i)
            if (mesh->quads[g].count[i] > 0)
                add_entry(st, b, slot, mesh->quads[g].first[i], mesh->quads[g].count[i], n++);
    return n;
}

/// Builds the four-wide tree over entries 0 .. n - 1 (n > 0) and puts the entries in its leaf
/// order. False (nothing kept) when it needs more groups than quad_capacity.
static bool build_tree(kcc_static_tree *st, uint32_t n)
{
    uint32_t leaves = 0, depth = 0;
    kcc_tree_build(st->prims, n, st->pairs, &leaves, &depth);
    if (kcc_tree_collapse(st->pairs, NULL, st->scratch) > st->quad_capacity)
        return false;
    kcc_tree_collapse(st->pairs, st->quads, st->scratch);
    /* The build reordered the bounds; the entries follow, through the pairs' storage (free now:
     * n pairs of 64 bytes hold n entries of 16). */
    kcc_static_leaf *built = (kcc_static_leaf *)(void *)st->pairs;
    memcpy(built, st->leaves, (size_t)n * sizeof *built);
    for (uint32_t i = 0; i < n; ++i)
        st->leaves[i] = built[st->prims[i].id];
    return true;
}

void kcc_world_rebuild_static_tree(kcc_world *world)
{
    kcc_static_tree *st = &world->statics;
    memset(st->member, 0, world->desc.body_capacity);
    st->count = 0;
    st->valid = true;
    uint32_t n = 0;
    for (uint32_t slot = 0; slot < world->body_end; ++slot) {
        const kcc_body *b = &world->bodies[slot];
        if (!static_candidate(b) || b->mesh->leaf_count > st->capacity - n)
            continue;
        st->member[slot] = 1;
        n = add_body_entries(st, b, slot, n);
    }
    if (n == 0)
        return;
    if (!build_tree(st, n)) { /* no member: every body is cast through the body tree */
        memset(st->member, 0, world->desc.body_capacity);
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
