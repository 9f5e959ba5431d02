/* test_broadphase.c: the broadphase (collide/kcc_broadphase_internal.h): pairs and queries
 * against brute force in double along a random walk of boxes, capacities, touching and point boxes,
 * determinism of the lists under a repeated call sequence, and the desc's checks. */
#include "test.h"

#include "kcc_broadphase_internal.h"

/* ---- helpers ---- */

typedef struct bp_holder {
    void *memory;
    kcc_broadphase *bp;
} bp_holder;

/* A broadphase in fresh memory first filled with `fill` (what it held must not matter). */
static bp_holder make_bp(uint32_t proxies, uint32_t pairs, float cell, int fill)
{
    kcc_broadphase_desc d = {proxies, pairs, cell};
    size_t bytes = kcc_broadphase_memory_bytes(&d);
    assert_true(bytes > 0);
    bp_holder h;
    h.memory = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
    assert_non_null(h.memory);
    memset(h.memory, fill, bytes);
    h.bp = kcc_broadphase_init(h.memory, &d);
    assert_ptr_equal(h.bp, h.memory);
    return h;
}

static uint32_t add_box(kcc_broadphase *bp, float x0, float y0, float z0, float x1, float y1, float z1,
                        uint32_t flags)
{
    const float lo[3] = {x0, y0, z0}, hi[3] = {x1, y1, z1};
    return kcc_broadphase_add(bp, lo, hi, 0, flags);
}

/* ---- the random walk ---- */

#define WALK_OBJECTS 1600
#define WALK_HUGE 3
#define WALK_AREA 32.0f   /* m, half the side of the square the boxes walk in */

typedef struct walk_object {
    float    center[3], half[3], velocity[3];   /* m, m, m/step */
    uint32_t flags;
    uint32_t proxy;                               /* KCC_PROXY_NONE while removed */
} walk_object;

/* The reference's copy of every proxy, by proxy index, in double. */
typedef struct walk_ref {
    double   lo[WALK_OBJECTS][3], hi[WALK_OBJECTS][3];
    bool     live[WALK_OBJECTS], is_static[WALK_OBJECTS];
    uint32_t user[WALK_OBJECTS];
} walk_ref;

typedef struct walk {
    walk_object objects[WALK_OBJECTS];
    walk_ref    ref;
    kcc_proxy_pair expected[WALK_OBJECTS * 64];
    uint32_t    query_got[WALK_OBJECTS], query_expected[WALK_OBJECTS];
    test_rng    rng;
    uint64_t    digest;       /* FNV-1a over every list and query result */
} walk;

static void digest_words(walk *w, const uint32_t *words, uint32_t count)
{
    for (uint32_t i = 0; i < count; ++i) {
        w->digest ^= words[i];
        w->digest *= 0x100000001B3ull;
    }
}

/* Object i's shape: three huge boxes (a level's bounds, +-1e6 m, the first STATIC), then by i % 20
 * points, tiny boxes, characters (0.94 x 1.75 x 0.94 m), static pieces and larger movers. */
static void walk_shape(walk *w, uint32_t i, walk_object *o)
{
    uint32_t kind = i % 20;
    o->flags = 0;
    if (i < WALK_HUGE) {
        for (int k = 0; k < 3; ++k)
            o->half[k] = i == 1 ? 5e5f : 1e6f;
        o->flags = i == 0 ? KCC_PROXY_STATIC : 0;
        return;
    }
    if (kind == 0) {
        o->half[0] = o->half[1] = o->half[2] = 0.0f;
    } else if (kind <= 2) {
        for (int k = 0; k < 3; ++k)
            o->half[k] = rng_f(&w->rng, 0.005f, 0.05f);
    } else if (kind <= 15) {
        o->half[0] = o->half[2] = 0.47f;
        o->half[1] = 0.875f;
    } else if (kind <= 18) {
        for (int k = 0; k < 3; ++k)
            o->half[k] = rng_f(&w->rng, 0.2f, 1.0f);
        o->flags = KCC_PROXY_STATIC;
    } else {
        for (int k = 0; k < 3; ++k)
            o->half[k] = rng_f(&w->rng, 0.5f, 3.0f);
    }
}

static void walk_place(walk *w, walk_object *o)
{
    o->center[0] = rng_f(&w->rng, -WALK_AREA, WALK_AREA);
    o->center[1] = rng_f(&w->rng, 0.0f, 4.0f);
    o->center[2] = rng_f(&w->rng, -WALK_AREA, WALK_AREA);
    for (int k = 0; k < 3; ++k)
        o->velocity[k] = rng_f(&w->rng, -0.08f, 0.08f);
}

static void walk_box(const walk_object *o, float lo[3], float hi[3])
{
    for (int k = 0; k < 3; ++k) {
        lo[k] = o->center[k] - o->half[k];
        hi[k] = o->center[k] + o->half[k];
    }
}

