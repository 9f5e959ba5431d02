/* test_axes.c: the six up directions (desc.up_axis 1, 2, 3, -1, -2, -3): one level turned with each,
 * walked by one script, moves as the +Y walk turned the same way (the turns written out here by
 * hand, not taken from the library); default descs standing under each axis's gravity; bad axes;
 * retunes across axes, a neighbourhood too dense for the move's list, and traces. */
#include "test.h"
#include "controller_internal.h"
#include "kcc_trace.h"
#include <cglm/cglm.h>

/* ---------------------------------------------------------------- the turns, by hand */

/* Each takes a vector of the +Y world to the world whose up is the named direction; each is a
 * proper rotation ((0, 1, 0) goes to the named direction; determinant +1). */
typedef void axes_turn(const float in[3], float out[3]);

static void turn_pos_y(const float in[3], float out[3]) { out[0] = in[0], out[1] = in[1], out[2] = in[2]; }
static void turn_pos_x(const float in[3], float out[3]) { out[0] = in[1], out[1] = -in[0], out[2] = in[2]; }
static void turn_neg_y(const float in[3], float out[3]) { out[0] = -in[0], out[1] = -in[1], out[2] = in[2]; }
static void turn_neg_x(const float in[3], float out[3]) { out[0] = -in[1], out[1] = in[0], out[2] = in[2]; }
static void turn_pos_z(const float in[3], float out[3]) { out[0] = in[0], out[1] = -in[2], out[2] = in[1]; }
static void turn_neg_z(const float in[3], float out[3]) { out[0] = in[0], out[1] = in[2], out[2] = -in[1]; }

typedef struct axes_case {
    int        up_axis;
    axes_turn *turn;
    float      up[3]; /* the up direction, written out */
} axes_case;

static const axes_case axes_cases[6] = {
    {1, turn_pos_y, {0, 1, 0}},  {2, turn_pos_z, {0, 0, 1}},  {3, turn_pos_x, {1, 0, 0}},
    {-1, turn_neg_y, {0, -1, 0}}, {-2, turn_neg_z, {0, 0, -1}}, {-3, turn_neg_x, {-1, 0, 0}},
};

/* Half extents (no sign) turned: the absolute values of the turned vector. */
static void turn_extents(axes_turn *turn, const float in[3], float out[3])
{
    turn(in, out);
    for (int k = 0; k < 3; ++k)
        out[k] = fabsf(out[k]);
}

/* ---------------------------------------------------------------- the level, +Y up */

typedef struct axes_soup {
    float    pos[9 * 256];
    uint32_t tris;
} axes_soup;

static void axes_tri(axes_soup *s, const float a[3], const float b[3], const float c[3])
{
    assert_true(s->tris < 256u);
    memcpy(&s->pos[9u * s->tris], a, 12);
    memcpy(&s->pos[9u * s->tris + 3u], b, 12);
    memcpy(&s->pos[9u * s->tris + 6u], c, 12);
    s->tris++;
}

/* The closed box lo..hi's twelve triangles, outward faces. */
static void axes_block(axes_soup *s, float x0, float y0, float z0, float x1, float y1, float z1)
{
    static const uint8_t faces[12][3] = {{0, 2, 1}, {0, 3, 2}, {4, 5, 6}, {4, 6, 7}, {0, 1, 5}, {0, 5, 4},
                                         {3, 7, 6}, {3, 6, 2}, {0, 4, 7}, {0, 7, 3}, {1, 2, 6}, {1, 6, 5}};
    float corner[8][3];
    for (int k = 0; k < 8; ++k) {
        corner[k][0] = (k == 1 || k == 2 || k == 5 || k == 6) ? x1 : x0;
        corner[k][1] = (k == 2 || k == 3 || k == 6 || k == 7) ? y1 : y0;
        corner[k][2] = k >= 4 ? z1 : z0;
    }
    for (int f = 0; f < 12; ++f)
        axes_tri(s, corner[faces[f][0]], corner[faces[f][1]], corner[faces[f][2]]);
}

/* A floor (top y = 0), four stairs 0.2 m high up to a platform at 0.8 m, a wall beyond the
 * platform's far edge, and a 27-degree ramp along the wall. */
