/* test_collide.c: the collide module (kcc_mesh and the per-triangle primitives) against independent
 * references written here in double precision: brute-force ray/triangle (plane + barycentrics),
 * box/triangle by clipping the triangle against the box, swept boxes by sampling that clip test. */
#include "test.h"

#include <threads.h>

#include "collide_internal.h"

/* C11 does not convert vec3 * to const vec3 * implicitly (pedantic): box arguments go through CB. */
#define CB(...) ((const vec3 *)(__VA_ARGS__))

/* ------------------------------------------------------------------------------------------------
 * Helpers */

static test_rng rng_seed(uint64_t seed)
{
    return rng_seed_salted(seed, 0x1234567ull);
}

/* A triangle soup with its own arrays (input order, 9 floats per triangle). */
typedef struct soup {
    float   *p;
    uint32_t n;
} soup;

static soup soup_random(uint64_t seed, uint32_t n, float world, float size)
{
    test_rng r = rng_seed(seed);
    soup s = {malloc(sizeof(float) * 9 * n), n};
    assert_non_null(s.p);
    for (uint32_t i = 0; i < n; ++i) {
        float c[3] = {rng_f(&r, 0, world), rng_f(&r, 0, world), rng_f(&r, 0, world)};
        for (int v = 0; v < 3; ++v)
            for (int k = 0; k < 3; ++k)
                s.p[9 * i + 3 * v + k] = c[k] + rng_f(&r, -size, size);
    }
    return s;
}

static kcc_mesh *build_soup(const soup *s)
{
    kcc_mesh_desc d;
    memset(&d, 0, sizeof d);
    d.positions = s->p;
    d.vertex_count = 3 * s->n;
    d.triangle_count = s->n;
    kcc_mesh *m = NULL;
    assert_int_equal(kcc_mesh_build(&d, &m), KCC_OK);
    assert_non_null(m);
    return m;
}

static kcc_mesh *build_indexed(const float *pos, uint32_t nv, const uint32_t *idx, uint32_t nt)
{
    kcc_mesh_desc d;
    memset(&d, 0, sizeof d);
    d.positions = pos;
    d.vertex_count = nv;
    d.indices = idx;
    d.triangle_count = nt;
    kcc_mesh *m = NULL;
    assert_int_equal(kcc_mesh_build(&d, &m), KCC_OK);
    return m;
}

/* A flat grid of cells x cells quads (2 triangles each) at height y, origin (x0, z0), cell size h.
 * Triangles wound so the normal is +Y. Returns positions and indices (caller frees). */
static void make_grid(uint32_t cells, float x0, float y, float z0, float h, float **out_pos,
                      uint32_t **out_idx, uint32_t *nv, uint32_t *nt)
{
    uint32_t w = cells + 1;
    float *pos = malloc(sizeof(float) * 3 * w * w);
    uint32_t *idx = malloc(sizeof(uint32_t) * 6 * cells * cells);
    assert_non_null(pos);
    assert_non_null(idx);
    for (uint32_t j = 0; j < w; ++j)
        for (uint32_t i = 0; i < w; ++i) {
            float *p = pos + 3 * (j * w + i);
            p[0] = x0 + h * (float)i;
            p[1] = y;
            p[2] = z0 + h * (float)j;
        }
    const uint32_t t = grid_indices(cells, idx);
    *out_pos = pos;
    *out_idx = idx;
    *nv = w * w;
    *nt = t;
}

/* Minimal OBJ reader for the shared levels (v and f lines, polygons fanned), independent of the
 * level module so that this file tests the collide module alone. */
typedef struct objmesh {
    float    *pos;
    uint32_t *idx;
    uint32_t  nv, nt;
} objmesh;

static bool load_obj(const char *path, objmesh *out)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    uint32_t cv = 1024, ct = 1024;
    out->pos = malloc(sizeof(float) * 3 * cv);
    out->idx = malloc(sizeof(uint32_t) * 3 * ct);
    out->nv = out->nt = 0;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        if (line[0] == 'v' && line[1] == ' ') {
            if (out->nv == cv) {
                cv *= 2;
                out->pos = realloc(out->pos, sizeof(float) * 3 * cv);
            }
            float *p = out->pos + 3 * out->nv++;
            if (sscanf(line + 2, "%f %f %f", &p[0], &p[1], &p[2]) != 3)
                out->nv--;
        } else if (line[0] == 'f' && line[1] == ' ') {
            long v[64];
            int nvtx = 0;
            char *s = line + 2;
            while (nvtx < 64) {
                char *end;
                long x = strtol(s, &end, 10);
                if (end == s)
                    break;
                v[nvtx++] = x < 0 ? (long)out->nv + x : x - 1;
                s = end;
                while (*s && *s != ' ' && *s != '\t')
                    ++s;
            }
            for (int k = 2; k < nvtx; ++k) {
                if (out->nt == ct) {
                    ct *= 2;
                    out->idx = realloc(out->idx, sizeof(uint32_t) * 3 * ct);
                }
                uint32_t *t = out->idx + 3 * out->nt++;
                t[0] = (uint32_t)v[0];
                t[1] = (uint32_t)v[k - 1];
                t[2] = (uint32_t)v[k];
            }
        }
    }
    fclose(f);
    return out->nt > 0;
}

static void obj_free(objmesh *o)
{
    free(o->pos);
    free(o->idx);
}

/* Triangle i of a mesh as three float pointers into a 9-float array (from kcc_mesh_triangle, which
 * is itself checked against the input in its own test). */
static void tri_of(const kcc_mesh *m, uint32_t i, float out[9])
{
    vec3 v[3];
    assert_true(kcc_mesh_triangle(m, i, v));
    for (int c = 0; c < 3; ++c)
        for (int k = 0; k < 3; ++k)
            out[3 * c + k] = v[c][k];
}

/* ------------------------------------------------------------------------------------------------
 * Independent references (double precision) */

static void dsub(const double a[3], const double b[3], double o[3])
{
    o[0] = a[0] - b[0], o[1] = a[1] - b[1], o[2] = a[2] - b[2];
}

static void dcross(const double a[3], const double b[3], double o[3])
{
    o[0] = a[1] * b[2] - a[2] * b[1];
    o[1] = a[2] * b[0] - a[0] * b[2];
    o[2] = a[0] * b[1] - a[1] * b[0];
}

