/* local.c: the short list of triangles a move runs on (kcc_local_internal.h): filled by a
 * neighbourhood source (a mesh's, and any source seen through an axis map, are here) into a
 * character's cache or a move's own store, and the rays, overlaps, sweeps and the start-overlap
 * push that run on it, eight triangles' bounds per compare first. When the neighbourhood overflows
 * even the move's store, each query asks the source instead. */
#include <math.h>
#include <string.h>
#include <cglm/cglm.h>

#include "kcc_local_internal.h"
#include "collide_internal.h"
#include "heightfield_internal.h"
#if KCC_SSE && defined(__AVX__)
#include <immintrin.h>
#endif

/* ------------------------------------------------------------------------------------------------
 * A mesh as a neighbourhood source: its triangles in leaf order, its queries for the overflow mode. */

static uint32_t mesh_query(const kcc_local_source *src, const vec3 region[2], uint32_t *out_handles,
                           uint32_t capacity)
{
    return kcc_mesh_query_slots(src->owner, region[0], region[1], out_handles, capacity);
}

/// Slot `slot`'s corners: a tree mesh's stored triangle, or a heightfield's cell triangle (its slot
/// is its triangle id).
static void mesh_slot_corners(const kcc_mesh *mesh, uint32_t slot, kcc_tri *out)
{
    if (mesh->hf)
        kcc_hf_triangle(mesh, slot, out);
    else
        kcc_mesh_tri(mesh, slot, out);
}

static void mesh_fetch(const kcc_local_source *src, const uint32_t *handles, uint32_t n,
                       kcc_local_tri *out)
{
    const kcc_mesh *mesh = src->owner;
    for (uint32_t j = 0; j < n; ++j) {
        const uint32_t slot = handles[j];
        kcc_tri corners;
        kcc_plane plane; /* computed here, not stored (docs/collide.md, Memory layout) */
        mesh_slot_corners(mesh, slot, &corners);
        kcc_tri_plane(&corners, &plane);
        kcc_local_tri *tri = &out[j];
        memcpy(tri->v, corners.v, sizeof tri->v);
        memcpy(tri->n, plane.n, sizeof tri->n);
        tri->d = plane.d;
        tri->index = mesh->hf ? slot : kcc_mesh_tri_id(mesh, slot);
    }
}

static bool mesh_raycast(const kcc_local_source *src, const vec3 origin, const vec3 dir, float max_t,
                         kcc_ray_hit *out)
{
    return kcc_mesh_raycast(src->owner, origin, dir, max_t, out);
}

static uint32_t mesh_overlap(const kcc_local_source *src, const vec3 box[2], uint32_t *out_ids,
                             uint32_t capacity)
{
    return kcc_mesh_overlap_once(src->owner, box, out_ids, capacity);
}

static bool mesh_sweep(const kcc_local_source *src, const vec3 box[2], const vec3 delta,
                       kcc_sweep_hit *out)
{
    return kcc_mesh_sweep_aabb(src->owner, box, delta, out);
}

static bool mesh_triangle(const kcc_local_source *src, uint32_t id, vec3 out_corners[3])
{
    return kcc_mesh_triangle(src->owner, id, out_corners);
}

static void mesh_face_normal(const kcc_local_source *src, uint32_t id, vec3 out)
{
    const kcc_mesh *mesh = src->owner;
    kcc_tri corners;
    kcc_plane plane;
    mesh_slot_corners(mesh, mesh->hf ? id : kcc_mesh_slot_of(mesh, id), &corners);
    kcc_tri_plane(&corners, &plane);
    memcpy(out, plane.n, sizeof(vec3));
}

static const kcc_local_source_ops mesh_source_ops = {
    mesh_query, mesh_fetch, mesh_raycast, mesh_overlap, mesh_sweep, mesh_triangle, mesh_face_normal,
};

void kcc_local_source_mesh(kcc_local_source *out, const kcc_mesh *mesh)
{
    out->ops = &mesh_source_ops;
    out->owner = mesh;
    out->key = mesh->key;
}

/* ------------------------------------------------------------------------------------------------
 * A source seen through an axis map (kcc_local_source_mapped): inputs mapped out to the inner
 * source, its triangles and answers mapped in. */

static const kcc_local_source_mapped *as_mapped(const kcc_local_source *src)
{
    return (const kcc_local_source_mapped *)(const void *)src;
}

/* The inner source's box query: by bounds (query: handles) or exact (overlap: triangle ids). */
static uint32_t mapped_box_query(const kcc_local_source *src, const vec3 box[2], bool exact, uint32_t *out,
                                 uint32_t capacity)
{
    const kcc_local_source_mapped *mapped = as_mapped(src);
    const kcc_local_source *inner = mapped->inner;
    vec3 inner_box[2];
    kcc_axis_map_box_out(&mapped->map, box, inner_box);
    return exact ? inner->ops->overlap(inner, (const vec3 *)inner_box, out, capacity)
                 : inner->ops->query(inner, (const vec3 *)inner_box, out, capacity);
}

static uint32_t mapped_query(const kcc_local_source *src, const vec3 region[2], uint32_t *out_handles,
                             uint32_t capacity)
{
    return mapped_box_query(src, region, false, out_handles, capacity);
}

static void mapped_fetch(const kcc_local_source *src, const uint32_t *handles, uint32_t n,
                         kcc_local_tri *out)
{
    const kcc_local_source_mapped *mapped = as_mapped(src);
    mapped->inner->ops->fetch(mapped->inner, handles, n, out);
    for (uint32_t j = 0; j < n; ++j) { /* d = n . a is the same in any rotated frame: kept */
        for (int c = 0; c < 3; ++c)
            kcc_axis_map_in(&mapped->map, out[j].v[c], out[j].v[c]);
        kcc_axis_map_in(&mapped->map, out[j].n, out[j].n);
    }
}

static bool mapped_raycast(const kcc_local_source *src, const vec3 origin, const vec3 dir, float max_t,
                           kcc_ray_hit *out)
{
    const kcc_local_source_mapped *mapped = as_mapped(src);
    vec3 inner_origin, inner_dir;
    kcc_axis_map_out(&mapped->map, origin, inner_origin);
    kcc_axis_map_out(&mapped->map, dir, inner_dir);
    kcc_ray_hit hit;
    if (!mapped->inner->ops->raycast(mapped->inner, inner_origin, inner_dir, max_t, &hit))
        return false;
    kcc_axis_map_in(&mapped->map, hit.point, hit.point);
    kcc_axis_map_in(&mapped->map, hit.normal, hit.normal);
    *out = hit;
    return true;
}

static uint32_t mapped_overlap(const kcc_local_source *src, const vec3 box[2], uint32_t *out_ids,
                               uint32_t capacity)
{
    return mapped_box_query(src, box, true, out_ids, capacity);
}

static bool mapped_sweep(const kcc_local_source *src, const vec3 box[2], const vec3 delta,
                         kcc_sweep_hit *out)
{
    const kcc_local_source_mapped *mapped = as_mapped(src);
    vec3 inner_box[2], inner_delta;
    kcc_axis_map_box_out(&mapped->map, box, inner_box);
    kcc_axis_map_out(&mapped->map, delta, inner_delta);
    kcc_sweep_hit hit;
    if (!mapped->inner->ops->sweep(mapped->inner, (const vec3 *)inner_box, inner_delta, &hit))
        return false;
    kcc_axis_map_in(&mapped->map, hit.normal, hit.normal);
    *out = hit;
    return true;
}

static bool mapped_triangle(const kcc_local_source *src, uint32_t id, vec3 out_corners[3])
{
    const kcc_local_source_mapped *mapped = as_mapped(src);
    if (!mapped->inner->ops->triangle(mapped->inner, id, out_corners))
        return false;
    for (int c = 0; c < 3; ++c)
        kcc_axis_map_in(&mapped->map, out_corners[c], out_corners[c]);
    return true;
}

