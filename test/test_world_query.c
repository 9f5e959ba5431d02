/* test_world_query.c: owns the tests of the world's queries (kcc_world_raycast(_layers),
 * kcc_world_overlap_aabb, kcc_world_sweep_aabb; collide/world_query.c). A level is split into 27
 * pieces, each moved into its own frame by the inverse of a random rigid transform and placed back
 * by it (one piece placed twice), and every query is checked against brute force over the original
 * triangles (in double, within a stated tolerance) and, bit for bit, against the single-triangle
 * kernels over the placed triangles. Also kinematic bodies on scripted paths, layers, removed
 * bodies, the stale and the rebuilt body tree, the ray cast and the box queries through the static
 * tree against the same queries without it, bad arguments, and the default allocator's huge-page placement of the world. */
#include "test.h"

#include "kcc_world_internal.h" /* KCC_ID_INDEX_MASK: an id's slot, which the tie rule orders by */

#define CB(...) ((const vec3 *)(__VA_ARGS__))
/* Likewise for the test's float[2][3] boxes. */
#define CF(...) ((const float(*)[3])(__VA_ARGS__))

static test_rng rng_seed(uint64_t seed)
{
    return rng_seed_salted(seed, 0x5157ull);
}

static uint32_t id_slot(uint32_t id)
{
    return (id & KCC_ID_INDEX_MASK) - 1u;
}

/* ------------------------------------------------------------------------------------------------
 * Rigid transforms in double (the test's own arithmetic), and the split world. */

/* out = m p + t in double. */
static void place_d(double m[3][3], const float t[3], const float p[3], double out[3])
{
    for (int i = 0; i < 3; ++i)
        out[i] = m[i][0] * p[0] + m[i][1] * p[1] + m[i][2] * p[2] + t[i];
}

/* A random rigid transform: kind 0 identity, 1 translation only, else a random rotation and
 * position within [lo, hi]. */
static kcc_transform random_transform(test_rng *r, int kind, const float lo[3], const float hi[3])
{
    kcc_transform t = kcc_transform_identity();
    if (kind == 0)
        return t;
    for (int k = 0; k < 3; ++k)
        t.position[k] = rng_f(r, lo[k], hi[k]);
    if (kind == 1)
        return t;
    test_random_rotation(r, t.rotation);
    return t;
}

#define MAX_PIECES 32

/* One body of the split world: its mesh's corners (local frame, 9 floats a triangle), the same
 * triangles at their intended world places in double (`ref`: the original level's corners, or the
 * placed copy of an instance), and their placed corners as the world computes them (`placed`). */
typedef struct piece {
    kcc_mesh *mesh;
    bool      owns_mesh;
    uint32_t  id;
    uint32_t  layers;
    bool      live;
    uint32_t  n;
    float    *local;
    double   *ref;
    float    *placed;
    kcc_transform t;   /* as the world stores it */
} piece;

typedef struct split_world {
    kcc_world *world;
    piece      pieces[MAX_PIECES];
    uint32_t   count;
    float      lo[3], hi[3];   /* bounds of every ref triangle */
    double     scale;          /* largest |coordinate| in play (refs and positions) */
} split_world;

/* The placed corners of every live piece at its current transform (kcc_transform_point: the float
 * placement the world documents), and the transform as stored. */
static void refresh_placed(split_world *sw)
{
    for (uint32_t p = 0; p < sw->count; ++p) {
        piece *pc = &sw->pieces[p];
        if (!pc->live)
            continue;
        assert_int_equal(kcc_world_get_body_transform(sw->world, pc->id, &pc->t, NULL), KCC_OK);
        for (uint32_t c = 0; c < 3 * pc->n; ++c)
            kcc_transform_point(&pc->t, pc->local + 3 * c, pc->placed + 3 * c);
    }
}

/* The piece's intended world corners: its local ones placed by t in double. */
static void piece_place_ref(piece *pc, const kcc_transform *t)
{
    double m[3][3];
    test_quat_matrix(t->rotation, m);
    for (uint32_t c = 0; c < 3 * pc->n; ++c)
        place_d(m, t->position, pc->local + 3 * c, pc->ref + 3 * c);
}

/* Adds a body for mesh at transform t with layers, its ref the local corners placed in double. */
static piece *add_piece(split_world *sw, kcc_mesh *mesh, bool owns, const float *local,
                        uint32_t n, const kcc_transform *t, uint32_t layers, kcc_body_kind kind)
{
    piece *pc = &sw->pieces[sw->count++];
    memset(pc, 0, sizeof *pc);
    pc->mesh = mesh, pc->owns_mesh = owns, pc->n = n, pc->live = true, pc->layers = layers;
    pc->local = malloc(sizeof(float) * 9 * n);
    pc->ref = malloc(sizeof(double) * 9 * n);
    pc->placed = malloc(sizeof(float) * 9 * n);
    memcpy(pc->local, local, sizeof(float) * 9 * n);
    piece_place_ref(pc, t);
    kcc_body_desc d = kcc_body_default_desc();
    d.transform = *t;
    d.layers = layers;
    d.kind = kind;
    assert_int_equal(kcc_world_add_body(sw->world, mesh, &d, &pc->id), KCC_OK);
    return pc;
}

/* The bounds of every live piece's ref corners, and the scale of the coordinates in play: the
 * largest |ref coordinate| plus the largest |position|. */
static void split_world_bounds(split_world *sw)
{
    double position = 0.0, coordinate = 0.0;
    for (int k = 0; k < 3; ++k)
        sw->lo[k] = INFINITY, sw->hi[k] = -INFINITY;
    for (uint32_t p = 0; p < sw->count; ++p) {
        const piece *pc = &sw->pieces[p];
        for (uint32_t c = 0; pc->live && c < 3 * pc->n; ++c)
            for (int k = 0; k < 3; ++k) {
                const double v = pc->ref[3 * c + k];
                sw->lo[k] = fminf(sw->lo[k], (float)v);
                sw->hi[k] = fmaxf(sw->hi[k], (float)v);
                coordinate = fmax(coordinate, fabs(v));
                position = fmax(position, fabs((double)pc->t.position[k]));
            }
    }
    sw->scale = coordinate + position;
}

/* Which of the 3 x 3 x 3 cells of [lo, hi] the triangle's centroid falls in. */
static uint32_t centroid_cell(const float *t, const float lo[3], const float hi[3])
{
    uint32_t cell = 0;
    for (int k = 2; k >= 0; --k) {
        const double c = ((double)t[k] + t[3 + k] + t[6 + k]) / 3.0;
        int i = (int)(3.0 * (c - lo[k]) / ((double)hi[k] - lo[k] + 1e-9));
        i = i < 0 ? 0 : i > 2 ? 2 : i;
        cell = cell * 3 + (uint32_t)i;
    }
    return cell;
}

/* Moves piece corners into the frame of t: local = R^T (world - position) in double, rounded. */
static void to_local(const kcc_transform *t, const float *world, uint32_t n, float *local)
{
    double m[3][3];
    test_quat_matrix(t->rotation, m);
    for (uint32_t c = 0; c < 3 * n; ++c) {
        const float *p = world + 3 * c;
        for (int i = 0; i < 3; ++i)
            local[3 * c + i] = (float)(m[0][i] * (p[0] - (double)t->position[0]) +
                                       m[1][i] * (p[1] - (double)t->position[1]) +
                                       m[2][i] * (p[2] - (double)t->position[2]));
    }
}

static kcc_mesh *build_soup(const float *tris, uint32_t n)
{
    kcc_mesh_desc d = {.positions = tris, .vertex_count = 3 * n, .triangle_count = n};
    kcc_mesh *m = NULL;
    return kcc_mesh_build(&d, &m) == KCC_OK ? m : NULL;
}

/* Splits the soup (9 floats a triangle) into 27 pieces by centroid, each placed by a random
 * transform (every fifth the identity, the next translation only), layers cycling 1, 2, 4; the
 * last piece is placed a second time, shifted beyond the level, with a random rotation. */
static void split_world_make(split_world *sw, const float *tris, uint32_t n, uint64_t seed)
{
    memset(sw, 0, sizeof *sw);
    assert_int_equal(kcc_world_create(NULL, &sw->world), KCC_OK);
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (uint32_t c = 0; c < 3 * n; ++c)
        for (int k = 0; k < 3; ++k)
            lo[k] = fminf(lo[k], tris[3 * c + k]), hi[k] = fmaxf(hi[k], tris[3 * c + k]);
    test_rng r = rng_seed(seed);
    float *world = malloc(sizeof(float) * 9 * n), *local = malloc(sizeof(float) * 9 * n);
    piece *last = NULL;
    for (uint32_t cell = 0; cell < 27; ++cell) {
        uint32_t m = 0;
        for (uint32_t i = 0; i < n; ++i)
            if (centroid_cell(tris + 9 * i, lo, hi) == cell)
                memcpy(world + 9 * m++, tris + 9 * i, sizeof(float) * 9);
        if (m == 0)
            continue;
        const kcc_transform t = random_transform(&r, (int)(cell % 5), lo, hi);
        to_local(&t, world, m, local);
        kcc_mesh *mesh = build_soup(local, m);
        if (mesh)
            last = add_piece(sw, mesh, true, local, m, &t, 1u << (sw->count % 3), KCC_BODY_STATIC);
    }
    assert_non_null(last);
    float shift_lo[3], shift_hi[3];
    for (int k = 0; k < 3; ++k)
        shift_lo[k] = lo[k], shift_hi[k] = hi[k];
    shift_lo[0] = shift_hi[0] = hi[0] + 0.5f * (hi[0] - lo[0]);
    kcc_transform t2 = random_transform(&r, 2, shift_lo, shift_hi);
    add_piece(sw, last->mesh, false, last->local, last->n, &t2, 1u, KCC_BODY_STATIC);
    free(world);
    free(local);
    refresh_placed(sw);
    split_world_bounds(sw);
}

