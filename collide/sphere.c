/* sphere.c: owns the sphere and capsule queries: the swept sphere and swept capsule against one
 * triangle (in double, about the shape's start), sphere overlap, and their walks of the mesh's tree.
 * Pure functions over the immutable mesh: no state, no allocation. */
#include <math.h>
#include <string.h>

#include "collide_internal.h"
#include "heightfield_internal.h"

/* A delta within a millionth of a radian of parallel to a touched surface (a direction computed in
 * float) does not go deeper: the box sweep's start rule. */
#define START_DEEPER 1e-6

static inline double dot3(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static inline void cross3(const double a[3], const double b[3], double out[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

static inline void sub3(const double a[3], const double b[3], double out[3])
{
    out[0] = a[0] - b[0];
    out[1] = a[1] - b[1];
    out[2] = a[2] - b[2];
}

/* out = p + s d */
static inline void axpy3(const double p[3], double s, const double d[3], double out[3])
{
    out[0] = p[0] + s * d[0];
    out[1] = p[1] + s * d[1];
    out[2] = p[2] + s * d[2];
}

static bool finite_vec(const float v[3])
{
    return v && isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]);
}

/* A triangle relative to the shape's start (corners minus origin, in double: a difference of two
 * floats is exact there unless their exponents are ~29 bits apart) with its unit normal as wound. */
typedef struct rel_tri {
    double v[3][3];
    double n[3];
} rel_tri;

static void rel_tri_setup(const float a[3], const float b[3], const float c[3],
                          const double origin[3], rel_tri *out)
{
    const float *corner[3] = {a, b, c};
    for (int i = 0; i < 3; ++i)
        for (int k = 0; k < 3; ++k)
            out->v[i][k] = (double)corner[i][k] - origin[k];
    double e0[3], e1[3], n[3];
    sub3(out->v[1], out->v[0], e0);
    sub3(out->v[2], out->v[0], e1);
    cross3(e0, e1, n);
    const double len = sqrt(dot3(n, n));
    for (int k = 0; k < 3; ++k)
        out->n[k] = n[k] / len;
}

/* The closest point of the triangle to p (Ericson, Real-Time Collision Detection 5.1.5: the Voronoi
 * regions of the vertices, then the edges, then the face). */
static void closest_on_tri(const rel_tri *tri, const double p[3], double out[3])
{
    const double *a = tri->v[0], *b = tri->v[1], *c = tri->v[2];
    double ab[3], ac[3], ap[3], bp[3], cp[3];
    sub3(b, a, ab), sub3(c, a, ac), sub3(p, a, ap);
    const double d1 = dot3(ab, ap), d2 = dot3(ac, ap);
    if (d1 <= 0.0 && d2 <= 0.0) {
        memcpy(out, a, sizeof(double[3]));
        return;
    }
    sub3(p, b, bp);
    const double d3 = dot3(ab, bp), d4 = dot3(ac, bp);
    if (d3 >= 0.0 && d4 <= d3) {
        memcpy(out, b, sizeof(double[3]));
        return;
    }
    const double vc = d1 * d4 - d3 * d2;
    if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) {
        axpy3(a, d1 / (d1 - d3), ab, out);
        return;
    }
    sub3(p, c, cp);
    const double d5 = dot3(ab, cp), d6 = dot3(ac, cp);
    if (d6 >= 0.0 && d5 <= d6) {
        memcpy(out, c, sizeof(double[3]));
        return;
    }
    const double vb = d5 * d2 - d1 * d6;
    if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) {
        axpy3(a, d2 / (d2 - d6), ac, out);
        return;
    }
    const double va = d3 * d6 - d5 * d4;
    if (va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0) {
        double bc[3];
        sub3(c, b, bc);
        axpy3(b, (d4 - d3) / ((d4 - d3) + (d5 - d6)), bc, out);
        return;
    }
    const double denom = 1.0 / (va + vb + vc);
    double q[3];
    axpy3(a, vb * denom, ab, q);
    axpy3(q, vc * denom, ac, out);
}

/* One contact found by the per-triangle tests: time, point on the triangle and unit normal (from the
 * point toward the shape), relative to the shape's start. */
