/* grid.c: the grid broadphase, sweep and prune in rows: two layers, the movers (proxies not STATIC),
 * updated at every update, and the STATIC proxies, updated only when one of them changed. A layer
 * keeps its proxies sorted by (the row of their box's low corner on z, lo.x), the rows as tall as
 * its deepest box (so an entered box spans at most two rows), re-sorted in place from the last
 * update's order (nearly sorted: an insertion sort; a merge sort when many moved far), y not
 * gridded. A mover finds its pairs in two runs of the sorted movers, four at a time: its own row
 * after it while their lo.x <= its hi.x, and the next row from a cursor that only moves forward.
 * Each STATIC proxy finds its movers in the rows it spans (a table of row starts, then a binary
 * search in the row); a proxy wider or deeper than cell_size is oversized, tested against every
 * proxy. The pairs, found in spatial order, are counting-sorted to (a, b) order. Add, remove and
 * move only note the proxy as changed, which queries test on their own until the next update. Owns
 * kcc_grid's arrays; never allocates. */
#include <string.h>

#include "collide_internal.h" /* KCC_SSE */
#include "kcc_broadphase_internal.h"

/* Rows are clamped to +-2^29 so that huge or infinite boxes still get int32 rows whose neighbours
 * fit an int32 (a monotone map: clamped rows only merge far-away rows; the exact box test decides). */
#define COORD_LIMIT 536870912.0f
/* A query or a STATIC proxy's scan spanning more rows than this reads every entry of the layer. */
#define MAX_ROWS 64u
/* Entries past the last that a four-wide test reads (masked off by their row, INT32_MAX). */
#define ENTRY_PAD 4u
/* The shortest row, as a share of cell_size (a layer of points alone would have rows of nothing),
 * and the margin added to the deepest box (so that rounding rarely makes a box that deep span
 * three rows: such a box is oversized, which costs time, not answers) and to the widest. */
#define MIN_ROW_SHARE 0.0625f
#define EDGE_MARGIN 0x1p-10f
/* A group of pairs (one a) this long is sorted by its keys' sort, shorter ones by insertion. */
#define GROUP_INSERTION_MAX 24u
/* The insertion sort gives up for a merge sort after this many moves an entry (plus the slack). */
#define SORT_MOVES_PER_ENTRY 16u
#define SORT_MOVES_SLACK 1024u

static void layout_layer(kcc_grid_layer *l, kcc_bp_layout *layout, size_t cap)
{
    l->entries = kcc_bp_take(layout, cap + ENTRY_PAD, sizeof *l->entries);
    for (int k = 0; k < 3; ++k) {
        l->lo[k] = kcc_bp_take(layout, cap + ENTRY_PAD, sizeof(float));
        l->hi[k] = kcc_bp_take(layout, cap + ENTRY_PAD, sizeof(float));
    }
    l->row = kcc_bp_take(layout, cap + ENTRY_PAD, sizeof *l->row);
    l->row_start = kcc_bp_take(layout, cap + 2, sizeof *l->row_start);
}

void kcc_grid_layout(kcc_broadphase *bp, kcc_bp_layout *layout)
{
    kcc_grid *g = &bp->u.grid;
    size_t cap = bp->proxy_capacity;
    layout_layer(&g->movers, layout, cap);
    layout_layer(&g->statics, layout, cap);
    g->scratch = kcc_bp_take(layout, cap, sizeof *g->scratch);
    g->oversized = kcc_bp_take(layout, cap, sizeof *g->oversized);
    g->changed = kcc_bp_take(layout, cap, sizeof *g->changed);
    g->candidates = kcc_bp_take(layout, cap, sizeof *g->candidates);
    g->group_end = kcc_bp_take(layout, cap + 1, sizeof *g->group_end);
    g->found = kcc_bp_take(layout, bp->pair_capacity, sizeof *g->found);
}

/* The entries past the last: key UINT64_MAX (a cursor stops there) and row INT32_MAX (no run). */
static void pad_layer(kcc_grid_layer *l)
{
    for (uint32_t i = l->entry_count; i < l->entry_count + ENTRY_PAD; ++i) {
        l->entries[i].key = UINT64_MAX;
        l->entries[i].proxy = 0;
        l->row[i] = INT32_MAX;
    }
}

