/* mesh_mesh.c: mesh against mesh: the exact triangle/triangle test with its intersection segment
 * (every orientation sign decided exactly from the float corners), two trees descended together
 * with node pairs culled by a conservative 15-axis oriented-box test, and a mesh's
 * self-intersections. Allocates nothing: fixed traversal stacks and the caller's pair buffer. */
#include "heightfield_internal.h"
#include "kcc_world_internal.h"

/* ------------------------------------------------------------------------------------------------
 * Exact orientation signs. Corners are floats, so every product of two coordinates is exact in
 * double. A sign is first read from the double evaluation with Shewchuk's forward error bound
 * (Adaptive Precision Floating-Point Arithmetic, 1997: orient3d bound (7 + 56e) e, orient2d
 * (3 + 16e) e, e = 2^-53; rounded up here); when the value is within the bound it is evaluated
 * again exactly, as a sum of products of three (or two) floats kept as a floating-point expansion
 * (Two-Sum, Two-Product by Veltkamp splitting), whose sign is that of its largest component.
 * Float inputs keep every product far from double's overflow and underflow. */

#define ORIENT3D_BOUND 8.0e-16
#define ORIENT2D_BOUND 3.4e-16

/// A nonoverlapping expansion: components in increasing magnitude; the sum's sign is the sign of
/// the last nonzero one. 24 three-float terms of two components each at most.
typedef struct expansion {
    double c[48];
    int    n;
} expansion;

static inline void two_sum(double a, double b, double *sum, double *err)
{
    const double s = a + b, bv = s - a, av = s - bv;
    *sum = s;
    *err = (a - av) + (b - bv);
}

static inline void split(double a, double *hi, double *lo)
{
    const double c = 134217729.0 * a, big = c - a;
    *hi = c - big;
    *lo = a - *hi;
}

static inline void two_product(double a, double b, double *prod, double *err)
{
    const double p = a * b;
    double ahi, alo, bhi, blo;
    split(a, &ahi, &alo);
    split(b, &bhi, &blo);
    const double e1 = p - ahi * bhi, e2 = e1 - alo * bhi, e3 = e2 - ahi * blo;
    *prod = p;
    *err = alo * blo - e3;
}

/// Adds b exactly (Shewchuk's Grow-Expansion); zeros are left out.
static void expansion_add(expansion *e, double b)
{
    if (b == 0.0)
        return;
    double q = b;
    for (int i = 0; i < e->n; ++i) {
        double s, h;
        two_sum(q, e->c[i], &s, &h);
        e->c[i] = h;
        q = s;
    }
    e->c[e->n++] = q;
}

static int expansion_sign(const expansion *e)
{
    for (int i = e->n - 1; i >= 0; --i)
        if (e->c[i] != 0.0)
            return e->c[i] > 0.0 ? 1 : -1;
    return 0;
}

/// Adds sign * x * y * z (floats widened): x * y is exact, its product with z two components.
static void add_triple(expansion *e, double sign, double x, double y, double z)
{
    double hi, lo;
    two_product(sign * x * y, z, &hi, &lo);
    expansion_add(e, lo);
    expansion_add(e, hi);
}

/// Adds sign * det(p, q, r) (rows), its six terms.
static void add_det3(expansion *e, double sign, const float p[3], const float q[3], const float r[3])
{
    add_triple(e, sign, p[0], q[1], r[2]);
    add_triple(e, -sign, p[0], q[2], r[1]);
    add_triple(e, -sign, p[1], q[0], r[2]);
    add_triple(e, sign, p[1], q[2], r[0]);
    add_triple(e, sign, p[2], q[0], r[1]);
    add_triple(e, -sign, p[2], q[1], r[0]);
}

/// The sign of det(a - d, b - d, c - d): which side of plane abc d lies on (0: on it). *approx gets
/// the double value (proportional to d's signed distance), for interpolation only.
static int orient3d(const float a[3], const float b[3], const float c[3], const float d[3],
                    double *approx)
{
    const double adx = (double)a[0] - d[0], bdx = (double)b[0] - d[0], cdx = (double)c[0] - d[0];
    const double ady = (double)a[1] - d[1], bdy = (double)b[1] - d[1], cdy = (double)c[1] - d[1];
    const double adz = (double)a[2] - d[2], bdz = (double)b[2] - d[2], cdz = (double)c[2] - d[2];
    const double bc = bdy * cdz - bdz * cdy, ca = cdy * adz - cdz * ady, ab = ady * bdz - adz * bdy;
    const double det = adx * bc + bdx * ca + cdx * ab;
    const double permanent = (fabs(bdy * cdz) + fabs(bdz * cdy)) * fabs(adx) +
                             (fabs(cdy * adz) + fabs(cdz * ady)) * fabs(bdx) +
                             (fabs(ady * bdz) + fabs(adz * bdy)) * fabs(cdx);
    if (approx)
        *approx = det;
    if (fabs(det) > ORIENT3D_BOUND * permanent)
        return det > 0.0 ? 1 : -1;
    /* det(a-d, b-d, c-d) = det(a,b,c) - det(d,b,c) - det(a,d,c) - det(a,b,d) (multilinearity) */
    expansion e = {.n = 0};
    add_det3(&e, 1.0, a, b, c);
    add_det3(&e, -1.0, d, b, c);
    add_det3(&e, -1.0, a, d, c);
    add_det3(&e, -1.0, a, b, d);
    return expansion_sign(&e);
}

/// The sign of det(a - c, b - c) of three points projected on axes u, v: which side of the line ab
/// c lies on (0: on it).
static int orient2d(const float a[3], const float b[3], const float c[3], int u, int v)
{
    const double left = ((double)a[u] - c[u]) * ((double)b[v] - c[v]);
    const double right = ((double)a[v] - c[v]) * ((double)b[u] - c[u]);
    const double det = left - right;
    if (fabs(det) > ORIENT2D_BOUND * (fabs(left) + fabs(right)))
        return det > 0.0 ? 1 : -1;
    /* det(a-c, b-c) = det(a,b) - det(a,c) - det(c,b): six exact products */
    expansion e = {.n = 0};
    expansion_add(&e, (double)a[u] * b[v]);
    expansion_add(&e, -(double)a[v] * b[u]);
    expansion_add(&e, -(double)a[u] * c[v]);
    expansion_add(&e, (double)a[v] * c[u]);
    expansion_add(&e, -(double)c[u] * b[v]);
    expansion_add(&e, (double)c[v] * b[u]);
    return expansion_sign(&e);
}

/* ------------------------------------------------------------------------------------------------
 * Triangle against triangle. Two closed triangles meet exactly when an edge of one meets the
 * other: their intersection is convex (a segment on the planes' common line, or a coplanar
 * polygon), and its extreme points lie on the boundary of one of them. So six edge/triangle tests
 * decide, each from exact signs: the edge's ends against the plane, then (crossing) the line's
 * sides against the three edges, or (an edge in the plane) a 2D test in the triangle's projection.
 * The points found on the way (double) are the intersection's extreme points; the segment is
 * the farthest pair of them. */

/// Contact points gathered by one triangle pair: at most two per edge test.
typedef struct contact_points {
    double p[12][3];
    int    n;
} contact_points;

static void points_add(contact_points *pts, const float p[3], const float q[3], double t)
{
    if (!pts || pts->n >= 12)
        return;
    t = t < 0.0 ? 0.0 : t > 1.0 ? 1.0 : t;
    for (int k = 0; k < 3; ++k)
        pts->p[pts->n][k] = (double)p[k] + t * ((double)q[k] - p[k]);
    pts->n++;
}

