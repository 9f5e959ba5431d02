/* bench_world.cpp: the world-query benchmark (issue 22): each level split into 27 pieces moved into
 * their own frames and placed back by random rigid transforms; ns per random 20 m ray for
 * kcc_mesh_raycast on the single mesh, kcc_world_raycast over the pieces, Bullet's
 * btCollisionWorld::rayTest (one btCollisionObject per piece) and Embree 3's two-level scene (27
 * instances), plus box overlap and box sweep (world against single mesh), the same queries on worlds
 * whose pieces are only translated or not moved at all, sphere sweeps (kcc_world_sweep_sphere beside
 * Bullet's btCollisionWorld::convexSweepTest with a btSphereShape over the same pieces), and the
 * engines' answers cross-checked.
 * Usage: bench_world [levels_dir]; env KCC_BENCH_QUERIES (default 20000), KCC_BENCH_ONLY (levels whose
 * name contains it), KCC_BENCH_RAYS_ONLY (set: the ray table alone). */
#include <embree3/rtcore.h>
#include <btBulletCollisionCommon.h>

#include <algorithm>
#include <array>
#include <functional>
#include <vector>

#include "bench.h"

namespace {

const int RUNS = 7;        /* timed repetitions; every figure sums each slice's fastest */
const int SLICES = 200;    /* each run is split into slices, the engines taking turns slice by slice */
int N_QUERIES = 20000;
const float BOX_HALF[3] = {0.47f, 0.875f, 0.47f}; /* the shared levels' player (README) */
const float SPHERE_RADIUS = 0.3f;                  /* m: bench_sphere's */
const float SPHERE_TRAVEL = 6.0f;                  /* m: a sweep's length, along the ray's direction */

struct Ray { float o[3], d[3], tmax; };
struct Answer { bool hit; float t; uint32_t count; };

/* ---------------------------------------------------------------- the split */

/* How the pieces are placed: a random rotation and translation, a translation only, or left where
 * they are (the identity: the world's fast path). */
enum Placement { PLACE_ROTATED, PLACE_TRANSLATED, PLACE_IDENTITY, PLACE_COUNT };
const char *const PLACEMENT_NAMES[PLACE_COUNT] = {"rotated", "translated", "identity"};

struct Piece {
    std::vector<float> local;  /* 9 floats a triangle, in the piece's frame */
    kcc_transform t;
    kcc_mesh *mesh = nullptr;
};

struct SplitLevel {
    std::vector<Piece> pieces;
    kcc_world *world = nullptr;
    uint32_t auto_tables = 0; /* pieces KCC_VERTEX_AUTO would code with vertex tables */
};

void random_rotation(bench_rng *r, float q[4])
{
    double v[4], len;
    do {
        len = 0.0;
        for (double &x : v) { x = bench_rng_range(r, -1.0f, 1.0f); len += x * x; }
    } while (len < 0.1 || len > 1.0);
    for (int k = 0; k < 4; ++k) q[k] = (float)(v[k] / sqrt(len));
}

/* The level's triangles split by centroid into the 3 x 3 x 3 cells of its bounds, each cell's
 * corners moved into the frame of its placement (in double, rounded to float). */
void split_level(const kcc_level &L, Placement place, uint64_t seed, SplitLevel *out)
{
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (uint32_t v = 0; v < L.vertex_count; ++v)
        for (int k = 0; k < 3; ++k) {
            lo[k] = std::min(lo[k], L.positions[3 * v + k]);
            hi[k] = std::max(hi[k], L.positions[3 * v + k]);
        }
    bench_rng r = bench_rng_seed(seed);
    out->pieces.assign(27, Piece());
    for (Piece &p : out->pieces) {
        p.t = kcc_transform_identity();
        if (place == PLACE_IDENTITY) continue;
        for (int k = 0; k < 3; ++k) p.t.position[k] = bench_rng_range(&r, lo[k], hi[k]);
        if (place == PLACE_ROTATED) random_rotation(&r, p.t.rotation);
    }
    for (uint32_t t = 0; t < L.triangle_count; ++t) {
        const float *c[3];
        int cell = 0;
        for (int i = 0; i < 3; ++i) c[i] = L.positions + 3 * L.indices[3 * t + i];
        for (int k = 2; k >= 0; --k) {
            double m = ((double)c[0][k] + c[1][k] + c[2][k]) / 3.0;
            int i = (int)(3.0 * (m - lo[k]) / ((double)hi[k] - lo[k] + 1e-9));
            cell = cell * 3 + std::min(2, std::max(0, i));
        }
        Piece &p = out->pieces[cell];
        const float *q = p.t.rotation;
        const double x = q[0], y = q[1], z = q[2], w = q[3];
        const double m[3][3] = {{1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)},
                                {2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)},
                                {2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)}};
        for (int i = 0; i < 3; ++i)
            for (int k = 0; k < 3; ++k) {
                double s = 0.0;
                for (int j = 0; j < 3; ++j) s += m[j][k] * ((double)c[i][j] - p.t.position[j]);
                p.local.push_back(place == PLACE_IDENTITY ? c[i][k] : (float)s);
            }
    }
    out->pieces.erase(std::remove_if(out->pieces.begin(), out->pieces.end(),
                                     [](const Piece &p) { return p.local.empty(); }),
                      out->pieces.end());
    kcc_world_create(nullptr, &out->world);
    for (Piece &p : out->pieces) {
        /* Float vertices, as the single mesh's on the shared levels (all within the memory budget),
         * so the ratio measures the world, not the coding. A piece is a small mesh, which the
         * automatic coding puts on vertex tables when it passes 20 bytes a triangle (rays 7-18%
         * slower: docs/collide.md); how many would is printed beside the pieces. */
        kcc_mesh_desc d = {};
        d.positions = p.local.data();
        d.vertex_count = (uint32_t)(p.local.size() / 3);
        d.triangle_count = d.vertex_count / 3;
        kcc_mesh *automatic = nullptr;
        kcc_mesh_stats st = {};
        if (kcc_mesh_build(&d, &automatic) == KCC_OK) kcc_mesh_get_stats(automatic, &st);
        out->auto_tables += automatic && st.vertex_coding == KCC_VERTEX_TABLES;
        kcc_mesh_destroy(automatic);
        d.vertex_coding = KCC_VERTEX_FLOATS;
        if (kcc_mesh_build(&d, &p.mesh) != KCC_OK) { p.mesh = nullptr; continue; }
        kcc_body_desc bd = kcc_body_default_desc();
        bd.transform = p.t;
        uint32_t id;
        kcc_world_add_body(out->world, p.mesh, &bd, &id);
    }
    kcc_world_step(out->world); /* builds the body tree */
}