static void walk_record(walk *w, uint32_t i)
{
    walk_object *o = &w->objects[i];
    float lo[3], hi[3];
    walk_box(o, lo, hi);
    for (int k = 0; k < 3; ++k) {
        w->ref.lo[o->proxy][k] = lo[k];
        w->ref.hi[o->proxy][k] = hi[k];
    }
    w->ref.live[o->proxy] = true;
    w->ref.is_static[o->proxy] = (o->flags & KCC_PROXY_STATIC) != 0;
    w->ref.user[o->proxy] = i;
}

static void walk_add(walk *w, kcc_broadphase *bp, uint32_t i)
{
    walk_object *o = &w->objects[i];
    float lo[3], hi[3];
    walk_box(o, lo, hi);
    o->proxy = kcc_broadphase_add(bp, lo, hi, i, o->flags);
    assert_int_not_equal(o->proxy, KCC_PROXY_NONE);
    walk_record(w, i);
}

static void walk_remove(walk *w, kcc_broadphase *bp, uint32_t i)
{
    walk_object *o = &w->objects[i];
    kcc_broadphase_remove(bp, o->proxy);
    w->ref.live[o->proxy] = false;
    o->proxy = KCC_PROXY_NONE;
}

/* One object's step: walk on (turning now and then, a rare teleport), kept inside the area. */
static void walk_move(walk *w, kcc_broadphase *bp, uint32_t i)
{
    walk_object *o = &w->objects[i];
    if (rng_u32(&w->rng) % 500 == 0) {
        walk_place(w, o);
    } else {
        if (rng_u32(&w->rng) % 30 == 0)
            for (int k = 0; k < 3; ++k)
                o->velocity[k] = rng_f(&w->rng, -0.08f, 0.08f);
        for (int k = 0; k < 3; ++k) {
            o->center[k] += o->velocity[k];
            float limit = k == 1 ? 4.0f : WALK_AREA;
            if (o->center[k] > limit || o->center[k] < (k == 1 ? 0.0f : -limit))
                o->velocity[k] = -o->velocity[k];
        }
    }
    float lo[3], hi[3];
    walk_box(o, lo, hi);
    kcc_broadphase_move(bp, o->proxy, lo, hi);
    walk_record(w, i);
}

static bool ref_overlap(const walk_ref *r, uint32_t a, uint32_t b)
{
    for (int k = 0; k < 3; ++k)
        if (r->lo[a][k] > r->hi[b][k] || r->lo[b][k] > r->hi[a][k])
            return false;
    return true;
}

/* Brute force over every two live proxies, ascending. */
static uint32_t ref_pairs(walk *w)
{
    uint32_t count = 0;
    for (uint32_t a = 0; a < WALK_OBJECTS; ++a) {
        if (!w->ref.live[a])
            continue;
        for (uint32_t b = a + 1; b < WALK_OBJECTS; ++b)
            if (w->ref.live[b] && !(w->ref.is_static[a] && w->ref.is_static[b]) &&
                ref_overlap(&w->ref, a, b)) {
                assert_true(count < WALK_OBJECTS * 64);
                w->expected[count].a = a;
                w->expected[count++].b = b;
            }
    }
    return count;
}

static void walk_check_pairs(walk *w, const kcc_broadphase *bp, bool check)
{
    const kcc_proxy_pair *pairs;
    bool overflow = true;
    uint32_t count = kcc_broadphase_pairs(bp, &pairs, &overflow);
    assert_false(overflow);
    digest_words(w, &count, 1);
    digest_words(w, (const uint32_t *)pairs, 2 * count);
    if (!check)
        return;
    uint32_t expected = ref_pairs(w);
    assert_int_equal(count, expected);
    for (uint32_t i = 0; i < count; ++i)
        if (pairs[i].a != w->expected[i].a || pairs[i].b != w->expected[i].b)
            fail_msg("pair %u: got (%u, %u), brute force (%u, %u)", i, pairs[i].a, pairs[i].b,
                     w->expected[i].a, w->expected[i].b);
}

/* A query box: a point, a character, a room, or wider than 64 cells. */
static void walk_check_query(walk *w, const kcc_broadphase *bp, bool check)
{
    static const float halves[4] = {0.0f, 0.9f, 6.0f, 40.0f};
    float half = halves[rng_u32(&w->rng) % 4], lo[3], hi[3];
    double qlo[3], qhi[3];
    for (int k = 0; k < 3; ++k) {
        float c = rng_f(&w->rng, -WALK_AREA, WALK_AREA);
        lo[k] = c - half;
        hi[k] = c + half;
        qlo[k] = lo[k];
        qhi[k] = hi[k];
    }
    uint32_t capacity = rng_u32(&w->rng) % 4 == 0 ? 5 : WALK_OBJECTS;
    uint32_t found = kcc_broadphase_query(bp, lo, hi, w->query_got, capacity);
    uint32_t written = found < capacity ? found : capacity;
    digest_words(w, &found, 1);
    digest_words(w, w->query_got, written);
    if (!check)
        return;
    uint32_t expected = 0;
    for (uint32_t p = 0; p < WALK_OBJECTS; ++p) {
        bool hit = w->ref.live[p];
        for (int k = 0; k < 3 && hit; ++k)
            hit = w->ref.lo[p][k] <= qhi[k] && qlo[k] <= w->ref.hi[p][k];
        if (hit)
            w->query_expected[expected++] = p;
    }
    assert_int_equal(found, expected);
    for (uint32_t i = 0; i < written; ++i)
        assert_int_equal(w->query_got[i], w->query_expected[i]);
}