static double ddot(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void tod(const float *f, double o[3])
{
    o[0] = f[0], o[1] = f[1], o[2] = f[2];
}

/* Relative area measure: |n|^2 / (longest edge)^4; tiny means (nearly) degenerate. */
static double ref_flatness(const float *t)
{
    double a[3], b[3], c[3], e0[3], e1[3], e2[3], n[3];
    tod(t, a), tod(t + 3, b), tod(t + 6, c);
    dsub(b, a, e0), dsub(c, a, e1), dsub(c, b, e2);
    dcross(e0, e1, n);
    double l = fmax(ddot(e0, e0), fmax(ddot(e1, e1), ddot(e2, e2)));
    return l > 0 ? ddot(n, n) / (l * l) : 0.0;
}

/* Ray vs triangle plane: t of the plane crossing and the smallest barycentric coordinate of the
 * crossing point (negative: outside). False when the ray is parallel to the plane. */
static bool ref_ray(const float *t, const float *o, const float *d, double *out_t, double *min_bary)
{
    double a[3], b[3], c[3], od[3], dd[3], e0[3], e1[3], n[3], ao[3];
    tod(t, a), tod(t + 3, b), tod(t + 6, c), tod(o, od), tod(d, dd);
    dsub(b, a, e0), dsub(c, a, e1);
    dcross(e0, e1, n);
    double den = ddot(n, dd), nn = ddot(n, n);
    if (den == 0.0 || nn == 0.0)
        return false;
    dsub(a, od, ao);
    double tt = ddot(n, ao) / den;
    double p[3] = {od[0] + tt * dd[0], od[1] + tt * dd[1], od[2] + tt * dd[2]};
    double pa[3], pb[3], pc[3], x[3];
    dsub(a, p, pa), dsub(b, p, pb), dsub(c, p, pc);
    dcross(pb, pc, x);
    double l0 = ddot(n, x) / nn;
    dcross(pc, pa, x);
    double l1 = ddot(n, x) / nn;
    dcross(pa, pb, x);
    double l2 = ddot(n, x) / nn;
    *out_t = tt;
    *min_bary = fmin(l0, fmin(l1, l2));
    return true;
}

/* Clips the triangle against box [lo, hi] (Sutherland-Hodgman, double); true when anything is left. */
static bool ref_box(const float *t, const double lo[3], const double hi[3])
{
    double poly[16][3], tmp[16][3];
    int n = 3;
    for (int v = 0; v < 3; ++v)
        tod(t + 3 * v, poly[v]);
    for (int plane = 0; plane < 6 && n > 0; ++plane) {
        int k = plane / 2;
        bool low = (plane & 1) == 0;
        double bound = low ? lo[k] : hi[k];
        int m = 0;
        for (int i = 0; i < n; ++i) {
            const double *p = poly[i], *q = poly[(i + 1) % n];
            bool pin = low ? p[k] >= bound : p[k] <= bound;
            bool qin = low ? q[k] >= bound : q[k] <= bound;
            if (pin)
                memcpy(tmp[m++], p, sizeof tmp[0]);
            if (pin != qin) {
                double s = (bound - p[k]) / (q[k] - p[k]);
                for (int j = 0; j < 3; ++j)
                    tmp[m][j] = p[j] + s * (q[j] - p[j]);
                tmp[m++][k] = bound;
            }
        }
        n = m;
        memcpy(poly, tmp, sizeof(double) * 3 * (size_t)m);
    }
    return n > 0;
}

/* The box moved by s * delta and grown by g on every side (g < 0 shrinks). */
static bool ref_box_at(const float *t, vec3 box[2], const vec3 delta, double s, double g)
{
    double lo[3], hi[3];
    for (int k = 0; k < 3; ++k) {
        lo[k] = box[0][k] + s * delta[k] - g;
        hi[k] = box[1][k] + s * delta[k] + g;
    }
    return ref_box(t, lo, hi);
}

/* ------------------------------------------------------------------------------------------------
 * Build and accessors */

static void free_with_user(void *ptr, void *user)
{
    (void)user;
    free(ptr);
}

static void build_returns_a_distinct_status_for_each_bad_input(void **state)
{
    (void)state;
    float pos[9] = {0, 0, 0, 1, 0, 0, 0, 0, 1};
    uint32_t idx[3] = {0, 1, 2};
    kcc_mesh *sentinel = (kcc_mesh *)(uintptr_t)0x1234;
    kcc_mesh *m = sentinel;
    kcc_mesh_desc d;
    memset(&d, 0, sizeof d);
    d.positions = pos, d.vertex_count = 3, d.indices = idx, d.triangle_count = 1;

    assert_int_equal(kcc_mesh_build(NULL, &m), KCC_ERR_NULL_ARGUMENT);
    assert_int_equal(kcc_mesh_build(&d, NULL), KCC_ERR_NULL_ARGUMENT);
    kcc_mesh_desc e = d;
    e.triangle_count = 0;
    assert_int_equal(kcc_mesh_build(&e, &m), KCC_ERR_NO_TRIANGLES);
    e = d, e.positions = NULL;
    assert_int_equal(kcc_mesh_build(&e, &m), KCC_ERR_NO_VERTICES);
    e = d, e.vertex_count = 0;
    assert_int_equal(kcc_mesh_build(&e, &m), KCC_ERR_NO_VERTICES);
    e = d, e.vertex_stride = 8;
    assert_int_equal(kcc_mesh_build(&e, &m), KCC_ERR_BAD_STRIDE);
    e = d, e.vertex_stride = 14;
    assert_int_equal(kcc_mesh_build(&e, &m), KCC_ERR_BAD_STRIDE);
    uint32_t bad_idx[3] = {0, 1, 3};
    e = d, e.indices = bad_idx;
    assert_int_equal(kcc_mesh_build(&e, &m), KCC_ERR_INDEX_OUT_OF_RANGE);
    e = d, e.indices = NULL, e.triangle_count = 2; /* needs 6 vertices */
    assert_int_equal(kcc_mesh_build(&e, &m), KCC_ERR_INDEX_OUT_OF_RANGE);
    float nan_pos[9] = {0, 0, 0, 1, NAN, 0, 0, 0, 1};
    e = d, e.positions = nan_pos;
    assert_int_equal(kcc_mesh_build(&e, &m), KCC_ERR_NON_FINITE);
    float inf_pos[9] = {0, 0, 0, 1, 0, 0, 0, 0, -INFINITY};
    e = d, e.positions = inf_pos;
    assert_int_equal(kcc_mesh_build(&e, &m), KCC_ERR_NON_FINITE);
    e = d, e.triangle_count = UINT32_MAX, e.indices = NULL, e.vertex_count = UINT32_MAX;
    assert_int_equal(kcc_mesh_build(&e, &m), KCC_ERR_TOO_LARGE);
    e = d, e.allocator.user = NULL, e.allocator.free = free_with_user;
    assert_int_equal(kcc_mesh_build(&e, &m), KCC_ERR_BAD_DESC);
    assert_ptr_equal(m, sentinel); /* untouched by every failure */
}

typedef struct count_alloc {
    size_t live_bytes;
    int    live_blocks;
    int    calls;
    bool   misaligned_request;
    bool   fail;
} count_alloc;

typedef struct block_hdr {
    size_t bytes;
    size_t pad[7];
} block_hdr; /* 64 bytes: keeps 64-byte alignment of what follows */

static void *counting_alloc(size_t bytes, size_t align, void *user)
{
    count_alloc *c = user;
    c->calls++;
    if (c->fail)
        return NULL;
    if (align == 0 || (align & (align - 1)) != 0 || align > 64)
        c->misaligned_request = true;
    block_hdr *h = aligned_alloc(64, (sizeof(block_hdr) + bytes + 63) / 64 * 64);
    if (!h)
        return NULL;
    h->bytes = bytes;
    c->live_bytes += bytes;
    c->live_blocks++;
    return h + 1;
}

static void counting_free(void *ptr, void *user)
{
    count_alloc *c = user;
    block_hdr *h = (block_hdr *)ptr - 1;
    c->live_bytes -= h->bytes;
    c->live_blocks--;
    free(h);
}

static void build_allocates_through_the_custom_allocator_and_destroy_frees_all(void **state)
{
    (void)state;
    soup s = soup_random(3, 500, 10.0f, 1.0f);
    count_alloc ca;
    memset(&ca, 0, sizeof ca);
    kcc_mesh_desc d;
    memset(&d, 0, sizeof d);
    d.positions = s.p, d.vertex_count = 3 * s.n, d.triangle_count = s.n;
    d.allocator.alloc = counting_alloc, d.allocator.free = counting_free, d.allocator.user = &ca;
    kcc_mesh *m = NULL;
    assert_int_equal(kcc_mesh_build(&d, &m), KCC_OK);
    assert_false(ca.misaligned_request);
    assert_int_equal(ca.live_blocks, 1);
    assert_true(kcc_mesh_memory_bytes(m) >= ca.live_bytes);
    assert_true(((uintptr_t)m % 8) == 0);
    kcc_mesh_destroy(m);
    assert_int_equal(ca.live_blocks, 0);
    assert_int_equal(ca.live_bytes, 0);
    /* A failing allocator gives OUT_OF_MEMORY and leaks nothing. */
    ca.fail = true;
    m = NULL;
    assert_int_equal(kcc_mesh_build(&d, &m), KCC_ERR_OUT_OF_MEMORY);
    assert_null(m);
    assert_int_equal(ca.live_blocks, 0);
    kcc_mesh_destroy(NULL);
    free(s.p);
}

static void build_copies_input_so_caller_may_free_it(void **state)
{
    (void)state;
    soup s = soup_random(4, 200, 10.0f, 1.0f);
    float keep[9];
    memcpy(keep, s.p + 9 * 17, sizeof keep);
    kcc_mesh *m = build_soup(&s);
    memset(s.p, 0xff, sizeof(float) * 9 * s.n); /* NaN garbage */
    free(s.p);
    float t[9];
    tri_of(m, 17, t);
    assert_memory_equal(t, keep, sizeof keep);
    float o[3] = {(keep[0] + keep[3] + keep[6]) / 3.0f, (keep[1] + keep[4] + keep[7]) / 3.0f + 50.0f,
                  (keep[2] + keep[5] + keep[8]) / 3.0f};
    kcc_ray_hit h;
    assert_true(kcc_mesh_raycast(m, o, (vec3){0, -1, 0}, 100.0f, &h) || true); /* no crash */
    kcc_mesh_destroy(m);
}

static void triangle_accessor_returns_input_corners_with_stride_and_implicit_indices(void **state)
{
    (void)state;
    /* 5 floats per vertex (stride 20), no index array. */
    test_rng r = rng_seed(5);
    const uint32_t nt = 50;
    float *buf = malloc(sizeof(float) * 5 * 3 * nt);
    for (uint32_t i = 0; i < 5 * 3 * nt; ++i)
        buf[i] = rng_f(&r, -5.0f, 5.0f);
    kcc_mesh_desc d;
    memset(&d, 0, sizeof d);
    d.positions = buf, d.vertex_count = 3 * nt, d.vertex_stride = 20, d.triangle_count = nt;
    kcc_mesh *m = NULL;
    assert_int_equal(kcc_mesh_build(&d, &m), KCC_OK);
    assert_int_equal(kcc_mesh_triangle_count(m), nt);
    for (uint32_t i = 0; i < nt; ++i) {
        vec3 v[3];
        assert_true(kcc_mesh_triangle(m, i, v));
        for (int c = 0; c < 3; ++c)
            for (int k = 0; k < 3; ++k)
                assert_true(v[c][k] == buf[5 * (3 * i + (uint32_t)c) + (uint32_t)k]);
    }
    vec3 v[3];
    assert_false(kcc_mesh_triangle(m, nt, v));
    assert_false(kcc_mesh_triangle(NULL, 0, v));
    assert_int_equal(kcc_mesh_triangle_count(NULL), 0);
    assert_int_equal(kcc_mesh_memory_bytes(NULL), 0);
    kcc_mesh_destroy(m);
    free(buf);
}

/* ---- the collapse plan against every collapse ------------------------------------------------ */

typedef struct collapse_case {
    const kcc_node_pair *pairs;
    double               root_area;
} collapse_case;

static double case_area(const float lo[3], const float hi[3])
{
    const double dx = (double)hi[0] - lo[0], dy = (double)hi[1] - lo[1], dz = (double)hi[2] - lo[2];
    return dx * dy + dy * dz + dz * dx;
}

static double node_share(const collapse_case *c, uint32_t id)
{
    const kcc_node_pair *p = &c->pairs[id >> 1];
    const uint32_t k = id & 1;
    const float lo[3] = {p->x[0][k], p->y[0][k], p->z[0][k]}, hi[3] = {p->x[1][k], p->y[1][k], p->z[1][k]};
    const double a = case_area(lo, hi) / c->root_area;
    return a < 1.0 ? a : 1.0;
}

static bool node_is_leaf(const collapse_case *c, uint32_t id)
{
    return c->pairs[id >> 1].count[id & 1] != 0;
}

static uint32_t node_triangles(const collapse_case *c, uint32_t id)
{
    if (node_is_leaf(c, id))
        return c->pairs[id >> 1].count[id & 1];
    const uint32_t f = 2u * c->pairs[id >> 1].first[id & 1];
    return node_triangles(c, f) + node_triangles(c, f + 1);
}

static double leaf_price(double share, uint32_t count)
{
    return share * KCC_COLLAPSE_TRI4_COST * (double)((count + 3u) / 4u);
}

static double cheapest_group(const collapse_case *c, uint32_t id);

/* The cheapest a frontier node costs: a leaf of the binary tree as it is; an inner node as a group
 * of its own or (not the root) as one leaf of its subtree's at most KCC_LEAF_MAX triangles. */
static double cheapest_child(const collapse_case *c, uint32_t id)
{
    if (node_is_leaf(c, id))
        return leaf_price(node_share(c, id), c->pairs[id >> 1].count[id & 1]);
    double best = cheapest_group(c, id);
    const uint32_t n = node_triangles(c, id);
    if (n <= KCC_LEAF_MAX && leaf_price(node_share(c, id), n) < best)
        best = leaf_price(node_share(c, id), n);
    return best;
}

/* A frontier of a subtree: nodes whose subtrees are disjoint and together hold all its leaves. */
typedef struct frontier {
    uint32_t node[4];
    int      n;
} frontier;

/* Writes every frontier of node id's subtree of at most `room` nodes (the node itself, or a
 * frontier of each child side by side) to out from *count; returns false past max. */
static bool all_frontiers(const collapse_case *c, uint32_t id, int room, frontier *out, int *count,
                          int max)
{
    if (*count >= max)
        return false;
    out[(*count)++] = (frontier){.node = {id}, .n = 1};
    if (node_is_leaf(c, id) || room < 2)
        return true;
    const uint32_t f = 2u * c->pairs[id >> 1].first[id & 1];
    frontier left[64], right[64];
    int nl = 0;
    if (!all_frontiers(c, f, room - 1, left, &nl, 64))
        return false;
    for (int a = 0; a < nl; ++a) {
        int nr = 0;
        if (!all_frontiers(c, f + 1, room - left[a].n, right, &nr, 64))
            return false;
        for (int b = 0; b < nr; ++b) {
            if (*count >= max)
                return false;
            frontier *o = &out[(*count)++];
            *o = left[a];
            for (int k = 0; k < right[b].n; ++k)
                o->node[o->n++] = right[b].node[k];
        }
    }
    return true;
}

/* A group at inner node id: its share plus the group cost, and the cheapest of every frontier of
 * 2-4 nodes below it (a frontier of each child), each node at its cheapest. */
static double cheapest_group(const collapse_case *c, uint32_t id)
{
    frontier cuts[256];
    int n = 0;
    const uint32_t f = 2u * c->pairs[id >> 1].first[id & 1];
    frontier left[64], right[64];
    int nl = 0;
    assert_true(all_frontiers(c, f, 3, left, &nl, 64));
    for (int a = 0; a < nl; ++a) {
        int nr = 0;
        assert_true(all_frontiers(c, f + 1, 4 - left[a].n, right, &nr, 64));
        for (int b = 0; b < nr; ++b) {
            assert_true(n < 256);
            cuts[n] = left[a];
            for (int k = 0; k < right[b].n; ++k)
                cuts[n].node[cuts[n].n++] = right[b].node[k];
            ++n;
        }
    }
    double best = INFINITY;
    for (int i = 0; i < n; ++i) {
        double sum = 0.0;
        for (int k = 0; k < cuts[i].n; ++k)
            sum += cheapest_child(c, cuts[i].node[k]);
        best = sum < best ? sum : best;
    }
    return node_share(c, id) + KCC_COLLAPSE_GROUP_COST + best;
}

/* What the collapsed groups cost, read off them: group g's share from the box its parent's slot
 * gives it (the root's for group 0), a leaf's from its slot's box; and the leaves in slot order. */
static double collapsed_cost(const kcc_node4 *quads, uint32_t g, const float lo[3], const float hi[3],
                             double root_area, uint32_t *next_slot)
{
    const double share = case_area(lo, hi) / root_area;
    double sum = (share < 1.0 ? share : 1.0) + KCC_COLLAPSE_GROUP_COST;
    for (int i = 0; i < 4; ++i) {
        const float clo[3] = {quads[g].x[0][i], quads[g].y[0][i], quads[g].z[0][i]};
        const float chi[3] = {quads[g].x[1][i], quads[g].y[1][i], quads[g].z[1][i]};
        if (clo[0] > chi[0])
            continue;
        if (quads[g].count[i] == 0) {
            sum += collapsed_cost(quads, quads[g].first[i], clo, chi, root_area, next_slot);
            continue;
        }
        assert_int_equal(quads[g].first[i], *next_slot); /* the leaves keep the slots' order */
        assert_true(quads[g].count[i] <= KCC_LEAF_MAX);
        *next_slot += quads[g].count[i];
        const double s = case_area(clo, chi) / root_area;
        sum += leaf_price(s < 1.0 ? s : 1.0, quads[g].count[i]);
    }
    return sum;
}

/* The plan (kcc_tree_plan_collapse, a dynamic program in float) against brute force in double over
 * every collapse of small random trees: the groups it makes cost the least any collapse costs,
 * their leaves tile the slots in order, and the greedy collapse never costs less. */
static void collapse_plan_is_the_cheapest_of_every_collapse(void **state)
{
    (void)state;
    test_rng r = rng_seed(41);
    for (int round = 0; round < 300; ++round) {
        const uint32_t n = 5u + (uint32_t)(rng_f(&r, 0.0f, 1.0f) * 40.0f);
        kcc_build_prim prims[48];
        kcc_node_pair pairs[48];
        /* spread boxes (groups pay), and clusters of small ones far apart (merged leaves pay) */
        const float world = round % 2 ? 20.0f : 2000.0f;
        float cluster[3] = {0.0f, 0.0f, 0.0f};
        for (uint32_t i = 0; i < n; ++i) {
            const float size = rng_f(&r, 0.01f, 1.0f) * (round % 3 == 0 ? 10.0f : 1.0f);
            prims[i] = (kcc_build_prim){.id = i};
            for (int k = 0; k < 3; ++k) {
                if (i % 6 == 0)
                    cluster[k] = rng_f(&r, 0.0f, world);
                prims[i].lo[k] = cluster[k] + rng_f(&r, 0.0f, 5.0f);
                prims[i].hi[k] = prims[i].lo[k] + rng_f(&r, 0.0f, size);
            }
        }
        uint32_t leaves, depth;
        const uint32_t pair_count = kcc_tree_build(prims, n, pairs, &leaves, &depth);
        float cost[96][4];
        uint8_t plan[96][4];
        kcc_tree_plan_collapse(pairs, pair_count, cost, plan);
        kcc_node4 quads[48], greedy[48];
        uint32_t stack[96];
        const uint32_t groups = kcc_tree_collapse(pairs, (const uint8_t(*)[4])plan, quads, NULL, stack);
        kcc_tree_collapse(pairs, NULL, greedy, NULL, stack);
        const float lo[3] = {pairs[0].x[0][0], pairs[0].y[0][0], pairs[0].z[0][0]};
        const float hi[3] = {pairs[0].x[1][0], pairs[0].y[1][0], pairs[0].z[1][0]};
        const collapse_case c = {pairs, case_area(lo, hi)};
        if (node_is_leaf(&c, 0))
            continue;
        uint32_t slots = 0, greedy_slots = 0;
        const double planned = collapsed_cost(quads, 0, lo, hi, c.root_area, &slots);
        const double best = cheapest_group(&c, 0);
        const double greedy_cost = collapsed_cost(greedy, 0, lo, hi, c.root_area, &greedy_slots);
        assert_int_equal(slots, n);
        assert_int_equal(greedy_slots, n);
        assert_true(groups >= 1);
        assert_true(fabs(planned - best) <= 1e-5 * best);
        assert_true(planned <= greedy_cost * (1.0 + 1e-5));
    }
}

static void tree_invariants_hold_and_tree_stays_under_32_bytes_per_triangle(void **state)
{
    (void)state;
    soup s = soup_random(6, 20000, 100.0f, 2.0f);
    kcc_mesh *m = build_soup(&s);
    kcc_mesh_stats st;
    kcc_mesh_get_stats(m, &st);
    assert_int_equal(st.triangles, s.n);
    assert_true(st.depth <= KCC_TREE_MAX_DEPTH);
    assert_true(st.nodes >= st.leaves + 1 && st.nodes <= 2 * st.leaves);
    assert_true(st.tree_bytes <= 32u * (size_t)s.n);
    /* A soup shares no corner: three vertices (36 B) and an index triple (12 B) per triangle. */
    assert_true(st.vertex_bytes <= 48u * (size_t)s.n + 4u);
    assert_true(kcc_mesh_memory_bytes(m) >= st.tree_bytes + st.vertex_bytes);
    /* Every live triangle sits in exactly one leaf, inside every node bound on its path. */
    uint32_t *seen = calloc(s.n, sizeof(uint32_t));
    /* Walk the four-wide groups (decoded): every triangle lies in every decoded box on its path
     * (each slot's box is cut to its ancestors' before it is passed down); empty slots have
     * lo > hi. */
    uint32_t stack[256], sp = 0, leaves = 0;
    float root_lo[3] = {-INFINITY, -INFINITY, -INFINITY}, root_hi[3] = {INFINITY, INFINITY, INFINITY};
    float box_lo[256][3], box_hi[256][3];
    stack[sp] = 0;
    memcpy(box_lo[sp], root_lo, sizeof root_lo);
    memcpy(box_hi[sp], root_hi, sizeof root_hi);
    ++sp;
    while (sp) {
        --sp;
        const uint32_t cur = stack[sp];
        kcc_node4 decoded;
        const kcc_node4 *q = kcc_qnode4_decode(&m->groups[cur], &decoded);
        float plo[3], phi[3];
        memcpy(plo, box_lo[sp], sizeof plo);
        memcpy(phi, box_hi[sp], sizeof phi);
        for (int i = 0; i < 4; ++i) {
            float lo[3] = {q->x[0][i], q->y[0][i], q->z[0][i]}, hi[3] = {q->x[1][i], q->y[1][i], q->z[1][i]};
            if (lo[0] > hi[0]) {
                assert_int_equal(q->count[i], 0);
                continue;
            }
            for (int k = 0; k < 3; ++k) {
                lo[k] = lo[k] > plo[k] ? lo[k] : plo[k];
                hi[k] = hi[k] < phi[k] ? hi[k] : phi[k];
            }
            if (q->count[i]) {
                ++leaves;
                assert_true(q->count[i] <= KCC_LEAF_MAX);
                for (uint32_t t = q->first[i]; t < q->first[i] + q->count[i]; ++t) {
                    seen[kcc_mesh_tri_id(m, t)]++;
                    kcc_tri corners;
                    kcc_mesh_tri(m, t, &corners);
                    for (int c = 0; c < 3; ++c)
                        for (int k = 0; k < 3; ++k)
                            assert_true(corners.v[c][k] >= lo[k] && corners.v[c][k] <= hi[k]);
                }
                continue;
            }
            assert_true(q->first[i] > cur && q->first[i] < m->quad_count);
            assert_true(sp < 255);
            stack[sp] = q->first[i];
            memcpy(box_lo[sp], lo, sizeof lo);
            memcpy(box_hi[sp], hi, sizeof hi);
            ++sp;
        }
    }
    assert_int_equal(leaves, st.leaves);
    for (uint32_t i = 0; i < s.n; ++i)
        assert_int_equal(seen[i], ref_flatness(s.p + 9 * i) > 0 ? 1 : seen[i]);
    vec3 b[2];
    kcc_mesh_bounds(m, b);
    for (uint32_t i = 0; i < 9 * s.n; ++i)
        assert_true(s.p[i] >= b[0][i % 3] && s.p[i] <= b[1][i % 3]);
    free(seen);
    kcc_mesh_destroy(m);
    free(s.p);
}

static int cmp_corner(const void *a, const void *b)
{
    return memcmp(a, b, 3 * sizeof(float));
}

/* The exact box (in double, from the input triangles) of what lies under child i of group g:
 * its leaf's triangles, or every leaf below its group. */
static void exact_child_box(const kcc_mesh *m, const soup *s, uint32_t g, int i, double lo[3],
                            double hi[3])
{
    const kcc_qnode4 *q = &m->groups[g];
    if (q->count[i] == 0) {
        const uint32_t child = q->first[i];
        for (int j = 0; j < 4; ++j)
            if (m->groups[child].slots >> j & 1)
                exact_child_box(m, s, child, j, lo, hi);
        return;
    }
    for (uint32_t slot = q->first[i]; slot < q->first[i] + q->count[i]; ++slot)
        for (int c = 0; c < 3; ++c)
            for (int k = 0; k < 3; ++k) {
                const double v = s->p[9u * kcc_mesh_tri_id(m, slot) + 3u * (uint32_t)c + (uint32_t)k];
                lo[k] = v < lo[k] ? v : lo[k];
                hi[k] = v > hi[k] ? v : hi[k];
            }
}

/* Clusters of 6 triangles, cluster j around z = 10 j, each triangle spanning exactly
 * [span[j][0], span[j][1]] along axis `axis` (so every box under the cluster spans it too) and a
 * unit extent along the other two. */
static soup soup_of_spans(const float (*span)[2], uint32_t clusters, int axis)
{
    soup s = {malloc(sizeof(float) * 9 * 6 * clusters), 6 * clusters};
    for (uint32_t j = 0; j < clusters; ++j)
        for (uint32_t t = 0; t < 6; ++t) {
            float *p = s.p + 9u * (6u * j + t);
            const float y = 2.0f * (float)t, z = 10.0f * (float)j;
            const float corner[3][3] = {{span[j][0], y, z}, {span[j][1], y + 1.0f, z},
                                        {span[j][0], y, z + 1.0f}};
            for (int c = 0; c < 3; ++c) /* axis 0 holds the span; rotate it to `axis` */
                for (int k = 0; k < 3; ++k)
                    p[3 * c + (k + axis) % 3] = corner[c][k];
        }
    return s;
}

/* Every decoded child box of every group holds the exact box of what lies under it (computed
 * from the input triangles in double), along every axis, on meshes whose boxes have awkward
 * magnitudes: tiny, huge (1e30, 3e38 both ways), negative, zero extent, denormal, and groups
 * spanning -1000 .. 1000 around a child at -1e-20 or 1e-20, where rounding the step count in
 * double alone lands on the wrong side; the slab test computed in place (kcc_pray_qtest) agrees
 * bit for bit with the float test of the decoded group, and the box test in the group's frame
 * (kcc_pbox_qtest) passes every child the decoded group's float test passes
 * (quantised_box_test_passes_the_decoded_boxes_and_few_more bounds what else it passes). */
static void quantised_boxes_contain_the_exact_boxes(void **state)
{
    (void)state;
    static const float spans[][4][2] = {
        {{-1000.0f, -999.0f}, {-1e-20f, 1000.0f}, {-1000.0f, 1e-20f}, {-3.0f, -2.0f}},
        {{1e-30f, 2e-30f}, {3e-30f, 5e-30f}, {-7e-31f, 1e-30f}, {0.0f, 1e-30f}},
        {{1e-40f, 3e-40f}, {-2e-39f, 1e-45f}, {0.0f, 1e-38f}, {-1e-45f, 0.0f}},
        {{1e30f, 2e30f}, {-3e30f, -1e30f}, {-3e38f, 3e38f}, {1e-30f, 1e30f}},
        {{5.0f, 5.0f}, {5.0f, 5.0f}, {-7.3f, -7.2f}, {-0.0f, 0.0f}},
        {{-3.4e38f, -3.3e38f}, {3.3e38f, 3.4e38f}, {-1e-38f, 1e-38f}, {1000.0f, 1000.0f}},
    };
    for (size_t set = 0; set < sizeof spans / sizeof spans[0]; ++set)
        for (int axis = 0; axis < 3; ++axis) {
            soup s = soup_of_spans(spans[set], 4, axis);
            kcc_mesh *m = build_soup(&s);
            assert_int_equal(kcc_mesh_validate(m), KCC_OK);
            for (uint32_t g = 0; g < m->quad_count; ++g) {
                kcc_node4 d;
                kcc_qnode4_decode(&m->groups[g], &d);
                const float *const planes[3][2] = {{d.x[0], d.x[1]}, {d.y[0], d.y[1]}, {d.z[0], d.z[1]}};
                for (int i = 0; i < 4; ++i) {
                    if (!(m->groups[g].slots >> i & 1)) {
                        for (int k = 0; k < 3; ++k)
                            assert_true(planes[k][0][i] == INFINITY && planes[k][1][i] == -INFINITY);
                        continue;
                    }
                    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
                    exact_child_box(m, &s, g, i, lo, hi);
                    for (int k = 0; k < 3; ++k) {
                        assert_true((double)planes[k][0][i] <= lo[k] && (double)planes[k][1][i] >= hi[k]);
                        const double step = kcc_qnode4_step(m->groups[g].exp[k]);
                        if (m->groups[g].q[k][1][i] * step > FLT_MAX) /* the box test's real bound */
                            assert_true(m->groups[g].base[k] + m->groups[g].q[k][1][i] * step >= hi[k]);
                    }
                }
                test_rng r = rng_seed(set * 3u + (uint64_t)axis);
                for (int n = 0; n < 8; ++n) {
                    float org[3], dir[3], lo[3], hi[3], t_in[4], t_q[4];
                    for (int k = 0; k < 3; ++k) {
                        org[k] = planes[k][0][0] + rng_f(&r, -2.0f, 2.0f);
                        dir[k] = rng_f(&r, -1.0f, 1.0f);
                        lo[k] = org[k] - rng_f(&r, 0.0f, 2.0f);
                        hi[k] = org[k] + rng_f(&r, 0.0f, 2.0f);
                    }
                    kcc_pray ray;
                    kcc_pray_setup(&ray, org, dir, (const float[3]){0.0f, 0.0f, 0.0f});
                    const int entered = kcc_pray_test(&ray, &d, 1e30f, t_in);
                    assert_int_equal(kcc_pray_qtest(&ray, &m->groups[g], 1e30f, t_q), entered);
                    for (int i = 0; i < 4; ++i) /* the distances the walk reads: entered slots' */
                        if (entered >> i & 1)
                            assert_memory_equal(&t_q[i], &t_in[i], sizeof t_q[i]);
                    kcc_pbox qb; /* the frame test passes at least the decoded test's children */
                    kcc_pbox_setup(&qb, lo, hi);
                    const int decoded = kcc_pbox_test(&qb, &d) & m->groups[g].slots;
                    assert_int_equal(kcc_pbox_qtest(&qb, &m->groups[g]) & decoded, decoded);
                }
            }
            kcc_mesh_destroy(m);
            free(s.p);
        }
}

/* One bound of a query box for the frame test below: a decoded bound of the group (exactly, one float
 * off, a step off), a point in or beyond the group, or an extreme (FLT_MAX, infinity, NaN). */
static float awkward_bound(test_rng *r, const kcc_node4 *d, int k, float step)
{
    const float *const planes[3][2] = {{d->x[0], d->x[1]}, {d->y[0], d->y[1]}, {d->z[0], d->z[1]}};
    const float v = planes[k][rng_u32(r) % 2][rng_u32(r) % 4]; /* a lo or hi, maybe of an empty slot */
    const float lo = planes[k][0][0], hi = planes[k][1][0];   /* child 0 is always live */
    switch (rng_u32(r) % 10) {
    case 0: return v;
    case 1: return nextafterf(v, INFINITY);
    case 2: return nextafterf(v, -INFINITY);
    case 3: return v + step * rng_f(r, -1.5f, 1.5f);
    case 4: return lo + (hi - lo) * rng_f(r, -0.5f, 1.5f);
    case 5: return rng_u32(r) % 2 ? FLT_MAX : -FLT_MAX;
    case 6: return rng_u32(r) % 2 ? INFINITY : -INFINITY;
    case 7: return rng_u32(r) % 16 == 0 ? NAN : v * 0.5f;
    case 8: return v * 2.0f + 1e-30f;
    default: return lo - (hi - lo + 1.0f) * rng_f(r, 1.0f, 1e6f);
    }
}

/* The quantised groups' box test (kcc_pbox_qtest) works in each group's integer frame, with a
 * rounding bound proven in collide_internal.h. Checked against the decoded group in double on
 * query boxes whose bounds sit exactly on decoded bounds, one float or a fraction of a step off
 * them, far outside, at +-FLT_MAX and infinity, or NaN, on the awkward meshes of
 * quantised_boxes_contain_the_exact_boxes and a random soup: every child whose decoded box
 * overlaps the box (touching counts) passes, and a child that passes misses it by less than
 * 2^-12 step plus 2^-21 of the magnitudes along each axis; a NaN box passes nothing. Where a hi's
 * product overflowed (it decodes to +inf) the real bound base + q step is the reference. */
static void quantised_box_test_passes_the_decoded_boxes_and_few_more(void **state)
{
    (void)state;
    static const float spans[][4][2] = {
        {{-1000.0f, -999.0f}, {-1e-20f, 1000.0f}, {-1000.0f, 1e-20f}, {-3.0f, -2.0f}},
        {{1e-40f, 3e-40f}, {-2e-39f, 1e-45f}, {0.0f, 1e-38f}, {-1e-45f, 0.0f}},
        {{1e30f, 2e30f}, {-3e30f, -1e30f}, {-3e38f, 3e38f}, {1e-30f, 1e30f}},
        {{5.0f, 5.0f}, {5.0f, 5.0f}, {-7.3f, -7.2f}, {-0.0f, 0.0f}},
        {{-3.4e38f, -3.3e38f}, {3.3e38f, 3.4e38f}, {-1e-38f, 1e-38f}, {1000.0f, 1000.0f}},
        {{1e6f, 1e6f + 0.5f}, {1e6f + 0.25f, 1e6f + 2.0f}, {1e6f - 3.0f, 1e6f}, {1e6f, 1e6f}},
    };
    const size_t sets = sizeof spans / sizeof spans[0];
    uint64_t passed = 0, rejected = 0;
    for (size_t set = 0; set <= sets; ++set) {
        soup s = set < sets ? soup_of_spans(spans[set], 4, (int)set % 3) : soup_random(77, 3000, 40.0f, 1.0f);
        kcc_mesh *m = build_soup(&s);
        test_rng r = rng_seed(0x9b0u + set);
        for (uint32_t g = 0; g < m->quad_count; ++g) {
            const kcc_qnode4 *q = &m->groups[g];
            kcc_node4 d;
            kcc_qnode4_decode(q, &d);
            const float *const planes[3][2] = {{d.x[0], d.x[1]}, {d.y[0], d.y[1]}, {d.z[0], d.z[1]}};
            for (int n = 0; n < 64; ++n) {
                float lo[3], hi[3];
                bool nan = false;
                for (int k = 0; k < 3; ++k) {
                    const float step = kcc_qnode4_step(q->exp[k]);
                    lo[k] = awkward_bound(&r, &d, k, step);
                    hi[k] = awkward_bound(&r, &d, k, step);
                    nan = nan || isnan(lo[k]) || isnan(hi[k]);
                }
                kcc_pbox qb;
                kcc_pbox_setup(&qb, lo, hi);
                const int mask = kcc_pbox_qtest(&qb, q);
                assert_int_equal(mask & ~q->slots, 0);
                if (nan)
                    assert_int_equal(mask, 0);
                for (int i = 0; i < 4 && !nan; ++i) {
                    if (!(q->slots >> i & 1))
                        continue;
                    bool overlaps = true, near = true;
                    for (int k = 0; k < 3; ++k) {
                        const double qlo = lo[k] < -FLT_MAX ? -FLT_MAX : lo[k];
                        const double qhi = hi[k] > FLT_MAX ? FLT_MAX : hi[k];
                        const double step = kcc_qnode4_step(q->exp[k]), base = fabs((double)q->base[k]);
                        /* a hi whose product overflowed decodes to +inf: the real bound counts */
                        const double dlo = planes[k][0][i], real_hi = q->base[k] + q->q[k][1][i] * step;
                        const double dhi = q->q[k][1][i] * step > FLT_MAX ? real_hi : planes[k][1][i];
                        overlaps = overlaps && dlo <= qhi && dhi >= qlo;
                        const double slack_hi = 0x1p-12 * step + 0x1p-21 * (fabs(qhi) + base + 256.0 * step) + 0x1p-140;
                        const double slack_lo = 0x1p-12 * step + 0x1p-21 * (fabs(qlo) + base + 256.0 * step) + 0x1p-140;
                        near = near && dlo <= qhi + slack_hi && dhi >= qlo - slack_lo;
                    }
                    const bool pass = (mask >> i & 1) != 0;
                    if (overlaps)
                        assert_true(pass);
                    if (pass)
                        assert_true(near);
                    passed += pass;
                    rejected += !pass;
                }
            }
        }
        kcc_mesh_destroy(m);
        free(s.p);
    }
    assert_true(passed > 1000 && rejected > 1000); /* both outcomes well exercised */
}

/* The mesh stores each distinct corner once, equal meaning equal bit for bit (+0 and -0 stay apart),
 * and every triangle reads back its input floats exactly: a grid of quads given as a soup (every
 * triangle repeats its corners) plus a triangle whose corner is the grid's origin with x = -0. The
 * grid has 172 distinct corners, fewer than the 208 a block's offsets always reach back, so none is
 * out of reach (corners_out_of_reach_are_copied_bit_for_bit covers the copies). */
static void corners_are_stored_once_bit_for_bit(void **state)
{
    (void)state;
    enum { G = 12 };
    const uint32_t n = 2 * G * G + 1;
    soup s = {malloc(sizeof(float) * 9 * n), n};
    assert_non_null(s.p);
    for (uint32_t j = 0, t = 0; j < G; ++j)
        for (uint32_t i = 0; i < G; ++i, t += 2) {
            const float x0 = 0.37f * (float)i, x1 = 0.37f * (float)(i + 1);
            const float z0 = 0.37f * (float)j, z1 = 0.37f * (float)(j + 1);
            const float quad[18] = {x0, 0, z0, x0, 0, z1, x1, 0, z1, x0, 0, z0, x1, 0, z1, x1, 0, z0};
            memcpy(s.p + 9 * t, quad, sizeof quad);
        }
    const float signed_zero[9] = {-0.0f, 0, 0, 0, 1, 0, 0, 0, 1};
    memcpy(s.p + 9 * (n - 1), signed_zero, sizeof signed_zero);
    kcc_mesh *m = build_soup(&s);
    /* Reference: the distinct corners by sorting their bits. */
    float *corners = malloc(sizeof(float) * 9 * n);
    assert_non_null(corners);
    memcpy(corners, s.p, sizeof(float) * 9 * n);
    qsort(corners, 3 * (size_t)n, 3 * sizeof(float), cmp_corner);
    uint32_t distinct = 1;
    for (uint32_t i = 1; i < 3 * n; ++i)
        distinct += memcmp(corners + 3 * i, corners + 3 * (i - 1), 3 * sizeof(float)) != 0;
    assert_int_equal(distinct, (G + 1) * (G + 1) + 3);
    assert_int_equal(m->vertex_count, distinct);
    for (uint32_t i = 0; i < n; ++i) {
        vec3 out[3];
        assert_true(kcc_mesh_triangle(m, i, out));
        assert_memory_equal(out, s.p + 9 * i, 9 * sizeof(float));
    }
    vec3 back[3];
    assert_true(kcc_mesh_triangle(m, n - 1, back));
    assert_true(signbit(back[0][0]));
    kcc_mesh_stats st;
    kcc_mesh_get_stats(m, &st);
    assert_true(st.vertex_bytes < 20u * n); /* 36 bytes of corners per triangle when not shared */
    free(corners);
    kcc_mesh_destroy(m);
    free(s.p);
}

/* Corners are 8-bit offsets (in vertices) from a base per block of slots; a corner whose earlier
 * copy lies out of a block's reach is stored again (the same floats). A 400 x 400 grid (160,801
 * corners, far more than 255 numbered between the two sides of a split) has such copies; every
 * triangle still reads back its input floats, and rays down hit what the brute force over
 * kcc_tri_raycast hits. */
static void corners_out_of_reach_are_copied_bit_for_bit(void **state)
{
    (void)state;
    float *pos;
    uint32_t *idx, nv, nt;
    make_grid(400, -100.0f, 0.5f, -100.0f, 0.5f, &pos, &idx, &nv, &nt);
    kcc_mesh *m = build_indexed(pos, nv, idx, nt);
    assert_int_equal(kcc_mesh_validate(m), KCC_OK);
    assert_true(m->vertex_count > nv);
    for (uint32_t i = 0; i < nt; ++i) {
        vec3 out[3];
        assert_true(kcc_mesh_triangle(m, i, out));
        for (int c = 0; c < 3; ++c)
            assert_memory_equal(out[c], pos + 3 * idx[3 * i + c], 3 * sizeof(float));
    }
    test_rng r = rng_seed(25);
    for (int q = 0; q < 12; ++q) {
        vec3 o = {rng_f(&r, -100, 100), 3.0f, rng_f(&r, -100, 100)}, down = {0, -1, 0};
        float best = INFINITY;
        uint32_t best_i = UINT32_MAX;
        for (uint32_t i = 0; i < nt; ++i) {
            float t;
            if (kcc_tri_raycast(pos + 3 * idx[3 * i], pos + 3 * idx[3 * i + 1], pos + 3 * idx[3 * i + 2],
                                o, down, 10.0f, &t) && t < best) {
                best = t;
                best_i = i;
            }
        }
        kcc_ray_hit hit;
        assert_true(kcc_mesh_raycast(m, o, down, 10.0f, &hit));
        assert_int_equal(hit.triangle, best_i);
    }
    kcc_mesh_destroy(m);
    free(pos);
    free(idx);
}

/* n - 1 distinct small triangles on a 256-wide grid of unit cells (triangle i in cell (i % 256,
 * i / 256)), then input n - 1 an exact duplicate of triangle 0. */
static soup soup_cells_with_a_copy(uint32_t n)
{
    soup s = {malloc(sizeof(float) * 9 * n), n};
    assert_non_null(s.p);
    for (uint32_t i = 0; i + 1 < n; ++i) {
        const float x = (float)(i % 256u), z = (float)(i / 256u);
        const float tri[9] = {x, 0, z, x + 0.5f, 0, z, x, 0, z + 0.5f};
        memcpy(s.p + 9 * i, tri, sizeof tri);
    }
    memcpy(s.p + 9 * (n - 1), s.p, 9 * sizeof(float));
    return s;
}

/* Index maps and duplicate lists are 16-bit up to 65,536 input triangles and 32-bit above: at
 * 65,536 and 65,537 triangles (the last a copy of triangle 0, so the lists hold the largest index)
 * every input index reads back its own corners (kcc_mesh_triangle, through the back links) and a box
 * inside its cell reports exactly it (through tri_id and the duplicate lists), as the input says. */
static void index_maps_switch_width_above_65536_triangles_and_every_index_round_trips(void **state)
{
    (void)state;
    for (uint32_t n = 65536; n <= 65537; ++n) {
        soup s = soup_cells_with_a_copy(n);
        kcc_mesh *m = build_soup(&s);
        assert_int_equal(m->narrow_ids, n <= 65536);
        assert_int_equal(kcc_mesh_validate(m), KCC_OK);
        for (uint32_t i = 0; i < n; ++i) {
            vec3 corners[3];
            assert_true(kcc_mesh_triangle(m, i, corners));
            assert_memory_equal(corners, s.p + 9 * i, sizeof corners);
            const float x = s.p[9 * i] + 0.1f, z = s.p[9 * i + 2] + 0.1f;
            const vec3 box[2] = {{x - 0.05f, -0.1f, z - 0.05f}, {x + 0.05f, 0.1f, z + 0.05f}};
            uint32_t found[4];
            const uint32_t count = kcc_mesh_overlap_aabb(m, box, found, 4);
            if (i == 0 || i == n - 1) { /* triangle 0 and its copy */
                assert_int_equal(count, 2);
                assert_int_equal(found[0], 0);
                assert_int_equal(found[1], n - 1);
            } else {
                assert_int_equal(count, 1);
                assert_int_equal(found[0], i);
            }
        }
        kcc_mesh_destroy(m);
        free(s.p);
    }
}

static void rebuilding_the_same_input_gives_an_identical_tree_and_answers(void **state)
{
    (void)state;
    soup s = soup_random(7, 5000, 50.0f, 2.0f);
    kcc_mesh *a = build_soup(&s), *b = build_soup(&s);
    assert_int_equal(a->quad_count, b->quad_count);
    assert_memory_equal(a->groups, b->groups, sizeof(kcc_qnode4) * a->quad_count);
    assert_int_equal(a->vertex_count, b->vertex_count);
    assert_memory_equal(a->verts, b->verts, sizeof(float) * 3 * a->vertex_count);
    assert_memory_equal(a->corner_base, b->corner_base,
                        sizeof(uint32_t) * ((a->slot_count + KCC_CORNER_BLOCK - 1) / KCC_CORNER_BLOCK));
    assert_memory_equal(a->corners, b->corners, 3 * a->slot_count);
    for (uint32_t slot = 0; slot < a->slot_count; ++slot)
        assert_int_equal(kcc_mesh_tri_id(a, slot), kcc_mesh_tri_id(b, slot));
    test_rng r = rng_seed(8);
    for (int q = 0; q < 200; ++q) {
        vec3 o = {rng_f(&r, 0, 50), rng_f(&r, 0, 50), rng_f(&r, 0, 50)};
        vec3 d = {rng_f(&r, -1, 1), rng_f(&r, -1, 1), rng_f(&r, -1, 1)};
        kcc_ray_hit ha, hb;
        memset(&ha, 0, sizeof ha);
        memset(&hb, 0, sizeof hb);
        assert_int_equal(kcc_mesh_raycast(a, o, d, 30.0f, &ha), kcc_mesh_raycast(b, o, d, 30.0f, &hb));
        assert_memory_equal(&ha, &hb, sizeof ha);
        vec3 box[2] = {{o[0], o[1], o[2]}, {o[0] + 2, o[1] + 2, o[2] + 2}};
        uint32_t oa[256], ob[256];
        uint32_t na = kcc_mesh_overlap_aabb(a, CB(box), oa, 256), nb = kcc_mesh_overlap_aabb(b, CB(box), ob, 256);
        assert_int_equal(na, nb);
        assert_memory_equal(oa, ob, sizeof(uint32_t) * (na < 256 ? na : 256));
        kcc_sweep_hit sa, sb;
        memset(&sa, 0, sizeof sa);
        memset(&sb, 0, sizeof sb);
        assert_int_equal(kcc_mesh_sweep_aabb(a, CB(box), d, &sa), kcc_mesh_sweep_aabb(b, CB(box), d, &sb));
        assert_memory_equal(&sa, &sb, sizeof sa);
    }
    kcc_mesh_destroy(a);
    kcc_mesh_destroy(b);
    free(s.p);
}

/* ------------------------------------------------------------------------------------------------
 * Ray casts */

/* Checks one mesh ray cast against the double reference over all triangles of `tris` (n x 9). */
static void check_ray(const kcc_mesh *m, const float *tris, uint32_t n, const vec3 o, const vec3 d,
                      float max_t, double tol)
{
    double robust = INFINITY, loose = INFINITY;
    double dl = sqrt((double)d[0] * d[0] + (double)d[1] * d[1] + (double)d[2] * d[2]);
    double bt = 1e-5 / dl * (1.0 + fabs(o[0]) + fabs(o[1]) + fabs(o[2])); /* t slack */
    for (uint32_t i = 0; i < n; ++i) {
        const float *t = tris + 9 * i;
        if (ref_flatness(t) < 1e-10)
            continue;
        double tt, bary;
        if (!ref_ray(t, o, d, &tt, &bary))
            continue;
        if (bary > 1e-5 && tt > bt && tt < max_t - bt)
            robust = fmin(robust, tt);
        if (bary > -1e-5 && tt > -bt && tt < max_t + bt)
            loose = fmin(loose, tt);
    }
    kcc_ray_hit h;
    bool hit = kcc_mesh_raycast(m, o, d, max_t, &h);
    if (!hit) {
        assert_true(isinf(robust));
        return;
    }
    assert_true(h.triangle < n);
    assert_true(h.t >= 0.0f && h.t <= max_t);
    assert_true(h.t >= loose - tol && h.t <= robust + tol);
    const float *t = tris + 9 * h.triangle;
    double tt, bary;
    assert_true(ref_ray(t, o, d, &tt, &bary));
    assert_true(bary > -1e-4);
    assert_true(fabs(tt - h.t) <= tol);
    /* The reported distance is the accurate one (not only the watertight test's float t). */
    assert_true(fabs(tt - h.t) <= 1e-6 * (1.0 + fabs(tt)));
    /* Normal: (b-a)x(c-a) normalised, point on the ray. */
    double a[3], b[3], c[3], e0[3], e1[3], nn[3];
    tod(t, a), tod(t + 3, b), tod(t + 6, c);
    dsub(b, a, e0), dsub(c, a, e1), dcross(e0, e1, nn);
    double l = sqrt(ddot(nn, nn));
    for (int k = 0; k < 3; ++k) {
        assert_true(fabs(h.normal[k] - nn[k] / l) < 1e-4);
        assert_true(fabs(h.point[k] - (o[k] + (double)h.t * d[k])) <= 1e-4 * (1.0 + fabs(h.point[k])));
    }
}

static void ray_cast_matches_brute_force_on_random_soups(void **state)
{
    (void)state;
    for (uint64_t seed = 10; seed < 13; ++seed) {
        soup s = soup_random(seed, 3000, 40.0f, seed == 12 ? 8.0f : 2.0f);
        kcc_mesh *m = build_soup(&s);
        test_rng r = rng_seed(seed + 100);
        for (int q = 0; q < 300; ++q) {
            vec3 o = {rng_f(&r, -5, 45), rng_f(&r, -5, 45), rng_f(&r, -5, 45)};
            vec3 d = {rng_f(&r, -1, 1), rng_f(&r, -1, 1), rng_f(&r, -1, 1)};
            if (q % 10 == 0)
                d[0] = 0.0f, d[2] = 0.0f; /* axis-aligned: zero components in the slab test */
            if (q % 10 == 0 && d[1] == 0.0f)
                d[1] = -1.0f;
            float max_t = q % 3 == 0 ? INFINITY : rng_f(&r, 0.0f, 40.0f);
            check_ray(m, s.p, s.n, o, d, max_t, 1e-3);
        }
        kcc_mesh_destroy(m);
        free(s.p);
    }
}

static void ray_through_grid_vertices_and_edges_always_hits(void **state)
{
    (void)state;
    float *pos;
    uint32_t *idx, nv, nt;
    make_grid(16, -4.0f, 0.0f, -4.0f, 0.5f, &pos, &idx, &nv, &nt);
    kcc_mesh *m = build_indexed(pos, nv, idx, nt);
    /* Through every vertex, every edge midpoint and every diagonal midpoint, straight down and
     * slanted. */
    int misses = 0;
    for (int j = 0; j <= 32; ++j)
        for (int i = 0; i <= 32; ++i) {
            float x = -4.0f + 0.25f * (float)i, z = -4.0f + 0.25f * (float)j;
            const float dirs[3][3] = {{0, -1, 0}, {0.3f, -1, 0.2f}, {-0.5f, -0.5f, 0.0f}};
            bool border = i == 0 || j == 0 || i == 32 || j == 32;
            for (int k = 0; k < 3; ++k) {
                vec3 d = {dirs[k][0], dirs[k][1], dirs[k][2]};
                vec3 o = {x - 3.0f * d[0], -3.0f * d[1], z - 3.0f * d[2]};
                if (border && k == 1)
                    continue; /* 3 * 0.3f rounds: on the outer border the ray may truly pass by */
                kcc_ray_hit h;
                if (!kcc_mesh_raycast(m, o, d, 10.0f, &h)) {
                    ++misses;
                    continue;
                }
                assert_float_equal(h.t, 3.0f, 1e-5f);
                assert_float_equal(h.normal[1], 1.0f, 1e-6f);
            }
        }
    assert_int_equal(misses, 0);
    kcc_mesh_destroy(m);
    free(pos);
    free(idx);
}

static void ray_along_grid_plane_edges_and_through_fan_centre_hits(void **state)
{
    (void)state;
    /* A fan of 12 triangles around the origin in the plane x + y + z = 0 (no axis alignment). */
    float pos[3 * 13];
    uint32_t idx[36];
    pos[0] = pos[1] = pos[2] = 0.0f;
    double u[3] = {1 / sqrt(2.0), -1 / sqrt(2.0), 0}, v[3] = {1 / sqrt(6.0), 1 / sqrt(6.0), -2 / sqrt(6.0)};
    for (int i = 0; i < 12; ++i) {
        double a = 2.0 * 3.14159265358979 * i / 12.0;
        for (int k = 0; k < 3; ++k)
            pos[3 + 3 * i + k] = (float)(3.0 * (cos(a) * u[k] + sin(a) * v[k]));
        idx[3 * i] = 0, idx[3 * i + 1] = 1 + (uint32_t)i, idx[3 * i + 2] = 1 + (uint32_t)((i + 1) % 12);
    }
    kcc_mesh *m = build_indexed(pos, 13, idx, 12);
    test_rng r = rng_seed(20);
    for (int q = 0; q < 200; ++q) {
        /* Rays aimed exactly at the shared centre vertex, or at a point on a shared spoke. */
        float f = q % 2 ? 0.0f : rng_f(&r, 0.1f, 0.9f);
        int spoke = (int)(rng_u32(&r) % 12);
        vec3 target = {f * pos[3 + 3 * spoke], f * pos[4 + 3 * spoke], f * pos[5 + 3 * spoke]};
        vec3 o = {rng_f(&r, -5, 5), rng_f(&r, 2, 5), rng_f(&r, -5, 5)};
        vec3 d = {target[0] - o[0], target[1] - o[1], target[2] - o[2]};
        kcc_ray_hit h;
        assert_true(kcc_mesh_raycast(m, o, d, 2.0f, &h));
        assert_float_equal(h.t, 1.0f, 1e-4f);
    }
    kcc_mesh_destroy(m);
}

/* A triangle almost in the plane z = 0, its third vertex raised by the smallest denormal, and rays
 * down -y beside it, at that same z (found by the fuzzer). Every point of the triangle has x >= 0
 * and x + y <= 1, and y >= 0, so a ray at x < 0, or at x + y > 1 while y stays in [0, 1], or
 * starting at y < 0, misses it. The watertight test's edge functions are products of the order of
 * 1e-46: zero in float, and nonzero of opposite signs in double. Rounding the double back to float
 * lost the sign, and the ray hit; and where the signs agree, the depth's products underflowed to a
 * hit at t = 0 for a crossing behind the origin. */
static void ray_beside_a_triangle_whose_edge_functions_underflow_misses(void **state)
{
    (void)state;
    const float tiny = 0x1p-149f;
    const float pos[9] = {0.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f, -0.0f, 1.0f, tiny};
    const uint32_t idx[6] = {0, 1, 2, 2, 1, 0}; /* both windings */
    kcc_mesh *m = build_indexed(pos, 3, idx, 2);
    const float beside[][2] = {{-0x1.2a17b8p-4f, 0x1.b34634p-1f}, {-0.25f, 0.5f}, {0.5f, 0.85f},
                               {0.75f, 0.5f}, {-0x1p-20f, 0.75f}, {0x1.82de48p-1f, -0x1.1f7cd4p-3f},
                               {0x1.34ec72p-1f, -0x1.5d913p-3f}};
    const vec3 down = {0.0f, -1.0f, 0.0f};
    for (size_t i = 0; i < sizeof beside / sizeof beside[0]; ++i) {
        const vec3 o = {beside[i][0], beside[i][1], beside[i][1] < 0.0f ? 0.0f : tiny};
        kcc_ray_hit h;
        for (int w = 0; w < 2; ++w) {
            const uint32_t *t = idx + 3 * w;
            float tt = -1.0f;
            if (kcc_tri_raycast(pos + 3 * t[0], pos + 3 * t[1], pos + 3 * t[2], o, down, 10.0f, &tt))
                fail_msg("winding %d: ray from (%a, %a) hits at t %a", w, o[0], o[1], tt);
        }
        if (kcc_mesh_raycast(m, o, down, 10.0f, &h))
            fail_msg("mesh: ray from (%a, %a) hits triangle %u at t %a", o[0], o[1], h.triangle, h.t);
    }
    kcc_mesh_destroy(m);
}

static void ray_ties_go_to_the_lowest_triangle_index(void **state)
{
    (void)state;
    /* Three coincident copies of one triangle (input order 0,1,2 of which 0 is reversed). */
    float pos[27] = {0, 0, 0, 0, 0, 1, 1, 0, 0,   0, 0, 0, 1, 0, 0, 0, 0, 1,   0, 0, 0, 1, 0, 0, 0, 0, 1};
    soup s = {pos, 3};
    kcc_mesh *m = build_soup(&s);
    kcc_ray_hit h;
    assert_true(kcc_mesh_raycast(m, (vec3){0.2f, 1.0f, 0.2f}, (vec3){0, -1, 0}, 5.0f, &h));
    assert_int_equal(h.triangle, 0);
    assert_float_equal(h.normal[1], 1.0f, 1e-6f); /* (b-a)x(c-a) of triangle 0 points up */
    kcc_mesh_destroy(m);
}

static void ray_max_t_is_inclusive_and_bad_arguments_return_false(void **state)
{
    (void)state;
    float pos[9] = {-1, 0, -1, 0, 0, 1, 1, 0, -1};
    soup s = {pos, 1};
    kcc_mesh *m = build_soup(&s);
    kcc_ray_hit h;
    memset(&h, 0x5a, sizeof h);
    kcc_ray_hit keep = h;
    vec3 o = {0, 2, 0}, down = {0, -1, 0};
    assert_true(kcc_mesh_raycast(m, o, down, 2.0f, &h));
    assert_float_equal(h.t, 2.0f, 0.0f);
    assert_int_equal(h.triangle, 0);
    assert_float_equal(h.normal[1], 1.0f, 1e-6f); /* (1,0,2) x (2,0,0) = (0,4,0) */
    h = keep;
    assert_false(kcc_mesh_raycast(m, o, down, 1.999f, &h));
    assert_false(kcc_mesh_raycast(m, o, (vec3){0, 0, 0}, 5.0f, &h));
    assert_false(kcc_mesh_raycast(m, o, (vec3){0, NAN, 0}, 5.0f, &h));
    assert_false(kcc_mesh_raycast(m, o, down, NAN, &h));
    assert_false(kcc_mesh_raycast(m, o, down, -1.0f, &h));
    assert_false(kcc_mesh_raycast(m, (vec3){INFINITY, 2, 0}, down, 5.0f, &h));
    assert_false(kcc_mesh_raycast(NULL, o, down, 5.0f, &h));
    assert_false(kcc_mesh_raycast(m, o, down, 5.0f, NULL));
    assert_memory_equal(&h, &keep, sizeof h);
    /* Origin on the triangle: t = 0 counts. */
    assert_true(kcc_mesh_raycast(m, (vec3){0, 0, 0}, down, 0.0f, &h));
    assert_float_equal(h.t, 0.0f, 0.0f);
    /* The primitive agrees and also rejects bad input. */
    float t = -1.0f;
    assert_true(kcc_tri_raycast(pos, pos + 3, pos + 6, o, down, 2.0f, &t));
    assert_float_equal(t, 2.0f, 0.0f);
    assert_false(kcc_tri_raycast(pos, pos + 3, pos + 6, o, (vec3){0, 0, 0}, 2.0f, &t));
    kcc_mesh_destroy(m);
}

/* ------------------------------------------------------------------------------------------------
 * Box overlap and bounds queries */

static void check_overlap(const kcc_mesh *m, const float *tris, uint32_t n, vec3 box[2],
                          double eps, uint8_t *mark, uint32_t *buf, uint32_t cap)
{
    uint32_t total = kcc_mesh_overlap_aabb(m, CB(box), buf, cap);
    assert_true(total <= cap); /* callers size cap for the whole answer */
    memset(mark, 0, n);
    for (uint32_t i = 0; i < total; ++i) {
        assert_true(buf[i] < n);
        assert_int_equal(mark[buf[i]], 0); /* no duplicates */
        mark[buf[i]] = 1;
    }
    double lo[3], hi[3], glo[3], ghi[3];
    for (int k = 0; k < 3; ++k) {
        lo[k] = box[0][k] + eps, hi[k] = box[1][k] - eps;
        glo[k] = box[0][k] - eps, ghi[k] = box[1][k] + eps;
    }
    for (uint32_t i = 0; i < n; ++i) {
        const float *t = tris + 9 * i;
        if (ref_flatness(t) < 1e-10)
            continue;
        if (ref_box(t, lo, hi))
            assert_int_equal(mark[i], 1);
        if (!ref_box(t, glo, ghi))
            assert_int_equal(mark[i], 0);
    }
    /* The bounds query returns a superset of the exact answer and exactly the triangles whose
     * bounds overlap the box. */
    uint32_t nb = kcc_mesh_query_bounds(m, CB(box), buf, cap);
    assert_true(nb >= total && nb <= cap);
    uint32_t expect = 0;
    for (uint32_t i = 0; i < n; ++i) {
        const float *t = tris + 9 * i;
        if (ref_flatness(t) == 0.0)
            continue;
        bool in = true;
        for (int k = 0; k < 3; ++k) {
            float mn = fminf(t[k], fminf(t[3 + k], t[6 + k])), mx = fmaxf(t[k], fmaxf(t[3 + k], t[6 + k]));
            in = in && mn <= box[1][k] && mx >= box[0][k];
        }
        expect += in;
    }
    assert_int_equal(nb, expect);
    for (uint32_t i = 0; i < nb; ++i)
        mark[buf[i]] |= 2;
    for (uint32_t i = 0; i < n; ++i)
        if (mark[i] & 1)
            assert_true(mark[i] & 2);
}

static void box_overlap_matches_clipping_reference_on_random_soups(void **state)
{
    (void)state;
    for (uint64_t seed = 30; seed < 33; ++seed) {
        soup s = soup_random(seed, 3000, 30.0f, 2.0f);
        kcc_mesh *m = build_soup(&s);
        uint8_t *mark = malloc(s.n);
        uint32_t *buf = malloc(sizeof(uint32_t) * s.n);
        test_rng r = rng_seed(seed + 7);
        for (int q = 0; q < 150; ++q) {
            vec3 c = {rng_f(&r, 0, 30), rng_f(&r, 0, 30), rng_f(&r, 0, 30)};
            float h = q % 5 == 0 ? 4.0f : 0.6f;
            vec3 box[2] = {{c[0] - rng_f(&r, 0, h), c[1] - rng_f(&r, 0, h), c[2] - rng_f(&r, 0, h)},
                           {c[0] + rng_f(&r, 0, h), c[1] + rng_f(&r, 0, h), c[2] + rng_f(&r, 0, h)}};
            check_overlap(m, s.p, s.n, box, 1e-4, mark, buf, s.n);
        }
        kcc_mesh_destroy(m);
        free(mark);
        free(buf);
        free(s.p);
    }
}

static void box_overlap_counts_exact_touching_of_faces_edges_and_vertices(void **state)
{
    (void)state;
    float tri[9] = {0, 0, 0, 2, 0, 0, 0, 0, 2}; /* in the plane y = 0 */
    /* Face: box resting on the plane. */
    assert_true(kcc_tri_overlap_aabb(tri, tri + 3, tri + 6, CB((vec3[2]){{0.2f, 0, 0.2f}, {1, 1, 1}})));
    assert_false(kcc_tri_overlap_aabb(tri, tri + 3, tri + 6,
                                      CB((vec3[2]){{0.2f, 1e-6f, 0.2f}, {1, 1, 1}})));
    /* Vertex: box corner exactly at the triangle's vertex (2, 0, 0). */
    assert_true(kcc_tri_overlap_aabb(tri, tri + 3, tri + 6, CB((vec3[2]){{2, -1, -1}, {3, 0, 0}})));
    assert_false(kcc_tri_overlap_aabb(tri, tri + 3, tri + 6,
                                      CB((vec3[2]){{2.000001f, -1, -1}, {3, 0, 0}})));
    /* Hypotenuse edge x + z = 2: a box whose corner (1, 0, 1) lies on it, from outside. */
    assert_true(kcc_tri_overlap_aabb(tri, tri + 3, tri + 6, CB((vec3[2]){{1, -1, 1}, {2, 1, 2}})));
    assert_false(kcc_tri_overlap_aabb(tri, tri + 3, tri + 6,
                                      CB((vec3[2]){{1.000001f, -1, 1.000001f}, {2, 1, 2}})));
    /* A slanted triangle touching a box corner through its interior (normal axis decides):
     * plane x + y + z = 3 and the unit box [0,1]^3 touch at (1,1,1). */
    float sl[9] = {3, 0, 0, 0, 3, 0, 0, 0, 3};
    assert_true(kcc_tri_overlap_aabb(sl, sl + 3, sl + 6, CB((vec3[2]){{0, 0, 0}, {1, 1, 1}})));
    assert_false(kcc_tri_overlap_aabb(sl, sl + 3, sl + 6, CB((vec3[2]){{0, 0, 0}, {0.999999f, 1, 1}})));
    /* Same through the mesh. */
    soup s = {tri, 1};
    kcc_mesh *m = build_soup(&s);
    uint32_t out = 99;
    assert_int_equal(kcc_mesh_overlap_aabb(m, CB((vec3[2]){{2, -1, -1}, {3, 0, 0}}), &out, 1), 1);
    assert_int_equal(out, 0);
    kcc_mesh_destroy(m);
}

static void overlap_returns_the_total_and_writes_only_capacity(void **state)
{
    (void)state;
    float *pos;
    uint32_t *idx, nv, nt;
    make_grid(8, 0.0f, 0.0f, 0.0f, 1.0f, &pos, &idx, &nv, &nt);
    kcc_mesh *m = build_indexed(pos, nv, idx, nt);
    /* Box strictly inside cells [2,4) x [2,4) (touching the plane): 4 cells, 8 triangles. */
    vec3 box[2] = {{2.25f, -0.5f, 2.25f}, {3.75f, 0.0f, 3.75f}};
    uint32_t out[4] = {7777, 7777, 7777, 7777};
    assert_int_equal(kcc_mesh_overlap_aabb(m, CB(box), out, 2), 8);
    assert_true(out[0] < nt && out[1] < nt);
    assert_int_equal(out[2], 7777);
    assert_int_equal(kcc_mesh_overlap_aabb(m, CB(box), NULL, 0), 8);
    assert_int_equal(kcc_mesh_overlap_aabb(m, CB(box), NULL, 3), 0); /* NULL with capacity: invalid */
    assert_int_equal(kcc_mesh_overlap_aabb(NULL, CB(box), out, 4), 0);
    vec3 inverted[2] = {{1, 1, 1}, {0, 0, 0}};
    assert_int_equal(kcc_mesh_overlap_aabb(m, CB(inverted), out, 4), 0);
    vec3 nanbox[2] = {{NAN, 0, 0}, {1, 1, 1}};
    assert_int_equal(kcc_mesh_overlap_aabb(m, CB(nanbox), out, 4), 0);
    assert_int_equal(kcc_mesh_query_bounds(m, CB(nanbox), out, 4), 0);
    kcc_mesh_destroy(m);
    free(pos);
    free(idx);
}

static void mesh_overlap_agrees_with_the_triangle_test_on_edge_touching_boxes(void **state)
{
    (void)state;
    /* Triangles on a 1/8 grid (exact floats) with box corners exactly on edge midpoints, some
     * nudged by one float step: the separations are 0 or one rounding, where a float evaluation
     * would have to guess. The mesh (which batches triangles) must answer exactly like the
     * per-triangle test, at the origin and 1e5 m away. */
    test_rng r = rng_seed(90);
    for (int round = 0; round < 2; ++round) {
        float off = round ? 1e5f : 0.0f;
        soup s = {malloc(sizeof(float) * 9 * 64), 64};
        for (uint32_t i = 0; i < 9 * s.n; ++i)
            s.p[i] = off + (float)((int)(rng_u32(&r) % 33) - 16) / 8.0f;
        kcc_mesh *m = build_soup(&s);
        uint32_t out[64];
        for (int q = 0; q < 400; ++q) {
            uint32_t t = rng_u32(&r) % s.n, v = rng_u32(&r) % 3;
            const float *a = s.p + 9 * t + 3 * v, *b = s.p + 9 * t + 3 * ((v + 1) % 3);
            vec3 box[2];
            for (int k = 0; k < 3; ++k) {
                float p = 0.5f * a[k] + 0.5f * b[k], w = rng_f(&r, 0.1f, 1.0f);
                bool up = rng_u32(&r) & 1;
                box[0][k] = up ? p : p - w;
                box[1][k] = up ? p + w : p;
                if (rng_u32(&r) % 4 == 0) {
                    if (up)
                        box[0][k] = nextafterf(box[0][k], INFINITY);
                    else
                        box[1][k] = nextafterf(box[1][k], -INFINITY);
                }
            }
            uint32_t n = kcc_mesh_overlap_aabb(m, CB(box), out, 64);
            uint8_t in[64] = {0};
            for (uint32_t i = 0; i < n; ++i)
                in[out[i]] = 1;
            for (uint32_t i = 0; i < s.n; ++i) {
                const float *p = s.p + 9 * i;
                assert_int_equal(in[i], kcc_tri_overlap_aabb(p, p + 3, p + 6, CB(box)) ? 1 : 0);
            }
        }
        kcc_mesh_destroy(m);
        free(s.p);
    }
}

/* ------------------------------------------------------------------------------------------------
 * Degenerate input, extreme coordinates, sizes */

/* A sliver with a 1e-26 m edge (not degenerate in float) lies along z = (x + 1) / 2 in the plane
 * y = 0; a flat box at x in [-0.49, 0.36], z in [0.05, 0.2] is below that line everywhere, so they do
 * not overlap, although about the box centre the sliver's normal rounds to zero (found by the fuzzer:
 * an early accept took the all-zero edge functions for "inside"). */
static void a_sliver_whose_normal_vanishes_about_the_box_centre_is_still_tested_exactly(void **state)
{
    (void)state;
    const float a[3] = {-1.0f, 0.0f, -0x1.8c240cp-87f}, b[3] = {1.0f, 0.0f, 1.0f}, c[3] = {-1.0f, 0.0f, 0.0f};
    vec3 box[2] = {{-0x1.f61e5ep-2f, 0.0f, 0x1.98d698p-5f}, {0x1.6dcbbep-2f, 0.0f, 0x1.943c5ap-3f}};
    assert_false(kcc_tri_overlap_aabb(a, b, c, (const vec3 *)box));
    /* moved onto the sliver's line (z = 0.5 at x = 0) it does overlap */
    vec3 on[2] = {{-0.05f, 0.0f, 0.45f}, {0.05f, 0.0f, 0.55f}};
    assert_true(kcc_tri_overlap_aabb(a, b, c, (const vec3 *)on));
}

static void degenerate_and_needle_triangles_are_never_reported(void **state)
{
    (void)state;
    /* 0: real floor; 1: repeated vertex; 2: exact collinear needle; 3: needle whose float cross
     * product is zero; 4: all corners equal. */
    float pos[45] = {-1, 0, -1, 0, 0, 1, 1, 0, -1,
                     0, 0.5f, 0, 0, 0.5f, 0, 1, 0.5f, 1,
                     -1, 0.2f, -1, 0, 0.2f, 0, 2, 0.2f, 2,
                     0, 0.1f, 0, 1e-30f, 0.1f, 0, 1, 0.1f, 1e-30f,
                     0.3f, 0.3f, 0.3f, 0.3f, 0.3f, 0.3f, 0.3f, 0.3f, 0.3f};
    soup s = {pos, 5};
    kcc_mesh *m = build_soup(&s);
    kcc_mesh_stats st;
    kcc_mesh_get_stats(m, &st);
    assert_int_equal(st.degenerate, 4);
    assert_int_equal(kcc_mesh_triangle_count(m), 5);
    vec3 v[3];
    assert_true(kcc_mesh_triangle(m, 3, v)); /* still readable */
    assert_true(v[1][0] == 1e-30f);
    for (int i = 1; i < 5; ++i)
        assert_true(kcc_tri_is_degenerate(pos + 9 * i, pos + 9 * i + 3, pos + 9 * i + 6));
    kcc_ray_hit h;
    assert_true(kcc_mesh_raycast(m, (vec3){0, 1, 0}, (vec3){0, -1, 0}, 5.0f, &h));
    assert_int_equal(h.triangle, 0);
    uint32_t out[8];
    vec3 big[2] = {{-3, -3, -3}, {3, 3, 3}};
    assert_int_equal(kcc_mesh_overlap_aabb(m, CB(big), out, 8), 1);
    assert_int_equal(out[0], 0);
    assert_int_equal(kcc_mesh_query_bounds(m, CB(big), out, 8), 1);
    kcc_sweep_hit sh;
    vec3 box[2] = {{-0.1f, 1.0f, -0.1f}, {0.1f, 1.2f, 0.1f}};
    assert_true(kcc_mesh_sweep_aabb(m, CB(box), (vec3){0, -2, 0}, &sh));
    assert_int_equal(sh.triangle, 0);
    for (int i = 1; i < 5; ++i) {
        const float *t = pos + 9 * i;
        float tt;
        vec3 n;
        bool so;
        assert_false(kcc_tri_overlap_aabb(t, t + 3, t + 6, CB(big)));
        assert_false(kcc_tri_raycast(t, t + 3, t + 6, (vec3){0, 1, 0}, (vec3){0, -1, 0}, 5.0f, &tt));
        assert_false(kcc_tri_sweep_aabb(t, t + 3, t + 6, CB(box), (vec3){0, -2, 0}, &tt, n, &so));
    }
    kcc_mesh_destroy(m);
}

static void a_mesh_of_only_degenerate_triangles_is_rejected_as_having_no_triangles(void **state)
{
    (void)state;
    /* A repeated vertex, an exact collinear needle, a needle whose float cross product is zero,
     * all corners equal: each degenerate by kcc_tri_is_degenerate, so no query could report any. */
    const float pos[36] = {0, 0.5f, 0, 0, 0.5f, 0, 1, 0.5f, 1,
                           -1, 0.2f, -1, 0, 0.2f, 0, 2, 0.2f, 2,
                           0, 0.1f, 0, 1e-30f, 0.1f, 0, 1, 0.1f, 1e-30f,
                           0.3f, 0.3f, 0.3f, 0.3f, 0.3f, 0.3f, 0.3f, 0.3f, 0.3f};
    for (int i = 0; i < 4; ++i)
        assert_true(kcc_tri_is_degenerate(pos + 9 * i, pos + 9 * i + 3, pos + 9 * i + 6));
    kcc_mesh_desc d;
    memset(&d, 0, sizeof d);
    d.positions = pos;
    d.vertex_count = 12;
    d.triangle_count = 4;
    kcc_mesh *m = NULL;
    assert_int_equal(kcc_mesh_build(&d, &m), KCC_ERR_NO_TRIANGLES);
    assert_null(m);
    /* One live triangle among them is enough. */
    float more[45];
    memcpy(more, pos, sizeof pos);
    const float floor_tri[9] = {-1, 0, -1, 0, 0, 1, 1, 0, -1};
    memcpy(more + 36, floor_tri, sizeof floor_tri);
    d.positions = more;
    d.vertex_count = 15;
    d.triangle_count = 5;
    assert_int_equal(kcc_mesh_build(&d, &m), KCC_OK);
    vec3 b[2];
    kcc_mesh_bounds(m, b);
    assert_true(b[0][0] == -1.0f && b[1][0] == 1.0f && b[0][1] == 0.0f && b[1][1] == 0.0f);
    kcc_mesh_destroy(m);
}

static void queries_stay_exact_at_one_million_metres_and_at_millimetre_scale(void **state)
{
    (void)state;
    const float offs[2] = {1.0e6f, 0.0f};
    const float cell[2] = {0.5f, 0.001f};
    for (int c = 0; c < 2; ++c) {
        float *pos;
        uint32_t *idx, nv, nt;
        float x0 = offs[c], z0 = -offs[c], y = offs[c] * 0.5f, h = cell[c];
        make_grid(8, x0, y, z0, h, &pos, &idx, &nv, &nt);
        kcc_mesh *m = build_indexed(pos, nv, idx, nt);
        int misses = 0;
        for (int j = 0; j <= 16; ++j)
            for (int i = 0; i <= 16; ++i) {
                vec3 o = {x0 + 0.5f * h * (float)i, y + 4.0f * h, z0 + 0.5f * h * (float)j};
                kcc_ray_hit hit;
                misses += !kcc_mesh_raycast(m, o, (vec3){0, -1, 0}, 8.0f * h, &hit);
            }
        assert_int_equal(misses, 0);
        /* Box resting exactly on the grid touches it; lifted by one float step it does not. */
        vec3 box[2] = {{x0 + 1.25f * h, y, z0 + 1.25f * h}, {x0 + 2.75f * h, y + h, z0 + 2.75f * h}};
        assert_int_equal(kcc_mesh_overlap_aabb(m, CB(box), NULL, 0), 8);
        box[0][1] = nextafterf(y, INFINITY);
        assert_int_equal(kcc_mesh_overlap_aabb(m, CB(box), NULL, 0), 0);
        /* Sweep down from 1 cell above: contact after exactly the gap. */
        vec3 sb[2] = {{x0 + 1.25f * h, y + h, z0 + 1.25f * h}, {x0 + 2.75f * h, y + 2 * h, z0 + 2.75f * h}};
        kcc_sweep_hit sh;
        assert_true(kcc_mesh_sweep_aabb(m, CB(sb), (vec3){0, -4.0f * h, 0}, &sh));
        assert_float_equal(sh.t, 0.25f, 1e-6f);
        assert_float_equal(sh.normal[1], 1.0f, 1e-6f);
        assert_false(sh.start_overlap);
        kcc_mesh_destroy(m);
        free(pos);
        free(idx);
    }
}

static void a_mesh_of_one_triangle_answers_every_query(void **state)
{
    (void)state;
    float pos[9] = {0, 0, 0, 0, 0, 1, 1, 0, 0};
    soup s = {pos, 1};
    kcc_mesh *m = build_soup(&s);
    kcc_mesh_stats st;
    kcc_mesh_get_stats(m, &st);
    assert_int_equal(st.nodes, 1);
    assert_int_equal(st.leaves, 1);
    vec3 b[2];
    kcc_mesh_bounds(m, b);
    assert_true(b[0][0] == 0 && b[1][0] == 1 && b[0][1] == 0 && b[1][1] == 0 && b[1][2] == 1);
    kcc_ray_hit h;
    assert_true(kcc_mesh_raycast(m, (vec3){0.25f, -1, 0.25f}, (vec3){0, 2, 0}, 1.0f, &h));
    assert_float_equal(h.t, 0.5f, 1e-7f);
    assert_float_equal(h.normal[1], 1.0f, 1e-7f);
    uint32_t out;
    assert_int_equal(kcc_mesh_overlap_aabb(m, CB((vec3[2]){{0.1f, -0.1f, 0.1f}, {0.2f, 0.1f, 0.2f}}), &out, 1), 1);
    kcc_sweep_hit sh;
    assert_true(kcc_mesh_sweep_aabb(m, CB((vec3[2]){{0.1f, 1, 0.1f}, {0.2f, 2, 0.2f}}), (vec3){0, -2, 0}, &sh));
    assert_float_equal(sh.t, 0.5f, 1e-7f);
    kcc_mesh_destroy(m);
}

static void a_million_triangle_mesh_builds_and_answers(void **state)
{
    (void)state;
    float *pos;
    uint32_t *idx, nv, nt;
    make_grid(708, -177.0f, 0.0f, -177.0f, 0.5f, &pos, &idx, &nv, &nt);
    assert_true(nt > 1000000);
    kcc_mesh *m = build_indexed(pos, nv, idx, nt);
    kcc_mesh_stats st;
    kcc_mesh_get_stats(m, &st);
    assert_true(st.tree_bytes <= 32u * (size_t)nt);
    assert_true(st.depth <= KCC_TREE_MAX_DEPTH);
    test_rng r = rng_seed(40);
    for (int q = 0; q < 20; ++q) {
        /* Grid vertices: exactly on shared vertices. */
        float x = -177.0f + 0.5f * (float)(rng_u32(&r) % 709), z = -177.0f + 0.5f * (float)(rng_u32(&r) % 709);
        kcc_ray_hit h;
        assert_true(kcc_mesh_raycast(m, (vec3){x, 2, z}, (vec3){0, -1, 0}, 2.0f, &h));
        assert_float_equal(h.t, 2.0f, 0.0f);
        uint32_t tri = h.triangle;
        float t[9];
        tri_of(m, tri, t);
        assert_true(fminf(t[0], fminf(t[3], t[6])) <= x && fmaxf(t[0], fmaxf(t[3], t[6])) >= x);
        /* A 0.94 x 1.75 x 0.94 box standing on the grid inside one 1 x 1 block of 4 cells. */
        vec3 box[2] = {{x + 0.03f, 0, z + 0.03f}, {x + 0.97f, 1.75f, z + 0.97f}};
        if (x < 170.0f && z < 170.0f)
            assert_int_equal(kcc_mesh_overlap_aabb(m, CB(box), NULL, 0), 8);
    }
    kcc_mesh_destroy(m);
    free(pos);
    free(idx);
}

/* ------------------------------------------------------------------------------------------------
 * Exact duplicates */

/* An input of `base` random triangles, each present once, three of them 1000 times more and 40 of
 * them 1 to 5 times more, shuffled (so a set's first occurrence, its lowest index, is anywhere),
 * plus a rotated copy (b, c, a) of triangle 5 and a reversed one (a, c, b) of triangle 6, which are
 * not duplicates. *out_distinct is the number of different triangles. */
static soup soup_with_duplicates(uint64_t seed, uint32_t base, uint32_t *out_distinct)
{
    soup b = soup_random(seed, base, 20.0f, 2.0f);
    uint32_t n = base + 3u * 1000u + 2u;
    for (uint32_t i = 0; i < 40; ++i)
        n += 1u + i % 5u;
    uint32_t *order = malloc(sizeof(uint32_t) * n), k = 0;
    assert_non_null(order);
    for (uint32_t i = 0; i < base; ++i)
        order[k++] = i;
    for (uint32_t i = 0; i < 3000; ++i)
        order[k++] = i % 3u;
    for (uint32_t i = 0; i < 40; ++i)
        for (uint32_t c = 0; c <= i % 5u; ++c)
            order[k++] = 3u + i;
    test_rng r = rng_seed(seed + 1);
    for (uint32_t i = k; i > 1; --i) {
        uint32_t j = rng_u32(&r) % i, t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
    soup s = {malloc(sizeof(float) * 9 * n), n};
    assert_non_null(s.p);
    for (uint32_t i = 0; i < k; ++i)
        memcpy(s.p + 9 * i, b.p + 9 * order[i], sizeof(float) * 9);
    static const int rotated[3] = {1, 2, 0}, reversed[3] = {0, 2, 1};
    for (int c = 0; c < 3; ++c) {
        memcpy(s.p + 9 * k + 3 * c, b.p + 9 * 5 + 3 * rotated[c], sizeof(float) * 3);
        memcpy(s.p + 9 * (k + 1) + 3 * c, b.p + 9 * 6 + 3 * reversed[c], sizeof(float) * 3);
    }
    assert_int_equal(k + 2, n);
    free(order);
    free(b.p);
    *out_distinct = base + 2u;
    return s;
}

/* The earliest contact over every triangle of the soup by the single-triangle sweep, ties to the
 * lowest index; false (and triangle UINT32_MAX) when none. */
static bool brute_sweep(const soup *s, vec3 box[2], const vec3 delta, kcc_sweep_hit *out)
{
    memset(out, 0, sizeof *out);
    out->t = INFINITY;
    out->triangle = UINT32_MAX;
    for (uint32_t i = 0; i < s->n; ++i) {
        const float *t = s->p + 9 * i;
        float tt;
        vec3 n;
        bool so;
        if (kcc_tri_sweep_aabb(t, t + 3, t + 6, CB(box), delta, &tt, n, &so) && tt < out->t) {
            out->t = tt, out->triangle = i, out->start_overlap = so;
            memcpy(out->normal, n, sizeof n);
        }
    }
    return out->triangle != UINT32_MAX;
}

/* The lowest input index whose corners equal triangle i's bit for bit (brute force). */
static uint32_t first_copy(const soup *s, uint32_t i)
{
    for (uint32_t j = 0; j < i; ++j)
        if (memcmp(s->p + 9 * j, s->p + 9 * i, sizeof(float) * 9) == 0)
            return j;
    return i;
}

static void queries_on_a_mesh_of_duplicate_sets_match_brute_force(void **state)
{
    (void)state;
    uint32_t distinct = 0;
    soup s = soup_with_duplicates(70, 400, &distinct);
    kcc_mesh *m = build_soup(&s);
    assert_int_equal(kcc_mesh_validate(m), KCC_OK);
    kcc_mesh_stats st;
    kcc_mesh_get_stats(m, &st);
    assert_int_equal(st.triangles, s.n);
    assert_int_equal(st.duplicates, s.n - distinct);
    for (uint32_t i = 0; i < s.n; ++i) {
        float t[9];
        tri_of(m, i, t);
        assert_memory_equal(t, s.p + 9 * i, sizeof t);
    }
    uint8_t *mark = malloc(s.n);
    uint32_t *buf = malloc(sizeof(uint32_t) * s.n);
    test_rng r = rng_seed(71);
    for (int q = 0; q < 60; ++q) {
        vec3 c = {rng_f(&r, 0, 20), rng_f(&r, 0, 20), rng_f(&r, 0, 20)};
        float h = q % 3 == 0 ? 6.0f : 1.0f;
        vec3 box[2] = {{c[0] - h, c[1] - h, c[2] - h}, {c[0] + h, c[1] + h, c[2] + h}};
        check_overlap(m, s.p, s.n, box, 1e-4, mark, buf, s.n);
        vec3 d = {rng_f(&r, -1, 1), rng_f(&r, -1, 1), rng_f(&r, -1, 1)};
        check_ray(m, s.p, s.n, c, d, INFINITY, 1e-3);
        kcc_ray_hit rh;
        if (kcc_mesh_raycast(m, c, d, INFINITY, &rh))
            assert_int_equal(rh.triangle, first_copy(&s, rh.triangle)); /* ties: the lowest index */
        vec3 sd = {d[0] * 8, d[1] * 8, d[2] * 8};
        kcc_sweep_hit sh, want;
        assert_int_equal(kcc_mesh_sweep_aabb(m, CB(box), sd, &sh), brute_sweep(&s, box, sd, &want));
        if (want.triangle != UINT32_MAX) {
            assert_true(sh.t == want.t);
            assert_int_equal(sh.triangle, want.triangle);
        }
    }
    /* A full answer, then capacities cut inside a set's list: the count stays the total. */
    vec3 all[2] = {{-10, -10, -10}, {40, 40, 40}};
    assert_int_equal(kcc_mesh_overlap_aabb(m, CB(all), NULL, 0), s.n);
    assert_int_equal(kcc_mesh_query_bounds(m, CB(all), buf, 7), s.n);
    assert_int_equal(kcc_mesh_query_slots(m, all[0], all[1], NULL, 0), distinct);
    free(mark);
    free(buf);
    kcc_mesh_destroy(m);
    free(s.p);
}

/* N copies of one floor triangle (0.5 m below a standing box's centre plane), N = 1 or many. */
static kcc_mesh *floor_copies(uint32_t n, float **out_pos)
{
    static const float tri[9] = {-50, 0, -50, 0, 0, 50, 50, 0, -50};
    float *p = malloc(sizeof(float) * 9 * n);
    assert_non_null(p);
    for (uint32_t i = 0; i < n; ++i)
        memcpy(p + 9 * (size_t)i, tri, sizeof tri);
    soup s = {p, n};
    *out_pos = p;
    return build_soup(&s);
}

static void move_on_a_million_identical_triangles_gathers_one(void **state)
{
    (void)state;
    const uint32_t n = 1000000;
    float *pa, *pb;
    kcc_mesh *many = floor_copies(n, &pa), *one = floor_copies(1, &pb);
    kcc_mesh_stats st;
    kcc_mesh_get_stats(many, &st);
    assert_int_equal(st.leaves, 1);
    assert_int_equal(st.duplicates, n - 1);
    assert_true(kcc_mesh_memory_bytes(many) < 5u * (size_t)n); /* one list entry each */
    /* The move's list holds the one slot; the public box queries count every copy. */
    vec3 region[2] = {{-1, -1, -1}, {1, 2, 1}};
    assert_int_equal(kcc_mesh_query_slots(many, region[0], region[1], NULL, 0), 1);
    assert_int_equal(kcc_mesh_overlap_aabb(many, CB(region), NULL, 0), n);
    kcc_local_source src;
    kcc_local_source_mesh(&src, many);
    kcc_local list;
    kcc_local_store *store = malloc(sizeof *store);
    kcc_local_gather(&list, store, &src, CB(region));
    assert_int_equal(list.count, 1);
    assert_false(list.overflow);
    free(store);
    /* Moves on the copies are the moves on the single triangle, bit for bit. */
    kcc_character_desc cd = kcc_character_default_desc();
    kcc_character ca, cb;
    const vec3 start = {0.0f, 0.95f, 0.0f};
    assert_int_equal(kcc_character_init(&ca, &cd, start), KCC_OK);
    assert_int_equal(kcc_character_init(&cb, &cd, start), KCC_OK);
    for (int i = 0; i < 20; ++i) {
        const vec3 d = {0.05f, i % 4 == 0 ? 0.3f : -0.05f, 0.03f};
        kcc_move_result ra, rb;
        kcc_character_move(&ca, many, d, &ra);
        kcc_character_move(&cb, one, d, &rb);
        assert_int_equal(ra.flags, rb.flags);
        assert_false(ra.flags & KCC_MOVE_CONTACT_CAP);
        assert_memory_equal(ca.position, cb.position, sizeof ca.position);
    }
    kcc_mesh_destroy(many);
    kcc_mesh_destroy(one);
    free(pa);
    free(pb);
}

/* Moves through a cloud of 400 distinct triangles packed around the box (more than a move's store
 * holds, so its overlap and push queries ask the mesh, kcc_mesh_overlap_once), each present 4 times (copies after the
 * originals, so both meshes name the originals alike), are the moves through the originals alone,
 * bit for bit. */
static void moves_through_a_dense_cloud_of_copies_are_the_moves_through_the_originals(void **state)
{
    (void)state;
    const uint32_t distinct = 400, copies = 4;
    soup once = soup_random(95, distinct, 1.2f, 0.3f);
    soup many = {malloc(sizeof(float) * 9 * distinct * copies), distinct * copies};
    assert_non_null(many.p);
    for (uint32_t c = 0; c < copies; ++c)
        memcpy(many.p + 9 * distinct * c, once.p, sizeof(float) * 9 * distinct);
    kcc_mesh *a = build_soup(&once), *b = build_soup(&many);
    kcc_character_desc cd = kcc_character_default_desc();
    kcc_character ca, cb;
    const vec3 start = {0.6f, 0.6f, 0.6f};
    assert_int_equal(kcc_character_init(&ca, &cd, start), KCC_OK);
    assert_int_equal(kcc_character_init(&cb, &cd, start), KCC_OK);
    test_rng r = rng_seed(96);
    for (int i = 0; i < 40; ++i) {
        const vec3 d = {rng_f(&r, -0.3f, 0.3f), rng_f(&r, -0.3f, 0.3f), rng_f(&r, -0.3f, 0.3f)};
        kcc_move_result ra, rb;
        kcc_character_move(&ca, a, d, &ra);
        kcc_character_move(&cb, b, d, &rb);
        assert_int_equal(ra.flags, rb.flags);
        assert_memory_equal(ca.position, cb.position, sizeof ca.position);
    }
    kcc_mesh_destroy(a);
    kcc_mesh_destroy(b);
    free(once.p);
    free(many.p);
}

/* ------------------------------------------------------------------------------------------------
 * Swept boxes */

static void sweep_onto_a_floor_wall_and_edge_stops_at_hand_computed_times(void **state)
{
    (void)state;
    float floor_tri[9] = {-5, 0, -5, 0, 0, 5, 5, 0, -5};   /* normal -Y as wound: orientation must not matter */
    float wall[9] = {2, -5, -5, 2, 5, -5, 2, 0, 5};       /* plane x = 2 */
    float t;
    vec3 n;
    bool so = true;
    /* Box [-0.5,0.5] x [1,2]: falls 1 m onto the floor with delta -4: t = 0.25, normal +Y. */
    vec3 box[2] = {{-0.5f, 1, -0.5f}, {0.5f, 2, 0.5f}};
    assert_true(kcc_tri_sweep_aabb(floor_tri, floor_tri + 3, floor_tri + 6, CB(box), (vec3){0, -4, 0}, &t, n, &so));
    assert_float_equal(t, 0.25f, 1e-7f);
    assert_float_equal(n[1], 1.0f, 1e-7f);
    assert_false(so);
    /* Moving up, away: nothing. */
    assert_false(kcc_tri_sweep_aabb(floor_tri, floor_tri + 3, floor_tri + 6, CB(box), (vec3){0, 4, 0}, &t, n, &so));
    /* Toward the wall: box max x 0.5 reaches 2 after 1.5 of delta 3: t = 0.5, normal -X. */
    assert_true(kcc_tri_sweep_aabb(wall, wall + 3, wall + 6, CB(box), (vec3){3, 0, 0}, &t, n, &so));
    assert_float_equal(t, 0.5f, 1e-7f);
    assert_float_equal(n[0], -1.0f, 1e-7f);
    /* Too short: stops 0.1 before. */
    assert_false(kcc_tri_sweep_aabb(wall, wall + 3, wall + 6, CB(box), (vec3){1.4f, 0, 0}, &t, n, &so));
    /* Edge contact: a triangle whose only part near the box path is the edge from (0,0,-1) to
     * (0,0,1) pointing toward the box (triangle lies in y = 0, x <= 0... the edge at x = 0). The
     * box [1,2]x[-0.5,0.5]x[-0.5,0.5] moves by (-2, 0, 0): contact at t = 0.5, normal +X. */
    float edge_tri[9] = {0, 0, -1, 0, 0, 1, -3, 0, 0};
    vec3 eb[2] = {{1, -0.5f, -0.5f}, {2, 0.5f, 0.5f}};
    assert_true(kcc_tri_sweep_aabb(edge_tri, edge_tri + 3, edge_tri + 6, CB(eb), (vec3){-2, 0, 0}, &t, n, &so));
    assert_float_equal(t, 0.5f, 1e-7f);
    assert_float_equal(n[0], 1.0f, 1e-7f);
    /* Diagonal edge-edge: triangle edge along (1,0,1) direction at y = 0 hit by the box's bottom
     * edge moving down: the sloped triangle (0,0,0),(4,0,4),(2,-2,2)... its top edge is the line
     * x = z, y = 0. A box [1,2]x[1,2]x[1,2] straddles x = z; moving down by 2, the box bottom (y = 1)
     * reaches y = 0 at t = 0.5. */
    float ridge[9] = {0, 0, 0, 4, 0, 4, 2, -2, 2};
    vec3 rb[2] = {{1, 1, 1}, {2, 2, 2}};
    assert_true(kcc_tri_sweep_aabb(ridge, ridge + 3, ridge + 6, CB(rb), (vec3){0, -2, 0}, &t, n, &so));
    assert_float_equal(t, 0.5f, 1e-6f);
    assert_float_equal(n[1], 1.0f, 1e-6f);
}

static void sweep_does_not_tunnel_through_thin_walls_at_high_speed(void **state)
{
    (void)state;
    /* A 1 cm thick closed slab (two faces, 4 triangles) at x in [10, 10.01]; box moves 1 km. */
    float pos[36] = {10, -5, -5, 10, 5, -5, 10, 5, 5,   10, -5, -5, 10, 5, 5, 10, -5, 5,
                     10.01f, -5, -5, 10.01f, 5, 5, 10.01f, 5, -5,   10.01f, -5, -5, 10.01f, -5, 5, 10.01f, 5, 5};
    soup s = {pos, 4};
    kcc_mesh *m = build_soup(&s);
    vec3 box[2] = {{-0.3f, -0.9f, -0.3f}, {0.3f, 0.9f, 0.3f}};
    kcc_sweep_hit h;
    assert_true(kcc_mesh_sweep_aabb(m, CB(box), (vec3){1000.0f, 0.0f, 0.0f}, &h));
    assert_float_equal(h.t, (10.0f - 0.3f) / 1000.0f, 1e-7f);
    assert_true(h.triangle < 2);
    assert_float_equal(h.normal[0], -1.0f, 1e-6f);
    assert_false(h.start_overlap);
    /* Coming from the other side, it hits the far face first. */
    vec3 box2[2] = {{19.7f, -0.9f, -0.3f}, {20.3f, 0.9f, 0.3f}};
    assert_true(kcc_mesh_sweep_aabb(m, CB(box2), (vec3){-1000.0f, 0.0f, 0.0f}, &h));
    assert_float_equal(h.t, (19.7f - 10.01f) / 1000.0f, 1e-6f);
    assert_true(h.triangle >= 2);
    assert_float_equal(h.normal[0], 1.0f, 1e-6f);
    kcc_mesh_destroy(m);
}

static void sweep_touching_at_start_reports_t0_only_when_moving_into_the_surface(void **state)
{
    (void)state;
    float floor_tri[9] = {-5, 0, -5, 0, 0, 5, 5, 0, -5};
    soup s = {floor_tri, 1};
    kcc_mesh *m = build_soup(&s);
    vec3 box[2] = {{-0.5f, 0, -0.5f}, {0.5f, 1, 0.5f}}; /* resting exactly on the floor */
    kcc_sweep_hit h;
    assert_true(kcc_mesh_sweep_aabb(m, CB(box), (vec3){0.3f, -0.1f, 0}, &h));
    assert_float_equal(h.t, 0.0f, 0.0f);
    assert_float_equal(h.normal[1], 1.0f, 1e-7f);
    assert_false(h.start_overlap); /* touching, not penetrating */
    assert_false(kcc_mesh_sweep_aabb(m, CB(box), (vec3){1, 0, 0}, &h));   /* sliding along */
    assert_false(kcc_mesh_sweep_aabb(m, CB(box), (vec3){1, 0.5f, 0}, &h)); /* lifting off */
    /* Sunk 0.1 into the floor: start overlap, least penetration is up (0.1 < 1.9). */
    vec3 sunk[2] = {{-0.5f, -0.1f, -0.5f}, {0.5f, 0.9f, 0.5f}};
    assert_true(kcc_mesh_sweep_aabb(m, CB(sunk), (vec3){0, -0.1f, 0.2f}, &h));
    assert_float_equal(h.t, 0.0f, 0.0f);
    assert_true(h.start_overlap);
    assert_float_equal(h.normal[1], 1.0f, 1e-7f);
    assert_false(kcc_mesh_sweep_aabb(m, CB(sunk), (vec3){0, 0.1f, 0.2f}, &h)); /* moving out */
    assert_false(kcc_mesh_sweep_aabb(m, CB(sunk), (vec3){0, 0, 0}, &h));
    /* Along it, 1e-7 rad downward (the rounding of a direction in float): not deeper; 1e-5 rad is. */
    assert_false(kcc_mesh_sweep_aabb(m, CB(sunk), (vec3){1.0f, -1e-7f, 0}, &h));
    assert_true(kcc_mesh_sweep_aabb(m, CB(sunk), (vec3){1.0f, -1e-5f, 0}, &h));
    assert_true(h.start_overlap);
    kcc_mesh_destroy(m);
}

/* Checks a primitive sweep against the clipping reference: contact at t (grown box overlaps), no
 * robust overlap before it, and without a hit no robust overlap anywhere on [0, 1]. */
static void check_sweep_tri(const float *t, vec3 box[2], const vec3 delta)
{
    float tt;
    vec3 n;
    bool so;
    double dl = sqrt((double)delta[0] * delta[0] + (double)delta[1] * delta[1] + (double)delta[2] * delta[2]);
    double g = 2e-4;
    bool hit = kcc_tri_sweep_aabb(t, t + 3, t + 6, CB(box), delta, &tt, n, &so);
    double end = hit ? tt - 2.0 * g / dl : 1.0;
    for (int i = 0; i <= 64; ++i) {
        double s = end * i / 64.0;
        if (s >= 0.0)
            assert_false(ref_box_at(t, box, delta, s, -g));
    }
    if (!hit)
        return;
    assert_true(tt >= 0.0f && tt <= 1.0f);
    assert_false(so);
    assert_true(ref_box_at(t, box, delta, tt, g));
    assert_float_equal(n[0] * n[0] + n[1] * n[1] + n[2] * n[2], 1.0f, 1e-5f);
    assert_true(n[0] * delta[0] + n[1] * delta[1] + n[2] * delta[2] < 0.0f);
    /* The normal separates: the triangle lies behind the box's contact face along n. */
    double c[3] = {0.5 * (box[0][0] + box[1][0]) + tt * delta[0], 0.5 * (box[0][1] + box[1][1]) + tt * delta[1],
                   0.5 * (box[0][2] + box[1][2]) + tt * delta[2]};
    double r = 0.5 * ((box[1][0] - box[0][0]) * fabs(n[0]) + (box[1][1] - box[0][1]) * fabs(n[1]) +
                      (box[1][2] - box[0][2]) * fabs(n[2]));
    double boxmin = c[0] * n[0] + c[1] * n[1] + c[2] * n[2] - r;
    for (int v = 0; v < 3; ++v)
        assert_true(t[3 * v] * n[0] + t[3 * v + 1] * n[1] + t[3 * v + 2] * n[2] <= boxmin + 1e-3);
}

static void swept_triangle_test_matches_sampled_clipping_reference(void **state)
{
    (void)state;
    test_rng r = rng_seed(50);
    int hits = 0, tested = 0;
    for (int q = 0; q < 1500; ++q) {
        float t[9];
        for (int i = 0; i < 9; ++i)
            t[i] = rng_f(&r, -2.0f, 2.0f);
        if (ref_flatness(t) < 1e-6)
            continue;
        vec3 c = {rng_f(&r, -4, 4), rng_f(&r, -4, 4), rng_f(&r, -4, 4)};
        vec3 h = {rng_f(&r, 0.1f, 1), rng_f(&r, 0.1f, 1), rng_f(&r, 0.1f, 1)};
        vec3 box[2] = {{c[0] - h[0], c[1] - h[1], c[2] - h[2]}, {c[0] + h[0], c[1] + h[1], c[2] + h[2]}};
        if (ref_box_at(t, box, (vec3){0, 0, 0}, 0.0, 1e-3))
            continue; /* start overlaps are covered by the hand-made tests */
        vec3 d = {-c[0] + rng_f(&r, -2, 2), -c[1] + rng_f(&r, -2, 2), -c[2] + rng_f(&r, -2, 2)};
        if (q % 7 == 0)
            d[1] = 0.0f; /* a zero component */
        check_sweep_tri(t, box, d);
        float tt;
        vec3 n;
        bool so;
        hits += kcc_tri_sweep_aabb(t, t + 3, t + 6, CB(box), d, &tt, n, &so);
        ++tested;
    }
    assert_true(tested > 500);
    assert_true(hits > tested / 5); /* the sample exercises contacts, not only misses */
}

static void mesh_sweep_equals_the_earliest_triangle_sweep_on_random_soups(void **state)
{
    (void)state;
    soup s = soup_random(60, 2000, 30.0f, 2.0f);
    kcc_mesh *m = build_soup(&s);
    test_rng r = rng_seed(61);
    int hits = 0;
    for (int q = 0; q < 150; ++q) {
        vec3 c = {rng_f(&r, 0, 30), rng_f(&r, 0, 30), rng_f(&r, 0, 30)};
        vec3 h = {rng_f(&r, 0.1f, 1), rng_f(&r, 0.1f, 1), rng_f(&r, 0.1f, 1)};
        vec3 box[2] = {{c[0] - h[0], c[1] - h[1], c[2] - h[2]}, {c[0] + h[0], c[1] + h[1], c[2] + h[2]}};
        vec3 d = {rng_f(&r, -8, 8), rng_f(&r, -8, 8), rng_f(&r, -8, 8)};
        if (q % 5 == 0)
            d[0] = d[2] = 0.0f;
        kcc_sweep_hit sh, want;
        bool hit = kcc_mesh_sweep_aabb(m, CB(box), d, &sh);
        assert_int_equal(hit, brute_sweep(&s, box, d, &want));
        if (!hit)
            continue;
        ++hits;
        assert_true(sh.t == want.t);
        assert_int_equal(sh.triangle, want.triangle);
        assert_int_equal(sh.start_overlap, want.start_overlap);
        assert_memory_equal(sh.normal, want.normal, sizeof want.normal);
        if (!sh.start_overlap)
            check_sweep_tri(s.p + 9 * sh.triangle, box, d);
    }
    assert_true(hits > 20);
    kcc_mesh_destroy(m);
    free(s.p);
}

static void sweep_ties_go_to_the_lowest_triangle_index(void **state)
{
    (void)state;
    /* Six triangles; 2 and 5 are the same floor (5 wound the other way), the rest far away. */
    float pos[54];
    for (int i = 0; i < 6; ++i) {
        const float far_tri[9] = {50, 0, 50, 51, 0, 50, 50, 0, 51};
        for (int k = 0; k < 9; ++k)
            pos[9 * i + k] = far_tri[k] + (float)(10 * i) * (k % 3 == 0);
    }
    const float fl[9] = {-5, 0, -5, 0, 0, 5, 5, 0, -5}, fl_rev[9] = {-5, 0, -5, 5, 0, -5, 0, 0, 5};
    memcpy(pos + 18, fl, sizeof fl);
    memcpy(pos + 45, fl_rev, sizeof fl_rev);
    soup s = {pos, 6};
    kcc_mesh *m = build_soup(&s);
    kcc_sweep_hit h;
    /* Falling onto it: equal contact times. */
    assert_true(kcc_mesh_sweep_aabb(m, CB((vec3[2]){{-0.5f, 1, -0.5f}, {0.5f, 2, 0.5f}}), (vec3){0, -2, 0}, &h));
    assert_int_equal(h.triangle, 2);
    assert_float_equal(h.t, 0.5f, 1e-7f);
    /* Sunk into it: both start overlapping at t = 0. */
    assert_true(kcc_mesh_sweep_aabb(m, CB((vec3[2]){{-0.5f, -0.2f, -0.5f}, {0.5f, 0.8f, 0.5f}}), (vec3){0, -1, 0}, &h));
    assert_int_equal(h.triangle, 2);
    assert_true(h.start_overlap);
    kcc_mesh_destroy(m);
}

/* Contacts that tie in the sweep's own double arithmetic go to the lowest index whatever order the
 * walk meets them in (kcc_sweep_tie_limit): coplanar triangles of many shapes on the slope
 * y = x / 2 + z / 4 + 1 (every corner exact in float; each triangle's unnormalised normal scales
 * its contact fraction differently, so equal times come from different fractions), boxes dropped
 * onto it. The reference: every triangle through kcc_tri_sweep_internal up to t = 1, the least
 * time, ties to the lowest index. */
static void sweep_ties_in_double_go_to_the_lowest_index_on_a_tiled_slope(void **state)
{
    (void)state;
    enum { TRIS = 900 };
    float *pos = malloc(sizeof(float) * 9 * TRIS);
    test_rng r = rng_seed(97);
    for (uint32_t i = 0; i < TRIS;) {
        const int x0 = (int)(rng_u32(&r) % 40), z0 = (int)(rng_u32(&r) % 40);
        int c[3][2] = {{x0, z0}, {x0 + 1 + (int)(rng_u32(&r) % 5), z0}, {x0, z0 + 1 + (int)(rng_u32(&r) % 5)}};
        if (rng_u32(&r) % 2)
            c[1][1] += 1 + (int)(rng_u32(&r) % 3);
        for (int k = 0; k < 3; ++k) {
            const float x = 0.375f * (float)c[k][0], z = 0.375f * (float)c[k][1];
            const float corner[3] = {x, 0.5f * x + 0.25f * z + 1.0f, z};
            memcpy(pos + 9 * i + 3 * k, corner, sizeof corner);
        }
        ++i;
    }
    soup s = {pos, TRIS};
    kcc_mesh *m = build_soup(&s);
    uint32_t ties = 0;
    for (int q = 0; q < 400; ++q) {
        const vec3 c = {rng_f(&r, 2, 13), 0, rng_f(&r, 2, 13)};
        const vec3 h = {rng_f(&r, 0.2f, 0.6f), rng_f(&r, 0.5f, 1), rng_f(&r, 0.2f, 0.6f)};
        const float y = 0.5f * c[0] + 0.25f * c[2] + 1.0f + h[1] + rng_f(&r, 0.1f, 1.5f);
        vec3 box[2] = {{c[0] - h[0], y - h[1], c[2] - h[2]}, {c[0] + h[0], y + h[1], c[2] + h[2]}};
        const vec3 d = {rng_f(&r, -1, 1), -rng_f(&r, 1.6f, 4), rng_f(&r, -1, 1)};
        double center[3], half[3], delta[3] = {d[0], d[1], d[2]}, best = 2.0;
        kcc_box_center_half_d(box[0], box[1], center, half);
        uint32_t want = UINT32_MAX, equal = 0;
        for (uint32_t i = 0; i < TRIS; ++i) {
            double t, n[3];
            bool start;
            if (!kcc_tri_sweep_internal(pos + 9 * i, pos + 9 * i + 3, pos + 9 * i + 6, center, half, delta, 1.0,
                                        &t, n, &start))
                continue;
            equal = t == best ? equal + 1 : t < best ? 0 : equal;
            want = t < best ? i : want;
            best = t < best ? t : best;
        }
        ties += equal > 0;
        kcc_sweep_hit hit;
        assert_int_equal(kcc_mesh_sweep_aabb(m, CB(box), d, &hit), want != UINT32_MAX);
        if (want != UINT32_MAX)
            assert_int_equal(hit.triangle, want);
    }
    assert_true(ties > 100);   /* the drops land on several tied triangles */
    kcc_mesh_destroy(m);
    free(pos);
}

static void sweep_and_primitives_reject_invalid_arguments(void **state)
{
    (void)state;
    float tri[9] = {-5, 0, -5, 0, 0, 5, 5, 0, -5};
    soup s = {tri, 1};
    kcc_mesh *m = build_soup(&s);
    vec3 box[2] = {{-0.5f, 1, -0.5f}, {0.5f, 2, 0.5f}};
    kcc_sweep_hit h;
    memset(&h, 0x33, sizeof h);
    kcc_sweep_hit keep = h;
    assert_false(kcc_mesh_sweep_aabb(NULL, CB(box), (vec3){0, -4, 0}, &h));
    assert_false(kcc_mesh_sweep_aabb(m, NULL, (vec3){0, -4, 0}, &h));
    assert_false(kcc_mesh_sweep_aabb(m, CB(box), NULL, &h));
    assert_false(kcc_mesh_sweep_aabb(m, CB(box), (vec3){0, -4, 0}, NULL));
    assert_false(kcc_mesh_sweep_aabb(m, CB(box), (vec3){0, NAN, 0}, &h));
    assert_false(kcc_mesh_sweep_aabb(m, CB(box), (vec3){0, -INFINITY, 0}, &h));
    vec3 inv[2] = {{1, 1, 1}, {0, 0, 0}};
    assert_false(kcc_mesh_sweep_aabb(m, CB(inv), (vec3){0, -4, 0}, &h));
    assert_memory_equal(&h, &keep, sizeof h);
    float t;
    vec3 n;
    bool so;
    assert_false(kcc_tri_sweep_aabb(tri, tri + 3, tri + 6, CB(box), (vec3){NAN, -4, 0}, &t, n, &so));
    assert_false(kcc_tri_overlap_aabb(tri, tri + 3, tri + 6, CB(inv)));
    assert_false(kcc_tri_overlap_aabb(NULL, tri + 3, tri + 6, CB(box)));
    kcc_mesh_stats st;
    memset(&st, 0x77, sizeof st);
    kcc_mesh_get_stats(NULL, &st);
    assert_int_equal(st.triangles, 0x77777777u);
    kcc_mesh_destroy(m);
}

/* Two threads run the same queries on one mesh; each must get the single-threaded answers. */
typedef struct thread_job {
    const kcc_mesh *mesh;
    uint64_t        seed;
    uint64_t        digest;
} thread_job;

static uint64_t query_digest(const kcc_mesh *m, uint64_t seed)
{
    test_rng r = rng_seed(seed);
    uint64_t h = 1469598103934665603ull;
    for (int q = 0; q < 300; ++q) {
        vec3 o = {rng_f(&r, 0, 30), rng_f(&r, 0, 30), rng_f(&r, 0, 30)};
        vec3 d = {rng_f(&r, -1, 1), rng_f(&r, -1, 1), rng_f(&r, -1, 1)};
        kcc_ray_hit rh;
        memset(&rh, 0, sizeof rh);
        kcc_sweep_hit sh;
        memset(&sh, 0, sizeof sh);
        vec3 box[2] = {{o[0], o[1], o[2]}, {o[0] + 1, o[1] + 2, o[2] + 1}};
        uint32_t out[64];
        uint32_t vals[4] = {kcc_mesh_raycast(m, o, d, 20.0f, &rh),
                            kcc_mesh_overlap_aabb(m, CB(box), out, 64),
                            kcc_mesh_sweep_aabb(m, CB(box), d, &sh), 0};
        const unsigned char *parts[3] = {(const unsigned char *)&rh, (const unsigned char *)&sh,
                                         (const unsigned char *)vals};
        const size_t sizes[3] = {sizeof rh, sizeof sh, sizeof vals};
        for (int p = 0; p < 3; ++p)
            for (size_t i = 0; i < sizes[p]; ++i)
                h = (h ^ parts[p][i]) * 1099511628211ull;
    }
    return h;
}

static int thread_main(void *arg)
{
    thread_job *j = arg;
    j->digest = query_digest(j->mesh, j->seed);
    return 0;
}

static void queries_from_two_threads_match_single_threaded_answers(void **state)
{
    (void)state;
    soup s = soup_random(95, 3000, 30.0f, 2.0f);
    kcc_mesh *m = build_soup(&s);
    thread_job jobs[2] = {{m, 1, 0}, {m, 2, 0}};
    thrd_t th[2];
    for (int i = 0; i < 2; ++i)
        assert_int_equal(thrd_create(&th[i], thread_main, &jobs[i]), thrd_success);
    for (int i = 0; i < 2; ++i)
        assert_int_equal(thrd_join(th[i], NULL), thrd_success);
    assert_true(jobs[0].digest == query_digest(m, 1));
    assert_true(jobs[1].digest == query_digest(m, 2));
    kcc_mesh_destroy(m);
    free(s.p);
}

/* ------------------------------------------------------------------------------------------------
 * Shared levels */

static void queries_match_brute_force_on_the_shared_levels(void **state)
{
    (void)state;
    int used = 0;
    for (int l = 0; l < 5; ++l) {
        const char *path = kcc_test_shared_level(l);
        if (!path)
            continue;
        objmesh o;
        if (!load_obj(path, &o)) {
            obj_free(&o);
            continue;
        }
        ++used;
        kcc_mesh *m = build_indexed(o.pos, o.nv, o.idx, o.nt);
        float *tris = malloc(sizeof(float) * 9 * o.nt);
        for (uint32_t i = 0; i < o.nt; ++i)
            for (int c = 0; c < 3; ++c)
                memcpy(tris + 9 * i + 3 * c, o.pos + 3 * o.idx[3 * i + (uint32_t)c], 3 * sizeof(float));
        kcc_mesh_stats st;
        kcc_mesh_get_stats(m, &st);
        assert_true(st.tree_bytes <= 32u * (size_t)o.nt);
        vec3 b[2];
        kcc_mesh_bounds(m, b);
        test_rng r = rng_seed(70 + (uint64_t)l);
        uint8_t *mark = malloc(o.nt);
        uint32_t *buf = malloc(sizeof(uint32_t) * o.nt);
        for (int q = 0; q < 12; ++q) {
            vec3 p = {rng_f(&r, b[0][0], b[1][0]), rng_f(&r, b[0][1], b[1][1]), rng_f(&r, b[0][2], b[1][2])};
            /* Short downward ray, long random ray. */
            check_ray(m, tris, o.nt, p, (vec3){0, -1, 0}, 2.0f, 1e-3);
            vec3 d = {rng_f(&r, -1, 1), rng_f(&r, -1, 1), rng_f(&r, -1, 1)};
            check_ray(m, tris, o.nt, p, d, 20.0f, 1e-3);
            /* Player-sized box. */
            vec3 box[2] = {{p[0] - 0.47f, p[1] - 0.875f, p[2] - 0.47f}, {p[0] + 0.47f, p[1] + 0.875f, p[2] + 0.47f}};
            check_overlap(m, tris, o.nt, box, 1e-4, mark, buf, o.nt);
        }
        free(mark);
        free(buf);
        free(tris);
        kcc_mesh_destroy(m);
        obj_free(&o);
    }
    (void)used; /* the test passes without the levels too */
}

/* Every answer of the public queries to n random queries over m (rays, exact box overlaps,
 * bounds overlaps, box sweeps from points in b, the mesh's bounds) folded into one digest, whole
 * records and lists; *hits counts the queries that found anything. */
static uint64_t public_query_digest(const kcc_mesh *m, const vec3 b[2], uint64_t seed, int n, int *hits)
{
    test_rng r = rng_seed(seed);
    uint64_t h = 1469598103934665603ull;
    uint32_t found[512];
    for (int q = 0; q < n; ++q) {
        vec3 o = {rng_f(&r, b[0][0], b[1][0]), rng_f(&r, b[0][1], b[1][1]), rng_f(&r, b[0][2], b[1][2])};
        vec3 d = {rng_f(&r, -1, 1), rng_f(&r, -1, 1), rng_f(&r, -1, 1)};
        const float e = rng_f(&r, 0.2f, 2.0f);
        vec3 box[2] = {{o[0] - e, o[1] - 2 * e, o[2] - e}, {o[0] + e, o[1] + e, o[2] + e}};
        kcc_ray_hit rh;
        kcc_sweep_hit sh;
        memset(&rh, 0, sizeof rh);
        memset(&sh, 0, sizeof sh);
        const uint32_t counts[4] = {kcc_mesh_raycast(m, o, d, 40.0f, &rh), kcc_mesh_sweep_aabb(m, CB(box), d, &sh),
                                    kcc_mesh_overlap_aabb(m, CB(box), found, 256),
                                    kcc_mesh_query_bounds(m, CB(box), found + 256, 256)};
        *hits += counts[0] + counts[1] + (counts[2] > 0) + (counts[3] > 0);
        const unsigned char *parts[4] = {(const unsigned char *)&rh, (const unsigned char *)&sh,
                                         (const unsigned char *)counts, (const unsigned char *)found};
        const size_t sizes[4] = {sizeof rh, sizeof sh, sizeof counts,
                                 sizeof(uint32_t) * (counts[2] < 256 ? counts[2] : 256)};
        for (int p = 0; p < 4; ++p)
            for (size_t i = 0; i < sizes[p]; ++i)
                h = (h ^ parts[p][i]) * 1099511628211ull;
        for (uint32_t i = 0; i < (counts[3] < 256 ? counts[3] : 256); ++i)
            h = (h ^ found[256 + i]) * 1099511628211ull;
    }
    return h;
}

/* The public queries (kcc_mesh_raycast, kcc_mesh_overlap_aabb, kcc_mesh_query_bounds,
 * kcc_mesh_sweep_aabb) run the AVX2 build where the move does (KCC_ISA_DISPATCH): the same code for
 * wider registers, whose answers must be the baseline's bit for bit, on a random soup, a shared
 * level when present and a heightfield. Skipped where the library has no AVX2 build or the CPU no
 * AVX2. */
static void the_avx2_build_answers_queries_exactly_like_the_baseline(void **state)
{
    (void)state;
    const bool was_avx2 = kcc_isa_avx2();
    if (!kcc_isa_force_avx2(true)) {
        skip();
        return;
    }
    soup s = soup_random(96, 3000, 30.0f, 2.0f);
    objmesh o;
    memset(&o, 0, sizeof o);
    const char *path = kcc_test_shared_level(1);
    const bool level = path && load_obj(path, &o);
    float heights[33 * 33];
    for (int i = 0; i < 33 * 33; ++i)
        heights[i] = 2.0f * sinf(0.37f * (float)(i % 33)) * cosf(0.23f * (float)(i / 33));
    kcc_heightfield_desc hd;
    memset(&hd, 0, sizeof hd);
    hd.heights = heights;
    hd.columns = hd.rows = 33;
    hd.spacing[0] = hd.spacing[1] = 0.75f;
    kcc_mesh *meshes[3] = {build_soup(&s), level ? build_indexed(o.pos, o.nv, o.idx, o.nt) : NULL, NULL};
    assert_int_equal(kcc_heightfield_build(&hd, &meshes[2]), KCC_OK);
    for (int i = 0; i < 3; ++i) {
        if (!meshes[i])
            continue;
        vec3 b[2];
        kcc_mesh_bounds(meshes[i], b);
        int hits[2] = {0, 0};
        assert_true(kcc_isa_force_avx2(true));
        const uint64_t avx2 = public_query_digest(meshes[i], CB(b), 40 + (uint64_t)i, 400, &hits[0]);
        assert_true(kcc_isa_force_avx2(false));
        const uint64_t baseline = public_query_digest(meshes[i], CB(b), 40 + (uint64_t)i, 400, &hits[1]);
        assert_true(avx2 == baseline);
        assert_int_equal(hits[0], hits[1]);
        assert_true(hits[0] > 400); /* the queries met triangles: the comparison covered answers */
        kcc_mesh_destroy(meshes[i]);
    }
    obj_free(&o);
    free(s.p);
    assert_true(kcc_isa_force_avx2(was_avx2));
}

/* ------------------------------------------------------------------------------------------------
 * kcc_mesh_validate */

static void validate_level(kcc_level *lv)
{
    kcc_mesh *m = NULL;
    assert_int_equal(kcc_level_build_mesh(lv, &m), KCC_OK);
    assert_int_equal(kcc_mesh_validate(m), KCC_OK);
    kcc_mesh_destroy(m);
    kcc_level_free(lv);
}

static void validator_accepts_every_generated_and_shared_level_and_random_soups(void **state)
{
    (void)state;
    const char *specs[] = {"arena seed=1", "arena seed=9 size=96", "terrain seed=7", "showcase",
                           "flat size=8"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; ++i) {
        kcc_level lv;
        char err[128];
        assert_int_equal(kcc_level_generate(specs[i], &lv, err, sizeof err), KCC_OK);
        validate_level(&lv);
    }
    for (int l = 0; l < 5; ++l) {
        const char *path = kcc_test_shared_level(l);
        kcc_level lv;
        if (path && kcc_level_load_obj(path, &lv, NULL, 0) == KCC_OK)
            validate_level(&lv);
    }
    const uint32_t sizes[] = {1, 4, 5, 9, 1000, 30000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
        soup s = soup_random(80 + i, sizes[i], 50.0f, 1.0f);
        kcc_mesh *m = build_soup(&s);
        assert_int_equal(kcc_mesh_validate(m), KCC_OK);
        kcc_mesh_destroy(m);
        free(s.p);
    }
    assert_int_equal(kcc_mesh_validate(NULL), KCC_ERR_NULL_ARGUMENT);
}

/* The slot of input t by a scan of the stored maps (the reference for kcc_mesh_slot_of): the slot
 * whose tri_id is t, or the tree slot whose duplicate list holds t. */
static uint32_t slot_by_scan(const kcc_mesh *m, uint32_t t)
{
    for (uint32_t s = 0; s < m->slot_count; ++s)
        if (kcc_mesh_tri_id(m, s) == t)
            return s;
    for (uint32_t s = 0; s < m->tree_triangles; ++s) {
        uint32_t begin;
        const uint32_t listed = kcc_mesh_duplicates(m, s, &begin);
        for (uint32_t i = begin; i < begin + listed; ++i)
            if (kcc_mesh_dup_id(m, i) == t)
                return s;
    }
    return UINT32_MAX;
}

/* kcc_mesh_slot_of walks the back links (no input -> slot map is stored): on random soups (long
 * cycles, links), duplicate sets (the lists' slots), cells in input order (short cycles, few links)
 * and degenerate triangles among live ones, every input's slot is the one a scan of tri_id and the
 * duplicate lists finds, and its corners are the input's. */
static void slot_of_every_input_matches_a_scan_of_the_index_maps(void **state)
{
    (void)state;
    uint32_t distinct = 0;
    soup soups[4] = {soup_random(93, 2000, 30.0f, 1.0f), soup_with_duplicates(94, 1500, &distinct),
                     soup_cells_with_a_copy(1500), soup_random(95, 700, 10.0f, 1.0f)};
    for (uint32_t i = 0; i < 700; i += 7) /* every seventh a point: degenerate */
        for (int v = 1; v < 3; ++v)
            memcpy(soups[3].p + 9 * i + 3 * v, soups[3].p + 9 * i, 3 * sizeof(float));
    uint32_t linked = 0;
    for (int k = 0; k < 4; ++k) {
        kcc_mesh *m = build_soup(&soups[k]);
        assert_int_equal(kcc_mesh_validate(m), KCC_OK);
        linked += m->link_count;
        for (uint32_t t = 0; t < soups[k].n; ++t) {
            const uint32_t s = kcc_mesh_slot_of(m, t);
            assert_int_equal(s, slot_by_scan(m, t));
            kcc_tri tri;
            kcc_mesh_tri(m, s, &tri);
            assert_memory_equal(tri.v, soups[k].p + 9 * (size_t)t, sizeof tri.v);
        }
        kcc_mesh_destroy(m);
        free(soups[k].p);
    }
    assert_true(linked > 0);
}

/* Index array a of mesh m, moved into block, a copy of m's block. */
static kcc_index_array index_array_copy(const kcc_mesh *m, kcc_index_array a, char *block)
{
    const char *from = m->narrow_ids ? (const char *)a.narrow : (const char *)a.wide;
    char *to = block + (from - (const char *)m);
    kcc_index_array out;
    if (m->narrow_ids)
        out.narrow = (uint16_t *)(void *)to;
    else
        out.wide = (uint32_t *)(void *)to;
    return out;
}

/* A private copy of a mesh's block with its pointers moved into the copy (free with free()). */
static kcc_mesh *mesh_copy(const kcc_mesh *m)
{
    const size_t bytes = kcc_mesh_memory_bytes(m);
    char *block = aligned_alloc(64, (bytes + 63) / 64 * 64);
    assert_non_null(block);
    memcpy(block, m, bytes);
    kcc_mesh *c = (kcc_mesh *)(void *)block;
    const char *base = (const char *)m;
    c->top = (kcc_box4 *)(void *)(block + ((const char *)m->top - base));
    c->groups = (kcc_qnode4 *)(void *)(block + ((const char *)m->groups - base));
    if (m->tables) {
        kcc_vertex_tables *t = (kcc_vertex_tables *)(void *)(block + ((const char *)m->tables - base));
        t->codes = (uint8_t *)block + (m->tables->codes - (const uint8_t *)base);
        for (int k = 0; k < 3; ++k)
            t->values[k] = (float *)(void *)(block + ((const char *)m->tables->values[k] - base));
        c->tables = t;
    } else {
        c->verts = (float(*)[3])(void *)(block + ((const char *)m->verts - base));
    }
    c->corner_base = (uint32_t *)(void *)(block + ((const char *)m->corner_base - base));
    c->corners = (uint8_t(*)[3])(void *)(block + ((const char *)m->corners - base));
    c->tri_id = index_array_copy(m, m->tri_id, block);
    c->link_marks = (uint64_t *)(void *)(block + ((const char *)m->link_marks - base));
    c->link_rank = (uint32_t *)(void *)(block + ((const char *)m->link_rank - base));
    c->links = index_array_copy(m, m->links, block);
    if (m->duplicate_count > 0) {
        c->dup_marks = (uint64_t *)(void *)(block + ((const char *)m->dup_marks - base));
        c->dup_rank = (uint32_t *)(void *)(block + ((const char *)m->dup_rank - base));
        c->dup_first = index_array_copy(m, m->dup_first, block);
        c->dup_ids = index_array_copy(m, m->dup_ids, block);
    }
    return c;
}

/* The first slot (group, slot) holding a leaf (want_leaf) or an inner node, scanning groups from
 * `from`. */
static void find_slot(const kcc_mesh *m, uint32_t from, bool want_leaf, uint32_t *group, int *slot)
{
    for (uint32_t q = from; q < m->quad_count; ++q)
        for (int i = 0; i < 4; ++i)
            if ((m->groups[q].slots >> i & 1) && (m->groups[q].count[i] != 0) == want_leaf) {
                *group = q;
                *slot = i;
                return;
            }
    fail_msg("no such slot");
}

enum { CORRUPTIONS = 13 };

/* A corner offset of a copy naming a vertex past the stored ones. Only a block whose base lies
 * within 255 of the vertex count has such an offset: on a large mesh each block's base is as low
 * as its new vertices allow, so the last block's highest offset names the last vertex; a mesh of
 * fewer than 256 vertices counts every block from vertex 0. */
static void corrupt_offset(kcc_mesh *c, int which)
{
    (void)which;
    for (uint32_t s = c->slot_count; s-- > 0;)
        if (c->corner_base[s / KCC_CORNER_BLOCK] + 255u >= c->vertex_count) {
            c->corners[s][2] = 255;
            return;
        }
    fail_msg("no offset can reach past the vertices");
}

/* Corruption number `which` of a copy: each breaks one invariant the queries rely on. */
static void corrupt(kcc_mesh *c, int which)
{
    uint32_t q = 0, last = c->tree_triangles - 1;
    int i = 0;
    switch (which) {
    case 0: /* a child box no longer holds its contents */
        find_slot(c, 0, false, &q, &i);
        c->groups[q].q[0][1][i] = c->groups[q].q[0][0][i];
        break;
    case 1: /* a leaf box no longer holds its triangles */
        find_slot(c, 0, true, &q, &i);
        c->groups[q].q[1][0][i] = c->groups[q].q[1][1][i];
        break;
    case 2: /* a leaf claims one more triangle: two leaves share it */
        find_slot(c, 0, true, &q, &i);
        c->groups[q].count[i] += 1;
        break;
    case 3: /* a leaf loses a triangle: it is in no leaf */
        find_slot(c, 0, true, &q, &i);
        c->groups[q].count[i] -= 1;
        break;
    case 4: /* the index maps disagree */
        kcc_index_set(c, c->tri_id, 0, kcc_mesh_tri_id(c, last));
        break;
    case 5: /* a live triangle turned degenerate */
        c->corners[last][1] = c->corners[last][0];
        c->corners[last][2] = c->corners[last][0];
        break;
    case 6: /* an inner slot points back up the tree (a cycle) */
        find_slot(c, 1, false, &q, &i);
        c->groups[q].first[i] = q;
        break;
    case 7: /* an empty slot holds triangles */
        for (q = 0; q < c->quad_count && i == 0; ++q)
            for (int k = 0; k < 4 && i == 0; ++k)
                if (!(c->groups[q].slots >> k & 1)) {
                    c->groups[q].count[k] = 1;
                    i = 1;
                }
        assert_int_equal(i, 1);
        break;
    case 8: /* a corner names a vertex past the stored ones */
        c->corner_base[last / KCC_CORNER_BLOCK] = c->vertex_count;
        break;
    case 9: /* the index width disagrees with the triangle count */
        c->narrow_ids = !c->narrow_ids;
        break;
    case 10: /* the root group's float copy, which the walks test, disagrees with the root group */
        c->root.y[1][0] = nextafterf(c->root.y[1][0], -INFINITY);
        break;
    case 11: /* a top group's float boxes, which the walks test, disagree with the group */
        c->top[kcc_mesh_top_count(c->quad_count) - 1u].z[0][0] += 1.0f;
        break;
    default: /* a triangle moved out of its leaf */
        c->verts[c->corner_base[last / KCC_CORNER_BLOCK] + c->corners[last][0]][0] += 1000.0f;
        break;
    }
}

enum { DUP_CORRUPTIONS = 7 };

/* Corruption number `which` of the duplicate lists of a copy. */
static void corrupt_duplicates(kcc_mesh *c, int which)
{
    uint32_t s = 0, at = 0, rank = 0, none = 0, unused = 0;
    while (kcc_mesh_duplicates(c, s, &at) < 2) /* a slot with two listed copies */
        ++s;
    while (kcc_index_at(c, c->dup_first, rank) != at) /* its list's number */
        ++rank;
    while (kcc_mesh_duplicates(c, none, &unused) > 0) /* a slot without copies */
        ++none;
    const uint32_t first_copy = kcc_mesh_dup_id(c, at), second_copy = kcc_mesh_dup_id(c, at + 1);
    switch (which) {
    case 0: /* a listed copy names its representative: listed twice over */
        kcc_index_set(c, c->dup_ids, at, kcc_mesh_tri_id(c, s));
        break;
    case 1: /* two listed copies swap places: the list is no longer ascending */
        kcc_index_set(c, c->dup_ids, at, second_copy);
        kcc_index_set(c, c->dup_ids, at + 1, first_copy);
        break;
    case 2: /* a slot names a listed copy: the copy is stored twice, the slot's own input nowhere */
        kcc_index_set(c, c->tri_id, none, first_copy);
        break;
    case 3: /* a list's end moves into the next one */
        kcc_index_set(c, c->dup_first, rank + 1, kcc_index_at(c, c->dup_first, rank + 1) + 1);
        break;
    case 4: /* the slot's mark is cleared: its copies are listed beside no slot */
        c->dup_marks[s / 64] &= ~(UINT64_C(1) << (s % 64));
        break;
    case 5: /* a slot without copies is marked */
        c->dup_marks[none / 64] |= UINT64_C(1) << (none % 64);
        break;
    default: /* the copies' count disagrees with the lists */
        c->duplicate_count -= 1;
        break;
    }
}

/* A sound copy of m validates; each of `count` corruptions of a fresh copy is caught. */
static void expect_each_corruption_caught(const kcc_mesh *m, int count, void (*corrupt_copy)(kcc_mesh *, int))
{
    kcc_mesh *c = mesh_copy(m);
    assert_int_equal(kcc_mesh_validate(c), KCC_OK); /* the copy itself is sound */
    free(c);
    for (int which = 0; which < count; ++which) {
        c = mesh_copy(m);
        corrupt_copy(c, which);
        if (kcc_mesh_validate(c) != KCC_ERR_CORRUPT)
            fail_msg("corruption %d not caught", which);
        free(c);
    }
}

static void validator_catches_each_corruption_of_the_duplicate_lists(void **state)
{
    (void)state;
    uint32_t distinct = 0;
    soup s = soup_with_duplicates(92, 300, &distinct);
    kcc_mesh *m = build_soup(&s);
    expect_each_corruption_caught(m, DUP_CORRUPTIONS, corrupt_duplicates);
    kcc_mesh_destroy(m);
    free(s.p);
}

enum { GROUP_CORRUPTIONS = 8 };

/* Corruption number `which` of a copy's quantised groups (kcc_qnode4): each a status, never a
 * crash or a box no test can trust. */
static void corrupt_group(kcc_mesh *c, int which)
{
    uint32_t q = 0;
    int i = 0;
    find_slot(c, 0, false, &q, &i);
    kcc_qnode4 *g = &c->groups[q];
    switch (which) {
    case 0: /* a step of exponent 0 (a zero step: every box a point) */
        g->exp[1] = 0;
        break;
    case 1: /* a step of exponent 255 (infinite or NaN bounds) */
        g->exp[2] = 255;
        break;
    case 2: /* a base that is not a number */
        g->base[0] = NAN;
        break;
    case 7: /* a step of exponent 254, out of the range whose inverse the box test builds */
        g->exp[0] = 254;
        break;
    case 3: /* a child's quantised lo above its hi */
        g->q[1][0][i] = 200, g->q[1][1][i] = 100;
        break;
    case 4: /* a hole in the slots: slot 0 empty, the others live */
        g->slots = 14;
        break;
    case 5: /* an inner child naming a group past the last */
        g->first[i] = c->quad_count;
        break;
    default: /* the padding set */
        g->pad = 1;
        break;
    }
}

enum { LINK_CORRUPTIONS = 6 };

/* The first position of c carrying a back link. */
static uint32_t first_link(const kcc_mesh *c)
{
    for (uint32_t p = 0; p < c->triangle_count; ++p)
        if (c->link_marks[p / 64] >> (p % 64) & 1)
            return p;
    fail_msg("no back link");
    return 0;
}

/* Corruption number `which` of a copy's back links (kcc_mesh_slot_of): each a status, never a
 * crash or a wrong slot. */
static void corrupt_links(kcc_mesh *c, int which)
{
    const uint32_t p = first_link(c), n = c->triangle_count;
    switch (which) {
    case 0: /* a link past the last position */
        kcc_index_set(c, c->links, 0, n);
        break;
    case 1: /* a link to another position */
        kcc_index_set(c, c->links, 0, (kcc_index_at(c, c->links, 0) + 1u) % n);
        break;
    case 2: /* a mark cleared: the ranks no longer count the marks */
        c->link_marks[p / 64] &= ~(UINT64_C(1) << (p % 64));
        break;
    case 3: /* a mark moved to the next position: the ranks agree, the walks do not */
        c->link_marks[p / 64] &= ~(UINT64_C(1) << (p % 64));
        c->link_marks[(p + 1) / 64] |= UINT64_C(1) << ((p + 1) % 64);
        break;
    case 4: /* the last rank one too high */
        c->link_rank[kcc_rank_count((n + 63) / 64) - 1] += 1;
        break;
    default: /* a slot names an input past the last */
        kcc_index_set(c, c->tri_id, 0, n);
        break;
    }
}

static void validator_catches_each_corruption_of_a_copied_tree(void **state)
{
    (void)state;
    soup s = soup_random(91, 3000, 40.0f, 1.0f);
    kcc_mesh *m = build_soup(&s);
    expect_each_corruption_caught(m, CORRUPTIONS, corrupt);
    expect_each_corruption_caught(m, GROUP_CORRUPTIONS, corrupt_group);
    expect_each_corruption_caught(m, LINK_CORRUPTIONS, corrupt_links);
    soup small = soup_random(96, 60, 10.0f, 1.0f); /* 180 corners: every base is vertex 0 */
    kcc_mesh *few = build_soup(&small);
    expect_each_corruption_caught(few, 1, corrupt_offset);
    kcc_mesh_destroy(few);
    free(small.p);
    kcc_mesh_destroy(m);
    free(s.p);
}

/* A box and a sweep near FLT_MAX: the walk's grown, swept bounds overflow float, so the sweep
 * answers by testing every triangle (it crashed walking the tree, whose empty slots the infinite
 * slab distances entered). The hand-computed answer: the box's bottom at 2e38 meets the floor at
 * y = 0 after 2e38 of the 3e38 drop, t = 2/3 (the floor at y = -5 is met later). */
static void sweep_near_float_max_answers_without_walking_the_tree(void **state)
{
    (void)state;
    const float tris[18] = {-10, 0, -10, 0, 0, 10, 10, 0, -10, -10, -5, -10, 0, -5, 10, 10, -5, -10};
    kcc_mesh *m = build_indexed(tris, 6, NULL, 2);
    const vec3 box[2] = {{-1, 2e38f, -1}, {1, 3.3e38f, 1}};
    kcc_sweep_hit h;
    assert_true(kcc_mesh_sweep_aabb(m, box, (vec3){0, -3e38f, 0}, &h));
    assert_int_equal(h.triangle, 0);
    assert_true(fabsf(h.t - 2.0f / 3.0f) < 1e-6f);
    assert_true(h.normal[1] > 0.99f);
    const vec3 far[2] = {{-1, 3e38f, -1}, {1, 3.4e38f, 1}}; /* never reaches y = 0 */
    assert_false(kcc_mesh_sweep_aabb(m, far, (vec3){0, -1e38f, 0}, &h));
    kcc_mesh_destroy(m);
}

/* ------------------------------------------------------------------------------------------------
 * Vertex tables (kcc_vertex_coding): the same answers as float vertices, bit for bit. */

/* Coordinates a soup draws its corners from: +0 and -0, denormals, tiny, ordinary and huge values,
 * few enough that corners repeat (the tables then hold a few values an axis). */
static const float palette[] = {0.0f,  -0.0f,   1e-40f, -3e-42f, 1e-20f, 0.5f,  -0.5f, 1.0f,
                                2.75f, -7.25f,  13.0f,  1e6f,    -1e6f,  1e30f, -3e38f};
enum { PALETTE = sizeof palette / sizeof palette[0] };

/* n triangles whose corners sit on a lattice of palette values, near one another or far apart. */
static soup soup_on_palette(uint64_t seed, uint32_t n)
{
    test_rng r = rng_seed(seed);
    soup s = {malloc(sizeof(float) * 9 * n), n};
    assert_non_null(s.p);
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t at[3];
        for (int k = 0; k < 3; ++k)
            at[k] = rng_u32(&r) % PALETTE;
        for (int v = 0; v < 3; ++v)
            for (int k = 0; k < 3; ++k) /* a corner next to the first on the lattice, or anywhere */
                s.p[9 * i + 3 * v + k] = palette[rng_u32(&r) % 4 == 0 ? rng_u32(&r) % PALETTE
                                                                       : (at[k] + (uint32_t)v) % PALETTE];
    }
    return s;
}

static kcc_mesh *build_coded(const float *pos, uint32_t nv, const uint32_t *idx, uint32_t nt,
                             kcc_vertex_coding coding)
{
    kcc_mesh_desc d;
    memset(&d, 0, sizeof d);
    d.positions = pos, d.vertex_count = nv, d.indices = idx, d.triangle_count = nt;
    d.vertex_coding = coding;
    kcc_mesh *m = NULL;
    assert_int_equal(kcc_mesh_build(&d, &m), KCC_OK);
    return m;
}

static kcc_vertex_coding coding_of(const kcc_mesh *m)
{
    kcc_mesh_stats st;
    kcc_mesh_get_stats(m, &st);
    return st.vertex_coding;
}

/* A point of the mesh's bounds, or a palette value, per axis. */
static void query_point(test_rng *r, const vec3 b[2], float out[3])
{
    for (int k = 0; k < 3; ++k)
        out[k] = rng_u32(r) % 3 == 0 ? palette[rng_u32(r) % PALETTE] : rng_f(r, b[0][k], b[1][k]);
}

/* Every kind of query answers alike on meshes a and b (records compared byte for byte, lists in
 * their order), `count` of each from a fixed seed. */
static void expect_same_answers(const kcc_mesh *a, const kcc_mesh *b, uint64_t seed, int count)
{
    test_rng r = rng_seed(seed);
    vec3 bounds[2];
    kcc_mesh_bounds(a, bounds);
    uint32_t la[256], lb[256];
    for (int i = 0; i < count; ++i) {
        float o[3], t[3], e = rng_f(&r, 0.01f, 4.0f);
        query_point(&r, CB(bounds), o);
        query_point(&r, CB(bounds), t);
        const vec3 dir = {t[0] - o[0] + 0.25f, t[1] - o[1], t[2] - o[2]};
        kcc_ray_hit ha, hb;
        memset(&ha, 0, sizeof ha), memset(&hb, 0, sizeof hb);
        assert_int_equal(kcc_mesh_raycast(a, o, dir, INFINITY, &ha),
                         kcc_mesh_raycast(b, o, dir, INFINITY, &hb));
        assert_memory_equal(&ha, &hb, sizeof ha);
        const vec3 box[2] = {{o[0] - e, o[1] - e, o[2] - e}, {o[0] + e, o[1] + e, o[2] + e}};
        const uint32_t na = kcc_mesh_overlap_aabb(a, CB(box), la, 256);
        assert_int_equal(na, kcc_mesh_overlap_aabb(b, CB(box), lb, 256));
        assert_memory_equal(la, lb, sizeof la[0] * (na < 256 ? na : 256));
        const uint32_t nq = kcc_mesh_query_bounds(a, CB(box), la, 256);
        assert_int_equal(nq, kcc_mesh_query_bounds(b, CB(box), lb, 256));
        assert_memory_equal(la, lb, sizeof la[0] * (nq < 256 ? nq : 256));
        const uint32_t ns = kcc_mesh_overlap_sphere(a, o, e, la, 256);
        assert_int_equal(ns, kcc_mesh_overlap_sphere(b, o, e, lb, 256));
        assert_memory_equal(la, lb, sizeof la[0] * (ns < 256 ? ns : 256));
        kcc_sweep_hit sa, sb;
        memset(&sa, 0, sizeof sa), memset(&sb, 0, sizeof sb);
        assert_int_equal(kcc_mesh_sweep_aabb(a, CB(box), dir, &sa),
                         kcc_mesh_sweep_aabb(b, CB(box), dir, &sb));
        assert_memory_equal(&sa, &sb, sizeof sa);
        kcc_sphere_hit pa, pb;
        memset(&pa, 0, sizeof pa), memset(&pb, 0, sizeof pb);
        assert_int_equal(kcc_mesh_sweep_sphere(a, o, e, dir, &pa),
                         kcc_mesh_sweep_sphere(b, o, e, dir, &pb));
        assert_memory_equal(&pa, &pb, sizeof pa);
        memset(&pa, 0, sizeof pa), memset(&pb, 0, sizeof pb);
        assert_int_equal(kcc_mesh_sweep_capsule(a, o, t, e, dir, &pa),
                         kcc_mesh_sweep_capsule(b, o, t, e, dir, &pb));
        assert_memory_equal(&pa, &pb, sizeof pa);
    }
}

/* Every input triangle of the mesh reads back as the input's floats, bit for bit. */
static void expect_input_corners(const kcc_mesh *m, const soup *s)
{
    for (uint32_t i = 0; i < s->n; ++i) {
        vec3 c[3];
        assert_true(kcc_mesh_triangle(m, i, c));
        assert_memory_equal(c, &s->p[9 * i], sizeof c);
    }
}

/* A mesh forced to vertex tables answers rays, box overlaps and bounds, sphere overlaps and
 * sweeps of boxes, spheres and capsules exactly as the same mesh with float vertices, on soups of
 * +0 and -0, denormal, tiny and huge coordinates; its triangles read back bit for bit. */
static void vertex_tables_answer_every_query_as_float_vertices(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 4; ++seed) {
        soup s = soup_on_palette(seed, 300u * (uint32_t)seed);
        kcc_mesh *f = build_coded(s.p, 3 * s.n, NULL, s.n, KCC_VERTEX_FLOATS);
        kcc_mesh *t = build_coded(s.p, 3 * s.n, NULL, s.n, KCC_VERTEX_TABLES);
        assert_int_equal(coding_of(f), KCC_VERTEX_FLOATS);
        assert_int_equal(coding_of(t), KCC_VERTEX_TABLES);
        assert_int_equal(kcc_mesh_validate(t), KCC_OK);
        expect_input_corners(t, &s);
        expect_same_answers(f, t, seed, 400);
        kcc_mesh_destroy(f);
        kcc_mesh_destroy(t);
        free(s.p);
    }
}

