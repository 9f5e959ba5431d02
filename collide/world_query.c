/* world_query.c: the world's queries (ray cast, box overlap, box sweep) over every body at its
 * current pose, and the body tree they walk. Queries keep no state and never allocate. */
#include "heightfield_internal.h"
#include "kcc_world_internal.h"

void kcc_world_rebuild_body_tree(kcc_world *world)
{
    kcc_body_tree *tree = &world->tree;
    uint32_t n = 0;
    for (uint32_t i = 0; i < world->body_end; ++i) {
        const kcc_body *b = &world->bodies[i];
        if (!b->mesh)
            continue;
        kcc_build_prim *p = &tree->prims[n++];
        memcpy(p->lo, b->bounds[0], sizeof p->lo);
        memcpy(p->hi, b->bounds[1], sizeof p->hi);
        p->id = i;
        p->pad = 0.0f;
    }
    tree->count = n;
    tree->valid = true;
    if (n == 0)
        return;
    uint32_t leaves = 0, depth = 0;
    kcc_tree_build(tree->prims, n, tree->pairs, &leaves, &depth);
    kcc_tree_collapse(tree->pairs, NULL, tree->quads, NULL, tree->scratch);
    for (uint32_t i = 0; i < n; ++i)
        tree->slot[i] = tree->prims[i].id;
}

/* ------------------------------------------------------------------------------------------------
 * Shared pieces: argument checks, which bodies a query sees, and placed triangles. */

/// Bodies a box query gathers from the body tree before testing them in ascending slot order; a
/// box touching more falls back to the linear scan over every slot (the same answers).
#define WORLD_QUERY_BODIES 256

static bool finite3(const float v[3])
{
    return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]);
}

static float max_abs3f(const float v[3])
{
    return fmaxf(fabsf(v[0]), fmaxf(fabsf(v[1]), fabsf(v[2])));
}

/// The live body in slot i that a query with layer_mask sees (and that has triangles), or NULL.
static const kcc_body *seen_body(const kcc_world *world, uint32_t slot, uint32_t layer_mask)
{
    const kcc_body *b = &world->bodies[slot];
    if (!b->mesh || b->sensor || (b->layers & layer_mask) == 0 ||
        (b->mesh->quad_count == 0 && !b->mesh->hf))
        return NULL;
    return b;
}

/// The n (<= 4) triangles from slot s0 of leaf (body b's mesh, or a heightfield view of it) as
/// the queries see them, written to buf: the mesh's corners for an identity pose, else their
/// placed corners (kcc_pose_tri).
static const kcc_tri *placed_run(const kcc_body *b, const kcc_mesh *leaf, bool identity,
                                 uint32_t s0, uint32_t n, kcc_tri buf[4])
{
    for (uint32_t i = 0; i < n; ++i) {
        kcc_tri own;
        kcc_mesh_tri(leaf, s0 + i, identity ? &buf[i] : &own);
        if (!identity)
            kcc_pose_tri(&b->pose, &own, buf[i].v);
    }
    return buf;
}

/// Lane i (< n) set when placed triangle i overlaps [lo, hi] exactly (kcc_tri_overlap_aabb's
/// 13-axis test, through the same kernels as kcc_mesh_overlap_aabb).
static int run_overlaps(const kcc_tri *t, uint32_t n, const float lo[3], const float hi[3])
{
#if KCC_SSE
    return kcc_tri4_overlap_box(t, n, lo, hi);
#else
    int hits = 0;
    for (uint32_t i = 0; i < n; ++i)
        if (kcc_tri_overlap_box_internal(t[i].v[0], t[i].v[1], t[i].v[2], lo, hi))
            hits |= 1 << i;
    return hits;
#endif
}

void kcc_mesh_box_walk(const kcc_mesh *mesh, const float lo[3], const float hi[3],
                       kcc_mesh_leaf_visit visit, void *ctx)
{
    kcc_pbox qb;
    kcc_pbox_setup(&qb, lo, hi);
    if (mesh->hf) {
        kcc_hf_view view;
        kcc_hf_box_iter it;
        const kcc_mesh *leaf = kcc_hf_view_init(&view, mesh);
        kcc_hf_box_begin(&it, mesh, qb.lo, qb.hi);
        for (uint32_t n; (n = kcc_hf_box_next(&it, &view)) > 0;)
            visit(ctx, leaf, 0, n);
        return;
    }
    uint32_t stack[KCC_TREE_STACK], sp = 0;
    stack[sp++] = 0;
    while (sp > 0) {
        const kcc_qnode4 *q = &mesh->groups[stack[--sp]];
        const int mask = kcc_pbox_qtest(&qb, q);
        const int inner = mask & kcc_qnode4_inner_mask(q);
        KCC_ASSERT(sp + 4 <= KCC_TREE_STACK);
        for (int i = 3; i >= 0; --i)
            if (inner >> i & 1)
                stack[sp++] = q->first[i];
        for (int leaves = mask & ~inner; leaves != 0; leaves &= leaves - 1) {
            const int bit = leaves & -leaves, i = (bit >> 1) - (bit >> 3);
            visit(ctx, mesh, q->first[i], q->count[i]);
        }
    }
}

/// The slots of the bodies seen by layer_mask whose bounds overlap [lo, hi], ascending, gathered
/// through the body tree. Returns how many there are, or UINT32_MAX when the tree is stale or they
/// are more than WORLD_QUERY_BODIES (the caller then scans every slot).
static uint32_t bodies_in_box(const kcc_world *world, const float lo[3], const float hi[3],
                              uint32_t layer_mask, uint32_t out[WORLD_QUERY_BODIES])
{
    const kcc_body_tree *tree = &world->tree;
    if (!tree->valid)
        return UINT32_MAX;
    if (tree->count == 0)
        return 0;
    kcc_pbox qb;
    kcc_pbox_setup(&qb, lo, hi);
    uint32_t stack[KCC_TREE_STACK], sp = 0, found = 0;
    stack[sp++] = 0;
    while (sp > 0) {
        const kcc_node4 *q = &tree->quads[stack[--sp]];
        const int mask = kcc_pbox_test(&qb, q), inner = mask & kcc_inner_mask(q);
        KCC_ASSERT(sp + 4 <= KCC_TREE_STACK);
        for (int i = 0; i < 4; ++i) {
            if (inner >> i & 1) {
                stack[sp++] = q->first[i];
            } else if (mask >> i & 1) {
                for (uint32_t k = q->first[i], e = k + q->count[i]; k < e; ++k) {
                    const uint32_t slot = tree->slot[k];
                    if (!seen_body(world, slot, layer_mask))
                        continue;
                    if (found == WORLD_QUERY_BODIES)
                        return UINT32_MAX;
                    uint32_t j = found++; /* insertion keeps out ascending */
                    for (; j > 0 && out[j - 1] > slot; --j)
                        out[j] = out[j - 1];
                    out[j] = slot;
                }
            }
        }
    }
    return found;
}

