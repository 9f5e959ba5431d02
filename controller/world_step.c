/* world_step.c: kcc_world_step: the bodies move, then every character (in parallel over the task
 * hooks) rides and is pushed, then every character moves through the bodies and its neighbours,
 * then a resolve pass and the sensors. Nothing here allocates. */
#include "kcc_world_internal.h" /* kcc_world_body_of_triangle, kcc_body_id */
#include "trace_internal.h"
#include "world_internal.h"

#include <stdatomic.h>

/* ------------------------------------------------------------------------------------------------
 * The step. Bodies move first; then every character, each on its own (in parallel over the task
 * hooks), rides its ground body and is pushed by movers in its way, seeing the other characters
 * where they stood at the step's start (cs->boxes); then every character moves by its
 * displacement through the bodies at their new poses and the other characters where riding and
 * pushing left them (cs->placed), so no move walks into the space a lift or a door has just put a
 * character in; last, a resolve pass in slot order puts back any character whose move ended inside
 * a box that a character earlier in the order ended in (both moved into the same space). Each
 * phase reads only the step's shared state and writes only its own character's slot, so results
 * are the same for any number of workers and any scheduling (docs/world.md, "Threads"). */

/// How many characters ahead a pass over the live characters asks for the lines it will read of
/// one: a few misses a character at 10k characters (the step's other passes left them in no
/// cache), which then overlap those of the characters before it.
#define PREFETCH_AHEAD 4u

/// The characters in a block of the step's parallel phases (run_over_live): a move costs 0.5-5 us,
/// so 8 of them outweigh taking a block (an atomic add) many times over while leaving blocks
/// enough to balance two workers to a few us at 1k characters; the snapshot, the neighbour lists
/// and the resolve pass's first look cost 0.03-0.3 us a character, and 64 of them fill whole
/// cache lines of the byte marks each writes (to_place, resolve_marks).
#define MOVE_BLOCK 8u
#define SNAPSHOT_BLOCK 64u
_Static_assert(SNAPSHOT_BLOCK % KCC_REGION_BLOCK == 0, "a snapshot block writes whole blocks of region stats");

/// What every character's phase of one step reads.
typedef struct step_context {
    const kcc_world             *world;
    struct kcc_world_characters *cs;
    kcc_world_source             source;   ///< what every character's source shares: the step's
                                           ///< key, the boxes' layers and masks
    kcc_world_source             fixed;    ///< the static part of every character's source on
                                           ///< fixed.layer_mask (KCC_LAYERS_ALL, the default),
                                           ///< split off once a step (character_source)
    const uint32_t              *movers;   ///< kinematic body slots that moved
    const mover_motion          *motions;  ///< their motions, by the same index
    uint32_t                     mover_count;
} step_context;

/// The world sources of one character's phase: `all`, what it sees, split into its static bodies
/// (`fixed`: its cache keeps their triangles from step to step; the step's own, ctx->fixed, when
/// the character's mask is its) and the rest (`rest`).
typedef struct character_sources {
    kcc_world_source all, fixed, rest;
} character_sources;

/// The world source of one character's phase (`out` set up as ctx->source): every static body
/// (whole), and the other pieces and the characters near it (its neighbours, world_neighbours.c),
/// or every body and character when the neighbour lists overflowed; the characters' boxes from
/// `boxes` (by slot).
static void see_from(const step_context *ctx, uint32_t slot, const float (*boxes)[2][3],
                     kcc_world_source *out)
{
    const struct kcc_world_characters *cs = ctx->cs;
    out->layer_mask = cs->masks[slot];
    out->boxes = boxes;
    out->skip_box = slot;
    out->self_layers = cs->layers[slot];
    if (cs->near.all) {
        out->box_slots = cs->live;
        out->box_count = cs->live_count;
    } else {
        const uint32_t *e = cs->near.entries + cs->near.first[slot];
        out->pieces = e;
        out->piece_count = cs->near.pieces[slot];
        out->box_slots = e + out->piece_count;
        out->box_count = cs->near.count[slot] - out->piece_count;
        out->reach = (const float(*)[3])cs->regions[slot];
    }
}

/// The world sources of one character's phase (see_from), split. On the step's mask the rest is
/// set up field by field like `all`, not copied from it: a copy of a struct just written field by
/// field waits for those stores (a store-forwarding stall, 4% of the step's time at 10k
/// characters on ctf_inyard, perf).
static void character_source(const step_context *ctx, uint32_t slot, const float (*boxes)[2][3],
                             character_sources *out)
{
    out->all = ctx->source;
    see_from(ctx, slot, boxes, &out->all);
    if (ctx->cs->split_off)
        return;
    if (out->all.layer_mask != ctx->fixed.layer_mask) {
        kcc_world_source_split(&out->all, &out->fixed, &out->rest);
        return;
    }
    out->rest = ctx->source;
    see_from(ctx, slot, boxes, &out->rest);
    kcc_world_source_link(&out->all, &ctx->fixed, &out->rest);
}

/// The static part that every character's source on the step's own mask (ctx->source's) shares.
static void split_step_fixed(step_context *ctx)
{
    kcc_world_source all = ctx->source, rest;
    kcc_world_source_split(&all, &ctx->fixed, &rest);
}

/// Translates the character's box by up to delta through source, stopping a skin short of the
/// first contact (swept, so nothing is passed through); returns the fraction of delta gone.
static float advance_character(kcc_character *ch, const kcc_local_source *source, const vec3 delta)
{
    const float len = glm_vec3_norm((float *)delta);
    if (!(len > 0.0f))
        return 1.0f;
    vec3 box[2];
    kcc_box_at(ch, ch->position, box);
    kcc_sweep_hit hit;
    float f = 1.0f;
    if (source->ops->sweep(source, (const vec3 *)box, delta, &hit))
        f = hit.start_overlap ? 0.0f : kcc_maxf(0.0f, hit.t - ch->desc.skin_width / len);
    vec3 step;
    glm_vec3_scale((float *)delta, f, step);
    glm_vec3_add(ch->position, step, ch->position);
    return f;
}


