/* world_trace_load.c: the world trace loader (`kcc-trace 2`, docs/traces.md): parses the text into
 * its levels and operations, checking what a replay needs (numbers in order, names of live bodies
 * and characters, outcomes right after their step), each mistake a "name:LINE: what" message, and
 * writes a parsed trace back as text (the shrinker's output). Allocates the trace; never prints. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "text_internal.h"
#include "trace_internal.h"
#include "world_trace_internal.h"

/// A body as the parser follows it: whether it is live, and its last pose (what `.` repeats).
typedef struct parsed_body {
    uint8_t state;     ///< BODY_*
    float   pose[7];   ///< m and quaternion: the last transform a line gave it
} parsed_body;

/// A character as the parser follows it: whether it is live, its last expected position and the
/// displacement its last `d` line gave it (what `.` and `+` refer to).
typedef struct parsed_character {
    uint8_t  state;             ///< CHARACTER_*
    float    expected[3];       ///< m
    float    displacement[3];   ///< m, zero until a `d` line
    uint32_t flags;         ///< the last flags written (what a line without flags repeats)
    uint32_t desc;          ///< its desc (index into the trace's descs): what a retune changes
} parsed_character;

/// What the parser knows besides the trace: which bodies and characters are live, and where it is.
typedef struct wt_parse {
    kcc_world_trace  *trace;
    parsed_body      *bodies;       ///< per body number
    parsed_character *characters;   ///< per character number
    uint32_t          body_room, character_room;
    bool              header, world_line, ended, after_step;
} wt_parse;

enum { BODY_NONE, BODY_STATIC, BODY_KINEMATIC, BODY_REMOVED };
enum { CHARACTER_NONE, CHARACTER_LIVE, CHARACTER_REMOVED };

static wt_parse *state_of(kcc_tr_parser *p)
{
    return p->world;
}

/// Grows *array (of `size`-byte items, zeroed) to hold index n.
static bool grow_array(void **array, uint32_t *room, uint32_t n, size_t size)
{
    if (n < *room)
        return true;
    uint32_t r = *room ? *room : 64;
    while (r <= n && r < (1u << 28))
        r *= 2;
    char *a = r > n ? realloc(*array, (size_t)r * size) : NULL;
    if (!a)
        return false;
    memset(a + (size_t)*room * size, 0, (size_t)(r - *room) * size);
    *array = a;
    *room = r;
    return true;
}

static kcc_status push_op(kcc_tr_parser *p, const wt_op *op)
{
    kcc_world_trace *t = state_of(p)->trace;
    if (t->op_count == t->op_capacity) {
        uint32_t n = t->op_capacity ? t->op_capacity * 2 : 1024;
        wt_op *ops = n > t->op_capacity ? realloc(t->ops, (size_t)n * sizeof *ops) : NULL;
        if (!ops)
            return kcc_tr_fail(p, KCC_ERR_OUT_OF_MEMORY, "out of memory");
        t->ops = ops;
        t->op_capacity = n;
    }
    t->ops[t->op_count++] = *op;
    return KCC_OK;
}

/// Token i as a whole number in [min, max] naming `what`.
static kcc_status token_uint(kcc_tr_parser *p, uint32_t i, uint32_t min, uint32_t max,
                             const char *what, uint32_t *out)
{
    int64_t v;
    kcc_status st = kcc_tr_parse_int_text(p, p->text + p->tok_begin[i], p->text + p->tok_end[i],
                                          min, max, what, &v);
    if (st == KCC_OK)
        *out = (uint32_t)v;
    return st;
}

/// Floats from token first on (count of them), finite; with `same`, a token `.` keeps out[k] (the
/// value the line repeats); with `plus`, a token `+` makes out[k] the float sum out[k] + plus[k]
/// (a position its displacement moved it to: `=` lines).
static kcc_status token_floats(kcc_tr_parser *p, uint32_t first, uint32_t count, const char *what,
                               bool same, const float *plus, float *out)
{
    for (uint32_t k = 0; k < count; ++k) {
        if (same && kcc_tr_tok_is(p, first + k, "."))
            continue;
        if (plus && kcc_tr_tok_is(p, first + k, "+")) {
            const float sum = out[k] + plus[k];
            if (!isfinite(sum))
                return kcc_tr_fail(p, KCC_ERR_PARSE, "'+' makes the %s infinite", what);
            out[k] = sum;
            continue;
        }
        kcc_status st = kcc_tr_parse_float_text(p, p->text + p->tok_begin[first + k],
                                                p->text + p->tok_end[first + k], true, what, &out[k]);
        if (st != KCC_OK)
            return st;
    }
    return KCC_OK;
}

/// A body number that names a live body (kinematic when `kinematic`).
static kcc_status live_body(kcc_tr_parser *p, uint32_t i, bool kinematic, uint32_t *out)
{
    wt_parse *s = state_of(p);
    kcc_status st = token_uint(p, i, 1, UINT32_MAX, "body number", out);
    if (st != KCC_OK)
        return st;
    const uint8_t b = *out <= s->trace->body_count ? s->bodies[*out].state : BODY_NONE;
    if (b == BODY_NONE || b == BODY_REMOVED)
        return kcc_tr_fail(p, KCC_ERR_PARSE, "body %u is not in the world here (%s)", (unsigned)*out,
                           b == BODY_REMOVED ? "it was removed" : "never added");
    if (kinematic && b != BODY_KINEMATIC)
        return kcc_tr_fail(p, KCC_ERR_PARSE, "body %u is static: only a kinematic body has a target",
                           (unsigned)*out);
    return KCC_OK;
}

/// A character number that names a live character.
static kcc_status live_character(kcc_tr_parser *p, uint32_t i, uint32_t *out)
{
    wt_parse *s = state_of(p);
    kcc_status st = token_uint(p, i, 1, UINT32_MAX, "character number", out);
    if (st != KCC_OK)
        return st;
    const uint8_t c = *out <= s->trace->character_count ? s->characters[*out].state : CHARACTER_NONE;
    if (c != CHARACTER_LIVE)
        return kcc_tr_fail(p, KCC_ERR_PARSE, "character %u is not in the world here (%s)",
                           (unsigned)*out, c == CHARACTER_REMOVED ? "it was removed" : "never added");
    return KCC_OK;
}

// ------------------------------------------------------------------------------- header lines

/// `world key=value ...`: the capacities and the cell size (each optional; the defaults otherwise).
/// `broadphase=0..2` is read and left out: which broadphase kind a world ran never changes where a
/// character ends, and the world has one (docs/traces.md).
static kcc_status world_line(kcc_tr_parser *p)
{
    static const char *const keys[] = {"body_capacity", "character_capacity", "broadphase",
                                       "grid_cell_size", "pair_capacity", "piece_capacity",
                                       "sensor_capacity"};
    kcc_world_desc *d = &state_of(p)->trace->desc;
    uint32_t *fields[] = {&d->body_capacity, &d->character_capacity, NULL, NULL,
                          &d->pair_capacity, &d->piece_capacity, &d->sensor_capacity};
    for (uint32_t i = 1; i < p->ntok; ++i) {
        char t[KCC_TR_MAX_TOKEN_CHARS + 1];
        kcc_tr_tok(p, i, t);
        char *eq = strchr(t, '=');
        uint32_t k = 0;
        while (eq && k < 7 && (strlen(keys[k]) != (size_t)(eq - t) || memcmp(keys[k], t, (size_t)(eq - t))))
            ++k;
        if (!eq || k == 7)
            return kcc_tr_fail(p, KCC_ERR_PARSE, "unknown world field '%s' (expected key=value: "
                               "body_capacity, character_capacity, broadphase, grid_cell_size, "
                               "pair_capacity, piece_capacity, sensor_capacity)", t);
        const char *v = eq + 1, *e = v + strlen(v);
        kcc_status st;
        int64_t n = 0;
        if (k == 3)
            st = kcc_tr_parse_float_text(p, v, e, true, keys[k], &d->grid_cell_size);
        else
            st = kcc_tr_parse_int_text(p, v, e, 0, k == 2 ? 2 : KCC_WORLD_MAX_OBJECTS, keys[k], &n);
        if (st != KCC_OK)
            return st;
        if (k != 2 && k != 3)
            *fields[k] = (uint32_t)n;
    }
    return KCC_OK;
}

/// `level L obj <path>`, `level L gen <spec>` or `level L hf <spec>`, L numbering levels from 1
/// in order.
static kcc_status level_line(kcc_tr_parser *p)
{
    kcc_world_trace *t = state_of(p)->trace;
    uint32_t n;
    const bool obj = p->ntok >= 4 && kcc_tr_tok_is(p, 2, "obj");
    const bool hf = p->ntok >= 4 && kcc_tr_tok_is(p, 2, "hf");
    if (!obj && !hf && (p->ntok < 4 || !kcc_tr_tok_is(p, 2, "gen")))
        return kcc_tr_fail(p, KCC_ERR_PARSE, "expected 'level L obj <path>', 'level L gen <spec>' "
                           "or 'level L hf <spec>'");
    kcc_status st = token_uint(p, 1, 1, KCC_WORLD_TRACE_LEVELS, "level number", &n);
    if (st != KCC_OK)
        return st;
    if (n != t->level_count + 1)
        return kcc_tr_fail(p, KCC_ERR_PARSE, "level %u out of order: the next level is %u",
                           (unsigned)n, (unsigned)t->level_count + 1);
    wt_level *l = &t->levels[t->level_count++];
    const char *text = p->text + p->tok_begin[2], *rest = p->text + p->tok_begin[3];
    const size_t rest_length = p->content_end - p->tok_begin[3];
    l->kind = obj ? KCC_TRACE_LEVEL_OBJ : hf ? KCC_TRACE_LEVEL_HF : KCC_TRACE_LEVEL_GEN;
    l->line = p->line;
    l->text = kcc_tr_dup_range(text, p->content_end - p->tok_begin[2]);
    char why[160];
    size_t path_offset = 0;
    if (hf && !kcc_wt_parse_hf(rest, rest_length, &l->hf, &path_offset, why, sizeof why))
        return kcc_tr_fail(p, KCC_ERR_PARSE, "level %u: %s", (unsigned)n, why);
    const bool file = obj || (hf && l->hf.from_file);
    l->path = file ? kcc_tr_resolve_obj_path(p->name, rest + path_offset, rest_length - path_offset)
                   : kcc_tr_dup_range(rest, rest_length);
    if (!l->text || !l->path)
        return kcc_tr_fail(p, KCC_ERR_OUT_OF_MEMORY, "out of memory");
    if (file) {
        FILE *f = fopen(l->path, "rb");
        if (!f)
            return kcc_tr_fail(p, KCC_ERR_NOT_FOUND, "level file '%s' not found", l->path);
        fclose(f);
    }
    return KCC_OK;
}

/// `level_hash L <16 hex digits>`: once per level.
static kcc_status level_hash_line(kcc_tr_parser *p)
{
    kcc_world_trace *t = state_of(p)->trace;
    uint32_t n;
    if (p->ntok != 3)
        return kcc_tr_fail(p, KCC_ERR_PARSE, "expected 'level_hash L <16 hex digits>'");
    kcc_status st = token_uint(p, 1, 1, KCC_WORLD_TRACE_LEVELS, "level number", &n);
    if (st != KCC_OK)
        return st;
    if (n > t->level_count || t->levels[n - 1].has_hash)
        return kcc_tr_fail(p, KCC_ERR_PARSE, "level_hash %u: %s", (unsigned)n,
                           n > t->level_count ? "no such level yet" : "given twice");
    wt_level *l = &t->levels[n - 1];
    if (kcc_tr_parse_hash(p, 2, &l->hash) != KCC_OK)
        return kcc_tr_fail(p, KCC_ERR_PARSE, "expected 'level_hash L' and 16 lowercase hex digits");
    l->has_hash = true;
    l->hash_line = p->line;
    return KCC_OK;
}

// ------------------------------------------------------------------------------ bodies' lines

static kcc_status parse_layers(kcc_tr_parser *p, const char *text, uint32_t *out)
{
    int64_t v;
    kcc_status st = kcc_tr_parse_int_text(p, text, text + strlen(text), 1, UINT32_MAX, "layers", &v);
    if (st == KCC_OK)
        *out = (uint32_t)v;
    return st;
}

/// `body B L static|kinematic px py pz qx qy qz qw [sensor] [layers=N]`
static kcc_status body_line(kcc_tr_parser *p)
{
    wt_parse *s = state_of(p);
    kcc_world_trace *t = s->trace;
    wt_op op = {.kind = WT_BODY, .line = p->line, .bits = 1};
    if (p->ntok < 11 || p->ntok > 13)
        return kcc_tr_fail(p, KCC_ERR_PARSE, "expected 'body B L static|kinematic px py pz qx qy "
                           "qz qw [sensor] [layers=N]'");
    kcc_status st = token_uint(p, 1, 1, UINT32_MAX - 1, "body number", &op.number);
    if (st == KCC_OK && op.number != t->body_count + 1)
        st = kcc_tr_fail(p, KCC_ERR_PARSE, "body %u out of order: the next body is %u",
                         (unsigned)op.number, (unsigned)t->body_count + 1);
    if (st == KCC_OK)
        st = token_uint(p, 2, 1, KCC_WORLD_TRACE_LEVELS, "level number", &op.arg);
    if (st == KCC_OK && op.arg > t->level_count)
        st = kcc_tr_fail(p, KCC_ERR_PARSE, "level %u is not defined above", (unsigned)op.arg);
    op.kinematic = kcc_tr_tok_is(p, 3, "kinematic");
    if (st == KCC_OK && !op.kinematic && !kcc_tr_tok_is(p, 3, "static"))
        st = kcc_tr_fail(p, KCC_ERR_PARSE, "body kind must be 'static' or 'kinematic'");
    if (st == KCC_OK)
        st = token_floats(p, 4, 7, "body transform", false, NULL, op.v);
    for (uint32_t i = 11; st == KCC_OK && i < p->ntok; ++i) {
        char tk[KCC_TR_MAX_TOKEN_CHARS + 1];
        kcc_tr_tok(p, i, tk);
        if (strcmp(tk, "sensor") == 0)
            op.flag = true;
        else if (strncmp(tk, "layers=", 7) == 0)
            st = parse_layers(p, tk + 7, &op.bits);
        else
            st = kcc_tr_fail(p, KCC_ERR_PARSE, "unknown body option '%s' (sensor, layers=N)", tk);
    }
    if (st == KCC_OK && !grow_array((void **)&s->bodies, &s->body_room, op.number, sizeof *s->bodies))
        st = kcc_tr_fail(p, KCC_ERR_OUT_OF_MEMORY, "out of memory");
    if (st != KCC_OK)
        return st;
    s->bodies[op.number].state = op.kinematic ? BODY_KINEMATIC : BODY_STATIC;
    memcpy(s->bodies[op.number].pose, op.v, sizeof s->bodies[op.number].pose);
    t->body_count = op.number;
    return push_op(p, &op);
}

/// `remove_body B`, `place B <transform>`, `target B <transform>`, `body_layers B N`.
static kcc_status body_change_line(kcc_tr_parser *p, wt_op_kind kind)
{
    wt_op op = {.kind = (uint8_t)kind, .line = p->line};
    const bool transform = kind == WT_PLACE || kind == WT_TARGET;
    const uint32_t want = transform ? 9 : kind == WT_BODY_LAYERS ? 3 : 2;
    if (p->ntok != want)
        return kcc_tr_fail(p, KCC_ERR_PARSE, "expected '%s'", kind == WT_REMOVE_BODY
                           ? "remove_body B" : kind == WT_PLACE ? "place B px py pz qx qy qz qw"
                           : kind == WT_TARGET ? "target B px py pz qx qy qz qw" : "body_layers B N");
    kcc_status st = live_body(p, 1, kind == WT_TARGET, &op.number);
    parsed_body *b = st == KCC_OK ? &state_of(p)->bodies[op.number] : NULL;
    if (b && kind == WT_BODY_LAYERS)
        st = token_uint(p, 2, 1, UINT32_MAX, "layers", &op.bits);
    if (b && transform) {
        memcpy(op.v, b->pose, sizeof b->pose);
        st = token_floats(p, 2, 7, "body transform", true, NULL, op.v);
        memcpy(b->pose, op.v, sizeof b->pose);
    }
    if (st != KCC_OK)
        return st;
    if (kind == WT_REMOVE_BODY)
        b->state = BODY_REMOVED;
    return push_op(p, &op);
}

// ------------------------------------------------------------------------- characters' lines

/// The desc fields from token `first` on, over `base` (fields not given keep its values), checked
/// and added to the trace's descs; its index in *out.
static kcc_status push_desc(kcc_tr_parser *p, uint32_t first, const kcc_character_desc *base,
                            uint32_t *out)
{
    kcc_world_trace *t = state_of(p)->trace;
    kcc_character_desc d = *base;
    uint32_t mask = 0;
    kcc_status st = kcc_tr_parse_fields(p, first, p->ntok, true, &d, &mask);
    if (st == KCC_OK && kcc_character_desc_validate(&d) != KCC_OK)
        st = kcc_tr_fail(p, KCC_ERR_BAD_DESC, "desc rejected: %s",
                         kcc_status_str(kcc_character_desc_validate(&d)));
    if (st != KCC_OK)
        return st;
    if (t->desc_count == t->desc_capacity) {
        uint32_t n = t->desc_capacity ? t->desc_capacity * 2 : 64;
        kcc_character_desc *descs = n > t->desc_capacity ? realloc(t->descs, n * sizeof *descs) : NULL;
        if (!descs)
            return kcc_tr_fail(p, KCC_ERR_OUT_OF_MEMORY, "out of memory");
        t->descs = descs;
        t->desc_capacity = n;
    }
    *out = t->desc_count;
    t->descs[t->desc_count++] = d;
    return KCC_OK;
}

/// `character C cx cy cz [field=value ...]` (fields not given keep their defaults).
static kcc_status character_line(kcc_tr_parser *p)
{
    wt_parse *s = state_of(p);
    kcc_world_trace *t = s->trace;
    wt_op op = {.kind = WT_CHARACTER, .line = p->line};
    if (p->ntok < 5)
        return kcc_tr_fail(p, KCC_ERR_PARSE, "expected 'character C cx cy cz [field=value ...]'");
    kcc_status st = token_uint(p, 1, 1, UINT32_MAX - 1, "character number", &op.number);
    if (st == KCC_OK && op.number != t->character_count + 1)
        st = kcc_tr_fail(p, KCC_ERR_PARSE, "character %u out of order: the next character is %u",
                         (unsigned)op.number, (unsigned)t->character_count + 1);
    if (st == KCC_OK)
        st = token_floats(p, 2, 3, "character centre", false, NULL, op.v);
    const kcc_character_desc defaults = kcc_character_default_desc();
    if (st == KCC_OK)
        st = push_desc(p, 5, &defaults, &op.arg);
    if (st != KCC_OK)
        return st;
    if (!grow_array((void **)&s->characters, &s->character_room, op.number, sizeof *s->characters))
        return kcc_tr_fail(p, KCC_ERR_OUT_OF_MEMORY, "out of memory");
    parsed_character *c = &s->characters[op.number];
    c->state = CHARACTER_LIVE;
    c->desc = op.arg;
    memcpy(c->expected, op.v, sizeof c->expected);
    t->character_count = op.number;
    return push_op(p, &op);
}

/// Whether every value is a position a character may be given (|v| <= KCC_WORLD_MAX_POSITION).
static kcc_status positions_in_range(kcc_tr_parser *p, const float *v)
{
    for (int k = 0; k < 3; ++k)
        if (!(fabsf(v[k]) <= KCC_WORLD_MAX_POSITION))
            return kcc_tr_fail(p, KCC_ERR_PARSE, "position beyond %g m: the world refuses it",
                               (double)KCC_WORLD_MAX_POSITION);
    return KCC_OK;
}

/// The rest of a call on a character: `d` and `teleport` values, `retune` fields, layers.
static kcc_status character_call_args(kcc_tr_parser *p, wt_op *op)
{
    kcc_status st = KCC_OK;
    switch ((wt_op_kind)op->kind) {
    case WT_DISPLACE: {
        float *given = state_of(p)->characters[op->number].displacement;
        memcpy(op->v, given, sizeof op->v);
        st = token_floats(p, 2, 3, "displacement", true, NULL, op->v);
        for (int k = 0; st == KCC_OK && k < 3; ++k)
            if (fabsf(op->v[k]) > KCC_MAX_DISPLACEMENT)
                st = kcc_tr_fail(p, KCC_ERR_PARSE, "displacement beyond %g m: the world refuses it",
                                 (double)KCC_MAX_DISPLACEMENT);
        if (st == KCC_OK)
            memcpy(given, op->v, sizeof op->v);
        return st;
    }
    case WT_TELEPORT:
        st = token_floats(p, 2, 3, "teleport position", false, NULL, op->v);
        return st == KCC_OK ? positions_in_range(p, op->v) : st;
    case WT_RETUNE: {
        parsed_character *c = &state_of(p)->characters[op->number];
        const kcc_character_desc base = state_of(p)->trace->descs[c->desc];
        st = push_desc(p, 2, &base, &op->arg);
        if (st == KCC_OK)
            c->desc = op->arg;
        return st;
    }
    case WT_CHARACTER_LAYERS:
        st = token_uint(p, 2, 1, UINT32_MAX, "layers", &op->bits);
        return st == KCC_OK ? token_uint(p, 3, 0, UINT32_MAX, "mask", &op->arg) : st;
    default: return KCC_OK;
    }
}

/// `remove_character C`, `teleport C cx cy cz`, `retune C [field=value ...]`,
/// `character_layers C N M`, `d C dx dy dz`.
static kcc_status character_change_line(kcc_tr_parser *p, wt_op_kind kind)
{
    static const struct {
        const char *usage;
        uint32_t    min, max;   ///< tokens
    } forms[] = {[WT_REMOVE_CHARACTER] = {"remove_character C", 2, 2},
                 [WT_TELEPORT] = {"teleport C cx cy cz", 5, 5},
                 [WT_RETUNE] = {"retune C [field=value ...]", 2, KCC_TR_MAX_TOKENS},
                 [WT_CHARACTER_LAYERS] = {"character_layers C N M", 4, 4},
                 [WT_DISPLACE] = {"d C dx dy dz", 5, 5}};
    wt_op op = {.kind = (uint8_t)kind, .line = p->line};
    if (p->ntok < forms[kind].min || p->ntok > forms[kind].max)
        return kcc_tr_fail(p, KCC_ERR_PARSE, "expected '%s'", forms[kind].usage);
    kcc_status st = live_character(p, 1, &op.number);
    if (st == KCC_OK)
        st = character_call_args(p, &op);
    if (st != KCC_OK)
        return st;
    if (kind == WT_REMOVE_CHARACTER)
        state_of(p)->characters[op.number].state = CHARACTER_REMOVED;
    return push_op(p, &op);
}

/// `shift x y z`: the world's new origin (finite; the world checks the range when replayed).
static kcc_status shift_line(kcc_tr_parser *p)
{
    wt_op op = {.kind = WT_SHIFT, .line = p->line};
    if (p->ntok != 4)
        return kcc_tr_fail(p, KCC_ERR_PARSE, "expected 'shift x y z'");
    kcc_status st = token_floats(p, 1, 3, "new origin", false, NULL, op.v);
    return st == KCC_OK ? push_op(p, &op) : st;
}

// ------------------------------------------------------------------------------ steps' lines

/// `step S`, S numbering steps from 1 in order.
static kcc_status step_line(kcc_tr_parser *p)
{
    kcc_world_trace *t = state_of(p)->trace;
    wt_op op = {.kind = WT_STEP, .line = p->line};
    int64_t number;
    kcc_status st = kcc_tr_int_line(p, "step S", 1, UINT32_MAX - 1, "step number", &number);
    if (st != KCC_OK)
        return st;
    op.number = (uint32_t)number;
    if (op.number != t->step_count + 1)
        return kcc_tr_fail(p, KCC_ERR_PARSE, "step %u out of order: the next step is %u",
                           (unsigned)op.number, (unsigned)t->step_count + 1);
    t->step_count = op.number;
    state_of(p)->after_step = true;
    return push_op(p, &op);
}

/// `= C x y z [FLAGS]` (FLAGS may have blanks around its '|').
static kcc_status outcome_line(kcc_tr_parser *p)
{
    wt_op op = {.kind = WT_OUTCOME, .line = p->line};
    if (p->ntok < 5)
        return kcc_tr_fail(p, KCC_ERR_PARSE, "expected '= C x y z [FLAGS]'");
    kcc_status st = live_character(p, 1, &op.number);
    parsed_character *c = st == KCC_OK ? &state_of(p)->characters[op.number] : NULL;
    if (c) {
        memcpy(op.v, c->expected, sizeof c->expected);
        st = token_floats(p, 2, 3, "expected position", true, c->displacement, op.v);
        memcpy(c->expected, op.v, sizeof c->expected);
    }
    if (st != KCC_OK)
        return st;
    op.bits = c->flags;
    op.flag = true;   // flags resolved: a line without them repeats the character's last ones
    if (p->ntok > 5) {
        const char *flags = p->text + p->tok_begin[5];
        size_t n = p->content_end - p->tok_begin[5];
        if (!kcc_tr_flags_from_text(flags, n, &op.bits))
            return kcc_tr_fail(p, KCC_ERR_PARSE, "bad flags '%.*s'", (int)n, flags);
        c->flags = op.bits;
    }
    return push_op(p, &op);
}

/// `sensor B C enter|leave`
static kcc_status sensor_line(kcc_tr_parser *p)
{
    kcc_world_trace *t = state_of(p)->trace;
    wt_op op = {.kind = WT_SENSOR, .line = p->line};
    if (p->ntok != 4 || (!kcc_tr_tok_is(p, 3, "enter") && !kcc_tr_tok_is(p, 3, "leave")))
        return kcc_tr_fail(p, KCC_ERR_PARSE, "expected 'sensor B C enter|leave'");
    kcc_status st = token_uint(p, 1, 1, UINT32_MAX, "body number", &op.number);
    if (st == KCC_OK)
        st = token_uint(p, 2, 1, UINT32_MAX, "character number", &op.arg);
    if (st == KCC_OK && (op.number > t->body_count || op.arg > t->character_count))
        st = kcc_tr_fail(p, KCC_ERR_PARSE, "sensor event names %s %u, never added",
                         op.number > t->body_count ? "body" : "character",
                         (unsigned)(op.number > t->body_count ? op.number : op.arg));
    if (st != KCC_OK)
        return st;
    op.flag = kcc_tr_tok_is(p, 3, "enter");
    return push_op(p, &op);
}

/// `end S`: S must be the number of steps read.
static kcc_status end_line(kcc_tr_parser *p)
{
    int64_t n;
    kcc_status st = kcc_tr_int_line(p, "end <step count>", 0, UINT32_MAX, "step count", &n);
    if (st != KCC_OK)
        return st;
    if (n != (int64_t)state_of(p)->trace->step_count)
        return kcc_tr_fail(p, KCC_ERR_PARSE, "truncated or edited: 'end' says %lld steps, the file "
                           "has %u", (long long)n, (unsigned)state_of(p)->trace->step_count);
    state_of(p)->ended = true;
    return KCC_OK;
}

// ---------------------------------------------------------------------------------- dispatch

static kcc_status header(kcc_tr_parser *p)
{
    int64_t version;
    if (!kcc_tr_tok_is(p, 0, "kcc-trace"))
        return kcc_tr_fail(p, KCC_ERR_PARSE, "not a kcc trace: expected 'kcc-trace %d'",
                           KCC_WORLD_TRACE_VERSION);
    kcc_status st = kcc_tr_int_line(p, "kcc-trace <version>", 0, INT32_MAX, "version", &version);
    if (st == KCC_OK && version != KCC_WORLD_TRACE_VERSION)
        st = kcc_tr_fail(p, KCC_ERR_VERSION, "trace format version %lld is not a world trace "
                         "(version %d)%s", (long long)version, KCC_WORLD_TRACE_VERSION,
                         version == KCC_TRACE_VERSION ? ": load it with kcc_trace_load" : "");
    state_of(p)->header = st == KCC_OK;
    return st;
}

typedef struct wt_line_kind {
    const char *word;
    wt_op_kind  kind;
    bool        outcome;   ///< belongs right after a step line
} wt_line_kind;

static kcc_status operation(kcc_tr_parser *p, const wt_line_kind *k)
{
    switch (k->kind) {
    case WT_BODY: return body_line(p);
    case WT_REMOVE_BODY: case WT_PLACE: case WT_TARGET: case WT_BODY_LAYERS:
        return body_change_line(p, k->kind);
    case WT_CHARACTER: return character_line(p);
    case WT_REMOVE_CHARACTER: case WT_TELEPORT: case WT_RETUNE: case WT_CHARACTER_LAYERS:
    case WT_DISPLACE:
        return character_change_line(p, k->kind);
    case WT_SHIFT: return shift_line(p);
    case WT_STEP: return step_line(p);
    case WT_OUTCOME: return outcome_line(p);
    default: return sensor_line(p);
    }
}

static kcc_status statement(kcc_tr_parser *p)
{
    static const wt_line_kind kinds[] = {
        {"body", WT_BODY, false},          {"remove_body", WT_REMOVE_BODY, false},
        {"place", WT_PLACE, false},        {"target", WT_TARGET, false},
        {"body_layers", WT_BODY_LAYERS, false},
        {"character", WT_CHARACTER, false}, {"remove_character", WT_REMOVE_CHARACTER, false},
        {"teleport", WT_TELEPORT, false},  {"retune", WT_RETUNE, false},
        {"character_layers", WT_CHARACTER_LAYERS, false},
        {"d", WT_DISPLACE, false},         {"shift", WT_SHIFT, false},
        {"step", WT_STEP, false},
        {"=", WT_OUTCOME, true},           {"sensor", WT_SENSOR, true},
    };
    wt_parse *s = state_of(p);
    char t0[KCC_TR_MAX_TOKEN_CHARS + 1];
    kcc_tr_tok(p, 0, t0);
    if (!s->header)
        return header(p);
    if (s->ended)
        return kcc_tr_fail(p, KCC_ERR_PARSE, "unexpected '%s' after the 'end' line", t0);
    const bool first = !s->world_line;
    s->world_line = true;
    if (kcc_tr_tok_is(p, 0, "world"))
        return first ? world_line(p)
                     : kcc_tr_fail(p, KCC_ERR_PARSE, "the 'world' line belongs right after the header");
    if (kcc_tr_tok_is(p, 0, "level"))
        return level_line(p);
    if (kcc_tr_tok_is(p, 0, "level_hash"))
        return level_hash_line(p);
    if (kcc_tr_tok_is(p, 0, "end"))
        return end_line(p);
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; ++i) {
        if (!kcc_tr_tok_is(p, 0, kinds[i].word))
            continue;
        if (kinds[i].outcome && !s->after_step)
            return kcc_tr_fail(p, KCC_ERR_PARSE, "'%s' lines belong right after their 'step' line "
                               "(the step's outcomes)", t0);
        s->after_step = s->after_step && (kinds[i].outcome || kinds[i].kind == WT_STEP);
        return operation(p, &kinds[i]);
    }
    return kcc_tr_fail(p, KCC_ERR_PARSE, "unknown line '%s' (expected body, remove_body, place, "
                       "target, body_layers, character, remove_character, teleport, retune, "
                       "character_layers, d, shift, step, =, sensor or end)", t0);
}

static kcc_status end_of_text(kcc_tr_parser *p)
{
    wt_parse *s = state_of(p);
    if (p->line == 0)
        p->line = 1;
    if (!s->header)
        return kcc_tr_fail(p, KCC_ERR_PARSE, "empty file: expected 'kcc-trace %d'",
                           KCC_WORLD_TRACE_VERSION);
    if (!s->ended)
        return kcc_tr_fail(p, KCC_ERR_PARSE, "truncated: missing the 'end' line after step %u",
                           (unsigned)s->trace->step_count);
    return KCC_OK;
}

// ---------------------------------------------------------------------------------- the API

kcc_status kcc_world_trace_parse(const char *text, size_t length, const char *name,
                                 kcc_world_trace **out, char *err, size_t err_size)
{
    if (err && err_size)
        err[0] = '\0';
    if (!out || (!text && length))
        return KCC_ERR_NULL_ARGUMENT;
    kcc_tr_parser p;
    memset(&p, 0, sizeof p);
    p.name = name ? name : "<trace>";
    p.err = err;
    p.err_size = err_size;
    if (length >= UINT32_MAX) {
        p.line = 1;
        return kcc_tr_fail(&p, KCC_ERR_TOO_LARGE, "file too large");
    }
    wt_parse s;
    memset(&s, 0, sizeof s);
    s.trace = calloc(1, sizeof *s.trace);
    char *copy = kcc_tr_dup_range(text ? text : "", length);
    if (!s.trace || !copy) {
        free(s.trace);
        free(copy);
        return kcc_tr_fail(&p, KCC_ERR_OUT_OF_MEMORY, "out of memory");
    }
    s.trace->desc = kcc_world_default_desc();
    s.trace->name = kcc_tr_dup_range(p.name, strlen(p.name));
    p.text = copy;   // NUL-terminated: the number readers may look one past a token
    p.world = &s;
    kcc_status st = s.trace->name ? kcc_tr_parse_lines(&p, length, statement, end_of_text)
                                  : kcc_tr_fail(&p, KCC_ERR_OUT_OF_MEMORY, "out of memory");
    free(copy);
    free(s.bodies);
    free(s.characters);
    if (st != KCC_OK) {
        kcc_world_trace_free(s.trace);
        return st;
    }
    *out = s.trace;
    return KCC_OK;
}

void kcc_world_trace_free(kcc_world_trace *trace)
{
    if (!trace)
        return;
    for (uint32_t i = 0; i < trace->level_count; ++i) {
        free(trace->levels[i].text);
        free(trace->levels[i].path);
    }
    free(trace->name);
    free(trace->ops);
    free(trace->descs);
    free(trace);
}

uint32_t kcc_world_trace_step_count(const kcc_world_trace *trace)
{
    return trace ? trace->step_count : 0;
}

kcc_status kcc_world_trace_load(const char *path, kcc_world_trace **out, char *err, size_t err_size)
{
    if (err && err_size)
        err[0] = '\0';
    if (!path || !out)
        return KCC_ERR_NULL_ARGUMENT;
    char *text = NULL;
    size_t length = 0;
    kcc_status st = kcc_tr_read_file(path, &text, &length, err, err_size);
    if (st != KCC_OK)
        return st;
    st = kcc_world_trace_parse(text, length, path, out, err, err_size);
    free(text);
    return st;
}
