/* test_heightfield.c: heightfields (kcc_heightfield_build) against the kcc_mesh built from the same
 * triangles (every query bit for bit, the same triangle ids, characters bit for bit), against brute
 * force in double (rays) and the per-triangle primitives (overlaps), as placed world bodies (world
 * queries, characters and sensors against the world holding that mesh, and against brute force),
 * bad descs, and the soak on the terrain generator's ground and an 8-million-triangle grid. */
#include "test.h"

static test_rng rng_seed(uint64_t seed)
{
    return rng_seed_salted(seed, 0x4846ull);
}

/* A heightfield and the tree mesh of its triangle soup, numbered alike (a hole's two triangles are
 * degenerate in the soup: three equal corners, never reported). */
typedef struct hf_pair {
    kcc_mesh *hf, *mesh;
    float    *heights;
    uint8_t  *holes;
    float    *soup;       ///< 9 floats per triangle
    uint32_t  triangles;
    float     lo[3], hi[3]; ///< the grid's extent (m)
} hf_pair;

/* Corner (i, j) as the documented float formula gives it. */
static void corner(const kcc_heightfield_desc *d, uint32_t i, uint32_t j, float out[3])
{
    out[0] = d->origin[0] + (float)i * d->spacing[0];
    out[1] = d->origin[1] + d->heights[(size_t)j * d->columns + i];
    out[2] = d->origin[2] + (float)j * d->spacing[1];
}

/* The soup of the desc's triangles, in the documented order. */
static float *soup_of(const kcc_heightfield_desc *d)
{
    const uint32_t cx = d->columns - 1u, cz = d->rows - 1u;
    float *soup = malloc(sizeof(float) * 18u * cx * cz);
    assert_non_null(soup);
    for (uint32_t j = 0; j < cz; ++j)
        for (uint32_t i = 0; i < cx; ++i) {
            const uint32_t c = j * cx + i;
            float p00[3], p10[3], p01[3], p11[3];
            corner(d, i, j, p00), corner(d, i + 1, j, p10);
            corner(d, i, j + 1, p01), corner(d, i + 1, j + 1, p11);
            const float *order[6] = {p00, p01, p11, p00, p11, p10};
            for (int v = 0; v < 6; ++v)
                memcpy(&soup[18u * c + 3u * (uint32_t)v], d->holes && d->holes[c] ? p00 : order[v],
                       3 * sizeof(float));
        }
    return soup;
}

static hf_pair pair_build(const kcc_heightfield_desc *d)
{
    hf_pair p;
    memset(&p, 0, sizeof p);
    assert_int_equal(kcc_heightfield_build(d, &p.hf), KCC_OK);
    assert_int_equal(kcc_mesh_validate(p.hf), KCC_OK);
    p.triangles = 2u * (d->columns - 1u) * (d->rows - 1u);
    p.soup = soup_of(d);
    kcc_mesh_desc md;
    memset(&md, 0, sizeof md);
    md.positions = p.soup;
    md.vertex_count = 3u * p.triangles;
    md.triangle_count = p.triangles;
    assert_int_equal(kcc_mesh_build(&md, &p.mesh), KCC_OK);
    corner(d, 0, 0, p.lo);
    corner(d, d->columns - 1u, d->rows - 1u, p.hi);
    vec3 b[2];
    kcc_mesh_bounds(p.mesh, b);
    p.lo[1] = b[0][1], p.hi[1] = b[1][1];
    return p;
}

static void pair_free(hf_pair *p)
{
    kcc_mesh_destroy(p->hf);
    kcc_mesh_destroy(p->mesh);
    free(p->heights);
    free(p->holes);
    free(p->soup);
}

/* A random heightfield: rough or smooth heights, random spacing and origin, about `hole_pct` % of
 * the cells holes. */
static hf_pair pair_random(test_rng *r, uint32_t columns, uint32_t rows, int hole_pct)
{
    kcc_heightfield_desc d;
    memset(&d, 0, sizeof d);
    d.columns = columns, d.rows = rows;
    d.spacing[0] = rng_f(r, 0.3f, 3.0f);
    d.spacing[1] = rng_u32(r) % 2 ? d.spacing[0] : rng_f(r, 0.3f, 3.0f);
    d.origin[0] = rng_f(r, -50.0f, 50.0f), d.origin[1] = rng_f(r, -5.0f, 5.0f);
    d.origin[2] = rng_f(r, -50.0f, 50.0f);
    const float rough = rng_f(r, 0.0f, 4.0f);
    float *h = malloc(sizeof(float) * columns * rows);
    assert_non_null(h);
    for (uint32_t j = 0; j < rows; ++j)
        for (uint32_t i = 0; i < columns; ++i)
            h[j * columns + i] = 2.0f * sinf(0.3f * (float)i) * cosf(0.2f * (float)j) +
                                 rng_f(r, -rough, rough);
    uint8_t *holes = NULL;
    if (hole_pct > 0) {
        holes = malloc((size_t)(columns - 1u) * (rows - 1u));
        assert_non_null(holes);
        for (uint32_t c = 0; c < (columns - 1u) * (rows - 1u); ++c)
            holes[c] = (int)(rng_u32(r) % 100u) < hole_pct;
        holes[0] = 0;
    }
    d.heights = h, d.holes = holes;
    hf_pair p = pair_build(&d);
    p.heights = h, p.holes = holes;
    return p;
}

/* A random point around the grid (a margin beyond it, heights above and below). */
static void point_near(test_rng *r, const hf_pair *p, float margin, float out[3])
{
    for (int k = 0; k < 3; ++k)
        out[k] = rng_f(r, p->lo[k] - margin, p->hi[k] + margin);
}

static void sort_ids(uint32_t *v, uint32_t n)
{
    for (uint32_t a = 1; a < n; ++a)
        for (uint32_t b = a; b > 0 && v[b - 1] > v[b]; --b) {
            uint32_t t = v[b];
            v[b] = v[b - 1], v[b - 1] = t;
        }
}

/* ------------------------------------------------------------------------------------------------
 * Every query against the mesh of the same triangles. */

static void rays_match(test_rng *r, const hf_pair *p)
{
    for (int q = 0; q < 300; ++q) {
        float o[3], tgt[3], dir[3];
        point_near(r, p, 5.0f, o);
        point_near(r, p, 0.0f, tgt);
        o[1] += rng_f(r, 0.0f, 10.0f);
        for (int k = 0; k < 3; ++k)
            dir[k] = tgt[k] - o[k];
        if (q % 5 == 0)
            dir[0] = dir[2] = 0.0f; /* straight down */
        const float max_t = q % 3 ? 1.0f : rng_f(r, 0.1f, 0.9f);
        kcc_ray_hit a, b;
        memset(&a, 0, sizeof a), memset(&b, 0, sizeof b);
        const bool ha = kcc_mesh_raycast(p->hf, o, dir, max_t, &a);
        const bool hb = kcc_mesh_raycast(p->mesh, o, dir, max_t, &b);
        assert_int_equal(ha, hb);
        assert_memory_equal(&a, &b, sizeof a);
    }
}

