/* controller_internal.h: the controller's private parts shared by its .c files and tests: the short
 * triangle list every probe of a move runs on (from the character's cache or one tree query) and
 * the geometry helpers in the character's up-axis frame. Never installed. */
#ifndef KCC_CONTROLLER_INTERNAL_H
#define KCC_CONTROLLER_INTERNAL_H

#include "kcc_controller.h"

/* The triangles one move looks at: every triangle whose bounds overlap the move's reach (and
 * possibly more: every query culls by its own bounds first), in the mesh's leaf order, so the
 * answers never depend on which extra triangles are present. Bounds are stored in groups of eight
 * (kcc_cached_bounds), the last padded with empty bounds (lo = +inf, hi = -inf), so every query
 * culls eight triangles per AVX compare (four per SSE one) and reads the groups in use end to end.
 * A view: the storage is the character's cache or a kcc_local_store. */
typedef kcc_cached_tri kcc_local_tri;
typedef struct kcc_local {
    const kcc_mesh          *mesh;
    uint32_t                 count;
    bool                     overflow; /* more than KCC_LOCAL_MAX triangles: query the mesh */
    const kcc_cached_bounds *bounds;   /* (count + 7) / 8 groups */
    const kcc_local_tri     *tris;
    vec3                     region[2]; /* the region asked for: the list holds every triangle
                                           whose bounds overlap it (a cache may hold more), so a
                                           query must stay inside it to get the same answer from
                                           any cache (checked in KCC_DEBUG builds) */
} kcc_local;

/* Entry i's minimum and maximum along axis k. */
static inline float kcc_local_lo(const kcc_local *L, int k, uint32_t i)
{
    return L->bounds[i / KCC_CACHE_GROUP].lo[k][i % KCC_CACHE_GROUP];
}
static inline float kcc_local_hi(const kcc_local *L, int k, uint32_t i)
{
    return L->bounds[i / KCC_CACHE_GROUP].hi[k][i % KCC_CACHE_GROUP];
}

/* A move's own storage, when the character's cache cannot hold the neighbourhood. Real arena
 * levels put 3-80 triangles in a character's reach; a denser spot overflows it and every probe
 * then queries the tree directly (same answers). */
#define KCC_LOCAL_MAX 192u
typedef struct kcc_local_store {
    kcc_cached_bounds bounds[KCC_LOCAL_MAX / KCC_CACHE_GROUP];
    kcc_local_tri     tris[KCC_LOCAL_MAX];
} kcc_local_store;
_Static_assert(KCC_CHARACTER_CACHE % KCC_CACHE_GROUP == 0 && KCC_LOCAL_MAX % KCC_CACHE_GROUP == 0,
               "lists pad to whole groups");

/* The triangles whose bounds overlap region, gathered into store (L views it). */
void kcc_local_gather(kcc_local *L, kcc_local_store *store, const kcc_mesh *mesh, const vec3 region[2]);
/* For a rare sweep of box by delta whose reach is not known when the move gathers its list: L when
 * the sweep stays inside L's region, else `tree` made a list that holds nothing and sends every
 * query to the tree for its own region (the overflow mode). */
const kcc_local *kcc_local_for(const kcc_local *L, const vec3 box[2], const vec3 delta, kcc_local *tree);
/* The same through the character's cache: L views the cache when it covers region (refilled around
 * region, grown by grow[0] below and grow[1] above on each axis, when it does not), else store.
 * Same triangles in the same order either way, apart from extra ones outside region. */
void kcc_local_neighbourhood(kcc_local *L, kcc_local_store *store, kcc_tri_cache *cache,
                             const kcc_mesh *mesh, const vec3 region[2], const vec3 grow[2]);

/* A subset of a kcc_local: the triangles whose bounds overlap some box, as a bit set over the list
 * (bit i % 64 of bits[i / 64]: entry i). A set rather than a list of indices: the cull ORs each
 * group's eight bits into a word, where a list made each group's write wait for the previous
 * group's count. */
#define KCC_SEL_WORDS ((KCC_LOCAL_MAX + 63u) / 64u)
typedef struct kcc_sel {
    uint32_t words; /* in use: (count + 63) / 64 */
    uint64_t bits[KCC_SEL_WORDS];
} kcc_sel;
void kcc_local_select(const kcc_local *L, const vec3 box[2], kcc_sel *out);

/* True when v goes into none of the n planes (v . plane < -eps), planes skip_a and skip_b aside. */
static inline bool kcc_into_none(const vec3 v, const vec3 *planes, uint32_t n, uint32_t skip_a,
                                 uint32_t skip_b, float eps)
{
    for (uint32_t j = 0; j < n; ++j)
        if (j != skip_a && j != skip_b &&
            v[0] * planes[j][0] + v[1] * planes[j][1] + v[2] * planes[j][2] < -eps)
            return false;
    return true;
}