/* Adds every object, then steps: every live mover moves, one static piece is moved, about 1% of the
 * objects are removed and the previous step's removed come back (their indices reused); after each
 * update the pairs and a few queries, and after the changes a few more queries, are compared with
 * brute force (when check) and digested. */
static uint64_t run_walk(uint32_t steps, int fill, bool check)
{
    walk *w = calloc(1, sizeof *w);
    assert_non_null(w);
    w->rng = rng_seed_salted(7, 0xB0AD);
    w->digest = 0xCBF29CE484222325ull;
    bp_holder h = make_bp(WALK_OBJECTS, WALK_OBJECTS * 64, 2.0f, fill);
    for (uint32_t i = 0; i < WALK_OBJECTS; ++i) {
        walk_shape(w, i, &w->objects[i]);
        walk_place(w, &w->objects[i]);
        if (i < WALK_HUGE)
            w->objects[i].center[0] = w->objects[i].center[1] = w->objects[i].center[2] = 0.0f;
        walk_add(w, h.bp, i);
    }
    uint32_t removed[WALK_OBJECTS / 50], removed_count = 0;
    for (uint32_t step = 0; step < steps; ++step) {
        kcc_broadphase_update(h.bp);
        walk_check_pairs(w, h.bp, check);
        for (int q = 0; q < 6; ++q)
            walk_check_query(w, h.bp, check);
        for (uint32_t i = 0; i < removed_count; ++i) {
            walk_place(w, &w->objects[removed[i]]);
            walk_add(w, h.bp, removed[i]);
        }
        removed_count = 0;
        for (uint32_t i = 1; i < WALK_OBJECTS; ++i) {
            walk_object *o = &w->objects[i];
            if (rng_u32(&w->rng) % 100 == 0 && removed_count < WALK_OBJECTS / 50)
                walk_remove(w, h.bp, removed[removed_count++] = i);
            else if (!(o->flags & KCC_PROXY_STATIC) || rng_u32(&w->rng) % 400 == 0)
                walk_move(w, h.bp, i);
        }
        for (uint32_t p = 0; p < WALK_OBJECTS && check; ++p)
            assert_int_equal(kcc_broadphase_user(h.bp, p), w->ref.live[p] ? w->ref.user[p] : 0);
        for (int q = 0; q < 3; ++q)   /* queries see the moves, adds and removes before the update */
            walk_check_query(w, h.bp, check);
    }
    uint64_t digest = w->digest;
    free(h.memory);
    free(w);
    return digest;
}

/* ---- tests ---- */

static void pairs_and_queries_equal_brute_force_along_a_random_walk(void **state)
{
    (void)state;
    run_walk(40, 0, true);
}

/* ---- far rows, growing boxes, changed kinds ---- */

#define FAR_OBJECTS 24

/* The pairs of the boxes (ascending), by brute force in double. */
static uint32_t far_ref_pairs(const float box[][6], const bool is_static[], kcc_proxy_pair *out)
{
    uint32_t count = 0;
    for (uint32_t a = 0; a < FAR_OBJECTS; ++a)
        for (uint32_t b = a + 1; b < FAR_OBJECTS; ++b) {
            bool hit = !(is_static[a] && is_static[b]);
            for (int k = 0; k < 3 && hit; ++k)
                hit = (double)box[a][k] <= (double)box[b][k + 3] && (double)box[b][k] <= (double)box[a][k + 3];
            if (hit)
                out[count].a = a, out[count++].b = b;
        }
    return count;
}

/* Queries around each cluster (a point, a character, a room, all three clusters) against brute force. */
static void far_check_queries(const kcc_broadphase *bp, const float box[][6], test_rng *rng)
{
    static const float halves[4] = {0.0f, 0.9f, 6.0f, 700.0f};
    for (int q = 0; q < 4; ++q) {
        float lo[3], hi[3];
        for (int k = 0; k < 3; ++k) {
            const float c = k == 2 ? 500.0f * (float)(rng_u32(rng) % 3) + rng_f(rng, -3.0f, 3.0f) : rng_f(rng, -3.0f, 3.0f);
            lo[k] = c - halves[q], hi[k] = c + halves[q];
        }
        uint32_t got[FAR_OBJECTS], expected = 0;
        const uint32_t found = kcc_broadphase_query(bp, lo, hi, got, FAR_OBJECTS);
        for (uint32_t p = 0; p < FAR_OBJECTS; ++p) {
            bool hit = true;
            for (int k = 0; k < 3 && hit; ++k)
                hit = (double)box[p][k] <= (double)hi[k] && (double)lo[k] <= (double)box[p][k + 3];
            if (hit) {
                assert_true(expected < found);
                assert_int_equal(got[expected], p);
                ++expected;
            }
        }
        assert_int_equal(found, expected);
    }
}

