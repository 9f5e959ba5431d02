/* fuzz_move.c: libFuzzer target for the character controller. The bytes build a small triangle soup
 * (corners on a 0.25 m grid, so seams, shared edges, coplanar and degenerate triangles are common),
 * a character description (in range, or raw floats for the validation paths), a start position and
 * up to 64 moves, some with raw float displacements (NaN, infinities, 1e38) and some retuning the
 * character between moves. Checks, aborting on failure (libFuzzer reports the input):
 * - init and retune refuse a description exactly when kcc_character_desc_validate does, with its
 *   status (a valid retune may also be refused for overlapping the level);
 * - after every move the position is finite, `moved` is its change, the normals the flags vouch
 *   for are unit, a step up is a rise (and no higher than step height when the walk ends in P2
 *   without sliding), BAD_INPUT comes only from a raw displacement, the flags are known bits and
 *   the branch is P0, P1, P2 or P4;
 * - a move never ends overlapping, beyond KCC_PENETRATION_TOLERANCE, a triangle its box did not
 *   touch at the start: from a clear start it ends clear, and the start-overlap push leaves what it
 *   is in without entering anything else. (A push that teleported could push a box sunk under a
 *   millimetre into a floor into the other side of a sharp wedge: regress-wedge-push-out.bin. A
 *   box touching a floor from below may be pushed up through it, as ground pushes up:
 *   push-up-through-floor.bin.)
 * `make fuzz` explores with it, `make fuzz-check` (part of `make test`) repeats a fixed run. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cglm/cglm.h>

#include "fuzz.h"
#include "kcc.h"

#define MAX_TRIANGLES 48
#define MAX_MOVES     64

/* A byte scaled into [lo, hi]. */
static float scaled(reader *r, float lo, float hi)
{
    return lo + (hi - lo) * (float)byte(r) / 255.0f;
}

static void read_desc(reader *r, kcc_character_desc *d, bool raw)
{
    *d = kcc_character_default_desc();
    if (raw) {
        for (int k = 0; k < 3; ++k)
            d->half_extents[k] = raw_float(r);
        d->step_height = raw_float(r);
        d->max_slope_deg = raw_float(r);
        d->skin_width = raw_float(r);
        d->ground_snap = raw_float(r);
        d->max_push_out = raw_float(r);
        d->up_axis = (int)(byte(r) % 4);
        return;
    }
    d->half_extents[0] = scaled(r, 0.05f, 2.0f);
    d->half_extents[1] = scaled(r, 0.05f, 2.0f);
    d->half_extents[2] = scaled(r, 0.05f, 2.0f);
    d->up_axis = byte(r) & 1 ? 2 : 1;
    d->step_height = scaled(r, 0.0f, 2.0f * d->half_extents[d->up_axis]);
    d->max_slope_deg = scaled(r, 0.0f, 89.0f);
    d->skin_width = scaled(r, 0.0001f, 0.05f);
    d->ground_snap = scaled(r, 0.0f, 2.0f);
    d->max_push_out = scaled(r, 0.001f, 2.0f);
}

/* The status of kcc_character_init / kcc_character_set_desc must match the description's own
 * validation: refused as invalid exactly when it is invalid; a valid retune may be refused only
 * for overlapping the level. */
static void check_desc_status(kcc_status s, const kcc_character_desc *d, bool retune)
{
    const kcc_status v = kcc_character_desc_validate(d);
    CHECK(v == KCC_OK || v == KCC_ERR_BAD_DESC || v == KCC_ERR_NON_FINITE);
    if (v != KCC_OK)
        CHECK(s == v);
    else
        CHECK(s == KCC_OK || (retune && s == KCC_ERR_OVERLAP));
}

/* The triangles the character's box, shrunk by `by` on every side, overlaps (or touches), as a bit
 * set over the soup's triangles; false when there are none. */
