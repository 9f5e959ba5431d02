/* heightfield.c: owns heightfield meshes (kcc_heightfield_build): the grid of corner heights, its
 * hole mask and min/max pyramid in the mesh's single block, and the walks the mesh queries dispatch
 * to, which hand the implied triangles to the tree mesh's own per-leaf visitors. Never allocates
 * after the build. */
#include <math.h>
#include <string.h>

#include "heightfield_internal.h"

#define BLOCK_ALIGN 64

static size_t round_up(size_t x)
{
    return (x + BLOCK_ALIGN - 1) / BLOCK_ALIGN * BLOCK_ALIGN;
}

static inline float corner_x(const struct kcc_hf *hf, uint64_t i)
{
    return hf->origin[0] + (float)i * hf->spacing[0];
}

static inline float corner_z(const struct kcc_hf *hf, uint64_t j)
{
    return hf->origin[2] + (float)j * hf->spacing[1];
}

static inline bool cell_is_hole(const struct kcc_hf *hf, uint32_t c)
{
    return hf->holes && (hf->holes[c >> 5] >> (c & 31u) & 1u);
}

/* Cell (i, j)'s two triangles, in the documented corner order. */
static void cell_tris(const struct kcc_hf *hf, uint32_t i, uint32_t j, kcc_tri out[2])
{
    const float x0 = corner_x(hf, i), x1 = corner_x(hf, i + 1u);
    const float z0 = corner_z(hf, j), z1 = corner_z(hf, j + 1u);
    const float *row0 = hf->y + (size_t)j * hf->columns + i, *row1 = row0 + hf->columns;
    const float p00[3] = {x0, row0[0], z0}, p10[3] = {x1, row0[1], z0};
    const float p01[3] = {x0, row1[0], z1}, p11[3] = {x1, row1[1], z1};
    memcpy(out[0].v[0], p00, sizeof p00);
    memcpy(out[0].v[1], p01, sizeof p01);
    memcpy(out[0].v[2], p11, sizeof p11);
    memcpy(out[1].v[0], p00, sizeof p00);
    memcpy(out[1].v[1], p11, sizeof p11);
    memcpy(out[1].v[2], p10, sizeof p10);
}

/* The lowest and highest of cell (i, j)'s four corner heights. */
static void cell_range(const struct kcc_hf *hf, uint32_t i, uint32_t j, float *lo, float *hi)
{
    const float *row0 = hf->y + (size_t)j * hf->columns + i, *row1 = row0 + hf->columns;
    float a = row0[0] < row0[1] ? row0[0] : row0[1], b = row1[0] < row1[1] ? row1[0] : row1[1];
    float c = row0[0] > row0[1] ? row0[0] : row0[1], d = row1[0] > row1[1] ? row1[0] : row1[1];
    *lo = a < b ? a : b;
    *hi = c > d ? c : d;
}

/* ------------------------------------------------------------------------------------------------
 * Accessors. */

bool kcc_hf_triangle(const kcc_mesh *mesh, uint32_t id, kcc_tri *out)
{
    const struct kcc_hf *hf = mesh->hf;
    if (id >= mesh->triangle_count || cell_is_hole(hf, id >> 1))
        return false;
    const uint32_t c = id >> 1;
    kcc_tri two[2];
    cell_tris(hf, c % hf->cells_x, c / hf->cells_x, two);
    *out = two[id & 1u];
    return true;
}

/* The view's corners: batch triangle i's are its record's three, floats 9 i .. 9 i + 8 of view->tris
 * read as vertices 3 i .. 3 i + 2 (the ids after them pad the four-float loads): each block of
 * sixteen triangles counts from vertex 48 b, its triangles' corners at offsets 0, 1, .. 47. */
#define VIEW_TRI(i) {3 * (i), 3 * (i) + 1, 3 * (i) + 2}
#define VIEW_TRI4(i) VIEW_TRI(i), VIEW_TRI((i) + 1), VIEW_TRI((i) + 2), VIEW_TRI((i) + 3)
#define VIEW_BLOCK VIEW_TRI4(0), VIEW_TRI4(4), VIEW_TRI4(8), VIEW_TRI4(12)
#define VIEW_BLOCK4 VIEW_BLOCK, VIEW_BLOCK, VIEW_BLOCK, VIEW_BLOCK
_Static_assert(KCC_HF_BATCH == 128 && KCC_CORNER_BLOCK == 16, "the view's tables: 8 blocks of 16");
static const uint8_t view_corners[KCC_HF_BATCH][3] = {VIEW_BLOCK4, VIEW_BLOCK4};
static const uint32_t view_base[KCC_HF_BATCH / KCC_CORNER_BLOCK] = {0u, 48u, 96u, 144u, 192u, 240u,
                                                                    288u, 336u};

