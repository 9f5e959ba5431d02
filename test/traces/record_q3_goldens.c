/* record_q3_goldens.c: writes the world goldens recorded from the demo's game on imported Quake 3
 * maps (test/traces/q3_*.trace): a lift ride, a door crush and a crowd at a jump pad, each a game of
 * demo/game.c with its movers and triggers live, recorded from its creation (game_desc.record), its
 * characters scripted so that the event happens; a recording without its event fails. The traces
 * name the static level as the import wrote it (LEVELS/MAP.obj) and the movers' and triggers' meshes
 * as OBJ files written into LEVELS/MAP.meshes, each with its content hash, so a changed importer or
 * game replays as a changed level. `make goldens` runs it; `make levels` runs it with --meshes (the
 * meshes alone, which the replay needs). docs/traces.md, "Goldens from the demo".
 *   kcc-record-q3-goldens [--meshes] LEVELS OUTDIR   (LEVELS, OUTDIR relative to the same directory,
 *                                                      or absolute) */
#include "game.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum scene_kind { SCENE_LIFT, SCENE_DOOR, SCENE_PAD } scene_kind;

typedef struct q3_golden {
    const char *name;       /* the trace: OUTDIR/NAME.trace */
    const char *map;        /* LEVELS/pkg/maps/MAP.bsp, imported as LEVELS/MAP.obj */
    const char *what;       /* its comment */
    scene_kind  kind;
    uint32_t    entity;     /* the plat, door or jump pad (trigger_push) entity the scene plays at */
    uint32_t    characters; /* scripted ones (the lift: its rider, then wandering bots) */
    uint32_t    steps;
} q3_golden;

static const q3_golden goldens[] = {
    {"q3_lift_ride", "oa_dm7", "oa_dm7: a rider carried to the top of the plat, 3 bots wandering", SCENE_LIFT,
     UINT32_MAX, 4, 480},
    {"q3_door_crush", "oa_dm1", "oa_dm1: a character stands in a doorway; the door (fired by name, as its "
     "button fires it) closes on it (KCC_MOVE_CRUSHED) and turns back", SCENE_DOOR, 11, 1, 600},
    {"q3_pad_crowd", "czest1tourney", "czest1tourney: 8 characters crowd onto a jump pad and are launched",
     SCENE_PAD, 16, 8, 600},
};

#define RING_RADIUS 3.0f   /* m: where the crowd starts around its jump pad */
#define DOOR_OFFSET 1.5f   /* m: where the door's walker starts, off the door's face */

typedef struct scene {
    game    *g;
    uint32_t mover;        /* the lift or the door (index in g->movers) */
    uint32_t trigger;      /* the jump pad (index in g->triggers) */
    float    goal[3];      /* where the scripted characters walk to (feet, m) */
    uint32_t scripted;     /* the characters (indices 0..scripted-1) that walk to goal */
    bool     rode;         /* the lift's rider stood on its top at pos2 */
    uint32_t crushed_steps;
} scene;

/* Solid floor within 1.5 m below feet (a start the level holds): the first body down from 0.5 m
 * above them that is no trigger (triggers are sensor boxes the ray meets too). */
static bool floor_below(const game *g, const float feet[3])
{
    vec3 from = {feet[0], feet[1] + 0.5f, feet[2]}, down = {0.0f, -1.0f, 0.0f};
    float left = 2.0f;
    kcc_world_hit hit;
    for (int i = 0; i < 8 && kcc_world_raycast(g->world, from, down, left, &hit); ++i) {
        if (game_trigger_of_body(g, hit.body) == UINT32_MAX)
            return true;
        from[1] -= hit.t + 0.001f;
        left -= hit.t + 0.001f;
    }
    return false;
}

static uint32_t find_mover(const game *g, game_mover_kind kind, uint32_t entity)
{
    for (uint32_t m = 0; m < g->mover_count; ++m) {
        const game_mover *mv = &g->movers[m];
        if (mv->kind == kind && (entity == UINT32_MAX ? !mv->crusher : mv->entity == entity))
            return m;
    }
    return UINT32_MAX;
}

static kcc_status setup_lift(scene *s, const q3bsp_map *map, const q3_golden *q)
{
    game *g = s->g;
    s->mover = find_mover(g, GAME_MOVER_PLAT, q->entity);
    if (s->mover == UINT32_MAX)
        return KCC_ERR_NOT_FOUND;
    float feet[3];
    game_plat_rider_feet(map, &g->movers[s->mover], feet);
    kcc_status st = game_add_character(g, feet, false, NULL);
    for (uint32_t b = 1; st == KCC_OK && b < q->characters && g->spawn_count; ++b)
        st = game_add_character(g, g->spawns + 3 * (b % g->spawn_count), true, NULL);
    return st;
}

/* The door's walker starts off the middle of the closed door's face (its thinner side), on a floor,
 * and walks to the middle of the doorway as the door opens (fired as its button fires it: a door
 * with a trigger of its own stays open while someone is in it, and crushes no one). */
