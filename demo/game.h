/* demo/game.h: the demo's game code, what a user writes on top of kcc (never part of the library):
 * Quake 3's movers (doors, plats, buttons, bobbing, rotating, pendulum, trains) as kinematic bodies,
 * its triggers (jump pads, teleporters, trigger_multiple, the doors' and plats' own) as sensor bodies,
 * characters (a player and wandering bots) as world characters, and what a crushed one suffers.
 * game.c owns the world, the characters and the step; game_movers.c the movers and the triggers.
 * Allocates at creation only: game_step never allocates. docs/world.md, "The movers of the demo". */
#ifndef KCC_DEMO_GAME_H
#define KCC_DEMO_GAME_H

#include "app.h"
#include "q3bsp.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Quake 3's g_gravity (800 units/s^2) in m/s^2: the pendulum's period is a property of the map
/// (its length against this gravity), whatever gravity the characters fall with.
#define GAME_Q3_GRAVITY 25.0f
/// Most corners a train's path_corner chain keeps.
#define GAME_TRAIN_CORNERS 64u
/// How far (m) a character's feet may be from a lift's top for the lift to count as ridden to it.
#define GAME_LIFT_TOLERANCE 0.01f

typedef enum game_mover_kind {
    GAME_MOVER_DOOR, GAME_MOVER_PLAT, GAME_MOVER_BUTTON, GAME_MOVER_BOBBING, GAME_MOVER_ROTATING,
    GAME_MOVER_PENDULUM, GAME_MOVER_TRAIN, GAME_MOVER_KIND_COUNT
} game_mover_kind;

/// A door's, plat's or button's place on its way (Quake 3's moverState).
typedef enum game_binary_state { GAME_AT_POS1, GAME_TO_POS2, GAME_AT_POS2, GAME_TO_POS1 } game_binary_state;

/// What the game does with a character a mover crushed (KCC_MOVE_CRUSHED).
typedef enum game_crush_policy {
    GAME_CRUSH_REVERSE,   ///< doors, plats and buttons turn back (Quake 3's Blocked_Door); others go on
    GAME_CRUSH_KILL,      ///< the character dies and respawns; the mover goes on (a crusher)
} game_crush_policy;

/// One mover: a brush model as a kinematic body, and the rule that moves it.
typedef struct game_mover {
    game_mover_kind kind;
    uint32_t  entity;             ///< its entity in the map
    uint32_t  body;               ///< kinematic body
    kcc_mesh *mesh;               ///< owned: the brush model's triangles in its own frame
    float     bounds[2][3];       ///< m: the brush model's bounds in its own frame (bounds[1][1]: a
                                  ///< plat's floor)
    float     origin[3];          ///< m: where the model's frame sits at rest (the entity's origin)
    float     base_rotation[4];   ///< the entity's angles as a quaternion (pendulum)
    /* doors, plats, buttons */
    float     pos1[3], pos2[3];   ///< m: the model frame's two places (a plat: pos1 below, pos2 top)
    float     speed;              ///< m/s (doors, plats, buttons, trains); deg/s (rotating)
    float     wait;               ///< s at pos2 before the way back; < 0: never returns
    game_binary_state state;
    float     fraction;           ///< 0 at pos1 .. 1 at pos2
    float     timer;              ///< s left at pos2
    bool      crusher;            ///< a door's spawnflags 4: never reverses when blocked
    bool      loops;              ///< trains: the last corner leads back to the first
    bool      blocked;            ///< a character it crushed this step (reversed after the step)
    char      target[64];         ///< what it fires on reaching pos2 ("" none)
    char      targetname[64];     ///< what fires it ("" none)
    /* bobbing (a line), rotating and pendulum (an axis) */
    float     axis[3];            ///< unit, world frame
    float     amplitude;          ///< m (bobbing), degrees (pendulum)
    float     period;             ///< s (bobbing, pendulum)
    float     phase;              ///< 0..1 of the period at time 0
    /* trains */
    uint32_t  first_corner, corner_count;  ///< its corners in game.corners
    uint32_t  at_corner;          ///< the corner it left (or waits at)
    float     segment_time;       ///< s since it left at_corner (negative: still waiting)
    float     segment_duration;   ///< s to the next corner
    kcc_transform pose;           ///< the target of the current step
} game_mover;

