/* bench_mesh_mesh.cpp: mesh against mesh on the shared levels beside Bullet (GImpact against
 * GImpact through a collision dispatcher) and ODE (trimesh against trimesh, OPCODE): a level
 * against a rotated, shifted copy of a chunk of itself, and a prop-sized sphere mesh against the
 * level. Prints ns per query medians, the ratios (peer time / kcc time) and the pair counts each
 * found, summed over the queries (a cross-check: Bullet and ODE report contacts, counted here as
 * distinct triangle pairs, and cap or merge them; kcc reports every exactly intersecting pair).
 * Also measures, on the same scenes, a tree of oriented boxes (each node fitted by the covariance of
 * its area-weighted triangles, split along its longest axis) against a tree of axis-aligned boxes
 * built the same way, both walked together with the 15-axis OBB test: node pairs tested, triangle
 * pairs tested, time (issue 24: an OBB tree is kept only if it wins). */
#include "bench.h"

#include <algorithm>
#include <vector>

#include <btBulletCollisionCommon.h>
#include <BulletCollision/Gimpact/btGImpactCollisionAlgorithm.h>
#include <BulletCollision/Gimpact/btGImpactShape.h>
#include <ode/ode.h>

static int N_QUERIES = 200;   /* per scene; KCC_BENCH_QUERIES overrides */
static const size_t BV_POSES = 20;  /* poses per scene for the OBB / AABB tree measurement */
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

/* ---------------------------------------------------------------- OBB tree against AABB tree */

/* A node volume: centre, three unit axes (rows) and half extents along them (an AABB: the identity). */
struct BvVol {
    double c[3], ax[3][3], h[3];
};
struct BvNode {
    BvVol v;
    int child[2];            /* -1: a leaf */
    uint32_t first, count;   /* a leaf's triangles in BvTree::tri */
};
struct BvTree {
    std::vector<BvNode> nodes;
    std::vector<uint32_t> tri;
};
static const uint32_t BV_LEAF = 4;

static void bv_corner(const Soup &s, uint32_t t, int k, double out[3])
{
    for (int j = 0; j < 3; ++j) out[j] = s.pos[3 * s.idx[3 * t + k] + j];
}

