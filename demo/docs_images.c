/* demo/docs_images.c: kcc-docs-images, the pictures of docs/controller.md (and, through
 * docs_images_world.c, of docs/world.md) and the drawing helpers they share. Builds a tiny scene inline
 * for each key situation of the move (edge rays on a step, the upper box at a ledge, a slide along an
 * averaged normal, a funnel), moves a character there with kcc_character_move_debug, and draws what
 * the move computed (rays, contacts, averaged normal, slide, p1/p4, the result) with the demo's
 * software renderer, so the pictures show the library as it is. `make docs-images` runs it. */
#include "docs_images.h"

#include <math.h>
#include <stdio.h>
#include <string.h>


/* ------------------------------------------------------------------ scenes */

#define SCENE_MAX_TRIS 64
typedef struct scene {
    float    pos[SCENE_MAX_TRIS * 3][3];   /* m; three vertices a triangle, no sharing */
    uint32_t tri_count;
    kcc_mesh *mesh;
} scene;

static void scene_tri(scene *s, const float a[3], const float b[3], const float c[3])
{
    if (s->tri_count == SCENE_MAX_TRIS)
        return;
    memcpy(s->pos[3 * s->tri_count], a, sizeof(float[3]));
    memcpy(s->pos[3 * s->tri_count + 1], b, sizeof(float[3]));
    memcpy(s->pos[3 * s->tri_count + 2], c, sizeof(float[3]));
    s->tri_count++;
}

/* A quad a b c d (in order around it): two triangles. */
static void scene_quad(scene *s, const float a[3], const float b[3], const float c[3], const float d[3])
{
    scene_tri(s, a, b, c);
    scene_tri(s, a, c, d);
}

/* The top, the -x riser and the two sides of a block [x0, x1] x [0, top] x [z0, z1]. */
static void scene_block(scene *s, float x0, float x1, float top, float z0, float z1)
{
    const float t0[3] = {x0, top, z0}, t1[3] = {x1, top, z0}, t2[3] = {x1, top, z1}, t3[3] = {x0, top, z1};
    const float b0[3] = {x0, 0, z0}, b3[3] = {x0, 0, z1}, b1[3] = {x1, 0, z0}, b2[3] = {x1, 0, z1};
    scene_quad(s, t0, t3, t2, t1);
    scene_quad(s, b0, b3, t3, t0);
    scene_quad(s, b0, t0, t1, b1);
    scene_quad(s, b3, b2, t2, t3);
}

static void scene_floor(scene *s, float x0, float x1, float z0, float z1)
{
    const float a[3] = {x0, 0, z0}, b[3] = {x0, 0, z1}, c[3] = {x1, 0, z1}, d[3] = {x1, 0, z0};
    scene_quad(s, a, b, c, d);
}

static bool scene_build(scene *s)
{
    kcc_mesh_desc d;
    memset(&d, 0, sizeof(d));
    d.positions = &s->pos[0][0];
    d.vertex_count = 3 * s->tri_count;
    d.triangle_count = s->tri_count;
    kcc_status st = kcc_mesh_build(&d, &s->mesh);
    if (st != KCC_OK)
        fprintf(stderr, "kcc-docs-images: building a scene: %s\n", kcc_status_str(st));
    return st == KCC_OK;
}

/* ------------------------------------------------------------------ drawing */

const uint8_t C_TEXT[3] = {235, 238, 242}, C_DIM[3] = {170, 176, 186};
const uint8_t C_BEFORE[3] = {150, 156, 170}, C_AFTER[3] = {255, 214, 64};
const uint8_t C_WALK[3] = {60, 230, 90}, C_STEEP[3] = {255, 150, 30}, C_MISS[3] = {120, 120, 120};
const uint8_t C_NORMAL[3] = {40, 235, 235}, C_SLIDE[3] = {255, 70, 220}, C_P1[3] = {110, 170, 255};
const uint8_t C_CONTACT[3] = {255, 120, 40}, C_BAND[3] = {255, 120, 40};


