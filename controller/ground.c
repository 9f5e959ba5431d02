/* ground.c: the ground probe of the published scheme: four rays down the box's vertical edges from
 * step height above the feet to below them, the highest walkable hit is the ground; plus a box sweep
 * over the same range that catches support the rays miss (beams, pillar tops, ridges) and tells
 * whether the box can rest there at all. Reads the local cache only; never moves the character. */
#include <math.h>
#include <cglm/cglm.h>

#include "controller_internal.h"

void kcc_ground_probe(const kcc_character *ch, const kcc_local *L, const vec3 pos, float lift,
                      float reach, kcc_ground *out, kcc_move_debug *dbg)
{
    const int u = kcc_up_index(ch), h0 = kcc_side_index(ch, 0), h1 = kcc_side_index(ch, 1);
    const float *he = ch->desc.half_extents;
    const float skin = ch->desc.skin_width;
    const float feet = pos[u] - he[u];
    out->found = out->walkable = out->blocked = out->rest_clear = false;
    out->rays = 0;

    /* Lift by up to `lift` (step height when walking), stopped a skin short of any ceiling. */
    vec3 box[2];
    kcc_box_at(ch, pos, box);
    float lifted = 0.0f;
    if (lift > 0.0f) {
        vec3 up = {0.0f, 0.0f, 0.0f};
        up[u] = lift;
        kcc_contacts c;
        if (!kcc_local_sweep(L, (const vec3 *)box, up, 0.0f, &c))
            lifted = lift;
        else if (!c.start_overlap)
            lifted = kcc_maxf(0.0f, c.t * lift - skin);
        box[0][u] += lifted;
        box[1][u] += lifted;
    }
    const float top = feet + lifted;
    const float len = lifted + reach;
    if (!(len > 0.0f))
        return;

    /* The four edge rays: highest walkable hit, among the triangles in the column they span. */
    kcc_sel column;
    column.count = 0;
    if (!L->overflow) {
        vec3 span[2];
        glm_vec3_copy(box[0], span[0]);
        glm_vec3_copy(box[1], span[1]);
        span[0][u] = top - len;
        span[1][u] = top;
        kcc_local_select(L, (const vec3 *)span, &column);
    }
    bool ray_ok = false;
    float ray_h = -INFINITY;
    vec3 ray_n = {0.0f, 0.0f, 0.0f};
    uint32_t ray_tri = 0;
    vec3 o[4];
    kcc_ray_hit hits[4];
    bool got[4];
    for (int i = 0; i < 4; ++i) {
        o[i][u] = top;
        o[i][h0] = pos[h0] + ((i & 1) ? he[h0] : -he[h0]);
        o[i][h1] = pos[h1] + ((i & 2) ? he[h1] : -he[h1]);
    }
    kcc_local_raycast_down4(L, &column, (const vec3 *)o, u, len, hits, got);
    for (int i = 0; i < 4; ++i) {
        const kcc_ray_hit *hit = &hits[i];
        if (dbg) {
            glm_vec3_copy(o[i], dbg->ray_from[i]);
            glm_vec3_copy(o[i], dbg->ray_to[i]);
            dbg->ray_to[i][u] -= got[i] ? hit->t : len;
            dbg->ray_hit = (dbg->ray_hit & ~(1u << i)) | ((uint32_t)got[i] << i);
            dbg->ray_walkable &= ~(1u << i);
        }
        if (!got[i])
            continue;
        vec3 n;
        kcc_facing_up(ch, hit->normal, n);
        if (n[u] < ch->cos_max_slope)
            continue;
        if (dbg)
            dbg->ray_walkable |= 1u << i;
        out->rays |= 1u << i;
        float h = top - hit->t;
        if (!ray_ok || h > ray_h || (h == ray_h && n[u] > ray_n[u])) {
            ray_ok = true;
            ray_h = h;
            glm_vec3_copy(n, ray_n);
            ray_tri = hit->triangle;
        }
    }

    /* Usual case: the box resting on the highest walkable ray hit is clear of everything, so
     * nothing under it is higher: done without the box sweep. */
    if (ray_ok) {
        vec3 rest;
        glm_vec3_copy((float *)pos, rest);
        rest[u] = ray_h + skin + he[u];
        if (!kcc_box_overlaps_at(ch, L, rest)) {
            out->found = out->walkable = out->rest_clear = true;
            out->height = ray_h;
            glm_vec3_copy(ray_n, out->normal);
            out->triangle = ray_tri;
            return;
        }
    }

    /* The whole box swept down over the same range: the first thing it would rest on (a beam or a
     * ridge between the rays, or something in the way that makes the rays' ground unreachable). */
    vec3 sweep = {0.0f, 0.0f, 0.0f};
    sweep[u] = -len;
    kcc_contacts c;
    if (!kcc_local_sweep(L, (const vec3 *)box, sweep, 1e-6f, &c)) {
        if (!ray_ok)
            return;
        /* Rays on the box boundary hit but the sweep grazed past: trust the rays. */
        out->found = out->walkable = true;
        out->height = ray_h;
        glm_vec3_copy(ray_n, out->normal);
        out->triangle = ray_tri;
        return;
    }
    out->found = true;
    out->blocked = c.start_overlap;
    out->height = top - c.t * len;
    /* The most up-facing contact decides: a box face resting on an edge counts as flat support. */
    uint32_t best = 0;
    for (uint32_t i = 1; i < c.count; ++i)
        if (c.normal[i][u] > c.normal[best][u])
            best = i;
    const float eps = 0.5f * skin;
    if (ray_ok && ray_h >= out->height - eps) {
        out->walkable = true;
        glm_vec3_copy(ray_n, out->normal);
        out->triangle = ray_tri;
    } else {
        out->walkable = c.normal[best][u] >= ch->cos_max_slope;
        glm_vec3_copy(c.normal[best], out->normal);
        out->triangle = c.triangle[best];
    }
}
