/* test_movers.c: the demo's game code (demo/game*.c) on maps built here by hand: the entity parser on a
 * hand-written entity string, the .movers sidecar, a plat carrying its rider to the top (and staying while stood on), a
 * jump pad's launch against numbers worked out by hand, a door squeezing a character against a wall
 * (reversed, or killing it), the movers soak's checks on such a map, and the game recorded into a world
 * trace (from its creation, or restarted recorded) that replays without the game code. */
#define _POSIX_C_SOURCE 200809L   /* mkstemp for the sidecar's scratch file */
#include "test.h"
#include "../demo/game.h"

#include <unistd.h>

/* ------------------------------------------------------------------ maps built by hand */

/* Appends an axis-aligned box (8 corners, 12 outward triangles) to positions/indices. */
static void add_box(float **pos, uint32_t *nv, uint32_t **idx, uint32_t *nt, const float lo[3], const float hi[3])
{
    static const uint32_t quads[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4},
                                         {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
    *pos = realloc(*pos, sizeof(float) * 3 * (*nv + 8));
    *idx = realloc(*idx, sizeof(uint32_t) * 3 * (*nt + 12));
    assert_non_null(*pos);
    assert_non_null(*idx);
    for (uint32_t i = 0; i < 8; ++i)
        for (int k = 0; k < 3; ++k)
            (*pos)[3 * (*nv + i) + k] = ((i >> k) & 1) ? hi[k] : lo[k];
    for (int f = 0; f < 6; ++f) {
        const uint32_t *q = quads[f];
        uint32_t t[6] = {q[0], q[1], q[2], q[0], q[2], q[3]};
        for (int k = 0; k < 6; ++k)
            (*idx)[3 * *nt + k] = *nv + t[k];
        *nt += 2;
    }
    *nv += 8;
}

/* A map: the world's boxes (with one spawn at `spawn`), brush models of one box each (metres, in the
 * model's own frame) and an entity string. */
static void make_map(q3bsp_map *map, const float (*world)[2][3], int world_boxes, const float spawn[3],
                     const float (*models)[2][3], int model_count, const char *entities)
{
    memset(map, 0, sizeof(*map));
    for (int b = 0; b < world_boxes; ++b)
        add_box(&map->world.positions, &map->world.vertex_count, &map->world.indices, &map->world.triangle_count,
                world[b][0], world[b][1]);
    map->world.spawns = malloc(sizeof(float) * 3);
    assert_non_null(map->world.spawns);
    memcpy(map->world.spawns, spawn, sizeof(float) * 3);
    map->world.spawn_count = 1;
    map->model_count = (uint32_t)model_count + 1;
    map->models = calloc(map->model_count, sizeof(q3bsp_model));
    assert_non_null(map->models);
    for (int m = 0; m < model_count; ++m) {
        q3bsp_model *md = &map->models[m + 1];
        add_box(&md->positions, &md->vertex_count, &md->indices, &md->triangle_count, models[m][0], models[m][1]);
        memcpy(md->bounds, models[m], sizeof(md->bounds));
    }
    assert_int_equal(q3bsp_parse_entities(entities, strlen(entities), &map->entities, NULL, 0), KCC_OK);
}

static float feet_of(const game *g, uint32_t c)
{
    kcc_character_state st;
    assert_true(game_character_state(g, c, &st, NULL));
    return st.position[1] - g->desc.character.half_extents[1];
}

/* ------------------------------------------------------------------ entities */

/* Two blocks written as a map editor writes them: keys in order, values with spaces, a NUL after the
 * last brace; then malformed strings. */
static void movers_entity_string_parses_every_key(void **state)
{
    (void)state;
    static const char text[] = "{\n\"classname\" \"worldspawn\"\n\"message\" \"two words\"\n}\n"
                               "{\n\"origin\" \"32 -16 40\"\n\"classname\" \"func_door\"\n\"model\" \"*2\"\n"
                               "\"speed\" \"x\"\n\"targetname\" \"t1\"\n\"speed\" \"200\"\n}\n";
    q3bsp_entities e;
    assert_int_equal(q3bsp_parse_entities(text, sizeof(text), &e, NULL, 0), KCC_OK);
    assert_int_equal(e.count, 2);
    assert_int_equal(e.pair_count, 8);
    assert_string_equal(q3bsp_entity_class(&e, 0), "worldspawn");
    assert_string_equal(q3bsp_entity_value(&e, 0, "message"), "two words");
    assert_string_equal(q3bsp_entity_class(&e, 1), "func_door");
    assert_string_equal(q3bsp_entity_value(&e, 1, "model"), "*2");
    assert_null(q3bsp_entity_value(&e, 1, "message"));
    assert_null(q3bsp_entity_value(&e, 2, "classname"));
    double o[3];
    assert_true(q3bsp_entity_vec3(&e, 1, "origin", o));
    assert_true(o[0] == 32.0 && o[1] == -16.0 && o[2] == 40.0);
    /* The first "speed" is not a number: the fallback, as a missing key gets. */
    assert_true(q3bsp_entity_float(&e, 1, "speed", 7.0) == 7.0);
    assert_true(q3bsp_entity_float(&e, 1, "lip", 8.0) == 8.0);
    assert_int_equal(q3bsp_entity_find(&e, "t1", NULL), 1);
    assert_int_equal(q3bsp_entity_find(&e, "t1", "func_plat"), UINT32_MAX);
    float m[3];
    q3bsp_to_metres(o, m);
    assert_true(m[0] == 1.0f && m[1] == 1.25f && m[2] == 0.5f);
    q3bsp_entities_free(&e);

    static const char *const bad[] = {"{ \"a\" }", "{ \"a\" \"b\" ", "\"a\" \"b\"", "{ \"a\" \"b }", "{ { }"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        q3bsp_entities untouched;
        memset(&untouched, 0xab, sizeof(untouched));
        char err[128] = "";
        assert_int_equal(q3bsp_parse_entities(bad[i], strlen(bad[i]), &untouched, err, sizeof(err)), KCC_ERR_PARSE);
        assert_non_null(strstr(err, "entities:"));
        assert_true(untouched.count == 0xabababab);
    }
    assert_int_equal(q3bsp_parse_entities(NULL, 0, &e, NULL, 0), KCC_ERR_NULL_ARGUMENT);
}

/* The sidecar of a map with a door and a target point: the door's entity line with its keys as
 * written, the point's, no line for the worldspawn, and the door's model with its bounds and its
 * 8 corners and 12 triangles. */
static void movers_sidecar_lists_entities_and_models(void **state)
{
    (void)state;
    static const float world[1][2][3] = {{{-10, -1, -10}, {20, 0, 10}}};
    static const float models[1][2][3] = {{{2, 0, -2}, {4, 2.5f, 2}}};
    q3bsp_map map;
    make_map(&map, world, 1, (const float[3]){0, 0, 0}, models, 1,
             "{ \"classname\" \"worldspawn\" }\n"
             "{ \"classname\" \"func_door\" \"model\" \"*1\" \"angle\" \"-1\" }\n"
             "{ \"classname\" \"target_position\" \"targetname\" \"p\" \"origin\" \"1 2 3\" }");
    char path[] = "/tmp/kcc_movers_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(q3bsp_write_movers(&map, path, NULL, 0), KCC_OK);
    q3bsp_map_free(&map);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[256];
    int entities = 0, v = 0, t = 0, models_seen = 0;
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "entity ", 7) == 0) {
            entities++;
            assert_true(strcmp(line, "entity 1 \"classname\" \"func_door\" \"model\" \"*1\" \"angle\" \"-1\"\n") == 0 ||
                        strcmp(line, "entity 2 \"classname\" \"target_position\" \"targetname\" \"p\" \"origin\" "
                                     "\"1 2 3\"\n") == 0);
        } else if (strncmp(line, "model ", 6) == 0) {
            models_seen++;
            assert_string_equal(line, "model 1 bounds 2 0 -2 4 2.5 2 vertices 8 triangles 12\n");
        }
        v += line[0] == 'v' && line[1] == ' ';
        t += line[0] == 'f' && line[1] == ' ';
    }
    fclose(f);
    remove(path);
    assert_int_equal(entities, 2);
    assert_int_equal(models_seen, 1);
    assert_int_equal(v, 8);
    assert_int_equal(t, 12);
    assert_int_equal(q3bsp_write_movers(NULL, path, NULL, 0), KCC_ERR_NULL_ARGUMENT);
}

