/* demo/app.h: what kcc-demo's viewer and headless mode share: opening a level by name (a generated
 * spec, an OBJ or a Quake 3 BSP), the player's movement rules (60 Hz, walk/run/jump/gravity), the
 * wandering characters of the headless showcase, and the headless picture. No window, no GL. */
#ifndef KCC_DEMO_APP_H
#define KCC_DEMO_APP_H

#include "kcc.h"
#include "raster.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DEMO_DT          (1.0f / 60.0f)  ///< s, fixed step
#define DEMO_WALK_SPEED  5.0f            ///< m/s
#define DEMO_RUN_SPEED   9.0f            ///< m/s
#define DEMO_GRAVITY     9.81f           ///< m/s^2
#define DEMO_JUMP_SPEED  5.0f            ///< m/s up (about 1.27 m high)

/// An open level: its triangles and spawns, its mesh, and how a trace names it.
typedef struct demo_level {
    kcc_level level;
    kcc_mesh *mesh;
    char      name[256];                      ///< for titles: the spec or the file's base name
    char      trace_level[KCC_TRACE_LEVEL_MAX]; ///< "gen SPEC" / "obj PATH"; "" for a BSP (export first)
    bool      generated;
    bool      from_bsp;
    float     bounds[2][3];                   ///< m, of all triangles
} demo_level;

/// Opens `arg`: a path ending in .obj (plus its .spawns) or .bsp, else a kcc_level_generate spec
/// ("showcase", "arena seed=3"). err gets a message on failure.
kcc_status demo_level_open(const char *arg, demo_level *out, char *err, size_t err_size);
void demo_level_close(demo_level *lv);
/// Writes the level as OBJ + .spawns (used to record traces on BSP levels).
kcc_status demo_level_export(const demo_level *lv, const char *obj_path, char *err, size_t err_size);

/// A character under the demo's movement rules.
typedef struct demo_mover {
    kcc_character   ch;
    float           vy;        ///< m/s, vertical speed (gravity, jumps)
    kcc_move_result last;      ///< the last move's result
    vec3            last_disp; ///< m, the last displacement passed to the move
    kcc_move_debug  dbg;       ///< what the last move looked at (rays, contacts, averaged normal)
} demo_mover;

/// What the player (or a wanderer) wants this frame.
typedef struct demo_input {
    float forward, right;      ///< -1..1
    float yaw;                 ///< rad; 0 looks along -Z, positive turns left
    bool  run, jump;
} demo_input;

/// Initialises a mover standing with its feet at `feet` (m).
kcc_status demo_mover_init(demo_mover *m, const kcc_character_desc *desc, const float feet[3]);
/// One 60 Hz frame: builds the displacement (horizontal wish, gravity, jump) and moves.
void demo_mover_step(demo_mover *m, const kcc_mesh *mesh, const demo_input *in);

/// Finds up to `count` standing places (feet, m): the level's spawn points when use_spawns and it has
/// any, else random downward ray casts onto walkable ground (not the level's top) where the box fits.
/// Returns how many it found.
uint32_t demo_find_starts(const demo_level *lv, const kcc_character_desc *desc, uint32_t count,
                          uint32_t seed, bool use_spawns, float *feet_out);

/// How deep the box overlaps the level (m): the least shrink of the box that leaves no overlapping
/// triangle, to 1 um (an upper bound); 0 when the box overlaps nothing.
float demo_penetration(const kcc_mesh *mesh, const float box[2][3]);

/// Headless options (kcc-demo --headless ...).
typedef struct demo_headless_opts {
    const char *level;        ///< spec or path; NULL: the trace's level, else "showcase"
    const char *trace;        ///< replay this trace instead of wandering characters
    const char *png;          ///< output picture; NULL: none
    uint32_t characters;      ///< wanderers; default 24
    uint32_t frames;          ///< per wanderer; default 1800 (30 s)
    uint32_t seed;
    uint32_t width, height;   ///< picture pixels; default 960 x 600
    float    yaw, pitch;      ///< degrees; default 30, 50
    float    cut;             ///< m above the highest start/path point where roofs are cut; NAN: auto
    bool     quiet;
} demo_headless_opts;

demo_headless_opts demo_headless_default_opts(void);
/// Runs the headless showcase or trace replay, prints a summary, writes the picture. Returns an exit
/// code: 0 fine, 1 error (message on stderr), 3 the run found a problem (penetration, trace diverged).
int demo_headless_run(const demo_headless_opts *o);

#ifdef __cplusplus
}
#endif
#endif
