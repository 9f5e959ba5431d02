/* bench_kdop.c: measures k-DOP bounds (14, 18 and 26 directions) against the AABB (issue 24), on the
 * real tree of each level and on a character-style cache of triangles: (a) in the tree nodes, the
 * node children entered and the triangles reaching the exact test per box query and per move's
 * gather region, and the time; (b) as a cull on the cached triangles of a move's sweep, after the
 * AABB select and the plane test the move already runs, the triangles left and the time per move.
 * Every bound is rounded outward, so each cull drops only triangles the exact test rejects (the
 * benchmark checks that the exact answers are unchanged). Usage: bench_kdop [levels_dir]
 * (levels.txt's list, else the shared levels, plus the generated arena and terrain); env
 * KCC_BENCH_QUERIES (default 4000), KCC_BENCH_ONLY. */
#include "bench.h"
#include "collide_internal.h" /* the mesh's tree: its groups decoded to kcc_node4, leaf-order triangles */

#define AXES 13
/* The 13 directions: the AABB's 3, the cube's 4 diagonals (14-DOP), its 6 edge directions (18-DOP
 * with the AABB's); all 13 make the 26-DOP. Unnormalised: a bound and a test use the same vector. */
static const double AXIS[AXES][3] = {
    {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}, {1, 1, -1}, {1, -1, 1}, {-1, 1, 1},
    {1, 1, 0}, {1, -1, 0}, {1, 0, 1}, {1, 0, -1}, {0, 1, 1}, {0, 1, -1},
};
enum { KIND_AABB, KIND_14, KIND_18, KIND_26, KINDS };
static const char *const KIND_NAME[KINDS] = {"aabb", "14-dop", "18-dop", "26-dop"};
/* The extra axes (beyond the AABB's) each kind tests. */
static const int EXTRA_FIRST[KINDS] = {3, 3, 7, 3}, EXTRA_END[KINDS] = {3, 7, 13, 13};

typedef struct dop {
    float lo[AXES], hi[AXES];
} dop;

static void dop_empty(dop *d)
{
    for (int a = 0; a < AXES; ++a)
        d->lo[a] = INFINITY, d->hi[a] = -INFINITY;
}

static void dop_union(dop *d, const dop *e)
{
    for (int a = 0; a < AXES; ++a)
        d->lo[a] = fminf(d->lo[a], e->lo[a]), d->hi[a] = fmaxf(d->hi[a], e->hi[a]);
}

/* Widens [lo, hi] (double) to floats containing it, with a relative hair for the rounding of the
 * projections themselves (products and sums of floats in double: far below 1e-9). */
static void dop_set(dop *d, int a, double lo, double hi)
{
    const double hair = 1e-9 * (fabs(lo) + fabs(hi)) + 1e-30;
    d->lo[a] = nextafterf((float)(lo - hair), -INFINITY);
    d->hi[a] = nextafterf((float)(hi + hair), INFINITY);
}

static void dop_of_tri(const kcc_tri *t, dop *d)
{
    for (int a = 0; a < AXES; ++a) {
        double lo = INFINITY, hi = -INFINITY;
        for (int c = 0; c < 3; ++c) {
            const double p = AXIS[a][0] * t->v[c][0] + AXIS[a][1] * t->v[c][1] + AXIS[a][2] * t->v[c][2];
            lo = fmin(lo, p), hi = fmax(hi, p);
        }
        dop_set(d, a, lo, hi);
    }
}

/* The DOP of box [lo, hi] swept by delta (zero: the box): the hull of the two boxes, whose support
 * along any direction is the larger of theirs. */
static void dop_of_swept_box(const float lo[3], const float hi[3], const float delta[3], dop *d)
{
    for (int a = 0; a < AXES; ++a) {
        double c = 0.0, r = 0.0, s = 0.0;
        for (int k = 0; k < 3; ++k) {
            c += AXIS[a][k] * 0.5 * ((double)lo[k] + hi[k]);
            r += fabs(AXIS[a][k]) * 0.5 * ((double)hi[k] - lo[k]);
            s += AXIS[a][k] * delta[k];
        }
        dop_set(d, a, c - r + fmin(s, 0.0), c + r + fmax(s, 0.0));
    }
}

static int dop_overlap(const dop *a, const dop *b, int first, int end)
{
    for (int i = first; i < end; ++i)
        if (a->lo[i] > b->hi[i] || a->hi[i] < b->lo[i])
            return 0;
    return 1;
}

