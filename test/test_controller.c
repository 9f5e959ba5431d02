/* test_controller.c: the controller's scenario suite: each scene a few triangles built here, each
 * behaviour checked against numbers worked out by hand (see the comment of each test), plus a soak
 * over the shared and procedural levels. Scenes are written Y-up; the +Z tests remap them. */
#include "test.h"
#include "controller_internal.h"
#include <cglm/cglm.h>

/* ---------------------------------------------------------------- scene building */

typedef struct scene {
    float   *pos;
    uint32_t nverts, cap;
    bool     zup;   /* store (x, y, z) as (x, z, y): the same scene with +Z up */
} scene;

static void sc_vert(scene *s, float x, float y, float z)
{
    if (s->nverts == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 256;
        s->pos = realloc(s->pos, sizeof(float) * 3 * s->cap);
        assert_non_null(s->pos);
    }
    float *p = &s->pos[3 * s->nverts++];
    p[0] = x;
    p[1] = s->zup ? z : y;
    p[2] = s->zup ? y : z;
}

static void sc_tri(scene *s, const float a[3], const float b[3], const float c[3])
{
    sc_vert(s, a[0], a[1], a[2]);
    sc_vert(s, b[0], b[1], b[2]);
    sc_vert(s, c[0], c[1], c[2]);
}

static void sc_quad(scene *s, const float a[3], const float b[3], const float c[3], const float d[3])
{
    sc_tri(s, a, b, c);
    sc_tri(s, a, c, d);
}

/* A closed axis-aligned box, outward faces. */
static void sc_box(scene *s, float x0, float y0, float z0, float x1, float y1, float z1)
{
    const float v[8][3] = {{x0, y0, z0}, {x1, y0, z0}, {x1, y1, z0}, {x0, y1, z0},
                           {x0, y0, z1}, {x1, y0, z1}, {x1, y1, z1}, {x0, y1, z1}};
    static const int f[6][4] = {{0, 3, 2, 1}, {4, 5, 6, 7}, {0, 1, 5, 4},
                                {3, 7, 6, 2}, {0, 4, 7, 3}, {1, 2, 6, 5}};
    for (int i = 0; i < 6; ++i)
        sc_quad(s, v[f[i][0]], v[f[i][1]], v[f[i][2]], v[f[i][3]]);
}

/* Flat floor at height y made of n x n quads over [-half, half]^2, diagonals alternating. */
static void sc_floor(scene *s, float y, float half, int n)
{
    float step = 2.0f * half / (float)n;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            float x0 = -half + step * (float)i, x1 = x0 + step;
            float z0 = -half + step * (float)j, z1 = z0 + step;
            const float a[3] = {x0, y, z0}, b[3] = {x1, y, z0}, c[3] = {x1, y, z1}, d[3] = {x0, y, z1};
            if ((i + j) & 1)
                sc_quad(s, a, d, c, b);
            else
                sc_quad(s, b, a, d, c);
        }
}

static kcc_mesh *sc_build(scene *s)
{
    kcc_mesh_desc md;
    memset(&md, 0, sizeof(md));
    md.positions = s->pos;
    md.vertex_count = s->nverts;
    md.triangle_count = s->nverts / 3;
    kcc_mesh *m = NULL;
    assert_int_equal(kcc_mesh_build(&md, &m), KCC_OK);
    free(s->pos);
    memset(s, 0, sizeof(*s));
    return m;
}

/* ---------------------------------------------------------------- character helpers */

#define SKIN 0.002f
#define HX 0.3f
#define HY 0.9f
#define G 9.81f

static kcc_character make_char(float x, float y, float z, const kcc_character_desc *d)
{
    kcc_character ch;
    assert_int_equal(kcc_character_init(&ch, d, (vec3){x, y, z}), KCC_OK);
    return ch;
}

/* A player-like driver: horizontal wish velocity (m/s), gravity accumulated while airborne. */
typedef struct driver {
    float vy;      /* m/s along up */
    float dt;      /* s */
    int   up;      /* 1 or 2 */
} driver;

static uint32_t drive(kcc_character *ch, const kcc_mesh *m, driver *dr, float vx, float vz,
                      kcc_move_result *out)
{
    dr->vy -= G * dr->dt;
    vec3 d = {vx * dr->dt, 0.0f, 0.0f};
    if (dr->up == 2) {
        d[1] = vz * dr->dt;
        d[2] = dr->vy * dr->dt;
    } else {
        d[1] = dr->vy * dr->dt;
        d[2] = vz * dr->dt;
    }
    kcc_move_result r;
    kcc_character_move(ch, m, d, &r);
    if (r.flags & KCC_MOVE_ON_GROUND)
        dr->vy = 0.0f;
    if ((r.flags & KCC_MOVE_HIT_CEILING) && dr->vy > 0.0f)
        dr->vy = 0.0f;
    if (out)
        *out = r;
    return r.flags;
}

/* Drives `frames` idle frames and checks the character ends resting on a floor at floor_y. */
static void rests_on_floor(kcc_character *ch, const kcc_mesh *m, driver *dr, int frames, float floor_y,
                           double tol)
{
    for (int i = 0; i < frames; ++i)
        drive(ch, m, dr, 0.0f, 0.0f, NULL);
    assert_true(ch->on_ground);
    assert_float_equal(ch->position[1], floor_y + HY + SKIN, tol);
}

static bool overlaps(const kcc_character *ch, const kcc_mesh *m)
{
    vec3 box[2];
    kcc_character_box(ch, box);
    for (int i = 0; i < 3; ++i) {
        box[0][i] += KCC_PENETRATION_TOLERANCE;
        box[1][i] -= KCC_PENETRATION_TOLERANCE;
    }
    return kcc_mesh_overlap_aabb(m, (const vec3 *)box, NULL, 0) > 0;
}

/* ---------------------------------------------------------------- falling, flat ground */

/* Dropped from 5 m onto a floor at y = 0, it comes to rest with its feet a skin above the floor:
 * centre y = 0.9 + 0.002. */
static void falling_character_lands_on_the_floor(void **state)
{
    (void)state;
    scene s = {0};
    sc_floor(&s, 0.0f, 10.0f, 4);
    kcc_mesh *m = sc_build(&s);
    kcc_character ch = make_char(0.0f, 5.0f, 0.0f, NULL);
    driver dr = {0.0f, 1.0f / 60.0f, 1};
    int landed = 0;
    for (int i = 0; i < 120; ++i) {
        uint32_t f = drive(&ch, m, &dr, 0.0f, 0.0f, NULL);
        landed += (f & KCC_MOVE_LANDED) != 0;
        assert_false(overlaps(&ch, m));
    }
    assert_int_equal(landed, 1);
    assert_true(ch.on_ground);
    assert_float_equal(ch.position[1], HY + SKIN, 1e-5);
    assert_float_equal(ch.ground_normal[1], 1.0f, 1e-6);
    kcc_mesh_destroy(m);
}

/* 5 m/s for 2 s on a floor of 16 x 16 quads (512 triangles): 10 m travelled, height unchanged
 * every frame, never a wall hit at a seam. */
static void walking_on_a_floor_of_many_triangles_is_smooth(void **state)
{
    (void)state;
    scene s = {0};
    sc_floor(&s, 0.0f, 20.0f, 16);
    kcc_mesh *m = sc_build(&s);
    kcc_character ch = make_char(-6.0f, HY + SKIN, -5.0f, NULL);
    driver dr = {0.0f, 1.0f / 60.0f, 1};
    drive(&ch, m, &dr, 0, 0, NULL);
    for (int i = 0; i < 120; ++i) {
        uint32_t f = drive(&ch, m, &dr, 5.0f * 0.8f, 5.0f * 0.6f, NULL);
        assert_true(f & KCC_MOVE_ON_GROUND);
        assert_false(f & (KCC_MOVE_HIT_WALL | KCC_MOVE_STEPPED_UP | KCC_MOVE_SLID));
        assert_float_equal(ch.position[1], HY + SKIN, 1e-5);
    }
    assert_float_equal(ch.position[0], -6.0f + 8.0f, 1e-3);
    assert_float_equal(ch.position[2], -5.0f + 6.0f, 1e-3);
    kcc_mesh_destroy(m);
}

/* A floor of 5 cm quads (12,800 triangles over 4 x 4 m) puts more triangles near the box than the
 * controller's cache holds: the move flags CONTACT_CAP, queries the tree instead, and still walks
 * at full speed at constant height without a wall hit; a wall of such quads still stops it. */
static void dense_mesh_beyond_the_contact_cache_still_walks_and_blocks(void **state)
{
    (void)state;
    scene s = {0};
    sc_floor(&s, 0.0f, 2.0f, 80);
    for (int i = 0; i < 40; ++i)
        for (int j = 0; j < 40; ++j) {
            float z0 = -1.0f + 0.05f * (float)i, y0 = 0.05f * (float)j;
            const float a[3] = {1.5f, y0, z0}, b[3] = {1.5f, y0, z0 + 0.05f},
                        c[3] = {1.5f, y0 + 0.05f, z0 + 0.05f}, d[3] = {1.5f, y0 + 0.05f, z0};
            sc_quad(&s, a, b, c, d);
        }
    kcc_mesh *m = sc_build(&s);
    kcc_character ch = make_char(-1.5f, HY + SKIN, 0.0f, NULL);
    driver dr = {0.0f, 1.0f / 60.0f, 1};
    int capped = 0;
    for (int i = 0; i < 30; ++i) { /* 1 m at 2 m/s, clear of the wall */
        kcc_move_result r;
        uint32_t f = drive(&ch, m, &dr, 2.0f, 0.0f, &r);
        capped += (f & KCC_MOVE_CONTACT_CAP) != 0;
        assert_true(f & KCC_MOVE_ON_GROUND);
        assert_false(f & (KCC_MOVE_HIT_WALL | KCC_MOVE_STEPPED_UP));
        assert_float_equal(ch.position[1], HY + SKIN, 1e-5);
    }
    assert_true(capped > 0);
    assert_float_equal(ch.position[0], -0.5f, 1e-3);
    for (int i = 0; i < 60; ++i) {
        drive(&ch, m, &dr, 2.0f, 0.0f, NULL);
        assert_false(overlaps(&ch, m));
    }
    assert_float_equal(ch.position[0], 1.5f - HX - SKIN, 1e-4);
    kcc_mesh_destroy(m);
}

/* ---------------------------------------------------------------- slopes */

/* A ramp rising along +x at `deg` from x = 0, wide in z, with a floor at y = 0 before it. */
static kcc_mesh *ramp_scene(float deg, bool zup)
{
    scene s = {0};
    s.zup = zup;
    float t = tanf(deg * 3.14159265f / 180.0f);
    float len = 40.0f;
    const float f0[3] = {-20, 0, -20}, f1[3] = {0, 0, -20}, f2[3] = {0, 0, 20}, f3[3] = {-20, 0, 20};
    sc_quad(&s, f0, f3, f2, f1);
    float top = fminf(len * t, 200.0f);
    float run = top / t;
    const float r0[3] = {0, 0, -20}, r1[3] = {run, top, -20}, r2[3] = {run, top, 20}, r3[3] = {0, 0, 20};
    sc_quad(&s, r0, r3, r2, r1);
    return sc_build(&s);
}

/* Where a box of half width HX rests on the ramp with its lower-left edge... : the uphill edge ray
 * (x + HX) finds the ramp at (x + HX) tan, so the centre is at (x + HX) tan + HY + skin. */
static float ramp_rest_y(float x, float deg)
{
    float t = tanf(deg * 3.14159265f / 180.0f);
    return fmaxf(0.0f, (x + HX) * t) + HY + SKIN;
}

/* A plane y = x tan(a) (a of 10, 30 and 44 degrees, limit 45) walked straight up from x = -10
 * with step_height 0, 0.5 mm and 5 cm, at 1 and 6 m/s, 30, 120 and 360 Hz: on the ground every
 * frame, the full horizontal speed every frame, the box resting a skin above the plane under its
 * uphill edge: y = (x + HX) tan(a) + skin + HY. Rule: a walk looks for ground step_height plus the
 * rise of the plane stood on above the feet, so the slope's own rise is never a ledge, whatever the
 * step height (0 included). Also a 65-degree slope (limit 70) at 10 m/s, 60 Hz with the default
 * 0.35 m step (a rise of 0.357 m a move). A riser on a 30-degree slope is still a step: walked
 * into at 6 m/s, 0.33 m is climbed, 0.37 m blocks (the slope's rise is not counted into a
 * ledge's). */
static void walking_up_a_slope_keeps_its_speed_whatever_the_step_height(void **state)
{
    (void)state;
    const float angles[3] = {10.0f, 30.0f, 44.0f}, steps[3] = {0.0f, 0.0005f, 0.05f}, speeds[2] = {1.0f, 6.0f},
                rates[3] = {30.0f, 120.0f, 360.0f};
    for (int k = 0; k < 4; ++k) {
        const float deg = k < 3 ? angles[k] : 65.0f, t = tanf(deg * 3.14159265f / 180.0f);
        scene s = {0};
        const float a[3] = {-20.0f, -20.0f * t, -20.0f}, b[3] = {20.0f, 20.0f * t, -20.0f},
                    c[3] = {20.0f, 20.0f * t, 20.0f}, e[3] = {-20.0f, -20.0f * t, 20.0f};
        sc_quad(&s, a, e, c, b);
        kcc_mesh *m = sc_build(&s);
        for (int st = 0; st < (k < 3 ? 3 : 1); ++st)
            for (int v = 0; v < (k < 3 ? 2 : 1); ++v)
                for (int h = 0; h < (k < 3 ? 3 : 1); ++h) {
                    kcc_character_desc d = kcc_character_default_desc();
                    float speed = speeds[v], hz = rates[h];
                    if (k < 3) {
                        d.step_height = steps[st];
                    } else {
                        d.max_slope_deg = 70.0f;
                        speed = 10.0f;
                        hz = 60.0f;
                    }
                    kcc_character ch = make_char(-10.0f, (HX - 10.0f) * t + SKIN + HY, 0.0f, &d);
                    driver dr = {0.0f, 1.0f / hz, 1};
                    drive(&ch, m, &dr, 0.0f, 0.0f, NULL);
                    for (int i = 0; i < (int)hz; ++i) { /* one second: 6 m at most, on the plane */
                        const float x0 = ch.position[0];
                        uint32_t f = drive(&ch, m, &dr, speed, 0.0f, NULL);
                        if (!(f & KCC_MOVE_ON_GROUND) || fabsf(ch.position[0] - x0 - speed / hz) > 1e-4f)
                            fail_msg("%g-degree slope, step %g, %g m/s at %g Hz: frame %d went %g m, flags 0x%x",
                                     (double)deg, (double)d.step_height, (double)speed, (double)hz, i,
                                     (double)(ch.position[0] - x0), f);
                        assert_float_equal(ch.position[1], (ch.position[0] + HX) * t + SKIN + HY, 1e-4);
                    }
                }
        kcc_mesh_destroy(m);
    }
    /* A riser at x = 5 on a 30-degree slope, a plateau on top */
    const float t = tanf(30.0f * 3.14159265f / 180.0f), risers[2] = {0.33f, 0.37f};
    for (int k = 0; k < 2; ++k) {
        const float y0 = 5.0f * t, y1 = y0 + risers[k];
        scene s = {0};
        const float a[3] = {-20.0f, -20.0f * t, -20.0f}, b[3] = {5.0f, y0, -20.0f}, c[3] = {5.0f, y0, 20.0f},
                    e[3] = {-20.0f, -20.0f * t, 20.0f};
        const float r0[3] = {5.0f, y1, -20.0f}, r1[3] = {5.0f, y1, 20.0f}, q0[3] = {20.0f, y1, -20.0f},
                    q1[3] = {20.0f, y1, 20.0f};
        sc_quad(&s, a, e, c, b);
        sc_quad(&s, b, c, r1, r0);
        sc_quad(&s, r0, r1, q1, q0);
        kcc_mesh *m = sc_build(&s);
        kcc_character ch = make_char(2.0f, (2.0f + HX) * t + SKIN + HY, 0.0f, NULL);
        driver dr = {0.0f, 1.0f / 60.0f, 1};
        for (int i = 0; i < 60; ++i) {
            drive(&ch, m, &dr, 6.0f, 0.0f, NULL);
            assert_false(overlaps(&ch, m));
        }
        if (k == 0) { /* on the plateau */
            assert_float_equal(ch.position[1], y1 + SKIN + HY, 1e-4);
            assert_true(ch.position[0] > 7.0f);
        } else { /* against the riser, on the slope */
            assert_true(ch.position[0] < 5.0f - HX);
            assert_true(ch.position[1] < y0 + SKIN + HY + 1e-4f);
        }
        kcc_mesh_destroy(m);
    }
}

/* Walkable slopes (5-45 degrees, limit 50): walking up at 4 m/s keeps the full horizontal speed and
 * the height the ramp gives; walking down keeps the character on the ground every frame; standing
 * still with gravity does not creep. */
static void walkable_slopes_are_walked_up_and_down_without_losing_ground(void **state)
{
    (void)state;
    kcc_character_desc d = kcc_character_default_desc();
    d.max_slope_deg = 50.0f;
    for (int deg = 5; deg <= 45; deg += 10) {
        kcc_mesh *m = ramp_scene((float)deg, false);
        kcc_character ch = make_char(-3.0f, HY + SKIN, 0.0f, &d);
        driver dr = {0.0f, 1.0f / 60.0f, 1};
        drive(&ch, m, &dr, 0, 0, NULL);
        for (int i = 0; i < 150; ++i) { /* 10 m of horizontal travel */
            uint32_t f = drive(&ch, m, &dr, 4.0f, 0.0f, NULL);
            assert_true(f & KCC_MOVE_ON_GROUND);
            assert_false(f & KCC_MOVE_HIT_WALL);
        }
        assert_float_equal(ch.position[0], 7.0f, 1e-3);
        assert_float_equal(ch.position[1], ramp_rest_y(7.0f, (float)deg), 2e-3);
        /* standing still for 2 s: no creep */
        vec3 p;
        glm_vec3_copy(ch.position, p);
        for (int i = 0; i < 120; ++i)
            assert_true(drive(&ch, m, &dr, 0.0f, 0.0f, NULL) & KCC_MOVE_ON_GROUND);
        assert_float_equal(ch.position[0], p[0], 1e-6);
        assert_float_equal(ch.position[1], p[1], 1e-6);
        /* back down at 8 m/s: grounded every frame, across the crease onto the floor */
        for (int i = 0; i < 90; ++i) {
            uint32_t f = drive(&ch, m, &dr, -8.0f, 0.0f, NULL);
            assert_true(f & KCC_MOVE_ON_GROUND);
        }
        assert_float_equal(ch.position[0], -5.0f, 1e-3);
        assert_float_equal(ch.position[1], HY + SKIN, 1e-4);
        kcc_mesh_destroy(m);
    }
}

/* Ramps of 10 to 40 degrees (limit 50) between the floor and a plateau, walked up at 6 m/s: every
 * frame is on the ground and none reports a step. Rule: crossing onto the plateau, the frame's rise
 * is judged against the larger of the rises of the two ground planes (the ramp under the box at the
 * start, the plateau at the end), so a rise the ramp explains is no step. */