typedef struct contact {
    double t;
    double point[3];
    double normal[3];
    bool   found;   ///< a contact no later than the t given on entry was kept
    bool   start;   ///< at t = 0, the shape touching or overlapping the triangle there
} contact;

/* Keeps (t, point, normal toward `toward`) when t is no later than the best so far. An entry found
 * by a quadratic approaches its feature (the normal opposes d, or is perpendicular to it for a
 * graze) in exact arithmetic; one whose computed normal points along d exists only where the radius
 * is below the rounding of the coordinates (1e-29 m at 15 m) and is no contact. */
static void offer(contact *best, double t, const double point[3], const double toward[3],
                  const double d[3])
{
    if (!(t <= best->t))
        return;
    double n[3];
    sub3(toward, point, n);
    const double len = sqrt(dot3(n, n));
    if (!(len > 0.0) || dot3(n, d) > 0.0)
        return;
    best->t = t;
    best->found = true;
    for (int k = 0; k < 3; ++k) {
        best->point[k] = point[k];
        best->normal[k] = n[k] / len;
    }
}

/* The entry time of A t^2 + B t + C = 0 (C > 0: outside at t = 0; A > 0): the smaller root, in the
 * form without cancellation, when it is no later than tmax. B >= 0 moves away or along. */
static bool entry_root(double A, double B, double C, double tmax, double *out_t)
{
    if (!(C > 0.0) || !(A > 0.0) || !(B < 0.0))
        return false;
    const double disc = B * B - 4.0 * A * C;
    if (disc < 0.0)
        return false;
    const double t = 2.0 * C / (-B + sqrt(disc));
    if (!(t <= tmax))
        return false;
    *out_t = t;
    return true;
}

/* A point p (relative position w at t = 0, moving by d) entering the cylinder of radius r about the
 * segment from 0 along axis e: |e x (w + t d)|^2 = |e|^2 r^2 (exact products of the cross products,
 * no cancellation of near-equal squares). The entry counts only where p projects onto the segment
 * (f = e.(w + t d) / |e|^2 in [0, 1]); a point inside the infinite cylinder at t = 0 enters through
 * an end, which the end's vertex test finds. Writes the time and f. */
static bool cylinder_entry(const double e[3], const double w[3], const double d[3], double r,
                           double tmax, double *out_t, double *out_f)
{
    double ew[3], ed[3];
    cross3(e, w, ew);
    cross3(e, d, ed);
    const double ee = dot3(e, e);
    double t;
    if (!entry_root(dot3(ed, ed), 2.0 * dot3(ew, ed), dot3(ew, ew) - ee * r * r, tmax, &t))
        return false;
    double p[3];
    axpy3(w, t, d, p);
    const double f = dot3(e, p) / ee;
    if (!(f >= 0.0 && f <= 1.0))
        return false;
    *out_t = t;
    *out_f = f;
    return true;
}

/* Point p inside the triangle (boundary included), p in its plane up to rounding. */
static bool inside_tri(const rel_tri *tri, const double p[3])
{
    for (int i = 0; i < 3; ++i) {
        const double *a = tri->v[i], *b = tri->v[(i + 1) % 3];
        double e[3], ap[3], x[3];
        sub3(b, a, e);
        sub3(p, a, ap);
        cross3(e, ap, x);
        if (dot3(x, tri->n) < 0.0)
            return false;
    }
    return true;
}

/* The moving part of the swept sphere (centre at the origin at t = 0, moving by d, not touching the
 * triangle at t = 0): Fauerby's order. The plane first: a sphere outside the slab |n.x| <= r that
 * enters it inside the triangle touches the face then, and nothing earlier; entering it elsewhere, or
 * starting inside the slab, the first contact is with an edge or a vertex. Keeps contacts no later
 * than best->t. */
