/* demo/game.c: the demo's game on a kcc_world: the static level, the characters (their velocity,
 * gravity, jumps, the bots' wander), the step's order (movers, characters, kcc_world_step, what it
 * reported), and the crush policies. The movers' and triggers' rules are in game_movers.c. Allocates
 * in game_create only. Tests: test/test_demo.c, the game_* tests. */
#include "game.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define RESPAWN UINT32_MAX       /* game_character.teleport: back to a spawn point */
#define FALL_MARGIN 10.0f        /* m below the level's lowest point: fell out */
#define TELEPORT_SPEED 12.5f     /* m/s: Quake 3's TeleportPlayer leaves at g_speed, 400 units/s */
#define BOT_GOAL_REACHED 1.5f    /* m, horizontal */
#define BOT_GOAL_TIMEOUT 12.0f   /* s before a bot gives a goal up */

game_desc game_default_desc(void)
{
    game_desc d;
    memset(&d, 0, sizeof(d));
    d.character = kcc_character_default_desc();
    /* Quake 3's player: 30 x 30 x 56 units (the box the levels are built for), 18-unit steps, 0.7 normals. */
    d.character.half_extents[0] = 0.47f;
    d.character.half_extents[1] = 0.875f;
    d.character.half_extents[2] = 0.47f;
    d.character.step_height = 0.5625f;
    d.character.max_slope_deg = 45.6f;
    d.gravity = DEMO_GRAVITY;
    d.jump_speed = DEMO_JUMP_SPEED;
    d.walk_speed = DEMO_WALK_SPEED;
    d.crush = GAME_CRUSH_REVERSE;
    d.character_capacity = 64;
    d.seed = 1;
    return d;
}

static uint32_t rng_next(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

static kcc_status check_desc(const game_desc *d, char *err, size_t err_size)
{
    kcc_status s = kcc_character_desc_validate(&d->character);
    if (s != KCC_OK) {
        snprintf(err, err_size, "character desc: %s", kcc_status_str(s));
        return s;
    }
    const char *bad = !(d->gravity > 0.0f && d->gravity < 1e3f)       ? "gravity"
                      : !(d->jump_speed >= 0.0f && d->jump_speed < 1e3f) ? "jump_speed"
                      : !(d->walk_speed >= 0.0f && d->walk_speed < 1e3f) ? "walk_speed"
                      : (unsigned)d->crush > GAME_CRUSH_KILL             ? "crush"
                      : d->character_capacity < 1 || d->character_capacity > DEMO_MAX_CHARACTERS
                          ? "character_capacity"
                          : NULL;
    if (bad) {
        snprintf(err, err_size, "game desc: %s out of range", bad);
        return KCC_ERR_BAD_DESC;
    }
    return KCC_OK;
}

static kcc_status mesh_build(const float *positions, uint32_t vertex_count, const uint32_t *indices,
                             uint32_t triangle_count, kcc_mesh **out)
{
    kcc_mesh_desc d;
    memset(&d, 0, sizeof(d));
    d.positions = positions;
    d.vertex_count = vertex_count;
    d.indices = indices;
    d.triangle_count = triangle_count;
    return kcc_mesh_build(&d, out);
}

/* Writes a mesh as an OBJ file whose numbers read back to the same bits. */
static bool write_obj(const char *path, const kcc_level *lv)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    fprintf(f, "# a mesh of a recorded game (demo/game.c): %u triangles\n", (unsigned)lv->triangle_count);
    for (uint32_t v = 0; v < lv->vertex_count; ++v) {
        char t[3][KCC_TRACE_FLOAT_CHARS];
        for (int k = 0; k < 3; ++k)
            kcc_trace_float_to_text(lv->positions[3 * v + k], t[k]);
        fprintf(f, "v %s %s %s\n", t[0], t[1], t[2]);
    }
    for (uint32_t t = 0; t < lv->triangle_count; ++t)
        fprintf(f, "f %u %u %u\n", (unsigned)lv->indices[3 * t] + 1, (unsigned)lv->indices[3 * t + 1] + 1,
                (unsigned)lv->indices[3 * t + 2] + 1);
    bool ok = !ferror(f);
    return fclose(f) == 0 && ok;
}

/* Names a mesh to the recorder of a recorded game, before its first body: `name` ("obj PATH"), or
 * an OBJ file written into the record's mesh directory. The first failure is the record's status. */
