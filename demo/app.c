/* demo/app.c: kcc-demo without a window: opening levels (generated, OBJ, BSP), the movement rules,
 * key latching and the chase camera of the viewer, the command line, wandering characters,
 * penetration measurement, and the headless run that prints a summary and renders the level with the
 * characters' paths. Allocates per run; no global state. */
#define _XOPEN_SOURCE 700   /* realpath, mkdir */
#include "app.h"
#include "q3bsp.h"
#include "world_view.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include <limits.h>
#include <sys/stat.h>

/* ------------------------------------------------------------------ levels */

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    if (n < m)
        return false;
    for (size_t i = 0; i < m; ++i) {
        char c = s[n - m + i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c != suffix[i])
            return false;
    }
    return true;
}

kcc_status demo_level_open(const char *arg, demo_level *out, char *err, size_t err_size)
{
    if (!arg || !out)
        return KCC_ERR_NULL_ARGUMENT;
    demo_level lv;
    memset(&lv, 0, sizeof(lv));
    kcc_status s;
    const char *base = strrchr(arg, '/');
    base = base ? base + 1 : arg;
    if (ends_with(arg, ".bsp")) {
        s = q3bsp_load(arg, NULL, &lv.level, NULL, err, err_size);
        lv.from_bsp = true;
        snprintf(lv.name, sizeof(lv.name), "%.*s", (int)(strlen(base) - 4), base);
    } else if (ends_with(arg, ".obj")) {
        s = kcc_level_load_obj(arg, &lv.level, err, err_size);
        snprintf(lv.name, sizeof(lv.name), "%.*s", (int)(strlen(base) - 4), base);
        /* A trace resolves a relative level path against its own directory: name the file absolutely. */
        char absolute[PATH_MAX];
        if (s == KCC_OK && realpath(arg, absolute) && strlen(absolute) + 5 < sizeof(lv.trace_level))
            snprintf(lv.trace_level, sizeof(lv.trace_level), "obj %s", absolute);
    } else {
        s = kcc_level_generate(arg, &lv.level, err, err_size);
        lv.generated = true;
        snprintf(lv.name, sizeof(lv.name), "%s", arg);
        if (strlen(arg) + 5 < sizeof(lv.trace_level))
            snprintf(lv.trace_level, sizeof(lv.trace_level), "gen %s", arg);
    }
    if (s != KCC_OK)
        return s;
    s = kcc_level_build_mesh(&lv.level, &lv.mesh);
    if (s != KCC_OK) {
        snprintf(err, err_size, "%s: building the mesh: %s", arg, kcc_status_str(s));
        kcc_level_free(&lv.level);
        return s;
    }
    vec3 b[2];
    kcc_mesh_bounds(lv.mesh, b);
    for (int i = 0; i < 3; ++i) {
        lv.bounds[0][i] = b[0][i];
        lv.bounds[1][i] = b[1][i];
    }
    *out = lv;
    return KCC_OK;
}

void demo_level_close(demo_level *lv)
{
    if (!lv)
        return;
    kcc_mesh_destroy(lv->mesh);
    kcc_level_free(&lv->level);
    memset(lv, 0, sizeof(*lv));
}

kcc_status demo_level_export(const demo_level *lv, const char *obj_path, char *err, size_t err_size)
{
    kcc_status s = q3bsp_write_obj(&lv->level, obj_path, lv->name, err, err_size);
    if (s != KCC_OK || lv->level.spawn_count == 0)
        return s;
    char sp[1024];
    size_t n = strlen(obj_path);
    if (n < 4 || n + 8 > sizeof(sp))
        return KCC_OK;
    snprintf(sp, sizeof(sp), "%.*s.spawns", (int)(n - 4), obj_path);
    return q3bsp_write_spawns(&lv->level, sp, err, err_size);
}

/* ------------------------------------------------------------------ movement */

kcc_status demo_mover_init(demo_mover *m, const kcc_character_desc *desc, const float feet[3])
{
    kcc_character_desc d = desc ? *desc : kcc_character_default_desc();
    memset(m, 0, sizeof(*m));
    vec3 c = {feet[0], feet[1] + d.half_extents[1] + d.skin_width, feet[2]};
    return kcc_character_init(&m->ch, &d, c);
}

void demo_mover_step(demo_mover *m, const kcc_mesh *mesh, const demo_input *in)
{
    const float speed = in->run ? DEMO_RUN_SPEED : DEMO_WALK_SPEED;
    const float fx = -sinf(in->yaw), fz = -cosf(in->yaw);
    const float rx = cosf(in->yaw), rz = -sinf(in->yaw);
    float wx = in->forward * fx + in->right * rx, wz = in->forward * fz + in->right * rz;
    float l = sqrtf(wx * wx + wz * wz);
    if (l > 1.0f) {
        wx /= l;
        wz /= l;
    }
    if (in->jump && m->ch.on_ground)
        m->vy = DEMO_JUMP_SPEED;
    m->vy = fmaxf(m->vy - DEMO_GRAVITY * DEMO_DT, -60.0f);
    m->last_disp[0] = wx * speed * DEMO_DT;
    m->last_disp[1] = m->vy * DEMO_DT;
    m->last_disp[2] = wz * speed * DEMO_DT;
    kcc_character_move_debug(&m->ch, mesh, m->last_disp, &m->last, &m->dbg);
    /* Landing and ceilings stop the vertical speed (never a jump that has just started). */
    if ((m->last.flags & KCC_MOVE_ON_GROUND) && m->vy <= 0.0f)
        m->vy = 0.0f;
    if ((m->last.flags & KCC_MOVE_HIT_CEILING) && m->vy > 0.0f)
        m->vy = 0.0f;
}

static uint32_t rng_next(uint32_t *s)
{
    uint32_t x = *s ? *s : 0x9e3779b9u;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *s = x;
    return x;
}

static float rng_unit(uint32_t *s)
{
    return (float)(rng_next(s) >> 8) / 16777216.0f;
}

static void box_at_feet(const kcc_character_desc *d, const float feet[3], float lift, float box[2][3])
{
    for (int i = 0; i < 3; ++i) {
        float c = i == 1 ? feet[1] + d->half_extents[1] + lift : feet[i];
        box[0][i] = c - d->half_extents[i];
        box[1][i] = c + d->half_extents[i];
    }
}

