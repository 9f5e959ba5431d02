/* test.h: shared helpers of the one cmocka test binary: group registration and small geometry
 * helpers. Each test_<module>.c defines one group function listed in test_main.c. */
#ifndef KCC_TEST_H
#define KCC_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcc.h"

#ifndef KCC_LEVELS_DIR
#define KCC_LEVELS_DIR "../shared/levels"
#endif
/* The Quake 3 maps `make levels` imports (with a levels.txt list), when present. */
#ifndef KCC_IMPORTED_LEVELS_DIR
#define KCC_IMPORTED_LEVELS_DIR "build/levels"
#endif

/* Totals over all groups, for the closing "N passed, N failed" line. */
extern int kcc_test_total;

/* A small fixed-seed PRNG (xorshift64) for the test inputs. `salt` keeps each file's sequences its
 * own. */
typedef struct test_rng {
    uint64_t s;
} test_rng;

static inline test_rng rng_seed_salted(uint64_t seed, uint64_t salt)
{
    test_rng r = {seed * 0x9E3779B97F4A7C15ull + salt};
    return r;
}

static inline uint32_t rng_u32(test_rng *r)
{
    r->s ^= r->s << 13;
    r->s ^= r->s >> 7;
    r->s ^= r->s << 17;
    return (uint32_t)(r->s >> 32);
}

/* uniform in [lo, hi) */
static inline float rng_f(test_rng *r, float lo, float hi)
{
    return lo + (hi - lo) * (float)((double)rng_u32(r) / 4294967296.0);
}

/* Runs a cmocka group and adds its size to the total; evaluates to the number of failures. */
#define KCC_RUN_GROUP(name, tests) \
    (kcc_test_total += (int)(sizeof(tests) / sizeof((tests)[0])), \
     _cmocka_run_group_tests(name, tests, sizeof(tests) / sizeof((tests)[0]), NULL, NULL))

/* One function per test file, listed in test_main.c. Each returns its failure count. */
int test_group_base(void);
int test_group_collide(void);
int test_group_level(void);
int test_group_controller(void);
int test_group_local(void);
int test_group_trace(void);
int test_group_demo(void);

/* The five shared levels when ../shared/levels is present; returns the path of level i or NULL. */
const char *kcc_test_shared_level(int i);

#endif
