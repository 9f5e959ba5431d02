/* grid.c: the uniform grid broadphase: cubic cells of cell_size, hashed into a fixed table of chains
 * (so the world needs no bounds), each listing the proxies whose boxes reach into it; a proxy is
 * relinked only when the range of cells it covers changes, and one covering more than
 * KCC_GRID_MAX_CELLS cells joins the oversized list, tested against every proxy. Pairs are found
 * afresh at each update, each once: in the cell at the low corner of the two ranges' overlap.
 * Owns kcc_grid's arrays; never allocates. */
#include <string.h>

#include "kcc_broadphase_internal.h"

#define NONE UINT32_MAX
/* Cell coordinates are clamped to +-2^30 so that huge or infinite boxes still get int32 ranges
 * (clamped cells only merge far-away cells; the exact box test decides). */
#define COORD_LIMIT 1073741824.0f
/* A query covering more cells than this tests every proxy instead of visiting its cells. */
#define QUERY_MAX_CELLS 64

void kcc_grid_layout(kcc_broadphase *bp, kcc_bp_layout *layout)
{
    kcc_grid *g = &bp->u.grid;
    size_t cap = bp->proxy_capacity, entries = KCC_GRID_MAX_CELLS * cap;
    g->proxies = kcc_bp_take(layout, cap, sizeof *g->proxies);
    g->entry_cell = kcc_bp_take(layout, entries, sizeof *g->entry_cell);
    g->entry_next = kcc_bp_take(layout, entries, sizeof *g->entry_next);
    g->cells = kcc_bp_take(layout, entries, sizeof *g->cells);
    uint32_t buckets = 1;
    while (buckets < entries)
        buckets <<= 1;
    g->buckets = kcc_bp_take(layout, buckets, sizeof *g->buckets);
    g->bucket_mask = buckets - 1;
    g->oversized = kcc_bp_take(layout, cap, sizeof *g->oversized);
    g->oversized_slot = kcc_bp_take(layout, cap, sizeof *g->oversized_slot);
    g->candidates = kcc_bp_take(layout, cap, sizeof *g->candidates);
}

void kcc_grid_init(kcc_broadphase *bp, float cell_size)
{
    kcc_grid *g = &bp->u.grid;
    g->cell_size = cell_size;
    g->inv_cell_size = 1.0f / cell_size;
    g->free_cell = NONE;
    memset(g->buckets, 0xff, ((size_t)g->bucket_mask + 1) * sizeof *g->buckets);
}

/* ---- cells ---- */

/* floor(x / cell_size) clamped to +-2^30, without a libm call (a baseline x86-64 build has no
 * rounding instruction): truncation, less one for negative non-integers. A NaN lands on the low
 * clamp (the world never passes one). */
static int32_t cell_coord(const kcc_grid *g, float x)
{
    float c = x * g->inv_cell_size;
    c = c >= -COORD_LIMIT ? c : -COORD_LIMIT;
    c = c <= COORD_LIMIT ? c : COORD_LIMIT;
    int32_t truncated = (int32_t)c;
    return truncated - (c < (float)truncated);
}

static void box_range(const kcc_grid *g, const kcc_bp_box *box, int32_t lo[3], int32_t hi[3])
{
    for (int k = 0; k < 3; ++k) {
        lo[k] = cell_coord(g, box->lo[k]);
        hi[k] = cell_coord(g, box->hi[k]);
    }
}

/* Cells in the range, or limit + 1 when more than limit. */
static uint32_t range_cells(const int32_t lo[3], const int32_t hi[3], uint32_t limit)
{
    uint64_t cells = 1;
    for (int k = 0; k < 3; ++k) {
        cells *= (uint64_t)((int64_t)hi[k] - lo[k] + 1);
        if (cells > limit)
            return limit + 1;
    }
    return (uint32_t)cells;
}

static uint32_t bucket_of(const kcc_grid *g, const int32_t coord[3])
{
    uint32_t h = (uint32_t)coord[0] * 73856093u ^ (uint32_t)coord[1] * 19349663u ^
                 (uint32_t)coord[2] * 83492791u;
    h *= 0x9E3779B1u;
    return (h ^ h >> 15) & g->bucket_mask;
}

static bool same_coord(const int32_t a[3], const int32_t b[3])
{
    return a[0] == b[0] && a[1] == b[1] && a[2] == b[2];
}

static uint32_t find_cell(const kcc_grid *g, const int32_t coord[3])
{
    uint32_t cell = g->buckets[bucket_of(g, coord)];
    while (cell != NONE && !same_coord(g->cells[cell].coord, coord))
        cell = g->cells[cell].next;
    return cell;
}

static uint32_t find_or_make_cell(kcc_grid *g, const int32_t coord[3])
{
    uint32_t cell = find_cell(g, coord);
    if (cell != NONE)
        return cell;
    if (g->free_cell != NONE) {
        cell = g->free_cell;
        g->free_cell = g->cells[cell].next;
    } else {
        cell = g->cells_used++;   /* at most one cell per entry: the pool never runs out */
    }
    uint32_t bucket = bucket_of(g, coord);
    memcpy(g->cells[cell].coord, coord, sizeof g->cells[cell].coord);
    g->cells[cell].head = NONE;
    g->cells[cell].next = g->buckets[bucket];
    g->buckets[bucket] = cell;
    return cell;
}

