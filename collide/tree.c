/* tree.c: owns the AABB-tree builder: top-down binned SAH over triangle bounds into a binary tree
 * (sibling pairs, scratch), then its collapse into the four-wide groups of 32-byte nodes the queries
 * walk; leaves of up to KCC_LEAF_MAX triangles. Deterministic (fixed iteration order, strict-less
 * tie-breaks, a total order in the median fallback; the SSE and scalar paths compute bit-identical
 * values). Also the tree's validator, kcc_mesh_validate. Allocates nothing. */
#include <math.h>
#include <string.h>

#include "collide_internal.h"
#include "heightfield_internal.h"

#define BINS 16
/* SAH costs: one node visit against one triangle test. A traversal cost above the triangle cost
 * favours leaves of 2-4 triangles, which keeps the tree near 24 bytes per triangle. */
#define SAH_TRAVERSE  1.5f
#define SAH_TRIANGLE  1.0f
/* Ranges larger than this bin one axis only (see the build loop). */
#define SAH_ONE_AXIS_ABOVE 8192u

/* ---- 4-wide float helpers: SSE2 when available, the same operations in scalar otherwise. The
 * min/max follow the SSE rule (a < b ? a : b), so both paths give identical bits. */
#if defined(__SSE2__)
#include <emmintrin.h>
typedef __m128 v4;
static inline v4 v4_load(const float *p) { return _mm_loadu_ps(p); }
static inline v4 v4_load3(const float *p)
{
    return _mm_and_ps(_mm_loadu_ps(p), _mm_castsi128_ps(_mm_set_epi32(0, -1, -1, -1)));
}
static inline void v4_store(float *p, v4 a) { _mm_storeu_ps(p, a); }
static inline v4 v4_set1(float x) { return _mm_set1_ps(x); }
static inline v4 v4_min(v4 a, v4 b) { return _mm_min_ps(a, b); }
static inline v4 v4_max(v4 a, v4 b) { return _mm_max_ps(a, b); }
static inline v4 v4_add(v4 a, v4 b) { return _mm_add_ps(a, b); }
static inline v4 v4_sub(v4 a, v4 b) { return _mm_sub_ps(a, b); }
static inline v4 v4_mul(v4 a, v4 b) { return _mm_mul_ps(a, b); }
static inline void v4_trunc(v4 a, int32_t out[4])
{
    _mm_storeu_si128((__m128i *)(void *)out, _mm_cvttps_epi32(a));
}
#else
typedef struct v4 { float x[4]; } v4;
static inline v4 v4_load(const float *p) { v4 r; memcpy(r.x, p, sizeof r.x); return r; }
static inline v4 v4_load3(const float *p)
{
    v4 r = {{p[0], p[1], p[2], 0.0f}};
    return r;
}
static inline void v4_store(float *p, v4 a) { memcpy(p, a.x, sizeof a.x); }
static inline v4 v4_set1(float x) { v4 r = {{x, x, x, x}}; return r; }
#define V4_OP(name, expr)                                              \
    static inline v4 name(v4 a, v4 b)                                  \
    {                                                                  \
        v4 r;                                                          \
        for (int i = 0; i < 4; ++i) { float x = a.x[i], y = b.x[i]; r.x[i] = (expr); } \
        return r;                                                      \
    }
V4_OP(v4_min, x < y ? x : y)
V4_OP(v4_max, x > y ? x : y)
V4_OP(v4_add, x + y)
V4_OP(v4_sub, x - y)
V4_OP(v4_mul, x * y)
#undef V4_OP
static inline void v4_trunc(v4 a, int32_t out[4])
{
    for (int i = 0; i < 4; ++i)
        out[i] = (int32_t)a.x[i]; /* callers clamp to [0, bins - 1] first */
}
#endif

typedef struct vbox {
    v4 lo;
    v4 hi;
} vbox;

static inline void vbox_empty(vbox *b)
{
    b->lo = v4_set1(INFINITY);
    b->hi = v4_set1(-INFINITY);
}

static inline void vbox_grow(vbox *b, v4 lo, v4 hi)
{
    b->lo = v4_min(b->lo, lo);
    b->hi = v4_max(b->hi, hi);
}

/* Half the surface area over lanes 0..2; infinite (not NaN) for extreme extents, which only
 * steers the SAH toward its median fallback. */
static inline float vbox_area(const vbox *b)
{
    float lo[4], hi[4];
    v4_store(lo, b->lo);
    v4_store(hi, b->hi);
    float dx = hi[0] - lo[0], dy = hi[1] - lo[1], dz = hi[2] - lo[2];
    return dx * dy + dy * dz + dz * dx;
}

/* Twice the centroid (lo + hi): no division; inputs are finite. */
static inline v4 prim_c2(const kcc_build_prim *p)
{
    return v4_add(v4_load3(p->lo), v4_load3(p->hi));
}

/* Bin indices of a centroid on all three axes: clamp((c - cmin) * scale, 0, top). A NaN
 * (from an axis skipped with scale 0) clamps to 0 by the max/min operand order. */
static inline void bin_index(v4 c2, v4 cmin, v4 scale, v4 top, int32_t out[4])
{
    v4 f = v4_mul(v4_sub(c2, cmin), scale);
    f = v4_max(f, v4_set1(0.0f));
    f = v4_min(f, top);
    v4_trunc(f, out);
}

/* Median-fallback key: twice the centroid on one axis, then the input index (a total order). */
static inline bool key_less(const kcc_build_prim *x, const kcc_build_prim *y, int axis)
{
    float cx = 0.5f * x->lo[axis] + 0.5f * x->hi[axis];
    float cy = 0.5f * y->lo[axis] + 0.5f * y->hi[axis];
    return cx < cy || (cx == cy && x->id < y->id);
}