void split_free(SplitLevel *s)
{
    kcc_world_destroy(s->world);
    for (Piece &p : s->pieces) kcc_mesh_destroy(p.mesh);
}

/* ---------------------------------------------------------------- Bullet: one object per piece */

struct BulletWorld {
    btDefaultCollisionConfiguration cfg;
    btCollisionDispatcher dispatcher{&cfg};
    btDbvtBroadphase broadphase;
    btCollisionWorld world{&dispatcher, &broadphase, &cfg};
    std::vector<btTriangleMesh *> meshes;
    std::vector<btBvhTriangleMeshShape *> shapes;
    std::vector<btCollisionObject *> objects;

    explicit BulletWorld(const SplitLevel &s)
    {
        for (const Piece &p : s.pieces) {
            if (!p.mesh) continue;
            btTriangleMesh *m = new btTriangleMesh(false, false);
            for (size_t i = 0; i + 9 <= p.local.size(); i += 9) {
                const float *v = &p.local[i];
                m->addTriangle(btVector3(v[0], v[1], v[2]), btVector3(v[3], v[4], v[5]),
                               btVector3(v[6], v[7], v[8]), false);
            }
            btBvhTriangleMeshShape *shape = new btBvhTriangleMeshShape(m, true, true);
            btCollisionObject *o = new btCollisionObject();
            o->setCollisionShape(shape);
            btTransform tr(btQuaternion(p.t.rotation[0], p.t.rotation[1], p.t.rotation[2], p.t.rotation[3]),
                           btVector3(p.t.position[0], p.t.position[1], p.t.position[2]));
            o->setWorldTransform(tr);
            world.addCollisionObject(o);
            meshes.push_back(m);
            shapes.push_back(shape);
            objects.push_back(o);
        }
        world.updateAabbs();
    }
    btSphereShape sphere{SPHERE_RADIUS};
    bool sweep_sphere(const float c[3], const float d[3], float *t)
    {
        btTransform from, to;
        from.setIdentity();
        to.setIdentity();
        from.setOrigin(btVector3(c[0], c[1], c[2]));
        to.setOrigin(btVector3(c[0] + d[0], c[1] + d[1], c[2] + d[2]));
        btCollisionWorld::ClosestConvexResultCallback cb(from.getOrigin(), to.getOrigin());
        world.convexSweepTest(&sphere, from, to, cb);
        if (!cb.hasHit()) return false;
        *t = (float)cb.m_closestHitFraction;
        return true;
    }
    ~BulletWorld()
    {
        for (btCollisionObject *o : objects) { world.removeCollisionObject(o); delete o; }
        for (btBvhTriangleMeshShape *s : shapes) delete s;
        for (btTriangleMesh *m : meshes) delete m;
    }
    bool ray(const Ray &r, float *t)
    {
        btVector3 from(r.o[0], r.o[1], r.o[2]);
        btVector3 to(r.o[0] + r.d[0] * r.tmax, r.o[1] + r.d[1] * r.tmax, r.o[2] + r.d[2] * r.tmax);
        btCollisionWorld::ClosestRayResultCallback cb(from, to);
        world.rayTest(from, to, cb);
        if (!cb.hasHit()) return false;
        *t = cb.m_closestHitFraction * r.tmax;
        return true;
    }
};