static void sphere_moving(const rel_tri *tri, const double d[3], double r, contact *best)
{
    const double s0 = -dot3(tri->n, tri->v[0]), nd = dot3(tri->n, d);
    if (fabs(s0) > r) {
        if (!(s0 * nd < 0.0))
            return; /* never nearer the plane than r: touches nothing */
        const double side = s0 > 0.0 ? 1.0 : -1.0, t = (side * r - s0) / nd;
        if (!(t <= best->t))
            return;
        double centre[3], p[3];
        axpy3((const double[3]){0.0, 0.0, 0.0}, t, d, centre);
        axpy3(centre, -side * r, tri->n, p);
        if (inside_tri(tri, p)) {
            best->t = t;
            best->found = true;
            memcpy(best->point, p, sizeof p);
            for (int k = 0; k < 3; ++k)
                best->normal[k] = side * tri->n[k];
            return;
        }
    }
    for (int i = 0; i < 3; ++i) {
        const double *v = tri->v[i];
        const double w[3] = {-v[0], -v[1], -v[2]};
        double t, f, e[3], centre[3], p[3];
        if (entry_root(dot3(d, d), 2.0 * dot3(w, d), dot3(w, w) - r * r, best->t, &t)) {
            axpy3((const double[3]){0.0, 0.0, 0.0}, t, d, centre);
            offer(best, t, v, centre, d);
        }
        sub3(tri->v[(i + 1) % 3], v, e);
        if (cylinder_entry(e, w, d, r, best->t, &t, &f)) {
            axpy3((const double[3]){0.0, 0.0, 0.0}, t, d, centre);
            axpy3(v, f, e, p);
            offer(best, t, p, centre, d);
        }
    }
}

/* The start rule: a shape within r of the triangle at t = 0 (closest points q on the triangle and x
 * on the shape) is reported at t = 0 when d goes deeper along the normal from q toward x (the face
 * normal against d where they coincide); otherwise never (the distance to a convex set along a line
 * is convex in t, so a shape not approaching at t = 0 only gets farther). True when the shape was
 * within r, whether reported (best->start) or not. */
static bool start_contact(const rel_tri *tri, const double q[3], const double x[3],
                          const double d[3], double r, contact *best)
{
    double n[3];
    sub3(x, q, n);
    const double dist2 = dot3(n, n);
    if (!(dist2 <= r * r))
        return false;
    if (dist2 > 0.0) {
        const double len = sqrt(dist2);
        for (int k = 0; k < 3; ++k)
            n[k] /= len;
    } else {
        const double side = dot3(tri->n, d) < 0.0 ? 1.0 : -1.0;
        for (int k = 0; k < 3; ++k)
            n[k] = side * tri->n[k];
    }
    if (dot3(n, d) < -START_DEEPER * sqrt(dot3(d, d))) {
        best->t = 0.0;
        best->found = true;
        best->start = true;
        memcpy(best->point, q, sizeof(double[3]));
        memcpy(best->normal, n, sizeof n);
    }
    return true;
}

/* The swept sphere against one triangle (relative to the centre's start): best->t is the latest
 * time still wanted on entry; best->found says whether a contact was kept. A centre farther than r
 * from the plane (by more than a relative hair of rounding) is farther from the triangle: no start
 * contact, and no closest point to compute. */
static void sphere_tri(const rel_tri *tri, const double d[3], double r, contact *best)
{
    const double origin[3] = {0.0, 0.0, 0.0};
    const double s0 = fabs(dot3(tri->n, tri->v[0]));
    if (s0 - r <= 1e-12 * (s0 + r)) {
        double q[3];
        closest_on_tri(tri, origin, q);
        if (start_contact(tri, q, origin, d, r, best))
            return;
    }
    sphere_moving(tri, d, r, best);
}

/* ------------------------------------------------------------------------------------------------
 * The swept capsule: the segment from the origin along S plus r, moving by d. A first contact's
 * closest pair of points is one of: a segment end and the triangle (the end's swept sphere), a
 * triangle vertex and the segment's interior (the vertex against the cylinder: a ray against the
 * capsule's side), a triangle edge's interior and the segment's interior (the two lines at distance
 * r, both closest points inside; parallel ones have an end pair as well), or the face and the
 * segment's interior (the segment then parallel to the face, where an end or an edge pair ties). */

static inline double clamp01(double x)
{
    return x < 0.0 ? 0.0 : x > 1.0 ? 1.0 : x;
}