/// The rotation from a to b (unit quaternions x y z w): b * conjugate(a), in double, the sign
/// that turns the short way (w >= 0).
static void turn_between(const float a[4], const float b[4], float out[4])
{
    const double ax = -a[0], ay = -a[1], az = -a[2], aw = a[3];
    const double bx = b[0], by = b[1], bz = b[2], bw = b[3];
    double q[4] = {bw * ax + bx * aw + by * az - bz * ay, bw * ay - bx * az + by * aw + bz * ax,
                   bw * az + bx * ay - by * ax + bz * aw, bw * aw - bx * ax - by * ay - bz * az};
    const double sign = q[3] < 0.0 ? -1.0 : 1.0;
    for (int k = 0; k < 4; ++k)
        out[k] = (float)(sign * q[k]);
}

/// The index among the step's movers of the kinematic body that moved this step which the
/// character stands on, or NO_MOVER (it stands on none, or on a body that did not move: nothing
/// carries it).
#define NO_MOVER UINT32_MAX
static uint32_t moving_ground(const step_context *ctx, const world_character *wc)
{
    if (!wc->ch.on_ground || ctx->mover_count == 0)
        return NO_MOVER;
    const uint32_t slot = kcc_world_body_slot(ctx->world, wc->result.ground_body);
    for (uint32_t i = 0; i < ctx->mover_count; ++i)
        if (ctx->movers[i] == slot)
            return i;
    return NO_MOVER;
}

/// A character standing on a kinematic body that moved is carried by the body's motion: its box
/// centre goes where the body's motion takes it, swept through everything but that body.
static void ride_ground_body(const step_context *ctx, world_character *wc, kcc_world_source *src,
                             kcc_move_result *r)
{
    const uint32_t mover = moving_ground(ctx, wc);
    if (mover == NO_MOVER)
        return;
    const uint32_t slot = ctx->movers[mover];
    const kcc_transform *start = &ctx->motions[mover].start, *end = &ctx->motions[mover].end;
    vec3 to, delta, from;
    glm_vec3_copy(wc->ch.position, from);
    carried_point(start, end, from, to);
    glm_vec3_sub(to, from, delta);
    src->skip_body = slot;
    advance_character(&wc->ch, &src->base, delta);
    src->skip_body = KCC_WORLD_NO_BODY;
    glm_vec3_sub(wc->ch.position, from, r->carried);
    r->carried_body = wc->result.ground_body;
    turn_between(start->rotation, end->rotation, r->carried_rotation);
}

/// A character standing on another is carried by the motion that one made in the last step
/// (kcc_world_character_carry), swept through everything (the one below included, where it stood
/// at the step's start), so a stack walks, rides and falls together one step apart.
static void ride_ground_character(const step_context *ctx, world_character *wc, kcc_world_source *src,
                                  kcc_move_result *r)
{
    vec3 delta, from;
    if (!kcc_world_character_carry(ctx->cs, wc, delta))
        return;
    glm_vec3_copy(wc->ch.position, from);
    advance_character(&wc->ch, &src->base, delta);
    glm_vec3_sub(wc->ch.position, from, r->carried);
}

/// Whether mover `slot` at its new pose overlaps the character's box (the move's overlap rule).
static bool mover_overlaps(const kcc_world_source *src, uint32_t slot, const kcc_character *ch)
{
    kcc_world_source one = *src;
    one.only_body = slot;
    one.box_count = 0;
    vec3 box[2];
    kcc_box_for_overlap(ch, ch->position, box);
    return one.base.ops->overlap(&one.base, (const vec3 *)box, NULL, 0) > 0;
}

/// A character in a mover's way is pushed ahead of it: the mover's motion at the box centre is
/// the push, and the box goes as far along it as the mover travelled after reaching the box
/// (found by sweeping the box against the mover at its new pose along the motion seen from the
/// mover, so a mover faster than the box is wide never passes through it), swept through
/// everything but the mover. A box that cannot be pushed clear of the mover is crushed.
static void push_by_mover(const step_context *ctx, uint32_t mover, world_character *wc,
                          kcc_world_source *src, kcc_move_result *r, kcc_contact_sink *touched)
{
    const uint32_t slot = ctx->movers[mover];
    const mover_motion *m = &ctx->motions[mover];
    const float(*swept)[3] = (const float(*)[3])m->swept;
    vec3 box[2], motion, back, push;
    kcc_box_at(&wc->ch, wc->ch.position, box);
    for (int k = 0; k < 3; ++k)
        if (box[0][k] > swept[1][k] || box[1][k] < swept[0][k])
            return;
    vec3 to;
    carried_point(&m->start, &m->end, wc->ch.position, to);
    glm_vec3_sub(to, wc->ch.position, motion);
    const float len = glm_vec3_norm(motion);
    if (!(len > 0.0f))
        return;
    /* Seen from the mover at its new pose, the box came from box + motion back to box: the first
       contact on that path is when the mover reached it. */
    kcc_world_source one = *src;
    one.only_body = slot;
    one.box_count = 0;
    glm_vec3_negate_to(motion, back);
    vec3 came_from[2];
    glm_vec3_add(box[0], motion, came_from[0]);
    glm_vec3_add(box[1], motion, came_from[1]);
    kcc_sweep_hit hit;
    if (!one.base.ops->sweep(&one.base, (const vec3 *)came_from, back, &hit))
        return; /* the mover never reached the box */
    glm_vec3_scale(motion, 1.0f - hit.t + wc->ch.desc.skin_width / len, push);
    kcc_contact_sink_add(touched, hit.triangle, hit.normal);
    src->skip_body = slot;
    advance_character(&wc->ch, &src->base, push);
    src->skip_body = KCC_WORLD_NO_BODY;
    if (mover_overlaps(src, slot, &wc->ch))
        r->flags |= KCC_MOVE_CRUSHED;
}

