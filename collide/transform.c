/* transform.c: rigid placements: checking and normalising quaternions, poses (a transform with its
 * rotation matrix), placing points and boxes, and the shortest-arc motion between two poses. */
#include <math.h>

#include "kcc_world_internal.h"

kcc_transform kcc_transform_identity(void)
{
    kcc_transform t = {{0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 1.0f}};
    return t;
}

void kcc_pose_set(kcc_pose *pose, const kcc_transform *t)
{
    pose->transform = *t;
    const float x = t->rotation[0], y = t->rotation[1], z = t->rotation[2], w = t->rotation[3];
    pose->m[0][0] = 1.0f - 2.0f * (y * y + z * z);
    pose->m[0][1] = 2.0f * (x * y - z * w);
    pose->m[0][2] = 2.0f * (x * z + y * w);
    pose->m[1][0] = 2.0f * (x * y + z * w);
    pose->m[1][1] = 1.0f - 2.0f * (x * x + z * z);
    pose->m[1][2] = 2.0f * (y * z - x * w);
    pose->m[2][0] = 2.0f * (x * z - y * w);
    pose->m[2][1] = 2.0f * (y * z + x * w);
    pose->m[2][2] = 1.0f - 2.0f * (x * x + y * y);
    pose->rotated = !(x == 0.0f && y == 0.0f && z == 0.0f && w == 1.0f);
}

void kcc_transform_point(const kcc_transform *t, const vec3 p, vec3 out)
{
    kcc_pose pose;
    kcc_pose_set(&pose, t);
    float r[3];
    kcc_pose_point(&pose, p, r);
    out[0] = r[0], out[1] = r[1], out[2] = r[2];
}

void kcc_transform_vector(const kcc_transform *t, const vec3 v, vec3 out)
{
    kcc_pose pose;
    kcc_pose_set(&pose, t);
    float r[3];
    kcc_pose_vector(&pose, v, r);
    out[0] = r[0], out[1] = r[1], out[2] = r[2];
}

void kcc_transform_inverse_point(const kcc_transform *t, const vec3 p, vec3 out)
{
    kcc_pose pose;
    kcc_pose_set(&pose, t);
    const float d[3] = {p[0] - t->position[0], p[1] - t->position[1], p[2] - t->position[2]};
    float r[3];
    kcc_pose_vector_inverse(&pose, d, r);
    out[0] = r[0], out[1] = r[1], out[2] = r[2];
}

void kcc_transform_interpolate(const kcc_transform *a, const kcc_transform *b, float s,
                               kcc_transform *out)
{
    kcc_transform r;
    for (int k = 0; k < 3; ++k)
        r.position[k] = a->position[k] + (b->position[k] - a->position[k]) * s;
    double qa[4], qb[4], dot = 0.0;
    for (int k = 0; k < 4; ++k) {
        qa[k] = a->rotation[k];
        qb[k] = b->rotation[k];
        dot += qa[k] * qb[k];
    }
    if (dot < 0.0) { /* q and -q are one rotation: take the nearer sign, the shorter arc */
        for (int k = 0; k < 4; ++k)
            qb[k] = -qb[k];
        dot = -dot;
    }
    double wa = 1.0 - s, wb = s;
    if (dot < 0.9999) { /* slerp; nearly equal rotations interpolate linearly (no 0 / 0) */
        const double angle = acos(dot), sin_angle = sin(angle);
        wa = sin((1.0 - s) * angle) / sin_angle;
        wb = sin(s * angle) / sin_angle;
    }
    double q[4], len = 0.0;
    for (int k = 0; k < 4; ++k) {
        q[k] = wa * qa[k] + wb * qb[k];
        len += q[k] * q[k];
    }
    len = sqrt(len);
    for (int k = 0; k < 4; ++k)
        r.rotation[k] = (float)(q[k] / len);
    *out = r;
}

