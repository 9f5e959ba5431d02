/* test_world_step.c: owns the tests of characters in a world (controller/world_step.c and the
 * world's neighbourhood source, collide/world_source.c): character ids and displacements, moves
 * through one identity body against kcc_character_move on its mesh (bit for bit), through placed
 * bodies against the same triangles built as one mesh, and ground bodies. */
#include "test.h"

#include <pthread.h>

#include <cglm/cglm.h>

#include "kcc_world_internal.h"
#include "world_internal.h"

static test_rng rng_seed(uint64_t seed)
{
    return rng_seed_salted(seed, 0x2718281828ull);
}

/* The arena player of the benchmarks (0.94 x 1.75 x 0.94 m, 0.5625 m steps). */
static kcc_character_desc player_desc(void)
{
    kcc_character_desc d = kcc_character_default_desc();
    d.half_extents[0] = d.half_extents[2] = 0.47f;
    d.half_extents[1] = 0.875f;
    d.step_height = 0.5625f;
    return d;
}

/* A shared level when present, else a generated arena. */
static kcc_mesh *open_level(kcc_level *lv)
{
    const char *path = kcc_test_shared_level(1);
    char err[256];
    kcc_status st = path ? kcc_level_load_obj(path, lv, err, sizeof err)
                         : kcc_level_generate("arena seed=5", lv, err, sizeof err);
    assert_int_equal(st, KCC_OK);
    kcc_mesh *m = NULL;
    assert_int_equal(kcc_level_build_mesh(lv, &m), KCC_OK);
    return m;
}

/* The displacement of wanderer c at frame f: walking, turning now and then, jumping, with
 * gravity (vy carries the vertical speed between frames). */
static void wander(int c, int f, bool on_ground, float *vy, vec3 out)
{
    const float heading = 0.9f * (float)c + 2.1f * (float)(f / 45);
    *vy = on_ground ? ((f + c) % 97 == 0 ? 8.0f : 0.0f) : *vy - 25.0f / 60.0f;
    out[0] = 6.0f / 60.0f * cosf(heading);
    out[1] = *vy / 60.0f;
    out[2] = 6.0f / 60.0f * sinf(heading);
}

static kcc_world *world_with(uint32_t bodies, uint32_t characters)
{
    kcc_world_desc d = kcc_world_default_desc();
    d.body_capacity = bodies;
    d.character_capacity = characters;
    kcc_world *w = NULL;
    assert_int_equal(kcc_world_create(&d, &w), KCC_OK);
    return w;
}

/* ------------------------------------------------------------------------------------------------
 * Ids and displacements */

static void world_characters_have_checked_ids_and_displacements(void **state)
{
    (void)state;
    kcc_world *w = world_with(4, 2);
    const kcc_character_desc d = player_desc();
    uint32_t a = 0, b = 0, c = 0;
    assert_int_equal(kcc_world_add_character(w, &d, (vec3){0, 1, 0}, &a), KCC_OK);
    assert_int_equal(kcc_world_add_character(w, NULL, (vec3){5, 1, 0}, &b), KCC_OK);
    assert_true(a != 0 && b != 0 && a != b);
    assert_int_equal(kcc_world_add_character(w, &d, (vec3){9, 1, 0}, &c), KCC_ERR_TOO_LARGE);
    assert_int_equal(kcc_world_character_count(w), 2);
    kcc_character_desc bad = d;
    bad.step_height = -1.0f;
    assert_int_equal(kcc_world_remove_character(w, b), KCC_OK);
    assert_int_equal(kcc_world_add_character(w, &bad, (vec3){9, 1, 0}, &c), KCC_ERR_BAD_DESC);
    assert_int_equal(kcc_world_add_character(w, &d, (vec3){NAN, 1, 0}, &c), KCC_ERR_NON_FINITE);
    assert_int_equal(kcc_world_remove_character(w, b), KCC_ERR_NOT_FOUND);
    assert_int_equal(kcc_world_set_displacement(w, b, (vec3){1, 0, 0}), KCC_ERR_NOT_FOUND);
    assert_int_equal(kcc_world_get_character(w, b, NULL, NULL), KCC_ERR_NOT_FOUND);
    assert_int_equal(kcc_world_get_character(w, 0, NULL, NULL), KCC_ERR_NOT_FOUND);
    assert_int_equal(kcc_world_get_character(NULL, a, NULL, NULL), KCC_ERR_NULL_ARGUMENT);
    /* a refused displacement leaves none: the step moves by zero (an empty world: nothing to fall
       onto, the character falls only by what it is given) */
    assert_int_equal(kcc_world_set_displacement(w, a, (vec3){0.5f, 0, 0}), KCC_OK);
    assert_int_equal(kcc_world_set_displacement(w, a, (vec3){NAN, 0, 0}), KCC_ERR_NON_FINITE);
    assert_int_equal(kcc_world_set_displacement(w, a, (vec3){2e4f, 0, 0}), KCC_ERR_BAD_DESC);
    assert_int_equal(kcc_world_step(w), KCC_OK);
    kcc_character_state s;
    kcc_move_result r;
    assert_int_equal(kcc_world_get_character(w, a, &s, &r), KCC_OK);
    assert_true(s.position[0] == 0.0f && s.position[1] == 1.0f && !s.on_ground);
    /* a displacement is used by the next step only */
    assert_int_equal(kcc_world_set_displacement(w, a, (vec3){0.5f, 0, 0}), KCC_OK);
    assert_int_equal(kcc_world_step(w), KCC_OK);
    assert_int_equal(kcc_world_step(w), KCC_OK);
    assert_int_equal(kcc_world_get_character(w, a, &s, NULL), KCC_OK);
    assert_true(s.position[0] == 0.5f);
    kcc_world_destroy(w);
}

/* A character is added no farther out than a teleport may put it (KCC_WORLD_MAX_POSITION): one
 * at 1e30 or 3e38 m was accepted and the next step read past the neighbour grid's buckets (its
 * cells clamped, a query spanning a billion rows). One at the limit itself steps. */
static void a_character_beyond_the_largest_position_is_refused(void **state)
{
    (void)state;
    kcc_world *w = world_with(4, 4);
    uint32_t near = 0, far = 0, refused = 0;
    assert_int_equal(kcc_world_add_character(w, NULL, (vec3){0, 1, 0}, &near), KCC_OK);
    const vec3 beyond[] = {{3e38f, 1, 0}, {0, -1e30f, 0}, {0, 1, 2e18f}, {-3.4e38f, -3.4e38f, 0}};
    for (size_t i = 0; i < sizeof beyond / sizeof beyond[0]; ++i)
        assert_int_equal(kcc_world_add_character(w, NULL, beyond[i], &refused), KCC_ERR_BAD_DESC);
    assert_int_equal(kcc_world_character_count(w), 1);
    assert_int_equal(kcc_world_add_character(w, NULL, (vec3){KCC_WORLD_MAX_POSITION, 1, 0}, &far), KCC_OK);
    assert_int_equal(kcc_world_set_displacement(w, far, (vec3){1e4f, 0, 0}), KCC_OK);
    assert_int_equal(kcc_world_step(w), KCC_OK);
    kcc_character_state s;
    assert_int_equal(kcc_world_get_character(w, far, &s, NULL), KCC_OK);
    assert_true(s.position[0] == KCC_WORLD_MAX_POSITION); /* 1e4 m is below half its ulp there */
    assert_true(s.position[1] == 1.0f && s.position[2] == 0.0f);
    kcc_world_destroy(w);
}

/* ------------------------------------------------------------------------------------------------
 * Moves through bodies */

/* A level added as one static body at the identity: every character moves exactly as
 * kcc_character_move moves it on the level's mesh, flags, ground and triangle ids included, and
 * its ground body is the level. */
static void world_of_one_identity_body_moves_as_the_mesh(void **state)
{
    (void)state;
    kcc_level lv;
    kcc_mesh *m = open_level(&lv);
    const kcc_character_desc d = player_desc();
    enum { N = 6, FRAMES = 400 };
    kcc_world *w = world_with(4, N);
    uint32_t level = 0, ids[N];
    assert_int_equal(kcc_world_add_body(w, m, NULL, &level), KCC_OK);
    kcc_character solo[N];
    float vy[N];
    for (int c = 0; c < N; ++c) {
        const float *sp = &lv.spawns[3 * (uint32_t)(c % (int)lv.spawn_count)];
        const vec3 at = {sp[0], sp[1] + d.half_extents[1] + 0.01f, sp[2]};
        assert_int_equal(kcc_character_init(&solo[c], &d, at), KCC_OK);
        assert_int_equal(kcc_world_add_character(w, &d, at, &ids[c]), KCC_OK);
        vy[c] = 0.0f;
    }
    long grounded = 0;
    for (int f = 0; f < FRAMES; ++f) {
        kcc_move_result want[N];
        for (int c = 0; c < N; ++c) {
            vec3 disp;
            wander(c, f, solo[c].on_ground, &vy[c], disp);
            kcc_character_move(&solo[c], m, disp, &want[c]);
            assert_int_equal(kcc_world_set_displacement(w, ids[c], disp), KCC_OK);
        }
        assert_int_equal(kcc_world_step(w), KCC_OK);
        for (int c = 0; c < N; ++c) {
            kcc_character_state s;
            kcc_move_result got;
            assert_int_equal(kcc_world_get_character(w, ids[c], &s, &got), KCC_OK);
            assert_memory_equal(s.position, solo[c].position, sizeof(vec3));
            assert_int_equal(got.flags, want[c].flags);
            assert_int_equal(got.branch, want[c].branch);
            assert_true(got.carried_rotation[3] == 1.0f && want[c].carried_rotation[3] == 1.0f);
            if (want[c].flags & KCC_MOVE_ON_GROUND) {
                assert_int_equal(got.ground_triangle, want[c].ground_triangle);
                assert_int_equal(got.ground_body, level);
                assert_int_equal(s.ground_body, level);
                ++grounded;
            }
        }
    }
    assert_true(grounded > N * FRAMES / 2);
    kcc_world_destroy(w);
    kcc_mesh_destroy(m);
    kcc_level_free(&lv);
}

/* A random rigid transform with a rotation about the vertical (a level stays a level). */
static kcc_transform random_yaw_transform(test_rng *r)
{
    const double yaw = rng_f(r, -3.14159f, 3.14159f);
    kcc_transform t = {{rng_f(r, -40, 40), rng_f(r, -5, 5), rng_f(r, -40, 40)},
                       {0.0f, (float)sin(0.5 * yaw), 0.0f, (float)cos(0.5 * yaw)}};
    return t;
}

/* The level moved into a frame of its own (each vertex by the inverse of a transform, in double)
 * and placed back by that transform as a body: characters walk on it as on the level, within the
 * rounding of the round trip, ending on the ground as often. */
static void world_placed_body_moves_as_the_level(void **state)
{
    (void)state;
    kcc_level lv;
    kcc_mesh *m = open_level(&lv);
    test_rng r = rng_seed(4);
    const kcc_transform t = random_yaw_transform(&r);
    const double yaw2 = 2.0 * atan2(t.rotation[1], t.rotation[3]);
    float *local = malloc(sizeof(float) * 3 * lv.vertex_count);
    for (uint32_t v = 0; v < lv.vertex_count; ++v) { /* R^T (p - t), R a yaw */
        const double dx = lv.positions[3 * v] - (double)t.position[0];
        const double dz = lv.positions[3 * v + 2] - (double)t.position[2];
        local[3 * v] = (float)(cos(yaw2) * dx - sin(yaw2) * dz);
        local[3 * v + 1] = (float)(lv.positions[3 * v + 1] - (double)t.position[1]);
        local[3 * v + 2] = (float)(sin(yaw2) * dx + cos(yaw2) * dz);
    }
    kcc_mesh_desc md = {0};
    md.positions = local;
    md.vertex_count = lv.vertex_count;
    md.indices = lv.indices;
    md.triangle_count = lv.triangle_count;
    kcc_mesh *placed = NULL;
    assert_int_equal(kcc_mesh_build(&md, &placed), KCC_OK);
    enum { N = 6, FRAMES = 300 };
    kcc_world *w = world_with(4, N);
    kcc_body_desc bd = kcc_body_default_desc();
    bd.transform = t;
    uint32_t body, ids[N];
    assert_int_equal(kcc_world_add_body(w, placed, &bd, &body), KCC_OK);
    const kcc_character_desc d = player_desc();
    kcc_character solo[N];
    float vy[N];
    for (int c = 0; c < N; ++c) {
        const float *sp = &lv.spawns[3 * (uint32_t)(c % (int)lv.spawn_count)];
        const vec3 at = {sp[0], sp[1] + d.half_extents[1] + 0.01f, sp[2]};
        assert_int_equal(kcc_character_init(&solo[c], &d, at), KCC_OK);
        assert_int_equal(kcc_world_add_character(w, &d, at, &ids[c]), KCC_OK);
        vy[c] = 0.0f;
    }
    long agree = 0, total = 0;
    for (int f = 0; f < FRAMES; ++f) {
        for (int c = 0; c < N; ++c) {
            vec3 disp;
            wander(c, f, solo[c].on_ground, &vy[c], disp);
            kcc_character_move(&solo[c], m, disp, NULL);
            assert_int_equal(kcc_world_set_displacement(w, ids[c], disp), KCC_OK);
        }
        assert_int_equal(kcc_world_step(w), KCC_OK);
        for (int c = 0; c < N; ++c) {
            kcc_character_state s;
            assert_int_equal(kcc_world_get_character(w, ids[c], &s, NULL), KCC_OK);
            const float gap = glm_vec3_distance(s.position, solo[c].position);
            agree += gap < 1e-3f && s.on_ground == solo[c].on_ground;
            ++total;
            if (s.on_ground)
                assert_int_equal(s.ground_body, body);
        }
    }
    /* a rounding-sized difference could send a wanderer the other way at a ledge's lip and the
       two walks part (on the shared level every frame agrees) */
    assert_true(agree >= total * 98 / 100);
    kcc_world_destroy(w);
    kcc_mesh_destroy(placed);
    kcc_mesh_destroy(m);
    kcc_level_free(&lv);
    free(local);
}

/* ------------------------------------------------------------------------------------------------
 * Movers: lifts, platforms, turntables, doors */

typedef struct mover_scene {
    kcc_world *world;
    kcc_mesh  *floor, *platform;
    uint32_t   floor_id, platform_id;
} mover_scene;

/* A 40 x 40 m floor slab (top at y = 0) and a kinematic platform 2 half x 0.5 x 2 half m whose
 * local top is at y = 0.5 around its origin, placed at `at`. */