static void crossing_a_crease_onto_flatter_ground_is_not_a_step(void **state)
{
    (void)state;
    kcc_character_desc d = kcc_character_default_desc();
    d.max_slope_deg = 50.0f;
    for (int deg = 10; deg <= 40; deg += 10) {
        scene s = {0};
        const float t = tanf((float)deg * 3.14159265f / 180.0f), run = 3.04f, top = run * t;
        const float f0[3] = {-20, 0, -20}, f1[3] = {0, 0, -20}, f2[3] = {0, 0, 20}, f3[3] = {-20, 0, 20};
        sc_quad(&s, f0, f3, f2, f1);
        const float r0[3] = {0, 0, -20}, r1[3] = {run, top, -20}, r2[3] = {run, top, 20},
                    r3[3] = {0, 0, 20};
        sc_quad(&s, r0, r3, r2, r1);
        const float p0[3] = {run, top, -20}, p1[3] = {20, top, -20}, p2[3] = {20, top, 20},
                    p3[3] = {run, top, 20};
        sc_quad(&s, p0, p3, p2, p1);
        kcc_mesh *m = sc_build(&s);
        kcc_character ch = make_char(-3.0f, HY + SKIN, 0.0f, &d);
        driver dr = {0.0f, 1.0f / 60.0f, 1};
        drive(&ch, m, &dr, 0, 0, NULL);
        int steps = 0;
        for (int i = 0; i < 100; ++i) { /* 10 m: up the ramp and 4 m onto the plateau */
            uint32_t f = drive(&ch, m, &dr, 6.0f, 0.0f, NULL);
            assert_true(f & KCC_MOVE_ON_GROUND);
            steps += (f & KCC_MOVE_STEPPED_UP) != 0;
        }
        if (steps != 0)
            fail_msg("%d-degree ramp: %d frames report a step", deg, steps);
        assert_float_equal(ch.position[0], 7.0f, 1e-3);
        assert_float_equal(ch.position[1], top + HY + SKIN, 1e-4);
        kcc_mesh_destroy(m);
    }
}

/* Steep slopes (55-85 degrees, limit 50): a character on one slides down with a constant downward
 * displacement s per frame projected on the slope plane: dx = -s sin cos, dy = -s sin^2 (the
 * ramp rises along +x, so down-slope is -x). Walking into it does not climb it. */
static void steep_slopes_slide_down_and_cannot_be_climbed(void **state)
{
    (void)state;
    kcc_character_desc d = kcc_character_default_desc();
    d.max_slope_deg = 50.0f;
    for (int deg = 55; deg <= 85; deg += 10) {
        float a = (float)deg * 3.14159265f / 180.0f;
        kcc_mesh *m = ramp_scene((float)deg, false);
        /* start well up the slope, just clear of it: lower-left corner above the ramp surface */
        float x = 3.0f;
        float y = (x + HX) * tanf(a) + HY + 0.05f;
        kcc_character ch = make_char(x, y, 0.0f, &d);
        const float s = 0.05f;
        kcc_move_result r;
        vec3 down = {0.0f, -s, 0.0f};
        for (int i = 0; i < 5; ++i)
            kcc_character_move(&ch, m, down, &r); /* reach the slope */
        for (int i = 0; i < 10; ++i) {
            kcc_character_move(&ch, m, down, &r);
            assert_false(r.flags & KCC_MOVE_ON_GROUND);
            assert_true(r.flags & KCC_MOVE_ON_STEEP);
            assert_float_equal(r.moved[0], -s * sinf(a) * cosf(a), 2e-4);
            assert_float_equal(r.moved[1], -s * sinf(a) * sinf(a), 2e-4);
            assert_false(overlaps(&ch, m));
        }
        kcc_mesh_destroy(m);
        /* walking into it from the floor: never gets higher than a skin above the floor */
        m = ramp_scene((float)deg, false);
        ch = make_char(-2.0f, HY + SKIN, 0.0f, &d);
        driver dr = {0.0f, 1.0f / 60.0f, 1};
        float maxy = 0.0f;
        for (int i = 0; i < 240; ++i) {
            drive(&ch, m, &dr, 5.0f, 1.0f, NULL);
            maxy = fmaxf(maxy, ch.position[1]);
            assert_false(overlaps(&ch, m));
        }
        /* a box corner may rest on the slope's foot; it must not gain more than that */
        assert_true(maxy < HY + SKIN + 0.1f);
        assert_true(ch.position[0] < 0.0f);
        kcc_mesh_destroy(m);
    }
}

/* Running at a steep slope's foot at an angle (20 m/s across, 10 m/s along it, 60 Hz; limit 50):
 * every frame carries the box 0.33 m toward the slope, more than the band at its foot that lies
 * under step height (0.35 / tan, 0.03-0.25 m). The box above step height alone would reach past
 * the foot before meeting the slope, and the settle there refuses the steep ground under the
 * feet; the move sweeps again with the whole box, stops at the foot (centre x = -HX less a skin)
 * and slides along it at the full 10 m/s: 1/6 m a frame, on the floor, never stuck. */
static void running_along_a_steep_slopes_foot_slides_at_full_speed(void **state)
{
    (void)state;
    kcc_character_desc d = kcc_character_default_desc();
    d.max_slope_deg = 50.0f;
    for (int deg = 55; deg <= 85; deg += 10) {
        kcc_mesh *m = ramp_scene((float)deg, false);
        kcc_character ch = make_char(-3.0f, HY + SKIN, -10.0f, &d);
        driver dr = {0.0f, 1.0f / 60.0f, 1};
        drive(&ch, m, &dr, 0, 0, NULL);
        for (int i = 0; i < 120; ++i) {
            kcc_move_result r;
            const float z0 = ch.position[2];
            uint32_t f = drive(&ch, m, &dr, 20.0f, 10.0f, &r);
            assert_false(overlaps(&ch, m));
            assert_true(f & KCC_MOVE_ON_GROUND);
            if (i < 9) /* 2.7 m to the foot: 8 frames and part of the ninth */
                continue;
            if (f & KCC_MOVE_STUCK)
                fail_msg("%d-degree slope: stuck at frame %d, x %g", deg, i, (double)ch.position[0]);
            assert_float_equal(ch.position[2] - z0, 10.0f / 60.0f, 1e-4);
            assert_true(ch.position[0] > -HX - 2.0f * SKIN && ch.position[0] <= -HX);
            assert_float_equal(ch.position[1], HY + SKIN, 1e-4);
        }
        kcc_mesh_destroy(m);
    }
}

/* The same along a foot that lies off the axes: a floor and a 50 or 75-degree slope whose foot
 * line through the origin is turned by phi (every 20 degrees), walked into at 24, 52 and 66
 * degrees off its uphill direction at 5 and 9 m/s, 360 Hz. Once at the foot, the box slides along
 * it at the tangential part of the input (within 2%), on the floor, never stuck. Rule: a box with
 * an edge in the foot (within the overlap checks' half-skin slack) that slides within a millionth
 * of a radian of parallel to the foot's plane does not go deeper into the slope: the slide is
 * taken. */
static void sliding_along_a_steep_foot_off_the_axes_never_sticks(void **state)
{
    (void)state;
    const float hz = 360.0f, dt = 1.0f / hz, D = 4.0f, W = 40.0f;
    const float slopes[2] = {50.0f, 75.0f}, headings[3] = {24.0f, 52.0f, 66.0f}, speeds[2] = {5.0f, 9.0f};
    for (int k = 0; k < 2; ++k)
        for (int phi_deg = 0; phi_deg < 360; phi_deg += 20) {
            const float phi = (float)phi_deg * 3.14159265f / 180.0f, dx = cosf(phi), dz = sinf(phi);
            const float H = D * tanf(slopes[k] * 3.14159265f / 180.0f);
            scene s = {0};
            const float c1[3] = {W * dz, 0.0f, -W * dx}, c2[3] = {-W * dz, 0.0f, W * dx};
            const float f1[3] = {c1[0] - 30.0f * dx, 0.0f, c1[2] - 30.0f * dz},
                        f2[3] = {c2[0] - 30.0f * dx, 0.0f, c2[2] - 30.0f * dz};
            const float t1[3] = {c1[0] + D * dx, H, c1[2] + D * dz}, t2[3] = {c2[0] + D * dx, H, c2[2] + D * dz};
            sc_quad(&s, f1, f2, c2, c1);
            sc_quad(&s, c1, c2, t2, t1);
            kcc_mesh *m = sc_build(&s);
            for (int h = 0; h < 3; ++h)
                for (int v = 0; v < 2; ++v) {
                    const float psi = phi + headings[h] * 3.14159265f / 180.0f;
                    const float vx = speeds[v] * cosf(psi), vz = speeds[v] * sinf(psi);
                    const float along = speeds[v] * sinf(headings[h] * 3.14159265f / 180.0f); /* m/s */
                    kcc_character ch = make_char(-dx, HY + SKIN, -dz, NULL);
                    driver dr = {0.0f, dt, 1};
                    float t0 = 0.0f;
                    for (int i = 0; i < 540; ++i) {
                        kcc_move_result r;
                        uint32_t f = drive(&ch, m, &dr, vx, vz, &r);
                        assert_true(f & KCC_MOVE_ON_GROUND);
                        assert_float_equal(ch.position[1], HY + SKIN, 1e-4);
                        if (i < 270) /* at most 1 m to the foot: there by 0.75 s */
                            continue;
                        if (f & KCC_MOVE_STUCK)
                            fail_msg("%g-degree slope turned %d, heading %g, %g m/s: stuck at frame %d",
                                     (double)slopes[k], phi_deg, (double)headings[h], (double)speeds[v], i);
                        const float t = -ch.position[0] * dz + ch.position[2] * dx; /* along the foot */
                        if (i == 270)
                            t0 = t;
                        else if (i == 539)
                            assert_float_equal((t - t0) / (269.0f * dt), along, 0.02f * along);
                    }
                    assert_false(overlaps(&ch, m));
                }
            kcc_mesh_destroy(m);
        }
}

/* A V-shaped gully along x: sides at `a` and `b` degrees meeting on the line y = -x tan(tilt), z = 0,
 * rising 3 m. */
static kcc_mesh *gully_scene(float a, float b, float tilt)
{
    scene s = {0};
    const float ta = tanf(a * 3.14159265f / 180.0f), tb = tanf(b * 3.14159265f / 180.0f);
    const float tt = tanf(tilt * 3.14159265f / 180.0f), L = 20.0f, H = 3.0f;
    const float a0[3] = {-L, L * tt, 0.0f}, a1[3] = {L, -L * tt, 0.0f}, a2[3] = {L, H - L * tt, H / ta},
                a3[3] = {-L, H + L * tt, H / ta};
    const float b0[3] = {-L, L * tt, 0.0f}, b1[3] = {-L, H + L * tt, -H / tb},
                b2[3] = {L, H - L * tt, -H / tb}, b3[3] = {L, -L * tt, 0.0f};
    sc_quad(&s, a0, a1, a2, a3);
    sc_quad(&s, b0, b1, b2, b3);
    return sc_build(&s);
}

/* A funnel: two sides too steep to stand on, but together they hold the box up (Godot's and Jolt's
 * funnels). Dropped in, the box lands and stands, on the ground every frame, so the caller's fall
 * speed does not grow while it hangs there; it walks along the gully, down a gentle one too, and
 * jumps out of it. A gully whose floor line is steeper than the slope limit still slides. Rule:
 * steep faces that hold the box up together are ground, and a fall they stop lands on them. */
static void a_gully_of_steep_slopes_holds_the_box(void **state)
{
    (void)state;
    const float sides[3][2] = {{70.0f, 70.0f}, {60.0f, 85.0f}, {80.0f, 55.0f}};
    for (int k = 0; k < 3; ++k)
        for (int t = 0; t < 2; ++t) {
            const float tilt = t ? 10.0f : 0.0f;
            kcc_mesh *m = gully_scene(sides[k][0], sides[k][1], tilt);
            kcc_character ch = make_char(-10.0f, 4.0f + 10.0f * tanf(tilt * 3.14159265f / 180.0f), 0.0f, NULL);
            driver dr = {0.0f, 1.0f / 60.0f, 1};
            int landed = -1;
            for (int i = 0; i < 240; ++i) {
                kcc_move_result r;
                const float x0 = ch.position[0];
                uint32_t f = drive(&ch, m, &dr, i >= 90 ? 3.0f : 0.0f, 0.0f, &r);
                assert_false(overlaps(&ch, m));
                if (landed < 0 && (f & KCC_MOVE_ON_GROUND))
                    landed = i;
                if (landed < 0)
                    continue;
                if (!(f & KCC_MOVE_ON_GROUND))
                    fail_msg("%g/%g-degree gully, tilt %g: off the ground at frame %d (landed at %d)",
                             (double)sides[k][0], (double)sides[k][1], (double)tilt, i, landed);
                assert_true(r.ground_normal[1] >= cosf(45.0f * 3.14159265f / 180.0f));
                if (i >= 91) /* walking along it at full speed */
                    assert_float_equal(ch.position[0] - x0, 3.0f / 60.0f, 1e-4);
            }
            assert_in_range(landed, 1, 60);
            if (k == 0 && t == 0) { /* symmetric: resting on both sides a skin above, facing straight up */
                const float rest = HX * tanf(70.0f * 3.14159265f / 180.0f) + SKIN + HY;
                assert_float_equal(ch.position[1], rest, 1e-4);
                assert_float_equal(ch.position[2], 0.0f, 1e-5);
                /* and a jump leaves it */
                dr.vy = 5.0f;
                drive(&ch, m, &dr, 0.0f, 0.0f, NULL);
                assert_true(ch.position[1] > rest + 0.05f);
            }
            kcc_mesh_destroy(m);
        }
    /* floor line at 50 degrees, steeper than the 45-degree limit: slides down, never on the ground */
    kcc_mesh *m = gully_scene(70.0f, 70.0f, 50.0f);
    kcc_character ch = make_char(-10.0f, 4.0f + 10.0f * tanf(50.0f * 3.14159265f / 180.0f), 0.0f, NULL);
    driver dr = {0.0f, 1.0f / 60.0f, 1};
    for (int i = 0; i < 120; ++i)
        assert_false(drive(&ch, m, &dr, 0.0f, 0.0f, NULL) & KCC_MOVE_ON_GROUND);
    assert_true(ch.position[0] > -5.0f); /* slid some 8 m along it in 2 s */
    kcc_mesh_destroy(m);
}

/* A steep slope (rising along -x from its foot at x = 0) leaning on a vertical wall at x = 0: the
 * box slides down the slope into the wall and can go no further, so it stands there (Jolt's and
 * Godot's funnel). Two callers: one that adds gravity every frame, one that adds none while on the
 * ground. From the frame it lands: on the ground every frame, resting against the wall (a gap of at
 * most two skins) on the slope a skin above its surface (height worked out by hand from the gap),
 * and walking along the wedge at full speed. Rule: the funnel check counts the faces the resting
 * box would meet sliding down the slope (the wall, which the probe's downward sweep does not see),
 * for both callers alike. A wall along the slope's fall line holds nothing: the box slides down
 * beside it. */
static void a_steep_slope_leaning_on_a_wall_holds_the_box(void **state)
{
    (void)state;
    const float angles[3] = {60.0f, 70.0f, 80.0f}, L = 20.0f, H = 4.0f;
    for (int k = 0; k < 3; ++k)
        for (int caller = 0; caller < 2; ++caller) {
            const float ta = tanf(angles[k] * 3.14159265f / 180.0f);
            scene s = {0};
            const float s0[3] = {0.0f, 0.0f, -L}, s1[3] = {0.0f, 0.0f, L}, s2[3] = {-H / ta, H, L},
                        s3[3] = {-H / ta, H, -L};
            const float w0[3] = {0.0f, 0.0f, -L}, w1[3] = {0.0f, H, -L}, w2[3] = {0.0f, H, L},
                        w3[3] = {0.0f, 0.0f, L};
            sc_quad(&s, s0, s1, s2, s3);
            sc_quad(&s, w0, w1, w2, w3);
            kcc_mesh *m = sc_build(&s);
            kcc_character ch = make_char(-0.5f * H / ta, H + 1.0f, -10.0f, NULL);
            const float dt = 1.0f / 60.0f;
            float vy = 0.0f;
            int landed = -1;
            for (int i = 0; i < 300; ++i) {
                if (!(caller == 1 && ch.on_ground))
                    vy -= G * dt;
                const float vz = i >= 150 ? 3.0f : 0.0f, z0 = ch.position[2];
                kcc_move_result r;
                kcc_character_move(&ch, m, (vec3){0.0f, vy * dt, vz * dt}, &r);
                if ((r.flags & KCC_MOVE_ON_GROUND) && vy < 0.0f)
                    vy = 0.0f;
                assert_false(overlaps(&ch, m));
                if (landed < 0 && (r.flags & KCC_MOVE_ON_GROUND))
                    landed = i;
                if (landed < 0)
                    continue;
                if (!(r.flags & KCC_MOVE_ON_GROUND))
                    fail_msg("%g-degree slope, caller %d: off the ground at frame %d (landed at %d)",
                             (double)angles[k], caller, i, landed);
                if (i < 120)
                    continue;
                const float gap = -HX - ch.position[0];
                assert_in_range(gap * 1e6f, 0.0, 2.0 * SKIN * 1e6);
                assert_float_equal(ch.position[1], (2.0f * HX + gap) * ta + SKIN + HY, 1e-4);
                if (i >= 151)
                    assert_float_equal(ch.position[2] - z0, 3.0f * dt, 1e-5);
            }
            assert_in_range(landed, 1, 90);
            kcc_mesh_destroy(m);
        }
    /* the wall along the fall line (the plane z = 0, the box beside it): down the slope it goes */
    scene s = {0};
    const float ta = tanf(70.0f * 3.14159265f / 180.0f);
    const float s0[3] = {0.0f, 0.0f, -L}, s1[3] = {0.0f, 0.0f, L}, s2[3] = {-H / ta, H, L}, s3[3] = {-H / ta, H, -L};
    const float w0[3] = {-L, -1.0f, 0.0f}, w1[3] = {-L, H, 0.0f}, w2[3] = {L, H, 0.0f}, w3[3] = {L, -1.0f, 0.0f};
    sc_quad(&s, s0, s1, s2, s3);
    sc_quad(&s, w0, w1, w2, w3);
    kcc_mesh *m = sc_build(&s);
    kcc_character ch = make_char(-1.0f, (1.0f + HX) * ta + HY + 0.01f, HX + SKIN, NULL); /* just above it */
    float vy = 0.0f;
    for (int i = 0; i < 60; ++i) {
        if (!ch.on_ground)
            vy -= G / 60.0f;
        kcc_move_result r;
        kcc_character_move(&ch, m, (vec3){0.0f, vy / 60.0f, 0.0f}, &r);
        assert_false(r.flags & KCC_MOVE_ON_GROUND);
        assert_false(overlaps(&ch, m));
    }
    assert_true(ch.position[1] < HY); /* slid down past the foot (3.6 m) within a second */
    kcc_mesh_destroy(m);
}

/* Walkable ground (10 and 25 degrees, falling along +z) meeting a steep face (60, 73 and 85 degrees,
 * rising along -x) along a crease that falls with it, as terrain often does. The box walks down
 * along the crease at 5 m/s pressing into the steep face at 1 m/s, for callers that add gravity
 * every frame and on the ground none. On the ground every frame, and the full 5 m/s along the
 * crease (at least). Rule: a walk that leaves an edge of the box over the face's lip, with only the
 * steep face under the box, follows the face down (swept, sliding along it) onto the walkable
 * ground within max(ground_snap, step_height), as it follows stairs down. */
