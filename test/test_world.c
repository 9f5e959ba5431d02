/* test_world.c: owns the tests of the world's core (collide/world.c, collide/transform.c): ids and
 * their generations, capacities and the one allocation, bad descs and transforms, kinematic
 * targets over steps, the transform arithmetic against a double-precision reference, and the
 * conservative bounds of placed boxes. The world's queries are test_world_query.c's. */
#include "test.h"

#include "kcc_world_internal.h"

static test_rng rng_seed(uint64_t seed)
{
    return rng_seed_salted(seed, 0x3141592653ull);
}

/* A unit cube mesh (12 triangles) from 0 to 1. */
static kcc_mesh *cube_mesh(void)
{
    return test_box_mesh((float[3]){0, 0, 0}, (float[3]){1, 1, 1});
}

static kcc_world *small_world(uint32_t bodies)
{
    kcc_world_desc d = kcc_world_default_desc();
    d.body_capacity = bodies;
    kcc_world *w = NULL;
    assert_int_equal(kcc_world_create(&d, &w), KCC_OK);
    return w;
}

/* A random unit quaternion and a position within +-range. */
static kcc_transform random_transform(test_rng *r, float range)
{
    kcc_transform t;
    test_random_rotation(r, t.rotation);
    for (int k = 0; k < 3; ++k)
        t.position[k] = rng_f(r, -range, range);
    return t;
}

/* The reference placement in double: q p q* + position, by the quaternion product. */
static void reference_point(const kcc_transform *t, const double p[3], double out[3])
{
    const double x = t->rotation[0], y = t->rotation[1], z = t->rotation[2], w = t->rotation[3];
    /* v' = v + 2 w (u x v) + 2 u x (u x v), u = (x, y, z) */
    const double u[3] = {x, y, z};
    const double c1[3] = {u[1] * p[2] - u[2] * p[1], u[2] * p[0] - u[0] * p[2], u[0] * p[1] - u[1] * p[0]};
    const double c2[3] = {u[1] * c1[2] - u[2] * c1[1], u[2] * c1[0] - u[0] * c1[2],
                          u[0] * c1[1] - u[1] * c1[0]};
    for (int k = 0; k < 3; ++k)
        out[k] = p[k] + 2.0 * w * c1[k] + 2.0 * c2[k] + t->position[k];
}

/* ------------------------------------------------------------------------------------------------
 * Ids */

static void world_ids_are_never_zero_and_removed_ids_are_not_found(void **state)
{
    (void)state;
    kcc_mesh *m = cube_mesh();
    kcc_world *w = small_world(4);
    uint32_t a = 0, b = 0;
    assert_int_equal(kcc_world_add_body(w, m, NULL, &a), KCC_OK);
    assert_int_equal(kcc_world_add_body(w, m, NULL, &b), KCC_OK);
    assert_true(a != 0 && b != 0 && a != b);
    assert_int_equal(kcc_world_body_count(w), 2);
    assert_int_equal(kcc_world_remove_body(w, a), KCC_OK);
    assert_int_equal(kcc_world_remove_body(w, a), KCC_ERR_NOT_FOUND);
    kcc_transform t;
    assert_int_equal(kcc_world_get_body_transform(w, a, &t, NULL), KCC_ERR_NOT_FOUND);
    assert_int_equal(kcc_world_set_body_layers(w, a, 2), KCC_ERR_NOT_FOUND);
    assert_null(kcc_world_body_mesh(w, a));
    assert_ptr_equal(kcc_world_body_mesh(w, b), m);
    /* never issued: 0, an index past the capacity, a generation never given, all bits */
    const uint32_t never[] = {0u, 5u, b + (1u << KCC_ID_INDEX_BITS), 0xffffffffu, b & ~KCC_ID_INDEX_MASK};
    for (size_t i = 0; i < sizeof never / sizeof never[0]; ++i) {
        assert_int_equal(kcc_world_remove_body(w, never[i]), KCC_ERR_NOT_FOUND);
        assert_int_equal(kcc_world_get_body_transform(w, never[i], &t, NULL), KCC_ERR_NOT_FOUND);
        assert_int_equal(kcc_world_body_user_data(w, never[i]), 0);
    }
    assert_int_equal(kcc_world_remove_body(NULL, b), KCC_ERR_NULL_ARGUMENT);
    assert_int_equal(kcc_world_body_count(w), 1);
    kcc_world_destroy(w);
    kcc_mesh_destroy(m);
}