/// The ground body or character a move ended on, from its ground triangle.
static void name_ground(const step_context *ctx, kcc_move_result *r)
{
    r->ground_body = 0;
    r->ground_character = 0;
    if (!(r->flags & KCC_MOVE_ON_GROUND))
        return;
    if (r->ground_triangle < KCC_WORLD_BOX_TRIS) {
        r->ground_body = kcc_world_triangle_body(ctx->world, r->ground_triangle);
        return;
    }
    const uint32_t slot = (r->ground_triangle - KCC_WORLD_BOX_TRIS) / 12u;
    r->ground_character = ctx->cs->slot_ids[slot];
}

/// Triangle id of the world source as a contact (a body's triangle, or a character's box).
static kcc_contact contact_of(const step_context *ctx, uint32_t id, const vec3 normal)
{
    kcc_contact c;
    memset(&c, 0, sizeof c);
    glm_vec3_copy((float *)normal, c.normal);
    if (id >= KCC_WORLD_BOX_TRIS) {
        const uint32_t slot = (id - KCC_WORLD_BOX_TRIS) / 12u;
        c.character = ctx->cs->slot_ids[slot];
        return c;
    }
    uint32_t triangle;
    const kcc_body *b = kcc_world_body_of_triangle(ctx->world, id, &triangle);
    c.body = b ? kcc_body_id(ctx->world, (uint32_t)(b - ctx->world->bodies)) : 0;
    c.triangle = b ? triangle : id;
    return c;
}

/// The step's contacts: the ground, then what pushed, then what the move met (touched), each once.
static void record_contacts(const step_context *ctx, world_character *wc, const kcc_move_result *r,
                            const kcc_contact_sink *touched)
{
    kcc_contact_sink all;
    all.count = 0;
    all.overflow = touched->overflow;
    if (r->flags & KCC_MOVE_ON_GROUND)
        kcc_contact_sink_add(&all, r->ground_triangle, r->ground_normal);
    for (uint32_t i = 0; i < touched->count; ++i)
        kcc_contact_sink_add(&all, touched->triangle[i], touched->normal[i]);
    _Static_assert(KCC_CONTACT_SINK_MAX == KCC_WORLD_CONTACTS, "a sink holds a step's contacts");
    wc->contact_count = all.count;
    wc->contact_overflow = all.overflow;
    for (uint32_t i = 0; i < all.count; ++i)
        wc->contacts[i] = contact_of(ctx, all.triangle[i], all.normal[i]);
}

/// One character's riding and pushing (writes its own slot only), through the bodies at their new
/// poses and the other characters' boxes `others` (where they stood at the step's start, or
/// resolve_placed_overlaps' view); its box then where the moves see it (cs->placed).
static void place_character(const step_context *ctx, uint32_t slot, const float (*others)[2][3])
{
    world_character *wc = &ctx->cs->slots[slot];
    kcc_move_result *pre = &wc->placing;
    memset(pre, 0, sizeof *pre);
    pre->carried_rotation[3] = 1.0f;
    wc->pushers.count = 0;
    wc->pushers.overflow = false;
    wc->before_placing = footing_of(&wc->ch);
    character_sources srcs;
    kcc_world_source *src = &srcs.all;
    character_source(ctx, slot, others, &srcs);
    ride_ground_body(ctx, wc, src, pre);
    if (pre->carried_body == 0)
        ride_ground_character(ctx, wc, src, pre);
    const uint32_t ridden = kcc_world_body_slot(ctx->world, pre->carried_body);
    for (uint32_t i = 0; i < ctx->mover_count; ++i)
        if (ctx->movers[i] != ridden)
            push_by_mover(ctx, i, wc, src, pre, &wc->pushers);
    kcc_box_at(&wc->ch, wc->ch.position, ctx->cs->placed[slot]);
}

/// The characters the snapshot marked (cs->placing) ride and are pushed.
static void place_task(uint32_t begin, uint32_t end, uint32_t worker, void *task_context)
{
    (void)worker;
    const step_context *ctx = task_context;
    for (uint32_t k = begin; k < end; ++k)
        place_character(ctx, ctx->cs->live[ctx->cs->placing[k]], (const float(*)[2][3])ctx->cs->boxes);
}

/// Lists the live indices the snapshot marked to be placed (cs->placing), ascending.
static void list_placing(struct kcc_world_characters *cs)
{
    cs->placing_count = 0;
    for (uint32_t i = 0; i < cs->live_count; ++i)
        if (cs->to_place[i])
            cs->placing[cs->placing_count++] = i;
}

