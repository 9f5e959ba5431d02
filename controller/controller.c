/* controller.c: the kinematic box character: desc defaults and validation, init and retuning, and the
 * per-frame move (the published p0 -> p1 -> p2 / p3 -> p4 scheme made robust with swept boxes).
 * Owns no memory: a character is a caller-owned struct; a move never allocates. */
#include <math.h>
#include <string.h>
#include <cglm/cglm.h>

#include "controller_internal.h"

#define KCC_PI 3.14159265358979323846

kcc_character_desc kcc_character_default_desc(void)
{
    kcc_character_desc d;
    memset(&d, 0, sizeof(d));
    d.half_extents[0] = 0.3f;
    d.half_extents[1] = 0.9f;
    d.half_extents[2] = 0.3f;
    d.step_height = 0.35f;
    d.max_slope_deg = 45.0f;
    d.up_axis = 1;
    d.skin_width = 0.002f;
    d.ground_snap = 0.35f;
    d.max_push_out = 0.2f;
    return d;
}

kcc_status kcc_character_desc_validate(const kcc_character_desc *d)
{
    if (!d)
        return KCC_ERR_NULL_ARGUMENT;
    const float f[] = {d->half_extents[0], d->half_extents[1], d->half_extents[2], d->step_height,
                       d->max_slope_deg, d->skin_width, d->ground_snap, d->max_push_out};
    for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); ++i)
        if (!isfinite(f[i]))
            return KCC_ERR_NON_FINITE;
    if (d->up_axis != 1 && d->up_axis != 2)
        return KCC_ERR_BAD_DESC;
    for (int i = 0; i < 3; ++i)
        if (!(d->half_extents[i] >= 0.01f && d->half_extents[i] <= 100.0f))
            return KCC_ERR_BAD_DESC;
    const float half_height = d->half_extents[d->up_axis == 2 ? 2 : 1];
    if (!(d->step_height >= 0.0f && d->step_height <= 1.8f * half_height))
        return KCC_ERR_BAD_DESC;
    if (!(d->max_slope_deg >= 0.0f && d->max_slope_deg <= 89.0f))
        return KCC_ERR_BAD_DESC;
    if (!(d->skin_width >= 0.0001f && d->skin_width <= 0.05f))
        return KCC_ERR_BAD_DESC;
    if (!(d->ground_snap >= 0.0f && d->ground_snap <= 10.0f))
        return KCC_ERR_BAD_DESC;
    if (!(d->max_push_out > 0.0f && d->max_push_out <= 10.0f))
        return KCC_ERR_BAD_DESC;
    return KCC_OK;
}

static void apply_desc(kcc_character *ch, const kcc_character_desc *d)
{
    ch->desc = *d;
    kcc_character_priv(ch)->clear_owner = NULL; /* the box changed */
    /* cos() in double, rounded once: the same float on every compiler and optimisation level. */
    double c = cos((double)d->max_slope_deg * (KCC_PI / 180.0));
    ch->cos_max_slope = (float)c;
}

kcc_status kcc_character_init(kcc_character *ch, const kcc_character_desc *desc, const vec3 center)
{
    if (!ch || !center)
        return KCC_ERR_NULL_ARGUMENT;
    kcc_character_desc d = desc ? *desc : kcc_character_default_desc();
    kcc_status st = kcc_character_desc_validate(&d);
    if (st != KCC_OK)
        return st;
    if (!isfinite(center[0]) || !isfinite(center[1]) || !isfinite(center[2]))
        return KCC_ERR_NON_FINITE;
    memset(ch, 0, sizeof(*ch));
    apply_desc(ch, &d);
    glm_vec3_copy((float *)center, ch->position);
    ch->ground_normal[kcc_up_index(ch)] = 1.0f;
    return KCC_OK;
}

kcc_status kcc_character_set_desc(kcc_character *ch, const kcc_character_desc *desc)
{
    if (!ch)
        return KCC_ERR_NULL_ARGUMENT;
    return kcc_character_set_desc_checked(ch, desc, NULL);
}

kcc_status kcc_character_set_desc_checked(kcc_character *ch, const kcc_character_desc *desc,
                                          const kcc_mesh *mesh)
{
    if (!ch || !desc)
        return KCC_ERR_NULL_ARGUMENT;
    kcc_status st = kcc_character_desc_validate(desc);
    if (st != KCC_OK)
        return st;
    /* Keep the feet where they are (on the new up axis, if it changes). */
    kcc_character next = *ch;
    int u_old = kcc_up_index(ch);
    float feet = ch->position[u_old] - ch->desc.half_extents[u_old];
    apply_desc(&next, desc);
    int u = kcc_up_index(&next);
    if (u == u_old)
        next.position[u] = feet + next.desc.half_extents[u];
    if (mesh) {
        bool grows = false;
        for (int i = 0; i < 3; ++i)
            grows |= desc->half_extents[i] > ch->desc.half_extents[i];
        vec3 box[2];
        kcc_box_at(&next, next.position, box);
        if (grows && kcc_mesh_overlap_aabb(mesh, (const vec3 *)box, NULL, 0) > 0)
            return KCC_ERR_OVERLAP;
    }
    if (u != u_old) {
        next.on_ground = false;
        glm_vec3_zero(next.ground_normal);
        next.ground_normal[u] = 1.0f;
    }
    *ch = next;
    return KCC_OK;
}

void kcc_character_box(const kcc_character *ch, vec3 out[2])
{
    if (ch && out)
        kcc_box_at(ch, ch->position, out);
}

/* ------------------------------------------------------------------------------------------------
 * The move. Terms follow the published scheme: p0 start, p1 moved by the displacement, p2 settled on
 * the ground, p3 slid along the averaged contact normal, p4 settled again; fall back to p1, then p0.
 * What differs (see docs/controller.md): every motion is a swept box, so nothing tunnels; walking
 * sweeps only the part of the box above step height, so low ledges are left to the ground probe;
 * steep ground is a wall for walking and a slide for gravity; the slide starts at the first contact
 * and clips against up to four planes. */

/* How much wider than a move's reach the character's cache is refilled: a margin (m) all around,
 * plus this many moves like the current one all around and ahead along it. Tuned on the shared
 * levels for instructions per move; they change speed only, never an answer. */
#define KCC_CACHE_MARGIN 0.1f
#define KCC_CACHE_MOVES  1.0f
#define KCC_CACHE_LEAD   6.0f

/* The contacts (normal, triangle) with steep ground and walls (not ceilings) a move met in the air,
 * which together may hold the box up, as in a funnel. */
typedef struct held {
    uint32_t n;
    vec3     normal[KCC_MAX_CONTACTS];
    uint32_t triangle[KCC_MAX_CONTACTS];
} held;

