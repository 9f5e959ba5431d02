/* test_local.c: owns the tests of the move's local triangle list (kcc_local_gather,
 * kcc_local_select, kcc_local_raycast_down(4), kcc_local_overlaps, kcc_local_sweep and the overflow
 * path; kcc_local_internal.h, collide/local.c), checked against brute force over the mesh's
 * triangles (kcc_mesh_triangle, kcc_tri_*) and the public mesh queries on random soups, grid floors
 * (+Y and +Z up) and the shared level oa_dm1 when present. */
#include "test.h"
#include <cglm/cglm.h>

#include "collide_internal.h"    /* kcc_mesh_slot_of: the mesh's leaf order, to check the list's order */
#include "kcc_local_internal.h"

/* C11 does not convert vec3 * to const vec3 * implicitly (pedantic): boxes go through CB. */
#define CB(...) ((const vec3 *)(__VA_ARGS__))

/* ------------------------------------------------------------------------------------------------
 * Helpers: a fixed-seed PRNG and the scenes */

static test_rng rng_seed(uint64_t seed)
{
    return rng_seed_salted(seed, 0x7654321ull);
}

static uint32_t rng_below(test_rng *r, uint32_t n)
{
    return rng_u32(r) % n;
}

/* A mesh with its triangles read back through the public API, and per-triangle scratch for the
 * brute-force references. */
typedef struct scene {
    const char *name;
    kcc_mesh   *mesh;
    kcc_local_source src;  /* the mesh as a neighbourhood source */
    uint32_t    n;
    vec3       *v;         /* 3 corners per triangle (kcc_mesh_triangle) */
    vec3       *lo, *hi;   /* each triangle's bounds: min / max of its corners */
    bool       *live;      /* non-degenerate: kcc_tri_overlap_aabb: it overlaps its own bounds */
    float      *st;        /* scratch: each triangle's kcc_tri_sweep_aabb time (NAN: no contact) */
    vec3       *sn;        /* ... and normal */
    bool       *ss;        /* ... and start-overlap flag */
    uint8_t    *mark;
    vec3        bounds[2];
    /* grid floors: up axis (0 for other scenes), height, cell size, first corner, cells a side */
    int         grid_up;
    float       grid_h, grid_cell, grid_x0, grid_y0;
    uint32_t    grid_cells;
    kcc_level   level;     /* the shared level's arrays (spawns), zero otherwise */
} scene;

static void scene_finish(scene *s, const char *name)
{
    s->name = name;
    kcc_local_source_mesh(&s->src, s->mesh);
    s->n = kcc_mesh_triangle_count(s->mesh);
    s->v = malloc(sizeof(vec3) * 3 * s->n);
    s->lo = malloc(sizeof(vec3) * s->n);
    s->hi = malloc(sizeof(vec3) * s->n);
    s->live = malloc(sizeof(bool) * s->n);
    s->st = malloc(sizeof(float) * s->n);
    s->sn = malloc(sizeof(vec3) * s->n);
    s->ss = malloc(sizeof(bool) * s->n);
    s->mark = malloc(s->n);
    assert_true(s->v && s->lo && s->hi && s->live && s->st && s->sn && s->ss && s->mark);
    for (uint32_t i = 0; i < s->n; ++i) {
        vec3 *v = &s->v[3 * i];
        assert_true(kcc_mesh_triangle(s->mesh, i, v));
        for (int k = 0; k < 3; ++k) {
            s->lo[i][k] = fminf(v[0][k], fminf(v[1][k], v[2][k]));
            s->hi[i][k] = fmaxf(v[0][k], fmaxf(v[1][k], v[2][k]));
        }
        vec3 b[2];
        glm_vec3_copy(s->lo[i], b[0]);
        glm_vec3_copy(s->hi[i], b[1]);
        s->live[i] = kcc_tri_overlap_aabb(v[0], v[1], v[2], CB(b));
    }
    kcc_mesh_bounds(s->mesh, s->bounds);
}

static void scene_free(scene *s)
{
    kcc_mesh_destroy(s->mesh);
    free(s->v);
    free(s->lo);
    free(s->hi);
    free(s->live);
    free(s->st);
    free(s->sn);
    free(s->ss);
    free(s->mark);
    kcc_level_free(&s->level);
    memset(s, 0, sizeof *s);
}

static void scene_from_soup(scene *s, const float *p, uint32_t n, const char *name)
{
    memset(s, 0, sizeof *s);
    kcc_mesh_desc d;
    memset(&d, 0, sizeof d);
    d.positions = p;
    d.vertex_count = 3 * n;
    d.triangle_count = n;
    assert_int_equal(kcc_mesh_build(&d, &s->mesh), KCC_OK);
    scene_finish(s, name);
}

/* n triangles in a world-metre cube, mixed sizes (a few cm to a few m across), every 37th one
 * degenerate (a repeated corner or three corners on a line). */
static void scene_soup(scene *s, uint64_t seed, uint32_t n, float world, const char *name)
{
    test_rng r = rng_seed(seed);
    float *p = malloc(sizeof(float) * 9 * n);
    assert_non_null(p);
    static const float sizes[3] = {0.08f, 0.6f, 2.5f};
    for (uint32_t i = 0; i < n; ++i) {
        float size = sizes[rng_below(&r, 3)] * rng_f(&r, 0.3f, 1.0f);
        float c[3] = {rng_f(&r, 0, world), rng_f(&r, 0, world), rng_f(&r, 0, world)};
        float *t = p + 9 * i;
        for (int v = 0; v < 3; ++v)
            for (int k = 0; k < 3; ++k)
                t[3 * v + k] = c[k] + rng_f(&r, -size, size);
        if (i % 37 == 5) {
            memcpy(t + 6, t, sizeof(float) * 3);   /* repeated corner */
        } else if (i % 37 == 20) {
            memcpy(t + 3, t, sizeof(float) * 3);   /* collinear along x */
            memcpy(t + 6, t, sizeof(float) * 3);
            t[3] += 0.5f;
            t[6] += 1.0f;
        }
    }
    scene_from_soup(s, p, n, name);
    free(p);
}

/* Coordinate i of a grid line: the same float expression everywhere (-ffp-contract=off). */
static float grid_at(float x0, float cell, uint32_t i)
{
    return x0 + cell * (float)i;
}

/* A flat grid floor of cells x cells quads (two triangles each) at height h along up axis u (1 or
 * 2); the side axes are 0 and the other one. */
static void scene_grid(scene *s, int u, uint32_t cells, float h, float cell, float x0, float y0,
                       const char *name)
{
    memset(s, 0, sizeof *s);
    const int a1 = u == 1 ? 2 : 1;
    uint32_t w = cells + 1;
    float *pos = malloc(sizeof(float) * 3 * w * w);
    uint32_t *idx = malloc(sizeof(uint32_t) * 6 * cells * cells);
    assert_true(pos && idx);
    for (uint32_t j = 0; j < w; ++j)
        for (uint32_t i = 0; i < w; ++i) {
            float *q = pos + 3 * (j * w + i);
            q[0] = grid_at(x0, cell, i);
            q[a1] = grid_at(y0, cell, j);
            q[u] = h;
        }
    const uint32_t t = grid_indices(cells, idx);
    kcc_mesh_desc d;
    memset(&d, 0, sizeof d);
    d.positions = pos;
    d.vertex_count = w * w;
    d.indices = idx;
    d.triangle_count = t;
    assert_int_equal(kcc_mesh_build(&d, &s->mesh), KCC_OK);
    free(pos);
    free(idx);
    scene_finish(s, name);
    s->grid_up = u;
    s->grid_h = h;
    s->grid_cell = cell;
    s->grid_x0 = x0;
    s->grid_y0 = y0;
    s->grid_cells = cells;
}

/* The shared level oa_dm1; false (silently) when the shared levels are absent. */
static bool scene_level(scene *s)
{
    memset(s, 0, sizeof *s);
    const char *path = kcc_test_shared_level(1);
    if (!path)
        return false;
    char err[256];
    assert_int_equal(kcc_level_load_obj(path, &s->level, err, sizeof err), KCC_OK);
    assert_int_equal(kcc_level_build_mesh(&s->level, &s->mesh), KCC_OK);
    scene_finish(s, "oa_dm1");
    return true;
}

#define MAX_SCENES 5

/* Two random soups, the grid floor with +Y and with +Z up, and oa_dm1 when present. */
static int scenes_build(scene sc[MAX_SCENES])
{
    int n = 0;
    scene_soup(&sc[n++], 1, 300, 10.0f, "soup300");
    scene_soup(&sc[n++], 2, 2000, 10.0f, "soup2000");
    scene_grid(&sc[n++], 1, 16, 0.8f, 0.37f, -2.1f, -1.3f, "grid+Y");
    scene_grid(&sc[n++], 2, 16, -1.7f, 0.29f, 3.3f, -0.9f, "grid+Z");
    if (scene_level(&sc[n]))
        n++;
    return n;
}

/* The tests that walk every scene get them, and a move's store, from this fixture (built before
 * each test, freed after it even when the test fails). */
typedef struct scenes {
    scene sc[MAX_SCENES];
    int n;
    kcc_local_store *store;
} scenes;

