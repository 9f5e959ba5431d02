/* world.c: owns kcc_world: its single allocation, the body slots and their generation-checked ids,
 * adding, removing and moving bodies, and the step that carries kinematic bodies to their
 * targets. Nothing here allocates after kcc_world_create. */
#include <math.h>
#include <string.h>

#include "kcc_world_internal.h"

#define WORLD_ALIGN 64
#define DEFAULT_BODIES 1024u
#define DEFAULT_CHARACTERS 1024u
#define DEFAULT_CELL_SIZE 4.0f
/// A rotation is accepted when its length is within this of 1 (API.md), then normalised.
#define ROTATION_TOLERANCE 1e-3

kcc_world_desc kcc_world_default_desc(void)
{
    kcc_world_desc d;
    memset(&d, 0, sizeof d);
    d.body_capacity = DEFAULT_BODIES;
    d.character_capacity = DEFAULT_CHARACTERS;
    d.worker_count = 1;
    d.grid_cell_size = DEFAULT_CELL_SIZE;
    return d;
}

kcc_body_desc kcc_body_default_desc(void)
{
    kcc_body_desc d;
    memset(&d, 0, sizeof d);
    d.kind = KCC_BODY_STATIC;
    d.transform = kcc_transform_identity();
    d.layers = 1;
    return d;
}

kcc_status kcc_world_resolve_desc(const kcc_world_desc *in, kcc_world_desc *out)
{
    *out = in ? *in : kcc_world_default_desc();
    if (out->body_capacity == 0)
        out->body_capacity = DEFAULT_BODIES;
    if (out->character_capacity == 0)
        out->character_capacity = DEFAULT_CHARACTERS;
    if (out->worker_count == 0)
        out->worker_count = 1;
    if (out->grid_cell_size == 0.0f)
        out->grid_cell_size = DEFAULT_CELL_SIZE;
    if (out->pair_capacity == 0)
        out->pair_capacity = 8 * (out->body_capacity + out->character_capacity);
    if (out->piece_capacity == 0)
        out->piece_capacity = 4 * out->body_capacity + 4096;
    if (out->sensor_capacity == 0)
        out->sensor_capacity = 4 * out->character_capacity;
    if ((out->allocator.alloc == NULL) != (out->allocator.free == NULL) ||
        (out->enqueue_task == NULL) != (out->finish_task == NULL) ||
        !(out->grid_cell_size > 0.0f && out->grid_cell_size <= 1e30f))
        return KCC_ERR_BAD_DESC;
    if (out->body_capacity > KCC_WORLD_MAX_OBJECTS ||
        out->character_capacity > KCC_WORLD_MAX_OBJECTS ||
        out->piece_capacity > KCC_WORLD_MAX_OBJECTS || out->worker_count > 1024 ||
        out->sensor_capacity > (1u << 28) ||
        out->pair_capacity > (1u << 28))
        return KCC_ERR_TOO_LARGE;
    return KCC_OK;
}

/// The broadphase a world of desc keeps: a proxy for every body, character and piece.
static kcc_broadphase_desc broadphase_desc(const kcc_world_desc *desc)
{
    kcc_broadphase_desc bd;
    bd.proxy_capacity = desc->body_capacity + desc->character_capacity + desc->piece_capacity;
    bd.pair_capacity = desc->pair_capacity;
    bd.cell_size = desc->grid_cell_size;
    return bd;
}