/// Body bounds overlap [lo, hi] (touching counts).
static bool bounds_overlap(const kcc_body *b, const float lo[3], const float hi[3])
{
    for (int k = 0; k < 3; ++k)
        if (b->bounds[0][k] > hi[k] || b->bounds[1][k] < lo[k])
            return false;
    return true;
}

void kcc_world_for_bodies_in_box(const kcc_world *world, const float lo[3], const float hi[3],
                                 uint32_t layer_mask, void (*visit)(void *ctx, uint32_t slot),
                                 void *ctx)
{
    uint32_t slots[WORLD_QUERY_BODIES];
    const uint32_t n = bodies_in_box(world, lo, hi, layer_mask, slots);
    if (n != UINT32_MAX) {
        for (uint32_t i = 0; i < n; ++i)
            visit(ctx, slots[i]);
        return;
    }
    for (uint32_t slot = 0; slot < world->body_end; ++slot) {
        const kcc_body *b = seen_body(world, slot, layer_mask);
        if (b && bounds_overlap(b, lo, hi))
            visit(ctx, slot);
    }
}

/// The box a body's tree is walked with for world box [lo, hi]: the box itself for an identity
/// pose, else its conservative bounds in the body's frame (kcc_pose_box_local_bounds).
static void body_local_box(const kcc_body *b, bool identity, const float lo[3], const float hi[3],
                           float out_lo[3], float out_hi[3])
{
    if (identity) {
        memcpy(out_lo, lo, 3 * sizeof(float));
        memcpy(out_hi, hi, 3 * sizeof(float));
        return;
    }
    if (!b->pose.rotated) { /* placed corners p + t round by half an ulp of |p| + |t| */
        const float *t = b->pose.transform.position;
        for (int k = 0; k < 3; ++k) {
            const float margin = (fabsf(lo[k]) + fabsf(hi[k]) + fabsf(t[k]) + b->mesh->coord_scale) *
                                     0x1p-20f + 0x1p-126f;
            out_lo[k] = (lo[k] - t[k]) - margin;
            out_hi[k] = (hi[k] - t[k]) + margin;
        }
        return;
    }
    kcc_pose_box_local_bounds(&b->pose, lo, hi, b->mesh->coord_scale, out_lo, out_hi);
}

/* ------------------------------------------------------------------------------------------------
 * Box overlap: the static tree's entries whose placed bounds touch the box (when the tree is
 * valid), then the other bodies' candidate leaves (each body's tree walked with the box's local
 * bounds), every candidate triangle tested placed, exactly, in the report order (ascending body
 * slot, each body's triangles in its box walk's order, a rotated member's in its entries' order:
 * kcc_world_overlap_aabb's contract); every copy of a duplicate reported, as
 * kcc_mesh_overlap_aabb does. */

typedef struct overlap_query {
    const kcc_world   *world;
    const float       *lo, *hi;       ///< the world box
    kcc_body_triangle *out;
    uint32_t           capacity;
    uint32_t           found;
    const kcc_body    *body;          ///< the body being tested
    uint32_t           body_id;
    bool               identity;
    bool               statics;       ///< the static tree's members are tested through `entries`
    const uint64_t    *entries;       ///< gathered (kcc_static_entries_in_box), ascending
    uint32_t           entry_count;
    uint32_t           entry_next;    ///< the first not tested yet
    kcc_tri            batch[4];      ///< the body's placed entry triangles not tested yet, in order
    uint32_t           batch_slot[4]; ///< their mesh slots
    uint32_t           batch_n;
} overlap_query;

uint32_t kcc_body_append_slot(const kcc_mesh *mesh, uint32_t s, uint32_t body_id,
                              kcc_body_triangle *out, uint32_t capacity, uint32_t found)
{
    if (found < capacity)
        out[found] = (kcc_body_triangle){.body = body_id, .triangle = kcc_mesh_tri_id(mesh, s)};
    ++found;
    uint32_t begin;
    const uint32_t listed = kcc_mesh_duplicates(mesh, s, &begin);
    for (uint32_t d = begin; d < begin + listed; ++d, ++found)
        if (found < capacity)
            out[found] = (kcc_body_triangle){.body = body_id, .triangle = kcc_mesh_dup_id(mesh, d)};
    return found;
}

static void overlap_leaf(void *ctx, const kcc_mesh *mesh, uint32_t first, uint32_t count)
{
    overlap_query *q = ctx;
    kcc_tri buf[4];
    for (uint32_t s0 = first, end = first + count; s0 < end; s0 += 4) {
        const uint32_t n = end - s0 < 4 ? end - s0 : 4;
        const kcc_tri *t = placed_run(q->body, mesh, q->identity, s0, n, buf);
        for (int hits = run_overlaps(t, n, q->lo, q->hi); hits != 0; hits &= hits - 1) {
            const int bit = hits & -hits;
            const uint32_t s = s0 + (uint32_t)((bit >> 1) - (bit >> 3));
            q->found = kcc_body_append_slot(mesh, s, q->body_id, q->out, q->capacity, q->found);
        }
    }
}

/// Makes the body in slot the one whose triangles the query tests.
static void overlap_set_body(overlap_query *q, uint32_t slot)
{
    q->body = &q->world->bodies[slot];
    q->body_id = kcc_body_id(q->world, slot);
    q->identity = kcc_pose_is_identity(&q->body->pose);
}