/* ---------------------------------------------------------------- DOPs of the tree's children */

typedef struct tree_dops {
    const kcc_mesh *mesh;
    dop            *child;   /* 4 per group */
    dop            *tri;     /* per leaf-order slot */
} tree_dops;

static void fill_group(tree_dops *td, uint32_t g, dop *out)
{
    kcc_node4 decoded;
    const kcc_node4 *q = kcc_mesh_group(td->mesh, g, &decoded);
    dop_empty(out);
    for (int i = 0; i < 4; ++i) {
        dop *d = &td->child[4 * g + i];
        dop_empty(d);
        if (q->x[0][i] > q->x[1][i])
            continue; /* an empty slot */
        if (q->count[i] == 0)
            fill_group(td, q->first[i], d);
        else
            for (uint32_t s = q->first[i]; s < q->first[i] + q->count[i]; ++s)
                dop_union(d, &td->tri[s]);
        dop_union(out, d);
    }
}

static void tree_dops_build(tree_dops *td, const kcc_mesh *mesh)
{
    td->mesh = mesh;
    td->child = malloc(sizeof(dop) * 4 * mesh->quad_count);
    td->tri = malloc(sizeof(dop) * mesh->tree_triangles);
    for (uint32_t s = 0; s < mesh->tree_triangles; ++s) {
        kcc_tri t;
        kcc_mesh_tri(mesh, s, &t);
        dop_of_tri(&t, &td->tri[s]);
    }
    dop root;
    fill_group(td, 0, &root);
}

/* ---------------------------------------------------------------- (a) box walks */

typedef struct walk_count {
    double entered;      /* node children entered */
    double candidates;   /* triangles reaching the exact test */
    double hits;         /* triangles the exact test accepts */
} walk_count;

/* The box walk of kcc_mesh_overlap_aabb with a child entered when its AABB and (kind's extra axes)
 * its DOP overlap the box's; every candidate tested exactly (kcc_tri_overlap_aabb). */
static void box_walk(const tree_dops *td, const float lo[3], const float hi[3], int kind, walk_count *wc)
{
    const kcc_mesh *m = td->mesh;
    dop qd;
    const float zero[3] = {0, 0, 0};
    dop_of_swept_box(lo, hi, zero, &qd);
    const vec3 box[2] = {{lo[0], lo[1], lo[2]}, {hi[0], hi[1], hi[2]}};
    uint32_t stack[64], sp = 0;
    stack[sp++] = 0;
    while (sp > 0) {
        const uint32_t g = stack[--sp];
        kcc_node4 decoded;
        const kcc_node4 *q = kcc_mesh_group(m, g, &decoded);
        for (int i = 0; i < 4; ++i) {
            if (q->x[0][i] > hi[0] || q->x[1][i] < lo[0] || q->y[0][i] > hi[1] || q->y[1][i] < lo[1] ||
                q->z[0][i] > hi[2] || q->z[1][i] < lo[2])
                continue;
            if (!dop_overlap(&td->child[4 * g + i], &qd, EXTRA_FIRST[kind], EXTRA_END[kind]))
                continue;
            wc->entered += 1;
            if (q->count[i] == 0) {
                stack[sp++] = q->first[i];
                continue;
            }
            for (uint32_t s = q->first[i]; s < q->first[i] + q->count[i]; ++s) {
                kcc_tri t;
                kcc_mesh_tri(m, s, &t);
                wc->candidates += 1;
                wc->hits += kcc_tri_overlap_aabb(t.v[0], t.v[1], t.v[2], box);
            }
        }
    }
}

/* ---------------------------------------------------------------- (b) the cached triangles' cull */

typedef struct cache {
    uint32_t n;
    uint32_t slot[4096];
} cache;

/* The triangles whose AABB overlaps region: what a character's cache holds (up to 4096 here). */
static void cache_fill(const tree_dops *td, const float lo[3], const float hi[3], cache *c)
{
    const kcc_mesh *m = td->mesh;
    c->n = 0;
    for (uint32_t s = 0; s < m->tree_triangles && c->n < 4096; ++s) {
        const dop *d = &td->tri[s];
        if (d->lo[0] <= hi[0] && d->hi[0] >= lo[0] && d->lo[1] <= hi[1] && d->hi[1] >= lo[1] &&
            d->lo[2] <= hi[2] && d->hi[2] >= lo[2])
            c->slot[c->n++] = s;
    }
}

