/* bench_world_step.c: characters stepped in a world against the same characters moved one by one
 * with kcc_character_move: us per character per step on each shared level (the level one static
 * body at the identity), with the step on one worker and on two (a small pthread job system, as
 * an engine's would be). Usage: bench_world_step [levels_dir]; KCC_BENCH_BROADPHASE=sap or grid picks
 * the world's broadphase (unset: the default). */
#include "bench.h"

#include <pthread.h>

enum { RUNS = 5 };
static int FRAMES = 300;

/* ---------------------------------------------------------------- a job system of two threads */

typedef struct job_range {
    kcc_task_fn *task;
    void        *context;
    uint32_t     begin, end, worker;
} job_range;

typedef struct jobs {
    int       workers;
    pthread_t thread[8];
    job_range range[8];
    int       started;
} jobs;

static void *run_range(void *arg)
{
    job_range *r = arg;
    r->task(r->begin, r->end, r->worker, r->context);
    return NULL;
}

/* Ranges split evenly over the workers; the calling thread runs the first. */
static void *enqueue(kcc_task_fn *task, uint32_t count, uint32_t min_range, void *context, void *user)
{
    jobs *j = user;
    (void)min_range;
    const uint32_t per = (count + (uint32_t)j->workers - 1) / (uint32_t)j->workers;
    j->started = 0;
    for (int w = 1; w < j->workers && (uint32_t)w * per < count; ++w) {
        job_range r = {task, context, (uint32_t)w * per,
                       (uint32_t)(w + 1) * per < count ? (uint32_t)(w + 1) * per : count, (uint32_t)w};
        j->range[w] = r;
        pthread_create(&j->thread[w], NULL, run_range, &j->range[w]);
        j->started = w;
    }
    task(0, per < count ? per : count, 0, context);
    return j;
}

static void finish(void *handle, void *user)
{
    (void)user;
    jobs *j = handle;
    for (int w = 1; w <= j->started; ++w)
        pthread_join(j->thread[w], NULL);
}

/* ---------------------------------------------------------------- the wanderers */

static kcc_character_desc player(void)
{
    kcc_character_desc d = kcc_character_default_desc();
    d.half_extents[0] = d.half_extents[2] = 0.47f;
    d.half_extents[1] = 0.875f;
    d.step_height = 0.5625f;
    return d;
}

static void wander(int c, int f, bool on_ground, float *vy, vec3 out)
{
    const float heading = 0.9f * (float)c + 2.1f * (float)(f / 45);
    *vy = on_ground ? ((f + c) % 97 == 0 ? 8.0f : 0.0f) : *vy - 25.0f / 60.0f;
    out[0] = 6.0f / 60.0f * cosf(heading);
    out[1] = *vy / 60.0f;
    out[2] = 6.0f / 60.0f * sinf(heading);
}

/* Start points: the level's spawns, a few to a spawn, stacked 2 m apart where the level leaves
 * room (kcc_character_fits). Returns how many it found (up to n). */
static int starts(const kcc_level *lv, const kcc_mesh *m, int n, vec3 *out)
{
    const kcc_character_desc d = player();
    int found = 0;
    for (uint32_t spot = 0; found < n && spot < 64 * lv->spawn_count; ++spot) {
        const float *sp = &lv->spawns[3 * (spot % lv->spawn_count)];
        const float dx = (float)(spot / lv->spawn_count % 4) * 1.0f - 1.5f;
        const vec3 at = {sp[0] + dx, sp[1] + d.half_extents[1] + 0.01f + 2.0f * (float)(spot / lv->spawn_count / 4),
                         sp[2]};
        if (kcc_character_fits(&d, m, at) == KCC_OK)
            memcpy(out[found++], at, sizeof(vec3));
    }
    return found;
}