/* Unit eigenvectors of the symmetric 3x3 matrix a (rows of out), by Jacobi rotations. */
static void bv_eigen(double a[3][3], double out[3][3])
{
    double v[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    for (int sweep = 0; sweep < 50; ++sweep) {
        const double off = fabs(a[0][1]) + fabs(a[0][2]) + fabs(a[1][2]);
        if (off < 1e-15 * (fabs(a[0][0]) + fabs(a[1][1]) + fabs(a[2][2]) + 1e-300)) break;
        for (int p = 0; p < 2; ++p)
            for (int q = p + 1; q < 3; ++q) {
                if (a[p][q] == 0.0) continue;
                const double theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
                const double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
                const double c = 1.0 / sqrt(t * t + 1.0), sn = t * c;
                for (int k = 0; k < 3; ++k) { /* a = J^T a J */
                    const double akp = a[k][p], akq = a[k][q];
                    a[k][p] = c * akp - sn * akq, a[k][q] = sn * akp + c * akq;
                }
                for (int k = 0; k < 3; ++k) {
                    const double apk = a[p][k], aqk = a[q][k];
                    a[p][k] = c * apk - sn * aqk, a[q][k] = sn * apk + c * aqk;
                }
                for (int k = 0; k < 3; ++k) {
                    const double vkp = v[k][p], vkq = v[k][q];
                    v[k][p] = c * vkp - sn * vkq, v[k][q] = sn * vkp + c * vkq;
                }
            }
    }
    for (int i = 0; i < 3; ++i)
        for (int k = 0; k < 3; ++k) out[i][k] = v[k][i];
}

/* The node's volume over tris: oriented, the axes of the area-weighted covariance (Gottschalk, Lin
 * and Manocha 1996: the second moment of the triangles as surfaces); else the world axes. */
static void bv_fit(const Soup &s, const uint32_t *tris, uint32_t n, bool oriented, BvVol *v)
{
    double axes[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    if (oriented) {
        double area = 0, mean[3] = {0, 0, 0}, m2[3][3] = {};
        for (uint32_t i = 0; i < n; ++i) {
            double p[3][3], e0[3], e1[3], cr[3], mid[3];
            for (int k = 0; k < 3; ++k) bv_corner(s, tris[i], k, p[k]);
            for (int j = 0; j < 3; ++j)
                e0[j] = p[1][j] - p[0][j], e1[j] = p[2][j] - p[0][j], mid[j] = (p[0][j] + p[1][j] + p[2][j]) / 3;
            cr[0] = e0[1] * e1[2] - e0[2] * e1[1], cr[1] = e0[2] * e1[0] - e0[0] * e1[2];
            cr[2] = e0[0] * e1[1] - e0[1] * e1[0];
            const double a = 0.5 * sqrt(cr[0] * cr[0] + cr[1] * cr[1] + cr[2] * cr[2]);
            area += a;
            for (int j = 0; j < 3; ++j) {
                mean[j] += a * mid[j];
                for (int k = 0; k < 3; ++k)
                    m2[j][k] += a / 12.0 * (9 * mid[j] * mid[k] + p[0][j] * p[0][k] + p[1][j] * p[1][k] +
                                            p[2][j] * p[2][k]);
            }
        }
        if (area > 0) {
            double cov[3][3];
            for (int j = 0; j < 3; ++j)
                for (int k = 0; k < 3; ++k) cov[j][k] = m2[j][k] / area - mean[j] * mean[k] / (area * area);
            bv_eigen(cov, axes);
        }
    }
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (uint32_t i = 0; i < n; ++i)
        for (int k = 0; k < 3; ++k) {
            double p[3];
            bv_corner(s, tris[i], k, p);
            for (int a = 0; a < 3; ++a) {
                const double x = axes[a][0] * p[0] + axes[a][1] * p[1] + axes[a][2] * p[2];
                lo[a] = std::min(lo[a], x), hi[a] = std::max(hi[a], x);
            }
        }
    memcpy(v->ax, axes, sizeof axes);
    for (int j = 0; j < 3; ++j) v->c[j] = 0;
    for (int a = 0; a < 3; ++a) {
        v->h[a] = 0.5 * (hi[a] - lo[a]);
        for (int j = 0; j < 3; ++j) v->c[j] += axes[a][j] * 0.5 * (lo[a] + hi[a]);
    }
}

/* Top down: a node over tris[first, first + n), split at the median centroid along its longest axis. */
static int bv_build(const Soup &s, BvTree &t, uint32_t first, uint32_t n, bool oriented)
{
    const int id = (int)t.nodes.size();
    t.nodes.push_back(BvNode());
    BvVol v;
    bv_fit(s, &t.tri[first], n, oriented, &v);
    t.nodes[id].v = v;
    t.nodes[id].child[0] = t.nodes[id].child[1] = -1;
    t.nodes[id].first = first, t.nodes[id].count = n;
    if (n <= BV_LEAF) return id;
    const int a = v.h[0] >= v.h[1] && v.h[0] >= v.h[2] ? 0 : v.h[1] >= v.h[2] ? 1 : 2;
    auto key = [&](uint32_t tri) {
        double sum = 0;
        for (int k = 0; k < 3; ++k) {
            double p[3];
            bv_corner(s, tri, k, p);
            sum += v.ax[a][0] * p[0] + v.ax[a][1] * p[1] + v.ax[a][2] * p[2];
        }
        return sum;
    };
    std::nth_element(t.tri.begin() + first, t.tri.begin() + first + n / 2, t.tri.begin() + first + n,
                     [&](uint32_t x, uint32_t y) { return key(x) < key(y); });
    const int l = bv_build(s, t, first, n / 2, oriented);
    const int r = bv_build(s, t, first + n / 2, n - n / 2, oriented);
    t.nodes[id].child[0] = l, t.nodes[id].child[1] = r, t.nodes[id].count = 0;
    return id;
}

static void bv_tree(const Soup &s, bool oriented, BvTree *t)
{
    t->tri.resize(s.triangles());
    for (uint32_t i = 0; i < s.triangles(); ++i) t->tri[i] = i;
    t->nodes.reserve(2 * s.triangles() / BV_LEAF + 2);
    bv_build(s, *t, 0, s.triangles(), oriented);
}

/* The 15-axis separating test of two oriented boxes (Gottschalk; Ericson 4.4.1), with a slack so
 * the double rounding never separates boxes that touch; parallel edges are covered by the face axes. */
static bool bv_overlap(const BvVol &a, const BvVol &b, double slack)
{
    double R[3][3], AR[3][3], t[3], d[3];
    for (int j = 0; j < 3; ++j) d[j] = b.c[j] - a.c[j];
    for (int i = 0; i < 3; ++i) {
        t[i] = a.ax[i][0] * d[0] + a.ax[i][1] * d[1] + a.ax[i][2] * d[2];
        for (int j = 0; j < 3; ++j) {
            R[i][j] = a.ax[i][0] * b.ax[j][0] + a.ax[i][1] * b.ax[j][1] + a.ax[i][2] * b.ax[j][2];
            AR[i][j] = fabs(R[i][j]) + 1e-9;
        }
    }
    for (int i = 0; i < 3; ++i)
        if (fabs(t[i]) > a.h[i] + b.h[0] * AR[i][0] + b.h[1] * AR[i][1] + b.h[2] * AR[i][2] + slack) return false;
    for (int j = 0; j < 3; ++j)
        if (fabs(t[0] * R[0][j] + t[1] * R[1][j] + t[2] * R[2][j]) >
            a.h[0] * AR[0][j] + a.h[1] * AR[1][j] + a.h[2] * AR[2][j] + b.h[j] + slack)
            return false;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            const int i1 = (i + 1) % 3, i2 = (i + 2) % 3, j1 = (j + 1) % 3, j2 = (j + 2) % 3;
            const double ra = a.h[i1] * AR[i2][j] + a.h[i2] * AR[i1][j];
            const double rb = b.h[j1] * AR[i][j2] + b.h[j2] * AR[i][j1];
            if (fabs(t[i2] * R[i1][j] - t[i1] * R[i2][j]) > ra + rb + slack) return false;
        }
    return true;
}

struct BvCount {
    double node_pairs = 0, tri_pairs = 0, hits = 0;
};

/* Tree b placed by pose (its volumes moved in double), walked with tree a (the identity) from the
 * roots: a pair that may overlap opens its larger node; leaf pairs test their triangles exactly
 * (kcc_tri_intersect_tri on the corners as kcc_transform_point places them). */
static void bv_walk(const Soup &sa, const BvTree &ta, const Soup &sb, const BvTree &tb, const kcc_transform &pose,
                    double slack, std::vector<BvVol> &placed, std::vector<float> &corners, BvCount *out)
{
    const float *q = pose.rotation;
    const double x = q[0], y = q[1], z = q[2], w = q[3];
    const double m[3][3] = {{1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)},
                            {2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)},
                            {2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)}};
    placed.resize(tb.nodes.size());
    for (size_t i = 0; i < tb.nodes.size(); ++i) {
        const BvVol &v = tb.nodes[i].v;
        BvVol &o = placed[i];
        for (int r = 0; r < 3; ++r) {
            o.c[r] = pose.position[r] + m[r][0] * v.c[0] + m[r][1] * v.c[1] + m[r][2] * v.c[2];
            o.h[r] = v.h[r];
            for (int k = 0; k < 3; ++k) o.ax[r][k] = m[k][0] * v.ax[r][0] + m[k][1] * v.ax[r][1] + m[k][2] * v.ax[r][2];
        }
    }
    corners.resize(9 * (size_t)sb.triangles());
    for (uint32_t t = 0; t < sb.triangles(); ++t)
        for (int k = 0; k < 3; ++k)
            kcc_transform_point(&pose, &sb.pos[3 * sb.idx[3 * t + k]], &corners[9 * t + 3 * k]);
    std::vector<std::pair<int, int>> stack = {{0, 0}};
    while (!stack.empty()) {
        const std::pair<int, int> pr = stack.back();
        stack.pop_back();
        const BvNode &na = ta.nodes[pr.first], &nb = tb.nodes[pr.second];
        out->node_pairs += 1;
        if (!bv_overlap(na.v, placed[pr.second], slack)) continue;
        const bool leaf_a = na.child[0] < 0, leaf_b = nb.child[0] < 0;
        if (leaf_a && leaf_b) {
            for (uint32_t i = na.first; i < na.first + na.count; ++i) {
                const uint32_t a = ta.tri[i];
                const float *a0 = &sa.pos[3 * sa.idx[3 * a]], *a1 = &sa.pos[3 * sa.idx[3 * a + 1]];
                const float *a2 = &sa.pos[3 * sa.idx[3 * a + 2]];
                for (uint32_t j = nb.first; j < nb.first + nb.count; ++j) {
                    const float *c = &corners[9 * tb.tri[j]];
                    out->tri_pairs += 1;
                    out->hits += kcc_tri_intersect_tri(a0, a1, a2, c, c + 3, c + 6, nullptr);
                }
            }
            continue;
        }
        const double size_a = std::max(na.v.h[0], std::max(na.v.h[1], na.v.h[2]));
        const double size_b = std::max(nb.v.h[0], std::max(nb.v.h[1], nb.v.h[2]));
        if (!leaf_a && (leaf_b || size_a >= size_b)) {
            stack.push_back({na.child[0], pr.second});
            stack.push_back({na.child[1], pr.second});
        } else {
            stack.push_back({pr.first, nb.child[0]});
            stack.push_back({pr.first, nb.child[1]});
        }
    }
}

