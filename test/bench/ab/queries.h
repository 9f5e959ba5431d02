/* queries.h: the query A/B harness's shared types (ab.sh -q): the query sets both builds answer
 * (rays, boxes, box sweeps) and each build's side as a table of functions (queries.c). */
#ifndef KCC_AB_QUERIES_H
#define KCC_AB_QUERIES_H

#include "bench.h"

typedef struct ab_ray {
    float org[3], dir[3];
} ab_ray;

typedef struct ab_box {
    vec3 box[2];
} ab_box;

typedef struct ab_sweep {
    vec3 box[2];
    vec3 delta;
} ab_sweep;

/* The query kinds, in the order the driver runs and reports them. */
enum { AB_RAYS, AB_BOXES, AB_SWEEPS, AB_KINDS };

/* The ray length of every ray (bench_layout's). */
#define AB_RAY_MAX_T 64.0f

/* One build's queries over a level. Each query function answers n queries from q on; with answers
 * non-NULL it writes each query's answer folded into 64 bits there (the driver compares A's with
 * B's), and returns how many queries hit anything. */
typedef struct ab_side {
    const char *name;
    void (*init)(const kcc_level *lv);
    void (*bounds)(vec3 out[2]);
    int (*rays)(const ab_ray *q, int n, uint64_t *answers);
    int (*boxes)(const ab_box *q, int n, uint64_t *answers);
    int (*sweeps)(const ab_sweep *q, int n, uint64_t *answers);
    bool (*sweep_one)(const ab_sweep *q, kcc_sweep_hit *hit); /* one sweep's answer, whole */
    void (*release)(void);
} ab_side;

extern const ab_side ab_side_a, ab_side_b;

#endif