/* The closest points of the segments p + s e and q + u f, s, u in [0, 1] (Ericson 5.1.9). */
static void closest_seg_seg(const double p[3], const double e[3], const double q[3],
                            const double f[3], double out_a[3], double out_b[3])
{
    double r[3];
    sub3(p, q, r);
    const double a = dot3(e, e), ff = dot3(f, f), fr = dot3(f, r);
    double s = 0.0, u = 0.0;
    if (a <= 0.0) {
        u = ff > 0.0 ? clamp01(fr / ff) : 0.0;
    } else if (ff <= 0.0) {
        s = clamp01(-dot3(e, r) / a);
    } else {
        const double c = dot3(e, r), b = dot3(e, f), denom = a * ff - b * b;
        s = denom > 0.0 ? clamp01((b * fr - c * ff) / denom) : 0.0;
        u = (b * s + fr) / ff;
        if (u < 0.0) {
            u = 0.0;
            s = clamp01(-c / a);
        } else if (u > 1.0) {
            u = 1.0;
            s = clamp01((b - c) / a);
        }
    }
    axpy3(p, s, e, out_a);
    axpy3(q, u, f, out_b);
}

/* Keeps the pair (q on the triangle, x on the segment) when it is closer than *best2. */
static void keep_pair(const double q[3], const double x[3], double *best2, double out_q[3],
                      double out_x[3])
{
    double g[3];
    sub3(x, q, g);
    const double d2 = dot3(g, g);
    if (d2 < *best2) {
        *best2 = d2;
        memcpy(out_q, q, sizeof(double[3]));
        memcpy(out_x, x, sizeof(double[3]));
    }
}

/* The closest points of the triangle (out_q) and the segment from the origin along S (out_x). */
static void closest_seg_tri(const rel_tri *tri, const double S[3], double out_q[3], double out_x[3])
{
    const double h0 = -dot3(tri->n, tri->v[0]), h1 = h0 + dot3(tri->n, S);
    if (h0 != h1 && !(h0 > 0.0 && h1 > 0.0) && !(h0 < 0.0 && h1 < 0.0)) {
        double x[3];
        axpy3((const double[3]){0.0, 0.0, 0.0}, h0 / (h0 - h1), S, x);
        if (inside_tri(tri, x)) { /* the segment crosses the triangle */
            memcpy(out_q, x, sizeof x);
            memcpy(out_x, x, sizeof x);
            return;
        }
    }
    const double origin[3] = {0.0, 0.0, 0.0};
    double best2 = INFINITY, q[3], x[3];
    closest_on_tri(tri, origin, q);
    keep_pair(q, origin, &best2, out_q, out_x);
    closest_on_tri(tri, S, q);
    keep_pair(q, S, &best2, out_q, out_x);
    for (int i = 0; i < 3; ++i) {
        double e[3];
        sub3(tri->v[(i + 1) % 3], tri->v[i], e);
        closest_seg_seg(origin, S, tri->v[i], e, x, q);
        keep_pair(q, x, &best2, out_q, out_x);
    }
}

/* The edge vi + v e (interior) against the moving segment t d + u S (interior): the lines' distance
 * |m.(t d - vi)| / |m|, m = e x S, reaches r while both closest points lie inside. Lines parallel
 * within 1e-6 rad are left to the end pairs: the closest points of nearly parallel lines are
 * ill-conditioned (their error grows as 1 / sin^2 of the angle), and where they are nearly parallel
 * an end pair touches at nearly the same time. */
static void edge_segment_entry(const double vi[3], const double e[3], const double S[3],
                               const double d[3], double r, contact *best)
{
    double m[3];
    cross3(e, S, m);
    const double mm = dot3(m, m), len = sqrt(mm), a = dot3(S, S), ee = dot3(e, e);
    const double g0 = -dot3(m, vi), md = dot3(m, d);
    if (!(mm > 1e-12 * a * ee) || !(fabs(g0) > r * len) || !(g0 * md < 0.0))
        return;
    const double side = g0 > 0.0 ? 1.0 : -1.0, t = (side * r * len - g0) / md;
    if (!(t <= best->t))
        return;
    double w0[3];
    axpy3((const double[3]){-vi[0], -vi[1], -vi[2]}, t, d, w0);
    const double b = dot3(S, e), dS = dot3(S, w0), de = dot3(e, w0);
    const double u = (b * de - ee * dS) / mm, v = (a * de - b * dS) / mm;
    if (!(u >= 0.0 && u <= 1.0 && v >= 0.0 && v <= 1.0))
        return;
    best->t = t;
    best->found = true;
    axpy3(vi, v, e, best->point);
    for (int k = 0; k < 3; ++k)
        best->normal[k] = side * m[k] / len;
}

