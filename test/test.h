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
#include "../demo/box_mesh.h"

/* Where the real levels are, as absolute paths the Makefile passes (so the binary finds them from
 * any working directory): KCC_LEVELS_DIR the shared levels (the Makefile's LEVELS), and
 * KCC_IMPORTED_LEVELS_DIR the Quake 3 maps `make levels` imports (with a levels.txt list). */
#if !defined(KCC_LEVELS_DIR) || !defined(KCC_IMPORTED_LEVELS_DIR)
#error "KCC_LEVELS_DIR and KCC_IMPORTED_LEVELS_DIR: build the tests with make, which passes both"
#endif

/* Totals over all groups, for the closing "tests: N passed, M failed, K skipped" line. */
extern int kcc_test_total;
extern int kcc_test_skipped;

/* A test skips with cmocka's skip(), which the suite routes through kcc_test_skip to count it: a
 * skipped test shows in the closing line as skipped, never as passed. */
void kcc_test_skip(const char *file, int line);
#undef skip
#define skip() kcc_test_skip(__FILE__, __LINE__)

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

/* The indices of a grid of cells x cells quads over (cells + 1)^2 vertices numbered row by row, two
 * triangles a quad (a c b, b c d); idx holds 6 cells^2 entries. Returns the triangle count. */
static inline uint32_t grid_indices(uint32_t cells, uint32_t *idx)
{
    const uint32_t w = cells + 1;
    uint32_t t = 0;
    for (uint32_t j = 0; j < cells; ++j)
        for (uint32_t i = 0; i < cells; ++i) {
            uint32_t a = j * w + i, b = a + 1, c = a + w, d = c + 1;
            idx[3 * t] = a, idx[3 * t + 1] = c, idx[3 * t + 2] = b, ++t;
            idx[3 * t] = b, idx[3 * t + 1] = c, idx[3 * t + 2] = d, ++t;
        }
    return t;
}

/* A closed box mesh [lo, hi] (12 triangles, each face wound to face out): the demo's helper. */
static inline kcc_mesh *test_box_mesh(const float lo[3], const float hi[3])
{
    kcc_mesh *m = NULL;
    assert_int_equal(demo_box_mesh(lo, hi, &m), KCC_OK);
    return m;
}

/* A uniformly random unit quaternion (x y z w): a point drawn in the 4-ball, normalised. */
static inline void test_random_rotation(test_rng *r, float out[4])
{
    double q[4], len;
    do {
        len = 0.0;
        for (int k = 0; k < 4; ++k) {
            q[k] = rng_f(r, -1.0f, 1.0f);
            len += q[k] * q[k];
        }
    } while (len < 0.1 || len > 1.0);
    for (int k = 0; k < 4; ++k)
        out[k] = (float)(q[k] / sqrt(len));
}

/* Rotation matrix (rows) of the quaternion x y z w, normalised in double: the world tests' own
 * placement, independent of the library's float one. */
static inline void test_quat_matrix(const float q[4], double m[3][3])
{
    const double len = sqrt((double)q[0] * q[0] + (double)q[1] * q[1] + (double)q[2] * q[2] +
                            (double)q[3] * q[3]);
    const double x = q[0] / len, y = q[1] / len, z = q[2] / len, w = q[3] / len;
    m[0][0] = 1 - 2 * (y * y + z * z), m[0][1] = 2 * (x * y - z * w), m[0][2] = 2 * (x * z + y * w);
    m[1][0] = 2 * (x * y + z * w), m[1][1] = 1 - 2 * (x * x + z * z), m[1][2] = 2 * (y * z - x * w);
    m[2][0] = 2 * (x * z - y * w), m[2][1] = 2 * (y * z + x * w), m[2][2] = 1 - 2 * (x * x + y * y);
}

/* Runs a cmocka group and adds its size to the total; evaluates to the number of failures. */
#define KCC_RUN_GROUP(name, tests) \
    (kcc_test_total += (int)(sizeof(tests) / sizeof((tests)[0])), \
     _cmocka_run_group_tests(name, tests, sizeof(tests) / sizeof((tests)[0]), NULL, NULL))

/* One function per test file, listed in test_main.c. Each returns its failure count. */
/// An overlap's list through the world's static tree (with, and its first entry asked for alone:
/// one) against the list with the tree stale (without), both n long: grouped by ascending body
/// slot, the same pairs, in the same order for a body that is not rotated (test_world_query.c).
/// Sorts both lists.
void test_overlap_lists_agree(const kcc_world *w, kcc_body_triangle *with,
                              kcc_body_triangle *without, uint32_t n, const kcc_body_triangle *one);

int test_group_base(void);
int test_group_collide(void);
int test_group_level(void);
int test_group_controller(void);
int test_group_local(void);
int test_group_trace(void);
int test_group_demo(void);
int test_group_movers(void);
int test_group_api(void);
int test_group_axes(void);
int test_group_world(void);
int test_group_world_step(void);
int test_group_broadphase(void);
int test_group_sphere(void);
int test_group_mesh_mesh(void);
int test_group_world_query(void);
int test_group_heightfield(void);
int test_group_world_sphere(void);
int test_group_world_trace(void);

/* The path of shared level i (0..4) in KCC_LEVELS_DIR, or NULL when i is out of range or the file
 * is missing. A missing file is reported once (where the levels belong) and shows in the closing
 * tally; with CI=true in the environment it fails the calling test, since CI runs every test on
 * the shared levels. */
const char *kcc_test_shared_level(int i);

#endif
