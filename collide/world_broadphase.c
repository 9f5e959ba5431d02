/* world_broadphase.c: the world's side of the broadphase: bodies split into pieces (each a proxy:
 * a large static body along its tree into pieces no larger than a grid cell, any other body
 * whole), and the pieces near a character's region that a step reads. Allocates nothing. */
#include "kcc_world_internal.h"

/// Whether the child box fits in a piece: every side at most the piece size.
static bool small_enough(const float lo[3], const float hi[3], float size)
{
    return hi[0] - lo[0] <= size && hi[1] - lo[1] <= size && hi[2] - lo[2] <= size;
}

/// The first leaf-order slot under a child (first, count): descend the leftmost children.
static uint32_t first_slot_under(const kcc_mesh *mesh, uint32_t first, uint32_t count)
{
    while (count == 0 && !mesh->hf) { /* a heightfield is one piece from slot 0 */
        const kcc_qnode4 *q = &mesh->groups[first]; /* slot 0 is always live */
        first = q->first[0];
        count = q->count[0];
    }
    return first;
}

/// What plan_pieces calls for each piece of body slot: the child (first, count) of a group of its
/// tree (count > 0: a run of a leaf's slots), its placed bounds lo, hi.
typedef void piece_taker(kcc_world *world, uint32_t slot, uint32_t first, uint32_t count,
                         const float *lo, const float *hi);

/// The local bounds of slot s's triangle.
static void slot_bounds(const kcc_mesh *mesh, uint32_t s, float lo[3], float hi[3])
{
    float buf[3][3];
    const float *v[3];
    kcc_mesh_corners(mesh, s, KCC_READ_ANY, buf, v);
    for (int k = 0; k < 3; ++k) {
        lo[k] = kcc_minf(v[0][k], kcc_minf(v[1][k], v[2][k]));
        hi[k] = kcc_maxf(v[0][k], kcc_maxf(v[1][k], v[2][k]));
    }
}

/// The pieces of a leaf of body b's tree (slots first .. first + count - 1, placed bounds lo, hi):
/// the leaf when it fits a cell of `size`, else runs of its slots in order, each as long as its
/// triangles' placed bounds still fit (a triangle larger than a cell alone), so that a tree whose
/// leaves hold several tiles still gives pieces the grid enters instead of testing them against
/// every query (a_large_sensor_of_small_tiles_gives_pieces_that_fit_a_cell). Calls `take` (when not
/// NULL) for each; returns how many.
static uint32_t leaf_pieces(const kcc_body *b, uint32_t first, uint32_t count, const float lo[3],
                            const float hi[3], float size, piece_taker *take, kcc_world *out_world,
                            uint32_t slot)
{
    if (small_enough(lo, hi, size)) {
        if (take)
            take(out_world, slot, first, count, lo, hi);
        return 1;
    }
    uint32_t n = 0;
    for (uint32_t s = first, end = first + count; s < end; ++n) {
        float run_lo[3], run_hi[3], placed_lo[3], placed_hi[3];
        slot_bounds(b->mesh, s, run_lo, run_hi);
        kcc_pose_box_bounds(&b->pose, run_lo, run_hi, placed_lo, placed_hi);
        uint32_t e = s + 1;
        for (; e < end; ++e) {
            float grown_lo[3], grown_hi[3], wlo[3], whi[3];
            slot_bounds(b->mesh, e, grown_lo, grown_hi);
            for (int k = 0; k < 3; ++k) {
                grown_lo[k] = kcc_minf(grown_lo[k], run_lo[k]);
                grown_hi[k] = kcc_maxf(grown_hi[k], run_hi[k]);
            }
            kcc_pose_box_bounds(&b->pose, grown_lo, grown_hi, wlo, whi);
            if (!small_enough(wlo, whi, size))
                break;
            memcpy(run_lo, grown_lo, sizeof run_lo), memcpy(run_hi, grown_hi, sizeof run_hi);
            memcpy(placed_lo, wlo, sizeof placed_lo), memcpy(placed_hi, whi, sizeof placed_hi);
        }
        if (take)
            take(out_world, slot, s, e - s, placed_lo, placed_hi);
        s = e;
    }
    return n;
}

/// Calls `take` (when not NULL) for each piece of body b, returns how many there are. A static
/// body that is not a sensor has none: characters see static bodies whole, through their caches
/// (kcc_world_source_split), so the broadphase never holds them. Any other body, or a small static
/// sensor, or a heightfield, is one piece (the whole tree or grid); a large static sensor is split
/// along its tree into pieces that fit a cell (leaf_pieces).
static uint32_t plan_pieces(const kcc_world *world, const kcc_body *b, piece_taker *take,
                            kcc_world *out_world, uint32_t slot)
{
    const float size = world->desc.grid_cell_size;
    if (b->kind == KCC_BODY_STATIC && !b->sensor)
        return 0;
    if (b->kind != KCC_BODY_STATIC || b->mesh->hf || small_enough(b->bounds[0], b->bounds[1], size)) {
        if (take)
            take(out_world, slot, 0, 0, b->bounds[0], b->bounds[1]);
        return 1;
    }
    const kcc_mesh *mesh = b->mesh;
    uint32_t stack[KCC_TREE_STACK], sp = 0, n = 0;
    stack[sp++] = 0;
    while (sp > 0) {
        kcc_node4 scratch;
        const kcc_node4 *q = kcc_mesh_group(mesh, stack[--sp], &scratch);
        for (int i = 3; i >= 0; --i) { /* pushed last-first: visited in leaf order */
            const float lo[3] = {q->x[0][i], q->y[0][i], q->z[0][i]};
            const float hi[3] = {q->x[1][i], q->y[1][i], q->z[1][i]};
            if (!(lo[0] <= hi[0]))
                continue; /* an empty slot */
            float wlo[3], whi[3];
            kcc_pose_box_bounds(&b->pose, lo, hi, wlo, whi);
            if (q->count[i] > 0) {
                n += leaf_pieces(b, q->first[i], q->count[i], wlo, whi, size, take, out_world, slot);
            } else if (small_enough(wlo, whi, size)) {
                if (take)
                    take(out_world, slot, q->first[i], 0, wlo, whi);
                ++n;
            } else {
                KCC_ASSERT(sp < KCC_TREE_STACK);
                stack[sp++] = q->first[i];
            }
        }
    }
    return n;
}

