/* test_world_sphere.c: owns the tests of the world's sphere and capsule queries
 * (kcc_world_sweep_sphere, kcc_world_sweep_capsule, kcc_world_overlap_sphere; collide/
 * world_sphere.c). Random soups, a box and a floor placed by rotations and translations (one mesh
 * placed three times), on layers; every query equals brute force over the placed triangles
 * (kcc_transform_point of the corners, then the per-triangle kernels) bit for bit, and is checked
 * in double against the corners placed in double; with the stale and the rebuilt body tree, and
 * after a removal; through the static tree equal to the per-body path. Also hand-computed contacts
 * and bad input. */
#include "test.h"

#include "kcc_world_internal.h" /* KCC_ID_INDEX_MASK: an id's slot, which the tie rule orders by */

static test_rng rng_seed(uint64_t seed)
{
    return rng_seed_salted(seed, 0x5e1dull);
}

static uint32_t id_slot(uint32_t id)
{
    return (id & KCC_ID_INDEX_MASK) - 1u;
}

/* ------------------------------------------------------------------------------------------------
 * The scene: bodies with their placed corners (float, as the world places them) and the same
 * corners placed in double (the reference). */

#define MAX_BODIES 12
#define SOUP_TRIS  160

typedef struct body {
    uint32_t        id;
    const kcc_mesh *mesh;
    uint32_t        layers;
    bool            live;
    uint32_t        n;
    float          *placed;   /* 9 floats a triangle */
    double         *ref;      /* 9 doubles a triangle */
} body;

typedef struct scene {
    kcc_world *world;
    kcc_mesh  *meshes[4];      /* the soup, the box, the floor, and a dense soup (or NULL) */
    body       bodies[MAX_BODIES];
    uint32_t   count;
    double     scale;         /* the largest |coordinate| in play */
} scene;

/* Refreshes every live body's placed corners from the world's stored transform. */
static void scene_place(scene *s)
{
    s->scale = 0.0;
    for (uint32_t b = 0; b < s->count; ++b) {
        body *bd = &s->bodies[b];
        if (!bd->live)
            continue;
        kcc_transform t;
        assert_int_equal(kcc_world_get_body_transform(s->world, bd->id, &t, NULL), KCC_OK);
        double m[3][3];
        test_quat_matrix(t.rotation, m);
        for (uint32_t i = 0; i < bd->n; ++i) {
            vec3 local[3];
            assert_true(kcc_mesh_triangle(bd->mesh, i, local));
            for (int c = 0; c < 3; ++c) {
                kcc_transform_point(&t, local[c], bd->placed + 9 * i + 3 * c);
                for (int k = 0; k < 3; ++k) {
                    const double v = m[k][0] * local[c][0] + m[k][1] * local[c][1] +
                                     m[k][2] * local[c][2] + t.position[k];
                    bd->ref[9 * i + 3 * c + k] = v;
                    s->scale = fmax(s->scale, fabs(v));
                }
            }
        }
    }
}

static void scene_add_kind(scene *s, const kcc_mesh *mesh, const kcc_transform *t,
                           uint32_t layers, kcc_body_kind kind)
{
    body *bd = &s->bodies[s->count++];
    kcc_body_desc d = kcc_body_default_desc();
    d.transform = *t;
    d.layers = layers;
    d.kind = kind;
    assert_int_equal(kcc_world_add_body(s->world, mesh, &d, &bd->id), KCC_OK);
    bd->mesh = mesh, bd->layers = layers, bd->live = true;
    bd->n = kcc_mesh_triangle_count(mesh);
    bd->placed = malloc(sizeof(float) * 9 * bd->n);
    bd->ref = malloc(sizeof(double) * 9 * bd->n);
}

static void scene_add(scene *s, const kcc_mesh *mesh, const kcc_transform *t, uint32_t layers)
{
    scene_add_kind(s, mesh, t, layers, KCC_BODY_STATIC);
}

/* A random soup of n triangles (edges up to `size` m) in a cube of half side `half`; every
 * seventh shares an edge with the one before, the last copies the first (an exact duplicate). */
