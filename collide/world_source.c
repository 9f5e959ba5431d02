/* world_source.c: the world as a move's neighbourhood source (kcc_world_source): the placed
 * triangles of its bodies listed in one fixed order (bodies by triangle range, each body's in
 * leaf order), and the overflow mode's queries over all of them. Keeps no state; never allocates. */
#include "heightfield_internal.h"
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
    kcc_pose_box_local_bounds(&b->pose, lo, hi, b->mesh->coord_scale, out_lo, out_hi);
}

static bool boxes_touch(const float alo[3], const float ahi[3], const float blo[3], const float bhi[3])
{
    return alo[0] <= bhi[0] && ahi[0] >= blo[0] && alo[1] <= bhi[1] && ahi[1] >= blo[1] &&
           alo[2] <= bhi[2] && ahi[2] >= blo[2];
}

/// What a source walks: a body's whole tree, or the subtree of one of its pieces.
typedef struct seen_part {
    const kcc_body *body;
    uint32_t        first, count;   ///< (0, 0): the whole tree (kcc_mesh_query_slots_under)
} seen_part;

/// Where a walk over a source's parts is: the next body of the range table and the next piece.
typedef struct part_cursor {
    uint32_t base, piece;
} part_cursor;

/// Whether the walk over the range table takes body b: static bodies are walked whole from the
/// table by every part but KCC_WORLD_PART_MOVING; other bodies, when the source has no piece list,
/// by every part but KCC_WORLD_PART_STATIC.
static bool walks_base(const kcc_world_source *src, const kcc_body *b)
{
    if (b->kind == KCC_BODY_STATIC)
        return src->part != KCC_WORLD_PART_MOVING;
    return !src->pieces && src->part != KCC_WORLD_PART_STATIC;
}

/// The slot of the next body the range-table walk takes (cursor moved past it), or
/// KCC_WORLD_NO_BODY at its end; *out_tri_base its triangle range's start.
static uint32_t peek_base(const kcc_world_source *src, part_cursor *at, uint32_t *out_tri_base)
{
    const kcc_world *w = src->world;
    if (src->pieces && src->part == KCC_WORLD_PART_MOVING)
        return KCC_WORLD_NO_BODY; /* walks_base takes none: the static bodies are the other
                                     part's, the rest come as pieces */
    for (; at->base < w->base_count; ++at->base) {
        const uint32_t slot = w->bases[at->base].slot;
        if (walks_base(src, &w->bodies[slot])) {
            *out_tri_base = w->bodies[slot].tri_base;
            return slot;
        }
    }
    return KCC_WORLD_NO_BODY;
}

/// The next piece of the piece list (a body that is not static: static bodies are walked whole),
/// or KCC_WORLD_NO_PIECE at its end; *out_tri_base its body's triangle range's start.
static uint32_t peek_piece(const kcc_world_source *src, part_cursor *at, uint32_t *out_tri_base)
{
    const kcc_world *w = src->world;
    if (!src->pieces || src->part == KCC_WORLD_PART_STATIC)
        return KCC_WORLD_NO_PIECE;
    for (; at->piece < src->piece_count; ++at->piece) {
        const kcc_body *b = &w->bodies[w->pieces[src->pieces[at->piece]].body];
        if (b->kind != KCC_BODY_STATIC) {
            *out_tri_base = b->tri_base;
            return src->pieces[at->piece];
        }
    }
    return KCC_WORLD_NO_PIECE;
}

/// Whether the source sees body slot (skip_body, only_body, sensors, layers).
static bool sees_body(const kcc_world_source *src, uint32_t slot)
{
    const kcc_body *b = &src->world->bodies[slot];
    return slot != src->skip_body && (src->only_body == KCC_WORLD_NO_BODY || slot == src->only_body) &&
           (!b->sensor || slot == src->only_body) && (b->layers & src->layer_mask);
}

/// Whether a walk over the source's parts may take any: not the moving part of a source whose
/// piece list is empty (its static bodies are the other part's), what most characters' rest is.
static inline bool may_take_parts(const kcc_world_source *src)
{
    return !(src->pieces && src->piece_count == 0 && src->part == KCC_WORLD_PART_MOVING);
}