/* ------------------------------------------------------------------ plat */

/* A 2 x 2 m plat whose top rests at y = 0 ("height" 128 units = 4 m below its origin at y = 4), speed
 * 64 units/s = 2 m/s: a rider on it starts it (the plat's own trigger), rides 4 m in 2 s (120 steps,
 * grounded on the plat every step from the first), and stands at y = 4 within 1 cm; the plat stays up while stood on
 * (Touch_Plat), and once the rider is gone it waits 1 s and comes down in 2 s. */
static void movers_plat_carries_its_rider_to_the_top(void **state)
{
    (void)state;
    static const float world[1][2][3] = {{{3, -1, -10}, {20, 0, 10}}};
    static const float models[1][2][3] = {{{-1, -0.25f, -1}, {1, 0, 1}}};
    q3bsp_map map;
    make_map(&map, world, 1, (const float[3]){10, 0, 0}, models, 1,
             "{ \"classname\" \"worldspawn\" }\n"
             "{ \"classname\" \"func_plat\" \"model\" \"*1\" \"origin\" \"0 0 128\" \"height\" \"128\" \"speed\" \"64\" }");
    game *g = NULL;
    assert_int_equal(game_create(&map, NULL, &g, NULL, 0), KCC_OK);
    q3bsp_map_free(&map);
    assert_int_equal(g->mover_count, 1);
    const game_mover *plat = &g->movers[0];
    assert_true(plat->pos1[1] == 0.0f && plat->pos2[1] == 4.0f);
    uint32_t rider;
    assert_int_equal(game_add_character(g, (const float[3]){0, 0, 0}, false, &rider), KCC_OK);
    uint32_t top_step = 0;
    for (uint32_t i = 1; i <= 200 && !top_step; ++i) {
        game_step(g, DEMO_DT);
        kcc_character_state st;
        assert_true(game_character_state(g, rider, &st, NULL));
        if ((!st.on_ground || st.ground_body != plat->body))
            fail_msg("step %u: on_ground %d ground body %u, the plat is %u (state %d fraction %g)", i, st.on_ground,
                     st.ground_body, plat->body, plat->state, (double)plat->fraction);
        if (plat->state == GAME_AT_POS2)
            top_step = i;
    }
    /* The first step reports the rider inside the plat's trigger; the plat climbs from the second: 2 s
     * (120 steps) later it is up. */
    assert_in_range(top_step, 120, 122);
    assert_true(fabsf(feet_of(g, rider) - 4.0f) <= GAME_LIFT_TOLERANCE);
    for (int i = 0; i < 300; ++i)
        game_step(g, DEMO_DT);
    assert_int_equal(plat->state, GAME_AT_POS2);
    game_remove_character(g, rider);
    uint32_t down_step = 0;
    for (uint32_t i = 1; i <= 400 && !down_step; ++i) {
        game_step(g, DEMO_DT);
        if (plat->state == GAME_AT_POS1)
            down_step = i;
    }
    /* At most 1 s of wait left, then 2 s down. */
    assert_in_range(down_step, 120, 182);
    game_destroy(g);
}

