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

/// Bytes the longest line needs: a `body` line's 7 numbers, an `=` line with every flag, a
/// `character` or `retune` line with every desc field.
#define LINE_ROOM 2048

/// A world's recording: held by the world (kcc_world.recorder) and by the writer that began it
/// (kcc_trace_writer.recorder) until the writer's kcc_trace_end or the world's kcc_world_destroy.
struct kcc_world_recorder {
    kcc_trace_writer   *writer;        ///< the writer that began it (it may have been begun anew)
    const kcc_mesh     *meshes[KCC_WORLD_TRACE_LEVELS]; ///< level L names meshes[L - 1]
    uint64_t            mesh_keys[KCC_WORLD_TRACE_LEVELS]; ///< and their keys (level_of_mesh)
    uint32_t            level_count;
    uint32_t           *body_number;   ///< per body slot: its body's trace number
    float             (*body_pose)[7]; ///< per body slot: the last transform the trace gave it
    recorded_character *characters;    ///< per character slot
    kcc_character_desc *descs;         ///< per character slot: its desc as the trace gives it
    uint32_t            next_body, next_character;
    char                pending[1 << 14]; ///< lines not yet written: one kcc_tr_emit when full
    size_t              pending_length;
};

static void free_tables(struct kcc_world_recorder *r)
{
    free(r->body_number);
    free(r->body_pose);
    free(r->characters);
    free(r->descs);
    free(r);
}

/// Takes the world's recording from it and frees the tables (the writer no longer holds them).
static void world_drop_recording(kcc_world *world)
{
    struct kcc_world_recorder *r = world->recorder;
    world->recorder = NULL;
    world->record_body = NULL;
    world->release_recorder = NULL;
    free_tables(r);
}

/// The writer that still holds world's recording, or NULL. A writer begun anew (for another world
/// or a character trace) without kcc_trace_end no longer holds it: the world then drops it, freeing
/// the first begin's tables, and records nothing, rather than into another recorder's tables
/// (a_writer_begun_anew_no_longer_records_its_old_world,
/// a_writer_begun_anew_frees_its_first_tables).
static kcc_trace_writer *recording_writer(kcc_world *world)
{
    struct kcc_world_recorder *r = world ? world->recorder : NULL;
    if (!r)
        return NULL;
    kcc_trace_writer *w = r->writer;
    if (w->recorder == r && w->world == world)
        return w;
    world_drop_recording(world);
    return NULL;
}

/// The writer recording world, or NULL (none, or one whose trace has failed or ended).
static kcc_trace_writer *recording(kcc_world *world)
{
    kcc_trace_writer *w = recording_writer(world);
    return w && w->status == KCC_OK && !w->ended ? w : NULL;
}

/// Writes the lines gathered since the last flush: when the block has no room for another line,
/// and before anything else is written (a level, a comment, the end).
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

/// Where the next line goes: LINE_ROOM bytes in the block (written out first when short).
static char *line_begin(kcc_trace_writer *w)
{
    struct kcc_world_recorder *r = w->recorder;
    if (sizeof r->pending - r->pending_length < LINE_ROOM)
        flush(w);
    return r->pending + r->pending_length;
}

/// Ends the line begun at line_begin at `end` (its newline goes there).
static void line_end(kcc_trace_writer *w, char *end)
{
    *end++ = '\n';
    w->recorder->pending_length = (size_t)(end - w->recorder->pending);
}

static char *put_str(char *at, const char *s)
{
    const size_t n = strlen(s);
    memcpy(at, s, n);
    return at + n;
}

/// before, then v's digits ("= 12").
static char *put_uint(char *at, const char *before, uint32_t v)
{
    return kcc_wt_put_uint(put_str(at, before), v);
}

/// v as kcc_trace_float_to_text writes it (`%g` style: the single-character traces' way).
static char *put_text_float(char *at, float v)
{
    char t[KCC_TRACE_FLOAT_CHARS];
    const int n = kcc_trace_float_to_text(v, t);
    memcpy(at, t, (size_t)n);
    return at + n;
}