typedef enum game_trigger_kind {
    GAME_TRIGGER_PUSH,       ///< trigger_push: a jump pad
    GAME_TRIGGER_TELEPORT,   ///< trigger_teleport
    GAME_TRIGGER_MULTIPLE,   ///< trigger_multiple: fires its targets while touched
    GAME_TRIGGER_DOOR,       ///< the box Quake 3 spawns around a door (Think_SpawnNewDoorTrigger)
    GAME_TRIGGER_PLAT,       ///< the box Quake 3 spawns on a plat's low position (SpawnPlatTrigger)
} game_trigger_kind;

/// One trigger: a box as a static sensor body.
typedef struct game_trigger {
    game_trigger_kind kind;
    uint32_t  entity;             ///< its entity in the map (door and plat triggers: the mover's)
    uint32_t  body;               ///< sensor body
    kcc_mesh *mesh;               ///< owned: the box's 12 triangles in world coordinates
    float     box[2][3];          ///< m
    float     target[3];          ///< m: a jump pad's apex point; a teleporter's destination (feet)
    float     exit_yaw;           ///< rad about +Y from +X: the direction a teleported character leaves in
    bool      has_target;         ///< false: a pad or teleporter whose target is missing (inert)
    uint32_t  mover;              ///< door and plat triggers: the mover they drive
    char      target_name[64];    ///< trigger_multiple: what it fires
    float     wait, cooldown;     ///< s: trigger_multiple's refire delay and what is left of it
                                  ///< (every trigger's box is its brushes' bounds grown by one unit: Quake 3
                                  ///< touches triggers with the player's box grown so, so standing on one
                                  ///< touches it)
    uint32_t  inside;             ///< characters inside it
} game_trigger;

/// A corner of a train's path (path_corner).
typedef struct game_corner {
    float position[3];            ///< m: where the train's frame goes
    float speed;                  ///< m/s to the next corner; 0: the train's
    float wait;                   ///< s to wait on arrival
} game_corner;

/// One character of the game.
typedef struct game_character {
    uint32_t id;                  ///< world character id (changes on teleport and respawn)
    float    velocity[3];         ///< m/s
    float    wish[3];             ///< m/s: horizontal walk the controls ask for
    bool     jump;                ///< jump at the next step when on ground
    bool     ballistic;           ///< launched or teleported: keeps its horizontal velocity until it lands
    bool     bot;
    uint32_t teleport;            ///< a teleporter it entered this step: trigger index + 1 (0: none)
    uint32_t goal;                ///< bots: the spawn point it walks to
    float    goal_time;           ///< s spent on that goal
    uint32_t deaths;
    uint32_t launches;            ///< jump pads that launched it
    uint32_t teleports;           ///< teleporters that moved it
    uint32_t pad;                 ///< the jump pad it is inside: trigger index + 1 (0: none); re-aimed
                                  ///< every step while inside, as Quake 3 sets the velocity every frame
    bool     flight_blocked;      ///< the flight met a wall or a ceiling before its apex
    bool     in_flight;           ///< launched, its apex not reached yet (a teleport ends the flight)
    float    launch_target[3];    ///< m: the last launch's target
    float    apex_distance;       ///< m: horizontal distance from the target at the last launch's apex
                                  ///< (NAN before it is reached)
    float    apex[3];             ///< m: the centre at that apex
} game_character;