/* ------------------------------------------------------------------ jump pad */

/* game_aim_at by hand: from (0, 1, 0) to (6, 6, 0) with gravity 10 m/s^2 and 0.1 s steps: the climb of
 * 5 m takes sqrt(2 * 5 / 10) = 1 s = 10 steps; horizontal 6 m / 1 s = 6 m/s; vertical 5 / 1 + 10 * 0.1 *
 * 11 / 2 = 10.5 m/s. Stepped by hand (v.y -= 1, then y += v.y / 10) the point climbs
 * 0.1 * (105 - 55) = 5 m in 10 steps, where v.y is 0.5, and turns at the 11th (v.y -0.5). */
static void movers_jump_pad_aims_at_a_hand_computed_apex(void **state)
{
    (void)state;
    float v[3];
    assert_true(game_aim_at((const float[3]){0, 1, 0}, (const float[3]){6, 6, 0}, 10.0f, 0.1f, v));
    assert_float_equal(v[0], 6.0f, 1e-5f);
    assert_float_equal(v[1], 10.5f, 1e-5f);
    assert_float_equal(v[2], 0.0f, 1e-6f);
    double x = 0.0, y = 1.0, vy = v[1];
    int steps = 0;
    for (vy -= 1.0; vy > 0.0; vy -= 1.0, ++steps) {
        x += (double)v[0] * 0.1;
        y += vy * 0.1;
    }
    assert_int_equal(steps, 10);
    assert_float_equal(x, 6.0, 1e-5);
    assert_float_equal(y, 6.0, 1e-5);
    assert_false(game_aim_at((const float[3]){0, 1, 0}, (const float[3]){6, 1, 0}, 10.0f, 0.1f, v));
    assert_false(game_aim_at((const float[3]){0, 1, 0}, (const float[3]){6, 6, 0}, 10.0f, 0.0f, v));
}