/// The next part of the source in its order (bodies by triangle range: the range table's and the
/// piece list's walks merged) that it sees and that may reach [lo, hi]; false at the end.
static bool next_seen_part(const kcc_world_source *src, part_cursor *at, const float lo[3],
                           const float hi[3], seen_part *out)
{
    const kcc_world *w = src->world;
    for (;;) {
        uint32_t base_tri = 0, piece_tri = 0;
        const uint32_t slot = peek_base(src, at, &base_tri);
        const uint32_t piece = peek_piece(src, at, &piece_tri);
        const bool take_piece = piece != KCC_WORLD_NO_PIECE && (slot == KCC_WORLD_NO_BODY || piece_tri < base_tri);
        if (!take_piece && slot == KCC_WORLD_NO_BODY)
            return false;
        const kcc_piece *p = take_piece ? &w->pieces[piece] : NULL;
        const uint32_t body = p ? p->body : slot;
        if (p)
            ++at->piece;
        else
            ++at->base;
        const float(*bounds)[3] = p ? (const float(*)[3])p->bounds
                                    : (const float(*)[3])w->bodies[body].bounds;
        if (!sees_body(src, body) || !boxes_touch(bounds[0], bounds[1], lo, hi))
            continue;
        out->body = &w->bodies[body];
        out->first = p ? p->first : 0;
        out->count = p ? p->count : 0;
        return true;
    }
}

/* ------------------------------------------------------------------------------------------------
 * Characters' boxes: twelve triangles each, wound to face out. */

#define BOX_TRIS 12u
/// Face k's unit normal (faces -x, +x, -y, +y, -z, +z, two triangles each): what kcc_tri_plane
/// gives for the face's triangles whenever the box's extents lie in [BOX_EXTENT_MIN,
/// BOX_EXTENT_MAX]. Its cross product then has one non-zero component, +-(e1 * e2) rounded, whose
/// rounded square neither underflows nor overflows, so the square root gives it back exactly (binary
/// floating point) and it divides to +-1; the other two are +0 and stay +0
/// (world_box_faces_have_kcc_tri_planes_planes).
static const float box_face_normal[6][3] = {
    {-1.0f, 0.0f, 0.0f}, {1.0f, 0.0f, 0.0f}, {0.0f, -1.0f, 0.0f},
    {0.0f, 1.0f, 0.0f},  {0.0f, 0.0f, -1.0f}, {0.0f, 0.0f, 1.0f},
};
#define BOX_EXTENT_MIN 1e-9f
#define BOX_EXTENT_MAX 1e9f

/// Box triangle k's corners, as corners of the box: corner c is (bit 0: x, bit 1: y, bit 2: z) at
/// the high side. Faces -x, +x, -y, +y, -z, +z, two triangles each, each wound so (b - a) x (c - a)
/// points out of the box (box_triangles_face_out).
static const uint8_t box_tri_corner[BOX_TRIS][3] = {
    {0, 4, 6}, {0, 6, 2}, {1, 3, 7}, {1, 7, 5}, {0, 1, 5}, {0, 5, 4},
    {2, 6, 7}, {2, 7, 3}, {0, 2, 3}, {0, 3, 1}, {4, 5, 7}, {4, 7, 6},
};

/// Whether the box's extents all lie in [BOX_EXTENT_MIN, BOX_EXTENT_MAX]: its faces' planes are
/// then box_face_normal's.
static bool box_usual(const float box[2][3])
{
    bool usual = true;
    for (int a = 0; a < 3; ++a) {
        const float extent = box[1][a] - box[0][a];
        usual = usual && extent >= BOX_EXTENT_MIN && extent <= BOX_EXTENT_MAX;
    }
    return usual;
}

/// The plane of a box triangle of an unusual box (an extent outside [BOX_EXTENT_MIN,
/// BOX_EXTENT_MAX]), as kcc_tri_plane gives it.
KCC_RARE void unusual_box_plane(kcc_local_tri *out)
{
    kcc_tri t;
    memcpy(t.v, out->v, sizeof t.v);
    kcc_plane plane;
    kcc_tri_plane(&t, &plane);
    memcpy(out->n, plane.n, sizeof out->n);
    out->d = plane.d;
}

