/* fuzz_world.c: libFuzzer target for the world (collide/world.c, world_query.c, transform.c). The
 * bytes build up to three small meshes (corners on a 0.25 m grid: shared edges, coplanar and
 * degenerate triangles are common; one in four a small heightfield with holes), a world with a small capacity and either broadphase, and up
 * to 96 operations: add bodies (raw or grid transforms, bad quaternions, bad layers), remove, move
 * and set them (live, stale and never-issued ids), step, and query. Checks, aborting on failure:
 * - every call's status is what a model of the live ids predicts (NOT_FOUND exactly for ids not
 *   live, TOO_LARGE exactly at capacity, transforms refused exactly when their rotation's length
 *   is not within 1e-3 of 1 or a coordinate is not finite);
 * - box overlaps and sweeps, sphere overlaps and sphere and capsule sweeps answer exactly as the
 *   per-triangle tests on the placed corners (kcc_transform_point) of every live body the mask sees, and a ray's hit lies on the placed
 *   triangle it names, within the rounding of the ray's passage into each body's frame
 *   (test_world_query.c checks rays exactly).
 * `make fuzz` explores with it, `make fuzz-check` (part of `make test`) repeats a fixed run. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "fuzz.h"
#include "kcc.h"

#define MAX_MESHES 3
#define MAX_TRIS   16
#define MAX_OPS    96
#define CAPACITY   6

typedef struct model_body {
    uint32_t        id;
    const kcc_mesh *mesh;
    uint32_t        layers;
    bool            kinematic;
} model_body;

typedef struct model {
    kcc_world  *world;
    kcc_mesh   *meshes[MAX_MESHES];
    uint32_t    mesh_count;
    model_body  live[CAPACITY];
    uint32_t    live_count;
    uint32_t    dead[MAX_OPS];
    uint32_t    dead_count;
} model;

/* A heightfield of up to 5 x 5 samples (heights, spacing and origin on the 0.25 m grid: flat
 * cells, shared planes and exact ties), about a fifth of its cells holes. */
static kcc_mesh *read_heightfield(reader *r)
{
    float heights[25];
    uint8_t holes[16];
    kcc_heightfield_desc d = {0};
    d.columns = 2 + byte(r) % 4, d.rows = 2 + byte(r) % 4;
    for (uint32_t i = 0; i < d.columns * d.rows; ++i)
        heights[i] = grid(r) * 0.25f;
    for (uint32_t c = 0; c < (d.columns - 1) * (d.rows - 1); ++c)
        holes[c] = byte(r) % 5 == 0;
    d.spacing[0] = 0.25f * (float)(1 + byte(r) % 8), d.spacing[1] = 0.25f * (float)(1 + byte(r) % 8);
    for (int k = 0; k < 3; ++k)
        d.origin[k] = grid(r);
    d.heights = heights, d.holes = holes;
    kcc_mesh *m = NULL;
    return kcc_heightfield_build(&d, &m) == KCC_OK ? m : NULL;
}

/* A tree mesh of up to MAX_TRIS triangles on the 0.25 m grid, or (one time in four) a heightfield. */
static kcc_mesh *read_mesh(reader *r)
{
    if (byte(r) % 4 == 0)
        return read_heightfield(r);
    float pos[MAX_TRIS * 9];
    const uint32_t n = 1 + byte(r) % MAX_TRIS;
    for (uint32_t i = 0; i < 9 * n; ++i)
        pos[i] = grid(r) * 0.25f;
    kcc_mesh_desc d = {0};
    d.positions = pos;
    d.vertex_count = 3 * n;
    d.triangle_count = n;
    kcc_mesh *m = NULL;
    return kcc_mesh_build(&d, &m) == KCC_OK ? m : NULL;
}