static void record_mesh(game *g, const kcc_mesh *mesh, const char *name, const float *positions,
                        uint32_t vertex_count, const uint32_t *indices, uint32_t triangle_count)
{
    game_record *r = g->desc.record;
    if (!r || !r->active)
        return;
    kcc_level lv = {(float *)positions, vertex_count, (uint32_t *)indices, triangle_count, NULL, 0};
    char level[KCC_TRACE_LEVEL_MAX], path[1024];
    const uint32_t n = ++r->meshes;
    kcc_status s = KCC_OK;
    if (!name) {
        const char *file = n == 1 && !r->level ? "level.obj" : NULL;
        char numbered[32];
        snprintf(numbered, sizeof(numbered), "mesh_%u.obj", (unsigned)n);
        snprintf(path, sizeof(path), "%s/%s", r->mesh_dir, file ? file : numbered);
        snprintf(level, sizeof(level), "obj %s/%s", r->mesh_dir_name, file ? file : numbered);
        mkdir(r->mesh_dir, 0777);   /* an existing directory is fine; a failure shows at the write */
        s = write_obj(path, &lv) ? KCC_OK : KCC_ERR_IO;
        name = level;
    }
    if (s == KCC_OK)
        s = kcc_world_trace_level(&r->writer, mesh, name, kcc_level_hash(&lv));
    if (s != KCC_OK && r->status == KCC_OK)
        r->status = s;
}

kcc_status game_mesh_build(game *g, const float *positions, uint32_t vertex_count, const uint32_t *indices,
                           uint32_t triangle_count, kcc_mesh **out)
{
    kcc_status s = mesh_build(positions, vertex_count, indices, triangle_count, out);
    if (s == KCC_OK && g)
        record_mesh(g, *out, NULL, positions, vertex_count, indices, triangle_count);
    return s;
}

/* The static level: one body, its bounds and a copy of its spawn points. */
static kcc_status add_level(game *g, const kcc_level *lv)
{
    kcc_status s = mesh_build(lv->positions, lv->vertex_count, lv->indices, lv->triangle_count, &g->level_mesh);
    if (s != KCC_OK)
        return s;
    if (g->desc.record)
        record_mesh(g, g->level_mesh, g->desc.record->level, lv->positions, lv->vertex_count, lv->indices,
                    lv->triangle_count);
    s = kcc_world_add_body(g->world, g->level_mesh, NULL, &g->level_body);
    if (s != KCC_OK)
        return s;
    for (int k = 0; k < 3; ++k) {
        g->level_bounds[0][k] = INFINITY;
        g->level_bounds[1][k] = -INFINITY;
    }
    for (uint32_t v = 0; v < lv->vertex_count; ++v) {
        for (int k = 0; k < 3; ++k) {
            g->level_bounds[0][k] = fminf(g->level_bounds[0][k], lv->positions[3 * v + k]);
            g->level_bounds[1][k] = fmaxf(g->level_bounds[1][k], lv->positions[3 * v + k]);
        }
    }
    g->spawn_count = lv->spawn_count;
    g->spawns = malloc(sizeof(float) * 3 * (lv->spawn_count ? lv->spawn_count : 1));
    if (!g->spawns)
        return KCC_ERR_OUT_OF_MEMORY;
    if (lv->spawn_count)
        memcpy(g->spawns, lv->spawns, sizeof(float) * 3 * lv->spawn_count);
    return KCC_OK;
}

/* Starts recording the empty world (game_desc.record). */
static kcc_status record_begin(game *g, game_record *r)
{
    if (!r->file || !r->mesh_dir || !r->mesh_dir_name)
        return KCC_ERR_NULL_ARGUMENT;
    r->meshes = 0;
    r->status = kcc_world_trace_begin(&r->writer, r->file, g->world);
    r->active = r->status == KCC_OK;
    return r->status;
}

