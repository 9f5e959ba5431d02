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
    const kcc_character_desc desc = {
        .half_extents = {0.3f, 0.9f, 0.3f},
        .step_height = 0.35f,
        .max_slope_deg = 45.0f,
        .up_axis = 1,
        .skin_width = 0.002f,
        .ground_snap = 0.35f,
        .max_push_out = 0.2f,
    };
    return desc;
}

kcc_status kcc_character_desc_validate(const kcc_character_desc *desc)
{
    if (!desc)
        return KCC_ERR_NULL_ARGUMENT;
    const float fields[] = {desc->half_extents[0], desc->half_extents[1], desc->half_extents[2],
                            desc->step_height, desc->max_slope_deg, desc->skin_width,
                            desc->ground_snap, desc->max_push_out};
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); ++i)
        if (!isfinite(fields[i]))
            return KCC_ERR_NON_FINITE;
    if (desc->up_axis == 0 || desc->up_axis < -3 || desc->up_axis > 3)
        return KCC_ERR_BAD_DESC;
    for (int i = 0; i < 3; ++i)
        if (!(desc->half_extents[i] >= 0.01f && desc->half_extents[i] <= 100.0f))
            return KCC_ERR_BAD_DESC;
    const float half_height = desc->half_extents[kcc_up_axis_index(desc->up_axis)];
    if (!(desc->step_height >= 0.0f && desc->step_height <= 1.8f * half_height))
        return KCC_ERR_BAD_DESC;
    if (!(desc->max_slope_deg >= 0.0f && desc->max_slope_deg <= 89.0f))
        return KCC_ERR_BAD_DESC;
    if (!(desc->skin_width >= 0.0001f && desc->skin_width <= 0.05f))
        return KCC_ERR_BAD_DESC;
    if (!(desc->ground_snap >= 0.0f && desc->ground_snap <= 10.0f))
        return KCC_ERR_BAD_DESC;
    if (!(desc->max_push_out > 0.0f && desc->max_push_out <= 10.0f))
        return KCC_ERR_BAD_DESC;
    return KCC_OK;
}

static void apply_desc(kcc_character *ch, const kcc_character_desc *desc)
{
    ch->desc = *desc;
    kcc_character_priv(ch)->clear_owner = NULL; /* the box changed */
    /* cos() in double, rounded once: the same float on every compiler and optimisation level. */
    ch->cos_max_slope = (float)cos((double)desc->max_slope_deg * (KCC_PI / 180.0));
    kcc_character_priv(ch)->tuning_check = kcc_character_tuning_check(ch);
}