static int scenes_setup(void **state)
{
    scenes *f = malloc(sizeof *f);
    assert_non_null(f);
    f->n = scenes_build(f->sc);
    f->store = malloc(sizeof *f->store);
    assert_non_null(f->store);
    *state = f;
    return 0;
}

static int scenes_teardown(void **state)
{
    scenes *f = *state;
    for (int i = 0; i < f->n; ++i)
        scene_free(&f->sc[i]);
    free(f->store);
    free(f);
    return 0;
}

static bool boxes_touch(const float alo[3], const float ahi[3], const float blo[3],
                        const float bhi[3])
{
    return alo[0] <= bhi[0] && ahi[0] >= blo[0] && alo[1] <= bhi[1] && ahi[1] >= blo[1] &&
           alo[2] <= bhi[2] && ahi[2] >= blo[2];
}

/* Live triangles whose bounds overlap box (touching counts): brute force over the whole mesh. */
static uint32_t ref_count(const scene *s, const vec3 box[2])
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->n; ++i)
        n += s->live[i] && boxes_touch(s->lo[i], s->hi[i], box[0], box[1]);
    return n;
}

/* A random region: centred anywhere in the scene's bounds or at a jittered corner of a random
 * triangle (so that most regions hold something), half extents in [hmin, hmax]. */
static void random_region(test_rng *r, const scene *s, float hmin, float hmax, vec3 out[2])
{
    const float *at = NULL;
    if (rng_below(r, 2) == 0)
        at = s->v[3 * rng_below(r, s->n) + rng_below(r, 3)];
    for (int k = 0; k < 3; ++k) {
        float c = at ? at[k] + rng_f(r, -0.5f, 0.5f) : rng_f(r, s->bounds[0][k], s->bounds[1][k]);
        float h = rng_f(r, hmin, hmax);
        out[0][k] = c - h;
        out[1][k] = c + h;
    }
}

/* A random region whose gathered list does not overflow (tries a few, then shrinks). */
static void small_region(test_rng *r, const scene *s, kcc_local *L, kcc_local_store *store, vec3 out[2])
{
    float hmax = 1.6f;
    for (;;) {
        random_region(r, s, 0.3f, hmax, out);
        kcc_local_gather(L, store, &s->src, CB(out));
        if (!L->overflow)
            return;
        hmax = fmaxf(0.35f, 0.8f * hmax);
    }
}

/* ------------------------------------------------------------------------------------------------
 * The checks: each query of L against its reference */

/* (b - a) x (c - a) of triangle v = (a, b, c), in double: its face normal, unnormalized. */
static void tri_cross(const vec3 *v, double out[3])
{
    double e1[3], e2[3];
    for (int k = 0; k < 3; ++k) {
        e1[k] = (double)v[1][k] - v[0][k];
        e2[k] = (double)v[2][k] - v[0][k];
    }
    out[0] = e1[1] * e2[2] - e1[2] * e2[1];
    out[1] = e1[2] * e2[0] - e1[0] * e2[2];
    out[2] = e1[0] * e2[1] - e1[1] * e2[0];
}

/* L holds exactly the live triangles whose bounds overlap region (or overflows exactly when there
 * are more than KCC_LOCAL_MAX of them), each once, in strictly increasing leaf order, with the
 * mesh's corners, their exact bounds, a unit normal of the right direction and d = n . a; padding
 * entries have empty bounds. */
static void check_gather(scene *s, const kcc_local *L, const vec3 region[2])
{
    const uint32_t nref = ref_count(s, region);
    assert_ptr_equal(L->source, &s->src);
    if (nref > KCC_LOCAL_MAX) {
        if (!L->overflow)
            fail_msg("%s: %u triangles in the region, no overflow (count %u)", s->name, nref,
                     L->count);
        return;
    }
    if (L->overflow || L->count != nref)
        fail_msg("%s: region (%a %a %a)-(%a %a %a): %u triangles, list %u overflow %d", s->name,
                 region[0][0], region[0][1], region[0][2], region[1][0], region[1][1], region[1][2],
                 nref, L->count, L->overflow);
    memset(s->mark, 0, s->n);
    uint32_t prev = 0;
    for (uint32_t i = 0; i < L->count; ++i) {
        const kcc_local_tri *t = &L->tris[i];
        const uint32_t id = t->index;
        assert_true(id < s->n);
        assert_true(s->live[id]);
        assert_true(boxes_touch(s->lo[id], s->hi[id], region[0], region[1]));
        assert_int_equal(s->mark[id], 0); /* no duplicates */
        s->mark[id] = 1;
        const uint32_t slot = kcc_mesh_slot_of(s->mesh, id);
        if (i > 0 && !(slot > prev))
            fail_msg("%s: list entry %u (triangle %u) at leaf slot %u after slot %u", s->name, i,
                     id, slot, prev);
        prev = slot;
        vec3 *v = &s->v[3 * id];
        assert_memory_equal(t->v, v, sizeof t->v);
        for (int k = 0; k < 3; ++k) {
            assert_true(kcc_local_lo(L, k, i) == s->lo[id][k]);
            assert_true(kcc_local_hi(L, k, i) == s->hi[id][k]);
        }
        double cr[3];
        tri_cross(CB(v), cr);
        const double crl = sqrt(cr[0] * cr[0] + cr[1] * cr[1] + cr[2] * cr[2]);
        const double nl = sqrt((double)t->n[0] * t->n[0] + (double)t->n[1] * t->n[1] +
                               (double)t->n[2] * t->n[2]);
        const double along = (t->n[0] * cr[0] + t->n[1] * cr[1] + t->n[2] * cr[2]) / crl;
        if (!(fabs(nl - 1.0) <= 1e-5) || !(along >= 1.0 - 1e-5))
            fail_msg("%s: triangle %u normal (%g %g %g): length %.9g, along (b-a)x(c-a) %.9g",
                     s->name, id, t->n[0], t->n[1], t->n[2], nl, along);
        double d = 0.0, scale = 1.0;
        for (int k = 0; k < 3; ++k) {
            d += (double)t->n[k] * v[0][k];
            scale += fabs((double)t->n[k] * v[0][k]);
        }
        if (!(fabs(t->d - d) <= 1e-5 * scale))
            fail_msg("%s: triangle %u: d %.9g, n . a %.9g", s->name, id, t->d, d);
    }
    for (uint32_t e = L->count; e % KCC_LOCAL_GROUP != 0u; ++e)
        for (int k = 0; k < 3; ++k) {
            assert_true(kcc_local_lo(L, k, e) == INFINITY);
            assert_true(kcc_local_hi(L, k, e) == -INFINITY);
        }
}

/* kcc_local_select gives exactly the list entries whose bounds (the scene's own) overlap box: their
 * bits set, every other bit clear, and as many words as the list needs. */
static void check_select(const scene *s, const kcc_local *L, const vec3 box[2])
{
    kcc_sel sel;
    memset(&sel, 0xAB, sizeof sel);
    kcc_local_select(L, box, &sel);
    assert_int_equal(sel.words, (L->count + 63u) / 64u);
    for (uint32_t i = 0; i < 64u * sel.words; ++i) {
        const bool want = i < L->count && boxes_touch(s->lo[L->tris[i].index], s->hi[L->tris[i].index],
                                                      box[0], box[1]);
        const bool got = (sel.bits[i / 64u] >> (i % 64u) & 1u) != 0;
        if (got != want)
            fail_msg("%s: box (%a %a %a)-(%a %a %a): entry %u of %u is %s, want %s", s->name,
                     box[0][0], box[0][1], box[0][2], box[1][0], box[1][1], box[1][2], i, L->count,
                     got ? "selected" : "not selected", want ? "selected" : "not selected");
    }
}

typedef struct ray_stats {
    uint32_t rays, hits, ties;
} ray_stats;

/* Four rays down axis u: kcc_local_raycast_down4 must give bit for bit what four single
 * kcc_local_raycast_down calls give, and both must agree with kcc_mesh_raycast (hit or miss, t
 * within 1e-5 m, the same triangle unless another one is hit at the same t). The four segments must
 * lie inside L's region; the selection is kcc_local_select over their bounds. must_hit: every ray
 * has to hit (watertight floors). */