static mover_scene mover_scene_sized(const vec3 at, float half)
{
    mover_scene s;
    s.world = world_with(8, 8);
    s.floor = test_box_mesh((float[3]){-20, -1, -20}, (float[3]){20, 0, 20});
    s.platform = test_box_mesh((float[3]){-half, 0, -half}, (float[3]){half, 0.5f, half});
    assert_int_equal(kcc_world_add_body(s.world, s.floor, NULL, &s.floor_id), KCC_OK);
    kcc_body_desc bd = kcc_body_default_desc();
    bd.kind = KCC_BODY_KINEMATIC;
    glm_vec3_copy((float *)at, bd.transform.position);
    assert_int_equal(kcc_world_add_body(s.world, s.platform, &bd, &s.platform_id), KCC_OK);
    return s;
}

/* mover_scene_sized with a 4 x 0.5 x 4 m platform. */
static mover_scene mover_scene_make(const vec3 at)
{
    return mover_scene_sized(at, 2.0f);
}

static void mover_scene_free(mover_scene *s)
{
    kcc_world_destroy(s->world);
    kcc_mesh_destroy(s->floor);
    kcc_mesh_destroy(s->platform);
}

/* A player standing on the platform at (x, top, z), settled by one step. */
static uint32_t stand_on(mover_scene *s, float x, float top, float z)
{
    const kcc_character_desc d = player_desc();
    uint32_t id;
    assert_int_equal(kcc_world_add_character(s->world, &d, (vec3){x, top + d.half_extents[1] + 0.01f, z}, &id),
                     KCC_OK);
    assert_int_equal(kcc_world_set_displacement(s->world, id, (vec3){0, -0.05f, 0}), KCC_OK);
    assert_int_equal(kcc_world_step(s->world), KCC_OK);
    return id;
}

static kcc_character_state state_of(const kcc_world *w, uint32_t id, kcc_move_result *r)
{
    kcc_character_state st;
    assert_int_equal(kcc_world_get_character(w, id, &st, r), KCC_OK);
    return st;
}

/* A lift going up 3 m and down again, at 2 and at 12 m/s (60 steps a second), carries its rider:
 * after every step the feet rest on the lift's top (a skin above it, within 1 cm), on the ground,
 * the lift its ground body, carried by the lift's own motion of the step (speed / 60 m). */
static void character_rides_a_lift_up_and_down(void **state)
{
    (void)state;
    const float speeds[2] = {2.0f, 12.0f};
    for (int v = 0; v < 2; ++v) {
        mover_scene s = mover_scene_make((vec3){0, 0, 0});
        const uint32_t id = stand_on(&s, 0.0f, 0.5f, 0.0f);
        const float half = player_desc().half_extents[1], per_step = speeds[v] / 60.0f;
        const int rise = (int)lroundf(3.0f / per_step); /* steps to the top */
        for (int f = 1; f <= 2 * rise; ++f) {
            const float y = per_step * (float)(f <= rise ? f : 2 * rise - f);
            kcc_transform t = kcc_transform_identity();
            t.position[1] = y;
            assert_int_equal(kcc_world_move_body(s.world, s.platform_id, &t), KCC_OK);
            assert_int_equal(kcc_world_set_displacement(s.world, id, (vec3){0, -9.81f / 3600.0f, 0}), KCC_OK);
            assert_int_equal(kcc_world_step(s.world), KCC_OK);
            kcc_move_result r;
            const kcc_character_state st = state_of(s.world, id, &r);
            const float feet = st.position[1] - half;
            assert_true(st.on_ground);
            assert_int_equal(st.ground_body, s.platform_id);
            assert_true(fabsf(feet - (y + 0.5f)) < 0.01f);
            assert_false(r.flags & KCC_MOVE_CRUSHED);
            assert_int_equal(r.carried_body, s.platform_id); /* carried, not pushed out or snapped */
            assert_true(fabsf(r.carried[1] - (f <= rise ? per_step : -per_step)) < 1e-4f);
        }
        mover_scene_free(&s);
    }
}

/* A platform sliding sideways carries its rider along. */
static void character_rides_a_sliding_platform(void **state)
{
    (void)state;
    mover_scene s = mover_scene_make((vec3){0, 0.2f, 0});
    const uint32_t id = stand_on(&s, 0.5f, 0.7f, 0.0f);
    const kcc_character_state first = state_of(s.world, id, NULL);
    for (int f = 1; f <= 100; ++f) {
        kcc_transform t = kcc_transform_identity();
        t.position[0] = 0.08f * (float)f;
        t.position[1] = 0.2f;
        assert_int_equal(kcc_world_move_body(s.world, s.platform_id, &t), KCC_OK);
        assert_int_equal(kcc_world_step(s.world), KCC_OK);
        kcc_move_result r;
        const kcc_character_state st = state_of(s.world, id, &r);
        assert_true(fabsf(st.position[0] - (first.position[0] + t.position[0])) < 0.01f);
        assert_true(st.on_ground && st.ground_body == s.platform_id);
        assert_int_equal(r.carried_body, s.platform_id);
        assert_true(r.carried_rotation[3] == 1.0f); /* slid, never turned */
    }
    mover_scene_free(&s);
}

/* A turntable (8 x 8 m) turning 90 degrees a second, stepped 30 and 60 times a second, brings a
 * rider standing 3 m from its axis back to where it stood after one turn (4 s), a quarter of the
 * way round after 1 s, and keeps it on the table 3 m out all the way (within 2 cm); each step's
 * carried rotation is the table's turn of the step about +Y. */
static void character_comes_round_on_a_turntable(void **state)
{
    (void)state;
    const int rates[2] = {30, 60};
    for (int k = 0; k < 2; ++k) {
        const int hz = rates[k];
        mover_scene s = mover_scene_sized((vec3){0, 0.2f, 0}, 4.0f);
        const uint32_t id = stand_on(&s, 3.0f, 0.7f, 0.0f);
        const kcc_character_state first = state_of(s.world, id, NULL);
        const double step = 0.5 * 3.14159265358979 / hz; /* the table's turn a step */
        for (int f = 1; f <= 4 * hz; ++f) {
            const double angle = step * f;
            kcc_transform t = {{0, 0.2f, 0}, {0, (float)sin(0.5 * angle), 0, (float)cos(0.5 * angle)}};
            assert_int_equal(kcc_world_move_body(s.world, s.platform_id, &t), KCC_OK);
            assert_int_equal(kcc_world_step(s.world), KCC_OK);
            kcc_move_result r;
            const kcc_character_state st = state_of(s.world, id, &r);
            const float radius = sqrtf(st.position[0] * st.position[0] + st.position[2] * st.position[2]);
            assert_true(st.on_ground && st.ground_body == s.platform_id);
            assert_true(fabsf(radius - 3.0f) < 0.02f);
            if (f == hz) /* a quarter turn about +Y takes +X to -Z */
                assert_true(fabsf(st.position[0]) < 0.02f && fabsf(st.position[2] + 3.0f) < 0.02f);
            assert_true(fabsf(r.carried_rotation[1] - (float)sin(0.5 * step)) < 1e-5f);
            assert_true(fabsf(r.carried_rotation[3] - (float)cos(0.5 * step)) < 1e-5f);
            assert_true(fabsf(r.carried_rotation[0]) < 1e-6f && fabsf(r.carried_rotation[2]) < 1e-6f);
        }
        const kcc_character_state last = state_of(s.world, id, NULL);
        assert_true(glm_vec3_distance((float *)last.position, (float *)first.position) < 0.02f);
        mover_scene_free(&s);
    }
}

/* Whether box `box` shrunk by the tolerance on every side overlaps a body of w. */
static bool box_inside_a_body(const kcc_world *w, const vec3 box[2])
{
    vec3 inner[2];
    for (int k = 0; k < 3; ++k) {
        inner[0][k] = box[0][k] + KCC_PENETRATION_TOLERANCE;
        inner[1][k] = box[1][k] - KCC_PENETRATION_TOLERANCE;
    }
    return kcc_world_overlap_aabb(w, (const vec3 *)inner, KCC_LAYERS_ALL, NULL, 0) > 0;
}

/* A pendulum platform (4 x 0.5 x 4 m, its top hung 3 m below the pivot) swinging 20 degrees either
 * way about +Z, there and back every 2 s, stepped 60 times a second: its rider, standing at its
 * middle with gravity alone, stays on it (the platform its ground body every step), never inside
 * it, and after each whole swing (the platform back where it started) stands where it stood,
 * within 2 cm. At 20 degrees the top is a walkable slope (the limit is 45); it moves at up to
 * 2 pi / 2 s x 0.35 rad x 3 m = 3.3 m/s and turns at up to 1.1 rad/s. */
static void character_rides_a_pendulum_platform(void **state)
{
    (void)state;
    kcc_world *w = world_with(2, 2);
    kcc_mesh *platform = test_box_mesh((float[3]){-2, -3.5f, -2}, (float[3]){2, -3.0f, 2});
    kcc_body_desc bd = kcc_body_default_desc();
    bd.kind = KCC_BODY_KINEMATIC;
    const vec3 pivot = {0, 4, 0};
    glm_vec3_copy((float *)pivot, bd.transform.position);
    uint32_t body, id;
    assert_int_equal(kcc_world_add_body(w, platform, &bd, &body), KCC_OK);
    const kcc_character_desc d = player_desc();
    const vec3 on_top = {0, 1.0f + d.half_extents[1] + 0.01f, 0}; /* the platform's top at y = 1 */
    assert_int_equal(kcc_world_add_character(w, &d, on_top, &id), KCC_OK);
    assert_int_equal(kcc_world_set_displacement(w, id, (vec3){0, -0.05f, 0}), KCC_OK);
    assert_int_equal(kcc_world_step(w), KCC_OK);
    const kcc_character_state first = state_of(w, id, NULL);
    for (int f = 1; f <= 240; ++f) {
        const double angle = 20.0 * 3.14159265358979 / 180.0 * sin(2.0 * 3.14159265358979 * f / 120.0);
        const kcc_transform t = {{pivot[0], pivot[1], pivot[2]},
                                 {0, 0, (float)sin(0.5 * angle), (float)cos(0.5 * angle)}};
        assert_int_equal(kcc_world_move_body(w, body, &t), KCC_OK);
        assert_int_equal(kcc_world_set_displacement(w, id, (vec3){0, -9.81f / 3600.0f, 0}), KCC_OK);
        assert_int_equal(kcc_world_step(w), KCC_OK);
        const kcc_character_state st = state_of(w, id, NULL);
        assert_true(st.on_ground);
        assert_int_equal(st.ground_body, body);
        vec3 box[2];
        for (int k = 0; k < 3; ++k) {
            box[0][k] = st.position[k] - d.half_extents[k];
            box[1][k] = st.position[k] + d.half_extents[k];
        }
        assert_false(box_inside_a_body(w, (const vec3 *)box));
        if (f % 120 == 0)
            assert_true(glm_vec3_distance((float *)st.position, (float *)first.position) < 0.02f);
    }
    kcc_world_destroy(w);
    kcc_mesh_destroy(platform);
}

/* A lift carrying its rider into a static ceiling stops the rider under it (never through it),
 * and the rider pressed between them is flagged crushed while the lift keeps rising into it. */
static void lift_into_a_ceiling_stops_and_crushes_its_rider(void **state)
{
    (void)state;
    mover_scene s = mover_scene_make((vec3){0, 0, 0});
    kcc_mesh *ceiling = test_box_mesh((float[3]){-3, 3.0f, -3}, (float[3]){3, 3.5f, 3});
    uint32_t ceiling_id;
    assert_int_equal(kcc_world_add_body(s.world, ceiling, NULL, &ceiling_id), KCC_OK);
    const uint32_t id = stand_on(&s, 0.0f, 0.5f, 0.0f);
    const float half = player_desc().half_extents[1];
    bool crushed = false;
    for (int f = 1; f <= 40; ++f) {
        kcc_transform t = kcc_transform_identity();
        t.position[1] = 0.03f * (float)f; /* the top reaches 1.7 m: 1.3 m left under the ceiling */
        assert_int_equal(kcc_world_move_body(s.world, s.platform_id, &t), KCC_OK);
        assert_int_equal(kcc_world_step(s.world), KCC_OK);
        kcc_move_result r;
        const kcc_character_state st = state_of(s.world, id, &r);
        assert_true(st.position[1] + half <= 3.0f + KCC_PENETRATION_TOLERANCE);
        crushed = crushed || (r.flags & KCC_MOVE_CRUSHED);
    }
    assert_true(crushed);
    mover_scene_free(&s);
    kcc_mesh_destroy(ceiling);
}

/* A door (a kinematic slab 0.2 m thick, 3 m high, 4 m wide, across x) at x = door_x on the
 * mover scene's floor, and a player standing at the origin. */
typedef struct door_scene {
    mover_scene   s;
    kcc_mesh     *door;
    kcc_body_desc bd;        /* the door's desc: bd.transform is where it is */
    uint32_t      door_id, character;
} door_scene;

static door_scene door_scene_make(float door_x)
{
    door_scene ds;
    ds.s = mover_scene_make((vec3){0, 50, 0}); /* the platform parked out of the way */
    ds.door = test_box_mesh((float[3]){-0.1f, 0, -2}, (float[3]){0.1f, 3, 2});
    ds.bd = kcc_body_default_desc();
    ds.bd.kind = KCC_BODY_KINEMATIC;
    ds.bd.transform.position[0] = door_x;
    assert_int_equal(kcc_world_add_body(ds.s.world, ds.door, &ds.bd, &ds.door_id), KCC_OK);
    const kcc_character_desc d = player_desc();
    assert_int_equal(kcc_world_add_character(ds.s.world, &d, (vec3){0, d.half_extents[1] + 0.01f, 0},
                                             &ds.character),
                     KCC_OK);
    return ds;
}

/* Moves the door to x (reached during the next step). */
static void door_to(door_scene *ds, float x)
{
    ds->bd.transform.position[0] = x;
    assert_int_equal(kcc_world_move_body(ds->s.world, ds->door_id, &ds->bd.transform), KCC_OK);
}

static void door_scene_free(door_scene *ds)
{
    mover_scene_free(&ds->s);
    kcc_mesh_destroy(ds->door);
}

/* A door (a kinematic slab) closing across the floor pushes a character in its way ahead of it,
 * slow (5 cm a step) or fast (2 m a step, more than the box is wide), never passing through it. */
static void door_pushes_a_character_ahead_of_it(void **state)
{
    (void)state;
    const float speeds[] = {0.05f, 2.0f};
    const int steps[] = {80, 6};
    const kcc_character_desc d = player_desc();
    for (int v = 0; v < 2; ++v) {
        door_scene ds = door_scene_make(-3.0f);
        bool pushed = false;
        for (int f = 1; f <= steps[v]; ++f) {
            door_to(&ds, -3.0f + speeds[v] * (float)f);
            assert_int_equal(kcc_world_set_displacement(ds.s.world, ds.character, (vec3){0, -0.01f, 0}),
                             KCC_OK);
            assert_int_equal(kcc_world_step(ds.s.world), KCC_OK);
            const kcc_character_state st = state_of(ds.s.world, ds.character, NULL);
            const float door_front = ds.bd.transform.position[0] + 0.1f;
            if (door_front > -d.half_extents[0]) { /* the door reached the box: it is ahead */
                assert_true(st.position[0] - d.half_extents[0] >= door_front - KCC_PENETRATION_TOLERANCE);
                pushed = true;
                kcc_contact c[KCC_WORLD_CONTACTS]; /* the door is among its contacts */
                const uint32_t n = kcc_world_get_contacts(ds.s.world, ds.character, c, KCC_WORLD_CONTACTS, NULL);
                bool door_touched = false;
                for (uint32_t i = 0; i < n; ++i)
                    door_touched = door_touched || (c[i].body == ds.door_id && c[i].normal[0] > 0.99f);
                assert_true(door_touched);
            }
        }
        assert_true(pushed);
        door_scene_free(&ds);
    }
}