const kcc_mesh *kcc_hf_view_init(kcc_hf_view *view, const kcc_mesh *hf)
{
    memset(&view->mesh, 0, sizeof view->mesh);
    view->mesh.verts = (float(*)[3])(void *)view->tris;
    view->mesh.corner_base = (uint32_t *)(uintptr_t)view_base;
    view->mesh.corners = (uint8_t(*)[3])(uintptr_t)view_corners;
    view->mesh.tri_id.wide = view->ids;
    view->mesh.coord_scale = hf->coord_scale;
    view->mesh.triangle_count = hf->triangle_count;
    return &view->mesh;
}

/* Appends cell (i, j)'s two triangles to the view's n. */
static uint32_t view_add_cell(kcc_hf_view *view, const struct kcc_hf *hf, uint32_t i, uint32_t j,
                              uint32_t n)
{
    const uint32_t c = j * hf->cells_x + i;
    cell_tris(hf, i, j, &view->tris[n]);
    view->ids[n] = 2u * c;
    view->ids[n + 1u] = 2u * c + 1u;
    return n + 2u;
}

/* ------------------------------------------------------------------------------------------------
 * The box walk: rows of cells under the box, blocks culled by their height range. */

/* The cells [first, end) whose span along one axis may reach [lo, hi] (two cells of margin over
 * the double estimate: the float corners are monotonic and within a cell of it; each cell's exact
 * box is tested after). */
static void cell_span(float origin, float spacing, uint32_t cells, float lo, float hi,
                      uint32_t *first, uint32_t *end)
{
    const double a = floor(((double)lo - origin) / spacing) - 2.0;
    const double b = floor(((double)hi - origin) / spacing) + 3.0;
    *first = a <= 0.0 ? 0u : a >= (double)cells ? cells : (uint32_t)a;
    *end = b <= 0.0 ? 0u : b >= (double)cells ? cells : (uint32_t)b;
}

/* The cells [*first, *end) along x (axis 0) or z (axis 2) whose corners' span reaches [lo, hi]:
 * cell_span's estimate trimmed by the float corners (cell i spans corner i .. corner i + 1). */
static void cells_reaching(const struct kcc_hf *hf, int axis, float lo, float hi, uint32_t *first,
                           uint32_t *end)
{
    const int s = axis == 0 ? 0 : 1;
    const uint32_t cells = axis == 0 ? hf->cells_x : hf->cells_z;
    cell_span(hf->origin[axis], hf->spacing[s], cells, lo, hi, first, end);
    while (*first < *end && (axis == 0 ? corner_x(hf, *first + 1u) : corner_z(hf, *first + 1u)) < lo)
        ++*first;
    while (*end > *first && (axis == 0 ? corner_x(hf, *end - 1u) : corner_z(hf, *end - 1u)) > hi)
        --*end;
}

void kcc_hf_box_begin(kcc_hf_box_iter *it, const kcc_mesh *mesh, const float lo[3], const float hi[3])
{
    const struct kcc_hf *hf = mesh->hf;
    uint32_t j0;
    it->mesh = mesh;
    memcpy(it->lo, lo, sizeof it->lo);
    memcpy(it->hi, hi, sizeof it->hi);
    cells_reaching(hf, 0, lo[0], hi[0], &it->i0, &it->i1);
    cells_reaching(hf, 2, lo[2], hi[2], &j0, &it->j1);
    if (it->i0 >= it->i1)
        j0 = it->j1;
    it->i = it->i0;
    it->j = j0;
}

