/* world_internal.h: the characters' half of a world (controller/world_*.c): the character slots,
 * the step's shared state, the broadphase neighbours and the sensors' lists. Never installed. */
#ifndef KCC_WORLD_CHARACTERS_INTERNAL_H
#define KCC_WORLD_CHARACTERS_INTERNAL_H

#include <cglm/cglm.h>

#include "controller_internal.h"

/// A character's state a move changes (the resolve pass puts it back).
typedef struct footing {
    vec3     position;
    vec3     ground_normal;
    float    ground_height;
    uint32_t ground_triangle;
    bool     on_ground;
} footing;

/// What bounds the reach of a character's moves (kcc_world_step_region) that its desc alone
/// decides, set with the desc (kcc_world_step_reach_init). Lengths in m.
typedef struct step_reach {
    float half_width;  ///< the box's narrower horizontal half extent: a longer walk runs as sub-moves
    float push;        ///< how far the start-overlap push takes the box, its nudges included
    float push_side, push_below, push_above; ///< how far the push's own gathers reach (above:
                                             ///< the rise aside)
    float side, below, above; ///< how far each (sub-)move's gathers reach past what it travels
                              ///< (above: its rise aside)
    float step, slope, cap;   ///< the rise: step_height plus tan(max slope) a metre walked, at
                              ///< most cap, at least step_height
    int   up;          ///< the world axis of up
    bool  up_is_high;  ///< up is that axis's + direction
} step_reach;

/// One character slot: the controller's character and the last step's result (what the game sets
/// and reads between steps lies apart, in cs->displacements and cs->states). Slots start on cache
/// lines: a move writes its character's position (the slot's first line) while the other workers'
/// moves read the generation (its last) of the characters they touch, and the two must not share
/// a line.
typedef struct world_character {
    _Alignas(64) kcc_character ch;
    kcc_move_result result;
    kcc_contact     contacts[KCC_WORLD_CONTACTS]; ///< the last step's (kcc_world_get_contacts)
    uint32_t        contact_count;
    bool            contact_overflow;
    kcc_move_result placing;        ///< this step's riding and pushing (carried, carried_body,
                                    ///< carried_rotation, CRUSHED), for its move's result
    kcc_contact_sink pushers;       ///< the movers that pushed it this step, for its contacts
    footing         before_placing; ///< where it stood when the step began: what placing it
                                    ///< again starts from (resolve_placed_overlaps)
    footing         before_move;    ///< where its own move started this step (after riding and
                                    ///< pushing): what the resolve pass puts back
    vec3            step_start;     ///< m, its centre when the step began (the snapshot's)
    vec3            last_motion;    ///< m, how far it went over its last step, end to end: what
                                    ///< carries a character standing on it in the next step
    step_reach      reach;          ///< from its desc (kcc_world_step_reach_init)
    uint32_t        generation;
    bool            live;
} world_character;

/// A kinematic body's motion over the step (kcc_world_body_motion: start and end pose, the bounds
/// it sweeps), found once a step for every character's phase to read.
typedef struct mover_motion {
    kcc_transform start, end;
    float         swept[2][3];
} mover_motion;

/// A character inside a sensor (slots order the list; ids tell a reused slot from its last owner).
typedef struct sensor_pair {
    uint32_t sensor_slot, character_slot;
    uint32_t sensor, character;   ///< ids
} sensor_pair;

/// The characters inside sensors after the last two steps, and the events between them.
typedef struct sensor_state {
    sensor_pair      *inside[2];    ///< sensor_capacity each: the last step's and the one before
    uint32_t          count[2];
    uint32_t          now;          ///< which of the two is the last step's
    kcc_sensor_event *events;       ///< sensor_capacity
    uint32_t          event_count;
    bool              overflow;
} sensor_state;

/// The step's neighbour lists (world_neighbours.c): for each live character, the pieces whose
/// broadphase proxies overlap the region its step may reach and the characters whose regions do.
typedef struct neighbour_lists {
    uint32_t *entries;      ///< 2 * pair_capacity: pieces (kcc_piece indices, in source order),
                            ///< then character slots (in no order: the world source orders the
                            ///< boxes a query meets, kcc_world_source.box_slots), per character
    uint32_t *first;        ///< character_capacity + 1: a character slot's entries start here
    uint32_t *pieces;       ///< character_capacity: how many of its entries are pieces
    uint32_t *count;        ///< character_capacity: how many entries it has
    uint32_t  room;         ///< entries each character's list may hold this step
    bool      all;          ///< the entries overflowed: every character sees everything
    bool      both_sides;   ///< each character finds all its neighbouring characters itself (a
                            ///< list outgrew its share); else each pair is found by one of its
                            ///< two characters and mirrored (kcc_world_mirror_neighbours)
} neighbour_lists;