/* Freed slots are reused oldest first and their generation grows: many add/remove cycles never
 * hand out an id twice, and every stale id stays not found. */
static void world_ids_are_not_reused_soon(void **state)
{
    (void)state;
    kcc_mesh *m = cube_mesh();
    kcc_world *w = small_world(8);
    enum { CYCLES = 200 };
    uint32_t seen[CYCLES], keep = 0;
    assert_int_equal(kcc_world_add_body(w, m, NULL, &keep), KCC_OK);
    for (int i = 0; i < CYCLES; ++i) {
        assert_int_equal(kcc_world_add_body(w, m, NULL, &seen[i]), KCC_OK);
        for (int j = 0; j < i; ++j)
            assert_true(seen[j] != seen[i]);
        assert_int_equal(kcc_world_remove_body(w, seen[i]), KCC_OK);
    }
    for (int i = 0; i < CYCLES; ++i)
        assert_int_equal(kcc_world_remove_body(w, seen[i]), KCC_ERR_NOT_FOUND);
    assert_ptr_equal(kcc_world_body_mesh(w, keep), m);
    kcc_world_destroy(w);
    kcc_mesh_destroy(m);
}

/* ------------------------------------------------------------------------------------------------
 * Capacities, descs and the one allocation */

typedef struct counting_allocator {
    int allocations, frees;
} counting_allocator;

static void *counting_alloc(size_t bytes, size_t align, void *user)
{
    ++((counting_allocator *)user)->allocations;
    return aligned_alloc(align, (bytes + align - 1) / align * align);
}

static void counting_free(void *ptr, void *user)
{
    ++((counting_allocator *)user)->frees;
    free(ptr);
}

static void world_allocates_once_and_refuses_beyond_its_capacity(void **state)
{
    (void)state;
    kcc_mesh *m = cube_mesh();
    counting_allocator count = {0, 0};
    kcc_world_desc d = kcc_world_default_desc();
    d.body_capacity = 3;
    d.allocator.alloc = counting_alloc;
    d.allocator.free = counting_free;
    d.allocator.user = &count;
    kcc_world *w = NULL;
    assert_int_equal(kcc_world_create(&d, &w), KCC_OK);
    assert_int_equal(count.allocations, 1);
    assert_true(kcc_world_memory_bytes(w) > sizeof(kcc_body) * 3);
    uint32_t id[4];
    for (int i = 0; i < 3; ++i)
        assert_int_equal(kcc_world_add_body(w, m, NULL, &id[i]), KCC_OK);
    assert_int_equal(kcc_world_add_body(w, m, NULL, &id[3]), KCC_ERR_TOO_LARGE);
    assert_int_equal(kcc_world_remove_body(w, id[1]), KCC_OK);
    assert_int_equal(kcc_world_add_body(w, m, NULL, &id[3]), KCC_OK);
    assert_int_equal(kcc_world_step(w), KCC_OK);
    assert_int_equal(count.allocations, 1);
    kcc_world_destroy(w);
    assert_int_equal(count.frees, 1);
    kcc_mesh_destroy(m);
}