static void mapped_face_normal(const kcc_local_source *src, uint32_t id, vec3 out)
{
    const kcc_local_source_mapped *mapped = as_mapped(src);
    mapped->inner->ops->face_normal(mapped->inner, id, out);
    kcc_axis_map_in(&mapped->map, out, out);
}

static const kcc_local_source_ops mapped_source_ops = {
    mapped_query,   mapped_fetch,    mapped_raycast,     mapped_overlap,
    mapped_sweep,   mapped_triangle, mapped_face_normal,
};

void kcc_local_source_map(kcc_local_source_mapped *out, const kcc_local_source *inner,
                          const kcc_axis_map *map, uint64_t key_salt)
{
    const uint64_t key = inner->key ^ key_salt;
    out->base.ops = &mapped_source_ops;
    out->base.owner = inner->owner;
    out->base.key = key ? key : 1u; /* never 0; 1 is no salt, so still not inner's key */
    out->inner = inner;
    out->map = *map;
}

void kcc_local_face_normal(const kcc_local *list, uint32_t id, vec3 out)
{
    list->source->ops->face_normal(list->source, id, out);
}

/* ------------------------------------------------------------------------------------------------
 * Filling a list: the source's triangles, their bounds in groups of eight, views. */

/* A triangle's extent along axis k. */
static inline void tri_extent(const kcc_local_tri *tri, int k, float *lo, float *hi)
{
    *lo = kcc_minf(tri->v[0][k], kcc_minf(tri->v[1][k], tri->v[2][k]));
    *hi = kcc_maxf(tri->v[0][k], kcc_maxf(tri->v[1][k], tri->v[2][k]));
}

/* Pads the group of entry n onward with empty bounds (lo = +inf, hi = -inf) to its end. */
static void pad_bounds(kcc_local_bounds *bounds, uint32_t n)
{
    for (uint32_t e = n; e % KCC_LOCAL_GROUP != 0u; ++e)
        for (int k = 0; k < 3; ++k) {
            bounds[e / KCC_LOCAL_GROUP].lo[k][e % KCC_LOCAL_GROUP] = INFINITY;
            bounds[e / KCC_LOCAL_GROUP].hi[k][e % KCC_LOCAL_GROUP] = -INFINITY;
        }
}

/* The bounds of tris[from..to) into their entries of bounds, and the last group padded with
 * empty bounds. */
static void bound_entries(const kcc_local_tri *tris, uint32_t from, uint32_t to, kcc_local_bounds *bounds)
{
    for (uint32_t j = from; j < to; ++j) {
        kcc_local_bounds *group = &bounds[j / KCC_LOCAL_GROUP];
        const uint32_t lane = j % KCC_LOCAL_GROUP;
#if KCC_SSE
        /* the three axes at once: minps and maxps give kcc_minf's and kcc_maxf's answer (the
           first operand when it is strictly smaller, or larger; else the second), so the same
           floats as tri_extent; the fourth lane (a corner's neighbour in the record) is unused */
        const __m128 a = _mm_loadu_ps(tris[j].v[0]), b = _mm_loadu_ps(tris[j].v[1]),
                     c = _mm_loadu_ps(tris[j].v[2]);
        float lo[4], hi[4];
        _mm_storeu_ps(lo, _mm_min_ps(a, _mm_min_ps(b, c)));
        _mm_storeu_ps(hi, _mm_max_ps(a, _mm_max_ps(b, c)));
        for (int k = 0; k < 3; ++k) {
            group->lo[k][lane] = lo[k];
            group->hi[k][lane] = hi[k];
        }
#else
        for (int k = 0; k < 3; ++k)
            tri_extent(&tris[j], k, &group->lo[k][lane], &group->hi[k][lane]);
#endif
    }
    pad_bounds(bounds, to);
}

/* The bounds of tris[0..n) in groups of eight, the last group padded with empty bounds. */
static void fill_bounds(const kcc_local_tri *tris, uint32_t n, kcc_local_bounds *bounds)
{
    bound_entries(tris, 0u, n, bounds);
}

static void view(kcc_local *list, const kcc_local_source *src, uint32_t count,
                 const kcc_local_bounds *bounds, const kcc_local_tri *tris, const vec3 region[2])
{
    memcpy(list->region, region, sizeof list->region);
    list->source = src;
    list->count = count;
    list->overflow = false;
    list->bounds = bounds;
    list->tris = tris;
    list->fixed_count = 0;
    list->fixed_key = 0;
}

static void view_overflow(kcc_local *list, const kcc_local_source *src)
{
    memset(list, 0, sizeof *list);
    list->source = src;
    list->overflow = true;
}

/* Views store->tris[0..n) (filled by the source), their bounds computed into store->bounds. */
static void view_store(kcc_local *list, kcc_local_store *store, const kcc_local_source *src,
                       uint32_t n, const vec3 region[2])
{
    fill_bounds(store->tris, n, store->bounds);
    view(list, src, n, store->bounds, store->tris, region);
}

void kcc_local_gather(kcc_local *list, kcc_local_store *store, const kcc_local_source *source,
                      const vec3 region[2])
{
    uint32_t handles[KCC_LOCAL_MAX];
    const uint32_t total = source->ops->query(source, region, handles, KCC_LOCAL_MAX);
    if (total > KCC_LOCAL_MAX) {
        view_overflow(list, source);
        return;
    }
    source->ops->fetch(source, handles, total, store->tris);
    view_store(list, store, source, total, region);
}

/* The query box of a selection: eight lanes with AVX, else the tree's four-wide box (finite here:
 * no clamp, unlike kcc_pbox_setup). */
typedef struct sel_box {
#if KCC_SSE && defined(__AVX__)
    __m256 lo[3], hi[3];
#else
    kcc_pbox q;
#endif
} sel_box;

static inline void select_setup(sel_box *query, const vec3 box[2])
{
    for (int k = 0; k < 3; ++k) {
#if KCC_SSE && defined(__AVX__)
        query->lo[k] = _mm256_set1_ps(box[0][k]);
        query->hi[k] = _mm256_set1_ps(box[1][k]);
#elif KCC_SSE
        query->q.v_lo[k] = _mm_set1_ps(box[0][k]);
        query->q.v_hi[k] = _mm_set1_ps(box[1][k]);
#else
        query->q.lo[k] = box[0][k];
        query->q.hi[k] = box[1][k];
#endif
    }
}

#if KCC_SSE && defined(__AVX__)
/* Lanes whose bounds [lo, hi] along one axis touch the query's [qlo, qhi]. */
static inline __m256 axis8_test(const float lo[8], const float hi[8], __m256 qlo, __m256 qhi)
{
    return _mm256_and_ps(_mm256_cmp_ps(_mm256_loadu_ps(lo), qhi, _CMP_LE_OQ),
                         _mm256_cmp_ps(_mm256_loadu_ps(hi), qlo, _CMP_GE_OQ));
}
#endif

/* Bit j set when entry j of group g overlaps the query box (touching counts). */
static inline uint32_t bounds8_test(const kcc_local_bounds *group, const sel_box *query)
{
#if KCC_SSE && defined(__AVX__)
    __m256 m = axis8_test(group->lo[0], group->hi[0], query->lo[0], query->hi[0]);
    m = _mm256_and_ps(m, axis8_test(group->lo[1], group->hi[1], query->lo[1], query->hi[1]));
    m = _mm256_and_ps(m, axis8_test(group->lo[2], group->hi[2], query->lo[2], query->hi[2]));
    return (uint32_t)_mm256_movemask_ps(m);
#else
    const int low = kcc_pbox_test4(&query->q, group->lo[0], group->hi[0], group->lo[1], group->hi[1], group->lo[2],
                                   group->hi[2]);
    const int high = kcc_pbox_test4(&query->q, group->lo[0] + 4, group->hi[0] + 4, group->lo[1] + 4, group->hi[1] + 4,
                                    group->lo[2] + 4, group->hi[2] + 4);
    return (uint32_t)(low | high << 4);
#endif
}

