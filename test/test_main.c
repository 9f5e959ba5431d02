/* test_main.c: runs every test group of the kcc test binary and prints the closing tally.
 * `kcc_tests PATTERN` runs only the tests whose names match PATTERN (cmocka's filter). */
#include "test.h"

int kcc_test_total = 0;

static const char *const shared_levels[] = {
    "oa_bases3", "oa_dm1", "oa_dm4", "wrackdm17", "ctf_inyard",
};

const char *kcc_test_shared_level(int i)
{
    static _Thread_local char path[512];
    if (i < 0 || i >= (int)(sizeof(shared_levels) / sizeof(shared_levels[0])))
        return NULL;
    snprintf(path, sizeof(path), "%s/%s.obj", KCC_LEVELS_DIR, shared_levels[i]);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fclose(f);
    return path;
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
        test_group_level,
        test_group_controller,
        test_group_local,
        test_group_trace,
    };
    int failed = 0;
    for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); ++i)
        failed += groups[i]();
    if (argc <= 1)
        printf("tests: %d passed, %d failed\n", kcc_test_total - failed, failed);
    return failed ? 1 : 0;
}