/* A pad at the origin aimed at a target_position 8 m away and 3 m above the floor: a character standing
 * on it flies to an apex within 1 cm of the target, horizontally and vertically (its centre). */
static void movers_jump_pad_launches_onto_its_target(void **state)
{
    (void)state;
    static const float world[1][2][3] = {{{-10, -1, -10}, {20, 0, 10}}};
    static const float models[1][2][3] = {{{-1, 0, -1}, {1, 0.25f, 1}}};
    q3bsp_map map;
    /* target (256, 0, 96) units = (8, 3, 0) m. */
    make_map(&map, world, 1, (const float[3]){-5, 0, 0}, models, 1,
             "{ \"classname\" \"worldspawn\" }\n"
             "{ \"classname\" \"trigger_push\" \"model\" \"*1\" \"target\" \"pad1\" }\n"
             "{ \"classname\" \"target_position\" \"targetname\" \"pad1\" \"origin\" \"256 0 96\" }");
    game *g = NULL;
    assert_int_equal(game_create(&map, NULL, &g, NULL, 0), KCC_OK);
    q3bsp_map_free(&map);
    assert_int_equal(g->trigger_count, 1);
    assert_true(g->triggers[0].has_target);
    uint32_t c;
    assert_int_equal(game_add_character(g, (const float[3]){0, 0, 0}, false, &c), KCC_OK);
    for (int i = 0; i < 180 && isnan(g->characters[c].apex_distance); ++i)
        game_step(g, DEMO_DT);
    assert_int_equal(g->characters[c].launches, 1);
    assert_false(g->characters[c].flight_blocked);
    assert_true(g->characters[c].apex_distance <= 0.01f);
    assert_float_equal(g->characters[c].apex[0], 8.0f, 0.01f);
    assert_float_equal(g->characters[c].apex[1], 3.0f, 0.01f);
    assert_float_equal(g->characters[c].apex[2], 0.0f, 0.01f);
    game_destroy(g);
}

/* ------------------------------------------------------------------ doors */

