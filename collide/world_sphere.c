/* world_sphere.c: the world's sphere and capsule queries (kcc_world_sweep_sphere, _capsule,
 * kcc_world_overlap_sphere) over every body at its current pose: the static tree's entries the
 * shape reaches (when the tree is valid), the other bodies' trees walked in each body's frame with
 * the shape's local bounds, every candidate triangle placed and tested in the world by sphere.c's
 * exact per-triangle tests. Queries keep no state and never allocate. */
#include "heightfield_internal.h"
#include "kcc_world_internal.h"

/// The margin (relative to the magnitudes in play: the mesh's corners, the body's position and
/// the shape's reach) covering the rounding of the body's placed corners (transform.c allows 2^-18
/// of them, matrix included), of the shape's passage into the body's frame in double and of its
/// rounding to float for the node test. 1e-5 is over twice 2^-18.
#define LOCAL_MARGIN 1e-5

/// Beyond this (m: the shape's reach plus the body's extent) the grown float bounds of a walk could
/// overflow; such a body's triangles are all tested (sphere.c's FAR_REACH rule).
#define FAR_REACH 1e36

/// out = the body's rotation transposed applied to v (point: v - position first), in double from
/// the float matrix the placement uses.
static void to_local(const kcc_pose *pose, const double v[3], bool point, double out[3])
{
    const float *t = pose->transform.position;
    const double w[3] = {point ? v[0] - t[0] : v[0], point ? v[1] - t[1] : v[1],
                         point ? v[2] - t[2] : v[2]};
    for (int i = 0; i < 3; ++i)
        out[i] = (double)pose->m[0][i] * w[0] + (double)pose->m[1][i] * w[1] +
                 (double)pose->m[2][i] * w[2];
}

/// The allowance for a shape reaching `reach` (m) against body b (LOCAL_MARGIN's magnitudes).
static double local_margin(const kcc_body *b, double reach)
{
    const float *t = b->pose.transform.position;
    const double offset = fmax(fabs((double)t[0]), fmax(fabs((double)t[1]), fabs((double)t[2])));
    return (reach + offset + b->mesh->coord_scale) * LOCAL_MARGIN + 1e-30;
}

/// Triangle record t of body b (its mesh's, or a heightfield view's) as the world's queries see
/// it: the record for an identity pose, else its placed corners in *buf. NULL when placement
/// flattened it (never reported, as kcc_tri_sweep_sphere and kcc_tri_overlap_sphere never report
/// a degenerate triangle).
static const kcc_tri *placed_tri(const kcc_body *b, bool identity, const kcc_tri *t, kcc_tri *buf)
{
    if (identity)
        return t;
    kcc_pose_tri(&b->pose, t, buf->v);
    return kcc_tri_is_degenerate(buf->v[0], buf->v[1], buf->v[2]) ? NULL : buf;
}

/// The world box holding every point within `grow` (m) of the segment p0 .. p0 + seg moved by
/// [0, 1] delta, rounded outward.
static void shape_world_box(const kcc_shape_sweep *s, double grow, float lo[3], float hi[3])
{
    for (int k = 0; k < 3; ++k) {
        const double a = s->origin[k], b = a + s->seg[k];
        const double l = fmin(fmin(a, b), fmin(a, b) + s->delta[k]) - grow;
        const double h = fmax(fmax(a, b), fmax(a, b) + s->delta[k]) + grow;
        lo[k] = nextafterf((float)l, -INFINITY);
        hi[k] = nextafterf((float)h, INFINITY);
    }
}

/* ------------------------------------------------------------------------------------------------
 * Sweeps: the static tree walked nearest first in the world (when valid: the start segment's
 * midpoint along the motion, entries grown by the half segment, the radius and a rounding margin),
 * then each other body's tree walked nearest first in its frame (the shape's start segment and
 * motion taken there in double, nodes grown likewise), pruned by the best contact so far over
 * every body. The earliest contact wins, ties to the lowest (slot, triangle): the order bodies
 * and entries are visited in does not change the answer. */

