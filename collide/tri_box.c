/* tri_box.c: owns the exact per-triangle box tests: the 13-axis separating-axis overlap test (double
 * about the box centre, plus a four-triangle SSE version with rounding bounds that defers to it) and
 * the swept separating-axis test (first contact of a translating box, double). Pure functions: no
 * state, no allocation. */
#include <math.h>
#include <string.h>

#include "collide_internal.h"

static bool finite3(const float v[3])
{
    return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]);
}

bool kcc_tri_is_degenerate(const float a[3], const float b[3], const float c[3])
{
    /* Float cross product as the ray normal computes it: zero (or overflowed) means no normal. */
    float e0[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    float e1[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    float n[3] = {e0[1] * e1[2] - e0[2] * e1[1], e0[2] * e1[0] - e0[0] * e1[2],
                  e0[0] * e1[1] - e0[1] * e1[0]};
    if (!finite3(n) || (n[0] == 0.0f && n[1] == 0.0f && n[2] == 0.0f))
        return true;
    /* The same in double: catches corners that are exactly collinear but whose float differences
     * rounded apart (such a triangle has zero area and must never be reported). */
    double d0[3] = {(double)b[0] - a[0], (double)b[1] - a[1], (double)b[2] - a[2]};
    double d1[3] = {(double)c[0] - a[0], (double)c[1] - a[1], (double)c[2] - a[2]};
    double m[3] = {d0[1] * d1[2] - d0[2] * d1[1], d0[2] * d1[0] - d0[0] * d1[2],
                   d0[0] * d1[1] - d0[1] * d1[0]};
    return m[0] == 0.0 && m[1] == 0.0 && m[2] == 0.0;
}

/* One edge x box-axis test: the edge's endpoint P and the third corner Q project to the two ends
 * of the triangle's interval (the other endpoint projects onto P's value in real arithmetic, and
 * to within one rounding of it in double). */
#define EDGE_AXIS(pP, pQ, r)                                                     \
    do {                                                                         \
        double p_ = (pP), q_ = (pQ), r_ = (r);                                   \
        if ((p_ < q_ ? p_ : q_) > r_ || (p_ < q_ ? q_ : p_) < -r_)               \
            return false;                                                        \
    } while (0)

static inline bool edge_axes(const double e[3], const double P[3], const double Q[3],
                             const double h[3])
{
    double ax = fabs(e[0]), ay = fabs(e[1]), az = fabs(e[2]);
    /* x cross e = (0, -ez, ey) (sign flipped: the test is symmetric) */
    EDGE_AXIS(e[2] * P[1] - e[1] * P[2], e[2] * Q[1] - e[1] * Q[2], h[1] * az + h[2] * ay);
    /* y cross e = (ez, 0, -ex) */
    EDGE_AXIS(e[0] * P[2] - e[2] * P[0], e[0] * Q[2] - e[2] * Q[0], h[0] * az + h[2] * ax);
    /* z cross e = (-ey, ex, 0) */
    EDGE_AXIS(e[1] * P[0] - e[0] * P[1], e[1] * Q[0] - e[0] * Q[1], h[0] * ay + h[1] * ax);
    return true;
}

bool kcc_tri_overlap_box_internal(const float a[3], const float b[3], const float c[3],
                                  const float lo[3], const float hi[3])
{
    /* The three box axes: triangle bounds against the box, exact on the float inputs. */
    for (int k = 0; k < 3; ++k) {
        if (min3f(a[k], b[k], c[k]) > hi[k] || max3f(a[k], b[k], c[k]) < lo[k])
            return false;
    }
    /* Everything else about the box centre in double: float differences are exact there (up to
     * exponent gaps of ~29 bits), products of them nearly so, which keeps touching contacts
     * touching at 1e6 m offsets and at millimetre scale alike. */
    double ctr[3], h[3], v0[3], v1[3], v2[3];
    kcc_box_center_half_d(lo, hi, ctr, h);
    for (int k = 0; k < 3; ++k) {
        v0[k] = (double)a[k] - ctr[k];
        v1[k] = (double)b[k] - ctr[k];
        v2[k] = (double)c[k] - ctr[k];
    }
    double e0[3] = {v1[0] - v0[0], v1[1] - v0[1], v1[2] - v0[2]};
    double e1[3] = {v2[0] - v1[0], v2[1] - v1[1], v2[2] - v1[2]};
    double e2[3] = {v0[0] - v2[0], v0[1] - v2[1], v0[2] - v2[2]};
    /* Triangle normal: all three corners projected, so rounding in n cannot fake a separation. */
    double n[3] = {e0[1] * e1[2] - e0[2] * e1[1], e0[2] * e1[0] - e0[0] * e1[2],
                   e0[0] * e1[1] - e0[1] * e1[0]};
    double q0 = n[0] * v0[0] + n[1] * v0[1] + n[2] * v0[2];
    double q1 = n[0] * v1[0] + n[1] * v1[1] + n[2] * v1[2];
    double q2 = n[0] * v2[0] + n[1] * v2[1] + n[2] * v2[2];
    double rn = h[0] * fabs(n[0]) + h[1] * fabs(n[1]) + h[2] * fabs(n[2]);
    if (min3d(q0, q1, q2) > rn || max3d(q0, q1, q2) < -rn)
        return false;
    /* Early accept (the common case of a floor under a box): the line through the box centre
     * along the normal's dominant axis k meets the plane inside the box (|n.v0| <= h_k |n_k|) at
     * a point inside the triangle (2D edge functions of the centre, on an edge counts): that
     * point is in both. */
    {
        double ax = fabs(n[0]), ay = fabs(n[1]), az = fabs(n[2]);
        int k = ax >= ay ? (ax >= az ? 0 : 2) : (ay >= az ? 1 : 2);
        int i = (k + 1) % 3, j = (k + 2) % 3;
        /* n can round to zero about the box centre for a sliver that is not degenerate in the
         * input (a 1e-26 m edge): then the edge functions are all zero too and prove nothing;
         * the edge axes below decide
         * (a_sliver_whose_normal_vanishes_about_the_box_centre_is_still_tested_exactly). */
        if (n[k] != 0.0 && fabs(q0) <= h[k] * fabs(n[k])) {
            double w0 = v0[i] * v1[j] - v0[j] * v1[i];
            double w1 = v1[i] * v2[j] - v1[j] * v2[i];
            double w2 = v2[i] * v0[j] - v2[j] * v0[i];
            if ((w0 >= 0.0 && w1 >= 0.0 && w2 >= 0.0) || (w0 <= 0.0 && w1 <= 0.0 && w2 <= 0.0))
                return true;
        }
    }
    /* The nine box-axis x edge cross products; a zero axis (edge parallel to a box axis) projects
     * everything to 0 and never separates, so it needs no special case. */
    return edge_axes(e0, v0, v2, h) && edge_axes(e1, v1, v0, h) && edge_axes(e2, v2, v1, h);
}

#if KCC_SSE
/* Up to four triangles of a leaf against one box, in float, four lanes at a time, with a rounding
 * error bound per lane and axis: an axis separates a lane when its separation exceeds the bound,
 * overlaps when it is below minus the bound; a lane that no axis separates and some axis cannot
 * decide is redone by the double test, so the answer is always the double test's answer. Edges
 * are differences of the input floats (zero exactly when the exact ones are), so an exactly-zero
 * axis is skipped exactly as the double test skips it. The bounds are first-order bounds of the
 * float evaluation with a 4x slack (u = 2^-23): translation d = 4u max|coordinate|, edge
 * components 2u max|e|. The three box axes need no bound (float compares, exact). */
static inline __m128 abs4(__m128 x)
{
    return _mm_andnot_ps(_mm_set1_ps(-0.0f), x);
}

static inline __m128 max4(__m128 a, __m128 b, __m128 c)
{
    return _mm_max_ps(a, _mm_max_ps(b, c));
}

static inline __m128 min4(__m128 a, __m128 b, __m128 c)
{
    return _mm_min_ps(a, _mm_min_ps(b, c));
}

/* Lane i's corners of triangles loaded as per-component vectors (the same floats). */
static void lane_corners(const __m128 A[3], const __m128 B[3], const __m128 C[3], int i, float a[3],
                         float b[3], float c[3])
{
    float lanes[3][3][4]; /* lanes[corner][k]: component k of that corner, four lanes */
    for (int k = 0; k < 3; ++k) {
        _mm_storeu_ps(lanes[0][k], A[k]);
        _mm_storeu_ps(lanes[1][k], B[k]);
        _mm_storeu_ps(lanes[2][k], C[k]);
    }
    for (int k = 0; k < 3; ++k) {
        a[k] = lanes[0][k][i];
        b[k] = lanes[1][k][i];
        c[k] = lanes[2][k][i];
    }
}

int kcc_tri4_overlap_box_lanes(const __m128 A[3], const __m128 B[3], const __m128 C[3], uint32_t n,
                               const float lo[3], const float hi[3])
{
    const int active = (1 << n) - 1;

    /* Box axes: exact. */
    __m128 sep = _mm_setzero_ps();
    float mbox = 0.0f, hmaxs = 0.0f;
    __m128 v[3][3], e[3][3], h[3];
    for (int k = 0; k < 3; ++k) {
        __m128 mn = min4(A[k], B[k], C[k]), mx = max4(A[k], B[k], C[k]);
        sep = _mm_or_ps(sep, _mm_or_ps(_mm_cmpgt_ps(mn, _mm_set1_ps(hi[k])),
                                       _mm_cmplt_ps(mx, _mm_set1_ps(lo[k]))));
    }
    int decided_sep = _mm_movemask_ps(sep) & active;
    int todo = active & ~decided_sep;
    if (todo == 0)
        return 0;
    for (int k = 0; k < 3; ++k) {
        float ctr = 0.5f * lo[k] + 0.5f * hi[k], hk = 0.5f * hi[k] - 0.5f * lo[k];
        h[k] = _mm_set1_ps(hk);
        hmaxs = hk > hmaxs ? hk : hmaxs;
        float ml = fabsf(lo[k]) > fabsf(hi[k]) ? fabsf(lo[k]) : fabsf(hi[k]);
        mbox = ml > mbox ? ml : mbox;
        __m128 c = _mm_set1_ps(ctr);
        v[0][k] = _mm_sub_ps(A[k], c);
        v[1][k] = _mm_sub_ps(B[k], c);
        v[2][k] = _mm_sub_ps(C[k], c);
        e[0][k] = _mm_sub_ps(B[k], A[k]);
        e[1][k] = _mm_sub_ps(C[k], B[k]);
        e[2][k] = _mm_sub_ps(A[k], C[k]);
    }

    /* Magnitudes for the error bounds, per lane. */
    __m128 mabs = _mm_set1_ps(mbox), vmax = _mm_setzero_ps(), emax = _mm_setzero_ps();
    for (int k = 0; k < 3; ++k) {
        mabs = _mm_max_ps(mabs, max4(abs4(A[k]), abs4(B[k]), abs4(C[k])));
        vmax = _mm_max_ps(vmax, max4(abs4(v[0][k]), abs4(v[1][k]), abs4(v[2][k])));
        emax = _mm_max_ps(emax, max4(abs4(e[0][k]), abs4(e[1][k]), abs4(e[2][k])));
    }
    const __m128 u = _mm_set1_ps(1.0f / 8388608.0f), four = _mm_set1_ps(4.0f);
    const __m128 d = _mm_mul_ps(_mm_mul_ps(four, u), mabs);
    const __m128 de = _mm_mul_ps(_mm_mul_ps(_mm_set1_ps(2.0f), u), emax);
    const __m128 S = _mm_add_ps(vmax, _mm_set1_ps(hmaxs));
    /* be = 4 (4 E d + 2 de S + 8 u E S + 2 E (2 d + de)) */
    __m128 be = _mm_add_ps(_mm_mul_ps(_mm_mul_ps(four, emax), d),
                           _mm_mul_ps(_mm_mul_ps(_mm_set1_ps(2.0f), de), S));
    be = _mm_add_ps(be, _mm_mul_ps(_mm_mul_ps(_mm_set1_ps(8.0f), u), _mm_mul_ps(emax, S)));
    be = _mm_add_ps(be, _mm_mul_ps(_mm_mul_ps(_mm_set1_ps(2.0f), emax),
                                   _mm_add_ps(_mm_add_ps(d, d), de)));
    be = _mm_mul_ps(four, be);

    /* Triangle normal, all three corners projected. */
    __m128 nx = _mm_sub_ps(_mm_mul_ps(e[0][1], e[1][2]), _mm_mul_ps(e[0][2], e[1][1]));
    __m128 ny = _mm_sub_ps(_mm_mul_ps(e[0][2], e[1][0]), _mm_mul_ps(e[0][0], e[1][2]));
    __m128 nz = _mm_sub_ps(_mm_mul_ps(e[0][0], e[1][1]), _mm_mul_ps(e[0][1], e[1][0]));
    __m128 q[3];
    for (int i = 0; i < 3; ++i)
        q[i] = _mm_add_ps(_mm_add_ps(_mm_mul_ps(nx, v[i][0]), _mm_mul_ps(ny, v[i][1])),
                          _mm_mul_ps(nz, v[i][2]));
    __m128 rn = _mm_add_ps(_mm_add_ps(_mm_mul_ps(h[0], abs4(nx)), _mm_mul_ps(h[1], abs4(ny))),
                           _mm_mul_ps(h[2], abs4(nz)));
    __m128 sn = _mm_max_ps(_mm_sub_ps(min4(q[0], q[1], q[2]), rn),
                           _mm_sub_ps(_mm_xor_ps(max4(q[0], q[1], q[2]), _mm_set1_ps(-0.0f)), rn));
    __m128 nmax = max4(abs4(nx), abs4(ny), abs4(nz));
    __m128 dn = _mm_add_ps(_mm_mul_ps(_mm_mul_ps(four, emax), de),
                           _mm_mul_ps(_mm_mul_ps(_mm_set1_ps(2.0f), u), _mm_mul_ps(emax, emax)));
    __m128 bn = _mm_add_ps(_mm_mul_ps(_mm_mul_ps(_mm_set1_ps(3.0f), nmax), d),
                           _mm_mul_ps(_mm_mul_ps(_mm_set1_ps(3.0f), S), dn));
    bn = _mm_add_ps(bn, _mm_mul_ps(_mm_mul_ps(_mm_set1_ps(8.0f), u), _mm_mul_ps(nmax, S)));
    bn = _mm_mul_ps(four, bn);
    __m128 is_sep = _mm_cmpgt_ps(sn, bn);
    __m128 is_ovl = _mm_cmplt_ps(sn, _mm_xor_ps(bn, _mm_set1_ps(-0.0f)));

    /* Nine edge x box-axis products: axis x f = (0, -fz, fy), y x f = (fz, 0, -fx),
     * z x f = (-fy, fx, 0); components l1, l2 on coordinates k1, k2. */
    const __m128 zero = _mm_setzero_ps(), ninf = _mm_set1_ps(-INFINITY);
    const __m128 nbe = _mm_xor_ps(be, _mm_set1_ps(-0.0f));
    for (int i = 0; i < 3; ++i) {
        const __m128 *f = e[i];
        for (int axis = 0; axis < 3; ++axis) {
            int k1 = axis == 0 ? 1 : 0, k2 = axis == 2 ? 1 : 2;
            __m128 l1 = axis == 0 ? _mm_sub_ps(zero, f[2]) : axis == 1 ? f[2] : _mm_sub_ps(zero, f[1]);
            __m128 l2 = axis == 0 ? f[1] : axis == 1 ? _mm_sub_ps(zero, f[0]) : f[0];
            __m128 p0 = _mm_add_ps(_mm_mul_ps(l1, v[0][k1]), _mm_mul_ps(l2, v[0][k2]));
            __m128 pa = _mm_add_ps(_mm_mul_ps(l1, v[1][k1]), _mm_mul_ps(l2, v[1][k2]));
            __m128 pb = _mm_add_ps(_mm_mul_ps(l1, v[2][k1]), _mm_mul_ps(l2, v[2][k2]));
            __m128 r = _mm_add_ps(_mm_mul_ps(h[k1], abs4(l1)), _mm_mul_ps(h[k2], abs4(l2)));
            __m128 sa = _mm_max_ps(_mm_sub_ps(min4(p0, pa, pb), r),
                                   _mm_sub_ps(_mm_sub_ps(zero, max4(p0, pa, pb)), r));
            __m128 zl = _mm_and_ps(_mm_cmpeq_ps(l1, zero), _mm_cmpeq_ps(l2, zero));
            sa = _mm_or_ps(_mm_and_ps(zl, ninf), _mm_andnot_ps(zl, sa));
            is_sep = _mm_or_ps(is_sep, _mm_cmpgt_ps(sa, be));
            is_ovl = _mm_and_ps(is_ovl, _mm_cmplt_ps(sa, nbe));
        }
    }
    /* A lane whose bounds are not finite (overflow at extreme coordinates) is left to double. */
    __m128 finite = _mm_and_ps(_mm_cmplt_ps(abs4(be), _mm_set1_ps(INFINITY)),
                               _mm_cmplt_ps(abs4(bn), _mm_set1_ps(INFINITY)));
    int sep_mask = _mm_movemask_ps(_mm_and_ps(is_sep, finite)) & todo;
    int ovl_mask = _mm_movemask_ps(_mm_and_ps(is_ovl, finite)) & todo & ~sep_mask;
    int unsure = todo & ~sep_mask & ~ovl_mask;
    while (unsure) {
        int bit = unsure & -unsure;
        int i = (bit >> 1) - (bit >> 3);
        unsure &= unsure - 1;
        float a[3], b[3], c[3];
        lane_corners(A, B, C, i, a, b, c);
        if (kcc_tri_overlap_box_internal(a, b, c, lo, hi))
            ovl_mask |= bit;
    }
    return ovl_mask;
}
#endif

bool kcc_tri_overlap_aabb(const vec3 a, const vec3 b, const vec3 c, const vec3 box[2])
{
    if (!a || !b || !c || !box)
        return false;
    if (!finite3(a) || !finite3(b) || !finite3(c) || !finite3(box[0]) || !finite3(box[1]))
        return false;
    if (!(box[0][0] <= box[1][0] && box[0][1] <= box[1][1] && box[0][2] <= box[1][2]))
        return false;
    if (kcc_tri_is_degenerate(a, b, c))
        return false;
    return kcc_tri_overlap_box_internal(a, b, c, box[0], box[1]);
}

/* ------------------------------------------------------------------------------------------------
 * Swept SAT. On each axis L (unit length) the triangle projects to [pmin, pmax] and the box,
 * centred at the origin and moved by t * delta, to [-r, r] + t * s with s = L . delta. The
 * projections overlap for t in one interval; the box touches the triangle at the latest entry
 * over all axes if that is no later than the earliest exit. */

/* Times are kept as fractions num / den with den >= 0 (den = 0: +infinity) and compared by cross
 * multiplication, so an axis costs no division; penetration depths are compared squared, so it
 * costs no square root either. */
typedef struct sweep_state {
    double enter_n, enter_d;  /* latest entry time over separated axes */
    double enter_ax[3];       /* its axis (not normalised), oriented from the triangle toward the box */
    double exit_n, exit_d;    /* earliest exit time */
    double pen2, pen_len2;    /* least penetration so far as depth^2 and |axis|^2 (depth = along axis) */
    double pen_dot;           /* dot(unit pen axis, delta), tie-break: most opposed wins */
    double pen_ax[3];         /* its axis (not normalised), oriented from the triangle toward the box */
    double t_max;             /* contacts later than this are of no interest */
    bool   separated;         /* some axis is separated at t = 0 */
    bool   has_pen;
    bool   track_pen;         /* keep the least-penetration axis (only needed when none separates) */
} sweep_state;

/* a_n / a_d < b_n / b_d for non-negative denominators (0 meaning +infinity). */
static inline bool frac_less(double an, double ad, double bn, double bd)
{
    return an * bd < bn * ad;
}

/* One axis L, given the triangle's projection [pmin, pmax] (box centre at the origin), the box's
 * projected radius r and s = L . delta. Returns false when this axis proves there is no contact
 * within t in [0, t_max]. Entry and exit times are ratios of projections and do not depend on
 * |L|, so L is used unnormalised. */
KCC_HOT bool sweep_proj(sweep_state *st, double pmin, double pmax, double r, double s, double lx,
                       double ly, double lz)
{
    /* Every axis tested here has a length: box axes, or ones with two non-zero components that are
     * products of float differences (no underflow in double). */
    double en, ed, xn, xd, sign;
    if (pmin > r) {                     /* triangle ahead along +L: box must move along +L */
        if (!(s > 0.0))
            return false;
        en = pmin - r, ed = s;
        xn = pmax + r, xd = s;
        sign = -1.0;                    /* the box is on the -L side of the triangle */
    } else if (pmax < -r) {             /* triangle behind along -L */
        if (!(s < 0.0))
            return false;
        en = -(pmax + r), ed = -s;
        xn = r - pmin, xd = -s;
        sign = 1.0;
    } else {                            /* overlapping on this axis at t = 0 */
        double up = pmax + r;           /* push the box along +L by this much to separate */
        double down = r - pmin;         /* ... or along -L by this much */
        if (st->track_pen && !st->separated) { /* depths matter only while no axis separates */
            double len2 = lx * lx + ly * ly + lz * lz;
            double pen = up <= down ? up : down;
            double nsign = up <= down ? 1.0 : -1.0;
            double p2n = pen * pen;
            bool better = !st->has_pen || frac_less(p2n, len2, st->pen2, st->pen_len2);
            bool tie = st->has_pen && !better && !frac_less(st->pen2, st->pen_len2, p2n, len2);
            if (better || tie || up == down) {
                double inv = 1.0 / sqrt(len2);
                double pdot = nsign * s * inv;
                if (up == down && -s * inv < pdot) { /* equal both ways: the side delta pushes into */
                    nsign = -1.0;
                    pdot = -s * inv;
                }
                if (better || (tie && pdot < st->pen_dot)) {
                    st->has_pen = true;
                    st->pen2 = p2n;
                    st->pen_len2 = len2;
                    st->pen_dot = pdot;
                    st->pen_ax[0] = nsign * lx;
                    st->pen_ax[1] = nsign * ly;
                    st->pen_ax[2] = nsign * lz;
                }
            }
        }
        if (s > 0.0)
            xn = up, xd = s;
        else if (s < 0.0)
            xn = down, xd = -s;
        else
            xn = 1.0, xd = 0.0;
        if (frac_less(xn, xd, st->exit_n, st->exit_d))
            st->exit_n = xn, st->exit_d = xd;
        return !frac_less(st->exit_n, st->exit_d, st->enter_n, st->enter_d);
    }
    if (en > st->t_max * ed)
        return false;
    if (!st->separated || frac_less(st->enter_n, st->enter_d, en, ed)) {
        st->separated = true;
        st->enter_n = en, st->enter_d = ed;
        st->enter_ax[0] = sign * lx;
        st->enter_ax[1] = sign * ly;
        st->enter_ax[2] = sign * lz;
    }
    if (frac_less(xn, xd, st->exit_n, st->exit_d))
        st->exit_n = xn, st->exit_d = xd;
    return !frac_less(st->exit_n, st->exit_d, st->enter_n, st->enter_d);
}

/* The three edge-cross-box-axis axes of edge f (from corner P; Q is the third corner). */
KCC_HOT bool sweep_edge(sweep_state *st, double f0, double f1, double f2, double P0, double P1,
                        double P2, double Q0, double Q1, double Q2, const double half[3],
                        const double delta[3])
{
    double pP, pQ;
    /* x cross f = (0, -fz, fy) */
    if (f1 != 0.0 && f2 != 0.0) {
        pP = -f2 * P1 + f1 * P2, pQ = -f2 * Q1 + f1 * Q2;
        if (!sweep_proj(st, pP < pQ ? pP : pQ, pP < pQ ? pQ : pP,
                        half[1] * fabs(f2) + half[2] * fabs(f1),
                        -f2 * delta[1] + f1 * delta[2], 0.0, -f2, f1))
            return false;
    }
    /* y cross f = (fz, 0, -fx) */
    if (f0 != 0.0 && f2 != 0.0) {
        pP = f2 * P0 - f0 * P2, pQ = f2 * Q0 - f0 * Q2;
        if (!sweep_proj(st, pP < pQ ? pP : pQ, pP < pQ ? pQ : pP,
                        half[0] * fabs(f2) + half[2] * fabs(f0),
                        f2 * delta[0] - f0 * delta[2], f2, 0.0, -f0))
            return false;
    }
    /* z cross f = (-fy, fx, 0) */
    if (f0 != 0.0 && f1 != 0.0) {
        pP = -f1 * P0 + f0 * P1, pQ = -f1 * Q0 + f0 * Q1;
        if (!sweep_proj(st, pP < pQ ? pP : pQ, pP < pQ ? pQ : pP,
                        half[0] * fabs(f1) + half[1] * fabs(f0),
                        -f1 * delta[0] + f0 * delta[1], -f1, f0, 0.0))
            return false;
    }
    return true;
}

/* The test proper. Without track_pen it skips the penetration bookkeeping and returns -1 when no
 * axis separates (the box touches or overlaps at t = 0): the caller then runs it again with it. The
 * bookkeeping never changes which axes separate, so both runs make the same decisions. Corners and
 * edges live in named locals, not arrays: arrays written a double at a time and read back two at
 * a time (the vectoriser's pairs) stall the store forwarding. */
static int sweep_core(const float a[3], const float b[3], const float c[3], const double center[3],
                      const double half[3], const double delta[3], double t_max, bool track_pen,
                      double *out_t, double out_normal[3], bool *out_start)
{
    const double ax = (double)a[0] - center[0], ay = (double)a[1] - center[1], az = (double)a[2] - center[2];
    const double bx = (double)b[0] - center[0], by = (double)b[1] - center[1], bz = (double)b[2] - center[2];
    const double cx = (double)c[0] - center[0], cy = (double)c[1] - center[1], cz = (double)c[2] - center[2];
    /* edge i runs from corner i to corner i + 1 */
    const double e0x = bx - ax, e0y = by - ay, e0z = bz - az;
    const double e1x = cx - bx, e1y = cy - by, e1z = cz - bz;
    const double e2x = ax - cx, e2y = ay - cy, e2z = az - cz;
    /* Every field set one by one (a memset here is a slow string store in the hottest loop). */
    sweep_state st;
    st.enter_n = -1.0, st.enter_d = 1.0;
    st.enter_ax[0] = st.enter_ax[1] = st.enter_ax[2] = 0.0;
    st.exit_n = 1.0, st.exit_d = 0.0;
    st.pen2 = st.pen_len2 = st.pen_dot = 0.0;
    st.pen_ax[0] = st.pen_ax[1] = st.pen_ax[2] = 0.0;
    st.t_max = t_max;
    st.separated = st.has_pen = false;
    st.track_pen = track_pen;
    /* Cheapest and most decisive axes first: the box axes, the triangle normal, then edges. */
    if (!sweep_proj(&st, min3d(ax, bx, cx), max3d(ax, bx, cx), half[0], delta[0], 1.0, 0.0, 0.0) ||
        !sweep_proj(&st, min3d(ay, by, cy), max3d(ay, by, cy), half[1], delta[1], 0.0, 1.0, 0.0) ||
        !sweep_proj(&st, min3d(az, bz, cz), max3d(az, bz, cz), half[2], delta[2], 0.0, 0.0, 1.0))
        return false;
    double nx = e0y * e1z - e0z * e1y;
    double ny = e0z * e1x - e0x * e1z;
    double nz = e0x * e1y - e0y * e1x;
    /* An axis with two zero components is a box axis again (tested above, same interval up to
     * scale): skipped. Axis-aligned faces, most of a brush level, so need 4 axes instead of 13. */
    if (((nx == 0.0) + (ny == 0.0) + (nz == 0.0)) < 2) {
        double q0 = nx * ax + ny * ay + nz * az;
        double q1 = nx * bx + ny * by + nz * bz;
        double q2 = nx * cx + ny * cy + nz * cz;
        if (!sweep_proj(&st, min3d(q0, q1, q2), max3d(q0, q1, q2),
                        half[0] * fabs(nx) + half[1] * fabs(ny) + half[2] * fabs(nz),
                        delta[0] * nx + delta[1] * ny + delta[2] * nz, nx, ny, nz))
            return false;
    }
    /* Edge i from corner i; the third corner is i + 2. */
    if (!sweep_edge(&st, e0x, e0y, e0z, ax, ay, az, cx, cy, cz, half, delta) ||
        !sweep_edge(&st, e1x, e1y, e1z, bx, by, bz, ax, ay, az, half, delta) ||
        !sweep_edge(&st, e2x, e2y, e2z, cx, cy, cz, bx, by, bz, half, delta))
        return false;
    if (st.separated) {
        if (frac_less(st.exit_n, st.exit_d, st.enter_n, st.enter_d) ||
            !(st.enter_n <= t_max * st.enter_d) || !(st.enter_n >= 0.0) || !(st.enter_d > 0.0))
            return false;
        double dn = st.enter_ax[0] * delta[0] + st.enter_ax[1] * delta[1] + st.enter_ax[2] * delta[2];
        if (!(dn < 0.0))
            return false;
        double inv = 1.0 / sqrt(st.enter_ax[0] * st.enter_ax[0] + st.enter_ax[1] * st.enter_ax[1] +
                                st.enter_ax[2] * st.enter_ax[2]);
        double t = st.enter_n / st.enter_d;
        *out_t = t < t_max ? t : t_max;
        for (int k = 0; k < 3; ++k)
            out_normal[k] = st.enter_ax[k] * inv;
        *out_start = false;
        return true;
    }
    /* Overlapping (or touching) at t = 0: least penetration axis, if delta pushes deeper. A delta
     * within a millionth of a radian of parallel to that axis's plane does not: that much is the
     * rounding of a direction computed in float (a slide along a slope's foot whose line is off
     * the axes), and such a slide must go on (sliding_along_a_steep_foot_off_the_axes_never_sticks). */
    if (!track_pen)
        return -1;
    const double dlen = sqrt(delta[0] * delta[0] + delta[1] * delta[1] + delta[2] * delta[2]);
    if (!st.has_pen || !(st.pen_dot < -1e-6 * dlen))
        return false;
    double inv = 1.0 / sqrt(st.pen_ax[0] * st.pen_ax[0] + st.pen_ax[1] * st.pen_ax[1] +
                            st.pen_ax[2] * st.pen_ax[2]);
    *out_t = 0.0;
    for (int k = 0; k < 3; ++k)
        out_normal[k] = st.pen_ax[k] * inv;
    *out_start = st.pen2 > 0.0;
    return true;
}

bool kcc_tri_sweep_internal(const float a[3], const float b[3], const float c[3],
                            const double center[3], const double half[3], const double delta[3],
                            double t_max, double *out_t, double out_normal[3], bool *out_start)
{
    int r = sweep_core(a, b, c, center, half, delta, t_max, false, out_t, out_normal, out_start);
    if (r < 0)
        r = sweep_core(a, b, c, center, half, delta, t_max, true, out_t, out_normal, out_start);
    return r > 0;
}

bool kcc_tri_sweep_aabb(const vec3 a, const vec3 b, const vec3 c, const vec3 box[2],
                        const vec3 delta, float *out_t, vec3 out_normal, bool *out_start_overlap)
{
    if (!a || !b || !c || !box || !delta)
        return false;
    if (!finite3(a) || !finite3(b) || !finite3(c) || !finite3(box[0]) || !finite3(box[1]) ||
        !finite3(delta))
        return false;
    if (!(box[0][0] <= box[1][0] && box[0][1] <= box[1][1] && box[0][2] <= box[1][2]))
        return false;
    if (kcc_tri_is_degenerate(a, b, c))
        return false;
    double ctr[3], half[3], d[3] = {delta[0], delta[1], delta[2]}, t, n[3];
    kcc_box_center_half_d(box[0], box[1], ctr, half);
    bool start;
    if (!kcc_tri_sweep_internal(a, b, c, ctr, half, d, 1.0, &t, n, &start))
        return false;
    if (out_t)
        *out_t = (float)t;
    if (out_normal) {
        out_normal[0] = (float)n[0];
        out_normal[1] = (float)n[1];
        out_normal[2] = (float)n[2];
    }
    if (out_start_overlap)
        *out_start_overlap = start;
    return true;
}
