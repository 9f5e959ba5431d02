/* demo/game_movers.c: Quake 3's movers and triggers as the demo's game runs them on a kcc_world:
 * each mover a kinematic body whose target pose its rule sets every step (g_mover.c's facts: the
 * defaults, pos1/pos2, Use_BinaryMover, the trains' corners), each trigger a static sensor box whose
 * enter/leave events and occupancy drive jump pads, teleporters, doors and plats (g_trigger.c's).
 * Units: metres, Y up, as the importer converts (1/32 m per Quake unit). Nothing here allocates after
 * game_movers_create. Tests: test/test_demo.c, the game_* tests. */
#include "box_mesh.h"
#include "game.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNIT (1.0f / (float)Q3BSP_UNITS_PER_METRE)   /* m per Quake unit */
#define DEG_TO_RAD 0.017453292519943295
#define PI 3.14159265358979323846
#define TAG_MOVER   1ull
#define TAG_TRIGGER 2ull

/* ------------------------------------------------------------------ small geometry */

/* The quaternion of a turn of `degrees` about the unit axis. */
static void quat_axis_angle(const float axis[3], double degrees, float out[4])
{
    double half = 0.5 * degrees * DEG_TO_RAD, s = sin(half);
    out[0] = (float)(axis[0] * s);
    out[1] = (float)(axis[1] * s);
    out[2] = (float)(axis[2] * s);
    out[3] = (float)cos(half);
}

/* out = a * b (b applied first). */
static void quat_mul(const float a[4], const float b[4], float out[4])
{
    float r[4] = {
        a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
        a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
        a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
        a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2],
    };
    memcpy(out, r, sizeof(r));
}

/* Quake's axes in the metres frame: X -> +x, Y -> -z, Z -> +y (q3bsp_to_metres without the scale). */
static const float AXIS_QX[3] = {1, 0, 0}, AXIS_QY[3] = {0, 0, -1}, AXIS_QZ[3] = {0, 1, 0};

/* Quake's angles (pitch about its Y, yaw about its Z, roll about its X; AnglesToAxis applies roll
 * first, then pitch, then yaw) as one quaternion in the metres frame. */
static void quake_angles_quat(const double angles[3], float out[4])
{
    float yaw[4], pitch[4], roll[4], yp[4];
    quat_axis_angle(AXIS_QZ, angles[1], yaw);
    quat_axis_angle(AXIS_QY, angles[0], pitch);
    quat_axis_angle(AXIS_QX, angles[2], roll);
    quat_mul(yaw, pitch, yp);
    quat_mul(yp, roll, out);
}

/* The entity's angles: "angles" (pitch yaw roll) or "angle" (yaw), degrees. */
static void entity_angles(const q3bsp_entities *e, uint32_t entity, double out[3])
{
    out[0] = out[1] = out[2] = 0.0;
    if (!q3bsp_entity_vec3(e, entity, "angles", out))
        out[1] = q3bsp_entity_float(e, entity, "angle", 0.0);
}

/* G_SetMovedir: yaw -1 is up, -2 down, else the angles' forward vector; in the metres frame. */
static void entity_movedir(const q3bsp_entities *e, uint32_t entity, float out[3])
{
    double a[3];
    entity_angles(e, entity, a);
    double q[3];
    if (a[0] == 0.0 && a[2] == 0.0 && a[1] == -1.0) {
        q[0] = 0, q[1] = 0, q[2] = 1;
    } else if (a[0] == 0.0 && a[2] == 0.0 && a[1] == -2.0) {
        q[0] = 0, q[1] = 0, q[2] = -1;
    } else {
        double p = a[0] * DEG_TO_RAD, y = a[1] * DEG_TO_RAD;
        q[0] = cos(p) * cos(y), q[1] = cos(p) * sin(y), q[2] = -sin(p);
    }
    out[0] = (float)q[0];
    out[1] = (float)q[2];
    out[2] = (float)-q[1];
}

