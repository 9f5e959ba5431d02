/* test_mesh_mesh.c: mesh against mesh, self-intersections and the triangle/triangle test, each
 * checked against an independent brute force (a separating-axis triangle test in double written
 * here) or hand-computed answers; and kcc-check on hand-made broken levels (OBJ text, and a Quake 3
 * BSP written byte by byte). */
#define _POSIX_C_SOURCE 200809L   /* mkdtemp for the scratch levels */
#include "test.h"
#include "../demo/check.h"

#include <unistd.h>

/* ------------------------------------------------------------------------------------------------
 * The reference: two closed triangles are apart exactly when one of 17 axes separates them: both
 * normals, the nine edge cross products and the six in-plane edge normals (n x e, which decide
 * coplanar pairs). Axes are left unnormalised, so on small-integer corners every value is exact. */

enum { REF_APART = 0, REF_MEET = 1, REF_UNSURE = -1 };

static void sub3(const double a[3], const double b[3], double out[3])
{
    out[0] = a[0] - b[0], out[1] = a[1] - b[1], out[2] = a[2] - b[2];
}

static void cross3(const double a[3], const double b[3], double out[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

static double dot3(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* The gap between the two triangles' projections on axis l: > 0 apart along it. */
static double axis_gap(double a[3][3], double b[3][3], const double l[3])
{
    double amin = INFINITY, amax = -INFINITY, bmin = INFINITY, bmax = -INFINITY;
    for (int i = 0; i < 3; ++i) {
        const double pa = dot3(a[i], l), pb = dot3(b[i], l);
        amin = fmin(amin, pa), amax = fmax(amax, pa);
        bmin = fmin(bmin, pb), bmax = fmax(bmax, pb);
    }
    return fmax(bmin - amax, amin - bmax);
}

/* REF_APART when an axis separates them by more than tol (m, times the axis length), REF_MEET
 * when every axis overlaps them by at least tol, else REF_UNSURE. tol 0: exact for exact data. */
static int ref_tri_tri(double a[3][3], double b[3][3], double tol)
{
    double ea[3][3], eb[3][3], na[3], nb[3], axes[17][3];
    int n = 0;
    for (int i = 0; i < 3; ++i) {
        sub3(a[(i + 1) % 3], a[i], ea[i]);
        sub3(b[(i + 1) % 3], b[i], eb[i]);
    }
    cross3(ea[0], ea[1], na);
    cross3(eb[0], eb[1], nb);
    memcpy(axes[n++], na, sizeof na);
    memcpy(axes[n++], nb, sizeof nb);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            cross3(ea[i], eb[j], axes[n++]);
    for (int i = 0; i < 3; ++i) {
        cross3(na, ea[i], axes[n++]);
        cross3(nb, eb[i], axes[n++]);
    }
    bool unsure = false;
    for (int k = 0; k < n; ++k) {
        const double len = sqrt(dot3(axes[k], axes[k]));
        const double gap = axis_gap(a, b, axes[k]);
        if (gap > tol * len)
            return REF_APART;
        if (gap > -tol * len && (tol > 0.0 || len > 0.0))
            unsure = unsure || tol > 0.0;
    }
    return unsure ? REF_UNSURE : REF_MEET;
}

static bool ref_degenerate(double t[3][3])
{
    double e0[3], e1[3], n[3];
    sub3(t[1], t[0], e0);
    sub3(t[2], t[0], e1);
    cross3(e0, e1, n);
    return n[0] == 0.0 && n[1] == 0.0 && n[2] == 0.0;
}

/* Distance from p to the closed triangle t (double; the Voronoi-free form: the plane's foot
 * when it falls inside, else the nearest edge). */
static double point_segment_distance(const double p[3], const double a[3], const double b[3])
{
    double ab[3], ap[3];
    sub3(b, a, ab);
    sub3(p, a, ap);
    const double len2 = dot3(ab, ab);
    double s = len2 > 0.0 ? dot3(ap, ab) / len2 : 0.0;
    s = s < 0.0 ? 0.0 : s > 1.0 ? 1.0 : s;
    double d[3] = {ap[0] - s * ab[0], ap[1] - s * ab[1], ap[2] - s * ab[2]};
    return sqrt(dot3(d, d));
}

static double point_triangle_distance(const double p[3], double t[3][3])
{
    double e0[3], e1[3], n[3], ap[3];
    sub3(t[1], t[0], e0);
    sub3(t[2], t[0], e1);
    cross3(e0, e1, n);
    const double nn = dot3(n, n);
    sub3(p, t[0], ap);
    const double h = dot3(ap, n) / nn;
    const double foot[3] = {p[0] - h * n[0], p[1] - h * n[1], p[2] - h * n[2]};
    bool inside = true;
    for (int i = 0; i < 3; ++i) {
        double e[3], f[3], c[3];
        sub3(t[(i + 1) % 3], t[i], e);
        sub3(foot, t[i], f);
        cross3(e, f, c);
        inside = inside && dot3(c, n) >= 0.0;
    }
    if (inside)
        return fabs(h) * sqrt(nn);
    return fmin(point_segment_distance(p, t[0], t[1]),
                fmin(point_segment_distance(p, t[1], t[2]), point_segment_distance(p, t[2], t[0])));
}

static void to_double(vec3 t[3], double out[3][3])
{
    for (int i = 0; i < 3; ++i)
        for (int k = 0; k < 3; ++k)
            out[i][k] = t[i][k];
}

/* Both ends of seg lie on both triangles, within tol (m). */
static void assert_segment_on_both(vec3 seg[2], vec3 a[3], vec3 b[3], double tol)
{
    double da[3][3], db[3][3];
    to_double(a, da);
    to_double(b, db);
    for (int e = 0; e < 2; ++e) {
        const double p[3] = {seg[e][0], seg[e][1], seg[e][2]};
        assert_true(point_triangle_distance(p, da) <= tol);
        assert_true(point_triangle_distance(p, db) <= tol);
    }
}

/* ------------------------------------------------------------------------------------------------
 * Triangle against triangle, hand-made cases. */

static bool tt(const float a[9], const float b[9], vec3 seg[2])
{
    return kcc_tri_intersect_tri(a, a + 3, a + 6, b, b + 3, b + 6, seg);
}

/* Both argument orders give the answer expected, and the reference agrees; on a hit the segment
 * lies on both. */
static void check_pair(const float a[9], const float b[9], bool expected)
{
    vec3 seg[2], seg2[2];
    assert_int_equal(tt(a, b, seg), expected);
    assert_int_equal(tt(b, a, seg2), expected);
    vec3 *ta = (vec3 *)(uintptr_t)a, *tb = (vec3 *)(uintptr_t)b;
    double da[3][3], db[3][3];
    to_double(ta, da);
    to_double(tb, db);
    int ref = ref_tri_tri(da, db, 0.0);
    assert_int_equal(ref, expected ? REF_MEET : REF_APART);
    if (expected) {
        assert_segment_on_both(seg, ta, tb, 1e-6);
        assert_segment_on_both(seg2, ta, tb, 1e-6);
    }
}

static void coplanar_triangles_meet_where_they_overlap_and_not_apart(void **state)
{
    (void)state;
    const float a[9] = {0, 0, 0, 4, 0, 0, 0, 4, 0};
    const float same[9] = {0, 0, 0, 4, 0, 0, 0, 4, 0};
    const float shifted[9] = {1, 1, 0, 5, 1, 0, 1, 5, 0};
    const float inside[9] = {1, 1, 0, 2, 1, 0, 1, 2, 0};
    const float beside[9] = {3, 3, 0, 6, 3, 0, 3, 6, 0};   /* past the hypotenuse x + y = 4 */
    check_pair(a, same, true);
    check_pair(a, shifted, true);
    check_pair(a, inside, true);
    check_pair(a, beside, false);
    /* the overlap of a and inside is inside itself: the two points are two of its corners */
    vec3 seg[2];
    assert_true(tt(a, inside, seg));
    assert_true(fabsf(seg[0][0] - seg[1][0]) + fabsf(seg[0][1] - seg[1][1]) > 0.9f);
}

static void triangles_touching_at_an_edge_or_a_vertex_meet(void **state)
{
    (void)state;
    const float a[9] = {0, 0, 0, 4, 0, 0, 0, 4, 0};
    const float wall_on_edge[9] = {1, 0, 0, 3, 0, 0, 2, 0, 3};        /* stands on a's edge y = 0 */
    const float coplanar_edge[9] = {0, 0, 0, 4, 0, 0, 2, -3, 0};      /* shares the edge, other side */
    const float apex_on_face[9] = {1, 1, 0, 1, 2, 5, 2, 1, 5};        /* a corner on a's face */
    const float apex_on_corner[9] = {4, 0, 0, 5, 0, 3, 6, 1, 3};      /* a corner on a's corner */
    const float apex_above[9] = {1, 1, 0.001f, 1, 2, 5, 2, 1, 5};
    check_pair(a, wall_on_edge, true);
    check_pair(a, coplanar_edge, true);
    check_pair(a, apex_on_face, true);
    check_pair(a, apex_on_corner, true);
    check_pair(a, apex_above, false);
    vec3 seg[2];
    assert_true(tt(a, apex_on_face, seg));
    for (int e = 0; e < 2; ++e) /* a touching corner: both ends are that point */
        assert_true(fabsf(seg[e][0] - 1) + fabsf(seg[e][1] - 1) + fabsf(seg[e][2]) < 1e-6f);
    assert_true(tt(a, wall_on_edge, seg));
    assert_true(fabsf(seg[0][0] - seg[1][0]) > 1.99f); /* the whole shared piece, x 1 .. 3 */
}

static void crossing_triangles_report_the_segment_where_they_cut(void **state)
{
    (void)state;
    const float a[9] = {0, 0, 0, 4, 0, 0, 0, 4, 0};
    const float b[9] = {1, 1, -1, 1, 1, 1, 3, 1, 0};  /* a vertical triangle through y = 1 */
    vec3 seg[2];
    assert_true(tt(a, b, seg));
    /* b meets z = 0 along x in [1, 3] at y = 1 (its corner (3 1 0) on a's edge x + y = 4): the
     * segment (1 1 0) - (3 1 0), either order */
    const float lo = fminf(seg[0][0], seg[1][0]), hi = fmaxf(seg[0][0], seg[1][0]);
    assert_true(fabsf(lo - 1.0f) < 1e-6f && fabsf(hi - 3.0f) < 1e-6f);
    for (int e = 0; e < 2; ++e)
        assert_true(fabsf(seg[e][1] - 1.0f) < 1e-6f && fabsf(seg[e][2]) < 1e-6f);
    check_pair(a, b, true);
}

static void needle_triangles_are_decided_exactly(void **state)
{
    (void)state;
    const float a[9] = {0, 0, 0, 4, 0, 0, 0, 4, 0};
    const float tiny = 0x1p-20f;
    /* a needle through a's interior, and one passing 2^-20 beside its edge x = 0 */
    const float through[9] = {1, 1, -1, 1, 1, 1, 1 + tiny, 1, 1};
    const float beside[9] = {-tiny, 1, -1, -tiny, 1, 1, -2 * tiny, 1, 1};
    const float grazing[9] = {0, 1, -1, 0, 1, 1, -tiny, 1, 1}; /* its long edge on a's edge line */
    check_pair(a, through, true);
    check_pair(a, beside, false);
    check_pair(a, grazing, true);
    /* a corner exactly on the sloped plane z = (5 x + y) / 32 through (0 0 0) (3 1 0.5) (1 3 0.25)
     * at (2 2 0.375), on that triangle's edge x + y = 4; one ulp above it the pair is apart */
    const float sloped[9] = {0, 0, 0, 3, 1, 0.5f, 1, 3, 0.25f};
    float on[9] = {2, 2, 0.375f, 2, 3, 5, 3, 2, 5};
    check_pair(sloped, on, true);
    on[2] = nextafterf(0.375f, 1.0f);
    vec3 seg[2];
    assert_false(tt(sloped, on, seg));
    assert_false(tt(on, sloped, seg));
}

static void degenerate_triangles_never_intersect(void **state)
{
    (void)state;
    const float a[9] = {0, 0, 0, 4, 0, 0, 0, 4, 0};
    const float line[9] = {1, 1, -1, 1, 1, 1, 1, 1, 0};   /* collinear corners through a */
    const float point[9] = {1, 1, 0, 1, 1, 0, 1, 1, 0};
    vec3 seg[2];
    assert_false(tt(a, line, seg));
    assert_false(tt(line, a, seg));
    assert_false(tt(a, point, NULL));
}

/* ------------------------------------------------------------------------------------------------
 * Meshes against the brute force over all pairs. */

typedef struct soup {
    float    pos[3 * 3 * 600];
    uint32_t count;
} soup;

static kcc_mesh *soup_mesh(const soup *s)
{
    kcc_mesh_desc d = {.positions = s->pos, .vertex_count = 3 * s->count,
                       .triangle_count = s->count};
    kcc_mesh *m = NULL;
    assert_int_equal(kcc_mesh_build(&d, &m), KCC_OK);
    return m;
}

/* n triangles with corners in a cube of side `size` around random centres in [-2, 2]^3. */
static void random_soup(test_rng *r, uint32_t n, float size, soup *out)
{
    out->count = n;
    for (uint32_t t = 0; t < n; ++t) {
        const float c[3] = {rng_f(r, -2, 2), rng_f(r, -2, 2), rng_f(r, -2, 2)};
        for (int i = 0; i < 9; ++i)
            out->pos[9 * t + (uint32_t)i] = c[i % 3] + rng_f(r, -size, size);
    }
}

/* A bumpy grid of cells x cells quads (two triangles each) over [-2, 2]^2 in x, z. */
static void bumpy_grid(uint32_t cells, float bump, soup *out)
{
    out->count = 0;
    for (uint32_t j = 0; j < cells; ++j)
        for (uint32_t i = 0; i < cells; ++i) {
            float p[4][3];
            for (int k = 0; k < 4; ++k) {
                const float x = -2.0f + 4.0f * (float)(i + (uint32_t)(k & 1)) / (float)cells;
                const float z = -2.0f + 4.0f * (float)(j + (uint32_t)(k >> 1)) / (float)cells;
                p[k][0] = x, p[k][1] = bump * sinf(3.0f * x) * cosf(2.0f * z), p[k][2] = z;
            }
            const int tri[2][3] = {{0, 2, 1}, {1, 2, 3}};
            for (int t = 0; t < 2; ++t, ++out->count)
                for (int c = 0; c < 3; ++c)
                    memcpy(&out->pos[9 * out->count + 3 * (uint32_t)c], p[tri[t][c]], 12);
        }
}

static kcc_transform random_pose(test_rng *r, float reach)
{
    double q[4], len = 0.0;
    for (int k = 0; k < 4; ++k) {
        q[k] = rng_f(r, -1, 1);
        len += q[k] * q[k];
    }
    kcc_transform t;
    for (int k = 0; k < 4; ++k)
        t.rotation[k] = (float)(q[k] / sqrt(len));
    for (int k = 0; k < 3; ++k)
        t.position[k] = rng_f(r, -reach, reach);
    return t;
}

static void placed(const kcc_mesh *m, const kcc_transform *pose, uint32_t i, vec3 out[3])
{
    vec3 c[3];
    assert_true(kcc_mesh_triangle(m, i, c));
    for (int k = 0; k < 3; ++k) {
        if (pose)
            kcc_transform_point(pose, c[k], out[k]);
        else
            memcpy(out[k], c[k], sizeof(vec3));
    }
}

/* The reference's verdict on triangle i of a and j of b, placed (REF_APART for degenerate). */
static int ref_pair(const kcc_mesh *a, const kcc_transform *pa, uint32_t i, const kcc_mesh *b,
                    const kcc_transform *pb, uint32_t j, double tol)
{
    vec3 ta[3], tb[3];
    double da[3][3], db[3][3];
    placed(a, pa, i, ta);
    placed(b, pb, j, tb);
    to_double(ta, da);
    to_double(tb, db);
    if (ref_degenerate(da) || ref_degenerate(db))
        return REF_APART;
    return ref_tri_tri(da, db, tol);
}

static kcc_tri_pair g_pairs[200000];

/* kcc_mesh_overlap_mesh against the reference over all pairs: nothing apart reported, everything
 * meeting reported, ascending order, segments on both triangles. Returns the count. */
static uint32_t check_against_brute_force(const kcc_mesh *a, const kcc_transform *pa,
                                          const kcc_mesh *b, const kcc_transform *pb, double tol)
{
    const uint32_t cap = (uint32_t)(sizeof g_pairs / sizeof g_pairs[0]);
    const uint32_t n = kcc_mesh_overlap_mesh(a, pa, b, pb, g_pairs, cap);
    assert_true(n <= cap);
    assert_int_equal(kcc_mesh_overlap_mesh(a, pa, b, pb, NULL, 0), n);
    const uint32_t na = kcc_mesh_triangle_count(a), nb = kcc_mesh_triangle_count(b);
    uint32_t k = 0;
    for (uint32_t i = 0; i < na; ++i)
        for (uint32_t j = 0; j < nb; ++j) {
            const bool listed = k < n && g_pairs[k].a == i && g_pairs[k].b == j;
            const int ref = ref_pair(a, pa, i, b, pb, j, tol);
            if (ref != REF_UNSURE && (ref == REF_MEET) != listed)
                fail_msg("pair %u %u: reference %d, listed %d", i, j, ref, listed);
            if (listed) {
                vec3 ta[3], tb[3];
                placed(a, pa, i, ta);
                placed(b, pb, j, tb);
                double mag = 0.0; /* the float segment's rounding grows with the corners */
                for (int c = 0; c < 9; ++c)
                    mag = fmax(mag, fmax(fabs(ta[c / 3][c % 3]), fabs(tb[c / 3][c % 3])));
                assert_segment_on_both(g_pairs[k].segment, ta, tb, fmax(1e-4, 1e-5 * mag));
                ++k;
            }
        }
    assert_int_equal(k, n); /* every listed pair was met in ascending order */
    return n;
}

static void rotated_meshes_match_brute_force_over_all_pairs(void **state)
{
    (void)state;
    test_rng r = rng_seed_salted(1, 0x3e5);
    uint32_t total = 0;
    for (int trial = 0; trial < 12; ++trial) {
        soup *sa = malloc(sizeof *sa), *sb = malloc(sizeof *sb);
        random_soup(&r, 150, 0.6f, sa);
        random_soup(&r, 120, 0.6f, sb);
        kcc_mesh *a = soup_mesh(sa), *b = soup_mesh(sb);
        const kcc_transform pa = random_pose(&r, 1.0f), pb = random_pose(&r, 1.0f);
        total += check_against_brute_force(a, &pa, b, &pb, 1e-9);
        total += check_against_brute_force(a, NULL, b, &pb, 1e-9);
        kcc_mesh_destroy(a);
        kcc_mesh_destroy(b);
        free(sa);
        free(sb);
    }
    assert_true(total > 100); /* the scenes do overlap */
}

static void a_mesh_against_itself_moved_slightly_matches_brute_force(void **state)
{
    (void)state;
    soup *s = malloc(sizeof *s);
    bumpy_grid(14, 0.3f, s);
    kcc_mesh *m = soup_mesh(s);
    kcc_transform moved = kcc_transform_identity();
    moved.position[0] = 0.011f, moved.position[1] = 0.002f, moved.position[2] = -0.007f;
    assert_true(check_against_brute_force(m, NULL, m, &moved, 1e-9) > 0);
    const kcc_transform turned = {{0.02f, 0.0f, 0.01f}, {0.0f, 0.0998334f, 0.0f, 0.9950042f}};
    assert_true(check_against_brute_force(m, &moved, m, &turned, 1e-9) > 0);
    kcc_mesh_destroy(m);
    free(s);
}

static void identical_coplanar_meshes_pair_every_triangle_with_its_touching_neighbours(void **state)
{
    (void)state;
    soup *s = malloc(sizeof *s);
    bumpy_grid(4, 0.0f, s); /* flat: every corner on y = 0 with integer x and z: exact */
    kcc_mesh *m = soup_mesh(s);
    /* each triangle meets itself, the ones sharing an edge, and those sharing a corner */
    const uint32_t n = check_against_brute_force(m, NULL, m, NULL, 0.0);
    assert_true(n > 5u * kcc_mesh_triangle_count(m));
    kcc_mesh_destroy(m);
    free(s);
}

/* Past 2^100 of placed coordinate magnitude (a mesh's extent through its matrix, plus the
 * position) node boxes are not culled, so their float projections never come near overflow: a
 * grid with one live triangle 2^80 m away, scaled by 2^41 across y and z by a non-unit rotation
 * (x = 2^20: the matrix diag(1, -2^41, -2^41), every placed corner exact), against the grid
 * shifted along x, matches the brute force (the far triangle, flattened by its placement,
 * pairs with nothing). */
static void meshes_placed_beyond_2_to_the_100_match_brute_force(void **state)
{
    (void)state;
    soup *grid = malloc(sizeof *grid), *with_far = malloc(sizeof *with_far);
    bumpy_grid(6, 0.3f, grid);
    *with_far = *grid;
    const float far = 0x1p80f, edge = 0x1p60f;
    const float tri[9] = {far, far, far, far + edge, far, far, far, far + edge, far};
    memcpy(&with_far->pos[9 * with_far->count++], tri, sizeof tri);
    kcc_mesh *a = soup_mesh(with_far), *b = soup_mesh(grid);
    const kcc_transform pa = {{0.0f, 0.0f, 0.0f}, {0x1p20f, 0.0f, 0.0f, 0.0f}};
    const kcc_transform pb = {{0.1f, 0.0f, 0.0f}, {0x1p20f, 0.0f, 0.0f, 0.0f}};
    assert_true(check_against_brute_force(a, &pa, b, &pb, 1.0) > 20);
    kcc_mesh_destroy(a);
    kcc_mesh_destroy(b);
    free(grid);
    free(with_far);
}

static void capacity_keeps_the_lowest_pairs_and_the_full_count(void **state)
{
    (void)state;
    test_rng r = rng_seed_salted(2, 0x3e5);
    soup *s = malloc(sizeof *s);
    random_soup(&r, 200, 0.8f, s);
    kcc_mesh *m = soup_mesh(s);
    const kcc_transform p = random_pose(&r, 0.3f);
    const uint32_t n = kcc_mesh_overlap_mesh(m, NULL, m, &p, g_pairs, 100000);
    assert_true(n > 20);
    kcc_tri_pair first[5];
    assert_int_equal(kcc_mesh_overlap_mesh(m, NULL, m, &p, first, 5), n);
    for (int i = 0; i < 5; ++i) {
        assert_int_equal(first[i].a, g_pairs[i].a);
        assert_int_equal(first[i].b, g_pairs[i].b);
    }
    assert_int_equal(kcc_mesh_overlap_mesh(m, NULL, m, &p, first, 1), n);
    assert_int_equal(first[0].a, g_pairs[0].a);
    assert_int_equal(kcc_mesh_overlap_mesh(m, NULL, m, &p, NULL, 7), n); /* NULL: count only */
    /* a buffer that fills on the last pair, one pair short, and half: the lowest pairs, segments
     * and all, bit for bit */
    static kcc_tri_pair some[100000];
    const uint32_t caps[3] = {n, n - 1, n / 2};
    for (int c = 0; c < 3; ++c) {
        memset(some, 0xff, sizeof some);
        assert_int_equal(kcc_mesh_overlap_mesh(m, NULL, m, &p, some, caps[c]), n);
        assert_memory_equal(some, g_pairs, caps[c] * sizeof some[0]);
        assert_int_equal(some[caps[c]].a, UINT32_MAX); /* nothing written past the capacity */
    }
    kcc_transform bad = p;
    bad.position[1] = NAN;
    assert_int_equal(kcc_mesh_overlap_mesh(m, NULL, m, &bad, first, 5), 0);
    assert_int_equal(kcc_mesh_overlap_mesh(NULL, NULL, m, NULL, first, 5), 0);
    kcc_mesh_destroy(m);
    free(s);
}

static void exact_duplicates_are_reported_as_themselves(void **state)
{
    (void)state;
    const float pos[] = {0, 0, 0, 4, 0, 0, 0, 4, 0, /* 0 */ 9, 9, 9, 10, 9, 9, 9, 10, 9, /* 1 */
                         0, 0, 0, 4, 0, 0, 0, 4, 0 /* 2: a copy of 0 */};
    kcc_mesh_desc d = {.positions = pos, .vertex_count = 9, .triangle_count = 3};
    kcc_mesh *a = NULL;
    assert_int_equal(kcc_mesh_build(&d, &a), KCC_OK);
    const float cut[] = {1, 1, -1, 1, 1, 1, 3, 1, 0};
    kcc_mesh_desc db = {.positions = cut, .vertex_count = 3, .triangle_count = 1};
    kcc_mesh *b = NULL;
    assert_int_equal(kcc_mesh_build(&db, &b), KCC_OK);
    kcc_tri_pair out[4];
    assert_int_equal(kcc_mesh_overlap_mesh(a, NULL, b, NULL, out, 4), 2);
    assert_int_equal(out[0].a, 0);
    assert_int_equal(out[1].a, 2);
    assert_int_equal(kcc_mesh_overlap_mesh(b, NULL, a, NULL, out, 4), 2);
    assert_int_equal(out[0].b, 0);
    assert_int_equal(out[1].b, 2);
    kcc_mesh_destroy(a);
    kcc_mesh_destroy(b);
}

/* ------------------------------------------------------------------------------------------------
 * Self-intersections. */

static void self_intersections_of_a_soup_match_brute_force(void **state)
{
    (void)state;
    test_rng r = rng_seed_salted(3, 0x3e5);
    soup *s = malloc(sizeof *s);
    random_soup(&r, 300, 0.7f, s); /* random corners: no two triangles share one */
    kcc_mesh *m = soup_mesh(s);
    const uint32_t n = kcc_mesh_self_intersections(m, g_pairs, 100000);
    assert_true(n > 20);
    uint32_t k = 0;
    for (uint32_t i = 0; i < s->count; ++i)
        for (uint32_t j = i + 1; j < s->count; ++j) {
            const bool listed = k < n && g_pairs[k].a == i && g_pairs[k].b == j;
            const int ref = ref_pair(m, NULL, i, m, NULL, j, 1e-9);
            if (ref != REF_UNSURE && (ref == REF_MEET) != listed)
                fail_msg("pair %u %u: reference %d, listed %d", i, j, ref, listed);
            k += listed;
        }
    assert_int_equal(k, n);
    kcc_mesh_destroy(m);
    free(s);
}

static uint32_t self_count(const float *pos, uint32_t triangles, kcc_tri_pair *out, uint32_t cap)
{
    kcc_mesh_desc d = {.positions = pos, .vertex_count = 3 * triangles, .triangle_count = triangles};
    kcc_mesh *m = NULL;
    assert_int_equal(kcc_mesh_build(&d, &m), KCC_OK);
    const uint32_t n = kcc_mesh_self_intersections(m, out, cap);
    kcc_mesh_destroy(m);
    return n;
}

static void adjacent_triangles_are_not_self_intersections_but_folds_and_cuts_are(void **state)
{
    (void)state;
    kcc_tri_pair out[8];
    /* a flat grid: neighbours share edges and corners only */
    soup *s = malloc(sizeof *s);
    bumpy_grid(5, 0.0f, s);
    assert_int_equal(self_count(s->pos, s->count, out, 8), 0);
    bumpy_grid(5, 0.4f, s);
    assert_int_equal(self_count(s->pos, s->count, out, 8), 0);
    free(s);
    /* a shared edge folded back onto one side, coplanar: they overlap */
    const float folded[] = {0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 0, 4, 0, 0, 1, 1, 0};
    assert_int_equal(self_count(folded, 2, out, 8), 1);
    /* a shared edge, bent (not coplanar): adjacent only */
    const float bent[] = {0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 0, 4, 0, 0, 1, 1, 1};
    assert_int_equal(self_count(bent, 2, out, 8), 0);
    /* a shared corner, the second triangle's edge running into the first's face (coplanar) */
    const float corner_in[] = {0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 0, 1, 1, 0, 1, 1, 3};
    assert_int_equal(self_count(corner_in, 2, out, 8), 1);
    /* a shared corner, the second leaving at once */
    const float corner_out[] = {0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 0, -1, -1, 0, -1, -1, 3};
    assert_int_equal(self_count(corner_out, 2, out, 8), 0);
    /* a shared corner, the second triangle's far edge cutting through the first */
    const float corner_cut[] = {0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 0, 1, 1, -1, 1, 1, 1};
    assert_int_equal(self_count(corner_cut, 2, out, 8), 1);
    /* the same corners in another order and winding: a duplicate face, not a cut */
    const float dup[] = {0, 0, 0, 4, 0, 0, 0, 4, 0, 4, 0, 0, 0, 0, 0, 0, 4, 0};
    assert_int_equal(self_count(dup, 2, out, 8), 0);
    /* no shared corner, crossing */
    const float cross[] = {0, 0, 0, 4, 0, 0, 0, 4, 0, 1, 1, -1, 1, 1, 1, 3, 1, 0};
    assert_int_equal(self_count(cross, 2, out, 8), 1);
    assert_int_equal(out[0].a, 0);
    assert_int_equal(out[0].b, 1);
}

/* ------------------------------------------------------------------------------------------------
 * kcc-check on hand-made levels written to a scratch directory. */

typedef struct scratch_level {
    char dir[64];
    char path[128];
} scratch_level;

/* Writes `size` bytes of data as the scratch level `name` (its extension picks the reader). */
static void scratch_level_write(scratch_level *s, const char *name, const void *data, size_t size)
{
    snprintf(s->dir, sizeof(s->dir), "/tmp/kcc_test_check_XXXXXX");
    assert_non_null(mkdtemp(s->dir));
    snprintf(s->path, sizeof(s->path), "%s/%s", s->dir, name);
    FILE *f = fopen(s->path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, size, f), size);
    fclose(f);
}

static void scratch_level_remove(const scratch_level *s)
{
    remove(s->path);
    rmdir(s->dir);
}

/* Runs kcc-check on the level file `name` holding data; returns its exit status and its report in
 * out. */
static int run_check_file(const char *name, const void *data, size_t data_size, char *out, size_t size)
{
    scratch_level s;
    scratch_level_write(&s, name, data, data_size);
    FILE *report = tmpfile(), *errors = tmpfile();
    assert_non_null(report);
    assert_non_null(errors);
    char *argv[] = {"kcc-check", s.path, NULL};
    const int rc = kcc_check_run(2, argv, report, errors);
    rewind(report);
    const size_t n = fread(out, 1, size - 1, report);
    out[n] = '\0';
    fclose(report);
    fclose(errors);
    scratch_level_remove(&s);
    return rc;
}

/* Runs kcc-check on an OBJ level's text. */
static int run_check(const char *text, char *out, size_t size)
{
    return run_check_file("level.obj", text, strlen(text), out, size);
}

static int count_lines_starting(const char *text, const char *prefix)
{
    int n = 0;
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        n += strncmp(p, prefix, strlen(prefix)) == 0;
    return n;
}

/* A closed tetrahedron (four faces) with corners p0..p3 as OBJ vertices base+1.. */
#define TETRA(x0, y0, z0, x1, y1, z1, x2, y2, z2, x3, y3, z3) \
    "v " #x0 " " #y0 " " #z0 "\nv " #x1 " " #y1 " " #z1 "\nv " #x2 " " #y2 " " #z2 "\nv " #x3 " " #y3 " " #z3 "\n"
#define TETRA_FACES(b0, b1, b2, b3) \
    "f " #b0 " " #b2 " " #b1 "\nf " #b0 " " #b1 " " #b3 "\nf " #b1 " " #b2 " " #b3 "\nf " #b2 " " #b0 " " #b3 "\n"

static void kcc_check_finds_every_planted_defect_and_nothing_else(void **state)
{
    (void)state;
    static char out[16384];
    /* clean: two separate closed tetrahedra */
    const char *clean = TETRA(0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 4) TETRA_FACES(1, 2, 3, 4)
                        TETRA(10, 0, 0, 14, 0, 0, 10, 4, 0, 10, 0, 4) TETRA_FACES(5, 6, 7, 8);
    assert_int_equal(run_check(clean, out, sizeof out), 0);
    assert_int_equal(count_lines_starting(out, "self-intersection"), 0);
    /* planted: tetrahedron 2's corner (1 1 1) pokes up through tetrahedron 1's face z = 0 (three
     * cuts: its three faces at that corner against that face; the duplicate of that face below
     * is listed as a duplicate, its cuts not again); a sliver tetrahedron (one face 0.0005 m
     * high); a lone triangle (three open edges); a degenerate triangle; and tetrahedron 1's
     * face 0 repeated with the other winding (a duplicate) */
    const char *broken = TETRA(0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 4) TETRA_FACES(1, 2, 3, 4)
        TETRA(1, 1, 1, 0.5, 0.5, -3, 2, 0.5, -3, 0.5, 2, -3) TETRA_FACES(5, 6, 7, 8)
        TETRA(20, 0, 0, 21, 0, 0, 20.5, 0.0005, 0, 20.5, 0.3, 1) TETRA_FACES(9, 10, 11, 12)
        "v 30 0 0\nv 31 0 0\nv 30 1 0\nf 13 14 15\n"
        "v 40 0 0\nv 41 0 0\nv 42 0 0\nf 16 17 18\n"
        "f 1 2 3\n";
    assert_int_equal(run_check(broken, out, sizeof out), 1);
    assert_int_equal(count_lines_starting(out, "self-intersection"), 3);
    assert_int_equal(count_lines_starting(out, "sliver"), 1);
    assert_int_equal(count_lines_starting(out, "open edge"), 3);
    assert_int_equal(count_lines_starting(out, "degenerate"), 1);
    assert_int_equal(count_lines_starting(out, "duplicate"), 1);
    assert_non_null(strstr(out, "sliver: triangle 8 "));
    assert_non_null(strstr(out, "degenerate: triangle 13 "));
    assert_non_null(strstr(out, "duplicate: triangle 14 repeats triangle 0 "));
    assert_non_null(strstr(out, "open edge: triangle 12 (30 0 0) - (31 0 0)"));
    /* bad input: exit status 2 */
    assert_int_equal(run_check("this is not a level\n", out, sizeof out), 2);
}

/* ---- a broken Quake 3 BSP, written here byte by byte --------------------------------------- */

/* A BSP of one shader (solid), one world model of `brush_count` brushes (their planes given in
 * Quake units, Z up, outward: a point inside has n . x <= d) and patches of 3 x 3 control points.
 * Lumps not written are empty. */
typedef struct bsp_writer {
    uint8_t data[32768];
    size_t  n;
} bsp_writer;

enum { BSP_ENTS = 0, BSP_SHADERS = 1, BSP_PLANES = 2, BSP_MODELS = 7, BSP_BRUSHES = 8, BSP_SIDES = 9,
       BSP_VERTS = 10, BSP_SURFS = 13 };

static void bsp_u32_at(bsp_writer *w, size_t at, uint32_t v)
{
    for (int i = 0; i < 4; ++i)
        w->data[at + (size_t)i] = (uint8_t)(v >> (8 * i));
}

static void bsp_i32(bsp_writer *w, int32_t v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    assert_true(w->n + 4 <= sizeof w->data);
    bsp_u32_at(w, w->n, u);
    w->n += 4;
}

static void bsp_f32(bsp_writer *w, float v)
{
    int32_t i;
    memcpy(&i, &v, 4);
    bsp_i32(w, i);
}

/* Lump `lump` spans from `start` to the writer's end. */
static void bsp_lump(bsp_writer *w, int lump, size_t start)
{
    bsp_u32_at(w, 8 + 8 * (size_t)lump, (uint32_t)start);
    bsp_u32_at(w, 12 + 8 * (size_t)lump, (uint32_t)(w->n - start));
}

typedef struct bsp_brush {
    float    planes[8][4];   ///< n x, n y, n z, d
    uint32_t count;
} bsp_brush;

/* The brush of box [lo, hi]. */
static bsp_brush bsp_box(const float lo[3], const float hi[3])
{
    bsp_brush b = {.count = 6};
    for (int k = 0; k < 3; ++k) {
        b.planes[2 * k][k] = -1.0f, b.planes[2 * k][3] = -lo[k];
        b.planes[2 * k + 1][k] = 1.0f, b.planes[2 * k + 1][3] = hi[k];
    }
    return b;
}

/* The brush of the tetrahedron p[0..3]: each face's plane, its normal away from the fourth
 * corner. */
static bsp_brush bsp_tetra(const double p[4][3])
{
    bsp_brush b = {.count = 4};
    for (int f = 0; f < 4; ++f) {
        const double *a = p[(f + 1) % 4], *c = p[(f + 2) % 4], *e = p[(f + 3) % 4], *away = p[f];
        double u[3], v[3], n[3];
        sub3(c, a, u), sub3(e, a, v);
        n[0] = u[1] * v[2] - u[2] * v[1], n[1] = u[2] * v[0] - u[0] * v[2], n[2] = u[0] * v[1] - u[1] * v[0];
        const double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        const double side = n[0] * (away[0] - a[0]) + n[1] * (away[1] - a[1]) + n[2] * (away[2] - a[2]);
        for (int k = 0; k < 3; ++k)
            b.planes[f][k] = (float)((side > 0.0 ? -n[k] : n[k]) / len);
        b.planes[f][3] = (float)(b.planes[f][0] * a[0] + b.planes[f][1] * a[1] + b.planes[f][2] * a[2]);
    }
    return b;
}

static void bsp_write_brushes(bsp_writer *w, const bsp_brush *brushes, uint32_t count)
{
    size_t at = w->n;
    for (uint32_t i = 0; i < count; ++i)
        for (uint32_t k = 0; k < brushes[i].count; ++k)
            for (int c = 0; c < 4; ++c)
                bsp_f32(w, brushes[i].planes[k][c]);
    bsp_lump(w, BSP_PLANES, at);
    at = w->n;
    for (uint32_t i = 0, side = 0; i < count; side += brushes[i].count, ++i) {
        bsp_i32(w, (int32_t)side);
        bsp_i32(w, (int32_t)brushes[i].count);
        bsp_i32(w, 0);
    }
    bsp_lump(w, BSP_BRUSHES, at);
    at = w->n;
    for (uint32_t i = 0, plane = 0; i < count; ++i)
        for (uint32_t k = 0; k < brushes[i].count; ++k, ++plane) {
            bsp_i32(w, (int32_t)plane);
            bsp_i32(w, 0);
        }
    bsp_lump(w, BSP_SIDES, at);
}

/* Patches of 3 x 3 control points each (9 * count corners, Quake units, row by row). */
static void bsp_write_patches(bsp_writer *w, const float (*controls)[3], uint32_t count)
{
    size_t at = w->n;
    for (uint32_t v = 0; v < 9u * count; ++v) {
        for (int k = 0; k < 3; ++k)
            bsp_f32(w, controls[v][k]);
        for (int k = 0; k < 4; ++k)
            bsp_f32(w, 0.0f);                    /* st, lightmap st */
        bsp_f32(w, 0.0f), bsp_f32(w, 0.0f), bsp_f32(w, 1.0f); /* normal: up */
        bsp_i32(w, -1);                          /* colour */
    }
    bsp_lump(w, BSP_VERTS, at);
    at = w->n;
    for (uint32_t i = 0; i < count; ++i) {
        const int32_t head[12] = {0, -1, 2, (int32_t)(9u * i), 9, 0, 0, -1, 0, 0, 0, 0};
        for (int k = 0; k < 12; ++k)
            bsp_i32(w, head[k]);
        for (int k = 0; k < 12; ++k)
            bsp_f32(w, 0.0f);                    /* lightmap origin and vectors, normal */
        bsp_i32(w, 3), bsp_i32(w, 3);            /* patch size */
    }
    bsp_lump(w, BSP_SURFS, at);
}

static void bsp_write(bsp_writer *w, const bsp_brush *brushes, uint32_t brush_count,
                      const float (*controls)[3], uint32_t patch_count)
{
    memset(w, 0, sizeof *w);
    memcpy(w->data, "IBSP", 4);
    w->n = 4;
    bsp_i32(w, 46);
    w->n = 8 + 17 * 8;
    size_t at = w->n;
    const char ent[] = "{\n\"classname\" \"worldspawn\"\n}\n";
    memcpy(w->data + w->n, ent, sizeof ent);
    w->n += (sizeof ent + 3u) / 4u * 4u;
    bsp_lump(w, BSP_ENTS, at);
    at = w->n;
    memcpy(w->data + w->n, "textures/test", 13);
    w->n += 64;
    bsp_i32(w, 0);
    bsp_i32(w, 1);                               /* contents: solid */
    bsp_lump(w, BSP_SHADERS, at);
    bsp_write_brushes(w, brushes, brush_count);
    bsp_write_patches(w, controls, patch_count);
    at = w->n;
    for (int k = 0; k < 6; ++k)
        bsp_f32(w, 0.0f);                        /* bounds: unread for the world model */
    bsp_i32(w, 0), bsp_i32(w, (int32_t)patch_count);
    bsp_i32(w, 0), bsp_i32(w, (int32_t)brush_count);
    bsp_lump(w, BSP_MODELS, at);
}

/* Every "(x y z)" point on the report's lines that start with prefix lies in [lo, hi] (metres);
 * returns how many such lines there are. */
static int lines_within(const char *report, const char *prefix, const float lo[3], const float hi[3])
{
    int lines = 0;
    for (const char *p = report; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        if (strncmp(p, prefix, strlen(prefix)) != 0)
            continue;
        ++lines;
        const char *end = strchr(p, '\n');
        int points = 0;
        for (const char *q = strchr(p, '('); q && (!end || q < end); q = strchr(q + 1, '(')) {
            float v[3];
            if (sscanf(q, "(%f %f %f)", &v[0], &v[1], &v[2]) != 3)
                continue; /* "(height ...)" */
            ++points;
            for (int k = 0; k < 3; ++k)
                assert_true(v[k] >= lo[k] && v[k] <= hi[k]);
        }
        assert_true(points >= 2);
    }
    return lines;
}

/* A BSP with one defect of each kind planted, each in its own place (Quake units; kcc-check reports
 * metres: (x, z, -y) / 32): a tetrahedron whose apex pokes 8 units up through a box's top face
 * (its three slanted faces cut that face's triangle: 3 self-intersections on y = 2 m), a
 * tetrahedron brush written twice (4 duplicates), a slab 0.02 units thick (its four sides' 8
 * triangles are slivers, 0.000625 m high), a flat patch (its 4 x 4 quads' 16 border edges are
 * open) and a patch whose control points lie on one line (its 32 triangles are degenerate); and the
 * same BSP without them: clean. */
static void kcc_check_finds_every_defect_planted_in_a_bsp_and_nothing_else(void **state)
{
    (void)state;
    static bsp_writer w;
    static char out[32768];
    const float box_lo[3] = {0, 0, 0}, box_hi[3] = {256, 256, 64};
    const double poke[4][3] = {{32, 128, 72}, {16, 112, 40}, {56, 120, 40}, {28, 148, 40}};
    const double twice[4][3] = {{420, 40, 10}, {400, 0, 0}, {460, 10, 0}, {410, 60, 0}};
    const float slab_lo[3] = {600, 0, 0}, slab_hi[3] = {664, 64, 0.02f};
    bsp_brush brushes[5] = {bsp_box(box_lo, box_hi), bsp_tetra(twice), bsp_tetra(poke),
                            bsp_tetra(twice), bsp_box(slab_lo, slab_hi)};
    float controls[18][3];
    for (int r = 0; r < 3; ++r)
        for (int q = 0; q < 3; ++q) {
            float *flat = controls[3 * r + q], *line = controls[9 + 3 * r + q];
            flat[0] = 1000.0f + 32.0f * (float)q, flat[1] = 32.0f * (float)r, flat[2] = 200.0f;
            /* on the x axis at z = 300: x = 800 + 64 u + 13 v, distinct at every tessellated point */
            line[0] = 800.0f + 32.0f * (float)q + 6.5f * (float)r, line[1] = 0.0f, line[2] = 300.0f;
        }
    bsp_write(&w, brushes, 2, NULL, 0); /* the box and one tetrahedron */
    assert_int_equal(run_check_file("clean.bsp", w.data, w.n, out, sizeof out), 0);
    bsp_write(&w, brushes, 5, (const float(*)[3])controls, 2);
    assert_int_equal(run_check_file("broken.bsp", w.data, w.n, out, sizeof out), 1);
    const float cut_lo[3] = {0.75f, 1.999f, -4.25f}, cut_hi[3] = {1.25f, 2.001f, -3.75f};
    assert_int_equal(lines_within(out, "self-intersection", cut_lo, cut_hi), 3);
    const float twice_lo[3] = {12.5f, 0.0f, -1.875f}, twice_hi[3] = {14.375f, 0.3125f, 0.0f};
    assert_int_equal(lines_within(out, "duplicate", twice_lo, twice_hi), 4);
    const float slab_m_lo[3] = {18.75f, 0.0f, -2.0f}, slab_m_hi[3] = {20.75f, 0.000625f, 0.0f};
    assert_int_equal(lines_within(out, "sliver", slab_m_lo, slab_m_hi), 8);
    const float flat_lo[3] = {31.25f, 6.25f, -2.0f}, flat_hi[3] = {33.25f, 6.25f, 0.0f};
    assert_int_equal(lines_within(out, "open edge", flat_lo, flat_hi), 16);
    const float line_lo[3] = {25.0f, 9.375f, 0.0f}, line_hi[3] = {27.41f, 9.375f, 0.0f};
    assert_int_equal(lines_within(out, "degenerate", line_lo, line_hi), 32);
    assert_non_null(strstr(out, ": 3 self-intersections, 32 degenerate, 8 slivers, 16 open edges, "
                                "4 duplicates\n"));
}

int test_group_mesh_mesh(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(coplanar_triangles_meet_where_they_overlap_and_not_apart),
        cmocka_unit_test(triangles_touching_at_an_edge_or_a_vertex_meet),
        cmocka_unit_test(crossing_triangles_report_the_segment_where_they_cut),
        cmocka_unit_test(needle_triangles_are_decided_exactly),
        cmocka_unit_test(degenerate_triangles_never_intersect),
        cmocka_unit_test(rotated_meshes_match_brute_force_over_all_pairs),
        cmocka_unit_test(a_mesh_against_itself_moved_slightly_matches_brute_force),
        cmocka_unit_test(identical_coplanar_meshes_pair_every_triangle_with_its_touching_neighbours),
        cmocka_unit_test(meshes_placed_beyond_2_to_the_100_match_brute_force),
        cmocka_unit_test(capacity_keeps_the_lowest_pairs_and_the_full_count),
        cmocka_unit_test(exact_duplicates_are_reported_as_themselves),
        cmocka_unit_test(self_intersections_of_a_soup_match_brute_force),
        cmocka_unit_test(adjacent_triangles_are_not_self_intersections_but_folds_and_cuts_are),
        cmocka_unit_test(kcc_check_finds_every_planted_defect_and_nothing_else),
        cmocka_unit_test(kcc_check_finds_every_defect_planted_in_a_bsp_and_nothing_else),
    };
    return KCC_RUN_GROUP("mesh_mesh", tests);
}