void kcc_grid_init(kcc_broadphase *bp, float cell_size)
{
    kcc_grid *g = &bp->u.grid;
    g->cell_size = cell_size;
    kcc_grid_layer *layers[2] = {&g->movers, &g->statics};
    for (int i = 0; i < 2; ++i) {   /* empty until the first update */
        layers[i]->row_height = cell_size;
        layers[i]->inv_row_height = 1.0f / cell_size;
        layers[i]->widest = cell_size;
        layers[i]->in_flag = i == 0 ? KCC_BP_IN_MOVERS : KCC_BP_IN_STATICS;
        pad_layer(layers[i]);
    }
}

/* ---- rows and keys ---- */

/* floor(z * inv_row_height) clamped to +-2^29, without a libm call (a baseline x86-64 build has no
 * rounding instruction): truncation, less one for negative non-integers. A NaN lands on the low
 * clamp (the world never passes one). Monotone in z, which is what makes the runs exact. */
static inline int32_t row_of(float z, float inv_row_height)
{
#if KCC_SSE   /* the same operations without branches: max and min put a NaN on the low clamp too */
    __m128 c = _mm_mul_ss(_mm_set_ss(z), _mm_set_ss(inv_row_height));
    c = _mm_min_ss(_mm_max_ss(c, _mm_set_ss(-COORD_LIMIT)), _mm_set_ss(COORD_LIMIT));
    const int32_t truncated = _mm_cvttss_si32(c);
    return truncated - (_mm_cvtss_f32(c) < (float)truncated);
#else
    float c = z * inv_row_height;
    c = c >= -COORD_LIMIT ? c : -COORD_LIMIT;
    c = c <= COORD_LIMIT ? c : COORD_LIMIT;
    int32_t truncated = (int32_t)c;
    return truncated - (c < (float)truncated);
#endif
}

/* The key of (row, x): ascending keys are ascending rows, then ascending x (-0 taken as +0, so that
 * equal floats have equal keys). */
static inline uint64_t entry_key(int32_t row, float x)
{
    const float normal = x + 0.0f;
    uint32_t bits;
    memcpy(&bits, &normal, sizeof bits);
    bits = (bits & 0x80000000u) ? ~bits : bits | 0x80000000u;
    return (uint64_t)((uint32_t)row ^ 0x80000000u) << 32 | bits;
}

static inline int32_t key_row(uint64_t key)
{
    return (int32_t)((uint32_t)(key >> 32) ^ 0x80000000u);
}

/* ---- a layer's update ---- */

/* Keys an entry from its box: false when the box spans more than two rows. */
static inline bool key_entry(const kcc_grid_layer *l, const kcc_bp_box *box, kcc_grid_entry *e)
{
    const int32_t row = row_of(box->lo[2], l->inv_row_height);
    e->key = entry_key(row, box->lo[0]);
    return row_of(box->hi[2], l->inv_row_height) - row <= 1;
}

/* What a layer pass reads, in locals (the flags are bytes, which the compiler must assume any store
 * may change), and what it found: the largest extents (m) on x and z of the boxes it kept, and
 * whether some key was made with a row height too short for its box. */
typedef struct layer_pass {
    const kcc_bp_box *boxes;
    uint8_t *flags;
    kcc_grid_entry *entries;
    float    size, inv_row_height;
    uint8_t  in_flag;
    float    wide, deep;
    bool     rekey;
} layer_pass;

/* Keeps proxy p (live, of the layer's kind) as entry `kept` when its box fits, keyed, noting its
 * extents; else flags it oversized. Its flags are written only when they change. */