/// One character's move (writes its own slot only), through the bodies at their new poses and the
/// other characters where riding and pushing left them (cs->placed).
static void move_character(const step_context *ctx, uint32_t slot, bool placed)
{
    world_character *wc = &ctx->cs->slots[slot];
    character_sources srcs;
    character_source(ctx, slot, (const float(*)[2][3])ctx->cs->placed, &srcs);
    static const kcc_move_result not_placed = {.carried_rotation = {0.0f, 0.0f, 0.0f, 1.0f}};
    kcc_contact_sink touched;
    if (placed) {
        touched = wc->pushers;
    } else {
        touched.count = 0;
        touched.overflow = false;
    }
    const kcc_move_result *pre = placed ? &wc->placing : &not_placed;
    wc->before_move = footing_of(&wc->ch);
    kcc_move_result r;
    kcc_character_move_source(&wc->ch, &srcs.all.base, ctx->cs->displacements[slot], &r, NULL, &touched);
    r.flags |= pre->flags;
    glm_vec3_copy((float *)pre->carried, r.carried);
    r.carried_body = pre->carried_body;
    memcpy(r.carried_rotation, pre->carried_rotation, sizeof r.carried_rotation);
    name_ground(ctx, &r);
    record_contacts(ctx, wc, &r, &touched);
    wc->result = r;
    glm_vec3_zero(ctx->cs->displacements[slot]);
    kcc_world_publish_state(ctx->cs, slot);
    kcc_box_at(&wc->ch, wc->ch.position, ctx->cs->ends[slot]);
    /* what the resolve pass's first look reads of it, set while the slot is at hand: its motion
       over the step (changed only for a character the pass puts back) and whether it rides */
    kcc_box_for_overlap(&wc->ch, wc->ch.position, ctx->cs->end_overlaps[slot]);
    glm_vec3_sub(wc->ch.position, wc->step_start, wc->last_motion);
    ctx->cs->resolve_marks[slot] = r.ground_character != 0 ? RESOLVE_RIDES : 0;
}

static void move_task(uint32_t begin, uint32_t end, uint32_t worker, void *task_context)
{
    (void)worker;
    const step_context *ctx = task_context;
    for (uint32_t i = begin; i < end; ++i) {
        if (i + PREFETCH_AHEAD < end)
            kcc_prefetch(ctx->cs->displacements[ctx->cs->live[i + PREFETCH_AHEAD]]);
        move_character(ctx, ctx->cs->live[i], ctx->cs->to_place[i]);
    }
}

/// How far mover m's push (push_by_mover) may take a character whose box, at offsets box - centre
/// from its centre, meets the mover's swept bounds: the motion's length at the centre, which is at
/// most its largest at a corner of the centres whose boxes meet those bounds (a rigid motion moves
/// points by an affine function of the point, whose length is convex), plus the skin the push
/// adds and a margin for the rounding of the push's sums (a few ulps of the coordinates).
static float mover_push_reach(const mover_motion *m, const float box[2][3], const vec3 centre, float skin)
{
    float most = 0.0f, coord = 0.0f;
    for (int corner = 0; corner < 8; ++corner) {
        vec3 p, to, d;
        for (int k = 0; k < 3; ++k) {
            p[k] = corner >> k & 1 ? m->swept[1][k] - (box[0][k] - centre[k])
                                   : m->swept[0][k] - (box[1][k] - centre[k]);
            coord = kcc_maxf(coord, fabsf(p[k]));
        }
        carried_point(&m->start, &m->end, p, to);
        glm_vec3_sub(to, p, d);
        most = kcc_maxf(most, glm_vec3_norm(d));
    }
    return most + skin + 1e-3f + 0x1p-18f * (coord + most);
}

/// Steps with more movers than this find those near a character through the broadphase
/// (movers_near); with fewer, testing each costs less than the query.
#define FEW_MOVERS 16u
/// The movers near one character that movers_near lists at most (more: every mover is tested).
#define NEAR_MOVERS 64u

/// The step's movers whose swept bounds meet [lo, hi] (touching counts), by index ascending,
/// written to out; UINT32_MAX when the step has few movers or more than NEAR_MOVERS pieces meet the
/// box (the caller then tests every mover). A mover's proxy in the broadphase is its swept bounds,
/// as kcc_world_body_motion gives them to the step (kcc_world_move_pieces), and the broadphase's
/// test is the caller's, so the list holds every mover the caller's test would take.
static uint32_t movers_near(const step_context *ctx, const float lo[3], const float hi[3],
                            uint32_t out[NEAR_MOVERS])
{
    if (ctx->mover_count <= FEW_MOVERS)
        return UINT32_MAX;
    uint32_t pieces[NEAR_MOVERS];
    const float box[2][3] = {{lo[0], lo[1], lo[2]}, {hi[0], hi[1], hi[2]}};
    const uint32_t found = kcc_world_pieces_near(ctx->world, box, pieces, NEAR_MOVERS);
    if (found > NEAR_MOVERS)
        return UINT32_MAX;
    uint32_t n = 0;
    for (uint32_t p = 0; p < found; ++p) {
        const uint32_t slot = kcc_world_piece_body(ctx->world, pieces[p], NULL);
        uint32_t a = 0, b = ctx->mover_count; /* movers ascend by body slot */
        while (a < b) {
            const uint32_t mid = a + (b - a) / 2;
            if (ctx->movers[mid] < slot)
                a = mid + 1;
            else
                b = mid;
        }
        if (a == ctx->mover_count || ctx->movers[a] != slot)
            continue; /* a sensor piece, or a body that did not move */
        uint32_t j = n++; /* by mover index: the order the pushes are summed in */
        for (; j > 0 && out[j - 1] > a; --j)
            out[j] = out[j - 1];
        out[j] = a;
    }
    return n;
}

/// Mover i's push reach (mover_push_reach) for a character whose box is `box` when its swept bounds
/// meet [lo, hi] (touching counts) and it is not the one the character rides; else 0.
static float push_if_near(const step_context *ctx, uint32_t i, uint32_t ridden, const float lo[3],
                          const float hi[3], const kcc_character *ch, const float box[2][3])
{
    const float(*swept)[3] = (const float(*)[3])ctx->motions[i].swept;
    bool meets = i != ridden;
    for (int k = 0; k < 3 && meets; ++k)
        meets = lo[k] <= swept[1][k] && swept[0][k] <= hi[k];
    return meets ? mover_push_reach(&ctx->motions[i], box, ch->position, ch->desc.skin_width) : 0.0f;
}