static void walking_down_along_a_steep_faces_foot_stays_on_the_ground(void **state)
{
    (void)state;
    const float steep[3] = {60.0f, 73.0f, 85.0f}, walk[2] = {10.0f, 25.0f}, L = 30.0f;
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 2; ++b)
            for (int caller = 0; caller < 2; ++caller) {
                const float ts = tanf(steep[a] * 3.14159265f / 180.0f), tw = tanf(walk[b] * 3.14159265f / 180.0f);
                scene s = {0};
                const float w0[3] = {0.0f, tw * L, -L}, w1[3] = {L, tw * L, -L}, w2[3] = {L, -tw * L, L},
                            w3[3] = {0.0f, -tw * L, L};
                const float s0[3] = {-3.0f, tw * L + 3.0f * ts, -L}, s1[3] = {0.0f, tw * L, -L},
                            s2[3] = {0.0f, -tw * L, L}, s3[3] = {-3.0f, -tw * L + 3.0f * ts, L};
                sc_quad(&s, w0, w3, w2, w1);
                sc_quad(&s, s0, s3, s2, s1);
                kcc_mesh *m = sc_build(&s);
                kcc_character ch = make_char(0.5f, tw * 20.3f + SKIN + HY, -20.0f, NULL);
                const float dt = 1.0f / 60.0f;
                float vy = 0.0f, z0 = 0.0f;
                for (int i = 0; i < 300; ++i) {
                    if (!(caller == 1 && ch.on_ground))
                        vy -= G * dt;
                    kcc_move_result r;
                    const float go = i > 0 ? dt : 0.0f; /* the first frame lands */
                    kcc_character_move(&ch, m, (vec3){-1.0f * go, vy * dt, 5.0f * go}, &r);
                    if ((r.flags & KCC_MOVE_ON_GROUND) && vy < 0.0f)
                        vy = 0.0f;
                    assert_false(overlaps(&ch, m));
                    if (i == 59)
                        z0 = ch.position[2];
                    if (!(r.flags & KCC_MOVE_ON_GROUND))
                        fail_msg("%g-degree face, %g-degree ground, caller %d: off the ground at frame %d, "
                                 "x %g z %g", (double)steep[a], (double)walk[b], caller, i,
                                 (double)ch.position[0], (double)ch.position[2]);
                }
                assert_true(ch.position[2] - z0 >= 0.99f * 5.0f * 240.0f * dt);
                kcc_mesh_destroy(m);
            }
}

/* Walkable ground rising toward a steep face (0, 8 and 16 degrees; faces of 57, 70 and 85
 * degrees, foot along z at x = 0), falling 10 degrees, level or rising 10 degrees along the foot,
 * walked along at 4 m/s pressing into the face at 0.5 m/s, at 60, 144 and 240 Hz: on the ground
 * every frame after landing, never STUCK, and at least 95% of the 4 m/s along the foot. Rule: steep
 * ground the walk goes into is a wall at any height under the step (the upper box passes over the
 * foot): the whole box slides along the foot and never takes the face for ground walked onto. */
static void walking_along_a_steep_faces_foot_on_tilted_ground_stays_on_the_ground(void **state)
{
    (void)state;
    const float steep[3] = {57.0f, 70.0f, 85.0f}, across[3] = {0.0f, 8.0f, 16.0f}, along[3] = {-10.0f, 0.0f, 10.0f},
                rates[3] = {60.0f, 144.0f, 240.0f}, L = 30.0f;
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b)
            for (int c = 0; c < 3; ++c) {
                const float ts = tanf(steep[a] * 3.14159265f / 180.0f), tx = tanf(across[b] * 3.14159265f / 180.0f),
                            tz = tanf(along[c] * 3.14159265f / 180.0f);
                /* ground y = -tx x + tz z for x >= 0, the face y = -ts x + tz z for x in [-3, 0] */
                scene s = {0};
                const float g0[3] = {0.0f, -tz * L, -L}, g1[3] = {L, -tx * L - tz * L, -L},
                            g2[3] = {L, -tx * L + tz * L, L}, g3[3] = {0.0f, tz * L, L};
                const float f0[3] = {-3.0f, 3.0f * ts - tz * L, -L}, f3[3] = {-3.0f, 3.0f * ts + tz * L, L};
                sc_quad(&s, g0, g3, g2, g1);
                sc_quad(&s, f0, f3, g3, g0);
                kcc_mesh *m = sc_build(&s);
                for (int r = 0; r < 3; ++r) {
                    kcc_character ch = make_char(0.5f, -0.2f * tx - 20.0f * tz + SKIN + HY + 0.05f, -20.0f, NULL);
                    driver dr = {0.0f, 1.0f / rates[r], 1};
                    const int n = (int)(2.0f * rates[r]), start = (int)(0.1f * rates[r]);
                    float z0 = 0.0f;
                    for (int i = 0; i < n; ++i) {
                        const bool go = i >= start;
                        if (i == start)
                            z0 = ch.position[2];
                        const uint32_t fl = drive(&ch, m, &dr, go ? -0.5f : 0.0f, go ? 4.0f : 0.0f, NULL);
                        assert_false(overlaps(&ch, m));
                        if (go && !(fl & KCC_MOVE_ON_GROUND))
                            fail_msg("%g-degree face, ground %g degrees across and %g along, %g Hz: off the "
                                     "ground at frame %d", (double)steep[a], (double)across[b], (double)along[c],
                                     (double)rates[r], i);
                        if (go && (fl & KCC_MOVE_STUCK))
                            fail_msg("%g-degree face, ground %g degrees across and %g along, %g Hz: stuck at "
                                     "frame %d", (double)steep[a], (double)across[b], (double)along[c],
                                     (double)rates[r], i);
                    }
                    assert_true(ch.position[2] - z0 >= 0.95f * 4.0f * (float)(n - start) / rates[r]);
                }
                kcc_mesh_destroy(m);
            }
}

/* A V-shaped gully of steep faces (50/55 and 60/70 degrees) whose floor line rises 0, 2 and 5
 * degrees along +x, walked up at 10, 22.5 and 45 degrees to the floor line at 4 and 10 m/s, 60 Hz:
 * on the ground every frame, never STUCK, and along the floor line at least 95% of the input's part
 * along it. Rule: when the whole box's slide along the face walked into makes no headway (it runs
 * into the rising floor line), the walk goes along the crease of that face and the ground stood on
 * (here the floor line), or of two faces. */
static void walking_up_a_gully_of_steep_faces_at_an_angle(void **state)
{
    (void)state;
    const float side_a[2] = {50.0f, 60.0f}, side_b[2] = {55.0f, 70.0f}, rise[3] = {0.0f, 2.0f, 5.0f},
                angle[3] = {10.0f, 22.5f, 45.0f}, speed[2] = {4.0f, 10.0f}, L = 30.0f, dt = 1.0f / 60.0f;
    for (int a = 0; a < 2; ++a)
        for (int k = 0; k < 3; ++k) {
            const float t1 = tanf(side_a[a] * 3.14159265f / 180.0f), t2 = tanf(side_b[a] * 3.14159265f / 180.0f),
                        tr = tanf(rise[k] * 3.14159265f / 180.0f);
            /* the floor line along x at z = 0, y = tr x; y = tr x + t1 z for z > 0, tr x - t2 z below */
            scene s = {0};
            const float c0[3] = {-L, -tr * L, 0.0f}, c1[3] = {L, tr * L, 0.0f};
            const float a0[3] = {-L, -tr * L + 3.0f * t1, 3.0f}, a1[3] = {L, tr * L + 3.0f * t1, 3.0f};
            const float b0[3] = {-L, -tr * L + 3.0f * t2, -3.0f}, b1[3] = {L, tr * L + 3.0f * t2, -3.0f};
            sc_quad(&s, c0, a0, a1, c1);
            sc_quad(&s, c0, c1, b1, b0);
            kcc_mesh *m = sc_build(&s);
            for (int j = 0; j < 3; ++j)
                for (int q = 0; q < 2; ++q) {
                    kcc_character ch = make_char(-10.0f, -10.0f * tr + HX * fmaxf(t1, t2) + HY + 0.1f, 0.0f, NULL);
                    driver dr = {0.0f, dt, 1};
                    const float an = angle[j] * 3.14159265f / 180.0f;
                    float x0 = 0.0f;
                    for (int i = 0; i < 180; ++i) {
                        const bool go = i >= 30;
                        if (i == 30)
                            x0 = ch.position[0];
                        const uint32_t fl = drive(&ch, m, &dr, go ? cosf(an) * speed[q] : 0.0f,
                                                  go ? sinf(an) * speed[q] : 0.0f, NULL);
                        assert_false(overlaps(&ch, m));
                        if (go && (!(fl & KCC_MOVE_ON_GROUND) || (fl & KCC_MOVE_STUCK)))
                            fail_msg("faces %g/%g, floor rising %g degrees, walked at %g degrees, %g m/s: %s at "
                                     "frame %d", (double)side_a[a], (double)side_b[a], (double)rise[k],
                                     (double)angle[j], (double)speed[q],
                                     (fl & KCC_MOVE_STUCK) ? "stuck" : "off the ground", i);
                    }
                    assert_true(ch.position[0] - x0 >= 0.95f * cosf(an) * speed[q] * 150.0f * dt);
                }
            kcc_mesh_destroy(m);
        }
}

/* A wall meeting a steep slope's foot (69 degrees, foot along z at x = 1) at 61 degrees, as in
 * oa_dm4. Walking almost straight into the slope from along the wall, the box slides up the wall
 * into the corner and on out of it along the foot, at the tangential part of the input. Rule: the
 * slide goes along the first plane met whose clip leads into no other (here the slope's foot), not
 * only the first it goes into (the averaged normal, whose crease with the slope is a dead end). */
static void leaving_a_corner_along_a_steep_slopes_foot(void **state)
{
    (void)state;
    scene s = {0};
    sc_floor(&s, 0.0f, 10.0f, 2);
    const float s0[3] = {1.0f, 0.0f, -1.0f}, s1[3] = {1.0f, 0.0f, 6.0f}, s2[3] = {1.562f, 1.5f, 6.0f},
                s3[3] = {1.562f, 1.5f, -1.0f};
    sc_quad(&s, s0, s1, s2, s3);
    const float tx = 0.49f, tz = 0.872f; /* along the wall; its normal (-0.872, 0, 0.49) faces the box */
    const float w0[3] = {1.0f + 10.0f * tx, 0.0f, -1.0f + 10.0f * tz}, w1[3] = {1.0f - 10.0f * tx, 0.0f, -1.0f - 10.0f * tz},
                w2[3] = {1.0f - 10.0f * tx, 3.0f, -1.0f - 10.0f * tz}, w3[3] = {1.0f + 10.0f * tx, 3.0f, -1.0f + 10.0f * tz};
    sc_quad(&s, w0, w1, w2, w3);
    kcc_mesh *m = sc_build(&s);
    const float a = 0.05f, speed = 5.0f; /* along the foot: 0.25 m/s */
    for (int k = 0; k < 8; ++k) {
        kcc_character ch = make_char(0.01f * (float)k, HY + SKIN, 0.3f, NULL);
        driver dr = {0.0f, 1.0f / 60.0f, 1};
        for (int i = 0; i < 60; ++i) /* onto the wall, and down along it away from the slope */
            drive(&ch, m, &dr, 0.7071f * speed, -0.7071f * speed, NULL);
        assert_true(ch.position[2] < -1.0f);
        for (int i = 0; i < 120; ++i) {
            const float z0 = ch.position[2];
            uint32_t f = drive(&ch, m, &dr, cosf(a) * speed, sinf(a) * speed, NULL);
            assert_false(overlaps(&ch, m));
            assert_true(f & KCC_MOVE_ON_GROUND);
            if (i >= 3 && (f & KCC_MOVE_STUCK))
                fail_msg("start %d: stuck at frame %d, x %g z %g", k, i, (double)ch.position[0],
                         (double)ch.position[2]);
            if (i >= 90) { /* long since along the foot */
                assert_float_equal(ch.position[2] - z0, sinf(a) * speed / 60.0f, 1e-5);
                assert_true(ch.position[0] > 1.0f - HX - 2.0f * SKIN && ch.position[0] < 1.0f - HX + 2.0f * SKIN);
            }
        }
    }
    kcc_mesh_destroy(m);
}

/* ---------------------------------------------------------------- stairs and ledges */

/* n steps of riser r and tread w rising along +x from x = 0, each a closed box. */
static kcc_mesh *stairs_scene(int n, float r, float w, bool zup)
{
    scene s = {0};
    s.zup = zup;
    sc_floor(&s, 0.0f, 30.0f, 2);
    for (int i = 0; i < n; ++i)
        sc_box(&s, (float)i * w, 0.0f, -3.0f, 30.0f, (float)(i + 1) * r, 3.0f);
    return sc_build(&s);
}

/* Walking off a platform's lip down a steep face (0.3 m at 60 degrees) onto a floor that ends at a
 * wall a few centimetres ahead of the box: the box follows the face down, sliding up to 13 cm away
 * from it, further than the move's own reach, so the wall lies outside the region gathered for the
 * move. The slide must see it all the same, whatever the character's cache holds: the box ends a
 * skin short of the wall, never overlapping: held by the face and the wall where the floor is
 * narrower than the box, grounded every frame, and on the floor, dropped to, where the floor is
 * wider (0.3 m down is more than a snap's fall along the face takes it). Rule: a path that reaches
 * past the region gathered for the move widens the move's triangle list before it queries, so it
 * sees the wall whatever the cache holds (KCC_DEBUG builds abort a query outside the list). */
static void following_a_steep_face_down_sees_a_wall_beyond_the_move(void **state)
{
    (void)state;
    const float h = 0.3f, run = h / tanf(60.0f * 3.14159265f / 180.0f);
    const float gaps[5] = {0.03f, 0.06f, 0.09f, 0.12f, 0.2f}, rates[3] = {60.0f, 144.0f, 240.0f};
    for (int gi = 0; gi < 5; ++gi) {
        /* the box's front is 0.6 m ahead of its back edge, which leaves the lip at x = 0 */
        const float wall = -2.0f * HX - gaps[gi];
        scene s = {0};
        const float p0[3] = {0.0f, 0.0f, -5.0f}, p1[3] = {0.0f, 0.0f, 5.0f}, p2[3] = {5.0f, 0.0f, 5.0f},
                    p3[3] = {5.0f, 0.0f, -5.0f};
        sc_quad(&s, p0, p1, p2, p3);
        const float f0[3] = {-run, -h, -5.0f}, f1[3] = {-run, -h, 5.0f};
        sc_quad(&s, f0, f1, p1, p0);
        const float w0[3] = {wall, -h, -5.0f}, w1[3] = {wall, -h, 5.0f};
        sc_quad(&s, w0, w1, f1, f0);
        const float t0[3] = {wall, 3.0f, -5.0f}, t1[3] = {wall, 3.0f, 5.0f};
        sc_quad(&s, w0, t0, t1, w1);
        kcc_mesh *m = sc_build(&s);
        /* against the wall, a skin short; on the floor when it is wider than the box, else held by
         * the face and the wall together (a funnel), its back edge a skin above the face */
        const float back = wall + 2.0f * HX + SKIN;
        const bool held = back > -run;
        const float feet = held ? back * (h / run) : -h;
        for (int r = 0; r < 3; ++r)
            for (int wipe = 0; wipe < 2; ++wipe) {
                kcc_character ch = make_char(0.2f, SKIN + HY, 0.0f, NULL);
                driver dr = {0.0f, 1.0f / rates[r], 1};
                for (int i = 0; i < (int)rates[r]; ++i) {
                    if (wipe)
                        memset(&kcc_character_priv(&ch)->cache, 0, sizeof(kcc_local_cache));
                    const uint32_t fl = drive(&ch, m, &dr, -1.5f, 0.0f, NULL);
                    /* a floor 0.3 m down is more than a snap's fall along the face: it is dropped to */
                    if (overlaps(&ch, m) || (held && !(fl & KCC_MOVE_ON_GROUND)))
                        fail_msg("gap %g, %g Hz, frame %d: %s", (double)gaps[gi], (double)rates[r], i,
                                 overlaps(&ch, m) ? "overlaps" : "off the ground");
                }
                assert_true(ch.on_ground);
                assert_float_equal(ch.position[0], wall + HX + SKIN, 1e-4);
                assert_float_equal(ch.position[1], feet + SKIN + HY, 1e-4);
            }
        kcc_mesh_destroy(m);
    }
}

/* A 0.18 m step whose riser leans back (its top `rake` behind its foot: 1, 3 and 6 cm, faces of 84-87
 * degrees, steeper than the limit) walked up and down at 1, 2 and 5 m/s, 30 to 360 Hz: up, the step
 * is climbed (feet a skin over 0.18 within 1.5 s, STEPPED_UP reported) and no frame is STUCK once
 * over it; down, the ground every frame. Rule: when the probe finds only the steep riser under a
 * walk, it looks ahead along the walk (at most the box's narrower half width) for walkable ground
 * within a step and steps onto it, so a move shorter than the rake climbs too. A steep bump no
 * higher than a step (0.3 m at 60 degrees, walkable on top) is climbed the same at every rate; a
 * higher one (0.5 m) never. */
static void a_raked_riser_is_a_step_at_any_frame_rate(void **state)
{
    (void)state;
    const float rakes[3] = {0.01f, 0.03f, 0.06f}, speeds[3] = {1.0f, 2.0f, 5.0f},
                rates[5] = {30.0f, 60.0f, 144.0f, 240.0f, 360.0f};
    for (int k = 0; k < 5; ++k) {
        /* k < 3: a riser raked by rakes[k], 0.18 high; k = 3, 4: a 60-degree face 0.3 and 0.5 high */
        const float h = k < 3 ? 0.18f : (k == 3 ? 0.3f : 0.5f);
        const float run = k < 3 ? rakes[k] : h / tanf(60.0f * 3.14159265f / 180.0f);
        scene s = {0};
        sc_box(&s, -10.0f, -1.0f, -10.0f, 0.0f, 0.0f, 10.0f);
        const float a[3] = {0.0f, 0.0f, -10.0f}, b[3] = {run, h, -10.0f}, c[3] = {run, h, 10.0f}, d[3] = {0.0f, 0.0f, 10.0f};
        const float e[3] = {10.0f, h, -10.0f}, f[3] = {10.0f, h, 10.0f};
        sc_quad(&s, a, d, c, b);
        sc_quad(&s, b, c, f, e);
        kcc_mesh *m = sc_build(&s);
        for (int down = 0; down < (k < 3 ? 2 : 1); ++down)
            for (int v = 0; v < 3; ++v)
                for (int r = 0; r < 5; ++r) {
                    kcc_character ch = make_char(down ? 1.0f : -1.0f, (down ? h : 0.0f) + SKIN + HY, 0.0f, NULL);
                    driver dr = {0.0f, 1.0f / rates[r], 1};
                    bool stepped = false;
                    const int n = (int)(1.5f * rates[r]);
                    for (int i = 0; i < n; ++i) {
                        kcc_move_result res;
                        uint32_t fl = drive(&ch, m, &dr, down ? -speeds[v] : speeds[v], 0.0f, &res);
                        assert_false(overlaps(&ch, m));
                        stepped = stepped || (fl & KCC_MOVE_STEPPED_UP);
                        if (down && !(fl & KCC_MOVE_ON_GROUND))
                            fail_msg("down a %g m rake at %g m/s, %g Hz: off the ground at frame %d",
                                     (double)run, (double)speeds[v], (double)rates[r], i);
                        if (!down && k < 4 && ch.position[1] > h && (fl & KCC_MOVE_STUCK))
                            fail_msg("up a %g m high, %g m run face at %g m/s, %g Hz: stuck at frame %d",
                                     (double)h, (double)run, (double)speeds[v], (double)rates[r], i);
                    }
                    if (down)
                        continue;
                    if (k < 4 && !(stepped && fabsf(ch.position[1] - (h + SKIN + HY)) < 1e-4f))
                        fail_msg("up a %g m high, %g m run face at %g m/s, %g Hz: not climbed (y %g)",
                                 (double)h, (double)run, (double)speeds[v], (double)rates[r], (double)ch.position[1]);
                    if (k == 4)
                        assert_float_equal(ch.position[1], SKIN + HY, 1e-4);
                }
        kcc_mesh_destroy(m);
    }
}