size_t kcc_world_layout(kcc_world *w, char *base, const kcc_world_desc *desc)
{
    const uint32_t bodies = desc->body_capacity;
    size_t at = 0;
#define WORLD_PART(field, count)                                                  \
    do {                                                                          \
        at = (at + WORLD_ALIGN - 1) / WORLD_ALIGN * WORLD_ALIGN;                  \
        if (base)                                                                 \
            w->field = (void *)(base + at);                                       \
        at += (size_t)(count) * sizeof(*w->field);                                \
    } while (0)
    at = sizeof(kcc_world);
    WORLD_PART(bodies, bodies);
    WORLD_PART(body_ids.ring, bodies);
    WORLD_PART(bases, bodies);
    WORLD_PART(movers, bodies);
    WORLD_PART(sensors, bodies);
    WORLD_PART(tree.prims, bodies);
    WORLD_PART(tree.pairs, bodies + 1);
    WORLD_PART(tree.quads, bodies + 1);
    WORLD_PART(tree.scratch, 2 * (bodies + 1));
    WORLD_PART(tree.slot, bodies);
    const uint32_t static_leaves = kcc_static_tree_capacity(bodies);
    const uint32_t static_quads = static_leaves / 4 + 1;
    WORLD_PART(statics.prims, static_leaves);
    WORLD_PART(statics.leaves, static_leaves);
    WORLD_PART(statics.pairs, static_leaves);
    WORLD_PART(statics.quads, static_quads);
    WORLD_PART(statics.scratch, 2 * (static_quads + KCC_TREE_STACK));
    WORLD_PART(statics.member, bodies);
    WORLD_PART(pieces, desc->piece_capacity);
    const kcc_broadphase_desc bd = broadphase_desc(desc);
    at = (at + WORLD_ALIGN - 1) / WORLD_ALIGN * WORLD_ALIGN;
    if (base)
        w->broadphase = (kcc_broadphase *)(void *)(base + at);
    at += kcc_broadphase_memory_bytes(&bd);
#undef WORLD_PART
    return at;
}

void kcc_world_init(kcc_world *w, const kcc_world_desc *desc, const kcc_allocator *allocator,
                    size_t block_bytes, struct kcc_world_characters *characters)
{
    w->characters = characters;
    w->allocator = *allocator;
    w->block_bytes = block_bytes;
    w->desc = *desc;
    kcc_id_pool_init(&w->body_ids, w->body_ids.ring, desc->body_capacity);
    for (uint32_t i = 0; i < desc->piece_capacity; ++i)
        w->pieces[i].next = i + 1 < desc->piece_capacity ? i + 1 : KCC_WORLD_NO_PIECE;
    w->free_piece = desc->piece_capacity > 0 ? 0 : KCC_WORLD_NO_PIECE;
    const kcc_broadphase_desc bd = broadphase_desc(desc);
    w->broadphase = kcc_broadphase_init(w->broadphase, &bd);
    KCC_ASSERT(w->broadphase != NULL);
    w->key = kcc_fresh_key(0);
    w->tree.valid = true; /* an empty world: no body to miss */
    w->statics.capacity = kcc_static_tree_capacity(desc->body_capacity);
    w->statics.quad_capacity = w->statics.capacity / 4 + 1;
    w->statics.valid = true;
}

const kcc_world_desc *kcc_world_get_desc(const kcc_world *world)
{
    return &world->desc;
}

struct kcc_world_characters *kcc_world_characters(const kcc_world *world)
{
    return world->characters;
}

void kcc_world_destroy(kcc_world *world)
{
    if (!world)
        return;
    if (world->recorder) /* a writer still recording the world must not keep it */
        world->release_recorder(world);
    world->allocator.free(world, world->allocator.user);
}

size_t kcc_world_memory_bytes(const kcc_world *world)
{
    return world ? world->block_bytes : 0;
}

/* ------------------------------------------------------------------------------------------------
 * Ids and transforms */

const kcc_body *kcc_world_find_body(const kcc_world *world, uint32_t body)
{
    uint32_t slot, generation;
    if (!world || !kcc_id_split(body, world->desc.body_capacity, &slot, &generation))
        return NULL;
    const kcc_body *b = &world->bodies[slot];
    return b->mesh && b->generation == generation ? b : NULL;
}

static kcc_body *find_body_mut(kcc_world *world, uint32_t body)
{
    return (kcc_body *)(uintptr_t)kcc_world_find_body(world, body);
}

/// Checks a caller's transform and writes it with its rotation normalised.
static kcc_status check_transform(const kcc_transform *in, kcc_transform *out)
{
    double len = 0.0;
    for (int k = 0; k < 4; ++k) {
        if (!isfinite(in->rotation[k]))
            return KCC_ERR_NON_FINITE;
        len += (double)in->rotation[k] * (double)in->rotation[k];
    }
    for (int k = 0; k < 3; ++k)
        if (!isfinite(in->position[k]) || fabsf(in->position[k]) > KCC_WORLD_MAX_POSITION)
            return isfinite(in->position[k]) ? KCC_ERR_BAD_DESC : KCC_ERR_NON_FINITE;
    len = sqrt(len);
    if (!(fabs(len - 1.0) <= ROTATION_TOLERANCE))
        return KCC_ERR_BAD_DESC;
    *out = *in;
    for (int k = 0; k < 4; ++k)
        out->rotation[k] = (float)((double)in->rotation[k] / len);
    return KCC_OK;
}

