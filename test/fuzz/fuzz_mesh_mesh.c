/* fuzz_mesh_mesh.c: libFuzzer target for mesh against mesh and self-intersections. The bytes make
 * two small triangle soups (coordinates on a 1/8 m grid, so touching and coplanar pairs are
 * common) and a pose for the second; kcc_mesh_overlap_mesh must list exactly the pairs the
 * brute force over kcc_tri_intersect_tri finds on the placed corners, in ascending order, with
 * segments on both triangles, and kcc_mesh_self_intersections only pairs that intersect, among
 * them every intersecting pair that shares no corner. Any inconsistency aborts. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "fuzz.h"
#include "kcc_world.h"

#define MAX_TRIS 24u

static uint32_t soup(reader *r, float *pos)
{
    const uint32_t n = 1u + byte(r) % MAX_TRIS;
    for (uint32_t i = 0; i < 9 * n; ++i)
        pos[i] = (float)((int)byte(r) - 128) / 8.0f;
    return n;
}

static kcc_mesh *build(const float *pos, uint32_t n)
{
    kcc_mesh_desc d = {.positions = pos, .vertex_count = 3 * n, .triangle_count = n};
    kcc_mesh *m = NULL;
    return kcc_mesh_build(&d, &m) == KCC_OK ? m : NULL;
}

/* Triangle i placed by pose; false when the mesh holds it as degenerate (zero area as built: it
 * never pairs, even where placement rounds its corners apart). A live triangle always overlaps
 * its own bounds, a degenerate one never (kcc_tri_overlap_aabb). */
static bool placed(const kcc_mesh *m, const kcc_transform *pose, uint32_t i, vec3 out[3])
{
    vec3 c[3], box[2];
    CHECK(kcc_mesh_triangle(m, i, c));
    for (int k = 0; k < 3; ++k) {
        kcc_transform_point(pose, c[k], out[k]);
        box[0][k] = fminf(c[0][k], fminf(c[1][k], c[2][k]));
        box[1][k] = fmaxf(c[0][k], fmaxf(c[1][k], c[2][k]));
    }
    return kcc_tri_overlap_aabb(c[0], c[1], c[2], (const float(*)[3])box);
}

static double distance_to_segment(const float p[3], const float a[3], const float b[3])
{
    double ab[3], ap[3], len2 = 0.0, s = 0.0, d = 0.0;
    for (int k = 0; k < 3; ++k) {
        ab[k] = (double)b[k] - a[k], ap[k] = (double)p[k] - a[k];
        len2 += ab[k] * ab[k], s += ap[k] * ab[k];
    }
    s = len2 > 0.0 ? fmin(1.0, fmax(0.0, s / len2)) : 0.0;
    for (int k = 0; k < 3; ++k)
        d += (ap[k] - s * ab[k]) * (ap[k] - s * ab[k]);
    return sqrt(d);
}

/* p lies on triangle t within tol: near its plane and inside, or near an edge. */
static bool on_triangle(const float p[3], vec3 t[3], double tol)
{
    double e0[3], e1[3], n[3], ap[3];
    for (int k = 0; k < 3; ++k)
        e0[k] = (double)t[1][k] - t[0][k], e1[k] = (double)t[2][k] - t[0][k],
        ap[k] = (double)p[k] - t[0][k];
    n[0] = e0[1] * e1[2] - e0[2] * e1[1], n[1] = e0[2] * e1[0] - e0[0] * e1[2];
    n[2] = e0[0] * e1[1] - e0[1] * e1[0];
    const double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    const double h = (ap[0] * n[0] + ap[1] * n[1] + ap[2] * n[2]) / len;
    bool inside = fabs(h) <= tol;
    for (int i = 0; i < 3 && inside; ++i) {
        const int j = (i + 1) % 3;
        double e[3], f[3];
        for (int k = 0; k < 3; ++k)
            e[k] = (double)t[j][k] - t[i][k], f[k] = (double)p[k] - t[i][k];
        const double c[3] = {e[1] * f[2] - e[2] * f[1], e[2] * f[0] - e[0] * f[2],
                             e[0] * f[1] - e[1] * f[0]};
        inside = (c[0] * n[0] + c[1] * n[1] + c[2] * n[2]) / len >= -tol * sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]);
    }
    return inside || distance_to_segment(p, t[0], t[1]) <= tol ||
           distance_to_segment(p, t[1], t[2]) <= tol || distance_to_segment(p, t[2], t[0]) <= tol;
}

