/* world_scene.h: the synthetic world the world-trace tests, goldens and bench record: a generated
 * floor (`gen flat size=32`), a lift, a door that crushes a character against the level's wall, a
 * turntable, a sensor, and a crowd walking with gravity, plus a character removed and one added, a
 * sensor placed elsewhere and removed: every call a world trace records. Its box meshes are OBJ
 * files it writes into a directory, named relative to it (`obj wt_lift.obj`), so a trace recorded
 * next to them replays from there. Header-only: included by test/test_world_trace.c,
 * test/traces/record_world_goldens.c and test/bench/bench_world_trace.c. */
#ifndef KCC_TEST_WORLD_SCENE_H
#define KCC_TEST_WORLD_SCENE_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcc.h"

enum { WS_MESHES = 5, WS_MAX_CROWD = 128, WS_MOVERS_MAX = 16 };

typedef struct world_scene {
    kcc_mesh *mesh[WS_MESHES];        ///< floor, lift, door, turntable, sensor
    char      level[WS_MESHES][64];   ///< how a trace names each
    uint64_t  hash[WS_MESHES];
    uint32_t  lift[WS_MOVERS_MAX], lifts, door, turntable, sensor;
    uint32_t  crowd[WS_MAX_CROWD], crowd_count;
    float     heading[WS_MAX_CROWD];  ///< rad
    uint64_t  seed;
} world_scene;

/// Writes the closed box [lo, hi] (12 triangles, faces outward) as an OBJ file.
static inline bool ws_write_box(const char *path, const float lo[3], const float hi[3])
{
    static const int idx[36] = {0, 4, 6, 0, 6, 2, 1, 3, 7, 1, 7, 5, 0, 1, 5, 0, 5, 4,
                                2, 6, 7, 2, 7, 3, 0, 2, 3, 0, 3, 1, 4, 5, 7, 4, 7, 6};
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    for (int c = 0; c < 8; ++c)
        fprintf(f, "v %g %g %g\n", (double)(c & 1 ? hi[0] : lo[0]), (double)(c & 2 ? hi[1] : lo[1]),
                (double)(c & 4 ? hi[2] : lo[2]));
    for (int t = 0; t < 12; ++t)
        fprintf(f, "f %d %d %d\n", idx[3 * t] + 1, idx[3 * t + 1] + 1, idx[3 * t + 2] + 1);
    return fclose(f) == 0;
}

/// Loads (or generates) level `spec` (as a trace names it; OBJ paths relative to dir) into mesh i.
static inline bool ws_load(world_scene *s, int i, const char *dir, const char *spec)
{
    kcc_level level;
    char path[1024], err[256];
    snprintf(s->level[i], sizeof s->level[i], "%s", spec);
    snprintf(path, sizeof path, "%s/%s", dir, spec + 4);
    kcc_status st = strncmp(spec, "gen ", 4) == 0
                        ? kcc_level_generate(spec + 4, &level, err, sizeof err)
                        : kcc_level_load_obj(path, &level, err, sizeof err);
    if (st != KCC_OK)
        return false;
    s->hash[i] = kcc_level_hash(&level);
    st = kcc_level_build_mesh(&level, &s->mesh[i]);
    kcc_level_free(&level);
    return st == KCC_OK;
}

/// Writes the scene's OBJ files into dir and builds its meshes.
static inline bool world_scene_init(world_scene *s, const char *dir, uint64_t seed)
{
    memset(s, 0, sizeof *s);
    s->seed = seed;
    static const char *const names[] = {"wt_lift.obj", "wt_door.obj", "wt_turntable.obj",
                                        "wt_sensor.obj"};
    static const float boxes[4][2][3] = {
        {{-1.5f, -0.25f, -1.5f}, {1.5f, 0.0f, 1.5f}},   // lift: its top at the body's origin
        {{-0.15f, 0.0f, -1.5f}, {0.15f, 3.0f, 1.5f}},   // door slab
        {{-2.0f, -0.3f, -2.0f}, {2.0f, 0.0f, 2.0f}},    // turntable
        {{-1.0f, 0.0f, -1.0f}, {1.0f, 2.0f, 1.0f}},     // sensor volume
    };
    bool ok = ws_load(s, 0, dir, "gen flat size=32");
    for (int i = 0; ok && i < 4; ++i) {
        char path[1024], spec[64];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        snprintf(spec, sizeof spec, "obj %s", names[i]);
        ok = ws_write_box(path, boxes[i][0], boxes[i][1]) && ws_load(s, i + 1, dir, spec);
    }
    return ok;
}

static inline void world_scene_free(world_scene *s)
{
    for (int i = 0; i < WS_MESHES; ++i)
        kcc_mesh_destroy(s->mesh[i]);
}

/// Names the scene's meshes in a world trace being recorded.
static inline kcc_status world_scene_name_levels(const world_scene *s, kcc_trace_writer *w)
{
    kcc_status st = KCC_OK;
    for (int i = 0; st == KCC_OK && i < WS_MESHES; ++i)
        st = kcc_world_trace_level(w, s->mesh[i], s->level[i], s->hash[i]);
    return st;
}