/// Grows a character's region by what the movers but the one it rides (`ridden`, NO_MOVER: none)
/// may push it: the pushes come one mover at a time, each from where the last left the box, so a
/// mover whose swept bounds the region grown by the pushes counted so far meets adds its reach,
/// until no other does. The move that follows then gathers inside the region as well, and its end
/// box lies in it, where the neighbour lists, the resolve pass and the sensors look
/// (a_pushed_character_meets_characters_and_sensors_past_its_walk). The movers to test come from
/// movers_near, summed in mover order as testing every one would (KCC_DEBUG builds check that
/// both give the same reach: a_crowd_among_moving_crates_is_pushed_clear_of_every_one). Returns
/// whether any mover may push it (a mover's reach is never 0: it grew the region).
static bool grow_region_by_pushes(const step_context *ctx, uint32_t ridden, const kcc_character *ch,
                                  const float box[2][3], float region[2][3])
{
    if (ctx->mover_count == 0)
        return false;
    float push = 0.0f, counted = -1.0f;
    while (push > counted) { /* at most mover_count + 1 rounds: each adds a mover or ends */
        counted = push;
        push = 0.0f;
        const float lo[3] = {region[0][0] - counted, region[0][1] - counted, region[0][2] - counted};
        const float hi[3] = {region[1][0] + counted, region[1][1] + counted, region[1][2] + counted};
        uint32_t near[NEAR_MOVERS];
        const uint32_t n = movers_near(ctx, lo, hi, near);
        const uint32_t tested = n == UINT32_MAX ? ctx->mover_count : n;
        for (uint32_t j = 0; j < tested; ++j)
            push += push_if_near(ctx, n == UINT32_MAX ? j : near[j], ridden, lo, hi, ch, box);
#ifdef KCC_DEBUG
        float every = 0.0f; /* the same sum over every mover */
        for (uint32_t i = 0; i < ctx->mover_count; ++i)
            every += push_if_near(ctx, i, ridden, lo, hi, ch, box);
        KCC_ASSERT(every == push);
#endif
    }
    for (int k = 0; k < 3; ++k) {
        region[0][k] -= push;
        region[1][k] += push;
    }
    return push > 0.0f;
}

/// Asks for the lines of a slot that the snapshot reads: the character's first two (its box,
/// footing and desc), its last result's ground, and the slot's tail (step_start, the reach).
static inline void prefetch_snapshot(const world_character *wc)
{
    const char *tail = (const char *)&wc->step_start; /* to the slot's end: step_start, reach */
    kcc_prefetch(&wc->ch);
    kcc_prefetch((const char *)&wc->ch + 64);
    kcc_prefetch(&wc->result.ground_body);
    kcc_prefetch(tail);
    kcc_prefetch(tail + 64);
    _Static_assert(sizeof(world_character) - offsetof(world_character, step_start) <= 128,
                   "step_start and what follows it lie in two lines at most");
}

/// Each live character's box at the start of the step, the region its step may reach, and whether
/// the placing pass rides or pushes it (writes its own slot only); the regions' statistics by
/// block, for the grid's build.
static void snapshot_task(uint32_t begin, uint32_t end, uint32_t worker, void *task_context)
{
    (void)worker;
    const step_context *ctx = task_context;
    struct kcc_world_characters *cs = ctx->cs;
    for (uint32_t i = begin; i < end; ++i) {
        if (i + PREFETCH_AHEAD < end)
            prefetch_snapshot(&cs->slots[cs->live[i + PREFETCH_AHEAD]]);
        const uint32_t slot = cs->live[i];
        vec3 box[2];
        kcc_box_at(&cs->slots[slot].ch, cs->slots[slot].ch.position, box);
        memcpy(cs->boxes[slot], box, sizeof cs->boxes[slot]);
        glm_vec3_copy(cs->slots[slot].ch.position, cs->slots[slot].step_start);
        const uint32_t mover = moving_ground(ctx, &cs->slots[slot]);
        kcc_world_step_region(&cs->slots[slot], cs, mover == NO_MOVER ? NULL : &ctx->motions[mover],
                              (const float(*)[3])box, cs->regions[slot]);
        const bool pushable = grow_region_by_pushes(ctx, mover, &cs->slots[slot].ch, (const float(*)[3])box,
                                                    cs->regions[slot]);
        memcpy(cs->placed[slot], box, sizeof cs->placed[slot]);
        vec3 carry; /* placed when it rides a mover or a character that moved, or may be pushed */
        cs->to_place[i] =
            mover != NO_MOVER || pushable || kcc_world_character_carry(cs, &cs->slots[slot], carry);
    }
    kcc_world_region_stats(cs, begin, end);
}

/// Each live character's neighbours (writes its own list only).
static void neighbours_task(uint32_t begin, uint32_t end, uint32_t worker, void *task_context)
{
    (void)worker;
    const step_context *ctx = task_context;
    kcc_world_find_neighbours(ctx->world, ctx->cs, begin, end);
}

/// One parallel phase over the live characters: the blocks not taken yet lie between `ends`' low
/// half (the next block from the front) and its high half (the end of the last block from the
/// back).
typedef struct live_pass {
    kcc_task_fn        *task;
    void              (*warm)(const struct kcc_world_characters *cs); ///< run once by each worker
                                                                      ///< before its blocks, or NULL
    const step_context *ctx;
    uint32_t            block;
    _Atomic uint64_t    ends;
} live_pass;