static void entity_origin(const q3bsp_entities *e, uint32_t entity, float out[3])
{
    double q[3] = {0, 0, 0};
    q3bsp_entity_vec3(e, entity, "origin", q);
    q3bsp_to_metres(q, out);
}

static void copy_name(char *dst, size_t size, const char *src)
{
    dst[0] = '\0';
    if (src) {
        strncpy(dst, src, size - 1);
        dst[size - 1] = '\0';
    }
}

/* ------------------------------------------------------------------ triggers */

static kcc_status add_trigger(game *g, game_trigger_kind kind, const float box[2][3], uint32_t *out_index)
{
    game_trigger *t = &g->triggers[g->trigger_count];
    memset(t, 0, sizeof(*t));
    t->kind = kind;
    t->mover = UINT32_MAX;
    for (int k = 0; k < 3; ++k) {
        t->box[0][k] = box[0][k] - UNIT;
        t->box[1][k] = box[1][k] + UNIT;
    }
    float corner[8][3]; /* the sensor: a closed box, recorded as the game's other meshes are */
    demo_box_corners(t->box[0], t->box[1], corner);
    kcc_status s = game_mesh_build(g, &corner[0][0], 8, demo_box_indices, 12, &t->mesh);
    if (s != KCC_OK)
        return s;
    kcc_body_desc bd = kcc_body_default_desc();
    bd.sensor = true;
    bd.user_data = TAG_TRIGGER << 32 | g->trigger_count;
    s = kcc_world_add_body(g->world, t->mesh, &bd, &t->body);
    if (s != KCC_OK) {
        kcc_mesh_destroy(t->mesh);
        return s;
    }
    *out_index = g->trigger_count++;
    return KCC_OK;
}

/* A trigger entity's box: its brush model's bounds placed at its origin. */
static void model_box(const q3bsp_map *map, uint32_t entity, uint32_t model, float box[2][3])
{
    float o[3];
    entity_origin(&map->entities, entity, o);
    for (int k = 0; k < 3; ++k) {
        box[0][k] = map->models[model].bounds[0][k] + o[k];
        box[1][k] = map->models[model].bounds[1][k] + o[k];
    }
}

/* The point an entity's "target" names (target_position, info_notnull, misc_teleporter_dest ...). */
static bool target_point(const q3bsp_entities *e, uint32_t entity, float out[3])
{
    uint32_t t = q3bsp_entity_find(e, q3bsp_entity_value(e, entity, "target"), NULL);
    double q[3];
    if (t == UINT32_MAX || !q3bsp_entity_vec3(e, t, "origin", q))
        return false;
    q3bsp_to_metres(q, out);
    return true;
}

static kcc_status add_entity_trigger(game *g, const q3bsp_map *map, uint32_t entity, uint32_t model)
{
    const q3bsp_entities *e = &map->entities;
    const char *c = q3bsp_entity_class(e, entity);
    game_trigger_kind kind;
    if (strcmp(c, "trigger_push") == 0)
        kind = GAME_TRIGGER_PUSH;
    else if (strcmp(c, "trigger_teleport") == 0)
        kind = GAME_TRIGGER_TELEPORT;
    else if (strcmp(c, "trigger_multiple") == 0)
        kind = GAME_TRIGGER_MULTIPLE;
    else
        return KCC_OK;
    float box[2][3];
    model_box(map, entity, model, box);
    uint32_t index;
    kcc_status s = add_trigger(g, kind, (const float(*)[3])box, &index);
    if (s != KCC_OK)
        return s;
    game_trigger *t = &g->triggers[index];
    t->entity = entity;
    t->has_target = kind != GAME_TRIGGER_MULTIPLE && target_point(e, entity, t->target);
    if (kind == GAME_TRIGGER_TELEPORT && t->has_target) {
        /* TeleportPlayer puts the player's origin 1 unit above the destination; its feet are 24
         * units below its origin. It leaves along the destination's yaw. */
        t->target[1] -= 23.0f * UNIT;
        uint32_t d = q3bsp_entity_find(e, q3bsp_entity_value(e, entity, "target"), NULL);
        t->exit_yaw = (float)(q3bsp_entity_float(e, d, "angle", 0.0) * DEG_TO_RAD);
    }
    copy_name(t->target_name, sizeof(t->target_name), q3bsp_entity_value(e, entity, "target"));
    t->wait = (float)q3bsp_entity_float(e, entity, "wait", 0.5);
    return KCC_OK;
}

