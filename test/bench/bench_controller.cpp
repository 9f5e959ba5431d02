/* bench_controller.cpp: the controller benchmark (issue 3): microseconds per character move (median over
 * frames) for 1 and 256 characters wandering from the spawn points of each level, kcc_character_move
 * against Bullet's btKinematicCharacterController driven by the same wander policy in the same process;
 * plus which branch ended each kcc move, STUCK moves and an untimed penetration check after every move.
 * Usage: bench_controller [levels_dir]; env KCC_BENCH_FRAMES (default 2000), KCC_BENCH_BULLET_FRAMES (Bullet's
 * 256-character run, default 150), KCC_BENCH_ONLY (level filter), KCC_BENCH_BIG=1 (add the 1M-triangle mesh). */
#include <btBulletDynamicsCommon.h>
#include <BulletCollision/CollisionDispatch/btGhostObject.h>
#include <BulletDynamics/Character/btKinematicCharacterController.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "bench.h"

namespace {

/* The player of the shared levels (README): 0.94 x 1.75 x 0.94 m box, 0.5625 m steps, ground normal
 * y >= 0.7 (45.6 degrees). Motion: Quake 3's gravity (800 u/s^2 = 25 m/s^2) and jump speed
 * (270 u/s = 8.44 m/s), walking at 5 m/s, 60 Hz frames. */
const float HALF[3] = {0.47f, 0.875f, 0.47f};
const float STEP = 0.5625f;            /* m */
const float SLOPE_DEG = 45.6f;         /* degrees */
const float DT = 1.0f / 60.0f;         /* s */
const float SPEED = 5.0f;              /* m/s */
const float GRAVITY = 25.0f;           /* m/s^2 */
const float JUMP_SPEED = 8.44f;        /* m/s */
const float FALL_LIMIT = 55.0f;        /* m/s, terminal fall speed (Bullet's default fall speed) */
const float JUMP_CHANCE = 1.0f / 180.0f; /* per grounded frame: about one jump every 3 s */
int FRAMES = 2000;
/* Bullet's controller costs ~100 us per move, so its 256-character run is cut to this many frames to
 * keep the whole benchmark within a few minutes (its per-frame median is steady long before that). */
int BULLET_MANY_FRAMES = 150;
const int REPS_ONE = 5;               /* repetitions of the one-character run (see main) */
double CLOCK_OVERHEAD = 0.0;           /* ns per clock reading, subtracted from every frame time */

/* Deterministic wander: a heading kept for 1-3 s or until stuck, occasional jumps. Each character
 * has its own PRNG, seeded by its index, so both engines get the same decisions in the same states. */
struct Wander {
    bench_rng rng;
    float heading = 0.0f;   /* rad */
    float timer = 0.0f;     /* s until the next heading change */
    float vy = 0.0f;        /* m/s, kcc only (Bullet integrates its own vertical speed) */
    int stuck = 0;          /* consecutive frames without horizontal progress */
    bool jump = false;      /* this frame's input asks for a jump */
    float dir[2] = {0, 0};  /* unit horizontal heading (x, z) */

    explicit Wander(uint32_t seed) : rng(bench_rng_seed(0x5EED0000u + seed)) {}

    /* Decides this frame's heading and jump from the state after the previous frame. */
    void decide(bool on_ground)
    {
        if (timer <= 0.0f || stuck >= 6) {
            heading = bench_rng_range(&rng, 0.0f, 6.28318530718f);
            timer = bench_rng_range(&rng, 1.0f, 3.0f);
            stuck = 0;
        }
        timer -= DT;
        jump = on_ground && bench_rng_float(&rng) < JUMP_CHANCE;
        dir[0] = cosf(heading);
        dir[1] = sinf(heading);
    }

    /* kcc: this frame's displacement (gravity accumulated in vy). */
    void kcc_displacement(float out[3])
    {
        if (jump) vy = JUMP_SPEED;
        vy = std::max(vy - GRAVITY * DT, -FALL_LIMIT);
        out[0] = dir[0] * SPEED * DT;
        out[1] = vy * DT;
        out[2] = dir[1] * SPEED * DT;
    }