typedef struct move_ctx {
    kcc_character *ch;
    kcc_local *L;
    kcc_local_store *store;
    const kcc_local_source *source;
    int   u;
    bool  walking;      /* on walkable ground and not moving up: horizontal moves, step-up, snap */
    float short_by;     /* m: how much nearer than a skin the last advance's contact was (<= skin), */
    vec3  short_n;      /* along this normal (the contact the motion closed on most) */
    float rise;         /* m: how high walking looks for ground in this move: step_height, plus
                           the rise of the ground plane under the box over the move (walk_rise) */
    float skin;
    uint32_t flags;
    vec3  wall_normal;
    kcc_move_debug *dbg; /* NULL unless kcc_character_move_debug */
    const uint32_t *left; /* the start-overlap push: the triangles it leaves (n_left), which its */
    uint32_t n_left;      /* sweeps do not meet where the box overlaps them; NULL otherwise */
    bool  steep;        /* slid along steep ground in the air */
    vec3  steep_normal;
    uint32_t steep_triangle;
    struct held *held;  /* shared by the copies a move makes of its context */
} move_ctx;

/* How far v goes sideways (m). */
static float sideways(int u, const vec3 v)
{
    vec3 h;
    glm_vec3_copy((float *)v, h);
    h[u] = 0.0f;
    return glm_vec3_norm(h);
}

/* The box that sweeps: in walking mode only the part above the move's rise (lower obstacles are
 * steps or the slope walked up, handled by the ground probe); otherwise the whole box. */
static void sweep_box(const move_ctx *m, const vec3 pos, bool upper, vec3 out[2])
{
    kcc_box_at(m->ch, pos, out);
    if (upper)
        out[0][m->u] += kcc_minf(m->rise, out[1][m->u] - out[0][m->u] - m->skin);
}

/* A contact normal as the move should see it. Walking: steep ground and ceilings are walls (they
 * block, they neither lift nor press down). In the air: a steep surface stays as it is for the
 * vertical part of the motion (gravity slides down it) - see clip(). */
static void adjust_normal(const move_ctx *m, const vec3 n, vec3 out)
{
    const int u = m->u;
    glm_vec3_copy((float *)n, out);
    bool walkable = n[u] >= m->ch->cos_max_slope;
    if (m->walking && !walkable) {
        out[u] = 0.0f;
        float len = glm_vec3_norm(out);
        if (len > 1e-6f)
            glm_vec3_scale(out, 1.0f / len, out);
        else
            glm_vec3_copy((float *)n, out);
    }
}

/* v with its component into the plane n removed. A steep slope met in the air takes horizontal
 * input as a wall would (no climbing it by walking into it) and lets the vertical part slide. */
static void clip(const move_ctx *m, const vec3 v, const vec3 n, vec3 out)
{
    const int u = m->u;
    float vn = glm_vec3_dot((float *)v, (float *)n);
    if (vn >= 0.0f) {
        glm_vec3_copy((float *)v, out);
        return;
    }
    bool steep_floor = n[u] > 1e-4f && n[u] < m->ch->cos_max_slope;
    if (!m->walking && steep_floor) {
        vec3 vh, nh, vv = {0.0f, 0.0f, 0.0f};
        glm_vec3_copy((float *)v, vh);
        vh[u] = 0.0f;
        vv[u] = v[u];
        glm_vec3_copy((float *)n, nh);
        nh[u] = 0.0f;
        glm_vec3_normalize(nh);
        float d = glm_vec3_dot(vh, nh);
        if (d < 0.0f)
            glm_vec3_muladds(nh, -d, vh);
        d = glm_vec3_dot(vv, (float *)n);
        if (d < 0.0f)
            glm_vec3_muladds((float *)n, -d, vv);
        glm_vec3_add(vh, vv, out);
        /* What is left must not go into the plane (tiny residue from the split). */
        d = glm_vec3_dot(out, (float *)n);
        if (d < 0.0f)
            glm_vec3_muladds((float *)n, -d, out);
        return;
    }
    glm_vec3_copy((float *)v, out);
    glm_vec3_muladds((float *)n, -vn, out);
}

/* Notes a steep or wall contact met in the air, once per triangle. */
static void hold(held *h, const vec3 n, uint32_t triangle)
{
    for (uint32_t j = 0; j < h->n; ++j)
        if (h->triangle[j] == triangle)
            return;
    if (h->n < KCC_MAX_CONTACTS) {
        glm_vec3_copy((float *)n, h->normal[h->n]);
        h->triangle[h->n++] = triangle;
    }
}

/* The averaged normal of the triangles touched first (near-parallel normals counted once, so a wall
 * of many small triangles weighs what one triangle does). False when they cancel out. */
static bool averaged_normal(move_ctx *m, const kcc_contacts *c, vec3 out)
{
    vec3 uniq[KCC_MAX_CONTACTS];
    uint32_t n = 0;
    for (uint32_t i = 0; i < c->count; ++i) {
        vec3 a;
        adjust_normal(m, c->normal[i], a);
        bool dup = false;
        for (uint32_t j = 0; j < n && !dup; ++j)
            dup = glm_vec3_dot(a, uniq[j]) > 0.999f;
        if (!dup)
            glm_vec3_copy(a, uniq[n++]);
        /* what was hit, for the result: a ceiling in the air, a wall (or a steep slope or a
         * ceiling met while walking), or steep ground slid along in the air (no flag) */
        float nu = c->normal[i][m->u];
        if (nu >= m->ch->cos_max_slope)
            continue;
        if (!m->walking && !m->left && nu >= -0.01f)
            hold(m->held, c->normal[i], c->triangle[i]);
        if (!m->walking && nu > 0.01f) {
            m->steep = true;
            glm_vec3_copy((float *)c->normal[i], m->steep_normal);
            m->steep_triangle = c->triangle[i];
            continue;
        }
        m->flags |= (!m->walking && nu < -0.1f) ? KCC_MOVE_HIT_CEILING : KCC_MOVE_HIT_WALL;
        glm_vec3_copy((float *)c->normal[i], m->wall_normal);
    }
    glm_vec3_zero(out);
    for (uint32_t j = 0; j < n; ++j)
        glm_vec3_add(out, uniq[j], out);
    float len = glm_vec3_norm(out);
    if (!(len > 1e-4f))
        return false;
    glm_vec3_scale(out, 1.0f / len, out);
    return true;
}

/* Advances pos along v to the first contact, stopping a skin short of it (measured along the
 * contact normal). The sweep looks a skin further than v so that a move ending just short of a
 * surface still keeps its distance. Returns the fraction of v travelled; c holds the contacts
 * (count 0: none within reach). */