static void boxes_match(test_rng *r, const hf_pair *p)
{
    static uint32_t ga[4096], gb[4096];
    for (int q = 0; q < 200; ++q) {
        float c[3];
        point_near(r, p, 2.0f, c);
        const float half = rng_f(r, 0.05f, q % 10 == 0 ? 20.0f : 2.0f);
        vec3 box[2] = {{c[0] - half, c[1] - half * 0.5f, c[2] - half},
                       {c[0] + half, c[1] + half * 0.5f, c[2] + half}};
        uint32_t na = kcc_mesh_overlap_aabb(p->hf, (const vec3 *)box, ga, 4096);
        uint32_t nb = kcc_mesh_overlap_aabb(p->mesh, (const vec3 *)box, gb, 4096);
        assert_int_equal(na, nb);
        sort_ids(ga, na), sort_ids(gb, nb);
        assert_memory_equal(ga, gb, sizeof(uint32_t) * na);
        na = kcc_mesh_query_bounds(p->hf, (const vec3 *)box, ga, 4096);
        nb = kcc_mesh_query_bounds(p->mesh, (const vec3 *)box, gb, 4096);
        assert_int_equal(na, nb);
        for (uint32_t i = 1; i < na; ++i)
            assert_true(ga[i - 1] < ga[i]); /* the heightfield's come in ascending order */
        sort_ids(gb, nb);
        assert_memory_equal(ga, gb, sizeof(uint32_t) * na);
        na = kcc_mesh_overlap_sphere(p->hf, c, half, ga, 4096);
        nb = kcc_mesh_overlap_sphere(p->mesh, c, half, gb, 4096);
        assert_int_equal(na, nb);
        sort_ids(ga, na), sort_ids(gb, nb);
        assert_memory_equal(ga, gb, sizeof(uint32_t) * na);
    }
}

/* Triangle id, swept alone, is met at time t. */
static void tie_in_sweep(const hf_pair *p, vec3 box[2], const float d[3], float t, uint32_t id)
{
    const float *v = &p->soup[9u * id];
    float ti;
    vec3 n;
    bool start;
    assert_true(kcc_tri_sweep_aabb(v, v + 3, v + 6, (const vec3 *)box, d, &ti, n, &start));
    assert_true(ti == t);
}

static void sweeps_match(test_rng *r, const hf_pair *p)
{
    for (int q = 0; q < 200; ++q) {
        float c[3], d[3];
        point_near(r, p, 2.0f, c);
        c[1] += rng_f(r, 0.0f, 3.0f);
        for (int k = 0; k < 3; ++k)
            d[k] = rng_f(r, -4.0f, 4.0f);
        d[1] -= 3.0f;
        const float half = rng_f(r, 0.1f, 1.0f), radius = rng_f(r, 0.1f, 1.0f);
        vec3 box[2] = {{c[0] - half, c[1] - half * 1.5f, c[2] - half},
                       {c[0] + half, c[1] + half * 1.5f, c[2] + half}};
        kcc_sweep_hit sa, sb;
        memset(&sa, 0, sizeof sa), memset(&sb, 0, sizeof sb);
        assert_int_equal(kcc_mesh_sweep_aabb(p->hf, (const vec3 *)box, d, &sa),
                         kcc_mesh_sweep_aabb(p->mesh, (const vec3 *)box, d, &sb));
        assert_true(sa.t == sb.t);
        if (sa.triangle != sb.triangle) {
            /* An exact tie: the tree's walk prunes each triangle's test at the best time so far,
             * so which of two triangles met at the same time it reports depends on its leaf order.
             * Both must be met at that time. */
            tie_in_sweep(p, box, d, sa.t, sa.triangle);
            tie_in_sweep(p, box, d, sa.t, sb.triangle);
        } else {
            assert_memory_equal(&sa, &sb, sizeof sa);
        }
        kcc_sphere_hit ha, hb;
        memset(&ha, 0, sizeof ha), memset(&hb, 0, sizeof hb);
        assert_int_equal(kcc_mesh_sweep_sphere(p->hf, c, radius, d, &ha),
                         kcc_mesh_sweep_sphere(p->mesh, c, radius, d, &hb));
        assert_memory_equal(&ha, &hb, sizeof ha);
        const float c1[3] = {c[0] + 0.3f, c[1] + 1.2f, c[2] - 0.2f};
        memset(&ha, 0, sizeof ha), memset(&hb, 0, sizeof hb);
        assert_int_equal(kcc_mesh_sweep_capsule(p->hf, c, c1, radius, d, &ha),
                         kcc_mesh_sweep_capsule(p->mesh, c, c1, radius, d, &hb));
        assert_memory_equal(&ha, &hb, sizeof ha);
    }
}

/* Accessors: triangle corners (false for holes), counts, bounds, key-free stats. */
static void accessors_match(const hf_pair *p)
{
    assert_int_equal(kcc_mesh_triangle_count(p->hf), p->triangles);
    for (uint32_t t = 0; t < p->triangles; ++t) {
        vec3 a[3], b[3];
        const bool hole = p->holes && p->holes[t / 2u];
        assert_int_equal(kcc_mesh_triangle(p->hf, t, a), !hole);
        assert_true(kcc_mesh_triangle(p->mesh, t, b));
        if (!hole)
            assert_memory_equal(a, b, sizeof a);
    }
    vec3 ba[2], bb[2];
    kcc_mesh_bounds(p->hf, ba), kcc_mesh_bounds(p->mesh, bb);
    assert_memory_equal(ba, bb, sizeof ba);
    kcc_mesh_stats sa, sb;
    kcc_mesh_get_stats(p->hf, &sa), kcc_mesh_get_stats(p->mesh, &sb);
    assert_int_equal(sa.triangles, sb.triangles);
    assert_int_equal(sa.degenerate, sb.degenerate);
}

static void queries_equal_the_mesh_of_the_same_triangles(void **state)
{
    (void)state;
    test_rng r = rng_seed(1);
    for (int round = 0; round < 12; ++round) {
        const uint32_t cols = 2u + rng_u32(&r) % 40u, rows = 2u + rng_u32(&r) % 30u;
        hf_pair p = pair_random(&r, cols, rows, round % 3 == 0 ? 0 : 20);
        accessors_match(&p);
        rays_match(&r, &p);
        boxes_match(&r, &p);
        sweeps_match(&r, &p);
        pair_free(&p);
    }
}

/* ------------------------------------------------------------------------------------------------
 * Brute force in double: the closest ray hit (Moller-Trumbore in double over every live triangle)
 * and the box overlap (the per-triangle primitive over every triangle). */

static bool ray_tri_double(const float *tri, const float o[3], const float d[3], double *out_t)
{
    double e1[3], e2[3], s[3], pv[3], qv[3];
    for (int k = 0; k < 3; ++k) {
        e1[k] = (double)tri[3 + k] - tri[k];
        e2[k] = (double)tri[6 + k] - tri[k];
        s[k] = (double)o[k] - tri[k];
    }
    pv[0] = d[1] * e2[2] - d[2] * e2[1], pv[1] = d[2] * e2[0] - d[0] * e2[2];
    pv[2] = d[0] * e2[1] - d[1] * e2[0];
    const double det = e1[0] * pv[0] + e1[1] * pv[1] + e1[2] * pv[2];
    if (det == 0.0)
        return false;
    const double u = (s[0] * pv[0] + s[1] * pv[1] + s[2] * pv[2]) / det;
    qv[0] = s[1] * e1[2] - s[2] * e1[1], qv[1] = s[2] * e1[0] - s[0] * e1[2];
    qv[2] = s[0] * e1[1] - s[1] * e1[0];
    const double v = (d[0] * qv[0] + d[1] * qv[1] + d[2] * qv[2]) / det;
    *out_t = (e2[0] * qv[0] + e2[1] * qv[1] + e2[2] * qv[2]) / det;
    return u >= 0.0 && v >= 0.0 && u + v <= 1.0;
}

