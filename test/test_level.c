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

static void text_without_faces_is_refused_as_no_level(void **state)
{
    (void)state;
    kcc_level l;
    assert_int_equal(kcc_level_parse_obj("", 0, &l, NULL, 0), KCC_ERR_NO_TRIANGLES);
    assert_int_equal(kcc_level_parse_obj(NULL, 0, &l, NULL, 0), KCC_ERR_NO_TRIANGLES);
    const char *only_vertices = "v 0 0 0\nv 1 0 0\n# no faces\n";
    expect_error(only_vertices, strlen(only_vertices), KCC_ERR_NO_TRIANGLES,
                 "line 3: no faces in 3 lines (2 vertices)");
    const char *prose = "This is a README, not a level.\nIt has words, and no faces.\n";
    expect_error(prose, strlen(prose), KCC_ERR_NO_TRIANGLES, "line 2: no faces");
}

static void a_last_vertex_no_face_uses_is_refused_as_truncated(void **state)
{
    (void)state;
    /* cut after a vertex of the next object: its faces never came */
    const char *cut = "v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 3\nv 5 5 5\nv 6 5 5\n";
    expect_error(cut, strlen(cut), KCC_ERR_PARSE,
                 "line 6: the last vertex (5) is used by no face: the file looks truncated");
    /* cut inside the faces: the faces read use the first vertices only */
    const char *in_faces = "v 0 0 0\nv 1 0 0\nv 0 0 1\nv 1 0 1\nf 1 2 3\n";
    expect_error(in_faces, strlen(in_faces), KCC_ERR_PARSE, "line 4: the last vertex (4)");
    /* the last vertex used by an earlier face (forward reference) or a negative index is fine */
    const char *fwd = "f 1 2 3\nv 0 0 0\nv 1 0 0\nv 0 0 1\n";
    const char *neg = "v 0 0 0\nv 1 0 0\nv 0 0 1\nf -3 -2 -1\n";
    kcc_level l;
    assert_int_equal(parse(fwd, &l, NULL, 0), KCC_OK);
    kcc_level_free(&l);
    assert_int_equal(parse(neg, &l, NULL, 0), KCC_OK);
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

static void nul_bytes_anywhere_are_binary_data_refused_at_their_line(void **state)
{
    (void)state;
    const char bad[] = "v 0 0 0\nv 1\0 0 0\n";
    expect_error(bad, sizeof(bad) - 1, KCC_ERR_PARSE, "line 2: NUL byte: binary data");
    const char in_comment[] = "v 0 0 0\n# \0 comment\nv 1 0 0\nv 0 0 1\nf 1 2 3\n";
    expect_error(in_comment, sizeof(in_comment) - 1, KCC_ERR_PARSE, "line 2: NUL byte");
    /* the length is honoured: text after it is never read */
    kcc_level l;
    const char cut[] = "v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 3\nf 1 2 9";
    assert_int_equal(kcc_level_parse_obj(cut, strlen(cut) - 8, &l, NULL, 0), KCC_OK);
    assert_int_equal(l.triangle_count, 1);
    kcc_level_free(&l);
}

static void binary_headers_are_refused_at_their_first_line(void **state)
{
    (void)state;
    /* the first bytes of an ELF program and of a PNG image */
    const char elf[] = "\x7f" "ELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x03\0>\0\x01\0\0\0";
    expect_error(elf, sizeof(elf) - 1, KCC_ERR_PARSE, "line 1: NUL byte: binary data");
    const char png[] = "\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
    expect_error(png, sizeof(png) - 1, KCC_ERR_PARSE,
                 "line 1: statement '?PNG' is not UTF-8 text: binary data");
    /* a control byte or a broken UTF-8 sequence in a keyword, without any NUL */
    const char ctl[] = "\x1a\x02 1 2\nv 0 0 0\n";
    expect_error(ctl, sizeof(ctl) - 1, KCC_ERR_PARSE, "line 1: statement '?\?' is not UTF-8");
    const char broken[] = "v 0 0 0\ng\xc3\x28 x\n";
    expect_error(broken, sizeof(broken) - 1, KCC_ERR_PARSE, "line 2: statement 'g?(' is not UTF-8");
    /* UTF-8 text in keywords and comments is text */
    const char utf8[] = "# caf\xc3\xa9 \xe2\x82\xac\nm\xc3\xa9sh 1\nv 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 3\n";
    kcc_level l;
    assert_int_equal(kcc_level_parse_obj(utf8, sizeof(utf8) - 1, &l, NULL, 0), KCC_OK);
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
        assert_int_equal(kcc_text_to_float(t, t + strlen(t), 0, &f), KCC_NUM_OK);
        if (float_bits(f) != cases[i].bits)
            fail_msg("%s read as 0x%08x, want 0x%08x", t, (unsigned)float_bits(f),
                     (unsigned)cases[i].bits);
    }
    float f;
    const char *big = "3.4028236e38";    /* past FLT_MAX + half an ulp */
    assert_int_equal(kcc_text_to_float(big, big + strlen(big), 0, &f), KCC_NUM_RANGE);
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
    assert_int_equal(kcc_text_to_float(b, b + strlen(b), 0, &f), KCC_NUM_OK);
    assert_true(f == 1e10f);
    memcpy(b, "0.", 2);                             /* 0.000...0001 e1099990 = 1e-11 */
    memset(b + 2, '0', ZEROS);
    strcpy(b + 2 + ZEROS, "1e1099990");
    assert_int_equal(kcc_text_to_float(b, b + strlen(b), 0, &f), KCC_NUM_OK);
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
        assert_int_equal(kcc_text_to_float(buf, buf + n, 0, &g), KCC_NUM_OK);
        if (float_bits(g) != b)
            fail_msg("%s read as 0x%08x, want 0x%08x", buf, (unsigned)float_bits(g), (unsigned)b);
    }
}

