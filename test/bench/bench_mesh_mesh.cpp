/* bench_mesh_mesh.cpp: mesh against mesh on the shared levels beside Bullet (GImpact against
 * GImpact through a collision dispatcher) and ODE (trimesh against trimesh, OPCODE): a level
 * against a rotated, shifted copy of a chunk of itself, and a prop-sized sphere mesh against the
 * level. Prints ns per query medians, the ratios (peer time / kcc time) and the pair counts each
 * found, summed over the queries (a cross-check: Bullet and ODE report contacts, counted here as
 * distinct triangle pairs, and cap or merge them; kcc reports every exactly intersecting pair). */
#include "bench.h"

#include <algorithm>
#include <vector>

#include <btBulletCollisionCommon.h>
#include <BulletCollision/Gimpact/btGImpactCollisionAlgorithm.h>
#include <BulletCollision/Gimpact/btGImpactShape.h>
#include <ode/ode.h>

static int N_QUERIES = 200;   /* per scene; KCC_BENCH_QUERIES overrides */
static const float CHUNK_HALF = 4.0f;   /* m: the chunk is the level's triangles within this cube */

/* A triangle soup owned here: positions 3 per vertex, indices 3 per triangle. */
struct Soup {
    std::vector<float> pos;
    std::vector<uint32_t> idx;
    uint32_t triangles() const { return (uint32_t)(idx.size() / 3); }
};

static Soup level_soup(const kcc_level &L)
{
    Soup s;
    s.pos.assign(L.positions, L.positions + 3 * L.vertex_count);
    s.idx.assign(L.indices, L.indices + 3 * L.triangle_count);
    return s;
}

/* The level's triangles whose centroid lies within CHUNK_HALF of c (an axis-aligned cube). */
static Soup chunk_soup(const kcc_level &L, const float c[3])
{
    Soup s;
    for (uint32_t t = 0; t < L.triangle_count; ++t) {
        float mid[3] = {0, 0, 0};
        for (int k = 0; k < 3; ++k)
            for (int j = 0; j < 3; ++j)
                mid[j] += L.positions[3 * L.indices[3 * t + k] + j] / 3.0f;
        if (fabsf(mid[0] - c[0]) > CHUNK_HALF || fabsf(mid[1] - c[1]) > CHUNK_HALF ||
            fabsf(mid[2] - c[2]) > CHUNK_HALF)
            continue;
        for (int k = 0; k < 3; ++k) {
            s.idx.push_back((uint32_t)(s.pos.size() / 3));
            for (int j = 0; j < 3; ++j)
                s.pos.push_back(L.positions[3 * L.indices[3 * t + k] + j]);
        }
    }
    return s;
}

/* A UV sphere of radius r around the origin (rings x segments, 2 triangles a quad): a prop. */
static Soup sphere_soup(float r, int rings, int segments)
{
    Soup s;
    for (int i = 0; i <= rings; ++i)
        for (int j = 0; j <= segments; ++j) {
            const float th = 3.14159265f * (float)i / (float)rings, ph = 6.2831853f * (float)j / (float)segments;
            s.pos.push_back(r * sinf(th) * cosf(ph));
            s.pos.push_back(r * cosf(th));
            s.pos.push_back(r * sinf(th) * sinf(ph));
        }
    for (int i = 0; i < rings; ++i)
        for (int j = 0; j < segments; ++j) {
            const uint32_t a = (uint32_t)(i * (segments + 1) + j), b = a + 1, c = a + (uint32_t)segments + 1, d = c + 1;
            if (i > 0) s.idx.insert(s.idx.end(), {a, c, b});
            if (i < rings - 1) s.idx.insert(s.idx.end(), {b, c, d});
        }
    return s;
}

/* A random rotation of up to max_angle (rad) about a random axis, turning about `center`, then
 * shifted by up to `shift` (m) per axis: world = R p + (center + shift - R center). */
