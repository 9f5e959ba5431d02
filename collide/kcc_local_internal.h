/* kcc_local_internal.h: the one contract between collide/ and the controller: the short list of
 * triangles a move runs on (kcc_local; in the move's frame: the world's, or the world seen through
 * an axis map), the neighbourhood source that fills it, the character's cache of it, and the
 * queries the move asks of it (rays down, overlaps, swept boxes, the start-overlap push).
 * collide/local.c implements it; never installed. */
#ifndef KCC_LOCAL_INTERNAL_H
#define KCC_LOCAL_INTERNAL_H

#include "kcc_collide.h"
#include "kcc_world.h"

/// Hot helpers are forced inline where the compiler allows it (gcc and clang both do); rare paths
/// are kept out of line, so they do not crowd the hot code around them.
#if defined(__GNUC__)
#define KCC_HOT static inline __attribute__((always_inline))
#define KCC_RARE static __attribute__((noinline, cold))
#else
#define KCC_HOT static inline
#define KCC_RARE static
#endif

/// Asks the memory for the line holding p, ahead of a read (a hint: no fault, no effect on any
/// result; nothing where the compiler has no such builtin).
static inline void kcc_prefetch(const void *p)
{
#if defined(__GNUC__)
    __builtin_prefetch(p);
#else
    (void)p;
#endif
}

/// Reads a byte of every line of [p, p + bytes), in address order, so that the lines come into
/// this core's cache with as many misses in flight as it allows (a hint can be dropped when the
/// core's line buffers are full; a read is not). No effect on any result.
static inline void kcc_touch_lines(const void *p, size_t bytes)
{
    for (size_t at = 0; at < bytes; at += 64)
        (void)*((const volatile unsigned char *)p + at);
}

/// min/max without libm calls (fminf/fmaxf are not inlined without -ffinite-math-only). Inputs are
/// finite here.
static inline float kcc_minf(float a, float b) { return a < b ? a : b; }
static inline float kcc_maxf(float a, float b) { return a > b ? a : b; }

/// A box's centre and half extents (m), in float: 0.5 (lo + hi) and 0.5 (hi - lo).
static inline void kcc_box_center_half(const vec3 box[2], vec3 out_center, vec3 out_half)
{
    for (int k = 0; k < 3; ++k) {
        out_center[k] = 0.5f * (box[0][k] + box[1][k]);
        out_half[k] = 0.5f * (box[1][k] - box[0][k]);
    }
}

/* ---- which build runs (controller/isa.c) ---------------------------------------------------- */
/* On x86-64 the library holds the move and the mesh queries (the Makefile's AVX2_SRC) a second time,
 * compiled for AVX2 with their symbols renamed kcc_* -> kcc_avx2_*: the same IEEE operations, so the
 * same results bit for bit. */

/// True when the AVX2 build runs (chosen once: the CPU, and KCC_ISA=baseline to refuse it).
bool kcc_isa_avx2(void);
/// Tests: run the AVX2 build (on) or the baseline from now on; false when the AVX2 build or the CPU
/// support for it is missing.
bool kcc_isa_force_avx2(bool on);

