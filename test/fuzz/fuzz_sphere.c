/* fuzz_sphere.c: libFuzzer target for the sphere and capsule queries. The bytes build a small
 * triangle soup (corners on a 0.25 m grid, so shared edges, coplanar, parallel and degenerate
 * triangles are common) and up to 24 queries: swept spheres, swept capsules and sphere overlaps,
 * on the grid (starts touching faces, edges and vertices exactly) or from raw floats (NaN,
 * infinities, 0, negative and huge radii). Checks, aborting on failure (libFuzzer reports the input):
 * - every mesh answer is the brute force over the per-triangle primitive (kcc_tri_sweep_sphere,
 *   kcc_tri_sweep_capsule, kcc_tri_overlap_sphere): the same time, triangle, point, normal and
 *   start flag bit for bit (earliest, ties to the lowest index), the same overlap count;
 * - bad input (non-finite, radius <= 0) answers false / 0 and leaves the hit untouched;
 * - a hit has t in [0, 1], a finite point and a unit normal that does not point along delta (a
 *   graze is perpendicular to it); a start overlap is at t = 0;
 * - for a sphere from a clear start, at the reported time the sphere grown by a tolerance overlaps
 *   the reported triangle (kcc_tri_overlap_sphere, the closest-point test: independent of the
 *   sweep's quadratics), and the sphere shrunk by it overlaps none, there and at samples before.
 * `make fuzz` explores with it, `make fuzz-check` (part of `make test`) repeats a fixed run. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "fuzz.h"
#include "kcc.h"

#define MAX_TRIANGLES 32
#define MAX_QUERIES   24

typedef struct soup {
    float     pos[9 * MAX_TRIANGLES];
    uint32_t  n;
    kcc_mesh *mesh;
} soup;

/* One query's shape: the sphere (p1 == p0) or capsule, its radius and delta. */
typedef struct query {
    float p0[3], p1[3], d[3], r;
    bool  capsule, raw;
} query;

static void read_query(reader *r, uint8_t op, query *q)
{
    q->capsule = (op & 2) != 0;
    q->raw = (op & 4) != 0;
    for (int k = 0; k < 3; ++k) {
        q->p0[k] = q->raw ? raw_float(r) : grid(r);
        q->p1[k] = q->capsule ? (q->raw ? raw_float(r) : grid(r)) : q->p0[k];
        q->d[k] = q->raw ? raw_float(r) : grid(r);
    }
    q->r = q->raw ? raw_float(r) : (float)byte(r) / 32.0f + 0.0625f * (float)(op >> 6);
}

static bool finite3(const float v[3])
{
    return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]);
}

static bool query_valid(const query *q)
{
    return finite3(q->p0) && finite3(q->p1) && finite3(q->d) && isfinite(q->r) && q->r > 0.0f;
}

static bool brute_sweep(const soup *s, const query *q, kcc_sphere_hit *out)
{
    bool any = false;
    for (uint32_t i = 0; i < s->n; ++i) {
        const float *t = s->pos + 9 * i;
        kcc_sphere_hit h;
        const bool hit = q->capsule ? kcc_tri_sweep_capsule(t, t + 3, t + 6, q->p0, q->p1, q->r, q->d, &h)
                                    : kcc_tri_sweep_sphere(t, t + 3, t + 6, q->p0, q->r, q->d, &h);
        if (hit && (!any || h.t < out->t)) {
            *out = h;
            out->triangle = i;
            any = true;
        }
    }
    return any;
}

/* The sphere at c (+ s d) of radius r overlaps how many triangles (brute force). */
static uint32_t brute_overlap(const soup *s, const float c[3], float r)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->n; ++i) {
        const float *t = s->pos + 9 * i;
        n += kcc_tri_overlap_sphere(t, t + 3, t + 6, c, r) ? 1u : 0u;
    }
    return n;
}

static void at_time(const query *q, float t, float out[3])
{
    for (int k = 0; k < 3; ++k)
        out[k] = q->p0[k] + t * q->d[k];
}

