/* bench_heightfield.cpp: heightfield terrain (issue 25): bytes per sample, build time and
 * single-thread ns per query (short ground rays, random 20 m rays, character-box overlaps) for kcc's
 * heightfield, the same triangles as a kcc_mesh and Bullet's btHeightfieldTerrainShape, and ms per
 * mesh/mesh overlap of a brush level over it (kcc only), on the
 * terrain generator's ground at 1M and 8M triangles; then microseconds per character move on the
 * heightfield, its mesh and the shared brush levels. Hits are cross-checked between the engines.
 * Usage: bench_heightfield [levels_dir]; env KCC_BENCH_QUERIES (default 20000), KCC_BENCH_FRAMES
 * (default 600), KCC_BENCH_NO_BIG=1 (the 1M terrain only). */
#include <btBulletCollisionCommon.h>
#include <BulletCollision/CollisionShapes/btHeightfieldTerrainShape.h>
#include <BulletCollision/NarrowPhaseCollision/btRaycastCallback.h>

#include <algorithm>
#include <array>
#include <vector>

#include "bench.h"

namespace {

const int RUNS = 5;          /* timed repetitions; figures are medians over them */
int N_QUERIES = 20000;
int FRAMES = 600;
const int CHARACTERS = 16;
const float HALF[3] = {0.3f, 0.9f, 0.3f}; /* kcc_character_default_desc's box (m) */

double ms_since(double t0) { return (bench_now_ns() - t0) * 1e-6; }

/* The terrain as all three engines hold it. */
struct Terrain {
    uint32_t size = 0;                  /* cells per side */
    std::vector<float> heights;
    kcc_heightfield_desc desc{};
    kcc_mesh *hf = nullptr, *mesh = nullptr;
    btHeightfieldTerrainShape *bullet = nullptr;
    float ymin = 0.0f, ymax = 0.0f;
    double ms_hf = 0, ms_mesh = 0, ms_bullet = 0;
    ~Terrain() { kcc_mesh_destroy(hf); kcc_mesh_destroy(mesh); delete bullet; }