/* Stairs of 10 risers 0.3 m, treads 0.3 m, step height 0.35: climbed at 3 m/s at every rate from
 * 30 to 360 Hz, reaching the top (centre y = 3.0 + 0.9 + skin) in about the time 3 m of travel
 * takes; then back down walking and running (9 m/s), grounded every frame. */
static void stairs_are_climbed_and_descended_at_any_frame_rate(void **state)
{
    (void)state;
    static const int hz[] = {30, 60, 120, 240, 360};
    for (size_t k = 0; k < sizeof(hz) / sizeof(hz[0]); ++k) {
        kcc_mesh *m = stairs_scene(10, 0.3f, 0.3f, false);
        kcc_character ch = make_char(-1.0f, HY + SKIN, 0.0f, NULL);
        driver dr = {0.0f, 1.0f / (float)hz[k], 1};
        drive(&ch, m, &dr, 0, 0, NULL);
        int frames = (int)(2.0f * (float)hz[k]); /* 2 s at 3 m/s: 6 m > 1 + 3 + margin */
        int steps = 0;
        for (int i = 0; i < frames; ++i) {
            uint32_t f = drive(&ch, m, &dr, 3.0f, 0.0f, NULL);
            steps += (f & KCC_MOVE_STEPPED_UP) != 0;
            assert_false(overlaps(&ch, m));
        }
        assert_true(ch.on_ground);
        assert_float_equal(ch.position[1], 3.0f + HY + SKIN, 1e-4);
        assert_float_equal(ch.position[0], -1.0f + 6.0f, 1e-3);
        assert_true(steps >= 9);
        /* down: grounded every frame */
        for (int i = 0; i < frames; ++i) {
            uint32_t f = drive(&ch, m, &dr, -3.0f, 0.0f, NULL);
            assert_true(f & KCC_MOVE_ON_GROUND);
        }
        assert_float_equal(ch.position[1], HY + SKIN, 1e-4);
        assert_float_equal(ch.position[0], -1.0f, 1e-3);
        /* back up, then run down at 9 m/s (0.3 m per frame at 30 Hz): still grounded every frame */
        for (int i = 0; i < frames; ++i)
            drive(&ch, m, &dr, 3.0f, 0.0f, NULL);
        assert_float_equal(ch.position[1], 3.0f + HY + SKIN, 1e-4);
        for (int i = 0; i < (int)(0.6f * (float)hz[k]); ++i)
            assert_true(drive(&ch, m, &dr, -9.0f, 0.0f, NULL) & KCC_MOVE_ON_GROUND);
        assert_float_equal(ch.position[1], HY + SKIN, 1e-4);
        kcc_mesh_destroy(m);
    }
}

/* Sprinting at 10-20 m/s at 30 and 60 Hz carries the box over up to two treads a frame (risers
 * 0.2 m, treads 0.3 m, step height 0.35: two risers at once are a ledge too high, and a drop too
 * deep to snap down). Nothing blocks the way, so every frame up the stairs advances the full
 * speed / rate and ends on the ground, up to the top (centre 3.0 + 0.9 + skin); every frame down
 * them does the same back to the floor. */
static void sprinting_over_several_treads_a_frame_keeps_pace_and_ground(void **state)
{
    (void)state;
    static const int hz[] = {30, 60};
    static const float speed[] = {10.0f, 15.0f, 20.0f};
    kcc_mesh *m = stairs_scene(15, 0.2f, 0.3f, false); /* the top tread runs from x = 4.2 */
    for (size_t k = 0; k < sizeof(hz) / sizeof(hz[0]); ++k)
        for (size_t j = 0; j < sizeof(speed) / sizeof(speed[0]); ++j) {
            kcc_character ch = make_char(-2.0f, HY + SKIN, 0.0f, NULL);
            driver dr = {0.0f, 1.0f / (float)hz[k], 1};
            drive(&ch, m, &dr, 0, 0, NULL);
            const float step = speed[j] / (float)hz[k];
            for (int dir = 1; dir >= -1; dir -= 2) {
                const float end = dir > 0 ? 7.0f : -1.0f;
                while (dir > 0 ? ch.position[0] < end : ch.position[0] > end) {
                    const float x = ch.position[0];
                    uint32_t f = drive(&ch, m, &dr, (float)dir * speed[j], 0.0f, NULL);
                    assert_true(f & KCC_MOVE_ON_GROUND);
                    assert_float_equal(ch.position[0] - x, (float)dir * step, 1e-4);
                    assert_false(overlaps(&ch, m));
                }
                assert_float_equal(ch.position[1], (dir > 0 ? 3.0f : 0.0f) + HY + SKIN, 1e-4);
            }
        }
    kcc_mesh_destroy(m);
}

/* A walking move of 0.9 or 1.2 m (three or more sub-moves for the default box) reports the whole
 * move: into a wall face at x = 1 it stops a skin short (x = 1 - 0.3 - skin), hit the wall (head-on:
 * nothing to slide along, no SLID) but is not stuck, having moved 0.498 m; pushing on, it is stuck. Onto a 0.3 m step it climbs
 * 0.3 m once; off the step's far edge it snaps down 0.3 m, on the ground all along. */
static void a_long_walking_move_reports_the_whole_move(void **state)
{
    (void)state;
    scene s = {0};
    sc_floor(&s, 0.0f, 30.0f, 2);
    sc_box(&s, 1.0f, 0.0f, -3.0f, 2.0f, 3.0f, 3.0f);
    sc_box(&s, -1.0f, 0.0f, 4.0f, 3.0f, 0.3f, 8.0f);
    kcc_mesh *m = sc_build(&s);
    const vec3 rest = {0.0f, -0.01f, 0.0f}, run = {0.9f, -0.01f, 0.0f}, far = {1.2f, -0.01f, 0.0f};
    kcc_move_result r;

    kcc_character ch = make_char(0.2f, HY + SKIN, 0.0f, NULL);
    kcc_character_move(&ch, m, rest, &r);
    kcc_character_move(&ch, m, run, &r);
    assert_float_equal(ch.position[0], 1.0f - HX - SKIN, 1e-4);
    assert_float_equal(r.moved[0], 1.0f - HX - SKIN - 0.2f, 1e-4);
    assert_int_equal(r.flags, KCC_MOVE_ON_GROUND | KCC_MOVE_HIT_WALL);
    assert_float_equal(r.wall_normal[0], -1.0f, 1e-6);
    kcc_character_move(&ch, m, run, &r);
    assert_true(r.flags & KCC_MOVE_STUCK);
    assert_true(r.flags & KCC_MOVE_HIT_WALL);
    assert_float_equal(r.moved[0], 0.0f, 1e-6);

    ch = make_char(-2.0f, HY + SKIN, 6.0f, NULL);
    kcc_character_move(&ch, m, rest, &r);
    kcc_character_move(&ch, m, run, &r);
    assert_int_equal(r.flags, KCC_MOVE_ON_GROUND | KCC_MOVE_STEPPED_UP);
    assert_float_equal(r.step_up, 0.3f, 1e-4);
    assert_float_equal(r.moved[0], 0.9f, 1e-5);
    assert_float_equal(r.moved[1], 0.3f, 1e-4);

    ch = make_char(2.5f, 0.3f + HY + SKIN, 6.0f, NULL);
    kcc_character_move(&ch, m, rest, &r);
    kcc_character_move(&ch, m, far, &r);
    assert_int_equal(r.flags, KCC_MOVE_ON_GROUND | KCC_MOVE_SNAPPED_DOWN);
    assert_float_equal(r.moved[0], 1.2f, 1e-5);
    assert_float_equal(r.moved[1], -0.3f, 1e-4);
    kcc_mesh_destroy(m);
}

/* A character (desc d, NULL: defaults) resting on a floor at x = 0 walks along +x at 2 m/s for a
 * second towards a ledge of height h rising at x = 1, never overlapping the level; where it ends. */
static void walk_at_ledge(float h, const kcc_character_desc *d, vec3 out)
{
    const float skin = d ? d->skin_width : SKIN;
    scene s = {0};
    sc_floor(&s, 0.0f, 10.0f, 2);
    sc_box(&s, 1.0f, 0.0f, -5.0f, 5.0f, h, 5.0f);
    kcc_mesh *m = sc_build(&s);
    kcc_character ch = make_char(0.0f, HY + skin, 0.0f, d);
    driver dr = {0.0f, 1.0f / 60.0f, 1};
    for (int i = 0; i < 60; ++i) {
        drive(&ch, m, &dr, 2.0f, 0.0f, NULL);
        assert_false(overlaps(&ch, m));
    }
    glm_vec3_copy(ch.position, out);
    kcc_mesh_destroy(m);
}

/* Ledges 1 cm and 1 mm under step height (0.35 m) are climbed; 1 mm and 1 cm over it block (the box
 * stops a skin short of the riser at x = 1: centre x = 1 - 0.3 - skin). The feet hover a skin
 * (2 mm) over the floor: step height counts from the floor, not from the feet. */
static void ledges_under_step_height_are_climbed_and_higher_ones_block(void **state)
{
    (void)state;
    const float heights[4] = {0.34f, 0.349f, 0.351f, 0.36f};
    vec3 p;
    for (int k = 0; k < 4; ++k) {
        walk_at_ledge(heights[k], NULL, p);
        if (heights[k] < 0.35f) {
            assert_float_equal(p[1], heights[k] + HY + SKIN, 1e-4);
            assert_float_equal(p[0], 2.0f, 1e-3);
        } else {
            assert_float_equal(p[1], HY + SKIN, 1e-5);
            assert_float_equal(p[0], 1.0f - HX - SKIN, 1e-4);
        }
    }
    /* A thick skin (5 cm) does not stretch the step (10 cm): a 9 cm ledge is climbed, a 12 cm one
     * blocks (looking from step height above the feet alone would climb up to 20 cm). */
    kcc_character_desc d = kcc_character_default_desc();
    d.skin_width = 0.05f;
    d.step_height = 0.1f;
    walk_at_ledge(0.09f, &d, p);
    assert_float_equal(p[1], 0.09f + HY + d.skin_width, 1e-4);
    assert_true(p[0] > 1.5f);
    walk_at_ledge(0.12f, &d, p);
    assert_float_equal(p[1], HY + d.skin_width, 1e-4);
    assert_true(p[0] < 1.0f - HX);
    /* 1 mm over the default step with a 2 and a 5 cm skin blocks: the rounding allowance is a
     * quarter skin capped at 0.5 mm, not the 5 and 12.5 mm a quarter of these skins would be */
    for (int k = 0; k < 2; ++k) {
        d = kcc_character_default_desc();
        d.skin_width = k ? 0.05f : 0.02f;
        walk_at_ledge(0.351f, &d, p);
        assert_float_equal(p[1], HY + d.skin_width, 1e-4);
        assert_true(p[0] < 1.0f - HX);
    }
}

/* ---------------------------------------------------------------- walls and corners */

/* A flat wall through the origin turned 73 degrees, tiled from 373 x 29 quads (0.21 x 0.38 m) over
 * 80 x 11 m, each quad split along its own diagonal (hashed), walked along at 6 m/s pressing in at
 * 30 degrees, 60 Hz, for 5 s: 6 cos 30 m/s along it every frame after the contact (within 0.5%),
 * never STUCK. Rule: a contact on a seam's edge, met while the box touches the wall's plane, is the
 * wall's face contact: the edge's own axis (a box axis) never joins the averaged normal, which it
 * would turn into the wall. */
static void sliding_along_a_tiled_wall_off_the_axes_never_catches_on_seams(void **state)
{
    (void)state;
    const float yaw = 73.0f * 3.14159265f / 180.0f, ang = 30.0f * 3.14159265f / 180.0f, L = 40.0f;
    const float n[2] = {cosf(yaw), sinf(yaw)}, t[2] = {-sinf(yaw), cosf(yaw)};
    const int N = 373, R = 29;
    scene s = {0};
    sc_floor(&s, 0.0f, 60.0f, 1);
    for (int i = 0; i < N; ++i) {
        const float s0 = -L + 2.0f * L * (float)i / (float)N, s1 = -L + 2.0f * L * (float)(i + 1) / (float)N;
        for (int j = 0; j < R; ++j) {
            const float y0 = -1.0f + 11.0f * (float)j / (float)R, y1 = -1.0f + 11.0f * (float)(j + 1) / (float)R;
            const float q0[3] = {s0 * t[0], y0, s0 * t[1]}, q1[3] = {s1 * t[0], y0, s1 * t[1]},
                        q2[3] = {s1 * t[0], y1, s1 * t[1]}, q3[3] = {s0 * t[0], y1, s0 * t[1]};
            uint32_t h = (uint32_t)(i * 7919 + j * 104729 + 1);
            h ^= h >> 7;
            h *= 2654435761u;
            if ((h >> 21) & 1u)
                sc_quad(&s, q0, q3, q2, q1);
            else
                sc_quad(&s, q3, q2, q1, q0);
        }
    }
    kcc_mesh *m = sc_build(&s);
    const float sup = HX * (fabsf(n[0]) + fabsf(n[1])), dist = sup + 0.5f;
    kcc_character ch = make_char(dist * n[0], HY + SKIN, dist * n[1], NULL);
    const float dir[2] = {-sinf(ang) * n[0] + cosf(ang) * t[0], -sinf(ang) * n[1] + cosf(ang) * t[1]};
    driver dr = {0.0f, 1.0f / 60.0f, 1};
    for (int i = 0; i < 300; ++i) {
        kcc_move_result r;
        uint32_t f = drive(&ch, m, &dr, 6.0f * dir[0], 6.0f * dir[1], &r);
        assert_false(overlaps(&ch, m));
        if (i < 12) /* 0.5 m to the wall at 3 m/s across */
            continue;
        const float along = r.moved[0] * t[0] + r.moved[2] * t[1], want = 0.1f * cosf(ang);
        if ((f & KCC_MOVE_STUCK) || fabsf(along - want) > 0.005f * want)
            fail_msg("frame %d: %g m along the wall (want %g), flags 0x%x", i, (double)along, (double)want, f);
    }
    kcc_mesh_destroy(m);
}

/* A floor and one long wall through (c, c) turned by yaw (7, 17 and 30 degrees), far from the
 * origin (c = 1000 and 5000 m, where floats step by 61 and 488 micrometres), walked along at 6 m/s
 * pressing into it at 10, 30 and 60 degrees, 60 Hz, for 25 s. The gap to the wall stays a skin
 * and the tangential speed 6 cos(angle) (within 0.5%), both within two steps of the position
 * rounding, never STUCK. Rule: a slide that starts nearer than a skin to the wall also leaves along
 * its normal by the difference, so the rounding of positions off the axes never walks the box into
 * the wall. */
static void a_long_slide_along_a_wall_off_the_axes_keeps_its_gap(void **state)
{
    (void)state;
    const float centres[2] = {1000.0f, 5000.0f}, yaws[3] = {7.0f, 17.0f, 30.0f}, angles[3] = {10.0f, 30.0f, 60.0f};
    for (int c = 0; c < 2; ++c)
        for (int y = 0; y < 3; ++y) {
            const float o = centres[c], yaw = yaws[y] * 3.14159265f / 180.0f, L = 1000.0f;
            const float n[2] = {cosf(yaw), sinf(yaw)}, t[2] = {-sinf(yaw), cosf(yaw)};
            scene s = {0};
            const float f0[3] = {o - L, 0.0f, o - L}, f1[3] = {o - L, 0.0f, o + L}, f2[3] = {o + L, 0.0f, o + L},
                        f3[3] = {o + L, 0.0f, o - L};
            const float w0[3] = {o - L * t[0], -1.0f, o - L * t[1]}, w1[3] = {o + L * t[0], -1.0f, o + L * t[1]},
                        w2[3] = {o + L * t[0], 10.0f, o + L * t[1]}, w3[3] = {o - L * t[0], 10.0f, o - L * t[1]};
            sc_quad(&s, f0, f1, f2, f3);
            sc_quad(&s, w0, w3, w2, w1);
            kcc_mesh *m = sc_build(&s);
            const float sup = HX * (fabsf(n[0]) + fabsf(n[1])); /* the box's reach along n */
            for (int a = 0; a < 3; ++a) {
                const float ang = angles[a] * 3.14159265f / 180.0f;
                const float dir[2] = {-sinf(ang) * n[0] + cosf(ang) * t[0], -sinf(ang) * n[1] + cosf(ang) * t[1]};
                kcc_character ch = make_char(o + (sup + 0.3f) * n[0], HY + SKIN, o + (sup + 0.3f) * n[1], NULL);
                driver dr = {0.0f, 1.0f / 60.0f, 1};
                const double ulp = c ? 4.9e-4 : 6.2e-5;
                for (int i = 0; i < 1500; ++i) {
                    kcc_move_result r;
                    uint32_t f = drive(&ch, m, &dr, 6.0f * dir[0], 6.0f * dir[1], &r);
                    if (i < 30)
                        continue;
                    const double gap = ((double)ch.position[0] - o) * n[0] + ((double)ch.position[2] - o) * n[1] - sup;
                    const double along = (double)r.moved[0] * t[0] + (double)r.moved[2] * t[1];
                    if ((f & KCC_MOVE_STUCK) || fabs(gap - SKIN) > 2.0 * ulp ||
                        fabs(along - 0.1 * cos(ang)) > fmax(0.005 * 0.1 * cos(ang), 2.0 * ulp))
                        fail_msg("wall at %g turned %g, %g degrees into it: frame %d gap %g, along %g, flags 0x%x",
                                 (double)o, (double)yaws[y], (double)angles[a], i, gap, along, f);
                }
            }
            kcc_mesh_destroy(m);
        }
}

/* A wall at z = 1 (a thin box), the character walking at 4 m/s at angle a into it: after the
 * contact the tangential speed 4 cos(a) is kept and z stays a skin short: 1 - 0.3 - skin. */