kcc_status game_create(const q3bsp_map *map, const game_desc *desc, game **out, char *err, size_t err_size)
{
    if (!map || !out) {
        snprintf(err, err_size, "NULL argument");
        return KCC_ERR_NULL_ARGUMENT;
    }
    game_desc d = desc ? *desc : game_default_desc();
    kcc_status s = check_desc(&d, err, err_size);
    if (s != KCC_OK)
        return s;
    game *g = calloc(1, sizeof(game));
    if (!g) {
        snprintf(err, err_size, "out of memory");
        return KCC_ERR_OUT_OF_MEMORY;
    }
    g->desc = d;
    g->rng = d.seed * 747796405u + 2891336453u;
    if (g->rng == 0)
        g->rng = 1;
    kcc_world_desc wd = kcc_world_default_desc();
    wd.body_capacity = 8 + 2 * map->entities.count;   /* the level, every mover and trigger */
    wd.character_capacity = d.character_capacity;
    wd.piece_capacity = 1u << 16;
    g->characters = calloc(d.character_capacity, sizeof(game_character));
    g->character_of_slot = calloc((size_t)d.character_capacity + 1, sizeof(uint32_t));
    s = g->characters && g->character_of_slot ? kcc_world_create(&wd, &g->world) : KCC_ERR_OUT_OF_MEMORY;
    if (s == KCC_OK && d.record)
        s = record_begin(g, d.record);
    if (s == KCC_OK)
        s = add_level(g, &map->world);
    if (s != KCC_OK)
        snprintf(err, err_size, "level: %s", kcc_status_str(s));
    else
        s = game_movers_create(g, map, err, err_size);
    if (s != KCC_OK) {
        game_destroy(g);
        return s;
    }
    *out = g;
    return KCC_OK;
}

kcc_status game_record_end(game *g)
{
    game_record *r = g ? g->desc.record : NULL;
    if (!r)
        return KCC_OK;
    if (r->active) {
        kcc_status s = kcc_trace_end(&r->writer);
        r->status = r->status == KCC_OK ? s : r->status;
        r->active = false;
    }
    return r->status;
}

void game_destroy(game *g)
{
    if (!g)
        return;
    game_record_end(g);
    game_movers_destroy(g);
    kcc_world_destroy(g->world);
    kcc_mesh_destroy(g->level_mesh);
    free(g->characters);
    free(g->character_of_slot);
    free(g->spawns);
    free(g);
}

/* ------------------------------------------------------------------ characters */

static uint32_t slot_of(uint32_t id)
{
    return id & 0xfffffu;
}

uint32_t game_character_of_id(const game *g, uint32_t id)
{
    uint32_t slot = slot_of(id);
    if (slot == 0 || slot > g->desc.character_capacity || g->character_of_slot[slot] == 0)
        return UINT32_MAX;
    uint32_t c = g->character_of_slot[slot] - 1;
    return g->characters[c].id == id ? c : UINT32_MAX;
}

/* The centre of a box standing at feet, or of the nearest free one around it: a destination marker
 * or a spawn set too low, a spot against a wall. Tries rising by up to 2 m, then the same on rings of up to 1 m
 * around; keeps the first place whose box overlaps no body, else feet itself. */
static void free_centre(const game *g, const float feet[3], vec3 out)
{
    static const float rise[] = {0.0f, 0.1f, 0.25f, 0.5f, 0.75f, 1.0f, 1.5f, 2.0f};
    static const float ring[] = {0.25f, 0.5f, 0.75f, 1.0f};
    const kcc_character_desc *d = &g->desc.character;
    const float lift = d->half_extents[1] + d->skin_width;
    const uint32_t rises = sizeof(rise) / sizeof(rise[0]);
    for (uint32_t i = 0; i < rises * (1 + 4 * 8); ++i) {
        float dx = 0.0f, dz = 0.0f, dy = rise[i % rises];
        if (i >= rises) {
            uint32_t k = (i - rises) / rises;
            float a = (float)(k % 8) * 0.785398163f;
            dx = ring[k / 8] * cosf(a);
            dz = ring[k / 8] * sinf(a);
        }
        vec3 box[2];
        for (int a = 0; a < 3; ++a) {
            float c = feet[a] + (a == 0 ? dx : a == 2 ? dz : dy + lift);
            box[0][a] = c - d->half_extents[a];
            box[1][a] = c + d->half_extents[a];
        }
        if (kcc_world_overlap_aabb(g->world, (const vec3 *)box, KCC_LAYERS_ALL, NULL, 0) == 0) {
            out[0] = feet[0] + dx;
            out[1] = feet[1] + dy + lift;
            out[2] = feet[2] + dz;
            return;
        }
    }
    out[0] = feet[0];
    out[1] = feet[1] + lift;
    out[2] = feet[2];
}