/* A door closing against a static wall squeezes the character in between: it is flagged crushed
 * and stays clear of the wall (it may overlap the door: what then is the game's choice). */
static void door_against_a_wall_crushes_and_never_pushes_into_the_wall(void **state)
{
    (void)state;
    door_scene ds = door_scene_make(-2.0f);
    kcc_mesh *wall = test_box_mesh((float[3]){1.0f, 0, -3}, (float[3]){1.5f, 3, 3});
    uint32_t wall_id;
    assert_int_equal(kcc_world_add_body(ds.s.world, wall, NULL, &wall_id), KCC_OK);
    const kcc_character_desc d = player_desc();
    bool crushed = false;
    for (int f = 1; f <= 40; ++f) {
        door_to(&ds, kcc_minf(-2.0f + 0.1f * (float)f, 0.9f));
        assert_int_equal(kcc_world_step(ds.s.world), KCC_OK);
        kcc_move_result r;
        const kcc_character_state st = state_of(ds.s.world, ds.character, &r);
        assert_true(st.position[0] + d.half_extents[0] <= 1.0f + KCC_PENETRATION_TOLERANCE);
        crushed = crushed || (r.flags & KCC_MOVE_CRUSHED);
    }
    assert_true(crushed);
    door_scene_free(&ds);
    kcc_mesh_destroy(wall);
}

/* ------------------------------------------------------------------------------------------------
 * Characters among characters */

static bool characters_overlap(const kcc_world *w, uint32_t a, uint32_t b)
{
    const kcc_character_desc d = player_desc();
    const kcc_character_state sa = state_of(w, a, NULL), sb = state_of(w, b, NULL);
    const float tol = KCC_PENETRATION_TOLERANCE;
    for (int k = 0; k < 3; ++k)
        if (fabsf(sa.position[k] - sb.position[k]) >= 2.0f * d.half_extents[k] - tol)
            return false;
    return true;
}

/* Two characters walking into each other (both at once, each seeing the other where it stood),
 * head-on and offset sideways by 0.3 and 0.8 m (less than a box's 0.94 m: face to face), stop
 * against each other, never overlap and are not turned aside (the faces that meet face along x);
 * one dropped onto another's head stands on it. */
static void characters_are_solid_boxes_to_each_other(void **state)
{
    (void)state;
    const kcc_character_desc d = player_desc();
    const float y = d.half_extents[1] + 0.01f, offsets[3] = {0.0f, 0.8f, 0.3f};
    mover_scene s = mover_scene_make((vec3){0, 50, 0});
    uint32_t a, b, top;
    for (int k = 0; k < 3; ++k) { /* a fresh scene for each; the last goes on to the drop */
        if (k > 0) {
            mover_scene_free(&s);
            s = mover_scene_make((vec3){0, 50, 0});
        }
        assert_int_equal(kcc_world_add_character(s.world, &d, (vec3){-2, y, 0}, &a), KCC_OK);
        assert_int_equal(kcc_world_add_character(s.world, &d, (vec3){2, y, offsets[k]}, &b), KCC_OK);
        for (int f = 0; f < 60; ++f) {
            assert_int_equal(kcc_world_set_displacement(s.world, a, (vec3){0.1f, -0.05f, 0}), KCC_OK);
            assert_int_equal(kcc_world_set_displacement(s.world, b, (vec3){-0.1f, -0.05f, 0}), KCC_OK);
            assert_int_equal(kcc_world_step(s.world), KCC_OK);
            assert_false(characters_overlap(s.world, a, b));
        }
        const kcc_character_state sa = state_of(s.world, a, NULL), sb = state_of(s.world, b, NULL);
        assert_true(sb.position[0] - sa.position[0] < 2.0f * d.half_extents[0] + 0.05f); /* they met */
        assert_true(fabsf(sa.position[2]) < 1e-3f && fabsf(sb.position[2] - offsets[k]) < 1e-3f);
    }
    const kcc_character_state under = state_of(s.world, a, NULL);
    assert_int_equal(kcc_world_add_character(s.world, &d,
                                             (vec3){under.position[0], under.position[1] + 2.5f, 0}, &top),
                     KCC_OK);
    for (int f = 0; f < 60; ++f) {
        assert_int_equal(kcc_world_set_displacement(s.world, top, (vec3){0, -0.1f, 0}), KCC_OK);
        assert_int_equal(kcc_world_step(s.world), KCC_OK);
        assert_false(characters_overlap(s.world, a, top));
    }
    kcc_move_result r;
    const kcc_character_state st = state_of(s.world, top, &r);
    assert_true(st.on_ground);
    assert_int_equal(r.ground_character, a);
    assert_int_equal(r.ground_body, 0);
    assert_true(fabsf(st.position[1] - (under.position[1] + 2.0f * d.half_extents[1])) < 0.01f);
    mover_scene_free(&s);
}

/* A move's gathers reach as far as its displacement on every side, whatever its direction: a box
 * sent 6 m along +x in the air into a wall at 45 degrees (the plane x + z = 0.61, facing -x -z;
 * default desc: 0.6 m wide) slides along it towards -z, 3 m across, into a standing character whose
 * box lies 2.3 m to the side of the mover's (centre (2.8, 0, -2.9)). It stops against it: by hand,
 * the mover's centre runs along the line x + z = 0.61 - 0.6 - sqrt(2) skin (a skin from the wall)
 * until its -z face comes a skin from the other's +z face (z = -2.9 + 0.6 + skin), where the wall
 * and that face wedge it; never inside it; the same with -Y up (the move in a turned frame). */
static void a_fast_slide_stops_against_a_character_far_off(void **state)
{
    (void)state;
    const float c = 0.61f;
    const float wall[12] = {c + 10, -5, -10, c - 10, -5, 10, c - 10, 5, 10, c + 10, 5, -10};
    const uint32_t quad[6] = {0, 1, 2, 0, 2, 3};
    const kcc_mesh_desc md = {.positions = wall, .vertex_count = 4, .indices = quad, .triangle_count = 2};
    kcc_mesh *mesh = NULL;
    assert_int_equal(kcc_mesh_build(&md, &mesh), KCC_OK);
    for (int up_axis = 1; up_axis >= -1; up_axis -= 2) { /* +Y, and -Y: the move in a turned frame */
        kcc_world *w = world_with(2, 2);
        uint32_t body, mover, other;
        assert_int_equal(kcc_world_add_body(w, mesh, NULL, &body), KCC_OK);
        kcc_character_desc d = kcc_character_default_desc();
        d.up_axis = up_axis;
        assert_int_equal(kcc_world_add_character(w, &d, (vec3){0, 0, 0}, &mover), KCC_OK);
        assert_int_equal(kcc_world_add_character(w, &d, (vec3){2.8f, 0, -2.9f}, &other), KCC_OK);
        assert_int_equal(kcc_world_set_displacement(w, mover, (vec3){6, 0, 0}), KCC_OK);
        assert_int_equal(kcc_world_step(w), KCC_OK);
        kcc_move_result r;
        const kcc_character_state a = state_of(w, mover, &r), b = state_of(w, other, NULL);
        const double skin = d.skin_width, z = -2.9 + 2.0 * d.half_extents[2] + skin;
        const double x = (double)c - 2.0 * d.half_extents[0] - sqrt(2.0) * skin - z;
        assert_true(fabs(a.position[2] - z) < 2e-3 && fabs(a.position[0] - x) < 2e-3);
        assert_true(fabsf(a.position[1]) < 1e-6f);
        assert_true(a.position[2] - d.half_extents[2] >= b.position[2] + d.half_extents[2]);
        assert_true(b.position[0] == 2.8f && b.position[2] == -2.9f);
        kcc_world_destroy(w);
    }
    kcc_mesh_destroy(mesh);
}

/* The start-overlap push gathers around the box for its own step, whose sideways and vertical
 * lengths add up: a 10 m box 1 m in front of a steep face (60 degrees, normal (-0.866, 0.5, 0))
 * overlaps it 5.83 m deep and is pushed out along the normal by that and a skin (under
 * max_push_out, 6 m): its gather reaches 1.37 times the push on every side, past max_push_out, and
 * stays inside the step region (the KCC_DEBUG check). By hand: the centre ends at 1 m + 5.83 m +
 * a skin along the normal. */
static void a_deep_push_out_gathers_inside_the_step_region(void **state)
{
    (void)state;
    const float wall[12] = {-10, -17.320508f, -20, 10, 17.320508f, -20, 10, 17.320508f, 20, -10, -17.320508f, 20};
    const uint32_t quad[6] = {0, 2, 1, 0, 3, 2};
    const kcc_mesh_desc md = {.positions = wall, .vertex_count = 4, .indices = quad, .triangle_count = 2};
    kcc_mesh *mesh = NULL;
    assert_int_equal(kcc_mesh_build(&md, &mesh), KCC_OK);
    kcc_world *w = world_with(1, 1);
    uint32_t body, id;
    assert_int_equal(kcc_world_add_body(w, mesh, NULL, &body), KCC_OK);
    kcc_character_desc d = kcc_character_default_desc();
    d.half_extents[0] = d.half_extents[1] = d.half_extents[2] = 5.0f;
    d.max_push_out = 6.0f;
    d.ground_snap = d.step_height = 0.0f;
    const double n[2] = {-sqrt(3.0) / 2.0, 0.5};
    assert_int_equal(kcc_world_add_character(w, &d, (vec3){(float)n[0], (float)n[1], 0}, &id), KCC_OK);
    assert_int_equal(kcc_world_step(w), KCC_OK);
    kcc_move_result r;
    const kcc_character_state st = state_of(w, id, &r);
    const double depth = 5.0 * (sqrt(3.0) / 2.0 + 0.5) - 1.0, along = 1.0 + depth + d.skin_width;
    assert_true(r.flags & KCC_MOVE_PUSHED_OUT);
    assert_true(fabs(st.position[0] - along * n[0]) < 2e-3 && fabs(st.position[1] - along * n[1]) < 2e-3);
    kcc_world_destroy(w);
    kcc_mesh_destroy(mesh);
}

/* One dropped onto another's head lands on it and rides it: the one below walks 3 m along x (and
 * back 1 m) and the rider, given only gravity, goes with it one step behind (carried by the motion
 * the one below made in the step before: kcc_move_result.carried), on the ground on it every step,
 * never inside it, and ends where it would stand had the two moved together. */
static void character_rides_another_that_walks(void **state)
{
    (void)state;
    mover_scene s = mover_scene_make((vec3){0, 50, 0});
    const kcc_character_desc d = player_desc();
    const float y = d.half_extents[1] + 0.01f, top_y = 3.0f * d.half_extents[1] + 0.05f;
    uint32_t below, rider;
    assert_int_equal(kcc_world_add_character(s.world, &d, (vec3){-4, y, 0}, &below), KCC_OK);
    assert_int_equal(kcc_world_add_character(s.world, &d, (vec3){-4.1f, top_y + 0.5f, 0.1f}, &rider), KCC_OK);
    for (int f = 0; f < 30; ++f) { /* both settle: the rider lands on the head */
        assert_int_equal(kcc_world_set_displacement(s.world, below, (vec3){0, -0.05f, 0}), KCC_OK);
        assert_int_equal(kcc_world_set_displacement(s.world, rider, (vec3){0, -0.05f, 0}), KCC_OK);
        assert_int_equal(kcc_world_step(s.world), KCC_OK);
    }
    const float offset_x = state_of(s.world, rider, NULL).position[0] - state_of(s.world, below, NULL).position[0];
    float step_x = 0.0f;
    for (int f = 0; f < 80; ++f) {
        step_x = f < 60 ? 0.05f : f < 70 ? -0.1f : 0.0f;
        assert_int_equal(kcc_world_set_displacement(s.world, below, (vec3){step_x, -0.05f, 0}), KCC_OK);
        assert_int_equal(kcc_world_set_displacement(s.world, rider, (vec3){0, -0.05f, 0}), KCC_OK);
        assert_int_equal(kcc_world_step(s.world), KCC_OK);
        kcc_move_result r;
        const kcc_character_state st = state_of(s.world, rider, &r);
        const kcc_character_state under = state_of(s.world, below, NULL);
        assert_true(st.on_ground);
        assert_int_equal(r.ground_character, below);
        assert_false(characters_overlap(s.world, below, rider));
        assert_true(fabsf(st.position[0] - under.position[0] - offset_x) <= fabsf(step_x) + 1e-4f);
        assert_true(fabsf(st.position[1] - under.position[1] - 2.0f * d.half_extents[1]) < 0.01f);
    }
    const float end_gap = state_of(s.world, rider, NULL).position[0] - state_of(s.world, below, NULL).position[0];
    assert_true(fabsf(end_gap - offset_x) < 1e-4f);
    assert_true(state_of(s.world, below, NULL).position[0] > -2.1f);
    mover_scene_free(&s);
}

/* ------------------------------------------------------------------------------------------------
 * Many characters, many workers */

/* A job system for the tests, as an engine's would be: the ranges of a task (min_range items
 * each) run on `workers` threads, or, with threads off, all on the calling thread in reverse
 * order (the worst order for a step that depended on it). */
typedef struct test_jobs {
    int  workers;
    bool threads;
} test_jobs;

typedef struct test_job_range {
    kcc_task_fn *task;
    void        *context;
    uint32_t     begin, end, worker;
} test_job_range;

typedef struct test_job {
    pthread_t      thread[8];
    test_job_range range[8];
    int            started;
} test_job;

static void *run_job_range(void *arg)
{
    test_job_range *r = arg;
    r->task(r->begin, r->end, r->worker, r->context);
    return NULL;
}

static void *test_enqueue(kcc_task_fn *task, uint32_t count, uint32_t min_range, void *context,
                          void *user)
{
    const test_jobs *jobs = user;
    assert_true(min_range >= 1);
    if (!jobs->threads) {
        for (uint32_t end = count; end > 0;) {
            const uint32_t begin = end > min_range ? end - min_range : 0;
            task(begin, end, (end / min_range) % (uint32_t)jobs->workers, context);
            end = begin;
        }
        return NULL;
    }
    static _Thread_local test_job job; /* one task in flight per calling thread */
    job.started = 0;
    const uint32_t per = (count + (uint32_t)jobs->workers - 1) / (uint32_t)jobs->workers;
    for (int w = 0; w < jobs->workers && (uint32_t)w * per < count; ++w) {
        test_job_range r = {task, context, (uint32_t)w * per,
                            (uint32_t)(w + 1) * per < count ? (uint32_t)(w + 1) * per : count, (uint32_t)w};
        job.range[w] = r;
        assert_int_equal(pthread_create(&job.thread[w], NULL, run_job_range, &job.range[w]), 0);
        job.started = w + 1;
    }
    return &job;
}

