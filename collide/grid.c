/* grid.c: the uniform grid broadphase, rebuilt from scratch at an update. Two layers: the movers
 * (proxies not STATIC), rebuilt at every update, and the STATIC proxies, rebuilt only when one of
 * them changed. A layer enters each of its proxies once, in the cell of its box's low corner, by a
 * counting sort into buckets (the cells wrapped onto a torus, so the world needs no bounds) that
 * lays the boxes out in flat arrays; its cells are as large on each axis as its largest box no
 * larger than cell_size, so an entered box spans at most two cells an axis and the boxes overlapping
 * one have their low cells from its own low cell less one to its high cell (at most 3 x 3 x 3).
 * A mover finds its pairs with higher movers there, four at a time; each STATIC proxy finds its
 * movers the same way, into a sorted side list merged in; a proxy spanning more cells is
 * oversized, tested against every proxy. Add, remove and move only note the proxy as changed,
 * which queries test on their own until the next update. Owns kcc_grid's arrays; never allocates. */
#include <string.h>

#include "collide_internal.h" /* KCC_SSE */
#include "kcc_broadphase_internal.h"

/* Cell coordinates are clamped to +-2^29 so that huge or infinite boxes still get int32 cells whose
 * differences fit an int32 (a monotone map: clamped cells only merge far-away cells; the exact box
 * test decides). */
#define COORD_LIMIT 536870912.0f
/* A scan over more rows of cells (along y and z) than this reads every entry of the layer. */
#define MAX_ROWS 64u
/* A query covering more cells than this in a layer tests every proxy instead. */
#define QUERY_MAX_CELLS 64u
/* Buckets a layer has room for: a power of two at least this many a proxy (and 2^MIN_BITS); a
 * rebuild uses a power of two at least BUCKETS_PER_ENTRY an entered proxy, so that few cells share
 * a bucket while the counting sort's pass over the buckets stays short. */
#define ROOM_BUCKETS_PER_PROXY 4u
#define BUCKETS_PER_ENTRY 2u
#define MIN_BITS 6u
/* An axis whose entered low cells span at most this many cells is collapsed (choose_torus). */
#define COLLAPSE_SPAN 8
/* Entries past the last that a four-wide test reads (masked off). */
#define ENTRY_PAD 4u
/* A cell record's packed word: bucket << REACH_BITS | reach. */
#define REACH_BITS 3u
/* The smallest cell edge, as a share of cell_size (a layer of points alone would have cells of
 * nothing), and the margin added to the largest box (so that rounding rarely makes a box of that
 * size span three cells: such a box is oversized for the update, which costs time, not answers). */
#define MIN_EDGE_SHARE 0.0625f
#define EDGE_MARGIN 0x1p-10f

static inline uint32_t min_u32(uint32_t a, uint32_t b)
{
    return a < b ? a : b;
}

static void layout_layer(kcc_grid_layer *l, kcc_bp_layout *layout, size_t cap, uint32_t max_bits)
{
    l->bucket_start = kcc_bp_take(layout, ((size_t)1 << max_bits) + 1, sizeof *l->bucket_start);
    for (int k = 0; k < 3; ++k) {
        l->lo[k] = kcc_bp_take(layout, cap + ENTRY_PAD, sizeof(float));
        l->hi[k] = kcc_bp_take(layout, cap + ENTRY_PAD, sizeof(float));
    }
    l->proxy = kcc_bp_take(layout, cap + ENTRY_PAD, sizeof *l->proxy);
}

void kcc_grid_layout(kcc_broadphase *bp, kcc_bp_layout *layout)
{
    kcc_grid *g = &bp->u.grid;
    size_t cap = bp->proxy_capacity;
    g->max_bits = MIN_BITS;
    while (((size_t)1 << g->max_bits) < ROOM_BUCKETS_PER_PROXY * cap)
        ++g->max_bits;
    layout_layer(&g->movers, layout, cap, g->max_bits);
    layout_layer(&g->statics, layout, cap, g->max_bits);
    g->cells = kcc_bp_take(layout, cap, sizeof *g->cells);
    g->oversized = kcc_bp_take(layout, cap, sizeof *g->oversized);
    g->changed = kcc_bp_take(layout, cap, sizeof *g->changed);
    g->candidates = kcc_bp_take(layout, cap, sizeof *g->candidates);
    g->static_pairs = kcc_bp_take(layout, bp->pair_capacity, sizeof *g->static_pairs);
}

static void set_torus(kcc_grid_layer *l, const uint32_t bits[3])
{
    for (int k = 0; k < 3; ++k) {
        l->bits[k] = bits[k];
        l->mask[k] = (1u << bits[k]) - 1u;
    }
    l->stride[0] = 1;
    l->stride[1] = 1u << bits[0];
    l->stride[2] = 1u << (bits[0] + bits[1]);
}