/// Takes a free piece for body slot and gives it a proxy (room was checked).
static void take_piece(kcc_world *world, uint32_t slot, uint32_t first, uint32_t count,
                       const float *lo, const float *hi)
{
    kcc_body *b = &world->bodies[slot];
    const uint32_t index = world->free_piece;
    kcc_piece *p = &world->pieces[index];
    world->free_piece = p->next;
    ++world->piece_count;
    p->body = slot;
    p->first = first;
    p->count = count;
    p->slot_lo = first_slot_under(b->mesh, first, count);
    memcpy(p->bounds[0], lo, sizeof p->bounds[0]);
    memcpy(p->bounds[1], hi, sizeof p->bounds[1]);
    const uint32_t flags = b->kind == KCC_BODY_STATIC ? KCC_PROXY_STATIC : 0u;
    p->proxy = kcc_broadphase_add(world->broadphase, lo, hi, index, flags);
    KCC_ASSERT(p->proxy != KCC_PROXY_NONE);
    p->next = b->first_piece;
    b->first_piece = index;
}

uint32_t kcc_world_count_pieces(const kcc_world *world, const kcc_body *body)
{
    return plan_pieces(world, body, NULL, NULL, 0);
}

kcc_status kcc_world_add_pieces(kcc_world *world, uint32_t slot)
{
    kcc_body *b = &world->bodies[slot];
    b->first_piece = KCC_WORLD_NO_PIECE;
    /* a body added or placed: a static body's triangles change, or an added body's range may
       renumber the others' (compact_triangle_ranges): the characters' cached triangles go stale */
    world->static_key = kcc_fresh_key(world->static_key);
    const uint32_t n = plan_pieces(world, b, NULL, world, slot);
    const uint32_t proxy_room = world->desc.body_capacity + world->desc.character_capacity +
                                world->desc.piece_capacity;
    if (n > world->desc.piece_capacity - world->piece_count ||
        n > proxy_room - kcc_broadphase_proxy_count(world->broadphase))
        return KCC_ERR_TOO_LARGE;
    plan_pieces(world, b, take_piece, world, slot);
    return KCC_OK;
}

void kcc_world_remove_pieces(kcc_world *world, uint32_t slot)
{
    kcc_body *b = &world->bodies[slot];
    if (b->kind == KCC_BODY_STATIC)
        world->static_key = kcc_fresh_key(world->static_key);
    uint32_t index = b->first_piece;
    while (index != KCC_WORLD_NO_PIECE) {
        kcc_piece *p = &world->pieces[index];
        const uint32_t next = p->next;
        kcc_broadphase_remove(world->broadphase, p->proxy);
        p->next = world->free_piece;
        world->free_piece = index;
        --world->piece_count;
        index = next;
    }
    b->first_piece = KCC_WORLD_NO_PIECE;
}

void kcc_world_move_pieces(kcc_world *world, uint32_t slot)
{
    const kcc_body *b = &world->bodies[slot];
    for (uint32_t index = b->first_piece; index != KCC_WORLD_NO_PIECE;) {
        kcc_piece *p = &world->pieces[index];
        KCC_ASSERT(p->first == 0 && p->count == 0); /* only whole bodies move (statics re-split) */
        kcc_transform start, end;
        kcc_world_body_motion(world, slot, &start, &end, p->bounds);
        kcc_broadphase_move(world->broadphase, p->proxy, p->bounds[0], p->bounds[1]);
        index = p->next;
    }
}

/* ------------------------------------------------------------------------------------------------
 * What the step reads: the pieces near a character's region, and the pieces' pairs */

uint32_t kcc_world_pieces_near(const kcc_world *world, const float box[2][3], uint32_t *out,
                               uint32_t capacity)
{
    if (kcc_broadphase_proxy_count(world->broadphase) == 0)
        return 0;
    const uint32_t n = kcc_broadphase_query(world->broadphase, box[0], box[1], out, capacity);
    for (uint32_t i = 0; i < n && i < capacity; ++i)
        out[i] = kcc_broadphase_user(world->broadphase, out[i]);
    return n;
}

void kcc_world_update_broadphase(kcc_world *world)
{
    kcc_broadphase_update(world->broadphase);
}

uint32_t kcc_world_pair_count(const kcc_world *world, bool *out_overflow)
{
    const kcc_proxy_pair *pairs;
    return kcc_broadphase_pairs(world->broadphase, &pairs, out_overflow);
}

bool kcc_world_pair(const kcc_world *world, uint32_t i, kcc_world_pair_ends *out)
{
    const kcc_proxy_pair *pairs;
    const uint32_t n = kcc_broadphase_pairs(world->broadphase, &pairs, NULL);
    if (i >= n)
        return false;
    out->a = kcc_broadphase_user(world->broadphase, pairs[i].a);
    out->b = kcc_broadphase_user(world->broadphase, pairs[i].b);
    out->a_is_character = out->b_is_character = false; /* the broadphase holds pieces only */
    return true;
}
