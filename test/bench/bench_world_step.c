/* bench_world_step.c: crowds of characters stepped in a world (issue 23) against the same characters
 * moved one by one with kcc_character_move on the bare mesh, in the same run: us per character per
 * step with the step on one worker and on two (a small job system of persistent threads, as an
 * engine's is), the ratios, and the share of the step each phase takes (the broadphase's above
 * all, issue 22's target). The level is one static body at the identity: each shared level and a
 * generated one. docs/world.md, "Figures", holds the results.
 * Usage: bench_world_step [levels_dir]. Env: KCC_BENCH_COUNTS (e.g. "1000,10000"),
 * KCC_BENCH_FRAMES (timed steps at 1k characters; scaled down for more), KCC_BENCH_RUNS,
 * KCC_BENCH_ONLY (one level's name), KCC_BENCH_NO_BIG (skip the generated level),
 * KCC_BENCH_WORKERS=1 (no two-worker runs: for callgrind, which counts the instructions of plain moves and of the one-worker step apart),
 * KCC_BENCH_WITH_GAME=1 (the world runs' time holds the game's loop before each step too: reading
 * every character's state and setting its displacement, which warms or moves lines the step uses),
 * KCC_BENCH_GHOSTS=1 (the world's characters pass through each other, as the plain ones do: the
 * step's cost without the crowd's collisions), KCC_BENCH_PHASES (print every phase's time on one
 * worker and on two), KCC_BENCH_SPIN_US (how long an idle worker spins before it sleeps, 50). */
#include "bench.h"

#include <pthread.h>
#include <stdatomic.h>

#include "bench_crowd.h"

static int RUNS = 3;
static int FRAMES_1K = 120;   /* timed steps at 1,000 characters; FRAMES_1K * 1000 / n at n */
static bool WITH_GAME = false; /* KCC_BENCH_WITH_GAME: the game's loop timed with the step */
static bool GHOSTS = false;    /* KCC_BENCH_GHOSTS: the characters pass through each other */
static int MAX_WORKERS = 2;   /* the runs: plain, then the step on 1 .. MAX_WORKERS workers */
enum { WARM_FRAMES = 10 };    /* untimed steps first: the characters land and fill their caches */

/* ---------------------------------------------------------------- a job system of persistent threads */

/* What it models: an engine's job system (enkiTS, on which Box2D v3's samples run its task hooks,
 * and the like): persistent threads that take a posted task's items in ranges from a shared
 * counter, the calling thread taking its share; a task is done when all its items are (not when
 * every thread has looked in), and a thread with nothing to do spins on the queue a while, with a
 * pause instruction, before it sleeps, so that a task posted soon after the last one reaches it
 * without a system call. The spin is bounded by time (KCC_BENCH_SPIN_US; 0: threads sleep at
 * once, on a condition variable): on a virtual machine a sleeping thread's wake-up costs tens of
 * microseconds (a futex call and an interrupt through the host), which against a step of about a
 * millisecond at 1k characters in four or five tasks is a large share (docs/world.md, "Threads"). */
static double SPIN_NS = 50e3;

typedef struct jobs {
    int                       workers;
    pthread_t                 thread[8];
    _Atomic(kcc_task_fn *)    task;      /* the posted task, written before claim moves to it */
    _Atomic(void *)           context;
    atomic_uint               count, chunk;
    _Alignas(64) _Atomic uint64_t claim; /* the task's number << 32 | its next item to hand out */
    _Alignas(64) atomic_uint  done;      /* the task's items run */
    atomic_uint               sleepers;  /* threads asleep on wake */
    atomic_bool               caller_asleep; /* the caller asleep on finished */
    atomic_bool               quit;
    pthread_mutex_t           lock;
    pthread_cond_t            wake, finished;
} jobs;

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    atomic_signal_fence(memory_order_seq_cst);
#endif
}

/* Spins (pausing) until ready(j, arg), for at most SPIN_NS; returns whether it came. */
static bool spin_until(bool (*ready)(jobs *, uint64_t), jobs *j, uint64_t arg)
{
    const double end = bench_wall_ns() + SPIN_NS;
    for (;;) {
        for (int i = 0; i < 64; ++i) {
            if (ready(j, arg))
                return true;
            if (SPIN_NS <= 0.0)
                return false;
            cpu_relax();
        }
        if (bench_wall_ns() > end)
            return false;
    }
}