/* Boxes in three clusters 500 m apart on z (their rows span far more than the proxies: no table of
 * row starts), growing past the row height and past cell_size and shrinking again (the rows made
 * anew), one removed and added back as the other kind (STATIC or not) now and then: every list, and
 * queries before and after each step's changes, equal brute force. */
static void far_rows_growing_boxes_and_changed_kinds_equal_brute_force(void **state)
{
    (void)state;
    bp_holder h = make_bp(FAR_OBJECTS, FAR_OBJECTS * FAR_OBJECTS, 4.0f, 0);
    test_rng rng = rng_seed_salted(11, 0xFA4);
    float center[FAR_OBJECTS][3], box[FAR_OBJECTS][6];
    bool is_static[FAR_OBJECTS];
    for (uint32_t i = 0; i < FAR_OBJECTS; ++i) {
        center[i][0] = rng_f(&rng, -3.0f, 3.0f), center[i][1] = rng_f(&rng, 0.0f, 2.0f);
        center[i][2] = 500.0f * (float)(i % 3) + rng_f(&rng, -3.0f, 3.0f);
        is_static[i] = i % 5 == 0;
    }
    for (uint32_t step = 0; step < 80; ++step) {
        const float half = 0.05f + 2.2f * (float)((step / 8) % 4) / 3.0f;   /* 0.05 .. 2.25 m */
        for (uint32_t i = 0; i < FAR_OBJECTS; ++i) {
            for (int k = 0; k < 3; ++k) {
                center[i][k] += is_static[i] ? 0.0f : rng_f(&rng, -0.3f, 0.3f);
                const float extent = half * (0.5f + 0.5f * (float)(i % 4) / 3.0f);
                box[i][k] = center[i][k] - extent, box[i][k + 3] = center[i][k] + extent;
            }
            if (step == 0)
                assert_int_equal(kcc_broadphase_add(h.bp, box[i], box[i] + 3, i, is_static[i] ? KCC_PROXY_STATIC : 0), i);
            else
                kcc_broadphase_move(h.bp, i, box[i], box[i] + 3);
        }
        const uint32_t flip = rng_u32(&rng) % FAR_OBJECTS;   /* removed, then added back as the other kind */
        kcc_broadphase_remove(h.bp, flip);
        is_static[flip] = !is_static[flip];
        assert_int_equal(kcc_broadphase_add(h.bp, box[flip], box[flip] + 3, flip,
                                            is_static[flip] ? KCC_PROXY_STATIC : 0), flip);
        for (int when = 0; when < 2; ++when) {
            if (when == 1)
                kcc_broadphase_update(h.bp);
            far_check_queries(h.bp, (const float(*)[6])box, &rng);
        }
        kcc_proxy_pair expected[FAR_OBJECTS * FAR_OBJECTS];
        const uint32_t count = far_ref_pairs((const float(*)[6])box, is_static, expected);
        const kcc_proxy_pair *pairs;
        bool overflow = true;
        assert_int_equal(kcc_broadphase_pairs(h.bp, &pairs, &overflow), count);
        assert_false(overflow);
        for (uint32_t i = 0; i < count; ++i)
            if (pairs[i].a != expected[i].a || pairs[i].b != expected[i].b)
                fail_msg("step %u pair %u: got (%u, %u), brute force (%u, %u)", step, i, pairs[i].a,
                         pairs[i].b, expected[i].a, expected[i].b);
    }
    free(h.memory);
}

/* ---- creeping boxes: most stay inside their fat boxes from one update to the next ---- */

#define CREEP_OBJECTS 400
#define CREEP_AREA 10.0f   /* m, half the side of the square they creep in */

typedef struct creep {
    float    center[CREEP_OBJECTS][3], half[CREEP_OBJECTS][3], velocity[CREEP_OBJECTS][3];
    float    box[CREEP_OBJECTS][6];   /* lo, hi (m), by object = proxy index */
    bool     live[CREEP_OBJECTS], is_static[CREEP_OBJECTS], grown[CREEP_OBJECTS];
    uint32_t removed[CREEP_OBJECTS], removed_count;   /* removed for a step, the last removed last */
    kcc_proxy_pair expected[CREEP_OBJECTS * CREEP_OBJECTS / 2];
    test_rng rng;
} creep;