/* The moving part of the swept capsule (not within r of the triangle at t = 0). */
static void capsule_moving(const rel_tri *tri, const double S[3], const double d[3], double r,
                           contact *best)
{
    sphere_moving(tri, d, r, best);
    rel_tri from_end = *tri; /* the triangle relative to the other end */
    for (int i = 0; i < 3; ++i)
        sub3(tri->v[i], S, from_end.v[i]);
    contact end = {.t = best->t};
    sphere_moving(&from_end, d, r, &end);
    if (end.found) {
        *best = end;
        for (int k = 0; k < 3; ++k)
            best->point[k] += S[k];
    }
    const double back[3] = {-d[0], -d[1], -d[2]};
    for (int i = 0; i < 3; ++i) {
        double t, f, axis[3], e[3];
        if (cylinder_entry(S, tri->v[i], back, r, best->t, &t, &f)) {
            axpy3((const double[3]){0.0, 0.0, 0.0}, t, d, axis);
            axpy3(axis, f, S, axis);
            offer(best, t, tri->v[i], axis, d);
        }
        sub3(tri->v[(i + 1) % 3], tri->v[i], e);
        edge_segment_entry(tri->v[i], e, S, d, r, best);
    }
}

/* The swept capsule against one triangle (relative to p0), as sphere_tri. */
static void capsule_tri(const rel_tri *tri, const double S[3], const double d[3], double r,
                        contact *best)
{
    const double h0 = -dot3(tri->n, tri->v[0]), h1 = h0 + dot3(tri->n, S);
    const double near = (h0 > 0.0) == (h1 > 0.0) ? fmin(fabs(h0), fabs(h1)) : 0.0;
    if (near - r <= 1e-12 * (near + r)) { /* as sphere_tri: the segment's nearest point to the plane */
        double q[3], x[3];
        closest_seg_tri(tri, S, q, x);
        if (start_contact(tri, q, x, d, r, best))
            return;
    }
    capsule_moving(tri, S, d, r, best);
}

/* ------------------------------------------------------------------------------------------------
 * Mesh queries: the swept shape's bounds (the capsule's box, the sphere's cube) moved along delta
 * through nodes grown by them plus a margin covering float rounding, nearest child first
 * (kcc_walk_nearest), pruned by the best contact time so far. */

/* Beyond this reach (m: a coordinate plus the capsule, delta and radius) the grown float bounds of
 * the tree walk could overflow; such sweeps test every triangle instead. */
#define FAR_REACH 1e36

/* The contact of the shape with triangle abc over the whole sweep (relative to the shape's start). */
static void shape_tri(const kcc_shape_sweep *s, const float a[3], const float b[3],
                      const float c[3], contact *out)
{
    rel_tri tri;
    rel_tri_setup(a, b, c, s->origin, &tri);
    *out = (contact){.t = 1.0};
    if (s->capsule)
        capsule_tri(&tri, s->seg, s->delta, s->radius, out);
    else
        sphere_tri(&tri, s->delta, s->radius, out);
}

/* One sweep through a mesh, and the best contact so far. */
typedef struct shape_walk {
    const kcc_mesh *mesh;
    kcc_pray        slab;
    kcc_shape_sweep shape;
    bool            cull;      ///< the triangles' grown bounds are tested first
    contact         best;
    float           best_t;    ///< best.t as reported (float); 2 before any contact
    uint32_t        best_id;   ///< UINT32_MAX before any contact
    float           limit;     ///< best_t grown by a relative hair (ties are still visited), <= 1
} shape_walk;