static inline bool box_inside(const float lo[3], const float hi[3], const vec3 box[2])
{
    return box[0][0] >= lo[0] && box[0][1] >= lo[1] && box[0][2] >= lo[2] && box[1][0] <= hi[0] &&
           box[1][1] <= hi[1] && box[1][2] <= hi[2];
}

const kcc_local *kcc_local_for_sweep(const kcc_local *list, const vec3 box[2], const vec3 delta,
                                     kcc_local *overflow)
{
    vec3 reach[2];
    for (int k = 0; k < 3; ++k) {
        reach[0][k] = box[0][k] + kcc_minf(delta[k], 0.0f);
        reach[1][k] = box[1][k] + kcc_maxf(delta[k], 0.0f);
    }
    if (list->overflow || box_inside(list->region[0], list->region[1], (const vec3 *)reach))
        return list;
    view_overflow(overflow, list->source);
    return overflow;
}

/* Keeps, of tris[0..n) (more than the cache holds), those whose bounds overlap region grown by half
 * of grow, else a quarter of it, else none (cached_box: the box kept), in order; returns how many. */
static uint32_t shrink_to_cache(kcc_local_tri *tris, uint32_t n, const vec3 region[2],
                                const vec3 grow[2], vec3 cached_box[2])
{
    float tlo[3][KCC_LOCAL_MAX], thi[3][KCC_LOCAL_MAX];
    for (uint32_t i = 0; i < n; ++i)
        for (int k = 0; k < 3; ++k)
            tri_extent(&tris[i], k, &tlo[k][i], &thi[k][i]);
    bool in[KCC_LOCAL_MAX];
    uint32_t kept = n;
    for (int step = 1; step <= 3 && kept > KCC_LOCAL_CACHE_MAX; ++step) {
        const float part = step == 3 ? 0.0f : 1.0f / (float)(2 * step);
        for (int k = 0; k < 3; ++k) {
            cached_box[0][k] = region[0][k] - part * grow[0][k];
            cached_box[1][k] = region[1][k] + part * grow[1][k];
        }
        kept = 0;
        for (uint32_t i = 0; i < n; ++i) {
            in[i] = tlo[0][i] <= cached_box[1][0] && thi[0][i] >= cached_box[0][0] && tlo[1][i] <= cached_box[1][1] &&
                    thi[1][i] >= cached_box[0][1] && tlo[2][i] <= cached_box[1][2] && thi[2][i] >= cached_box[0][2];
            kept += in[i];
        }
    }
    uint32_t w = 0;
    for (uint32_t i = 0; i < n; ++i)
        if (in[i])
            tris[w++] = tris[i];
    return w;
}

static bool cache_covers(const kcc_local_cache *cache, const kcc_local_source *source, const vec3 region[2])
{
    return cache->owner == source->owner && cache->key == source->key &&
           box_inside(cache->lo, cache->hi, region);
}

/* Refills the cache from source around region, grown, so that the next moves find it again, and
 * views it; a neighbourhood too dense for the cache empties it and goes to the store (or the
 * overflow mode). The triangles are fetched straight into the cache; only a neighbourhood too
 * dense for it goes through the store (shrink_to_cache). */
static void refill_cache(kcc_local *list, kcc_local_store *store, kcc_local_cache *cache,
                         const kcc_local_source *source, const vec3 region[2], const vec3 grow[2])
{
    vec3 cached_box[2];
    for (int k = 0; k < 3; ++k) {
        cached_box[0][k] = region[0][k] - grow[0][k];
        cached_box[1][k] = region[1][k] + grow[1][k];
    }
    const kcc_local_source_ops *ops = source->ops;
    uint32_t handles[KCC_LOCAL_MAX];
    uint32_t n = ops->query(source, (const vec3 *)cached_box, handles, KCC_LOCAL_MAX);
    bool in_store = false;
    if (n > KCC_LOCAL_MAX) {
        memcpy(cached_box, region, sizeof cached_box);
        n = ops->query(source, region, handles, KCC_LOCAL_MAX);
    } else if (n > KCC_LOCAL_CACHE_MAX) {
        ops->fetch(source, handles, n, store->tris);
        n = shrink_to_cache(store->tris, n, region, grow, cached_box);
        in_store = true;
    }
    if (n <= KCC_LOCAL_CACHE_MAX) {
        cache->owner = source->owner;
        cache->key = source->key;
        memcpy(cache->lo, cached_box[0], sizeof cache->lo);
        memcpy(cache->hi, cached_box[1], sizeof cache->hi);
        cache->count = n;
        if (in_store)
            memcpy(cache->tris, store->tris, n * sizeof cache->tris[0]);
        else
            ops->fetch(source, handles, n, cache->tris);
        fill_bounds(cache->tris, n, cache->bounds);
        view(list, source, n, cache->bounds, cache->tris, region);
        return;
    }
    cache->owner = NULL;
    if (n > KCC_LOCAL_MAX) {
        view_overflow(list, source);
        return;
    }
    if (!in_store)
        ops->fetch(source, handles, n, store->tris);
    view_store(list, store, source, n, region);
}

/* Entry `to` of the store: `tri` with the bounds `lo`, `hi` (each axis). */
static inline void put_entry(kcc_local_store *store, uint32_t to, const kcc_local_tri *tri,
                             const float lo[3], const float hi[3])
{
    kcc_local_bounds *group = &store->bounds[to / KCC_LOCAL_GROUP];
    store->tris[to] = *tri;
    for (int k = 0; k < 3; ++k) {
        group->lo[k][to % KCC_LOCAL_GROUP] = lo[k];
        group->hi[k][to % KCC_LOCAL_GROUP] = hi[k];
    }
}

/* Entry `to` of the store: the rest's triangle `tri`, its bounds computed (as fill_bounds does). */
static inline void put_rest(kcc_local_store *store, uint32_t to, const kcc_local_tri *tri)
{
    float lo[3], hi[3];
    for (int k = 0; k < 3; ++k)
        tri_extent(tri, k, &lo[k], &hi[k]);
    put_entry(store, to, tri, lo, hi);
}

/* Entry `to` of the store: the cache's entry i, its bounds copied (the floats fill_bounds gave). */
static inline void put_cached(kcc_local_store *store, uint32_t to, const kcc_local_cache *cache, uint32_t i)
{
    const kcc_local_bounds *group = &cache->bounds[i / KCC_LOCAL_GROUP];
    const uint32_t lane = i % KCC_LOCAL_GROUP;
    const float lo[3] = {group->lo[0][lane], group->lo[1][lane], group->lo[2][lane]};
    const float hi[3] = {group->hi[0][lane], group->hi[1][lane], group->hi[2][lane]};
    put_entry(store, to, &cache->tris[i], lo, hi);
}

/* merge_parts when a rest triangle's id falls between two selected cached ones (a moving body's
 * range between static ones'): the rest's n_rest triangles, at the store's end, merged by id. */
static uint32_t merge_interleaved(kcc_local_store *store, const kcc_local_cache *cache, const kcc_sel *sel,
                                  uint32_t n_rest)
{
    const kcc_local_tri *rest_tris = store->tris + (KCC_LOCAL_MAX - n_rest);
    uint32_t out = 0, r = 0, i;
    /* the rest's triangles sit past every fixed one the merge writes first: out < its read place
       until the fixed ones run out (fixed + n_rest <= KCC_LOCAL_MAX) */
    for (kcc_sel_iter it = kcc_sel_begin(sel); kcc_sel_next(&it, &i);) {
        while (r < n_rest && rest_tris[r].index < cache->tris[i].index)
            put_rest(store, out++, &rest_tris[r++]);
        put_cached(store, out++, cache, i);
    }
    while (r < n_rest)
        put_rest(store, out++, &rest_tris[r++]);
    pad_bounds(store->bounds, out);
    return out;
}