static bool creep_overlap(const float a[6], const float b[6])
{
    for (int k = 0; k < 3; ++k)
        if ((double)a[k] > (double)b[k + 3] || (double)b[k] > (double)a[k + 3])
            return false;
    return true;
}

/* Object i's box from its center and half extents; added (its index must come back) or moved. */
static void creep_place(creep *c, kcc_broadphase *bp, uint32_t i, bool add)
{
    for (int k = 0; k < 3; ++k)
        c->box[i][k] = c->center[i][k] - c->half[i][k], c->box[i][k + 3] = c->center[i][k] + c->half[i][k];
    if (add)
        assert_int_equal(kcc_broadphase_add(bp, c->box[i], c->box[i] + 3, i, c->is_static[i] ? KCC_PROXY_STATIC : 0), i);
    else
        kcc_broadphase_move(bp, i, c->box[i], c->box[i] + 3);
    c->live[i] = true;
}

/* The list holds the `room` smallest of the brute-force pairs and says whether more overlap. */
static void creep_check_pairs(creep *c, const kcc_broadphase *bp, uint32_t room, uint32_t step)
{
    uint32_t total = 0;
    for (uint32_t a = 0; a < CREEP_OBJECTS; ++a)
        for (uint32_t b = a + 1; b < CREEP_OBJECTS && c->live[a]; ++b)
            if (c->live[b] && !(c->is_static[a] && c->is_static[b]) && creep_overlap(c->box[a], c->box[b]))
                c->expected[total].a = a, c->expected[total++].b = b;
    const kcc_proxy_pair *pairs;
    bool overflow = !(total > room);
    const uint32_t count = kcc_broadphase_pairs(bp, &pairs, &overflow);
    assert_int_equal(count, total < room ? total : room);
    assert_true(overflow == (total > room));
    for (uint32_t i = 0; i < count; ++i)
        if (pairs[i].a != c->expected[i].a || pairs[i].b != c->expected[i].b)
            fail_msg("step %u pair %u: got (%u, %u), brute force (%u, %u)", step, i, pairs[i].a, pairs[i].b,
                     c->expected[i].a, c->expected[i].b);
}

/* A query around a random point (a point, a character, a room) against brute force. */
static void creep_check_query(creep *c, const kcc_broadphase *bp)
{
    static const float halves[3] = {0.0f, 0.9f, 4.0f};
    const float half = halves[rng_u32(&c->rng) % 3];
    float q[6];
    for (int k = 0; k < 3; ++k) {
        const float at = rng_f(&c->rng, -CREEP_AREA, CREEP_AREA);
        q[k] = at - half, q[k + 3] = at + half;
    }
    uint32_t got[CREEP_OBJECTS], expected = 0;
    const uint32_t found = kcc_broadphase_query(bp, q, q + 3, got, CREEP_OBJECTS);
    for (uint32_t i = 0; i < CREEP_OBJECTS; ++i)
        if (c->live[i] && creep_overlap(c->box[i], q)) {
            assert_true(expected < found);
            assert_int_equal(got[expected++], i);
        }
    assert_int_equal(found, expected);
}

/* One live object's step: now and then removed (for a step), removed and added back as the other
 * kind, sent far, grown past cell_size (oversized) or back; else a mover creeps on (a STATIC box
 * only now and then). */
static void creep_step(creep *c, kcc_broadphase *bp, uint32_t i)
{
    const uint32_t event = rng_u32(&c->rng) % 200;
    if (event <= 1) {
        kcc_broadphase_remove(bp, i);
        c->live[i] = false;
        if (event == 0) {
            c->removed[c->removed_count++] = i;
            return;
        }
        c->is_static[i] = !c->is_static[i];
        creep_place(c, bp, i, true);
        return;
    }
    if (event == 2)
        for (int k = 0; k < 3; ++k)
            c->center[i][k] = k == 1 ? rng_f(&c->rng, 0.0f, 3.0f) : rng_f(&c->rng, -CREEP_AREA, CREEP_AREA);
    if (event == 3) {
        c->grown[i] = !c->grown[i];
        c->half[i][0] *= c->grown[i] ? 3.0f : 1.0f / 3.0f;
        c->half[i][2] *= c->grown[i] ? 3.0f : 1.0f / 3.0f;
    }
    if (!c->is_static[i] || event == 4)
        for (int k = 0; k < 3; ++k)
            c->center[i][k] += c->velocity[i][k];
    creep_place(c, bp, i, false);
}

/* Boxes creeping up to 2 cm a step, so that most stay inside their fat boxes for many updates and
 * the grid finds most updates' pairs from the changed proxies alone, among which each step a few
 * jump far, grow past cell_size and shrink back, are removed for a step, or are removed and added
 * back as the other kind (their index reused), and STATIC ones move now and then. After every update
 * the pairs equal brute force (the `room` smallest, and the overflow flag) with room for every pair,
 * for some (the grid's fat pairs then overflow their room, twice the pair capacity) and for few, and
 * queries equal brute force before and after each update. */