void kcc_grid_init(kcc_broadphase *bp, float cell_size)
{
    kcc_grid *g = &bp->u.grid;
    g->cell_size = cell_size;
    kcc_grid_layer *layers[2] = {&g->movers, &g->statics};
    const uint32_t none[3] = {0, 0, 0};
    for (int i = 0; i < 2; ++i) {   /* empty until the first update */
        set_torus(layers[i], none);
        for (int k = 0; k < 4; ++k) {
            layers[i]->edge[k % 3] = cell_size;
            layers[i]->inv_edge[k] = 1.0f / cell_size;
        }
    }
}

static uint32_t bucket_count(const kcc_grid_layer *l)
{
    return l->stride[2] * (l->mask[2] + 1u);
}

/* ---- cells ---- */

/* floor(x * inv_edge) clamped to +-2^29, without a libm call (a baseline x86-64 build has no
 * rounding instruction): truncation, less one for negative non-integers. A NaN lands on the low
 * clamp (the world never passes one). Monotone in x, which is what makes the neighbourhoods exact. */
static int32_t cell_coord(float x, float inv_edge)
{
    float c = x * inv_edge;
    c = c >= -COORD_LIMIT ? c : -COORD_LIMIT;
    c = c <= COORD_LIMIT ? c : COORD_LIMIT;
    int32_t truncated = (int32_t)c;
    return truncated - (c < (float)truncated);
}

/* The cell of a box's low corner (lo_cell) and, per axis, how many cells past it the box reaches:
 * returns the reach bits (bit k: one cell), or a value above 7 when it reaches two or more on some
 * axis (oversized). SSE2: the same operations four at a time, the box's six floats read as two
 * groups of four (the boxes array has a float to spare past its last box). */
static uint32_t box_cells(const kcc_grid_layer *l, const kcc_bp_box *box, int32_t lo_cell[4])
{
#if KCC_SSE
    const __m128 inv = _mm_loadu_ps(l->inv_edge), low = _mm_set1_ps(-COORD_LIMIT), high = _mm_set1_ps(COORD_LIMIT);
    __m128 c[2] = {_mm_mul_ps(_mm_loadu_ps(box->lo), inv), _mm_mul_ps(_mm_loadu_ps(box->hi), inv)};
    __m128i cell[2];
    for (int i = 0; i < 2; ++i) {   /* max and min put a NaN on the low clamp, as the compares do */
        c[i] = _mm_min_ps(_mm_max_ps(c[i], low), high);
        const __m128i truncated = _mm_cvttps_epi32(c[i]);
        cell[i] = _mm_add_epi32(truncated, _mm_castps_si128(_mm_cmplt_ps(c[i], _mm_cvtepi32_ps(truncated))));
    }
    const __m128i past = _mm_sub_epi32(cell[1], cell[0]), one = _mm_set1_epi32(1);
    _mm_storeu_si128((__m128i *)(void *)lo_cell, cell[0]);
    const uint32_t reach = (uint32_t)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(past, one)));
    const uint32_t more = (uint32_t)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpgt_epi32(past, one)));
    return (reach & 7u) | (more & 7u) << REACH_BITS;
#else
    uint32_t reach = 0;
    for (int k = 0; k < 3; ++k) {
        lo_cell[k] = cell_coord(box->lo[k], l->inv_edge[k]);
        const int32_t past = cell_coord(box->hi[k], l->inv_edge[k]) - lo_cell[k];
        reach |= (uint32_t)(past == 1) << k | (uint32_t)(past > 1) << (k + REACH_BITS);
    }
    return reach;
#endif
}

/* The cells a scan for entries overlapping `box` reads: from the cell of its low corner less one (an
 * entered box overlapping it spans at most two cells, so its low cell lies there) to the cell of its
 * high corner, on each axis at most the torus's cells (then every bucket of the axis once). Returns
 * how many cells. */
static uint64_t scan_range(const kcc_grid_layer *l, const kcc_bp_box *box, int32_t lo[3], uint32_t count[3])
{
    uint64_t cells = 1;
    for (int k = 0; k < 3; ++k) {
        lo[k] = cell_coord(box->lo[k], l->inv_edge[k]) - 1;
        const int64_t span = (int64_t)cell_coord(box->hi[k], l->inv_edge[k]) - lo[k] + 1;
        const int64_t torus = (int64_t)l->mask[k] + 1;
        count[k] = (uint32_t)(span < torus ? span : torus);
        cells *= count[k];
    }
    return cells;
}