static void test_finish(void *handle, void *user)
{
    (void)user;
    test_job *job = handle;
    for (int w = 0; w < job->started; ++w)
        pthread_join(job->thread[w], NULL);
}

/* A world of `bodies` bodies and `characters` characters, stepped through the test job system
 * `jobs` (NULL: no hooks). */
static kcc_world *world_on_jobs(const test_jobs *jobs, uint32_t bodies, uint32_t characters)
{
    kcc_world_desc wd = kcc_world_default_desc();
    wd.body_capacity = bodies;
    wd.character_capacity = characters;
    if (jobs) {
        wd.worker_count = (uint32_t)jobs->workers;
        wd.enqueue_task = test_enqueue;
        wd.finish_task = test_finish;
        wd.user_task_context = (void *)jobs;
    }
    kcc_world *w = NULL;
    assert_int_equal(kcc_world_create(&wd, &w), KCC_OK);
    return w;
}

enum { CROWD = 24, CROWD_STEPS = 240 };

/* A crowd on a level with a lift, stepped CROWD_STEPS times: every character's position and flags
 * after every step (out: CROWD_STEPS x CROWD). jobs NULL: no hooks. */
static void run_crowd(const kcc_mesh *level, const kcc_level *lv, const test_jobs *jobs,
                      bool split_off, vec3 *out_position, uint32_t *out_flags)
{
    kcc_world *w = world_on_jobs(jobs, 4, CROWD);
    kcc_mesh *lift = test_box_mesh((float[3]){-1, -0.25f, -1}, (float[3]){1, 0, 1});
    uint32_t level_id, lift_id, ids[CROWD];
    kcc_world_characters(w)->split_off = split_off;
    kcc_body_desc bd = kcc_body_default_desc();
    bd.kind = KCC_BODY_KINEMATIC;
    memcpy(bd.transform.position, lv->spawns, sizeof(float[3])); /* under the first spawn */
    /* the lift first: its triangles' ids come before the level's, so a list merges the lift's
       triangles (listed every step) in front of the level's (kept in the cache) */
    assert_int_equal(kcc_world_add_body(w, lift, &bd, &lift_id), KCC_OK);
    assert_int_equal(kcc_world_add_body(w, level, NULL, &level_id), KCC_OK);
    const kcc_character_desc d = player_desc();
    for (int c = 0, spot = 0; c < CROWD; ++spot) { /* a few to a spawn, stacked 2 m apart where the
                                                      level leaves room: they fall onto each other */
        const uint32_t n = lv->spawn_count, layer = (uint32_t)spot / n;
        assert_true(layer < 8);
        const float *sp = &lv->spawns[3 * ((uint32_t)spot % n)];
        const vec3 at = {sp[0], sp[1] + d.half_extents[1] + 0.01f + 2.0f * (float)layer, sp[2]};
        if (kcc_character_fits(&d, level, at) == KCC_OK)
            assert_int_equal(kcc_world_add_character(w, &d, at, &ids[c++]), KCC_OK);
    }
    float vy[CROWD] = {0};
    for (int f = 0; f < CROWD_STEPS; ++f) {
        bd.transform.position[1] = lv->spawns[1] + 0.02f * (float)(f % 60);
        assert_int_equal(kcc_world_move_body(w, lift_id, &bd.transform), KCC_OK);
        for (int c = 0; c < CROWD; ++c) {
            kcc_character_state st = state_of(w, ids[c], NULL);
            vec3 disp;
            wander(c, f, st.on_ground, &vy[c], disp);
            assert_int_equal(kcc_world_set_displacement(w, ids[c], disp), KCC_OK);
        }
        assert_int_equal(kcc_world_step(w), KCC_OK);
        for (int c = 0; c < CROWD; ++c) {
            kcc_move_result r;
            const kcc_character_state st = state_of(w, ids[c], &r);
            glm_vec3_copy((float *)st.position, out_position[f * CROWD + c]);
            out_flags[f * CROWD + c] = r.flags;
        }
    }
    kcc_world_destroy(w);
    kcc_mesh_destroy(lift);
}

enum { JAM = 200, JAM_STEPS = 480 };

/* JAM characters on a floor, half on a ring 22 m around the origin and half on one 25 m around it
 * (1.38 and 1.57 m apart: at 45 degrees, where boxes on a ring are nearest, 0.98 and 1.11 m on
 * both axes, clear of each other's 0.94 m), all walking to the origin at 4 m/s with a downward
 * push, JAM_STEPS steps at 60 a second on `jobs` (NULL: no hooks): every character's position
 * after every step (out: JAM_STEPS x JAM). */
static void run_jam(const test_jobs *jobs, vec3 *out_position)
{
    kcc_world *w = world_on_jobs(jobs, 2, JAM);
    kcc_mesh *floor_mesh = test_box_mesh((float[3]){-40, -1, -40}, (float[3]){40, 0, 40});
    uint32_t floor_id, ids[JAM];
    assert_int_equal(kcc_world_add_body(w, floor_mesh, NULL, &floor_id), KCC_OK);
    const kcc_character_desc d = player_desc();
    for (int c = 0; c < JAM; ++c) {
        const float radius = c < JAM / 2 ? 22.0f : 25.0f, angle = 4.0f * 3.14159265f * (float)c / JAM;
        const vec3 at = {radius * cosf(angle), d.half_extents[1] + 0.01f, radius * sinf(angle)};
        assert_int_equal(kcc_world_add_character(w, &d, at, &ids[c]), KCC_OK);
    }
    for (int f = 0; f < JAM_STEPS; ++f) {
        for (int c = 0; c < JAM; ++c) {
            const kcc_character_state st = state_of(w, ids[c], NULL);
            const float dist = sqrtf(st.position[0] * st.position[0] + st.position[2] * st.position[2]);
            const float pace = dist > 0.05f ? 4.0f / 60.0f / dist : 0.0f;
            const vec3 disp = {-st.position[0] * pace, -0.05f, -st.position[2] * pace};
            assert_int_equal(kcc_world_set_displacement(w, ids[c], disp), KCC_OK);
        }
        assert_int_equal(kcc_world_step(w), KCC_OK);
        for (int c = 0; c < JAM; ++c)
            glm_vec3_copy(state_of(w, ids[c], NULL).position, out_position[f * JAM + c]);
    }
    kcc_world_destroy(w);
    kcc_mesh_destroy(floor_mesh);
}

/* A crowd of JAM walking to one point jams there: after every step no two boxes overlap (beyond the
 * tolerance) and none sinks into the floor; every character ends at least 5 m nearer the point than
 * it started (the 200 boxes of 0.94 m fill a disc of about 7.5 m radius packed edge to edge, so a
 * jam with gaps still lies well inside 17 m), most of them pressed against another; and the jam
 * comes out bit for bit the same on two threads as with no hooks. */
static void a_crowd_walking_to_one_point_never_overlaps(void **state)
{
    (void)state;
    const size_t n = (size_t)JAM_STEPS * JAM;
    vec3 *one = malloc(n * sizeof(vec3)), *two = malloc(n * sizeof(vec3));
    const test_jobs threads = {2, true};
    run_jam(NULL, one);
    run_jam(&threads, two);
    assert_memory_equal(one, two, n * sizeof(vec3));
    const kcc_character_desc d = player_desc();
    const float tol = KCC_PENETRATION_TOLERANCE;
    for (int f = 0; f < JAM_STEPS; ++f) {
        const vec3 *p = (const vec3 *)(one + (size_t)f * JAM);
        for (int i = 0; i < JAM; ++i) {
            assert_true(p[i][1] - d.half_extents[1] > -tol);
            for (int j = 0; j < i; ++j) {
                bool apart = false;
                for (int k = 0; k < 3; ++k)
                    apart = apart || fabsf(p[i][k] - p[j][k]) >= 2.0f * d.half_extents[k] - tol;
                assert_true(apart);
            }
        }
    }
    const vec3 *last = (const vec3 *)(one + (size_t)(JAM_STEPS - 1) * JAM);
    int pressed = 0;
    for (int i = 0; i < JAM; ++i) {
        const float start = i < JAM / 2 ? 22.0f : 25.0f;
        assert_true(sqrtf(last[i][0] * last[i][0] + last[i][2] * last[i][2]) < start - 5.0f);
        bool touching = false;
        for (int j = 0; j < JAM && !touching; ++j)
            touching = j != i && fabsf(last[i][0] - last[j][0]) < 2.0f * d.half_extents[0] + 0.05f &&
                       fabsf(last[i][2] - last[j][2]) < 2.0f * d.half_extents[2] + 0.05f;
        pressed += touching;
    }
    assert_true(pressed > JAM / 2);
    free(one);
    free(two);
}

/* API.md: a step's results are bit-identical whatever worker_count and scheduling. A crowd on a
 * real level with a lift, stepped with no hooks, with hooks running the ranges in reverse order on
 * four pretend workers, with two real threads and with eight, ends every step in the same places with the same flags, bit for bit; and so does the
 * crowd whose moves list the static level afresh every step instead of keeping its triangles in
 * the characters' caches (split_off: kcc_world_source_split's merged lists are the lists of the
 * whole source); and no character ends inside another or the level. */
static void world_step_is_the_same_for_any_workers(void **state)
{
    (void)state;
    kcc_level lv;
    kcc_mesh *m = open_level(&lv);
    const size_t n = (size_t)CROWD_STEPS * CROWD;
    enum { VARIANTS = 5 };
    vec3 *pos[VARIANTS];
    uint32_t *flags[VARIANTS];
    const test_jobs reverse = {4, false}, threads = {2, true}, eight = {8, true};
    const test_jobs *jobs[VARIANTS] = {NULL, &reverse, &threads, &eight, NULL};
    for (int i = 0; i < VARIANTS; ++i) {
        pos[i] = malloc(n * sizeof(vec3));
        flags[i] = malloc(n * sizeof(uint32_t));
        run_crowd(m, &lv, jobs[i], i == VARIANTS - 1, pos[i], flags[i]);
    }
    const kcc_character_desc d = player_desc();
    long contacts = 0;
    for (size_t k = 0; k < n; ++k) {
        for (int i = 1; i < VARIANTS; ++i) {
            assert_memory_equal(pos[i][k], pos[0][k], sizeof(vec3));
            assert_int_equal(flags[i][k], flags[0][k]);
        }
        vec3 box[2]; /* nor any box the level */
        for (int a = 0; a < 3; ++a) {
            box[0][a] = pos[0][k][a] - d.half_extents[a] + KCC_PENETRATION_TOLERANCE;
            box[1][a] = pos[0][k][a] + d.half_extents[a] - KCC_PENETRATION_TOLERANCE;
        }
        assert_int_equal(kcc_mesh_overlap_aabb(m, (const vec3 *)box, NULL, 0), 0);
        const size_t step = k / CROWD * CROWD;
        for (size_t j = step; j < k; ++j) { /* no two boxes overlap beyond the tolerance */
            bool apart = false;
            for (int a = 0; a < 3; ++a)
                apart = apart || fabsf(pos[0][k][a] - pos[0][j][a]) >=
                                     2.0f * d.half_extents[a] - KCC_PENETRATION_TOLERANCE;
            assert_true(apart);
            contacts += fabsf(pos[0][k][0] - pos[0][j][0]) < 2.0f * d.half_extents[0] + 0.05f &&
                        fabsf(pos[0][k][2] - pos[0][j][2]) < 2.0f * d.half_extents[2] + 0.05f &&
                        fabsf(pos[0][k][1] - pos[0][j][1]) < 2.0f * d.half_extents[1] + 0.05f;
        }
    }
    assert_true(contacts > 0); /* the crowd did bump into itself */
    for (int i = 0; i < VARIANTS; ++i) {
        free(pos[i]);
        free(flags[i]);
    }
    kcc_mesh_destroy(m);
    kcc_level_free(&lv);
}

/* ------------------------------------------------------------------------------------------------
 * Sensors */

/* The events of the last step as (sensor, character, entered) triples. */
static uint32_t events_now(const kcc_world *w, kcc_sensor_event *out, uint32_t capacity)
{
    const kcc_sensor_event *events = NULL;
    bool overflow = true;
    const uint32_t n = kcc_world_sensor_events(w, &events, &overflow);
    assert_false(overflow);
    assert_true(n <= capacity);
    memcpy(out, events, n * sizeof *out);
    return n;
}

/* A character walking through a sensor (a 3 m box, larger than the character, so inside it
 * touches no triangle) is not stopped by it, enters it at the step its box first reaches the
 * volume, stays inside without events, and leaves at the step its box clears it; a kinematic
 * sensor moved onto a character standing still enters it too. Events come in sensor order. */