static float advance(move_ctx *m, vec3 pos, const vec3 v, bool upper, kcc_contacts *c)
{
    vec3 box[2];
    sweep_box(m, pos, upper, box);
    c->count = 0;
    float len = glm_vec3_norm((float *)v);
    if (!(len > 1e-7f))
        return 1.0f;
    vec3 ext;
    float reach = len + m->skin;
    glm_vec3_scale((float *)v, reach / len, ext);
    /* contacts within 0.1 mm of the first count as simultaneous */
    const bool hit = m->left ? kcc_local_sweep_out(m->L, (const vec3 *)box, ext, 1e-4f / reach, m->left, m->n_left, c)
                                : kcc_local_sweep(m->L, (const vec3 *)box, ext, 1e-4f / reach, c);
    if (!hit) {
        glm_vec3_add(pos, (float *)v, pos);
        return 1.0f;
    }
    float closing = 0.0f; /* cosine between v and the most opposing contact normal */
    uint32_t most = 0;
    for (uint32_t i = 0; i < c->count; ++i) {
        const float ci = -glm_vec3_dot((float *)v, c->normal[i]) / len;
        if (ci > closing) {
            closing = ci;
            most = i;
        }
    }
    float travel = c->t * reach;
    if (closing > 0.0f)
        travel -= m->skin / closing;
    /* nearer than a skin by more than a hundredth of one (less is rounding, not worth a nudge) */
    m->short_by = travel < 0.0f ? kcc_minf(-travel * closing, m->skin) : 0.0f;
    if (m->short_by < 0.01f * m->skin)
        m->short_by = 0.0f;
    glm_vec3_copy(c->normal[most], m->short_n);
    if (travel >= len) { /* the surface stays more than a skin away: no contact this move */
        c->count = 0;
        glm_vec3_add(pos, (float *)v, pos);
        return 1.0f;
    }
    float t = kcc_maxf(0.0f, travel / len);
    glm_vec3_muladds((float *)v, t, pos);
    return t;
}

/* Quake-style clipping of v against every plane met so far: along one plane when that goes into
 * none of the others, else along the crease of two, else stop. */
static void clip_planes(const move_ctx *m, const vec3 v_in, const vec3 *planes, uint32_t np, vec3 out)
{
    /* the first plane v goes into; none: v as it is */
    uint32_t first = np;
    for (uint32_t i = 0; i < np && first == np; ++i)
        if (glm_vec3_dot((float *)v_in, (float *)planes[i]) < 0.0f)
            first = i;
    if (first == np) {
        glm_vec3_copy((float *)v_in, out);
        return;
    }
    /* Along one plane: the first whose clip goes into no other plane. Trying only the first plane v
     * goes into missed the slide along the foot of a steep slope in a corner with a wall: the
     * averaged normal of the two led into the slope, and the crease of that average with the
     * slope stopped the box. */
    for (uint32_t i = first; i < np; ++i) {
        if (glm_vec3_dot((float *)v_in, (float *)planes[i]) >= 0.0f)
            continue;
        vec3 v;
        clip(m, v_in, planes[i], v);
        if (kcc_into_none(v, planes, np, i, i, 1e-7f)) {
            glm_vec3_copy(v, out);
            return;
        }
    }
    /* Along the crease of the first plane and the first other plane its clip goes into, unless
     * that goes into a third: wedged. */
    vec3 v;
    clip(m, v_in, planes[first], v);
    uint32_t j = 0;
    while (j == first || glm_vec3_dot(v, (float *)planes[j]) >= -1e-7f)
        ++j;
    vec3 dir;
    glm_vec3_cross((float *)planes[first], (float *)planes[j], dir);
    float dl = glm_vec3_norm(dir);
    if (dl < 1e-6f) { /* parallel planes facing each other */
        glm_vec3_zero(out);
        return;
    }
    glm_vec3_scale(dir, 1.0f / dl, dir);
    glm_vec3_scale(dir, glm_vec3_dot(dir, (float *)v_in), v);
    if (kcc_into_none(v, planes, np, first, j, 1e-7f))
        glm_vec3_copy(v, out);
    else
        glm_vec3_zero(out);
}

/* True when v's horizontal part points against the horizontal part of the input. */
static bool turned_back(const move_ctx *m, const vec3 v, const vec3 input)
{
    float dot = 0.0f, in2 = 0.0f;
    for (int k = 0; k < 3; ++k)
        if (k != m->u) {
            dot += v[k] * input[k];
            in2 += input[k] * input[k];
        }
    return in2 > 0.0f && dot <= 0.0f;
}

/* True when none of the planes is steep ground (see clip()): walls and overhangs only. */
static bool walls_only(const move_ctx *m, const vec3 *planes, uint32_t np)
{
    for (uint32_t i = 0; i < np; ++i)
        if (planes[i][m->u] > 1e-4f)
            return false;
    return true;
}

/* The slide (p3): from the first contact, the rest of the motion along the tangent of the averaged
 * normal, then up to three more sweeps clipping against every plane met. */
static void slide(move_ctx *m, vec3 pos, const vec3 remaining, bool upper, const kcc_contacts *first)
{
    vec3 planes[5];
    uint32_t np = 0;
    vec3 v;
    if (!averaged_normal(m, first, planes[np])) {
        m->flags |= KCC_MOVE_HIT_WALL;
        return;
    }
    np++;
    clip_planes(m, remaining, (const vec3 *)planes, np, v);
    /* A box nearer than a skin to what it slides along (float rounding of positions off the axes
     * takes it a few micrometres nearer each frame) leaves along the normal to a skin: the gap
     * would otherwise shrink frame by frame until the box touched the wall and stuck there. */
    glm_vec3_muladds(m->short_n, m->short_by, v);
    if (m->dbg) {
        kcc_move_debug *dbg = m->dbg;
        dbg->contact_count = first->count < KCC_DEBUG_MAX_CONTACTS ? first->count : KCC_DEBUG_MAX_CONTACTS;
        memcpy(dbg->contacts, first->triangle, sizeof(uint32_t) * dbg->contact_count);
        glm_vec3_copy(planes[0], dbg->averaged_normal);
        glm_vec3_copy(v, dbg->slide);
    }
    for (int iter = 0; iter < 4; ++iter) {
        if (glm_vec3_norm2(v) < 1e-14f)
            return;
        kcc_contacts c;
        float t = advance(m, pos, v, upper, &c);
        if (c.count == 0)
            return;
        vec3 rest;
        glm_vec3_scale(v, 1.0f - t, rest);
        if (np < 5 && averaged_normal(m, &c, planes[np]))
            np++;
        clip_planes(m, rest, (const vec3 *)planes, np, v);
        glm_vec3_muladds(m->short_n, m->short_by, v);
        /* Walking, a slide turned back against the input stops (Quake's rule): in an obtuse corner
         * the slide along one wall runs into the other, and the slide along that one leads away
         * from the first, backwards; taking it would leave the corner and walk back in next frame. */
        if (m->walking && glm_vec3_dot(v, (float *)remaining) <= 0.0f)
            return;
        /* In the air the same corner turns the horizontal part back while the vertical part goes
         * on: among walls (no steep floor, whose slide down may lead away from the input), that
         * part is dropped and the vertical part kept. */
        if (!m->walking && turned_back(m, v, remaining) && walls_only(m, (const vec3 *)planes, np)) {
            for (int k = 0; k < 3; ++k)
                if (k != m->u)
                    v[k] = 0.0f;
        }
    }
}

static bool overlaps_at(const move_ctx *m, const vec3 pos)
{
    return kcc_box_overlaps_at(m->ch, m->L, pos);
}

/* In the air: ground within a few millimetres under the feet (probed from a skin above them, so a
 * box that ended a hair into the floor still finds it) is landed on. */
