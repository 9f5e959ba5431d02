/* world_step.c: the world's characters: kcc_world_create (collide's bodies plus the characters'
 * slots, in one allocation), adding, removing and steering characters, and kcc_world_step, which
 * moves the bodies, then every character by its displacement through the bodies at their new
 * poses. Nothing here allocates after kcc_world_create. */
#include <math.h>

#include <cglm/cglm.h>

#include "controller_internal.h"

#define WORLD_ALIGN 64

/// A character's state a move changes (the resolve pass puts it back).
typedef struct footing {
    vec3     position;
    vec3     ground_normal;
    float    ground_height;
    uint32_t ground_triangle;
    bool     on_ground;
} footing;

static footing footing_of(const kcc_character *ch)
{
    footing f;
    glm_vec3_copy((float *)ch->position, f.position);
    glm_vec3_copy((float *)ch->ground_normal, f.ground_normal);
    f.ground_height = ch->ground_height;
    f.ground_triangle = ch->ground_triangle;
    f.on_ground = ch->on_ground;
    return f;
}

static void restore_footing(kcc_character *ch, const footing *f)
{
    glm_vec3_copy((float *)f->position, ch->position);
    glm_vec3_copy((float *)f->ground_normal, ch->ground_normal);
    ch->ground_height = f->ground_height;
    ch->ground_triangle = f->ground_triangle;
    ch->on_ground = f->on_ground;
}

/// One character slot: the controller's character, the next step's displacement and the last
/// step's result.
typedef struct world_character {
    kcc_character   ch;
    kcc_move_result result;
    vec3            displacement;   ///< m, for the next step (0 when none was set)
    kcc_contact     contacts[KCC_WORLD_CONTACTS]; ///< the last step's (kcc_world_get_contacts)
    uint32_t        contact_count;
    bool            contact_overflow;
    footing         before_move;    ///< where its own move started this step (after riding and
                                    ///< pushing): what the resolve pass puts back
    uint32_t        generation;
    bool            live;
} world_character;

/// A character inside a sensor (slots order the list; ids tell a reused slot from its last owner).
typedef struct sensor_pair {
    uint32_t sensor_slot, character_slot;
    uint32_t sensor, character;   ///< ids
} sensor_pair;

/// The characters inside sensors after the last two steps, and the events between them.
typedef struct sensor_state {
    sensor_pair      *inside[2];    ///< sensor_capacity each: the last step's and the one before
    uint32_t          count[2];
    uint32_t          now;          ///< which of the two is the last step's
    kcc_sensor_event *events;       ///< sensor_capacity
    uint32_t          event_count;
    bool              overflow;
} sensor_state;

struct kcc_world_characters {
    world_character *slots;        ///< character_capacity
    float          (*boxes)[2][3]; ///< each live character's box at the start of the step (m)
    uint32_t        *live;         ///< the live slots, ascending (rebuilt every step)
    uint32_t         live_count;
    kcc_id_pool      ids;
    uint32_t         count;        ///< live characters
    sensor_state     sensors;
    uint32_t         sensor_capacity;
};

static size_t round_up(size_t at)
{
    return (at + WORLD_ALIGN - 1) / WORLD_ALIGN * WORLD_ALIGN;
}

/// Lays the characters' half out from byte `at` of the block at base (NULL: only measures);
/// returns the end.
static size_t characters_layout(struct kcc_world_characters **out, char *base, size_t at,
                                uint32_t capacity, uint32_t sensor_capacity)
{
    at = round_up(at);
    struct kcc_world_characters *cs = base ? (void *)(base + at) : NULL;
    at = round_up(at + sizeof *cs);
    if (cs)
        cs->slots = (void *)(base + at);
    at = round_up(at + (size_t)capacity * sizeof(world_character));
    if (cs)
        cs->boxes = (void *)(base + at);
    at = round_up(at + (size_t)capacity * sizeof(float[2][3]));
    if (cs)
        cs->live = (void *)(base + at);
    at = round_up(at + (size_t)capacity * sizeof(uint32_t));
    for (int k = 0; k < 2; ++k) {
        if (cs)
            cs->sensors.inside[k] = (void *)(base + at);
        at = round_up(at + (size_t)sensor_capacity * sizeof(sensor_pair));
    }
    if (cs) {
        cs->sensors.events = (void *)(base + at);
        cs->sensor_capacity = sensor_capacity;
    }
    at = round_up(at + (size_t)sensor_capacity * sizeof(kcc_sensor_event));
    if (cs)
        kcc_id_pool_init(&cs->ids, (void *)(base + at), capacity);
    at += (size_t)capacity * sizeof(uint32_t);
    if (out)
        *out = cs;
    return at;
}