/* Moves of a character on a mesh with vertex tables are its moves on the same mesh with float
 * vertices, bit for bit (a shared level, or a generated one without the shared levels). */
static void moves_on_vertex_tables_are_the_moves_on_float_vertices(void **state)
{
    (void)state;
    const char *path = kcc_test_shared_level(1);
    kcc_level lv;
    char err[256];
    if (!path || kcc_level_load_obj(path, &lv, err, sizeof err) != KCC_OK)
        assert_int_equal(kcc_level_generate("arena seed=3", &lv, err, sizeof err), KCC_OK);
    const uint32_t nv = lv.vertex_count, nt = lv.triangle_count;
    kcc_mesh *f = build_coded(lv.positions, nv, lv.indices, nt, KCC_VERTEX_FLOATS);
    kcc_mesh *t = build_coded(lv.positions, nv, lv.indices, nt, KCC_VERTEX_TABLES);
    assert_int_equal(coding_of(t), KCC_VERTEX_TABLES);
    kcc_character_desc cd = kcc_character_default_desc();
    test_rng r = rng_seed(77);
    for (uint32_t c = 0; c < 8 && c < (lv.spawn_count ? lv.spawn_count : 1u); ++c) {
        kcc_character ca, cb;
        const float *at = lv.spawn_count ? &lv.spawns[3 * c] : lv.positions;
        const vec3 start = {at[0], at[1] + 0.95f, at[2]};
        assert_int_equal(kcc_character_init(&ca, &cd, start), KCC_OK);
        assert_int_equal(kcc_character_init(&cb, &cd, start), KCC_OK);
        for (int i = 0; i < 120; ++i) {
            const vec3 d = {rng_f(&r, -0.2f, 0.2f), i % 30 == 0 ? 0.3f : -0.1f, rng_f(&r, -0.2f, 0.2f)};
            kcc_move_result ra, rb;
            kcc_character_move(&ca, f, d, &ra);
            kcc_character_move(&cb, t, d, &rb);
            assert_int_equal(ra.flags, rb.flags);
            assert_memory_equal(ca.position, cb.position, sizeof ca.position);
        }
    }
    expect_same_answers(f, t, 5, 200);
    kcc_mesh_destroy(f);
    kcc_mesh_destroy(t);
    kcc_level_free(&lv);
}