/* An empty cell leaves its bucket's chain for the free list. */
static void release_cell(kcc_grid *g, uint32_t cell)
{
    uint32_t *link = &g->buckets[bucket_of(g, g->cells[cell].coord)];
    while (*link != cell)
        link = &g->cells[*link].next;
    *link = g->cells[cell].next;
    g->cells[cell].next = g->free_cell;
    g->free_cell = cell;
}

/* ---- proxies ---- */

static void link_proxy(kcc_broadphase *bp, uint32_t proxy)
{
    kcc_grid *g = &bp->u.grid;
    kcc_grid_proxy *record = &g->proxies[proxy];
    int32_t *lo = record->range_lo, *hi = record->range_hi;
    box_range(g, &record->box, lo, hi);
    if (range_cells(lo, hi, KCC_GRID_MAX_CELLS) > KCC_GRID_MAX_CELLS) {
        bp->flags[proxy] |= KCC_BP_OVERSIZED;
        record->flags = bp->flags[proxy];
        record->cell_count = 0;
        g->oversized_slot[proxy] = g->oversized_count;
        g->oversized[g->oversized_count++] = proxy;
        return;
    }
    uint32_t entry = KCC_GRID_MAX_CELLS * proxy;
    int32_t coord[3];
    for (coord[2] = lo[2]; coord[2] <= hi[2]; ++coord[2])
        for (coord[1] = lo[1]; coord[1] <= hi[1]; ++coord[1])
            for (coord[0] = lo[0]; coord[0] <= hi[0]; ++coord[0], ++entry) {
                uint32_t cell = find_or_make_cell(g, coord);
                /* each cell's list runs from the highest proxy down (pairs_from_cells stops at
                 * its own entry) */
                uint32_t *link = &g->cells[cell].head;
                while (*link != NONE && *link > entry)
                    link = &g->entry_next[*link];
                g->entry_cell[entry] = cell;
                g->entry_next[entry] = *link;
                *link = entry;
            }
    record->flags = bp->flags[proxy];
    record->cell_count = entry - KCC_GRID_MAX_CELLS * proxy;
}

static void unlink_proxy(kcc_broadphase *bp, uint32_t proxy)
{
    kcc_grid *g = &bp->u.grid;
    if (bp->flags[proxy] & KCC_BP_OVERSIZED) {
        uint32_t slot = g->oversized_slot[proxy], last = g->oversized[--g->oversized_count];
        g->oversized[slot] = last;
        g->oversized_slot[last] = slot;
        bp->flags[proxy] &= (uint8_t)~KCC_BP_OVERSIZED;
        return;
    }
    for (uint32_t k = 0; k < g->proxies[proxy].cell_count; ++k) {
        uint32_t entry = KCC_GRID_MAX_CELLS * proxy + k, cell = g->entry_cell[entry];
        uint32_t *link = &g->cells[cell].head;
        while (*link != entry)
            link = &g->entry_next[*link];
        *link = g->entry_next[entry];
        if (g->cells[cell].head == NONE)
            release_cell(g, cell);
    }
    g->proxies[proxy].cell_count = 0;
}

void kcc_grid_add(kcc_broadphase *bp, uint32_t proxy)
{
    bp->u.grid.proxies[proxy].box = bp->boxes[proxy];
    link_proxy(bp, proxy);
}

void kcc_grid_remove(kcc_broadphase *bp, uint32_t proxy)
{
    unlink_proxy(bp, proxy);
    bp->u.grid.proxies[proxy].flags = 0;
}

void kcc_grid_move(kcc_broadphase *bp, uint32_t proxy)
{
    kcc_grid *g = &bp->u.grid;
    kcc_grid_proxy *record = &g->proxies[proxy];
    int32_t lo[3], hi[3];
    record->box = bp->boxes[proxy];
    box_range(g, &record->box, lo, hi);
    if (same_coord(lo, record->range_lo) && same_coord(hi, record->range_hi))
        return;
    unlink_proxy(bp, proxy);
    link_proxy(bp, proxy);
}

/* ---- pairs ---- */

/* 1 when other is the higher of the two, they may pair and their boxes overlap; and with a cell, when
 * that cell holds the low corner of the overlap of their ranges (max of their low corners), so that
 * a pair met in several cells counts once. Computed without branches: the outcomes are unpredictable
 * and a mispredicted branch costs more than the whole test. */
static inline uint32_t pair_test(const kcc_grid_proxy *proxies, uint32_t proxy, uint32_t other)
{
    const kcc_bp_box *a = &proxies[proxy].box, *b = &proxies[other].box;
    uint32_t hit = (uint32_t)(other > proxy) &
                   (uint32_t)(((proxies[proxy].flags & proxies[other].flags) & KCC_PROXY_STATIC) == 0);
    for (int k = 0; k < 3; ++k)
        hit &= (uint32_t)(a->lo[k] <= b->hi[k]) & (uint32_t)(b->lo[k] <= a->hi[k]);
    return hit;
}