static bool task_posted(jobs *j, uint64_t seen)
{
    return atomic_load(&j->claim) >> 32 != seen || atomic_load(&j->quit);
}

static bool task_done(jobs *j, uint64_t count)
{
    return atomic_load(&j->done) == count;
}

/* Runs ranges of the task claim names while it has items left. A range is taken by moving the
 * claim from the value read, so it is taken only while that task is still the posted one (the
 * task's fields read before were then its own); returns the task's number. */
static uint32_t take_ranges(jobs *j, uint32_t worker)
{
    for (;;) {
        uint64_t v = atomic_load(&j->claim);
        kcc_task_fn *task = atomic_load_explicit(&j->task, memory_order_relaxed);
        void *context = atomic_load_explicit(&j->context, memory_order_relaxed);
        const uint32_t count = atomic_load_explicit(&j->count, memory_order_relaxed),
                       chunk = atomic_load_explicit(&j->chunk, memory_order_relaxed), begin = (uint32_t)v;
        if (begin >= count)
            return (uint32_t)(v >> 32);
        const uint32_t end = count - begin > chunk ? begin + chunk : count;
        if (!atomic_compare_exchange_weak(&j->claim, &v, v + (end - begin)))
            continue;
        task(begin, end, worker, context);
        if (atomic_fetch_add(&j->done, end - begin) + (end - begin) == count && atomic_load(&j->caller_asleep)) {
            pthread_mutex_lock(&j->lock);
            pthread_cond_signal(&j->finished);
            pthread_mutex_unlock(&j->lock);
        }
    }
}

typedef struct worker_arg {
    jobs    *j;
    uint32_t index;
} worker_arg;

/* Takes ranges of every task posted. The sleepers count and the claim are each written, then the
 * other read (sequentially consistent), so either the caller sees a thread asleep and wakes it or
 * the thread sees the new task and stays up; the same between the caller asleep and the last
 * range done. */
static void *worker_main(void *arg)
{
    worker_arg *w = arg;
    jobs *j = w->j;
    uint64_t seen = 0;
    for (;;) {
        if (!spin_until(task_posted, j, seen)) {
            pthread_mutex_lock(&j->lock);
            atomic_fetch_add(&j->sleepers, 1u);
            while (!task_posted(j, seen))
                pthread_cond_wait(&j->wake, &j->lock);
            atomic_fetch_sub(&j->sleepers, 1u);
            pthread_mutex_unlock(&j->lock);
        }
        if (atomic_load(&j->quit))
            return NULL;
        seen = take_ranges(j, w->index);
    }
}

static worker_arg worker_args[8];

static void jobs_start(jobs *j, int workers)
{
    memset(j, 0, sizeof *j);
    j->workers = workers;
    pthread_mutex_init(&j->lock, NULL);
    pthread_cond_init(&j->wake, NULL);
    pthread_cond_init(&j->finished, NULL);
    for (int w = 1; w < workers; ++w) {
        worker_args[w].j = j;
        worker_args[w].index = (uint32_t)w;
        pthread_create(&j->thread[w], NULL, worker_main, &worker_args[w]);
    }
}

static void wake_sleepers(jobs *j)
{
    if (atomic_load(&j->sleepers) > 0) {
        pthread_mutex_lock(&j->lock);
        pthread_cond_broadcast(&j->wake);
        pthread_mutex_unlock(&j->lock);
    }
}

static void jobs_stop(jobs *j)
{
    atomic_store(&j->quit, true);
    wake_sleepers(j);
    for (int w = 1; w < j->workers; ++w)
        pthread_join(j->thread[w], NULL);
    pthread_mutex_destroy(&j->lock);
    pthread_cond_destroy(&j->wake);
    pthread_cond_destroy(&j->finished);
}