/* Think_SpawnNewDoorTrigger: the door's box at pos1, its thinnest axis grown by 120 units each way. */
static kcc_status add_door_trigger(game *g, uint32_t mover, const float bounds[2][3])
{
    const game_mover *m = &g->movers[mover];
    float box[2][3];
    int thin = 0;
    for (int k = 0; k < 3; ++k) {
        box[0][k] = bounds[0][k] + m->pos1[k];
        box[1][k] = bounds[1][k] + m->pos1[k];
        if (box[1][k] - box[0][k] < box[1][thin] - box[0][thin])
            thin = k;
    }
    box[0][thin] -= 120.0f * UNIT;
    box[1][thin] += 120.0f * UNIT;
    uint32_t index;
    kcc_status s = add_trigger(g, GAME_TRIGGER_DOOR, (const float(*)[3])box, &index);
    if (s == KCC_OK) {
        g->triggers[index].mover = mover;
        g->triggers[index].entity = m->entity;
    }
    return s;
}

/* SpawnPlatTrigger: a box over the plat's low position, 33 units in from its sides, from its
 * bottom to 8 units above its top (thin plats get a 1-unit sliver at their centre). */
static kcc_status add_plat_trigger(game *g, uint32_t mover, const float bounds[2][3])
{
    const game_mover *m = &g->movers[mover];
    float box[2][3];
    for (int k = 0; k < 3; ++k) {
        float inset = k == 1 ? 0.0f : 33.0f * UNIT;
        box[0][k] = m->pos1[k] + bounds[0][k] + inset;
        box[1][k] = m->pos1[k] + bounds[1][k] - inset + (k == 1 ? 8.0f * UNIT : 0.0f);
        if (box[1][k] <= box[0][k]) {
            box[0][k] = m->pos1[k] + 0.5f * (bounds[0][k] + bounds[1][k]);
            box[1][k] = box[0][k] + UNIT;
        }
    }
    uint32_t index;
    kcc_status s = add_trigger(g, GAME_TRIGGER_PLAT, (const float(*)[3])box, &index);
    if (s == KCC_OK) {
        g->triggers[index].mover = mover;
        g->triggers[index].entity = m->entity;
    }
    return s;
}

/* ------------------------------------------------------------------ movers */

static bool mover_kind(const char *c, game_mover_kind *out)
{
    static const char *const names[GAME_MOVER_KIND_COUNT] = {
        "func_door", "func_plat", "func_button", "func_bobbing", "func_rotating", "func_pendulum",
        "func_train",
    };
    for (int k = 0; k < GAME_MOVER_KIND_COUNT; ++k) {
        if (strcmp(c, names[k]) == 0) {
            *out = (game_mover_kind)k;
            return true;
        }
    }
    return false;
}