    /* Progress bookkeeping after a move (m moved horizontally this frame). */
    void progress(float moved_xz)
    {
        stuck = moved_xz < 0.25f * SPEED * DT ? stuck + 1 : 0;
    }
};

struct RunStats {
    std::vector<double> per;            /* us per move, one entry per frame */
    double total_ns = 0;
    uint64_t moves = 0;
    uint64_t branch[5] = {0, 0, 0, 0, 0};
    uint64_t stuck = 0, on_ground = 0, violations = 0, violations_any = 0, start_overlap = 0, respawns = 0;
    double walked = 0;                  /* m, horizontal, all characters */

    void add_frame(double ns, uint32_t n)
    {
        ns = std::max(0.0, ns - CLOCK_OVERHEAD);
        per.push_back(ns * 1e-3 / n);
        total_ns += ns;
        moves += n;
    }
    /* median us per move over the first `frames` frames (all when frames <= 0) */
    double median(int frames = 0) const
    {
        std::vector<double> v(per.begin(), frames > 0 && (size_t)frames < per.size() ? per.begin() + frames : per.end());
        return bench_median(v.data(), v.size());
    }
    double mean() const { return moves ? total_ns * 1e-3 / (double)moves : 0.0; }
};

void spawn_center(const kcc_level &L, uint32_t i, float out[3])
{
    const float *s = L.spawns + 3 * (i % L.spawn_count);
    out[0] = s[0];
    out[1] = s[1] + HALF[1] + 0.01f;
    out[2] = s[2];
}

float level_min_y(const kcc_level &L)
{
    float lo = 1e30f;
    for (uint32_t i = 0; i < L.vertex_count; ++i) lo = std::min(lo, L.positions[3 * i + 1]);
    return lo;
}

bool box_penetrates(const kcc_mesh *mesh, const kcc_character &ch)
{
    vec3 box[2];
    kcc_character_box(&ch, box);
    for (int k = 0; k < 3; ++k) {
        box[0][k] += KCC_PENETRATION_TOLERANCE;
        box[1][k] -= KCC_PENETRATION_TOLERANCE;
    }
    return kcc_mesh_overlap_aabb(mesh, box, nullptr, 0) > 0;
}

/* ---------------------------------------------------------------- kcc */

struct KccSim {
    const kcc_level &L;
    const kcc_mesh *mesh;
    uint32_t n;
    kcc_character_desc desc;
    std::vector<kcc_character> ch;
    std::vector<kcc_move_result> res;
    std::vector<Wander> w;
    std::vector<char> clear;
    std::vector<float> disp;
    float min_y;
    RunStats rs;
    std::vector<double> branch_us[5]; /* one character: us of each move, by the branch that ended it */

    KccSim(const kcc_level &level, const kcc_mesh *m, uint32_t count)
        : L(level), mesh(m), n(count), ch(count), res(count), clear(count), disp(3 * (size_t)count)
    {
        desc = kcc_character_default_desc();
        desc.half_extents[0] = HALF[0];
        desc.half_extents[1] = HALF[1];
        desc.half_extents[2] = HALF[2];
        desc.step_height = STEP;
        desc.max_slope_deg = SLOPE_DEG;
        min_y = level_min_y(L) - 50.0f;
        for (uint32_t i = 0; i < n; ++i) {
            float c[3];
            spawn_center(L, i, c);
            kcc_status st = kcc_character_init(&ch[i], &desc, c);
            if (st != KCC_OK) {
                fprintf(stderr, "kcc_character_init: %s\n", kcc_status_str(st));
                exit(1);
            }
            w.emplace_back(i);
            clear[i] = !box_penetrates(mesh, ch[i]);
            rs.start_overlap += !clear[i];
            memset(&res[i], 0, sizeof res[i]);
        }
    }

