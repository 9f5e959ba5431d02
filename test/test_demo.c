/* test_demo.c: the window-free parts of the demo: the Quake 3 BSP importer on tiny BSP files built
 * here byte by byte (a box brush checked by hand, patches, bad input), the software rasterizer and
 * its PNG output (decoded back with libpng's own reader), the headless showcase picture and exit
 * statuses, kcc-demo's command line, the viewer's key latching, chase camera and output paths, and
 * world traces read for showing (demo/world_view.c) and drawn headless. */
#include "test.h"
#include "../demo/q3bsp.h"
#include "../demo/raster.h"
#include "../demo/app.h"
#include "../demo/world_view.h"

#include <png.h>
#include <time.h>

/* ------------------------------------------------------------------ a tiny BSP writer */

typedef struct bsp_buf {
    uint8_t data[8192];
    size_t  n;
} bsp_buf;

static void put_i32(bsp_buf *b, int32_t v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    for (int i = 0; i < 4; ++i)
        b->data[b->n++] = (uint8_t)(u >> (8 * i));
}

static void put_f32(bsp_buf *b, float v)
{
    int32_t i;
    memcpy(&i, &v, 4);
    put_i32(b, i);
}

static void set_i32(bsp_buf *b, size_t at, int32_t v)
{
    size_t n = b->n;
    b->n = at;
    put_i32(b, v);
    b->n = n;
}

enum { L_ENT = 0, L_SHADERS = 1, L_PLANES = 2, L_MODELS = 7, L_BRUSHES = 8, L_SIDES = 9, L_VERTS = 10,
       L_SURFS = 13 };

static void lump_begin(bsp_buf *b, int lump)
{
    set_i32(b, 8 + 8 * (size_t)lump, (int32_t)b->n);
}

static void lump_end(bsp_buf *b, int lump)
{
    int32_t off;
    uint32_t u = (uint32_t)b->data[8 + 8 * lump] | (uint32_t)b->data[9 + 8 * lump] << 8 |
                 (uint32_t)b->data[10 + 8 * lump] << 16 | (uint32_t)b->data[11 + 8 * lump] << 24;
    memcpy(&off, &u, 4);
    set_i32(b, 12 + 8 * (size_t)lump, (int32_t)b->n - off);
}

/* A BSP with one shader (contents), the 6 planes of the box [0,64]x[0,32]x[0,96] (Quake units, Z up)
 * plus `extra` more planes, one brush over all of them, and optionally one flat 3x3 patch of
 * 64 x 64 units at z = 200. Every lump not written is empty (offset 0 length 0, still in range). */
static void make_bsp(bsp_buf *b, uint32_t contents, const float (*extra)[4], int extra_count, bool patch)
{
    memset(b, 0, sizeof(*b));
    memcpy(b->data, "IBSP", 4);
    b->n = 4;
    put_i32(b, 46);
    b->n = 8 + 17 * 8;
    lump_begin(b, L_ENT);
    const char *ent = "{\n\"classname\" \"worldspawn\"\n}\n"
                      "{\n\"origin\" \"32 16 40\"\n\"classname\" \"info_player_deathmatch\"\n}\n"
                      "{\n\"classname\" \"light\"\n\"origin\" \"1 2 3\"\n}\n";
    memcpy(b->data + b->n, ent, strlen(ent) + 1);
    b->n += strlen(ent) + 1;
    lump_end(b, L_ENT);
    while (b->n % 4)
        b->data[b->n++] = 0;
    lump_begin(b, L_SHADERS);
    memcpy(b->data + b->n, "textures/test", 13);
    b->n += 64;
    put_i32(b, 0);
    put_i32(b, (int32_t)contents);
    lump_end(b, L_SHADERS);
    lump_begin(b, L_PLANES);
    const float planes[6][4] = {{-1, 0, 0, 0}, {1, 0, 0, 64}, {0, -1, 0, 0},
                                {0, 1, 0, 32}, {0, 0, -1, 0}, {0, 0, 1, 96}};
    for (int i = 0; i < 6 + extra_count; ++i)
        for (int k = 0; k < 4; ++k)
            put_f32(b, i < 6 ? planes[i][k] : extra[i - 6][k]);
    lump_end(b, L_PLANES);
    lump_begin(b, L_MODELS);
    for (int k = 0; k < 6; ++k)
        put_f32(b, 0.0f);
    put_i32(b, 0);                /* first surface */
    put_i32(b, patch ? 1 : 0);    /* surfaces */
    put_i32(b, 0);                /* first brush */
    put_i32(b, 1);                /* brushes */
    lump_end(b, L_MODELS);
    lump_begin(b, L_BRUSHES);
    put_i32(b, 0);
    put_i32(b, 6 + extra_count);
    put_i32(b, 0);
    lump_end(b, L_BRUSHES);
    lump_begin(b, L_SIDES);
    for (int i = 0; i < 6 + extra_count; ++i) {
        put_i32(b, i);
        put_i32(b, 0);
    }
    lump_end(b, L_SIDES);
    if (patch) {
        lump_begin(b, L_VERTS);
        for (int j = 0; j < 3; ++j)
            for (int i = 0; i < 3; ++i) {
                put_f32(b, 32.0f * (float)i);
                put_f32(b, 32.0f * (float)j);
                put_f32(b, 200.0f);
                for (int k = 0; k < 4; ++k)
                    put_f32(b, 0.0f);           /* st, lightmap */
                put_f32(b, 0.0f);
                put_f32(b, 0.0f);
                put_f32(b, 1.0f);               /* normal: up */
                put_i32(b, -1);                 /* colour */
            }
        lump_end(b, L_VERTS);
        lump_begin(b, L_SURFS);
        const int32_t head[12] = {0, -1, 2, 0, 9, 0, 0, -1, 0, 0, 0, 0};
        for (int k = 0; k < 12; ++k)
            put_i32(b, head[k]);
        for (int k = 0; k < 12; ++k)
            put_f32(b, 0.0f);
        put_i32(b, 3);
        put_i32(b, 3);
        lump_end(b, L_SURFS);
    }
}

