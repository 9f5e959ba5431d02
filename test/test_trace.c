/* test_trace.c: the trace format and its APIs: bit-exact float text, a recorded session replays as it
 * ran live, divergences are reported at the right frame, tolerance, --update rewriting, and every
 * kind of bad file gives its status and a "file:line:" message, never a crash. */
#define _POSIX_C_SOURCE 200809L   /* mkdtemp, rmdir */
#include "test.h"

#include <float.h>
#include <unistd.h>

static uint32_t rng_next(uint32_t *s)
{
    uint32_t x = *s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *s = x;
}

static float bits_to_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static void assert_float_round_trips(float v)
{
    char text[KCC_TRACE_FLOAT_CHARS];
    int n = kcc_trace_float_to_text(v, text);
    assert_true(n > 0 && n < KCC_TRACE_FLOAT_CHARS);
    float back = 0.0f;
    assert_true(kcc_trace_text_to_float(text, &back));
    assert_int_equal(float_bits(back), float_bits(v));
}

static void floats_read_back_bit_exactly_from_their_text(void **state)
{
    (void)state;
    static const uint32_t special[] = {
        0x00000000u, 0x80000000u,                 // +0, -0
        0x00000001u, 0x80000001u, 0x007fffffu,    // smallest and largest subnormals
        0x00400000u, 0x00800000u, 0x80800000u,    // a subnormal, FLT_MIN, -FLT_MIN
        0x7f7fffffu, 0xff7fffffu, 0x7f7ffffeu,    // FLT_MAX, -FLT_MAX, just below
        0x3f800000u, 0x3f800001u, 0x3f7fffffu,    // 1 and its neighbours
        0x3dcccccdu, 0x3eaaaaabu, 0x4b800001u,    // 0.1, 1/3, 2^24 + 2
    };
    for (size_t i = 0; i < sizeof special / sizeof special[0]; ++i)
        assert_float_round_trips(bits_to_float(special[i]));
    uint32_t s = 0x9e3779b9u;
    for (int i = 0; i < 60000; ++i) {
        float v = bits_to_float(rng_next(&s));
        if (isfinite(v))
            assert_float_round_trips(v);
    }
    // Values near typical positions: every float in a small range around 1.5 m.
    for (uint32_t u = 0x3fc00000u - 2000u; u < 0x3fc00000u + 2000u; ++u)
        assert_float_round_trips(bits_to_float(u));
}

static void float_text_is_short_when_a_short_text_is_exact(void **state)
{
    (void)state;
    char text[KCC_TRACE_FLOAT_CHARS];
    kcc_trace_float_to_text(0.1f, text);
    assert_string_equal(text, "0.1");
    kcc_trace_float_to_text(-0.0f, text);
    assert_string_equal(text, "-0");
    kcc_trace_float_to_text(0.35f, text);
    assert_string_equal(text, "0.35");
}

static void float_reader_rejects_malformed_numbers(void **state)
{
    (void)state;
    static const char *const bad[] = { "", " 1", "1 ", "1.0x", "abc", "1e39", "-1e39", "--1",
                                       "1,5", "0.5.5", "+", "e5" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        float v = 42.0f;
        assert_false(kcc_trace_text_to_float(bad[i], &v));
        assert_true(v == 42.0f);
    }
    float v;
    assert_true(kcc_trace_text_to_float("nan", &v) && isnan(v));
    assert_true(kcc_trace_text_to_float("-inf", &v) && isinf(v) && v < 0);
    assert_true(kcc_trace_text_to_float("1e-45", &v) && float_bits(v) == 1u);
}

static void flags_round_trip_by_name_and_by_hex(void **state)
{
    (void)state;
    char text[KCC_TRACE_FLAGS_CHARS];
    uint32_t f = 0;
    kcc_trace_flags_to_text(KCC_MOVE_ON_GROUND | KCC_MOVE_SLID, text, sizeof text);
    assert_string_equal(text, "ON_GROUND|SLID");
    kcc_trace_flags_to_text(0, text, sizeof text);
    assert_string_equal(text, "-");
    assert_true(kcc_trace_text_to_flags("-", &f) && f == 0);
    for (uint32_t bits = 0; bits < (1u << 12); bits += 7) {
        uint32_t v = bits | (bits & 4u ? 0x80000000u : 0u);
        kcc_trace_flags_to_text(v, text, sizeof text);
        assert_true(kcc_trace_text_to_flags(text, &f));
        assert_int_equal(f, v);
    }
    assert_true(kcc_trace_text_to_flags("0x3", &f) && f == (KCC_MOVE_ON_GROUND | KCC_MOVE_HIT_WALL));
    assert_false(kcc_trace_text_to_flags("ON_GRUND", &f));
    assert_false(kcc_trace_text_to_flags("ON_GROUND|", &f));
}

static void trace_names_every_desc_field(void **state)
{
    (void)state;
    // The desc has 9 four-byte members (half_extents counts 3). A new field must be added to the
    // trace format's table in trace.c; this fails until it is.
    uint32_t n = 0;
    while (kcc_trace_desc_field(n))
        ++n;
    assert_int_equal(n, 7);
    assert_int_equal(sizeof(kcc_character_desc), 9 * 4);
}

// ---------------------------------------------------------------------------- a recorded session

// A 40 m floor at height 0 with a wall at x = 4 (facing -x) and a 0.3 m ledge at z in [3, 6].
static kcc_mesh *make_room(void)
{
    static const float v[] = {
        -20, 0, -20,   20, 0, -20,   20, 0, 20,   -20, 0, 20,      // floor
        4, 0, -20,     4, 0, 20,     4, 3, 20,    4, 3, -20,       // wall
        -20, 0.3f, 3,  3, 0.3f, 3,   3, 0.3f, 6,  -20, 0.3f, 6,    // ledge top
        -20, 0, 3,     3, 0, 3,      3, 0.3f, 3,  -20, 0.3f, 3,    // ledge front
    };
    static const uint32_t idx[] = { 0, 2, 1, 0, 3, 2,  4, 5, 6, 4, 6, 7,
                                    8, 10, 9, 8, 11, 10,  12, 14, 13, 12, 15, 14 };
    kcc_mesh_desc d;
    memset(&d, 0, sizeof d);
    d.positions = v;
    d.vertex_count = 16;
    d.indices = idx;
    d.triangle_count = 8;
    kcc_mesh *m = NULL;
    assert_int_equal(kcc_mesh_build(&d, &m), KCC_OK);
    return m;
}

#define SESSION_FRAMES 240
#define SESSION_BUF (1 << 16)

typedef struct session {
    char    text[SESSION_BUF];
    size_t  length;
    vec3    live[SESSION_FRAMES];   // positions of the live run, the reference for the replay
    uint32_t live_flags[SESSION_FRAMES];
} session;