static kcc_mesh *soup_mesh(test_rng *r, uint32_t n, float half, float size)
{
    float *v = malloc(sizeof(float) * 9 * n);
    for (uint32_t i = 0; i < n; ++i) {
        float c[3];
        for (int k = 0; k < 3; ++k)
            c[k] = rng_f(r, -half, half);
        for (int j = 0; j < 9; ++j)
            v[9 * i + j] = c[j % 3] + rng_f(r, -size, size);
        if (i % 7 == 6)
            memcpy(v + 9 * i, v + 9 * (i - 1), sizeof(float) * 6);
    }
    memcpy(v + 9 * (n - 1), v, sizeof(float) * 9);
    kcc_mesh_desc d = {.positions = v, .vertex_count = 3 * n, .triangle_count = n};
    kcc_mesh *m = NULL;
    assert_int_equal(kcc_mesh_build(&d, &m), KCC_OK);
    free(v);
    kcc_mesh_stats st;
    kcc_mesh_get_stats(m, &st);
    assert_int_equal(st.degenerate, 0); /* the brute force below takes every triangle as live */
    return m;
}

static kcc_mesh *floor_mesh(float half)
{
    const float v[12] = {-half, 0, -half, -half, 0, half, half, 0, half, half, 0, -half};
    const uint32_t idx[6] = {0, 1, 2, 0, 2, 3};
    kcc_mesh_desc d = {.positions = v, .vertex_count = 4, .indices = idx, .triangle_count = 2};
    kcc_mesh *m = NULL;
    assert_int_equal(kcc_mesh_build(&d, &m), KCC_OK);
    return m;
}

static kcc_transform random_pose(test_rng *r, int kind, float reach)
{
    kcc_transform t = kcc_transform_identity();
    if (kind == 0)
        return t;
    for (int k = 0; k < 3; ++k)
        t.position[k] = rng_f(r, -reach, reach);
    if (kind == 2)
        test_random_rotation(r, t.rotation);
    return t;
}

/* The soup placed identity, rotated and translated (instancing), the box rotated on layer 2 (three
 * times), the floor tilted on layer 4; the body tree stale (nothing stepped yet). */
static void scene_make(scene *s, uint64_t seed)
{
    memset(s, 0, sizeof *s);
    test_rng r = rng_seed(seed);
    assert_int_equal(kcc_world_create(NULL, &s->world), KCC_OK);
    s->meshes[0] = soup_mesh(&r, SOUP_TRIS, 4.0f, 1.0f);
    s->meshes[1] = test_box_mesh((const float[3]){-1, -0.5f, -1}, (const float[3]){1, 0.5f, 1});
    s->meshes[2] = floor_mesh(6.0f);
    for (int kind = 0; kind < 3; ++kind) {
        const kcc_transform t = random_pose(&r, kind, 3.0f);
        scene_add(s, s->meshes[0], &t, 1);
    }
    for (int i = 0; i < 3; ++i) {
        const kcc_transform t = random_pose(&r, 2, 5.0f);
        scene_add(s, s->meshes[1], &t, 2);
    }
    kcc_transform t = random_pose(&r, 2, 1.0f);
    t.position[1] = -4.0f;
    scene_add(s, s->meshes[2], &t, 4);
    scene_place(s);
}

static void scene_free(scene *s)
{
    kcc_world_destroy(s->world);
    for (uint32_t b = 0; b < s->count; ++b)
        free(s->bodies[b].placed), free(s->bodies[b].ref);
    for (int i = 0; i < 4; ++i)
        kcc_mesh_destroy(s->meshes[i]);
}

static bool body_seen(const body *bd, uint32_t mask)
{
    return bd->live && (bd->layers & mask) != 0;
}

/* ------------------------------------------------------------------------------------------------
 * Distances in double: the reference the exact kernels are checked against. */