/* ---------------------------------------------------------------- Embree: a two-level scene */

RTCScene embree_two_level(RTCDevice dev, const SplitLevel &s, std::vector<RTCScene> *pieces)
{
    RTCScene top = rtcNewScene(dev);
    for (const Piece &p : s.pieces) {
        if (!p.mesh) continue;
        RTCScene ps = rtcNewScene(dev);
        RTCGeometry g = rtcNewGeometry(dev, RTC_GEOMETRY_TYPE_TRIANGLE);
        const unsigned n = (unsigned)(p.local.size() / 9);
        float *v = (float *)rtcSetNewGeometryBuffer(g, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3,
                                                    3 * sizeof(float), 3 * n);
        memcpy(v, p.local.data(), p.local.size() * sizeof(float));
        unsigned *ix = (unsigned *)rtcSetNewGeometryBuffer(g, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3,
                                                           3 * sizeof(unsigned), n);
        for (unsigned i = 0; i < 3 * n; ++i) ix[i] = i;
        rtcCommitGeometry(g);
        rtcAttachGeometry(ps, g);
        rtcReleaseGeometry(g);
        rtcCommitScene(ps);
        pieces->push_back(ps);
        RTCGeometry inst = rtcNewGeometry(dev, RTC_GEOMETRY_TYPE_INSTANCE);
        rtcSetGeometryInstancedScene(inst, ps);
        const float *q = p.t.rotation;
        const double x = q[0], y = q[1], z = q[2], w = q[3];
        /* 3x4 column major: the rotation's columns, then the translation */
        float xf[12] = {(float)(1 - 2 * (y * y + z * z)), (float)(2 * (x * y + z * w)), (float)(2 * (x * z - y * w)),
                        (float)(2 * (x * y - z * w)), (float)(1 - 2 * (x * x + z * z)), (float)(2 * (y * z + x * w)),
                        (float)(2 * (x * z + y * w)), (float)(2 * (y * z - x * w)), (float)(1 - 2 * (x * x + y * y)),
                        p.t.position[0], p.t.position[1], p.t.position[2]};
        rtcSetGeometryTransform(inst, 0, RTC_FORMAT_FLOAT3X4_COLUMN_MAJOR, xf);
        rtcCommitGeometry(inst);
        rtcAttachGeometry(top, inst);
        rtcReleaseGeometry(inst);
    }
    rtcCommitScene(top);
    return top;
}

bool embree_ray(RTCScene s, const Ray &r, float *t)
{
    RTCIntersectContext ctx;
    rtcInitIntersectContext(&ctx);
    RTCRayHit rh;
    rh.ray.org_x = r.o[0]; rh.ray.org_y = r.o[1]; rh.ray.org_z = r.o[2];
    rh.ray.dir_x = r.d[0]; rh.ray.dir_y = r.d[1]; rh.ray.dir_z = r.d[2];
    rh.ray.tnear = 0.0f;
    rh.ray.tfar = r.tmax;
    rh.ray.time = 0.0f;
    rh.ray.mask = 0xFFFFFFFFu;
    rh.ray.id = 0;
    rh.ray.flags = 0;
    rh.hit.geomID = RTC_INVALID_GEOMETRY_ID;
    rh.hit.instID[0] = RTC_INVALID_GEOMETRY_ID;
    rtcIntersect1(s, &ctx, &rh);
    if (rh.hit.geomID == RTC_INVALID_GEOMETRY_ID) return false;
    *t = rh.ray.tfar;
    return true;
}