// Walks toward the wall and over the ledge with gravity and jumps at 60 Hz, retunes (accepted and
// refused), feeds one NaN frame and respawns once, recording everything.
static void record_session(session *s, kcc_mesh *mesh)
{
    kcc_character_desc desc = kcc_character_default_desc();
    kcc_character ch;
    vec3 start = { -2.0f, 0.9f + desc.skin_width, 0.0f };
    assert_int_equal(kcc_character_init(&ch, &desc, start), KCC_OK);
    kcc_trace_writer w;
    assert_int_equal(kcc_trace_begin_buffer(&w, s->text, sizeof s->text, "gen arena seed=1", &desc,
                                            start), KCC_OK);
    assert_int_equal(kcc_trace_comment(&w, "recorded by test_trace.c"), KCC_OK);
    const float dt = 1.0f / 60.0f;
    float vy = 0.0f;
    for (int i = 0; i < SESSION_FRAMES; ++i) {
        if (i == 60) {
            kcc_character_desc d2 = desc;
            d2.step_height = 0.4f;
            d2.max_slope_deg = 40.0f;
            kcc_status st = kcc_character_set_desc(&ch, &d2);
            assert_int_equal(kcc_trace_set_desc(&w, &d2, st), KCC_OK);
            if (st == KCC_OK)
                desc = d2;
        }
        if (i == 70) {
            kcc_character_desc bad = desc;
            bad.max_slope_deg = 120.0f;     // out of range: refused
            kcc_status st = kcc_character_set_desc(&ch, &bad);
            assert_int_not_equal(st, KCC_OK);
            assert_int_equal(kcc_trace_set_desc(&w, &bad, st), KCC_OK);
        }
        if (i == 150) {
            vec3 spawn = { 0.0f, 2.0f, -3.0f };
            assert_int_equal(kcc_character_init(&ch, &desc, spawn), KCC_OK);
            assert_int_equal(kcc_trace_restart(&w, spawn), KCC_OK);
            vy = 0.0f;
        }
        vy -= 9.81f * dt;
        if (ch.on_ground && i % 50 == 25)
            vy = 4.0f;
        vec3 disp = { 3.0f * dt, vy * dt, (i < 100 ? 2.5f : -1.0f) * dt };
        if (i == 120)
            disp[0] = NAN;
        kcc_move_result r;
        kcc_character_move(&ch, mesh, disp, &r);
        if (r.flags & KCC_MOVE_ON_GROUND && vy < 0.0f)
            vy = 0.0f;
        assert_int_equal(kcc_trace_record(&w, disp, &ch, &r), KCC_OK);
        memcpy(s->live[i], ch.position, sizeof(vec3));
        s->live_flags[i] = r.flags;
    }
    assert_int_equal(kcc_trace_end(&w), KCC_OK);
    s->length = kcc_trace_writer_length(&w);
    assert_int_equal(s->length, strlen(s->text));
}

static void recorded_session_replays_exactly_as_it_ran(void **state)
{
    (void)state;
    kcc_mesh *mesh = make_room();
    session *s = calloc(1, sizeof *s);
    record_session(s, mesh);
    kcc_trace *t = NULL;
    char err[256];
    assert_int_equal(kcc_trace_parse(s->text, s->length, "session.trace", &t, err, sizeof err), KCC_OK);
    assert_int_equal(t->frame_count, SESSION_FRAMES);
    kcc_trace_outcome *o = calloc(t->step_count, sizeof *o);
    kcc_trace_report r;
    assert_int_equal(kcc_trace_replay(t, mesh, 0.0f, o, &r), KCC_OK);
    assert_int_equal(r.diverged, 0);
    assert_int_equal(r.frames, SESSION_FRAMES);
    assert_true(r.max_error == 0.0f);
    uint32_t frame = 0;
    for (uint32_t i = 0; i < t->step_count; ++i) {
        if (t->steps[i].kind != KCC_TRACE_MOVE)
            continue;
        assert_memory_equal(o[i].position, s->live[frame], sizeof(vec3));
        assert_int_equal(o[i].flags, s->live_flags[frame]);
        ++frame;
    }
    assert_true(s->live_flags[120] & KCC_MOVE_BAD_INPUT);
    free(o);
    kcc_trace_free(t);
    free(s);
    kcc_mesh_destroy(mesh);
}

// Line number (1-based) of the n-th line starting with "f " in text, counted independently.
static uint32_t line_of_frame(const char *text, uint32_t n)
{
    uint32_t line = 1, seen = 0;
    for (const char *p = text; *p; ++p) {
        if ((p == text || p[-1] == '\n') && p[0] == 'f' && p[1] == ' ' && seen++ == n)
            return line;
        if (*p == '\n')
            ++line;
    }
    return 0;
}

static uint32_t step_of_frame(const kcc_trace *t, uint32_t n)
{
    for (uint32_t i = 0; i < t->step_count; ++i)
        if (t->steps[i].kind == KCC_TRACE_MOVE && n-- == 0)
            return i;
    return UINT32_MAX;
}

static void tampered_position_is_reported_at_its_frame_with_expected_and_actual(void **state)
{
    (void)state;
    kcc_mesh *mesh = make_room();
    session *s = calloc(1, sizeof *s);
    record_session(s, mesh);
    kcc_trace *t = NULL;
    assert_int_equal(kcc_trace_parse(s->text, s->length, "s.trace", &t, NULL, 0), KCC_OK);
    uint32_t k = step_of_frame(t, 100);
    t->steps[k].expected_position[0] += 0.25f;
    t->steps[step_of_frame(t, 200)].expected_position[2] += 1.0f;
    kcc_trace_report r;
    assert_int_equal(kcc_trace_replay(t, mesh, 0.0f, NULL, &r), KCC_OK);
    assert_int_equal(r.diverged, 2);
    assert_int_equal(r.frame, 100);
    assert_int_equal(r.step, k);
    assert_int_equal(r.line, line_of_frame(s->text, 100));
    assert_true(r.expected_position[0] == s->live[100][0] + 0.25f);
    assert_memory_equal(r.actual_position, s->live[100], sizeof(vec3));
    char msg[512];
    kcc_trace_format_divergence(t, &r, msg, sizeof msg);
    char want[64];
    snprintf(want, sizeof want, "s.trace:%u: frame 100: expected", (unsigned)r.line);
    assert_non_null(strstr(msg, want));
    kcc_trace_free(t);
    free(s);
    kcc_mesh_destroy(mesh);
}

static void tampered_flags_are_reported_with_both_flag_sets(void **state)
{
    (void)state;
    kcc_mesh *mesh = make_room();
    session *s = calloc(1, sizeof *s);
    record_session(s, mesh);
    kcc_trace *t = NULL;
    assert_int_equal(kcc_trace_parse(s->text, s->length, "s.trace", &t, NULL, 0), KCC_OK);
    t->steps[step_of_frame(t, 30)].expected_flags ^= KCC_MOVE_STUCK;
    kcc_trace_report r;
    assert_int_equal(kcc_trace_replay(t, mesh, 1.0f, NULL, &r), KCC_OK);
    assert_int_equal(r.diverged, 1);
    assert_int_equal(r.frame, 30);
    assert_int_equal(r.expected_flags ^ r.actual_flags, KCC_MOVE_STUCK);
    assert_int_equal(r.actual_flags, s->live_flags[30]);
    kcc_trace_free(t);
    free(s);
    kcc_mesh_destroy(mesh);
}

