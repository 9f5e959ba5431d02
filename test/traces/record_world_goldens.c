/* record_world_goldens.c: writes the world golden traces of test/traces/ (world_*.trace, and the
 * box OBJ files their movers and sensor use) by running the synthetic world of test/world_scene.h
 * with a recorder attached, the way a game records: kcc_world_trace_begin on the empty world, each
 * mesh named once, then nothing per frame. `make goldens` runs it after kcc-record-goldens.
 *   kcc-record-world-goldens [OUTDIR]      (OUTDIR defaults to test/traces) */
#include "../world_scene.h"

typedef struct world_golden {
    const char *name;
    const char *what;
    uint32_t    lifts, crowd, steps;
    uint64_t    seed;
} world_golden;

static const world_golden goldens[] = {
    {"world_movers", "a lift ride, a door crush, a turntable, a sensor; 6 characters", 1, 6, 480, 3},
    {"world_crowd", "a crowd of 40 around 3 lifts, a door, a turntable and a sensor", 3, 40, 600, 11},
};

static int record(const char *dir, const world_golden *g)
{
    world_scene s;
    if (!world_scene_init(&s, dir, g->seed)) {
        fprintf(stderr, "%s: cannot write or load the scene's levels\n", dir);
        return 2;
    }
    kcc_world *world = NULL;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.trace", dir, g->name);
    FILE *f = fopen(path, "w");
    kcc_trace_writer w;
    kcc_status st = f ? kcc_world_create(NULL, &world) : KCC_ERR_IO;
    if (st == KCC_OK)
        st = kcc_world_trace_begin(&w, f, world);
    if (st == KCC_OK) {
        kcc_trace_comment(&w, g->what);
        st = world_scene_name_levels(&s, &w);
        world_scene_populate(&s, world, g->lifts, g->crowd);
        for (uint32_t i = 0; i < g->steps; ++i)
            world_scene_step(&s, world, i);
        kcc_status end = kcc_trace_end(&w);
        st = st == KCC_OK ? end : st;
    }
    if (f && fclose(f) != 0 && st == KCC_OK)
        st = KCC_ERR_IO;
    kcc_world_destroy(world);
    world_scene_free(&s);
    if (st != KCC_OK) {
        fprintf(stderr, "%s: %s\n", path, kcc_status_str(st));
        return 2;
    }
    printf("%s: %u steps\n", path, (unsigned)g->steps);
    return 0;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "test/traces";
    int code = 0;
    for (size_t i = 0; i < sizeof goldens / sizeof goldens[0]; ++i) {
        int c = record(dir, &goldens[i]);
        code = c > code ? c : code;
    }
    return code;
}