/// The grid the step finds each character's neighbouring characters with (world_neighbours.c),
/// rebuilt every step from the regions: cells as large as the largest region along x and twice
/// that along y and z, each region listed in the cell of its low corner (a region overlapping it
/// then lists its low corner in one of the 3 x 2 x 2 cells around), cells wrapped into a torus of
/// buckets, the characters
/// sorted by bucket. Regions larger than twice the mean on an axis are kept apart ("large") and tested
/// against every character.
typedef struct region_grid {
    uint32_t *bucket_start;   ///< bucket_count_for(character_capacity) + 1: where each bucket's
                              ///< list begins
    uint32_t *bucket_of;      ///< character_capacity, by live index: its bucket, or LARGE
    uint32_t *sorted;         ///< character_capacity: character slots by bucket
    uint32_t *position;       ///< character_capacity, by live index: its place in sorted (regular
                              ///< regions only)
    uint32_t *found;          ///< character_capacity, by slot: the entries its own search listed
                              ///< (its pieces, the characters it found)
    float    *lo[3], *hi[3];  ///< character_capacity each: the sorted characters' regions
    uint32_t *large;          ///< character_capacity: live indices of the large regions
    uint32_t  large_count;
    int32_t  *cells;          ///< 3 * character_capacity, by live index: its low corner's cell
    float   (*block_stats)[8]; ///< by block of KCC_REGION_BLOCK live indices: the sum of its
                              ///< regions' extents (3), their largest extents (3), the largest
                              ///< coordinate (kcc_world_region_stats)
    uint32_t  bits[3];        ///< the buckets: a torus of 2^bits[k] cells on axis k (torus_bits)
    float     inv_cell[3];    ///< 1 / the cell edge on each axis (1/m): the reach on x, twice it on y, z
    float     reach[3];       ///< how far below a region's low corner another region's low corner
                              ///< may lie and still overlap it (m)
} region_grid;

struct kcc_world_characters {
    world_character *slots;        ///< character_capacity
    float          (*boxes)[2][3]; ///< each live character's box at the start of the step (m)
    float          (*regions)[2][3]; ///< the region its step may reach (m, kcc_world_step_region)
    float          (*placed)[2][3]; ///< each live character's box where riding and pushing left it,
                                   ///< where the moves see it (m)
    float          (*ends)[2][3];  ///< each live character's box where its move ended, or where the
                                   ///< resolve pass put it back (m): what the resolve pass compares
    float          (*end_overlaps)[2][3]; ///< each live character's box where its move ended, by
                                   ///< the overlap rule (kcc_box_for_overlap): what the resolve
                                   ///< pass's first look (resolve_flags_task) compares, read
                                   ///< without the character's slot
    float          (*displacements)[3]; ///< by slot: m, for the next step (0 when none was set)
    kcc_character_state *states;   ///< by slot: what kcc_world_get_character gives, copied from the
                                   ///< slot whenever that changes (kcc_world_publish_state)
    uint8_t         *alive;        ///< slots[i].live, packed: what a step scans for the live slots
    uint8_t         *to_place;     ///< by live index: it may ride or be pushed this step (the
                                   ///< snapshot's mark: the placing phase skips the others)
    uint8_t         *resolve_marks; ///< by slot: what the resolve pass reads and writes of each
                                   ///< character (RESOLVE_ bits), apart from the slots so that
                                   ///< its walk over every character reads a byte each
    uint32_t        *live;         ///< the live slots, ascending (rebuilt every step)
    uint32_t        *placing;      ///< the live indices to_place marks, ascending: what the placing
                                   ///< phase runs over (placing_count of them)
    mover_motion    *motions;      ///< body_capacity: the step's movers' motions (kcc_world_movers'
                                   ///< order)
    uint32_t        *layers;       ///< by slot: the layers each character is on (default 1)
    uint32_t        *masks;        ///< by slot: the layers each collides with (default all)
    uint32_t        *slot_ids;     ///< by slot: kcc_id_make(slots[i].generation, i), what contacts
                                   ///< and grounds name a character by, read without its slot
    uint32_t         live_count;
    uint32_t         placing_count;
    uint32_t         riders;       ///< characters that ended the last step standing on another: with
                                   ///< no mover moving and none of them, nothing is placed
    kcc_id_pool      ids;
    uint32_t         count;        ///< live characters
    sensor_state     sensors;
    uint32_t         sensor_capacity;
    neighbour_lists  near;
    region_grid      grid;
    uint32_t         pair_capacity;
    bool             split_off;    ///< tests: the moves list the static bodies afresh every step
                                   ///< (no kcc_world_source_split): the same results, bit for bit
};