static inline uint32_t low_corner_test(const int32_t a[3], const int32_t b[3], const int32_t cell[3])
{
    uint32_t hit = 1;
    for (int k = 0; k < 3; ++k)
        hit &= (uint32_t)((a[k] > b[k] ? a[k] : b[k]) == cell[k]);
    return hit;
}

/* The keys of proxy's pairs with higher proxies, ascending, in g->candidates: those met in its cells
 * (each once, in the low-corner cell; each cell's list holds the higher proxies before proxy's own
 * entry) and the oversized ones. Returns how many. */
static uint32_t pairs_from_cells(const kcc_broadphase *bp, uint32_t proxy)
{
    const kcc_grid *g = &bp->u.grid;
    const kcc_grid_proxy *proxies = g->proxies;
    const int32_t *lo = proxies[proxy].range_lo;
    uint64_t *out = g->candidates;
    uint32_t count = 0;
    for (uint32_t k = 0; k < proxies[proxy].cell_count; ++k) {
        const kcc_grid_cell *cell = &g->cells[g->entry_cell[KCC_GRID_MAX_CELLS * proxy + k]];
        /* the list runs from the highest proxy down: the higher ones come before proxy's entry */
        uint32_t own = KCC_GRID_MAX_CELLS * proxy + k;
        for (uint32_t entry = cell->head; entry != own; entry = g->entry_next[entry]) {
            uint32_t other = entry / KCC_GRID_MAX_CELLS;
            out[count] = (uint64_t)proxy << 32 | other;
            count += pair_test(proxies, proxy, other) &
                     low_corner_test(lo, proxies[other].range_lo, cell->coord);
        }
    }
    for (uint32_t i = 0; i < g->oversized_count; ++i) {
        out[count] = (uint64_t)proxy << 32 | g->oversized[i];
        count += pair_test(proxies, proxy, g->oversized[i]);
    }
    kcc_bp_sort_keys(out, count);
    return count;
}

/* An oversized proxy's pairs with higher proxies: every one is tested, in index order. */
static uint32_t pairs_of_oversized(const kcc_broadphase *bp, uint32_t proxy)
{
    const kcc_grid_proxy *proxies = bp->u.grid.proxies;
    uint64_t *out = bp->u.grid.candidates;
    uint32_t count = 0;
    for (uint32_t other = proxy + 1; other < bp->proxy_end; ++other) {
        out[count] = (uint64_t)proxy << 32 | other;
        count += pair_test(proxies, proxy, other) & (uint32_t)((proxies[other].flags & KCC_BP_LIVE) != 0);
    }
    return count;
}

void kcc_grid_update(kcc_broadphase *bp)
{
    const kcc_grid *g = &bp->u.grid;
    uint32_t written = 0;
    bool overflow = false;
    for (uint32_t proxy = 0; proxy < bp->proxy_end && !overflow; ++proxy) {
        if (!(bp->flags[proxy] & KCC_BP_LIVE))
            continue;
        uint32_t count = (bp->flags[proxy] & KCC_BP_OVERSIZED) ? pairs_of_oversized(bp, proxy)
                                                              : pairs_from_cells(bp, proxy);
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
    bp->pair_overflow = overflow;
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

uint32_t kcc_grid_query(const kcc_broadphase *bp, const kcc_bp_box *box, uint32_t *out,
                        uint32_t capacity)
{
    const kcc_grid *g = &bp->u.grid;
    int32_t lo[3], hi[3], coord[3];
    box_range(g, box, lo, hi);
    if (range_cells(lo, hi, QUERY_MAX_CELLS) > QUERY_MAX_CELLS)
        return kcc_bp_query_all(bp, box, out, capacity);
    uint32_t found = 0;
    for (coord[2] = lo[2]; coord[2] <= hi[2]; ++coord[2])
        for (coord[1] = lo[1]; coord[1] <= hi[1]; ++coord[1])
            for (coord[0] = lo[0]; coord[0] <= hi[0]; ++coord[0]) {
                uint32_t cell = find_cell(g, coord);
                if (cell == NONE)
                    continue;
                for (uint32_t entry = g->cells[cell].head; entry != NONE; entry = g->entry_next[entry]) {
                    uint32_t proxy = entry / KCC_GRID_MAX_CELLS;
                    if (low_corner_test(lo, g->proxies[proxy].range_lo, coord) &&
                        kcc_bp_overlap(box, &g->proxies[proxy].box))
                        offer_sorted(out, found++, capacity, proxy);
                }
            }
    for (uint32_t i = 0; i < g->oversized_count; ++i)
        if (kcc_bp_overlap(box, &bp->boxes[g->oversized[i]]))
            offer_sorted(out, found++, capacity, g->oversized[i]);
    return found;
}