bool picture_begin(picture *p, const float *positions, uint32_t tri_count, const float frame[2][3],
                   float yaw, float pitch)
{
    const uint8_t bg[3] = {28, 31, 38};
    if (raster_image_init(&p->img, IMG_W, IMG_H, bg) != KCC_OK)
        return false;
    raster_view_frame(&p->view, frame, yaw, pitch, IMG_W, IMG_H, 50.0f);
    /* Light from above and behind the viewer, so faces turned to the reader are bright. */
    float light[3], ll = 0.0f;
    for (int i = 0; i < 3; ++i) {
        light[i] = p->view.light[i] - p->view.forward[i];
        ll += light[i] * light[i];
    }
    for (int i = 0; i < 3; ++i)
        p->view.light[i] = light[i] / sqrtf(ll);
    raster_draw_mesh(&p->img, &p->view, positions, NULL, tri_count);
    raster_outline(&p->img, 0.15f);
    p->legend_y = IMG_H - 14;
    return true;
}

void label(picture *p, const float at[3], int dx, int dy, const char *text, const uint8_t rgb[3])
{
    float sp[3];
    raster_project(&p->view, at, sp);
    raster_draw_text(&p->img, (int)sp[0] + dx, (int)sp[1] + dy, text, rgb, 1);
}

void dot(picture *p, const float at[3], const uint8_t rgb[3])
{
    raster_draw_line(&p->img, &p->view, at, at, rgb, 7);
}

/* A line from `from` along `dir` (m) with a head drawn in the picture's plane. */
void arrow(picture *p, const float from[3], const float dir[3], const uint8_t rgb[3])
{
    float to[3], len = sqrtf(dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]);
    if (!(len > 1e-6f))
        return;
    for (int i = 0; i < 3; ++i)
        to[i] = from[i] + dir[i];
    raster_draw_line(&p->img, &p->view, from, to, rgb, 3);
    const float *f = p->view.forward;
    float u[3] = {dir[0] / len, dir[1] / len, dir[2] / len};
    float side[3] = {u[1] * f[2] - u[2] * f[1], u[2] * f[0] - u[0] * f[2], u[0] * f[1] - u[1] * f[0]};
    float sl = sqrtf(side[0] * side[0] + side[1] * side[1] + side[2] * side[2]);
    if (!(sl > 1e-6f))
        return;
    const float head = fminf(0.12f, 0.4f * len);
    for (int sign = -1; sign <= 1; sign += 2) {
        float h[3];
        for (int i = 0; i < 3; ++i)
            h[i] = to[i] - u[i] * head + (float)sign * side[i] / sl * head * 0.6f;
        raster_draw_line(&p->img, &p->view, to, h, rgb, 3);
    }
}

void box_at(const kcc_character_desc *d, const float centre[3], float out[2][3])
{
    for (int i = 0; i < 3; ++i) {
        out[0][i] = centre[i] - d->half_extents[i];
        out[1][i] = centre[i] + d->half_extents[i];
    }
}

void title(picture *p, const char *text, const char *sub)
{
    raster_draw_text(&p->img, 12, 10, text, C_TEXT, 2);
    if (sub)
        raster_draw_text(&p->img, 12, 36, sub, C_DIM, 1);
}

/* Legend lines stack upwards from the bottom-left corner: a colour swatch and its meaning. */
void legend(picture *p, const uint8_t rgb[3], const char *text)
{
    raster_draw_text(&p->img, 14, p->legend_y, "#", rgb, 1);
    for (int y = p->legend_y; y < p->legend_y + 9; ++y)
        for (int x = 12; x < 22; ++x)
            memcpy(p->img.rgb + 3 * ((size_t)y * IMG_W + (size_t)x), rgb, 3);
    raster_draw_text(&p->img, 28, p->legend_y, text, C_TEXT, 1);
    p->legend_y -= 14;
}

bool picture_end(picture *p, const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    kcc_status s = raster_write_png(&p->img, path);
    raster_image_free(&p->img);
    if (s != KCC_OK)
        fprintf(stderr, "kcc-docs-images: %s: %s\n", path, kcc_status_str(s));
    else
        printf("kcc-docs-images: wrote %s\n", path);
    return s == KCC_OK;
}

