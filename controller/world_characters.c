/* world_characters.c: the world's characters: kcc_world_create (collide's bodies plus the
 * characters' slots, in one allocation), adding, removing and steering characters, and reading
 * their state and contacts. Nothing here allocates after kcc_world_create. */
#include <math.h>

#include "trace_internal.h"
#include "world_internal.h"

#define WORLD_ALIGN 64

static size_t round_up(size_t at)
{
    return (at + WORLD_ALIGN - 1) / WORLD_ALIGN * WORLD_ALIGN;
}

/// Lays the characters' half out from byte `at` of the block at base (NULL: only measures);
/// returns the end.
static size_t characters_layout(struct kcc_world_characters **out, char *base, size_t at,
                                const kcc_world_desc *d)
{
    const uint32_t capacity = d->character_capacity, sensor_capacity = d->sensor_capacity;
    at = round_up(at);
    struct kcc_world_characters *cs = base ? (void *)(base + at) : NULL;
    at = round_up(at + sizeof *cs);
    if (cs)
        cs->slots = (void *)(base + at);
    at = round_up(at + (size_t)capacity * sizeof(world_character));
    if (cs)
        cs->boxes = (void *)(base + at);
    at = round_up(at + (size_t)capacity * sizeof(float[2][3]));
    float(**boxes[4])[2][3] = {cs ? &cs->regions : NULL, cs ? &cs->placed : NULL, cs ? &cs->ends : NULL,
                               cs ? &cs->end_overlaps : NULL};
    for (int k = 0; k < 4; ++k) {
        if (cs)
            *boxes[k] = (void *)(base + at);
        at = round_up(at + (size_t)capacity * sizeof(float[2][3]));
    }
    if (cs)
        cs->displacements = (void *)(base + at);
    at = round_up(at + (size_t)capacity * sizeof(float[3]));
    if (cs)
        cs->states = (void *)(base + at);
    at = round_up(at + (size_t)capacity * sizeof(kcc_character_state));
    uint8_t **flags[3] = {cs ? &cs->alive : NULL, cs ? &cs->to_place : NULL, cs ? &cs->resolve_marks : NULL};
    for (int k = 0; k < 3; ++k) {
        if (cs)
            *flags[k] = (void *)(base + at);
        at = round_up(at + (size_t)capacity);
    }
    uint32_t **indices[2] = {cs ? &cs->live : NULL, cs ? &cs->placing : NULL};
    for (int k = 0; k < 2; ++k) {
        if (cs)
            *indices[k] = (void *)(base + at);
        at = round_up(at + (size_t)capacity * sizeof(uint32_t));
    }
    if (cs)
        cs->motions = (void *)(base + at);
    at = round_up(at + (size_t)d->body_capacity * sizeof(mover_motion));
    uint32_t **by_slot[3] = {cs ? &cs->layers : NULL, cs ? &cs->masks : NULL, cs ? &cs->slot_ids : NULL};
    for (int k = 0; k < 3; ++k) {
        if (cs)
            *by_slot[k] = (void *)(base + at);
        at = round_up(at + (size_t)capacity * sizeof(uint32_t));
    }
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
    if (cs) {
        cs->near.entries = (void *)(base + at);
        cs->pair_capacity = d->pair_capacity;
    }
    at = round_up(at + 2 * (size_t)d->pair_capacity * sizeof(uint32_t));
    uint32_t **lists[3] = {cs ? &cs->near.first : NULL, cs ? &cs->near.pieces : NULL,
                           cs ? &cs->near.count : NULL};
    for (int k = 0; k < 3; ++k) {
        if (cs)
            *lists[k] = (void *)(base + at);
        at = round_up(at + ((size_t)capacity + 1) * sizeof(uint32_t));
    }
    at = kcc_world_region_grid_layout(cs ? &cs->grid : NULL, base, at, capacity);
    at = round_up(at);
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
    const size_t bytes = characters_layout(NULL, NULL, bodies_end, &d);
    char *block = al.alloc(bytes, WORLD_ALIGN, al.user);
    if (!block)
        return KCC_ERR_OUT_OF_MEMORY;
    memset(block, 0, bytes);
    kcc_world *w = (kcc_world *)(void *)block;
    kcc_world_layout(w, block, &d);
    struct kcc_world_characters *cs;
    characters_layout(&cs, block, bodies_end, &d);
    kcc_world_init(w, &d, &al, bytes, cs);
    *out_world = w;
    return KCC_OK;
}