/// Tests the batched triangles exactly (four at once) and reports those that overlap, in order.
static void overlap_batch_flush(overlap_query *q)
{
    for (int hits = run_overlaps(q->batch, q->batch_n, q->lo, q->hi); hits != 0; hits &= hits - 1) {
        const int bit = hits & -hits;
        const uint32_t s = q->batch_slot[(bit >> 1) - (bit >> 3)];
        q->found = kcc_body_append_slot(q->body->mesh, s, q->body_id, q->out, q->capacity, q->found);
    }
    q->batch_n = 0;
}

/// Tests the gathered static-tree entries of the bodies in slots below `upto`, in order. A body's
/// entries hold 2 triangles on average, so their triangles are tested four at a time across
/// entries (the exact test decides each lane on its own), not an entry at a time.
static void overlap_entries_below(overlap_query *q, uint32_t upto)
{
    const kcc_static_tree *st = &q->world->statics;
    for (; q->entry_next < q->entry_count; ++q->entry_next) {
        const kcc_static_leaf *e = &st->leaves[(uint32_t)q->entries[q->entry_next]];
        if (e->body >= upto)
            break;
        if (q->body != &q->world->bodies[e->body]) {
            if (q->batch_n > 0)
                overlap_batch_flush(q);
            overlap_set_body(q, e->body);
        }
        for (uint32_t i = 0; i < e->count; ++i) {
            const uint32_t s = kcc_static_entry_slot(st, e, i);
            placed_run(q->body, q->body->mesh, q->identity, s, 1, &q->batch[q->batch_n]);
            q->batch_slot[q->batch_n++] = s;
            if (q->batch_n == 4)
                overlap_batch_flush(q);
        }
    }
    if (q->batch_n > 0)
        overlap_batch_flush(q);
}

/// Tests the body in slot (seen, its bounds touching the box) through its own tree, after the
/// gathered entries of lower slots; the static tree's members are not (their entries are).
static void overlap_body(void *ctx, uint32_t slot)
{
    overlap_query *q = ctx;
    if (q->statics && q->world->statics.member[slot])
        return;
    overlap_entries_below(q, slot);
    overlap_set_body(q, slot);
    float lo[3], hi[3];
    body_local_box(q->body, q->identity, q->lo, q->hi, lo, hi);
    kcc_mesh_box_walk(q->body->mesh, lo, hi, overlap_leaf, q);
}

/// Sorts keys ascending (a shell sort: no allocation, few keys are far from their place).
static void sort_keys(uint64_t *keys, uint32_t n)
{
    static const uint32_t gaps[] = {132, 57, 23, 10, 4, 1};
    for (size_t g = 0; g < sizeof gaps / sizeof gaps[0]; ++g)
        for (uint32_t i = gaps[g]; i < n; ++i) {
            const uint64_t key = keys[i];
            uint32_t j = i;
            for (; j >= gaps[g] && keys[j - gaps[g]] > key; j -= gaps[g])
                keys[j] = keys[j - gaps[g]];
            keys[j] = key;
        }
}

/// Appends the entries of static-tree leaf (first, count) that layer_mask sees and whose bounds
/// overlap the box (four at a time, each block masked to the leaf's lanes) to out from found, each
/// as its order (high half) and its index (low half). Returns the new count, UINT32_MAX past
/// KCC_STATIC_GATHER_MAX.
static uint32_t gather_leaf_entries(const kcc_static_tree *st, const kcc_pbox *qb,
                                    uint32_t layer_mask, uint32_t first, uint32_t count,
                                    uint64_t out[KCC_STATIC_GATHER_MAX], uint32_t found)
{
    const uint32_t end = first + count;
    for (uint32_t b = first / 4; 4 * b < end; ++b) {
        const kcc_static_box4 *box = &st->boxes[b];
        int mask = kcc_pbox_test4(qb, box->x[0], box->x[1], box->y[0], box->y[1], box->z[0],
                                  box->z[1]) & kcc_static_block_lanes(first, end, b);
        for (; mask != 0; mask &= mask - 1) {
            const int bit = mask & -mask;
            const uint32_t k = 4 * b + (uint32_t)((bit >> 1) - (bit >> 3));
            if ((st->leaves[k].layers & layer_mask) == 0)
                continue;
            if (found == KCC_STATIC_GATHER_MAX)
                return UINT32_MAX;
            out[found++] = (uint64_t)st->order[k] << 32 | k;
        }
    }
    return found;
}

uint32_t kcc_static_entries_in_box(const kcc_static_tree *st, const float lo[3], const float hi[3],
                                  uint32_t layer_mask, uint64_t out[KCC_STATIC_GATHER_MAX])
{
    kcc_pbox qb;
    kcc_pbox_setup(&qb, lo, hi);
    uint32_t stack[KCC_TREE_STACK], sp = 0, found = 0;
    stack[sp++] = 0;
    while (sp > 0 && found != UINT32_MAX) {
        const kcc_node4 *q = &st->quads[stack[--sp]];
        const int mask = kcc_pbox_test(&qb, q), inner = mask & kcc_inner_mask(q);
        KCC_ASSERT(sp + 4 <= KCC_TREE_STACK);
        for (int i = 0; i < 4 && found != UINT32_MAX; ++i) {
            if (inner >> i & 1)
                stack[sp++] = q->first[i];
            else if (mask >> i & 1)
                found = gather_leaf_entries(st, &qb, layer_mask, q->first[i], q->count[i], out,
                                            found);
        }
    }
    if (found != UINT32_MAX)
        sort_keys(out, found);
    return found;
}