static void world_create_refuses_bad_descs(void **state)
{
    (void)state;
    kcc_world *w = NULL;
    assert_int_equal(kcc_world_create(NULL, NULL), KCC_ERR_NULL_ARGUMENT);
    kcc_world_desc d = kcc_world_default_desc();
    const float cells[] = {-1.0f, NAN, INFINITY};
    for (size_t i = 0; i < sizeof cells / sizeof cells[0]; ++i) {
        d = kcc_world_default_desc();
        d.grid_cell_size = cells[i];
        assert_int_equal(kcc_world_create(&d, &w), KCC_ERR_BAD_DESC);
    }
    d = kcc_world_default_desc();
    d.allocator.alloc = counting_alloc;
    assert_int_equal(kcc_world_create(&d, &w), KCC_ERR_BAD_DESC);
    d = kcc_world_default_desc();
    d.body_capacity = KCC_WORLD_MAX_OBJECTS + 1;
    assert_int_equal(kcc_world_create(&d, &w), KCC_ERR_TOO_LARGE);
    assert_null(w);
    /* NULL desc and zero capacities mean the defaults */
    assert_int_equal(kcc_world_create(NULL, &w), KCC_OK);
    assert_int_equal(w->desc.body_capacity, kcc_world_default_desc().body_capacity);
    kcc_world_destroy(w);
    kcc_world_destroy(NULL);
    memset(&d, 0, sizeof d);
    assert_int_equal(kcc_world_create(&d, &w), KCC_OK);
    assert_int_equal(w->desc.body_capacity, kcc_world_default_desc().body_capacity);
    kcc_world_destroy(w);
}

/* API.md: a rotation within 1e-3 of unit length is normalised and accepted; 0, NaN, 0.71, 2 are
 * refused, as are NaN or infinite positions; move_body on a static body is refused. */
static void world_refuses_bad_transforms_and_bodies(void **state)
{
    (void)state;
    kcc_mesh *m = cube_mesh();
    kcc_world *w = small_world(8);
    kcc_body_desc bd = kcc_body_default_desc();
    uint32_t id = 0;
    const float lengths[] = {0.0f, 0.71f, 2.0f, 1.0011f, 0.9989f};
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; ++i) {
        bd.transform = kcc_transform_identity();
        bd.transform.rotation[3] = lengths[i];
        assert_int_equal(kcc_world_add_body(w, m, &bd, &id), KCC_ERR_BAD_DESC);
    }
    bd.transform = kcc_transform_identity();
    bd.transform.rotation[1] = NAN;
    assert_int_equal(kcc_world_add_body(w, m, &bd, &id), KCC_ERR_NON_FINITE);
    bd.transform = kcc_transform_identity();
    bd.transform.position[2] = INFINITY;
    assert_int_equal(kcc_world_add_body(w, m, &bd, &id), KCC_ERR_NON_FINITE);
    bd = kcc_body_default_desc();
    bd.layers = 0;
    assert_int_equal(kcc_world_add_body(w, m, &bd, &id), KCC_ERR_BAD_DESC);
    bd = kcc_body_default_desc();
    bd.kind = (kcc_body_kind)5;
    assert_int_equal(kcc_world_add_body(w, m, &bd, &id), KCC_ERR_BAD_DESC);
    assert_int_equal(kcc_world_add_body(w, NULL, NULL, &id), KCC_ERR_NULL_ARGUMENT);
    assert_int_equal(kcc_world_add_body(w, m, NULL, NULL), KCC_ERR_NULL_ARGUMENT);
    assert_int_equal(kcc_world_body_count(w), 0);
    /* within the tolerance: accepted, normalised */
    bd = kcc_body_default_desc();
    bd.transform.rotation[3] = 1.0009f;
    assert_int_equal(kcc_world_add_body(w, m, &bd, &id), KCC_OK);
    kcc_transform t;
    assert_int_equal(kcc_world_get_body_transform(w, id, &t, NULL), KCC_OK);
    assert_true(t.rotation[3] == 1.0f);
    /* a static body has no target */
    assert_int_equal(kcc_world_move_body(w, id, &t), KCC_ERR_BAD_DESC);
    kcc_world_destroy(w);
    kcc_mesh_destroy(m);
}

/* ------------------------------------------------------------------------------------------------
 * Kinematic motion */

