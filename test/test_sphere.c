/* test_sphere.c: the sphere and capsule queries (swept sphere, swept capsule, sphere overlap) against
 * independent references written here in double: point-to-triangle distance by projection and
 * barycentrics (else the nearest edge), the capsule's by minimising it along the segment, and the
 * first contact of a sweep by minimising that distance along the path (it is convex in t). */
#include "test.h"

/* ------------------------------------------------------------------------------------------------
 * Scenes: a triangle list (9 floats per triangle, input order) and its mesh. */

typedef struct scene {
    float    *tris;
    uint32_t  n;
    kcc_mesh *mesh;
    float     scale;   ///< largest |coordinate| (m)
} scene;

static test_rng rng_seed(uint64_t seed)
{
    return rng_seed_salted(seed, 0x5b4e7e11ull);
}

static void scene_build(scene *s)
{
    kcc_mesh_desc d;
    memset(&d, 0, sizeof d);
    d.positions = s->tris;
    d.vertex_count = 3 * s->n;
    d.triangle_count = s->n;
    assert_int_equal(kcc_mesh_build(&d, &s->mesh), KCC_OK);
    s->scale = 0.0f;
    for (uint32_t i = 0; i < 9 * s->n; ++i)
        s->scale = fabsf(s->tris[i]) > s->scale ? fabsf(s->tris[i]) : s->scale;
}

static scene scene_soup(uint64_t seed, uint32_t n, float world, float size)
{
    test_rng r = rng_seed(seed);
    scene s = {malloc(sizeof(float) * 9 * n), n, NULL, 0.0f};
    assert_non_null(s.tris);
    for (uint32_t i = 0; i < n; ++i) {
        const float c[3] = {rng_f(&r, 0, world), rng_f(&r, 0, world), rng_f(&r, 0, world)};
        for (int k = 0; k < 9; ++k)
            s.tris[9 * i + k] = c[k % 3] + rng_f(&r, -size, size);
    }
    scene_build(&s);
    return s;
}

static scene scene_from_level(const kcc_level *lv)
{
    scene s = {malloc(sizeof(float) * 9 * lv->triangle_count), lv->triangle_count, NULL, 0.0f};
    assert_non_null(s.tris);
    for (uint32_t i = 0; i < s.n; ++i)
        for (int c = 0; c < 3; ++c)
            memcpy(s.tris + 9 * i + 3 * c, lv->positions + 3 * lv->indices[3 * i + (uint32_t)c],
                   3 * sizeof(float));
    scene_build(&s);
    return s;
}

static scene scene_of_tris(const float *tris, uint32_t n)
{
    scene s = {malloc(sizeof(float) * 9 * n), n, NULL, 0.0f};
    assert_non_null(s.tris);
    memcpy(s.tris, tris, sizeof(float) * 9 * n);
    scene_build(&s);
    return s;
}

static void scene_free(scene *s)
{
    kcc_mesh_destroy(s->mesh);
    free(s->tris);
}

/* ------------------------------------------------------------------------------------------------
 * The reference, in double. */

static void tod(const float *f, double o[3])
{
    o[0] = f[0], o[1] = f[1], o[2] = f[2];
}

