/* mesh.c: owns kcc_mesh: input validation, the single allocation holding the tree, the shared
 * vertices (floats, or codes into per-axis tables), the triangles in leaf order (8-bit corner
 * offsets) and the index maps, plus the box queries (exact overlap, bounds, swept box) that walk
 * the tree. Queries never allocate and keep no state: safe from many threads. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "collide_internal.h"
#include "heightfield_internal.h"

#define BLOCK_ALIGN 64

static size_t round_up(size_t x)
{
    return (x + BLOCK_ALIGN - 1) / BLOCK_ALIGN * BLOCK_ALIGN;
}

static inline void load_vertex(const kcc_mesh_desc *d, size_t stride, uint32_t idx, float out[3])
{
    memcpy(out, (const char *)d->positions + (size_t)idx * stride, 3 * sizeof(float));
}

static inline uint32_t tri_index(const kcc_mesh_desc *d, uint32_t t, int corner)
{
    return d->indices ? d->indices[(size_t)t * 3 + (size_t)corner] : t * 3u + (uint32_t)corner;
}

void kcc_tri_plane(const kcc_tri *t, kcc_plane *out)
{
    const float(*v)[3] = t->v;
    float e1[3], e2[3], n[3];
    for (int k = 0; k < 3; ++k) {
        e1[k] = v[1][k] - v[0][k];
        e2[k] = v[2][k] - v[0][k];
    }
    n[0] = e1[1] * e2[2] - e1[2] * e2[1];
    n[1] = e1[2] * e2[0] - e1[0] * e2[2];
    n[2] = e1[0] * e2[1] - e1[1] * e2[0];
    float len = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    if (len > 0.0f && isfinite(len)) {
        for (int k = 0; k < 3; ++k)
            out->n[k] = n[k] / len;
    } else {
        /* A sliver whose squared float length underflows (the tree keeps it: its cross product
         * is not zero): normalise in double. */
        double dl = sqrt((double)n[0] * n[0] + (double)n[1] * n[1] + (double)n[2] * n[2]);
        for (int k = 0; k < 3; ++k)
            out->n[k] = dl > 0.0 && isfinite(dl) ? (float)(n[k] / dl) : 0.0f;
    }
    out->d = out->n[0] * v[0][0] + out->n[1] * v[0][1] + out->n[2] * v[0][2];
}

/* FNV-1a over 32-bit words of the tree's triangles in leaf order and their input indices, then the
 * duplicates with their slots: what a character's cache copies from the mesh (the build is deterministic, so equal keys mean equal
 * caches). Never 0. */
static uint64_t content_key(const kcc_mesh *m)
{
    uint64_t h = 0xcbf29ce484222325ull ^ m->tree_triangles;
    for (uint32_t s = 0; s < m->tree_triangles; ++s) {
        uint32_t w[10];
        kcc_tri t;
        kcc_mesh_tri(m, s, &t);
        memcpy(w, t.v, 36);
        w[9] = kcc_mesh_tri_id(m, s);
        for (int i = 0; i < 10; ++i)
            h = (h ^ w[i]) * 0x100000001b3ull;
    }
    for (uint32_t s = 0; s < m->tree_triangles && m->duplicate_count > 0; ++s) {
        uint32_t begin;
        const uint32_t copies = kcc_mesh_duplicates(m, s, &begin);
        for (uint32_t i = begin; i < begin + copies; ++i) /* the lists in slot order: i ascending */
            h = (h ^ kcc_mesh_dup_id(m, i) ^ (uint64_t)s << 32) * 0x100000001b3ull;
    }
    return h ? h : 1;
}

/* Every build's own number. The library's one static: builds only increment it (atomically, so
 * builds on many threads each get a number of their own), no move or query reads it, and it changes
 * no answer: it only keeps a character from reusing its cache or clear note across builds. */
static _Atomic uint64_t build_stamps;

/* The mesh's key: its content key folded (FNV-1a) with this build's stamp, so that a rebuilt mesh at
 * the address of a destroyed one never matches it, even with the same content, and a mesh of another
 * process matches only with the same content. Never 0. */
uint64_t kcc_fresh_key(uint64_t content)
{
    const uint64_t stamp = atomic_fetch_add_explicit(&build_stamps, 1u, memory_order_relaxed) + 1u;
    uint64_t h = content;
    for (int i = 0; i < 64; i += 16)
        h = (h ^ ((stamp >> i) & 0xffffu)) * 0x100000001b3ull;
    return h ? h : 1;
}

/* The desc's fields, before any triangle is read. */
static kcc_status check_desc(const kcc_mesh_desc *desc, size_t stride)
{
    if (desc->triangle_count == 0)
        return KCC_ERR_NO_TRIANGLES;
    if (!desc->positions || desc->vertex_count == 0)
        return KCC_ERR_NO_VERTICES;
    if (desc->vertex_stride != 0 && (desc->vertex_stride < 12 || desc->vertex_stride % 4 != 0))
        return KCC_ERR_BAD_STRIDE;
    if ((desc->allocator.alloc == NULL) != (desc->allocator.free == NULL) ||
        (desc->vertex_coding != KCC_VERTEX_AUTO && desc->vertex_coding != KCC_VERTEX_FLOATS &&
         desc->vertex_coding != KCC_VERTEX_TABLES))
        return KCC_ERR_BAD_DESC;
    if (desc->triangle_count > KCC_MESH_MAX_TRIANGLES)
        return KCC_ERR_TOO_LARGE;
    /* Every size below is computed in 64 bits and checked against size_t (matters on 32-bit). */
    if ((uint64_t)(desc->vertex_count - 1) * stride + 12u > (uint64_t)SIZE_MAX)
        return KCC_ERR_TOO_LARGE;
    if (!desc->indices && (uint64_t)desc->triangle_count * 3u > desc->vertex_count)
        return KCC_ERR_INDEX_OUT_OF_RANGE;
    return KCC_OK;
}

/* Indices in range, coordinates finite (nothing is allocated before this passes). */
static kcc_status check_triangles(const kcc_mesh_desc *desc, size_t stride)
{
    for (uint32_t t = 0; t < desc->triangle_count; ++t) {
        for (int c = 0; c < 3; ++c) {
            uint32_t idx = tri_index(desc, t, c);
            if (idx >= desc->vertex_count)
                return KCC_ERR_INDEX_OUT_OF_RANGE;
            float v[3];
            load_vertex(desc, stride, idx, v);
            if (!isfinite(v[0]) || !isfinite(v[1]) || !isfinite(v[2]))
                return KCC_ERR_NON_FINITE;
        }
    }
    return KCC_OK;
}

static void load_triangle(const kcc_mesh_desc *desc, size_t stride, uint32_t t, float out[3][3])
{
    for (int c = 0; c < 3; ++c)
        load_vertex(desc, stride, tri_index(desc, t, c), out[c]);
}

/* The build's scratch (freed before kcc_mesh_build returns): build prims, the binary tree, the
 * collapse's plan and queue, each input triangle's representative and the vertex numbering, sized
 * for n triangles (degenerate and duplicate ones only leave some unused). The duplicate finder's
 * hash table lives where the binary tree will be (it is done with before the tree is built):
 * table_bits is its size's log2; the plan's costs where the prims were (list_slots is done with
 * them first: 2 n entries of 16 bytes in n prims of 32). */
typedef struct build_scratch {
    char          *block;
    kcc_build_prim *prims;
    kcc_node_pair *pairs;
    uint8_t      (*plan)[4];    ///< kcc_tree_plan_collapse's, 2 n entries
    float        (*plan_cost)[4]; ///< its scratch, in the prims' place
    uint32_t      *queue;
    uint32_t      *rep_of;      ///< input index -> its representative's, or NOT_LIVE
    uint32_t      *table;       ///< 1 << table_bits entries: 0 empty, else representative + 1
    int            table_bits;
    uint32_t      *slot_input;  ///< position -> input index (n entries): the slots' (leaf order,
                                ///< then the degenerate ones), then the duplicates' in list order
    uint32_t      *input_slot;  ///< input index -> slot (n entries; set for the stored triangles)
    uint32_t      *link_to;     ///< position -> its back link (LINK_NONE where unmarked, n entries)
    uint32_t      *corner;      ///< slot s's corners as vertex numbers: corner[3 s .. 3 s + 2]
    uint32_t      *block_base;  ///< per block of KCC_CORNER_BLOCK slots: its base vertex number
    uint32_t      *vertex_src;  ///< vertex number -> the desc's index of its first use (3 n)
    uint32_t      *vtable;      ///< 1 << vtable_bits entries: 0 empty, else vertex number + 1;
                                ///< once the vertices are numbered, the vertex tables' sorting
    int            vtable_bits;
} build_scratch;

/* rep_of of a degenerate triangle. */
#define NOT_LIVE UINT32_MAX