typedef struct shape_query {
    const kcc_world *world;
    kcc_shape_sweep  shape;
    kcc_sphere_hit   best;         ///< in the world; t 2 before any contact
    uint32_t         best_slot;    ///< UINT32_MAX before any contact
    float            limit;        ///< best t grown by a relative hair (ties still visited), <= 1
    const kcc_body  *body;         ///< the body being swept
    const kcc_mesh  *leaf;         ///< what its walk's slots index: its mesh, or a heightfield view
    uint32_t         slot;
    bool             identity;
    bool             cull;         ///< the local triangles' grown bounds are tested first
    kcc_pray         slab;         ///< the shape in the body's frame
    bool             statics;      ///< the static tree's members are swept through it
    uint32_t         layer_mask;
    kcc_pray         world_slab;   ///< the static tree's node and entry test (shape_static_slab)
} shape_query;

/// (t, slot, id) comes before the best so far: the earliest t, ties to the lowest body slot,
/// then the lowest triangle index.
static bool shape_earlier(const shape_query *q, float t, uint32_t id)
{
    if (t != q->best.t)
        return t < q->best.t;
    return q->slot != q->best_slot ? q->slot < q->best_slot : id < q->best.triangle;
}

/// Sweeps the triangle in slot s of the body's leaf (its mesh, or a heightfield view) placed, and
/// keeps its contact if it is the best so far.
static void shape_slot(shape_query *q, uint32_t s)
{
    const kcc_mesh *mesh = q->leaf;
    const uint32_t id = kcc_mesh_tri_id(mesh, s);
    if (q->best.t == 0.0f && !shape_earlier(q, 0.0f, id))
        return; /* can at best tie at t = 0, and loses the tie */
    kcc_tri own;
    kcc_mesh_tri(mesh, s, &own);
    if (q->cull && !kcc_tri_bounds_swept(&own, &q->slab, q->limit))
        return;
    kcc_tri buf;
    const kcc_tri *t = placed_tri(q->body, q->identity, &own, &buf);
    kcc_sphere_hit h = {.triangle = id};
    if (!t || !kcc_shape_sweep_tri(&q->shape, t->v[0], t->v[1], t->v[2], &h) ||
        !shape_earlier(q, h.t, id))
        return;
    q->best = h;
    q->best_slot = q->slot;
    q->limit = fminf(h.t * (1.0f + 1e-6f) + 1e-30f, 1.0f);
}

static float shape_leaf(void *ctx, uint32_t first, uint32_t count)
{
    shape_query *q = ctx;
    for (uint32_t s = first, end = first + count; s < end; ++s)
        shape_slot(q, s);
    return q->limit;
}

/// The shape's node test in the body's frame: the start segment's midpoint moved along the
/// motion, nodes grown by the half segment, the radius and the margin. False when the grown
/// bounds could overflow (then every triangle is tested).
static bool shape_local_slab(const shape_query *q, kcc_pray *slab)
{
    const kcc_shape_sweep *s = &q->shape;
    const double margin = local_margin(q->body, s->reach);
    if (!(s->reach + q->body->mesh->coord_scale < FAR_REACH))
        return false;
    double mid[3], seg[3], dir[3];
    const double wmid[3] = {s->origin[0] + 0.5 * s->seg[0], s->origin[1] + 0.5 * s->seg[1],
                            s->origin[2] + 0.5 * s->seg[2]};
    to_local(&q->body->pose, wmid, true, mid);
    to_local(&q->body->pose, s->seg, false, seg);
    to_local(&q->body->pose, s->delta, false, dir);
    float org[3], fdir[3], grow[3];
    for (int k = 0; k < 3; ++k) {
        org[k] = (float)mid[k];
        fdir[k] = (float)dir[k];
        grow[k] = (float)(0.5 * fabs(seg[k]) + s->radius + margin);
    }
    kcc_pray_setup(slab, org, fdir, grow);
    return true;
}

/// Makes the body in slot the one whose mesh's triangles the sweep tests, none culled.
static void shape_set_body(shape_query *q, uint32_t slot)
{
    q->body = &q->world->bodies[slot];
    q->slot = slot;
    q->identity = kcc_pose_is_identity(&q->body->pose);
    q->leaf = q->body->mesh;
    q->cull = false;
}