static bool land(move_ctx *m, vec3 pos, kcc_ground *g)
{
    const kcc_character *ch = m->ch;
    const int u = m->u;
    const float feet = pos[u] - ch->desc.half_extents[u];
    kcc_ground_probe(ch, m->L, pos, m->skin, 2.0f * m->skin + 1e-3f, g, m->dbg);
    g->walkable = g->walkable && !g->blocked;
    if (g->found && g->walkable && g->height <= feet + m->skin) {
        pos[u] = g->height + m->skin + ch->desc.half_extents[u];
        if (g->rest_clear)
            return true; /* the probe checked this very box */
    }
    return !overlaps_at(m, pos);
}

/* The move's triangle list for region, from the character's cache (refilled around region grown
 * by grow when it does not cover it) or one tree query; CONTACT_CAP when even that overflows. */
static void neighbourhood(move_ctx *m, const vec3 region[2], const vec3 grow[2])
{
    kcc_local_gather_cached(m->L, m->store, &kcc_character_priv(m->ch)->cache, m->source, region, grow);
    if (m->L->overflow)
        m->flags |= KCC_MOVE_CONTACT_CAP;
}

/* Makes the move's triangle list hold, besides the move's own region, everything near the box on
 * its way from a to b: the hull of the box at both, grown by pad on every side, by `below` more
 * under its feet and by the move's rise above its top. The rare paths that reach beyond the region
 * gathered for the move (looking ahead, following a steep face down) call it before they query, so
 * that they see every triangle they can touch, whatever the character's cache happens to hold (a
 * slide down a steep face went into a wall outside the region when the cache did not hold it). */
static void cover(move_ctx *m, const vec3 a, const vec3 b, float pad, float below)
{
    kcc_local *L = m->L;
    if (L->overflow)
        return; /* every query asks the tree for its own region */
    const float *he = m->ch->desc.half_extents;
    vec3 need[2];
    bool inside = true;
    for (int k = 0; k < 3; ++k) {
        need[0][k] = kcc_minf(a[k], b[k]) - he[k] - pad - (k == m->u ? below : 0.0f);
        need[1][k] = kcc_maxf(a[k], b[k]) + he[k] + pad + (k == m->u ? m->rise + m->skin : 0.0f);
        inside = inside && need[0][k] >= L->region[0][k] && need[1][k] <= L->region[1][k];
    }
    if (inside)
        return;
    vec3 grow[2];
    for (int k = 0; k < 3; ++k) {
        need[0][k] = kcc_minf(need[0][k], L->region[0][k]);
        need[1][k] = kcc_maxf(need[1][k], L->region[1][k]);
        grow[0][k] = grow[1][k] = KCC_CACHE_MARGIN;
    }
    neighbourhood(m, (const vec3 *)need, (const vec3 *)grow);
}

/* Walking along the foot of a steep face, the box can end with an edge over its lip, a hair above
 * the walkable ground it stood on: the ground probe then finds the steep face the highest thing
 * under it, and the box would hang there a frame, off the ground, and slide off the next one (a
 * grounded flag flickering every other frame). Instead it follows the steep face down, as it
 * follows stairs down, onto walkable ground within `reach`: a fall swept down and slid along the
 * steep face. True, with pos and g updated, when that ends resting on walkable ground. */
KCC_RARE bool off_a_steep_lip(move_ctx *m, vec3 pos, float reach, kcc_ground *g)
{
    const int u = m->u;
    /* the fall and the slide together go no further than reach; landing looks a little lower */
    cover(m, pos, pos, reach + 2.0f * m->skin + 0.01f, reach + 2.0f * m->skin + 0.01f);
    move_ctx air = *m;
    air.walking = false;
    air.dbg = NULL;
    vec3 p, fall = {0.0f, 0.0f, 0.0f};
    glm_vec3_copy(pos, p);
    fall[u] = -reach;
    kcc_contacts c;
    float t = advance(&air, p, fall, false, &c);
    if (c.count == 0 || c.start_overlap)
        return false;
    /* the steepest face met: slide down along it (walkable ground met first: land there) */
    uint32_t k = 0;
    for (uint32_t i = 1; i < c.count; ++i)
        if (c.normal[i][u] < c.normal[k][u])
            k = i;
    if (c.normal[k][u] < m->ch->cos_max_slope) {
        if (!(c.normal[k][u] > 1e-3f))
            return false; /* a wall: nothing to follow down */
        vec3 rest, v;
        glm_vec3_scale(fall, 1.0f - t, rest);
        clip(&air, rest, c.normal[k], v);
        advance(&air, p, v, false, &c);
    }
    kcc_ground landed;
    if (!land(&air, p, &landed) || !(landed.found && landed.walkable))
        return false;
    glm_vec3_copy(p, pos);
    *g = landed;
    return true;
}

/* A walk whose probe finds only a steep face under the box, in front of walkable ground a little
 * further on: the raked riser of a stair (a face a few degrees off vertical), or a steep bump no
 * higher than a step. A move shorter than the riser's rake leaves the box's front over the steep
 * face and short of the tread, so the step is refused and the box stops at the riser's foot, move
 * after move: the stair was climbed at 30 Hz and not at 240 (Jolt's stair-walk look-ahead covers
 * the same). The ground is looked for ahead along the walk, as far as a steep face no higher than
 * step_height can run (at most the box's half width), with the part of the box above the move's
 * rise swept there. `up`: the steep face rose above the feet: walkable ground ahead no higher than
 * step_height above the ground stood on, and not under the steep face, is stepped onto here and
 * now. Otherwise (the box stands over the steep face already, on a step taken early): walkable
 * ground ahead at the height it stands keeps it there. True, with pos and g updated, when so. */
KCC_RARE bool step_ahead(move_ctx *m, const vec3 p0, vec3 pos, float reach, bool up, kcc_ground *g)
{
    const kcc_character *ch = m->ch;
    const int u = m->u, h0 = kcc_side_index(ch, 0), h1 = kcc_side_index(ch, 1);
    const float *he = ch->desc.half_extents;
    vec3 dir;
    glm_vec3_sub(pos, (float *)p0, dir);
    dir[u] = 0.0f;
    const float len = glm_vec3_norm(dir);
    if (!(len > 1e-6f))
        return false;
    const float c = ch->cos_max_slope, s = sqrtf(kcc_maxf(0.0f, 1.0f - c * c));
    const float run = s > 1e-6f ? ch->desc.step_height * c / s : 0.0f; /* of the steepest face */
    const float look = kcc_minf(run + 2.0f * m->skin, kcc_minf(he[h0], he[h1]));
    glm_vec3_scale(dir, look / len, dir);
    vec3 box[2], ahead;
    glm_vec3_add(pos, dir, ahead);
    cover(m, pos, ahead, 2.0f * m->skin + 0.01f, reach + 2.0f * m->skin + 0.01f);
    sweep_box(m, pos, true, box);
    kcc_contacts hit;
    float go = 1.0f;
    if (kcc_local_sweep(m->L, (const vec3 *)box, dir, 1e-4f / look, &hit))
        go = hit.t - m->skin / look;
    if (!(go > 0.0f))
        return false;
    glm_vec3_copy(pos, ahead);
    glm_vec3_muladds(dir, go, ahead);
    /* a tread: the rays' walkable ground with the box resting on it clear (no box sweep: on
     * terrain of cliffs, looking ahead past one with it cost a fifth of every move) */
    kcc_ground ga;
    if (!kcc_ground_rays(ch, m->L, ahead, m->rise + m->skin, reach, &ga))
        return false;
    const float base = pos[u] - he[u] - m->skin; /* the ground the box stands on */
    if (up ? !(ga.height <= base + ch->desc.step_height + 0.5f * KCC_PENETRATION_TOLERANCE &&
               ga.height >= g->height - 0.5f * m->skin)
           : !(fabsf(ga.height - base) <= 0.5f * m->skin))
        return false;
    vec3 rest;
    glm_vec3_copy(pos, rest);
    rest[u] = ga.height + m->skin + he[u];
    if (overlaps_at(m, rest))
        return false;
    glm_vec3_copy(rest, pos);
    *g = ga;
    return true;
}