static void check_rays(const scene *s, const kcc_local *L, const vec3 o[4], int u, float max_t,
                       bool must_hit, ray_stats *stats)
{
    vec3 rb[2];
    for (int k = 0; k < 3; ++k) {
        rb[0][k] = fminf(fminf(o[0][k], o[1][k]), fminf(o[2][k], o[3][k]));
        rb[1][k] = fmaxf(fmaxf(o[0][k], o[1][k]), fmaxf(o[2][k], o[3][k]));
    }
    rb[0][u] -= max_t;
    kcc_sel sel;
    kcc_local_select(L, CB(rb), &sel);
    kcc_ray_hit h1[4], h4[4];
    bool g1[4], g4[4];
    memset(h1, 0, sizeof h1);
    memset(h4, 0, sizeof h4);
    for (int r = 0; r < 4; ++r)
        g1[r] = kcc_local_raycast_down(L, &sel, o[r], u, max_t, &h1[r]);
    kcc_local_raycast_down4(L, &sel, o, u, max_t, h4, g4);
    vec3 dir = {0.0f, 0.0f, 0.0f};
    dir[u] = -1.0f;
    for (int r = 0; r < 4; ++r) {
        const float *p = o[r];
        if (g1[r] != g4[r] || (g1[r] && memcmp(&h1[r], &h4[r], sizeof h1[r]) != 0))
            fail_msg("%s: ray %d from (%a %a %a) down axis %d, max_t %a: one at a time %d t %a "
                     "triangle %u, four at once %d t %a triangle %u",
                     s->name, r, p[0], p[1], p[2], u, max_t, g1[r], h1[r].t, h1[r].triangle, g4[r],
                     h4[r].t, h4[r].triangle);
        kcc_ray_hit hm;
        const bool gm = kcc_mesh_raycast(s->mesh, p, dir, max_t, &hm);
        stats->rays++;
        if (must_hit && !(g1[r] && gm))
            fail_msg("%s: ray from (%a %a %a) down axis %d through the floor's edges: local %d, "
                     "mesh %d", s->name, p[0], p[1], p[2], u, g1[r], gm);
        if (g1[r] != gm) {
            const float t = g1[r] ? h1[r].t : hm.t;
            if (t >= max_t - 1e-5f)
                continue; /* a hit at the very end of the segment, in one rounding only */
            fail_msg("%s: ray from (%a %a %a) down axis %d, max_t %g: local %s (t %.9g triangle "
                     "%u), mesh %s (t %.9g triangle %u)", s->name, p[0], p[1], p[2], u, max_t,
                     g1[r] ? "hit" : "miss", g1[r] ? h1[r].t : 0.0f, g1[r] ? h1[r].triangle : 0u,
                     gm ? "hit" : "miss", gm ? hm.t : 0.0f, gm ? hm.triangle : 0u);
        }
        if (!gm)
            continue;
        stats->hits++;
        if (!(fabsf(h1[r].t - hm.t) <= 1e-5f))
            fail_msg("%s: ray from (%a %a %a) down axis %d: local t %.9g (triangle %u), mesh t "
                     "%.9g (triangle %u)", s->name, p[0], p[1], p[2], u, h1[r].t, h1[r].triangle,
                     hm.t, hm.triangle);
        if (h1[r].triangle != hm.triangle) {
            /* only a tie: the local answer's triangle is hit at the same t */
            vec3 *v = &s->v[3 * h1[r].triangle];
            float tt = -1.0f;
            bool hit = kcc_tri_raycast(v[0], v[1], v[2], p, dir, max_t, &tt);
            if (!hit || !(fabsf(tt - hm.t) <= 1e-5f))
                fail_msg("%s: ray from (%a %a %a) down axis %d: local triangle %u at t %.9g "
                         "(alone: %d, t %.9g), mesh triangle %u at t %.9g", s->name, p[0], p[1],
                         p[2], u, h1[r].triangle, h1[r].t, hit, tt, hm.triangle, hm.t);
            stats->ties++;
            continue;
        }
        for (int k = 0; k < 3; ++k)
            assert_true(fabsf(h1[r].normal[k] - hm.normal[k]) <= 1e-5f);
    }
}

/* kcc_local_overlaps(L, box) == (kcc_mesh_overlap_aabb > 0) for a box inside L's region. */
static bool check_overlap(const scene *s, const kcc_local *L, const vec3 box[2])
{
    const bool want = kcc_mesh_overlap_aabb(s->mesh, box, NULL, 0) > 0;
    const bool got = kcc_local_overlaps(L, box);
    if (got != want)
        fail_msg("%s: box (%a %a %a)-(%a %a %a): local %d, mesh %d", s->name, box[0][0], box[0][1],
                 box[0][2], box[1][0], box[1][1], box[1][2], got, want);
    return want;
}

typedef struct sweep_stats {
    uint32_t sweeps, hits, multi, starts, leaving;
} sweep_stats;

/* The axis whose coordinate all three corners of triangle i share, or -1. */
static int shared_axis(const scene *s, uint32_t i)
{
    vec3 *v = &s->v[3 * i];
    for (int a = 0; a < 3; ++a)
        if (v[0][a] == v[1][a] && v[1][a] == v[2][a])
            return a;
    return -1;
}

/* True when triangle i may go unreported because reported triangle j, met with normal n, already
 * stands for it: j lies in an axis-aligned plane and was met face first (n is that unit axis, not
 * at t = 0), i lies in that plane or wholly beyond it (on the side away from the box, which n
 * points to), and i's own contact is no earlier than j's. */
static bool hidden_by_face_contact(const scene *s, uint32_t i, uint32_t j, const vec3 n)
{
    const int a = shared_axis(s, j);
    if (a < 0 || s->ss[j])
        return false;
    if (!(fabsf(n[a]) == 1.0f && n[(a + 1) % 3] == 0.0f && n[(a + 2) % 3] == 0.0f))
        return false;
    const float at = s->v[3 * j][a];
    for (int c = 0; c < 3; ++c) {
        const float x = s->v[3 * i + (uint32_t)c][a];
        if (n[a] > 0.0f ? x > at : x < at)
            return false;
    }
    return s->st[i] >= s->st[j];
}

/* Whether the box swept by delta to t touches the plane of triangle v (its nearest point within
 * 1e-5 m in front of the plane or 2e-4 m across it) while delta goes into it: 1 clearly, -1
 * clearly not, 0 too close to the bands' edges to tell apart from rounding; face is the unit face
 * normal on the box's side, from the corners in double. */
static int touches_plane(const vec3 *v, const vec3 box[2], const vec3 delta, float t, vec3 face)
{
    double f[3];
    tri_cross(v, f);
    const double len = sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
    double sd = 0.0, r = 0.0;
    for (int k = 0; k < 3; ++k) {
        f[k] /= len;
        const double ctr = 0.5 * ((double)box[0][k] + box[1][k]) + (double)delta[k] * t;
        sd += f[k] * (ctr - v[0][k]);
        r += 0.5 * ((double)box[1][k] - box[0][k]) * fabs(f[k]);
    }
    double into = 0.0, dl = 0.0;
    for (int k = 0; k < 3; ++k) {
        face[k] = (float)(sd > 0.0 ? f[k] : -f[k]);
        into -= (sd > 0.0 ? f[k] : -f[k]) * delta[k];
        dl += (double)delta[k] * delta[k];
    }
    /* and only a plane the motion goes into */
    const double gap = fabs(sd) - r, m = 2e-6, in = into / sqrt(dl);
    if (gap <= 1e-5 - m && gap >= -2e-4 + m && in > 1e-6 + m)
        return 1;
    if (gap > 1e-5 + m || gap < -2e-4 - m || in < 1e-6 - m)
        return -1;
    return 0;
}

/* The box swept by delta from t = 0 to 1, grown by margin (m) on every side. */
static void swept_reach(const vec3 box[2], const vec3 delta, float margin, vec3 reach[2])
{
    for (int k = 0; k < 3; ++k) {
        reach[0][k] = box[0][k] + fminf(delta[k], 0.0f) - margin;
        reach[1][k] = box[1][k] + fmaxf(delta[k], 0.0f) + margin;
    }
}

/* Every triangle's own kcc_tri_sweep_aabb into s->st, s->sn, s->ss (st NAN: no contact); returns
 * the earliest time, INFINITY when no triangle is hit. */
static float sweep_every_triangle(scene *s, const vec3 box[2], const vec3 delta)
{
    vec3 reach[2];
    swept_reach(box, delta, 1e-3f, reach);
    float tmin = INFINITY;
    for (uint32_t i = 0; i < s->n; ++i) {
        s->st[i] = NAN;
        /* a triangle whose bounds miss the swept box (grown by 1 mm) cannot touch it */
        if (!boxes_touch(s->lo[i], s->hi[i], reach[0], reach[1]))
            continue;
        vec3 *v = &s->v[3 * i];
        float t;
        if (kcc_tri_sweep_aabb(v[0], v[1], v[2], box, delta, &t, s->sn[i], &s->ss[i])) {
            s->st[i] = t;
            tmin = fminf(tmin, t);
        }
    }
    return tmin;
}

/* kcc_local_sweep_out, told the triangles the box overlaps at the start (those whose contact in
 * s->st is a start overlap) as what it leaves: the earliest of the other contacts (within 1e-6),
 * each reported one among them within t_slop. Counts the sweeps that left a triangle out. */
static void check_sweep_out(scene *s, const kcc_local *L, const vec3 box[2], const vec3 delta,
                            float t_slop, sweep_stats *stats)
{
    float tout = INFINITY;
    for (uint32_t i = 0; i < s->n; ++i)
        if (isfinite(s->st[i]) && !s->ss[i])
            tout = fminf(tout, s->st[i]);
    uint32_t *left = malloc(sizeof(uint32_t) * (s->n + 1u)), n_left = 0;
    assert_non_null(left);
    for (uint32_t i = 0; i < s->n; ++i)
        if (isfinite(s->st[i]) && s->ss[i])
            left[n_left++] = i;
    kcc_contacts co;
    const bool gout = kcc_local_sweep_out(L, box, delta, t_slop, left, n_left, &co);
    free(left);
    if (gout != isfinite(tout) || (gout && !(fabsf(co.t - tout) <= 1e-6f)))
        fail_msg("%s: leaving box (%a %a %a)-(%a %a %a) delta (%a %a %a): local %d t %.9g, "
                 "earliest contact not overlapping at the start %.9g", s->name, box[0][0],
                 box[0][1], box[0][2], box[1][0], box[1][1], box[1][2], delta[0], delta[1],
                 delta[2], gout, co.t, tout);
    for (uint32_t k = 0; gout && k < co.count; ++k) {
        const uint32_t id = co.triangle[k];
        assert_true(id < s->n && !s->ss[id] && fabsf(s->st[id] - co.t) <= t_slop + 1e-6f);
    }
    stats->leaving += n_left > 0; /* some triangle overlapped at the start was left out */
}