/// Takes blocks until none is left: even workers from the front, odd ones from the back, so that a
/// worker handles mostly the same characters step after step and phase after phase, and finds
/// their state (a slot is 8.5 kB with its triangle cache) in its own core's cache: at 1,000
/// characters on ctf_inyard two workers gave 1.34 times the throughput of one this way, against
/// 1.03-1.09 taking blocks from one counter in the same minutes (the tasks' time summed over both
/// threads 1.3 and 1.7 times one thread's; docs/world.md, "Threads").
static void run_blocks(uint32_t begin, uint32_t end, uint32_t worker, void *task_context)
{
    (void)begin, (void)end;
    live_pass *pass = task_context;
    const bool from_back = worker & 1u;
    if (pass->warm)
        pass->warm(pass->ctx->cs);
    uint64_t ends = atomic_load_explicit(&pass->ends, memory_order_relaxed);
    for (;;) {
        const uint32_t lo = (uint32_t)ends, hi = (uint32_t)(ends >> 32);
        if (lo >= hi)
            return;
        /* blocks from the front start at multiples of block; the one from the back is what is left
           past the last multiple below hi */
        const uint32_t at = from_back ? (hi - 1u) / pass->block * pass->block : lo;
        const uint32_t to = from_back ? hi : (hi - lo > pass->block ? lo + pass->block : hi);
        const uint64_t taken = from_back ? (uint64_t)(at > lo ? at : lo) << 32 | lo : (uint64_t)hi << 32 | to;
        if (!atomic_compare_exchange_weak_explicit(&pass->ends, &ends, taken, memory_order_relaxed,
                                                   memory_order_relaxed))
            continue;
        pass->task(from_back && at < lo ? lo : at, to, worker, (void *)pass->ctx);
        ends = atomic_load_explicit(&pass->ends, memory_order_relaxed);
    }
}

/// Runs task over n items (live characters, or the indices of a list of them) on the engine's job
/// system (inline without hooks, with one worker, or for at most one block of items: a few marked
/// characters cost less than waking a worker): one item a worker, each taking blocks of `block`
/// items from the ends of what is left (run_blocks; as Box2D v3 hands its solver's stages out), so
/// the blocks balance over whichever workers run however the engine splits the items (a job system
/// may cut a task into as few ranges as it has threads, and moves differ in cost), and what each
/// character's part computes does not depend on who ran it
/// (world_step_is_the_same_for_any_workers). `warm`, when not NULL, runs on each worker before it
/// takes a block (not inline: there the calling thread wrote what the task reads).
static void run_over(const kcc_world *world, kcc_task_fn *task, void (*warm)(const struct kcc_world_characters *),
                     uint32_t n, uint32_t block, step_context *ctx)
{
    const kcc_world_desc *d = kcc_world_get_desc(world);
    if (n == 0)
        return;
    if (!d->enqueue_task || d->worker_count <= 1 || n <= block) {
        task(0, n, 0, ctx);
        return;
    }
    live_pass pass = {.task = task, .warm = warm, .ctx = ctx, .block = block};
    atomic_init(&pass.ends, (uint64_t)n << 32);
    const uint32_t blocks = (n + block - 1) / block;
    void *handle = d->enqueue_task(run_blocks, blocks < d->worker_count ? blocks : d->worker_count, 1,
                                   &pass, d->user_task_context);
    if (handle)
        d->finish_task(handle, d->user_task_context);
}

static bool boxes_overlap(const vec3 a[2], const vec3 b[2])
{
    return a[0][0] < b[1][0] && a[1][0] > b[0][0] && a[0][1] < b[1][1] && a[1][1] > b[0][1] &&
           a[0][2] < b[1][2] && a[1][2] > b[0][2];
}

/// The characters that may overlap live character i where the moves ended: its neighbours (in
/// any order), or every character before it in the live order when the lists overflowed; *out_n
/// how many.
static const uint32_t *end_neighbours(const struct kcc_world_characters *cs, uint32_t i, uint32_t *out_n)
{
    const uint32_t slot = cs->live[i];
    if (cs->near.all) {
        *out_n = i;
        return cs->live;
    }
    *out_n = cs->near.count[slot] - cs->near.pieces[slot];
    return cs->near.entries + cs->near.first[slot] + cs->near.pieces[slot];
}

/// Whether character a stood on character b at the end of the last step, or b on a: a stack,
/// which rides one step apart (kcc_world_character_carry).
static bool stacked(const struct kcc_world_characters *cs, uint32_t a, uint32_t b)
{
    return cs->slots[a].result.ground_character == cs->slot_ids[b] ||
           cs->slots[b].result.ground_character == cs->slot_ids[a];
}

/// Whether `box` (live character i's, by the overlap rule) overlaps the box in `boxes` of a
/// character before i in the live order that it collides with (among its neighbours: no other can
/// reach it); a stack's (one stood on the other at the last step) counts only when `count_stacks`.
static bool inside_earlier(const struct kcc_world_characters *cs, uint32_t i, const vec3 box[2],
                           const float (*boxes)[2][3], bool count_stacks)
{
    const uint32_t slot = cs->live[i];
    uint32_t n;
    const uint32_t *near = end_neighbours(cs, i, &n);
    for (uint32_t j = 0; j < n; ++j) {
        const uint32_t other = near[j];
        if (other < slot && kcc_world_characters_collide(cs, slot, other) &&
            boxes_overlap(box, (const vec3 *)boxes[other]) && (count_stacks || !stacked(cs, slot, other)))
            return true;
    }
    return false;
}

/// Whether live character i was placed into an earlier character's placed box (not a stack's)
/// from a start box clear of them all: placed again, it would stop against it.
static bool placed_into_earlier(const struct kcc_world_characters *cs, uint32_t i)
{
    const world_character *wc = &cs->slots[cs->live[i]];
    const float(*placed)[2][3] = (const float(*)[2][3])cs->placed;
    vec3 box[2], start[2];
    kcc_box_for_overlap(&wc->ch, wc->ch.position, box);
    if (!inside_earlier(cs, i, (const vec3 *)box, placed, false))
        return false;
    kcc_box_for_overlap(&wc->ch, wc->before_placing.position, start);
    return !inside_earlier(cs, i, (const vec3 *)start, placed, false);
}