/* Puts character c in the world standing at feet, or the nearest free place (a new world id). */
static kcc_status place(game *g, uint32_t c, const float feet[3])
{
    const kcc_character_desc *d = &g->desc.character;
    vec3 centre;
    free_centre(g, feet, centre);
    uint32_t id;
    kcc_status s = kcc_world_add_character(g->world, d, centre, &id);
    if (s != KCC_OK)
        return s;
    g->characters[c].id = id;
    g->character_of_slot[slot_of(id)] = c + 1;
    return KCC_OK;
}

kcc_status game_add_character(game *g, const float feet[3], bool bot, uint32_t *out_index)
{
    if (!g || !feet)
        return KCC_ERR_NULL_ARGUMENT;
    if (!isfinite(feet[0]) || !isfinite(feet[1]) || !isfinite(feet[2]))
        return KCC_ERR_NON_FINITE;
    if (g->character_count >= g->desc.character_capacity)
        return KCC_ERR_TOO_LARGE;
    uint32_t c = g->character_count;
    game_character *ch = &g->characters[c];
    memset(ch, 0, sizeof(*ch));
    ch->bot = bot;
    ch->apex_distance = NAN;
    ch->goal = g->spawn_count ? rng_next(&g->rng) % g->spawn_count : 0;
    kcc_status s = place(g, c, feet);
    if (s != KCC_OK)
        return s;
    g->character_count++;
    if (out_index)
        *out_index = c;
    return KCC_OK;
}

void game_remove_character(game *g, uint32_t index)
{
    if (!g || index >= g->character_count)
        return;
    game_character *c = &g->characters[index];
    g->character_of_slot[slot_of(c->id)] = 0;
    kcc_world_remove_character(g->world, c->id);
    uint32_t last = --g->character_count;
    if (index != last) {
        *c = g->characters[last];
        g->character_of_slot[slot_of(c->id)] = index + 1;
    }
}

/* The movers' rules and poses and the triggers' cooldowns of `from`, each body placed where its mover is. */
static void copy_movers(game *to, const game *from)
{
    for (uint32_t i = 0; i < to->mover_count && i < from->mover_count; ++i) {
        game_mover *m = &to->movers[i];
        uint32_t body = m->body;
        kcc_mesh *mesh = m->mesh;
        *m = from->movers[i];
        m->body = body;
        m->mesh = mesh;
        kcc_world_set_body_transform(to->world, body, &m->pose);
    }
    for (uint32_t i = 0; i < to->trigger_count && i < from->trigger_count; ++i)
        to->triggers[i].cooldown = from->triggers[i].cooldown;
}

kcc_status game_restart_recorded(const game *from, const q3bsp_map *map, game_record *record, game **out,
                                 char *err, size_t err_size)
{
    if (!from || !record || !out)
        return KCC_ERR_NULL_ARGUMENT;
    game_desc d = from->desc;
    d.record = record;
    game *g = NULL;
    kcc_status s = game_create(map, &d, &g, err, err_size);
    if (s != KCC_OK)
        return s;
    copy_movers(g, from);
    for (uint32_t c = 0; s == KCC_OK && c < from->character_count; ++c) {
        kcc_character_state st;
        if (kcc_world_get_character(from->world, from->characters[c].id, &st, NULL) != KCC_OK)
            continue;
        const float feet[3] = {st.position[0], st.position[1] - d.character.half_extents[1] - d.character.skin_width,
                               st.position[2]};
        uint32_t index;
        s = game_add_character(g, feet, from->characters[c].bot, &index);
        if (s == KCC_OK) {
            uint32_t id = g->characters[index].id;
            g->characters[index] = from->characters[c];
            g->characters[index].id = id;
            g->characters[index].pad = 0;   /* entered again at the first step */
        }
    }
    g->time = from->time;
    g->dt = from->dt;
    g->rng = from->rng;
    g->stats = from->stats;
    if (s != KCC_OK) {
        snprintf(err, err_size, "characters: %s", kcc_status_str(s));
        game_destroy(g);
        return s;
    }
    *out = g;
    return KCC_OK;
}

void game_set_input(game *g, uint32_t index, const demo_input *in)
{
    if (!g || !in || index >= g->character_count)
        return;
    game_character *c = &g->characters[index];
    const float speed = in->run ? DEMO_RUN_SPEED : DEMO_WALK_SPEED;
    float wx = in->forward * -sinf(in->yaw) + in->right * cosf(in->yaw);
    float wz = in->forward * -cosf(in->yaw) + in->right * -sinf(in->yaw);
    float l = sqrtf(wx * wx + wz * wz);
    if (l > 1.0f) {
        wx /= l;
        wz /= l;
    }
    c->wish[0] = wx * speed;
    c->wish[1] = 0.0f;
    c->wish[2] = wz * speed;
    c->jump = c->jump || in->jump;
}

