/* broadphase.c: the broadphase's front: the desc's checks, the memory layout, the proxies (boxes,
 * user values, flags, the free list of indices), the pair list and the key sorts grid.c uses; the
 * pairs and queries themselves are grid.c's. Never allocates. */
#include <math.h>
#include <string.h>

#include "kcc_broadphase_internal.h"

void *kcc_bp_take(kcc_bp_layout *layout, size_t count, size_t elem_size)
{
    if (layout->too_large)
        return NULL;
    size_t offset = layout->bytes;
    if (elem_size != 0 && count > (SIZE_MAX - 64 - offset) / elem_size) {
        layout->too_large = true;
        return NULL;
    }
    layout->bytes = (offset + count * elem_size + 63) & ~(size_t)63;
    return layout->base ? layout->base + offset : NULL;
}

static bool desc_valid(const kcc_broadphase_desc *d)
{
    return d && d->proxy_capacity > 0 && d->proxy_capacity <= KCC_BROADPHASE_MAX_PROXIES &&
           d->pair_capacity <= KCC_BROADPHASE_MAX_PAIRS && isfinite(d->cell_size) && d->cell_size > 0.0f;
}

/* Places the header and every array of a broadphase for d: measures (layout->base NULL, bp a
 * scratch header) or fills in bp's pointers. */
static void layout_all(kcc_broadphase *bp, const kcc_broadphase_desc *d, kcc_bp_layout *layout)
{
    kcc_bp_take(layout, 1, sizeof(kcc_broadphase));
    bp->proxy_capacity = d->proxy_capacity;
    bp->pair_capacity = d->pair_capacity;
    bp->boxes = kcc_bp_take(layout, (size_t)d->proxy_capacity + 1, sizeof *bp->boxes);
    bp->user = kcc_bp_take(layout, d->proxy_capacity, sizeof *bp->user);
    bp->flags = kcc_bp_take(layout, d->proxy_capacity, sizeof *bp->flags);
    bp->free_list = kcc_bp_take(layout, d->proxy_capacity, sizeof *bp->free_list);
    bp->pairs = kcc_bp_take(layout, d->pair_capacity, sizeof *bp->pairs);
    kcc_grid_layout(bp, layout);
}

size_t kcc_broadphase_memory_bytes(const kcc_broadphase_desc *d)
{
    if (!desc_valid(d))
        return 0;
    kcc_broadphase scratch;
    memset(&scratch, 0, sizeof scratch);
    kcc_bp_layout layout = {NULL, 0, false};
    layout_all(&scratch, d, &layout);
    return layout.too_large ? 0 : layout.bytes;
}

kcc_broadphase *kcc_broadphase_init(void *memory, const kcc_broadphase_desc *d)
{
    size_t bytes = kcc_broadphase_memory_bytes(d);
    if (!memory || ((uintptr_t)memory & 63) != 0 || bytes == 0)
        return NULL;
    memset(memory, 0, bytes);
    kcc_broadphase *bp = memory;
    kcc_bp_layout layout = {memory, 0, false};
    layout_all(bp, d, &layout);
    kcc_grid_init(bp, d->cell_size);
    return bp;
}

static bool proxy_live(const kcc_broadphase *bp, uint32_t proxy)
{
    return proxy < bp->proxy_end && (bp->flags[proxy] & KCC_BP_LIVE);
}

static void set_box(kcc_broadphase *bp, uint32_t proxy, const float lo[3], const float hi[3])
{
    kcc_bp_box *box = &bp->boxes[proxy];
    KCC_ASSERT(lo[0] <= hi[0] && lo[1] <= hi[1] && lo[2] <= hi[2]);
    memcpy(box->lo, lo, sizeof box->lo);
    memcpy(box->hi, hi, sizeof box->hi);
}

uint32_t kcc_broadphase_add(kcc_broadphase *bp, const float lo[3], const float hi[3], uint32_t user,
                            uint32_t flags)
{
    uint32_t proxy;
    if (bp->free_count > 0)
        proxy = bp->free_list[--bp->free_count];
    else if (bp->proxy_end < bp->proxy_capacity)
        proxy = bp->proxy_end++;
    else
        return KCC_PROXY_NONE;
    set_box(bp, proxy, lo, hi);
    bp->user[proxy] = user;
    bp->flags[proxy] = (uint8_t)((flags & KCC_PROXY_STATIC) | KCC_BP_LIVE |
                                  (bp->flags[proxy] & (KCC_BP_CHANGED | KCC_BP_REFAT)));
    ++bp->proxy_count;
    kcc_grid_add(bp, proxy);
    return proxy;
}