/* A strip of n triangles (i, 0, 0), (i + 0.5, 1, 0), (i, 0, 1): 2 n distinct x values, 2 of y and
 * of z. */
static soup soup_strip(uint32_t n)
{
    soup s = {malloc(sizeof(float) * 9 * n), n};
    assert_non_null(s.p);
    for (uint32_t i = 0; i < n; ++i) {
        const float x = (float)i, t[9] = {x, 0, 0, x + 0.5f, 1, 0, x, 0, 1};
        memcpy(&s.p[9 * i], t, sizeof t);
    }
    return s;
}

/* Tables index each axis in 16 bits: 65,536 distinct x values take tables (x's index 16 bits, y's
 * and z's one each: 3-byte codes), 65,538 fall back to float vertices, whatever the desc asks. */
static void vertex_tables_fall_back_to_floats_above_65536_values_an_axis(void **state)
{
    (void)state;
    soup s = soup_strip(32768);
    kcc_mesh *t = build_coded(s.p, 3 * s.n, NULL, s.n, KCC_VERTEX_TABLES);
    kcc_mesh_stats st;
    kcc_mesh_get_stats(t, &st);
    assert_int_equal(st.vertex_coding, KCC_VERTEX_TABLES);
    assert_int_equal(st.axis_values[0], 65536);
    assert_int_equal(st.axis_values[1], 2);
    assert_int_equal(st.axis_values[2], 2);
    assert_int_equal(t->tables->code_bytes, 3);
    assert_int_equal(kcc_mesh_validate(t), KCC_OK);
    expect_input_corners(t, &s);
    kcc_mesh *f = build_coded(s.p, 3 * s.n, NULL, s.n, KCC_VERTEX_FLOATS);
    expect_same_answers(f, t, 9, 100);
    kcc_mesh_destroy(f);
    kcc_mesh_destroy(t);
    free(s.p);
    s = soup_strip(32769);
    t = build_coded(s.p, 3 * s.n, NULL, s.n, KCC_VERTEX_TABLES);
    kcc_mesh_get_stats(t, &st);
    assert_int_equal(st.vertex_coding, KCC_VERTEX_FLOATS);
    assert_int_equal(st.axis_values[0], 0);
    expect_input_corners(t, &s);
    kcc_mesh_destroy(t);
    free(s.p);
}