/* Merges, into the store, the cached fixed part's n_fixed triangles whose bounds touch region (those
 * of sel, in their order, their bounds copied from the cache's) with the rest's n_rest triangles, by
 * id (the parts' lists merged by id are the source's list: kcc_world_source_parts), and pads the last
 * group. The caller checked that both fit. Returns how many; *out_fixed_count: n_fixed when the fixed
 * ones come first, 0 when they are interleaved (kcc_local.fixed_count). The rest is fetched straight to its
 * place past the fixed ones: its first id above the last selected cached one puts every rest
 * triangle after every cached one (each part lists its bodies in ascending ranges, the parts share
 * no body, and the boxes' ids follow every body's), the merge's order; else (a moving body's range
 * below a static one's) merge_interleaved. */
static uint32_t merge_parts(kcc_local_store *store, const kcc_local_cache *cache, const kcc_sel *sel,
                            uint32_t n_fixed, const kcc_local_source *rest, const uint32_t *handles,
                            uint32_t n_rest, uint32_t *out_fixed_count)
{
    uint32_t out = 0, i, last_fixed = 0;
    for (kcc_sel_iter it = kcc_sel_begin(sel); kcc_sel_next(&it, &i);) {
        put_cached(store, out++, cache, i);
        last_fixed = cache->tris[i].index;
    }
    kcc_local_tri *rest_tris = store->tris + n_fixed;
    rest->ops->fetch(rest, handles, n_rest, rest_tris);
    if (n_fixed > 0 && rest_tris[0].index < last_fixed) {
        memmove(store->tris + (KCC_LOCAL_MAX - n_rest), rest_tris, n_rest * sizeof *rest_tris);
        *out_fixed_count = 0;
        return merge_interleaved(store, cache, sel, n_rest);
    }
    bound_entries(store->tris, n_fixed, n_fixed + n_rest, store->bounds);
    *out_fixed_count = n_fixed;
    return n_fixed + n_rest;
}

/* The list of a split source (kcc_world_source_parts): its fixed part through the cache (kept
 * across the source's keys), merged with the rest's triangles in region. */
static void gather_split(kcc_local *list, kcc_local_store *store, kcc_local_cache *cache,
                         const kcc_local_source *source, const kcc_local_source *fixed,
                         const kcc_local_source *rest, const vec3 region[2], const vec3 grow[2])
{
    kcc_local fixed_list;
    if (!cache_covers(cache, fixed, region)) {
        refill_cache(&fixed_list, store, cache, fixed, region, grow);
        if (cache->owner == NULL) { /* too dense for the cache: one list of the whole source */
            kcc_local_gather(list, store, source, region);
            return;
        }
    }
    uint32_t handles[KCC_LOCAL_MAX];
    const uint32_t n_rest = rest->ops->query(rest, region, handles, KCC_LOCAL_MAX);
    if (n_rest == 0) {
        view(list, source, cache->count, cache->bounds, cache->tris, region);
        list->fixed_count = cache->count;
        list->fixed_key = fixed->key;
        return;
    }
    view(&fixed_list, fixed, cache->count, cache->bounds, cache->tris, region);
    kcc_sel sel;
    kcc_local_select(&fixed_list, region, &sel);
    uint32_t n_fixed = 0;
    for (uint32_t w = 0; w < sel.words; ++w)
        n_fixed += kcc_popcount64(sel.bits[w]);
    if (n_rest > KCC_LOCAL_MAX - n_fixed) { /* a crowd too dense for one list: as the source lists it */
        kcc_local_gather(list, store, source, region);
        return;
    }
    uint32_t fixed_count;
    const uint32_t n = merge_parts(store, cache, &sel, n_fixed, rest, handles, n_rest, &fixed_count);
    view(list, source, n, store->bounds, store->tris, region);
    list->fixed_count = fixed_count;
    list->fixed_key = fixed->key;
}

#ifdef KCC_DEBUG
/* Whether region lies in the reach of the world source under source, seen through any axis map
 * (kcc_world_source_reaches). */
static bool within_reach(const kcc_local_source *source, const vec3 region[2])
{
    if (source->ops != &mapped_source_ops)
        return kcc_world_source_reaches(source, region);
    vec3 inner[2];
    kcc_axis_map_box_out(&as_mapped(source)->map, region, inner);
    return within_reach(as_mapped(source)->inner, (const vec3 *)inner);
}
#endif

void kcc_local_gather_cached(kcc_local *list, kcc_local_store *store, kcc_local_cache *cache,
                             const kcc_local_source *source, const vec3 region[2], const vec3 grow[2])
{
    /* a world character's gather reaching past its step region may miss a character or a moving
       piece its neighbour lists left out (test: a_fast_slide_stops_against_a_character_far_off) */
    KCC_ASSERT(within_reach(source, region));
    const kcc_local_source *fixed, *rest;
    if (kcc_world_source_parts(source, &fixed, &rest)) {
        gather_split(list, store, cache, source, fixed, rest, region, grow);
        return;
    }
    if (cache_covers(cache, source, region)) {
        view(list, source, cache->count, cache->bounds, cache->tris, region);
        return;
    }
    refill_cache(list, store, cache, source, region, grow);
}

/* KCC_DEBUG builds: a query that reaches outside the list's region (0.1 mm of rounding aside) may
 * miss a triangle that another cache would hold: its answer would depend on the cache. */
static inline void check_inside_region(const kcc_local *list, const vec3 box[2])
{
#ifdef KCC_DEBUG
    const vec3 slack[2] = {{box[0][0] + 1e-4f, box[0][1] + 1e-4f, box[0][2] + 1e-4f},
                           {box[1][0] - 1e-4f, box[1][1] - 1e-4f, box[1][2] - 1e-4f}};
    KCC_ASSERT(list->overflow || box_inside(list->region[0], list->region[1], slack));
#else
    (void)list, (void)box;
#endif
}

void kcc_local_select(const kcc_local *list, const vec3 box[2], kcc_sel *out)
{
    _Static_assert(KCC_LOCAL_GROUP == 8, "a group is eight bits of a selection word");
    check_inside_region(list, box);
    sel_box query;
    select_setup(&query, box);
    const uint32_t words = (list->count + 63u) / 64u, groups = (list->count + 7u) / 8u;
    const kcc_local_bounds *group = list->bounds;
    for (uint32_t w = 0; w < words; ++w) {
        const uint32_t n = groups - 8u * w < 8u ? groups - 8u * w : 8u;
        uint64_t bits = 0;
        for (uint32_t j = 0; j < n; ++j)
            bits |= (uint64_t)bounds8_test(group++, &query) << (8u * j);
        out->bits[w] = bits;
    }
    out->words = words;
}

/* The candidates of a query whose reach is `region`: the gathered list, or in overflow mode the
 * tree's answer for that region gathered into `scratch`. Returns NULL when even that overflows, so
 * the caller must fall back to a whole-mesh query. */
static const kcc_local *candidates(const kcc_local *list, const vec3 region[2], kcc_local *scratch,
                                   kcc_local_store *store)
{
    if (!list->overflow)
        return list;
    kcc_local_gather(scratch, store, list->source, region);
    return scratch->overflow ? NULL : scratch;
}

/* Edge function of the edge (p, q) seen from the ray, in float. */
static inline float edge_fn(float px, float py, float qx, float qy)
{
    return px * qy - py * qx;
}