static void sift_down(kcc_build_prim *p, uint32_t root, uint32_t n, int axis)
{
    for (;;) {
        uint32_t child = 2 * root + 1;
        if (child >= n)
            return;
        if (child + 1 < n && key_less(&p[child], &p[child + 1], axis))
            ++child;
        if (!key_less(&p[root], &p[child], axis))
            return;
        kcc_build_prim t = p[root];
        p[root] = p[child];
        p[child] = t;
        root = child;
    }
}

/* Heap sort: deterministic, O(n log n), no allocation. Only the median fallback uses it. */
static void sort_by_axis(kcc_build_prim *p, uint32_t n, int axis)
{
    if (n < 2)
        return;
    for (uint32_t start = n / 2; start-- > 0;)
        sift_down(p, start, n, axis);
    for (uint32_t end = n - 1; end > 0; --end) {
        kcc_build_prim t = p[0];
        p[0] = p[end];
        p[end] = t;
        sift_down(p, 0, end, axis);
    }
}

static void range_bounds(const kcc_build_prim *p, uint32_t n, vbox *nb, vbox *cb)
{
    vbox_empty(nb);
    vbox_empty(cb);
    for (uint32_t i = 0; i < n; ++i) {
        v4 c2 = prim_c2(&p[i]);
        vbox_grow(nb, v4_load3(p[i].lo), v4_load3(p[i].hi));
        vbox_grow(cb, c2, c2);
    }
}

typedef struct build_task {
    vbox     nb;      /* bounds of the range's triangles */
    vbox     cb;      /* bounds of their doubled centroids */
    uint32_t node;
    uint32_t begin;
    uint32_t end;
    uint32_t depth;
} build_task;

typedef struct sah_bin {
    vbox     box;
    uint32_t count;
} sah_bin;

/* Writes node `id` (lane id & 1 of pair id >> 1). */
static void put_node(kcc_node_pair *pairs, uint32_t id, const vbox *b, uint32_t first,
                     uint32_t count)
{
    kcc_node_pair *p = &pairs[id >> 1];
    uint32_t c = id & 1;
    float lo[4], hi[4];
    v4_store(lo, b->lo);
    v4_store(hi, b->hi);
    p->x[0][c] = lo[0];
    p->x[1][c] = hi[0];
    p->y[0][c] = lo[1];
    p->y[1][c] = hi[1];
    p->z[0][c] = lo[2];
    p->z[1][c] = hi[2];
    p->first[c] = first;
    p->count[c] = count;
}

/* The best SAH split of a range found by binning: bin `bin` and above go right. The binning
 * (cmin, scale, nbins) is what the partition repeats, so both put every triangle in the same bin. */
typedef struct sah_split {
    v4    cmin;        /* lower bound of the doubled centroids */
    float scale[4];    /* bins per unit of doubled centroid, per axis; 0: axis not binned */
    int   nbins;
    int   axis;        /* -1 when no binned axis separates anything */
    int   bin;
    float cost;        /* sum over both sides of area x triangle count */
} sah_split;

/* The binning of a range: fewer bins for small ranges (16 bins over 6 triangles cost more to sweep
 * than they can tell apart), no axis where the centroids have no (finite) extent, and for large
 * ranges only the widest axis: a third of the binning work where it costs most, at a negligible
 * loss in tree quality. Returns false when no axis can be binned. */
static bool sah_binning(const build_task *task, uint32_t count, sah_split *s)
{
    float cmin[4], cmax[4];
    v4_store(cmin, task->cb.lo);
    v4_store(cmax, task->cb.hi);
    s->cmin = task->cb.lo;
    s->nbins = count < BINS ? (int)count : BINS;
    s->axis = -1;
    s->bin = 0;
    s->cost = INFINITY;
    bool any_axis = false;
    for (int k = 0; k < 4; ++k)
        s->scale[k] = 0.0f;
    for (int k = 0; k < 3; ++k) {
        float ext = cmax[k] - cmin[k];
        float per_unit = (float)s->nbins / ext;
        if (ext > 0.0f && isfinite(ext) && isfinite(per_unit)) {
            s->scale[k] = per_unit;
            any_axis = true;
        }
    }
    if (any_axis && count > SAH_ONE_AXIS_ABOVE) {
        int wide = 0;
        for (int k = 1; k < 3; ++k)
            if (cmax[k] - cmin[k] > cmax[wide] - cmin[wide])
                wide = k;
        for (int k = 0; k < 3; ++k)
            if (k != wide)
                s->scale[k] = 0.0f;
    }
    return any_axis;
}

/* The cheapest split of axis k's bins into a left part (bins below b) and a right part, both
 * non-empty; kept in s when cheaper than s's (strict: ties keep the earlier axis and bin). */
static void sah_sweep_axis(const sah_bin *bins, uint32_t count, int k, sah_split *s)
{
    const int nbins = s->nbins;
    float right_cost[BINS];
    vbox acc;
    vbox_empty(&acc);
    uint32_t nacc = 0;
    for (int b = nbins - 1; b > 0; --b) {
        nacc += bins[b].count;
        vbox_grow(&acc, bins[b].box.lo, bins[b].box.hi);
        right_cost[b] = nacc ? vbox_area(&acc) * (float)nacc : INFINITY;
    }
    vbox_empty(&acc);
    nacc = 0;
    for (int b = 0; b < nbins - 1; ++b) {
        nacc += bins[b].count;
        vbox_grow(&acc, bins[b].box.lo, bins[b].box.hi);
        if (nacc == 0 || nacc == count)
            continue;
        float cost = vbox_area(&acc) * (float)nacc + right_cost[b + 1];
        if (cost < s->cost) {
            s->cost = cost;
            s->axis = k;
            s->bin = b + 1;
        }
    }
}