/* The vertex bytes of both codings, worked out from the input: floats 12 a vertex and a padding
 * float; tables the 64-byte header, each vertex's code in the fewest whole bytes holding its three
 * indices, 8 bytes of padding rounded to 4, 4 a distinct value; both 4 a block of sixteen slots
 * and 3 a slot. The block the allocator gives is kcc_mesh_memory_bytes exactly. */
static void vertex_bytes_of_both_codings_are_the_worked_sizes(void **state)
{
    (void)state;
    float *pos;
    uint32_t *idx, nv, nt;
    make_grid(20, -3.5f, 0.25f, 1.0f, 0.5f, &pos, &idx, &nv, &nt); /* 21 x values, 1 y, 21 z */
    const kcc_vertex_coding codings[2] = {KCC_VERTEX_FLOATS, KCC_VERTEX_TABLES};
    for (int i = 0; i < 2; ++i) {
        count_alloc ca;
        memset(&ca, 0, sizeof ca);
        kcc_mesh_desc d;
        memset(&d, 0, sizeof d);
        d.positions = pos, d.vertex_count = nv, d.indices = idx, d.triangle_count = nt;
        d.allocator.alloc = counting_alloc, d.allocator.free = counting_free, d.allocator.user = &ca;
        d.vertex_coding = codings[i];
        kcc_mesh *m = NULL;
        assert_int_equal(kcc_mesh_build(&d, &m), KCC_OK);
        assert_int_equal(ca.live_bytes, kcc_mesh_memory_bytes(m));
        kcc_mesh_stats st;
        kcc_mesh_get_stats(m, &st);
        assert_int_equal(st.vertex_coding, codings[i]);
        const size_t v = m->vertex_count, slots = 800; /* 20 x 20 cells, two triangles each */
        assert_int_equal(m->slot_count, slots);
        const size_t corners = (slots + 15) / 16 * 4 + 3 * slots;
        if (i == 0) {
            assert_int_equal(st.vertex_bytes, 12 * v + 4 + corners);
        } else { /* 5 + 0 + 5 bits: 2-byte codes */
            assert_int_equal(st.axis_values[0], 21);
            assert_int_equal(st.axis_values[1], 1);
            assert_int_equal(st.axis_values[2], 21);
            assert_int_equal(st.vertex_bytes, 64 + (2 * v + 8 + 3) / 4 * 4 + 4 * (21 + 1 + 21) + corners);
        }
        kcc_mesh_destroy(m);
        assert_int_equal(ca.live_bytes, 0);
    }
    free(pos);
    free(idx);
}