static void sensors_list_who_enters_and_leaves(void **state)
{
    (void)state;
    mover_scene s = mover_scene_make((vec3){0, 50, 0});
    kcc_mesh *volume = test_box_mesh((float[3]){-1.5f, 0, -1.5f}, (float[3]){1.5f, 3, 1.5f});
    kcc_body_desc bd = kcc_body_default_desc();
    bd.sensor = true;
    uint32_t pad, gate, walker, sitter;
    assert_int_equal(kcc_world_add_body(s.world, volume, &bd, &pad), KCC_OK);
    bd.kind = KCC_BODY_KINEMATIC;
    bd.transform.position[2] = 10.0f;
    assert_int_equal(kcc_world_add_body(s.world, volume, &bd, &gate), KCC_OK);
    const kcc_character_desc d = player_desc();
    const float y = d.half_extents[1] + 0.01f;
    assert_int_equal(kcc_world_add_character(s.world, &d, (vec3){-4, y, 0}, &walker), KCC_OK);
    assert_int_equal(kcc_world_add_character(s.world, &d, (vec3){0, y, 6}, &sitter), KCC_OK);
    int entered_at = -1, left_at = -1, gate_at = -1;
    for (int f = 0; f < 80; ++f) {
        assert_int_equal(kcc_world_set_displacement(s.world, walker, (vec3){0.1f, -0.01f, 0}), KCC_OK);
        bd.transform.position[2] = kcc_maxf(10.0f - 0.2f * (float)f, 6.0f);
        assert_int_equal(kcc_world_move_body(s.world, gate, &bd.transform), KCC_OK);
        assert_int_equal(kcc_world_step(s.world), KCC_OK);
        kcc_sensor_event ev[4];
        const uint32_t n = events_now(s.world, ev, 4);
        const float x = state_of(s.world, walker, NULL).position[0];
        for (uint32_t i = 0; i < n; ++i) {
            if (i > 0)
                assert_true(ev[i - 1].sensor == pad || ev[i].sensor == gate);
            if (ev[i].sensor == pad) {
                assert_int_equal(ev[i].character, walker);
                if (ev[i].entered) {
                    assert_int_equal(entered_at, -1);
                    entered_at = f;
                    assert_true(x + d.half_extents[0] >= -1.5f && x + d.half_extents[0] < -1.5f + 0.1f);
                } else {
                    assert_int_equal(left_at, -1);
                    left_at = f;
                    assert_true(x - d.half_extents[0] > 1.5f && x - d.half_extents[0] <= 1.5f + 0.1f);
                }
            } else {
                assert_int_equal(ev[i].sensor, gate);
                assert_int_equal(ev[i].character, sitter);
                assert_true(ev[i].entered);
                assert_int_equal(gate_at, -1);
                gate_at = f;
            }
        }
    }
    assert_true(entered_at > 0 && left_at > entered_at && gate_at > 0);
    kcc_world_hit hit; /* queries pass through sensors: a ray down through the pad meets the floor */
    assert_true(kcc_world_raycast(s.world, (vec3){0, 10, 0}, (vec3){0, -1, 0}, 20.0f, &hit));
    assert_int_equal(hit.body, s.floor_id);
    kcc_world_sweep_hit sweep;
    assert_true(kcc_world_sweep_aabb(s.world, (const vec3[2]){{-0.1f, 5, -0.1f}, {0.1f, 6, 0.1f}},
                                     (vec3){0, -6, 0}, KCC_LAYERS_ALL, &sweep));
    assert_true(sweep.body == s.floor_id && fabsf(sweep.t - 5.0f / 6.0f) < 1e-5f);
    assert_int_equal(kcc_world_overlap_aabb(s.world, (const vec3[2]){{-1, 1, -1}, {1, 2, 1}},
                                            KCC_LAYERS_ALL, NULL, 0), 0);
    assert_true(state_of(s.world, walker, NULL).position[0] > 3.0f); /* it walked through */
    /* a removed character leaves */
    assert_int_equal(kcc_world_remove_character(s.world, sitter), KCC_OK);
    assert_int_equal(kcc_world_step(s.world), KCC_OK);
    kcc_sensor_event ev[4];
    assert_int_equal(events_now(s.world, ev, 4), 1);
    assert_true(ev[0].sensor == gate && ev[0].character == sitter && !ev[0].entered);
    mover_scene_free(&s);
    kcc_mesh_destroy(volume);
}

/* A door 4 m a step pushes character a (0.94 m wide, at the origin, walking nowhere) 3.6 m in one
 * step, far past where its own walk reaches, towards b (centre x = 5), which walks 1 m back at it
 * in the same step; a sensor (x 3.3 .. 3.6) lies where a lands. By hand: the door's front reaches
 * x = 3.1, so a's box ends a skin beyond, on [3.1 + s, 4.04 + s] (short of b's start box at 4.53);
 * b's move sees a there (the moves see the characters where riding and pushing left them) and
 * stops a skin from it, at centre 3.57 + s + 0.94 + s; a enters the sensor. Whichever of the two is
 * earlier in the order (a added first, or b). Both need a's region to hold where the push takes it:
 * the neighbour lists and the sensors look there. */
static void a_pushed_character_meets_characters_and_sensors_past_its_walk(void **state)
{
    (void)state;
    const kcc_character_desc d = player_desc();
    const float y = d.half_extents[1] + 0.01f, skin = d.skin_width;
    for (int b_first = 0; b_first < 2; ++b_first) {
        door_scene ds = door_scene_make(-5.0f);
        kcc_mesh *volume = test_box_mesh((float[3]){3.3f, 0, -1.5f}, (float[3]){3.6f, 3, 1.5f});
        kcc_body_desc sd = kcc_body_default_desc();
        sd.sensor = true;
        uint32_t pad, a = ds.character, b;
        assert_int_equal(kcc_world_add_body(ds.s.world, volume, &sd, &pad), KCC_OK);
        if (b_first) /* slots are taken oldest free first: b then takes slot 1, a slot 2 */
            assert_int_equal(kcc_world_remove_character(ds.s.world, a), KCC_OK);
        assert_int_equal(kcc_world_add_character(ds.s.world, &d, (vec3){5.0f, y, 0}, &b), KCC_OK);
        if (b_first)
            assert_int_equal(kcc_world_add_character(ds.s.world, &d, (vec3){0, y, 0}, &a), KCC_OK);
        bool a_entered = false;
        for (int f = 1; f <= 2; ++f) {
            door_to(&ds, -5.0f + 4.0f * (float)f);
            assert_int_equal(kcc_world_set_displacement(ds.s.world, a, (vec3){0, -0.01f, 0}), KCC_OK);
            assert_int_equal(kcc_world_set_displacement(ds.s.world, b, (vec3){f == 2 ? -1.0f : 0.0f, -0.01f, 0}),
                             KCC_OK);
            assert_int_equal(kcc_world_step(ds.s.world), KCC_OK);
            kcc_sensor_event ev[4];
            const uint32_t n = events_now(ds.s.world, ev, 4);
            for (uint32_t i = 0; i < n; ++i) {
                assert_true(ev[i].sensor == pad && ev[i].character == a && ev[i].entered && f == 2);
                a_entered = true;
            }
        }
        const kcc_character_state sa = state_of(ds.s.world, a, NULL), sb = state_of(ds.s.world, b, NULL);
        assert_true(fabsf(sa.position[0] - (3.1f + d.half_extents[0] + skin)) < 1e-4f);
        assert_true(fabsf(sb.position[0] - (sa.position[0] + 2.0f * d.half_extents[0] + skin)) < 1e-4f);
        assert_false(characters_overlap(ds.s.world, a, b));
        assert_true(a_entered);
        door_scene_free(&ds);
        kcc_mesh_destroy(volume);
    }
}

/* Two doors (kinematic slabs 0.2 m thick) close on two characters standing side by side between
 * them, 0.25 m a step from both sides: each door pushes one character at the other. Each push,
 * placed in parallel, sees the other character where the step started, so the two pushes together
 * would put both into the space between; the placing pass puts the later one again against the
 * earlier one's new box: the two never overlap, and the later one, squeezed between its door and
 * the other, is flagged crushed. Whichever of the two is earlier in the order. */
static void two_doors_never_push_two_characters_into_each_other(void **state)
{
    (void)state;
    const kcc_character_desc d = player_desc();
    const float y = d.half_extents[1] + 0.01f;
    for (int right_first = 0; right_first < 2; ++right_first) {
        mover_scene s = mover_scene_make((vec3){0, 50, 0});
        kcc_mesh *slab = test_box_mesh((float[3]){-0.1f, 0, -2}, (float[3]){0.1f, 3, 2});
        kcc_body_desc bd[2] = {kcc_body_default_desc(), kcc_body_default_desc()};
        uint32_t door[2], ch[2];
        for (int i = 0; i < 2; ++i) {
            bd[i].kind = KCC_BODY_KINEMATIC;
            bd[i].transform.position[0] = i == 0 ? -2.5f : 2.5f;
            assert_int_equal(kcc_world_add_body(s.world, slab, &bd[i], &door[i]), KCC_OK);
        }
        for (int k = 0; k < 2; ++k) {
            const int i = right_first ? 1 - k : k;
            assert_int_equal(kcc_world_add_character(s.world, &d, (vec3){i == 0 ? -0.55f : 0.55f, y, 0}, &ch[i]),
                             KCC_OK);
        }
        bool crushed = false;
        for (int f = 1; f <= 12; ++f) {
            for (int i = 0; i < 2; ++i) {
                const float front = kcc_maxf(2.5f - 0.25f * (float)f, 0.5f); /* the fronts stop 0.8 m apart */
                bd[i].transform.position[0] = i == 0 ? -front : front;
                assert_int_equal(kcc_world_move_body(s.world, door[i], &bd[i].transform), KCC_OK);
                assert_int_equal(kcc_world_set_displacement(s.world, ch[i], (vec3){0, -0.01f, 0}), KCC_OK);
            }
            assert_int_equal(kcc_world_step(s.world), KCC_OK);
            assert_false(characters_overlap(s.world, ch[0], ch[1]));
            for (int i = 0; i < 2; ++i) {
                kcc_move_result r;
                state_of(s.world, ch[i], &r);
                crushed = crushed || (r.flags & KCC_MOVE_CRUSHED);
            }
        }
        assert_true(crushed);
        kcc_world_destroy(s.world);
        kcc_mesh_destroy(s.floor);
        kcc_mesh_destroy(s.platform);
        kcc_mesh_destroy(slab);
    }
}

/* A sensor larger than the broadphase's grid cell is split into pieces, several of which meet a
 * character inside it: the character still enters it once, stays without events, and leaves once
 * (events are per sensor body, never per piece). */
static void a_sensor_split_into_pieces_reports_each_character_once(void **state)
{
    (void)state;
    mover_scene s = mover_scene_make((vec3){0, 50, 0});
    kcc_mesh *volume = test_box_mesh((float[3]){-10, 0, -10}, (float[3]){10, 3, 10});
    kcc_body_desc bd = kcc_body_default_desc();
    bd.sensor = true;
    uint32_t zone, walker;
    assert_int_equal(kcc_world_add_body(s.world, volume, &bd, &zone), KCC_OK);
    const kcc_character_desc d = player_desc();
    const float y = d.half_extents[1] + 0.01f;
    assert_int_equal(kcc_world_add_character(s.world, &d, (vec3){-12, y, 0.5f}, &walker), KCC_OK);
    uint32_t entered = 0, left = 0;
    for (int f = 0; f < 300; ++f) {
        assert_int_equal(kcc_world_set_displacement(s.world, walker, (vec3){0.1f, -0.01f, 0}), KCC_OK);
        assert_int_equal(kcc_world_step(s.world), KCC_OK);
        kcc_sensor_event ev[8];
        const uint32_t n = events_now(s.world, ev, 8);
        for (uint32_t i = 0; i < n; ++i) {
            assert_true(ev[i].sensor == zone && ev[i].character == walker);
            entered += ev[i].entered;
            left += !ev[i].entered;
        }
        assert_true(entered - left <= 1);
    }
    assert_true(state_of(s.world, walker, NULL).position[0] > 12.0f); /* it walked through */
    assert_int_equal(entered, 1);
    assert_int_equal(left, 1);
    mover_scene_free(&s);
    kcc_mesh_destroy(volume);
}

/* Forty crates (more than the step tests one by one: it finds those near each character through
 * the broadphase) sliding 0.15 m a step back and forth through a grid of 36 standing characters:
 * every character a crate reaches is pushed ahead of it, so after every step no character's box
 * overlaps a crate's beyond the tolerance, none sinks into the floor, and some were pushed. Checked
 * against the boxes by hand; KCC_DEBUG builds (make unit) also check that the pushes summed from
 * the broadphase's list equal those summed over every crate. */
static void a_crowd_among_moving_crates_is_pushed_clear_of_every_one(void **state)
{
    (void)state;
    enum { CRATES = 40, PEOPLE = 36 };
    kcc_world *w = world_with(CRATES + 1, PEOPLE);
    kcc_mesh *floor = test_box_mesh((float[3]){-30, -1, -30}, (float[3]){30, 0, 30});
    kcc_mesh *crate = test_box_mesh((float[3]){-0.4f, 0, -0.4f}, (float[3]){0.4f, 1.2f, 0.4f});
    uint32_t id, crates[CRATES], people[PEOPLE];
    assert_int_equal(kcc_world_add_body(w, floor, NULL, &id), KCC_OK);
    kcc_body_desc bd = kcc_body_default_desc();
    bd.kind = KCC_BODY_KINEMATIC;
    float home[CRATES][3];
    for (int c = 0; c < CRATES; ++c) {
        home[c][0] = -12.0f + 0.6f * (float)c, home[c][1] = 0.0f, home[c][2] = -9.0f + 2.0f * (float)(c % 10);
        glm_vec3_copy(home[c], bd.transform.position);
        assert_int_equal(kcc_world_add_body(w, crate, &bd, &crates[c]), KCC_OK);
    }
    const kcc_character_desc d = player_desc();
    for (int i = 0; i < PEOPLE; ++i)
        assert_int_equal(kcc_world_add_character(w, &d, (vec3){-7.5f + 3.0f * (float)(i % 6), d.half_extents[1] + 0.01f,
                                                            -8.0f + 3.0f * (float)(i / 6)}, &people[i]), KCC_OK);
    int pushed = 0;
    for (int f = 0; f < 160; ++f) {
        const float x = 0.15f * (float)(f < 80 ? f + 1 : 160 - f - 1); /* out 12 m and back */
        for (int c = 0; c < CRATES; ++c) {
            kcc_transform t = {{home[c][0] + x, 0, home[c][2]}, {0, 0, 0, 1}};
            assert_int_equal(kcc_world_move_body(w, crates[c], &t), KCC_OK);
        }
        for (int i = 0; i < PEOPLE; ++i)
            assert_int_equal(kcc_world_set_displacement(w, people[i], (vec3){0, -0.02f, 0}), KCC_OK);
        assert_int_equal(kcc_world_step(w), KCC_OK);
        for (int i = 0; i < PEOPLE; ++i) {
            kcc_move_result r;
            const kcc_character_state st = state_of(w, people[i], &r);
            pushed += glm_vec3_norm(r.carried) > 0.0f;
            assert_true(st.position[1] - d.half_extents[1] > -KCC_PENETRATION_TOLERANCE);
            for (int c = 0; c < CRATES && !(r.flags & KCC_MOVE_CRUSHED); ++c) {
                bool apart = false;
                for (int k = 0; k < 3; ++k) {
                    const float lo = home[c][k] + (k == 0 ? x : 0.0f) + (k == 1 ? 0.0f : -0.4f);
                    const float hi = lo + (k == 1 ? 1.2f : 0.8f);
                    apart = apart || st.position[k] + d.half_extents[k] <= lo + KCC_PENETRATION_TOLERANCE ||
                            st.position[k] - d.half_extents[k] >= hi - KCC_PENETRATION_TOLERANCE;
                }
                assert_true(apart);
            }
        }
    }
    assert_true(pushed > 100);
    kcc_world_destroy(w);
    kcc_mesh_destroy(floor);
    kcc_mesh_destroy(crate);
}

/* A plate of 3 m tiles, 10 x 10, 1 m above the floor and 1 m thick in its box: its tree's leaves
 * (several tiles each) are wider than the 4 m grid cell. */
static kcc_mesh *tiled_plate(void)
{
    enum { CELLS = 10 };
    static float pos[3 * (CELLS + 1) * (CELLS + 1)];
    static uint32_t idx[6 * CELLS * CELLS];
    for (uint32_t j = 0, v = 0; j <= CELLS; ++j)
        for (uint32_t i = 0; i <= CELLS; ++i, ++v) {
            pos[3 * v] = -15.0f + 3.0f * (float)i;
            pos[3 * v + 1] = 1.0f;
            pos[3 * v + 2] = -15.0f + 3.0f * (float)j;
        }
    const kcc_mesh_desc md = {.positions = pos, .vertex_count = (CELLS + 1) * (CELLS + 1),
                              .indices = idx, .triangle_count = grid_indices(CELLS, idx)};
    kcc_mesh *m = NULL;
    assert_int_equal(kcc_mesh_build(&md, &m), KCC_OK);
    return m;
}