static void split_world_free(split_world *sw)
{
    kcc_world_destroy(sw->world);
    for (uint32_t p = 0; p < sw->count; ++p) {
        if (sw->pieces[p].owns_mesh)
            kcc_mesh_destroy(sw->pieces[p].mesh);
        free(sw->pieces[p].local);
        free(sw->pieces[p].ref);
        free(sw->pieces[p].placed);
    }
}

static bool piece_seen(const piece *pc, uint32_t mask)
{
    return pc->live && (pc->layers & mask) != 0;
}

/* The tolerance of comparing with the original triangles: each piece's corners went through
 * float twice (into its frame, then placed back), each time within a few 2^-24 of the coordinates
 * in play, so a placed corner lies within about 2^-21 * scale of the original one. EPS_SCALE *
 * scale (4e-6 of it, 0.2 mm on a 50 m level) bounds that with room and is the distance by which
 * the answers may differ from the original level's: hits and overlaps nearer than that to an edge
 * or a face, in either direction, are not decided. */
#define EPS_SCALE 4e-6

/* ------------------------------------------------------------------------------------------------
 * Rays: brute force over the placed triangles in each body's frame (kcc_tri_raycast), and over the
 * original triangles in double. */

static bool transform_is_identity(const kcc_transform *t)
{
    return t->position[0] == 0.0f && t->position[1] == 0.0f && t->position[2] == 0.0f &&
           t->rotation[0] == 0.0f && t->rotation[1] == 0.0f && t->rotation[2] == 0.0f &&
           t->rotation[3] == 1.0f;
}

/* The ray in the piece's frame: the world ray itself for an identity placement, else
 * kcc_transform_inverse_point of the origin and the inverse rotation (the conjugate quaternion,
 * whose float matrix is the transpose bit for bit) of the direction. */
static void ray_to_local(const piece *pc, const float o[3], const float d[3], float lo[3], float ld[3])
{
    if (transform_is_identity(&pc->t)) {
        memcpy(lo, o, sizeof(float) * 3);
        memcpy(ld, d, sizeof(float) * 3);
        return;
    }
    kcc_transform_inverse_point(&pc->t, o, lo);
    kcc_transform conj = pc->t;
    conj.position[0] = conj.position[1] = conj.position[2] = 0.0f;
    conj.rotation[0] = -conj.rotation[0], conj.rotation[1] = -conj.rotation[1];
    conj.rotation[2] = -conj.rotation[2];
    kcc_transform_vector(&conj, d, ld);
}

/* The closest hit by kcc_tri_raycast in each seen piece's frame; ties to the lowest slot, then
 * the lowest triangle. */
static bool brute_ray_placed(const split_world *sw, const float o[3], const float d[3], float max_t,
                             uint32_t mask, kcc_world_hit *out)
{
    bool found = false;
    for (uint32_t p = 0; p < sw->count; ++p) {
        const piece *pc = &sw->pieces[p];
        if (!piece_seen(pc, mask))
            continue;
        float lo[3], ld[3];
        ray_to_local(pc, o, d, lo, ld);
        for (uint32_t i = 0; i < pc->n; ++i) {
            const float *t = pc->local + 9 * i;
            float th;
            if (!kcc_tri_raycast(t, t + 3, t + 6, lo, ld, max_t, &th))
                continue;
            const bool better = !found || th < out->t ||
                                (th == out->t && (id_slot(pc->id) < id_slot(out->body) ||
                                                  (pc->id == out->body && i < out->triangle)));
            if (better)
                out->t = th, out->body = pc->id, out->triangle = i, found = true;
        }
    }
    return found;
}

/* The ray against one original triangle in double: t along the ray, the signed distance of the
 * crossing from the nearest edge (positive inside), and |cos| of the angle to the normal. */