static double rdot(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static double ref_point_segment(const double p[3], const double a[3], const double b[3])
{
    const double ab[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    const double ap[3] = {p[0] - a[0], p[1] - a[1], p[2] - a[2]};
    const double len2 = rdot(ab, ab);
    double u = len2 > 0.0 ? rdot(ap, ab) / len2 : 0.0;
    u = u < 0.0 ? 0.0 : u > 1.0 ? 1.0 : u;
    const double g[3] = {ap[0] - u * ab[0], ap[1] - u * ab[1], ap[2] - u * ab[2]};
    return sqrt(rdot(g, g));
}

/* Point-to-triangle distance: the plane distance where the projection falls inside (all three
 * signed sub-areas of the same sign as the normal), else the nearest of the three edges. */
static double ref_point_tri(const float *t, const double p[3])
{
    double v[3][3];
    for (int c = 0; c < 3; ++c)
        tod(t + 3 * c, v[c]);
    const double e0[3] = {v[1][0] - v[0][0], v[1][1] - v[0][1], v[1][2] - v[0][2]};
    const double e1[3] = {v[2][0] - v[0][0], v[2][1] - v[0][1], v[2][2] - v[0][2]};
    const double n[3] = {e0[1] * e1[2] - e0[2] * e1[1], e0[2] * e1[0] - e0[0] * e1[2],
                         e0[0] * e1[1] - e0[1] * e1[0]};
    const double nn = rdot(n, n);
    const double ap[3] = {p[0] - v[0][0], p[1] - v[0][1], p[2] - v[0][2]};
    const double s = rdot(n, ap) / nn;
    const double q[3] = {p[0] - s * n[0], p[1] - s * n[1], p[2] - s * n[2]};
    bool inside = true;
    for (int i = 0; i < 3; ++i) {
        const double *a = v[i], *b = v[(i + 1) % 3];
        const double e[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
        const double aq[3] = {q[0] - a[0], q[1] - a[1], q[2] - a[2]};
        const double x[3] = {e[1] * aq[2] - e[2] * aq[1], e[2] * aq[0] - e[0] * aq[2],
                             e[0] * aq[1] - e[1] * aq[0]};
        inside = inside && rdot(x, n) >= 0.0;
    }
    if (inside)
        return fabs(rdot(n, ap)) / sqrt(nn);
    double best = INFINITY;
    for (int i = 0; i < 3; ++i) {
        const double d = ref_point_segment(p, v[i], v[(i + 1) % 3]);
        best = d < best ? d : best;
    }
    return best;
}

/* A swept sphere (seg zero) or capsule (p0 .. p0 + seg, plus r) moving by d. */
typedef struct ref_shape {
    double p0[3], seg[3], d[3], r;
} ref_shape;

static ref_shape shape_of(const float p0[3], const float p1[3], float r, const float d[3])
{
    ref_shape s;
    for (int k = 0; k < 3; ++k) {
        s.p0[k] = p0[k];
        s.seg[k] = (double)p1[k] - p0[k];
        s.d[k] = d[k];
    }
    s.r = r;
    return s;
}

/* Golden-section minimum of a convex function of x in [lo, hi]. */
typedef double (*ref_fn)(const void *ctx, double x);
static double ref_minimise(ref_fn f, const void *ctx, double lo, double hi, double *at)
{
    const double g = 0.6180339887498949;
    double a = lo, b = hi, x1 = b - g * (b - a), x2 = a + g * (b - a);
    double f1 = f(ctx, x1), f2 = f(ctx, x2);
    for (int i = 0; i < 56; ++i) {
        if (f1 <= f2) {
            b = x2, x2 = x1, f2 = f1;
            x1 = b - g * (b - a), f1 = f(ctx, x1);
        } else {
            a = x1, x1 = x2, f1 = f2;
            x2 = a + g * (b - a), f2 = f(ctx, x2);
        }
    }
    double best = f1 < f2 ? f1 : f2, where = f1 < f2 ? x1 : x2;
    const double flo = f(ctx, lo), fhi = f(ctx, hi);
    if (flo <= best)
        best = flo, where = lo;
    if (fhi < best)
        best = fhi, where = hi;
    if (at)
        *at = where;
    return best;
}

typedef struct ref_at {
    const float     *tri;
    const ref_shape *shape;
    double           time;
} ref_at;

static double ref_dist_on_segment(const void *ctx, double u)
{
    const ref_at *a = ctx;
    double p[3];
    for (int k = 0; k < 3; ++k)
        p[k] = a->shape->p0[k] + a->time * a->shape->d[k] + u * a->shape->seg[k];
    return ref_point_tri(a->tri, p);
}

/* Distance from the shape's segment (its centre for a sphere) at time t to the triangle. */
static double ref_dist(const float *tri, const ref_shape *s, double t)
{
    ref_at a = {tri, s, t};
    if (rdot(s->seg, s->seg) == 0.0)
        return ref_dist_on_segment(&a, 0.0);
    return ref_minimise(ref_dist_on_segment, &a, 0.0, 1.0, NULL);
}

static double ref_dist_of_time(const void *ctx, double t)
{
    const ref_at *a = ctx;
    return ref_dist(a->tri, a->shape, t);
}

/* The least distance over times [0, t1]. */
static double ref_min_dist(const float *tri, const ref_shape *s, double t1)
{
    ref_at a = {tri, s, 0.0};
    return ref_minimise(ref_dist_of_time, &a, 0.0, t1, NULL);
}

/* The triangle's bounds overlap the bounds of the whole sweep grown by r (a superset of the
 * triangles the shape can touch: the brute force skips only those that cannot). */
static bool ref_may_touch(const float *tri, const ref_shape *s)
{
    for (int k = 0; k < 3; ++k) {
        double lo = s->p0[k], hi = s->p0[k];
        const double ends[3] = {s->seg[k], s->d[k], s->seg[k] + s->d[k]};
        for (int i = 0; i < 3; ++i) {
            lo = s->p0[k] + ends[i] < lo ? s->p0[k] + ends[i] : lo;
            hi = s->p0[k] + ends[i] > hi ? s->p0[k] + ends[i] : hi;
        }
        const double g = s->r * 1.01 + 1e-6;
        double tlo = tri[k], thi = tri[k];
        for (int c = 1; c < 3; ++c) {
            tlo = tri[3 * c + k] < tlo ? tri[3 * c + k] : tlo;
            thi = tri[3 * c + k] > thi ? tri[3 * c + k] : thi;
        }
        if (tlo > hi + g || thi < lo - g)
            return false;
    }
    return true;
}

/* The shape at t = 0 is farther than r (1 + margin) from every triangle. */
static bool ref_start_is_free(const scene *sc, const ref_shape *s, double margin)
{
    for (uint32_t i = 0; i < sc->n; ++i)
        if (ref_may_touch(sc->tris + 9 * i, s) && ref_dist(sc->tris + 9 * i, s, 0.0) <= s->r * (1.0 + margin))
            return false;
    return true;
}

/* Relative tolerance of the distance checks. */
#define TOL 1e-4

/* Checks a sweep from a free start against the reference: on a hit, at t the shape touches the
 * reported triangle (distance r within TOL relative) at the reported point, with the normal from
 * that point toward the shape, and no triangle comes nearer than r (1 - TOL) before t; on a miss,
 * none does over the whole sweep. Returns whether it hit. */
static bool check_free_sweep(const scene *sc, const ref_shape *s, bool hit, const kcc_sphere_hit *h)
{
    const double tol = TOL * s->r;
    const double t1 = hit ? h->t : 1.0;
    if (hit) {
        assert_false(h->start_overlap);
        assert_true(h->t >= 0.0f && h->t <= 1.0f);
        assert_true(h->triangle < sc->n);
        const float *tri = sc->tris + 9 * h->triangle;
        assert_true(fabs(ref_dist(tri, s, h->t) - s->r) <= tol);
        double pt[3];
        tod(h->point, pt);
        assert_true(ref_point_tri(tri, pt) <= tol);
        /* the point pushed r along the normal lies on the shape's segment (its centre) at t */
        double on_axis[3];
        for (int k = 0; k < 3; ++k)
            on_axis[k] = pt[k] + s->r * h->normal[k] - s->p0[k] - h->t * s->d[k];
        const double zero[3] = {0, 0, 0};
        assert_true(ref_point_segment(on_axis, zero, s->seg) <= 10.0 * tol);
        assert_true(fabs(sqrt(h->normal[0] * (double)h->normal[0] + h->normal[1] * (double)h->normal[1] +
                              h->normal[2] * (double)h->normal[2]) - 1.0) < 1e-5);
    }
    for (uint32_t i = 0; i < sc->n; ++i) {
        const float *tri = sc->tris + 9 * i;
        if (ref_may_touch(tri, s))
            assert_true(ref_min_dist(tri, s, t1) >= s->r - tol);
    }
    return hit;
}

/* A random free start within [lo, hi] and a sweep of 2-10 m (or a short one), for sphere or capsule. */
static bool random_free_query(const scene *sc, test_rng *r, const float lo[3], const float hi[3],
                              bool capsule, float out_p0[3], float out_p1[3], float *out_r,
                              float out_d[3])
{
    for (int attempt = 0; attempt < 50; ++attempt) {
        *out_r = rng_f(r, 0.05f, 1.0f);
        const float len = rng_f(r, 0.5f, 10.0f);
        float dir[3], norm = 0.0f;
        for (int k = 0; k < 3; ++k) {
            out_p0[k] = rng_f(r, lo[k], hi[k]);
            dir[k] = rng_f(r, -1.0f, 1.0f);
            norm += dir[k] * dir[k];
            out_p1[k] = out_p0[k] + (capsule ? rng_f(r, -1.0f, 1.0f) : 0.0f);
        }
        norm = sqrtf(norm);
        for (int k = 0; k < 3; ++k)
            out_d[k] = dir[k] / norm * len;
        const ref_shape s = shape_of(out_p0, out_p1, *out_r, out_d);
        if (ref_start_is_free(sc, &s, 1e-3))
            return true;
    }
    return false;
}

/* Runs `queries` random free sweeps on the scene; returns how many hit. */
static int sweeps_match_reference(const scene *sc, uint64_t seed, int queries, bool capsule)
{
    vec3 b[2];
    kcc_mesh_bounds(sc->mesh, b);
    test_rng r = rng_seed(seed);
    int hits = 0;
    for (int q = 0; q < queries; ++q) {
        float p0[3], p1[3], rad, d[3];
        if (!random_free_query(sc, &r, b[0], b[1], capsule, p0, p1, &rad, d))
            continue;
        kcc_sphere_hit h;
        const bool hit = capsule ? kcc_mesh_sweep_capsule(sc->mesh, p0, p1, rad, d, &h)
                                 : kcc_mesh_sweep_sphere(sc->mesh, p0, rad, d, &h);
        const ref_shape s = shape_of(p0, p1, rad, d);
        hits += check_free_sweep(sc, &s, hit, &h) ? 1 : 0;
    }
    return hits;
}

/* ------------------------------------------------------------------------------------------------
 * Sweeps against the reference */

static void sphere_sweeps_match_the_reference_on_random_soups(void **state)
{
    (void)state;
    scene sc = scene_soup(1, 80, 12.0f, 2.0f);
    const int hits = sweeps_match_reference(&sc, 2, 150, false);
    assert_true(hits > 30 && hits < 140);
    scene_free(&sc);
}

static void capsule_sweeps_match_the_reference_on_random_soups(void **state)
{
    (void)state;
    scene sc = scene_soup(3, 40, 10.0f, 2.0f);
    const int hits = sweeps_match_reference(&sc, 4, 50, true);
    assert_true(hits > 10 && hits < 48);
    scene_free(&sc);
}

static void sweeps_match_the_reference_on_generated_levels(void **state)
{
    (void)state;
    const char *specs[] = {"arena seed=3", "terrain seed=7 size=24"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; ++i) {
        kcc_level lv;
        assert_int_equal(kcc_level_generate(specs[i], &lv, NULL, 0), KCC_OK);
        scene sc = scene_from_level(&lv);
        assert_true(sweeps_match_reference(&sc, 10 + i, 60, false) > 5);
        assert_true(sweeps_match_reference(&sc, 20 + i, 12, true) > 1);
        scene_free(&sc);
        kcc_level_free(&lv);
    }
}

static void sweeps_match_the_reference_on_the_shared_levels(void **state)
{
    (void)state;
    int used = 0;
    for (int l = 0; l < 5; l += 2) {
        const char *path = kcc_test_shared_level(l);
        kcc_level lv;
        if (!path || kcc_level_load_obj_geometry(path, &lv, NULL, 0) != KCC_OK)
            continue;
        ++used;
        scene sc = scene_from_level(&lv);
        assert_true(sweeps_match_reference(&sc, 30 + (uint64_t)l, 30, false) > 3);
        sweeps_match_reference(&sc, 40 + (uint64_t)l, 6, true);
        scene_free(&sc);
        kcc_level_free(&lv);
    }
    if (used == 0)
        skip();
}

/* The brute force over the per-triangle primitive: the earliest contact, ties to the lowest index. */
static bool brute_sweep(const scene *sc, const float p0[3], const float p1[3], float r,
                        const float d[3], bool capsule, kcc_sphere_hit *out)
{
    bool any = false;
    for (uint32_t i = 0; i < sc->n; ++i) {
        const float *t = sc->tris + 9 * i;
        kcc_sphere_hit h;
        const bool hit = capsule ? kcc_tri_sweep_capsule(t, t + 3, t + 6, p0, p1, r, d, &h)
                                 : kcc_tri_sweep_sphere(t, t + 3, t + 6, p0, r, d, &h);
        if (hit && (!any || h.t < out->t)) {
            *out = h;
            out->triangle = i;
            any = true;
        }
    }
    return any;
}

static void mesh_sweeps_equal_the_earliest_triangle_sweep_including_start_overlaps(void **state)
{
    (void)state;
    scene sc = scene_soup(5, 300, 20.0f, 2.0f);
    test_rng r = rng_seed(6);
    int hits = 0, starts = 0;
    for (int q = 0; q < 400; ++q) {
        const bool capsule = q % 3 == 0;
        float p0[3], p1[3], d[3];
        const float rad = rng_f(&r, 0.05f, 1.5f);
        for (int k = 0; k < 3; ++k) {
            p0[k] = rng_f(&r, 0.0f, 20.0f);
            p1[k] = p0[k] + (capsule ? rng_f(&r, -1.5f, 1.5f) : 0.0f);
            d[k] = q % 7 == 0 && k != 1 ? 0.0f : rng_f(&r, -6.0f, 6.0f);
        }
        kcc_sphere_hit got, want;
        const bool hit = capsule ? kcc_mesh_sweep_capsule(sc.mesh, p0, p1, rad, d, &got)
                                 : kcc_mesh_sweep_sphere(sc.mesh, p0, rad, d, &got);
        assert_int_equal(hit, brute_sweep(&sc, p0, p1, rad, d, capsule, &want));
        if (!hit)
            continue;
        ++hits;
        starts += got.start_overlap ? 1 : 0;
        assert_true(got.t == want.t);
        assert_int_equal(got.triangle, want.triangle);
        assert_int_equal(got.start_overlap, want.start_overlap);
        assert_memory_equal(got.point, want.point, sizeof got.point);
        assert_memory_equal(got.normal, want.normal, sizeof got.normal);
    }
    assert_true(hits > 100 && starts > 20);
    scene_free(&sc);
}

/* The distance's rate of change at t = 0 (per unit of t), by a one-sided difference. */
static double ref_slope(const float *tri, const ref_shape *s)
{
    const double h = 1e-6;
    return (ref_dist(tri, s, h) - ref_dist(tri, s, 0.0)) / h;
}

static void start_overlaps_are_reported_only_when_moving_deeper(void **state)
{
    (void)state;
    scene sc = scene_soup(7, 60, 10.0f, 2.0f);
    test_rng r = rng_seed(8);
    int reported = 0, ignored = 0;
    for (int q = 0; q < 300; ++q) {
        /* a start near a random triangle's corner-weighted point */
        const float *t = sc.tris + 9 * (rng_u32(&r) % sc.n);
        const bool capsule = q % 2 == 1;
        float p0[3], p1[3], d[3];
        const float rad = rng_f(&r, 0.2f, 1.0f);
        for (int k = 0; k < 3; ++k) {
            p0[k] = (t[k] + t[3 + k] + t[6 + k]) / 3.0f + rng_f(&r, -0.8f, 0.8f);
            p1[k] = p0[k] + (capsule ? rng_f(&r, -1.0f, 1.0f) : 0.0f);
            d[k] = rng_f(&r, -2.0f, 2.0f);
        }
        const ref_shape s = shape_of(p0, p1, rad, d);
        const double tol = TOL * rad, dlen = sqrt(rdot(s.d, s.d));
        kcc_sphere_hit h;
        const bool hit = capsule ? kcc_mesh_sweep_capsule(sc.mesh, p0, p1, rad, d, &h)
                                 : kcc_mesh_sweep_sphere(sc.mesh, p0, rad, d, &h);
        if (hit && h.start_overlap) {
            ++reported;
            const float *tri = sc.tris + 9 * h.triangle;
            assert_true(h.t == 0.0f);
            assert_true(ref_dist(tri, &s, 0.0) <= rad + tol);
            assert_true(h.normal[0] * d[0] + h.normal[1] * d[1] + h.normal[2] * d[2] < 0.0f);
            assert_true(ref_slope(tri, &s) < 1e-3 * dlen);
            continue;
        }
        /* no start contact: every triangle the shape overlaps at t = 0 moves away (or along) */
        for (uint32_t i = 0; i < sc.n; ++i) {
            const float *tri = sc.tris + 9 * i;
            if (ref_may_touch(tri, &s) && ref_dist(tri, &s, 0.0) < rad - tol) {
                assert_true(ref_slope(tri, &s) >= -1e-3 * dlen);
                ++ignored;
            }
        }
    }
    assert_true(reported > 30 && ignored > 10);
    scene_free(&sc);
}

/* ------------------------------------------------------------------------------------------------
 * Sphere overlap */

static void overlap_matches_reference(const scene *sc, uint64_t seed, int queries, float rmax)
{
    vec3 b[2];
    kcc_mesh_bounds(sc->mesh, b);
    test_rng r = rng_seed(seed);
    uint32_t *out = malloc(sizeof(uint32_t) * sc->n);
    uint8_t *mark = malloc(sc->n);
    assert_true(out && mark);
    uint32_t total = 0;
    for (int q = 0; q < queries; ++q) {
        const float c[3] = {rng_f(&r, b[0][0], b[1][0]), rng_f(&r, b[0][1], b[1][1]),
                            rng_f(&r, b[0][2], b[1][2])};
        const float rad = rng_f(&r, 0.05f, rmax);
        const uint32_t n = kcc_mesh_overlap_sphere(sc->mesh, c, rad, out, sc->n);
        assert_true(n <= sc->n);
        memset(mark, 0, sc->n);
        for (uint32_t i = 0; i < n; ++i) {
            assert_true(out[i] < sc->n && !mark[out[i]]);
            mark[out[i]] = 1;
        }
        double p[3];
        tod(c, p);
        for (uint32_t i = 0; i < sc->n; ++i) {
            const double dist = ref_point_tri(sc->tris + 9 * i, p);
            if (fabs(dist - rad) <= 1e-6 * (rad + sc->scale))
                continue; /* touching within rounding: either answer */
            assert_int_equal(mark[i], dist <= rad);
            assert_int_equal(kcc_tri_overlap_sphere(sc->tris + 9 * i, sc->tris + 9 * i + 3,
                                                    sc->tris + 9 * i + 6, c, rad), dist <= rad);
        }
        /* the count is the total; only capacity entries are written */
        if (n > 1) {
            uint32_t few[1] = {UINT32_MAX};
            assert_int_equal(kcc_mesh_overlap_sphere(sc->mesh, c, rad, few, 1), n);
            assert_true(few[0] < sc->n && mark[few[0]]);
            assert_int_equal(kcc_mesh_overlap_sphere(sc->mesh, c, rad, NULL, 0), n);
        }
        total += n;
    }
    assert_true(total > (uint32_t)queries / 2);
    free(out);
    free(mark);
}

static void sphere_overlap_equals_the_point_triangle_distance_test(void **state)
{
    (void)state;
    scene sc = scene_soup(9, 400, 20.0f, 2.0f);
    overlap_matches_reference(&sc, 10, 200, 3.0f);
    scene_free(&sc);
    kcc_level lv;
    assert_int_equal(kcc_level_generate("arena seed=5", &lv, NULL, 0), KCC_OK);
    sc = scene_from_level(&lv);
    overlap_matches_reference(&sc, 11, 100, 4.0f);
    scene_free(&sc);
    kcc_level_free(&lv);
    const char *path = kcc_test_shared_level(1);
    if (path && kcc_level_load_obj_geometry(path, &lv, NULL, 0) == KCC_OK) {
        sc = scene_from_level(&lv);
        overlap_matches_reference(&sc, 12, 40, 4.0f);
        scene_free(&sc);
        kcc_level_free(&lv);
    }
}

/* A duplicate of a triangle is reported by overlap with its original; sweeps report the lowest
 * index of equal contacts. */
static void overlap_reports_every_copy_and_sweeps_the_lowest_index(void **state)
{
    (void)state;
    const float floor[9] = {-2, 0, -2, 0, 0, 2, 2, 0, -2};
    const float flipped[9] = {-2, 0, -2, 2, 0, -2, 0, 0, 2};
    float tris[27];
    memcpy(tris, flipped, sizeof flipped);  /* 0: the floor wound the other way (not a copy) */
    memcpy(tris + 9, floor, sizeof floor);  /* 1 */
    memcpy(tris + 18, floor, sizeof floor); /* 2: an exact copy of 1 */
    scene sc = scene_of_tris(tris, 3);
    uint32_t out[3];
    assert_int_equal(kcc_mesh_overlap_sphere(sc.mesh, (const float[3]){0, 0.5f, 0}, 0.5f, out, 3), 3);
    kcc_sphere_hit h;
    assert_true(kcc_mesh_sweep_sphere(sc.mesh, (const float[3]){0, 2, 0}, 0.5f, (const float[3]){0, -3, 0}, &h));
    assert_int_equal(h.triangle, 0);
    assert_true(fabsf(h.t - 0.5f) < 1e-6f);
    scene_free(&sc);
}

/* ------------------------------------------------------------------------------------------------
 * Hand-computed cases */

static void assert_vec_near(const float v[3], float x, float y, float z, float tol)
{
    assert_true(fabsf(v[0] - x) <= tol && fabsf(v[1] - y) <= tol && fabsf(v[2] - z) <= tol);
}

/* A floor triangle in y = 0 wound +Y: a (-10, 0, -10), b (0, 0, 10), c (10, 0, -10). */
static const float FLOOR[9] = {-10, 0, -10, 0, 0, 10, 10, 0, -10};

static void sphere_lands_on_a_face_from_either_side(void **state)
{
    (void)state;
    scene sc = scene_of_tris(FLOOR, 1);
    kcc_sphere_hit h;
    assert_true(kcc_mesh_sweep_sphere(sc.mesh, (const float[3]){1, 3, -1}, 0.5f, (const float[3]){0, -5, 0}, &h));
    assert_true(fabsf(h.t - 0.5f) < 1e-6f && !h.start_overlap && h.triangle == 0);
    assert_vec_near(h.point, 1, 0, -1, 1e-6f);
    assert_vec_near(h.normal, 0, 1, 0, 1e-6f);
    assert_true(kcc_mesh_sweep_sphere(sc.mesh, (const float[3]){1, -3, -1}, 0.5f, (const float[3]){0, 5, 0}, &h));
    assert_true(fabsf(h.t - 0.5f) < 1e-6f);
    assert_vec_near(h.normal, 0, -1, 0, 1e-6f);
    /* stopping short of the face: no contact */
    assert_false(kcc_mesh_sweep_sphere(sc.mesh, (const float[3]){1, 3, -1}, 0.5f, (const float[3]){0, -2.4f, 0}, &h));
    scene_free(&sc);
}

static void sphere_grazing_an_edge_or_a_vertex_hits_only_within_the_radius(void **state)
{
    (void)state;
    /* A vertical triangle in z = 0 with its top edge along x at y = 0, and one whose top vertex is
     * the origin. The sphere (r = 0.5) passes along z at height h over the edge / the vertex. */
    const float edge_tri[9] = {-5, 0, 0, 5, 0, 0, 0, -5, 0};
    const float vertex_tri[9] = {0, 0, 0, -1, -2, 0, 1, -2, 0};
    const float *tris[2] = {edge_tri, vertex_tri};
    const float r = 0.5f;
    for (int i = 0; i < 2; ++i) {
        scene sc = scene_of_tris(tris[i], 1);
        for (int above = 0; above < 2; ++above) {
            const float h = above ? r * 1.001f : r * 0.999f;
            kcc_sphere_hit hit;
            const bool got = kcc_mesh_sweep_sphere(sc.mesh, (const float[3]){0, h, -3}, r,
                                                   (const float[3]){0, 0, 6}, &hit);
            assert_int_equal(got, !above);
            if (!got)
                continue;
            const double z = -sqrt((double)r * r - (double)h * h);
            assert_true(fabs(hit.t - (z + 3.0) / 6.0) < 1e-6);
            assert_vec_near(hit.point, 0, 0, 0, 1e-5f);
            assert_true(hit.normal[1] > 0.99f && hit.normal[2] < 0.0f);
        }
        scene_free(&sc);
    }
}

static void sphere_moving_parallel_to_a_face_touches_only_its_edges(void **state)
{
    (void)state;
    scene sc = scene_of_tris(FLOOR, 1);
    const float r = 0.5f;
    kcc_sphere_hit h;
    /* just above the slab: nothing, however far */
    assert_false(kcc_mesh_sweep_sphere(sc.mesh, (const float[3]){-20, r * 1.001f, 0}, r, (const float[3]){40, 0, 0}, &h));
    /* inside the slab, from beside the triangle: the edge a-b (x = -5 at z = 0, direction (1, 0, 2)) */
    const float y = 0.3f;
    assert_true(kcc_mesh_sweep_sphere(sc.mesh, (const float[3]){-20, y, 0}, r, (const float[3]){40, 0, 0}, &h));
    const double x = -5.0 - sqrt(5.0 * ((double)r * r - (double)y * y) / 4.0);
    assert_true(fabs(h.t - (x + 20.0) / 40.0) < 1e-6);
    assert_true(!h.start_overlap && h.point[1] == 0.0f);
    scene_free(&sc);
}

static void sphere_starting_in_touch_reports_t0_only_when_moving_deeper(void **state)
{
    (void)state;
    scene sc = scene_of_tris(FLOOR, 1);
    kcc_sphere_hit h;
    const float touching[3] = {1, 0.5f, -1}, sunk[3] = {1, 0.3f, -1};
    assert_true(kcc_mesh_sweep_sphere(sc.mesh, touching, 0.5f, (const float[3]){0.3f, -1, 0}, &h));
    assert_true(h.t == 0.0f && h.start_overlap);
    assert_vec_near(h.normal, 0, 1, 0, 1e-6f);
    assert_vec_near(h.point, 1, 0, -1, 1e-6f);
    assert_true(kcc_mesh_sweep_sphere(sc.mesh, sunk, 0.5f, (const float[3]){0, -0.1f, 0}, &h));
    assert_true(h.t == 0.0f && h.start_overlap);
    /* sliding along or lifting off: nothing */
    assert_false(kcc_mesh_sweep_sphere(sc.mesh, touching, 0.5f, (const float[3]){1, 0, 0}, &h));
    assert_false(kcc_mesh_sweep_sphere(sc.mesh, sunk, 0.5f, (const float[3]){0, 1, 0}, &h));
    /* a zero delta approaches nothing, even sunk */
    assert_false(kcc_mesh_sweep_sphere(sc.mesh, sunk, 0.5f, (const float[3]){0, 0, 0}, &h));
    assert_false(kcc_tri_sweep_sphere(FLOOR, FLOOR + 3, FLOOR + 6, sunk, 0.5f, (const float[3]){0, 0, 0}, &h));
    /* the centre on the face: the face normal against delta */
    assert_true(kcc_mesh_sweep_sphere(sc.mesh, (const float[3]){1, 0, -1}, 0.5f, (const float[3]){0, 1, 0}, &h));
    assert_true(h.start_overlap);
    assert_vec_near(h.normal, 0, -1, 0, 1e-6f);
    scene_free(&sc);
}

static void capsule_meets_a_ridge_a_vertex_and_a_small_floor_at_hand_computed_times(void **state)
{
    (void)state;
    const float ridge[9] = {0, 0, -1, 0, 0, 1, 0, -1, 0};
    const float peak[9] = {0, 0, 0, -0.5f, -1, 0, 0.5f, -1, 0};
    const float small_floor[9] = {-1, 0, -1, 0, 0, 1, 1, 0, -1};
    const float down[3] = {0, -2, 0};
    kcc_sphere_hit h;
    /* a capsule across the ridge's edge: the two segments' interiors meet */
    scene sc = scene_of_tris(ridge, 1);
    assert_true(kcc_mesh_sweep_capsule(sc.mesh, (const float[3]){-1, 1, 0}, (const float[3]){1, 1, 0}, 0.25f, down, &h));
    assert_true(fabsf(h.t - 0.375f) < 1e-6f && !h.start_overlap);
    assert_vec_near(h.point, 0, 0, 0, 1e-6f);
    assert_vec_near(h.normal, 0, 1, 0, 1e-6f);
    scene_free(&sc);
    /* a capsule along z onto a peak: the vertex meets the capsule's side */
    sc = scene_of_tris(peak, 1);
    assert_true(kcc_mesh_sweep_capsule(sc.mesh, (const float[3]){0, 1, -1}, (const float[3]){0, 1, 1}, 0.25f, down, &h));
    assert_true(fabsf(h.t - 0.375f) < 1e-6f);
    assert_vec_near(h.point, 0, 0, 0, 1e-6f);
    assert_vec_near(h.normal, 0, 1, 0, 1e-6f);
    scene_free(&sc);
    /* a long capsule lying flat onto a floor smaller than it: both ends stay beyond the floor */
    sc = scene_of_tris(small_floor, 1);
    assert_true(kcc_mesh_sweep_capsule(sc.mesh, (const float[3]){-5, 1, 0}, (const float[3]){5, 1, 0}, 0.5f, down, &h));
    assert_true(fabsf(h.t - 0.25f) < 1e-6f);
    assert_true(fabsf(h.point[1]) < 1e-6f && fabsf(h.point[2]) < 1e-6f && fabsf(h.point[0]) <= 0.5f);
    assert_vec_near(h.normal, 0, 1, 0, 1e-6f);
    /* a capsule of zero length is the sphere */
    kcc_sphere_hit s;
    const float c[3] = {0.2f, 2, -0.3f}, d[3] = {0.1f, -3, 0.2f};
    assert_true(kcc_mesh_sweep_capsule(sc.mesh, c, c, 0.5f, d, &h));
    assert_true(kcc_mesh_sweep_sphere(sc.mesh, c, 0.5f, d, &s));
    assert_true(fabsf(h.t - s.t) < 1e-6f && h.triangle == s.triangle);
    scene_free(&sc);
}

static void degenerate_triangles_are_never_touched(void **state)
{
    (void)state;
    /* triangle 0 is a needle (collinear corners) right in the path; triangle 1 a floor below it */
    const float tris[18] = {-1, 1, 0, 0, 1, 0, 1, 1, 0, -10, 0, -10, 0, 0, 10, 10, 0, -10};
    scene sc = scene_of_tris(tris, 2);
    kcc_sphere_hit h;
    assert_true(kcc_mesh_sweep_sphere(sc.mesh, (const float[3]){0, 3, 0}, 0.5f, (const float[3]){0, -5, 0}, &h));
    assert_int_equal(h.triangle, 1);
    assert_true(kcc_mesh_sweep_capsule(sc.mesh, (const float[3]){0, 3, 0}, (const float[3]){0, 4, 0}, 0.5f, (const float[3]){0, -5, 0}, &h));
    assert_int_equal(h.triangle, 1);
    uint32_t out[2];
    assert_int_equal(kcc_mesh_overlap_sphere(sc.mesh, (const float[3]){0, 1, 0}, 0.5f, out, 2), 0);
    assert_false(kcc_tri_overlap_sphere(tris, tris + 3, tris + 6, (const float[3]){0, 1, 0}, 0.5f));
    assert_false(kcc_tri_sweep_sphere(tris, tris + 3, tris + 6, (const float[3]){0, 3, 0}, 0.5f, (const float[3]){0, -5, 0}, &h));
    scene_free(&sc);
}

static void sphere_queries_reject_bad_input_and_leave_the_hit_untouched(void **state)
{
    (void)state;
    scene sc = scene_of_tris(FLOOR, 1);
    const float c[3] = {0, 2, 0}, d[3] = {0, -4, 0}, nan3[3] = {NAN, 0, 0}, inf3[3] = {0, INFINITY, 0};
    const float radii[] = {0.0f, -1.0f, NAN, INFINITY};
    kcc_sphere_hit h, blank;
    memset(&blank, 0x5a, sizeof blank);
    h = blank;
    uint32_t out[1];
    for (size_t i = 0; i < sizeof radii / sizeof radii[0]; ++i) {
        assert_false(kcc_mesh_sweep_sphere(sc.mesh, c, radii[i], d, &h));
        assert_false(kcc_mesh_sweep_capsule(sc.mesh, c, c, radii[i], d, &h));
        assert_int_equal(kcc_mesh_overlap_sphere(sc.mesh, c, radii[i], out, 1), 0);
        assert_false(kcc_tri_sweep_sphere(FLOOR, FLOOR + 3, FLOOR + 6, c, radii[i], d, &h));
        assert_false(kcc_tri_overlap_sphere(FLOOR, FLOOR + 3, FLOOR + 6, c, radii[i]));
    }
    const float *bad[] = {NULL, nan3, inf3};
    for (size_t i = 0; i < 3; ++i) {
        assert_false(kcc_mesh_sweep_sphere(sc.mesh, bad[i], 0.5f, d, &h));
        assert_false(kcc_mesh_sweep_sphere(sc.mesh, c, 0.5f, bad[i], &h));
        assert_false(kcc_mesh_sweep_capsule(sc.mesh, bad[i], c, 0.5f, d, &h));
        assert_false(kcc_mesh_sweep_capsule(sc.mesh, c, bad[i], 0.5f, d, &h));
        assert_int_equal(kcc_mesh_overlap_sphere(sc.mesh, bad[i], 0.5f, out, 1), 0);
        assert_false(kcc_tri_sweep_capsule(bad[i], FLOOR + 3, FLOOR + 6, c, c, 0.5f, d, &h));
        assert_false(kcc_tri_overlap_sphere(FLOOR, FLOOR + 3, bad[i], c, 0.5f));
    }
    assert_false(kcc_mesh_sweep_sphere(NULL, c, 0.5f, d, &h));
    assert_false(kcc_mesh_sweep_sphere(sc.mesh, c, 0.5f, d, NULL));
    assert_false(kcc_mesh_sweep_capsule(NULL, c, c, 0.5f, d, &h));
    assert_int_equal(kcc_mesh_overlap_sphere(NULL, c, 3.0f, out, 1), 0);
    assert_int_equal(kcc_mesh_overlap_sphere(sc.mesh, c, 3.0f, NULL, 1), 0);
    assert_memory_equal(&h, &blank, sizeof h);
    /* the same arguments, valid, do answer */
    assert_true(kcc_mesh_sweep_sphere(sc.mesh, c, 0.5f, d, &h));
    assert_int_equal(kcc_mesh_overlap_sphere(sc.mesh, c, 3.0f, out, 1), 1);
    scene_free(&sc);
}

/* Grown float bounds beyond float's range would match the tree's empty slots: such sweeps test
 * every triangle and answer as the brute force does. */
static void sweeps_reaching_beyond_float_range_still_answer(void **state)
{
    (void)state;
    float tris[18];
    memcpy(tris, FLOOR, sizeof FLOOR);
    for (int k = 0; k < 9; ++k)
        tris[9 + k] = FLOOR[k] + (k % 3 == 1 ? -5.0f : 0.0f); /* a second floor 5 m lower */
    scene sc = scene_of_tris(tris, 2);
    kcc_sphere_hit h, want;
    const float far[3] = {0, 1e37f, 0}, d[3] = {0, -2e37f, 0}, c[3] = {0, 2, 0};
    assert_true(kcc_mesh_sweep_sphere(sc.mesh, far, 1.0f, d, &h));
    assert_true(brute_sweep(&sc, far, far, 1.0f, d, false, &want));
    assert_true(h.t == want.t && h.triangle == 0 && fabsf(h.t - 0.5f) < 1e-6f);
    assert_true(kcc_mesh_sweep_sphere(sc.mesh, c, 3e38f, (const float[3]){0, -1, 0}, &h));
    assert_true(h.start_overlap && h.triangle == 0);
    /* the sphere's bounds 4e38 m up: beyond float */
    const float farther[3] = {0, 3e38f, 0}, down[3] = {0, -3.3e38f, 0};
    assert_true(kcc_mesh_sweep_sphere(sc.mesh, farther, 1e38f, down, &h));
    assert_true(h.triangle == 0 && fabsf(h.t - 2.0f / 3.3f) < 1e-6f);
    assert_true(kcc_mesh_sweep_capsule(sc.mesh, far, c, 0.5f, d, &h));
    assert_true(brute_sweep(&sc, far, c, 0.5f, d, true, &want));
    assert_true(h.t == want.t && h.triangle == want.triangle);
    scene_free(&sc);
}

int test_group_sphere(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sphere_sweeps_match_the_reference_on_random_soups),
        cmocka_unit_test(capsule_sweeps_match_the_reference_on_random_soups),
        cmocka_unit_test(sweeps_match_the_reference_on_generated_levels),
        cmocka_unit_test(sweeps_match_the_reference_on_the_shared_levels),
        cmocka_unit_test(mesh_sweeps_equal_the_earliest_triangle_sweep_including_start_overlaps),
        cmocka_unit_test(start_overlaps_are_reported_only_when_moving_deeper),
        cmocka_unit_test(sphere_overlap_equals_the_point_triangle_distance_test),
        cmocka_unit_test(overlap_reports_every_copy_and_sweeps_the_lowest_index),
        cmocka_unit_test(sphere_lands_on_a_face_from_either_side),
        cmocka_unit_test(sphere_grazing_an_edge_or_a_vertex_hits_only_within_the_radius),
        cmocka_unit_test(sphere_moving_parallel_to_a_face_touches_only_its_edges),
        cmocka_unit_test(sphere_starting_in_touch_reports_t0_only_when_moving_deeper),
        cmocka_unit_test(capsule_meets_a_ridge_a_vertex_and_a_small_floor_at_hand_computed_times),
        cmocka_unit_test(degenerate_triangles_are_never_touched),
        cmocka_unit_test(sphere_queries_reject_bad_input_and_leave_the_hit_untouched),
        cmocka_unit_test(sweeps_reaching_beyond_float_range_still_answer),
    };
    return KCC_RUN_GROUP("sphere", tests);
}
