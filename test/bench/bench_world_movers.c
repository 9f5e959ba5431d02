/* bench_world_movers.c: what kinematic movers and sensors add to a world's step, in the world a
 * game has: a level (one static body), a crowd of wandering characters and a mix of movers and
 * sensors, stepped on one worker. Prints us per character per step (medians), the step over the
 * same crowd's without movers, the broadphase phase and the neighbour phase (where each character
 * asks the broadphase for the pieces near it), and whether every run ended every character at the
 * same place bit for bit. docs/world.md, "Figures", holds the results.
 * Mixes: none (the level and the crowd alone: what the others add to; always run), arena (5 lifts,
 * 5 sliding doors, 10 small trigger sensors: a Quake 3 arena's handful), crates (500 small
 * kinematic platforms bobbing), volumes (3 large static sensors, water or trigger volumes over much
 * of the level, split into pieces), all (the last three together). The crowds: 1k and 10k
 * characters, or as many as the level holds.
 * Usage: bench_world_movers [levels_dir]. Env: KCC_BENCH_COUNTS (e.g. "1000,10000"), KCC_BENCH_STEPS
 * (timed steps a run at 1k characters, default 40; fewer at more), KCC_BENCH_RUNS (default 5),
 * KCC_BENCH_ONLY (levels whose name contains it), KCC_BENCH_MIX (one mix's name besides none),
 * KCC_BENCH_NO_BIG=1 (`make bench`'s short pass over the imported maps: 1k characters, one run of
 * 10 steps, unless the variables above say otherwise; KCC_BENCH_FRAMES, which that pass also sets,
 * is not read). */
#include "bench.h"

#include "kcc_world_internal.h"
#include "bench_crowd.h"

static int RUNS = 5;
static int STEPS_1K = 40;
enum { WARM_STEPS = 10 };   /* untimed steps first: the characters land and fill their caches */
enum { PIECE_CAPACITY = 65536 };   /* the sensor volumes' pieces: a very large level's do not fit */

/* ---------------------------------------------------------------- the movers and sensors */

/* A closed box centred at the origin, each face cut into tiles no larger than `tile` m (a large
 * sensor's tree then has small children to split along). */
static kcc_mesh *box_mesh(const float half[3], float tile)
{
    int cuts[3];
    for (int a = 0; a < 3; ++a)
        cuts[a] = (int)ceilf(2.0f * half[a] / tile);
    size_t quads = 0;
    for (int a = 0; a < 3; ++a)
        quads += 2u * (size_t)cuts[(a + 1) % 3] * (size_t)cuts[(a + 2) % 3];
    float *v = malloc(quads * 4 * 3 * sizeof *v);
    uint32_t *idx = malloc(quads * 6 * sizeof *idx);
    uint32_t nv = 0, ni = 0;
    for (int a = 0; a < 3; ++a) {          /* the face normal to axis a, at -half and +half */
        const int u = (a + 1) % 3, w = (a + 2) % 3;
        for (int side = -1; side <= 1; side += 2)
            for (int i = 0; i < cuts[u]; ++i)
                for (int j = 0; j < cuts[w]; ++j) {
                    for (int k = 0; k < 4; ++k) {
                        float *p = &v[3 * (nv + (uint32_t)k)];
                        p[a] = (float)side * half[a];
                        p[u] = -half[u] + 2.0f * half[u] * (float)(i + (k == 1 || k == 2)) / (float)cuts[u];
                        p[w] = -half[w] + 2.0f * half[w] * (float)(j + (k >= 2)) / (float)cuts[w];
                    }
                    const uint32_t q[6] = {0, 1, 2, 0, 2, 3};
                    for (int k = 0; k < 6; ++k) /* wound outward on either side */
                        idx[ni++] = nv + q[side > 0 ? k : 5 - k];
                    nv += 4;
                }
    }
    kcc_mesh_desc md = {0};
    md.positions = v;
    md.vertex_count = nv;
    md.indices = idx;
    md.triangle_count = ni / 3;
    kcc_mesh *m = NULL;
    if (kcc_mesh_build(&md, &m) != KCC_OK) {
        fprintf(stderr, "bench_world_movers: cannot build a box mesh\n");
        exit(1);
    }
    free(v);
    free(idx);
    return m;
}