bool game_character_state(const game *g, uint32_t index, kcc_character_state *out_state,
                          kcc_move_result *out_result)
{
    if (!g || index >= g->character_count)
        return false;
    return kcc_world_get_character(g->world, g->characters[index].id, out_state, out_result) == KCC_OK;
}

void game_character_launch(game *g, uint32_t index, const float target[3])
{
    game_character *c = &g->characters[index];
    kcc_character_state st;
    float v[3];
    if (kcc_world_get_character(g->world, c->id, &st, NULL) != KCC_OK ||
        !game_aim_at(st.position, target, g->desc.gravity, g->dt, v))
        return;
    memcpy(c->velocity, v, sizeof(v));
    memcpy(c->launch_target, target, sizeof(c->launch_target));
    c->ballistic = true;
    c->in_flight = true;
    c->flight_blocked = false;
    c->apex_distance = NAN;
}

void game_character_teleport(game *g, uint32_t index, const float feet[3], const float velocity[3])
{
    game_character *c = &g->characters[index];
    vec3 centre;
    free_centre(g, feet, centre);
    if (kcc_world_set_character_position(g->world, c->id, centre) != KCC_OK)
        return; /* a destination beyond the world's range: it stays */
    memcpy(c->velocity, velocity, sizeof(c->velocity));
    c->ballistic = velocity[0] != 0.0f || velocity[2] != 0.0f;
    c->in_flight = false;
    c->pad = 0;
}

/* A bot walks toward its goal spawn, jumps when a wall stops it, and picks another goal on arrival or
 * after BOT_GOAL_TIMEOUT. */
static void bot_think(game *g, game_character *c, const kcc_character_state *st, uint32_t flags, float dt)
{
    c->goal_time += dt;
    if (g->spawn_count == 0)
        return;
    const float *goal = g->spawns + 3 * c->goal;
    float dx = goal[0] - st->position[0], dz = goal[2] - st->position[2];
    float dist = sqrtf(dx * dx + dz * dz);
    if (dist < BOT_GOAL_REACHED || c->goal_time > BOT_GOAL_TIMEOUT) {
        c->goal = rng_next(&g->rng) % g->spawn_count;
        c->goal_time = 0.0f;
        return;
    }
    c->wish[0] = g->desc.walk_speed * dx / dist;
    c->wish[1] = 0.0f;
    c->wish[2] = g->desc.walk_speed * dz / dist;
    c->jump = (flags & (KCC_MOVE_HIT_WALL | KCC_MOVE_STUCK)) != 0;
}

/* Before the step: the displacement from the velocity (walking on ground, ballistic in the air). */
static void character_prepare(game *g, game_character *c, float dt)
{
    kcc_character_state st;
    kcc_move_result r;
    if (kcc_world_get_character(g->world, c->id, &st, &r) != KCC_OK)
        return;
    if (c->bot)
        bot_think(g, c, &st, r.flags, dt);
    if (st.on_ground && !c->ballistic) {
        c->velocity[0] = c->wish[0];
        c->velocity[2] = c->wish[2];
        if (c->jump)
            c->velocity[1] = g->desc.jump_speed;
    }
    c->jump = false;
    c->velocity[1] = fmaxf(c->velocity[1] - g->desc.gravity * dt, -60.0f);
    if (c->in_flight && c->velocity[1] <= 0.0f) {
        /* The launch's apex: from here on the character goes down. */
        float dx = st.position[0] - c->launch_target[0], dz = st.position[2] - c->launch_target[2];
        c->apex_distance = sqrtf(dx * dx + dz * dz);
        memcpy(c->apex, st.position, sizeof(c->apex));
        c->in_flight = false;
    }
    vec3 disp = {c->velocity[0] * dt, c->velocity[1] * dt, c->velocity[2] * dt};
    kcc_world_set_displacement(g->world, c->id, disp);
}

/* What touching a mover does: a plat at its top stays while stood on (Touch_Plat), a button at rest
 * is pressed (Touch_Button); a crushed character marks every mover that pushed it. */
