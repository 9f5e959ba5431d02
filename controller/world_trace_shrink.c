/* world_trace_shrink.c: shrinking a failing world trace (kcc-replay --shrink, docs/traces.md):
 * delta debugging over its characters, bodies and steps, each candidate a replay of the kept
 * operations (kcc_wt_replay with a mask), and writing the kept operations as a trace numbered
 * again. Allocates the masks; never prints. */
#include <stdlib.h>
#include <string.h>

#include "trace_internal.h"
#include "world_trace_internal.h"

// ------------------------------------------------------------------------------------ writing

/// New numbers for the kept bodies, characters and steps, in order of appearance.
typedef struct renumbering {
    uint32_t *body, *character;
    uint32_t *desc;   ///< per character: the desc its last kept line gave it (what a retune changes)
    uint32_t  bodies, characters, steps;
} renumbering;

static void lb_number(kcc_tr_line *b, const char *before, uint32_t v)
{
    char t[48];
    snprintf(t, sizeof t, "%s%u", before, (unsigned)v);
    kcc_tr_lb_str(b, t);
}

static void lb_floats(kcc_tr_line *b, const float *v, uint32_t count)
{
    for (uint32_t k = 0; k < count; ++k) {
        kcc_tr_lb_str(b, " ");
        kcc_tr_lb_float(b, v[k]);
    }
}

/// " name=value" for each field in which desc `to` differs from desc `from` (indices into descs).
static void lb_desc_fields(const kcc_world_trace *t, uint32_t to, const kcc_character_desc *from,
                           kcc_tr_line *b)
{
    for (uint32_t i = 0; i < KCC_TR_DESC_FIELD_COUNT; ++i) {
        const kcc_tr_desc_field *f = &kcc_tr_desc_fields[i];
        if (memcmp((const char *)&t->descs[to] + f->offset, (const char *)from + f->offset,
                   kcc_tr_field_bytes(f)) != 0)
            kcc_tr_lb_field(b, f, &t->descs[to]);
    }
}

/// The line of one kept operation, with its names numbered again.
static void write_op(const kcc_world_trace *t, const wt_op *op, renumbering *n, kcc_tr_line *b)
{
    static const char *const words[] = {
        [WT_BODY] = "body ", [WT_REMOVE_BODY] = "remove_body ", [WT_PLACE] = "place ",
        [WT_TARGET] = "target ", [WT_BODY_LAYERS] = "body_layers ", [WT_CHARACTER] = "character ",
        [WT_REMOVE_CHARACTER] = "remove_character ", [WT_TELEPORT] = "teleport ",
        [WT_RETUNE] = "retune ", [WT_CHARACTER_LAYERS] = "character_layers ", [WT_DISPLACE] = "d ",
        [WT_SHIFT] = "shift", [WT_STEP] = "step ", [WT_OUTCOME] = "= ", [WT_SENSOR] = "sensor "};
    const bool on_body = kcc_wt_names_body(op->kind) || op->kind == WT_SENSOR;
    if (op->kind == WT_BODY)
        n->body[op->number] = ++n->bodies;
    if (op->kind == WT_CHARACTER)
        n->character[op->number] = ++n->characters;
    if (op->kind == WT_SHIFT)
        kcc_tr_lb_str(b, words[op->kind]);
    else
        lb_number(b, words[op->kind], op->kind == WT_STEP ? ++n->steps
                                      : on_body ? n->body[op->number] : n->character[op->number]);
    switch ((wt_op_kind)op->kind) {
    case WT_BODY:
        lb_number(b, " ", op->arg);
        kcc_tr_lb_str(b, op->kinematic ? " kinematic" : " static");
        lb_floats(b, op->v, 7);
        kcc_tr_lb_str(b, op->flag ? " sensor" : "");
        if (op->bits != 1)
            lb_number(b, " layers=", op->bits);
        break;
    case WT_PLACE: case WT_TARGET: lb_floats(b, op->v, 7); break;
    case WT_BODY_LAYERS: lb_number(b, " ", op->bits); break;
    case WT_CHARACTER: {
        lb_floats(b, op->v, 3);
        const kcc_character_desc defaults = kcc_character_default_desc();
        lb_desc_fields(t, op->arg, &defaults, b);
        n->desc[op->number] = op->arg;
        break;
    }
    case WT_RETUNE:
        lb_desc_fields(t, op->arg, &t->descs[n->desc[op->number]], b);
        n->desc[op->number] = op->arg;
        break;
    case WT_CHARACTER_LAYERS:
        lb_number(b, " ", op->bits);
        lb_number(b, " ", op->arg);
        break;
    case WT_TELEPORT: case WT_DISPLACE: case WT_SHIFT: lb_floats(b, op->v, 3); break;
    case WT_OUTCOME: {
        char flags[KCC_TRACE_FLAGS_CHARS];
        lb_floats(b, op->v, 3);
        kcc_trace_flags_to_text(op->bits, flags, sizeof flags);
        kcc_tr_lb_str(b, " ");
        kcc_tr_lb_str(b, flags);
        break;
    }
    case WT_SENSOR:
        lb_number(b, " ", n->character[op->arg]);
        kcc_tr_lb_str(b, op->flag ? " enter" : " leave");
        break;
    default: break;
    }
    kcc_tr_lb_str(b, "\n");
}