/* A door 2 m thick, closed against a wall at x = 4 (its brushes at x 2..4: no origin, Quake 3's doors
 * sit where they were built), opening along -x ("angle" 180) by 2 m less the 8-unit lip = 1.75 m at
 * 2 m/s, fired by name (no trigger of its own), back after 1 s. A character waits between the open door
 * and the wall (x 3.03 .. 3.97); the closing door pushes it into the wall. */
static void door_map(q3bsp_map *map)
{
    static const float world[2][2][3] = {{{-10, -1, -10}, {20, 0, 10}}, {{4, 0, -10}, {5, 3, 10}}};
    static const float models[1][2][3] = {{{2, 0, -2}, {4, 2.5f, 2}}};
    make_map(map, world, 2, (const float[3]){10, 0, 0}, models, 1,
             "{ \"classname\" \"worldspawn\" }\n"
             "{ \"classname\" \"func_door\" \"model\" \"*1\" \"angle\" \"180\" \"speed\" \"64\" \"wait\" \"1\" "
             "\"targetname\" \"d1\" }");
}

static game *door_scene_recorded(game_crush_policy crush, game_record *record, uint32_t *out_character)
{
    q3bsp_map map;
    door_map(&map);
    game_desc d = game_default_desc();
    d.crush = crush;
    d.record = record;
    game *g = NULL;
    assert_int_equal(game_create(&map, &d, &g, NULL, 0), KCC_OK);
    q3bsp_map_free(&map);
    assert_int_equal(g->trigger_count, 0);
    assert_float_equal(g->movers[0].pos2[0], -1.75f, 1e-6f);
    game_fire_targets(g, "d1");
    for (int i = 0; i < 60; ++i)
        game_step(g, DEMO_DT);
    assert_int_equal(g->movers[0].state, GAME_AT_POS2);
    assert_int_equal(game_add_character(g, (const float[3]){3.5f, 0, 0}, false, out_character), KCC_OK);
    return g;
}

static game *door_scene(game_crush_policy crush, uint32_t *out_character)
{
    return door_scene_recorded(crush, NULL, out_character);
}

/* The character is crushed; the door turns back (Blocked_Door) every time, so it never closes; the
 * character never enters the wall beyond the tolerance. */
static void movers_door_reverses_when_blocked(void **state)
{
    (void)state;
    uint32_t c;
    game *g = door_scene(GAME_CRUSH_REVERSE, &c);
    float min_fraction = 1.0f;
    for (int i = 0; i < 360; ++i) {
        game_step(g, DEMO_DT);
        min_fraction = fminf(min_fraction, g->movers[0].fraction);
        kcc_character_state st;
        assert_true(game_character_state(g, c, &st, NULL));
        assert_true(st.position[0] + g->desc.character.half_extents[0] <= 4.0f + KCC_PENETRATION_TOLERANCE);
    }
    assert_true(g->stats.crushed >= 1);
    assert_true(g->stats.reversed >= 1);
    assert_int_equal(g->stats.killed, 0);
    assert_true(min_fraction > 0.0f);
    game_destroy(g);
}

/* The other policy: the crushed character dies (respawns at the spawn point, x = 10) and the door
 * closes. */
static void movers_door_kills_when_the_policy_says_so(void **state)
{
    (void)state;
    uint32_t c;
    game *g = door_scene(GAME_CRUSH_KILL, &c);
    bool closed = false;
    for (int i = 0; i < 360 && !closed; ++i) {
        game_step(g, DEMO_DT);
        closed = g->movers[0].state == GAME_AT_POS1;
    }
    assert_true(closed);
    assert_true(g->stats.killed >= 1);
    assert_int_equal(g->stats.reversed, 0);
    assert_int_equal(g->characters[c].deaths, g->stats.killed);
    kcc_character_state st;
    assert_true(game_character_state(g, c, &st, NULL));
    assert_float_equal(st.position[0], 10.0f, 1e-4f);
    game_destroy(g);
}

/* ------------------------------------------------------------------ the soak */