static void walking_into_a_wall_at_an_angle_slides_along_it(void **state)
{
    (void)state;
    static const float angles[] = {15.0f, 30.0f, 45.0f, 60.0f, 75.0f};
    for (size_t k = 0; k < sizeof(angles) / sizeof(angles[0]); ++k) {
        scene s = {0};
        sc_floor(&s, 0.0f, 30.0f, 2);
        sc_box(&s, -30.0f, 0.0f, 1.0f, 30.0f, 3.0f, 1.2f);
        kcc_mesh *m = sc_build(&s);
        kcc_character ch = make_char(0.0f, HY + SKIN, 0.0f, NULL);
        driver dr = {0.0f, 1.0f / 60.0f, 1};
        float a = angles[k] * 3.14159265f / 180.0f;
        float vx = 4.0f * cosf(a), vz = 4.0f * sinf(a);
        for (int i = 0; i < 60; ++i)
            drive(&ch, m, &dr, vx, vz, NULL);
        float x0 = ch.position[0];
        kcc_move_result r;
        for (int i = 0; i < 30; ++i) {
            uint32_t f = drive(&ch, m, &dr, vx, vz, &r);
            assert_true(f & KCC_MOVE_HIT_WALL);
            assert_true(f & KCC_MOVE_ON_GROUND);
            assert_float_equal(ch.position[2], 1.0f - HX - SKIN, 1e-4);
        }
        assert_float_equal(ch.position[0] - x0, vx * 0.5f, 1e-3);
        assert_float_equal(r.wall_normal[2], -1.0f, 1e-5);
        kcc_mesh_destroy(m);
    }
}

/* A 90-degree concave corner (walls at x = 1 and z = 1): pushed into diagonally and along each
 * wall it ends a skin from both walls, keeps exactly that position frame after frame, and walks
 * away freely when the input turns. */
static void concave_corner_neither_jitters_nor_traps(void **state)
{
    (void)state;
    scene s = {0};
    sc_floor(&s, 0.0f, 10.0f, 2);
    sc_box(&s, 1.0f, 0.0f, -10.0f, 1.5f, 3.0f, 10.0f);
    sc_box(&s, -10.0f, 0.0f, 1.0f, 10.0f, 3.0f, 1.5f);
    kcc_mesh *m = sc_build(&s);
    const float dirs[3][2] = {{0.7071f, 0.7071f}, {0.9f, 0.436f}, {0.2f, 0.98f}};
    for (int k = 0; k < 3; ++k) {
        kcc_character ch = make_char(-1.0f, HY + SKIN, -1.0f, NULL);
        driver dr = {0.0f, 1.0f / 60.0f, 1};
        for (int i = 0; i < 240; ++i) {
            drive(&ch, m, &dr, 5.0f * dirs[k][0], 5.0f * dirs[k][1], NULL);
            assert_false(overlaps(&ch, m));
        }
        vec3 p;
        glm_vec3_copy(ch.position, p);
        assert_float_equal(p[0], 1.0f - HX - SKIN, 1e-4);
        assert_float_equal(p[2], 1.0f - HX - SKIN, 1e-4);
        for (int i = 0; i < 30; ++i) {
            drive(&ch, m, &dr, 5.0f * dirs[k][0], 5.0f * dirs[k][1], NULL);
            assert_true(ch.position[0] == p[0] && ch.position[1] == p[1] && ch.position[2] == p[2]);
        }
        for (int i = 0; i < 30; ++i) { /* turn away: 0.5 s at 4 m/s back along -x */
            uint32_t f = drive(&ch, m, &dr, -4.0f, 0.0f, NULL);
            assert_false(f & KCC_MOVE_STUCK);
        }
        assert_float_equal(ch.position[0], p[0] - 2.0f, 1e-3);
    }
    kcc_mesh_destroy(m);
}

/* An obtuse corner: a wall facing -x at x = 1 (z < 0) meets one facing (-1, 0, -1) / sqrt 2 along
 * x + z = 1 (x < 1) at 135 degrees. Pushed into it by inputs between the two walls' slide
 * directions (+x with some +z, less than the x), sliding along either wall leads into the other:
 * the box stays in the corner, 0.7 to 1 skin from the first wall (a skin along the diagonal or
 * along x) and touching the second with its corner (x + z = 1 - 2 * 0.3, less up to three skins),
 * exactly still frame after frame, stuck, never overlapping; at 5 m/s (60 Hz) and 10 m/s (30 Hz). */
static kcc_mesh *obtuse_corner_scene(float height)
{
    scene s = {0};
    sc_floor(&s, 0.0f, 10.0f, 2);
    sc_box(&s, 1.0f, 0.0f, -10.0f, 1.5f, height, 0.0f);
    const float a[3] = {1.0f, 0.0f, 0.0f}, b[3] = {-9.0f, 0.0f, 10.0f}, c[3] = {-9.0f, height, 10.0f},
                d[3] = {1.0f, height, 0.0f};
    sc_quad(&s, a, b, c, d);
    return sc_build(&s);
}

/* Inputs into it, between the two walls' slide directions. */
static const float obtuse_dirs[3][2] = {{0.995f, 0.0995f}, {0.894f, 0.447f}, {0.8f, 0.6f}};

static void obtuse_corner_holds_still(void **state)
{
    (void)state;
    kcc_mesh *m = obtuse_corner_scene(3.0f);
    for (int rate = 0; rate < 2; ++rate)
        for (int k = 0; k < 3; ++k) {
            const float speed = rate ? 10.0f : 5.0f;
            kcc_character ch = make_char(-1.0f, HY + SKIN, -1.0f, NULL);
            driver dr = {0.0f, rate ? 1.0f / 30.0f : 1.0f / 60.0f, 1};
            for (int i = 0; i < (rate ? 90 : 180); ++i) { /* 3 s */
                drive(&ch, m, &dr, speed * obtuse_dirs[k][0], speed * obtuse_dirs[k][1], NULL);
                assert_false(overlaps(&ch, m));
            }
            vec3 p;
            glm_vec3_copy(ch.position, p);
            assert_in_range(1e4f * p[0], 1e4f * (1.0f - HX - SKIN) - 1.0f, 1e4f * (1.0f - HX - 0.7f * SKIN));
            assert_float_equal(p[0] + p[2], 1.0f - 2.0f * HX - 1.5f * SKIN, 1.5 * SKIN);
            for (int i = 0; i < 30; ++i) {
                uint32_t f = drive(&ch, m, &dr, speed * obtuse_dirs[k][0], speed * obtuse_dirs[k][1], NULL);
                assert_true(f & KCC_MOVE_STUCK);
                assert_true(ch.position[0] == p[0] && ch.position[1] == p[1] && ch.position[2] == p[2]);
            }
        }
    kcc_mesh_destroy(m);
}

/* The same corner met in the air (tall walls, falling from high up): the box holds its place in the
 * corner horizontally, frame after frame, while it falls exactly as fast as the input says.
 * Rule: in the air among walls, a leg of the slide that turns back against the input keeps only
 * its vertical part, so the box neither saws along the walls nor slows its fall. */
static void obtuse_corner_holds_still_in_the_air(void **state)
{
    (void)state;
    kcc_mesh *m = obtuse_corner_scene(60.0f);
    for (int rate = 0; rate < 2; ++rate)
        for (int k = 0; k < 3; ++k) {
            const float speed = rate ? 10.0f : 5.0f, dt = rate ? 1.0f / 30.0f : 1.0f / 60.0f;
            kcc_character ch = make_char(-1.0f, 55.0f, -1.0f, NULL);
            driver dr = {0.0f, dt, 1};
            const int frames = rate ? 90 : 180; /* 3 s: about 44 m of fall */
            vec3 last = {0.0f, 0.0f, 0.0f};
            for (int i = 0; i < frames; ++i) {
                const float want = (dr.vy - G * dt) * dt;
                kcc_move_result r;
                drive(&ch, m, &dr, speed * obtuse_dirs[k][0], speed * obtuse_dirs[k][1], &r);
                assert_false(overlaps(&ch, m));
                assert_false(r.flags & KCC_MOVE_ON_GROUND);
                assert_float_equal(r.moved[1], want, 1e-5); /* float rounding at 55 m */
                if (i >= 2 * frames / 3) { /* in the corner (the slowest arrives after 1.5 s) */
                    assert_true(ch.position[0] == last[0] && ch.position[2] == last[2]);
                    assert_in_range(1e4f * ch.position[0], 1e4f * (1.0f - HX - SKIN) - 1.0f,
                                    1e4f * (1.0f - HX - 0.7f * SKIN));
                    assert_float_equal(ch.position[0] + ch.position[2], 1.0f - 2.0f * HX - 1.5f * SKIN,
                                       1.5 * SKIN);
                }
                glm_vec3_copy(ch.position, last);
            }
        }
    kcc_mesh_destroy(m);
}

/* An acute wedge (two walls meeting at 30 degrees, opening towards -x): pushed into its tip the box
 * stops without penetrating either wall and backs out freely. */
static void acute_wedge_stops_without_penetration(void **state)
{
    (void)state;
    scene s = {0};
    sc_floor(&s, 0.0f, 10.0f, 2);
    float h = tanf(15.0f * 3.14159265f / 180.0f);
    const float a0[3] = {2, 0, 0}, a1[3] = {-6, 0, 8 * h}, a2[3] = {-6, 3, 8 * h}, a3[3] = {2, 3, 0};
    const float b0[3] = {2, 0, 0}, b1[3] = {-6, 0, -8 * h}, b2[3] = {-6, 3, -8 * h}, b3[3] = {2, 3, 0};
    sc_quad(&s, a0, a1, a2, a3);
    sc_quad(&s, b0, b3, b2, b1);
    kcc_mesh *m = sc_build(&s);
    kcc_character ch = make_char(-4.0f, HY + SKIN, 0.1f, NULL);
    driver dr = {0.0f, 1.0f / 60.0f, 1};
    vec3 last = {0.0f, 0.0f, 0.0f};
    for (int i = 0; i < 180; ++i) {
        drive(&ch, m, &dr, 5.0f, 0.0f, NULL);
        assert_false(overlaps(&ch, m));
        if (i >= 150) /* wedged: the same position every frame, no jitter */
            assert_true(ch.position[0] == last[0] && ch.position[1] == last[1] && ch.position[2] == last[2]);
        glm_vec3_copy(ch.position, last);
    }
    /* the box's corners touch the walls where |z| = (2 - x) tan 15: centre x = 2 - 0.3/tan15 - 0.3 */
    assert_true(ch.position[0] < 2.0f - HX / h - HX + 0.01f);
    assert_true(ch.position[0] > 2.0f - HX / h - HX - 0.2f);
    for (int i = 0; i < 30; ++i)
        drive(&ch, m, &dr, -4.0f, 0.0f, NULL);
    assert_true(ch.position[0] < 2.0f - HX / h - HX - 1.9f);
    kcc_mesh_destroy(m);
}

/* A wall made of 400 small triangles (a 20 x 10 grid of 0.1 m quads in the plane z = 1) slides as
 * smoothly as a single quad: constant z, constant speed. */
static void wall_of_many_small_triangles_slides_smoothly(void **state)
{
    (void)state;
    scene s = {0};
    sc_floor(&s, 0.0f, 10.0f, 2);
    for (int i = 0; i < 80; ++i)
        for (int j = 0; j < 20; ++j) {
            float x0 = -4.0f + 0.1f * (float)i, y0 = 0.1f * (float)j;
            const float a[3] = {x0, y0, 1}, b[3] = {x0 + 0.1f, y0, 1}, c[3] = {x0 + 0.1f, y0 + 0.1f, 1},
                        d[3] = {x0, y0 + 0.1f, 1};
            sc_quad(&s, a, d, c, b);
        }
    kcc_mesh *m = sc_build(&s);
    kcc_character ch = make_char(-3.0f, HY + SKIN, 0.5f, NULL);
    driver dr = {0.0f, 1.0f / 60.0f, 1};
    for (int i = 0; i < 10; ++i)
        drive(&ch, m, &dr, 3.0f, 3.0f, NULL);
    float px = ch.position[0];
    for (int i = 0; i < 60; ++i) {
        drive(&ch, m, &dr, 3.0f, 3.0f, NULL);
        assert_float_equal(ch.position[2], 1.0f - HX - SKIN, 1e-4);
        assert_float_equal(ch.position[0] - px, 3.0f / 60.0f, 1e-4);
        px = ch.position[0];
    }
    kcc_mesh_destroy(m);
}

/* A flat wall quad split along its diagonal, as level compilers leave them (taken from ctf_inyard:
 * x 68..78, y -16..-7 in the plane z = 16), and a character walking into it at 46 degrees, a skin
 * from it. Both triangles are touched at once; the second one, met with the box against its
 * plane, may only repeat the first one's contact: the character slides the full tangential part of
 * every step (-0.0575 m in x), z unchanged, never stuck. (A box axis reported for the second
 * triangle, averaged with the wall's normal, would stop the slide dead at the seam.) */
static void flat_wall_split_along_a_diagonal_slides_across_the_seam(void **state)
{
    (void)state;
    scene s = {0};
    const float f0[3] = {60, -14, 0}, f1[3] = {90, -14, 0}, f2[3] = {90, -14, 16}, f3[3] = {60, -14, 16};
    sc_quad(&s, f0, f3, f2, f1);
    const float w0[3] = {78, -7, 16}, w1[3] = {78, -16, 16}, w2[3] = {68, -16, 16}, w3[3] = {68, -7, 16};
    sc_tri(&s, w0, w1, w2);
    sc_tri(&s, w2, w3, w0);
    kcc_mesh *m = sc_build(&s);
    kcc_character_desc d = kcc_character_default_desc();
    d.half_extents[0] = d.half_extents[2] = 0.47f;
    d.half_extents[1] = 0.875f;
    d.step_height = 0.5625f;
    d.max_slope_deg = 45.6f;
    kcc_character ch = make_char(72.6408539f, -13.1230001f, 15.5279999f, &d);
    kcc_move_result r;
    kcc_character_move(&ch, m, (vec3){0.0f, -0.0069444445f, 0.0f}, &r);
    assert_true(r.flags & KCC_MOVE_ON_GROUND);
    const float z = ch.position[2];
    assert_float_equal(z, 16.0f - 0.47f - d.skin_width, 1e-4);
    for (int i = 0; i < 60; ++i) {
        const float x = ch.position[0];
        kcc_character_move(&ch, m, (vec3){-0.057531774f, -0.0069444445f, 0.0602871403f}, &r);
        assert_true((r.flags & KCC_MOVE_STUCK) == 0);
        assert_true(r.flags & KCC_MOVE_HIT_WALL);
        assert_float_equal(ch.position[0] - x, -0.057531774f, 1e-4);
        assert_float_equal(ch.position[2], z, 1e-4);
    }
    kcc_mesh_destroy(m);
}

/* A wall (the plane z = 1) and, wholly behind its plane, a slanted face of the block behind it (an
 * edge on the plane at x = 1.7017, rising 0.11 m over 1 m of x). A character walking along the wall
 * while pushing into it slides at exactly the input's tangential speed, every frame, a skin from the
 * wall. Rule: when a sweep meets the wall's axis-aligned plane face first, a triangle wholly beyond
 * that plane is not tested, so the slanted face (which only a box gone through the wall's plane
 * touches, within the sweep's 0.1 mm window) never joins the averaged normal. */
static void a_face_behind_a_walls_plane_does_not_deflect_the_slide(void **state)
{
    (void)state;
    scene s = {0};
    sc_floor(&s, 0.0f, 20.0f, 1);
    const float w0[3] = {-20, 0, 1}, w1[3] = {20, 0, 1}, w2[3] = {20, 3, 1}, w3[3] = {-20, 3, 1};
    sc_quad(&s, w0, w3, w2, w1);
    const float xa = 1.7017f;
    const float b0[3] = {xa, 0, 1}, b1[3] = {xa, 3, 1}, b2[3] = {xa + 1.0f, 1.5f, 1.11f};
    sc_tri(&s, b0, b1, b2);
    kcc_mesh *m = sc_build(&s);
    kcc_character ch = make_char(0.0f, HY + SKIN, 0.0f, NULL);
    driver dr = {0.0f, 1.0f / 60.0f, 1};
    for (int i = 0; i < 15; ++i)
        drive(&ch, m, &dr, 4.0f, 4.0f, NULL);
    for (int i = 0; i < 45; ++i) {
        const float x = ch.position[0];
        const uint32_t f = drive(&ch, m, &dr, 4.0f, 4.0f, NULL);
        assert_true(f & KCC_MOVE_HIT_WALL);
        assert_float_equal(ch.position[0] - x, 4.0f / 60.0f, 1e-5);
        assert_float_equal(ch.position[2], 1.0f - HX - SKIN, 1e-5);
    }
    kcc_mesh_destroy(m);
}

/* ---------------------------------------------------------------- narrow support, ceilings */

/* A block whose side face lies in the plane of the box's side (x = 0.3, the box centred at x = 0),
 * 10 and 1 cm wide, the box dropped onto it from 0.5 to 3 m at 30, 60 and 144 Hz, no horizontal
 * input: it lands on the block's top (feet a skin above y = 1) without moving sideways. Rule: a
 * face that lies along the motion is no contact of it, so the landing never takes the side face
 * for a wall and never shoves the box off the 1 cm block. */
static void landing_on_a_block_flush_with_the_box_side_stays_put(void **state)
{
    (void)state;
    const float widths[2] = {0.1f, 0.01f}, rates[3] = {30.0f, 60.0f, 144.0f}, drops[3] = {0.5f, 1.0f, 3.0f};
    for (int w = 0; w < 2; ++w)
        for (int h = 0; h < 3; ++h) {
            scene s = {0};
            sc_box(&s, -30.0f, -11.0f, -30.0f, 30.0f, -10.0f, 30.0f);
            sc_box(&s, HX - widths[w], -10.0f, -5.0f, HX, 1.0f, 5.0f);
            kcc_mesh *m = sc_build(&s);
            kcc_character ch = make_char(0.0f, 1.0f + HY + drops[h], 0.0f, NULL);
            driver dr = {0.0f, 1.0f / rates[h], 1};
            for (int i = 0; i < (int)(2.0f * rates[h]); ++i)
                drive(&ch, m, &dr, 0.0f, 0.0f, NULL);
            assert_float_equal(ch.position[0], 0.0f, 0.0);
            assert_float_equal(ch.position[1], 1.0f + SKIN + HY, 1e-4);
            kcc_mesh_destroy(m);
        }
}

/* Supports narrower than the box, where all four edge rays miss: a 0.1 m beam, a 0.2 m pillar top
 * and the ridge of a 30-degree roof. The character stays on top (centre = top + 0.9 + skin). */