/* Whether cell (i, j), live, has a box (its corners' bounds) that overlaps the iterator's. */
static bool cell_overlaps(const kcc_hf_box_iter *it, const struct kcc_hf *hf, uint32_t i, uint32_t j)
{
    float ylo, yhi;
    cell_range(hf, i, j, &ylo, &yhi);
    return corner_x(hf, i) <= it->hi[0] && corner_x(hf, i + 1u) >= it->lo[0] &&
           corner_z(hf, j) <= it->hi[2] && corner_z(hf, j + 1u) >= it->lo[2] &&
           ylo <= it->hi[1] && yhi >= it->lo[1];
}

uint32_t kcc_hf_box_next(kcc_hf_box_iter *it, kcc_hf_view *view)
{
    const struct kcc_hf *hf = it->mesh->hf;
    const float *blocks = hf->range[0];
    const uint32_t bw = hf->level_w[0];
    uint32_t n = 0;
    while (it->j < it->j1 && n + 2u <= KCC_HF_BATCH) {
        const uint32_t i = it->i, j = it->j;
        const float *r = blocks + 2u * ((size_t)(j / KCC_HF_BLOCK) * bw + i / KCC_HF_BLOCK);
        if (!(r[0] <= it->hi[1] && r[1] >= it->lo[1])) {
            /* the block's heights miss the box: skip the rest of its row */
            const uint32_t next = (i / KCC_HF_BLOCK + 1u) * KCC_HF_BLOCK;
            it->i = next < it->i1 ? next : it->i1;
        } else {
            if (!cell_is_hole(hf, j * hf->cells_x + i) && cell_overlaps(it, hf, i, j))
                n = view_add_cell(view, hf, i, j, n);
            ++it->i;
        }
        if (it->i >= it->i1) {
            it->i = it->i0;
            ++it->j;
        }
    }
    return n;
}

void kcc_hf_visit_all(const kcc_mesh *mesh, kcc_hf_view *view, kcc_leaf_visit visit, void *ctx)
{
    const float lo[3] = {-FLT_MAX, -FLT_MAX, -FLT_MAX}, hi[3] = {FLT_MAX, FLT_MAX, FLT_MAX};
    kcc_hf_box_iter it;
    kcc_hf_box_begin(&it, mesh, lo, hi);
    for (uint32_t n; (n = kcc_hf_box_next(&it, view)) > 0;)
        visit(ctx, 0, n);
}

/* ------------------------------------------------------------------------------------------------
 * The nearest-first walk: the pyramid's nodes as the four children of a tree group, so the tree's
 * slab test (kcc_pray_test) and order (kcc_descend) decide; a child's first is its index in its
 * level, its count the level + 1. */

static void lane_empty(kcc_node4 *q, int lane)
{
    q->x[0][lane] = q->y[0][lane] = q->z[0][lane] = INFINITY;
    q->x[1][lane] = q->y[1][lane] = q->z[1][lane] = -INFINITY;
    q->first[lane] = 0;
    q->count[lane] = 1;
}

/* Lane `lane` of q: pyramid node (bx, bz) of level `level`, or empty when every cell under it is a
 * hole. */
static void lane_node(const struct kcc_hf *hf, uint32_t level, uint32_t bx, uint32_t bz,
                      kcc_node4 *q, int lane)
{
    const uint32_t index = bz * hf->level_w[level] + bx;
    const float *r = hf->range[level] + 2u * (size_t)index;
    if (!(r[0] <= r[1])) {
        lane_empty(q, lane);
        return;
    }
    const uint64_t span = (uint64_t)KCC_HF_BLOCK << level;
    const uint64_t i0 = bx * span, j0 = bz * span;
    const uint64_t i1 = i0 + span < hf->cells_x ? i0 + span : hf->cells_x;
    const uint64_t j1 = j0 + span < hf->cells_z ? j0 + span : hf->cells_z;
    q->x[0][lane] = corner_x(hf, i0), q->x[1][lane] = corner_x(hf, i1);
    q->y[0][lane] = r[0], q->y[1][lane] = r[1];
    q->z[0][lane] = corner_z(hf, j0), q->z[1][lane] = corner_z(hf, j1);
    q->first[lane] = index;
    q->count[lane] = level + 1u;
}

