/* world_step.c: the world's characters: kcc_world_create (collide's bodies plus the characters'
 * slots, in one allocation), adding, removing and steering characters, and kcc_world_step, which
 * moves the bodies, then every character by its displacement through the bodies at their new
 * poses. Nothing here allocates after kcc_world_create. */
#include <math.h>

#include <cglm/cglm.h>

#include "controller_internal.h"

#define WORLD_ALIGN 64

/// One character slot: the controller's character, the next step's displacement and the last
/// step's result.
typedef struct world_character {
    kcc_character   ch;
    kcc_move_result result;
    vec3            displacement;   ///< m, for the next step (0 when none was set)
    uint32_t        generation;
    bool            live;
} world_character;

struct kcc_world_characters {
    world_character *slots;        ///< character_capacity
    kcc_id_pool      ids;
    uint32_t         count;        ///< live characters
};

static size_t round_up(size_t at)
{
    return (at + WORLD_ALIGN - 1) / WORLD_ALIGN * WORLD_ALIGN;
}

/// Lays the characters' half out from byte `at` of the block at base (NULL: only measures);
/// returns the end.
static size_t characters_layout(struct kcc_world_characters **out, char *base, size_t at,
                                uint32_t capacity)
{
    at = round_up(at);
    struct kcc_world_characters *cs = base ? (void *)(base + at) : NULL;
    at = round_up(at + sizeof *cs);
    if (cs)
        cs->slots = (void *)(base + at);
    at = round_up(at + (size_t)capacity * sizeof(world_character));
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
    const size_t bytes = characters_layout(NULL, NULL, bodies_end, d.character_capacity);
    char *block = al.alloc(bytes, WORLD_ALIGN, al.user);
    if (!block)
        return KCC_ERR_OUT_OF_MEMORY;
    memset(block, 0, bytes);
    kcc_world *w = (kcc_world *)(void *)block;
    kcc_world_layout(w, block, &d);
    struct kcc_world_characters *cs;
    characters_layout(&cs, block, bodies_end, d.character_capacity);
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

/* ------------------------------------------------------------------------------------------------
 * The step */

/// One character's move through the world source by the displacement set for this step.
static void move_character(const kcc_world *world, const kcc_world_source *source,
                           world_character *wc)
{
    kcc_move_result r;
    kcc_character_move_source(&wc->ch, &source->base, wc->displacement, &r, NULL);
    r.ground_body = (r.flags & KCC_MOVE_ON_GROUND) ? kcc_world_triangle_body(world, r.ground_triangle) : 0;
    wc->result = r;
    glm_vec3_zero(wc->displacement);
}

kcc_status kcc_world_step(kcc_world *world)
{
    if (!world)
        return KCC_ERR_NULL_ARGUMENT;
    kcc_world_step_bodies(world);
    struct kcc_world_characters *cs = kcc_world_characters(world);
    kcc_world_source source;
    kcc_world_source_init(&source, world, KCC_LAYERS_ALL);
    for (uint32_t i = 0; i < cs->ids.end; ++i)
        if (cs->slots[i].live)
            move_character(world, &source, &cs->slots[i]);
    return KCC_OK;
}
