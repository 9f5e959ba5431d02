/* demo/docs_images_world.c: the pictures of docs/world.md, drawn from a real world: one step of
 * riding, pushing and solid characters (world_step.png), and the broadphase's proxies and the step's
 * neighbour lists over a generated arena (world_broadphase.png, read from the world's private layout). */
#include "docs_images.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "box_mesh.h"
#include "kcc_world_internal.h"
#include "world_internal.h"

/* ------------------------------------------------------------------ the world's triangles */

/* Every live body's placed triangles (sensors left out), three corners each: *out (malloc), count. */
static uint32_t placed_triangles(const kcc_world *w, float **out)
{
    uint32_t total = 0;
    for (uint32_t i = 0; i < w->body_end; ++i)
        if (w->bodies[i].mesh && !w->bodies[i].sensor)
            total += kcc_mesh_triangle_count(w->bodies[i].mesh);
    float *pos = malloc(sizeof(float) * 9 * (total + 1));
    uint32_t n = 0;
    for (uint32_t i = 0; pos && i < w->body_end; ++i) {
        const kcc_body *b = &w->bodies[i];
        if (!b->mesh || b->sensor)
            continue;
        for (uint32_t t = 0; t < kcc_mesh_triangle_count(b->mesh); ++t) {
            vec3 c[3];
            if (!kcc_mesh_triangle(b->mesh, t, c))
                continue;
            for (int k = 0; k < 3; ++k)
                kcc_transform_point(&b->pose.transform, c[k], &pos[9 * n + 3 * (uint32_t)k]);
            ++n;
        }
    }
    *out = pos;
    return pos ? n : 0;
}

/* ------------------------------------------------------------------ world_step.png */

typedef struct step_scene {
    kcc_world *world;
    kcc_mesh  *floor, *lift, *door, *mesh_to_free[3];
    uint32_t   lift_id, door_id;
    uint32_t   rider, pushed, walker, blocker;
    kcc_character_state before[4];
    float      after[4][3];      /* m, centres at the step's end */
} step_scene;

static bool step_scene_make(step_scene *s)
{
    memset(s, 0, sizeof *s);
    if (demo_box_mesh((float[3]){-6.5f, -0.2f, -2.5f}, (float[3]){6.0f, 0.0f, 2.5f}, &s->floor) ||
        demo_box_mesh((float[3]){-1.0f, 0.0f, -1.0f}, (float[3]){1.0f, 0.3f, 1.0f}, &s->lift) ||
        demo_box_mesh((float[3]){-0.15f, 0.0f, -1.0f}, (float[3]){0.15f, 2.2f, 1.0f}, &s->door) ||
        kcc_world_create(NULL, &s->world) != KCC_OK)
        return false;
    uint32_t floor_id;
    kcc_body_desc bd = kcc_body_default_desc();
    kcc_world_add_body(s->world, s->floor, &bd, &floor_id);
    bd.kind = KCC_BODY_KINEMATIC;
    bd.transform.position[0] = -4.5f;
    kcc_world_add_body(s->world, s->lift, &bd, &s->lift_id);
    bd.transform.position[0] = -1.2f;
    kcc_world_add_body(s->world, s->door, &bd, &s->door_id);
    const kcc_character_desc d = kcc_character_default_desc();
    const float y = d.half_extents[1] + d.skin_width;
    kcc_world_add_character(s->world, &d, (vec3){-4.5f, 0.3f + y, 0.0f}, &s->rider);
    kcc_world_add_character(s->world, &d, (vec3){-0.6f, y, 0.0f}, &s->pushed);
    kcc_world_add_character(s->world, &d, (vec3){4.4f, y, 0.0f}, &s->walker);
    kcc_world_add_character(s->world, &d, (vec3){2.6f, y, 0.0f}, &s->blocker);
    return kcc_world_step(s->world) == KCC_OK; /* everyone settles on the ground */
}

static void step_scene_free(step_scene *s)
{
    kcc_world_destroy(s->world);
    kcc_mesh_destroy(s->floor);
    kcc_mesh_destroy(s->lift);
    kcc_mesh_destroy(s->door);
}

/* The pictured step: the lift rises 0.8 m, the door slides 0.8 m into a character, the walker
 * walks 1.2 m into a character standing still. */
static void step_scene_run(step_scene *s)
{
    kcc_transform t = kcc_transform_identity();
    t.position[0] = -4.5f;
    t.position[1] = 0.8f;
    kcc_world_move_body(s->world, s->lift_id, &t);
    t.position[0] = -0.4f;
    t.position[1] = 0.0f;
    kcc_world_move_body(s->world, s->door_id, &t);
    kcc_world_set_displacement(s->world, s->walker, (vec3){-1.6f, -0.01f, 0.0f});
    const uint32_t ids[4] = {s->rider, s->pushed, s->walker, s->blocker};
    for (int i = 0; i < 4; ++i)
        kcc_world_get_character(s->world, ids[i], &s->before[i], NULL);
    kcc_world_step(s->world);
}