static void tampered_retune_status_is_reported(void **state)
{
    (void)state;
    kcc_mesh *mesh = make_room();
    session *s = calloc(1, sizeof *s);
    record_session(s, mesh);
    kcc_trace *t = NULL;
    assert_int_equal(kcc_trace_parse(s->text, s->length, "s.trace", &t, NULL, 0), KCC_OK);
    uint32_t k = 0;
    while (t->steps[k].kind != KCC_TRACE_SET)
        ++k;
    t->steps[k].expected_status = KCC_ERR_OVERLAP;
    kcc_trace_report r;
    assert_int_equal(kcc_trace_replay(t, mesh, 0.0f, NULL, &r), KCC_OK);
    assert_int_equal(r.diverged, 1);
    assert_int_equal(r.kind, KCC_TRACE_SET);
    assert_int_equal(r.frame, 60);
    assert_int_equal(r.expected_status, KCC_ERR_OVERLAP);
    assert_int_equal(r.actual_status, KCC_OK);
    kcc_trace_free(t);
    free(s);
    kcc_mesh_destroy(mesh);
}

static void tolerance_accepts_errors_within_it_and_reports_larger_ones(void **state)
{
    (void)state;
    kcc_mesh *mesh = make_room();
    session *s = calloc(1, sizeof *s);
    record_session(s, mesh);
    kcc_trace *t = NULL;
    assert_int_equal(kcc_trace_parse(s->text, s->length, "s.trace", &t, NULL, 0), KCC_OK);
    t->steps[step_of_frame(t, 10)].expected_position[1] += 1e-4f;
    kcc_trace_report r;
    assert_int_equal(kcc_trace_replay(t, mesh, 0.0f, NULL, &r), KCC_OK);
    assert_int_equal(r.diverged, 1);
    assert_int_equal(kcc_trace_replay(t, mesh, 1e-3f, NULL, &r), KCC_OK);
    assert_int_equal(r.diverged, 0);
    assert_true(r.max_error > 0.9e-4f && r.max_error < 1.1e-4f);
    t->steps[step_of_frame(t, 11)].expected_position[1] += 1e-2f;
    assert_int_equal(kcc_trace_replay(t, mesh, 1e-3f, NULL, &r), KCC_OK);
    assert_int_equal(r.diverged, 1);
    assert_int_equal(r.frame, 11);
    assert_int_equal(kcc_trace_replay(t, mesh, -1.0f, NULL, &r), KCC_ERR_NON_FINITE);
    assert_int_equal(kcc_trace_replay(t, mesh, NAN, NULL, &r), KCC_ERR_NON_FINITE);
    kcc_trace_free(t);
    free(s);
    kcc_mesh_destroy(mesh);
}

