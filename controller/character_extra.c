/* character_extra.c: what surrounds the move: the tuning check that tells a character set up by
 * kcc_character_init from a zeroed or hand-edited one, the default desc for either up axis, the
 * stand-here test (kcc_character_fits) and the velocity move. Owns no memory; never allocates. */
#include <math.h>
#include <string.h>
#include <cglm/cglm.h>

#include "controller_internal.h"

/* FNV-1a over the desc's and cos_max_slope's 32-bit words, from a basis that is not the zero a
 * zeroed struct holds: the check of a zeroed character never matches. Ten multiplies: a few
 * nanoseconds against a move's microsecond. */
uint64_t kcc_character_tuning_check(const kcc_character *ch)
{
    _Static_assert(sizeof(kcc_character_desc) == 9 * sizeof(uint32_t), "desc: nine words, no padding");
    uint32_t w[10];
    memcpy(w, &ch->desc, sizeof(kcc_character_desc));
    memcpy(&w[9], &ch->cos_max_slope, sizeof(float));
    uint64_t h = 0xcbf29ce484222325ull;
    for (int i = 0; i < 10; ++i)
        h = (h ^ w[i]) * 0x100000001b3ull;
    return h ? h : 1u;
}

_Static_assert(KCC_MOVE_LIST_TRIANGLES == KCC_LOCAL_MAX, "the header states the move's list capacity");

kcc_character_desc kcc_character_default_desc_up(int up_axis)
{
    kcc_character_desc d = kcc_character_default_desc();
    d.up_axis = up_axis;
    if (up_axis == 2) { /* the box stands along Z: its height is half_extents[2] */
        d.half_extents[2] = d.half_extents[1];
        d.half_extents[1] = d.half_extents[0];
    }
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
    /* the move's rule (kcc_box_overlaps_at): touching within min(skin / 2, the tolerance) is clear */
    vec3 box[2];
    kcc_box_at(&probe, center, box);
    const float s = kcc_minf(0.5f * probe.desc.skin_width, KCC_PENETRATION_TOLERANCE);
    for (int i = 0; i < 3; ++i) {
        box[0][i] += s;
        box[1][i] -= s;
    }
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
        const int u = kcc_up_index(ch);
        if ((r.flags & KCC_MOVE_ON_GROUND) && v[u] < 0.0f)
            v[u] = 0.0f;
        glm_vec3_copy(v, velocity);
    }
    if (result)
        *result = r;
}
