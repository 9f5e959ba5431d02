/* kcc_broadphase_internal.h: the broadphase the world owns inside its one allocation: proxies (a box,
 * a 32-bit user value, a STATIC flag) and the pairs of them whose boxes overlap, found by sweep and
 * prune in grid rows (collide/grid.c) behind the proxies' bookkeeping (collide/broadphase.c). Knows
 * nothing of bodies or characters; never installed. */
#ifndef KCC_BROADPHASE_INTERNAL_H
#define KCC_BROADPHASE_INTERNAL_H

#include "kcc_world.h"

/// A proxy flag: the proxy never pairs with another STATIC proxy (level pieces among themselves).
#define KCC_PROXY_STATIC 1u
/// No proxy: what kcc_broadphase_add returns when every proxy is in use.
#define KCC_PROXY_NONE 0xffffffffu
/// Largest proxy_capacity.
#define KCC_BROADPHASE_MAX_PROXIES (1u << 24)
/// Largest pair_capacity.
#define KCC_BROADPHASE_MAX_PAIRS (1u << 28)
typedef struct kcc_broadphase kcc_broadphase;

typedef struct kcc_broadphase_desc {
    uint32_t proxy_capacity;    ///< live proxies at most, 1..KCC_BROADPHASE_MAX_PROXIES
    uint32_t pair_capacity;     ///< pairs kept at most, 0..KCC_BROADPHASE_MAX_PAIRS
    float    cell_size;         ///< m, the widest and deepest box (x, z) the grid enters in its rows
                                ///< (as tall as the deepest entered box); larger boxes are tested
                                ///< against every proxy (finite, > 0)
} kcc_broadphase_desc;

/// Two proxies whose boxes overlap: proxy indices, a < b.
typedef struct kcc_proxy_pair {
    uint32_t a, b;
} kcc_proxy_pair;

/// Bytes kcc_broadphase_init needs for `d`; 0 when d is NULL or invalid (a capacity out of range, a
/// cell size not finite and positive) or when the sizes overflow size_t.
size_t kcc_broadphase_memory_bytes(const kcc_broadphase_desc *d);

/// Lays a broadphase out in `memory` (kcc_broadphase_memory_bytes(d) bytes, 64-byte aligned, owned
/// by the caller and kept until it stops using the broadphase; the desc is copied). Returns the
/// broadphase (at `memory`), or NULL for NULL or misaligned memory or an invalid desc. Writes every
/// byte it owns, so nothing depends on what the memory held. The only call that touches memory in
/// bulk; no call allocates.
kcc_broadphase *kcc_broadphase_init(void *memory, const kcc_broadphase_desc *d);

/// Adds a proxy with box [lo, hi] (m; finite, lo <= hi on each axis: the caller validates; a point,
/// lo == hi, is fine, and so is a box of +-1e6 m), a user value and flags (KCC_PROXY_STATIC; other
/// bits ignored). Returns its index (< proxy_capacity; a removed proxy's index is reused, the most
/// recently removed first), or KCC_PROXY_NONE when proxy_capacity proxies are live. Its pairs appear
/// at the next kcc_broadphase_update; queries see it at once. O(1) (the grid lists it as changed).
uint32_t kcc_broadphase_add(kcc_broadphase *bp, const float lo[3], const float hi[3], uint32_t user,
                            uint32_t flags);

/// Removes a live proxy (anything else is ignored); its index may be handed out again by the next
/// add. Its pairs leave the list at the next update. O(1).
void kcc_broadphase_remove(kcc_broadphase *bp, uint32_t proxy);

/// Gives a live proxy a new box (same rules as add; anything else is ignored). Queries see it at
/// once, pairs at the next update. O(1).
void kcc_broadphase_move(kcc_broadphase *bp, uint32_t proxy, const float lo[3], const float hi[3]);

/// Brings the pair list up to date with every add, remove and move since the last update: the
/// kept pairs of fat boxes (each mover's box grown by a margin) tested with the boxes,
/// cost proportional to those pairs; before that, the proxies whose box left its fat box (or that
/// were added or removed) find their fat pairs again, or when more than about 4 sqrt(proxies) have
/// since the last full pass, a full pass re-keys and re-sorts each layer from its last order and
/// finds every fat pair afresh (cost proportional to the proxies plus, for each, the entries in its
/// two runs, plus the fat pairs).
void kcc_broadphase_update(kcc_broadphase *bp);

/// The pairs as of the last update: every two proxies whose boxes overlap (touching counts), not
/// both STATIC, sorted ascending by (a, b). Writes the list (owned by the broadphase, valid until the
/// next call that changes it) to *out and returns its length. When more pairs overlap than
/// pair_capacity, the list holds the pair_capacity smallest and *out_overflow (may be NULL) is set;
/// the next update that finds few enough clears it.
uint32_t kcc_broadphase_pairs(const kcc_broadphase *bp, const kcc_proxy_pair **out, bool *out_overflow);