/// The axis to drop when projecting triangle t onto a coordinate plane: one where its normal's
/// component is exactly nonzero (the largest in double among those), or -1 (degenerate).
static int drop_axis(const float *const t[3])
{
    int best = -1;
    double best_mag = -1.0;
    for (int k = 0; k < 3; ++k) {
        const int u = (k + 1) % 3, v = (k + 2) % 3;
        if (orient2d(t[0], t[1], t[2], u, v) == 0)
            continue;
        const double mag = fabs(((double)t[1][u] - t[0][u]) * ((double)t[2][v] - t[0][v]) -
                                ((double)t[1][v] - t[0][v]) * ((double)t[2][u] - t[0][u]));
        if (mag > best_mag)
            best = k, best_mag = mag;
    }
    return best;
}

/// Exact: p in the closed triangle t, all in the projection on axes u, v.
static bool inside2d(const float p[3], const float *const t[3], int u, int v)
{
    const int s0 = orient2d(t[0], t[1], p, u, v), s1 = orient2d(t[1], t[2], p, u, v);
    const int s2 = orient2d(t[2], t[0], p, u, v);
    return !((s0 < 0 || s1 < 0 || s2 < 0) && (s0 > 0 || s1 > 0 || s2 > 0));
}

/// Exact: closed segments pq and rs meet, in the projection on axes u, v.
static bool segments_meet2d(const float p[3], const float q[3], const float r[3], const float s[3],
                            int u, int v)
{
    const int o1 = orient2d(p, q, r, u, v), o2 = orient2d(p, q, s, u, v);
    const int o3 = orient2d(r, s, p, u, v), o4 = orient2d(r, s, q, u, v);
    if (o1 == 0 && o2 == 0) { /* collinear: the intervals along the line overlap */
        for (int k = 0; k < 2; ++k) {
            const int a = k == 0 ? u : v;
            const float lo1 = fminf(p[a], q[a]), hi1 = fmaxf(p[a], q[a]);
            const float lo2 = fminf(r[a], s[a]), hi2 = fmaxf(r[a], s[a]);
            if (lo1 > hi2 || lo2 > hi1)
                return false;
        }
        return true;
    }
    return o1 * o2 <= 0 && o3 * o4 <= 0;
}

/// The part of segment pq inside triangle t (both in t's plane), as a parameter range of pq:
/// clipped by t's three edge lines in double, for the contact points only.
static void clip2d(const float p[3], const float q[3], const float *const t[3], int u, int v,
                   double range[2])
{
    const double area = ((double)t[1][u] - t[0][u]) * ((double)t[2][v] - t[0][v]) -
                        ((double)t[1][v] - t[0][v]) * ((double)t[2][u] - t[0][u]);
    const double side = area > 0.0 ? 1.0 : -1.0;
    double lo = 0.0, hi = 1.0;
    for (int i = 0; i < 3; ++i) {
        const float *e0 = t[i], *e1 = t[(i + 1) % 3];
        const double ex = (double)e1[u] - e0[u], ey = (double)e1[v] - e0[v];
        const double fp = side * (ex * ((double)p[v] - e0[v]) - ey * ((double)p[u] - e0[u]));
        const double fq = side * (ex * ((double)q[v] - e0[v]) - ey * ((double)q[u] - e0[u]));
        if (fp < 0.0 && fq >= 0.0)
            lo = fmax(lo, fp / (fp - fq));
        else if (fq < 0.0 && fp >= 0.0)
            hi = fmin(hi, fp / (fp - fq));
    }
    if (lo > hi) /* rounding emptied a range the exact test found: keep its middle */
        lo = hi = 0.5 * (lo + hi);
    range[0] = lo, range[1] = hi;
}

/// Exact: segment pq (in t's plane) meets triangle t; its contact points go to pts.
static bool coplanar_edge_meets(const float p[3], const float q[3], const float *const t[3],
                                contact_points *pts)
{
    const int k = drop_axis(t);
    if (k < 0)
        return false;
    const int u = (k + 1) % 3, v = (k + 2) % 3;
    bool hit = inside2d(p, t, u, v) || inside2d(q, t, u, v);
    for (int i = 0; i < 3 && !hit; ++i)
        hit = segments_meet2d(p, q, t[i], t[(i + 1) % 3], u, v);
    if (hit && pts) {
        double range[2];
        clip2d(p, q, t, u, v, range);
        points_add(pts, p, q, range[0]);
        points_add(pts, p, q, range[1]);
    }
    return hit;
}

/// Relative bound of the double filters below (plane_sides, line_sides): a triple product
/// (a x b) . c of differences of floats, every difference and product rounded once in double, is
/// within a few roundings of each of its nine terms; 32 units of 2^-53 of the sum of their
/// magnitudes covers it with room. Values within the bound are decided by orient3d exactly.
#define PLANE_FILTER_BOUND 3.6e-15

/// Which side of the line pq each edge of t passes: o[i] = orient3d(p, q, t[i], t[i + 1]) in sign.
/// All three are the triple products det(q - p, t[i] - p, t[i + 1] - p) (orient3d's value negated),
/// from the three crosses (q - p) x (t[i] - p) shared by two edges each.
static void line_sides(const float p[3], const float q[3], const float *const t[3], int o[3])
{
    double u[3], w[3][3], c[3][3], mag[3][3];
    for (int k = 0; k < 3; ++k) {
        u[k] = (double)q[k] - p[k];
        for (int i = 0; i < 3; ++i)
            w[i][k] = (double)t[i][k] - p[k];
    }
    for (int i = 0; i < 3; ++i)
        for (int k = 0; k < 3; ++k) {
            const int a = (k + 1) % 3, b = (k + 2) % 3;
            c[i][k] = u[a] * w[i][b] - u[b] * w[i][a];
            mag[i][k] = fabs(u[a] * w[i][b]) + fabs(u[b] * w[i][a]);
        }
    for (int i = 0; i < 3; ++i) {
        const int j = (i + 1) % 3;
        const double v = -(c[i][0] * w[j][0] + c[i][1] * w[j][1] + c[i][2] * w[j][2]);
        const double bound = PLANE_FILTER_BOUND * (mag[i][0] * fabs(w[j][0]) +
                                                   mag[i][1] * fabs(w[j][1]) +
                                                   mag[i][2] * fabs(w[j][2]));
        o[i] = v > bound ? 1 : v < -bound ? -1 : orient3d(p, q, t[i], t[j], NULL);
    }
}

/// Exact: edge pq meets triangle t, given the sides sp, sq of p and q against t's plane and their
/// double values dp, dq (for the crossing point).
static bool edge_meets(const float p[3], const float q[3], int sp, int sq, double dp, double dq,
                       const float *const t[3], contact_points *pts)
{
    if (sp == sq && sp != 0)
        return false;
    if (sp == 0 && sq == 0)
        return coplanar_edge_meets(p, q, t, pts);
    int o[3];
    line_sides(p, q, t, o);
    if ((o[0] < 0 || o[1] < 0 || o[2] < 0) && (o[0] > 0 || o[1] > 0 || o[2] > 0))
        return false;
    points_add(pts, p, q, sp == 0 ? 0.0 : sq == 0 ? 1.0 : dp / (dp - dq));
    return true;
}

/// A triangle's normal n = (t1 - t0) x (t2 - t0) in double and, per component, the magnitudes of
/// its two products (for plane_sides' rounding bound): computed once per placed triangle.
typedef struct tri_plane {
    double n[3];
    double mag[3];
} tri_plane;