static void creeping_jumping_growing_boxes_equal_brute_force_at_any_room(void **state)
{
    (void)state;
    static const uint32_t rooms[3] = {CREEP_OBJECTS * CREEP_OBJECTS / 2, 600, 40};
    creep *c = calloc(1, sizeof *c);
    assert_non_null(c);
    for (int r = 0; r < 3; ++r) {
        bp_holder h = make_bp(CREEP_OBJECTS, rooms[r], 2.0f, 0);
        c->rng = rng_seed_salted(13, 0xC4EE);
        c->removed_count = 0;
        for (uint32_t i = 0; i < CREEP_OBJECTS; ++i) {
            c->is_static[i] = i % 7 == 0, c->grown[i] = false;
            for (int k = 0; k < 3; ++k) {
                c->center[i][k] = k == 1 ? rng_f(&c->rng, 0.0f, 3.0f) : rng_f(&c->rng, -CREEP_AREA, CREEP_AREA);
                c->half[i][k] = i % 5 == 0 ? rng_f(&c->rng, 0.01f, 0.9f) : k == 1 ? 0.875f : 0.47f;
                c->velocity[i][k] = rng_f(&c->rng, -0.02f, 0.02f);
            }
            creep_place(c, h.bp, i, true);
        }
        uint32_t between_full_passes = 0;
        for (uint32_t step = 0; step < 100; ++step) {
            kcc_broadphase_update(h.bp);
            creep_check_pairs(c, h.bp, rooms[r], step);
            between_full_passes += h.bp->grid.changed_count > 0;
            creep_check_query(c, h.bp);
            while (c->removed_count > 0)   /* the indices come back, the last removed first */
                creep_place(c, h.bp, c->removed[--c->removed_count], true);
            for (uint32_t i = 0; i < CREEP_OBJECTS; ++i)
                if (c->live[i])
                    creep_step(c, h.bp, i);
            creep_check_query(c, h.bp);
        }
        if (r == 0)
            if (between_full_passes < 50) fail_msg("between %u", between_full_passes);
        free(h.memory);
    }
    free(c);
}

/* The same calls give the same lists and query results bit for bit, whatever the memory held before
 * init. */
static void same_calls_give_the_same_lists_whatever_the_memory_held(void **state)
{
    (void)state;
    const uint64_t digest = run_walk(12, 0x00, false);
    assert_true(digest == run_walk(12, 0xA5, false));
    assert_true(digest == run_walk(12, 0xFF, false));
}

static void proxies_beyond_capacity_are_refused_and_indices_reused(void **state)
{
    (void)state;
    bp_holder h = make_bp(3, 8, 1.0f, 0);
    for (uint32_t i = 0; i < 3; ++i)
        assert_int_equal(add_box(h.bp, 0, 0, 0, 1, 1, 1, 0), i);
    assert_int_equal(add_box(h.bp, 0, 0, 0, 1, 1, 1, 0), KCC_PROXY_NONE);
    assert_int_equal(kcc_broadphase_proxy_count(h.bp), 3);
    kcc_broadphase_remove(h.bp, 1);
    kcc_broadphase_remove(h.bp, 1);      /* a second remove is ignored */
    kcc_broadphase_remove(h.bp, 99);     /* so is an index never handed out */
    assert_int_equal(kcc_broadphase_proxy_count(h.bp), 2);
    assert_int_equal(add_box(h.bp, 5, 5, 5, 6, 6, 6, 0), 1);
    kcc_broadphase_update(h.bp);
    const kcc_proxy_pair *pairs;
    assert_int_equal(kcc_broadphase_pairs(h.bp, &pairs, NULL), 1);
    assert_int_equal(pairs[0].a, 0);
    assert_int_equal(pairs[0].b, 2);
    free(h.memory);
}

/* Four boxes all overlapping make six pairs; with room for three the list holds the three smallest
 * and says it overflowed, until the boxes part. */
static void pair_overflow_is_flagged_and_keeps_the_smallest(void **state)
{
    (void)state;
    bp_holder h = make_bp(8, 3, 4.0f, 0);
    for (int i = 0; i < 4; ++i)
        add_box(h.bp, 0.1f * (float)i, 0, 0, 1.0f + 0.1f * (float)i, 1, 1, 0);
    const kcc_proxy_pair *pairs;
    bool overflow = false;
    for (int step = 0; step < 2; ++step) {
        kcc_broadphase_update(h.bp);
        assert_int_equal(kcc_broadphase_pairs(h.bp, &pairs, &overflow), 3);
        assert_true(overflow);
        for (uint32_t i = 0; i < 3; ++i) {
            assert_int_equal(pairs[i].a, 0);
            assert_int_equal(pairs[i].b, i + 1);
        }
    }
    const float lo[3] = {10, 0, 0}, hi[3] = {11, 1, 1};
    kcc_broadphase_move(h.bp, 0, lo, hi);   /* leaves (1,2) (1,3) (2,3) */
    kcc_broadphase_update(h.bp);
    assert_int_equal(kcc_broadphase_pairs(h.bp, &pairs, &overflow), 3);
    assert_false(overflow);
    assert_int_equal(pairs[0].a, 1);
    assert_int_equal(pairs[2].a, 2);
    assert_int_equal(pairs[2].b, 3);
    free(h.memory);
}