    void frame(int f)
    {
        for (uint32_t i = 0; i < n; ++i) {
            w[i].decide(f > 0 && (res[i].flags & KCC_MOVE_ON_GROUND));
            w[i].kcc_displacement(&disp[3 * (size_t)i]);
        }
        double t0 = bench_now_ns();
        for (uint32_t i = 0; i < n; ++i) kcc_character_move(&ch[i], mesh, &disp[3 * (size_t)i], &res[i]);
        rs.add_frame(bench_now_ns() - t0, n);
        if (n == 1 && (unsigned)res[0].branch < 5) branch_us[res[0].branch].push_back(rs.per.back());
        /* untimed bookkeeping and checks */
        for (uint32_t i = 0; i < n; ++i) {
            const kcc_move_result &r = res[i];
            if ((unsigned)r.branch < 5) rs.branch[r.branch]++;
            rs.stuck += (r.flags & KCC_MOVE_STUCK) != 0;
            rs.on_ground += (r.flags & KCC_MOVE_ON_GROUND) != 0;
            if ((r.flags & KCC_MOVE_ON_GROUND) && w[i].vy < 0.0f) w[i].vy = 0.0f;
            if ((r.flags & KCC_MOVE_HIT_CEILING) && w[i].vy > 0.0f) w[i].vy = 0.0f;
            float xz = sqrtf(r.moved[0] * r.moved[0] + r.moved[2] * r.moved[2]);
            rs.walked += xz;
            w[i].progress(xz);
            bool pen = box_penetrates(mesh, ch[i]);
            rs.violations_any += pen;
            rs.violations += pen && clear[i];
            clear[i] = !pen;
            if (ch[i].position[1] < min_y) {
                float c[3];
                spawn_center(L, i, c);
                kcc_character_init(&ch[i], &desc, c);
                w[i].vy = 0.0f;
                memset(&res[i], 0, sizeof res[i]);
                clear[i] = !box_penetrates(mesh, ch[i]);
                ++rs.respawns;
            }
        }
    }
};

/* ---------------------------------------------------------------- Bullet */

struct BulletSim {
    const kcc_level &L;
    uint32_t n;
    btDefaultCollisionConfiguration cfg;
    btCollisionDispatcher dispatcher{&cfg};
    btDbvtBroadphase broadphase;
    btGhostPairCallback ghost_cb;
    btCollisionWorld world{&dispatcher, &broadphase, &cfg};
    std::unique_ptr<btTriangleIndexVertexArray> array;
    std::unique_ptr<btBvhTriangleMeshShape> shape;
    btCollisionObject ground;
    /* the same box as kcc's, or a capsule of the same width and height (Bullet's cheaper usual choice) */
    btBoxShape box_shape{btVector3(HALF[0], HALF[1], HALF[2])};
    btCapsuleShape capsule_shape{HALF[0], 2.0f * (HALF[1] - HALF[0])};
    std::vector<std::unique_ptr<btPairCachingGhostObject>> ghosts;
    std::vector<std::unique_ptr<btKinematicCharacterController>> ctl;
    std::vector<Wander> w;
    std::vector<btVector3> before;
    float min_y;
    double build_ms = 0.0;
    RunStats rs;

    BulletSim(const kcc_level &level, uint32_t count, bool use_capsule) : L(level), n(count), before(count)
    {
        broadphase.getOverlappingPairCache()->setInternalGhostPairCallback(&ghost_cb);
        double t0 = bench_now_ns();
        /* Bullet only reads the arrays; its API takes them non-const */
        array.reset(new btTriangleIndexVertexArray((int)L.triangle_count, (int *)L.indices, 3 * sizeof(int),
                                                   (int)L.vertex_count, (btScalar *)L.positions, 3 * sizeof(float)));
        shape.reset(new btBvhTriangleMeshShape(array.get(), true, true));
        build_ms = (bench_now_ns() - t0) * 1e-6;
        ground.setCollisionShape(shape.get());
        ground.setCollisionFlags(btCollisionObject::CF_STATIC_OBJECT);
        world.addCollisionObject(&ground, btBroadphaseProxy::StaticFilter,
                                 btBroadphaseProxy::AllFilter ^ btBroadphaseProxy::StaticFilter);
        btConvexShape *cs = use_capsule ? (btConvexShape *)&capsule_shape : (btConvexShape *)&box_shape;
        min_y = level_min_y(L) - 50.0f;
        for (uint32_t i = 0; i < n; ++i) {
            float c[3];
            spawn_center(L, i, c);
            ghosts.emplace_back(new btPairCachingGhostObject);
            btPairCachingGhostObject *g = ghosts.back().get();
            btTransform tr;
            tr.setIdentity();
            tr.setOrigin(btVector3(c[0], c[1], c[2]));
            g->setWorldTransform(tr);
            g->setCollisionShape(cs);
            g->setCollisionFlags(btCollisionObject::CF_CHARACTER_OBJECT);
            ctl.emplace_back(new btKinematicCharacterController(g, cs, STEP, btVector3(0, 1, 0)));
            btKinematicCharacterController *k = ctl.back().get();
            k->setGravity(btVector3(0, -GRAVITY, 0));
            k->setMaxSlope(SLOPE_DEG * (float)M_PI / 180.0f);
            k->setJumpSpeed(JUMP_SPEED);
            k->setFallSpeed(FALL_LIMIT);
            /* characters see the level only, never each other (kcc characters do not interact) */
            world.addCollisionObject(g, btBroadphaseProxy::CharacterFilter,
                                     btBroadphaseProxy::StaticFilter | btBroadphaseProxy::DefaultFilter);
            w.emplace_back(i);
        }
        world.updateAabbs();
        world.computeOverlappingPairs();
    }