/* The triangles the swept move touched first, filled over the scene (nudged towards the reader). */
static void draw_contacts(picture *p, const scene *s, const kcc_move_debug *dbg)
{
    for (uint32_t k = 0; k < dbg->contact_count; ++k) {
        const uint32_t t = dbg->contacts[k];
        if (t >= s->tri_count)
            continue;
        float v[3][3];
        for (int c = 0; c < 3; ++c)
            for (int i = 0; i < 3; ++i)
                v[c][i] = s->pos[3 * t + (uint32_t)c][i] - 0.01f * p->view.forward[i];
        raster_draw_triangle(&p->img, &p->view, v[0], v[1], v[2], C_CONTACT);
    }
}

/* The four edge rays of the move's ground probe: walkable hit green, steep hit orange, miss grey. */
static void draw_rays(picture *p, const kcc_move_debug *dbg)
{
    for (int i = 0; i < 4; ++i) {
        const bool hit = dbg->ray_hit & (1u << i), walk = dbg->ray_walkable & (1u << i);
        const uint8_t *c = walk ? C_WALK : hit ? C_STEEP : C_MISS;
        raster_draw_line(&p->img, &p->view, dbg->ray_from[i], dbg->ray_to[i], c, 3);
        if (hit)
            dot(p, dbg->ray_to[i], c);
    }
}

/* A character standing at feet (m) on the scene's ground, settled by one still move. */
static void stand(kcc_character *ch, const scene *s, float x, float feet_y, float z)
{
    kcc_character_desc d = kcc_character_default_desc();
    const float c[3] = {x, feet_y + d.half_extents[1] + d.skin_width, z};
    kcc_character_init(ch, &d, c);
    const float still[3] = {0.0f, -0.003f, 0.0f};
    kcc_character_move(ch, s->mesh, still, NULL);
}

/* One move of the character with its debug record; before/after centres kept for drawing. */
typedef struct traced_move {
    float           before[3], after[3];   /* m, box centres */
    kcc_move_result result;
    kcc_move_debug  dbg;
} traced_move;

static void traced(kcc_character *ch, const scene *s, const float disp[3], traced_move *out)
{
    memcpy(out->before, ch->position, sizeof(out->before));
    kcc_character_move_debug(ch, s->mesh, disp, &out->result, &out->dbg);
    memcpy(out->after, ch->position, sizeof(out->after));
}

static void describe(const char *name, const traced_move *m)
{
    char flags[KCC_TRACE_FLAGS_CHARS];
    kcc_trace_flags_to_text(m->result.flags, flags, sizeof(flags));
    printf("  %s: branch P%d, %s, moved %.3f %.3f %.3f, %u contacts\n", name, (int)m->result.branch, flags,
           (double)m->result.moved[0], (double)m->result.moved[1], (double)m->result.moved[2],
           m->dbg.contact_count);
}

/* ------------------------------------------------------------------ the four situations */

/* Edge rays on a step: a box walking 0.3 m towards a 0.3 m step (under step_height 0.35 m) ends
 * with its front over the tread: the front rays hit the tread, the back rays the floor, and the box
 * settles on the highest walkable hit. */
static void step_geometry(scene *s)
{
    scene_floor(s, -1.2f, 0.5f, -1.0f, 1.0f);
    scene_block(s, 0.5f, 1.8f, 0.3f, -1.0f, 1.0f);
}