/* local.c's plane test: the swept box lies wholly on one side of the triangle's plane. */
static int plane_may_touch(const kcc_tri *t, const float ctr[3], const float half[3], const float delta[3])
{
    double e0[3], e1[3], n[3];
    for (int k = 0; k < 3; ++k)
        e0[k] = (double)t->v[1][k] - t->v[0][k], e1[k] = (double)t->v[2][k] - t->v[0][k];
    n[0] = e0[1] * e1[2] - e0[2] * e1[1], n[1] = e0[2] * e1[0] - e0[0] * e1[2];
    n[2] = e0[0] * e1[1] - e0[1] * e1[0];
    double r = 0, s0 = 0, s1;
    for (int k = 0; k < 3; ++k)
        r += half[k] * fabs(n[k]), s0 += n[k] * ((double)ctr[k] - t->v[0][k]);
    s1 = s0 + n[0] * delta[0] + n[1] * delta[1] + n[2] * delta[2];
    const double margin = r * 1e-6 + 1e-12;
    return !(fmin(s0, s1) > r + margin || fmax(s0, s1) < -r - margin);
}

typedef struct cull_count {
    double selected;   /* AABB of the triangle against the swept box's */
    double planed;     /* then the plane test */
    double left;       /* then the kind's extra axes */
    double earliest;   /* sum of the earliest contact times (the answers must not change) */
} cull_count;

/* One move's sweep over the cache: AABB select, plane test, the kind's DOP cull, exact sweep. */
static void cache_sweep(const tree_dops *td, const cache *c, const float lo[3], const float hi[3],
                        const float delta[3], int kind, cull_count *cc)
{
    dop qd;
    dop_of_swept_box(lo, hi, delta, &qd);
    float ctr[3], half[3];
    for (int k = 0; k < 3; ++k)
        ctr[k] = 0.5f * (lo[k] + hi[k]), half[k] = 0.5f * (hi[k] - lo[k]);
    const vec3 box[2] = {{lo[0], lo[1], lo[2]}, {hi[0], hi[1], hi[2]}};
    float best = 2.0f;
    for (uint32_t j = 0; j < c->n; ++j) {
        const uint32_t s = c->slot[j];
        if (!dop_overlap(&td->tri[s], &qd, 0, 3))
            continue;
        cc->selected += 1;
        kcc_tri corners;
        kcc_mesh_tri(td->mesh, s, &corners);
        const kcc_tri *t = &corners;
        if (!plane_may_touch(t, ctr, half, delta))
            continue;
        cc->planed += 1;
        if (!dop_overlap(&td->tri[s], &qd, EXTRA_FIRST[kind], EXTRA_END[kind]))
            continue;
        cc->left += 1;
        float th;
        vec3 n;
        bool start;
        if (kcc_tri_sweep_aabb(t->v[0], t->v[1], t->v[2], box, delta, &th, n, &start) && th < best)
            best = th;
    }
    cc->earliest += best;
}

/* ---------------------------------------------------------------- the queries and the run */

static int N_QUERIES = 4000;
static const float HALF[3] = {0.47f, 0.875f, 0.47f}; /* the shared levels' player */

typedef struct query {
    float lo[3], hi[3];        /* the player box resting on a floor */
    float delta[3];            /* a move: up to 0.3 m across, 0.05 m down */
    float glo[3], ghi[3];      /* the move's gather region: the swept box grown as a move grows it */
} query;

static int make_queries(const kcc_mesh *m, query *out, int n)
{
    vec3 b[2];
    kcc_mesh_bounds(m, b);
    bench_rng r = bench_rng_seed(24);
    const float down[3] = {0, -1, 0};
    int made = 0;
    for (int attempt = 0; attempt < 200 * n && made < n; ++attempt) {
        float p[3] = {bench_rng_range(&r, b[0][0], b[1][0]), bench_rng_range(&r, b[0][1], b[1][1]),
                      bench_rng_range(&r, b[0][2], b[1][2])};
        kcc_ray_hit h;
        if (!kcc_mesh_raycast(m, p, down, p[1] - b[0][1] + 1.0f, &h) || h.normal[1] < 0.7f)
            continue;
        query *q = &out[made++];
        const float len = bench_rng_range(&r, 0.05f, 0.3f), a = bench_rng_range(&r, 0.0f, 6.2831853f);
        q->delta[0] = len * cosf(a), q->delta[1] = -0.05f, q->delta[2] = len * sinf(a);
        for (int k = 0; k < 3; ++k) {
            const float c = k == 1 ? h.point[1] + HALF[1] + 0.01f : h.point[k];
            q->lo[k] = c - HALF[k], q->hi[k] = c + HALF[k];
            /* controller.c: the region grown by the cache margin (0.1 m), the move's length and six
             * times its lead along the motion */
            const float grow = 0.1f + len + 6.0f * fabsf(q->delta[k]);
            q->glo[k] = fminf(q->lo[k], q->lo[k] + q->delta[k]) - grow;
            q->ghi[k] = fmaxf(q->hi[k], q->hi[k] + q->delta[k]) + grow;
        }
    }
    return made;
}