uint32_t kcc_world_overlap_aabb(const kcc_world *world, const vec3 box[2], uint32_t layer_mask,
                                kcc_body_triangle *out, uint32_t capacity)
{
    KCC_ISA_DISPATCH(world_overlap_aabb, world, box, layer_mask, out, capacity);
    if (!world || !box || !kcc_box_valid(box) || (capacity > 0 && !out))
        return 0;
    overlap_query q = {.world = world, .lo = box[0], .hi = box[1], .out = out,
                       .capacity = capacity};
    uint64_t entries[KCC_STATIC_GATHER_MAX];
    if (world->statics.valid && world->statics.count > 0) {
        const uint32_t n = kcc_static_entries_in_box(&world->statics, box[0], box[1], layer_mask,
                                                     entries);
        q.statics = n != UINT32_MAX;
        q.entries = entries, q.entry_count = q.statics ? n : 0;
    }
    if (!q.statics || world->statics.members != world->body_count)
        kcc_world_for_bodies_in_box(world, box[0], box[1], layer_mask, overlap_body, &q);
    overlap_entries_below(&q, UINT32_MAX);
    return q.found;
}

/* ------------------------------------------------------------------------------------------------
 * Box sweep: the static tree walked nearest first in the world (when valid: the box's centre along
 * delta, entries grown by the half extents and a rounding margin), then each other body's tree
 * walked nearest first in its own frame (the box's local bounds moved along the delta seen there),
 * every candidate triangle swept placed, in the world, by kcc_tri_sweep_internal. The earliest
 * contact wins, ties to the lowest (slot, triangle): the order bodies are visited in does not
 * change the answer. */

typedef struct sweep_query {
    const kcc_world *world;
    double           center[3], half[3], delta[3];  ///< the world box and its motion
    float            swept_lo[3], swept_hi[3];       ///< world bounds of the whole motion
    double           best_t;       ///< 2 before any contact
    double           best_n[3];
    uint32_t         best_slot;    ///< body slot, UINT32_MAX before any contact
    uint32_t         best_id;      ///< input index in that body's mesh
    bool             best_start;
    float            limit;        ///< best_t grown by a relative hair (ties still visited), <= 1
    const kcc_body  *body;         ///< the body being swept
    const kcc_mesh  *leaf;         ///< what its walk's slots index: its mesh, or a heightfield view
    uint32_t         slot;
    bool             identity;
    bool             statics;      ///< the static tree's members are swept through it
    uint32_t         layer_mask;
    kcc_pray         slab;         ///< the static tree's node and entry test (sweep_static_slab)
} sweep_query;

static void sweep_offer(sweep_query *q, const kcc_tri *t, uint32_t id)
{
    double th, normal[3];
    bool start;
    if (!kcc_tri_bounds_touch(t, q->swept_lo, q->swept_hi) || /* the motion's bounds miss it */
        !kcc_tri_sweep_internal(t->v[0], t->v[1], t->v[2], q->center, q->half, q->delta,
                                kcc_sweep_tie_limit(q->best_t), &th, normal, &start))
        return;
    if (th < q->best_t ||
        (th == q->best_t && (q->slot < q->best_slot || (q->slot == q->best_slot && id < q->best_id)))) {
        q->best_t = th;
        memcpy(q->best_n, normal, sizeof normal);
        q->best_slot = q->slot;
        q->best_id = id;
        q->best_start = start;
        q->limit = fminf((float)th * (1.0f + 1e-6f) + 1e-30f, 1.0f);
    }
}

static float sweep_leaf(void *ctx, uint32_t first, uint32_t count)
{
    sweep_query *q = ctx;
    kcc_tri buf[4];
    for (uint32_t s0 = first, end = first + count; s0 < end; s0 += 4) {
        const uint32_t n = end - s0 < 4 ? end - s0 : 4;
        const kcc_tri *t = placed_run(q->body, q->leaf, q->identity, s0, n, buf);
        for (uint32_t i = 0; i < n; ++i)
            sweep_offer(q, &t[i], kcc_mesh_tri_id(q->leaf, s0 + i));
    }
    return q->limit;
}

/// sweep_leaf over the listed slots of a static-tree entry (a rotated member's run).
static void sweep_slots(sweep_query *q, const uint32_t *slots, uint32_t count)
{
    kcc_tri buf[4];
    for (uint32_t i = 0; i < count; ++i) {
        const kcc_tri *t = placed_run(q->body, q->leaf, q->identity, slots[i], 1, buf);
        sweep_offer(q, t, kcc_mesh_tri_id(q->leaf, slots[i]));
    }
}

/// The node test of the sweep in the body's frame: the segment of the box's local centre along
/// the local delta, nodes grown by the local half extents plus a margin covering the rounding of
/// the local box, of the rotated delta and of the grown bounds (as kcc_mesh_sweep_aabb's margin).
static void sweep_local_slab(const sweep_query *q, const float lo[3], const float hi[3],
                             kcc_pray *slab)
{
    const kcc_body *b = q->body;
    float local_lo[3], local_hi[3], delta[3], org[3], grow[3];
    const float world_delta[3] = {(float)q->delta[0], (float)q->delta[1], (float)q->delta[2]};
    body_local_box(b, q->identity, lo, hi, local_lo, local_hi);
    if (q->identity)
        memcpy(delta, world_delta, sizeof delta);
    else
        kcc_pose_vector_inverse(&b->pose, world_delta, delta);
    float big = b->mesh->coord_scale;
    const float delta_size = fabsf(world_delta[0]) + fabsf(world_delta[1]) + fabsf(world_delta[2]);
    big = fmaxf(big, fmaxf(max_abs3f(local_lo), max_abs3f(local_hi)) + delta_size);
    const float margin = big * 1e-6f + (q->identity ? 0.0f : delta_size * 0x1p-18f) + 1e-30f;
    for (int k = 0; k < 3; ++k) {
        org[k] = 0.5f * local_lo[k] + 0.5f * local_hi[k];
        grow[k] = 0.5f * (local_hi[k] - local_lo[k]) + margin;
    }
    kcc_pray_setup(slab, org, delta, grow);
}

typedef struct sweep_body_ctx {
    sweep_query *query;
    const float *lo, *hi;   ///< the world box at the start
} sweep_body_ctx;

/// Makes the body in slot the one whose triangles the sweep tests.
static void sweep_set_body(sweep_query *q, uint32_t slot)
{
    q->body = &q->world->bodies[slot];
    q->slot = slot;
    q->identity = kcc_pose_is_identity(&q->body->pose);
    q->leaf = q->body->mesh;
}