static void queries_equal_brute_force_in_double(void **state)
{
    (void)state;
    test_rng r = rng_seed(2);
    hf_pair p = pair_random(&r, 33, 27, 15);
    for (int q = 0; q < 400; ++q) {
        float o[3], tgt[3], dir[3];
        point_near(&r, &p, 3.0f, o);
        point_near(&r, &p, 0.0f, tgt);
        o[1] += 8.0f;
        for (int k = 0; k < 3; ++k)
            dir[k] = tgt[k] - o[k];
        double best = INFINITY;
        for (uint32_t t = 0; t < p.triangles; ++t) {
            double th;
            if ((!p.holes || !p.holes[t / 2u]) && ray_tri_double(&p.soup[9u * t], o, dir, &th) &&
                th >= 0.0 && th <= 1.0 && th < best)
                best = th;
        }
        kcc_ray_hit h;
        if (kcc_mesh_raycast(p.hf, o, dir, 1.0f, &h))
            assert_float_equal(h.t, best, 1e-5);
        else
            assert_true(best == INFINITY);
    }
    static uint32_t got[8192];
    for (int q = 0; q < 200; ++q) {
        float c[3];
        point_near(&r, &p, 1.0f, c);
        const float half = rng_f(&r, 0.1f, 3.0f);
        vec3 box[2] = {{c[0] - half, c[1] - half, c[2] - half}, {c[0] + half, c[1] + half, c[2] + half}};
        uint32_t n = kcc_mesh_overlap_aabb(p.hf, (const vec3 *)box, got, 8192), want = 0;
        sort_ids(got, n);
        for (uint32_t t = 0; t < p.triangles; ++t) {
            const float *v = &p.soup[9u * t];
            if (kcc_tri_overlap_aabb(v, v + 3, v + 6, (const vec3 *)box)) {
                assert_true(want < n && got[want] == t);
                ++want;
            }
        }
        assert_int_equal(n, want);
    }
    pair_free(&p);
}

/* ------------------------------------------------------------------------------------------------
 * Characters. */

/* Scripted input: walks in changing directions with gravity and jumps; returns how many frames
 * ended on ground. Every position and result is compared bit for bit between the two meshes. */
static int walk_both(const hf_pair *p, const float start[3], int frames)
{
    kcc_character_desc desc = kcc_character_default_desc();
    kcc_character a, b;
    assert_int_equal(kcc_character_init(&a, &desc, start), KCC_OK);
    assert_int_equal(kcc_character_init(&b, &desc, start), KCC_OK);
    float vy = 0.0f;
    const float dt = 1.0f / 60.0f;
    int grounded = 0;
    for (int f = 0; f < frames; ++f) {
        const float ang = 0.01f * (float)f + (f / 90) * 1.3f, speed = 5.0f;
        vy -= 9.81f * dt;
        if (f % 120 == 60 && a.on_ground)
            vy = 5.0f;
        const vec3 d = {speed * cosf(ang) * dt, vy * dt, speed * sinf(ang) * dt};
        kcc_move_result ra, rb;
        kcc_character_move(&a, p->hf, d, &ra);
        kcc_character_move(&b, p->mesh, d, &rb);
        assert_memory_equal(a.position, b.position, sizeof a.position);
        assert_int_equal(ra.flags, rb.flags);
        assert_int_equal(a.on_ground, b.on_ground);
        if (a.on_ground) {
            if (a.ground_triangle != b.ground_triangle) {
                /* Standing on an edge both triangles hold up: the move's list order (leaf order
                 * for the tree, ascending ids for the grid) picks one of the two. */
                vec3 box[2];
                kcc_character_box(&a, box);
                box[0][1] -= 2.0f * a.desc.skin_width;
                uint32_t under[64], n = kcc_mesh_overlap_aabb(p->hf, (const vec3 *)box, under, 64);
                bool has_a = false, has_b = false;
                for (uint32_t k = 0; k < n; ++k)
                    has_a = has_a || under[k] == a.ground_triangle, has_b = has_b || under[k] == b.ground_triangle;
                assert_true(has_a && has_b);
            }
            vy = vy < 0.0f ? 0.0f : vy;
            ++grounded;
        }
    }
    return grounded;
}

static void characters_move_as_on_the_mesh_of_the_same_triangles(void **state)
{
    (void)state;
    test_rng r = rng_seed(3);
    for (int round = 0; round < 4; ++round) {
        hf_pair p = pair_random(&r, 40, 40, round == 3 ? 5 : 0);
        const float start[3] = {0.5f * (p.lo[0] + p.hi[0]), p.hi[1] + 1.5f, 0.5f * (p.lo[2] + p.hi[2])};
        const int grounded = walk_both(&p, start, 400);
        if (round < 3)
            assert_true(grounded > 100); /* it walked on the ground, not only fell */
        pair_free(&p);
    }
}

/* ------------------------------------------------------------------------------------------------
 * Bad descs. */

static void free_only(void *ptr, void *user)
{
    (void)user;
    free(ptr);
}

static void bad_descs_give_statuses(void **state)
{
    (void)state;
    float h[16] = {0};
    kcc_heightfield_desc d;
    memset(&d, 0, sizeof d);
    d.heights = h, d.columns = 4, d.rows = 4, d.spacing[0] = d.spacing[1] = 1.0f;
    kcc_mesh *m = NULL;
    assert_int_equal(kcc_heightfield_build(NULL, &m), KCC_ERR_NULL_ARGUMENT);
    assert_int_equal(kcc_heightfield_build(&d, NULL), KCC_ERR_NULL_ARGUMENT);
    kcc_heightfield_desc b = d;
    b.heights = NULL;
    assert_int_equal(kcc_heightfield_build(&b, &m), KCC_ERR_NO_VERTICES);
    b = d, b.columns = 0;
    assert_int_equal(kcc_heightfield_build(&b, &m), KCC_ERR_NO_TRIANGLES);
    b = d, b.rows = 1;
    assert_int_equal(kcc_heightfield_build(&b, &m), KCC_ERR_NO_TRIANGLES);
    b = d, b.spacing[1] = 0.0f;
    assert_int_equal(kcc_heightfield_build(&b, &m), KCC_ERR_BAD_DESC);
    b = d, b.spacing[0] = -1.0f;
    assert_int_equal(kcc_heightfield_build(&b, &m), KCC_ERR_BAD_DESC);
    b = d, b.spacing[0] = NAN;
    assert_int_equal(kcc_heightfield_build(&b, &m), KCC_ERR_NON_FINITE);
    b = d, b.origin[2] = INFINITY;
    assert_int_equal(kcc_heightfield_build(&b, &m), KCC_ERR_NON_FINITE);
    b = d, b.columns = 100000, b.rows = 100000;
    assert_int_equal(kcc_heightfield_build(&b, &m), KCC_ERR_TOO_LARGE);
    b = d, b.origin[0] = 1e9f; /* 1 m apart is below float's precision there */
    assert_int_equal(kcc_heightfield_build(&b, &m), KCC_ERR_BAD_DESC);
    b = d, b.allocator.free = free_only;
    assert_int_equal(kcc_heightfield_build(&b, &m), KCC_ERR_BAD_DESC);
    h[5] = NAN;
    assert_int_equal(kcc_heightfield_build(&d, &m), KCC_ERR_NON_FINITE);
    h[5] = 3e38f, b = d, b.origin[1] = 3e38f; /* the corner height overflows */
    assert_int_equal(kcc_heightfield_build(&b, &m), KCC_ERR_NON_FINITE);
    h[5] = 0.0f;
    uint8_t all[9];
    memset(all, 1, sizeof all);
    b = d, b.holes = all;
    assert_int_equal(kcc_heightfield_build(&b, &m), KCC_ERR_NO_TRIANGLES);
    assert_null(m);
    all[4] = 0;
    assert_int_equal(kcc_heightfield_build(&b, &m), KCC_OK);
    assert_int_equal(kcc_mesh_validate(m), KCC_OK);
    vec3 t[3];
    assert_false(kcc_mesh_triangle(m, 0, t));
    assert_true(kcc_mesh_triangle(m, 8, t) && kcc_mesh_triangle(m, 9, t));
    assert_false(kcc_mesh_triangle(m, 18, t));
    assert_int_equal(kcc_mesh_self_intersections(m, NULL, 0), 0);
    kcc_world_desc wd = kcc_world_default_desc();
    kcc_world *w;
    assert_int_equal(kcc_world_create(&wd, &w), KCC_OK);
    uint32_t body;
    assert_int_equal(kcc_world_add_body(w, m, NULL, &body), KCC_OK); /* a body like any mesh */
    kcc_world_destroy(w);
    kcc_mesh_destroy(m);
}

