/* world_neighbours.c: each character's neighbours for a step: the region its step may reach, the
 * characters whose regions overlap it (found through a grid of the regions rebuilt every step) and
 * the body pieces whose broadphase proxies overlap it (the broadphase's query). Allocates nothing. */
#include "collide_internal.h" /* KCC_SSE */
#include "world_internal.h"

/// How far the gathers of a move by d (controller.c: gather_move, gather_around; m) reach past the
/// box where the move starts: sideways, below its feet and above its head.
typedef struct move_reach {
    float side, below, above;
} move_reach;

/// A move (the start-overlap push, then n sub-moves of d / n: n = 1 unless it walks further than
/// the box's narrower half width w, when n = ceil(|d_h| / w) <= 8; taken here whether or not it
/// walks) gathers, each sub-move from where the one before left the box (inside what that one
/// gathered, since every query of a move lies in its list's region: the KCC_DEBUG check of
/// kcc_local_select), with s the skin, g the ground snap:
/// - gather_move: its start box grown by |d_h| / n + |d_u| / n + 10 s + 1 cm on every side
///   (what its swept legs travel, a skin of look-ahead and four nudges of a skin each, per chain),
///   and by its rise + s above, max(g, step_height) + s below; the rise (walk_rise) is at most
///   step_height + |d_h| / n * tan(max slope), and at most 2 half heights - 2 s, or step_height;
/// - the rare paths' gather_around, around a box inside the first: a steep lip's fall (pad and
///   below g + 3 s + 1 cm each, so 2 (g + 3 s + 1 cm) below), the stair look-ahead (at most w + 2 s
///   ahead, its pad 2 s + 1 cm, g + 5 s + 2 cm below), both the rise + s above their pad;
/// - the start-overlap push: it gathers around its start for its own step of at most
///   max_push_out P (sqrt(2) P + 10 s + 1 cm on every side, since its sideways and vertical
///   lengths add up, and the rise + s above, max(g, step_height) + s below), takes the box at most
///   P + 10 s + 1 cm, then the move gathers around where it left the box.
/// The sum over the sub-moves bounds the reach on every side; guarded by the KCC_DEBUG check of
/// kcc_local_gather_cached (test: a_fast_slide_stops_against_a_character_far_off).
void kcc_world_step_reach_init(step_reach *out, const kcc_character *ch)
{
    const kcc_character_desc *desc = &ch->desc;
    const int up = kcc_up_axis_index(desc->up_axis);
    const float skin = desc->skin_width, snap = desc->ground_snap, step = desc->step_height;
    float half_width = desc->half_extents[up == 0 ? 1 : 0];
    for (int k = 0; k < 3; ++k)
        if (k != up)
            half_width = kcc_minf(half_width, desc->half_extents[k]);
    const float cos_max = ch->cos_max_slope, sin_max = sqrtf(kcc_maxf(0.0f, 1.0f - cos_max * cos_max));
    const float run = sin_max > 1e-6f ? step * cos_max / sin_max : 0.0f; /* the stair look-ahead's */
    const float look = kcc_minf(run + 2.0f * skin, half_width) + 2.0f * skin + 0.01f;
    const float lip = snap + 3.0f * skin + 0.01f, nudges = 10.0f * skin + 0.01f;
    out->half_width = half_width;
    out->push = desc->max_push_out + nudges;
    out->push_side = 1.41421356f * desc->max_push_out + nudges;
    out->push_below = out->push_side + kcc_maxf(snap, step) + skin;
    out->push_above = out->push_side + skin;
    out->side = nudges + kcc_maxf(lip, look);
    out->below = nudges + kcc_maxf(kcc_maxf(snap, step) + skin, 2.0f * lip);
    out->above = nudges + skin + lip;
    out->step = step;
    out->slope = sin_max / cos_max; /* max_slope_deg <= 89: cos_max > 0 */
    out->cap = 2.0f * desc->half_extents[up] - 2.0f * skin;
    out->up = up;
    out->up_is_high = kcc_up_axis_sign(desc->up_axis) > 0.0f;
}

