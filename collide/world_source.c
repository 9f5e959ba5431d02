/* world_source.c: the world as a move's neighbourhood source (kcc_world_source): the placed
 * triangles of its bodies listed in one fixed order (bodies by triangle range, each body's in
 * leaf order), and the overflow mode's queries over all of them. Keeps no state; never allocates. */
#include "kcc_world_internal.h"

/// A body placed exactly where its mesh is: its placed corners are the mesh's own, bit for bit.
static bool placed_at_identity(const kcc_body *b)
{
    const float *p = b->pose.transform.position;
    return !b->pose.rotated && p[0] == 0.0f && p[1] == 0.0f && p[2] == 0.0f;
}

/// Region [lo, hi] in the body's frame: itself at the identity, else its conservative bounds.
static void region_in_body(const kcc_body *b, const float lo[3], const float hi[3], float out_lo[3],
                           float out_hi[3])
{
    if (placed_at_identity(b)) {
        memcpy(out_lo, lo, sizeof(float[3]));
        memcpy(out_hi, hi, sizeof(float[3]));
        return;
    }
    kcc_pose_box_local_bounds(&b->pose, lo, hi, out_lo, out_hi);
}

static bool boxes_touch(const float alo[3], const float ahi[3], const float blo[3], const float bhi[3])
{
    return alo[0] <= bhi[0] && ahi[0] >= blo[0] && alo[1] <= bhi[1] && ahi[1] >= blo[1] &&
           alo[2] <= bhi[2] && ahi[2] >= blo[2];
}

/// The body at position i of the range table when the source sees it and it may reach the box.
static const kcc_body *seen_body(const kcc_world_source *src, uint32_t i, const float lo[3],
                                 const float hi[3])
{
    const kcc_body *b = &src->world->bodies[src->world->bases[i].slot];
    return (b->layers & src->layer_mask) && boxes_touch(b->bounds[0], b->bounds[1], lo, hi) ? b : NULL;
}

static uint32_t world_query(const kcc_local_source *base, const vec3 region[2], uint32_t *out_handles,
                            uint32_t capacity)
{
    const kcc_world_source *src = (const kcc_world_source *)(const void *)base;
    uint32_t n = 0;
    for (uint32_t i = 0; i < src->world->base_count; ++i) {
        const kcc_body *b = seen_body(src, i, region[0], region[1]);
        if (!b)
            continue;
        float lo[3], hi[3];
        region_in_body(b, region[0], region[1], lo, hi);
        const uint32_t room = n < capacity ? capacity - n : 0;
        uint32_t *out = out_handles + (n < capacity ? n : 0);
        const uint32_t found = kcc_mesh_query_slots(b->mesh, lo, hi, out, room);
        if (found <= room)
            for (uint32_t j = 0; j < found; ++j)
                out[j] += b->tri_base;
        n += found;
    }
    return n;
}

/// The body whose range holds handle or id h (h from this source: it names a live body).
static const kcc_body *body_of(const kcc_world_source *src, uint32_t h, uint32_t *out_local)
{
    const kcc_body *b = kcc_world_body_of_triangle(src->world, h, out_local);
    KCC_ASSERT(b != NULL);
    return b;
}

/// Body b's slot s as a listed triangle: placed corners and their plane, or the mesh's own at the
/// identity; `index` the world id of input triangle tri_id[s].
static void placed_local_tri(const kcc_body *b, uint32_t s, kcc_local_tri *out)
{
    const kcc_mesh *mesh = b->mesh;
    kcc_plane plane;
    if (placed_at_identity(b)) {
        memcpy(out->v, mesh->tris[s].v, sizeof out->v);
        plane = mesh->planes[s];
    } else {
        kcc_tri placed;
        kcc_body_corners(b, s, placed.v);
        memcpy(out->v, placed.v, sizeof out->v);
        kcc_tri_plane(&placed, &plane);
    }
    memcpy(out->n, plane.n, sizeof out->n);
    out->d = plane.d;
    out->index = b->tri_base + mesh->tri_id[s];
}

static void world_fetch(const kcc_local_source *base, const uint32_t *handles, uint32_t n,
                        kcc_local_tri *out)
{
    const kcc_world_source *src = (const kcc_world_source *)(const void *)base;
    for (uint32_t j = 0; j < n; ++j) {
        uint32_t slot;
        const kcc_body *b = body_of(src, handles[j], &slot);
        placed_local_tri(b, slot, &out[j]);
    }
}

