/* demo/world_view.h: a world trace (kcc-trace 2) read for showing it: every step's character
 * positions and flags and body poses, and the level each body uses (the viewer's P, the headless
 * picture of kcc-demo --headless --trace), laid out from the library's parse (kcc_world_trace_load)
 * and its recorded frames (kcc_world_trace_frames); kcc_world_trace_replay is what checks a trace.
 * Allocates at load only. */
#ifndef KCC_DEMO_WORLD_VIEW_H
#define KCC_DEMO_WORLD_VIEW_H

#include "app.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct demo_world_body {
    uint32_t level;       ///< index into levels
    bool     kinematic, sensor;
} demo_world_body;

typedef struct demo_world_view {
    uint32_t         steps;           ///< steps recorded; rows 0..steps below (row 0: before the first
                                      ///< step, its targets given)
    uint32_t         character_count; ///< characters the trace numbers (1..count, stored from 0)
    uint32_t         body_count;
    uint32_t         level_count;
    kcc_level       *levels;          ///< each level's triangles (empty when it could not be read)
    char           (*level_names)[KCC_TRACE_LEVEL_MAX];  ///< "obj PATH" (resolved) / "gen SPEC"
    demo_world_body *bodies;
    float           *poses;           ///< (steps + 1) x body_count x 7: position, rotation (x y z w);
                                      ///< NaN position: not in the world at that step
    float           *centres;         ///< (steps + 1) x character_count x 3; NaN: not in the world
    uint32_t        *flags;           ///< (steps + 1) x character_count: the move flags
    float           *half_extents;    ///< character_count x 3, m
} demo_world_view;

/// Reads the world trace at path: kcc_world_trace_load's statuses and messages ("path:LINE: what"),
/// KCC_ERR_OUT_OF_MEMORY; a level that cannot be drawn stays empty (err says which, the status
/// stays KCC_OK).
kcc_status demo_world_view_load(const char *path, demo_world_view *out, char *err, size_t err_size);
void demo_world_view_free(demo_world_view *v);

/// Body b's pose after step s (7 floats), NULL when it is not in the world then.
const float *demo_world_view_pose(const demo_world_view *v, uint32_t step, uint32_t body);
/// Character c's centre after step s, NULL when it is not in the world then.
const float *demo_world_view_centre(const demo_world_view *v, uint32_t step, uint32_t character);
/// The trace's static level: its largest static solid body (UINT32_MAX: none).
uint32_t demo_world_view_level_body(const demo_world_view *v);
/// Transforms level l's vertices by a pose into out (3 floats a vertex).
void demo_world_view_place(const demo_world_view *v, uint32_t level, const float pose[7], float *out);
/// Body b after step s placed into out (its level's vertices at its pose, 3 floats a vertex) with the
/// box around them; false (nothing written) when it is not in the world then or its level is empty.
bool demo_world_view_place_body(const demo_world_view *v, uint32_t step, uint32_t body, float *out,
                                float box[2][3]);

#ifdef __cplusplus
}
#endif
#endif