static void touch_movers(game *g, const game_character *c, const kcc_character_state *st, bool crushed)
{
    uint32_t m = game_mover_of_body(g, st->ground_body);
    if (m != UINT32_MAX && g->movers[m].kind == GAME_MOVER_PLAT && g->movers[m].state == GAME_AT_POS2)
        g->movers[m].timer = fmaxf(g->movers[m].timer, 1.0f);
    kcc_contact contacts[KCC_WORLD_CONTACTS];
    uint32_t n = kcc_world_get_contacts(g->world, c->id, contacts, KCC_WORLD_CONTACTS, NULL);
    for (uint32_t i = 0; i < n && i < KCC_WORLD_CONTACTS; ++i) {
        m = game_mover_of_body(g, contacts[i].body);
        if (m == UINT32_MAX)
            continue;
        if (g->movers[m].kind == GAME_MOVER_BUTTON && g->movers[m].state == GAME_AT_POS1)
            game_mover_use(g, m);
        if (crushed)
            g->movers[m].blocked = true;
    }
}

/* After the step: what the move met corrects the velocity (ground and ceilings stop the vertical part,
 * walls the part into them); crushes follow the policy; a fall out of the level respawns. */
static void character_after(game *g, game_character *c)
{
    kcc_character_state st;
    kcc_move_result r;
    if (kcc_world_get_character(g->world, c->id, &st, &r) != KCC_OK)
        return;
    if (st.on_ground && c->velocity[1] <= 0.0f) {
        c->velocity[1] = 0.0f;
        c->ballistic = false;
    }
    if ((r.flags & KCC_MOVE_HIT_CEILING) && c->velocity[1] > 0.0f)
        c->velocity[1] = 0.0f;
    if (r.flags & KCC_MOVE_HIT_WALL) {
        float into = c->velocity[0] * r.wall_normal[0] + c->velocity[2] * r.wall_normal[2];
        if (into < 0.0f) {
            c->velocity[0] -= into * r.wall_normal[0];
            c->velocity[2] -= into * r.wall_normal[2];
        }
    }
    if (c->in_flight && (r.flags & (KCC_MOVE_HIT_WALL | KCC_MOVE_HIT_CEILING)))
        c->flight_blocked = true;
    bool crushed = (r.flags & KCC_MOVE_CRUSHED) != 0;
    g->stats.crushed += crushed;
    touch_movers(g, c, &st, crushed && g->desc.crush == GAME_CRUSH_REVERSE);
    if (crushed && g->desc.crush == GAME_CRUSH_KILL) {
        c->deaths++;
        g->stats.killed++;
        c->teleport = RESPAWN;
    }
    if (!(st.position[1] > g->level_bounds[0][1] - FALL_MARGIN)) {
        g->stats.fell++;
        c->teleport = RESPAWN;
    }
}

/* The moves decided after the sensor events were read: teleports and respawns. */
static void character_relocate(game *g, uint32_t index)
{
    game_character *c = &g->characters[index];
    uint32_t to = c->teleport;
    c->teleport = 0;
    if (to == RESPAWN) {
        static const float still[3] = {0.0f, 0.0f, 0.0f};
        const float origin[3] = {0.0f, 0.0f, 0.0f};
        const float *feet = g->spawn_count ? g->spawns + 3 * (rng_next(&g->rng) % g->spawn_count) : origin;
        game_character_teleport(g, index, feet, still);
        return;
    }
    const game_trigger *t = &g->triggers[to - 1];
    float v[3] = {TELEPORT_SPEED * cosf(t->exit_yaw), 0.0f, -TELEPORT_SPEED * sinf(t->exit_yaw)};
    game_character_teleport(g, index, t->target, v);
    c->teleports++;
    g->stats.teleports++;
}

void game_step(game *g, float dt)
{
    if (!g || !(dt > 0.0f))
        return;
    g->time += dt;
    g->dt = dt;
    game_movers_advance(g, dt);
    for (uint32_t i = 0; i < g->character_count; ++i)
        character_prepare(g, &g->characters[i], dt);
    kcc_world_step(g->world);
    for (uint32_t i = 0; i < g->character_count; ++i)
        character_after(g, &g->characters[i]);
    for (uint32_t i = 0; i < g->mover_count; ++i) {
        if (g->movers[i].blocked)
            game_mover_reverse(g, i);
        g->movers[i].blocked = false;
    }
    game_triggers_apply(g, dt);
    for (uint32_t i = 0; i < g->character_count; ++i)
        if (g->characters[i].teleport)
            character_relocate(g, i);
}