/// Box triangle k as a listed triangle with id `index`, its corners the box's (corner c at the
/// high side on axis a when bit a of c is set); `usual`: box_usual of the box. Inlined with a
/// constant k (box_tri), every corner and normal is a fixed place of the box and the table.
KCC_HOT void box_local_tri(const float box[2][3], uint32_t k, uint32_t index, bool usual,
                           kcc_local_tri *out)
{
    for (int i = 0; i < 3; ++i) {
        const uint32_t c = box_tri_corner[k][i];
        out->v[i][0] = box[c & 1u][0];
        out->v[i][1] = box[c >> 1 & 1u][1];
        out->v[i][2] = box[c >> 2][2];
    }
    out->index = index;
    if (!usual) {
        unusual_box_plane(out);
        return;
    }
    const float *n = box_face_normal[k / 2];
    memcpy(out->n, n, sizeof out->n);
    out->d = n[0] * out->v[0][0] + n[1] * out->v[0][1] + n[2] * out->v[0][2]; /* kcc_tri_plane's d */
}

/// box_local_tri for triangle k of the box, k below BOX_TRIS, with k made a constant.
static void box_tri(const float box[2][3], uint32_t k, uint32_t index, bool usual, kcc_local_tri *out)
{
    switch (k) {
#define BOX_TRI_CASE(K)                                                                              \
    case K:                                                                                          \
        box_local_tri(box, K, index, usual, out);                                                   \
        return;
        BOX_TRI_CASE(0) BOX_TRI_CASE(1) BOX_TRI_CASE(2) BOX_TRI_CASE(3) BOX_TRI_CASE(4) BOX_TRI_CASE(5)
        BOX_TRI_CASE(6) BOX_TRI_CASE(7) BOX_TRI_CASE(8) BOX_TRI_CASE(9) BOX_TRI_CASE(10) BOX_TRI_CASE(11)
#undef BOX_TRI_CASE
    default:
        KCC_ASSERT(k < BOX_TRIS);
    }
}

/// Both triangles of face f of the box (its triangles 2f and 2f + 1, ids index and index + 1), with
/// f made a constant: what box_tri gives for each.
static void box_face_tris(const float box[2][3], uint32_t f, uint32_t index, bool usual, kcc_local_tri out[2])
{
    switch (f) {
#define BOX_FACE_CASE(F)                                                                             \
    case F:                                                                                          \
        box_local_tri(box, 2 * F, index, usual, &out[0]);                                           \
        box_local_tri(box, 2 * F + 1, index + 1, usual, &out[1]);                                   \
        return;
        BOX_FACE_CASE(0) BOX_FACE_CASE(1) BOX_FACE_CASE(2) BOX_FACE_CASE(3) BOX_FACE_CASE(4) BOX_FACE_CASE(5)
#undef BOX_FACE_CASE
    default:
        KCC_ASSERT(f < BOX_TRIS / 2);
    }
}

/// Whether the source sees listed box slot: not the mover's own, and on layers both ways
/// (kcc_world_source.box_layers).
static bool box_seen(const kcc_world_source *src, uint32_t slot)
{
    if (slot == src->skip_box)
        return false;
    return !src->box_layers ||
           ((src->layer_mask & src->box_layers[slot]) && (src->box_masks[slot] & src->self_layers));
}

/// Whether box triangle k (a face) touches [lo, hi], for a box that touches it: the face's bounds
/// are the box's flattened on its axis, so it does when its side's coordinate lies in [lo, hi]
/// along that axis.
static bool box_tri_touches(const float box[2][3], uint32_t k, const float lo[3], const float hi[3])
{
    const uint32_t axis = k / 4, side = k / 2 % 2;
    return box[side][axis] >= lo[axis] && box[side][axis] <= hi[axis];
}