/// A game recorded into a world trace from its creation (game_desc.record; docs/demo.md, "World
/// traces of the game"). The world recorder wants an empty world and a name for every mesh, so
/// game_create starts it before the first body and names each mesh as it adds it: the static level
/// as `level` says, each mover's and trigger's mesh as an OBJ file it writes into mesh_dir
/// (mesh_N.obj, N counting from 1 in the order the game adds them).
typedef struct game_record {
    FILE       *file;            ///< borrowed until game_record_end: the trace is written here
    const char *level;           ///< the static level as the trace names it ("obj PATH", with PATH
                                 ///< relative to the trace's directory); NULL: written as level.obj
                                 ///< into mesh_dir
    const char *mesh_dir;        ///< where the OBJ files are written (made when missing)
    const char *mesh_dir_name;   ///< that directory as the trace names it (relative to the trace's)
    kcc_trace_writer writer;     ///< set by game_create
    uint32_t    meshes;          ///< meshes named
    bool        active;          ///< recording (from game_create to game_record_end)
    kcc_status  status;          ///< the recording's first failure: a mesh file not written, the
                                 ///< writer's sticky status (KCC_ERR_VERSION: a teleport version 2
                                 ///< cannot write), set by game_record_end
} game_record;

typedef struct game_desc {
    kcc_character_desc character;   ///< default: Quake 3's player (0.94 x 1.75 m, 0.5625 m steps, 45.6 deg)
    float    gravity;                ///< m/s^2 the characters fall with; default DEMO_GRAVITY
    float    jump_speed;             ///< m/s; default DEMO_JUMP_SPEED
    float    walk_speed;             ///< m/s of the bots; default DEMO_WALK_SPEED
    game_crush_policy crush;         ///< default GAME_CRUSH_REVERSE
    uint32_t character_capacity;     ///< default 64
    uint32_t seed;                   ///< the bots' choices; default 1
    game_record *record;             ///< borrowed: record the game into a world trace; default NULL
} game_desc;

/// What happened since creation.
typedef struct game_stats {
    uint32_t crushed;      ///< character steps flagged KCC_MOVE_CRUSHED
    uint32_t reversed;     ///< movers turned back by a crushed character
    uint32_t killed;       ///< characters killed by a mover (GAME_CRUSH_KILL)
    uint32_t launches;     ///< jump pad launches
    uint32_t teleports;
    uint32_t fell;         ///< characters that fell out of the level and respawned
    uint32_t uses;         ///< movers set going (triggers, buttons, targets)
} game_stats;

/// A running game: the world and everything in it. Fields are readable (the viewer draws them).
typedef struct game {
    kcc_world      *world;
    kcc_mesh       *level_mesh;   ///< owned: the static world model
    uint32_t        level_body;
    float           level_bounds[2][3];  ///< m
    game_mover     *movers;
    uint32_t        mover_count;
    game_trigger   *triggers;
    uint32_t        trigger_count;
    game_corner    *corners;
    uint32_t        corner_count;
    game_character *characters;
    uint32_t        character_count;
    uint32_t       *character_of_slot;   ///< world character slot -> index in characters + 1 (0: none)
    float          *spawns;              ///< m, feet; a copy of the map's
    uint32_t        spawn_count;
    game_desc       desc;
    float           time;                ///< s since creation
    float           dt;                  ///< s, the last step's length
    uint32_t        rng;
    game_stats      stats;
} game;

game_desc game_default_desc(void);
/// Builds the world of a map: its world model as one static body, every mover (func_door, func_plat,
/// func_button, func_bobbing, func_rotating, func_pendulum, func_train) as a kinematic body of its
/// brush model, every trigger (trigger_push, trigger_teleport, trigger_multiple, and the doors' and
/// plats' own) as a sensor box, with Quake 3's defaults for missing keys (docs/world.md). Copies what
/// it keeps: the map may be freed after. Errors: KCC_ERR_NULL_ARGUMENT, KCC_ERR_BAD_DESC (err says
/// which field), the world's and the meshes' own errors, KCC_ERR_OUT_OF_MEMORY.
kcc_status game_create(const q3bsp_map *map, const game_desc *desc, game **out, char *err, size_t err_size);
/// Ends the recording (kcc_trace_end) and returns its status (game_record.status); KCC_OK when the
/// game is not recorded. game_destroy calls it when the caller has not.
kcc_status game_record_end(game *g);
void game_destroy(game *g);

