/* bench_broadphase.c: the broadphase benchmark (issue 22): ns per box per step of moving every
 * moving box, updating and reading the pairs, for the grid at a few cell sizes,
 * with 1k, 10k and 100k characters among one huge STATIC proxy (the level's bounds) and 300 static
 * pieces of 1-2 m (no larger than the smallest cell tried, as the world splits a level), in four
 * scenes: characters spread over a level, clumped in a crowd, spread among large kinematic movers
 * (*mixed*: one per 100 characters unless told, trains, platforms, vehicles and doors 4-40 m long on
 * x or z, 1-4 m tall, shuttling 0.05-0.2 m a step along their long axis: wider than every cell
 * tried, so the grid's oversized proxies), or spread among as many movers 3.4-3.7 m long (*deep*:
 * their boxes over a step under the 4 m default cell, so the grid's rows as deep as they are). A
 * mover's box covers its motion over the step, as the world enters a kinematic body's. The same run
 * measures what the target is read against: a plain kcc_character_move of 10k characters walking on
 * a shared level (ctf_inyard), and prints each cell size's ns a box over it ("/ move"). docs/world.md,
 * "Figures", holds the figures.
 * Usage: bench_broadphase [levels_dir] (default ../shared/levels: the reference's level; the
 * broadphase scenes are generated); env KCC_BENCH_BP_MAX
 * (largest count, default 100000), KCC_BENCH_BP_MIN (smallest count), KCC_BENCH_BP_ONLY (run only the cell
 * sizes whose name contains it: "grid 4"), KCC_BENCH_BP_SCENE ("spread", "crowd", "mixed" or "deep":
 * that scene only), KCC_BENCH_BP_MOVERS (movers per 1000 characters in mixed and deep, default 10). */
#include "bench.h"

#include "kcc_broadphase_internal.h"

#define RUNS 5            /* timed runs per case; the median is reported */
#define STATIC_PIECES 300
#define STEP_M 0.05f      /* m walked per step */
#define REFERENCE_LEVEL "ctf_inyard"
#define REFERENCE_CHARACTERS 10000u
#define REFERENCE_STEPS 20  /* timed steps per run of the reference, after as many untimed */

static const float CHAR_HALF[3] = {0.47f, 0.875f, 0.47f};   /* m: 0.94 x 1.75 x 0.94 */

typedef enum scene_kind { SCENE_SPREAD, SCENE_CROWD, SCENE_MIXED, SCENE_DEEP, SCENE_KINDS } scene_kind;
static const char *const SCENE_NAMES[SCENE_KINDS] = {"spread", "crowd", "mixed", "deep"};

typedef struct scene {
    uint32_t count;        /* characters */
    float    half_side;    /* m: they walk in [-half_side, half_side]^2 */
    float   *pos;          /* 3 per character: the box's centre (m) */
    float   *heading;      /* rad */
    int     *turn_in;      /* steps until the next turn */
    bench_rng rng;
    uint32_t mover_count;  /* large kinematic movers (mixed and deep scenes) */
    float   *mover_pos;    /* 3 per mover: the box's centre (m) */
    float   *mover_half;   /* 3 per mover: the box's half extents (m) */
    float   *mover_last;   /* the centre's coordinate along the long axis at the step's start */
    float   *mover_speed;  /* m a step along the long axis, signed */
    int     *mover_axis;   /* the long axis: 0 (x) or 2 (z) */
    int     *mover_turn_in;  /* steps until it turns back */
    int     *mover_leg;      /* steps a leg of its shuttle takes */
} scene;

/* `movers` movers (mixed and deep scenes) over the characters' square on one of three storeys:
 * long 4-40 m (mixed) or 3.4-3.7 m (deep) on x or z, 1-3 m across, 1-4 m tall, shuttling 0.05-0.2 m
 * a step over 1-3 times their length, each starting at a random point of its shuttle. */