/// The bits of kcc_world_characters.resolve_marks, set for the step by each character's move
/// (RESOLVE_RIDES) and resolve_flags_task.
enum {
    RESOLVE_ENDS_INSIDE = 1, ///< its move ended inside a character's before it (as they ended:
                             ///< the resolve pass's first look)
    RESOLVE_ASK_AGAIN = 2,   ///< the resolve pass put back a neighbour earlier in the order: whether
                             ///< it ends inside one is asked again
    RESOLVE_PUT_BACK = 4,    ///< the resolve pass put it back
    RESOLVE_RIDES = 8,       ///< its move ended standing on another character
};

/// Whether characters at slots a and b are solid to each other: each one's mask has a layer of the
/// other (the rule the world source applies to the boxes it lists: kcc_world_source.box_layers).
static inline bool kcc_world_characters_collide(const struct kcc_world_characters *cs, uint32_t a,
                                                uint32_t b)
{
    return (cs->masks[a] & cs->layers[b]) && (cs->masks[b] & cs->layers[a]);
}


/// The live character an id names, or NULL (0, stale, removed).
static inline const world_character *kcc_world_character_of_id(const struct kcc_world_characters *cs,
                                                               uint32_t id)
{
    uint32_t slot, generation;
    if (!kcc_id_split(id, cs->ids.capacity, &slot, &generation))
        return NULL;
    const world_character *wc = &cs->slots[slot];
    return wc->live && wc->generation == generation ? wc : NULL;
}

/// How far the character wc stood on at the end of the last step moved over that step (out), or
/// false when it stands on none: a character standing on another is carried by it, one step behind
/// (the motion the other made in the last step, as an engine takes a ground's velocity), which
/// every character's task can read while the others move.
static inline bool kcc_world_character_carry(const struct kcc_world_characters *cs,
                                             const world_character *wc, float out[3])
{
    if (!wc->ch.on_ground || wc->result.ground_body != 0)
        return false;
    const world_character *below = kcc_world_character_of_id(cs, wc->result.ground_character);
    if (!below)
        return false;
    memcpy(out, below->last_motion, sizeof(float[3]));
    return out[0] != 0.0f || out[1] != 0.0f || out[2] != 0.0f;
}

/// Copies what a game reads of the character at `slot` every frame out of its slot into
/// cs->states, after anything changed it (a step's move or resolve pass, an add, a teleport, a
/// retune, an origin shift): the game's reads between steps then touch a compact array, not the
/// slots' lines the workers write (docs/world.md, "Threads").
static inline void kcc_world_publish_state(struct kcc_world_characters *cs, uint32_t slot)
{
    const world_character *wc = &cs->slots[slot];
    kcc_character_state *st = &cs->states[slot];
    memset(st, 0, sizeof *st);
    glm_vec3_copy((float *)wc->ch.position, st->position);
    st->on_ground = wc->ch.on_ground;
    glm_vec3_copy((float *)wc->ch.ground_normal, st->ground_normal);
    st->ground_body = wc->result.ground_body;
}

/// The character's state a move changes, and putting it back.
static inline footing footing_of(const kcc_character *ch)
{
    footing f;
    glm_vec3_copy((float *)ch->position, f.position);
    glm_vec3_copy((float *)ch->ground_normal, f.ground_normal);
    f.ground_height = ch->ground_height;
    f.ground_triangle = ch->ground_triangle;
    f.on_ground = ch->on_ground;
    return f;
}

static inline void restore_footing(kcc_character *ch, const footing *f)
{
    glm_vec3_copy((float *)f->position, ch->position);
    glm_vec3_copy((float *)f->ground_normal, ch->ground_normal);
    ch->ground_height = f->ground_height;
    ch->ground_triangle = f->ground_triangle;
    ch->on_ground = f->on_ground;
}


/// Where the rigid motion from pose `start` to pose `end` takes point p.
static inline void carried_point(const kcc_transform *start, const kcc_transform *end, const vec3 p, vec3 out)
{
    vec3 local;
    kcc_transform_inverse_point(start, p, local);
    kcc_transform_point(end, local, out);
}