/// Sweeps the body in slot (seen, its bounds touching the motion's) through its own tree; the
/// static tree's members are not (shape_static_leaf sweeps them).
static void shape_body(void *ctx, uint32_t slot)
{
    shape_query *q = ctx;
    if (q->statics && q->world->statics.member[slot])
        return;
    if (q->best.t == 0.0f && slot > q->best_slot)
        return; /* every contact here would lose the tie at t = 0 */
    shape_set_body(q, slot);
    q->cull = shape_local_slab(q, &q->slab);
    const kcc_mesh *mesh = q->body->mesh;
    if (mesh->hf) {
        kcc_hf_view view;
        q->leaf = kcc_hf_view_init(&view, mesh);
        if (q->cull)
            kcc_hf_walk_nearest(mesh, &view, &q->slab, q->limit, shape_leaf, q);
        else
            kcc_hf_visit_all(mesh, &view, shape_leaf, q);
        return;
    }
    if (q->cull)
        kcc_mesh_walk_nearest(mesh, &q->slab, q->limit, shape_leaf, q);
    else
        shape_leaf(q, 0, mesh->tree_triangles);
}

/// A static-tree leaf's entries that the mask sees and whose grown bounds the shape enters before
/// the best contact so far (kcc_static_leaf_entries_nearest), each entry's
/// triangles swept nearest entry first while its entry is not beyond the best contact (as the box
/// sweep's sweep_static_leaf). An entry's placed bounds are tight (2 triangles on average): its
/// triangles are not culled one by one.
static float shape_static_leaf(void *ctx, uint32_t first, uint32_t count)
{
    shape_query *q = ctx;
    const kcc_static_tree *st = &q->world->statics;
    uint32_t item[KCC_LEAF_MAX];
    float entry[KCC_LEAF_MAX];
    const uint32_t n = kcc_static_leaf_entries_nearest(st, &q->world_slab, q->limit, q->layer_mask,
                                                       first, count, item, entry);
    for (uint32_t i = 0; i < n && entry[i] <= q->limit; ++i) {
        const kcc_static_leaf *e = &st->leaves[item[i]];
        if (e->body != q->slot)
            shape_set_body(q, e->body);
        for (uint32_t j = 0; j < e->count; ++j)
            shape_slot(q, kcc_static_entry_slot(st, e, j));
    }
    return q->limit;
}

/// The static tree's node test in the world, as kcc_mesh_sweep_sphere's in a mesh: the start
/// segment's midpoint along the motion, nodes grown by the half segment and the radius plus a
/// margin of a few ulps of the largest coordinate in play (the tree's, the shape's reach). False
/// when the grown bounds could overflow (FAR_REACH: the bodies are then swept through their own
/// trees).
static bool shape_static_slab(shape_query *q)
{
    const kcc_shape_sweep *s = &q->shape;
    const double big = fmax((double)q->world->statics.coord_scale, s->reach);
    if (!(big < FAR_REACH))
        return false;
    const float margin = (float)big * 1e-6f + 1e-30f;
    float org[3], dir[3], grow[3];
    for (int k = 0; k < 3; ++k) {
        org[k] = (float)(s->origin[k] + 0.5 * s->seg[k]);
        dir[k] = (float)s->delta[k];
        grow[k] = (float)(0.5 * fabs(s->seg[k])) + (float)s->radius + margin;
    }
    kcc_pray_setup(&q->world_slab, org, dir, grow);
    return true;
}

