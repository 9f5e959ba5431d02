/* level_common.c: the kcc_level builder shared by the OBJ reader and the generators, plus
 * kcc_level_free, kcc_level_hash and kcc_level_build_mesh. Owns no state; allocates only level arrays. */
#include "collide_internal.h" /* kcc_fnv_float */
#include "level_internal.h"

#include <stdlib.h>
#include <string.h>

void kcc_lb_init(kcc_level_builder *b)
{
    memset(b, 0, sizeof(*b));
    b->max_vertices = KCC_LEVEL_MAX_VERTICES;
    b->max_triangles = KCC_LEVEL_MAX_TRIANGLES;
    b->status = KCC_OK;
}

/* Grows *arr (elements of elem_bytes, `per` of them per item) so that it holds at least need
 * items; capacity doubles, starting at 64. False on overflow or out of memory. */
static bool grow(void **arr, uint32_t *cap, uint32_t need, size_t elem_bytes)
{
    if (need <= *cap)
        return true;
    uint64_t nc = *cap ? (uint64_t)*cap * 2u : 64u;
    while (nc < need)
        nc *= 2u;
    if (nc > UINT32_MAX)
        nc = UINT32_MAX;
    if (nc > SIZE_MAX / elem_bytes)
        return false;
    void *p = realloc(*arr, (size_t)nc * elem_bytes);
    if (!p)
        return false;
    *arr = p;
    *cap = (uint32_t)nc;
    return true;
}

uint32_t kcc_lb_vertex(kcc_level_builder *b, float x, float y, float z)
{
    if (b->status != KCC_OK)
        return UINT32_MAX;
    kcc_level *l = &b->level;
    if (l->vertex_count >= b->max_vertices) {
        b->status = KCC_ERR_TOO_LARGE;
        return UINT32_MAX;
    }
    if (!grow((void **)&l->positions, &b->vertex_cap, l->vertex_count + 1u, 3 * sizeof(float))) {
        b->status = KCC_ERR_OUT_OF_MEMORY;
        return UINT32_MAX;
    }
    float *p = l->positions + 3u * (size_t)l->vertex_count;
    p[0] = x;
    p[1] = y;
    p[2] = z;
    return l->vertex_count++;
}

void kcc_lb_triangle(kcc_level_builder *b, uint32_t i0, uint32_t i1, uint32_t i2)
{
    if (b->status != KCC_OK)
        return;
    kcc_level *l = &b->level;
    if (l->triangle_count >= b->max_triangles) {
        b->status = KCC_ERR_TOO_LARGE;
        return;
    }
    if (!grow((void **)&l->indices, &b->triangle_cap, l->triangle_count + 1u,
              3 * sizeof(uint32_t))) {
        b->status = KCC_ERR_OUT_OF_MEMORY;
        return;
    }
    uint32_t *t = l->indices + 3u * (size_t)l->triangle_count;
    t[0] = i0;
    t[1] = i1;
    t[2] = i2;
    l->triangle_count++;
}

void kcc_lb_spawn(kcc_level_builder *b, float x, float y, float z)
{
    if (b->status != KCC_OK)
        return;
    kcc_level *l = &b->level;
    if (l->spawn_count >= KCC_LEVEL_MAX_VERTICES) {
        b->status = KCC_ERR_TOO_LARGE;
        return;
    }
    if (!grow((void **)&l->spawns, &b->spawn_cap, l->spawn_count + 1u, 3 * sizeof(float))) {
        b->status = KCC_ERR_OUT_OF_MEMORY;
        return;
    }
    float *p = l->spawns + 3u * (size_t)l->spawn_count;
    p[0] = x;
    p[1] = y;
    p[2] = z;
    l->spawn_count++;
}

/* Shrinks an array to n items (keeps the old block if realloc fails; frees it when n is 0). */
static void *trim(void *arr, uint32_t n, size_t elem_bytes)
{
    if (!arr)
        return NULL;
    if (n == 0) {
        free(arr);
        return NULL;
    }
    void *p = realloc(arr, (size_t)n * elem_bytes);
    return p ? p : arr;
}

kcc_status kcc_lb_finish(kcc_level_builder *b, kcc_level *out)
{
    if (b->status != KCC_OK) {
        kcc_status st = b->status;
        kcc_lb_discard(b);
        return st;
    }
    kcc_level *l = &b->level;
    l->positions = trim(l->positions, l->vertex_count, 3 * sizeof(float));
    l->indices = trim(l->indices, l->triangle_count, 3 * sizeof(uint32_t));
    l->spawns = trim(l->spawns, l->spawn_count, 3 * sizeof(float));
    *out = *l;
    memset(b, 0, sizeof(*b));
    return KCC_OK;
}

void kcc_lb_discard(kcc_level_builder *b)
{
    kcc_level_free(&b->level);
    b->vertex_cap = b->triangle_cap = b->spawn_cap = 0;
}

void kcc_level_free(kcc_level *level)
{
    if (!level)
        return;
    free(level->positions);
    free(level->indices);
    free(level->spawns);
    memset(level, 0, sizeof(*level));
}

uint64_t kcc_level_hash(const kcc_level *level)
{
    uint64_t h = KCC_FNV_BASIS;
    if (!level || !level->positions || !level->indices)
        return h;
    for (size_t i = 0; i < 3u * (size_t)level->triangle_count; ++i) {
        uint32_t v = level->indices[i];
        for (int k = 0; k < 3; ++k)
            h = kcc_fnv_float(h, v < level->vertex_count ? level->positions[3u * (size_t)v + k] : 0.0f);
    }
    return h;
}

kcc_status kcc_level_build_mesh(const kcc_level *level, kcc_mesh **out_mesh)
{
    if (!level || !out_mesh)
        return KCC_ERR_NULL_ARGUMENT;
    kcc_mesh_desc desc;
    memset(&desc, 0, sizeof(desc));
    desc.positions = level->positions;
    desc.vertex_count = level->vertex_count;
    desc.vertex_stride = 0;
    desc.indices = level->indices;
    desc.triangle_count = level->triangle_count;
    return kcc_mesh_build(&desc, out_mesh);
}
