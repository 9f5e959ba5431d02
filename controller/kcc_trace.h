/* kcc_trace.h: input traces: a versioned, line-based text format (docs/traces.md) recording what an
 * engine fed kcc_character_move (level, tuning, start, one displacement per frame, retunes) and what
 * came out (position, flags); a writer an engine calls alongside its moves, a loader plus a
 * replayer that reports the first frame that diverges, and kcc_trace_check_file, all of it in one
 * call for a user's tests. World traces (version 2) record a whole kcc_world the same way, from a
 * recorder attached to it, and replay on any worker count; a failing one can be shrunk.
 * Loading allocates; recording and replaying never allocate per frame.
 * No global state; kcc never calls setlocale and reads/writes '.' decimals
 * whatever LC_NUMERIC says. */
#ifndef KCC_TRACE_H
#define KCC_TRACE_H

#include <stdio.h>
#include "kcc_controller.h"
#include "kcc_level.h"
#include "kcc_world.h"

#ifdef __cplusplus
extern "C" {
#endif

/// The format version this library writes and reads (first line `kcc-trace 1`).
#define KCC_TRACE_VERSION 1
/// The format version of world traces (first line `kcc-trace 2`): a kcc_world recorded as it runs.
#define KCC_WORLD_TRACE_VERSION 2
/// Most levels (distinct meshes) one world trace names.
#define KCC_WORLD_TRACE_LEVELS 256
/// Longest level description (`obj <path>` or `gen <spec>`), bytes including the terminator.
#define KCC_TRACE_LEVEL_MAX 1024
/// Buffer size that holds any float written by kcc_trace_float_to_text ("%.9g", e.g. -1.17549435e-38).
#define KCC_TRACE_FLOAT_CHARS 32
/// Buffer size that holds any flag set written by kcc_trace_flags_to_text.
#define KCC_TRACE_FLAGS_CHARS 256

// ------------------------------------------------------------------------------------- recording

/// Writes one trace to a FILE or a caller buffer. Caller-owned, plain data; fields are private.
/// One writer per trace; a writer is used from one thread at a time.
typedef struct kcc_trace_writer {
    /* private */
    FILE    *file;          ///< borrowed; NULL when writing to buffer
    char    *buffer;        ///< borrowed caller buffer (NUL-terminated while it has room)
    size_t   capacity;      ///< bytes in buffer
    size_t   length;        ///< bytes written so far
    kcc_character_desc desc;///< the tuning the trace says the character has now
    uint32_t frames;        ///< frames recorded
    kcc_status status;      ///< first error; sticky: once set, every call returns it
    size_t   header_length; ///< bytes kcc_trace_begin wrote
    bool     begun, ended;
    kcc_world *world;       ///< world traces: the world recorded (borrowed until kcc_trace_end)
    struct kcc_world_recorder *recorder; ///< world traces: allocated by kcc_world_trace_begin,
                                         ///< freed by kcc_trace_end or kcc_world_destroy
} kcc_trace_writer;

/// Starts a trace: writes the header, `level`, `desc` and `start` lines. `level` is `obj <path>`
/// (relative paths resolve against the trace file's directory when replayed) or `gen <spec>` (a
/// kcc_level_generate spec, e.g. "gen arena seed=3"); no newline or '#'. desc NULL means defaults.
/// start is the centre the character was initialised at (m). The FILE is borrowed and not closed.
/// Errors: KCC_ERR_NULL_ARGUMENT, KCC_ERR_BAD_DESC (bad level string or desc), KCC_ERR_NON_FINITE,
/// KCC_ERR_IO (write failed).
KCC_API kcc_status kcc_trace_begin(kcc_trace_writer *w, FILE *file, const char *level,
                           const kcc_character_desc *desc, const vec3 start);
/// The same into a caller buffer of `capacity` bytes (borrowed until kcc_trace_end). Running out of
/// room gives KCC_ERR_BUFFER_TOO_SMALL; the buffer is never overrun.
KCC_API kcc_status kcc_trace_begin_buffer(kcc_trace_writer *w, char *buffer, size_t capacity,
                                  const char *level, const kcc_character_desc *desc,
                                  const vec3 start);
/// Records the content hash of the level's triangles (kcc_level_hash of the level the trace names)
/// as a `level_hash` line, so that a replay on a level that has changed since is reported as such
/// (kcc_trace_check_level_hash) rather than as a divergence at some frame. Call it right after
/// kcc_trace_begin (KCC_ERR_BAD_DESC, not sticky, once anything else was written).
KCC_API kcc_status kcc_trace_level_hash(kcc_trace_writer *w, uint64_t level_hash);
/// Records one frame: the displacement passed to kcc_character_move, and the character and result
/// it produced (call right after the move). One line; no allocation. Every recording call returns
/// KCC_ERR_NULL_ARGUMENT for a writer that was never begun or has ended (sticky after the end) and
/// for NULL arguments (sticky: the trace would miss a step).
KCC_API kcc_status kcc_trace_record(kcc_trace_writer *w, const vec3 displacement, const kcc_character *ch,
                            const kcc_move_result *result);
/// Records a retune: the desc passed to kcc_character_set_desc and the status it returned. Only the
/// fields that differ from the trace's current tuning are written.
KCC_API kcc_status kcc_trace_set_desc(kcc_trace_writer *w, const kcc_character_desc *desc,
                              kcc_status status);
/// Records a re-initialisation (kcc_character_init with the current tuning at center, m), e.g. a
/// respawn. Written as another `start` line.
KCC_API kcc_status kcc_trace_restart(kcc_trace_writer *w, const vec3 center);
/// Writes a `# text` comment line (text without newlines).
KCC_API kcc_status kcc_trace_comment(kcc_trace_writer *w, const char *text);
/// Ends the trace with `end <frames>` (a trace without it is treated as truncated) and flushes the
/// FILE. Returns the writer's sticky status: KCC_OK when the whole trace was written. A world
/// trace's writer (kcc_world_trace_begin) writes `end <steps>`, detaches from the world and frees
/// what it allocated; after its world was destroyed it writes nothing and returns
/// KCC_ERR_NOT_FOUND (kcc_world_trace_begin).
KCC_API kcc_status kcc_trace_end(kcc_trace_writer *w);
/// Bytes written so far (the text length in buffer mode).
KCC_API size_t kcc_trace_writer_length(const kcc_trace_writer *w);

// ------------------------------------------------------------------------------ loading, replay

typedef enum kcc_trace_step_kind {
    KCC_TRACE_MOVE  = 0,   ///< `f` line: one kcc_character_move
    KCC_TRACE_SET   = 1,   ///< `set` line: one kcc_character_set_desc
    KCC_TRACE_START = 2    ///< `start` line after the header: kcc_character_init at a new centre
} kcc_trace_step_kind;

typedef enum kcc_trace_level_kind {
    KCC_TRACE_LEVEL_OBJ = 0,  ///< kcc_trace.level is a path to an OBJ file
    KCC_TRACE_LEVEL_GEN = 1,  ///< kcc_trace.level is a kcc_level_generate spec
    KCC_TRACE_LEVEL_HF  = 2   ///< world traces only: an `hf terrain seed=S size=N` heightfield
} kcc_trace_level_kind;

/// One step of a loaded trace. Read-only for callers.
typedef struct kcc_trace_step {
    kcc_trace_step_kind kind;
    uint32_t   line;              ///< 1-based line in the file
    bool       has_expected;      ///< the line states an expected outcome
    vec3       vec;               ///< MOVE: displacement (m, may be NaN/inf); START: centre (m)
    vec3       expected_position; ///< MOVE: m
    uint32_t   expected_flags;    ///< MOVE: KCC_MOVE_*
    kcc_status expected_status;   ///< SET: what kcc_character_set_desc returned
    uint32_t   set_fields;        ///< SET: bit i set when desc field i is given (see kcc_trace_desc_field)
    kcc_character_desc desc;      ///< SET: values of the given fields (others unused)
    uint32_t   cut_begin, cut_end;///< private: byte range of the expected outcome in text
} kcc_trace_step;

/// A parsed trace (kcc_trace_load / kcc_trace_parse; free with kcc_trace_free). Read-only.
typedef struct kcc_trace {
    char    *name;                ///< the file name used in messages
    kcc_trace_level_kind level_kind;
    char    *level;               ///< OBJ path (resolved against the trace's directory) or gen spec
    uint32_t level_line;
    bool     has_level_hash;      ///< the trace records its level's content hash
    uint64_t level_hash;          ///< kcc_level_hash of the level it was recorded on
    uint32_t level_hash_line;
    kcc_character_desc desc;      ///< tuning at the start
    vec3     start;               ///< m, initial centre
    kcc_trace_step *steps;
    uint32_t step_count;
    uint32_t frame_count;         ///< MOVE steps
    char    *text;                ///< private: the source text (kcc_trace_write copies it)
    size_t   text_length;
} kcc_trace;

/// Parses trace text (a UTF-8 byte order mark at the start is skipped). `name` (the file name, or
/// any label) prefixes every message and is the base for relative OBJ paths. On failure returns KCC_ERR_PARSE (malformed, truncated, bad number, missing
/// line or field), KCC_ERR_VERSION (unsupported version), KCC_ERR_NOT_FOUND (the OBJ file does not
/// exist), KCC_ERR_BAD_DESC (desc out of range) or KCC_ERR_OUT_OF_MEMORY, writes "name:LINE: what"
/// into err (if non-NULL) and leaves *out untouched. Allocates.
KCC_API kcc_status kcc_trace_parse(const char *text, size_t length, const char *name, kcc_trace **out,
                           char *err, size_t err_size);
/// Reads and parses a trace file (KCC_ERR_IO when it cannot be read; messages start with the path).
KCC_API kcc_status kcc_trace_load(const char *path, kcc_trace **out, char *err, size_t err_size);
/// Frees a trace. NULL is fine.
KCC_API void kcc_trace_free(kcc_trace *trace);

/// Loads or generates the trace's level (free with kcc_level_free) and checks it against the
/// trace's level_hash when it has one (kcc_trace_check_level_hash). Errors from the level reader
/// are passed on with the message prefixed by "name:LINE: level: ".
KCC_API kcc_status kcc_trace_load_level(const kcc_trace *trace, kcc_level *out_level, char *err,
                                size_t err_size);
/// kcc_trace_load_level, then builds the level's mesh (free with kcc_mesh_destroy).
KCC_API kcc_status kcc_trace_build_level(const kcc_trace *trace, kcc_mesh **out_mesh, char *err,
                                 size_t err_size);
/// KCC_OK when the trace records no level hash or records level_hash; otherwise
/// KCC_ERR_LEVEL_CHANGED (the level changed since the trace was recorded) with "name:LINE: level
/// 'L' has changed since the trace was recorded ..." in err. For callers that keep levels between
/// traces.
KCC_API kcc_status kcc_trace_check_level_hash(const kcc_trace *trace, uint64_t level_hash, char *err,
                                      size_t err_size);

/// What actually happened at one step of a replay.
typedef struct kcc_trace_outcome {
    vec3       position;   ///< m, character centre after the step
    uint32_t   flags;      ///< MOVE: result flags
    kcc_status status;     ///< SET: what kcc_character_set_desc returned
} kcc_trace_outcome;

/// Summary of a replay and its first divergence.
typedef struct kcc_trace_report {
    uint32_t steps;              ///< steps replayed (all of them)
    uint32_t frames;             ///< MOVE steps replayed
    uint32_t diverged;           ///< steps whose outcome did not match (0: the trace replays)
    float    max_error;          ///< m, largest |actual - expected| position component over frames
    /* the first divergence, valid when diverged > 0 */
    uint32_t step;               ///< index into trace->steps
    uint32_t frame;              ///< 0-based frame index (MOVE steps before it)
    uint32_t line;               ///< line in the file
    kcc_trace_step_kind kind;
    bool     missing_expected;   ///< the line had no expected outcome to compare against
    vec3     expected_position, actual_position;  ///< MOVE, m
    uint32_t expected_flags, actual_flags;        ///< MOVE
    kcc_status expected_status, actual_status;    ///< SET
} kcc_trace_report;

/// Replays a trace through a fresh character on mesh (the trace's level, see kcc_trace_build_level).
/// tolerance (m): 0 compares positions bit for bit; otherwise each component may differ by up to
/// tolerance. Flags and retune statuses always compare exactly. Steps without an expected outcome
/// count as divergences (missing_expected). outcomes (NULL, or trace->step_count entries) receives
/// what happened at every step. Returns KCC_OK when the replay ran (check report.diverged);
/// KCC_ERR_NULL_ARGUMENT, KCC_ERR_NON_FINITE (tolerance NaN/inf or negative) or the status of
/// kcc_character_init otherwise. Never allocates.
KCC_API kcc_status kcc_trace_replay(const kcc_trace *trace, const kcc_mesh *mesh, float tolerance,
                            kcc_trace_outcome *outcomes, kcc_trace_report *out);

/// Formats the first divergence of a report as one line: "name:LINE: frame N: expected position
/// (x y z) flags F, got (x y z) flags G". Returns the length it needed (snprintf-style).
KCC_API int kcc_trace_format_divergence(const kcc_trace *trace, const kcc_trace_report *report, char *buf,
                                size_t size);

/// Writes the trace's text with every expected outcome replaced by outcomes (from kcc_trace_replay;
/// NULL keeps the stored ones). Everything else (comments, spacing, displacement text) is copied
/// unchanged. Errors: KCC_ERR_NULL_ARGUMENT, KCC_ERR_IO.
KCC_API kcc_status kcc_trace_write(const kcc_trace *trace, const kcc_trace_outcome *outcomes, FILE *out);

// ---------------------------------------------------------------------------------- world traces

/// Starts recording `world` into a world trace (`kcc-trace 2`, docs/traces.md): from this call on,
/// every call that changes the world is written as it happens (bodies added, removed, placed,
/// given targets and layers, characters added, removed, teleported, retuned and given layers,
/// origin shifts, and at each kcc_world_step the displacements that changed, then the outcomes
/// that changed: every character's position and flags, and the sensor events). Nothing is needed per frame from the game. The world must be empty (no body, no
/// character) and not already recorded (KCC_ERR_BAD_DESC). Name every mesh before its first body
/// is added (kcc_world_trace_level). Allocates once here (tables over the world's capacities);
/// recording never allocates. The FILE is borrowed until kcc_trace_end. The world is borrowed
/// until kcc_trace_end or kcc_world_destroy: destroyed first, it writes out the lines the writer
/// gathered and lets go of the writer, whose status becomes KCC_ERR_NOT_FOUND (sticky: its later
/// calls and kcc_trace_end return it; the trace has no `end` line and reads as truncated). A
/// writer begun again before its kcc_trace_end no longer records the world: the world records
/// nothing more, frees the tables allocated here at its next recorded call or kcc_world_destroy
/// (until then it still reads the writer, which must stay valid), and can be recorded again.
/// Errors: KCC_ERR_NULL_ARGUMENT, KCC_ERR_BAD_DESC, KCC_ERR_OUT_OF_MEMORY, KCC_ERR_IO. A body
/// added with a mesh that was never named makes the writer's status KCC_ERR_NOT_FOUND (sticky:
/// kcc_trace_end reports it).
KCC_API kcc_status kcc_world_trace_begin(kcc_trace_writer *w, FILE *file, kcc_world *world);
/// The same into a caller buffer (KCC_ERR_BUFFER_TOO_SMALL when it is full; never overrun).
KCC_API kcc_status kcc_world_trace_begin_buffer(kcc_trace_writer *w, char *buffer, size_t capacity,
                                                kcc_world *world);
/// Says once per mesh which level it is: `level` is `obj <path>` or `gen <spec>` as for
/// kcc_trace_begin, `hf terrain seed=S size=N` for a heightfield of the terrain generator's
/// heights (kcc_level_terrain_heights(S, N), N in 16..1024, built by kcc_heightfield_build), or
/// `hf file <path>` for any heightfield written with kcc_trace_write_heightfield (the path as an
/// OBJ level's: relative to the trace's directory when replayed). The replay rebuilds a heightfield
/// as a heightfield, so its answers and moves are the recorded ones bit for bit. `level_hash` is the hash of the level's triangles: kcc_level_hash of the level, or
/// kcc_trace_mesh_hash of the mesh (the same number for a mesh built from a level); a replay on a
/// level that hashes otherwise is reported as a changed level. A bad level string (a malformed
/// `hf` spec included) or naming a mesh twice is KCC_ERR_BAD_DESC (not sticky); more than
/// KCC_WORLD_TRACE_LEVELS meshes KCC_ERR_TOO_LARGE.
KCC_API kcc_status kcc_world_trace_level(kcc_trace_writer *w, const kcc_mesh *mesh,
                                         const char *level, uint64_t level_hash);
/// The content hash of a mesh's triangles (kcc_mesh_triangle in id order, a heightfield's holes
/// skipped), computed as kcc_level_hash computes a level's: for a mesh built from a level it is
/// that level's kcc_level_hash. For naming heightfields (and any mesh) in kcc_world_trace_level.
/// NULL hashes as an empty level.
KCC_API uint64_t kcc_trace_mesh_hash(const kcc_mesh *mesh);
/// Writes heightfield mesh `heightfield` (kcc_heightfield_build's) to a text file at path that a
/// world trace names `hf file <path>` (docs/traces.md, "Heightfield levels"): its size, spacing,
/// origin, the heights as built and its holes, every number exact. Errors: KCC_ERR_NULL_ARGUMENT,
/// KCC_ERR_BAD_DESC (a tree mesh, not a heightfield), KCC_ERR_IO.
KCC_API kcc_status kcc_trace_write_heightfield(const kcc_mesh *heightfield, const char *path);
/// Reads a file kcc_trace_write_heightfield wrote and builds its heightfield: the same triangles,
/// corner for corner (the same kcc_trace_mesh_hash). Mistakes are "path:LINE: what" messages in
/// err (KCC_ERR_PARSE); KCC_ERR_IO when it cannot be read, KCC_ERR_TOO_LARGE for a grid beyond
/// 2^30 triangles, the builder's status when the grid is not one kcc_heightfield_build takes.
KCC_API kcc_status kcc_trace_read_heightfield(const char *path, kcc_mesh **out_mesh, char *err,
                                              size_t err_size);

/// A parsed world trace (kcc_world_trace_load; free with kcc_world_trace_free). Opaque.
typedef struct kcc_world_trace kcc_world_trace;

/// Parses world trace text; `name` prefixes messages and is the base of relative OBJ paths. On
/// failure writes "name:LINE: what" into err and returns KCC_ERR_PARSE, KCC_ERR_VERSION (not a
/// world trace), KCC_ERR_NOT_FOUND (an OBJ level missing) or KCC_ERR_OUT_OF_MEMORY. Allocates.
KCC_API kcc_status kcc_world_trace_parse(const char *text, size_t length, const char *name,
                                         kcc_world_trace **out, char *err, size_t err_size);
/// Reads and parses a world trace file (KCC_ERR_IO when it cannot be read).
KCC_API kcc_status kcc_world_trace_load(const char *path, kcc_world_trace **out, char *err,
                                        size_t err_size);
/// Frees a world trace. NULL is fine.
KCC_API void kcc_world_trace_free(kcc_world_trace *trace);
/// Steps the trace records.
KCC_API uint32_t kcc_world_trace_step_count(const kcc_world_trace *trace);

/// The world a world trace records after one step, for tools that show a trace rather than replay
/// it (the demo's viewer draws one). Arrays are indexed by the trace's numbers less one (body 1 is
/// poses[0]) and are valid only during the kcc_world_trace_frames callback that receives them.
typedef struct kcc_world_trace_frame {
    uint32_t step;                ///< 0: what the lines before the first step leave; S: after step S
    uint32_t body_count;          ///< bodies the trace numbers
    const float (*poses)[7];      ///< position, rotation (x y z w); NaN position: not in the world
    uint32_t character_count;     ///< characters the trace numbers
    const vec3 *centres;          ///< m; NaN: not in the world
    const vec3 *half_extents;     ///< m, as the character's last `character` or `retune` line sets
    const uint32_t *flags;        ///< KCC_MOVE_* of the step's recorded outcome (0 before one)
} kcc_world_trace_frame;

typedef void kcc_world_trace_frame_fn(const kcc_world_trace_frame *frame, void *user);

/// Calls fn for frame 0 and after every recorded step, in order. A step's frame holds its recorded
/// outcomes; a kinematic body is at its `target` from the step after the target line on (as the
/// world moves it), a `place` sets a body's pose at once and drops its target, a `teleport` a
/// character's centre, and a `shift` moves every pose and centre by -new_origin (as
/// kcc_world_shift_origin does). Allocates the frame's arrays once (KCC_ERR_OUT_OF_MEMORY);
/// KCC_ERR_NULL_ARGUMENT for a NULL trace or fn.
KCC_API kcc_status kcc_world_trace_frames(const kcc_world_trace *trace, kcc_world_trace_frame_fn *fn,
                                          void *user);
/// Body `body` (the trace's number less one) as its `body` line adds it: the index of its level
/// (for kcc_world_trace_level_spec), kinematic, sensor. false (nothing written) when the trace has no
/// such body. Any out pointer may be NULL.
KCC_API bool kcc_world_trace_body(const kcc_world_trace *trace, uint32_t body, uint32_t *level,
                                  bool *kinematic, bool *sensor);
/// Level `level` (the trace's number less one): its kind and its OBJ path (resolved against the
/// trace's directory) or its generator or heightfield spec; NULL when the trace has no such level.
KCC_API const char *kcc_world_trace_level_spec(const kcc_world_trace *trace, uint32_t level,
                                               kcc_trace_level_kind *kind);
/// How many levels, bodies and characters the trace numbers (the highest numbers its lines use);
/// any out pointer may be NULL.
KCC_API void kcc_world_trace_counts(const kcc_world_trace *trace, uint32_t *levels, uint32_t *bodies,
                                    uint32_t *characters);
/// The format version of the trace file at path (its `kcc-trace N` line): 1 single-character,
/// 2 world; 0 when it cannot be read or has no such line.
KCC_API uint32_t kcc_trace_file_version(const char *path);

/// How a world trace is replayed.
typedef struct kcc_world_replay_desc {
    float    tolerance;      ///< m: 0 compares positions bit for bit (default)
    /// The world's job system for the replay (kcc_world_desc's fields; default 1 worker, inline).
    uint32_t worker_count;
    void *(*enqueue_task)(kcc_task_fn *task, uint32_t item_count, uint32_t min_range,
                          void *task_context, void *user_context);
    void  (*finish_task)(void *user_task, void *user_context);
    void  *user_task_context;
    /// Non-NULL: the replay is recorded into this FILE as a new world trace with the replayed
    /// outcomes (what kcc-replay --update writes). Default NULL.
    FILE  *record;
} kcc_world_replay_desc;

/// The defaults named in kcc_world_replay_desc.
KCC_API kcc_world_replay_desc kcc_world_replay_default_desc(void);

/// Summary of a world replay and its first divergence.
typedef struct kcc_world_trace_report {
    uint32_t steps;          ///< steps replayed
    uint32_t diverged;       ///< outcomes that did not match (character states and sensor lists)
    float    max_error;      ///< m, largest |actual - expected| position component
    /* the first divergence, valid when diverged > 0 */
    uint32_t step;           ///< 1-based step number
    uint32_t line;           ///< the line of the expected outcome (or of the step)
    uint32_t character;      ///< the trace's character number (0: the sensor events differ)
    vec3     expected_position, actual_position;  ///< m
    uint32_t expected_flags, actual_flags;
    uint32_t expected_events, actual_events;      ///< sensor events of that step (character 0)
} kcc_world_trace_report;

/// Builds the trace's levels (checked against their recorded hashes), creates the world, replays
/// every recorded call and step, and compares every live character's position (within tolerance)
/// and flags (exactly) after every step, and the step's sensor events, with the trace's. Returns
/// KCC_OK when the replay ran (check report.diverged); otherwise the status of what stopped it
/// (KCC_ERR_LEVEL_CHANGED for a level that hashes otherwise, a level reader's status, a recorded
/// call the world refused, KCC_ERR_NON_FINITE for a bad tolerance) with "name:LINE: what" in err.
/// Allocates the levels and the world, and frees them before returning; nothing per step.
KCC_API kcc_status kcc_world_trace_replay(const kcc_world_trace *trace,
                                          const kcc_world_replay_desc *desc,
                                          kcc_world_trace_report *out, char *err, size_t err_size);
/// Formats the first divergence as one line: "name:LINE: step S character C: expected position
/// (x y z) flags F, actual (x y z) flags G" (or the sensor events' counts). snprintf-style.
KCC_API int kcc_world_trace_format_divergence(const kcc_world_trace *trace,
                                              const kcc_world_trace_report *report, char *buf,
                                              size_t size);

/// What a shrunk trace must still do (kcc-replay --shrink-check).
typedef enum kcc_world_shrink_check {
    KCC_WORLD_SHRINK_DIVERGENCE = 0,   ///< diverge first at the same recorded outcome line
    KCC_WORLD_SHRINK_PENETRATION,      ///< a character's box overlaps a solid body by more than
                                       ///< 1 cm (its box shrunk by 1 cm still overlaps one)
    KCC_WORLD_SHRINK_FLAG,             ///< a character's step result carries `flag`
} kcc_world_shrink_check;

typedef struct kcc_world_shrink_desc {
    kcc_world_shrink_check check;      ///< default KCC_WORLD_SHRINK_DIVERGENCE
    uint32_t flag;                     ///< KCC_WORLD_SHRINK_FLAG: a KCC_MOVE_* bit
    float    tolerance;                ///< m, of the divergence (as kcc_world_trace_replay's)
    uint32_t max_replays;              ///< the search stops after this many replays; 0: 2000
} kcc_world_shrink_desc;

typedef struct kcc_world_shrink_report {
    uint32_t steps[2], characters[2], bodies[2];   ///< before and after
    uint32_t replays;                              ///< replays the search ran
} kcc_world_shrink_report;

/// Delta debugging over a world trace: cuts the steps after the first one that fails, then
/// removes characters (every line naming one), bodies, and runs of steps (a step with its targets
/// and outcomes) as long as the rest still fails the same way: for a divergence, the first
/// divergence is at the same recorded outcome line (so the cut trace shows the same difference,
/// not one the cut made); for the other checks, any character trips it. Writes the smaller trace
/// (bodies, characters and steps numbered again; every value written out) to `out`. Errors:
/// KCC_ERR_BAD_DESC (the trace does not fail the check: nothing to shrink), the replay's errors
/// with "name:LINE: what" in err, KCC_ERR_IO. Allocates; replays many times (report->replays).
KCC_API kcc_status kcc_world_trace_shrink(const kcc_world_trace *trace,
                                          const kcc_world_shrink_desc *desc, FILE *out,
                                          kcc_world_shrink_report *report, char *err,
                                          size_t err_size);

// --------------------------------------------------------------------------- in a user's tests

/// A trace as one check in a test suite: loads the trace at `path`, builds its level (checked
/// against its level_hash), replays it and returns true when every recorded outcome is met.
/// What must hold:
/// - every frame's position within `tolerance` of the expected one, per component (m; 0 compares
///   the bits, so -0 and 0 differ; NaN or negative is refused);
/// - every frame's flags and every retune's status exactly, whatever the tolerance;
/// - every frame and retune states an expected outcome, and every restart succeeds.
/// Otherwise returns false with one line in `message`: "file:line: what diverged or failed" (the
/// first diverging step as kcc_trace_format_divergence writes it, or the loader's message: an
/// unreadable or malformed file, a missing level, a level changed since recording, a trace format
/// this library does not read). `message` may be NULL or `message_size` 0; a longer line is cut to
/// fit, always NUL-terminated. Never aborts or prints. Reads single-character traces
/// (`kcc-trace 1`) and world traces (`kcc-trace 2`, replayed with kcc_world_trace_replay on one
/// worker: every live character's position and flags after every step, and the sensor events).
/// Allocates (the trace, its levels, a world) and frees everything before returning; keeps no
/// state between calls.
KCC_API bool kcc_trace_check_file(const char *path, float tolerance, char *message,
                                  size_t message_size);

// ------------------------------------------------------------------------------------- helpers

/// Writes v so that kcc_trace_text_to_float reads back the same bits ("%.9g", '.' decimal point;
/// -0 stays -0, subnormals are exact; NaN is "nan", infinities "inf"/"-inf"). out has
/// KCC_TRACE_FLOAT_CHARS bytes. Returns the length.
KCC_API int kcc_trace_float_to_text(float v, char *out);
/// Parses one whole number token (no surrounding text): decimal and C hex floats, correctly rounded
/// whatever the locale, and nan/inf; false on anything else or on overflow to infinity from finite
/// digits (out untouched).
KCC_API bool kcc_trace_text_to_float(const char *text, float *out);
/// Flag names joined by '|', e.g. "ON_GROUND|SLID"; "-" when zero; unknown bits as hex.
KCC_API int kcc_trace_flags_to_text(uint32_t flags, char *out, size_t size);
/// Parses what kcc_trace_flags_to_text writes (names, hex numbers, '-'), with any blanks around each
/// '|' ("ON_GROUND | SLID"). False on unknown names or an empty one.
KCC_API bool kcc_trace_text_to_flags(const char *text, uint32_t *out);
/// The name of a status as written in traces ("KCC_OK", "KCC_ERR_OVERLAP", ...).
KCC_API const char *kcc_trace_status_name(kcc_status s);
/// The name of desc field i in `desc`/`set` lines (half_extents, step_height, ...), NULL past the end.
KCC_API const char *kcc_trace_desc_field(uint32_t i);

#ifdef __cplusplus
}
#endif
#endif
