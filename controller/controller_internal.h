/* controller_internal.h: the controller's private parts shared by its .c files and tests: the
 * character's private storage, the geometry helpers in its up-axis frame, the ground probe and the
 * ISA choice. The triangle list the move runs on is collide's (kcc_local_internal.h). Never
 * installed. */
#ifndef KCC_CONTROLLER_INTERNAL_H
#define KCC_CONTROLLER_INTERNAL_H

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "kcc_controller.h"
#include "kcc_local_internal.h"

/* A character's private storage (kcc_character.priv): the tuning check, the neighbourhood's
 * triangles kept between moves, and the box found clear of the level at the end of the last move
 * (saves the next move's start check; never changes an answer). */
typedef struct kcc_character_private {
    uint64_t        tuning_check; /* kcc_character_tuning_check when init or a retune set it up */
    vec3            clear_at;    /* the box centred here was found clear of (clear_owner, clear_key) */
    const void     *clear_owner; /* NULL: nothing known */
    uint64_t        clear_key;
    uint64_t        clear_fixed_key; /* when clear_key is a split world source's: its fixed part's
                                        key (of the same owner), which outlives it; else 0 */
    kcc_local_cache cache;       /* last: the note shares its cache line with the public state */
} kcc_character_private;
_Static_assert(sizeof(kcc_character_private) <= KCC_CHARACTER_PRIVATE_BYTES,
               "kcc_character.priv holds the private storage");
_Static_assert(_Alignof(kcc_character_private) <= 16, "kcc_character.priv is 16-byte aligned");
_Static_assert(offsetof(kcc_character_private, tuning_check) == 0, "kcc_character_set_up reads it first");

static inline kcc_character_private *kcc_character_priv(kcc_character *ch)
{
    return (kcc_character_private *)(void *)ch->priv.bytes;
}

/* Forgets the cache and the clear note (tests: a character without them moves the same). */
static inline void kcc_character_forget(kcc_character *ch)
{
    kcc_character_private *priv = kcc_character_priv(ch);
    const uint64_t check = priv->tuning_check;
    memset(priv, 0, sizeof(*priv));
    priv->tuning_check = check;
}

/* A walking move longer than the box's narrower half width `part` runs as that many equal
 * sub-moves, at most KCC_MAX_SUBSTEPS, each the whole scheme (controller.c, substeps): the count for
 * a sideways walk of `len` (1 when len is not above part, NaN included). The world's step region
 * bounds a move's reach with it (world_neighbours.c). */
#define KCC_MAX_SUBSTEPS 8u
static inline uint32_t kcc_walk_parts(float len, float part)
{
    if (!(len > part))
        return 1u;
    const float n = ceilf(len / part);
    return n < (float)KCC_MAX_SUBSTEPS ? (uint32_t)n : KCC_MAX_SUBSTEPS;
}

/* True when v goes into none of the n planes (v . plane < -eps), planes skip_a and skip_b aside. */
static inline bool kcc_into_none(const vec3 v, const vec3 *planes, uint32_t n, uint32_t skip_a,
                                 uint32_t skip_b, float eps)
{
    for (uint32_t j = 0; j < n; ++j)
        if (j != skip_a && j != skip_b &&
            v[0] * planes[j][0] + v[1] * planes[j][1] + v[2] * planes[j][2] < -eps)
            return false;
    return true;
}

/* ---- the up axis in the world, and the character frame a move runs in ---- */
/* The world axis (0 x, 1 y, 2 z) and direction (+1, -1) of a valid up_axis (1 +Y, 2 +Z, 3 +X, -1 -Y,
 * -2 -Z, -3 -X). */
static inline int kcc_up_axis_index(int up_axis)
{
    const int magnitude = up_axis < 0 ? -up_axis : up_axis;
    return magnitude == 3 ? 0 : magnitude;
}
static inline float kcc_up_axis_sign(int up_axis) { return up_axis < 0 ? -1.0f : 1.0f; }