/* us per character per step: plain moves (workers 0) or a world stepped on `workers`. */
static double run(const kcc_mesh *m, vec3 *at, int n, int workers)
{
    const kcc_character_desc d = player();
    kcc_character *solo = calloc((size_t)n, sizeof *solo);
    float *vy = calloc((size_t)n, sizeof *vy);
    uint32_t *ids = calloc((size_t)n, sizeof *ids);
    kcc_world *w = NULL;
    jobs j = {workers, {0}, {{0}}, 0};
    if (workers > 0) {
        kcc_world_desc wd = kcc_world_default_desc();
        wd.character_capacity = (uint32_t)n;
        wd.worker_count = (uint32_t)workers;
        wd.enqueue_task = enqueue;
        wd.finish_task = finish;
        wd.user_task_context = &j;
        const char *kind = getenv("KCC_BENCH_BROADPHASE"); /* sap or grid; unset: the default */
        if (kind)
            wd.broadphase = strcmp(kind, "grid") == 0 ? KCC_BROADPHASE_GRID : KCC_BROADPHASE_SAP;
        kcc_world_create(&wd, &w);
        uint32_t level;
        kcc_world_add_body(w, m, NULL, &level);
    }
    for (int c = 0; c < n; ++c) {
        if (w)
            kcc_world_add_character(w, &d, at[c], &ids[c]);
        else
            kcc_character_init(&solo[c], &d, at[c]);
    }
    double total = 0.0;
    for (int f = 0; f < FRAMES; ++f) {
        vec3 disp;
        double t0;
        if (w) {
            for (int c = 0; c < n; ++c) {
                kcc_character_state st;
                kcc_world_get_character(w, ids[c], &st, NULL);
                wander(c, f, st.on_ground, &vy[c], disp);
                kcc_world_set_displacement(w, ids[c], disp);
            }
            t0 = bench_now_ns();
            kcc_world_step(w);
        } else {
            t0 = bench_now_ns();
            for (int c = 0; c < n; ++c) {
                wander(c, f, solo[c].on_ground, &vy[c], disp);
                kcc_character_move(&solo[c], m, disp, NULL);
            }
        }
        total += bench_now_ns() - t0;
    }
    kcc_world_destroy(w);
    free(solo);
    free(vy);
    free(ids);
    return total / FRAMES / n * 1e-3;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "../shared/levels";
    if (getenv("KCC_BENCH_FRAMES"))
        FRAMES = atoi(getenv("KCC_BENCH_FRAMES"));
    static const char *const names[] = {"oa_bases3", "oa_dm1", "oa_dm4", "wrackdm17", "ctf_inyard"};
    static const int counts[] = {64, 256};
    printf("bench_world_step: us per character per step, median of %d runs of %d steps (%s)\n", RUNS,
           FRAMES, bench_clock_name());
    printf("%-12s %6s %10s %10s %10s %8s %8s\n", "level", "chars", "plain", "world 1w", "world 2w",
           "1w/plain", "2w/1w");
    for (size_t li = 0; li < sizeof names / sizeof names[0]; ++li) {
        char path[1024], err[256];
        snprintf(path, sizeof path, "%s/%s.obj", dir, names[li]);
        kcc_level lv;
        kcc_mesh *m = NULL;
        if (kcc_level_load_obj(path, &lv, err, sizeof err) != KCC_OK || lv.spawn_count == 0 ||
            kcc_level_build_mesh(&lv, &m) != KCC_OK) {
            printf("%-12s (not found: %s)\n", names[li], path);
            continue;
        }
        for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ++ci) {
            vec3 *at = calloc((size_t)counts[ci], sizeof *at);
            const int n = starts(&lv, m, counts[ci], at);
            double t[3][RUNS];
            for (int r = 0; r < RUNS; ++r)
                for (int k = 0; k < 3; ++k)
                    t[k][r] = run(m, at, n, k);
            const double plain = bench_median(t[0], RUNS), one = bench_median(t[1], RUNS),
                         two = bench_median(t[2], RUNS);
            printf("%-12s %6d %10.3f %10.3f %10.3f %8.2f %8.2f\n", names[li], n, plain, one, two,
                   one / plain, two / one);
            free(at);
        }
        kcc_mesh_destroy(m);
        kcc_level_free(&lv);
    }
    return 0;
}
