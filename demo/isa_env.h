/* demo/isa_env.h: the tools' one check of KCC_ISA (kcc-demo and kcc-replay both include it): the
 * library reads KCC_ISA itself and never prints, so a typo would silently run the default build of
 * the move; the tools warn on stderr instead. Header-only, so kcc-replay (replay.c and libkcc
 * alone) shares it without linking the demo. No state. */
#ifndef KCC_DEMO_ISA_ENV_H
#define KCC_DEMO_ISA_ENV_H

#include "kcc.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/// True when `value` (KCC_ISA from the environment; NULL when unset) is a request kcc knows:
/// unset, empty, "baseline" or "avx2" (guarded by test_demo.c's
/// isa_requests_other_than_baseline_avx2_or_empty_are_invalid).
static inline bool demo_isa_request_valid(const char *value)
{
    return !value || !value[0] || strcmp(value, "baseline") == 0 || strcmp(value, "avx2") == 0;
}

/// Writes "TOOL: warning: KCC_ISA=... is not baseline, avx2 or empty; moves run on ISA" on stderr
/// when the environment's KCC_ISA is not a request the library knows.
static inline void demo_isa_warn_if_invalid(const char *tool)
{
    const char *isa = getenv("KCC_ISA");
    if (!demo_isa_request_valid(isa))
        fprintf(stderr, "%s: warning: KCC_ISA=%s is not baseline, avx2 or empty; moves run on %s\n",
                tool, isa, kcc_character_isa());
}

#endif