/* The entry ranges of the cells [lo, lo + count) (count[k] at most the torus's, so no bucket twice):
 * each row along x one run of consecutive buckets, or two where it wraps around the torus; empty
 * runs left out. Returns how many (at most 2 * MAX_ROWS); more than MAX_ROWS rows: the one run of
 * every entry. */
static uint32_t layer_runs(const kcc_grid_layer *l, const int32_t lo[3], const uint32_t count[3],
                           uint32_t begin[], uint32_t end[])
{
    if (count[1] * count[2] > MAX_ROWS) {
        begin[0] = 0;
        end[0] = l->entry_count;
        return 1;
    }
    const uint32_t *start = l->bucket_start;
    const uint32_t x = (uint32_t)lo[0] & l->mask[0], room = l->mask[0] + 1u - x;
    const uint32_t first = count[0] < room ? count[0] : room, rest = count[0] - first;
    uint32_t runs = 0;
    for (uint32_t dz = 0; dz < count[2]; ++dz)
        for (uint32_t dy = 0; dy < count[1]; ++dy) {
            const uint32_t row = (((uint32_t)lo[2] + dz) & l->mask[2]) * l->stride[2] +
                                 (((uint32_t)lo[1] + dy) & l->mask[1]) * l->stride[1];
            begin[runs] = start[row + x];
            end[runs] = start[row + x + first];
            runs += end[runs] > begin[runs];
            begin[runs] = start[row];
            end[runs] = start[row + rest];
            runs += end[runs] > begin[runs];
        }
    return runs;
}

/* ---- a layer's rebuild ---- */

/* What a pass over a layer's proxies saw: on each axis the largest box no larger than cell_size on
 * every axis, and the range of the entered boxes' low corners (whose cells are the range of their
 * low cells: cell_coord is monotone). */
typedef struct layer_scan {
    float largest[4];
    float low[4], high[4];   /* the entered boxes' low corners' range, m */
} layer_scan;

static inline uint32_t bucket_of(const kcc_grid_layer *l, const int32_t cell[3])
{
    return ((uint32_t)cell[0] & l->mask[0]) + ((uint32_t)cell[1] & l->mask[1]) * l->stride[1] +
           ((uint32_t)cell[2] & l->mask[2]) * l->stride[2];
}

/* Grows scan->largest by a box's extents when it fits in cell_size on every axis. */
static inline void note_extents(layer_scan *scan, const kcc_bp_box *box, float size)
{
#if KCC_SSE
    const __m128 extent = _mm_sub_ps(_mm_loadu_ps(box->hi), _mm_loadu_ps(box->lo));
    const int fits = (_mm_movemask_ps(_mm_cmple_ps(extent, _mm_set1_ps(size))) & 7) == 7;
    const __m128 kept = _mm_and_ps(extent, _mm_castsi128_ps(_mm_set1_epi32(-fits)));
    _mm_storeu_ps(scan->largest, _mm_max_ps(_mm_loadu_ps(scan->largest), kept));
#else
    const float x = box->hi[0] - box->lo[0], y = box->hi[1] - box->lo[1], z = box->hi[2] - box->lo[2];
    const bool fits = x <= size && y <= size && z <= size;
    scan->largest[0] = fits && x > scan->largest[0] ? x : scan->largest[0];
    scan->largest[1] = fits && y > scan->largest[1] ? y : scan->largest[1];
    scan->largest[2] = fits && z > scan->largest[2] ? z : scan->largest[2];
#endif
}

/* Widens the range of low corners by a box's. */
static inline void note_low_corner(layer_scan *scan, const kcc_bp_box *box)
{
#if KCC_SSE
    const __m128 lo = _mm_loadu_ps(box->lo);
    _mm_storeu_ps(scan->low, _mm_min_ps(_mm_loadu_ps(scan->low), lo));
    _mm_storeu_ps(scan->high, _mm_max_ps(_mm_loadu_ps(scan->high), lo));
#else
    for (int k = 0; k < 3; ++k) {
        scan->low[k] = box->lo[k] < scan->low[k] ? box->lo[k] : scan->low[k];
        scan->high[k] = box->lo[k] > scan->high[k] ? box->lo[k] : scan->high[k];
    }
#endif
}

/* One pass over the layer's live proxies (`want`: its STATIC flag) with its edges and torus: one
 * spanning more than two cells on some axis is flagged oversized, any other gets its record (low
 * cell, bucket, reach) and counts in its bucket (bucket_start, zeroed first); *out_scan gets what
 * the edges and torus should be. Returns how many are entered. What the loop reads and grows is
 * kept in locals: the flags are bytes, which the compiler must assume any store may change. */