/* Ranges of min_range items (at least count / (8 workers)) handed out to whoever is free. */
static void *enqueue(kcc_task_fn *task, uint32_t count, uint32_t min_range, void *context, void *user)
{
    jobs *j = user;
    const uint32_t share = count / (8u * (uint32_t)j->workers);
    atomic_store_explicit(&j->task, task, memory_order_relaxed);
    atomic_store_explicit(&j->context, context, memory_order_relaxed);
    atomic_store_explicit(&j->count, count, memory_order_relaxed);
    atomic_store_explicit(&j->chunk, min_range > share ? min_range : (share > 0 ? share : 1),
                          memory_order_relaxed);
    atomic_store(&j->done, 0u);
    atomic_store(&j->claim, ((atomic_load(&j->claim) >> 32) + 1) << 32);
    wake_sleepers(j);
    take_ranges(j, 0);
    return j;
}

static void finish(void *handle, void *user)
{
    (void)user;
    jobs *j = handle;
    const uint64_t count = atomic_load_explicit(&j->count, memory_order_relaxed);
    if (spin_until(task_done, j, count))
        return;
    pthread_mutex_lock(&j->lock);
    atomic_store(&j->caller_asleep, true);
    while (!task_done(j, count))
        pthread_cond_wait(&j->finished, &j->lock);
    atomic_store(&j->caller_asleep, false);
    pthread_mutex_unlock(&j->lock);
}

/* ---------------------------------------------------------------- the runs */

typedef struct run_result {
    double us;                      /* per character per step */
    double phase_us[KCC_PHASE_COUNT];
    bool   pairs_overflowed;
} run_result;

static kcc_world *make_world(const kcc_mesh *m, int n, jobs *j)
{
    kcc_world_desc wd = kcc_world_default_desc();
    wd.character_capacity = (uint32_t)n;
    wd.pair_capacity = 48u * (uint32_t)n;
    wd.piece_capacity = 65536;
    wd.worker_count = (uint32_t)j->workers;
    wd.enqueue_task = enqueue;
    wd.finish_task = finish;
    wd.user_task_context = j;
    kcc_world *w = NULL;
    uint32_t level;
    if (kcc_world_create(&wd, &w) != KCC_OK || kcc_world_add_body(w, m, NULL, &level) != KCC_OK) {
        fprintf(stderr, "bench_world_step: cannot make the world\n");
        exit(1);
    }
    return w;
}

/* One run of `frames` timed steps: plain moves (workers 0) or a world stepped on `workers`. */
static run_result run(const kcc_mesh *m, vec3 *at, int n, int workers, int frames)
{
    const kcc_character_desc d = player();
    kcc_character *solo = calloc((size_t)n, sizeof *solo);
    float *vy = calloc((size_t)n, sizeof *vy);
    uint32_t *ids = calloc((size_t)n, sizeof *ids);
    jobs j;
    kcc_world *w = NULL;
    if (workers > 0) {
        jobs_start(&j, workers);
        w = make_world(m, n, &j);
    }
    for (int c = 0; c < n; ++c) {
        if (w) {
            kcc_world_add_character(w, &d, at[c], &ids[c]);
            if (GHOSTS) /* on layer 2, colliding with layer 1 (the level's) alone */
                kcc_world_set_character_layers(w, ids[c], 2u, 1u);
        }
        else
            kcc_character_init(&solo[c], &d, at[c]);
    }
    run_result res;
    memset(&res, 0, sizeof res);
    phase_clock pc;
    memset(&pc, 0, sizeof pc);
    double total = 0.0;
    for (int f = 0; f < WARM_FRAMES + frames; ++f) {
        vec3 disp;
        double t0;
        if (w) {
            const double game_t0 = bench_now_ns();
            for (int c = 0; c < n; ++c) {
                kcc_character_state st;
                kcc_world_get_character(w, ids[c], &st, NULL);
                wander(c, f, st.on_ground, &vy[c], disp);
                kcc_world_set_displacement(w, ids[c], disp);
            }
            if (f == WARM_FRAMES)
                memset(&pc, 0, sizeof pc);
            t0 = pc.last = bench_now_ns();
            if (WITH_GAME)
                t0 = game_t0;
            kcc_world_step_marked(w, mark_phase, &pc);
            res.pairs_overflowed |= kcc_world_characters(w)->near.all;
        } else {
            t0 = bench_now_ns();
            for (int c = 0; c < n; ++c) {
                wander(c, f, solo[c].on_ground, &vy[c], disp);
                kcc_character_move(&solo[c], m, disp, NULL);
            }
        }
        if (f >= WARM_FRAMES)
            total += bench_now_ns() - t0;
    }
    if (w) {
        kcc_world_destroy(w);
        jobs_stop(&j);
    }
    free(solo);
    free(vy);
    free(ids);
    res.us = total / frames / n * 1e-3;
    for (int p = 0; p < KCC_PHASE_COUNT; ++p)
        res.phase_us[p] = pc.ns[p] / frames / n * 1e-3;
    return res;
}