/// The sweep of the capsule p0..p1 (a sphere when capsule is false and p1 == p0) over the world.
static bool world_sweep_shape(const kcc_world *world, const float p0[3], const float p1[3],
                              float radius, const float delta[3], bool capsule,
                              uint32_t layer_mask, kcc_world_sphere_hit *hit)
{
    shape_query q = {.world = world, .best = {.t = 2.0f, .triangle = UINT32_MAX},
                     .best_slot = UINT32_MAX, .limit = 1.0f, .slot = UINT32_MAX,
                     .layer_mask = layer_mask};
    if (!world || !hit || !kcc_shape_sweep_setup(&q.shape, p0, p1, radius, delta, capsule))
        return false;
    const kcc_static_tree *st = &world->statics;
    q.statics = st->valid && st->count > 0 && shape_static_slab(&q);
    if (q.statics)
        kcc_walk_nearest(st->quads, &q.world_slab, q.limit, shape_static_leaf, &q);
    float lo[3], hi[3];
    shape_world_box(&q.shape, radius + q.shape.reach * 1e-6, lo, hi);
    if (!q.statics || st->members != world->body_count)
        kcc_world_for_bodies_in_box(world, lo, hi, layer_mask, shape_body, &q);
    if (q.best_slot == UINT32_MAX)
        return false;
    hit->t = q.best.t;
    memcpy(hit->point, q.best.point, sizeof hit->point);
    memcpy(hit->normal, q.best.normal, sizeof hit->normal);
    hit->body = kcc_body_id(world, q.best_slot);
    hit->triangle = q.best.triangle;
    hit->start_overlap = q.best.start_overlap;
    return true;
}

bool kcc_world_sweep_sphere(const kcc_world *world, const vec3 center, float radius,
                            const vec3 delta, uint32_t layer_mask, kcc_world_sphere_hit *hit)
{
    return world_sweep_shape(world, center, center, radius, delta, false, layer_mask, hit);
}

bool kcc_world_sweep_capsule(const kcc_world *world, const vec3 p0, const vec3 p1, float radius,
                             const vec3 delta, uint32_t layer_mask, kcc_world_sphere_hit *hit)
{
    return world_sweep_shape(world, p0, p1, radius, delta, true, layer_mask, hit);
}

/* ------------------------------------------------------------------------------------------------
 * Sphere overlap: the static tree's entries whose placed bounds touch the sphere's world cube
 * (when the tree is valid), then each other body's tree walked with the sphere's cube in its frame
 * (the centre taken there in double, grown by the radius and the margin), then per triangle its
 * bounds and the exact point-to-triangle distance of its placed corners, in double. Reported in
 * ascending body slot, each body's triangles in its box walk's order, a rotated member's in its
 * entries' order: the gathered entries sorted by their rank (kcc_static_tree.order), as the box
 * overlap reports them (kcc_world_overlap_sphere's contract). */

typedef struct sphere_query {
    const kcc_world   *world;
    double             center[3], radius;
    const kcc_body    *body;          ///< the body being tested
    uint32_t           body_id;
    bool               identity;
    float              lo[3], hi[3];  ///< the sphere's cube in the body's frame
    kcc_body_triangle *out;
    uint32_t           capacity;
    uint32_t           found;         ///< every triangle found so far, written or not
    float              world_lo[3], world_hi[3]; ///< the sphere's cube in the world
    bool               statics;       ///< the static tree's members are tested through `entries`
    const uint64_t    *entries;       ///< gathered (kcc_static_entries_in_box), report order
    uint32_t           entry_count;
    uint32_t           entry_next;    ///< the first not tested yet
} sphere_query;

static void sphere_leaf(void *ctx, const kcc_mesh *mesh, uint32_t first, uint32_t count)
{
    sphere_query *q = ctx;
    for (uint32_t s = first, end = first + count; s < end; ++s) {
        kcc_tri own;
        kcc_mesh_tri(mesh, s, &own);
        if (!kcc_tri_bounds_touch(&own, q->lo, q->hi))
            continue;
        kcc_tri buf;
        const kcc_tri *t = placed_tri(q->body, q->identity, &own, &buf);
        if (!t || !kcc_tri_within_sphere(t, q->center, q->radius))
            continue;
        q->found = kcc_body_append_slot(mesh, s, q->body_id, q->out, q->capacity, q->found);
    }
}

/// Makes the body in slot the one whose triangles the overlap tests.
static void sphere_set_body(sphere_query *q, uint32_t slot)
{
    q->body = &q->world->bodies[slot];
    q->body_id = kcc_body_id(q->world, slot);
    q->identity = kcc_pose_is_identity(&q->body->pose);
}