/* ------------------------------------------------------------------------------------------------
 * Heightfields as world bodies: a world holding the heightfield and a world holding the tree mesh
 * of the same triangles, each with a box beside it, placed alike. */

typedef struct hf_worlds {
    kcc_world    *w[2];        ///< [0] the heightfield's, [1] the tree mesh's
    uint32_t      body[2];     ///< the terrain body in each (the same id)
    kcc_mesh     *box;
    kcc_transform pose;
} hf_worlds;

/* A pose that keeps the terrain walkable: a tilt of up to `tilt` rad about a random horizontal
 * axis, any turn about y, a translation up to `reach` m. */
static kcc_transform terrain_pose(test_rng *r, float tilt, float reach)
{
    const double yaw = rng_f(r, -3.1f, 3.1f), ax = rng_f(r, -1.0f, 1.0f), az = rng_f(r, -1.0f, 1.0f);
    const double la = sqrt(ax * ax + az * az) + 1e-9, half = 0.5 * rng_f(r, -tilt, tilt);
    const double qa[4] = {ax / la * sin(half), 0.0, az / la * sin(half), cos(half)}; /* tilt */
    const double qb[4] = {0.0, sin(0.5 * yaw), 0.0, cos(0.5 * yaw)};                 /* turn */
    kcc_transform t = kcc_transform_identity();
    /* q = qa * qb (Hamilton product, x y z w) */
    t.rotation[0] = (float)(qa[3] * qb[0] + qa[0] * qb[3] + qa[1] * qb[2] - qa[2] * qb[1]);
    t.rotation[1] = (float)(qa[3] * qb[1] - qa[0] * qb[2] + qa[1] * qb[3] + qa[2] * qb[0]);
    t.rotation[2] = (float)(qa[3] * qb[2] + qa[0] * qb[1] - qa[1] * qb[0] + qa[2] * qb[3]);
    t.rotation[3] = (float)(qa[3] * qb[3] - qa[0] * qb[0] - qa[1] * qb[1] - qa[2] * qb[2]);
    for (int k = 0; k < 3; ++k)
        t.position[k] = rng_f(r, -reach, reach);
    return t;
}

static void worlds_make(hf_worlds *hw, const hf_pair *p, const kcc_transform *pose, kcc_body_kind kind)
{
    memset(hw, 0, sizeof *hw);
    hw->pose = *pose;
    const float lo[3] = {-1.0f, -1.0f, -1.0f}, hi[3] = {1.0f, 1.0f, 1.0f};
    hw->box = test_box_mesh(lo, hi);
    for (int k = 0; k < 2; ++k) {
        kcc_world_desc wd = kcc_world_default_desc();
        /* cells larger than the terrain: the tree mesh's sensor stays one piece, as a heightfield
         * always is, so both worlds test a character against the sensor's same bounds (the
         * terrain closes no volume: where its bounds pair, the inside test's crossings decide) */
        wd.grid_cell_size = 4096.0f;
        assert_int_equal(kcc_world_create(&wd, &hw->w[k]), KCC_OK);
        kcc_body_desc bd = kcc_body_default_desc();
        bd.transform = *pose;
        bd.kind = kind;
        assert_int_equal(kcc_world_add_body(hw->w[k], k == 0 ? p->hf : p->mesh, &bd, &hw->body[k]),
                         KCC_OK);
        bd = kcc_body_default_desc(); /* a box standing on the terrain's middle, on layer 2 */
        bd.layers = 2;
        const float mid[3] = {0.5f * (p->lo[0] + p->hi[0]), p->hi[1], 0.5f * (p->lo[2] + p->hi[2])};
        kcc_transform_point(pose, mid, bd.transform.position);
        uint32_t other;
        assert_int_equal(kcc_world_add_body(hw->w[k], hw->box, &bd, &other), KCC_OK);
        bd = kcc_body_default_desc(); /* the terrain again, 1 m higher, as a sensor */
        bd.transform = *pose;
        bd.transform.position[1] += 1.0f;
        bd.sensor = true;
        assert_int_equal(kcc_world_add_body(hw->w[k], k == 0 ? p->hf : p->mesh, &bd, &other), KCC_OK);
        assert_int_equal(kcc_world_step(hw->w[k]), KCC_OK); /* the body tree built */
    }
    assert_int_equal(hw->body[0], hw->body[1]);
}

static void worlds_free(hf_worlds *hw)
{
    kcc_world_destroy(hw->w[0]);
    kcc_world_destroy(hw->w[1]);
    kcc_mesh_destroy(hw->box);
}

/* A point near the terrain in its own frame (heights raised by `up`), placed in the world. */
static void placed_point_near(test_rng *r, const hf_worlds *hw, const hf_pair *p, float margin,
                              float up, float out[3])
{
    float local[3];
    point_near(r, p, margin, local);
    local[1] += up;
    kcc_transform_point(&hw->pose, local, out);
}

static int cmp_body_tri(const void *a, const void *b)
{
    const kcc_body_triangle *x = a, *y = b;
    if (x->body != y->body)
        return x->body < y->body ? -1 : 1;
    return x->triangle < y->triangle ? -1 : x->triangle > y->triangle;
}

/* Body-triangle lists of both worlds equal as sets (each body's order is its walk's). */
static void lists_equal(kcc_body_triangle *a, uint32_t na, kcc_body_triangle *b, uint32_t nb)
{
    assert_int_equal(na, nb);
    qsort(a, na, sizeof *a, cmp_body_tri);
    qsort(b, nb, sizeof *b, cmp_body_tri);
    assert_memory_equal(a, b, sizeof *a * na);
}

/* Triangle id of the terrain, placed as the world places it, alone met by the box at time t. */
static void placed_tie(const hf_worlds *hw, const hf_pair *p, vec3 box[2], const float d[3],
                       float t, uint32_t id)
{
    vec3 v[3];
    for (int c = 0; c < 3; ++c)
        kcc_transform_point(&hw->pose, &p->soup[9u * id + 3u * (uint32_t)c], v[c]);
    float ti;
    vec3 n;
    bool start;
    assert_true(kcc_tri_sweep_aabb(v[0], v[1], v[2], (const vec3 *)box, d, &ti, n, &start));
    assert_true(ti == t);
}

static void world_rays_and_boxes_match(test_rng *r, const hf_worlds *hw, const hf_pair *p)
{
    static kcc_body_triangle la[4096], lb[4096];
    for (int q = 0; q < 200; ++q) {
        float o[3], tgt[3], dir[3];
        placed_point_near(r, hw, p, 4.0f, rng_f(r, 0.0f, 10.0f), o);
        placed_point_near(r, hw, p, 0.0f, 0.0f, tgt);
        for (int k = 0; k < 3; ++k)
            dir[k] = tgt[k] - o[k];
        kcc_world_hit a, b;
        memset(&a, 0, sizeof a), memset(&b, 0, sizeof b);
        assert_int_equal(kcc_world_raycast(hw->w[0], o, dir, 1.0f, &a),
                         kcc_world_raycast(hw->w[1], o, dir, 1.0f, &b));
        assert_memory_equal(&a, &b, sizeof a);
        float c[3];
        placed_point_near(r, hw, p, 2.0f, 0.0f, c);
        const float half = rng_f(r, 0.05f, q % 10 == 0 ? 12.0f : 2.0f);
        vec3 box[2] = {{c[0] - half, c[1] - half, c[2] - half}, {c[0] + half, c[1] + half, c[2] + half}};
        lists_equal(la, kcc_world_overlap_aabb(hw->w[0], (const vec3 *)box, KCC_LAYERS_ALL, la, 4096),
                    lb, kcc_world_overlap_aabb(hw->w[1], (const vec3 *)box, KCC_LAYERS_ALL, lb, 4096));
        lists_equal(la, kcc_world_overlap_sphere(hw->w[0], c, half, KCC_LAYERS_ALL, la, 4096),
                    lb, kcc_world_overlap_sphere(hw->w[1], c, half, KCC_LAYERS_ALL, lb, 4096));
    }
}