static bool ref_ray(const double *v, const float o[3], const float d[3], double *t, double *margin,
                    double *cosine)
{
    double e0[3], e1[3], n[3];
    for (int k = 0; k < 3; ++k)
        e0[k] = v[3 + k] - v[k], e1[k] = v[6 + k] - v[k];
    n[0] = e0[1] * e1[2] - e0[2] * e1[1];
    n[1] = e0[2] * e1[0] - e0[0] * e1[2];
    n[2] = e0[0] * e1[1] - e0[1] * e1[0];
    const double nl = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    const double dl = sqrt((double)d[0] * d[0] + (double)d[1] * d[1] + (double)d[2] * d[2]);
    const double den = n[0] * d[0] + n[1] * d[1] + n[2] * d[2];
    if (nl == 0.0 || den == 0.0)
        return false;
    *cosine = fabs(den) / (nl * dl);
    *t = (n[0] * (v[0] - o[0]) + n[1] * (v[1] - o[1]) + n[2] * (v[2] - o[2])) / den;
    double p[3], m = INFINITY;
    for (int k = 0; k < 3; ++k)
        p[k] = o[k] + *t * d[k];
    for (int e = 0; e < 3; ++e) {
        const double *a = v + 3 * e, *b = v + 3 * ((e + 1) % 3);
        const double ab[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
        const double ap[3] = {p[0] - a[0], p[1] - a[1], p[2] - a[2]};
        const double c[3] = {ab[1] * ap[2] - ab[2] * ap[1], ab[2] * ap[0] - ab[0] * ap[2],
                             ab[0] * ap[1] - ab[1] * ap[0]};
        const double abl = sqrt(ab[0] * ab[0] + ab[1] * ab[1] + ab[2] * ab[2]);
        m = fmin(m, (c[0] * n[0] + c[1] * n[1] + c[2] * n[2]) / (nl * abl));
    }
    *margin = m;
    return true;
}

/* The world's hit against the original triangles: no triangle is hit robustly (farther than the
 * tolerance from its edges, the tolerance grown by 1 / cos for slanted rays) before the hit by
 * more than the tolerance, and the reported triangle is hit (within the tolerance of an edge, so a
 * neighbour across a shared edge counts) at the reported t within the tolerance. */
static void check_ray_original(const split_world *sw, const float o[3], const float d[3],
                               float max_t, uint32_t mask, bool hit, const kcc_world_hit *h)
{
    const double eps = EPS_SCALE * sw->scale;
    const double dl = sqrt((double)d[0] * d[0] + (double)d[1] * d[1] + (double)d[2] * d[2]);
    for (uint32_t p = 0; p < sw->count; ++p) {
        const piece *pc = &sw->pieces[p];
        if (!piece_seen(pc, mask))
            continue;
        for (uint32_t i = 0; i < pc->n; ++i) {
            double t, margin, cosine;
            if (!ref_ray(pc->ref + 9 * i, o, d, &t, &margin, &cosine))
                continue;
            const double slack = eps * (1.0 + 1.0 / cosine), t_slack = slack / dl;
            const bool reported = hit && pc->id == h->body && i == h->triangle;
            if (reported && cosine > 1e-4) {
                assert_true(margin > -slack);
                assert_true(fabs(t - h->t) <= t_slack);
            }
            if (margin > slack && t > t_slack && t < (double)max_t - t_slack)
                assert_true(hit && h->t <= t + t_slack);
        }
    }
}

/* One ray: the world's answer equals the placed brute force bit for bit (hit, t, body, triangle,
 * point on the ray) and agrees with the original triangles. */
static void check_ray(const split_world *sw, const float o[3], const float d[3], float max_t,
                      uint32_t mask)
{
    kcc_world_hit h, ref;
    memset(&h, 0, sizeof h);
    const bool hit = mask == KCC_LAYERS_ALL ? kcc_world_raycast(sw->world, o, d, max_t, &h)
                                            : kcc_world_raycast_layers(sw->world, o, d, max_t, mask, &h);
    const bool ref_hit = brute_ray_placed(sw, o, d, max_t, mask, &ref);
    assert_int_equal(hit, ref_hit);
    if (hit) {
        assert_true(memcmp(&h.t, &ref.t, sizeof h.t) == 0);
        assert_int_equal(h.body, ref.body);
        assert_int_equal(h.triangle, ref.triangle);
        for (int k = 0; k < 3; ++k)
            assert_true(h.point[k] == o[k] + h.t * d[k]);
        const double len = sqrt((double)h.normal[0] * h.normal[0] + (double)h.normal[1] * h.normal[1] +
                                (double)h.normal[2] * h.normal[2]);
        assert_true(fabs(len - 1.0) < 1e-6);
    }
    check_ray_original(sw, o, d, max_t, mask, hit, &h);
}

/* ------------------------------------------------------------------------------------------------
 * Boxes and sweeps: brute force over the placed triangles (kcc_tri_overlap_aabb,
 * kcc_tri_sweep_aabb), and over the original ones with the box grown and shrunk by the tolerance. */

static int cmp_body_triangle(const void *a, const void *b)
{
    const kcc_body_triangle *x = a, *y = b;
    const uint32_t sx = id_slot(x->body), sy = id_slot(y->body);
    if (sx != sy)
        return sx < sy ? -1 : 1;
    return x->triangle < y->triangle ? -1 : x->triangle > y->triangle;
}

void test_overlap_lists_agree(const kcc_world *w, kcc_body_triangle *with,
                              kcc_body_triangle *without, uint32_t n, const kcc_body_triangle *one)
{
    if (n == 0)
        return;
    assert_memory_equal(one, &with[0], sizeof *one);
    for (uint32_t i = 1; i < n; ++i)
        assert_true(id_slot(with[i - 1].body) <= id_slot(with[i].body) &&
                    id_slot(without[i - 1].body) <= id_slot(without[i].body));
    for (uint32_t i = 0; i < n; ++i)
        if (!w->bodies[id_slot(with[i].body)].pose.rotated)
            assert_memory_equal(&with[i], &without[i], sizeof *with);
    qsort(with, n, sizeof *with, cmp_body_triangle);
    qsort(without, n, sizeof *without, cmp_body_triangle);
    assert_memory_equal(with, without, sizeof *with * n);
}

/* The original triangles overlapping box (its corners rounded to float for the exact kernel). */
static uint32_t brute_overlap(const split_world *sw, const float box[2][3], uint32_t mask,
                              bool placed, kcc_body_triangle *out)
{
    uint32_t found = 0;
    for (uint32_t p = 0; p < sw->count; ++p) {
        const piece *pc = &sw->pieces[p];
        if (!piece_seen(pc, mask))
            continue;
        for (uint32_t i = 0; i < pc->n; ++i) {
            float v[9];
            for (int k = 0; k < 9; ++k)
                v[k] = placed ? pc->placed[9 * i + k] : (float)pc->ref[9 * i + k];
            if (kcc_tri_overlap_aabb(v, v + 3, v + 6, CB(box)))
                out[found].body = pc->id, out[found++].triangle = i;
        }
    }
    return found;
}

static bool original_overlaps_any(const split_world *sw, const float box[2][3], uint32_t mask)
{
    for (uint32_t p = 0; p < sw->count; ++p) {
        const piece *pc = &sw->pieces[p];
        for (uint32_t i = 0; piece_seen(pc, mask) && i < pc->n; ++i) {
            float v[9];
            for (int k = 0; k < 9; ++k)
                v[k] = (float)pc->ref[9 * i + k];
            if (kcc_tri_overlap_aabb(v, v + 3, v + 6, CB(box)))
                return true;
        }
    }
    return false;
}

static bool contains(const kcc_body_triangle *list, uint32_t n, const kcc_body_triangle *x)
{
    return bsearch(x, list, n, sizeof *x, cmp_body_triangle) != NULL;
}

static void grow_box(const float box[2][3], float by, float out[2][3])
{
    for (int k = 0; k < 3; ++k)
        out[0][k] = box[0][k] - by, out[1][k] = box[1][k] + by;
}

static uint32_t total_triangles(const split_world *sw)
{
    uint32_t n = 0;
    for (uint32_t p = 0; p < sw->count; ++p)
        n += sw->pieces[p].n;
    return n;
}

/* One box: the world's list, grouped by ascending slot, is the placed brute force's (as a set);
 * every original triangle overlapping the box shrunk by the tolerance is in it, and every one in it
 * overlaps the box grown by the tolerance; a short capacity keeps the count and the prefix. */
static void check_overlap(const split_world *sw, const float box[2][3], uint32_t mask)
{
    const uint32_t cap = total_triangles(sw);
    kcc_body_triangle *got = malloc(sizeof *got * cap), *ref = malloc(sizeof *ref * cap);
    kcc_body_triangle *aux = malloc(sizeof *aux * cap);
    const uint32_t n = kcc_world_overlap_aabb(sw->world, CB(box), mask, got, cap);
    for (uint32_t i = 1; i < n; ++i)
        assert_true(id_slot(got[i - 1].body) <= id_slot(got[i].body));
    if (n > 1) {
        kcc_body_triangle first[2];
        assert_int_equal(kcc_world_overlap_aabb(sw->world, CB(box), mask, first, 1), n);
        assert_int_equal(first[0].body, got[0].body);
        assert_int_equal(first[0].triangle, got[0].triangle);
    }
    qsort(got, n, sizeof *got, cmp_body_triangle);
    assert_int_equal(brute_overlap(sw, box, mask, true, ref), n);
    for (uint32_t i = 0; i < n; ++i)
        assert_true(cmp_body_triangle(&got[i], &ref[i]) == 0);
    const float eps = (float)(EPS_SCALE * sw->scale);
    float shrunk[2][3], grown[2][3];
    grow_box(box, -eps, shrunk);
    grow_box(box, eps, grown);
    if (shrunk[0][0] <= shrunk[1][0] && shrunk[0][1] <= shrunk[1][1] && shrunk[0][2] <= shrunk[1][2]) {
        const uint32_t m = brute_overlap(sw, CF(shrunk), mask, false, aux);
        for (uint32_t i = 0; i < m; ++i)
            assert_true(contains(got, n, &aux[i]));
    }
    const uint32_t m = brute_overlap(sw, CF(grown), mask, false, aux);
    for (uint32_t i = 0; i < n; ++i)
        assert_true(contains(aux, m, &got[i]));
    free(got);
    free(ref);
    free(aux);
}

/* The earliest contact of box along delta over every seen piece by kcc_tri_sweep_aabb, ties to the
 * lowest slot, then triangle; over the placed triangles or over the original ones. */
static bool brute_sweep(const split_world *sw, const float box[2][3], const float delta[3],
                        uint32_t mask, bool placed, kcc_world_sweep_hit *out)
{
    bool found = false;
    for (uint32_t p = 0; p < sw->count; ++p) {
        const piece *pc = &sw->pieces[p];
        if (!piece_seen(pc, mask))
            continue;
        for (uint32_t i = 0; i < pc->n; ++i) {
            float v[9], t, n[3];
            bool start;
            for (int k = 0; k < 9; ++k)
                v[k] = placed ? pc->placed[9 * i + k] : (float)pc->ref[9 * i + k];
            if (!kcc_tri_sweep_aabb(v, v + 3, v + 6, CB(box), delta, &t, n, &start))
                continue;
            if (!found || t < out->t) {
                out->t = t, out->body = pc->id, out->triangle = i, out->start_overlap = start;
                memcpy(out->normal, n, sizeof n);
                found = true;
            }
        }
    }
    return found;
}

/* One sweep: the world's contact is the placed brute force's bit for bit (t, normal, start flag,
 * body and triangle, or another triangle at the same float t: the world orders contacts by their
 * double times, which float may tie); against the original triangles, from a box clear of them
 * by the tolerance, it lies between the contacts of the box grown and shrunk by the tolerance. */
static void check_sweep(const split_world *sw, const float box[2][3], const float delta[3],
                        uint32_t mask)
{
    kcc_world_sweep_hit h, ref;
    memset(&h, 0, sizeof h);
    const bool hit = kcc_world_sweep_aabb(sw->world, CB(box), delta, mask, &h);
    assert_int_equal(hit, brute_sweep(sw, box, delta, mask, true, &ref));
    if (hit) {
        assert_true(memcmp(&h.t, &ref.t, sizeof h.t) == 0);
        if (h.body != ref.body || h.triangle != ref.triangle) {
            const piece *pc = &sw->pieces[id_slot(h.body)];
            const float *v = pc->placed + 9 * h.triangle;
            float t;
            assert_true(kcc_tri_sweep_aabb(v, v + 3, v + 6, CB(box), delta, &t, NULL, NULL));
            assert_true(t == h.t);
        } else {
            assert_true(memcmp(h.normal, ref.normal, sizeof h.normal) == 0);
            assert_int_equal(h.start_overlap, ref.start_overlap);
        }
    }
    const float eps = (float)(EPS_SCALE * sw->scale);
    float grown[2][3], shrunk[2][3];
    grow_box(box, eps, grown);
    grow_box(box, -eps, shrunk);
    if (original_overlaps_any(sw, CF(grown), mask))
        return; /* starts within the tolerance of a triangle: not decided against the originals */
    kcc_world_sweep_hit g, s;
    const bool grown_hit = brute_sweep(sw, CF(grown), delta, mask, false, &g);
    const bool shrunk_hit = brute_sweep(sw, CF(shrunk), delta, mask, false, &s);
    if (!hit) {
        assert_false(shrunk_hit);
        return;
    }
    assert_true(grown_hit && g.t <= h.t + 1e-6f);
    assert_true(!shrunk_hit || h.t <= s.t + 1e-6f);
}

/* ------------------------------------------------------------------------------------------------
 * Query sets */

/* A random point: within 2 m of a random live triangle's centroid (near), or anywhere in the
 * world's bounds. */
static void random_point(const split_world *sw, test_rng *r, bool near, float out[3])
{
    const piece *pc = &sw->pieces[rng_u32(r) % sw->count];
    if (!near || !pc->live) {
        for (int k = 0; k < 3; ++k)
            out[k] = rng_f(r, sw->lo[k], sw->hi[k]);
        return;
    }
    const double *t = pc->ref + 9 * (rng_u32(r) % pc->n);
    for (int k = 0; k < 3; ++k)
        out[k] = (float)((t[k] + t[3 + k] + t[6 + k]) / 3.0) + rng_f(r, -2.0f, 2.0f);
}

/* Random rays (20 m and unbounded, and short ones straight down), player-sized boxes and sweeps of
 * up to 3 m per axis over the world's bounds, each checked with check_ray, check_overlap and
 * check_sweep. */
static void random_queries(const split_world *sw, uint64_t seed, int count, uint32_t mask)
{
    test_rng r = rng_seed(seed);
    for (int q = 0; q < count; ++q) {
        float o[3], d[3], box[2][3], delta[3];
        random_point(sw, &r, q % 2 == 0, o);
        for (int k = 0; k < 3; ++k) {
            d[k] = rng_f(&r, -1.0f, 1.0f);
            const float half = rng_f(&r, 0.1f, 1.5f);
            box[0][k] = o[k] - half, box[1][k] = o[k] + half;
            delta[k] = rng_f(&r, -3.0f, 3.0f);
        }
        const float len = sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        if (len > 0.01f)
            check_ray(sw, o, d, q % 4 == 0 ? INFINITY : 20.0f / len, mask);
        check_ray(sw, o, (const float[3]){0.0f, -1.0f, 0.0f}, 2.0f, mask);
        check_overlap(sw, CF(box), mask);
        check_sweep(sw, CF(box), delta, mask);
    }
}

/* The level's triangles as a soup, 9 floats each. */
static float *level_soup(const kcc_level *level)
{
    float *tris = malloc(sizeof(float) * 9 * level->triangle_count);
    for (uint32_t i = 0; i < 3 * level->triangle_count; ++i)
        memcpy(tris + 3 * i, level->positions + 3 * level->indices[i], sizeof(float) * 3);
    return tris;
}

/* n random triangles of 0.5 to 3 m in a 30 m cube, every tenth an exact copy of an earlier one
 * (duplicates: overlaps report every copy) and every seventh sharing an edge with the one before. */
static float *random_soup(test_rng *r, uint32_t n)
{
    float *tris = malloc(sizeof(float) * 9 * n);
    for (uint32_t i = 0; i < n; ++i) {
        float *t = tris + 9 * i;
        if (i > 0 && i % 10 == 0) {
            memcpy(t, tris + 9 * (rng_u32(r) % i), sizeof(float) * 9);
            continue;
        }
        const float size = rng_f(r, 0.5f, 3.0f);
        for (int k = 0; k < 3; ++k) {
            t[k] = rng_f(r, -15.0f, 15.0f);
            t[3 + k] = t[k] + rng_f(r, -size, size);
            t[6 + k] = t[k] + rng_f(r, -size, size);
        }
        if (i > 0 && i % 7 == 0) { /* shares the previous triangle's edge b c, reversed */
            memcpy(t, tris + 9 * (i - 1) + 6, sizeof(float) * 3);
            memcpy(t + 3, tris + 9 * (i - 1) + 3, sizeof(float) * 3);
        }
    }
    return tris;
}

/* Every query set on the split world, through the linear scan (tree stale after the adds) and
 * through the body tree (after a step), with every layer and with masks selecting some. */
static void check_split_world(split_world *sw, uint64_t seed, int count)
{
    random_queries(sw, seed, count, KCC_LAYERS_ALL);
    assert_int_equal(kcc_world_step(sw->world), KCC_OK);
    random_queries(sw, seed + 1, count, KCC_LAYERS_ALL);
    random_queries(sw, seed + 2, count / 2, 1u);
    random_queries(sw, seed + 3, count / 2, 2u | 4u);
}

static void world_queries_match_brute_force_on_split_generated_levels(void **state)
{
    (void)state;
    const char *specs[] = {"arena seed=3 size=24", "terrain seed=5 size=24"};
    for (int l = 0; l < 2; ++l) {
        kcc_level level;
        char err[128];
        assert_int_equal(kcc_level_generate(specs[l], &level, err, sizeof err), KCC_OK);
        float *tris = level_soup(&level);
        split_world sw;
        split_world_make(&sw, tris, level.triangle_count, 10 + (uint64_t)l);
        check_split_world(&sw, 100 + (uint64_t)l, 80);
        split_world_free(&sw);
        free(tris);
        kcc_level_free(&level);
    }
    test_rng r = rng_seed(7);
    float *soup = random_soup(&r, 600);
    split_world sw;
    split_world_make(&sw, soup, 600, 12);
    check_split_world(&sw, 120, 100);
    split_world_free(&sw);
    free(soup);
}

/* The same 10 km from the origin (docs/collide.md, "Far from the origin"): the arena's triangles
 * moved out, split and placed by transforms out there; every answer still as brute force over the
 * placed triangles, exactly, and over the original ones within the tolerance that grows with the
 * coordinates' size. */
static void world_queries_match_brute_force_10_km_out(void **state)
{
    (void)state;
    kcc_level level;
    char err[128];
    assert_int_equal(kcc_level_generate("arena seed=4 size=24", &level, err, sizeof err), KCC_OK);
    float *tris = level_soup(&level);
    static const float out[3] = {10000.0f, 0.0f, -10000.0f};
    for (uint32_t i = 0; i < 9 * level.triangle_count; ++i)
        tris[i] += out[i % 3];
    split_world sw;
    split_world_make(&sw, tris, level.triangle_count, 14);
    check_split_world(&sw, 140, 80);
    split_world_free(&sw);
    free(tris);
    kcc_level_free(&level);
}

static void world_queries_match_brute_force_on_the_split_shared_level(void **state)
{
    (void)state;
    const char *path = kcc_test_shared_level(1); /* oa_dm1 */
    if (!path)
        return; /* the generated levels above still run */
    kcc_level level;
    char err[256];
    assert_int_equal(kcc_level_load_obj_geometry(path, &level, err, sizeof err), KCC_OK);
    float *tris = level_soup(&level);
    split_world sw;
    split_world_make(&sw, tris, level.triangle_count, 20);
    check_split_world(&sw, 200, 80);
    split_world_free(&sw);
    free(tris);
    kcc_level_free(&level);
}

/* ------------------------------------------------------------------------------------------------
 * Kinematic bodies, removal, the two tree paths, bad arguments */

/* Three kinematic copies of a small soup and the soup itself, static at the identity; the copies
 * move along scripted paths (translation and rotation about a tilted axis) for six steps, and
 * after each step every query answers at the scripted poses. */
static void world_queries_follow_kinematic_bodies_on_scripted_paths(void **state)
{
    (void)state;
    test_rng r = rng_seed(31);
    float *soup = random_soup(&r, 150);
    for (uint32_t i = 0; i < 9 * 150; ++i)
        soup[i] *= 0.25f;
    kcc_mesh *mesh = build_soup(soup, 150);
    assert_non_null(mesh);
    split_world sw;
    memset(&sw, 0, sizeof sw);
    assert_int_equal(kcc_world_create(NULL, &sw.world), KCC_OK);
    const kcc_transform id = kcc_transform_identity();
    add_piece(&sw, mesh, true, soup, 150, &id, 1u, KCC_BODY_STATIC);
    for (int j = 0; j < 3; ++j) {
        kcc_transform t = kcc_transform_identity();
        t.position[0] = 6.0f * (float)(j + 1);
        add_piece(&sw, mesh, false, soup, 150, &t, 1u, KCC_BODY_KINEMATIC);
    }
    for (int step = 1; step <= 6; ++step) {
        for (uint32_t j = 1; j < 4; ++j) {
            const float s = (float)step, angle = 0.4f * s * (float)j;
            const double axis_len = sqrt(1.0 + j * j + 4.0);
            kcc_transform t;
            t.position[0] = 6.0f * (float)j + 0.8f * s;
            t.position[1] = 0.3f * s * (float)j;
            t.position[2] = -0.5f * s;
            const double sn = sin(0.5 * angle) / axis_len;
            t.rotation[0] = (float)sn, t.rotation[1] = (float)(sn * j), t.rotation[2] = (float)(sn * 2.0);
            t.rotation[3] = (float)cos(0.5 * angle);
            assert_int_equal(kcc_world_move_body(sw.world, sw.pieces[j].id, &t), KCC_OK);
            piece_place_ref(&sw.pieces[j], &t);
        }
        assert_int_equal(kcc_world_step(sw.world), KCC_OK);
        refresh_placed(&sw);
        split_world_bounds(&sw);
        random_queries(&sw, 300 + (uint64_t)step, 12, KCC_LAYERS_ALL);
    }
    split_world_free(&sw);
    free(soup);
}

/* A digest of every answer of a query set (FNV-1a over the hit records and overlap lists). */
static uint64_t answers_digest(const split_world *sw, uint64_t seed, int count)
{
    uint64_t h = 0xcbf29ce484222325ull;
    test_rng r = rng_seed(seed);
    const uint32_t cap = total_triangles(sw);
    kcc_body_triangle *list = malloc(sizeof *list * cap);
    for (int q = 0; q < count; ++q) {
        float o[3], d[3], box[2][3];
        for (int k = 0; k < 3; ++k) {
            o[k] = rng_f(&r, sw->lo[k], sw->hi[k]);
            d[k] = rng_f(&r, -1.0f, 1.0f);
            box[0][k] = o[k] - 1.0f, box[1][k] = o[k] + 1.0f;
        }
        kcc_world_hit ray;
        kcc_world_sweep_hit sweep;
        memset(&ray, 0, sizeof ray);
        memset(&sweep, 0, sizeof sweep);
        const bool ray_hit = kcc_world_raycast(sw->world, o, d, 30.0f, &ray);
        const bool sweep_hit = kcc_world_sweep_aabb(sw->world, CB(box), d, KCC_LAYERS_ALL, &sweep);
        const uint32_t n = kcc_world_overlap_aabb(sw->world, CB(box), KCC_LAYERS_ALL, list, cap);
        const unsigned char *parts[] = {(const void *)&ray, (const void *)&sweep, (const void *)list};
        const size_t sizes[] = {ray_hit ? sizeof ray : 0, sweep_hit ? sizeof sweep : 0, n * sizeof *list};
        for (int p = 0; p < 3; ++p)
            for (size_t i = 0; i < sizes[p]; ++i)
                h = (h ^ parts[p][i]) * 0x100000001b3ull;
        h = (h ^ (ray_hit | sweep_hit << 1 | n << 2)) * 0x100000001b3ull;
    }
    free(list);
    return h;
}

/* The world's queries run the AVX2 build where the CPU has it (KCC_ISA_DISPATCH): every ray, box
 * sweep and overlap list on a level split into rotated, translated and in-place pieces is the same
 * bytes in both builds (the digest of 300 queries), and they met triangles. */
static void world_queries_answer_alike_in_the_avx2_build_and_the_baseline(void **state)
{
    (void)state;
    const bool was_avx2 = kcc_isa_avx2();
    if (!kcc_isa_force_avx2(true)) {
        skip();
        return;
    }
    kcc_level level;
    char err[128];
    assert_int_equal(kcc_level_generate("arena seed=4 size=24", &level, err, sizeof err), KCC_OK);
    float *tris = level_soup(&level);
    split_world sw;
    split_world_make(&sw, tris, level.triangle_count, 31);
    const uint64_t avx2 = answers_digest(&sw, 77, 300);
    assert_true(kcc_isa_force_avx2(false));
    const uint64_t baseline = answers_digest(&sw, 77, 300);
    assert_true(avx2 == baseline);
    kcc_body_triangle list[64];
    const float box[2][3] = {{sw.lo[0], sw.lo[1], sw.lo[2]}, {sw.hi[0], sw.hi[1], sw.hi[2]}};
    assert_true(kcc_world_overlap_aabb(sw.world, CB(box), KCC_LAYERS_ALL, list, 64) > 0);
    assert_true(kcc_isa_force_avx2(was_avx2));
    split_world_free(&sw);
    free(tris);
    kcc_level_free(&level);
}

/* Removed bodies are never reported, through the stale tree (linear scan) or the rebuilt one, and
 * both give the same answers; a layer change is seen at once. */
static void world_queries_skip_removed_bodies_on_stale_and_rebuilt_trees(void **state)
{
    (void)state;
    test_rng r = rng_seed(41);
    float *soup = random_soup(&r, 500);
    split_world sw;
    split_world_make(&sw, soup, 500, 42);
    assert_int_equal(kcc_world_step(sw.world), KCC_OK);
    const uint64_t before = answers_digest(&sw, 400, 40);
    for (uint32_t p = 2; p < sw.count; p += 5) {
        assert_int_equal(kcc_world_remove_body(sw.world, sw.pieces[p].id), KCC_OK);
        sw.pieces[p].live = false;
    }
    assert_int_equal(kcc_world_set_body_layers(sw.world, sw.pieces[1].id, 8u), KCC_OK);
    sw.pieces[1].layers = 8u;
    random_queries(&sw, 410, 20, KCC_LAYERS_ALL);  /* stale tree: the linear scan */
    random_queries(&sw, 411, 10, 8u);
    const uint64_t stale = answers_digest(&sw, 400, 40);
    assert_true(stale != before);  /* the removals changed some answer */
    assert_int_equal(kcc_world_step(sw.world), KCC_OK);
    assert_true(answers_digest(&sw, 400, 40) == stale);
    random_queries(&sw, 412, 20, KCC_LAYERS_ALL);
    random_queries(&sw, 413, 10, 8u);
    split_world_free(&sw);
    free(soup);
}

/* Exact ties between bodies: two bodies place one mesh at one rotated pose (the same placed
 * triangles bit for bit), so every ray and sweep ties between them and the lower slot wins, the
 * one added first here; removed, the other answers alike. Overlaps report both. */
static void world_queries_break_ties_by_the_lowest_body_slot(void **state)
{
    (void)state;
    test_rng r = rng_seed(61);
    float *soup = random_soup(&r, 300);
    kcc_mesh *mesh = build_soup(soup, 300);
    kcc_world *w = NULL;
    assert_int_equal(kcc_world_create(NULL, &w), KCC_OK);
    const float lo[3] = {-3, -3, -3}, hi[3] = {3, 3, 3};
    kcc_body_desc d = kcc_body_default_desc();
    d.transform = random_transform(&r, 2, lo, hi);
    uint32_t first, second;
    assert_int_equal(kcc_world_add_body(w, mesh, &d, &first), KCC_OK);
    assert_int_equal(kcc_world_add_body(w, mesh, &d, &second), KCC_OK);
    assert_true(id_slot(first) < id_slot(second));
    int ray_hits = 0, sweep_hits = 0;
    for (int pass = 0; pass < 3; ++pass) {
        const uint32_t expected = pass < 2 ? first : second;
        if (pass == 1)
            assert_int_equal(kcc_world_step(w), KCC_OK); /* the tree path; pass 0 the scan */
        if (pass == 2)
            assert_int_equal(kcc_world_remove_body(w, first), KCC_OK);
        for (int q = 0; q < 60; ++q) {
            float o[3], dir[3], box[2][3], delta[3];
            for (int k = 0; k < 3; ++k) {
                o[k] = rng_f(&r, -15.0f, 15.0f), dir[k] = rng_f(&r, -1.0f, 1.0f);
                box[0][k] = o[k] - 0.5f, box[1][k] = o[k] + 0.5f, delta[k] = rng_f(&r, -4.0f, 4.0f);
            }
            kcc_world_hit h;
            if (kcc_world_raycast(w, o, dir, INFINITY, &h)) {
                assert_int_equal(h.body, expected);
                ++ray_hits;
            }
            kcc_world_sweep_hit sh;
            if (kcc_world_sweep_aabb(w, CB(box), delta, KCC_LAYERS_ALL, &sh)) {
                assert_int_equal(sh.body, expected);
                ++sweep_hits;
            }
            kcc_body_triangle list[64];
            const uint32_t n = kcc_world_overlap_aabb(w, CB(box), KCC_LAYERS_ALL, list, 64);
            assert_true(pass == 2 || n % 2 == 0);
            for (uint32_t i = 0; pass < 2 && i < n && n <= 64; ++i)
                assert_int_equal(list[i].body, i < n / 2 ? first : second);
        }
    }
    assert_true(ray_hits > 20 && sweep_hits > 10);
    kcc_world_destroy(w);
    kcc_mesh_destroy(mesh);
    free(soup);
}

/* ------------------------------------------------------------------------------------------------
 * The static tree (collide/world_static_tree.c): the ray cast through it equals the cast without it
 * (the tree marked stale: every body through the body tree, each from its root), bit for bit. */

/* The ray cast through the static tree as the world has it, then with the tree marked stale; the
 * two hit records are the same bytes. Returns whether it hit. */
static bool ray_both_paths(kcc_world *w, const float o[3], const float d[3], float max_t,
                           uint32_t mask)
{
    kcc_world_hit with, without;
    memset(&with, 0, sizeof with);
    memset(&without, 0, sizeof without);
    const bool hit = kcc_world_raycast_layers(w, o, d, max_t, mask, &with);
    const bool valid = w->statics.valid;
    w->statics.valid = false;
    const bool hit_without = kcc_world_raycast_layers(w, o, d, max_t, mask, &without);
    w->statics.valid = valid;
    assert_int_equal(hit, hit_without);
    assert_memory_equal(&with, &without, sizeof with);
    return hit;
}

/* Rays at the split world through both paths, checked against brute force over the placed
 * triangles too (check_ray): random ones, and rays from a random point ending exactly on a placed
 * corner or on the float midpoint of a placed edge (max_t 1: the hit, if any, at the ray's end),
 * where neighbouring triangles and instanced copies tie. Returns the hits. */
static int static_tree_rays(split_world *sw, uint64_t seed, int count, uint32_t mask)
{
    test_rng r = rng_seed(seed);
    int hits = 0;
    for (int q = 0; q < count; ++q) {
        float o[3], d[3];
        random_point(sw, &r, true, o);
        for (int k = 0; k < 3; ++k)
            d[k] = rng_f(&r, -1.0f, 1.0f);
        hits += ray_both_paths(sw->world, o, d, q % 3 == 0 ? INFINITY : 20.0f, mask);
        check_ray(sw, o, d, 20.0f, mask);
        const piece *pc = &sw->pieces[rng_u32(&r) % sw->count];
        if (!pc->live)
            continue;
        const float *t = pc->placed + 9 * (rng_u32(&r) % pc->n);
        const int corner = (int)(rng_u32(&r) % 3), next = (corner + 1) % 3;
        float end[3];
        for (int k = 0; k < 3; ++k) {
            end[k] = q % 2 == 0 ? t[3 * corner + k]
                                : 0.5f * t[3 * corner + k] + 0.5f * t[3 * next + k];
            d[k] = end[k] - o[k];
        }
        if (d[0] == 0.0f && d[1] == 0.0f && d[2] == 0.0f)
            continue;
        hits += ray_both_paths(sw->world, o, d, 1.0f, mask);
        check_ray(sw, o, d, 1.0f, mask);
    }
    return hits;
}

/* The members are the live static bodies that are solid tree meshes: every static piece. */
static void assert_static_members(const split_world *sw)
{
    const kcc_static_tree *st = &sw->world->statics;
    assert_true(st->valid);
    assert_true(st->count > 0);
    uint32_t statics = 0;
    for (uint32_t p = 0; p < sw->count; ++p) {
        const piece *pc = &sw->pieces[p];
        const bool member = pc->live && kcc_world_find_body(sw->world, pc->id)->kind == KCC_BODY_STATIC;
        statics += member;
        assert_int_equal(st->member[id_slot(pc->id)], member);
    }
    assert_int_equal(st->members, statics);
}

/* A random soup of 700 triangles from r (exact duplicates, shared edges) split into 27 pieces
 * placed rotated, translated and in place (split_world_make with seed), its first piece instanced
 * twice more (in place on layer 2, rotated on layer 4) and once as a kinematic body (layer 1,
 * rotated). Returns the soup, which the world's pieces point into. */
static float *static_tree_scene(test_rng *r, uint64_t seed, split_world *sw)
{
    float *soup = random_soup(r, 700);
    split_world_make(sw, soup, 700, seed);
    const piece *first = &sw->pieces[0];
    const kcc_transform at_origin = kcc_transform_identity();
    const kcc_transform turned = random_transform(r, 2, sw->lo, sw->hi);
    add_piece(sw, first->mesh, false, first->local, first->n, &at_origin, 2u, KCC_BODY_STATIC);
    add_piece(sw, first->mesh, false, first->local, first->n, &turned, 4u, KCC_BODY_STATIC);
    add_piece(sw, first->mesh, false, first->local, first->n, &turned, 1u, KCC_BODY_KINEMATIC);
    refresh_placed(sw);
    split_world_bounds(sw);
    return soup;
}

/* A random soup (exact duplicates, shared edges) split into 27 pieces placed rotated, translated
 * and in place, one piece instanced twice more (in place and rotated) and once as a kinematic body
 * (cast through the body tree beside the static tree); after each step the cast through the static
 * tree equals the cast without it and brute force, with three layer masks. Between steps bodies
 * are removed, placed elsewhere and given new layers: the tree is stale (or its entries' layers
 * updated in place) and the answers are the same. A world too small for a body's leaves casts
 * that body through the body tree. */
static void world_rays_through_the_static_tree_equal_the_rays_without_it(void **state)
{
    (void)state;
    test_rng r = rng_seed(81);
    split_world sw;
    float *soup = static_tree_scene(&r, 82, &sw);
    int hits = static_tree_rays(&sw, 810, 40, KCC_LAYERS_ALL); /* no step yet: no tree */
    for (int round = 0; round < 3; ++round) {
        assert_int_equal(kcc_world_step(sw.world), KCC_OK);
        assert_static_members(&sw);
        hits += static_tree_rays(&sw, 820 + (uint64_t)round, 60, KCC_LAYERS_ALL);
        hits += static_tree_rays(&sw, 830 + (uint64_t)round, 30, 1u);
        hits += static_tree_rays(&sw, 840 + (uint64_t)round, 30, 2u | 4u);
        piece *moved = &sw.pieces[3 + 5 * round], *removed = &sw.pieces[4 + 5 * round];
        piece *relayered = &sw.pieces[5 + 5 * round];
        const kcc_transform t = random_transform(&r, 1 + round % 2, sw.lo, sw.hi);
        assert_int_equal(kcc_world_set_body_transform(sw.world, moved->id, &t), KCC_OK);
        piece_place_ref(moved, &t);
        assert_int_equal(kcc_world_remove_body(sw.world, removed->id), KCC_OK);
        removed->live = false;
        assert_int_equal(kcc_world_set_body_layers(sw.world, relayered->id, 8u), KCC_OK);
        relayered->layers = 8u;
        refresh_placed(&sw);
        split_world_bounds(&sw);
        assert_false(sw.world->statics.valid);
        hits += static_tree_rays(&sw, 850 + (uint64_t)round, 30, KCC_LAYERS_ALL);
    }
    assert_int_equal(kcc_world_step(sw.world), KCC_OK);
    piece *relayered = &sw.pieces[1]; /* layers changed while the tree is valid: entries updated */
    assert_int_equal(kcc_world_set_body_layers(sw.world, relayered->id, 16u), KCC_OK);
    relayered->layers = 16u;
    assert_true(sw.world->statics.valid);
    hits += static_tree_rays(&sw, 860, 30, 16u);
    hits += static_tree_rays(&sw, 861, 30, KCC_LAYERS_ALL);
    assert_true(hits > 300);
    split_world_free(&sw);

    /* Room for kcc_static_tree_capacity(2) entries: the soup's mesh has more leaves. */
    kcc_world_desc wd = kcc_world_default_desc();
    wd.body_capacity = 2;
    kcc_world *w = NULL;
    assert_int_equal(kcc_world_create(&wd, &w), KCC_OK);
    kcc_mesh *big = build_soup(soup, 700), *small = build_soup(soup, 3);
    assert_true(big->leaf_count > kcc_static_tree_capacity(2));
    uint32_t big_id, small_id;
    assert_int_equal(kcc_world_add_body(w, big, NULL, &big_id), KCC_OK);
    assert_int_equal(kcc_world_add_body(w, small, NULL, &small_id), KCC_OK);
    assert_int_equal(kcc_world_step(w), KCC_OK);
    assert_false(w->statics.member[id_slot(big_id)]);
    assert_true(w->statics.member[id_slot(small_id)]);
    int big_hits = 0;
    for (int q = 0; q < 100; ++q) {
        float o[3], d[3];
        for (int k = 0; k < 3; ++k)
            o[k] = rng_f(&r, -15.0f, 15.0f), d[k] = rng_f(&r, -1.0f, 1.0f);
        kcc_world_hit h;
        kcc_ray_hit mh;
        const bool hit = ray_both_paths(w, o, d, 30.0f, KCC_LAYERS_ALL);
        assert_int_equal(kcc_world_raycast(w, o, d, 30.0f, &h), hit);
        if (hit && h.body == big_id) {
            assert_true(kcc_mesh_raycast(big, o, d, 30.0f, &mh));
            assert_true(mh.t == h.t && mh.triangle == h.triangle);
            ++big_hits;
        }
    }
    assert_true(big_hits > 20);
    kcc_world_destroy(w);
    kcc_mesh_destroy(big);
    kcc_mesh_destroy(small);
    free(soup);
}

/* The box overlap and the box sweep through the static tree as the world has it, then with the tree
 * marked stale (every body through its own tree, the box's local bounds in its frame): the same
 * count, both lists grouped by ascending body, the same (body, triangle) pairs (in the same order
 * for a body that is not rotated; a rotated member's entries come from the world's build over its
 * placed triangles, in that build's order), the first of them with a capacity of one; the same
 * sweep hit record, byte for byte. Returns how many triangles overlap; *swept counts the hits. */
static uint32_t boxes_both_paths(kcc_world *w, const float box[2][3], const float delta[3],
                                 uint32_t mask, int *swept)
{
    enum { CAP = 4096 };
    static kcc_body_triangle with[CAP], without[CAP];
    kcc_body_triangle one;
    kcc_world_sweep_hit hit_with, hit_without;
    memset(&hit_with, 0, sizeof hit_with);
    memset(&hit_without, 0, sizeof hit_without);
    const uint32_t n = kcc_world_overlap_aabb(w, CB(box), mask, with, CAP);
    const bool hit = kcc_world_sweep_aabb(w, CB(box), delta, mask, &hit_with);
    const uint32_t n_one = kcc_world_overlap_aabb(w, CB(box), mask, &one, 1);
    const bool valid = w->statics.valid;
    w->statics.valid = false;
    assert_int_equal(kcc_world_overlap_aabb(w, CB(box), mask, without, CAP), n);
    assert_int_equal(kcc_world_sweep_aabb(w, CB(box), delta, mask, &hit_without), hit);
    w->statics.valid = valid;
    assert_int_equal(n_one, n);
    assert_true(n <= CAP);
    test_overlap_lists_agree(w, with, without, n, &one);
    assert_memory_equal(&hit_with, &hit_without, sizeof hit_with);
    *swept += hit;
    return n;
}

/* Random boxes and sweeps at the split world through both paths (boxes_both_paths), each also
 * checked against brute force over the placed triangles (check_overlap, check_sweep): player-sized
 * boxes near triangles and anywhere, boxes of up to 12 m a side, the first a box around the whole
 * world (with every layer, more entries than an overlap gathers: the per-body path answers it),
 * and sweeps ending exactly on a placed corner, where neighbouring triangles and instanced copies
 * tie. Returns the overlapping triangles found. */
static uint32_t static_tree_boxes(split_world *sw, uint64_t seed, int count, uint32_t mask,
                                  int *swept)
{
    test_rng r = rng_seed(seed);
    uint32_t found = 0;
    for (int q = 0; q < count; ++q) {
        float c[3], box[2][3], delta[3];
        random_point(sw, &r, q % 3 != 0, c);
        const float size = q % 5 == 4 ? 6.0f : 1.5f;
        for (int k = 0; k < 3; ++k) {
            const float half = rng_f(&r, 0.1f, size);
            box[0][k] = q == 0 ? sw->lo[k] - 1.0f : c[k] - half;
            box[1][k] = q == 0 ? sw->hi[k] + 1.0f : c[k] + half;
            delta[k] = rng_f(&r, -3.0f, 3.0f);
        }
        const piece *pc = &sw->pieces[rng_u32(&r) % sw->count];
        if (q % 2 == 1 && pc->live) { /* the box's lowest corner ends on a placed corner */
            const float *t = pc->placed + 9 * (rng_u32(&r) % pc->n) + 3 * (rng_u32(&r) % 3);
            for (int k = 0; k < 3; ++k)
                delta[k] = t[k] - box[0][k];
        }
        found += boxes_both_paths(sw->world, CF(box), delta, mask, swept);
        check_overlap(sw, CF(box), mask);
        check_sweep(sw, CF(box), delta, mask);
    }
    return found;
}

/* A random soup (exact duplicates, shared edges) split into 27 pieces placed rotated, translated
 * and in place, one piece instanced twice more (in place and rotated) and once as a kinematic body
 * (tested through the body tree beside the static tree): after each step the box overlap's list
 * and the sweep's hit through the static tree equal those without it and brute force, with four
 * layer masks; between steps bodies are moved, removed and given new layers (the tree stale, or
 * its entries' layers updated in place). */
static void world_box_queries_through_the_static_tree_equal_those_without_it(void **state)
{
    (void)state;
    test_rng r = rng_seed(87);
    split_world sw;
    float *soup = static_tree_scene(&r, 88, &sw);
    uint32_t found = 0;
    int swept = 0;
    for (int round = 0; round < 3; ++round) {
        assert_int_equal(kcc_world_step(sw.world), KCC_OK);
        assert_static_members(&sw);
        found += static_tree_boxes(&sw, 870 + (uint64_t)round, 60, KCC_LAYERS_ALL, &swept);
        found += static_tree_boxes(&sw, 880 + (uint64_t)round, 30, 1u, &swept);
        found += static_tree_boxes(&sw, 890 + (uint64_t)round, 30, 2u | 4u, &swept);
        piece *moved = &sw.pieces[3 + 5 * round], *removed = &sw.pieces[4 + 5 * round];
        const kcc_transform t = random_transform(&r, 1 + round % 2, sw.lo, sw.hi);
        assert_int_equal(kcc_world_set_body_transform(sw.world, moved->id, &t), KCC_OK);
        piece_place_ref(moved, &t);
        assert_int_equal(kcc_world_remove_body(sw.world, removed->id), KCC_OK);
        removed->live = false;
        refresh_placed(&sw);
        split_world_bounds(&sw);
        assert_false(sw.world->statics.valid);
        found += static_tree_boxes(&sw, 900 + (uint64_t)round, 20, KCC_LAYERS_ALL, &swept);
    }
    assert_int_equal(kcc_world_step(sw.world), KCC_OK);
    piece *relayered = &sw.pieces[1]; /* layers changed while the tree is valid: entries updated */
    assert_int_equal(kcc_world_set_body_layers(sw.world, relayered->id, 16u), KCC_OK);
    relayered->layers = 16u;
    assert_true(sw.world->statics.valid);
    found += static_tree_boxes(&sw, 910, 30, 16u, &swept);
    found += static_tree_boxes(&sw, 911, 30, KCC_LAYERS_ALL, &swept);
    assert_true(found > 5000 && swept > 200);
    split_world_free(&sw);
    free(soup);
}

/* Rotated members' room in a small world (kcc_static_tree_capacity(4) = 128 entries): a rotated
 * body's build (its triangles' placed bounds beside the entries, its tree before the slots) and
 * its slots must fit beside the others'. Of rotated soups of 40, 100 and 3 triangles and a
 * translated one of 30, added in that order, the first is a member and the second, with the
 * first's entries and slots, does not fit; the listed slots are one per rotated member's triangle,
 * and every ray answers as without the static tree (ray_both_paths), members or not. */
static void world_static_tree_keeps_rotated_members_within_its_room(void **state)
{
    (void)state;
    test_rng r = rng_seed(97);
    float *soup = random_soup(&r, 100);
    kcc_world_desc wd = kcc_world_default_desc();
    wd.body_capacity = 4;
    kcc_world *w = NULL;
    assert_int_equal(kcc_world_create(&wd, &w), KCC_OK);
    const uint32_t sizes[4] = {40, 100, 3, 30};
    kcc_mesh *mesh[4];
    uint32_t id[4];
    for (int i = 0; i < 4; ++i) {
        mesh[i] = build_soup(soup, sizes[i]);
        assert_non_null(mesh[i]);
        kcc_body_desc bd = kcc_body_default_desc();
        const float lo[3] = {-10.0f, -10.0f, -10.0f}, hi[3] = {10.0f, 10.0f, 10.0f};
        bd.transform = random_transform(&r, i == 3 ? 1 : 2, lo, hi);
        assert_int_equal(kcc_world_add_body(w, mesh[i], &bd, &id[i]), KCC_OK);
    }
    assert_int_equal(kcc_world_step(w), KCC_OK);
    const kcc_static_tree *st = &w->statics;
    assert_true(st->valid);
    assert_true(st->member[id_slot(id[0])] && !st->member[id_slot(id[1])]);
    uint32_t listed = 0;
    for (int i = 0; i < 3; ++i)
        listed += st->member[id_slot(id[i])] ? mesh[i]->tree_triangles : 0;
    assert_int_equal(st->listed, listed);
    int hits = 0;
    for (int q = 0; q < 200; ++q) {
        float o[3], d[3];
        for (int k = 0; k < 3; ++k)
            o[k] = rng_f(&r, -20.0f, 20.0f), d[k] = rng_f(&r, -1.0f, 1.0f);
        hits += ray_both_paths(w, o, d, 40.0f, KCC_LAYERS_ALL);
    }
    assert_true(hits > 20);
    kcc_world_destroy(w);
    for (int i = 0; i < 4; ++i)
        kcc_mesh_destroy(mesh[i]);
    free(soup);
}

/* A translated body's tree is culled with the world box moved into its frame; the placed corner
 * x + t rounds, so a box that touches a placed corner can miss it by an ulp once moved back (x + t
 * - t > x): the culling box must be grown by the rounding. Triangles whose placed corner rounds
 * that way, each touched by a box whose face is exactly the placed corner: every one is found. */
static void world_queries_cull_translated_bodies_conservatively(void **state)
{
    (void)state;
    test_rng r = rng_seed(71);
    int checked = 0;
    for (int attempt = 0; attempt < 20000 && checked < 20; ++attempt) {
        const float x = rng_f(&r, 0.1f, 2.0f), t = rng_f(&r, 100.0f, 3000.0f);
        const float placed = x + t;
        if (!(placed - t > x))
            continue; /* the world box moved back still covers x: nothing to check */
        const float tri[9] = {x, 0.0f, 0.0f, x - 1.0f, 1.0f, 0.0f, x - 1.0f, 0.0f, 1.0f};
        kcc_mesh *mesh = build_soup(tri, 1);
        kcc_world *w = NULL;
        assert_int_equal(kcc_world_create(NULL, &w), KCC_OK);
        kcc_body_desc d = kcc_body_default_desc();
        d.transform.position[0] = t;
        uint32_t id;
        assert_int_equal(kcc_world_add_body(w, mesh, &d, &id), KCC_OK);
        const float box[2][3] = {{placed, -0.5f, -0.5f}, {placed + 1.0f, 0.5f, 0.5f}};
        kcc_body_triangle out[1];
        assert_int_equal(kcc_world_overlap_aabb(w, CB(box), KCC_LAYERS_ALL, out, 1), 1);
        const float delta[3] = {-1.0f, 0.0f, 0.0f}, away[2][3] = {{placed + 0.5f, -0.5f, -0.5f},
                                                                  {placed + 1.0f, 0.5f, 0.5f}};
        kcc_world_sweep_hit sh;
        assert_true(kcc_world_sweep_aabb(w, CB(away), delta, KCC_LAYERS_ALL, &sh));
        kcc_world_destroy(w);
        kcc_mesh_destroy(mesh);
        ++checked;
    }
    assert_true(checked == 20);
}

/* True when slots first .. first + count - 1 lie within one leaf of mesh's tree. */
static bool run_within_one_leaf(const kcc_mesh *mesh, uint32_t first, uint32_t count)
{
    for (uint32_t g = 0; g < mesh->quad_count; ++g)
        for (int i = 0; i < 4; ++i) {
            const uint32_t lo = mesh->groups[g].first[i], n = mesh->groups[g].count[i];
            if (n > 0 && lo <= first && first + count <= lo + n)
                return true;
        }
    return false;
}

/* The slot of triangle i of static-tree entry e: from the slot list for a listed entry (a rotated
 * body's), else the run's own. */
static uint32_t entry_slot(const kcc_static_tree *st, const kcc_static_leaf *e, uint32_t i)
{
    return e->listed ? st->slots[e->first + i] : e->first + i;
}

/* The static tree's entry blocks (kcc_static_box4, in leaf order) bound what the ray tests: every
 * corner of an entry's triangles placed as the queries place it (kcc_body_corners) lies inside the
 * entry's lane, every lane past the last entry is the empty box (no ray enters it), a rotated
 * body's entries list their slots (the others are runs of its mesh's slots within one leaf of its
 * tree), and every member's triangle is in exactly one entry. A soup split into 27 pieces placed
 * rotated, translated and in place; checked after two builds, the pieces moved between them. */
static void world_static_tree_entry_blocks_bound_their_placed_triangles(void **state)
{
    (void)state;
    test_rng r = rng_seed(91);
    float *soup = random_soup(&r, 700);
    split_world sw;
    split_world_make(&sw, soup, 700, 92);
    for (int round = 0; round < 2; ++round) {
        if (round == 1)
            for (uint32_t p = 0; p < sw.count; p += 3) {
                const kcc_transform t = random_transform(&r, 1 + p % 3, sw.lo, sw.hi);
                assert_int_equal(kcc_world_set_body_transform(sw.world, sw.pieces[p].id, &t), KCC_OK);
            }
        assert_int_equal(kcc_world_step(sw.world), KCC_OK);
        const kcc_static_tree *st = &sw.world->statics;
        assert_true(st->valid && st->count > 0);
        uint32_t triangles = 0, listed = 0;
        uint8_t *seen = calloc((size_t)sw.world->body_end * 700, 1);
        assert_non_null(seen);
        for (uint32_t k = 0; k < (st->count + 3) / 4 * 4; ++k) {
            const kcc_static_box4 *box = &st->boxes[k / 4];
            const uint32_t lane = k % 4;
            const float lo[3] = {box->x[0][lane], box->y[0][lane], box->z[0][lane]};
            const float hi[3] = {box->x[1][lane], box->y[1][lane], box->z[1][lane]};
            if (k >= st->count) {
                for (int a = 0; a < 3; ++a)
                    assert_true(lo[a] == INFINITY && hi[a] == -INFINITY);
                continue;
            }
            const kcc_static_leaf *e = &st->leaves[k];
            const kcc_body *b = &sw.world->bodies[e->body];
            assert_true(e->count >= 1 && e->count <= KCC_LEAF_MAX);
            assert_int_equal(e->listed, b->pose.rotated);
            if (e->listed) {
                assert_true(e->first + e->count <= st->listed);
                listed += e->count;
            } else {
                assert_true(e->first + e->count <= b->mesh->tree_triangles);
                assert_true(run_within_one_leaf(b->mesh, e->first, e->count));
            }
            for (uint32_t i = 0; i < e->count; ++i, ++triangles) {
                const uint32_t s = entry_slot(st, e, i);
                assert_true(s < b->mesh->tree_triangles && b->mesh->tree_triangles <= 700);
                assert_int_equal(seen[e->body * 700 + s]++, 0);
                float placed[3][3];
                kcc_body_corners(b, s, placed);
                for (int c = 0; c < 3; ++c)
                    for (int a = 0; a < 3; ++a)
                        assert_true(lo[a] <= placed[c][a] && placed[c][a] <= hi[a]);
            }
        }
        free(seen);
        assert_int_equal(listed, st->listed);
        uint32_t live = 0; /* every static piece's triangles are in exactly its entries */
        for (uint32_t p = 0; p < sw.count; ++p)
            live += sw.pieces[p].live ? kcc_world_find_body(sw.world, sw.pieces[p].id)->mesh->tree_triangles : 0;
        assert_int_equal(triangles, live);
    }
    split_world_free(&sw);
    free(soup);
}

/* Bad arguments answer false or 0 (hit records untouched), never a crash; an empty world too. */
static void world_queries_refuse_bad_arguments(void **state)
{
    (void)state;
    kcc_world *w = NULL;
    assert_int_equal(kcc_world_create(NULL, &w), KCC_OK);
    const float o[3] = {0, 0, 0}, d[3] = {1, 0, 0}, zero[3] = {0, 0, 0};
    const float nan3[3] = {NAN, 0, 0}, inf3[3] = {INFINITY, 0, 0};
    const float box[2][3] = {{-1, -1, -1}, {1, 1, 1}}, flipped[2][3] = {{1, -1, -1}, {-1, 1, 1}};
    const float nan_box[2][3] = {{-1, NAN, -1}, {1, 1, 1}};
    kcc_world_hit h;
    kcc_world_sweep_hit sh;
    kcc_body_triangle out[4];
    assert_false(kcc_world_raycast(w, o, d, 10.0f, &h)); /* empty world */
    test_rng r = rng_seed(51);
    float *soup = random_soup(&r, 50);
    kcc_mesh *mesh = build_soup(soup, 50);
    uint32_t body;
    assert_int_equal(kcc_world_add_body(w, mesh, NULL, &body), KCC_OK);
    /* A ray from far away toward triangle 0's centroid: it hits something. */
    float far_o[3] = {-100, 0, 0}, dir_in[3];
    for (int k = 0; k < 3; ++k)
        dir_in[k] = (soup[k] + soup[3 + k] + soup[6 + k]) / 3.0f - far_o[k];
    memset(&h, 0x5a, sizeof h);
    const kcc_world_hit untouched = h;
    assert_false(kcc_world_raycast(NULL, far_o, dir_in, INFINITY, &h));
    assert_false(kcc_world_raycast(w, NULL, dir_in, INFINITY, &h));
    assert_false(kcc_world_raycast(w, far_o, NULL, INFINITY, &h));
    assert_false(kcc_world_raycast(w, far_o, dir_in, INFINITY, NULL));
    assert_false(kcc_world_raycast(w, nan3, dir_in, INFINITY, &h));
    assert_false(kcc_world_raycast(w, inf3, dir_in, INFINITY, &h));
    assert_false(kcc_world_raycast(w, far_o, zero, INFINITY, &h));
    assert_false(kcc_world_raycast(w, far_o, nan3, INFINITY, &h));
    assert_false(kcc_world_raycast(w, far_o, dir_in, -1.0f, &h));
    assert_false(kcc_world_raycast(w, far_o, dir_in, NAN, &h));
    assert_false(kcc_world_raycast_layers(w, far_o, dir_in, INFINITY, 0u, &h));
    assert_true(memcmp(&h, &untouched, sizeof h) == 0);
    assert_int_equal(kcc_world_overlap_aabb(NULL, CB(box), KCC_LAYERS_ALL, out, 4), 0);
    assert_int_equal(kcc_world_overlap_aabb(w, NULL, KCC_LAYERS_ALL, out, 4), 0);
    assert_int_equal(kcc_world_overlap_aabb(w, CB(flipped), KCC_LAYERS_ALL, out, 4), 0);
    assert_int_equal(kcc_world_overlap_aabb(w, CB(nan_box), KCC_LAYERS_ALL, out, 4), 0);
    assert_int_equal(kcc_world_overlap_aabb(w, CB(box), KCC_LAYERS_ALL, NULL, 4), 0);
    assert_false(kcc_world_sweep_aabb(NULL, CB(box), d, KCC_LAYERS_ALL, &sh));
    assert_false(kcc_world_sweep_aabb(w, NULL, d, KCC_LAYERS_ALL, &sh));
    assert_false(kcc_world_sweep_aabb(w, CB(box), NULL, KCC_LAYERS_ALL, &sh));
    assert_false(kcc_world_sweep_aabb(w, CB(box), d, KCC_LAYERS_ALL, NULL));
    assert_false(kcc_world_sweep_aabb(w, CB(flipped), d, KCC_LAYERS_ALL, &sh));
    assert_false(kcc_world_sweep_aabb(w, CB(nan_box), d, KCC_LAYERS_ALL, &sh));
    assert_false(kcc_world_sweep_aabb(w, CB(box), nan3, KCC_LAYERS_ALL, &sh));
    assert_false(kcc_world_sweep_aabb(w, CB(box), zero, KCC_LAYERS_ALL, &sh));
    /* The same valid calls answer (the refusals above are the arguments' doing). */
    assert_true(kcc_world_raycast(w, far_o, dir_in, INFINITY, &h));
    const float big[2][3] = {{-20, -20, -20}, {20, 20, 20}};
    assert_true(kcc_world_overlap_aabb(w, CB(big), KCC_LAYERS_ALL, NULL, 0) > 0);
    kcc_world_destroy(w);
    kcc_mesh_destroy(mesh);
    free(soup);
}

/* The default allocator (collide/base.c) starts a block of at least 2 MiB on a 2 MiB boundary and,
 * on Linux with transparent huge pages, advises its whole huge pages MADV_HUGEPAGE (the ray cast's
 * static tree reads fewer pages: docs/world.md, "World queries"): the default world's block (17 MB)
 * starts on the boundary and its mapping carries the advice ("hg" among smaps' VmFlags); a world of
 * one body (under 2 MiB) is an ordinary block, aligned as asked. */
static void the_default_allocator_puts_a_world_on_huge_pages(void **state)
{
    (void)state;
    const uintptr_t huge = (uintptr_t)2 << 20;
    kcc_world *big = NULL, *small = NULL;
    assert_int_equal(kcc_world_create(NULL, &big), KCC_OK);
    assert_true(kcc_world_memory_bytes(big) >= 2 * huge);
    assert_int_equal((uintptr_t)big % huge, 0);
    kcc_world_desc d = kcc_world_default_desc();
    d.body_capacity = d.character_capacity = d.piece_capacity = d.sensor_capacity = 1;
    assert_int_equal(kcc_world_create(&d, &small), KCC_OK);
    assert_true(kcc_world_memory_bytes(small) < huge);
    assert_int_equal((uintptr_t)small % 64, 0);
#ifdef __linux__
    FILE *thp = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    FILE *smaps = thp ? fopen("/proc/self/smaps", "r") : NULL;
    if (smaps) {
        char line[4096], perms[8];
        bool inside = false, advised = false, found = false;
        while (!found && fgets(line, sizeof line, smaps)) {
            unsigned long lo, hi;
            if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3) /* a mapping's first line */
                inside = (uintptr_t)big >= lo && (uintptr_t)big < hi;
            else if (inside && strncmp(line, "VmFlags:", 8) == 0)
                found = true, advised = strstr(line, " hg") != NULL;
        }
        fclose(smaps);
        assert_true(found && advised);
    }
    if (thp)
        fclose(thp);
#endif
    kcc_world_destroy(small);
    kcc_world_destroy(big);
}