/* The four children (2 x 2, those that exist) of node `index` of level `level` (> 0). */
static void children_group(const struct kcc_hf *hf, uint32_t level, uint32_t index, kcc_node4 *q)
{
    const uint32_t w = hf->level_w[level], bx = index % w, bz = index / w, cl = level - 1u;
    for (int lane = 0; lane < 4; ++lane) {
        const uint32_t cx = 2u * bx + (uint32_t)(lane & 1), cz = 2u * bz + (uint32_t)(lane >> 1);
        if (cx < hf->level_w[cl] && cz < hf->level_h[cl])
            lane_node(hf, cl, cx, cz, q, lane);
        else
            lane_empty(q, lane);
    }
}

/* Gathers the live cells of [i0, i1) x [j0, j1) (at most KCC_HF_BATCH / 2 of them) whose boxes the
 * slab enters within limit, four cells to a slab test. Returns the view's triangle count. */
static uint32_t rect_gather(const struct kcc_hf *hf, const uint32_t cells[4], const kcc_pray *r,
                            float limit, kcc_hf_view *view)
{
    const uint32_t i0 = cells[0], i1 = cells[1], j0 = cells[2], j1 = cells[3];
    uint32_t n = 0;
    for (uint32_t j = j0; j < j1; ++j) {
        for (uint32_t i = i0; i < i1; i += 4) {
            kcc_node4 q;
            for (int lane = 0; lane < 4; ++lane) {
                const uint32_t c = i + (uint32_t)lane;
                if (c >= i1 || cell_is_hole(hf, j * hf->cells_x + c)) {
                    lane_empty(&q, lane);
                    continue;
                }
                q.x[0][lane] = corner_x(hf, c), q.x[1][lane] = corner_x(hf, c + 1u);
                cell_range(hf, c, j, &q.y[0][lane], &q.y[1][lane]);
                q.z[0][lane] = corner_z(hf, j), q.z[1][lane] = corner_z(hf, j + 1u);
            }
            float t[4];
            const int mask = kcc_pray_test(r, &q, limit, t);
            for (int lane = 0; lane < 4; ++lane)
                if (mask >> lane & 1)
                    n = view_add_cell(view, hf, i + (uint32_t)lane, j, n);
        }
    }
    return n;
}

/* The cells of block `index` (level 0). */
static void block_cells(const struct kcc_hf *hf, uint32_t index, uint32_t out[4])
{
    const uint32_t w = hf->level_w[0];
    out[0] = index % w * KCC_HF_BLOCK, out[2] = index / w * KCC_HF_BLOCK;
    out[1] = out[0] + KCC_HF_BLOCK < hf->cells_x ? out[0] + KCC_HF_BLOCK : hf->cells_x;
    out[3] = out[2] + KCC_HF_BLOCK < hf->cells_z ? out[2] + KCC_HF_BLOCK : hf->cells_z;
}

/* The cells under the slab's segment up to limit (its start grown as the slab is, plus the
 * segment's reach along x and z, plus two cells: a superset, as each cell is tested after). False
 * when they are more than one batch holds: the pyramid then culls them. A short segment (a ground
 * probe, a move's sweep) so skips the descent. */
static bool short_reach(const struct kcc_hf *hf, const kcc_pray *r, float limit, uint32_t out[4])
{
    float lo[2], hi[2];
    for (int a = 0; a < 2; ++a) {
        const int k = a * 2;
        /* 1 / dir overflows only for |dir| below 2^-126: the segment then reaches at most
         * limit * 2^-126 either way */
        const bool flat = !isfinite(r->inv[k]);
        const float reach = flat ? limit * 0x1p-126f : limit / r->inv[k];
        /* a point behind the start by less than |dir| 2^-150 has its t underflow to -0, which the
           slab and triangle tests take as 0: the start grows by that much (twice, for 1 / inv's
           rounding) on both sides (hf_ray_from_just_past_a_tiny_grid_hits_as_the_tree_does) */
        const float behind = flat ? 0.0f : fabsf(1.0f / r->inv[k]) * 0x1p-149f;
        const float o0 = r->org_n[k] < r->org_f[k] ? r->org_n[k] : r->org_f[k];
        const float o1 = r->org_n[k] < r->org_f[k] ? r->org_f[k] : r->org_n[k];
        lo[a] = o0 - behind - (flat ? reach : reach < 0.0f ? -reach : 0.0f);
        hi[a] = o1 + behind + (flat ? reach : reach > 0.0f ? reach : 0.0f);
        if (!isfinite(lo[a]) || !isfinite(hi[a]))
            return false;
    }
    cells_reaching(hf, 0, lo[0], hi[0], &out[0], &out[1]);
    cells_reaching(hf, 2, lo[1], hi[1], &out[2], &out[3]);
    return (uint64_t)(out[1] - out[0]) * (out[3] - out[2]) <= KCC_HF_BATCH / 2;
}