/// The header: the world line and every level (the kept bodies name them by their numbers).
static void write_header(const kcc_world_trace *t, FILE *out)
{
    const kcc_world_desc *d = &t->desc;
    char cell[KCC_TRACE_FLOAT_CHARS];
    kcc_trace_float_to_text(d->grid_cell_size, cell);
    fprintf(out, "kcc-trace %d\nworld body_capacity=%u character_capacity=%u "
            "grid_cell_size=%s pair_capacity=%u piece_capacity=%u sensor_capacity=%u\n",
            KCC_WORLD_TRACE_VERSION, (unsigned)d->body_capacity, (unsigned)d->character_capacity,
            cell, (unsigned)d->pair_capacity, (unsigned)d->piece_capacity, (unsigned)d->sensor_capacity);
    for (uint32_t i = 0; i < t->level_count; ++i) {
        fprintf(out, "level %u %s\n", (unsigned)i + 1, t->levels[i].text);
        if (t->levels[i].has_hash)
            fprintf(out, "level_hash %u %016llx\n", (unsigned)i + 1,
                    (unsigned long long)t->levels[i].hash);
    }
}

kcc_status kcc_wt_write(const kcc_world_trace *trace, const bool *keep, FILE *out)
{
    renumbering n = {calloc(trace->body_count + 1, sizeof(uint32_t)),
                     calloc(trace->character_count + 1, sizeof(uint32_t)),
                     calloc(trace->character_count + 1, sizeof(uint32_t)), 0, 0, 0};
    if (!n.body || !n.character || !n.desc) {
        free(n.body);
        free(n.character);
        free(n.desc);
        return KCC_ERR_OUT_OF_MEMORY;
    }
    write_header(trace, out);
    for (uint32_t i = 0; i < trace->op_count; ++i) {
        if (keep && !keep[i])
            continue;
        kcc_tr_line line = {.len = 0};
        write_op(trace, &trace->ops[i], &n, &line);
        fwrite(line.text, 1, line.len, out);
    }
    fprintf(out, "end %u\n", (unsigned)n.steps);
    free(n.body);
    free(n.character);
    free(n.desc);
    return ferror(out) || fflush(out) != 0 ? KCC_ERR_IO : KCC_OK;
}

// ---------------------------------------------------------------------------------- shrinking

/// The search: the trace, what must keep failing, and the current mask.
typedef struct shrinker {
    const kcc_world_trace      *trace;
    const kcc_world_shrink_desc *desc;
    bool                       *keep, *candidate;
    uint32_t                   *unit;        ///< per op: the unit it belongs to (for a pass)
    kcc_world_trace_report      original;    ///< its first divergence: the one to keep
    uint32_t                    failing_step;
    uint32_t                    replays, max_replays;
} shrinker;

/// Whether the ops `mask` keeps still fail as the original did: for a divergence, first at the same
/// recorded outcome with the same actual outcome (the same difference, not one the cut made).
static bool still_fails(shrinker *s, const bool *mask)
{
    kcc_world_replay_desc rd = kcc_world_replay_default_desc();
    rd.tolerance = s->desc->tolerance;
    kcc_wt_check check = {.kind = s->desc->check, .flag = s->desc->flag};
    kcc_world_trace_report report;
    ++s->replays;
    if (kcc_wt_replay(s->trace, mask, &rd, &check, &report, NULL, 0) != KCC_OK)
        return false;
    if (s->desc->check == KCC_WORLD_SHRINK_DIVERGENCE) {
        const kcc_world_trace_report *o = &s->original;
        s->failing_step = report.step;
        return report.diverged > 0 && report.line == o->line && report.character == o->character &&
               memcmp(report.actual_position, o->actual_position, sizeof o->actual_position) == 0 &&
               report.actual_flags == o->actual_flags && report.actual_events == o->actual_events;
    }
    s->failing_step = check.tripped_step;
    return check.tripped_step > 0;
}

/// ddmin over units 0..count-1 (ops whose unit is UINT32_MAX are not cut): removes chunks of
/// units, halving the chunks when none can go, while the rest still fails.
static void ddmin(shrinker *s, uint32_t count)
{
    const uint32_t n_ops = s->trace->op_count;
    bool *gone = calloc(count + 1, sizeof *gone);
    if (!gone)
        return;
    for (uint32_t chunk = count / 2 ? count / 2 : 1; chunk >= 1 && s->replays < s->max_replays;) {
        bool removed = false;
        for (uint32_t first = 0; first < count && s->replays < s->max_replays; first += chunk) {
            bool any = false;
            for (uint32_t i = 0; i < n_ops; ++i) {
                const uint32_t u = s->unit[i];
                const bool cut = u != UINT32_MAX && u >= first && u < first + chunk && !gone[u];
                s->candidate[i] = s->keep[i] && !cut;
                any |= cut && s->keep[i];
            }
            if (!any || !still_fails(s, s->candidate))
                continue;
            memcpy(s->keep, s->candidate, n_ops * sizeof *s->keep);
            for (uint32_t u = first; u < first + chunk && u < count; ++u)
                gone[u] = true;
            removed = true;
        }
        if (!removed)
            chunk /= 2;
    }
    free(gone);
}