/* STATIC proxies among movers, all overlapping, more pairs than room: the list holds the smallest
 * of the brute-force list (every two not both STATIC) and says it overflowed. */
static void pairs_of_static_proxies_beyond_capacity_keep_the_smallest(void **state)
{
    (void)state;
    for (uint32_t room = 1; room <= 12; ++room) {
        bp_holder h = make_bp(8, room, 2.0f, 0);
        for (uint32_t i = 0; i < 8; ++i) {   /* 0, 5 and 6 STATIC */
            const float d = 0.05f * (float)i;
            add_box(h.bp, d, d, d, 1.0f + d, 1.0f, 1.0f, (i == 0 || i == 5 || i == 6) ? KCC_PROXY_STATIC : 0);
        }
        kcc_broadphase_update(h.bp);
        kcc_proxy_pair expected[28];
        uint32_t total = 0;
        for (uint32_t a = 0; a < 8; ++a)
            for (uint32_t b = a + 1; b < 8; ++b)
                if (!((a == 0 || a == 5 || a == 6) && (b == 0 || b == 5 || b == 6)))
                    expected[total].a = a, expected[total++].b = b;
        const kcc_proxy_pair *pairs;
        bool overflow = false;
        const uint32_t count = kcc_broadphase_pairs(h.bp, &pairs, &overflow);
        assert_int_equal(count, room < total ? room : total);
        assert_true(overflow == (room < total));
        for (uint32_t i = 0; i < count; ++i) {
            assert_int_equal(pairs[i].a, expected[i].a);
            assert_int_equal(pairs[i].b, expected[i].b);
        }
        free(h.memory);
    }
}

/* One STATIC box over five movers apart from each other: five pairs, all with the STATIC one; with
 * room for three the list holds the three smallest and says it overflowed. */
static void pairs_with_one_static_proxy_beyond_capacity_are_flagged(void **state)
{
    (void)state;
    bp_holder h = make_bp(8, 3, 4.0f, 0);
    add_box(h.bp, 0, 0, 0, 3.5f, 1, 1, KCC_PROXY_STATIC);
    for (int i = 0; i < 5; ++i)
        add_box(h.bp, 0.8f * (float)i, 0, 0, 0.8f * (float)i + 0.5f, 1, 1, 0);
    kcc_broadphase_update(h.bp);
    const kcc_proxy_pair *pairs;
    bool overflow = false;
    assert_int_equal(kcc_broadphase_pairs(h.bp, &pairs, &overflow), 3);
    assert_true(overflow);
    for (uint32_t i = 0; i < 3; ++i) {
        assert_int_equal(pairs[i].a, 0);
        assert_int_equal(pairs[i].b, i + 1);
    }
    free(h.memory);
}

/* A STATIC box shrunk inside its old bounds after the pairs overflowed their room: the list holds
 * the exact pairs of the boxes as they are, none of the box's old bounds (the grid's fat box of a
 * STATIC proxy is its box: any move changes it). */
static void a_static_box_shrunk_after_an_overflow_keeps_no_old_pairs(void **state)
{
    (void)state;
    bp_holder h = make_bp(8, 2, 16.0f, 0);   /* every box entered */
    add_box(h.bp, 0, 0, 0, 10, 1, 1, KCC_PROXY_STATIC);   /* 0, over the six movers */
    for (int i = 1; i <= 6; ++i)                          /* 1..6, 0.5 m apart */
        add_box(h.bp, 1.5f * (float)i, 0, 0, 1.5f * (float)i + 1.0f, 1, 1, 0);
    kcc_broadphase_update(h.bp);
    const kcc_proxy_pair *pairs;
    bool overflow = false;
    assert_int_equal(kcc_broadphase_pairs(h.bp, &pairs, &overflow), 2);
    assert_true(overflow);
    assert_int_equal(pairs[1].a, 0);
    assert_int_equal(pairs[1].b, 2);
    const float lo0[3] = {0, 0, 0}, hi0[3] = {0.5f, 1, 1}, lo2[3] = {2.5f, 0, 0}, hi2[3] = {3.5f, 1, 1};
    kcc_broadphase_move(h.bp, 0, lo0, hi0);   /* touches none */
    kcc_broadphase_move(h.bp, 2, lo2, hi2);   /* touches 1 */
    kcc_broadphase_update(h.bp);
    assert_int_equal(kcc_broadphase_pairs(h.bp, &pairs, &overflow), 1);
    assert_false(overflow);
    assert_int_equal(pairs[0].a, 1);
    assert_int_equal(pairs[0].b, 2);
    free(h.memory);
}