/* A character's box before the step (grey) and after it (yellow), with what moved it. */
static void draw_character(picture *p, const kcc_world *w, uint32_t id, const kcc_character_state *before,
                           float out_after[3], kcc_move_result *out)
{
    const kcc_character_desc d = kcc_character_default_desc();
    kcc_character_state after;
    kcc_world_get_character(w, id, &after, out);
    memcpy(out_after, after.position, sizeof after.position);
    float b0[2][3], b1[2][3];
    box_at(&d, before->position, b0);
    box_at(&d, after.position, b1);
    raster_draw_box(&p->img, &p->view, (const float(*)[3])b0, C_BEFORE, 1);
    raster_draw_box(&p->img, &p->view, (const float(*)[3])b1, C_AFTER, 2);
}

static void step_labels(picture *p, const step_scene *s, const kcc_move_result r[4])
{
    char text[96];
    const float *at = s->before[0].position;
    const float lift_top[3] = {at[0] - 1.0f, 1.1f, 1.0f};
    arrow(p, at, r[0].carried, C_P1);
    snprintf(text, sizeof text, "1 ride: carried %.2f m up", (double)r[0].carried[1]);
    label(p, lift_top, -40, 14, text, C_P1);
    at = s->before[1].position;
    const float shove[3] = {s->after[1][0] - at[0], 0.0f, 0.0f}; /* before its own (still) move */
    arrow(p, at, shove, C_SLIDE);
    snprintf(text, sizeof text, "2 push: the door shoves it %.2f m", (double)shove[0]);
    label(p, (float[3]){at[0], 2.3f, 0.0f}, -150, -26, text, C_SLIDE);
    at = s->before[2].position;
    const float low[3] = {at[0], at[1] - 0.4f, at[2]};
    arrow(p, low, (float[3]){-1.6f, 0.0f, 0.0f}, C_MISS);
    arrow(p, at, r[2].moved, C_WALK);
    snprintf(text, sizeof text, "3 move: asks 1.60 m, goes %.2f m", (double)-r[2].moved[0]);
    label(p, (float[3]){at[0], 2.0f, 0.0f}, -150, -40, text, C_WALK);
    label(p, (float[3]){s->before[3].position[0], 0.0f, 0.0f}, -80, 14, "4 solid: a box to the others", C_TEXT);
}

static bool world_step_picture(const char *dir)
{
    step_scene s;
    bool ok = step_scene_make(&s);
    float *pos = NULL;
    const uint32_t n = ok ? (step_scene_run(&s), placed_triangles(s.world, &pos)) : 0;
    picture p;
    const float frame[2][3] = {{-6.0f, 0.0f, -1.5f}, {5.5f, 2.4f, 1.5f}};
    ok = ok && n > 0 && picture_begin(&p, pos, n, frame, -10.0f, 14.0f);
    if (ok) {
        const uint32_t ids[4] = {s.rider, s.pushed, s.walker, s.blocker};
        kcc_move_result r[4];
        for (int i = 0; i < 4; ++i)
            draw_character(&p, s.world, ids[i], &s.before[i], s.after[i], &r[i]);
        step_labels(&p, &s, r);
        title(&p, "One world step", "bodies move; riders ride, movers push; then every character moves");
        legend(&p, C_BEFORE, "box at the step's start (what the others see)");
        legend(&p, C_AFTER, "box at the step's end");
        legend(&p, C_MISS, "displacement asked for");
        ok = picture_end(&p, dir, "world_step.png");
    }
    free(pos);
    step_scene_free(&s);
    return ok;
}

/* ------------------------------------------------------------------ world_broadphase.png */

/* Every proxy's box (the pieces of the bodies in the broadphase), those near a character in blue,
 * every character's box, and a line between two characters near each other (the step's neighbour
 * lists, found through the grid of the step regions). */
static void draw_broadphase(picture *p, const kcc_world *w, const struct kcc_world_characters *cs, float top)
{
    for (uint32_t i = 0; i < w->body_end; ++i)
        for (uint32_t k = w->bodies[i].mesh ? w->bodies[i].first_piece : KCC_WORLD_NO_PIECE;
             k != KCC_WORLD_NO_PIECE; k = w->pieces[k].next)
            raster_draw_box(&p->img, &p->view, (const float(*)[3])w->pieces[k].bounds, C_DIM, 2);
    for (uint32_t i = 0; i < cs->live_count && !cs->near.all; ++i) { /* the step's neighbour lists */
        const uint32_t c = cs->live[i];
        const uint32_t *e = cs->near.entries + cs->near.first[c];
        const float *a = cs->slots[c].ch.position;
        for (uint32_t k = 0; k < cs->near.count[c]; ++k) {
            if (k < cs->near.pieces[c]) {
                raster_draw_box(&p->img, &p->view, (const float(*)[3])w->pieces[e[k]].bounds, C_P1, 2);
            } else if (e[k] > c) { /* each two characters once */
                const float *b = cs->slots[e[k]].ch.position;
                const float from[3] = {a[0], top, a[2]}, to[3] = {b[0], top, b[2]};
                raster_draw_line(&p->img, &p->view, from, to, C_SLIDE, 3);
            }
        }
    }
    const kcc_character_desc d = kcc_character_default_desc();
    for (uint32_t i = 0; i < cs->ids.end; ++i) {
        if (!cs->slots[i].live)
            continue;
        float b[2][3];
        box_at(&d, cs->slots[i].ch.position, b);
        raster_draw_box(&p->img, &p->view, (const float(*)[3])b, C_AFTER, 2);
    }
}