/* Told the earliest contact's own time as the bound, or a later one, kcc_local_sweep_known gives
 * the same contacts in the same order as c. */
static void check_sweep_known(const scene *s, const kcc_local *L, const vec3 box[2], const vec3 delta,
                              float t_slop, const kcc_contacts *c)
{
    for (int b = 0; b < 2; ++b) {
        kcc_contacts k;
        memset(&k, 0, sizeof k);
        const float known = b == 0 ? c->t : c->t + 0.25f * (1.0f - c->t);
        const bool kgot = kcc_local_sweep_known(L, box, delta, t_slop, known, &k);
        if (!kgot || k.count != c->count || k.t != c->t || k.start_overlap != c->start_overlap ||
            memcmp(k.normal, c->normal, sizeof(vec3) * c->count) != 0 ||
            memcmp(k.triangle, c->triangle, sizeof(uint32_t) * c->count) != 0)
            fail_msg("%s: sweep told its earliest contact comes by t %.9g: %d contacts at t %.9g, "
                     "without the bound %u at %.9g", s->name, known, kgot ? (int)k.count : -1, k.t,
                     c->count, c->t);
    }
}

/* start_overlap: the earliest contact overlapped at t = 0 (when several tie, any of them). */
static void check_start_overlap(const scene *s, const vec3 box[2], const vec3 delta, const kcc_contacts *c)
{
    bool any_start = false, all_start = true;
    for (uint32_t i = 0; i < s->n; ++i)
        if (s->st[i] == c->t) {
            any_start = any_start || s->ss[i];
            all_start = all_start && s->ss[i];
        }
    if (c->start_overlap ? !any_start : all_start)
        fail_msg("%s: box (%a %a %a)-(%a %a %a) delta (%a %a %a): start_overlap %d at t %.9g",
                 s->name, box[0][0], box[0][1], box[0][2], box[1][0], box[1][1], box[1][2],
                 delta[0], delta[1], delta[2], c->start_overlap, c->t);
}

/* Each reported triangle: a contact of its own within t_slop of c->t, none twice, with its own
 * contact normal, or its face normal when the box touches its plane at that time (the contact is a
 * face contact: see face_if_touching in local.c). */
static void check_sweep_contacts(const scene *s, const vec3 box[2], const vec3 delta, float t_slop,
                                 const kcc_contacts *c)
{
    for (uint32_t k = 0; k < c->count; ++k) {
        const uint32_t id = c->triangle[k];
        assert_true(id < s->n);
        if (!(fabsf(s->st[id] - c->t) <= t_slop + 1e-6f))
            fail_msg("%s: contact %u: triangle %u alone at t %.9g, the sweep's t %.9g slop %g",
                     s->name, k, id, s->st[id], c->t, t_slop);
        for (uint32_t j = 0; j < k; ++j)
            assert_int_not_equal(c->triangle[j], id);
        vec3 face;
        const int touching = touches_plane(CB(&s->v[3 * id]), box, delta, s->st[id], face);
        bool same_sat = true, same_face = true;
        for (int a = 0; a < 3; ++a) {
            same_sat = same_sat && fabsf(c->normal[k][a] - s->sn[id][a]) <= 1e-5f;
            same_face = same_face && fabsf(c->normal[k][a] - face[a]) <= 1e-5f;
        }
        if (!(touching > 0 ? same_face : touching < 0 ? same_sat : same_face || same_sat) &&
            !(same_sat && same_face))
            fail_msg("%s: contact %u on triangle %u: normal (%g %g %g), its own (%g %g %g), face "
                     "(%g %g %g), touching %d", s->name, k, id, (double)c->normal[k][0],
                     (double)c->normal[k][1], (double)c->normal[k][2], (double)s->sn[id][0],
                     (double)s->sn[id][1], (double)s->sn[id][2], (double)face[0], (double)face[1],
                     (double)face[2], touching);
    }
}

/* Every triangle in contact within t_slop of c->t is reported, but for those hidden by a face
 * contact (hidden_by_face_contact). */
static void check_sweep_complete(const scene *s, float t_slop, const kcc_contacts *c)
{
    for (uint32_t i = 0; i < s->n; ++i) {
        if (!(s->st[i] <= c->t + t_slop - 1e-6f))
            continue;
        bool in = false;
        for (uint32_t k = 0; k < c->count; ++k)
            in = in || c->triangle[k] == i || hidden_by_face_contact(s, i, c->triangle[k], c->normal[k]);
        if (!in)
            fail_msg("%s: triangle %u touched at t %.9g, within slop %g of t %.9g, not reported "
                     "(%u contacts)", s->name, i, s->st[i], t_slop, c->t, c->count);
    }
}

/* kcc_local_sweep against every triangle's kcc_tri_sweep_aabb: c.t is the earliest time of them
 * (within 1e-6), each reported triangle is a contact of its own within t_slop of c.t with the same
 * normal, no triangle twice; nothing hit when no triangle is. When the contacts came from the list
 * (complete) and fewer than KCC_MAX_CONTACTS: every contact within t_slop is reported, but for
 * triangles in or beyond an axis-aligned plane already met face first (hidden_by_face_contact). Also agrees
 * with kcc_mesh_sweep_aabb on hit and t. kcc_local_sweep_out must answer the same over the
 * triangles not overlapped at the start. box and box + delta must lie inside L's region. Returns
 * c.t, or -1 when nothing is hit. */
static float check_sweep(scene *s, const kcc_local *L, const vec3 box[2], const vec3 delta,
                         float t_slop, sweep_stats *stats)
{
    kcc_contacts c;
    memset(&c, 0, sizeof c);
    const bool got = kcc_local_sweep(L, box, delta, t_slop, &c);
    const float tmin = sweep_every_triangle(s, box, delta);
    kcc_sweep_hit mh;
    const bool mgot = kcc_mesh_sweep_aabb(s->mesh, box, delta, &mh);
    stats->sweeps++;
    /* The sweep's reach: when it overflows, the sweep asks the mesh, which names one triangle. */
    vec3 region[2];
    swept_reach(box, delta, 0.0f, region);
    const bool listed = !(L->overflow && ref_count(s, CB(region)) > KCC_LOCAL_MAX);
    /* kcc_local_sweep_out: listed only (the mesh's first contact hides the rest) */
    if (listed)
        check_sweep_out(s, L, box, delta, t_slop, stats);
    if (got != isfinite(tmin) || mgot != isfinite(tmin) ||
        (got && (!(fabsf(c.t - tmin) <= 1e-6f) || !(fabsf(mh.t - tmin) <= 1e-6f))))
        fail_msg("%s: box (%a %a %a)-(%a %a %a) delta (%a %a %a) slop %g: local %d t %.9g "
                 "(triangle %u), mesh %d t %.9g, every triangle: earliest %.9g", s->name, box[0][0],
                 box[0][1], box[0][2], box[1][0], box[1][1], box[1][2], delta[0], delta[1],
                 delta[2], t_slop, got, c.t, c.count ? c.triangle[0] : 0u, mgot, mgot ? mh.t : 0.0f,
                 tmin);
    if (!got)
        return -1.0f;
    check_sweep_known(s, L, box, delta, t_slop, &c);
    stats->hits++;
    stats->multi += c.count > 1;
    stats->starts += c.start_overlap;
    assert_true(c.count >= 1 && c.count <= KCC_MAX_CONTACTS);
    check_start_overlap(s, box, delta, &c);
    check_sweep_contacts(s, box, delta, t_slop, &c);
    /* Complete unless capped, or unless the sweep's reach overflowed. */
    if (c.count < KCC_MAX_CONTACTS && listed)
        check_sweep_complete(s, t_slop, &c);
    return c.t;
}

/* Four ray origins whose segments (down axis u, length max_t) lie inside region: the corners of a
 * random footprint, random points, or points exactly under triangle corners in L. */