static void rewrite_fills_missing_outcomes_and_keeps_comments(void **state)
{
    (void)state;
    kcc_mesh *mesh = make_room();
    const char *text =
        "kcc-trace 1\n"
        "# hand-written input\n"
        "level gen arena seed=1\n"
        "desc half_extents=0.3,0.9,0.3 step_height=0.35 max_slope_deg=45 up_axis=1 "
        "skin_width=0.002 ground_snap=0.35 max_push_out=0.2\n"
        "start 0 1 0\n"
        "f 0.05 -0.1 0   # first\n"
        "f 0.05 -0.1 0\n"
        "set step_height=0.3\n"
        "f 0.05 -0.1 0 | 1 2 3 | HIT_WALL\n"
        "end 3\n";
    kcc_trace *t = NULL;
    assert_int_equal(kcc_trace_parse(text, strlen(text), "hand.trace", &t, NULL, 0), KCC_OK);
    kcc_trace_outcome o[8];
    kcc_trace_report r;
    assert_int_equal(kcc_trace_replay(t, mesh, 0.0f, o, &r), KCC_OK);
    assert_int_equal(r.diverged, 4);
    assert_true(r.missing_expected);
    assert_int_equal(r.line, 6);
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(kcc_trace_write(t, o, f), KCC_OK);
    long n = ftell(f);
    rewind(f);
    char *back = calloc(1, (size_t)n + 1);
    assert_int_equal(fread(back, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    assert_non_null(strstr(back, "# hand-written input\n"));
    assert_non_null(strstr(back, "f 0.05 -0.1 0 | "));
    assert_non_null(strstr(back, "   # first\n"));
    assert_non_null(strstr(back, "set step_height=0.3 | KCC_OK\n"));
    kcc_trace *t2 = NULL;
    assert_int_equal(kcc_trace_parse(back, (size_t)n, "hand.trace", &t2, NULL, 0), KCC_OK);
    assert_int_equal(kcc_trace_replay(t2, mesh, 0.0f, NULL, &r), KCC_OK);
    assert_int_equal(r.diverged, 0);
    free(back);
    kcc_trace_free(t2);
    kcc_trace_free(t);
    kcc_mesh_destroy(mesh);
}

static void writer_never_overruns_a_small_buffer(void **state)
{
    (void)state;
    char buf[80];
    memset(buf, 'x', sizeof buf);
    kcc_trace_writer w;
    vec3 start = { 0, 1, 0 };
    assert_int_equal(kcc_trace_begin_buffer(&w, buf, 64, "gen arena", NULL, start),
                     KCC_ERR_BUFFER_TOO_SMALL);
    for (size_t i = 64; i < sizeof buf; ++i)
        assert_int_equal(buf[i], 'x');
    assert_int_equal(kcc_trace_end(&w), KCC_ERR_BUFFER_TOO_SMALL);   // sticky
    assert_int_equal(kcc_trace_begin_buffer(&w, buf, 64, "level with no kind", NULL, start),
                     KCC_ERR_BAD_DESC);
    kcc_trace_writer fresh;
    memset(&fresh, 0, sizeof fresh);
    kcc_move_result r;
    memset(&r, 0, sizeof r);
    kcc_character ch;
    assert_int_equal(kcc_character_init(&ch, NULL, start), KCC_OK);
    assert_int_equal(kcc_trace_record(&fresh, start, &ch, &r), KCC_ERR_NULL_ARGUMENT);
}

// ---------------------------------------------------------------------------- bad files

static const char good_head[] =
    "kcc-trace 1\n"
    "level gen arena seed=2\n"
    "desc half_extents=0.3,0.9,0.3 step_height=0.35 max_slope_deg=45 up_axis=1 skin_width=0.002 "
    "ground_snap=0.35 max_push_out=0.2\n"
    "start 0 1 0\n";

// Parses text and checks the status and that the message starts with "bad.trace:LINE: " and
// contains `what`.
static void expect_error(const char *text, kcc_status status, uint32_t line, const char *what)
{
    kcc_trace *t = (kcc_trace *)(uintptr_t)1;   // must stay untouched
    char err[512];
    kcc_status st = kcc_trace_parse(text, strlen(text), "dir/bad.trace", &t, err, sizeof err);
    if (st != status || t != (kcc_trace *)(uintptr_t)1)
        fail_msg("status %s (want %s): %s", kcc_trace_status_name(st), kcc_trace_status_name(status),
                 err);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "dir/bad.trace:%u: ", (unsigned)line);
    if (strncmp(err, prefix, strlen(prefix)) != 0 || !strstr(err, what))
        fail_msg("message '%s' should start with '%s' and mention '%s'", err, prefix, what);
}

static void wrong_version_is_a_version_error_at_line_1(void **state)
{
    (void)state;
    expect_error("kcc-trace 2\nlevel gen arena\n", KCC_ERR_VERSION, 1, "version 2");
}

static void text_that_is_not_a_trace_is_rejected_at_its_first_line(void **state)
{
    (void)state;
    expect_error("\n# comment\nhello world\n", KCC_ERR_PARSE, 3, "not a kcc trace");
    expect_error("", KCC_ERR_PARSE, 1, "empty");
}

static void trace_without_end_line_is_truncated_at_its_last_line(void **state)
{
    (void)state;
    char text[1024];
    snprintf(text, sizeof text, "%sf 0 0 0 | 0 1 0 | -\nf 0 0 0 | 0 1 0 | -\n", good_head);
    expect_error(text, KCC_ERR_PARSE, 6, "truncated");
    expect_error("kcc-trace 1\nlevel gen arena\n", KCC_ERR_PARSE, 2, "'desc'");
}

static void frame_line_cut_mid_way_is_reported_at_that_line(void **state)
{
    (void)state;
    char text[1024];
    snprintf(text, sizeof text, "%sf 0 0 0 | 0 1 0 | -\nf 0 0 0 | 0 1", good_head);
    expect_error(text, KCC_ERR_PARSE, 6, "incomplete frame");
}

static void every_prefix_of_a_trace_fails_cleanly_until_the_end_line(void **state)
{
    (void)state;
    char text[1024];
    int n = snprintf(text, sizeof text, "%sf 0.5 -0.25 1e-3 | 0 1 0 | ON_GROUND|SLID\n"
                     "set step_height=0.2 | KCC_OK\nf 0 0 0 | 0 1 0 | -\nend 2\n", good_head);
    for (int len = 0; len < n - 1; ++len) {
        kcc_trace *t = NULL;
        char err[256] = "";
        kcc_status st = kcc_trace_parse(text, (size_t)len, "p.trace", &t, err, sizeof err);
        assert_int_not_equal(st, KCC_OK);
        assert_null(t);
        assert_int_equal(strncmp(err, "p.trace:", 8), 0);
    }
    kcc_trace *t = NULL;
    assert_int_equal(kcc_trace_parse(text, (size_t)n, "p.trace", &t, NULL, 0), KCC_OK);
    kcc_trace_free(t);
}

static void bad_number_is_reported_with_its_text_and_line(void **state)
{
    (void)state;
    char text[1024];
    snprintf(text, sizeof text, "%sf 0 0 0 | 0 1 0 | -\nf 0 0.1.2 0 | 0 1 0 | -\nend 2\n", good_head);
    expect_error(text, KCC_ERR_PARSE, 6, "'0.1.2'");
    snprintf(text, sizeof text, "%sf 0 0 0 | 0 1e40 0 | -\nend 1\n", good_head);
    expect_error(text, KCC_ERR_PARSE, 5, "'1e40'");
    snprintf(text, sizeof text, "%sf 0 0 0 | 0 nan 0 | -\nend 1\n", good_head);
    expect_error(text, KCC_ERR_PARSE, 5, "finite");
    expect_error("kcc-trace 1\nlevel gen arena\ndesc half_extents=0.3,0.9 step_height=0.35\n",
                 KCC_ERR_PARSE, 3, "half_extents");
}

static void missing_level_file_is_not_found_naming_the_path(void **state)
{
    (void)state;
    expect_error("kcc-trace 1\nlevel obj no_such_level.obj\n", KCC_ERR_NOT_FOUND, 2,
                 "dir/no_such_level.obj");
    expect_error("kcc-trace 1\ndesc step_height=1\n", KCC_ERR_PARSE, 2, "'level'");
}

static void desc_with_a_missing_or_unknown_field_is_rejected(void **state)
{
    (void)state;
    expect_error("kcc-trace 1\nlevel gen arena\ndesc half_extents=0.3,0.9,0.3 step_height=0.35\n",
                 KCC_ERR_PARSE, 3, "missing field 'max_slope_deg'");
    expect_error("kcc-trace 1\nlevel gen arena\ndesc colour=3\n", KCC_ERR_PARSE, 3,
                 "unknown desc field 'colour'");
    expect_error("kcc-trace 1\nlevel gen arena\n"
                 "desc half_extents=0.3,0.9,0.3 step_height=0.35 max_slope_deg=45 up_axis=1 "
                 "skin_width=0.002 ground_snap=0.35 max_push_out=0.2 step_height=1\n",
                 KCC_ERR_PARSE, 3, "twice");
    expect_error("kcc-trace 1\nlevel gen arena\n"
                 "desc half_extents=0.3,0.9,0.3 step_height=0.35 max_slope_deg=95 up_axis=1 "
                 "skin_width=0.002 ground_snap=0.35 max_push_out=0.2\n",
                 KCC_ERR_BAD_DESC, 3, "desc rejected");
}

static void frame_count_mismatch_and_stray_lines_are_rejected(void **state)
{
    (void)state;
    char text[1024];
    snprintf(text, sizeof text, "%sf 0 0 0 | 0 1 0 | -\nend 2\n", good_head);
    expect_error(text, KCC_ERR_PARSE, 6, "'end' says 2");
    snprintf(text, sizeof text, "%sf 0 0 0 | 0 1 0 | -\nend 1\nf 0 0 0\n", good_head);
    expect_error(text, KCC_ERR_PARSE, 7, "after the 'end'");
    snprintf(text, sizeof text, "%sjump 1\nend 0\n", good_head);
    expect_error(text, KCC_ERR_PARSE, 5, "unknown line 'jump'");
    snprintf(text, sizeof text, "%sf 0 0 0 | 0 1 0 | ON_GRUND\nend 1\n", good_head);
    expect_error(text, KCC_ERR_PARSE, 5, "bad flags 'ON_GRUND'");
    snprintf(text, sizeof text, "%sset step_height=0.2 | KCC_MAYBE\nend 0\n", good_head);
    expect_error(text, KCC_ERR_PARSE, 5, "unknown status");
}

static void binary_data_is_rejected_at_its_line(void **state)
{
    (void)state;
    char text[512];
    int n = snprintf(text, sizeof text, "%sf 0 0 0 | 0 1 0 | -\nend 1\n", good_head);
    text[n - 8] = '\0';   // a NUL inside the frame line (line 5)
    kcc_trace *t = NULL;
    char err[256];
    assert_int_equal(kcc_trace_parse(text, (size_t)n, "b.trace", &t, err, sizeof err), KCC_ERR_PARSE);
    assert_int_equal(strncmp(err, "b.trace:5: ", 11), 0);
}

static void missing_trace_file_is_an_io_error_naming_it(void **state)
{
    (void)state;
    kcc_trace *t = NULL;
    char err[256];
    assert_int_equal(kcc_trace_load("/nonexistent/dir/x.trace", &t, err, sizeof err), KCC_ERR_IO);
    assert_null(t);
    assert_int_equal(strncmp(err, "/nonexistent/dir/x.trace: ", 26), 0);
}

static void a_byte_order_mark_at_the_start_is_skipped_and_kept(void **state)
{
    (void)state;
    char text[1024];
    int n = snprintf(text, sizeof text, "\xEF\xBB\xBF%sf 0 0 0 | 0 1 0 | -\nend 1\n", good_head);
    kcc_trace *t = NULL;
    char err[256] = "";
    assert_int_equal(kcc_trace_parse(text, (size_t)n, "bom.trace", &t, err, sizeof err), KCC_OK);
    assert_int_equal(t->frame_count, 1);
    assert_int_equal(t->steps[0].line, 5);
    // rewriting keeps it: the text comes back byte for byte
    char out[1024] = "";
    FILE *f = fmemopen(out, sizeof out, "w");
    assert_non_null(f);
    assert_int_equal(kcc_trace_write(t, NULL, f), KCC_OK);
    fclose(f);
    assert_string_equal(out, text);
    kcc_trace_free(t);
    // a BOM anywhere else is not text the trace format knows
    snprintf(text, sizeof text, "kcc-trace 1\n\xEF\xBB\xBFlevel gen arena\n");
    expect_error(text, KCC_ERR_PARSE, 2, "expected the 'level' line");
}

static void flags_and_separators_read_with_any_spacing(void **state)
{
    (void)state;
    static const char *const frames[] = {
        "f 0.5 0 0 | 0 1 0 | ON_GROUND|SLID",
        "f 0.5 0 0 | 0 1 0 | ON_GROUND | SLID",
        "f 0.5 0 0 | 0 1 0 | ON_GROUND\t|  SLID",
        "f 0.5 0 0|0 1 0|ON_GROUND |SLID",
        "f 0.5 0 0 |0 1 0| ON_GROUND| SLID   # comment",
    };
    for (size_t i = 0; i < sizeof frames / sizeof frames[0]; ++i) {
        char text[1024];
        int n = snprintf(text, sizeof text, "%s%s\nset step_height=0.2|KCC_OK\nend 1\n", good_head,
                         frames[i]);
        kcc_trace *t = NULL;
        char err[256] = "";
        if (kcc_trace_parse(text, (size_t)n, "s.trace", &t, err, sizeof err) != KCC_OK)
            fail_msg("'%s': %s", frames[i], err);
        assert_true(t->steps[0].has_expected);
        assert_int_equal(t->steps[0].expected_flags, KCC_MOVE_ON_GROUND | KCC_MOVE_SLID);
        assert_true(t->steps[0].vec[0] == 0.5f && t->steps[0].expected_position[1] == 1.0f);
        assert_true(t->steps[1].has_expected && t->steps[1].expected_status == KCC_OK);
        kcc_trace_free(t);
    }
    uint32_t f = 0;
    assert_true(kcc_trace_text_to_flags(" ON_GROUND | SLID ", &f));
    assert_int_equal(f, KCC_MOVE_ON_GROUND | KCC_MOVE_SLID);
    assert_false(kcc_trace_text_to_flags("ON_GROUND | | SLID", &f));
    assert_false(kcc_trace_text_to_flags("ON GROUND", &f));
    char text[1024];
    snprintf(text, sizeof text, "%sf 0 0 0 | 0 1 0 | ON_GROUND | \nend 1\n", good_head);
    expect_error(text, KCC_ERR_PARSE, 5, "bad flags 'ON_GROUND |'");
}

static void integers_are_read_whole_or_refused_naming_the_field(void **state)
{
    (void)state;
    char text[1024];
    expect_error("kcc-trace 1x\n", KCC_ERR_PARSE, 1, "bad version '1x'");
    expect_error("kcc-trace 99999999999999999999\n", KCC_ERR_PARSE, 1, "version");
    snprintf(text, sizeof text, "%sf 0 0 0 | 0 1 0 | -\nend 1.0\n", good_head);
    expect_error(text, KCC_ERR_PARSE, 6, "bad frame count '1.0'");
    snprintf(text, sizeof text, "%sf 0 0 0 | 0 1 0 | -\nend -1\n", good_head);
    expect_error(text, KCC_ERR_PARSE, 6, "frame count '-1' is out of range");
    expect_error("kcc-trace 1\nlevel gen arena\ndesc half_extents=0.3,0.9,0.3 step_height=0.35 "
                 "max_slope_deg=45 up_axis=1.0 skin_width=0.002 ground_snap=0.35 max_push_out=0.2\n",
                 KCC_ERR_PARSE, 3, "bad up_axis '1.0'");
}

// ---------------------------------------------------------------------------- files and levels

static void trace_written_to_a_file_replays_on_its_obj_level_next_to_it(void **state)
{
    (void)state;
    char dir[] = "/tmp/kcc_trace_test_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char obj[128], path[128];
    snprintf(obj, sizeof obj, "%s/floor.obj", dir);
    snprintf(path, sizeof path, "%s/walk.trace", dir);
    FILE *f = fopen(obj, "w");
    assert_non_null(f);
    fputs("v -10 0 -10\nv 10 0 -10\nv 10 0 10\nv -10 0 10\nf 1 3 2\nf 1 4 3\n", f);
    fclose(f);

    // Record 90 frames of walking on the floor, as an engine would.
    kcc_level level;
    kcc_mesh *mesh = NULL;
    assert_int_equal(kcc_level_load_obj(obj, &level, NULL, 0), KCC_OK);
    assert_int_equal(kcc_level_build_mesh(&level, &mesh), KCC_OK);
    kcc_level_free(&level);
    kcc_character ch;
    vec3 start = { 0.0f, 1.0f, 0.0f };
    assert_int_equal(kcc_character_init(&ch, NULL, start), KCC_OK);
    f = fopen(path, "w");
    assert_non_null(f);
    kcc_trace_writer w;
    assert_int_equal(kcc_trace_begin(&w, f, "obj floor.obj", NULL, start), KCC_OK);
    vec3 last;
    for (int i = 0; i < 90; ++i) {
        vec3 d = { 0.05f, -0.01f, 0.02f };
        kcc_move_result r;
        kcc_character_move(&ch, mesh, d, &r);
        assert_int_equal(kcc_trace_record(&w, d, &ch, &r), KCC_OK);
    }
    memcpy(last, ch.position, sizeof last);
    assert_int_equal(kcc_trace_end(&w), KCC_OK);
    fclose(f);
    kcc_mesh_destroy(mesh);

    // Load it by path: the level resolves next to the trace; the replay ends where the run did.
    kcc_trace *t = NULL;
    char err[256];
    assert_int_equal(kcc_trace_load(path, &t, err, sizeof err), KCC_OK);
    assert_int_equal(t->level_kind, KCC_TRACE_LEVEL_OBJ);
    assert_string_equal(t->level, obj);
    assert_int_equal(kcc_trace_build_level(t, &mesh, err, sizeof err), KCC_OK);
    kcc_trace_outcome *o = calloc(t->step_count, sizeof *o);
    kcc_trace_report r;
    assert_int_equal(kcc_trace_replay(t, mesh, 0.0f, o, &r), KCC_OK);
    assert_int_equal(r.diverged, 0);
    assert_int_equal(r.frames, 90);
    assert_memory_equal(o[t->step_count - 1].position, last, sizeof last);
    free(o);
    kcc_mesh_destroy(mesh);
    kcc_trace_free(t);
    remove(path);
    remove(obj);
    rmdir(dir);
}

static void unknown_generated_level_is_reported_at_the_level_line(void **state)
{
    (void)state;
    char text[1024];
    snprintf(text, sizeof text, "kcc-trace 1\n\nlevel gen arenna seed=1\n%s", strstr(good_head, "desc "));
    strcat(text, "end 0\n");
    kcc_trace *t = NULL;
    char err[512];
    assert_int_equal(kcc_trace_parse(text, strlen(text), "g.trace", &t, err, sizeof err), KCC_OK);
    kcc_mesh *mesh = NULL;
    assert_int_equal(kcc_trace_build_level(t, &mesh, err, sizeof err), KCC_ERR_NOT_FOUND);
    assert_null(mesh);
    assert_int_equal(strncmp(err, "g.trace:3: level: ", 18), 0);
    assert_non_null(strstr(err, "arenna"));
    kcc_trace_free(t);
}

// FNV-1a 64 over the corners' float bytes, written out here as the reference.
static uint64_t reference_hash(const float *corners, size_t count)
{
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < count; ++i) {
        uint32_t bits = float_bits(corners[i]);
        for (int b = 0; b < 4; ++b)
            h = (h ^ ((bits >> (8 * b)) & 0xffu)) * 1099511628211ull;
    }
    return h;
}

