/* test_level.c: the OBJ and .spawns readers (hand-written files against hand-known triangles,
 * every error with its line number), the float parser (bit-exact round trips), the shared
 * levels' published counts, and the procedural levels (deterministic, spawns standing free
 * above a floor, enclosed, the showcase layout where docs/levels.md puts it). */
#define _POSIX_C_SOURCE 200809L   /* mkdtemp for scratch files */
#include "test.h"

#include <float.h>
#include <stdlib.h>
#include <unistd.h>

#include "level_internal.h"

/* ---------------------------------------------------------------------------- helpers */

static kcc_status parse(const char *text, kcc_level *out, char *err, size_t err_size)
{
    return kcc_level_parse_obj(text, strlen(text), out, err, err_size);
}

static void assert_triangles(const kcc_level *l, const uint32_t *expect, uint32_t count)
{
    assert_int_equal(l->triangle_count, count);
    for (uint32_t i = 0; i < 3 * count; ++i)
        assert_int_equal(l->indices[i], expect[i]);
}

/* Expects the parse to fail with status st and a message containing want. */
static void expect_error(const char *text, size_t len, kcc_status st, const char *want)
{
    kcc_level l;
    memset(&l, 0xab, sizeof(l));
    kcc_level before = l;
    char err[256] = "";
    kcc_status got = kcc_level_parse_obj(text, len, &l, err, sizeof(err));
    if (got != st || !strstr(err, want))
        fail_msg("input \"%.40s\": got %s \"%s\", want %s \"%s\"", text, kcc_status_str(got), err,
                 kcc_status_str(st), want);
    assert_memory_equal(&l, &before, sizeof(l));   /* outputs untouched on failure */
}

static float bits_float(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof(f));
    return f;
}

static uint32_t float_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof(b));
    return b;
}

/* ---------------------------------------------------------------------------- OBJ reader */

static void triangle_file_reads_back_its_vertices_and_indices(void **state)
{
    (void)state;
    kcc_level l;
    assert_int_equal(parse("v 0 0 0\nv 1.5 -2 3.25\nv 0 0 1e-3\nf 1 2 3\n", &l, NULL, 0), KCC_OK);
    const float pos[9] = {0, 0, 0, 1.5f, -2.0f, 3.25f, 0, 0, 0.001f};
    assert_int_equal(l.vertex_count, 3);
    assert_memory_equal(l.positions, pos, sizeof(pos));
    const uint32_t tri[3] = {0, 1, 2};
    assert_triangles(&l, tri, 1);
    assert_int_equal(l.spawn_count, 0);
    kcc_level_free(&l);
}

static void polygons_are_fan_triangulated_around_their_first_vertex(void **state)
{
    (void)state;
    kcc_level l;
    const char *t = "v 0 0 0\nv 1 0 0\nv 1 0 1\nv 0 0 1\nv -1 0 0.5\n"
                    "f 1 2 3 4\nf 5 4 3 2 1\n";
    assert_int_equal(parse(t, &l, NULL, 0), KCC_OK);
    const uint32_t tri[] = {0, 1, 2, 0, 2, 3, 4, 3, 2, 4, 2, 1, 4, 1, 0};
    assert_triangles(&l, tri, 5);
    kcc_level_free(&l);
}

static void negative_indices_count_back_from_the_last_vertex_so_far(void **state)
{
    (void)state;
    kcc_level l;
    const char *t = "v 0 0 0\nv 1 0 0\nv 0 0 1\nf -3 -2 -1\n"
                    "v 5 0 0\nv 6 0 0\nf -1 -5 -2\nf 1 -1 3\n";
    assert_int_equal(parse(t, &l, NULL, 0), KCC_OK);
    const uint32_t tri[] = {0, 1, 2, 4, 0, 3, 0, 4, 2};
    assert_triangles(&l, tri, 3);
    kcc_level_free(&l);
}

static void positive_indices_may_refer_to_vertices_defined_later(void **state)
{
    (void)state;
    kcc_level l;
    assert_int_equal(parse("f 1 2 3\nv 0 0 0\nv 1 0 0\nv 0 0 1\n", &l, NULL, 0), KCC_OK);
    const uint32_t tri[3] = {0, 1, 2};
    assert_triangles(&l, tri, 1);
    kcc_level_free(&l);
}

static void slash_forms_use_the_position_index(void **state)
{
    (void)state;
    const char *forms[] = {"f 1/7 2/8 3/9\n", "f 1//4 2//5 3//6\n", "f 1/7/4 2/8/5 3/9/6\n",
                           "f 1/-1/-1 2//-2 3/1\n"};
    for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); ++i) {
        char text[128];
        snprintf(text, sizeof(text), "v 0 0 0\nv 1 0 0\nv 0 0 1\n%s", forms[i]);
        kcc_level l;
        assert_int_equal(parse(text, &l, NULL, 0), KCC_OK);
        const uint32_t tri[3] = {0, 1, 2};
        assert_triangles(&l, tri, 1);
        kcc_level_free(&l);
    }
}

