/* demo/game_soak.c: the movers soak: a map's game run with a rider on every plat, wandering bots, and
 * a jumper launched from every jump pad, checked every step: no box deeper in the static level than
 * KCC_PENETRATION_TOLERANCE, no fall out of the level, every lift ridden to its top, every jump pad's
 * apex within a character's width (horizontally) of its target. kcc-demo --soak-movers runs it on the
 * imported maps (make soak-movers); test/test_demo.c runs it on generated ones. */
#include "game.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WAVE_STEPS 240u   /* steps a wave of jumpers gets to reach their apexes (4 s) */
#define FLIGHT_MARGIN 1.5f  /* m around a flight's box within which two flights could meet */
#define RIDE_STEPS 3600u    /* steps a rider gets to reach its lift's top (60 s: the slowest lifts
                             * of the imported maps climb 13.5 m at 1.6 m/s) */

/* Who a character is: rider of plat `mover`, jumper of pad `trigger`, or a bot (both UINT32_MAX). */
typedef struct soak_role {
    uint32_t mover, trigger;
    bool     done;
} soak_role;

typedef struct soak {
    game             *g;
    soak_role        *roles;     /* parallel to g->characters */
    uint32_t         *pads;      /* trigger index of each pad with a jumper */
    uint32_t         *wave;      /* its wave */
    float           (*flight)[2][3];  /* m: the box of its start and target */
    uint32_t          pad_count;
    uint32_t          riders_left;
    game_soak_report  r;
} soak;

/* Where a jumper starts: its centre at the trigger's centre, the point Quake 3's AimAtTarget aims
 * from (mid-air for a pad that relaunches a jumper in flight). */
static void jumper_feet(const game *g, const game_trigger *t, float feet[3])
{
    const kcc_character_desc *d = &g->desc.character;
    for (int k = 0; k < 3; ++k)
        feet[k] = 0.5f * (t->box[0][k] + t->box[1][k]);
    feet[1] -= d->half_extents[1] + d->skin_width;
}

static bool boxes_meet(const float a[2][3], const float b[2][3])
{
    for (int k = 0; k < 3; ++k)
        if (a[1][k] + FLIGHT_MARGIN < b[0][k] || b[1][k] + FLIGHT_MARGIN < a[0][k])
            return false;
    return true;
}

/* Every pad aiming above its centre, in waves: a pad joins the first wave none of whose flights its own
 * could meet. */
static uint32_t plan_pads(soak *s)
{
    uint32_t waves = 0;
    for (uint32_t t = 0; t < s->g->trigger_count; ++t) {
        const game_trigger *tr = &s->g->triggers[t];
        float feet[3];
        jumper_feet(s->g, tr, feet);
        if (tr->kind != GAME_TRIGGER_PUSH || !tr->has_target || !(tr->target[1] > feet[1]))
            continue;
        uint32_t p = s->pad_count++;
        s->pads[p] = t;
        for (int k = 0; k < 3; ++k) {
            s->flight[p][0][k] = fminf(feet[k], tr->target[k]);
            s->flight[p][1][k] = fmaxf(feet[k], tr->target[k]);
        }
        uint32_t w = 0;
        for (bool clash = true; clash; w += clash) {
            clash = false;
            for (uint32_t q = 0; q < p && !clash; ++q)
                clash = s->wave[q] == w && boxes_meet((const float(*)[3])s->flight[p],
                                                      (const float(*)[3])s->flight[q]);
        }
        s->wave[p] = w;
        waves = w + 1 > waves ? w + 1 : waves;
    }
    return waves;
}

static kcc_status add_role(soak *s, const float feet[3], bool bot, soak_role role)
{
    uint32_t c;
    kcc_status st = game_add_character(s->g, feet, bot, &c);
    if (st == KCC_OK)
        s->roles[c] = role;
    return st;
}

/* The middle of the largest triangle of the plat's top: a plat's bounds may hold L-shaped or diagonal
 * floors whose middle is off the plat. */
