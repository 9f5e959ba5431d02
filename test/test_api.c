/* test_api.c: the controller's promises to a game as its header states them: a level reloaded
 * under a character, misuse reported as bad input, the tuning ranges, the flags' meanings and
 * thresholds, and the conveniences beside the move (kcc_character_fits, the velocity move). Each
 * scene is a few boxes built here; each answer is worked out by hand or by brute force. */
#include "test.h"
#include "controller_internal.h"
#include "collide_internal.h"
#include <cglm/cglm.h>

/* ---------------------------------------------------------------- levels made of boxes */

/* An axis-aligned box as lo x, y, z, hi x, y, z (m), Y up. */
typedef struct api_block {
    float lo[3], hi[3];
} api_block;

/* The closed boxes as one mesh (outward faces), over `al` (all zero: malloc/free). With up_axis 2
 * every (x, y, z) is stored as (x, z, y): the same level with +Z up. */
static kcc_mesh *blocks_mesh_with(const api_block *blocks, uint32_t count, int up_axis, kcc_allocator al)
{
    float *pos = malloc(sizeof(float) * 24u * count);
    uint32_t *idx = malloc(sizeof(uint32_t) * 36u * count);
    assert_non_null(pos);
    assert_non_null(idx);
    static const uint32_t faces[12][3] = {{0, 2, 1}, {0, 3, 2}, {4, 5, 6}, {4, 6, 7}, {0, 1, 5}, {0, 5, 4},
                                          {3, 7, 6}, {3, 6, 2}, {0, 4, 7}, {0, 7, 3}, {1, 2, 6}, {1, 6, 5}};
    for (uint32_t b = 0; b < count; ++b) {
        for (uint32_t corner = 0; corner < 8; ++corner) {
            const float x = (corner == 1 || corner == 2 || corner == 5 || corner == 6) ? blocks[b].hi[0] : blocks[b].lo[0];
            const float y = (corner == 2 || corner == 3 || corner == 6 || corner == 7) ? blocks[b].hi[1] : blocks[b].lo[1];
            const float z = corner >= 4 ? blocks[b].hi[2] : blocks[b].lo[2];
            float *p = &pos[3u * (8u * b + corner)];
            p[0] = x;
            p[1] = up_axis == 2 ? z : y;
            p[2] = up_axis == 2 ? y : z;
        }
        for (uint32_t f = 0; f < 12; ++f)
            for (uint32_t c = 0; c < 3; ++c)
                idx[36u * b + 3u * f + c] = 8u * b + faces[f][c];
    }
    kcc_mesh_desc md;
    memset(&md, 0, sizeof md);
    md.positions = pos;
    md.vertex_count = 8u * count;
    md.indices = idx;
    md.triangle_count = 12u * count;
    md.allocator = al;
    kcc_mesh *mesh = NULL;
    assert_int_equal(kcc_mesh_build(&md, &mesh), KCC_OK);
    free(pos);
    free(idx);
    return mesh;
}

static kcc_mesh *blocks_mesh(const api_block *blocks, uint32_t count)
{
    kcc_allocator none;
    memset(&none, 0, sizeof none);
    return blocks_mesh_with(blocks, count, 1, none);
}

/* A floor slab whose top is at y = 0 over [-20, 20] x [-20, 20]. */
static const api_block floor_slab = {{-20.0f, -1.0f, -20.0f}, {20.0f, 0.0f, 20.0f}};

/* A bump allocator over one buffer that starts over when everything it handed out was freed: a
 * level rebuilt after the old one was destroyed gets the same addresses, as a game's level arena
 * does. */
typedef struct api_arena {
    char  *base;
    size_t used, capacity;
    int    live;
} api_arena;

static void *arena_alloc(size_t bytes, size_t align, void *user)
{
    api_arena *a = user;
    const size_t at = (a->used + align - 1u) / align * align;
    if (at + bytes > a->capacity)
        return NULL;
    a->used = at + bytes;
    a->live++;
    return a->base + at;
}

static void arena_free(void *ptr, void *user)
{
    api_arena *a = user;
    if (ptr && --a->live == 0)
        a->used = 0;
}

/* ---------------------------------------------------------------- 1: a level reloaded */

/* Moved on a level that is then destroyed and rebuilt, the character is retuned to a wider box: no
 * read of the destroyed mesh (AddressSanitizer guards it). kcc_character_set_desc checks the desc
 * alone (the wider box is accepted although it overlaps the new level's wall);
 * kcc_character_set_desc_checked against the new level refuses it. */
