/* sap.c: incremental sweep and prune (Baraff's sorted interval endpoints, as Bullet's btAxisSweep3):
 * each axis's endpoints kept sorted by insertion sort at every update, pairs added to a fixed
 * open-addressing table when a min endpoint passes below a max one and the boxes overlap, removed
 * when a max passes below a min; the list emitted sorted by merging the changes into the last one.
 * Owns kcc_sap's arrays; never allocates. */
#include <math.h>
#include <string.h>

#include "kcc_broadphase_internal.h"

#define TABLE_EMPTY UINT64_MAX
/* Adds between two updates beyond which the update sorts from scratch (merge sort) and sweeps:
 * each endpoint appended at an axis's end costs the insertion sort a walk through the whole axis,
 * while a sweep from scratch costs about log2(endpoints) walks. */
#define SWEEP_AFTER_ADDS 64u

static uint32_t table_slots(uint32_t pair_capacity)
{
    uint32_t slots = 2;
    while (slots < 2 * pair_capacity)
        slots <<= 1;
    return slots;
}

void kcc_sap_layout(kcc_broadphase *bp, kcc_bp_layout *layout)
{
    kcc_sap *sap = &bp->u.sap;
    size_t endpoints = 2 * (size_t)bp->proxy_capacity;
    for (int k = 0; k < 3; ++k)
        sap->axis[k] = kcc_bp_take(layout, endpoints, sizeof(kcc_sap_endpoint));
    sap->scratch = kcc_bp_take(layout, endpoints, sizeof(kcc_sap_endpoint));
    uint32_t slots = table_slots(bp->pair_capacity);
    sap->table = kcc_bp_take(layout, slots, sizeof(uint64_t));
    sap->table_mask = slots - 1;
    sap->changed = kcc_bp_take(layout, bp->pair_capacity, sizeof(uint64_t));
    sap->active = kcc_bp_take(layout, bp->proxy_capacity, sizeof(uint32_t));
    sap->active_slot = kcc_bp_take(layout, bp->proxy_capacity, sizeof(uint32_t));
    sap->spare_pairs = kcc_bp_take(layout, bp->pair_capacity, sizeof(kcc_proxy_pair));
    sap->last_boxes = kcc_bp_take(layout, bp->proxy_capacity, sizeof(kcc_bp_box));
}

void kcc_sap_init(kcc_broadphase *bp)
{
    kcc_sap *sap = &bp->u.sap;
    memset(sap->table, 0xff, ((size_t)sap->table_mask + 1) * sizeof(uint64_t));
}

/* ---- the pair table (linear probing; deletion shifts the probe run back, no tombstones) ---- */

