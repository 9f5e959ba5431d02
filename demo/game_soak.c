/* demo/game_soak.c: the movers soak: a map's game run with a rider on every plat, a jumper on every
 * jump pad and wandering bots, checked every step: no box deeper in the static level than
 * KCC_PENETRATION_TOLERANCE, no fall out of the level, every lift ridden to its top, every jump pad's
 * apex within a character's width of its target. kcc-demo --soak-movers runs it (make soak-movers). */
#include "game.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Who was placed where: rider of plat `mover`, jumper of pad `trigger`. */
typedef struct soak_role {
    uint32_t mover, trigger;
    bool     done;
} soak_role;

/* Where a jumper starts: its centre at the trigger's centre, the point Quake 3's AimAtTarget aims
 * from (mid-air for a pad that relaunches a jumper in flight). */
static void jumper_feet(const game *g, const float box[2][3], float feet[3])
{
    const kcc_character_desc *d = &g->desc.character;
    for (int k = 0; k < 3; ++k)
        feet[k] = 0.5f * (box[0][k] + box[1][k]);
    feet[1] -= d->half_extents[1] + d->skin_width;
}

static kcc_status place_roles(game *g, uint32_t bots, soak_role *roles, game_soak_report *r)
{
    kcc_status s = KCC_OK;
    for (uint32_t m = 0; s == KCC_OK && m < g->mover_count; ++m) {
        const game_mover *mv = &g->movers[m];
        if (mv->kind != GAME_MOVER_PLAT)
            continue;
        float feet[3] = {mv->pos1[0] + 0.5f * (mv->bounds[0][0] + mv->bounds[1][0]), mv->pos1[1] + mv->bounds[1][1],
                         mv->pos1[2] + 0.5f * (mv->bounds[0][2] + mv->bounds[1][2])};
        uint32_t c;
        s = game_add_character(g, feet, false, &c);
        if (s == KCC_OK) {
            roles[c] = (soak_role){m, UINT32_MAX, false};
            r->lifts++;
        }
    }
    for (uint32_t t = 0; s == KCC_OK && t < g->trigger_count; ++t) {
        const game_trigger *tr = &g->triggers[t];
        float feet[3];
        jumper_feet(g, (const float(*)[3])tr->box, feet);
        if (tr->kind != GAME_TRIGGER_PUSH || !tr->has_target || !(tr->target[1] > feet[1]))
            continue;
        uint32_t c;
        s = game_add_character(g, feet, false, &c);
        if (s == KCC_OK) {
            roles[c] = (soak_role){UINT32_MAX, t, false};
            r->pads++;
        }
    }
    for (uint32_t b = 0; s == KCC_OK && b < bots && g->spawn_count; ++b) {
        uint32_t c;
        s = game_add_character(g, g->spawns + 3 * (b % g->spawn_count), true, &c);
        if (s == KCC_OK)
            roles[c] = (soak_role){UINT32_MAX, UINT32_MAX, false};
    }
    return s;
}

/* One character after a step: its depth in the static level, and whether its role is done. */
static void check_character(game *g, uint32_t c, soak_role *role, game_soak_report *r)
{
    kcc_character_state st;
    if (!game_character_state(g, c, &st, NULL))
        return;
    const kcc_character_desc *d = &g->desc.character;
    float box[2][3];
    for (int k = 0; k < 3; ++k) {
        box[0][k] = st.position[k] - d->half_extents[k];
        box[1][k] = st.position[k] + d->half_extents[k];
    }
    float pen = demo_penetration(g->level_mesh, (const float(*)[3])box);
    r->max_penetration = fmaxf(r->max_penetration, pen);
    r->over_tolerance += pen > KCC_PENETRATION_TOLERANCE;
    if (getenv("SOAKDBG") && pen > KCC_PENETRATION_TOLERANCE) fprintf(stderr, "pen %g char %u role m%u t%u t=%g pos %g %g %g\n", pen, c, role->mover, role->trigger, g->time, st.position[0], st.position[1], st.position[2]);
    r->character_steps++;
    if (role->done)
        return;
    if (role->mover != UINT32_MAX) {
        const game_mover *m = &g->movers[role->mover];
        float top = m->pos2[1] + m->bounds[1][1], feet = st.position[1] - d->half_extents[1];
        role->done = m->state == GAME_AT_POS2 && st.ground_body == m->body &&
                     fabsf(feet - top) <= GAME_LIFT_TOLERANCE;
        r->lifts_ridden += role->done;
    } else if (role->trigger != UINT32_MAX && g->characters[c].launches > 0 && !g->characters[c].in_flight &&
               isnan(g->characters[c].apex_distance)) {
        role->done = true;   /* its arc led into a teleporter: the apex was never reached */
        r->pads_teleported++;
    } else if (role->trigger != UINT32_MAX && !isnan(g->characters[c].apex_distance)) {
        float dist = g->characters[c].apex_distance;
        if (getenv("SOAKDBG")) fprintf(stderr, "pad ent %u dist %g pos %g %g %g target %g %g %g t=%g\n", g->triggers[role->trigger].entity, dist, st.position[0], st.position[1], st.position[2], g->characters[c].launch_target[0], g->characters[c].launch_target[1], g->characters[c].launch_target[2], g->time);
        role->done = true;
        r->pads_launched++;
        r->pads_on_target += dist <= 2.0f * d->half_extents[0];
        if (dist > r->worst_pad_distance) {
            r->worst_pad_distance = dist;
            r->worst_pad_entity = role->trigger;
        }
    }
}

kcc_status game_soak(const q3bsp_map *map, uint32_t steps, uint32_t bots, game_soak_report *out, char *err,
                     size_t err_size)
{
    if (!map || !out) {
        snprintf(err, err_size, "NULL argument");
        return KCC_ERR_NULL_ARGUMENT;
    }
    game_desc d = game_default_desc();
    d.character_capacity = bots + 2 * map->entities.count + 1;
    game *g = NULL;
    kcc_status s = game_create(map, &d, &g, err, err_size);
    if (s != KCC_OK)
        return s;
    game_soak_report r;
    memset(&r, 0, sizeof(r));
    r.worst_pad_entity = UINT32_MAX;
    r.worst_lift_entity = UINT32_MAX;
    soak_role *roles = calloc(d.character_capacity, sizeof(soak_role));
    s = roles ? place_roles(g, bots, roles, &r) : KCC_ERR_OUT_OF_MEMORY;
    if (s != KCC_OK)
        snprintf(err, err_size, "placing the characters: %s", kcc_status_str(s));
    for (uint32_t i = 0; s == KCC_OK && i < steps; ++i) {
        game_step(g, DEMO_DT);
        for (uint32_t c = 0; c < g->character_count; ++c)
            check_character(g, c, &roles[c], &r);
    }
    for (uint32_t c = 0; s == KCC_OK && c < g->character_count; ++c)
        if (roles[c].mover != UINT32_MAX && !roles[c].done)
            r.worst_lift_entity = g->movers[roles[c].mover].entity;
    if (r.worst_pad_entity != UINT32_MAX)
        r.worst_pad_entity = g->triggers[r.worst_pad_entity].entity;
    r.steps = steps;
    r.characters = g->character_count;
    r.stats = g->stats;
    free(roles);
    game_destroy(g);
    if (s == KCC_OK)
        *out = r;
    return s;
}