/// The running game `from` again, recorded from its first body (the world recorder wants an empty
/// world): a new game of the same map with `record`, into which the movers' states and poses, the
/// triggers' cooldowns, the characters (where they stand, velocities, goals, counters, in the same
/// order), the clock, the bots' choices and the stats are copied. `from` is left as it was (destroy
/// it after). game_create's errors; the viewer's F5 on a game.
kcc_status game_restart_recorded(const game *from, const q3bsp_map *map, game_record *record, game **out,
                                 char *err, size_t err_size);
/// Adds a character standing at `feet` (m). KCC_ERR_TOO_LARGE when character_capacity are in.
kcc_status game_add_character(game *g, const float feet[3], bool bot, uint32_t *out_index);
/// Removes a character; the last one takes its index.
void game_remove_character(game *g, uint32_t index);
/// Sets a character's controls from the demo's input (walk or run along yaw, jump).
void game_set_input(game *g, uint32_t index, const demo_input *in);
/// One step of dt seconds: the movers' rules, the characters' displacements, kcc_world_step, then
/// what the step reports (ground, walls, crushes, sensor events) applied to the game.
void game_step(game *g, float dt);
/// What game_soak measured on one map.
typedef struct game_soak_report {
    uint32_t steps;              ///< steps run
    uint32_t characters;         ///< riders and bots (jumpers come and go)
    uint32_t pad_waves;          ///< waves the jumpers were launched in
    uint32_t lifts;              ///< plats with a rider placed on them
    uint32_t lifts_ridden;       ///< of those, riders carried to the top (feet within GAME_LIFT_TOLERANCE
                                 ///< of it, the plat their ground body, the plat at pos2)
    uint32_t pads;               ///< jump pads with a target above them, a jumper placed on each
    uint32_t pads_launched;      ///< of those, jumpers that were launched and reached their apex
    uint32_t pads_teleported;    ///< of those, jumpers whose arc ran into a teleporter before its apex
    uint32_t pads_on_target;     ///< of those, apexes within a character's width (horizontally) of the target
    uint32_t pads_blocked;       ///< of the launched, flights that met a wall or a ceiling before the apex
    uint32_t pads_clear_missed;  ///< of the launched, flights that met nothing and still missed the target
    float    worst_pad_distance; ///< m: the largest apex distance from its target
    uint32_t worst_pad_entity;   ///< that pad's entity
    uint32_t worst_lift_entity;  ///< a lift not ridden to its top (UINT32_MAX: none)
    uint64_t character_steps;
    uint64_t over_tolerance;     ///< character steps ending deeper in the static level than
                                 ///< KCC_PENETRATION_TOLERANCE
    float    max_penetration;    ///< m, into the static level (demo_penetration)
    game_stats stats;            ///< escapes are stats.fell
} game_soak_report;

/// The movers soak of one map: a game with a rider on every plat and `bots` wanderers, run for at least
/// `steps` steps at DEMO_DT and until every jump pad has launched a jumper placed at its centre (in
/// waves of pads whose flights cannot meet: characters are solid to each other), checked every
/// step (docs/demo.md).
kcc_status game_soak(const q3bsp_map *map, uint32_t steps, uint32_t bots, game_soak_report *out, char *err,
                     size_t err_size);

