/* world_sensors.c: the sensors' events: which characters are inside each sensor after a step,
 * against who was after the step before. Allocates nothing. */
#include "world_internal.h"

/* ------------------------------------------------------------------------------------------------
 * Sensors: who is inside each after the step, against who was after the last one. */

/// Appends (sensor slot, character c) to the list when the sensor holds c's box and the list does
/// not have it from c's entries, which begin at `first` (a sensor split into pieces meets c once
/// per piece: a_sensor_split_into_pieces_reports_each_character_once).
static void check_inside(const kcc_world *world, struct kcc_world_characters *cs, uint32_t sensor,
                         uint32_t c, uint32_t first, uint32_t *n)
{
    sensor_state *ss = &cs->sensors;
    for (uint32_t i = first; i < *n; ++i)
        if (ss->inside[ss->now][i].sensor_slot == sensor)
            return;
    vec3 box[2];
    kcc_character_box(&cs->slots[c].ch, box);
    if (!kcc_world_sensor_holds(world, sensor, (const float(*)[3])box))
        return;
    if (*n == cs->sensor_capacity) {
        ss->overflow = true;
        return;
    }
    const sensor_pair p = {sensor, c, kcc_world_body_id_of_slot(world, sensor),
                           cs->slot_ids[c]};
    ss->inside[ss->now][(*n)++] = p;
}

static uint64_t pair_key(const sensor_pair *p)
{
    return (uint64_t)p->sensor_slot << 32 | p->character_slot;
}

static void sift_down(sensor_pair *a, uint32_t root, uint32_t n)
{
    for (;;) {
        uint32_t child = 2 * root + 1;
        if (child >= n)
            return;
        if (child + 1 < n && pair_key(&a[child + 1]) > pair_key(&a[child]))
            ++child;
        if (pair_key(&a[root]) >= pair_key(&a[child]))
            return;
        const sensor_pair t = a[root];
        a[root] = a[child];
        a[child] = t;
        root = child;
    }
}

/// Heap sort by (sensor slot, character slot): in place, no allocation.
static void sort_pairs(sensor_pair *a, uint32_t n)
{
    for (uint32_t i = n / 2; i-- > 0;)
        sift_down(a, i, n);
    for (uint32_t end = n; end > 1; --end) {
        const sensor_pair t = a[0];
        a[0] = a[end - 1];
        a[end - 1] = t;
        sift_down(a, 0, end - 1);
    }
}

/// The characters inside each sensor now, ordered by sensor slot then character slot: each
/// character against the sensors among its neighbours (every sensor when the pairs overflowed).
static void list_inside(const kcc_world *world, struct kcc_world_characters *cs, sensor_state *ss)
{
    const uint32_t *sensors;
    const uint32_t sensor_count = kcc_world_sensors(world, &sensors);
    uint32_t n = 0;
    for (uint32_t j = 0; j < cs->live_count && sensor_count > 0; ++j) {
        const uint32_t c = cs->live[j], first = n;
        if (cs->near.all) {
            for (uint32_t i = 0; i < sensor_count; ++i)
                check_inside(world, cs, sensors[i], c, first, &n);
            continue;
        }
        const uint32_t *e = cs->near.entries + cs->near.first[c];
        for (uint32_t i = 0; i < cs->near.pieces[c]; ++i) {
            bool sensor = false;
            const uint32_t body = kcc_world_piece_body(world, e[i], &sensor);
            if (sensor)
                check_inside(world, cs, body, c, first, &n);
        }
    }
    sort_pairs(ss->inside[ss->now], n);
    ss->count[ss->now] = n;
}

static void add_event(struct kcc_world_characters *cs, const sensor_pair *p, bool entered)
{
    sensor_state *ss = &cs->sensors;
    if (ss->event_count == cs->sensor_capacity) {
        ss->overflow = true;
        return;
    }
    const kcc_sensor_event e = {p->sensor, p->character, entered};
    ss->events[ss->event_count++] = e;
}

/// Events: the pairs of the last step missing now left, the pairs new now entered; merged in
/// (sensor slot, character slot) order. Equal slots with other ids: the old pair left, the new
/// one entered.
void kcc_world_sensor_step(const kcc_world *world, struct kcc_world_characters *cs)
{
    sensor_state *ss = &cs->sensors;
    ss->now ^= 1u;
    ss->event_count = 0;
    ss->overflow = false;
    list_inside(world, cs, ss);
    const sensor_pair *was = ss->inside[ss->now ^ 1u], *is = ss->inside[ss->now];
    uint32_t i = 0, j = 0;
    const uint32_t nw = ss->count[ss->now ^ 1u], ni = ss->count[ss->now];
    while (i < nw || j < ni) {
        const uint64_t kw = i < nw ? (uint64_t)was[i].sensor_slot << 32 | was[i].character_slot : UINT64_MAX;
        const uint64_t ki = j < ni ? (uint64_t)is[j].sensor_slot << 32 | is[j].character_slot : UINT64_MAX;
        if (kw < ki) {
            add_event(cs, &was[i++], false);
        } else if (ki < kw) {
            add_event(cs, &is[j++], true);
        } else {
            if (was[i].sensor != is[j].sensor || was[i].character != is[j].character) {
                add_event(cs, &was[i], false);
                add_event(cs, &is[j], true);
            }
            ++i, ++j;
        }
    }
}

uint32_t kcc_world_sensor_events(const kcc_world *world, const kcc_sensor_event **out_events,
                                 bool *out_overflow)
{
    if (!world)
        return 0;
    const sensor_state *ss = &kcc_world_characters(world)->sensors;
    if (out_events)
        *out_events = ss->events;
    if (out_overflow)
        *out_overflow = ss->overflow;
    return ss->event_count;
}