void kcc_hf_walk_nearest(const kcc_mesh *mesh, kcc_hf_view *view, const kcc_pray *r, float limit,
                         kcc_leaf_visit visit, void *ctx)
{
    const struct kcc_hf *hf = mesh->hf;
    uint32_t cells[4];
    if (short_reach(hf, r, limit, cells)) {
        const uint32_t n = rect_gather(hf, cells, r, limit, view);
        if (n > 0)
            visit(ctx, 0, n);
        return;
    }
    kcc_stack_entry stack[3 * KCC_HF_MAX_LEVELS + 8], cur;
    float entry_t[4];
    kcc_node4 q;
    lane_node(hf, hf->levels - 1u, 0, 0, &q, 0);
    lane_empty(&q, 1), lane_empty(&q, 2), lane_empty(&q, 3);
    int mask = kcc_pray_test(r, &q, limit, entry_t);
    if (mask == 0)
        return;
    uint32_t sp = kcc_descend(stack, 0, &q, mask, entry_t, &cur);
    for (;;) {
        if (cur.count > 1u) {
            children_group(hf, cur.count - 1u, cur.first, &q);
            mask = kcc_pray_test(r, &q, limit, entry_t);
            if (mask != 0) {
                KCC_ASSERT(sp + 3 <= 3 * KCC_HF_MAX_LEVELS + 8);
                sp = kcc_descend(stack, sp, &q, mask, entry_t, &cur);
                continue;
            }
        } else {
            block_cells(hf, cur.first, cells);
            const uint32_t n = rect_gather(hf, cells, r, limit, view);
            if (n > 0)
                limit = visit(ctx, 0, n);
        }
        do {
            if (sp == 0)
                return;
            cur = stack[--sp];
        } while (!(cur.t <= limit));
    }
}

/* ------------------------------------------------------------------------------------------------
 * Build. */

/* The desc's fields and heights (nothing is allocated before this passes). */
static kcc_status check_desc(const kcc_heightfield_desc *d)
{
    if (!d->heights)
        return KCC_ERR_NO_VERTICES;
    if (d->columns < 2u || d->rows < 2u)
        return KCC_ERR_NO_TRIANGLES;
    if ((d->allocator.alloc == NULL) != (d->allocator.free == NULL))
        return KCC_ERR_BAD_DESC;
    if (!isfinite(d->origin[0]) || !isfinite(d->origin[1]) || !isfinite(d->origin[2]) ||
        !isfinite(d->spacing[0]) || !isfinite(d->spacing[1]))
        return KCC_ERR_NON_FINITE;
    if (!(d->spacing[0] > 0.0f) || !(d->spacing[1] > 0.0f))
        return KCC_ERR_BAD_DESC;
    if ((uint64_t)(d->columns - 1u) * (d->rows - 1u) * 2u > KCC_MESH_MAX_TRIANGLES)
        return KCC_ERR_TOO_LARGE;
    const size_t samples = (size_t)d->columns * d->rows;
    for (size_t s = 0; s < samples; ++s)
        if (!isfinite(d->heights[s]) || !isfinite(d->origin[1] + d->heights[s]))
            return KCC_ERR_NON_FINITE;
    return KCC_OK;
}

/* Pyramid level sizes from the block counts up to a single node; returns the level count. */
static uint32_t pyramid_sizes(uint32_t cells_x, uint32_t cells_z, uint32_t w[KCC_HF_MAX_LEVELS],
                              uint32_t h[KCC_HF_MAX_LEVELS], uint64_t *out_nodes)
{
    uint32_t levels = 0;
    uint64_t nodes = 0;
    w[0] = (cells_x + KCC_HF_BLOCK - 1u) / KCC_HF_BLOCK;
    h[0] = (cells_z + KCC_HF_BLOCK - 1u) / KCC_HF_BLOCK;
    for (;;) {
        nodes += (uint64_t)w[levels] * h[levels];
        if (w[levels] == 1u && h[levels] == 1u)
            break;
        w[levels + 1u] = (w[levels] + 1u) / 2u;
        h[levels + 1u] = (h[levels] + 1u) / 2u;
        ++levels;
    }
    *out_nodes = nodes;
    return levels + 1u;
}