static void plane_of(const float *const t[3], tri_plane *out)
{
    double e1[3], e2[3];
    for (int k = 0; k < 3; ++k)
        e1[k] = (double)t[1][k] - t[0][k], e2[k] = (double)t[2][k] - t[0][k];
    for (int k = 0; k < 3; ++k) {
        const int a = (k + 1) % 3, b = (k + 2) % 3;
        out->n[k] = e1[a] * e2[b] - e1[b] * e2[a];
        out->mag[k] = fabs(e1[a] * e2[b]) + fabs(e1[b] * e2[a]);
    }
}

/// The sides of triangle s's corners against triangle t's plane (tp: plane_of(t)), in orient3d's
/// sign (dist: its double value, for interpolation only); false when all three are strictly on
/// one side (no contact possible). Each side comes from the double normal where that is clear of
/// its rounding bound, else from orient3d's exact evaluation.
static bool plane_sides(const float *const t[3], const tri_plane *tp, const float *const s[3],
                        int side[3], double dist[3])
{
    for (int i = 0; i < 3; ++i) {
        const double d[3] = {(double)s[i][0] - t[0][0], (double)s[i][1] - t[0][1],
                             (double)s[i][2] - t[0][2]};
        /* orient3d(t0, t1, t2, p) = det(t0 - p, t1 - p, t2 - p) = -n . (p - t0) */
        const double v = -(tp->n[0] * d[0] + tp->n[1] * d[1] + tp->n[2] * d[2]);
        const double bound = PLANE_FILTER_BOUND * (tp->mag[0] * fabs(d[0]) +
                                                   tp->mag[1] * fabs(d[1]) +
                                                   tp->mag[2] * fabs(d[2]));
        if (fabs(v) > bound) {
            side[i] = v > 0.0 ? 1 : -1;
            dist[i] = v;
        } else {
            side[i] = orient3d(t[0], t[1], t[2], s[i], &dist[i]);
        }
    }
    return !((side[0] > 0 && side[1] > 0 && side[2] > 0) ||
             (side[0] < 0 && side[1] < 0 && side[2] < 0));
}

/// The corner alone on its side of the other triangle's plane (no side zero, not all equal).
static int lone_corner(const int side[3])
{
    return side[1] == side[2] ? 0 : side[0] == side[2] ? 1 : 2;
}

/// Where edge p q of a triangle crosses the other plane, from the ends' double values d.
static void crossing(const float p[3], const float q[3], double dp, double dq, double out[3])
{
    const double t = dp / (dp - dq);
    for (int k = 0; k < 3; ++k)
        out[k] = (double)p[k] + t * ((double)q[k] - p[k]);
}

/// Two triangles that each straddle the other's plane strictly (no corner on it): Guigue and
/// Devillers' test (Fast and robust triangle-triangle overlap test using orientation predicates,
/// 2003). With p1 the corner of a alone on its side of b's plane and p2 likewise, both made to lie
/// above the other's plane (orient3d > 0, by swapping the other two corners), the triangles meet
/// exactly when orient3d(p1, q1, p2, q2) <= 0 and orient3d(p1, r1, r2, p2) <= 0: the two
/// intervals where they cross the planes' common line overlap. Contact points: the overlap's
/// ends, among the four crossings of the edges leaving p1 and p2, ordered along that line.
static bool straddling_pair(const float *const a[3], const int sa[3], const double da[3],
                            const float *const b[3], const int sb[3], const double db[3],
                            const tri_plane *pa, const tri_plane *pb, contact_points *pts)
{
    const int i = lone_corner(sa), j = lone_corner(sb);
    int qa = (i + 1) % 3, ra = (i + 2) % 3, qb = (j + 1) % 3, rb = (j + 2) % 3;
    if (sa[i] < 0) { /* p1 below b's plane: b's other two swapped turn it over */
        const int t = qb;
        qb = rb, rb = t;
    }
    if (sb[j] < 0) {
        const int t = qa;
        qa = ra, ra = t;
    }
    if (orient3d(a[i], a[qa], b[j], b[qb], NULL) > 0 || orient3d(a[i], a[ra], b[rb], b[j], NULL) > 0)
        return false;
    if (!pts)
        return true;
    double c[4][3], along[4];
    crossing(a[i], a[qa], da[i], da[qa], c[0]);
    crossing(a[i], a[ra], da[i], da[ra], c[1]);
    crossing(b[j], b[qb], db[j], db[qb], c[2]);
    crossing(b[j], b[rb], db[j], db[rb], c[3]);
    const double *na = pa->n, *nb = pb->n;
    const double dir[3] = {na[1] * nb[2] - na[2] * nb[1], na[2] * nb[0] - na[0] * nb[2],
                           na[0] * nb[1] - na[1] * nb[0]};
    for (int k = 0; k < 4; ++k)
        along[k] = dir[0] * c[k][0] + dir[1] * c[k][1] + dir[2] * c[k][2];
    /* the overlap of [min, max] of crossings 0, 1 and of crossings 2, 3 */
    const int lo_a = along[0] <= along[1] ? 0 : 1, lo_b = along[2] <= along[3] ? 2 : 3;
    const int lo = along[lo_a] >= along[lo_b] ? lo_a : lo_b;
    const int hi_a = 1 - lo_a, hi_b = 5 - lo_b;
    const int hi = along[hi_a] <= along[hi_b] ? hi_a : hi_b;
    for (int e = 0; e < 2 && pts->n < 12; ++e, ++pts->n)
        memcpy(pts->p[pts->n], c[e == 0 ? lo : hi], sizeof pts->p[0]);
    return true;
}

/// Exact test of two live triangles with their planes; with pts, gathers the contact points of all
/// six edge tests (without, it stops at the first contact).
static bool tri_tri(const float *const a[3], const tri_plane *pa, const float *const b[3],
                    const tri_plane *pb, contact_points *pts)
{
    int sa[3], sb[3];
    double da[3], db[3];
    if (!plane_sides(b, pb, a, sa, da) || !plane_sides(a, pa, b, sb, db))
        return false;
    if (sa[0] && sa[1] && sa[2] && sb[0] && sb[1] && sb[2])
        return straddling_pair(a, sa, da, b, sb, db, pa, pb, pts);
    bool hit = false;
    for (int i = 0; i < 3 && (pts || !hit); ++i) {
        const int j = (i + 1) % 3;
        hit |= edge_meets(a[i], a[j], sa[i], sa[j], da[i], da[j], b, pts);
    }
    for (int i = 0; i < 3 && (pts || !hit); ++i) {
        const int j = (i + 1) % 3;
        hit |= edge_meets(b[i], b[j], sb[i], sb[j], db[i], db[j], a, pts);
    }
    return hit;
}

/// The farthest pair of the contact points (both the one point when there is one), in float.
static void points_segment(const contact_points *pts, float out[2][3])
{
    int bi = 0, bj = 0;
    double best = -1.0;
    for (int i = 0; i < pts->n; ++i)
        for (int j = i; j < pts->n; ++j) {
            double d = 0.0;
            for (int k = 0; k < 3; ++k)
                d += (pts->p[i][k] - pts->p[j][k]) * (pts->p[i][k] - pts->p[j][k]);
            if (d > best)
                best = d, bi = i, bj = j;
        }
    for (int k = 0; k < 3; ++k) {
        out[0][k] = pts->n ? (float)pts->p[bi][k] : 0.0f;
        out[1][k] = pts->n ? (float)pts->p[bj][k] : 0.0f;
    }
}

/// tri_tri with the segment written to out (when not NULL).
static bool tri_tri_segment(const float *const a[3], const tri_plane *pa, const float *const b[3],
                            const tri_plane *pb, float out[2][3])
{
    if (!out)
        return tri_tri(a, pa, b, pb, NULL);
    contact_points pts;
    pts.n = 0;
    if (!tri_tri(a, pa, b, pb, &pts))
        return false;
    points_segment(&pts, out);
    return true;
}

