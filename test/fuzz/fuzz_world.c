/* fuzz_world.c: libFuzzer target for the world (collide/world.c, world_query.c, transform.c). The
 * bytes build up to three small meshes (corners on a 0.25 m grid: shared edges, coplanar and
 * degenerate triangles are common; one in four a small heightfield with holes), a world with a small capacity and either broadphase, and up
 * to 96 operations: add bodies (raw or grid transforms, bad quaternions, bad layers), remove, move
 * and set them (live, stale and never-issued ids), step, and query; and (op bytes from CHARACTER_OPS
 * up) sensors, body layers and up to CHARACTERS characters: add (raw descs and centres), remove,
 * displace, teleport, retune, layer. Checks, aborting on failure:
 * - every call's status is what a model of the live ids predicts (NOT_FOUND exactly for ids not
 *   live, TOO_LARGE exactly at capacity, transforms refused exactly when their rotation's length
 *   is not within 1e-3 of 1 or a coordinate is not finite, descs exactly as
 *   kcc_character_desc_validate refuses them);
 * - after a step every character's state is finite, its flags known, its contacts and ground name
 *   live solid bodies or live characters, and every sensor event a sensor and a character that
 *   are live (or removed, for a leave); an accepted teleport or origin shift puts a character
 *   exactly there;
 * - box overlaps and sweeps, sphere overlaps and sphere and capsule sweeps answer exactly as the
 *   per-triangle tests on the placed corners (kcc_transform_point) of every live solid body the mask sees, and a ray's hit lies on the placed
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
#define BODY_TRIS  32 /* the most triangles a mesh has: MAX_TRIS, or a 5 x 5 heightfield's 32 */
#define MAX_OPS    96
#define CAPACITY   6
#define CHARACTERS 3
#define CHARACTER_OPS 243 /* op bytes from here up: sensors, layers, characters (243 = 27 * 9:
                             the body ops below keep the byte % 9 they always had) */

typedef struct model_body {
    uint32_t        id;
    const kcc_mesh *mesh;
    uint32_t        layers;
    bool            kinematic;
    bool            sensor;     /* not solid: no query reports it */
} model_body;