/* The two trees on one scene: node pairs, triangle pairs and hits summed over the poses, and the
 * median ns of each walk. */
static void bv_compare(const char *level, const char *scene, const Soup &a, const Soup &b,
                       const std::vector<kcc_transform> &poses)
{
    double scale = 1.0;
    for (float p : a.pos) scale = std::max(scale, (double)fabsf(p));
    const double slack = 1e-5 * scale;
    std::vector<BvVol> placed;
    std::vector<float> corners;
    printf("  %-12s %-22s", level, scene);
    for (int oriented = 0; oriented < 2; ++oriented) {
        BvTree ta, tb;
        bv_tree(a, oriented != 0, &ta);
        bv_tree(b, oriented != 0, &tb);
        BvCount c;
        std::vector<double> ns;
        for (const kcc_transform &p : poses) {
            const double t0 = bench_now_ns();
            bv_walk(a, ta, b, tb, p, slack, placed, corners, &c);
            ns.push_back(bench_now_ns() - t0);
        }
        const double n = (double)poses.size();
        printf("  %s: %9.0f node pairs %9.0f tri pairs %7.0f hits %9.0f ns", oriented ? "obb" : "aabb",
               c.node_pairs / n, c.tri_pairs / n, c.hits / n, bench_median(ns.data(), ns.size()));
    }
    printf("\n");
}

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
    std::vector<kcc_transform> bv_poses; /* the first BV_POSES of each scene's */
    if (chunk.triangles() > 0) {
        std::vector<kcc_transform> poses;
        for (int i = 0; i < N_QUERIES; ++i)
            poses.push_back(random_pose(&rng, c, 0.2f, 0.25f));
        SceneResult r = run_scene(level, chunk, poses);
        print_scene(bl.name, "level vs its chunk", level.triangles(), chunk.triangles(), r, worst);
        bv_poses.assign(poses.begin(), poses.begin() + std::min<size_t>(poses.size(), BV_POSES));
        bv_compare(bl.name, "trees: level vs chunk", level, chunk, bv_poses);
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
    bv_poses.assign(poses.begin(), poses.begin() + std::min<size_t>(poses.size(), BV_POSES));
    bv_compare(bl.name, "trees: sphere prop", level, prop, bv_poses);
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