bool kcc_tri_intersect_tri(const vec3 a0, const vec3 a1, const vec3 a2, const vec3 b0,
                           const vec3 b1, const vec3 b2, vec3 out_segment[2])
{
    if (!a0 || !a1 || !a2 || !b0 || !b1 || !b2 || kcc_tri_is_degenerate(a0, a1, a2) ||
        kcc_tri_is_degenerate(b0, b1, b2))
        return false;
    const float *const a[3] = {a0, a1, a2}, *const b[3] = {b0, b1, b2};
    tri_plane pa, pb;
    plane_of(a, &pa);
    plane_of(b, &pb);
    float seg[2][3];
    if (!tri_tri_segment(a, &pa, b, &pb, out_segment ? seg : NULL))
        return false;
    if (out_segment)
        for (int k = 0; k < 3; ++k)
            out_segment[0][k] = seg[0][k], out_segment[1][k] = seg[1][k];
    return true;
}

/* ------------------------------------------------------------------------------------------------
 * Self-intersections: two triangles of one mesh that share corners (equal coordinates) always
 * meet there; they cut each other only when they meet somewhere else as well. */

/// Shared edge u v, third corners a (of ta) and b: the two meet beyond the edge exactly when they
/// are coplanar and fold onto one side of it.
static bool shared_edge_folds(const float *const ta[3], const float *u, const float *v,
                              const float *a, const float *b)
{
    if (orient3d(ta[0], ta[1], ta[2], b, NULL) != 0)
        return false;
    const int k = drop_axis(ta);
    if (k < 0)
        return false;
    return orient2d(u, v, a, (k + 1) % 3, (k + 2) % 3) == orient2d(u, v, b, (k + 1) % 3, (k + 2) % 3);
}

/// Edge from t's corner iv (the shared corner) to o, in t's plane: it enters t beyond the corner
/// exactly when o's direction lies in t's closed wedge there.
static bool edge_enters_wedge(const float *const t[3], int iv, const float o[3])
{
    const int k = drop_axis(t);
    if (k < 0)
        return false;
    const int u = (k + 1) % 3, v = (k + 2) % 3;
    const float *c = t[iv], *n1 = t[(iv + 1) % 3], *n2 = t[(iv + 2) % 3];
    const int s = orient2d(c, n1, n2, u, v);
    return orient2d(c, n1, o, u, v) * s >= 0 && orient2d(c, o, n2, u, v) * s >= 0;
}

/// One shared corner, s's corner is (and t's corner it): s's edges against t meet t beyond it.
static bool edges_meet_beyond(const float *const s[3], int is, const int side[3],
                              const double dist[3], const float *const t[3], int it)
{
    const int j = (is + 1) % 3, k = (is + 2) % 3;
    if (edge_meets(s[j], s[k], side[j], side[k], dist[j], dist[k], t, NULL))
        return true;
    return (side[j] == 0 && edge_enters_wedge(t, it, s[j])) ||
           (side[k] == 0 && edge_enters_wedge(t, it, s[k]));
}

/// Exact: live triangles a and b of one mesh cut each other (meet other than only at the corners
/// or the edge they share). Triangles with the same three corners are duplicate faces, not cuts.
static bool self_pair_cuts(const float *const a[3], const tri_plane *pa, const float *const b[3],
                           const tri_plane *pb)
{
    int ia = -1, ib = -1, shared = 0, ia2 = -1, ib2 = -1;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            if (a[i][0] == b[j][0] && a[i][1] == b[j][1] && a[i][2] == b[j][2]) {
                if (shared++ == 0)
                    ia = i, ib = j;
                else
                    ia2 = i, ib2 = j;
            }
    if (shared == 0)
        return tri_tri(a, pa, b, pb, NULL);
    if (shared >= 3)
        return false;
    if (shared == 2) {
        (void)ib2;
        return shared_edge_folds(a, a[ia], a[ia2], a[3 - ia - ia2], b[3 - ib - ib2]);
    }
    int sa[3], sb[3];
    double da[3], db[3];
    if (!plane_sides(b, pb, a, sa, da) || !plane_sides(a, pa, b, sb, db))
        return false;
    return edges_meet_beyond(a, ia, sa, da, b, ib) || edges_meet_beyond(b, ib, sb, db, a, ia);
}

/* ------------------------------------------------------------------------------------------------
 * The pair output: the caller's buffer keeps the `capacity` smallest (a, b) pairs seen, sorted
 * ascending at the end. Pairs are appended while they fit; the first one that does not turn the
 * buffer into a bounded max-heap, which from then on keeps the smallest. No allocation, any
 * visiting order: the pairs are distinct, so every order sorts them the same. */

typedef struct pair_sink {
    kcc_tri_pair *out;
    uint32_t      capacity;
    uint32_t      stored;
    uint32_t      count;       ///< every pair found (saturates at UINT32_MAX)
    bool          heap;        ///< out[0, stored) is a max-heap (the buffer has filled)
} pair_sink;

static inline bool pair_less(const kcc_tri_pair *x, const kcc_tri_pair *y)
{
    return x->a < y->a || (x->a == y->a && x->b < y->b);
}

static inline void pair_swap(kcc_tri_pair *x, kcc_tri_pair *y)
{
    const kcc_tri_pair tmp = *x;
    *x = *y, *y = tmp;
}

static void heap_sift_down(kcc_tri_pair *h, uint32_t n, uint32_t i)
{
    for (;;) {
        uint32_t big = i, l = 2 * i + 1, r = l + 1;
        if (l < n && pair_less(&h[big], &h[l]))
            big = l;
        if (r < n && pair_less(&h[big], &h[r]))
            big = r;
        if (big == i)
            return;
        pair_swap(&h[i], &h[big]);
        i = big;
    }
}

static void heap_make(kcc_tri_pair *h, uint32_t n)
{
    for (uint32_t i = n / 2; i > 0; --i)
        heap_sift_down(h, n, i - 1);
}

/// A max-heap of n pairs sorted ascending in place.
static void heap_sort(kcc_tri_pair *h, uint32_t n)
{
    for (uint32_t end = n; end > 1; --end) {
        pair_swap(&h[0], &h[end - 1]);
        heap_sift_down(h, end - 1, 0);
    }
}

/// Sorts n pairs ascending in place: quicksort (median of three, the smaller side first, so the
/// recursion is at most log2 n deep), heapsort past `depth` splits, insertion sort below 16.
static void pairs_sort(kcc_tri_pair *p, uint32_t n, int depth)
{
    while (n > 16) {
        if (depth-- == 0) {
            heap_make(p, n);
            heap_sort(p, n);
            return;
        }
        const uint32_t mid = n / 2;
        if (pair_less(&p[mid], &p[0]))
            pair_swap(&p[mid], &p[0]);
        if (pair_less(&p[n - 1], &p[mid]))
            pair_swap(&p[n - 1], &p[mid]);
        if (pair_less(&p[mid], &p[0]))
            pair_swap(&p[mid], &p[0]);
        const kcc_tri_pair pivot = p[mid];
        uint32_t i = 0, j = n - 1;
        for (;;) { /* Hoare: p[0] <= pivot <= p[n - 1] keep both scans in range */
            while (pair_less(&p[i], &pivot))
                ++i;
            while (pair_less(&pivot, &p[j]))
                --j;
            if (i >= j)
                break;
            pair_swap(&p[i++], &p[j--]);
        }
        const uint32_t left = j + 1; /* p[0, left) <= pivot <= p[left, n) */
        if (left < n - left) {
            pairs_sort(p, left, depth);
            p += left, n -= left;
        } else {
            pairs_sort(p + left, n - left, depth);
            n = left;
        }
    }
    for (uint32_t i = 1; i < n; ++i) {
        const kcc_tri_pair x = p[i];
        uint32_t j = i;
        for (; j > 0 && pair_less(&x, &p[j - 1]); --j)
            p[j] = p[j - 1];
        p[j] = x;
    }
}

