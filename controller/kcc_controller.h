/* kcc_controller.h: the kinematic axis-aligned box character: its tuning (desc), its state (a plain
 * struct the caller owns) and the per-frame move on a kcc_mesh. Never allocates. */
#ifndef KCC_CONTROLLER_H
#define KCC_CONTROLLER_H

#include "kcc_collide.h"
#include "kcc_world.h"

#ifdef __cplusplus
extern "C" {
#endif

/// After a move that started clear of the level, the box shrunk by this much on every side overlaps
/// no triangle (m). Moves keep a gap of desc.skin_width, so in practice the box does not touch at all.
/// A move that starts overlapping pushes the box out without entering any triangle it did not
/// touch at its start (beyond this much), unless the neighbourhood is too dense for the move's
/// triangle lists (KCC_MOVE_CONTACT_CAP: then only the first triangle along the push can stop it).
#define KCC_PENETRATION_TOLERANCE 0.001f

/// A displacement with a component beyond +-this (m) is bad input, like NaN or infinity: treated as
/// no movement (KCC_MOVE_BAD_INPUT). 10 km in one frame is a teleport: set `position` instead.
#define KCC_MAX_DISPLACEMENT 1e4f

/// Tuning. Get the defaults from kcc_character_default_desc() and change what you need.
typedef struct kcc_character_desc {
    vec3  half_extents;   ///< m, along the world's x, y, z (not the up frame's): the half height is
                          ///< the one along the up axis (x for +-X, y for +-Y, z for +-Z); default
                          ///< 0.3 0.9 0.3 (standing with +Y or -Y up; for the other axes see
                          ///< kcc_character_default_desc_up); each in [0.01, 100]
    float step_height;    ///< m; highest ledge climbed without jumping; default 0.35; [0, 1.8*half height]
    float max_slope_deg;  ///< degrees; steepest walkable ground; default 45; [0, 89]
    int   up_axis;        ///< the up direction (gravity is the caller's, against it): 1: +Y (default),
                          ///< 2: +Z, 3: +X, -1: -Y, -2: -Z, -3: -X (the sign is the direction, the
                          ///< magnitude the axis); any other value is refused (KCC_ERR_BAD_DESC).
                          ///< All six give the same moves of the same level turned with them: a
                          ///< move with +X, -Y or -X up is the +Y move in the world turned about z
                          ///< by a quarter, half or three quarters turn (+X: (x, y, z) -> (-y, x, z),
                          ///< -Y: (-x, -y, z), -X: (y, -x, z)), and with -Z up the +Z move in the
                          ///< world turned half a turn about x ((x, -y, -z)), turned back, exactly
    float skin_width;     ///< m; gap kept between box and level; default 0.002; [0.0001, 0.05]
    float ground_snap;    ///< m; how far below its feet (beyond the skin gap) a grounded character
                          ///< that is not moving up looks for ground to follow down (stairs,
                          ///< downhill), as Jolt's stick-to-floor step down; 0: it never snaps
                          ///< down, so walking off a ledge or down a slope faster than gravity
                          ///< brings it down leaves the ground; default 0.35; [0, 10]
    float max_push_out;   ///< m per move; how far a character that starts overlapping the level is
                          ///< pushed out in one move; default 0.2; (0, 10]
} kcc_character_desc;

/// The defaults listed above.
KCC_API kcc_character_desc kcc_character_default_desc(void);
/// The defaults for a character whose up axis is up_axis (any of the six, see desc.up_axis),
/// standing: the 0.9 m half height along that axis, 0.3 m on the other two (+-Z: half_extents 0.3
/// 0.3 0.9; +-X: 0.9 0.3 0.3). Any other up_axis is returned as given, with the +Y extents, so
/// kcc_character_init refuses the desc (KCC_ERR_BAD_DESC).
KCC_API kcc_character_desc kcc_character_default_desc_up(int up_axis);
/// Checks every field against its range: KCC_OK or KCC_ERR_BAD_DESC / KCC_ERR_NON_FINITE.
KCC_API kcc_status kcc_character_desc_validate(const kcc_character_desc *desc);

/// Which branch of the scheme produced the final position of a move (p1: the displacement, swept to
/// the first contact; p2: p1 settled; p3: slid on from the contact; p4: p3 settled). "Settled":
/// resting on walkable ground the ground probe found (ON_GROUND, apart from a funnel's).
typedef enum kcc_branch {
    KCC_BRANCH_P0 = 0,   ///< stayed where it was (everything else overlapped), or bad input
    KCC_BRANCH_P1 = 1,   ///< ended where the swept displacement did, no ground to settle on (in the air);
                         ///< also the fallback when no try rested and the box is clear at p1: P0 and
                         ///< P1 then report the walkable ground within two skins under the box
                         ///< (ON_GROUND), unsettled
    KCC_BRANCH_P2 = 2,   ///< ended where the swept displacement did, settled on ground; also a straight
                         ///< landing and a head-on stop (the slide had nothing left to go along)
    KCC_BRANCH_P3 = 3,   ///< went along what the sweep met, no ground to settle on (in the air)
    KCC_BRANCH_P4 = 4    ///< went along what the sweep met and settled on ground
} kcc_branch;

/// The contact cap: a move works on a list of the triangles whose bounds overlap its reach; with
/// more than this many it flags KCC_MOVE_CONTACT_CAP and asks the mesh's tree for every probe.
#define KCC_MOVE_LIST_TRIANGLES 192

/// kcc_move_result.flags
enum {
    KCC_MOVE_ON_GROUND    = 1u << 0,  ///< standing on walkable ground after the move, or held up by
                                      ///< steep faces together (a funnel)
    KCC_MOVE_HIT_WALL     = 1u << 1,  ///< a wall was met: walking, any surface steeper than
                                      ///< max_slope_deg (ceilings and steep ground too); in the air,
                                      ///< one whose normal's up part is in [-0.1, 0.01]
    KCC_MOVE_HIT_CEILING  = 1u << 2,  ///< in the air, a surface facing down (normal's up part below
                                      ///< -0.1) was met; in the air, steeper ground than max_slope_deg
                                      ///< with an up part above 0.01 is neither (it is slid down)
    KCC_MOVE_STEPPED_UP   = 1u << 3,  ///< on ground before and after, the feet rose more than 2 cm
                                      ///< beyond what the ground planes under the box before and
                                      ///< after explain over the sideways motion (result.step_up:
                                      ///< the whole rise, m)
    KCC_MOVE_SLID         = 1u << 4,  ///< after meeting a wall, a ceiling or steep ground the box went
                                      ///< on along it (branch P3 or P4); not a straight landing or a
                                      ///< head-on stop
    KCC_MOVE_STUCK        = 1u << 5,  ///< asked to go sideways more than 0.01 mm, went sideways less
                                      ///< than 1% of that (+ 0.01 mm)
    KCC_MOVE_ON_STEEP     = 1u << 6,  ///< resting on ground steeper than max_slope_deg (sliding down)
    KCC_MOVE_SNAPPED_DOWN = 1u << 7,  ///< on ground before and after, walking (not moving up), the
                                      ///< feet came down more than 2 cm (stairs, downhill)
    KCC_MOVE_PUSHED_OUT   = 1u << 8,  ///< started overlapping the level and was pushed out (partly)
    KCC_MOVE_BAD_INPUT    = 1u << 9,  ///< displacement was NaN, infinite or beyond KCC_MAX_DISPLACEMENT:
                                      ///< treated as no movement; alone (no motion at all) when the
                                      ///< character or mesh cannot be moved (kcc_character_move)
    KCC_MOVE_LANDED       = 1u << 10, ///< on ground now, was not before the move
    KCC_MOVE_CONTACT_CAP  = 1u << 11, ///< more than KCC_MOVE_LIST_TRIANGLES triangles' bounds overlap
                                      ///< the move's reach (same answers, slower; a start-overlap
                                      ///< push is then stopped by the first triangle along it only)
    KCC_MOVE_CRUSHED      = 1u << 12  ///< in a world step: a moving body pushed the box into something
                                      ///< it could not leave; the box stays clear of static bodies
                                      ///< and may overlap the mover
};

/// Bytes of a character's private storage (its triangle cache and the note of the last box found
/// clear): opaque, for the controller's .c files only; 16-byte aligned.
#define KCC_CHARACTER_PRIVATE_BYTES 7776
#ifdef __cplusplus
#define KCC_ALIGN16 alignas(16)
#else
#define KCC_ALIGN16 _Alignas(16)
#endif

/// The character: caller-owned, plain data, copyable. position, on_ground and ground_normal are the
/// public state (a caller may set position between moves: a teleport); desc, cos_max_slope,
/// ground_height and ground_triangle are read-only state (set them through kcc_character_init and
/// kcc_character_set_desc); priv is private storage that never changes a move's answer.
typedef struct kcc_character {
    vec3 position;        ///< m, centre of the box
    bool on_ground;
    vec3 ground_normal;   ///< unit, valid when on_ground
    /* read-only */
    kcc_character_desc desc;
    float    cos_max_slope;   ///< cos(desc.max_slope_deg), rounded once from double
    float    ground_height;   ///< m along up (see kcc_move_result.ground_height), valid when on_ground
    uint32_t ground_triangle; ///< valid when on_ground
    /* private: the neighbourhood's triangles kept between moves and the last box found clear */
    struct {
        KCC_ALIGN16 unsigned char bytes[KCC_CHARACTER_PRIVATE_BYTES];
    } priv;
} kcc_character;

/// Initialises ch from desc (NULL: defaults) with its box centred at center (m). Validates desc.
KCC_API kcc_status kcc_character_init(kcc_character *ch, const kcc_character_desc *desc, const vec3 center);

/// Retunes between frames (desc NULL: the defaults). The box keeps its feet where they are. Checks
/// the desc only (its ranges, as kcc_character_desc_validate: KCC_ERR_BAD_DESC /
/// KCC_ERR_NON_FINITE; and a character init did not set up, or whose desc was written directly,
/// is refused with KCC_ERR_BAD_DESC: init it again), never the level: a box
/// grown into a wall is accepted (the next move pushes it out, up to max_push_out per move). To
/// refuse a box that would overlap the level, use kcc_character_set_desc_checked. The character
/// keeps no pointer to any mesh, so this is safe after the level was destroyed or rebuilt.
KCC_API kcc_status kcc_character_set_desc(kcc_character *ch, const kcc_character_desc *desc);
/// The same, and a box that grows (any half extent larger) is refused with KCC_ERR_OVERLAP when it
/// would overlap a triangle of mesh (the exact box test of kcc_mesh_overlap_aabb). mesh is read
/// during the call only, never kept; NULL: no overlap check, as kcc_character_set_desc.
KCC_API kcc_status kcc_character_set_desc_checked(kcc_character *ch, const kcc_character_desc *desc,
                                          const kcc_mesh *mesh);

/// Whether a character of desc (NULL: the defaults) can stand with its box centred at center (m):
/// KCC_OK when the box overlaps no triangle of mesh, KCC_ERR_OVERLAP when it does, by the rule of a
/// move's start check: the box shrunk by min(skin_width / 2, KCC_PENETRATION_TOLERANCE) on every
/// side is tested exactly, so touching (a box resting a skin above the floor, or less) fits. For
/// spawn points and crouch-to-stand checks; moves nothing. Errors: KCC_ERR_NULL_ARGUMENT (mesh or
/// center), the desc's own (kcc_character_desc_validate), KCC_ERR_NON_FINITE (center). Reads mesh
/// during the call only; safe from many threads.
KCC_API kcc_status kcc_character_fits(const kcc_character_desc *desc, const kcc_mesh *mesh, const vec3 center);

/// What one move did.
typedef struct kcc_move_result {
    uint32_t   flags;          ///< KCC_MOVE_*
    kcc_branch branch;         ///< which branch of the scheme ended the move
    vec3       moved;          ///< m, final position minus start position
    vec3       ground_normal;  ///< unit, facing up, valid with KCC_MOVE_ON_GROUND or KCC_MOVE_ON_STEEP
    float      ground_height;  ///< m, the height of the ground under the box (where its bottom rests;
                               ///< the feet hover skin_width above) measured along the up direction:
                               ///< the dot product of a ground point with the unit up vector, so the
                               ///< world coordinate on the up axis for +X, +Y, +Z and its negation
                               ///< for -X, -Y, -Z (with -Y up, ground at y = 3 is height -3); same
                               ///< validity
    uint32_t   ground_triangle;
    vec3       wall_normal;    ///< unit, valid with HIT_WALL or HIT_CEILING
    float      step_up;        ///< m climbed by a step, valid with STEPPED_UP
    uint32_t   ground_rays;    ///< bit i set when the ray down the box's vertical edge i found walkable
                               ///< ground; edge i is at the low (bit 0 of i clear) or high side of x,
                               ///< and the low (bit 1 clear) or high side of z (+Y up) or y (+Z up):
                               ///< bit 0 (-x,-z), 1 (+x,-z), 2 (-x,+z), 3 (+x,+z) with +Y up; for
                               ///< +-X, -Y and -Z up the sides are those of the turned world in
                               ///< which the move runs (desc.up_axis): e.g. with -Y up, x there is
                               ///< -x here
    uint32_t   ground_body;    ///< in a world step: the body stood on (0: none, another character,
                               ///< or a move on a plain mesh)
    uint32_t   ground_character; ///< in a world step: the character stood on (0: none)
    vec3       carried;        ///< m, in a world step: how far the body or the character stood on
                               ///< carried the box before its own move (0 0 0 when none did)
    uint32_t   carried_body;   ///< the body that carried it (0: none)
    float      carried_rotation[4]; ///< the rotation the body that carried it turned by over the
                               ///< step, a unit quaternion x y z w (0 0 0 1 when none did): a
                               ///< camera or a facing turns with it
} kcc_move_result;

/// One frame: moves ch by displacement (m; the caller adds gravity and jumps) through mesh. NaN,
/// infinite or larger than KCC_MAX_DISPLACEMENT input (or NULL) is treated as no movement
/// (KCC_MOVE_BAD_INPUT). Bad input that leaves nothing to move: NULL ch or mesh, a character that
/// kcc_character_init did not set up (a zeroed struct) or whose desc was written directly instead of
/// through kcc_character_set_desc, or a NaN or infinite position: ch is left as it is
/// and result holds KCC_MOVE_BAD_INPUT alone, branch P0. result may be NULL. Never allocates;
/// characters on different threads never interact.
KCC_API void kcc_character_move(kcc_character *ch, const kcc_mesh *mesh,
                        const vec3 displacement, kcc_move_result *result);

/// kcc_character_move driven by a velocity, as Jolt's CharacterVirtual::Update and Godot's
/// move_and_slide are: velocity (m/s, in and out), gravity (m/s^2, world axes, e.g. 0 -9.81 0) and
/// dt (s, >= 0). The rule, in this order: velocity += gravity * dt; the move is by velocity * dt;
/// then velocity is corrected by what the move hit: its component into result.wall_normal removed
/// (v -= min(0, v . n) n) with KCC_MOVE_HIT_WALL or KCC_MOVE_HIT_CEILING, into result.ground_normal
/// with KCC_MOVE_ON_STEEP, and its downward part (against the up direction of up_axis) set to 0
/// with KCC_MOVE_ON_GROUND. So a game's fall and jump bookkeeping is: set velocity's sideways part
/// from input, add a jump speed along up when on the ground, call this. A NULL, NaN or infinite velocity or gravity, or a NaN,
/// infinite or negative dt, is bad input (KCC_MOVE_BAD_INPUT, no movement) and velocity is left as
/// it was; so it is when the move itself reports KCC_MOVE_BAD_INPUT.
KCC_API void kcc_character_move_velocity(kcc_character *ch, const kcc_mesh *mesh, vec3 velocity,
                                 const vec3 gravity, float dt, kcc_move_result *result);

/// What a move looked at, for debug drawing (kcc_character_move_debug). Costs a few stores per probe.
#define KCC_DEBUG_MAX_CONTACTS 8
typedef struct kcc_move_debug {
    vec3     ray_from[4];      ///< m: the four edge rays of the ground probe that decided the result
    vec3     ray_to[4];        ///< m: where each ended (its hit, or its full length)
    uint32_t ray_hit;          ///< bit i: ray i hit a triangle
    uint32_t ray_walkable;     ///< bit i: ... walkable ground
    uint32_t contact_count;    ///< triangles touched first by the swept move (averaged for the slide)
    uint32_t contacts[KCC_DEBUG_MAX_CONTACTS]; ///< their input indices
    vec3     averaged_normal;  ///< unit, valid when contact_count > 0
    vec3     slide;            ///< m: the rest of the motion along the averaged normal's tangent
    vec3     p1, p2, p4;       ///< m: the positions of the scheme that were computed (see tried)
    uint32_t tried;            ///< bit k set: pk was computed (k = 1, 2, 4)
} kcc_move_debug;

/// kcc_character_move that also fills debug (may be NULL). Same result, same determinism.
KCC_API void kcc_character_move_debug(kcc_character *ch, const kcc_mesh *mesh, const vec3 displacement,
                              kcc_move_result *result, kcc_move_debug *debug);

/// The instruction set moves and mesh queries run on: "avx2" (x86-64 CPUs with AVX2, when the
/// library was built with its AVX2 variant, the default there) or "baseline". Both give the same
/// results bit for bit. Chosen at the first move or query; KCC_ISA=baseline in the environment
/// forces the baseline.
KCC_API const char *kcc_character_isa(void);

/// The character's box (m), box[0] = min, box[1] = max.
KCC_API void kcc_character_box(const kcc_character *ch, vec3 out[2]);

/* ---- characters in a world (kcc_world.h; docs/world.md) ---- */

/// Adds a character to the world with its box centred at center (m); desc NULL: the defaults.
/// Writes its id (never 0; an id space of its own, apart from bodies'). The world keeps the
/// character (a copy): read it with kcc_world_get_character. Errors: KCC_ERR_NULL_ARGUMENT
/// (world, center, out_character), the desc's own (kcc_character_desc_validate),
/// KCC_ERR_NON_FINITE (center), KCC_ERR_BAD_DESC (center beyond KCC_WORLD_MAX_POSITION),
/// KCC_ERR_TOO_LARGE (character_capacity characters live).
KCC_API kcc_status kcc_world_add_character(kcc_world *world, const kcc_character_desc *desc,
                                           const vec3 center, uint32_t *out_character);
/// Removes a character; its id is stale from then on. KCC_ERR_NOT_FOUND for a removed, stale or
/// never-issued id.
KCC_API kcc_status kcc_world_remove_character(kcc_world *world, uint32_t character);
/// The character's displacement for the next kcc_world_step only (m; the caller adds gravity and
/// jumps, as for kcc_character_move); a character given none moves by zero. A NaN or infinite
/// displacement is refused with KCC_ERR_NON_FINITE, one beyond KCC_MAX_DISPLACEMENT with
/// KCC_ERR_BAD_DESC, NULL with KCC_ERR_NULL_ARGUMENT: then the step moves it by zero.
KCC_API kcc_status kcc_world_set_displacement(kcc_world *world, uint32_t character,
                                              const vec3 displacement);

/// Teleports a character between steps: its box centre goes to `center` at once (no motion: it
/// rides nothing, pushes nothing and sweeps nothing on the way; sensors see it leave and enter at
/// the next step). Its ground is forgotten until its next move finds it again. A box placed inside
/// the level is the caller's choice: the next move pushes it out as kcc_character_move does (test
/// the spot first with kcc_world_overlap_aabb). Errors: KCC_ERR_NULL_ARGUMENT, KCC_ERR_NOT_FOUND,
/// KCC_ERR_NON_FINITE (center), KCC_ERR_BAD_DESC (beyond KCC_WORLD_MAX_POSITION).
KCC_API kcc_status kcc_world_set_character_position(kcc_world *world, uint32_t character,
                                                    const vec3 center);
/// Retunes a character between steps as kcc_character_set_desc does (the feet stay where they
/// are; desc NULL: the defaults). Errors: KCC_ERR_NULL_ARGUMENT, KCC_ERR_NOT_FOUND, the desc's own.
KCC_API kcc_status kcc_world_set_character_desc(kcc_world *world, uint32_t character,
                                                const kcc_character_desc *desc);

/// Which layers a character is on and which it collides with, as bodies have layers and queries
/// masks: a character moves through the bodies whose layers & mask is 0 as if they were not there
/// (they neither hold it up, stop it nor push it), and two characters are solid to each other only
/// when each one's mask has a layer of the other (so both agree: a ghost passes through the crowd
/// and the crowd through it). Sensors list every character. Defaults: layers 1, mask
/// KCC_LAYERS_ALL. From the next step. Errors: KCC_ERR_NULL_ARGUMENT, KCC_ERR_NOT_FOUND,
/// KCC_ERR_BAD_DESC (layers 0).
KCC_API kcc_status kcc_world_set_character_layers(kcc_world *world, uint32_t character,
                                                  uint32_t layers, uint32_t mask);

/// What a game reads of a character every frame.
typedef struct kcc_character_state {
    vec3     position;        ///< m, centre of the box
    bool     on_ground;
    vec3     ground_normal;   ///< valid when on_ground
    uint32_t ground_body;     ///< the body stood on after the last step (0: none)
} kcc_character_state;

/// The character's state and its last step's result (either output may be NULL).
/// KCC_ERR_NOT_FOUND, KCC_ERR_NULL_ARGUMENT (world).
KCC_API kcc_status kcc_world_get_character(const kcc_world *world, uint32_t character,
                                           kcc_character_state *out_state,
                                           kcc_move_result *out_result);
/// Live characters.
KCC_API uint32_t kcc_world_character_count(const kcc_world *world);

/// Something a character touched during a step.
typedef struct kcc_contact {
    uint32_t body;        ///< the body touched (0: a character)
    uint32_t character;   ///< the character touched (0: a body)
    uint32_t triangle;    ///< input index in the body's mesh (bodies only)
    vec3     normal;      ///< unit, from what was touched toward the character
} kcc_contact;
/// Most contacts kept for a character a step.
#define KCC_WORLD_CONTACTS 8

/// What the character touched during the last step, at most KCC_WORLD_CONTACTS, each once: the
/// ground it ended on first, then the movers that pushed it, then what its move ran into (walls,
/// ceilings, steep ground, a floor it landed on, other characters) in the order met. Writes the first `capacity` to out
/// (may be NULL when capacity is 0) and returns how many there are; *out_overflow (may be NULL)
/// is set when more were touched than are kept. 0 for an id that is not live.
KCC_API uint32_t kcc_world_get_contacts(const kcc_world *world, uint32_t character,
                                        kcc_contact *out, uint32_t capacity, bool *out_overflow);

#ifdef __cplusplus
}
#endif
#endif