/// Sweeps the body in slot (seen, its bounds touching the motion's) through its own tree; the
/// static tree's members are not (sweep_static_leaf sweeps them).
static void sweep_body(void *ctx, uint32_t slot)
{
    sweep_body_ctx *c = ctx;
    sweep_query *q = c->query;
    if (q->statics && q->world->statics.member[slot])
        return;
    sweep_set_body(q, slot);
    kcc_pray slab;
    sweep_local_slab(q, c->lo, c->hi, &slab);
    const kcc_mesh *mesh = q->body->mesh;
    if (mesh->hf) {
        kcc_hf_view view;
        q->leaf = kcc_hf_view_init(&view, mesh);
        kcc_hf_walk_nearest(mesh, &view, &slab, q->limit, sweep_leaf, q);
        return;
    }
    kcc_mesh_walk_nearest(mesh, &slab, q->limit, sweep_leaf, q);
}

uint32_t kcc_static_leaf_entries_nearest(const kcc_static_tree *st, const kcc_pray *slab,
                                         float limit, uint32_t layer_mask, uint32_t first,
                                         uint32_t count, uint32_t item[KCC_LEAF_MAX],
                                         float entry[KCC_LEAF_MAX])
{
    uint32_t n = 0;
    KCC_ASSERT(count <= KCC_LEAF_MAX);
    const uint32_t end = first + count;
    for (uint32_t b = first / 4; 4 * b < end; ++b) {
        float t[4];
        int mask = kcc_pray_test_planes(slab, &st->boxes[b], limit, t) &
                   kcc_static_block_lanes(first, end, b);
        for (; mask != 0; mask &= mask - 1) {
            const int bit = mask & -mask, i = (bit >> 1) - (bit >> 3);
            const uint32_t k = 4 * b + (uint32_t)i;
            if ((st->leaves[k].layers & layer_mask) == 0)
                continue;
            uint32_t j = n++; /* insertion by entry distance */
            for (; j > 0 && entry[j - 1] > t[i]; --j)
                item[j] = item[j - 1], entry[j] = entry[j - 1];
            item[j] = k, entry[j] = t[i];
        }
    }
    return n;
}

/// A static-tree leaf's entries that the mask sees and whose grown bounds the box's centre enters
/// before the best contact so far (kcc_static_leaf_entries_nearest), each entry's triangles swept
/// nearest entry first while its entry is not beyond the best contact: a leaf's entries spread
/// over its box, and the near ones' contacts cut the far ones off.
static float sweep_static_leaf(void *ctx, uint32_t first, uint32_t count)
{
    sweep_query *q = ctx;
    const kcc_static_tree *st = &q->world->statics;
    uint32_t item[KCC_LEAF_MAX];
    float entry[KCC_LEAF_MAX];
    const uint32_t n = kcc_static_leaf_entries_nearest(st, &q->slab, q->limit, q->layer_mask, first,
                                                       count, item, entry);
    for (uint32_t i = 0; i < n && entry[i] <= q->limit; ++i) {
        const kcc_static_leaf *e = &st->leaves[item[i]];
        if (e->body != q->slot)
            sweep_set_body(q, e->body);
        if (e->listed)
            sweep_slots(q, st->slots + e->first, e->count);
        else
            sweep_leaf(q, e->first, e->count);
    }
    return q->limit;
}

/// The static tree's node test in the world, as kcc_mesh_sweep_aabb's in a mesh: the segment of
/// the box's centre along delta, nodes grown by the half extents plus a margin of a few ulps of
/// the largest coordinate in play (the tree's, the box's, the motion's). False when the grown,
/// swept bounds leave float range (the bodies are then swept through their own trees).
static bool sweep_static_slab(sweep_query *q, const vec3 box[2], const vec3 delta)
{
    float org[3], grow[3], big = q->world->statics.coord_scale;
    for (int k = 0; k < 3; ++k) {
        org[k] = (float)q->center[k];
        big = fmaxf(big, fmaxf(fabsf(box[0][k]), fabsf(box[1][k])) + fabsf(delta[k]));
    }
    const float margin = big * 1e-6f + 1e-30f;
    for (int k = 0; k < 3; ++k)
        grow[k] = (float)q->half[k] + margin;
    kcc_pray_setup(&q->slab, org, delta, grow);
    return kcc_swept_slab_is_finite(&q->slab, box, delta);
}

/// World bounds of box swept along delta, rounded outward.
static void swept_bounds(const vec3 box[2], const vec3 delta, float lo[3], float hi[3])
{
    for (int k = 0; k < 3; ++k) {
        lo[k] = nextafterf(fminf(box[0][k], box[0][k] + delta[k]), -INFINITY);
        hi[k] = nextafterf(fmaxf(box[1][k], box[1][k] + delta[k]), INFINITY);
    }
}

bool kcc_world_sweep_aabb(const kcc_world *world, const vec3 box[2], const vec3 delta,
                          uint32_t layer_mask, kcc_world_sweep_hit *hit)
{
    KCC_ISA_DISPATCH(world_sweep_aabb, world, box, delta, layer_mask, hit);
    if (!world || !box || !kcc_box_valid(box) || !delta || !hit || !finite3(delta))
        return false;
    if (delta[0] == 0.0f && delta[1] == 0.0f && delta[2] == 0.0f)
        return false; /* nothing approaches anything (kcc_mesh_sweep_aabb's rule) */
    sweep_query q = {.world = world, .best_t = 2.0, .best_slot = UINT32_MAX,
                     .best_id = UINT32_MAX, .limit = 1.0f, .slot = UINT32_MAX,
                     .layer_mask = layer_mask};
    kcc_box_center_half_d(box[0], box[1], q.center, q.half);
    for (int k = 0; k < 3; ++k)
        q.delta[k] = delta[k];
    swept_bounds(box, delta, q.swept_lo, q.swept_hi);
    const kcc_static_tree *st = &world->statics;
    q.statics = st->valid && st->count > 0 && sweep_static_slab(&q, box, delta);
    if (q.statics)
        kcc_walk_nearest(st->quads, &q.slab, q.limit, sweep_static_leaf, &q);
    sweep_body_ctx c = {.query = &q, .lo = box[0], .hi = box[1]};
    if (!q.statics || st->members != world->body_count)
        kcc_world_for_bodies_in_box(world, q.swept_lo, q.swept_hi, layer_mask, sweep_body, &c);
    if (q.best_slot == UINT32_MAX)
        return false;
    hit->t = (float)q.best_t;
    for (int k = 0; k < 3; ++k)
        hit->normal[k] = (float)q.best_n[k];
    hit->body = kcc_body_id(world, q.best_slot);
    hit->triangle = q.best_id;
    hit->start_overlap = q.best_start;
    return true;
}