static void kinematic_body_reaches_its_target_in_the_next_step(void **state)
{
    (void)state;
    kcc_mesh *m = cube_mesh();
    kcc_world *w = small_world(8);
    kcc_body_desc bd = kcc_body_default_desc();
    bd.kind = KCC_BODY_KINEMATIC;
    bd.user_data = 77;
    uint32_t id = 0;
    assert_int_equal(kcc_world_add_body(w, m, &bd, &id), KCC_OK);
    assert_int_equal(kcc_world_body_user_data(w, id), 77);
    kcc_transform first = {{5.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 1.0f}};
    kcc_transform target = {{1.0f, 2.0f, 3.0f}, {0.0f, 0.70710677f, 0.0f, 0.70710677f}};
    assert_int_equal(kcc_world_move_body(w, id, &first), KCC_OK);
    assert_int_equal(kcc_world_move_body(w, id, &target), KCC_OK); /* the last target wins */
    kcc_transform now, start;
    assert_int_equal(kcc_world_get_body_transform(w, id, &now, &start), KCC_OK);
    assert_true(now.position[0] == 0.0f && now.rotation[3] == 1.0f); /* not before the step */
    assert_int_equal(kcc_world_step(w), KCC_OK);
    assert_int_equal(kcc_world_get_body_transform(w, id, &now, &start), KCC_OK);
    assert_memory_equal(now.position, target.position, sizeof now.position);
    assert_true(fabsf(now.rotation[1] - target.rotation[1]) <= 1e-7f);
    assert_true(start.position[0] == 0.0f && start.rotation[3] == 1.0f);
    /* no new target: it stays, and its motion over the step is none */
    assert_int_equal(kcc_world_step(w), KCC_OK);
    kcc_transform again, again_start;
    assert_int_equal(kcc_world_get_body_transform(w, id, &again, &again_start), KCC_OK);
    assert_memory_equal(&again, &now, sizeof now);
    assert_memory_equal(&again_start, &now, sizeof now);
    /* a teleport records no motion */
    assert_int_equal(kcc_world_set_body_transform(w, id, &first), KCC_OK);
    assert_int_equal(kcc_world_get_body_transform(w, id, &now, &start), KCC_OK);
    assert_memory_equal(&now, &start, sizeof now);
    kcc_world_destroy(w);
    kcc_mesh_destroy(m);
}

/* ------------------------------------------------------------------------------------------------
 * Transform arithmetic */

static void transform_point_matches_the_quaternion_product(void **state)
{
    (void)state;
    /* a quarter turn about +Y takes +X to -Z */
    kcc_transform quarter = {{0.0f, 0.0f, 0.0f}, {0.0f, 0.70710677f, 0.0f, 0.70710677f}};
    vec3 out;
    kcc_transform_point(&quarter, (vec3){1.0f, 0.0f, 0.0f}, out);
    assert_true(fabsf(out[0]) < 1e-6f && fabsf(out[1]) < 1e-6f && fabsf(out[2] + 1.0f) < 1e-6f);
    test_rng r = rng_seed(1);
    for (int i = 0; i < 2000; ++i) {
        kcc_transform t = random_transform(&r, 100.0f);
        const float p[3] = {rng_f(&r, -50, 50), rng_f(&r, -50, 50), rng_f(&r, -50, 50)};
        const double pd[3] = {p[0], p[1], p[2]};
        double ref[3];
        reference_point(&t, pd, ref);
        vec3 got, back, dir;
        kcc_transform_point(&t, p, got);
        kcc_transform_inverse_point(&t, got, back);
        kcc_transform_vector(&t, p, dir);
        for (int k = 0; k < 3; ++k) {
            assert_true(fabs(got[k] - ref[k]) <= 1e-4);
            assert_true(fabs(dir[k] - (ref[k] - t.position[k])) <= 1e-4);
            assert_true(fabsf(back[k] - p[k]) <= 1e-4f);
        }
    }
}