/// The listed boxes a query can meet at most: each met box gives at least two triangles, so more
/// than this many overflow any query's capacity (at most KCC_LOCAL_MAX).
#define BOXES_MET (KCC_LOCAL_MAX / 2u + 1u)

/// Appends the handles of the listed boxes' triangles that touch region to out (room for
/// capacity in all, n used), by slot (box_slots is in any order); returns the new count (written
/// only when all fit).
static uint32_t query_boxes(const kcc_world_source *src, const float lo[3], const float hi[3],
                            uint32_t *out, uint32_t capacity, uint32_t n)
{
    uint32_t met[BOXES_MET], met_count = 0, count = n;
    for (uint32_t i = 0; i < src->box_count; ++i) {
        const uint32_t slot = src->box_slots[i];
        const float(*box)[3] = src->boxes[slot];
        if (!boxes_touch(box[0], box[1], lo, hi) || !box_seen(src, slot))
            continue; /* (most boxes listed lie away from the query) */
        uint32_t faces = 0;
        for (uint32_t k = 0; k < BOX_TRIS; k += 2) /* a face's two triangles */
            faces += box_tri_touches(box, k, lo, hi) ? 2u : 0u;
        if (faces == 0)
            continue;
        count += faces;
        if (met_count < BOXES_MET) /* in slot order: an insertion sort, few boxes meet a query */
            for (uint32_t j = met_count++;; --j) {
                if (j == 0 || met[j - 1] < slot) {
                    met[j] = slot;
                    break;
                }
                met[j] = met[j - 1];
            }
    }
    if (count > capacity)
        return count;
    for (uint32_t i = 0; i < met_count; ++i) {
        const float(*box)[3] = src->boxes[met[i]];
        for (uint32_t k = 0; k < BOX_TRIS; k += 2)
            if (box_tri_touches(box, k, lo, hi)) {
                out[n] = KCC_WORLD_BOX_TRIS + BOX_TRIS * met[i] + k;
                out[n + 1] = out[n] + 1;
                n += 2;
            }
    }
    return n;
}

/// Box triangle h (a handle or id of the boxes) of the source.
static void box_tri_of(const kcc_world_source *src, uint32_t h, kcc_local_tri *out)
{
    const uint32_t slot = (h - KCC_WORLD_BOX_TRIS) / BOX_TRIS, k = (h - KCC_WORLD_BOX_TRIS) % BOX_TRIS;
    box_tri(src->boxes[slot], k, h, box_usual(src->boxes[slot]), out);
}

/// The box triangles of handles[0..n) that name the box of handles[0] (a run: a query lists a
/// box's triangles together), its extents checked once; returns how many.
static uint32_t box_run_of(const kcc_world_source *src, const uint32_t *handles, uint32_t n,
                           kcc_local_tri *out)
{
    const uint32_t slot = (handles[0] - KCC_WORLD_BOX_TRIS) / BOX_TRIS;
    const uint32_t base = KCC_WORLD_BOX_TRIS + slot * BOX_TRIS; /* the box's triangle k is base + k */
    const float(*box)[3] = src->boxes[slot];
    const bool usual = box_usual(box);
    uint32_t j = 0;
    while (j < n && handles[j] - base < BOX_TRIS) { /* (a handle below base wraps past BOX_TRIS) */
        const uint32_t k = handles[j] - base;
        if (k % 2 == 0 && j + 1 < n && handles[j + 1] == handles[j] + 1) { /* a face: as queries list them */
            box_face_tris(box, k / 2, handles[j], usual, &out[j]);
            j += 2;
        } else {
            box_tri(box, k, handles[j], usual, &out[j]);
            ++j;
        }
    }
    return j;
}