static inline uint32_t keep_entry(layer_pass *pass, uint32_t p, uint32_t kept)
{
    const kcc_bp_box *box = &pass->boxes[p];
    const uint8_t f = pass->flags[p];
    const float wide = box->hi[0] - box->lo[0], deep = box->hi[2] - box->lo[2];
    if (!(wide <= pass->size && deep <= pass->size)) {
        pass->flags[p] = (uint8_t)((f & ~pass->in_flag) | KCC_BP_OVERSIZED);
        return kept;
    }
    pass->wide = wide > pass->wide ? wide : pass->wide;
    pass->deep = deep > pass->deep ? deep : pass->deep;
    const int32_t row = row_of(box->lo[2], pass->inv_row_height);
    pass->rekey |= row_of(box->hi[2], pass->inv_row_height) - row > 1;
    pass->entries[kept].key = entry_key(row, box->lo[0]);
    pass->entries[kept].proxy = p;
    if ((f & (KCC_BP_OVERSIZED | pass->in_flag)) != pass->in_flag)
        pass->flags[p] = (uint8_t)((f & ~KCC_BP_OVERSIZED) | pass->in_flag);
    return kept + 1;
}

/* The layer's entries afresh, in the last update's order: its entries still live, of its kind and
 * fitting, then the changed proxies of its kind not yet in it; each keyed with the layer's row
 * height. Those leaving it lose its flag. */
static void collect_entries(kcc_broadphase *bp, kcc_grid_layer *l, uint8_t want, layer_pass *pass)
{
    const kcc_grid *g = &bp->u.grid;
    const uint8_t kind = KCC_BP_LIVE | KCC_PROXY_STATIC;
    layer_pass p = {bp->boxes, bp->flags, l->entries, g->cell_size, l->inv_row_height, l->in_flag, 0.0f, 0.0f, false};
    uint32_t kept = 0;
    for (uint32_t i = 0, count = l->entry_count; i < count; ++i) {
        const uint32_t proxy = p.entries[i].proxy;
        if ((p.flags[proxy] & kind) == (KCC_BP_LIVE | want))
            kept = keep_entry(&p, proxy, kept);
        else
            p.flags[proxy] &= (uint8_t)~p.in_flag;
    }
    for (uint32_t i = 0; i < g->changed_count; ++i) {
        const uint32_t proxy = g->changed[i];
        if ((p.flags[proxy] & (kind | p.in_flag)) == (KCC_BP_LIVE | want))
            kept = keep_entry(&p, proxy, kept);
    }
    l->entry_count = kept;
    *pass = p;
}

/* Keys every entry again with the layer's row height; those spanning more than two rows leave it,
 * oversized. */
static void rekey_entries(kcc_broadphase *bp, kcc_grid_layer *l)
{
    uint32_t kept = 0;
    for (uint32_t i = 0; i < l->entry_count; ++i) {
        const uint32_t p = l->entries[i].proxy;
        l->entries[kept].proxy = p;
        if (key_entry(l, &bp->boxes[p], &l->entries[kept]))
            ++kept;
        else
            bp->flags[p] = (uint8_t)((bp->flags[p] & ~l->in_flag) | KCC_BP_OVERSIZED);
    }
    l->entry_count = kept;
}

/* The row height fits the boxes when the deepest (at least cell_size * MIN_ROW_SHARE) is no deeper
 * and at least half of it; otherwise it becomes that depth grown by EDGE_MARGIN. Returns whether it
 * changed. */
static bool fit_row_height(kcc_grid_layer *l, float deep, float cell_size)
{
    const float target = deep > cell_size * MIN_ROW_SHARE ? deep : cell_size * MIN_ROW_SHARE;
    if (target <= l->row_height && 2.0f * target >= l->row_height)
        return false;
    l->row_height = target + target * EDGE_MARGIN;
    l->inv_row_height = 1.0f / l->row_height;
    return true;
}

/* Sorts the entries by key with insertion, giving up after `budget` moves: returns false then, the
 * entries left a permutation of what they were. */
static bool insertion_sort(kcc_grid_entry *e, uint32_t count, uint64_t budget)
{
    for (uint32_t i = 1; i < count; ++i) {
        if (e[i - 1].key <= e[i].key)
            continue;
        const kcc_grid_entry entry = e[i];
        uint32_t j = i;
        for (; j > 0 && e[j - 1].key > entry.key; --j)
            e[j] = e[j - 1];
        e[j] = entry;
        if (i - j > budget)
            return false;
        budget -= i - j;
    }
    return true;
}