static void step_draw(const scene *s, picture *p)
{
    kcc_character ch;
    stand(&ch, s, 0.1f, 0.0f, 0.0f);
    traced_move m;
    const float disp[3] = {0.3f, -0.003f, 0.0f};
    traced(&ch, s, disp, &m);
    describe("step", &m);
    const kcc_character_desc d = kcc_character_default_desc();
    float b0[2][3], b1[2][3];
    box_at(&d, m.before, b0);
    box_at(&d, m.after, b1);
    raster_draw_box(&p->img, &p->view, (const float(*)[3])b0, C_BEFORE, 1);
    raster_draw_box(&p->img, &p->view, (const float(*)[3])b1, C_AFTER, 2);
    draw_rays(p, &m.dbg);
    const float tread[3] = {1.3f, 0.3f, -0.9f}, riser[3] = {0.5f, 0.1f, 0.9f};
    label(p, tread, 0, -4, "tread, 0.30 m up", C_TEXT);
    label(p, riser, 6, 8, "riser", C_TEXT);
    label(p, b0[1], -60, -14, "before", C_BEFORE);
    char text[96];
    snprintf(text, sizeof(text), "after: stepped up %.2f m", (double)m.result.step_up);
    label(p, b1[1], 8, -4, text, C_AFTER);
    snprintf(text, sizeof(text), "rays start %.2f m above the feet", (double)d.step_height);
    label(p, m.dbg.ray_from[0], -150, -4, text, C_WALK);
    float labelled[4];
    int n_labelled = 0;
    for (int i = 0; i < 4; ++i) {
        bool seen = false;
        for (int k = 0; k < n_labelled; ++k)
            seen = seen || fabsf(labelled[k] - m.dbg.ray_to[i][1]) < 1e-3f;
        if (!(m.dbg.ray_walkable & (1u << i)) || seen)
            continue;
        labelled[n_labelled++] = m.dbg.ray_to[i][1];
        snprintf(text, sizeof(text), "hit at %.2f m", (double)m.dbg.ray_to[i][1]);
        label(p, m.dbg.ray_to[i], 8, -2, text, C_WALK);
    }
    title(p, "Edge rays on a step", "four rays down the box's vertical edges, from step_height above the feet");
    legend(p, C_BEFORE, "box before the move");
    legend(p, C_AFTER, "box after: settled on the highest walkable hit");
    legend(p, C_WALK, "edge ray and its walkable hit");
}

/* The upper box at a ledge too high: walking, the move sweeps only the part of the box above
 * step_height (the lower band is the ground probe's); a 0.8 m ledge reaches into that part and stops
 * it, a skin short of the face. */
#define LEDGE_FACE_X 0.5f   /* m: where the ledge's face stands */

static void ledge_geometry(scene *s)
{
    scene_floor(s, -1.4f, LEDGE_FACE_X, -1.0f, 1.0f);
    scene_block(s, LEDGE_FACE_X, 1.6f, 0.8f, -1.0f, 1.0f);
}

static void ledge_draw(const scene *s, picture *p)
{
    kcc_character ch;
    stand(&ch, s, -0.45f, 0.0f, 0.0f);
    traced_move m;
    const float disp[3] = {0.8f, -0.003f, 0.0f};
    traced(&ch, s, disp, &m);
    describe("ledge", &m);
    const kcc_character_desc d = kcc_character_default_desc();
    float b0[2][3], b1[2][3], wish[2][3], upper[2][3], band[2][3];
    const float wished[3] = {m.before[0] + disp[0], m.before[1], m.before[2] + disp[2]};
    box_at(&d, m.before, b0);
    box_at(&d, m.after, b1);
    box_at(&d, wished, wish);
    memcpy(upper, b1, sizeof(upper));
    memcpy(band, b1, sizeof(band));
    const float feet = b1[0][1] - d.skin_width;   /* the ground under the box */
    upper[0][1] = feet + d.step_height;
    band[1][1] = feet + d.step_height;
    wish[0][1] = upper[0][1];
    raster_draw_box(&p->img, &p->view, (const float(*)[3])b0, C_BEFORE, 1);
    raster_draw_box(&p->img, &p->view, (const float(*)[3])wish, C_DIM, 1);
    raster_draw_box(&p->img, &p->view, (const float(*)[3])band, C_BAND, 2);
    raster_draw_box(&p->img, &p->view, (const float(*)[3])upper, C_P1, 3);
    const float from[3] = {m.before[0], b0[1][1] + 0.12f, m.before[2]};
    arrow(p, from, disp, C_TEXT);
    label(p, from, -20, -16, "the walk: 0.80 m", C_TEXT);
    label(p, b0[1], -110, 10, "before", C_BEFORE);
    label(p, wish[1], 8, 0, "where the upper box wanted to go", C_DIM);
    char text[128];
    snprintf(text, sizeof(text), "upper box: stopped %.1f mm short of the face", 1e3 * ((double)LEDGE_FACE_X - (double)b1[1][0]));
    label(p, wish[1], 8, 16, text, C_P1);
    snprintf(text, sizeof(text), "lower band, step_height %.2f m:", (double)d.step_height);
    const float band_label[3] = {band[0][0], band[1][1], band[1][2]};
    label(p, band_label, -200, -6, text, C_BAND);
    label(p, band_label, -200, 6, "left to the ground probe", C_BAND);
    const float top[3] = {1.0f, 0.8f, -1.0f};
    label(p, top, -40, -16, "ledge 0.80 m: higher than step_height", C_TEXT);
    title(p, "The upper box at a ledge too high", "walking, only the box above step_height is swept along the move");
    legend(p, C_BEFORE, "box before the move");
    legend(p, C_BAND, "lower band (feet to step_height): the rays' business");
    legend(p, C_P1, "upper box, swept: the ledge's face stops it");
    char flags[KCC_TRACE_FLAGS_CHARS];
    kcc_trace_flags_to_text(m.result.flags, flags, sizeof(flags));
    snprintf(text, sizeof(text), "result: branch P%d, %.90s", (int)m.result.branch, flags);
    legend(p, C_TEXT, text);
}