kcc_status kcc_character_init(kcc_character *ch, const kcc_character_desc *desc, const vec3 center)
{
    if (!ch || !center)
        return KCC_ERR_NULL_ARGUMENT;
    kcc_character_desc tuning = desc ? *desc : kcc_character_default_desc();
    kcc_status st = kcc_character_desc_validate(&tuning);
    if (st != KCC_OK)
        return st;
    if (!isfinite(center[0]) || !isfinite(center[1]) || !isfinite(center[2]))
        return KCC_ERR_NON_FINITE;
    vec3 at; /* center may be ch->position itself (a respawn where the character stands) */
    glm_vec3_copy((float *)center, at);
    memset(ch, 0, sizeof(*ch));
    apply_desc(ch, &tuning);
    glm_vec3_copy(at, ch->position);
    ch->ground_normal[kcc_up_axis_index(tuning.up_axis)] = kcc_up_axis_sign(tuning.up_axis);
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
    if (!ch)
        return KCC_ERR_NULL_ARGUMENT;
    const kcc_character_desc defaults = kcc_character_default_desc();
    if (!desc)
        desc = &defaults; /* NULL means the defaults, as for kcc_character_init */
    kcc_status st = kcc_character_desc_validate(desc);
    if (st != KCC_OK)
        return st;
    if (!kcc_character_set_up(ch))
        return KCC_ERR_BAD_DESC; /* not set up by kcc_character_init, or its desc written directly */
    /* Keep the feet where they are (on an unchanged up axis): the box's bottom along up is at
     * position - sign * half height on the up axis. */
    kcc_character next = *ch;
    const bool same_up = desc->up_axis == ch->desc.up_axis;
    const int up = kcc_up_axis_index(desc->up_axis);
    const float sign = kcc_up_axis_sign(desc->up_axis);
    const float feet = ch->position[up] - sign * ch->desc.half_extents[up];
    apply_desc(&next, desc);
    if (same_up)
        next.position[up] = feet + sign * next.desc.half_extents[up];
    if (mesh) {
        bool grows = false;
        for (int i = 0; i < 3; ++i)
            grows |= desc->half_extents[i] > ch->desc.half_extents[i];
        vec3 box[2];
        kcc_box_at(&next, next.position, box);
        if (grows && kcc_mesh_overlap_aabb(mesh, (const vec3 *)box, NULL, 0) > 0)
            return KCC_ERR_OVERLAP;
    }
    if (!same_up) { /* the cache holds triangles in the old axis's frame: never reused */
        kcc_character_forget(&next);
        next.on_ground = false;
        glm_vec3_zero(next.ground_normal);
        next.ground_normal[up] = sign;
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
 * and clips against up to four planes. The policy is move_once; the functions above it are its
 * steps. */

/* How much wider than a move's reach the character's cache is refilled: a margin (m) all around,
 * plus this many moves like the current one all around and ahead along it. Tuned on the shared
 * levels for instructions per move; they change speed only, never an answer. */
#define KCC_CACHE_MARGIN 0.1f
#define KCC_CACHE_MOVES  1.0f
#define KCC_CACHE_LEAD   6.0f

/* The steep faces and walls (not ceilings) a move met in the air, each triangle once, with its
 * contact normal: together they may hold the box up, as the sides of a funnel do. */
typedef struct funnel_sides {
    uint32_t count;
    vec3     normal[KCC_MAX_CONTACTS];
    uint32_t triangle[KCC_MAX_CONTACTS];
} funnel_sides;

/* What the swept legs of a move met, for its result. */
typedef struct move_report {
    uint32_t     flags;          /* KCC_MOVE_HIT_WALL, KCC_MOVE_HIT_CEILING */
    vec3         wall_normal;    /* the last wall or ceiling met */
    bool         steep;          /* slid along steep ground in the air */
    vec3         steep_normal;
    uint32_t     steep_triangle;
    funnel_sides sides;
} move_report;

/* One move: what stays fixed while it runs, and what it learns. */
typedef struct move_ctx {
    kcc_character          *ch;
    const kcc_local_source *source;
    kcc_local              *list;   /* the move's triangles (gather_move, gather_around) */
    kcc_local_store        *store;  /* their storage when the character's cache cannot hold them */
    int                     up;     /* index of the up axis */
    float                   skin;
    float                   rise;   /* m: how high walking looks for ground in this move (walk_rise) */
    bool                    walking;/* on walkable ground and not moving up: horizontal moves,
                                       step-up, snap */
    uint32_t                flags;  /* KCC_MOVE_* the move sets itself (PUSHED_OUT, SLID, ...) */
    kcc_move_debug         *dbg;    /* NULL unless kcc_character_move_debug */
    kcc_contact_sink       *contacts; /* NULL unless a world step asks for them */
    move_report             report; /* what its legs met */
} move_ctx;

/* One chain of swept legs (advance, then slide): how it sees contacts and where it reports them. */
typedef struct leg {
    bool            walking;      /* steep ground and ceilings are walls (adjust_normal, clip) */
    const uint32_t *overlapped;   /* the start-overlap push: the triangles it leaves, which its */
    uint32_t        n_overlapped; /* sweeps do not meet where the box overlaps them; NULL otherwise */
    kcc_move_debug *dbg;          /* the slide's record; NULL: none */
    move_report    *report;       /* where what it meets goes */
    float           short_by;     /* m: how much nearer than a skin the last advance's contact was */
    vec3            short_normal; /* (<= skin), along this normal (the contact closed on most) */
} leg;

/* The move's own legs: its mode, its debug record, its report. */
static leg move_leg(move_ctx *ctx)
{
    leg lg = {ctx->walking, NULL, 0u, ctx->dbg, &ctx->report, 0.0f, {0.0f, 0.0f, 0.0f}};
    return lg;
}

/* Legs in the air (a fall, a slide down a steep face), reporting to the move. */
static leg air_leg(move_ctx *ctx, kcc_move_debug *dbg)
{
    leg lg = {false, NULL, 0u, dbg, &ctx->report, 0.0f, {0.0f, 0.0f, 0.0f}};
    return lg;
}

/* How far v goes sideways (m). */
static float sideways(int up, const vec3 v)
{
    vec3 side;
    glm_vec3_copy((float *)v, side);
    side[up] = 0.0f;
    return glm_vec3_norm(side);
}

/* The box that sweeps: in walking mode only the part above the move's rise (lower obstacles are
 * steps or the slope walked up, handled by the ground probe); otherwise the whole box. */
static void sweep_box(const move_ctx *ctx, const vec3 pos, bool upper, vec3 out[2])
{
    kcc_box_at(ctx->ch, pos, out);
    if (upper)
        out[0][ctx->up] += kcc_minf(ctx->rise, out[1][ctx->up] - out[0][ctx->up] - ctx->skin);
}

/* A contact normal as a leg should see it. Walking: steep ground and ceilings are walls (they
 * block, they neither lift nor press down). In the air: a steep surface stays as it is for the
 * vertical part of the motion (gravity slides down it) - see clip(). */
static void adjust_normal(const move_ctx *ctx, bool walking, const vec3 n, vec3 out)
{
    const int up = ctx->up;
    glm_vec3_copy((float *)n, out);
    bool walkable = n[up] >= ctx->ch->cos_max_slope;
    if (walking && !walkable) {
        out[up] = 0.0f;
        float len = glm_vec3_norm(out);
        if (len > 1e-6f)
            glm_vec3_scale(out, 1.0f / len, out);
        else
            glm_vec3_copy((float *)n, out);
    }
}

/* v with its component into the plane n removed. A steep slope met in the air takes horizontal
 * input as a wall would (no climbing it by walking into it) and lets the vertical part slide. */
static void clip(const move_ctx *ctx, bool walking, const vec3 v, const vec3 n, vec3 out)
{
    const int up = ctx->up;
    float vn = glm_vec3_dot((float *)v, (float *)n);
    if (vn >= 0.0f) {
        glm_vec3_copy((float *)v, out);
        return;
    }
    bool steep_floor = n[up] > 1e-4f && n[up] < ctx->ch->cos_max_slope;
    if (!walking && steep_floor) {
        vec3 vh, nh, vv = {0.0f, 0.0f, 0.0f};
        glm_vec3_copy((float *)v, vh);
        vh[up] = 0.0f;
        vv[up] = v[up];
        glm_vec3_copy((float *)n, nh);
        nh[up] = 0.0f;
        glm_vec3_normalize(nh);
        float dot = glm_vec3_dot(vh, nh);
        if (dot < 0.0f)
            glm_vec3_muladds(nh, -dot, vh);
        dot = glm_vec3_dot(vv, (float *)n);
        if (dot < 0.0f)
            glm_vec3_muladds((float *)n, -dot, vv);
        glm_vec3_add(vh, vv, out);
        /* What is left must not go into the plane (tiny residue from the split). */
        dot = glm_vec3_dot(out, (float *)n);
        if (dot < 0.0f)
            glm_vec3_muladds((float *)n, -dot, out);
        return;
    }
    glm_vec3_copy((float *)v, out);
    glm_vec3_muladds((float *)n, -vn, out);
}

/* Notes a steep or wall contact met in the air, once per triangle. */
static void add_side(funnel_sides *sides, const vec3 n, uint32_t triangle)
{
    for (uint32_t j = 0; j < sides->count; ++j)
        if (sides->triangle[j] == triangle)
            return;
    if (sides->count < KCC_MAX_CONTACTS) {
        glm_vec3_copy((float *)n, sides->normal[sides->count]);
        sides->triangle[sides->count++] = triangle;
    }
}

/* Reports contact normal n (triangle) to the leg's report: a ceiling in the air, a wall (or a steep
 * slope or a ceiling met while walking), or steep ground slid along in the air (no flag); the
 * funnel's sides. Walkable ground reports nothing. */
static void report_contact(const move_ctx *ctx, const leg *lg, const vec3 n, uint32_t triangle)
{
    move_report *report = lg->report;
    const float nu = n[ctx->up];
    if (ctx->contacts)
        kcc_contact_sink_add(ctx->contacts, triangle, n);
    if (nu >= ctx->ch->cos_max_slope)
        return;
    if (!lg->walking && nu >= -0.01f)
        add_side(&report->sides, n, triangle);
    if (!lg->walking && nu > 0.01f) {
        report->steep = true;
        glm_vec3_copy((float *)n, report->steep_normal);
        report->steep_triangle = triangle;
        return;
    }
    report->flags |= (!lg->walking && nu < -0.1f) ? KCC_MOVE_HIT_CEILING : KCC_MOVE_HIT_WALL;
    glm_vec3_copy((float *)n, report->wall_normal);
}

/* The averaged normal of the triangles touched first (near-parallel normals counted once, so a wall
 * of many small triangles weighs what one triangle does). False when they cancel out. */
static bool averaged_normal(const move_ctx *ctx, const leg *lg, const kcc_contacts *contacts, vec3 out)
{
    vec3 distinct[KCC_MAX_CONTACTS];
    uint32_t n = 0;
    for (uint32_t i = 0; i < contacts->count; ++i) {
        vec3 seen;
        adjust_normal(ctx, lg->walking, contacts->normal[i], seen);
        bool dup = false;
        for (uint32_t j = 0; j < n && !dup; ++j)
            dup = glm_vec3_dot(seen, distinct[j]) > 0.999f;
        if (!dup)
            glm_vec3_copy(seen, distinct[n++]);
        report_contact(ctx, lg, contacts->normal[i], contacts->triangle[i]);
    }
    glm_vec3_zero(out);
    for (uint32_t j = 0; j < n; ++j)
        glm_vec3_add(out, distinct[j], out);
    float len = glm_vec3_norm(out);
    if (!(len > 1e-4f))
        return false;
    glm_vec3_scale(out, 1.0f / len, out);
    return true;
}

/* Advances pos along v to the first contact, stopping a skin short of it (measured along the
 * contact normal). The sweep looks a skin further than v so that a move ending just short of a
 * surface still keeps its distance. Returns the fraction of v travelled; contacts holds what it met
 * (count 0: none within reach). */
static float advance(const move_ctx *ctx, leg *lg, vec3 pos, const vec3 v, bool upper,
                     kcc_contacts *contacts)
{
    vec3 box[2];
    sweep_box(ctx, pos, upper, box);
    contacts->count = 0;
    float len = glm_vec3_norm((float *)v);
    if (!(len > 1e-7f))
        return 1.0f;
    vec3 ext;
    float reach = len + ctx->skin;
    glm_vec3_scale((float *)v, reach / len, ext);
    /* contacts within 0.1 mm of the first count as simultaneous */
    const bool hit = lg->overlapped
                         ? kcc_local_sweep_out(ctx->list, (const vec3 *)box, ext, 1e-4f / reach,
                                               lg->overlapped, lg->n_overlapped, contacts)
                         : kcc_local_sweep(ctx->list, (const vec3 *)box, ext, 1e-4f / reach, contacts);
    if (!hit) {
        glm_vec3_add(pos, (float *)v, pos);
        return 1.0f;
    }
    float closing = 0.0f; /* cosine between v and the most opposing contact normal */
    uint32_t most = 0;
    for (uint32_t i = 0; i < contacts->count; ++i) {
        const float cosine = -glm_vec3_dot((float *)v, contacts->normal[i]) / len;
        if (cosine > closing) {
            closing = cosine;
            most = i;
        }
    }
    float travel = contacts->t * reach;
    if (closing > 0.0f)
        travel -= ctx->skin / closing;
    /* nearer than a skin by more than a hundredth of one (less is rounding, not worth a nudge) */
    lg->short_by = travel < 0.0f ? kcc_minf(-travel * closing, ctx->skin) : 0.0f;
    if (lg->short_by < 0.01f * ctx->skin)
        lg->short_by = 0.0f;
    glm_vec3_copy(contacts->normal[most], lg->short_normal);
    if (travel >= len) { /* the surface stays more than a skin away: no contact this move */
        contacts->count = 0;
        glm_vec3_add(pos, (float *)v, pos);
        return 1.0f;
    }
    float t = kcc_maxf(0.0f, travel / len);
    glm_vec3_muladds((float *)v, t, pos);
    return t;
}

/* Quake-style clipping of v against every plane met so far: along one plane when that goes into
 * none of the others, else along the crease of two, else stop. */
static void clip_planes(const move_ctx *ctx, bool walking, const vec3 v_in, const vec3 *planes,
                        uint32_t np, vec3 out)
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
    /* Along one plane: the first whose clip goes into no other plane, not only the first plane v
     * goes into (the slide along the foot of a steep slope in a corner with a wall takes the
     * slope's plane; test: leaving_a_corner_along_a_steep_slopes_foot). */
    for (uint32_t i = first; i < np; ++i) {
        if (glm_vec3_dot((float *)v_in, (float *)planes[i]) >= 0.0f)
            continue;
        vec3 v;
        clip(ctx, walking, v_in, planes[i], v);
        if (kcc_into_none(v, planes, np, i, i, 1e-7f)) {
            glm_vec3_copy(v, out);
            return;
        }
    }
    /* Along the crease of the first plane and the first other plane its clip goes into, unless
     * that goes into a third: wedged. */
    vec3 v;
    clip(ctx, walking, v_in, planes[first], v);
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
static bool turned_back(int up, const vec3 v, const vec3 input)
{
    float dot = 0.0f, in2 = 0.0f;
    for (int k = 0; k < 3; ++k)
        if (k != up) {
            dot += v[k] * input[k];
            in2 += input[k] * input[k];
        }
    return in2 > 0.0f && dot <= 0.0f;
}

/* True when none of the planes is steep ground (see clip()): walls and overhangs only. */
static bool walls_only(int up, const vec3 *planes, uint32_t np)
{
    for (uint32_t i = 0; i < np; ++i)
        if (planes[i][up] > 1e-4f)
            return false;
    return true;
}

/* The debug record of a slide's start: the first contacts, their averaged normal, the slide. */
static void debug_slide(kcc_move_debug *dbg, const kcc_contacts *first, const vec3 averaged,
                        const vec3 slide_v)
{
    if (!dbg)
        return;
    dbg->contact_count = first->count < KCC_DEBUG_MAX_CONTACTS ? first->count : KCC_DEBUG_MAX_CONTACTS;
    memcpy(dbg->contacts, first->triangle, sizeof(uint32_t) * dbg->contact_count);
    glm_vec3_copy((float *)averaged, dbg->averaged_normal);
    glm_vec3_copy((float *)slide_v, dbg->slide);
}

/* The slide (p3): from the first contact, the rest of the motion along the tangent of the averaged
 * normal, then up to three more sweeps clipping against every plane met. A box nearer than a skin
 * to what it slides along leaves along the normal to a skin (short_by), so the gap cannot shrink
 * frame by frame until the box touches and sticks. True when the box went along what it met: the
 * first clipped rest is not zero (tests: straight_landing_is_p2_and_no_slide,
 * going_along_a_wall_is_a_slide). */
static bool slide(const move_ctx *ctx, leg *lg, vec3 pos, const vec3 remaining, bool upper,
                  const kcc_contacts *first)
{
    vec3 planes[5];
    uint32_t np = 0;
    vec3 v;
    if (!averaged_normal(ctx, lg, first, planes[np])) {
        lg->report->flags |= KCC_MOVE_HIT_WALL;
        return false;
    }
    np++;
    clip_planes(ctx, lg->walking, remaining, (const vec3 *)planes, np, v);
    const bool went = glm_vec3_norm2(v) >= 1e-14f;
    glm_vec3_muladds(lg->short_normal, lg->short_by, v);
    debug_slide(lg->dbg, first, planes[0], v);
    for (int iter = 0; iter < 4; ++iter) {
        if (glm_vec3_norm2(v) < 1e-14f)
            return went;
        kcc_contacts contacts;
        float t = advance(ctx, lg, pos, v, upper, &contacts);
        if (contacts.count == 0)
            return went;
        vec3 rest;
        glm_vec3_scale(v, 1.0f - t, rest);
        if (np < 5 && averaged_normal(ctx, lg, &contacts, planes[np]))
            np++;
        clip_planes(ctx, lg->walking, rest, (const vec3 *)planes, np, v);
        glm_vec3_muladds(lg->short_normal, lg->short_by, v);
        /* Walking, a slide turned back against the input stops (Quake's rule): in an obtuse corner
         * the slide along one wall leads back out along the other. */
        if (lg->walking && glm_vec3_dot(v, (float *)remaining) <= 0.0f)
            return went;
        /* In the air, among walls only, a slide whose horizontal part turned back keeps its
         * vertical part alone. */
        if (!lg->walking && turned_back(ctx->up, v, remaining) &&
            walls_only(ctx->up, (const vec3 *)planes, np)) {
            for (int k = 0; k < 3; ++k)
                if (k != ctx->up)
                    v[k] = 0.0f;
        }
    }
    return went;
}

/* A leg: pos along v to the first contact (a skin short of it; written to at_contact, when given),
 * then the rest of v slid along what it meets. True when it met something; *went (when given) says
 * whether the box then went along it (slide: not a head-on stop, nor a straight landing). */
static bool advance_and_slide(const move_ctx *ctx, leg *lg, vec3 pos, const vec3 v, bool upper,
                              vec3 at_contact, bool *went)
{
    kcc_contacts contacts;
    const float t = advance(ctx, lg, pos, v, upper, &contacts);
    if (at_contact)
        glm_vec3_copy(pos, at_contact);
    if (went)
        *went = false;
    if (contacts.count == 0)
        return false;
    vec3 rest;
    glm_vec3_scale((float *)v, 1.0f - t, rest);
    const bool along = slide(ctx, lg, pos, rest, upper, &contacts);
    if (went)
        *went = along;
    return true;
}

static bool overlaps_at(const move_ctx *ctx, const vec3 pos)
{
    return kcc_box_overlaps_at(ctx->ch, ctx->list, pos);
}

/* In the air: ground within a few millimetres under the feet (probed from a skin above them, so a
 * box that ended a hair into the floor still finds it) is landed on. */
static bool land(const move_ctx *ctx, vec3 pos, kcc_ground *ground, kcc_move_debug *dbg)
{
    const kcc_character *ch = ctx->ch;
    const int up = ctx->up;
    const float feet = pos[up] - ch->desc.half_extents[up];
    kcc_ground_probe(ch, ctx->list, pos, ctx->skin, 2.0f * ctx->skin + 1e-3f, ground, dbg);
    ground->walkable = ground->walkable && !ground->blocked;
    if (ground->found && ground->walkable && ground->height <= feet + ctx->skin) {
        pos[up] = ground->height + ctx->skin + ch->desc.half_extents[up];
        if (ground->rest_clear)
            return true; /* the probe checked this very box */
    }
    return !overlaps_at(ctx, pos);
}

/* The move's triangle list for region, from the character's cache (refilled around region grown
 * by grow when it does not cover it) or one query of the source; CONTACT_CAP when even that
 * overflows. */
static void gather_region(move_ctx *ctx, const vec3 region[2], const vec3 grow[2])
{
    kcc_local_gather_cached(ctx->list, ctx->store, &kcc_character_priv(ctx->ch)->cache, ctx->source,
                            region, grow);
    if (ctx->list->overflow)
        ctx->flags |= KCC_MOVE_CONTACT_CAP;
}

/* Makes the move's triangle list hold, besides the move's own region, everything near the box on
 * its way from a to b: the hull of the box at both, grown by pad on every side, by `below` more
 * under its feet and by the move's rise above its top. The rare paths that reach beyond the region
 * gathered for the move (looking ahead, following a steep face down) call it before they query,
 * so that what they see never depends on what the character's cache happens to hold (test:
 * results_never_depend_on_the_character_cache). */
static void gather_around(move_ctx *ctx, const vec3 a, const vec3 b, float pad, float below)
{
    kcc_local *list = ctx->list;
    if (list->overflow)
        return; /* every query asks the source for its own region */
    const float *he = ctx->ch->desc.half_extents;
    vec3 need[2];
    bool inside = true;
    for (int k = 0; k < 3; ++k) {
        need[0][k] = kcc_minf(a[k], b[k]) - he[k] - pad - (k == ctx->up ? below : 0.0f);
        need[1][k] = kcc_maxf(a[k], b[k]) + he[k] + pad + (k == ctx->up ? ctx->rise + ctx->skin : 0.0f);
        inside = inside && need[0][k] >= list->region[0][k] && need[1][k] <= list->region[1][k];
    }
    if (inside)
        return;
    vec3 grow[2];
    for (int k = 0; k < 3; ++k) {
        need[0][k] = kcc_minf(need[0][k], list->region[0][k]);
        need[1][k] = kcc_maxf(need[1][k], list->region[1][k]);
        grow[0][k] = grow[1][k] = KCC_CACHE_MARGIN;
    }
    gather_region(ctx, (const vec3 *)need, (const vec3 *)grow);
}

/* Walking along the foot of a steep face, a box that ends with an edge over its lip, a hair above
 * the walkable ground it stood on, follows the steep face down onto walkable ground within
 * `reach`, as it follows stairs down, instead of hanging there a frame (test:
 * walking_down_along_a_steep_faces_foot_stays_on_the_ground). A fall swept down and slid along the steepest
 * face met. True, with pos and ground updated, when that ends resting on walkable ground. */
KCC_RARE bool off_a_steep_lip(move_ctx *ctx, vec3 pos, float reach, kcc_ground *ground)
{
    const int up = ctx->up;
    /* the fall and the slide together go no further than reach; landing looks a little lower */
    gather_around(ctx, pos, pos, reach + 2.0f * ctx->skin + 0.01f, reach + 2.0f * ctx->skin + 0.01f);
    leg air = air_leg(ctx, NULL);
    vec3 p, fall = {0.0f, 0.0f, 0.0f};
    glm_vec3_copy(pos, p);
    fall[up] = -reach;
    kcc_contacts contacts;
    float t = advance(ctx, &air, p, fall, false, &contacts);
    if (contacts.count == 0 || contacts.start_overlap)
        return false;
    /* the steepest face met: slide down along it (walkable ground met first: land there) */
    uint32_t k = 0;
    for (uint32_t i = 1; i < contacts.count; ++i)
        if (contacts.normal[i][up] < contacts.normal[k][up])
            k = i;
    if (contacts.normal[k][up] < ctx->ch->cos_max_slope) {
        if (!(contacts.normal[k][up] > 1e-3f))
            return false; /* a wall: nothing to follow down */
        vec3 rest, v;
        glm_vec3_scale(fall, 1.0f - t, rest);
        clip(ctx, false, rest, contacts.normal[k], v);
        advance(ctx, &air, p, v, false, &contacts);
    }
    kcc_ground landed;
    if (!land(ctx, p, &landed, NULL) || !(landed.found && landed.walkable))
        return false;
    glm_vec3_copy(p, pos);
    *ground = landed;
    return true;
}

/* A walk whose probe finds only a steep face under the box, in front of walkable ground a little
 * further on (the raked riser of a stair, a steep bump no higher than a step), looks for that
 * ground ahead along the walk, as far as a steep face no higher than step_height can run (at most
 * the box's half width), with the part of the box above the move's rise swept there; so a stair
 * climbs at any frame rate (as Jolt's stair-walk look-ahead does; test:
 * a_raked_riser_is_a_step_at_any_frame_rate). `up_step`: the steep face rose above the feet: walkable
 * ground ahead no higher than step_height above the ground stood on, and not under the steep face,
 * is stepped onto here and now. Otherwise (the box stands over the steep face already, on a step
 * taken early): walkable ground ahead at the height it stands keeps it there. True, with pos and
 * ground updated, when so. */
KCC_RARE bool step_ahead(move_ctx *ctx, const vec3 p0, vec3 pos, float reach, bool up_step,
                         kcc_ground *ground)
{
    const kcc_character *ch = ctx->ch;
    const int up = ctx->up, h0 = kcc_side_index(ch, 0), h1 = kcc_side_index(ch, 1);
    const float *he = ch->desc.half_extents;
    vec3 dir;
    glm_vec3_sub(pos, (float *)p0, dir);
    dir[up] = 0.0f;
    const float len = glm_vec3_norm(dir);
    if (!(len > 1e-6f))
        return false;
    const float cos_max = ch->cos_max_slope, sin_max = sqrtf(kcc_maxf(0.0f, 1.0f - cos_max * cos_max));
    const float run = sin_max > 1e-6f ? ch->desc.step_height * cos_max / sin_max : 0.0f; /* of the steepest face */
    const float look = kcc_minf(run + 2.0f * ctx->skin, kcc_minf(he[h0], he[h1]));
    glm_vec3_scale(dir, look / len, dir);
    vec3 box[2], ahead;
    glm_vec3_add(pos, dir, ahead);
    gather_around(ctx, pos, ahead, 2.0f * ctx->skin + 0.01f, reach + 2.0f * ctx->skin + 0.01f);
    sweep_box(ctx, pos, true, box);
    kcc_contacts hit;
    float go = 1.0f;
    if (kcc_local_sweep(ctx->list, (const vec3 *)box, dir, 1e-4f / look, &hit))
        go = hit.t - ctx->skin / look;
    if (!(go > 0.0f))
        return false;
    glm_vec3_copy(pos, ahead);
    glm_vec3_muladds(dir, go, ahead);
    /* a tread: the rays' walkable ground with the box resting on it clear (no box sweep: it is the
     * costly part of a probe, and a tread is found by the rays) */
    kcc_ground tread;
    if (!kcc_ground_rays(ch, ctx->list, ahead, ctx->rise + ctx->skin, reach, &tread))
        return false;
    const float base = pos[up] - he[up] - ctx->skin; /* the ground the box stands on */
    if (up_step ? !(tread.height <= base + ch->desc.step_height + 0.5f * KCC_PENETRATION_TOLERANCE &&
                    tread.height >= ground->height - 0.5f * ctx->skin)
                : !(fabsf(tread.height - base) <= 0.5f * ctx->skin))
        return false;
    vec3 rest;
    glm_vec3_copy(pos, rest);
    rest[up] = tread.height + ctx->skin + he[up];
    if (overlaps_at(ctx, rest))
        return false;
    glm_vec3_copy(rest, pos);
    *ground = tread;
    return true;
}

/* How far the plane with unit normal n (facing up) rises along the horizontal part of d (m, >= 0). */
static float plane_rise(int up, const vec3 n, const vec3 d)
{
    if (!(n[up] > 1e-3f))
        return 0.0f;
    vec3 h;
    glm_vec3_copy((float *)d, h);
    h[up] = 0.0f;
    return kcc_maxf(0.0f, -glm_vec3_dot(h, (float *)n) / n[up]);
}

/* How high a walking move by disp looks for ground: step_height, plus the rise of the ground plane
 * the box stands on over disp, so that walking up a walkable slope never meets the slope as a
 * ledge, however small step_height is and however far the move goes (test:
 * walking_up_a_slope_keeps_its_speed_whatever_the_step_height). Under the box's height (the ground probe's
 * lift needs no sweep below that). */
static float walk_rise(const kcc_character *ch, const vec3 disp)
{
    const int up = kcc_up_index(ch);
    const float step = ch->desc.step_height;
    if (!ch->on_ground || !(disp[up] <= 0.0f) || ch->ground_normal[up] == 1.0f)
        return step;
    const float cap = 2.0f * ch->desc.half_extents[up] - 2.0f * ch->desc.skin_width;
    return kcc_maxf(step, kcc_minf(step + plane_rise(up, ch->ground_normal, disp), cap));
}

/* How much of a walk's rise from the start to pos the ground explains: the rise of the plane stood
 * on before the move and of the one found under pos (n), whichever is less, and no more than the
 * move looked for. A ledge's flat top explains none of it, so a ledge higher than step_height
 * still blocks on a slope. */
static float slope_rise(const move_ctx *ctx, const vec3 p0, const vec3 pos, const vec3 n)
{
    vec3 went;
    glm_vec3_sub((float *)pos, (float *)p0, went);
    const float rise = kcc_minf(plane_rise(ctx->up, ctx->ch->ground_normal, went), plane_rise(ctx->up, n, went));
    return kcc_minf(rise, ctx->rise - ctx->ch->desc.step_height);
}

/* True when the walk from p0 to pos goes into the face with normal n (facing up) horizontally. */
static bool walked_into(int up, const vec3 p0, const vec3 pos, const vec3 n)
{
    float dot = 0.0f;
    for (int k = 0; k < 3; ++k)
        if (k != up)
            dot += (pos[k] - p0[k]) * n[k];
    return dot < 0.0f;
}

/* Walked off the ground (or onto steep ground): the fall of this frame (dv < 0), swept and slid,
 * reported to the move. */
static void fall(move_ctx *ctx, vec3 pos, float dv)
{
    leg air = air_leg(ctx, ctx->dbg);
    vec3 drop = {0.0f, 0.0f, 0.0f};
    drop[ctx->up] = dv;
    advance_and_slide(ctx, &air, pos, drop, false, NULL, NULL);
}

/* Settles a walking box at pos onto the ground: lifted by the move's rise, looking down
 * ground_snap (0: not at all, test ground_snap_zero_never_snaps_down); steep ground ahead or under a lip (step_ahead, off_a_steep_lip); no ground: the
 * fall. False when the box cannot rest here. */
static bool settle_walking(move_ctx *ctx, const vec3 p0, vec3 pos, float dv, kcc_ground *ground)
{
    const kcc_character *ch = ctx->ch;
    const int up = ctx->up;
    const float feet = pos[up] - ch->desc.half_extents[up];
    const float reach = ch->desc.ground_snap + ctx->skin;
    kcc_ground_probe(ch, ctx->list, pos, ctx->rise + ctx->skin, reach, ground, ctx->dbg);
    if (ground->found && (ground->blocked || (!ground->walkable && ground->height > feet + ctx->skin)))
        return !ground->blocked && step_ahead(ctx, p0, pos, reach, true, ground);
    if (ground->found && ground->walkable) {
        /* The feet hover a skin over the ground: ground found higher than step_height above
         * where they stand, beyond what the slope walked up explains (give or take a quarter
         * skin, at most half a millimetre, for rounding), is a ledge too high, a wall. */
        const float over = ground->height - (feet - ctx->skin + ch->desc.step_height +
                                             kcc_minf(0.25f * ctx->skin, 0.5f * KCC_PENETRATION_TOLERANCE));
        if (over > 0.0f && !(ctx->rise > ch->desc.step_height && over <= slope_rise(ctx, p0, pos, ground->normal)))
            return false;
        pos[up] = ground->height + ctx->skin + ch->desc.half_extents[up];
        return ground->rest_clear || !overlaps_at(ctx, pos); /* the probe may have checked this box */
    }
    if (ground->found && (step_ahead(ctx, p0, pos, reach, false, ground) || off_a_steep_lip(ctx, pos, reach, ground)))
        return true;
    /* Steep ground that the walk went into, no higher than the feet yet (the foot of a steep face
     * on rising ground, which the upper box passed over) is a wall, as higher up: the whole box
     * slides along the foot (test: running_along_a_steep_slopes_foot_slides_at_full_speed). */
    if (ground->found && !ground->walkable && walked_into(ctx->up, p0, pos, ground->normal))
        return false;
    if (dv < 0.0f)
        fall(ctx, pos, dv);
    return land(ctx, pos, ground, ctx->dbg);
}

/* Settles pos onto the ground (p2 / p4). Walking (from p0): settle_walking; in the air: look a
 * little below the feet (land), or, moving up, only check the box. False when the box cannot rest
 * here (it would overlap). */
static bool settle(move_ctx *ctx, const vec3 p0, vec3 pos, float dv, kcc_ground *ground)
{
    ground->found = ground->walkable = false;
    if (ctx->walking)
        return settle_walking(ctx, p0, pos, dv, ground);
    if (dv > 0.0f)
        return !overlaps_at(ctx, pos); /* moving up: not landing this frame */
    return land(ctx, pos, ground, ctx->dbg);
}

/* The move's triangles: everything the box can reach from p0 with displacement disp, a step up and
 * a snap down, from the character's cache or one query of the source. Along any axis the box goes
 * no further than the displacement's horizontal and vertical lengths together: walking, the
 * horizontal part (slid along what it meets, or swept again with the whole box) and then, off the
 * ground, the fall (slid likewise); each of those chains of swept legs nudges the box back to a
 * skin from what it slides along at most four times, and each sweep looks a skin past its end.
 * (The KCC_DEBUG build checks every query against the region; the rarer paths that reach further
 * widen it: gather_around.) */
static void gather_move(move_ctx *ctx, const vec3 p0, const vec3 disp)
{
    const kcc_character *ch = ctx->ch;
    const int up = ctx->up;
    const float snap = kcc_maxf(ch->desc.ground_snap, ch->desc.step_height);
    const float len = glm_vec3_norm((float *)disp);
    const float reach = sideways(up, disp) + fabsf(disp[up]) + 10.0f * ctx->skin + 0.01f;
    vec3 region[2];
    kcc_box_at(ch, p0, region);
    for (int i = 0; i < 3; ++i) {
        region[0][i] -= reach;
        region[1][i] += reach;
    }
    region[1][up] += ctx->rise + ctx->skin;
    region[0][up] -= snap + ctx->skin;
    vec3 grow[2];
    for (int i = 0; i < 3; ++i) {
        grow[0][i] = KCC_CACHE_MARGIN + KCC_CACHE_MOVES * len + KCC_CACHE_LEAD * kcc_maxf(0.0f, -disp[i]);
        grow[1][i] = KCC_CACHE_MARGIN + KCC_CACHE_MOVES * len + KCC_CACHE_LEAD * kcc_maxf(0.0f, disp[i]);
    }
    gather_region(ctx, (const vec3 *)region, (const vec3 *)grow);
}

static void debug_point(kcc_move_debug *dbg, int k, const vec3 p)
{
    if (!dbg)
        return;
    glm_vec3_copy((float *)p, k == 1 ? dbg->p1 : k == 2 ? dbg->p2 : dbg->p4);
    dbg->tried |= 1u << k;
}

/* STUCK: a move that wanted to go sideways (want) and went (got) less than 1% of it. */
static bool stuck(int up, const vec3 want, const vec3 got)
{
    const float wl = sideways(up, want);
    return wl > 1e-5f && sideways(up, got) < 0.01f * wl + 1e-5f;
}

static bool vec3_finite(const vec3 v)
{
    return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]);
}