/* ---------------------------------------------------------------- queries and timing */

struct Queries {
    std::vector<Ray> rays;
    std::vector<std::array<float, 6>> boxes;   /* lo, hi: player boxes resting on floors */
    std::vector<std::array<float, 3>> deltas;  /* a sweep's motion from the box: up to 2 m */
};

/* A point on walkable floor (the single mesh's ray down hits a face whose normal has y >= 0.7)
 * with geometry above it (inside the playable space). */
bool floor_point(const kcc_mesh *m, const float lo[3], const float hi[3], bench_rng *r, float out[3])
{
    const float down[3] = {0.0f, -1.0f, 0.0f}, up[3] = {0.0f, 1.0f, 0.0f};
    for (int attempt = 0; attempt < 10000; ++attempt) {
        float p[3] = {bench_rng_range(r, lo[0], hi[0]), bench_rng_range(r, lo[1], hi[1]),
                      bench_rng_range(r, lo[2], hi[2])};
        kcc_ray_hit h;
        if (!kcc_mesh_raycast(m, p, down, p[1] - lo[1] + 1.0f, &h) || h.normal[1] < 0.7f) continue;
        float above[3] = {h.point[0], h.point[1] + 0.01f, h.point[2]};
        if (!kcc_mesh_raycast(m, above, up, hi[1] - above[1] + 1.0f, &h)) continue;
        memcpy(out, above, sizeof above);
        return true;
    }
    return false;
}

Queries make_queries(const kcc_mesh *m, uint64_t seed)
{
    Queries q;
    vec3 b[2];
    kcc_mesh_bounds(m, b);
    bench_rng r = bench_rng_seed(seed);
    float p[3];
    while ((int)q.rays.size() < N_QUERIES && floor_point(m, b[0], b[1], &r, p)) {
        Ray ray = {{p[0], p[1] + bench_rng_range(&r, 0.0f, 1.5f), p[2]}, {0, 0, 0}, 20.0f};
        bench_rng_dir(&r, ray.d);
        q.rays.push_back(ray);
        std::array<float, 6> box;
        for (int k = 0; k < 3; ++k) {
            const float c = k == 1 ? p[1] + BOX_HALF[1] - bench_rng_range(&r, -0.01f, 0.05f) : p[k];
            box[k] = c - BOX_HALF[k];
            box[3 + k] = c + BOX_HALF[k];
        }
        q.boxes.push_back(box);
        std::array<float, 3> d = {bench_rng_range(&r, -2.0f, 2.0f), bench_rng_range(&r, -0.5f, 0.5f),
                                  bench_rng_range(&r, -2.0f, 2.0f)};
        q.deltas.push_back(d);
    }
    return q;
}

/* ns per query of each engine: RUNS runs, each split into SLICES slices that the engines take in
 * turn; per slice the fastest of the runs, summed over the slices. The fastest run of a slice a few
 * tens of queries long is the one other processes disturbed least, so the figures and their ratios
 * hold on a loaded machine, where a median of whole runs swings by a third. */
std::vector<double> time_engines(int n, const std::vector<std::function<void(int)>> &engines)
{
    std::vector<std::vector<double>> fastest(engines.size(), std::vector<double>(SLICES, 1e300));
    for (int run = 0; run < RUNS; ++run)
        for (int s = 0; s < SLICES; ++s) {
            const int begin = (int)((int64_t)n * s / SLICES), end = (int)((int64_t)n * (s + 1) / SLICES);
            for (size_t e = 0; e < engines.size(); ++e) {
                const double t0 = bench_now_ns();
                for (int i = begin; i < end; ++i) engines[e](i);
                fastest[e][s] = std::min(fastest[e][s], bench_now_ns() - t0);
            }
        }
    std::vector<double> ns;
    for (const std::vector<double> &v : fastest) {
        double total = 0.0;
        for (double t : v) total += t;
        ns.push_back(total / n);
    }
    return ns;
}

/* Same hit/miss and, on a hit, |t - t_ref| <= 1e-4 * max(t_ref, 0.1 m) (the pieces' corners went
 * through float twice, so the world's triangles are the level's to a few ulps). */
bool same_answer(const Answer &a, const Answer &b)
{
    if (a.hit != b.hit) return false;
    return !a.hit || fabsf(a.t - b.t) <= 1e-4f * std::max(fabsf(b.t), 0.1f);
}