/* Tests every triangle of the leaf; keeps the earliest contact as reported, in float (ties: the
 * lowest input index), so the mesh answers exactly as the brute force over the per-triangle
 * primitive does. Each triangle is tested over the whole sweep, as the primitive tests it: below
 * the coordinates' rounding (a radius of 1e-41 m beside 20 m corners) the plane's entry time and a
 * vertex's can disagree, and a triangle's answer must not depend on the best time so far. */
KCC_HOT float shape_leaf(void *ctx, uint32_t first, uint32_t count)
{
    shape_walk *w = ctx;
    for (uint32_t s = first, end = first + count; s < end; ++s) {
        const uint32_t id = kcc_mesh_tri_id(w->mesh, s);
        if (w->best_t == 0.0f && id > w->best_id)
            continue; /* can at best tie at t = 0, and ties go to the lower index */
        float buf[3][3];
        const float *v[3];
        kcc_mesh_corners(w->mesh, s, KCC_READ_ANY, buf, v);
        if (w->cull && !kcc_corners_bounds_swept(v, &w->slab, w->limit))
            continue;
        contact c;
        shape_tri(&w->shape, v[0], v[1], v[2], &c);
        const float ct = (float)c.t;
        if (!c.found || !(ct < w->best_t || (ct == w->best_t && id < w->best_id)))
            continue;
        w->best = c;
        w->best_t = ct;
        w->best_id = id;
        w->limit = ct * (1.0f + 1e-6f) + 1e-30f;
        if (w->limit > 1.0f)
            w->limit = 1.0f;
    }
    return w->limit;
}

static bool radius_valid(float radius)
{
    return isfinite(radius) && radius > 0.0f;
}

/* The hit record of a contact (relative to origin). */
static void write_hit(const contact *c, const double origin[3], uint32_t id, kcc_sphere_hit *hit)
{
    hit->t = (float)c->t;
    for (int k = 0; k < 3; ++k) {
        hit->point[k] = (float)(origin[k] + c->point[k]);
        hit->normal[k] = (float)c->normal[k];
    }
    hit->triangle = id;
    hit->start_overlap = c->start;
}

bool kcc_shape_sweep_setup(kcc_shape_sweep *s, const float p0[3], const float p1[3], float radius,
                           const float delta[3], bool capsule)
{
    if (!finite_vec(p0) || !finite_vec(p1) || !finite_vec(delta) || !radius_valid(radius))
        return false;
    if (delta[0] == 0.0f && delta[1] == 0.0f && delta[2] == 0.0f)
        return false; /* nothing approaches anything */
    s->radius = radius;
    s->capsule = capsule;
    s->reach = 0.0;
    for (int k = 0; k < 3; ++k) {
        s->origin[k] = p0[k];
        s->seg[k] = (double)p1[k] - p0[k];
        s->delta[k] = delta[k];
        const double reach = fabs(p0[k]) + fabs(s->seg[k]) + fabs(s->delta[k]) + radius;
        s->reach = reach > s->reach ? reach : s->reach;
    }
    return true;
}

bool kcc_shape_sweep_tri(const kcc_shape_sweep *s, const float a[3], const float b[3],
                         const float c[3], kcc_sphere_hit *hit)
{
    contact best;
    shape_tri(s, a, b, c, &best);
    if (best.found)
        write_hit(&best, s->origin, hit->triangle, hit);
    return best.found;
}