static void sink_add(pair_sink *sink, uint32_t a, uint32_t b, float seg[2][3])
{
    if (sink->count < UINT32_MAX)
        sink->count++;
    if (sink->capacity == 0)
        return;
    kcc_tri_pair p = {.a = a, .b = b};
    for (int k = 0; k < 3; ++k)
        p.segment[0][k] = seg[0][k], p.segment[1][k] = seg[1][k];
    kcc_tri_pair *h = sink->out;
    if (sink->stored < sink->capacity) {
        h[sink->stored++] = p;
        return;
    }
    if (!sink->heap) {
        heap_make(h, sink->stored);
        sink->heap = true;
    }
    if (pair_less(&p, &h[0])) {
        h[0] = p;
        heap_sift_down(h, sink->stored, 0);
    }
}

static void sink_finish(pair_sink *sink)
{
    if (sink->heap)
        heap_sort(sink->out, sink->stored);
    else
        pairs_sort(sink->out, sink->stored, 64);
}

/* ------------------------------------------------------------------------------------------------
 * The two trees descended together. Each mesh's local node box placed by its pose is the
 * parallelepiped {M c + t + M h s : |s_j| <= 1}; its projection on any axis L is centred at
 * L . (M c + t) with radius sum_j |L . M_j| h_j, for any matrix M (a unit quaternion's or not).
 * The axes are the unit columns of both matrices and their nine unit cross products (the 15 of
 * the OBB test; only the three when both matrices are equal): fixed per query, so each axis's
 * row L M (whose magnitudes are the |L . M_j|) and offset L . t are computed once (in double,
 * kept in float), and a local box's projection costs two three-term dot products, (L M) . c +
 * L . t and |L M| . h. A node's four children are tested together in float, four lanes at once,
 * until no lane is left. A pair is culled only when some axis separates the projections by more
 * than `slack`, 2^-16 of both sides' coordinate magnitudes S (corners times the matrix, plus the
 * position), which covers the float placement of the corners (kcc_pose_point rounds each
 * coordinate four times) and the float rounding of the test itself (every value it sums is at
 * most S, and each is rounded a few times at 2^-24): culling never drops a pair the exact
 * triangle test would report (rotated_meshes_match_brute_force_over_all_pairs). Past S = 2^100
 * nothing is culled, so no sum comes near float's overflow. */

#define MM_MAX_AXES 16 /* 15, and a zero lane: four axes at a time */
/// Pending node pairs: each opening pushes at most four, and a path opens at most the depth of
/// both trees.
#define MM_STACK (3 * 2 * KCC_TREE_MAX_DEPTH + 8)

typedef struct mm_node {
    uint32_t first, count;     ///< as a kcc_node4 lane: a leaf when count > 0
    float    center[3];        ///< m, local centre
    float    half[3];          ///< m, local half extents
} mm_node;

/// Whether a placed triangle is live (placement can flatten a sliver): decided, with its plane,
/// the first time its bounds meet another's.
typedef enum mm_tri_state { MM_TRI_UNDECIDED, MM_TRI_LIVE, MM_TRI_DEAD } mm_tri_state;

/// One side's placed leaf: its triangles placed in float (kcc_pose_point), their bounds, and
/// once decided, whether each is live and its plane.
typedef struct mm_leaf {
    uint32_t  first, count;
    float     v[KCC_LEAF_MAX][3][3];
    float     lo[3][KCC_LEAF_MAX], hi[3][KCC_LEAF_MAX];   ///< bounds, axis by axis
    tri_plane plane[KCC_LEAF_MAX];
    uint8_t   state[KCC_LEAF_MAX];   ///< mm_tri_state
} mm_leaf;

/// Placed leaves kept per side, by leaf (direct-mapped on its first slot): a leaf meets several
/// leaves of the other side, mostly close together in the walk, and is placed again only when
/// another leaf has taken its place.
#define MM_LEAF_CACHE_BITS 4
#define MM_LEAF_CACHE (1 << MM_LEAF_CACHE_BITS)

typedef struct mm_query {
    const kcc_mesh *mesh[2];
    kcc_pose        pose[2];
    float           row[2][3][MM_MAX_AXES];     ///< component j of axis L's row L M, per side
    float           reach[2][3][MM_MAX_AXES];   ///< |L . column j| of each side's matrix
    float           splat[2][MM_MAX_AXES][6][4]; ///< row, then reach, each value four times
    float           offset[2][MM_MAX_AXES];     ///< L . t, per side
    int             axis_count;
    float           slack;                      ///< m
    bool            cull;                       ///< S is at most 2^100: nodes are culled
    bool            self;                       ///< one mesh against itself (a < b pairs)
    mm_leaf         leaf[2][MM_LEAF_CACHE];     ///< placed leaves of each side
    pair_sink       sink;
} mm_query;

static bool pose_from(const kcc_transform *t, kcc_pose *out)
{
    const kcc_transform id = kcc_transform_identity();
    if (!t)
        t = &id;
    for (int k = 0; k < 4; ++k)
        if (!isfinite(t->rotation[k]) || (k < 3 && !isfinite(t->position[k])))
            return false;
    kcc_pose_set(out, t);
    return true;
}

/// Adds axis L when it is not (nearly) zero, normalised, with each side's reach along it.
static void add_axis(mm_query *q, const double l[3])
{
    const double len = sqrt(l[0] * l[0] + l[1] * l[1] + l[2] * l[2]);
    if (!(len > 1e-6))
        return;
    const int n = q->axis_count++;
    const double axis[3] = {l[0] / len, l[1] / len, l[2] / len};
    for (int s = 0; s < 2; ++s) {
        const kcc_pose *pose = &q->pose[s];
        for (int j = 0; j < 3; ++j) {
            const double row = axis[0] * pose->m[0][j] + axis[1] * pose->m[1][j] +
                               axis[2] * pose->m[2][j];
            q->row[s][j][n] = (float)row, q->reach[s][j][n] = (float)fabs(row);
            for (int lane = 0; lane < 4; ++lane) {
                q->splat[s][n][j][lane] = q->row[s][j][n];
                q->splat[s][n][3 + j][lane] = q->reach[s][j][n];
            }
        }
        q->offset[s][n] = (float)(axis[0] * pose->transform.position[0] +
                                  axis[1] * pose->transform.position[1] +
                                  axis[2] * pose->transform.position[2]);
    }
}

/// The largest magnitude a side's placed coordinates reach (m): its corners' scale through the
/// matrix, plus the position.
static double side_scale(const kcc_mesh *mesh, const kcc_pose *pose)
{
    double row = 0.0, pos = 0.0;
    for (int i = 0; i < 3; ++i) {
        row = fmax(row, fabs(pose->m[i][0]) + fabs(pose->m[i][1]) + fabs(pose->m[i][2]));
        pos = fmax(pos, fabs(pose->transform.position[i]));
    }
    return (double)mesh->coord_scale * row + pos;
}