bool kcc_local_raycast_down(const kcc_local *list, const kcc_sel *sel, const vec3 origin, int up,
                            float max_t, kcc_ray_hit *out)
{
    vec3 dir = {0.0f, 0.0f, 0.0f};
    dir[up] = -1.0f;
    if (list->overflow)
        return list->source->ops->raycast(list->source, origin, dir, max_t, out);
    const int kx = up == 0 ? 1 : 0, ky = up == 2 ? 1 : 2;
    const float ox = origin[kx], oy = origin[ky], oz = origin[up];
    bool found = false;
    float best = max_t;
    uint32_t best_i = 0;
    uint32_t i;
    for (kcc_sel_iter it = kcc_sel_begin(sel); kcc_sel_next(&it, &i);) {
        const kcc_local_tri *tri = &list->tris[i];
        if (ox < kcc_local_lo(list, kx, i) || ox > kcc_local_hi(list, kx, i) ||
            oy < kcc_local_lo(list, ky, i) || oy > kcc_local_hi(list, ky, i) ||
            kcc_local_lo(list, up, i) > oz || kcc_local_hi(list, up, i) < oz - best)
            continue;
        /* vertices relative to the origin, the same floats for every triangle sharing them */
        const float ax = tri->v[0][kx] - ox, ay = tri->v[0][ky] - oy;
        const float bx = tri->v[1][kx] - ox, by = tri->v[1][ky] - oy;
        const float cx = tri->v[2][kx] - ox, cy = tri->v[2][ky] - oy;
        const float e0 = edge_fn(bx, by, cx, cy);
        const float e1 = edge_fn(cx, cy, ax, ay);
        const float e2 = edge_fn(ax, ay, bx, by);
        const float az = tri->v[0][up] - oz, bz = tri->v[1][up] - oz, cz = tri->v[2][up] - oz;
        float hz; /* height of the hit relative to the origin, interpolated; t = -height */
        if (kcc_edge_tiny(e0) || kcc_edge_tiny(e1) || kcc_edge_tiny(e2)) {
            /* through an edge's line, or underflowing: decided in double */
            const float x[3] = {ax, bx, cx}, y[3] = {ay, by, cy}, z[3] = {az, bz, cz};
            const float fe[3] = {e0, e1, e2};
            if (!kcc_edge_hit_exact(x, y, z, fe, &hz))
                continue;
        } else {
            if ((e0 < 0.0f || e1 < 0.0f || e2 < 0.0f) && (e0 > 0.0f || e1 > 0.0f || e2 > 0.0f))
                continue;
            const float det = e0 + e1 + e2;
            if (det == 0.0f)
                continue; /* the triangle is edge-on to the ray */
            hz = (e0 * az + e1 * bz + e2 * cz) / det;
        }
        const float th = -hz;
        if (!(th >= 0.0f && th <= best))
            continue;
        if (!found || th < best || (th == best && tri->index < list->tris[best_i].index)) {
            found = true;
            best = th;
            best_i = i;
        }
    }
    if (!found)
        return false;
    const kcc_local_tri *tri = &list->tris[best_i];
    out->t = best;
    out->triangle = tri->index;
    glm_vec3_copy((float *)tri->n, out->normal);
    glm_vec3_copy((float *)origin, out->point);
    out->point[up] -= best;
    return true;
}

/* A tight SIMD kernel (the library's named exception to the 80-line rule): kept whole, since split
 * into helpers the compiler's register use in the loop costs some 14% more instructions per cast. */
void kcc_local_raycast_down4(const kcc_local *list, const kcc_sel *sel, const vec3 origin[4], int up,
                             float max_t, kcc_ray_hit out[4], bool got[4])
{
#if KCC_SSE
    if (!list->overflow) {
        /* Lane r is ray r; each triangle is tested against the four rays at once with the same
         * float operations, in the same order, as kcc_local_raycast_down (same answers). */
        const int kx = up == 0 ? 1 : 0, ky = up == 2 ? 1 : 2;
        const __m128 OX = _mm_setr_ps(origin[0][kx], origin[1][kx], origin[2][kx], origin[3][kx]);
        const __m128 OY = _mm_setr_ps(origin[0][ky], origin[1][ky], origin[2][ky], origin[3][ky]);
        const __m128 OZ = _mm_setr_ps(origin[0][up], origin[1][up], origin[2][up], origin[3][up]);
        const __m128 zero = _mm_setzero_ps();
        /* Per lane, kept in registers: the best t so far, its list position and input index, and
         * whether anything was found (a lane updated in memory and read back whole would stall). */
        __m128 B = _mm_set1_ps(max_t), found = zero;
        __m128i BI = _mm_setzero_si128(), BIDX = _mm_setzero_si128();
        uint32_t i;
        for (kcc_sel_iter it = kcc_sel_begin(sel); kcc_sel_next(&it, &i);) {
            __m128 m = _mm_and_ps(_mm_cmpge_ps(OX, _mm_set1_ps(kcc_local_lo(list, kx, i))),
                                  _mm_cmple_ps(OX, _mm_set1_ps(kcc_local_hi(list, kx, i))));
            m = _mm_and_ps(m, _mm_and_ps(_mm_cmpge_ps(OY, _mm_set1_ps(kcc_local_lo(list, ky, i))),
                                         _mm_cmple_ps(OY, _mm_set1_ps(kcc_local_hi(list, ky, i)))));
            m = _mm_and_ps(m, _mm_and_ps(_mm_cmple_ps(_mm_set1_ps(kcc_local_lo(list, up, i)), OZ),
                                         _mm_cmpge_ps(_mm_set1_ps(kcc_local_hi(list, up, i)),
                                                      _mm_sub_ps(OZ, B))));
            if (_mm_movemask_ps(m) == 0)
                continue;
            const kcc_local_tri *tri = &list->tris[i];
            const __m128 AX = _mm_sub_ps(_mm_set1_ps(tri->v[0][kx]), OX), AY = _mm_sub_ps(_mm_set1_ps(tri->v[0][ky]), OY);
            const __m128 BX = _mm_sub_ps(_mm_set1_ps(tri->v[1][kx]), OX), BY = _mm_sub_ps(_mm_set1_ps(tri->v[1][ky]), OY);
            const __m128 CX = _mm_sub_ps(_mm_set1_ps(tri->v[2][kx]), OX), CY = _mm_sub_ps(_mm_set1_ps(tri->v[2][ky]), OY);
            const __m128 AZ = _mm_sub_ps(_mm_set1_ps(tri->v[0][up]), OZ);
            const __m128 BZ = _mm_sub_ps(_mm_set1_ps(tri->v[1][up]), OZ);
            const __m128 CZ = _mm_sub_ps(_mm_set1_ps(tri->v[2][up]), OZ);
            const __m128 E0 = _mm_sub_ps(_mm_mul_ps(BX, CY), _mm_mul_ps(BY, CX));
            const __m128 E1 = _mm_sub_ps(_mm_mul_ps(CX, AY), _mm_mul_ps(CY, AX));
            const __m128 E2 = _mm_sub_ps(_mm_mul_ps(AX, BY), _mm_mul_ps(AY, BX));
            const int tiny = _mm_movemask_ps(m) & kcc_edge_tiny4(E0, E1, E2);
            const __m128 neg = _mm_or_ps(_mm_or_ps(_mm_cmplt_ps(E0, zero), _mm_cmplt_ps(E1, zero)), _mm_cmplt_ps(E2, zero));
            const __m128 pos = _mm_or_ps(_mm_or_ps(_mm_cmpgt_ps(E0, zero), _mm_cmpgt_ps(E1, zero)), _mm_cmpgt_ps(E2, zero));
            const __m128 det = _mm_add_ps(_mm_add_ps(E0, E1), E2);
            __m128 ok = _mm_andnot_ps(_mm_and_ps(neg, pos), m);
            ok = _mm_andnot_ps(_mm_cmpeq_ps(det, zero), ok); /* edge-on to the ray */
            if (tiny == 0 && _mm_movemask_ps(ok) == 0)
                continue;
            __m128 hz = _mm_div_ps(_mm_add_ps(_mm_add_ps(_mm_mul_ps(E0, AZ), _mm_mul_ps(E1, BZ)),
                                              _mm_mul_ps(E2, CZ)), det);
            if (tiny != 0) {
                /* through an edge's line, or underflowing: those lanes decided in double, as
                 * kcc_local_raycast_down does */
                _Alignas(16) float ax[4], ay[4], az[4], bx[4], by[4], bz[4], cx[4], cy[4], cz[4], h[4];
                _Alignas(16) float e0[4], e1[4], e2[4];
                _Alignas(16) uint32_t okl[4];
                _mm_store_ps(ax, AX), _mm_store_ps(ay, AY), _mm_store_ps(az, AZ);
                _mm_store_ps(bx, BX), _mm_store_ps(by, BY), _mm_store_ps(bz, BZ);
                _mm_store_ps(cx, CX), _mm_store_ps(cy, CY), _mm_store_ps(cz, CZ);
                _mm_store_ps(e0, E0), _mm_store_ps(e1, E1), _mm_store_ps(e2, E2);
                _mm_store_ps(h, hz), _mm_store_ps((float *)okl, ok);
                for (int r = 0; r < 4; ++r)
                    if (tiny >> r & 1) {
                        const float x[3] = {ax[r], bx[r], cx[r]}, y[3] = {ay[r], by[r], cy[r]};
                        const float z[3] = {az[r], bz[r], cz[r]}, fe[3] = {e0[r], e1[r], e2[r]};
                        okl[r] = kcc_edge_hit_exact(x, y, z, fe, &h[r]) ? UINT32_MAX : 0u;
                    }
                hz = _mm_load_ps(h), ok = _mm_load_ps((const float *)okl);
            }
            const __m128 th = _mm_xor_ps(hz, _mm_set1_ps(-0.0f));
            m = _mm_and_ps(ok, _mm_and_ps(_mm_cmpge_ps(th, zero), _mm_cmple_ps(th, B)));
            if (_mm_movemask_ps(m) == 0)
                continue;
            /* take it when nothing was found yet, when nearer, or at the same t with a lower
             * input index (indices are below 2^30: signed compares are exact) */
            const __m128i X = _mm_set1_epi32((int)tri->index);
            const __m128 lower = _mm_castsi128_ps(_mm_cmplt_epi32(X, BIDX));
            const __m128 take = _mm_and_ps(m, _mm_or_ps(_mm_andnot_ps(found, m),
                _mm_or_ps(_mm_cmplt_ps(th, B), _mm_and_ps(_mm_cmpeq_ps(th, B), lower))));
            const __m128i takei = _mm_castps_si128(take);
            B = _mm_or_ps(_mm_and_ps(take, th), _mm_andnot_ps(take, B));
            BI = _mm_or_si128(_mm_and_si128(takei, _mm_set1_epi32((int)i)), _mm_andnot_si128(takei, BI));
            BIDX = _mm_or_si128(_mm_and_si128(takei, X), _mm_andnot_si128(takei, BIDX));
            found = _mm_or_ps(found, take);
        }
        _Alignas(16) float best[4];
        _Alignas(16) int32_t best_i[4];
        _mm_store_ps(best, B);
        _mm_store_si128((__m128i *)(void *)best_i, BI);
        const int found_mask = _mm_movemask_ps(found);
        for (int r = 0; r < 4; ++r) {
            got[r] = (found_mask >> r & 1) != 0;
            if (!got[r])
                continue;
            const kcc_local_tri *tri = &list->tris[best_i[r]];
            out[r].t = best[r];
            out[r].triangle = tri->index;
            glm_vec3_copy((float *)tri->n, out[r].normal);
            glm_vec3_copy((float *)origin[r], out[r].point);
            out[r].point[up] -= best[r];
        }
        return;
    }
#endif
    for (int r = 0; r < 4; ++r)
        got[r] = kcc_local_raycast_down(list, sel, origin[r], up, max_t, &out[r]);
}