static void level_hash_covers_the_triangles_not_their_indexing(void **state)
{
    (void)state;
    const float shared[] = {0, 0, 0, 1, 0, 0, 0, 0, 1, 1, 0, 1};
    const uint32_t shared_idx[] = {0, 1, 2, 2, 1, 3};
    const float corners[] = {0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 1};
    kcc_level a = {.positions = (float *)shared, .vertex_count = 4,
                   .indices = (uint32_t *)shared_idx, .triangle_count = 2};
    assert_true(kcc_level_hash(&a) == reference_hash(corners, 18));
    const uint32_t soup_idx[] = {0, 1, 2, 3, 4, 5};
    kcc_level b = {.positions = (float *)corners, .vertex_count = 6,
                   .indices = (uint32_t *)soup_idx, .triangle_count = 2};
    assert_true(kcc_level_hash(&b) == kcc_level_hash(&a));
    float moved[12];
    memcpy(moved, shared, sizeof moved);
    moved[10] = 1e-7f;                              // one corner up by 0.1 micrometre
    a.positions = moved;
    assert_true(kcc_level_hash(&a) != kcc_level_hash(&b));
}

static void a_changed_level_is_reported_as_such_not_as_a_divergence(void **state)
{
    (void)state;
    kcc_level level;
    char err[512] = "";
    assert_int_equal(kcc_level_generate("arena seed=1", &level, err, sizeof err), KCC_OK);
    uint64_t hash = kcc_level_hash(&level);
    kcc_level_free(&level);
    char text[2048];
    kcc_trace_writer w;
    vec3 start = {0.0f, 1.0f, 0.0f};
    assert_int_equal(kcc_trace_begin_buffer(&w, text, sizeof text, "gen arena seed=1", NULL, start),
                     KCC_OK);
    assert_int_equal(kcc_trace_level_hash(&w, hash), KCC_OK);
    assert_int_equal(kcc_trace_level_hash(&w, hash), KCC_ERR_BAD_DESC);   // once, right after begin
    assert_int_equal(kcc_trace_end(&w), KCC_OK);
    kcc_trace *t = NULL;
    assert_int_equal(kcc_trace_parse(text, strlen(text), "h.trace", &t, err, sizeof err), KCC_OK);
    assert_true(t->has_level_hash && t->level_hash == hash);
    assert_int_equal(t->level_hash_line, 5);
    kcc_mesh *mesh = NULL;
    assert_int_equal(kcc_trace_build_level(t, &mesh, err, sizeof err), KCC_OK);
    kcc_mesh_destroy(mesh);
    kcc_trace_free(t);
    // the same trace recorded on another version of the level
    char *digits = strstr(text, "level_hash ") + 11;
    digits[15] = digits[15] == '0' ? '1' : '0';
    assert_int_equal(kcc_trace_parse(text, strlen(text), "h.trace", &t, err, sizeof err), KCC_OK);
    mesh = NULL;
    assert_int_equal(kcc_trace_build_level(t, &mesh, err, sizeof err), KCC_ERR_LEVEL_CHANGED);
    assert_null(mesh);
    const char *want = "h.trace:5: level 'arena seed=1' has changed since the trace was recorded";
    assert_int_equal(strncmp(err, want, strlen(want)), 0);
    assert_int_equal(kcc_trace_check_level_hash(t, hash, err, sizeof err), KCC_ERR_LEVEL_CHANGED);
    kcc_trace_free(t);
    // misplaced or malformed hash lines
    char bad[1024];
    snprintf(bad, sizeof bad, "%sf 0 0 0 | 0 1 0 | -\nlevel_hash 0123456789abcdef\nend 1\n", good_head);
    expect_error(bad, KCC_ERR_PARSE, 6, "'level_hash' belongs once");
    snprintf(bad, sizeof bad, "%slevel_hash 0123456789ABCDEF\nend 0\n", good_head);
    expect_error(bad, KCC_ERR_PARSE, 5, "16 lowercase hex digits");
}