static float random_rays(test_rng *r, const kcc_local *L, const vec3 region[2], int u,
                         vec3 o[4])
{
    const int kx = u == 0 ? 1 : 0, ky = u == 2 ? 1 : 2;
    const float height = region[1][u] - region[0][u];
    const float max_t = rng_f(r, 0.05f, fminf(3.0f, 0.9f * height));
    const float top = region[1][u], bottom = region[0][u] + max_t;
    float fx0 = rng_f(r, region[0][kx], region[1][kx]);
    float fy0 = rng_f(r, region[0][ky], region[1][ky]);
    float fx1 = fminf(region[1][kx], fx0 + rng_f(r, 0.0f, 1.2f));
    float fy1 = fminf(region[1][ky], fy0 + rng_f(r, 0.0f, 1.2f));
    const uint32_t mode = rng_below(r, 3);
    const float h = rng_f(r, bottom, top);
    for (int i = 0; i < 4; ++i) {
        o[i][kx] = (i & 1) ? fx1 : fx0;
        o[i][ky] = (i & 2) ? fy1 : fy0;
        o[i][u] = h;
        if (mode == 1) {
            o[i][kx] = rng_f(r, fx0, fx1);
            o[i][ky] = rng_f(r, fy0, fy1);
            o[i][u] = rng_f(r, bottom, top);
        } else if (mode == 2 && !L->overflow && L->count > 0) {
            /* exactly under a corner: edge functions exactly zero */
            const float *c = L->tris[rng_below(r, L->count)].v[rng_below(r, 3)];
            if (c[kx] >= region[0][kx] && c[kx] <= region[1][kx] && c[ky] >= region[0][ky] &&
                c[ky] <= region[1][ky]) {
                o[i][kx] = c[kx];
                o[i][ky] = c[ky];
                o[i][u] = fminf(top, fmaxf(bottom, c[u] + rng_f(r, 0.0f, max_t)));
            }
        }
    }
    return max_t;
}

/* A random box and delta with box and box + delta inside region (some deltas straight down u,
 * some along one axis, some tiny). */
static void random_sweep(test_rng *r, const vec3 region[2], int u, vec3 box[2], vec3 delta)
{
    const uint32_t mode = rng_below(r, 4);
    const float len = mode == 3 ? rng_f(r, 0.0f, 1e-3f) : rng_f(r, 0.0f, 1.5f);
    vec3 dir = {rng_f(r, -1, 1), rng_f(r, -1, 1), rng_f(r, -1, 1)};
    if (mode == 1) {
        glm_vec3_zero(dir);
        dir[u] = -1.0f;
    } else if (mode == 2) {
        int a = (int)rng_below(r, 3);
        glm_vec3_zero(dir);
        dir[a] = rng_below(r, 2) ? 1.0f : -1.0f;
    }
    float dl = sqrtf(dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]);
    for (int k = 0; k < 3; ++k) {
        const float size = region[1][k] - region[0][k];
        const float h = fminf(rng_f(r, 0.02f, 0.5f), 0.45f * size);
        float d = dl > 0.0f ? dir[k] / dl * len : 0.0f;
        const float room = size - 2.0f * h;
        d = fmaxf(-room, fminf(room, d));
        const float lo = region[0][k] - fminf(d, 0.0f);
        const float hi = region[1][k] - 2.0f * h - fmaxf(d, 0.0f);
        box[0][k] = fminf(hi, fmaxf(lo, rng_f(r, lo, hi)));
        box[1][k] = box[0][k] + 2.0f * h;
        delta[k] = d;
    }
}

/* A random box inside region: any size from 1 cm to the region, flat along one axis now and
 * then, or with a corner exactly on a corner of a triangle in L. */
static void random_box(test_rng *r, const kcc_local *L, const vec3 region[2], vec3 box[2])
{
    const uint32_t mode = rng_below(r, 4);
    for (int k = 0; k < 3; ++k) {
        const float size = region[1][k] - region[0][k];
        const float w = size * expf(rng_f(r, logf(0.01f / size), 0.0f));
        box[0][k] = rng_f(r, region[0][k], region[1][k] - w);
        box[1][k] = box[0][k] + w;
        if (mode == 1 && k == 1)
            box[1][k] = box[0][k];
    }
    if (mode >= 2 && !L->overflow && L->count > 0) {
        const float *c = L->tris[rng_below(r, L->count)].v[rng_below(r, 3)];
        for (int k = 0; k < 3; ++k) {
            const float w = box[1][k] - box[0][k];
            if (c[k] < region[0][k] || c[k] > region[1][k])
                return;
            if (rng_below(r, 2)) {
                box[1][k] = c[k];
                box[0][k] = fmaxf(region[0][k], c[k] - w);
            } else {
                box[0][k] = c[k];
                box[1][k] = fminf(region[1][k], c[k] + w);
            }
        }
    }
}

/* ------------------------------------------------------------------------------------------------
 * Tests */

static void local_gather_holds_exactly_the_live_triangles_touching_the_region(void **state)
{
    scenes *f = *state;
    scene *sc = f->sc;
    const int ns = f->n;
    kcc_local_store *store = f->store;
    for (int si = 0; si < ns; ++si) {
        test_rng r = rng_seed(100 + (uint64_t)si);
        uint32_t listed = 0, overflowed = 0, padded = 0;
        for (int q = 0; q < 120; ++q) {
            vec3 region[2];
            random_region(&r, &sc[si], 0.2f, q < 100 ? 1.8f : 6.0f, region);
            kcc_local L;
            memset(store, 0x5A, sizeof *store);
            kcc_local_gather(&L, store, &sc[si].src, CB(region));
            check_gather(&sc[si], &L, CB(region));
            overflowed += L.overflow;
            listed += !L.overflow && L.count > 0;
            padded += !L.overflow && L.count % KCC_LOCAL_GROUP != 0u;
        }
        /* not vacuous: most regions list something, some pad */
        assert_true(listed >= 30);
        assert_true(padded >= 10);
        (void)overflowed;
    }
}

static void local_gather_overflows_past_192_triangles_and_pads_whole_groups(void **state)
{
    (void)state;
    /* Triangle i spans x in [i, i + 0.5] (some tilted, some in a plane of the axes); every fifth
     * slot also holds a degenerate one, which never counts. Region x in [-0.25, k - 0.25] holds
     * exactly triangles 0 .. k-1. */
    const uint32_t n = 200, nd = 40;
    float *p = malloc(sizeof(float) * 9 * (n + nd));
    assert_non_null(p);
    for (uint32_t i = 0; i < n; ++i) {
        const float x = (float)i, tilt = (i % 3 == 0) ? 0.0f : 0.25f * (float)(i % 7);
        const float t[9] = {x, 0.0f, 0.0f, x + 0.5f, tilt, 0.5f, x + 0.25f, 0.5f, -0.25f};
        memcpy(p + 9 * i, t, sizeof t);
    }
    for (uint32_t j = 0; j < nd; ++j) {
        const float x = (float)(5 * j) + 0.1f;
        const float t[9] = {x, 0.1f, 0.1f, x + 0.1f, 0.1f, 0.1f, x + 0.3f, 0.1f, 0.1f};
        memcpy(p + 9 * (n + j), t, sizeof t);
    }
    scene s;
    scene_from_soup(&s, p, n + nd, "row");
    free(p);
    kcc_local_store *store = malloc(sizeof *store);
    assert_non_null(store);
    static const uint32_t ks[] = {0,  1,  2,  3,   4,   5,   6,   7,   8,   9,
                                  15, 16, 17, 190, 191, 192, 193, 194, 200};
    for (size_t q = 0; q < sizeof ks / sizeof ks[0]; ++q) {
        const uint32_t k = ks[q];
        vec3 region[2] = {{-0.25f, -1.0f, -1.0f}, {(float)k - 0.25f, 1.0f, 1.0f}};
        kcc_local L;
        memset(store, 0x5A, sizeof *store);
        kcc_local_gather(&L, store, &s.src, CB(region));
        check_gather(&s, &L, CB(region));
        if (k > KCC_LOCAL_MAX) {
            assert_true(L.overflow);
        } else {
            assert_false(L.overflow);
            assert_int_equal(L.count, k);
        }
    }
    free(store);
    scene_free(&s);
}

/* A neighbourhood source that forwards to a mesh's and counts the calls of each operation. */
enum { ASK_GATHER, ASK_FETCH, ASK_RAYCAST, ASK_OVERLAP, ASK_SWEEP, ASK_TRIANGLE, ASK_FACE_NORMAL, ASK_KINDS };
typedef struct counting_source {
    kcc_local_source        base; /* first: the operations receive &base */
    const kcc_local_source *inner;
    uint32_t               *calls;
} counting_source;

static const counting_source *counted(const kcc_local_source *src, int kind)
{
    const counting_source *cs = (const counting_source *)(const void *)src;
    cs->calls[kind]++;
    return cs;
}
static uint32_t cs_query(const kcc_local_source *src, const vec3 region[2], uint32_t *handles,
                         uint32_t capacity)
{
    const kcc_local_source *in = counted(src, ASK_GATHER)->inner;
    return in->ops->query(in, region, handles, capacity);
}
static void cs_fetch(const kcc_local_source *src, const uint32_t *handles, uint32_t n, kcc_local_tri *out)
{
    const kcc_local_source *in = counted(src, ASK_FETCH)->inner;
    in->ops->fetch(in, handles, n, out);
}
static bool cs_raycast(const kcc_local_source *src, const vec3 origin, const vec3 dir, float max_t,
                       kcc_ray_hit *out)
{
    const kcc_local_source *in = counted(src, ASK_RAYCAST)->inner;
    return in->ops->raycast(in, origin, dir, max_t, out);
}
static uint32_t cs_overlap(const kcc_local_source *src, const vec3 box[2], uint32_t *ids, uint32_t capacity)
{
    const kcc_local_source *in = counted(src, ASK_OVERLAP)->inner;
    return in->ops->overlap(in, box, ids, capacity);
}
static bool cs_sweep(const kcc_local_source *src, const vec3 box[2], const vec3 delta, kcc_sweep_hit *out)
{
    const kcc_local_source *in = counted(src, ASK_SWEEP)->inner;
    return in->ops->sweep(in, box, delta, out);
}
static bool cs_triangle(const kcc_local_source *src, uint32_t id, vec3 out[3])
{
    const kcc_local_source *in = counted(src, ASK_TRIANGLE)->inner;
    return in->ops->triangle(in, id, out);
}
static void cs_face_normal(const kcc_local_source *src, uint32_t id, vec3 out)
{
    const kcc_local_source *in = counted(src, ASK_FACE_NORMAL)->inner;
    in->ops->face_normal(in, id, out);
}