/* SP_func_door / SP_func_button: pos2 = pos1 + (|movedir| . size - lip) movedir. */
static void setup_door_or_button(game_mover *m, const q3bsp_entities *e, uint32_t entity,
                                 const float bounds[2][3])
{
    const bool door = m->kind == GAME_MOVER_DOOR;
    float dir[3];
    entity_movedir(e, entity, dir);
    float lip = (float)q3bsp_entity_float(e, entity, "lip", door ? 8.0 : 4.0) * UNIT;
    float distance = -lip;
    for (int k = 0; k < 3; ++k)
        distance += fabsf(dir[k]) * (bounds[1][k] - bounds[0][k]);
    for (int k = 0; k < 3; ++k) {
        m->pos1[k] = m->origin[k];
        m->pos2[k] = m->origin[k] + distance * dir[k];
    }
    m->speed = (float)q3bsp_entity_float(e, entity, "speed", door ? 400.0 : 40.0) * UNIT;
    m->wait = (float)q3bsp_entity_float(e, entity, "wait", door ? 2.0 : 1.0);
    int flags = (int)q3bsp_entity_float(e, entity, "spawnflags", 0.0);
    m->crusher = door && (flags & 4);
    if (door && (flags & 1)) {   /* START_OPEN: the two places swap */
        float t[3];
        memcpy(t, m->pos1, sizeof(t));
        memcpy(m->pos1, m->pos2, sizeof(t));
        memcpy(m->pos2, t, sizeof(t));
    }
}

/* SP_func_plat: pos2 is the origin (the top), pos1 `height` below (default the model's height less
 * the 8-unit lip); 200 units/s; it waits 1 s at the top (the game fixes it, whatever "wait" says). */
static void setup_plat(game_mover *m, const q3bsp_entities *e, uint32_t entity, const float bounds[2][3])
{
    float lip = (float)q3bsp_entity_float(e, entity, "lip", 8.0) * UNIT;
    float height = (float)q3bsp_entity_float(e, entity, "height", -1.0);
    height = height >= 0.0f ? height * UNIT : bounds[1][1] - bounds[0][1] - lip;
    memcpy(m->pos2, m->origin, sizeof(m->pos2));
    memcpy(m->pos1, m->origin, sizeof(m->pos1));
    m->pos1[1] -= height;
    m->speed = (float)q3bsp_entity_float(e, entity, "speed", 200.0) * UNIT;
    m->wait = 1.0f;
}

/* SP_func_bobbing, SP_func_rotating, SP_func_pendulum. */
static void setup_periodic(game_mover *m, const q3bsp_entities *e, uint32_t entity, const float bounds[2][3])
{
    int flags = (int)q3bsp_entity_float(e, entity, "spawnflags", 0.0);
    m->phase = (float)q3bsp_entity_float(e, entity, "phase", 0.0);
    if (m->kind == GAME_MOVER_BOBBING) {
        memcpy(m->axis, (flags & 1) ? AXIS_QX : (flags & 2) ? AXIS_QY : AXIS_QZ, sizeof(m->axis));
        m->amplitude = (float)q3bsp_entity_float(e, entity, "height", 32.0) * UNIT;
        m->period = (float)q3bsp_entity_float(e, entity, "speed", 4.0);
    } else if (m->kind == GAME_MOVER_ROTATING) {
        memcpy(m->axis, (flags & 4) ? AXIS_QX : (flags & 8) ? AXIS_QY : AXIS_QZ, sizeof(m->axis));
        m->speed = (float)q3bsp_entity_float(e, entity, "speed", 100.0);
    } else {
        /* The period of a swinging rod of the model's length below its origin (at least 8 units). */
        double length = fmax(-(double)bounds[0][1] * Q3BSP_UNITS_PER_METRE, 8.0);
        double freq = sqrt(GAME_Q3_GRAVITY * Q3BSP_UNITS_PER_METRE / (3.0 * length)) / (2.0 * PI);
        memcpy(m->axis, AXIS_QX, sizeof(m->axis));
        m->amplitude = (float)q3bsp_entity_float(e, entity, "speed", 30.0);
        m->period = (float)(1.0 / freq);
        double a[3];
        entity_angles(e, entity, a);
        quake_angles_quat(a, m->base_rotation);
    }
    if (!(m->period > 0.0f))
        m->period = 1.0f;
}

/* Think_SetupTrainTargets: the path_corner chain from the train's target, until it loops back or
 * ends (a corner without a next path_corner). */