    ~BulletSim()
    {
        for (auto &g : ghosts) world.removeCollisionObject(g.get());
        world.removeCollisionObject(&ground);
    }

    void frame(int f)
    {
        for (uint32_t i = 0; i < n; ++i) {
            w[i].decide(f > 0 && ctl[i]->onGround());
            ctl[i]->setWalkDirection(btVector3(w[i].dir[0], 0, w[i].dir[1]) * (SPEED * DT));
            if (w[i].jump && ctl[i]->canJump()) ctl[i]->jump();
            before[i] = ghosts[i]->getWorldTransform().getOrigin();
        }
        double t0 = bench_now_ns();
        world.updateAabbs();
        world.computeOverlappingPairs();
        for (uint32_t i = 0; i < n; ++i) ctl[i]->updateAction(&world, DT);
        rs.add_frame(bench_now_ns() - t0, n);
        for (uint32_t i = 0; i < n; ++i) {
            btVector3 p = ghosts[i]->getWorldTransform().getOrigin(), d = p - before[i];
            float xz = sqrtf(d.x() * d.x() + d.z() * d.z());
            rs.walked += xz;
            w[i].progress(xz);
            rs.on_ground += ctl[i]->onGround();
            if (p.y() < min_y) {
                float c[3];
                spawn_center(L, i, c);
                ctl[i]->warp(btVector3(c[0], c[1], c[2]));
                ctl[i]->reset(&world);
                ++rs.respawns;
            }
        }
    }
};

double pct(uint64_t a, uint64_t b) { return b ? 100.0 * (double)a / (double)b : 0.0; }

struct LevelRow {
    char name[64];
    double kcc_us[2], box_ratio[2], capsule_ratio[2], box_us[2], capsule_us[2];
    double branch_pct[2][5], stuck_pct[2];
    uint64_t violations[2];
};

const uint32_t COUNTS[2] = {1, 256}; /* characters of the two runs on each level */

/* One run of kcc and both Bullet variants on a level: their medians (us per move), kcc's over the frames
 * Bullet ran (for the ratios), the last simulations (their stats) and, with one character, kcc's move
 * times by final branch over every repetition. */
struct EngineRun {
    int bframes = 0;                   /* frames Bullet ran */
    double k_med = 0.0, b_med = 0.0, p_med = 0.0, k_same = 0.0;
    std::unique_ptr<KccSim> ks;
    std::unique_ptr<BulletSim> bb, bc;
    std::vector<double> branch_us[5];
};

/* Many characters: lock-step, frame f of kcc then of both Bullet variants, so that machine load hits
 * all alike (a frame is hundreds of moves: caches warm up within it). */
void run_lock_step(const kcc_level &level, const kcc_mesh *mesh, uint32_t count, EngineRun *run)
{
    run->ks.reset(new KccSim(level, mesh, count));
    run->bb.reset(new BulletSim(level, count, false));
    run->bc.reset(new BulletSim(level, count, true));
    for (int f = 0; f < FRAMES; ++f) {
        run->ks->frame(f);
        if (f < run->bframes) {
            run->bb->frame(f);
            run->bc->frame(f);
        }
    }
    run->k_med = run->ks->rs.median();
    run->b_med = run->bb->rs.median();
    run->p_med = run->bc->rs.median();
    run->k_same = run->ks->rs.median(run->bframes); /* kcc over the frames Bullet ran, for the ratios */
}

/* One character: the whole run is only milliseconds, so it is repeated REPS_ONE times, the engines
 * taking turns run by run (never move by move: a single move right after another engine's frame would
 * find its data evicted from the caches), and the figure is the median of the runs' medians. */
void run_one_repeated(const kcc_level &level, const kcc_mesh *mesh, EngineRun *run)
{
    std::vector<double> km, bm, pm;
    for (int rep = 0; rep < REPS_ONE; ++rep) {
        run->ks.reset(new KccSim(level, mesh, 1));
        for (int f = 0; f < FRAMES; ++f) run->ks->frame(f);
        km.push_back(run->ks->rs.median());
        for (int br = 0; br < 5; ++br)
            run->branch_us[br].insert(run->branch_us[br].end(), run->ks->branch_us[br].begin(), run->ks->branch_us[br].end());
        run->bb.reset();
        run->bb.reset(new BulletSim(level, 1, false));
        for (int f = 0; f < run->bframes; ++f) run->bb->frame(f);
        bm.push_back(run->bb->rs.median());
        run->bc.reset();
        run->bc.reset(new BulletSim(level, 1, true));
        for (int f = 0; f < run->bframes; ++f) run->bc->frame(f);
        pm.push_back(run->bc->rs.median());
    }
    run->k_med = run->k_same = bench_median(km.data(), km.size());
    run->b_med = bench_median(bm.data(), bm.size());
    run->p_med = bench_median(pm.data(), pm.size());
}

/* Run c's figures into the level's row, and printed: times and ratios, kcc's branches and checks, its
 * times by branch (one character; bench_median sorts them in place), Bullet's runs. */
void report_run(EngineRun &run, int c, LevelRow *row)
{
    const uint32_t n = COUNTS[c];
    const RunStats &k = run.ks->rs, &b = run.bb->rs, &p = run.bc->rs;
    row->kcc_us[c] = run.k_med;
    row->box_ratio[c] = run.b_med / run.k_same;
    row->capsule_ratio[c] = run.p_med / run.k_same;
    row->box_us[c] = run.b_med;
    row->capsule_us[c] = run.p_med;
    for (int br = 0; br < 5; ++br) row->branch_pct[c][br] = pct(k.branch[br], k.moves);
    row->stuck_pct[c] = pct(k.stuck, k.moves);
    row->violations[c] = k.violations;
    printf("  %5u  %12.3f %8.3f  %13.2f %8.2f  %13.2f %8.2f  %8.1f %8.1f\n", n, run.k_med, k.mean(),
           run.b_med, b.mean(), run.p_med, p.mean(), row->box_ratio[c], row->capsule_ratio[c]);
    printf("         kcc: branch P2 %.2f%%  P4 %.2f%%  P1 %.2f%%  P0 %.2f%%; STUCK %llu (%.2f%%); on ground %.1f%%;"
           " penetration violations %llu (any start %llu, spawned overlapping %llu); respawns %llu;"
           " walked %.1f m/char\n",
           pct(k.branch[KCC_BRANCH_P2], k.moves), pct(k.branch[KCC_BRANCH_P4], k.moves),
           pct(k.branch[KCC_BRANCH_P1], k.moves), pct(k.branch[KCC_BRANCH_P0], k.moves),
           (unsigned long long)k.stuck, pct(k.stuck, k.moves), pct(k.on_ground, k.moves),
           (unsigned long long)k.violations, (unsigned long long)k.violations_any,
           (unsigned long long)k.start_overlap, (unsigned long long)k.respawns,
           k.walked / n);
    if (n == 1) {
        printf("         kcc us/move by final branch (median):");
        for (int br : {KCC_BRANCH_P2, KCC_BRANCH_P4, KCC_BRANCH_P1, KCC_BRANCH_P0})
            if (!run.branch_us[br].empty())
                printf("  P%d %.3f (%zu moves)", br, bench_median(run.branch_us[br].data(), run.branch_us[br].size()),
                       run.branch_us[br].size() / REPS_ONE);
        printf("\n");
    }
    if (run.bframes < FRAMES)
        printf("         kcc median over the first %d frames (Bullet's run): %.3f us/move\n", run.bframes, run.k_same);
    printf("         bullet (%d frames, build %.1f ms): box on ground %.1f%%, respawns %llu, walked %.1f m/char;"
           " capsule on ground %.1f%%, respawns %llu, walked %.1f m/char\n", run.bframes, run.bb->build_ms,
           pct(b.on_ground, b.moves), (unsigned long long)b.respawns, b.walked / n,
           pct(p.on_ground, p.moves), (unsigned long long)p.respawns, p.walked / n);
}

/* Both runs (COUNTS characters) on one level, printed under its header; its row of figures. */
LevelRow bench_one_level(const bench_level &bl, const kcc_mesh *mesh)
{
    LevelRow row;
    snprintf(row.name, sizeof row.name, "%s", bl.name);
    printf("\n== %s: %u triangles, %u spawns, %d frames\n", bl.name, bl.level.triangle_count,
           bl.level.spawn_count, FRAMES);
    printf("  %5s  %12s %8s  %13s %8s  %13s %8s  %8s %8s\n", "chars", "kcc us/move", "(mean)", "bullet box",
           "(mean)", "bullet capsule", "(mean)", "box/kcc", "caps/kcc");
    for (int c = 0; c < 2; ++c) {
        EngineRun run;
        run.bframes = COUNTS[c] > 1 ? BULLET_MANY_FRAMES : FRAMES;
        if (COUNTS[c] > 1)
            run_lock_step(bl.level, mesh, COUNTS[c], &run);
        else
            run_one_repeated(bl.level, mesh, &run);
        report_run(run, c, &row);
        fflush(stdout);
    }
    return row;
}

/* Every level of dir (generated ones without the shared levels; the generated 1M-triangle mesh without
 * them or with KCC_BENCH_BIG=1: its bumpy 0.5 m terrain cells make Bullet's 256-character run take
 * minutes), those whose name contains `only` when set; levels without spawn points are skipped. */
std::vector<LevelRow> bench_levels(const char *dir, const char *only)
{
    static char names[BENCH_MAX_LEVELS][64];
    int nlevels = bench_level_list(dir, names, BENCH_MAX_LEVELS);
    bool shared = nlevels > 0;
    if (!shared) printf("no levels at %s: generated levels only\n", dir);
    int count = shared ? nlevels : 2;
    std::vector<LevelRow> rows;
    bool big = !shared || (getenv("KCC_BENCH_BIG") && atoi(getenv("KCC_BENCH_BIG")));
    for (int li = 0; li < count + (big ? 1 : 0); ++li) {
        bench_level bl;
        bool ok;
        if (li == count) ok = bench_generate_big(700, 2000, &bl);
        else if (shared) ok = bench_level_load(dir, names[li], &bl);
        else ok = bench_level_generate(li == 0 ? "arena" : "terrain", &bl);
        if (!ok) continue;
        if ((only && !strstr(bl.name, only)) || bl.level.spawn_count == 0) {
            if (bl.level.spawn_count == 0) printf("\n== %s: no spawn points, skipped\n", bl.name);
            bench_level_free(&bl);
            continue;
        }
        kcc_mesh *mesh = bench_build_mesh(&bl);
        if (!mesh) { bench_level_free(&bl); continue; }
        rows.push_back(bench_one_level(bl, mesh));
        kcc_mesh_destroy(mesh);
        bench_level_free(&bl);
    }
    return rows;
}

/* The targets' worst level and character count, and whether they pass. */
void print_summary(const std::vector<LevelRow> &rows)
{
    double worst_us = 0.0, worst_box = 1e30, worst_caps = 1e30;
    const char *wl_us = "", *wl_box = "", *wl_caps = "";
    for (const LevelRow &r : rows)
        for (int c = 0; c < 2; ++c) {
            if (r.kcc_us[c] > worst_us) { worst_us = r.kcc_us[c]; wl_us = r.name; }
            if (r.box_ratio[c] < worst_box) { worst_box = r.box_ratio[c]; wl_box = r.name; }
            if (r.capsule_ratio[c] < worst_caps) { worst_caps = r.capsule_ratio[c]; wl_caps = r.name; }
        }
    const char *na = rows.empty() ? "n/a" : nullptr;
    printf("\nsummary (medians, worst level and character count):\n");
    printf("  %-56s worst %8.3f us (%s)  %s\n", "kcc under 1 us per move on every level", worst_us, wl_us,
           na ? na : worst_us < 1.0 ? "PASS" : "FAIL");
    printf("  %-56s worst %8.1f x  (%s)  %s\n", "kcc >= 25x faster than Bullet's controller (box)", worst_box, wl_box,
           na ? na : worst_box >= 25.0 ? "PASS" : "FAIL");
    printf("  %-56s worst %8.1f x  (%s)  %s\n", "kcc >= 25x faster than Bullet's controller (capsule)", worst_caps,
           wl_caps, na ? na : worst_caps >= 25.0 ? "PASS" : "FAIL");
}

/* The same figures as a markdown table, for docs/bench.md. */
void print_markdown(const std::vector<LevelRow> &rows)
{
    printf("\nmarkdown:\n\n| level | chars | kcc us/move | bullet box | bullet capsule | box/kcc | capsule/kcc |"
           " P2 | P4 | P1 | P0 | STUCK | violations |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (const LevelRow &r : rows)
        for (int c = 0; c < 2; ++c)
            printf("| %s | %u | %.3f | %.1f | %.1f | %.1f | %.1f | %.1f%% | %.1f%% | %.2f%% | %.2f%% | %.2f%% | %llu |\n",
                   r.name, COUNTS[c], r.kcc_us[c], r.box_us[c], r.capsule_us[c], r.box_ratio[c], r.capsule_ratio[c],
                   r.branch_pct[c][KCC_BRANCH_P2], r.branch_pct[c][KCC_BRANCH_P4], r.branch_pct[c][KCC_BRANCH_P1],
                   r.branch_pct[c][KCC_BRANCH_P0], r.stuck_pct[c], (unsigned long long)r.violations[c]);
}

} // namespace

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "../shared/levels";
    const char *only = getenv("KCC_BENCH_ONLY");
    if (getenv("KCC_BENCH_FRAMES")) FRAMES = std::max(1, atoi(getenv("KCC_BENCH_FRAMES")));
    if (getenv("KCC_BENCH_BULLET_FRAMES")) BULLET_MANY_FRAMES = std::max(1, atoi(getenv("KCC_BENCH_BULLET_FRAMES")));
    BULLET_MANY_FRAMES = std::min(BULLET_MANY_FRAMES, FRAMES);