/* KCC_VERTEX_AUTO keeps float vertices where they take at most KCC_MESH_BUDGET_BYTES_PER_TRIANGLE
 * bytes a triangle, else tables where they take fewer bytes, and builds exactly that mesh. */
static void automatic_coding_takes_tables_only_over_the_budget_and_smaller(void **state)
{
    (void)state;
    soup soups[4] = {soup_on_palette(11, 40), soup_on_palette(12, 2000), soup_random(13, 300, 10.0f, 1.0f),
                     soup_strip(600)};
    int tables = 0;
    for (int i = 0; i < 4; ++i) {
        const soup *s = &soups[i];
        kcc_mesh *f = build_coded(s->p, 3 * s->n, NULL, s->n, KCC_VERTEX_FLOATS);
        kcc_mesh *t = build_coded(s->p, 3 * s->n, NULL, s->n, KCC_VERTEX_TABLES);
        kcc_mesh *a = build_coded(s->p, 3 * s->n, NULL, s->n, KCC_VERTEX_AUTO);
        const size_t bf = kcc_mesh_memory_bytes(f), bt = kcc_mesh_memory_bytes(t);
        const bool want = bf > (size_t)KCC_MESH_BUDGET_BYTES_PER_TRIANGLE * s->n && bt < bf;
        assert_int_equal(coding_of(a), want ? KCC_VERTEX_TABLES : KCC_VERTEX_FLOATS);
        assert_int_equal(kcc_mesh_memory_bytes(a), want ? bt : bf);
        tables += want;
        kcc_mesh_destroy(f);
        kcc_mesh_destroy(t);
        kcc_mesh_destroy(a);
        free(soups[i].p);
    }
    assert_true(tables > 0 && tables < 4); /* both choices made */
    float *pos;
    uint32_t *idx, nv, nt;
    make_grid(40, -3.5f, 0.25f, 1.0f, 0.5f, &pos, &idx, &nv, &nt); /* 19.2 bytes a triangle with floats */
    kcc_mesh *grid = build_coded(pos, nv, idx, nt, KCC_VERTEX_AUTO);
    assert_int_equal(coding_of(grid), KCC_VERTEX_FLOATS);
    assert_true(kcc_mesh_memory_bytes(grid) <= (size_t)KCC_MESH_BUDGET_BYTES_PER_TRIANGLE * nt);
    kcc_mesh_destroy(grid);
    free(pos);
    free(idx);
    kcc_mesh_desc d;
    memset(&d, 0, sizeof d);
    d.positions = palette, d.vertex_count = 3, d.triangle_count = 1, d.vertex_coding = 3;
    kcc_mesh *m = NULL;
    assert_int_equal(kcc_mesh_build(&d, &m), KCC_ERR_BAD_DESC);
    assert_null(m);
}