static uint32_t enter_proxies(kcc_broadphase *bp, kcc_grid_layer *l, uint8_t want, layer_scan *out_scan)
{
    const kcc_grid_layer layer = *l;
    memset(l->bucket_start, 0, ((size_t)bucket_count(&layer) + 1) * sizeof *l->bucket_start);
    layer_scan scan;
    for (int k = 0; k < 4; ++k)
        scan.largest[k] = 0.0f, scan.low[k] = INFINITY, scan.high[k] = -INFINITY;
    const float size = bp->u.grid.cell_size;
    const kcc_bp_box *boxes = bp->boxes;
    kcc_grid_cell *cells = bp->u.grid.cells;
    uint8_t *flags = bp->flags;
    uint32_t entered = 0, *count = l->bucket_start;
    for (uint32_t proxy = 0, end = bp->proxy_end; proxy < end; ++proxy) {
        if ((flags[proxy] & (KCC_BP_LIVE | KCC_PROXY_STATIC)) != (KCC_BP_LIVE | want))
            continue;
        const kcc_bp_box *box = &boxes[proxy];
        note_extents(&scan, box, size);
        int32_t lo[4];
        const uint32_t reach = box_cells(&layer, box, lo);
        if (reach >> REACH_BITS) {
            flags[proxy] |= KCC_BP_OVERSIZED;
            continue;
        }
        if (flags[proxy] & KCC_BP_OVERSIZED)
            flags[proxy] &= (uint8_t)~KCC_BP_OVERSIZED;
        note_low_corner(&scan, box);
        const uint32_t bucket = bucket_of(&layer, lo);
        kcc_grid_cell *cell = &cells[proxy];
        memcpy(cell->lo, lo, sizeof cell->lo);
        cell->packed = bucket << REACH_BITS | reach;
        ++count[bucket];
        ++entered;
    }
    *out_scan = scan;
    return entered;
}

/* The edges fit the boxes when on each axis the largest fitting cell_size (at least cell_size *
 * MIN_EDGE_SHARE) is no larger and at least half of the edge; otherwise the edges become those
 * largest, grown by EDGE_MARGIN. Returns whether they changed. */
static bool fit_edges(kcc_grid_layer *l, const float largest[3], float cell_size)
{
    float target[3];
    bool fits = true;
    for (int k = 0; k < 3; ++k) {
        target[k] = largest[k] > cell_size * MIN_EDGE_SHARE ? largest[k] : cell_size * MIN_EDGE_SHARE;
        fits &= target[k] <= l->edge[k] && 2.0f * target[k] >= l->edge[k];
    }
    if (fits)
        return false;
    for (int k = 0; k < 4; ++k) {
        l->edge[k % 3] = target[k % 3] + target[k % 3] * EDGE_MARGIN;
        l->inv_edge[k] = 1.0f / l->edge[k % 3];
    }
    return true;
}

/* The torus: on each axis as many bits as the low cells span, none when they span at most
 * COLLAPSE_SPAN cells (the axis collapsed: every cell of it in one bucket, so a scan reads one row
 * instead of three along it: characters spread over a few storeys), the widest cut first while there
 * would be more buckets than BUCKETS_PER_ENTRY an entered proxy. A scan reads at most 2^bits cells an
 * axis, so no bucket twice. */
static void choose_torus(const kcc_grid_layer *l, uint32_t bits[3], uint32_t max_bits, uint32_t entered,
                         const layer_scan *scan)
{
    uint32_t total = MIN_BITS;
    while (total < max_bits && ((uint64_t)1 << total) < (uint64_t)BUCKETS_PER_ENTRY * entered)
        ++total;
    for (int k = 0; k < 3; ++k) {
        const int64_t span = entered > 0 ? (int64_t)cell_coord(scan->high[k], l->inv_edge[k]) -
                                               cell_coord(scan->low[k], l->inv_edge[k]) + 1
                                         : 1;
        bits[k] = 0;
        while (span > COLLAPSE_SPAN && bits[k] < 24 && ((int64_t)1 << bits[k]) < span)
            ++bits[k];
    }
    while (bits[0] + bits[1] + bits[2] > total) {
        int widest = 0;
        for (int k = 1; k < 3; ++k)
            widest = bits[k] > bits[widest] ? k : widest;
        --bits[widest];
    }
}