/* Bins the range's triangles by centroid on every binned axis and keeps the cheapest split. */
static void sah_find(const kcc_build_prim *p, uint32_t count, sah_split *s)
{
    sah_bin bins[3][BINS];
    int axes[3], naxes = 0;
    for (int k = 0; k < 3; ++k)
        if (s->scale[k] != 0.0f)
            axes[naxes++] = k;
    for (int k = 0; k < 3; ++k)
        for (int b = 0; b < s->nbins; ++b) {
            vbox_empty(&bins[k][b].box);
            bins[k][b].count = 0;
        }
    const v4 vscale = v4_load(s->scale), vtop = v4_set1((float)(s->nbins - 1));
    for (uint32_t i = 0; i < count; ++i) {
        v4 lo = v4_load3(p[i].lo), hi = v4_load3(p[i].hi);
        int32_t idx[4];
        bin_index(v4_add(lo, hi), s->cmin, vscale, vtop, idx);
        for (int j = 0; j < naxes; ++j) {
            sah_bin *bn = &bins[axes[j]][idx[axes[j]]];
            bn->count++;
            vbox_grow(&bn->box, lo, hi);
        }
    }
    for (int j = 0; j < naxes; ++j)
        sah_sweep_axis(bins[axes[j]], count, axes[j], s);
}

/* Partitions the range by s's bin (the binning pass's computation), growing the two sides' bounds
 * on the way so no extra pass is needed. Returns the left side's size, 0 < size < count: both
 * sides of a chosen split hold triangles. */
static uint32_t sah_partition(kcc_build_prim *p, uint32_t count, const sah_split *s,
                              build_task *left, build_task *right)
{
    const v4 vscale = v4_load(s->scale), vtop = v4_set1((float)(s->nbins - 1));
    vbox_empty(&left->nb);
    vbox_empty(&left->cb);
    vbox_empty(&right->nb);
    vbox_empty(&right->cb);
    uint32_t i = 0, j = count;
    while (i < j) {
        v4 lo = v4_load3(p[i].lo), hi = v4_load3(p[i].hi), c2 = v4_add(lo, hi);
        int32_t idx[4];
        bin_index(c2, s->cmin, vscale, vtop, idx);
        if (idx[s->axis] < s->bin) {
            vbox_grow(&left->nb, lo, hi);
            vbox_grow(&left->cb, c2, c2);
            ++i;
        } else {
            vbox_grow(&right->nb, lo, hi);
            vbox_grow(&right->cb, c2, c2);
            --j;
            kcc_build_prim t = p[i];
            p[i] = p[j];
            p[j] = t;
        }
    }
    KCC_ASSERT(i > 0 && i < count);
    return i;
}

/* Object median on the widest centroid axis: halves the range, which bounds the depth. */
static uint32_t median_partition(const build_task *task, kcc_build_prim *p, uint32_t count,
                                 build_task *left, build_task *right)
{
    float cmin[4], cmax[4];
    v4_store(cmin, task->cb.lo);
    v4_store(cmax, task->cb.hi);
    int axis = 0;
    float widest = -1.0f;
    for (int k = 0; k < 3; ++k) {
        float e = cmax[k] - cmin[k];
        if (e > widest) {
            widest = e;
            axis = k;
        }
    }
    sort_by_axis(p, count, axis);
    const uint32_t mid = count / 2;
    range_bounds(p, mid, &left->nb, &left->cb);
    range_bounds(p + mid, count - mid, &right->nb, &right->cb);
    return mid;
}

/* Decides one range: true when it becomes a leaf; otherwise partitions it (by SAH above
 * KCC_TREE_SAH_DEPTH, by object median below it or where the SAH finds no split) and fills the
 * two child tasks' ranges and bounds. Ranges of up to KCC_LEAF_MIN triangles always become leaves:
 * it bounds the tree to well under 24 bytes of nodes per triangle even where the SAH would split
 * down to singles (dense small triangles), and a leaf of a few triangles costs little more than a
 * node. */
static bool split_or_leaf(const build_task *task, kcc_build_prim *prims, build_task *left,
                          build_task *right)
{
    const uint32_t count = task->end - task->begin;
    kcc_build_prim *p = prims + task->begin;
    if (count <= KCC_LEAF_MIN || (task->depth >= KCC_TREE_SAH_DEPTH && count <= KCC_LEAF_MAX))
        return true;
    uint32_t mid = 0;
    if (task->depth < KCC_TREE_SAH_DEPTH) {
        sah_split s;
        if (sah_binning(task, count, &s))
            sah_find(p, count, &s);
        float parent = vbox_area(&task->nb);
        bool split_pays = s.axis >= 0 && SAH_TRAVERSE * parent + SAH_TRIANGLE * s.cost <
                                             SAH_TRIANGLE * parent * (float)count;
        if (count <= KCC_LEAF_MAX && !split_pays)
            return true;
        if (s.axis >= 0)
            mid = sah_partition(p, count, &s, left, right);
        if (mid == count)
            mid = 0; /* unreachable (asserted); the median split keeps the tree valid regardless */
    }
    if (mid == 0)
        mid = median_partition(task, p, count, left, right);
    left->begin = task->begin;
    left->end = task->begin + mid;
    right->begin = task->begin + mid;
    right->end = task->end;
    left->depth = right->depth = task->depth + 1;
    return false;
}