/// The reach of a move by d of a character whose desc gave r (kcc_world_step_reach_init).
static move_reach move_reach_of(const step_reach *r, const float d[3])
{
    float side2 = 0.0f;
    for (int k = 0; k < 3; ++k)
        side2 += k != r->up ? d[k] * d[k] : 0.0f;
    const float side = sqrtf(side2), travel = side + fabsf(d[r->up]);
    const float moves = (float)kcc_walk_parts(side, r->half_width); /* as if it walked */
    const float rise = kcc_maxf(r->step, kcc_minf(r->step + side / moves * r->slope, r->cap));
    move_reach out;
    out.side = kcc_maxf(r->push_side, r->push + travel + moves * r->side);
    out.below = kcc_maxf(r->push_below, r->push + travel + moves * r->below);
    out.above = kcc_maxf(r->push_above + rise, r->push + travel + moves * (r->above + rise));
    return out;
}

/// The region a character's step may reach: its box anywhere along the carry by the body it stands
/// on when that body moved (`ground`, the body's motion over the step at the box centre) or by the
/// character it stands on (the ride sweeps it there, or short of it), grown by how far the gathers
/// of its move reach (move_reach_of) and a rounding margin. Every box a move of the step queries
/// lies inside it, so the neighbour lists (what overlaps it) hold everything the move can meet.
void kcc_world_step_region(const world_character *wc, const struct kcc_world_characters *cs,
                           const mover_motion *ground, const float box[2][3], float out[2][3])
{
    vec3 carry = {0.0f, 0.0f, 0.0f};
    if (ground) {
        vec3 to;
        carried_point(&ground->start, &ground->end, wc->ch.position, to);
        glm_vec3_sub(to, (float *)wc->ch.position, carry);
    } else {
        kcc_world_character_carry(cs, wc, carry);
    }
    const move_reach r = move_reach_of(&wc->reach, cs->displacements[wc - cs->slots]);
    const int up = wc->reach.up;
    /* the rounding of the region's and the gathers' sums, a few ulps of the magnitudes in play on
       each axis (the centre's and the carry's; the half extents, at most 100 m, fit in 1 mm) */
    const float *p = wc->ch.position;
    const float margin = 1e-3f + 0x1p-19f * (fabsf(p[0]) + fabsf(p[1]) + fabsf(p[2]) + fabsf(carry[0]) +
                                             fabsf(carry[1]) + fabsf(carry[2]));
    for (int k = 0; k < 3; ++k) {
        const float low = k != up ? r.side : wc->reach.up_is_high ? r.below : r.above;
        const float high = k != up ? r.side : wc->reach.up_is_high ? r.above : r.below;
        out[0][k] = box[0][k] + kcc_minf(0.0f, carry[k]) - low - margin;
        out[1][k] = box[1][k] + kcc_maxf(0.0f, carry[k]) + high + margin;
    }
}

/* ------------------------------------------------------------------------------------------------
 * The region grid (region_grid in world_internal.h) */

/// bucket_of of a large region (kept apart, tested against every character).
#define LARGE_REGION UINT32_MAX
/// Cell coordinates are clamped to +-2^30: a monotone map, so far regions share the edge cells.
#define CELL_LIMIT 1073741824.0f
#define GRID_ALIGN 64
/// Floats past the end of the regions' sorted corners (region_grid.lo, hi): a four-wide test of the
/// last candidates reads up to three beyond them.
#define GRID_PAD 4u

static void *grid_take(char *base, size_t *at, size_t bytes)
{
    *at = (*at + GRID_ALIGN - 1) / GRID_ALIGN * GRID_ALIGN;
    void *p = base ? base + *at : NULL;
    *at += bytes;
    return p;
}

/// Buckets there are room for: a power of two, at least 64 and 4 a character. The grid's build
/// clears and sums them all every step on the calling thread, and a query reads the candidates
/// that the torus folds onto its cells from elsewhere: against 8 a character, at 1,000 characters
/// on ctf_inyard and wrackdm17 the build costs 41 instructions a character less, the lists (in
/// parallel) 32 more (callgrind; the same at 10k, where the regions span fewer cells than that).
static uint32_t bucket_count_for(uint32_t characters)
{
    uint32_t buckets = 64;
    while (buckets < 4u * characters)
        buckets <<= 1;
    return buckets;
}