static void movers_make(scene *s, scene_kind kind, uint32_t movers)
{
    s->mover_count = kind == SCENE_MIXED || kind == SCENE_DEEP ? movers : 0u;
    const uint32_t n = s->mover_count > 0 ? s->mover_count : 1u;
    s->mover_pos = malloc(3 * sizeof(float) * n);
    s->mover_half = malloc(3 * sizeof(float) * n);
    s->mover_last = malloc(sizeof(float) * n);
    s->mover_speed = malloc(sizeof(float) * n);
    s->mover_axis = malloc(sizeof(int) * n);
    s->mover_turn_in = malloc(sizeof(int) * n);
    s->mover_leg = malloc(sizeof(int) * n);
    bench_rng rng = bench_rng_seed(7000u + s->count);
    for (uint32_t i = 0; i < s->mover_count; ++i) {
        const int along = bench_rng_u32(&rng) % 2 ? 2 : 0, across = 2 - along;
        float *p = &s->mover_pos[3 * i], *h = &s->mover_half[3 * i];
        h[along] = kind == SCENE_MIXED ? bench_rng_range(&rng, 2.0f, 20.0f) : bench_rng_range(&rng, 1.7f, 1.85f);
        h[across] = bench_rng_range(&rng, 0.5f, 1.5f);
        h[1] = bench_rng_range(&rng, 0.5f, 2.0f);
        p[0] = bench_rng_range(&rng, -s->half_side, s->half_side);
        p[1] = 4.0f * (float)(bench_rng_u32(&rng) % 3) + h[1];
        p[2] = bench_rng_range(&rng, -s->half_side, s->half_side);
        s->mover_axis[i] = along;
        s->mover_speed[i] = bench_rng_range(&rng, 0.05f, 0.2f);
        s->mover_leg[i] = 1 + (int)(bench_rng_range(&rng, 2.0f, 6.0f) * h[along] / s->mover_speed[i]);
        s->mover_turn_in[i] = 1 + (int)(bench_rng_u32(&rng) % (uint32_t)s->mover_leg[i]);
        s->mover_last[i] = p[along];
    }
}

/* Characters spread over a level (200 x 200 m for 10k, the area scaled with the count, on three
 * storeys 4 m apart; the same walk in the spread, mixed and deep scenes) or clumped in a crowd (one
 * character per 1.2 m^2, all on one floor). */
static void scene_make(scene *s, uint32_t count, scene_kind kind, uint32_t movers)
{
    const int crowd = kind == SCENE_CROWD;
    s->count = count;
    s->half_side = crowd ? 0.5f * sqrtf(1.2f * (float)count) : 100.0f * sqrtf((float)count / 10000.0f);
    s->pos = malloc(3 * sizeof(float) * count);
    s->heading = malloc(sizeof(float) * count);
    s->turn_in = malloc(sizeof(int) * count);
    s->rng = bench_rng_seed(count * 2u + (uint32_t)crowd);
    for (uint32_t i = 0; i < count; ++i) {
        s->pos[3 * i + 0] = bench_rng_range(&s->rng, -s->half_side, s->half_side);
        s->pos[3 * i + 1] = crowd ? 0.875f : 0.875f + 4.0f * (float)(bench_rng_u32(&s->rng) % 3);
        s->pos[3 * i + 2] = bench_rng_range(&s->rng, -s->half_side, s->half_side);
        s->heading[i] = bench_rng_range(&s->rng, 0.0f, 6.2831853f);
        s->turn_in[i] = 60 + (int)(bench_rng_u32(&s->rng) % 120);
    }
    movers_make(s, kind, movers);
}

static void scene_free(scene *s)
{
    free(s->pos);
    free(s->heading);
    free(s->turn_in);
    free(s->mover_pos);
    free(s->mover_half);
    free(s->mover_last);
    free(s->mover_speed);
    free(s->mover_axis);
    free(s->mover_turn_in);
    free(s->mover_leg);
}

/* One step of the movers: each along its long axis, turning back at the end of a leg. */
static void movers_step(scene *s)
{
    for (uint32_t i = 0; i < s->mover_count; ++i) {
        float *along = &s->mover_pos[3 * i + s->mover_axis[i]];
        s->mover_last[i] = *along;
        *along += s->mover_speed[i];
        if (--s->mover_turn_in[i] <= 0) {
            s->mover_speed[i] = -s->mover_speed[i];
            s->mover_turn_in[i] = s->mover_leg[i];
        }
    }
}

/* One step of walking: 0.05 m along the heading, a new heading every 1-3 s (60 Hz) or at the edge;
 * then the movers'. */
static void scene_step(scene *s)
{
    for (uint32_t i = 0; i < s->count; ++i) {
        float *p = &s->pos[3 * i];
        if (--s->turn_in[i] <= 0) {
            s->heading[i] = bench_rng_range(&s->rng, 0.0f, 6.2831853f);
            s->turn_in[i] = 60 + (int)(bench_rng_u32(&s->rng) % 120);
        }
        float x = p[0] + STEP_M * cosf(s->heading[i]), z = p[2] + STEP_M * sinf(s->heading[i]);
        if (fabsf(x) > s->half_side || fabsf(z) > s->half_side) {
            s->heading[i] += 3.14159265f;
            continue;
        }
        p[0] = x;
        p[2] = z;
    }
    movers_step(s);
}

