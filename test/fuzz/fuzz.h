/* fuzz.h: what the libFuzzer targets in test/fuzz share: CHECK, which aborts with the failed
 * condition's file and line (libFuzzer then reports the input), and the byte reader of the targets
 * that decode their input field by field. */
#ifndef KCC_FUZZ_H
#define KCC_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s: check failed at line %d: %s\n", __FILE__, __LINE__, \
                    #cond);                                                          \
            abort();                                                                 \
        }                                                                            \
    } while (0)

/* The input bytes, read front to back; past the end every byte reads 0. */
typedef struct reader {
    const uint8_t *p;
    size_t         n;
} reader;

static inline uint8_t byte(reader *r)
{
    if (r->n == 0)
        return 0;
    r->n--;
    return *r->p++;
}

/* Four bytes as a float's bits (big-endian): NaN, infinities and denormals included. */
static inline float raw_float(reader *r)
{
    uint32_t u = 0;
    for (int i = 0; i < 4; ++i)
        u = u << 8 | byte(r);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* A byte on a 0.25 m grid: -32 .. 31.75 m. */
static inline float grid(reader *r)
{
    return (float)(int8_t)byte(r) * 0.25f;
}

#endif