/* ------------------------------------------------------------------------------------------------
 * Characters */

/// Whether a character's centre (finite) lies within KCC_WORLD_MAX_POSITION on every axis, as one
/// added or teleported must: the step's regions and cells then stay finite.
static bool within_world_reach(const vec3 center)
{
    for (int k = 0; k < 3; ++k)
        if (fabsf(center[k]) > KCC_WORLD_MAX_POSITION)
            return false;
    return true;
}

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

/// The slot of a character of the world.
static uint32_t slot_of(const kcc_world *world, const world_character *wc)
{
    return (uint32_t)(wc - kcc_world_characters(world)->slots);
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
    if (!within_world_reach(center))
        return KCC_ERR_BAD_DESC;
    struct kcc_world_characters *cs = kcc_world_characters(world);
    uint32_t slot;
    if (!kcc_id_pool_take(&cs->ids, &slot))
        return KCC_ERR_TOO_LARGE;
    world_character *wc = &cs->slots[slot];
    const uint32_t generation = wc->generation;
    memset(wc, 0, sizeof *wc);
    wc->ch = ch;
    kcc_world_step_reach_init(&wc->reach, &wc->ch);
    wc->generation = generation;
    wc->live = true;
    cs->alive[slot] = 1;
    glm_vec3_zero(cs->displacements[slot]);
    kcc_world_publish_state(cs, slot);
    cs->layers[slot] = 1u;
    cs->masks[slot] = KCC_LAYERS_ALL;
    cs->slot_ids[slot] = kcc_id_make(generation, slot);
    ++cs->count;
    *out_character = cs->slot_ids[slot];
    kcc_world_record_character(world, *out_character, desc, center);
    return KCC_OK;
}

kcc_status kcc_world_remove_character(kcc_world *world, uint32_t character)
{
    world_character *wc = find_character(world, character);
    if (!wc)
        return world ? KCC_ERR_NOT_FOUND : KCC_ERR_NULL_ARGUMENT;
    struct kcc_world_characters *cs = kcc_world_characters(world);
    wc->live = false;
    cs->alive[wc - cs->slots] = 0;
    wc->generation = (wc->generation + 1) & KCC_ID_GENERATION_MASK;
    cs->slot_ids[wc - cs->slots] = kcc_id_make(wc->generation, (uint32_t)(wc - cs->slots));
    kcc_id_pool_give(&cs->ids, (uint32_t)(wc - cs->slots));
    --cs->count;
    kcc_world_record_character(world, character, NULL, NULL);
    return KCC_OK;
}

kcc_status kcc_world_set_displacement(kcc_world *world, uint32_t character, const vec3 displacement)
{
    world_character *wc = find_character(world, character);
    if (!wc)
        return world ? KCC_ERR_NOT_FOUND : KCC_ERR_NULL_ARGUMENT;
    float *to = kcc_world_characters(world)->displacements[slot_of(world, wc)];
    glm_vec3_zero(to); /* a refused displacement leaves none for the step */
    if (!displacement)
        return KCC_ERR_NULL_ARGUMENT;
    for (int k = 0; k < 3; ++k)
        if (!isfinite(displacement[k]))
            return KCC_ERR_NON_FINITE;
    for (int k = 0; k < 3; ++k)
        if (fabsf(displacement[k]) > KCC_MAX_DISPLACEMENT)
            return KCC_ERR_BAD_DESC;
    glm_vec3_copy((float *)displacement, to);
    return KCC_OK;
}

kcc_status kcc_world_set_character_position(kcc_world *world, uint32_t character, const vec3 center)
{
    world_character *wc = find_character(world, character);
    if (!wc || !center)
        return !world || !center ? KCC_ERR_NULL_ARGUMENT : KCC_ERR_NOT_FOUND;
    for (int k = 0; k < 3; ++k)
        if (!isfinite(center[k]))
            return KCC_ERR_NON_FINITE;
    if (!within_world_reach(center))
        return KCC_ERR_BAD_DESC;
    kcc_world_record_teleport(world, character, center);
    glm_vec3_copy((float *)center, wc->ch.position);
    wc->ch.on_ground = false;
    wc->result.ground_body = wc->result.ground_character = 0; /* nothing to ride next step */
    glm_vec3_zero(wc->last_motion); /* nor anything to carry a rider by */
    kcc_character_forget(&wc->ch);
    kcc_world_publish_state(kcc_world_characters(world), slot_of(world, wc));
    return KCC_OK;
}

