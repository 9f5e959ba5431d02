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

/* A triangle soup being put together (9 floats a triangle). */
typedef struct api_soup {
    float   *pos;
    uint32_t tris, cap;
} api_soup;

static void soup_tri(api_soup *s, const float a[3], const float b[3], const float c[3])
{
    if (s->tris == s->cap) {
        s->cap = s->cap ? 2u * s->cap : 64u;
        s->pos = realloc(s->pos, sizeof(float) * 9u * s->cap);
        assert_non_null(s->pos);
    }
    memcpy(&s->pos[9u * s->tris], a, 3 * sizeof(float));
    memcpy(&s->pos[9u * s->tris + 3u], b, 3 * sizeof(float));
    memcpy(&s->pos[9u * s->tris + 6u], c, 3 * sizeof(float));
    s->tris++;
}

/* The closed box's twelve triangles, outward faces. */
static void soup_block(api_soup *s, const api_block *b)
{
    static const uint8_t faces[12][3] = {{0, 2, 1}, {0, 3, 2}, {4, 5, 6}, {4, 6, 7}, {0, 1, 5}, {0, 5, 4},
                                         {3, 7, 6}, {3, 6, 2}, {0, 4, 7}, {0, 7, 3}, {1, 2, 6}, {1, 6, 5}};
    float corner[8][3];
    for (int k = 0; k < 8; ++k) {
        corner[k][0] = (k == 1 || k == 2 || k == 5 || k == 6) ? b->hi[0] : b->lo[0];
        corner[k][1] = (k == 2 || k == 3 || k == 6 || k == 7) ? b->hi[1] : b->lo[1];
        corner[k][2] = k >= 4 ? b->hi[2] : b->lo[2];
    }
    for (int f = 0; f < 12; ++f)
        soup_tri(s, corner[faces[f][0]], corner[faces[f][1]], corner[faces[f][2]]);
}

/* The soup as a mesh over `al` (all zero: malloc/free); with up_axis 2 every (x, y, z) is stored as
 * (x, z, y): the same level with +Z up. The soup is kept (the caller frees s->pos). */
static kcc_mesh *soup_mesh(const api_soup *s, int up_axis, kcc_allocator al)
{
    float *pos = malloc(sizeof(float) * 9u * s->tris);
    assert_non_null(pos);
    for (uint32_t i = 0; i < 3u * s->tris; ++i) {
        pos[3u * i] = s->pos[3u * i];
        pos[3u * i + 1u] = s->pos[3u * i + (up_axis == 2 ? 2u : 1u)];
        pos[3u * i + 2u] = s->pos[3u * i + (up_axis == 2 ? 1u : 2u)];
    }
    kcc_mesh_desc md;
    memset(&md, 0, sizeof md);
    md.positions = pos;
    md.vertex_count = 3u * s->tris;
    md.triangle_count = s->tris;
    md.allocator = al;
    kcc_mesh *mesh = NULL;
    assert_int_equal(kcc_mesh_build(&md, &mesh), KCC_OK);
    free(pos);
    return mesh;
}