static void setup_axes(mm_query *q)
{
    double col[2][3][3];
    for (int s = 0; s < 2; ++s)
        for (int j = 0; j < 3; ++j)
            for (int k = 0; k < 3; ++k)
                col[s][j][k] = q->pose[s].m[k][j];
    const bool same = memcmp(q->pose[0].m, q->pose[1].m, sizeof(q->pose[0].m)) == 0;
    memset(q->row, 0, sizeof q->row), memset(q->reach, 0, sizeof q->reach);
    memset(q->offset, 0, sizeof q->offset);
    q->axis_count = 0;
    for (int s = 0; s < (same ? 1 : 2); ++s)
        for (int j = 0; j < 3; ++j)
            add_axis(q, col[s][j]);
    for (int i = 0; i < 3 && !same; ++i)
        for (int j = 0; j < 3; ++j) {
            const double *u = col[0][i], *v = col[1][j];
            const double c[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2],
                                 u[0] * v[1] - u[1] * v[0]};
            add_axis(q, c);
        }
    const double scale = side_scale(q->mesh[0], &q->pose[0]) + side_scale(q->mesh[1], &q->pose[1]);
    q->slack = (float)(0x1p-16 * scale + 0x1p-100);
    q->cull = scale <= 0x1p100;
}

/// A node from a local box: its centre and half extents (local; halved in double, then rounded).
static void node_set(mm_node *n, uint32_t first, uint32_t count, const float lo[3],
                     const float hi[3])
{
    n->first = first, n->count = count;
    for (int k = 0; k < 3; ++k) {
        n->center[k] = (float)(0.5 * ((double)lo[k] + (double)hi[k]));
        n->half[k] = (float)(0.5 * ((double)hi[k] - (double)lo[k]));
    }
}

/// Side o's node n projected on every axis, as seen from the other side s: off[k] = L . t_s minus
/// the node's centre, rad[k] its radius plus the slack (four axes at a time; the SSE path and
/// the scalar one evaluate the same expressions in the same order).
static void node_project(const mm_query *q, int o, const mm_node *n, float off[MM_MAX_AXES],
                         float rad[MM_MAX_AXES])
{
    const float(*row)[MM_MAX_AXES] = q->row[o], (*reach)[MM_MAX_AXES] = q->reach[o];
    const float *own = q->offset[o], *seen = q->offset[1 - o];
    for (int k = 0; k < q->axis_count; k += 4) {
#if KCC_SSE
        __m128 proj = _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(&row[0][k]), _mm_set1_ps(n->center[0])),
                                 _mm_mul_ps(_mm_loadu_ps(&row[1][k]), _mm_set1_ps(n->center[1])));
        proj = _mm_add_ps(_mm_add_ps(proj, _mm_mul_ps(_mm_loadu_ps(&row[2][k]),
                                                      _mm_set1_ps(n->center[2]))),
                          _mm_loadu_ps(&own[k]));
        __m128 size = _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(&reach[0][k]), _mm_set1_ps(n->half[0])),
                                 _mm_mul_ps(_mm_loadu_ps(&reach[1][k]), _mm_set1_ps(n->half[1])));
        size = _mm_add_ps(_mm_add_ps(size, _mm_mul_ps(_mm_loadu_ps(&reach[2][k]),
                                                      _mm_set1_ps(n->half[2]))),
                          _mm_set1_ps(q->slack));
        _mm_storeu_ps(&off[k], _mm_sub_ps(_mm_loadu_ps(&seen[k]), proj));
        _mm_storeu_ps(&rad[k], size);
#else
        for (int i = k; i < k + 4; ++i) {
            const float proj = row[0][i] * n->center[0] + row[1][i] * n->center[1] +
                               row[2][i] * n->center[2] + own[i];
            rad[i] = reach[0][i] * n->half[0] + reach[1][i] * n->half[1] +
                     reach[2][i] * n->half[2] + q->slack;
            off[i] = seen[i] - proj;
        }
#endif
    }
}

/// Up to four nodes of one side, lane by lane (local centres and half extents), and which lanes
/// are still kept (all bits set) or culled (zero).
typedef struct mm_children {
    float   c[3][4], h[3][4];
    int32_t keep[4];
} mm_children;

/// Side s's nodes in ch against a node of the other side (node_project's off, rad): clears the
/// lanes that some axis separates; false when no lane is left. Separated means |(L M) . c +
/// off| > |L M| . h + rad, false on NaN (kept).
static bool children_cull(const mm_query *q, int s, mm_children *ch, const float off[MM_MAX_AXES],
                          const float rad[MM_MAX_AXES])
{
    if (!q->cull)
        return (ch->keep[0] | ch->keep[1] | ch->keep[2] | ch->keep[3]) != 0;
#if KCC_SSE
    const __m128 sign = _mm_set1_ps(-0.0f);
    const __m128 c0 = _mm_loadu_ps(ch->c[0]), c1 = _mm_loadu_ps(ch->c[1]);
    const __m128 c2 = _mm_loadu_ps(ch->c[2]), h0 = _mm_loadu_ps(ch->h[0]);
    const __m128 h1 = _mm_loadu_ps(ch->h[1]), h2 = _mm_loadu_ps(ch->h[2]);
    __m128 keep = _mm_loadu_ps((const float *)ch->keep);
    for (int k = 0; k < q->axis_count; ++k) {
        const float(*v)[4] = q->splat[s][k];
        __m128 dist = _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(v[0]), c0),
                                 _mm_mul_ps(_mm_loadu_ps(v[1]), c1));
        dist = _mm_add_ps(_mm_add_ps(dist, _mm_mul_ps(_mm_loadu_ps(v[2]), c2)),
                          _mm_set1_ps(off[k]));
        __m128 size = _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(v[3]), h0),
                                 _mm_mul_ps(_mm_loadu_ps(v[4]), h1));
        size = _mm_add_ps(_mm_add_ps(size, _mm_mul_ps(_mm_loadu_ps(v[5]), h2)),
                          _mm_set1_ps(rad[k]));
        keep = _mm_and_ps(keep, _mm_cmpngt_ps(_mm_andnot_ps(sign, dist), size));
        if (_mm_movemask_ps(keep) == 0)
            break;
    }
    _mm_storeu_ps((float *)ch->keep, keep);
#else
    for (int k = 0; k < q->axis_count; ++k)
        for (int i = 0; i < 4; ++i) {
            const float(*v)[4] = q->splat[s][k];
            const float dist = v[0][i] * ch->c[0][i] + v[1][i] * ch->c[1][i] +
                               v[2][i] * ch->c[2][i] + off[k];
            const float size = v[3][i] * ch->h[0][i] + v[4][i] * ch->h[1][i] +
                               v[5][i] * ch->h[2][i] + rad[k];
            ch->keep[i] &= -(int32_t)!(fabsf(dist) > size);
        }
#endif
    return (ch->keep[0] | ch->keep[1] | ch->keep[2] | ch->keep[3]) != 0;
}

/// Opens side s's inner node `open` against the other side's node `other`: pushes each child pair
/// whose boxes may meet.
static uint32_t open_node(mm_query *q, int s, const mm_node *open, const mm_node *other,
                          mm_node (*stack)[2], uint32_t sp)
{
    kcc_node4 scratch;
    const kcc_node4 *g = kcc_mesh_group(q->mesh[s], open->first, &scratch);
    float off[MM_MAX_AXES], rad[MM_MAX_AXES];
    node_project(q, 1 - s, other, off, rad);
    mm_children ch;
    mm_node child[4];
    for (int i = 0; i < 4; ++i) {
        const float lo[3] = {g->x[0][i], g->y[0][i], g->z[0][i]};
        const float hi[3] = {g->x[1][i], g->y[1][i], g->z[1][i]};
        node_set(&child[i], g->first[i], g->count[i], lo, hi);
        for (int k = 0; k < 3; ++k)
            ch.c[k][i] = child[i].center[k], ch.h[k][i] = child[i].half[k];
        ch.keep[i] = g->x[0][i] <= g->x[1][i] ? -1 : 0; /* an empty slot: never kept */
    }
    if (!children_cull(q, s, &ch, off, rad))
        return sp;
    for (int i = 0; i < 4; ++i) {
        if (!ch.keep[i])
            continue;
        KCC_ASSERT(sp < MM_STACK);
        stack[sp][s] = child[i];
        stack[sp][1 - s] = *other;
        ++sp;
    }
    return sp;
}

