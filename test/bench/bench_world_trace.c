/* bench_world_trace.c: what recording a world trace costs: the synthetic world of
 * test/world_scene.h with 64 characters and 10 movers (8 lifts, a door, a turntable) run for 3600
 * steps (a minute at 60 Hz), without a recorder and with one writing to a file; reports the trace's
 * size and the recording's share of a step (best of 5 runs each, interleaved), and replays the
 * trace to check it. Twice: the scene as it is (the walkers turn every 90 steps), and a busier one
 * where every walker steers a little at every step (a bot following a path), so that every
 * character writes a `d` line and an `=` line at every step.
 * Budget (issue 26): under 10 MB, under 5% of a step.   bench_world_trace [DIR] (DIR unused);
 * bench_world_trace --record-once scene|busy: one recorded run only (for a profiler). */
#define _POSIX_C_SOURCE 200809L   /* clock_gettime, mkdtemp */
#include <time.h>

#include "../world_scene.h"

enum { CROWD = 64, LIFTS = 8, STEPS = 3600, RUNS = 5 };

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);   // CPU time: the machine may be shared
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/// The busier world's step: the scene's, with every walker's heading turned a little first.
static void busy_step(world_scene *s, kcc_world *world, uint32_t step)
{
    for (uint32_t i = 3; i < s->crowd_count; ++i)
        s->heading[i] += 0.02f * sinf(0.05f * (float)step + (float)i);
    world_scene_step(s, world, step);
}

/// Seconds for STEPS steps of the scene (busy: the busier one), recorded into `path` when it is not
/// NULL.
static double run(world_scene *s, bool busy, const char *path, long *out_bytes)
{
    kcc_world *world = NULL;
    if (kcc_world_create(NULL, &world) != KCC_OK)
        exit(2);
    FILE *f = path ? fopen(path, "w") : NULL;
    kcc_trace_writer w;
    if (f && (kcc_world_trace_begin(&w, f, world) != KCC_OK ||
              world_scene_name_levels(s, &w) != KCC_OK))
        exit(2);
    world_scene_populate(s, world, LIFTS, CROWD);
    const double t0 = now_s();
    for (uint32_t i = 0; i < STEPS; ++i)
        (busy ? busy_step : world_scene_step)(s, world, i);
    const double t = now_s() - t0;
    if (f) {
        if (kcc_trace_end(&w) != KCC_OK)
            exit(2);
        *out_bytes = ftell(f);
        fclose(f);
    }
    kcc_world_destroy(world);
    return t;
}

/// Measures one world and prints its line; false when its trace does not replay bit for bit.
static bool measure(const char *dir, bool busy)
{
    world_scene s;
    if (!world_scene_init(&s, dir, 5))
        exit(2);
    char path[256];
    snprintf(path, sizeof path, "%s/bench.trace", dir);
    double plain = 1e30, recorded = 1e30;
    long bytes = 0;
    for (int r = 0; r < RUNS; ++r) {
        double a = run(&s, busy, NULL, NULL), b = run(&s, busy, path, &bytes);
        plain = a < plain ? a : plain;
        recorded = b < recorded ? b : recorded;
    }
    char msg[512];
    bool ok = kcc_trace_check_file(path, 0.0f, msg, sizeof msg);
    printf("world trace (%s): %d characters, %d movers, %d steps: %.2f MB (%.1f bytes a "
           "character-step); a step %.1f us plain, %.1f us recorded: recording %.1f%% of a step; "
           "replays: %s\n", busy ? "every walker steering every step" : "the scene", CROWD,
           LIFTS + 2, STEPS, (double)bytes / 1e6, (double)bytes / (CROWD * STEPS),
           1e6 * plain / STEPS, 1e6 * recorded / STEPS, 100.0 * (recorded - plain) / plain,
           ok ? "bit for bit" : msg);
    world_scene_free(&s);
    return ok;
}

/// One recorded run of the scene (busy: the busier one) and nothing else, for a profiler to sample:
/// `perf record build/bench/bench_world_trace --record-once scene`, then the recorder's functions'
/// share (docs/traces.md, "Cost").
static bool record_once(const char *dir, bool busy)
{
    world_scene s;
    if (!world_scene_init(&s, dir, 5))
        return false;
    char path[256];
    snprintf(path, sizeof path, "%s/bench.trace", dir);
    long bytes = 0;
    run(&s, busy, path, &bytes);
    world_scene_free(&s);
    return bytes > 0;
}

int main(int argc, char **argv)
{
    char dir[] = "/tmp/kcc_bench_world_trace_XXXXXX";
    if (!mkdtemp(dir))
        return 2;
    const bool once = argc > 2 && strcmp(argv[1], "--record-once") == 0;
    const bool ok = once ? record_once(dir, strcmp(argv[2], "busy") == 0)
                         : measure(dir, false) && measure(dir, true);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 && ok ? 0 : 1;
}