static uint32_t home_slot(uint64_t key, uint32_t mask)
{
    return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

/* The slot holding key, or the empty slot where it would go. */
static uint32_t table_slot(const kcc_sap *sap, uint64_t key)
{
    uint32_t slot = home_slot(key, sap->table_mask);
    while (sap->table[slot] != key && sap->table[slot] != TABLE_EMPTY)
        slot = (slot + 1) & sap->table_mask;
    return slot;
}

static bool table_contains(const kcc_sap *sap, uint64_t key)
{
    return sap->table[table_slot(sap, key)] == key;
}

static bool table_delete(kcc_sap *sap, uint64_t key)
{
    uint32_t hole = table_slot(sap, key), mask = sap->table_mask;
    if (sap->table[hole] != key)
        return false;
    for (uint32_t slot = (hole + 1) & mask; sap->table[slot] != TABLE_EMPTY; slot = (slot + 1) & mask) {
        /* the key at slot stays unless its home lies cyclically outside (hole, slot] */
        uint32_t home = home_slot(sap->table[slot], mask);
        bool stays = hole < slot ? (home > hole && home <= slot) : (home > hole || home <= slot);
        if (!stays) {
            sap->table[hole] = sap->table[slot];
            hole = slot;
        }
    }
    sap->table[hole] = TABLE_EMPTY;
    --sap->table_count;
    return true;
}

static void note_change(kcc_broadphase *bp, uint64_t key)
{
    kcc_sap *sap = &bp->u.sap;
    if (sap->changed_count < bp->pair_capacity)
        sap->changed[sap->changed_count++] = key;
    else
        sap->changed_overflow = true;
}

/* ---- events: what a swap of two endpoints means ---- */

/* The min of a passed below the max of b: they may have started to overlap. Tested on every axis
 * with the current boxes, so the table ends the update holding exactly the overlapping pairs
 * whatever order the swaps come in (test_broadphase.c:
 * sap_pairs_and_queries_equal_brute_force_along_a_random_walk). */
static void pair_begin(kcc_broadphase *bp, uint32_t a, uint32_t b)
{
    kcc_sap *sap = &bp->u.sap;
    if (sap->rebuild || !kcc_bp_may_pair(bp, a, b) || !kcc_bp_overlap(&bp->boxes[a], &bp->boxes[b]))
        return;
    uint64_t key = kcc_bp_key(a, b);
    uint32_t slot = table_slot(sap, key);
    if (sap->table[slot] == key)
        return;
    if (sap->table_count == bp->pair_capacity) {
        sap->rebuild = true;   /* overflow: the update ends with a sweep that keeps the smallest */
        return;
    }
    sap->table[slot] = key;
    ++sap->table_count;
    note_change(bp, key);
}

/* The max of a passed below the min of b: they no longer overlap on this axis. The table is only
 * looked at when their boxes as of the last update overlapped: otherwise the pair was not in it then,
 * and was not added since (that needs the current boxes to overlap, and on this axis they do not). */
static void pair_end(kcc_broadphase *bp, uint32_t a, uint32_t b)
{
    kcc_sap *sap = &bp->u.sap;
    if (sap->rebuild || !kcc_bp_may_pair(bp, a, b) ||
        !kcc_bp_overlap(&sap->last_boxes[a], &sap->last_boxes[b]))
        return;
    uint64_t key = kcc_bp_key(a, b);
    if (table_delete(sap, key))
        note_change(bp, key);
}

static inline bool endpoint_before(kcc_sap_endpoint x, kcc_sap_endpoint y)
{
    return x.value < y.value || (x.value == y.value && (x.tag & 1) < (y.tag & 1));
}

static inline float endpoint_value(const kcc_bp_box *boxes, uint32_t tag, int axis)
{
    const kcc_bp_box *box = &boxes[tag >> 1];
    return (tag & 1) ? box->hi[axis] : box->lo[axis];
}

/* Refreshes each endpoint's value from its box and insertion-sorts the axis, turning every swap of a
 * min and a max endpoint into a pair event. Each out-of-order couple of endpoints swaps exactly once. */
static void sort_axis_with_events(kcc_broadphase *bp, int axis)
{
    kcc_sap_endpoint *ep = bp->u.sap.axis[axis];
    const kcc_bp_box *boxes = bp->boxes;
    uint32_t count = bp->u.sap.endpoint_count;
    for (uint32_t i = 0; i < count; ++i) {
        kcc_sap_endpoint moving = ep[i];
        moving.value = endpoint_value(boxes, moving.tag, axis);
        uint32_t j = i;
        for (; j > 0 && endpoint_before(moving, ep[j - 1]); --j) {
            uint32_t passed = ep[j - 1].tag;
            if ((passed & 1) != (moving.tag & 1)) {
                if (moving.tag & 1)
                    pair_end(bp, moving.tag >> 1, passed >> 1);
                else
                    pair_begin(bp, moving.tag >> 1, passed >> 1);
            }
            ep[j] = ep[j - 1];
        }
        ep[j] = moving;
    }
}

/* ---- the sweep from scratch ---- */

/* Stable bottom-up merge sort of one axis (values refreshed first), through the scratch array. */
static void sort_axis_from_scratch(kcc_broadphase *bp, int axis)
{
    kcc_sap *sap = &bp->u.sap;
    uint32_t count = sap->endpoint_count;
    kcc_sap_endpoint *src = sap->axis[axis], *dst = sap->scratch;
    for (uint32_t i = 0; i < count; ++i)
        src[i].value = endpoint_value(bp->boxes, src[i].tag, axis);
    for (uint32_t width = 1; width < count; width *= 2) {
        for (uint32_t lo = 0; lo < count; lo += 2 * width) {
            uint32_t mid = lo + width < count ? lo + width : count;
            uint32_t hi = mid + width < count ? mid + width : count;
            uint32_t i = lo, j = mid, w = lo;
            while (i < mid && j < hi)
                dst[w++] = endpoint_before(src[j], src[i]) ? src[j++] : src[i++];
            while (i < mid)
                dst[w++] = src[i++];
            while (j < hi)
                dst[w++] = src[j++];
        }
        kcc_sap_endpoint *swap = src;
        src = dst;
        dst = swap;
    }
    if (src != sap->axis[axis])
        memcpy(sap->axis[axis], src, count * sizeof *src);
}

/* Sweeps axis 0 (sorted) keeping the open intervals: each min endpoint meets every open interval.
 * The pairs go to the bounded heap in sap->changed, which keeps the pair_capacity smallest; returns
 * false when some did not fit. */
static bool sweep_pairs(kcc_broadphase *bp, uint32_t *heap_count)
{
    kcc_sap *sap = &bp->u.sap;
    const kcc_sap_endpoint *ep = sap->axis[0];
    uint32_t open = 0;
    bool complete = true;
    *heap_count = 0;
    for (uint32_t i = 0; i < sap->endpoint_count; ++i) {
        uint32_t proxy = ep[i].tag >> 1;
        if (ep[i].tag & 1) {
            uint32_t slot = sap->active_slot[proxy], last = sap->active[--open];
            sap->active[slot] = last;
            sap->active_slot[last] = slot;
            continue;
        }
        for (uint32_t j = 0; j < open; ++j) {
            uint32_t other = sap->active[j];
            if (kcc_bp_may_pair(bp, proxy, other) &&
                kcc_bp_overlap(&bp->boxes[proxy], &bp->boxes[other]))
                complete &= kcc_bp_heap_offer(sap->changed, heap_count, bp->pair_capacity,
                                              kcc_bp_key(proxy, other));
        }
        sap->active_slot[proxy] = open;
        sap->active[open++] = proxy;
    }
    return complete;
}

/* Sorts every axis and finds every pair from scratch; the table is refilled when they all fit,
 * otherwise the list holds the pair_capacity smallest and the next update sweeps again. */
static void sweep_from_scratch(kcc_broadphase *bp)
{
    kcc_sap *sap = &bp->u.sap;
    for (int axis = 0; axis < 3; ++axis)
        sort_axis_from_scratch(bp, axis);
    uint32_t count;
    bool complete = sweep_pairs(bp, &count);
    kcc_bp_heap_sort(sap->changed, count);
    kcc_bp_keys_to_pairs(bp, sap->changed, count);
    bp->pair_overflow = !complete;
    memset(sap->table, 0xff, ((size_t)sap->table_mask + 1) * sizeof(uint64_t));
    sap->table_count = 0;
    if (complete)
        for (uint32_t i = 0; i < count; ++i) {
            sap->table[table_slot(sap, sap->changed[i])] = sap->changed[i];
            ++sap->table_count;
        }
    sap->rebuild = !complete;
}

/* ---- the list ---- */

/* The next list: the last one with the changed keys merged in, each changed key kept when the table
 * still holds it. Linear in the list, plus sorting the changes. */
static void merge_changes(kcc_broadphase *bp)
{
    kcc_sap *sap = &bp->u.sap;
    uint64_t *changed = sap->changed;
    kcc_bp_sort_keys(changed, sap->changed_count);
    const kcc_proxy_pair *last = bp->pairs;
    kcc_proxy_pair *next = sap->spare_pairs;
    uint32_t i = 0, j = 0, written = 0;
    while (i < bp->pair_count || j < sap->changed_count) {
        uint64_t last_key = i < bp->pair_count ? kcc_bp_key(last[i].a, last[i].b) : UINT64_MAX;
        uint64_t changed_key = j < sap->changed_count ? changed[j] : UINT64_MAX;
        if (last_key < changed_key) {
            next[written++] = last[i++];
            continue;
        }
        i += last_key == changed_key;
        while (j < sap->changed_count && changed[j] == changed_key)
            ++j;
        if (table_contains(sap, changed_key)) {
            KCC_ASSERT(written < bp->pair_capacity);
            next[written].a = (uint32_t)(changed_key >> 32);
            next[written++].b = (uint32_t)changed_key;
        }
    }
    sap->spare_pairs = bp->pairs;
    bp->pairs = next;
    bp->pair_count = written;
}

/* The list from the table alone, when more changed than sap->changed could note. */
static void list_from_table(kcc_broadphase *bp)
{
    kcc_sap *sap = &bp->u.sap;
    uint32_t count = 0;
    for (uint32_t slot = 0; slot <= sap->table_mask; ++slot)
        if (sap->table[slot] != TABLE_EMPTY)
            sap->changed[count++] = sap->table[slot];
    kcc_bp_sort_keys(sap->changed, count);
    kcc_bp_keys_to_pairs(bp, sap->changed, count);
}

/* ---- proxies ---- */

void kcc_sap_add(kcc_broadphase *bp, uint32_t proxy)
{
    kcc_sap *sap = &bp->u.sap;
    /* appended after every endpoint, min then max: "no overlap with anything", as the table says
     * of a new proxy; the update's sort moves them into place and adds its pairs */
    for (int axis = 0; axis < 3; ++axis) {
        sap->axis[axis][sap->endpoint_count].value = bp->boxes[proxy].lo[axis];
        sap->axis[axis][sap->endpoint_count].tag = proxy << 1;
        sap->axis[axis][sap->endpoint_count + 1].value = bp->boxes[proxy].hi[axis];
        sap->axis[axis][sap->endpoint_count + 1].tag = proxy << 1 | 1;
    }
    sap->endpoint_count += 2;
    for (int axis = 0; axis < 3; ++axis) {   /* empty: overlaps nothing */
        sap->last_boxes[proxy].lo[axis] = INFINITY;
        sap->last_boxes[proxy].hi[axis] = -INFINITY;
    }
    if (++sap->adds_since_update > SWEEP_AFTER_ADDS)
        sap->rebuild = true;
}

void kcc_sap_remove(kcc_broadphase *bp, uint32_t proxy)
{
    kcc_sap *sap = &bp->u.sap;
    for (int axis = 0; axis < 3; ++axis) {
        kcc_sap_endpoint *ep = sap->axis[axis];
        uint32_t kept = 0;
        for (uint32_t i = 0; i < sap->endpoint_count; ++i)
            if (ep[i].tag >> 1 != proxy)
                ep[kept++] = ep[i];
    }
    sap->endpoint_count -= 2;
    if (sap->rebuild)
        return;
    /* the table holds the listed pairs, less the changes noted since the last update */
    for (uint32_t i = 0; i < bp->pair_count; ++i)
        if (bp->pairs[i].a == proxy || bp->pairs[i].b == proxy) {
            uint64_t key = kcc_bp_key(bp->pairs[i].a, bp->pairs[i].b);
            if (table_delete(sap, key))
                note_change(bp, key);
        }
}

void kcc_sap_update(kcc_broadphase *bp)
{
    kcc_sap *sap = &bp->u.sap;
    if (!sap->rebuild)
        for (int axis = 0; axis < 3; ++axis)
            sort_axis_with_events(bp, axis);
    if (sap->rebuild) {
        sweep_from_scratch(bp);
    } else {
        if (sap->changed_overflow)
            list_from_table(bp);
        else
            merge_changes(bp);
        bp->pair_overflow = false;
    }
    sap->changed_count = 0;
    sap->changed_overflow = false;
    sap->adds_since_update = 0;
    memcpy(sap->last_boxes, bp->boxes, bp->proxy_end * sizeof *bp->boxes);
}