/* world_step.c */
/// The phases of a step, in order (kcc_world_step_marked marks the end of each).
enum {
    KCC_PHASE_BODIES,     ///< kinematic bodies moved, the body tree rebuilt
    KCC_PHASE_SNAPSHOT,   ///< the live slots and their boxes
    KCC_PHASE_BROADPHASE, ///< the region grid built, the pieces' pairs updated
    KCC_PHASE_NEIGHBOURS, ///< each character's neighbour list
    KCC_PHASE_MIRROR,     ///< the pairs each found added to the other's list (calling thread)
    KCC_PHASE_PLACING,    ///< every character rides and is pushed
    KCC_PHASE_CHARACTERS, ///< every character moves
    KCC_PHASE_OVERLAPS,   ///< each character asked whether it ended inside an earlier one
    KCC_PHASE_RESOLVE,    ///< characters that ended in one space put back
    KCC_PHASE_SENSORS,
    KCC_PHASE_COUNT
};
/// Called at the end of each phase with its KCC_PHASE_ value (bench_world_step times them).
typedef void kcc_world_phase_mark(void *user, int phase);
/// kcc_world_step, calling mark (NULL: none) at the end of each phase.
kcc_status kcc_world_step_marked(kcc_world *world, kcc_world_phase_mark *mark, void *user);

/* world_neighbours.c */
/// The live indices a block of kcc_world_region_stats covers.
#define KCC_REGION_BLOCK 64u
/// Sets out from the character's desc (when it is set: added, retuned).
void kcc_world_step_reach_init(step_reach *out, const kcc_character *ch);
/// The region character wc's step may reach (m), from its box (kcc_character_box); ground: the
/// motion of the kinematic body that moved this step which it stands on, or NULL.
void kcc_world_step_region(const world_character *wc, const struct kcc_world_characters *cs,
                           const mover_motion *ground, const float box[2][3], float out[2][3]);
/// The statistics of the regions (cs->regions) of live characters [begin, end), begin a multiple of
/// KCC_REGION_BLOCK, by block (region_grid.block_stats; each block writes its own): what the
/// grid's build reads of them all (safe from the snapshot's task).
void kcc_world_region_stats(struct kcc_world_characters *cs, uint32_t begin, uint32_t end);
/// Lays out the region grid for `capacity` characters at offset `at` of base (grid NULL: measures
/// only); returns the offset past it.
size_t kcc_world_region_grid_layout(region_grid *grid, char *base, size_t at, uint32_t capacity);
/// Builds the region grid from the live characters' regions (cs->regions) and gives each an
/// equal share of the entries (cs->near.room).
void kcc_world_build_region_grid(struct kcc_world_characters *cs);
/// Reads the region grid that the neighbour lists' queries read (the buckets' starts, the sorted
/// characters and their regions) through once, in address order, when it is at most
/// KCC_GRID_WARM_MAX bytes: run by each worker before its share of the lists, it brings over at
/// full speed the lines the calling thread's build left in another core's cache, which the
/// queries would otherwise wait for one by one (docs/world.md, "Threads").
void kcc_world_warm_region_grid(const struct kcc_world_characters *cs);
/// Lists the neighbours of live characters [begin, end) (each writes its own list only: safe from
/// its task): the pieces whose proxies overlap its region (in source order), the characters whose
/// regions do (unless cs->near.both_sides, only those of its pairs it finds: the rest come from
/// kcc_world_mirror_neighbours).
void kcc_world_find_neighbours(const kcc_world *world, struct kcc_world_characters *cs, uint32_t begin,
                               uint32_t end);
/// After kcc_world_find_neighbours over every live character, when each found every pair once
/// (!cs->near.both_sides): adds each character to the lists of those it found, in live order;
/// false when some list outgrew its share (the lists must then be found from both sides).
bool kcc_world_mirror_neighbours(struct kcc_world_characters *cs);
/// After kcc_world_find_neighbours over every live character: false when each list fitted its room
/// (or, when they cannot all fit in the entries, cs->near.all is set); true when the lists were laid
/// out end to end at the sizes found (cs->near.first, room 0) and must be found again.
bool kcc_world_neighbours_refit(struct kcc_world_characters *cs);

/* world_sensors.c */
/// The sensor events of the step (after the characters moved).
void kcc_world_sensor_step(const kcc_world *world, struct kcc_world_characters *cs);

#endif