/* Every query of a list asks its source, in the overflow mode too (where it asks for all of the
 * source's triangles), and answers as the mesh's public queries do: a list does not care where its
 * triangles come from. A 2 m soup of 600 triangles overflows a list over all of it. */
static void local_queries_ask_their_source_in_every_mode(void **state)
{
    (void)state;
    scene s;
    scene_soup(&s, 77, 600, 2.0f, "dense soup");
    static const kcc_local_source_ops ops = {cs_query, cs_fetch,    cs_raycast,    cs_overlap,
                                             cs_sweep, cs_triangle, cs_face_normal};
    uint32_t calls[ASK_KINDS] = {0};
    counting_source cs = {{&ops, s.mesh, s.src.key}, &s.src, calls};
    kcc_local_store *store = malloc(sizeof *store);
    assert_non_null(store);
    const vec3 region[2] = {{-1.0f, -1.0f, -1.0f}, {3.0f, 3.0f, 3.0f}};
    kcc_local L;
    kcc_local_gather(&L, store, &cs.base, region);
    assert_true(L.overflow);
    assert_int_equal(calls[ASK_GATHER], 1);

    const vec3 origin = {1.0f, 2.9f, 1.0f}, down = {0.0f, -1.0f, 0.0f};
    kcc_sel none = {0};
    kcc_ray_hit got, want;
    const bool g = kcc_local_raycast_down(&L, &none, origin, 1, 3.5f, &got);
    assert_int_equal(g, kcc_mesh_raycast(s.mesh, origin, down, 3.5f, &want));
    assert_true(g && got.t == want.t && got.triangle == want.triangle);
    assert_int_equal(calls[ASK_RAYCAST], 1);

    const vec3 box[2] = {{0.7f, 0.7f, 0.7f}, {1.3f, 1.3f, 1.3f}};
    assert_int_equal(kcc_local_overlaps(&L, box), kcc_mesh_overlap_aabb(s.mesh, box, NULL, 0) > 0);
    assert_int_equal(calls[ASK_OVERLAP], 1);

    const vec3 high[2] = {{0.8f, 2.6f, 0.8f}, {1.2f, 2.9f, 1.2f}}, drop = {0.0f, -2.5f, 0.0f};
    kcc_contacts contacts;
    kcc_sweep_hit hit;
    const bool swept = kcc_local_sweep(&L, high, drop, 1e-4f, &contacts);
    assert_int_equal(swept, kcc_mesh_sweep_aabb(s.mesh, high, drop, &hit));
    assert_true(swept && contacts.t == hit.t);
    assert_true(calls[ASK_GATHER] + calls[ASK_SWEEP] >= 2); /* its own region, or all of it */

    vec3 push;
    uint32_t overlapped[KCC_MAX_OVERLAPPED], n_overlapped = 0;
    const uint32_t asked = calls[ASK_GATHER] + calls[ASK_OVERLAP];
    assert_true(kcc_local_penetration(&L, box, 1, 0.7f, push, overlapped, &n_overlapped));
    assert_true(calls[ASK_GATHER] + calls[ASK_OVERLAP] > asked);

    vec3 n;
    kcc_local_face_normal(&L, want.triangle, n);
    kcc_plane plane; /* the plane's definition: computed from the stored corners */
    kcc_tri corners;
    kcc_mesh_tri(s.mesh, kcc_mesh_slot_of(s.mesh, want.triangle), &corners);
    kcc_tri_plane(&corners, &plane);
    assert_memory_equal(n, plane.n, sizeof n);
    assert_int_equal(calls[ASK_FACE_NORMAL], 1);
    free(store);
    scene_free(&s);
}

static void local_select_returns_exactly_the_entries_whose_bounds_touch_the_box(void **state)
{
    scenes *f = *state;
    scene *sc = f->sc;
    const int ns = f->n;
    kcc_local_store *store = f->store;
    for (int si = 0; si < ns; ++si) {
        test_rng r = rng_seed(200 + (uint64_t)si);
        for (int q = 0; q < 40; ++q) {
            vec3 region[2];
            kcc_local L;
            small_region(&r, &sc[si], &L, store, region);
            for (int b = 0; b < 20; ++b) {
                vec3 box[2];
                random_box(&r, &L, CB(region), box);
                check_select(&sc[si], &L, CB(box));
            }
            /* boxes whose faces lie exactly on a listed triangle's bounds (touching counts) */
            for (uint32_t b = 0; b < 4 && L.count > 0; ++b) {
                const uint32_t id = L.tris[rng_below(&r, L.count)].index;
                const int k = (int)rng_below(&r, 3);
                vec3 box[2];
                glm_vec3_copy(region[0], box[0]);
                glm_vec3_copy(region[1], box[1]);
                if (b & 1)
                    box[1][k] = sc[si].lo[id][k];
                else
                    box[0][k] = sc[si].hi[id][k];
                if (box[0][k] <= box[1][k])
                    check_select(&sc[si], &L, CB(box));
            }
            check_select(&sc[si], &L, CB(region));
        }
    }
}

static void local_raycast_down4_equals_single_rays_bit_for_bit_and_the_mesh_ray(void **state)
{
    scenes *f = *state;
    scene *sc = f->sc;
    const int ns = f->n;
    kcc_local_store *store = f->store;
    for (int si = 0; si < ns; ++si) {
        test_rng r = rng_seed(300 + (uint64_t)si);
        ray_stats st = {0, 0, 0};
        for (int q = 0; q < 60; ++q) {
            vec3 region[2];
            kcc_local L;
            small_region(&r, &sc[si], &L, store, region);
            for (int u = 1; u <= 2; ++u)
                for (int b = 0; b < 6; ++b) {
                    vec3 o[4];
                    const float max_t = random_rays(&r, &L, CB(region), u, o);
                    check_rays(&sc[si], &L, CB(o), u, max_t, false, &st);
                }
        }
        /* not vacuous: a fair share of the rays hit something */
        if (st.hits * 10 < st.rays)
            fail_msg("%s: only %u of %u rays hit", sc[si].name, st.hits, st.rays);
    }
}

static void local_raycast_down_through_grid_vertices_and_edges_always_hits(void **state)
{
    (void)state;
    scene sc[2];
    scene_grid(&sc[0], 1, 16, 0.8f, 0.37f, -2.1f, -1.3f, "grid+Y");
    scene_grid(&sc[1], 2, 16, -1.7f, 0.29f, 3.3f, -0.9f, "grid+Z");
    kcc_local_store *store = malloc(sizeof *store);
    assert_non_null(store);
    for (int si = 0; si < 2; ++si) {
        const scene *s = &sc[si];
        const int u = s->grid_up, kx = 0, ky = u == 1 ? 2 : 1;
        test_rng r = rng_seed(400 + (uint64_t)si);
        ray_stats st = {0, 0, 0};
        /* Sub-grids of 5 x 5 cells (gathered: about 70 triangles), then the whole grid (512
         * triangles: the overflow path). */
        for (int q = 0; q < 7; ++q) {
            const bool whole = q == 6;
            const uint32_t i0 = whole ? 0 : rng_below(&r, s->grid_cells - 4);
            const uint32_t j0 = whole ? 0 : rng_below(&r, s->grid_cells - 4);
            const uint32_t m = whole ? s->grid_cells : 5;
            vec3 region[2];
            region[0][kx] = grid_at(s->grid_x0, s->grid_cell, i0);
            region[1][kx] = grid_at(s->grid_x0, s->grid_cell, i0 + m);
            region[0][ky] = grid_at(s->grid_y0, s->grid_cell, j0);
            region[1][ky] = grid_at(s->grid_y0, s->grid_cell, j0 + m);
            region[0][u] = s->grid_h - 1.0f;
            region[1][u] = s->grid_h + 1.0f;
            kcc_local L;
            kcc_local_gather(&L, store, &s->src, CB(region));
            assert_true(L.overflow == whole);
            /* Points on the lines: every vertex; points on the edges of each axis; the float
             * midpoint of each diagonal; one float step off a vertex each way. */
            vec3 o[4];
            int n = 0;
            for (uint32_t j = j0; j <= j0 + m; ++j)
                for (uint32_t i = i0; i <= i0 + m; ++i)
                    for (int kind = 0; kind < 6; ++kind) {
                        const float x = grid_at(s->grid_x0, s->grid_cell, i);
                        const float y = grid_at(s->grid_y0, s->grid_cell, j);
                        const float xn = grid_at(s->grid_x0, s->grid_cell, i + 1);
                        const float yn = grid_at(s->grid_y0, s->grid_cell, j + 1);
                        const bool last_i = i == i0 + m, last_j = j == j0 + m;
                        float px = x, py = y;
                        if (kind == 1 && !last_i) {
                            px = rng_f(&r, x, xn);
                        } else if (kind == 2 && !last_j) {
                            py = rng_f(&r, y, yn);
                        } else if (kind == 3 && !last_i && !last_j) {
                            px = 0.5f * (x + xn);
                            py = 0.5f * (y + yn);
                        } else if (kind == 4 && !last_i && !last_j) {
                            px = nextafterf(x, INFINITY);
                            py = nextafterf(y, INFINITY);
                        } else if (kind == 5 && !last_i && j > j0) {
                            px = nextafterf(x, INFINITY);
                            py = nextafterf(y, -INFINITY);
                        } else if (kind != 0) {
                            continue;
                        }
                        o[n][kx] = px;
                        o[n][ky] = py;
                        /* above the floor; now and then exactly on it (t = 0) */
                        o[n][u] = s->grid_h;
                        if (rng_below(&r, 16) != 0)
                            o[n][u] += rng_f(&r, 0.0f, 0.9f);
                        if (++n == 4) {
                            check_rays(s, &L, CB(o), u, 1.0f, true, &st);
                            n = 0;
                        }
                    }
        }
        assert_true(st.rays > 500);
    }
    free(store);
    scene_free(&sc[0]);
    scene_free(&sc[1]);
}