    float height_at(float x, float z) const /* the highest corner of the cell under (x, z) */
    {
        const uint32_t i = std::min(size - 1u, (uint32_t)std::max(0.0f, x - desc.origin[0]));
        const uint32_t j = std::min(size - 1u, (uint32_t)std::max(0.0f, z - desc.origin[2]));
        const float *r0 = &heights[(size_t)j * (size + 1u) + i], *r1 = r0 + size + 1u;
        return std::max(std::max(r0[0], r0[1]), std::max(r1[0], r1[1]));
    }
};

/* The same grid's triangles as a kcc_mesh, numbered as the heightfield numbers them. */
kcc_mesh *mesh_of(const Terrain &T)
{
    const uint32_t n1 = T.size + 1u;
    std::vector<float> pos((size_t)n1 * n1 * 3);
    std::vector<uint32_t> idx((size_t)T.size * T.size * 6);
    for (uint32_t j = 0; j < n1; ++j)
        for (uint32_t i = 0; i < n1; ++i) {
            float *p = &pos[3 * ((size_t)j * n1 + i)];
            p[0] = T.desc.origin[0] + (float)i * T.desc.spacing[0];
            p[1] = T.desc.origin[1] + T.heights[(size_t)j * n1 + i];
            p[2] = T.desc.origin[2] + (float)j * T.desc.spacing[1];
        }
    for (uint32_t j = 0, t = 0; j < T.size; ++j)
        for (uint32_t i = 0; i < T.size; ++i, t += 2) {
            const uint32_t a = j * n1 + i, b = a + 1u, c = a + n1, d = c + 1u; /* b: +x, c: +z */
            const uint32_t tri[6] = {a, c, d, a, d, b};
            std::copy(tri, tri + 6, &idx[3 * (size_t)t]);
        }
    kcc_mesh_desc d;
    memset(&d, 0, sizeof d);
    d.positions = pos.data();
    d.vertex_count = n1 * n1;
    d.indices = idx.data();
    d.triangle_count = 2u * T.size * T.size;
    kcc_mesh *m = nullptr;
    if (kcc_mesh_build(&d, &m) != KCC_OK) return nullptr;
    return m;
}

bool terrain_build(uint32_t size, Terrain *T)
{
    T->size = size;
    T->heights.resize((size_t)(size + 1u) * (size + 1u));
    if (kcc_level_terrain_heights(1, size, T->heights.data(), &T->desc) != KCC_OK) return false;
    auto mm = std::minmax_element(T->heights.begin(), T->heights.end());
    T->ymin = *mm.first, T->ymax = *mm.second;
    double t0 = bench_now_ns();
    if (kcc_heightfield_build(&T->desc, &T->hf) != KCC_OK) return false;
    T->ms_hf = ms_since(t0);
    t0 = bench_now_ns();
    T->mesh = mesh_of(*T);
    T->ms_mesh = ms_since(t0);
    t0 = bench_now_ns();
    /* Bullet centres the grid on its local origin; flipQuadEdges splits each cell along the
     * diagonal kcc uses. Queries are moved into its frame (x, z as kcc's: the grid is centred). */
    T->bullet = new btHeightfieldTerrainShape((int)size + 1, (int)size + 1, T->heights.data(), T->ymin,
                                              T->ymax, 1, true);
    T->bullet->buildAccelerator();
    T->ms_bullet = ms_since(t0);
    return T->mesh != nullptr;
}

struct Ray { float o[3], d[3]; };
struct Box { float b[2][3]; };

/* Ground rays (2 m down from 1 m above the ground), random 20 m rays from 1-10 m above it, and
 * character boxes resting on it. */
void make_queries(const Terrain &T, std::vector<Ray> *ground, std::vector<Ray> *random, std::vector<Box> *boxes)
{
    bench_rng r = bench_rng_seed(25);
    const float lo = T.desc.origin[0] + 1.0f, hi = -lo;
    for (int q = 0; q < N_QUERIES; ++q) {
        const float x = bench_rng_range(&r, lo, hi), z = bench_rng_range(&r, lo, hi), y = T.height_at(x, z);
        ground->push_back({{x, y + 1.0f, z}, {0.0f, -2.0f, 0.0f}});
        Ray ray{{x, y + bench_rng_range(&r, 1.0f, 10.0f), z}, {0, 0, 0}};
        bench_rng_dir(&r, ray.d);
        for (float &c : ray.d) c *= 20.0f;
        random->push_back(ray);
        boxes->push_back({{{x - HALF[0], y - 0.2f, z - HALF[2]}, {x + HALF[0], y - 0.2f + 2 * HALF[1], z + HALF[2]}}});
    }
}

/* Closest hit along a ray (Bullet reports nearer hits only once a fraction is returned). */
struct BulletClosestRay : public btTriangleRaycastCallback {
    bool hit = false;
    BulletClosestRay(const btVector3 &from, const btVector3 &to) : btTriangleRaycastCallback(from, to, 0) {}
    btScalar reportHit(const btVector3 &, btScalar fraction, int, int) override
    {
        hit = true;
        return fraction;
    }
};

struct BulletBoxCount : public btTriangleCallback {
    uint32_t count = 0;
    void processTriangle(btVector3 *, int, int) override { ++count; }
};

/* ns per query, the median over RUNS of the whole set. */
template <class F> double time_set(int n, F body)
{
    std::vector<double> per(RUNS);
    for (int r = 0; r < RUNS; ++r) {
        double t0 = bench_now_ns();
        for (int i = 0; i < n; ++i) body(i);
        per[r] = (bench_now_ns() - t0) / n;
    }
    return bench_median(per.data(), RUNS);
}

volatile uint32_t g_sink; /* keeps the query loops' results alive */

void ray_row(const char *what, const Terrain &T, const std::vector<Ray> &rays)
{
    const float mid = 0.5f * (T.ymin + T.ymax); /* Bullet's local origin height */
    int mismatch = 0;
    for (size_t i = 0; i < rays.size(); ++i) {
        kcc_ray_hit a, b;
        const bool ha = kcc_mesh_raycast(T.hf, rays[i].o, rays[i].d, 1.0f, &a);
        const bool hb = kcc_mesh_raycast(T.mesh, rays[i].o, rays[i].d, 1.0f, &b);
        mismatch += ha != hb || (ha && (a.t != b.t || a.triangle != b.triangle));
    }
    const double hf = time_set((int)rays.size(), [&](int i) {
        kcc_ray_hit h;
        g_sink += kcc_mesh_raycast(T.hf, rays[i].o, rays[i].d, 1.0f, &h);
    });
    const double mesh = time_set((int)rays.size(), [&](int i) {
        kcc_ray_hit h;
        g_sink += kcc_mesh_raycast(T.mesh, rays[i].o, rays[i].d, 1.0f, &h);
    });
    auto bullet_ray = [&](const Ray &r, float *fraction) {
        btVector3 from(r.o[0], r.o[1] - mid, r.o[2]), to(r.o[0] + r.d[0], r.o[1] + r.d[1] - mid, r.o[2] + r.d[2]);
        BulletClosestRay cb(from, to);
        T.bullet->performRaycast(&cb, from, to);
        *fraction = cb.m_hitFraction;
        return cb.hit;
    };
    const double bullet = time_set((int)rays.size(), [&](int i) {
        float f;
        g_sink += bullet_ray(rays[i], &f);
    });
    int bullet_agree = 0;
    for (const Ray &r : rays) {
        kcc_ray_hit h;
        float f;
        const bool kh = kcc_mesh_raycast(T.hf, r.o, r.d, 1.0f, &h), bh = bullet_ray(r, &f);
        bullet_agree += bh == kh && (!kh || fabsf(f - h.t) < 1e-4f);
    }
    printf("  %-12s ns/ray   heightfield %7.0f   mesh %7.0f   Bullet %7.0f   heightfield/mesh differ: %d   "
           "Bullet agrees (t within 1e-4): %.2f%%\n",
           what, hf, mesh, bullet, mismatch, 100.0 * bullet_agree / (double)rays.size());
}

void box_row(const Terrain &T, const std::vector<Box> &boxes)
{
    const float mid = 0.5f * (T.ymin + T.ymax);
    static uint32_t ids[512];
    const double hf = time_set((int)boxes.size(), [&](int i) {
        g_sink += kcc_mesh_overlap_aabb(T.hf, (const vec3 *)boxes[i].b, ids, 512);
    });
    const double mesh = time_set((int)boxes.size(), [&](int i) {
        g_sink += kcc_mesh_overlap_aabb(T.mesh, (const vec3 *)boxes[i].b, ids, 512);
    });
    const double hf_bounds = time_set((int)boxes.size(), [&](int i) {
        g_sink += kcc_mesh_query_bounds(T.hf, (const vec3 *)boxes[i].b, ids, 512);
    });
    const double bullet = time_set((int)boxes.size(), [&](int i) {
        const Box &b = boxes[i];
        BulletBoxCount cb;
        T.bullet->processAllTriangles(&cb, btVector3(b.b[0][0], b.b[0][1] - mid, b.b[0][2]),
                                      btVector3(b.b[1][0], b.b[1][1] - mid, b.b[1][2]));
        g_sink += cb.count;
    });
    printf("  %-12s ns/box   heightfield %7.0f   mesh %7.0f   (bounds only: heightfield %7.0f   Bullet %7.0f)\n",
           "box overlap", hf, mesh, hf_bounds, bullet);
}

/* ms per kcc_mesh_overlap_mesh of the generated arena level (a brush level of rooms and stairs)
 * placed at 20 spots over the terrain, turned and sunk half into it, against the heightfield and
 * against the mesh of the same triangles; their pair lists are compared whole. */
void mesh_mesh_row(const Terrain &T)
{
    bench_level arena{};
    snprintf(arena.name, sizeof arena.name, "arena seed=3");
    char err[256];
    if (kcc_level_generate("arena seed=3", &arena.level, err, sizeof err) != KCC_OK) return;
    kcc_mesh *m = bench_build_mesh(&arena);
    if (!m) { kcc_level_free(&arena.level); return; }
    vec3 b[2];
    kcc_mesh_bounds(m, b);
    std::vector<kcc_transform> poses(20);
    bench_rng r = bench_rng_seed(5);
    for (kcc_transform &p : poses) {
        const float yaw = bench_rng_range(&r, 0.0f, 6.2831853f);
        p = kcc_transform_identity();
        p.rotation[1] = sinf(0.5f * yaw), p.rotation[3] = cosf(0.5f * yaw);
        const float x = bench_rng_range(&r, -150.0f, 150.0f), z = bench_rng_range(&r, -150.0f, 150.0f);
        p.position[0] = x, p.position[2] = z;
        p.position[1] = T.height_at(x, z) - 0.5f * (b[0][1] + b[1][1]);
    }
    static std::vector<kcc_tri_pair> pa(1u << 20), pb(1u << 20);
    size_t pairs = 0, differ = 0;
    for (const kcc_transform &p : poses) {
        const uint32_t na = kcc_mesh_overlap_mesh(T.hf, nullptr, m, &p, pa.data(), (uint32_t)pa.size());
        const uint32_t nb = kcc_mesh_overlap_mesh(T.mesh, nullptr, m, &p, pb.data(), (uint32_t)pb.size());
        pairs += na;
        differ += na != nb || memcmp(pa.data(), pb.data(), sizeof(kcc_tri_pair) * std::min<size_t>(na, pa.size())) != 0;
    }
    const int n = (int)poses.size();
    const double hf = time_set(n, [&](int i) {
        g_sink += kcc_mesh_overlap_mesh(T.hf, nullptr, m, &poses[i], pa.data(), (uint32_t)pa.size());
    });
    const double mesh = time_set(n, [&](int i) {
        g_sink += kcc_mesh_overlap_mesh(T.mesh, nullptr, m, &poses[i], pb.data(), (uint32_t)pb.size());
    });
    printf("  %-12s ms/query heightfield %7.2f   mesh %7.2f   (the arena level, %u triangles, at %d spots: "
           "%zu pairs; placements whose pairs differ: %zu)\n", "mesh/mesh", hf * 1e-6, mesh * 1e-6,
           arena.level.triangle_count, n, pairs, differ);
    kcc_mesh_destroy(m);
    kcc_level_free(&arena.level);
}

/* ---------------------------------------------------------------- moves */

/* us per move (the median over frames of a frame's moves, timed together, / characters) of
 * characters wandering from `starts` (box centres): a heading kept for 1-3 s, gravity, a jump now
 * and then. Also counts the moves that ended overlapping the level (untimed check). */
double move_us(const kcc_mesh *m, const std::vector<std::array<float, 3>> &starts, int *penetrations)
{
    kcc_character_desc desc = kcc_character_default_desc();
    std::vector<kcc_character> ch(starts.size());
    std::vector<float> vy(starts.size(), 0.0f), heading(starts.size(), 0.0f), timer(starts.size(), 0.0f);
    for (size_t c = 0; c < starts.size(); ++c)
        kcc_character_init(&ch[c], &desc, starts[c].data());
    bench_rng r = bench_rng_seed(7);
    std::vector<double> per(FRAMES);
    *penetrations = 0;
    for (int f = 0; f < FRAMES; ++f) {
        std::vector<vec3> delta(ch.size());
        for (size_t c = 0; c < ch.size(); ++c) {
            if ((timer[c] -= 1.0f / 60.0f) <= 0.0f) {
                heading[c] = bench_rng_range(&r, 0.0f, 6.2831853f);
                timer[c] = bench_rng_range(&r, 1.0f, 3.0f);
            }
            vy[c] = ch[c].on_ground ? (bench_rng_float(&r) < 1.0f / 180.0f ? 8.44f : 0.0f) : vy[c] - 25.0f / 60.0f;
            delta[c][0] = 5.0f * cosf(heading[c]) / 60.0f;
            delta[c][1] = vy[c] / 60.0f;
            delta[c][2] = 5.0f * sinf(heading[c]) / 60.0f;
        }
        const double t0 = bench_now_ns();
        for (size_t c = 0; c < ch.size(); ++c) {
            kcc_move_result res;
            kcc_character_move(&ch[c], m, delta[c], &res);
        }
        const double t = bench_now_ns() - t0;
        for (size_t c = 0; c < ch.size(); ++c) {
            vec3 box[2];
            kcc_character_box(&ch[c], box);
            for (int k = 0; k < 3; ++k) box[0][k] += KCC_PENETRATION_TOLERANCE, box[1][k] -= KCC_PENETRATION_TOLERANCE;
            *penetrations += kcc_mesh_overlap_aabb(m, (const vec3 *)box, nullptr, 0) > 0;
        }
        per[f] = t / (double)ch.size() * 1e-3;
    }
    return bench_median(per.data(), (size_t)FRAMES);
}

void terrain_section(uint32_t size)
{
    Terrain T;
    if (!terrain_build(size, &T)) {
        printf("terrain %u: build failed\n", size);
        return;
    }
    const double samples = (double)(size + 1u) * (size + 1u), tris = 2.0 * size * size;
    printf("terrain %ux%u samples, %.2fM triangles\n", size + 1u, size + 1u, tris * 1e-6);
    printf("  memory       heightfield %.3f B/sample (%.3f B/triangle)   mesh %.1f B/triangle   Bullet 4 B/sample "
           "(the caller's array, borrowed) + %zu B accelerator\n",
           (double)kcc_mesh_memory_bytes(T.hf) / samples, (double)kcc_mesh_memory_bytes(T.hf) / tris,
           (double)kcc_mesh_memory_bytes(T.mesh) / tris,
           (size_t)((size / 64u + 1u) * (size / 64u + 1u) * sizeof(btHeightfieldTerrainShape::Range)));
    printf("  build ms     heightfield %.1f   mesh %.1f   Bullet %.1f\n", T.ms_hf, T.ms_mesh, T.ms_bullet);
    std::vector<Ray> ground, random;
    std::vector<Box> boxes;
    make_queries(T, &ground, &random, &boxes);
    ray_row("ground rays", T, ground);
    ray_row("20 m rays", T, random);
    box_row(T, boxes);
    mesh_mesh_row(T);
    std::vector<std::array<float, 3>> starts;
    bench_rng r = bench_rng_seed(99);
    for (int c = 0; c < CHARACTERS; ++c) {
        const float x = bench_rng_range(&r, -100.0f, 100.0f), z = bench_rng_range(&r, -100.0f, 100.0f);
        starts.push_back({x, T.height_at(x, z) + HALF[1] + 0.3f, z});
    }
    int pen_hf, pen_mesh;
    const double us_hf = move_us(T.hf, starts, &pen_hf), us_mesh = move_us(T.mesh, starts, &pen_mesh);
    printf("  us/move      heightfield %.2f   mesh %.2f   (%d characters x %d frames; moves ending in "
           "penetration: %d, %d)\n", us_hf, us_mesh, CHARACTERS, FRAMES, pen_hf, pen_mesh);
}

void brush_levels(const char *dir)
{
    char names[BENCH_MAX_LEVELS][64];
    const int n = bench_level_list(dir, names, BENCH_MAX_LEVELS);
    if (n == 0) {
        printf("brush levels: none in %s\n", dir);
        return;
    }
    for (int l = 0; l < n && l < BENCH_LEVEL_COUNT; ++l) {
        bench_level L;
        if (!bench_level_load(dir, names[l], &L)) continue;
        kcc_mesh *m = bench_build_mesh(&L);
        std::vector<std::array<float, 3>> starts;
        for (uint32_t s = 0; s < L.level.spawn_count && starts.size() < CHARACTERS; ++s) {
            const float *p = &L.level.spawns[3 * s];
            starts.push_back({p[0], p[1] + HALF[1] + 0.01f, p[2]});
        }
        int pen = 0;
        if (m && !starts.empty())
            printf("brush level %-12s us/move %.2f   (%zu characters x %d frames; penetrations %d)\n", names[l],
                   move_us(m, starts, &pen), starts.size(), FRAMES, pen);
        kcc_mesh_destroy(m);
        bench_level_free(&L);
    }
}

} // namespace

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "../shared/levels";
    if (const char *e = getenv("KCC_BENCH_QUERIES")) N_QUERIES = std::max(100, atoi(e));
    if (const char *e = getenv("KCC_BENCH_FRAMES")) FRAMES = std::max(10, atoi(e));
    printf("bench_heightfield: clock %s, %d queries per set, medians of %d runs\n", bench_clock_name(), N_QUERIES, RUNS);
    bench_print_load("start");
    if (!getenv("KCC_BENCH_LEVELS_ONLY")) {
        terrain_section(724);   /* 1.05M triangles */
        if (!getenv("KCC_BENCH_NO_BIG"))
            terrain_section(2048); /* 8.4M triangles */
    }
    brush_levels(dir);
    printf("checksum %u\n", (unsigned)g_sink);
    return 0;
}
