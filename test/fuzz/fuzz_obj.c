/* fuzz_obj.c: libFuzzer target for the OBJ reader and the mesh behind it. Feeds the bytes to
 * kcc_level_parse_obj; when they parse, checks the level is well formed, builds a mesh (small
 * inputs only, so one run stays fast) and runs ray casts, box overlaps and sweeps derived from
 * the bytes, cross-checking each answer against brute force over the per-triangle primitives.
 * The first whitespace-delimited token also goes through the number parser, checked against
 * glibc's correctly rounded strtof (the fuzzer runs in the "C" locale).
 * Any inconsistency aborts, which libFuzzer reports with the input. `make fuzz` runs it. */
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "kcc_level.h"
#include "level_internal.h"   /* kcc_text_to_float */

#define MAX_MESH_TRIANGLES 2000u   /* larger inputs are parsed but not built into a mesh */

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t next(rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi]. */
static float uniform(rng *r, float lo, float hi)
{
    float u = (float)(next(r) >> 40) * 0x1p-24f;
    return lo + (hi - lo) * u;
}

static float clampf(double v)
{
    return v > 1e30 ? 1e30f : v < -1e30 ? -1e30f : (float)v;
}

/* A point around the level bounds (the bounds grown by a quarter on each side). */
static void random_point(rng *r, const float lo[3], const float hi[3], float out[3])
{
    for (int k = 0; k < 3; ++k) {
        double ext = (double)hi[k] - lo[k];
        out[k] = clampf((double)lo[k] + ext * ((double)uniform(r, -0.25f, 1.25f)));
    }
}

static void tri_corners(const kcc_level *l, uint32_t t, vec3 c[3])
{
    for (int k = 0; k < 3; ++k) {
        const float *p = l->positions + 3u * l->indices[3u * t + (uint32_t)k];
        c[k][0] = p[0];
        c[k][1] = p[1];
        c[k][2] = p[2];
    }
}

/* Largest coordinate magnitude of the level and the query point over the query vector's length:
 * the parameter distance the scene's size amounts to (one float ulp of it is 2^-23 of this). */
static float scene_scale(const kcc_level *l, const float p[3], const float v[3])
{
    double m = fabs(p[0]) + fabs(p[1]) + fabs(p[2]);
    for (uint32_t i = 0; i < 3u * l->vertex_count; ++i)
        m = fabs(l->positions[i]) > m ? fabs(l->positions[i]) : m;
    double len = sqrt((double)v[0] * v[0] + (double)v[1] * v[1] + (double)v[2] * v[2]);
    return len > 0.0 ? clampf(m / len) : 0.0f;
}

static void check_ray(const kcc_level *l, const kcc_mesh *m, const float o[3], const float d[3],
                      float max_t, bool compare)
{
    kcc_ray_hit hit;
    bool got = kcc_mesh_raycast(m, o, d, max_t, &hit);
    if (!compare)
        return;
    bool any = false;
    float best = INFINITY;
    for (uint32_t t = 0; t < l->triangle_count; ++t) {
        vec3 c[3];
        float tt;
        tri_corners(l, t, c);
        if (kcc_tri_raycast(c[0], c[1], c[2], o, d, max_t, &tt) && tt < best) {
            best = tt;
            any = true;
        }
    }
    CHECK(got == any);
    if (got) {
        /* The tree may settle on a coplanar neighbour whose computed t lies a little above the
         * brute-force minimum: the watertight t carries rounding of the order of an ulp of the
         * coordinates, and the slabs are conservative for the exact t, not the rounded one.
         * Same distance to within float precision of the scene. */
        CHECK(fabsf(hit.t - best) <= 1e-5f * (fabsf(best) + scene_scale(l, o, d)));
        CHECK(hit.t >= 0.0f && hit.t <= max_t);
        CHECK(hit.triangle < l->triangle_count);
        vec3 c[3];
        float own = -1.0f;
        tri_corners(l, hit.triangle, c);
        CHECK(kcc_tri_raycast(c[0], c[1], c[2], o, d, max_t, &own) && own == hit.t);
    }
}

static void check_overlap(const kcc_level *l, const kcc_mesh *m, const vec3 box[2], bool compare)
{
    uint32_t out[8];
    uint32_t n = kcc_mesh_overlap_aabb(m, box, out, 8);
    if (!compare)
        return;
    uint32_t brute = 0;
    for (uint32_t t = 0; t < l->triangle_count; ++t) {
        vec3 c[3];
        tri_corners(l, t, c);
        brute += kcc_tri_overlap_aabb(c[0], c[1], c[2], box) ? 1u : 0u;
    }
    CHECK(n == brute);
    for (uint32_t i = 0; i < n && i < 8; ++i) {
        vec3 c[3];
        CHECK(out[i] < l->triangle_count);
        tri_corners(l, out[i], c);
        CHECK(kcc_tri_overlap_aabb(c[0], c[1], c[2], box));
    }
    uint32_t cand = kcc_mesh_query_bounds(m, box, NULL, 0);
    CHECK(cand >= n);
}

