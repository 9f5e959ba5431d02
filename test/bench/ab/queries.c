/* queries.c: one side of the query A/B harness (ab.sh -q): the public mesh queries (kcc_mesh_raycast,
 * kcc_mesh_overlap_aabb, kcc_mesh_sweep_aabb) of one build of libkcc over one level. Compiled twice,
 * against each build's headers; SIDE_B renames the calls to B's symbols (ab.sh renames every kcc_*
 * symbol of build B to B_kcc_*). */
#include "queries.h"

#ifdef SIDE_B
#define K(x) B_##x
#define SIDE_NAME "B"
#define SIDE ab_side_b
kcc_status B_kcc_mesh_build(const kcc_mesh_desc *desc, kcc_mesh **out_mesh);
kcc_status B_kcc_level_build_mesh(const kcc_level *level, kcc_mesh **out_mesh);
void B_kcc_mesh_destroy(kcc_mesh *mesh);
void B_kcc_mesh_bounds(const kcc_mesh *mesh, vec3 out[2]);
bool B_kcc_mesh_raycast(const kcc_mesh *mesh, const vec3 origin, const vec3 dir, float max_t,
                        kcc_ray_hit *hit);
uint32_t B_kcc_mesh_overlap_aabb(const kcc_mesh *mesh, const vec3 box[2], uint32_t *out_triangles,
                                 uint32_t capacity);
bool B_kcc_mesh_sweep_aabb(const kcc_mesh *mesh, const vec3 box[2], const vec3 delta,
                           kcc_sweep_hit *hit);
#else
#define K(x) x
#define SIDE_NAME "A"
#define SIDE ab_side_a
#endif

enum { CAPACITY = 1 << 16 }; /* bench_layout's: no box of the workload finds more */

static kcc_mesh *mesh;
static uint32_t *found;

static uint64_t fold(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; ++i)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

static void init(const kcc_level *lv)
{
    found = malloc(sizeof(uint32_t) * CAPACITY);
    if (!found || K(kcc_level_build_mesh)(lv, &mesh) != KCC_OK)
        abort();
}

static void bounds(vec3 out[2])
{
    K(kcc_mesh_bounds)(mesh, out);
}

static int rays(const ab_ray *q, int n, uint64_t *answers)
{
    int hits = 0;
    for (int i = 0; i < n; ++i) {
        kcc_ray_hit hit;
        memset(&hit, 0, sizeof hit);
        const bool h = K(kcc_mesh_raycast)(mesh, q[i].org, q[i].dir, AB_RAY_MAX_T, &hit);
        hits += h;
        if (answers)
            answers[i] = h ? fold(1, &hit, sizeof hit) : 0;
    }
    return hits;
}

static int cmp_u32(const void *a, const void *b)
{
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int boxes(const ab_box *q, int n, uint64_t *answers)
{
    int hits = 0;
    for (int i = 0; i < n; ++i) {
        const uint32_t count = K(kcc_mesh_overlap_aabb)(mesh, q[i].box, found, CAPACITY);
        hits += count > 0;
        if (answers)
            qsort(found, count < CAPACITY ? count : CAPACITY, sizeof *found, cmp_u32);
        if (answers)
            answers[i] = fold(fold(1, &count, sizeof count), found,
                              sizeof(uint32_t) * (count < CAPACITY ? count : CAPACITY));
    }
    return hits;
}

static bool sweep_one(const ab_sweep *q, kcc_sweep_hit *hit)
{
    memset(hit, 0, sizeof *hit);
    return K(kcc_mesh_sweep_aabb)(mesh, q->box, q->delta, hit);
}

static int sweeps(const ab_sweep *q, int n, uint64_t *answers)
{
    int hits = 0;
    for (int i = 0; i < n; ++i) {
        kcc_sweep_hit hit;
        const bool h = sweep_one(&q[i], &hit);
        hits += h;
        if (answers)
            answers[i] = h ? fold(1, &hit, sizeof hit) : 0;
    }
    return hits;
}

static void release(void)
{
    K(kcc_mesh_destroy)(mesh);
    free(found);
    mesh = NULL;
    found = NULL;
}

const ab_side SIDE = {SIDE_NAME, init, bounds, rays, boxes, sweeps, sweep_one, release};