/* False when the box, anywhere along its sweep, stays clear of the triangle's plane by more than a
 * hair: then the exact test cannot report a contact. Floors under a box walking over them and
 * walls beside it are dropped here, in float, before the exact tests (the box at rest: delta 0). */
static inline bool plane_may_touch(const kcc_local_tri *tri, const vec3 ctr, const vec3 half,
                                   const vec3 delta)
{
    float r = half[0] * fabsf(tri->n[0]) + half[1] * fabsf(tri->n[1]) + half[2] * fabsf(tri->n[2]);
    float s0 = glm_vec3_dot((float *)tri->n, (float *)ctr) - tri->d;
    float s1 = s0 + glm_vec3_dot((float *)tri->n, (float *)delta);
    float margin = r * 1e-5f + 1e-6f * (fabsf(tri->d) + 1.0f);
    return !(kcc_minf(s0, s1) > r + margin || kcc_maxf(s0, s1) < -r - margin);
}

/* Whether box overlaps any of the list's entries from `first` on: those whose bounds touch it,
 * group by group, then the plane and the exact test. */
static bool overlaps_from(const kcc_local *list, const vec3 box[2], uint32_t first)
{
    check_inside_region(list, box);
    sel_box query;
    select_setup(&query, box);
    const vec3 still = {0.0f, 0.0f, 0.0f};
    vec3 ctr, half;
    kcc_box_center_half(box, ctr, half);
    const uint32_t groups = (list->count + 7u) / 8u;
    for (uint32_t g = first / 8u; g < groups; ++g) {
        uint32_t bits = bounds8_test(&list->bounds[g], &query);
        if (g == first / 8u)
            bits &= ~0u << (first % 8u);
        for (; bits != 0; bits &= bits - 1u) {
            const kcc_local_tri *tri = &list->tris[8u * g + kcc_ctz64(bits)];
            if (plane_may_touch(tri, ctr, half, still) &&
                kcc_tri_overlap_box_internal(tri->v[0], tri->v[1], tri->v[2], box[0], box[1]))
                return true;
        }
    }
    return false;
}

bool kcc_local_overlaps(const kcc_local *list, const vec3 box[2])
{
    if (list->overflow)
        return list->source->ops->overlap(list->source, box, NULL, 0) > 0;
    return overlaps_from(list, box, 0u);
}

bool kcc_local_overlaps_past_fixed(const kcc_local *list, const vec3 box[2])
{
    return list->overflow ? kcc_local_overlaps(list, box) : overlaps_from(list, box, list->fixed_count);
}

/* The axis a triangle's plane is perpendicular to (its corners share that coordinate exactly), or
 * -1. */
static inline int face_axis(const kcc_local_tri *tri)
{
    for (int k = 0; k < 3; ++k)
        if (tri->v[0][k] == tri->v[1][k] && tri->v[0][k] == tri->v[2][k])
            return k;
    return -1;
}

/* An axis-aligned plane a sweep met face first: coordinate `at` along `axis`, the box on its upper
 * side (`above`) or its lower one. */
typedef struct faced_plane {
    int   axis;
    float at;
    bool  above;
} faced_plane;

/* True when list entry i lies wholly on the far side of one of the planes faced[0..n), or in it:
 * its bounds (exact corner extremes) say so. */
static inline bool behind_faced(const faced_plane *faced, uint32_t n, const kcc_local *searched, uint32_t i)
{
    for (uint32_t f = 0; f < n; ++f) {
        const int k = faced[f].axis;
        if (faced[f].above ? kcc_local_hi(searched, k, i) <= faced[f].at
                           : kcc_local_lo(searched, k, i) >= faced[f].at)
            return true;
    }
    return false;
}

/* A contact met on an edge or corner of a triangle whose plane the box touches at that moment is a
 * face contact: n becomes the face normal, on the box's side. The box cannot go into the triangle
 * but through its plane, so the plane says all the contact does, and the edge's own axis (often a
 * box axis) is a ghost that would turn a slide along a wall of small triangles into the wall
 * (test: sliding_along_a_tiled_wall_off_the_axes_never_catches_on_seams). "Touching" allows the
 * contacts' window (the box may be up to 0.2 mm across the plane when the edge is met). Only for a
 * plane the motion goes into. */