/* Touching faces and a point on a corner pair; one float step apart does not; two STATIC never pair. */
static void touching_boxes_and_points_pair_static_ones_do_not(void **state)
{
    (void)state;
    bp_holder h = make_bp(8, 16, 1.0f, 0);
    add_box(h.bp, 0, 0, 0, 1, 1, 1, 0);                       /* 0 */
    add_box(h.bp, 1, 0, 0, 2, 1, 1, 0);                       /* 1: touches 0's face */
    add_box(h.bp, 2, 1, 1, 2, 1, 1, 0);                       /* 2: a point on 1's corner */
    add_box(h.bp, nextafterf(2, 3), 0, 0, 3, 1, 1, 0);        /* 3: one float step past 1 and 2 */
    add_box(h.bp, 5, 5, 5, 6, 6, 6, KCC_PROXY_STATIC);        /* 4 */
    add_box(h.bp, 5.5f, 5.5f, 5.5f, 7, 7, 7, KCC_PROXY_STATIC); /* 5: static on static */
    kcc_broadphase_update(h.bp);
    const kcc_proxy_pair *pairs;
    assert_int_equal(kcc_broadphase_pairs(h.bp, &pairs, NULL), 2);
    assert_int_equal(pairs[0].a, 0);
    assert_int_equal(pairs[0].b, 1);
    assert_int_equal(pairs[1].a, 1);
    assert_int_equal(pairs[1].b, 2);
    uint32_t got[8];
    const float p[3] = {2, 1, 1};
    assert_int_equal(kcc_broadphase_query(h.bp, p, p, got, 8), 2);
    assert_int_equal(got[0], 1);
    assert_int_equal(got[1], 2);
    free(h.memory);
}

static void bad_descs_and_memory_are_refused(void **state)
{
    (void)state;
    kcc_broadphase_desc d = {16, 16, 2.0f};
    assert_true(kcc_broadphase_memory_bytes(&d) > 0);
    assert_int_equal(kcc_broadphase_memory_bytes(NULL), 0);
    d.cell_size = NAN;
    assert_int_equal(kcc_broadphase_memory_bytes(&d), 0);
    d.cell_size = 0.0f;
    assert_int_equal(kcc_broadphase_memory_bytes(&d), 0);
    d.cell_size = INFINITY;
    assert_int_equal(kcc_broadphase_memory_bytes(&d), 0);
    d.cell_size = 2.0f;
    d.proxy_capacity = 0;
    assert_int_equal(kcc_broadphase_memory_bytes(&d), 0);
    d.proxy_capacity = KCC_BROADPHASE_MAX_PROXIES + 1;
    assert_int_equal(kcc_broadphase_memory_bytes(&d), 0);
    d.proxy_capacity = 16;
    d.pair_capacity = KCC_BROADPHASE_MAX_PAIRS + 1;
    assert_int_equal(kcc_broadphase_memory_bytes(&d), 0);
    d.pair_capacity = 16;
    d.cell_size = 4.0f;
    size_t bytes = kcc_broadphase_memory_bytes(&d);
    char *memory = aligned_alloc(64, (bytes + 64 + 63) & ~(size_t)63);
    assert_non_null(memory);
    assert_null(kcc_broadphase_init(memory + 8, &d));
    assert_null(kcc_broadphase_init(NULL, &d));
    kcc_broadphase *bp = kcc_broadphase_init(memory, &d);
    assert_non_null(bp);
    free(memory);
}

int test_group_broadphase(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pairs_and_queries_equal_brute_force_along_a_random_walk),
        cmocka_unit_test(far_rows_growing_boxes_and_changed_kinds_equal_brute_force),
        cmocka_unit_test(creeping_jumping_growing_boxes_equal_brute_force_at_any_room),
        cmocka_unit_test(same_calls_give_the_same_lists_whatever_the_memory_held),
        cmocka_unit_test(proxies_beyond_capacity_are_refused_and_indices_reused),
        cmocka_unit_test(pair_overflow_is_flagged_and_keeps_the_smallest),
        cmocka_unit_test(pairs_of_static_proxies_beyond_capacity_keep_the_smallest),
        cmocka_unit_test(pairs_with_one_static_proxy_beyond_capacity_are_flagged),
        cmocka_unit_test(a_static_box_shrunk_after_an_overflow_keeps_no_old_pairs),
        cmocka_unit_test(touching_boxes_and_points_pair_static_ones_do_not),
        cmocka_unit_test(bad_descs_and_memory_are_refused),
    };
    return KCC_RUN_GROUP("broadphase", tests);
}