static void narrow_support_holds_the_character(void **state)
{
    (void)state;
    for (int k = 0; k < 3; ++k) {
        scene s = {0};
        sc_floor(&s, 0.0f, 10.0f, 2);
        float top = 1.0f;
        if (k == 0)
            sc_box(&s, -5.0f, 0.0f, -0.05f, 5.0f, 1.0f, 0.05f);
        else if (k == 1)
            sc_box(&s, -0.1f, 0.0f, -0.1f, 0.1f, 1.0f, 0.1f);
        else {
            float t = tanf(30.0f * 3.14159265f / 180.0f);
            const float l0[3] = {-2, 1 - 2 * t, -5}, l1[3] = {0, 1, -5}, l2[3] = {0, 1, 5},
                        l3[3] = {-2, 1 - 2 * t, 5};
            const float r0[3] = {0, 1, -5}, r1[3] = {2, 1 - 2 * t, -5}, r2[3] = {2, 1 - 2 * t, 5},
                        r3[3] = {0, 1, 5};
            sc_quad(&s, l0, l3, l2, l1);
            sc_quad(&s, r0, r3, r2, r1);
        }
        kcc_mesh *m = sc_build(&s);
        kcc_character ch = make_char(0.0f, top + HY + 0.2f, 0.0f, NULL);
        driver dr = {0.0f, 1.0f / 60.0f, 1};
        kcc_move_result r;
        for (int i = 0; i < 120; ++i)
            drive(&ch, m, &dr, 0.0f, 0.0f, &r);
        assert_true(r.flags & KCC_MOVE_ON_GROUND);
        assert_float_equal(ch.position[1], top + HY + SKIN, 1e-4);
        assert_false(overlaps(&ch, m));
        kcc_mesh_destroy(m);
    }
}

/* Jumping at 6 m/s under a ceiling at y = 2.5: the head stops a skin below it (centre 2.5 - 0.9 -
 * skin), the move reports HIT_CEILING, and the character falls back to the floor. */
static void jumping_into_a_ceiling_stops_and_reports_it(void **state)
{
    (void)state;
    scene s = {0};
    sc_floor(&s, 0.0f, 10.0f, 2);
    sc_box(&s, -10.0f, 2.5f, -10.0f, 10.0f, 2.55f, 10.0f);
    kcc_mesh *m = sc_build(&s);
    kcc_character ch = make_char(0.0f, HY + SKIN, 0.0f, NULL);
    driver dr = {0.0f, 1.0f / 60.0f, 1};
    drive(&ch, m, &dr, 0, 0, NULL);
    dr.vy = 6.0f;
    int ceil = 0;
    float maxy = 0.0f;
    for (int i = 0; i < 120; ++i) {
        uint32_t f = drive(&ch, m, &dr, 0.0f, 0.0f, NULL);
        ceil += (f & KCC_MOVE_HIT_CEILING) != 0;
        maxy = fmaxf(maxy, ch.position[1]);
        assert_false(overlaps(&ch, m));
    }
    assert_true(ceil >= 1);
    assert_float_equal(maxy, 2.5f - HY - SKIN, 1e-4);
    assert_true(ch.on_ground);
    assert_float_equal(ch.position[1], HY + SKIN, 1e-5);
    kcc_mesh_destroy(m);
}

/* A tunnel 1.85 m high (the box is 1.8 m) is walked through at full speed. */
static void low_tunnel_is_walkable_when_the_box_fits(void **state)
{
    (void)state;
    scene s = {0};
    sc_floor(&s, 0.0f, 10.0f, 2);
    sc_box(&s, 0.0f, 1.85f, -2.0f, 4.0f, 3.0f, 2.0f);
    kcc_mesh *m = sc_build(&s);
    kcc_character ch = make_char(-1.0f, HY + SKIN, 0.0f, NULL);
    driver dr = {0.0f, 1.0f / 60.0f, 1};
    for (int i = 0; i < 90; ++i) {
        uint32_t f = drive(&ch, m, &dr, 4.0f, 0.0f, NULL);
        assert_false(f & (KCC_MOVE_STUCK | KCC_MOVE_HIT_WALL));
    }
    assert_float_equal(ch.position[0], 5.0f, 1e-3);
    kcc_mesh_destroy(m);
}

/* A floor, a 0.2 m ledge from x = 1 to x1 across the way and a 0.1 m slab above at `ceiling`; the
 * character (step height 0.35) stands at x = -0.5, walking towards +x. */
static kcc_mesh *ledge_under_ceiling(float x1, float ceiling, kcc_character *ch)
{
    scene s = {0};
    sc_floor(&s, 0.0f, 10.0f, 2);
    sc_box(&s, 1.0f, 0.0f, -3.0f, x1, 0.2f, 3.0f);
    sc_box(&s, -4.0f, ceiling, -4.0f, 4.0f, ceiling + 0.1f, 4.0f);
    *ch = make_char(-0.5f, HY + SKIN, 0.0f, NULL);
    return sc_build(&s);
}

/* Blocked by the ledge: on the floor, at its riser, never on it. */
static void stopped_at_the_riser(const kcc_character *ch)
{
    assert_float_equal(ch->position[1], HY + SKIN, 1e-4);
    assert_true(ch->position[0] <= 1.0f - HX + 1e-5f);
    assert_true(ch->position[0] >= 1.0f - HX - 0.01f);
}

/* A 0.2 m ledge (step height 0.35) at x = 1 under a ceiling: the box (1.8 m) climbs it when the
 * ceiling leaves room on top (at 2.05 m: 0.05 m above the head on the ledge), and is blocked when
 * it does not (at 1.9 m: 0.1 m of headroom on the floor, -0.1 m on the ledge), never overlapping
 * the level on the way: a step up may not pass through a ceiling. */
static void a_step_up_needs_headroom_for_the_box(void **state)
{
    (void)state;
    const float ceilings[2] = {2.05f, 1.9f};
    for (int k = 0; k < 2; ++k) {
        kcc_character ch;
        kcc_mesh *m = ledge_under_ceiling(3.0f, ceilings[k], &ch);
        driver dr = {0.0f, 1.0f / 60.0f, 1};
        uint32_t f = 0;
        for (int i = 0; i < 60; ++i) {
            f = drive(&ch, m, &dr, 3.0f, 0.0f, NULL);
            assert_false(overlaps(&ch, m));
        }
        if (k == 0) {
            assert_float_equal(ch.position[1], 0.2f + HY + SKIN, 1e-4);
            assert_true(ch.position[0] > 1.5f);
        } else {
            stopped_at_the_riser(&ch);
            assert_true(f & (KCC_MOVE_HIT_WALL | KCC_MOVE_STUCK));
        }
        kcc_mesh_destroy(m);
    }
}

/* The same with a beam 0.1 m wide instead of the ledge, narrower than the box, so that while the
 * box straddles it every edge ray passes it and only the probe's box sweep finds it (the sweep
 * starts from the full step-height lift, inside the low ceiling): with headroom the box climbs onto
 * it, crosses and comes down; without, it stops at the beam. Never overlapping. */
static void a_narrow_beam_under_a_ceiling_is_crossed_only_with_headroom(void **state)
{
    (void)state;
    const float ceilings[2] = {2.05f, 1.9f};
    for (int k = 0; k < 2; ++k) {
        kcc_character ch;
        kcc_mesh *m = ledge_under_ceiling(1.1f, ceilings[k], &ch);
        driver dr = {0.0f, 1.0f / 60.0f, 1};
        bool on_beam = false;
        for (int i = 0; i < 90; ++i) {
            kcc_move_result r;
            drive(&ch, m, &dr, 3.0f, 0.0f, &r);
            assert_false(overlaps(&ch, m));
            if (fabsf(ch.position[1] - (0.2f + HY + SKIN)) < 1e-4f && ch.position[0] - HX < 1.0f &&
                ch.position[0] + HX > 1.1f) {
                on_beam = true;
                assert_true(r.flags & KCC_MOVE_ON_GROUND);
                /* the beam is the ground, though every edge ray passes it and meets the floor */
                assert_float_equal(r.ground_height, 0.2f, 1e-4);
            }
        }
        if (k == 0) {
            assert_true(on_beam);
            assert_true(ch.position[0] > 2.0f);
            assert_float_equal(ch.position[1], HY + SKIN, 1e-4);
        } else {
            assert_false(on_beam);
            stopped_at_the_riser(&ch);
        }
        kcc_mesh_destroy(m);
    }
}

/* ---------------------------------------------------------------- speed */

/* At 60 m/s (1 m per frame) into a 5 cm wall at x = 3.5 the box stops in front of it. */
static void high_speed_does_not_tunnel_through_thin_walls(void **state)
{
    (void)state;
    scene s = {0};
    sc_floor(&s, 0.0f, 20.0f, 2);
    sc_box(&s, 3.5f, 0.0f, -10.0f, 3.55f, 3.0f, 10.0f);
    kcc_mesh *m = sc_build(&s);
    kcc_character ch = make_char(0.0f, HY + SKIN, 0.0f, NULL);
    driver dr = {0.0f, 1.0f / 60.0f, 1};
    for (int i = 0; i < 30; ++i)
        drive(&ch, m, &dr, 60.0f, 0.0f, NULL);
    assert_float_equal(ch.position[0], 3.5f - HX - SKIN, 1e-4);
    /* and a lone thin quad, no thickness at all */
    kcc_mesh_destroy(m);
    s = (scene){0};
    sc_floor(&s, 0.0f, 20.0f, 2);
    const float q0[3] = {3.5f, 0, -10}, q1[3] = {3.5f, 3, -10}, q2[3] = {3.5f, 3, 10}, q3[3] = {3.5f, 0, 10};
    sc_quad(&s, q0, q1, q2, q3);
    m = sc_build(&s);
    ch = make_char(0.0f, HY + SKIN, 0.0f, NULL);
    for (int i = 0; i < 30; ++i)
        drive(&ch, m, &dr, 120.0f, 0.0f, NULL);
    assert_float_equal(ch.position[0], 3.5f - HX - SKIN, 1e-4);
    kcc_mesh_destroy(m);
}

/* Falling from 100 m (reaching ~44 m/s) onto a 5 cm slab at y = 0: it lands on top. */
static void falling_from_great_height_lands_on_a_thin_floor(void **state)
{
    (void)state;
    scene s = {0};
    sc_box(&s, -5.0f, -0.05f, -5.0f, 5.0f, 0.0f, 5.0f);
    kcc_mesh *m = sc_build(&s);
    kcc_character ch = make_char(0.5f, 100.0f, 0.5f, NULL);
    driver dr = {0.0f, 1.0f / 30.0f, 1};
    rests_on_floor(&ch, m, &dr, 200, 0.0f, 1e-5);
    kcc_mesh_destroy(m);
}

/* ---------------------------------------------------------------- start states, tuning */

/* Created half sunk into a floor slab (0.4 m deep) it is pushed up within a few frames, never
 * launched above the floor and never through it; created overlapping a wall it is pushed aside. */
static void start_inside_geometry_is_pushed_out(void **state)
{
    (void)state;
    scene s = {0};
    sc_box(&s, -10.0f, -1.0f, -10.0f, 10.0f, 0.0f, 10.0f);
    sc_box(&s, 2.0f, 0.0f, -10.0f, 3.0f, 3.0f, 10.0f);
    kcc_mesh *m = sc_build(&s);
    kcc_character ch = make_char(0.0f, HY - 0.4f, 0.0f, NULL);
    driver dr = {0.0f, 1.0f / 60.0f, 1};
    int frames = 0;
    while (overlaps(&ch, m) && frames < 10) {
        drive(&ch, m, &dr, 0.0f, 0.0f, NULL);
        frames++;
        assert_true(ch.position[1] <= HY + 0.25f);
        assert_true(ch.position[1] >= HY - 0.4f - 1e-6f);
    }
    assert_true(frames <= 5);
    rests_on_floor(&ch, m, &dr, 30, 0.0f, 1e-4);
    /* overlapping the wall at x = 2 by 0.1 m */
    ch = make_char(2.0f - HX + 0.1f, HY + SKIN, 0.0f, NULL);
    frames = 0;
    while (overlaps(&ch, m) && frames < 10) {
        drive(&ch, m, &dr, 0.0f, 0.0f, NULL);
        frames++;
    }
    assert_true(frames <= 3);
    assert_true(ch.position[0] <= 2.0f - HX);
    assert_true(ch.position[0] > 2.0f - HX - 0.05f);
    assert_float_equal(ch.position[1], HY + SKIN, 1e-3);
    kcc_mesh_destroy(m);

    /* sunk 1.2 m (past half its height) into a floor that is a single quad: out upwards, not down */
    s = (scene){0};
    sc_floor(&s, 0.0f, 10.0f, 1);
    m = sc_build(&s);
    ch = make_char(0.0f, HY - 1.2f, 0.0f, NULL);
    dr.vy = 0.0f;
    for (frames = 0; overlaps(&ch, m) && frames < 20; ++frames) {
        drive(&ch, m, &dr, 0.0f, 0.0f, NULL);
        assert_true(ch.position[1] >= HY - 1.2f - 1e-6f);
    }
    assert_true(frames <= 8); /* 1.2 m at max_push_out 0.2 m per move */
    rests_on_floor(&ch, m, &dr, 10, 0.0f, 1e-4);
    kcc_mesh_destroy(m);
}

/* The push out of a start overlap is swept: it never pushes the box into a triangle it was clear of.
 * Feet 5 cm into a floor, head 1 mm under a surface sloping down at 45 degrees towards +x (y = 1.751
 * at the box's top edge x = 0.3): pushed straight up the box would sink 5 cm into the slope; instead
 * it slides up its underside (towards -x) and is out of the floor within a few frames (each frame
 * pushes up to 5.2 cm, of which half is rise along the slope), then rests on the floor. Under a flat
 * ceiling 1 mm above the head the box does not fit at all (1.751 m < 1.8 m): it is never pushed
 * into the ceiling either. */
static void the_push_out_never_pushes_into_more_of_the_level(void **state)
{
    (void)state;
    for (int flat = 0; flat < 2; ++flat) {
        /* the surface over the box: y = y0 - k x, 1 mm above the box's top at x = 0.3 */
        const float k = flat ? 0.0f : 1.0f, y0 = 1.751f + 0.3f * k;
        const float ta[3] = {-3.0f, y0 + 3.0f * k, -3.0f}, tb[3] = {3.0f, y0 - 3.0f * k, -3.0f};
        const float tc[3] = {3.0f, y0 - 3.0f * k, 3.0f}, td[3] = {-3.0f, y0 + 3.0f * k, 3.0f};
        scene s = {0}, only = {0};
        sc_floor(&s, 0.0f, 10.0f, 1);
        sc_quad(&s, ta, tb, tc, td);
        sc_quad(&only, ta, tb, tc, td);
        kcc_mesh *m = sc_build(&s), *top = sc_build(&only);
        kcc_character ch = make_char(0.0f, HY - 0.05f, 0.0f, NULL);
        assert_true(overlaps(&ch, m) && !overlaps(&ch, top));
        driver dr = {0.0f, 1.0f / 60.0f, 1};
        uint32_t flags = 0;
        int frames = 0;
        for (; frames < 10 && overlaps(&ch, m); ++frames) {
            flags |= drive(&ch, m, &dr, 0.0f, 0.0f, NULL);
            assert_false(overlaps(&ch, top));
        }
        assert_true(flags & KCC_MOVE_PUSHED_OUT);
        if (!flat) {
            assert_true(frames <= 6);
            assert_true(ch.position[0] < 0.0f); /* along the slope, away from it */
            rests_on_floor(&ch, m, &dr, 30, 0.0f, 1e-4);
            assert_false(overlaps(&ch, top));
        }
        kcc_mesh_destroy(m);
        kcc_mesh_destroy(top);
    }
}

/* Retuning between frames: a 0.45 m ledge blocks at step height 0.35 and is climbed after raising
 * it to 0.5; growing the box into a wall is refused with KCC_ERR_OVERLAP and changes nothing. */
static void retuning_between_frames_takes_effect(void **state)
{
    (void)state;
    scene s = {0};
    sc_floor(&s, 0.0f, 10.0f, 2);
    sc_box(&s, 1.0f, 0.0f, -5.0f, 5.0f, 0.45f, 5.0f);
    sc_box(&s, -5.0f, 0.0f, -0.8f, 5.0f, 3.0f, -0.4f);
    kcc_mesh *m = sc_build(&s);
    kcc_character ch = make_char(0.0f, HY + SKIN, 0.0f, NULL);
    driver dr = {0.0f, 1.0f / 60.0f, 1};
    for (int i = 0; i < 40; ++i)
        drive(&ch, m, &dr, 2.0f, 0.0f, NULL);
    assert_float_equal(ch.position[1], HY + SKIN, 1e-5);
    kcc_character_desc d = ch.desc;
    d.step_height = 0.5f;
    assert_int_equal(kcc_character_set_desc_checked(&ch, &d, m), KCC_OK);
    for (int i = 0; i < 20; ++i)
        drive(&ch, m, &dr, 2.0f, 0.0f, NULL);
    assert_float_equal(ch.position[1], 0.45f + HY + SKIN, 1e-4);
    /* wall at z in [-0.8, -0.4]: a box of half width 0.5 would reach z = -0.5 */
    kcc_character before = ch;
    d.half_extents[2] = 0.5f;
    assert_int_equal(kcc_character_set_desc_checked(&ch, &d, m), KCC_ERR_OVERLAP);
    assert_memory_equal(&before, &ch, sizeof(ch));
    /* the form without a mesh reads no level (none is kept from the moves): it checks no overlap */
    kcc_character unchecked = before;
    assert_int_equal(kcc_character_set_desc(&unchecked, &d), KCC_OK);
    /* a taller box keeps its feet where they were */
    d.half_extents[2] = 0.3f;
    d.half_extents[1] = 1.0f;
    assert_int_equal(kcc_character_set_desc_checked(&ch, &d, m), KCC_OK);
    assert_float_equal(ch.position[1] - 1.0f, before.position[1] - HY, 1e-6);
    kcc_mesh_destroy(m);
}

/* ---------------------------------------------------------------- +Z up */

/* The stairs and the ramp with +Z up give the same positions as with +Y up, axes swapped. */
static void z_up_behaves_like_y_up(void **state)
{
    (void)state;
    kcc_character_desc dz = kcc_character_default_desc();
    dz.up_axis = 2;
    dz.half_extents[1] = HX;
    dz.half_extents[2] = HY;
    for (int k = 0; k < 2; ++k) {
        kcc_mesh *my = k ? ramp_scene(25.0f, false) : stairs_scene(6, 0.25f, 0.35f, false);
        kcc_mesh *mz = k ? ramp_scene(25.0f, true) : stairs_scene(6, 0.25f, 0.35f, true);
        kcc_character cy = make_char(-1.0f, HY + SKIN, 0.3f, NULL);
        kcc_character cz = make_char(-1.0f, 0.3f, HY + SKIN, &dz);
        driver ry = {0.0f, 1.0f / 60.0f, 1}, rz = {0.0f, 1.0f / 60.0f, 2};
        for (int i = 0; i < 120; ++i) {
            uint32_t fy = drive(&cy, my, &ry, 3.0f, 0.5f, NULL);
            uint32_t fz = drive(&cz, mz, &rz, 3.0f, 0.5f, NULL);
            assert_int_equal(fy, fz);
            assert_float_equal(cy.position[0], cz.position[0], 1e-5);
            assert_float_equal(cy.position[1], cz.position[2], 1e-5);
            assert_float_equal(cy.position[2], cz.position[1], 1e-5);
        }
        assert_true(cz.position[2] > HY + 1.0f);
        kcc_mesh_destroy(my);
        kcc_mesh_destroy(mz);
    }
}

/* ---------------------------------------------------------------- debug output */

/* kcc_character_move_debug moves exactly like kcc_character_move and reports what it looked at: on
 * a flat floor at y = 0 the four edge rays end at the floor under the box's corners; walking into
 * the wall at z = 1 the first contact is that wall, its averaged normal -z, and the slide keeps the
 * x part of the motion. */