/// Whether a and b have the same bits.
static bool same_bits(float a, float b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/// " v0 v1 ...", each value bitwise equal to last[k] written `.` (the trace repeats it), else
/// equal to the float sum last[k] + plus[k] written `+` (when plus is not NULL: a character's
/// expected position moved by its displacement), and last updated; last NULL: every value written.
static char *put_values_plus(char *at, const float *v, uint32_t count, float *last,
                             const float *plus)
{
    for (uint32_t k = 0; k < count; ++k) {
        *at++ = ' ';
        if (last && same_bits(v[k], last[k]))
            *at++ = '.';
        else if (plus && same_bits(v[k], last[k] + plus[k]))
            *at++ = '+';
        else {
            char *end = kcc_wt_put_float(at, v[k]);
            at = end ? end : put_text_float(at, v[k]);
        }
        if (last)
            last[k] = v[k];
    }
    return at;
}

static char *put_values(char *at, const float *v, uint32_t count, float *last)
{
    return put_values_plus(at, v, count, last, NULL);
}

/// " px py pz qx qy qz qw" (last: as put_values)
static char *put_transform(char *at, const kcc_transform *t, float *last)
{
    float v[7];
    memcpy(v, t->position, sizeof t->position);
    memcpy(v + 3, t->rotation, sizeof t->rotation);
    return put_values(at, v, 7, last);
}

static uint32_t slot_of(uint32_t id)
{
    return (id & KCC_ID_INDEX_MASK) - 1;
}

// ------------------------------------------------------------------------------------- bodies

/// The level naming mesh, or 0. A named mesh may have been destroyed since and another built at
/// its address: the address and the key (fresh at every build) together tell them apart, and the
/// destroyed mesh is never read (a_mesh_built_where_a_named_one_was_freed_is_not_that_level).
static uint32_t level_of_mesh(const struct kcc_world_recorder *r, const kcc_mesh *mesh)
{
    for (uint32_t i = 0; i < r->level_count; ++i)
        if (r->meshes[i] == mesh && r->mesh_keys[i] == mesh->key)
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
    char *at = put_uint(line_begin(w), "body ", r->body_number[slot]);
    at = put_uint(at, " ", level);
    at = put_str(at, b->kind == KCC_BODY_KINEMATIC ? " kinematic" : " static");
    at = put_transform(at, given, NULL);
    if (b->sensor)
        at = put_str(at, " sensor");
    if (b->layers != 1)
        at = put_uint(at, " layers=", b->layers);
    line_end(w, at);
}

static void record_body(kcc_world *world, kcc_body_event event, uint32_t body,
                        const kcc_transform *given)
{
    kcc_trace_writer *w = recording(world);
    if (!w)
        return;
    if (event == KCC_BODY_ADDED) {
        record_body_added(w, world, body, given);
        return;
    }
    static const char *const names[] = {[KCC_BODY_REMOVED] = "remove_body ",
                                        [KCC_BODY_PLACED] = "place ",
                                        [KCC_BODY_TARGETED] = "target ",
                                        [KCC_BODY_LAYERED] = "body_layers "};
    const uint32_t slot = slot_of(body);
    char *at = put_uint(line_begin(w), names[event], w->recorder->body_number[slot]);
    if (given)
        at = put_transform(at, given, w->recorder->body_pose[slot]);
    if (event == KCC_BODY_LAYERED)
        at = put_uint(at, " ", world->bodies[slot].layers);
    line_end(w, at);
}

// --------------------------------------------------------------------------------- characters

/// " name=value" for each desc field in which desc differs from base.
static char *put_changed_fields(char *at, const kcc_character_desc *desc,
                                const kcc_character_desc *base)
{
    kcc_tr_line line;
    line.len = 0;
    line.text[0] = '\0';
    for (uint32_t i = 0; i < KCC_TR_DESC_FIELD_COUNT; ++i) {
        const kcc_tr_desc_field *f = &kcc_tr_desc_fields[i];
        if (memcmp((const char *)desc + f->offset, (const char *)base + f->offset,
                   kcc_tr_field_bytes(f)) != 0)
            kcc_tr_lb_field(&line, f, desc);
    }
    memcpy(at, line.text, line.len);
    return at + line.len;
}

/// The recorded character a world call names (its slot's), when the world is being recorded.
static recorded_character *recorded(kcc_world *world, uint32_t character, kcc_trace_writer **out)
{
    *out = recording(world);
    return *out ? &(*out)->recorder->characters[slot_of(character)] : NULL;
}

/// Begins the line `word C` of a call on a recorded character (C its trace number) in *out;
/// returns where the line goes on, NULL (nothing begun) when the world is not being recorded.
static char *begin_call(kcc_world *world, uint32_t character, const char *word,
                        kcc_trace_writer **out)
{
    const recorded_character *rc = recorded(world, character, out);
    return rc ? put_uint(line_begin(*out), word, rc->number) : NULL;
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
    char *at = line_begin(w);
    if (!center) {
        at = put_uint(at, "remove_character ", rc->number);
        rc->last_id = rc->id;
        rc->last_number = rc->number;
        rc->id = rc->number = 0;
    } else {
        rc->id = character;
        rc->number = ++w->recorder->next_character;
        memcpy(rc->position, center, sizeof rc->position);
        memset(rc->displacement, 0, sizeof rc->displacement);
        rc->flags = 0;
        at = put_uint(at, "character ", rc->number);
        for (int k = 0; k < 3; ++k)
            at = put_text_float(put_str(at, " "), center[k]);
        const kcc_character_desc defaults = kcc_character_default_desc();
        kcc_character_desc *given = &w->recorder->descs[slot_of(character)];
        *given = desc ? *desc : defaults;
        at = put_changed_fields(at, given, &defaults);
    }
    line_end(w, at);
}

/// `teleport C cx cy cz`
void kcc_world_record_teleport(kcc_world *world, uint32_t character, const float *center)
{
    kcc_trace_writer *w;
    char *at = begin_call(world, character, "teleport ", &w);
    if (at)
        line_end(w, put_values(at, center, 3, NULL));
}

/// `retune C [field=value ...]`: the fields in which desc (NULL: the defaults) differs from the
/// character's desc before the call.
void kcc_world_record_retune(kcc_world *world, uint32_t character, const kcc_character_desc *desc)
{
    kcc_trace_writer *w;
    char *at = begin_call(world, character, "retune ", &w);
    if (!at)
        return;
    const kcc_character_desc given = desc ? *desc : kcc_character_default_desc();
    kcc_character_desc *before = &w->recorder->descs[slot_of(character)];
    line_end(w, put_changed_fields(at, &given, before));
    *before = given;
}

/// `character_layers C N M`
void kcc_world_record_character_layers(kcc_world *world, uint32_t character, uint32_t layers,
                                       uint32_t mask)
{
    kcc_trace_writer *w;
    char *at = begin_call(world, character, "character_layers ", &w);
    if (at)
        line_end(w, put_uint(put_uint(at, " ", layers), " ", mask));
}

/// `shift x y z`
void kcc_world_record_shift(kcc_world *world, const float *new_origin)
{
    kcc_trace_writer *w = recording(world);
    if (w)
        line_end(w, put_values(put_str(line_begin(w), "shift"), new_origin, 3, NULL));
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
        if (!wc->live || memcmp(cs->displacements[slot], rc->displacement, sizeof rc->displacement) == 0)
            continue;
        line_end(w, put_values(put_uint(line_begin(w), "d ", rc->number), cs->displacements[slot], 3,
                               rc->displacement));
    }
    line_end(w, put_uint(line_begin(w), "step ", ++w->frames));
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
        char *at = put_uint(line_begin(w), "= ", rc->number);
        at = put_values_plus(at, wc->ch.position, 3, rc->position, rc->displacement);
        if (wc->result.flags != rc->flags) {
            char flags[KCC_TRACE_FLAGS_CHARS];
            kcc_trace_flags_to_text(wc->result.flags, flags, sizeof flags);
            at = put_str(put_str(at, " "), flags);
        }
        line_end(w, at);
        rc->flags = wc->result.flags;
    }
    const kcc_sensor_event *events;
    const uint32_t n = kcc_world_sensor_events(world, &events, NULL);
    for (uint32_t i = 0; i < n; ++i) {
        char *at = put_uint(line_begin(w), "sensor ", r->body_number[slot_of(events[i].sensor)]);
        at = put_uint(at, " ", event_character(r, events[i].character));
        line_end(w, put_str(at, events[i].entered ? " enter" : " leave"));
    }
}