/// Characters placed at once each see the others where the step started, so two pushed toward each
/// other (two doors closing on them from both sides) may be placed into the same space. In slot
/// order, a placed character whose box overlaps an earlier one's placed box is placed again from
/// where it started, seeing the earlier characters where they were placed and the later ones where
/// they started: its push stops against the earlier one, and the mover, which then overlaps it,
/// crushes it (two_doors_never_push_two_characters_into_each_other). One whose start box already
/// overlaps an earlier one's placed box keeps its place (placed again, it would not move), and so
/// do stacks: their moves push them apart. The moves have not written cs->ends yet: it holds that
/// view of the others.
static void resolve_placed_overlaps(const step_context *ctx)
{
    struct kcc_world_characters *cs = ctx->cs;
    uint32_t first = cs->live_count; /* the first placed into an earlier one */
    for (uint32_t k = 0; k < cs->placing_count && first == cs->live_count; ++k)
        if (placed_into_earlier(cs, cs->placing[k]))
            first = cs->placing[k];
    if (first == cs->live_count)
        return;
    float(*view)[2][3] = cs->ends;
    for (uint32_t k = 0; k < cs->live_count; ++k) /* earlier: placed; the rest: at start */
        memcpy(view[cs->live[k]], k < first ? cs->placed[cs->live[k]] : cs->boxes[cs->live[k]],
               sizeof view[0]);
    for (uint32_t i = first; i < cs->live_count; ++i) {
        const uint32_t slot = cs->live[i];
        world_character *wc = &cs->slots[slot];
        if (cs->to_place[i] && (i == first || placed_into_earlier(cs, i))) {
            restore_footing(&wc->ch, &wc->before_placing);
            place_character(ctx, slot, (const float(*)[2][3])view);
        }
        memcpy(view[slot], cs->placed[slot], sizeof view[slot]);
    }
}

/// Whether live character i's box (the overlap rule's, shrunk by the tolerance) overlaps the box
/// (cs->ends) of any character before it in the live order (among its neighbours: no other can
/// reach it).
static bool overlaps_earlier(const struct kcc_world_characters *cs, uint32_t i)
{
    vec3 mine[2];
    const kcc_character *ch = &cs->slots[cs->live[i]].ch;
    kcc_box_for_overlap(ch, ch->position, mine);
    return inside_earlier(cs, i, (const vec3 *)mine, (const float(*)[2][3])cs->ends, true);
}

/// Whether a character before live character i among its neighbours was put back by the resolve
/// pass (the only boxes that changed since resolve_flags_task looked), asked of the list: the
/// lists overflowed (near.all), so it names no later neighbour to tell.
static bool earlier_put_back(const struct kcc_world_characters *cs, uint32_t i)
{
    const uint32_t slot = cs->live[i];
    uint32_t n;
    const uint32_t *near = end_neighbours(cs, i, &n);
    for (uint32_t j = 0; j < n; ++j)
        if (near[j] < slot && cs->resolve_marks[near[j]] & RESOLVE_PUT_BACK)
            return true;
    return false;
}

/// What the resolve pass asks first, asked over the task hooks (each writes its own marks only):
/// whether each character's box at the end of its move (cs->end_overlaps: overlaps_earlier's box)
/// overlaps an earlier one's. Its move marked whether it rides and set its last_motion; the
/// characters' slots, which the last moves left in no cache at 10k characters, are not read.
static void resolve_flags_task(uint32_t begin, uint32_t end, uint32_t worker, void *task_context)
{
    (void)worker;
    const step_context *ctx = task_context;
    struct kcc_world_characters *cs = ctx->cs;
    for (uint32_t i = begin; i < end; ++i) {
        if (i + PREFETCH_AHEAD < end && !cs->near.all) /* its neighbour list, left in no cache by the moves */
            kcc_prefetch(cs->near.entries + cs->near.first[cs->live[i + PREFETCH_AHEAD]]);
        const uint32_t slot = cs->live[i];
        const float(*ends)[2][3] = (const float(*)[2][3])cs->ends;
        if (i > 0 && inside_earlier(cs, i, (const vec3 *)cs->end_overlaps[slot], ends, true))
            cs->resolve_marks[slot] |= RESOLVE_ENDS_INSIDE;
    }
}

/// Tells the neighbours after live character i in the live order that it was put back (ask_again):
/// the neighbour lists are symmetric (two regions overlap or not), so they are the characters that
/// have it among their earlier neighbours.
static void tell_later_neighbours(struct kcc_world_characters *cs, uint32_t i)
{
    const uint32_t slot = cs->live[i];
    uint32_t n;
    const uint32_t *near = end_neighbours(cs, i, &n);
    for (uint32_t j = 0; j < n; ++j)
        if (near[j] > slot)
            cs->resolve_marks[near[j]] |= RESOLVE_ASK_AGAIN;
}

