/* grid.c: the grid broadphase, sweep and prune in rows over fat boxes. Each proxy has a fat box
 * (a mover's box grown by FAT_MARGIN, a STATIC proxy's box itself), and the grid keeps the pairs of
 * overlapping fat boxes sorted by (a, b); an update tests them with the boxes for the exact pairs.
 * A move inside the fat box only stores the box. A proxy whose box leaves its fat box (or that is
 * added or removed) is noted as changed, and at the update gets a new fat box and finds its fat
 * pairs again (its old ones dropped, the new merged in), until so many changed that a full pass is
 * cheaper. A full pass keeps two layers, the movers (proxies not STATIC) and the STATIC proxies
 * (only when one of them changed), each sorted by (the row of the fat box's low corner on z, lo.x),
 * the rows as tall as its deepest fat box (so an entered box spans at most two rows), re-sorted in
 * place from the last pass's order (the entries in the same row by insertion, those that crossed
 * rows sorted apart and merged in), y not gridded. A mover finds its fat pairs in two runs of the
 * sorted movers, four at a time: its own row after it while their lo.x <= its hi.x, and the next row
 * from a cursor that only moves forward. Each STATIC proxy finds its movers in the rows it spans (a
 * table of row starts, then a binary search in the row); a proxy wider or deeper than cell_size is
 * oversized, tested against every proxy. The fat pairs, found in spatial order, are counting-sorted
 * to (a, b) order. Queries read the layers and test the changed proxies on their own. Owns
 * kcc_grid's arrays; never allocates. */
#include <math.h>
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
/* m a mover's fat box adds to its box on every side: a character walking 0.05 m a step leaves it
 * after about 6 steps (test/bench/bench_broadphase.c measures the choice; docs/world.md). */
#define FAT_MARGIN 0.3f
/* After the fat pairs overflow their room, this many full passes go without a margin. */
#define MARGIN_OFF_PASSES 8u

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
    kcc_grid *g = &bp->grid;
    size_t cap = bp->proxy_capacity;
    layout_layer(&g->movers, layout, cap);
    layout_layer(&g->statics, layout, cap);
    g->scratch = kcc_bp_take(layout, cap, sizeof *g->scratch);
    g->oversized = kcc_bp_take(layout, cap, sizeof *g->oversized);
    g->changed = kcc_bp_take(layout, cap, sizeof *g->changed);
    g->candidates = kcc_bp_take(layout, cap, sizeof *g->candidates);
    g->group_end = kcc_bp_take(layout, cap + 1, sizeof *g->group_end);
    g->fat = kcc_bp_take(layout, cap + 1, sizeof *g->fat);
    g->fat_capacity = 2u * bp->pair_capacity;
    g->found = kcc_bp_take(layout, g->fat_capacity, sizeof *g->found);
    g->fat_pairs = kcc_bp_take(layout, g->fat_capacity, sizeof *g->fat_pairs);
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
    kcc_grid *g = &bp->grid;
    g->cell_size = cell_size;
    g->margin = FAT_MARGIN;
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
    kcc_bp_box *fat;
    uint8_t *flags;
    kcc_grid_entry *entries, *crossers;
    float    size, margin, inv_row_height;
    uint8_t  in_flag;
    uint32_t kept, crossed;
    float    wide, deep;
    bool     rekey;
} layer_pass;

/* The box grown by margin on every side (rounding only grows it: the fat box holds the box). */
static inline void grow_box(const kcc_bp_box *box, float margin, kcc_bp_box *fat)
{
    for (int k = 0; k < 3; ++k)
        fat->lo[k] = box->lo[k] - margin, fat->hi[k] = box->hi[k] + margin;
}

/* Keeps proxy p (live, of the layer's kind; in row old_row at the last full pass, INT32_MAX when
 * new) when its box fits, its fat box made and keyed, noting the fat box's extents: as the next
 * entry when its row is the same, else as the next crosser; else flags it oversized. Its flags are
 * written only when they change. */