static void other_statements_blank_lines_and_comments_are_ignored(void **state)
{
    (void)state;
    const char *t = "# a comment\n\nmtllib x.mtl\no thing\ng group\ns 1\nusemtl stone\n"
                    "vn 0 1 0\nvt 0.5 0.5\nvp 0.1\nv 0 0 0 # trailing comment\n"
                    "v 1 0 0 1.0\nv 0 0 1 0.2 0.4 0.6\nl 1 2\nf 1 2 3 # done\n"
                    "#v 9 9 9\n# f 1 1 1\nvertex 1 2 3\nfoo\n";
    kcc_level l;
    assert_int_equal(parse(t, &l, NULL, 0), KCC_OK);
    assert_int_equal(l.vertex_count, 3);
    const float pos[9] = {0, 0, 0, 1, 0, 0, 0, 0, 1};
    assert_memory_equal(l.positions, pos, sizeof(pos));
    const uint32_t tri[3] = {0, 1, 2};
    assert_triangles(&l, tri, 1);
    kcc_level_free(&l);
}

static void crlf_tabs_and_a_missing_final_newline_are_accepted(void **state)
{
    (void)state;
    const char *t = "v\t0 0 0\r\nv 1\t\t0 0 \r\n  v 0 0 1\r\n\tf 1 2 3";
    kcc_level l;
    assert_int_equal(parse(t, &l, NULL, 0), KCC_OK);
    assert_int_equal(l.vertex_count, 3);
    assert_int_equal(l.triangle_count, 1);
    kcc_level_free(&l);
    /* line numbers count CRLF, LF and a lone CR as one line end each */
    const char *crlf = "v 0 0 0\r\n\r\nv 1\r\n", *cr = "v 0 0 0\rv 1 0 0\rv 1 2\r";
    expect_error(crlf, strlen(crlf), KCC_ERR_PARSE, "line 3: expected 3 coordinates");
    expect_error(cr, strlen(cr), KCC_ERR_PARSE, "line 3: expected 3 coordinates");
}

static void empty_text_is_an_empty_level(void **state)
{
    (void)state;
    kcc_level l;
    assert_int_equal(kcc_level_parse_obj("", 0, &l, NULL, 0), KCC_OK);
    assert_int_equal(l.vertex_count, 0);
    assert_int_equal(l.triangle_count, 0);
    kcc_level_free(&l);
    assert_int_equal(kcc_level_parse_obj(NULL, 0, &l, NULL, 0), KCC_OK);
    kcc_level_free(&l);
}