/* The entered proxies' buckets and the buckets' counts afresh, for a new torus. */
static void recount_buckets(kcc_broadphase *bp, kcc_grid_layer *l, uint8_t want)
{
    kcc_grid *g = &bp->u.grid;
    const uint32_t buckets = bucket_count(l);
    const uint8_t mask = KCC_BP_LIVE | KCC_PROXY_STATIC | KCC_BP_OVERSIZED;
    memset(l->bucket_start, 0, ((size_t)buckets + 1) * sizeof *l->bucket_start);
    for (uint32_t proxy = 0; proxy < bp->proxy_end; ++proxy) {
        if ((bp->flags[proxy] & mask) != (KCC_BP_LIVE | want))
            continue;
        kcc_grid_cell *cell = &g->cells[proxy];
        const uint32_t bucket = bucket_of(l, cell->lo);
        cell->packed = bucket << REACH_BITS | (cell->packed & 7u);
        ++l->bucket_start[bucket];
    }
}

/* The counting sort's end: the buckets' ends by a prefix sum, then the boxes and proxies laid out
 * bucket by bucket (bucket_start[b] ends as the start of bucket b). */
static void sort_into_buckets(kcc_broadphase *bp, kcc_grid_layer *l, uint8_t want, uint32_t entered)
{
    kcc_grid *g = &bp->u.grid;
    const uint32_t buckets = bucket_count(l);
    const uint8_t mask = KCC_BP_LIVE | KCC_PROXY_STATIC | KCC_BP_OVERSIZED;
    uint32_t *start = l->bucket_start;
    for (uint32_t b = 1; b <= buckets; ++b)
        start[b] += start[b - 1];
    for (uint32_t proxy = bp->proxy_end; proxy-- > 0;) {
        if ((bp->flags[proxy] & mask) != (KCC_BP_LIVE | want))
            continue;
        const uint32_t at = --start[g->cells[proxy].packed >> REACH_BITS];
        const kcc_bp_box *box = &bp->boxes[proxy];
        for (int k = 0; k < 3; ++k) {
            l->lo[k][at] = box->lo[k];
            l->hi[k][at] = box->hi[k];
        }
        l->proxy[at] = proxy;
    }
    l->entry_count = entered;
}

/* A layer rebuilt with the edges and torus of its last rebuild, redone with new edges when its boxes
 * outgrew them or shrank below half, recounted with a new torus when the low cells' span asks for
 * one: in a steady scene, one pass to enter the proxies and one to lay them out. */
static void rebuild_layer(kcc_broadphase *bp, kcc_grid_layer *l, uint8_t want)
{
    layer_scan scan;
    uint32_t entered = enter_proxies(bp, l, want, &scan);
    if (fit_edges(l, scan.largest, bp->u.grid.cell_size))
        entered = enter_proxies(bp, l, want, &scan);
    uint32_t bits[3];
    choose_torus(l, bits, bp->u.grid.max_bits, entered, &scan);
    if (bits[0] != l->bits[0] || bits[1] != l->bits[1] || bits[2] != l->bits[2]) {
        set_torus(l, bits);
        recount_buckets(bp, l, want);
    }
    sort_into_buckets(bp, l, want, entered);
}

/* ---- proxies ---- */

/* Notes a proxy added, moved or removed: queries test it on its own until the next update. */
static void note_changed(kcc_broadphase *bp, uint32_t proxy)
{
    kcc_grid *g = &bp->u.grid;
    g->statics_changed |= (bp->flags[proxy] & KCC_PROXY_STATIC) != 0;
    if (bp->flags[proxy] & KCC_BP_CHANGED)
        return;
    bp->flags[proxy] |= KCC_BP_CHANGED;
    g->changed[g->changed_count++] = proxy;
}

void kcc_grid_add(kcc_broadphase *bp, uint32_t proxy)
{
    note_changed(bp, proxy);
}

void kcc_grid_remove(kcc_broadphase *bp, uint32_t proxy)
{
    note_changed(bp, proxy);
}

void kcc_grid_move(kcc_broadphase *bp, uint32_t proxy)
{
    note_changed(bp, proxy);
}

/* ---- pairs ---- */

/* One box's scan of a layer's entries: the box, and the proxy an entry's must be above (-1: any). */
typedef struct grid_probe {
#if KCC_SSE
    __m128  lo[3], hi[3];
    __m128i above, lane;   /* lane: 0, 1, 2, 3 */
#endif
    const kcc_bp_box *box;
    int32_t  above_proxy;
    uint64_t key_high;   /* the keys written: key_high | the entry's proxy */
} grid_probe;

static void probe_setup(grid_probe *q, const kcc_bp_box *box, int32_t above, uint64_t key_high)
{
    q->box = box;
    q->above_proxy = above;
    q->key_high = key_high;
#if KCC_SSE
    for (int k = 0; k < 3; ++k)
        q->lo[k] = _mm_set1_ps(box->lo[k]), q->hi[k] = _mm_set1_ps(box->hi[k]);
    q->above = _mm_set1_epi32(above);
    q->lane = _mm_setr_epi32(0, 1, 2, 3);
#endif
}