/// Places the body at t (checked) and updates its bounds; the body tree goes stale.
static void place_body(kcc_world *world, kcc_body *b, const kcc_transform *t)
{
    kcc_pose_set(&b->pose, t);
    b->start = b->pose;
    kcc_pose_box_bounds(&b->pose, b->mesh->bounds[0], b->mesh->bounds[1], b->bounds[0],
                        b->bounds[1]);
    world->tree.valid = false;
    world->key = kcc_fresh_key(world->key);
}

/* ------------------------------------------------------------------------------------------------
 * Triangle ranges: each live body's triangles are ids tri_base .. tri_base + count - 1 of the
 * world's neighbourhood source, ranges laid end to end in the order bodies were added. */

/// Lays every live body's range out again from 0, in the same order (when the next range would
/// reach KCC_WORLD_BOX_TRIS).
static void compact_triangle_ranges(kcc_world *world)
{
    uint32_t next = 0;
    for (uint32_t i = 0; i < world->base_count; ++i) {
        kcc_body *b = &world->bodies[world->bases[i].slot];
        b->tri_base = world->bases[i].base = next;
        next += b->mesh->triangle_count;
    }
    world->tri_next = next;
}

static void add_triangle_range(kcc_world *world, uint32_t slot)
{
    kcc_body *b = &world->bodies[slot];
    const uint32_t count = b->mesh->triangle_count;
    if (count > KCC_WORLD_BOX_TRIS - world->tri_next)
        compact_triangle_ranges(world);
    b->tri_base = world->tri_next;
    world->tri_next += count;
    world->tri_live += count;
    const kcc_body_base entry = {b->tri_base, slot};
    world->bases[world->base_count++] = entry;
}

static void remove_triangle_range(kcc_world *world, uint32_t slot)
{
    uint32_t i = 0;
    while (world->bases[i].slot != slot)
        ++i;
    memmove(&world->bases[i], &world->bases[i + 1],
            (world->base_count - i - 1) * sizeof world->bases[0]);
    --world->base_count;
    world->tri_live -= world->bodies[slot].mesh->triangle_count;
}