static void malformed_files_fail_with_the_line_and_the_reason(void **state)
{
    (void)state;
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"v 1 2\n", "line 1: expected 3 coordinates"},
        {"v\n", "line 1: expected 3 coordinates"},
        {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n", "line 4: face index 0 is invalid"},
        {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n",
         "line 4: face index 4 is out of range (the file has 3 vertices)"},
        {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 9\nv 1 1 1\nf 1 2 5\n",
         "line 4: face index 9 is out of range"},
        {"v 0 0 0\nv 1 0 0\nv 0 1 0\n\nf -1 -2 -4\n", "line 5: face index -4 is out of range"},
        {"v 0 0 0\nv 1 0 0\nf 1 2\n", "line 3: face with fewer than 3 vertices"},
        {"v 0 0 0\nf\n", "line 2: face with fewer than 3 vertices"},
        {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 x\n", "line 4: bad face vertex 'x'"},
        {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3/4/5/6\n", "line 4: bad face vertex '3/4/5/6'"},
        {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3/\n", "line 4: bad face vertex"},
        {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3//\n", "line 4: bad face vertex"},
        {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 1.5\n", "line 4: bad face vertex"},
        {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 99999999999999999999\n",
         "line 4: face index 99999999999999999999 is out of range"},
        {"v 1e39 0 0\n", "line 1: number '1e39' is out of range"},
        {"v 0 -3.5e38 0\n", "line 1: number '-3.5e38' is out of range"},
        {"v 0 0 1e999999999999\n", "line 1: number '1e999999999999' is out of range"},
        {"v nan 0 0\n", "line 1: 'nan' is not a finite number"},
        {"v 0 -inf 0\n", "line 1: '-inf' is not a finite number"},
        {"v 0 0 Infinity\n", "line 1: 'Infinity' is not a finite number"},
        {"v 1.0.0 0 0\n", "line 1: '1.0.0' is not a number"},
        {"v 1,5 0 0\n", "line 1: '1,5' is not a number"},
        {"v 0x10 0 0\n", "line 1: '0x10' is not a number"},
        {"v 1e 0 0\n", "line 1: '1e' is not a number"},
        {"v . 0 0\n", "line 1: '.' is not a number"},
        {"v - 0 0\n", "line 1: '-' is not a number"},
        {"v 1 2 3 4 5 6 7 8\n", "line 1: too many numbers"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i)
        expect_error(cases[i].text, strlen(cases[i].text), KCC_ERR_PARSE, cases[i].want);
}

static void embedded_nul_bytes_are_data_not_the_end_of_the_text(void **state)
{
    (void)state;
    /* a NUL inside a number is an error on its line; inside a comment it is ignored */
    const char bad[] = "v 0 0 0\nv 1\0 0 0\n";
    expect_error(bad, sizeof(bad) - 1, KCC_ERR_PARSE, "line 2: '1?' is not a number");
    const char ok[] = "# \0 comment\nv 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 3\n";
    kcc_level l;
    assert_int_equal(kcc_level_parse_obj(ok, sizeof(ok) - 1, &l, NULL, 0), KCC_OK);
    assert_int_equal(l.triangle_count, 1);
    kcc_level_free(&l);
    /* the length is honoured: text after it is never read */
    const char cut[] = "v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 3\nf 1 2 9";
    assert_int_equal(kcc_level_parse_obj(cut, strlen(cut) - 8, &l, NULL, 0), KCC_OK);
    assert_int_equal(l.triangle_count, 1);
    kcc_level_free(&l);
}

static void counts_beyond_the_limits_fail_as_too_large(void **state)
{
    (void)state;
    kcc_level l;
    char err[128];
    const char *t = "v 0 0 0\nv 1 0 0\nv 0 0 1\nv 1 0 1\nf 1 2 4 3\nf 1 2 3\n";
    assert_int_equal(kcc_level_parse_obj_limited(t, strlen(t), &l, err, sizeof(err), 16, 2),
                     KCC_ERR_TOO_LARGE);
    assert_string_equal(err, "line 6: more than 2 triangles");
    assert_int_equal(kcc_level_parse_obj_limited(t, strlen(t), &l, err, sizeof(err), 3, 16),
                     KCC_ERR_TOO_LARGE);
    assert_string_equal(err, "line 4: more than 3 vertices");
    assert_int_equal(kcc_level_parse_obj_limited(t, strlen(t), &l, err, sizeof(err), 4, 3),
                     KCC_OK);
    kcc_level_free(&l);
}

static void error_messages_are_truncated_to_the_buffer(void **state)
{
    (void)state;
    kcc_level l;
    char err[8];
    memset(err, 'x', sizeof(err));
    assert_int_equal(parse("v 1 2\n", &l, err, sizeof(err)), KCC_ERR_PARSE);
    assert_string_equal(err, "line 1:");
    assert_int_equal(parse("v 1 2\n", &l, NULL, 0), KCC_ERR_PARSE);
    assert_int_equal(kcc_level_parse_obj("v", 1, NULL, NULL, 0), KCC_ERR_NULL_ARGUMENT);
}

/* ---------------------------------------------------------------------------- numbers */

static void decimal_numbers_round_to_the_nearest_float(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        uint32_t bits;
    } cases[] = {
        {"0.1", 0x3dcccccdu},            {"-0.1", 0xbdcccccdu},
        {"1", 0x3f800000u},              {"+1.", 0x3f800000u},
        {".5", 0x3f000000u},             {"-0", 0x80000000u},
        {"0e99999", 0x00000000u},        {"16777217", 0x4b800000u},     /* tie: to even */
        {"16777219", 0x4b800002u},       {"16777218.0000000000000000001", 0x4b800001u},
        {"3.40282347e38", 0x7f7fffffu},  {"3.4028235677973366e38", 0x7f7fffffu},
        {"1.17549435e-38", 0x00800000u}, {"1.40129846e-45", 0x00000001u},
        {"7.1e-46", 0x00000001u},        {"7e-46", 0x00000000u},        /* below half of 2^-149 */
        {"1e-400", 0x00000000u},         {"0.000001", 0x358637bdu},
        {"123456789012345678901234567890", 0x6fc77488u},
        {"1.00000005960464477539062500000000001", 0x3f800001u},      /* just above a tie */
        {"1.000000059604644775390625", 0x3f800000u},                 /* exact tie: to even */
        {"0.000000000000000000000000000000000000000000000000000000000001e60", 0x3f800000u},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        float f = -1.0f;
        const char *t = cases[i].text;
        assert_int_equal(kcc_parse_float(t, t + strlen(t), &f), KCC_NUM_OK);
        if (float_bits(f) != cases[i].bits)
            fail_msg("%s read as 0x%08x, want 0x%08x", t, (unsigned)float_bits(f),
                     (unsigned)cases[i].bits);
    }
    float f;
    const char *big = "3.4028236e38";    /* past FLT_MAX + half an ulp */
    assert_int_equal(kcc_parse_float(big, big + strlen(big), &f), KCC_NUM_RANGE);
}

static void megabyte_mantissas_and_exponents_cancel_exactly(void **state)
{
    (void)state;
    enum { ZEROS = 1100000 };                       /* more digits than a 6-digit exponent */
    char *b = malloc(ZEROS + 32);
    assert_non_null(b);
    float f = -1.0f;
    b[0] = '1';                                     /* 1 000...000 e-1099990 = 1e10 */
    memset(b + 1, '0', ZEROS);
    strcpy(b + 1 + ZEROS, "e-1099990");
    assert_int_equal(kcc_parse_float(b, b + strlen(b), &f), KCC_NUM_OK);
    assert_true(f == 1e10f);
    memcpy(b, "0.", 2);                             /* 0.000...0001 e1099990 = 1e-11 */
    memset(b + 2, '0', ZEROS);
    strcpy(b + 2 + ZEROS, "1e1099990");
    assert_int_equal(kcc_parse_float(b, b + strlen(b), &f), KCC_NUM_OK);
    assert_true(f == 1e-11f);
    free(b);
}

static void floats_printed_with_9_digits_read_back_bit_exactly(void **state)
{
    (void)state;
    uint64_t s = 0x853c49e6748fea9bull;
    char buf[64];
    for (int i = 0; i < 100000; ++i) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t b = (uint32_t)(s >> 32);
        if ((b & 0x7f800000u) == 0x7f800000u)
            continue;                               /* inf / nan */
        float f = bits_float(b);
        int n = snprintf(buf, sizeof(buf), "%.9g", (double)f);
        float g = 0.0f;
        assert_int_equal(kcc_parse_float(buf, buf + n, &g), KCC_NUM_OK);
        if (float_bits(g) != b)
            fail_msg("%s read as 0x%08x, want 0x%08x", buf, (unsigned)float_bits(g), (unsigned)b);
    }
}

/* ---------------------------------------------------------------------------- files */

typedef struct scratch {
    char dir[64];
} scratch;

static void scratch_make(scratch *s)
{
    snprintf(s->dir, sizeof(s->dir), "/tmp/kcc_test_level_XXXXXX");
    assert_non_null(mkdtemp(s->dir));
}

static void scratch_write(const scratch *s, const char *name, const char *text, char *path,
                          size_t path_size)
{
    snprintf(path, path_size, "%s/%s", s->dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void scratch_remove(const scratch *s, const char *const *names, int n)
{
    char path[128];
    for (int i = 0; i < n; ++i) {
        snprintf(path, sizeof(path), "%s/%s", s->dir, names[i]);
        remove(path);
    }
    rmdir(s->dir);
}

static void loading_a_file_reads_the_spawns_file_beside_it(void **state)
{
    (void)state;
    scratch s;
    scratch_make(&s);
    char obj[128], sp[128];
    scratch_write(&s, "room.obj", "v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 3\n", obj, sizeof(obj));
    scratch_write(&s, "room.spawns", "1 2 3\r\n# comment\n\n-4.5 0.25 6e1", sp, sizeof(sp));
    kcc_level l;
    char err[256] = "";
    assert_int_equal(kcc_level_load_obj(obj, &l, err, sizeof(err)), KCC_OK);
    assert_int_equal(l.triangle_count, 1);
    assert_int_equal(l.spawn_count, 2);
    const float want[6] = {1, 2, 3, -4.5f, 0.25f, 60.0f};
    assert_memory_equal(l.spawns, want, sizeof(want));
    kcc_level_free(&l);
    const char *names[] = {"room.obj", "room.spawns"};
    scratch_remove(&s, names, 2);
}

static void a_file_without_spawns_file_has_no_spawns(void **state)
{
    (void)state;
    scratch s;
    scratch_make(&s);
    char obj[128];
    scratch_write(&s, "bare", "v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 3\n", obj, sizeof(obj));
    kcc_level l;
    assert_int_equal(kcc_level_load_obj(obj, &l, NULL, 0), KCC_OK);
    assert_int_equal(l.spawn_count, 0);
    assert_null(l.spawns);
    kcc_level_free(&l);
    const char *names[] = {"bare"};
    scratch_remove(&s, names, 1);
}

static void file_errors_name_the_file_and_line(void **state)
{
    (void)state;
    scratch s;
    scratch_make(&s);
    char obj[128], sp[128], want[256], err[256];
    kcc_level l;
    scratch_write(&s, "bad.obj", "v 0 0 0\nf 1 1 0\n", obj, sizeof(obj));
    assert_int_equal(kcc_level_load_obj(obj, &l, err, sizeof(err)), KCC_ERR_PARSE);
    snprintf(want, sizeof(want), "%s:2: face index 0 is invalid", obj);
    assert_non_null(strstr(err, want));

    scratch_write(&s, "good.obj", "v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 3\n", obj, sizeof(obj));
    scratch_write(&s, "good.spawns", "1 2 3\n4 5\n", sp, sizeof(sp));
    assert_int_equal(kcc_level_load_obj(obj, &l, err, sizeof(err)), KCC_ERR_PARSE);
    snprintf(want, sizeof(want), "%s:2: expected 3 coordinates", sp);
    assert_non_null(strstr(err, want));
    scratch_write(&s, "good.spawns", "1 2 3 4\n", sp, sizeof(sp));
    assert_int_equal(kcc_level_load_obj(obj, &l, err, sizeof(err)), KCC_ERR_PARSE);
    snprintf(want, sizeof(want), "%s:1: too many numbers", sp);
    assert_non_null(strstr(err, want));

    snprintf(obj, sizeof(obj), "%s/missing.obj", s.dir);
    assert_int_equal(kcc_level_load_obj(obj, &l, err, sizeof(err)), KCC_ERR_IO);
    snprintf(want, sizeof(want), "%s: cannot open", obj);
    assert_string_equal(err, want);
    assert_int_equal(kcc_level_load_obj(s.dir, &l, err, sizeof(err)), KCC_ERR_IO);  /* a dir */
    snprintf(want, sizeof(want), "%s: read error", s.dir);
    assert_string_equal(err, want);
    assert_int_equal(kcc_level_load_obj(NULL, &l, err, sizeof(err)), KCC_ERR_NULL_ARGUMENT);
    const char *names[] = {"bad.obj", "good.obj", "good.spawns"};
    scratch_remove(&s, names, 3);
}

static void shared_levels_load_with_their_published_counts(void **state)
{
    (void)state;
    /* /work/shared/levels/README.md */
    static const uint32_t triangles[5] = {4032, 6258, 8640, 16190, 32444};
    static const uint32_t spawns[5] = {37, 8, 7, 25, 48};
    int found = 0;
    for (int i = 0; i < 5; ++i) {
        const char *path = kcc_test_shared_level(i);
        if (!path)
            continue;
        found++;
        kcc_level l;
        char err[512] = "";
        assert_int_equal(kcc_level_load_obj(path, &l, err, sizeof(err)), KCC_OK);
        assert_int_equal(l.triangle_count, triangles[i]);
        assert_int_equal(l.spawn_count, spawns[i]);
        for (uint32_t k = 0; k < 3u * l.triangle_count; ++k)
            assert_true(l.indices[k] < l.vertex_count);
        kcc_level_free(&l);
    }
    if (!found)
        skip();
}

/* ---------------------------------------------------------------------------- generators */

static const char *const gen_specs[] = {
    "arena", "arena seed=1 size=24", "terrain seed=3 size=32", "showcase", "flat size=8",
};

static void every_named_level_is_the_same_bit_for_bit_each_time(void **state)
{
    (void)state;
    const char *const *names = kcc_level_names();
    int n = 0;
    for (; names[n]; ++n) {
        kcc_level a, b;
        char err[128];
        assert_int_equal(kcc_level_generate(names[n], &a, err, sizeof(err)), KCC_OK);
        assert_int_equal(kcc_level_generate(names[n], &b, err, sizeof(err)), KCC_OK);
        assert_true(a.triangle_count > 0);
        assert_true(a.spawn_count > 0);
        assert_int_equal(a.vertex_count, b.vertex_count);
        assert_int_equal(a.triangle_count, b.triangle_count);
        assert_int_equal(a.spawn_count, b.spawn_count);
        assert_memory_equal(a.positions, b.positions, 12u * a.vertex_count);
        assert_memory_equal(a.indices, b.indices, 12u * a.triangle_count);
        assert_memory_equal(a.spawns, b.spawns, 12u * a.spawn_count);
        for (uint32_t k = 0; k < 3u * a.triangle_count; ++k)
            assert_true(a.indices[k] < a.vertex_count);
        kcc_level_free(&a);
        kcc_level_free(&b);
    }
    assert_true(n >= 3);
}

static void different_seeds_give_different_arenas(void **state)
{
    (void)state;
    kcc_level a, b;
    assert_int_equal(kcc_level_generate("arena seed=1", &a, NULL, 0), KCC_OK);
    assert_int_equal(kcc_level_generate("arena seed=2", &b, NULL, 0), KCC_OK);
    assert_true(a.vertex_count != b.vertex_count ||
                memcmp(a.positions, b.positions, 12u * a.vertex_count) != 0);
    /* ~2-10k triangles at the default size */
    assert_true(a.triangle_count >= 2000 && a.triangle_count <= 10000);
    kcc_level_free(&a);
    kcc_level_free(&b);
}

static void unknown_names_and_keys_are_not_found_and_bad_values_are_bad_desc(void **state)
{
    (void)state;
    static const struct {
        const char *spec;
        kcc_status st;
        const char *want;
    } cases[] = {
        {"castle", KCC_ERR_NOT_FOUND, "unknown level 'castle'"},
        {"", KCC_ERR_NOT_FOUND, "unknown level ''"},
        {"arena colour=red", KCC_ERR_NOT_FOUND, "unknown parameter 'colour'"},
        {"showcase seed=1", KCC_ERR_NOT_FOUND, "unknown parameter 'seed'"},
        {"arena seed=x", KCC_ERR_BAD_DESC, "seed=x"},
        {"arena seed=-1", KCC_ERR_BAD_DESC, "seed=-1"},
        {"arena seed=18446744073709551616", KCC_ERR_BAD_DESC, "seed"},
        {"arena size=8", KCC_ERR_BAD_DESC, "size must be an integer from 16 to 256"},
        {"terrain size=1e9", KCC_ERR_BAD_DESC, "size"},
        {"showcase scale=0", KCC_ERR_BAD_DESC, "scale"},
        {"showcase scale=nan", KCC_ERR_BAD_DESC, "scale"},
        {"arena seed", KCC_ERR_BAD_DESC, "expected key=value"},
        {"arena seed=1 seed=2", KCC_ERR_BAD_DESC, "given twice"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        kcc_level l;
        memset(&l, 0xcd, sizeof(l));
        kcc_level before = l;
        char err[256] = "";
        kcc_status st = kcc_level_generate(cases[i].spec, &l, err, sizeof(err));
        if (st != cases[i].st || !strstr(err, cases[i].want))
            fail_msg("\"%s\": got %s \"%s\"", cases[i].spec, kcc_status_str(st), err);
        assert_memory_equal(&l, &before, sizeof(l));
    }
    assert_int_equal(kcc_level_generate(NULL, NULL, NULL, 0), KCC_ERR_NULL_ARGUMENT);
}

static void showcase_scale_multiplies_every_coordinate(void **state)
{
    (void)state;
    kcc_level a, b;
    assert_int_equal(kcc_level_generate("showcase", &a, NULL, 0), KCC_OK);
    assert_int_equal(kcc_level_generate("showcase scale=2", &b, NULL, 0), KCC_OK);
    assert_int_equal(a.vertex_count, b.vertex_count);
    for (uint32_t i = 0; i < 3u * a.vertex_count; ++i)
        assert_true(b.positions[i] == 2.0f * a.positions[i]);   /* exact: a power of two */
    for (uint32_t i = 0; i < 3u * a.spawn_count; ++i)
        assert_true(b.spawns[i] == 2.0f * a.spawns[i]);
    kcc_level_free(&a);
    kcc_level_free(&b);
}

/* Every triangle of every generated solid is wound counter-clockwise seen from outside: checked
 * independently by the closed-surface signed volume, which is positive only for outward faces. */
static void generated_levels_have_positive_volume(void **state)
{
    (void)state;
    for (size_t s = 0; s < sizeof(gen_specs) / sizeof(gen_specs[0]); ++s) {
        kcc_level l;
        assert_int_equal(kcc_level_generate(gen_specs[s], &l, NULL, 0), KCC_OK);
        if (strncmp(gen_specs[s], "terrain", 7) == 0) {
            kcc_level_free(&l);
            continue;                                   /* an open heightfield */
        }
        double vol = 0.0;
        for (uint32_t t = 0; t < l.triangle_count; ++t) {
            const float *a = l.positions + 3u * l.indices[3 * t];
            const float *b = l.positions + 3u * l.indices[3 * t + 1];
            const float *c = l.positions + 3u * l.indices[3 * t + 2];
            vol += ((double)a[0] * ((double)b[1] * c[2] - (double)b[2] * c[1]) -
                    (double)a[1] * ((double)b[0] * c[2] - (double)b[2] * c[0]) +
                    (double)a[2] * ((double)b[0] * c[1] - (double)b[1] * c[0])) / 6.0;
        }
        assert_true(vol > 0.0);
        kcc_level_free(&l);
    }
}

static void spawn_points_stand_free_just_above_a_floor(void **state)
{
    (void)state;
    for (size_t s = 0; s < sizeof(gen_specs) / sizeof(gen_specs[0]); ++s) {
        kcc_level l;
        kcc_mesh *m = NULL;
        assert_int_equal(kcc_level_generate(gen_specs[s], &l, NULL, 0), KCC_OK);
        assert_int_equal(kcc_level_build_mesh(&l, &m), KCC_OK);
        assert_true(l.spawn_count > 0);
        for (uint32_t i = 0; i < l.spawn_count; ++i) {
            const float *p = l.spawns + 3u * i;
            kcc_ray_hit hit;
            const float down[3] = {0.0f, -1.0f, 0.0f};
            if (!kcc_mesh_raycast(m, p, down, 1.0f, &hit))
                fail_msg("%s spawn %u (%g %g %g): no floor within 1 m", gen_specs[s], i, p[0],
                         p[1], p[2]);
            assert_true(hit.normal[1] > 0.7f);   /* an outward (upward) floor face */
            const vec3 box[2] = {{p[0] - 0.3f, p[1], p[2] - 0.3f},
                                 {p[0] + 0.3f, p[1] + 1.8f, p[2] + 0.3f}};
            if (kcc_mesh_overlap_aabb(m, box, NULL, 0) != 0)
                fail_msg("%s spawn %u (%g %g %g): a standing box overlaps the level",
                         gen_specs[s], i, p[0], p[1], p[2]);
        }
        kcc_mesh_destroy(m);
        kcc_level_free(&l);
    }
}

static void walls_enclose_every_spawn_point(void **state)
{
    (void)state;
    for (size_t s = 0; s < sizeof(gen_specs) / sizeof(gen_specs[0]); ++s) {
        kcc_level l;
        kcc_mesh *m = NULL;
        assert_int_equal(kcc_level_generate(gen_specs[s], &l, NULL, 0), KCC_OK);
        assert_int_equal(kcc_level_build_mesh(&l, &m), KCC_OK);
        static const float dirs[8][3] = {{1, 0, 0},  {-1, 0, 0}, {0, 0, 1},   {0, 0, -1},
                                         {1, 0, 1},  {1, 0, -1}, {-1, 0, 1},  {-1, 0, -1}};
        for (uint32_t i = 0; i < l.spawn_count; ++i) {
            /* chest height: above the crates and steps a character could climb */
            const float o[3] = {l.spawns[3 * i], l.spawns[3 * i + 1] + 1.2f,
                                l.spawns[3 * i + 2]};
            for (int d = 0; d < 8; ++d) {
                kcc_ray_hit hit;
                if (!kcc_mesh_raycast(m, o, dirs[d], 1000.0f, &hit))
                    fail_msg("%s spawn %u: a ray escapes the level", gen_specs[s], i);
            }
        }
        kcc_mesh_destroy(m);
        kcc_level_free(&l);
    }
}

/* Casts a ray and returns the hit distance (or -1). */
static float cast(const kcc_mesh *m, float x, float y, float z, float dx, float dy, float dz,
                  kcc_ray_hit *hit)
{
    const float o[3] = {x, y, z}, d[3] = {dx, dy, dz};
    kcc_ray_hit h;
    if (!kcc_mesh_raycast(m, o, d, 100.0f, &h))
        return -1.0f;
    if (hit)
        *hit = h;
    return h.t;
}

static void showcase_features_are_where_the_docs_put_them(void **state)
{
    (void)state;
    kcc_level l;
    kcc_mesh *m = NULL;
    assert_int_equal(kcc_level_generate("showcase", &l, NULL, 0), KCC_OK);
    assert_int_equal(kcc_level_build_mesh(&l, &m), KCC_OK);
    assert_int_equal(l.spawn_count, 26);
    kcc_ray_hit hit;
    memset(&hit, 0, sizeof(hit));
    const float tol = 1e-4f;
    /* stairs: flight i at x = -29 + 4i, riser 0.1 (i + 1), tread 0.35 from z = 6 */
    for (int i = 0; i < 6; ++i)
        for (int k = 0; k < 2; ++k) {
            float x = -29.0f + 4.0f * (float)i, z = 6.0f + 0.35f * (float)k + 0.175f;
            float t = cast(m, x, 5.0f, z, 0, -1, 0, NULL);
            assert_float_equal(5.0f - t, 0.1f * (float)(i + 1) * (float)(k + 1), tol);
        }
    /* ramps: x = 9 + 4j, slope angle from the hit normal (cos of 10 30 45 50 60 75 degrees) */
    static const float cosines[6] = {0.98480775f, 0.86602540f, 0.70710678f,
                                     0.64278761f, 0.5f,        0.25881905f};
    for (int j = 0; j < 6; ++j) {
        float x = 9.0f + 4.0f * (float)j;
        /* aim at 0.4 m of height, on the slope of every ramp */
        float z = 6.0f + 0.4f / (j == 0 ? 0.17632698f : j == 1 ? 0.57735027f : j == 2 ? 1.0f
                                 : j == 3 ? 1.19175359f : j == 4 ? 1.73205081f : 3.73205081f);
        assert_true(cast(m, x, 5.0f, z, 0, -1, 0, &hit) > 0.0f);
        assert_float_equal(hit.normal[1], cosines[j], 1e-4f);
        assert_float_equal(hit.point[1], 0.4f, 1e-3f);
    }
    /* low tunnel: 1.95 m clear from the floor, 2 m wide */
    assert_float_equal(cast(m, -11.0f, 0.5f, 25.0f, 0, 1, 0, NULL), 1.45f, tol);
    assert_float_equal(cast(m, -11.0f, 1.0f, 25.0f, 1, 0, 0, NULL), 1.0f, tol);
    /* pit: floor 4 m down at (10, -18) */
    assert_float_equal(cast(m, 10.0f, 1.0f, -18.0f, 0, -1, 0, NULL), 5.0f, tol);
    /* beam: 0.1 m wide at x = 6, top at 1 m; floor beside it */
    assert_float_equal(cast(m, 6.04f, 5.0f, 25.0f, 0, -1, 0, NULL), 4.0f, tol);
    assert_float_equal(cast(m, 6.06f, 5.0f, 25.0f, 0, -1, 0, NULL), 5.0f, tol);
    /* pillar top 0.2 m square at (12, 22) */
    assert_float_equal(cast(m, 12.09f, 5.0f, 22.09f, 0, -1, 0, NULL), 4.0f, tol);
    assert_float_equal(cast(m, 12.11f, 5.0f, 22.0f, 0, -1, 0, NULL), 5.0f, tol);
    /* thin wall across z at z = 26, 5 cm thick: a ray from either side stops 5 cm apart */
    float front = cast(m, -4.0f, 1.0f, 25.0f, 0, 0, 1, NULL);
    float back = cast(m, -4.0f, 1.0f, 27.0f, 0, 0, -1, NULL);
    assert_float_equal(2.0f - front - back, 0.05f, tol);
    /* acute wedge: the notch's two sides meet at 30 degrees (normals 150 degrees apart) */
    kcc_ray_hit hl, hr;
    memset(&hl, 0, sizeof(hl));
    memset(&hr, 0, sizeof(hr));
    assert_true(cast(m, -18.1f, 1.0f, 26.0f, -1, 0, 0, &hl) > 0.0f);
    assert_true(cast(m, -17.9f, 1.0f, 26.0f, 1, 0, 0, &hr) > 0.0f);
    float dot = hl.normal[0] * hr.normal[0] + hl.normal[2] * hr.normal[2];
    assert_float_equal(dot, -0.86602540f, 1e-4f);   /* cos 150 */
    /* fine floor: many small triangles, hit at y = 0 */
    assert_float_equal(cast(m, -18.0f, 1.0f, -18.0f, 0, -1, 0, NULL), 1.0f, tol);
    const vec3 probe[2] = {{-20.0f, -0.1f, -20.0f}, {-16.0f, 0.1f, -16.0f}};
    assert_true(kcc_mesh_overlap_aabb(m, probe, NULL, 0) >= 2u * 8u * 8u);
    kcc_mesh_destroy(m);
    kcc_level_free(&l);
}

static void building_a_mesh_from_an_empty_level_fails_cleanly(void **state)
{
    (void)state;
    kcc_level l;
    memset(&l, 0, sizeof(l));
    kcc_mesh *m = NULL;
    assert_int_not_equal(kcc_level_build_mesh(&l, &m), KCC_OK);
    assert_null(m);
    assert_int_equal(kcc_level_build_mesh(NULL, &m), KCC_ERR_NULL_ARGUMENT);
    kcc_level_free(NULL);
    kcc_level_free(&l);
}

int test_group_level(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(triangle_file_reads_back_its_vertices_and_indices),
        cmocka_unit_test(polygons_are_fan_triangulated_around_their_first_vertex),
        cmocka_unit_test(negative_indices_count_back_from_the_last_vertex_so_far),
        cmocka_unit_test(positive_indices_may_refer_to_vertices_defined_later),
        cmocka_unit_test(slash_forms_use_the_position_index),
        cmocka_unit_test(other_statements_blank_lines_and_comments_are_ignored),
        cmocka_unit_test(crlf_tabs_and_a_missing_final_newline_are_accepted),
        cmocka_unit_test(empty_text_is_an_empty_level),
        cmocka_unit_test(malformed_files_fail_with_the_line_and_the_reason),
        cmocka_unit_test(embedded_nul_bytes_are_data_not_the_end_of_the_text),
        cmocka_unit_test(counts_beyond_the_limits_fail_as_too_large),
        cmocka_unit_test(error_messages_are_truncated_to_the_buffer),
        cmocka_unit_test(decimal_numbers_round_to_the_nearest_float),
        cmocka_unit_test(megabyte_mantissas_and_exponents_cancel_exactly),
        cmocka_unit_test(floats_printed_with_9_digits_read_back_bit_exactly),
        cmocka_unit_test(loading_a_file_reads_the_spawns_file_beside_it),
        cmocka_unit_test(a_file_without_spawns_file_has_no_spawns),
        cmocka_unit_test(file_errors_name_the_file_and_line),
        cmocka_unit_test(shared_levels_load_with_their_published_counts),
        cmocka_unit_test(every_named_level_is_the_same_bit_for_bit_each_time),
        cmocka_unit_test(different_seeds_give_different_arenas),
        cmocka_unit_test(unknown_names_and_keys_are_not_found_and_bad_values_are_bad_desc),
        cmocka_unit_test(showcase_scale_multiplies_every_coordinate),
        cmocka_unit_test(generated_levels_have_positive_volume),
        cmocka_unit_test(spawn_points_stand_free_just_above_a_floor),
        cmocka_unit_test(walls_enclose_every_spawn_point),
        cmocka_unit_test(showcase_features_are_where_the_docs_put_them),
        cmocka_unit_test(building_a_mesh_from_an_empty_level_fails_cleanly),
    };
    return KCC_RUN_GROUP("level", tests);
}