/* A large static sensor made of tiles smaller than a grid cell, whose tree's leaves hold several:
 * every piece the broadphase gets fits a cell (a leaf too wide is cut into runs of its triangles),
 * so none is tested against every query, and the pieces' triangles are the tree's, each once.
 * Checked against the cell size by hand and against the mesh's slot count. */
static void a_large_sensor_of_small_tiles_gives_pieces_that_fit_a_cell(void **state)
{
    (void)state;
    mover_scene s = mover_scene_make((vec3){0, 50, 0});
    kcc_mesh *plate = tiled_plate();
    kcc_body_desc bd = kcc_body_default_desc();
    bd.sensor = true;
    uint32_t zone;
    assert_int_equal(kcc_world_add_body(s.world, plate, &bd, &zone), KCC_OK);
    const kcc_world *w = s.world;
    const float cell = kcc_world_get_desc(w)->grid_cell_size;
    const kcc_body *b = &w->bodies[(zone & KCC_ID_INDEX_MASK) - 1];
    const float everywhere[2][3] = {{-1e6f, -1e6f, -1e6f}, {1e6f, 1e6f, 1e6f}};
    uint32_t pieces = 0, slots = 0, leaves_wider_than_a_cell = 0;
    for (uint32_t i = b->first_piece; i != KCC_WORLD_NO_PIECE; i = w->pieces[i].next, ++pieces) {
        const kcc_piece *p = &w->pieces[i];
        for (int k = 0; k < 3; ++k)
            assert_true(p->bounds[1][k] - p->bounds[0][k] <= cell);
        slots += kcc_mesh_query_slots_under(plate, p->first, p->count, everywhere[0], everywhere[1],
                                            NULL, 0);
    }
    for (uint32_t g = 0; g < plate->quad_count; ++g) /* the case the cut is for: a leaf wider than a cell */
        for (int c = 0; c < 4; ++c) {
            kcc_node4 scratch;
            const kcc_node4 *q = kcc_mesh_group(plate, g, &scratch);
            leaves_wider_than_a_cell += q->count[c] > 0 && q->x[1][c] - q->x[0][c] > cell;
        }
    assert_true(leaves_wider_than_a_cell > 0);
    assert_int_equal(slots, 200); /* 10 x 10 tiles of two triangles, each under one piece */
    assert_true(pieces >= 100);   /* a tile is as wide as 3 m: at most one a piece */
    mover_scene_free(&s);
    kcc_mesh_destroy(plate);
}

/* Teleporting and retuning characters in a world: a character teleported out of a sensor into
 * another keeps its id, the next step lists it leaving the one and entering the other, and it
 * lands where it was put (the move finds its ground again); retuned taller, its feet stay where
 * they were and it stands on as before; bad input gets statuses and changes nothing. */
static void characters_teleport_and_retune_in_a_world(void **state)
{
    (void)state;
    mover_scene s = mover_scene_make((vec3){0, 50, 0});
    kcc_mesh *volume = test_box_mesh((float[3]){-1.5f, 0, -1.5f}, (float[3]){1.5f, 3, 1.5f});
    kcc_body_desc bd = kcc_body_default_desc();
    bd.sensor = true;
    bd.transform.position[0] = -5.0f;
    uint32_t here, there, id;
    assert_int_equal(kcc_world_add_body(s.world, volume, &bd, &here), KCC_OK);
    bd.transform.position[0] = 5.0f;
    assert_int_equal(kcc_world_add_body(s.world, volume, &bd, &there), KCC_OK);
    kcc_character_desc d = player_desc();
    assert_int_equal(kcc_world_add_character(s.world, &d, (vec3){-5, d.half_extents[1] + 0.01f, 0}, &id), KCC_OK);
    assert_int_equal(kcc_world_step(s.world), KCC_OK);
    kcc_sensor_event ev[4];
    assert_int_equal(events_now(s.world, ev, 4), 1);
    assert_true(ev[0].sensor == here && ev[0].entered);
    assert_int_equal(kcc_world_set_character_position(s.world, id, (vec3){5, 1.5f, 0}), KCC_OK);
    assert_false(state_of(s.world, id, NULL).on_ground);
    for (int f = 0; f < 20; ++f) {
        assert_int_equal(kcc_world_set_displacement(s.world, id, (vec3){0, -0.05f, 0}), KCC_OK);
        assert_int_equal(kcc_world_step(s.world), KCC_OK);
        const uint32_t n = events_now(s.world, ev, 4);
        assert_int_equal(n, f == 0 ? 2u : 0u);
        if (n == 2)
            assert_true(ev[0].sensor == here && !ev[0].entered && ev[1].sensor == there && ev[1].entered &&
                        ev[1].character == id);
    }
    kcc_character_state st = state_of(s.world, id, NULL);
    assert_true(st.on_ground && st.position[0] == 5.0f);
    assert_true(fabsf(st.position[1] - d.half_extents[1] - d.skin_width) < 1e-3f);
    const float feet = st.position[1] - d.half_extents[1];
    d.half_extents[1] = 1.2f;
    assert_int_equal(kcc_world_set_character_desc(s.world, id, &d), KCC_OK);
    assert_int_equal(kcc_world_step(s.world), KCC_OK);
    st = state_of(s.world, id, NULL);
    assert_true(st.on_ground && fabsf(st.position[1] - 1.2f - feet) < 1e-3f);
    d.step_height = -1.0f;
    assert_int_equal(kcc_world_set_character_desc(s.world, id, &d), KCC_ERR_BAD_DESC);
    assert_int_equal(kcc_world_set_character_position(s.world, id, (vec3){NAN, 0, 0}), KCC_ERR_NON_FINITE);
    assert_int_equal(kcc_world_set_character_position(s.world, id, (vec3){0, 2e18f, 0}), KCC_ERR_BAD_DESC);
    assert_int_equal(kcc_world_set_character_position(s.world, id, NULL), KCC_ERR_NULL_ARGUMENT);
    assert_int_equal(kcc_world_set_character_position(NULL, id, (vec3){0, 0, 0}), KCC_ERR_NULL_ARGUMENT);
    assert_int_equal(kcc_world_set_character_position(s.world, id + 1, (vec3){0, 0, 0}), KCC_ERR_NOT_FOUND);
    assert_int_equal(kcc_world_set_character_desc(s.world, 0, NULL), KCC_ERR_NOT_FOUND);
    assert_true(state_of(s.world, id, NULL).position[0] == 5.0f);
    mover_scene_free(&s);
    kcc_mesh_destroy(volume);
}

/* Character layers: a ghost (on layer 4, colliding with the floor's layer 8 alone) walks through
 * a wall on layer 2 and through a character standing in its way, on the ground all along and never
 * put back; a walker with the default layers on the same path stops at the wall; the standing
 * character is not moved; a zero layer set is refused. */
static void character_layers_let_a_ghost_pass_through(void **state)
{
    (void)state;
    mover_scene s = mover_scene_make((vec3){0, 50, 0});
    kcc_mesh *wall = test_box_mesh((float[3]){2.0f, 0, -5}, (float[3]){2.5f, 3, 5});
    uint32_t wall_id, ghost, walker, stander;
    assert_int_equal(kcc_world_add_body(s.world, wall, NULL, &wall_id), KCC_OK);
    assert_int_equal(kcc_world_set_body_layers(s.world, wall_id, 2u), KCC_OK);
    assert_int_equal(kcc_world_set_body_layers(s.world, s.floor_id, 8u), KCC_OK);
    const kcc_character_desc d = player_desc();
    const float y = d.half_extents[1] + 0.01f;
    assert_int_equal(kcc_world_add_character(s.world, &d, (vec3){0, y, 0}, &ghost), KCC_OK);
    assert_int_equal(kcc_world_add_character(s.world, &d, (vec3){0, y, 3}, &walker), KCC_OK);
    assert_int_equal(kcc_world_add_character(s.world, &d, (vec3){4, y, 0}, &stander), KCC_OK);
    assert_int_equal(kcc_world_set_character_layers(s.world, ghost, 4u, 8u), KCC_OK);
    assert_int_equal(kcc_world_step(s.world), KCC_OK);
    const kcc_character_state stood = state_of(s.world, stander, NULL);
    for (int f = 0; f < 60; ++f) {
        assert_int_equal(kcc_world_set_displacement(s.world, ghost, (vec3){0.1f, -0.05f, 0}), KCC_OK);
        assert_int_equal(kcc_world_set_displacement(s.world, walker, (vec3){0.1f, -0.05f, 0}), KCC_OK);
        assert_int_equal(kcc_world_set_displacement(s.world, stander, (vec3){0, -0.05f, 0}), KCC_OK);
        assert_int_equal(kcc_world_step(s.world), KCC_OK);
        kcc_move_result r;
        assert_true(state_of(s.world, ghost, &r).on_ground);
        assert_false(r.flags & (KCC_MOVE_STUCK | KCC_MOVE_HIT_WALL));
    }
    assert_true(fabsf(state_of(s.world, ghost, NULL).position[0] - 6.0f) < 1e-3f);
    assert_true(fabsf(state_of(s.world, walker, NULL).position[0] - (2.0f - d.half_extents[0] - d.skin_width)) < 2e-3f);
    const kcc_character_state now = state_of(s.world, stander, NULL);
    assert_true(now.position[0] == stood.position[0] && now.position[2] == stood.position[2]);
    assert_int_equal(kcc_world_set_character_layers(s.world, ghost, 0u, 8u), KCC_ERR_BAD_DESC);
    assert_int_equal(kcc_world_set_character_layers(s.world, 0, 1u, 1u), KCC_ERR_NOT_FOUND);
    assert_int_equal(kcc_world_set_character_layers(NULL, ghost, 1u, 1u), KCC_ERR_NULL_ARGUMENT);
    mover_scene_free(&s);
    kcc_mesh_destroy(wall);
}

/* A static body given other layers between steps is seen by the characters' next moves as its
 * new layers say, though their caches keep its triangles from step to step: a walker whose mask
 * leaves out layer 2 stops at a wall on layer 1, walks through it once the wall is on layer 2, and
 * stops at its far side walking back once it is on layer 1 again (stops computed by hand from the
 * wall's faces, the box's half width and the skin). */
static void static_body_relayered_between_steps_is_seen_as_relayered(void **state)
{
    (void)state;
    mover_scene s = mover_scene_make((vec3){0, 50, 0});
    kcc_mesh *wall = test_box_mesh((float[3]){2.0f, 0, -5}, (float[3]){2.5f, 3, 5});
    uint32_t wall_id, walker;
    assert_int_equal(kcc_world_add_body(s.world, wall, NULL, &wall_id), KCC_OK);
    const kcc_character_desc d = player_desc();
    const float y = d.half_extents[1] + 0.01f, reach = d.half_extents[0] + d.skin_width;
    assert_int_equal(kcc_world_add_character(s.world, &d, (vec3){0, y, 0}, &walker), KCC_OK);
    assert_int_equal(kcc_world_set_character_layers(s.world, walker, 1u, ~2u), KCC_OK);
    const float stops[3] = {2.0f - reach, 2.5f + reach + 2.0f, 2.5f + reach};
    const uint32_t layers[3] = {1u, 2u, 1u};
    const float dx[3] = {0.1f, 0.1f, -0.1f};
    for (int leg = 0; leg < 3; ++leg) {
        assert_int_equal(kcc_world_set_body_layers(s.world, wall_id, layers[leg]), KCC_OK);
        const float start = state_of(s.world, walker, NULL).position[0];
        for (int f = 0; f < 40; ++f) {
            assert_int_equal(kcc_world_set_displacement(s.world, walker, (vec3){dx[leg], -0.05f, 0}),
                             KCC_OK);
            assert_int_equal(kcc_world_step(s.world), KCC_OK);
        }
        const float x = state_of(s.world, walker, NULL).position[0];
        if (leg == 1) /* free: 40 steps of 0.1 from where it stood */
            assert_true(fabsf(x - (start + 4.0f)) < 1e-3f && x > stops[leg]);
        else
            assert_true(fabsf(x - stops[leg]) < 2e-3f);
    }
    mover_scene_free(&s);
    kcc_mesh_destroy(wall);
}

/* ------------------------------------------------------------------------------------------------
 * Shifting the origin */

typedef struct far_scene {
    kcc_world *world;
    kcc_mesh  *floor, *platform, *volume;
    uint32_t   floor_id, lift_id, sensor_id, rider, walker, sitter;
} far_scene;

/* 10 km out: a 40 x 40 m floor (top at y = 0), a lift (top at 0.5) 5 m along x, a sensor 5 m the
 * other way with a character standing in it, a rider on the lift and a walker on the floor. */
static far_scene far_scene_make(const vec3 at)
{
    far_scene s;
    s.world = world_with(8, 8);
    s.floor = test_box_mesh((float[3]){-20, -1, -20}, (float[3]){20, 0, 20});
    s.platform = test_box_mesh((float[3]){-2, 0, -2}, (float[3]){2, 0.5f, 2});
    s.volume = test_box_mesh((float[3]){-1.5f, 0, -1.5f}, (float[3]){1.5f, 3, 1.5f});
    kcc_body_desc bd = kcc_body_default_desc();
    glm_vec3_copy((float *)at, bd.transform.position);
    assert_int_equal(kcc_world_add_body(s.world, s.floor, &bd, &s.floor_id), KCC_OK);
    bd.transform.position[0] = at[0] - 5.0f;
    bd.sensor = true;
    assert_int_equal(kcc_world_add_body(s.world, s.volume, &bd, &s.sensor_id), KCC_OK);
    bd.transform.position[0] = at[0] + 5.0f;
    bd.sensor = false;
    bd.kind = KCC_BODY_KINEMATIC;
    assert_int_equal(kcc_world_add_body(s.world, s.platform, &bd, &s.lift_id), KCC_OK);
    const kcc_character_desc d = player_desc();
    const float y = at[1] + d.half_extents[1] + 0.01f;
    assert_int_equal(kcc_world_add_character(s.world, &d, (vec3){at[0] + 5.0f, y + 0.5f, at[2]}, &s.rider), KCC_OK);
    assert_int_equal(kcc_world_add_character(s.world, &d, (vec3){at[0], y, at[2] - 8.0f}, &s.walker), KCC_OK);
    assert_int_equal(kcc_world_add_character(s.world, &d, (vec3){at[0] - 5.0f, y, at[2]}, &s.sitter), KCC_OK);
    return s;
}

static void far_scene_free(far_scene *s)
{
    kcc_world_destroy(s->world);
    kcc_mesh_destroy(s->floor);
    kcc_mesh_destroy(s->platform);
    kcc_mesh_destroy(s->volume);
}

