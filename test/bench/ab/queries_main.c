/* queries_main.c: the query A/B harness's driver (ab.sh -q): both builds answer the same rays, exact
 * box overlaps and box sweeps over one level (bench_layout's generators), first once each to compare
 * every answer, then in many short batches, each batch run by A and by B back to back in alternating
 * order, so the machine's slow and fast spells hit both alike. Prints per query kind each build's
 * median us per query, the median of the paired batches' B/A with its quartiles, and whether every
 * answer agrees.
 *   ab_queries LEVEL.obj [BATCH [ROUNDS]]   BATCH queries per batch (250), ROUNDS batches of each
 *                                            kind per build (2000), cycling through the query set */
#include "queries.h"

static const char *const KIND_NAME[AB_KINDS] = {"rays", "box overlaps", "box sweeps"};
/* bench_layout's counts: the queries each build answers once for the comparison */
static const int KIND_COUNT[AB_KINDS] = {20000, 20000, 10000};

typedef struct query_set {
    ab_ray *rays;
    ab_box *boxes;
    ab_sweep *sweeps;
} query_set;

/* A point inside the mesh's bounds, uniformly. */
static void point_in(bench_rng *r, const vec3 bounds[2], float out[3])
{
    for (int k = 0; k < 3; ++k)
        out[k] = bench_rng_range(r, bounds[0][k], bounds[1][k]);
}

/* bench_layout's workload, drawn in its order from its seed: rays from points in the bounds in
 * uniform directions; cubes of half size 0.25-1.5 m; the benchmark character's box (0.94 x 1.75 x
 * 0.94 m) swept 0.1-4 m. */
static bool make_queries(const vec3 bounds[2], query_set *s)
{
    s->rays = calloc((size_t)KIND_COUNT[AB_RAYS], sizeof *s->rays);
    s->boxes = calloc((size_t)KIND_COUNT[AB_BOXES], sizeof *s->boxes);
    s->sweeps = calloc((size_t)KIND_COUNT[AB_SWEEPS], sizeof *s->sweeps);
    if (!s->rays || !s->boxes || !s->sweeps)
        return false;
    bench_rng r = bench_rng_seed(0x1a70u);
    for (int i = 0; i < KIND_COUNT[AB_RAYS]; ++i) {
        point_in(&r, bounds, s->rays[i].org);
        bench_rng_dir(&r, s->rays[i].dir);
    }
    for (int i = 0; i < KIND_COUNT[AB_BOXES]; ++i) {
        float c[3], e = bench_rng_range(&r, 0.25f, 1.5f);
        point_in(&r, bounds, c);
        for (int k = 0; k < 3; ++k) {
            s->boxes[i].box[0][k] = c[k] - e;
            s->boxes[i].box[1][k] = c[k] + e;
        }
    }
    static const float half[3] = {0.47f, 0.875f, 0.47f};
    for (int i = 0; i < KIND_COUNT[AB_SWEEPS]; ++i) {
        float c[3], d[3];
        point_in(&r, bounds, c);
        bench_rng_dir(&r, d);
        const float len = bench_rng_range(&r, 0.1f, 4.0f);
        for (int k = 0; k < 3; ++k) {
            s->sweeps[i].box[0][k] = c[k] - half[k];
            s->sweeps[i].box[1][k] = c[k] + half[k];
            s->sweeps[i].delta[k] = d[k] * len;
        }
    }
    return true;
}

/* Queries first .. first + n - 1 of one kind on one side (answers as ab_side's). */
static int run_kind(const ab_side *side, int kind, const query_set *s, int first, int n,
                    uint64_t *answers)
{
    switch (kind) {
    case AB_RAYS: return side->rays(s->rays + first, n, answers);
    case AB_BOXES: return side->boxes(s->boxes + first, n, answers);
    default: return side->sweeps(s->sweeps + first, n, answers);
    }
}

/* Whether sweep q's two answers differ only as a tie: both hit at the same time, B's triangle the
 * lower input index (the tie rule: the lowest index wins). */
static bool sweep_tie_to_lower(const ab_sweep *q)
{
    kcc_sweep_hit a, b;
    return ab_side_a.sweep_one(q, &a) && ab_side_b.sweep_one(q, &b) && a.t == b.t &&
           b.triangle < a.triangle;
}

/* Every query of every kind once on each side: how many answers differ per kind, and of the
 * sweeps' how many are ties B gives to the lower index (sweep_tie_to_lower). */
static bool compare_answers(const query_set *s, int differ[AB_KINDS], int *sweep_ties)
{
    uint64_t *a = malloc(sizeof(uint64_t) * (size_t)KIND_COUNT[AB_RAYS]);
    uint64_t *b = malloc(sizeof(uint64_t) * (size_t)KIND_COUNT[AB_RAYS]);
    if (!a || !b) {
        free(a);
        free(b);
        return false;
    }
    *sweep_ties = 0;
    for (int kind = 0; kind < AB_KINDS; ++kind) {
        run_kind(&ab_side_a, kind, s, 0, KIND_COUNT[kind], a);
        run_kind(&ab_side_b, kind, s, 0, KIND_COUNT[kind], b);
        differ[kind] = 0;
        for (int i = 0; i < KIND_COUNT[kind]; ++i)
            if (a[i] != b[i]) {
                ++differ[kind];
                *sweep_ties += kind == AB_SWEEPS && sweep_tie_to_lower(&s->sweeps[i]);
            }
    }
    free(a);
    free(b);
    return true;
}