static void retune_after_level_reload_reads_no_destroyed_mesh(void **state)
{
    (void)state;
    kcc_mesh *old_level = blocks_mesh(&floor_slab, 1);
    kcc_character ch;
    assert_int_equal(kcc_character_init(&ch, NULL, (vec3){0.0f, 1.0f, 0.0f}), KCC_OK);
    for (int i = 0; i < 30; ++i)
        kcc_character_move(&ch, old_level, (vec3){0.0f, -0.1f, 0.0f}, NULL);
    assert_true(ch.on_ground);
    kcc_mesh_destroy(old_level);

    /* the new level: the floor and a wall 0.4 m from the box's centre */
    const api_block new_blocks[2] = {floor_slab, {{0.4f, 0.0f, -5.0f}, {1.0f, 3.0f, 5.0f}}};
    kcc_mesh *new_level = blocks_mesh(new_blocks, 2);
    kcc_character_desc wide = ch.desc;
    wide.half_extents[0] = 0.5f;
    kcc_character unchecked = ch;
    assert_int_equal(kcc_character_set_desc(&unchecked, &wide), KCC_OK);
    assert_float_equal(unchecked.desc.half_extents[0], 0.5f, 0.0);
    kcc_character before = ch;
    assert_int_equal(kcc_character_set_desc_checked(&ch, &wide, new_level), KCC_ERR_OVERLAP);
    assert_memory_equal(&before, &ch, sizeof ch);
    kcc_mesh_destroy(new_level);
}

/* Moves of `a` and `b` by the same displacements on mesh give the same positions and flags bit for
 * bit. */
static void same_moves(kcc_character *a, kcc_character *b, const kcc_mesh *mesh, const float (*moves)[3], int n)
{
    for (int i = 0; i < n; ++i) {
        kcc_move_result ra, rb;
        kcc_character_move(a, mesh, moves[i], &ra);
        kcc_character_move(b, mesh, moves[i], &rb);
        assert_memory_equal(a->position, b->position, sizeof(vec3));
        assert_int_equal(ra.flags, rb.flags);
        assert_int_equal(a->on_ground, b->on_ground);
    }
}

/* A level rebuilt in an arena lands at the destroyed level's address. A character that moved on
 * the old level (its cache and clear note filled from it) then moves on the new one exactly as a
 * character initialised there afresh (the independent reference), whether the new level differs
 * (a wall where there was none, the floor higher) or holds the very same triangles; and each build
 * has a key of its own. */
static void level_rebuilt_at_the_same_address_gets_no_stale_cache(void **state)
{
    (void)state;
    api_arena arena = {malloc(1u << 20), 0, 1u << 20, 0};
    assert_non_null(arena.base);
    kcc_allocator al = {arena_alloc, arena_free, &arena};
    const api_block first[2] = {floor_slab, {{-3.0f, 0.0f, 0.6f}, {3.0f, 3.0f, 1.0f}}};
    const api_block second[2] = {{{-20.0f, -1.0f, -20.0f}, {20.0f, 0.3f, 20.0f}},
                                 {{2.0f, 0.0f, -3.0f}, {2.5f, 3.0f, 3.0f}}};
    float moves[40][3];
    for (int i = 0; i < 40; ++i) {
        moves[i][0] = 0.05f;
        moves[i][1] = -0.05f - 0.005f * (float)i;
        moves[i][2] = i < 20 ? 0.03f : -0.04f;
    }
    for (int same = 0; same < 2; ++same) {
        kcc_mesh *old_level = blocks_mesh_with(first, 2, 1, al);
        const uint64_t old_key = old_level->key;
        kcc_character ch;
        assert_int_equal(kcc_character_init(&ch, NULL, (vec3){0.0f, 2.0f, 0.0f}), KCC_OK);
        for (int i = 0; i < 20; ++i) /* lands, walks into the wall at z = 0.6 */
            kcc_character_move(&ch, old_level, moves[i], NULL);
        /* airborne for the reload, so that a fresh character has the same public state */
        kcc_character_move(&ch, old_level, (vec3){0.0f, 1.0f, 0.0f}, NULL);
        assert_false(ch.on_ground);
        const uintptr_t old_address = (uintptr_t)old_level;
        kcc_mesh_destroy(old_level);
        kcc_mesh *new_level = blocks_mesh_with(same ? first : second, 2, 1, al);
        assert_true((uintptr_t)new_level == old_address);
        assert_true(new_level->key != old_key);
        kcc_character fresh;
        assert_int_equal(kcc_character_init(&fresh, &ch.desc, ch.position), KCC_OK);
        same_moves(&ch, &fresh, new_level, (const float(*)[3])moves, 40);
        kcc_mesh_destroy(new_level);
        assert_int_equal(arena.live, 0);
    }
    free(arena.base);
}

int test_group_api(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(retune_after_level_reload_reads_no_destroyed_mesh),
        cmocka_unit_test(level_rebuilt_at_the_same_address_gets_no_stale_cache),
    };
    return KCC_RUN_GROUP("api", tests);
}
