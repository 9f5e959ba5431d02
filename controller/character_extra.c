/* character_extra.c: what surrounds the move: the tuning check that tells a character set up by
 * kcc_character_init from a zeroed or hand-edited one, the default desc for every up axis, the
 * stand-here test (kcc_character_fits) and the velocity move. Owns no memory; never allocates. */
#include <math.h>
#include <string.h>
#include <cglm/cglm.h>

#include "controller_internal.h"

/* The desc's nine words and cos_max_slope as five 64-bit lanes, each rotated by its own amount and
 * XORed together from a non-zero basis, then mixed by one multiply (never 0, while a zeroed struct
 * holds 0, so a zeroed character never matches). An edit of one field changes at least one bit
 * of the XOR, so it always changes the check; 24 instructions a move, about 1% of the
 * cheapest one (a walk on a flat floor, 2,260 instructions; callgrind). */
static uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

uint64_t kcc_character_tuning_check(const kcc_character *ch)
{
    _Static_assert(sizeof(kcc_character_desc) == 9 * sizeof(uint32_t), "desc: nine words, no padding");
    const char *desc = (const char *)&ch->desc;
    uint64_t w0, w1, w2, w3;
    uint32_t last, cos_bits;
    memcpy(&w0, desc, 8);
    memcpy(&w1, desc + 8, 8);
    memcpy(&w2, desc + 16, 8);
    memcpy(&w3, desc + 24, 8);
    memcpy(&last, desc + 32, 4);
    memcpy(&cos_bits, &ch->cos_max_slope, 4);
    const uint64_t w4 = last | (uint64_t)cos_bits << 32;
    uint64_t h = 0x9e3779b97f4a7c15ull ^ w0 ^ rotl64(w1, 13) ^ rotl64(w2, 26) ^ rotl64(w3, 39) ^ rotl64(w4, 52);
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h ? h : 1u;
}

_Static_assert(KCC_MOVE_LIST_TRIANGLES == KCC_LOCAL_MAX, "the header states the move's list capacity");

kcc_character_desc kcc_character_default_desc_up(int up_axis)
{
    kcc_character_desc d = kcc_character_default_desc();
    d.up_axis = up_axis;
    if (up_axis == 0 || up_axis < -3 || up_axis > 3)
        return d; /* refused by validation */
    /* the box stands along its up axis: the height goes there, the width on the other two */
    const float height = d.half_extents[1], width = d.half_extents[0];
    for (int k = 0; k < 3; ++k)
        d.half_extents[k] = k == kcc_up_axis_index(up_axis) ? height : width;
    return d;
}

kcc_status kcc_character_fits(const kcc_character_desc *desc, const kcc_mesh *mesh, const vec3 center)
{
    if (!mesh || !center)
        return KCC_ERR_NULL_ARGUMENT;
    kcc_character probe;
    memset(&probe, 0, sizeof probe);
    probe.desc = desc ? *desc : kcc_character_default_desc();
    const kcc_status st = kcc_character_desc_validate(&probe.desc);
    if (st != KCC_OK)
        return st;
    if (!isfinite(center[0]) || !isfinite(center[1]) || !isfinite(center[2]))
        return KCC_ERR_NON_FINITE;
    vec3 box[2]; /* the move's rule: touching within min(skin / 2, the tolerance) is clear */
    kcc_box_for_overlap(&probe, center, box);
    return kcc_mesh_overlap_aabb(mesh, (const vec3 *)box, NULL, 0) > 0 ? KCC_ERR_OVERLAP : KCC_OK;
}

/* v with its component into the surface with unit normal n removed (nothing when it leaves it). */
static void remove_into(vec3 v, const vec3 n)
{
    const float vn = glm_vec3_dot(v, (float *)n);
    if (vn < 0.0f)
        glm_vec3_muladds((float *)n, -vn, v);
}

void kcc_character_move_velocity(kcc_character *ch, const kcc_mesh *mesh, vec3 velocity, const vec3 gravity,
                                 float dt, kcc_move_result *result)
{
    kcc_move_result r;
    const bool good = velocity && gravity && isfinite(dt) && dt >= 0.0f && isfinite(velocity[0]) &&
                      isfinite(velocity[1]) && isfinite(velocity[2]) && isfinite(gravity[0]) &&
                      isfinite(gravity[1]) && isfinite(gravity[2]);
    if (!good) { /* a NULL displacement is bad input: the move reports it and the box stays */
        kcc_character_move(ch, mesh, NULL, &r);
        if (result)
            *result = r;
        return;
    }
    vec3 v, d;
    glm_vec3_copy(velocity, v);
    glm_vec3_muladds((float *)gravity, dt, v);
    glm_vec3_scale(v, dt, d);
    kcc_character_move(ch, mesh, d, &r);
    if (!(r.flags & KCC_MOVE_BAD_INPUT)) {
        if (r.flags & (KCC_MOVE_HIT_WALL | KCC_MOVE_HIT_CEILING))
            remove_into(v, r.wall_normal);
        if (r.flags & KCC_MOVE_ON_STEEP)
            remove_into(v, r.ground_normal);
        const int u = kcc_up_axis_index(ch->desc.up_axis); /* down: against the up direction */
        if ((r.flags & KCC_MOVE_ON_GROUND) && kcc_up_axis_sign(ch->desc.up_axis) * v[u] < 0.0f)
            v[u] = 0.0f;
        glm_vec3_copy(v, velocity);
    }
    if (result)
        *result = r;
}