/* A slide along an averaged normal: a box in the air moving into a wall and, beside it, a 70-degree
 * slope whose foot it meets in the same instant: both are first contacts, their normals are averaged,
 * and the rest of the move slides along the average's tangent. */
#define SLIDE_FEET 0.6f   /* m: the height of the box's feet, where the slope's plane meets the wall's */

static void slide_geometry(scene *s)
{
    const float run = 1.0f / tanf(70.0f * 3.14159265f / 180.0f);   /* m across per m up */
    const float w0[3] = {1.0f, 0.3f, -1.2f}, w1[3] = {1.0f, 0.3f, 0.0f}, w2[3] = {1.0f, 2.5f, 0.0f},
                w3[3] = {1.0f, 2.5f, -1.2f};
    scene_quad(s, w0, w1, w2, w3);
    const float s0[3] = {1.0f + (0.3f - SLIDE_FEET) * run, 0.3f, 0.0f}, s1[3] = {s0[0], 0.3f, 1.2f};
    const float s2[3] = {1.0f + (2.5f - SLIDE_FEET) * run, 2.5f, 1.2f}, s3[3] = {s2[0], 2.5f, 0.0f};
    scene_quad(s, s0, s1, s2, s3);
}

static void slide_draw(const scene *s, picture *p)
{
    const kcc_character_desc d = kcc_character_default_desc();
    kcc_character ch;
    const float start[3] = {0.45f, SLIDE_FEET + d.half_extents[1], -0.4f};
    kcc_character_init(&ch, &d, start);
    traced_move m;
    const float disp[3] = {0.5f, 0.0f, 0.8f};
    traced(&ch, s, disp, &m);
    describe("slide", &m);
    draw_contacts(p, s, &m.dbg);
    float b0[2][3], b1[2][3], b4[2][3];
    box_at(&d, m.before, b0);
    box_at(&d, m.dbg.p1, b1);
    box_at(&d, m.after, b4);
    raster_draw_box(&p->img, &p->view, (const float(*)[3])b0, C_BEFORE, 1);
    raster_draw_box(&p->img, &p->view, (const float(*)[3])b1, C_P1, 2);
    raster_draw_box(&p->img, &p->view, (const float(*)[3])b4, C_AFTER, 2);
    /* Both arrows from the middle of the face that met the two surfaces. */
    const float face[3] = {b1[1][0], m.dbg.p1[1], m.dbg.p1[2]};
    float normal[3], slid[3];
    for (int i = 0; i < 3; ++i) {
        normal[i] = 0.9f * m.dbg.averaged_normal[i];
        slid[i] = m.dbg.slide[i];
    }
    arrow(p, face, normal, C_NORMAL);
    arrow(p, face, slid, C_SLIDE);
    const float wall_top[3] = {1.0f, 2.5f, -1.2f}, slope_top[3] = {1.7f, 2.5f, 1.2f};
    label(p, wall_top, 10, 10, "wall", C_TEXT);
    label(p, slope_top, 10, 10, "slope, 70 degrees (steep)", C_TEXT);
    label(p, b0[0], -70, -10, "before", C_BEFORE);
    label(p, b1[0], -150, -40, "p1: both met at once", C_P1);
    label(p, b4[1], 10, 40, "p4: after the slide", C_AFTER);
    char text[160];
    snprintf(text, sizeof(text), "averaged normal (%.2f, %.2f, %.2f)", (double)m.dbg.averaged_normal[0],
             (double)m.dbg.averaged_normal[1], (double)m.dbg.averaged_normal[2]);
    label(p, face, -250, 20, text, C_NORMAL);
    title(p, "A slide along the averaged normal", "a box moving into a wall and a steep slope it meets in the same instant");
    legend(p, C_BEFORE, "box before the move");
    legend(p, C_P1, "p1: the swept box stops at the first contacts");
    legend(p, C_CONTACT, "first contacts: their normals are averaged (parallel ones once)");
    legend(p, C_NORMAL, "averaged normal");
    legend(p, C_SLIDE, "slide: the rest of the move along the average's tangent");
    legend(p, C_AFTER, "p4: where the slide ends, settled");
}

