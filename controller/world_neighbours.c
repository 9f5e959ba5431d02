/* world_neighbours.c: each character's neighbours for a step, from the world's broadphase: every
 * character's proxy moved to the region its step may reach, the pairs turned into a list per
 * character of the body pieces and the characters near it. Allocates nothing. */
#include "world_internal.h"

/// An entry naming a character (its slot below this bit); other entries name pieces.
#define NEAR_CHARACTER 0x80000000u

/// The region a character's step may reach: its box, carried by the body it stands on (that
/// body's motion over the step at the box centre) and moved by its displacement, grown by what a
/// move looks around it (step height, ground snap, push-out, two skins) and 10 cm.
void kcc_world_step_region(const kcc_world *world, const world_character *wc, float out[2][3])
{
    vec3 box[2], carry = {0.0f, 0.0f, 0.0f};
    kcc_character_box(&wc->ch, box);
    const uint32_t ground = kcc_world_body_slot(world, wc->result.ground_body);
    if (wc->ch.on_ground && ground != KCC_WORLD_NO_BODY) {
        kcc_transform start, end;
        float swept[2][3];
        kcc_world_body_motion(world, ground, &start, &end, swept);
        vec3 to;
        carried_point(&start, &end, wc->ch.position, to);
        glm_vec3_sub(to, (float *)wc->ch.position, carry);
    } else {
        kcc_world_character_carry(kcc_world_characters(world), wc, carry);
    }
    const kcc_character_desc *d = &wc->ch.desc;
    const float grow = d->step_height + d->ground_snap + d->max_push_out + 2.0f * d->skin_width + 0.1f;
    for (int k = 0; k < 3; ++k) {
        const float a = carry[k], b = carry[k] + wc->displacement[k];
        out[0][k] = box[0][k] + kcc_minf(0.0f, kcc_minf(a, b)) - grow;
        out[1][k] = box[1][k] + kcc_maxf(0.0f, kcc_maxf(a, b)) + grow;
    }
}

/// Counts each live character's entries (pass 0) or writes them (pass 1) from the pairs.
static void tally_pairs(const kcc_world *world, struct kcc_world_characters *cs, int pass)
{
    neighbour_lists *near = &cs->near;
    const uint32_t n = kcc_world_pair_count(world, NULL);
    for (uint32_t i = 0; i < n; ++i) {
        kcc_world_pair_ends p;
        kcc_world_pair(world, i, &p);
        for (int side = 0; side < 2; ++side) {
            const bool mine = side == 0 ? p.a_is_character : p.b_is_character;
            const bool other_is_character = side == 0 ? p.b_is_character : p.a_is_character;
            const uint32_t me = side == 0 ? p.a : p.b, other = side == 0 ? p.b : p.a;
            if (!mine)
                continue;
            if (pass == 1)
                near->entries[near->first[me] + near->count[me]] =
                    other_is_character ? NEAR_CHARACTER | other : other;
            ++near->count[me];
        }
    }
}

void kcc_world_move_proxies(kcc_world *world, struct kcc_world_characters *cs)
{
    for (uint32_t i = 0; i < cs->live_count; ++i) {
        const uint32_t slot = cs->live[i];
        kcc_world_move_character_proxy(world, cs->slots[slot].proxy, (const float(*)[3])cs->regions[slot]);
    }
    kcc_world_update_broadphase(world);
}

void kcc_world_list_neighbours(const kcc_world *world, struct kcc_world_characters *cs)
{
    neighbour_lists *near = &cs->near;
    bool overflow = false;
    kcc_world_pair_count(world, &overflow);
    near->all = overflow;
    if (overflow)
        return;
    for (uint32_t i = 0; i < cs->live_count; ++i)
        near->count[cs->live[i]] = 0;
    tally_pairs(world, cs, 0);
    uint32_t at = 0;
    for (uint32_t i = 0; i < cs->live_count; ++i) {
        const uint32_t slot = cs->live[i];
        near->first[slot] = at;
        at += near->count[slot];
        near->count[slot] = 0;
    }
    tally_pairs(world, cs, 1);
}

/// Entry order: pieces first, by their place in the bodies' triangles; then characters by slot.
void kcc_world_sort_neighbours(const kcc_world *world, struct kcc_world_characters *cs, uint32_t slot)
{
    neighbour_lists *near = &cs->near;
    uint32_t *e = near->entries + near->first[slot];
    const uint32_t n = near->count[slot];
    uint32_t pieces = 0;
    for (uint32_t i = 0; i < n; ++i) { /* the pieces to the front, each part keeping its order */
        const uint32_t v = e[i];
        if (v & NEAR_CHARACTER)
            continue;
        memmove(e + pieces + 1, e + pieces, (i - pieces) * sizeof *e);
        e[pieces++] = v;
    }
    for (uint32_t i = 1; i < pieces; ++i) { /* insertion sorts: the lists are short */
        const uint32_t v = e[i];
        const uint64_t key = kcc_world_piece_order(world, v);
        uint32_t j = i;
        for (; j > 0 && kcc_world_piece_order(world, e[j - 1]) > key; --j)
            e[j] = e[j - 1];
        e[j] = v;
    }
    for (uint32_t i = pieces; i < n; ++i) {
        const uint32_t v = e[i] & ~NEAR_CHARACTER;
        uint32_t j = i;
        for (; j > pieces && e[j - 1] > v; --j)
            e[j] = e[j - 1];
        e[j] = v;
    }
    near->pieces[slot] = pieces;
}