int test_group_world_query(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(world_queries_match_brute_force_on_split_generated_levels),
        cmocka_unit_test(world_queries_match_brute_force_on_the_split_shared_level),
        cmocka_unit_test(world_queries_match_brute_force_10_km_out),
        cmocka_unit_test(world_queries_follow_kinematic_bodies_on_scripted_paths),
        cmocka_unit_test(world_queries_skip_removed_bodies_on_stale_and_rebuilt_trees),
        cmocka_unit_test(world_queries_answer_alike_in_the_avx2_build_and_the_baseline),
        cmocka_unit_test(world_queries_break_ties_by_the_lowest_body_slot),
        cmocka_unit_test(world_queries_cull_translated_bodies_conservatively),
        cmocka_unit_test(world_rays_through_the_static_tree_equal_the_rays_without_it),
        cmocka_unit_test(world_box_queries_through_the_static_tree_equal_those_without_it),
        cmocka_unit_test(world_static_tree_entry_blocks_bound_their_placed_triangles),
        cmocka_unit_test(world_static_tree_keeps_rotated_members_within_its_room),
        cmocka_unit_test(world_queries_refuse_bad_arguments),
        cmocka_unit_test(the_default_allocator_puts_a_world_on_huge_pages),
    };
    return KCC_RUN_GROUP("world_query", tests);
}