/* Sorts the entries by key (a bottom-up merge sort through scratch). */
static void merge_sort(kcc_grid_entry *e, kcc_grid_entry *scratch, uint32_t count)
{
    kcc_grid_entry *from = e, *to = scratch;
    for (uint32_t width = 1; width < count; width *= 2) {
        for (uint32_t lo = 0; lo < count; lo += 2 * width) {
            const uint32_t mid = lo + width < count ? lo + width : count;
            const uint32_t hi = mid + width < count ? mid + width : count;
            uint32_t a = lo, b = mid, at = lo;
            while (a < mid && b < hi)
                to[at++] = from[b].key < from[a].key ? from[b++] : from[a++];
            while (a < mid)
                to[at++] = from[a++];
            while (b < hi)
                to[at++] = from[b++];
        }
        kcc_grid_entry *swap = from;
        from = to;
        to = swap;
    }
    if (from != e)
        memcpy(e, from, (size_t)count * sizeof *e);
}

/* The table of row starts, when the rows from the first entry's to the last's are no more than
 * proxy_capacity + 1: row_start[r - first_row] is the first entry of row r or after it. */
static void index_rows(kcc_grid_layer *l, uint32_t proxy_capacity)
{
    l->row_count = 0;
    if (l->entry_count == 0)
        return;
    l->first_row = l->row[0];
    const int64_t span = (int64_t)l->row[l->entry_count - 1] - l->first_row + 1;
    if (span > (int64_t)proxy_capacity + 1)
        return;
    l->row_count = (uint32_t)span;
    uint32_t index = 0;
    for (uint32_t i = 0; i < l->entry_count; ++i)
        for (const uint32_t end = (uint32_t)(l->row[i] - l->first_row); index <= end; ++index)
            l->row_start[index] = i;
    l->row_start[l->row_count] = l->entry_count;
}

/* The entries' boxes and rows laid out by entry. */
static void lay_out_boxes(const kcc_broadphase *bp, kcc_grid_layer *l)
{
    const kcc_bp_box *boxes = bp->boxes;
    const kcc_grid_entry *entries = l->entries;
    float *lo0 = l->lo[0], *lo1 = l->lo[1], *lo2 = l->lo[2], *hi0 = l->hi[0], *hi1 = l->hi[1], *hi2 = l->hi[2];
    int32_t *row = l->row;
    for (uint32_t i = 0, count = l->entry_count; i < count; ++i) {
        const kcc_bp_box *box = &boxes[entries[i].proxy];
        lo0[i] = box->lo[0], lo1[i] = box->lo[1], lo2[i] = box->lo[2];
        hi0[i] = box->hi[0], hi1[i] = box->hi[1], hi2[i] = box->hi[2];
        row[i] = key_row(entries[i].key);
    }
    pad_layer(l);
    index_rows(l, bp->proxy_capacity);
}

/* A layer brought up to date: its entries collected in the last order, keyed again with a new row
 * height when the boxes outgrew it or shrank below half, sorted (by insertion from the last order
 * unless that moves too much), laid out. */