/// The first statement of an entry point of the AVX2 build (a function of AVX2_SRC that returns a
/// value): when the AVX2 build runs, returns what its copy kcc_avx2_NAME returns for the arguments
/// that follow (NAME: the function's name without its kcc_ prefix). Nothing in the copy itself,
/// compiled without KCC_AVX2_VARIANT, nor in a library without the AVX2 build. Guarded by
/// the_avx2_build_answers_queries_exactly_like_the_baseline.
#if KCC_AVX2_VARIANT
#define KCC_ISA_DISPATCH(name, ...)                                                                 \
    do {                                                                                            \
        extern __typeof__(kcc_##name) kcc_avx2_##name;                                              \
        if (kcc_isa_avx2())                                                                         \
            return kcc_avx2_##name(__VA_ARGS__);                                                    \
    } while (0)
#else
#define KCC_ISA_DISPATCH(name, ...) ((void)0)
#endif

/* ---- the list ---------------------------------------------------------------------------------- */

/// One listed triangle: corners (m, the source's frame), unit normal and plane offset n . a as the source
/// stores them, and the source's triangle id (a mesh's input index).
typedef struct kcc_local_tri {
    float    v[3][3];
    float    n[3];
    float    d;
    uint32_t index;
} kcc_local_tri;

/// Eight listed triangles' bounds: lo[k][j], hi[k][j] bound entry 8g + j of group g along axis k,
/// so one group is culled by eight-wide compares (two four-wide ones without AVX) and a list's
/// groups lie end to end. Entries past the list's end have empty bounds (lo = +inf, hi = -inf).
#define KCC_LOCAL_GROUP 8
typedef struct kcc_local_bounds {
    float lo[3][KCC_LOCAL_GROUP];
    float hi[3][KCC_LOCAL_GROUP];
} kcc_local_bounds;

/// Where a move's triangles come from. A source lists the world-space triangles whose bounds
/// overlap a region (query, then fetch: a list's storage is chosen once their number is known),
/// always in the same order (a mesh: its leaf order), so a list holding extra
/// triangles answers every query the same; and answers the queries a list cannot (the overflow
/// mode: more triangles in reach than a list holds) over all of its triangles. A mesh is a source
/// (kcc_local_source_mesh); a world of placed meshes and other characters' boxes can be another,
/// and the move does not change. Borrowed by every list it fills: it must outlive them.
typedef struct kcc_local_source kcc_local_source;
typedef struct kcc_local_source_ops {
    /// The triangles whose bounds overlap region, as handles (the source's own names for them,
    /// in the source's order), written to out_handles when there are at most capacity of them
    /// (capacity <= KCC_LOCAL_MAX); returns how many there are.
    uint32_t (*query)(const kcc_local_source *src, const vec3 region[2], uint32_t *out_handles,
                      uint32_t capacity);
    /// The triangles of handles[0..n) (from query), in that order.
    void (*fetch)(const kcc_local_source *src, const uint32_t *handles, uint32_t n, kcc_local_tri *out);
    /// kcc_mesh_raycast, kcc_mesh_overlap_aabb (each set of exact duplicates once) and
    /// kcc_mesh_sweep_aabb over all of the source.
    bool (*raycast)(const kcc_local_source *src, const vec3 origin, const vec3 dir, float max_t,
                    kcc_ray_hit *out);
    uint32_t (*overlap)(const kcc_local_source *src, const vec3 box[2], uint32_t *out_ids,
                        uint32_t capacity);
    bool (*sweep)(const kcc_local_source *src, const vec3 box[2], const vec3 delta,
                  kcc_sweep_hit *out);
    /// Triangle id's corners (m); false for an unknown id.
    bool (*triangle)(const kcc_local_source *src, uint32_t id, vec3 out_corners[3]);
    /// Triangle id's unit face normal as stored (as wound); id is one the source reported.
    void (*face_normal)(const kcc_local_source *src, uint32_t id, vec3 out);
} kcc_local_source_ops;
struct kcc_local_source {
    const kcc_local_source_ops *ops;
    const void *owner; ///< what the triangles belong to (a mesh): with key, names a cache's content
    uint64_t    key;   ///< content hash of owner's triangles (never 0)
};
/// The source of one static mesh (borrowed).
void kcc_local_source_mesh(kcc_local_source *out, const kcc_mesh *mesh);

/// A signed permutation of the axes that is a proper rotation (determinant +1), from a source's
/// frame ("world") into another ("frame"): frame[k] = sign[k] * world[axis[k]]. Exact in float both
/// ways (a negation and a reordering round nothing), so what runs in the frame on mapped input is
/// the mapped run. The controller moves a character whose up is not +Y or +Z in such a frame.
typedef struct kcc_axis_map {
    int   axis[3]; ///< world axis of frame axis k
    float sign[3]; ///< +1 or -1
} kcc_axis_map;

/// A point or direction from world into the frame, and back (in may be out).
static inline void kcc_axis_map_in(const kcc_axis_map *map, const vec3 world, vec3 out)
{
    const float w[3] = {world[0], world[1], world[2]};
    for (int k = 0; k < 3; ++k)
        out[k] = map->sign[k] * w[map->axis[k]];
}
static inline void kcc_axis_map_out(const kcc_axis_map *map, const vec3 frame, vec3 out)
{
    const float f[3] = {frame[0], frame[1], frame[2]};
    for (int k = 0; k < 3; ++k)
        out[map->axis[k]] = map->sign[k] * f[k];
}
/// A box (min, max) from the frame into world: a negated axis swaps its min and max.
static inline void kcc_axis_map_box_out(const kcc_axis_map *map, const vec3 frame[2], vec3 out[2])
{
    for (int k = 0; k < 3; ++k) {
        const int lo = map->sign[k] < 0.0f;
        out[0][map->axis[k]] = map->sign[k] * frame[lo][k];
        out[1][map->axis[k]] = map->sign[k] * frame[1 - lo][k];
    }
}

/// A source seen through an axis map: its triangles, and the answers of its overflow-mode queries,
/// in the map's frame (corners and normals mapped; plane offsets n . a kept, a rotation keeps
/// them; query inputs mapped into the inner source's frame). Its key differs from the inner
/// source's and from the same source seen through any other map (key_salt), so a character's
/// cache of one frame's triangles never serves another frame. Borrows inner.
typedef struct kcc_local_source_mapped {
    kcc_local_source        base;  ///< the source a list uses (&mapped.base)
    const kcc_local_source *inner;
    kcc_axis_map            map;
} kcc_local_source_mapped;
/// Sets out up as inner seen through map; key_salt: non-zero, one per map, never 1.
void kcc_local_source_map(kcc_local_source_mapped *out, const kcc_local_source *inner,
                          const kcc_axis_map *map, uint64_t key_salt);

/// The triangles one move looks at: every triangle of `source` whose bounds overlap `region` (and
/// possibly more: every query culls by its own bounds first), in the source's order, so the
/// answers never depend on which extra triangles are present. A view: the storage is a character's
/// cache or a kcc_local_store.
typedef struct kcc_local {
    const kcc_local_source *source;
    uint32_t                count;
    bool                    overflow; ///< more than KCC_LOCAL_MAX triangles: each query asks the source
    const kcc_local_bounds *bounds;   ///< (count + 7) / 8 groups
    const kcc_local_tri    *tris;
    vec3                    region[2]; ///< the region asked for: a query must stay inside it to get
                                       ///< the same answer from any cache (checked in KCC_DEBUG builds)
    uint64_t                fixed_key;   ///< a list of a split world source's two parts
                                         ///< (kcc_world_source_parts): its fixed part's key; 0 for
                                         ///< any other list
    uint32_t                fixed_count; ///< such a list's first fixed_count entries hold every
                                         ///< triangle of the fixed part it holds, the others none
                                         ///< (0 when they are interleaved, and for other lists)
} kcc_local;

/// Entry i's minimum and maximum along axis k.
static inline float kcc_local_lo(const kcc_local *list, int k, uint32_t i)
{
    return list->bounds[i / KCC_LOCAL_GROUP].lo[k][i % KCC_LOCAL_GROUP];
}
static inline float kcc_local_hi(const kcc_local *list, int k, uint32_t i)
{
    return list->bounds[i / KCC_LOCAL_GROUP].hi[k][i % KCC_LOCAL_GROUP];
}

/// A move's own storage, when the character's cache cannot hold the neighbourhood. Real arena
/// levels put 3-80 triangles in a character's reach; a denser spot overflows it and every probe
/// then asks the source directly (same answers).
#define KCC_LOCAL_MAX 192u
typedef struct kcc_local_store {
    kcc_local_bounds bounds[KCC_LOCAL_MAX / KCC_LOCAL_GROUP];
    kcc_local_tri    tris[KCC_LOCAL_MAX];
} kcc_local_store;

/// Triangles a character keeps from its neighbourhood between moves.
#define KCC_LOCAL_CACHE_MAX 96u
_Static_assert(KCC_LOCAL_CACHE_MAX % KCC_LOCAL_GROUP == 0 && KCC_LOCAL_MAX % KCC_LOCAL_GROUP == 0,
               "lists pad to whole groups");

/// A character's cache: every triangle of the source (owner, key) whose bounds overlap [lo, hi], in
/// the source's order. A move whose reach stays inside [lo, hi] reads the level from here. Results
/// never depend on it: an empty or stale cache gives the same moves, bit for bit.
typedef struct kcc_local_cache {
    const void      *owner; ///< NULL: empty
    uint64_t         key;
    float            lo[3], hi[3];
    uint32_t         count;
    kcc_local_bounds bounds[KCC_LOCAL_CACHE_MAX / KCC_LOCAL_GROUP];
    kcc_local_tri    tris[KCC_LOCAL_CACHE_MAX];
} kcc_local_cache;

/// The triangles whose bounds overlap region, gathered into store (list views it).
void kcc_local_gather(kcc_local *list, kcc_local_store *store, const kcc_local_source *source,
                      const vec3 region[2]);
/// The same through a character's cache: list views the cache when it covers region (refilled
/// around region, grown by grow[0] below and grow[1] above on each axis, when it does not), else
/// store. Same triangles in the same order either way, apart from extra ones outside region.
void kcc_local_gather_cached(kcc_local *list, kcc_local_store *store, kcc_local_cache *cache,
                             const kcc_local_source *source, const vec3 region[2], const vec3 grow[2]);
/// For a rare sweep of box by delta whose reach is not known when the move gathers its list: list
/// when the sweep stays inside its region, else `overflow` made a list that holds nothing and
/// sends every query to the source (the overflow mode).
const kcc_local *kcc_local_for_sweep(const kcc_local *list, const vec3 box[2], const vec3 delta,
                                     kcc_local *overflow);

/// A subset of a list: the triangles whose bounds overlap some box, as a bit set over the list
/// (bit i % 64 of bits[i / 64]: entry i). A set rather than a list of indices: the cull ORs each
/// group's eight bits into a word, where a list made each group's write wait for the previous
/// group's count.
#define KCC_SEL_WORDS ((KCC_LOCAL_MAX + 63u) / 64u)
typedef struct kcc_sel {
    uint32_t words; ///< in use: (count + 63) / 64
    uint64_t bits[KCC_SEL_WORDS];
} kcc_sel;
void kcc_local_select(const kcc_local *list, const vec3 box[2], kcc_sel *out);

/// Index of the lowest set bit of x != 0.
static inline uint32_t kcc_ctz64(uint64_t x)
{
#if defined(__GNUC__) || defined(__clang__)
    return (uint32_t)__builtin_ctzll(x);
#else
    uint32_t n = 0;
    while (!(x & 1u)) {
        x >>= 1;
        ++n;
    }
    return n;
#endif
}

/// How many bits of x are set.
static inline uint32_t kcc_popcount64(uint64_t x)
{
#if defined(__GNUC__) || defined(__clang__)
    return (uint32_t)__builtin_popcountll(x);
#else
    uint32_t n = 0;
    for (; x != 0; x &= x - 1u)
        ++n;
    return n;
#endif
}

/// A selection's entries in list order:
///     uint32_t i;
///     for (kcc_sel_iter it = kcc_sel_begin(&sel); kcc_sel_next(&it, &i);) ...
typedef struct kcc_sel_iter {
    const kcc_sel *sel;
    uint32_t       word;
    uint64_t       bits; ///< of sel->bits[word] not visited yet
} kcc_sel_iter;

static inline kcc_sel_iter kcc_sel_begin(const kcc_sel *sel)
{
    kcc_sel_iter it = {sel, 0u, sel->words > 0 ? sel->bits[0] : 0u};
    return it;
}

static inline bool kcc_sel_next(kcc_sel_iter *it, uint32_t *out_entry)
{
    while (it->bits == 0) {
        if (++it->word >= it->sel->words)
            return false;
        it->bits = it->sel->bits[it->word];
    }
    *out_entry = 64u * it->word + kcc_ctz64(it->bits);
    it->bits &= it->bits - 1u;
    return true;
}

/* ---- the queries --------------------------------------------------------------------------------- */

/// Closest hit straight down the up axis `up` from origin, 0 <= t <= max_t (either face), among the
/// triangles of sel (which must hold every triangle whose bounds the ray's segment touches).
/// Watertight: the same edge functions as the general test with no shear, so a ray through a
/// shared edge or vertex hits one of the triangles.
bool kcc_local_raycast_down(const kcc_local *list, const kcc_sel *sel, const vec3 origin, int up,
                            float max_t, kcc_ray_hit *out);
/// The same for four rays at once (SSE lanes; one ray at a time without SSE): same answers.
void kcc_local_raycast_down4(const kcc_local *list, const kcc_sel *sel, const vec3 origin[4], int up,
                             float max_t, kcc_ray_hit out[4], bool got[4]);

/// True when box overlaps any triangle (exact).
bool kcc_local_overlaps(const kcc_local *list, const vec3 box[2]);
/// kcc_local_overlaps over the list's entries from fixed_count on (in the overflow mode, over the
/// whole source): its answer for a box known to overlap none of a split source's fixed part.
bool kcc_local_overlaps_past_fixed(const kcc_local *list, const vec3 box[2]);

/// The contacts of a swept box: the first time of contact and the normals (facing the box) of every
/// triangle touched within `t_slop` of it.
#define KCC_MAX_CONTACTS 8u
typedef struct kcc_contacts {
    float    t;                         ///< fraction of delta
    uint32_t count;
    vec3     normal[KCC_MAX_CONTACTS];
    uint32_t triangle[KCC_MAX_CONTACTS];
    float    t_each[KCC_MAX_CONTACTS];  ///< each one's own time (>= t)
    bool     start_overlap;             ///< the earliest contact overlapped at t = 0
} kcc_contacts;
bool kcc_local_sweep(const kcc_local *list, const vec3 box[2], const vec3 delta, float t_slop,
                     kcc_contacts *out);
/// The same, told that the earliest contact comes no later than t_known (a fraction of delta, 2 when
/// unknown): the exact test of every triangle stops at that bound's window, so triangles met only
/// later cost less. Same answers as kcc_local_sweep whenever the bound holds.
bool kcc_local_sweep_known(const kcc_local *list, const vec3 box[2], const vec3 delta, float t_slop,
                           float t_known, kcc_contacts *out);
/// The same for a box being pushed out of the level: the triangles it overlaps at its start
/// (`overlapped`, ids, n_overlapped of them) are not contacts where the box overlaps them at the
/// start, only what it runs into; any other triangle is met as by kcc_local_sweep, also one the box
/// already touches or grazes there. In the overflow mode an overlap with an overlapped triangle at
/// the first contact hides the rest: then nothing is reported.
bool kcc_local_sweep_out(const kcc_local *list, const vec3 box[2], const vec3 delta, float t_slop,
                         const uint32_t *overlapped, uint32_t n_overlapped, kcc_contacts *out);

/// Least-penetration push of box out of the triangles it overlaps, accumulated as planes; returns
/// false when box overlaps nothing. out_push is the translation (m) that frees it, before any cap.
/// Triangles whose normal is within the slope limit (cos_floor) of the up axis `up` push up, never
/// down. The triangles it pushes out of (ids, at most KCC_MAX_OVERLAPPED; not those it overlaps by
/// no more than the rounding of the box's coordinates, a millionth of their magnitude) go to
/// out_overlapped, their number to out_n_overlapped.
#define KCC_MAX_OVERLAPPED (KCC_MAX_CONTACTS * 4u)
bool kcc_local_penetration(const kcc_local *list, const vec3 box[2], int up, float cos_floor,
                           vec3 out_push, uint32_t *out_overlapped, uint32_t *out_n_overlapped);

/// Triangle id's unit face normal as the source stores it (as wound).
void kcc_local_face_normal(const kcc_local *list, uint32_t id, vec3 out);

/* ---- the world, as the controller sees it (collide/world.c, collide/world_source.c) ---------- */

/// Ids: the slot index + 1 in the low KCC_ID_INDEX_BITS bits (so 0 is never an id), the slot's
/// generation above them. A slot's generation grows each time it is freed, and freed slots are
/// reused oldest first, so an id comes back only after 4096 removals of every slot.
#define KCC_ID_INDEX_BITS 20
#define KCC_ID_INDEX_MASK ((1u << KCC_ID_INDEX_BITS) - 1)
#define KCC_ID_GENERATION_MASK ((1u << (32 - KCC_ID_INDEX_BITS)) - 1)

/// Free slots of an id space (bodies, characters), reused oldest first: a ring of the free slot
/// indices. `end` is 1 + the highest slot ever taken, where loops over the slots stop.
typedef struct kcc_id_pool {
    uint32_t *ring;       ///< capacity entries
    uint32_t  capacity;
    uint32_t  head;       ///< ring position of the oldest free slot
    uint32_t  free;       ///< free slots
    uint32_t  end;
} kcc_id_pool;

static inline void kcc_id_pool_init(kcc_id_pool *pool, uint32_t *ring, uint32_t capacity)
{
    pool->ring = ring;
    pool->capacity = capacity;
    pool->head = 0;
    pool->free = capacity;
    pool->end = 0;
    for (uint32_t i = 0; i < capacity; ++i)
        ring[i] = i;
}

/// Takes the oldest free slot; false when every slot is taken.
static inline bool kcc_id_pool_take(kcc_id_pool *pool, uint32_t *out_slot)
{
    if (pool->free == 0)
        return false;
    const uint32_t slot = pool->ring[pool->head];
    pool->head = (pool->head + 1) % pool->capacity;
    --pool->free;
    if (slot + 1 > pool->end)
        pool->end = slot + 1;
    *out_slot = slot;
    return true;
}

static inline void kcc_id_pool_give(kcc_id_pool *pool, uint32_t slot)
{
    pool->ring[(pool->head + pool->free) % pool->capacity] = slot;
    ++pool->free;
}

/// The id of slot with generation (never 0), and back: false for 0 or an index past capacity.
static inline uint32_t kcc_id_make(uint32_t generation, uint32_t slot)
{
    return generation << KCC_ID_INDEX_BITS | (slot + 1);
}
static inline bool kcc_id_split(uint32_t id, uint32_t capacity, uint32_t *out_slot,
                                uint32_t *out_generation)
{
    const uint32_t index = id & KCC_ID_INDEX_MASK;
    if (index == 0 || index > capacity)
        return false;
    *out_slot = index - 1;
    *out_generation = id >> KCC_ID_INDEX_BITS;
    return true;
}

/// The characters' half of a world (controller/world_step.c): collide keeps only the pointer.
struct kcc_world_characters;

/// The caller's allocator, or malloc/free (aligned_alloc) when its functions are NULL (base.c).
kcc_allocator kcc_allocator_or_default(const kcc_allocator *allocator);
/// Replaces every 0 of desc (NULL: the defaults) by its default and checks the rest.
kcc_status kcc_world_resolve_desc(const kcc_world_desc *in, kcc_world_desc *out);
/// Lays the world's struct and its bodies' arrays out in the block at base (NULL, NULL: only
/// measures); returns the bytes used.
size_t kcc_world_layout(kcc_world *world, char *base, const kcc_world_desc *desc);
/// Fills a laid-out, zeroed world; `characters` is stored for kcc_world_characters.
void kcc_world_init(kcc_world *world, const kcc_world_desc *desc, const kcc_allocator *allocator,
                    size_t block_bytes, struct kcc_world_characters *characters);
/// The world's resolved desc and its characters' half.
const kcc_world_desc *kcc_world_get_desc(const kcc_world *world);
struct kcc_world_characters *kcc_world_characters(const kcc_world *world);
/// Moves every body's poses (now, the last step's start, a target set) by -new_origin and lays
/// its pieces out again. KCC_ERR_BAD_DESC (a position would pass KCC_WORLD_MAX_POSITION) or
/// KCC_ERR_TOO_LARGE (more pieces than fit) leave the world as it was.
kcc_status kcc_world_shift_bodies(kcc_world *world, const float new_origin[3]);
/// The bodies' part of a step: kinematic bodies reach their targets, the body tree is rebuilt.
void kcc_world_step_bodies(kcc_world *world);
/// The id of the body whose triangle the world source's triangle id names (0: none), and the
/// first id of that body's range (the triangle's input index is id minus it; 0 for none).
uint32_t kcc_world_triangle_body(const kcc_world *world, uint32_t id);
uint32_t kcc_world_triangle_base(const kcc_world *world, uint32_t id);

/// The world as a move's neighbourhood: the placed triangles of every live body whose layers
/// meet layer_mask, at their current poses. Triangle ids: body triangle i is the body's range
/// start + i (kcc_world_triangle_body names the body). A body placed at the identity lists its
/// mesh's own corners and planes, so a move through a world of one such body is the move
/// through the mesh, bit for bit (world_of_one_identity_body_moves_as_the_mesh).
///
/// Characters' boxes can be listed too, as twelve triangles each facing out (a box's top is ground
/// to stand on, its sides walls): box i of `boxes` (indexed by character slot) is listed when it
/// is among box_slots; its triangles are ids KCC_WORLD_BOX_TRIS + 12 * slot + k, after every
/// body's. One body can be left out (skip_body: a slot, or KCC_WORLD_NO_BODY) or a source can see
/// one body alone (only_body).
#define KCC_WORLD_BOX_TRIS 0xC0000000u
#define KCC_WORLD_NO_BODY 0xffffffffu
typedef struct kcc_world_source {
    kcc_local_source base;   ///< what a list uses (&source.base)
    const kcc_world *world;
    uint32_t         layer_mask;
    uint32_t         skip_body;      ///< body slot left out, or KCC_WORLD_NO_BODY
    uint32_t         only_body;      ///< the one body slot seen, or KCC_WORLD_NO_BODY: all
    const float    (*boxes)[2][3];   ///< characters' boxes by slot (m), or NULL
    const uint32_t  *box_slots;      ///< the listed ones, in any order (listed by slot)
    uint32_t         box_count;
    uint32_t         skip_box;       ///< a listed slot left out (the moving character's own), or
                                     ///< KCC_WORLD_NO_BODY
    const uint32_t  *box_layers;     ///< characters' layers by slot, or NULL: every listed box is
    const uint32_t  *box_masks;      ///< seen; else box i is seen when layer_mask & box_layers[i]
    uint32_t         self_layers;    ///< and box_masks[i] & self_layers (both ways, so two
                                     ///< characters are solid to each other or to neither)
    const uint32_t  *pieces;         ///< the pieces of bodies that are not static seen
    uint32_t         piece_count;    ///< (kcc_world_piece_order), or NULL: every body whole
    uint32_t         part;           ///< KCC_WORLD_PART_*: which bodies it lists
    const struct kcc_world_source *fixed, *rest; ///< its split (kcc_world_source_split), or NULL
    const float    (*reach)[3];      ///< a box every gather through it lies in (a world character's
                                     ///< step region: what its neighbour lists hold), checked by
                                     ///< kcc_local_gather_cached in KCC_DEBUG builds; NULL: none
} kcc_world_source;
/// Which bodies a world source lists: every one (static bodies always whole, the others whole or
/// by the pieces listed), the static ones alone (whole, no box), or the others alone (and boxes).
enum { KCC_WORLD_PART_ALL, KCC_WORLD_PART_STATIC, KCC_WORLD_PART_MOVING };
/// Every body on layer_mask, no box.
void kcc_world_source_init(kcc_world_source *out, const kcc_world *world, uint32_t layer_mask);
/// Splits `all` (a KCC_WORLD_PART_ALL source, set up) into its static bodies, `fixed` (owner the
/// world, its key changing only when a static body is added, removed or placed), and the rest
/// (its other bodies and boxes), and links them to it: a gather through a character's cache then
/// keeps the static bodies' triangles across steps. `fixed` and `rest` must outlive all's use.
void kcc_world_source_split(kcc_world_source *all, kcc_world_source *fixed, kcc_world_source *rest);
/// The same split of `all` into a fixed part that kcc_world_source_split made for a source of the
/// same world and layer mask while the static bodies stayed as they are (one for many sources:
/// only read), and `rest`, set up as a copy of `all` (field by field or otherwise), made its rest.
void kcc_world_source_link(kcc_world_source *all, const kcc_world_source *fixed, kcc_world_source *rest);
/// A split world source's two parts (false for any other source): `fixed`, with its own owner
/// and key that outlive the source's key, and the `rest`, listed afresh by every gather. Their
/// lists merged by triangle id are the source's list: the parts share no body, and ids order
/// bodies as the source does (kcc_local_gather_cached).
bool kcc_world_source_parts(const kcc_local_source *src, const kcc_local_source **out_fixed,
                            const kcc_local_source **out_rest);
/// Whether region lies inside the world source's reach (kcc_world_source.reach): true for any
/// other source and for one without a reach.
bool kcc_world_source_reaches(const kcc_local_source *src, const vec3 region[2]);
/// The id of live body slot.
uint32_t kcc_world_body_id_of_slot(const kcc_world *world, uint32_t slot);
/// The slot of a live body id (KCC_WORLD_NO_BODY when it is not one).
uint32_t kcc_world_body_slot(const kcc_world *world, uint32_t body);
/// Whether the sensor body at slot holds box (m, world): the box overlaps a triangle of its placed
/// mesh or the box's centre is inside the volume the mesh closes.
bool kcc_world_sensor_holds(const kcc_world *world, uint32_t slot, const float box[2][3]);
/// The live sensor bodies' slots, ascending (kept by add and remove): *out_slots, their number.
uint32_t kcc_world_sensors(const kcc_world *world, const uint32_t **out_slots);
/// The pieces (kcc_piece indices) whose broadphase proxies overlap box (touching counts), ascending
/// by proxy: returns how many, writes the first `capacity` to out. Reads only (safe from many
/// threads between steps and from a step's tasks).
uint32_t kcc_world_pieces_near(const kcc_world *world, const float box[2][3], uint32_t *out,
                               uint32_t capacity);
/// Brings the pieces' pairs (kcc_world_pair) up to date.
void kcc_world_update_broadphase(kcc_world *world);
typedef struct kcc_world_pair_ends {
    uint32_t a, b;                 ///< a piece index or a character slot each
    bool     a_is_character, b_is_character;
} kcc_world_pair_ends;
/// The pairs of the last update: their number (*out_overflow: some were dropped), and pair i.
uint32_t kcc_world_pair_count(const kcc_world *world, bool *out_overflow);
bool kcc_world_pair(const kcc_world *world, uint32_t i, kcc_world_pair_ends *out);
/// The body slot a piece belongs to; *out_sensor (may be NULL) whether that body is a sensor.
uint32_t kcc_world_piece_body(const kcc_world *world, uint32_t piece, bool *out_sensor);
/// The order of pieces in a world source: pieces sort by this key (their body's triangle range,
/// then their first slot), which is the order of the bodies' triangles.
uint64_t kcc_world_piece_order(const kcc_world *world, uint32_t piece);
/// A fresh key for the sources of one step (their characters' boxes change every step).
uint64_t kcc_world_step_key(const kcc_world *world);
/// The kinematic bodies (not sensors) that moved in the last step (slots, ascending): *out_slots, their number.
uint32_t kcc_world_movers(const kcc_world *world, const uint32_t **out_slots);
/// Live body slot's poses at the start and the end of the last step, and the bounds of its
/// placed mesh over that motion (conservative: both poses' bounds and the arc between).
void kcc_world_body_motion(const kcc_world *world, uint32_t slot, kcc_transform *out_start,
                           kcc_transform *out_end, float out_swept[2][3]);

#endif
