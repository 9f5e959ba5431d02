/* fuzz_heightfield.c: libFuzzer target for heightfields. The bytes build a small grid (2-10 samples
 * a side, heights on a 0.25 m grid so that flat cells, shared planes and exact ties are common, or
 * raw floats: NaN, infinities, huge and denormal values; spacing and origin likewise; holes from
 * bits) and up to 24 queries on the grid or from raw floats. Checks, aborting on failure:
 * - the build answers KCC_OK or one of its documented statuses, and on KCC_OK validates;
 * - every query answers as the kcc_mesh built from the same triangles (a hole's as degenerate
 *   ones): ray casts, sphere and capsule sweeps and the triangle accessor bit for bit, overlap,
 *   bounds and sphere-overlap sets equal, and box sweeps at the same time (ids may differ only
 *   between triangles both met at that time: the tree's tie depends on its leaf order), and mesh
 *   against mesh with the grid on either side or both, against the grid placed by a pose from the
 *   first query of half the inputs (its pairs and segments bit for bit).
 * `make fuzz` explores with it, `make fuzz-check` (part of `make test`) repeats a fixed run. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "fuzz.h"
#include "kcc.h"

#define MAX_SIDE    10
#define MAX_QUERIES 24
#define MAX_TRIS    (2 * (MAX_SIDE - 1) * (MAX_SIDE - 1))

typedef struct grid_pair {
    kcc_heightfield_desc desc;
    float     heights[MAX_SIDE * MAX_SIDE];
    uint8_t   holes[(MAX_SIDE - 1) * (MAX_SIDE - 1)];
    float     soup[9 * MAX_TRIS];
    uint32_t  n;
    kcc_mesh *hf, *mesh;
} grid_pair;

static float value(reader *r, bool raw)
{
    return raw ? raw_float(r) : grid(r);
}

static void read_desc(reader *r, grid_pair *g)
{
    const uint8_t mode = byte(r);
    const bool raw = (mode & 1) != 0;
    kcc_heightfield_desc *d = &g->desc;
    memset(d, 0, sizeof *d);
    d->columns = 2u + byte(r) % (MAX_SIDE - 1u);
    d->rows = 2u + byte(r) % (MAX_SIDE - 1u);
    d->spacing[0] = raw && (mode & 2) ? raw_float(r) : 0.25f * (float)(1 + byte(r) % 8);
    d->spacing[1] = raw && (mode & 4) ? raw_float(r) : 0.25f * (float)(1 + byte(r) % 8);
    for (int k = 0; k < 3; ++k)
        d->origin[k] = raw && (mode & 8) ? raw_float(r) : grid(r);
    for (uint32_t s = 0; s < d->columns * d->rows; ++s)
        g->heights[s] = value(r, raw && (mode & 16));
    d->heights = g->heights;
    if (mode & 32) {
        for (uint32_t c = 0; c < (d->columns - 1u) * (d->rows - 1u); ++c)
            g->holes[c] = (uint8_t)(byte(r) < 64);
        d->holes = g->holes;
    }
}

/* The soup of the desc's triangles, holes as degenerate ones (kcc_mesh_triangle's corners else). */
static void fill_soup(grid_pair *g)
{
    g->n = kcc_mesh_triangle_count(g->hf);
    CHECK(g->n == 2u * (g->desc.columns - 1u) * (g->desc.rows - 1u));
    for (uint32_t t = 0; t < g->n; ++t) {
        float *v = &g->soup[9 * t];
        const bool hole = g->desc.holes && g->desc.holes[t / 2u];
        CHECK(kcc_mesh_triangle(g->hf, t, (vec3 *)v) == !hole);
        if (hole)
            for (int k = 0; k < 9; ++k)
                v[k] = g->desc.origin[k % 3];
    }
}

static void sort_ids(uint32_t *v, uint32_t n)
{
    for (uint32_t a = 1; a < n; ++a)
        for (uint32_t b = a; b > 0 && v[b - 1] > v[b]; --b) {
            const uint32_t t = v[b];
            v[b] = v[b - 1], v[b - 1] = t;
        }
}

static void same_sets(uint32_t na, uint32_t *a, uint32_t nb, uint32_t *b)
{
    CHECK(na == nb);
    sort_ids(a, na), sort_ids(b, nb);
    CHECK(memcmp(a, b, sizeof(uint32_t) * (na < MAX_TRIS ? na : MAX_TRIS)) == 0);
}

/* kcc_mesh_overlap_mesh of the grid (unplaced) against the grid placed by pose, with the
 * heightfield on side 0, side 1 or both: the tree meshes' pairs, bit for bit. */
static void overlaps_match(const grid_pair *g, const kcc_transform *pose)
{
    enum { CAP = 2048 };
    static kcc_tri_pair want[CAP], got[CAP];
    const uint32_t n = kcc_mesh_overlap_mesh(g->mesh, NULL, g->mesh, pose, want, CAP);
    const kcc_mesh *side[3][2] = {{g->hf, g->mesh}, {g->mesh, g->hf}, {g->hf, g->hf}};
    for (int i = 0; i < 3; ++i) {
        CHECK(kcc_mesh_overlap_mesh(side[i][0], NULL, side[i][1], pose, got, CAP) == n);
        CHECK(memcmp(want, got, sizeof(kcc_tri_pair) * (n < CAP ? n : CAP)) == 0);
    }
}