/// Characters moved at once, each seeing the others where their moves started: two may end in the
/// same space. In slot order, a character whose box overlaps an earlier one's goes back to where
/// its move started (clear of every other character's move, which saw it there). Whether it
/// overlaps was asked in parallel (resolve_flags_task) with every box where its move ended; it is
/// asked again only when an earlier neighbour has been put back since. Counts the riders (what
/// the next step's placing pass waits for) on the way; a character's slot is read only when it is
/// asked again or ends inside an earlier one (the walk reads its marks, a byte each).
static void resolve_character_overlaps(struct kcc_world_characters *cs)
{
    bool any_put_back = false;
    uint32_t riders = 0;
    for (uint32_t i = 0; i < cs->live_count; ++i) {
        const uint32_t slot = cs->live[i];
        const unsigned marks = cs->resolve_marks[slot];
        riders += (marks & RESOLVE_RIDES) != 0;
        const bool ask_again = cs->near.all ? any_put_back && earlier_put_back(cs, i) : marks & RESOLVE_ASK_AGAIN;
        KCC_ASSERT(ask_again || ((marks & RESOLVE_ENDS_INSIDE) != 0) == overlaps_earlier(cs, i));
        if (!(ask_again ? overlaps_earlier(cs, i) : marks & RESOLVE_ENDS_INSIDE))
            continue;
        world_character *wc = &cs->slots[slot];
        const footing end = footing_of(&wc->ch);
        restore_footing(&wc->ch, &wc->before_move);
        if (overlaps_earlier(cs, i)) { /* it started inside one: keep the move, which pushed out */
            restore_footing(&wc->ch, &end);
            continue;
        }
        kcc_box_at(&wc->ch, wc->ch.position, cs->ends[slot]);
        vec3 undone;
        glm_vec3_sub(wc->ch.position, (float *)end.position, undone);
        glm_vec3_add(wc->result.moved, undone, wc->result.moved);
        glm_vec3_sub(wc->ch.position, wc->step_start, wc->last_motion);
        wc->result.flags |= KCC_MOVE_STUCK;
        kcc_world_publish_state(cs, slot);
        cs->resolve_marks[slot] |= RESOLVE_PUT_BACK;
        any_put_back = true;
        if (!cs->near.all)
            tell_later_neighbours(cs, i);
    }
    cs->riders = riders;
}

/// run_over across the live characters (task's items are live indices).
static void run_over_live(const kcc_world *world, kcc_task_fn *task, uint32_t block, step_context *ctx)
{
    run_over(world, task, NULL, ctx->cs->live_count, block, ctx);
}

/// Every live character's neighbour list (neighbours_task), each worker reading the region grid
/// through first (kcc_world_warm_region_grid).
static void list_neighbours(const kcc_world *world, step_context *ctx)
{
    run_over(world, neighbours_task, kcc_world_warm_region_grid, ctx->cs->live_count, SNAPSHOT_BLOCK, ctx);
}

/// The live slots, ascending.
static void list_live(struct kcc_world_characters *cs)
{
    cs->live_count = 0;
    for (uint32_t i = 0; i < cs->ids.end; ++i)
        if (cs->alive[i])
            cs->live[cs->live_count++] = i;
}

kcc_status kcc_world_step_marked(kcc_world *world, kcc_world_phase_mark *mark, void *user)
{
    if (!world)
        return KCC_ERR_NULL_ARGUMENT;
    kcc_world_record_step(world, false);
    kcc_world_step_bodies(world);
    struct kcc_world_characters *cs = kcc_world_characters(world);
    if (mark)
        mark(user, KCC_PHASE_BODIES);
    step_context ctx = {.world = world, .cs = cs, .motions = cs->motions};
    kcc_world_source_init(&ctx.source, world, KCC_LAYERS_ALL); /* each character's mask set apart */
    ctx.source.base.key = kcc_world_step_key(world);
    ctx.source.box_layers = cs->layers;
    ctx.source.box_masks = cs->masks;
    split_step_fixed(&ctx);
    ctx.mover_count = kcc_world_movers(world, &ctx.movers);
    for (uint32_t i = 0; i < ctx.mover_count; ++i) /* once a step, for every character to read */
        kcc_world_body_motion(world, ctx.movers[i], &cs->motions[i].start, &cs->motions[i].end,
                              cs->motions[i].swept);
    list_live(cs);
    run_over_live(world, snapshot_task, SNAPSHOT_BLOCK, &ctx);
    if (mark)
        mark(user, KCC_PHASE_SNAPSHOT);
    kcc_world_build_region_grid(cs);
    kcc_world_update_broadphase(world);
    if (mark)
        mark(user, KCC_PHASE_BROADPHASE);
    list_neighbours(world, &ctx);
    if (mark)
        mark(user, KCC_PHASE_NEIGHBOURS);
    const bool mirrored = cs->near.both_sides || kcc_world_mirror_neighbours(cs);
    if (mark)
        mark(user, KCC_PHASE_MIRROR);
    if (!mirrored) {
        cs->near.both_sides = true; /* some list outgrew its share: every list found whole, counted */
        list_neighbours(world, &ctx);
    }
    if (kcc_world_neighbours_refit(cs))
        list_neighbours(world, &ctx);
    if (mark)
        mark(user, KCC_PHASE_NEIGHBOURS);
    if (ctx.mover_count > 0 || cs->riders > 0) { /* else the snapshot marked none */
        list_placing(cs);
        run_over(world, place_task, NULL, cs->placing_count, MOVE_BLOCK, &ctx);
        resolve_placed_overlaps(&ctx);
    }
    if (mark)
        mark(user, KCC_PHASE_PLACING);
    run_over_live(world, move_task, MOVE_BLOCK, &ctx);
    if (mark)
        mark(user, KCC_PHASE_CHARACTERS);
    run_over_live(world, resolve_flags_task, SNAPSHOT_BLOCK, &ctx);
    if (mark)
        mark(user, KCC_PHASE_OVERLAPS);
    resolve_character_overlaps(cs);
    if (mark)
        mark(user, KCC_PHASE_RESOLVE);
    kcc_world_sensor_step(world, cs);
    if (mark)
        mark(user, KCC_PHASE_SENSORS);
    kcc_world_record_step(world, true);
    return KCC_OK;
}

kcc_status kcc_world_step(kcc_world *world)
{
    return kcc_world_step_marked(world, NULL, NULL);
}