/* Rotation angle between two unit quaternions (rad). */
static double rotation_angle_between(const float a[4], const float b[4])
{
    double dot = 0.0;
    for (int k = 0; k < 4; ++k)
        dot += (double)a[k] * (double)b[k];
    return 2.0 * acos(fmin(1.0, fabs(dot)));
}

static void interpolate_takes_the_straight_line_and_the_shortest_arc(void **state)
{
    (void)state;
    const double half = 0.5 * 1.5707963267948966;
    kcc_transform a = kcc_transform_identity();
    /* b is a quarter turn about +Y written with the far sign: the shortest arc still turns 45
       degrees at the midpoint, not 135 */
    kcc_transform b = {{2.0f, 4.0f, -6.0f}, {0.0f, -(float)sin(half), 0.0f, -(float)cos(half)}};
    kcc_transform mid;
    kcc_transform_interpolate(&a, &b, 0.5f, &mid);
    assert_true(fabsf(mid.position[0] - 1.0f) < 1e-6f && fabsf(mid.position[1] - 2.0f) < 1e-6f &&
                fabsf(mid.position[2] + 3.0f) < 1e-6f);
    assert_true(fabs(rotation_angle_between(a.rotation, mid.rotation) - half) < 1e-5);
    assert_true(fabs(rotation_angle_between(mid.rotation, b.rotation) - half) < 1e-5);
    test_rng r = rng_seed(2);
    for (int i = 0; i < 500; ++i) {
        kcc_transform p = random_transform(&r, 10.0f), q = random_transform(&r, 10.0f), at;
        const float s = rng_f(&r, 0.0f, 1.0f);
        kcc_transform_interpolate(&p, &q, s, &at);
        /* constant angular speed along the shortest arc: the angles split as s : 1 - s */
        const double total = rotation_angle_between(p.rotation, q.rotation);
        assert_true(total <= 3.14159266);
        assert_true(fabs(rotation_angle_between(p.rotation, at.rotation) - s * total) < 2e-3);
        assert_true(fabs(rotation_angle_between(at.rotation, q.rotation) - (1 - s) * total) < 2e-3);
        kcc_transform_interpolate(&p, &q, 0.0f, &at);
        assert_true(rotation_angle_between(p.rotation, at.rotation) < 1e-3);
        kcc_transform_interpolate(&p, &q, 1.0f, &at);
        assert_true(rotation_angle_between(q.rotation, at.rotation) < 1e-3);
    }
}

/* The world bounds of a placed box hold every placed point of the box, and a world box's local
 * bounds hold every local point placed inside it: the culls of the world's queries never drop a
 * triangle the exact test would report. Points on the box's corners and faces, far from the
 * origin too. */
static void placed_box_bounds_are_conservative(void **state)
{
    (void)state;
    test_rng r = rng_seed(3);
    for (int i = 0; i < 3000; ++i) {
        const float range = i % 3 == 0 ? 10000.0f : 20.0f;
        kcc_transform t = random_transform(&r, range);
        if (i % 7 == 0)
            t.rotation[0] = t.rotation[1] = t.rotation[2] = 0.0f, t.rotation[3] = 1.0f;
        kcc_pose pose;
        kcc_pose_set(&pose, &t);
        float lo[3], hi[3], wlo[3], whi[3], llo[3], lhi[3];
        for (int k = 0; k < 3; ++k) {
            lo[k] = rng_f(&r, -range, range);
            hi[k] = lo[k] + rng_f(&r, 0.0f, 30.0f);
        }
        kcc_pose_box_bounds(&pose, lo, hi, wlo, whi);
        float extent = 0.0f; /* the local points' largest coordinate */
        for (int k = 0; k < 3; ++k)
            extent = fmaxf(extent, fmaxf(fabsf(lo[k]), fabsf(hi[k])));
        kcc_pose_box_local_bounds(&pose, wlo, whi, extent, llo, lhi);
        for (int s = 0; s < 16; ++s) {
            float p[3], w[3];
            for (int k = 0; k < 3; ++k) /* corners, faces and inside */
                p[k] = s < 8 ? (s >> k & 1 ? hi[k] : lo[k]) : rng_f(&r, lo[k], hi[k]);
            kcc_pose_point(&pose, p, w);
            for (int k = 0; k < 3; ++k) {
                assert_true(w[k] >= wlo[k] && w[k] <= whi[k]);
                assert_true(p[k] >= llo[k] && p[k] <= lhi[k]);
            }
        }
    }
}