/* ------------------------------------------------------------------------------------------------
 * The overflow mode: every placed triangle whose bounds meet a box, visited in the source's
 * order, each tested exactly in the world frame, as a list would test it. */

typedef struct placed_visit {
    const kcc_body *body;
    kcc_local_tri   tri;       ///< the placed triangle (corners, plane, world id)
} placed_visit;
/// Returns false to stop the visit.
typedef bool (*placed_visitor)(void *ctx, const placed_visit *v);

/// Visits body b's slots whose local bounds meet [lo, hi] (local frame) in leaf order; false when
/// the visitor stopped.
static bool visit_body_slots(const kcc_body *b, const float lo[3], const float hi[3],
                             placed_visitor visit, void *ctx)
{
    const kcc_mesh *mesh = b->mesh;
    if (mesh->quad_count == 0)
        return true;
    kcc_pbox qb;
    kcc_pbox_setup(&qb, lo, hi);
    uint32_t stack[KCC_TREE_STACK], sp = 0;
    stack[sp++] = 0;
    placed_visit v = {b, {{{0}}, {0}, 0.0f, 0u}};
    while (sp > 0) {
        const kcc_node4 *q = &mesh->quads[stack[--sp]];
        const int mask = kcc_pbox_test(&qb, q), inner = mask & kcc_inner_mask(q);
        for (int i = 3; i >= 0; --i) /* children pushed last-first: popped in leaf order */
            if (inner >> i & 1)
                stack[sp++] = q->first[i];
        for (int i = 0; i < 4; ++i) {
            if (!((mask & ~inner) >> i & 1))
                continue;
            for (uint32_t s = q->first[i], e = s + q->count[i]; s < e; ++s) {
                const kcc_tri *t = &mesh->tris[s];
                const float tlo[3] = {min3f(t->v[0][0], t->v[1][0], t->v[2][0]),
                                      min3f(t->v[0][1], t->v[1][1], t->v[2][1]),
                                      min3f(t->v[0][2], t->v[1][2], t->v[2][2])};
                const float thi[3] = {max3f(t->v[0][0], t->v[1][0], t->v[2][0]),
                                      max3f(t->v[0][1], t->v[1][1], t->v[2][1]),
                                      max3f(t->v[0][2], t->v[1][2], t->v[2][2])};
                if (!boxes_touch(tlo, thi, qb.lo, qb.hi))
                    continue;
                placed_local_tri(b, s, &v.tri);
                if (!visit(ctx, &v))
                    return false;
            }
        }
    }
    return true;
}

/// Visits every placed triangle of the seen bodies whose bounds may meet world box [lo, hi].
static void visit_placed(const kcc_world_source *src, const float lo[3], const float hi[3],
                         placed_visitor visit, void *ctx)
{
    for (uint32_t i = 0; i < src->world->base_count; ++i) {
        const kcc_body *b = seen_body(src, i, lo, hi);
        if (!b)
            continue;
        float llo[3], lhi[3];
        region_in_body(b, lo, hi, llo, lhi);
        if (!visit_body_slots(b, llo, lhi, visit, ctx))
            return;
    }
}

/// The earliest of equal answers goes to the lowest id (the mesh queries' tie rule).
static bool earlier(float t, uint32_t id, float best_t, uint32_t best_id, bool have)
{
    return !have || t < best_t || (t == best_t && id < best_id);
}

typedef struct ray_job {
    const float *origin, *dir;
    float        max_t;
    bool         got;
    kcc_ray_hit  hit;
} ray_job;

static bool ray_visit(void *ctx, const placed_visit *v)
{
    ray_job *job = ctx;
    const float(*c)[3] = (const float(*)[3])v->tri.v;
    float t;
    if (kcc_tri_raycast(c[0], c[1], c[2], job->origin, job->dir, job->max_t, &t) &&
        earlier(t, v->tri.index, job->hit.t, job->hit.triangle, job->got)) {
        job->got = true;
        job->hit.t = t;
        job->hit.triangle = v->tri.index;
        memcpy(job->hit.normal, v->tri.n, sizeof job->hit.normal);
    }
    return true;
}