typedef struct figures {
    walk_count box[KINDS], gather[KINDS];
    double box_ns[KINDS], gather_ns[KINDS];
    cull_count cull[KINDS];
    double cull_ns[KINDS];
    double cached;
} figures;

static double time_box_walks(const tree_dops *td, const query *q, int n, int kind, int gather, walk_count *wc)
{
    double best = INFINITY;
    for (int run = 0; run < 5; ++run) {
        walk_count w = {0, 0, 0};
        const double t0 = bench_now_ns();
        for (int i = 0; i < n; ++i)
            box_walk(td, gather ? q[i].glo : q[i].lo, gather ? q[i].ghi : q[i].hi, kind, &w);
        best = fmin(best, (bench_now_ns() - t0) / n);
        *wc = w;
    }
    return best;
}

static double time_culls(const tree_dops *td, const query *q, const cache *caches, int n, int kind, cull_count *cc)
{
    double best = INFINITY;
    for (int run = 0; run < 5; ++run) {
        cull_count c = {0, 0, 0, 0};
        const double t0 = bench_now_ns();
        for (int i = 0; i < n; ++i)
            cache_sweep(td, &caches[i], q[i].lo, q[i].hi, q[i].delta, kind, &c);
        best = fmin(best, (bench_now_ns() - t0) / n);
        *cc = c;
    }
    return best;
}

static int run_level(const bench_level *bl, figures *f)
{
    kcc_mesh *m = bench_build_mesh(bl);
    if (!m)
        return 0;
    tree_dops td;
    tree_dops_build(&td, m);
    query *q = malloc(sizeof(query) * (size_t)N_QUERIES);
    const int n = make_queries(m, q, N_QUERIES);
    cache *caches = malloc(sizeof(cache) * (size_t)(n > 0 ? n : 1));
    memset(f, 0, sizeof *f);
    for (int i = 0; i < n; ++i) {
        cache_fill(&td, q[i].glo, q[i].ghi, &caches[i]);
        f->cached += caches[i].n;
    }
    for (int kind = 0; n > 0 && kind < KINDS; ++kind) {
        f->box_ns[kind] = time_box_walks(&td, q, n, kind, 0, &f->box[kind]);
        f->gather_ns[kind] = time_box_walks(&td, q, n, kind, 1, &f->gather[kind]);
        f->cull_ns[kind] = time_culls(&td, q, caches, n, kind, &f->cull[kind]);
        if (f->box[kind].hits != f->box[0].hits || f->gather[kind].hits != f->gather[0].hits ||
            f->cull[kind].earliest != f->cull[0].earliest) {
            printf("%s: the %s answers differ from the AABB's: a cull dropped a touching triangle\n", bl->name,
                   KIND_NAME[kind]);
            exit(1);
        }
    }
    const double d = n > 0 ? n : 1;
    printf("%s: %u triangles, %d queries, %.1f cached a move\n", bl->name, kcc_mesh_triangle_count(m), n,
           f->cached / d);
    for (int k = 0; k < KINDS; ++k)
        printf("  %-6s box: %6.1f entered %6.1f tested %7.0f ns | gather: %6.1f entered %6.1f tested %7.0f ns"
               " | cache: %5.1f selected %5.1f planed %5.1f left %6.0f ns\n",
               KIND_NAME[k], f->box[k].entered / d, f->box[k].candidates / d, f->box_ns[k],
               f->gather[k].entered / d, f->gather[k].candidates / d, f->gather_ns[k], f->cull[k].selected / d,
               f->cull[k].planed / d, f->cull[k].left / d, f->cull_ns[k]);
    for (int k = 0; k < KINDS; ++k) { /* per query, for the totals */
        f->box[k].entered /= d, f->box[k].candidates /= d, f->gather[k].entered /= d;
        f->gather[k].candidates /= d, f->cull[k].planed /= d, f->cull[k].left /= d, f->cull[k].selected /= d;
    }
    fflush(stdout);
    free(caches);
    free(q);
    free(td.child);
    free(td.tri);
    kcc_mesh_destroy(m);
    return n > 0;
}

