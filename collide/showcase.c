/* showcase.c: the "showcase" test course, the demo's default level: one of each feature a
 * character controller must handle (stair risers 0.1-0.6 m, ramps 10-75 degrees, corners, a
 * beam, pillar tops, a low tunnel, thin walls, a finely triangulated floor, a pit), each with a
 * spawn point in front of it. docs/levels.md lists the layout; keep the two in step. Plain float
 * arithmetic on constants only (no libm), so the course is the same bit for bit everywhere. */
#include "level_internal.h"

/* Interior of the course: x and z in [-32, 32] m, floor top at y = 0. */
#define HALF 32.0f
#define SPAWN_LIFT 0.05f   /* m: spawn points sit this far above the floor under them */
#define PIT_FLOOR (-4.0f)  /* m: top of the pit's floor */

/* cot(angle) for the ramps of 10, 30, 45, 50, 60 and 75 degrees (run per metre of rise). */
static const float ramp_cot[6] = {5.67128182f, 1.73205081f, 1.0f, 0.839099631f, 0.577350269f,
                                  0.267949192f};

/* The fine floor: a closed 0.5 m slab over [x0, x0 + n*cell] x [z0, z0 + n*cell] whose top is an
 * n x n grid of quads (its sides are single quads: T-junctions along the top edges). */
static void grid_slab(kcc_gen *g, float x0, float z0, int n, float cell)
{
    uint32_t first = 0;
    for (int j = 0; j <= n; ++j)
        for (int i = 0; i <= n; ++i) {
            uint32_t v = kcc_gen_vertex(g, x0 + (float)i * cell, 0.0f, z0 + (float)j * cell);
            if (i == 0 && j == 0)
                first = v;
        }
    float x1 = x0 + (float)n * cell, z1 = z0 + (float)n * cell;
    const float centre[3] = {(x0 + x1) * 0.5f, -0.25f, (z0 + z1) * 0.5f};
    uint32_t row = (uint32_t)n + 1u;
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
            uint32_t a = first + (uint32_t)j * row + (uint32_t)i, b = a + 1u;
            uint32_t d = a + row, c = d + 1u;
            kcc_gen_tri_out(g, a, d, c, centre);
            kcc_gen_tri_out(g, a, c, b, centre);
        }
    uint32_t t00 = first, t10 = first + (uint32_t)n, t01 = first + (uint32_t)n * row;
    uint32_t t11 = t01 + (uint32_t)n;
    uint32_t b00 = kcc_gen_vertex(g, x0, -0.5f, z0), b10 = kcc_gen_vertex(g, x1, -0.5f, z0);
    uint32_t b01 = kcc_gen_vertex(g, x0, -0.5f, z1), b11 = kcc_gen_vertex(g, x1, -0.5f, z1);
    kcc_gen_tri_out(g, b00, b10, b11, centre);     /* bottom */
    kcc_gen_tri_out(g, b00, b11, b01, centre);
    kcc_gen_tri_out(g, t00, t10, b10, centre);     /* z = z0 */
    kcc_gen_tri_out(g, t00, b10, b00, centre);
    kcc_gen_tri_out(g, t01, t11, b11, centre);     /* z = z1 */
    kcc_gen_tri_out(g, t01, b11, b01, centre);
    kcc_gen_tri_out(g, t00, t01, b01, centre);     /* x = x0 */
    kcc_gen_tri_out(g, t00, b01, b00, centre);
    kcc_gen_tri_out(g, t10, t11, b11, centre);     /* x = x1 */
    kcc_gen_tri_out(g, t10, b11, b10, centre);
}

/* Floor, enclosing walls, the fine floor and the pit. */
static void floor_and_pit(kcc_gen *g)
{
    const float fine[4] = {-28.0f, -28.0f, -8.0f, -8.0f};   /* x0 z0 x1 z1 */
    const float pit[4] = {8.0f, -20.0f, 12.0f, -16.0f};
    const float holes[2][4] = {{fine[0], fine[1], fine[2], fine[3]},
                               {pit[0], pit[1], pit[2], pit[3]}};
    kcc_gen_floor_with_holes(g, -HALF, -HALF, HALF, HALF, holes, 2);
    kcc_gen_walls(g, -HALF, -HALF, HALF, HALF, -0.5f, 8.0f);
    grid_slab(g, fine[0], fine[1], 40, 0.5f);
    kcc_gen_box(g, pit[0], PIT_FLOOR - 0.5f, pit[1], pit[2], PIT_FLOOR, pit[3]);
    kcc_gen_box(g, pit[0] - 1.0f, PIT_FLOOR - 0.5f, pit[1] - 1.0f, pit[0], 0.0f, pit[3] + 1.0f);
    kcc_gen_box(g, pit[2], PIT_FLOOR - 0.5f, pit[1] - 1.0f, pit[2] + 1.0f, 0.0f, pit[3] + 1.0f);
    kcc_gen_box(g, pit[0], PIT_FLOOR - 0.5f, pit[1] - 1.0f, pit[2], 0.0f, pit[1]);
    kcc_gen_box(g, pit[0], PIT_FLOOR - 0.5f, pit[3], pit[2], 0.0f, pit[3] + 1.0f);
}