/* How far the plane with unit normal n (facing up) rises along the horizontal part of d (m, >= 0). */
static float plane_rise(int u, const vec3 n, const vec3 d)
{
    if (!(n[u] > 1e-3f))
        return 0.0f;
    vec3 h;
    glm_vec3_copy((float *)d, h);
    h[u] = 0.0f;
    return kcc_maxf(0.0f, -glm_vec3_dot(h, (float *)n) / n[u]);
}

/* How high a walking move by d looks for ground: step_height, plus the rise of the ground plane the
 * box stands on over d, so that walking up a walkable slope never meets the slope as a ledge, however
 * small step_height is (with none, a box once stood still on a 10-degree slope) and however far the
 * move goes. Under the box's height (the ground probe's lift needs no sweep below that). */
static float walk_rise(const kcc_character *ch, const vec3 d)
{
    const int u = kcc_up_index(ch);
    const float step = ch->desc.step_height;
    if (!ch->on_ground || !(d[u] <= 0.0f) || ch->ground_normal[u] == 1.0f)
        return step;
    const float cap = 2.0f * ch->desc.half_extents[u] - 2.0f * ch->desc.skin_width;
    return kcc_maxf(step, kcc_minf(step + plane_rise(u, ch->ground_normal, d), cap));
}

/* How much of a walk's rise from the start to pos the ground explains: the rise of the plane stood
 * on before the move and of the one found under pos (n), whichever is less, and no more than the
 * move looked for. A ledge's flat top explains none of it, so a ledge higher than step_height
 * still blocks on a slope. */
static float slope_rise(const move_ctx *m, const vec3 p0, const vec3 pos, const vec3 n)
{
    vec3 d;
    glm_vec3_sub((float *)pos, (float *)p0, d);
    const float r = kcc_minf(plane_rise(m->u, m->ch->ground_normal, d), plane_rise(m->u, n, d));
    return kcc_minf(r, m->rise - m->ch->desc.step_height);
}

/* True when the walk from p0 to pos goes into the face with normal n (facing up) horizontally. */
static bool walked_into(int u, const vec3 p0, const vec3 pos, const vec3 n)
{
    float dot = 0.0f;
    for (int k = 0; k < 3; ++k)
        if (k != u)
            dot += (pos[k] - p0[k]) * n[k];
    return dot < 0.0f;
}

/* Settles pos onto the ground (p2 / p4). Walking (from p0): lift by the move's rise, look down
 * ground_snap; in the air: look a little below the feet. Falls with the displacement's vertical part
 * where a walking character finds no ground. False when the box cannot rest here (it would
 * overlap). */
static bool settle(move_ctx *m, const vec3 p0, vec3 pos, float dv, kcc_ground *g)
{
    const kcc_character *ch = m->ch;
    const int u = m->u;
    const float feet = pos[u] - ch->desc.half_extents[u];
    g->found = g->walkable = false;
    if (m->walking) {
        float reach = kcc_maxf(ch->desc.ground_snap, ch->desc.step_height) + m->skin;
        kcc_ground_probe(ch, m->L, pos, m->rise + m->skin, reach, g, m->dbg);
        if (g->found && (g->blocked || (!g->walkable && g->height > feet + m->skin)))
            return !g->blocked && step_ahead(m, p0, pos, reach, true, g);
        if (g->found && g->walkable) {
            /* The feet hover a skin over the ground: ground found higher than step_height above
             * where they stand, beyond what the slope walked up explains (give or take a quarter
             * skin, at most half a millimetre, for rounding), is a ledge too high, a wall. */
            const float over = g->height - (feet - m->skin + ch->desc.step_height +
                                            kcc_minf(0.25f * m->skin, 0.5f * KCC_PENETRATION_TOLERANCE));
            if (over > 0.0f && !(m->rise > ch->desc.step_height && over <= slope_rise(m, p0, pos, g->normal)))
                return false;
            pos[u] = g->height + m->skin + ch->desc.half_extents[u];
            return g->rest_clear || !overlaps_at(m, pos); /* the probe may have checked this box */
        }
        if (g->found && (step_ahead(m, p0, pos, reach, false, g) || off_a_steep_lip(m, pos, reach, g)))
            return true;
        /* Steep ground that the walk went into, no higher than the feet yet: the foot of a steep
         * face on rising ground, which the upper box passed over. It is a wall, as higher up:
         * the whole box slides along the foot. (Stepping onto it and falling off it the next move
         * flickered the grounded flag every other move along such a foot.) */
        if (g->found && !g->walkable && walked_into(m->u, p0, pos, g->normal))
            return false;
        /* Walked off the ground (or onto steep ground): fall this frame. */
        if (dv < 0.0f) {
            move_ctx air = *m;
            air.walking = false;
            vec3 fall = {0.0f, 0.0f, 0.0f};
            fall[u] = dv;
            kcc_contacts c;
            float t = advance(&air, pos, fall, false, &c);
            if (c.count > 0) {
                vec3 rest;
                glm_vec3_scale(fall, 1.0f - t, rest);
                slide(&air, pos, rest, false, &c);
            }
            m->flags |= air.flags & (KCC_MOVE_HIT_WALL | KCC_MOVE_HIT_CEILING);
            glm_vec3_copy(air.wall_normal, m->wall_normal);
            if (air.steep) {
                m->steep = true;
                glm_vec3_copy(air.steep_normal, m->steep_normal);
                m->steep_triangle = air.steep_triangle;
            }
        }
        return land(m, pos, g);
    }
    if (dv > 0.0f)
        return !overlaps_at(m, pos); /* moving up: not landing this frame */
    return land(m, pos, g);
}