typedef struct model {
    kcc_world  *world;
    kcc_mesh   *meshes[MAX_MESHES];
    uint32_t    mesh_count;
    bool        degenerate[MAX_MESHES][BODY_TRIS]; /* as built (placed_triangle) */
    model_body  live[CAPACITY];
    uint32_t    live_count;
    uint32_t    dead[MAX_OPS];
    uint32_t    dead_count;
    uint32_t    characters[CHARACTERS];
    uint32_t    character_count;
    uint32_t    gone[MAX_OPS];          /* removed characters */
    uint32_t    gone_count;
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

static void op_add(model *m, reader *r, bool sensor)
{
    kcc_body_desc d = kcc_body_default_desc();
    d.sensor = sensor;
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
    model_body b = {id, mesh, d.layers, d.kind == KCC_BODY_KINEMATIC, sensor};
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
    kcc_character_state was[CHARACTERS];
    for (uint32_t c = 0; c < m->character_count; ++c)
        CHECK(kcc_world_get_character(m->world, m->characters[c], &was[c], NULL) == KCC_OK);
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
    for (uint32_t c = 0; c < m->character_count; ++c) {
        kcc_character_state now;
        CHECK(kcc_world_get_character(m->world, m->characters[c], &now, NULL) == KCC_OK);
        for (int k = 0; k < 3; ++k)
            CHECK(now.position[k] == (got == KCC_OK ? was[c].position[k] - t.position[k] : was[c].position[k]));
    }
}

/* The placed corners of body b's triangle i; false for a triangle degenerate as built (no query
 * reports one, even where placement rounds its corners apart). A triangle is degenerate exactly
 * when it does not meet itself (kcc_tri_intersect_tri's rule). */
static bool placed_triangle(const model *m, const model_body *b, uint32_t i, vec3 out[3])
{
    vec3 local[3];
    kcc_transform pose;
    uint32_t mesh = 0;
    while (m->meshes[mesh] != b->mesh)
        ++mesh;
    if (!kcc_mesh_triangle(b->mesh, i, local) || m->degenerate[mesh][i])
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
    kcc_body_triangle got[CAPACITY * BODY_TRIS];
    const uint32_t n = kcc_world_overlap_aabb(m->world, (const vec3 *)box, mask, got,
                                              CAPACITY * BODY_TRIS);
    uint32_t want = 0;
    for (uint32_t b = 0; b < m->live_count; ++b) {
        const model_body *body = &m->live[b];
        for (uint32_t i = 0; (body->layers & mask) && !body->sensor && i < kcc_mesh_triangle_count(body->mesh); ++i) {
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
        for (uint32_t i = 0; !m->live[b].sensor && i < kcc_mesh_triangle_count(m->live[b].mesh); ++i) {
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
    kcc_body_triangle list[CAPACITY * BODY_TRIS];
    const uint32_t n = kcc_world_overlap_sphere(m->world, p0, radius, mask, list, CAPACITY * BODY_TRIS);
    float best = INFINITY;
    uint32_t best_slot = UINT32_MAX, best_tri = UINT32_MAX, want = 0;
    for (uint32_t b = 0; b < m->live_count; ++b) {
        const model_body *body = &m->live[b];
        const uint32_t slot = (body->id & 0xfffffu) - 1u;
        for (uint32_t i = 0; (body->layers & mask) && !body->sensor && i < kcc_mesh_triangle_count(body->mesh); ++i) {
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
    CHECK(li >= 0 && !m->live[li].sensor);
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

/* ---- sensors, layers and characters (op bytes from CHARACTER_OPS up) ---- */

/* A character id to act on: a live one, a removed one, or raw bytes (*live_index: which live one
 * it names, or -1). */
static uint32_t pick_character(const model *m, reader *r, int *live_index)
{
    const uint8_t how = byte(r);
    uint32_t id;
    if (how % 3 == 0 && m->character_count > 0)
        id = m->characters[byte(r) % m->character_count];
    else if (how % 3 == 1 && m->gone_count > 0)
        id = m->gone[byte(r) % m->gone_count];
    else
        id = byte(r) | (uint32_t)byte(r) << 20;
    *live_index = -1;
    for (uint32_t i = 0; i < m->character_count; ++i)
        if (m->characters[i] == id)
            *live_index = (int)i;
    return id;
}

/* A desc: mostly in range on a 0.25 m grid, sometimes one raw field or a raw up axis. */
static kcc_character_desc read_character_desc(reader *r)
{
    kcc_character_desc d = kcc_character_default_desc();
    const uint8_t how = byte(r);
    if (how % 4 == 1) {
        for (int k = 0; k < 3; ++k)
            d.half_extents[k] = 0.125f * (float)(1 + byte(r) % 16);
        d.step_height = fminf(0.125f * (float)(byte(r) % 8), 1.8f * d.half_extents[1]);
        d.max_slope_deg = (float)(byte(r) % 90);
        d.ground_snap = 0.125f * (float)(byte(r) % 16);
    }
    if (how % 4 == 2) {
        float *fields[] = {&d.half_extents[0], &d.half_extents[1], &d.half_extents[2], &d.step_height,
                           &d.max_slope_deg, &d.skin_width, &d.ground_snap, &d.max_push_out};
        *fields[byte(r) % 8] = raw_float(r);
    }
    if (how % 4 == 3)
        d.up_axis = (int)(byte(r) % 9) - 4;
    return d;
}

/* A point: mostly on the 0.25 m grid, sometimes raw floats. */
static void read_point(reader *r, vec3 out)
{
    const bool raw = byte(r) % 8 == 0;
    for (int k = 0; k < 3; ++k)
        out[k] = raw ? raw_float(r) : grid(r);
}

/* The status the API promises for a character's centre or a teleport's target. */
static kcc_status expected_center_status(const vec3 c)
{
    for (int k = 0; k < 3; ++k)
        if (!isfinite(c[k]))
            return KCC_ERR_NON_FINITE;
    for (int k = 0; k < 3; ++k)
        if (fabsf(c[k]) > KCC_WORLD_MAX_POSITION)
            return KCC_ERR_BAD_DESC;
    return KCC_OK;
}

static void op_add_character(model *m, reader *r)
{
    const kcc_character_desc d = read_character_desc(r);
    vec3 center;
    read_point(r, center);
    uint32_t id = 0;
    const kcc_status got = kcc_world_add_character(m->world, &d, center, &id);
    kcc_status want = kcc_character_desc_validate(&d);
    if (want == KCC_OK)
        want = expected_center_status(center);
    if (want == KCC_OK && m->character_count == CHARACTERS)
        want = KCC_ERR_TOO_LARGE;
    CHECK(got == want);
    if (got != KCC_OK)
        return;
    CHECK(id != 0);
    for (uint32_t i = 0; i < m->gone_count; ++i)
        CHECK(m->gone[i] != id);
    m->characters[m->character_count++] = id;
}

static void op_remove_character(model *m, reader *r)
{
    int li;
    const uint32_t id = pick_character(m, r, &li);
    CHECK(kcc_world_remove_character(m->world, id) == (li >= 0 ? KCC_OK : KCC_ERR_NOT_FOUND));
    if (li < 0)
        return;
    m->gone[m->gone_count++] = id;
    m->characters[li] = m->characters[--m->character_count];
}

/* Displace, teleport, retune or layer a character (which: 0..3). */
static void op_steer_character(model *m, reader *r, int which)
{
    int li;
    const uint32_t id = pick_character(m, r, &li);
    vec3 v;
    kcc_status got, want = li < 0 ? KCC_ERR_NOT_FOUND : KCC_OK;
    if (which == 0) {
        read_point(r, v);
        got = kcc_world_set_displacement(m->world, id, v);
        for (int k = 0; k < 3 && want == KCC_OK; ++k)
            want = !isfinite(v[k]) ? KCC_ERR_NON_FINITE : KCC_OK;
        for (int k = 0; k < 3 && want == KCC_OK; ++k)
            want = fabsf(v[k]) > KCC_MAX_DISPLACEMENT ? KCC_ERR_BAD_DESC : KCC_OK;
    } else if (which == 1) {
        read_point(r, v);
        got = kcc_world_set_character_position(m->world, id, v);
        if (want == KCC_OK)
            want = expected_center_status(v);
        kcc_character_state st;
        if (got == KCC_OK && kcc_world_get_character(m->world, id, &st, NULL) == KCC_OK)
            CHECK(memcmp(st.position, v, sizeof v) == 0 && !st.on_ground && st.ground_body == 0);
    } else if (which == 2) {
        const kcc_character_desc d = read_character_desc(r);
        got = kcc_world_set_character_desc(m->world, id, &d);
        if (want == KCC_OK)
            want = kcc_character_desc_validate(&d);
    } else {
        const uint32_t layers = byte(r) % 4, mask = byte(r) % 2 ? KCC_LAYERS_ALL : byte(r) % 4;
        got = kcc_world_set_character_layers(m->world, id, layers, mask);
        if (want == KCC_OK && layers == 0)
            want = KCC_ERR_BAD_DESC;
    }
    CHECK(got == want);
}

static void op_body_layers(model *m, reader *r)
{
    int li;
    const uint32_t id = pick_id(m, r, &li);
    const uint32_t layers = byte(r) % 4;
    const kcc_status got = kcc_world_set_body_layers(m->world, id, layers);
    CHECK(got == (li < 0 ? KCC_ERR_NOT_FOUND : layers == 0 ? KCC_ERR_BAD_DESC : KCC_OK));
    if (got == KCC_OK)
        m->live[li].layers = layers;
}

static bool is_live_character(const model *m, uint32_t id)
{
    for (uint32_t i = 0; i < m->character_count; ++i)
        if (m->characters[i] == id)
            return true;
    return false;
}

/* A live body that is solid (not a sensor) or, with want_sensor, a live sensor. */
static bool is_live_body(const model *m, uint32_t id, bool want_sensor)
{
    for (uint32_t i = 0; i < m->live_count; ++i)
        if (m->live[i].id == id)
            return m->live[i].sensor == want_sensor;
    return false;
}

/* A step, then every character's state, result and contacts and the step's sensor events. */
static void op_step_characters(model *m)
{
    CHECK(kcc_world_step(m->world) == KCC_OK);
    const uint32_t known = KCC_MOVE_ON_GROUND | KCC_MOVE_HIT_WALL | KCC_MOVE_HIT_CEILING |
                           KCC_MOVE_STEPPED_UP | KCC_MOVE_SLID | KCC_MOVE_STUCK | KCC_MOVE_ON_STEEP |
                           KCC_MOVE_SNAPPED_DOWN | KCC_MOVE_PUSHED_OUT | KCC_MOVE_BAD_INPUT |
                           KCC_MOVE_LANDED | KCC_MOVE_CONTACT_CAP | KCC_MOVE_CRUSHED;
    CHECK(kcc_world_character_count(m->world) == m->character_count);
    for (uint32_t c = 0; c < m->character_count; ++c) {
        kcc_character_state st;
        kcc_move_result res;
        CHECK(kcc_world_get_character(m->world, m->characters[c], &st, &res) == KCC_OK);
        CHECK(isfinite(st.position[0]) && isfinite(st.position[1]) && isfinite(st.position[2]));
        CHECK((res.flags & ~known) == 0);
        CHECK(st.ground_body == 0 || is_live_body(m, st.ground_body, false));
        CHECK(res.ground_character == 0 || is_live_character(m, res.ground_character));
        kcc_contact contacts[KCC_WORLD_CONTACTS];
        bool overflow;
        const uint32_t n = kcc_world_get_contacts(m->world, m->characters[c], contacts,
                                                  KCC_WORLD_CONTACTS, &overflow);
        CHECK(n <= KCC_WORLD_CONTACTS);
        for (uint32_t i = 0; i < n; ++i) {
            const kcc_contact *k = &contacts[i];
            CHECK((k->body == 0) != (k->character == 0));
            CHECK(k->body ? is_live_body(m, k->body, false) : is_live_character(m, k->character));
            CHECK(fabsf(sqrtf(k->normal[0] * k->normal[0] + k->normal[1] * k->normal[1] + k->normal[2] * k->normal[2]) - 1.0f) < 1e-3f);
        }
    }
    for (uint32_t g = 0; g < m->gone_count; ++g) {
        bool overflow = true;
        CHECK(kcc_world_get_character(m->world, m->gone[g], NULL, NULL) == KCC_ERR_NOT_FOUND);
        CHECK(kcc_world_get_contacts(m->world, m->gone[g], NULL, 0, &overflow) == 0 && !overflow);
    }
    const kcc_sensor_event *events;
    const uint32_t n = kcc_world_sensor_events(m->world, &events, NULL);
    for (uint32_t i = 0; i < n; ++i) { /* one leaves a removed sensor, and a removed one leaves */
        bool known_sensor = is_live_body(m, events[i].sensor, true);
        bool known_character = is_live_character(m, events[i].character);
        for (uint32_t d = 0; d < m->dead_count && !events[i].entered; ++d)
            known_sensor = known_sensor || m->dead[d] == events[i].sensor;
        for (uint32_t g = 0; g < m->gone_count && !events[i].entered; ++g)
            known_character = known_character || m->gone[g] == events[i].character;
        CHECK(known_sensor && known_character);
    }
}

static void op_character(model *m, reader *r, uint8_t op)
{
    switch (op - CHARACTER_OPS) {
    case 0: case 1: op_add_character(m, r); break;
    case 2: op_remove_character(m, r); break;
    case 3: case 4: case 5: case 6: op_steer_character(m, r, op - CHARACTER_OPS - 3); break;
    case 7: op_body_layers(m, r); break;
    case 8: op_add(m, r, true); break;
    default: op_step_characters(m); break;
    }
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
    for (uint32_t i = 0; i < m.mesh_count; ++i) /* once: the exact test is costly */
        for (uint32_t t = 0; t < kcc_mesh_triangle_count(m.meshes[i]); ++t) {
            vec3 v[3];
            CHECK(t < BODY_TRIS);
            m.degenerate[i][t] = !kcc_mesh_triangle(m.meshes[i], t, v) || /* or a hole */
                                 !kcc_tri_intersect_tri(v[0], v[1], v[2], v[0], v[1], v[2], NULL);
        }
    kcc_world_desc d = kcc_world_default_desc();
    d.body_capacity = CAPACITY;
    d.character_capacity = CHARACTERS;
    d.piece_capacity = 64;
    d.sensor_capacity = 2; /* overflows with more than two characters in sensors */
    (void)byte(&r); /* a byte the corpus spends here: skipped, so its inputs drive the same calls */
    if (m.mesh_count > 0 && kcc_world_create(&d, &m.world) == KCC_OK) {
        for (int op = 0; op < MAX_OPS && r.n > 0; ++op) {
            const uint8_t code = byte(&r);
            if (code >= CHARACTER_OPS) {
                op_character(&m, &r, code);
                continue;
            }
            switch (code % 9) {
            case 0: case 1: op_add(&m, &r, false); break;
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