static double dot3d(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static double point_segment(const double p[3], const double a[3], const double b[3])
{
    double ab[3], ap[3];
    for (int k = 0; k < 3; ++k)
        ab[k] = b[k] - a[k], ap[k] = p[k] - a[k];
    const double ll = dot3d(ab, ab);
    double u = ll > 0.0 ? dot3d(ap, ab) / ll : 0.0;
    u = u < 0.0 ? 0.0 : u > 1.0 ? 1.0 : u;
    double d[3];
    for (int k = 0; k < 3; ++k)
        d[k] = ap[k] - u * ab[k];
    return sqrt(dot3d(d, d));
}

/* out = (b - a) x (c - a) */
static void cross_of(const double a[3], const double b[3], const double c[3], double out[3])
{
    const double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    const double w[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    out[0] = u[1] * w[2] - u[2] * w[1];
    out[1] = u[2] * w[0] - u[0] * w[2];
    out[2] = u[0] * w[1] - u[1] * w[0];
}

/* Distance from p to the triangle v (9 doubles): the plane inside, else the nearest edge. */
static double point_triangle(const double *v, const double p[3])
{
    double n[3];
    cross_of(v, v + 3, v + 6, n);
    const double nl = sqrt(dot3d(n, n));
    bool inside = nl > 0.0;
    for (int e = 0; e < 3 && inside; ++e) {
        double x[3];
        cross_of(v + 3 * e, v + 3 * ((e + 1) % 3), p, x);
        inside = dot3d(x, n) >= 0.0;
    }
    if (inside) {
        const double ap[3] = {p[0] - v[0], p[1] - v[1], p[2] - v[2]};
        return fabs(dot3d(ap, n)) / nl;
    }
    double best = INFINITY;
    for (int e = 0; e < 3; ++e)
        best = fmin(best, point_segment(p, v + 3 * e, v + 3 * ((e + 1) % 3)));
    return best;
}

/* The tolerance of the double checks: the placed corners lie within a few 2^-24 of the scale
 * from the double ones. */
static double tolerance(const scene *s)
{
    return 4e-6 * (s->scale + 10.0);
}

/* ------------------------------------------------------------------------------------------------
 * Sweeps against brute force. */

/* The earliest contact over every seen body's placed triangles by the per-triangle kernel; ties
 * to the lowest slot, then the lowest triangle. */
static bool brute_sweep(const scene *s, const float p0[3], const float p1[3], float r,
                        const float d[3], bool capsule, uint32_t mask, kcc_world_sphere_hit *out)
{
    bool found = false;
    for (uint32_t b = 0; b < s->count; ++b) {
        const body *bd = &s->bodies[b];
        for (uint32_t i = 0; body_seen(bd, mask) && i < bd->n; ++i) {
            const float *t = bd->placed + 9 * i;
            kcc_sphere_hit h;
            const bool hit = capsule ? kcc_tri_sweep_capsule(t, t + 3, t + 6, p0, p1, r, d, &h)
                                     : kcc_tri_sweep_sphere(t, t + 3, t + 6, p0, r, d, &h);
            if (!hit)
                continue;
            const bool better = !found || h.t < out->t ||
                                (h.t == out->t && (id_slot(bd->id) < id_slot(out->body) ||
                                                   (bd->id == out->body && i < out->triangle)));
            if (!better)
                continue;
            found = true;
            out->t = h.t, out->body = bd->id, out->triangle = i;
            out->start_overlap = h.start_overlap;
            memcpy(out->point, h.point, sizeof h.point);
            memcpy(out->normal, h.normal, sizeof h.normal);
        }
    }
    return found;
}

static const body *body_of(const scene *s, uint32_t id)
{
    for (uint32_t b = 0; b < s->count; ++b)
        if (s->bodies[b].live && s->bodies[b].id == id)
            return &s->bodies[b];
    fail_msg("no live body %u", id);
    return NULL;
}

/* The nearest distance from the sphere's centre at time u to any seen triangle placed in double. */
static double nearest_at(const scene *s, const float c[3], const float d[3], double u, uint32_t mask)
{
    const double at[3] = {c[0] + u * d[0], c[1] + u * d[1], c[2] + u * d[2]};
    double best = INFINITY;
    for (uint32_t b = 0; b < s->count; ++b)
        for (uint32_t i = 0; body_seen(&s->bodies[b], mask) && i < s->bodies[b].n; ++i)
            best = fmin(best, point_triangle(s->bodies[b].ref + 9 * i, at));
    return best;
}

/* The sphere's check in double: at the reported t it touches the reported triangle (placed in
 * double) within the tolerance; and a sphere that starts clear of everything stays farther than
 * r - tolerance from every seen triangle at sixteen times before the reported t (or the end). */
static void check_sphere_in_double(const scene *s, const float c[3], float r, const float d[3],
                                   uint32_t mask, bool hit, const kcc_world_sphere_hit *h)
{
    const double tol = tolerance(s), t_end = hit ? h->t : 1.0;
    if (hit) {
        const double *v = body_of(s, h->body)->ref + 9 * h->triangle;
        const double at[3] = {c[0] + t_end * d[0], c[1] + t_end * d[1], c[2] + t_end * d[2]};
        const double dist = point_triangle(v, at);
        assert_true(h->start_overlap ? dist <= r + tol : fabs(dist - r) <= tol);
    }
    if (nearest_at(s, c, d, 0.0, mask) <= r + tol)
        return; /* touching at the start: contacts moving away are ignored, by the start rule */
    assert_false(hit && h->start_overlap);
    for (int step = 1; step < 16; ++step)
        assert_true(nearest_at(s, c, d, t_end * step / 16.0, mask) >= r - tol);
}

static const uint32_t MASKS[5] = {KCC_LAYERS_ALL, 1, 2, 4, 6};

/* The world's hit equals brute force's, field by field (the point and normal bit for bit). */
static void assert_same_hit(const kcc_world_sphere_hit *got, const kcc_world_sphere_hit *want)
{
    assert_true(got->t == want->t);
    assert_int_equal(got->body, want->body);
    assert_int_equal(got->triangle, want->triangle);
    assert_int_equal(got->start_overlap, want->start_overlap);
    assert_memory_equal(got->point, want->point, sizeof got->point);
    assert_memory_equal(got->normal, want->normal, sizeof got->normal);
}

/* `queries` random sweeps (spheres, or capsules) from the scene's middle: the world's answer equals
 * brute force bit for bit; sphere answers are also checked in double. */
static void check_sweeps(const scene *s, uint64_t seed, int queries, bool capsule)
{
    test_rng r = rng_seed(seed);
    int hits = 0;
    for (int q = 0; q < queries; ++q) {
        float p0[3], p1[3], d[3];
        for (int k = 0; k < 3; ++k) {
            p0[k] = rng_f(&r, -6.0f, 6.0f);
            p1[k] = capsule ? p0[k] + rng_f(&r, -1.0f, 1.0f) : p0[k];
            d[k] = rng_f(&r, -8.0f, 8.0f);
        }
        const float radius = rng_f(&r, 0.05f, 1.0f);
        const uint32_t mask = MASKS[q % 5];
        kcc_world_sphere_hit got, want;
        memset(&got, 0xab, sizeof got);
        const bool g = capsule ? kcc_world_sweep_capsule(s->world, p0, p1, radius, d, mask, &got)
                               : kcc_world_sweep_sphere(s->world, p0, radius, d, mask, &got);
        const bool w = brute_sweep(s, p0, p1, radius, d, capsule, mask, &want);
        assert_int_equal(g, w);
        hits += g;
        if (g)
            assert_same_hit(&got, &want);
        if (!capsule)
            check_sphere_in_double(s, p0, radius, d, mask, g, &got);
    }
    assert_true(hits > queries / 4 && hits < queries); /* the scene is neither empty nor solid */
}

/* ------------------------------------------------------------------------------------------------
 * Overlap against brute force. */

static void check_overlaps(const scene *s, uint64_t seed, int queries)
{
    test_rng r = rng_seed(seed);
    enum { CAP = 2 * SOUP_TRIS * 3 + 64 };
    kcc_body_triangle got[CAP];
    const double tol = tolerance(s);
    for (int q = 0; q < queries; ++q) {
        const float c[3] = {rng_f(&r, -6, 6), rng_f(&r, -6, 6), rng_f(&r, -6, 6)};
        const float radius = rng_f(&r, 0.05f, 2.0f);
        const uint32_t mask = MASKS[q % 5];
        const uint32_t n = kcc_world_overlap_sphere(s->world, c, radius, mask, got, CAP);
        assert_true(n <= CAP);
        uint32_t want = 0, last_slot = 0;
        for (uint32_t j = 0; j < n; ++j) { /* grouped by body in ascending slot */
            assert_true(id_slot(got[j].body) >= last_slot);
            last_slot = id_slot(got[j].body);
        }
        const double cd[3] = {c[0], c[1], c[2]};
        for (uint32_t b = 0; b < s->count; ++b) {
            const body *bd = &s->bodies[b];
            for (uint32_t i = 0; body_seen(bd, mask) && i < bd->n; ++i) {
                const float *t = bd->placed + 9 * i;
                const bool in = kcc_tri_overlap_sphere(t, t + 3, t + 6, c, radius);
                uint32_t listed = 0;
                for (uint32_t j = 0; j < n; ++j)
                    listed += got[j].body == bd->id && got[j].triangle == i;
                assert_int_equal(listed, in ? 1 : 0);
                want += in;
                const double dist = point_triangle(bd->ref + 9 * i, cd);
                assert_true(in ? dist <= radius + tol : dist >= radius - tol);
            }
        }
        assert_int_equal(n, want);
        if (n > 1) { /* a small capacity: the full count, the first entries of the full list */
            kcc_body_triangle few[1];
            assert_int_equal(kcc_world_overlap_sphere(s->world, c, radius, mask, few, 1), n);
            assert_memory_equal(few, got, sizeof few);
        }
    }
}

/* ------------------------------------------------------------------------------------------------
 * The tests. */

static void check_all(const scene *s, uint64_t seed)
{
    check_sweeps(s, seed, 120, false);
    check_sweeps(s, seed + 1, 60, true);
    check_overlaps(s, seed + 2, 60);
}

static void world_sphere_queries_equal_brute_force_over_placed_triangles(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 3; ++seed) {
        scene s;
        scene_make(&s, seed);
        check_all(&s, seed * 100); /* the body tree stale: every body's bounds tested */
        assert_int_equal(kcc_world_step(s.world), KCC_OK);
        check_all(&s, seed * 100 + 10); /* through the rebuilt body tree */
        assert_int_equal(kcc_world_remove_body(s.world, s.bodies[0].id), KCC_OK);
        s.bodies[0].live = false;
        check_all(&s, seed * 100 + 20); /* removed, stale tree */
        assert_int_equal(kcc_world_step(s.world), KCC_OK);
        check_all(&s, seed * 100 + 30);
        scene_free(&s);
    }
}

static void world_sphere_sweeps_hit_rotated_and_translated_floors_at_hand_computed_times(void **state)
{
    (void)state;
    kcc_world *w = NULL;
    assert_int_equal(kcc_world_create(NULL, &w), KCC_OK);
    kcc_mesh *floor = floor_mesh(2.0f);
    /* A floor turned 90 degrees about y (still level) raised to y = 1, and a copy turned 90 degrees
     * about z (a wall facing -x at x = 5). */
    const float s = 0.70710678f;
    kcc_body_desc d = kcc_body_default_desc();
    d.transform = (kcc_transform){{0, 1, 0}, {0, s, 0, s}};
    uint32_t level = 0, wall = 0;
    assert_int_equal(kcc_world_add_body(w, floor, &d, &level), KCC_OK);
    d.transform = (kcc_transform){{5, 1, 0}, {0, 0, s, s}};
    d.layers = 2;
    assert_int_equal(kcc_world_add_body(w, floor, &d, &wall), KCC_OK);
    kcc_world_sphere_hit h;
    /* Dropping 10 m from y = 5 with r = 0.5: the bottom reaches y = 1 after 3.5 m. */
    assert_true(kcc_world_sweep_sphere(w, (const float[3]){0.25f, 5, 0.5f}, 0.5f,
                                       (const float[3]){0, -10, 0}, KCC_LAYERS_ALL, &h));
    assert_int_equal(h.body, level);
    assert_float_equal(h.t, 0.35f, 1e-6f);
    assert_float_equal(h.point[0], 0.25f, 1e-6f);
    assert_float_equal(h.point[1], 1.0f, 1e-6f);
    assert_float_equal(h.point[2], 0.5f, 1e-6f);
    assert_float_equal(h.normal[1], 1.0f, 1e-6f);
    assert_false(h.start_overlap);
    /* A capsule lying along z moving +x by 8 m toward the wall at x = 5: its side (r = 0.25) meets
     * it after 4.75 m; layer 1 alone does not see the wall. */
    const float p0[3] = {0, 1.5f, -0.5f}, p1[3] = {0, 1.5f, 0.5f}, dx[3] = {8, 0, 0};
    assert_true(kcc_world_sweep_capsule(w, p0, p1, 0.25f, dx, KCC_LAYERS_ALL, &h));
    assert_int_equal(h.body, wall);
    assert_float_equal(h.t, 4.75f / 8.0f, 1e-6f);
    assert_float_equal(h.normal[0], -1.0f, 1e-6f);
    assert_false(kcc_world_sweep_capsule(w, p0, p1, 0.25f, dx, 1, &h));
    /* The overlap: a 1.2 m sphere at (4, 1.5, 0) reaches both wall triangles (1 m and 1.06 m
     * away), not the floor (its nearest point, (2, 1, 0), is 2.06 m away). */
    kcc_body_triangle out[4];
    assert_int_equal(kcc_world_overlap_sphere(w, (const float[3]){4, 1.5f, 0}, 1.2f,
                                              KCC_LAYERS_ALL, out, 4), 2);
    assert_int_equal(out[0].body, wall);
    assert_int_equal(out[1].body, wall);
    kcc_world_destroy(w);
    kcc_mesh_destroy(floor);
}

static void world_sphere_queries_refuse_bad_input_and_leave_the_hit_untouched(void **state)
{
    (void)state;
    scene s;
    scene_make(&s, 9);
    const float c[3] = {0, 0, 0}, d[3] = {1, 0, 0}, zero[3] = {0, 0, 0};
    const float nan3[3] = {NAN, 0, 0}, inf3[3] = {0, INFINITY, 0};
    kcc_world_sphere_hit h, before;
    memset(&h, 0x5a, sizeof h);
    before = h;
    const float radii[4] = {0.0f, -1.0f, NAN, INFINITY};
    for (int i = 0; i < 4; ++i) {
        assert_false(kcc_world_sweep_sphere(s.world, c, radii[i], d, KCC_LAYERS_ALL, &h));
        assert_false(kcc_world_sweep_capsule(s.world, c, d, radii[i], d, KCC_LAYERS_ALL, &h));
        assert_int_equal(kcc_world_overlap_sphere(s.world, c, radii[i], KCC_LAYERS_ALL, NULL, 0), 0);
    }
    assert_false(kcc_world_sweep_sphere(NULL, c, 1.0f, d, KCC_LAYERS_ALL, &h));
    assert_false(kcc_world_sweep_sphere(s.world, NULL, 1.0f, d, KCC_LAYERS_ALL, &h));
    assert_false(kcc_world_sweep_sphere(s.world, c, 1.0f, NULL, KCC_LAYERS_ALL, &h));
    assert_false(kcc_world_sweep_sphere(s.world, c, 1.0f, d, KCC_LAYERS_ALL, NULL));
    assert_false(kcc_world_sweep_sphere(s.world, nan3, 1.0f, d, KCC_LAYERS_ALL, &h));
    assert_false(kcc_world_sweep_sphere(s.world, c, 1.0f, inf3, KCC_LAYERS_ALL, &h));
    assert_false(kcc_world_sweep_sphere(s.world, c, 1.0f, zero, KCC_LAYERS_ALL, &h));
    assert_false(kcc_world_sweep_capsule(s.world, c, NULL, 1.0f, d, KCC_LAYERS_ALL, &h));
    assert_false(kcc_world_sweep_capsule(s.world, c, inf3, 1.0f, d, KCC_LAYERS_ALL, &h));
    assert_false(kcc_world_sweep_sphere(s.world, c, 50.0f, d, 0, &h)); /* no layer: nothing */
    assert_memory_equal(&h, &before, sizeof h);
    assert_int_equal(kcc_world_overlap_sphere(NULL, c, 1.0f, KCC_LAYERS_ALL, NULL, 0), 0);
    assert_int_equal(kcc_world_overlap_sphere(s.world, NULL, 1.0f, KCC_LAYERS_ALL, NULL, 0), 0);
    assert_int_equal(kcc_world_overlap_sphere(s.world, nan3, 1.0f, KCC_LAYERS_ALL, NULL, 0), 0);
    assert_int_equal(kcc_world_overlap_sphere(s.world, c, 50.0f, KCC_LAYERS_ALL, NULL, 5), 0);
    assert_true(kcc_world_overlap_sphere(s.world, c, 50.0f, KCC_LAYERS_ALL, NULL, 0) > 0);
    scene_free(&s);
}

static void world_sphere_sweeps_reaching_beyond_float_range_still_answer(void **state)
{
    (void)state;
    scene s;
    scene_make(&s, 5);
    const float c[3] = {-7.0f, 0.5f, 0.25f}, far_delta[3] = {3e37f, 1e36f, 0.0f};
    const float radii[2] = {0.5f, 1e37f};
    for (int stepped = 0; stepped < 2; ++stepped) { /* the trees stale, then built */
        if (stepped)
            assert_int_equal(kcc_world_step(s.world), KCC_OK);
        for (int i = 0; i < 2; ++i)
            for (int capsule = 0; capsule < 2; ++capsule) {
                const float p1[3] = {c[0], c[1] + (capsule ? 1.0f : 0.0f), c[2]};
                kcc_world_sphere_hit got, want;
                const bool g = capsule ? kcc_world_sweep_capsule(s.world, c, p1, radii[i],
                                                                 far_delta, KCC_LAYERS_ALL, &got)
                                       : kcc_world_sweep_sphere(s.world, c, radii[i], far_delta,
                                                                KCC_LAYERS_ALL, &got);
                assert_int_equal(g, brute_sweep(&s, c, p1, radii[i], far_delta, capsule != 0,
                                                KCC_LAYERS_ALL, &want));
                assert_true(g); /* both reach the scene */
                assert_true(got.t == want.t);
                assert_int_equal(got.body, want.body);
                assert_int_equal(got.triangle, want.triangle);
            }
    }
    kcc_body_triangle out[4];
    assert_true(kcc_world_overlap_sphere(s.world, c, 1e37f, KCC_LAYERS_ALL, out, 4) > 4);
    scene_free(&s);
}

/* ------------------------------------------------------------------------------------------------
 * Through the static tree against without it. */

/* A sweep (sphere, or capsule) and the sphere overlap at its start through the static tree as the
 * world has it, then with the tree marked stale (every body through its own tree, the shape's
 * local bounds in its frame): the same hit record byte for byte; the same count, both lists
 * grouped by ascending body slot, the same (body, triangle) pairs, in the same order for every
 * body that is not rotated (a rotated member's come in its world build's order:
 * kcc_world_overlap_sphere), the first of them with a capacity of one. Returns whether the sweep
 * hit, its record in *hit and the overlap's count in *overlapping. */
static bool sphere_both_paths(kcc_world *w, const float p0[3], const float p1[3], float r,
                              const float d[3], bool capsule, uint32_t mask,
                              kcc_world_sphere_hit *hit, uint32_t *overlapping)
{
    enum { CAP = 4096 };
    static kcc_body_triangle with[CAP], without[CAP];
    kcc_body_triangle one;
    kcc_world_sphere_hit hit_without;
    memset(hit, 0, sizeof *hit);
    memset(&hit_without, 0, sizeof hit_without);
    const bool g = capsule ? kcc_world_sweep_capsule(w, p0, p1, r, d, mask, hit)
                           : kcc_world_sweep_sphere(w, p0, r, d, mask, hit);
    const uint32_t n = kcc_world_overlap_sphere(w, p0, r, mask, with, CAP);
    const uint32_t n_one = kcc_world_overlap_sphere(w, p0, r, mask, &one, 1);
    const bool valid = w->statics.valid;
    w->statics.valid = false;
    assert_int_equal(capsule ? kcc_world_sweep_capsule(w, p0, p1, r, d, mask, &hit_without)
                             : kcc_world_sweep_sphere(w, p0, r, d, mask, &hit_without), g);
    assert_int_equal(kcc_world_overlap_sphere(w, p0, r, mask, without, CAP), n);
    w->statics.valid = valid;
    assert_int_equal(n_one, n);
    assert_true(n <= CAP);
    test_overlap_lists_agree(w, with, without, n, &one);
    assert_memory_equal(hit, &hit_without, sizeof hit_without);
    *overlapping = n;
    return g;
}

/* How many seen placed triangles kcc_tri_overlap_sphere finds within r of c (every copy of a
 * duplicate is its own triangle). */
static uint32_t brute_overlap_count(const scene *s, const float c[3], float r, uint32_t mask)
{
    uint32_t n = 0;
    for (uint32_t b = 0; b < s->count; ++b)
        for (uint32_t i = 0; body_seen(&s->bodies[b], mask) && i < s->bodies[b].n; ++i) {
            const float *t = s->bodies[b].placed + 9 * i;
            n += kcc_tri_overlap_sphere(t, t + 3, t + 6, c, r);
        }
    return n;
}

/* `count` random sweeps and overlaps over the whole scene through both paths (sphere_both_paths),
 * each also against brute force (the sweep bit for bit, the overlap's count): every third a
 * capsule, every tenth a sphere of 4-8 m (over the dense soup it touches more entries than an
 * overlap gathers: the per-body path answers it), the first a sphere around the whole scene.
 * Returns the overlapping triangles found; *hits counts the sweeps that hit. */
static uint32_t static_tree_spheres(const scene *s, uint64_t seed, int count, uint32_t mask,
                                    int *hits)
{
    test_rng r = rng_seed(seed);
    uint32_t found = 0;
    for (int q = 0; q < count; ++q) {
        const bool capsule = q % 3 == 2;
        float p0[3], p1[3], d[3];
        for (int k = 0; k < 3; ++k) {
            p0[k] = q == 0 ? (k == 0 ? 9.0f : 0.0f) : rng_f(&r, -8.0f, k == 0 ? 26.0f : 8.0f);
            p1[k] = capsule ? p0[k] + rng_f(&r, -1.0f, 1.0f) : p0[k];
            d[k] = rng_f(&r, -8.0f, 8.0f);
        }
        const float radius = q == 0 ? 40.0f : q % 10 == 9 ? rng_f(&r, 4.0f, 8.0f)
                                                          : rng_f(&r, 0.05f, 1.0f);
        kcc_world_sphere_hit got, want;
        uint32_t n;
        const bool g = sphere_both_paths(s->world, p0, p1, radius, d, capsule, mask, &got, &n);
        assert_int_equal(g, brute_sweep(s, p0, p1, radius, d, capsule, mask, &want));
        if (g)
            assert_same_hit(&got, &want);
        assert_int_equal(n, brute_overlap_count(s, p0, radius, mask));
        *hits += g;
        found += n;
    }
    return found;
}

/* The scene, a dense soup (2,000 triangles) placed rotated beside it on layer 8 and the soup once
 * more as a kinematic body (swept through the body tree beside the static tree): after each step
 * the sweeps' hits and the overlap's list through the static tree equal those without it and brute
 * force, with four layer masks; between steps bodies are moved (the tree stale), and a body's
 * layers changed while the tree is valid (its entries' layers updated in place). */
static void world_sphere_queries_through_the_static_tree_equal_those_without_it(void **state)
{
    (void)state;
    scene s;
    scene_make(&s, 41);
    test_rng r = rng_seed(42);
    s.meshes[3] = soup_mesh(&r, 2000, 4.0f, 0.6f);
    kcc_transform t = random_pose(&r, 2, 1.0f);
    t.position[0] += 18.0f;
    scene_add(&s, s.meshes[3], &t, 8);
    t = random_pose(&r, 2, 3.0f);
    scene_add_kind(&s, s.meshes[0], &t, 1, KCC_BODY_KINEMATIC);
    scene_place(&s);
    uint32_t found = 0;
    int hits = 0;
    for (int round = 0; round < 3; ++round) {
        assert_int_equal(kcc_world_step(s.world), KCC_OK);
        assert_true(s.world->statics.valid);
        assert_int_equal(s.world->statics.members, s.count - 1); /* every body but the kinematic */
        found += static_tree_spheres(&s, 400 + (uint64_t)round, 60, KCC_LAYERS_ALL, &hits);
        found += static_tree_spheres(&s, 410 + (uint64_t)round, 30, 1u | 8u, &hits);
        found += static_tree_spheres(&s, 420 + (uint64_t)round, 30, 2u | 4u, &hits);
        body *moved = &s.bodies[1 + 2 * round];
        t = random_pose(&r, 2, 3.0f);
        assert_int_equal(kcc_world_set_body_transform(s.world, moved->id, &t), KCC_OK);
        scene_place(&s);
        assert_false(s.world->statics.valid);
        found += static_tree_spheres(&s, 430 + (uint64_t)round, 20, KCC_LAYERS_ALL, &hits);
    }
    assert_int_equal(kcc_world_step(s.world), KCC_OK);
    body *relayered = &s.bodies[3]; /* a box: layers changed while the tree is valid */
    assert_int_equal(kcc_world_set_body_layers(s.world, relayered->id, 16u), KCC_OK);
    relayered->layers = 16u;
    assert_true(s.world->statics.valid);
    found += static_tree_spheres(&s, 440, 30, 16u, &hits);
    found += static_tree_spheres(&s, 441, 30, KCC_LAYERS_ALL, &hits);
    assert_true(found > 5000 && hits > 150);
    scene_free(&s);
}

int test_group_world_sphere(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(world_sphere_queries_equal_brute_force_over_placed_triangles),
        cmocka_unit_test(world_sphere_sweeps_hit_rotated_and_translated_floors_at_hand_computed_times),
        cmocka_unit_test(world_sphere_queries_refuse_bad_input_and_leave_the_hit_untouched),
        cmocka_unit_test(world_sphere_sweeps_reaching_beyond_float_range_still_answer),
        cmocka_unit_test(world_sphere_queries_through_the_static_tree_equal_those_without_it),
    };
    return KCC_RUN_GROUP("world_sphere", tests);
}