/// The roots' pair: side 1's root as the one kept lane against side 0's.
static bool roots_may_meet(const mm_query *q, const mm_node *a, const mm_node *b)
{
    float off[MM_MAX_AXES], rad[MM_MAX_AXES];
    node_project(q, 0, a, off, rad);
    mm_children ch = {.keep = {-1, 0, 0, 0}};
    for (int k = 0; k < 3; ++k)
        ch.c[k][0] = b->center[k], ch.h[k][0] = b->half[k];
    return children_cull(q, 1, &ch, off, rad);
}

/// Places side s's slots first .. first + count - 1 into leaf (count <= KCC_LEAF_MAX).
static void leaf_fill(const mm_query *q, int s, mm_leaf *leaf, uint32_t first, uint32_t count)
{
    KCC_ASSERT(count <= KCC_LEAF_MAX);
    leaf->first = first, leaf->count = count;
    for (uint32_t i = 0; i < count; ++i) {
        kcc_tri t;
        kcc_mesh_tri(q->mesh[s], first + i, &t);
        for (int c = 0; c < 3; ++c)
            kcc_pose_point(&q->pose[s], t.v[c], leaf->v[i][c]);
        for (int k = 0; k < 3; ++k) {
            leaf->lo[k][i] = min3f(leaf->v[i][0][k], leaf->v[i][1][k], leaf->v[i][2][k]);
            leaf->hi[k][i] = max3f(leaf->v[i][0][k], leaf->v[i][1][k], leaf->v[i][2][k]);
        }
        leaf->state[i] = MM_TRI_UNDECIDED;
    }
}

/// Side s's leaf (first, count) placed: from the cache, or placed there.
static mm_leaf *leaf_place(mm_query *q, int s, uint32_t first, uint32_t count)
{
    mm_leaf *leaf = &q->leaf[s][(uint32_t)(first * 2654435761u) >> (32 - MM_LEAF_CACHE_BITS)];
    if (leaf->count != count || leaf->first != first)
        leaf_fill(q, s, leaf, first, count);
    return leaf;
}

/// Whether the leaf's placed triangle i is live; the first time, decides it and its plane.
static bool tri_live(mm_leaf *leaf, uint32_t i)
{
    if (leaf->state[i] == MM_TRI_UNDECIDED) {
        const float *const corners[3] = {leaf->v[i][0], leaf->v[i][1], leaf->v[i][2]};
        const bool live = !kcc_tri_is_degenerate(corners[0], corners[1], corners[2]);
        leaf->state[i] = live ? MM_TRI_LIVE : MM_TRI_DEAD;
        if (live)
            plane_of(corners, &leaf->plane[i]);
    }
    return leaf->state[i] == MM_TRI_LIVE;
}

/// Reports slot pair (sa, sb) once per pair of input indices they stand for (self: smaller first).
static void report_slots(mm_query *q, uint32_t sa, uint32_t sb, float seg[2][3])
{
    uint32_t dup_a, dup_b;
    const uint32_t na = kcc_mesh_duplicates(q->mesh[0], sa, &dup_a);
    const uint32_t nb = kcc_mesh_duplicates(q->mesh[1], sb, &dup_b);
    for (uint32_t i = 0; i <= na; ++i)
        for (uint32_t j = 0; j <= nb; ++j) {
            const uint32_t a = i == 0 ? kcc_mesh_tri_id(q->mesh[0], sa)
                                      : kcc_mesh_dup_id(q->mesh[0], dup_a + i - 1);
            const uint32_t b = j == 0 ? kcc_mesh_tri_id(q->mesh[1], sb)
                                      : kcc_mesh_dup_id(q->mesh[1], dup_b + j - 1);
            if (q->self && a > b)
                sink_add(&q->sink, b, a, seg);
            else
                sink_add(&q->sink, a, b, seg);
        }
}

/// Which of leaf b's triangles have bounds meeting leaf a's triangle i (bit j: triangle j; the
/// scalar path and the SSE one, four at a time, compare the same floats).
static uint32_t boxes_meeting(const mm_leaf *a, uint32_t i, const mm_leaf *b)
{
    _Static_assert(KCC_LEAF_MAX == 8, "two groups of four");
    uint32_t mask = 0;
#if KCC_SSE
    for (uint32_t g = 0; 4 * g < b->count; ++g) {
        __m128 meet = _mm_castsi128_ps(_mm_set1_epi32(-1));
        for (int k = 0; k < 3; ++k) {
            const __m128 lo = _mm_set1_ps(a->lo[k][i]), hi = _mm_set1_ps(a->hi[k][i]);
            meet = _mm_and_ps(meet, _mm_cmpngt_ps(lo, _mm_loadu_ps(&b->hi[k][4 * g])));
            meet = _mm_and_ps(meet, _mm_cmpnlt_ps(hi, _mm_loadu_ps(&b->lo[k][4 * g])));
        }
        mask |= (uint32_t)_mm_movemask_ps(meet) << (4u * g);
    }
#else
    for (uint32_t j = 0; j < KCC_LEAF_MAX; ++j) {
        bool meet = true;
        for (int k = 0; k < 3; ++k)
            meet = meet && !(a->lo[k][i] > b->hi[k][j]) && !(a->hi[k][i] < b->lo[k][j]);
        mask |= (uint32_t)meet << j;
    }
#endif
    return mask & ((1u << b->count) - 1u);
}

/// Reports the pairs of two placed leaves, side 0's and side 1's, that the exact test finds.
static void placed_pair(mm_query *q, mm_leaf *la, mm_leaf *lb)
{
    for (uint32_t i = 0; i < la->count; ++i) {
        const float *const ta[3] = {la->v[i][0], la->v[i][1], la->v[i][2]};
        for (uint32_t meet = boxes_meeting(la, i, lb); meet; meet &= meet - 1) {
            const uint32_t j = (uint32_t)__builtin_ctz(meet);
            if (q->self && la->first + i >= lb->first + j)
                continue;
            if (!tri_live(la, i))
                break;
            if (!tri_live(lb, j))
                continue;
            const float *const tb[3] = {lb->v[j][0], lb->v[j][1], lb->v[j][2]};
            const tri_plane *pa = &la->plane[i], *pb = &lb->plane[j];
            float seg[2][3];
            if (q->self && (!self_pair_cuts(ta, pa, tb, pb) || !tri_tri_segment(ta, pa, tb, pb, seg)))
                continue;
            if (!q->self && !tri_tri_segment(ta, pa, tb, pb, seg))
                continue;
            report_slots(q, la->first + i, lb->first + j, seg);
        }
    }
}

/* ------------------------------------------------------------------------------------------------
 * A heightfield side has no tree: its root stands as one leaf (count MM_HF_ROOT) that the walk never
 * opens, so the other side's tree is descended against the heightfield's bounds as a whole. Each
 * leaf it reaches meets the heightfield's cells under its placed triangles' bounds (taken into the
 * heightfield's frame by kcc_pose_box_local_bounds: every cell whose placed triangles may meet
 * them), batch by batch (kcc_hf_box_next), eight triangles at a time placed as a leaf of the
 * batch's view mesh, whose slots report the grid's ids. Two heightfields: side 1's cells under side
 * 0's placed bounds are side 1's leaves. The exact test and the report are the tree's, so the pairs
 * are those of the tree mesh of the same triangles, bit for bit
 * (heightfield_overlaps_equal_the_mesh_of_the_same_triangles). */