void kcc_world_record_step(kcc_world *world, bool done)
{
    kcc_trace_writer *w = recording(world);
    if (!w)
        return;
    if (done)
        record_step_outcomes(w, world, kcc_world_characters(world));
    else
        record_step_inputs(w, kcc_world_characters(world));
}

// ------------------------------------------------------------------------------ begin, levels

/// `world key=value ...`: the capacities and the cell size the replay creates its world with.
static void write_world_line(kcc_trace_writer *w, const kcc_world_desc *d)
{
    char *at = put_uint(line_begin(w), "world body_capacity=", d->body_capacity);
    at = put_uint(at, " character_capacity=", d->character_capacity);
    at = put_text_float(put_str(at, " grid_cell_size="), d->grid_cell_size);
    at = put_uint(at, " pair_capacity=", d->pair_capacity);
    at = put_uint(at, " piece_capacity=", d->piece_capacity);
    at = put_uint(at, " sensor_capacity=", d->sensor_capacity);
    line_end(w, at);
}

/// kcc_world_destroy's hook: the writer still recording the world writes out the lines it gathered
/// and lets go of the world, its status KCC_ERR_NOT_FOUND (sticky: what it records no longer
/// exists), so that its later calls and kcc_trace_end never touch the freed world
/// (a_world_destroyed_before_kcc_trace_end_leaves_its_writer_not_found); the tables are freed.
static void world_destroyed(kcc_world *world)
{
    kcc_trace_writer *w = recording_writer(world);
    if (!w)
        return; /* no writer holds it any more: recording_writer freed the tables */
    flush(w);
    if (w->status == KCC_OK)
        w->status = KCC_ERR_NOT_FOUND;
    w->world = NULL;
    w->recorder = NULL;
    world_drop_recording(world);
}