/* Row 1: the stairs and the ramps. */
static void stairs_and_ramps(kcc_gen *g)
{
    /* Stairs: six flights 2 m wide at x = -30 + 4i, risers 0.1 (i + 1) m, treads 0.35 m,
     * the first riser at z = 6, then a 2 m landing. Separate step brushes, touching. */
    static const int steps[6] = {12, 6, 4, 3, 3, 2};
    for (int i = 0; i < 6; ++i) {
        float x0 = -30.0f + 4.0f * (float)i, x1 = x0 + 2.0f;
        float rise = 0.1f * (float)(i + 1), tread = 0.35f;
        int n = steps[i];
        for (int k = 0; k < n; ++k)
            kcc_gen_box(g, x0, 0.0f, 6.0f + tread * (float)k, x1, rise * (float)(k + 1),
                        6.0f + tread * (float)(k + 1));
        float top = rise * (float)n, zl = 6.0f + tread * (float)n;
        kcc_gen_box(g, x0, 0.0f, zl, x1, top, zl + 2.0f);
    }
    /* Ramps: six wedges 2 m wide at x = 8 + 4j, rising 1.5 m from z = 6 at 10, 30, 45,
     * 50, 60 and 75 degrees, each followed by a 2 m platform sharing its high face. */
    for (int j = 0; j < 6; ++j) {
        float x0 = 8.0f + 4.0f * (float)j, x1 = x0 + 2.0f, h = 1.5f;
        float run = h * ramp_cot[j];
        kcc_gen_ramp(g, x0, x1, 6.0f, 6.0f + run, 0.0f, h);
        kcc_gen_box(g, x0, 0.0f, 6.0f + run, x1, h, 8.0f + run);
    }
}

/* Row 2 (z 18-31), left half: a concave corner and an acute wedge. */
static void corner_and_wedge(kcc_gen *g)
{
    /* Concave 90-degree corner at (-30, 28): two 2.5 m walls. */
    kcc_gen_box(g, -30.0f, 0.0f, 28.0f, -24.0f, 2.5f, 28.5f);
    kcc_gen_box(g, -30.5f, 0.0f, 22.0f, -30.0f, 2.5f, 28.5f);
    /* Acute wedge: a 30-degree notch between two blocks, apex at (-18, 30), opening towards -z,
     * sides 6 m long (mouth 3.1 m wide at z = 24.2). */
    {
        const float s15 = 0.258819045f, c15 = 0.965925826f, L = 6.0f;
        const float ax = -18.0f, az = 30.0f;
        const float left[5][3] = {{ax, 0, az},
                                  {ax - L * s15, 0, az - L * c15},
                                  {ax - L * s15 - 1.0f, 0, az - L * c15},
                                  {ax - L * s15 - 1.0f, 0, az + 0.5f},
                                  {ax, 0, az + 0.5f}};
        const float right[5][3] = {{ax, 0, az},
                                   {ax + L * s15, 0, az - L * c15},
                                   {ax + L * s15 + 1.0f, 0, az - L * c15},
                                   {ax + L * s15 + 1.0f, 0, az + 0.5f},
                                   {ax, 0, az + 0.5f}};
        const float up[3] = {0.0f, 2.5f, 0.0f};
        kcc_gen_prism(g, left, 5, up);
        kcc_gen_prism(g, right, 5, up);
    }
}