/* The medians of RUNS runs of plain moves, one worker and two, interleaved, printed as a row. */
static void bench_crowd(const char *name, const kcc_mesh *m, int count)
{
    vec3 *at = calloc((size_t)count, sizeof *at);
    const int n = crowd_starts(m, count, 7u + (uint32_t)count, at);
    const int frames = FRAMES_1K * 1000 / n > 8 ? FRAMES_1K * 1000 / n : 8;
    double t[3][16] = {{0.0}}, phase[KCC_PHASE_COUNT][16], phase2[KCC_PHASE_COUNT][16];
    bool overflow = false;
    for (int r = 0; r < RUNS; ++r)
        for (int k = 0; k <= MAX_WORKERS; ++k) {
            const run_result res = run(m, at, n, k, frames);
            t[k][r] = res.us;
            overflow |= res.pairs_overflowed;
            for (int p = 0; p < KCC_PHASE_COUNT && k > 0; ++p)
                (k == 1 ? phase : phase2)[p][r] = res.phase_us[p];
        }
    if (getenv("KCC_BENCH_PHASES"))
        for (int k = 1; k <= MAX_WORKERS; ++k) {
            printf("  phases %dw:", k);
            for (int p = 0; p < KCC_PHASE_COUNT; ++p)
                printf(" %.4f", bench_median((k == 1 ? phase : phase2)[p], (size_t)RUNS));
            printf("\n");
        }
    const double plain = bench_median(t[0], (size_t)RUNS), one = bench_median(t[1], (size_t)RUNS),
                 two = bench_median(t[2], (size_t)RUNS);
    double ph[KCC_PHASE_COUNT];
    for (int p = 0; p < KCC_PHASE_COUNT; ++p)
        ph[p] = bench_median(phase[p], (size_t)RUNS);
    /* the phases the step runs on the calling thread alone bound what a second worker can give
       (the neighbour lists are found in parallel; the region grid is built and the lists mirrored
       on the calling thread) */
    const double serial = ph[KCC_PHASE_BODIES] + ph[KCC_PHASE_BROADPHASE] + ph[KCC_PHASE_MIRROR] +
                          ph[KCC_PHASE_RESOLVE] + ph[KCC_PHASE_SENSORS];
    double total = 0.0;
    for (int p = 0; p < KCC_PHASE_COUNT; ++p)
        total += ph[p];
    const double bound = total > 0.0 ? total / (serial + 0.5 * (total - serial)) : 0.0;
    printf("%-14s %6d %7.3f %8.3f %8.3f %7.2f %7.2f %7.3f %7.2f %7.3f %7.2f %7.3f %7.3f %7.3f %7.2f%s\n",
           name, n, plain, one, two, one / plain, one / two, ph[KCC_PHASE_BROADPHASE],
           ph[KCC_PHASE_BROADPHASE] / plain, ph[KCC_PHASE_NEIGHBOURS],
           (ph[KCC_PHASE_BROADPHASE] + ph[KCC_PHASE_NEIGHBOURS]) / plain,
           ph[KCC_PHASE_PLACING] + ph[KCC_PHASE_CHARACTERS],
           ph[KCC_PHASE_SNAPSHOT] + ph[KCC_PHASE_OVERLAPS], serial - ph[KCC_PHASE_BROADPHASE], bound,
           overflow ? "  (neighbour lists overflowed)" : "");
    fflush(stdout);
    free(at);
}