static void update_layer(kcc_broadphase *bp, kcc_grid_layer *l, uint8_t want)
{
    kcc_grid *g = &bp->u.grid;
    layer_pass pass;
    collect_entries(bp, l, want, &pass);
    const bool new_height = fit_row_height(l, pass.deep, g->cell_size);
    if (new_height || pass.rekey)
        rekey_entries(bp, l);
    l->widest = pass.wide + pass.wide * EDGE_MARGIN;
    const uint64_t budget = (uint64_t)SORT_MOVES_PER_ENTRY * l->entry_count + SORT_MOVES_SLACK;
    if (new_height || !insertion_sort(l->entries, l->entry_count, budget))
        merge_sort(l->entries, g->scratch, l->entry_count);
    lay_out_boxes(bp, l);
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

/* Where the pair keys go: found[0..count) in the order found while they fit, then a bounded max-heap
 * of the pair_capacity smallest. A scan writes to found directly while there is room for every proxy,
 * else to candidates, offered one by one. */
typedef struct pair_sink {
    uint64_t *found, *spill;
    uint32_t count, capacity, room_needed;
    bool     heap;       /* found is a max-heap: more were found than it holds */
} pair_sink;

static inline uint64_t *sink_begin(const pair_sink *s)
{
    return !s->heap && s->capacity - s->count >= s->room_needed ? s->found + s->count : s->spill;
}

static void sink_end(pair_sink *s, const uint64_t *out, uint32_t written)
{
    if (out != s->spill) {
        s->count += written;
        return;
    }
    for (uint32_t i = 0; i < written; ++i) {
        if (!s->heap && s->count < s->capacity) {
            s->found[s->count++] = out[i];
            continue;
        }
        if (!s->heap)
            kcc_bp_heapify(s->found, s->count);
        s->heap = true;
        kcc_bp_heap_offer(s->found, &s->count, s->capacity, out[i]);
    }
}

/* One box's scan of a layer's runs: the box (broadcast four-wide) and its proxy. */
typedef struct row_probe {
#if KCC_SSE
    __m128 lo[3], hi[3];
#endif
    kcc_bp_box box;
    uint32_t proxy;
} row_probe;

static inline void probe_setup(row_probe *q, const kcc_bp_box *box, uint32_t proxy)
{
    q->box = *box;
    q->proxy = proxy;
#if KCC_SSE
    for (int k = 0; k < 3; ++k)
        q->lo[k] = _mm_set1_ps(box->lo[k]), q->hi[k] = _mm_set1_ps(box->hi[k]);
#endif
}

/* The run of entries from `at` in row `row` whose lo.x is at most the probe's hi.x (consecutive: the
 * layer is sorted by (row, lo.x)): the keys of those whose boxes overlap the probe's appended to
 * out. Four at a time without branches on the outcomes (they are unpredictable), until a lane
 * leaves the run. */
KCC_HOT uint32_t scan_run(const kcc_grid_layer *l, const row_probe *q, int32_t row, uint32_t at,
                          uint64_t *out, uint32_t found)
{
#if KCC_SSE
    const __m128i row4 = _mm_set1_epi32(row);
    for (;; at += 4) {
        const __m128 run = _mm_and_ps(
            _mm_castsi128_ps(_mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(const void *)(l->row + at)), row4)),
            _mm_cmple_ps(_mm_loadu_ps(l->lo[0] + at), q->hi[0]));
        __m128 in = _mm_and_ps(run, _mm_cmple_ps(q->lo[0], _mm_loadu_ps(l->hi[0] + at)));
        for (int k = 1; k < 3; ++k)
            in = _mm_and_ps(in, _mm_and_ps(_mm_cmple_ps(q->lo[k], _mm_loadu_ps(l->hi[k] + at)),
                                           _mm_cmple_ps(_mm_loadu_ps(l->lo[k] + at), q->hi[k])));
        for (uint32_t mask = (uint32_t)_mm_movemask_ps(in); mask != 0; mask &= mask - 1)
            out[found++] = kcc_bp_key(q->proxy, l->entries[at + (uint32_t)__builtin_ctz(mask)].proxy);
        if (_mm_movemask_ps(run) != 15)
            return found;
    }
#else
    const kcc_bp_box *b = &q->box;
    for (; l->row[at] == row && l->lo[0][at] <= b->hi[0]; ++at) {
        out[found] = kcc_bp_key(q->proxy, l->entries[at].proxy);
        found += (uint32_t)(b->lo[0] <= l->hi[0][at]) & (uint32_t)(b->lo[1] <= l->hi[1][at]) &
                 (uint32_t)(l->lo[1][at] <= b->hi[1]) & (uint32_t)(b->lo[2] <= l->hi[2][at]) &
                 (uint32_t)(l->lo[2][at] <= b->hi[2]);
    }
    return found;
#endif
}

/* Entry i's box as laid out. */
static inline kcc_bp_box entry_box(const kcc_grid_layer *l, uint32_t i)
{
    kcc_bp_box box;
    for (int k = 0; k < 3; ++k)
        box.lo[k] = l->lo[k][i], box.hi[k] = l->hi[k][i];
    return box;
}