static kcc_transform random_pose(bench_rng *r, const float center[3], float max_angle, float shift)
{
    float axis[3];
    bench_rng_dir(r, axis);
    const float angle = bench_rng_range(r, 0.0f, max_angle);
    kcc_transform t;
    for (int k = 0; k < 3; ++k)
        t.rotation[k] = sinf(0.5f * angle) * axis[k];
    t.rotation[3] = cosf(0.5f * angle);
    kcc_transform turn = t;
    turn.position[0] = turn.position[1] = turn.position[2] = 0.0f;
    float rc[3];
    kcc_transform_point(&turn, center, rc);
    for (int k = 0; k < 3; ++k)
        t.position[k] = center[k] + bench_rng_range(r, -shift, shift) - rc[k];
    return t;
}

static kcc_mesh *kcc_build(const Soup &s)
{
    kcc_mesh_desc d = {};
    d.positions = s.pos.data();
    d.vertex_count = (uint32_t)(s.pos.size() / 3);
    d.indices = s.idx.data();
    d.triangle_count = s.triangles();
    kcc_mesh *m = nullptr;
    return kcc_mesh_build(&d, &m) == KCC_OK ? m : nullptr;
}

/* ---------------------------------------------------------------- Bullet: GImpact vs GImpact */

struct BulletBody {
    btTriangleIndexVertexArray *array = nullptr;
    btGImpactMeshShape *shape = nullptr;
    btCollisionObject *object = nullptr;
    ~BulletBody() { delete object; delete shape; delete array; }
};

static void bullet_body(Soup &s, BulletBody *b)
{
    b->array = new btTriangleIndexVertexArray((int)s.triangles(), (int *)s.idx.data(), 3 * sizeof(int),
                                              (int)(s.pos.size() / 3), (btScalar *)s.pos.data(), 3 * sizeof(float));
    b->shape = new btGImpactMeshShape(b->array);
    b->shape->setMargin(0.0f);  /* exact surfaces, as kcc tests them */
    b->shape->updateBound();
    b->object = new btCollisionObject();
    b->object->setCollisionShape(b->shape);
}

static btTransform bullet_transform(const kcc_transform *t)
{
    btTransform x;
    x.setIdentity();
    if (t) {
        x.setRotation(btQuaternion(t->rotation[0], t->rotation[1], t->rotation[2], t->rotation[3]));
        x.setOrigin(btVector3(t->position[0], t->position[1], t->position[2]));
    }
    return x;
}

/* Collects the triangle pairs of the contacts Bullet reports. */
struct BulletPairs : public btCollisionWorld::ContactResultCallback {
    std::vector<uint64_t> pairs;
    btScalar addSingleResult(btManifoldPoint &, const btCollisionObjectWrapper *, int, int index0,
                             const btCollisionObjectWrapper *, int, int index1) override
    {
        pairs.push_back((uint64_t)(uint32_t)index0 << 32 | (uint32_t)index1);
        return 0;
    }
};

static uint32_t distinct(std::vector<uint64_t> &v)
{
    std::sort(v.begin(), v.end());
    return (uint32_t)(std::unique(v.begin(), v.end()) - v.begin());
}

/* ---------------------------------------------------------------- ODE: trimesh vs trimesh */

struct OdeBody {
    dTriMeshDataID data = nullptr;
    dGeomID geom = nullptr;
    ~OdeBody() { if (geom) dGeomDestroy(geom); if (data) dGeomTriMeshDataDestroy(data); }
};

static void ode_body(const Soup &s, OdeBody *b)
{
    b->data = dGeomTriMeshDataCreate();
    dGeomTriMeshDataBuildSingle(b->data, s.pos.data(), 3 * sizeof(float), (int)(s.pos.size() / 3),
                                s.idx.data(), (int)s.idx.size(), 3 * sizeof(dTriIndex));
    b->geom = dCreateTriMesh(0, b->data, nullptr, nullptr, nullptr);
    dGeomTriMeshEnableTC(b->geom, dTriMeshClass, 0); /* every query independent */
}