static void axes_level(axes_soup *s)
{
    s->tris = 0;
    axes_block(s, -12.0f, -1.0f, -12.0f, 20.0f, 0.0f, 12.0f);
    for (int i = 0; i < 4; ++i)
        axes_block(s, 2.0f + 0.4f * (float)i, 0.0f, -2.0f, 10.0f, 0.2f * (float)(i + 1), 2.0f);
    axes_block(s, 12.0f, 0.0f, -6.0f, 12.5f, 3.0f, 6.0f);
    const float r0[3] = {6.0f, 0.0f, 3.0f}, r1[3] = {12.0f, 0.0f, 3.0f}, r2[3] = {12.0f, 2.0f, 7.0f},
                r3[3] = {6.0f, 2.0f, 7.0f};
    axes_tri(s, r0, r3, r2);
    axes_tri(s, r0, r2, r1);
}

/* The soup with every vertex turned, as a mesh. */
static kcc_mesh *axes_mesh(const axes_soup *s, axes_turn *turn)
{
    static float pos[9 * 256];
    for (uint32_t i = 0; i < 3u * s->tris; ++i)
        turn(&s->pos[3u * i], &pos[3u * i]);
    kcc_mesh_desc md;
    memset(&md, 0, sizeof md);
    md.positions = pos;
    md.vertex_count = 3u * s->tris;
    md.triangle_count = s->tris;
    kcc_mesh *mesh = NULL;
    assert_int_equal(kcc_mesh_build(&md, &mesh), KCC_OK);
    return mesh;
}

/* ---------------------------------------------------------------- the walk */

#define AXES_FRAMES 420

/* One frame of the walk (+Y terms): what the script asks, and what the move answered. */
typedef struct axes_frame {
    kcc_move_result result;
    kcc_move_debug  debug;
    vec3            position;
    vec3            ground_normal;
    bool            on_ground;
    float           ground_height;
} axes_frame;

/* The scripted walk's horizontal velocity (m/s, +Y terms) at frame i, and whether it jumps. */
static void axes_script(int i, float out_v[3], bool *jump)
{
    out_v[0] = out_v[1] = out_v[2] = 0.0f;
    *jump = i == 160;
    if (i >= 30 && i < 300)
        out_v[0] = 3.0f; /* up the stairs, a jump on the platform, off its end, into the wall */
    else if (i >= 300)
        out_v[0] = 1.0f, out_v[2] = 3.0f; /* along the wall (pressed into it), then up the ramp beside it */
}

/* Walks a character of the default desc, turned by c, through the level turned by c, by the
 * script's displacements turned by c; out gets every frame as the move reported it (world terms
 * of c's world: the caller turns the +Y walk's to compare). */
static void axes_walk(const axes_case *c, const axes_soup *level, axes_frame *out)
{
    kcc_mesh *mesh = axes_mesh(level, c->turn);
    kcc_character_desc desc = kcc_character_default_desc();
    desc.up_axis = c->up_axis;
    const float he[3] = {0.3f, 0.9f, 0.3f}, start[3] = {-1.0f, 1.5f, 0.0f};
    turn_extents(c->turn, he, desc.half_extents);
    vec3 at;
    c->turn(start, at);
    kcc_character ch;
    assert_int_equal(kcc_character_init(&ch, &desc, at), KCC_OK);
    float fall = 0.0f; /* m/s along up */
    const float dt = 1.0f / 60.0f;
    for (int i = 0; i < AXES_FRAMES; ++i) {
        float v[3];
        bool jump;
        axes_script(i, v, &jump);
        if (jump && ch.on_ground)
            fall = 5.0f;
        fall -= 9.81f * dt;
        const float d[3] = {v[0] * dt, fall * dt, v[2] * dt};
        vec3 disp;
        c->turn(d, disp);
        axes_frame *f = &out[i];
        kcc_character_move_debug(&ch, mesh, disp, &f->result, &f->debug);
        if (ch.on_ground && fall < 0.0f)
            fall = 0.0f;
        glm_vec3_copy(ch.position, f->position);
        glm_vec3_copy(ch.ground_normal, f->ground_normal);
        f->on_ground = ch.on_ground;
        f->ground_height = ch.ground_height;
    }
    kcc_mesh_destroy(mesh);
}