/// Tests the gathered static-tree entries of the bodies in slots below `upto`, in order: each
/// triangle's placed bounds against the sphere's world cube, then the exact distance.
static void sphere_entries_below(sphere_query *q, uint32_t upto)
{
    const kcc_static_tree *st = &q->world->statics;
    for (; q->entry_next < q->entry_count; ++q->entry_next) {
        const kcc_static_leaf *e = &st->leaves[(uint32_t)q->entries[q->entry_next]];
        if (e->body >= upto)
            break;
        if (q->body != &q->world->bodies[e->body])
            sphere_set_body(q, e->body);
        const kcc_mesh *mesh = q->body->mesh;
        for (uint32_t i = 0; i < e->count; ++i) {
            const uint32_t s = kcc_static_entry_slot(st, e, i);
            kcc_tri own, buf;
            kcc_mesh_tri(mesh, s, &own);
            const kcc_tri *t = placed_tri(q->body, q->identity, &own, &buf);
            if (t && kcc_tri_bounds_touch(t, q->world_lo, q->world_hi) &&
                kcc_tri_within_sphere(t, q->center, q->radius))
                q->found = kcc_body_append_slot(mesh, s, q->body_id, q->out, q->capacity, q->found);
        }
    }
}

/// Walks body `slot` with the sphere's cube in its frame: the centre taken there in double, grown by
/// the radius and the margin; after the gathered entries of lower slots. The static tree's members
/// are not walked (their entries are tested).
static void sphere_body(void *ctx, uint32_t slot)
{
    sphere_query *q = ctx;
    if (q->statics && q->world->statics.member[slot])
        return;
    sphere_entries_below(q, slot);
    const kcc_body *b = &q->world->bodies[slot];
    const double *c = q->center;
    const double reach = fmax(fabs(c[0]), fmax(fabs(c[1]), fabs(c[2]))) + q->radius;
    const double grow = q->radius + local_margin(b, reach);
    double local[3];
    to_local(&b->pose, c, true, local);
    sphere_set_body(q, slot);
    for (int k = 0; k < 3; ++k) {
        q->lo[k] = nextafterf((float)(local[k] - grow), -INFINITY);
        q->hi[k] = nextafterf((float)(local[k] + grow), INFINITY);
    }
    kcc_mesh_box_walk(q->body->mesh, q->lo, q->hi, sphere_leaf, q);
}

uint32_t kcc_world_overlap_sphere(const kcc_world *world, const vec3 center, float radius,
                                  uint32_t layer_mask, kcc_body_triangle *out, uint32_t capacity)
{
    if (!world || !center || !isfinite(center[0]) || !isfinite(center[1]) ||
        !isfinite(center[2]) || !isfinite(radius) || !(radius > 0.0f) || (capacity > 0 && !out))
        return 0;
    sphere_query q = {.world = world, .center = {center[0], center[1], center[2]},
                      .radius = radius, .out = out, .capacity = capacity};
    const kcc_shape_sweep cube = {.origin = {center[0], center[1], center[2]}};
    const double reach = fmax(fabs(q.center[0]), fmax(fabs(q.center[1]), fabs(q.center[2])));
    shape_world_box(&cube, q.radius + (reach + q.radius) * 1e-6, q.world_lo, q.world_hi);
    const kcc_static_tree *st = &world->statics;
    uint64_t entries[KCC_STATIC_GATHER_MAX];
    if (st->valid && st->count > 0) {
        const uint32_t n = kcc_static_entries_in_box(st, q.world_lo, q.world_hi, layer_mask,
                                                     entries);
        q.statics = n != UINT32_MAX;
        q.entries = entries, q.entry_count = q.statics ? n : 0;
    }
    if (!q.statics || st->members != world->body_count)
        kcc_world_for_bodies_in_box(world, q.world_lo, q.world_hi, layer_mask, sphere_body, &q);
    sphere_entries_below(&q, UINT32_MAX);
    return q.found;
}