/* Where a triangle's (count 9) or a vertex's (count 3) probe sequence starts: FNV-1a over the
 * coordinates' bits, mixed so that the top bits (the ones used, bits <= 32) depend on every bit of
 * every coordinate. */
static uint32_t coords_hash(const float *v, int count, int bits)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (int i = 0; i < count; ++i) {
        uint32_t w;
        memcpy(&w, &v[i], sizeof w);
        h = (h ^ w) * 0x100000001b3ull;
    }
    h = (h ^ (h >> 32)) * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(h >> (64 - bits));
}

/* The representative of live triangle t (corners v): the earlier input triangle with the same corners
 * bit for bit, found in the open-addressing table, or t itself, which then enters the table. */
static uint32_t find_representative(const kcc_mesh_desc *desc, size_t stride, build_scratch *sc,
                                    uint32_t t, float v[3][3])
{
    const uint32_t mask = (uint32_t)((1ull << sc->table_bits) - 1u);
    for (uint32_t h = coords_hash(&v[0][0], 9, sc->table_bits);; h = (h + 1u) & mask) {
        if (sc->table[h] == 0) {
            sc->table[h] = t + 1u;
            return t;
        }
        float u[3][3];
        load_triangle(desc, stride, sc->table[h] - 1u, u);
        if (memcmp(u, v, sizeof u) == 0)
            return sc->table[h] - 1u;
    }
}

/* The build prims of the representatives (live triangles that duplicate no earlier one) in input
 * order, ids = input index (the builder's tie-break key), and every triangle's rep_of. Returns how
 * many prims; *out_scale is their largest |coordinate|, *out_dups the live triangles left out. */
static uint32_t gather_prims(const kcc_mesh_desc *desc, size_t stride, build_scratch *sc,
                             float *out_scale, uint32_t *out_dups)
{
    uint32_t live = 0, dups = 0;
    float scale = 0.0f;
    memset(sc->table, 0, sizeof(uint32_t) << sc->table_bits);
    for (uint32_t t = 0; t < desc->triangle_count; ++t) {
        float v[3][3];
        load_triangle(desc, stride, t, v);
        if (kcc_tri_is_degenerate(v[0], v[1], v[2])) {
            sc->rep_of[t] = NOT_LIVE;
            continue;
        }
        sc->rep_of[t] = find_representative(desc, stride, sc, t, v);
        if (sc->rep_of[t] != t) {
            ++dups;
            continue;
        }
        kcc_build_prim *p = &sc->prims[live++];
        for (int k = 0; k < 3; ++k) {
            p->lo[k] = min3f(v[0][k], v[1][k], v[2][k]);
            p->hi[k] = max3f(v[0][k], v[1][k], v[2][k]);
            float a = fabsf(p->lo[k]) > fabsf(p->hi[k]) ? fabsf(p->lo[k]) : fabsf(p->hi[k]);
            scale = a > scale ? a : scale;
        }
        p->id = t;
        p->pad = 0.0f;
    }
    *out_scale = scale;
    *out_dups = dups;
    return live;
}

static kcc_status scratch_alloc(const kcc_allocator *al, uint32_t n, build_scratch *out)
{
    /* The table: at least twice n entries (probe runs stay short), within the pairs' n * 64 bytes. */
    out->table_bits = 1;
    while ((1ull << out->table_bits) < 2ull * n)
        ++out->table_bits;
    /* The vertex table: at least twice the 3 n corners' entries (at most 2^32: n <= 2^30). */
    out->vtable_bits = 1;
    while (out->vtable_bits < 32 && (1ull << out->vtable_bits) < 6ull * n)
        ++out->vtable_bits;
    const uint64_t off_pairs = round_up((size_t)n * sizeof(kcc_build_prim));
    const uint64_t off_plan = off_pairs + (uint64_t)n * sizeof(kcc_node_pair);
    const uint64_t off_queue = off_plan + round_up((uint64_t)n * 2 * sizeof(uint8_t[4]));
    const uint64_t off_rep = off_queue + (uint64_t)n * 2 * sizeof(uint32_t);
    const uint64_t off_slot_input = off_rep + (uint64_t)n * sizeof(uint32_t);
    const uint64_t off_input_slot = off_slot_input + (uint64_t)n * sizeof(uint32_t);
    const uint64_t off_link_to = off_input_slot + (uint64_t)n * sizeof(uint32_t);
    const uint64_t off_corner = off_link_to + (uint64_t)n * sizeof(uint32_t);
    const uint64_t off_block_base = off_corner + (uint64_t)n * 3 * sizeof(uint32_t);
    const uint64_t off_vertex_src = off_block_base + ((uint64_t)n / KCC_CORNER_BLOCK + 1u) * sizeof(uint32_t);
    const uint64_t off_vtable = off_vertex_src + (uint64_t)n * 3 * sizeof(uint32_t);
    const uint64_t bytes = off_vtable + (sizeof(uint32_t) << out->vtable_bits);
    /* The mesh's own block, allocated after the build: everything but the groups, plus at most
     * n groups. */
    const uint64_t fixed = round_up(sizeof(kcc_mesh)) + KCC_MESH_TOP_GROUPS * sizeof(kcc_box4) +
                           (uint64_t)n * (sizeof(kcc_tri) + 3 * sizeof(uint32_t) + 5 * sizeof(uint32_t));
    if (fixed + (uint64_t)n * sizeof(kcc_qnode4) > (uint64_t)SIZE_MAX / 2 ||
        bytes > (uint64_t)SIZE_MAX / 2)
        return KCC_ERR_TOO_LARGE;
    KCC_ASSERT((sizeof(uint32_t) << out->table_bits) <= (uint64_t)n * sizeof(kcc_node_pair) + 64u);
    out->block = al->alloc((size_t)bytes, BLOCK_ALIGN, al->user);
    if (!out->block)
        return KCC_ERR_OUT_OF_MEMORY;
    out->prims = (kcc_build_prim *)out->block;
    out->pairs = (kcc_node_pair *)(out->block + off_pairs);
    out->plan = (uint8_t(*)[4])(out->block + off_plan);
    out->plan_cost = (float(*)[4])(void *)out->block;
    out->queue = (uint32_t *)(out->block + off_queue);
    out->rep_of = (uint32_t *)(out->block + off_rep);
    out->table = (uint32_t *)(void *)out->pairs;
    out->slot_input = (uint32_t *)(out->block + off_slot_input);
    out->input_slot = (uint32_t *)(out->block + off_input_slot);
    out->link_to = (uint32_t *)(out->block + off_link_to);
    out->corner = (uint32_t *)(out->block + off_corner);
    out->block_base = (uint32_t *)(out->block + off_block_base);
    out->vertex_src = (uint32_t *)(out->block + off_vertex_src);
    out->vtable = (uint32_t *)(out->block + off_vtable);
    return KCC_OK;
}

/* How a mesh stores its vertices (kcc_mesh.tables): bytes 0 for floats; with tables each
 * axis's distinct values, the bit where its index starts in a code and the code's bytes. */
typedef struct vertex_code {
    uint32_t values[3];
    uint8_t  shift[3];
    uint8_t  bytes;
} vertex_code;

/* The sizes of a mesh's arrays: input triangles, stored ones (the tree's and the degenerate ones),
 * the tree's, duplicates, vertices and the representatives with duplicates; the vertices' coding. */
typedef struct mesh_sizes {
    uint32_t    triangles, slots, tree, dups, vertices, sets, links;
    vertex_code code;
} mesh_sizes;

/* Bytes of the codes of `vertices` vertices and their padding, rounded to 4 (the values follow). */
static uint64_t codes_bytes(uint32_t vertices, const vertex_code *code)
{
    return ((uint64_t)vertices * code->bytes + KCC_MESH_CODE_PAD + 3u) / 4u * 4u;
}

/* Bytes of a mesh's vertices: three floats each and a padding float, or with tables (code.bytes >
 * 0) the tables' header (kcc_vertex_tables), the codes with their padding and the axes' values. */
static uint64_t vertex_region_bytes(uint32_t vertices, const vertex_code *code)
{
    if (code->bytes == 0)
        return ((uint64_t)vertices * 3u + 1u) * sizeof(float);
    return sizeof(kcc_vertex_tables) + codes_bytes(vertices, code) +
           ((uint64_t)code->values[0] + code->values[1] + code->values[2]) * sizeof(float);
}

/* Bytes of each entry of the index maps and duplicate lists of a mesh of `triangles` input
 * triangles (kcc_index_array). */
static size_t index_bytes(uint32_t triangles)
{
    return triangles <= KCC_MESH_NARROW_IDS ? sizeof(uint16_t) : sizeof(uint32_t);
}

/* Bytes of a bitmap of `bits` bits with its ranks (KCC_RANK_WORDS), rounded to 8. */
static uint64_t marks_bytes(uint32_t bits)
{
    const uint32_t words = (uint32_t)(((uint64_t)bits + 63u) / 64u);
    return words * sizeof(uint64_t) + ((uint64_t)kcc_rank_count(words) * sizeof(uint32_t) + 7u) / 8u * 8u;
}