/* ------------------------------------------------------------------------------------------------
 * Ray cast: the static tree's entries (the static bodies' mesh leaves, world_static_tree.c) visited
 * nearest first, each entry's triangles cast in its body's frame; then the other bodies (kinematic,
 * heightfields, sensors aside, statics the tree has no room for) nearest first through the body
 * tree, each cast in its own frame by the mesh's watertight ray cast. The best distance so far over
 * every body limits every walk. */

/// Bodies whose ray in their own frame a query keeps (direct-mapped by slot): a ray enters about 8
/// to 14 bodies, whose leaves the static tree interleaves.
#define RAY_LOCAL_CACHE 16

/// The ray in one body's frame, set up for that body's leaf test.
typedef struct ray_local {
    uint32_t     slot;       ///< UINT32_MAX: empty
    bool         castable;   ///< false: the ray in the body's frame is not finite, or its dir zero
    float        org[3], dir[3];
    kcc_ray_walk walk;       ///< its origin and dir: org and dir, or the world ray's
} ray_local;

typedef struct ray_query {
    const kcc_world *world;
    const float     *origin, *dir;
    float            max_t;
    uint32_t         layer_mask;
    kcc_pray         slab;         ///< the world ray's node test (the trees and body bounds)
    bool             statics;      ///< the static tree is valid: its members are cast through it
    float            best_t;       ///< max_t before any hit
    uint32_t         best_slot;    ///< UINT32_MAX before any hit
    uint32_t         best_id;      ///< the best triangle's input index
    kcc_ray_hit      best;         ///< in the best body's frame
    ray_local       *locals;       ///< RAY_LOCAL_CACHE, on the stack of the static tree's walk
} ray_query;

/// The world ray enters box [lo, hi] within [0, limit] (kcc_pray_test's rule, one box); *entry is
/// the (shrunk) entry distance.
KCC_HOT bool ray_enters_box(const kcc_pray *r, const float lo[3], const float hi[3], float limit,
                           float *entry)
{
    float tn = 0.0f, tf = limit;
    for (int k = 0; k < 3; ++k) {
        const bool neg = signbit(r->inv[k]) != 0;
        const float near = neg ? hi[k] : lo[k];
        const float far = neg ? lo[k] : hi[k];
        const float a = (near - r->org_n[k]) * r->inv[k];
        const float c = (far - r->org_f[k]) * r->inv[k] * KCC_SLAB_GROW;
        tn = a > tn ? a : tn; /* a NaN keeps tn */
        tf = c < tf ? c : tf; /* a NaN keeps tf */
    }
    *entry = tn * KCC_SLAB_SHRINK;
    return *entry <= tf;
}

/// The ray in body b's frame: the world ray as is for an identity pose, else origin R^T (origin -
/// position) and dir R^T dir written to org and dir. False when that ray cannot be cast.
static bool body_ray(const ray_query *q, const kcc_body *b, float org[3], float dir[3],
                     const float **out_origin, const float **out_dir)
{
    *out_origin = q->origin, *out_dir = q->dir;
    if (kcc_pose_is_identity(&b->pose))
        return true;
    const float *o = q->origin, *p = b->pose.transform.position;
    const float rel[3] = {o[0] - p[0], o[1] - p[1], o[2] - p[2]};
    kcc_pose_vector_inverse(&b->pose, rel, org);
    kcc_pose_vector_inverse(&b->pose, q->dir, dir);
    *out_origin = org, *out_dir = dir;
    return finite3(org) && !(dir[0] == 0.0f && dir[1] == 0.0f && dir[2] == 0.0f);
}

/// Keeps the hit h in body slot if it is the best so far (smallest t, then lowest slot).
static void ray_keep(ray_query *q, uint32_t slot, const kcc_ray_hit *h)
{
    if (h->t < q->best_t || (h->t == q->best_t && slot < q->best_slot)) {
        q->best_t = h->t;
        q->best_slot = slot;
        q->best_id = h->triangle;
        q->best = *h;
    }
}

/// Casts the ray through the body in slot `slot` (seen, its bounds entered) in the body's frame.
static void ray_body(ray_query *q, uint32_t slot)
{
    const kcc_body *b = &q->world->bodies[slot];
    float org[3], dir[3];
    const float *o, *d;
    kcc_ray_hit h;
    if (body_ray(q, b, org, dir, &o, &d) &&
        kcc_mesh_raycast_internal(b->mesh, o, d, q->max_t, q->best_t, &h))
        ray_keep(q, slot, &h);
}

/// The body in slot a query casts through the body tree (or the scan of every slot), or NULL: seen
/// by its mask and not a member of the static tree it walks.
static const kcc_body *ray_other_body(const ray_query *q, uint32_t slot)
{
    if (q->statics && q->world->statics.member[slot])
        return NULL;
    return seen_body(q->world, slot, q->layer_mask);
}

/// A body-tree leaf's bodies (at most KCC_LEAF_MAX) are cast nearest entry first, each only while
/// its entry is not beyond the best hit so far.
static float ray_leaf(void *ctx, uint32_t first, uint32_t count)
{
    ray_query *q = ctx;
    uint32_t slots[KCC_LEAF_MAX], n = 0;
    float entry[KCC_LEAF_MAX];
    KCC_ASSERT(count <= KCC_LEAF_MAX);
    for (uint32_t k = first, end = first + count; k < end; ++k) {
        const uint32_t slot = q->world->tree.slot[k];
        const kcc_body *b = ray_other_body(q, slot);
        float t;
        if (!b || !ray_enters_box(&q->slab, b->bounds[0], b->bounds[1], q->best_t, &t))
            continue;
        uint32_t j = n++; /* insertion by entry distance */
        for (; j > 0 && entry[j - 1] > t; --j)
            slots[j] = slots[j - 1], entry[j] = entry[j - 1];
        slots[j] = slot, entry[j] = t;
    }
    for (uint32_t i = 0; i < n && entry[i] <= q->best_t; ++i)
        ray_body(q, slots[i]);
    return q->best_t;
}