static inline void keep_entry(layer_pass *pass, uint32_t p, int32_t old_row)
{
    const kcc_bp_box *box = &pass->boxes[p];
    const uint8_t f = pass->flags[p];
    if (!(box->hi[0] - box->lo[0] <= pass->size && box->hi[2] - box->lo[2] <= pass->size)) {
        pass->flags[p] = (uint8_t)((f & ~pass->in_flag) | KCC_BP_OVERSIZED);
        return;
    }
    kcc_bp_box *fat = &pass->fat[p];
    grow_box(box, pass->margin, fat);
    const float wide = fat->hi[0] - fat->lo[0], deep = fat->hi[2] - fat->lo[2];
    pass->wide = wide > pass->wide ? wide : pass->wide;
    pass->deep = deep > pass->deep ? deep : pass->deep;
    const int32_t row = row_of(fat->lo[2], pass->inv_row_height);
    pass->rekey |= row_of(fat->hi[2], pass->inv_row_height) - row > 1;
    kcc_grid_entry *e = row == old_row ? &pass->entries[pass->kept++] : &pass->crossers[pass->crossed++];
    e->key = entry_key(row, fat->lo[0]);
    e->proxy = p;
    if ((f & (KCC_BP_OVERSIZED | pass->in_flag)) != pass->in_flag)
        pass->flags[p] = (uint8_t)((f & ~KCC_BP_OVERSIZED) | pass->in_flag);
}

/* The layer's entries afresh, each given its fat box (grown by margin) and keyed with the layer's
 * row height: its entries still live, of its kind and fitting, those in the same row as at the
 * last full pass left in that pass's order in entries, those that crossed into another row set
 * apart in the grid's scratch with the changed proxies of its kind not yet in it. Those leaving it
 * lose its flag. */
static void collect_entries(kcc_broadphase *bp, kcc_grid_layer *l, uint8_t want, float margin, layer_pass *pass)
{
    const kcc_grid *g = &bp->grid;
    const uint8_t kind = KCC_BP_LIVE | KCC_PROXY_STATIC;
    layer_pass p = {bp->boxes, g->fat, bp->flags, l->entries, g->scratch, g->cell_size, margin, l->inv_row_height,
                    l->in_flag, 0, 0, 0.0f, 0.0f, false};
    const int32_t *old_row = l->row;
    for (uint32_t i = 0, count = l->entry_count; i < count; ++i) {
        const uint32_t proxy = p.entries[i].proxy;
        if ((p.flags[proxy] & kind) == (KCC_BP_LIVE | want))
            keep_entry(&p, proxy, old_row[i]);
        else
            p.flags[proxy] &= (uint8_t)~p.in_flag;
    }
    for (uint32_t i = 0; i < g->changed_count; ++i) {
        const uint32_t proxy = g->changed[i];
        if ((p.flags[proxy] & (kind | p.in_flag)) == (KCC_BP_LIVE | want))
            keep_entry(&p, proxy, INT32_MAX);
    }
    *pass = p;
}

/* Keys every entry's fat box again with the layer's row height; those spanning more than two rows
 * leave it, oversized. */