/* One step: the lift to `lift_y` over `at` + 5 m along x, the walker walking along z, the others
 * pressed down; returns the number of sensor events. */
static uint32_t far_scene_step(far_scene *s, const vec3 at, float lift_y)
{
    kcc_transform t = kcc_transform_identity();
    t.position[0] = at[0] + 5.0f;
    t.position[1] = at[1] + lift_y;
    t.position[2] = at[2];
    assert_int_equal(kcc_world_move_body(s->world, s->lift_id, &t), KCC_OK);
    assert_int_equal(kcc_world_set_displacement(s->world, s->walker, (vec3){0, -0.01f, 0.05f}), KCC_OK);
    assert_int_equal(kcc_world_set_displacement(s->world, s->rider, (vec3){0, -0.01f, 0}), KCC_OK);
    assert_int_equal(kcc_world_set_displacement(s->world, s->sitter, (vec3){0, -0.01f, 0}), KCC_OK);
    assert_int_equal(kcc_world_step(s->world), KCC_OK);
    const kcc_sensor_event *events;
    return kcc_world_sensor_events(s->world, &events, NULL);
}

/* Whether character id's box, shrunk by the tolerance, overlaps a body. */
static bool character_overlaps_a_body(const kcc_world *w, uint32_t id)
{
    const kcc_character_state st = state_of(w, id, NULL);
    const kcc_character_desc d = player_desc();
    vec3 box[2];
    for (int k = 0; k < 3; ++k) {
        box[0][k] = st.position[k] - d.half_extents[k] + KCC_PENETRATION_TOLERANCE;
        box[1][k] = st.position[k] + d.half_extents[k] - KCC_PENETRATION_TOLERANCE;
    }
    return kcc_world_overlap_aabb(w, (const vec3 *)box, KCC_LAYERS_ALL, NULL, 0) > 0;
}

/* A world 10 km out shifted back to the origin: every body's pose (its start and its pending
 * target too) and every character's position move by exactly -origin (the subtraction of a
 * nearby origin is exact), the characters keep their ground, queries answer in the new frame,
 * and play goes on: the lift reaches the target set before the shift carrying its rider, the
 * walker walks on clear of the level, and the character standing in the sensor neither leaves
 * nor enters it again. */
static void shifting_the_origin_moves_everything_and_play_goes_on(void **state)
{
    (void)state;
    const vec3 far = {10000.0f, 500.0f, -10000.0f}, zero = {0.0f, 0.0f, 0.0f};
    far_scene s = far_scene_make(far);
    for (int f = 1; f <= 10; ++f)
        far_scene_step(&s, far, 0.05f * (float)f);
    const uint32_t ids[3] = {s.rider, s.walker, s.sitter};
    kcc_character_state before[3];
    kcc_move_result before_result[3];
    for (int i = 0; i < 3; ++i)
        before[i] = state_of(s.world, ids[i], &before_result[i]);
    kcc_transform pose_before, start_before;
    assert_int_equal(kcc_world_get_body_transform(s.world, s.lift_id, &pose_before, &start_before), KCC_OK);
    kcc_transform lift_target = kcc_transform_identity();
    lift_target.position[0] = far[0] + 5.0f;
    lift_target.position[1] = far[1] + 0.55f;
    lift_target.position[2] = far[2];
    assert_int_equal(kcc_world_move_body(s.world, s.lift_id, &lift_target), KCC_OK);
    assert_int_equal(kcc_world_shift_origin(s.world, far), KCC_OK);
    for (int i = 0; i < 3; ++i) {
        kcc_move_result r;
        const kcc_character_state now = state_of(s.world, ids[i], &r);
        for (int k = 0; k < 3; ++k)
            assert_true((double)now.position[k] == (double)before[i].position[k] - (double)far[k]);
        assert_true(now.on_ground && before[i].on_ground && now.ground_body == before[i].ground_body);
        assert_true((double)r.ground_height == (double)before_result[i].ground_height - (double)far[1]);
    }
    kcc_transform pose, start;
    assert_int_equal(kcc_world_get_body_transform(s.world, s.lift_id, &pose, &start), KCC_OK);
    for (int k = 0; k < 3; ++k) {
        assert_true((double)pose.position[k] == (double)pose_before.position[k] - (double)far[k]);
        assert_true((double)start.position[k] == (double)start_before.position[k] - (double)far[k]);
    }
    assert_true(pose.position[0] == 5.0f && pose.position[2] == 0.0f);
    kcc_world_hit hit;
    const kcc_character_state walker = state_of(s.world, s.walker, NULL);
    assert_true(kcc_world_raycast(s.world, (vec3){walker.position[0], 10, walker.position[2]},
                                  (vec3){0, -1, 0}, 20.0f, &hit));
    assert_true(hit.body == s.floor_id && hit.t == 10.0f && hit.point[1] == 0.0f);
    assert_int_equal(kcc_world_step(s.world), 0); /* to the target set before the shift */
    assert_int_equal(kcc_world_get_body_transform(s.world, s.lift_id, &pose, NULL), KCC_OK);
    for (int k = 0; k < 3; ++k)
        assert_true((double)pose.position[k] == (double)lift_target.position[k] - (double)far[k]);
    for (int f = 12; f <= 40; ++f) {
        assert_int_equal(far_scene_step(&s, zero, 0.05f * (float)f), 0);
        kcc_move_result r;
        const kcc_character_state rider = state_of(s.world, s.rider, &r);
        assert_true(rider.on_ground && rider.ground_body == s.lift_id);
        assert_true(fabsf(rider.position[1] - player_desc().half_extents[1] - (0.05f * (float)f + 0.5f)) < 0.01f);
        for (int i = 0; i < 3; ++i)
            assert_false(character_overlaps_a_body(s.world, ids[i]));
    }
    assert_true(state_of(s.world, s.walker, NULL).position[2] > walker.position[2] + 1.0f);
    far_scene_free(&s);
}

/* A shift is refused, with nothing moved, when it is not finite, or when a position would pass
 * KCC_WORLD_MAX_POSITION (a body at -9e17 shifted by +5e17). */
static void shifting_the_origin_refuses_bad_input(void **state)
{
    (void)state;
    const vec3 at = {-9e17f, 0.0f, 0.0f};
    far_scene s = far_scene_make((vec3){0, 0, 0});
    kcc_body_desc bd = kcc_body_default_desc();
    glm_vec3_copy((float *)at, bd.transform.position);
    uint32_t distant;
    assert_int_equal(kcc_world_add_body(s.world, s.floor, &bd, &distant), KCC_OK);
    assert_int_equal(kcc_world_shift_origin(NULL, at), KCC_ERR_NULL_ARGUMENT);
    assert_int_equal(kcc_world_shift_origin(s.world, NULL), KCC_ERR_NULL_ARGUMENT);
    assert_int_equal(kcc_world_shift_origin(s.world, (vec3){NAN, 0, 0}), KCC_ERR_NON_FINITE);
    assert_int_equal(kcc_world_shift_origin(s.world, (vec3){0, INFINITY, 0}), KCC_ERR_NON_FINITE);
    assert_int_equal(kcc_world_shift_origin(s.world, (vec3){5e17f, 0, 0}), KCC_ERR_BAD_DESC);
    kcc_transform pose;
    assert_int_equal(kcc_world_get_body_transform(s.world, s.lift_id, &pose, NULL), KCC_OK);
    assert_true(pose.position[0] == 5.0f);
    assert_int_equal(kcc_world_get_body_transform(s.world, distant, &pose, NULL), KCC_OK);
    assert_true(pose.position[0] == at[0]);
    assert_true(state_of(s.world, s.rider, NULL).position[0] == 5.0f);
    far_scene_free(&s);
}

/* The contacts of a step name the ground first, then a mover that pushed, then what the move ran
 * into: a wall (its body, triangle and normal) and another character. */
static void contacts_name_the_ground_the_pushers_walls_and_characters(void **state)
{
    (void)state;
    mover_scene s = mover_scene_make((vec3){0, 50, 0});
    kcc_mesh *wall = test_box_mesh((float[3]){2.0f, 0, -3}, (float[3]){2.5f, 3, 3});
    uint32_t wall_id, a, b;
    assert_int_equal(kcc_world_add_body(s.world, wall, NULL, &wall_id), KCC_OK);
    const kcc_character_desc d = player_desc();
    const float y = d.half_extents[1] + 0.01f;
    assert_int_equal(kcc_world_add_character(s.world, &d, (vec3){0, y, 0}, &a), KCC_OK);
    assert_int_equal(kcc_world_add_character(s.world, &d, (vec3){-3, y, 0}, &b), KCC_OK);
    bool saw_wall = false, saw_character = false;
    for (int f = 0; f < 40; ++f) {
        assert_int_equal(kcc_world_set_displacement(s.world, a, (vec3){0.1f, -0.01f, 0}), KCC_OK);
        assert_int_equal(kcc_world_set_displacement(s.world, b, (vec3){0.1f, -0.01f, 0}), KCC_OK);
        assert_int_equal(kcc_world_step(s.world), KCC_OK);
        kcc_contact c[KCC_WORLD_CONTACTS];
        bool overflow = true;
        const uint32_t n = kcc_world_get_contacts(s.world, a, c, KCC_WORLD_CONTACTS, &overflow);
        assert_false(overflow);
        assert_true(n >= 1);
        assert_int_equal(c[0].body, s.floor_id); /* the ground first */
        assert_true(c[0].normal[1] > 0.99f);
        for (uint32_t i = 1; i < n; ++i)
            if (c[i].body == wall_id) {
                saw_wall = true;
                assert_true(c[i].normal[0] < -0.99f);
                vec3 corners[3];
                assert_true(kcc_mesh_triangle(wall, c[i].triangle, corners));
                assert_true(corners[0][0] == 2.0f && corners[1][0] == 2.0f && corners[2][0] == 2.0f);
            }
        const uint32_t nb = kcc_world_get_contacts(s.world, b, c, KCC_WORLD_CONTACTS, NULL);
        for (uint32_t i = 0; i < nb; ++i)
            if (c[i].character == a) {
                saw_character = true;
                assert_true(c[i].normal[0] < -0.99f && c[i].body == 0);
            }
    }
    assert_true(saw_wall && saw_character);
    assert_int_equal(kcc_world_get_contacts(s.world, 0, NULL, 0, NULL), 0);
    mover_scene_free(&s);
    kcc_mesh_destroy(wall);
}

/* ------------------------------------------------------------------------------------------------
 * Characters' boxes as the world source lists them */

/* Listed boxes of every scale (centres from 1 mm to 1e17 m, where a box's extent rounds to 0 or
 * to far more than it is; extents from 2 cm to 200 m): each box triangle's plane is the one
 * kcc_tri_plane gives for its corners, bit for bit, and the query lists the boxes' triangles by
 * slot (ascending ids) whatever order box_slots is in, as brute force over the slots finds them. */
static void world_box_faces_have_kcc_tri_planes_planes(void **state)
{
    (void)state;
    kcc_world *w = world_with(4, 4);
    enum { BOXES = 64 };
    static float boxes[BOXES][2][3];
    uint32_t slots[BOXES];
    test_rng rng = rng_seed(41);
    for (uint32_t trial = 0; trial < 200; ++trial) {
        for (uint32_t i = 0; i < BOXES; ++i) {
            const float scale = powf(10.0f, rng_f(&rng, -3.0f, 17.0f)), half = rng_f(&rng, 0.01f, 100.0f);
            for (int k = 0; k < 3; ++k) {
                const float c = scale * rng_f(&rng, -1.0f, 1.0f);
                boxes[i][0][k] = c - half;
                boxes[i][1][k] = c + half;
            }
            slots[i] = i;
        }
        for (uint32_t i = BOXES - 1; i > 0; --i) { /* box_slots in a random order */
            const uint32_t j = rng_u32(&rng) % (i + 1), t = slots[i];
            slots[i] = slots[j];
            slots[j] = t;
        }
        const uint32_t listed = 1 + rng_u32(&rng) % 8, first = rng_u32(&rng) % (BOXES - listed);
        kcc_world_source src;
        kcc_world_source_init(&src, w, KCC_LAYERS_ALL);
        src.boxes = (const float(*)[2][3])boxes;
        src.box_slots = slots + first;
        src.box_count = listed;
        const vec3 everywhere[2] = {{-1e30f, -1e30f, -1e30f}, {1e30f, 1e30f, 1e30f}};
        uint32_t handles[KCC_LOCAL_MAX], want[KCC_LOCAL_MAX], n_want = 0;
        const uint32_t n = src.base.ops->query(&src.base, everywhere, handles, KCC_LOCAL_MAX);
        for (uint32_t slot = 0; slot < BOXES; ++slot)
            for (uint32_t i = 0; i < listed; ++i)
                if (slots[first + i] == slot)
                    for (uint32_t k = 0; k < 12; ++k)
                        want[n_want++] = KCC_WORLD_BOX_TRIS + 12u * slot + k;
        assert_int_equal(n, n_want);
        assert_memory_equal(handles, want, n * sizeof *handles);
        kcc_local_tri tris[KCC_LOCAL_MAX];
        src.base.ops->fetch(&src.base, handles, n, tris);
        for (uint32_t i = 0; i < n; ++i) {
            kcc_tri t;
            memcpy(t.v, tris[i].v, sizeof t.v);
            kcc_plane plane;
            kcc_tri_plane(&t, &plane);
            assert_memory_equal(tris[i].n, plane.n, sizeof plane.n);
            assert_memory_equal(&tris[i].d, &plane.d, sizeof plane.d);
        }
    }
    kcc_world_destroy(w);
}

/* The entries of a list whose bounds touch region, in list order: their triangles and bounds
 * (lo x y z, hi x y z) in out_tris and out_bounds; returns how many. */
static uint32_t entries_in_region(const kcc_local *list, const vec3 region[2], kcc_local_tri *out_tris,
                                  float (*out_bounds)[6])
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < list->count; ++i) {
        bool touches = true;
        for (int k = 0; k < 3; ++k)
            touches = touches && kcc_local_lo(list, k, i) <= region[1][k] && kcc_local_hi(list, k, i) >= region[0][k];
        if (!touches)
            continue;
        out_tris[n] = list->tris[i];
        for (int k = 0; k < 3; ++k) {
            out_bounds[n][k] = kcc_local_lo(list, k, i);
            out_bounds[n][3 + k] = kcc_local_hi(list, k, i);
        }
        ++n;
    }
    return n;
}

/* A move's list through a split world source (kcc_world_source_split: the static level kept in a
 * character's cache, the other bodies and the characters' boxes listed afresh and merged by id)
 * holds, in its region, the triangles of the whole source's list (kcc_local_gather), in the same
 * order, with the same bounds, bit for bit: with kinematic platforms whose triangle ranges lie
 * below and above the level's (their triangles merged in front of and after the cached ones) and
 * boxes (after every body's), over random regions read through one cache as a walking
 * character's are. */