/// The live proxies whose boxes overlap [lo, hi] (touching counts), ascending: returns how many
/// there are and writes the first `capacity` of them to out (NULL is fine when capacity is 0). Sees
/// every add, remove and move at once. Reads only, so many threads may query at once between calls
/// that change the broadphase. It reads, in each layer, the rows the box covers and one below (up to
/// 64, beyond that every entry), each from its start, its oversized list and the proxies changed
/// since the last full pass.
uint32_t kcc_broadphase_query(const kcc_broadphase *bp, const float lo[3], const float hi[3],
                              uint32_t *out, uint32_t capacity);

/// The user value of a live proxy; 0 for any other index.
uint32_t kcc_broadphase_user(const kcc_broadphase *bp, uint32_t proxy);

/// Live proxies.
uint32_t kcc_broadphase_proxy_count(const kcc_broadphase *bp);

/* ---- private: shared by broadphase.c and grid.c (the world uses only the calls above) ---- */

/// A proxy's box, m.
typedef struct kcc_bp_box {
    float lo[3], hi[3];
} kcc_bp_box;

/// Proxy flags beyond KCC_PROXY_STATIC.
#define KCC_BP_LIVE 2u
#define KCC_BP_OVERSIZED 4u
/// The grid's: the proxy is in its changed list (kept across a remove and the next add).
#define KCC_BP_CHANGED 8u
/// The grid's: the proxy is an entry of the movers' layer, of the statics' layer (a layer's update
/// sets and clears them as it passes over its last entries, before it takes in the changed proxies).
#define KCC_BP_IN_MOVERS 16u
#define KCC_BP_IN_STATICS 32u
/// The grid's: the proxy's fat box is made anew and its fat pairs found afresh at the next update
/// (added, removed, or its box moved out of its fat box; kept across a remove and the next add).
#define KCC_BP_REFAT 64u

/// One entry of a grid layer: its sort key, (the row of its box's low corner) << 32 | lo.x's bits
/// ordered as unsigned integers (-0 taken as +0), and its proxy.
typedef struct kcc_grid_entry {
    uint64_t key;
    uint32_t proxy;
} kcc_grid_entry;

/// One layer of the grid: its proxies sorted by (the row of their box's low corner on z, lo.x), the
/// rows row_height tall (at least the deepest entered box on z, so an entered box spans at most two
/// rows), kept from update to update and re-sorted in place; their boxes as of the layer's last
/// update laid out by entry (SoA) for four-wide tests.
typedef struct kcc_grid_layer {
    float    row_height, inv_row_height;   ///< m, 1/m
    float    widest;                       ///< m: no entered box is wider on x
    uint8_t  in_flag;                      ///< the proxy flag of this layer's entries
    kcc_grid_entry *entries;     ///< proxy_capacity + 4, ascending by key; the 4 past the last hold
                                 ///< key UINT64_MAX
    float    *lo[3], *hi[3];     ///< proxy_capacity + 4, by entry (m); a four-wide test of the last
                                 ///< entries reads up to three beyond them
    int32_t  *row;               ///< proxy_capacity + 4, by entry; INT32_MAX past the last
    uint32_t entry_count;
    uint32_t *row_start;         ///< proxy_capacity + 2: row_start[r - first_row] is the first entry
                                 ///< of row r or after it, for the row_count rows from first_row
                                 ///< (row_count 0: no table, the rows span more than capacity + 1)
    int32_t  first_row;
    uint32_t row_count;
} kcc_grid_layer;

/// The grid's state. Its layers hold *fat* boxes (a mover's box grown by a margin when the layer
/// was last passed over in full; a STATIC proxy's box itself), and it keeps the pairs of
/// overlapping fat boxes; the exact pairs are those of the fat pairs whose boxes overlap. A full
/// pass re-sorts the movers (proxies not STATIC), and the STATIC proxies only when one of them
/// changed, and finds the fat pairs afresh; between full passes only the proxies whose box left
/// their fat box (or that were added or removed) find their fat pairs again.
typedef struct kcc_grid {
    float    cell_size;          ///< m: the widest and deepest box (x, z) a layer enters
    float    margin;             ///< m: what the last full pass grew movers' boxes by on every side
    uint32_t margin_off;         ///< full passes left without a margin (fat pairs overflowed)
    kcc_grid_layer movers, statics;
    bool     statics_changed;    ///< a STATIC proxy was added, moved or removed since the full pass
    kcc_bp_box *fat;             ///< proxy_capacity + 1: each entered or oversized proxy's fat box
                                 ///< (m), which holds its box (reads may go a float past the last)
    kcc_grid_entry *scratch;     ///< proxy_capacity: the merge sort's other half
    uint32_t *oversized;         ///< proxy_capacity: the live proxies not entered, ascending
    uint32_t oversized_count;
    uint32_t *changed;           ///< proxy_capacity: proxies added, removed, or moved out of their
                                 ///< fat box since the last full pass (each once: KCC_BP_CHANGED);
                                 ///< their layer entries, if any, are stale
    uint32_t changed_count;
    uint64_t *candidates;        ///< proxy_capacity: one scan's pair keys when the found list is
                                 ///< nearly full (found: a full pass's, or the changed proxies')
    uint64_t *found;             ///< fat_capacity: the pair keys found, in the order found (a
                                 ///< bounded max-heap once more are found than it holds)
    uint64_t *fat_pairs;         ///< fat_capacity: the fat pairs' keys, ascending
    uint32_t fat_count, fat_capacity;   ///< fat_capacity: 2 * pair_capacity
    bool     fat_complete;       ///< fat_pairs holds every fat pair (else: a full pass at the update)
    uint32_t *group_end;         ///< proxy_capacity + 1: the counting sort of the pairs by a
} kcc_grid;