/// Runs game_soak on `where` (a .bsp, or a directory holding levels.txt and pkg/maps/NAME.bsp) and
/// prints a line a map (only the failing ones when quiet) and a total. A map passes with no step over
/// the penetration tolerance, no fall out of the level, every lift ridden to its top and no clear
/// flight (one that met no wall or ceiling) missing its target. Returns a DEMO_EXIT_* status.
int game_soak_levels(const char *where, uint32_t steps, uint32_t bots, bool quiet);

/// The character's world state; false for an index out of range.
bool game_character_state(const game *g, uint32_t index, kcc_character_state *out_state,
                          kcc_move_result *out_result);

/// A mesh of x y z positions (m) and 3 indices a triangle (kcc_mesh_build's errors). A recorded game
/// (game_desc.record) names the mesh to the recorder, writing its OBJ file.
kcc_status game_mesh_build(game *g, const float *positions, uint32_t vertex_count, const uint32_t *indices,
                           uint32_t triangle_count, kcc_mesh **out);
/// Where a rider stands on plat `mover`: the middle of the largest triangle of its top, at its low
/// position (feet, m).
void game_plat_rider_feet(const q3bsp_map *map, const game_mover *m, float feet[3]);

/* game_movers.c: the movers and triggers (used by game.c) */

/// Creates the movers and triggers of the map in g's world (game_create calls it).
kcc_status game_movers_create(game *g, const q3bsp_map *map, char *err, size_t err_size);
void game_movers_destroy(game *g);
/// Advances every mover's rule by dt and sets its body's target (before kcc_world_step).
void game_movers_advance(game *g, float dt);
/// Sets mover `mover` going as Quake 3's Use_BinaryMover does: from pos1 it leaves, at pos2 it
/// waits again, on its way back it turns; other kinds ignore it.
void game_mover_use(game *g, uint32_t mover);
/// Fires every mover whose targetname is `name`.
void game_fire_targets(game *g, const char *name);
/// Turns a door, plat or button on its way back (a blocked mover, GAME_CRUSH_REVERSE); false
/// when the mover is of another kind, a crusher, or at rest.
bool game_mover_reverse(game *g, uint32_t mover);
/// The velocity (m/s) that carries a point at `from` to the apex `to` under gravity (m/s^2), stepped as
/// the game steps characters (each step: velocity.y -= gravity dt, then the move by velocity dt):
/// Quake 3's AimAtTarget (climb h = to.y - from.y in t = sqrt(2 h / gravity), horizontal distance / t)
/// made exact for the fixed step: n = max(1, round(t / dt)) steps, horizontal distance / (n dt), and
/// the vertical speed h / (n dt) + gravity dt (n + 1) / 2 that climbs exactly h in n steps, after
/// which the vertical speed is no longer positive (the apex, right above or at `to`).
/// False (out untouched) when `to` is not above `from` or gravity or dt is not positive.
bool game_aim_at(const float from[3], const float to[3], float gravity, float dt, float out[3]);
/// The mover index of a body (from its user data), UINT32_MAX when it is no mover.
uint32_t game_mover_of_body(const game *g, uint32_t body);
/// The trigger index of a body, UINT32_MAX when it is no trigger.
uint32_t game_trigger_of_body(const game *g, uint32_t body);
/// Runs the triggers' rules on the step's sensor events and on what stays inside them.
void game_triggers_apply(game *g, float dt);

/* game.c: what the triggers do to characters (used by game_movers.c) */

/// The index in g->characters of a world character id; UINT32_MAX when it is none of them.
uint32_t game_character_of_id(const game *g, uint32_t id);
/// Launches a character along the arc whose apex is `target` (game_aim_at from its centre, with the
/// game's last step length).
void game_character_launch(game *g, uint32_t index, const float target[3]);
/// Moves a character to stand at `feet` (kcc_world_set_character_position: it keeps its id; the next
/// step's sensor events list it leaving and entering) with the given velocity (m/s).
void game_character_teleport(game *g, uint32_t index, const float feet[3], const float velocity[3]);

#ifdef __cplusplus
}
#endif
#endif