/// The ray in body slot's frame from the query's cache, set up on a miss.
static ray_local *ray_local_of(ray_query *q, uint32_t slot)
{
    ray_local *c = &q->locals[slot % RAY_LOCAL_CACHE];
    if (c->slot != slot) {
        const kcc_body *b = &q->world->bodies[slot];
        const float *o, *d;
        c->slot = slot;
        c->castable = body_ray(q, b, c->org, c->dir, &o, &d);
        if (c->castable)
            kcc_ray_walk_init(&c->walk, b->mesh, o, d, q->max_t);
    }
    return c;
}

/// Casts the ray through one static-tree entry's triangles in its body's frame. The walk starts
/// from the best hit over every body so far: a hit at the same distance wins in a lower slot
/// (best_id UINT32_MAX: any triangle is lower), loses in a higher one (0: none is lower), and in the
/// best's own body goes to the lower triangle, so the answer is the smallest (t, slot, triangle)
/// as the per-body casts give it.
static void ray_static_entry(ray_query *q, const kcc_static_leaf *e)
{
    ray_local *c = ray_local_of(q, e->body);
    if (!c->castable)
        return;
    kcc_ray_walk *w = &c->walk;
    w->best = q->best_t;
    w->best_slot = UINT32_MAX;
    w->best_id = e->body < q->best_slot ? UINT32_MAX : e->body > q->best_slot ? 0u : q->best_id;
    if (e->listed)
        kcc_ray_walk_slots(w, q->world->statics.slots + e->first, e->count);
    else
        kcc_ray_walk_leaf(w, e->first, e->count);
    if (w->best_slot == UINT32_MAX)
        return;
    q->best_t = w->best;
    q->best_slot = e->body;
    q->best_id = w->best_id;
    kcc_ray_walk_hit(w, &q->best);
}

/// Entries of visited static-tree leaves not cast yet, farthest entry first (the nearest last),
/// after a sentinel in slot 0 entered at +inf: the nearest's distance t[n - 1] is always there to
/// compare, one test a step of the walk.
#define RAY_PENDING 32
typedef struct ray_pending {
    uint32_t item[RAY_PENDING + 1];   ///< entry index (leaf order); slot 0 the sentinel's
    float    t[RAY_PENDING + 1];      ///< where the ray enters its bounds (shrunk); t[0] = +inf
    uint32_t n;                       ///< 1 + the pending entries
} ray_pending;

/// Casts the pending entries entered no later than `upto`, nearest first, each only while its
/// entry is not beyond the best hit so far (the others can no longer win: dropped).
static void ray_cast_pending_now(ray_query *q, ray_pending *p, float upto)
{
    const kcc_static_tree *st = &q->world->statics;
    while (p->n > 1 && p->t[p->n - 1] <= upto) {
        --p->n;
        if (p->t[p->n] > q->best_t) {
            p->n = 1;
            return;
        }
        ray_static_entry(q, &st->leaves[p->item[p->n]]);
    }
}

/// ray_cast_pending_now, its test inlined into the walk (most steps have nothing to cast).
KCC_HOT void ray_cast_pending(ray_query *q, ray_pending *p, float upto)
{
    if (p->t[p->n - 1] <= upto)
        ray_cast_pending_now(q, p, upto);
}

/// Adds entry k, entered at t, to the pending ones (a full list first casts its nearest).
static void ray_pend(ray_query *q, ray_pending *p, uint32_t k, float t)
{
    if (p->n == RAY_PENDING + 1)
        ray_cast_pending(q, p, p->t[p->n - 1]);
    uint32_t j = p->n++; /* insertion, farthest first; ties: the later leaf slot first */
    for (; j > 1 && p->t[j - 1] <= t; --j)
        p->item[j] = p->item[j - 1], p->t[j] = p->t[j - 1];
    p->item[j] = k, p->t[j] = t;
}

/// Adds the entries of a static-tree leaf that the mask sees and the ray enters before the best hit
/// so far to the pending ones, their bounds tested four at a time (the slab test of ray_enters_box's
/// rule on the blocks the leaf spans, each masked to the leaf's lanes), and asks for the first line
/// of each one's triangles (its slot list, or its corner offsets), which its cast reads first.
static void ray_pend_leaf(ray_query *q, ray_pending *p, uint32_t first, uint32_t count)
{
    const kcc_static_tree *st = &q->world->statics;
    const uint32_t end = first + count;
    for (uint32_t b = first / 4; 4 * b < end; ++b) {
        float t[4];
        int mask = kcc_pray_test_planes(&q->slab, &st->boxes[b], q->best_t, t) &
                   kcc_static_block_lanes(first, end, b);
        for (; mask != 0; mask &= mask - 1) {
            const int bit = mask & -mask, i = (bit >> 1) - (bit >> 3);
            const uint32_t k = 4 * b + (uint32_t)i;
            const kcc_static_leaf *e = &st->leaves[k];
            if ((e->layers & q->layer_mask) != 0) {
                kcc_prefetch(e->listed ? (const void *)(st->slots + e->first)
                                       : (const void *)(q->world->bodies[e->body].mesh->corners +
                                                        e->first));
                ray_pend(q, p, k, t[i]);
            }
        }
    }
}

/// Asks for the lines of the n children a group's test pushed (the walk tests them after the
/// nearest one's subtree): an inner child's group (two lines) or a leaf's first entry block (one
/// and a half). The tree (72 bytes an entry, 1.4 MB for ctf_inyard's 27 pieces) is larger than a
/// core's first-level cache: asked for while the walk goes on, the lines are there when it tests
/// them (docs/world.md, "World queries").
KCC_HOT void ray_prefetch_pushed(const kcc_static_tree *st, const kcc_stack_entry *pushed, uint32_t n)
{
    for (uint32_t i = 0; i < n; ++i) {
        const char *next = pushed[i].count == 0 ? (const char *)&st->quads[pushed[i].first]
                                                : (const char *)&st->boxes[pushed[i].first / 4];
        kcc_prefetch(next);
        kcc_prefetch(next + 64);
    }
}