static kcc_mesh *blocks_mesh_with(const api_block *blocks, uint32_t count, int up_axis, kcc_allocator al)
{
    api_soup s = {NULL, 0, 0};
    for (uint32_t b = 0; b < count; ++b)
        soup_block(&s, &blocks[b]);
    kcc_mesh *mesh = soup_mesh(&s, up_axis, al);
    free(s.pos);
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

/* ---------------------------------------------------------------- 2: misuse is bad input */

/* A zeroed struct, never passed to kcc_character_init, does not move: the result says bad input
 * and nothing else (not ON_GROUND, not LANDED), and the struct is left as it was. */
static void zeroed_character_does_not_move(void **state)
{
    (void)state;
    kcc_mesh *level = blocks_mesh(&floor_slab, 1);
    kcc_character ch, zero;
    memset(&ch, 0, sizeof ch);
    memset(&zero, 0, sizeof zero);
    kcc_move_result r;
    kcc_character_move(&ch, level, (vec3){0.1f, -0.1f, 0.0f}, &r);
    assert_int_equal(r.flags, KCC_MOVE_BAD_INPUT);
    assert_int_equal(r.branch, KCC_BRANCH_P0);
    assert_memory_equal(&ch, &zero, sizeof ch);
    kcc_mesh_destroy(level);
}

/* A desc written straight into the character (half height -1, skin 0) is not used: the box stays
 * where it stood, frame after frame, instead of falling through the floor; a retune of such a
 * character is refused (KCC_ERR_BAD_DESC) and kcc_character_init sets it up again. */
static void hand_edited_desc_does_not_move(void **state)
{
    (void)state;
    kcc_mesh *level = blocks_mesh(&floor_slab, 1);
    kcc_character ch;
    const float rest = 0.9f + 0.002f;
    assert_int_equal(kcc_character_init(&ch, NULL, (vec3){0.0f, rest, 0.0f}), KCC_OK);
    kcc_character_move(&ch, level, (vec3){0.0f, -0.01f, 0.0f}, NULL);
    assert_true(ch.on_ground);
    ch.desc.half_extents[1] = -1.0f;
    ch.desc.skin_width = 0.0f;
    for (int i = 0; i < 60; ++i) {
        kcc_move_result r;
        kcc_character_move(&ch, level, (vec3){0.0f, -0.2f, 0.0f}, &r);
        assert_int_equal(r.flags, KCC_MOVE_BAD_INPUT);
        assert_float_equal(ch.position[1], rest, 1e-6);
    }
    kcc_character_desc good = kcc_character_default_desc();
    assert_int_equal(kcc_character_set_desc(&ch, &good), KCC_ERR_BAD_DESC);
    assert_int_equal(kcc_character_init(&ch, &good, ch.position), KCC_OK);
    kcc_move_result r;
    kcc_character_move(&ch, level, (vec3){0.0f, -0.01f, 0.0f}, &r);
    assert_int_equal(r.flags & (KCC_MOVE_ON_GROUND | KCC_MOVE_BAD_INPUT), KCC_MOVE_ON_GROUND);
    kcc_mesh_destroy(level);
}

/* ---------------------------------------------------------------- 3: up_axis */

/* kcc_character_default_desc_up(2) stands along +Z: on a floor at z = 0 (the floor slab with +Z
 * up) it comes to rest with its centre 0.9 m and a skin above it, its box 0.6 m wide in x and y;
 * (1) is kcc_character_default_desc(); an axis outside the six (4) is refused at init (test_axes:
 * every axis). */
static void default_desc_up_stands_on_either_axis(void **state)
{
    (void)state;
    kcc_allocator none;
    memset(&none, 0, sizeof none);
    kcc_mesh *level = blocks_mesh_with(&floor_slab, 1, 2, none);
    const kcc_character_desc z = kcc_character_default_desc_up(2);
    assert_int_equal(z.up_axis, 2);
    assert_float_equal(z.half_extents[0], 0.3f, 0.0);
    assert_float_equal(z.half_extents[1], 0.3f, 0.0);
    assert_float_equal(z.half_extents[2], 0.9f, 0.0);
    kcc_character ch;
    assert_int_equal(kcc_character_init(&ch, &z, (vec3){0.0f, 0.0f, 2.0f}), KCC_OK);
    for (int i = 0; i < 120; ++i)
        kcc_character_move(&ch, level, (vec3){0.0f, 0.0f, -0.05f}, NULL);
    assert_true(ch.on_ground);
    assert_float_equal(ch.position[2], 0.9f + 0.002f, 1e-5);
    const kcc_character_desc y = kcc_character_default_desc_up(1), d = kcc_character_default_desc();
    assert_memory_equal(&y, &d, sizeof d);
    const kcc_character_desc bad = kcc_character_default_desc_up(4);
    assert_int_equal(kcc_character_init(&ch, &bad, (vec3){0.0f, 0.0f, 2.0f}), KCC_ERR_BAD_DESC);
    kcc_mesh_destroy(level);
}

/* ---------------------------------------------------------------- 4: ground_snap */

/* Walking (no vertical displacement) off a 0.2 m ledge with step_height 0.35: ground_snap 0.35
 * follows it down (SNAPPED_DOWN, feet a skin over the lower floor); ground_snap 0 does not snap
 * at all: the box leaves the ground at the upper floor's height. On flat ground ground_snap 0
 * keeps the box on the ground, at its height. */
static void ground_snap_zero_never_snaps_down(void **state)
{
    (void)state;
    const api_block blocks[2] = {floor_slab, {{-20.0f, 0.0f, -20.0f}, {0.0f, 0.2f, 20.0f}}};
    kcc_mesh *level = blocks_mesh(blocks, 2);
    for (int snap = 0; snap < 2; ++snap) {
        kcc_character_desc d = kcc_character_default_desc();
        d.ground_snap = snap ? 0.35f : 0.0f;
        kcc_character ch;
        assert_int_equal(kcc_character_init(&ch, &d, (vec3){-2.0f, 0.2f + 0.902f, 0.0f}), KCC_OK);
        uint32_t seen = 0;
        for (int i = 0; i < 10; ++i) { /* on flat ground */
            kcc_move_result r;
            kcc_character_move(&ch, level, (vec3){0.05f, 0.0f, 0.0f}, &r);
            seen |= r.flags;
            assert_true(ch.on_ground);
            assert_float_equal(ch.position[1], 0.2f + 0.902f, 1e-5);
        }
        for (int i = 0; i < 40; ++i) { /* x from -1.5 to 0.5: over the edge at x = -0.3 */
            kcc_move_result r;
            kcc_character_move(&ch, level, (vec3){0.05f, 0.0f, 0.0f}, &r);
            seen |= r.flags;
        }
        if (snap) {
            assert_true(ch.on_ground);
            assert_true(seen & KCC_MOVE_SNAPPED_DOWN);
            assert_float_equal(ch.position[1], 0.902f, 1e-5);
        } else {
            assert_false(ch.on_ground);
            assert_false(seen & KCC_MOVE_SNAPPED_DOWN);
            assert_float_equal(ch.position[1], 0.2f + 0.902f, 1e-5);
        }
    }
    kcc_mesh_destroy(level);
}

/* ---------------------------------------------------------------- 5: flags, branches, thresholds */

/* Dropped straight down onto a flat floor: the landing frame is ON_GROUND | LANDED and branch P2
 * (settled), no SLID (a straight landing goes along nothing); the frames before it, in the air
 * with nothing met, are P1 with no flags. */
static void straight_landing_is_p2_and_no_slide(void **state)
{
    (void)state;
    kcc_mesh *level = blocks_mesh(&floor_slab, 1);
    kcc_character ch;
    assert_int_equal(kcc_character_init(&ch, NULL, (vec3){0.0f, 1.45f, 0.0f}), KCC_OK);
    kcc_move_result r;
    for (int i = 0; i < 5; ++i) { /* the feet from 0.55 down to 0.05 */
        kcc_character_move(&ch, level, (vec3){0.0f, -0.1f, 0.0f}, &r);
        assert_int_equal(r.flags, 0);
        assert_int_equal(r.branch, KCC_BRANCH_P1);
    }
    kcc_character_move(&ch, level, (vec3){0.0f, -0.1f, 0.0f}, &r);
    assert_int_equal(r.flags, KCC_MOVE_ON_GROUND | KCC_MOVE_LANDED);
    assert_int_equal(r.branch, KCC_BRANCH_P2);
    assert_float_equal(ch.position[1], 0.902f, 1e-5);
    kcc_mesh_destroy(level);
}

/* Along a wall (the plane z = 1) at 45 degrees: in the air (falling by 0.01, far above the floor)
 * the box goes along it: SLID | HIT_WALL, branch P3; walking on the floor the same: SLID | HIT_WALL |
 * ON_GROUND, branch P4. Head-on into it, nothing to go along: HIT_WALL | STUCK, no SLID, P2. */
static void going_along_a_wall_is_a_slide(void **state)
{
    (void)state;
    const api_block blocks[2] = {floor_slab, {{-20.0f, 0.0f, 1.0f}, {20.0f, 20.0f, 2.0f}}};
    kcc_mesh *level = blocks_mesh(blocks, 2);
    const float z_touch = 1.0f - 0.3f - 0.002f;
    kcc_character air, walk, head;
    assert_int_equal(kcc_character_init(&air, NULL, (vec3){0.0f, 10.0f, z_touch - 0.05f}), KCC_OK);
    assert_int_equal(kcc_character_init(&walk, NULL, (vec3){0.0f, 0.902f, z_touch - 0.05f}), KCC_OK);
    assert_int_equal(kcc_character_init(&head, NULL, (vec3){0.0f, 0.902f, z_touch - 0.05f}), KCC_OK);
    kcc_character_move(&walk, level, (vec3){0.0f, -0.01f, 0.0f}, NULL);
    kcc_character_move(&head, level, (vec3){0.0f, -0.01f, 0.0f}, NULL);
    assert_true(walk.on_ground && head.on_ground);
    kcc_move_result r;
    kcc_character_move(&air, level, (vec3){0.1f, -0.01f, 0.1f}, &r);
    assert_int_equal(r.flags, KCC_MOVE_SLID | KCC_MOVE_HIT_WALL);
    assert_int_equal(r.branch, KCC_BRANCH_P3);
    kcc_character_move(&walk, level, (vec3){0.1f, -0.01f, 0.1f}, &r);
    assert_int_equal(r.flags, KCC_MOVE_SLID | KCC_MOVE_HIT_WALL | KCC_MOVE_ON_GROUND);
    assert_int_equal(r.branch, KCC_BRANCH_P4);
    kcc_character_move(&head, level, (vec3){0.0f, -0.01f, 0.1f}, &r);
    kcc_character_move(&head, level, (vec3){0.0f, -0.01f, 0.1f}, &r);
    assert_int_equal(r.flags, KCC_MOVE_HIT_WALL | KCC_MOVE_STUCK | KCC_MOVE_ON_GROUND);
    assert_int_equal(r.branch, KCC_BRANCH_P2);
    kcc_mesh_destroy(level);
}

/* The thresholds the header states: walking onto a 1.5 cm ledge is no step (STEPPED_UP needs more
 * than 2 cm) and onto a 5 cm one is (step_up 0.05); walking off them the same for SNAPPED_DOWN.
 * Standing with its +x half over the edge of a floor that ends at x = 0, the rays at -x (bits 0
 * and 2) find ground, those at +x do not: ground_rays 5; ground_height is the floor's top (0), the
 * feet a skin above it. */
static void thresholds_are_as_the_header_says(void **state)
{
    (void)state;
    const float heights[2] = {0.015f, 0.05f};
    for (int k = 0; k < 2; ++k) {
        const float h = heights[k];
        const api_block blocks[2] = {floor_slab, {{0.0f, 0.0f, -5.0f}, {1.0f, h, 5.0f}}};
        kcc_mesh *level = blocks_mesh(blocks, 2);
        kcc_character ch;
        assert_int_equal(kcc_character_init(&ch, NULL, (vec3){-1.0f, 0.902f, 0.0f}), KCC_OK);
        uint32_t seen = 0;
        float step_up = 0.0f;
        for (int i = 0; i < 60; ++i) { /* x from -1 to 2: onto the ledge and off it */
            kcc_move_result r;
            kcc_character_move(&ch, level, (vec3){0.05f, -0.01f, 0.0f}, &r);
            seen |= r.flags;
            if (r.flags & KCC_MOVE_STEPPED_UP)
                step_up = r.step_up;
            if (i > 0)
                assert_true(r.flags & KCC_MOVE_ON_GROUND);
        }
        assert_int_equal((seen & KCC_MOVE_STEPPED_UP) != 0, k == 1);
        assert_int_equal((seen & KCC_MOVE_SNAPPED_DOWN) != 0, k == 1);
        if (k == 1)
            assert_float_equal(step_up, 0.05f, 1e-4);
        kcc_mesh_destroy(level);
    }
    const api_block half_floor = {{-20.0f, -1.0f, -20.0f}, {0.0f, 0.0f, 20.0f}};
    kcc_mesh *level = blocks_mesh(&half_floor, 1);
    kcc_character ch;
    assert_int_equal(kcc_character_init(&ch, NULL, (vec3){0.1f, 0.902f, 0.0f}), KCC_OK);
    kcc_move_result r;
    kcc_character_move(&ch, level, (vec3){0.0f, -0.001f, 0.0f}, &r);
    assert_true(r.flags & KCC_MOVE_ON_GROUND);
    assert_int_equal(r.ground_rays, 5u);
    assert_float_equal(r.ground_height, 0.0f, 1e-6);
    assert_float_equal(ch.position[1] - 0.9f, r.ground_height + 0.002f, 1e-5);
    kcc_mesh_destroy(level);
}

/* kcc_character_set_desc(ch, NULL) retunes to the defaults, as kcc_character_init(ch, NULL, ...)
 * starts with them; a move with a NULL mesh is bad input and moves nothing. */
static void null_desc_means_defaults_and_null_mesh_is_bad_input(void **state)
{
    (void)state;
    kcc_character_desc d = kcc_character_default_desc();
    d.step_height = 0.2f;
    d.half_extents[1] = 0.5f;
    kcc_character ch;
    assert_int_equal(kcc_character_init(&ch, &d, (vec3){0.0f, 0.502f, 0.0f}), KCC_OK);
    assert_int_equal(kcc_character_set_desc(&ch, NULL), KCC_OK);
    const kcc_character_desc defaults = kcc_character_default_desc();
    assert_memory_equal(&ch.desc, &defaults, sizeof defaults);
    assert_float_equal(ch.position[1], 0.902f, 1e-6); /* the feet stay */
    assert_int_equal(kcc_character_set_desc_checked(&ch, NULL, NULL), KCC_OK);
    kcc_move_result r;
    kcc_character_move(&ch, NULL, (vec3){1.0f, 0.0f, 0.0f}, &r);
    assert_int_equal(r.flags, KCC_MOVE_BAD_INPUT);
    assert_float_equal(ch.position[0], 0.0f, 0.0);
}

/* ---------------------------------------------------------------- kcc_character_fits */

/* The signed distance (m, double) by which the box [lo, hi] and triangle t are apart along their
 * most separating axis of the 13 of the separating-axis theorem: > 0 separated, < 0 overlapping. */
static double box_tri_gap(const double lo[3], const double hi[3], const float *t)
{
    double c[3], h[3], v[3][3], e[3][3], n[3];
    for (int k = 0; k < 3; ++k) {
        c[k] = 0.5 * (lo[k] + hi[k]);
        h[k] = 0.5 * (hi[k] - lo[k]);
        for (int j = 0; j < 3; ++j)
            v[j][k] = (double)t[3 * j + k] - c[k];
    }
    for (int j = 0; j < 3; ++j)
        for (int k = 0; k < 3; ++k)
            e[j][k] = v[(j + 1) % 3][k] - v[j][k];
    n[0] = e[0][1] * e[1][2] - e[0][2] * e[1][1];
    n[1] = e[0][2] * e[1][0] - e[0][0] * e[1][2];
    n[2] = e[0][0] * e[1][1] - e[0][1] * e[1][0];
    double axes[13][3];
    int count = 0;
    for (int k = 0; k < 3; ++k) {
        axes[count][0] = axes[count][1] = axes[count][2] = 0.0;
        axes[count++][k] = 1.0;
    }
    memcpy(axes[count++], n, sizeof n);
    for (int k = 0; k < 3; ++k)
        for (int j = 0; j < 3; ++j) { /* unit axis k cross edge j */
            double *a = axes[count++];
            a[k] = 0.0;
            a[(k + 1) % 3] = -e[j][(k + 2) % 3];
            a[(k + 2) % 3] = e[j][(k + 1) % 3];
        }
    double gap = -INFINITY;
    for (int i = 0; i < count; ++i) {
        const double *a = axes[i];
        const double len = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
        if (len < 1e-12)
            continue;
        double tmin = INFINITY, tmax = -INFINITY;
        for (int j = 0; j < 3; ++j) {
            const double p = a[0] * v[j][0] + a[1] * v[j][1] + a[2] * v[j][2];
            tmin = fmin(tmin, p);
            tmax = fmax(tmax, p);
        }
        const double r = h[0] * fabs(a[0]) + h[1] * fabs(a[1]) + h[2] * fabs(a[2]);
        gap = fmax(gap, fmax(tmin - r, -r - tmax) / len);
    }
    return gap;
}

/* kcc_character_fits against brute force over every triangle in double: 4000 random boxes (random
 * half extents and skins) among blocks, a 30-degree ramp and a wall at 45 degrees fit exactly when
 * the box shrunk by min(skin / 2, KCC_PENETRATION_TOLERANCE) is apart from every triangle (boxes
 * within 1e-5 m of touching skipped: float and double may round either way). By hand: resting a
 * skin above the floor fits, and so does 0.5 mm into it (within the 1 mm shrink); 2 mm into it
 * does not. */
static void fits_agrees_with_brute_force(void **state)
{
    (void)state;
    api_soup s = {NULL, 0, 0};
    soup_block(&s, &floor_slab);
    const api_block pillar = {{1.0f, 0.0f, -1.0f}, {1.5f, 2.0f, 1.0f}};
    soup_block(&s, &pillar);
    const float ramp[4][3] = {{-3.0f, 0.0f, -2.0f}, {-1.0f, 1.1547f, -2.0f}, {-1.0f, 1.1547f, 2.0f}, {-3.0f, 0.0f, 2.0f}};
    soup_tri(&s, ramp[0], ramp[1], ramp[2]);
    soup_tri(&s, ramp[0], ramp[2], ramp[3]);
    const float wall[4][3] = {{2.0f, 0.0f, 2.0f}, {4.0f, 0.0f, 0.0f}, {4.0f, 3.0f, 0.0f}, {2.0f, 3.0f, 2.0f}};
    soup_tri(&s, wall[0], wall[1], wall[2]);
    soup_tri(&s, wall[0], wall[2], wall[3]);
    kcc_allocator none;
    memset(&none, 0, sizeof none);
    kcc_mesh *level = soup_mesh(&s, 1, none);
    test_rng rng = rng_seed_salted(21, 0xf175);
    int fit = 0, tested = 0;
    for (int i = 0; i < 4000; ++i) {
        kcc_character_desc d = kcc_character_default_desc();
        d.half_extents[0] = rng_f(&rng, 0.1f, 0.6f);
        d.half_extents[1] = rng_f(&rng, 0.3f, 1.0f);
        d.half_extents[2] = rng_f(&rng, 0.1f, 0.6f);
        d.skin_width = rng_f(&rng, 0.0005f, 0.01f);
        const vec3 c = {rng_f(&rng, -4.0f, 5.0f), rng_f(&rng, -0.5f, 3.0f), rng_f(&rng, -3.0f, 3.0f)};
        const double shrink = fmin(0.5 * d.skin_width, KCC_PENETRATION_TOLERANCE);
        double lo[3], hi[3], gap = INFINITY;
        for (int k = 0; k < 3; ++k) {
            lo[k] = (double)(c[k] - d.half_extents[k]) + shrink;
            hi[k] = (double)(c[k] + d.half_extents[k]) - shrink;
        }
        for (uint32_t t = 0; t < s.tris; ++t)
            gap = fmin(gap, box_tri_gap(lo, hi, &s.pos[9u * t]));
        if (fabs(gap) < 1e-5)
            continue;
        const kcc_status st = kcc_character_fits(&d, level, c);
        assert_int_equal(st, gap > 0.0 ? KCC_OK : KCC_ERR_OVERLAP);
        fit += st == KCC_OK;
        tested++;
    }
    assert_true(tested > 3900 && fit > 400 && tested - fit > 400); /* both answers well exercised */
    assert_int_equal(kcc_character_fits(NULL, level, (vec3){-8.0f, 0.902f, 0.0f}), KCC_OK);
    assert_int_equal(kcc_character_fits(NULL, level, (vec3){-8.0f, 0.8995f, 0.0f}), KCC_OK);
    assert_int_equal(kcc_character_fits(NULL, level, (vec3){-8.0f, 0.898f, 0.0f}), KCC_ERR_OVERLAP);
    assert_int_equal(kcc_character_fits(NULL, NULL, (vec3){0.0f, 5.0f, 0.0f}), KCC_ERR_NULL_ARGUMENT);
    assert_int_equal(kcc_character_fits(NULL, level, (vec3){NAN, 5.0f, 0.0f}), KCC_ERR_NON_FINITE);
    kcc_character_desc bad = kcc_character_default_desc();
    bad.skin_width = 0.0f;
    assert_int_equal(kcc_character_fits(&bad, level, (vec3){0.0f, 5.0f, 0.0f}), KCC_ERR_BAD_DESC);
    kcc_mesh_destroy(level);
    free(s.pos);
}

/* ---------------------------------------------------------------- the velocity move */

#define API_DT (1.0f / 60.0f)

/* Falling from rest onto a floor under gravity 9.81: every frame in the air the velocity is the
 * previous one plus g dt (hand-computed, float), and on the frame it lands it is 0; resting, it
 * stays 0. A NaN dt is bad input and leaves the velocity alone. */
static void velocity_move_zeroes_the_fall_on_landing(void **state)
{
    (void)state;
    kcc_mesh *level = blocks_mesh(&floor_slab, 1);
    kcc_character ch;
    assert_int_equal(kcc_character_init(&ch, NULL, (vec3){0.0f, 1.5f, 0.0f}), KCC_OK);
    const vec3 gravity = {0.0f, -9.81f, 0.0f};
    vec3 v = {0.0f, 0.0f, 0.0f};
    float expect = 0.0f;
    int landed_at = -1;
    for (int i = 0; i < 60 && landed_at < 0; ++i) {
        kcc_move_result r;
        kcc_character_move_velocity(&ch, level, v, gravity, API_DT, &r);
        expect += -9.81f * API_DT;
        if (r.flags & KCC_MOVE_ON_GROUND) {
            assert_true(r.flags & KCC_MOVE_LANDED);
            landed_at = i;
            assert_true(v[1] == 0.0f);
        } else {
            assert_float_equal(v[1], expect, 1e-5);
        }
    }
    /* 0.598 m of fall at 9.81 m/s^2: sqrt(2 * 0.598 / 9.81) = 0.349 s, the 21st frame */
    assert_in_range(landed_at, 19, 22);
    for (int i = 0; i < 10; ++i) {
        kcc_character_move_velocity(&ch, level, v, gravity, API_DT, NULL);
        assert_true(v[0] == 0.0f && v[1] == 0.0f && v[2] == 0.0f);
    }
    v[0] = 1.0f;
    kcc_move_result r;
    kcc_character_move_velocity(&ch, level, v, gravity, NAN, &r);
    assert_true(r.flags & KCC_MOVE_BAD_INPUT);
    assert_true(v[0] == 1.0f && v[1] == 0.0f);
    kcc_mesh_destroy(level);
}

/* Running at 3 m/s along +x into a wall at 45 degrees (the plane x + z = 2, normal -(1, 0, 1) / sqrt 2
 * toward the box): on the frame it hits, the velocity loses its component into the wall:
 * (3, 0, 0) - 1.5 (1, 0, 1) = (1.5, 0, -1.5), and on the ground its vertical part is 0. */
static void velocity_move_removes_the_part_into_a_wall(void **state)
{
    (void)state;
    api_soup s = {NULL, 0, 0};
    soup_block(&s, &floor_slab);
    const float wall[4][3] = {{-8.0f, 0.0f, 10.0f}, {12.0f, 0.0f, -10.0f}, {12.0f, 3.0f, -10.0f}, {-8.0f, 3.0f, 10.0f}};
    soup_tri(&s, wall[0], wall[1], wall[2]);
    soup_tri(&s, wall[0], wall[2], wall[3]);
    kcc_allocator none;
    memset(&none, 0, sizeof none);
    kcc_mesh *level = soup_mesh(&s, 1, none);
    kcc_character ch;
    assert_int_equal(kcc_character_init(&ch, NULL, (vec3){0.0f, 0.902f, 0.0f}), KCC_OK);
    const vec3 gravity = {0.0f, -9.81f, 0.0f};
    bool hit = false;
    for (int i = 0; i < 60 && !hit; ++i) {
        vec3 v = {3.0f, 0.0f, 0.0f};
        kcc_move_result r;
        kcc_character_move_velocity(&ch, level, v, gravity, API_DT, &r);
        assert_true(r.flags & KCC_MOVE_ON_GROUND);
        hit = (r.flags & KCC_MOVE_HIT_WALL) != 0;
        if (hit) {
            assert_float_equal(v[0], 1.5f, 1e-5);
            assert_float_equal(v[2], -1.5f, 1e-5);
        } else {
            assert_float_equal(v[0], 3.0f, 0.0);
            assert_float_equal(v[2], 0.0f, 0.0);
        }
        assert_true(v[1] == 0.0f);
    }
    assert_true(hit);
    kcc_mesh_destroy(level);
    free(s.pos);
}

/* A jump at 5 m/s under a ceiling 0.3 m above the head: on the frame the box meets the ceiling the
 * velocity's upward part is removed (0), then gravity brings the box back down. */
static void velocity_move_stops_a_jump_at_the_ceiling(void **state)
{
    (void)state;
    const api_block blocks[2] = {floor_slab, {{-5.0f, 2.102f, -5.0f}, {5.0f, 3.0f, 5.0f}}};
    kcc_mesh *level = blocks_mesh(blocks, 2);
    kcc_character ch;
    assert_int_equal(kcc_character_init(&ch, NULL, (vec3){0.0f, 0.902f, 0.0f}), KCC_OK);
    const vec3 gravity = {0.0f, -9.81f, 0.0f};
    vec3 v = {0.0f, 5.0f, 0.0f};
    bool hit = false;
    for (int i = 0; i < 30 && !hit; ++i) {
        kcc_move_result r;
        const float before = v[1];
        kcc_character_move_velocity(&ch, level, v, gravity, API_DT, &r);
        hit = (r.flags & KCC_MOVE_HIT_CEILING) != 0;
        if (hit)
            assert_true(v[1] == 0.0f);
        else
            assert_float_equal(v[1], before - 9.81f * API_DT, 1e-6);
    }
    assert_true(hit);
    kcc_mesh_destroy(level);
}

int test_group_api(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(retune_after_level_reload_reads_no_destroyed_mesh),
        cmocka_unit_test(level_rebuilt_at_the_same_address_gets_no_stale_cache),
        cmocka_unit_test(zeroed_character_does_not_move),
        cmocka_unit_test(hand_edited_desc_does_not_move),
        cmocka_unit_test(default_desc_up_stands_on_either_axis),
        cmocka_unit_test(ground_snap_zero_never_snaps_down),
        cmocka_unit_test(straight_landing_is_p2_and_no_slide),
        cmocka_unit_test(going_along_a_wall_is_a_slide),
        cmocka_unit_test(thresholds_are_as_the_header_says),
        cmocka_unit_test(null_desc_means_defaults_and_null_mesh_is_bad_input),
        cmocka_unit_test(fits_agrees_with_brute_force),
        cmocka_unit_test(velocity_move_zeroes_the_fall_on_landing),
        cmocka_unit_test(velocity_move_removes_the_part_into_a_wall),
        cmocka_unit_test(velocity_move_stops_a_jump_at_the_ceiling),
    };
    return KCC_RUN_GROUP("api", tests);
}