struct kcc_broadphase {
    uint32_t proxy_capacity, pair_capacity;
    uint32_t proxy_end;          ///< proxies [0, proxy_end) have been handed out at least once
    uint32_t proxy_count;        ///< live proxies
    uint32_t free_count;         ///< indices in free_list, the most recently removed last
    kcc_bp_box *boxes;           ///< proxy_capacity + 1 (the grid reads a box's six floats as two
                                 ///< groups of four: up to one float past the last box)
    uint32_t *user;              ///< proxy_capacity
    uint8_t  *flags;             ///< proxy_capacity: KCC_PROXY_STATIC | KCC_BP_LIVE | KCC_BP_OVERSIZED |
                                 ///< KCC_BP_CHANGED | KCC_BP_IN_MOVERS | KCC_BP_IN_STATICS |
                                 ///< KCC_BP_REFAT
    uint32_t *free_list;         ///< proxy_capacity
    kcc_proxy_pair *pairs;       ///< pair_capacity: the list kcc_broadphase_pairs returns
    uint32_t pair_count;
    bool     pair_overflow;
    kcc_grid grid;
};

/// Places `count` elements of `elem_size` bytes at the next 64-byte boundary of a layout being
/// measured (base NULL: returns NULL) or filled (returns base + offset); sets too_large when the
/// sizes overflow size_t.
typedef struct kcc_bp_layout {
    char  *base;
    size_t bytes;
    bool   too_large;
} kcc_bp_layout;
void *kcc_bp_take(kcc_bp_layout *layout, size_t count, size_t elem_size);

/// The boxes overlap on every axis (touching counts).
static inline bool kcc_bp_overlap(const kcc_bp_box *a, const kcc_bp_box *b)
{
    return a->lo[0] <= b->hi[0] && b->lo[0] <= a->hi[0] && a->lo[1] <= b->hi[1] &&
           b->lo[1] <= a->hi[1] && a->lo[2] <= b->hi[2] && b->lo[2] <= a->hi[2];
}

/// Proxies a and b may pair: not both STATIC.
static inline bool kcc_bp_may_pair(const kcc_broadphase *bp, uint32_t a, uint32_t b)
{
    return ((bp->flags[a] & bp->flags[b]) & KCC_PROXY_STATIC) == 0;
}

/// The pair key a << 32 | b of a < b: keys sort as the pairs do.
static inline uint64_t kcc_bp_key(uint32_t a, uint32_t b)
{
    return a < b ? (uint64_t)a << 32 | b : (uint64_t)b << 32 | a;
}

/// Sorts keys ascending in place (insertion sort when short, heapsort otherwise: no memory).
void kcc_bp_sort_keys(uint64_t *keys, uint32_t count);
/// Offers a key to a max-heap of at most capacity keys that keeps the smallest; returns false when
/// the heap was full (the key, or the largest it held, dropped).
bool kcc_bp_heap_offer(uint64_t *heap, uint32_t *count, uint32_t capacity, uint64_t key);
/// Makes keys[0..count) a max-heap in place.
void kcc_bp_heapify(uint64_t *keys, uint32_t count);
/// Sorts a max-heap of count keys ascending in place.
void kcc_bp_heap_sort(uint64_t *heap, uint32_t count);
/// Writes keys[0..count) to the pair list.
void kcc_bp_keys_to_pairs(kcc_broadphase *bp, const uint64_t *keys, uint32_t count);

/// The grid: sweep and prune in rows (collide/grid.c).
void kcc_grid_layout(kcc_broadphase *bp, kcc_bp_layout *layout);
void kcc_grid_init(kcc_broadphase *bp, float cell_size);
void kcc_grid_add(kcc_broadphase *bp, uint32_t proxy);
void kcc_grid_remove(kcc_broadphase *bp, uint32_t proxy);
void kcc_grid_move(kcc_broadphase *bp, uint32_t proxy);
void kcc_grid_update(kcc_broadphase *bp);
uint32_t kcc_grid_query(const kcc_broadphase *bp, const kcc_bp_box *box, uint32_t *out,
                        uint32_t capacity);

#endif