/* The move's triangles: everything the box can reach from p0 with this displacement, a step up and
 * a snap down, from the character's cache or one tree query. Along any axis the box goes no further
 * than the displacement's horizontal and vertical lengths together: walking, the horizontal part
 * (slid along what it meets, or swept again with the whole box) and then, off the ground, the fall
 * (slid likewise); each of those chains of swept legs nudges the box back to a skin from what it
 * slides along at most four times, and each sweep looks a skin past its end. (The KCC_DEBUG build
 * checks every query against the region; the rarer paths that reach further widen it: cover.) */
static void gather(move_ctx *m, const vec3 p0, const vec3 d)
{
    const kcc_character *ch = m->ch;
    const int u = m->u;
    const float snap = kcc_maxf(ch->desc.ground_snap, ch->desc.step_height);
    const float len = glm_vec3_norm((float *)d);
    const float reach = sideways(u, d) + fabsf(d[u]) + 10.0f * m->skin + 0.01f;
    vec3 region[2];
    kcc_box_at(ch, p0, region);
    for (int i = 0; i < 3; ++i) {
        region[0][i] -= reach;
        region[1][i] += reach;
    }
    region[1][u] += m->rise + m->skin;
    region[0][u] -= snap + m->skin;
    vec3 grow[2];
    for (int i = 0; i < 3; ++i) {
        grow[0][i] = KCC_CACHE_MARGIN + KCC_CACHE_MOVES * len + KCC_CACHE_LEAD * kcc_maxf(0.0f, -d[i]);
        grow[1][i] = KCC_CACHE_MARGIN + KCC_CACHE_MOVES * len + KCC_CACHE_LEAD * kcc_maxf(0.0f, d[i]);
    }
    neighbourhood(m, (const vec3 *)region, (const vec3 *)grow);
}

/* The start-overlap push by `step`, swept: it leaves the triangles the box overlaps (left, n_left of
 * them) and slides along any other it would run into (the other side of a wedge, or a face the box
 * only grazed at the start), so it never pushes the box into more of the level. Leaves the
 * neighbourhood gathered around the push. */
static void push_out(move_ctx *m, vec3 pos, const vec3 step, const uint32_t *left,
                     uint32_t n_left)
{
    gather(m, pos, step);
    move_ctx pm = *m;
    pm.walking = false;
    pm.left = left;
    pm.n_left = n_left;
    pm.dbg = NULL;
    kcc_contacts c;
    float t = advance(&pm, pos, step, false, &c);
    if (c.count > 0) {
        vec3 rest;
        glm_vec3_scale((float *)step, 1.0f - t, rest);
        slide(&pm, pos, rest, false, &c);
    }
}

static void debug_point(kcc_move_debug *dbg, int k, const vec3 p)
{
    if (!dbg)
        return;
    glm_vec3_copy((float *)p, k == 1 ? dbg->p1 : k == 2 ? dbg->p2 : dbg->p4);
    dbg->tried |= 1u << k;
}

/* STUCK: a move that wanted to go sideways (want) and went (got) less than 1% of it. */
static bool stuck(int u, const vec3 want, const vec3 got)
{
    const float wl = sideways(u, want);
    return wl > 1e-5f && sideways(u, got) < 0.01f * wl + 1e-5f;
}

static bool vec3_finite(const vec3 v)
{
    return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]);
}

void kcc_character_move(kcc_character *ch, const kcc_mesh *mesh, const vec3 displacement,
                        kcc_move_result *result)
{
    kcc_character_move_debug(ch, mesh, displacement, result, NULL);
}

/* move projected onto the level direction of the crease of the planes with normals a and b (v).
 * False when the crease is (nearly) vertical or the planes parallel. */
static bool along_crease(int u, const vec3 a, const vec3 b, const vec3 move, vec3 v)
{
    vec3 axis;
    glm_vec3_cross((float *)a, (float *)b, axis);
    axis[u] = 0.0f;
    const float al = glm_vec3_norm(axis);
    if (!(al > 1e-4f))
        return false;
    glm_vec3_scale(axis, glm_vec3_dot((float *)move, axis) / (al * al), v);
    return true;
}

/* A walk into steep ground lying lower than the move's rise (a face the upper box passed over and the
 * ground probe then refused) whose slide with the whole box made no headway: in a V-shaped gully of
 * steep faces whose floor line rises along the walk, the whole box sliding along one face ran into
 * the rising floor line at once, and the box stood still unless it walked exactly along the gully
 * (15 of 16 headings stuck in a gully of oa_shouse at 5 and 20 m/s). The walk goes along the
 * crease of the face and the ground stood on instead (the gully's floor line when that ground is a
 * funnel, whose normal is the faces' sum; the face's foot line on a plane), or as along a wall
 * where they are parallel, swept with the upper box again; the ground probe then lifts the box
 * along the floor line as on any walk. When that walk ends against a second steep face, it goes
 * along the crease of the two. True, with pos and g, when one of them rests. */
KCC_RARE bool along_steep(move_ctx *m, const vec3 p0, const vec3 move, const vec3 n, float dv, vec3 pos,
                          kcc_ground *g)
{
    const int u = m->u;
    vec3 nh, v;
    glm_vec3_copy((float *)n, nh);
    nh[u] = 0.0f;
    const float l = glm_vec3_norm(nh);
    if (!(l > 1e-4f))
        return false;
    glm_vec3_scale(nh, 1.0f / l, nh);
    const float into = glm_vec3_dot((float *)move, nh);
    if (!(into < 0.0f))
        return false;
    /* along the crease of the face and the ground stood on (a gully's floor line when that is a
     * funnel), else as along a wall */
    if (!along_crease(u, n, m->ch->ground_normal, move, v)) {
        glm_vec3_copy((float *)move, v);
        glm_vec3_muladds(nh, -into, v);
    }
    for (int k = 0;; ++k) {
        if (stuck(u, move, v)) /* head-on: nothing left to walk */
            return false;
        glm_vec3_copy((float *)p0, pos);
        kcc_contacts c;
        const float t = advance(m, pos, v, true, &c);
        if (c.count > 0) {
            vec3 rest;
            glm_vec3_scale(v, 1.0f - t, rest);
            slide(m, pos, rest, true, &c);
        }
        if (settle(m, p0, pos, dv, g))
            return true;
        if (k == 1 || !(g->found && !g->walkable && !g->blocked))
            return false;
        /* the gully's floor line: the crease of the two faces */
        if (!along_crease(u, n, g->normal, move, v))
            return false;
    }
}

/* One move of the scheme by d (checked finite and in range; `flags` carries BAD_INPUT), from a
 * character whose position is finite. Returns false when the move was the start-overlap push alone
 * (the box is still embedded). */