/* Every form strtof reads whole (hex, inf/nan, exponents, long mantissas, subnormals, overflow,
 * signs) reads the same with hex and inf/nan allowed; decimal-only refuses hex and names inf/nan
 * as non-finite. strtof (glibc, C locale) is the reference. */
static void the_number_reader_agrees_with_strtof_on_edge_cases(void **state)
{
    (void)state;
    static const char *const cases[] = {
        "0", "-0", "+0", "+1.5", "-.5", "5.", "1e10", "1E-10", "1e+38", "+3.4028235e38",
        "3.40282357e38", "3.4028236e38", "-3.5e38", "1e39", "1e-38", "1.1754942e-38",
        "1.17549421e-38", "1.4e-45", "7.006492e-46", "7.0064923e-46", "7.0064924e-46", "2e-45",
        "1e-50", "0.000000000000000000000000000000000000000000001401298464324817",
        "123456789012345678901234567890123456789", "1.00000011920928955078125",
        "1.000000119209289550781250000000000000000001", "0x1p0", "0x1.8p1", "-0X.8P-1",
        "0x1.fffffep127", "0x1.ffffffp127", "0x1p128", "0x1p-149", "0x1p-150", "0x1.8p-150",
        "0x0.000002p-126", "0xffffffffffffffffffffp0", "0x1.000001p0", "0x1.0000010000001p0",
        "0x10", "0x", "0x.p1", "0x1p", "inf", "-INF", "Infinity", "nan", "-nan", "NaN(123_ab)",
        "nan()", "nan(!)", "infin", "1e", "1e+", ".", "+", "-", "..5", "1..5", "1.5.", "e5",
        "1,5", "1 ", " 1", "١", "0e9999999999999999999999", "1e-9999999999999999999999",
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        const char *s = cases[i], *e = s + strlen(s);
        char *end = NULL;
        float ref = strtof(s, &end);
        bool whole = end == e && e > s && s[0] != ' ';
        float all = -42.0f, dec = -42.0f;
        kcc_num_result r = kcc_text_to_float(s, e, KCC_NUM_HEX | KCC_NUM_NAN_INF, &all);
        kcc_num_result rd = kcc_text_to_float(s, e, 0, &dec);
        if (!whole) {
            if (r != KCC_NUM_SYNTAX || rd != KCC_NUM_SYNTAX)
                fail_msg("'%s': strtof refuses it, we read %d / %d", s, (int)r, (int)rd);
            continue;
        }
        bool hex = strchr(s, 'x') || strchr(s, 'X');
        if (isinf(ref) && !strpbrk(s, "iI")) {
            assert_int_equal(r, KCC_NUM_RANGE);     /* finite digits past FLT_MAX */
            assert_int_equal(rd, hex ? KCC_NUM_SYNTAX : KCC_NUM_RANGE);
            continue;
        }
        assert_int_equal(r, KCC_NUM_OK);
        if (isnan(ref)) {
            assert_true(isnan(all) && signbit(all) == signbit(ref));
        } else if (float_bits(all) != float_bits(ref)) {
            fail_msg("'%s' read as 0x%08x, strtof 0x%08x", s, (unsigned)float_bits(all),
                     (unsigned)float_bits(ref));
        }
        if (hex)
            assert_int_equal(rd, KCC_NUM_SYNTAX);
        else if (!isfinite(ref))
            assert_int_equal(rd, KCC_NUM_NON_FINITE);
        else
            assert_int_equal(float_bits(dec), float_bits(ref));
    }
}

