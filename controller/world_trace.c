/* world_trace.c: the world recorder (docs/traces.md, "World traces"): a trace writer attached to a
 * kcc_world writes every call that changes the world as it happens (the hooks collide/world.c,
 * world_characters.c and world_step.c call), a step's displacements and outcomes only where they
 * changed. Allocates its tables once, at kcc_world_trace_begin; never per call or per step. */
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
    uint32_t            next_body, next_character;
};

static kcc_trace_writer *recording(const kcc_world *world)
{
    kcc_trace_writer *w = world ? world->recorder : NULL;
    return w && w->status == KCC_OK && !w->ended ? w : NULL;
}

static void emit_line(kcc_trace_writer *w, const kcc_tr_line *b)
{
    kcc_tr_emit(w, b->text, b->len);
}

static void lb_uint(kcc_tr_line *b, const char *before, uint32_t v)
{
    char t[64];
    snprintf(t, sizeof t, "%s%u", before, (unsigned)v);
    kcc_tr_lb_str(b, t);
}

/// " v0 v1 ...", each value bitwise equal to last[k] written `.` (the trace repeats it), and last
/// updated; last NULL: every value written.
static void lb_values(kcc_tr_line *b, const float *v, uint32_t count, float *last)
{
    for (uint32_t k = 0; k < count; ++k) {
        kcc_tr_lb_str(b, " ");
        if (last && memcmp(&v[k], &last[k], sizeof v[k]) == 0)
            kcc_tr_lb_str(b, ".");
        else
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
                                        [KCC_BODY_TARGETED] = "target "};
    kcc_tr_line line = {.len = 0};
    const uint32_t slot = slot_of(body);
    lb_uint(&line, names[event], w->recorder->body_number[slot]);
    if (given)
        lb_transform(&line, given, w->recorder->body_pose[slot]);
    kcc_tr_lb_str(&line, "\n");
    emit_line(w, &line);
}

// --------------------------------------------------------------------------------- characters

/// `character C cx cy cz [field=value ...]` (the fields that differ from the defaults), or
/// `remove_character C`.
void kcc_world_record_character(kcc_world *world, uint32_t character,
                                const kcc_character_desc *desc, const float *center)
{
    kcc_trace_writer *w = recording(world);
    if (!w)
        return;
    recorded_character *rc = &w->recorder->characters[slot_of(character)];
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
        const kcc_character_desc given = desc ? *desc : kcc_character_default_desc();
        const kcc_character_desc defaults = kcc_character_default_desc();
        for (uint32_t i = 0; i < KCC_TR_DESC_FIELD_COUNT; ++i) {
            const kcc_tr_desc_field *f = &kcc_tr_desc_fields[i];
            if (memcmp((const char *)&given + f->offset, (const char *)&defaults + f->offset,
                       kcc_tr_field_bytes(f)) != 0)
                kcc_tr_lb_field(&line, f, &given);
        }
    }
    kcc_tr_lb_str(&line, "\n");
    emit_line(w, &line);
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
        kcc_tr_lb_vec3(&line, wc->displacement);
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
    if (done)
        record_step_outcomes(w, world, kcc_world_characters(world));
    else
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
    if (!r || !bodies || !poses || !characters) {
        free(r);
        free(bodies);
        free(poses);
        free(characters);
        return KCC_ERR_OUT_OF_MEMORY;
    }
    r->body_number = bodies;
    r->body_pose = poses;
    r->characters = characters;
    memset(w, 0, sizeof *w);
    w->file = file;
    w->buffer = buffer;
    w->capacity = capacity;
    w->status = KCC_OK;
    w->begun = true;
    w->world = world;
    w->recorder = r;
    if (buffer)
        buffer[0] = '\0';
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
        free(w->recorder->body_number);
        free(w->recorder->body_pose);
        free(w->recorder->characters);
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
    for (uint32_t i = 0; st == KCC_OK && i < trace->level_count; ++i)
        st = kcc_world_trace_level(w, meshes[i], trace->levels[i].text, hashes[i]);
    return st;
}