/* The soak on a map with a plat and a pad: the lift ridden, the pad on target, nothing over the
 * tolerance. Then the same pad aimed into a low ceiling: its flight is blocked, reported as such. */
static void movers_soak_checks_lifts_and_pads(void **state)
{
    (void)state;
    static const float world[2][2][3] = {{{-10, -1, -10}, {30, 0, 10}}, {{-10, 0, 6}, {30, 8, 7}}};
    static const float models[2][2][3] = {{{-1, -0.25f, -1}, {1, 0, 1}}, {{4, 0, -1}, {6, 0.25f, 1}}};
    static const char *const ents =
        "{ \"classname\" \"worldspawn\" }\n"
        "{ \"classname\" \"func_plat\" \"model\" \"*1\" \"origin\" \"-160 0 64\" \"height\" \"64\" }\n"
        "{ \"classname\" \"trigger_push\" \"model\" \"*2\" \"target\" \"p\" }\n"
        "{ \"classname\" \"target_position\" \"targetname\" \"p\" \"origin\" \"480 0 128\" }";
    q3bsp_map map;
    make_map(&map, world, 2, (const float[3]){20, 0, 0}, models, 2, ents);
    game_soak_report r;
    assert_int_equal(game_soak(&map, 120, 2, &r, NULL, 0), KCC_OK);
    q3bsp_map_free(&map);
    assert_int_equal(r.lifts, 1);
    assert_int_equal(r.lifts_ridden, 1);
    assert_int_equal(r.pads, 1);
    assert_int_equal(r.pads_on_target, 1);
    assert_int_equal(r.pads_clear_missed, 0);
    assert_int_equal(r.over_tolerance, 0);
    assert_int_equal(r.stats.fell, 0);
    assert_true(r.steps >= 120);

    static const float low[3][2][3] = {{{-10, -1, -10}, {30, 0, 10}}, {{-10, 0, 6}, {30, 8, 7}},
                                      {{6, 2.5f, -10}, {30, 3, 10}}};
    make_map(&map, low, 3, (const float[3]){20, 0, 0}, models, 2, ents);
    assert_int_equal(game_soak(&map, 120, 0, &r, NULL, 0), KCC_OK);
    q3bsp_map_free(&map);
    assert_int_equal(r.pads_blocked, 1);
    assert_int_equal(r.pads_on_target, 0);
    assert_int_equal(r.over_tolerance, 0);
}

/* ------------------------------------------------------------------ recording the game */

typedef struct scratch_dir {
    char dir[64], trace[128], meshes[128];
} scratch_dir;

static void scratch_make(scratch_dir *d)
{
    snprintf(d->dir, sizeof(d->dir), "/tmp/kcc_game_record_XXXXXX");
    assert_non_null(mkdtemp(d->dir));
    snprintf(d->trace, sizeof(d->trace), "%s/game.trace", d->dir);
    snprintf(d->meshes, sizeof(d->meshes), "%s/game.meshes", d->dir);
}

static void scratch_remove(const scratch_dir *d)
{
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d->dir);
    assert_int_equal(system(cmd), 0);
}

static bool file_has(const char *path, const char *text)
{
    FILE *f = fopen(path, "r");
    char line[4096];
    bool found = false;
    while (f && !found && fgets(line, sizeof(line), f))
        found = strstr(line, text) != NULL;
    if (f)
        fclose(f);
    return found;
}

/* The door scene recorded from its creation (game_desc.record): the trace names the static level as
 * level.obj and the door as mesh_2.obj (both written), holds the crushes, and kcc_trace_check_file
 * replays it with no game code (the door's moves are its recorded targets) bit for bit. */