static void char_box(const scene *s, uint32_t i, float lo[3], float hi[3])
{
    for (int k = 0; k < 3; ++k) {
        lo[k] = s->pos[3 * i + k] - CHAR_HALF[k];
        hi[k] = s->pos[3 * i + k] + CHAR_HALF[k];
    }
}

/* A mover's box over the last step: its box at the step's start and end together. */
static void mover_box(const scene *s, uint32_t i, float lo[3], float hi[3])
{
    const float *p = &s->mover_pos[3 * i], *h = &s->mover_half[3 * i];
    for (int k = 0; k < 3; ++k) {
        lo[k] = p[k] - h[k];
        hi[k] = p[k] + h[k];
    }
    const int along = s->mover_axis[i];
    const float last = s->mover_last[i];
    lo[along] = fminf(lo[along], last - h[along]);
    hi[along] = fmaxf(hi[along], last + h[along]);
}

/* The level's bounds (one huge STATIC proxy) and 300 static pieces of 1-2 m, then the characters,
 * then the movers: moving_proxy[] their proxies, the characters' then the movers'. */
static void populate(kcc_broadphase *bp, const scene *s, uint32_t *moving_proxy)
{
    float big = s->half_side + 50.0f;
    const float level_lo[3] = {-big, -10.0f, -big}, level_hi[3] = {big, 40.0f, big};
    kcc_broadphase_add(bp, level_lo, level_hi, 0, KCC_PROXY_STATIC);
    bench_rng rng = bench_rng_seed(99);
    for (int i = 0; i < STATIC_PIECES; ++i) {
        float lo[3], hi[3];
        for (int k = 0; k < 3; ++k) {
            float c = k == 1 ? bench_rng_range(&rng, 0.0f, 10.0f)
                             : bench_rng_range(&rng, -s->half_side, s->half_side);
            float h = bench_rng_range(&rng, 0.5f, 1.0f);
            lo[k] = c - h;
            hi[k] = c + h;
        }
        kcc_broadphase_add(bp, lo, hi, 0, KCC_PROXY_STATIC);
    }
    for (uint32_t i = 0; i < s->count; ++i) {
        float lo[3], hi[3];
        char_box(s, i, lo, hi);
        moving_proxy[i] = kcc_broadphase_add(bp, lo, hi, i, 0);
    }
    for (uint32_t i = 0; i < s->mover_count; ++i) {
        float lo[3], hi[3];
        mover_box(s, i, lo, hi);
        moving_proxy[s->count + i] = kcc_broadphase_add(bp, lo, hi, s->count + i, 0);
    }
}

/* ---- the reference: plain moves of characters walking on a shared level ---- */

/* Characters on walkable floor of the mesh: a ray down from a random point (every other one from
 * above the level, the rest from a random height, for storeys under a roof), kept where the box
 * fits. Returns how many were placed (up to count). */
static uint32_t place_walkers(const kcc_mesh *m, const kcc_character_desc *d, kcc_character *chars,
                              uint32_t count)
{
    vec3 b[2];
    kcc_mesh_bounds(m, b);
    bench_rng rng = bench_rng_seed(5);
    uint32_t placed = 0;
    for (uint32_t attempt = 0; placed < count && attempt < 50u * count; ++attempt) {
        const float top = b[1][1] + 1.0f;
        vec3 at = {bench_rng_range(&rng, b[0][0], b[1][0]), attempt % 2 ? top : bench_rng_range(&rng, b[0][1], top),
                   bench_rng_range(&rng, b[0][2], b[1][2])};
        const vec3 down = {0.0f, -1.0f, 0.0f};
        kcc_ray_hit hit;
        if (!kcc_mesh_raycast(m, at, down, at[1] - b[0][1] + 1.0f, &hit) || hit.normal[1] < 0.8f)
            continue;
        at[1] = hit.point[1] + d->half_extents[1] + 0.02f;
        if (kcc_character_fits(d, m, at) == KCC_OK && kcc_character_init(&chars[placed], d, at) == KCC_OK)
            ++placed;
    }
    return placed;
}