static void move_debug_reports_rays_contacts_and_positions(void **state)
{
    (void)state;
    scene s = {0};
    sc_floor(&s, 0.0f, 10.0f, 2);
    sc_box(&s, -10.0f, 0.0f, 1.0f, 10.0f, 3.0f, 1.5f);
    kcc_mesh *m = sc_build(&s);
    kcc_character a = make_char(0.0f, HY + SKIN, 0.0f, NULL), b = a;
    kcc_move_debug dbg;
    kcc_move_result ra, rb;
    for (int i = 0; i < 40; ++i) {
        vec3 d = {0.05f, -0.01f, 0.05f};
        kcc_character_move(&a, m, d, &ra);
        kcc_character_move_debug(&b, m, d, &rb, &dbg);
        assert_memory_equal(&a, &b, sizeof(a));
        assert_memory_equal(&ra, &rb, sizeof(ra));
        assert_int_equal(dbg.ray_walkable, 0xF);
        for (int k = 0; k < 4; ++k) {
            assert_float_equal(dbg.ray_to[k][1], 0.0f, 1e-6);
            assert_float_equal(fabsf(dbg.ray_to[k][0] - b.position[0]), HX, 1e-5);
            assert_float_equal(fabsf(dbg.ray_to[k][2] - b.position[2]), HX, 1e-5);
        }
        assert_true(dbg.tried & (1u << 1));
    }
    /* against the wall (z = 1 - 0.3 - skin): the last move slid */
    assert_int_equal(rb.branch, KCC_BRANCH_P4);
    assert_true(dbg.contact_count >= 1);
    assert_float_equal(dbg.averaged_normal[2], -1.0f, 1e-5);
    assert_float_equal(dbg.slide[2], 0.0f, 1e-6);
    assert_true(dbg.slide[0] > 0.0f);
    assert_true(dbg.tried & (1u << 4));
    assert_float_equal(dbg.p4[2], b.position[2], 1e-6);
    kcc_mesh_destroy(m);
}

/* ---------------------------------------------------------------- bad input */

static void bad_input_gets_a_status_or_a_flag_never_a_crash(void **state)
{
    (void)state;
    kcc_character ch;
    kcc_character_desc d = kcc_character_default_desc();
    assert_int_equal(kcc_character_init(NULL, &d, (vec3){0, 0, 0}), KCC_ERR_NULL_ARGUMENT);
    d.step_height = -1.0f;
    assert_int_equal(kcc_character_init(&ch, &d, (vec3){0, 0, 0}), KCC_ERR_BAD_DESC);
    d = kcc_character_default_desc();
    d.max_slope_deg = NAN;
    assert_int_equal(kcc_character_init(&ch, &d, (vec3){0, 0, 0}), KCC_ERR_NON_FINITE);
    d = kcc_character_default_desc();
    d.up_axis = 4;
    assert_int_equal(kcc_character_init(&ch, &d, (vec3){0, 0, 0}), KCC_ERR_BAD_DESC);
    d = kcc_character_default_desc();
    d.half_extents[0] = 0.0f;
    assert_int_equal(kcc_character_init(&ch, &d, (vec3){0, 0, 0}), KCC_ERR_BAD_DESC);
    assert_int_equal(kcc_character_init(&ch, NULL, (vec3){INFINITY, 0, 0}), KCC_ERR_NON_FINITE);
    assert_int_equal(kcc_character_set_desc(NULL, &d), KCC_ERR_NULL_ARGUMENT);

    scene s = {0};
    sc_floor(&s, 0.0f, 10.0f, 2);
    kcc_mesh *m = sc_build(&s);
    ch = make_char(0.0f, HY + SKIN, 0.0f, NULL);
    kcc_character before = ch;
    assert_int_equal(kcc_character_set_desc(&ch, &d), KCC_ERR_BAD_DESC);
    assert_memory_equal(&before, &ch, sizeof(ch));
    kcc_move_result r;
    kcc_character_move(&ch, m, (vec3){NAN, 0.0f, 1.0f}, &r);
    assert_true(r.flags & KCC_MOVE_BAD_INPUT);
    assert_float_equal(ch.position[0], 0.0f, 0.0);
    kcc_character_move(&ch, m, (vec3){INFINITY, 0.0f, 0.0f}, NULL);
    assert_float_equal(ch.position[0], 0.0f, 0.0);
    kcc_character_move(&ch, NULL, (vec3){1.0f, 0.0f, 0.0f}, &r);
    assert_true(r.flags & KCC_MOVE_BAD_INPUT);
    assert_float_equal(ch.position[0], 0.0f, 0.0);
    kcc_character_move(NULL, m, (vec3){1.0f, 0.0f, 0.0f}, &r);
    kcc_mesh_destroy(m);
}

/* A displacement beyond KCC_MAX_DISPLACEMENT (10 km) is bad input: no movement. One at the limit is
 * swept like any other: into a wall at x = 5 it stops a skin in front of it. The limit keeps every
 * region a move computes finite (2e38 m would grow the cache's region to infinity). */
static void displacements_beyond_the_limit_are_bad_input_and_at_it_are_swept(void **state)
{
    (void)state;
    scene s = {0};
    sc_floor(&s, 0.0f, 10.0f, 2);
    sc_box(&s, 5.0f, 0.0f, -10.0f, 6.0f, 3.0f, 10.0f);
    kcc_mesh *m = sc_build(&s);
    kcc_character ch = make_char(0.0f, HY + SKIN, 0.0f, NULL);
    const float beyond[3] = {1.5f * KCC_MAX_DISPLACEMENT, -2e38f, 3.4e38f};
    kcc_move_result r;
    for (int i = 0; i < 3; ++i) {
        vec3 d = {0.0f, 0.0f, 0.0f};
        d[i] = beyond[i];
        kcc_character_move(&ch, m, d, &r);
        assert_true(r.flags & KCC_MOVE_BAD_INPUT);
        assert_float_equal(ch.position[0], 0.0f, 0.0);
        assert_float_equal(ch.position[1], HY + SKIN, 1e-5);
        assert_float_equal(ch.position[2], 0.0f, 0.0);
    }
    kcc_character_move(&ch, m, (vec3){KCC_MAX_DISPLACEMENT, 0.0f, 0.0f}, &r);
    assert_false(r.flags & KCC_MOVE_BAD_INPUT);
    assert_true(r.flags & KCC_MOVE_HIT_WALL);
    assert_float_equal(ch.position[0], 5.0f - HX - SKIN, 1e-3);
    assert_false(overlaps(&ch, m));
    kcc_mesh_destroy(m);
}

/* ---------------------------------------------------------------- soak */

typedef struct soak_stats {
    long moves, overlaps, escapes, stuck, crossed, fell_off;
} soak_stats;

/* A character and a frame rate to soak with. The first is the benchmark's (Quake 3's player box);
 * the others vary what a game tunes: box size, step height, slope limit, skin, frame rate, speed
 * and the up axis (the level turned to +Z up). The 12 and 20 m/s ones walk 0.4 and 0.33 m a move:
 * their walking moves run as two sub-moves. */
typedef struct soak_config {
    const char *name;
    float       half[3]; /* along x, the horizontal axis that is not x, up */
    float       step, slope, skin;
    int         hz;
    float       speed;   /* m/s */
    int         up;
    float       offset[3]; /* m: the level, its spawns and the characters moved this far */
} soak_config;

static const soak_config soak_player = {"player", {0.47f, 0.47f, 0.875f}, 0.5625f, 45.6f, 0.002f, 60, 5.0f, 1,
                                     {0.0f, 0.0f, 0.0f}};
static const soak_config soak_variants[] = {
    {"default desc, 30 Hz, 12 m/s", {0.3f, 0.3f, 0.9f}, 0.35f, 45.0f, 0.002f, 30, 12.0f, 1, {0.0f, 0.0f, 0.0f}},
    {"small box, 144 Hz", {0.2f, 0.2f, 0.5f}, 0.2f, 30.0f, 0.001f, 144, 4.0f, 1, {0.0f, 0.0f, 0.0f}},
    {"large box, 120 Hz, 1 cm skin", {0.8f, 0.8f, 1.2f}, 0.5f, 50.0f, 0.01f, 120, 6.0f, 1, {0.0f, 0.0f, 0.0f}},
    {"+Z up, 20 m/s", {0.3f, 0.3f, 0.9f}, 0.35f, 45.0f, 0.002f, 60, 20.0f, 2, {0.0f, 0.0f, 0.0f}},
    {"no step, 360 Hz", {0.25f, 0.25f, 1.0f}, 0.0f, 60.0f, 0.002f, 360, 5.0f, 1, {0.0f, 0.0f, 0.0f}},
    /* 10 km from the origin on both horizontal axes (docs/collide.md, "Far from the origin"):
     * floats there step by 0.98 mm, and the soak's rules hold as at the origin */
    {"player 10 km out", {0.47f, 0.47f, 0.875f}, 0.5625f, 45.6f, 0.002f, 60, 5.0f, 1,
     {10000.0f, 0.0f, -10000.0f}},
    {"+Z up, 10 km out and 2 km up", {0.3f, 0.3f, 0.9f}, 0.35f, 45.0f, 0.002f, 60, 5.0f, 2,
     {-10000.0f, 10000.0f, 2000.0f}},
};

/* (x, y, z) -> (x, -z, y): a +Y up level turned +Z up, spawn points with it. */
static void level_to_z_up(kcc_level *lv)
{
    for (uint32_t i = 0; i < lv->vertex_count + lv->spawn_count; ++i) {
        float *p = i < lv->vertex_count ? &lv->positions[3 * i] : &lv->spawns[3 * (i - lv->vertex_count)];
        const float y = p[1];
        p[1] = -p[2];
        p[2] = y;
    }
}

/* lv_in, turned +Z up (cf->up 2) and moved by cf->offset, into *lv; the copied positions and spawns
 * (to free) in *pos and *spawns, NULL when lv_in is used as it is. */
static void soak_level_copy(const kcc_level *lv_in, const soak_config *cf, kcc_level *lv, float **pos,
                            float **spawns)
{
    *lv = *lv_in;
    *pos = *spawns = NULL;
    const bool moved = cf->offset[0] != 0.0f || cf->offset[1] != 0.0f || cf->offset[2] != 0.0f;
    if (cf->up != 2 && !moved)
        return;
    *pos = malloc(sizeof(float) * 3 * lv->vertex_count);
    *spawns = malloc(sizeof(float) * 3 * (lv->spawn_count + 1));
    assert_non_null(*pos);
    assert_non_null(*spawns);
    memcpy(*pos, lv->positions, sizeof(float) * 3 * lv->vertex_count);
    memcpy(*spawns, lv->spawns, sizeof(float) * 3 * lv->spawn_count);
    lv->positions = *pos;
    lv->spawns = *spawns;
    if (cf->up == 2)
        level_to_z_up(lv);
    for (uint32_t i = 0; i < 3 * (lv->vertex_count + lv->spawn_count); ++i) {
        float *p = i < 3 * lv->vertex_count ? &(*pos)[i] : &(*spawns)[i - 3 * lv->vertex_count];
        *p += cf->offset[i % 3];
    }
}

/* The character cf describes: its box on the world's axes, step (snap the same, 0.1 m without a
 * step), slope limit, skin and up axis. */
static kcc_character_desc soak_desc(const soak_config *cf)
{
    const int u = cf->up == 2 ? 2 : 1, side = cf->up == 2 ? 1 : 2;
    kcc_character_desc d = kcc_character_default_desc();
    d.half_extents[0] = cf->half[0];
    d.half_extents[side] = cf->half[1];
    d.half_extents[u] = cf->half[2];
    d.step_height = cf->step;
    d.ground_snap = cf->step > 0.0f ? cf->step : 0.1f;
    d.max_slope_deg = cf->slope;
    d.skin_width = cf->skin;
    d.up_axis = cf->up;
    return d;
}

/* A move made wholly in the air without touching anything, from before to ch's position: true when
 * the collide layer's sweep of d's box (shrunk by the tolerance) along it finds nothing before its
 * end; otherwise counts a crossing and says which triangle. */
static bool soak_flight_is_open(const kcc_mesh *m, const kcc_character_desc *d, const kcc_character *ch,
                                const vec3 before, const soak_config *cf, int character, int frame,
                                soak_stats *st)
{
    vec3 box[2], path;
    for (int k = 0; k < 3; ++k) {
        box[0][k] = before[k] - d->half_extents[k] + KCC_PENETRATION_TOLERANCE;
        box[1][k] = before[k] + d->half_extents[k] - KCC_PENETRATION_TOLERANCE;
        path[k] = ch->position[k] - before[k];
    }
    kcc_sweep_hit h;
    if (kcc_mesh_sweep_aabb(m, (const vec3 *)box, path, &h) && !h.start_overlap) {
        st->crossed++;
        print_message("# soak %s: character %d frame %d crossed triangle %u at t %g\n",
                      cf->name, character, frame, h.triangle, (double)h.t);
        return false;
    }
    return true;
}

/* Character c wandering from p for frames frames (its random turns and jumps from *rng), counted
 * into st; it stops when it leaves bounds (grown by 1 m). */
static void soak_character(const kcc_mesh *m, const vec3 bounds[2], const kcc_character_desc *d,
                           const soak_config *cf, int c, const vec3 p, int frames, uint64_t *rng,
                           soak_stats *st)
{
    const uint32_t turn = (uint32_t)(3 * cf->hz / 2), jump = (uint32_t)(2 * cf->hz);
    kcc_character ch;
    assert_int_equal(kcc_character_init(&ch, d, p), KCC_OK);
    driver dr = {0.0f, 1.0f / (float)cf->hz, cf->up};
    float heading = (float)c;
    bool clear = !overlaps(&ch, m);
    for (int f = 0; f < frames; ++f) {
        *rng = *rng * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t r = (uint32_t)(*rng >> 33);
        if (r % turn == 0)
            heading += (float)(r % 628) * 0.01f;
        vec3 before;
        glm_vec3_copy(ch.position, before);
        const bool airborne = !ch.on_ground;
        kcc_move_result res;
        uint32_t fl = drive(&ch, m, &dr, cf->speed * cosf(heading), cf->speed * sinf(heading), &res);
        if ((fl & KCC_MOVE_ON_GROUND) && r % jump == 1)
            dr.vy = 5.0f;
        if (fl & KCC_MOVE_STUCK) {
            st->stuck++;
            heading += 1.3f;
        }
        st->moves++;
        bool ov = overlaps(&ch, m);
        if (clear && ov)
            st->overlaps++;
        /* this move went straight through open space */
        const bool open_flight =
            clear && airborne && fl == 0 && soak_flight_is_open(m, d, &ch, before, cf, c, f, st);
        clear = clear || !ov;
        bool outside = false;
        for (int k = 0; k < 3; ++k)
            outside |= ch.position[k] < bounds[0][k] - 1.0f || ch.position[k] > bounds[1][k] + 1.0f;
        if (outside) {
            /* Leaving by a straight flight that crossed nothing is falling off an open
             * level's edge (a map in space); any other way out went through something. */
            if (open_flight)
                st->fell_off++;
            else
                st->escapes++;
            break;
        }
    }
}

/* Characters wander from the spawn points for `seconds` with a player-like driver (gravity, jumps,
 * heading changes); every frame: no overlap beyond the tolerance (for a character that started
 * clear); a move made wholly in the air without touching anything went the straight way (the
 * collide layer's sweep along it finds nothing before its end); and never outside the level's
 * bounds, unless by such a move (off the edge of a level open to the void; counted apart). */
static void soak_level(const kcc_level *lv_in, const soak_config *cf, int chars, float seconds,
                       soak_stats *st)
{
    kcc_level lv;
    float *pos, *spawns;
    soak_level_copy(lv_in, cf, &lv, &pos, &spawns);
    kcc_mesh *m = NULL;
    assert_int_equal(kcc_level_build_mesh(&lv, &m), KCC_OK);
    vec3 bounds[2];
    kcc_mesh_bounds(m, bounds);
    const int u = cf->up == 2 ? 2 : 1;
    const kcc_character_desc d = soak_desc(cf);
    const int frames = (int)(seconds * (float)cf->hz);
    uint64_t rng = 0x9E3779B97F4A7C15ull;
    for (int c = 0; c < chars && lv.spawn_count > 0; ++c) {
        const float *sp = &lv.spawns[3 * (uint32_t)(c % (int)lv.spawn_count)];
        vec3 p = {sp[0], sp[1], sp[2]};
        p[u] += d.half_extents[u] + 0.05f;
        soak_character(m, (const vec3 *)bounds, &d, cf, c, p, frames, &rng, st);
    }
    kcc_mesh_destroy(m);
    free(pos);
    free(spawns);
}

static void soak_add(soak_stats *all, const soak_stats *one)
{
    all->moves += one->moves;
    all->overlaps += one->overlaps;
    all->escapes += one->escapes;
    all->stuck += one->stuck;
    all->crossed += one->crossed;
    all->fell_off += one->fell_off;
}

static void soak_print(const char *what, const char *cfg, const soak_stats *one)
{
    printf("# soak %s (%s): %ld moves, %ld overlaps, %ld escapes, %ld crossed, %ld stuck, %ld fell off an "
           "open edge\n", what, cfg, one->moves, one->overlaps, one->escapes, one->crossed, one->stuck,
           one->fell_off);
}

static void soak_on_every_level_never_penetrates_or_escapes(void **state)
{
    (void)state;
    soak_stats st = {0, 0, 0, 0, 0, 0};
    for (int i = 0; kcc_test_shared_level(i) || i < 5; ++i) {
        const char *path = kcc_test_shared_level(i);
        if (!path)
            continue;
        kcc_level lv;
        char err[256];
        assert_int_equal(kcc_level_load_obj(path, &lv, err, sizeof(err)), KCC_OK);
        soak_stats one = {0, 0, 0, 0, 0, 0};
        soak_level(&lv, &soak_player, 16, 20.0f, &one);
        soak_print(path, soak_player.name, &one);
        soak_add(&st, &one);
        /* the other characters */
        for (size_t v = 0; v < sizeof(soak_variants) / sizeof(soak_variants[0]); ++v) {
            soak_stats var = {0, 0, 0, 0, 0, 0};
            soak_level(&lv, &soak_variants[v], 8, 12.0f, &var);
            soak_print(path, soak_variants[v].name, &var);
            soak_add(&st, &var);
        }
        kcc_level_free(&lv);
    }
    /* the maps `make levels` imported, when present: fewer characters each, there are 50 */
    FILE *list = fopen(KCC_IMPORTED_LEVELS_DIR "/levels.txt", "r");
    char name[128];
    long imported = 0;
    soak_stats all = {0, 0, 0, 0, 0, 0};
    while (list && fscanf(list, "%127s", name) == 1) {
        char path[512];
        snprintf(path, sizeof(path), "%s/%s.obj", KCC_IMPORTED_LEVELS_DIR, name);
        kcc_level lv;
        char err[256];
        if (kcc_level_load_obj(path, &lv, err, sizeof(err)) != KCC_OK)
            continue;
        soak_level(&lv, &soak_player, 4, 10.0f, &all);
        kcc_level_free(&lv);
        imported++;
    }
    if (list)
        fclose(list);
    if (imported) {
        char what[64];
        snprintf(what, sizeof(what), "%ld imported maps", imported);
        soak_print(what, soak_player.name, &all);
    }
    soak_add(&st, &all);
    static const char *const gen[] = {"arena seed=1", "arena seed=2", "terrain seed=3", "showcase"};
    for (size_t i = 0; i < sizeof(gen) / sizeof(gen[0]); ++i) {
        kcc_level lv;
        char err[256];
        if (kcc_level_generate(gen[i], &lv, err, sizeof(err)) != KCC_OK)
            continue;
        soak_stats one = {0, 0, 0, 0, 0, 0};
        soak_level(&lv, &soak_player, 8, 20.0f, &one);
        for (size_t v = 0; v < sizeof(soak_variants) / sizeof(soak_variants[0]); ++v)
            if (soak_variants[v].up == 2)
                soak_level(&lv, &soak_variants[v], 4, 8.0f, &one);
        soak_print(gen[i], "player and +Z up", &one);
        soak_add(&st, &one);
        kcc_level_free(&lv);
    }
    assert_true(st.moves > 0);
    assert_int_equal(st.overlaps, 0);
    assert_int_equal(st.escapes, 0);
    assert_int_equal(st.crossed, 0);
}