/* Corruptions of a copy's vertex tables: an index past its axis's values, a code a byte longer,
 * an axis's index moved in the code. */
static void validator_catches_corrupt_vertex_codes(void **state)
{
    (void)state;
    soup s = soup_on_palette(21, 500);
    kcc_mesh *m = build_coded(s.p, 3 * s.n, NULL, s.n, KCC_VERTEX_TABLES);
    for (int which = -1; which < 3; ++which) {
        kcc_mesh *c = mesh_copy(m);
        kcc_vertex_tables *t = (kcc_vertex_tables *)(uintptr_t)c->tables;
        if (which == 0)
            t->value_count[2] -= 1; /* the last value, which some vertex names, is gone */
        else if (which == 1)
            t->code_bytes += 1;
        else if (which == 2)
            t->code_shift[1] += 1;
        assert_int_equal(kcc_mesh_validate(c), which < 0 ? KCC_OK : KCC_ERR_CORRUPT);
        free(c);
    }
    kcc_mesh_destroy(m);
    free(s.p);
}

int test_group_collide(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(build_returns_a_distinct_status_for_each_bad_input),
        cmocka_unit_test(build_allocates_through_the_custom_allocator_and_destroy_frees_all),
        cmocka_unit_test(build_copies_input_so_caller_may_free_it),
        cmocka_unit_test(triangle_accessor_returns_input_corners_with_stride_and_implicit_indices),
        cmocka_unit_test(tree_invariants_hold_and_tree_stays_under_32_bytes_per_triangle),
        cmocka_unit_test(collapse_plan_is_the_cheapest_of_every_collapse),
        cmocka_unit_test(quantised_boxes_contain_the_exact_boxes),
        cmocka_unit_test(quantised_box_test_passes_the_decoded_boxes_and_few_more),
        cmocka_unit_test(corners_are_stored_once_bit_for_bit),
        cmocka_unit_test(corners_out_of_reach_are_copied_bit_for_bit),
        cmocka_unit_test(index_maps_switch_width_above_65536_triangles_and_every_index_round_trips),
        cmocka_unit_test(rebuilding_the_same_input_gives_an_identical_tree_and_answers),
        cmocka_unit_test(ray_cast_matches_brute_force_on_random_soups),
        cmocka_unit_test(ray_through_grid_vertices_and_edges_always_hits),
        cmocka_unit_test(ray_along_grid_plane_edges_and_through_fan_centre_hits),
        cmocka_unit_test(ray_beside_a_triangle_whose_edge_functions_underflow_misses),
        cmocka_unit_test(ray_ties_go_to_the_lowest_triangle_index),
        cmocka_unit_test(ray_max_t_is_inclusive_and_bad_arguments_return_false),
        cmocka_unit_test(box_overlap_matches_clipping_reference_on_random_soups),
        cmocka_unit_test(box_overlap_counts_exact_touching_of_faces_edges_and_vertices),
        cmocka_unit_test(overlap_returns_the_total_and_writes_only_capacity),
        cmocka_unit_test(mesh_overlap_agrees_with_the_triangle_test_on_edge_touching_boxes),
        cmocka_unit_test(degenerate_and_needle_triangles_are_never_reported),
        cmocka_unit_test(a_mesh_of_only_degenerate_triangles_is_rejected_as_having_no_triangles),
        cmocka_unit_test(a_sliver_whose_normal_vanishes_about_the_box_centre_is_still_tested_exactly),
        cmocka_unit_test(queries_stay_exact_at_one_million_metres_and_at_millimetre_scale),
        cmocka_unit_test(a_mesh_of_one_triangle_answers_every_query),
        cmocka_unit_test(a_million_triangle_mesh_builds_and_answers),
        cmocka_unit_test(queries_on_a_mesh_of_duplicate_sets_match_brute_force),
        cmocka_unit_test(move_on_a_million_identical_triangles_gathers_one),
        cmocka_unit_test(moves_through_a_dense_cloud_of_copies_are_the_moves_through_the_originals),
        cmocka_unit_test(sweep_onto_a_floor_wall_and_edge_stops_at_hand_computed_times),
        cmocka_unit_test(sweep_does_not_tunnel_through_thin_walls_at_high_speed),
        cmocka_unit_test(sweep_touching_at_start_reports_t0_only_when_moving_into_the_surface),
        cmocka_unit_test(swept_triangle_test_matches_sampled_clipping_reference),
        cmocka_unit_test(mesh_sweep_equals_the_earliest_triangle_sweep_on_random_soups),
        cmocka_unit_test(sweep_ties_go_to_the_lowest_triangle_index),
        cmocka_unit_test(sweep_ties_in_double_go_to_the_lowest_index_on_a_tiled_slope),
        cmocka_unit_test(sweep_and_primitives_reject_invalid_arguments),
        cmocka_unit_test(queries_from_two_threads_match_single_threaded_answers),
        cmocka_unit_test(queries_match_brute_force_on_the_shared_levels),
        cmocka_unit_test(the_avx2_build_answers_queries_exactly_like_the_baseline),
        cmocka_unit_test(validator_accepts_every_generated_and_shared_level_and_random_soups),
        cmocka_unit_test(slot_of_every_input_matches_a_scan_of_the_index_maps),
        cmocka_unit_test(validator_catches_each_corruption_of_a_copied_tree),
        cmocka_unit_test(validator_catches_each_corruption_of_the_duplicate_lists),
        cmocka_unit_test(sweep_near_float_max_answers_without_walking_the_tree),
        cmocka_unit_test(vertex_tables_answer_every_query_as_float_vertices),
        cmocka_unit_test(moves_on_vertex_tables_are_the_moves_on_float_vertices),
        cmocka_unit_test(vertex_tables_fall_back_to_floats_above_65536_values_an_axis),
        cmocka_unit_test(vertex_bytes_of_both_codings_are_the_worked_sizes),
        cmocka_unit_test(automatic_coding_takes_tables_only_over_the_budget_and_smaller),
        cmocka_unit_test(validator_catches_corrupt_vertex_codes),
    };
    return KCC_RUN_GROUP("collide", tests);
}