static void split_gathers_list_what_the_whole_source_lists(void **state)
{
    (void)state;
    kcc_level lv;
    kcc_mesh *level = open_level(&lv);
    kcc_mesh *platform = test_box_mesh((float[3]){-1, -0.25f, -1}, (float[3]){1, 0, 1});
    kcc_world *w = world_with(4, 4);
    const float *spawn = lv.spawns;
    kcc_body_desc kd = kcc_body_default_desc();
    kd.kind = KCC_BODY_KINEMATIC;
    uint32_t first_id, level_id, last_id;
    memcpy(kd.transform.position, (float[3]){spawn[0] - 1.5f, spawn[1] + 0.5f, spawn[2]}, sizeof(float[3]));
    assert_int_equal(kcc_world_add_body(w, platform, &kd, &first_id), KCC_OK);
    assert_int_equal(kcc_world_add_body(w, level, NULL, &level_id), KCC_OK);
    memcpy(kd.transform.position, (float[3]){spawn[0] + 1.5f, spawn[1] + 1.0f, spawn[2]}, sizeof(float[3]));
    assert_int_equal(kcc_world_add_body(w, platform, &kd, &last_id), KCC_OK);
    enum { BOXES = 16 };
    static float boxes[BOXES][2][3];
    uint32_t slots[BOXES];
    static kcc_local_cache cache;
    static kcc_local_store split_store, whole_store;
    static kcc_local_tri split_tris[KCC_LOCAL_MAX], whole_tris[KCC_LOCAL_MAX];
    static float split_bounds[KCC_LOCAL_MAX][6], whole_bounds[KCC_LOCAL_MAX][6];
    memset(&cache, 0, sizeof cache);
    test_rng rng = rng_seed(97);
    uint32_t ahead = 0, among = 0, boxed = 0;
    for (uint32_t trial = 0; trial < 3000; ++trial) {
        for (uint32_t i = 0; i < BOXES; ++i) { /* characters standing around, some touching */
            for (int k = 0; k < 3; ++k) {
                const float c = spawn[k] + rng_f(&rng, -3.0f, 3.0f), half = k == 1 ? 0.875f : 0.47f;
                boxes[i][0][k] = c - half;
                boxes[i][1][k] = c + half;
            }
            slots[i] = BOXES - 1 - i;
        }
        vec3 region[2];
        for (int k = 0; k < 3; ++k) { /* a move's region, wandering near the spawn */
            const float c = spawn[k] + rng_f(&rng, -3.0f, 3.0f), half = rng_f(&rng, 0.3f, 2.0f);
            region[0][k] = c - half;
            region[1][k] = c + half;
        }
        kcc_world_source all, fixed, rest;
        kcc_world_source_init(&all, w, KCC_LAYERS_ALL);
        all.base.key = kcc_world_step_key(w);
        all.boxes = (const float(*)[2][3])boxes;
        all.box_slots = slots;
        all.box_count = rng_u32(&rng) % (BOXES + 1);
        kcc_world_source_split(&all, &fixed, &rest);
        const vec3 grow[2] = {{0.5f, 0.5f, 0.5f}, {0.5f, 0.5f, 0.5f}};
        kcc_local split, whole;
        kcc_local_gather_cached(&split, &split_store, &cache, &all.base, (const vec3 *)region, grow);
        kcc_local_gather(&whole, &whole_store, &all.base, (const vec3 *)region);
        assert_int_equal(split.overflow, whole.overflow);
        const uint32_t n = entries_in_region(&whole, (const vec3 *)region, whole_tris, whole_bounds);
        assert_int_equal(entries_in_region(&split, (const vec3 *)region, split_tris, split_bounds), n);
        assert_memory_equal(split_tris, whole_tris, n * sizeof *whole_tris);
        assert_memory_equal(split_bounds, whole_bounds, n * sizeof *whole_bounds);
        bool first = false, fixed_seen = false, after = false;
        for (uint32_t i = 0; i < n; ++i) {
            const uint32_t body = kcc_world_triangle_body(w, whole_tris[i].index);
            first = first || body == first_id;
            fixed_seen = fixed_seen || body == level_id;
            after = after || (whole_tris[i].index >= KCC_WORLD_BOX_TRIS || body == last_id);
            boxed += whole_tris[i].index >= KCC_WORLD_BOX_TRIS;
        }
        among += first && fixed_seen;
        ahead += fixed_seen && after;
    }
    assert_true(among > 100 && ahead > 100 && boxed > 1000); /* both merges ran, often */
    kcc_world_destroy(w);
    kcc_mesh_destroy(platform);
    kcc_mesh_destroy(level);
    kcc_level_free(&lv);
}

/* ------------------------------------------------------------------------------------------------
 * Neighbour lists */

/* world_neighbours.c's mark of a character entry (the rest: its slot). */
#define TEST_NEAR_CHARACTER 0x80000000u

static int compare_u32(const void *a, const void *b)
{
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static bool regions_touch(const float a[2][3], const float b[2][3])
{
    for (int k = 0; k < 3; ++k)
        if (a[0][k] > b[1][k] || b[0][k] > a[1][k])
            return false;
    return true;
}

/* Every live character's neighbour list against brute force over the step's regions: the pieces
 * whose bounds touch its region, and every other character whose region does. Returns how many
 * entries the lists hold in all (the lists must not have overflowed). */
static uint32_t check_neighbours_brute_force(const kcc_world *w)
{
    const struct kcc_world_characters *cs = kcc_world_characters(w);
    assert_false(cs->near.all);
    static uint32_t want[4096], got[4096];
    uint32_t total = 0;
    for (uint32_t i = 0; i < cs->live_count; ++i) {
        const uint32_t slot = cs->live[i];
        const float(*r)[3] = (const float(*)[3])cs->regions[slot];
        uint32_t n = 0;
        for (uint32_t b = 0; b < w->body_end; ++b)
            for (uint32_t k = w->bodies[b].mesh ? w->bodies[b].first_piece : KCC_WORLD_NO_PIECE;
                 k != KCC_WORLD_NO_PIECE; k = w->pieces[k].next)
                if (regions_touch(r, (const float(*)[3])w->pieces[k].bounds))
                    want[n++] = k;
        for (uint32_t j = 0; j < cs->live_count; ++j)
            if (j != i && regions_touch(r, (const float(*)[3])cs->regions[cs->live[j]]))
                want[n++] = TEST_NEAR_CHARACTER | cs->live[j];
        assert_int_equal(cs->near.count[slot], n);
        memcpy(got, cs->near.entries + cs->near.first[slot], n * sizeof *got);
        for (uint32_t k = cs->near.pieces[slot]; k < n; ++k) /* sorted: characters as bare slots */
            got[k] |= TEST_NEAR_CHARACTER;
        qsort(want, n, sizeof *want, compare_u32);
        qsort(got, n, sizeof *got, compare_u32);
        assert_memory_equal(got, want, n * sizeof *got);
        total += n;
    }
    return total;
}

#define NEAR_CROWD 360

/* A crowd for the neighbour lists: a dense block (0.8 m apart), a sparse one (5 m), a few far off
 * (beyond any torus of cells the grid could keep without wrapping, and on a storey 40 m up), a few
 * with long displacements (regions far larger than the others), around a moving kinematic body. */
static kcc_world *near_crowd_world(uint32_t pair_capacity, kcc_mesh *floor_mesh, kcc_mesh *box,
                                   uint32_t *box_id, uint32_t ids[NEAR_CROWD])
{
    kcc_world_desc wd = kcc_world_default_desc();
    wd.body_capacity = 4;
    wd.character_capacity = NEAR_CROWD;
    wd.pair_capacity = pair_capacity;
    kcc_world *w = NULL;
    assert_int_equal(kcc_world_create(&wd, &w), KCC_OK);
    uint32_t floor_id;
    assert_int_equal(kcc_world_add_body(w, floor_mesh, NULL, &floor_id), KCC_OK);
    kcc_body_desc bd = kcc_body_default_desc();
    bd.kind = KCC_BODY_KINEMATIC;
    bd.transform.position[0] = 3.0f;
    assert_int_equal(kcc_world_add_body(w, box, &bd, box_id), KCC_OK);
    const kcc_character_desc d = player_desc();
    test_rng rng = rng_seed(71);
    for (int c = 0; c < NEAR_CROWD; ++c) {
        vec3 at = {0.0f, 0.9f, 0.0f};
        if (c < 200) {
            at[0] = 0.8f * (float)(c % 14), at[2] = 0.8f * (float)(c / 14);
        } else if (c < 340) {
            at[0] = -100.0f + 5.0f * (float)((c - 200) % 12), at[2] = 5.0f * (float)((c - 200) / 12);
        } else {
            at[0] = c % 2 ? 3000.0f + 0.5f * (float)c : 0.7f * (float)(c - 340);
            at[1] = c % 4 == 1 ? 40.9f : 0.9f;
            at[2] = c % 4 == 3 ? -2500.0f : 1.3f;
        }
        at[0] += rng_f(&rng, -0.05f, 0.05f);
        at[2] += rng_f(&rng, -0.05f, 0.05f);
        assert_int_equal(kcc_world_add_character(w, &d, at, &ids[c]), KCC_OK);
    }
    return w;
}

static void step_near_crowd(kcc_world *w, uint32_t box_id, const uint32_t ids[NEAR_CROWD], int f)
{
    kcc_transform t = kcc_transform_identity();
    t.position[0] = 3.0f + 0.05f * (float)f;
    assert_int_equal(kcc_world_move_body(w, box_id, &t), KCC_OK);
    for (int c = 0; c < NEAR_CROWD; ++c) {
        const float far = c >= 340 && c % 3 == 0 ? 12.0f : 0.1f; /* a few long displacements */
        const vec3 disp = {far * cosf(0.7f * (float)c), -0.05f, far * sinf(0.7f * (float)c)};
        assert_int_equal(kcc_world_set_displacement(w, ids[c], disp), KCC_OK);
    }
    assert_int_equal(kcc_world_step(w), KCC_OK);
}

/* The neighbour lists a step finds (world_neighbours.c: a grid of the regions, the pieces through
 * the broadphase) equal brute force over the regions, whether every list fits the even share of the
 * entries or some must be laid out again at their own sizes; when the entries cannot hold them
 * all, every character sees everything; and the steps end in the same places either way. */
static void neighbour_lists_equal_brute_force(void **state)
{
    (void)state;
    kcc_mesh *floor_mesh = test_box_mesh((float[3]){-5000, -1, -5000}, (float[3]){5000, 0, 5000});
    kcc_mesh *box = test_box_mesh((float[3]){-1, 0, -1}, (float[3]){1, 2, 1});
    const uint32_t capacities[3] = {64u * NEAR_CROWD, 24u * NEAR_CROWD, NEAR_CROWD};
    kcc_world *w[3];
    uint32_t box_id[3], ids[3][NEAR_CROWD];
    for (int v = 0; v < 3; ++v)
        w[v] = near_crowd_world(capacities[v], floor_mesh, box, &box_id[v], ids[v]);
    for (int f = 0; f < 6; ++f) {
        uint32_t total = 0;
        for (int v = 0; v < 3; ++v) {
            step_near_crowd(w[v], box_id[v], ids[v], f);
            const struct kcc_world_characters *cs = kcc_world_characters(w[v]);
            if (v == 0) {
                total = check_neighbours_brute_force(w[v]);
                uint32_t most = 0;
                for (uint32_t i = 0; i < cs->live_count; ++i)
                    most = cs->near.count[cs->live[i]] > most ? cs->near.count[cs->live[i]] : most;
                /* the middle capacity: some list exceeds its share, all fit end to end */
                assert_true(most > 2u * capacities[1] / NEAR_CROWD && total <= 2u * capacities[1]);
                assert_true(total > 2u * capacities[2]);
            } else if (v == 1) {
                assert_int_equal(check_neighbours_brute_force(w[v]), total);
            } else {
                assert_true(cs->near.all);
            }
            for (int c = 0; c < NEAR_CROWD; ++c) {
                const kcc_character_state a = state_of(w[0], ids[0][c], NULL);
                const kcc_character_state b = state_of(w[v], ids[v][c], NULL);
                assert_memory_equal(a.position, b.position, sizeof a.position);
            }
        }
    }
    for (int v = 0; v < 3; ++v)
        kcc_world_destroy(w[v]);
    kcc_mesh_destroy(box);
    kcc_mesh_destroy(floor_mesh);
}

int test_group_world_step(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(world_characters_have_checked_ids_and_displacements),
        cmocka_unit_test(a_character_beyond_the_largest_position_is_refused),
        cmocka_unit_test(neighbour_lists_equal_brute_force),
        cmocka_unit_test(world_box_faces_have_kcc_tri_planes_planes),
        cmocka_unit_test(split_gathers_list_what_the_whole_source_lists),
        cmocka_unit_test(world_of_one_identity_body_moves_as_the_mesh),
        cmocka_unit_test(world_placed_body_moves_as_the_level),
        cmocka_unit_test(character_rides_a_lift_up_and_down),
        cmocka_unit_test(character_rides_a_sliding_platform),
        cmocka_unit_test(character_comes_round_on_a_turntable),
        cmocka_unit_test(character_rides_a_pendulum_platform),
        cmocka_unit_test(lift_into_a_ceiling_stops_and_crushes_its_rider),
        cmocka_unit_test(door_pushes_a_character_ahead_of_it),
        cmocka_unit_test(door_against_a_wall_crushes_and_never_pushes_into_the_wall),
        cmocka_unit_test(a_pushed_character_meets_characters_and_sensors_past_its_walk),
        cmocka_unit_test(two_doors_never_push_two_characters_into_each_other),
        cmocka_unit_test(characters_are_solid_boxes_to_each_other),
        cmocka_unit_test(a_fast_slide_stops_against_a_character_far_off),
        cmocka_unit_test(a_deep_push_out_gathers_inside_the_step_region),
        cmocka_unit_test(character_rides_another_that_walks),
        cmocka_unit_test(world_step_is_the_same_for_any_workers),
        cmocka_unit_test(a_crowd_walking_to_one_point_never_overlaps),
        cmocka_unit_test(sensors_list_who_enters_and_leaves),
        cmocka_unit_test(a_sensor_split_into_pieces_reports_each_character_once),
        cmocka_unit_test(a_large_sensor_of_small_tiles_gives_pieces_that_fit_a_cell),
        cmocka_unit_test(a_crowd_among_moving_crates_is_pushed_clear_of_every_one),
        cmocka_unit_test(contacts_name_the_ground_the_pushers_walls_and_characters),
        cmocka_unit_test(characters_teleport_and_retune_in_a_world),
        cmocka_unit_test(character_layers_let_a_ghost_pass_through),
        cmocka_unit_test(static_body_relayered_between_steps_is_seen_as_relayered),
        cmocka_unit_test(shifting_the_origin_moves_everything_and_play_goes_on),
        cmocka_unit_test(shifting_the_origin_refuses_bad_input),
    };
    return KCC_RUN_GROUP("world_step", tests);
}
