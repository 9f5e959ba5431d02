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