size_t kcc_world_region_grid_layout(region_grid *grid, char *base, size_t at, uint32_t capacity)
{
    const size_t n = capacity, words = n * sizeof(uint32_t), floats = n * sizeof(float);
    region_grid g;
    g.bucket_start = grid_take(base, &at, ((size_t)bucket_count_for(capacity) + 1) * sizeof(uint32_t));
    g.bucket_of = grid_take(base, &at, words);
    g.sorted = grid_take(base, &at, words);
    g.position = grid_take(base, &at, words);
    g.found = grid_take(base, &at, words);
    g.large = grid_take(base, &at, words);
    g.cells = grid_take(base, &at, 3 * words);
    g.block_stats = grid_take(base, &at, ((size_t)capacity / KCC_REGION_BLOCK + 1) * sizeof(float[8]));
    for (int k = 0; k < 3; ++k) {
        g.lo[k] = grid_take(base, &at, floats + GRID_PAD * sizeof(float));
        g.hi[k] = grid_take(base, &at, floats + GRID_PAD * sizeof(float));
    }
    if (grid) {
        g.large_count = 0;
        g.bits[0] = g.bits[1] = g.bits[2] = 2;
        for (int k = 0; k < 3; ++k)
            g.inv_cell[k] = g.reach[k] = 1.0f;
        *grid = g;
    }
    return at;
}

/// The cells of coordinates x[0..2] (out[3] unused): floor(x[k] * inv_cell[k]), the product
/// clamped to +-CELL_LIMIT first (a monotone map of x); four lanes at once with SSE2, the same
/// product, clamp and floor.
static void cells_of(const float x[3], const float inv_cell[3], int32_t out[4])
{
#if KCC_SSE
    const __m128 p = _mm_mul_ps(_mm_set_ps(0.0f, x[2], x[1], x[0]),
                                _mm_set_ps(0.0f, inv_cell[2], inv_cell[1], inv_cell[0]));
    const __m128 c = _mm_min_ps(_mm_max_ps(p, _mm_set1_ps(-CELL_LIMIT)), _mm_set1_ps(CELL_LIMIT));
    const __m128i t = _mm_cvttps_epi32(c); /* toward zero; one less below zero unless c is whole */
    _mm_storeu_si128((__m128i *)(void *)out,
                     _mm_add_epi32(t, _mm_castps_si128(_mm_cmpgt_ps(_mm_cvtepi32_ps(t), c))));
#else
    for (int k = 0; k < 3; ++k) {
        const float c = kcc_minf(kcc_maxf(x[k] * inv_cell[k], -CELL_LIMIT), CELL_LIMIT);
        const int32_t t = (int32_t)c; /* toward zero; one less below zero unless c is whole */
        out[k] = t - (int32_t)((float)t > c);
    }
    out[3] = 0;
#endif
}

/// The bucket of cell (x, y, z): its coordinates wrapped into a torus of 2^bits[k] cells on each
/// axis (x lowest), so that cells less than 4 apart on every axis never share a bucket and a row of
/// cells along x sits in consecutive buckets.
static uint32_t bucket_of_cell(const region_grid *g, int32_t x, int32_t y, int32_t z)
{
    const uint32_t *bits = g->bits;
    return ((uint32_t)x & ((1u << bits[0]) - 1u)) | ((uint32_t)y & ((1u << bits[1]) - 1u)) << bits[0] |
           ((uint32_t)z & ((1u << bits[2]) - 1u)) << (bits[0] + bits[1]);
}

/// The torus: on each axis as many bits as the regions' low corners span cells (at least 2), the
/// largest cut first while they sum to more than `bits` (the buckets there are room for).
static void torus_bits(region_grid *g, const int32_t cell_lo[3], const int32_t cell_hi[3], uint32_t bits)
{
    for (int k = 0; k < 3; ++k) {
        const int64_t span = (int64_t)cell_hi[k] - cell_lo[k] + 1;
        g->bits[k] = 2;
        while (g->bits[k] < 24 && ((int64_t)1 << g->bits[k]) < span)
            ++g->bits[k];
    }
    while (g->bits[0] + g->bits[1] + g->bits[2] > bits) {
        int widest = 0;
        for (int k = 1; k < 3; ++k)
            widest = g->bits[k] > g->bits[widest] ? k : widest;
        --g->bits[widest];
    }
}