static void world_sweeps_match(test_rng *r, const hf_worlds *hw, const hf_pair *p)
{
    for (int q = 0; q < 200; ++q) {
        float c[3], local_d[3], d[3];
        placed_point_near(r, hw, p, 2.0f, rng_f(r, 0.0f, 3.0f), c);
        for (int k = 0; k < 3; ++k)
            local_d[k] = rng_f(r, -4.0f, 4.0f);
        local_d[1] -= 3.0f;
        kcc_transform_vector(&hw->pose, local_d, d);
        const float half = rng_f(r, 0.1f, 1.0f), radius = rng_f(r, 0.1f, 1.0f);
        vec3 box[2] = {{c[0] - half, c[1] - half * 1.5f, c[2] - half},
                       {c[0] + half, c[1] + half * 1.5f, c[2] + half}};
        kcc_world_sweep_hit sa, sb;
        memset(&sa, 0, sizeof sa), memset(&sb, 0, sizeof sb);
        assert_int_equal(kcc_world_sweep_aabb(hw->w[0], (const vec3 *)box, d, KCC_LAYERS_ALL, &sa),
                         kcc_world_sweep_aabb(hw->w[1], (const vec3 *)box, d, KCC_LAYERS_ALL, &sb));
        assert_true(sa.t == sb.t);
        if (sa.triangle != sb.triangle) { /* an exact tie (sweeps_match): both met at that time */
            assert_int_equal(sa.body, hw->body[0]);
            placed_tie(hw, p, box, d, sa.t, sa.triangle);
            placed_tie(hw, p, box, d, sa.t, sb.triangle);
        } else {
            assert_memory_equal(&sa, &sb, sizeof sa);
        }
        kcc_world_sphere_hit ha, hb;
        memset(&ha, 0, sizeof ha), memset(&hb, 0, sizeof hb);
        assert_int_equal(kcc_world_sweep_sphere(hw->w[0], c, radius, d, KCC_LAYERS_ALL, &ha),
                         kcc_world_sweep_sphere(hw->w[1], c, radius, d, KCC_LAYERS_ALL, &hb));
        assert_memory_equal(&ha, &hb, sizeof ha);
        const float c1[3] = {c[0] + 0.3f, c[1] + 1.2f, c[2] - 0.2f};
        memset(&ha, 0, sizeof ha), memset(&hb, 0, sizeof hb);
        assert_int_equal(kcc_world_sweep_capsule(hw->w[0], c, c1, radius, d, KCC_LAYERS_ALL, &ha),
                         kcc_world_sweep_capsule(hw->w[1], c, c1, radius, d, KCC_LAYERS_ALL, &hb));
        assert_memory_equal(&ha, &hb, sizeof ha);
    }
}

static void world_bodies_answer_as_the_tree_mesh_of_the_same_triangles(void **state)
{
    (void)state;
    test_rng r = rng_seed(5);
    for (int round = 0; round < 6; ++round) {
        hf_pair p = pair_random(&r, 25 + round * 4, 21 + round * 3, round % 2 ? 10 : 0);
        kcc_transform pose = round == 0 ? kcc_transform_identity() : terrain_pose(&r, 3.0f, 200.0f);
        if (round == 1) /* translated only */
            pose.rotation[0] = pose.rotation[1] = pose.rotation[2] = 0.0f, pose.rotation[3] = 1.0f;
        hf_worlds hw;
        worlds_make(&hw, &p, &pose, round % 3 == 2 ? KCC_BODY_KINEMATIC : KCC_BODY_STATIC);
        world_rays_and_boxes_match(&r, &hw, &p);
        world_sweeps_match(&r, &hw, &p);
        worlds_free(&hw);
        pair_free(&p);
    }
}

/* The soup's triangles placed in double (test_quat_matrix), rounded to float. */
static float *placed_soup(const hf_pair *p, const kcc_transform *pose)
{
    double m[3][3];
    test_quat_matrix(pose->rotation, m);
    float *out = malloc(sizeof(float) * 9u * p->triangles);
    assert_non_null(out);
    for (uint32_t v = 0; v < 3u * p->triangles; ++v)
        for (int i = 0; i < 3; ++i)
            out[3u * v + (uint32_t)i] = (float)(m[i][0] * p->soup[3u * v] + m[i][1] * p->soup[3u * v + 1] +
                                                m[i][2] * p->soup[3u * v + 2] + pose->position[i]);
    return out;
}

/* The smallest barycentric coordinate of the ray's crossing of triangle tri's plane (negative:
 * outside), its t in *out_t; false when the ray runs parallel to the plane. */
static bool ray_tri_margin(const float *tri, const float o[3], const float d[3], double *out_t,
                           double *out_margin)
{
    double t;
    (void)ray_tri_double(tri, o, d, &t);
    double e1[3], e2[3], s[3], n[3];
    for (int k = 0; k < 3; ++k)
        e1[k] = (double)tri[3 + k] - tri[k], e2[k] = (double)tri[6 + k] - tri[k];
    n[0] = e1[1] * e2[2] - e1[2] * e2[1], n[1] = e1[2] * e2[0] - e1[0] * e2[2];
    n[2] = e1[0] * e2[1] - e1[1] * e2[0];
    const double dn = n[0] * d[0] + n[1] * d[1] + n[2] * d[2];
    if (dn == 0.0)
        return false;
    double bary[3], area = n[0] * n[0] + n[1] * n[1] + n[2] * n[2];
    for (int k = 0; k < 3; ++k)
        s[k] = (double)o[k] + t * d[k];
    for (int c = 0; c < 3; ++c) { /* the sub-triangle opposite corner c, signed by n */
        const float *a = tri + 3 * ((c + 1) % 3), *b = tri + 3 * ((c + 2) % 3);
        double ea[3], eb[3];
        for (int k = 0; k < 3; ++k)
            ea[k] = (double)a[k] - s[k], eb[k] = (double)b[k] - s[k];
        bary[c] = (n[0] * (ea[1] * eb[2] - ea[2] * eb[1]) + n[1] * (ea[2] * eb[0] - ea[0] * eb[2]) +
                   n[2] * (ea[0] * eb[1] - ea[1] * eb[0])) / area;
    }
    *out_t = t;
    *out_margin = fmin(bary[0], fmin(bary[1], bary[2]));
    return true;
}

/* The world ray against every live triangle placed in double: the same t (1e-5) where the nearest
 * crossing lies clearly inside its triangle (margin 1e-4), and no hit where every crossing lies
 * clearly outside. */
static void world_ray_against_placed(const hf_worlds *hw, const hf_pair *p, const float *placed,
                                     const float o[3], const float d[3])
{
    double best = INFINITY, near_edge = INFINITY;
    for (uint32_t t = 0; t < p->triangles; ++t) {
        double th, margin;
        if ((p->holes && p->holes[t / 2u]) || !ray_tri_margin(&placed[9u * t], o, d, &th, &margin) ||
            th < 0.0 || th > 1.0)
            continue;
        if (margin > -1e-4 && margin < 1e-4)
            near_edge = fmin(near_edge, th);
        if (margin >= 0.0)
            best = fmin(best, th);
    }
    kcc_world_hit h;
    const bool got = kcc_world_raycast_layers(hw->w[0], o, d, 1.0f, 1u, &h);
    if (got) {
        assert_int_equal(h.body, hw->body[0]);
        assert_false(p->holes && p->holes[h.triangle / 2u]);
    }
    if (got && best != INFINITY && fabs(h.t - best) <= 1e-5)
        return;
    /* a disagreement only where a crossing within the margin of an edge comes first */
    const double first = fmin(got ? (double)h.t : INFINITY, best);
    assert_true(near_edge <= first + 1e-5);
}