static void setup_train(game *g, game_mover *m, const q3bsp_entities *e, uint32_t entity, uint32_t capacity)
{
    m->speed = (float)q3bsp_entity_float(e, entity, "speed", 100.0) * UNIT;
    m->first_corner = g->corner_count;
    uint32_t first = q3bsp_entity_find(e, q3bsp_entity_value(e, entity, "target"), "path_corner");
    uint32_t c = first;
    while (c != UINT32_MAX && m->corner_count < GAME_TRAIN_CORNERS && g->corner_count < capacity) {
        game_corner *k = &g->corners[g->corner_count++];
        entity_origin(e, c, k->position);
        k->speed = (float)q3bsp_entity_float(e, c, "speed", 0.0) * UNIT;
        k->wait = (float)q3bsp_entity_float(e, c, "wait", 0.0);
        m->corner_count++;
        c = q3bsp_entity_find(e, q3bsp_entity_value(e, c, "target"), "path_corner");
        if (c == first) {
            m->loops = true;
            break;
        }
    }
    if (m->corner_count > 0)
        memcpy(m->origin, g->corners[m->first_corner].position, sizeof(m->origin));
    m->at_corner = 0;
    m->segment_time = m->corner_count > 0 ? -g->corners[m->first_corner].wait : 0.0f;
}

static kcc_status add_mover(game *g, const q3bsp_map *map, uint32_t entity, uint32_t model, game_mover_kind kind,
                            uint32_t corner_capacity)
{
    const q3bsp_model *md = &map->models[model];
    if (md->triangle_count == 0)
        return KCC_OK;   /* nothing solid to move */
    const q3bsp_entities *e = &map->entities;
    game_mover *m = &g->movers[g->mover_count];
    memset(m, 0, sizeof(*m));
    m->kind = kind;
    m->entity = entity;
    m->base_rotation[3] = 1.0f;
    memcpy(m->bounds, md->bounds, sizeof(m->bounds));
    entity_origin(e, entity, m->origin);
    copy_name(m->target, sizeof(m->target), q3bsp_entity_value(e, entity, "target"));
    copy_name(m->targetname, sizeof(m->targetname), q3bsp_entity_value(e, entity, "targetname"));
    const float(*bounds)[3] = (const float(*)[3])md->bounds;
    if (kind == GAME_MOVER_DOOR || kind == GAME_MOVER_BUTTON)
        setup_door_or_button(m, e, entity, bounds);
    else if (kind == GAME_MOVER_PLAT)
        setup_plat(m, e, entity, bounds);
    else if (kind == GAME_MOVER_TRAIN)
        setup_train(g, m, e, entity, corner_capacity);
    else
        setup_periodic(m, e, entity, bounds);
    if (kind == GAME_MOVER_DOOR || kind == GAME_MOVER_BUTTON || kind == GAME_MOVER_PLAT)
        memcpy(m->origin, m->pos1, sizeof(m->origin));
    kcc_status s = game_mesh_build(g, md->positions, md->vertex_count, md->indices, md->triangle_count, &m->mesh);
    if (s != KCC_OK)
        return s;
    kcc_body_desc bd = kcc_body_default_desc();
    bd.kind = KCC_BODY_KINEMATIC;
    memcpy(bd.transform.position, m->origin, sizeof(m->origin));
    memcpy(bd.transform.rotation, m->base_rotation, sizeof(m->base_rotation));
    bd.user_data = TAG_MOVER << 32 | g->mover_count;
    s = kcc_world_add_body(g->world, m->mesh, &bd, &m->body);
    if (s != KCC_OK) {
        kcc_mesh_destroy(m->mesh);
        return s;
    }
    m->pose = bd.transform;
    uint32_t index = g->mover_count++;
    /* Doors and plats fired by name (a button, a trigger_multiple) get no trigger of their own. */
    if (kind == GAME_MOVER_DOOR && !m->targetname[0] && q3bsp_entity_float(e, entity, "health", 0.0) == 0.0)
        return add_door_trigger(g, index, bounds);
    if (kind == GAME_MOVER_PLAT && !m->targetname[0])
        return add_plat_trigger(g, index, bounds);
    return KCC_OK;
}