void game_plat_rider_feet(const q3bsp_map *map, const game_mover *m, float feet[3])
{
    const q3bsp_model *md = &map->models[q3bsp_entity_model(map, m->entity)];
    float best = -1.0f;
    for (uint32_t t = 0; t < md->triangle_count; ++t) {
        const float *a = md->positions + 3 * md->indices[3 * t], *b = md->positions + 3 * md->indices[3 * t + 1],
                    *c = md->positions + 3 * md->indices[3 * t + 2];
        float e1[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, e2[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
        float up = e1[2] * e2[0] - e1[0] * e2[2];   /* twice the area projected on the floor, facing up */
        float y = (a[1] + b[1] + c[1]) / 3.0f;
        if (up <= best || y < m->bounds[1][1] - 0.01f)
            continue;
        best = up;
        for (int k = 0; k < 3; ++k)
            feet[k] = m->pos1[k] + (a[k] + b[k] + c[k]) / 3.0f;
    }
    if (best < 0.0f)
        for (int k = 0; k < 3; ++k)
            feet[k] = m->pos1[k] + (k == 1 ? m->bounds[1][1] : 0.5f * (m->bounds[0][k] + m->bounds[1][k]));
}

static kcc_status place_riders_and_bots(soak *s, const q3bsp_map *map, uint32_t bots)
{
    game *g = s->g;
    kcc_status st = KCC_OK;
    for (uint32_t m = 0; st == KCC_OK && m < g->mover_count; ++m) {
        const game_mover *mv = &g->movers[m];
        if (mv->kind != GAME_MOVER_PLAT)
            continue;
        float feet[3];
        game_plat_rider_feet(map, mv, feet);
        st = add_role(s, feet, false, (soak_role){m, UINT32_MAX, false});
        s->r.lifts += st == KCC_OK;
    }
    s->riders_left = s->r.lifts;
    for (uint32_t b = 0; st == KCC_OK && b < bots && g->spawn_count; ++b)
        st = add_role(s, g->spawns + 3 * (b % g->spawn_count), true, (soak_role){UINT32_MAX, UINT32_MAX, false});
    s->r.characters = g->character_count;
    return st;
}

static kcc_status start_wave(soak *s, uint32_t w)
{
    kcc_status st = KCC_OK;
    for (uint32_t p = 0; st == KCC_OK && p < s->pad_count; ++p) {
        if (s->wave[p] != w)
            continue;
        float feet[3];
        jumper_feet(s->g, &s->g->triggers[s->pads[p]], feet);
        st = add_role(s, feet, false, (soak_role){UINT32_MAX, s->pads[p], false});
        s->r.pads += st == KCC_OK;
    }
    return st;
}

/* A jumper's flight: its apex's horizontal distance from the target, or its arc cut by a teleporter. */
static void check_jumper(soak *s, const game_character *c, soak_role *role)
{
    const float width = 2.0f * s->g->desc.character.half_extents[0];
    if (c->launches > 0 && !c->in_flight && isnan(c->apex_distance)) {
        role->done = true;
        s->r.pads_teleported++;
    } else if (!isnan(c->apex_distance)) {
        role->done = true;
        s->r.pads_launched++;
        s->r.pads_on_target += c->apex_distance <= width;
        s->r.pads_blocked += c->flight_blocked;
        s->r.pads_clear_missed += !c->flight_blocked && c->apex_distance > width;
        if (c->apex_distance > s->r.worst_pad_distance) {
            s->r.worst_pad_distance = c->apex_distance;
            s->r.worst_pad_entity = s->g->triggers[role->trigger].entity;
        }
    }
}

/* One character after a step: its depth in the static level, and whether its role is done. */
static void check_character(soak *s, uint32_t c)
{
    game *g = s->g;
    soak_role *role = &s->roles[c];
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
    s->r.max_penetration = fmaxf(s->r.max_penetration, pen);
    s->r.over_tolerance += pen > KCC_PENETRATION_TOLERANCE;
    s->r.character_steps++;
    if (role->done)
        return;
    if (role->mover != UINT32_MAX) {
        const game_mover *m = &g->movers[role->mover];
        float top = m->pos2[1] + m->bounds[1][1], feet = st.position[1] - d->half_extents[1];
        role->done = m->state == GAME_AT_POS2 && st.ground_body == m->body &&
                     fabsf(feet - top) <= GAME_LIFT_TOLERANCE;
        s->r.lifts_ridden += role->done;
        s->riders_left -= role->done;
    } else if (role->trigger != UINT32_MAX) {
        check_jumper(s, &g->characters[c], role);
    }
}

/* Jumpers leave once done (or when their wave's time is up): true when none is left. */
static bool retire_jumpers(soak *s, bool time_up)
{
    bool left = false;
    for (uint32_t c = s->g->character_count; c-- > 0;) {
        if (s->roles[c].trigger == UINT32_MAX)
            continue;
        if (!s->roles[c].done && !time_up) {
            left = true;
            continue;
        }
        game_remove_character(s->g, c);
        s->roles[c] = s->roles[s->g->character_count];
    }
    return !left;
}

static kcc_status soak_run(soak *s, const q3bsp_map *map, uint32_t steps, uint32_t bots)
{
    kcc_status st = place_riders_and_bots(s, map, bots);
    const uint32_t waves = plan_pads(s);
    s->r.pad_waves = waves;
    uint32_t wave = 0, wave_step = 0;
    if (st == KCC_OK && waves > 0)
        st = start_wave(s, 0);
    uint32_t i = 0;
    for (; st == KCC_OK && (i < steps || wave < waves || (s->riders_left > 0 && i < RIDE_STEPS)); ++i) {
        game_step(s->g, DEMO_DT);
        for (uint32_t c = 0; c < s->g->character_count; ++c)
            check_character(s, c);
        if (wave < waves && retire_jumpers(s, ++wave_step >= WAVE_STEPS)) {
            wave_step = 0;
            if (++wave < waves)
                st = start_wave(s, wave);
        }
    }
    s->r.steps = i;
    for (uint32_t c = 0; c < s->g->character_count; ++c)
        if (s->roles[c].mover != UINT32_MAX && !s->roles[c].done)
            s->r.worst_lift_entity = s->g->movers[s->roles[c].mover].entity;
    s->r.stats = s->g->stats;
    return st;
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
    soak s;
    memset(&s, 0, sizeof(s));
    s.r.worst_pad_entity = UINT32_MAX;
    s.r.worst_lift_entity = UINT32_MAX;
    kcc_status st = game_create(map, &d, &s.g, err, err_size);
    if (st != KCC_OK)
        return st;
    const uint32_t n = d.character_capacity;
    s.roles = calloc(n, sizeof(soak_role));
    s.pads = calloc(n, sizeof(uint32_t));
    s.wave = calloc(n, sizeof(uint32_t));
    s.flight = calloc(n, sizeof(*s.flight));
    st = s.roles && s.pads && s.wave && s.flight ? soak_run(&s, map, steps, bots) : KCC_ERR_OUT_OF_MEMORY;
    if (st != KCC_OK)
        snprintf(err, err_size, "placing the characters: %s", kcc_status_str(st));
    free(s.roles);
    free(s.pads);
    free(s.wave);
    free(s.flight);
    game_destroy(s.g);
    if (st == KCC_OK)
        *out = s.r;
    return st;
}

/* The verdict on one map: its penetrations, falls, lifts and clear flights (docs/demo.md). */
static bool soak_passed(const game_soak_report *r)
{
    return r->over_tolerance == 0 && r->stats.fell == 0 && r->lifts_ridden == r->lifts && r->pads_clear_missed == 0;
}

static int soak_one(const char *path, const char *name, uint32_t steps, uint32_t bots, bool quiet,
                    game_soak_report *total)
{
    char err[512];
    q3bsp_map map;
    kcc_status s = q3bsp_load_map(path, NULL, &map, NULL, err, sizeof(err));
    game_soak_report r;
    if (s == KCC_OK)
        s = game_soak(&map, steps, bots, &r, err, sizeof(err));
    q3bsp_map_free(&map);
    if (s != KCC_OK) {
        fprintf(stderr, "kcc-demo: soak %s: %s (%s)\n", name, err, kcc_status_str(s));
        return DEMO_EXIT_ERROR;
    }
    bool ok = soak_passed(&r);
    if (!quiet || !ok)
        printf("%-16s %s %5u steps, lifts %u/%u ridden, pads %u/%u on target (%u blocked by the level, "
               "%u into teleporters, %u silent, worst apex %.3f m), max penetration %.5f m, %llu over "
               "tolerance, %u fell, %u crushed\n",
               name, ok ? "ok  " : "FAIL", r.steps, r.lifts_ridden, r.lifts, r.pads_on_target, r.pads,
               r.pads_blocked, r.pads_teleported, r.pads - r.pads_launched - r.pads_teleported,
               (double)r.worst_pad_distance, (double)r.max_penetration,
               (unsigned long long)r.over_tolerance, r.stats.fell, r.stats.crushed);
    total->steps += r.steps;
    total->lifts += r.lifts;
    total->lifts_ridden += r.lifts_ridden;
    total->pads += r.pads;
    total->pads_launched += r.pads_launched;
    total->pads_on_target += r.pads_on_target;
    total->pads_blocked += r.pads_blocked;
    total->pads_teleported += r.pads_teleported;
    total->pads_clear_missed += r.pads_clear_missed;
    total->over_tolerance += r.over_tolerance;
    total->character_steps += r.character_steps;
    total->stats.fell += r.stats.fell;
    total->max_penetration = fmaxf(total->max_penetration, r.max_penetration);
    total->worst_pad_distance = fmaxf(total->worst_pad_distance, r.worst_pad_distance);
    return ok ? DEMO_EXIT_OK : DEMO_EXIT_PROBLEM;
}

int game_soak_levels(const char *where, uint32_t steps, uint32_t bots, bool quiet)
{
    game_soak_report total;
    memset(&total, 0, sizeof(total));
    size_t n = strlen(where);
    int rc = DEMO_EXIT_OK, maps = 0;
    if (n > 4 && strcmp(where + n - 4, ".bsp") == 0) {
        rc = soak_one(where, where, steps, bots, quiet, &total);
        maps = 1;
    } else {
        char list[1024], line[256], path[1400];
        snprintf(list, sizeof(list), "%s/levels.txt", where);
        FILE *f = fopen(list, "r");
        if (!f) {
            fprintf(stderr, "kcc-demo: soak: %s: cannot open (run make levels)\n", list);
            return DEMO_EXIT_ERROR;
        }
        while (fgets(line, sizeof(line), f)) {
            line[strcspn(line, "\r\n")] = '\0';
            if (!line[0])
                continue;
            snprintf(path, sizeof(path), "%s/pkg/maps/%s.bsp", where, line);
            int one = soak_one(path, line, steps, bots, quiet, &total);
            rc = one > rc ? one : rc;
            maps++;
        }
        fclose(f);
    }
    printf("soak-movers: %d maps, %u steps, %llu character steps: lifts %u/%u ridden to the top, jump pads "
           "%u/%u on target at the apex (%u blocked by the level, %u into teleporters, %u clear flights "
           "missed; worst %.3f m), max penetration %.5f m (%llu over tolerance), %u fell: %s\n",
           maps, total.steps, (unsigned long long)total.character_steps, total.lifts_ridden, total.lifts,
           total.pads_on_target, total.pads, total.pads_blocked, total.pads_teleported, total.pads_clear_missed,
           (double)total.worst_pad_distance, (double)total.max_penetration,
           (unsigned long long)total.over_tolerance, total.stats.fell,
           rc == DEMO_EXIT_OK ? "passed" : "FAILED");
    return rc;
}