static void run_queries(const grid_pair *g, const float p[3], const float q[3], float size)
{
    const kcc_mesh *hf = g->hf, *mesh = g->mesh;
    kcc_ray_hit ra, rb;
    memset(&ra, 0, sizeof ra), memset(&rb, 0, sizeof rb);
    CHECK(kcc_mesh_raycast(hf, p, q, 1.0f, &ra) == kcc_mesh_raycast(mesh, p, q, 1.0f, &rb));
    CHECK(memcmp(&ra, &rb, sizeof ra) == 0);
    const float half = fabsf(size);
    const vec3 box[2] = {{p[0] - half, p[1] - half, p[2] - half}, {p[0] + half, p[1] + half, p[2] + half}};
    uint32_t a[MAX_TRIS], b[MAX_TRIS];
    same_sets(kcc_mesh_overlap_aabb(hf, box, a, MAX_TRIS), a, kcc_mesh_overlap_aabb(mesh, box, b, MAX_TRIS), b);
    same_sets(kcc_mesh_query_bounds(hf, box, a, MAX_TRIS), a, kcc_mesh_query_bounds(mesh, box, b, MAX_TRIS), b);
    same_sets(kcc_mesh_overlap_sphere(hf, p, size, a, MAX_TRIS), a,
              kcc_mesh_overlap_sphere(mesh, p, size, b, MAX_TRIS), b);
    kcc_sphere_hit sa, sb;
    memset(&sa, 0, sizeof sa), memset(&sb, 0, sizeof sb);
    CHECK(kcc_mesh_sweep_sphere(hf, p, size, q, &sa) == kcc_mesh_sweep_sphere(mesh, p, size, q, &sb));
    CHECK(memcmp(&sa, &sb, sizeof sa) == 0);
    const float p1[3] = {p[0] + 0.5f, p[1] + 1.0f, p[2]};
    memset(&sa, 0, sizeof sa), memset(&sb, 0, sizeof sb);
    CHECK(kcc_mesh_sweep_capsule(hf, p, p1, size, q, &sa) == kcc_mesh_sweep_capsule(mesh, p, p1, size, q, &sb));
    CHECK(memcmp(&sa, &sb, sizeof sa) == 0);
    kcc_sweep_hit wa, wb;
    memset(&wa, 0, sizeof wa), memset(&wb, 0, sizeof wb);
    CHECK(kcc_mesh_sweep_aabb(hf, box, q, &wa) == kcc_mesh_sweep_aabb(mesh, box, q, &wb));
    CHECK(wa.t == wb.t);
    if (wa.triangle != wb.triangle) {
        const uint32_t ids[2] = {wa.triangle, wb.triangle};
        for (int i = 0; i < 2; ++i) {
            const float *v = &g->soup[9 * ids[i]];
            float t;
            vec3 n;
            bool start;
            /* alone it is not cut at the best time: equal within the cut's rounding */
            CHECK(kcc_tri_sweep_aabb(v, v + 3, v + 6, box, q, &t, n, &start) && fabsf(t - wa.t) <= 1e-6f);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = {data, size};
    static grid_pair g;
    read_desc(&r, &g);
    g.hf = g.mesh = NULL;
    const kcc_status st = kcc_heightfield_build(&g.desc, &g.hf);
    if (st != KCC_OK) {
        CHECK(g.hf == NULL);
        CHECK(st == KCC_ERR_NON_FINITE || st == KCC_ERR_BAD_DESC || st == KCC_ERR_NO_TRIANGLES);
        return 0;
    }
    CHECK(kcc_mesh_validate(g.hf) == KCC_OK);
    fill_soup(&g);
    kcc_mesh_desc md;
    memset(&md, 0, sizeof md);
    md.positions = g.soup;
    md.vertex_count = 3 * g.n;
    md.triangle_count = g.n;
    CHECK(kcc_mesh_build(&md, &g.mesh) == KCC_OK);
    for (int i = 0; i < MAX_QUERIES && r.n > 0; ++i) {
        const uint8_t op = byte(&r);
        float p[3], q[3];
        for (int k = 0; k < 3; ++k) {
            p[k] = op & 1 ? raw_float(&r) : grid(&r) * 0.25f;
            q[k] = op & 2 ? raw_float(&r) : grid(&r) * 0.5f;
        }
        const float s = op & 4 ? raw_float(&r) : (float)byte(&r) / 64.0f;
        run_queries(&g, p, q, s);
        if (i == 0 && op & 16) { /* a rotation from q and s, normalised where it can: the local box */
            kcc_transform pose = {{p[0], p[1], p[2]}, {q[0], q[1], q[2], s}};
            const double len = sqrt((double)q[0] * q[0] + (double)q[1] * q[1] + (double)q[2] * q[2] +
                                    (double)s * s);
            for (int k = 0; k < 4 && len > 0.0 && len < INFINITY && op & 8; ++k)
                pose.rotation[k] = (float)(pose.rotation[k] / len);
            overlaps_match(&g, &pose);
        }
    }
    kcc_mesh_destroy(g.hf);
    kcc_mesh_destroy(g.mesh);
    return 0;
}