static bool world_raycast(const kcc_local_source *base, const vec3 origin, const vec3 dir, float max_t,
                          kcc_ray_hit *out)
{
    const kcc_world_source *src = (const kcc_world_source *)(const void *)base;
    float lo[3], hi[3];
    for (int k = 0; k < 3; ++k) {
        const float end = origin[k] + dir[k] * max_t;
        lo[k] = kcc_minf(origin[k], end) - 1e-4f * (1.0f + fabsf(end));
        hi[k] = kcc_maxf(origin[k], end) + 1e-4f * (1.0f + fabsf(end));
    }
    ray_job job = {origin, dir, max_t, false, {0.0f, {0}, {0}, 0u}};
    visit_placed(src, lo, hi, ray_visit, &job);
    if (!job.got)
        return false;
    for (int k = 0; k < 3; ++k)
        job.hit.point[k] = origin[k] + dir[k] * job.hit.t;
    *out = job.hit;
    return true;
}

typedef struct overlap_job {
    const vec3 *box;
    uint32_t   *out;
    uint32_t    capacity, found;
} overlap_job;

static bool overlap_visit(void *ctx, const placed_visit *v)
{
    overlap_job *job = ctx;
    const float(*c)[3] = (const float(*)[3])v->tri.v;
    if (kcc_tri_overlap_box_internal(c[0], c[1], c[2], job->box[0], job->box[1])) {
        if (job->found < job->capacity)
            job->out[job->found] = v->tri.index;
        ++job->found;
    }
    return true;
}

static uint32_t world_overlap(const kcc_local_source *base, const vec3 box[2], uint32_t *out_ids,
                              uint32_t capacity)
{
    const kcc_world_source *src = (const kcc_world_source *)(const void *)base;
    overlap_job job = {box, out_ids, capacity, 0};
    visit_placed(src, box[0], box[1], overlap_visit, &job);
    return job.found;
}

typedef struct sweep_job {
    const vec3   *box;
    const float  *delta;
    bool          got;
    kcc_sweep_hit hit;
} sweep_job;

static bool sweep_visit(void *ctx, const placed_visit *v)
{
    sweep_job *job = ctx;
    const float(*c)[3] = (const float(*)[3])v->tri.v;
    float t;
    vec3 normal;
    bool start;
    if (kcc_tri_sweep_aabb(c[0], c[1], c[2], job->box, job->delta, &t, normal, &start) &&
        earlier(t, v->tri.index, job->hit.t, job->hit.triangle, job->got)) {
        job->got = true;
        job->hit.t = t;
        job->hit.triangle = v->tri.index;
        job->hit.start_overlap = start;
        memcpy(job->hit.normal, normal, sizeof job->hit.normal);
    }
    return true;
}

static bool world_sweep(const kcc_local_source *base, const vec3 box[2], const vec3 delta,
                        kcc_sweep_hit *out)
{
    const kcc_world_source *src = (const kcc_world_source *)(const void *)base;
    float lo[3], hi[3];
    for (int k = 0; k < 3; ++k) {
        lo[k] = box[0][k] + kcc_minf(delta[k], 0.0f);
        hi[k] = box[1][k] + kcc_maxf(delta[k], 0.0f);
    }
    sweep_job job = {box, delta, false, {0.0f, {0}, 0u, false}};
    visit_placed(src, lo, hi, sweep_visit, &job);
    if (job.got)
        *out = job.hit;
    return job.got;
}

static bool world_triangle(const kcc_local_source *base, uint32_t id, vec3 out_corners[3])
{
    const kcc_world_source *src = (const kcc_world_source *)(const void *)base;
    uint32_t input;
    const kcc_body *b = kcc_world_body_of_triangle(src->world, id, &input);
    if (!b || !(b->layers & src->layer_mask))
        return false;
    kcc_local_tri tri;
    placed_local_tri(b, b->mesh->tri_slot[input], &tri);
    memcpy(out_corners, tri.v, sizeof tri.v);
    return true;
}

static void world_face_normal(const kcc_local_source *base, uint32_t id, vec3 out)
{
    const kcc_world_source *src = (const kcc_world_source *)(const void *)base;
    uint32_t input;
    const kcc_body *b = body_of(src, id, &input);
    kcc_local_tri tri;
    placed_local_tri(b, b->mesh->tri_slot[input], &tri);
    memcpy(out, tri.n, sizeof tri.n);
}

static const kcc_local_source_ops world_source_ops = {
    world_query, world_fetch, world_raycast, world_overlap, world_sweep, world_triangle,
    world_face_normal,
};

void kcc_world_source_init(kcc_world_source *out, const kcc_world *world, uint32_t layer_mask)
{
    out->base.ops = &world_source_ops;
    out->base.owner = world;
    out->base.key = world->key ^ (uint64_t)layer_mask * 0x9E3779B97F4A7C15ull;
    if (out->base.key == 0)
        out->base.key = 1;
    out->world = world;
    out->layer_mask = layer_mask;
}