static bool move_once(kcc_character *ch, const kcc_mesh *mesh, const vec3 d_in, uint32_t flags,
                      kcc_move_result *result, kcc_move_debug *debug)
{
    kcc_move_result r;
    memset(&r, 0, sizeof(r));
    r.branch = KCC_BRANCH_P0;
    kcc_local L;
    kcc_local_store store; /* ~15 KB of stack, used only when the character's cache cannot serve */
    move_ctx m;
    memset(&m, 0, sizeof(m));
    m.ch = ch;
    m.L = &L;
    m.store = &store;
    kcc_local_source source;
    kcc_local_source_mesh(&source, mesh);
    m.source = &source;
    kcc_character_private *priv = kcc_character_priv(ch);
    held contacts_held;
    contacts_held.n = 0;
    m.held = &contacts_held;
    m.dbg = debug;
    if (debug)
        memset(debug, 0, sizeof(*debug));
    m.u = kcc_up_index(ch);
    m.skin = ch->desc.skin_width;
    m.flags = flags;
    const int u = m.u;
    const float *he = ch->desc.half_extents;
    vec3 d;
    glm_vec3_copy((float *)d_in, d);

    vec3 p0;
    glm_vec3_copy(ch->position, p0);
    const bool was_ground = ch->on_ground;
    float dv = d[u];
    m.rise = walk_rise(ch, d);

    gather(&m, p0, d);

    /* Start state: a box overlapping the level is pushed out, at most max_push_out per move. The
     * previous move may have checked this very box already. */
    bool known_clear = priv->clear_owner == source.owner && priv->clear_key == source.key &&
                       memcmp(priv->clear_at, p0, sizeof(vec3)) == 0;
    bool start_clear = known_clear || !overlaps_at(&m, p0);
    bool embedded = false;
    if (!start_clear) {
        vec3 box[2], push;
        kcc_box_at(ch, p0, box);
        uint32_t left[KCC_MAX_OVERLAPPED], n_left = 0;
        if (kcc_local_penetration(&L, (const vec3 *)box, u, ch->cos_max_slope, push, left, &n_left)) {
            float len = glm_vec3_norm(push);
            if (len > 0.0f) {
                float want = len + m.skin;
                float go = kcc_minf(want, ch->desc.max_push_out);
                vec3 step;
                glm_vec3_scale(push, go / len, step);
                push_out(&m, p0, step, left, n_left);
                m.flags |= KCC_MOVE_PUSHED_OUT;
                gather(&m, p0, d); /* the neighbourhood moved with it */
            }
        }
        /* Still embedded (the push was capped): this move is the push alone. Moving on would let
         * the displacement carry the box further in (or through: nothing stops a box that
         * already overlaps from going deeper the short way out). */
        if (overlaps_at(&m, p0)) {
            glm_vec3_zero(d);
            dv = 0.0f;
            embedded = true;
        } else {
            start_clear = true;
        }
    }

    m.walking = was_ground && dv <= 0.0f;
    vec3 move;
    glm_vec3_copy(d, move);
    if (m.walking)
        move[u] = 0.0f; /* gravity on walkable ground only presses the feet down */
    bool upper = m.walking && m.rise > 0.0f;

    /* p1: the displacement, swept. */
    vec3 p1;
    glm_vec3_copy(p0, p1);
    kcc_contacts c1;
    float t1 = advance(&m, p1, move, upper, &c1);

    kcc_ground g;
    memset(&g, 0, sizeof(g));
    vec3 fin, steep_n;
    bool done = false, steep_seen = false;
    for (;;) {
        /* No contact: p2, settle where the sweep ended. A contact: p3, slide from it along the
         * averaged normal, then p4, settle. Done unless the box cannot rest there. */
        const bool slid = c1.count > 0;
        glm_vec3_copy(p1, fin);
        if (slid) {
            vec3 rest;
            glm_vec3_scale(move, 1.0f - t1, rest);
            slide(&m, fin, rest, upper, &c1);
        }
        const bool rests = settle(&m, p0, fin, dv, &g);
        debug_point(m.dbg, slid ? 4 : 2, fin);
        if (rests) {
            r.branch = slid ? KCC_BRANCH_P4 : KCC_BRANCH_P2;
            if (slid)
                m.flags |= KCC_MOVE_SLID;
            done = true;
            break;
        }
        if (!upper)
            break;
        if (g.found && !g.walkable && !g.blocked) { /* steep ground refused the box */
            steep_seen = true;
            glm_vec3_copy(g.normal, steep_n);
        }
        /* Only the box above step height was swept, and what lies lower down refused the box: a
         * step-up under a low ceiling or onto steep ground or a ledge too high, or, in a long move,
         * the foot of a slope too steep to stand on that the upper box passed over before meeting
         * the slope. Sweep again with the whole box, which stops at the obstacle, and slide along
         * it. */
        upper = false;
        glm_vec3_copy(p0, p1);
        t1 = advance(&m, p1, move, false, &c1);
        if (c1.count == 0)
            break;
    }
    if (steep_seen) {
        /* the whole box's slide along the steep ground made no headway: along its crease */
        vec3 alt, went0;
        kcc_ground ga;
        if (done)
            glm_vec3_sub(fin, p0, went0);
        if ((!done || stuck(u, move, went0)) && along_steep(&m, p0, move, steep_n, dv, alt, &ga)) {
            vec3 went1;
            glm_vec3_sub(alt, p0, went1);
            if (!done || sideways(u, went1) > sideways(u, went0)) {
                glm_vec3_copy(alt, fin);
                g = ga;
                r.branch = KCC_BRANCH_P4;
                m.flags |= KCC_MOVE_SLID;
                done = true;
            }
        }
    }
    debug_point(m.dbg, 1, p1);
    if (!done) {
        memset(&g, 0, sizeof(g));
        if (!overlaps_at(&m, p1)) {
            glm_vec3_copy(p1, fin);
            r.branch = KCC_BRANCH_P1;
        } else {
            glm_vec3_copy(p0, fin);
            r.branch = KCC_BRANCH_P0;
        }
        /* still report what is under the box */
        kcc_ground_probe(ch, &L, fin, 0.0f, 2.0f * m.skin + 1e-3f, &g, m.dbg);
        g.walkable = g.walkable && !g.blocked && g.height <= fin[u] - he[u];
    }

    /* A funnel: falling, the box was stopped (it came down less than half the way) by steep ground
     * and walls that hold it up together. It stands there: on the ground, facing up the way they do
     * together, instead of hanging with the caller's fall speed growing frame after frame. */
    vec3 up_between;
    if (!(g.found && g.walkable) && dv < 0.0f && fin[u] - p0[u] > 0.5f * dv &&
        kcc_ground_held(ch, &L, (const vec3 *)contacts_held.normal, contacts_held.triangle,
                        contacts_held.n, up_between)) {
        g.found = g.walkable = true;
        g.blocked = false;
        g.height = fin[u] - he[u] - m.skin;
        glm_vec3_copy(up_between, g.normal);
        g.triangle = contacts_held.triangle[0];
        g.rays = 0;
    }

    /* Result and state. */
    const float feet0 = p0[u] - he[u];
    const float feet1 = fin[u] - he[u];
    vec3 old_normal;
    glm_vec3_copy(ch->ground_normal, old_normal);
    ch->on_ground = g.found && g.walkable;
    if (ch->on_ground) {
        m.flags |= KCC_MOVE_ON_GROUND;
        if (!was_ground)
            m.flags |= KCC_MOVE_LANDED;
        glm_vec3_copy(g.normal, ch->ground_normal);
        ch->ground_height = g.height;
        ch->ground_triangle = g.triangle;
        glm_vec3_copy(g.normal, r.ground_normal);
        r.ground_height = g.height;
        r.ground_triangle = g.triangle;
        r.ground_rays = g.rays;
        if (was_ground) {
            /* a rise beyond what the ground planes explain is a step: the plane under the box
             * before the move or after it (crossing a crease from a slope onto flatter ground, the
             * plane before explains the rise) */
            vec3 mh;
            glm_vec3_sub(fin, p0, mh);
            mh[u] = 0.0f;
            float slope_rise = 0.0f;
            const float *planes[2] = {ch->ground_normal, old_normal};
            for (int k = 0; k < 2; ++k) {
                const float *n = planes[k];
                if (n[u] > 1e-3f)
                    slope_rise = kcc_maxf(slope_rise, -glm_vec3_dot(mh, (float *)n) / n[u]);
            }
            float rise = feet1 - feet0;
            if (rise > slope_rise + 0.02f) {
                m.flags |= KCC_MOVE_STEPPED_UP;
                r.step_up = rise;
            } else if (rise < -0.02f && m.walking) {
                m.flags |= KCC_MOVE_SNAPPED_DOWN;
            }
        }
    } else if (g.found && !g.walkable && !g.blocked && g.height >= feet1 - 4.0f * m.skin) {
        m.flags |= KCC_MOVE_ON_STEEP;
        glm_vec3_copy(g.normal, r.ground_normal);
        r.ground_height = g.height;
        r.ground_triangle = g.triangle;
    } else if (m.steep) {
        m.flags |= KCC_MOVE_ON_STEEP;
        glm_vec3_copy(m.steep_normal, r.ground_normal);
        r.ground_height = feet1;
        r.ground_triangle = m.steep_triangle;
    }
    glm_vec3_sub(fin, ch->position, r.moved);
    glm_vec3_copy(fin, ch->position);
    /* every branch but P0 checked its box; P0 keeps p0, clear when the start check said so */
    priv->clear_owner = (r.branch != KCC_BRANCH_P0 || start_clear) ? source.owner : NULL;
    priv->clear_key = source.key;
    glm_vec3_copy(fin, priv->clear_at);
    glm_vec3_copy(m.wall_normal, r.wall_normal);
    vec3 went; /* from p0 after any push-out */
    glm_vec3_sub(fin, p0, went);
    if (stuck(u, move, went))
        m.flags |= KCC_MOVE_STUCK;
    r.flags |= m.flags;
    *result = r;
    return !embedded;
}