static inline kcc_transform ws_at(float x, float y, float z, float turn)
{
    kcc_transform t = kcc_transform_identity();
    t.position[0] = x, t.position[1] = y, t.position[2] = z;
    t.rotation[1] = sinf(0.5f * turn);
    t.rotation[3] = cosf(0.5f * turn);
    return t;
}

static inline uint32_t ws_body(kcc_world *world, const world_scene *s, int mesh, kcc_body_kind kind,
                               kcc_transform t, bool sensor)
{
    kcc_body_desc d = kcc_body_default_desc();
    d.kind = kind;
    d.transform = t;
    d.sensor = sensor;
    uint32_t id = 0;
    kcc_world_add_body(world, s->mesh[mesh], &d, &id);
    return id;
}

/// Adds the bodies (`lifts` lifts in a row at z = 4 + 4i) and `crowd` characters: one on the first
/// lift, one on the turntable, one between the door and the wall, the rest in a grid.
static inline void world_scene_populate(world_scene *s, kcc_world *world, uint32_t lifts,
                                        uint32_t crowd)
{
    ws_body(world, s, 0, KCC_BODY_STATIC, ws_at(0, 0, 0, 0), false);
    s->lifts = lifts < WS_MOVERS_MAX ? lifts : WS_MOVERS_MAX;
    for (uint32_t i = 0; i < s->lifts; ++i)
        s->lift[i] = ws_body(world, s, 1, KCC_BODY_KINEMATIC, ws_at(6, 0.0f, 4.0f * (float)i - 12, 0),
                             false);
    s->door = ws_body(world, s, 2, KCC_BODY_KINEMATIC, ws_at(-11, 0, 0, 0), false);
    s->turntable = ws_body(world, s, 3, KCC_BODY_KINEMATIC, ws_at(0, 0.3f, 8, 0), false);
    s->sensor = ws_body(world, s, 4, KCC_BODY_STATIC, ws_at(0, 0, -8, 0), true);
    s->crowd_count = crowd < WS_MAX_CROWD ? crowd : WS_MAX_CROWD;
    for (uint32_t i = 0; i < s->crowd_count; ++i) {
        vec3 at = {-10.0f + 2.0f * (float)(i % 10), 0.95f, -12.0f + 2.0f * (float)(i / 10)};
        if (i == 0)
            at[0] = 6, at[1] = 0.95f, at[2] = -12;                 // on the first lift
        else if (i == 1)
            at[0] = 0.5f, at[1] = 1.25f, at[2] = 8.5f;             // on the turntable
        else if (i == 2)
            at[0] = -15.0f, at[1] = 0.95f, at[2] = 0;              // the door's way
        kcc_world_add_character(world, NULL, at, &s->crowd[i]);
        s->heading[i] = (float)i * 2.39996f;
    }
}

/// The scene's step `step` (0-based): the movers' targets, the crowd's displacements (a heading
/// turned every 90 steps by the seed, walking at 2 m/s, gravity as a fixed fall), the odd add,
/// remove and placement, then kcc_world_step.
static inline void world_scene_step(world_scene *s, kcc_world *world, uint32_t step)
{
    const float dt = 1.0f / 60.0f, phase = (float)(step % 240) / 120.0f;
    const float up = phase < 1.0f ? phase : 2.0f - phase;   // 0..1..0 over 240 steps
    for (uint32_t i = 0; i < s->lifts; ++i) {
        kcc_transform t = ws_at(6, 3.0f * up, 4.0f * (float)i - 12, 0);
        kcc_world_move_body(world, s->lift[i], &t);
    }
    kcc_transform door = ws_at(-11.0f - 4.5f * up, 0, 0, 0);
    kcc_world_move_body(world, s->door, &door);
    kcc_transform table = ws_at(0, 0.3f, 8, 0.03f * (float)(step + 1));
    kcc_world_move_body(world, s->turntable, &table);
    for (uint32_t i = 0; i < s->crowd_count; ++i) {
        kcc_character_state st;
        if (kcc_world_get_character(world, s->crowd[i], &st, NULL) != KCC_OK)
            continue;
        if (step % 90 == 0 && i >= 3)
            s->heading[i] += (float)((s->seed * 2654435761u + i * 40503u + step) % 628u) / 100.0f;
        const float speed = i < 3 ? 0.0f : 2.0f * dt;
        vec3 d = {speed * cosf(s->heading[i]), st.on_ground ? -0.02f : -0.15f,
                  speed * sinf(s->heading[i])};
        kcc_world_set_displacement(world, s->crowd[i], d);
    }
    if (step == 100 && s->crowd_count > 4) {   // one leaves, another arrives
        kcc_world_remove_character(world, s->crowd[4]);
        kcc_world_add_character(world, NULL, (vec3){0, 0.95f, -8}, &s->crowd[4]);
    }
    if (step == 150) {
        kcc_transform t = ws_at(0, 0, -4, 0.5f);
        kcc_world_set_body_transform(world, s->sensor, &t);
    }
    if (step == 280) {
        kcc_world_remove_body(world, s->sensor);
        s->sensor = ws_body(world, s, 4, KCC_BODY_STATIC, ws_at(-4, 0, -10, 0), true);
    }
    kcc_world_step(world);
}

#endif