uint32_t kcc_tree_build(kcc_build_prim *prims, uint32_t n, kcc_node_pair *pairs,
                        uint32_t *out_leaves, uint32_t *out_depth)
{
    /* Depth-first: the left child is taken next, so the stack holds at most one pending right
     * sibling per level. */
    build_task stack[KCC_TREE_MAX_DEPTH + 4];
    /* Node 0 is the root, node 1 the never-hit dummy sibling; children come in pairs from 2. */
    uint32_t sp = 0, node_count = 2, leaves = 0, max_depth = 0;
    vbox empty;
    vbox_empty(&empty);
    put_node(pairs, 1, &empty, 0, 0);
    stack[0].node = 0;
    stack[0].begin = 0;
    stack[0].end = n;
    stack[0].depth = 1;
    range_bounds(prims, n, &stack[0].nb, &stack[0].cb);
    sp = 1;
    while (sp > 0) {
        build_task task = stack[--sp];
        if (task.depth > max_depth)
            max_depth = task.depth;
        KCC_ASSERT(sp + 2 <= sizeof stack / sizeof stack[0]);
        build_task *right = &stack[sp], *left = &stack[sp + 1];
        if (split_or_leaf(&task, prims, left, right)) {
            put_node(pairs, task.node, &task.nb, task.begin, task.end - task.begin);
            ++leaves;
            continue;
        }
        put_node(pairs, task.node, &task.nb, node_count >> 1, 0);
        left->node = node_count;
        right->node = node_count + 1;
        node_count += 2;
        sp += 2;
    }
    *out_leaves = leaves;
    *out_depth = max_depth;
    return node_count / 2;
}

/* ------------------------------------------------------------------------------------------------
 * Collapse into four-wide groups: every inner node of the result lists up to four children taken
 * from the binary tree, kept in its left-to-right order (so the leaves, and the slots, keep theirs).
 * Which binary nodes become groups and which are opened into their parent's is either planned
 * (kcc_tree_plan_collapse, the meshes) or chosen greedily (plan NULL: repeatedly open the inner
 * child with the largest surface area, ties to the first; the world's trees). Groups are laid out
 * depth first (kcc_tree_collapse), in a fixed order: deterministic. Empty slots have lo = +inf and
 * hi = -inf, which no node test ever enters. */

static float pair_area(const kcc_node_pair *pairs, uint32_t id)
{
    const kcc_node_pair *p = &pairs[id >> 1];
    uint32_t c = id & 1;
    float dx = p->x[1][c] - p->x[0][c], dy = p->y[1][c] - p->y[0][c], dz = p->z[1][c] - p->z[0][c];
    return dx * dy + dy * dz + dz * dx;
}

static bool pair_is_leaf(const kcc_node_pair *pairs, uint32_t id)
{
    return pairs[id >> 1].count[id & 1] != 0;
}

/* The plan's costs, in tests of a group entered by every query: a group costs the share of the
 * root's area its box has (the chance that a query enters it) plus KCC_COLLAPSE_GROUP_COST, the 64
 * bytes it stores weighed as a test entered by 1% of the queries; a leaf its share times
 * KCC_COLLAPSE_TRI4_COST for each four of its triangles. Measured on the shared levels (bench_layout
 * -q; test/bench/ab/ab.sh -q, each against the one before): groups planned on area alone store
 * 0.7-1.0 bytes a triangle less than the greedy collapse, as fast; with the group cost 1.2-1.5
 * bytes less, rays, box overlaps and sweeps 0.84-1.00 of the greedy's time (0.1 instead: 0.05
 * bytes less again, 1-3% slower); leaves merged where the plan finds it cheaper 1.5-2.3 bytes less
 * again, 0.99-1.02 of the time (a four-triangle test weighed as 2 groups: 0.3 bytes less again,
 * up to 4% slower). That the plan finds the cheapest collapse under these costs is checked against
 * every collapse of small trees (collapse_plan_is_the_cheapest_of_every_collapse). */

/* plan[id][0] of an inner node whose subtree becomes one leaf (its slots in order). */
#define PLAN_LEAF 4

/* The first child id of binary inner node id (its sibling follows). */
static uint32_t pair_child(const kcc_node_pair *pairs, uint32_t id)
{
    return 2u * pairs[id >> 1].first[id & 1];
}

/* The slots binary node id's leaves cover, [*first, *end): its leftmost leaf's first to its
 * rightmost leaf's end (the leaves tile the slots in order). */
static void pair_slots(const kcc_node_pair *pairs, uint32_t id, uint32_t *first, uint32_t *end)
{
    uint32_t l = id, r = id;
    while (!pair_is_leaf(pairs, l))
        l = pair_child(pairs, l);
    while (!pair_is_leaf(pairs, r))
        r = pair_child(pairs, r) + 1u;
    *first = pairs[l >> 1].first[l & 1];
    *end = pairs[r >> 1].first[r & 1] + pairs[r >> 1].count[r & 1];
}

/* What a leaf of count triangles costs the plan: its area's share times its tests, four triangles
 * at a time, each weighed as KCC_COLLAPSE_TRI4_COST group tests. */
static float leaf_cost(float share, uint32_t count)
{
    return share * KCC_COLLAPSE_TRI4_COST * (float)((count + 3u) / 4u);
}

/* The cheapest split of j slots (2 .. 4) between inner node id's children l and l + 1, whose
 * costs with k slots are cost[l][k - 1] and cost[l + 1][k - 1]: returns the left's share (ties:
 * the smallest), its cost in *out. */
static uint8_t cheapest_split(const float (*cost)[4], uint32_t l, int j, float *out)
{
    uint8_t best = 1;
    *out = cost[l][0] + cost[l + 1][j - 2];
    for (int k = 2; k < j; ++k) {
        const float c = cost[l][k - 1] + cost[l + 1][j - k - 1];
        if (c < *out)
            *out = c, best = (uint8_t)k;
    }
    return best;
}

