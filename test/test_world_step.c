/* test_world_step.c: owns the tests of characters in a world (controller/world_step.c and the
 * world's neighbourhood source, collide/world_source.c): character ids and displacements, moves
 * through one identity body against kcc_character_move on its mesh (bit for bit), through placed
 * bodies against the same triangles built as one mesh, and ground bodies. */
#include "test.h"

#include <cglm/cglm.h>

#include "kcc_world_internal.h"

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

int test_group_world_step(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(world_characters_have_checked_ids_and_displacements),
        cmocka_unit_test(world_of_one_identity_body_moves_as_the_mesh),
        cmocka_unit_test(world_placed_body_moves_as_the_level),
    };
    return KCC_RUN_GROUP("world_step", tests);
}