uint32_t demo_find_starts(const demo_level *lv, const kcc_character_desc *desc, uint32_t count,
                          uint32_t seed, bool use_spawns, float *feet_out)
{
    kcc_character_desc d = desc ? *desc : kcc_character_default_desc();
    uint32_t n = 0, rng = seed * 2654435761u + 1u;
    if (use_spawns && lv->level.spawn_count > 0) {
        /* Only the spawns: random places in an imported arena land on its roof, outside the map. */
        for (uint32_t i = 0; i < lv->level.spawn_count && n < count; ++i)
            memcpy(feet_out + 3 * n++, lv->level.spawns + 3 * i, 3 * sizeof(float));
        return n;
    }
    const float *b0 = lv->bounds[0], *b1 = lv->bounds[1];
    for (uint32_t attempt = 0; n < count && attempt < count * 400u; ++attempt) {
        float x = b0[0] + d.half_extents[0] + rng_unit(&rng) * (b1[0] - b0[0] - 2 * d.half_extents[0]);
        float z = b0[2] + d.half_extents[2] + rng_unit(&rng) * (b1[2] - b0[2] - 2 * d.half_extents[2]);
        vec3 o = {x, b1[1] + 1.0f, z}, dir = {0.0f, -1.0f, 0.0f};
        kcc_ray_hit hit;
        /* Walkable, and not the top of the level (the rim of an enclosing wall, a roof). */
        if (!kcc_mesh_raycast(lv->mesh, o, dir, b1[1] - b0[1] + 2.0f, &hit) || fabsf(hit.normal[1]) < 0.7f ||
            hit.point[1] > b1[1] - 1.0f)
            continue;
        float feet[3] = {x, hit.point[1] + 0.01f, z}, box[2][3];
        box_at_feet(&d, feet, 0.0f, box);
        if (kcc_mesh_overlap_aabb(lv->mesh, (const vec3 *)box, NULL, 0) != 0)
            continue;
        /* Keep starts apart so the wanderers spread over the level. */
        bool close = false;
        for (uint32_t k = 0; k < n && !close; ++k) {
            float dx = feet_out[3 * k] - x, dz = feet_out[3 * k + 2] - z;
            close = dx * dx + dz * dz < 4.0f && fabsf(feet_out[3 * k + 1] - feet[1]) < 2.0f;
        }
        if (close && attempt < count * 200u)
            continue;
        memcpy(feet_out + 3 * n++, feet, sizeof(feet));
    }
    return n;
}