void kcc_tree_plan_collapse(const kcc_node_pair *pairs, uint32_t pair_count, float (*cost)[4],
                            uint8_t (*plan)[4])
{
    const double root = pair_is_leaf(pairs, 0) ? 0.0 : (double)pair_area(pairs, 0);
    /* Children have larger ids than their parent: descending ids see both children first. */
    for (uint32_t id = 2u * pair_count; id-- > 0;) {
        if (id == 1) {
            cost[id][0] = cost[id][1] = cost[id][2] = cost[id][3] = 0.0f;
            plan[id][0] = plan[id][1] = plan[id][2] = plan[id][3] = 0;
            continue;
        }
        const double area = (double)pair_area(pairs, id);
        const float share = root > 0.0 && area < root ? (float)(area / root) : 1.0f;
        if (pair_is_leaf(pairs, id)) {
            const float leaf = leaf_cost(share, pairs[id >> 1].count[id & 1]);
            cost[id][0] = cost[id][1] = cost[id][2] = cost[id][3] = leaf;
            plan[id][0] = plan[id][1] = plan[id][2] = plan[id][3] = 0;
            continue;
        }
        const uint32_t l = pair_child(pairs, id);
        float split;
        plan[id][0] = cheapest_split((const float(*)[4])cost, l, 4, &split); /* as a group */
        cost[id][0] = share + KCC_COLLAPSE_GROUP_COST + split;
        uint32_t first, end;
        pair_slots(pairs, id, &first, &end);
        if (id != 0 && end - first <= KCC_LEAF_MAX && leaf_cost(share, end - first) <= cost[id][0]) {
            cost[id][0] = leaf_cost(share, end - first);
            plan[id][0] = PLAN_LEAF;
        }
        for (int j = 2; j <= 4; ++j) { /* opened into j slots, or fewer where that costs less */
            const uint8_t k = cheapest_split((const float(*)[4])cost, l, j, &split);
            const bool opens = split < cost[id][j - 2];
            cost[id][j - 1] = opens ? split : cost[id][j - 2];
            plan[id][j - 1] = opens ? k : 0;
        }
    }
}

/* Appends to out (from n) the slots binary node id takes when given j of them: itself (a leaf, a
 * group of its own, or a leaf of its subtree's slots: PLAN_LEAF), or its children's (plan[id][j - 1]
 * for the left one; 0: as with j - 1). Returns the new count. */
static int planned_slots(const kcc_node_pair *pairs, const uint8_t (*plan)[4], uint32_t id, int j,
                         uint32_t out[4], int n)
{
    if (pair_is_leaf(pairs, id)) {
        out[n++] = id;
        return n;
    }
    while (j > 1 && plan[id][j - 1] == 0)
        --j;
    if (j == 1) {
        out[n++] = id;
        return n;
    }
    const uint32_t l = pair_child(pairs, id);
    const int k = plan[id][j - 1];
    n = planned_slots(pairs, plan, l, k, out, n);
    return planned_slots(pairs, plan, l + 1, j - k, out, n);
}

/* The up-to-four binary nodes that become the children of binary inner node `id`: as planned, or
 * greedily without a plan. */
static int open_children(const kcc_node_pair *pairs, const uint8_t (*plan)[4], uint32_t id,
                         uint32_t out[4])
{
    if (plan) {
        const uint32_t l = pair_child(pairs, id);
        const int k = plan[id][0];
        return planned_slots(pairs, plan, l + 1, 4 - k, out, planned_slots(pairs, plan, l, k, out, 0));
    }
    uint32_t f = pairs[id >> 1].first[id & 1];
    out[0] = 2 * f;
    out[1] = 2 * f + 1;
    int n = 2;
    while (n < 4) {
        int best = -1;
        float best_area = -1.0f;
        for (int i = 0; i < n; ++i) {
            if (pair_is_leaf(pairs, out[i]))
                continue;
            float a = pair_area(pairs, out[i]);
            if (best < 0 || a > best_area) {
                best = i;
                best_area = a;
            }
        }
        if (best < 0)
            break;
        uint32_t g = pairs[out[best] >> 1].first[out[best] & 1];
        for (int i = n; i > best + 1; --i)
            out[i] = out[i - 1];
        out[best] = 2 * g;
        out[best + 1] = 2 * g + 1;
        ++n;
    }
    return n;
}

/* Child i of a collapsed group: binary node `node`'s box, and either its leaf range or (an inner
 * node) the next group index, which it takes. */
static void collapse_slot(const kcc_node_pair *pairs, const uint8_t (*plan)[4], uint32_t node,
                          kcc_node4 *d, int i, uint32_t *quad_count)
{
    const kcc_node_pair *p = &pairs[node >> 1];
    const uint32_t c = node & 1;
    d->x[0][i] = p->x[0][c], d->x[1][i] = p->x[1][c];
    d->y[0][i] = p->y[0][c], d->y[1][i] = p->y[1][c];
    d->z[0][i] = p->z[0][c], d->z[1][i] = p->z[1][c];
    if (p->count[c] == 0 && plan && plan[node][0] == PLAN_LEAF) {
        uint32_t first, end;
        pair_slots(pairs, node, &first, &end);
        d->first[i] = first, d->count[i] = end - first;
        return;
    }
    d->first[i] = p->count[c] != 0 ? p->first[c] : (*quad_count)++;
    d->count[i] = p->count[c];
}