static void world_bodies_answer_as_brute_force_in_double(void **state)
{
    (void)state;
    test_rng r = rng_seed(6);
    static kcc_body_triangle got[8192];
    for (int round = 0; round < 3; ++round) {
        hf_pair p = pair_random(&r, 33, 27, 15);
        const kcc_transform pose = terrain_pose(&r, round == 2 ? 6.0f : 0.5f, 500.0f);
        hf_worlds hw;
        worlds_make(&hw, &p, &pose, KCC_BODY_STATIC);
        float *placed = placed_soup(&p, &pose);
        for (int q = 0; q < 300; ++q) {
            float o[3], tgt[3], dir[3];
            placed_point_near(&r, &hw, &p, 3.0f, 8.0f, o);
            placed_point_near(&r, &hw, &p, 0.0f, 0.0f, tgt);
            for (int k = 0; k < 3; ++k)
                dir[k] = tgt[k] - o[k];
            world_ray_against_placed(&hw, &p, placed, o, dir);
        }
        for (int q = 0; q < 150; ++q) {
            float c[3];
            placed_point_near(&r, &hw, &p, 1.0f, 0.0f, c);
            const float half = rng_f(&r, 0.1f, 3.0f), eps = 1e-3f;
            const float box[2][3] = {{c[0] - half, c[1] - half, c[2] - half},
                                     {c[0] + half, c[1] + half, c[2] + half}};
            const uint32_t n = kcc_world_overlap_aabb(hw.w[0], box, 1u, got, 8192);
            assert_true(n < 8192);
            const vec3 inner[2] = {{box[0][0] + eps, box[0][1] + eps, box[0][2] + eps},
                                   {box[1][0] - eps, box[1][1] - eps, box[1][2] - eps}};
            const vec3 outer[2] = {{box[0][0] - eps, box[0][1] - eps, box[0][2] - eps},
                                   {box[1][0] + eps, box[1][1] + eps, box[1][2] + eps}};
            bool listed[8192] = {false};
            for (uint32_t k = 0; k < n; ++k) {
                assert_int_equal(got[k].body, hw.body[0]);
                const float *v = &placed[9u * got[k].triangle];
                assert_false(p.holes && p.holes[got[k].triangle / 2u]);
                assert_true(kcc_tri_overlap_aabb(v, v + 3, v + 6, outer)); /* nothing apart */
                listed[got[k].triangle] = true;
            }
            for (uint32_t t = 0; t < p.triangles; ++t) {
                const float *v = &placed[9u * t];
                if ((!p.holes || !p.holes[t / 2u]) && kcc_tri_overlap_aabb(v, v + 3, v + 6, inner))
                    assert_true(listed[t]); /* everything inside */
            }
        }
        free(placed);
        worlds_free(&hw);
        pair_free(&p);
    }
}

/* ------------------------------------------------------------------------------------------------
 * Characters in a world on a placed heightfield. */

/* Character c's displacement at frame f of the scripted walk (gravity in *vy, jumps every two
 * seconds from the ground). */
static void scripted_step(int f, int c, bool on_ground, float *vy, float out[3])
{
    const float dt = 1.0f / 60.0f, ang = 0.01f * (float)f + (float)(f / 90 + c) * 1.3f, speed = 4.0f;
    if (on_ground)
        *vy = f % 120 == 60 ? 5.0f : *vy < 0.0f ? 0.0f : *vy;
    *vy -= 9.81f * dt;
    out[0] = speed * cosf(ang) * dt, out[1] = *vy * dt, out[2] = speed * sinf(ang) * dt;
}

/* The kinematic terrain's pose at frame f: swaying along x and y around its placement. */
static kcc_transform swayed(const kcc_transform *pose, int f)
{
    kcc_transform t = *pose;
    t.position[0] += 0.6f * sinf(0.02f * (float)f);
    t.position[1] += 0.3f * sinf(0.03f * (float)f);
    return t;
}

/* Three characters walk the scripted paths for `frames` steps in both worlds (the terrain swaying
 * when `moving`). Returns the largest difference of their positions between the two worlds (m);
 * *out_grounded the frames the first one ended on the terrain, *out_events the sensor events of
 * the heightfield's world (the same as the tree mesh's while the positions are). */
static float world_walk_both(hf_worlds *hw, const hf_pair *p, int frames, bool moving,
                             int *out_grounded, int *out_events)
{
    uint32_t ch[2][3];
    float vy[3] = {0.0f, 0.0f, 0.0f}, deviation = 0.0f;
    bool ground[3] = {false, false, false};
    for (int w = 0; w < 2; ++w)
        for (int c = 0; c < 3; ++c) {
            const float local[3] = {p->lo[0] + (p->hi[0] - p->lo[0]) * (0.3f + 0.2f * (float)c),
                                    p->hi[1] + 1.5f, 0.5f * (p->lo[2] + p->hi[2]) - 3.0f};
            float at[3];
            kcc_transform_point(&hw->pose, local, at);
            assert_int_equal(kcc_world_add_character(hw->w[w], NULL, at, &ch[w][c]), KCC_OK);
        }
    *out_grounded = *out_events = 0;
    for (int f = 0; f < frames; ++f) {
        for (int c = 0; c < 3; ++c) {
            float d[3];
            scripted_step(f, c, ground[c], &vy[c], d);
            for (int w = 0; w < 2; ++w)
                assert_int_equal(kcc_world_set_displacement(hw->w[w], ch[w][c], d), KCC_OK);
        }
        const kcc_transform t = swayed(&hw->pose, f);
        for (int w = 0; w < 2; ++w) {
            if (moving)
                assert_int_equal(kcc_world_move_body(hw->w[w], hw->body[w], &t), KCC_OK);
            assert_int_equal(kcc_world_step(hw->w[w]), KCC_OK);
        }
        const kcc_sensor_event *ea, *eb;
        const uint32_t na = kcc_world_sensor_events(hw->w[0], &ea, NULL);
        const uint32_t nb = kcc_world_sensor_events(hw->w[1], &eb, NULL);
        if (deviation == 0.0f) {
            assert_int_equal(na, nb);
            assert_memory_equal(ea, eb, sizeof *ea * na);
        }
        *out_events += (int)na;
        for (int c = 0; c < 3; ++c) {
            kcc_character_state a, b;
            assert_int_equal(kcc_world_get_character(hw->w[0], ch[0][c], &a, NULL), KCC_OK);
            assert_int_equal(kcc_world_get_character(hw->w[1], ch[1][c], &b, NULL), KCC_OK);
            for (int k = 0; k < 3; ++k)
                deviation = fmaxf(deviation, fabsf(a.position[k] - b.position[k]));
            ground[c] = a.on_ground;
            *out_grounded += c == 0 && a.on_ground && a.ground_body == hw->body[0];
        }
    }
    return deviation;
}

/* A character in a world holding only the heightfield, static at the identity, against
 * kcc_character_move on the heightfield itself: the same candidates in the same order, so the same
 * positions, ground and flags bit for bit. */