/* move projected onto the level direction of the crease of the planes with normals a and b (out).
 * False when the crease is (nearly) vertical or the planes parallel. */
static bool along_crease(int up, const vec3 a, const vec3 b, const vec3 move, vec3 out)
{
    vec3 axis;
    glm_vec3_cross((float *)a, (float *)b, axis);
    axis[up] = 0.0f;
    const float al = glm_vec3_norm(axis);
    if (!(al > 1e-4f))
        return false;
    glm_vec3_scale(axis, glm_vec3_dot((float *)move, axis) / (al * al), out);
    return true;
}

/* A walk into steep ground lying lower than the move's rise (a face the upper box passed over and
 * the ground probe then refused; normal n) whose slide with the whole box made no headway goes
 * along the crease of the face and the ground stood on (a V-shaped gully's floor line when that
 * ground is a funnel, the face's foot line on a plane), or as along a wall where they are
 * parallel, swept with the upper box; when that ends against a second steep face, along the crease
 * of the two (test: walking_up_a_gully_of_steep_faces_at_an_angle). True, with pos and ground, when one of them
 * rests. */
KCC_RARE bool along_steep(move_ctx *ctx, const vec3 p0, const vec3 move, const vec3 n, float dv,
                          vec3 pos, kcc_ground *ground)
{
    const int up = ctx->up;
    vec3 nh, v;
    glm_vec3_copy((float *)n, nh);
    nh[up] = 0.0f;
    const float nl = glm_vec3_norm(nh);
    if (!(nl > 1e-4f))
        return false;
    glm_vec3_scale(nh, 1.0f / nl, nh);
    const float into = glm_vec3_dot((float *)move, nh);
    if (!(into < 0.0f))
        return false;
    if (!along_crease(up, n, ctx->ch->ground_normal, move, v)) {
        glm_vec3_copy((float *)move, v);
        glm_vec3_muladds(nh, -into, v);
    }
    for (int k = 0;; ++k) {
        if (stuck(up, move, v)) /* head-on: nothing left to walk */
            return false;
        glm_vec3_copy((float *)p0, pos);
        leg walk = move_leg(ctx);
        advance_and_slide(ctx, &walk, pos, v, true, NULL, NULL);
        if (settle(ctx, p0, pos, dv, ground))
            return true;
        if (k == 1 || !(ground->found && !ground->walkable && !ground->blocked))
            return false;
        if (!along_crease(up, n, ground->normal, move, v))
            return false;
    }
}