/* A move runs in a frame whose up is +Y or +Z: the world's own for up_axis 1 and 2; for the other
 * axes the world mapped by the proper rotation below (kcc_axis_map: frame[k] = sign[k] *
 * world[axis[k]]), which takes the up direction to +Y (+X, -Y, -X: a quarter, half or three
 * quarters turn about Z) or to +Z (-Z: a half turn about X). Returns the frame's up_axis (1 or 2).
 * Guarded by test_axes (every axis moves as the rotated +Y or +Z run, bit for bit). */
static inline int kcc_up_axis_frame(int up_axis, kcc_axis_map *out)
{
    static const kcc_axis_map maps[4] = {
        {{1, 0, 2}, {1.0f, -1.0f, 1.0f}},  /* -X: (x, y, z) -> (y, -x, z) */
        {{0, 1, 2}, {1.0f, -1.0f, -1.0f}}, /* -Z: (x, y, z) -> (x, -y, -z), +Z up */
        {{0, 1, 2}, {-1.0f, -1.0f, 1.0f}}, /* -Y: (x, y, z) -> (-x, -y, z) */
        {{1, 0, 2}, {-1.0f, 1.0f, 1.0f}},  /* +X: (x, y, z) -> (-y, x, z) */
    };
    *out = maps[up_axis == 3 ? 3 : up_axis + 3];
    return up_axis == -2 ? 2 : 1;
}

/* ---- helpers in the move's frame (up_axis 1 or 2: see kcc_up_axis_frame), and the ground probe ---- */
static inline int kcc_up_index(const kcc_character *ch) { return ch->desc.up_axis == 2 ? 2 : 1; }
/* The two horizontal axes: x and z for +Y up, x and y for +Z up. */
static inline int kcc_side_index(const kcc_character *ch, int k)
{
    return k == 0 ? 0 : (ch->desc.up_axis == 2 ? 1 : 2);
}

static inline void kcc_box_at(const kcc_character *ch, const vec3 pos, vec3 out[2])
{
    for (int i = 0; i < 3; ++i) {
        out[0][i] = pos[i] - ch->desc.half_extents[i];
        out[1][i] = pos[i] + ch->desc.half_extents[i];
    }
}

/* n flipped, if needed, so that it faces up (either face of a triangle can be stood on). */
static inline void kcc_facing_up(const kcc_character *ch, const vec3 n, vec3 out)
{
    float s = n[kcc_up_index(ch)] < 0.0f ? -1.0f : 1.0f;
    for (int i = 0; i < 3; ++i)
        out[i] = n[i] * s;
}

/* The box the overlap rule tests for the character's box centred at pos: shrunk by half a skin (or
 * the documented tolerance, if smaller) on every side, so touching within that does not count. One
 * rule for the move and for kcc_character_fits. */
static inline void kcc_box_for_overlap(const kcc_character *ch, const vec3 pos, vec3 out[2])
{
    kcc_box_at(ch, pos, out);
    const float s = kcc_minf(0.5f * ch->desc.skin_width, KCC_PENETRATION_TOLERANCE);
    for (int i = 0; i < 3; ++i) {
        out[0][i] += s;
        out[1][i] -= s;
    }
}

/* True when the character's box centred at pos overlaps the level (kcc_box_for_overlap's rule). */
static inline bool kcc_box_overlaps_at(const kcc_character *ch, const kcc_local *list, const vec3 pos)
{
    vec3 box[2];
    kcc_box_for_overlap(ch, pos, box);
    return kcc_local_overlaps(list, (const vec3 *)box);
}

typedef struct kcc_ground {
    bool     found;     /* something under the box within reach */
    bool     walkable;  /* ... and it is ground (under the slope limit, or a flat resting edge) */
    bool     blocked;   /* the lifted box overlaps something it cannot leave by going down */
    bool     rest_clear;/* the box resting on it (height + skin) was checked clear of the level */
    float    height;    /* m along up: where the box bottom touches it */
    vec3     normal;    /* unit, facing up */
    uint32_t triangle;
    uint32_t rays;      /* bit i: edge ray i found walkable ground */
} kcc_ground;