static kcc_status setup_door(scene *s, const q3_golden *q)
{
    game *g = s->g;
    s->mover = find_mover(g, GAME_MOVER_DOOR, q->entity);
    if (s->mover == UINT32_MAX)
        return KCC_ERR_NOT_FOUND;
    const game_mover *m = &g->movers[s->mover];
    float lo[3], hi[3];
    for (int k = 0; k < 3; ++k) {
        lo[k] = m->pos1[k] + m->bounds[0][k];
        hi[k] = m->pos1[k] + m->bounds[1][k];
        s->goal[k] = 0.5f * (lo[k] + hi[k]);
    }
    s->goal[1] = lo[1];
    const int thin = hi[0] - lo[0] < hi[2] - lo[2] ? 0 : 2;
    for (int side = -1; side <= 1; side += 2) {
        float feet[3] = {s->goal[0], s->goal[1], s->goal[2]};
        feet[thin] += (float)side * (0.5f * (hi[thin] - lo[thin]) + DOOR_OFFSET);
        if (floor_below(g, feet)) {
            s->scripted = q->characters;
            game_mover_use(g, s->mover);   /* what the door's button does */
            return game_add_character(g, feet, false, NULL);
        }
    }
    return KCC_ERR_NOT_FOUND;
}

static uint32_t find_pad(const game *g, uint32_t entity)
{
    for (uint32_t t = 0; t < g->trigger_count; ++t) {
        const game_trigger *tr = &g->triggers[t];
        if (tr->kind == GAME_TRIGGER_PUSH && tr->has_target && (entity == UINT32_MAX || tr->entity == entity))
            return t;
    }
    return UINT32_MAX;
}

/* The crowd starts on a ring around the pad, where the level has a floor, and walks onto it. */
static kcc_status setup_pad(scene *s, const q3_golden *q)
{
    game *g = s->g;
    s->trigger = find_pad(g, q->entity);
    if (s->trigger == UINT32_MAX)
        return KCC_ERR_NOT_FOUND;
    const game_trigger *t = &g->triggers[s->trigger];
    for (int k = 0; k < 3; ++k)
        s->goal[k] = 0.5f * (t->box[0][k] + t->box[1][k]);
    s->goal[1] = t->box[0][1];
    kcc_status st = KCC_OK;
    for (uint32_t i = 0; st == KCC_OK && i < 32 && s->scripted < q->characters; ++i) {
        /* 8 headings 45 degrees apart, then the 8 between them, then both again further out */
        float a = ((float)(i % 8) + 0.5f * (float)((i / 8) % 2)) * 0.78539816f;
        float r = RING_RADIUS * (i < 16 ? 1.0f : 1.5f);
        float feet[3] = {s->goal[0] + r * cosf(a), s->goal[1], s->goal[2] + r * sinf(a)};
        if (!floor_below(g, feet))
            continue;
        st = game_add_character(g, feet, false, NULL);
        s->scripted += st == KCC_OK;
    }
    return st == KCC_OK && s->scripted < q->characters ? KCC_ERR_NOT_FOUND : st;
}

/* The scripted characters walk to the goal until they are there or launched, then stand. */
static void script(scene *s)
{
    for (uint32_t c = 0; c < s->scripted && c < s->g->character_count; ++c) {
        game_character *ch = &s->g->characters[c];
        kcc_character_state st;
        if (!game_character_state(s->g, c, &st, NULL))
            continue;
        float dx = s->goal[0] - st.position[0], dz = s->goal[2] - st.position[2];
        float dist = sqrtf(dx * dx + dz * dz);
        bool walk = dist > 0.05f && ch->launches == 0;
        float speed = fminf(s->g->desc.walk_speed, dist / DEMO_DT);
        ch->wish[0] = walk ? speed * dx / dist : 0.0f;
        ch->wish[2] = walk ? speed * dz / dist : 0.0f;
    }
}

/* After a step: the events the scene is for. */
static void observe(scene *s)
{
    game *g = s->g;
    if (s->mover != UINT32_MAX && g->movers[s->mover].kind == GAME_MOVER_PLAT) {
        const game_mover *m = &g->movers[s->mover];
        kcc_character_state st;
        const float top = m->pos2[1] + m->bounds[1][1];
        s->rode = s->rode || (game_character_state(g, 0, &st, NULL) && m->state == GAME_AT_POS2 &&
                              st.ground_body == m->body &&
                              fabsf(st.position[1] - g->desc.character.half_extents[1] - top) <= GAME_LIFT_TOLERANCE);
    }
    for (uint32_t c = 0; c < g->character_count; ++c) {
        kcc_move_result r;
        s->crushed_steps += game_character_state(g, c, NULL, &r) && (r.flags & KCC_MOVE_CRUSHED);
    }
}