/* The sweep of the capsule p0..p1 (a sphere when capsule is false and p1 == p0) through the mesh. */
static bool sweep_shape(const kcc_mesh *mesh, const float p0[3], const float p1[3], float radius,
                        const float delta[3], bool capsule, kcc_sphere_hit *hit)
{
    shape_walk w = {.mesh = mesh, .cull = true, .best_t = 2.0f, .best_id = UINT32_MAX,
                    .limit = 1.0f};
    if (!mesh || !hit || (mesh->quad_count == 0 && !mesh->hf) ||
        !kcc_shape_sweep_setup(&w.shape, p0, p1, radius, delta, capsule))
        return false;
    double big = mesh->coord_scale > radius ? mesh->coord_scale : radius;
    big = w.shape.reach > big ? w.shape.reach : big;
    kcc_hf_view view;
    if (mesh->hf) /* the visitor reads the heightfield's triangles batch by batch from the view */
        w.mesh = kcc_hf_view_init(&view, mesh);
    if (!(big < FAR_REACH)) {
        /* Grown float bounds could overflow (an infinite plane matches the empty child slots, and
         * the walk would revisit the root): every triangle is tested, none culled. */
        w.cull = false;
        if (mesh->hf)
            kcc_hf_visit_all(mesh, &view, shape_leaf, &w);
        else
            shape_leaf(&w, 0, mesh->tree_triangles);
    } else {
        /* A few ulps of the largest coordinate in play covers every rounding of the grown bounds. */
        const float margin = (float)big * 1e-6f + 1e-30f;
        float org[3], grow[3];
        for (int k = 0; k < 3; ++k) {
            org[k] = (float)(0.5 * ((double)p0[k] + p1[k]));
            grow[k] = (float)(0.5 * fabs(w.shape.seg[k])) + radius + margin;
        }
        kcc_pray_setup(&w.slab, org, delta, grow);
        if (mesh->hf)
            kcc_hf_walk_nearest(mesh, &view, &w.slab, w.limit, shape_leaf, &w);
        else
            kcc_mesh_walk_nearest(mesh, &w.slab, w.limit, shape_leaf, &w);
    }
    if (w.best_id == UINT32_MAX)
        return false;
    write_hit(&w.best, w.shape.origin, w.best_id, hit);
    return true;
}

bool kcc_mesh_sweep_sphere(const kcc_mesh *mesh, const vec3 center, float radius, const vec3 delta,
                           kcc_sphere_hit *hit)
{
    return sweep_shape(mesh, center, center, radius, delta, false, hit);
}

bool kcc_mesh_sweep_capsule(const kcc_mesh *mesh, const vec3 p0, const vec3 p1, float radius,
                            const vec3 delta, kcc_sphere_hit *hit)
{
    return sweep_shape(mesh, p0, p1, radius, delta, true, hit);
}

/* ------------------------------------------------------------------------------------------------
 * Sphere overlap: the box walk over the sphere's cube (grown by the margin), then per triangle its
 * bounds and the exact point-to-triangle distance in double. */

/* The triangle within r of the origin-relative centre (touching counts). */
static bool tri_within(const kcc_tri *t, const double center[3], double r)
{
    rel_tri tri;
    rel_tri_setup(t->v[0], t->v[1], t->v[2], center, &tri);
    const double origin[3] = {0.0, 0.0, 0.0};
    double q[3];
    closest_on_tri(&tri, origin, q);
    return dot3(q, q) <= r * r;
}

bool kcc_tri_within_sphere(const kcc_tri *t, const double center[3], double radius)
{
    return tri_within(t, center, radius);
}

/* Appends the triangles of the leaf (first, count) within r of center that overlap the box. */
static uint32_t overlap_leaf(const kcc_mesh *mesh, uint32_t first, uint32_t count,
                             const kcc_pbox *qb, const double center[3], double r, uint32_t *out,
                             uint32_t capacity, uint32_t found)
{
    for (uint32_t s = first; s < first + count; ++s) {
        kcc_tri t;
        kcc_mesh_tri(mesh, s, &t);
        bool near = true;
        for (int k = 0; k < 3; ++k)
            near = near && min3f(t.v[0][k], t.v[1][k], t.v[2][k]) <= qb->hi[k] &&
                   max3f(t.v[0][k], t.v[1][k], t.v[2][k]) >= qb->lo[k];
        if (!near || !tri_within(&t, center, r))
            continue;
        if (found < capacity)
            out[found] = kcc_mesh_tri_id(mesh, s);
        ++found;
        if (mesh->duplicate_count > 0)
            found = kcc_mesh_append_duplicates(mesh, s, out, capacity, found);
    }
    return found;
}

