/* ground.c: the ground probe of the published scheme: four rays down the box's vertical edges from
 * step height above the feet to below them, the highest walkable hit is the ground; and a box
 * sweep over the same range that catches support the rays miss (beams, pillar tops, ridges) and
 * tells whether the box can rest there at all. Reads the move's triangle list only; never moves
 * the character. */
#include <math.h>
#include <cglm/cglm.h>

#include "controller_internal.h"

/* The four edge rays from `top` down by `len`: the highest walkable hit, among the triangles in the
 * column they span; first_t is the nearest hit of any ray, walkable or not (len when none hit). */
typedef struct ray_ground {
    bool     ok;
    float    h;
    vec3     n;
    uint32_t tri;
    uint32_t rays;
    float    first_t;
} ray_ground;

static void cast_rays(const kcc_character *ch, const kcc_local *list, const vec3 pos, const vec3 box[2],
                      float top, float len, ray_ground *ray, kcc_move_debug *dbg)
{
    const int up = kcc_up_index(ch), h0 = kcc_side_index(ch, 0), h1 = kcc_side_index(ch, 1);
    const float *he = ch->desc.half_extents;
    kcc_sel column;
    column.words = 0;
    if (!list->overflow) {
        vec3 span[2];
        glm_vec3_copy((float *)box[0], span[0]);
        glm_vec3_copy((float *)box[1], span[1]);
        span[0][up] = top - len;
        span[1][up] = top;
        kcc_local_select(list, (const vec3 *)span, &column);
    }
    ray->ok = false;
    ray->h = -INFINITY;
    glm_vec3_zero(ray->n);
    ray->tri = 0;
    ray->rays = 0;
    ray->first_t = len;
    vec3 o[4];
    kcc_ray_hit hits[4];
    bool got[4];
    for (int i = 0; i < 4; ++i) {
        o[i][up] = top;
        o[i][h0] = pos[h0] + ((i & 1) ? he[h0] : -he[h0]);
        o[i][h1] = pos[h1] + ((i & 2) ? he[h1] : -he[h1]);
    }
    kcc_local_raycast_down4(list, &column, (const vec3 *)o, up, len, hits, got);
    for (int i = 0; i < 4; ++i) {
        const kcc_ray_hit *hit = &hits[i];
        if (dbg) {
            glm_vec3_copy(o[i], dbg->ray_from[i]);
            glm_vec3_copy(o[i], dbg->ray_to[i]);
            dbg->ray_to[i][up] -= got[i] ? hit->t : len;
            dbg->ray_hit = (dbg->ray_hit & ~(1u << i)) | ((uint32_t)got[i] << i);
            dbg->ray_walkable &= ~(1u << i);
        }
        if (!got[i])
            continue;
        ray->first_t = kcc_minf(ray->first_t, hit->t);
        vec3 n;
        kcc_facing_up(ch, hit->normal, n);
        if (n[up] < ch->cos_max_slope)
            continue;
        if (dbg)
            dbg->ray_walkable |= 1u << i;
        ray->rays |= 1u << i;
        float h = top - hit->t;
        if (!ray->ok || h > ray->h || (h == ray->h && n[up] > ray->n[up])) {
            ray->ok = true;
            ray->h = h;
            glm_vec3_copy(n, ray->n);
            ray->tri = hit->triangle;
        }
    }
}

/* The box at pos resting a skin above the rays' ground: when it overlaps nothing, that ground is
 * the answer (written to out). */
static bool rests_clear(const kcc_character *ch, const kcc_local *list, const vec3 pos,
                        const ray_ground *ray, kcc_ground *out)
{
    const int up = kcc_up_index(ch);
    vec3 rest;
    glm_vec3_copy((float *)pos, rest);
    rest[up] = ray->h + ch->desc.skin_width + ch->desc.half_extents[up];
    if (kcc_box_overlaps_at(ch, list, rest))
        return false;
    out->found = out->walkable = out->rest_clear = true;
    out->height = ray->h;
    glm_vec3_copy((float *)ray->n, out->normal);
    out->triangle = ray->tri;
    return true;
}