/* ---- the scheme's steps, in the order move_once takes them ---- */

/* Where a move ends and on what. */
typedef struct outcome {
    vec3       at;     /* m: the box's final centre */
    kcc_ground ground;
    kcc_branch branch;
} outcome;

static void begin_move(move_ctx *ctx, kcc_character *ch, const kcc_local_source *source,
                       kcc_local *list, kcc_local_store *store, uint32_t flags, kcc_move_debug *debug,
                       kcc_contact_sink *contacts)
{
    memset(ctx, 0, sizeof(*ctx));
    ctx->ch = ch;
    ctx->source = source;
    ctx->list = list;
    ctx->store = store;
    ctx->up = kcc_up_index(ch);
    ctx->skin = ch->desc.skin_width;
    ctx->flags = flags;
    ctx->dbg = debug;
    ctx->contacts = contacts;
    if (debug)
        memset(debug, 0, sizeof(*debug));
}

/* Whether the box at p0 overlaps the level, asked only as far as the clear note leaves open: not
 * at all when the note says the box there was found clear of this very source; only of the
 * entries past a split world source's fixed part when it was found clear of a source with the
 * same fixed part (the static bodies, unchanged: a world's step changes the source's key, not
 * its fixed part's), since every entry of that part in the list was in that check too. Either
 * way overlaps_at's answer (world_step_is_the_same_for_any_workers: a crowd whose sources are not
 * split, so every start is checked in full, ends every step in the same places). */