/* Every two entered movers that overlap, each pair once: a mover meets those after it in its own
 * row while their lo.x <= its hi.x, and those in the next row from the first whose lo.x is at least
 * its lo.x less the widest box (a cursor that only moves forward: the movers come in key order) up to
 * its hi.x. A mover deeper than a row spans at most two, so nothing further can overlap it. A mover
 * whose two runs both start out of range is skipped. The layer is read from a local copy: stores to
 * the sink cannot change it. */
static void pairs_of_movers(const kcc_broadphase *bp, pair_sink *sink)
{
    const kcc_grid_layer l = bp->u.grid.movers;
    uint32_t cursor = 0;
    for (uint32_t i = 0; i < l.entry_count; ++i) {
        const int32_t row = l.row[i];
        const float hi_x = l.hi[0][i];
        const uint64_t from = entry_key(row + 1, l.lo[0][i] - l.widest);
        cursor += l.entries[cursor].key < from;   /* most movers move it by one or none */
        while (l.entries[cursor].key < from)
            ++cursor;
        const bool own = l.row[i + 1] == row && l.lo[0][i + 1] <= hi_x;
        const bool next = l.row[cursor] == row + 1 && l.lo[0][cursor] <= hi_x;
        if (!own && !next)
            continue;
        const kcc_bp_box box = entry_box(&l, i);
        row_probe q;
        probe_setup(&q, &box, l.entries[i].proxy);
        uint64_t *out = sink_begin(sink);
        sink_end(sink, out, scan_run(&l, &q, row + 1, cursor, out, scan_run(&l, &q, row, i + 1, out, 0)));
    }
}

/* The first entry of `row` whose key is at least `key` (a key of that row), searching from `at` (no
 * later than it): within the row's entries when the layer has its table of row starts, else among
 * every entry from at. */
static uint32_t row_lower_bound(const kcc_grid_layer *l, uint32_t at, int32_t row, uint64_t key)
{
    uint32_t end = l->entry_count;
    if (l->row_count > 0) {
        const int64_t index = (int64_t)row - l->first_row;
        if (index < 0 || index >= (int64_t)l->row_count)
            return index < 0 ? 0 : l->entry_count;
        at = l->row_start[index];
        end = l->row_start[index + 1];
    }
    uint32_t count = end - at;
    while (count > 0) {
        const uint32_t half = count / 2;
        if (l->entries[at + half].key < key) {
            at += half + 1;
            count -= half + 1;
        } else {
            count = half;
        }
    }
    return at;
}

/* The movers overlapping `box` (proxy `proxy`, not a mover): on each row from its low corner's less
 * one to its high corner's, a search for the first whose lo.x is at least box's lo.x less the
 * widest, then the run; over more than MAX_ROWS rows, every mover. */
static uint32_t scan_movers(const kcc_grid_layer *l, const kcc_bp_box *box, uint32_t proxy, uint64_t *out)
{
    row_probe q;
    probe_setup(&q, box, proxy);
    const int32_t first = row_of(box->lo[2], l->inv_row_height) - 1, last = row_of(box->hi[2], l->inv_row_height);
    uint32_t found = 0;
    if ((uint32_t)(last - first) >= MAX_ROWS) {
        for (uint32_t at = 0; at < l->entry_count; ++at) {
            out[found] = kcc_bp_key(proxy, l->entries[at].proxy);
            const kcc_bp_box other = entry_box(l, at);
            found += (uint32_t)kcc_bp_overlap(box, &other);
        }
        return found;
    }
    uint32_t at = 0;
    for (int32_t row = first; row <= last; ++row) {
        at = row_lower_bound(l, at, row, entry_key(row, box->lo[0] - l->widest));
        found = scan_run(l, &q, row, at, out, found);
    }
    return found;
}

/* Every entered STATIC proxy's pairs with entered movers. */
static void pairs_of_statics(const kcc_broadphase *bp, pair_sink *sink)
{
    const kcc_grid *g = &bp->u.grid;
    const kcc_grid_layer movers = g->movers;   /* a local copy: stores to the sink cannot change it */
    if (movers.entry_count == 0)
        return;
    for (uint32_t i = 0; i < g->statics.entry_count; ++i) {
        const kcc_bp_box box = entry_box(&g->statics, i);
        uint64_t *out = sink_begin(sink);
        sink_end(sink, out, scan_movers(&movers, &box, g->statics.entries[i].proxy, out));
    }
}