uint32_t kcc_tree_collapse(const kcc_node_pair *pairs, const uint8_t (*plan)[4], kcc_node4 *quads,
                           kcc_qnode4 *qgroups, uint32_t *stack)
{
    /* Quad 0 holds the root's children (or the root itself when it is a leaf). Groups are laid out
     * depth first: a group's inner children get consecutive group indices when it is filled, and
     * the first of them is filled next, so a root-to-leaf path walks forward through memory and
     * every subtree is contiguous. stack holds (binary node, group index) pairs. */
    uint32_t sp = 0, quad_count = 1, q = 0;
    uint32_t kids[4];
    int n;
    if (pair_is_leaf(pairs, 0)) {
        kids[0] = 0;
        n = 1;
    } else {
        n = open_children(pairs, plan, 0, kids);
    }
    for (;;) {
        uint32_t inner_node[4], inner_quad[4];
        int ninner = 0;
        kcc_node4 d;
        for (int i = 0; i < 4; ++i) {
            if (i >= n) {
                d.x[0][i] = d.y[0][i] = d.z[0][i] = INFINITY;
                d.x[1][i] = d.y[1][i] = d.z[1][i] = -INFINITY;
                d.first[i] = d.count[i] = 0;
                continue;
            }
            collapse_slot(pairs, plan, kids[i], &d, i, &quad_count);
            if (d.count[i] == 0) {
                inner_node[ninner] = kids[i];
                inner_quad[ninner++] = d.first[i];
            }
        }
        if (quads)
            quads[q] = d;
        if (qgroups)
            kcc_qnode4_encode(&d, n, &qgroups[q]);
        /* Last pushed is filled next: push in reverse slot order. */
        for (int j = ninner - 1; j >= 0; --j) {
            stack[2 * sp] = inner_node[j];
            stack[2 * sp + 1] = inner_quad[j];
            ++sp;
        }
        if (sp == 0)
            break;
        --sp;
        q = stack[2 * sp + 1];
        n = open_children(pairs, plan, stack[2 * sp], kids);
    }
    return quad_count;
}

/* ------------------------------------------------------------------------------------------------
 * Quantised groups (kcc_qnode4): outward rounding, checked with the decoder's own evaluation. */

/* The exponent field's range: a normal step, whose inverse 2^(127 - e) the box test in the group's
 * frame builds from the field 254 - e (kcc_pbox_qtest), so a normal inverse too. The encoder stays
 * far inside it (a group spans less than 2^129: e <= 249). */
enum { QNODE_STEPS = 255, QNODE_EXP_MIN = 1, QNODE_EXP_MAX = 253 };

/* Whether count q reaches v from base: decoded (kcc_qnode4_coord) and, where the product q * step
 * overflows (steps of 2^121 and more, a group spanning more than 3.39e38, whose decoded bound is
 * then +inf), in real arithmetic too, the bound the box test in the group's frame
 * (kcc_pbox_qtest) reads. */
static bool qnode_reaches(float base, float step, uint32_t q, float v)
{
    if (kcc_qnode4_coord(base, step, q) < v)
        return false;
    return (float)q * step < INFINITY || (double)base + (double)q * (double)step >= (double)v;
}

/* The smallest exponent field whose QNODE_STEPS steps from base reach top (qnode_reaches). */
static uint8_t qnode_exponent(float base, float top)
{
    int e = QNODE_EXP_MIN;
    const double per_step = ((double)top - (double)base) / QNODE_STEPS;
    if (per_step > 0.0) {
        int x;
        frexp(per_step, &x);       /* per_step < 2^x */
        e = x - 2 + 127;           /* one below: the loop settles it */
        e = e < QNODE_EXP_MIN ? QNODE_EXP_MIN : e > QNODE_EXP_MAX ? QNODE_EXP_MAX : e;
    }
    while (e < QNODE_EXP_MAX && !qnode_reaches(base, kcc_qnode4_step((uint8_t)e), QNODE_STEPS, top))
        ++e;
    return (uint8_t)e;
}

/* The step count whose decoded value bounds v from below (up = false) or above (up = true): the
 * nearest estimate in double, then stepped while the decoded value falls on the wrong side (an
 * upper bound: while it does not reach v, qnode_reaches). */
static uint8_t qnode_round(float base, float step, float v, bool up)
{
    const double t = ((double)v - (double)base) / (double)step;
    double r = up ? ceil(t) : floor(t);
    r = r < 0.0 ? 0.0 : r > QNODE_STEPS ? QNODE_STEPS : r;
    uint32_t q = (uint32_t)r;
    if (up)
        while (q < QNODE_STEPS && !qnode_reaches(base, step, q, v))
            ++q;
    else
        while (q > 0 && kcc_qnode4_coord(base, step, q) > v)
            --q;
    return (uint8_t)q;
}

void kcc_qnode4_encode(const kcc_node4 *g, int n, kcc_qnode4 *out)
{
    memset(out, 0, sizeof *out);
    out->slots = (uint8_t)((1u << n) - 1u);
    const float *const planes[3][2] = {{g->x[0], g->x[1]}, {g->y[0], g->y[1]}, {g->z[0], g->z[1]}};
    for (int k = 0; k < 3; ++k) {
        float base = planes[k][0][0], top = planes[k][1][0];
        for (int i = 1; i < n; ++i) {
            base = planes[k][0][i] < base ? planes[k][0][i] : base;
            top = planes[k][1][i] > top ? planes[k][1][i] : top;
        }
        out->base[k] = base;
        out->exp[k] = qnode_exponent(base, top);
        const float step = kcc_qnode4_step(out->exp[k]);
        for (int i = 0; i < n; ++i) {
            out->q[k][0][i] = qnode_round(base, step, planes[k][0][i], false);
            out->q[k][1][i] = qnode_round(base, step, planes[k][1][i], true);
        }
    }
    for (int i = 0; i < n; ++i) {
        out->first[i] = g->first[i];
        out->count[i] = (uint8_t)g->count[i];
    }
}

/* ------------------------------------------------------------------------------------------------
 * Validator: the invariants every query relies on, checked without allocating. */

/* A pending item of the validator's in-order walk: slot `slot` of group `group`, or (slot = -1)
 * every slot of it; depth counts groups from the root (group 0 at depth 1); lo, hi is the box of
 * whatever points to it (the mesh bounds for group 0). */
typedef struct check_item {
    uint32_t group;
    int32_t  slot;
    uint32_t depth;
    float    lo[3], hi[3];
} check_item;

/* Whether group g's own fields are well formed: children in slots 0 .. n - 1 (n >= 1), finite
 * bases, normal steps, each child's quantised lo at most its hi, and the empty slots and the
 * padding zero. */