/* What the recording must hold; NULL when it does. */
static const char *missing_event(const scene *s, const q3_golden *q)
{
    uint32_t launched = 0;
    for (uint32_t c = 0; c < s->g->character_count; ++c)
        launched += s->g->characters[c].launches > 0;
    switch (q->kind) {
    case SCENE_LIFT:
        return s->rode ? NULL : "the rider never stood on the plat's top";
    case SCENE_DOOR:
        return s->crushed_steps > 0 && s->g->stats.reversed > 0 ? NULL : "the door crushed no one";
    default:
        return launched >= q->characters / 2 ? NULL : "fewer than half the crowd was launched";
    }
}

static kcc_status play(scene *s, const q3bsp_map *map, const q3_golden *q, bool meshes_only)
{
    kcc_status st = q->kind == SCENE_LIFT ? setup_lift(s, map, q)
                    : q->kind == SCENE_DOOR ? setup_door(s, q)
                                            : setup_pad(s, q);
    for (uint32_t i = 0; st == KCC_OK && !meshes_only && i < q->steps; ++i) {
        script(s);
        game_step(s->g, DEMO_DT);
        observe(s);
    }
    return st;
}

/* "../" for every part of dir (relative paths), then path: how a file in dir names path. */
static void relative_to(const char *dir, const char *path, char *out, size_t size)
{
    size_t n = 0;
    out[0] = '\0';
    if (path[0] != '/' && dir[0] != '/')
        for (const char *p = dir; *p; ++p)
            if (*p != '/' && (p == dir || p[-1] == '/') && !(p[0] == '.' && (p[1] == '/' || !p[1])))
                n += (size_t)snprintf(out + n, n < size ? size - n : 0, "../");
    snprintf(out + (n < size ? n : size - 1), n < size ? size - n : 1, "%s", path);
}

static int record(const char *levels, const char *outdir, const q3_golden *q, bool meshes_only)
{
    char bsp[1024], trace[1024], level[1200], mesh_dir[1024], rel[1024], mesh_name[1200], err[512];
    snprintf(bsp, sizeof(bsp), "%s/pkg/maps/%s.bsp", levels, q->map);
    snprintf(trace, sizeof(trace), "%s/%s.trace", outdir, q->name);
    snprintf(mesh_dir, sizeof(mesh_dir), "%s/%s.meshes", levels, q->map);
    relative_to(outdir, levels, rel, sizeof(rel));
    snprintf(level, sizeof(level), "obj %s/%s.obj", rel, q->map);
    snprintf(mesh_name, sizeof(mesh_name), "%s/%s.meshes", rel, q->map);
    q3bsp_map map;
    kcc_status st = q3bsp_load_map(bsp, NULL, &map, NULL, err, sizeof(err));
    if (st != KCC_OK) {
        fprintf(stderr, "%s: %s (%s)\n", q->name, err, kcc_status_str(st));
        return 2;
    }
    FILE *f = meshes_only ? tmpfile() : fopen(trace, "w");
    game_record rec = {.file = f, .level = level, .mesh_dir = mesh_dir, .mesh_dir_name = mesh_name};
    game_desc d = game_default_desc();
    d.character_capacity = 16;
    d.record = &rec;
    scene s = {.mover = UINT32_MAX, .trigger = UINT32_MAX};
    st = f ? game_create(&map, &d, &s.g, err, sizeof(err)) : KCC_ERR_IO;
    if (st == KCC_OK) {
        kcc_trace_comment(&rec.writer, q->what);
        st = play(&s, &map, q, meshes_only);
        kcc_status end = game_record_end(s.g);
        st = st == KCC_OK ? end : st;
    }
    const char *missing = st == KCC_OK && !meshes_only ? missing_event(&s, q) : NULL;
    uint32_t characters = s.g ? s.g->character_count : 0;
    game_stats stats = s.g ? s.g->stats : (game_stats){0};
    game_destroy(s.g);
    q3bsp_map_free(&map);
    if (f && fclose(f) != 0 && st == KCC_OK)
        st = KCC_ERR_IO;
    if (st != KCC_OK || missing) {
        fprintf(stderr, "%s: %s\n", meshes_only ? mesh_dir : trace,
                missing ? missing : kcc_status_str(st));
        return missing ? 1 : 2;
    }
    if (meshes_only)
        printf("%s: %u meshes\n", mesh_dir, (unsigned)rec.meshes);
    else
        printf("%s: %u steps, %u characters on %s: %s, %u crushed character steps (%u reversals), %u launches\n",
               trace, (unsigned)q->steps, (unsigned)characters, q->map, s.rode ? "a ride to the top" : "no ride",
               (unsigned)s.crushed_steps, (unsigned)stats.reversed, (unsigned)stats.launches);
    return 0;
}

int main(int argc, char **argv)
{
    bool meshes_only = argc > 1 && strcmp(argv[1], "--meshes") == 0;
    if (argc != 3 + meshes_only) {
        fprintf(stderr, "usage: kcc-record-q3-goldens [--meshes] LEVELS OUTDIR\n");
        return 2;
    }
    int code = 0;
    for (size_t i = 0; i < sizeof goldens / sizeof goldens[0]; ++i) {
        int c = record(argv[1 + meshes_only], argv[2 + meshes_only], &goldens[i], meshes_only);
        code = c > code ? c : code;
    }
    return code;
}