/* A transform: mostly valid (grid position, a unit quaternion from four bytes), sometimes raw. */
static kcc_transform read_transform(reader *r)
{
    kcc_transform t;
    const uint8_t how = byte(r);
    for (int k = 0; k < 3; ++k)
        t.position[k] = how % 8 == 0 ? raw_float(r) : grid(r);
    double q[4], len = 0.0;
    for (int k = 0; k < 4; ++k) {
        q[k] = (int8_t)byte(r);
        len += q[k] * q[k];
    }
    for (int k = 0; k < 4; ++k)
        t.rotation[k] = len > 0.0 ? (float)(q[k] / sqrt(len)) : 0.0f;
    if (how % 8 == 1)
        t.rotation[byte(r) % 4] = raw_float(r);
    if (how % 8 == 2)
        t.rotation[3] = 0.0f, t.rotation[0] = t.rotation[1] = t.rotation[2] = 0.0f;
    if (how % 8 == 3)
        t.rotation[0] = t.rotation[1] = t.rotation[2] = 0.0f, t.rotation[3] = 1.0f;
    return t;
}

/* The status the API promises for a transform (API.md, kcc_world.h). */
static kcc_status expected_transform_status(const kcc_transform *t)
{
    double len = 0.0;
    for (int k = 0; k < 4; ++k) {
        if (!isfinite(t->rotation[k]))
            return KCC_ERR_NON_FINITE;
        len += (double)t->rotation[k] * t->rotation[k];
    }
    for (int k = 0; k < 3; ++k) {
        if (!isfinite(t->position[k]))
            return KCC_ERR_NON_FINITE;
        if (fabsf(t->position[k]) > 1e18f)
            return KCC_ERR_BAD_DESC;
    }
    return fabs(sqrt(len) - 1.0) <= 1e-3 ? KCC_OK : KCC_ERR_BAD_DESC;
}

/* An id to act on: a live one, a removed one, or raw bytes. */
static uint32_t pick_id(model *m, reader *r, int *live_index)
{
    const uint8_t how = byte(r);
    *live_index = -1;
    if (how % 3 == 0 && m->live_count > 0) {
        *live_index = (int)(byte(r) % m->live_count);
        return m->live[*live_index].id;
    }
    if (how % 3 == 1 && m->dead_count > 0)
        return m->dead[byte(r) % m->dead_count];
    const uint32_t index = byte(r);
    const uint32_t id = index | (uint32_t)byte(r) << 20;
    for (uint32_t i = 0; i < m->live_count; ++i) /* raw bytes may name a live body */
        if (m->live[i].id == id)
            *live_index = (int)i;
    return id;
}

static void op_add(model *m, reader *r)
{
    kcc_body_desc d = kcc_body_default_desc();
    d.kind = byte(r) % 2 ? KCC_BODY_KINEMATIC : KCC_BODY_STATIC;
    d.transform = read_transform(r);
    d.layers = byte(r) % 4;
    const kcc_mesh *mesh = m->meshes[byte(r) % m->mesh_count];
    uint32_t id = 0;
    const kcc_status got = kcc_world_add_body(m->world, mesh, &d, &id);
    kcc_status want = expected_transform_status(&d.transform);
    if (want == KCC_OK && d.layers == 0)
        want = KCC_ERR_BAD_DESC;
    if (want == KCC_OK && m->live_count == CAPACITY)
        want = KCC_ERR_TOO_LARGE;
    CHECK(got == want);
    if (got != KCC_OK)
        return;
    CHECK(id != 0);
    for (uint32_t i = 0; i < m->dead_count; ++i)
        CHECK(m->dead[i] != id);
    model_body b = {id, mesh, d.layers, d.kind == KCC_BODY_KINEMATIC};
    m->live[m->live_count++] = b;
}

static void op_remove(model *m, reader *r)
{
    int li;
    const uint32_t id = pick_id(m, r, &li);
    const kcc_status got = kcc_world_remove_body(m->world, id);
    CHECK(got == (li >= 0 ? KCC_OK : KCC_ERR_NOT_FOUND));
    if (li < 0)
        return;
    m->dead[m->dead_count++] = id;
    m->live[li] = m->live[--m->live_count];
}

static void op_move(model *m, reader *r, bool teleport)
{
    int li;
    const uint32_t id = pick_id(m, r, &li);
    const kcc_transform t = read_transform(r);
    const kcc_status got = teleport ? kcc_world_set_body_transform(m->world, id, &t)
                                    : kcc_world_move_body(m->world, id, &t);
    kcc_status want = li < 0 ? KCC_ERR_NOT_FOUND : KCC_OK;
    if (want == KCC_OK && !teleport && !m->live[li].kinematic)
        want = KCC_ERR_BAD_DESC;
    if (want == KCC_OK)
        want = expected_transform_status(&t);
    CHECK(got == want);
}