/* The mesh's single block: struct kcc_mesh, struct kcc_hf, the corner heights, the hole mask (when
 * there are holes) and the pyramid's ranges. NULL when the allocator fails. */
static kcc_mesh *hf_alloc(const kcc_allocator *al, const kcc_heightfield_desc *d, bool any_hole)
{
    struct kcc_hf shape = {.columns = d->columns, .rows = d->rows, .cells_x = d->columns - 1u,
                           .cells_z = d->rows - 1u};
    uint64_t nodes;
    shape.levels = pyramid_sizes(shape.cells_x, shape.cells_z, shape.level_w, shape.level_h, &nodes);
    const uint64_t cells = (uint64_t)shape.cells_x * shape.cells_z;
    const uint64_t off_hf = round_up(sizeof(kcc_mesh));
    const uint64_t off_y = off_hf + round_up(sizeof(struct kcc_hf));
    const uint64_t off_holes = off_y + (uint64_t)d->columns * d->rows * sizeof(float);
    const uint64_t hole_words = any_hole ? (cells + 31u) / 32u : 0u;
    const uint64_t off_range = off_holes + hole_words * sizeof(uint32_t);
    const uint64_t total = off_range + nodes * 2u * sizeof(float);
    if (total > (uint64_t)SIZE_MAX)
        return NULL;
    char *block = al->alloc((size_t)total, BLOCK_ALIGN, al->user);
    if (!block)
        return NULL;
    kcc_mesh *m = (kcc_mesh *)(void *)block;
    struct kcc_hf *hf = (struct kcc_hf *)(void *)(block + off_hf);
    memset(m, 0, sizeof *m);
    *hf = shape;
    hf->y = (const float *)(void *)(block + off_y);
    hf->holes = any_hole ? (const uint32_t *)(void *)(block + off_holes) : NULL;
    float *range = (float *)(void *)(block + off_range);
    for (uint32_t l = 0; l < hf->levels; ++l) {
        hf->range[l] = range;
        range += 2u * (size_t)hf->level_w[l] * hf->level_h[l];
    }
    m->allocator = *al;
    m->block_bytes = (size_t)total;
    m->hf = hf;
    m->triangle_count = (uint32_t)(2u * cells);
    return m;
}

/* Corner heights (origin y added) and the hole mask from the desc. */
static void fill_grid(struct kcc_hf *hf, const kcc_heightfield_desc *d)
{
    float *y = (float *)(uintptr_t)hf->y;
    for (size_t s = 0, n = (size_t)d->columns * d->rows; s < n; ++s)
        y[s] = d->origin[1] + d->heights[s];
    memcpy(hf->origin, d->origin, sizeof hf->origin);
    memcpy(hf->spacing, d->spacing, sizeof hf->spacing);
    if (!hf->holes)
        return;
    uint32_t *bits = (uint32_t *)(uintptr_t)hf->holes;
    const uint32_t cells = hf->cells_x * hf->cells_z;
    memset(bits, 0, sizeof(uint32_t) * ((cells + 31u) / 32u));
    for (uint32_t c = 0; c < cells; ++c)
        if (d->holes[c])
            bits[c >> 5] |= 1u << (c & 31u);
}

/* The pyramid's ranges: each block's over its live cells' corners, each level above over its
 * children's; (+inf, -inf) where nothing is live. */