/// A region larger than `limit` on some axis.
static bool region_large(const float r[2][3], const float limit[3])
{
    return r[1][0] - r[0][0] > limit[0] || r[1][1] - r[0][1] > limit[1] || r[1][2] - r[0][2] > limit[2];
}

/// Marks the regions larger than `limit` on some axis (bucket_of LARGE_REGION, listed in large);
/// edge and coord: the largest extent on each axis and coordinate among the others.
static void mark_large_regions(struct kcc_world_characters *cs, const float limit[3], float edge[3],
                               float *coord)
{
    region_grid *g = &cs->grid;
    for (uint32_t i = 0; i < cs->live_count; ++i) {
        const float(*r)[3] = (const float(*)[3])cs->regions[cs->live[i]];
        if (region_large(r, limit)) {
            g->bucket_of[i] = LARGE_REGION;
            g->large[g->large_count++] = i;
            continue;
        }
        for (int k = 0; k < 3; ++k) {
            edge[k] = kcc_maxf(edge[k], r[1][k] - r[0][k]);
            *coord = kcc_maxf(*coord, kcc_maxf(fabsf(r[0][k]), fabsf(r[1][k])));
        }
    }
}

void kcc_world_region_stats(struct kcc_world_characters *cs, uint32_t begin, uint32_t end)
{
    KCC_ASSERT(begin % KCC_REGION_BLOCK == 0);
    for (uint32_t b = begin; b < end; b += KCC_REGION_BLOCK) {
        float *st = cs->grid.block_stats[b / KCC_REGION_BLOCK];
        memset(st, 0, sizeof(float[8]));
        const uint32_t last = end - b > KCC_REGION_BLOCK ? b + KCC_REGION_BLOCK : end;
        for (uint32_t i = b; i < last; ++i) {
            const float(*r)[3] = (const float(*)[3])cs->regions[cs->live[i]];
            for (int k = 0; k < 3; ++k) {
                st[k] += r[1][k] - r[0][k];
                st[3 + k] = kcc_maxf(st[3 + k], r[1][k] - r[0][k]);
                st[6] = kcc_maxf(st[6], kcc_maxf(fabsf(r[0][k]), fabsf(r[1][k])));
            }
        }
    }
}

/// The reach: the largest extent on each axis among the regions no larger than twice the mean (the
/// others are large: bucket_of LARGE_REGION, listed in large), plus a margin of a few ulps of the largest coordinate, so that a region
/// overlapping region r has its low corner at or above r's low corner less the reach, as rounded.
/// The cell edge is the reach along x and twice it along y and z: a query's cells then span at most
/// 2 on y and z (4 rows of buckets, where an edge equal to the reach gives up to 9: a row costs more
/// than the candidates the larger cells add) and up to 3 along x, consecutive buckets in a row.
/// The sums, largest extents and coordinates come from the snapshot's blocks (block_stats, summed
/// in block order, so the same for any workers); only when some block holds a large region are
/// the regions walked here (usually none is).
static void grid_cells(struct kcc_world_characters *cs)
{
    region_grid *g = &cs->grid;
    float mean[3] = {0.0f, 0.0f, 0.0f}, edge[3] = {0.0f, 0.0f, 0.0f}, coord = 0.0f, large_limit[3];
    const uint32_t blocks = (cs->live_count + KCC_REGION_BLOCK - 1) / KCC_REGION_BLOCK;
    for (uint32_t b = 0; b < blocks; ++b)
        for (int k = 0; k < 3; ++k) {
            mean[k] += g->block_stats[b][k];
            edge[k] = kcc_maxf(edge[k], g->block_stats[b][3 + k]);
            coord = kcc_maxf(coord, g->block_stats[b][6]);
        }
    bool any_large = false;
    for (int k = 0; k < 3; ++k) {
        large_limit[k] = 2.0f * mean[k] / (float)cs->live_count;
        any_large |= edge[k] > large_limit[k];
    }
    memset(g->bucket_of, 0, cs->live_count * sizeof *g->bucket_of);
    if (any_large) {
        edge[0] = edge[1] = edge[2] = coord = 0.0f;
        mark_large_regions(cs, large_limit, edge, &coord);
    }
    for (int k = 0; k < 3; ++k) {
        g->reach[k] = kcc_maxf(edge[k] + (coord + edge[k]) * 0x1p-20f, 1e-3f);
        g->inv_cell[k] = 1.0f / (k == 0 ? g->reach[k] : 2.0f * g->reach[k]);
    }
}