/* Bytes of the duplicate lists of a mesh of `tree` tree triangles and `dups` duplicates of `sets`
 * representatives (marks, ranks, sets + 1 list starts and the dups input indices), none without
 * duplicates. */
static uint64_t dup_bytes(uint32_t tree, uint32_t dups, uint32_t sets, size_t id_bytes)
{
    return dups ? marks_bytes(tree) + ((uint64_t)sets + 1u + dups) * id_bytes : 0u;
}

/* Points an index array at bytes p of the block. */
static kcc_index_array index_array(char *p, bool narrow)
{
    kcc_index_array a;
    if (narrow)
        a.narrow = (uint16_t *)(void *)p;
    else
        a.wide = (uint32_t *)(void *)p;
    return a;
}

/* Bytes of the back links of a mesh of `triangles` input triangles with `links` of them: a mark
 * and a rank per 64 positions, an entry per link. */
static uint64_t link_bytes(uint32_t triangles, uint32_t links, size_t id_bytes)
{
    return marks_bytes(triangles) + (uint64_t)links * id_bytes;
}

/* Where each part of a mesh's single block starts, and its total bytes. */
typedef struct mesh_offsets {
    uint64_t top, groups, verts, base, corners, id, link_marks, links, marks, first, total;
} mesh_offsets;

/* The mesh's single block: the struct, the top groups' boxes (kcc_mesh.top), quad_count groups,
 * then the vertices (vertex_region_bytes), the corner bases, the stored triangles' corner offsets,
 * tri_id, the back links and the duplicate lists (when there are duplicates). Returns the total. */
static uint64_t mesh_layout(const mesh_sizes *sz, uint32_t quad_count, mesh_offsets *o)
{
    o->top = round_up(sizeof(kcc_mesh));
    o->groups = round_up(o->top + kcc_mesh_top_count(quad_count) * sizeof(kcc_box4));
    o->verts = o->groups + (uint64_t)quad_count * sizeof(kcc_qnode4);
    const uint64_t blocks = ((uint64_t)sz->slots + KCC_CORNER_BLOCK - 1u) / KCC_CORNER_BLOCK;
    o->base = o->verts + vertex_region_bytes(sz->vertices, &sz->code);
    o->corners = o->base + blocks * sizeof(uint32_t);
    const uint64_t id_bytes = index_bytes(sz->triangles);
    o->id = (o->corners + (uint64_t)sz->slots * 3u + 3u) / 4u * 4u;
    o->link_marks = (o->id + (uint64_t)sz->slots * id_bytes + 7u) / 8u * 8u;
    o->links = o->link_marks + marks_bytes(sz->triangles);
    o->marks = (o->link_marks + link_bytes(sz->triangles, sz->links, id_bytes) + 7u) / 8u * 8u;
    o->first = o->marks + marks_bytes(sz->tree);
    o->total = round_up(o->marks + dup_bytes(sz->tree, sz->dups, sz->sets, id_bytes));
    return o->total;
}

/* Points the mesh's vertex fields at the block's vertex region (at verts, 8-byte aligned) for the
 * coding: the floats, or the tables' header, codes and values. */
static void place_vertices(kcc_mesh *m, char *verts, uint32_t vertices, const vertex_code *code)
{
    if (code->bytes == 0) {
        m->verts = (float(*)[3])(void *)verts;
        m->verts[vertices][0] = 0.0f; /* the padding */
        return;
    }
    kcc_vertex_tables *t = (kcc_vertex_tables *)(void *)verts;
    t->codes = (uint8_t *)verts + sizeof *t;
    t->code_bytes = code->bytes;
    float *values = (float *)(void *)(t->codes + codes_bytes(vertices, code));
    for (int k = 0; k < 3; ++k) {
        t->values[k] = values;
        values += code->values[k];
        t->value_count[k] = code->values[k];
        t->code_shift[k] = code->shift[k];
        t->code_mask[k] = code->values[k] > 1 ? UINT32_MAX >> __builtin_clz(code->values[k] - 1u) : 0u;
    }
    m->tables = t;
}

/* The mesh's single block (mesh_layout). NULL when the allocator fails. */
static kcc_mesh *mesh_alloc(const kcc_allocator *al, const mesh_sizes *sz, uint32_t quad_count)
{
    mesh_offsets o;
    const uint64_t total = mesh_layout(sz, quad_count, &o);
    const uint64_t id_bytes = index_bytes(sz->triangles);
    const uint64_t link_words = ((uint64_t)sz->triangles + 63u) / 64u;
    const uint64_t words = ((uint64_t)sz->tree + 63u) / 64u;
    char *block = al->alloc((size_t)total, BLOCK_ALIGN, al->user);
    if (!block)
        return NULL;
    kcc_mesh *m = (kcc_mesh *)block;
    memset(m, 0, sizeof *m);
    m->allocator = *al;
    m->block_bytes = (size_t)total;
    m->top = (kcc_box4 *)(void *)(block + o.top);
    m->groups = (kcc_qnode4 *)(void *)(block + o.groups);
    place_vertices(m, block + o.verts, sz->vertices, &sz->code);
    m->corner_base = (uint32_t *)(void *)(block + o.base);
    m->corners = (uint8_t(*)[3])(void *)(block + o.corners);
    m->narrow_ids = id_bytes == sizeof(uint16_t);
    m->tri_id = index_array(block + o.id, m->narrow_ids);
    m->link_marks = (uint64_t *)(void *)(block + o.link_marks);
    m->link_rank = (uint32_t *)(void *)(block + o.link_marks + link_words * sizeof(uint64_t));
    m->links = index_array(block + o.links, m->narrow_ids);
    if (sz->dups) {
        m->dup_marks = (uint64_t *)(void *)(block + o.marks);
        m->dup_rank = (uint32_t *)(void *)(block + o.marks + words * sizeof(uint64_t));
        m->dup_first = index_array(block + o.first, m->narrow_ids);
        m->dup_ids = index_array(block + o.first + ((uint64_t)sz->sets + 1u) * id_bytes, m->narrow_ids);
    }
    m->triangle_count = sz->triangles;
    m->slot_count = sz->slots;
    m->tree_triangles = sz->tree;
    m->duplicate_count = sz->dups;
    m->dup_sets = sz->sets;
    m->link_count = sz->links;
    m->vertex_count = sz->vertices;
    m->quad_count = quad_count;
    return m;
}

/* Each slot's input triangle: the tree's in leaf order (the prims, once built), then the degenerate
 * ones in input order (for kcc_mesh_triangle); each stored triangle's slot. */
static void list_slots(build_scratch *sc, uint32_t tree, uint32_t triangles)
{
    for (uint32_t s = 0; s < tree; ++s)
        sc->slot_input[s] = sc->prims[s].id;
    uint32_t slot = tree;
    for (uint32_t t = 0; t < triangles; ++t)
        if (sc->rep_of[t] == NOT_LIVE)
            sc->slot_input[slot++] = t;
    for (uint32_t s = 0; s < slot; ++s)
        sc->input_slot[sc->slot_input[s]] = s;
}

/* The duplicates after the slots (positions slots ..), grouped by their representative's slot in
 * slot order, ascending within a group: the order of the lists (fill_duplicates). A counting sort
 * over `start` (tree + 1 entries of scratch). Returns how many slots have duplicates. */
static uint32_t list_duplicates(build_scratch *sc, uint32_t triangles, uint32_t slots, uint32_t tree,
                                uint32_t *start)
{
    memset(start, 0, sizeof(uint32_t) * ((size_t)tree + 1u));
    for (uint32_t t = 0; t < triangles; ++t)
        if (sc->rep_of[t] != t && sc->rep_of[t] != NOT_LIVE)
            ++start[sc->input_slot[sc->rep_of[t]] + 1u];
    uint32_t sets = 0;
    for (uint32_t s = 0; s < tree; ++s) {
        sets += start[s + 1u] > 0;
        start[s + 1u] += start[s];
    }
    for (uint32_t t = 0; t < triangles; ++t)
        if (sc->rep_of[t] != t && sc->rep_of[t] != NOT_LIVE)
            sc->slot_input[slots + start[sc->input_slot[sc->rep_of[t]]]++] = t;
    return sets;
}

/* The back links of the cycles of position -> input (slot_input, a permutation of 0 .. n - 1; see
 * KCC_LINK_STEPS): on a cycle x_0 = its lowest position, x_1 = slot_input[x_0], .. of length L >
 * KCC_LINK_STEPS, x_j for every j a multiple of KCC_LINK_STEPS links to x_(j - KCC_LINK_STEPS mod L),
 * so every KCC_LINK_STEPS consecutive positions hold a mark. Shorter cycles need none. Returns how
 * many links. */