/// The static tree walked nearest first as kcc_walk_nearest walks a mesh's, except that a leaf's
/// entries wait in a pending list and are cast when no pending node is entered before them: a leaf
/// holds up to KCC_LEAF_MAX entries (of up to KCC_LEAF_MAX triangles each) spread over its box, and
/// casting them all at once would test far entries before the near ones of the next leaf.
static void ray_walk_statics(ray_query *q)
{
    const kcc_node4 *quads = q->world->statics.quads;
    kcc_stack_entry stack[KCC_TREE_STACK], cur;
    ray_pending pending;
    pending.n = 1;
    pending.t[0] = INFINITY;
    float entry_t[4];
    int mask = kcc_pray_test(&q->slab, &quads[0], q->best_t, entry_t);
    if (mask == 0)
        return;
    uint32_t sp = kcc_descend(stack, 0, &quads[0], mask, entry_t, &cur);
    for (;;) {
        ray_cast_pending(q, &pending, cur.t);
        if (cur.t <= q->best_t) {
            if (cur.count == 0) {
                const kcc_node4 *g = &quads[cur.first];
                mask = kcc_pray_test(&q->slab, g, q->best_t, entry_t);
                if (mask != 0) {
                    KCC_ASSERT(sp + 3 <= KCC_TREE_STACK);
                    const uint32_t pushed = sp;
                    sp = kcc_descend(stack, sp, g, mask, entry_t, &cur);
                    ray_prefetch_pushed(&q->world->statics, stack + pushed, sp - pushed);
                    continue;
                }
            } else {
                ray_pend_leaf(q, &pending, cur.first, cur.count);
            }
        }
        if (sp == 0)
            break;
        cur = stack[--sp];
    }
    ray_cast_pending(q, &pending, INFINITY);
}

/// The hit record in the world: t as the body's frame has it, the point on the world ray, the
/// normal rotated to the world in double and renormalised there (the float matrix is a rotation
/// to a few ulps).
static void ray_hit_write(const ray_query *q, kcc_world_hit *hit)
{
    const kcc_body *b = &q->world->bodies[q->best_slot];
    hit->t = q->best_t;
    double n[3] = {q->best.normal[0], q->best.normal[1], q->best.normal[2]};
    if (b->pose.rotated) {
        double r[3], len = 0.0;
        for (int i = 0; i < 3; ++i) {
            r[i] = (double)b->pose.m[i][0] * q->best.normal[0] +
                   (double)b->pose.m[i][1] * q->best.normal[1] +
                   (double)b->pose.m[i][2] * q->best.normal[2];
            len += r[i] * r[i];
        }
        len = sqrt(len);
        for (int i = 0; i < 3; ++i)
            n[i] = r[i] / len;
    }
    for (int k = 0; k < 3; ++k) {
        hit->point[k] = q->origin[k] + q->best_t * q->dir[k];
        hit->normal[k] = (float)n[k];
    }
    hit->body = kcc_body_id(q->world, q->best_slot);
    hit->triangle = q->best.triangle;
}

/// Casts the query's ray through every body it sees: the static tree's members through it (when
/// valid), the others through the body tree (when valid) or by scanning every slot.
static void ray_cast_world(ray_query *q)
{
    const kcc_world *world = q->world;
    if (q->statics && world->statics.count > 0) {
        ray_local locals[RAY_LOCAL_CACHE]; /* only slot is set up front: the query's fixed cost */
        for (uint32_t i = 0; i < RAY_LOCAL_CACHE; ++i)
            locals[i].slot = UINT32_MAX;
        q->locals = locals;
        ray_walk_statics(q);
        q->locals = NULL;
    }
    if (q->statics && world->statics.members == world->body_count)
        return; /* every live body is a member (the static tree's rebuild counts them; any body
                   added or removed since is a kinematic one, which changes body_count) */
    if (world->tree.valid) {
        if (world->tree.count > 0)
            kcc_walk_nearest(world->tree.quads, &q->slab, q->best_t, ray_leaf, q);
        return;
    }
    for (uint32_t slot = 0; slot < world->body_end; ++slot) {
        const kcc_body *b = ray_other_body(q, slot);
        float entry;
        if (b && ray_enters_box(&q->slab, b->bounds[0], b->bounds[1], q->best_t, &entry))
            ray_body(q, slot);
    }
}

bool kcc_world_raycast_layers(const kcc_world *world, const vec3 origin, const vec3 dir,
                              float max_t, uint32_t layer_mask, kcc_world_hit *hit)
{
    if (!world || !origin || !dir || !hit || !finite3(origin) || !finite3(dir) || !(max_t >= 0.0f))
        return false;
    if (dir[0] == 0.0f && dir[1] == 0.0f && dir[2] == 0.0f)
        return false;
    ray_query q; /* field by field: the slab and the hit record are written before they are read,
                    and zeroing them costs a ray as much as its setup */
    q.world = world, q.origin = origin, q.dir = dir, q.max_t = max_t, q.layer_mask = layer_mask;
    q.statics = world->statics.valid, q.best_t = max_t, q.best_slot = UINT32_MAX, q.best_id = 0;
    q.locals = NULL;
    /* Bounds grown by a hair of the origin's size: the ray in a body's frame carries the rounding
     * of origin - position, which the bounds' own margin (of the body's size) may not cover. */
    const float grow = max_abs3f(origin) * 0x1p-18f;
    kcc_pray_setup(&q.slab, origin, dir, (const float[3]){grow, grow, grow});
    ray_cast_world(&q);
    if (q.best_slot == UINT32_MAX)
        return false;
    ray_hit_write(&q, hit);
    return true;
}

bool kcc_world_raycast(const kcc_world *world, const vec3 origin, const vec3 dir, float max_t,
                       kcc_world_hit *hit)
{
    return kcc_world_raycast_layers(world, origin, dir, max_t, KCC_LAYERS_ALL, hit);
}