/// The cell of each regular region's low corner (the large ones grid_cells marked aside) and the
/// range of cells they span.
static void grid_cells_of_regions(const struct kcc_world_characters *cs, int32_t (*cells)[3],
                                  int32_t cell_lo[3], int32_t cell_hi[3])
{
    const region_grid *g = &cs->grid;
    for (int k = 0; k < 3; ++k)
        cell_lo[k] = INT32_MAX, cell_hi[k] = INT32_MIN;
    for (uint32_t i = 0; i < cs->live_count; ++i) {
        if (g->bucket_of[i] == LARGE_REGION)
            continue;
        int32_t cell[4];
        cells_of(cs->regions[cs->live[i]][0], g->inv_cell, cell);
        for (int k = 0; k < 3; ++k) {
            cells[i][k] = cell[k];
            cell_lo[k] = cell[k] < cell_lo[k] ? cell[k] : cell_lo[k];
            cell_hi[k] = cell[k] > cell_hi[k] ? cell[k] : cell_hi[k];
        }
    }
}

void kcc_world_build_region_grid(struct kcc_world_characters *cs)
{
    region_grid *g = &cs->grid;
    const uint32_t n = cs->live_count;
    cs->near.room = n > 0 ? (uint32_t)(2u * (uint64_t)cs->pair_capacity / n) : 0u;
    cs->near.both_sides = cs->near.room == 0;
    g->large_count = 0;
    if (n == 0)
        return;
    grid_cells(cs);
    int32_t cell_lo[3], cell_hi[3];
    int32_t(*cells)[3] = (int32_t(*)[3])(void *)g->cells;
    grid_cells_of_regions(cs, cells, cell_lo, cell_hi);
    uint32_t bits = 0;
    while (1u << bits < bucket_count_for(n))
        ++bits;
    torus_bits(g, cell_lo, cell_hi, bits);
    const uint32_t buckets = 1u << (g->bits[0] + g->bits[1] + g->bits[2]);
    memset(g->bucket_start, 0, ((size_t)buckets + 1) * sizeof(uint32_t));
    for (uint32_t i = 0; i < n; ++i)
        if (g->bucket_of[i] != LARGE_REGION) {
            g->bucket_of[i] = bucket_of_cell(g, cells[i][0], cells[i][1], cells[i][2]);
            ++g->bucket_start[g->bucket_of[i]];
        }
    for (uint32_t b = 1; b <= buckets; ++b) /* each bucket's end, then its start as it is filled */
        g->bucket_start[b] += g->bucket_start[b - 1];
    for (uint32_t i = n; i-- > 0;) {
        const uint32_t b = g->bucket_of[i];
        if (b == LARGE_REGION)
            continue;
        const uint32_t at = --g->bucket_start[b];
        const float(*r)[3] = (const float(*)[3])cs->regions[cs->live[i]];
        g->sorted[at] = cs->live[i];
        g->position[i] = at;
        for (int k = 0; k < 3; ++k) {
            g->lo[k][at] = r[0][k];
            g->hi[k][at] = r[1][k];
        }
    }
}

/// The largest region grid a worker reads through before its lists (kcc_world_warm_region_grid):
/// half of a core's second-level cache of 2 MB. A larger grid (about 400k characters and more)
/// would only push out of it what the worker's own characters need.
#define KCC_GRID_WARM_MAX ((size_t)1 << 20)