/* kcc_world_shift_origin: a NaN or infinite origin is refused; an accepted shift moves every body
 * by exactly the float subtraction; a refused one (a position beyond KCC_WORLD_MAX_POSITION, too
 * many pieces) moves nothing. */
static void op_shift(model *m, reader *r)
{
    const kcc_transform t = read_transform(r);
    kcc_transform before[CAPACITY];
    for (uint32_t b = 0; b < m->live_count; ++b)
        CHECK(kcc_world_get_body_transform(m->world, m->live[b].id, &before[b], NULL) == KCC_OK);
    const kcc_status got = kcc_world_shift_origin(m->world, t.position);
    const bool finite = isfinite(t.position[0]) && isfinite(t.position[1]) && isfinite(t.position[2]);
    CHECK(finite ? (got == KCC_OK || got == KCC_ERR_BAD_DESC || got == KCC_ERR_TOO_LARGE)
                 : got == KCC_ERR_NON_FINITE);
    for (uint32_t b = 0; b < m->live_count; ++b) {
        kcc_transform now;
        CHECK(kcc_world_get_body_transform(m->world, m->live[b].id, &now, NULL) == KCC_OK);
        for (int k = 0; k < 3; ++k) {
            const float want = got == KCC_OK ? before[b].position[k] - t.position[k] : before[b].position[k];
            CHECK(now.position[k] == want);
        }
    }
}

/* The placed corners of body b's triangle i; false for a triangle degenerate as built (no query
 * reports one, even where placement rounds its corners apart). A triangle is degenerate exactly
 * when it does not meet itself (kcc_tri_intersect_tri's rule). */
static bool placed_triangle(const model *m, const model_body *b, uint32_t i, vec3 out[3])
{
    vec3 local[3];
    kcc_transform pose;
    if (!kcc_mesh_triangle(b->mesh, i, local) ||
        !kcc_tri_intersect_tri(local[0], local[1], local[2], local[0], local[1], local[2], NULL))
        return false;
    CHECK(kcc_world_get_body_transform(m->world, b->id, &pose, NULL) == KCC_OK);
    for (int k = 0; k < 3; ++k)
        kcc_transform_point(&pose, local[k], out[k]);
    return true;
}

static void read_box(reader *r, vec3 box[2])
{
    for (int k = 0; k < 3; ++k) {
        box[0][k] = grid(r) * 0.25f;
        box[1][k] = box[0][k] + (float)(byte(r) % 16) * 0.125f;
    }
}

/* Overlap: the world's count and list against the per-triangle test on every placed triangle. */
static void op_overlap(model *m, reader *r)
{
    vec3 box[2];
    read_box(r, box);
    const uint32_t mask = 1u + byte(r) % 3;
    kcc_body_triangle got[CAPACITY * MAX_TRIS];
    const uint32_t n = kcc_world_overlap_aabb(m->world, (const vec3 *)box, mask, got,
                                              CAPACITY * MAX_TRIS);
    uint32_t want = 0;
    for (uint32_t b = 0; b < m->live_count; ++b) {
        const model_body *body = &m->live[b];
        for (uint32_t i = 0; (body->layers & mask) && i < kcc_mesh_triangle_count(body->mesh); ++i) {
            vec3 v[3];
            if (!placed_triangle(m, body, i, v) || !kcc_tri_overlap_aabb(v[0], v[1], v[2], (const vec3 *)box))
                continue;
            bool listed = false;
            for (uint32_t j = 0; j < n; ++j)
                listed = listed || (got[j].body == body->id && got[j].triangle == i);
            CHECK(listed);
            ++want;
        }
    }
    CHECK(n == want);
}

/* Sweep: the world's earliest contact against the per-triangle sweeps of the placed triangles. */
static void op_sweep(model *m, reader *r)
{
    vec3 box[2], delta;
    read_box(r, box);
    for (int k = 0; k < 3; ++k)
        delta[k] = grid(r) * 0.125f;
    kcc_world_sweep_hit hit;
    const bool got = kcc_world_sweep_aabb(m->world, (const vec3 *)box, delta, KCC_LAYERS_ALL, &hit);
    float best = INFINITY;
    for (uint32_t b = 0; b < m->live_count; ++b)
        for (uint32_t i = 0; i < kcc_mesh_triangle_count(m->live[b].mesh); ++i) {
            vec3 v[3], n;
            float t;
            bool start;
            if (placed_triangle(m, &m->live[b], i, v) &&
                kcc_tri_sweep_aabb(v[0], v[1], v[2], (const vec3 *)box, delta, &t, n, &start) && t < best)
                best = t;
        }
    CHECK(got == (best <= 1.0f));
    if (got)
        CHECK(hit.t == best);
}