static void rekey_entries(kcc_broadphase *bp, kcc_grid_layer *l)
{
    uint32_t kept = 0;
    for (uint32_t i = 0; i < l->entry_count; ++i) {
        const uint32_t p = l->entries[i].proxy;
        l->entries[kept].proxy = p;
        if (key_entry(l, &bp->grid.fat[p], &l->entries[kept]))
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

/* Merges the ascending entries add[0..added) into the ascending e[0..kept) in place, from the back
 * (e has room for both). */
static void merge_entries(kcc_grid_entry *e, uint32_t kept, const kcc_grid_entry *add, uint32_t added)
{
    uint32_t i = kept, j = added, at = kept + added;
    while (j > 0)
        e[--at] = i > 0 && e[i - 1].key > add[j - 1].key ? e[--i] : add[--j];
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

/* The entries' fat boxes and rows laid out by entry. */
static void lay_out_boxes(const kcc_broadphase *bp, kcc_grid_layer *l)
{
    const kcc_bp_box *boxes = bp->grid.fat;
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

/* A layer brought up to date: its entries collected in the last order with fat boxes grown by
 * margin, keyed again with a new row height when the fat boxes outgrew it or shrank below half,
 * sorted (by insertion from the last order unless that moves too much), laid out. */
static void update_layer(kcc_broadphase *bp, kcc_grid_layer *l, uint8_t want, float margin)
{
    kcc_grid *g = &bp->grid;
    layer_pass pass;
    collect_entries(bp, l, want, margin, &pass);
    kcc_grid_entry *e = l->entries;
    const uint32_t stayed = pass.kept, crossed = pass.crossed;
    l->entry_count = stayed + crossed;
    l->widest = pass.wide + pass.wide * EDGE_MARGIN;
    const bool new_height = fit_row_height(l, pass.deep, g->cell_size);
    if (new_height || pass.rekey) {
        memcpy(e + stayed, g->scratch, (size_t)crossed * sizeof *e);
        rekey_entries(bp, l);
        merge_sort(e, g->scratch, l->entry_count);
    } else {
        const uint64_t budget = (uint64_t)SORT_MOVES_PER_ENTRY * stayed + SORT_MOVES_SLACK;
        if (!insertion_sort(e, stayed, budget))
            merge_sort(e, g->scratch + crossed, stayed);
        merge_sort(g->scratch, e + stayed, crossed);
        merge_entries(e, stayed, g->scratch, crossed);
    }
    lay_out_boxes(bp, l);
}

/* ---- proxies ---- */

/* Notes a proxy added, removed or moved out of its fat box: its fat pairs are found again at the
 * next update, and queries test it on its own until the next full pass. */
static void note_changed(kcc_broadphase *bp, uint32_t proxy)
{
    kcc_grid *g = &bp->grid;
    g->statics_changed |= (bp->flags[proxy] & KCC_PROXY_STATIC) != 0;
    const uint8_t f = bp->flags[proxy];
    bp->flags[proxy] = (uint8_t)(f | KCC_BP_CHANGED | KCC_BP_REFAT);
    if (!(f & KCC_BP_CHANGED))
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

/* A box still inside its fat box changes no fat pair: only the exact test at the update sees it. A
 * STATIC proxy's fat box is its box: any other box changes it. */
void kcc_grid_move(kcc_broadphase *bp, uint32_t proxy)
{
    const kcc_bp_box *box = &bp->boxes[proxy], *fat = &bp->grid.fat[proxy];
    const bool keeps = (bp->flags[proxy] & KCC_PROXY_STATIC)
        ? fat->lo[0] == box->lo[0] && fat->lo[1] == box->lo[1] && fat->lo[2] == box->lo[2] &&
          box->hi[0] == fat->hi[0] && box->hi[1] == fat->hi[1] && box->hi[2] == fat->hi[2]
        : fat->lo[0] <= box->lo[0] && fat->lo[1] <= box->lo[1] && fat->lo[2] <= box->lo[2] &&
          box->hi[0] <= fat->hi[0] && box->hi[1] <= fat->hi[1] && box->hi[2] <= fat->hi[2];
    if (!keeps)
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
    const kcc_grid_layer l = bp->grid.movers;
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
static uint32_t scan_layer(const kcc_grid_layer *l, const kcc_bp_box *box, uint32_t proxy, uint64_t *out)
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
    const kcc_grid *g = &bp->grid;
    const kcc_grid_layer movers = g->movers;   /* a local copy: stores to the sink cannot change it */
    if (movers.entry_count == 0)
        return;
    for (uint32_t i = 0; i < g->statics.entry_count; ++i) {
        const kcc_bp_box box = entry_box(&g->statics, i);
        uint64_t *out = sink_begin(sink);
        sink_end(sink, out, scan_layer(&movers, &box, g->statics.entries[i].proxy, out));
    }
}

/* Boxes a and b overlap, touching counts. SSE2: a box's six floats read as two groups of four (the
 * boxes must lie in an array with a float to spare past its last box: bp->boxes, the grid's fat). */
static inline bool boxes_meet(const kcc_bp_box *a, const kcc_bp_box *b)
{
#if KCC_SSE
    const __m128 touch = _mm_and_ps(_mm_cmple_ps(_mm_loadu_ps(a->lo), _mm_loadu_ps(b->hi)),
                                    _mm_cmple_ps(_mm_loadu_ps(b->lo), _mm_loadu_ps(a->hi)));
    return (_mm_movemask_ps(touch) & 7) == 7;
#else
    return kcc_bp_overlap(a, b);
#endif
}

/* Whether another proxy's fat box pairs with oversized `proxy`'s (`box`): live, not both STATIC,
 * not an oversized one below it (whose own scan meets it), overlapping. */
static inline bool oversized_meets(const kcc_broadphase *bp, const kcc_bp_box *box, uint8_t static_mask,
                                   uint32_t proxy, uint32_t other)
{
    const uint8_t f = bp->flags[other];
    return ((f & (KCC_BP_LIVE | static_mask)) == KCC_BP_LIVE) & (!(f & KCC_BP_OVERSIZED) | (other > proxy)) &
           boxes_meet(box, &bp->grid.fat[other]);
}

/* Each oversized proxy's fat pairs with every live proxy that may pair with it, in index order. */
static void pairs_of_oversized(const kcc_broadphase *bp, pair_sink *sink)
{
    const kcc_grid *g = &bp->grid;
    for (uint32_t i = 0; i < g->oversized_count; ++i) {
        const uint32_t proxy = g->oversized[i];
        const kcc_bp_box *box = &g->fat[proxy];
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

/* Sorts a group of keys with one a (so by b): insertion when short, else (unless sorted) the keys'
 * sort. */
static void sort_group(uint64_t *keys, uint32_t count)
{
    if (count <= GROUP_INSERTION_MAX) {
        for (uint32_t i = 1; i < count; ++i) {
            const uint64_t key = keys[i];
            uint32_t j = i;
            for (; j > 0 && keys[j - 1] > key; --j)
                keys[j] = keys[j - 1];
            keys[j] = key;
        }
        return;
    }
    uint32_t i = 1;
    while (i < count && keys[i - 1] < keys[i])
        ++i;
    if (i < count)
        kcc_bp_sort_keys(keys, count);
}

/* The fat pair list from the keys found: a counting sort by a into the list, each a's group sorted
 * by b; after an overflow, the heap of the smallest sorted, and the list marked incomplete. */
static void write_fat_pairs(kcc_broadphase *bp, const pair_sink *sink)
{
    kcc_grid *g = &bp->grid;
    g->fat_complete = !sink->heap;
    g->fat_count = sink->count;
    if (sink->heap) {
        kcc_bp_heap_sort(sink->found, sink->count);
        memcpy(g->fat_pairs, sink->found, (size_t)sink->count * sizeof *g->fat_pairs);
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
    for (uint32_t i = 0; i < sink->count; ++i)
        g->fat_pairs[next[sink->found[i] >> 32]++] = sink->found[i];
    for (uint32_t i = 0; i < sink->count;) {   /* next[a]: the end of a's group */
        const uint32_t end = next[g->fat_pairs[i] >> 32];
        if (end - i > 1)
            sort_group(g->fat_pairs + i, end - i);
        i = end;
    }
}

/* A proxy's fat box made anew: its box grown by the last full pass's margin, a STATIC proxy's box
 * itself. */
static inline void make_fat_box(kcc_broadphase *bp, uint32_t proxy)
{
    grow_box(&bp->boxes[proxy], bp->flags[proxy] & KCC_PROXY_STATIC ? 0.0f : bp->grid.margin, &bp->grid.fat[proxy]);
}

/* The fat pairs of every entered and oversized proxy afresh (the layers just updated), the
 * oversized proxies' fat boxes grown by the pass's margin first. */
static void find_fat_pairs(kcc_broadphase *bp)
{
    kcc_grid *g = &bp->grid;
    g->oversized_count = 0;
    for (uint32_t proxy = 0; proxy < bp->proxy_end; ++proxy)
        if ((bp->flags[proxy] & (KCC_BP_LIVE | KCC_BP_OVERSIZED)) == (KCC_BP_LIVE | KCC_BP_OVERSIZED)) {
            g->oversized[g->oversized_count++] = proxy;
            make_fat_box(bp, proxy);
        }
    pair_sink sink = {g->found, g->candidates, 0, g->fat_capacity, bp->proxy_end, false};
    pairs_of_movers(bp, &sink);
    pairs_of_statics(bp, &sink);
    pairs_of_oversized(bp, &sink);
    write_fat_pairs(bp, &sink);
}

/* Every layer and fat pair afresh, the movers' fat boxes grown by FAT_MARGIN; when their pairs
 * overflow the fat list, again without a margin (the fat boxes then are the boxes, the fat pairs the
 * exact ones), and so for the next MARGIN_OFF_PASSES full passes. */
static void full_pass(kcc_broadphase *bp)
{
    kcc_grid *g = &bp->grid;
    g->margin = g->margin_off > 0 ? 0.0f : FAT_MARGIN;
    g->margin_off -= g->margin_off > 0;
    update_layer(bp, &g->movers, 0, g->margin);
    if (g->statics_changed)
        update_layer(bp, &g->statics, KCC_PROXY_STATIC, 0.0f);
    g->statics_changed = false;
    for (uint32_t i = 0; i < g->changed_count; ++i)
        bp->flags[g->changed[i]] &= (uint8_t)~(KCC_BP_CHANGED | KCC_BP_REFAT);
    g->changed_count = 0;
    find_fat_pairs(bp);
    if (!g->fat_complete && g->margin > 0.0f) {
        g->margin = 0.0f;
        g->margin_off = MARGIN_OFF_PASSES;
        update_layer(bp, &g->movers, 0, 0.0f);
        find_fat_pairs(bp);
    }
}

/* ---- between full passes ---- */

/* Drops from out[from..count) the keys whose other proxy (not `proxy`) changed since the full pass:
 * their layer entries are stale. Returns the count left. */
static uint32_t drop_changed(const kcc_broadphase *bp, uint32_t proxy, uint64_t *out, uint32_t from, uint32_t count)
{
    uint32_t kept = from;
    for (uint32_t i = from; i < count; ++i) {
        const uint32_t a = (uint32_t)(out[i] >> 32), b = (uint32_t)out[i], other = a == proxy ? b : a;
        out[kept] = out[i];
        kept += !(bp->flags[other] & KCC_BP_CHANGED);
    }
    return kept;
}

/* Proxy r's fat pairs (its fat box just made, r live and changed): with the layers' entries not
 * changed since the full pass, the oversized proxies not changed, and the changed proxies (one of
 * two that both find their pairs again taking the pair: the lower). */
static uint32_t fat_pairs_of(const kcc_broadphase *bp, uint32_t r, uint64_t *out)
{
    const kcc_grid *g = &bp->grid;
    const kcc_bp_box *box = &g->fat[r];
    const uint8_t static_mask = bp->flags[r] & KCC_PROXY_STATIC;
    uint32_t found = 0;
    if (g->movers.entry_count > 0)
        found = drop_changed(bp, r, out, 0, scan_layer(&g->movers, box, r, out));
    if (!static_mask && g->statics.entry_count > 0)
        found = drop_changed(bp, r, out, found, found + scan_layer(&g->statics, box, r, out + found));
    for (uint32_t i = 0; i < g->oversized_count; ++i) {
        const uint32_t other = g->oversized[i];
        const uint8_t f = bp->flags[other];
        out[found] = kcc_bp_key(r, other);
        found += ((f & (KCC_BP_LIVE | KCC_BP_CHANGED | static_mask)) == KCC_BP_LIVE) & boxes_meet(box, &g->fat[other]);
    }
    for (uint32_t i = 0; i < g->changed_count; ++i) {
        const uint32_t other = g->changed[i];
        const uint8_t f = bp->flags[other];
        out[found] = kcc_bp_key(r, other);
        found += ((f & (KCC_BP_LIVE | static_mask)) == KCC_BP_LIVE) & (other != r) &
                 (!(f & KCC_BP_REFAT) | (other > r)) & boxes_meet(box, &g->fat[other]);
    }
    return found;
}

/* Merges the ascending keys add[0..added) into the ascending list[0..kept) in place, from the back
 * (list has room for both). */
static void merge_keys(uint64_t *list, uint32_t kept, const uint64_t *add, uint32_t added)
{
    uint32_t i = kept, j = added, at = kept + added;
    while (j > 0)
        list[--at] = i > 0 && list[i - 1] > add[j - 1] ? list[--i] : add[--j];
}

/* The fat pair list brought up to date for the proxies marked REFAT alone: each live one's fat box
 * made anew and its fat pairs found, the list's pairs of every marked proxy dropped and the new
 * ones merged in. Returns false when the pairs would not fit (the list is then no longer whole: a
 * full pass must follow). */
static bool update_changed(kcc_broadphase *bp)
{
    kcc_grid *g = &bp->grid;
    uint32_t refat = 0;
    for (uint32_t i = 0; i < g->changed_count; ++i) {
        const uint32_t p = g->changed[i];
        if ((bp->flags[p] & (KCC_BP_LIVE | KCC_BP_REFAT)) == (KCC_BP_LIVE | KCC_BP_REFAT))
            make_fat_box(bp, p);
        refat += (bp->flags[p] & KCC_BP_REFAT) != 0;
    }
    if (refat == 0)
        return true;
    pair_sink sink = {g->found, g->candidates, 0, g->fat_capacity, bp->proxy_end, false};
    for (uint32_t i = 0; i < g->changed_count; ++i) {
        const uint32_t p = g->changed[i];
        if ((bp->flags[p] & (KCC_BP_LIVE | KCC_BP_REFAT)) != (KCC_BP_LIVE | KCC_BP_REFAT))
            continue;
        uint64_t *out = sink_begin(&sink);
        sink_end(&sink, out, fat_pairs_of(bp, p, out));
    }
    uint32_t kept = 0;
    for (uint32_t i = 0; i < g->fat_count; ++i) {
        const uint64_t key = g->fat_pairs[i];
        g->fat_pairs[kept] = key;
        kept += !((bp->flags[key >> 32] | bp->flags[(uint32_t)key]) & KCC_BP_REFAT);
    }
    if (sink.heap || sink.count > g->fat_capacity - kept)
        return false;
    kcc_bp_sort_keys(g->found, sink.count);
    merge_keys(g->fat_pairs, kept, g->found, sink.count);
    g->fat_count = kept + sink.count;
    for (uint32_t i = 0; i < g->changed_count; ++i)
        bp->flags[g->changed[i]] &= (uint8_t)~KCC_BP_REFAT;
    return true;
}

/* ---- the exact pairs ---- */

/* The pair list: the fat pairs whose boxes overlap, the first pair_capacity of them; it overflowed
 * when another one overlaps, or when the fat list is not whole (it then holds the fat_capacity
 * smallest exact pairs, found without a margin). */
static void write_exact_pairs(kcc_broadphase *bp)
{
    const kcc_grid *g = &bp->grid;
    const kcc_bp_box *boxes = bp->boxes;
    const uint64_t *keys = g->fat_pairs;
    kcc_proxy_pair *pairs = bp->pairs;
    const uint32_t count = g->fat_count, capacity = bp->pair_capacity;
    uint32_t written = 0, i = 0;
    while (i < count && written < capacity) {   /* in stretches that cannot fill the list */
        const uint32_t room = capacity - written, end = count - i < room ? count : i + room;
        for (; i < end; ++i) {
            const uint32_t a = (uint32_t)(keys[i] >> 32), b = (uint32_t)keys[i];
            pairs[written].a = a;
            pairs[written].b = b;
            written += boxes_meet(&boxes[a], &boxes[b]);
        }
    }
    bool overflow = !g->fat_complete;
    for (; i < count && !overflow; ++i)
        overflow = boxes_meet(&boxes[keys[i] >> 32], &boxes[(uint32_t)keys[i]]);
    bp->pair_count = written;
    bp->pair_overflow = overflow;
}

/* A full pass when the fat list is not whole or too many proxies changed since the last one (their
 * own tests grow with the product of the two counts), else the changed proxies' pairs alone; then
 * the exact pairs. */
void kcc_grid_update(kcc_broadphase *bp)
{
    kcc_grid *g = &bp->grid;
    const uint32_t most_changed = 16u + 4u * (uint32_t)sqrtf((float)bp->proxy_count);
    if (!g->fat_complete || g->changed_count > most_changed || !update_changed(bp))
        full_pass(bp);
    write_exact_pairs(bp);
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

/* The layer's entries [at, end) whose proxies have not changed since the full pass and whose boxes
 * overlap box, offered to out; with `row` not INT32_MAX, only while they are in that row with their
 * fat box's lo.x <= box's hi.x. */
static uint32_t query_entries(const kcc_broadphase *bp, const kcc_grid_layer *l, const kcc_bp_box *box,
                              uint32_t at, uint32_t end, int32_t row, uint32_t *out, uint32_t capacity,
                              uint32_t found)
{
    const bool every = row == INT32_MAX;
    for (; at < end && (every || (l->row[at] == row && l->lo[0][at] <= box->hi[0])); ++at) {
        const uint32_t proxy = l->entries[at].proxy;
        if ((bp->flags[proxy] & (KCC_BP_LIVE | KCC_BP_CHANGED)) == KCC_BP_LIVE &&
            kcc_bp_overlap(box, &bp->boxes[proxy]))
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
    const kcc_grid *g = &bp->grid;
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