static inline void face_if_touching(const kcc_local_tri *tri, const double ctr[3], const double half[3],
                                    const double delta[3], double dt, vec3 n)
{
    const double f[3] = {tri->n[0], tri->n[1], tri->n[2]};
    if (fabs(f[0] * n[0] + f[1] * n[1] + f[2] * n[2]) > 0.9999)
        return;
    /* the box centre at the contact, relative to the first corner (float inputs, double sums) */
    double s = 0.0, r = 0.0;
    for (int k = 0; k < 3; ++k) {
        s += f[k] * (ctr[k] + delta[k] * dt - (double)tri->v[0][k]);
        r += half[k] * fabs(f[k]);
    }
    const double gap = fabs(s) - r; /* the box's nearest point to the plane: > 0 clear of it */
    if (!(gap <= 1e-5 && gap >= -2e-4))
        return;
    /* only a face the motion goes into: a plane the box merely lies along (the side of a ledge
     * flush with the box's side, landed on) says nothing about the contact */
    const double into = (s > 0.0 ? -1.0 : 1.0) * (f[0] * delta[0] + f[1] * delta[1] + f[2] * delta[2]);
    if (!(into > 1e-6 * sqrt(delta[0] * delta[0] + delta[1] * delta[1] + delta[2] * delta[2])))
        return;
    const float sign = s > 0.0 ? 1.0f : -1.0f;
    for (int k = 0; k < 3; ++k)
        n[k] = sign * tri->n[k];
}

/* True when triangle id is one of the n in list. */
static bool listed(const uint32_t *list, uint32_t n, uint32_t id)
{
    for (uint32_t k = 0; k < n; ++k)
        if (list[k] == id)
            return true;
    return false;
}

/* The overflow mode's sweep, when even the sweep's own region holds more than a list: the source's
 * sweep, which reports the first contact only (leaving, an overlap there hides the rest). */
KCC_RARE bool sweep_source(const kcc_local *list, const vec3 box[2], const vec3 delta,
                           const uint32_t *overlapped, uint32_t n_overlapped, kcc_contacts *out)
{
    kcc_sweep_hit hit;
    if (!list->source->ops->sweep(list->source, box, delta, &hit) ||
        (hit.start_overlap && listed(overlapped, n_overlapped, hit.triangle)))
        return false;
    out->t = out->t_each[0] = hit.t;
    out->count = 1;
    out->start_overlap = hit.start_overlap;
    glm_vec3_copy(hit.normal, out->normal[0]);
    out->triangle[0] = hit.triangle;
    return true;
}

/* The exact test's box in double, as kcc_tri_sweep_aabb sets it up (same answers without its
 * per-call argument checks: the list holds only finite, non-degenerate triangles). False when a
 * coordinate is not finite. */
static bool exact_box(const vec3 box[2], const vec3 delta, double ctr[3], double half[3],
                      double ddelta[3])
{
    for (int k = 0; k < 3; ++k) {
        if (!isfinite(box[0][k]) || !isfinite(box[1][k]) || !isfinite(delta[k]))
            return false;
        ctr[k] = 0.5 * ((double)box[0][k] + (double)box[1][k]);
        half[k] = 0.5 * ((double)box[1][k] - (double)box[0][k]);
        ddelta[k] = delta[k];
    }
    return true;
}

/* Notes triangle t's plane when the sweep met it face first (normal dn) and it is axis-aligned. */
KCC_HOT void note_faced(faced_plane *faced, uint32_t *n_faced, const kcc_local_tri *tri,
                        const double dn[3], bool start)
{
    const int axis = face_axis(tri);
    if (axis >= 0 && !start && fabs(dn[axis]) == 1.0 && *n_faced < KCC_MAX_CONTACTS) {
        faced[*n_faced].axis = axis;
        faced[*n_faced].at = tri->v[0][axis];
        faced[(*n_faced)++].above = dn[axis] > 0.0;
    }
}

/* Keeps a contact at time th (normal n, triangle index) when it is no later than the earliest so
 * far plus the slop; a strictly earlier one drops those that fell behind. */
KCC_HOT void keep_contact(kcc_contacts *out, float th, const vec3 n, uint32_t index, bool start,
                          float t_slop)
{
    if (th > out->t + t_slop)
        return;
    if (th < out->t) {
        out->t = th;
        uint32_t w = 0;
        for (uint32_t k = 0; k < out->count; ++k)
            if (out->t_each[k] <= th + t_slop) {
                out->t_each[w] = out->t_each[k];
                glm_vec3_copy(out->normal[k], out->normal[w]);
                out->triangle[w++] = out->triangle[k];
            }
        out->count = w;
        out->start_overlap = start;
    }
    if (out->count < KCC_MAX_CONTACTS) {
        out->t_each[out->count] = th;
        glm_vec3_copy((float *)n, out->normal[out->count]);
        out->triangle[out->count++] = index;
    }
}

/* kcc_local_sweep; `overlapped` (n_overlapped of them): the box is being pushed out of these, so
 * where it overlaps them at the start they are not contacts (kcc_local_sweep_out). One pass over
 * the candidates, keeping every contact within the slop of the earliest (keep_contact). */
static bool sweep(const kcc_local *list, const vec3 box[2], const vec3 delta, float t_slop,
                  const uint32_t *overlapped, uint32_t n_overlapped, float t_known, kcc_contacts *out)
{
    vec3 region[2], ctr, half;
    for (int i = 0; i < 3; ++i) {
        region[0][i] = box[0][i] + kcc_minf(delta[i], 0.0f);
        region[1][i] = box[1][i] + kcc_maxf(delta[i], 0.0f);
    }
    kcc_box_center_half(box, ctr, half);
    kcc_local scratch;
    kcc_local_store store;
    out->count = 0;
    out->t = 2.0f;
    out->start_overlap = false;
    const kcc_local *searched = candidates(list, (const vec3 *)region, &scratch, &store);
    if (!searched)
        return sweep_source(list, box, delta, overlapped, n_overlapped, out);
    double dctr[3], dhalf[3], ddelta[3]; /* set up at the first candidate */
    bool exact_ready = false;
    /* Axis-aligned planes already met face first. A triangle lying in such a plane (walls are
     * made of several) or wholly beyond it cannot be reached before the box reaches the plane and
     * constrains nothing the plane does not: its exact test is skipped (docs/controller.md,
     * "Coplanar triangles and what lies behind a wall"). */
    faced_plane faced[KCC_MAX_CONTACTS];
    uint32_t n_faced = 0;
    kcc_sel cand;
    kcc_local_select(searched, (const vec3 *)region, &cand);
    uint32_t i;
    for (kcc_sel_iter it = kcc_sel_begin(&cand); kcc_sel_next(&it, &i);) {
        const kcc_local_tri *tri = &searched->tris[i];
        if (!plane_may_touch(tri, ctr, half, delta) || behind_faced(faced, n_faced, searched, i))
            continue;
        if (!exact_ready && !(exact_ready = exact_box(box, delta, dctr, dhalf, ddelta)))
            return false;
        /* Only contacts within the window of the earliest so far (or of the caller's bound) can be
         * kept: the exact test may give up on any later one. Its cut-off lies a little past the
         * window (a millionth, some eight float ulps), so a contact it keeps has the very time it
         * had without the cut-off, and one it drops would have rounded to a float past the window. */
        const float first = out->count > 0 ? kcc_minf(out->t, t_known) : t_known;
        const double cut = (double)(first + t_slop) * (1.0 + 1e-6) + 1e-37;
        const double t_cut = cut < 1.0 ? cut : 1.0;
        double dt, dn[3];
        bool start;
        if (!kcc_tri_sweep_internal(tri->v[0], tri->v[1], tri->v[2], dctr, dhalf, ddelta, t_cut, &dt, dn, &start) ||
            (start && listed(overlapped, n_overlapped, tri->index)))
            continue;
        vec3 n = {(float)dn[0], (float)dn[1], (float)dn[2]};
        if (!start)
            face_if_touching(tri, dctr, dhalf, ddelta, dt, n);
        note_faced(faced, &n_faced, tri, dn, start);
        keep_contact(out, (float)dt, n, tri->index, start, t_slop);
    }
    return out->count > 0;
}