kcc_status game_movers_create(game *g, const q3bsp_map *map, char *err, size_t err_size)
{
    const q3bsp_entities *e = &map->entities;
    uint32_t movers = 0, triggers = 0, corners = 0;
    for (uint32_t i = 0; i < e->count; ++i) {
        game_mover_kind kind;
        bool moves = mover_kind(q3bsp_entity_class(e, i), &kind);
        movers += moves;
        triggers += 1u + (moves && (kind == GAME_MOVER_DOOR || kind == GAME_MOVER_PLAT));
        corners += strcmp(q3bsp_entity_class(e, i), "path_corner") == 0;
    }
    g->movers = calloc(movers ? movers : 1, sizeof(game_mover));
    g->triggers = calloc(triggers ? triggers : 1, sizeof(game_trigger));
    g->corners = calloc(corners ? corners : 1, sizeof(game_corner));
    if (!g->movers || !g->triggers || !g->corners) {
        snprintf(err, err_size, "out of memory");
        return KCC_ERR_OUT_OF_MEMORY;
    }
    for (uint32_t i = 0; i < e->count; ++i) {
        uint32_t model = q3bsp_entity_model(map, i);
        if (model == UINT32_MAX)
            continue;
        game_mover_kind kind;
        kcc_status s = mover_kind(q3bsp_entity_class(e, i), &kind)
                           ? add_mover(g, map, i, model, kind, corners)
                           : add_entity_trigger(g, map, i, model);
        if (s != KCC_OK) {
            snprintf(err, err_size, "entity %u (%s, model *%u): %s", i, q3bsp_entity_class(e, i), model,
                     kcc_status_str(s));
            return s;
        }
    }
    return KCC_OK;
}

void game_movers_destroy(game *g)
{
    for (uint32_t i = 0; g->movers && i < g->mover_count; ++i)
        kcc_mesh_destroy(g->movers[i].mesh);
    for (uint32_t i = 0; g->triggers && i < g->trigger_count; ++i)
        kcc_mesh_destroy(g->triggers[i].mesh);
    free(g->movers);
    free(g->triggers);
    free(g->corners);
    g->movers = NULL;
    g->triggers = NULL;
    g->corners = NULL;
    g->mover_count = g->trigger_count = g->corner_count = 0;
}

/* ------------------------------------------------------------------ the movers' rules */

