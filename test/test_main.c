/* test_main.c: runs every test group of the kcc test binary and prints the closing tally (passed,
 * failed, skipped, and which real levels the run had). `kcc_tests PATTERN` runs only the tests
 * whose names match PATTERN (cmocka's filter). */
#include "test.h"

int kcc_test_total = 0;
int kcc_test_skipped = 0;

/* How many lookups of a shared level found no file, for the closing tally. */
static int shared_levels_missing = 0;

static const char *const shared_levels[] = {
    "oa_bases3", "oa_dm1", "oa_dm4", "wrackdm17", "ctf_inyard",
};

void kcc_test_skip(const char *file, int line)
{
    ++kcc_test_skipped;
    _skip(file, line);
}

/* CI sets CI=true: there a test that would run without the shared levels fails instead. */
static bool running_in_ci(void)
{
    const char *ci = getenv("CI");
    return ci && strcmp(ci, "true") == 0;
}

static void report_missing_shared_level(const char *path)
{
    if (shared_levels_missing++ == 0)
        printf("# shared level %s is missing: the tests that use the shared levels run without them "
               "(copy the shared levels into %s, or build the tests with make LEVELS=DIR)\n",
               path, KCC_LEVELS_DIR);
    if (running_in_ci())
        fail_msg("shared level %s is missing and CI=true: CI runs every test on the shared levels "
                 "(copy them into %s, or make LEVELS=DIR)", path, KCC_LEVELS_DIR);
}

const char *kcc_test_shared_level(int i)
{
    static _Thread_local char path[512];
    if (i < 0 || i >= (int)(sizeof(shared_levels) / sizeof(shared_levels[0])))
        return NULL;
    snprintf(path, sizeof(path), "%s/%s.obj", KCC_LEVELS_DIR, shared_levels[i]);
    FILE *f = fopen(path, "rb");
    if (!f) {
        report_missing_shared_level(path);
        return NULL;
    }
    fclose(f);
    return path;
}

/* The closing tally: the counts, then which real levels the tests had. The imported maps are
 * optional (only the soak test uses them, when present). */
static void print_tally(int failed)
{
    printf("tests: %d passed, %d failed, %d skipped\n", kcc_test_total - failed - kcc_test_skipped, failed,
           kcc_test_skipped);
    if (shared_levels_missing)
        printf("tests: the shared levels are missing from %s: the tests that use them ran on generated "
               "levels or skipped (copy the shared levels there, or make LEVELS=DIR; CI=true fails)\n",
               KCC_LEVELS_DIR);
    else
        printf("tests: the shared levels from %s\n", KCC_LEVELS_DIR);
    FILE *list = fopen(KCC_IMPORTED_LEVELS_DIR "/levels.txt", "r");
    if (list) {
        fclose(list);
        printf("tests: the imported maps from %s\n", KCC_IMPORTED_LEVELS_DIR);
    } else {
        printf("tests: no imported maps in %s (optional: `make levels` imports them)\n",
               KCC_IMPORTED_LEVELS_DIR);
    }
}

typedef int (*group_fn)(void);

int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    static const group_fn groups[] = {
        test_group_base,
        test_group_collide,
        test_group_demo,
        test_group_movers,
        test_group_level,
        test_group_controller,
        test_group_local,
        test_group_trace,
        test_group_api,
        test_group_axes,
        test_group_world,
        test_group_world_step,
        test_group_broadphase,
        test_group_sphere,
        test_group_mesh_mesh,
        test_group_world_query,
        test_group_heightfield,
        test_group_world_sphere,
        test_group_world_trace,
    };
    int failed = 0;
    for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); ++i)
        failed += groups[i]();
    if (argc <= 1)
        print_tally(failed);
    return failed ? 1 : 0;
}