static void world_walk_matches_the_mesh_move(const hf_pair *p)
{
    kcc_world_desc wd = kcc_world_default_desc();
    kcc_world *w;
    assert_int_equal(kcc_world_create(&wd, &w), KCC_OK);
    kcc_body_desc bd = kcc_body_default_desc();
    uint32_t body, id;
    assert_int_equal(kcc_world_add_body(w, p->hf, &bd, &body), KCC_OK);
    const float start[3] = {0.5f * (p->lo[0] + p->hi[0]), p->hi[1] + 1.5f, 0.5f * (p->lo[2] + p->hi[2])};
    assert_int_equal(kcc_world_add_character(w, NULL, start, &id), KCC_OK);
    kcc_character solo;
    const kcc_character_desc desc = kcc_character_default_desc();
    assert_int_equal(kcc_character_init(&solo, &desc, start), KCC_OK);
    float vy = 0.0f;
    for (int f = 0; f < 300; ++f) {
        float d[3];
        scripted_step(f, 0, solo.on_ground, &vy, d);
        assert_int_equal(kcc_world_set_displacement(w, id, d), KCC_OK);
        assert_int_equal(kcc_world_step(w), KCC_OK);
        kcc_move_result want, got;
        kcc_character_move(&solo, p->hf, d, &want);
        kcc_character_state st;
        assert_int_equal(kcc_world_get_character(w, id, &st, &got), KCC_OK);
        assert_memory_equal(st.position, solo.position, sizeof st.position);
        assert_int_equal(st.on_ground, solo.on_ground);
        assert_int_equal(got.flags, want.flags);
    }
    kcc_world_destroy(w);
}

/* Characters walk and ride a placed heightfield as they do the tree mesh of its triangles placed
 * alike. The two worlds list a move's candidates in different orders (the grid's ascending ids, the
 * tree's leaf order), and where a character stands across an edge both triangles hold up, an exact
 * tie in the ground probe goes by that order: a variant of this script (the jump taken a frame
 * later) parted the two by 1.8 mm at a hole's edge, 5.4 cm apart at the end; the same happens
 * between two tree meshes of one soup in different orders. So: within 0.1 m, bit for bit on at
 * least 6 of these 8 runs (all 8 measured), and bit for bit where the order is the same
 * (world_walk_matches_the_mesh_move). */
static void world_characters_walk_and_ride_as_on_the_tree_mesh(void **state)
{
    (void)state;
    test_rng r = rng_seed(7);
    int exact = 0;
    for (int round = 0; round < 8; ++round) {
        hf_pair p = pair_random(&r, 40, 40, round % 4 == 3 ? 5 : 0);
        const kcc_transform pose = terrain_pose(&r, 0.25f, 300.0f);
        const bool moving = round >= 4;
        hf_worlds hw;
        worlds_make(&hw, &p, &pose, moving ? KCC_BODY_KINEMATIC : KCC_BODY_STATIC);
        int grounded, events;
        const float deviation = world_walk_both(&hw, &p, 360, moving, &grounded, &events);
        assert_true(events > 0);
        assert_true(deviation <= 0.1f);
        exact += deviation == 0.0f;
        if (round % 4 < 3)
            assert_true(grounded > 90); /* it walked (or rode) on the terrain, not only fell */
        worlds_free(&hw);
        if (round < 4)
            world_walk_matches_the_mesh_move(&p);
        pair_free(&p);
    }
    assert_true(exact >= 6);
}

/* ------------------------------------------------------------------------------------------------
 * Storage and the soak. */

/* Characters dropped on a heightfield walk `frames` frames; none ends a frame overlapping it. */
static void soak(const kcc_mesh *m, const float (*starts)[3], int n, int frames)
{
    kcc_character_desc desc = kcc_character_default_desc();
    for (int c = 0; c < n; ++c) {
        kcc_character ch;
        assert_int_equal(kcc_character_init(&ch, &desc, starts[c]), KCC_OK);
        float vy = 0.0f;
        for (int f = 0; f < frames; ++f) {
            const float ang = 0.02f * (float)f + (float)c;
            vy = ch.on_ground ? (f % 100 == 50 ? 6.0f : 0.0f) : vy - 9.81f / 60.0f;
            const vec3 d = {7.0f * cosf(ang) / 60.0f, vy / 60.0f, 7.0f * sinf(ang) / 60.0f};
            kcc_move_result res;
            kcc_character_move(&ch, m, d, &res);
            vec3 box[2];
            kcc_character_box(&ch, box);
            for (int k = 0; k < 3; ++k)
                box[0][k] += KCC_PENETRATION_TOLERANCE, box[1][k] -= KCC_PENETRATION_TOLERANCE;
            assert_int_equal(kcc_mesh_overlap_aabb(m, (const vec3 *)box, NULL, 0), 0);
        }
    }
}

static void terrain_heightfields_and_8m_triangles_run_without_penetration(void **state)
{
    (void)state;
    for (uint32_t seed = 1; seed <= 3; ++seed) {
        const uint32_t size = 64u * seed;
        float *h = malloc(sizeof(float) * (size + 1u) * (size + 1u));
        kcc_heightfield_desc d;
        assert_int_equal(kcc_level_terrain_heights(seed, size, h, &d), KCC_OK);
        kcc_mesh *m;
        assert_int_equal(kcc_heightfield_build(&d, &m), KCC_OK);
        const float starts[3][3] = {{0.0f, 15.0f, 0.0f}, {5.5f, 15.0f, -7.25f}, {-12.0f, 15.0f, 9.0f}};
        soak(m, starts, 3, 300);
        kcc_mesh_destroy(m);
        free(h);
    }
    const uint32_t size = 2048u;
    float *h = malloc(sizeof(float) * (size + 1u) * (size + 1u));
    kcc_heightfield_desc d;
    assert_int_equal(kcc_level_terrain_heights(7, size, h, &d), KCC_OK);
    kcc_mesh *m;
    assert_int_equal(kcc_heightfield_build(&d, &m), KCC_OK);
    assert_int_equal(kcc_mesh_triangle_count(m), 2u * size * size);
    /* 4 bytes a sample plus the pyramid: at most 4.5 bytes a sample in all */
    assert_true((double)kcc_mesh_memory_bytes(m) <= 4.5 * (size + 1.0) * (size + 1.0));
    const float starts[4][3] = {{0.0f, 15.0f, 0.0f}, {-1000.0f, 15.0f, 900.0f},
                                {700.5f, 15.0f, -333.0f}, {1020.0f, 15.0f, 1020.0f}};
    soak(m, starts, 4, 200);
    kcc_mesh_destroy(m);
    free(h);
}

/* ------------------------------------------------------------------------------------------------
 * Mesh against mesh with a heightfield on either side or both: the same pairs, in the same order,
 * with the same segments bit for bit, as the tree meshes of the same triangles give (whose walk is
 * checked against brute force over all pairs in test_mesh_mesh.c). */

/* The centre of grid p's extent placed by pose (NULL: the identity), in double. */
static void placed_centre(const hf_pair *p, const kcc_transform *pose, double out[3])
{
    double c[3];
    for (int k = 0; k < 3; ++k)
        c[k] = 0.5 * ((double)p->lo[k] + (double)p->hi[k]);
    if (!pose) {
        memcpy(out, c, sizeof c);
        return;
    }
    double m[3][3];
    test_quat_matrix(pose->rotation, m);
    for (int k = 0; k < 3; ++k)
        out[k] = m[k][0] * c[0] + m[k][1] * c[1] + m[k][2] * c[2] + pose->position[k];
}

/* A pose for grid b, tilted up to 1.2 rad and turned, that puts its centre within a metre of
 * `target`, so that b crosses the surface there. */
static kcc_transform crossing_pose(test_rng *r, const hf_pair *b, const double target[3])
{
    kcc_transform t = terrain_pose(r, 1.2f, 0.0f);
    t.position[0] = t.position[1] = t.position[2] = 0.0f;
    double rb[3];
    placed_centre(b, &t, rb);
    for (int k = 0; k < 3; ++k)
        t.position[k] = (float)(target[k] - rb[k]) + rng_f(r, -1.0f, 1.0f);
    return t;
}

static kcc_tri_pair g_hf_pairs[2][20000];

/* kcc_mesh_overlap_mesh(a, pa, b, pb) equals (c, pa, d, pb) pair for pair, bit for bit; returns the
 * count. */