static void movers_a_recorded_game_replays_without_the_game(void **state)
{
    (void)state;
    scratch_dir sd;
    scratch_make(&sd);
    FILE *f = fopen(sd.trace, "w");
    assert_non_null(f);
    game_record rec = {.file = f, .mesh_dir = sd.meshes, .mesh_dir_name = "game.meshes"};
    uint32_t c;
    game *g = door_scene_recorded(GAME_CRUSH_REVERSE, &rec, &c);
    for (int i = 0; i < 240; ++i)
        game_step(g, DEMO_DT);
    assert_true(g->stats.crushed > 0);
    assert_int_equal(game_record_end(g), KCC_OK);
    game_destroy(g);
    assert_int_equal(fclose(f), 0);
    assert_true(file_has(sd.trace, "level 1 obj game.meshes/level.obj"));
    assert_true(file_has(sd.trace, "level 2 obj game.meshes/mesh_2.obj"));
    assert_true(file_has(sd.trace, "CRUSHED"));
    char msg[512];
    if (!kcc_trace_check_file(sd.trace, 0.0f, msg, sizeof(msg)))
        fail_msg("%s", msg);
    scratch_remove(&sd);
}

/* game_restart_recorded (the viewer's F5): the copy has the door where it was (its body placed there),
 * on its way and at the same fraction, and the character where it stood (within the placement's rounding); its recording replays. */
static void movers_a_running_game_restarts_recorded(void **state)
{
    (void)state;
    uint32_t c;
    game *g = door_scene(GAME_CRUSH_REVERSE, &c);
    for (int i = 0; i < 70; ++i)
        game_step(g, DEMO_DT);
    assert_int_equal(g->movers[0].state, GAME_TO_POS1);
    scratch_dir sd;
    scratch_make(&sd);
    FILE *f = fopen(sd.trace, "w");
    assert_non_null(f);
    game_record rec = {.file = f, .mesh_dir = sd.meshes, .mesh_dir_name = "game.meshes"};
    game *copy = NULL;
    q3bsp_map map;
    door_map(&map);
    assert_int_equal(game_restart_recorded(g, &map, &rec, &copy, NULL, 0), KCC_OK);
    q3bsp_map_free(&map);
    assert_int_equal(copy->movers[0].state, g->movers[0].state);
    assert_true(copy->movers[0].fraction == g->movers[0].fraction);
    kcc_transform was, is;
    assert_int_equal(kcc_world_get_body_transform(g->world, g->movers[0].body, &was, NULL), KCC_OK);
    assert_int_equal(kcc_world_get_body_transform(copy->world, copy->movers[0].body, &is, NULL), KCC_OK);
    assert_memory_equal(was.position, is.position, sizeof(was.position));
    assert_int_equal(copy->character_count, g->character_count);
    assert_float_equal(feet_of(copy, c), feet_of(g, c), 1e-5f);
    game_destroy(g);
    for (int i = 0; i < 120; ++i)
        game_step(copy, DEMO_DT);
    assert_int_equal(game_record_end(copy), KCC_OK);
    game_destroy(copy);
    assert_int_equal(fclose(f), 0);
    char msg[512];
    if (!kcc_trace_check_file(sd.trace, 0.0f, msg, sizeof(msg)))
        fail_msg("%s", msg);
    scratch_remove(&sd);
}

int test_group_movers(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(movers_entity_string_parses_every_key),
        cmocka_unit_test(movers_sidecar_lists_entities_and_models),
        cmocka_unit_test(movers_plat_carries_its_rider_to_the_top),
        cmocka_unit_test(movers_jump_pad_aims_at_a_hand_computed_apex),
        cmocka_unit_test(movers_jump_pad_launches_onto_its_target),
        cmocka_unit_test(movers_door_reverses_when_blocked),
        cmocka_unit_test(movers_door_kills_when_the_policy_says_so),
        cmocka_unit_test(movers_soak_checks_lifts_and_pads),
        cmocka_unit_test(movers_a_recorded_game_replays_without_the_game),
        cmocka_unit_test(movers_a_running_game_restarts_recorded),
    };
    return cmocka_run_group_tests_name("movers", tests, NULL, NULL);
}