int disagreements(const std::vector<Answer> &a, const std::vector<Answer> &ref)
{
    int n = 0;
    for (size_t i = 0; i < a.size(); ++i) n += !same_answer(a[i], ref[i]);
    return n;
}

enum { R_MESH, R_WORLD, R_BULLET, R_EMBREE, R_TRANSLATED, R_IDENTITY, R_COUNT };
const char *const RAY_ENGINES[R_COUNT] = {"kcc mesh", "kcc world", "bullet world", "embree 2-level",
                                          "world translated", "world identity"};

enum { S_MESH, S_WORLD, S_BULLET, S_TRANSLATED, S_IDENTITY, S_COUNT };
const char *const SPHERE_ENGINES[S_COUNT] = {"kcc mesh", "kcc world", "bullet world",
                                             "world translated", "world identity"};

struct LevelFigures {
    char name[64];
    uint32_t triangles, pieces;
    double ray_ns[R_COUNT];
    int ray_disagree[R_COUNT];       /* against kcc mesh */
    int rays, hits;
    double box_ns[2 + 2], sweep_ns[2 + 2]; /* mesh, world rotated, translated, identity */
    int box_disagree, sweep_disagree;      /* world rotated against mesh */
    double sphere_ns[S_COUNT];
    int sphere_disagree[S_COUNT];          /* against kcc mesh: hit/miss, or t beyond 1 cm of travel */
    int sphere_hits;
};

void time_rays(const Queries &q, const kcc_mesh *mesh, SplitLevel split[PLACE_COUNT], BulletWorld &bw,
               RTCScene emb, LevelFigures *f)
{
    const int n = (int)q.rays.size();
    std::vector<std::vector<Answer>> ans(R_COUNT, std::vector<Answer>(n, Answer{false, 0.0f, 0}));
    auto world_engine = [&](int e, const kcc_world *w) {
        return [&, e, w](int i) {
            kcc_world_hit h;
            const bool hit = kcc_world_raycast(w, q.rays[i].o, q.rays[i].d, q.rays[i].tmax, &h);
            ans[e][i] = Answer{hit, hit ? h.t : 0.0f, 0};
        };
    };
    std::vector<std::function<void(int)>> engines(R_COUNT);
    engines[R_MESH] = [&](int i) {
        kcc_ray_hit h;
        const bool hit = kcc_mesh_raycast(mesh, q.rays[i].o, q.rays[i].d, q.rays[i].tmax, &h);
        ans[R_MESH][i] = Answer{hit, hit ? h.t : 0.0f, 0};
    };
    engines[R_WORLD] = world_engine(R_WORLD, split[PLACE_ROTATED].world);
    engines[R_TRANSLATED] = world_engine(R_TRANSLATED, split[PLACE_TRANSLATED].world);
    engines[R_IDENTITY] = world_engine(R_IDENTITY, split[PLACE_IDENTITY].world);
    engines[R_BULLET] = [&](int i) {
        float t = 0.0f;
        const bool hit = bw.ray(q.rays[i], &t);
        ans[R_BULLET][i] = Answer{hit, t, 0};
    };
    engines[R_EMBREE] = [&](int i) {
        float t = 0.0f;
        const bool hit = embree_ray(emb, q.rays[i], &t);
        ans[R_EMBREE][i] = Answer{hit, t, 0};
    };
    const std::vector<double> ns = time_engines(n, engines);
    f->rays = n;
    f->hits = 0;
    for (const Answer &a : ans[R_MESH]) f->hits += a.hit;
    for (int e = 0; e < R_COUNT; ++e) {
        f->ray_ns[e] = ns[e];
        f->ray_disagree[e] = disagreements(ans[e], ans[R_MESH]);
    }
}

/* Box overlap and sweep: the single mesh against the three worlds; the rotated world's answers
 * against the mesh's (overlap: the same triangle count; sweep: same_answer on t). */
