/* world_trace_replay.c: replays a world trace (docs/traces.md, "World traces"): builds its levels
 * (checked against their recorded hashes), creates the world, runs every recorded call and step,
 * and compares every live character's position and flags, and each step's sensor events, with the
 * recorded ones. The replay of a subset of the operations is the shrinker's test. Allocates the
 * levels, the world and the tables before the first step; nothing per step. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trace_internal.h"
#include "world_trace_internal.h"

kcc_world_replay_desc kcc_world_replay_default_desc(void)
{
    kcc_world_replay_desc d;
    memset(&d, 0, sizeof d);
    d.worker_count = 1;
    return d;
}

/// What the replay knows of one character number: its id, and what the trace expects of it.
typedef struct replay_character {
    uint32_t id;               ///< 0: not live
    uint32_t last_id;          ///< its id while it was live (sensor events after its removal)
    float    displacement[3];  ///< m, given at every step
    float    expected[3];      ///< m
    uint32_t flags;
    uint32_t line;             ///< where the expectation was written (first: its `character` line)
    float    half_extents[3];  ///< m, of its box (the penetration check)
} replay_character;

typedef struct replay {
    const kcc_world_trace *trace;
    const bool            *keep;
    kcc_wt_check          *check;        ///< NULL: only the recorded outcomes are checked
    float                  tolerance;
    kcc_world             *world;
    kcc_mesh             **meshes;
    uint64_t              *hashes;       ///< per level: its triangles' kcc_level_hash
    uint32_t              *body_ids;     ///< per body number
    replay_character      *characters;   ///< per character number
    uint32_t               step;         ///< steps run
    kcc_world_trace_report report;
    char                  *err;
    size_t                 err_size;
} replay;

static kcc_status replay_fail(replay *r, uint32_t line, kcc_status st, const char *what)
{
    if (r->err && r->err_size)
        snprintf(r->err, r->err_size, "%s:%u: %s: %s", r->trace->name, (unsigned)line, what,
                 kcc_status_str(st));
    return st;
}

// ------------------------------------------------------------------------------------- levels

/// Builds level l's mesh into *out and its triangles' hash into *out_hash; on failure writes the
/// reader's message (if any) into e.
static kcc_status level_mesh(const wt_level *l, kcc_mesh **out, uint64_t *out_hash, char *e,
                             size_t e_size)
{
    if (l->kind == KCC_TRACE_LEVEL_HF) {
        kcc_status st = l->hf.from_file ? kcc_trace_read_heightfield(l->path, out, e, e_size)
                                        : kcc_wt_build_hf(&l->hf, out);
        *out_hash = st == KCC_OK ? kcc_trace_mesh_hash(*out) : 0;
        return st;
    }
    kcc_level level;
    memset(&level, 0, sizeof level);
    kcc_status st = l->kind == KCC_TRACE_LEVEL_OBJ ? kcc_level_load_obj(l->path, &level, e, e_size)
                                                   : kcc_level_generate(l->path, &level, e, e_size);
    if (st != KCC_OK)
        return st;
    *out_hash = kcc_level_hash(&level);
    st = kcc_level_build_mesh(&level, out);
    kcc_level_free(&level);
    if (st != KCC_OK)
        snprintf(e, e_size, "cannot build its mesh: %s", kcc_status_str(st));
    return st;
}

/// Builds level i's mesh, checked against its recorded hash.
static kcc_status build_level(replay *r, uint32_t i)
{
    const wt_level *l = &r->trace->levels[i];
    char e[512] = "";
    uint64_t hash = 0;
    kcc_status st = level_mesh(l, &r->meshes[i], &hash, e, sizeof e);
    if (st != KCC_OK) {
        if (r->err && r->err_size)
            snprintf(r->err, r->err_size, "%s:%u: level: %s", r->trace->name, (unsigned)l->line,
                     e[0] ? e : kcc_status_str(st));
        return st;
    }
    r->hashes[i] = hash;
    if (l->has_hash && hash != l->hash) {
        if (r->err && r->err_size)
            snprintf(r->err, r->err_size, "%s:%u: level '%s' has changed since the trace was "
                     "recorded (its triangles hash to %016llx, the trace recorded %016llx): "
                     "re-record the trace, or delete its level_hash line to replay it on the new "
                     "level", r->trace->name, (unsigned)l->hash_line, l->path,
                     (unsigned long long)hash, (unsigned long long)l->hash);
        return KCC_ERR_LEVEL_CHANGED;
    }
    return KCC_OK;
}

static void free_replay(replay *r)
{
    kcc_world_destroy(r->world);
    for (uint32_t i = 0; r->meshes && i < r->trace->level_count; ++i)
        kcc_mesh_destroy(r->meshes[i]);
    free(r->meshes);
    free(r->hashes);
    free(r->body_ids);
    free(r->characters);
}

/// The levels, the world (with the replay's job system) and the tables.
static kcc_status setup(replay *r, const kcc_world_replay_desc *d)
{
    const kcc_world_trace *t = r->trace;
    r->meshes = calloc(t->level_count + 1, sizeof *r->meshes);
    r->hashes = calloc(t->level_count + 1, sizeof *r->hashes);
    r->body_ids = calloc(t->body_count + 1, sizeof *r->body_ids);
    r->characters = calloc(t->character_count + 1, sizeof *r->characters);
    if (!r->meshes || !r->hashes || !r->body_ids || !r->characters)
        return replay_fail(r, 1, KCC_ERR_OUT_OF_MEMORY, "replay");
    for (uint32_t i = 0; i < t->level_count; ++i) {
        kcc_status st = build_level(r, i);
        if (st != KCC_OK)
            return st;
    }
    kcc_world_desc wd = t->desc;
    wd.worker_count = d->worker_count;
    wd.enqueue_task = d->enqueue_task;
    wd.finish_task = d->finish_task;
    wd.user_task_context = d->user_task_context;
    kcc_status st = kcc_world_create(&wd, &r->world);
    return st == KCC_OK ? KCC_OK : replay_fail(r, 2, st, "world: kcc_world_create refused it");
}

// ---------------------------------------------------------------------------------- the calls

static kcc_transform transform_of(const wt_op *op)
{
    kcc_transform t;
    memcpy(t.position, op->v, sizeof t.position);
    memcpy(t.rotation, op->v + 3, sizeof t.rotation);
    return t;
}

/// Runs one recorded call (not a step or an outcome) on the world.
static kcc_status run_call(replay *r, const wt_op *op)
{
    const kcc_transform t = transform_of(op);
    replay_character *c = &r->characters[op->number];
    switch ((wt_op_kind)op->kind) {
    case WT_BODY: {
        kcc_body_desc bd = kcc_body_default_desc();
        bd.kind = op->kinematic ? KCC_BODY_KINEMATIC : KCC_BODY_STATIC;
        bd.transform = t;
        bd.sensor = op->flag;
        bd.layers = op->bits;
        return kcc_world_add_body(r->world, r->meshes[op->arg - 1], &bd, &r->body_ids[op->number]);
    }
    case WT_REMOVE_BODY: return kcc_world_remove_body(r->world, r->body_ids[op->number]);
    case WT_PLACE: return kcc_world_set_body_transform(r->world, r->body_ids[op->number], &t);
    case WT_TARGET: return kcc_world_move_body(r->world, r->body_ids[op->number], &t);
    case WT_BODY_LAYERS: return kcc_world_set_body_layers(r->world, r->body_ids[op->number], op->bits);
    case WT_CHARACTER:
        memset(c, 0, sizeof *c);
        memcpy(c->expected, op->v, sizeof c->expected);
        c->line = op->line;
        memcpy(c->half_extents, r->trace->descs[op->arg].half_extents, sizeof c->half_extents);
        return kcc_world_add_character(r->world, &r->trace->descs[op->arg], op->v, &c->id);
    case WT_REMOVE_CHARACTER: {
        kcc_status st = kcc_world_remove_character(r->world, c->id);
        c->last_id = c->id;
        c->id = 0;
        return st;
    }
    case WT_TELEPORT: return kcc_world_set_character_position(r->world, c->id, op->v);
    case WT_RETUNE:
        memcpy(c->half_extents, r->trace->descs[op->arg].half_extents, sizeof c->half_extents);
        return kcc_world_set_character_desc(r->world, c->id, &r->trace->descs[op->arg]);
    case WT_CHARACTER_LAYERS: return kcc_world_set_character_layers(r->world, c->id, op->bits, op->arg);
    case WT_DISPLACE: memcpy(c->displacement, op->v, sizeof c->displacement); return KCC_OK;
    case WT_SHIFT: return kcc_world_shift_origin(r->world, op->v);
    default: return KCC_OK;
    }
}

// ---------------------------------------------------------------------------- checking a step

/// Notes a divergence (the first one in full).
static void diverge(replay *r, uint32_t line, uint32_t number, const float *actual, uint32_t flags)
{
    kcc_world_trace_report *rep = &r->report;
    if (rep->diverged++ > 0)
        return;
    rep->step = r->step;
    rep->line = line;
    rep->character = number;
    if (number == 0)
        return;
    const replay_character *c = &r->characters[number];
    memcpy(rep->expected_position, c->expected, sizeof rep->expected_position);
    memcpy(rep->actual_position, actual, sizeof rep->actual_position);
    rep->expected_flags = c->flags;
    rep->actual_flags = flags;
}

/// Whether the character trips the check a shrink keeps: its box, shrunk by
/// KCC_WT_PENETRATION_DEPTH on every side, overlaps a solid body (penetration), or its result
/// carries the flag.
static bool check_trips(const kcc_wt_check *check, const kcc_world *world,
                        const kcc_character_state *s, const kcc_move_result *res, const float *half)
{
    if (check->kind == KCC_WORLD_SHRINK_FLAG)
        return (res->flags & check->flag) != 0;
    if (check->kind != KCC_WORLD_SHRINK_PENETRATION)
        return false;
    vec3 box[2];
    for (int k = 0; k < 3; ++k) {
        const float h = half[k] - KCC_WT_PENETRATION_DEPTH;
        box[0][k] = s->position[k] - (h > 0.0f ? h : 0.0f);
        box[1][k] = s->position[k] + (h > 0.0f ? h : 0.0f);
    }
    return kcc_world_overlap_aabb(world, (const vec3 *)box, KCC_LAYERS_ALL, NULL, 0) > 0;
}

/// Compares every live character with what the trace expects after this step.
static void check_characters(replay *r)
{
    for (uint32_t n = 1; n <= r->trace->character_count; ++n) {
        replay_character *c = &r->characters[n];
        if (!c->id)
            continue;
        kcc_character_state s;
        kcc_move_result res;
        kcc_world_get_character(r->world, c->id, &s, &res);
        for (int k = 0; k < 3; ++k) {
            const float e = fabsf(s.position[k] - c->expected[k]);
            if (!(e <= r->report.max_error))
                r->report.max_error = isnan(e) ? INFINITY : e;
        }
        if (!kcc_tr_position_matches(c->expected, s.position, r->tolerance) || res.flags != c->flags)
            diverge(r, c->line, n, s.position, res.flags);
        if (r->check && !r->check->tripped_step && check_trips(r->check, r->world, &s, &res,
                                                               c->half_extents)) {
            r->check->tripped_step = r->step;
            r->check->tripped_character = n;
            r->check->line = c->line;
        }
    }
}

/// The number of the body an id names (0: none the trace added).
static uint32_t body_number(const replay *r, uint32_t id)
{
    for (uint32_t n = 1; n <= r->trace->body_count; ++n)
        if (r->body_ids[n] == id)
            return n;
    return 0;
}

/// The number of the character an id names, live or removed (0: none the trace added).
static uint32_t character_number(const replay *r, uint32_t id)
{
    for (uint32_t n = 1; n <= r->trace->character_count; ++n)
        if (r->characters[n].id == id || r->characters[n].last_id == id)
            return n;
    return 0;
}

/// Compares the step's sensor events with the trace's ops [first, end) (its `sensor` lines).
static void check_sensors(replay *r, uint32_t first, uint32_t end, uint32_t step_line)
{
    const kcc_sensor_event *events;
    const uint32_t n = kcc_world_sensor_events(r->world, &events, NULL);
    uint32_t listed = 0, mismatch_line = 0;
    for (uint32_t i = first; i < end; ++i) {
        const wt_op *op = &r->trace->ops[i];
        if (op->kind != WT_SENSOR || (r->keep && !r->keep[i]))
            continue;
        const kcc_sensor_event *e = listed < n ? &events[listed] : NULL;
        const bool same = e && e->entered == op->flag &&
                          body_number(r, e->sensor) == op->number &&
                          character_number(r, e->character) == op->arg;
        if (!same && !mismatch_line)
            mismatch_line = op->line;
        ++listed;
    }
    if (listed != n || mismatch_line) {
        diverge(r, mismatch_line ? mismatch_line : step_line, 0, NULL, 0);
        if (r->report.diverged == 1) {
            r->report.expected_events = listed;
            r->report.actual_events = n;
        }
    }
}

/// One `step` op at index i: the displacements, the step, then the outcomes listed after it.
/// Returns the index after the step's outcomes.
static uint32_t run_step(replay *r, uint32_t i)
{
    const kcc_world_trace *t = r->trace;
    for (uint32_t n = 1; n <= t->character_count; ++n) {
        const replay_character *c = &r->characters[n];
        if (c->id && (c->displacement[0] != 0.0f || c->displacement[1] != 0.0f ||
                      c->displacement[2] != 0.0f))
            kcc_world_set_displacement(r->world, c->id, c->displacement);
    }
    kcc_world_step(r->world);
    ++r->step;
    const uint32_t step_line = t->ops[i].line, first = i + 1;
    uint32_t end = first;
    for (; end < t->op_count && (t->ops[end].kind == WT_OUTCOME || t->ops[end].kind == WT_SENSOR);
         ++end) {
        const wt_op *op = &t->ops[end];
        replay_character *c = &r->characters[op->number];
        if (op->kind != WT_OUTCOME || (r->keep && !r->keep[end]) || !c->id)
            continue;
        memcpy(c->expected, op->v, sizeof c->expected);
        if (op->flag)
            c->flags = op->bits;
        c->line = op->line;
    }
    check_characters(r);
    check_sensors(r, first, end, step_line);
    return end;
}

kcc_status kcc_wt_replay(const kcc_world_trace *trace, const bool *keep,
                         const kcc_world_replay_desc *desc, kcc_wt_check *check,
                         kcc_world_trace_report *out, char *err, size_t err_size)
{
    replay r;
    memset(&r, 0, sizeof r);
    r.trace = trace;
    r.keep = keep;
    r.tolerance = desc->tolerance;
    r.err = err;
    r.err_size = err_size;
    r.check = check;
    kcc_status st = setup(&r, desc);
    kcc_trace_writer w;
    bool recording = false;
    if (st == KCC_OK && desc->record) {
        st = kcc_wt_record_levels(&w, desc->record, r.world, trace, (const kcc_mesh *const *)r.meshes,
                                  r.hashes);
        recording = st == KCC_OK;
        if (st != KCC_OK)
            replay_fail(&r, 1, st, "recording the replay");
    }
    for (uint32_t i = 0; st == KCC_OK && i < trace->op_count;) {
        const wt_op *op = &trace->ops[i];
        if (keep && !keep[i]) {
            ++i;
            continue;
        }
        if (op->kind == WT_STEP) {
            i = run_step(&r, i);
            continue;
        }
        st = run_call(&r, op);
        if (st != KCC_OK)
            replay_fail(&r, op->line, st, "the world refused this call");
        ++i;
    }
    if (recording) {
        kcc_status wst = kcc_trace_end(&w);
        if (st == KCC_OK && wst != KCC_OK)
            st = replay_fail(&r, 1, wst, "recording the replay");
    }
    r.report.steps = r.step;
    if (st == KCC_OK)
        *out = r.report;
    free_replay(&r);
    return st;
}

kcc_status kcc_world_trace_replay(const kcc_world_trace *trace, const kcc_world_replay_desc *desc,
                                  kcc_world_trace_report *out, char *err, size_t err_size)
{
    if (err && err_size)
        err[0] = '\0';
    if (!trace || !out)
        return KCC_ERR_NULL_ARGUMENT;
    const kcc_world_replay_desc d = desc ? *desc : kcc_world_replay_default_desc();
    if (!isfinite(d.tolerance) || d.tolerance < 0.0f)
        return KCC_ERR_NON_FINITE;
    return kcc_wt_replay(trace, NULL, &d, NULL, out, err, err_size);
}

int kcc_world_trace_format_divergence(const kcc_world_trace *trace,
                                      const kcc_world_trace_report *report, char *buf, size_t size)
{
    if (!trace || !report)
        return 0;
    if (report->diverged == 0)
        return snprintf(buf, size, "%s: %u steps replay as recorded", trace->name,
                        (unsigned)report->steps);
    const char *name = trace->name;
    const unsigned line = report->line, step = report->step;
    if (report->character == 0)
        return snprintf(buf, size, "%s:%u: step %u: sensor events differ: the trace lists %u, the "
                        "replay has %u (or they name other bodies or characters)", name, line, step,
                        (unsigned)report->expected_events, (unsigned)report->actual_events);
    kcc_tr_outcome_text o;
    kcc_tr_outcome_text_of(report->expected_position, report->expected_flags,
                           report->actual_position, report->actual_flags, &o);
    return snprintf(buf, size, "%s:%u: step %u character %u: expected position (%s %s %s) flags "
                    "%s, actual (%s %s %s) flags %s", name, line, step, (unsigned)report->character,
                    o.expected[0], o.expected[1], o.expected[2], o.expected_flags, o.actual[0],
                    o.actual[1], o.actual[2], o.actual_flags);
}