/* One batch of a kind on both sides, A first when a_first; its seconds on each in t[0], t[1]. */
static void time_batch(const query_set *s, int kind, int first, int n, bool a_first, double t[2])
{
    for (int j = 0; j < 2; ++j) {
        const bool a = (j == 0) == a_first;
        const double t0 = bench_now_ns();
        run_kind(a ? &ab_side_a : &ab_side_b, kind, s, first, n, NULL);
        t[a ? 0 : 1] = bench_now_ns() - t0;
    }
}

/* One kind's report line from its per-round times (ns per batch of `batch` queries); sorts them. */
static void report_kind(int kind, double *ta, double *tb, double *ratio, int rounds, int batch, int differ,
                        int ties)
{
    const double a = bench_median(ta, (size_t)rounds) * 1e-3 / batch;
    const double b = bench_median(tb, (size_t)rounds) * 1e-3 / batch;
    const double q1 = bench_quantile(ratio, (size_t)rounds, 0.25), q3 = bench_quantile(ratio, (size_t)rounds, 0.75);
    printf("  %-13s A %7.3f us  B %7.3f us  B/A %.3f (quartiles %.3f-%.3f)  ", KIND_NAME[kind], a, b,
           bench_median(ratio, (size_t)rounds), q1, q3);
    if (differ == 0)
        printf("same answers (%d)\n", KIND_COUNT[kind]);
    else if (differ == ties)
        printf("%d of %d differ, each a tie at the same t that B gives to the lower index\n", differ,
               KIND_COUNT[kind]);
    else
        printf("ANSWERS DIFFER: %d of %d (%d of them ties B gives to the lower index)\n", differ,
               KIND_COUNT[kind], ties);
}

/* The paired batches: round r runs batch r (cycling through the set) of every kind on both sides,
 * the order alternating between rounds and between kinds; then each kind's report. */
static bool time_and_report(const query_set *s, int batch, int rounds, const int differ[AB_KINDS],
                            int sweep_ties)
{
    double *t = malloc(sizeof(double) * 3 * (size_t)rounds * AB_KINDS);
    if (!t)
        return false;
    double *ta = t, *tb = t + (size_t)rounds * AB_KINDS, *ratio = t + 2 * (size_t)rounds * AB_KINDS;
    bench_warmup(200.0);
    for (int r = 0; r < rounds; ++r)
        for (int kind = 0; kind < AB_KINDS; ++kind) {
            const int batches = KIND_COUNT[kind] / batch;
            double pair[2];
            time_batch(s, kind, (r % batches) * batch, batch, ((r + kind) & 1) == 0, pair);
            const size_t at = (size_t)kind * rounds + r;
            ta[at] = pair[0];
            tb[at] = pair[1];
            ratio[at] = pair[1] / pair[0];
        }
    for (int kind = 0; kind < AB_KINDS; ++kind) {
        const size_t at = (size_t)kind * rounds;
        report_kind(kind, ta + at, tb + at, ratio + at, rounds, batch, differ[kind],
                    kind == AB_SWEEPS ? sweep_ties : 0);
    }
    free(t);
    return true;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: ab_queries LEVEL.obj [BATCH [ROUNDS]]\n");
        return 2;
    }
    const int batch = argc > 2 ? atoi(argv[2]) : 250, rounds = argc > 3 ? atoi(argv[3]) : 2000;
    if (batch < 1 || batch > KIND_COUNT[AB_SWEEPS] || rounds < 1) {
        fprintf(stderr, "ab_queries: BATCH must be 1..%d, ROUNDS positive\n", KIND_COUNT[AB_SWEEPS]);
        return 2;
    }
    kcc_level lv;
    char err[256];
    if (kcc_level_load_obj_geometry(argv[1], &lv, err, sizeof err) != KCC_OK) {
        fprintf(stderr, "ab_queries: %s\n", err);
        return 2;
    }
    ab_side_a.init(&lv);
    ab_side_b.init(&lv);
    vec3 bounds[2], bounds_b[2];
    ab_side_a.bounds(bounds);
    ab_side_b.bounds(bounds_b);
    query_set s;
    int differ[AB_KINDS], sweep_ties;
    if (!make_queries((const vec3 *)bounds, &s) || !compare_answers(&s, differ, &sweep_ties)) {
        fprintf(stderr, "ab_queries: out of memory\n");
        return 1;
    }
    const char *name = strrchr(argv[1], '/');
    printf("%s (%u triangles)%s\n", name ? name + 1 : argv[1], lv.triangle_count,
           memcmp(bounds, bounds_b, sizeof bounds) ? "  THE BUILDS' BOUNDS DIFFER" : "");
    const bool ok = time_and_report(&s, batch, rounds, differ, sweep_ties);
    ab_side_a.release();
    ab_side_b.release();
    free(s.rays);
    free(s.boxes);
    free(s.sweeps);
    kcc_level_free(&lv);
    return ok ? 0 : 1;
}