enum { CRATES = 4 };

/* The arena as a static body, CRATES kinematic crates (the last a sensor) beside its first spawns,
 * and characters in pairs at the spawns, after one step. crates[] gets the crates' meshes. */
static bool broadphase_world(const kcc_mesh *level, const kcc_level *lv, kcc_mesh *crates[CRATES],
                             kcc_world **out)
{
    if (kcc_world_create(NULL, out) != KCC_OK)
        return false;
    uint32_t body, id;
    bool ok = kcc_world_add_body(*out, level, NULL, &body) == KCC_OK;
    const kcc_character_desc d = kcc_character_default_desc();
    for (uint32_t i = 0; ok && i < CRATES && i < lv->spawn_count; ++i) {
        const float *sp = &lv->spawns[3 * i];
        const float lo[3] = {sp[0] - 0.3f, sp[1], sp[2] + 0.6f}, hi[3] = {lo[0] + 1.5f, lo[1] + 1.5f, lo[2] + 1.5f};
        kcc_body_desc bd = kcc_body_default_desc();
        bd.kind = KCC_BODY_KINEMATIC;
        bd.sensor = i == CRATES - 1;
        ok = demo_box_mesh(lo, hi, &crates[i]) == KCC_OK && kcc_world_add_body(*out, crates[i], &bd, &body) == KCC_OK;
    }
    for (uint32_t i = 0; ok && i < lv->spawn_count && i < 12; ++i) {
        const float *sp = &lv->spawns[3 * i];
        kcc_world_add_character(*out, &d, (vec3){sp[0], sp[1] + d.half_extents[1] + 0.05f, sp[2]}, &id);
        kcc_world_add_character(*out, &d, (vec3){sp[0] + 0.8f, sp[1] + d.half_extents[1] + 0.05f, sp[2]}, &id);
    }
    return ok && kcc_world_step(*out) == KCC_OK;
}

/* The corner of the arena around its first spawns. */
static void broadphase_frame(const kcc_mesh *level, const kcc_level *lv, vec3 frame[2])
{
    kcc_mesh_bounds(level, frame);
    const float *sp = lv->spawns;
    const vec3 lo = {sp[0] - 4.0f, frame[0][1], sp[2] - 4.0f}, hi = {sp[0] + 12.0f, frame[1][1], sp[2] + 6.0f};
    memcpy(frame[0], lo, sizeof lo);
    memcpy(frame[1], hi, sizeof hi);
}

static bool world_broadphase_picture(const char *dir)
{
    kcc_level lv;
    char err[256];
    kcc_mesh *level = NULL, *crates[CRATES] = {NULL};
    kcc_world *w = NULL;
    float *pos = NULL;
    if (kcc_level_generate("arena seed=2", &lv, err, sizeof err) != KCC_OK)
        return false;
    bool ok = kcc_level_build_mesh(&lv, &level) == KCC_OK && lv.spawn_count > 0 &&
              broadphase_world(level, &lv, crates, &w);
    const uint32_t n = ok ? placed_triangles(w, &pos) : 0;
    picture p;
    vec3 frame[2];
    if (ok)
        broadphase_frame(level, &lv, frame);
    ok = ok && n > 0 && picture_begin(&p, pos, n, (const float(*)[3])frame, 0.0f, 90.0f);
    if (ok) {
        draw_broadphase(&p, w, kcc_world_characters(w), frame[1][1] + 0.5f);
        char text[120];
        snprintf(text, sizeof text, "a %u-triangle static level, %u proxies (%d crates), %u characters",
                 kcc_mesh_triangle_count(level), w->piece_count, CRATES, kcc_world_character_count(w));
        title(&p, "The broadphase", text);
        legend(&p, C_DIM, "proxies: the kinematic crates and the sensor (static bodies stay out)");
        legend(&p, C_AFTER, "characters");
        legend(&p, C_P1, "proxy near a character: its step may reach it");
        legend(&p, C_SLIDE, "two characters near each other (the region grid)");
        ok = picture_end(&p, dir, "world_broadphase.png");
    }
    free(pos);
    kcc_world_destroy(w);
    for (int i = 0; i < CRATES; ++i)
        kcc_mesh_destroy(crates[i]);
    kcc_mesh_destroy(level);
    kcc_level_free(&lv);
    return ok;
}

bool make_world_pictures(const char *dir)
{
    const bool step = world_step_picture(dir);
    return world_broadphase_picture(dir) && step;
}