static bool overlaps_at_start(const move_ctx *ctx, const vec3 p0)
{
    const kcc_character_private *priv = kcc_character_priv(ctx->ch);
    if (priv->clear_owner != ctx->source->owner || memcmp(priv->clear_at, p0, sizeof(vec3)) != 0)
        return overlaps_at(ctx, p0);
    if (priv->clear_key == ctx->source->key)
        return false;
    if (priv->clear_fixed_key == 0 || priv->clear_fixed_key != ctx->list->fixed_key)
        return overlaps_at(ctx, p0);
    if (!ctx->list->overflow && ctx->list->fixed_count == ctx->list->count)
        return false; /* the list holds nothing past the fixed part */
    vec3 box[2];
    kcc_box_for_overlap(ctx->ch, p0, box);
    return kcc_local_overlaps_past_fixed(ctx->list, (const vec3 *)box);
}

/* The start-overlap push of a box overlapping the level at pos: least penetration, at most
 * max_push_out, swept: it leaves the triangles the box overlaps and slides along any other it would
 * run into (the other side of a wedge, a face the box only grazed), so it never pushes the box into
 * more of the level (test: the_push_out_never_pushes_into_more_of_the_level); what it meets is not
 * the move's to report. Regathers around pos for disp.
 * False when the box is still embedded after it (the push was capped): then disp is zeroed and the
 * move is the push alone, since nothing stops a box that already overlaps from going deeper (test:
 * start_inside_geometry_is_pushed_out). */