typedef struct mix {
    const char *name;
    int lifts, doors, triggers, crates, volumes;
} mix;

static const mix MIXES[] = {
    {"none", 0, 0, 0, 0, 0},
    {"arena", 5, 5, 10, 0, 0},
    {"crates", 0, 0, 0, 500, 0},
    {"volumes", 0, 0, 0, 0, 3},
    {"all", 5, 5, 10, 500, 3},
};
enum { MIX_COUNT = sizeof MIXES / sizeof MIXES[0], MOVER_SPOTS = 520 };

/* A kinematic body's path: base + amplitude * sin(phase + omega t) on one axis (lifts and crates
 * bob on y, doors slide on x). */
typedef struct mover {
    uint32_t id;
    vec3     base;
    int      axis;
    float    amplitude, omega, phase;
} mover;

typedef struct scene {
    kcc_mesh *lift, *door, *trigger, *crate;
    vec3      spots[MOVER_SPOTS];
    int       spot_count;
    vec3      bounds[2];
} scene;

static void scene_make(scene *s, const kcc_mesh *level)
{
    s->lift = box_mesh((const float[3]){1.5f, 0.15f, 1.5f}, 4.0f);
    s->door = box_mesh((const float[3]){1.25f, 1.5f, 0.15f}, 4.0f);
    s->trigger = box_mesh((const float[3]){1.5f, 1.5f, 1.5f}, 4.0f);
    s->crate = box_mesh((const float[3]){0.6f, 0.25f, 0.6f}, 4.0f);
    s->spot_count = crowd_starts(level, MOVER_SPOTS, 9001u, s->spots);
    kcc_mesh_bounds(level, s->bounds);
}

static void scene_free(scene *s)
{
    kcc_mesh_destroy(s->lift);
    kcc_mesh_destroy(s->door);
    kcc_mesh_destroy(s->trigger);
    kcc_mesh_destroy(s->crate);
}

/* Adds a body; a static sensor split into more pieces than the world has room for is refused
 * (KCC_ERR_TOO_LARGE: returns false), anything else that fails ends the bench. */
static bool add_body(kcc_world *w, const kcc_mesh *m, kcc_body_kind kind, bool sensor, const vec3 at,
                     uint32_t *out_id)
{
    kcc_body_desc bd = kcc_body_default_desc();
    bd.kind = kind;
    bd.sensor = sensor;
    memcpy(bd.transform.position, at, sizeof(vec3));
    const kcc_status st = kcc_world_add_body(w, m, &bd, out_id);
    if (st != KCC_OK && st != KCC_ERR_TOO_LARGE) {
        fprintf(stderr, "bench_world_movers: cannot add a body: %s\n", kcc_status_str(st));
        exit(1);
    }
    return st == KCC_OK;
}

/* The mix's bodies: movers at the scene's spots (their floor), the triggers standing on spots, the
 * volumes side by side along x over the lower half of the level's height, each a third of its
 * width and the whole of its depth (their mesh built here, freed by the caller: *volume_mesh).
 * Returns how many movers it wrote to `movers`, or -1 when a volume's pieces did not fit. */