static void every_status_has_a_trace_name_that_reads_back(void **state)
{
    (void)state;
    for (int st = 0; st < KCC_STATUS_COUNT; ++st) {
        const char *name = kcc_trace_status_name((kcc_status)st);
        if (strncmp(name, "KCC_", 4) != 0 || strcmp(name, "KCC_STATUS_UNKNOWN") == 0)
            fail_msg("status %d has no trace name (got '%s')", st, name);
        char text[1024];
        snprintf(text, sizeof text, "%sset step_height=0.3 | %s\nend 0\n", good_head, name);
        kcc_trace *t = NULL;
        char err[256] = "";
        assert_int_equal(kcc_trace_parse(text, strlen(text), "s.trace", &t, err, sizeof err), KCC_OK);
        assert_int_equal(t->steps[0].expected_status, st);
        kcc_trace_free(t);
    }
    assert_string_equal(kcc_trace_status_name(KCC_ERR_LEVEL_CHANGED), "KCC_ERR_LEVEL_CHANGED");
}

// ---------------------------------------------------------------------------- kcc_trace_check_file

#define CHECK_FRAMES 60

// A trace file recorded the way an engine records one (with its level's hash) on an OBJ floor
// beside it, in a fresh directory; text holds the trace as written.
typedef struct check_files {
    char dir[64], obj[128], trace[128];
    char text[16384];
} check_files;

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

static const char check_floor_obj[] = "v -10 0 -10\nv 10 0 -10\nv 10 0 10\nv -10 0 10\nf 1 3 2\nf 1 4 3\n";