void time_boxes(const Queries &q, const kcc_mesh *mesh, SplitLevel split[PLACE_COUNT], LevelFigures *f)
{
    const int n = (int)q.boxes.size();
    std::vector<std::vector<Answer>> box(4, std::vector<Answer>(n)), sweep(4, std::vector<Answer>(n));
    std::vector<std::function<void(int)>> boxes, sweeps;
    boxes.push_back([&](int i) {
        uint32_t out[256];
        box[0][i].count = kcc_mesh_overlap_aabb(mesh, (const vec3 *)q.boxes[i].data(), out, 256);
    });
    sweeps.push_back([&](int i) {
        kcc_sweep_hit h;
        const bool hit = kcc_mesh_sweep_aabb(mesh, (const vec3 *)q.boxes[i].data(), q.deltas[i].data(), &h);
        sweep[0][i] = Answer{hit, hit ? h.t : 0.0f, 0};
    });
    for (int p = 0; p < PLACE_COUNT; ++p) {
        const kcc_world *w = split[p].world;
        boxes.push_back([&, p, w](int i) {
            kcc_body_triangle out[256];
            box[1 + p][i].count = kcc_world_overlap_aabb(w, (const vec3 *)q.boxes[i].data(), KCC_LAYERS_ALL, out, 256);
        });
        sweeps.push_back([&, p, w](int i) {
            kcc_world_sweep_hit h;
            const bool hit = kcc_world_sweep_aabb(w, (const vec3 *)q.boxes[i].data(), q.deltas[i].data(),
                                                  KCC_LAYERS_ALL, &h);
            sweep[1 + p][i] = Answer{hit, hit ? h.t : 0.0f, 0};
        });
    }
    const std::vector<double> box_ns = time_engines(n, boxes), sweep_ns = time_engines(n, sweeps);
    for (int e = 0; e < 4; ++e) f->box_ns[e] = box_ns[e], f->sweep_ns[e] = sweep_ns[e];
    f->box_disagree = 0;
    for (int i = 0; i < n; ++i) f->box_disagree += box[1][i].count != box[0][i].count;
    f->sweep_disagree = disagreements(sweep[1], sweep[0]);
}

/* Sphere sweeps (SPHERE_RADIUS, SPHERE_TRAVEL along the ray's direction from the centre of the
 * query's player box, clear of the floor): kcc's mesh, kcc's three worlds and Bullet's world over the
 * rotated pieces. Answers against the mesh's: the same hit/miss and t within 1 cm of travel (Bullet's
 * conservative advancement stops short by up to that; bench_sphere referees its disagreements). */
void time_spheres(const Queries &q, const kcc_mesh *mesh, SplitLevel split[PLACE_COUNT], BulletWorld &bw,
                  LevelFigures *f)
{
    const int n = (int)q.boxes.size();
    std::vector<std::array<float, 6>> sweeps(n); /* centre, delta */
    for (int i = 0; i < n; ++i)
        for (int k = 0; k < 3; ++k) {
            sweeps[i][k] = 0.5f * (q.boxes[i][k] + q.boxes[i][3 + k]);
            sweeps[i][3 + k] = q.rays[i].d[k] * SPHERE_TRAVEL;
        }
    std::vector<std::vector<Answer>> ans(S_COUNT, std::vector<Answer>(n, Answer{false, 0.0f, 0}));
    std::vector<std::function<void(int)>> engines(S_COUNT);
    engines[S_MESH] = [&](int i) {
        kcc_sphere_hit h;
        const bool hit = kcc_mesh_sweep_sphere(mesh, sweeps[i].data(), SPHERE_RADIUS, sweeps[i].data() + 3, &h);
        ans[S_MESH][i] = Answer{hit, hit ? h.t : 0.0f, 0};
    };
    const int world_engine[PLACE_COUNT] = {S_WORLD, S_TRANSLATED, S_IDENTITY};
    for (int p = 0; p < PLACE_COUNT; ++p) {
        const int e = world_engine[p];
        const kcc_world *w = split[p].world;
        engines[e] = [&, e, w](int i) {
            kcc_world_sphere_hit h;
            const bool hit = kcc_world_sweep_sphere(w, sweeps[i].data(), SPHERE_RADIUS, sweeps[i].data() + 3,
                                                    KCC_LAYERS_ALL, &h);
            ans[e][i] = Answer{hit, hit ? h.t : 0.0f, 0};
        };
    }
    engines[S_BULLET] = [&](int i) {
        float t = 0.0f;
        const bool hit = bw.sweep_sphere(sweeps[i].data(), sweeps[i].data() + 3, &t);
        ans[S_BULLET][i] = Answer{hit, t, 0};
    };
    const std::vector<double> ns = time_engines(n, engines);
    f->sphere_hits = 0;
    for (const Answer &a : ans[S_MESH]) f->sphere_hits += a.hit;
    for (int e = 0; e < S_COUNT; ++e) {
        f->sphere_ns[e] = ns[e];
        f->sphere_disagree[e] = 0;
        for (int i = 0; i < n; ++i) {
            const Answer &a = ans[e][i], &m = ans[S_MESH][i];
            f->sphere_disagree[e] += a.hit != m.hit || (a.hit && fabsf(a.t - m.t) * SPHERE_TRAVEL > 0.01f);
        }
    }
}