static double tri_area(const float *p, const uint32_t *t, float n_out[3])
{
    const float *a = p + 3 * t[0], *b = p + 3 * t[1], *c = p + 3 * t[2];
    double e1[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, e2[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    double n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
    double l = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    for (int k = 0; k < 3; ++k)
        n_out[k] = (float)(n[k] / l);
    return 0.5 * l;
}

static void bsp_box_brush_becomes_twelve_outward_triangles_in_y_up_metres(void **state)
{
    (void)state;
    bsp_buf b;
    make_bsp(&b, Q3BSP_CONTENTS_SOLID, NULL, 0, false);
    kcc_level lv;
    q3bsp_stats st;
    char err[256];
    assert_int_equal(q3bsp_import(b.data, b.n, NULL, &lv, &st, err, sizeof(err)), KCC_OK);
    assert_int_equal(lv.triangle_count, 12);
    assert_int_equal(lv.vertex_count, 8);
    assert_int_equal(st.brushes_solid, 1);
    /* Quake (x, y, z) -> (x, z, -y) / 32: x in [0, 2], y (Quake z) in [0, 3], z (-Quake y) in [-1, 0]. */
    for (uint32_t i = 0; i < lv.vertex_count; ++i) {
        const float *v = lv.positions + 3 * i;
        assert_true(v[0] == 0.0f || v[0] == 2.0f);
        assert_true(v[1] == 0.0f || v[1] == 3.0f);
        assert_true(v[2] == 0.0f || v[2] == -1.0f);
    }
    /* Faces point away from the centre (1, 1.5, -0.5); the areas add up to 2 (2*3 + 2*1 + 3*1) = 22 m^2. */
    double area = 0.0;
    for (uint32_t t = 0; t < 12; ++t) {
        float n[3];
        area += tri_area(lv.positions, lv.indices + 3 * t, n);
        const float *a = lv.positions + 3 * lv.indices[3 * t];
        float d[3] = {a[0] - 1.0f, a[1] - 1.5f, a[2] + 0.5f};
        assert_true(n[0] * d[0] + n[1] * d[1] + n[2] * d[2] > 0.0f);
    }
    assert_true(fabs(area - 22.0) < 1e-5);
    /* Spawn: origin (32 16 40) -> feet at z - 15 units: (1, 25/32, -0.5). */
    assert_int_equal(lv.spawn_count, 1);
    assert_true(lv.spawns[0] == 1.0f && lv.spawns[1] == 0.78125f && lv.spawns[2] == -0.5f);
    kcc_level_free(&lv);
}

static void bsp_bevel_plane_touching_an_edge_adds_no_face(void **state)
{
    (void)state;
    /* Plane x + y = 96 (normalised) touches the box only along its edge x = 64, y = 32. */
    const float s = 0.70710678f;
    const float bevel[1][4] = {{s, s, 0.0f, 96.0f * s}};
    bsp_buf b;
    make_bsp(&b, Q3BSP_CONTENTS_SOLID, bevel, 1, false);
    kcc_level lv;
    assert_int_equal(q3bsp_import(b.data, b.n, NULL, &lv, NULL, NULL, 0), KCC_OK);
    assert_int_equal(lv.triangle_count, 12);
    kcc_level_free(&lv);
}

static void bsp_cutting_plane_makes_a_closed_seven_sided_solid(void **state)
{
    (void)state;
    /* Plane x + y = 80 cuts a corner off: 7 faces (two quads become pentagons, a new quad face). */
    const float s = 0.70710678f;
    const float cut[1][4] = {{s, s, 0.0f, 80.0f * s}};
    bsp_buf b;
    make_bsp(&b, Q3BSP_CONTENTS_SOLID, cut, 1, false);
    kcc_level lv;
    q3bsp_stats st;
    assert_int_equal(q3bsp_import(b.data, b.n, NULL, &lv, &st, NULL, 0), KCC_OK);
    assert_int_equal(st.brush_faces, 7);
    /* Closed: every edge is used once in each direction. */
    for (uint32_t t = 0; t < lv.triangle_count; ++t)
        for (int e = 0; e < 3; ++e) {
            uint32_t a = lv.indices[3 * t + (uint32_t)e], c = lv.indices[3 * t + (uint32_t)(e + 1) % 3];
            int twins = 0;
            for (uint32_t u = 0; u < lv.triangle_count; ++u)
                for (int f = 0; f < 3; ++f)
                    twins += lv.indices[3 * u + (uint32_t)f] == c && lv.indices[3 * u + (uint32_t)(f + 1) % 3] == a;
            assert_int_equal(twins, 1);
        }
    kcc_level_free(&lv);
}

static void bsp_keeps_player_clip_and_skips_water(void **state)
{
    (void)state;
    bsp_buf b;
    kcc_level lv;
    make_bsp(&b, Q3BSP_CONTENTS_PLAYERCLIP, NULL, 0, false);
    assert_int_equal(q3bsp_import(b.data, b.n, NULL, &lv, NULL, NULL, 0), KCC_OK);
    assert_int_equal(lv.triangle_count, 12);
    kcc_level_free(&lv);
    make_bsp(&b, 32u /* CONTENTS_WATER */, NULL, 0, false);
    char err[256] = "";
    assert_int_equal(q3bsp_import(b.data, b.n, NULL, &lv, NULL, err, sizeof(err)), KCC_ERR_NO_TRIANGLES);
    assert_true(strlen(err) > 0);
}

static void bsp_flat_patch_is_tessellated_to_its_area(void **state)
{
    (void)state;
    bsp_buf b;
    make_bsp(&b, Q3BSP_CONTENTS_SOLID, NULL, 0, true);
    q3bsp_options o = q3bsp_default_options();
    o.patch_level = 3;
    kcc_level lv;
    q3bsp_stats st;
    assert_int_equal(q3bsp_import(b.data, b.n, &o, &lv, &st, NULL, 0), KCC_OK);
    assert_int_equal(st.patches, 1);
    assert_int_equal(st.patch_triangles, 2 * 3 * 3);
    /* 64 x 64 units = 2 x 2 m at height 200/32 = 6.25 m, normals up like the control points'. */
    double area = 0.0;
    for (uint32_t t = 12; t < lv.triangle_count; ++t) {
        float n[3];
        area += tri_area(lv.positions, lv.indices + 3 * t, n);
        assert_true(n[1] > 0.999f);
        for (int k = 0; k < 3; ++k)
            assert_true(lv.positions[3 * lv.indices[3 * t + (uint32_t)k] + 1] == 6.25f);
    }
    assert_true(fabs(area - 4.0) < 1e-5);
    kcc_level_free(&lv);
}

static void bsp_malformed_files_get_errors_and_leave_output_alone(void **state)
{
    (void)state;
    bsp_buf b;
    make_bsp(&b, Q3BSP_CONTENTS_SOLID, NULL, 0, true);
    kcc_level lv;
    memset(&lv, 0xAB, sizeof(lv));
    kcc_level untouched = lv;
    char err[256];
    bsp_buf bad = b;
    memcpy(bad.data, "VBSP", 4);
    assert_int_equal(q3bsp_import(bad.data, bad.n, NULL, &lv, NULL, err, sizeof(err)), KCC_ERR_PARSE);
    bad = b;
    bad.data[4] = 47;
    assert_int_equal(q3bsp_import(bad.data, bad.n, NULL, &lv, NULL, err, sizeof(err)), KCC_ERR_VERSION);
    bad = b;   /* planes lump past the end of the file */
    set_i32(&bad, 8 + 8 * L_PLANES + 4, 100000);
    assert_int_equal(q3bsp_import(bad.data, bad.n, NULL, &lv, NULL, err, sizeof(err)), KCC_ERR_PARSE);
    assert_non_null(strstr(err, "planes"));
    bad = b;   /* negative lump offset */
    set_i32(&bad, 8 + 8 * L_SIDES, -8);
    assert_int_equal(q3bsp_import(bad.data, bad.n, NULL, &lv, NULL, err, sizeof(err)), KCC_ERR_PARSE);
    bad = b;   /* brush side names plane 99 */
    {
        int32_t off;
        memcpy(&off, bad.data + 8 + 8 * L_SIDES, 4);
        set_i32(&bad, (size_t)off, 99);
    }
    assert_int_equal(q3bsp_import(bad.data, bad.n, NULL, &lv, NULL, err, sizeof(err)), KCC_ERR_PARSE);
    assert_non_null(strstr(err, "plane"));
    bad = b;   /* patch of 4 x 3 control points (even width) */
    {
        int32_t off;
        memcpy(&off, bad.data + 8 + 8 * L_SURFS, 4);
        set_i32(&bad, (size_t)off + 96, 4);
    }
    assert_int_equal(q3bsp_import(bad.data, bad.n, NULL, &lv, NULL, err, sizeof(err)), KCC_ERR_PARSE);
    assert_int_equal(q3bsp_import(NULL, 10, NULL, &lv, NULL, err, sizeof(err)), KCC_ERR_NULL_ARGUMENT);
    assert_memory_equal(&lv, &untouched, sizeof(lv));
    /* Every truncation of a valid file is refused cleanly (ASan watches the reads). */
    for (size_t n = 0; n < b.n; n += 7) {
        kcc_status s = q3bsp_import(b.data, n, NULL, &lv, NULL, err, sizeof(err));
        assert_int_not_equal(s, KCC_OK);
    }
    assert_memory_equal(&lv, &untouched, sizeof(lv));
}

/* ------------------------------------------------------------------ rasterizer and PNG */

static void temp_png_path(char *out, size_t size, const char *tag)
{
    const char *dir = getenv("TMPDIR");
    int local = 0;
    snprintf(out, size, "%s/kcc_test_%s_%lx_%lx.png", dir && dir[0] ? dir : "/tmp", tag,
             (unsigned long)time(NULL), (unsigned long)(uintptr_t)&local);
}

/* Decodes a PNG with libpng's simplified reader (not the code under test) into RGB. */
static uint8_t *read_png(const char *path, uint32_t *w, uint32_t *h)
{
    png_image img;
    memset(&img, 0, sizeof(img));
    img.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(&img, path))
        return NULL;
    img.format = PNG_FORMAT_RGB;
    uint8_t *buf = malloc(PNG_IMAGE_SIZE(img));
    if (!buf || !png_image_finish_read(&img, NULL, buf, 0, NULL)) {
        free(buf);
        png_image_free(&img);
        return NULL;
    }
    *w = img.width;
    *h = img.height;
    return buf;
}

static void raster_nearer_triangle_hides_farther_one_and_png_round_trips(void **state)
{
    (void)state;
    raster_image img;
    const uint8_t bg[3] = {10, 20, 30};
    assert_int_equal(raster_image_init(&img, 64, 48, bg), KCC_OK);
    const float bounds[2][3] = {{-1, -1, -1}, {1, 1, 1}};
    raster_view v;
    raster_view_frame(&v, bounds, 0.0f, 90.0f, 64, 48, 0.0f);   /* top-down */
    const float a0[3] = {-1, 0, -1}, b0[3] = {-1, 0, 1}, c0[3] = {1, 0, 0};       /* lower */
    const float a1[3] = {-1, 0.5f, -1}, b1[3] = {-1, 0.5f, 1}, c1[3] = {1, 0.5f, 0}; /* higher */
    const uint8_t red[3] = {255, 0, 0}, blue[3] = {0, 0, 255};
    raster_draw_triangle(&img, &v, a1, b1, c1, blue);
    raster_draw_triangle(&img, &v, a0, b0, c0, red);   /* drawn last, but below */
    float s[3];
    const float mid[3] = {-0.5f, 0.5f, 0.0f};
    raster_project(&v, mid, s);
    const uint8_t *p = img.rgb + 3 * ((size_t)s[1] * 64 + (size_t)s[0]);
    assert_true(p[2] > 0 && p[0] == 0);   /* blue, lit */
    uint32_t coloured = 0;
    for (size_t i = 0; i < 64 * 48; ++i)
        coloured += memcmp(img.rgb + 3 * i, bg, 3) != 0;
    assert_true(coloured > 64 * 48 / 5);
    char path[512];
    temp_png_path(path, sizeof(path), "raster");
    assert_int_equal(raster_write_png(&img, path), KCC_OK);
    uint32_t w = 0, h = 0;
    uint8_t *back = read_png(path, &w, &h);
    remove(path);
    assert_non_null(back);
    assert_int_equal(w, 64);
    assert_int_equal(h, 48);
    assert_memory_equal(back, img.rgb, 64 * 48 * 3);
    free(back);
    raster_image_free(&img);
}

static void raster_refuses_bad_sizes_and_unwritable_paths(void **state)
{
    (void)state;
    raster_image img;
    const uint8_t bg[3] = {0, 0, 0};
    assert_int_equal(raster_image_init(&img, 0, 10, bg), KCC_ERR_BAD_DESC);
    assert_int_equal(raster_image_init(&img, 10, 20000, bg), KCC_ERR_BAD_DESC);
    assert_int_equal(raster_image_init(&img, 4, 4, bg), KCC_OK);
    assert_int_equal(raster_write_png(&img, "/nonexistent-dir/x.png"), KCC_ERR_IO);
    raster_image_free(&img);
}

static void headless_showcase_writes_a_picture_that_is_not_blank(void **state)
{
    (void)state;
    char path[512];
    temp_png_path(path, sizeof(path), "headless");
    demo_headless_opts o = demo_headless_default_opts();
    o.characters = 4;
    o.frames = 120;
    o.width = 320;
    o.height = 200;
    o.png = path;
    o.quiet = true;
    assert_int_equal(demo_headless_run(&o), 0);
    uint32_t w = 0, h = 0;
    uint8_t *px = read_png(path, &w, &h);
    remove(path);
    assert_non_null(px);
    assert_int_equal(w, 320);
    assert_int_equal(h, 200);
    /* Not blank: most pixels differ from the background, and there are many distinct colours. */
    const uint8_t bg[3] = {28, 31, 38};
    uint32_t differ = 0, distinct = 0;
    static uint8_t seen[1 << 15];
    memset(seen, 0, sizeof(seen));
    for (size_t i = 0; i < (size_t)w * h; ++i) {
        const uint8_t *c = px + 3 * i;
        differ += memcmp(c, bg, 3) != 0;
        uint32_t key = (uint32_t)(c[0] >> 3) << 10 | (uint32_t)(c[1] >> 3) << 5 | (uint32_t)(c[2] >> 3);
        distinct += !seen[key];
        seen[key] = 1;
    }
    assert_true(differ > w * h / 3);
    assert_true(distinct > 40);
    free(px);
}

/* A mesh of one quad: four corners (x y z each) and its two triangles. */
static kcc_mesh *quad_mesh(const float corners[12], const uint32_t triangles[6])
{
    kcc_mesh_desc d;
    memset(&d, 0, sizeof(d));
    d.positions = corners;
    d.vertex_count = 4;
    d.indices = triangles;
    d.triangle_count = 2;
    kcc_mesh *m = NULL;
    assert_int_equal(kcc_mesh_build(&d, &m), KCC_OK);
    return m;
}

static void penetration_of_a_box_sunk_10_cm_into_a_floor_is_10_cm(void **state)
{
    (void)state;
    /* One floor quad at y = 0; a 1 m box whose bottom is 0.1 m below it: shrinking it by s lifts
     * its bottom by s, so it clears the floor just past s = 0.1 m. */
    const float pos[12] = {-5, 0, -5, 5, 0, -5, 5, 0, 5, -5, 0, 5};
    const uint32_t idx[6] = {0, 2, 1, 0, 3, 2};
    kcc_mesh *m = quad_mesh(pos, idx);
    const float sunk[2][3] = {{-0.5f, -0.1f, -0.5f}, {0.5f, 0.9f, 0.5f}};
    const float clear[2][3] = {{-0.5f, 0.01f, -0.5f}, {0.5f, 1.01f, 0.5f}};
    float p = demo_penetration(m, sunk);
    assert_true(p >= 0.1f && p < 0.1f + 2e-6f);
    assert_true(demo_penetration(m, clear) == 0.0f);
    kcc_mesh_destroy(m);
}

static void demo_walk_covers_five_metres_a_second_on_flat_ground(void **state)
{
    (void)state;
    demo_level lv;
    char err[256];
    assert_int_equal(demo_level_open("flat", &lv, err, sizeof(err)), KCC_OK);
    demo_mover m;
    const float feet[3] = {0.0f, 0.0f, 0.0f};
    assert_int_equal(demo_mover_init(&m, NULL, feet), KCC_OK);
    demo_input in;
    memset(&in, 0, sizeof(in));
    for (int i = 0; i < 30; ++i)   /* settle */
        demo_mover_step(&m, lv.mesh, &in);
    float z0 = m.ch.position[2];
    in.forward = 1.0f;   /* yaw 0: along -z */
    for (int i = 0; i < 60; ++i)
        demo_mover_step(&m, lv.mesh, &in);
    assert_true(fabsf((z0 - m.ch.position[2]) - DEMO_WALK_SPEED) < 0.01f);
    assert_true(m.ch.on_ground);
    demo_level_close(&lv);
}


/* ------------------------------------------------------------------ tools and viewer logic */

static int parse_args(demo_cli *cli, const char *a, const char *b)
{
    char *argv[4] = {(char *)"kcc-demo", (char *)a, (char *)b, NULL};
    char err[256] = "";
    int rc = demo_cli_parse(b ? 3 : 2, argv, cli, err, sizeof(err));
    if (rc != DEMO_EXIT_OK)
        assert_true(strlen(err) > 10);   /* a message naming what is wrong */
    return rc;
}

static void cli_numbers_are_parsed_whole_or_rejected(void **state)
{
    (void)state;
    demo_cli cli;
    static const char *const bad[][2] = {
        {"--frames", "abc"}, {"--characters", "5x"}, {"--frames", "-3"}, {"--characters", "0"},
        {"--frames", "99999999999999999999"}, {"--seed", "4294967296"}, {"--seed", " 7"},
        {"--characters", "10001"}, {"--spawn", "+1"}, {"--size", "100x"}, {"--size", "64x64x"},
        {"--size", "8x600"}, {"--view", "30"}, {"--view", "30,nan"}, {"--cut", "0x10"}, {"--cut", "inf"},
        {"--cut", ""}, {"--bogus", "1"}, {"--frames", NULL},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i)
        assert_int_equal(parse_args(&cli, bad[i][0], bad[i][1]), DEMO_EXIT_ERROR);
    assert_int_equal(parse_args(&cli, "--frames", "0012"), DEMO_EXIT_OK);
    assert_int_equal(cli.headless.frames, 12);
    assert_int_equal(parse_args(&cli, "--seed", "4294967295"), DEMO_EXIT_OK);
    assert_int_equal(cli.headless.seed, 4294967295u);
    assert_int_equal(parse_args(&cli, "--size", "640x400"), DEMO_EXIT_OK);
    assert_int_equal(cli.headless.width, 640);
    assert_int_equal(cli.viewer.height, 400);
    assert_int_equal(parse_args(&cli, "--view", "-15.5,2e1"), DEMO_EXIT_OK);
    assert_true(cli.headless.yaw == -15.5f && cli.headless.pitch == 20.0f);
    assert_int_equal(parse_args(&cli, "--headless", NULL), DEMO_EXIT_OK);
    assert_true(cli.run_headless);
    assert_int_equal(cli.headless.characters, 16);   /* the documented default, from the issue */
}

static void cli_help_states_the_defaults_the_code_uses(void **state)
{
    (void)state;
    FILE *f = tmpfile();
    assert_non_null(f);
    demo_cli_usage(f);
    char text[4096];
    rewind(f);
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    const demo_headless_opts h = demo_headless_default_opts();
    char want[128];
    snprintf(want, sizeof(want), "headless wanderers, 1..%u (default %u)", DEMO_MAX_CHARACTERS, h.characters);
    assert_non_null(strstr(text, want));
    snprintf(want, sizeof(want), "(default %u = 30 s)", h.frames);
    assert_non_null(strstr(text, want));
    snprintf(want, sizeof(want), "(default %ux%u / 1280x720)", h.width, h.height);
    assert_non_null(strstr(text, want));
    assert_null(strstr(text, "default 24"));
}

static void isa_requests_other_than_baseline_avx2_or_empty_are_invalid(void **state)
{
    (void)state;
    assert_true(demo_isa_request_valid(NULL));
    assert_true(demo_isa_request_valid(""));
    assert_true(demo_isa_request_valid("baseline"));
    assert_true(demo_isa_request_valid("avx2"));
    assert_false(demo_isa_request_valid("bogus"));
    assert_false(demo_isa_request_valid("AVX2"));
    assert_false(demo_isa_request_valid("baseline "));
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static int headless_trace_status(const char *text)
{
    char path[512];
    temp_png_path(path, sizeof(path), "trace");
    write_text(path, text);
    demo_headless_opts o = demo_headless_default_opts();
    o.trace = path;
    o.quiet = true;
    int rc = demo_headless_run(&o);
    remove(path);
    return rc;
}

static void headless_trace_exits_as_kcc_replay_does(void **state)
{
    (void)state;
    const char *head = "kcc-trace 1\nlevel gen flat\ndesc half_extents=0.3,0.9,0.3 step_height=0.35 "
                       "max_slope_deg=45 up_axis=1 skin_width=0.002 ground_snap=0.35 max_push_out=0.2\n"
                       "start 1 30 1\n";
    char text[1024];
    /* 30 m up, 1 cm down: nothing near, so the box goes exactly by the displacement (1 29.99 1). */
    snprintf(text, sizeof(text), "%sf 0 -0.01 0 | 1 29.99 1 | -\nend 1\n", head);
    assert_int_equal(headless_trace_status(text), DEMO_EXIT_OK);
    snprintf(text, sizeof(text), "%sf 0 -0.01 0 | 1 28 1 | -\nend 1\n", head);
    assert_int_equal(headless_trace_status(text), DEMO_EXIT_PROBLEM);
    snprintf(text, sizeof(text), "%sf 0 -0.01 0 | 1 29.99 1 | -\nend 2\n", head);   /* truncated */
    assert_int_equal(headless_trace_status(text), DEMO_EXIT_ERROR);
    demo_headless_opts o = demo_headless_default_opts();
    o.level = "no-such-generator";
    o.quiet = true;
    assert_int_equal(demo_headless_run(&o), DEMO_EXIT_ERROR);
}

/* A world trace for the headless run: a character 30 m above a flat floor moved 1 cm down (nothing
 * near: it goes exactly by the displacement, to 1 29.99 1), `outcome` its recorded position, `end` the
 * step count the file states. */
static int headless_world_status(const char *outcome, int end, bool png)
{
    char trace[512], pic[512], text[512];
    temp_png_path(trace, sizeof(trace), "world");
    temp_png_path(pic, sizeof(pic), "world_png");
    snprintf(text, sizeof(text), "kcc-trace 2\nlevel 1 gen flat\nbody 1 1 static 0 0 0 0 0 0 1\n"
             "character 1 1 30 1\nd 1 0 -0.01 0\nstep 1\n= 1 %s -\nend %d\n", outcome, end);
    write_text(trace, text);
    demo_headless_opts o = demo_headless_default_opts();
    o.trace = trace;
    o.png = png ? pic : NULL;
    o.width = 320;
    o.height = 200;
    o.quiet = true;
    int rc = demo_headless_run(&o);
    uint32_t w = 0, h = 0;
    uint8_t *px = png ? read_png(pic, &w, &h) : NULL;
    if (rc == DEMO_EXIT_OK && png) {
        assert_non_null(px);
        assert_true(w == 320 && h == 200);
    }
    free(px);
    remove(trace);
    remove(pic);
    return rc;
}

/* kcc-demo --headless --trace with a world trace: replayed by the library (exit 0, a picture), a
 * diverging one exits 1, a truncated one 2 (its message names the file and line). */
static void headless_draws_a_world_trace_and_refuses_a_broken_one(void **state)
{
    (void)state;
    assert_int_equal(headless_world_status("1 29.99 1", 1, true), DEMO_EXIT_OK);
    assert_int_equal(headless_world_status("1 28 1", 1, false), DEMO_EXIT_PROBLEM);
    assert_int_equal(headless_world_status("1 29.99 1", 2, true), DEMO_EXIT_ERROR);
}

/* demo_world_view_load on a trace written by hand: `.` repeats the body's and the character's previous
 * values, `+` adds the character's displacement (its `d` line), row 0 holds the start (a target is
 * reached by step 1), a character added after step 1's outcomes is in rows 2 on, one removed after
 * step 2's is in row 2 and gone from row 3, and a single-character trace is refused. */
static void world_view_reads_a_hand_written_world_trace(void **state)
{
    (void)state;
    char path[512];
    temp_png_path(path, sizeof(path), "view");
    write_text(path, "kcc-trace 2\nlevel 1 gen flat\nbody 1 1 static 0 0 0 0 0 0 1\nbody 2 1 kinematic 1 2 3 0 0 0 1\n"
          "character 1 0 1 0 half_extents=0.3,0.9,0.3\ntarget 2 . 2.5 . . . . .   # up\nstep 1\n"
          "= 1 0.5 . 0 ON_GROUND\ncharacter 2 4 1 4\nd 2 0.25 -0.1 -0.5\nstep 2\n= 2 + 0.9 +\nremove_character 1\nstep 3\nend 3\n");
    demo_world_view v;
    char err[256];
    assert_int_equal(demo_world_view_load(path, &v, err, sizeof(err)), KCC_OK);
    assert_true(v.steps == 3 && v.character_count == 2 && v.body_count == 2 && v.level_count == 1);
    assert_true(v.levels[0].triangle_count > 0 && v.bodies[1].kinematic && !v.bodies[0].kinematic);
    const float *p = demo_world_view_pose(&v, 0, 1);   /* before step 1: its target not reached yet */
    assert_true(p && p[0] == 1.0f && p[1] == 2.0f && p[2] == 3.0f && p[6] == 1.0f);
    p = demo_world_view_pose(&v, 1, 1);
    assert_true(p && p[0] == 1.0f && p[1] == 2.5f && p[2] == 3.0f);
    p = demo_world_view_centre(&v, 1, 0);
    assert_true(p && p[0] == 0.5f && p[1] == 1.0f && p[2] == 0.0f);
    p = demo_world_view_centre(&v, 0, 0);
    assert_true(p && p[0] == 0.0f && p[1] == 1.0f && p[2] == 0.0f);
    assert_int_equal(v.flags[1 * 2 + 0], KCC_MOVE_ON_GROUND);
    assert_true(v.half_extents[0] == 0.3f && v.half_extents[1] == 0.9f);
    assert_null(demo_world_view_centre(&v, 0, 1));
    assert_null(demo_world_view_centre(&v, 1, 1));
    p = demo_world_view_centre(&v, 2, 1);
    assert_true(p && p[0] == 4.25f && p[1] == 0.9f && p[2] == 3.5f);   /* 4 + 0.25, 4 - 0.5 */
    p = demo_world_view_centre(&v, 2, 0);
    assert_true(p && p[0] == 0.5f && p[1] == 1.0f);
    assert_null(demo_world_view_centre(&v, 3, 0));
    assert_non_null(demo_world_view_centre(&v, 3, 1));
    assert_int_equal(demo_world_view_level_body(&v), 0);
    demo_world_view_free(&v);
    write_text(path, "kcc-trace 1\nlevel gen flat\n");
    assert_int_equal(demo_world_view_load(path, &v, err, sizeof(err)), KCC_ERR_VERSION);
    remove(path);
}

static void a_key_tapped_between_two_frames_acts_in_the_next_one(void **state)
{
    (void)state;
    demo_keys keys;
    memset(&keys, 0, sizeof(keys));
    demo_keys_event(&keys, DEMO_KEY_JUMP, true);    /* tapped: down and up before the frame */
    demo_keys_event(&keys, DEMO_KEY_JUMP, false);
    demo_keys_event(&keys, DEMO_KEY_FORWARD, true); /* held across frames */
    demo_input in = demo_keys_input(&keys, 0.5f);
    assert_true(in.jump);
    assert_true(in.forward == 1.0f && in.right == 0.0f && in.yaw == 0.5f);
    in = demo_keys_input(&keys, 0.5f);              /* the tap is consumed; the held key stays */
    assert_false(in.jump);
    assert_true(in.forward == 1.0f);
    demo_keys_event(&keys, DEMO_KEY_FORWARD, false);
    demo_keys_event(&keys, DEMO_KEY_LEFT, true);
    in = demo_keys_input(&keys, 0.0f);
    assert_true(in.forward == 0.0f && in.right == -1.0f && !in.run);
    demo_keys_event(&keys, DEMO_KEY_COUNT, true);   /* not a key: ignored */
    assert_int_equal(keys.tapped, 0);
}

static void chase_camera_stops_in_front_of_a_wall_between_it_and_the_character(void **state)
{
    (void)state;
    /* A wall in the plane z = -2 (x, y in [-3, 3]); the head at (0, 1.5, 0) looks along +z, so the
     * camera wants to be 4.5 m behind it at z = -4.5. A sphere of 0.1 m radius swept from the head
     * along -z touches the wall when its back reaches z = -2: centre at z = -1.9. */
    const float pos[12] = {-3, -3, -2, 3, -3, -2, 3, 3, -2, -3, 3, -2};
    const uint32_t idx[6] = {0, 1, 2, 0, 2, 3};
    kcc_mesh *wall = quad_mesh(pos, idx);
    const float head[3] = {0.0f, 1.5f, 0.0f}, back[3] = {0.0f, 0.0f, -1.0f};
    float eye[3];
    float used = demo_camera_place(wall, head, back, 4.5f, 0.1f, eye);
    assert_true(fabsf(used - 1.9f) < 1e-4f);
    assert_true(eye[0] == 0.0f && eye[1] == 1.5f && fabsf(eye[2] + 1.9f) < 1e-4f);
    /* Looking the other way, nothing is behind: the full distance. */
    const float ahead[3] = {0.0f, 0.0f, 1.0f};
    assert_true(demo_camera_place(wall, head, ahead, 4.5f, 0.1f, eye) == 4.5f);
    assert_true(eye[2] == 4.5f);
    /* Beside the wall (x = 5): the line to the camera passes it. */
    const float side[3] = {5.0f, 1.5f, 0.0f};
    assert_true(demo_camera_place(wall, side, back, 4.5f, 0.1f, eye) == 4.5f);
    /* Diagonally past the wall's corner (3, 3) at 0.113 m: the sphere clears it (a 0.1 m box's
     * corner would catch it and pull the camera in). */
    const float by_corner[3] = {3.08f, 3.08f, 0.0f};
    assert_true(demo_camera_place(wall, by_corner, back, 4.5f, 0.1f, eye) == 4.5f);
    kcc_mesh_destroy(wall);
}

static void viewer_output_paths_name_the_level_safely(void **state)
{
    (void)state;
    char out[64];
    assert_true(demo_output_path("build/viewer", "arena seed=3", "20261126-120000", "trace", out, sizeof(out)));
    assert_string_equal(out, "build/viewer/arena_seed_3-20261126-120000.trace");
    assert_true(demo_output_path("d", "../x/y", "1", "png", out, sizeof(out)));
    assert_string_equal(out, "d/.._x_y-1.png");
    assert_false(demo_output_path("build/viewer", "a-very-long-level-name-indeed", "20261126-120000", "trace",
                                  out, 40));
}

int test_group_demo(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bsp_box_brush_becomes_twelve_outward_triangles_in_y_up_metres),
        cmocka_unit_test(bsp_bevel_plane_touching_an_edge_adds_no_face),
        cmocka_unit_test(bsp_cutting_plane_makes_a_closed_seven_sided_solid),
        cmocka_unit_test(bsp_keeps_player_clip_and_skips_water),
        cmocka_unit_test(bsp_flat_patch_is_tessellated_to_its_area),
        cmocka_unit_test(bsp_malformed_files_get_errors_and_leave_output_alone),
        cmocka_unit_test(raster_nearer_triangle_hides_farther_one_and_png_round_trips),
        cmocka_unit_test(raster_refuses_bad_sizes_and_unwritable_paths),
        cmocka_unit_test(headless_showcase_writes_a_picture_that_is_not_blank),
        cmocka_unit_test(penetration_of_a_box_sunk_10_cm_into_a_floor_is_10_cm),
        cmocka_unit_test(demo_walk_covers_five_metres_a_second_on_flat_ground),
        cmocka_unit_test(cli_numbers_are_parsed_whole_or_rejected),
        cmocka_unit_test(cli_help_states_the_defaults_the_code_uses),
        cmocka_unit_test(isa_requests_other_than_baseline_avx2_or_empty_are_invalid),
        cmocka_unit_test(headless_trace_exits_as_kcc_replay_does),
        cmocka_unit_test(a_key_tapped_between_two_frames_acts_in_the_next_one),
        cmocka_unit_test(chase_camera_stops_in_front_of_a_wall_between_it_and_the_character),
        cmocka_unit_test(viewer_output_paths_name_the_level_safely),
        cmocka_unit_test(headless_draws_a_world_trace_and_refuses_a_broken_one),
        cmocka_unit_test(world_view_reads_a_hand_written_world_trace),
    };
    return KCC_RUN_GROUP("demo", tests);
}