/* A walking move longer than the box's narrower half width runs as that many equal sub-moves (at
 * most KCC_MAX_SUBSTEPS), each the whole scheme. A move climbs at most step_height and snaps down at
 * most ground_snap: one that carried the box over several stairs at once would meet their combined
 * rise as a ledge too high going up, and leave the ground going down. */
#define KCC_MAX_SUBSTEPS 8u

static uint32_t substeps(const kcc_character *ch, const vec3 d)
{
    const int u = kcc_up_index(ch), h0 = kcc_side_index(ch, 0), h1 = kcc_side_index(ch, 1);
    if (!ch->on_ground || !(d[u] <= 0.0f))
        return 1u;
    const float len = sqrtf(d[h0] * d[h0] + d[h1] * d[h1]);
    const float part = kcc_minf(ch->desc.half_extents[h0], ch->desc.half_extents[h1]);
    if (!(len > part))
        return 1u;
    const float n = ceilf(len / part);
    return n < (float)KCC_MAX_SUBSTEPS ? (uint32_t)n : KCC_MAX_SUBSTEPS;
}

void kcc_character_move_debug(kcc_character *ch, const kcc_mesh *mesh, const vec3 displacement,
                              kcc_move_result *result, kcc_move_debug *debug)
{
#if KCC_AVX2_VARIANT
    if (kcc_isa_avx2()) { /* this very function, compiled for AVX2: same results, faster */
        kcc_avx2_character_move_debug(ch, mesh, displacement, result, debug);
        return;
    }
#endif
    kcc_move_result r;
    memset(&r, 0, sizeof(r));
    r.branch = KCC_BRANCH_P0;
    r.flags = KCC_MOVE_BAD_INPUT;
    if (!ch || !mesh || !vec3_finite(ch->position)) { /* nothing sensible to do */
        if (debug)
            memset(debug, 0, sizeof(*debug));
        if (result)
            *result = r;
        return;
    }
    vec3 d = {0.0f, 0.0f, 0.0f};
    uint32_t flags = KCC_MOVE_BAD_INPUT;
    if (displacement && vec3_finite(displacement) && fabsf(displacement[0]) <= KCC_MAX_DISPLACEMENT &&
        fabsf(displacement[1]) <= KCC_MAX_DISPLACEMENT && fabsf(displacement[2]) <= KCC_MAX_DISPLACEMENT) {
        glm_vec3_copy((float *)displacement, d);
        flags = 0u;
    }
    const uint32_t n = substeps(ch, d);
    if (n == 1u) {
        move_once(ch, mesh, d, flags, &r, debug);
        if (result)
            *result = r;
        return;
    }

    /* Sub-moves: the result is the whole move's. Flags of what happened along the way add up; the
     * ground, the branch and the debug record are the last sub-move's; landing and being stuck are
     * judged over the whole move. */
    const int u = kcc_up_index(ch);
    vec3 p0, part;
    glm_vec3_copy(ch->position, p0);
    glm_vec3_scale(d, 1.0f / (float)n, part);
    uint32_t seen = 0u;
    float step_up = 0.0f;
    vec3 wall_normal = {0.0f, 0.0f, 0.0f};
    for (uint32_t i = 0; i < n; ++i) {
        const bool was_ground = ch->on_ground;
        const bool free = move_once(ch, mesh, part, i == 0 ? flags : 0u, &r, debug);
        seen |= r.flags;
        if (r.flags & KCC_MOVE_STEPPED_UP)
            step_up += r.step_up;
        if (r.flags & (KCC_MOVE_HIT_WALL | KCC_MOVE_HIT_CEILING))
            glm_vec3_copy(r.wall_normal, wall_normal);
        /* Not moved and the same footing: every further sub-move would repeat this one exactly. */
        if (!free || (r.moved[0] == 0.0f && r.moved[1] == 0.0f && r.moved[2] == 0.0f &&
                      ch->on_ground == was_ground))
            break;
    }
    const uint32_t last = KCC_MOVE_ON_GROUND | KCC_MOVE_ON_STEEP | KCC_MOVE_LANDED | KCC_MOVE_STUCK;
    r.flags = (seen & ~last) | (r.flags & (KCC_MOVE_ON_GROUND | KCC_MOVE_ON_STEEP));
    r.step_up = step_up;
    glm_vec3_copy(wall_normal, r.wall_normal);
    glm_vec3_sub(ch->position, p0, r.moved);
    if (stuck(u, d, r.moved))
        r.flags |= KCC_MOVE_STUCK;
    if (result)
        *result = r;
}