/* Index of the lowest set bit of x != 0. */
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

/* A selection's entries in list order:
 *     uint32_t i;
 *     for (kcc_sel_iter it = kcc_sel_begin(&sel); kcc_sel_next(&it, &i);) ... */
typedef struct kcc_sel_iter {
    const kcc_sel *sel;
    uint32_t       word;
    uint64_t       bits; /* of sel->bits[word] not visited yet */
} kcc_sel_iter;

static inline kcc_sel_iter kcc_sel_begin(const kcc_sel *sel)
{
    kcc_sel_iter it = {sel, 0u, sel->words > 0 ? sel->bits[0] : 0u};
    return it;
}

static inline bool kcc_sel_next(kcc_sel_iter *it, uint32_t *i)
{
    while (it->bits == 0) {
        if (++it->word >= it->sel->words)
            return false;
        it->bits = it->sel->bits[it->word];
    }
    *i = 64u * it->word + kcc_ctz64(it->bits);
    it->bits &= it->bits - 1u;
    return true;
}

/* min/max without libm calls (fminf/fmaxf are not inlined without -ffinite-math-only). Inputs are
 * finite here. */
static inline float kcc_minf(float a, float b) { return a < b ? a : b; }
static inline float kcc_maxf(float a, float b) { return a > b ? a : b; }

/* Closest hit straight down the up axis u from origin, 0 <= t <= max_t (either face), among the
 * triangles of sel (which must hold every triangle whose bounds the ray's segment touches).
 * Watertight: the same edge functions as the general test with no shear, so a ray through a shared
 * edge or vertex hits one of the triangles. */
bool kcc_local_raycast_down(const kcc_local *L, const kcc_sel *sel, const vec3 origin, int u,
                            float max_t, kcc_ray_hit *out);
/* The same for four rays at once (SSE lanes; one ray at a time without SSE): same answers. */
void kcc_local_raycast_down4(const kcc_local *L, const kcc_sel *sel, const vec3 origin[4], int u,
                             float max_t, kcc_ray_hit out[4], bool got[4]);

/* True when box overlaps any triangle (exact). */
bool kcc_local_overlaps(const kcc_local *L, const vec3 box[2]);

/* The contacts of a swept box: the first time of contact and the normals (facing the box) of every
 * triangle touched within `t_slop` of it. */
#define KCC_MAX_CONTACTS 8u
typedef struct kcc_contacts {
    float    t;                         /* fraction of delta */
    uint32_t count;
    vec3     normal[KCC_MAX_CONTACTS];
    uint32_t triangle[KCC_MAX_CONTACTS];
    float    t_each[KCC_MAX_CONTACTS];  /* each one's own time (>= t) */
    bool     start_overlap;             /* the earliest contact overlapped at t = 0 */
} kcc_contacts;
bool kcc_local_sweep(const kcc_local *L, const vec3 box[2], const vec3 delta, float t_slop,
                     kcc_contacts *out);
/* The same, told that the earliest contact comes no later than t_known (a fraction of delta, 2 when
 * unknown): the exact test of every triangle stops at that bound's window, so triangles met only
 * later cost less. Same answers as kcc_local_sweep whenever the bound holds. */
bool kcc_local_sweep_known(const kcc_local *L, const vec3 box[2], const vec3 delta, float t_slop,
                           float t_known, kcc_contacts *out);
/* The same for a box being pushed out of the level: the triangles `left` (input indices, n_left of
 * them: what the push leaves) are not contacts where the box overlaps them at the start, only what
 * it runs into; any other triangle is met as by kcc_local_sweep, also one the box already touches
 * or grazes there. In the overflow mode an overlap with a left triangle at the first contact hides
 * the rest: then nothing is reported. */
bool kcc_local_sweep_out(const kcc_local *L, const vec3 box[2], const vec3 delta, float t_slop,
                         const uint32_t *left, uint32_t n_left, kcc_contacts *out);

/* Least-penetration push of box out of the triangles it overlaps, accumulated as planes; returns
 * false when box overlaps nothing. out_push is the translation (m) that frees it, before any cap.
 * Triangles whose normal is within the slope limit (cos_floor) of the up axis u push up, never down.
 * The triangles it pushes out of (input indices, at most KCC_MAX_LEFT; not those it overlaps by no
 * more than the rounding of the box's coordinates, a millionth of their magnitude) go to out_left,
 * their number to out_n_left. */
