/* world_trace_frames.c: what a parsed world trace records, read without replaying it: the world
 * after each step as its lines leave it (kcc_world_trace_frames), its bodies and its levels. For
 * tools that show a trace; kcc_world_trace_replay is the one that checks it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "world_trace_internal.h"

/* The frame's arrays and what the lines so far leave beside them. */
typedef struct frame_state {
    kcc_world_trace_frame frame;
    float    (*poses)[7];
    float    (*targets)[7];    /* a kinematic body's pose after the next step */
    bool      *has_target;
    vec3      *centres, *half_extents;
    uint32_t  *flags;
} frame_state;

static void frame_state_free(frame_state *s)
{
    free(s->poses);
    free(s->targets);
    free(s->has_target);
    free(s->centres);
    free(s->half_extents);
    free(s->flags);
}

static kcc_status frame_state_init(frame_state *s, const kcc_world_trace *t)
{
    const size_t bodies = (size_t)t->body_count + 1, characters = (size_t)t->character_count + 1;
    memset(s, 0, sizeof *s);
    s->poses = malloc(bodies * sizeof *s->poses);
    s->targets = malloc(bodies * sizeof *s->targets);
    s->has_target = calloc(bodies, sizeof *s->has_target);
    s->centres = malloc(characters * sizeof *s->centres);
    s->half_extents = calloc(characters, sizeof *s->half_extents);
    s->flags = calloc(characters, sizeof *s->flags);
    if (!s->poses || !s->targets || !s->has_target || !s->centres || !s->half_extents || !s->flags) {
        frame_state_free(s);
        return KCC_ERR_OUT_OF_MEMORY;
    }
    for (size_t b = 0; b < bodies; ++b)
        s->poses[b][0] = NAN;
    for (size_t c = 0; c < characters; ++c)
        s->centres[c][0] = NAN;
    s->frame = (kcc_world_trace_frame){0, t->body_count, (const float(*)[7])s->poses, t->character_count,
                                       (const vec3 *)s->centres, (const vec3 *)s->half_extents, s->flags};
    return KCC_OK;
}

/* Every live pose, pending target and centre moved by -origin, as kcc_world_shift_origin does. */
static void shift_all(frame_state *s, const float origin[3])
{
    for (uint32_t b = 0; b < s->frame.body_count; ++b)
        for (int k = 0; k < 3 && !isnan(s->poses[b][0]); ++k) {
            s->poses[b][k] = s->poses[b][k] - origin[k];
            s->targets[b][k] = s->targets[b][k] - origin[k];
        }
    for (uint32_t c = 0; c < s->frame.character_count; ++c)
        for (int k = 0; k < 3 && !isnan(s->centres[c][0]); ++k)
            s->centres[c][k] = s->centres[c][k] - origin[k];
}

/* The kinematic bodies given a target reach it: the step op. */
static void reach_targets(frame_state *s)
{
    for (uint32_t b = 0; b < s->frame.body_count; ++b)
        if (s->has_target[b]) {
            memcpy(s->poses[b], s->targets[b], sizeof s->poses[b]);
            s->has_target[b] = false;
        }
}

static void apply_op(frame_state *s, const kcc_world_trace *t, const wt_op *op)
{
    const uint32_t i = op->number - 1;
    switch ((wt_op_kind)op->kind) {
    case WT_BODY:
    case WT_PLACE:
        memcpy(s->poses[i], op->v, sizeof s->poses[i]);
        s->has_target[i] = false;
        break;
    case WT_TARGET:
        memcpy(s->targets[i], op->v, sizeof s->targets[i]);
        s->has_target[i] = true;
        break;
    case WT_REMOVE_BODY:
        s->poses[i][0] = NAN;
        s->has_target[i] = false;
        break;
    case WT_CHARACTER:
        s->flags[i] = 0;
        memcpy(s->half_extents[i], t->descs[op->arg].half_extents, sizeof s->half_extents[i]);
        /* fall through */
    case WT_TELEPORT:
        memcpy(s->centres[i], op->v, sizeof s->centres[i]);
        break;
    case WT_RETUNE:
        memcpy(s->half_extents[i], t->descs[op->arg].half_extents, sizeof s->half_extents[i]);
        break;
    case WT_REMOVE_CHARACTER:
        s->centres[i][0] = NAN;
        break;
    case WT_OUTCOME:
        memcpy(s->centres[i], op->v, sizeof s->centres[i]);
        s->flags[i] = op->bits;   /* the parse resolves a line without flags to the last ones */
        break;
    case WT_SHIFT:
        shift_all(s, op->v);
        break;
    case WT_STEP:
        reach_targets(s);
        break;
    default:   /* layers, displacements (the outcomes carry their positions), sensor events */
        break;
    }
}

kcc_status kcc_world_trace_frames(const kcc_world_trace *trace, kcc_world_trace_frame_fn *fn, void *user)
{
    if (!trace || !fn)
        return KCC_ERR_NULL_ARGUMENT;
    frame_state s;
    kcc_status st = frame_state_init(&s, trace);
    if (st != KCC_OK)
        return st;
    uint32_t pending = 0;   /* the step whose outcome lines are being read (0: none) */
    bool started = false;   /* frame 0 given */
    for (uint32_t i = 0; i < trace->op_count; ++i) {
        const wt_op *op = &trace->ops[i];
        if (pending && op->kind != WT_OUTCOME && op->kind != WT_SENSOR) {
            s.frame.step = pending;   /* the step's outcome lines are all read */
            fn(&s.frame, user);
            pending = 0;
        }
        if (op->kind == WT_STEP && !started) {
            fn(&s.frame, user);       /* frame 0: the lines before the first step */
            started = true;
        }
        apply_op(&s, trace, op);
        pending = op->kind == WT_STEP ? op->number : pending;
    }
    if (pending) {
        s.frame.step = pending;
        fn(&s.frame, user);
    } else if (!started) {
        fn(&s.frame, user);
    }
    frame_state_free(&s);
    return KCC_OK;
}

bool kcc_world_trace_body(const kcc_world_trace *trace, uint32_t body, uint32_t *level, bool *kinematic,
                          bool *sensor)
{
    for (uint32_t i = 0; trace && i < trace->op_count; ++i) {
        const wt_op *op = &trace->ops[i];
        if (op->kind != WT_BODY || op->number != body + 1u)
            continue;
        if (level)
            *level = op->arg - 1u;
        if (kinematic)
            *kinematic = op->kinematic;
        if (sensor)
            *sensor = op->flag;
        return true;
    }
    return false;
}

const char *kcc_world_trace_level_spec(const kcc_world_trace *trace, uint32_t level, kcc_trace_level_kind *kind)
{
    if (!trace || level >= trace->level_count)
        return NULL;
    if (kind)
        *kind = trace->levels[level].kind;
    return trace->levels[level].path;
}

void kcc_world_trace_counts(const kcc_world_trace *trace, uint32_t *levels, uint32_t *bodies,
                            uint32_t *characters)
{
    if (levels)
        *levels = trace ? trace->level_count : 0;
    if (bodies)
        *bodies = trace ? trace->body_count : 0;
    if (characters)
        *characters = trace ? trace->character_count : 0;
}