/// The rounding allowance of placing points of magnitude up to `extent` by a pose whose position
/// has magnitude up to `offset`: kcc_pose_point rounds four times, each by at most 2^-24 of the
/// running sum; 2^-18 of the magnitudes covers that with room, and the float matrix's departure
/// from an exact rotation (a few ulps) as well.
static double placement_margin(double extent, double offset)
{
    return 0x1p-18 * (extent + offset) + 0x1p-126;
}

static double max_abs3(const float v[3])
{
    return fmax(fabs((double)v[0]), fmax(fabs((double)v[1]), fabs((double)v[2])));
}

/// Rounds [lo, hi] (double) out to floats that contain it.
static void box_to_float_outward(const double lo[3], const double hi[3], float out_lo[3],
                                 float out_hi[3])
{
    for (int k = 0; k < 3; ++k) {
        float l = (float)lo[k], h = (float)hi[k];
        out_lo[k] = (double)l > lo[k] ? nextafterf(l, -INFINITY) : l;
        out_hi[k] = (double)h < hi[k] ? nextafterf(h, INFINITY) : h;
    }
}

void kcc_pose_box_bounds(const kcc_pose *pose, const float lo[3], const float hi[3],
                         float out_lo[3], float out_hi[3])
{
    const float *t = pose->transform.position;
    const double margin = placement_margin(fmax(max_abs3(lo), max_abs3(hi)), max_abs3(t));
    double wlo[3], whi[3];
    for (int i = 0; i < 3; ++i) {
        double center = t[i], half = margin;
        for (int j = 0; j < 3; ++j) {
            center += (double)pose->m[i][j] * 0.5 * ((double)lo[j] + (double)hi[j]);
            half += fabs((double)pose->m[i][j]) * 0.5 * ((double)hi[j] - (double)lo[j]);
        }
        wlo[i] = center - half;
        whi[i] = center + half;
    }
    box_to_float_outward(wlo, whi, out_lo, out_hi);
}

void kcc_pose_box_local_bounds(const kcc_pose *pose, const float lo[3], const float hi[3],
                               float local_extent, float out_lo[3], float out_hi[3])
{
    const float *t = pose->transform.position;
    const double reach = fmax(fmax(max_abs3(lo), max_abs3(hi)), (double)local_extent);
    const double margin = 2.0 * placement_margin(reach, max_abs3(t));
    double llo[3], lhi[3];
    for (int i = 0; i < 3; ++i) {
        double center = 0.0, half = margin;
        for (int j = 0; j < 3; ++j) {
            const double c = 0.5 * ((double)lo[j] + (double)hi[j]) - (double)t[j];
            center += (double)pose->m[j][i] * c;
            half += fabs((double)pose->m[j][i]) * (0.5 * ((double)hi[j] - (double)lo[j]) + margin);
        }
        llo[i] = center - half;
        lhi[i] = center + half;
    }
    box_to_float_outward(llo, lhi, out_lo, out_hi);
}

void kcc_pose_points_bounds(const kcc_pose *pose, const float (*points)[3], uint32_t count,
                            float out_lo[3], float out_hi[3])
{
    const float *t = pose->transform.position;
    double wlo[3] = {INFINITY, INFINITY, INFINITY}, whi[3] = {-INFINITY, -INFINITY, -INFINITY};
    double extent = 0.0;
    for (uint32_t p = 0; p < count; ++p) {
        extent = fmax(extent, max_abs3(points[p]));
        for (int i = 0; i < 3; ++i) {
            double w = t[i];
            for (int j = 0; j < 3; ++j)
                w += (double)pose->m[i][j] * (double)points[p][j];
            wlo[i] = fmin(wlo[i], w);
            whi[i] = fmax(whi[i], w);
        }
    }
    const double margin = placement_margin(extent, max_abs3(t));
    for (int i = 0; i < 3; ++i)
        wlo[i] -= margin, whi[i] += margin;
    box_to_float_outward(wlo, whi, out_lo, out_hi);
}
