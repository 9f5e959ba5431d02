/* world_trace_internal.h: the parsed form of a world trace (`kcc-trace 2`): its levels and its
 * operations in file order, shared by the loader and replayer (world_trace_replay.c) and the
 * shrinker (world_trace_shrink.c). Never installed. */
#ifndef KCC_WORLD_TRACE_INTERNAL_H
#define KCC_WORLD_TRACE_INTERNAL_H

#include "kcc_trace.h"

/// One line of a world trace that does something.
typedef enum wt_op_kind {
    WT_BODY,               ///< `body B L static|kinematic px py pz qx qy qz qw [sensor] [layers=N]`
    WT_REMOVE_BODY,        ///< `remove_body B`
    WT_PLACE,              ///< `place B px py pz qx qy qz qw` (kcc_world_set_body_transform)
    WT_TARGET,             ///< `target B px py pz qx qy qz qw` (kcc_world_move_body)
    WT_BODY_LAYERS,        ///< `body_layers B N` (kcc_world_set_body_layers)
    WT_CHARACTER,          ///< `character C cx cy cz [field=value ...]`
    WT_REMOVE_CHARACTER,   ///< `remove_character C`
    WT_TELEPORT,           ///< `teleport C cx cy cz` (kcc_world_set_character_position)
    WT_RETUNE,             ///< `retune C [field=value ...]` (kcc_world_set_character_desc)
    WT_CHARACTER_LAYERS,   ///< `character_layers C N M` (kcc_world_set_character_layers)
    WT_DISPLACE,           ///< `d C dx dy dz`: C's displacement for every step from here on
    WT_SHIFT,              ///< `shift x y z` (kcc_world_shift_origin)
    WT_STEP,               ///< `step S`
    WT_OUTCOME,            ///< `= C x y z [FLAGS]`: C's state after the step above
    WT_SENSOR,             ///< `sensor B C enter|leave`: an event of the step above
} wt_op_kind;

typedef struct wt_op {
    uint8_t  kind;         ///< wt_op_kind
    bool     flag;         ///< BODY: a sensor; OUTCOME: flags given; SENSOR: entered
    bool     kinematic;    ///< BODY
    uint32_t line;
    uint32_t number;       ///< the body or character named (STEP: the step number)
    uint32_t arg;          ///< BODY: level; CHARACTER, RETUNE: index into descs; SENSOR: the
                           ///< character; CHARACTER_LAYERS: the mask
    uint32_t bits;         ///< BODY, BODY_LAYERS, CHARACTER_LAYERS: layers; OUTCOME: flags
    float    v[7];         ///< positions (m) and rotations
} wt_op;

/// Whether an op of this kind names a body (its `number`): a shrink that cuts the body cuts it.
static inline bool kcc_wt_names_body(uint8_t kind)
{
    return kind <= WT_BODY_LAYERS;
}

/// Whether an op of this kind is a call on a character (its `number`), from its `character` line
/// to its `d` lines: a shrink that cuts the character cuts it.
static inline bool kcc_wt_calls_character(uint8_t kind)
{
    return kind >= WT_CHARACTER && kind <= WT_DISPLACE;
}

/// Smallest and largest `size` of an `hf terrain` level (cells a side: the biggest is 2^21
/// triangles, 4 MB of heights, so a hand-edited trace cannot ask for gigabytes).
#define KCC_WT_HF_MIN_SIZE 16u
#define KCC_WT_HF_MAX_SIZE 1024u

/// An `hf terrain seed=S size=N` level: kcc_level_terrain_heights(seed, size) built with
/// kcc_heightfield_build; or an `hf file <path>` level: kcc_trace_read_heightfield of the path (the
/// level's path, resolved against the trace's directory).
typedef struct kcc_wt_hf_spec {
    uint64_t seed;
    uint32_t size;
    bool     from_file;
} kcc_wt_hf_spec;