#define KCC_MAX_LEFT (KCC_MAX_CONTACTS * 4u)
bool kcc_local_penetration(const kcc_local *L, const vec3 box[2], int u, float cos_floor,
                           vec3 out_push, uint32_t *out_left, uint32_t *out_n_left);

/* ---- helpers in the character's up-axis frame, and the ground probe ---- */
static inline int kcc_up_index(const kcc_character *ch) { return ch->desc.up_axis == 2 ? 2 : 1; }
/* The two horizontal axes: x and z for +Y up, x and y for +Z up. */
static inline int kcc_side_index(const kcc_character *ch, int k)
{
    return k == 0 ? 0 : (ch->desc.up_axis == 2 ? 1 : 2);
}

static inline void kcc_box_at(const kcc_character *ch, const vec3 pos, vec3 out[2])
{
    for (int i = 0; i < 3; ++i) {
        out[0][i] = pos[i] - ch->desc.half_extents[i];
        out[1][i] = pos[i] + ch->desc.half_extents[i];
    }
}

/* n flipped, if needed, so that it faces up (either face of a triangle can be stood on). */
static inline void kcc_facing_up(const kcc_character *ch, const vec3 n, vec3 out)
{
    float s = n[kcc_up_index(ch)] < 0.0f ? -1.0f : 1.0f;
    for (int i = 0; i < 3; ++i)
        out[i] = n[i] * s;
}

/* True when the character's box centred at pos overlaps the level; touching within half a skin
 * (or the documented tolerance, if smaller) does not count. */
static inline bool kcc_box_overlaps_at(const kcc_character *ch, const kcc_local *L, const vec3 pos)
{
    vec3 box[2];
    kcc_box_at(ch, pos, box);
    float s = kcc_minf(0.5f * ch->desc.skin_width, KCC_PENETRATION_TOLERANCE);
    for (int i = 0; i < 3; ++i) {
        box[0][i] += s;
        box[1][i] -= s;
    }
    return kcc_local_overlaps(L, (const vec3 *)box);
}

typedef struct kcc_ground {
    bool     found;     /* something under the box within reach */
    bool     walkable;  /* ... and it is ground (under the slope limit, or a flat resting edge) */
    bool     blocked;   /* the lifted box overlaps something it cannot leave by going down */
    bool     rest_clear;/* the box resting on it (height + skin) was checked clear of the level */
    float    height;    /* m along up: where the box bottom touches it */
    vec3     normal;    /* unit, facing up */
    uint32_t triangle;
    uint32_t rays;      /* bit i: edge ray i found walkable ground */
} kcc_ground;

/* Probes under the box centred at pos, from `lift` above the feet down to `reach` below them (rays
 * down the four vertical edges, then a box sweep when the box resting on their ground is not
 * clear). A height found by the box sweep is not checked against the level above it: the caller
 * checks the box resting there. */
void kcc_ground_probe(const kcc_character *ch, const kcc_local *L, const vec3 pos, float lift,
                      float reach, kcc_ground *out, kcc_move_debug *dbg);
/* The probe's first step alone: true, with out, when the four rays find walkable ground and the box
 * resting on the highest of it overlaps nothing. */
bool kcc_ground_rays(const kcc_character *ch, const kcc_local *L, const vec3 pos, float lift, float reach,
                     kcc_ground *out);

/* True when the triangles of the contacts (normals facing the box, input indices) hold the box up
 * together, as the two steep sides of a V-shaped gully do: it can slide down none of their faces,
 * nor down a crease of two steeper than the slope limit, and their faces' normals add up to a
 * walkable direction (out_normal, unit). */
bool kcc_ground_held(const kcc_character *ch, const kcc_mesh *mesh, const vec3 *contact_normals,
                     const uint32_t *triangles, uint32_t count, vec3 out_normal);

/* ---- which build of the move runs (isa.c) ---- */
/* True when moves run the AVX2 build (chosen once: the CPU, and KCC_ISA=baseline to refuse it). */
bool kcc_isa_avx2(void);
/* Tests: run the AVX2 build (on) or the baseline from now on; false when the AVX2 build or the CPU
 * support for it is missing. */
bool kcc_isa_force_avx2(bool on);
#if KCC_AVX2_VARIANT
/* kcc_character_move_debug compiled for AVX2 (the build's symbols are renamed kcc_avx2_*). */
void kcc_avx2_character_move_debug(kcc_character *ch, const kcc_mesh *mesh, const vec3 displacement,
                                   kcc_move_result *result, kcc_move_debug *debug);
#endif

#endif