static void fill_pyramid(struct kcc_hf *hf)
{
    for (uint32_t l = 0; l < hf->levels; ++l) {
        float *r = (float *)(uintptr_t)hf->range[l];
        for (size_t k = 0, n = (size_t)hf->level_w[l] * hf->level_h[l]; k < n; ++k)
            r[2 * k] = INFINITY, r[2 * k + 1] = -INFINITY;
    }
    float *blocks = (float *)(uintptr_t)hf->range[0];
    for (uint32_t j = 0; j < hf->cells_z; ++j)
        for (uint32_t i = 0; i < hf->cells_x; ++i) {
            if (cell_is_hole(hf, j * hf->cells_x + i))
                continue;
            float lo, hi, *r = blocks + 2u * ((size_t)(j / KCC_HF_BLOCK) * hf->level_w[0] +
                                              i / KCC_HF_BLOCK);
            cell_range(hf, i, j, &lo, &hi);
            r[0] = lo < r[0] ? lo : r[0];
            r[1] = hi > r[1] ? hi : r[1];
        }
    for (uint32_t l = 1; l < hf->levels; ++l) {
        const float *below = hf->range[l - 1u];
        float *up = (float *)(uintptr_t)hf->range[l];
        for (uint32_t bz = 0; bz < hf->level_h[l - 1u]; ++bz)
            for (uint32_t bx = 0; bx < hf->level_w[l - 1u]; ++bx) {
                const float *c = below + 2u * ((size_t)bz * hf->level_w[l - 1u] + bx);
                float *r = up + 2u * ((size_t)(bz / 2u) * hf->level_w[l] + bx / 2u);
                r[0] = c[0] < r[0] ? c[0] : r[0];
                r[1] = c[1] > r[1] ? c[1] : r[1];
            }
    }
}

/* Bounds, coord_scale and the live triangle count over the live cells; false when one of their
 * triangles is degenerate (kcc_tri_is_degenerate: float cannot represent it). */
static bool fill_bounds(kcc_mesh *m)
{
    const struct kcc_hf *hf = m->hf;
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    uint32_t live = 0;
    for (uint32_t j = 0; j < hf->cells_z; ++j)
        for (uint32_t i = 0; i < hf->cells_x; ++i) {
            if (cell_is_hole(hf, j * hf->cells_x + i))
                continue;
            kcc_tri t[2];
            cell_tris(hf, i, j, t);
            for (int k = 0; k < 2; ++k) {
                if (kcc_tri_is_degenerate(t[k].v[0], t[k].v[1], t[k].v[2]))
                    return false;
                for (int c = 0; c < 3; ++c)
                    for (int a = 0; a < 3; ++a) {
                        lo[a] = t[k].v[c][a] < lo[a] ? t[k].v[c][a] : lo[a];
                        hi[a] = t[k].v[c][a] > hi[a] ? t[k].v[c][a] : hi[a];
                    }
            }
            live += 2u;
        }
    float scale = 0.0f;
    for (int a = 0; a < 3 && live > 0; ++a) {
        m->bounds[0][a] = lo[a], m->bounds[1][a] = hi[a];
        scale = fabsf(lo[a]) > scale ? fabsf(lo[a]) : scale;
        scale = fabsf(hi[a]) > scale ? fabsf(hi[a]) : scale;
    }
    m->coord_scale = scale;
    m->tree_triangles = m->slot_count = live;
    return true;
}

/* FNV-1a over the grid's shape, heights and holes. */
static uint64_t content_key(const struct kcc_hf *hf)
{
    uint64_t h = 0xcbf29ce484222325ull;
    uint32_t head[7] = {hf->columns, hf->rows};
    memcpy(head + 2, hf->origin, sizeof hf->origin);
    memcpy(head + 5, hf->spacing, sizeof hf->spacing);
    for (int i = 0; i < 7; ++i)
        h = (h ^ head[i]) * 0x100000001b3ull;
    for (size_t s = 0, n = (size_t)hf->columns * hf->rows; s < n; ++s) {
        uint32_t w;
        memcpy(&w, &hf->y[s], sizeof w);
        h = (h ^ w) * 0x100000001b3ull;
    }
    for (uint32_t k = 0, n = hf->holes ? (hf->cells_x * hf->cells_z + 31u) / 32u : 0u; k < n; ++k)
        h = (h ^ hf->holes[k]) * 0x100000001b3ull;
    return h;
}