#define MM_HF_ROOT UINT32_MAX

/// Heightfield side h's cells that placed triangles within world box [lo, hi] may meet: the box in
/// h's frame (kcc_pose_box_local_bounds), as kcc_hf_box_begin takes it. Its margin covers a matrix
/// whose quaternion's squared length is within 2^-20 of 1 (the inverse is then the transpose to
/// well within it); a pose further from a rotation, or a bound that is NaN or beyond float's range
/// (placed corners that overflowed), opens that side to the whole grid.
static void hf_local_box(const mm_query *q, int h, const float lo[3], const float hi[3],
                         float out_lo[3], float out_hi[3])
{
    const float *r = q->pose[h].transform.rotation;
    const double len2 = (double)r[0] * r[0] + (double)r[1] * r[1] + (double)r[2] * r[2] +
                        (double)r[3] * r[3];
    kcc_pose_box_local_bounds(&q->pose[h], lo, hi, q->mesh[h]->coord_scale, out_lo, out_hi);
    const bool unit = fabs(len2 - 1.0) <= 0x1p-20;
    for (int k = 0; k < 3; ++k) {
        out_lo[k] = unit && out_lo[k] >= -FLT_MAX ? out_lo[k] : -FLT_MAX;
        out_hi[k] = unit && out_hi[k] <= FLT_MAX ? out_hi[k] : FLT_MAX;
    }
}

/// The bounds of a placed leaf's triangles.
static void leaf_bounds(const mm_leaf *leaf, float lo[3], float hi[3])
{
    for (int k = 0; k < 3; ++k) {
        lo[k] = leaf->lo[k][0], hi[k] = leaf->hi[k][0];
        for (uint32_t i = 1; i < leaf->count; ++i) {
            lo[k] = leaf->lo[k][i] < lo[k] ? leaf->lo[k][i] : lo[k];
            hi[k] = leaf->hi[k][i] > hi[k] ? leaf->hi[k][i] : hi[k];
        }
    }
}

/// Heightfield side h's cells that placed triangles within world box [lo, hi] may meet, eight at a
/// time as placed leaves, each met with `other` (a placed leaf of side 1 - h), or, when other is
/// NULL (h = 1, both sides heightfields), with side 0's cells under it (which passes a leaf:
/// the recursion is one deep).
static void hf_cells_meet(mm_query *q, int h, const float lo[3], const float hi[3], mm_leaf *other)
{
    const kcc_mesh *hf = q->mesh[h];
    float local_lo[3], local_hi[3];
    hf_local_box(q, h, lo, hi, local_lo, local_hi);
    kcc_hf_view view;
    kcc_hf_box_iter it;
    mm_leaf cells;
    q->mesh[h] = kcc_hf_view_init(&view, hf);
    kcc_hf_box_begin(&it, hf, local_lo, local_hi);
    for (uint32_t n; (n = kcc_hf_box_next(&it, &view)) > 0;)
        for (uint32_t first = 0; first < n; first += KCC_LEAF_MAX) {
            leaf_fill(q, h, &cells, first, n - first < KCC_LEAF_MAX ? n - first : KCC_LEAF_MAX);
            if (other) {
                placed_pair(q, h == 0 ? &cells : other, h == 0 ? other : &cells);
            } else {
                float cells_lo[3], cells_hi[3];
                leaf_bounds(&cells, cells_lo, cells_hi);
                hf_cells_meet(q, 0, cells_lo, cells_hi, &cells);
            }
        }
    q->mesh[h] = hf;
}

/// Side h (a heightfield) met with the placed leaf `other` of the other side.
static void hf_meet_leaf(mm_query *q, int h, mm_leaf *other)
{
    float lo[3], hi[3];
    leaf_bounds(other, lo, hi);
    hf_cells_meet(q, h, lo, hi, other);
}

/// Both sides heightfields: side 1's cells under side 0's placed bounds, met with side 0's cells.
static void hf_meet_hf(mm_query *q)
{
    float lo[3], hi[3];
    kcc_pose_box_bounds(&q->pose[0], q->mesh[0]->bounds[0], q->mesh[0]->bounds[1], lo, hi);
    hf_cells_meet(q, 1, lo, hi, NULL);
}

/// Two leaves met: placed (from the cache) and tested, or a heightfield's cells under the other.
static void leaf_pair(mm_query *q, const mm_node *na, const mm_node *nb)
{
    if (na->count == MM_HF_ROOT && nb->count == MM_HF_ROOT)
        hf_meet_hf(q);
    else if (na->count == MM_HF_ROOT)
        hf_meet_leaf(q, 0, leaf_place(q, 1, nb->first, nb->count));
    else if (nb->count == MM_HF_ROOT)
        hf_meet_leaf(q, 1, leaf_place(q, 0, na->first, na->count));
    else
        placed_pair(q, leaf_place(q, 0, na->first, na->count), leaf_place(q, 1, nb->first, nb->count));
}

static void mm_walk(mm_query *q)
{
    mm_node stack[MM_STACK][2];
    for (int s = 0; s < 2; ++s)
        node_set(&stack[0][s], 0, q->mesh[s]->hf ? MM_HF_ROOT : 0, q->mesh[s]->bounds[0],
                 q->mesh[s]->bounds[1]);
    uint32_t sp = roots_may_meet(q, &stack[0][0], &stack[0][1]) ? 1 : 0;
    while (sp > 0) {
        --sp;
        const mm_node a = stack[sp][0], b = stack[sp][1];
        if (a.count > 0 && b.count > 0) {
            leaf_pair(q, &a, &b);
            continue;
        }
        /* Open the inner side; both inner: the larger (ties: a's). */
        const bool open_a = b.count > 0 || (a.count == 0 && a.half[0] + a.half[1] + a.half[2] >=
                                                                b.half[0] + b.half[1] + b.half[2]);
        sp = open_a ? open_node(q, 0, &a, &b, stack, sp) : open_node(q, 1, &b, &a, stack, sp);
    }
}

static uint32_t mm_run(mm_query *q, kcc_tri_pair *out_pairs, uint32_t capacity)
{
    q->sink = (pair_sink){.out = out_pairs, .capacity = out_pairs ? capacity : 0, .heap = false};
    for (int s = 0; s < 2; ++s)
        for (int i = 0; i < MM_LEAF_CACHE; ++i)
            q->leaf[s][i].count = 0; /* no leaf placed yet */
    setup_axes(q);
    mm_walk(q);
    sink_finish(&q->sink);
    return q->sink.count;
}

uint32_t kcc_mesh_overlap_mesh(const kcc_mesh *a, const kcc_transform *pose_a, const kcc_mesh *b,
                               const kcc_transform *pose_b, kcc_tri_pair *out_pairs,
                               uint32_t capacity)
{
    mm_query q;
    if (!a || !b || a->tree_triangles == 0 || b->tree_triangles == 0 ||
        !pose_from(pose_a, &q.pose[0]) || !pose_from(pose_b, &q.pose[1]))
        return 0;
    q.mesh[0] = a, q.mesh[1] = b, q.self = false;
    return mm_run(&q, out_pairs, capacity);
}

uint32_t kcc_mesh_self_intersections(const kcc_mesh *mesh, kcc_tri_pair *out_pairs,
                                     uint32_t capacity)
{
    mm_query q;
    if (!mesh || mesh->tree_triangles == 0 || mesh->hf) /* a heightfield never cuts itself */
        return 0;
    pose_from(NULL, &q.pose[0]);
    q.pose[1] = q.pose[0];
    q.mesh[0] = q.mesh[1] = mesh, q.self = true;
    return mm_run(&q, out_pairs, capacity);
}