static int add_mix(kcc_world *w, const scene *s, const mix *x, mover *movers, kcc_mesh **volume_mesh)
{
    int spot = 0, n = 0;
    const float floor_drop = player().half_extents[1] + 0.02f; /* spots are box centres */
    for (int i = 0; i < x->lifts + x->doors + x->crates && spot < s->spot_count; ++i, ++spot) {
        mover *mv = &movers[n++];
        const bool lift = i < x->lifts, door = !lift && i < x->lifts + x->doors;
        memcpy(mv->base, s->spots[spot], sizeof(vec3));
        mv->base[1] -= floor_drop;
        mv->axis = door ? 0 : 1;
        mv->amplitude = lift ? 1.5f : door ? 1.25f : 0.5f;
        mv->base[1] += door ? 1.5f : mv->amplitude + 0.2f;
        mv->omega = (lift ? 1.5f : door ? 2.0f : 3.0f) / 60.0f;
        mv->phase = 0.7f * (float)i;
        add_body(w, lift ? s->lift : door ? s->door : s->crate, KCC_BODY_KINEMATIC, false, mv->base,
                 &mv->id);
    }
    for (int i = 0; i < x->triggers && spot < s->spot_count; ++i, ++spot) {
        uint32_t id;
        vec3 at = {s->spots[spot][0], s->spots[spot][1] - floor_drop + 1.5f, s->spots[spot][2]};
        add_body(w, s->trigger, KCC_BODY_STATIC, true, at, &id);
    }
    *volume_mesh = NULL;
    if (x->volumes > 0) {
        const float width = (s->bounds[1][0] - s->bounds[0][0]) / (float)x->volumes;
        const float half[3] = {0.5f * width, 0.25f * (s->bounds[1][1] - s->bounds[0][1]),
                               0.5f * (s->bounds[1][2] - s->bounds[0][2])};
        /* tiles of 1.9 m, under the world's 4 m cell: the world cuts a volume into pieces that fit
           a cell (a tree leaf of several tiles into runs of its triangles), so every piece is
           entered in the grid; a triangle wider than the cell would be a piece the grid tests
           against every query (oversized) */
        *volume_mesh = box_mesh(half, 1.9f);
        for (int i = 0; i < x->volumes; ++i) {
            uint32_t id;
            const vec3 at = {s->bounds[0][0] + width * ((float)i + 0.5f), s->bounds[0][1] + half[1],
                             0.5f * (s->bounds[0][2] + s->bounds[1][2])};
            if (!add_body(w, *volume_mesh, KCC_BODY_STATIC, true, at, &id))
                return -1;
        }
    }
    return n;
}

/* ---------------------------------------------------------------- the runs */

typedef struct run_result {
    double   us, bp_us, near_us;   /* per character per step: the step, its broadphase and neighbour phases */
    uint32_t pieces;
    uint64_t hash;                 /* every character's final position, bit for bit */
} run_result;

static uint64_t hash_bits(uint64_t h, const void *p, size_t n)
{
    for (size_t i = 0; i < n; ++i)
        h = (h ^ ((const unsigned char *)p)[i]) * 1099511628211ull; /* FNV-1a */
    return h;
}

static kcc_world *make_world(const kcc_mesh *level, int n)
{
    kcc_world_desc wd = kcc_world_default_desc();
    wd.character_capacity = (uint32_t)n;
    wd.body_capacity = 2048;
    wd.pair_capacity = 48u * (uint32_t)n;
    wd.piece_capacity = PIECE_CAPACITY;
    kcc_world *w = NULL;
    uint32_t id;
    if (kcc_world_create(&wd, &w) != KCC_OK || kcc_world_add_body(w, level, NULL, &id) != KCC_OK) {
        fprintf(stderr, "bench_world_movers: cannot make the world\n");
        exit(1);
    }
    return w;
}