/// Reads the spec after `hf ` (text[0..length)): true and *out filled, or false with a one-line
/// reason in why. For `file <path>`, *path_offset is where the path begins in text.
bool kcc_wt_parse_hf(const char *text, size_t length, kcc_wt_hf_spec *out, size_t *path_offset,
                     char *why, size_t why_size);
/// Whether a whole level string is a well-formed `hf <spec>` (kcc_world_trace_level's check).
bool kcc_wt_hf_level_ok(const char *level);
/// Builds spec's heightfield (allocates its heights for the build only).
kcc_status kcc_wt_build_hf(const kcc_wt_hf_spec *spec, kcc_mesh **out_mesh);

typedef struct wt_level {
    kcc_trace_level_kind kind;
    char    *text;         ///< as written after the number (`obj <path>`, `gen <spec>`, `hf <spec>`)
    char    *path;         ///< OBJ: resolved against the trace's directory; GEN, HF: the spec
    kcc_wt_hf_spec hf;     ///< HF: what to build
    uint32_t line;
    bool     has_hash;
    uint64_t hash;
    uint32_t hash_line;
} wt_level;

struct kcc_world_trace {
    char               *name;
    kcc_world_desc      desc;            ///< the `world` line's capacities and broadphase
    wt_level            levels[KCC_WORLD_TRACE_LEVELS];
    uint32_t            level_count;
    wt_op              *ops;
    uint32_t            op_count, op_capacity;
    kcc_character_desc *descs;           ///< characters' descs (WT_CHARACTER's, WT_RETUNE's arg)
    uint32_t            desc_count, desc_capacity;
    uint32_t            step_count;
    uint32_t            body_count;      ///< bodies added (the highest body number)
    uint32_t            character_count; ///< characters added
};

/// m: how deep a box may overlap a body before the penetration check trips (well above the
/// controller's skin and its overlap tolerance).
#define KCC_WT_PENETRATION_DEPTH 0.01f

/// A check evaluated on every live character after every step of a replay.
typedef struct kcc_wt_check {
    kcc_world_shrink_check kind;
    uint32_t          flag;                 ///< KCC_WT_CHECK_FLAG: the KCC_MOVE_* bit
    /* what the replay found: the first step and character that tripped it (0: none) */
    uint32_t          tripped_step, tripped_character, line;
} kcc_wt_check;

/// Replays the operations keep[i] marks (all when keep is NULL): kcc_world_trace_replay's work,
/// plus the check (may be NULL) evaluated on every live character after every step.
kcc_status kcc_wt_replay(const kcc_world_trace *trace, const bool *keep,
                         const kcc_world_replay_desc *desc, kcc_wt_check *check,
                         kcc_world_trace_report *out, char *err, size_t err_size);
/// Begins recording world (empty) into file, naming the trace's levels as the trace writes them
/// (meshes[i] is level i + 1, with its triangles' hash).
kcc_status kcc_wt_record_levels(kcc_trace_writer *w, FILE *file, kcc_world *world,
                                const kcc_world_trace *trace, const kcc_mesh *const *meshes,
                                const uint64_t *hashes);

/// Writes v's decimal digits at `at`; returns the end.
char *kcc_wt_put_uint(char *at, uint32_t v);
/// Writes v at `at` (32 bytes of room) in plain decimal ("-12.345678", "0.0035", "1200", at most 18
/// characters) with as few digits as read back to v's bits (world_trace_text.c says how); returns
/// the end, or NULL (nothing written) for 0, NaN, infinities and |v| outside [1e-7, 1e9): the caller
/// writes those.
char *kcc_wt_put_float(char *at, float v);

/// Writes the trace's text with only the operations keep[i] marks (all when keep is NULL), with
/// steps, bodies and characters numbered again from 1 (the shrinker's output).
kcc_status kcc_wt_write(const kcc_world_trace *trace, const bool *keep, FILE *out);

#endif