/* A box query near the origin against a body placed by a rotation and a tiny offset: the placed
 * corners far from the box round by an amount that grows with the mesh's size, not the box's, and
 * move the triangle's edge near the box by as much; the cull in the body's frame must allow for it
 * (a point box at 0 touching a triangle whose corner is placed 4e-20 away was missed). */
static void world_box_queries_find_triangles_placed_near_zero(void **state)
{
    (void)state;
    const float corners[9] = {0, 0, -7.8125f, 0.6875f, 5.25f, 0, 0, 0, 0};
    kcc_mesh_desc md = {0};
    md.positions = corners;
    md.vertex_count = 3;
    md.triangle_count = 1;
    kcc_mesh *m = NULL;
    assert_int_equal(kcc_mesh_build(&md, &m), KCC_OK);
    kcc_world *w = small_world(2);
    kcc_body_desc bd = kcc_body_default_desc();
    const float q[4] = {-0.0520832f, 0.70023f, 0.711804f, 0.0173611f};
    const double len = sqrt((double)q[0] * q[0] + (double)q[1] * q[1] + (double)q[2] * q[2] + (double)q[3] * q[3]);
    for (int k = 0; k < 4; ++k)
        bd.transform.rotation[k] = (float)(q[k] / len);
    bd.transform.position[1] = 1.70048e-41f;
    bd.transform.position[2] = -4.1986e-20f;
    uint32_t id;
    assert_int_equal(kcc_world_add_body(w, m, &bd, &id), KCC_OK);
    kcc_transform placed;
    assert_int_equal(kcc_world_get_body_transform(w, id, &placed, NULL), KCC_OK);
    vec3 v[3];
    for (int k = 0; k < 3; ++k)
        kcc_transform_point(&placed, &corners[3 * k], v[k]);
    const vec3 box[2] = {{0, 0, 0}, {0, 0, 0}};
    const bool touches = kcc_tri_overlap_aabb(v[0], v[1], v[2], box);
    assert_true(touches); /* the case that was missed */
    kcc_body_triangle hit[2];
    assert_int_equal(kcc_world_overlap_aabb(w, box, KCC_LAYERS_ALL, hit, 2), 1);
    assert_int_equal(kcc_world_step(w), KCC_OK); /* and through the body tree */
    assert_int_equal(kcc_world_overlap_aabb(w, box, KCC_LAYERS_ALL, hit, 2), 1);
    kcc_world_destroy(w);
    kcc_mesh_destroy(m);
}

int test_group_world(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(world_ids_are_never_zero_and_removed_ids_are_not_found),
        cmocka_unit_test(world_ids_are_not_reused_soon),
        cmocka_unit_test(world_allocates_once_and_refuses_beyond_its_capacity),
        cmocka_unit_test(world_create_refuses_bad_descs),
        cmocka_unit_test(world_refuses_bad_transforms_and_bodies),
        cmocka_unit_test(kinematic_body_reaches_its_target_in_the_next_step),
        cmocka_unit_test(transform_point_matches_the_quaternion_product),
        cmocka_unit_test(interpolate_takes_the_straight_line_and_the_shortest_arc),
        cmocka_unit_test(placed_box_bounds_are_conservative),
        cmocka_unit_test(world_box_queries_find_triangles_placed_near_zero),
    };
    return KCC_RUN_GROUP("world", tests);
}