/* The +Y frame's vector a turned by turn equals b exactly: bit for bit, but for the sign of a zero
 * (a turn makes -0 of a +0 that a world of its own holds as +0: init's ground normal (1, 0, 0) with
 * +X up is the turned (0, 1, 0), (1, -0, 0)). */
static void axes_same_turned(axes_turn *turn, const float a[3], const float b[3], int frame, const char *what)
{
    float want[3];
    turn(a, want);
    if (!(want[0] == b[0] && want[1] == b[1] && want[2] == b[2]))
        fail_msg("frame %d %s: want %.9g %.9g %.9g got %.9g %.9g %.9g", frame, what, (double)want[0],
                 (double)want[1], (double)want[2], (double)b[0], (double)b[1], (double)b[2]);
}

/* ground_rays with the edges renamed: bit i of rays is bit i ^ flip of the result. */
static uint32_t axes_rays_renamed(uint32_t rays, uint32_t flip)
{
    uint32_t out = 0;
    for (uint32_t i = 0; i < 4; ++i)
        if (rays & (1u << i))
            out |= 1u << (i ^ flip);
    return out;
}

/* Frame i of walk got is frame i of walk ref turned by turn; the probe's edge ray i of ref is edge
 * ray i ^ flip of got (the edges are named by the sides of the frame's sideways axes: x and z with
 * +Y up, x and y with +Z up, where high z of the +Y world is low y). */
static void axes_same_frame(axes_turn *turn, uint32_t flip, const axes_frame *ref, const axes_frame *got, int i)
{
    const kcc_move_result *a = &ref->result, *b = &got->result;
    assert_int_equal(a->flags, b->flags);
    assert_int_equal(a->branch, b->branch);
    assert_int_equal(a->ground_triangle, b->ground_triangle);
    assert_int_equal(axes_rays_renamed(a->ground_rays, flip), b->ground_rays);
    assert_int_equal(axes_rays_renamed(ref->debug.ray_hit, flip), got->debug.ray_hit);
    assert_true(a->ground_height == b->ground_height && a->step_up == b->step_up);
    assert_int_equal(ref->on_ground, got->on_ground);
    assert_true(ref->ground_height == got->ground_height);
    axes_same_turned(turn, ref->position, got->position, i, "position");
    axes_same_turned(turn, ref->ground_normal, got->ground_normal, i, "character ground_normal");
    axes_same_turned(turn, a->moved, b->moved, i, "moved");
    axes_same_turned(turn, a->ground_normal, b->ground_normal, i, "ground_normal");
    axes_same_turned(turn, a->wall_normal, b->wall_normal, i, "wall_normal");
    axes_same_turned(turn, ref->debug.p1, got->debug.p1, i, "debug p1");
    axes_same_turned(turn, ref->debug.averaged_normal, got->debug.averaged_normal, i, "debug normal");
    for (uint32_t k = 0; k < 4; ++k) {
        axes_same_turned(turn, ref->debug.ray_from[k], got->debug.ray_from[k ^ flip], i, "debug ray_from");
        axes_same_turned(turn, ref->debug.ray_to[k], got->debug.ray_to[k ^ flip], i, "debug ray_to");
    }
}

/* The walk with each up direction is the +Y walk turned, exactly, over 420 frames of stairs, a
 * platform, a jump, a fall, a wall slid along and a ramp (the +Y walk does all of that: its flags
 * are checked, so every path is compared). +X, -Y and -X run in the +Y frame turned about z, where
 * every sum runs in the +Y run's order; -Z runs in the +Z frame; +Z is its own frame, whose sums
 * take y and z in another order than +Y's and agree on this level. */
static void every_axis_walks_as_the_turned_y_walk(void **state)
{
    (void)state;
    static axes_soup level;
    static axes_frame walks[6][AXES_FRAMES];
    axes_level(&level);
    for (int a = 0; a < 6; ++a)
        axes_walk(&axes_cases[a], &level, walks[a]);
    uint32_t seen = 0;
    bool on_ramp = false;
    for (int i = 0; i < AXES_FRAMES; ++i) {
        seen |= walks[0][i].result.flags;
        on_ramp |= walks[0][i].on_ground && walks[0][i].ground_normal[1] < 0.95f;
    }
    const uint32_t wanted = KCC_MOVE_STEPPED_UP | KCC_MOVE_HIT_WALL | KCC_MOVE_LANDED | KCC_MOVE_SLID;
    assert_int_equal(seen & wanted, wanted);
    assert_true(on_ramp);
    for (int a = 1; a < 6; ++a) {
        const uint32_t flip = axes_cases[a].up_axis == 2 || axes_cases[a].up_axis == -2 ? 2u : 0u;
        for (int i = 0; i < AXES_FRAMES; ++i)
            axes_same_frame(axes_cases[a].turn, flip, &walks[0][i], &walks[a][i], i);
    }
}