static bool push_out_of_start(move_ctx *ctx, vec3 pos, vec3 disp)
{
    const kcc_character *ch = ctx->ch;
    vec3 box[2], push;
    kcc_box_at(ch, pos, box);
    uint32_t overlapped[KCC_MAX_OVERLAPPED], n_overlapped = 0;
    if (kcc_local_penetration(ctx->list, (const vec3 *)box, ctx->up, ch->cos_max_slope, push,
                              overlapped, &n_overlapped)) {
        const float len = glm_vec3_norm(push);
        if (len > 0.0f) {
            const float go = kcc_minf(len + ctx->skin, ch->desc.max_push_out);
            vec3 step;
            glm_vec3_scale(push, go / len, step);
            gather_move(ctx, pos, step);
            move_report ignored;
            memset(&ignored, 0, sizeof(ignored));
            leg push_leg = {false, overlapped, n_overlapped, NULL, &ignored, 0.0f, {0.0f, 0.0f, 0.0f}};
            advance_and_slide(ctx, &push_leg, pos, step, false, NULL, NULL);
            ctx->flags |= KCC_MOVE_PUSHED_OUT;
            gather_move(ctx, pos, disp); /* the neighbourhood moved with it */
        }
    }
    if (!overlaps_at(ctx, pos))
        return true;
    glm_vec3_zero(disp);
    return false;
}

/* p2 or p4: the box swept to `at` (met something on the way when `met`, and went along it when
 * `went`), settled. True when it rests there. The branch: P2 / P4 settled on walkable ground, P1 /
 * P3 found none (in the air), P3 / P4 when the box went along what it met; SLID when it went along
 * a wall, a ceiling or steep ground, not for a straight landing or a head-on stop (tests:
 * straight_landing_is_p2_and_no_slide, going_along_a_wall_is_a_slide). */
static bool settle_sweep(move_ctx *ctx, const vec3 p0, float dv, const vec3 at, bool met, bool went,
                         outcome *end)
{
    glm_vec3_copy((float *)at, end->at);
    const bool rests = settle(ctx, p0, end->at, dv, &end->ground);
    debug_point(ctx->dbg, met ? 4 : 2, end->at);
    if (!rests)
        return false;
    const bool ground = end->ground.found && end->ground.walkable;
    end->branch = went ? (ground ? KCC_BRANCH_P4 : KCC_BRANCH_P3) : (ground ? KCC_BRANCH_P2 : KCC_BRANCH_P1);
    if (went && ((ctx->report.flags & (KCC_MOVE_HIT_WALL | KCC_MOVE_HIT_CEILING)) || ctx->report.steep))
        ctx->flags |= KCC_MOVE_SLID;
    return true;
}

/* The scheme's first try: p1, the sweep of move from p0 to its first contact, with the upper box
 * when walking (what lies lower is a step or the slope walked up) or the whole box; then p2,
 * settled there (no contact), or p3, slid along the averaged normal from it, and p4, settled. True
 * when the box rests. */
static bool try_sweep(move_ctx *ctx, const vec3 p0, const vec3 move, float dv, bool upper, vec3 p1,
                      outcome *end)
{
    leg walk = move_leg(ctx);
    vec3 at;
    glm_vec3_copy((float *)p0, at);
    bool went;
    const bool met = advance_and_slide(ctx, &walk, at, move, upper, p1, &went);
    return settle_sweep(ctx, p0, dv, at, met, went, end);
}

/* The second try, when what lies lower than the upper box refused it (a step under a low ceiling,
 * onto steep ground or too high; the foot of a steep slope the upper box passed over): the whole
 * box swept, which stops at the obstacle, slid along it and settled. A whole box that meets nothing
 * ends where the upper box went and is not settled (false). */
static bool try_whole_box(move_ctx *ctx, const vec3 p0, const vec3 move, float dv, vec3 p1,
                          outcome *end)
{
    leg walk = move_leg(ctx);
    vec3 at;
    glm_vec3_copy((float *)p0, at);
    bool went;
    if (!advance_and_slide(ctx, &walk, at, move, false, p1, &went))
        return false;
    return settle_sweep(ctx, p0, dv, at, true, went, end);
}

/* When steep ground refused the upper box (steep_normal) and the whole box's slide made no headway
 * (or did not rest): the walk along the steep face's crease (along_steep), taken when it goes
 * further sideways. Returns whether the box rests. */
KCC_RARE bool try_along_steep(move_ctx *ctx, const vec3 p0, const vec3 move, const vec3 steep_normal,
                              float dv, bool rests, outcome *end)
{
    const int up = ctx->up;
    vec3 alt, went_before, went_along;
    kcc_ground along;
    if (rests)
        glm_vec3_sub(end->at, (float *)p0, went_before);
    if ((rests && !stuck(up, move, went_before)) || !along_steep(ctx, p0, move, steep_normal, dv, alt, &along))
        return rests;
    glm_vec3_sub(alt, (float *)p0, went_along);
    if (rests && !(sideways(up, went_along) > sideways(up, went_before)))
        return rests;
    glm_vec3_copy(alt, end->at);
    end->ground = along;
    end->branch = KCC_BRANCH_P4;
    ctx->flags |= KCC_MOVE_SLID;
    return true;
}

/* Nothing rested: p1 when the box is clear there, else p0; and what is under it, for the result. */
static void fall_back(move_ctx *ctx, const vec3 p0, const vec3 p1, outcome *end)
{
    memset(&end->ground, 0, sizeof(end->ground));
    const bool at_p1 = !overlaps_at(ctx, p1);
    glm_vec3_copy(at_p1 ? (float *)p1 : (float *)p0, end->at);
    end->branch = at_p1 ? KCC_BRANCH_P1 : KCC_BRANCH_P0;
    kcc_ground_probe(ctx->ch, ctx->list, end->at, 0.0f, 2.0f * ctx->skin + 1e-3f, &end->ground, ctx->dbg);
    end->ground.walkable = end->ground.walkable && !end->ground.blocked &&
                           end->ground.height <= end->at[ctx->up] - ctx->ch->desc.half_extents[ctx->up];
}