/* ns of one kcc_character_move (median of RUNS runs) of REFERENCE_CHARACTERS characters the size of
 * the boxes walking as the scenes' do (3 m/s, turning every 1-3 s, falling at 25 m/s^2) on
 * REFERENCE_LEVEL; 0 when the level cannot be loaded. *out_count: how many were placed. */
static double move_reference_ns(const char *dir, uint32_t *out_count)
{
    bench_level lv;
    *out_count = 0;
    if (!bench_level_load(dir, REFERENCE_LEVEL, &lv))
        return 0.0;
    kcc_mesh *m = bench_build_mesh(&lv);
    kcc_character_desc d = kcc_character_default_desc();
    memcpy(d.half_extents, CHAR_HALF, sizeof CHAR_HALF);
    d.step_height = 0.5625f;
    kcc_character *chars = calloc(REFERENCE_CHARACTERS, sizeof *chars);
    float *vy = calloc(REFERENCE_CHARACTERS, sizeof *vy);
    const uint32_t n = m ? place_walkers(m, &d, chars, REFERENCE_CHARACTERS) : 0;
    scene walk;   /* the headings and turns of a scene's walk; its positions are unused */
    scene_make(&walk, n > 0 ? n : 1, SCENE_SPREAD, 0);
    double per_move[RUNS];
    for (int run = 0; run < RUNS && n > 0; ++run) {
        double total = 0.0;
        for (int step = 0; step < 2 * REFERENCE_STEPS; ++step) {
            scene_step(&walk);
            const double t0 = bench_now_ns();
            for (uint32_t i = 0; i < n; ++i) {
                vy[i] = chars[i].on_ground ? 0.0f : vy[i] - 25.0f / 60.0f;
                vec3 disp = {STEP_M * cosf(walk.heading[i]), vy[i] / 60.0f, STEP_M * sinf(walk.heading[i])};
                kcc_character_move(&chars[i], m, disp, NULL);
            }
            if (step >= REFERENCE_STEPS)
                total += bench_now_ns() - t0;
        }
        per_move[run] = total / REFERENCE_STEPS / n;
    }
    scene_free(&walk);
    free(chars);
    free(vy);
    kcc_mesh_destroy(m);
    bench_level_free(&lv);
    *out_count = n;
    return n > 0 ? bench_median(per_move, RUNS) : 0.0;
}

typedef struct result {
    double ns_per_box;      /* median over runs: move + update + reading the pairs */
    double update_share;    /* of which the update, median */
    double pairs;           /* per step, last run */
    double mib;             /* the broadphase's memory */
    uint64_t checksum;
} result;

