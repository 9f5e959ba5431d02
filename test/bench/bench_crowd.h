/* bench_crowd.h: what the world benchmarks (bench_world_step.c, bench_world_movers.c) share: the
 * player's desc, the wanderers' displacements, their start points on a level's walkable floor, and
 * a clock of the step's phases (kcc_world_step_marked's marks). C only; include after bench.h. */
#ifndef KCC_BENCH_CROWD_H
#define KCC_BENCH_CROWD_H

#include "world_internal.h"

static kcc_character_desc player(void)
{
    kcc_character_desc d = kcc_character_default_desc();
    d.half_extents[0] = d.half_extents[2] = 0.47f;
    d.half_extents[1] = 0.875f;
    d.step_height = 0.5625f;
    return d;
}

/* 6 m/s along a heading that turns every 0.75 s, a jump now and then, gravity in the air. */
static void wander(int c, int f, bool on_ground, float *vy, vec3 out)
{
    const float heading = 0.9f * (float)c + 2.1f * (float)(f / 45);
    *vy = on_ground ? ((f + c) % 97 == 0 ? 8.0f : 0.0f) : *vy - 25.0f / 60.0f;
    out[0] = 6.0f / 60.0f * cosf(heading);
    out[1] = *vy / 60.0f;
    out[2] = 6.0f / 60.0f * sinf(heading);
}

/* Start points: random spots of walkable floor (a ray down from a random point of the level's
 * bounds, or from above them), where the box fits (kcc_character_fits), at least 1.2 m across or 2 m up from every
 * other start (a grid of 1.2 m cells holds up to 4 starts each). Returns how many it found (up to
 * n; seed picks the random points): a small level holds fewer. */
enum { CELL_STARTS = 4 };
static bool apart_from_others(vec3 *out, const int *cells, int nx, int nz, int cx, int cz,
                              const vec3 at)
{
    for (int z = cz - 1; z <= cz + 1; ++z)
        for (int x = cx - 1; x <= cx + 1; ++x) {
            if (x < 0 || z < 0 || x >= nx || z >= nz)
                continue;
            const int *cell = &cells[(z * nx + x) * (CELL_STARTS + 1)];
            for (int i = 1; i <= cell[0]; ++i) {
                const float *o = out[cell[i]];
                if (fabsf(o[0] - at[0]) < 1.2f && fabsf(o[2] - at[2]) < 1.2f && fabsf(o[1] - at[1]) < 2.0f)
                    return false;
            }
        }
    return true;
}

static int crowd_starts(const kcc_mesh *m, int n, uint32_t seed, vec3 *out)
{
    const kcc_character_desc d = player();
    vec3 b[2];
    kcc_mesh_bounds(m, b);
    const int nx = (int)((b[1][0] - b[0][0]) / 1.2f) + 1, nz = (int)((b[1][2] - b[0][2]) / 1.2f) + 1;
    int *cells = calloc((size_t)nx * (size_t)nz * (CELL_STARTS + 1), sizeof *cells);
    bench_rng rng = bench_rng_seed(seed);
    int found = 0;
    for (int attempt = 0; found < n && attempt < 20 * n; ++attempt) {
        /* every other ray from above the level, the rest from a random height (storeys under a roof) */
        const float top = b[1][1] + 1.0f;
        vec3 at = {bench_rng_range(&rng, b[0][0], b[1][0]),
                   attempt % 2 ? top : bench_rng_range(&rng, b[0][1], top), bench_rng_range(&rng, b[0][2], b[1][2])};
        const vec3 down = {0.0f, -1.0f, 0.0f};
        kcc_ray_hit hit;
        if (!kcc_mesh_raycast(m, at, down, at[1] - b[0][1] + 1.0f, &hit) || hit.normal[1] < 0.8f)
            continue;
        at[1] = hit.point[1] + d.half_extents[1] + 0.02f;
        const int cx = (int)((at[0] - b[0][0]) / 1.2f), cz = (int)((at[2] - b[0][2]) / 1.2f);
        int *cell = &cells[(cz * nx + cx) * (CELL_STARTS + 1)];
        if (cell[0] == CELL_STARTS || !apart_from_others(out, cells, nx, nz, cx, cz, at))
            continue;
        if (kcc_character_fits(&d, m, at) != KCC_OK) { /* on a bumpy floor: 0.3 m higher, it drops */
            at[1] += 0.3f;
            if (!apart_from_others(out, cells, nx, nz, cx, cz, at) || kcc_character_fits(&d, m, at) != KCC_OK)
                continue;
        }
        cell[++cell[0]] = found;
        memcpy(out[found++], at, sizeof(vec3));
    }
    free(cells);
    return found;
}

typedef struct phase_clock {
    double last;
    double ns[KCC_PHASE_COUNT];
} phase_clock;

static void mark_phase(void *user, int phase)
{
    phase_clock *pc = user;
    const double now = bench_now_ns();
    pc->ns[phase] += now - pc->last;
    pc->last = now;
}

#endif