/* The entries at..end above the probe's proxy whose boxes overlap its box: their keys appended to out
 * (room for them all). Four at a time without branches on the outcomes (they are unpredictable); the
 * last four's lanes past end masked off. */
KCC_HOT uint32_t probe_run(const kcc_grid_layer *l, const grid_probe *q, uint32_t at, uint32_t end,
                          uint64_t *out, uint32_t found)
{
#if KCC_SSE
    for (; at < end; at += 4) {
        __m128 in = _mm_castsi128_ps(
            _mm_cmpgt_epi32(_mm_loadu_si128((const __m128i *)(const void *)(l->proxy + at)), q->above));
        for (int k = 0; k < 3; ++k)
            in = _mm_and_ps(in, _mm_and_ps(_mm_cmple_ps(q->lo[k], _mm_loadu_ps(l->hi[k] + at)),
                                           _mm_cmple_ps(_mm_loadu_ps(l->lo[k] + at), q->hi[k])));
        in = _mm_and_ps(in, _mm_castsi128_ps(_mm_cmpgt_epi32(_mm_set1_epi32((int32_t)(end - at)), q->lane)));
        for (uint32_t mask = (uint32_t)_mm_movemask_ps(in); mask != 0; mask &= mask - 1)
            out[found++] = q->key_high | l->proxy[at + (uint32_t)__builtin_ctz(mask)];
    }
#else
    const kcc_bp_box *b = q->box;
    for (; at < end; ++at) {
        out[found] = q->key_high | l->proxy[at];
        found += (uint32_t)((int32_t)l->proxy[at] > q->above_proxy) &
                 (uint32_t)(b->lo[0] <= l->hi[0][at]) & (uint32_t)(l->lo[0][at] <= b->hi[0]) &
                 (uint32_t)(b->lo[1] <= l->hi[1][at]) & (uint32_t)(l->lo[1][at] <= b->hi[1]) &
                 (uint32_t)(b->lo[2] <= l->hi[2][at]) & (uint32_t)(l->lo[2][at] <= b->hi[2]);
    }
#endif
    return found;
}

/* An entered mover's pairs with higher movers, keys appended to g->candidates: the entries in the
 * cells from its low cell less one to its high cell (2 or 3 an axis, at most the torus's: rows along
 * x of consecutive buckets unless the row wraps around the torus). */
static uint32_t pairs_of_mover(const kcc_broadphase *bp, uint32_t proxy)
{
    const kcc_grid *g = &bp->u.grid;
    const kcc_grid_layer *l = &g->movers;
    const kcc_grid_cell *cell = &g->cells[proxy];
    const uint32_t reach = cell->packed & 7u;
    const uint32_t x = (uint32_t)(cell->lo[0] - 1) & l->mask[0], row_cells = min_u32(2u + (reach & 1u), l->mask[0] + 1u);
    const uint32_t first = min_u32(row_cells, l->mask[0] + 1u - x), rest = row_cells - first;
    const uint32_t rows_y = min_u32(2u + (reach >> 1 & 1u), l->mask[1] + 1u);
    const uint32_t rows_z = min_u32(2u + (reach >> 2), l->mask[2] + 1u);
    const uint32_t y0 = (uint32_t)(cell->lo[1] - 1), z0 = (uint32_t)(cell->lo[2] - 1);
    grid_probe q;
    probe_setup(&q, &bp->boxes[proxy], (int32_t)proxy, (uint64_t)proxy << 32);
    uint32_t found = 0;
    for (uint32_t dz = 0; dz < rows_z; ++dz)
        for (uint32_t dy = 0; dy < rows_y; ++dy) {
            const uint32_t *row = l->bucket_start + ((z0 + dz) & l->mask[2]) * l->stride[2] +
                                  ((y0 + dy) & l->mask[1]) * l->stride[1];
            found = probe_run(l, &q, row[x], row[x + first], g->candidates, found);
            if (rest > 0)
                found = probe_run(l, &q, row[0], row[rest], g->candidates, found);
        }
    return found;
}

/* Every entered STATIC proxy's pairs with entered movers, in g->static_pairs ascending (a bounded
 * heap keeps the pair_capacity smallest). Returns how many; *complete false when some did not fit. */
