/* bench_sphere.cpp: the sphere-sweep benchmark (issue 24): single-thread ns/query of kcc_mesh_sweep_sphere
 * (radius 0.3 m, 2-10 m sweeps from random free points near the levels' spawn points) beside Bullet's
 * btCollisionWorld::convexSweepTest with a btSphereShape against a btBvhTriangleMeshShape, the same
 * queries, plus the hits cross-checked; kcc's swept capsule and sphere overlap timed for scale.
 * Usage: bench_sphere [levels_dir]; without the shared levels it runs on generated levels. */
#include <btBulletCollisionCommon.h>

#include <algorithm>
#include <vector>

#include "bench.h"

namespace {

const int RUNS = 7;          /* timed repetitions; every figure is the median over them */
const int SLICES = 8;        /* each run alternates the engines slice by slice (load hits both alike) */
int N_QUERIES = 20000;       /* env KCC_BENCH_QUERIES overrides */
const float RADIUS = 0.3f;   /* m */
const float AGREE_M = 0.01f; /* hit distances closer than this (m) agree */

struct Sweep { float c[3], d[3], len; };
struct Answer { bool hit; float t; };

/* Random free starts: a spawn point (or a point in the bounds) moved up to 6 m, where the sphere
 * overlaps nothing; random directions, 2-10 m long. */
std::vector<Sweep> make_sweeps(const kcc_level &L, const kcc_mesh *m, int n, uint64_t seed)
{
    bench_rng r = bench_rng_seed(seed);
    vec3 b[2];
    kcc_mesh_bounds(m, b);
    std::vector<Sweep> out;
    for (int tries = 0; (int)out.size() < n && tries < 50 * n; ++tries) {
        Sweep s;
        for (int k = 0; k < 3; ++k)
            s.c[k] = L.spawn_count ? L.spawns[3 * (bench_rng_u32(&r) % L.spawn_count) + k] + (k == 1 ? 0.9f : 0.0f)
                                   : bench_rng_range(&r, b[0][k], b[1][k]);
        for (int k = 0; k < 3; ++k)
            s.c[k] += bench_rng_range(&r, -6.0f, 6.0f) * (k == 1 ? 0.3f : 1.0f);
        if (kcc_mesh_overlap_sphere(m, s.c, RADIUS, nullptr, 0) != 0)
            continue;
        s.len = bench_rng_range(&r, 2.0f, 10.0f);
        bench_rng_dir(&r, s.d);
        for (int k = 0; k < 3; ++k) s.d[k] *= s.len;
        out.push_back(s);
    }
    return out;
}

/* Bullet: the level as a static object in a collision world, swept by a sphere shape. */
struct BulletScene {
    btTriangleIndexVertexArray array;
    btBvhTriangleMeshShape *mesh_shape;
    btDefaultCollisionConfiguration cfg;
    btCollisionDispatcher dispatcher{&cfg};
    btDbvtBroadphase broadphase;
    btCollisionWorld world{&dispatcher, &broadphase, &cfg};
    btCollisionObject level;
    btSphereShape sphere{RADIUS};
    explicit BulletScene(const kcc_level &L)
        /* Bullet only reads the arrays; its API takes them non-const */
        : array((int)L.triangle_count, (int *)L.indices, 3 * sizeof(int), (int)L.vertex_count,
                (btScalar *)L.positions, 3 * sizeof(float))
    {
        mesh_shape = new btBvhTriangleMeshShape(&array, true, true);
        level.setCollisionShape(mesh_shape);
        level.setCollisionFlags(btCollisionObject::CF_STATIC_OBJECT);
        world.addCollisionObject(&level);
        world.updateAabbs();
    }
    ~BulletScene() { world.removeCollisionObject(&level); delete mesh_shape; }
    Answer sweep(const Sweep &s)
    {
        btTransform from, to;
        from.setIdentity();
        to.setIdentity();
        from.setOrigin(btVector3(s.c[0], s.c[1], s.c[2]));
        to.setOrigin(btVector3(s.c[0] + s.d[0], s.c[1] + s.d[1], s.c[2] + s.d[2]));
        btCollisionWorld::ClosestConvexResultCallback cb(from.getOrigin(), to.getOrigin());
        world.convexSweepTest(&sphere, from, to, cb);
        return {cb.hasHit(), cb.hasHit() ? (float)cb.m_closestHitFraction : 1.0f};
    }
};

/* Times each engine's loop over the queries: RUNS runs, engines alternating slice by slice; returns
 * the median ns per query of each. */
template <class A, class B> void time_two(int n, A kcc_body, B peer_body, double out[2])
{
    std::vector<double> per[2] = {std::vector<double>(RUNS, 0.0), std::vector<double>(RUNS, 0.0)};
    for (int r = 0; r < RUNS; ++r)
        for (int c = 0; c < SLICES; ++c) {
            const int lo = n * c / SLICES, hi = n * (c + 1) / SLICES;
            double t0 = bench_now_ns();
            for (int i = lo; i < hi; ++i) kcc_body(i);
            double t1 = bench_now_ns();
            for (int i = lo; i < hi; ++i) peer_body(i);
            per[0][r] += t1 - t0;
            per[1][r] += bench_now_ns() - t1;
        }
    for (int e = 0; e < 2; ++e) {
        for (double &v : per[e]) v /= n;
        out[e] = bench_median(per[e].data(), RUNS);
    }
}

struct Result {
    char name[64];
    uint32_t triangles;
    int queries;
    double kcc_ns, bullet_ns, capsule_ns, overlap_ns;
    double hit_pct;
    int disagree, disagree_hit;
};

bool run_level(const bench_level &bl, Result *out)
{
    const kcc_level &L = bl.level;
    kcc_mesh *m = bench_build_mesh(&bl);
    if (!m) return false;
    BulletScene bs(L);
    std::vector<Sweep> q = make_sweeps(L, m, N_QUERIES, 24);
    const int n = (int)q.size();
    std::vector<Answer> ka(n), ba(n);
    std::vector<kcc_sphere_hit> kh(n);
    double ns[2], extra_ns[2];
    time_two(n, [&](int i) { ka[i].hit = kcc_mesh_sweep_sphere(m, q[i].c, RADIUS, q[i].d, &kh[i]); },
             [&](int i) { ba[i] = bs.sweep(q[i]); }, ns);
    /* kcc's capsule (0.3 m radius, 1.2 m segment upright) and overlap, for scale */
    volatile uint32_t sink = 0;
    time_two(n, [&](int i) {
                 const float top[3] = {q[i].c[0], q[i].c[1] + 1.2f, q[i].c[2]};
                 kcc_sphere_hit h;
                 sink = sink + kcc_mesh_sweep_capsule(m, q[i].c, top, RADIUS, q[i].d, &h);
             },
             [&](int i) { sink = sink + kcc_mesh_overlap_sphere(m, q[i].c, 2.0f, nullptr, 0); }, extra_ns);
    int hits = 0, disagree = 0, disagree_hit = 0, shown = 0;
    for (int i = 0; i < n; ++i) {
        ka[i].t = ka[i].hit ? kh[i].t : 1.0f;
        hits += ka[i].hit;
        const bool differ = ka[i].hit != ba[i].hit || (ka[i].hit && fabsf(ka[i].t - ba[i].t) * q[i].len > AGREE_M);
        disagree += differ;
        disagree_hit += ka[i].hit != ba[i].hit;
        if (!differ || shown++ >= 3)
            continue;
        /* referee: does a sphere 1 mm smaller overlap the level at the earlier of the two times? */
        const float t = std::min(ka[i].t, ba[i].t);
        const float at[3] = {q[i].c[0] + t * q[i].d[0], q[i].c[1] + t * q[i].d[1], q[i].c[2] + t * q[i].d[2]};
        printf("    sweep %d c=(%.7g %.7g %.7g) d=(%.7g %.7g %.7g): kcc %s t=%.6f | bullet %s t=%.6f | at t=%.6f a"
               " sphere 1 mm smaller overlaps %u triangles\n", i, q[i].c[0], q[i].c[1], q[i].c[2], q[i].d[0], q[i].d[1],
               q[i].d[2], ka[i].hit ? "hit" : "miss", ka[i].t, ba[i].hit ? "hit" : "miss", ba[i].t, t,
               kcc_mesh_overlap_sphere(m, at, RADIUS - 0.001f, nullptr, 0));
    }
    snprintf(out->name, sizeof out->name, "%s", bl.name);
    out->triangles = L.triangle_count;
    out->queries = n;
    out->kcc_ns = ns[0];
    out->bullet_ns = ns[1];
    out->capsule_ns = extra_ns[0];
    out->overlap_ns = extra_ns[1];
    out->hit_pct = n ? 100.0 * hits / n : 0.0;
    out->disagree = disagree;
    out->disagree_hit = disagree_hit;
    printf("  %-12s %7u tris %6d sweeps (%.0f%% hit): kcc %7.0f ns  bullet %7.0f ns  bullet/kcc %5.2f | "
           "disagree %d (hit/miss %d) | kcc capsule %6.0f ns, overlap r=2 m %6.0f ns\n",
           out->name, out->triangles, n, out->hit_pct, out->kcc_ns, out->bullet_ns, out->bullet_ns / out->kcc_ns,
           disagree, disagree_hit, out->capsule_ns, out->overlap_ns);
    kcc_mesh_destroy(m);
    return n > 0;
}

} // namespace

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "../shared/levels";
    const char *only = getenv("KCC_BENCH_ONLY");
    if (getenv("KCC_BENCH_QUERIES")) N_QUERIES = std::max(1, atoi(getenv("KCC_BENCH_QUERIES")));
    printf("clock %s\n", bench_clock_name());
    bench_print_load("at the start");
    bench_warmup(300.0);
    printf("bench_sphere: single-thread ns/query, median of %d runs of up to %d sweeps (sphere r = %.1f m,\n"
           "2-10 m from free points near the spawns); ratio = Bullet time / kcc time; hits agree within %.0f cm\n",
           RUNS, N_QUERIES, RADIUS, AGREE_M * 100.0f);
    static char names[BENCH_MAX_LEVELS][64];
    const int nlevels = bench_level_list(dir, names, BENCH_MAX_LEVELS);
    const bool shared = nlevels > 0;
    if (!shared) printf("no levels at %s: generated levels only\n", dir);
    std::vector<Result> results;
    double worst = 1e30;
    const char *worst_level = "";
    for (int i = 0; i < (shared ? nlevels : 2); ++i) {
        bench_level bl;
        if (!(shared ? bench_level_load(dir, names[i], &bl) : bench_level_generate(i ? "terrain" : "arena", &bl)))
            continue;
        Result r;
        if ((!only || strstr(bl.name, only)) && run_level(bl, &r)) {
            results.push_back(r);
            if (r.bullet_ns / r.kcc_ns < worst) { worst = r.bullet_ns / r.kcc_ns; worst_level = results.back().name; }
        }
        bench_level_free(&bl);
        fflush(stdout);
    }
    printf("\nsummary: sphere sweeps >= 3x faster than Bullet: worst %.2f (%s)  %s\n", worst, worst_level,
           results.empty() ? "n/a" : worst >= 3.0 ? "PASS" : "FAIL");
    printf("\nmarkdown:\n\n| level | triangles | sweeps | hit | kcc ns | bullet ns | bullet/kcc | disagree (hit/miss) |"
           " kcc capsule ns | kcc overlap ns |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (const Result &r : results)
        printf("| %s | %u | %d | %.0f%% | %.0f | %.0f | %.2f | %d (%d) | %.0f | %.0f |\n", r.name, r.triangles,
               r.queries, r.hit_pct, r.kcc_ns, r.bullet_ns, r.bullet_ns / r.kcc_ns, r.disagree, r.disagree_hit,
               r.capsule_ns, r.overlap_ns);
    bench_print_load("at the end");
    return 0;
}