kcc_status kcc_heightfield_build(const kcc_heightfield_desc *desc, kcc_mesh **out_mesh)
{
    if (!desc || !out_mesh)
        return KCC_ERR_NULL_ARGUMENT;
    kcc_status st = check_desc(desc);
    if (st != KCC_OK)
        return st;
    const uint32_t cells = (desc->columns - 1u) * (desc->rows - 1u);
    uint32_t holes = 0;
    for (uint32_t c = 0; desc->holes && c < cells; ++c)
        holes += desc->holes[c] ? 1u : 0u;
    if (holes == cells)
        return KCC_ERR_NO_TRIANGLES;
    const kcc_allocator al = kcc_allocator_or_default(&desc->allocator);
    kcc_mesh *m = hf_alloc(&al, desc, holes > 0);
    if (!m)
        return KCC_ERR_OUT_OF_MEMORY;
    struct kcc_hf *hf = (struct kcc_hf *)(uintptr_t)m->hf;
    fill_grid(hf, desc);
    if (!fill_bounds(m)) {
        al.free(m, al.user);
        return KCC_ERR_BAD_DESC;
    }
    fill_pyramid(hf);
    m->node_count = 0;
    for (uint32_t l = 0; l < hf->levels; ++l)
        m->node_count += hf->level_w[l] * hf->level_h[l];
    m->leaf_count = hf->level_w[0] * hf->level_h[0];
    m->depth = hf->levels;
    m->key = kcc_fresh_key(content_key(hf));
    KCC_ASSERT(kcc_hf_validate(m) == KCC_OK);
    *out_mesh = m;
    return KCC_OK;
}

/* ------------------------------------------------------------------------------------------------
 * Stats and validation. */

void kcc_hf_stats(const kcc_mesh *mesh, kcc_mesh_stats *out)
{
    const struct kcc_hf *hf = mesh->hf;
    const size_t cells = (size_t)hf->cells_x * hf->cells_z;
    memset(out, 0, sizeof *out);
    out->triangles = mesh->triangle_count;
    out->degenerate = mesh->triangle_count - mesh->tree_triangles;
    out->nodes = mesh->node_count;
    out->leaves = mesh->leaf_count;
    out->depth = mesh->depth;
    out->tree_bytes = (size_t)mesh->node_count * 2u * sizeof(float) +
                      (hf->holes ? (cells + 31u) / 32u * sizeof(uint32_t) : 0u);
    out->vertex_bytes = (size_t)hf->columns * hf->rows * sizeof(float);
}

/* Whether range r (lo, hi) contains [lo, hi]. */
static bool range_holds(const float *r, float lo, float hi)
{
    return r[0] <= lo && r[1] >= hi;
}

kcc_status kcc_hf_validate(const kcc_mesh *mesh)
{
    const struct kcc_hf *hf = mesh->hf;
    if (hf->cells_x != hf->columns - 1u || hf->cells_z != hf->rows - 1u || hf->levels == 0 ||
        hf->levels > KCC_HF_MAX_LEVELS || mesh->triangle_count != 2u * hf->cells_x * hf->cells_z ||
        hf->level_w[hf->levels - 1u] != 1u || hf->level_h[hf->levels - 1u] != 1u)
        return KCC_ERR_CORRUPT;
    uint32_t live = 0;
    for (uint32_t j = 0; j < hf->cells_z; ++j)
        for (uint32_t i = 0; i < hf->cells_x; ++i) {
            if (cell_is_hole(hf, j * hf->cells_x + i))
                continue;
            float lo, hi;
            cell_range(hf, i, j, &lo, &hi);
            const float *r = hf->range[0] + 2u * ((size_t)(j / KCC_HF_BLOCK) * hf->level_w[0] +
                                                  i / KCC_HF_BLOCK);
            if (!isfinite(lo) || !isfinite(hi) || !range_holds(r, lo, hi))
                return KCC_ERR_CORRUPT;
            live += 2u;
        }
    for (uint32_t l = 1; l < hf->levels; ++l)
        for (uint32_t bz = 0; bz < hf->level_h[l - 1u]; ++bz)
            for (uint32_t bx = 0; bx < hf->level_w[l - 1u]; ++bx) {
                const float *c = hf->range[l - 1u] + 2u * ((size_t)bz * hf->level_w[l - 1u] + bx);
                const float *r = hf->range[l] + 2u * ((size_t)(bz / 2u) * hf->level_w[l] + bx / 2u);
                if (c[0] <= c[1] && !range_holds(r, c[0], c[1]))
                    return KCC_ERR_CORRUPT;
            }
    return live == mesh->tree_triangles && live > 0 ? KCC_OK : KCC_ERR_CORRUPT;
}