/* A funnel: a box dropped into a V-shaped gully of two 70-degree faces. Neither face is walkable
 * (the limit is 45 degrees), yet the box can slide down neither: together they hold it, so it
 * stands there, on the ground, with the faces' normalised sum as its ground normal. */
#define FUNNEL_HALF 0.9f   /* m: half the gully's width at its rim */

static float funnel_rise(void)
{
    return tanf(70.0f * 3.14159265f / 180.0f);   /* m up per m across */
}

static void funnel_geometry(scene *s)
{
    const float rise = funnel_rise(), half = FUNNEL_HALF;
    const float l0[3] = {-half, half * rise, -1.0f}, l1[3] = {-half, half * rise, 1.0f};
    const float v0[3] = {0.0f, 0.0f, -1.0f}, v1[3] = {0.0f, 0.0f, 1.0f};
    const float r0[3] = {half, half * rise, -1.0f}, r1[3] = {half, half * rise, 1.0f};
    scene_quad(s, l0, l1, v1, v0);
    scene_quad(s, v0, v1, r1, r0);
}

static void funnel_draw(const scene *s, picture *p)
{
    const float rise = funnel_rise();
    const kcc_character_desc d = kcc_character_default_desc();
    kcc_character ch;
    const float start[3] = {0.05f, 3.2f, 0.0f};
    kcc_character_init(&ch, &d, start);
    float path[120][3];
    uint32_t frames = 0;
    traced_move m;
    float vy = 0.0f;
    for (; frames < 120; ++frames) {
        vy -= 9.81f / 60.0f;
        const float disp[3] = {0.0f, vy / 60.0f, 0.0f};
        memcpy(path[frames], ch.position, sizeof(path[frames]));
        traced(&ch, s, disp, &m);
        if (m.result.flags & KCC_MOVE_ON_GROUND)
            break;
    }
    describe("funnel", &m);
    for (uint32_t i = 0; i < frames; i += 2)
        dot(p, path[i], C_BEFORE);
    float b1[2][3];
    box_at(&d, m.after, b1);
    raster_draw_box(&p->img, &p->view, (const float(*)[3])b1, C_AFTER, 2);
    /* Each face's normal, drawn on the face, and their sum: the ground the result reports. */
    const float left_n[3] = {rise / sqrtf(1.0f + rise * rise), 1.0f / sqrtf(1.0f + rise * rise), 0.0f};
    const float right_n[3] = {-left_n[0], left_n[1], 0.0f};
    const float left_c[3] = {-0.42f, 0.42f * rise, 0.0f}, right_c[3] = {0.42f, 0.42f * rise, 0.0f};
    float ln[3], rn[3], gn[3];
    for (int i = 0; i < 3; ++i) {
        ln[i] = 0.6f * left_n[i];
        rn[i] = 0.6f * right_n[i];
        gn[i] = 0.8f * m.result.ground_normal[i];
    }
    arrow(p, left_c, ln, C_STEEP);
    arrow(p, right_c, rn, C_STEEP);
    const float feet[3] = {m.after[0], b1[0][1], 0.0f};
    arrow(p, feet, gn, C_WALK);
    char text[160];
    snprintf(text, sizeof(text), "ground normal (%.2f, %.2f, %.2f)", (double)m.result.ground_normal[0],
             (double)m.result.ground_normal[1], (double)m.result.ground_normal[2]);
    label(p, feet, 12, -70, text, C_WALK);
    label(p, left_c, -76, -4, "70 degrees", C_STEEP);
    label(p, right_c, 12, -4, "70 degrees", C_STEEP);
    char flags[KCC_TRACE_FLAGS_CHARS];
    kcc_trace_flags_to_text(m.result.flags, flags, sizeof(flags));
    snprintf(text, sizeof(text), "after %u frames: %.120s", frames + 1, flags);
    label(p, b1[1], 10, 0, text, C_AFTER);
    title(p, "A funnel holds the box", "two steep faces, neither walkable (limit 45 degrees), hold the box together");
    legend(p, C_BEFORE, "the fall, every other frame (60 Hz)");
    legend(p, C_STEEP, "each face's normal: too steep to stand on alone");
    legend(p, C_WALK, "ground normal: the faces' normalised sum");
    legend(p, C_AFTER, "the box at rest: it stands, walks and jumps as on any ground");
}