static bool overlapped(const kcc_character *ch, const kcc_mesh *m, float by, uint64_t *set)
{
    vec3 box[2];
    kcc_character_box(ch, box);
    for (int k = 0; k < 3; ++k) {
        box[0][k] += by;
        box[1][k] -= by;
    }
    uint32_t ids[MAX_TRIANGLES];
    const uint32_t n = kcc_mesh_overlap_aabb(m, (const vec3 *)box, ids, MAX_TRIANGLES);
    CHECK(n <= MAX_TRIANGLES);
    *set = 0;
    for (uint32_t i = 0; i < n; ++i)
        *set |= 1ull << ids[i];
    return n > 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = {data, size};
    const uint32_t n = 1u + byte(&r) % MAX_TRIANGLES;
    const uint8_t mode = byte(&r);
    float pos[9 * MAX_TRIANGLES];
    for (uint32_t i = 0; i < 9 * n; ++i)
        pos[i] = grid(&r);
    kcc_mesh_desc md;
    memset(&md, 0, sizeof md);
    md.positions = pos;
    md.vertex_count = 3 * n;
    md.triangle_count = n;
    kcc_mesh *m = NULL;
    kcc_status s = kcc_mesh_build(&md, &m);
    if (s != KCC_OK) {
        CHECK(m == NULL);
        return 0;
    }

    kcc_character_desc d;
    read_desc(&r, &d, (mode & 1) != 0);
    vec3 c = {grid(&r), grid(&r), grid(&r)};
    kcc_character ch;
    s = kcc_character_init(&ch, &d, c);
    check_desc_status(s, &d, false);
    if (s != KCC_OK) {
        kcc_mesh_destroy(m);
        return 0;
    }

    const uint32_t known = KCC_MOVE_ON_GROUND | KCC_MOVE_HIT_WALL | KCC_MOVE_HIT_CEILING |
                           KCC_MOVE_STEPPED_UP | KCC_MOVE_SLID | KCC_MOVE_STUCK |
                           KCC_MOVE_ON_STEEP | KCC_MOVE_SNAPPED_DOWN | KCC_MOVE_PUSHED_OUT |
                           KCC_MOVE_BAD_INPUT | KCC_MOVE_LANDED | KCC_MOVE_CONTACT_CAP;
    for (int i = 0; i < MAX_MOVES && r.n > 0; ++i) {
        const uint8_t op = byte(&r);
        vec3 disp;
        if (op == 0xff) {
            /* retune between moves: in range or raw */
            kcc_character_desc nd;
            read_desc(&r, &nd, (byte(&r) & 1) != 0);
            check_desc_status(kcc_character_set_desc_checked(&ch, &nd, m), &nd, true);
            continue;
        }
        if (op == 0xfe) {
            for (int k = 0; k < 3; ++k)
                disp[k] = raw_float(&r);
        } else {
            for (int k = 0; k < 3; ++k)
                disp[k] = (float)(int8_t)byte(&r) * 0.02f; /* up to 2.56 m a move */
        }
        uint64_t before, after;
        overlapped(&ch, m, 0.0f, &before);
        vec3 start;
        glm_vec3_copy(ch.position, start);
        kcc_move_result res;
        const bool was_ground = ch.on_ground;
        kcc_character_move(&ch, m, disp, &res);
        CHECK(isfinite(ch.position[0]) && isfinite(ch.position[1]) && isfinite(ch.position[2]));
        CHECK((res.flags & ~known) == 0);
        for (int k = 0; k < 3; ++k)
            CHECK(res.moved[k] == ch.position[k] - start[k]);
        if (res.flags & (KCC_MOVE_ON_GROUND | KCC_MOVE_ON_STEEP))
            CHECK(fabsf(glm_vec3_norm(res.ground_normal) - 1.0f) < 1e-3f);
        if (res.flags & (KCC_MOVE_HIT_WALL | KCC_MOVE_HIT_CEILING))
            CHECK(fabsf(glm_vec3_norm(res.wall_normal) - 1.0f) < 1e-3f);
        if (res.flags & KCC_MOVE_STEPPED_UP)
            CHECK(res.step_up > 0.0f);
        /* a walk that never slid (it ends where it settled, P2, with no slide along a wall, a
         * ceiling or steep ground on the way) climbs no more than step height per pass, plus what
         * a walkable slope rises over the way it went (a walk up a slope onto a ledge); a slide
         * along walkable ground (P4, SLID not set) may rise more, in any pass
         * (regress-p4-along-walkable-slope.bin); a walk longer than the box's narrower half width
         * runs as that many passes, at most eight (docs/controller.md) */
        if ((res.flags & KCC_MOVE_STEPPED_UP) && was_ground && disp[ch.desc.up_axis] <= 0.0f &&
            res.branch == KCC_BRANCH_P2 && !(res.flags & KCC_MOVE_SLID)) {
            const int u = ch.desc.up_axis == 2 ? 2 : 1, h1 = u == 2 ? 1 : 2;
            const float walk = sqrtf(disp[0] * disp[0] + disp[h1] * disp[h1]);
            const float part = fminf(ch.desc.half_extents[0], ch.desc.half_extents[h1]);
            const float passes = walk > part ? fminf(ceilf(walk / part), 8.0f) : 1.0f;
            const float went = sqrtf(res.moved[0] * res.moved[0] + res.moved[h1] * res.moved[h1]);
            const float slope = went * tanf(ch.desc.max_slope_deg * 3.14159265f / 180.0f);
            CHECK(res.step_up <= passes * (ch.desc.step_height + 0.25f * ch.desc.skin_width + 1e-4f) +
                                     slope * 1.0001f);
        }
        if (res.flags & KCC_MOVE_BAD_INPUT)
            CHECK(op == 0xfe);
        CHECK(res.branch == KCC_BRANCH_P0 || res.branch == KCC_BRANCH_P1 || res.branch == KCC_BRANCH_P2 ||
              res.branch == KCC_BRANCH_P3 || res.branch == KCC_BRANCH_P4);
        if (overlapped(&ch, m, KCC_PENETRATION_TOLERANCE, &after) && (after & ~before) != 0) {
            fprintf(stderr, "fuzz_move: move %d by (%a %a %a) ends at (%a %a %a) overlapping "
                            "triangles %#llx, %#llx of them new; flags %#x branch %d\n",
                    i, disp[0], disp[1], disp[2], ch.position[0], ch.position[1],
                    ch.position[2], (unsigned long long)after,
                    (unsigned long long)(after & ~before), res.flags, (int)res.branch);
            abort();
        }
    }
    kcc_mesh_destroy(m);
    return 0;
}