static uint32_t world_query(const kcc_local_source *base, const vec3 region[2], uint32_t *out_handles,
                            uint32_t capacity)
{
    const kcc_world_source *src = (const kcc_world_source *)(const void *)base;
    uint32_t n = 0;
    part_cursor at = {0, 0};
    seen_part part;
    while (may_take_parts(src) && next_seen_part(src, &at, region[0], region[1], &part)) {
        const kcc_body *b = part.body;
        float lo[3], hi[3];
        region_in_body(b, region[0], region[1], lo, hi);
        const uint32_t room = n < capacity ? capacity - n : 0;
        uint32_t *out = out_handles + (n < capacity ? n : 0);
        const uint32_t found = kcc_mesh_query_slots_under(b->mesh, part.first, part.count, lo, hi,
                                                          out, room);
        if (found <= room)
            for (uint32_t j = 0; j < found; ++j)
                out[j] += b->tri_base;
        n += found;
    }
    return query_boxes(src, region[0], region[1], out_handles, capacity, n);
}

/// The body whose range holds handle or id h (h from this source: it names a live body).
static const kcc_body *body_of(const kcc_world_source *src, uint32_t h, uint32_t *out_local)
{
    const kcc_body *b = kcc_world_body_of_triangle(src->world, h, out_local);
    KCC_ASSERT(b != NULL);
    return b;
}

/// Triangle record t of body b, its mesh's input triangle `input`, as a listed triangle: placed
/// corners and their plane, or the record's own at the identity; `index` its world id.
static void placed_local_tri(const kcc_body *b, const kcc_tri *t, uint32_t input, kcc_local_tri *out)
{
    kcc_plane plane;
    if (placed_at_identity(b)) {
        memcpy(out->v, t->v, sizeof out->v);
        kcc_tri_plane(t, &plane);
    } else {
        kcc_tri placed;
        kcc_pose_tri(&b->pose, t, placed.v);
        memcpy(out->v, placed.v, sizeof out->v);
        kcc_tri_plane(&placed, &plane);
    }
    memcpy(out->n, plane.n, sizeof out->n);
    out->d = plane.d;
    out->index = b->tri_base + input;
}

/// Body b's slot s as a listed triangle (a heightfield's slot is its triangle id, its corners
/// computed from the grid); false for a heightfield's hole.
static bool slot_local_tri(const kcc_body *b, uint32_t s, kcc_local_tri *out)
{
    const kcc_mesh *mesh = b->mesh;
    if (!mesh->hf) {
        kcc_tri t;
        kcc_mesh_tri(mesh, s, &t);
        placed_local_tri(b, &t, kcc_mesh_tri_id(mesh, s), out);
        return true;
    }
    kcc_tri t;
    if (!kcc_hf_triangle(mesh, s, &t))
        return false;
    placed_local_tri(b, &t, s, out);
    return true;
}