static uint32_t pairs_of_statics(kcc_broadphase *bp, bool *complete)
{
    kcc_grid *g = &bp->u.grid;
    uint32_t count = 0, begin[2 * MAX_ROWS], end[2 * MAX_ROWS];
    *complete = true;
    for (uint32_t proxy = 0; proxy < bp->proxy_end && g->movers.entry_count > 0; ++proxy) {
        const uint8_t mask = KCC_BP_LIVE | KCC_PROXY_STATIC | KCC_BP_OVERSIZED;
        if ((bp->flags[proxy] & mask) != (KCC_BP_LIVE | KCC_PROXY_STATIC))
            continue;
        int32_t lo[3];
        uint32_t cells[3], found = 0;
        scan_range(&g->movers, &bp->boxes[proxy], lo, cells);
        const uint32_t runs = layer_runs(&g->movers, lo, cells, begin, end);
        grid_probe q;
        probe_setup(&q, &bp->boxes[proxy], -1, 0);
        for (uint32_t r = 0; r < runs; ++r)
            found = probe_run(&g->movers, &q, begin[r], end[r], g->candidates, found);
        for (uint32_t i = 0; i < found; ++i)
            *complete &= kcc_bp_heap_offer(g->static_pairs, &count, bp->pair_capacity,
                                           kcc_bp_key(proxy, (uint32_t)g->candidates[i]));
    }
    kcc_bp_heap_sort(g->static_pairs, count);
    return count;
}

/* An oversized proxy's pairs with higher proxies: every one is tested, in index order. */
static uint32_t pairs_of_oversized(const kcc_broadphase *bp, uint32_t proxy)
{
    uint64_t *out = bp->u.grid.candidates;
    const kcc_bp_box box = bp->boxes[proxy];
    /* live, and not STATIC when this one is */
    const uint8_t mask = KCC_BP_LIVE | (bp->flags[proxy] & KCC_PROXY_STATIC);
    uint32_t count = 0;
    for (uint32_t other = proxy + 1; other < bp->proxy_end; ++other) {
        const kcc_bp_box *b = &bp->boxes[other];
        out[count] = (uint64_t)proxy << 32 | other;
        count += (uint32_t)((bp->flags[other] & mask) == KCC_BP_LIVE) & (uint32_t)(box.lo[0] <= b->hi[0]) &
                 (uint32_t)(b->lo[0] <= box.hi[0]) & (uint32_t)(box.lo[1] <= b->hi[1]) &
                 (uint32_t)(b->lo[1] <= box.hi[1]) & (uint32_t)(box.lo[2] <= b->hi[2]) & (uint32_t)(b->lo[2] <= box.hi[2]);
    }
    return count;
}

/* An entered proxy's pair keys, ascending, in g->candidates: with higher movers (a mover's), with the
 * oversized proxies above it, and its pairs in the side list of STATIC pairs (*side_at: the first
 * not yet taken). Returns how many. */
static uint32_t pairs_of_entered(const kcc_broadphase *bp, uint32_t proxy, uint32_t side_count,
                                 uint32_t *side_at)
{
    const kcc_grid *g = &bp->u.grid;
    uint64_t *out = g->candidates;
    uint32_t found = (bp->flags[proxy] & KCC_PROXY_STATIC) ? 0 : pairs_of_mover(bp, proxy);
    for (uint32_t i = g->oversized_count; i-- > 0 && g->oversized[i] > proxy;) {
        const uint32_t other = g->oversized[i];
        out[found] = (uint64_t)proxy << 32 | other;
        found += (uint32_t)(kcc_bp_may_pair(bp, proxy, other) &&
                            kcc_bp_overlap(&bp->boxes[proxy], &bp->boxes[other]));
    }
    for (; *side_at < side_count && g->static_pairs[*side_at] >> 32 == proxy; ++*side_at)
        out[found++] = g->static_pairs[*side_at];
    if (found > 1)
        kcc_bp_sort_keys(out, found);
    return found;
}

/* The movers' layer, the statics' when one changed, and the oversized list (ascending). */
static void rebuild(kcc_broadphase *bp)
{
    kcc_grid *g = &bp->u.grid;
    for (uint32_t i = 0; i < g->changed_count; ++i)
        bp->flags[g->changed[i]] &= (uint8_t)~KCC_BP_CHANGED;
    g->changed_count = 0;
    rebuild_layer(bp, &g->movers, 0);
    if (g->statics_changed)
        rebuild_layer(bp, &g->statics, KCC_PROXY_STATIC);
    g->statics_changed = false;
    g->oversized_count = 0;
    for (uint32_t proxy = 0; proxy < bp->proxy_end; ++proxy)
        if ((bp->flags[proxy] & (KCC_BP_LIVE | KCC_BP_OVERSIZED)) == (KCC_BP_LIVE | KCC_BP_OVERSIZED))
            g->oversized[g->oversized_count++] = proxy;
}