void kcc_world_warm_region_grid(const struct kcc_world_characters *cs)
{
    const region_grid *g = &cs->grid;
    const size_t n = cs->live_count, buckets = (size_t)1 << (g->bits[0] + g->bits[1] + g->bits[2]);
    const size_t starts = (buckets + 1) * sizeof *g->bucket_start, column = n * sizeof(float);
    if (starts + n * sizeof *g->sorted + 6 * column > KCC_GRID_WARM_MAX)
        return;
    kcc_touch_lines(g->bucket_start, starts);
    kcc_touch_lines(g->sorted, n * sizeof *g->sorted);
    for (int k = 0; k < 3; ++k) {
        kcc_touch_lines(g->lo[k], column);
        kcc_touch_lines(g->hi[k], column);
    }
}

/// Appends entry to out (kept when below room); returns the new count.
static inline uint32_t put_entry(uint32_t *out, uint32_t room, uint32_t found, uint32_t entry)
{
    if (found < room)
        out[found] = entry;
    return found + 1;
}

/// The regions overlap (touching counts, as the broadphase's boxes).
static inline bool regions_overlap(const float a[2][3], const float b[2][3])
{
    return a[0][0] <= b[1][0] && b[0][0] <= a[1][0] && a[0][1] <= b[1][1] && b[0][1] <= a[1][1] &&
           a[0][2] <= b[1][2] && b[0][2] <= a[1][2];
}

/// One character's query of the region grid: its region (and, for SSE2, its corners broadcast)
/// and its slot, which it does not list.
typedef struct region_query {
    const float(*region)[3];
    uint32_t self;
#if KCC_SSE
    __m128 lo[3], hi[3];
#endif
} region_query;

/// Candidates at..end tested one by one, the list's room checked.
static uint32_t run_neighbours_checked(const region_grid *g, const region_query *q, uint32_t at,
                                       uint32_t end, uint32_t *out, uint32_t room, uint32_t found)
{
    const float(*r)[3] = q->region;
    for (; at < end; ++at)
        if (r[0][0] <= g->hi[0][at] && g->lo[0][at] <= r[1][0] && r[0][1] <= g->hi[1][at] &&
            g->lo[1][at] <= r[1][1] && r[0][2] <= g->hi[2][at] && g->lo[2][at] <= r[1][2] &&
            g->sorted[at] != q->self)
            found = put_entry(out, room, found, g->sorted[at]);
    return found;
}

#if KCC_SSE
/// Bit j set when candidate at + j's region overlaps the query's (touching counts).
static inline int overlap4(const region_grid *g, const region_query *q, uint32_t at)
{
    __m128 in = _mm_castsi128_ps(_mm_set1_epi32(-1));
    for (int k = 0; k < 3; ++k)
        in = _mm_and_ps(in, _mm_and_ps(_mm_cmple_ps(q->lo[k], _mm_loadu_ps(g->hi[k] + at)),
                                       _mm_cmple_ps(_mm_loadu_ps(g->lo[k] + at), q->hi[k])));
    return _mm_movemask_ps(in);
}

/// Appends the candidates at + j of mask's bits j but the query's own slot to out; returns the new count.
static inline uint32_t put_overlapping(const region_grid *g, const region_query *q, uint32_t at, int mask,
                                       uint32_t *out, uint32_t found)
{
    for (; mask != 0; mask &= mask - 1) {
        const uint32_t slot = g->sorted[at + (uint32_t)__builtin_ctz((unsigned)mask)];
        out[found] = slot;
        found += slot != q->self;
    }
    return found;
}
#endif

/// Candidates at..end whose regions overlap the query's, written to out (room for them all): four
/// at a time (SSE2; the last four's lanes past end masked off: the arrays have GRID_PAD floats to
/// spare), without branches on the outcomes, which are unpredictable.
static uint32_t run_neighbours(const region_grid *g, const region_query *q, uint32_t at, uint32_t end,
                               uint32_t *out, uint32_t found)
{
#if KCC_SSE
    for (const uint32_t whole = at + ((end - at) & ~3u); at < whole; at += 4)
        found = put_overlapping(g, q, at, overlap4(g, q, at), out, found);
    if (at < end)
        found = put_overlapping(g, q, at, overlap4(g, q, at) & ((1 << (end - at)) - 1), out, found);
#else
    const float(*r)[3] = q->region;
    for (; at < end; ++at) {
        const uint32_t hit = (uint32_t)(r[0][0] <= g->hi[0][at]) & (uint32_t)(g->lo[0][at] <= r[1][0]) &
                             (uint32_t)(r[0][1] <= g->hi[1][at]) & (uint32_t)(g->lo[1][at] <= r[1][1]) &
                             (uint32_t)(r[0][2] <= g->hi[2][at]) & (uint32_t)(g->lo[2][at] <= r[1][2]) &
                             (uint32_t)(g->sorted[at] != q->self);
        out[found] = g->sorted[at];
        found += hit;
    }
#endif
    return found;
}