/* Sphere and capsule: the world's sweeps and overlap against the per-triangle tests on every placed
 * triangle the mask sees (earliest t, ties to the lowest body slot then triangle; the same bits). */
static void op_sphere(model *m, reader *r)
{
    vec3 p0, p1, delta;
    for (int k = 0; k < 3; ++k) {
        p0[k] = grid(r) * 0.25f;
        p1[k] = p0[k] + (float)(byte(r) % 5) * 0.25f;
        delta[k] = grid(r) * 0.125f;
    }
    const float radius = (float)(1 + byte(r) % 16) * 0.0625f;
    const uint32_t mask = 1u + byte(r) % 3;
    const bool capsule = byte(r) % 2;
    kcc_world_sphere_hit got;
    const bool hit = capsule ? kcc_world_sweep_capsule(m->world, p0, p1, radius, delta, mask, &got)
                             : kcc_world_sweep_sphere(m->world, p0, radius, delta, mask, &got);
    kcc_body_triangle list[CAPACITY * MAX_TRIS];
    const uint32_t n = kcc_world_overlap_sphere(m->world, p0, radius, mask, list, CAPACITY * MAX_TRIS);
    float best = INFINITY;
    uint32_t best_slot = UINT32_MAX, best_tri = UINT32_MAX, want = 0;
    for (uint32_t b = 0; b < m->live_count; ++b) {
        const model_body *body = &m->live[b];
        const uint32_t slot = (body->id & 0xfffffu) - 1u;
        for (uint32_t i = 0; (body->layers & mask) && i < kcc_mesh_triangle_count(body->mesh); ++i) {
            vec3 v[3];
            kcc_sphere_hit h;
            if (!placed_triangle(m, body, i, v))
                continue;
            if (kcc_tri_overlap_sphere(v[0], v[1], v[2], p0, radius)) {
                bool listed = false;
                for (uint32_t j = 0; j < n; ++j)
                    listed = listed || (list[j].body == body->id && list[j].triangle == i);
                CHECK(listed);
                ++want;
            }
            const bool touch = capsule ? kcc_tri_sweep_capsule(v[0], v[1], v[2], p0, p1, radius, delta, &h)
                                       : kcc_tri_sweep_sphere(v[0], v[1], v[2], p0, radius, delta, &h);
            if (touch && (h.t < best || (h.t == best && (slot < best_slot ||
                                                         (slot == best_slot && i < best_tri)))))
                best = h.t, best_slot = slot, best_tri = i;
        }
    }
    CHECK(n == want);
    CHECK(hit == (best <= 1.0f));
    if (hit)
        CHECK(got.t == best && (got.body & 0xfffffu) - 1u == best_slot && got.triangle == best_tri);
}

/* Squared distance from p to triangle abc, in double (the closest point by regions, Ericson's
 * "Real-Time Collision Detection" 5.1.5). */
static double dot3(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static double point_triangle_d2(const double p[3], const double a[3], const double b[3],
                                const double c[3])
{
    double ab[3], ac[3], ap[3], bp[3], cp[3], q[3];
    for (int k = 0; k < 3; ++k)
        ab[k] = b[k] - a[k], ac[k] = c[k] - a[k], ap[k] = p[k] - a[k], bp[k] = p[k] - b[k],
        cp[k] = p[k] - c[k];
    const double d1 = dot3(ab, ap), d2 = dot3(ac, ap), d3 = dot3(ab, bp), d4 = dot3(ac, bp);
    const double d5 = dot3(ab, cp), d6 = dot3(ac, cp);
    const double va = d3 * d6 - d5 * d4, vb = d5 * d2 - d1 * d6, vc = d1 * d4 - d3 * d2;
    double u = 0.0, w = 0.0; /* q = a + u ab + w ac */
    if (d1 <= 0.0 && d2 <= 0.0) {
    } else if (d3 >= 0.0 && d4 <= d3) {
        u = 1.0;
    } else if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) {
        u = d1 / (d1 - d3);
    } else if (d6 >= 0.0 && d5 <= d6) {
        w = 1.0;
    } else if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) {
        w = d2 / (d2 - d6);
    } else if (va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0) {
        w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        u = 1.0 - w;
    } else {
        const double den = va + vb + vc;
        u = vb / den;
        w = vc / den;
    }
    for (int k = 0; k < 3; ++k)
        q[k] = a[k] + u * ab[k] + w * ac[k] - p[k];
    return dot3(q, q);
}