static void world_fetch(const kcc_local_source *base, const uint32_t *handles, uint32_t n,
                        kcc_local_tri *out)
{
    const kcc_world_source *src = (const kcc_world_source *)(const void *)base;
    const kcc_body *b = NULL; /* the last handle's body: a query lists a body's triangles together */
    for (uint32_t j = 0; j < n;) {
        const uint32_t h = handles[j];
        if (h >= KCC_WORLD_BOX_TRIS) {
            j += box_run_of(src, handles + j, n - j, out + j);
            continue;
        }
        uint32_t slot = b ? h - b->tri_base : 0;
        if (!b || slot >= b->mesh->triangle_count) /* (a handle below its range wraps past it) */
            b = body_of(src, h, &slot);
        const bool live = slot_local_tri(b, slot, &out[j++]);
        KCC_ASSERT(live); /* the query lists no hole */
        (void)live;
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

/// Visits slots s .. e - 1 of leaf (body b's mesh, or a heightfield view of it) whose bounds meet
/// box qb; false when the visitor stopped.
static bool visit_leaf_slots(const kcc_body *b, const kcc_mesh *leaf, uint32_t s, uint32_t e,
                             const kcc_pbox *qb, placed_visit *v, placed_visitor visit, void *ctx)
{
    for (; s < e; ++s) {
        kcc_tri own;
        kcc_mesh_tri(leaf, s, &own);
        const kcc_tri *t = &own;
        const float tlo[3] = {min3f(t->v[0][0], t->v[1][0], t->v[2][0]),
                              min3f(t->v[0][1], t->v[1][1], t->v[2][1]),
                              min3f(t->v[0][2], t->v[1][2], t->v[2][2])};
        const float thi[3] = {max3f(t->v[0][0], t->v[1][0], t->v[2][0]),
                              max3f(t->v[0][1], t->v[1][1], t->v[2][1]),
                              max3f(t->v[0][2], t->v[1][2], t->v[2][2])};
        if (!boxes_touch(tlo, thi, qb->lo, qb->hi))
            continue;
        placed_local_tri(b, t, kcc_mesh_tri_id(leaf, s), &v->tri);
        if (!visit(ctx, v))
            return false;
    }
    return true;
}

/// Visits the slots of a part whose local bounds meet [lo, hi] (local frame) in leaf order; false
/// when the visitor stopped.
static bool visit_part_slots(const seen_part *part, const float lo[3], const float hi[3],
                             placed_visitor visit, void *ctx)
{
    const kcc_body *b = part->body;
    const kcc_mesh *mesh = b->mesh;
    if (mesh->quad_count == 0 && !mesh->hf)
        return true;
    kcc_pbox qb;
    kcc_pbox_setup(&qb, lo, hi);
    placed_visit v = {b, {{{0}}, {0}, 0.0f, 0u}};
    if (mesh->hf) { /* a heightfield is one part: the cells under the box, batch by batch */
        kcc_hf_view view;
        kcc_hf_box_iter it;
        const kcc_mesh *leaf = kcc_hf_view_init(&view, mesh);
        kcc_hf_box_begin(&it, mesh, qb.lo, qb.hi);
        for (uint32_t n; (n = kcc_hf_box_next(&it, &view)) > 0;)
            if (!visit_leaf_slots(b, leaf, 0, n, &qb, &v, visit, ctx))
                return false;
        return true;
    }
    if (part->count > 0)
        return visit_leaf_slots(b, mesh, part->first, part->first + part->count, &qb, &v, visit,
                                ctx);
    uint32_t stack[KCC_TREE_STACK], sp = 0;
    stack[sp++] = part->first;
    while (sp > 0) {
        const kcc_qnode4 *q = &mesh->groups[stack[--sp]];
        const int mask = kcc_pbox_qtest(&qb, q), inner = mask & kcc_qnode4_inner_mask(q);
        for (int i = 3; i >= 0; --i) /* children pushed last-first: popped in leaf order */
            if (inner >> i & 1)
                stack[sp++] = q->first[i];
        for (int i = 0; i < 4; ++i)
            if (((mask & ~inner) >> i & 1) &&
                !visit_leaf_slots(b, mesh, q->first[i], q->first[i] + q->count[i], &qb, &v, visit,
                                  ctx))
                return false;
    }
    return true;
}

/// Whether slots[0..n) ascend.
static bool ascending(const uint32_t *slots, uint32_t n)
{
    for (uint32_t i = 1; i < n; ++i)
        if (slots[i] <= slots[i - 1])
            return false;
    return true;
}

/// Visits the triangles of the listed boxes that may meet world box [lo, hi], by slot (box_slots is
/// in any order: a list not ascending is walked by taking the least slot left each time, which
/// the overflow mode can afford); false when the visitor stopped.
static bool visit_boxes(const kcc_world_source *src, const float lo[3], const float hi[3],
                        placed_visitor visit, void *ctx)
{
    placed_visit v = {NULL, {{{0}}, {0}, 0.0f, 0u}};
    const bool in_order = ascending(src->box_slots, src->box_count);
    uint32_t slot = 0;
    for (uint32_t i = 0; i < src->box_count; ++i) {
        if (in_order) {
            slot = src->box_slots[i];
        } else {
            const uint32_t after = slot;
            slot = UINT32_MAX;
            for (uint32_t j = 0; j < src->box_count; ++j)
                if ((i == 0 || src->box_slots[j] > after) && src->box_slots[j] < slot)
                    slot = src->box_slots[j];
        }
        if (!box_seen(src, slot) || !boxes_touch(src->boxes[slot][0], src->boxes[slot][1], lo, hi))
            continue;
        for (uint32_t k = 0; k < BOX_TRIS; ++k) {
            if (!box_tri_touches(src->boxes[slot], k, lo, hi))
                continue;
            box_tri_of(src, KCC_WORLD_BOX_TRIS + BOX_TRIS * slot + k, &v.tri);
            if (!visit(ctx, &v))
                return false;
        }
    }
    return true;
}

/// Visits every placed triangle of the seen bodies whose bounds may meet world box [lo, hi].
static void visit_placed(const kcc_world_source *src, const float lo[3], const float hi[3],
                         placed_visitor visit, void *ctx)
{
    part_cursor at = {0, 0};
    seen_part part;
    while (next_seen_part(src, &at, lo, hi, &part)) {
        float llo[3], lhi[3];
        region_in_body(part.body, lo, hi, llo, lhi);
        if (!visit_part_slots(&part, llo, lhi, visit, ctx))
            return;
    }
    visit_boxes(src, lo, hi, visit, ctx);
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

/// Triangle id of this source as a listed triangle; false for an id it does not list.
static bool triangle_of_id(const kcc_world_source *src, uint32_t id, kcc_local_tri *out)
{
    if (id >= KCC_WORLD_BOX_TRIS) {
        const uint32_t slot = (id - KCC_WORLD_BOX_TRIS) / BOX_TRIS;
        bool listed = false;
        for (uint32_t i = 0; i < src->box_count && !listed; ++i)
            listed = src->box_slots[i] == slot && box_seen(src, slot);
        if (listed)
            box_tri_of(src, id, out);
        return listed;
    }
    uint32_t input;
    const kcc_body *b = kcc_world_body_of_triangle(src->world, id, &input);
    if (!b || !(b->layers & src->layer_mask))
        return false;
    return slot_local_tri(b, b->mesh->hf ? input : kcc_mesh_slot_of(b->mesh, input), out);
}

static bool world_triangle(const kcc_local_source *base, uint32_t id, vec3 out_corners[3])
{
    kcc_local_tri tri;
    if (!triangle_of_id((const kcc_world_source *)(const void *)base, id, &tri))
        return false;
    memcpy(out_corners, tri.v, sizeof tri.v);
    return true;
}

static void world_face_normal(const kcc_local_source *base, uint32_t id, vec3 out)
{
    kcc_local_tri tri;
    const bool known = triangle_of_id((const kcc_world_source *)(const void *)base, id, &tri);
    KCC_ASSERT(known);
    (void)known;
    memcpy(out, tri.n, sizeof tri.n);
}

/* ------------------------------------------------------------------------------------------------
 * Sensors */

typedef struct parity_job {
    const float *origin, *dir;
    float        max_t;
    uint32_t     crossings;
} parity_job;

static bool parity_visit(void *ctx, const placed_visit *v)
{
    parity_job *job = ctx;
    const float(*c)[3] = (const float(*)[3])v->tri.v;
    float t;
    job->crossings += kcc_tri_raycast(c[0], c[1], c[2], job->origin, job->dir, job->max_t, &t);
    return true;
}

typedef struct touch_job {
    const vec3 *box;
    bool        touched;
} touch_job;

static bool touch_visit(void *ctx, const placed_visit *v)
{
    touch_job *job = ctx;
    const float(*c)[3] = (const float(*)[3])v->tri.v;
    job->touched = kcc_tri_overlap_box_internal(c[0], c[1], c[2], job->box[0], job->box[1]);
    return !job->touched; /* the first touch decides */
}

bool kcc_world_sensor_holds(const kcc_world *world, uint32_t slot, const float box[2][3])
{
    const kcc_body *b = &world->bodies[slot];
    if (!boxes_touch(b->bounds[0], b->bounds[1], box[0], box[1]))
        return false;
    kcc_world_source src;
    kcc_world_source_init(&src, world, KCC_LAYERS_ALL);
    src.only_body = slot;
    touch_job touch = {(const vec3 *)box, false};
    visit_placed(&src, box[0], box[1], touch_visit, &touch);
    if (touch.touched)
        return true;
    /* the centre inside the volume the mesh closes: an odd number of crossings along +x (the
       watertight ray test counts a crossing through a shared edge once) */
    const float center[3] = {0.5f * (box[0][0] + box[1][0]), 0.5f * (box[0][1] + box[1][1]),
                             0.5f * (box[0][2] + box[1][2])};
    const float dir[3] = {1.0f, 0.0f, 0.0f};
    parity_job job = {center, dir, b->bounds[1][0] - center[0] + 1.0f, 0};
    if (!(job.max_t > 0.0f))
        return false;
    const float hi[3] = {b->bounds[1][0] + 1.0f, center[1], center[2]};
    visit_placed(&src, center, hi, parity_visit, &job);
    return job.crossings % 2 == 1;
}

static const kcc_local_source_ops world_source_ops = {
    world_query, world_fetch, world_raycast, world_overlap, world_sweep, world_triangle,
    world_face_normal,
};

bool kcc_world_source_parts(const kcc_local_source *base, const kcc_local_source **out_fixed,
                            const kcc_local_source **out_rest)
{
    if (base->ops != &world_source_ops)
        return false;
    const kcc_world_source *src = (const kcc_world_source *)(const void *)base;
    if (!src->fixed)
        return false;
    *out_fixed = &src->fixed->base;
    *out_rest = &src->rest->base;
    return true;
}

bool kcc_world_source_reaches(const kcc_local_source *base, const vec3 region[2])
{
    if (base->ops != &world_source_ops)
        return true;
    const float(*reach)[3] = ((const kcc_world_source *)(const void *)base)->reach;
    return !reach || (region[0][0] >= reach[0][0] && region[0][1] >= reach[0][1] &&
                      region[0][2] >= reach[0][2] && region[1][0] <= reach[1][0] &&
                      region[1][1] <= reach[1][1] && region[1][2] <= reach[1][2]);
}

void kcc_world_source_link(kcc_world_source *all, const kcc_world_source *fixed, kcc_world_source *rest)
{
    KCC_ASSERT(all->part == KCC_WORLD_PART_ALL && rest->part == KCC_WORLD_PART_ALL);
    KCC_ASSERT(fixed->part == KCC_WORLD_PART_STATIC && fixed->world == all->world &&
               fixed->layer_mask == all->layer_mask);
    rest->part = KCC_WORLD_PART_MOVING;
    rest->fixed = rest->rest = NULL;
    all->fixed = fixed;
    all->rest = rest;
}

void kcc_world_source_split(kcc_world_source *all, kcc_world_source *fixed, kcc_world_source *rest)
{
    KCC_ASSERT(all->part == KCC_WORLD_PART_ALL);
    *fixed = *all;
    fixed->part = KCC_WORLD_PART_STATIC;
    fixed->base.key = all->world->static_key ^ (uint64_t)all->layer_mask * 0x9E3779B97F4A7C15ull;
    if (fixed->base.key == 0)
        fixed->base.key = 1;
    fixed->boxes = NULL;
    fixed->box_slots = NULL;
    fixed->box_count = 0;
    fixed->pieces = NULL;
    fixed->piece_count = 0;
    fixed->fixed = fixed->rest = NULL;
    *rest = *all;
    kcc_world_source_link(all, fixed, rest);
}

void kcc_world_source_init(kcc_world_source *out, const kcc_world *world, uint32_t layer_mask)
{
    out->base.ops = &world_source_ops;
    out->base.owner = world;
    out->base.key = world->key ^ (uint64_t)layer_mask * 0x9E3779B97F4A7C15ull;
    if (out->base.key == 0)
        out->base.key = 1;
    out->world = world;
    out->layer_mask = layer_mask;
    out->skip_body = KCC_WORLD_NO_BODY;
    out->only_body = KCC_WORLD_NO_BODY;
    out->boxes = NULL;
    out->box_slots = NULL;
    out->box_count = 0;
    out->box_layers = out->box_masks = NULL;
    out->self_layers = 0;
    out->skip_box = KCC_WORLD_NO_BODY;
    out->pieces = NULL;
    out->piece_count = 0;
    out->part = KCC_WORLD_PART_ALL;
    out->fixed = NULL;
    out->rest = NULL;
    out->reach = NULL;
}