static float distance3(const float a[3], const float b[3])
{
    float d[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    return sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
}

/* Reached_BinaryMover and the wait at pos2 (Quake 3 fires the targets on reaching pos2). */
static void advance_binary(game *g, game_mover *m, float dt)
{
    float length = distance3(m->pos1, m->pos2);
    float step = length > 0.0f ? dt * m->speed / length : 1.0f;
    if (m->state == GAME_TO_POS2) {
        m->fraction += step;
        if (m->fraction >= 1.0f) {
            m->fraction = 1.0f;
            m->state = GAME_AT_POS2;
            m->timer = m->wait;
            if (m->target[0])
                game_fire_targets(g, m->target);
        }
    } else if (m->state == GAME_TO_POS1) {
        m->fraction -= step;
        if (m->fraction <= 0.0f) {
            m->fraction = 0.0f;
            m->state = GAME_AT_POS1;
        }
    } else if (m->state == GAME_AT_POS2 && m->wait >= 0.0f) {
        m->timer -= dt;
        if (m->timer <= 0.0f)
            m->state = GAME_TO_POS1;
    }
    for (int k = 0; k < 3; ++k)
        m->pose.position[k] = m->pos1[k] + m->fraction * (m->pos2[k] - m->pos1[k]);
}

/* Reached_Train: wait at the corner reached, then run to the next one at its speed. */
static void advance_train(game *g, game_mover *m, float dt)
{
    if (m->corner_count < 2)
        return;
    const game_corner *k = g->corners + m->first_corner;
    uint32_t at = m->at_corner, next = (at + 1) % m->corner_count;
    if (!m->loops && at + 1 == m->corner_count)
        return;   /* the end of an open path: it stays */
    m->segment_time += dt;
    float speed = k[at].speed > 0.0f ? k[at].speed : m->speed;
    float duration = distance3(k[at].position, k[next].position) / fmaxf(speed, UNIT);
    m->segment_duration = duration;
    if (m->segment_time >= duration) {
        m->at_corner = next;
        m->segment_time = m->segment_time - duration - k[next].wait;
        memcpy(m->pose.position, k[next].position, sizeof(m->pose.position));
        return;
    }
    float s = m->segment_time > 0.0f ? m->segment_time / fmaxf(duration, 1e-6f) : 0.0f;
    for (int c = 0; c < 3; ++c)
        m->pose.position[c] = k[at].position[c] + s * (k[next].position[c] - k[at].position[c]);
}

/* TR_SINE and TR_LINEAR trajectories of bobbing, rotating and pendulum movers at time t. */
static void advance_periodic(game_mover *m, double t)
{
    double wave = sin(2.0 * PI * (t / m->period - m->phase));
    if (m->kind == GAME_MOVER_BOBBING) {
        for (int k = 0; k < 3; ++k)
            m->pose.position[k] = m->origin[k] + (float)(wave * m->amplitude) * m->axis[k];
    } else if (m->kind == GAME_MOVER_ROTATING) {
        quat_axis_angle(m->axis, fmod((double)m->speed * t, 360.0), m->pose.rotation);
    } else {
        float swing[4];
        quat_axis_angle(m->axis, wave * m->amplitude, swing);
        quat_mul(m->base_rotation, swing, m->pose.rotation);
    }
}

void game_movers_advance(game *g, float dt)
{
    for (uint32_t i = 0; i < g->mover_count; ++i) {
        game_mover *m = &g->movers[i];
        switch (m->kind) {
        case GAME_MOVER_DOOR:
        case GAME_MOVER_PLAT:
        case GAME_MOVER_BUTTON:
            advance_binary(g, m, dt);
            break;
        case GAME_MOVER_TRAIN:
            advance_train(g, m, dt);
            break;
        default:
            advance_periodic(m, (double)g->time);
            break;
        }
        kcc_world_move_body(g->world, m->body, &m->pose);
    }
}

static bool is_binary(const game_mover *m)
{
    return m->kind == GAME_MOVER_DOOR || m->kind == GAME_MOVER_PLAT || m->kind == GAME_MOVER_BUTTON;
}

void game_mover_use(game *g, uint32_t mover)
{
    if (mover >= g->mover_count || !is_binary(&g->movers[mover]))
        return;
    game_mover *m = &g->movers[mover];
    switch (m->state) {
    case GAME_AT_POS1:
    case GAME_TO_POS1:
        m->state = GAME_TO_POS2;
        g->stats.uses++;
        break;
    case GAME_AT_POS2:
        m->timer = m->wait;
        break;
    case GAME_TO_POS2:
        m->state = GAME_TO_POS1;
        break;
    }
}

bool game_mover_reverse(game *g, uint32_t mover)
{
    if (mover >= g->mover_count || !is_binary(&g->movers[mover]) || g->movers[mover].crusher)
        return false;
    game_mover *m = &g->movers[mover];
    if (m->state == GAME_TO_POS2)
        m->state = GAME_TO_POS1;
    else if (m->state == GAME_TO_POS1)
        m->state = GAME_TO_POS2;
    else
        return false;
    g->stats.reversed++;
    return true;
}

void game_fire_targets(game *g, const char *name)
{
    if (!name || !name[0])
        return;
    for (uint32_t i = 0; i < g->mover_count; ++i)
        if (strcmp(g->movers[i].targetname, name) == 0)
            game_mover_use(g, i);
}

bool game_aim_at(const float from[3], const float to[3], float gravity, float dt, float out[3])
{
    double height = (double)to[1] - (double)from[1];
    if (!(height > 0.0) || !(gravity > 0.0f) || !(dt > 0.0f))
        return false;
    double time = sqrt(2.0 * height / (double)gravity);
    double steps = fmax(1.0, floor(time / (double)dt + 0.5)), span = steps * (double)dt;
    out[0] = (float)(((double)to[0] - (double)from[0]) / span);
    out[1] = (float)(height / span + (double)gravity * (double)dt * (steps + 1.0) * 0.5);
    out[2] = (float)(((double)to[2] - (double)from[2]) / span);
    return true;
}

static uint32_t index_of_body(const game *g, uint32_t body, unsigned long long tag, uint32_t count)
{
    uint64_t u = kcc_world_body_user_data(g->world, body);
    if ((u >> 32) != tag || (uint32_t)u >= count)
        return UINT32_MAX;
    return (uint32_t)u;
}

uint32_t game_mover_of_body(const game *g, uint32_t body)
{
    return index_of_body(g, body, TAG_MOVER, g->mover_count);
}

uint32_t game_trigger_of_body(const game *g, uint32_t body)
{
    return index_of_body(g, body, TAG_TRIGGER, g->trigger_count);
}

/* ------------------------------------------------------------------ the triggers' rules */

/* A character entered trigger t: jump pads launch it, teleporters mark it (moved after the events
 * are read: removing a character ends the events array's life). */
static void trigger_entered(game *g, game_trigger *t, uint32_t trigger, uint32_t character_id)
{
    uint32_t c = game_character_of_id(g, character_id);
    if (c == UINT32_MAX || !t->has_target)
        return;
    if (t->kind == GAME_TRIGGER_PUSH) {
        g->characters[c].pad = trigger + 1;
        g->characters[c].launches++;
        g->stats.launches++;
        game_character_launch(g, c, t->target);
    }
    else if (t->kind == GAME_TRIGGER_TELEPORT)
        g->characters[c].teleport = trigger + 1;
}

/* What stays inside a trigger keeps acting: door triggers open their door (Touch_DoorTrigger: unless
 * it is already opening), plat triggers send a plat at the bottom up, trigger_multiple fires its
 * targets every `wait` seconds. */
static void trigger_occupied(game *g, game_trigger *t)
{
    if (t->kind == GAME_TRIGGER_DOOR && g->movers[t->mover].state != GAME_TO_POS2)
        game_mover_use(g, t->mover);
    else if (t->kind == GAME_TRIGGER_PLAT && g->movers[t->mover].state == GAME_AT_POS1)
        game_mover_use(g, t->mover);
    else if (t->kind == GAME_TRIGGER_MULTIPLE && t->cooldown <= 0.0f) {
        game_fire_targets(g, t->target_name);
        t->cooldown = t->wait;
    }
}

void game_triggers_apply(game *g, float dt)
{
    const kcc_sensor_event *ev = NULL;
    uint32_t n = kcc_world_sensor_events(g->world, &ev, NULL);
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t t = game_trigger_of_body(g, ev[i].sensor);
        if (t == UINT32_MAX)
            continue;
        game_trigger *tr = &g->triggers[t];
        if (!ev[i].entered) {
            tr->inside -= tr->inside > 0;
            uint32_t c = game_character_of_id(g, ev[i].character);
            if (c != UINT32_MAX && g->characters[c].pad == t + 1)
                g->characters[c].pad = 0;
            continue;
        }
        tr->inside++;
        trigger_entered(g, tr, t, ev[i].character);
    }
    for (uint32_t i = 0; i < g->trigger_count; ++i) {
        game_trigger *tr = &g->triggers[i];
        tr->cooldown -= dt;
        if (tr->inside > 0)
            trigger_occupied(g, tr);
    }
    for (uint32_t c = 0; c < g->character_count; ++c)
        if (g->characters[c].pad && g->triggers[g->characters[c].pad - 1].has_target)
            game_character_launch(g, c, g->triggers[g->characters[c].pad - 1].target);
}