kcc_status kcc_world_create(const kcc_world_desc *desc, kcc_world **out_world)
{
    if (!out_world)
        return KCC_ERR_NULL_ARGUMENT;
    kcc_world_desc d;
    kcc_status st = kcc_world_resolve_desc(desc, &d);
    if (st != KCC_OK)
        return st;
    const kcc_allocator al = kcc_allocator_or_default(&d.allocator);
    const size_t bodies_end = kcc_world_layout(NULL, NULL, &d);
    const size_t bytes = characters_layout(NULL, NULL, bodies_end, d.character_capacity,
                                           d.sensor_capacity);
    char *block = al.alloc(bytes, WORLD_ALIGN, al.user);
    if (!block)
        return KCC_ERR_OUT_OF_MEMORY;
    memset(block, 0, bytes);
    kcc_world *w = (kcc_world *)(void *)block;
    kcc_world_layout(w, block, &d);
    struct kcc_world_characters *cs;
    characters_layout(&cs, block, bodies_end, d.character_capacity, d.sensor_capacity);
    kcc_world_init(w, &d, &al, bytes, cs);
    *out_world = w;
    return KCC_OK;
}

/* ------------------------------------------------------------------------------------------------
 * Characters */

static world_character *find_character(const kcc_world *world, uint32_t character)
{
    if (!world)
        return NULL;
    struct kcc_world_characters *cs = kcc_world_characters(world);
    uint32_t slot, generation;
    if (!kcc_id_split(character, cs->ids.capacity, &slot, &generation))
        return NULL;
    world_character *wc = &cs->slots[slot];
    return wc->live && wc->generation == generation ? wc : NULL;
}

kcc_status kcc_world_add_character(kcc_world *world, const kcc_character_desc *desc,
                                   const vec3 center, uint32_t *out_character)
{
    if (!world || !center || !out_character)
        return KCC_ERR_NULL_ARGUMENT;
    kcc_character ch;
    kcc_status st = kcc_character_init(&ch, desc, center);
    if (st != KCC_OK)
        return st;
    struct kcc_world_characters *cs = kcc_world_characters(world);
    uint32_t slot;
    if (!kcc_id_pool_take(&cs->ids, &slot))
        return KCC_ERR_TOO_LARGE;
    world_character *wc = &cs->slots[slot];
    const uint32_t generation = wc->generation;
    memset(wc, 0, sizeof *wc);
    wc->ch = ch;
    wc->generation = generation;
    wc->live = true;
    ++cs->count;
    *out_character = kcc_id_make(generation, slot);
    return KCC_OK;
}

kcc_status kcc_world_remove_character(kcc_world *world, uint32_t character)
{
    world_character *wc = find_character(world, character);
    if (!wc)
        return world ? KCC_ERR_NOT_FOUND : KCC_ERR_NULL_ARGUMENT;
    struct kcc_world_characters *cs = kcc_world_characters(world);
    wc->live = false;
    wc->generation = (wc->generation + 1) & KCC_ID_GENERATION_MASK;
    kcc_id_pool_give(&cs->ids, (uint32_t)(wc - cs->slots));
    --cs->count;
    return KCC_OK;
}