void kcc_grid_update(kcc_broadphase *bp)
{
    rebuild(bp);
    const kcc_grid *g = &bp->u.grid;
    bool complete;
    const uint32_t side_count = pairs_of_statics(bp, &complete);
    uint32_t written = 0, side_at = 0;
    bool overflow = false;
    for (uint32_t proxy = 0; proxy < bp->proxy_end && !overflow; ++proxy) {
        if (!(bp->flags[proxy] & KCC_BP_LIVE))
            continue;
        uint32_t count = (bp->flags[proxy] & KCC_BP_OVERSIZED) ? pairs_of_oversized(bp, proxy)
                                                              : pairs_of_entered(bp, proxy, side_count, &side_at);
        /* proxies in ascending order, each one's pairs ascending: the list is sorted as written,
         * and the first pair_capacity are the smallest */
        if (count > bp->pair_capacity - written) {
            count = bp->pair_capacity - written;
            overflow = true;
        }
        for (uint32_t i = 0; i < count; ++i) {
            bp->pairs[written].a = proxy;
            bp->pairs[written++].b = (uint32_t)g->candidates[i];
        }
    }
    bp->pair_count = written;
    /* a side list that dropped pairs held pair_capacity smaller ones: the list is full either way */
    bp->pair_overflow = overflow || !complete;
}

/* ---- queries ---- */

/* Offers a proxy to out[0..capacity), kept ascending and holding the smallest offered. */
static void offer_sorted(uint32_t *out, uint32_t found, uint32_t capacity, uint32_t proxy)
{
    uint32_t end = found < capacity ? found + 1 : capacity;
    if (end == 0 || (found >= capacity && proxy > out[capacity - 1]))
        return;
    uint32_t i = end - 1;
    for (; i > 0 && out[i - 1] > proxy; --i)
        out[i] = out[i - 1];
    out[i] = proxy;
}

/* The layer's entries in the cells [lo, lo + count) whose proxies have not changed since the update
 * and whose boxes overlap box, offered to out. */
static uint32_t query_layer(const kcc_broadphase *bp, const kcc_grid_layer *l, const kcc_bp_box *box,
                            const int32_t lo[3], const uint32_t count[3], uint32_t *out, uint32_t capacity,
                            uint32_t found)
{
    uint32_t begin[2 * MAX_ROWS], end[2 * MAX_ROWS];
    const uint32_t runs = layer_runs(l, lo, count, begin, end);
    for (uint32_t r = 0; r < runs; ++r)
        for (uint32_t at = begin[r]; at < end[r]; ++at) {
            const uint32_t proxy = l->proxy[at];
            if ((bp->flags[proxy] & (KCC_BP_LIVE | KCC_BP_CHANGED)) == KCC_BP_LIVE &&
                box->lo[0] <= l->hi[0][at] && l->lo[0][at] <= box->hi[0] && box->lo[1] <= l->hi[1][at] &&
                l->lo[1][at] <= box->hi[1] && box->lo[2] <= l->hi[2][at] && l->lo[2][at] <= box->hi[2])
                offer_sorted(out, found++, capacity, proxy);
        }
    return found;
}

uint32_t kcc_grid_query(const kcc_broadphase *bp, const kcc_bp_box *box, uint32_t *out,
                        uint32_t capacity)
{
    const kcc_grid *g = &bp->u.grid;
    int32_t movers_lo[3], statics_lo[3];
    uint32_t movers_count[3], statics_count[3];
    if (scan_range(&g->movers, box, movers_lo, movers_count) > QUERY_MAX_CELLS ||
        scan_range(&g->statics, box, statics_lo, statics_count) > QUERY_MAX_CELLS)
        return kcc_bp_query_all(bp, box, out, capacity);
    uint32_t found = query_layer(bp, &g->movers, box, movers_lo, movers_count, out, capacity, 0);
    found = query_layer(bp, &g->statics, box, statics_lo, statics_count, out, capacity, found);
    for (uint32_t i = 0; i < g->oversized_count; ++i) {
        const uint32_t proxy = g->oversized[i];
        if ((bp->flags[proxy] & (KCC_BP_LIVE | KCC_BP_CHANGED)) == KCC_BP_LIVE &&
            kcc_bp_overlap(box, &bp->boxes[proxy]))
            offer_sorted(out, found++, capacity, proxy);
    }
    for (uint32_t i = 0; i < g->changed_count; ++i) {
        const uint32_t proxy = g->changed[i];
        if ((bp->flags[proxy] & KCC_BP_LIVE) && kcc_bp_overlap(box, &bp->boxes[proxy]))
            offer_sorted(out, found++, capacity, proxy);
    }
    return found;
}