/* Whether another proxy pairs with oversized `proxy`: live, not both STATIC, not an oversized one
 * below it (whose own scan meets it), overlapping. SSE2: a box's six floats read as two groups of
 * four (the boxes array has a float to spare past its last box). */
static inline bool oversized_meets(const kcc_broadphase *bp, const kcc_bp_box *box, uint8_t static_mask,
                                   uint32_t proxy, uint32_t other)
{
    const uint8_t f = bp->flags[other];
    const kcc_bp_box *b = &bp->boxes[other];
#if KCC_SSE
    const __m128 touch = _mm_and_ps(_mm_cmple_ps(_mm_loadu_ps(box->lo), _mm_loadu_ps(b->hi)),
                                    _mm_cmple_ps(_mm_loadu_ps(b->lo), _mm_loadu_ps(box->hi)));   /* box: in bp->boxes */
    const bool overlap = (_mm_movemask_ps(touch) & 7) == 7;
#else
    const bool overlap = kcc_bp_overlap(box, b);
#endif
    return ((f & (KCC_BP_LIVE | static_mask)) == KCC_BP_LIVE) & (!(f & KCC_BP_OVERSIZED) | (other > proxy)) & overlap;
}

/* Each oversized proxy's pairs with every live proxy that may pair with it, in index order. */
static void pairs_of_oversized(const kcc_broadphase *bp, pair_sink *sink)
{
    const kcc_grid *g = &bp->u.grid;
    for (uint32_t i = 0; i < g->oversized_count; ++i) {
        const uint32_t proxy = g->oversized[i];
        const kcc_bp_box *box = &bp->boxes[proxy];
        const uint8_t static_mask = bp->flags[proxy] & KCC_PROXY_STATIC;
        uint64_t *out = sink_begin(sink);
        uint32_t found = 0;
        for (uint32_t other = 0; other < bp->proxy_end; ++other) {
            out[found] = kcc_bp_key(proxy, other);
            found += (uint32_t)oversized_meets(bp, box, static_mask, proxy, other);
        }
        sink_end(sink, out, found);
    }
}

/* Sorts a group of pairs with one a by b: insertion when short, else (unless sorted) the keys' sort. */
static void sort_group(kcc_proxy_pair *pairs, uint32_t count, uint64_t *keys)
{
    if (count <= GROUP_INSERTION_MAX) {
        for (uint32_t i = 1; i < count; ++i) {
            const uint32_t b = pairs[i].b;
            uint32_t j = i;
            for (; j > 0 && pairs[j - 1].b > b; --j)
                pairs[j].b = pairs[j - 1].b;
            pairs[j].b = b;
        }
        return;
    }
    uint32_t i = 1;
    while (i < count && pairs[i - 1].b < pairs[i].b)
        ++i;
    if (i == count)
        return;
    for (i = 0; i < count; ++i)
        keys[i] = pairs[i].b;
    kcc_bp_sort_keys(keys, count);
    for (i = 0; i < count; ++i)
        pairs[i].b = (uint32_t)keys[i];
}

/* The pair list from the keys found: a counting sort by a into the list, each a's group sorted by b;
 * after an overflow, the heap of the smallest sorted. */
static void write_pairs(kcc_broadphase *bp, const pair_sink *sink)
{
    kcc_grid *g = &bp->u.grid;
    bp->pair_overflow = sink->heap;
    if (sink->heap) {
        kcc_bp_heap_sort(sink->found, sink->count);
        kcc_bp_keys_to_pairs(bp, sink->found, sink->count);
        return;
    }
    uint32_t *next = g->group_end;
    memset(next, 0, ((size_t)bp->proxy_end + 1) * sizeof *next);
    for (uint32_t i = 0; i < sink->count; ++i)
        ++next[sink->found[i] >> 32];
    for (uint32_t a = 0, start = 0; a <= bp->proxy_end; ++a) {
        const uint32_t count = next[a];
        next[a] = start;
        start += count;
    }
    for (uint32_t i = 0; i < sink->count; ++i) {
        const uint32_t a = (uint32_t)(sink->found[i] >> 32), at = next[a]++;
        bp->pairs[at].a = a;
        bp->pairs[at].b = (uint32_t)sink->found[i];
    }
    for (uint32_t i = 0; i < sink->count;) {   /* next[a]: the end of a's group */
        const uint32_t end = next[bp->pairs[i].a];
        if (end - i > 1)
            sort_group(bp->pairs + i, end - i, g->candidates);
        i = end;
    }
    bp->pair_count = sink->count;
}