static kcc_status world_begin(kcc_trace_writer *w, FILE *file, char *buffer, size_t capacity,
                              kcc_world *world)
{
    if (!w || !world || (!file && !buffer))
        return KCC_ERR_NULL_ARGUMENT;
    if (!file && capacity == 0)
        return KCC_ERR_BUFFER_TOO_SMALL;
    if (recording_writer(world) || world->body_count > 0 || kcc_world_character_count(world) > 0)
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
    r->writer = w;
    kcc_tr_writer_init(w, file, buffer, capacity);
    w->world = world;
    w->recorder = r;
    char head[32];
    int n = snprintf(head, sizeof head, "kcc-trace %d\n", KCC_WORLD_TRACE_VERSION);
    kcc_tr_emit(w, head, (size_t)n);
    write_world_line(w, d);
    flush(w);
    w->header_length = w->length;
    world->recorder = r;
    world->record_body = record_body;
    world->release_recorder = world_destroyed;
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
    const bool named_well = kcc_tr_level_string_ok(level) || kcc_wt_hf_level_ok(level);
    if (!named_well || level_of_mesh(r, mesh) != 0)
        return KCC_ERR_BAD_DESC;
    if (r->level_count == KCC_WORLD_TRACE_LEVELS)
        return KCC_ERR_TOO_LARGE;
    flush(w);
    r->meshes[r->level_count] = mesh;
    r->mesh_keys[r->level_count++] = mesh->key;
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
    if (w->recorder && w->world && w->world->recorder == w->recorder) {
        flush(w);
        world_drop_recording(w->world);
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
