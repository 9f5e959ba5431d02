/* test_heightfield.c: heightfields (kcc_heightfield_build) against the kcc_mesh built from the same
 * triangles (every query bit for bit, the same triangle ids, characters bit for bit), against brute
 * force in double (rays) and the per-triangle primitives (overlaps), bad descs, and the soak on the
 * terrain generator's ground and an 8-million-triangle grid. */
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
    assert_int_equal(kcc_mesh_overlap_mesh(m, NULL, m, NULL, NULL, 0), 0);
    assert_int_equal(kcc_mesh_self_intersections(m, NULL, 0), 0);
    kcc_world_desc wd = kcc_world_default_desc();
    kcc_world *w;
    assert_int_equal(kcc_world_create(&wd, &w), KCC_OK);
    uint32_t body;
    assert_int_equal(kcc_world_add_body(w, m, NULL, &body), KCC_ERR_BAD_DESC);
    kcc_world_destroy(w);
    kcc_mesh_destroy(m);
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

int test_group_heightfield(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(queries_equal_the_mesh_of_the_same_triangles),
        cmocka_unit_test(queries_equal_brute_force_in_double),
        cmocka_unit_test(characters_move_as_on_the_mesh_of_the_same_triangles),
        cmocka_unit_test(bad_descs_give_statuses),
        cmocka_unit_test(terrain_heightfields_and_8m_triangles_run_without_penetration),
    };
    return KCC_RUN_GROUP("heightfield", tests);
}