/* A funnel: falling, the box was stopped (it came down less than half the way) by steep ground
 * and walls that hold it up together. It stands there: on the ground, facing up the way they do
 * together, instead of hanging with the caller's fall speed growing frame after frame (test:
 * a_gully_of_steep_slopes_holds_the_box). */
static void stand_in_funnel(const move_ctx *ctx, const vec3 p0, float dv, outcome *end)
{
    const int up = ctx->up;
    const funnel_sides *sides = &ctx->report.sides;
    kcc_ground *ground = &end->ground;
    vec3 up_between;
    if ((ground->found && ground->walkable) || !(dv < 0.0f) || !(end->at[up] - p0[up] > 0.5f * dv) ||
        !kcc_ground_held(ctx->ch, ctx->list, (const vec3 *)sides->normal, sides->triangle, sides->count,
                         up_between))
        return;
    ground->found = ground->walkable = true;
    ground->blocked = false;
    ground->height = end->at[up] - ctx->ch->desc.half_extents[up] - ctx->skin;
    glm_vec3_copy(up_between, ground->normal);
    ground->triangle = sides->triangle[0];
    ground->rays = 0;
}

/* The ground in the result and the character: on ground (landed, stepped up, snapped down: a rise
 * beyond what the ground planes before and after the move explain is a step), or on steep ground
 * (found under the box, or slid along in the air). */
static void record_ground(move_ctx *ctx, const vec3 p0, bool was_ground, const outcome *end,
                          kcc_move_result *result)
{
    kcc_character *ch = ctx->ch;
    const int up = ctx->up;
    const kcc_ground *ground = &end->ground;
    const float *he = ch->desc.half_extents;
    const float feet_before = p0[up] - he[up], feet_after = end->at[up] - he[up];
    vec3 old_normal;
    glm_vec3_copy(ch->ground_normal, old_normal);
    ch->on_ground = ground->found && ground->walkable;
    if (ch->on_ground) {
        ctx->flags |= KCC_MOVE_ON_GROUND | (was_ground ? 0u : KCC_MOVE_LANDED);
        glm_vec3_copy((float *)ground->normal, ch->ground_normal);
        ch->ground_height = ground->height;
        ch->ground_triangle = ground->triangle;
        glm_vec3_copy((float *)ground->normal, result->ground_normal);
        result->ground_height = ground->height;
        result->ground_triangle = ground->triangle;
        result->ground_rays = ground->rays;
        if (!was_ground)
            return;
        vec3 went;
        glm_vec3_sub((float *)end->at, (float *)p0, went);
        const float explained = kcc_maxf(plane_rise(up, ch->ground_normal, went),
                                         plane_rise(up, old_normal, went));
        const float rise = feet_after - feet_before;
        if (rise > explained + 0.02f) {
            ctx->flags |= KCC_MOVE_STEPPED_UP;
            result->step_up = rise;
        } else if (rise < -0.02f && ctx->walking) {
            ctx->flags |= KCC_MOVE_SNAPPED_DOWN;
        }
    } else if (ground->found && !ground->walkable && !ground->blocked &&
               ground->height >= feet_after - 4.0f * ctx->skin) {
        ctx->flags |= KCC_MOVE_ON_STEEP;
        glm_vec3_copy((float *)ground->normal, result->ground_normal);
        result->ground_height = ground->height;
        result->ground_triangle = ground->triangle;
    } else if (ctx->report.steep) {
        ctx->flags |= KCC_MOVE_ON_STEEP;
        glm_vec3_copy(ctx->report.steep_normal, result->ground_normal);
        result->ground_height = feet_after;
        result->ground_triangle = ctx->report.steep_triangle;
    }
}

/* The rest of the result and the character's state: the position, the clear note (every branch but
 * P0 checked its box; P0 keeps p0, clear when the start check said so), the wall, STUCK, flags. */
static void record_move(move_ctx *ctx, const vec3 p0, const vec3 move, bool start_clear,
                        const outcome *end, kcc_move_result *result)
{
    kcc_character *ch = ctx->ch;
    kcc_character_private *priv = kcc_character_priv(ch);
    result->branch = end->branch;
    glm_vec3_sub((float *)end->at, ch->position, result->moved);
    glm_vec3_copy((float *)end->at, ch->position);
    priv->clear_owner = (end->branch != KCC_BRANCH_P0 || start_clear) ? ctx->source->owner : NULL;
    priv->clear_key = ctx->source->key;
    priv->clear_fixed_key = ctx->list->fixed_key;
    glm_vec3_copy((float *)end->at, priv->clear_at);
    glm_vec3_copy(ctx->report.wall_normal, result->wall_normal);
    vec3 went; /* from p0 after any push-out */
    glm_vec3_sub((float *)end->at, (float *)p0, went);
    if (stuck(ctx->up, move, went))
        ctx->flags |= KCC_MOVE_STUCK;
    result->flags |= ctx->flags | ctx->report.flags;
}

/* One move of the scheme by disp (checked finite and in range; `flags` carries BAD_INPUT), from a
 * character whose position is finite, through the triangles of source (whatever fills it). Returns
 * false when the move was the start-overlap push alone (the box is still embedded). */
static bool move_once(kcc_character *ch, const kcc_local_source *source, const vec3 disp_in,
                      uint32_t flags, kcc_move_result *result, kcc_move_debug *debug,
                      kcc_contact_sink *contacts)
{
    kcc_local list;
    kcc_local_store store; /* ~15 KB of stack, used only when the character's cache cannot serve */
    move_ctx ctx;
    begin_move(&ctx, ch, source, &list, &store, flags, debug, contacts);
    const int up = ctx.up;
    vec3 p0, disp, move, p1;
    glm_vec3_copy(ch->position, p0);
    glm_vec3_copy((float *)disp_in, disp);
    const bool was_ground = ch->on_ground;
    ctx.rise = walk_rise(ch, disp);
    gather_move(&ctx, p0, disp);
    /* Start: a box overlapping the level is pushed out; still embedded, the move is the push alone. */
    const bool pushed = overlaps_at_start(&ctx, p0);
    const bool embedded = pushed && !push_out_of_start(&ctx, p0, disp);
    const float dv = disp[up];
    ctx.walking = was_ground && dv <= 0.0f;
    glm_vec3_copy(disp, move);
    if (ctx.walking)
        move[up] = 0.0f; /* gravity on walkable ground only presses the feet down */

    /* p1, then p2 or p3 + p4: the upper box when walking, then the whole box when what lies lower
     * refused it, then along the crease of the steep ground that refused it. */
    outcome end = {.branch = KCC_BRANCH_P0};
    const bool upper = ctx.walking && ctx.rise > 0.0f;
    bool rests = try_sweep(&ctx, p0, move, dv, upper, p1, &end);
    const bool steep_refused = !rests && upper && end.ground.found && !end.ground.walkable &&
                               !end.ground.blocked;
    vec3 steep_normal;
    glm_vec3_copy(end.ground.normal, steep_normal);
    if (!rests && upper)
        rests = try_whole_box(&ctx, p0, move, dv, p1, &end);
    if (steep_refused)
        rests = try_along_steep(&ctx, p0, move, steep_normal, dv, rests, &end);
    debug_point(ctx.dbg, 1, p1);

    /* Nothing rested: p1, else p0. Stopped by steep sides holding it up: it stands in the funnel. */
    if (!rests)
        fall_back(&ctx, p0, p1, &end);
    stand_in_funnel(&ctx, p0, dv, &end);

    memset(result, 0, sizeof(*result));
    record_ground(&ctx, p0, was_ground, &end, result);
    record_move(&ctx, p0, move, !embedded, &end, result);
    return !embedded;
}

void kcc_character_move(kcc_character *ch, const kcc_mesh *mesh, const vec3 displacement,
                        kcc_move_result *result)
{
    kcc_character_move_debug(ch, mesh, displacement, result, NULL);
}

/* A walking move longer than the box's narrower half width runs as that many equal sub-moves (at
 * most KCC_MAX_SUBSTEPS: kcc_walk_parts), each the whole scheme. A move climbs at most step_height
 * and snaps down at most ground_snap: one that carried the box over several stairs at once would
 * meet their combined rise as a ledge too high going up, and leave the ground going down. */