static void print_row(const char *name, const figures *f)
{
    printf("| %s |", name);
    for (int k = 0; k < KINDS; ++k)
        printf(" %.1f / %.0f |", f->box[k].candidates, f->box_ns[k]);
    for (int k = 0; k < KINDS; ++k)
        printf(" %.1f / %.0f |", f->gather[k].candidates, f->gather_ns[k]);
    printf(" %.1f, %.1f |", f->cull[0].selected, f->cull[0].planed);
    for (int k = 1; k < KINDS; ++k)
        printf(" %.1f / %.0f |", f->cull[k].left, f->cull_ns[k]);
    printf(" %.0f |\n", f->cull_ns[0]);
}

static void add_figures(figures *sum, const figures *f)
{
    for (int k = 0; k < KINDS; ++k) {
        sum->box[k].candidates += f->box[k].candidates, sum->box_ns[k] += f->box_ns[k];
        sum->gather[k].candidates += f->gather[k].candidates, sum->gather_ns[k] += f->gather_ns[k];
        sum->cull[k].selected += f->cull[k].selected, sum->cull[k].planed += f->cull[k].planed;
        sum->cull[k].left += f->cull[k].left, sum->cull_ns[k] += f->cull_ns[k];
    }
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "../shared/levels";
    const char *only = getenv("KCC_BENCH_ONLY");
    if (getenv("KCC_BENCH_QUERIES"))
        N_QUERIES = atoi(getenv("KCC_BENCH_QUERIES")) > 0 ? atoi(getenv("KCC_BENCH_QUERIES")) : 1;
    printf("clock %s\n", bench_clock_name());
    bench_print_load("at the start");
    printf("bench_kdop: per query (player box on a floor, its move's gather region, its move's sweep over\n"
           "the cache), triangles reaching the exact test / ns (best of 5 runs) with AABB nodes and with\n"
           "14-, 18- and 26-DOP nodes; the cache: triangles selected by AABB, after the plane test, then\n"
           "after each DOP's extra axes.\n");
    static char names[BENCH_MAX_LEVELS][64];
    int nlevels = bench_level_list(dir, names, BENCH_MAX_LEVELS);
    static figures all[BENCH_MAX_LEVELS + 2];
    static char row_name[BENCH_MAX_LEVELS + 2][64];
    int rows = 0;
    for (int i = 0; i < nlevels + 2; ++i) {
        bench_level bl;
        char name[64] = "";
        if (i < nlevels)
            snprintf(name, sizeof name, "%.63s", names[i]);
        const int ok = i < nlevels ? bench_level_load(dir, name, &bl)
                                   : bench_level_generate(i == nlevels ? "arena" : "terrain", &bl);
        if (!ok)
            continue;
        if ((!only || strstr(bl.name, only)) && run_level(&bl, &all[rows]))
            snprintf(row_name[rows++], 64, "%s", bl.name);
        bench_level_free(&bl);
    }
    printf("\nmarkdown (candidates / ns per query):\n\n| level | box aabb | box 14 | box 18 | box 26 | gather aabb |"
           " gather 14 | gather 18 | gather 26 | cache aabb, plane | cache 14 | cache 18 | cache 26 | cache aabb ns |\n"
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---:|\n");
    figures sum;
    memset(&sum, 0, sizeof sum);
    for (int r = 0; r < rows; ++r) {
        print_row(row_name[r], &all[r]);
        add_figures(&sum, &all[r]);
    }
    for (int k = 0; rows > 0 && k < KINDS; ++k) {
        sum.box[k].candidates /= rows, sum.box_ns[k] /= rows, sum.gather[k].candidates /= rows;
        sum.gather_ns[k] /= rows, sum.cull[k].selected /= rows, sum.cull[k].planed /= rows;
        sum.cull[k].left /= rows, sum.cull_ns[k] /= rows;
    }
    print_row("mean", &sum);
    bench_print_load("at the end");
    return 0;
}