static void check_files_make(check_files *c)
{
    snprintf(c->dir, sizeof c->dir, "/tmp/kcc_check_test_XXXXXX");
    assert_non_null(mkdtemp(c->dir));
    snprintf(c->obj, sizeof c->obj, "%s/floor.obj", c->dir);
    snprintf(c->trace, sizeof c->trace, "%s/walk.trace", c->dir);
    write_text(c->obj, check_floor_obj);
    kcc_level level;
    kcc_mesh *mesh = NULL;
    assert_int_equal(kcc_level_load_obj(c->obj, &level, NULL, 0), KCC_OK);
    assert_int_equal(kcc_level_build_mesh(&level, &mesh), KCC_OK);
    kcc_character ch;
    vec3 start = {0.0f, 1.0f, 0.0f};
    assert_int_equal(kcc_character_init(&ch, NULL, start), KCC_OK);
    kcc_trace_writer w;
    assert_int_equal(kcc_trace_begin_buffer(&w, c->text, sizeof c->text, "obj floor.obj", NULL, start),
                     KCC_OK);
    assert_int_equal(kcc_trace_level_hash(&w, kcc_level_hash(&level)), KCC_OK);
    kcc_level_free(&level);
    for (int i = 0; i < CHECK_FRAMES; ++i) {
        vec3 d = {0.05f, -0.01f, 0.02f};
        kcc_move_result r;
        kcc_character_move(&ch, mesh, d, &r);
        assert_int_equal(kcc_trace_record(&w, d, &ch, &r), KCC_OK);
    }
    assert_int_equal(kcc_trace_end(&w), KCC_OK);
    kcc_mesh_destroy(mesh);
    write_text(c->trace, c->text);
}

static void check_files_remove(check_files *c, const char *extra)
{
    remove(c->trace);
    remove(c->obj);
    if (extra)
        remove(extra);
    assert_int_equal(rmdir(c->dir), 0);
}

// Writes c's trace with frame `frame`'s line edited to `dir/name`: its expected x position moved
// by dx (m) and, when add_flag is non-NULL, that flag added to its expected flags. Returns the
// edited line's number, found independently of the parser.
static uint32_t write_edited(const check_files *c, const char *name, uint32_t frame, float dx,
                             const char *add_flag, char *path, size_t path_size)
{
    uint32_t line = line_of_frame(c->text, frame);
    assert_true(line > 0);
    const char *at = c->text;
    for (uint32_t l = 1; l < line; ++l)
        at = strchr(at, '\n') + 1;
    const char *eol = strchr(at, '\n');
    char old[256], disp[128], flags[128];
    snprintf(old, sizeof old, "%.*s", (int)(eol - at), at);
    float p[3];
    assert_int_equal(sscanf(old, "f %127[^|]| %f %f %f | %127s", disp, &p[0], &p[1], &p[2], flags), 5);
    char edited[16384];
    snprintf(edited, sizeof edited, "%.*sf %s| %.9g %.9g %.9g | %s%s%s%s", (int)(at - c->text), c->text,
             disp, (double)(p[0] + dx), (double)p[1], (double)p[2], flags, add_flag ? "|" : "",
             add_flag ? add_flag : "", eol);
    snprintf(path, path_size, "%s/%s", c->dir, name);
    write_text(path, edited);
    return line;
}

// kcc_trace_check_file fails with a message that starts with `prefix` and contains `what`.
static void expect_check_fails(const char *path, float tolerance, const char *prefix, const char *what)
{
    char msg[1024] = "x";
    if (kcc_trace_check_file(path, tolerance, msg, sizeof msg))
        fail_msg("%s passed at tolerance %g; expected a failure starting '%s'", path, (double)tolerance,
                 prefix);
    if (strncmp(msg, prefix, strlen(prefix)) != 0 || !strstr(msg, what) || strchr(msg, '\n'))
        fail_msg("message '%s' should be one line starting '%s' and mentioning '%s'", msg, prefix, what);
}

static void a_recorded_trace_file_passes_its_check_with_an_empty_message(void **state)
{
    (void)state;
    check_files *c = calloc(1, sizeof *c);
    check_files_make(c);
    char msg[256] = "not cleared";
    assert_true(kcc_trace_check_file(c->trace, 0.0f, msg, sizeof msg));
    assert_string_equal(msg, "");
    assert_true(kcc_trace_check_file(c->trace, 0.01f, NULL, 0));
    check_files_remove(c, NULL);
    free(c);
}

static void a_position_moved_by_a_millimetre_fails_below_a_millimetre_of_tolerance(void **state)
{
    (void)state;
    check_files *c = calloc(1, sizeof *c);
    check_files_make(c);
    char path[160], prefix[512];
    uint32_t line = write_edited(c, "moved.trace", 20, 0.001f, NULL, path, sizeof path);
    snprintf(prefix, sizeof prefix, "%s:%u: frame 20: expected position", path, (unsigned)line);
    expect_check_fails(path, 0.0f, prefix, ", got (");
    expect_check_fails(path, 1e-4f, prefix, "tolerance 0.0001 m");
    char msg[256] = "x";
    assert_true(kcc_trace_check_file(path, 1e-2f, msg, sizeof msg));
    assert_string_equal(msg, "");
    check_files_remove(c, path);
    free(c);
}

static void a_changed_flag_fails_at_any_tolerance(void **state)
{
    (void)state;
    check_files *c = calloc(1, sizeof *c);
    check_files_make(c);
    char path[160], prefix[512];
    uint32_t line = write_edited(c, "flag.trace", 33, 0.0f, "HIT_CEILING", path, sizeof path);
    snprintf(prefix, sizeof prefix, "%s:%u: frame 33: expected position", path, (unsigned)line);
    expect_check_fails(path, 0.0f, prefix, "HIT_CEILING");
    expect_check_fails(path, 1e-2f, prefix, "HIT_CEILING");
    expect_check_fails(path, 1000.0f, prefix, "HIT_CEILING");
    check_files_remove(c, path);
    free(c);
}

static void a_missing_trace_level_or_changed_level_fails_its_check_saying_so(void **state)
{
    (void)state;
    check_files *c = calloc(1, sizeof *c);
    check_files_make(c);
    char prefix[512], what[512];
    // the trace file itself
    char missing[160];
    snprintf(missing, sizeof missing, "%s/none.trace", c->dir);
    snprintf(prefix, sizeof prefix, "%s: cannot open", missing);
    expect_check_fails(missing, 0.0f, prefix, "No such file");
    // its level, edited by a micrometre: the hash line (after level, desc and start) names it
    write_text(c->obj, "v -10 0.000001 -10\nv 10 0 -10\nv 10 0 10\nv -10 0 10\nf 1 3 2\nf 1 4 3\n");
    snprintf(prefix, sizeof prefix, "%s:5: level '%s' has changed since the trace was recorded",
             c->trace, c->obj);
    expect_check_fails(c->trace, 1000.0f, prefix, "re-record");
    // its level, gone
    remove(c->obj);
    snprintf(prefix, sizeof prefix, "%s:2: ", c->trace);
    snprintf(what, sizeof what, "level file '%s' not found", c->obj);
    expect_check_fails(c->trace, 0.0f, prefix, what);
    check_files_remove(c, NULL);
    free(c);
}