/// The runs of candidates live character i's query reads: the buckets of the cells from its low
/// corner less the reach to its high corner (at most 3 an axis, in distinct buckets; 2 on y and z
/// but for rounding), each row
/// along x one run of consecutive buckets, or two where it wraps around the torus, less the
/// positions before `from`; empty runs left out. Returns how many runs (begin[k], end[k]:
/// candidate positions), *candidates their total.
static uint32_t query_runs(const region_grid *g, const float r[2][3], uint32_t from, uint32_t begin[18],
                           uint32_t end[18], uint32_t *candidates)
{
    const float low[3] = {r[0][0] - g->reach[0], r[0][1] - g->reach[1], r[0][2] - g->reach[2]};
    int32_t lo[4], hi[4];
    cells_of(low, g->inv_cell, lo);
    cells_of(r[1], g->inv_cell, hi);
    for (int k = 0; k < 3; ++k)
        KCC_ASSERT(hi[k] - lo[k] <= 2);
    /* every row starts at the same x in the torus: x0, and runs `first` buckets before it wraps */
    const uint32_t row = (uint32_t)(hi[0] - lo[0]) + 1u, x_cells = 1u << g->bits[0];
    const uint32_t x0 = bucket_of_cell(g, lo[0], 0, 0), first = x0 + row <= x_cells ? row : x_cells - x0;
    uint32_t runs = 0, total = 0;
    for (int32_t z = lo[2]; z <= hi[2]; ++z)
        for (int32_t y = lo[1]; y <= hi[1]; ++y) {
            const uint32_t b = bucket_of_cell(g, 0, y, z); /* the row's bucket at x = 0 */
            const uint32_t row_from[2] = {b + x0, b}, to[2] = {b + x0 + first, b + (row - first)};
            for (int part = 0; part < 1 + (first < row); ++part) {
                const uint32_t first_at = g->bucket_start[row_from[part]];
                begin[runs] = first_at > from ? first_at : from;
                end[runs] = g->bucket_start[to[part]];
                const bool some = end[runs] > begin[runs];
                total += some ? end[runs] - begin[runs] : 0u;
                runs += some;
            }
        }
    *candidates = total;
    return runs;
}

/// The characters whose regions overlap live character i's that it finds itself: those the grid
/// lists in the cells its query reads (query_runs) and the large ones; every one when i's own
/// region is large. Unless both_sides, each pair is found once: a regular region finds the
/// regular ones after it in the grid's order and every large one; a large region finds the large
/// ones after it in the live order.
static uint32_t character_neighbours(const struct kcc_world_characters *cs, uint32_t i, bool both_sides,
                                     uint32_t *out, uint32_t room, uint32_t found)
{
    const region_grid *g = &cs->grid;
    region_query q = {.region = (const float(*)[3])cs->regions[cs->live[i]], .self = cs->live[i]};
    if (g->bucket_of[i] == LARGE_REGION) {
        const uint32_t *others = both_sides ? NULL : g->large;
        const uint32_t count = both_sides ? cs->live_count : g->large_count;
        for (uint32_t k = 0; k < count; ++k) {
            const uint32_t j = others ? others[k] : k;
            if ((both_sides ? j != i : j > i) &&
                regions_overlap(q.region, (const float(*)[3])cs->regions[cs->live[j]]))
                found = put_entry(out, room, found, cs->live[j]);
        }
        return found;
    }
#if KCC_SSE
    for (int k = 0; k < 3; ++k)
        q.lo[k] = _mm_set1_ps(q.region[0][k]), q.hi[k] = _mm_set1_ps(q.region[1][k]);
#endif
    uint32_t begin[18], end[18], candidates;
    const uint32_t from = both_sides ? 0u : g->position[i] + 1u;
    const uint32_t runs = query_runs(g, q.region, from, begin, end, &candidates);
    const bool fits = candidates <= room - (found < room ? found : room);
    for (uint32_t k = 0; k < runs; ++k)
        found = fits ? run_neighbours(g, &q, begin[k], end[k], out, found)
                     : run_neighbours_checked(g, &q, begin[k], end[k], out, room, found);
    for (uint32_t k = 0; k < g->large_count; ++k) {
        const uint32_t j = g->large[k];
        if (regions_overlap(q.region, (const float(*)[3])cs->regions[cs->live[j]]))
            found = put_entry(out, room, found, cs->live[j]);
    }
    return found;
}