/* Row 2, right half: the low tunnel, thin walls, the beam and the pillars. */
static void tunnel_walls_beam_pillars(kcc_gen *g)
{
    /* Low tunnel: 2 m wide (x -12..-10), 1.95 m clear, z 22..28. */
    kcc_gen_box(g, -12.5f, 0.0f, 22.0f, -12.0f, 1.95f, 28.0f);
    kcc_gen_box(g, -10.0f, 0.0f, 22.0f, -9.5f, 1.95f, 28.0f);
    kcc_gen_box(g, -12.5f, 1.95f, 22.0f, -9.5f, 2.45f, 28.0f);
    /* Thin walls, 5 cm: one across z (x -6..-2 at z 26), one across x (x 2 at z 21..27). */
    kcc_gen_box(g, -6.0f, 0.0f, 26.0f, -2.0f, 2.5f, 26.05f);
    kcc_gen_box(g, 2.0f, 0.0f, 21.0f, 2.05f, 2.5f, 27.0f);
    /* Beam: 0.1 m wide, top at 1 m, z 22..28 between two 1 m platforms, steps up to the first. */
    kcc_gen_box(g, 5.0f, 0.0f, 18.5f, 7.0f, 0.25f, 19.0f);
    kcc_gen_box(g, 5.0f, 0.0f, 19.0f, 7.0f, 0.5f, 19.5f);
    kcc_gen_box(g, 5.0f, 0.0f, 19.5f, 7.0f, 0.75f, 20.0f);
    kcc_gen_box(g, 5.0f, 0.0f, 20.0f, 7.0f, 1.0f, 22.0f);
    kcc_gen_box(g, 5.95f, 0.9f, 22.0f, 6.05f, 1.0f, 28.0f);
    kcc_gen_box(g, 5.0f, 0.0f, 28.0f, 7.0f, 1.0f, 30.0f);
    /* Pillars: five 0.2 m square, 1 m tall, at x = 12, z = 22 .. 26. */
    for (int k = 0; k < 5; ++k) {
        float zc = 22.0f + (float)k;
        kcc_gen_box(g, 11.9f, 0.0f, zc - 0.1f, 12.1f, 1.0f, zc + 0.1f);
    }
}

/* Spawn points, in the order docs/levels.md lists them. */
static void spawns_in_doc_order(kcc_gen *g)
{
    const float lift = SPAWN_LIFT;
    for (int i = 0; i < 6; ++i)                               /* 0-5: stairs */
        kcc_gen_spawn(g, -29.0f + 4.0f * (float)i, lift, 4.0f);
    for (int j = 0; j < 6; ++j)                               /* 6-11: ramps */
        kcc_gen_spawn(g, 9.0f + 4.0f * (float)j, lift, 4.0f);
    kcc_gen_spawn(g, -27.0f, lift, 25.0f);                    /* 12: 90-degree corner */
    kcc_gen_spawn(g, -18.0f, lift, 22.0f);                    /* 13: acute wedge */
    kcc_gen_spawn(g, -11.0f, lift, 20.0f);                    /* 14: low tunnel */
    kcc_gen_spawn(g, -4.0f, lift, 23.0f);                     /* 15: thin wall across z */
    kcc_gen_spawn(g, 0.0f, lift, 24.0f);                      /* 16: thin wall across x */
    kcc_gen_spawn(g, 6.0f, lift, 17.0f);                      /* 17: steps to the beam */
    kcc_gen_spawn(g, 6.0f, 1.0f + lift, 21.0f);               /* 18: beam platform */
    kcc_gen_spawn(g, 6.0f, 1.0f + lift, 25.0f);               /* 19: on the beam */
    kcc_gen_spawn(g, 10.0f, lift, 20.0f);                     /* 20: before the pillars */
    kcc_gen_spawn(g, 12.0f, 1.0f + lift, 22.0f);              /* 21: on the first pillar */
    kcc_gen_spawn(g, -18.0f, lift, -18.0f);                   /* 22: fine floor centre */
    kcc_gen_spawn(g, 10.0f, lift, -24.0f);                    /* 23: before the pit */
    kcc_gen_spawn(g, 10.0f, PIT_FLOOR + lift, -18.0f);        /* 24: pit bottom */
    kcc_gen_spawn(g, 0.0f, lift, 0.0f);                       /* 25: centre */
}

kcc_status kcc_level_showcase(float scale, kcc_level *out)
{
    kcc_gen g;
    kcc_gen_init(&g, scale);
    floor_and_pit(&g);
    stairs_and_ramps(&g);
    corner_and_wedge(&g);
    tunnel_walls_beam_pillars(&g);
    spawns_in_doc_order(&g);
    return kcc_gen_finish(&g, out);
}