#define LINK_NONE UINT32_MAX
#define LINK_UNSEEN (UINT32_MAX - 1u)
static uint32_t make_links(build_scratch *sc, uint32_t n)
{
    for (uint32_t p = 0; p < n; ++p)
        sc->link_to[p] = LINK_UNSEEN;
    uint32_t links = 0;
    for (uint32_t p = 0; p < n; ++p) {
        if (sc->link_to[p] != LINK_UNSEEN)
            continue;
        uint32_t length = 0;
        for (uint32_t x = p; sc->link_to[x] == LINK_UNSEEN; x = sc->slot_input[x], ++length)
            sc->link_to[x] = LINK_NONE;
        if (length <= KCC_LINK_STEPS)
            continue;
        uint32_t mark = p, x = p;
        for (uint32_t j = 0; j < length; ++j, x = sc->slot_input[x]) {
            if (j % KCC_LINK_STEPS == 0 && j > 0) {
                sc->link_to[x] = mark;
                mark = x;
            }
            if (j == length - KCC_LINK_STEPS)
                sc->link_to[p] = x;
        }
        links += (length + KCC_LINK_STEPS - 1u) / KCC_LINK_STEPS;
    }
    return links;
}

/* How far below the vertex count at a block's start its base may always lie: the block adds at
 * most 3 KCC_CORNER_BLOCK vertices, so every offset from the base is at most 255 vertices (8 bits).
 * choose_block_base lowers it further where the block adds fewer. */
#define CORNER_REACH (255u - 3u * KCC_CORNER_BLOCK + 1u)

/* The vertex table's entry for the corner equal (bit for bit) to source vertex src: the one that
 * holds its latest number, or the empty one where it would go. */
static uint32_t vertex_entry(const kcc_mesh_desc *desc, size_t stride, const build_scratch *sc,
                             uint32_t src)
{
    const uint32_t mask = (uint32_t)((1ull << sc->vtable_bits) - 1u);
    float p[3];
    load_vertex(desc, stride, src, p);
    uint32_t h = coords_hash(p, 3, sc->vtable_bits);
    for (; sc->vtable[h] != 0; h = (h + 1u) & mask) {
        float q[3];
        load_vertex(desc, stride, sc->vertex_src[sc->vtable[h] - 1u], q);
        if (memcmp(p, q, sizeof p) == 0)
            break;
    }
    return h;
}

/* The latest number of a corner equal to source vertex src, UINT32_MAX when none is numbered. */
static uint32_t latest_number(const kcc_mesh_desc *desc, size_t stride, const build_scratch *sc,
                              uint32_t src)
{
    return sc->vtable[vertex_entry(desc, stride, sc, src)] - 1u; /* 0 - 1: UINT32_MAX */
}

/* The vertex number of corner p (its source vertex src) for a block whose base is `base`: the
 * latest number of an equal corner (bit for bit: every test then reads the very floats the input
 * gave) when it is not below the base, else a new number (the first use, or a copy within reach),
 * which the table then holds. */
static uint32_t vertex_number(const kcc_mesh_desc *desc, size_t stride, build_scratch *sc,
                              uint32_t src, uint32_t base, uint32_t *count)
{
    const uint32_t h = vertex_entry(desc, stride, sc, src);
    if (sc->vtable[h] != 0 && sc->vtable[h] - 1u >= base)
        return sc->vtable[h] - 1u;
    sc->vertex_src[*count] = src;
    sc->vtable[h] = *count + 1u;
    return (*count)++;
}

/* The distinct corners (bit for bit) of the block of slots s0 .. s1 - 1, each its latest number
 * (UINT32_MAX when none is numbered) in latest[]; returns how many. */
static uint32_t block_corners(const kcc_mesh_desc *desc, size_t stride, const build_scratch *sc,
                              uint32_t s0, uint32_t s1, uint32_t latest[3 * KCC_CORNER_BLOCK])
{
    enum { BITS = 7 }; /* an open-addressing table of 128 entries for at most 48 corners */
    float seen[3 * KCC_CORNER_BLOCK][3];
    uint8_t table[1u << BITS] = {0}; /* 0 empty, else the index in seen + 1 */
    uint32_t count = 0;
    for (uint32_t s = s0; s < s1; ++s)
        for (int c = 0; c < 3; ++c) {
            const uint32_t src = tri_index(desc, sc->slot_input[s], c);
            load_vertex(desc, stride, src, seen[count]);
            uint32_t h = coords_hash(seen[count], 3, BITS);
            while (table[h] != 0 && memcmp(seen[table[h] - 1u], seen[count], sizeof seen[count]) != 0)
                h = (h + 1u) & ((1u << BITS) - 1u);
            if (table[h] != 0)
                continue;
            table[h] = (uint8_t)(count + 1u);
            latest[count++] = latest_number(desc, stride, sc, src);
        }
    return count;
}

/* The lowest base block s0 .. s1 - 1 can count from, `count` vertices numbered before it: its new
 * numbers (count .. count + new - 1, one per distinct corner whose latest number lies below the
 * base) must stay within 255 of the base, and a lower base reaches further back (fewer copies, so
 * no more new numbers: each step keeps every offset within reach). */
static uint32_t choose_block_base(const kcc_mesh_desc *desc, size_t stride, const build_scratch *sc,
                                  uint32_t s0, uint32_t s1, uint32_t count)
{
    uint32_t base = count > CORNER_REACH ? count - CORNER_REACH : 0u;
    if (base == 0)
        return 0;
    uint32_t latest[3 * KCC_CORNER_BLOCK];
    const uint32_t corners = block_corners(desc, stride, sc, s0, s1, latest);
    for (int pass = 0; pass < 3 && base > 0; ++pass) {
        uint32_t fresh = 0;
        for (uint32_t j = 0; j < corners; ++j)
            fresh += latest[j] == UINT32_MAX || latest[j] < base;
        const uint32_t lowest = count + fresh > 256u ? count + fresh - 256u : 0u;
        if (lowest >= base)
            break;
        base = lowest;
    }
    return base;
}

/* Numbers the corners of slots 0 .. slots - 1 in order of first use, block by block (each block's
 * base in sc->block_base), each slot's corners in sc->corner, each number's source vertex in
 * sc->vertex_src. Returns how many numbers. */
static uint32_t number_vertices(const kcc_mesh_desc *desc, size_t stride, build_scratch *sc,
                                uint32_t slots)
{
    uint32_t count = 0;
    memset(sc->vtable, 0, sizeof(uint32_t) << sc->vtable_bits);
    for (uint32_t s = 0; s < slots; ++s) {
        if (s % KCC_CORNER_BLOCK == 0) {
            const uint32_t end = slots - s > KCC_CORNER_BLOCK ? s + KCC_CORNER_BLOCK : slots;
            sc->block_base[s / KCC_CORNER_BLOCK] = choose_block_base(desc, stride, sc, s, end, count);
        }
        const uint32_t base = sc->block_base[s / KCC_CORNER_BLOCK];
        for (int c = 0; c < 3; ++c)
            sc->corner[3u * s + (uint32_t)c] =
                vertex_number(desc, stride, sc, tri_index(desc, sc->slot_input[s], c), base, &count);
    }
    return count;
}