/* The same walks 10 km from the origin as at it: a generated arena (stairs, ramps, walls) and a
 * shared level, moved by 10 km on both horizontal axes, walked with the same input from the same
 * spawns. Positions there step by 0.98 mm (the float spacing between 8 and 16 km), so each frame's
 * displacement lands on that grid and the two runs drift apart by up to half a step per axis per
 * frame; the rules of the move hold exactly as at the origin (the soak's "10 km out" variants).
 * What the test holds (docs/collide.md, "Far from the origin"): the far character is on the
 * ground in the same frames but for under 1% of them, and never further from the near one than
 * that rounding allows over the walk (600 frames x 0.98 mm). */
typedef struct far_walk {
    double max_gap;      /* m, largest horizontal distance between the two runs */
    double max_gap_up;   /* m, along up */
    long   frames, ground_differs;
} far_walk;

static void walk_near_and_far(const kcc_level *lv_in, const float offset[3], int chars, int frames,
                              far_walk *out)
{
    kcc_level near_lv = *lv_in, far_lv = *lv_in;
    float *pos = malloc(sizeof(float) * 3 * lv_in->vertex_count);
    assert_non_null(pos);
    for (uint32_t i = 0; i < 3 * lv_in->vertex_count; ++i)
        pos[i] = lv_in->positions[i] + offset[i % 3];
    far_lv.positions = pos;
    kcc_mesh *near_mesh = NULL, *far_mesh = NULL;
    assert_int_equal(kcc_level_build_mesh(&near_lv, &near_mesh), KCC_OK);
    assert_int_equal(kcc_level_build_mesh(&far_lv, &far_mesh), KCC_OK);
    const kcc_character_desc d = kcc_character_default_desc();
    for (int c = 0; c < chars && lv_in->spawn_count > 0; ++c) {
        const float *sp = &lv_in->spawns[3 * (uint32_t)(c % (int)lv_in->spawn_count)];
        const vec3 p = {sp[0], sp[1] + d.half_extents[1] + 0.05f, sp[2]};
        const vec3 q = {p[0] + offset[0], p[1] + offset[1], p[2] + offset[2]};
        kcc_character near_ch, far_ch;
        assert_int_equal(kcc_character_init(&near_ch, &d, p), KCC_OK);
        assert_int_equal(kcc_character_init(&far_ch, &d, q), KCC_OK);
        driver near_dr = {0.0f, 1.0f / 60.0f, 1}, far_dr = near_dr;
        for (int f = 0; f < frames; ++f) {
            const float heading = (float)c + 0.7f * (float)(f / 90);
            const float vx = 5.0f * cosf(heading), vz = 5.0f * sinf(heading);
            const uint32_t near_flags = drive(&near_ch, near_mesh, &near_dr, vx, vz, NULL);
            const uint32_t far_flags = drive(&far_ch, far_mesh, &far_dr, vx, vz, NULL);
            out->frames++;
            out->ground_differs += (near_flags & KCC_MOVE_ON_GROUND) != (far_flags & KCC_MOVE_ON_GROUND);
            const double dx = (double)far_ch.position[0] - offset[0] - near_ch.position[0];
            const double dz = (double)far_ch.position[2] - offset[2] - near_ch.position[2];
            const double dy = (double)far_ch.position[1] - offset[1] - near_ch.position[1];
            out->max_gap = fmax(out->max_gap, sqrt(dx * dx + dz * dz));
            out->max_gap_up = fmax(out->max_gap_up, fabs(dy));
        }
    }
    kcc_mesh_destroy(near_mesh);
    kcc_mesh_destroy(far_mesh);
    free(pos);
}

static void characters_far_from_the_origin_walk_as_at_it(void **state)
{
    (void)state;
    static const float offset[3] = {10000.0f, 0.0f, -10000.0f};
    far_walk all = {0.0, 0.0, 0, 0};
    kcc_level lv;
    char err[256];
    assert_int_equal(kcc_level_generate("arena seed=2", &lv, err, sizeof(err)), KCC_OK);
    walk_near_and_far(&lv, offset, 8, 600, &all);
    kcc_level_free(&lv);
    const char *path = kcc_test_shared_level(1);
    if (path && kcc_level_load_obj(path, &lv, err, sizeof(err)) == KCC_OK) {
        walk_near_and_far(&lv, offset, 8, 600, &all);
        kcc_level_free(&lv);
    }
    print_message("# far walk: %ld frames, ground differs in %ld, largest gap %.4f m across, %.4f m up\n",
                  all.frames, all.ground_differs, all.max_gap, all.max_gap_up);
    assert_true(all.frames > 0);
    assert_true(all.ground_differs * 100 <= all.frames);
    const double spacing = 16384.0 * FLT_EPSILON / 2.0; /* between 8 and 16 km: 2^-10 m */
    assert_true(all.max_gap <= 600.0 * spacing);
}

/* A character's triangle cache and its "last box was clear" note only save work: a twin whose
 * cache and note are wiped before every move (or every few moves) must make the same moves, bit for
 * bit, as the character that keeps them, on a real level when present and a generated one. */
static void wipe_cache(kcc_character *ch)
{
    kcc_character_forget(ch);
}

/* A shared level (is_file) or a generated one, its mesh, and the arena player's desc (the box and
 * step of the benchmark's wanderers). */
static kcc_mesh *open_wander_level(const char *spec, bool is_file, kcc_level *lv, kcc_character_desc *d)
{
    char err[256];
    kcc_status st = is_file ? kcc_level_load_obj(spec, lv, err, sizeof(err))
                            : kcc_level_generate(spec, lv, err, sizeof(err));
    assert_int_equal(st, KCC_OK);
    kcc_mesh *m = NULL;
    assert_int_equal(kcc_level_build_mesh(lv, &m), KCC_OK);
    *d = kcc_character_default_desc();
    d->half_extents[0] = d->half_extents[2] = 0.47f;
    d->half_extents[1] = 0.875f;
    d->step_height = 0.5625f;
    return m;
}

static void results_never_depend_on_the_character_cache(void **state)
{
    (void)state;
    const char *path = kcc_test_shared_level(1);
    const char *specs[] = {path ? path : "arena seed=5", "terrain seed=4"};
    long compared = 0, hits_wall = 0;
    for (int li = 0; li < 2; ++li) {
        kcc_level lv;
        kcc_character_desc d;
        kcc_mesh *m = open_wander_level(specs[li], li == 0 && path, &lv, &d);
        for (int c = 0; c < 8; ++c) {
            const float *sp = &lv.spawns[3 * (uint32_t)(c % (int)lv.spawn_count)];
            kcc_character a = make_char(sp[0], sp[1] + d.half_extents[1] + 0.01f, sp[2], &d);
            kcc_character b = a, e = a;
            float vy = 0.0f, heading = 0.9f * (float)c;
            for (int f = 0; f < 600; ++f) {
                if (f % 45 == 0)
                    heading += 2.1f;
                vy = (f % 97 == 0) ? 8.0f : vy - 25.0f / 60.0f;
                vec3 disp = {cosf(heading) * 0.1f, vy / 60.0f, sinf(heading) * 0.1f};
                kcc_move_result ra, rb, re;
                kcc_character_move(&a, m, disp, &ra);
                wipe_cache(&b);
                kcc_character_move(&b, m, disp, &rb);
                if (f % 5 == 0)
                    wipe_cache(&e);
                kcc_character_move(&e, m, disp, &re);
                assert_memory_equal(&ra, &rb, sizeof(ra));
                assert_memory_equal(&ra, &re, sizeof(ra));
                assert_memory_equal(a.position, b.position, sizeof(vec3));
                assert_memory_equal(a.position, e.position, sizeof(vec3));
                assert_true(a.on_ground == b.on_ground && a.on_ground == e.on_ground);
                if (ra.flags & KCC_MOVE_ON_GROUND)
                    vy = 0.0f;
                hits_wall += (ra.flags & KCC_MOVE_HIT_WALL) != 0;
                compared++;
            }
        }
        kcc_mesh_destroy(m);
        kcc_level_free(&lv);
    }
    assert_true(compared == 2 * 8 * 600);
    assert_true(hits_wall > 0); /* the walk met walls: the comparison covered the slide */
}

/* The AVX2 build of the move (kcc_character_isa) is the same code compiled for wider registers: it
 * must make the same moves as the baseline, bit for bit, the whole character state and the debug
 * record included, on a real level when present and on generated ones. Skipped where the library
 * has no AVX2 build or the CPU no AVX2. */
static void the_avx2_build_moves_exactly_like_the_baseline(void **state)
{
    (void)state;
    const bool was_avx2 = kcc_isa_avx2();
    if (!kcc_isa_force_avx2(true)) {
        skip();
        return;
    }
    assert_string_equal(kcc_character_isa(), "avx2");
    const char *path = kcc_test_shared_level(3);
    const char *specs[] = {path ? path : "arena seed=9", "terrain seed=2", "showcase"};
    long compared = 0, slid = 0, pushed = 0;
    for (int li = 0; li < 3; ++li) {
        kcc_level lv;
        kcc_character_desc d;
        kcc_mesh *m = open_wander_level(specs[li], li == 0 && path, &lv, &d);
        for (int c = 0; c < 12; ++c) {
            const float *sp = &lv.spawns[3 * (uint32_t)(c % (int)lv.spawn_count)];
            /* some start a little inside the floor: the push-out runs too */
            const float lift = (c % 4 == 3) ? -0.2f : 0.01f;
            kcc_character a = make_char(sp[0], sp[1] + d.half_extents[1] + lift, sp[2], &d);
            kcc_character b = a;
            float vy = 0.0f, heading = 0.7f * (float)c;
            for (int f = 0; f < 500; ++f) {
                if (f % 40 == 0)
                    heading += 2.3f;
                vy = (f % 89 == 0) ? 8.0f : vy - 25.0f / 60.0f;
                const float speed = (c % 3 == 0) ? 0.5f : 0.1f; /* some run at 30 m/s */
                vec3 disp = {cosf(heading) * speed, vy / 60.0f, sinf(heading) * speed};
                kcc_move_result ra, rb;
                kcc_move_debug da, db;
                assert_true(kcc_isa_force_avx2(false));
                kcc_character_move_debug(&a, m, disp, &ra, &da);
                assert_true(kcc_isa_force_avx2(true));
                kcc_character_move_debug(&b, m, disp, &rb, &db);
                assert_memory_equal(&ra, &rb, sizeof(ra));
                assert_memory_equal(&da, &db, sizeof(da));
                assert_memory_equal(&a, &b, sizeof(a));
                if (ra.flags & KCC_MOVE_ON_GROUND)
                    vy = 0.0f;
                slid += ra.branch == KCC_BRANCH_P4;
                pushed += (ra.flags & KCC_MOVE_PUSHED_OUT) != 0;
                compared++;
            }
        }
        kcc_mesh_destroy(m);
        kcc_level_free(&lv);
    }
    assert_true(kcc_isa_force_avx2(was_avx2));
    assert_true(compared == 3 * 12 * 500);
    assert_true(slid > 0 && pushed > 0); /* the comparison covered the slide and the push-out */
}

/* A cache filled on one mesh is never read on another, even one built at the same address after
 * the first was destroyed: walking on an open floor fills it, then the floor is rebuilt with a
 * wall 5 cm ahead (same triangle count, so the allocator likely hands back the same block) and
 * the character must stop a skin short of the wall, at x = 0.35 - 0.3 - skin, as its twin without
 * a cache does. */
static void a_cache_is_never_read_on_another_mesh(void **state)
{
    (void)state;
    scene s = {0};
    sc_floor(&s, 0.0f, 5.0f, 4);
    sc_box(&s, 20.0f, 0.0f, -1.0f, 20.2f, 3.0f, 1.0f); /* far away: same count as the wall below */
    kcc_mesh *open = sc_build(&s);
    kcc_character ch = make_char(0.0f, HY + SKIN, 0.0f, NULL);
    driver dr = {0.0f, 1.0f / 60.0f, 1};
    for (int i = 0; i < 10; ++i)
        drive(&ch, open, &dr, 0.0f, 0.0f, NULL);
    assert_true(ch.on_ground);
    assert_true(kcc_character_priv(&ch)->cache.owner == open); /* filled */
    kcc_mesh_destroy(open);
    sc_floor(&s, 0.0f, 5.0f, 4);
    sc_box(&s, 0.35f, 0.0f, -1.0f, 0.55f, 3.0f, 1.0f); /* inside the cached neighbourhood */
    kcc_mesh *walled = sc_build(&s);
    kcc_character fresh = ch; /* the same state without the cache */
    wipe_cache(&fresh);
    driver df = dr;
    for (int i = 0; i < 30; ++i) {
        kcc_move_result r, rf;
        drive(&ch, walled, &dr, 3.0f, 0.0f, &r);
        drive(&fresh, walled, &df, 3.0f, 0.0f, &rf);
        assert_memory_equal(ch.position, fresh.position, sizeof(vec3));
        assert_int_equal(r.flags, rf.flags);
    }
    assert_float_equal(ch.position[0], 0.35f - HX - SKIN, 1e-4f);
    kcc_mesh_destroy(walled);
    /* Likewise the note that the last box was clear: on a floor 5 cm higher the same box is sunk
     * in it, and the next move must push it out (up by 5 cm + skin). */
    sc_floor(&s, 0.05f, 5.0f, 4);
    sc_box(&s, 20.0f, 0.0f, -1.0f, 20.2f, 3.0f, 1.0f);
    kcc_mesh *raised = sc_build(&s);
    float y0 = ch.position[1];
    kcc_move_result r;
    kcc_character_move(&ch, raised, (vec3){0.0f, 0.0f, 0.0f}, &r);
    assert_true(r.flags & KCC_MOVE_PUSHED_OUT);
    assert_float_equal(ch.position[1], y0 + 0.05f, 1e-3f);
    kcc_mesh_destroy(raised);
}

int test_group_controller(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(falling_character_lands_on_the_floor),
        cmocka_unit_test(walking_on_a_floor_of_many_triangles_is_smooth),
        cmocka_unit_test(dense_mesh_beyond_the_contact_cache_still_walks_and_blocks),
        cmocka_unit_test(walkable_slopes_are_walked_up_and_down_without_losing_ground),
        cmocka_unit_test(walking_up_a_slope_keeps_its_speed_whatever_the_step_height),
        cmocka_unit_test(crossing_a_crease_onto_flatter_ground_is_not_a_step),
        cmocka_unit_test(steep_slopes_slide_down_and_cannot_be_climbed),
        cmocka_unit_test(running_along_a_steep_slopes_foot_slides_at_full_speed),
        cmocka_unit_test(sliding_along_a_steep_foot_off_the_axes_never_sticks),
        cmocka_unit_test(a_gully_of_steep_slopes_holds_the_box),
        cmocka_unit_test(a_steep_slope_leaning_on_a_wall_holds_the_box),
        cmocka_unit_test(leaving_a_corner_along_a_steep_slopes_foot),
        cmocka_unit_test(walking_down_along_a_steep_faces_foot_stays_on_the_ground),
        cmocka_unit_test(walking_along_a_steep_faces_foot_on_tilted_ground_stays_on_the_ground),
        cmocka_unit_test(walking_up_a_gully_of_steep_faces_at_an_angle),
        cmocka_unit_test(stairs_are_climbed_and_descended_at_any_frame_rate),
        cmocka_unit_test(following_a_steep_face_down_sees_a_wall_beyond_the_move),
        cmocka_unit_test(a_raked_riser_is_a_step_at_any_frame_rate),
        cmocka_unit_test(sprinting_over_several_treads_a_frame_keeps_pace_and_ground),
        cmocka_unit_test(a_long_walking_move_reports_the_whole_move),
        cmocka_unit_test(ledges_under_step_height_are_climbed_and_higher_ones_block),
        cmocka_unit_test(walking_into_a_wall_at_an_angle_slides_along_it),
        cmocka_unit_test(a_long_slide_along_a_wall_off_the_axes_keeps_its_gap),
        cmocka_unit_test(sliding_along_a_tiled_wall_off_the_axes_never_catches_on_seams),
        cmocka_unit_test(concave_corner_neither_jitters_nor_traps),
        cmocka_unit_test(obtuse_corner_holds_still),
        cmocka_unit_test(obtuse_corner_holds_still_in_the_air),
        cmocka_unit_test(acute_wedge_stops_without_penetration),
        cmocka_unit_test(wall_of_many_small_triangles_slides_smoothly),
        cmocka_unit_test(flat_wall_split_along_a_diagonal_slides_across_the_seam),
        cmocka_unit_test(a_face_behind_a_walls_plane_does_not_deflect_the_slide),
        cmocka_unit_test(narrow_support_holds_the_character),
        cmocka_unit_test(landing_on_a_block_flush_with_the_box_side_stays_put),
        cmocka_unit_test(jumping_into_a_ceiling_stops_and_reports_it),
        cmocka_unit_test(low_tunnel_is_walkable_when_the_box_fits),
        cmocka_unit_test(a_step_up_needs_headroom_for_the_box),
        cmocka_unit_test(a_narrow_beam_under_a_ceiling_is_crossed_only_with_headroom),
        cmocka_unit_test(high_speed_does_not_tunnel_through_thin_walls),
        cmocka_unit_test(falling_from_great_height_lands_on_a_thin_floor),
        cmocka_unit_test(start_inside_geometry_is_pushed_out),
        cmocka_unit_test(the_push_out_never_pushes_into_more_of_the_level),
        cmocka_unit_test(retuning_between_frames_takes_effect),
        cmocka_unit_test(z_up_behaves_like_y_up),
        cmocka_unit_test(move_debug_reports_rays_contacts_and_positions),
        cmocka_unit_test(bad_input_gets_a_status_or_a_flag_never_a_crash),
        cmocka_unit_test(displacements_beyond_the_limit_are_bad_input_and_at_it_are_swept),
        cmocka_unit_test(results_never_depend_on_the_character_cache),
        cmocka_unit_test(the_avx2_build_moves_exactly_like_the_baseline),
        cmocka_unit_test(a_cache_is_never_read_on_another_mesh),
        cmocka_unit_test(soak_on_every_level_never_penetrates_or_escapes),
        cmocka_unit_test(characters_far_from_the_origin_walk_as_at_it),
    };
    return KCC_RUN_GROUP("controller", tests);
}