static bool qnode_valid(const kcc_qnode4 *g)
{
    if ((g->slots != 1 && g->slots != 3 && g->slots != 7 && g->slots != 15) || g->pad != 0)
        return false;
    for (int k = 0; k < 3; ++k) {
        if (!isfinite(g->base[k]) || g->exp[k] < QNODE_EXP_MIN || g->exp[k] > QNODE_EXP_MAX)
            return false;
        for (int i = 0; i < 4; ++i)
            if ((g->slots >> i & 1) ? g->q[k][0][i] > g->q[k][1][i] : (g->q[k][0][i] | g->q[k][1][i]) != 0)
                return false;
    }
    for (int i = 0; i < 4; ++i)
        if (!(g->slots >> i & 1) && (g->first[i] != 0 || g->count[i] != 0))
            return false;
    return true;
}

/* Intersects the decoded box of slot i with the box of whatever points to the group (lo, hi in
 * out_lo, out_hi): what lies under the slot must lie in every box on its path, which is what the
 * walks rely on (a decoded box rounds outward by its own group's step, so it need not nest in its
 * parent's). */
static void slot_box(const kcc_node4 *q, int i, const float lo[3], const float hi[3],
                     float out_lo[3], float out_hi[3])
{
    const float qlo[3] = {q->x[0][i], q->y[0][i], q->z[0][i]};
    const float qhi[3] = {q->x[1][i], q->y[1][i], q->z[1][i]};
    for (int k = 0; k < 3; ++k) {
        out_lo[k] = qlo[k] > lo[k] ? qlo[k] : lo[k];
        out_hi[k] = qhi[k] < hi[k] ? qhi[k] : hi[k];
    }
}

/* A leaf: the next KCC_LEAF_MAX or fewer slots in walk order (the leaves tile the tree's slots in
 * order, so each live triangle is in exactly one), each live and inside the leaf's box. */
static bool leaf_valid(const kcc_mesh *m, uint32_t first, uint32_t count, const float lo[3],
                       const float hi[3], uint32_t *next_slot)
{
    if (first != *next_slot || count > KCC_LEAF_MAX || count > m->tree_triangles - first)
        return false;
    for (uint32_t s = first; s < first + count; ++s) {
        kcc_tri t;
        kcc_mesh_tri(m, s, &t);
        if (kcc_tri_is_degenerate(t.v[0], t.v[1], t.v[2]))
            return false;
        for (int c = 0; c < 3; ++c)
            for (int k = 0; k < 3; ++k)
                if (!(lo[k] <= t.v[c][k] && t.v[c][k] <= hi[k]))
                    return false;
    }
    *next_slot = first + count;
    return true;
}

/* The marks of the duplicate lists: each word's rank the marks before it, no mark past the tree's
 * slots, dup_sets marks in all, and the lists' starts rising strictly (each marked slot has a
 * copy) from 0 to duplicate_count. */
static bool dup_marks_valid(const kcc_mesh *m)
{
    const uint32_t words = (m->tree_triangles + 63u) / 64u, sets = m->dup_sets;
    if (!kcc_marks_valid(m->dup_marks, m->dup_rank, words, m->tree_triangles, sets))
        return false;
    if (sets > m->duplicate_count || kcc_index_at(m, m->dup_first, 0) != 0 ||
        kcc_index_at(m, m->dup_first, sets) != m->duplicate_count)
        return false;
    for (uint32_t r = 0; r < sets; ++r)
        if (kcc_index_at(m, m->dup_first, r) >= kcc_index_at(m, m->dup_first, r + 1u))
            return false;
    return true;
}

/* The duplicate lists: their marks sound; each listed index above that slot's representative and
 * above the one listed before it (that every input index is listed or stored once, links_valid
 * checks). */
static bool dup_lists_valid(const kcc_mesh *m)
{
    if ((m->dup_marks != NULL) != (m->duplicate_count > 0))
        return false;
    if (!m->dup_marks)
        return true;
    if (!dup_marks_valid(m))
        return false;
    for (uint32_t s = 0; s < m->tree_triangles; ++s) {
        uint32_t begin;
        const uint32_t listed = kcc_mesh_duplicates(m, s, &begin), end = begin + listed;
        uint32_t above = kcc_mesh_tri_id(m, s);
        for (uint32_t i = begin; i < end; ++i) {
            const uint32_t t = kcc_mesh_dup_id(m, i);
            if (t <= above)
                return false;
            above = t;
        }
    }
    return true;
}

/* The back links (KCC_LINK_STEPS): marks only on positions, ranks counting them, every link a
 * position; then position -> input a permutation (every entry in range, and the links lead from
 * each input back to the one position holding it, so no two hold the same). Linear: each walk
 * takes at most 2 KCC_LINK_STEPS steps. */
static bool links_valid(const kcc_mesh *m)
{
    const uint32_t n = m->triangle_count, links = m->link_count;
    if (!kcc_marks_valid(m->link_marks, m->link_rank, (n + 63u) / 64u, n, links))
        return false;
    for (uint32_t i = 0; i < links; ++i)
        if (kcc_index_at(m, m->links, i) >= n)
            return false;
    for (uint32_t p = 0; p < n; ++p)
        if (kcc_mesh_input_at(m, p) >= n)
            return false;
    for (uint32_t p = 0; p < n; ++p)
        if (kcc_mesh_position_of(m, kcc_mesh_input_at(m, p)) != p)
            return false;
    return true;
}

/* A mesh's vertex coding: float vertices stored, or tables whose code layout the value counts
 * give (kcc_mesh_table_vertex: each index in the bits after the axes before it, the fewest whole
 * bytes) and whose every vertex's indices name a stored value. */