bool run_level(const bench_level &bl, RTCDevice dev, LevelFigures *f)
{
    memset(f, 0, sizeof *f);
    snprintf(f->name, sizeof f->name, "%s", bl.name);
    kcc_mesh *mesh = bench_build_mesh(&bl);
    if (!mesh) return false;
    SplitLevel split[PLACE_COUNT];
    for (int p = 0; p < PLACE_COUNT; ++p) split_level(bl.level, (Placement)p, 27 + (uint64_t)p, &split[p]);
    f->triangles = bl.level.triangle_count;
    f->pieces = kcc_world_body_count(split[PLACE_ROTATED].world);
    BulletWorld *bw = new BulletWorld(split[PLACE_ROTATED]);
    std::vector<RTCScene> piece_scenes;
    RTCScene emb = embree_two_level(dev, split[PLACE_ROTATED], &piece_scenes);
    const Queries q = make_queries(mesh, 22);
    time_rays(q, mesh, split, *bw, emb, f);
    const bool rays_only = getenv("KCC_BENCH_RAYS_ONLY") != nullptr;
    if (!rays_only) {
        time_boxes(q, mesh, split, f);
        time_spheres(q, mesh, split, *bw, f);
    }
    printf("%s: %u triangles, %u pieces (float vertices; the automatic coding would give %u rotated, %u "
           "translated, %u in place tables), %d rays (%d hit)\n",
           f->name, f->triangles, f->pieces, split[PLACE_ROTATED].auto_tables,
           split[PLACE_TRANSLATED].auto_tables, split[PLACE_IDENTITY].auto_tables, f->rays, f->hits);
    for (int e = 0; e < R_COUNT; ++e)
        printf("  ray %-17s %8.1f ns  %6.2fx mesh  %5d disagree with kcc mesh\n", RAY_ENGINES[e],
               f->ray_ns[e], f->ray_ns[e] / f->ray_ns[R_MESH], f->ray_disagree[e]);
    for (int e = 0; e < 4 && !rays_only; ++e)
        printf("  %-24s box %8.1f ns  sweep %8.1f ns\n", e == 0 ? "kcc mesh" : PLACEMENT_NAMES[e - 1],
               f->box_ns[e], f->sweep_ns[e]);
    if (!rays_only)
        printf("  world (rotated) vs mesh: %d box counts differ, %d sweeps differ\n", f->box_disagree,
               f->sweep_disagree);
    for (int e = 0; e < S_COUNT && !rays_only; ++e)
        printf("  sphere %-17s %8.1f ns  %6.2fx mesh  %5d disagree with kcc mesh (%d of %d hit)\n", SPHERE_ENGINES[e],
               f->sphere_ns[e], f->sphere_ns[e] / f->sphere_ns[S_MESH], f->sphere_disagree[e], f->sphere_hits, f->rays);
    rtcReleaseScene(emb);
    for (RTCScene s : piece_scenes) rtcReleaseScene(s);
    delete bw;
    for (SplitLevel &s : split) split_free(&s);
    kcc_mesh_destroy(mesh);
    return true;
}

} // namespace

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "../shared/levels";
    const char *only = getenv("KCC_BENCH_ONLY");
    if (getenv("KCC_BENCH_QUERIES")) N_QUERIES = std::max(1, atoi(getenv("KCC_BENCH_QUERIES")));
    RTCDevice dev = rtcNewDevice("threads=1");
    if (!dev) { fprintf(stderr, "embree: rtcNewDevice failed\n"); return 1; }
    printf("clock %s\n", bench_clock_name());
    bench_print_load("at the start");
    bench_warmup(300.0);
    printf("bench_world: single-thread ns/query over up to %d queries in %d slices, each slice's fastest\n"
           "of %d runs; each level split into 27 pieces by centroid, each moved into its own frame and\n"
           "placed back by a random rigid transform (rotated), a translation only, or left in place\n"
           "(identity).\n", N_QUERIES, SLICES, RUNS);
    static char names[BENCH_MAX_LEVELS][64];
    const int nlevels = bench_level_list(dir, names, BENCH_MAX_LEVELS);
    if (nlevels == 0) printf("no levels at %s: generated levels only\n", dir);
    std::vector<LevelFigures> all;
    const double t_start = bench_wall_ns();
    for (int i = 0; i < (nlevels > 0 ? nlevels : 2); ++i) {
        bench_level bl;
        const bool ok = nlevels > 0 ? bench_level_load(dir, names[i], &bl)
                                    : bench_level_generate(i == 0 ? "arena" : "terrain", &bl);
        if (!ok) continue;
        LevelFigures f;
        if ((!only || strstr(bl.name, only)) && run_level(bl, dev, &f)) all.push_back(f);
        bench_level_free(&bl);
        fflush(stdout);
    }
    double worst_mesh = 0.0, worst_bullet = 1e30;
    printf("\nmarkdown:\n\n| level | tris | kcc mesh ns | kcc world ns | world/mesh | bullet world ns | bullet/world |"
           " embree 2-level ns | world translated | world identity | disagree (world, bullet, embree) |\n"
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    for (const LevelFigures &f : all) {
        const double *ns = f.ray_ns;
        worst_mesh = std::max(worst_mesh, ns[R_WORLD] / ns[R_MESH]);
        worst_bullet = std::min(worst_bullet, ns[R_BULLET] / ns[R_WORLD]);
        printf("| %s | %u | %.0f | %.0f | %.2f | %.0f | %.2f | %.0f | %.0f | %.0f | %d, %d, %d of %d |\n", f.name,
               f.triangles, ns[R_MESH], ns[R_WORLD], ns[R_WORLD] / ns[R_MESH], ns[R_BULLET],
               ns[R_BULLET] / ns[R_WORLD], ns[R_EMBREE], ns[R_TRANSLATED], ns[R_IDENTITY], f.ray_disagree[R_WORLD],
               f.ray_disagree[R_BULLET], f.ray_disagree[R_EMBREE], f.rays);
    }
    const bool rays_only = getenv("KCC_BENCH_RAYS_ONLY") != nullptr;
    if (!rays_only) printf("\n| level | box mesh ns | box world (rotated, translated, identity) | sweep mesh ns |"
           " sweep world (rotated, translated, identity) | box, sweep disagree |\n|---|---:|---|---:|---|---|\n");
    for (const LevelFigures &f : all)
        if (!rays_only) printf("| %s | %.0f | %.0f, %.0f, %.0f | %.0f | %.0f, %.0f, %.0f | %d, %d |\n", f.name, f.box_ns[0], f.box_ns[1],
               f.box_ns[2], f.box_ns[3], f.sweep_ns[0], f.sweep_ns[1], f.sweep_ns[2], f.sweep_ns[3], f.box_disagree,
               f.sweep_disagree);
    double worst_sphere = 1e30;
    if (!rays_only) printf("\n| level | sphere mesh ns | sphere world ns (rotated, translated, identity) | bullet world ns |"
           " bullet / world | disagree with mesh (world, bullet) |\n|---|---:|---|---:|---:|---|\n");
    for (const LevelFigures &f : all) {
        if (rays_only) break;
        const double *ns = f.sphere_ns;
        worst_sphere = std::min(worst_sphere, ns[S_BULLET] / ns[S_WORLD]);
        printf("| %s | %.0f | %.0f, %.0f, %.0f | %.0f | %.2f | %d, %d of %d |\n", f.name, ns[S_MESH], ns[S_WORLD],
               ns[S_TRANSLATED], ns[S_IDENTITY], ns[S_BULLET], ns[S_BULLET] / ns[S_WORLD],
               f.sphere_disagree[S_WORLD], f.sphere_disagree[S_BULLET], f.rays);
    }
    if (!rays_only) printf("\nsummary: world sphere sweep: bullet / world worst %.2f (target >= 3) %s\n", worst_sphere,
           worst_sphere >= 3.0 ? "PASS" : "FAIL");
    printf("\nsummary: world ray / mesh ray worst %.2f (target <= 1.3) %s; bullet / world worst %.2f (target >= 3) %s\n",
           worst_mesh, worst_mesh <= 1.3 ? "PASS" : "FAIL", worst_bullet, worst_bullet >= 3.0 ? "PASS" : "FAIL");
    bench_print_load("at the end");
    printf("total %.1f s\n", (bench_wall_ns() - t_start) * 1e-9);
    rtcReleaseDevice(dev);
    return 0;
}