static int compare_bits(const void *a, const void *b)
{
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* The distinct coordinates along axis k of the numbered vertices (their bits, so +0 and -0 apart),
 * ascending by bits, in out[0 .. returned count) (out: room for `vertices`). */
static uint32_t axis_values(const kcc_mesh_desc *desc, size_t stride, const build_scratch *sc,
                            uint32_t vertices, int k, uint32_t *out)
{
    for (uint32_t v = 0; v < vertices; ++v) {
        float p[3];
        load_vertex(desc, stride, sc->vertex_src[v], p);
        memcpy(&out[v], &p[k], sizeof out[v]);
    }
    qsort(out, vertices, sizeof *out, compare_bits);
    uint32_t count = 0;
    for (uint32_t v = 0; v < vertices; ++v)
        if (count == 0 || out[count - 1u] != out[v])
            out[count++] = out[v];
    return count;
}

/* The vertex coding the desc asks for (kcc_vertex_coding): with KCC_VERTEX_AUTO, float vertices
 * where the mesh takes at most KCC_MESH_BUDGET_BYTES_PER_TRIANGLE bytes a triangle with them (the
 * fastest layout within the budget), else tables where they make the mesh smaller. Tables need at
 * most KCC_MESH_TABLE_VALUES values on every axis; each code is the fewest whole bytes holding its
 * three indices. The counts sort the vertices' coordinates in the vertex table's place (done with
 * once the vertices are numbered: 6 n entries for at most 3 n vertices). */
static vertex_code choose_coding(const kcc_mesh_desc *desc, size_t stride, const build_scratch *sc,
                                 const mesh_sizes *sz, uint32_t quad_count)
{
    const vertex_code floats = {{0, 0, 0}, {0, 0, 0}, 0};
    if (desc->vertex_coding == KCC_VERTEX_FLOATS)
        return floats;
    mesh_sizes probe = *sz;
    mesh_offsets o;
    probe.code = floats;
    const uint64_t float_bytes = mesh_layout(&probe, quad_count, &o);
    const bool automatic = desc->vertex_coding == KCC_VERTEX_AUTO;
    if (automatic && float_bytes <= (uint64_t)KCC_MESH_BUDGET_BYTES_PER_TRIANGLE * sz->triangles)
        return floats;
    vertex_code tables = floats;
    uint32_t bits = 0;
    for (int k = 0; k < 3; ++k) {
        tables.values[k] = axis_values(desc, stride, sc, sz->vertices, k, sc->vtable);
        if (tables.values[k] > KCC_MESH_TABLE_VALUES)
            return floats;
        tables.shift[k] = (uint8_t)bits;
        bits += tables.values[k] > 1 ? 32u - (uint32_t)__builtin_clz(tables.values[k] - 1u) : 0u;
    }
    tables.bytes = (uint8_t)(bits > 8u ? (bits + 7u) / 8u : 1u);
    probe.code = tables;
    const uint64_t table_bytes = mesh_layout(&probe, quad_count, &o);
    if ((automatic && table_bytes >= float_bytes) || table_bytes > (uint64_t)SIZE_MAX / 2)
        return floats; /* the build checked that the float layout's size fits (scratch_alloc) */
    return tables;
}

/* Index of `bits` among the sorted distinct values[0 .. count) (it is one of them). */
static uint32_t value_index(const uint32_t *values, uint32_t count, uint32_t bits)
{
    uint32_t lo = 0, hi = count;
    while (hi - lo > 1u) {
        const uint32_t mid = lo + (hi - lo) / 2u;
        if (values[mid] <= bits)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* The vertex tables of mesh m (place_vertices laid them out): each axis's sorted distinct values
 * (axis_values, in the vertex table's place), and each vertex's index of them in its code. */
static void fill_vertex_tables(kcc_mesh *m, const build_scratch *sc, const kcc_mesh_desc *desc,
                               size_t stride)
{
    kcc_vertex_tables *t = (kcc_vertex_tables *)(uintptr_t)m->tables; /* in the mesh's own block */
    const uint32_t bytes = t->code_bytes;
    memset(t->codes, 0, (size_t)m->vertex_count * bytes + KCC_MESH_CODE_PAD);
    for (int k = 0; k < 3; ++k) {
        const uint32_t count = axis_values(desc, stride, sc, m->vertex_count, k, sc->vtable);
        KCC_ASSERT(count == t->value_count[k]);
        memcpy(t->values[k], sc->vtable, sizeof(float) * count);
        for (uint32_t v = 0; v < m->vertex_count; ++v) {
            float p[3];
            uint32_t bits;
            load_vertex(desc, stride, sc->vertex_src[v], p);
            memcpy(&bits, &p[k], sizeof bits);
            const uint64_t field = (uint64_t)value_index(sc->vtable, count, bits) << t->code_shift[k];
            for (uint32_t b = 0; b < bytes; ++b) /* little endian, as kcc_load_le64 reads it */
                t->codes[(size_t)v * bytes + b] |= (uint8_t)(field >> (8u * b));
        }
    }
}

/* The four-wide groups, the shared vertices, every slot's index triple and index maps, the node
 * count and the bounds, from the binary tree over the representatives' prims and the numbering. */
static void fill_tree(kcc_mesh *m, const build_scratch *sc, const kcc_mesh_desc *desc,
                      size_t stride)
{
    kcc_tree_collapse(sc->pairs, (const uint8_t(*)[4])sc->plan, NULL, m->groups, sc->queue);
    kcc_qnode4_decode(&m->groups[0], &m->root);
    for (uint32_t g = 1; g <= kcc_mesh_top_count(m->quad_count); ++g) {
        kcc_node4 decoded;
        memcpy(&m->top[g - 1u], kcc_qnode4_decode(&m->groups[g], &decoded), sizeof m->top[0]);
    }
    uint32_t slots = 0, leaves = 0;
    for (uint32_t q = 0; q < m->quad_count; ++q)
        for (int i = 0; i < 4; ++i) {
            slots += m->groups[q].slots >> i & 1u;
            leaves += m->groups[q].count[i] != 0;
        }
    m->leaf_count = leaves; /* the plan merges some of the binary tree's */
    m->node_count = slots + (leaves > 1 ? 1u : 0u);
    const kcc_node_pair *root = &sc->pairs[0];
    m->bounds[0][0] = root->x[0][0], m->bounds[1][0] = root->x[1][0];
    m->bounds[0][1] = root->y[0][0], m->bounds[1][1] = root->y[1][0];
    m->bounds[0][2] = root->z[0][0], m->bounds[1][2] = root->z[1][0];
    if (m->tables) {
        fill_vertex_tables(m, sc, desc, stride);
    } else {
        for (uint32_t v = 0; v < m->vertex_count; ++v)
            load_vertex(desc, stride, sc->vertex_src[v], m->verts[v]);
    }
    for (uint32_t b = 0; b < (m->slot_count + KCC_CORNER_BLOCK - 1u) / KCC_CORNER_BLOCK; ++b)
        m->corner_base[b] = sc->block_base[b];
    for (uint32_t s = 0; s < m->slot_count; ++s) {
        const uint32_t t = sc->slot_input[s];
        for (int c = 0; c < 3; ++c) /* below 256: number_vertices keeps each block within reach */
            m->corners[s][c] =
                (uint8_t)(sc->corner[3u * s + (uint32_t)c] - sc->block_base[s / KCC_CORNER_BLOCK]);
        kcc_index_set(m, m->tri_id, s, t);
    }
}

/* The marks, ranks and entries of the back links (make_links), in position order. */
static void fill_links(kcc_mesh *m, const uint32_t *link_to)
{
    uint32_t links = 0;
    for (uint32_t p = 0; p < m->triangle_count; ++p) {
        if (p % 64u == 0)
            m->link_marks[p / 64u] = 0;
        if (link_to[p] != LINK_NONE) {
            m->link_marks[p / 64u] |= UINT64_C(1) << (p % 64u);
            kcc_index_set(m, m->links, links++, link_to[p]);
        }
    }
    const uint32_t marked = kcc_marks_rank(m->link_marks, (m->triangle_count + 63u) / 64u, m->link_rank);
    KCC_ASSERT(links == m->link_count && marked == links);
    (void)marked;
}

/* The lists beside the tree's slots from the duplicates' positions (list_duplicates): each list's
 * slot marked, its start noted where its first copy sits. */
static void fill_duplicates(kcc_mesh *m, const build_scratch *sc)
{
    if (m->duplicate_count == 0)
        return;
    memset(m->dup_marks, 0, sizeof(uint64_t) * (((size_t)m->tree_triangles + 63u) / 64u));
    uint32_t sets = 0, previous = UINT32_MAX;
    for (uint32_t e = 0; e < m->duplicate_count; ++e) {
        const uint32_t t = sc->slot_input[m->slot_count + e];
        const uint32_t s = sc->input_slot[sc->rep_of[t]];
        if (s != previous) {
            m->dup_marks[s / 64u] |= UINT64_C(1) << (s % 64u);
            kcc_index_set(m, m->dup_first, sets++, e);
            previous = s;
        }
        kcc_index_set(m, m->dup_ids, e, t);
    }
    kcc_index_set(m, m->dup_first, sets, m->duplicate_count);
    KCC_ASSERT(sets == m->dup_sets);
    kcc_marks_rank(m->dup_marks, (m->tree_triangles + 63u) / 64u, m->dup_rank);
}

kcc_status kcc_mesh_build(const kcc_mesh_desc *desc, kcc_mesh **out_mesh)
{
    if (!desc || !out_mesh)
        return KCC_ERR_NULL_ARGUMENT;
    const size_t stride = desc->vertex_stride ? desc->vertex_stride : 12;
    kcc_status st = check_desc(desc, stride);
    if (st == KCC_OK)
        st = check_triangles(desc, stride);
    if (st != KCC_OK)
        return st;
    const kcc_allocator al = kcc_allocator_or_default(&desc->allocator);
    const uint32_t n = desc->triangle_count;
    build_scratch sc;
    st = scratch_alloc(&al, n, &sc);
    if (st != KCC_OK)
        return st;
    float scale;
    uint32_t dups = 0;
    const uint32_t live = gather_prims(desc, stride, &sc, &scale, &dups);
    if (live == 0) { /* only degenerate triangles: nothing any query could report */
        al.free(sc.block, al.user);
        return KCC_ERR_NO_TRIANGLES;
    }
    uint32_t leaves = 0, depth = 0;
    const uint32_t pairs = kcc_tree_build(sc.prims, live, sc.pairs, &leaves, &depth);
    list_slots(&sc, live, n);
    kcc_tree_plan_collapse(sc.pairs, pairs, sc.plan_cost, sc.plan);
    const uint32_t sets = list_duplicates(&sc, n, n - dups, live, sc.queue); /* free until collapse */
    const uint32_t quads =
        kcc_tree_collapse(sc.pairs, (const uint8_t(*)[4])sc.plan, NULL, NULL, sc.queue);
    mesh_sizes sz = {n,    n - dups, live, dups, number_vertices(desc, stride, &sc, n - dups),
                     sets, make_links(&sc, n),  {{0, 0, 0}, {0, 0, 0}, 0}};
    sz.code = choose_coding(desc, stride, &sc, &sz, quads);
    kcc_mesh *m = mesh_alloc(&al, &sz, quads);
    if (!m) {
        al.free(sc.block, al.user);
        return KCC_ERR_OUT_OF_MEMORY;
    }
    m->coord_scale = scale;
    m->depth = depth;
    fill_tree(m, &sc, desc, stride);
    fill_duplicates(m, &sc);
    fill_links(m, sc.link_to);
    al.free(sc.block, al.user);
    m->key = kcc_fresh_key(content_key(m));
    KCC_ASSERT(kcc_mesh_validate(m) == KCC_OK);
    *out_mesh = m;
    return KCC_OK;
}

void kcc_mesh_destroy(kcc_mesh *mesh)
{
    if (!mesh)
        return;
    kcc_allocator al = mesh->allocator;
    al.free(mesh, al.user);
}

uint32_t kcc_mesh_triangle_count(const kcc_mesh *mesh)
{
    return mesh ? mesh->triangle_count : 0;
}

size_t kcc_mesh_memory_bytes(const kcc_mesh *mesh)
{
    return mesh ? mesh->block_bytes : 0;
}

void kcc_mesh_get_stats(const kcc_mesh *mesh, kcc_mesh_stats *out)
{
    if (!mesh || !out)
        return;
    if (mesh->hf) {
        kcc_hf_stats(mesh, out);
        return;
    }
    kcc_mesh_stats s;
    memset(&s, 0, sizeof s);
    s.triangles = mesh->triangle_count;
    s.degenerate = mesh->slot_count - mesh->tree_triangles;
    s.duplicates = mesh->duplicate_count;
    s.nodes = mesh->node_count;
    s.leaves = mesh->leaf_count;
    s.depth = mesh->depth;
    const size_t id_bytes = index_bytes(mesh->triangle_count);
    s.tree_bytes = (size_t)mesh->quad_count * sizeof(kcc_qnode4) + (size_t)mesh->slot_count * id_bytes +
                   (size_t)link_bytes(mesh->triangle_count, mesh->link_count, id_bytes) +
                   (size_t)dup_bytes(mesh->tree_triangles, mesh->duplicate_count, mesh->dup_sets, id_bytes);
    vertex_code code = {{0, 0, 0}, {0, 0, 0}, 0};
    if (mesh->tables) {
        code.bytes = mesh->tables->code_bytes;
        memcpy(code.values, mesh->tables->value_count, sizeof code.values);
        memcpy(s.axis_values, mesh->tables->value_count, sizeof s.axis_values);
    }
    s.vertex_coding = mesh->tables ? KCC_VERTEX_TABLES : KCC_VERTEX_FLOATS;
    s.vertex_bytes = (size_t)vertex_region_bytes(mesh->vertex_count, &code) +
                     ((size_t)mesh->slot_count + KCC_CORNER_BLOCK - 1u) / KCC_CORNER_BLOCK * sizeof(uint32_t) +
                     (size_t)mesh->slot_count * 3u * sizeof(uint8_t);
    *out = s;
}

void kcc_mesh_bounds(const kcc_mesh *mesh, vec3 out[2])
{
    if (!mesh || !out)
        return;
    for (int k = 0; k < 3; ++k) {
        out[0][k] = mesh->bounds[0][k];
        out[1][k] = mesh->bounds[1][k];
    }
}

/* Whether position p carries a back link; *out_link is it then. */
static inline bool back_link(const kcc_mesh *mesh, uint32_t p, uint32_t *out_link)
{
    if (!(mesh->link_marks[p / 64u] >> (p % 64u) & 1u))
        return false;
    *out_link = kcc_index_at(mesh, mesh->links, kcc_marks_before(mesh->link_marks, mesh->link_rank, p));
    return true;
}

uint32_t kcc_mesh_position_of(const kcc_mesh *mesh, uint32_t input)
{
    /* Forward from input's own position: the position before input comes first on a short cycle,
     * a mark within KCC_LINK_STEPS steps on a long one, whose link lies at most KCC_LINK_STEPS steps
     * before input: from there forward again. */
    uint32_t p = input;
    for (uint32_t step = 0; step < KCC_LINK_STEPS; ++step) {
        const uint32_t next = kcc_mesh_input_at(mesh, p);
        if (next == input)
            return p;
        if (next >= mesh->triangle_count)
            return UINT32_MAX;
        uint32_t link;
        if (back_link(mesh, p, &link)) {
            for (uint32_t back = 0; back < KCC_LINK_STEPS && link < mesh->triangle_count; ++back) {
                const uint32_t after = kcc_mesh_input_at(mesh, link);
                if (after == input)
                    return link;
                link = after;
            }
            return UINT32_MAX;
        }
        p = next;
    }
    return UINT32_MAX;
}

/* The tree slot whose list holds duplicate-list entry e: the list (the last start at or below e),
 * then its marked slot (the last rank group whose rank is at or below the list's number, and the
 * mark in its words). */
static uint32_t slot_of_listed(const kcc_mesh *mesh, uint32_t e)
{
    uint32_t lo = 0, hi = mesh->dup_sets; /* the list: dup_first[lo] <= e < dup_first[hi] */
    while (hi - lo > 1u) {
        const uint32_t mid = lo + (hi - lo) / 2u;
        if (kcc_index_at(mesh, mesh->dup_first, mid) <= e)
            lo = mid;
        else
            hi = mid;
    }
    const uint32_t words = (mesh->tree_triangles + 63u) / 64u;
    uint32_t g_lo = 0, g_hi = kcc_rank_count(words);
    while (g_hi - g_lo > 1u) {
        const uint32_t mid = g_lo + (g_hi - g_lo) / 2u;
        if (mesh->dup_rank[mid] <= lo)
            g_lo = mid;
        else
            g_hi = mid;
    }
    uint32_t skip = lo - mesh->dup_rank[g_lo];
    for (uint32_t w = g_lo * KCC_RANK_WORDS; w < words; ++w) {
        uint64_t word = mesh->dup_marks[w];
        const uint32_t marks = (uint32_t)__builtin_popcountll(word);
        if (skip >= marks) {
            skip -= marks;
            continue;
        }
        for (; skip > 0; --skip)
            word &= word - 1u; /* clears the lowest mark */
        return w * 64u + (uint32_t)__builtin_ctzll(word);
    }
    return UINT32_MAX;
}

uint32_t kcc_mesh_slot_of(const kcc_mesh *mesh, uint32_t input)
{
    const uint32_t p = kcc_mesh_position_of(mesh, input);
    if (p < mesh->slot_count || p == UINT32_MAX)
        return p;
    return slot_of_listed(mesh, p - mesh->slot_count);
}

bool kcc_mesh_triangle(const kcc_mesh *mesh, uint32_t i, vec3 out[3])
{
    if (!mesh || !out || i >= mesh->triangle_count)
        return false;
    kcc_tri t;
    if (mesh->hf && !kcc_hf_triangle(mesh, i, &t))
        return false;
    if (!mesh->hf) {
        const uint32_t s = kcc_mesh_slot_of(mesh, i);
        if (s >= mesh->slot_count) /* only on a mesh kcc_mesh_validate rejects */
            return false;
        kcc_mesh_tri(mesh, s, &t);
    }
    for (int c = 0; c < 3; ++c)
        for (int k = 0; k < 3; ++k)
            out[c][k] = t.v[c][k];
    return true;
}

/* ------------------------------------------------------------------------------------------------
 * Box queries. */

#if KCC_SSE
void kcc_mesh_tri4_load_tables(const kcc_mesh *mesh, const uint32_t slot[4], __m128 A[3],
                               __m128 B[3], __m128 C[3])
{
    /* The tables' header copied and the vectors stored last: a store through an __m128 pointer
     * may alias anything, and would make every decode reload the header. */
    const kcc_vertex_tables t = *mesh->tables;
    __m128 rows[3][3];
    for (int c = 0; c < 3; ++c) {
        float v[4][3];
        for (int l = 0; l < 4; ++l)
            kcc_tables_vertex(&t, kcc_mesh_vertex_of(mesh, slot[l], c), v[l]);
        for (int k = 0; k < 3; ++k)
            rows[c][k] = _mm_setr_ps(v[0][k], v[1][k], v[2][k], v[3][k]);
    }
    for (int k = 0; k < 3; ++k)
        A[k] = rows[0][k], B[k] = rows[1][k], C[k] = rows[2][k];
}
#endif

/* What a box walk reports: input indices of the exactly overlapping triangles, input indices of
 * those whose bounds overlap, the leaf slots of the latter in ascending order, or the exactly
 * overlapping triangles' representatives only (one per set of duplicates). */
typedef enum box_answer { BOX_EXACT, BOX_BOUNDS, BOX_SLOTS, BOX_EXACT_ONCE } box_answer;

/* Lane l set when triangle s0 + l (l < n) overlaps the box: exactly, or by its bounds. */
static inline int leaf_hits(const kcc_mesh *mesh, uint32_t s0, uint32_t n, const kcc_pbox *qb,
                            bool exact, kcc_vertex_read read)
{
#if KCC_SSE
    __m128 A[3], B[3], C[3];
    kcc_mesh_tri4_load(mesh, s0, n, read, A, B, C);
    if (exact)
        return kcc_tri4_overlap_box_lanes(A, B, C, n, qb->lo, qb->hi);
    __m128 in = _mm_castsi128_ps(_mm_set1_epi32(-1));
    for (int k = 0; k < 3; ++k) {
        __m128 mn = _mm_min_ps(_mm_min_ps(A[k], B[k]), C[k]);
        __m128 mx = _mm_max_ps(_mm_max_ps(A[k], B[k]), C[k]);
        in = _mm_and_ps(in, _mm_and_ps(_mm_cmple_ps(mn, qb->v_hi[k]), _mm_cmpge_ps(mx, qb->v_lo[k])));
    }
    return _mm_movemask_ps(in) & ((1 << n) - 1);
#else
    int hits = 0;
    for (uint32_t l = 0; l < n; ++l) {
        kcc_tri t;
        kcc_mesh_tri(mesh, s0 + l, &t);
        /* The exact test starts with the same triangle-bounds test. */
        bool hit = exact ? kcc_tri_overlap_box_internal(t.v[0], t.v[1], t.v[2], qb->lo, qb->hi)
                         : kcc_tri_bounds_touch(&t, qb->lo, qb->hi);
        hits |= hit ? 1 << l : 0;
    }
    (void)read;
    return hits;
#endif
}

uint32_t kcc_mesh_append_duplicates(const kcc_mesh *mesh, uint32_t s, uint32_t *out,
                                  uint32_t capacity, uint32_t found)
{
    uint32_t begin;
    const uint32_t listed = kcc_mesh_duplicates(mesh, s, &begin);
    for (uint32_t i = begin; i < begin + listed; ++i, ++found)
        if (found < capacity)
            out[found] = kcc_mesh_dup_id(mesh, i);
    return found;
}

/* Reports the triangles of slots s0 .. s0 + n - 1 (n <= 4) that answer the box query: appends
 * their input indices, or inserts their slots into the sorted prefix of out, while there is room.
 * Returns the new count of answers. */
KCC_HOT uint32_t box_leaf_run(const kcc_mesh *mesh, uint32_t s0, uint32_t n, const kcc_pbox *qb,
                              box_answer answer, kcc_vertex_read read, uint32_t *out,
                              uint32_t capacity, uint32_t found)
{
    const bool exact = answer == BOX_EXACT || answer == BOX_EXACT_ONCE;
    const bool listed = mesh->duplicate_count > 0 && (answer == BOX_EXACT || answer == BOX_BOUNDS);
    for (int hits = leaf_hits(mesh, s0, n, qb, exact, read); hits != 0; hits &= hits - 1) {
        const int bit = hits & -hits;
        const uint32_t s = s0 + (uint32_t)((bit >> 1) - (bit >> 3));
        if (found < capacity) {
            if (answer == BOX_SLOTS) {
                /* insertion into the sorted prefix: leaf runs arrive mostly in order */
                uint32_t j = found;
                while (j > 0 && out[j - 1] > s) {
                    out[j] = out[j - 1];
                    --j;
                }
                out[j] = s;
            } else {
                out[found] = kcc_mesh_tri_id(mesh, s);
            }
        }
        ++found;
        if (listed)
            found = kcc_mesh_append_duplicates(mesh, s, out, capacity, found);
    }
    return found;
}

/* box_leaf_run over slots run .. end - 1 (none when run == end), four at a time. */
KCC_HOT uint32_t box_slot_run(const kcc_mesh *mesh, uint32_t run, uint32_t end, const kcc_pbox *qb,
                              box_answer answer, kcc_vertex_read read, uint32_t *out,
                              uint32_t capacity, uint32_t found)
{
    for (uint32_t s0 = run; s0 < end; s0 += 4)
        found = box_leaf_run(mesh, s0, end - s0 < 4 ? end - s0 : 4, qb, answer, read, out, capacity,
                             found);
    return found;
}

/* The box walk of a tree mesh (below box_walk_under) reading vertices as `read` says. */
KCC_HOT uint32_t box_tree_walk(const kcc_mesh *mesh, uint32_t first, uint32_t count,
                               const kcc_pbox *qb, uint32_t *out, uint32_t capacity,
                               box_answer answer, kcc_vertex_read read)
{
    uint32_t found = 0;
    if (count > 0)
        return box_slot_run(mesh, first, first + count, qb, answer, read, out, capacity, found);
    uint32_t stack[KCC_TREE_STACK];
    uint32_t sp = 0, g = first;
    /* the first group's test (the root's and the top groups' in float: kcc_mesh_group_box_test);
     * every later group is an inner child, never the root */
    int mask = kcc_mesh_group_box_test(mesh, g, qb);
    for (;;) {
        const kcc_qnode4 *q = &mesh->groups[g];
        const int inner = mask & kcc_qnode4_inner_mask(q);
        KCC_ASSERT(sp + 4 <= KCC_TREE_STACK);
        for (int i = 3; i >= 0; --i)
            if (inner >> i & 1)
                stack[sp++] = q->first[i];
        for (int leaves = mask & ~inner; leaves != 0; leaves &= leaves - 1) {
            const int bit = leaves & -leaves;
            const int i = (bit >> 1) - (bit >> 3);
            found = box_slot_run(mesh, q->first[i], q->first[i] + q->count[i], qb, answer, read,
                                 out, capacity, found);
        }
        if (sp == 0)
            return found;
        g = stack[--sp];
        mask = kcc_mesh_inner_group_box_test(mesh, g, qb);
    }
}

KCC_TABLES_WALK uint32_t box_tree_walk_tables(const kcc_mesh *mesh, uint32_t first, uint32_t count,
                                              const kcc_pbox *qb, uint32_t *out, uint32_t capacity,
                                              box_answer answer)
{
    return box_tree_walk(mesh, first, count, qb, out, capacity, answer, KCC_READ_TABLES);
}

/* The tree walk of every box query (no argument checks: lo <= hi, finite): a group's inner
 * children that overlap the box are pushed (last slot first, so slot order is kept); its leaves
 * that overlap it are tested at once, in slot order, four triangles at a time. Returns how many
 * triangles answer; writes the first `capacity` of them. */
/// The box queries' walk of the subtree under one child of a group (first, count as the child
/// holds them: a leaf's slot range, or an inner node's group); (0, 0) is the whole tree. Forced
/// inline, so that each query has its walk compiled for its constant `answer` (left to the
/// compiler's cloning, a change at an entry point could leave one query on the walk for any
/// answer: exact box overlaps 3-5% slower, docs/collide.md "Cost").
KCC_HOT uint32_t box_walk_under(const kcc_mesh *mesh, uint32_t first, uint32_t count, const float lo[3],
                                const float hi[3], uint32_t *out, uint32_t capacity, box_answer answer)
{
    if (mesh->quad_count == 0 && !mesh->hf)
        return 0;
    kcc_pbox qb;
    kcc_pbox_setup(&qb, lo, hi);
    uint32_t found = 0;
    if (mesh->hf) { /* the cells under the box in ascending triangle order; a slot is a triangle id */
        kcc_hf_view view;
        kcc_hf_box_iter it;
        const box_answer by_id = answer == BOX_SLOTS ? BOX_BOUNDS : answer;
        kcc_hf_view_init(&view, mesh);
        kcc_hf_box_begin(&it, mesh, qb.lo, qb.hi);
        for (uint32_t n; (n = kcc_hf_box_next(&it, &view)) > 0;)
            for (uint32_t s0 = 0; s0 < n; s0 += 4)
                found = box_leaf_run(&view.mesh, s0, n - s0 < 4 ? n - s0 : 4, &qb, by_id,
                                     KCC_READ_FLOATS, out, capacity, found);
        return found;
    }
    if (mesh->tables)
        return box_tree_walk_tables(mesh, first, count, &qb, out, capacity, answer);
    return box_tree_walk(mesh, first, count, &qb, out, capacity, answer, KCC_READ_FLOATS);
}

KCC_HOT uint32_t box_walk(const kcc_mesh *mesh, const float lo[3], const float hi[3], uint32_t *out,
                          uint32_t capacity, box_answer answer)
{
    return box_walk_under(mesh, 0, 0, lo, hi, out, capacity, answer);
}

KCC_HOT uint32_t box_query(const kcc_mesh *mesh, const vec3 box[2], uint32_t *out,
                           uint32_t capacity, box_answer answer)
{
    if (!mesh || !box || (capacity > 0 && !out) || !kcc_box_valid(box))
        return 0;
    return box_walk(mesh, box[0], box[1], out, capacity, answer);
}

uint32_t kcc_mesh_query_slots(const kcc_mesh *mesh, const float lo[3], const float hi[3],
                              uint32_t *out, uint32_t capacity)
{
    return box_walk(mesh, lo, hi, out, capacity, BOX_SLOTS);
}

uint32_t kcc_mesh_query_slots_under(const kcc_mesh *mesh, uint32_t first, uint32_t count,
                                    const float lo[3], const float hi[3], uint32_t *out,
                                    uint32_t capacity)
{
    return box_walk_under(mesh, first, count, lo, hi, out, capacity, BOX_SLOTS);
}

uint32_t kcc_mesh_overlap_aabb(const kcc_mesh *mesh, const vec3 box[2], uint32_t *out_triangles,
                               uint32_t capacity)
{
    KCC_ISA_DISPATCH(mesh_overlap_aabb, mesh, box, out_triangles, capacity);
    return box_query(mesh, box, out_triangles, capacity, BOX_EXACT);
}

uint32_t kcc_mesh_overlap_once(const kcc_mesh *mesh, const vec3 box[2], uint32_t *out_triangles,
                               uint32_t capacity)
{
    return box_query(mesh, box, out_triangles, capacity, BOX_EXACT_ONCE);
}

uint32_t kcc_mesh_query_bounds(const kcc_mesh *mesh, const vec3 box[2], uint32_t *out_triangles,
                               uint32_t capacity)
{
    KCC_ISA_DISPATCH(mesh_query_bounds, mesh, box, out_triangles, capacity);
    return box_query(mesh, box, out_triangles, capacity, BOX_BOUNDS);
}

/* ------------------------------------------------------------------------------------------------
 * Swept box: the box centre moves along delta through nodes grown by the half extents (plus a
 * margin covering float rounding of the grown bounds), nearest child first, pruned by the best
 * contact time so far. */

/* The state of one box sweep: the box as centre and half extents in double, the node test of its
 * centre's segment through nodes grown by the half extents, and the best contact so far. */
typedef struct sweep_walk {
    const kcc_mesh *mesh;
    kcc_pray        slab;
    double          center[3], half[3], delta[3];
    double          best_t;      ///< 2 before any contact
    double          best_n[3];
    uint32_t        best_id;     ///< UINT32_MAX before any contact
    bool            best_start;
    float           limit;       ///< best_t grown by a relative hair (ties are still visited), <= 1
    bool            cull;        ///< cull triangles by their swept bounds (off where the walk's
                                 ///< bounds overflow float: kcc_swept_slab_is_finite)
} sweep_walk;

/* Sets up the sweep of box along delta (finite, non-zero). */
static void sweep_setup(sweep_walk *w, const kcc_mesh *mesh, const vec3 box[2], const vec3 delta)
{
    float org[3], grow[3], big = mesh->coord_scale;
    w->mesh = mesh;
    kcc_box_center_half_d(box[0], box[1], w->center, w->half);
    for (int k = 0; k < 3; ++k) {
        w->delta[k] = delta[k];
        org[k] = (float)w->center[k];
        float a = fabsf(box[0][k]) + fabsf(delta[k]);
        float b = fabsf(box[1][k]) + fabsf(delta[k]);
        big = a > big ? a : big;
        big = b > big ? b : big;
    }
    /* A few ulps of the largest coordinate in play covers every rounding of the grown bounds. */
    float margin = big * 1e-6f + 1e-30f;
    for (int k = 0; k < 3; ++k)
        grow[k] = (float)w->half[k] + margin;
    kcc_pray_setup(&w->slab, org, delta, grow);
    w->best_t = 2.0;
    memset(w->best_n, 0, sizeof w->best_n);
    w->best_id = UINT32_MAX;
    w->best_start = false;
    w->limit = 1.0f;
    w->cull = true;
}

/* Tests every triangle of slots first .. first + count - 1, reading vertices as `read` says; keeps
 * the earliest contact (ties: the lowest input index). */
KCC_HOT float sweep_run(void *ctx, uint32_t first, uint32_t count, kcc_vertex_read read)
{
    sweep_walk *w = ctx;
    for (uint32_t s = first, end = first + count; s < end; ++s) {
        const uint32_t id = kcc_mesh_tri_id(w->mesh, s);
        if (w->best_t == 0.0 && id > w->best_id)
            continue; /* can at best tie at t = 0, and ties go to the lower index */
        float buf[3][3];
        const float *v[3];
        kcc_mesh_corners(w->mesh, s, read, buf, v);
        if (w->cull && !kcc_corners_bounds_swept(v, &w->slab, w->limit))
            continue;
        double th, nn[3];
        bool start;
        if (!kcc_tri_sweep_internal(v[0], v[1], v[2], w->center, w->half, w->delta,
                                    kcc_sweep_tie_limit(w->best_t), &th, nn, &start))
            continue;
        if (th < w->best_t || (th == w->best_t && id < w->best_id)) {
            w->best_t = th;
            w->best_id = id;
            w->best_start = start;
            memcpy(w->best_n, nn, sizeof nn);
            w->limit = (float)th * (1.0f + 1e-6f) + 1e-30f;
            if (w->limit > 1.0f)
                w->limit = 1.0f;
        }
    }
    return w->limit;
}

/* The sweep's leaf visits: of float vertices (the tree meshes without tables, a heightfield's
 * view) or of vertex tables. */
KCC_HOT float sweep_leaf(void *ctx, uint32_t first, uint32_t count)
{
    return sweep_run(ctx, first, count, KCC_READ_FLOATS);
}

KCC_HOT float sweep_leaf_tables(void *ctx, uint32_t first, uint32_t count)
{
    return sweep_run(ctx, first, count, KCC_READ_TABLES);
}

/* The sweep of a mesh with vertex tables, out of line: the float sweep stays as it is without it.
 * Culled by the tree, or (the swept bounds beyond float range) every tree triangle in one leaf. */
KCC_TABLES_WALK void sweep_walk_tables(const kcc_mesh *mesh, sweep_walk *w, bool culled)
{
    if (culled) {
        kcc_mesh_walk_nearest(mesh, &w->slab, w->limit, sweep_leaf_tables, w);
    } else {
        w->cull = false;
        sweep_leaf_tables(w, 0, mesh->tree_triangles);
    }
}

bool kcc_mesh_sweep_aabb(const kcc_mesh *mesh, const vec3 box[2], const vec3 delta,
                         kcc_sweep_hit *hit)
{
    KCC_ISA_DISPATCH(mesh_sweep_aabb, mesh, box, delta, hit);
    if (!mesh || !box || !delta || !hit || !kcc_box_valid(box) || (mesh->quad_count == 0 && !mesh->hf))
        return false;
    if (!isfinite(delta[0]) || !isfinite(delta[1]) || !isfinite(delta[2]))
        return false;
    if (delta[0] == 0.0f && delta[1] == 0.0f && delta[2] == 0.0f)
        return false; /* nothing approaches anything */
    sweep_walk w;
    sweep_setup(&w, mesh, box, delta);
    kcc_hf_view view;
    if (mesh->hf) { /* the visitor reads the heightfield's triangles batch by batch from the view */
        w.mesh = kcc_hf_view_init(&view, mesh);
        w.cull = kcc_swept_slab_is_finite(&w.slab, box, delta);
        if (w.cull)
            kcc_hf_walk_nearest(mesh, &view, &w.slab, w.limit, sweep_leaf, &w);
        else
            kcc_hf_visit_all(mesh, &view, sweep_leaf, &w);
    } else if (mesh->tables) {
        sweep_walk_tables(mesh, &w, kcc_swept_slab_is_finite(&w.slab, box, delta));
    } else if (kcc_swept_slab_is_finite(&w.slab, box, delta)) {
        kcc_mesh_walk_nearest(mesh, &w.slab, w.limit, sweep_leaf, &w);
    } else { /* every tree triangle, unculled: one leaf of them all */
        w.cull = false;
        sweep_leaf(&w, 0, mesh->tree_triangles);
    }
    if (w.best_id == UINT32_MAX)
        return false;
    hit->t = (float)w.best_t;
    for (int k = 0; k < 3; ++k)
        hit->normal[k] = (float)w.best_n[k];
    hit->triangle = w.best_id;
    hit->start_overlap = w.best_start;
    return true;
}