static bool vertex_codes_valid(const kcc_mesh *m)
{
    const kcc_vertex_tables *t = m->tables;
    if (!t)
        return m->verts != NULL;
    uint32_t bits = 0;
    for (int k = 0; k < 3; ++k) {
        const uint32_t count = t->value_count[k];
        const uint32_t width = count > 1 ? 32u - (uint32_t)__builtin_clz(count - 1u) : 0u;
        if (count == 0 || count > KCC_MESH_TABLE_VALUES || t->code_shift[k] != bits ||
            t->code_mask[k] != (width ? UINT32_MAX >> (32u - width) : 0u) || !t->values[k])
            return false;
        bits += width;
    }
    if (!t->codes || t->code_bytes != (bits > 8u ? (bits + 7u) / 8u : 1u))
        return false;
    for (uint32_t v = 0; v < m->vertex_count; ++v) {
        const uint64_t code = kcc_load_le64(t->codes + (size_t)v * t->code_bytes);
        for (int k = 0; k < 3; ++k)
            if (((uint32_t)(code >> t->code_shift[k]) & t->code_mask[k]) >= t->value_count[k])
                return false;
    }
    return true;
}

/* The index maps: their width the one the triangle count gives (16-bit up to
 * KCC_MESH_NARROW_IDS), every corner offset a stored vertex and every vertex code a stored value
 * (checked before any triangle is read), the slots past the tree's holding exactly degenerate
 * triangles, the duplicate lists sound and every input triangle stored or listed once
 * (links_valid). */
static bool maps_valid(const kcc_mesh *m)
{
    if (m->tree_triangles > m->slot_count || m->slot_count > m->triangle_count ||
        m->triangle_count - m->slot_count != m->duplicate_count ||
        (m->tree_triangles == 0) != (m->quad_count == 0) || m->vertex_count > 3ull * m->slot_count ||
        m->narrow_ids != (m->triangle_count <= KCC_MESH_NARROW_IDS) || !vertex_codes_valid(m))
        return false;
    for (uint32_t s = 0; s < m->slot_count; ++s)
        for (int c = 0; c < 3; ++c)
            if ((uint64_t)m->corner_base[s / KCC_CORNER_BLOCK] + m->corners[s][c] >= m->vertex_count)
                return false;
    for (uint32_t s = m->tree_triangles; s < m->slot_count; ++s) {
        kcc_tri t;
        kcc_mesh_tri(m, s, &t);
        if (!kcc_tri_is_degenerate(t.v[0], t.v[1], t.v[2]))
            return false;
    }
    return dup_lists_valid(m) && links_valid(m);
}

/* Pushes the live slots of group `item->group` (last slot first, so they pop in order), each with
 * its box cut to the box of what points to the group; false when the group is malformed
 * (qnode_valid) or deeper than the queries' traversal stacks allow (3 pending entries per group
 * above it, plus 4). */
static bool push_slots(const kcc_mesh *m, const check_item *item, check_item *stack, uint32_t *sp)
{
    const kcc_qnode4 *g = &m->groups[item->group];
    if (3 * item->depth + 4 > KCC_TREE_STACK || *sp + 4 > KCC_TREE_STACK || !qnode_valid(g))
        return false;
    kcc_node4 scratch;
    const kcc_node4 *q = kcc_qnode4_decode(g, &scratch);
    for (int i = 3; i >= 0; --i) {
        if (!(g->slots >> i & 1))
            continue;
        check_item *c = &stack[*sp];
        slot_box(q, i, item->lo, item->hi, c->lo, c->hi);
        c->group = item->group;
        c->slot = i;
        c->depth = item->depth;
        ++*sp;
    }
    return true;
}

kcc_status kcc_mesh_validate(const kcc_mesh *mesh)
{
    if (!mesh)
        return KCC_ERR_NULL_ARGUMENT;
    if (mesh->hf)
        return kcc_hf_validate(mesh);
    if (!maps_valid(mesh))
        return KCC_ERR_CORRUPT;
    if (mesh->quad_count == 0)
        return KCC_OK;
    if (mesh->depth > KCC_TREE_MAX_DEPTH)
        return KCC_ERR_CORRUPT;
    check_item stack[KCC_TREE_STACK];
    check_item root = {0, -1, 1, {0}, {0}};
    memcpy(root.lo, mesh->bounds[0], sizeof root.lo);
    memcpy(root.hi, mesh->bounds[1], sizeof root.hi);
    uint32_t sp = 0, next_slot = 0;
    if (!push_slots(mesh, &root, stack, &sp))
        return KCC_ERR_CORRUPT;
    kcc_node4 decoded; /* the root's float copy, which the walks test in the root's place */
    if (memcmp(kcc_qnode4_decode(&mesh->groups[0], &decoded), &mesh->root, sizeof decoded) != 0)
        return KCC_ERR_CORRUPT;
    for (uint32_t g = 1; g <= kcc_mesh_top_count(mesh->quad_count); ++g) { /* the top groups' boxes */
        kcc_qnode4_decode(&mesh->groups[g], &decoded);
        if (memcmp(&decoded, &mesh->top[g - 1u], sizeof mesh->top[0]) != 0)
            return KCC_ERR_CORRUPT;
    }
    while (sp > 0) {
        const check_item item = stack[--sp];
        const kcc_qnode4 *q = &mesh->groups[item.group];
        const uint32_t first = q->first[item.slot], count = q->count[item.slot];
        bool ok;
        if (count != 0) {
            ok = leaf_valid(mesh, first, count, item.lo, item.hi, &next_slot);
        } else {
            /* Inner: its group comes later in the depth-first layout (no cycle). */
            const check_item inner = {first, -1, item.depth + 1, {item.lo[0], item.lo[1], item.lo[2]},
                                      {item.hi[0], item.hi[1], item.hi[2]}};
            ok = first > item.group && first < mesh->quad_count &&
                 push_slots(mesh, &inner, stack, &sp);
        }
        if (!ok)
            return KCC_ERR_CORRUPT;
    }
    return next_slot == mesh->tree_triangles ? KCC_OK : KCC_ERR_CORRUPT;
}