/* The sphere's hit against the closest-point overlap test (see the file comment). */
static void check_sphere_geometry(const soup *s, const query *q, bool hit, const kcc_sphere_hit *h)
{
    float scale = q->r;
    for (int k = 0; k < 3; ++k)
        scale += fabsf(q->p0[k]) + fabsf(q->d[k]);
    const float tol = 1e-3f * q->r + 1e-5f * scale;
    if (q->r <= 2.0f * tol || brute_overlap(s, q->p0, q->r + tol) != 0)
        return; /* not clearly clear at the start */
    const float end = hit ? h->t : 1.0f;
    float c[3];
    if (hit) {
        CHECK(!h->start_overlap && h->t > 0.0f);
        at_time(q, h->t, c);
        const float *t = s->pos + 9 * h->triangle;
        CHECK(kcc_tri_overlap_sphere(t, t + 3, t + 6, c, q->r + tol));
    }
    for (int i = 0; i <= 8; ++i) {
        at_time(q, end * (float)i / 8.0f, c);
        CHECK(brute_overlap(s, c, q->r - tol) == 0);
    }
}

static void run_sweep(const soup *s, const query *q)
{
    kcc_sphere_hit h, want, blank;
    memset(&blank, 0xa5, sizeof blank);
    h = blank;
    const bool hit = q->capsule ? kcc_mesh_sweep_capsule(s->mesh, q->p0, q->p1, q->r, q->d, &h)
                                : kcc_mesh_sweep_sphere(s->mesh, q->p0, q->r, q->d, &h);
    const bool zero = q->d[0] == 0.0f && q->d[1] == 0.0f && q->d[2] == 0.0f;
    if (!query_valid(q) || zero) {
        CHECK(!hit && memcmp(&h, &blank, sizeof h) == 0);
        return;
    }
    CHECK(hit == brute_sweep(s, q, &want));
    if (hit) {
        CHECK(h.t == want.t && h.triangle == want.triangle && h.start_overlap == want.start_overlap);
        CHECK(memcmp(h.point, want.point, sizeof h.point) == 0);
        CHECK(memcmp(h.normal, want.normal, sizeof h.normal) == 0);
        CHECK(h.t >= 0.0f && h.t <= 1.0f && finite3(h.point) && finite3(h.normal));
        const double len = sqrt((double)h.normal[0] * h.normal[0] + (double)h.normal[1] * h.normal[1] +
                                (double)h.normal[2] * h.normal[2]);
        CHECK(fabs(len - 1.0) < 1e-5);
        /* approaching (a graze along the surface: perpendicular, within rounding) */
        const double dlen = sqrt((double)q->d[0] * q->d[0] + (double)q->d[1] * q->d[1] +
                                 (double)q->d[2] * q->d[2]);
        CHECK(h.normal[0] * (double)q->d[0] + h.normal[1] * (double)q->d[1] +
              h.normal[2] * (double)q->d[2] <= 1e-5 * dlen);
        CHECK(!h.start_overlap || h.t == 0.0f);
    }
    if (!q->capsule && !q->raw)
        check_sphere_geometry(s, q, hit, &h);
}

static void run_overlap(const soup *s, const query *q, uint8_t cap)
{
    uint32_t out[MAX_TRIANGLES];
    const uint32_t capacity = cap % (MAX_TRIANGLES + 1);
    const uint32_t n = kcc_mesh_overlap_sphere(s->mesh, q->p0, q->r, out, capacity);
    if (!finite3(q->p0) || !isfinite(q->r) || !(q->r > 0.0f)) {
        CHECK(n == 0);
        return;
    }
    CHECK(n == brute_overlap(s, q->p0, q->r));
    for (uint32_t i = 0; i < n && i < capacity; ++i) {
        const float *t = s->pos + 9 * out[i];
        CHECK(out[i] < s->n && kcc_tri_overlap_sphere(t, t + 3, t + 6, q->p0, q->r));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = {data, size};
    soup s;
    s.n = 1u + byte(&r) % MAX_TRIANGLES;
    for (uint32_t i = 0; i < 9 * s.n; ++i)
        s.pos[i] = grid(&r);
    kcc_mesh_desc md;
    memset(&md, 0, sizeof md);
    md.positions = s.pos;
    md.vertex_count = 3 * s.n;
    md.triangle_count = s.n;
    s.mesh = NULL;
    if (kcc_mesh_build(&md, &s.mesh) != KCC_OK) {
        CHECK(s.mesh == NULL);
        return 0;
    }
    for (int i = 0; i < MAX_QUERIES && r.n > 0; ++i) {
        const uint8_t op = byte(&r);
        query q;
        read_query(&r, op, &q);
        if (op & 1)
            run_overlap(&s, &q, byte(&r));
        else
            run_sweep(&s, &q);
    }
    kcc_mesh_destroy(s.mesh);
    return 0;
}