/* Probes under the box centred at pos, from `lift` above the feet down to `reach` below them (rays
 * down the four vertical edges, then a box sweep when the box resting on their ground is not
 * clear). A height found by the box sweep is not checked against the level above it: the caller
 * checks the box resting there. */
void kcc_ground_probe(const kcc_character *ch, const kcc_local *list, const vec3 pos, float lift,
                      float reach, kcc_ground *out, kcc_move_debug *dbg);
/* The probe's first step alone: true, with out, when the four rays find walkable ground and the box
 * resting on the highest of it overlaps nothing. */
bool kcc_ground_rays(const kcc_character *ch, const kcc_local *list, const vec3 pos, float lift, float reach,
                     kcc_ground *out);

/* True when the triangles of the contacts (normals facing the box, source ids) hold the box up
 * together, as the two steep sides of a V-shaped gully do: it can slide down none of their faces,
 * nor down a crease of two steeper than the slope limit, and their faces' normals add up to a
 * walkable direction (out_normal, unit). */
bool kcc_ground_held(const kcc_character *ch, const kcc_local *list, const vec3 *contact_normals,
                     const uint32_t *triangles, uint32_t count, vec3 out_normal);

/* The check kcc_character_init and retunes store in the private tuning_check (character_extra.c): a
 * hash of the desc and the values derived from it, never 0. */
uint64_t kcc_character_tuning_check(const kcc_character *ch);
/* True when ch was set up by kcc_character_init and its desc not written behind its back since: a
 * move or retune of any other character is bad input (tests: zeroed_character_does_not_move,
 * hand_edited_desc_does_not_move). */
static inline bool kcc_character_set_up(const kcc_character *ch)
{
    uint64_t stored;
    memcpy(&stored, ch->priv.bytes, sizeof(stored)); /* tuning_check, the private storage's first field */
    return stored == kcc_character_tuning_check(ch);
}

/* ---- the move through any neighbourhood source (controller.c) ---- */
/* The triangles a move's swept legs ran into (walls, ceilings, steep ground, a floor landed on),
 * each once, with the contact normal toward the box, in the order met; overflow when more were
 * met than it holds. */
#define KCC_CONTACT_SINK_MAX 8u
typedef struct kcc_contact_sink {
    uint32_t count;
    bool     overflow;
    uint32_t triangle[KCC_CONTACT_SINK_MAX];
    vec3     normal[KCC_CONTACT_SINK_MAX];
} kcc_contact_sink;

static inline void kcc_contact_sink_add(kcc_contact_sink *sink, uint32_t triangle, const vec3 normal)
{
    for (uint32_t i = 0; i < sink->count; ++i)
        if (sink->triangle[i] == triangle)
            return;
    if (sink->count == KCC_CONTACT_SINK_MAX) {
        sink->overflow = true;
        return;
    }
    sink->triangle[sink->count] = triangle;
    memcpy(sink->normal[sink->count++], normal, sizeof(vec3));
}

/* kcc_character_move_debug through `level` (a mesh's source, or the world's): the one entry every
 * move takes. level NULL: nothing to move through (KCC_MOVE_BAD_INPUT alone). contacts (may be
 * NULL) collects what the move met (its count and flag are the caller's to clear). */
void kcc_character_move_source(kcc_character *ch, const kcc_local_source *level,
                               const vec3 displacement, kcc_move_result *result,
                               kcc_move_debug *debug, kcc_contact_sink *contacts);
#if KCC_AVX2_VARIANT
/* kcc_character_move_source compiled for AVX2 (the build's symbols are renamed kcc_avx2_*). */
void kcc_avx2_character_move_source(kcc_character *ch, const kcc_local_source *level,
                                    const vec3 displacement, kcc_move_result *result,
                                    kcc_move_debug *debug, kcc_contact_sink *contacts);
#endif

#endif