/* One run: the world made, WARM_STEPS untimed steps, then `steps` timed ones. */
static run_result run(const kcc_mesh *level, const scene *s, const mix *x, const vec3 *at, int n,
                      int steps)
{
    const kcc_character_desc d = player();
    kcc_world *w = make_world(level, n);
    mover movers[MOVER_SPOTS];
    kcc_mesh *volume_mesh;
    const int mover_count = add_mix(w, s, x, movers, &volume_mesh);
    if (mover_count < 0) {
        kcc_world_destroy(w);
        kcc_mesh_destroy(volume_mesh);
        return (run_result){.us = -1.0};
    }
    uint32_t *ids = calloc((size_t)n, sizeof *ids);
    float *vy = calloc((size_t)n, sizeof *vy);
    for (int c = 0; c < n; ++c)
        kcc_world_add_character(w, &d, at[c], &ids[c]);
    phase_clock pc;
    memset(&pc, 0, sizeof pc);
    double total = 0.0;
    for (int f = 0; f < WARM_STEPS + steps; ++f) {
        for (int i = 0; i < mover_count; ++i) {
            const mover *mv = &movers[i];
            kcc_transform t = {{mv->base[0], mv->base[1], mv->base[2]}, {0.0f, 0.0f, 0.0f, 1.0f}};
            t.position[mv->axis] += mv->amplitude * sinf(mv->phase + mv->omega * (float)(f + 1));
            kcc_world_move_body(w, mv->id, &t);
        }
        for (int c = 0; c < n; ++c) {
            kcc_character_state st;
            vec3 disp;
            kcc_world_get_character(w, ids[c], &st, NULL);
            wander(c, f, st.on_ground, &vy[c], disp);
            kcc_world_set_displacement(w, ids[c], disp);
        }
        if (f == WARM_STEPS)
            memset(&pc, 0, sizeof pc);
        const double t0 = pc.last = bench_now_ns();
        kcc_world_step_marked(w, mark_phase, &pc);
        if (f >= WARM_STEPS)
            total += bench_now_ns() - t0;
    }
    run_result res = {0};
    res.hash = 14695981039346656037ull;
    for (int c = 0; c < n; ++c) {
        kcc_character_state st;
        kcc_world_get_character(w, ids[c], &st, NULL);
        res.hash = hash_bits(res.hash, st.position, sizeof st.position);
    }
    res.pieces = w->piece_count;
    res.us = total / steps / n * 1e-3;
    res.bp_us = pc.ns[KCC_PHASE_BROADPHASE] / steps / n * 1e-3;
    res.near_us = pc.ns[KCC_PHASE_NEIGHBOURS] / steps / n * 1e-3;
    kcc_world_destroy(w);
    kcc_mesh_destroy(volume_mesh);
    free(ids);
    free(vy);
    return res;
}

/* RUNS runs of the mix, printed as a row of medians; `none_us` is the same crowd's step without
 * movers (0: this is that row). Returns the median step. */
static double bench_mix(const char *name, const kcc_mesh *level, const scene *s, const mix *x,
                        const vec3 *at, int n, double none_us)
{
    const int steps = STEPS_1K * 1000 / n > 8 ? STEPS_1K * 1000 / n : 8;
    double t[16], bp[16], near[16];
    uint64_t hash = 0;
    bool same = true;
    uint32_t pieces = 0;
    for (int r = 0; r < RUNS; ++r) {
        const run_result res = run(level, s, x, at, n, steps);
        if (res.us < 0.0) {
            printf("%-14s %-8s %6d  skipped: more pieces than piece_capacity (%u)\n", name, x->name, n,
                   PIECE_CAPACITY);
            return 0.0;
        }
        t[r] = res.us, bp[r] = res.bp_us, near[r] = res.near_us;
        same &= r == 0 || res.hash == hash;
        hash = res.hash;
        pieces = res.pieces;
    }
    const double us = bench_median(t, (size_t)RUNS);
    char load[16] = "-";
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%15s", load) != 1)
            snprintf(load, sizeof load, "-");
        fclose(f);
    }
    printf("%-14s %-8s %6d %6u %8.3f %7.3f %7.3f %7.3f %5s %5s\n", name, x->name, n, pieces, us,
           none_us > 0.0 ? us / none_us : 1.0, bench_median(bp, (size_t)RUNS),
           bench_median(near, (size_t)RUNS), same ? "yes" : "NO", load);
    fflush(stdout);
    return us;
}

