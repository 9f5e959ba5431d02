/* bench.h: shared helpers of the benchmarks (test/bench/): a monotonic clock, medians, a small
 * deterministic PRNG, the list of shared levels and their loading, and a generated ~1M-triangle mesh.
 * Header-only, C and C++; benchmark code only (allocates and prints freely, never part of the library). */
#ifndef KCC_BENCH_H
#define KCC_BENCH_H

/* clock_gettime under -std=c11 (C benchmarks include this header first) */
#if !defined(__cplusplus) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kcc.h"

/* ---------------------------------------------------------------- time and statistics */

/* The benchmark clock (ns): CLOCK_MONOTONIC (wall time); with env KCC_BENCH_CLOCK=cpu the calling
 * thread's CPU time instead (CLOCK_THREAD_CPUTIME_ID: leaves out the time other processes on a busy
 * machine take from us, but costs a system call, ~0.3 us, per reading). */
static inline clockid_t bench_clock_id(void)
{
    static int cpu = -1; /* benchmark-only cache of the environment setting */
    if (cpu < 0) {
        const char *e = getenv("KCC_BENCH_CLOCK");
        cpu = e && strcmp(e, "cpu") == 0;
    }
    return cpu ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC;
}

static inline const char *bench_clock_name(void)
{
    return bench_clock_id() == CLOCK_MONOTONIC ? "CLOCK_MONOTONIC (wall)" : "CLOCK_THREAD_CPUTIME_ID (thread cpu)";
}

static inline double bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(bench_clock_id(), &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Wall time (ns), for the totals printed at the end whatever the benchmark clock is. */
static inline double bench_wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Cost of one clock reading (ns): the median of 201 back-to-back differences. Subtracted from
 * intervals as short as a single character move. */
static inline double bench_clock_overhead_ns(void)
{
    double d[201];
    for (int i = 0; i < 201; ++i) {
        double a = bench_now_ns();
        d[i] = bench_now_ns() - a;
    }
    for (int i = 1; i < 201; ++i) /* insertion sort: tiny array, no qsort needed before it is declared */
        for (int j = i; j > 0 && d[j] < d[j - 1]; --j) {
            double t = d[j]; d[j] = d[j - 1]; d[j - 1] = t;
        }
    return d[100];
}

/* Spins for `ms` milliseconds so that the first measurements do not run on a cold, clocked-down core. */
static inline void bench_warmup(double ms)
{
    double end = bench_wall_ns() + ms * 1e6;
    volatile double x = 1.0;
    while (bench_wall_ns() < end)
        for (int i = 0; i < 1000; ++i) x = x * 1.0000001 + 1e-9;
}

/* Prints the 1-minute load average: the machine is shared, and figures taken under load are slower. */
static inline void bench_print_load(const char *when)
{
    double l1 = -1, l5 = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf %lf", &l1, &l5) != 2) l1 = l5 = -1;
        fclose(f);
    }
    printf("load average %s: %.2f (1 min), %.2f (5 min)\n", when, l1, l5);
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of n values; sorts v in place. 0 for n == 0. */
static inline double bench_median(double *v, size_t n)
{
    if (n == 0) return 0.0;
    qsort(v, n, sizeof v[0], bench_cmp_double);
    return (n & 1) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Value at quantile q in [0, 1] of n values (nearest rank); sorts v in place. */
static inline double bench_quantile(double *v, size_t n, double q)
{
    if (n == 0) return 0.0;
    qsort(v, n, sizeof v[0], bench_cmp_double);
    size_t i = (size_t)(q * (double)(n - 1) + 0.5);
    return v[i < n ? i : n - 1];
}

/* ---------------------------------------------------------------- PRNG (splitmix64 seeded xorshift*) */

typedef struct bench_rng { uint64_t s; } bench_rng;

static inline bench_rng bench_rng_seed(uint64_t seed)
{
    /* splitmix64 scrambles small seeds into a well-mixed non-zero state */
    uint64_t z = seed + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    bench_rng r;
    r.s = z ? z : 1u;
    return r;
}

static inline uint32_t bench_rng_u32(bench_rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return (uint32_t)((r->s * 0x2545F4914F6CDD1Dull) >> 32);
}

/* Uniform in [0, 1). */
static inline float bench_rng_float(bench_rng *r)
{
    return (float)(bench_rng_u32(r) >> 8) * (1.0f / 16777216.0f);
}

/* Uniform in [lo, hi). */
static inline float bench_rng_range(bench_rng *r, float lo, float hi)
{
    return lo + (hi - lo) * bench_rng_float(r);
}

/* Uniform direction on the unit sphere. */
static inline void bench_rng_dir(bench_rng *r, float out[3])
{
    float z = bench_rng_range(r, -1.0f, 1.0f);
    float a = bench_rng_range(r, 0.0f, 6.28318530718f);
    float s = sqrtf(fmaxf(0.0f, 1.0f - z * z));
    out[0] = s * cosf(a);
    out[1] = z;
    out[2] = s * sinf(a);
}

/* ---------------------------------------------------------------- levels */

/* The five shared arena levels (see ../shared/levels/README.md), smallest first. */
static const char *const bench_level_names[] = {
    "oa_bases3", "oa_dm1", "oa_dm4", "wrackdm17", "ctf_inyard"
};
#define BENCH_LEVEL_COUNT 5

/* A loaded or generated level: triangles (+ spawns) and its name. */
typedef struct bench_level {
    char      name[64];
    kcc_level level;
    int       own_arrays;   /* 1: arrays allocated by bench_generate_big (free with free()) */
} bench_level;

/* Loads dir/name.obj (+ .spawns). Prints the error and returns 0 on failure. */
static inline int bench_level_load(const char *dir, const char *name, bench_level *out)
{
    char path[1024], err[256] = "";
    snprintf(path, sizeof path, "%s/%s.obj", dir, name);
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", name);
    kcc_status st = kcc_level_load_obj(path, &out->level, err, sizeof err);
    if (st != KCC_OK) {
        fprintf(stderr, "cannot load %s: %s (%s)\n", path, kcc_status_str(st), err);
        return 0;
    }
    return 1;
}

/* Generates a named kcc level (e.g. "arena", "terrain"). Returns 0 on failure. */
static inline int bench_level_generate(const char *spec, bench_level *out)
{
    char err[256] = "";
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", spec);
    kcc_status st = kcc_level_generate(spec, &out->level, err, sizeof err);
    if (st != KCC_OK) {
        fprintf(stderr, "cannot generate %s: %s (%s)\n", spec, kcc_status_str(st), err);
        return 0;
    }
    return 1;
}

/* 1 when dir/oa_bases3.obj can be opened (the shared levels are there). */
static inline int bench_levels_present(const char *dir)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.obj", dir, bench_level_names[0]);
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    fclose(f);
    return 1;
}

/* The levels to run under dir: the names listed in dir/levels.txt (what `make levels` writes for the
 * imported Quake 3 maps), else the five shared levels when dir holds them. Returns the count. */
#define BENCH_MAX_LEVELS 256
static inline int bench_level_list(const char *dir, char names[][64], int max)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/levels.txt", dir);
    FILE *f = fopen(path, "r");
    int n = 0;
    if (f) {
        while (n < max && fscanf(f, "%63s", names[n]) == 1)
            n++;
        fclose(f);
        return n;
    }
    if (!bench_levels_present(dir))
        return 0;
    for (int i = 0; i < BENCH_LEVEL_COUNT && n < max; ++i)
        snprintf(names[n++], 64, "%s", bench_level_names[i]);
    return n;
}