static void ode_place(dGeomID g, const kcc_transform *t)
{
    dQuaternion q = {t->rotation[3], t->rotation[0], t->rotation[1], t->rotation[2]};
    dGeomSetQuaternion(g, q);
    dGeomSetPosition(g, t->position[0], t->position[1], t->position[2]);
}

static const int ODE_MAX_CONTACTS = 65535;

/* ---------------------------------------------------------------- one scene */

struct SceneResult {
    double ns[3];          /* kcc, bullet, ode medians */
    uint64_t pairs[3];     /* summed over the queries */
};

/* Times N_QUERIES queries of moving mesh `b` (poses) against the level a, on the three. */
static SceneResult run_scene(Soup &a, Soup &b, const std::vector<kcc_transform> &poses)
{
    SceneResult r = {};
    kcc_mesh *ka = kcc_build(a), *kb = kcc_build(b);
    std::vector<kcc_tri_pair> out(1u << 20);
    std::vector<double> t_kcc, t_bul, t_ode;

    btDefaultCollisionConfiguration config;
    btCollisionDispatcher dispatcher(&config);
    btGImpactCollisionAlgorithm::registerAlgorithm(&dispatcher);
    /* contactPairTest asks the dispatcher for its closest-points algorithms: GImpact's too */
    static btGImpactCollisionAlgorithm::CreateFunc gimpact_closest;
    for (int i = 0; i < MAX_BROADPHASE_COLLISION_TYPES; ++i) {
        dispatcher.registerClosestPointsCreateFunc(GIMPACT_SHAPE_PROXYTYPE, i, &gimpact_closest);
        dispatcher.registerClosestPointsCreateFunc(i, GIMPACT_SHAPE_PROXYTYPE, &gimpact_closest);
    }
    btDbvtBroadphase broadphase;
    btCollisionWorld world(&dispatcher, &broadphase, &config);
    BulletBody ba, bb;
    bullet_body(a, &ba);
    bullet_body(b, &bb);
    OdeBody oa, ob;
    ode_body(a, &oa);
    ode_body(b, &ob);
    std::vector<dContactGeom> contacts(ODE_MAX_CONTACTS);

    for (const kcc_transform &p : poses) {
        double t0 = bench_now_ns();
        uint32_t n = kcc_mesh_overlap_mesh(ka, nullptr, kb, &p, out.data(), (uint32_t)out.size());
        t_kcc.push_back(bench_now_ns() - t0);
        r.pairs[0] += n;

        bb.object->setWorldTransform(bullet_transform(&p));
        BulletPairs cb;
        t0 = bench_now_ns();
        world.contactPairTest(ba.object, bb.object, cb);
        t_bul.push_back(bench_now_ns() - t0);
        r.pairs[1] += distinct(cb.pairs);

        ode_place(ob.geom, &p);
        t0 = bench_now_ns();
        int m = dCollide(oa.geom, ob.geom, ODE_MAX_CONTACTS, contacts.data(), sizeof(dContactGeom));
        t_ode.push_back(bench_now_ns() - t0);
        std::vector<uint64_t> op;
        for (int i = 0; i < m; ++i)
            op.push_back((uint64_t)(uint32_t)contacts[i].side1 << 32 | (uint32_t)contacts[i].side2);
        r.pairs[2] += distinct(op);
    }
    r.ns[0] = bench_median(t_kcc.data(), t_kcc.size());
    r.ns[1] = bench_median(t_bul.data(), t_bul.size());
    r.ns[2] = bench_median(t_ode.data(), t_ode.size());
    kcc_mesh_destroy(ka);
    kcc_mesh_destroy(kb);
    return r;
}