/* Ray: a hit is on a live body, within [0, max_t], and its point lies on the placed triangle it
 * names, within the rounding of the ray's passage into the body's frame (test_world_query.c checks
 * rays exactly; near an edge the body's frame and the world may decide a graze differently). */
static void op_ray(model *m, reader *r)
{
    vec3 origin, dir;
    for (int k = 0; k < 3; ++k)
        origin[k] = grid(r) * 0.25f, dir[k] = grid(r);
    const float max_t = (float)(1 + byte(r) % 8);
    kcc_world_hit hit;
    const bool got = kcc_world_raycast(m->world, origin, dir, max_t, &hit);
    if (dir[0] == 0.0f && dir[1] == 0.0f && dir[2] == 0.0f) {
        CHECK(!got);
        return;
    }
    if (!got)
        return;
    CHECK(hit.t >= 0.0f && hit.t <= max_t);
    const kcc_mesh *mesh = kcc_world_body_mesh(m->world, hit.body);
    CHECK(mesh != NULL);
    int li = -1;
    for (uint32_t b = 0; b < m->live_count; ++b)
        if (m->live[b].id == hit.body)
            li = (int)b;
    CHECK(li >= 0);
    vec3 v[3];
    CHECK(placed_triangle(m, &m->live[li], hit.triangle, v));
    double p[3], a[3], b3[3], c[3], scale = 1.0;
    for (int k = 0; k < 3; ++k) {
        p[k] = (double)origin[k] + (double)hit.t * dir[k];
        a[k] = v[0][k], b3[k] = v[1][k], c[k] = v[2][k];
        scale = fmax(scale, fmax(fabs(p[k]), fmax(fabs(a[k]), fmax(fabs(b3[k]), fabs(c[k])))));
    }
    const double tol = 1e-5 * scale * (1.0 + sqrt(dot3((double[3]){dir[0], dir[1], dir[2]},
                                                        (double[3]){dir[0], dir[1], dir[2]})));
    CHECK(point_triangle_d2(p, a, b3, c) <= tol * tol);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = {data, size};
    model m;
    memset(&m, 0, sizeof m);
    const uint32_t meshes = 1 + byte(&r) % MAX_MESHES;
    for (uint32_t i = 0; i < meshes; ++i)
        if ((m.meshes[m.mesh_count] = read_mesh(&r)) != NULL)
            ++m.mesh_count;
    kcc_world_desc d = kcc_world_default_desc();
    d.body_capacity = CAPACITY;
    d.character_capacity = 1;
    d.piece_capacity = 64;
    d.broadphase = (kcc_broadphase_kind)(byte(&r) % 3);
    if (m.mesh_count > 0 && kcc_world_create(&d, &m.world) == KCC_OK) {
        for (int op = 0; op < MAX_OPS && r.n > 0; ++op) {
            switch (byte(&r) % 9) {
            case 0: case 1: op_add(&m, &r); break;
            case 2: op_remove(&m, &r); break;
            case 3: op_move(&m, &r, false); break;
            case 4: op_move(&m, &r, true); break;
            case 5: CHECK(kcc_world_step(m.world) == KCC_OK); break;
            case 6: op_overlap(&m, &r); op_sweep(&m, &r); op_sphere(&m, &r); break;
            case 7: op_shift(&m, &r); break;
            default: op_ray(&m, &r); break;
            }
        }
        kcc_world_destroy(m.world);
    }
    for (uint32_t i = 0; i < m.mesh_count; ++i)
        kcc_mesh_destroy(m.meshes[i]);
    return 0;
}