static void check_sweep(const kcc_level *l, const kcc_mesh *m, const vec3 box[2],
                        const float delta[3], bool compare)
{
    kcc_sweep_hit hit;
    bool got = kcc_mesh_sweep_aabb(m, box, delta, &hit);
    if (!compare)
        return;
    bool any = false;
    float best = INFINITY;
    for (uint32_t t = 0; t < l->triangle_count; ++t) {
        vec3 c[3], n;
        float tt;
        bool so;
        tri_corners(l, t, c);
        if (kcc_tri_sweep_aabb(c[0], c[1], c[2], box, delta, &tt, n, &so) && tt < best) {
            best = tt;
            any = true;
        }
    }
    CHECK(got == any);
    if (got) {
        CHECK(fabsf(hit.t - best) <= 1e-5f * (fabsf(best) + scene_scale(l, box[0], delta)));
        CHECK(hit.t >= 0.0f && hit.t <= 1.0f);
        CHECK(hit.triangle < l->triangle_count);
        vec3 c[3], n;
        float own = -1.0f;
        bool so;
        tri_corners(l, hit.triangle, c);
        CHECK(kcc_tri_sweep_aabb(c[0], c[1], c[2], box, delta, &own, n, &so) && own == hit.t);
        float len = hit.normal[0] * hit.normal[0] + hit.normal[1] * hit.normal[1] +
                    hit.normal[2] * hit.normal[2];
        CHECK(len > 0.99f && len < 1.01f);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* kcc_text_to_float against strtof on one token: with hex and inf/nan allowed it reads exactly
 * the tokens strtof reads whole, to the same bits (any NaN for a NaN); decimal-only, it refuses
 * hex and names inf/nan as non-finite. */
static void check_number(const uint8_t *data, size_t size)
{
    size_t n = 0;
    while (n < size && n < 64 && data[n] != ' ' && data[n] != '\n' && data[n] != '\0')
        n++;
    char tok[65];
    memcpy(tok, data, n);
    tok[n] = '\0';
    float all = 0.0f, dec = 0.0f;
    kcc_num_result r = kcc_text_to_float(tok, tok + n, KCC_NUM_HEX | KCC_NUM_NAN_INF, &all);
    kcc_num_result rd = kcc_text_to_float(tok, tok + n, 0, &dec);
    char *endp = NULL;
    float ref = strtof(tok, &endp);
    bool whole = n > 0 && endp == tok + n && !isspace((unsigned char)tok[0]);
    CHECK((r != KCC_NUM_SYNTAX) == whole);
    if (r == KCC_NUM_RANGE)
        CHECK(isinf(ref));
    else if (r == KCC_NUM_OK && isnan(ref))
        CHECK(isnan(all));
    else if (r == KCC_NUM_OK)
        CHECK(memcmp(&all, &ref, sizeof(all)) == 0);
    bool hex = memchr(tok, 'x', n) || memchr(tok, 'X', n);
    if (rd == KCC_NUM_OK || rd == KCC_NUM_RANGE)
        CHECK(!hex && rd == r && (rd != KCC_NUM_OK || memcmp(&dec, &all, sizeof(dec)) == 0));
    else if (rd == KCC_NUM_NON_FINITE)
        CHECK(r == KCC_NUM_OK && !isfinite(all));
    else
        CHECK(r == KCC_NUM_SYNTAX || hex);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_number(data, size);
    kcc_level l;
    char err[128];
    err[0] = '\0';
    kcc_status st = kcc_level_parse_obj((const char *)data, size, &l, err, sizeof(err));
    if (st != KCC_OK) {
        /* a clear message: "line N: what" (or out of memory), always terminated */
        CHECK(memchr(err, '\0', sizeof(err)) != NULL);
        CHECK(st == KCC_ERR_PARSE || st == KCC_ERR_TOO_LARGE || st == KCC_ERR_OUT_OF_MEMORY ||
              st == KCC_ERR_NO_TRIANGLES);
        CHECK(strncmp(err, "line ", 5) == 0 || st == KCC_ERR_OUT_OF_MEMORY);
        return 0;
    }
    CHECK(memchr(data, '\0', size) == NULL);          /* binary input never loads */
    /* well formed: faces, indices in range, the last vertex used, coordinates finite */
    CHECK(l.triangle_count > 0);
    uint32_t highest = 0;
    for (uint32_t i = 0; i < 3u * l.triangle_count; ++i) {
        CHECK(l.indices[i] < l.vertex_count);
        highest = l.indices[i] > highest ? l.indices[i] : highest;
    }
    CHECK(highest + 1u == l.vertex_count);
    for (uint32_t i = 0; i < 3u * l.vertex_count; ++i)
        CHECK(isfinite(l.positions[i]));
    CHECK(l.spawn_count == 0);

    if (l.triangle_count == 0 || l.triangle_count > MAX_MESH_TRIANGLES) {
        kcc_level_free(&l);
        return 0;
    }
    kcc_mesh *m = NULL;
    st = kcc_level_build_mesh(&l, &m);
    if (st == KCC_ERR_NO_TRIANGLES) { /* only degenerate faces: none overlaps even its own bounds */
        CHECK(m == NULL);
        for (uint32_t t = 0; t < l.triangle_count; ++t) {
            vec3 c[3], box[2];
            for (int k = 0; k < 3; ++k)
                for (int j = 0; j < 3; ++j)
                    c[j][k] = l.positions[3 * l.indices[3 * t + (uint32_t)j] + (uint32_t)k];
            for (int k = 0; k < 3; ++k) {
                box[0][k] = fminf(fminf(c[0][k], c[1][k]), c[2][k]);
                box[1][k] = fmaxf(fmaxf(c[0][k], c[1][k]), c[2][k]);
            }
            CHECK(!kcc_tri_overlap_aabb(c[0], c[1], c[2], (const vec3 *)box));
        }
        kcc_level_free(&l);
        return 0;
    }
    CHECK(st == KCC_OK && m != NULL);
    CHECK(kcc_mesh_triangle_count(m) == l.triangle_count);

    float lo[3], hi[3];
    for (int k = 0; k < 3; ++k)
        lo[k] = hi[k] = l.positions[k];
    for (uint32_t i = 0; i < l.vertex_count; ++i)
        for (int k = 0; k < 3; ++k) {
            float v = l.positions[3u * i + (uint32_t)k];
            lo[k] = v < lo[k] ? v : lo[k];
            hi[k] = v > hi[k] ? v : hi[k];
        }
    /* Cross-check answers only on levels of sane size: at 1e30 m the float rounding of the
     * tree's slabs and of the per-triangle tests legitimately disagree. Larger levels still run
     * every query (for crashes and sanitizer reports), unchecked. */
    bool sane = true;
    for (int k = 0; k < 3; ++k)
        sane = sane && lo[k] >= -1e6f && hi[k] <= 1e6f;
    uint64_t h = 1469598103934665603ull;            /* FNV-1a of the input seeds the queries */
    for (size_t i = 0; i < size; ++i)
        h = (h ^ data[i]) * 1099511628211ull;
    rng r = {h};
    for (int q = 0; q < 6; ++q) {
        float o[3], target[3], d[3];
        random_point(&r, lo, hi, o);
        random_point(&r, lo, hi, target);
        for (int k = 0; k < 3; ++k) {
            d[k] = clampf((double)target[k] - o[k]);
            /* 1/d overflows for components below 2^-128, and the tree's slab test then culls
             * nodes the ray does cross (reported); real rays never point that way */
            if (fabsf(d[k]) < 1e-20f)
                d[k] = 0.0f;
        }
        if (q == 0) {
            d[0] = d[2] = 0.0f;
            d[1] = -1.0f;                           /* straight down, as ground probes do */
        }
        if (d[0] != 0.0f || d[1] != 0.0f || d[2] != 0.0f)
            check_ray(&l, m, o, d, q & 1 ? 1.0f : 1e30f, sane);

        vec3 box[2];
        float c[3];
        random_point(&r, lo, hi, c);
        for (int k = 0; k < 3; ++k) {
            float half = clampf(((double)hi[k] - lo[k]) * (double)uniform(&r, 0.0f, 0.3f));
            box[0][k] = clampf((double)c[k] - half);
            box[1][k] = clampf((double)c[k] + half);
        }
        check_overlap(&l, m, (const vec3 *)box, sane);
        float delta[3];
        for (int k = 0; k < 3; ++k) {
            delta[k] = clampf(((double)hi[k] - lo[k]) * (double)uniform(&r, -0.5f, 0.5f));
            if (fabsf(delta[k]) < 1e-20f)
                delta[k] = 0.0f;                    /* as for ray directions */
        }
        check_sweep(&l, m, (const vec3 *)box, delta, sane);
    }
    kcc_mesh_destroy(m);
    kcc_level_free(&l);
    return 0;
}