static void integers_read_whole_within_their_range(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        kcc_num_result r;
        int64_t value;
    } cases[] = {
        {"0", KCC_NUM_OK, 0},           {"+7", KCC_NUM_OK, 7},         {"-7", KCC_NUM_OK, -7},
        {"1000", KCC_NUM_OK, 1000},     {"1001", KCC_NUM_RANGE, 0},    {"-1001", KCC_NUM_RANGE, 0},
        {"99999999999999999999999", KCC_NUM_RANGE, 0},                  {"", KCC_NUM_SYNTAX, 0},
        {"-", KCC_NUM_SYNTAX, 0},       {"1.0", KCC_NUM_SYNTAX, 0},    {"5x", KCC_NUM_SYNTAX, 0},
        {" 5", KCC_NUM_SYNTAX, 0},      {"0x10", KCC_NUM_SYNTAX, 0},   {"1e3", KCC_NUM_SYNTAX, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        const char *s = cases[i].text;
        int64_t v = 12345;
        kcc_num_result r = kcc_text_to_int(s, s + strlen(s), -1000, 1000, &v);
        if (r != cases[i].r)
            fail_msg("'%s': result %d, want %d", s, (int)r, (int)cases[i].r);
        assert_true(v == (r == KCC_NUM_OK ? cases[i].value : 12345));
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

static void a_bad_spawns_file_fails_the_load_and_the_geometry_still_loads(void **state)
{
    (void)state;
    scratch s;
    scratch_make(&s);
    char obj[128], sp[128], want[256], err[256] = "";
    scratch_write(&s, "arena.obj", "v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 3\n", obj, sizeof(obj));
    scratch_write(&s, "arena.spawns", "1 2 3\n4 five 6\n", sp, sizeof(sp));
    kcc_level l;
    memset(&l, 0, sizeof(l));
    assert_int_equal(kcc_level_load_obj(obj, &l, err, sizeof(err)), KCC_ERR_PARSE);
    snprintf(want, sizeof(want), "%s:2: 'five' is not a number", sp);
    assert_string_equal(err, want);
    assert_null(l.positions);                       /* untouched */
    /* the geometry alone, then the spawn file's error again from its own call */
    assert_int_equal(kcc_level_load_obj_geometry(obj, &l, err, sizeof(err)), KCC_OK);
    assert_int_equal(l.triangle_count, 1);
    assert_int_equal(l.spawn_count, 0);
    assert_int_equal(kcc_level_load_spawns(obj, &l, err, sizeof(err)), KCC_ERR_PARSE);
    assert_string_equal(err, want);
    assert_int_equal(l.spawn_count, 0);
    scratch_write(&s, "arena.spawns", "1 2 3\n", sp, sizeof(sp));
    assert_int_equal(kcc_level_load_spawns(obj, &l, err, sizeof(err)), KCC_OK);
    assert_int_equal(l.spawn_count, 1);
    kcc_level_free(&l);
    const char *names[] = {"arena.obj", "arena.spawns"};
    scratch_remove(&s, names, 2);
}

/* Writes a file of `size` bytes: prefix, then `fill` up to size - strlen(suffix), then suffix
 * (sizeof-style: a suffix may hold NUL bytes, its last byte is left out). */
#define write_big_file(path, prefix, fill, size, suffix) \
    write_big_file_n(path, prefix, fill, size, suffix, sizeof(suffix) - 1)
static void write_big_file_n(const char *path, const char *prefix, char fill, size_t size,
                             const char *suffix, size_t suffix_len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(prefix, f);
    char block[4096];
    memset(block, fill, sizeof(block));
    size_t left = size - strlen(prefix) - suffix_len;
    while (left > 0) {
        size_t n = left < sizeof(block) ? left : sizeof(block);
        assert_int_equal(fwrite(block, 1, n, f), n);
        left -= n;
    }
    assert_int_equal(fwrite(suffix, 1, suffix_len, f), suffix_len);
    fclose(f);
}

static void comment_lines_of_any_length_load_and_other_long_lines_fail(void **state)
{
    (void)state;
    scratch s;
    scratch_make(&s);
    char path[128], want[256], err[256] = "";
    kcc_level l;
    /* a 5 MB comment (five times the reader's buffer) after a vertex, then the rest */
    snprintf(path, sizeof(path), "%s/long.obj", s.dir);
    write_big_file(path, "v 0 0 0\nv 1 0 0 # ", 'x', 5u << 20, "\r\nv 0 0 1\nf 1 2 3\n");
    assert_int_equal(kcc_level_load_obj(path, &l, err, sizeof(err)), KCC_OK);
    assert_int_equal(l.vertex_count, 3);
    assert_true(l.positions[3] == 1.0f);
    assert_int_equal(l.triangle_count, 1);
    kcc_level_free(&l);
    /* the same with a NUL deep inside the comment: binary, at the comment's line */
    write_big_file(path, "v 0 0 0\n# ", 'x', 3u << 20, "\0\nv 1 0 0\nv 0 0 1\nf 1 2 3\n");
    assert_int_equal(kcc_level_load_obj(path, &l, err, sizeof(err)), KCC_ERR_PARSE);
    snprintf(want, sizeof(want), "%s:2: NUL byte: binary data", path);
    assert_non_null(strstr(err, want));
    /* a 2 MB line without a comment is no OBJ statement: refused, not buffered */
    write_big_file(path, "v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 3\nvt ", '1', 2u << 20, "\n");
    assert_int_equal(kcc_level_load_obj(path, &l, err, sizeof(err)), KCC_ERR_TOO_LARGE);
    snprintf(want, sizeof(want), "%s:5: line longer than 1048576 bytes", path);
    assert_string_equal(err, want);
    const char *names[] = {"long.obj"};
    scratch_remove(&s, names, 1);
}

static void programs_and_pictures_are_not_levels(void **state)
{
    (void)state;
    char err[512] = "";
    kcc_level l;
    /* a program: the first NUL is on line 1 of any ELF file */
    kcc_status st = kcc_level_load_obj("/bin/ls", &l, err, sizeof(err));
    if (st == KCC_ERR_IO)
        skip();                                     /* no /bin/ls here */
    assert_int_equal(st, KCC_ERR_PARSE);
    assert_string_equal(err, "/bin/ls:1: NUL byte: binary data, not a text file");
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
        cmocka_unit_test(text_without_faces_is_refused_as_no_level),
        cmocka_unit_test(a_last_vertex_no_face_uses_is_refused_as_truncated),
        cmocka_unit_test(malformed_files_fail_with_the_line_and_the_reason),
        cmocka_unit_test(nul_bytes_anywhere_are_binary_data_refused_at_their_line),
        cmocka_unit_test(binary_headers_are_refused_at_their_first_line),
        cmocka_unit_test(counts_beyond_the_limits_fail_as_too_large),
        cmocka_unit_test(error_messages_are_truncated_to_the_buffer),
        cmocka_unit_test(decimal_numbers_round_to_the_nearest_float),
        cmocka_unit_test(megabyte_mantissas_and_exponents_cancel_exactly),
        cmocka_unit_test(floats_printed_with_9_digits_read_back_bit_exactly),
        cmocka_unit_test(the_number_reader_agrees_with_strtof_on_edge_cases),
        cmocka_unit_test(integers_read_whole_within_their_range),
        cmocka_unit_test(loading_a_file_reads_the_spawns_file_beside_it),
        cmocka_unit_test(a_file_without_spawns_file_has_no_spawns),
        cmocka_unit_test(file_errors_name_the_file_and_line),
        cmocka_unit_test(a_bad_spawns_file_fails_the_load_and_the_geometry_still_loads),
        cmocka_unit_test(comment_lines_of_any_length_load_and_other_long_lines_fail),
        cmocka_unit_test(programs_and_pictures_are_not_levels),
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