kcc_status kcc_world_set_displacement(kcc_world *world, uint32_t character, const vec3 displacement)
{
    world_character *wc = find_character(world, character);
    if (!wc)
        return world ? KCC_ERR_NOT_FOUND : KCC_ERR_NULL_ARGUMENT;
    glm_vec3_zero(wc->displacement); /* a refused displacement leaves none for the step */
    if (!displacement)
        return KCC_ERR_NULL_ARGUMENT;
    for (int k = 0; k < 3; ++k)
        if (!isfinite(displacement[k]))
            return KCC_ERR_NON_FINITE;
    for (int k = 0; k < 3; ++k)
        if (fabsf(displacement[k]) > KCC_MAX_DISPLACEMENT)
            return KCC_ERR_BAD_DESC;
    glm_vec3_copy((float *)displacement, wc->displacement);
    return KCC_OK;
}

kcc_status kcc_world_get_character(const kcc_world *world, uint32_t character,
                                   kcc_character_state *out_state, kcc_move_result *out_result)
{
    const world_character *wc = find_character(world, character);
    if (!wc)
        return world ? KCC_ERR_NOT_FOUND : KCC_ERR_NULL_ARGUMENT;
    if (out_state) {
        memset(out_state, 0, sizeof *out_state);
        glm_vec3_copy((float *)wc->ch.position, out_state->position);
        out_state->on_ground = wc->ch.on_ground;
        glm_vec3_copy((float *)wc->ch.ground_normal, out_state->ground_normal);
        out_state->ground_body = wc->result.ground_body;
    }
    if (out_result)
        *out_result = wc->result;
    return KCC_OK;
}

uint32_t kcc_world_character_count(const kcc_world *world)
{
    return world ? kcc_world_characters(world)->count : 0;
}

uint32_t kcc_world_get_contacts(const kcc_world *world, uint32_t character, kcc_contact *out,
                                uint32_t capacity, bool *out_overflow)
{
    const world_character *wc = find_character(world, character);
    if (out_overflow)
        *out_overflow = wc && wc->contact_overflow;
    if (!wc)
        return 0;
    for (uint32_t i = 0; i < wc->contact_count && i < capacity && out; ++i)
        out[i] = wc->contacts[i];
    return wc->contact_count;
}

/* ------------------------------------------------------------------------------------------------
 * The step. Bodies move first; then every character, each on its own (in parallel over the task
 * hooks), rides its ground body, is pushed by movers in its way, and moves by its displacement
 * through the bodies at their new poses and the other characters' boxes as they were at the start
 * of the step; last, a resolve pass in slot order puts back any character whose move ended inside
 * a box that a character earlier in the order ended in (both moved into the same space). Each
 * character's phase reads only the step's shared state and writes only its own slot, so results
 * are the same for any number of workers and any scheduling (docs/world.md, "Threads"). */

/// What every character's phase of one step reads.
typedef struct step_context {
    const kcc_world             *world;
    struct kcc_world_characters *cs;
    uint64_t                     key;      ///< the source key of this step's boxes
    const uint32_t              *movers;   ///< kinematic body slots that moved
    uint32_t                     mover_count;
} step_context;

/// The world source of one character's phase: every body, every other character's box.
static void character_source(const step_context *ctx, uint32_t slot, kcc_world_source *out)
{
    kcc_world_source_init(out, ctx->world, KCC_LAYERS_ALL);
    out->base.key = ctx->key;
    out->boxes = (const float(*)[2][3])ctx->cs->boxes;
    out->box_slots = ctx->cs->live;
    out->box_count = ctx->cs->live_count;
    out->skip_box = slot;
}

/// Translates the character's box by up to delta through source, stopping a skin short of the
/// first contact (swept, so nothing is passed through); returns the fraction of delta gone.
static float advance_character(kcc_character *ch, const kcc_local_source *source, const vec3 delta)
{
    const float len = glm_vec3_norm((float *)delta);
    if (!(len > 0.0f))
        return 1.0f;
    vec3 box[2];
    kcc_character_box(ch, box);
    kcc_sweep_hit hit;
    float f = 1.0f;
    if (source->ops->sweep(source, (const vec3 *)box, delta, &hit))
        f = hit.start_overlap ? 0.0f : kcc_maxf(0.0f, hit.t - ch->desc.skin_width / len);
    vec3 step;
    glm_vec3_scale((float *)delta, f, step);
    glm_vec3_add(ch->position, step, ch->position);
    return f;
}