/// Units of a pass: every op naming character c (kind 0) or body b (kind 1) is unit c - 1 / b - 1;
/// for steps (kind 2), a step with its outcomes and the targets set before it is one unit.
static uint32_t assign_units(shrinker *s, int kind)
{
    const kcc_world_trace *t = s->trace;
    uint32_t step = 0;
    for (uint32_t i = 0; i < t->op_count; ++i) {
        const wt_op *op = &t->ops[i];
        uint32_t u = UINT32_MAX;
        const bool on_body = kcc_wt_names_body(op->kind);
        if (kind == 0 && kcc_wt_calls_character(op->kind))
            u = op->number - 1;
        else if (kind == 0 && (op->kind == WT_OUTCOME || op->kind == WT_SENSOR))
            u = (op->kind == WT_OUTCOME ? op->number : op->arg) - 1;
        else if (kind == 1 && (on_body || op->kind == WT_SENSOR))
            u = op->number - 1;
        else if (kind == 2 && (op->kind == WT_TARGET || op->kind == WT_STEP))
            u = step;
        else if (kind == 2 && (op->kind == WT_OUTCOME || op->kind == WT_SENSOR))
            u = step - 1;
        if (kind == 2 && op->kind == WT_STEP)
            ++step;
        s->unit[i] = u;
    }
    return kind == 0 ? t->character_count : kind == 1 ? t->body_count : step;
}

/// Drops every op after the outcomes of step `last`.
static void cut_after_step(shrinker *s, uint32_t last)
{
    uint32_t step = 0;
    for (uint32_t i = 0; i < s->trace->op_count; ++i) {
        const uint8_t kind = s->trace->ops[i].kind;
        step += kind == WT_STEP;
        if (step > last || (step == last && kind != WT_STEP && kind != WT_OUTCOME &&
                            kind != WT_SENSOR))
            s->keep[i] = false;
    }
}

static void count_kept(const shrinker *s, uint32_t out[3])
{
    memset(out, 0, 3 * sizeof *out);
    for (uint32_t i = 0; i < s->trace->op_count; ++i) {
        const uint8_t kind = s->trace->ops[i].kind;
        if (s->keep[i])
            out[kind == WT_STEP ? 0 : kind == WT_CHARACTER ? 1 : 2] += kind == WT_STEP ||
                                                                     kind == WT_CHARACTER ||
                                                                     kind == WT_BODY;
    }
}

kcc_status kcc_world_trace_shrink(const kcc_world_trace *trace, const kcc_world_shrink_desc *desc,
                                  FILE *out, kcc_world_shrink_report *report, char *err,
                                  size_t err_size)
{
    if (err && err_size)
        err[0] = '\0';
    if (!trace || !desc || !out)
        return KCC_ERR_NULL_ARGUMENT;
    shrinker s;
    memset(&s, 0, sizeof s);
    s.trace = trace;
    s.desc = desc;
    s.keep = calloc(trace->op_count + 1, sizeof(bool));
    s.candidate = calloc(trace->op_count + 1, sizeof(bool));
    s.unit = calloc(trace->op_count + 1, sizeof(uint32_t));
    s.max_replays = desc->max_replays ? desc->max_replays : 2000;
    kcc_status st = s.keep && s.candidate && s.unit ? KCC_OK : KCC_ERR_OUT_OF_MEMORY;
    kcc_world_replay_desc rd = kcc_world_replay_default_desc();
    rd.tolerance = desc->tolerance;
    kcc_wt_check check = {.kind = desc->check, .flag = desc->flag};
    kcc_world_trace_report first;
    if (st == KCC_OK)
        st = kcc_wt_replay(trace, NULL, &rd, &check, &first, err, err_size);
    const uint32_t failing = desc->check == KCC_WORLD_SHRINK_DIVERGENCE
                                 ? (first.diverged ? first.step : 0) : check.tripped_step;
    if (st == KCC_OK && failing == 0) {
        if (err && err_size)
            snprintf(err, err_size, "%s: nothing to shrink: the trace does not fail the check",
                     trace->name);
        st = KCC_ERR_BAD_DESC;
    }
    if (st == KCC_OK) {
        uint32_t before[3];
        for (uint32_t i = 0; i < trace->op_count; ++i)
            s.keep[i] = true;
        count_kept(&s, before);
        s.original = first;
        cut_after_step(&s, failing);
        for (int pass = 0; pass < 4; ++pass)
            ddmin(&s, assign_units(&s, pass % 3));
        uint32_t after[3];
        count_kept(&s, after);
        st = kcc_wt_write(trace, s.keep, out);
        if (report) {
            kcc_world_shrink_report r = {{before[0], after[0]}, {before[1], after[1]},
                                         {before[2], after[2]}, s.replays};
            *report = r;
        }
    }
    free(s.keep);
    free(s.candidate);
    free(s.unit);
    return st;
}
