/* fuzz_world_trace.c: libFuzzer target for world traces (controller/world_trace*.c). The bytes are
 * the text of a world trace (the corpus holds small valid ones to mutate). Checks, aborting on
 * failure:
 * - the loader never crashes, and refuses with a known status and a one-line message that starts
 *   with the trace's name and a line number ("fuzz.trace:N: ");
 * - a trace that loads (small enough: generated `flat` levels and heightfields of at most 32 x 32
 *   samples, at most 16 bodies, 16 characters and 120 steps) replays without crashing, or stops with a message naming a line;
 * - replaying while recording writes a trace that loads and replays with no divergence at all
 *   (whatever the input said, its replay recorded is the world's own behaviour);
 * - kcc_world_trace_frames gives every trace that loads one frame a step and frame 0, in order,
 *   with every pose and centre in the world finite.
 * `make fuzz` explores with it, `make fuzz-check` (part of `make test`) repeats a fixed run. */
#define _POSIX_C_SOURCE 200809L   /* open_memstream */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "kcc.h"
#include "world_trace_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/// "fuzz.trace:N: " and no line break.
static void check_message(const char *err)
{
    const char *name = "fuzz.trace:";
    CHECK(strncmp(err, name, strlen(name)) == 0);
    const char *at = err + strlen(name);
    CHECK(*at >= '0' && *at <= '9');
    while (*at >= '0' && *at <= '9')
        ++at;
    CHECK(at[0] == ':' && at[1] == ' ');
    CHECK(!strchr(err, '\n'));
}

/// Whether a level is cheap to build (and reads no file): a generated flat level, or a terrain
/// heightfield of at most 32 x 32 samples.
static bool small_level(const wt_level *level)
{
    if (level->kind == KCC_TRACE_LEVEL_HF)
        return !level->hf.from_file && level->hf.size <= 32;
    return level->kind == KCC_TRACE_LEVEL_GEN && strncmp(level->path, "flat", 4) == 0;
}

/// Small enough to replay at once: cheap levels only, few bodies, characters and steps.
static bool small(const kcc_world_trace *t)
{
    for (uint32_t i = 0; i < t->level_count; ++i)
        if (!small_level(&t->levels[i]))
            return false;
    return t->body_count <= 16 && t->character_count <= 16 && t->step_count <= 120 &&
           t->desc.body_capacity <= 64 && t->desc.character_capacity <= 64 &&
           t->desc.pair_capacity <= 4096 && t->desc.piece_capacity <= 4096 &&
           t->desc.sensor_capacity <= 4096;
}

/// The replay of t recorded, loaded again and replayed: it must match itself exactly.
static void check_rerecorded(const kcc_world_trace *t)
{
    char *text = NULL, err[512];
    size_t length = 0;
    FILE *f = open_memstream(&text, &length);
    CHECK(f);
    kcc_world_replay_desc desc = kcc_world_replay_default_desc();
    desc.record = f;
    kcc_world_trace_report report;
    kcc_status st = kcc_world_trace_replay(t, &desc, &report, err, sizeof err);
    CHECK(fclose(f) == 0);
    if (st != KCC_OK) {
        check_message(err);
        free(text);
        return;
    }
    kcc_world_trace *again = NULL;
    st = kcc_world_trace_parse(text, length, "fuzz.trace", &again, err, sizeof err);
    if (st != KCC_OK)
        fprintf(stderr, "the recorded replay does not load: %s\n%s", err, text);
    CHECK(st == KCC_OK);
    st = kcc_world_trace_replay(again, NULL, &report, err, sizeof err);
    CHECK(st == KCC_OK);
    if (report.diverged) {
        kcc_world_trace_format_divergence(again, &report, err, sizeof err);
        fprintf(stderr, "the recorded replay diverges: %s\n", err);
    }
    CHECK(report.diverged == 0);
    kcc_world_trace_free(again);
    free(text);
}

/// kcc_world_trace_frames' callback: frames in step order, what is in the world finite.
static void check_frame(const kcc_world_trace_frame *f, void *user)
{
    uint32_t *frames = user;
    CHECK(f->step == (*frames)++);
    for (uint32_t b = 0; b < f->body_count; ++b)
        for (int k = 0; k < 7 && !isnan(f->poses[b][0]); ++k)
            CHECK(isfinite(f->poses[b][k]));
    for (uint32_t c = 0; c < f->character_count; ++c)
        for (int k = 0; k < 3 && !isnan(f->centres[c][0]); ++k)
            CHECK(isfinite(f->centres[c][k]) && isfinite(f->half_extents[c][k]));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 16)
        return 0;
    kcc_world_trace *t = NULL;
    char err[512] = "";
    kcc_status st = kcc_world_trace_parse((const char *)data, size, "fuzz.trace", &t, err, sizeof err);
    if (st != KCC_OK) {
        CHECK(t == NULL);
        CHECK(st == KCC_ERR_PARSE || st == KCC_ERR_VERSION || st == KCC_ERR_NOT_FOUND ||
              st == KCC_ERR_BAD_DESC || st == KCC_ERR_TOO_LARGE);
        check_message(err);
        return 0;
    }
    if (small(t))
        check_rerecorded(t);
    uint32_t frames = 0;
    CHECK(kcc_world_trace_frames(t, check_frame, &frames) == KCC_OK);
    CHECK(frames == kcc_world_trace_step_count(t) + 1u);
    kcc_world_trace_free(t);
    return 0;
}