static uint32_t overlaps_equal(const kcc_mesh *a, const kcc_transform *pa, const kcc_mesh *b,
                               const kcc_transform *pb, const kcc_mesh *c, const kcc_mesh *d)
{
    const uint32_t cap = 20000;
    const uint32_t n = kcc_mesh_overlap_mesh(a, pa, b, pb, g_hf_pairs[0], cap);
    assert_int_equal(kcc_mesh_overlap_mesh(c, pa, d, pb, g_hf_pairs[1], cap), n);
    assert_true(n <= cap);
    assert_memory_equal(g_hf_pairs[0], g_hf_pairs[1], n * sizeof(kcc_tri_pair));
    return n;
}

static void heightfield_overlaps_equal_the_mesh_of_the_same_triangles(void **state)
{
    (void)state;
    test_rng r = rng_seed(91);
    uint64_t pairs = 0;
    for (int round = 0; round < 12; ++round) {
        hf_pair a = pair_random(&r, 6u + rng_u32(&r) % 20u, 6u + rng_u32(&r) % 20u, round % 3 * 15);
        hf_pair b = pair_random(&r, 4u + rng_u32(&r) % 14u, 4u + rng_u32(&r) % 14u, round % 2 * 20);
        const kcc_transform pa = terrain_pose(&r, 0.4f, 5.0f);
        const kcc_transform *pose_a = round % 2 ? &pa : NULL; /* the identity half the time */
        double centre[3];
        placed_centre(&a, pose_a, centre);
        const kcc_transform pb = crossing_pose(&r, &b, centre);
        pairs += overlaps_equal(a.hf, pose_a, b.mesh, &pb, a.mesh, b.mesh);   /* hf, tree */
        pairs += overlaps_equal(b.mesh, &pb, a.hf, pose_a, b.mesh, a.mesh);   /* tree, hf */
        pairs += overlaps_equal(a.hf, pose_a, b.hf, &pb, a.mesh, b.mesh);     /* hf, hf */
        assert_int_equal(kcc_mesh_self_intersections(a.hf, NULL, 0), 0);
        pair_free(&a);
        pair_free(&b);
    }
    assert_true(pairs > 1000); /* the surfaces did cross */
}

/* A ray starting just past a tiny grid's far side and pointing away, with a huge direction: the
 * corner it passes through lies behind the start by less than |dir| 2^-150, so its t underflows to
 * -0, which the tree mesh's slab and triangle tests take as a hit at t = 0. The heightfield answers
 * the same (its short-segment cell range missed the grid and it reported no hit; fuzz_heightfield
 * found it with a denormal spacing). */
static void hf_ray_from_just_past_a_tiny_grid_hits_as_the_tree_does(void **state)
{
    (void)state;
    const float spacing_x[2] = {0x1.fp-127f, 0x1p-30f}, start_x[2] = {0x1.9cdbe8p-112f, 0x1p-29f};
    const float dir_x[2] = {0x1p+91f, 0x1p+127f};
    float heights[4] = {0.0f, 27.25f, 27.25f, -3.0f};
    for (int c = 0; c < 2; ++c) {
        kcc_heightfield_desc d;
        memset(&d, 0, sizeof d);
        d.heights = heights, d.columns = 2, d.rows = 2;
        d.spacing[0] = spacing_x[c], d.spacing[1] = 0.25f;
        hf_pair p = pair_build(&d);
        const vec3 origin = {start_x[c], 0.0f, 0.0f}, dir = {dir_x[c], 0.0f, 0.0f};
        kcc_ray_hit a, b;
        memset(&a, 0, sizeof a), memset(&b, 0, sizeof b);
        assert_true(kcc_mesh_raycast(p.mesh, origin, dir, 1.0f, &b));
        assert_true(b.t == 0.0f);
        assert_true(kcc_mesh_raycast(p.hf, origin, dir, 1.0f, &a));
        assert_memory_equal(&a, &b, sizeof a);
        pair_free(&p);
    }
}

/* A grid whose cells are far below float's resolution across the ray: 1.3e-33 m apart along x
 * while its heights span 19 m and its rows 385 km. The sheared triangle test (x' = x - sx y,
 * rounded at the size of y) counts triangle 3, of the second cell, from a start 1.3e-33 m
 * beside it: the lone kcc_tri_raycast hits it at t = 0. The brute force over that per-triangle
 * test is the reference, and the heightfield, the tree mesh of its triangles and the mesh of
 * triangle 3 alone answer as it does (a slab grown by 2^-20 of each axis's own size would cull
 * the cell and the lone triangle's leaf, but enter the tree's leaf of all four triangles:
 * fuzz_heightfield corpus regress-hf-ray-beside-a-cell-below-float-resolution.bin). */
static void hf_ray_beside_cells_below_float_resolution_hits_as_the_triangle_test_does(void **state)
{
    (void)state;
    float heights[6] = {0.0f, -4.0f, -16.75f, -4.25f, 2.0f, 0.0f};
    kcc_heightfield_desc d;
    memset(&d, 0, sizeof d);
    d.heights = heights, d.columns = 3, d.rows = 2;
    d.spacing[0] = 0x1.b57bdep-110f, d.spacing[1] = 0x1.78008p+18f;
    d.origin[0] = 0x1.1b45p-130f, d.origin[1] = 0x1.2001ep-111f, d.origin[2] = -0x1.de9178p-4f;
    hf_pair p = pair_build(&d);
    const vec3 origin = {0.0f, -4.1875f, 0.0f}, dir = {-2.0f, -2.125f, 0.0f};
    uint32_t want = UINT32_MAX;
    float want_t = 1.0f;
    for (uint32_t i = 0; i < p.triangles; ++i) {
        const float *v = &p.soup[9 * i];
        float t;
        if (kcc_tri_raycast(v, v + 3, v + 6, origin, dir, 1.0f, &t) &&
            (want == UINT32_MAX || t < want_t))
            want = i, want_t = t;
    }
    assert_int_equal(want, 3);
    assert_true(want_t == 0.0f);
    kcc_mesh_desc md;
    memset(&md, 0, sizeof md);
    md.positions = &p.soup[9 * want];
    md.vertex_count = 3, md.triangle_count = 1;
    kcc_mesh *lone;
    assert_int_equal(kcc_mesh_build(&md, &lone), KCC_OK);
    const kcc_mesh *meshes[3] = {p.hf, p.mesh, lone};
    const uint32_t ids[3] = {want, want, 0};
    for (int m = 0; m < 3; ++m) {
        kcc_ray_hit hit;
        memset(&hit, 0, sizeof hit);
        assert_true(kcc_mesh_raycast(meshes[m], origin, dir, 1.0f, &hit));
        assert_int_equal(hit.triangle, ids[m]);
        assert_true(hit.t == want_t);
    }
    kcc_mesh_destroy(lone);
    pair_free(&p);
}

int test_group_heightfield(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(queries_equal_the_mesh_of_the_same_triangles),
        cmocka_unit_test(queries_equal_brute_force_in_double),
        cmocka_unit_test(characters_move_as_on_the_mesh_of_the_same_triangles),
        cmocka_unit_test(world_bodies_answer_as_the_tree_mesh_of_the_same_triangles),
        cmocka_unit_test(world_bodies_answer_as_brute_force_in_double),
        cmocka_unit_test(world_characters_walk_and_ride_as_on_the_tree_mesh),
        cmocka_unit_test(heightfield_overlaps_equal_the_mesh_of_the_same_triangles),
        cmocka_unit_test(bad_descs_give_statuses),
        cmocka_unit_test(hf_ray_from_just_past_a_tiny_grid_hits_as_the_tree_does),
        cmocka_unit_test(hf_ray_beside_cells_below_float_resolution_hits_as_the_triangle_test_does),
        cmocka_unit_test(terrain_heightfields_and_8m_triangles_run_without_penetration),
    };
    return KCC_RUN_GROUP("heightfield", tests);
}