static void a_trace_format_this_library_does_not_read_fails_its_check(void **state)
{
    (void)state;
    check_files *c = calloc(1, sizeof *c);
    check_files_make(c);
    char path[160], prefix[512];
    snprintf(path, sizeof path, "%s/world.trace", c->dir);
    write_text(path, "kcc-trace 3\nlevel obj floor.obj\nend 0\n");
    snprintf(prefix, sizeof prefix, "%s:1: ", path);
    expect_check_fails(path, 0.0f, prefix, "version 3 is not supported");
    write_text(path, "solid cube\nfacet normal 0 0 1\n");
    expect_check_fails(path, 0.0f, prefix, "not a kcc trace");
    check_files_remove(c, path);
    free(c);
}

static void a_check_message_is_cut_to_its_buffer_and_bad_arguments_fail_cleanly(void **state)
{
    (void)state;
    check_files *c = calloc(1, sizeof *c);
    check_files_make(c);
    char path[160], full[1024], cut[17];
    write_edited(c, "moved.trace", 5, 0.5f, NULL, path, sizeof path);
    assert_false(kcc_trace_check_file(path, 0.0f, full, sizeof full));
    memset(cut, 'x', sizeof cut);
    assert_false(kcc_trace_check_file(path, 0.0f, cut, sizeof cut));
    assert_int_equal(strlen(cut), sizeof cut - 1);
    assert_int_equal(strncmp(cut, full, sizeof cut - 1), 0);
    cut[0] = 'x';
    assert_false(kcc_trace_check_file(path, 0.0f, cut, 1));
    assert_int_equal(cut[0], '\0');
    assert_false(kcc_trace_check_file(path, 0.0f, NULL, 0));
    assert_false(kcc_trace_check_file(path, 0.0f, NULL, 64));
    expect_check_fails(c->trace, NAN, c->trace, "tolerance must be");
    expect_check_fails(c->trace, -1.0f, c->trace, "tolerance must be");
    expect_check_fails(NULL, 0.0f, "kcc_trace_check_file: ", "no trace path");
    check_files_remove(c, path);
    free(c);
}

static void mutated_traces_never_crash_and_errors_name_the_file(void **state)
{
    (void)state;
    kcc_mesh *mesh = make_room();
    session *s = calloc(1, sizeof *s);
    record_session(s, mesh);
    size_t n = s->length;
    char *buf = malloc(n + 64);
    static const char junk[] = "|#\n\r\t 0-.e9xnaifKCC_ON_GROUND=,";
    uint32_t seed = 12345u;
    int parsed = 0;
    for (int iter = 0; iter < 1500; ++iter) {
        memcpy(buf, s->text, n);
        size_t len = n;
        int edits = 1 + (int)(rng_next(&seed) % 4);
        for (int e = 0; e < edits; ++e) {
            size_t at = rng_next(&seed) % len;
            switch (rng_next(&seed) % 4) {
            case 0: buf[at] = junk[rng_next(&seed) % (sizeof junk - 1)]; break;   // replace
            case 1: buf[at] = (char)(rng_next(&seed) & 0xff); break;              // any byte
            case 2: len = at + 1; break;                                            // truncate
            default:                                                                // delete
                memmove(buf + at, buf + at + 1, len - at - 1);
                len--;
                break;
            }
        }
        kcc_trace *t = NULL;
        char err[256] = "";
        kcc_status st = kcc_trace_parse(buf, len, "m.trace", &t, err, sizeof err);
        if (st != KCC_OK) {
            assert_null(t);
            assert_int_equal(strncmp(err, "m.trace:", 8), 0);
            continue;
        }
        ++parsed;
        kcc_trace_report r;
        assert_int_equal(kcc_trace_replay(t, mesh, 0.0f, NULL, &r), KCC_OK);
        assert_int_equal(r.frames, t->frame_count);
        kcc_trace_free(t);
    }
    assert_true(parsed > 0 && parsed < 1500);   // some edits leave a valid trace, most do not
    free(buf);
    free(s);
    kcc_mesh_destroy(mesh);
}

int test_group_trace(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(floats_read_back_bit_exactly_from_their_text),
        cmocka_unit_test(float_text_is_short_when_a_short_text_is_exact),
        cmocka_unit_test(float_reader_rejects_malformed_numbers),
        cmocka_unit_test(flags_round_trip_by_name_and_by_hex),
        cmocka_unit_test(trace_names_every_desc_field),
        cmocka_unit_test(recorded_session_replays_exactly_as_it_ran),
        cmocka_unit_test(tampered_position_is_reported_at_its_frame_with_expected_and_actual),
        cmocka_unit_test(tampered_flags_are_reported_with_both_flag_sets),
        cmocka_unit_test(tampered_retune_status_is_reported),
        cmocka_unit_test(tolerance_accepts_errors_within_it_and_reports_larger_ones),
        cmocka_unit_test(rewrite_fills_missing_outcomes_and_keeps_comments),
        cmocka_unit_test(writer_never_overruns_a_small_buffer),
        cmocka_unit_test(wrong_version_is_a_version_error_at_line_1),
        cmocka_unit_test(text_that_is_not_a_trace_is_rejected_at_its_first_line),
        cmocka_unit_test(trace_without_end_line_is_truncated_at_its_last_line),
        cmocka_unit_test(frame_line_cut_mid_way_is_reported_at_that_line),
        cmocka_unit_test(every_prefix_of_a_trace_fails_cleanly_until_the_end_line),
        cmocka_unit_test(bad_number_is_reported_with_its_text_and_line),
        cmocka_unit_test(missing_level_file_is_not_found_naming_the_path),
        cmocka_unit_test(desc_with_a_missing_or_unknown_field_is_rejected),
        cmocka_unit_test(frame_count_mismatch_and_stray_lines_are_rejected),
        cmocka_unit_test(binary_data_is_rejected_at_its_line),
        cmocka_unit_test(missing_trace_file_is_an_io_error_naming_it),
        cmocka_unit_test(trace_written_to_a_file_replays_on_its_obj_level_next_to_it),
        cmocka_unit_test(unknown_generated_level_is_reported_at_the_level_line),
        cmocka_unit_test(a_byte_order_mark_at_the_start_is_skipped_and_kept),
        cmocka_unit_test(flags_and_separators_read_with_any_spacing),
        cmocka_unit_test(integers_are_read_whole_or_refused_naming_the_field),
        cmocka_unit_test(level_hash_covers_the_triangles_not_their_indexing),
        cmocka_unit_test(a_changed_level_is_reported_as_such_not_as_a_divergence),
        cmocka_unit_test(every_status_has_a_trace_name_that_reads_back),
        cmocka_unit_test(a_recorded_trace_file_passes_its_check_with_an_empty_message),
        cmocka_unit_test(a_position_moved_by_a_millimetre_fails_below_a_millimetre_of_tolerance),
        cmocka_unit_test(a_changed_flag_fails_at_any_tolerance),
        cmocka_unit_test(a_missing_trace_level_or_changed_level_fails_its_check_saying_so),
        cmocka_unit_test(a_trace_format_this_library_does_not_read_fails_its_check),
        cmocka_unit_test(a_check_message_is_cut_to_its_buffer_and_bad_arguments_fail_cleanly),
        cmocka_unit_test(mutated_traces_never_crash_and_errors_name_the_file),
    };
    return KCC_RUN_GROUP("trace", tests);
}