uint32_t kcc_mesh_overlap_sphere(const kcc_mesh *mesh, const vec3 center, float radius,
                                 uint32_t *out_triangles, uint32_t capacity)
{
    if (!mesh || !finite_vec(center) || !radius_valid(radius) || (capacity > 0 && !out_triangles))
        return 0;
    if (mesh->quad_count == 0 && !mesh->hf)
        return 0;
    float big = mesh->coord_scale > radius ? mesh->coord_scale : radius, lo[3], hi[3];
    for (int k = 0; k < 3; ++k)
        big = fabsf(center[k]) > big ? fabsf(center[k]) : big;
    const float reach = radius + big * 1e-6f + 1e-30f;
    const double c[3] = {center[0], center[1], center[2]};
    for (int k = 0; k < 3; ++k) {
        lo[k] = center[k] - reach;
        hi[k] = center[k] + reach;
    }
    kcc_pbox qb;
    kcc_pbox_setup(&qb, lo, hi);
    uint32_t stack[KCC_TREE_STACK], sp = 0, found = 0;
    if (mesh->hf) { /* the cells under the sphere's cube, batch by batch */
        kcc_hf_view view;
        kcc_hf_box_iter it;
        kcc_hf_view_init(&view, mesh);
        kcc_hf_box_begin(&it, mesh, qb.lo, qb.hi);
        for (uint32_t n; (n = kcc_hf_box_next(&it, &view)) > 0;)
            found = overlap_leaf(&view.mesh, 0, n, &qb, c, radius, out_triangles, capacity, found);
        return found;
    }
    stack[sp++] = 0;
    while (sp > 0) {
        const kcc_qnode4 *q = &mesh->groups[stack[--sp]];
        const int mask = kcc_pbox_qtest(&qb, q), inner = mask & kcc_qnode4_inner_mask(q);
        KCC_ASSERT(sp + 4 <= KCC_TREE_STACK);
        for (int i = 0; i < 4; ++i) {
            if (inner >> i & 1)
                stack[sp++] = q->first[i];
            else if (mask >> i & 1)
                found = overlap_leaf(mesh, q->first[i], q->count[i], &qb, c, radius,
                                     out_triangles, capacity, found);
        }
    }
    return found;
}

/* ------------------------------------------------------------------------------------------------
 * Per-triangle primitives. */

static bool tri_args_valid(const float a[3], const float b[3], const float c[3])
{
    return finite_vec(a) && finite_vec(b) && finite_vec(c) && !kcc_tri_is_degenerate(a, b, c);
}

/* One triangle against the sphere (capsule false, p1 == p0) or the capsule, as the mesh tests it. */
static bool tri_sweep(const float a[3], const float b[3], const float c[3], const float p0[3],
                      const float p1[3], float radius, const float delta[3], bool capsule,
                      kcc_sphere_hit *out_hit)
{
    kcc_shape_sweep s;
    if (!tri_args_valid(a, b, c) || !kcc_shape_sweep_setup(&s, p0, p1, radius, delta, capsule))
        return false;
    contact best;
    shape_tri(&s, a, b, c, &best);
    if (!best.found)
        return false;
    if (out_hit)
        write_hit(&best, s.origin, 0, out_hit);
    return true;
}

bool kcc_tri_sweep_sphere(const vec3 a, const vec3 b, const vec3 c, const vec3 center,
                          float radius, const vec3 delta, kcc_sphere_hit *out_hit)
{
    return tri_sweep(a, b, c, center, center, radius, delta, false, out_hit);
}

bool kcc_tri_sweep_capsule(const vec3 a, const vec3 b, const vec3 c, const vec3 p0, const vec3 p1,
                           float radius, const vec3 delta, kcc_sphere_hit *out_hit)
{
    return tri_sweep(a, b, c, p0, p1, radius, delta, true, out_hit);
}

bool kcc_tri_overlap_sphere(const vec3 a, const vec3 b, const vec3 c, const vec3 center,
                            float radius)
{
    if (!tri_args_valid(a, b, c) || !finite_vec(center) || !radius_valid(radius))
        return false;
    const kcc_tri t = {{{a[0], a[1], a[2]}, {b[0], b[1], b[2]}, {c[0], c[1], c[2]}}};
    const double ctr[3] = {center[0], center[1], center[2]};
    return tri_within(&t, ctr, radius);
}
