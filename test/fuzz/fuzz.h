/* fuzz.h: what the libFuzzer targets in test/fuzz share: CHECK, which aborts with the failed
 * condition's file and line (libFuzzer then reports the input). */
#ifndef KCC_FUZZ_H
#define KCC_FUZZ_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s: check failed at line %d: %s\n", __FILE__, __LINE__, \
                    #cond);                                                          \
            abort();                                                                 \
        }                                                                            \
    } while (0)

#endif