static void print_scene(const char *level, const char *scene, uint32_t ta, uint32_t tb, const SceneResult &r,
                        double *worst)
{
    const double faster = std::min(r.ns[1], r.ns[2]);
    printf("  %-12s %-22s %7u x %5u  kcc %10.0f  bullet %10.0f  ode %10.0f ns  ratio %6.2f  pairs kcc %8llu bullet %8llu ode %8llu\n",
           level, scene, ta, tb, r.ns[0], r.ns[1], r.ns[2], faster / r.ns[0], (unsigned long long)r.pairs[0],
           (unsigned long long)r.pairs[1], (unsigned long long)r.pairs[2]);
    *worst = std::min(*worst, faster / r.ns[0]);
}

static void run_level(const bench_level &bl, double *worst)
{
    const kcc_level &L = bl.level;
    Soup level = level_soup(L);
    kcc_mesh *probe = kcc_build(level);
    bench_rng rng = bench_rng_seed(42);
    /* a chunk around the first spawn point (or the level's middle), against rotated, shifted copies */
    float c[3] = {0, 0, 0};
    if (L.spawn_count) memcpy(c, L.spawns, sizeof c);
    Soup chunk = chunk_soup(L, c);
    if (chunk.triangles() > 0) {
        std::vector<kcc_transform> poses;
        for (int i = 0; i < N_QUERIES; ++i)
            poses.push_back(random_pose(&rng, c, 0.2f, 0.25f));
        SceneResult r = run_scene(level, chunk, poses);
        print_scene(bl.name, "level vs its chunk", level.triangles(), chunk.triangles(), r, worst);
    }
    /* a 0.5 m sphere prop (224 triangles) resting into the floor at the spawn points */
    Soup prop = sphere_soup(0.5f, 8, 16);
    std::vector<kcc_transform> poses;
    const float zero[3] = {0, 0, 0};
    for (int i = 0; i < N_QUERIES; ++i) {
        kcc_transform p = random_pose(&rng, zero, 3.14159f, 0.0f);
        const float *s = L.spawn_count ? L.spawns + 3 * (i % L.spawn_count) : zero;
        p.position[0] = s[0] + bench_rng_range(&rng, -0.3f, 0.3f);
        p.position[1] = s[1] + 1.0f;
        p.position[2] = s[2] + bench_rng_range(&rng, -0.3f, 0.3f);
        /* down to the floor below, the sphere's centre 0.3 m above it (sunk 0.2 m) */
        kcc_ray_hit hit;
        const float down[3] = {0.0f, -1.0f, 0.0f};
        if (kcc_mesh_raycast(probe, p.position, down, 50.0f, &hit))
            p.position[1] = hit.point[1] + 0.3f;
        poses.push_back(p);
    }
    kcc_mesh_destroy(probe);
    SceneResult r = run_scene(level, prop, poses);
    print_scene(bl.name, "sphere prop vs level", level.triangles(), prop.triangles(), r, worst);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "../shared/levels";
    if (getenv("KCC_BENCH_QUERIES")) N_QUERIES = std::max(1, atoi(getenv("KCC_BENCH_QUERIES")) / 20);
    dInitODE2(0);
    dAllocateODEDataForThread(dAllocateMaskAll);
    printf("clock %s\n", bench_clock_name());
    bench_print_load("at the start");
    bench_warmup(300.0);
    printf("bench_mesh_mesh: single-thread ns per query (median of %d), ratio = faster peer / kcc\n", N_QUERIES);
    static char names[BENCH_MAX_LEVELS][64];
    int n = bench_level_list(dir, names, BENCH_MAX_LEVELS);
    double worst = 1e30;
    for (int i = 0; i < (n > 0 ? n : 2); ++i) {
        bench_level bl;
        bool ok = n > 0 ? bench_level_load(dir, names[i], &bl) : bench_level_generate(i ? "terrain" : "arena", &bl);
        if (!ok) continue;
        run_level(bl, &worst);
        bench_level_free(&bl);
        fflush(stdout);
    }
    printf("summary: mesh/mesh >= 3x the faster peer: worst ratio %.2f  %s\n", worst, worst >= 3.0 ? "PASS" : "FAIL");
    bench_print_load("at the end");
    dCloseODE();
    return 0;
}