/* A deterministic ~1M-triangle test mesh: a rolling heightfield of `cells` x `cells` quads
 * (0.5 m each, 2 triangles per quad) plus `pillars` closed boxes (12 triangles each) standing on it,
 * so that there are floors, slopes and walls. cells = 700, pillars = 2000: 1,004,000 triangles on
 * a 350 m square. Spawn points: a 16 x 16 grid 0.6 m above the terrain (characters drop onto it). */
static inline float bench_big_height(float x, float z)
{
    return 2.0f * sinf(x * 0.07f) * cosf(z * 0.05f) + 0.6f * sinf(x * 0.31f + z * 0.23f)
         + 0.15f * sinf(x * 1.3f) * sinf(z * 1.1f);
}

static inline int bench_generate_big(uint32_t cells, uint32_t pillars, bench_level *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "generated_%uk", (unsigned)((2u * cells * cells + 12u * pillars) / 1000u));
    const float cell = 0.5f;                       /* m */
    const float half = 0.5f * cell * (float)cells; /* m */
    uint32_t grid_v = (cells + 1) * (cells + 1);
    uint32_t vcount = grid_v + 8u * pillars;
    uint32_t tcount = 2u * cells * cells + 12u * pillars;
    float *pos = (float *)malloc((size_t)vcount * 3 * sizeof(float));
    uint32_t *idx = (uint32_t *)malloc((size_t)tcount * 3 * sizeof(uint32_t));
    float *spawns = (float *)malloc(256 * 3 * sizeof(float));
    if (!pos || !idx || !spawns) { free(pos); free(idx); free(spawns); return 0; }
    for (uint32_t j = 0; j <= cells; ++j)
        for (uint32_t i = 0; i <= cells; ++i) {
            float x = -half + cell * (float)i, z = -half + cell * (float)j;
            float *p = pos + 3 * (size_t)(j * (cells + 1) + i);
            p[0] = x; p[1] = bench_big_height(x, z); p[2] = z;
        }
    uint32_t t = 0;
    for (uint32_t j = 0; j < cells; ++j)
        for (uint32_t i = 0; i < cells; ++i) {
            uint32_t a = j * (cells + 1) + i, b = a + 1, c = a + cells + 1, d = c + 1;
            /* counter-clockwise seen from +Y: normals point up */
            idx[3 * t + 0] = a; idx[3 * t + 1] = c; idx[3 * t + 2] = b; ++t;
            idx[3 * t + 0] = b; idx[3 * t + 1] = c; idx[3 * t + 2] = d; ++t;
        }
    bench_rng r = bench_rng_seed(12345);
    static const uint8_t box_tris[12][3] = {
        {0, 1, 2}, {0, 2, 3}, {4, 6, 5}, {4, 7, 6}, {0, 5, 1}, {0, 4, 5},
        {1, 6, 2}, {1, 5, 6}, {2, 7, 3}, {2, 6, 7}, {3, 4, 0}, {3, 7, 4}};  /* outward normals */
    for (uint32_t k = 0; k < pillars; ++k) {
        float cx = bench_rng_range(&r, -half + 5.0f, half - 5.0f);
        float cz = bench_rng_range(&r, -half + 5.0f, half - 5.0f);
        float hx = bench_rng_range(&r, 0.3f, 3.0f), hz = bench_rng_range(&r, 0.3f, 3.0f);
        float y0 = bench_big_height(cx, cz) - 1.5f, y1 = y0 + bench_rng_range(&r, 0.4f, 6.0f);
        uint32_t v0 = grid_v + 8u * k;
        const float xs[4] = {cx - hx, cx + hx, cx + hx, cx - hx};
        const float zs[4] = {cz - hz, cz - hz, cz + hz, cz + hz};
        for (int c = 0; c < 8; ++c) {
            float *p = pos + 3 * (size_t)(v0 + (uint32_t)c);
            p[0] = xs[c & 3]; p[1] = c < 4 ? y0 : y1; p[2] = zs[c & 3];
        }
        for (int f = 0; f < 12; ++f, ++t)
            for (int e = 0; e < 3; ++e) idx[3 * t + (uint32_t)e] = v0 + box_tris[f][e];
    }
    for (uint32_t s = 0; s < 256; ++s) {
        float x = -100.0f + 200.0f * (float)(s % 16) / 15.0f, z = -100.0f + 200.0f * (float)(s / 16) / 15.0f;
        /* move off any pillar (0.6 m margin): step along +x until clear */
        for (int moved = 1; moved;) {
            moved = 0;
            for (uint32_t k = 0; k < pillars; ++k) {
                const float *lo = pos + 3 * (size_t)(grid_v + 8u * k), *hi = pos + 3 * (size_t)(grid_v + 8u * k + 6);
                if (x > lo[0] - 0.6f && x < hi[0] + 0.6f && z > lo[2] - 0.6f && z < hi[2] + 0.6f) {
                    x = hi[0] + 0.7f;
                    moved = 1;
                }
            }
        }
        spawns[3 * s + 0] = x;
        spawns[3 * s + 1] = bench_big_height(x, z) + 0.6f; /* clear of the bumps under the box */
        spawns[3 * s + 2] = z;
    }
    out->level.positions = pos;
    out->level.vertex_count = vcount;
    out->level.indices = idx;
    out->level.triangle_count = tcount;
    out->level.spawns = spawns;
    out->level.spawn_count = 256;
    out->own_arrays = 1;
    return 1;
}

static inline void bench_level_free(bench_level *l)
{
    if (l->own_arrays) {
        free(l->level.positions);
        free(l->level.indices);
        free(l->level.spawns);
        memset(&l->level, 0, sizeof l->level);
    } else {
        kcc_level_free(&l->level);
    }
}

/* Builds a kcc mesh over the level's triangles; returns NULL (and prints) on failure. */
static inline kcc_mesh *bench_build_mesh(const bench_level *l)
{
    kcc_mesh_desc d;
    memset(&d, 0, sizeof d);
    d.positions = l->level.positions;
    d.vertex_count = l->level.vertex_count;
    d.indices = l->level.indices;
    d.triangle_count = l->level.triangle_count;
    kcc_mesh *m = NULL;
    kcc_status st = kcc_mesh_build(&d, &m);
    if (st != KCC_OK) {
        fprintf(stderr, "%s: kcc_mesh_build: %s\n", l->name, kcc_status_str(st));
        return NULL;
    }
    return m;
}

#endif