static result run_case(float cell, uint32_t count, scene_kind which, uint32_t movers, int steps)
{
    result r = {0, 0, 0, 0, 0};
    scene s;
    scene_make(&s, count, which, movers);
    const uint32_t moving = count + s.mover_count;
    uint32_t proxies = moving + STATIC_PIECES + 1;
    kcc_broadphase_desc d = {proxies, 16 * proxies, cell};
    size_t bytes = kcc_broadphase_memory_bytes(&d);
    void *memory = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
    kcc_broadphase *bp = kcc_broadphase_init(memory, &d);
    uint32_t *moving_proxy = malloc(sizeof(uint32_t) * moving);
    populate(bp, &s, moving_proxy);
    kcc_broadphase_update(bp);   /* the first update builds from scratch: not timed */
    double per_box[RUNS], share[RUNS];
    for (int run = 0; run < RUNS; ++run) {
        double total = 0.0, update = 0.0, pairs = 0.0;
        for (int step = 0; step < steps; ++step) {
            scene_step(&s);   /* the walk itself is the game's, not timed */
            double t0 = bench_now_ns();
            for (uint32_t i = 0; i < count; ++i) {
                float lo[3], hi[3];
                char_box(&s, i, lo, hi);
                kcc_broadphase_move(bp, moving_proxy[i], lo, hi);
            }
            for (uint32_t i = 0; i < s.mover_count; ++i) {
                float lo[3], hi[3];
                mover_box(&s, i, lo, hi);
                kcc_broadphase_move(bp, moving_proxy[count + i], lo, hi);
            }
            double t1 = bench_now_ns();
            kcc_broadphase_update(bp);
            const kcc_proxy_pair *list;
            bool overflow;
            uint32_t n = kcc_broadphase_pairs(bp, &list, &overflow);
            for (uint32_t i = 0; i < n; ++i)
                r.checksum += (uint64_t)list[i].a * 31u + list[i].b;
            double t2 = bench_now_ns();
            total += t2 - t0;
            update += t2 - t1;
            pairs += n;
            if (overflow)
                printf("  (pair overflow)\n");
        }
        per_box[run] = total / steps / moving;
        share[run] = update / total;
        r.pairs = pairs / steps;
    }
    r.ns_per_box = bench_median(per_box, RUNS);
    r.update_share = bench_median(share, RUNS);
    r.mib = (double)bytes / (1024.0 * 1024.0);
    free(moving_proxy);
    free(memory);
    scene_free(&s);
    return r;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "../shared/levels";
    const char *max_env = getenv("KCC_BENCH_BP_MAX");
    uint32_t max_count = max_env ? (uint32_t)strtoul(max_env, NULL, 10) : 100000u;
    const char *min_env = getenv("KCC_BENCH_BP_MIN");
    uint32_t min_count = min_env ? (uint32_t)strtoul(min_env, NULL, 10) : 0u;
    const char *only = getenv("KCC_BENCH_BP_ONLY"), *scene_only = getenv("KCC_BENCH_BP_SCENE");
    const char *movers_env = getenv("KCC_BENCH_BP_MOVERS");
    const uint32_t movers_per_1000 = movers_env ? (uint32_t)strtoul(movers_env, NULL, 10) : 10u;
    static const struct { float cell; const char *name; } cells[] = {
        {2.0f, "grid 2 m"},
        {4.0f, "grid 4 m"},
        {8.0f, "grid 8 m"},
    };
    static const uint32_t counts[] = {1000, 10000, 100000};
    bench_warmup(200.0);
    bench_print_load("before");
    uint32_t walkers;
    const double move_ns = move_reference_ns(dir, &walkers);
    if (move_ns > 0.0)
        printf("reference: kcc_character_move of %u characters walking on %s: %.1f ns a move (median of %d "
               "runs); / move: a cell size's ns a box over it (the target: under 0.1 at 10k)\n",
               (unsigned)walkers, REFERENCE_LEVEL, move_ns, RUNS);
    else
        printf("reference: %s/%s.obj not loaded: no / move column\n", dir, REFERENCE_LEVEL);
    printf("broadphase: ns per box per step (move every box + update + read the pairs), median of %d runs;\n"
           "characters 0.94 x 1.75 x 0.94 m walking 0.05 m a step, among 1 huge STATIC proxy and %d static "
           "pieces;\nmixed and deep: plus %u movers per 1000 chars, 4-40 m (mixed) or 3.4-3.7 m (deep) long, shuttling "
           "0.05-0.2 m a step. clock: %s\n", RUNS, STATIC_PIECES, (unsigned)movers_per_1000, bench_clock_name());
    printf("%-7s %-7s %-9s %10s %7s %8s %12s %9s\n", "scene", "chars", "cell", "ns/box", "/ move", "update",
           "pairs/step", "MiB");
    for (scene_kind sk = SCENE_SPREAD; sk < SCENE_KINDS; ++sk)
        for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c) {
            uint64_t checksum_first = 0;
            if (counts[c] > max_count || counts[c] < min_count ||
                (scene_only && strcmp(scene_only, SCENE_NAMES[sk]) != 0))
                continue;
            int steps = counts[c] >= 100000 ? 20 : counts[c] >= 10000 ? 60 : 300;
            for (size_t k = 0; k < sizeof cells / sizeof cells[0]; ++k) {
                if (only && !strstr(cells[k].name, only))
                    continue;
                const uint32_t movers = (uint32_t)((uint64_t)counts[c] * movers_per_1000 / 1000u);
                result r = run_case(cells[k].cell, counts[c], sk, movers, steps);
                if (checksum_first == 0)
                    checksum_first = r.checksum;
                else if (r.checksum != checksum_first)
                    printf("  MISMATCH: %s's pairs differ from the first cell size's\n", cells[k].name);
                printf("%-7s %-7u %-9s %10.1f %7.3f %7.0f%% %12.0f %9.1f\n", SCENE_NAMES[sk],
                       (unsigned)counts[c], cells[k].name, r.ns_per_box, move_ns > 0.0 ? r.ns_per_box / move_ns : 0.0,
                       100.0 * r.update_share, r.pairs, r.mib);
                fflush(stdout);
            }
        }
    bench_print_load("after");
    return 0;
}