bool kcc_ground_held(const kcc_character *ch, const kcc_local *list, const vec3 *contact_normals,
                     const uint32_t *triangles, uint32_t count, vec3 out_normal)
{
    const int up = kcc_up_index(ch);
    /* The faces' own normals, distinct, each turned to the side its contact faces: a contact on a
     * triangle's edge (inside a flat quad, say) reports an edge's normal that no face has. */
    vec3 normals[KCC_MAX_CONTACTS];
    uint32_t n = 0;
    for (uint32_t i = 0; i < count && n < KCC_MAX_CONTACTS; ++i) {
        vec3 f;
        kcc_local_face_normal(list, triangles[i], f);
        if (glm_vec3_dot(f, (float *)contact_normals[i]) < 0.0f)
            glm_vec3_negate(f);
        bool dup = false;
        for (uint32_t j = 0; j < n && !dup; ++j)
            dup = glm_vec3_dot(f, normals[j]) > 0.999f;
        if (!dup)
            glm_vec3_copy(f, normals[n++]);
    }
    if (n < 2)
        return false;
    const float c = ch->cos_max_slope, sin_max = sqrtf(kcc_maxf(0.0f, 1.0f - c * c));
    /* Down along one plane, or straight down past a wall, into none of the others: it slides. */
    for (uint32_t i = 0; i < n; ++i) {
        if (normals[i][up] >= c)
            return false; /* ground by itself, not a funnel */
        vec3 d = {0.0f, 0.0f, 0.0f};
        d[up] = -1.0f;
        glm_vec3_muladds(normals[i], kcc_maxf(0.0f, normals[i][up]), d);
        glm_vec3_normalize(d);
        if (kcc_into_none(d, (const vec3 *)normals, n, i, i, 1e-4f))
            return false;
    }
    /* Down along the crease of two, steeper than the slope limit, into none of the others: it
     * slides too. A gentler crease is a gully floor one can stand on. */
    for (uint32_t i = 0; i < n; ++i)
        for (uint32_t j = i + 1; j < n; ++j) {
            vec3 d;
            glm_vec3_cross(normals[i], normals[j], d);
            const float dl = glm_vec3_norm(d);
            if (!(dl > 1e-4f))
                continue;
            glm_vec3_scale(d, (d[up] > 0.0f ? -1.0f : 1.0f) / dl, d);
            if (!(d[up] < -sin_max))
                continue;
            if (kcc_into_none(d, (const vec3 *)normals, n, i, j, 1e-4f))
                return false;
        }
    glm_vec3_zero(out_normal);
    for (uint32_t i = 0; i < n; ++i)
        glm_vec3_add(out_normal, normals[i], out_normal);
    const float len = glm_vec3_norm(out_normal);
    if (!(len > 1e-4f) || out_normal[up] < c * len) /* ground reports a walkable normal */
        return false;
    glm_vec3_scale(out_normal, 1.0f / len, out_normal);
    return true;
}

/* Adds to near/tri (at most KCC_MAX_CONTACTS) the faces of the sweep c (of the box by delta) that
 * lie within two skins of the box swept to t0 (a fraction of delta), measured along each face's
 * own normal: a face met later at a glancing angle is still right there. */
static void add_near(const kcc_character *ch, const kcc_local *list, const kcc_contacts *contacts,
                     const vec3 delta, float t0, vec3 *near, uint32_t *tri, uint32_t *count)
{
    for (uint32_t i = 0; i < contacts->count && *count < KCC_MAX_CONTACTS; ++i) {
        vec3 f;
        kcc_local_face_normal(list, contacts->triangle[i], f);
        if ((contacts->t_each[i] - t0) * fabsf(glm_vec3_dot(f, (float *)delta)) > 2.0f * ch->desc.skin_width)
            continue;
        glm_vec3_copy((float *)contacts->normal[i], near[*count]);
        tri[(*count)++] = contacts->triangle[i];
    }
}

/* Steep ground that cannot be slid down, as in a V-shaped gully or a steep slope leaning on a
 * wall: no face is ground, but together they hold the box up. The faces the lifted box meets going
 * down within `window` (m) of its first contact, each within two skins of it (see add_near), and
 * the faces the box resting there would run into sliding down each of them within `window`, are
 * checked to hold it up together. The slide's faces are the walls a downward sweep cannot see. */
KCC_RARE void funnel(const kcc_character *ch, const kcc_local *list, const vec3 box[2], const vec3 sweep,
                     float len, float window, kcc_ground *out)
{
    const int up = kcc_up_index(ch);
    kcc_contacts hits;
    if (!kcc_local_sweep(list, box, sweep, window / len, &hits) || hits.start_overlap)
        return;
    vec3 near[KCC_MAX_CONTACTS], n;
    uint32_t tri[KCC_MAX_CONTACTS], count = 0;
    add_near(ch, list, &hits, sweep, hits.t, near, tri, &count);
    /* The box where it meets them, a skin above, slid down along each face. */
    vec3 rest[2];
    for (int k = 0; k < 2; ++k) {
        glm_vec3_copy((float *)box[k], rest[k]);
        glm_vec3_muladds((float *)sweep, hits.t, rest[k]);
        rest[k][up] += ch->desc.skin_width;
    }
    /* The slides may reach up to `window` past the list's region: those ask the source. */
    kcc_local tree;
    const uint32_t faces = count;
    for (uint32_t i = 0; i < faces && count < KCC_MAX_CONTACTS; ++i) {
        vec3 f, down = {0.0f, 0.0f, 0.0f}, slide;
        kcc_local_face_normal(list, tri[i], f);
        down[up] = -1.0f;
        glm_vec3_copy(down, slide);
        glm_vec3_muladds(f, -glm_vec3_dot(f, down), slide);
        const float sl = glm_vec3_norm(slide);
        if (!(sl > 1e-3f))
            continue;
        glm_vec3_scale(slide, window / sl, slide);
        kcc_contacts slid;
        const kcc_local *slide_list = kcc_local_for_sweep(list, (const vec3 *)rest, slide, &tree);
        if (kcc_local_sweep(slide_list, (const vec3 *)rest, slide, 1.0f, &slid) && !slid.start_overlap)
            add_near(ch, list, &slid, slide, 0.0f, near, tri, &count);
    }
    if (!kcc_ground_held(ch, list, (const vec3 *)near, tri, count, n))
        return;
    out->walkable = true;
    glm_vec3_copy(n, out->normal);
}