kcc_status kcc_world_set_character_desc(kcc_world *world, uint32_t character,
                                        const kcc_character_desc *desc)
{
    world_character *wc = find_character(world, character);
    if (!wc)
        return world ? KCC_ERR_NOT_FOUND : KCC_ERR_NULL_ARGUMENT;
    const kcc_status st = kcc_character_set_desc(&wc->ch, desc);
    if (st != KCC_OK)
        return st;
    kcc_world_step_reach_init(&wc->reach, &wc->ch);
    kcc_world_publish_state(kcc_world_characters(world), slot_of(world, wc));
    kcc_world_record_retune(world, character, desc);
    return KCC_OK;
}

kcc_status kcc_world_set_character_layers(kcc_world *world, uint32_t character, uint32_t layers,
                                          uint32_t mask)
{
    world_character *wc = find_character(world, character);
    if (!wc)
        return world ? KCC_ERR_NOT_FOUND : KCC_ERR_NULL_ARGUMENT;
    if (layers == 0)
        return KCC_ERR_BAD_DESC;
    struct kcc_world_characters *cs = kcc_world_characters(world);
    const uint32_t slot = (uint32_t)(wc - cs->slots);
    kcc_world_record_character_layers(world, character, layers, mask);
    cs->layers[slot] = layers;
    cs->masks[slot] = mask;
    return KCC_OK;
}

kcc_status kcc_world_get_character(const kcc_world *world, uint32_t character,
                                   kcc_character_state *out_state, kcc_move_result *out_result)
{
    const world_character *wc = find_character(world, character);
    if (!wc)
        return world ? KCC_ERR_NOT_FOUND : KCC_ERR_NULL_ARGUMENT;
    const kcc_character_state *st = &kcc_world_characters(world)->states[slot_of(world, wc)];
    /* every change of these fields published it (checked in the KCC_DEBUG builds: make unit) */
    KCC_ASSERT(memcmp(st->position, wc->ch.position, sizeof st->position) == 0 &&
               st->on_ground == wc->ch.on_ground && st->ground_body == wc->result.ground_body);
    if (out_state)
        *out_state = *st;
    if (out_result)
        *out_result = wc->result;
    return KCC_OK;
}

/* ------------------------------------------------------------------------------------------------
 * Shifting the origin */

/// Moves a character by -new_origin: its centre, its ground's height along its up axis (the
/// character's and its last result's). Its cached triangles and clear note are dropped (the
/// world's triangles moved). Velocities, displacements, flags and contacts are
/// directions and names: they stay.
static void shift_character(world_character *wc, const float new_origin[3])
{
    kcc_character *ch = &wc->ch;
    const int up = kcc_up_axis_index(ch->desc.up_axis);
    const float along_up = kcc_up_axis_sign(ch->desc.up_axis) * new_origin[up];
    for (int k = 0; k < 3; ++k)
        ch->position[k] -= new_origin[k];
    ch->ground_height -= along_up;
    if (wc->result.flags & (KCC_MOVE_ON_GROUND | KCC_MOVE_ON_STEEP))
        wc->result.ground_height -= along_up;
    kcc_character_forget(ch);
}

kcc_status kcc_world_shift_origin(kcc_world *world, const vec3 new_origin)
{
    if (!world || !new_origin)
        return KCC_ERR_NULL_ARGUMENT;
    for (int k = 0; k < 3; ++k)
        if (!isfinite(new_origin[k]))
            return KCC_ERR_NON_FINITE;
    struct kcc_world_characters *cs = kcc_world_characters(world);
    for (uint32_t i = 0; i < cs->ids.end; ++i) /* checked before anything moves */
        for (int k = 0; cs->slots[i].live && k < 3; ++k)
            if (!(fabsf(cs->slots[i].ch.position[k] - new_origin[k]) <= KCC_WORLD_MAX_POSITION))
                return KCC_ERR_BAD_DESC;
    const kcc_status st = kcc_world_shift_bodies(world, new_origin);
    if (st != KCC_OK)
        return st;
    kcc_world_record_shift(world, new_origin);
    for (uint32_t i = 0; i < cs->ids.end; ++i)
        if (cs->slots[i].live) {
            shift_character(&cs->slots[i], new_origin);
            kcc_world_publish_state(cs, i);
        }
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