static void local_overlaps_agrees_with_the_mesh_overlap_query(void **state)
{
    scenes *f = *state;
    scene *sc = f->sc;
    const int ns = f->n;
    kcc_local_store *store = f->store;
    for (int si = 0; si < ns; ++si) {
        const scene *s = &sc[si];
        test_rng r = rng_seed(500 + (uint64_t)si);
        uint32_t yes = 0, no = 0;
        for (int q = 0; q < 50; ++q) {
            vec3 region[2];
            kcc_local L;
            small_region(&r, s, &L, store, region);
            for (int b = 0; b < 40; ++b) {
                vec3 box[2];
                random_box(&r, &L, CB(region), box);
                if (check_overlap(s, &L, CB(box)))
                    yes++;
                else
                    no++;
            }
            if (s->grid_up != 0 && region[0][s->grid_up] <= s->grid_h &&
                region[1][s->grid_up] >= s->grid_h) {
                /* boxes resting exactly on the floor (touching: overlap), a float step above it
                 * (clear), and with their top exactly on it */
                const int u = s->grid_up;
                vec3 box[2];
                random_box(&r, &L, CB(region), box);
                bool over = true; /* the box's footprint meets the grid's */
                for (int k = 0; k < 3; ++k)
                    over = over && (k == u || (box[0][k] <= s->bounds[1][k] &&
                                               box[1][k] >= s->bounds[0][k]));
                box[0][u] = s->grid_h;
                box[1][u] = fminf(region[1][u], s->grid_h + 0.5f);
                assert_true(check_overlap(s, &L, CB(box)) == over);
                box[0][u] = nextafterf(s->grid_h, INFINITY);
                assert_false(check_overlap(s, &L, CB(box)));
                box[1][u] = s->grid_h;
                box[0][u] = fmaxf(region[0][u], s->grid_h - 0.5f);
                assert_true(check_overlap(s, &L, CB(box)) == over);
            }
        }
        if (yes < 50 || no < 50)
            fail_msg("%s: %u overlapping and %u clear boxes", s->name, yes, no);
    }
}

static void local_sweep_finds_the_earliest_contact_and_all_within_the_slop(void **state)
{
    scenes *f = *state;
    scene *sc = f->sc;
    const int ns = f->n;
    kcc_local_store *store = f->store;
    uint32_t total_leaving = 0;
    for (int si = 0; si < ns; ++si) {
        scene *s = &sc[si];
        test_rng r = rng_seed(600 + (uint64_t)si);
        sweep_stats st = {0, 0, 0, 0, 0};
        for (int q = 0; q < 50; ++q) {
            vec3 region[2];
            kcc_local L;
            small_region(&r, s, &L, store, region);
            const int u = s->grid_up ? s->grid_up : 1 + (int)rng_below(&r, 2);
            for (int b = 0; b < 12; ++b) {
                vec3 box[2], delta;
                random_sweep(&r, CB(region), u, box, delta);
                check_sweep(s, &L, CB(box), delta, (b & 1) ? 0.02f : 0.0f, &st);
            }
            if (s->grid_up != 0 && region[0][u] <= s->grid_h - 0.3f &&
                region[1][u] >= s->grid_h + 0.6f) {
                /* a box resting exactly on the floor pushed down (t = 0, start overlap) or
                 * sideways, and one a gap above it falling onto it */
                vec3 box[2], delta;
                random_sweep(&r, CB(region), u, box, delta);
                box[1][u] = s->grid_h + fminf(0.3f, box[1][u] - box[0][u]);
                box[0][u] = s->grid_h;
                glm_vec3_zero(delta);
                delta[u] = -0.25f;
                check_sweep(s, &L, CB(box), delta, 0.0f, &st);
                delta[u] = 0.0f;
                const float right = region[1][0] - box[1][0], left = box[0][0] - region[0][0];
                delta[0] = right >= left ? fminf(0.1f, right) : -fminf(0.1f, left);
                check_sweep(s, &L, CB(box), delta, 0.01f, &st);
                const float gap = rng_f(&r, 0.0f, 0.2f);
                box[0][u] += gap;
                box[1][u] += gap;
                glm_vec3_zero(delta);
                delta[u] = -0.28f;
                check_sweep(s, &L, CB(box), delta, 0.0f, &st);
            }
        }
        if (st.hits * 10 < st.sweeps)
            fail_msg("%s: only %u of %u sweeps hit", s->name, st.hits, st.sweeps);
        total_leaving += st.leaving;
    }
    assert_true(total_leaving > 0); /* kcc_local_sweep_out left out an overlap somewhere */
}

/* A large region over s: on every third try q the whole scene grown by 0.5 m, else a random one. */
static void large_region(test_rng *r, const scene *s, int q, vec3 region[2])
{
    if (q % 3 != 0) {
        random_region(r, s, 2.0f, 5.0f, region);
        return;
    }
    memcpy(region, s->bounds, sizeof(vec3[2]));
    for (int k = 0; k < 3; ++k) {
        region[0][k] -= 0.5f;
        region[1][k] += 0.5f;
    }
}

/* Sweep b of the 16 in an overflowing region, down axis u: small ones (their reach gathered into a
 * list of its own) for b < 12; large ones (the reach overflows too: the mesh's sweep): a big box
 * for b 12..13, a wide slab falling from the top of the region for b 14..15. */
static void overflow_sweep(test_rng *r, const vec3 region[2], int u, int b, vec3 box[2], vec3 delta)
{
    random_sweep(r, region, u, box, delta);
    for (int k = 0; k < 3 && b >= 12; ++k) {
        const float size = region[1][k] - region[0][k];
        box[0][k] = region[0][k] + 0.05f * size;
        box[1][k] = region[1][k] - 0.35f * size;
        delta[k] = rng_f(r, 0.0f, 0.3f) * size;
        if (b >= 14) {
            box[1][k] = region[1][k] - 0.05f * size;
            delta[k] = 0.0f;
            if (k == u) {
                box[0][k] = region[1][k] - 0.1f * size;
                delta[k] = -0.8f * size;
            }
        }
    }
}

/* What the overflowing-region test saw: regions, sweeps whose reach overflowed (answered by the
 * mesh), and those of them hitting at t > 0. */
typedef struct overflow_counts {
    uint32_t regions, through_mesh, later;
} overflow_counts;

/* Rays, overlaps and sweeps in the overflowing list L over region, each against its reference. */
static void check_overflowing_list(test_rng *r, scene *s, const kcc_local *L, const vec3 region[2],
                                   ray_stats *rs, sweep_stats *ss, overflow_counts *counts)
{
    for (int u = 1; u <= 2; ++u)
        for (int b = 0; b < 6; ++b) {
            vec3 o[4];
            const float max_t = random_rays(r, L, region, u, o);
            check_rays(s, L, CB(o), u, max_t, false, rs);
        }
    for (int b = 0; b < 30; ++b) {
        vec3 box[2];
        random_box(r, L, region, box);
        check_overlap(s, L, CB(box));
    }
    for (int b = 0; b < 16; ++b) {
        vec3 box[2], delta;
        overflow_sweep(r, region, s->grid_up ? s->grid_up : 1 + (b & 1), b, box, delta);
        vec3 reach[2];
        swept_reach(CB(box), delta, 0.0f, reach);
        const bool mesh_path = ref_count(s, CB(reach)) > KCC_LOCAL_MAX;
        const float t = check_sweep(s, L, CB(box), delta, (b & 1) ? 0.02f : 0.0f, ss);
        counts->through_mesh += mesh_path;
        counts->later += mesh_path && t > 0.0f;
    }
}