/* The probe's first step: out reset, then the four rays from `lift` above the feet (lift below zero
 * taken as zero, written back) down to `reach` below them. True when their ground is the answer
 * (out written: the box resting on their highest walkable hit is clear), or when there is nothing to
 * probe; otherwise box, ray, top and len are set for the box sweep.
 *
 * The rays come first, from the full lift. When the box resting on their highest walkable hit is
 * clear, that is the answer (the usual case). The lift needs no sweep: a box rising straight from
 * pos to that rest (less than its own height) passes only through the box at pos and the rest box.
 * The rest box is clear, and the box at pos differs from it only below the rest (the ground being
 * stepped onto) or, when the ground is lower, in a band at its top that the move has swept clear.
 * So no ceiling stops the lift short of the rest, and nothing can be climbed through. Ground
 * heights are top - t, rounded from this top. */
static bool first_rays(const kcc_character *ch, const kcc_local *list, const vec3 pos, float *lift,
                       float reach, kcc_ground *out, vec3 box[2], ray_ground *ray, float *top,
                       float *len, kcc_move_debug *dbg)
{
    const int up = kcc_up_index(ch);
    out->found = out->walkable = out->blocked = out->rest_clear = false;
    out->rays = 0;
    kcc_box_at(ch, pos, box);
    if (!(*lift > 0.0f))
        *lift = 0.0f;
    *top = pos[up] - ch->desc.half_extents[up] + *lift;
    *len = *lift + reach;
    if (!(*len > 0.0f))
        return true;
    cast_rays(ch, list, pos, (const vec3 *)box, *top, *len, ray, dbg);
    out->rays = ray->rays;
    return ray->ok && rests_clear(ch, list, pos, ray, out);
}

bool kcc_ground_rays(const kcc_character *ch, const kcc_local *list, const vec3 pos, float lift, float reach,
                     kcc_ground *out)
{
    vec3 box[2];
    ray_ground ray;
    float top, len;
    first_rays(ch, list, pos, &lift, reach, out, box, &ray, &top, &len, NULL);
    return out->rest_clear;
}

void kcc_ground_probe(const kcc_character *ch, const kcc_local *list, const vec3 pos, float lift,
                      float reach, kcc_ground *out, kcc_move_debug *dbg)
{
    const int up = kcc_up_index(ch);
    const float skin = ch->desc.skin_width;
    vec3 box[2];
    ray_ground ray;
    float top, len;
    if (first_rays(ch, list, pos, &lift, reach, out, box, &ray, &top, &len, dbg))
        return;

    /* Otherwise the whole box, lifted by the full lift, swept down over the same range: the first
     * thing it would rest on (a beam or a ridge between the rays, or something in the way that
     * makes the rays' ground unreachable). No swept lift first: the callers check the box resting
     * where this finds (settle, land), and a clear rest box cannot lie beyond a ceiling that would
     * have stopped the lift, for the same reason as the rays' (first_rays). */
    box[0][up] += lift;
    box[1][up] += lift;
    vec3 sweep = {0.0f, 0.0f, 0.0f};
    sweep[up] = -len;
    /* A ray's hit lies on an edge of the box's bottom face, so the box meets it by then at the
     * latest (padded for the rounding of the ray's t): the sweep need not look further. */
    const float known = ray.first_t < len ? (ray.first_t + 1e-4f + 1e-6f * fabsf(top)) / len : 2.0f;
    kcc_contacts hits;
    if (!kcc_local_sweep_known(list, (const vec3 *)box, sweep, 1e-6f, known, &hits)) {
        if (!ray.ok)
            return;
        /* Rays on the box boundary hit but the sweep grazed past: trust the rays. */
        out->found = out->walkable = true;
        out->height = ray.h;
        glm_vec3_copy(ray.n, out->normal);
        out->triangle = ray.tri;
        return;
    }
    out->found = true;
    out->blocked = hits.start_overlap;
    out->height = top - hits.t * len;
    /* The most up-facing contact decides: a box face resting on an edge counts as flat support. */
    uint32_t best = 0;
    for (uint32_t i = 1; i < hits.count; ++i)
        if (hits.normal[i][up] > hits.normal[best][up])
            best = i;
    const float eps = 0.5f * skin;
    if (ray.ok && ray.h >= out->height - eps) {
        out->walkable = true;
        glm_vec3_copy(ray.n, out->normal);
        out->triangle = ray.tri;
    } else {
        out->walkable = hits.normal[best][up] >= ch->cos_max_slope;
        glm_vec3_copy(hits.normal[best], out->normal);
        out->triangle = hits.triangle[best];
        if (!out->walkable && !hits.start_overlap)
            funnel(ch, list, (const vec3 *)box, sweep, len, 16.0f * skin, out);
    }
}