static uint32_t substeps(const kcc_character *ch, const vec3 disp)
{
    const int up = kcc_up_index(ch), h0 = kcc_side_index(ch, 0), h1 = kcc_side_index(ch, 1);
    if (!ch->on_ground || !(disp[up] <= 0.0f))
        return 1u;
    const float len = sqrtf(disp[h0] * disp[h0] + disp[h1] * disp[h1]);
    return kcc_walk_parts(len, kcc_minf(ch->desc.half_extents[h0], ch->desc.half_extents[h1]));
}

/* The move of a character in its frame (up_axis 1 or 2) by disp (checked; `flags` carries
 * BAD_INPUT) through source: one move_once, or the sub-moves of a long walk. Writes result. */
KCC_HOT void move_in_frame(kcc_character *ch, const kcc_local_source *source, const vec3 disp,
                          uint32_t flags, kcc_move_result *result, kcc_move_debug *debug,
                          kcc_contact_sink *contacts)
{
    const uint32_t n = substeps(ch, disp);
    if (n == 1u) {
        move_once(ch, source, disp, flags, result, debug, contacts);
        return;
    }

    /* Sub-moves: the result is the whole move's. Flags of what happened along the way add up; the
     * ground, the branch and the debug record are the last sub-move's; landing and being stuck are
     * judged over the whole move. */
    const int up = kcc_up_index(ch);
    vec3 p0, part;
    glm_vec3_copy(ch->position, p0);
    glm_vec3_scale((float *)disp, 1.0f / (float)n, part);
    uint32_t seen = 0u;
    float step_up = 0.0f;
    vec3 wall_normal = {0.0f, 0.0f, 0.0f};
    for (uint32_t i = 0; i < n; ++i) {
        const bool was_ground = ch->on_ground;
        const bool free = move_once(ch, source, part, i == 0 ? flags : 0u, result, debug, contacts);
        seen |= result->flags;
        if (result->flags & KCC_MOVE_STEPPED_UP)
            step_up += result->step_up;
        if (result->flags & (KCC_MOVE_HIT_WALL | KCC_MOVE_HIT_CEILING))
            glm_vec3_copy(result->wall_normal, wall_normal);
        /* Not moved and the same footing: every further sub-move would repeat this one exactly. */
        if (!free || (result->moved[0] == 0.0f && result->moved[1] == 0.0f && result->moved[2] == 0.0f &&
                      ch->on_ground == was_ground))
            break;
    }
    const uint32_t last = KCC_MOVE_ON_GROUND | KCC_MOVE_ON_STEEP | KCC_MOVE_LANDED | KCC_MOVE_STUCK;
    result->flags = (seen & ~last) | (result->flags & (KCC_MOVE_ON_GROUND | KCC_MOVE_ON_STEEP));
    result->step_up = step_up;
    glm_vec3_copy(wall_normal, result->wall_normal);
    glm_vec3_sub(ch->position, p0, result->moved);
    if (stuck(up, disp, result->moved))
        result->flags |= KCC_MOVE_STUCK;
}

/* The debug record's points and directions from the frame back to the world. */
static void debug_to_world(const kcc_axis_map *map, kcc_move_debug *debug)
{
    for (int i = 0; i < 4; ++i) {
        kcc_axis_map_out(map, debug->ray_from[i], debug->ray_from[i]);
        kcc_axis_map_out(map, debug->ray_to[i], debug->ray_to[i]);
    }
    kcc_axis_map_out(map, debug->averaged_normal, debug->averaged_normal);
    kcc_axis_map_out(map, debug->slide, debug->slide);
    kcc_axis_map_out(map, debug->p1, debug->p1);
    kcc_axis_map_out(map, debug->p2, debug->p2);
    kcc_axis_map_out(map, debug->p4, debug->p4);
}

/* A character whose up is +X, -X, -Y or -Z moves in its frame (kcc_up_axis_frame): enter_frame maps
 * the character (in place: position, ground normal, half extents, up_axis 1 or 2), the
 * displacement and the level (through `out`, a mapped source, cached under its own key) into it;
 * the move runs there by the same code; leave_frame maps the character, the result and the debug
 * record back, exactly. The stored state is in world terms between moves; ground_height, a
 * coordinate along the up direction, is the same in both. Kept out of line: +Y and +Z never map. */
KCC_RARE void enter_frame(kcc_character *ch, const kcc_local_source *world, vec3 disp,
                          kcc_character_desc *out_desc, kcc_local_source_mapped *out)
{
    kcc_axis_map map;
    const int up_axis = ch->desc.up_axis;
    *out_desc = ch->desc;
    ch->desc.up_axis = kcc_up_axis_frame(up_axis, &map);
    for (int k = 0; k < 3; ++k)
        ch->desc.half_extents[k] = out_desc->half_extents[map.axis[k]];
    kcc_axis_map_in(&map, ch->position, ch->position);
    kcc_axis_map_in(&map, ch->ground_normal, ch->ground_normal);
    kcc_axis_map_in(&map, disp, disp);
    kcc_local_source_map(out, world, &map, 0x9e3779b97f4a7c15ull * (uint64_t)(up_axis + 4));
}

KCC_RARE void leave_frame(kcc_character *ch, const kcc_character_desc *desc, const kcc_axis_map *map,
                          kcc_move_result *result, kcc_move_debug *debug)
{
    ch->desc = *desc;
    kcc_axis_map_out(map, ch->position, ch->position);
    kcc_axis_map_out(map, ch->ground_normal, ch->ground_normal);
    kcc_axis_map_out(map, result->moved, result->moved);
    kcc_axis_map_out(map, result->ground_normal, result->ground_normal);
    kcc_axis_map_out(map, result->wall_normal, result->wall_normal);
    if (debug)
        debug_to_world(map, debug);
}

void kcc_character_move_source(kcc_character *ch, const kcc_local_source *level,
                               const vec3 displacement, kcc_move_result *result,
                               kcc_move_debug *debug, kcc_contact_sink *contacts)
{
#if KCC_AVX2_VARIANT
    if (kcc_isa_avx2()) { /* this very function, compiled for AVX2: same results, faster */
        kcc_avx2_character_move_source(ch, level, displacement, result, debug, contacts);
        return;
    }
#endif
    kcc_move_result move_result;
    memset(&move_result, 0, sizeof(move_result));
    move_result.branch = KCC_BRANCH_P0;
    move_result.flags = KCC_MOVE_BAD_INPUT;
    move_result.carried_rotation[3] = 1.0f; /* carried by nothing: no turn */
    if (!ch || !level || !vec3_finite(ch->position) || !kcc_character_set_up(ch)) {
        /* nothing sensible to do (no character, no level, or one init did not set up) */
        if (debug)
            memset(debug, 0, sizeof(*debug));
        if (result)
            *result = move_result;
        return;
    }
    vec3 disp = {0.0f, 0.0f, 0.0f};
    uint32_t flags = KCC_MOVE_BAD_INPUT;
    if (displacement && vec3_finite(displacement) && fabsf(displacement[0]) <= KCC_MAX_DISPLACEMENT &&
        fabsf(displacement[1]) <= KCC_MAX_DISPLACEMENT && fabsf(displacement[2]) <= KCC_MAX_DISPLACEMENT) {
        glm_vec3_copy((float *)displacement, disp);
        flags = 0u;
    }
    const kcc_local_source *source = level;
    const bool turned = (unsigned)ch->desc.up_axis - 1u > 1u; /* not +Y (1) or +Z (2) */
    kcc_character_desc desc; /* the world's, while the move runs in the frame */
    kcc_local_source_mapped mapped;
    if (turned) {
        enter_frame(ch, level, disp, &desc, &mapped);
        source = &mapped.base;
    }
    move_in_frame(ch, source, disp, flags, &move_result, debug, contacts);
    move_result.carried_rotation[3] = 1.0f; /* carried by nothing: no turn (a world step's riding
                                               sets it) */
    if (turned) {
        leave_frame(ch, &desc, &mapped.map, &move_result, debug);
        for (uint32_t i = 0; contacts && i < contacts->count; ++i)
            kcc_axis_map_out(&mapped.map, contacts->normal[i], contacts->normal[i]);
    }
    if (result)
        *result = move_result;
}

void kcc_character_move_debug(kcc_character *ch, const kcc_mesh *mesh, const vec3 displacement,
                              kcc_move_result *result, kcc_move_debug *debug)
{
    kcc_local_source level;
    if (mesh)
        kcc_local_source_mesh(&level, mesh);
    kcc_character_move_source(ch, mesh ? &level : NULL, displacement, result, debug, NULL);
}