static void bench_level_mixes(const char *name, const kcc_mesh *level, const int *counts, int count_n,
                              const char *only_mix)
{
    scene s;
    scene_make(&s, level);
    for (int ci = 0; ci < count_n; ++ci) {
        vec3 *at = calloc((size_t)counts[ci], sizeof *at);
        /* as many characters as the level holds, up to the count: a small arena holds fewer */
        const int n = crowd_starts(level, counts[ci], 7u + (uint32_t)counts[ci], at);
        double none_us = 0.0; /* MIXES[0] is none: the others' rows read against it */
        if (n > 0)
            for (int mi = 0; mi < MIX_COUNT; ++mi)
                if (!only_mix || mi == 0 || strcmp(only_mix, MIXES[mi].name) == 0) {
                    const double us = bench_mix(name, level, &s, &MIXES[mi], (const vec3 *)at, n, none_us);
                    none_us = mi == 0 ? us : none_us;
                }
        free(at);
    }
    scene_free(&s);
}

static int parse_counts(int *counts)
{
    int n = 0;
    for (const char *p = getenv("KCC_BENCH_COUNTS"); p && *p && n < 4;) {
        counts[n] = atoi(p);
        n += counts[n] > 0;
        while (*p && *p != ',')
            ++p;
        if (*p == ',')
            ++p;
    }
    return n;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "../shared/levels";
    if (getenv("KCC_BENCH_NO_BIG")) { /* the short pass: a few seconds a level */
        RUNS = 1;
        STEPS_1K = 10;
    }
    if (getenv("KCC_BENCH_STEPS") && atoi(getenv("KCC_BENCH_STEPS")) > 0)
        STEPS_1K = atoi(getenv("KCC_BENCH_STEPS"));
    if (getenv("KCC_BENCH_RUNS") && atoi(getenv("KCC_BENCH_RUNS")) > 0)
        RUNS = atoi(getenv("KCC_BENCH_RUNS")) <= 16 ? atoi(getenv("KCC_BENCH_RUNS")) : 16;
    int counts[4] = {1000, 10000}, count_n = getenv("KCC_BENCH_NO_BIG") ? 1 : 2;
    if (getenv("KCC_BENCH_COUNTS"))
        count_n = parse_counts(counts);
    const char *only = getenv("KCC_BENCH_ONLY"), *only_mix = getenv("KCC_BENCH_MIX");
    bench_warmup(200.0);
    bench_print_load("before");
    printf("bench_world_movers: kcc_world_step on one worker, us per character per step, median of %d "
           "runs of %d steps at 1k characters (fewer at more) (%s)\n", RUNS, STEPS_1K, bench_clock_name());
    printf("pieces: the broadphase's proxies (movers, sensor pieces); step: us a character; /none: over\n"
           "the same crowd's step without movers; bp: the step's broadphase phase (region grid, pairs\n"
           "updated); near: its neighbour phase (each character's broadphase query and its neighbours);\n"
           "same: every run ended every character at the same place\n");
    printf("%-14s %-8s %6s %6s %8s %7s %7s %7s %5s %5s\n", "level", "mix", "chars", "pieces", "step", "/none",
           "bp", "near", "same", "load");
    static char names[BENCH_MAX_LEVELS][64];
    const int level_n = bench_level_list(dir, names, BENCH_MAX_LEVELS);
    for (int li = 0; li < level_n; ++li) {
        char name[64];
        snprintf(name, sizeof name, "%.63s", names[li]);
        if (only && !strstr(name, only))
            continue;
        bench_level lv;
        if (!bench_level_load(dir, name, &lv))
            continue;
        kcc_mesh *m = bench_build_mesh(&lv);
        if (m)
            bench_level_mixes(name, m, counts, count_n, only_mix);
        kcc_mesh_destroy(m);
        bench_level_free(&lv);
    }
    bench_print_load("after");
    return 0;
}