/* ------------------------------------------------------------------ the program */

typedef struct situation {
    const char *file;
    float       frame[2][3];   /* m: what the picture frames */
    float       yaw, pitch;    /* degrees, as raster_view_frame takes them */
    void (*geometry)(scene *s);
    void (*draw)(const scene *s, picture *p);   /* runs the move and draws it over the scene */
} situation;

static const situation situations[] = {
    {"scheme_step.png", {{-0.5f, 0.0f, -0.6f}, {1.3f, 1.9f, 0.6f}}, -28.0f, 18.0f, step_geometry, step_draw},
    {"scheme_ledge.png", {{-1.0f, 0.0f, -0.5f}, {1.6f, 1.9f, 0.5f}}, -12.0f, 8.0f, ledge_geometry, ledge_draw},
    {"scheme_slide.png", {{0.1f, 0.3f, -1.2f}, {1.8f, 2.5f, 1.2f}}, -62.0f, 20.0f, slide_geometry, slide_draw},
    {"scheme_funnel.png", {{-FUNNEL_HALF, 0.0f, -0.6f}, {FUNNEL_HALF, 3.2f, 0.6f}}, -14.0f, 10.0f, funnel_geometry,
     funnel_draw},
};

static bool make_picture(const situation *sit, const char *dir)
{
    scene s;
    memset(&s, 0, sizeof(s));
    sit->geometry(&s);
    if (!scene_build(&s))
        return false;
    picture p;
    bool ok = picture_begin(&p, &s.pos[0][0], s.tri_count, sit->frame, sit->yaw, sit->pitch);
    if (ok) {
        sit->draw(&s, &p);
        ok = picture_end(&p, dir, sit->file);
    }
    kcc_mesh_destroy(s.mesh);
    return ok;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "docs/img";
    if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
        fprintf(stderr, "usage: kcc-docs-images [DIR]   (writes DIR/scheme_*.png and DIR/world_*.png; default "
                        "docs/img)\n");
        return 2;
    }
    bool ok = true;
    for (size_t i = 0; i < sizeof(situations) / sizeof(situations[0]); ++i)
        ok = make_picture(&situations[i], dir) && ok;
    ok = make_world_pictures(dir) && ok;
    return ok ? 0 : 1;
}