bool kcc_local_sweep(const kcc_local *list, const vec3 box[2], const vec3 delta, float t_slop,
                     kcc_contacts *out)
{
    return sweep(list, box, delta, t_slop, NULL, 0u, 2.0f, out);
}

bool kcc_local_sweep_known(const kcc_local *list, const vec3 box[2], const vec3 delta, float t_slop,
                           float t_known, kcc_contacts *out)
{
    return sweep(list, box, delta, t_slop, NULL, 0u, t_known, out);
}

bool kcc_local_sweep_out(const kcc_local *list, const vec3 box[2], const vec3 delta, float t_slop,
                         const uint32_t *overlapped, uint32_t n_overlapped, kcc_contacts *out)
{
    return sweep(list, box, delta, t_slop, overlapped, n_overlapped, 2.0f, out);
}

/* Least-penetration axis of box against one triangle, by the 13 separating axes: the shortest
 * translation of the box that separates it from the triangle. False when they do not overlap. */
static bool tri_mtd(const vec3 a, const vec3 b, const vec3 c, const vec3 box[2], int up,
                    float cos_floor, vec3 out_dir, float *out_depth)
{
    vec3 ctr, h, v[3], e[3];
    kcc_box_center_half(box, ctr, h);
    glm_vec3_sub((float *)a, ctr, v[0]);
    glm_vec3_sub((float *)b, ctr, v[1]);
    glm_vec3_sub((float *)c, ctr, v[2]);
    glm_vec3_sub(v[1], v[0], e[0]);
    glm_vec3_sub(v[2], v[1], e[1]);
    glm_vec3_sub(v[0], v[2], e[2]);
    vec3 axes[13];
    int na = 0;
    for (int i = 0; i < 3; ++i) {
        glm_vec3_zero(axes[na]);
        axes[na++][i] = 1.0f;
    }
    glm_vec3_cross(e[0], e[1], axes[na++]);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            vec3 unit = {0.0f, 0.0f, 0.0f};
            unit[i] = 1.0f;
            glm_vec3_cross(unit, e[j], axes[na++]);
        }
    float best = INFINITY;
    for (int k = 0; k < na; ++k) {
        float len2 = glm_vec3_dot(axes[k], axes[k]);
        if (!(len2 > 1e-12f))
            continue;
        float inv = 1.0f / sqrtf(len2);
        vec3 ax;
        glm_vec3_scale(axes[k], inv, ax);
        float r = h[0] * fabsf(ax[0]) + h[1] * fabsf(ax[1]) + h[2] * fabsf(ax[2]);
        float p0 = glm_vec3_dot(v[0], ax), p1 = glm_vec3_dot(v[1], ax), p2 = glm_vec3_dot(v[2], ax);
        float pmin = kcc_minf(p0, kcc_minf(p1, p2)), pmax = kcc_maxf(p0, kcc_maxf(p1, p2));
        if (pmin > r || pmax < -r)
            return false;
        float dpos = pmax + r; /* push the box along +ax past the triangle */
        float dneg = r - pmin; /* push it along -ax */
        if (dpos < best) {
            best = dpos;
            glm_vec3_copy(ax, out_dir);
        }
        if (dneg < best) {
            best = dneg;
            glm_vec3_negate_to(ax, out_dir);
        }
    }
    if (!isfinite(best))
        return false;
    /* Ground-like triangles push straight up, never down and never sideways: sideways axes (an
     * edge of one triangle of a floor) or the short way down (a box sunk past half its height into
     * a thin floor) would fight the coplanar neighbours or drop the box through. The depth is the
     * height of the triangle's plane over the box's footprint (at most its highest vertex) above
     * the box bottom. */
    vec3 fn;
    glm_vec3_cross(e[0], e[1], fn);
    float fl = glm_vec3_norm(fn);
    if (fl > 0.0f && fabsf(fn[up]) >= cos_floor * fl) {
        const int kx = up == 0 ? 1 : 0, ky = up == 2 ? 1 : 2;
        float top = -INFINITY;
        for (int i = 0; i < 4; ++i) {
            float x = (i & 1) ? h[kx] : -h[kx], y = (i & 2) ? h[ky] : -h[ky];
            /* the plane through v[0]: fn . (p - v0) = 0, solved for the up coordinate */
            float z = v[0][up] - (fn[kx] * (x - v[0][kx]) + fn[ky] * (y - v[0][ky])) / fn[up];
            top = kcc_maxf(top, z);
        }
        top = kcc_minf(top, kcc_maxf(v[0][up], kcc_maxf(v[1][up], v[2][up])));
        glm_vec3_zero(out_dir);
        out_dir[up] = 1.0f;
        best = kcc_maxf(0.0f, top + h[up]);
    }
    *out_depth = best;
    return true;
}

bool kcc_local_penetration(const kcc_local *list, const vec3 box[2], int up, float cos_floor,
                           vec3 out_push, uint32_t *out_overlapped, uint32_t *out_n_overlapped)
{
    kcc_local scratch;
    kcc_local_store store;
    vec3 dirs[KCC_MAX_OVERLAPPED];
    float depth[KCC_MAX_OVERLAPPED];
    uint32_t n = 0, n_overlapped = 0;
    const uint32_t cap = KCC_MAX_OVERLAPPED;
    /* An overlap no deeper than the rounding of the box's coordinates is a touch: the push meets
     * such a triangle like any other instead of leaving it (test: fuzz_move's corpus input
     * push-grazes-a-face). */
    float scale = 1.0f;
    for (int k = 0; k < 3; ++k)
        scale = kcc_maxf(scale, kcc_maxf(fabsf(box[0][k]), fabsf(box[1][k])));
    const float touch = 1e-6f * scale;
    const kcc_local *searched = candidates(list, box, &scratch, &store);
    if (searched) {
        kcc_sel cand;
        kcc_local_select(searched, box, &cand);
        uint32_t i;
        for (kcc_sel_iter it = kcc_sel_begin(&cand); n < cap && kcc_sel_next(&it, &i);) {
            const kcc_local_tri *tri = &searched->tris[i];
            if (tri_mtd(tri->v[0], tri->v[1], tri->v[2], box, up, cos_floor, dirs[n], &depth[n])) {
                if (depth[n] > touch)
                    out_overlapped[n_overlapped++] = tri->index;
                n++;
            }
        }
    } else {
        uint32_t ids[KCC_MAX_OVERLAPPED];
        uint32_t total = list->source->ops->overlap(list->source, box, ids, cap);
        for (uint32_t i = 0; i < total && i < cap; ++i) {
            vec3 v[3];
            if (list->source->ops->triangle(list->source, ids[i], v) && tri_mtd(v[0], v[1], v[2], box, up, cos_floor, dirs[n], &depth[n])) {
                if (depth[n] > touch)
                    out_overlapped[n_overlapped++] = ids[i];
                n++;
            }
        }
    }
    *out_n_overlapped = n_overlapped;
    if (n == 0)
        return false;
    /* Each triangle asks push . dir >= depth: satisfy the planes in turn a few times
     * (Gauss-Seidel); near-parallel requests merge instead of adding up. */
    glm_vec3_zero(out_push);
    for (int pass = 0; pass < 4; ++pass)
        for (uint32_t i = 0; i < n; ++i) {
            float s = depth[i] - glm_vec3_dot(out_push, dirs[i]);
            if (s > 0.0f)
                glm_vec3_muladds(dirs[i], s, out_push);
        }
    return true;
}