/// Where the rigid motion from pose `start` to pose `end` takes point p.
static void carried_point(const kcc_transform *start, const kcc_transform *end, const vec3 p, vec3 out)
{
    vec3 local;
    kcc_transform_inverse_point(start, p, local);
    kcc_transform_point(end, local, out);
}

/// A character standing on a kinematic body that moved is carried by the body's motion: its box
/// centre goes where the body's motion takes it, swept through everything but that body.
static void ride_ground_body(const step_context *ctx, world_character *wc, kcc_world_source *src,
                             kcc_move_result *r)
{
    const uint32_t slot = kcc_world_body_slot(ctx->world, wc->result.ground_body);
    bool moved = false;
    for (uint32_t i = 0; i < ctx->mover_count && !moved; ++i)
        moved = ctx->movers[i] == slot;
    if (!moved || !wc->ch.on_ground)
        return;
    kcc_transform start, end;
    float swept[2][3];
    kcc_world_body_motion(ctx->world, slot, &start, &end, swept);
    vec3 to, delta, from;
    glm_vec3_copy(wc->ch.position, from);
    carried_point(&start, &end, from, to);
    glm_vec3_sub(to, from, delta);
    src->skip_body = slot;
    advance_character(&wc->ch, &src->base, delta);
    src->skip_body = KCC_WORLD_NO_BODY;
    glm_vec3_sub(wc->ch.position, from, r->carried);
    r->carried_body = wc->result.ground_body;
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
static void push_by_mover(const step_context *ctx, uint32_t slot, world_character *wc,
                          kcc_world_source *src, kcc_move_result *r, kcc_contact_sink *touched)
{
    kcc_transform start, end;
    float swept[2][3];
    kcc_world_body_motion(ctx->world, slot, &start, &end, swept);
    vec3 box[2], motion, back, push;
    kcc_character_box(&wc->ch, box);
    for (int k = 0; k < 3; ++k)
        if (box[0][k] > swept[1][k] || box[1][k] < swept[0][k])
            return;
    vec3 to;
    carried_point(&start, &end, wc->ch.position, to);
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
    r->ground_character = kcc_id_make(ctx->cs->slots[slot].generation, slot);
}

/// Triangle id of the world source as a contact (a body's triangle, or a character's box).
static kcc_contact contact_of(const step_context *ctx, uint32_t id, const vec3 normal)
{
    kcc_contact c;
    memset(&c, 0, sizeof c);
    glm_vec3_copy((float *)normal, c.normal);
    if (id >= KCC_WORLD_BOX_TRIS) {
        const uint32_t slot = (id - KCC_WORLD_BOX_TRIS) / 12u;
        c.character = kcc_id_make(ctx->cs->slots[slot].generation, slot);
        return c;
    }
    c.body = kcc_world_triangle_body(ctx->world, id);
    c.triangle = id - kcc_world_triangle_base(ctx->world, id);
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

/// One character's phase of the step (writes its own slot only).
static void step_character(const step_context *ctx, uint32_t slot)
{
    world_character *wc = &ctx->cs->slots[slot];
    kcc_world_source src;
    character_source(ctx, slot, &src);
    kcc_move_result pre;
    memset(&pre, 0, sizeof pre);
    kcc_contact_sink touched;
    touched.count = 0;
    touched.overflow = false;
    ride_ground_body(ctx, wc, &src, &pre);
    const uint32_t ridden = kcc_world_body_slot(ctx->world, pre.carried_body);
    for (uint32_t i = 0; i < ctx->mover_count; ++i)
        if (ctx->movers[i] != ridden)
            push_by_mover(ctx, ctx->movers[i], wc, &src, &pre, &touched);
    wc->before_move = footing_of(&wc->ch);
    kcc_move_result r;
    kcc_character_move_source(&wc->ch, &src.base, wc->displacement, &r, NULL, &touched);
    r.flags |= pre.flags;
    glm_vec3_copy(pre.carried, r.carried);
    r.carried_body = pre.carried_body;
    name_ground(ctx, &r);
    record_contacts(ctx, wc, &r, &touched);
    wc->result = r;
    glm_vec3_zero(wc->displacement);
}

static void step_task(uint32_t begin, uint32_t end, uint32_t worker, void *task_context)
{
    (void)worker;
    const step_context *ctx = task_context;
    for (uint32_t i = begin; i < end; ++i)
        step_character(ctx, ctx->cs->live[i]);
}

/// The characters' phases over the engine's job system (inline without hooks or with one worker).
static void run_character_phases(const kcc_world *world, step_context *ctx)
{
    const kcc_world_desc *d = kcc_world_get_desc(world);
    const uint32_t n = ctx->cs->live_count;
    if (n == 0)
        return;
    if (!d->enqueue_task || d->worker_count <= 1) {
        step_task(0, n, 0, ctx);
        return;
    }
    const uint32_t min_range = n / (4 * d->worker_count) > 1 ? n / (4 * d->worker_count) : 1;
    void *task = d->enqueue_task(step_task, n, min_range, ctx, d->user_task_context);
    if (task)
        d->finish_task(task, d->user_task_context);
}

static bool boxes_overlap(const vec3 a[2], const vec3 b[2])
{
    return a[0][0] < b[1][0] && a[1][0] > b[0][0] && a[0][1] < b[1][1] && a[1][1] > b[0][1] &&
           a[0][2] < b[1][2] && a[1][2] > b[0][2];
}

/// Whether live character i's box (the overlap rule's, shrunk by the tolerance) overlaps the box
/// of any character before it in the live order.
static bool overlaps_earlier(const struct kcc_world_characters *cs, uint32_t i)
{
    vec3 mine[2];
    const kcc_character *ch = &cs->slots[cs->live[i]].ch;
    kcc_box_for_overlap(ch, ch->position, mine);
    for (uint32_t j = 0; j < i; ++j) {
        const kcc_character *other = &cs->slots[cs->live[j]].ch;
        vec3 theirs[2];
        kcc_character_box(other, theirs);
        if (boxes_overlap((const vec3 *)mine, (const vec3 *)theirs))
            return true;
    }
    return false;
}

/// Characters moved at once, each seeing the others where they stood: two may end in the same
/// space. In slot order, a character whose box overlaps an earlier one's goes back to where its
/// move started (clear of every other character's start box, which its move saw).
static void resolve_character_overlaps(struct kcc_world_characters *cs)
{
    for (uint32_t i = 1; i < cs->live_count; ++i) {
        if (!overlaps_earlier(cs, i))
            continue;
        world_character *wc = &cs->slots[cs->live[i]];
        const footing end = footing_of(&wc->ch);
        restore_footing(&wc->ch, &wc->before_move);
        if (overlaps_earlier(cs, i)) { /* it started inside one: keep the move, which pushed out */
            restore_footing(&wc->ch, &end);
            continue;
        }
        vec3 undone;
        glm_vec3_sub(wc->ch.position, (float *)end.position, undone);
        glm_vec3_add(wc->result.moved, undone, wc->result.moved);
        wc->result.flags |= KCC_MOVE_STUCK;
    }
}

/// The live slots, ascending, and their boxes at the start of the step.
static void snapshot_characters(struct kcc_world_characters *cs)
{
    cs->live_count = 0;
    for (uint32_t i = 0; i < cs->ids.end; ++i) {
        if (!cs->slots[i].live)
            continue;
        cs->live[cs->live_count++] = i;
        vec3 box[2];
        kcc_character_box(&cs->slots[i].ch, box);
        memcpy(cs->boxes[i], box, sizeof cs->boxes[i]);
    }
}

/* ------------------------------------------------------------------------------------------------
 * Sensors: who is inside each after the step, against who was after the last one. */

/// The characters inside each sensor now, ordered by sensor slot then character slot.
static void list_inside(const kcc_world *world, struct kcc_world_characters *cs, sensor_state *ss)
{
    const uint32_t *sensors;
    const uint32_t sensor_count = kcc_world_sensors(world, &sensors);
    sensor_pair *out = ss->inside[ss->now];
    uint32_t n = 0;
    for (uint32_t i = 0; i < sensor_count; ++i)
        for (uint32_t j = 0; j < cs->live_count; ++j) {
            const uint32_t c = cs->live[j];
            vec3 box[2];
            kcc_character_box(&cs->slots[c].ch, box);
            if (!kcc_world_sensor_holds(world, sensors[i], (const float(*)[3])box))
                continue;
            if (n == cs->sensor_capacity) {
                ss->overflow = true;
                continue;
            }
            const sensor_pair p = {sensors[i], c, kcc_world_body_id_of_slot(world, sensors[i]),
                                   kcc_id_make(cs->slots[c].generation, c)};
            out[n++] = p;
        }
    ss->count[ss->now] = n;
}

static void add_event(struct kcc_world_characters *cs, const sensor_pair *p, bool entered)
{
    sensor_state *ss = &cs->sensors;
    if (ss->event_count == cs->sensor_capacity) {
        ss->overflow = true;
        return;
    }
    const kcc_sensor_event e = {p->sensor, p->character, entered};
    ss->events[ss->event_count++] = e;
}

/// Events: the pairs of the last step missing now left, the pairs new now entered; merged in
/// (sensor slot, character slot) order. Equal slots with other ids: the old pair left, the new
/// one entered.
static void sensor_events(const kcc_world *world, struct kcc_world_characters *cs)
{
    sensor_state *ss = &cs->sensors;
    ss->now ^= 1u;
    ss->event_count = 0;
    ss->overflow = false;
    list_inside(world, cs, ss);
    const sensor_pair *was = ss->inside[ss->now ^ 1u], *is = ss->inside[ss->now];
    uint32_t i = 0, j = 0;
    const uint32_t nw = ss->count[ss->now ^ 1u], ni = ss->count[ss->now];
    while (i < nw || j < ni) {
        const uint64_t kw = i < nw ? (uint64_t)was[i].sensor_slot << 32 | was[i].character_slot : UINT64_MAX;
        const uint64_t ki = j < ni ? (uint64_t)is[j].sensor_slot << 32 | is[j].character_slot : UINT64_MAX;
        if (kw < ki) {
            add_event(cs, &was[i++], false);
        } else if (ki < kw) {
            add_event(cs, &is[j++], true);
        } else {
            if (was[i].sensor != is[j].sensor || was[i].character != is[j].character) {
                add_event(cs, &was[i], false);
                add_event(cs, &is[j], true);
            }
            ++i, ++j;
        }
    }
}

uint32_t kcc_world_sensor_events(const kcc_world *world, const kcc_sensor_event **out_events,
                                 bool *out_overflow)
{
    if (!world)
        return 0;
    const sensor_state *ss = &kcc_world_characters(world)->sensors;
    if (out_events)
        *out_events = ss->events;
    if (out_overflow)
        *out_overflow = ss->overflow;
    return ss->event_count;
}

kcc_status kcc_world_step(kcc_world *world)
{
    if (!world)
        return KCC_ERR_NULL_ARGUMENT;
    kcc_world_step_bodies(world);
    struct kcc_world_characters *cs = kcc_world_characters(world);
    snapshot_characters(cs);
    step_context ctx = {world, cs, kcc_world_step_key(world), NULL, 0};
    ctx.mover_count = kcc_world_movers(world, &ctx.movers);
    run_character_phases(world, &ctx);
    resolve_character_overlaps(cs);
    sensor_events(world, cs);
    return KCC_OK;
}