static void local_queries_on_an_overflowing_region_agree_with_the_references(void **state)
{
    scenes *f = *state;
    scene *sc = f->sc;
    const int ns = f->n;
    kcc_local_store *store = f->store;
    for (int si = 0; si < ns; ++si) {
        scene *s = &sc[si];
        if (s->n <= KCC_LOCAL_MAX)
            continue;
        test_rng r = rng_seed(700 + (uint64_t)si);
        ray_stats rs = {0, 0, 0};
        sweep_stats ss = {0, 0, 0, 0, 0};
        overflow_counts counts = {0, 0, 0};
        for (int q = 0; q < 40 && counts.regions < 6; ++q) {
            vec3 region[2];
            large_region(&r, s, q, region);
            if (ref_count(s, CB(region)) <= KCC_LOCAL_MAX)
                continue;
            kcc_local L;
            kcc_local_gather(&L, store, &s->src, CB(region));
            check_gather(s, &L, CB(region));
            assert_true(L.overflow);
            counts.regions++;
            check_overflowing_list(&r, s, &L, CB(region), &rs, &ss, &counts);
        }
        if (counts.regions == 0 || counts.through_mesh == 0 || rs.hits == 0 || ss.hits == 0 ||
            (s->grid_up != 0 && counts.later == 0))
            fail_msg("%s: %u overflowing regions, %u sweeps through the mesh (%u hitting at "
                     "t > 0), %u ray hits, %u sweep hits", s->name, counts.regions, counts.through_mesh,
                     counts.later, rs.hits, ss.hits);
    }
}

/* A scene of n soup triangles and its local list over region; the store to free afterwards. */
static kcc_local_store *gather_soup(scene *s, const float *p, uint32_t n, const char *name,
                                    const vec3 region[2], kcc_local *L)
{
    scene_from_soup(s, p, n, name);
    kcc_local_store *store = malloc(sizeof *store);
    assert_non_null(store);
    kcc_local_gather(L, store, &s->src, region);
    return store;
}

/* The collide layer keeps a sliver whose float normal has no length (kcc_tri_overlap_aabb and the
 * mesh queries test it exactly in double); the local list drops such triangles. A box on the
 * sliver's line: the mesh says it overlaps. */
static void local_queries_report_a_sliver_the_mesh_reports(void **state)
{
    (void)state;
    const float p[18] = {-1.0f, 0.0f, -0x1.8c240cp-87f, 1.0f, 0.0f, 1.0f, -1.0f, 0.0f, 0.0f,
                         5.0f, 0.0f, 5.0f, 6.0f, 0.0f, 5.0f, 5.0f, 0.0f, 6.0f};
    scene s;
    vec3 region[2] = {{-2.0f, -1.0f, -2.0f}, {2.0f, 1.0f, 2.0f}};
    kcc_local L;
    kcc_local_store *store = gather_soup(&s, p, 2, "sliver", CB(region), &L);
    vec3 on[2] = {{-0.05f, 0.0f, 0.45f}, {0.05f, 0.0f, 0.55f}};
    const bool mesh_overlap = kcc_mesh_overlap_aabb(s.mesh, CB(on), NULL, 0) > 0;
    vec3 above[2] = {{-0.05f, 0.5f, 0.45f}, {0.05f, 0.7f, 0.55f}};
    const vec3 down = {0.0f, -1.0f, 0.0f};
    kcc_sweep_hit mh;
    const bool mesh_sweep = kcc_mesh_sweep_aabb(s.mesh, CB(above), down, &mh);
    kcc_contacts c;
    const bool local_sweep = kcc_local_sweep(&L, CB(above), down, 0.0f, &c);
    const bool local_overlap = kcc_local_overlaps(&L, CB(on));
    const bool live = s.live[0];
    const uint32_t listed = L.count;
    free(store);
    scene_free(&s);
    if (live != (listed == 1) || mesh_overlap != local_overlap || mesh_sweep != local_sweep)
        fail_msg("sliver (live %d): listed %u of 1; box on its line: mesh overlap %d, local %d; "
                 "box falling onto it: mesh sweep %d (t %.9g), local %d", live, listed,
                 mesh_overlap, local_overlap, mesh_sweep, mesh_sweep ? mh.t : 0.0f, local_sweep);
}

/* The controller's rays down, beside a triangle whose edge functions underflow (as
 * ray_beside_a_triangle_whose_edge_functions_underflow_misses in test_collide): every point of
 * the triangle has x >= 0, x + y <= 1 and y >= 0, so these rays down -y, beside it at the z of
 * its raised vertex or starting below it, miss it, one at a time and four at once. */
static void local_rays_beside_a_triangle_whose_edge_functions_underflow_miss(void **state)
{
    (void)state;
    const float tiny = 0x1p-149f;
    const float p[18] = {0.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f, -0.0f, 1.0f, tiny,
                         -0.0f, 1.0f, tiny, 1.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    scene s;
    vec3 region[2] = {{-1.0f, -1.0f, -1.0f}, {2.0f, 2.0f, 1.0f}};
    kcc_local L;
    kcc_local_store *store = gather_soup(&s, p, 2, "denormal", CB(region), &L);
    const vec3 o[4] = {{-0x1.2a17b8p-4f, 0x1.b34634p-1f, tiny}, {0.5f, 0.85f, tiny},
                       {0x1.82de48p-1f, -0x1.1f7cd4p-3f, 0.0f}, {-0x1p-20f, 0.75f, tiny}};
    vec3 rb[2] = {{-1.0f, -1.0f, -1.0f}, {1.0f, 1.0f, 1.0f}};
    kcc_sel sel;
    kcc_local_select(&L, CB(rb), &sel);
    const uint32_t listed = L.count, selected = (uint32_t)__builtin_popcountll(sel.bits[0]);
    kcc_ray_hit h1[4], h4[4];
    bool g1[4], g4[4];
    for (int r = 0; r < 4; ++r)
        g1[r] = kcc_local_raycast_down(&L, &sel, o[r], 1, 2.0f, &h1[r]);
    kcc_local_raycast_down4(&L, &sel, o, 1, 2.0f, h4, g4);
    free(store);
    scene_free(&s);
    assert_int_equal(listed, 2);
    assert_int_equal(selected, 2);
    for (int r = 0; r < 4; ++r)
        if (g1[r] || g4[r])
            fail_msg("ray from (%a, %a): one at a time %s, four at once %s", o[r][0], o[r][1],
                     g1[r] ? "hit" : "miss", g4[r] ? "hit" : "miss");
}

/* The controller's tree query (kcc_mesh_query_slots, unchecked) with infinite bounds answers every
 * triangle, and with NaN bounds none. An empty child slot has bounds +inf .. -inf, which an infinite
 * query box used to match, sending the walk back to the root until its stack overflowed. */
static void tree_query_with_infinite_bounds_answers_every_triangle(void **state)
{
    (void)state;
    const float p[18] = {0.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 0.0f, 0.0f, 1.0f,
                         5.0f, 1.0f, 5.0f, 6.0f, 1.0f, 5.0f, 5.0f, 1.0f, 6.0f};
    scene s;
    scene_from_soup(&s, p, 2, "two");
    uint32_t out[8];
    const float lo[3] = {-INFINITY, -INFINITY, -INFINITY}, hi[3] = {INFINITY, INFINITY, INFINITY};
    const uint32_t all = kcc_mesh_query_slots(s.mesh, lo, hi, out, 8);
    const float nlo[3] = {NAN, 0.0f, 0.0f}, nhi[3] = {NAN, 1.0f, 1.0f};
    const uint32_t none = kcc_mesh_query_slots(s.mesh, nlo, nhi, out, 8);
    scene_free(&s);
    assert_int_equal(all, 2);
    assert_int_equal(none, 0);
}

int test_group_local(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(local_gather_holds_exactly_the_live_triangles_touching_the_region, scenes_setup, scenes_teardown),
        cmocka_unit_test(local_gather_overflows_past_192_triangles_and_pads_whole_groups),
        cmocka_unit_test(local_queries_ask_their_source_in_every_mode),
        cmocka_unit_test_setup_teardown(local_select_returns_exactly_the_entries_whose_bounds_touch_the_box, scenes_setup, scenes_teardown),
        cmocka_unit_test_setup_teardown(local_raycast_down4_equals_single_rays_bit_for_bit_and_the_mesh_ray, scenes_setup, scenes_teardown),
        cmocka_unit_test(local_raycast_down_through_grid_vertices_and_edges_always_hits),
        cmocka_unit_test_setup_teardown(local_overlaps_agrees_with_the_mesh_overlap_query, scenes_setup, scenes_teardown),
        cmocka_unit_test_setup_teardown(local_sweep_finds_the_earliest_contact_and_all_within_the_slop, scenes_setup, scenes_teardown),
        cmocka_unit_test_setup_teardown(local_queries_on_an_overflowing_region_agree_with_the_references, scenes_setup, scenes_teardown),
        cmocka_unit_test(local_queries_report_a_sliver_the_mesh_reports),
        cmocka_unit_test(local_rays_beside_a_triangle_whose_edge_functions_underflow_miss),
        cmocka_unit_test(tree_query_with_infinite_bounds_answers_every_triangle),
    };
    return KCC_RUN_GROUP("local", tests);
}