float demo_penetration(const kcc_mesh *mesh, const float box[2][3])
{
    if (kcc_mesh_overlap_aabb(mesh, (const vec3 *)box, NULL, 0) == 0)
        return 0.0f;
    float lo = 0.0f, hi = fminf(fminf(box[1][0] - box[0][0], box[1][1] - box[0][1]), box[1][2] - box[0][2]) * 0.5f;
    while (hi - lo > 1e-6f) {
        float mid = 0.5f * (lo + hi), b[2][3];
        for (int i = 0; i < 3; ++i) {
            b[0][i] = box[0][i] + mid;
            b[1][i] = box[1][i] - mid;
        }
        if (kcc_mesh_overlap_aabb(mesh, (const vec3 *)b, NULL, 0) == 0)
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

/* ------------------------------------------------------------------ headless */

demo_headless_opts demo_headless_default_opts(void)
{
    demo_headless_opts o;
    memset(&o, 0, sizeof(o));
    o.characters = DEMO_DEFAULT_CHARACTERS;
    o.frames = DEMO_DEFAULT_FRAMES;
    o.seed = 1;
    o.width = 960;
    o.height = 600;
    o.yaw = 30.0f;
    o.pitch = 50.0f;
    o.cut = NAN;
    return o;
}

/* A polyline of feet positions; a NaN point breaks it (respawns, trace restarts). */
typedef struct path {
    float   *p;
    uint32_t n, cap;
} path;

static bool path_add(path *pa, const float q[3])
{
    if (pa->n == pa->cap) {
        uint32_t nc = pa->cap ? pa->cap * 2 : 256;
        float *np = realloc(pa->p, (size_t)nc * 3 * sizeof(float));
        if (!np)
            return false;
        pa->p = np;
        pa->cap = nc;
    }
    memcpy(pa->p + 3 * (size_t)pa->n++, q, 3 * sizeof(float));
    return true;
}

static const uint8_t palette[12][3] = {
    {255, 183, 3}, {230, 57, 70}, {33, 158, 188}, {251, 133, 0}, {142, 68, 173}, {46, 204, 113},
    {255, 0, 110}, {58, 134, 255}, {255, 255, 255}, {0, 245, 212}, {241, 91, 181}, {155, 93, 229},
};

static double now_s(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void feet_of(const kcc_character *ch, float out[3])
{
    out[0] = ch->position[0];
    out[1] = ch->position[1] - ch->desc.half_extents[1];
    out[2] = ch->position[2];
}

typedef struct render_in {
    const demo_level *lv;
    const path       *paths;
    uint32_t          path_count;
    float             frame_margin;   /* m around the paths to frame; 0: frame the whole level */
    const kcc_character_desc *desc;
    const char       *title, *subtitle;
    const demo_world_view *world;     /* a world trace's bodies, drawn at its last step; NULL: none */
    uint32_t          level_body;     /* the world body that is lv (not drawn again) */
} render_in;

/* A world trace's bodies at its last step: solid ones as meshes, sensors as their boxes. */
static void draw_world_bodies(raster_image *img, const raster_view *v, const render_in *r)
{
    static const uint8_t sensor[3] = {120, 220, 255};
    const demo_world_view *w = r->world;
    for (uint32_t b = 0; b < w->body_count; ++b) {
        const kcc_level *lv = &w->levels[w->bodies[b].level];
        float *placed = b == r->level_body ? NULL : malloc(sizeof(float) * 3 * ((size_t)lv->vertex_count + 1));
        float box[2][3];
        if (placed && demo_world_view_place_body(w, w->steps, b, placed, box)) {
            if (w->bodies[b].sensor)
                raster_draw_box(img, v, (const float(*)[3])box, sensor, 1);
            else
                raster_draw_mesh(img, v, placed, lv->indices, lv->triangle_count);
        }
        free(placed);
    }
}

/* The highest feet position of the paths (m); -INFINITY without any. */
static float paths_top(const render_in *r)
{
    float top = -INFINITY;
    for (uint32_t i = 0; i < r->path_count; ++i)
        for (uint32_t k = 0; k < r->paths[i].n; ++k)
            if (r->paths[i].p[3 * k + 1] > top)
                top = r->paths[i].p[3 * k + 1];
    return top;
}

/* The height (m) above which the picture leaves the level out: --cut above the highest path point;
 * imported arenas are closed boxes, so their roof goes 3.5 m above the paths; INFINITY: no cut. */
static float picture_cut(const render_in *r, const demo_headless_opts *o, float top)
{
    if (!isnan(o->cut))
        return isfinite(top) ? top + o->cut : r->lv->bounds[1][1];
    if (!r->lv->generated && isfinite(top))
        return top + 3.5f;
    return INFINITY;
}

/* Shrinks bounds to the paths plus r->frame_margin (1.5 m in height: more tilts the view), staying
 * within the level on each axis the paths cover. */
static void frame_paths(const render_in *r, float bounds[2][3])
{
    float pb[2][3] = {{INFINITY, INFINITY, INFINITY}, {-INFINITY, -INFINITY, -INFINITY}};
    for (uint32_t i = 0; i < r->path_count; ++i)
        for (uint32_t k = 0; k < r->paths[i].n; ++k)
            for (int c = 0; c < 3; ++c) {
                float q = r->paths[i].p[3 * k + (uint32_t)c];
                if (isnan(q))
                    continue;
                float margin = c == 1 ? 1.5f : r->frame_margin;
                pb[0][c] = fminf(pb[0][c], q - margin);
                pb[1][c] = fmaxf(pb[1][c], q + margin);
            }
    for (int c = 0; c < 3; ++c)
        if (pb[0][c] <= pb[1][c]) {
            bounds[0][c] = fmaxf(bounds[0][c], pb[0][c]);
            bounds[1][c] = fminf(bounds[1][c], pb[1][c]);
        }
}

/* Each path as a polyline in its palette colour, a little above the floor; NaN points break it. */
static void draw_paths(raster_image *img, const raster_view *v, const render_in *r)
{
    const float lift = 0.06f;   /* m: paths float a little above the floor */
    for (uint32_t i = 0; i < r->path_count; ++i) {
        const path *pa = &r->paths[i];
        const uint8_t *c = palette[i % 12];
        for (uint32_t k = 1; k < pa->n; ++k) {
            const float *a = pa->p + 3 * (size_t)(k - 1), *b = pa->p + 3 * (size_t)k;
            if (isnan(a[0]) || isnan(b[0]))
                continue;
            float qa[3] = {a[0], a[1] + lift, a[2]}, qb[3] = {b[0], b[1] + lift, b[2]};
            raster_draw_line(img, v, qa, qb, c, 2);
        }
    }
}

/* The character's box at each path's first point (green) and last point (red), NaN points skipped. */
static void draw_path_ends(raster_image *img, const raster_view *v, const render_in *r)
{
    static const uint8_t green[3] = {60, 230, 90}, red[3] = {240, 50, 50};
    for (uint32_t i = 0; i < r->path_count; ++i) {
        const path *pa = &r->paths[i];
        uint32_t first = 0, last = pa->n;
        while (first < pa->n && isnan(pa->p[3 * first]))
            ++first;
        while (last > first && isnan(pa->p[3 * (last - 1)]))
            --last;
        if (first >= last)
            continue;
        float box[2][3];
        box_at_feet(r->desc, pa->p + 3 * first, 0.0f, box);
        raster_draw_box(img, v, (const float(*)[3])box, green, 2);
        box_at_feet(r->desc, pa->p + 3 * (last - 1), 0.0f, box);
        raster_draw_box(img, v, (const float(*)[3])box, red, 2);
    }
}

/* Writes img to o->png and frees it; DEMO_EXIT_ERROR, saying why, when the file cannot be written. */
static int write_picture(raster_image *img, const demo_headless_opts *o)
{
    kcc_status s = raster_write_png(img, o->png);
    raster_image_free(img);
    if (s != KCC_OK) {
        fprintf(stderr, "kcc-demo: %s: cannot write the picture (%s)\n", o->png, kcc_status_str(s));
        return DEMO_EXIT_ERROR;
    }
    if (!o->quiet)
        printf("  wrote %s (%ux%u)\n", o->png, o->width, o->height);
    return DEMO_EXIT_OK;
}

static int render_png(const render_in *r, const demo_headless_opts *o)
{
    float bounds[2][3];
    memcpy(bounds, r->lv->bounds, sizeof(bounds));
    float cut = picture_cut(r, o, paths_top(r));
    if (cut < bounds[1][1])
        bounds[1][1] = cut;
    if (r->frame_margin > 0.0f)
        frame_paths(r, bounds);
    raster_image img;
    const uint8_t bg[3] = {28, 31, 38};
    if (raster_image_init(&img, o->width, o->height, bg) != KCC_OK) {
        fprintf(stderr, "kcc-demo: bad picture size %ux%u\n", o->width, o->height);
        return DEMO_EXIT_ERROR;
    }
    raster_view v;
    raster_view_frame(&v, (const float(*)[3])bounds, o->yaw, o->pitch, o->width, o->height, 14.0f);
    v.cut_y = cut;
    raster_view_shade_range(&v, r->lv->level.positions, r->lv->level.indices, r->lv->level.triangle_count);
    raster_draw_mesh(&img, &v, r->lv->level.positions, r->lv->level.indices, r->lv->level.triangle_count);
    if (r->world)
        draw_world_bodies(&img, &v, r);
    raster_outline(&img, 0.25f);
    draw_paths(&img, &v, r);
    draw_path_ends(&img, &v, r);
    static const uint8_t white[3] = {240, 240, 240}, grey[3] = {190, 195, 205};
    if (r->title)
        raster_draw_text(&img, 10, 8, r->title, white, 2);
    if (r->subtitle)
        raster_draw_text(&img, 10, 34, r->subtitle, grey, 1);
    return write_picture(&img, o);
}

typedef struct wanderer {
    demo_mover m;
    float heading;       /* rad */
    float turn_timer;    /* s until the next random turn */
    bool  run;
    float start[3];      /* feet, m */
    float window_pos[3]; /* m, where the current progress window began */
} wanderer;

#define WANDER_WINDOW 120u   /* frames: 2 s progress windows */

/* What the wanderers' moves flagged, counted over the run. */
typedef struct wander_stats {
    uint64_t moves, ground, stuck_frames, stepped, slid, steep, pushed, cap, landed, jumps, over_tol;
    uint64_t branch[5];
    uint32_t respawns, stuck_windows;
    float    max_pen;   /* m, the deepest the box went into the level */
} wander_stats;

/* The headless wanderers: the characters, their paths, the random stream and the counts. */
typedef struct wander_run {
    const demo_level  *lv;
    kcc_character_desc desc;
    uint32_t           n;        /* characters */
    float             *starts;   /* 3 per character, feet, m */
    wanderer          *w;
    path              *paths;
    uint32_t           rng;
    wander_stats       st;
} wander_run;

static void wander_run_free(wander_run *run)
{
    for (uint32_t i = 0; run->paths && i < run->n; ++i)
        free(run->paths[i].p);
    free(run->paths);
    free(run->w);
    free(run->starts);
}

/* Allocates the wanderers and places them at the spawn points (the showcase has one in front of each
 * feature), then at random places; DEMO_EXIT_ERROR, saying why, when that fails. */
static int wander_run_init(wander_run *run, const demo_level *lv, const demo_headless_opts *o)
{
    memset(run, 0, sizeof(*run));
    run->lv = lv;
    run->desc = kcc_character_default_desc();
    run->n = o->characters ? o->characters : 1;
    run->starts = malloc(sizeof(float) * 3 * run->n);
    run->w = calloc(run->n, sizeof(wanderer));
    run->paths = calloc(run->n, sizeof(path));
    if (!run->starts || !run->w || !run->paths) {
        wander_run_free(run);
        fprintf(stderr, "kcc-demo: out of memory\n");
        return DEMO_EXIT_ERROR;
    }
    bool use_spawns = lv->level.spawn_count > 0;
    uint32_t found = demo_find_starts(lv, &run->desc, run->n, o->seed, use_spawns, run->starts);
    if (found == 0) {
        fprintf(stderr, "kcc-demo: %s: no place to stand found\n", lv->name);
        wander_run_free(run);
        return DEMO_EXIT_ERROR;
    }
    run->rng = o->seed * 747796405u + 2891336453u;
    for (uint32_t i = 0; i < run->n; ++i) {
        wanderer *walker = &run->w[i];
        const float *feet = run->starts + 3 * (i % found);
        demo_mover_init(&walker->m, &run->desc, feet);
        memcpy(walker->start, feet, sizeof(walker->start));
        walker->heading = rng_unit(&run->rng) * 6.2831853f;
        walker->turn_timer = 1.0f + 3.0f * rng_unit(&run->rng);
        walker->run = rng_unit(&run->rng) < 0.4f;
        memcpy(walker->window_pos, feet, sizeof(walker->window_pos));
    }
    return DEMO_EXIT_OK;
}

/* This frame's input: forward along the heading, a random turn every 1 to 4 s, a jump now and then. */
static demo_input wander_input(wanderer *walker, uint32_t *rng)
{
    demo_input in;
    memset(&in, 0, sizeof(in));
    walker->turn_timer -= DEMO_DT;
    if (walker->turn_timer <= 0.0f) {
        walker->heading += (rng_unit(rng) - 0.5f) * 2.5f;
        walker->turn_timer = 1.0f + 3.0f * rng_unit(rng);
        walker->run = rng_unit(rng) < 0.4f;
    }
    in.yaw = walker->heading;
    in.forward = 1.0f;
    in.run = walker->run;
    in.jump = walker->m.ch.on_ground && rng_unit(rng) < 1.0f / 240.0f;
    return in;
}

static void wander_count_flags(wander_stats *st, const kcc_move_result *result)
{
    st->moves++;
    st->ground += (result->flags & KCC_MOVE_ON_GROUND) != 0;
    st->stuck_frames += (result->flags & KCC_MOVE_STUCK) != 0;
    st->stepped += (result->flags & KCC_MOVE_STEPPED_UP) != 0;
    st->slid += (result->flags & KCC_MOVE_SLID) != 0;
    st->steep += (result->flags & KCC_MOVE_ON_STEEP) != 0;
    st->pushed += (result->flags & KCC_MOVE_PUSHED_OUT) != 0;
    st->cap += (result->flags & KCC_MOVE_CONTACT_CAP) != 0;
    st->landed += (result->flags & KCC_MOVE_LANDED) != 0;
    if ((unsigned)result->branch < 5)
        st->branch[result->branch]++;
}

/* Measures how deep the box is in the level and counts the move when it breaks the contract: the box
 * shrunk by the tolerance on every side overlaps nothing. */
static void wander_check_penetration(wander_stats *st, const kcc_mesh *mesh, const kcc_character *ch)
{
    vec3 box[2];
    kcc_character_box(ch, box);
    float pen = demo_penetration(mesh, (const float(*)[3])box);
    st->max_pen = fmaxf(st->max_pen, pen);
    if (pen > 0.0f) {
        float shrunk[2][3];
        for (int k = 0; k < 3; ++k) {
            shrunk[0][k] = box[0][k] + KCC_PENETRATION_TOLERANCE;
            shrunk[1][k] = box[1][k] - KCC_PENETRATION_TOLERANCE;
        }
        st->over_tol += kcc_mesh_overlap_aabb(mesh, (const vec3 *)shrunk, NULL, 0) != 0;
    }
}

/* After the move of frame f: closes a progress window, restarts a character that fell out of the
 * level (its path broken by a NaN point), and extends its path every third frame and on the last. */
static void wander_track(wander_run *run, uint32_t i, uint32_t f, uint32_t frames)
{
    wanderer *walker = &run->w[i];
    float feet[3];
    feet_of(&walker->m.ch, feet);
    if ((f % WANDER_WINDOW) == WANDER_WINDOW - 1) {
        float dx = feet[0] - walker->window_pos[0], dz = feet[2] - walker->window_pos[2];
        run->st.stuck_windows += dx * dx + dz * dz < 0.05f * 0.05f;
        memcpy(walker->window_pos, feet, sizeof(feet));
    }
    if (feet[1] < run->lv->bounds[0][1] - 10.0f || !isfinite(feet[1])) {
        run->st.respawns++;
        float gap[3] = {NAN, NAN, NAN};
        path_add(&run->paths[i], feet);
        path_add(&run->paths[i], gap);
        demo_mover_init(&walker->m, &run->desc, walker->start);
        feet_of(&walker->m.ch, feet);
        memcpy(walker->window_pos, feet, sizeof(feet));
    }
    if (f % 3 == 0 || f + 1 == frames)
        path_add(&run->paths[i], feet);
}

/* One frame of wanderer i: its move, the counts, a turn away when blocked (more than 90 degrees when
 * stuck), the penetration check and its path. */
static void wander_step(wander_run *run, uint32_t i, uint32_t f, uint32_t frames)
{
    wanderer *walker = &run->w[i];
    demo_input in = wander_input(walker, &run->rng);
    run->st.jumps += in.jump;
    demo_mover_step(&walker->m, run->lv->mesh, &in);
    const kcc_move_result *result = &walker->m.last;
    wander_count_flags(&run->st, result);
    if (result->flags & KCC_MOVE_STUCK)
        walker->heading += 1.6f + 3.0f * rng_unit(&run->rng);
    else if (result->flags & KCC_MOVE_HIT_WALL)
        walker->heading += (rng_unit(&run->rng) < 0.5f ? -1.0f : 1.0f) * (0.6f + 1.2f * rng_unit(&run->rng));
    wander_check_penetration(&run->st, run->lv->mesh, &walker->m.ch);
    wander_track(run, i, f, frames);
}

static void wander_print(const wander_run *run, const demo_headless_opts *o, double dt)
{
    const wander_stats *st = &run->st;
    const uint32_t n = run->n;
    printf("kcc-demo headless: level %s (%u triangles), %u characters x %u frames (%.1f s at 60 Hz)\n",
           run->lv->name, run->lv->level.triangle_count, n, o->frames, (double)o->frames / 60.0);
    printf("  moves %llu: on ground %.1f%%, landed %llu, jumps %llu, stepped up %llu, slid %llu, "
           "on steep %llu, pushed out %llu, contact cap %llu\n",
           (unsigned long long)st->moves, 100.0 * (double)st->ground / (double)(st->moves ? st->moves : 1),
           (unsigned long long)st->landed, (unsigned long long)st->jumps, (unsigned long long)st->stepped,
           (unsigned long long)st->slid, (unsigned long long)st->steep, (unsigned long long)st->pushed,
           (unsigned long long)st->cap);
    printf("  stuck: %llu frames flagged STUCK, %u of %u two-second windows without 5 cm of progress, "
           "%u fell out\n",
           (unsigned long long)st->stuck_frames, st->stuck_windows, n * (o->frames / WANDER_WINDOW),
           st->respawns);
    printf("  branches: P0 %llu  P1 %llu  P2 %llu  P3 %llu  P4 %llu\n", (unsigned long long)st->branch[0],
           (unsigned long long)st->branch[1], (unsigned long long)st->branch[2],
           (unsigned long long)st->branch[3], (unsigned long long)st->branch[4]);
    printf("  max penetration %.6f m (tolerance %.4f m), %llu moves over it\n", (double)st->max_pen,
           (double)KCC_PENETRATION_TOLERANCE, (unsigned long long)st->over_tol);
    printf("  %.3f ms per frame of %u characters (%.2f us per move, with the penetration check)\n",
           1e3 * dt / (double)(o->frames ? o->frames : 1), n,
           1e6 * dt / (double)(st->moves ? st->moves : 1));
}

/* The wanderers' paths over the level, titled; imported arenas carry sky and outer brushes far
 * beyond the playable space, so their picture frames the paths. */
static int wander_picture(const wander_run *run, const demo_headless_opts *o)
{
    char title[256], sub[256];
    snprintf(title, sizeof(title), "kcc: %.200s", run->lv->name);
    snprintf(sub, sizeof(sub), "%u characters wandering for %.0f s (60 Hz); green: start, red: end", run->n,
             (double)o->frames / 60.0);
    render_in ri = {run->lv, run->paths, run->n, run->lv->generated ? 0.0f : 4.0f, &run->desc, title, sub,
                    NULL, 0};
    return render_png(&ri, o);
}

static int run_wanderers(const demo_level *lv, const demo_headless_opts *o)
{
    wander_run run;
    if (wander_run_init(&run, lv, o) != DEMO_EXIT_OK)
        return DEMO_EXIT_ERROR;
    double t0 = now_s();
    for (uint32_t f = 0; f < o->frames; ++f)
        for (uint32_t i = 0; i < run.n; ++i)
            wander_step(&run, i, f, o->frames);
    double dt = now_s() - t0;
    int rc = 0;
    if (!o->quiet)
        wander_print(&run, o, dt);
    if (run.st.over_tol > 0) {
        fprintf(stderr, "kcc-demo: %llu moves left the box deeper in the level than the tolerance\n",
                (unsigned long long)run.st.over_tol);
        rc = DEMO_EXIT_PROBLEM;
    }
    if (o->png) {
        int png_rc = wander_picture(&run, o);
        rc = png_rc > rc ? png_rc : rc;
    }
    wander_run_free(&run);
    return rc;
}

static int run_trace(const demo_level *lv, const kcc_trace *tr, const demo_headless_opts *o)
{
    char err[512];
    kcc_mesh *mesh = NULL;
    kcc_status s = kcc_trace_build_level(tr, &mesh, err, sizeof(err));
    if (s != KCC_OK) {
        fprintf(stderr, "kcc-demo: %s\n", err);
        return DEMO_EXIT_ERROR;
    }
    kcc_trace_outcome *out = calloc(tr->step_count ? tr->step_count : 1, sizeof(kcc_trace_outcome));
    path pa = {NULL, 0, 0};
    if (!out) {
        kcc_mesh_destroy(mesh);
        fprintf(stderr, "kcc-demo: out of memory\n");
        return DEMO_EXIT_ERROR;
    }
    kcc_trace_report rep;
    s = kcc_trace_replay(tr, mesh, 0.0f, out, &rep);
    if (s != KCC_OK) {
        fprintf(stderr, "kcc-demo: %s: replay failed: %s\n", tr->name, kcc_status_str(s));
        free(out);
        kcc_mesh_destroy(mesh);
        return DEMO_EXIT_ERROR;
    }
    const float hy = tr->desc.half_extents[1];
    float first[3] = {tr->start[0], tr->start[1] - hy, tr->start[2]};
    path_add(&pa, first);
    for (uint32_t i = 0; i < tr->step_count; ++i) {
        float q[3] = {out[i].position[0], out[i].position[1] - hy, out[i].position[2]};
        if (tr->steps[i].kind == KCC_TRACE_START) {
            float gap[3] = {NAN, NAN, NAN};
            path_add(&pa, gap);
        }
        if (tr->steps[i].kind != KCC_TRACE_SET)
            path_add(&pa, q);
    }
    if (!o->quiet) {
        printf("kcc-demo headless: trace %s on %s: %u frames, %u steps\n", tr->name, lv->name, rep.frames,
               rep.steps);
        if (!rep.diverged)
            printf("  replays exactly (every position bit for bit, every flag)\n");
    }
    /* A divergence is the run's finding: on stderr even with --quiet, and exit status 1 (kcc-replay's). */
    int rc = DEMO_EXIT_OK;
    if (rep.diverged) {
        char line[512];
        kcc_trace_format_divergence(tr, &rep, line, sizeof(line));
        fprintf(stderr, "kcc-demo: %u steps diverge from the recorded outcome; first: %s\n", rep.diverged, line);
        rc = DEMO_EXIT_PROBLEM;
    }
    if (o->png) {
        char title[256], sub[256];
        const char *base = strrchr(tr->name, '/');
        snprintf(title, sizeof(title), "kcc: %.200s", base ? base + 1 : tr->name);
        snprintf(sub, sizeof(sub), "level %.150s, %u frames (%.1f s); green: start, red: end", lv->name, rep.frames,
                 (double)rep.frames / 60.0);
        render_in ri = {lv, &pa, 1, 6.0f, &tr->desc, title, sub, NULL, 0};
        int png_rc = render_png(&ri, o);
        rc = png_rc > rc ? png_rc : rc;
    }
    free(pa.p);
    free(out);
    kcc_mesh_destroy(mesh);
    return rc;
}

/* Every character's feet after every step, a path each (NaN where it is not in the world). */
static path *world_paths(const demo_world_view *w)
{
    path *paths = calloc(w->character_count + 1, sizeof(path));
    for (uint32_t c = 0; paths && c < w->character_count; ++c)
        for (uint32_t s = 0; s <= w->steps; ++s) {
            const float *centre = demo_world_view_centre(w, s, c);
            float q[3] = {NAN, NAN, NAN};
            if (centre) {
                q[0] = centre[0];
                q[1] = centre[1] - w->half_extents[3 * c + 1];
                q[2] = centre[2];
            }
            path_add(&paths[c], q);
        }
    return paths;
}

int demo_world_trace_check(const char *trace_path, uint32_t *steps, char *message, size_t message_size)
{
    char err[512] = "", line[512];
    kcc_world_trace *t = NULL;
    kcc_world_trace_report rep;
    memset(&rep, 0, sizeof(rep));
    kcc_world_replay_desc rd = kcc_world_replay_default_desc();
    kcc_status s = kcc_world_trace_load(trace_path, &t, err, sizeof(err));
    if (s == KCC_OK)
        s = kcc_world_trace_replay(t, &rd, &rep, err, sizeof(err));
    int rc = DEMO_EXIT_OK;
    if (s != KCC_OK) {
        snprintf(message, message_size, "%s (%s)", err[0] ? err : trace_path, kcc_status_str(s));
        rc = DEMO_EXIT_ERROR;
    } else if (rep.diverged) {
        kcc_world_trace_format_divergence(t, &rep, line, sizeof(line));
        snprintf(message, message_size, "%u outcomes diverge from the recording; first: %s", rep.diverged, line);
        rc = DEMO_EXIT_PROBLEM;
    } else {
        snprintf(message, message_size, "world trace %s: %u steps replay exactly (every character's position "
                 "bit for bit, every flag, every sensor event)", trace_path, rep.steps);
    }
    if (steps)
        *steps = rep.steps;
    kcc_world_trace_free(t);
    return rc;
}

/* kcc-demo --headless --trace T with a world trace: replays it, draws every character's path and the
 * bodies at the last step. */
static int run_world_trace(const demo_headless_opts *o)
{
    char err[1200] = "";
    uint32_t steps = 0;
    int rc = demo_world_trace_check(o->trace, &steps, err, sizeof(err));
    if (rc != DEMO_EXIT_OK)
        fprintf(stderr, "kcc-demo: %s\n", err);
    else if (!o->quiet)
        printf("kcc-demo headless: %s\n", err);
    if (rc == DEMO_EXIT_ERROR || !o->png)
        return rc;
    demo_world_view w;
    kcc_status s = demo_world_view_load(o->trace, &w, err, sizeof(err));
    uint32_t lb = s == KCC_OK ? demo_world_view_level_body(&w) : UINT32_MAX;
    demo_level lv;
    memset(&lv, 0, sizeof(lv));
    if (s == KCC_OK && lb == UINT32_MAX) {
        snprintf(err, sizeof(err), "%s: no static level to draw", o->trace);
        s = KCC_ERR_NO_TRIANGLES;
    }
    if (s == KCC_OK)
        s = demo_level_open(w.level_names[w.bodies[lb].level] + 4, &lv, err, sizeof(err));
    path *paths = s == KCC_OK ? world_paths(&w) : NULL;
    if (s != KCC_OK || !paths) {
        fprintf(stderr, "kcc-demo: %s (%s)\n", err, kcc_status_str(s ? s : KCC_ERR_OUT_OF_MEMORY));
        demo_level_close(&lv);   /* both are zeroed or loaded: closing either is fine */
        demo_world_view_free(&w);
        return DEMO_EXIT_ERROR;
    }
    kcc_character_desc d = kcc_character_default_desc();
    if (w.character_count)
        memcpy(d.half_extents, w.half_extents, sizeof(d.half_extents));
    char title[256], sub[256];
    const char *base = strrchr(o->trace, '/');
    snprintf(title, sizeof(title), "kcc: %.200s", base ? base + 1 : o->trace);
    snprintf(sub, sizeof(sub), "world trace on %.120s: %u characters, %u bodies, %u steps (%.1f s); green: start, "
             "red: end", lv.name, w.character_count, w.body_count, steps, (double)steps / 60.0);
    render_in ri = {&lv, paths, w.character_count, 4.0f, &d, title, sub, &w, lb};
    int png_rc = render_png(&ri, o);
    rc = png_rc > rc ? png_rc : rc;
    for (uint32_t c = 0; c < w.character_count; ++c)
        free(paths[c].p);
    free(paths);
    demo_level_close(&lv);
    demo_world_view_free(&w);
    return rc;
}

int demo_headless_run(const demo_headless_opts *o)
{
    char err[512] = "";
    if (o->trace && kcc_trace_file_version(o->trace) == 2)
        return run_world_trace(o);
    kcc_trace *tr = NULL;
    const char *level = o->level;
    if (o->trace) {
        kcc_status s = kcc_trace_load(o->trace, &tr, err, sizeof(err));
        if (s != KCC_OK) {
            fprintf(stderr, "kcc-demo: %s\n", err);
            return DEMO_EXIT_ERROR;
        }
        if (!level)
            level = tr->level;
    }
    if (!level)
        level = "showcase";
    demo_level lv;
    kcc_status s = demo_level_open(level, &lv, err, sizeof(err));
    if (s != KCC_OK) {
        fprintf(stderr, "kcc-demo: %s (%s)\n", err[0] ? err : level, kcc_status_str(s));
        kcc_trace_free(tr);
        return DEMO_EXIT_ERROR;
    }
    int rc = tr ? run_trace(&lv, tr, o) : run_wanderers(&lv, o);
    demo_level_close(&lv);
    kcc_trace_free(tr);
    return rc;
}

/* ------------------------------------------------------------------ command line */

demo_viewer_opts demo_viewer_default_opts(void)
{
    demo_viewer_opts o;
    memset(&o, 0, sizeof(o));
    o.width = 1280;
    o.height = 720;
    return o;
}

bool demo_parse_u32(const char *text, uint32_t min, uint32_t max, uint32_t *out)
{
    if (!text || !text[0])
        return false;
    uint64_t value = 0;
    for (const char *c = text; *c; ++c) {
        if (*c < '0' || *c > '9')
            return false;
        value = value * 10u + (uint64_t)(*c - '0');
        if (value > max)   /* also stops the overflow of value: max < 2^32 */
            return false;
    }
    if (value < min)
        return false;
    *out = (uint32_t)value;
    return true;
}

bool demo_parse_float(const char *text, float *out)
{
    if (!text || !text[0])
        return false;
    /* decimal only: strtof would also take blanks, hex, "inf" and "nan" */
    for (const char *c = text; *c; ++c)
        if (!((*c >= '0' && *c <= '9') || *c == '.' || *c == '-' || *c == '+' || *c == 'e' || *c == 'E'))
            return false;
    char *end = NULL;
    errno = 0;
    float value = strtof(text, &end);
    if (end == text || *end != '\0' || errno == ERANGE || !isfinite(value))
        return false;
    *out = value;
    return true;
}

/* Splits "A<sep>B" into first (a copy of A) and *second (B, inside text); false without sep or when A
 * does not fit. */
static bool split_pair(const char *text, char sep, char *first, size_t first_size, const char **second)
{
    const char *mid = strchr(text, sep);
    if (!mid || (size_t)(mid - text) >= first_size)
        return false;
    memcpy(first, text, (size_t)(mid - text));
    first[mid - text] = '\0';
    *second = mid + 1;
    return true;
}

/* "AxB" (sep 'x') with both parts parsed whole by demo_parse_u32 within [min, max]. */
static bool parse_pair_u32(const char *text, char sep, uint32_t min, uint32_t max, uint32_t out[2])
{
    char first[32];
    const char *second;
    uint32_t a, b;
    if (!split_pair(text, sep, first, sizeof(first), &second) || !demo_parse_u32(first, min, max, &a) ||
        !demo_parse_u32(second, min, max, &b))
        return false;
    out[0] = a;
    out[1] = b;
    return true;
}

/* "A,B" (sep ',') with both parts parsed whole by demo_parse_float. */
static bool parse_pair_float(const char *text, char sep, float out[2])
{
    char first[64];
    const char *second;
    float a, b;
    if (!split_pair(text, sep, first, sizeof(first), &second) || !demo_parse_float(first, &a) ||
        !demo_parse_float(second, &b))
        return false;
    out[0] = a;
    out[1] = b;
    return true;
}

void demo_cli_usage(FILE *f)
{
    const demo_headless_opts h = demo_headless_default_opts();
    const demo_viewer_opts v = demo_viewer_default_opts();
    fprintf(f,
            "usage: kcc-demo [options]\n"
            "  --level L         level: a generator spec (default \"showcase\"; also \"arena seed=3\" ...),\n"
            "                    an .obj file (with its .spawns) or a Quake 3 .bsp file\n"
            "  --headless        no window: run wandering characters (or --trace) and print a summary\n"
            "  --trace T         headless: replay trace T and draw its path; viewer: the trace P replays\n"
            "  --png OUT.png     headless: write the picture (also used when no display is available)\n"
            "  --record T        viewer: the trace file F5 records to (default %s/LEVEL-TIME.trace)\n"
            "  --spawn N         viewer: start at spawn point N (default %u)\n"
            "  --screenshot OUT  viewer: walk forward 90 frames, save OUT.png and quit (docs, checks)\n"
            "  --characters N    headless wanderers, 1..%u (default %u)\n"
            "  --frames N        headless frames per wanderer at 60 Hz, 1..%u (default %u = %.0f s)\n"
            "  --seed N          headless random seed (default %u)\n"
            "  --size WxH        picture or window size, 16..8192 (default %ux%u / %ux%u)\n"
            "  --view YAW,PITCH  headless camera, degrees (default %.0f,%.0f)\n"
            "  --cut M           headless: hide geometry higher than M above the highest path point\n"
            "  --quiet           headless: no summary\n"
            "  --bots N          viewer: N wandering characters in the level's game (movers, jump pads,\n"
            "                    teleporters live; default %u); soak: bots a map (default %u)\n"
            "  --soak-movers P   run the movers soak on P (a .bsp, or a directory holding levels.txt and\n"
            "                    pkg/maps/NAME.bsp, as `make levels` makes it) and exit (docs/demo.md)\n"
            "  --soak-steps N    movers soak: at least N steps a map, 1..%u (default %u)\n"
            "Exit status: 0 fine, 1 the run found a problem (a trace diverges, a box deeper in the level\n"
            "than the tolerance), 2 usage or bad input. KCC_ISA=baseline|avx2 picks the build of the move.\n",
            DEMO_OUTPUT_DIR, v.spawn, DEMO_MAX_CHARACTERS, h.characters, DEMO_MAX_FRAMES, h.frames,
            (double)h.frames * (double)DEMO_DT, h.seed, h.width, h.height, v.width, v.height, (double)h.yaw,
            (double)h.pitch, v.bots, DEMO_SOAK_BOTS, DEMO_MAX_FRAMES, DEMO_SOAK_STEPS);
}

/* One option with a value; false with a message in err when the value is not what it wants. */
static bool cli_value(demo_cli *c, const char *opt, const char *val, char *err, size_t err_size)
{
    demo_headless_opts *h = &c->headless;
    uint32_t pair[2];
    float fpair[2];
    const char *wants = NULL;
    if (strcmp(opt, "--level") == 0) {
        h->level = c->viewer.level = val;
    } else if (strcmp(opt, "--trace") == 0) {
        h->trace = c->viewer.trace = val;
    } else if (strcmp(opt, "--png") == 0) {
        h->png = val;
    } else if (strcmp(opt, "--record") == 0) {
        c->viewer.record = val;
    } else if (strcmp(opt, "--screenshot") == 0) {
        c->viewer.screenshot = val;
    } else if (strcmp(opt, "--spawn") == 0) {
        wants = demo_parse_u32(val, 0, UINT32_MAX, &c->viewer.spawn) ? NULL : "a spawn index 0..4294967295";
    } else if (strcmp(opt, "--characters") == 0) {
        wants = demo_parse_u32(val, 1, DEMO_MAX_CHARACTERS, &h->characters) ? NULL : "a whole number 1..10000";
    } else if (strcmp(opt, "--frames") == 0) {
        wants = demo_parse_u32(val, 1, DEMO_MAX_FRAMES, &h->frames) ? NULL : "a whole number 1..10000000";
    } else if (strcmp(opt, "--seed") == 0) {
        wants = demo_parse_u32(val, 0, UINT32_MAX, &h->seed) ? NULL : "a whole number 0..4294967295";
    } else if (strcmp(opt, "--size") == 0) {
        wants = parse_pair_u32(val, 'x', 16, 8192, pair) ? NULL : "WxH, each a whole number 16..8192";
        if (!wants) {
            h->width = c->viewer.width = pair[0];
            h->height = c->viewer.height = pair[1];
        }
    } else if (strcmp(opt, "--view") == 0) {
        wants = parse_pair_float(val, ',', fpair) ? NULL : "YAW,PITCH in degrees";
        if (!wants) {
            h->yaw = fpair[0];
            h->pitch = fpair[1];
        }
    } else if (strcmp(opt, "--bots") == 0) {
        wants = demo_parse_u32(val, 0, DEMO_MAX_CHARACTERS, &c->viewer.bots) ? NULL : "a whole number 0..10000";
        c->soak_bots = c->viewer.bots;
    } else if (strcmp(opt, "--soak-movers") == 0) {
        c->soak_movers = val;
    } else if (strcmp(opt, "--soak-steps") == 0) {
        wants = demo_parse_u32(val, 1, DEMO_MAX_FRAMES, &c->soak_steps) ? NULL : "a whole number 1..10000000";
    } else if (strcmp(opt, "--cut") == 0) {
        wants = demo_parse_float(val, &h->cut) ? NULL : "a finite number of metres";
    } else {
        snprintf(err, err_size, "unknown option %s", opt);
        return false;
    }
    if (wants)
        snprintf(err, err_size, "%s wants %s, got '%s'", opt, wants, val);
    return wants == NULL;
}

int demo_cli_parse(int argc, char *const *argv, demo_cli *out, char *err, size_t err_size)
{
    demo_cli c;
    memset(&c, 0, sizeof(c));
    c.headless = demo_headless_default_opts();
    c.viewer = demo_viewer_default_opts();
    c.soak_steps = DEMO_SOAK_STEPS;
    c.soak_bots = DEMO_SOAK_BOTS;
    for (int i = 1; i < argc; ++i) {
        const char *opt = argv[i];
        if (strcmp(opt, "--headless") == 0) {
            c.run_headless = true;
        } else if (strcmp(opt, "--quiet") == 0) {
            c.headless.quiet = true;
        } else if (strcmp(opt, "-h") == 0 || strcmp(opt, "--help") == 0) {
            c.help = true;
        } else if (strncmp(opt, "--", 2) != 0) {
            snprintf(err, err_size, "unexpected argument '%s' (options start with --)", opt);
            return DEMO_EXIT_ERROR;
        } else if (i + 1 >= argc) {
            snprintf(err, err_size, "%s needs a value (or is unknown)", opt);
            return DEMO_EXIT_ERROR;
        } else if (!cli_value(&c, opt, argv[++i], err, err_size)) {
            return DEMO_EXIT_ERROR;
        }
    }
    *out = c;
    return DEMO_EXIT_OK;
}

/* ------------------------------------------------------------------ viewer logic */

void demo_keys_event(demo_keys *keys, demo_key key, bool down)
{
    if ((unsigned)key >= DEMO_KEY_COUNT)
        return;
    const uint32_t bit = 1u << key;
    if (down) {
        keys->held |= bit;
        keys->tapped |= bit;
    } else {
        keys->held &= ~bit;
    }
}

demo_input demo_keys_input(demo_keys *keys, float yaw)
{
    const uint32_t on = keys->held | keys->tapped;
    keys->tapped = 0;
    demo_input in;
    memset(&in, 0, sizeof(in));
    in.yaw = yaw;
    in.forward = (float)((on >> DEMO_KEY_FORWARD) & 1u) - (float)((on >> DEMO_KEY_BACK) & 1u);
    in.right = (float)((on >> DEMO_KEY_RIGHT) & 1u) - (float)((on >> DEMO_KEY_LEFT) & 1u);
    in.jump = (on >> DEMO_KEY_JUMP) & 1u;
    in.run = (on >> DEMO_KEY_RUN) & 1u;
    return in;
}

float demo_camera_place(const kcc_mesh *mesh, const float target[3], const float back[3], float distance,
                        float probe, float eye[3])
{
    const vec3 delta = {back[0] * distance, back[1] * distance, back[2] * distance};
    kcc_sphere_hit hit;
    float used = distance;
    if (mesh && kcc_mesh_sweep_sphere(mesh, target, probe, delta, &hit))
        used = hit.t * distance;
    for (int i = 0; i < 3; ++i)
        eye[i] = target[i] + back[i] * used;
    return used;
}

bool demo_output_path(const char *dir, const char *level_name, const char *stamp, const char *ext, char *out,
                      size_t out_size)
{
    char name[128];
    size_t n = 0;
    for (const char *c = level_name; *c && n + 1 < sizeof(name); ++c) {
        bool keep = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                    *c == '-' || *c == '.';
        name[n++] = keep ? *c : '_';
    }
    name[n] = '\0';
    int len = snprintf(out, out_size, "%s/%s-%s.%s", dir, name, stamp, ext);
    return len > 0 && (size_t)len < out_size;
}

bool demo_make_dir(const char *dir)
{
    char made[1024];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof(made))
        return false;
    memcpy(made, dir, n + 1);
    for (size_t i = 1; i <= n; ++i) {
        if (made[i] != '/' && made[i] != '\0')
            continue;
        char keep = made[i];
        made[i] = '\0';
        if (mkdir(made, 0777) != 0 && errno != EEXIST)
            return false;
        made[i] = keep;
    }
    return true;
}