const kcc_body *kcc_world_body_of_triangle(const kcc_world *world, uint32_t id,
                                           uint32_t *out_triangle)
{
    uint32_t lo = 0, hi = world->base_count; /* the last range starting at or before id */
    while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (world->bases[mid].base <= id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const kcc_body *b = &world->bodies[world->bases[lo - 1].slot];
    if (id - b->tri_base >= b->mesh->triangle_count)
        return NULL;
    *out_triangle = id - b->tri_base;
    return b;
}

uint32_t kcc_world_triangle_body(const kcc_world *world, uint32_t id)
{
    uint32_t triangle;
    const kcc_body *b = kcc_world_body_of_triangle(world, id, &triangle);
    return b ? kcc_body_id(world, (uint32_t)(b - world->bodies)) : 0;
}

uint32_t kcc_world_triangle_base(const kcc_world *world, uint32_t id)
{
    uint32_t triangle;
    const kcc_body *b = kcc_world_body_of_triangle(world, id, &triangle);
    return b ? b->tri_base : 0;
}

/* ------------------------------------------------------------------------------------------------
 * Bodies */

kcc_status kcc_world_add_body(kcc_world *world, const kcc_mesh *mesh, const kcc_body_desc *desc,
                              uint32_t *out_body)
{
    if (!world || !mesh || !out_body)
        return KCC_ERR_NULL_ARGUMENT;
    const kcc_body_desc d = desc ? *desc : kcc_body_default_desc();
    kcc_transform t;
    kcc_status st = check_transform(&d.transform, &t);
    if (st != KCC_OK)
        return st;
    if ((unsigned)d.kind > (unsigned)KCC_BODY_KINEMATIC || d.layers == 0)
        return KCC_ERR_BAD_DESC;
    if (mesh->triangle_count > KCC_WORLD_BOX_TRIS - world->tri_live)
        return KCC_ERR_TOO_LARGE; /* the live bodies' triangles would not fit 32-bit ids */
    uint32_t slot;
    if (!kcc_id_pool_take(&world->body_ids, &slot))
        return KCC_ERR_TOO_LARGE;
    kcc_body *b = &world->bodies[slot];
    const uint32_t generation = b->generation;
    memset(b, 0, sizeof *b);
    b->generation = generation;
    b->mesh = mesh;
    b->kind = d.kind;
    b->layers = d.layers;
    b->user_data = d.user_data;
    b->sensor = d.sensor;
    place_body(world, b, &t);
    if (kcc_world_add_pieces(world, slot) != KCC_OK) { /* the slot goes back as it was */
        b->mesh = NULL;
        kcc_id_pool_give(&world->body_ids, slot);
        return KCC_ERR_TOO_LARGE;
    }
    add_triangle_range(world, slot);
    ++world->body_count;
    if (b->kind == KCC_BODY_STATIC)
        world->statics.valid = false;
    world->body_end = world->body_ids.end;
    *out_body = kcc_body_id(world, slot);
    if (world->recorder) world->record_body(world, KCC_BODY_ADDED, *out_body, &d.transform);
    return KCC_OK;
}

kcc_status kcc_world_remove_body(kcc_world *world, uint32_t body)
{
    if (!world)
        return KCC_ERR_NULL_ARGUMENT;
    kcc_body *b = find_body_mut(world, body);
    if (!b)
        return KCC_ERR_NOT_FOUND;
    const uint32_t slot = (uint32_t)(b - world->bodies);
    kcc_world_remove_pieces(world, slot);
    remove_triangle_range(world, slot);
    b->mesh = NULL;
    b->generation = (b->generation + 1) & KCC_ID_GENERATION_MASK;
    kcc_id_pool_give(&world->body_ids, slot);
    --world->body_count;
    world->tree.valid = false;
    if (b->kind == KCC_BODY_STATIC)
        world->statics.valid = false;
    world->key = kcc_fresh_key(world->key);
    if (world->recorder) world->record_body(world, KCC_BODY_REMOVED, body, NULL);
    return KCC_OK;
}

kcc_status kcc_world_move_body(kcc_world *world, uint32_t body, const kcc_transform *target)
{
    if (!world || !target)
        return KCC_ERR_NULL_ARGUMENT;
    kcc_body *b = find_body_mut(world, body);
    if (!b)
        return KCC_ERR_NOT_FOUND;
    if (b->kind != KCC_BODY_KINEMATIC)
        return KCC_ERR_BAD_DESC;
    kcc_transform t;
    kcc_status st = check_transform(target, &t);
    if (st != KCC_OK)
        return st;
    b->target = t;
    b->has_target = true;
    if (world->recorder) world->record_body(world, KCC_BODY_TARGETED, body, target);
    return KCC_OK;
}

kcc_status kcc_world_set_body_transform(kcc_world *world, uint32_t body,
                                        const kcc_transform *transform)
{
    if (!world || !transform)
        return KCC_ERR_NULL_ARGUMENT;
    kcc_body *b = find_body_mut(world, body);
    if (!b)
        return KCC_ERR_NOT_FOUND;
    kcc_transform t;
    kcc_status st = check_transform(transform, &t);
    if (st != KCC_OK)
        return st;
    const uint32_t slot = (uint32_t)(b - world->bodies);
    const kcc_transform was = b->pose.transform;
    kcc_world_remove_pieces(world, slot);
    place_body(world, b, &t);
    if (kcc_world_add_pieces(world, slot) != KCC_OK) { /* more pieces than fit: stay put */
        place_body(world, b, &was);
        st = kcc_world_add_pieces(world, slot);
        KCC_ASSERT(st == KCC_OK);
        return KCC_ERR_TOO_LARGE;
    }
    b->has_target = false;
    if (b->kind == KCC_BODY_STATIC)
        world->statics.valid = false;
    if (world->recorder) world->record_body(world, KCC_BODY_PLACED, body, transform);
    return KCC_OK;
}

/* ------------------------------------------------------------------------------------------------
 * Shifting the origin: every pose (where each body is, where it started the last step, its
 * target) moves by -new_origin, each position subtracted in float; the pieces are laid out again
 * at the new poses (their proxies with them) and the body tree rebuilt. */

/// Whether position - new_origin is a position a body may have, on every axis.
static bool shift_stays_in_range(const float position[3], const float new_origin[3])
{
    for (int k = 0; k < 3; ++k)
        if (!(fabsf(position[k] - new_origin[k]) <= KCC_WORLD_MAX_POSITION))
            return false;
    return true;
}

static void shift_position(float position[3], const float new_origin[3])
{
    for (int k = 0; k < 3; ++k)
        position[k] -= new_origin[k];
}

/// How many pieces every live body has once shifted; false when a pose would leave the range.
static bool count_shifted_pieces(const kcc_world *world, const float new_origin[3], uint32_t *out)
{
    uint32_t pieces = 0;
    for (uint32_t i = 0; i < world->body_end; ++i) {
        const kcc_body *b = &world->bodies[i];
        if (!b->mesh)
            continue;
        if (!shift_stays_in_range(b->pose.transform.position, new_origin) ||
            !shift_stays_in_range(b->start.transform.position, new_origin) ||
            (b->has_target && !shift_stays_in_range(b->target.position, new_origin)))
            return false;
        kcc_body moved = *b;
        shift_position(moved.pose.transform.position, new_origin);
        kcc_pose_box_bounds(&moved.pose, b->mesh->bounds[0], b->mesh->bounds[1], moved.bounds[0],
                            moved.bounds[1]);
        pieces += kcc_world_count_pieces(world, &moved);
    }
    *out = pieces;
    return true;
}

kcc_status kcc_world_shift_bodies(kcc_world *world, const float new_origin[3])
{
    uint32_t pieces;
    if (!count_shifted_pieces(world, new_origin, &pieces))
        return KCC_ERR_BAD_DESC;
    const uint32_t proxy_room = world->desc.body_capacity + world->desc.character_capacity +
                                world->desc.piece_capacity;
    const uint32_t other_proxies = kcc_broadphase_proxy_count(world->broadphase) - world->piece_count;
    if (pieces > world->desc.piece_capacity || pieces > proxy_room - other_proxies)
        return KCC_ERR_TOO_LARGE; /* checked before anything moves: a refused shift changes nothing */
    for (uint32_t i = 0; i < world->body_end; ++i)
        if (world->bodies[i].mesh)
            kcc_world_remove_pieces(world, i);
    for (uint32_t i = 0; i < world->body_end; ++i) {
        kcc_body *b = &world->bodies[i];
        if (!b->mesh)
            continue;
        shift_position(b->pose.transform.position, new_origin);
        shift_position(b->start.transform.position, new_origin);
        if (b->has_target)
            shift_position(b->target.position, new_origin);
        kcc_pose_box_bounds(&b->pose, b->mesh->bounds[0], b->mesh->bounds[1], b->bounds[0],
                            b->bounds[1]);
        const kcc_status st = kcc_world_add_pieces(world, i);
        KCC_ASSERT(st == KCC_OK);
        (void)st;
    }
    world->key = kcc_fresh_key(world->key);
    kcc_world_rebuild_body_tree(world);
    kcc_world_rebuild_static_tree(world);
    return KCC_OK;
}

kcc_status kcc_world_get_body_transform(const kcc_world *world, uint32_t body,
                                        kcc_transform *out_transform, kcc_transform *out_start)
{
    if (!world || !out_transform)
        return KCC_ERR_NULL_ARGUMENT;
    const kcc_body *b = kcc_world_find_body(world, body);
    if (!b)
        return KCC_ERR_NOT_FOUND;
    *out_transform = b->pose.transform;
    if (out_start)
        *out_start = b->start.transform;
    return KCC_OK;
}

kcc_status kcc_world_set_body_layers(kcc_world *world, uint32_t body, uint32_t layers)
{
    if (!world)
        return KCC_ERR_NULL_ARGUMENT;
    kcc_body *b = find_body_mut(world, body);
    if (!b)
        return KCC_ERR_NOT_FOUND;
    if (layers == 0)
        return KCC_ERR_BAD_DESC;
    if (b->kind == KCC_BODY_STATIC && b->layers != layers) /* which characters see its triangles */
        world->static_key = kcc_fresh_key(world->static_key);
    b->layers = layers;
    kcc_world_static_tree_set_layers(world, (uint32_t)(b - world->bodies));
    if (world->recorder) world->record_body(world, KCC_BODY_LAYERED, body, NULL);
    return KCC_OK;
}

uint64_t kcc_world_body_user_data(const kcc_world *world, uint32_t body)
{
    const kcc_body *b = kcc_world_find_body(world, body);
    return b ? b->user_data : 0;
}

const kcc_mesh *kcc_world_body_mesh(const kcc_world *world, uint32_t body)
{
    const kcc_body *b = kcc_world_find_body(world, body);
    return b ? b->mesh : NULL;
}

uint32_t kcc_world_body_count(const kcc_world *world)
{
    return world ? world->body_count : 0;
}

/* ------------------------------------------------------------------------------------------------
 * The step */

/// Every kinematic body: its start pose becomes where it is, and it moves to its target (if one
/// was set since the last step). Static bodies keep start == pose.
static void move_kinematic_bodies(kcc_world *world)
{
    world->mover_count = 0;
    for (uint32_t i = 0; i < world->body_end; ++i) {
        kcc_body *b = &world->bodies[i];
        if (!b->mesh || b->kind != KCC_BODY_KINEMATIC)
            continue;
        const kcc_pose start = b->pose;
        if (b->has_target && memcmp(&b->target, &start.transform, sizeof b->target) != 0) {
            place_body(world, b, &b->target);
            if (!b->sensor) /* a sensor is not solid: it carries and pushes nothing */
                world->movers[world->mover_count++] = i;
        }
        b->start = start;
        b->has_target = false;
        kcc_world_move_pieces(world, i); /* its proxy covers this step's motion */
    }
}

uint32_t kcc_world_piece_body(const kcc_world *world, uint32_t piece, bool *out_sensor)
{
    const uint32_t slot = world->pieces[piece].body;
    if (out_sensor)
        *out_sensor = world->bodies[slot].sensor;
    return slot;
}

uint64_t kcc_world_piece_order(const kcc_world *world, uint32_t piece)
{
    const kcc_piece *p = &world->pieces[piece];
    return (uint64_t)world->bodies[p->body].tri_base << 32 | p->slot_lo;
}

uint64_t kcc_world_step_key(const kcc_world *world)
{
    return kcc_fresh_key(world->key);
}

uint32_t kcc_world_movers(const kcc_world *world, const uint32_t **out_slots)
{
    *out_slots = world->movers;
    return world->mover_count;
}

uint32_t kcc_world_body_id_of_slot(const kcc_world *world, uint32_t slot)
{
    return kcc_body_id(world, slot);
}

uint32_t kcc_world_body_slot(const kcc_world *world, uint32_t body)
{
    const kcc_body *b = kcc_world_find_body(world, body);
    return b ? (uint32_t)(b - world->bodies) : KCC_WORLD_NO_BODY;
}

void kcc_world_body_motion(const kcc_world *world, uint32_t slot, kcc_transform *out_start,
                           kcc_transform *out_end, float out_swept[2][3])
{
    const kcc_body *b = &world->bodies[slot];
    *out_start = b->start.transform;
    *out_end = b->pose.transform;
    float lo[3], hi[3];
    kcc_pose_box_bounds(&b->start, b->mesh->bounds[0], b->mesh->bounds[1], lo, hi);
    /* a rotating body's points move on arcs, which leave the chord by at most r (1 - cos(a / 2))
       for a turn by a about the body's origin, r the farthest point: grow by r (enough for any a) */
    double reach = 0.0;
    for (int k = 0; k < 3; ++k) {
        const double m = fmax(fabs((double)b->mesh->bounds[0][k]), fabs((double)b->mesh->bounds[1][k]));
        reach += m * m;
    }
    const float grow = b->start.rotated || b->pose.rotated ? (float)sqrt(reach) : 0.0f;
    for (int k = 0; k < 3; ++k) {
        out_swept[0][k] = kcc_minf(lo[k], b->bounds[0][k]) - grow;
        out_swept[1][k] = kcc_maxf(hi[k], b->bounds[1][k]) + grow;
    }
}

/// The live sensors, for the characters' phase of the step.
static void list_sensors(kcc_world *world)
{
    world->sensor_count = 0;
    for (uint32_t i = 0; i < world->body_end; ++i)
        if (world->bodies[i].mesh && world->bodies[i].sensor)
            world->sensors[world->sensor_count++] = i;
}

uint32_t kcc_world_sensors(const kcc_world *world, const uint32_t **out_slots)
{
    *out_slots = world->sensors;
    return world->sensor_count;
}

void kcc_world_step_bodies(kcc_world *world)
{
    move_kinematic_bodies(world);
    list_sensors(world);
    if (!world->tree.valid)
        kcc_world_rebuild_body_tree(world);
    if (!world->statics.valid)
        kcc_world_rebuild_static_tree(world);
}