/* ---------------------------------------------------------------- standing, and bad axes */

/* kcc_character_default_desc_up(axis) stands on a floor slab turned with the axis, falling by the
 * velocity move under gravity against up: it comes to rest 0.9 m and a skin above the floor along
 * up, on the ground with the up direction as its ground normal, ground_height 0, the velocity's
 * fall removed; its box is 1.8 m along the up axis and 0.6 m across. */
static void default_desc_stands_under_each_axis(void **state)
{
    (void)state;
    axes_soup slab;
    slab.tris = 0;
    axes_block(&slab, -20.0f, -1.0f, -20.0f, 20.0f, 0.0f, 20.0f);
    for (int a = 0; a < 6; ++a) {
        const axes_case *c = &axes_cases[a];
        kcc_mesh *mesh = axes_mesh(&slab, c->turn);
        const kcc_character_desc d = kcc_character_default_desc_up(c->up_axis);
        assert_int_equal(kcc_character_desc_validate(&d), KCC_OK);
        vec3 start, gravity, velocity = {0.0f, 0.0f, 0.0f};
        for (int k = 0; k < 3; ++k) {
            assert_float_equal(d.half_extents[k], c->up[k] != 0.0f ? 0.9f : 0.3f, 0.0);
            start[k] = 2.0f * c->up[k];
            gravity[k] = -9.81f * c->up[k];
        }
        kcc_character ch;
        assert_int_equal(kcc_character_init(&ch, &d, start), KCC_OK);
        for (int i = 0; i < 120; ++i)
            kcc_character_move_velocity(&ch, mesh, velocity, gravity, 1.0f / 60.0f, NULL);
        assert_true(ch.on_ground);
        for (int k = 0; k < 3; ++k) {
            assert_float_equal(ch.position[k], (0.9f + 0.002f) * c->up[k], 1e-5);
            assert_float_equal(ch.ground_normal[k], c->up[k], 1e-6);
            assert_float_equal(velocity[k], 0.0f, 0.0);
        }
        assert_float_equal(ch.ground_height, 0.0f, 1e-6);
        kcc_mesh_destroy(mesh);
    }
}

/* up_axis 0, 4 and -4 (and a far one) are refused by validation, init and a retune; the default
 * desc of such an axis is refused at init. */
static void bad_up_axes_are_refused(void **state)
{
    (void)state;
    static const int bad[4] = {0, 4, -4, 1000};
    kcc_character ch;
    assert_int_equal(kcc_character_init(&ch, NULL, (vec3){0.0f, 1.0f, 0.0f}), KCC_OK);
    for (int b = 0; b < 4; ++b) {
        kcc_character_desc d = kcc_character_default_desc();
        d.up_axis = bad[b];
        assert_int_equal(kcc_character_desc_validate(&d), KCC_ERR_BAD_DESC);
        kcc_character other;
        assert_int_equal(kcc_character_init(&other, &d, (vec3){0.0f, 1.0f, 0.0f}), KCC_ERR_BAD_DESC);
        assert_int_equal(kcc_character_set_desc(&ch, &d), KCC_ERR_BAD_DESC);
        const kcc_character_desc up = kcc_character_default_desc_up(bad[b]);
        assert_int_equal(up.up_axis, bad[b]);
        assert_int_equal(kcc_character_init(&other, &up, (vec3){0.0f, 1.0f, 0.0f}), KCC_ERR_BAD_DESC);
    }
    assert_int_equal(ch.desc.up_axis, 1);
}

/* A retune to another up axis never reuses the triangles cached in the old axis's frame. With +X
 * up a character stands at the origin on a floor whose top is x = -0.902; retuned to -Y up, where
 * the frame position of the origin is the same (0, 0, 0) but that floor is a wall far to the side,
 * it falls along +y as a fresh -Y character there does, exactly (the +X frame's floor, reused,
 * would hold it up). And the mapped sources' keys differ from the mesh's and from each other's. */