static void bench_mesh(const char *name, const kcc_mesh *m, const int *counts, int count_n)
{
    for (int ci = 0; ci < count_n; ++ci)
        bench_crowd(name, m, counts[ci]);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "../shared/levels";
    if (getenv("KCC_BENCH_SPIN_US"))
        SPIN_NS = atof(getenv("KCC_BENCH_SPIN_US")) * 1e3;
    if (getenv("KCC_BENCH_FRAMES"))
        FRAMES_1K = atoi(getenv("KCC_BENCH_FRAMES"));
    WITH_GAME = getenv("KCC_BENCH_WITH_GAME") && atoi(getenv("KCC_BENCH_WITH_GAME")) == 1;
    GHOSTS = getenv("KCC_BENCH_GHOSTS") && atoi(getenv("KCC_BENCH_GHOSTS")) == 1;
    if (getenv("KCC_BENCH_WORKERS") && atoi(getenv("KCC_BENCH_WORKERS")) == 1)
        MAX_WORKERS = 1;
    if (getenv("KCC_BENCH_RUNS"))
        RUNS = atoi(getenv("KCC_BENCH_RUNS")) > 0 && atoi(getenv("KCC_BENCH_RUNS")) <= 16
                   ? atoi(getenv("KCC_BENCH_RUNS")) : RUNS;
    int counts[4] = {1000, 10000}, count_n = 2;
    if (getenv("KCC_BENCH_COUNTS")) {
        count_n = 0;
        for (const char *s = getenv("KCC_BENCH_COUNTS"); *s && count_n < 4;) {
            counts[count_n++] = atoi(s);
            while (*s && *s != ',')
                ++s;
            if (*s == ',')
                ++s;
        }
    }
    const char *only = getenv("KCC_BENCH_ONLY");
    bench_warmup(200.0);
    bench_print_load("before");
    printf("bench_world_step: us per character per step, median of %d runs of %d steps at 1k characters "
           "(fewer at more) (%s)\n", RUNS, FRAMES_1K, bench_clock_name());
    printf("plain: kcc_character_move on the bare mesh; 1w, 2w: kcc_world_step on 1 and 2 workers\n"
           "(2w-x: throughput of 2 over 1; idle workers spin %.0f us before they sleep); phases of the\n"
           "1w step per character: bp (the region grid built, the pieces' pairs updated), near\n"
           "(neighbour lists, in parallel), bn/pl (bp + near over plain), moves, snap (boxes, regions,\n"
           "and the resolve pass's first look, in parallel), serial (bodies, the lists' mirror,\n"
           "resolve, sensors); 2w-max: the throughput 2 workers could give with the serial phases\n"
           "(bodies, bp, mirror, resolve, sensors) on one\n", SPIN_NS * 1e-3);
    printf("%-14s %6s %7s %8s %8s %7s %7s %7s %7s %7s %7s %7s %7s %7s %7s\n", "level", "chars", "plain",
           "world1w", "world2w", "1w/pl", "2w-x", "bp", "bp/pl", "near", "bn/pl", "moves", "snap",
           "serial", "2w-max");
    for (int li = 0; li < BENCH_LEVEL_COUNT; ++li) {
        if (only && strcmp(only, bench_level_names[li]) != 0)
            continue;
        bench_level lv;
        if (!bench_level_load(dir, bench_level_names[li], &lv))
            continue;
        kcc_mesh *m = bench_build_mesh(&lv);
        if (m)
            bench_mesh(bench_level_names[li], m, counts, count_n);
        kcc_mesh_destroy(m);
        bench_level_free(&lv);
    }
    bench_level big;
    if (!getenv("KCC_BENCH_NO_BIG") && (!only || strcmp(only, "generated") == 0) &&
        bench_generate_big(300, 800, &big)) {
        kcc_mesh *m = bench_build_mesh(&big);
        if (m)
            bench_mesh("generated_190k", m, counts, count_n);
        kcc_mesh_destroy(m);
        bench_level_free(&big);
    }
    bench_print_load("after");
    return 0;
}