/// Puts a list's pieces in source order (by their place in the bodies' triangles: what the world
/// source's walk merges them by); the broadphase lists them by proxy. An insertion sort: a region
/// meets few pieces.
static void sort_pieces(const kcc_world *world, uint32_t *e, uint32_t pieces)
{
    for (uint32_t i = 1; i < pieces; ++i) {
        const uint32_t v = e[i];
        const uint64_t key = kcc_world_piece_order(world, v);
        uint32_t j = i;
        for (; j > 0 && kcc_world_piece_order(world, e[j - 1]) > key; --j)
            e[j] = e[j - 1];
        e[j] = v;
    }
}

void kcc_world_find_neighbours(const kcc_world *world, struct kcc_world_characters *cs, uint32_t begin,
                               uint32_t end)
{
    neighbour_lists *near = &cs->near;
    for (uint32_t i = begin; i < end; ++i) {
        const uint32_t slot = cs->live[i];
        uint32_t room = near->count[slot];   /* laid out end to end: the count found before */
        if (near->room > 0) {
            near->first[slot] = i * near->room;
            room = near->room;
        }
        uint32_t *out = near->entries + near->first[slot];
        const float(*r)[3] = (const float(*)[3])cs->regions[slot];
        const uint32_t pieces = kcc_world_pieces_near(world, r, out, room);
        const uint32_t found = character_neighbours(cs, i, near->both_sides, out, room, pieces);
        near->pieces[slot] = pieces;
        near->count[slot] = cs->grid.found[slot] = found;
        if (found <= room)
            sort_pieces(world, out, pieces);
    }
}

/// Two regions overlap or not, so a pair one character found belongs in the other's list too
/// (neighbour_lists_equal_brute_force checks every list against brute force over the regions).
bool kcc_world_mirror_neighbours(struct kcc_world_characters *cs)
{
    neighbour_lists *near = &cs->near;
    const uint32_t room = near->room;
    for (uint32_t i = 0; i < cs->live_count; ++i)
        if (near->count[cs->live[i]] > room)
            return false; /* (a list cut short: its pairs are not all known) */
    bool fits = true;
    for (uint32_t i = 0; i < cs->live_count; ++i) {
        const uint32_t slot = cs->live[i];
        const uint32_t *e = near->entries + near->first[slot];
        for (uint32_t k = near->pieces[slot]; k < cs->grid.found[slot]; ++k) {
            const uint32_t other = e[k], at = near->count[other]++;
            if (at < room)
                near->entries[near->first[other] + at] = slot;
            fits &= at < room;
        }
    }
    return fits;
}

bool kcc_world_neighbours_refit(struct kcc_world_characters *cs)
{
    neighbour_lists *near = &cs->near;
    near->all = false;
    bool fits = true;
    for (uint32_t i = 0; i < cs->live_count; ++i)
        fits &= near->count[cs->live[i]] <= near->room;
    if (fits)
        return false;
    uint64_t at = 0;
    for (uint32_t i = 0; i < cs->live_count; ++i) {
        near->first[cs->live[i]] = (uint32_t)at;
        at += near->count[cs->live[i]];
        if (at > 2u * (uint64_t)cs->pair_capacity) {
            near->all = true;
            return false;
        }
    }
    near->room = 0;
    return true;
}