void kcc_broadphase_remove(kcc_broadphase *bp, uint32_t proxy)
{
    if (!proxy_live(bp, proxy))
        return;
    kcc_grid_remove(bp, proxy);
    bp->flags[proxy] &= KCC_BP_CHANGED | KCC_BP_REFAT;
    bp->user[proxy] = 0;
    bp->free_list[bp->free_count++] = proxy;
    --bp->proxy_count;
}

void kcc_broadphase_move(kcc_broadphase *bp, uint32_t proxy, const float lo[3], const float hi[3])
{
    if (!proxy_live(bp, proxy))
        return;
    set_box(bp, proxy, lo, hi);
    kcc_grid_move(bp, proxy);
}

void kcc_broadphase_update(kcc_broadphase *bp)
{
    kcc_grid_update(bp);
}

uint32_t kcc_broadphase_pairs(const kcc_broadphase *bp, const kcc_proxy_pair **out, bool *out_overflow)
{
    if (out)
        *out = bp->pairs;
    if (out_overflow)
        *out_overflow = bp->pair_overflow;
    return bp->pair_count;
}

uint32_t kcc_broadphase_query(const kcc_broadphase *bp, const float lo[3], const float hi[3],
                              uint32_t *out, uint32_t capacity)
{
    kcc_bp_box box;
    for (int k = 0; k < 3; ++k) {
        box.lo[k] = lo[k];
        box.hi[k] = hi[k];
    }
    if (!out)
        capacity = 0;
    return kcc_grid_query(bp, &box, out, capacity);
}

uint32_t kcc_broadphase_user(const kcc_broadphase *bp, uint32_t proxy)
{
    return proxy_live(bp, proxy) ? bp->user[proxy] : 0;
}

uint32_t kcc_broadphase_proxy_count(const kcc_broadphase *bp)
{
    return bp->proxy_count;
}

/* ---- key sorts ---- */

/* Restores the max-heap order below position i of heap[0..count). */
static void sift_down(uint64_t *heap, uint32_t count, uint32_t i)
{
    uint64_t key = heap[i];
    for (;;) {
        uint32_t child = 2 * i + 1;
        if (child >= count)
            break;
        if (child + 1 < count && heap[child + 1] > heap[child])
            ++child;
        if (heap[child] <= key)
            break;
        heap[i] = heap[child];
        i = child;
    }
    heap[i] = key;
}

void kcc_bp_heap_sort(uint64_t *heap, uint32_t count)
{
    for (uint32_t end = count; end > 1; --end) {
        uint64_t top = heap[0];
        heap[0] = heap[end - 1];
        heap[end - 1] = top;
        sift_down(heap, end - 1, 0);
    }
}

void kcc_bp_sort_keys(uint64_t *keys, uint32_t count)
{
    if (count <= 24) {
        for (uint32_t i = 1; i < count; ++i) {
            uint64_t key = keys[i];
            uint32_t j = i;
            for (; j > 0 && keys[j - 1] > key; --j)
                keys[j] = keys[j - 1];
            keys[j] = key;
        }
        return;
    }
    kcc_bp_heapify(keys, count);
    kcc_bp_heap_sort(keys, count);
}

void kcc_bp_heapify(uint64_t *keys, uint32_t count)
{
    for (uint32_t i = count / 2; i-- > 0;)
        sift_down(keys, count, i);
}

bool kcc_bp_heap_offer(uint64_t *heap, uint32_t *count, uint32_t capacity, uint64_t key)
{
    if (*count < capacity) {
        uint32_t i = (*count)++;
        while (i > 0 && heap[(i - 1) / 2] < key) {
            heap[i] = heap[(i - 1) / 2];
            i = (i - 1) / 2;
        }
        heap[i] = key;
        return true;
    }
    if (capacity > 0 && key < heap[0]) {
        heap[0] = key;
        sift_down(heap, capacity, 0);
    }
    return false;
}

void kcc_bp_keys_to_pairs(kcc_broadphase *bp, const uint64_t *keys, uint32_t count)
{
    for (uint32_t i = 0; i < count; ++i) {
        bp->pairs[i].a = (uint32_t)(keys[i] >> 32);
        bp->pairs[i].b = (uint32_t)keys[i];
    }
    bp->pair_count = count;
}