static void check_overlap(const kcc_mesh *a, const kcc_mesh *b, const kcc_transform *pose)
{
    static kcc_tri_pair pairs[MAX_TRIS * MAX_TRIS];
    const kcc_transform id = kcc_transform_identity();
    const uint32_t n = kcc_mesh_overlap_mesh(a, NULL, b, pose, pairs, MAX_TRIS * MAX_TRIS);
    CHECK(n == kcc_mesh_overlap_mesh(a, &id, b, pose, NULL, 0));
    uint32_t k = 0;
    for (uint32_t i = 0; i < kcc_mesh_triangle_count(a); ++i)
        for (uint32_t j = 0; j < kcc_mesh_triangle_count(b); ++j) {
            vec3 ta[3], tb[3], seg[2];
            const bool live_a = placed(a, &id, i, ta), live = placed(b, pose, j, tb) && live_a;
            const bool hit = live && kcc_tri_intersect_tri(ta[0], ta[1], ta[2], tb[0], tb[1], tb[2], seg);
            const bool listed = k < n && pairs[k].a == i && pairs[k].b == j;
            CHECK(hit == listed);
            if (!listed)
                continue;
            for (int e = 0; e < 2; ++e) {
                CHECK(on_triangle(pairs[k].segment[e], ta, 1e-3));
                CHECK(on_triangle(pairs[k].segment[e], tb, 1e-3));
            }
            ++k;
        }
    CHECK(k == n);
}

static bool share_corner(vec3 a[3], vec3 b[3])
{
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            if (a[i][0] == b[j][0] && a[i][1] == b[j][1] && a[i][2] == b[j][2])
                return true;
    return false;
}

static void check_self(const kcc_mesh *m)
{
    static kcc_tri_pair pairs[MAX_TRIS * MAX_TRIS];
    const kcc_transform id = kcc_transform_identity();
    const uint32_t n = kcc_mesh_self_intersections(m, pairs, MAX_TRIS * MAX_TRIS);
    uint32_t k = 0;
    for (uint32_t i = 0; i < kcc_mesh_triangle_count(m); ++i)
        for (uint32_t j = i + 1; j < kcc_mesh_triangle_count(m); ++j) {
            vec3 ta[3], tb[3];
            const bool live_a = placed(m, &id, i, ta), live = placed(m, &id, j, tb) && live_a;
            const bool hit = live && kcc_tri_intersect_tri(ta[0], ta[1], ta[2], tb[0], tb[1], tb[2], NULL);
            const bool listed = k < n && pairs[k].a == i && pairs[k].b == j;
            CHECK(!listed || hit);
            CHECK(listed || !hit || share_corner(ta, tb));
            k += listed;
        }
    CHECK(k == n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = {data, size};
    float pa[9 * MAX_TRIS], pb[9 * MAX_TRIS];
    const uint32_t na = soup(&r, pa), nb = soup(&r, pb);
    kcc_transform pose = kcc_transform_identity();
    if (byte(&r) & 1) { /* a rotation about a byte-chosen axis, and a shift */
        const double angle = byte(&r) / 40.0, axis[3] = {byte(&r) - 127.5, byte(&r) - 127.5, byte(&r) - 127.5};
        const double len = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
        for (int k = 0; k < 3; ++k)
            pose.rotation[k] = (float)(sin(angle / 2) * axis[k] / len);
        pose.rotation[3] = (float)cos(angle / 2);
    }
    for (int k = 0; k < 3; ++k)
        pose.position[k] = (float)((int)byte(&r) - 128) / 16.0f;
    kcc_mesh *a = build(pa, na), *b = build(pb, nb);
    if (a && b)
        check_overlap(a, b, &pose);
    if (a)
        check_self(a);
    kcc_mesh_destroy(a);
    kcc_mesh_destroy(b);
    return 0;
}