void kcc_grid_update(kcc_broadphase *bp)
{
    kcc_grid *g = &bp->u.grid;
    update_layer(bp, &g->movers, 0);
    if (g->statics_changed)
        update_layer(bp, &g->statics, KCC_PROXY_STATIC);
    g->statics_changed = false;
    for (uint32_t i = 0; i < g->changed_count; ++i)
        bp->flags[g->changed[i]] &= (uint8_t)~KCC_BP_CHANGED;
    g->changed_count = 0;
    g->oversized_count = 0;
    for (uint32_t proxy = 0; proxy < bp->proxy_end; ++proxy)
        if ((bp->flags[proxy] & (KCC_BP_LIVE | KCC_BP_OVERSIZED)) == (KCC_BP_LIVE | KCC_BP_OVERSIZED))
            g->oversized[g->oversized_count++] = proxy;
    pair_sink sink = {g->found, g->candidates, 0, bp->pair_capacity, bp->proxy_end, false};
    pairs_of_movers(bp, &sink);
    pairs_of_statics(bp, &sink);
    pairs_of_oversized(bp, &sink);
    write_pairs(bp, &sink);
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

/* The layer's entries [at, end) overlapping box whose proxies have not changed since the update,
 * offered to out; with `row` not INT32_MAX, only while they are in that row with lo.x <= box's hi.x. */
static uint32_t query_entries(const kcc_broadphase *bp, const kcc_grid_layer *l, const kcc_bp_box *box,
                              uint32_t at, uint32_t end, int32_t row, uint32_t *out, uint32_t capacity,
                              uint32_t found)
{
    const bool every = row == INT32_MAX;
    for (; at < end && (every || (l->row[at] == row && l->lo[0][at] <= box->hi[0])); ++at) {
        const uint32_t proxy = l->entries[at].proxy;
        const kcc_bp_box other = entry_box(l, at);
        if ((bp->flags[proxy] & (KCC_BP_LIVE | KCC_BP_CHANGED)) == KCC_BP_LIVE && kcc_bp_overlap(box, &other))
            offer_sorted(out, found++, capacity, proxy);
    }
    return found;
}

/* The layer's entries overlapping box, unchanged since the update: the runs of the rows from box's
 * low corner's less one to its high corner's (each from a binary search), or over more than
 * MAX_ROWS rows every entry. */
static uint32_t query_layer(const kcc_broadphase *bp, const kcc_grid_layer *l, const kcc_bp_box *box,
                            uint32_t *out, uint32_t capacity, uint32_t found)
{
    const int32_t first = row_of(box->lo[2], l->inv_row_height) - 1, last = row_of(box->hi[2], l->inv_row_height);
    if ((uint32_t)(last - first) >= MAX_ROWS)
        return query_entries(bp, l, box, 0, l->entry_count, INT32_MAX, out, capacity, found);
    uint32_t at = 0;
    for (int32_t row = first; row <= last; ++row) {
        at = row_lower_bound(l, at, row, entry_key(row, box->lo[0] - l->widest));
        found = query_entries(bp, l, box, at, l->entry_count, row, out, capacity, found);
    }
    return found;
}

uint32_t kcc_grid_query(const kcc_broadphase *bp, const kcc_bp_box *box, uint32_t *out,
                        uint32_t capacity)
{
    const kcc_grid *g = &bp->u.grid;
    uint32_t found = query_layer(bp, &g->movers, box, out, capacity, 0);
    found = query_layer(bp, &g->statics, box, out, capacity, found);
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
