/* demo/app.h: what kcc-demo's viewer and headless mode share: opening a level by name (a generated
 * spec, an OBJ or a Quake 3 BSP), the player's movement rules (60 Hz, walk/run/jump/gravity), key
 * latching, the chase camera's placement, the command line, the wandering characters of the headless
 * showcase, and the headless picture. No window, no GL: test/test_demo.c tests all of it. */
#ifndef KCC_DEMO_APP_H
#define KCC_DEMO_APP_H

#include "kcc.h"
#include "isa_env.h"
#include "raster.h"
#include "viewer.h"

#include <stdio.h>

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
    char      trace_level[KCC_TRACE_LEVEL_MAX]; ///< "gen SPEC" / "obj ABSOLUTE-PATH" (a trace written
                                              ///< anywhere finds it); "" for a BSP (export first)
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

/// kcc-demo's and kcc-replay's exit status: 0 all fine, 1 the run found a problem (a trace diverges,
/// a move left the box deeper in the level than KCC_PENETRATION_TOLERANCE), 2 usage or bad input
/// (a bad option, a level or trace that cannot be read, a picture that cannot be written).
enum { DEMO_EXIT_OK = 0, DEMO_EXIT_PROBLEM = 1, DEMO_EXIT_ERROR = 2 };

#define DEMO_DEFAULT_CHARACTERS 16u    ///< headless wanderers
#define DEMO_DEFAULT_FRAMES     1800u  ///< headless frames per wanderer (30 s at 60 Hz)
#define DEMO_MAX_CHARACTERS     10000u
#define DEMO_MAX_FRAMES         10000000u
#define DEMO_SOAK_STEPS         300u   ///< the movers soak's steps a map (5 s at 60 Hz) at least
#define DEMO_SOAK_BOTS          8u     ///< the movers soak's wandering bots a map

/// Replays the world trace at trace_path (kcc_world_trace_replay, one worker) and says how it went in
/// message: the replayed steps, the first divergence, or why it could not be replayed (a broken
/// trace: "path:LINE: what"). Returns DEMO_EXIT_OK, DEMO_EXIT_PROBLEM (diverges) or DEMO_EXIT_ERROR.
int demo_world_trace_check(const char *trace_path, uint32_t *steps, char *message, size_t message_size);

/// Headless options (kcc-demo --headless ...).
typedef struct demo_headless_opts {
    const char *level;        ///< spec or path; NULL: the trace's level, else "showcase"
    const char *trace;        ///< replay this trace instead of wandering characters
    const char *png;          ///< output picture; NULL: none
    uint32_t characters;      ///< wanderers; default DEMO_DEFAULT_CHARACTERS
    uint32_t frames;          ///< per wanderer; default DEMO_DEFAULT_FRAMES
    uint32_t seed;
    uint32_t width, height;   ///< picture pixels; default 960 x 600
    float    yaw, pitch;      ///< degrees; default 30, 50
    float    cut;             ///< m above the highest start/path point where roofs are cut; NAN: auto
    bool     quiet;
} demo_headless_opts;

demo_headless_opts demo_headless_default_opts(void);
/// Runs the headless showcase or trace replay, prints a summary, writes the picture. Returns a
/// DEMO_EXIT_* status (messages on stderr).
int demo_headless_run(const demo_headless_opts *o);

/* ------------------------------------------------------------------ command line */

/// Parses `text` whole as a decimal integer in [min, max]: digits only (no sign, no blanks, nothing
/// after them), no overflow. False (out untouched) otherwise.
bool demo_parse_u32(const char *text, uint32_t min, uint32_t max, uint32_t *out);
/// Parses `text` whole as a finite decimal number. False (out untouched) otherwise.
bool demo_parse_float(const char *text, float *out);

/// kcc-demo's command line, parsed.
typedef struct demo_cli {
    demo_headless_opts headless;
    demo_viewer_opts   viewer;
    bool               run_headless;   ///< --headless
    const char        *soak_movers;    ///< --soak-movers: a .bsp, or a directory with levels.txt and pkg/maps
    uint32_t           soak_steps;     ///< --soak-steps: at least this many steps a map; default DEMO_SOAK_STEPS
    uint32_t           soak_bots;      ///< --bots for the soak; default DEMO_SOAK_BOTS
    bool               help;           ///< -h / --help
} demo_cli;

/// Parses kcc-demo's arguments (argv[1..argc-1]) over the defaults. DEMO_EXIT_OK, or DEMO_EXIT_ERROR
/// with a one-line message in err (the option and what it wants).
int demo_cli_parse(int argc, char *const *argv, demo_cli *out, char *err, size_t err_size);
/// Writes kcc-demo's usage text, with the defaults read from demo_headless_default_opts() and
/// demo_viewer_default_opts().
void demo_cli_usage(FILE *f);

/* ------------------------------------------------------------------ viewer logic */

/// The keys the viewer's simulation reads.
typedef enum demo_key {
    DEMO_KEY_FORWARD, DEMO_KEY_BACK, DEMO_KEY_LEFT, DEMO_KEY_RIGHT, DEMO_KEY_JUMP, DEMO_KEY_RUN,
    DEMO_KEY_COUNT
} demo_key;

/// Key state between window events and simulation frames: `held` follows press and release events;
/// `tapped` latches every press until the next simulation frame consumes it, so a key pressed and
/// released between two frames still acts for one frame.
typedef struct demo_keys {
    uint32_t held;     ///< bit k: key k is down
    uint32_t tapped;   ///< bit k: key k went down since the last demo_keys_input
} demo_keys;

/// One key event (from the window's key callback).
void demo_keys_event(demo_keys *keys, demo_key key, bool down);
/// The input of the next simulation frame: keys held or tapped since the last call; consumes the taps.
demo_input demo_keys_input(demo_keys *keys, float yaw);

/// Where the chase camera goes: from `target` (m, the character's head) back along the unit vector
/// `back` up to `distance` (m), pulled in to where a sphere of radius `probe` (m) swept along that
/// line (kcc_mesh_sweep_sphere) first touches the level, so no wall stands between the camera and the
/// character. Writes the eye position; returns the distance used.
float demo_camera_place(const kcc_mesh *mesh, const float target[3], const float back[3], float distance,
                        float probe, float eye[3]);

/// Where the viewer writes the files it makes (F5 traces, K screenshots), relative to the current
/// directory; /build/ is in .gitignore.
#define DEMO_OUTPUT_DIR "build/viewer"
/// Formats DIR/LEVEL-STAMP.EXT into out: the level's name with every character other than letters,
/// digits, '-' and '.' turned into '_' ("arena seed=3" -> "arena_seed_3"). False when it does not fit.
bool demo_output_path(const char *dir, const char *level_name, const char *stamp, const char *ext, char *out,
                      size_t out_size);
/// Makes directory `dir` and its missing parents. False (with errno) when one cannot be made.
bool demo_make_dir(const char *dir);

#ifdef __cplusplus
}
#endif
#endif