static void a_retune_to_another_axis_forgets_the_frame(void **state)
{
    (void)state;
    axes_soup slab;
    slab.tris = 0;
    axes_block(&slab, -20.0f, -2.0f, -20.0f, 20.0f, -0.902f, 20.0f); /* +Y terms: top at y = -0.902 */
    kcc_mesh *mesh = axes_mesh(&slab, turn_pos_x);
    kcc_character ch, fresh;
    const kcc_character_desc x_up = kcc_character_default_desc_up(3), y_down = kcc_character_default_desc_up(-1);
    assert_int_equal(kcc_character_init(&ch, &x_up, (vec3){0.05f, 0.0f, 0.0f}), KCC_OK);
    for (int i = 0; i < 10; ++i)
        kcc_character_move(&ch, mesh, (vec3){-0.01f, 0.0f, 0.0f}, NULL);
    assert_true(ch.on_ground);
    assert_float_equal(ch.position[0], 0.0f, 1e-5);
    assert_int_equal(kcc_character_set_desc(&ch, &y_down), KCC_OK);
    assert_false(ch.on_ground);
    assert_float_equal(ch.ground_normal[1], -1.0f, 0.0);
    assert_int_equal(kcc_character_init(&fresh, &y_down, ch.position), KCC_OK);
    for (int i = 0; i < 10; ++i) {
        const vec3 d = {0.0f, 0.05f, 0.0f}; /* down is +y */
        kcc_move_result r1, r2;
        kcc_character_move(&ch, mesh, d, &r1);
        kcc_character_move(&fresh, mesh, d, &r2);
        assert_memory_equal(ch.position, fresh.position, sizeof(vec3));
        assert_memory_equal(&r1, &r2, sizeof r1);
    }
    assert_false(ch.on_ground);
    assert_float_equal(ch.position[1], 0.5f, 1e-5);
    kcc_local_source base;
    kcc_local_source_mesh(&base, mesh);
    kcc_local_source_mapped m3, m1;
    kcc_axis_map map;
    kcc_up_axis_frame(3, &map);
    kcc_local_source_map(&m3, &base, &map, 7u);
    kcc_up_axis_frame(-1, &map);
    kcc_local_source_map(&m1, &base, &map, 9u);
    assert_true(m3.base.owner == base.owner);
    assert_true(m3.base.key != base.key && m1.base.key != base.key && m3.base.key != m1.base.key);
    kcc_mesh_destroy(mesh);
}

/* A floor too dense for a move's triangle list (40 x 40 cells of 5 cm: CONTACT_CAP, every probe
 * asks the mesh through the mapped source's overflow queries): under each axis the default desc
 * dropped on it, turned, lands a skin above it, as with +Y up, its four edge rays on walkable
 * ground facing up. */
static void a_dense_floor_holds_every_axis(void **state)
{
    (void)state;
    enum { cells = 40 };
    static float grid[(cells + 1) * (cells + 1) * 3], turned[(cells + 1) * (cells + 1) * 3];
    static uint32_t idx[6 * cells * cells];
    for (uint32_t j = 0; j <= cells; ++j)
        for (uint32_t i = 0; i <= cells; ++i) {
            float *v = &grid[3u * (j * (cells + 1u) + i)];
            v[0] = -1.0f + 0.05f * (float)i, v[1] = 0.0f, v[2] = -1.0f + 0.05f * (float)j;
        }
    const uint32_t tris = grid_indices(cells, idx);
    for (int a = 0; a < 6; ++a) {
        const axes_case *c = &axes_cases[a];
        for (uint32_t k = 0; k < (cells + 1u) * (cells + 1u); ++k)
            c->turn(&grid[3u * k], &turned[3u * k]);
        kcc_mesh_desc md;
        memset(&md, 0, sizeof md);
        md.positions = turned;
        md.vertex_count = (cells + 1u) * (cells + 1u);
        md.indices = idx;
        md.triangle_count = tris;
        kcc_mesh *mesh = NULL;
        assert_int_equal(kcc_mesh_build(&md, &mesh), KCC_OK);
        const kcc_character_desc d = kcc_character_default_desc_up(c->up_axis);
        const float start_y[3] = {0.1f, 1.2f, 0.05f}, fall_y[3] = {0.0f, -0.05f, 0.0f};
        vec3 start, fall;
        c->turn(start_y, start);
        c->turn(fall_y, fall);
        kcc_character ch;
        assert_int_equal(kcc_character_init(&ch, &d, start), KCC_OK);
        uint32_t seen = 0;
        kcc_move_result r;
        for (int i = 0; i < 20; ++i) {
            kcc_character_move(&ch, mesh, fall, &r);
            seen |= r.flags;
        }
        assert_true(ch.on_ground);
        assert_true(seen & KCC_MOVE_CONTACT_CAP);
        assert_int_equal(r.ground_rays, 0xfu); /* all four edge rays found the flat floor walkable */
        for (int k = 0; k < 3; ++k)
            assert_float_equal(r.ground_normal[k], c->up[k], 1e-6);
        const float rest_y[3] = {0.1f, 0.902f, 0.05f};
        vec3 rest;
        c->turn(rest_y, rest);
        for (int k = 0; k < 3; ++k)
            assert_float_equal(ch.position[k], rest[k], 1e-5);
        kcc_mesh_destroy(mesh);
    }
}

