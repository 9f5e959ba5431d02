/* isa.c: which build of the move and of the public mesh queries runs: the baseline, or (x86-64,
 * when the library was built with its AVX2 variant and the CPU has AVX2) the same code compiled for
 * AVX2. Both give the same results bit for bit; the choice is made once, from the CPU and the
 * KCC_ISA environment variable. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "controller_internal.h" /* kcc_local_internal.h: kcc_isa_avx2 */

/* -1: not chosen yet; 0: baseline; 1: AVX2. Relaxed is enough: every thread computes the same. */
static atomic_int isa_choice = -1;

static bool cpu_has_avx2(void)
{
#if KCC_AVX2_VARIANT && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    /* the features the variant is compiled for (-mavx2 -mbmi -mbmi2 -mpopcnt); "avx2" includes the
     * operating system's support for the wide registers */
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
           __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt");
#else
    return false;
#endif
}

bool kcc_isa_avx2(void)
{
    int c = atomic_load_explicit(&isa_choice, memory_order_relaxed);
    if (c < 0) {
        const char *env = getenv("KCC_ISA");
        c = !(env && strcmp(env, "baseline") == 0) && cpu_has_avx2();
        atomic_store_explicit(&isa_choice, c, memory_order_relaxed);
    }
    return c == 1;
}

bool kcc_isa_force_avx2(bool on)
{
    if (on && !cpu_has_avx2())
        return false;
    atomic_store_explicit(&isa_choice, on ? 1 : 0, memory_order_relaxed);
    return true;
}

const char *kcc_character_isa(void)
{
    return kcc_isa_avx2() ? "avx2" : "baseline";
}