    CLOCK_OVERHEAD = bench_clock_overhead_ns();
    printf("clock %s, %.0f ns per reading (subtracted from each frame time)\n", bench_clock_name(), CLOCK_OVERHEAD);
    bench_print_load("at the start");
    bench_warmup(300.0);
    printf("bench_controller: us per character move, median over %d frames (60 Hz) of the per-frame time / characters;\n"
           "box 0.94 x 1.75 x 0.94 m, step %.4g m, slope %.1f deg, walk %.0f m/s, gravity %.0f m/s^2, jump %.2f m/s.\n"
           "Bullet: btKinematicCharacterController + btPairCachingGhostObject (btBoxShape, same size) in a btCollisionWorld\n"
           "(btDbvtBroadphase + btGhostPairCallback), per frame updateAabbs + computeOverlappingPairs + updateAction each.\n",
           FRAMES, STEP, SLOPE_DEG, SPEED, GRAVITY, JUMP_SPEED);
    printf("kcc moves run the %s build (kcc_character_isa; KCC_ISA=baseline forces the baseline)\n",
           kcc_character_isa());

    double t_start = bench_wall_ns();
    std::vector<LevelRow> rows = bench_levels(dir, only);
    print_summary(rows);
    print_markdown(rows);
    bench_print_load("at the end");
    printf("\ntotal %.1f s\n", (bench_wall_ns() - t_start) * 1e-9);
    return 0;
}