/* A trace records the new axes as it records any desc field: a walk with -X up, retuned to -Z up
 * halfway (an axis change: the box keeps its place and leaves the ground), written, parsed back
 * (desc.up_axis -3, the retune's -2) and replayed on the same level bit for bit. */
static void a_trace_records_and_replays_every_axis(void **state)
{
    (void)state;
    static axes_soup level;
    static char text[1 << 16];
    axes_level(&level);
    kcc_mesh *mesh = axes_mesh(&level, turn_neg_x);
    const kcc_character_desc x_down = kcc_character_default_desc_up(-3), z_down = kcc_character_default_desc_up(-2);
    const float start_y[3] = {-1.0f, 1.5f, 0.0f};
    vec3 start;
    turn_neg_x(start_y, start);
    kcc_character ch;
    assert_int_equal(kcc_character_init(&ch, &x_down, start), KCC_OK);
    kcc_trace_writer w;
    assert_int_equal(kcc_trace_begin_buffer(&w, text, sizeof text, "gen arena seed=1", &x_down, start), KCC_OK);
    for (int i = 0; i < 160; ++i) {
        if (i == 120) {
            const kcc_status st = kcc_character_set_desc(&ch, &z_down);
            assert_int_equal(st, KCC_OK);
            assert_int_equal(kcc_trace_set_desc(&w, &z_down, st), KCC_OK);
        }
        const float d_y[3] = {0.05f, -0.1f, 0.0f};
        vec3 disp;
        turn_neg_x(d_y, disp);
        kcc_move_result r;
        kcc_character_move(&ch, mesh, disp, &r);
        assert_int_equal(kcc_trace_record(&w, disp, &ch, &r), KCC_OK);
    }
    assert_int_equal(kcc_trace_end(&w), KCC_OK);
    kcc_trace *t = NULL;
    char err[256];
    assert_int_equal(kcc_trace_parse(text, strlen(text), "axes.trace", &t, err, sizeof err), KCC_OK);
    assert_int_equal(t->desc.up_axis, -3);
    bool retuned = false;
    for (uint32_t i = 0; i < t->step_count; ++i)
        retuned |= t->steps[i].kind == KCC_TRACE_SET && t->steps[i].desc.up_axis == -2;
    assert_true(retuned);
    kcc_trace_report r;
    assert_int_equal(kcc_trace_replay(t, mesh, 0.0f, NULL, &r), KCC_OK);
    assert_int_equal(r.diverged, 0);
    assert_int_equal(r.frames, 160);
    kcc_trace_free(t);
    kcc_mesh_destroy(mesh);
}

int test_group_axes(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_axis_walks_as_the_turned_y_walk),
        cmocka_unit_test(default_desc_stands_under_each_axis),
        cmocka_unit_test(bad_up_axes_are_refused),
        cmocka_unit_test(a_retune_to_another_axis_forgets_the_frame),
        cmocka_unit_test(a_dense_floor_holds_every_axis),
        cmocka_unit_test(a_trace_records_and_replays_every_axis),
    };
    return KCC_RUN_GROUP("axes", tests);
}
