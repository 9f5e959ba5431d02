/* bench_collide.cpp: the query-layer benchmark (issue 2): kcc_mesh build time, tree bytes per triangle
 * and single-thread ns/query for short ground rays, random 20 m rays and character-box overlaps, against
 * Embree 3, Bullet and ODE on the same meshes and the same query sets, plus result cross-checks.
 * Usage: bench_collide [levels_dir]; without the shared levels it runs on generated meshes only. */
#include <embree3/rtcore.h>
#include <btBulletCollisionCommon.h>
#include <BulletCollision/NarrowPhaseCollision/btRaycastCallback.h>
#include <ode/ode.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <vector>

#include "bench.h"

namespace {

const int RUNS = 7;           /* timed repetitions; every figure is the median over them */
int N_QUERIES = 20000;        /* queries per set (and per timed run); env KCC_BENCH_QUERIES overrides */
const int BOX_CAP = 512;      /* triangle buffer of one box query */

/* The player box of the shared levels (README: 0.94 x 1.75 x 0.94 m). */
const float BOX_HALF[3] = {0.47f, 0.875f, 0.47f};

struct Ray { float o[3], d[3], tmax; };
struct RayRes { bool hit; float t; uint32_t tri; };
struct Box { float b[2][3]; };

/* ---------------------------------------------------------------- timing */

const int CHUNKS = 8;         /* each run is timed in this many interleaved slices (see time_interleaved) */

/* One engine's work on a query set: slice c of `chunks` runs body(i) for its share of the queries
 * (the loop is compiled per engine, no indirect call inside). */
using Pass = std::function<void(int, int)>;
template <class F> Pass pass(int n, F body)
{
    return [n, body](int c, int chunks) {
        for (int i = (int)((int64_t)n * c / chunks), end = (int)((int64_t)n * (c + 1) / chunks); i < end; ++i)
            body(i);
    };
}

/* Runs every engine's pass RUNS times. Within a run the engines take turns slice by slice (an eighth
 * of the queries each turn), so that load from other processes on the shared machine hits all of them
 * alike; a run's time is the sum of its slices. out[e] = median over runs of ns per query. */
void time_interleaved(int n, const std::vector<Pass> &passes, double *out, const std::vector<int> &counts = {})
{
    std::vector<std::vector<double>> per(passes.size(), std::vector<double>(RUNS, 0.0));
    for (int r = 0; r < RUNS; ++r)
        for (int c = 0; c < CHUNKS; ++c)
            for (size_t e = 0; e < passes.size(); ++e) {
                double t0 = bench_now_ns();
                passes[e](c, CHUNKS);
                per[e][r] += bench_now_ns() - t0;
            }
    for (size_t e = 0; e < passes.size(); ++e) {
        for (double &v : per[e]) v /= (e < counts.size() ? counts[e] : n);
        out[e] = bench_median(per[e].data(), RUNS);
    }
}

double ms_since(double t0) { return (bench_now_ns() - t0) * 1e-6; }

/* ---------------------------------------------------------------- Embree 3 */

RTCScene embree_build(RTCDevice dev, const kcc_level &L, bool robust, double *ms)
{
    double t0 = bench_now_ns();
    RTCScene s = rtcNewScene(dev);
    if (robust) rtcSetSceneFlags(s, RTC_SCENE_FLAG_ROBUST);
    RTCGeometry g = rtcNewGeometry(dev, RTC_GEOMETRY_TYPE_TRIANGLE);
    float *v = (float *)rtcSetNewGeometryBuffer(g, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3,
                                                3 * sizeof(float), L.vertex_count);
    memcpy(v, L.positions, (size_t)L.vertex_count * 3 * sizeof(float));
    unsigned *ix = (unsigned *)rtcSetNewGeometryBuffer(g, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3,
                                                       3 * sizeof(unsigned), L.triangle_count);
    memcpy(ix, L.indices, (size_t)L.triangle_count * 3 * sizeof(unsigned));
    rtcCommitGeometry(g);
    rtcAttachGeometry(s, g);
    rtcReleaseGeometry(g);
    rtcCommitScene(s);
    *ms = ms_since(t0);
    return s;
}

inline bool embree_ray(RTCScene s, const float o[3], const float d[3], float tmax, float *t, unsigned *prim)
{
    RTCIntersectContext ctx;
    rtcInitIntersectContext(&ctx);
    RTCRayHit rh;
    rh.ray.org_x = o[0]; rh.ray.org_y = o[1]; rh.ray.org_z = o[2];
    rh.ray.dir_x = d[0]; rh.ray.dir_y = d[1]; rh.ray.dir_z = d[2];
    rh.ray.tnear = 0.0f;
    rh.ray.tfar = tmax;
    rh.ray.time = 0.0f;
    rh.ray.mask = 0xFFFFFFFFu;
    rh.ray.id = 0;
    rh.ray.flags = 0;
    rh.hit.geomID = RTC_INVALID_GEOMETRY_ID;
    rh.hit.instID[0] = RTC_INVALID_GEOMETRY_ID;
    rtcIntersect1(s, &ctx, &rh);
    if (rh.hit.geomID == RTC_INVALID_GEOMETRY_ID) return false;
    *t = rh.ray.tfar;
    if (prim) *prim = rh.hit.primID;
    return true;
}

/* ---------------------------------------------------------------- Bullet */

struct BulletMesh {
    btTriangleIndexVertexArray *array = nullptr;
    btBvhTriangleMeshShape *shape = nullptr;
    ~BulletMesh() { delete shape; delete array; }
};

void bullet_build(const kcc_level &L, BulletMesh *m, double *ms)
{
    double t0 = bench_now_ns();
    /* Bullet only reads the arrays; its API takes them non-const */
    m->array = new btTriangleIndexVertexArray((int)L.triangle_count, (int *)L.indices, 3 * sizeof(int),
                                              (int)L.vertex_count, (btScalar *)L.positions,
                                              3 * sizeof(float));
    m->shape = new btBvhTriangleMeshShape(m->array, true, true); /* quantized AABB tree, built now */
    *ms = ms_since(t0);
}

/* Keeps the closest hit: returning the fraction makes Bullet only report nearer hits afterwards. */
struct BulletClosestRay : public btTriangleRaycastCallback {
    int triangle = -1;
    BulletClosestRay(const btVector3 &from, const btVector3 &to) : btTriangleRaycastCallback(from, to, 0) {}
    btScalar reportHit(const btVector3 &, btScalar fraction, int, int tri) override
    {
        triangle = tri;
        return fraction;
    }
};

/* Bounds-only box query: btBvhTriangleMeshShape::processAllTriangles reports every triangle whose
 * quantized leaf bounds overlap the box; there is no exact triangle test. */
struct BulletBoxCount : public btTriangleCallback {
    uint32_t count = 0;
    std::vector<int> *list = nullptr;
    void processTriangle(btVector3 *, int, int tri) override
    {
        ++count;
        if (list) list->push_back(tri);
    }
};

/* Bullet's exact box query, for context: a btBoxShape object tested with btCollisionWorld::contactTest
 * against the level object (convex-vs-concave algorithm: GJK/EPA per candidate triangle, contact
 * points); counts points at distance <= 0. */
struct BulletContactWorld {
    btDefaultCollisionConfiguration cfg;
    btCollisionDispatcher dispatcher{&cfg};
    btDbvtBroadphase broadphase;
    btCollisionWorld world{&dispatcher, &broadphase, &cfg};
    btCollisionObject level, box;
    btBoxShape box_shape{btVector3(BOX_HALF[0], BOX_HALF[1], BOX_HALF[2])};
    explicit BulletContactWorld(btBvhTriangleMeshShape *shape)
    {
        level.setCollisionShape(shape);
        level.setCollisionFlags(btCollisionObject::CF_STATIC_OBJECT);
        world.addCollisionObject(&level);
        box.setCollisionShape(&box_shape);
        world.updateAabbs();
    }
    ~BulletContactWorld() { world.removeCollisionObject(&level); }
};

struct BulletContactCount : public btCollisionWorld::ContactResultCallback {
    int count = 0;
    btScalar addSingleResult(btManifoldPoint &cp, const btCollisionObjectWrapper *, int, int,
                             const btCollisionObjectWrapper *, int, int) override
    {
        count += cp.getDistance() <= 0.0f;
        return 0;
    }
};

inline int bullet_box_exact(BulletContactWorld &w, const Box &b)
{
    btTransform tr;
    tr.setIdentity();
    tr.setOrigin(btVector3(0.5f * (b.b[0][0] + b.b[1][0]), 0.5f * (b.b[0][1] + b.b[1][1]), 0.5f * (b.b[0][2] + b.b[1][2])));
    w.box.setWorldTransform(tr);
    BulletContactCount cb;
    w.world.contactTest(&w.box, cb);
    return cb.count;
}

inline bool bullet_ray(const btBvhTriangleMeshShape *shape, const Ray &r, float *t)
{
    btVector3 from(r.o[0], r.o[1], r.o[2]);
    btVector3 to(r.o[0] + r.d[0] * r.tmax, r.o[1] + r.d[1] * r.tmax, r.o[2] + r.d[2] * r.tmax);
    BulletClosestRay cb(from, to);
    const_cast<btBvhTriangleMeshShape *>(shape)->performRaycast(&cb, from, to);
    if (cb.triangle < 0) return false;
    *t = cb.m_hitFraction * r.tmax;
    return true;
}

/* ---------------------------------------------------------------- ODE (OPCODE trimesh collider) */

struct OdeMesh {
    dTriMeshDataID data = nullptr;
    dGeomID mesh = nullptr, ray = nullptr, box = nullptr;
    ~OdeMesh()
    {
        if (box) dGeomDestroy(box);
        if (ray) dGeomDestroy(ray);
        if (mesh) dGeomDestroy(mesh);
        if (data) dGeomTriMeshDataDestroy(data);
    }
};

void ode_build(const kcc_level &L, OdeMesh *m, double *ms)
{
    double t0 = bench_now_ns();
    m->data = dGeomTriMeshDataCreate();
    dGeomTriMeshDataBuildSingle(m->data, L.positions, 3 * sizeof(float), (int)L.vertex_count, L.indices,
                                (int)L.triangle_count * 3, 3 * sizeof(dTriIndex));
    m->mesh = dCreateTriMesh(0, m->data, nullptr, nullptr, nullptr);
    *ms = ms_since(t0);
    /* no temporal coherence: every query is independent */
    dGeomTriMeshEnableTC(m->mesh, dBoxClass, 0);
    dGeomTriMeshEnableTC(m->mesh, dSphereClass, 0);
    dGeomTriMeshEnableTC(m->mesh, dCapsuleClass, 0);
    m->ray = dCreateRay(0, 1.0);
    dGeomRaySetFirstContact(m->ray, 0);
    dGeomRaySetBackfaceCull(m->ray, 0);
    dGeomRaySetClosestHit(m->ray, 1);
    m->box = dCreateBox(0, 2.0 * BOX_HALF[0], 2.0 * BOX_HALF[1], 2.0 * BOX_HALF[2]);
}

inline bool ode_ray(const OdeMesh &m, const Ray &r, float *t)
{
    dGeomRaySet(m.ray, r.o[0], r.o[1], r.o[2], r.d[0], r.d[1], r.d[2]);
    dGeomRaySetLength(m.ray, r.tmax);
    dContactGeom c;
    if (dCollide(m.ray, m.mesh, 1, &c, sizeof c) <= 0) return false;
    *t = (float)c.depth;
    return true;
}

inline int ode_box(const OdeMesh &m, const Box &b, dContactGeom *contacts, int cap)
{
    dGeomSetPosition(m.box, 0.5 * (b.b[0][0] + b.b[1][0]), 0.5 * (b.b[0][1] + b.b[1][1]),
                     0.5 * (b.b[0][2] + b.b[1][2]));
    return dCollide(m.box, m.mesh, cap, contacts, sizeof contacts[0]);
}

/* ---------------------------------------------------------------- query sets */

void tri_normal(const kcc_level &L, unsigned tri, float n[3])
{
    const float *a = L.positions + 3 * L.indices[3 * tri + 0];
    const float *b = L.positions + 3 * L.indices[3 * tri + 1];
    const float *c = L.positions + 3 * L.indices[3 * tri + 2];
    float u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    n[0] = u[1] * v[2] - u[2] * v[1];
    n[1] = u[2] * v[0] - u[0] * v[2];
    n[2] = u[0] * v[1] - u[1] * v[0];
    float len = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    if (len > 0.0f) { n[0] /= len; n[1] /= len; n[2] /= len; }
}

void level_bounds(const kcc_level &L, float lo[3], float hi[3])
{
    for (int k = 0; k < 3; ++k) { lo[k] = 1e30f; hi[k] = -1e30f; }
    for (uint32_t i = 0; i < L.vertex_count; ++i)
        for (int k = 0; k < 3; ++k) {
            lo[k] = std::min(lo[k], L.positions[3 * i + k]);
            hi[k] = std::max(hi[k], L.positions[3 * i + k]);
        }
}

/* A random point on walkable floor (upward normal, y >= 0.7): drop a ray from a random point inside
 * the level bounds and keep the first hit when it faces up. Uses Embree (robust) as the oracle. With
 * `enclosed` (the shared levels: sealed by their sky brushes) the point must also have geometry above
 * it, which keeps the queries inside the playable space rather than on the roof of the map. */
bool floor_point(RTCScene s, const kcc_level &L, const float lo[3], const float hi[3], bool enclosed,
                 bench_rng *r, float out[3])
{
    const float down[3] = {0.0f, -1.0f, 0.0f}, up[3] = {0.0f, 1.0f, 0.0f};
    for (int attempt = 0; attempt < 10000; ++attempt) {
        float p[3] = {bench_rng_range(r, lo[0], hi[0]), bench_rng_range(r, lo[1], hi[1]),
                      bench_rng_range(r, lo[2], hi[2])};
        float t;
        unsigned prim;
        if (!embree_ray(s, p, down, p[1] - lo[1] + 1.0f, &t, &prim)) continue;
        float n[3];
        tri_normal(L, prim, n);
        if (n[1] < 0.7f) continue;
        out[0] = p[0]; out[1] = p[1] - t; out[2] = p[2];
        float above[3] = {out[0], out[1] + 0.01f, out[2]};
        if (enclosed && !embree_ray(s, above, up, hi[1] - out[1] + 1.0f, &t, nullptr)) continue;
        return true;
    }
    return false;
}

struct QuerySets {
    std::vector<Ray> down, random;
    std::vector<Box> boxes;
    int against_wall = 0;
};

QuerySets make_queries(RTCScene oracle, const kcc_level &L, bool enclosed, uint64_t seed)
{
    QuerySets q;
    float lo[3], hi[3];
    level_bounds(L, lo, hi);
    bench_rng r = bench_rng_seed(seed);
    float p[3];
    while ((int)q.down.size() < N_QUERIES && floor_point(oracle, L, lo, hi, enclosed, &r, p)) {
        Ray ray = {{p[0], p[1] + bench_rng_range(&r, 0.0f, 1.5f), p[2]}, {0.0f, -1.0f, 0.0f}, 2.0f};
        q.down.push_back(ray);
    }
    while ((int)q.random.size() < N_QUERIES && floor_point(oracle, L, lo, hi, enclosed, &r, p)) {
        Ray ray = {{p[0], p[1] + bench_rng_range(&r, 0.0f, 1.5f), p[2]}, {0, 0, 0}, 20.0f};
        bench_rng_dir(&r, ray.d);
        q.random.push_back(ray);
    }
    while ((int)q.boxes.size() < N_QUERIES && floor_point(oracle, L, lo, hi, enclosed, &r, p)) {
        /* resting on the floor: from 1 cm above it to 5 cm sunk into it */
        float c[3] = {p[0], p[1] + BOX_HALF[1] - bench_rng_range(&r, -0.01f, 0.05f), p[2]};
        if (bench_rng_float(&r) < 0.4f) {
            /* pushed against a wall along one horizontal axis, from 1 cm off to 2 cm into it */
            int axis = bench_rng_float(&r) < 0.5f ? 0 : 2;
            float sign = bench_rng_float(&r) < 0.5f ? -1.0f : 1.0f;
            float o[3] = {p[0], p[1] + 0.9f, p[2]}, d[3] = {0, 0, 0}, t;
            d[axis] = sign;
            if (embree_ray(oracle, o, d, 4.0f, &t, nullptr)) {
                c[axis] += sign * (t - BOX_HALF[axis] + bench_rng_range(&r, -0.01f, 0.02f));
                ++q.against_wall;
            }
        }
        Box b;
        for (int k = 0; k < 3; ++k) { b.b[0][k] = c[k] - BOX_HALF[k]; b.b[1][k] = c[k] + BOX_HALF[k]; }
        q.boxes.push_back(b);
    }
    return q;
}

/* ---------------------------------------------------------------- per-level results */

enum { E_KCC, E_EMBREE, E_EMBREE_ROBUST, E_BULLET, E_ODE, E_COUNT };

struct LevelResult {
    char name[64];
    double down_ns[E_COUNT], random_ns[E_COUNT];
    double box_kcc_ns, box_kcc_bounds_ns, box_bullet_ns, box_ode_ns, box_bullet_exact_ns;
    double agree_down, agree_random; /* kcc vs embree-robust, % */
    uint32_t triangles;
    double tree_bytes_per_tri, mesh_bytes_per_tri;
    double build_ms[E_COUNT];
};

/* Same hit/miss and, on a hit, |t - t_ref| <= 1e-4 * max(t_ref, 0.1 m). */
bool same_answer(const RayRes &a, const RayRes &b)
{
    if (a.hit != b.hit) return false;
    if (!a.hit) return true;
    return fabsf(a.t - b.t) <= 1e-4f * std::max(fabsf(b.t), 0.1f);
}

double agreement(const std::vector<RayRes> &a, const std::vector<RayRes> &ref)
{
    size_t same = 0;
    for (size_t i = 0; i < a.size(); ++i) same += same_answer(a[i], ref[i]);
    return a.empty() ? 100.0 : 100.0 * (double)same / (double)a.size();
}

/* Times every engine on one ray set; fills ns[] and the answers of each engine. */
void run_rays(const std::vector<Ray> &rays, kcc_mesh *km, RTCScene es, RTCScene esr, const BulletMesh &bm,
              const OdeMesh &om, double ns[E_COUNT], std::vector<RayRes> res[E_COUNT])
{
    int n = (int)rays.size();
    for (int e = 0; e < E_COUNT; ++e) res[e].assign(rays.size(), RayRes{false, 0.0f, 0});
    std::vector<Pass> passes(E_COUNT);
    passes[E_KCC] = pass(n, [&](int i) {
        kcc_ray_hit h;
        bool hit = kcc_mesh_raycast(km, rays[i].o, rays[i].d, rays[i].tmax, &h);
        res[E_KCC][i] = RayRes{hit, hit ? h.t : 0.0f, hit ? h.triangle : 0};
    });
    passes[E_EMBREE] = pass(n, [&](int i) {
        float t = 0.0f;
        unsigned prim = 0;
        bool hit = embree_ray(es, rays[i].o, rays[i].d, rays[i].tmax, &t, &prim);
        res[E_EMBREE][i] = RayRes{hit, t, prim};
    });
    passes[E_EMBREE_ROBUST] = pass(n, [&](int i) {
        float t = 0.0f;
        unsigned prim = 0;
        bool hit = embree_ray(esr, rays[i].o, rays[i].d, rays[i].tmax, &t, &prim);
        res[E_EMBREE_ROBUST][i] = RayRes{hit, t, prim};
    });
    passes[E_BULLET] = pass(n, [&](int i) {
        float t = 0.0f;
        bool hit = bullet_ray(bm.shape, rays[i], &t);
        res[E_BULLET][i] = RayRes{hit, t, 0};
    });
    passes[E_ODE] = pass(n, [&](int i) {
        float t = 0.0f;
        bool hit = ode_ray(om, rays[i], &t);
        res[E_ODE][i] = RayRes{hit, t, 0};
    });
    time_interleaved(n, passes, ns);
}

void print_ray_row(const char *label, const double ns[E_COUNT])
{
    printf("  %-22s %8.1f %8.1f %8.1f %8.1f %8.1f  | %6.2f %6.2f %6.2f %6.2f\n", label, ns[E_KCC],
           ns[E_EMBREE], ns[E_EMBREE_ROBUST], ns[E_BULLET], ns[E_ODE], ns[E_EMBREE] / ns[E_KCC],
           ns[E_EMBREE_ROBUST] / ns[E_KCC], ns[E_BULLET] / ns[E_KCC], ns[E_ODE] / ns[E_KCC]);
}

double hit_agreement(const std::vector<RayRes> &a, const std::vector<RayRes> &ref)
{
    size_t same = 0;
    for (size_t i = 0; i < a.size(); ++i) same += a[i].hit == ref[i].hit;
    return a.empty() ? 100.0 : 100.0 * (double)same / (double)a.size();
}

void print_agreement(const char *label, const std::vector<RayRes> res[E_COUNT])
{
    printf("  agreement with embree-robust, %-9s kcc %7.3f%% (hit/miss %7.3f%%)  embree %7.3f%%  bullet %7.3f%%  ode %7.3f%%\n",
           label, agreement(res[E_KCC], res[E_EMBREE_ROBUST]), hit_agreement(res[E_KCC], res[E_EMBREE_ROBUST]),
           agreement(res[E_EMBREE], res[E_EMBREE_ROBUST]), agreement(res[E_BULLET], res[E_EMBREE_ROBUST]),
           agreement(res[E_ODE], res[E_EMBREE_ROBUST]));
}

/* The referee for disagreements: closest hit over all triangles in double precision (Moller-Trumbore,
 * either face, no epsilon beyond exact zero determinant). */
bool brute_ray(const kcc_level &L, const Ray &r, double *t_out, uint32_t *tri_out)
{
    bool found = false;
    double best = r.tmax;
    for (uint32_t t = 0; t < L.triangle_count; ++t) {
        double a[3], e1[3], e2[3], d[3], s[3];
        for (int k = 0; k < 3; ++k) {
            a[k] = L.positions[3 * L.indices[3 * t] + k];
            e1[k] = L.positions[3 * L.indices[3 * t + 1] + k] - a[k];
            e2[k] = L.positions[3 * L.indices[3 * t + 2] + k] - a[k];
            d[k] = r.d[k];
            s[k] = r.o[k] - a[k];
        }
        double p[3] = {d[1] * e2[2] - d[2] * e2[1], d[2] * e2[0] - d[0] * e2[2], d[0] * e2[1] - d[1] * e2[0]};
        double det = e1[0] * p[0] + e1[1] * p[1] + e1[2] * p[2];
        if (det == 0.0) continue;
        double u = (s[0] * p[0] + s[1] * p[1] + s[2] * p[2]) / det;
        if (u < 0.0 || u > 1.0) continue;
        double qv[3] = {s[1] * e1[2] - s[2] * e1[1], s[2] * e1[0] - s[0] * e1[2], s[0] * e1[1] - s[1] * e1[0]};
        double v = (d[0] * qv[0] + d[1] * qv[1] + d[2] * qv[2]) / det;
        if (v < 0.0 || u + v > 1.0) continue;
        double tt = (e2[0] * qv[0] + e2[1] * qv[1] + e2[2] * qv[2]) / det;
        if (tt >= 0.0 && tt <= best) {
            best = tt;
            *tri_out = t;
            found = true;
        }
    }
    *t_out = best;
    return found;
}

/* Lists the first rays where kcc and embree-robust disagree, with the double-precision referee. */
void print_disagreements(const char *label, const kcc_level &L, const std::vector<Ray> &rays,
                         const std::vector<RayRes> res[E_COUNT])
{
    int shown = 0;
    for (size_t i = 0; i < rays.size() && shown < 3; ++i) {
        const RayRes &k = res[E_KCC][i], &e = res[E_EMBREE_ROBUST][i];
        if (same_answer(k, e)) continue;
        const Ray &r = rays[i];
        double bt = 0.0;
        uint32_t btri = 0;
        bool bh = brute_ray(L, r, &bt, &btri);
        printf("    %s ray %zu o=(%.9g %.9g %.9g) d=(%.9g %.9g %.9g) tmax %g:\n"
               "      kcc %s t=%.7g tri %u | embree-robust %s t=%.7g tri %u | double brute force %s t=%.9g tri %u\n",
               label, i, r.o[0], r.o[1], r.o[2], r.d[0], r.d[1], r.d[2], r.tmax, k.hit ? "hit" : "miss", k.t,
               k.tri, e.hit ? "hit" : "miss", e.t, e.tri, bh ? "hit" : "miss", bt, btri);
        ++shown;
    }
}

/* Every engine's acceleration structure over one level. */
struct Engines {
    kcc_mesh *km = nullptr;
    RTCScene es = nullptr, esr = nullptr; /* Embree, default and robust */
    std::unique_ptr<BulletMesh> bm;
    std::unique_ptr<OdeMesh> om;
    ~Engines()
    {
        kcc_mesh_destroy(km);
        if (es) rtcReleaseScene(es);
        if (esr) rtcReleaseScene(esr);
    }
};

/* Builds every engine's structure: median of 3 builds (1 for big meshes), into out->build_ms; the peers
 * build single-threaded too (Embree: threads=1). False when kcc cannot build the mesh. */
bool build_engines(const bench_level &bl, RTCDevice dev, Engines *en, LevelResult *out)
{
    const kcc_level &L = bl.level;
    const int reps = L.triangle_count < 200000 ? 3 : 1;
    double v[3];
    for (int r = 0; r < reps; ++r) {
        kcc_mesh_destroy(en->km);
        double t0 = bench_now_ns();
        en->km = bench_build_mesh(&bl);
        v[r] = ms_since(t0);
        if (!en->km) return false;
    }
    out->build_ms[E_KCC] = bench_median(v, reps);
    for (int r = 0; r < reps; ++r) {
        if (en->es) rtcReleaseScene(en->es);
        en->es = embree_build(dev, L, false, &v[r]);
    }
    out->build_ms[E_EMBREE] = bench_median(v, reps);
    for (int r = 0; r < reps; ++r) {
        if (en->esr) rtcReleaseScene(en->esr);
        en->esr = embree_build(dev, L, true, &v[r]);
    }
    out->build_ms[E_EMBREE_ROBUST] = bench_median(v, reps);
    for (int r = 0; r < reps; ++r) {
        en->bm.reset(new BulletMesh);
        bullet_build(L, en->bm.get(), &v[r]);
    }
    out->build_ms[E_BULLET] = bench_median(v, reps);
    for (int r = 0; r < reps; ++r) {
        en->om.reset();
        en->om.reset(new OdeMesh);
        ode_build(L, en->om.get(), &v[r]);
    }
    out->build_ms[E_ODE] = bench_median(v, reps);
    return true;
}

/* The level's header: triangles, the kcc tree's and mesh's bytes per triangle, every build time. */
void report_mesh(const bench_level &bl, const kcc_mesh *km, LevelResult *out)
{
    kcc_mesh_stats st;
    kcc_mesh_get_stats(km, &st);
    printf("\n== %s: %u triangles (%u degenerate), %u spawns\n", bl.name, st.triangles, st.degenerate,
           bl.level.spawn_count);
    printf("  kcc tree: %.1f bytes/triangle (%u nodes, %u leaves, depth %u); mesh total %.1f bytes/triangle\n",
           (double)st.tree_bytes / st.triangles, st.nodes, st.leaves, st.depth,
           (double)kcc_mesh_memory_bytes(km) / st.triangles);
    printf("  build ms: kcc %.2f | embree %.2f | embree-robust %.2f | bullet %.2f | ode %.2f\n", out->build_ms[E_KCC],
           out->build_ms[E_EMBREE], out->build_ms[E_EMBREE_ROBUST], out->build_ms[E_BULLET], out->build_ms[E_ODE]);
    out->triangles = st.triangles;
    out->tree_bytes_per_tri = (double)st.tree_bytes / st.triangles;
    out->mesh_bytes_per_tri = (double)kcc_mesh_memory_bytes(km) / st.triangles;
}

/* Each engine's answer to every box query (Bullet's exact query on the first nb_exact boxes only). */
struct BoxAnswers {
    std::vector<uint32_t> kcc_count, kcc_bcount, bul_count;
    std::vector<int> ode_count, bul_exact;
    int nb_exact = 0;
};

/* Times the box queries of every engine into out and keeps their answers. */
void time_boxes(const QuerySets &q, const Engines &en, LevelResult *out, BoxAnswers *answers)
{
    const int nb = (int)q.boxes.size();
    answers->kcc_count.assign(q.boxes.size(), 0);
    answers->kcc_bcount.assign(q.boxes.size(), 0);
    answers->bul_count.assign(q.boxes.size(), 0);
    answers->ode_count.assign(q.boxes.size(), 0);
    answers->bul_exact.assign(q.boxes.size(), 0);
    uint32_t buf[BOX_CAP];
    kcc_mesh *km = en.km;
    const BulletMesh &bm = *en.bm;
    const OdeMesh &om = *en.om;
    std::vector<Pass> bpasses;
    bpasses.push_back(pass(nb, [&](int i) { answers->kcc_count[i] = kcc_mesh_overlap_aabb(km, q.boxes[i].b, buf, BOX_CAP); }));
    bpasses.push_back(pass(nb, [&](int i) { answers->kcc_bcount[i] = kcc_mesh_query_bounds(km, q.boxes[i].b, buf, BOX_CAP); }));
    bpasses.push_back(pass(nb, [&](int i) {
        BulletBoxCount cb;
        const Box &b = q.boxes[i];
        bm.shape->processAllTriangles(&cb, btVector3(b.b[0][0], b.b[0][1], b.b[0][2]),
                                      btVector3(b.b[1][0], b.b[1][1], b.b[1][2]));
        answers->bul_count[i] = cb.count;
    }));
    static dContactGeom contacts[BOX_CAP];
    bpasses.push_back(pass(nb, [&](int i) { answers->ode_count[i] = ode_box(om, q.boxes[i], contacts, BOX_CAP); }));
    BulletContactWorld bcw(bm.shape);
    /* Bullet's exact query costs ~50 us: only the first tenth of the boxes (its agreement check too) */
    const int nb_exact = std::max(1, nb / 10);
    answers->nb_exact = nb_exact;
    bpasses.push_back(pass(nb_exact, [&](int i) { answers->bul_exact[i] = bullet_box_exact(bcw, q.boxes[i]); }));
    double box_ns[5];
    time_interleaved(nb, bpasses, box_ns, {nb, nb, nb, nb, nb_exact});
    out->box_kcc_ns = box_ns[0];
    out->box_kcc_bounds_ns = box_ns[1];
    out->box_bullet_ns = box_ns[2];
    out->box_ode_ns = box_ns[3];
    out->box_bullet_exact_ns = box_ns[4];
}

/* The timing table: rays and boxes, ns per query and peer / kcc ratios. */
void print_timings(const LevelResult &r, int nb_exact)
{
    printf("  %-22s %8s %8s %8s %8s %8s  | %6s %6s %6s %6s\n", "ns/query (median of 7)", "kcc", "embree",
           "emb-rob", "bullet", "ode", "emb/k", "robk", "bul/k", "ode/k");
    print_ray_row("down 2 m", r.down_ns);
    print_ray_row("random 20 m", r.random_ns);
    printf("  %-22s %8.1f %8s %8s %8.1f %8.1f  | %6s %6s %6.2f %6.2f   (kcc bounds-only %.1f)\n",
           "box 0.94x1.75x0.94", r.box_kcc_ns, "-", "-", r.box_bullet_ns, r.box_ode_ns, "-", "-",
           r.box_bullet_ns / r.box_kcc_ns, r.box_ode_ns / r.box_kcc_ns, r.box_kcc_bounds_ns);
    printf("    (box: kcc = exact SAT overlap; bullet = processAllTriangles, leaf bounds only; ode = dCollide box vs trimesh contacts;\n"
           "     bullet exact = contactTest of a btBoxShape object, GJK/EPA contacts, first %d boxes: %.1f ns, %.2f x kcc)\n",
           nb_exact, r.box_bullet_exact_ns, r.box_bullet_exact_ns / r.box_kcc_ns);
}

/* The rays' cross-checks: agreement with embree-robust, the first disagreements, down rays hitting. */
void check_ray_answers(const kcc_level &L, const QuerySets &q, const std::vector<RayRes> down_res[E_COUNT],
                       const std::vector<RayRes> rnd_res[E_COUNT], LevelResult *out)
{
    print_agreement("down:", down_res);
    print_agreement("random:", rnd_res);
    print_disagreements("down", L, q.down, down_res);
    print_disagreements("random", L, q.random, rnd_res);
    out->agree_down = agreement(down_res[E_KCC], down_res[E_EMBREE_ROBUST]);
    out->agree_random = agreement(rnd_res[E_KCC], rnd_res[E_EMBREE_ROBUST]);
    size_t down_hits = 0;
    for (const RayRes &r : down_res[E_EMBREE_ROBUST]) down_hits += r.hit;
    printf("  down rays hitting (embree-robust): %.1f%%\n", 100.0 * (double)down_hits / (double)q.down.size());
}

/* Brute force over triangle bounds for the first `sample` boxes: how many of kcc's bounds-query
 * counts differ from it. */
size_t bounds_mismatches(const kcc_level &L, const QuerySets &q, const BoxAnswers &answers, int sample)
{
    size_t kb_mismatch = 0;
    for (int i = 0; i < sample; ++i) {
        uint32_t bf = 0;
        const Box &b = q.boxes[i];
        for (uint32_t t = 0; t < L.triangle_count; ++t) {
            bool sep = false;
            for (int k = 0; k < 3 && !sep; ++k) {
                float p = L.positions[3 * L.indices[3 * t] + k], c = L.positions[3 * L.indices[3 * t + 1] + k],
                      d = L.positions[3 * L.indices[3 * t + 2] + k];
                float mn = std::min(p, std::min(c, d)), mx = std::max(p, std::max(c, d));
                sep = mn > b.b[1][k] || mx < b.b[0][k];
            }
            bf += !sep;
        }
        kb_mismatch += bf != answers.kcc_bcount[i];
    }
    return kb_mismatch;
}

/* The boxes' cross-checks (untimed): the exact answer inside the bounds-only supersets, kcc's bounds
 * query against brute force on a sample, ODE and Bullet's exact query agreeing on touching. */
void check_box_answers(const kcc_level &L, const QuerySets &q, const Engines &en, const BoxAnswers &answers)
{
    const int nb = (int)q.boxes.size(), nb_exact = answers.nb_exact;
    uint64_t sum_exact = 0, sum_kb = 0, sum_bb = 0, capped = 0;
    size_t not_subset = 0, ode_agree = 0, ode_capped = 0, boxes_touching = 0, bul_exact_agree = 0;
    std::vector<uint32_t> exact(BOX_CAP);
    std::vector<int> blist;
    for (int i = 0; i < nb; ++i) {
        sum_exact += answers.kcc_count[i];
        sum_kb += answers.kcc_bcount[i];
        sum_bb += answers.bul_count[i];
        boxes_touching += answers.kcc_count[i] > 0;
        if (answers.kcc_count[i] > answers.kcc_bcount[i]) ++not_subset;
        if (answers.kcc_count[i] > (uint32_t)BOX_CAP) { ++capped; continue; }
        uint32_t ne = kcc_mesh_overlap_aabb(en.km, q.boxes[i].b, exact.data(), BOX_CAP);
        BulletBoxCount cb;
        blist.clear();
        cb.list = &blist;
        const Box &b = q.boxes[i];
        en.bm->shape->processAllTriangles(&cb, btVector3(b.b[0][0], b.b[0][1], b.b[0][2]),
                                          btVector3(b.b[1][0], b.b[1][1], b.b[1][2]));
        std::sort(blist.begin(), blist.end());
        for (uint32_t k = 0; k < ne; ++k)
            if (!std::binary_search(blist.begin(), blist.end(), (int)exact[k])) { ++not_subset; break; }
        ode_agree += (answers.kcc_count[i] > 0) == (answers.ode_count[i] > 0);
        if (i < nb_exact) bul_exact_agree += (answers.kcc_count[i] > 0) == (answers.bul_exact[i] > 0);
        ode_capped += answers.ode_count[i] >= BOX_CAP;
    }
    const int sample = std::min(nb, 200);
    const size_t kb_mismatch = bounds_mismatches(L, q, answers, sample);
    printf("  boxes: exact overlaps %.2f triangles/query (%.1f%% of boxes touch), kcc bounds %.2f, bullet bounds %.2f\n",
           (double)sum_exact / nb, 100.0 * (double)boxes_touching / nb, (double)sum_kb / nb, (double)sum_bb / nb);
    printf("  boxes: exact set outside bullet's bounds superset: %zu; kcc bounds vs brute force mismatches: %zu of %d;"
           " ODE contact iff kcc overlap: %.2f%%%s;"
           " Bullet exact contact iff kcc overlap: %.2f%%\n",
           not_subset, kb_mismatch, sample, 100.0 * (double)ode_agree / (double)(nb - capped),
           ode_capped ? " (some ODE answers capped)" : "", 100.0 * (double)bul_exact_agree / (double)nb_exact);
}

bool run_level(const bench_level &bl, bool enclosed, RTCDevice dev, LevelResult *out)
{
    const kcc_level &L = bl.level;
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", bl.name);
    Engines en;
    if (!build_engines(bl, dev, &en, out)) return false;
    report_mesh(bl, en.km, out);

    double tq = bench_now_ns();
    QuerySets q = make_queries(en.esr, L, enclosed, 0xC0FFEEu);
    printf("  queries: %zu down, %zu random, %zu boxes (%d against walls), generated in %.0f ms\n",
           q.down.size(), q.random.size(), q.boxes.size(), q.against_wall, ms_since(tq));
    if (q.down.empty() || q.random.empty() || q.boxes.empty()) {
        printf("  no floor found: skipped\n");
        return false;
    }

    std::vector<RayRes> down_res[E_COUNT], rnd_res[E_COUNT];
    run_rays(q.down, en.km, en.es, en.esr, *en.bm, *en.om, out->down_ns, down_res);
    run_rays(q.random, en.km, en.es, en.esr, *en.bm, *en.om, out->random_ns, rnd_res);
    BoxAnswers boxes;
    time_boxes(q, en, out, &boxes);
    print_timings(*out, boxes.nb_exact);
    check_ray_answers(L, q, down_res, rnd_res, out);
    check_box_answers(L, q, en, boxes);
    return true;
}

struct Target {
    const char *what;
    double need;
    double worst;
    const char *worst_level;
};

void check(Target *t, double ratio, const char *level)
{
    if (ratio < t->worst) { t->worst = ratio; t->worst_level = level; }
}

/* Runs every level of dir (the shared levels; generated ones without them) and the generated 1M-triangle
 * mesh (not with KCC_BENCH_NO_BIG), those whose name contains `only` when set. */
std::vector<LevelResult> run_levels(const char *dir, const char *only, RTCDevice dev)
{
    std::vector<LevelResult> results;
    static char names[BENCH_MAX_LEVELS][64];
    int nlevels = bench_level_list(dir, names, BENCH_MAX_LEVELS);
    bool shared = nlevels > 0;
    if (!shared) printf("no levels at %s: generated meshes only\n", dir);
    int count = shared ? nlevels : 2;
    for (int i = 0; i <= count; ++i) {
        bench_level bl;
        bool ok;
        if (i == count && getenv("KCC_BENCH_NO_BIG")) break; /* the imported maps' run: no 1M mesh again */
        if (i == count) ok = bench_generate_big(700, 2000, &bl);
        else if (shared) ok = bench_level_load(dir, names[i], &bl);
        else ok = bench_level_generate(i == 0 ? "arena" : "terrain", &bl);
        if (!ok) continue;
        if (only && !strstr(bl.name, only)) { bench_level_free(&bl); continue; }
        LevelResult r;
        if (run_level(bl, shared && i < count, dev, &r)) results.push_back(r);
        bench_level_free(&bl);
        fflush(stdout);
    }
    return results;
}

/* Each target's worst level and whether it passes. */
void print_summary(const std::vector<LevelResult> &results)
{
    Target t_bul = {"rays >= 3x faster than Bullet", 3.0, 1e30, ""};
    Target t_ode = {"rays >= 3x faster than ODE", 3.0, 1e30, ""};
    Target t_emb = {"rays >= 0.5x Embree's throughput", 0.5, 1e30, ""};
    Target t_emb_down = {"ground probes match Embree (goal)", 1.0, 1e30, ""};
    Target t_box_ode = {"exact box overlap >= 5x faster than ODE", 5.0, 1e30, ""};
    Target t_box_bul = {"exact box overlap no slower than Bullet bounds-only", 1.0, 1e30, ""};
    Target t_agree = {"kcc rays agree with embree-robust (%)", 99.99, 1e30, ""};
    for (const LevelResult &r : results) {
        for (const double *ns : {r.down_ns, r.random_ns}) {
            check(&t_bul, ns[E_BULLET] / ns[E_KCC], r.name);
            check(&t_ode, ns[E_ODE] / ns[E_KCC], r.name);
            check(&t_emb, ns[E_EMBREE] / ns[E_KCC], r.name);
        }
        check(&t_emb_down, r.down_ns[E_EMBREE] / r.down_ns[E_KCC], r.name);
        check(&t_box_ode, r.box_ode_ns / r.box_kcc_ns, r.name);
        check(&t_box_bul, r.box_bullet_ns / r.box_kcc_ns, r.name);
        check(&t_agree, std::min(r.agree_down, r.agree_random), r.name);
    }
    printf("\nsummary (worst level; ratio = peer time / kcc time):\n");
    for (const Target *t : {&t_bul, &t_ode, &t_emb, &t_emb_down, &t_box_ode, &t_box_bul, &t_agree})
        printf("  %-52s need >= %-6g worst %8.3f (%s)  %s\n", t->what, t->need, t->worst, t->worst_level,
               results.empty() ? "n/a" : t->worst >= t->need ? "PASS" : "FAIL");
}

/* The same figures as markdown tables, for docs/bench.md. */
void print_markdown(const std::vector<LevelResult> &results)
{
    printf("\nmarkdown:\n\n| level | triangles | kcc tree B/tri | kcc mesh B/tri | build ms kcc | embree | embree robust | bullet | ode |\n"
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (const LevelResult &r : results)
        printf("| %s | %u | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |\n", r.name, r.triangles, r.tree_bytes_per_tri,
               r.mesh_bytes_per_tri, r.build_ms[E_KCC], r.build_ms[E_EMBREE], r.build_ms[E_EMBREE_ROBUST],
               r.build_ms[E_BULLET], r.build_ms[E_ODE]);
    for (int which = 0; which < 2; ++which) {
        printf("\n| %s rays, ns/query | kcc | embree | embree robust | bullet | ode | embree/kcc | bullet/kcc | ode/kcc | agree |\n"
               "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n", which ? "random 20 m" : "down 2 m");
        for (const LevelResult &r : results) {
            const double *ns = which ? r.random_ns : r.down_ns;
            printf("| %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.2f | %.2f | %.2f | %.3f%% |\n", r.name, ns[E_KCC],
                   ns[E_EMBREE], ns[E_EMBREE_ROBUST], ns[E_BULLET], ns[E_ODE], ns[E_EMBREE] / ns[E_KCC],
                   ns[E_BULLET] / ns[E_KCC], ns[E_ODE] / ns[E_KCC], which ? r.agree_random : r.agree_down);
        }
    }
    printf("\n| box 0.94 x 1.75 x 0.94, ns/query | kcc exact | kcc bounds-only | bullet bounds-only | bullet exact (contactTest) | ode |"
           " bullet bounds/kcc | bullet exact/kcc | ode/kcc |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (const LevelResult &r : results)
        printf("| %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.2f | %.2f | %.2f |\n", r.name, r.box_kcc_ns, r.box_kcc_bounds_ns,
               r.box_bullet_ns, r.box_bullet_exact_ns, r.box_ode_ns, r.box_bullet_ns / r.box_kcc_ns,
               r.box_bullet_exact_ns / r.box_kcc_ns, r.box_ode_ns / r.box_kcc_ns);
}

} // namespace

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "../shared/levels";
    const char *only = getenv("KCC_BENCH_ONLY"); /* run only the levels whose name contains this */
    if (getenv("KCC_BENCH_QUERIES")) N_QUERIES = std::max(1, atoi(getenv("KCC_BENCH_QUERIES")));
    dInitODE2(0);
    dAllocateODEDataForThread(dAllocateMaskAll);
    RTCDevice dev = rtcNewDevice("threads=1");
    if (!dev) { fprintf(stderr, "embree: rtcNewDevice failed\n"); return 1; }

    printf("clock %s\n", bench_clock_name());
    bench_print_load("at the start");
    bench_warmup(300.0);
    printf("bench_collide: single-thread ns/query, median of %d runs of up to %d queries each;\n"
           "ratios are peer time / kcc time (above 1: kcc faster). Embree built with threads=1, default quality.\n",
           RUNS, N_QUERIES);

    double t_start = bench_wall_ns();
    std::vector<LevelResult> results = run_levels(dir, only, dev);
    print_summary(results);
    print_markdown(results);
    bench_print_load("at the end");
    printf("\ntotal %.1f s\n", (bench_wall_ns() - t_start) * 1e-9);

    rtcReleaseDevice(dev);
    dCloseODE();
    return 0;
}
