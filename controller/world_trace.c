/* world_trace.c: the world recorder (docs/traces.md, "World traces"): a trace writer attached to a
 * kcc_world writes every call that changes the world as it happens (the hooks collide/world.c,
 * world_characters.c and world_step.c call), a step's displacements and outcomes only where they
 * changed. Allocates its tables once, at kcc_world_trace_begin; never per call or per step. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcc_world_internal.h"
#include "trace_internal.h"
#include "world_internal.h"
#include "world_trace_internal.h"

/// What the trace last said about the character in one world slot.
typedef struct recorded_character {
    uint32_t id, number;           ///< the live character in the slot and its trace number
    uint32_t last_id, last_number; ///< the slot's previous character (its sensor events after removal)
    float    displacement[3];      ///< m, the displacement the trace gives it for each step
    float    position[3];          ///< m, the outcome the trace expects
    uint32_t flags;
} recorded_character;

struct kcc_world_recorder {
    const kcc_mesh     *meshes[KCC_WORLD_TRACE_LEVELS]; ///< level L names meshes[L - 1]
    uint32_t            level_count;
    uint32_t           *body_number;   ///< per body slot: its body's trace number
    float             (*body_pose)[7]; ///< per body slot: the last transform the trace gave it
    recorded_character *characters;    ///< per character slot
    kcc_character_desc *descs;         ///< per character slot: its desc as the trace gives it
    uint32_t            next_body, next_character;
    char                pending[16384];  ///< a call's lines, written with one kcc_tr_emit
    size_t              pending_length;
};

static kcc_trace_writer *recording(const kcc_world *world)
{
    kcc_trace_writer *w = world ? world->recorder : NULL;
    return w && w->status == KCC_OK && !w->ended ? w : NULL;
}

/// Writes the lines gathered since the last flush: at the end of each step, and before anything
/// else is written (a level, a comment, the end).
static void flush(kcc_trace_writer *w)
{
    struct kcc_world_recorder *r = w->recorder;
    kcc_tr_emit(w, r->pending, r->pending_length);
    r->pending_length = 0;
}

void kcc_tr_world_flush(kcc_trace_writer *w)
{
    if (w && w->recorder)
        flush(w);
}

static void emit_line(kcc_trace_writer *w, const kcc_tr_line *b)
{
    struct kcc_world_recorder *r = w->recorder;
    if (b->len > sizeof r->pending - r->pending_length)
        flush(w);
    memcpy(r->pending + r->pending_length, b->text, b->len);
    r->pending_length += b->len;
}

/// Appends the decimal digits of v (no allocation, no stdio: the step's lines are hot).
static void lb_digits(kcc_tr_line *b, uint64_t v)
{
    char t[24];
    int n = 0;
    do {
        t[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    if (b->len + (size_t)n >= sizeof b->text)
        return;
    while (n > 0)
        b->text[b->len++] = t[--n];
    b->text[b->len] = '\0';
}

static void lb_uint(kcc_tr_line *b, const char *before, uint32_t v)
{
    kcc_tr_lb_str(b, before);
    lb_digits(b, v);
}

/// 10^i, exact in double, i = 0..15.
static const double powers_of_ten[16] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
                                         1e11, 1e12, 1e13, 1e14, 1e15};
/// 10^(i - 7), i = 0..15 (the doubles nearest: only compared with).
static const double decades[16] = {1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1e0,
                                   1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8};

/// Appends v in plain decimal ("-12.345678", "0.0035", "1200") with as few digits as keep it
/// strictly within half an ulp of v, so that a correctly rounding reader (kcc_text_to_float) gets
/// its bits back: v scaled to 9 significant digits in double (one rounding, at most 1.1e-7 of a
/// unit: 9 digits always read back), then rounded to fewer digits while the rounding stays within
/// the half ulp less a margin of 1e-3 units, far above the double's error (a borderline case keeps
/// a digit). Plain double and integer arithmetic: the same text on every build. False (nothing
/// written) for 0, NaN, infinities and |v| outside [1e-7, 1e9): the caller writes those.
static bool lb_fast_float(kcc_tr_line *b, float v)
{
    const double a = fabs((double)v);
    if (!(a >= 1e-7 && a < 1e9))
        return false;
    int k = 8;   // the decimal exponent of a's first digit
    while (k > -7 && a < decades[k + 7])
        --k;
    const double scaled = a * powers_of_ten[8 - k];   // in [1e8, 1e9): one rounding
    uint64_t digits = (uint64_t)(scaled + 0.5);
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    const uint64_t ulp_bits = (uint64_t)((bits >> 23 & 0xff) - 150 + 1023) << 52;   // 2^(e - 150)
    double ulp;
    memcpy(&ulp, &ulp_bits, sizeof ulp);
    ulp *= powers_of_ten[8 - k];
    const double half = ((bits & 0x7fffff) == 0 ? 0.25 : 0.5) * ulp - 1e-3;
    int exponent = k - 8;   // of the last digit
    for (uint64_t p = 10; p <= 100000000; p *= 10) {
        const uint64_t c = (digits % p == 0 ? digits : (digits + p / 2) / p * p);
        if (!(fabs((double)c - scaled) < half))
            break;
        digits = c;
    }
    while (digits % 10 == 0) {
        digits /= 10;
        ++exponent;
    }
    char t[24];
    int n = 0;
    for (uint64_t d = digits; d; d /= 10)
        t[n++] = (char)('0' + d % 10);
    char text[48];
    size_t len = 0;
    if (v < 0.0f)
        text[len++] = '-';
    if (exponent >= 0) {          // integer: digits then zeros
        while (n > 0)
            text[len++] = t[--n];
        for (int z = 0; z < exponent; ++z)
            text[len++] = '0';
    } else if (n > -exponent) {   // a point inside the digits
        for (; n > 0; --n) {
            text[len++] = t[n - 1];
            if (n - 1 == -exponent)
                text[len++] = '.';
        }
    } else {                      // 0.000ddd
        text[len++] = '0';
        text[len++] = '.';
        for (int z = 0; z < -exponent - n; ++z)
            text[len++] = '0';
        while (n > 0)
            text[len++] = t[--n];
    }
    text[len] = '\0';
    kcc_tr_lb_str(b, text);
    return true;
}

/// " v0 v1 ...", each value bitwise equal to last[k] written `.` (the trace repeats it), and last
/// updated; last NULL: every value written.
static void lb_values(kcc_tr_line *b, const float *v, uint32_t count, float *last)
{
    for (uint32_t k = 0; k < count; ++k) {
        kcc_tr_lb_str(b, " ");
        if (last && memcmp(&v[k], &last[k], sizeof v[k]) == 0)
            kcc_tr_lb_str(b, ".");
        else if (!lb_fast_float(b, v[k]))
            kcc_tr_lb_float(b, v[k]);
        if (last)
            last[k] = v[k];
    }
}

/// " px py pz qx qy qz qw" (last: as lb_values)
static void lb_transform(kcc_tr_line *b, const kcc_transform *t, float *last)
{
    float v[7];
    memcpy(v, t->position, sizeof t->position);
    memcpy(v + 3, t->rotation, sizeof t->rotation);
    lb_values(b, v, 7, last);
}

static uint32_t slot_of(uint32_t id)
{
    return (id & KCC_ID_INDEX_MASK) - 1;
}

// ------------------------------------------------------------------------------------- bodies

static uint32_t level_of_mesh(const struct kcc_world_recorder *r, const kcc_mesh *mesh)
{
    for (uint32_t i = 0; i < r->level_count; ++i)
        if (r->meshes[i] == mesh)
            return i + 1;
    return 0;
}

/// `body B L static|kinematic px py pz qx qy qz qw [sensor] [layers=N]`
static void record_body_added(kcc_trace_writer *w, const kcc_world *world, uint32_t body,
                              const kcc_transform *given)
{
    struct kcc_world_recorder *r = w->recorder;
    const uint32_t slot = slot_of(body);
    const kcc_body *b = &world->bodies[slot];
    const uint32_t level = level_of_mesh(r, b->mesh);
    if (level == 0) {
        w->status = KCC_ERR_NOT_FOUND;   // the mesh was never named: the trace cannot rebuild it
        return;
    }
    r->body_number[slot] = ++r->next_body;
    memcpy(r->body_pose[slot], given->position, sizeof given->position);
    memcpy(r->body_pose[slot] + 3, given->rotation, sizeof given->rotation);
    kcc_tr_line line = {.len = 0};
    lb_uint(&line, "body ", r->body_number[slot]);
    lb_uint(&line, " ", level);
    kcc_tr_lb_str(&line, b->kind == KCC_BODY_KINEMATIC ? " kinematic" : " static");
    lb_transform(&line, given, NULL);
    if (b->sensor)
        kcc_tr_lb_str(&line, " sensor");
    if (b->layers != 1)
        lb_uint(&line, " layers=", b->layers);
    kcc_tr_lb_str(&line, "\n");
    emit_line(w, &line);
}

static void record_body(void *recorder, const kcc_world *world, kcc_body_event event, uint32_t body,
                        const kcc_transform *given)
{
    kcc_trace_writer *w = recorder;
    if (!recording(world))
        return;
    if (event == KCC_BODY_ADDED) {
        record_body_added(w, world, body, given);
        return;
    }
    static const char *const names[] = {[KCC_BODY_REMOVED] = "remove_body ",
                                        [KCC_BODY_PLACED] = "place ",
                                        [KCC_BODY_TARGETED] = "target ",
                                        [KCC_BODY_LAYERED] = "body_layers "};
    kcc_tr_line line = {.len = 0};
    const uint32_t slot = slot_of(body);
    lb_uint(&line, names[event], w->recorder->body_number[slot]);
    if (given)
        lb_transform(&line, given, w->recorder->body_pose[slot]);
    if (event == KCC_BODY_LAYERED)
        lb_uint(&line, " ", world->bodies[slot].layers);
    kcc_tr_lb_str(&line, "\n");
    emit_line(w, &line);
}

// --------------------------------------------------------------------------------- characters

/// " name=value" for each desc field in which desc differs from base.
static void lb_changed_fields(kcc_tr_line *line, const kcc_character_desc *desc,
                              const kcc_character_desc *base)
{
    for (uint32_t i = 0; i < KCC_TR_DESC_FIELD_COUNT; ++i) {
        const kcc_tr_desc_field *f = &kcc_tr_desc_fields[i];
        if (memcmp((const char *)desc + f->offset, (const char *)base + f->offset,
                   kcc_tr_field_bytes(f)) != 0)
            kcc_tr_lb_field(line, f, desc);
    }
}

/// The recorded character a world call names (its slot's), when the world is being recorded.
static recorded_character *recorded(kcc_world *world, uint32_t character, kcc_trace_writer **out)
{
    *out = recording(world);
    return *out ? &(*out)->recorder->characters[slot_of(character)] : NULL;
}

/// Begins the line `word C` of a call on a recorded character (C its trace number); NULL (nothing
/// begun) when the world is not being recorded.
static kcc_trace_writer *begin_call(kcc_world *world, uint32_t character, const char *word,
                                    kcc_tr_line *line)
{
    kcc_trace_writer *w;
    const recorded_character *rc = recorded(world, character, &w);
    line->len = 0;
    if (rc)
        lb_uint(line, word, rc->number);
    return w;
}

/// Ends a line and gathers it.
static void end_line(kcc_trace_writer *w, kcc_tr_line *line)
{
    kcc_tr_lb_str(line, "\n");
    emit_line(w, line);
}

/// `character C cx cy cz [field=value ...]` (the fields that differ from the defaults), or
/// `remove_character C`.
void kcc_world_record_character(kcc_world *world, uint32_t character,
                                const kcc_character_desc *desc, const float *center)
{
    kcc_trace_writer *w;
    recorded_character *rc = recorded(world, character, &w);
    if (!rc)
        return;
    kcc_tr_line line = {.len = 0};
    if (!center) {
        lb_uint(&line, "remove_character ", rc->number);
        rc->last_id = rc->id;
        rc->last_number = rc->number;
        rc->id = rc->number = 0;
    } else {
        rc->id = character;
        rc->number = ++w->recorder->next_character;
        memcpy(rc->position, center, sizeof rc->position);
        memset(rc->displacement, 0, sizeof rc->displacement);
        rc->flags = 0;
        lb_uint(&line, "character ", rc->number);
        kcc_tr_lb_vec3(&line, center);
        const kcc_character_desc defaults = kcc_character_default_desc();
        kcc_character_desc *given = &w->recorder->descs[slot_of(character)];
        *given = desc ? *desc : defaults;
        lb_changed_fields(&line, given, &defaults);
    }
    kcc_tr_lb_str(&line, "\n");
    emit_line(w, &line);
}

/// `teleport C cx cy cz`
void kcc_world_record_teleport(kcc_world *world, uint32_t character, const float *center)
{
    kcc_tr_line line;
    kcc_trace_writer *w = begin_call(world, character, "teleport ", &line);
    if (!w)
        return;
    lb_values(&line, center, 3, NULL);
    end_line(w, &line);
}

/// `retune C [field=value ...]`: the fields in which desc (NULL: the defaults) differs from the
/// character's desc before the call.
void kcc_world_record_retune(kcc_world *world, uint32_t character, const kcc_character_desc *desc)
{
    kcc_tr_line line;
    kcc_trace_writer *w = begin_call(world, character, "retune ", &line);
    if (!w)
        return;
    const kcc_character_desc given = desc ? *desc : kcc_character_default_desc();
    kcc_character_desc *before = &w->recorder->descs[slot_of(character)];
    lb_changed_fields(&line, &given, before);
    end_line(w, &line);
    *before = given;
}

/// `character_layers C N M`
void kcc_world_record_character_layers(kcc_world *world, uint32_t character, uint32_t layers,
                                       uint32_t mask)
{
    kcc_tr_line line;
    kcc_trace_writer *w = begin_call(world, character, "character_layers ", &line);
    if (!w)
        return;
    lb_uint(&line, " ", layers);
    lb_uint(&line, " ", mask);
    end_line(w, &line);
}

/// `shift x y z`
void kcc_world_record_shift(kcc_world *world, const float *new_origin)
{
    kcc_trace_writer *w = recording(world);
    if (!w)
        return;
    kcc_tr_line line = {.len = 0};
    kcc_tr_lb_str(&line, "shift");
    lb_values(&line, new_origin, 3, NULL);
    end_line(w, &line);
}

// -------------------------------------------------------------------------------------- steps

/// Before the step: `d C dx dy dz` for each character whose displacement differs from the one the
/// trace gives it, then `step S`.
static void record_step_inputs(kcc_trace_writer *w, const struct kcc_world_characters *cs)
{
    recorded_character *rcs = w->recorder->characters;
    for (uint32_t slot = 0; slot < cs->ids.end; ++slot) {
        const world_character *wc = &cs->slots[slot];
        recorded_character *rc = &rcs[slot];
        if (!wc->live || memcmp(wc->displacement, rc->displacement, sizeof rc->displacement) == 0)
            continue;
        memcpy(rc->displacement, wc->displacement, sizeof rc->displacement);
        kcc_tr_line line = {.len = 0};
        lb_uint(&line, "d ", rc->number);
        lb_values(&line, wc->displacement, 3, NULL);
        kcc_tr_lb_str(&line, "\n");
        emit_line(w, &line);
    }
    kcc_tr_line line = {.len = 0};
    lb_uint(&line, "step ", ++w->frames);
    kcc_tr_lb_str(&line, "\n");
    emit_line(w, &line);
}

/// The trace number of the character a sensor event names (it may have been removed).
static uint32_t event_character(const struct kcc_world_recorder *r, uint32_t id)
{
    const recorded_character *rc = &r->characters[slot_of(id)];
    return rc->id == id ? rc->number : rc->last_number;
}

/// After the step: `= C x y z [FLAGS]` for each character whose position or flags changed (flags
/// written when they changed), then `sensor B C enter|leave` for each sensor event.
static void record_step_outcomes(kcc_trace_writer *w, const kcc_world *world,
                                 const struct kcc_world_characters *cs)
{
    struct kcc_world_recorder *r = w->recorder;
    for (uint32_t slot = 0; slot < cs->ids.end; ++slot) {
        const world_character *wc = &cs->slots[slot];
        recorded_character *rc = &r->characters[slot];
        const bool moved = memcmp(wc->ch.position, rc->position, sizeof rc->position) != 0;
        if (!wc->live || (!moved && wc->result.flags == rc->flags))
            continue;
        kcc_tr_line line = {.len = 0};
        lb_uint(&line, "= ", rc->number);
        lb_values(&line, wc->ch.position, 3, rc->position);
        if (wc->result.flags != rc->flags) {
            char flags[KCC_TRACE_FLAGS_CHARS];
            kcc_trace_flags_to_text(wc->result.flags, flags, sizeof flags);
            kcc_tr_lb_str(&line, " ");
            kcc_tr_lb_str(&line, flags);
        }
        kcc_tr_lb_str(&line, "\n");
        emit_line(w, &line);
        rc->flags = wc->result.flags;
    }
    const kcc_sensor_event *events;
    const uint32_t n = kcc_world_sensor_events(world, &events, NULL);
    for (uint32_t i = 0; i < n; ++i) {
        kcc_tr_line line = {.len = 0};
        lb_uint(&line, "sensor ", r->body_number[slot_of(events[i].sensor)]);
        lb_uint(&line, " ", event_character(r, events[i].character));
        kcc_tr_lb_str(&line, events[i].entered ? " enter\n" : " leave\n");
        emit_line(w, &line);
    }
}

void kcc_world_record_step(kcc_world *world, bool done)
{
    kcc_trace_writer *w = recording(world);
    if (!w)
        return;
    if (done) {
        record_step_outcomes(w, world, kcc_world_characters(world));
        flush(w);
    } else
        record_step_inputs(w, kcc_world_characters(world));
}

// ------------------------------------------------------------------------------ begin, levels

/// `world key=value ...`: the capacities and the broadphase the replay creates its world with.
static void write_world_line(kcc_trace_writer *w, const kcc_world_desc *d)
{
    kcc_tr_line line = {.len = 0};
    lb_uint(&line, "world body_capacity=", d->body_capacity);
    lb_uint(&line, " character_capacity=", d->character_capacity);
    lb_uint(&line, " broadphase=", (uint32_t)d->broadphase);
    kcc_tr_lb_str(&line, " grid_cell_size=");
    kcc_tr_lb_float(&line, d->grid_cell_size);
    lb_uint(&line, " pair_capacity=", d->pair_capacity);
    lb_uint(&line, " piece_capacity=", d->piece_capacity);
    lb_uint(&line, " sensor_capacity=", d->sensor_capacity);
    kcc_tr_lb_str(&line, "\n");
    emit_line(w, &line);
}

static kcc_status world_begin(kcc_trace_writer *w, FILE *file, char *buffer, size_t capacity,
                              kcc_world *world)
{
    if (!w || !world || (!file && !buffer))
        return KCC_ERR_NULL_ARGUMENT;
    if (!file && capacity == 0)
        return KCC_ERR_BUFFER_TOO_SMALL;
    if (world->recorder || world->body_count > 0 || kcc_world_character_count(world) > 0)
        return KCC_ERR_BAD_DESC;
    const kcc_world_desc *d = &world->desc;
    struct kcc_world_recorder *r = calloc(1, sizeof *r);
    uint32_t *bodies = calloc(d->body_capacity, sizeof *bodies);
    float(*poses)[7] = calloc(d->body_capacity, sizeof *poses);
    recorded_character *characters = calloc(d->character_capacity, sizeof *characters);
    kcc_character_desc *descs = calloc(d->character_capacity, sizeof *descs);
    if (!r || !bodies || !poses || !characters || !descs) {
        free(r);
        free(bodies);
        free(poses);
        free(characters);
        free(descs);
        return KCC_ERR_OUT_OF_MEMORY;
    }
    r->body_number = bodies;
    r->body_pose = poses;
    r->characters = characters;
    r->descs = descs;
    kcc_tr_writer_init(w, file, buffer, capacity);
    w->world = world;
    w->recorder = r;
    char head[32];
    int n = snprintf(head, sizeof head, "kcc-trace %d\n", KCC_WORLD_TRACE_VERSION);
    kcc_tr_emit(w, head, (size_t)n);
    write_world_line(w, d);
    w->header_length = w->length;
    world->recorder = w;
    world->record_body = record_body;
    return w->status;
}

kcc_status kcc_world_trace_begin(kcc_trace_writer *w, FILE *file, kcc_world *world)
{
    return file ? world_begin(w, file, NULL, 0, world) : KCC_ERR_NULL_ARGUMENT;
}

kcc_status kcc_world_trace_begin_buffer(kcc_trace_writer *w, char *buffer, size_t capacity,
                                        kcc_world *world)
{
    return buffer ? world_begin(w, NULL, buffer, capacity, world) : KCC_ERR_NULL_ARGUMENT;
}

kcc_status kcc_world_trace_level(kcc_trace_writer *w, const kcc_mesh *mesh, const char *level,
                                 uint64_t level_hash)
{
    kcc_status st = kcc_tr_writer_ready(w);
    if (st != KCC_OK)
        return st;
    if (!w->recorder || !mesh || !level)
        return KCC_ERR_NULL_ARGUMENT;
    struct kcc_world_recorder *r = w->recorder;
    if (!kcc_tr_level_string_ok(level) || level_of_mesh(r, mesh) != 0)
        return KCC_ERR_BAD_DESC;
    if (r->level_count == KCC_WORLD_TRACE_LEVELS)
        return KCC_ERR_TOO_LARGE;
    flush(w);
    r->meshes[r->level_count++] = mesh;
    char head[64];
    int n = snprintf(head, sizeof head, "level %u ", (unsigned)r->level_count);
    kcc_tr_emit(w, head, (size_t)n);
    kcc_tr_emit(w, level, strlen(level));
    n = snprintf(head, sizeof head, "\nlevel_hash %u %016llx\n", (unsigned)r->level_count,
                 (unsigned long long)level_hash);
    kcc_tr_emit(w, head, (size_t)n);
    return w->status;
}

void kcc_tr_world_detach(kcc_trace_writer *w)
{
    if (w->world && w->world->recorder == w) {
        w->world->recorder = NULL;
        w->world->record_body = NULL;
    }
    if (w->recorder) {
        flush(w);
        free(w->recorder->body_number);
        free(w->recorder->body_pose);
        free(w->recorder->characters);
        free(w->recorder->descs);
        free(w->recorder);
    }
    w->world = NULL;
    w->recorder = NULL;
}

kcc_status kcc_wt_record_levels(kcc_trace_writer *w, FILE *file, kcc_world *world,
                                const kcc_world_trace *trace, const kcc_mesh *const *meshes,
                                const uint64_t *hashes)
{
    kcc_status st = kcc_world_trace_begin(w, file, world);
    for (uint32_t i = 0; st == KCC_OK && i < trace->level_count; ++i) {
        st = kcc_world_trace_level(w, meshes[i], trace->levels[i].text, hashes[i]);
        if (st != KCC_OK)   // a level the writer refuses (e.g. spaced otherwise): stop recording
            kcc_trace_end(w);
    }
    return st;
}
