/* demo/viewer.c: the interactive viewer: a GLFW window drawn with legacy OpenGL (display list for the
 * level, immediate mode for the rest), a 60 Hz fixed-step player under the demo's movement rules, live
 * retuning, debug drawing of what each move computed (kcc_move_debug: edge rays, first contacts,
 * averaged normal, slide direction) plus the move result, trace recording and replay, screenshots.
 * On a Quake 3 map or with --bots the level runs the demo's game (demo/game.h): movers, triggers and
 * bots live, the player one of the game's characters. */
#include "viewer.h"
#include "app.h"
#include "game.h"
#include "world_view.h"
#include "font6x10.h"

#include <GLFW/glfw3.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEG (3.14159265f / 180.0f)
#define TRAIL 600   /* frames of trail (10 s) */

typedef struct viewer {
    const demo_viewer_opts *o;
    GLFWwindow *win;
    demo_level  lv;
    game       *game;                 /* the level's game (NULL: the player alone on the mesh) */
    uint32_t    player;               /* the player's index among the game's characters */
    GLuint      list, grid_tex;
    demo_mover  m;
    kcc_character_desc desc;
    float       yaw, pitch;            /* rad, camera = movement yaw */
    bool        third_person, captured;
    double      mx, my;
    bool        have_mouse;
    bool        show_rays, show_tris, show_normals, show_help, show_trail;
    demo_keys   keys;                 /* movement keys: held, and taps latched until the next frame */
    float       trail[TRAIL][3];      /* m, feet positions of the last frames */
    uint8_t     trail_branch[TRAIL];
    uint32_t    trail_n, trail_at;
    uint32_t    spawn_index;
    /* recording */
    char        record_path[1024];    /* the trace F5 writes (or wrote last); "" before the first */
    FILE       *rec_file;
    kcc_trace_writer rec;
    bool        recording;
    /* recording a game: a world trace (F5 on a level with movers or bots) */
    game_record wrec;
    char        wrec_dir[1100], wrec_dir_name[300];
    bool        world_recording;
    char        level_arg[1024];      /* what open_level opened (a BSP is loaded again for F5) */
    /* replaying a world trace (P): what it recorded, shown step by step */
    demo_world_view wv;
    bool        world_playing;
    uint32_t    wv_step, wv_level_body;
    float      *wv_scratch;           /* a body's vertices placed (the largest level's count) */
    /* replay */
    kcc_trace  *tr;
    kcc_trace_outcome *outcomes;
    uint32_t    play_step;
    bool        playing;
    /* messages, timing */
    char        msg[256];
    double      msg_until;
    double      fps_t;
    int         fps_n;
    float       fps;
    uint32_t    frame;
    bool        want_shot;
    char        shot_path[1024];
} viewer;

static void say(viewer *v, const char *text)
{
    size_t n = strlen(text);
    if (n >= sizeof(v->msg))
        n = sizeof(v->msg) - 1;
    memcpy(v->msg, text, n);
    v->msg[n] = '\0';
    v->msg_until = glfwGetTime() + 4.0;
    printf("kcc-demo: %s\n", text);
}

/* ------------------------------------------------------------------ level drawing */

static void build_grid_texture(viewer *v)
{
    enum { N = 64 };
    static uint8_t px[N * N];
    for (int y = 0; y < N; ++y)
        for (int x = 0; x < N; ++x)
            px[y * N + x] = (x < 2 || y < 2) ? 200 : 255;
    glGenTextures(1, &v->grid_tex);
    glBindTexture(GL_TEXTURE_2D, v->grid_tex);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR_MIPMAP_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_GENERATE_MIPMAP, GL_TRUE);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_LUMINANCE, N, N, 0, GL_LUMINANCE, GL_UNSIGNED_BYTE, px);
}

/* The same colours as the headless pictures: floors by height (blue, green, sand), walls grey. */
static void build_level_list(viewer *v)
{
    const kcc_level *L = &v->lv.level;
    const float lo = v->lv.bounds[0][1], hi = v->lv.bounds[1][1];
    const float light[3] = {0.3363f, 0.8168f, 0.3844f};
    static const float ramp[3][3] = {{0.32f, 0.46f, 0.68f}, {0.46f, 0.70f, 0.46f}, {0.92f, 0.80f, 0.52f}};
    if (v->list)
        glDeleteLists(v->list, 1);
    v->list = glGenLists(1);
    glNewList(v->list, GL_COMPILE);
    glBegin(GL_TRIANGLES);
    for (uint32_t t = 0; t < L->triangle_count; ++t) {
        const float *p[3];
        for (int k = 0; k < 3; ++k)
            p[k] = L->positions + 3 * (size_t)L->indices[3 * (size_t)t + k];
        float e1[3] = {p[1][0] - p[0][0], p[1][1] - p[0][1], p[1][2] - p[0][2]};
        float e2[3] = {p[2][0] - p[0][0], p[2][1] - p[0][1], p[2][2] - p[0][2]};
        float n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
        float nl = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        if (!(nl > 0.0f))
            continue;
        for (int k = 0; k < 3; ++k)
            n[k] /= nl;
        float c[3] = {0.80f, 0.77f, 0.72f};
        bool floor = fabsf(n[1]) >= 0.7f;
        if (floor) {
            float y = (p[0][1] + p[1][1] + p[2][1]) / 3.0f;
            float h = hi > lo ? (y - lo) / (hi - lo) : 0.5f;
            h = fminf(fmaxf(h, 0.0f), 1.0f);
            int i = h < 0.5f ? 0 : 1;
            float s = h < 0.5f ? h * 2.0f : (h - 0.5f) * 2.0f;
            for (int k = 0; k < 3; ++k)
                c[k] = ramp[i][k] + s * (ramp[i + 1][k] - ramp[i][k]);
        }
        float lit = 0.4f + 0.6f * fabsf(n[0] * light[0] + n[1] * light[1] + n[2] * light[2]);
        glColor3f(c[0] * lit, c[1] * lit, c[2] * lit);
        for (int k = 0; k < 3; ++k) {
            /* Planar grid mapping: floors by x/z, walls by their horizontal axis and y. */
            if (floor)
                glTexCoord2f(p[k][0], p[k][2]);
            else if (fabsf(n[0]) > fabsf(n[2]))
                glTexCoord2f(p[k][2], p[k][1]);
            else
                glTexCoord2f(p[k][0], p[k][1]);
            glVertex3fv(p[k]);
        }
    }
    glEnd();
    glEndList();
}

/* ------------------------------------------------------------------ character, level switching */

static void respawn(viewer *v, bool next)
{
    float feet[3];
    const kcc_level *L = &v->lv.level;
    if (L->spawn_count > 0) {
        if (next)
            v->spawn_index = (v->spawn_index + 1) % L->spawn_count;
        memcpy(feet, L->spawns + 3 * (size_t)(v->spawn_index % L->spawn_count), sizeof(feet));
    } else if (demo_find_starts(&v->lv, &v->desc, 1, v->spawn_index + (next ? 1u : 0u), false, feet) == 0) {
        feet[0] = 0.5f * (v->lv.bounds[0][0] + v->lv.bounds[1][0]);
        feet[1] = v->lv.bounds[1][1] + 1.0f;
        feet[2] = 0.5f * (v->lv.bounds[0][2] + v->lv.bounds[1][2]);
    }
    if (next && L->spawn_count == 0)
        v->spawn_index++;
    demo_mover_init(&v->m, &v->desc, feet);
    if (v->game) {
        static const float still[3] = {0.0f, 0.0f, 0.0f};
        game_character_teleport(v->game, v->player, feet, still);
    }
    v->trail_n = 0;
    if (v->recording)
        kcc_trace_restart(&v->rec, v->m.ch.position);
}

/* The level's game: a BSP's movers and triggers (or only the static level), the player and the bots
 * as its characters, under the player's rules (the viewer's desc). */
static void start_game(viewer *v, const char *arg)
{
    char err[512] = "";
    q3bsp_map map;
    memset(&map, 0, sizeof(map));
    kcc_status s = KCC_OK;
    if (v->lv.from_bsp)
        s = q3bsp_load_map(arg, NULL, &map, NULL, err, sizeof(err));
    else
        map.world = v->lv.level;   /* borrowed for game_create, which copies what it keeps */
    game_desc d = game_default_desc();
    d.character = v->desc;
    d.character_capacity = v->o->bots + 1;
    if (s == KCC_OK)
        s = game_create(&map, &d, &v->game, err, sizeof(err));
    if (v->lv.from_bsp)
        q3bsp_map_free(&map);
    const float origin[3] = {0.0f, 0.0f, 0.0f};
    const kcc_level *L = &v->lv.level;
    if (s == KCC_OK)
        s = game_add_character(v->game, L->spawn_count ? L->spawns : origin, false, &v->player);
    for (uint32_t b = 0; s == KCC_OK && b < v->o->bots; ++b)
        s = game_add_character(v->game, L->spawn_count ? L->spawns + 3 * ((b + 1) % L->spawn_count) : origin,
                               true, NULL);
    if (s != KCC_OK) {
        fprintf(stderr, "kcc-demo: the level's game: %s (%s)\n", err, kcc_status_str(s));
        game_destroy(v->game);
        v->game = NULL;
        return;
    }
    char text[256];
    snprintf(text, sizeof(text), "game: %u movers, %u triggers, %u bots", v->game->mover_count,
             v->game->trigger_count, v->o->bots);
    say(v, text);
}

static bool open_level(viewer *v, const char *arg)
{
    char err[512] = "";
    demo_level lv;
    kcc_status s = demo_level_open(arg, &lv, err, sizeof(err));
    if (s != KCC_OK) {
        fprintf(stderr, "kcc-demo: %s (%s)\n", err[0] ? err : arg, kcc_status_str(s));
        return false;
    }
    demo_level_close(&v->lv);
    game_destroy(v->game);
    v->game = NULL;
    v->lv = lv;
    snprintf(v->level_arg, sizeof(v->level_arg), "%s", arg);
    build_level_list(v);
    v->spawn_index = v->o->spawn;
    if (lv.from_bsp || v->o->bots > 0)
        start_game(v, arg);
    respawn(v, false);
    return true;
}

/* ------------------------------------------------------------------ traces */

static void stop_recording(viewer *v)
{
    if (v->world_recording) {
        kcc_status s = game_record_end(v->game);
        v->game->desc.record = NULL;   /* a later F5 records into a new game */
        fclose(v->rec_file);
        v->rec_file = NULL;
        v->world_recording = false;
        char line[1400];
        snprintf(line, sizeof(line), "recorded the world to %.400s (its meshes in %.400s)%s%s", v->record_path,
                 v->wrec_dir, s == KCC_OK ? "" : ": ", s == KCC_OK ? "" : kcc_status_str(s));
        say(v, line);
        return;
    }
    if (!v->recording)
        return;
    kcc_status s = kcc_trace_end(&v->rec);
    fclose(v->rec_file);
    v->rec_file = NULL;
    v->recording = false;
    char line[512];
    snprintf(line, sizeof(line), "recorded %u frames to %.400s%s%s", v->rec.frames, v->record_path,
             s == KCC_OK ? "" : ": ", s == KCC_OK ? "" : kcc_status_str(s));
    say(v, line);
}

/* Names a file the viewer writes: DEMO_OUTPUT_DIR/LEVEL-TIME[-fFRAME].EXT (see docs/demo.md). */
static bool output_path(viewer *v, const char *ext, bool with_frame, char *out, size_t out_size)
{
    char stamp[64];
    time_t now = time(NULL);
    struct tm *tm = localtime(&now);
    if (!tm || strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", tm) == 0)
        snprintf(stamp, sizeof(stamp), "%lld", (long long)now);
    if (with_frame) {
        size_t n = strlen(stamp);
        snprintf(stamp + n, sizeof(stamp) - n, "-f%u", v->frame);
    }
    if (!demo_make_dir(DEMO_OUTPUT_DIR) || !demo_output_path(DEMO_OUTPUT_DIR, v->lv.name, stamp, ext, out, out_size)) {
        char line[256];
        snprintf(line, sizeof(line), "cannot make %s/ to write the %s file in", DEMO_OUTPUT_DIR, ext);
        say(v, line);
        return false;
    }
    return true;
}

/* F5 on a game: the game goes on as a copy recorded from its first body (game_restart_recorded),
 * its movers' and triggers' meshes written as OBJ files into TRACE.meshes/ beside the trace. */
static void start_world_recording(viewer *v)
{
    char err[1400] = "";
    snprintf(v->wrec_dir, sizeof(v->wrec_dir), "%.1000s.meshes", v->record_path);
    const char *base = strrchr(v->wrec_dir, '/');
    snprintf(v->wrec_dir_name, sizeof(v->wrec_dir_name), "%.290s", base ? base + 1 : v->wrec_dir);
    q3bsp_map map;
    memset(&map, 0, sizeof(map));
    kcc_status s = KCC_OK;
    if (v->lv.from_bsp)
        s = q3bsp_load_map(v->level_arg, NULL, &map, NULL, err, sizeof(err));
    else
        map.world = v->lv.level;   /* borrowed, as start_game does */
    v->rec_file = s == KCC_OK ? fopen(v->record_path, "w") : NULL;
    if (s == KCC_OK && !v->rec_file) {
        snprintf(err, sizeof(err), "cannot write %.1000s", v->record_path);
        s = KCC_ERR_IO;
    }
    memset(&v->wrec, 0, sizeof(v->wrec));
    v->wrec.file = v->rec_file;
    v->wrec.level = v->lv.trace_level[0] ? v->lv.trace_level : NULL;   /* a BSP: TRACE.meshes/level.obj */
    v->wrec.mesh_dir = v->wrec_dir;
    v->wrec.mesh_dir_name = v->wrec_dir_name;
    game *g = NULL;
    if (s == KCC_OK)
        s = game_restart_recorded(v->game, &map, &v->wrec, &g, err, sizeof(err));
    if (v->lv.from_bsp)
        q3bsp_map_free(&map);
    if (s != KCC_OK) {
        if (v->rec_file)
            fclose(v->rec_file);
        v->rec_file = NULL;
        char line[1500];
        snprintf(line, sizeof(line), "cannot record the world: %.1400s", err[0] ? err : kcc_status_str(s));
        say(v, line);
        return;
    }
    game_destroy(v->game);
    v->game = g;
    v->world_recording = true;
    snprintf(err, sizeof(err), "recording the world to %.1000s (F5 stops)", v->record_path);
    say(v, err);
}

static void start_recording(viewer *v)
{
    char level[KCC_TRACE_LEVEL_MAX + 8], err[1200];
    if (v->o->record)
        snprintf(v->record_path, sizeof(v->record_path), "%s", v->o->record);
    else if (!output_path(v, "trace", false, v->record_path, sizeof(v->record_path)))
        return;
    if (v->game) {
        start_world_recording(v);
        return;
    }
    if (v->lv.trace_level[0]) {
        snprintf(level, sizeof(level), "%s", v->lv.trace_level);
    } else {
        /* A BSP level: traces name OBJ files, so write one beside the trace. */
        char obj[1040];
        snprintf(obj, sizeof(obj), "%s.obj", v->record_path);
        if (demo_level_export(&v->lv, obj, err, sizeof(err)) != KCC_OK) {
            say(v, err);
            return;
        }
        const char *base = strrchr(obj, '/');
        snprintf(level, sizeof(level), "obj %.500s", base ? base + 1 : obj);
    }
    v->rec_file = fopen(v->record_path, "w");
    if (!v->rec_file) {
        snprintf(err, sizeof(err), "cannot write %s", v->record_path);
        say(v, err);
        return;
    }
    /* A replay starts from a fresh character: make the live one fresh too, where it stands. */
    vec3 c = {v->m.ch.position[0], v->m.ch.position[1], v->m.ch.position[2]};
    kcc_character_init(&v->m.ch, &v->desc, c);
    kcc_status s = kcc_trace_begin(&v->rec, v->rec_file, level, &v->desc, c);
    if (s == KCC_OK)   /* a replay on an edited level then says so (docs/traces.md) */
        s = kcc_trace_level_hash(&v->rec, kcc_level_hash(&v->lv.level));
    if (s != KCC_OK) {
        fclose(v->rec_file);
        v->rec_file = NULL;
        snprintf(err, sizeof(err), "cannot start the trace: %s", kcc_status_str(s));
        say(v, err);
        return;
    }
    v->recording = true;
    snprintf(err, sizeof(err), "recording to %s (F5 stops)", v->record_path);
    say(v, err);
}

static void stop_replay(viewer *v)
{
    demo_world_view_free(&v->wv);
    free(v->wv_scratch);
    v->wv_scratch = NULL;
    v->world_playing = false;
    kcc_trace_free(v->tr);
    free(v->outcomes);
    v->tr = NULL;
    v->outcomes = NULL;
    v->playing = false;
}

/* P on a world trace: the library's verdict (kcc_world_trace_replay), then the recorded steps shown
 * one a frame on the trace's static level: every character's box, the bodies at their poses. */
static void start_world_replay(viewer *v, const char *path)
{
    char msg[1400] = "", err[1200] = "";
    uint32_t steps = 0;
    int rc = demo_world_trace_check(path, &steps, msg, sizeof(msg));
    kcc_status s = rc == DEMO_EXIT_ERROR ? KCC_ERR_PARSE : demo_world_view_load(path, &v->wv, err, sizeof(err));
    uint32_t lb = s == KCC_OK ? demo_world_view_level_body(&v->wv) : UINT32_MAX;
    uint32_t most = 0;
    for (uint32_t l = 0; s == KCC_OK && l < v->wv.level_count; ++l)
        most = v->wv.levels[l].vertex_count > most ? v->wv.levels[l].vertex_count : most;
    v->wv_scratch = s == KCC_OK ? malloc(sizeof(float) * 3 * ((size_t)most + 1)) : NULL;
    if (s != KCC_OK || lb == UINT32_MAX || !v->wv_scratch) {
        say(v, rc == DEMO_EXIT_ERROR ? msg : err[0] ? err : "the world trace has no static level to show");
        stop_replay(v);
        return;
    }
    const char *level = v->wv.level_names[v->wv.bodies[lb].level] + 4;
    if (strcmp(level, v->level_arg) != 0)
        open_level(v, level);   /* the trace's level (the replay's tables stay) */
    v->wv_level_body = lb;
    v->wv_step = 0;
    v->world_playing = true;
    v->trail_n = 0;
    say(v, msg);
}

static void start_replay(viewer *v)
{
    const char *path = v->o->trace ? v->o->trace : v->record_path;
    char err[512] = "";
    if (!path[0]) {
        say(v, "nothing to replay: record a trace with F5 first (or start with --trace T)");
        return;
    }
    stop_recording(v);
    stop_replay(v);
    if (kcc_trace_file_version(path) == 2) {
        start_world_replay(v, path);
        return;
    }
    kcc_trace *tr = NULL;
    if (kcc_trace_load(path, &tr, err, sizeof(err)) != KCC_OK) {
        say(v, err);
        return;
    }
    kcc_mesh *mesh = NULL;
    kcc_status s = kcc_trace_build_level(tr, &mesh, err, sizeof(err));
    kcc_trace_outcome *out = calloc(tr->step_count ? tr->step_count : 1, sizeof(*out));
    kcc_trace_report rep;
    if (s == KCC_OK && out)
        s = kcc_trace_replay(tr, mesh, 0.0f, out, &rep);
    kcc_mesh_destroy(mesh);
    if (s != KCC_OK || !out) {
        if (!err[0])
            snprintf(err, sizeof(err), "%.400s: replay failed: %s", path, kcc_status_str(s));
        say(v, err);
        free(out);
        kcc_trace_free(tr);
        return;
    }
    /* Show the trace's own level. */
    if (strcmp(tr->level, v->lv.name) != 0 && !(v->lv.trace_level[0] && strcmp(v->lv.trace_level + 4, tr->level) == 0))
        open_level(v, tr->level);
    v->desc = tr->desc;
    kcc_character_init(&v->m.ch, &v->desc, tr->start);
    v->tr = tr;
    v->outcomes = out;
    v->play_step = 0;
    v->playing = true;
    v->trail_n = 0;
    snprintf(err, sizeof(err), "replaying %.400s: %u frames, %s", path, rep.frames,
             rep.diverged ? "DIVERGES from the recorded outcome" : "matches the recording exactly");
    say(v, err);
}

/* ------------------------------------------------------------------ input, stepping */

static void retune(viewer *v, float dstep, float dslope)
{
    kcc_character_desc d = v->desc;
    d.step_height = fminf(fmaxf(d.step_height + dstep, 0.0f), 2.0f * d.half_extents[1]);
    d.max_slope_deg = fminf(fmaxf(d.max_slope_deg + dslope, 0.0f), 89.0f);
    kcc_status s = kcc_character_set_desc_checked(&v->m.ch, &d, v->lv.mesh); /* as replays do */
    if (v->recording)
        kcc_trace_set_desc(&v->rec, &d, s);
    if (s == KCC_OK) {
        v->desc = d;
    } else {
        char line[128];
        snprintf(line, sizeof(line), "retune refused: %s", kcc_status_str(s));
        say(v, line);
    }
}

/* The movement keys as the simulation knows them; DEMO_KEY_COUNT for the others. */
static demo_key movement_key(int key)
{
    switch (key) {
    case GLFW_KEY_W: return DEMO_KEY_FORWARD;
    case GLFW_KEY_S: return DEMO_KEY_BACK;
    case GLFW_KEY_A: return DEMO_KEY_LEFT;
    case GLFW_KEY_D: return DEMO_KEY_RIGHT;
    case GLFW_KEY_SPACE: return DEMO_KEY_JUMP;
    case GLFW_KEY_LEFT_SHIFT:
    case GLFW_KEY_RIGHT_SHIFT: return DEMO_KEY_RUN;
    default: return DEMO_KEY_COUNT;
    }
}

/* Key events, not polling: a key pressed and released between two simulation frames is latched
 * (demo_keys) and still acts in the next one. */
static void key_cb(GLFWwindow *w, int key, int scancode, int action, int mods)
{
    (void)scancode;
    (void)mods;
    viewer *v = glfwGetWindowUserPointer(w);
    demo_key mk = movement_key(key);
    if (mk != DEMO_KEY_COUNT && action != GLFW_REPEAT) {
        demo_keys_event(&v->keys, mk, action == GLFW_PRESS);
        return;
    }
    if (action != GLFW_PRESS && !(action == GLFW_REPEAT && key >= GLFW_KEY_1 && key <= GLFW_KEY_4))
        return;
    switch (key) {
    case GLFW_KEY_ESCAPE: glfwSetWindowShouldClose(w, 1); break;
    case GLFW_KEY_Z: v->show_rays = !v->show_rays; break;
    case GLFW_KEY_X: v->show_tris = !v->show_tris; break;
    case GLFW_KEY_C: v->show_normals = !v->show_normals; break;
    case GLFW_KEY_V: v->third_person = !v->third_person; break;
    case GLFW_KEY_T: v->show_trail = !v->show_trail; break;
    case GLFW_KEY_F1: v->show_help = !v->show_help; break;
    case GLFW_KEY_1: retune(v, -0.05f, 0.0f); break;
    case GLFW_KEY_2: retune(v, 0.05f, 0.0f); break;
    case GLFW_KEY_3: retune(v, 0.0f, -5.0f); break;
    case GLFW_KEY_4: retune(v, 0.0f, 5.0f); break;
    case GLFW_KEY_F5:
        if (v->recording || v->world_recording)
            stop_recording(v);
        else if (!v->playing && !v->world_playing)
            start_recording(v);
        break;
    case GLFW_KEY_P:
        if (v->playing || v->world_playing)
            stop_replay(v);
        else
            start_replay(v);
        break;
    case GLFW_KEY_F12:
    case GLFW_KEY_K:
        v->want_shot = output_path(v, "png", true, v->shot_path, sizeof(v->shot_path));
        break;
    case GLFW_KEY_BACKSPACE: respawn(v, true); break;
    case GLFW_KEY_TAB:
        v->captured = !v->captured;
        glfwSetInputMode(w, GLFW_CURSOR, v->captured ? GLFW_CURSOR_DISABLED : GLFW_CURSOR_NORMAL);
        v->have_mouse = false;
        break;
    default: break;
    }
}

static void trail_add(viewer *v)
{
    const kcc_character *ch = &v->m.ch;
    float *t = v->trail[v->trail_at];
    t[0] = ch->position[0];
    t[1] = ch->position[1] - ch->desc.half_extents[1] + 0.03f;
    t[2] = ch->position[2];
    v->trail_branch[v->trail_at] = (uint8_t)v->m.last.branch;
    v->trail_at = (v->trail_at + 1) % TRAIL;
    if (v->trail_n < TRAIL)
        v->trail_n++;
}

static void step_inner(viewer *v, bool scripted);

/* One frame of the level's game: the player's input, the step, and the player's state copied to the
 * viewer's character (camera, box, HUD; the per-move debug data is that of single-mesh moves). */
static void step_game(viewer *v, const demo_input *in)
{
    game_set_input(v->game, v->player, in);
    game_step(v->game, DEMO_DT);
    kcc_character_state st;
    if (game_character_state(v->game, v->player, &st, &v->m.last)) {
        memcpy(v->m.ch.position, st.position, sizeof(vec3));
        v->m.ch.on_ground = st.on_ground;
    }
    memset(&v->m.dbg, 0, sizeof(v->m.dbg));
}

static void step(viewer *v, bool scripted)
{
    step_inner(v, scripted);
    trail_add(v);
}

/* One recorded step of a world trace a frame; the camera follows its first character. */
static void step_world_replay(viewer *v)
{
    if (++v->wv_step > v->wv.steps) {
        vec3 c;
        memcpy(c, v->m.ch.position, sizeof(vec3));
        stop_replay(v);
        kcc_character_init(&v->m.ch, &v->desc, c);   /* the player goes on from there */
        say(v, "world replay finished");
        return;
    }
    for (uint32_t c = 0; c < v->wv.character_count; ++c) {
        const float *centre = demo_world_view_centre(&v->wv, v->wv_step, c);
        if (centre) {
            memcpy(v->m.ch.position, centre, sizeof(vec3));
            v->m.last.flags = v->wv.flags[(size_t)v->wv_step * v->wv.character_count + c];
            break;
        }
    }
}

static void step_inner(viewer *v, bool scripted)
{
    if (v->world_playing) {
        step_world_replay(v);
        return;
    }
    if (v->playing) {
        /* Replays move the box along the replayed outcomes, one step a frame (retunes apply at once). */
        while (v->play_step < v->tr->step_count) {
            const kcc_trace_step *s = &v->tr->steps[v->play_step];
            const kcc_trace_outcome *o = &v->outcomes[v->play_step];
            v->play_step++;
            memcpy(v->m.ch.position, o->position, sizeof(vec3));
            if (s->kind == KCC_TRACE_MOVE) {
                v->m.last.flags = o->flags;
                memcpy(v->m.last_disp, s->vec, sizeof(vec3));
                break;
            }
        }
        if (v->play_step >= v->tr->step_count) {
            vec3 c;
            memcpy(c, v->m.ch.position, sizeof(vec3));
            stop_replay(v);
            kcc_character_init(&v->m.ch, &v->desc, c);
            say(v, "replay finished");
        }
        return;
    }
    demo_input in = demo_keys_input(&v->keys, v->yaw);
    if (scripted) {
        memset(&in, 0, sizeof(in));
        in.yaw = v->yaw;
        in.forward = 1.0f;
    }
    if (v->game) {
        step_game(v, &in);
        return;
    }
    demo_mover_step(&v->m, v->lv.mesh, &in);
    if (v->recording) {
        kcc_status s = kcc_trace_record(&v->rec, v->m.last_disp, &v->m.ch, &v->m.last);
        if (s != KCC_OK)
            stop_recording(v);
    }
    if (v->m.ch.position[1] < v->lv.bounds[0][1] - 30.0f)
        respawn(v, false);
}

/* ------------------------------------------------------------------ drawing */

static void draw_box_lines(const float b[2][3])
{
    glBegin(GL_LINES);
    for (int k = 0; k < 8; ++k)
        for (int axis = 0; axis < 3; ++axis) {
            if (k & (1 << axis))
                continue;
            int m = k | (1 << axis);
            glVertex3f(b[k & 1][0], b[(k >> 1) & 1][1], b[(k >> 2) & 1][2]);
            glVertex3f(b[m & 1][0], b[(m >> 1) & 1][1], b[(m >> 2) & 1][2]);
        }
    glEnd();
}

static void arrow(const float from[3], const float dir[3], float len)
{
    float to[3] = {from[0] + dir[0] * len, from[1] + dir[1] * len, from[2] + dir[2] * len};
    glBegin(GL_LINES);
    glVertex3fv(from);
    glVertex3fv(to);
    glEnd();
    glPointSize(7.0f);
    glBegin(GL_POINTS);
    glVertex3fv(to);
    glEnd();
}

/* Debug data from the controller itself (kcc_character_move_debug): the edge rays of the ground
 * probe that decided the last move, the triangles its swept move touched first (whose normals were
 * averaged), the averaged normal and the slide along its tangent. */
static void draw_debug(viewer *v, char *branch_text, size_t branch_size)
{
    const kcc_character *ch = &v->m.ch;
    const kcc_move_result *r = &v->m.last;
    const kcc_move_debug *dbg = &v->m.dbg;
    const float *he = ch->desc.half_extents, *p = ch->position;
    const float feet = p[1] - he[1];
    glDisable(GL_DEPTH_TEST);
    glLineWidth(2.0f);
    if (v->show_rays) {
        for (int i = 0; i < 4; ++i) {
            bool hit = dbg->ray_hit & (1u << i);
            if (dbg->ray_walkable & (1u << i))
                glColor3f(0.2f, 1.0f, 0.3f);   /* walkable hit: green */
            else if (hit)
                glColor3f(1.0f, 0.6f, 0.1f);   /* hit, too steep: orange */
            else
                glColor3f(0.6f, 0.6f, 0.6f);   /* miss: grey */
            glBegin(GL_LINES);
            glVertex3fv(dbg->ray_from[i]);
            glVertex3fv(dbg->ray_to[i]);
            glEnd();
            if (hit) {
                glPointSize(8.0f);
                glBegin(GL_POINTS);
                glVertex3fv(dbg->ray_to[i]);
                glEnd();
            }
        }
    }
    if (v->show_tris) {
        glEnable(GL_BLEND);
        glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
        for (uint32_t k = 0; k < dbg->contact_count; ++k) {
            vec3 t[3];
            if (!kcc_mesh_triangle(v->lv.mesh, dbg->contacts[k], t))
                continue;
            glColor4f(1.0f, 0.45f, 0.1f, 0.35f);
            glBegin(GL_TRIANGLES);
            for (int c = 0; c < 3; ++c)
                glVertex3fv(t[c]);
            glEnd();
            glColor4f(1.0f, 0.55f, 0.15f, 0.9f);
            glBegin(GL_LINE_LOOP);
            for (int c = 0; c < 3; ++c)
                glVertex3fv(t[c]);
            glEnd();
        }
        glDisable(GL_BLEND);
    }
    if (v->show_normals && dbg->contact_count > 0) {
        glColor3f(0.1f, 0.95f, 0.95f);   /* averaged normal: cyan */
        arrow(p, dbg->averaged_normal, 1.2f);
        const float *s = dbg->slide;
        float sl = sqrtf(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
        if (sl > 1e-6f) {
            float dir[3] = {s[0] / sl, s[1] / sl, s[2] / sl};
            glColor3f(1.0f, 0.2f, 0.9f);   /* slide direction: magenta */
            arrow(p, dir, 1.2f);
        }
    }
    if (v->show_normals) {
        if (r->flags & (KCC_MOVE_ON_GROUND | KCC_MOVE_ON_STEEP)) {
            float f[3] = {p[0], feet, p[2]};
            glColor3f(0.3f, 1.0f, 0.3f);       /* ground normal from the result: green */
            arrow(f, r->ground_normal, 0.8f);
        }
        if (r->flags & (KCC_MOVE_HIT_WALL | KCC_MOVE_HIT_CEILING)) {
            glColor3f(0.3f, 0.5f, 1.0f);       /* wall normal from the result: blue */
            arrow(p, r->wall_normal, 0.8f);
        }
    }
    glEnable(GL_DEPTH_TEST);
    glLineWidth(1.0f);
    static const char *const names[5] = {"P0 stayed", "P1 moved", "P2 moved+settled", "P3 slid", "P4 slid+settled"};
    snprintf(branch_text, branch_size, "branch %s  first contacts %u", (unsigned)r->branch < 5 ? names[r->branch] : "?",
             dbg->contact_count);
}

static void text(int x, int y, int scale, const char *s)
{
    glBegin(GL_QUADS);
    for (int i = 0; s[i]; ++i) {
        unsigned char ch = (unsigned char)s[i];
        if (ch < 32 || ch > 126)
            ch = '?';
        const uint8_t *g = font6x10[ch - 32];
        for (int r = 0; r < FONT_H; ++r)
            for (int c = 0; c < FONT_W; ++c)
                if (g[r] & (1u << (FONT_W - 1 - c))) {
                    float px = (float)(x + (i * FONT_W + c) * scale), py = (float)(y + r * scale);
                    glVertex2f(px, py);
                    glVertex2f(px + (float)scale, py);
                    glVertex2f(px + (float)scale, py + (float)scale);
                    glVertex2f(px, py + (float)scale);
                }
    }
    glEnd();
}

static void draw_hud(viewer *v, int w, int h, const char *branch_text)
{
    glMatrixMode(GL_PROJECTION);
    glLoadIdentity();
    glOrtho(0, w, h, 0, -1, 1);
    glMatrixMode(GL_MODELVIEW);
    glLoadIdentity();
    glDisable(GL_DEPTH_TEST);
    glDisable(GL_TEXTURE_2D);
    const kcc_character *ch = &v->m.ch;
    char lines[12][256];
    int nl = 0;
    char flags[KCC_TRACE_FLAGS_CHARS];
    kcc_trace_flags_to_text(v->m.last.flags, flags, sizeof(flags));
    snprintf(lines[nl++], 256, "kcc-demo  %.120s (%u triangles)  %.0f fps", v->lv.name, v->lv.level.triangle_count,
             (double)v->fps);
    snprintf(lines[nl++], 256, "pos %.2f %.2f %.2f  vy %.2f m/s  %s", (double)ch->position[0],
             (double)ch->position[1], (double)ch->position[2], (double)v->m.vy, ch->on_ground ? "on ground" : "airborne");
    snprintf(lines[nl++], 256, "flags %.200s", flags);
    snprintf(lines[nl++], 256, "%s  edge rays %c%c%c%c", branch_text, (v->m.last.ground_rays & 1) ? '1' : '0',
             (v->m.last.ground_rays & 2) ? '1' : '0', (v->m.last.ground_rays & 4) ? '1' : '0',
             (v->m.last.ground_rays & 8) ? '1' : '0');
    snprintf(lines[nl++], 256, "step height %.2f m [1/2]   slope limit %.0f deg [3/4]", (double)v->desc.step_height,
             (double)v->desc.max_slope_deg);
    if (v->show_help) {
        snprintf(lines[nl++], 256, "WASD move  mouse look  space jump  shift run  V camera  Tab mouse  Bksp respawn");
        snprintf(lines[nl++], 256, "Z rays %s  X overlap tris %s  C normals %s  T trail %s  F5 rec  P replay  K shot",
                 v->show_rays ? "on" : "off", v->show_tris ? "on" : "off", v->show_normals ? "on" : "off",
                 v->show_trail ? "on" : "off");
        snprintf(lines[nl++], 256, "box/trail: P0 red P1 blue P2/P3 yellow P4 magenta  arrows: avg normal cyan, slide magenta,");
        snprintf(lines[nl++], 256, "ground green, wall blue  rays: green walkable, orange other hit, grey miss");
    }
    if (v->recording)
        snprintf(lines[nl++], 256, "REC %.200s  frame %u", v->record_path, v->rec.frames);
    if (v->playing)
        snprintf(lines[nl++], 256, "REPLAY step %u / %u", v->play_step, v->tr->step_count);
    if (v->world_recording)
        snprintf(lines[nl++], 256, "REC world %.200s  (F5 stops)", v->record_path);
    if (v->world_playing)
        snprintf(lines[nl++], 256, "REPLAY world step %u / %u, %u characters, %u bodies", v->wv_step, v->wv.steps,
                 v->wv.character_count, v->wv.body_count);
    if (v->msg[0] && glfwGetTime() < v->msg_until)
        snprintf(lines[nl++], 256, "%s", v->msg);
    int maxw = 0;
    for (int i = 0; i < nl; ++i)
        maxw = (int)fmax(maxw, (double)strlen(lines[i]));
    glEnable(GL_BLEND);
    glColor4f(0.0f, 0.0f, 0.0f, 0.55f);
    glBegin(GL_QUADS);
    glVertex2f(4, 4);
    glVertex2f((float)(12 + maxw * 12), 4);
    glVertex2f((float)(12 + maxw * 12), (float)(10 + nl * 22));
    glVertex2f(4, (float)(10 + nl * 22));
    glEnd();
    glDisable(GL_BLEND);
    for (int i = 0; i < nl; ++i) {
        if (i == 0)
            glColor3f(1.0f, 1.0f, 1.0f);
        else if (strncmp(lines[i], "REC", 3) == 0)
            glColor3f(1.0f, 0.3f, 0.3f);
        else
            glColor3f(0.85f, 0.9f, 0.95f);
        text(8, 8 + i * 22, 2, lines[i]);
    }
    glEnable(GL_DEPTH_TEST);
}

static void save_screenshot(viewer *v, int w, int h, const char *path)
{
    raster_image img;
    const uint8_t bg[3] = {0, 0, 0};
    if (raster_image_init(&img, (uint32_t)w, (uint32_t)h, bg) != KCC_OK)
        return;
    uint8_t *tmp = malloc((size_t)w * (size_t)h * 3);
    if (tmp) {
        glPixelStorei(GL_PACK_ALIGNMENT, 1);
        glReadPixels(0, 0, w, h, GL_RGB, GL_UNSIGNED_BYTE, tmp);
        for (int y = 0; y < h; ++y)   /* GL rows go bottom-up */
            memcpy(img.rgb + (size_t)y * (size_t)w * 3, tmp + (size_t)(h - 1 - y) * (size_t)w * 3, (size_t)w * 3);
        char line[1100];
        snprintf(line, sizeof(line), "%s %s", raster_write_png(&img, path) == KCC_OK ? "saved" : "cannot write",
                 path);
        say(v, line);
    }
    free(tmp);
    raster_image_free(&img);
}

/* The game's movers (solid, at their current poses), triggers (outlines: jump pads green, teleporters
 * magenta, the rest grey) and the other characters' boxes. */
static void draw_game(viewer *v)
{
    const game *g = v->game;
    for (uint32_t i = 0; i < g->mover_count; ++i) {
        kcc_transform t;
        if (kcc_world_get_body_transform(g->world, g->movers[i].body, &t, NULL) != KCC_OK)
            continue;
        uint32_t n = kcc_mesh_triangle_count(g->movers[i].mesh);
        glBegin(GL_TRIANGLES);
        for (uint32_t k = 0; k < n; ++k) {
            vec3 c[3], w[3];
            if (!kcc_mesh_triangle(g->movers[i].mesh, k, c))
                continue;
            for (int j = 0; j < 3; ++j)
                kcc_transform_point(&t, c[j], w[j]);
            float e1[3] = {w[1][0] - w[0][0], w[1][1] - w[0][1], w[1][2] - w[0][2]};
            float e2[3] = {w[2][0] - w[0][0], w[2][1] - w[0][1], w[2][2] - w[0][2]};
            float ny = e1[2] * e2[0] - e1[0] * e2[2], len = sqrtf(e1[0] * e1[0] + e1[1] * e1[1] + e1[2] * e1[2]) *
                                                            sqrtf(e2[0] * e2[0] + e2[1] * e2[1] + e2[2] * e2[2]);
            float shade = 0.55f + 0.35f * (len > 0.0f ? ny / len : 0.0f);
            glColor3f(0.85f * shade, 0.55f * shade, 0.2f * shade);
            for (int j = 0; j < 3; ++j)
                glVertex3fv(w[j]);
        }
        glEnd();
    }
    for (uint32_t i = 0; i < g->trigger_count; ++i) {
        game_trigger_kind k = g->triggers[i].kind;
        if (k == GAME_TRIGGER_PUSH)
            glColor3f(0.3f, 1.0f, 0.4f);
        else if (k == GAME_TRIGGER_TELEPORT)
            glColor3f(1.0f, 0.3f, 1.0f);
        else
            glColor3f(0.6f, 0.6f, 0.6f);
        draw_box_lines((const float(*)[3])g->triggers[i].box);
    }
    glColor3f(0.3f, 0.7f, 1.0f);
    for (uint32_t i = 0; i < g->character_count; ++i) {
        kcc_character_state st;
        if (i == v->player || !game_character_state(g, i, &st, NULL))
            continue;
        float b[2][3];
        for (int k = 0; k < 3; ++k) {
            b[0][k] = st.position[k] - v->desc.half_extents[k];
            b[1][k] = st.position[k] + v->desc.half_extents[k];
        }
        draw_box_lines((const float(*)[3])b);
    }
}

/* A world trace at the replayed step: solid bodies at their poses, sensors as boxes, every
 * character's box. */
static void draw_world_replay(viewer *v)
{
    const demo_world_view *w = &v->wv;
    for (uint32_t b = 0; b < w->body_count; ++b) {
        float box[2][3];
        if (b == v->wv_level_body || !demo_world_view_place_body(w, v->wv_step, b, v->wv_scratch, box))
            continue;
        if (w->bodies[b].sensor) {
            glColor3f(0.3f, 1.0f, 0.4f);
            draw_box_lines((const float(*)[3])box);
            continue;
        }
        const kcc_level *lv = &w->levels[w->bodies[b].level];
        glColor3f(0.85f, 0.55f, 0.2f);
        glBegin(GL_TRIANGLES);
        for (uint32_t t = 0; t < 3 * lv->triangle_count; ++t)
            glVertex3fv(v->wv_scratch + 3 * (size_t)lv->indices[t]);
        glEnd();
    }
    glColor3f(0.3f, 0.7f, 1.0f);
    for (uint32_t c = 0; c < w->character_count; ++c) {
        const float *centre = demo_world_view_centre(w, v->wv_step, c);
        if (!centre)
            continue;
        float box[2][3];
        for (int k = 0; k < 3; ++k) {
            box[0][k] = centre[k] - w->half_extents[3 * c + k];
            box[1][k] = centre[k] + w->half_extents[3 * c + k];
        }
        draw_box_lines((const float(*)[3])box);
    }
}

/* The box takes the colour of the branch that placed it: P0 red, P1 sky blue, P2 and P3 yellow,
 * P4 magenta (and P2's yellow for an unknown branch). */
static const float *branch_colour(uint32_t branch)
{
    static const float branch_rgb[5][3] = {{1.0f, 0.25f, 0.2f}, {0.4f, 0.8f, 1.0f}, {1.0f, 0.85f, 0.2f},
                                           {1.0f, 0.85f, 0.2f}, {1.0f, 0.3f, 0.9f}};
    return branch_rgb[branch < 5 ? branch : 2];
}

/* The projection (70 degrees vertical) and the camera: behind the character in third person, at its
 * eyes in first. */
static void place_camera(const viewer *v, int w, int h)
{
    glMatrixMode(GL_PROJECTION);
    glLoadIdentity();
    const double nearz = 0.05, fov = 70.0 * 3.14159265 / 180.0;
    double top = nearz * tan(fov * 0.5), right = top * (double)w / (double)(h ? h : 1);
    glFrustum(-right, right, -top, top, nearz, 4000.0);
    glMatrixMode(GL_MODELVIEW);
    glLoadIdentity();
    const float *p = v->m.ch.position;
    float d[3] = {-sinf(v->yaw) * cosf(v->pitch), sinf(v->pitch), -cosf(v->yaw) * cosf(v->pitch)};
    float eye[3];
    if (v->third_person) {
        /* Orbit behind the character's head, pulled in where the level is in the way: a sphere of
         * 10 cm radius swept from the head towards the camera stops at the first wall (the eye keeps
         * 10 cm from it in every direction, more than the near plane). */
        const float target[3] = {p[0], p[1] + 0.6f, p[2]}, back[3] = {-d[0], -d[1], -d[2]};
        demo_camera_place(v->lv.mesh, target, back, 4.5f, 0.1f, eye);
    } else {
        eye[0] = p[0];
        eye[1] = p[1] + 0.7f * v->m.ch.desc.half_extents[1];
        eye[2] = p[2];
    }
    glRotatef(-v->pitch / DEG, 1.0f, 0.0f, 0.0f);
    glRotatef(-v->yaw / DEG, 0.0f, 1.0f, 0.0f);
    glTranslatef(-eye[0], -eye[1], -eye[2]);
}

/* The level's display list, grid-textured, pushed back a little so lines on it stay visible. */
static void draw_level(const viewer *v)
{
    glEnable(GL_DEPTH_TEST);
    glEnable(GL_TEXTURE_2D);
    glBindTexture(GL_TEXTURE_2D, v->grid_tex);
    glTexEnvi(GL_TEXTURE_ENV, GL_TEXTURE_ENV_MODE, GL_MODULATE);
    glEnable(GL_POLYGON_OFFSET_FILL);
    glPolygonOffset(1.0f, 1.0f);
    glCallList(v->list);
    glDisable(GL_POLYGON_OFFSET_FILL);
    glDisable(GL_TEXTURE_2D);
}

static void draw_spawns(const viewer *v)
{
    glColor3f(0.9f, 0.25f, 0.25f);
    glPointSize(6.0f);
    glBegin(GL_POINTS);
    for (uint32_t i = 0; i < v->lv.level.spawn_count; ++i)
        glVertex3fv(v->lv.level.spawns + 3 * (size_t)i);
    glEnd();
}

/* The character's box in third person: translucent faces and outlined edges in its branch colour. */
static void draw_player_box(const viewer *v)
{
    vec3 box[2];
    kcc_character_box(&v->m.ch, box);
    const float *bc = branch_colour((unsigned)v->m.last.branch);
    glEnable(GL_BLEND);
    glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
    glColor4f(bc[0], bc[1], bc[2], 0.25f);
    glBegin(GL_QUADS);
    for (int f = 0; f < 6; ++f) {
        int axis = f >> 1, side = f & 1, a1 = (axis + 1) % 3, a2 = (axis + 2) % 3;
        static const int q[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
        for (int k = 0; k < 4; ++k) {
            float c[3];
            c[axis] = box[side][axis];
            c[a1] = box[q[k][0]][a1];
            c[a2] = box[q[k][1]][a2];
            glVertex3fv(c);
        }
    }
    glEnd();
    glDisable(GL_BLEND);
    glColor3f(bc[0], bc[1], bc[2]);
    glLineWidth(2.0f);
    draw_box_lines((const float(*)[3])box);
    glLineWidth(1.0f);
}

/* The last 10 s of feet positions, coloured by the branch of each frame (the box colours). */
static void draw_trail(const viewer *v)
{
    glLineWidth(3.0f);
    glBegin(GL_LINE_STRIP);
    for (uint32_t k = 0; k < v->trail_n; ++k) {
        uint32_t i = (v->trail_at + TRAIL - v->trail_n + k) % TRAIL;
        const float *c = branch_colour(v->trail_branch[i]);
        glColor3f(c[0], c[1], c[2]);
        glVertex3fv(v->trail[i]);
    }
    glEnd();
    glLineWidth(1.0f);
}

static void render(viewer *v, int w, int h)
{
    glViewport(0, 0, w, h);
    glClearColor(0.11f, 0.12f, 0.15f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
    place_camera(v, w, h);
    draw_level(v);
    draw_spawns(v);
    if (v->third_person)
        draw_player_box(v);
    if (v->show_trail && v->trail_n > 1)
        draw_trail(v);
    if (v->world_playing)
        draw_world_replay(v);
    else if (v->game)
        draw_game(v);
    char branch_text[128];
    draw_debug(v, branch_text, sizeof(branch_text));
    draw_hud(v, w, h, branch_text);
}

/* A window and a zeroed viewer on it, GL 2.1 (4x MSAA unless screenshotting or KCC_DEMO_NO_MSAA);
 * NULL with *status DEMO_VIEWER_NO_DISPLAY when no window opens, DEMO_EXIT_ERROR out of memory. */
static viewer *open_viewer_window(const demo_viewer_opts *o, int *status)
{
    *status = DEMO_VIEWER_NO_DISPLAY;
    const char *disp = getenv("DISPLAY"), *wl = getenv("WAYLAND_DISPLAY");
    if ((!disp || !disp[0]) && (!wl || !wl[0]))
        return NULL;
    if (!glfwInit())
        return NULL;
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 2);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 1);
    glfwWindowHint(GLFW_SAMPLES, (o->screenshot || getenv("KCC_DEMO_NO_MSAA")) ? 0 : 4);
    viewer *v = calloc(1, sizeof(viewer));
    if (!v) {
        glfwTerminate();
        *status = DEMO_EXIT_ERROR;
        return NULL;
    }
    v->win = glfwCreateWindow((int)o->width, (int)o->height, "kcc-demo", NULL, NULL);
    if (!v->win) {
        free(v);
        glfwTerminate();
        return NULL;
    }
    glfwMakeContextCurrent(v->win);
    glfwSwapInterval(o->screenshot ? 0 : 1);
    glfwSetWindowUserPointer(v->win, v);
    glfwSetKeyCallback(v->win, key_cb);
    return v;
}

/* The view at start: third person looking along +Z (the showcase's features lie beyond its spawn
 * points), the ground rays and help shown; --screenshot draws every overlay. */
static void set_start_view(viewer *v, const demo_viewer_opts *o)
{
    v->desc = kcc_character_default_desc();
    v->third_person = true;
    v->show_rays = v->show_help = true;
    v->show_tris = v->show_normals = v->show_trail = o->screenshot != NULL;
    v->pitch = -0.35f;
    v->yaw = 3.14159265f;
}

/* With the cursor captured, the mouse turns the camera (pitch kept within 1.5 rad of level). */
static void follow_mouse(viewer *v)
{
    double x, y;
    glfwGetCursorPos(v->win, &x, &y);
    if (v->have_mouse) {
        v->yaw -= (float)(x - v->mx) * 0.0025f;
        v->pitch -= (float)(y - v->my) * 0.0025f;
        v->pitch = fminf(fmaxf(v->pitch, -1.5f), 1.5f);
    }
    v->mx = x;
    v->my = y;
    v->have_mouse = true;
}

/* Steps the player at 60 Hz for the time that passed (at most 0.25 s and 8 steps a frame); acc holds
 * the time not yet stepped (s). */
static void step_with_clock(viewer *v, double *acc, double elapsed)
{
    *acc += fmin(elapsed, 0.25);
    for (int n = 0; *acc >= DEMO_DT && n < 8; ++n) {
        step(v, false);
        *acc -= DEMO_DT;
    }
}

/* --screenshot saves its picture after shot_frames frames and closes the window; F12 saves one at
 * any frame. */
static void save_due_screenshot(viewer *v, int w, int h, uint32_t shot_frames)
{
    if (v->o->screenshot && v->frame >= shot_frames) {
        save_screenshot(v, w, h, v->o->screenshot);
        glfwSetWindowShouldClose(v->win, 1);
    } else if (v->want_shot) {
        v->want_shot = false;
        save_screenshot(v, w, h, v->shot_path);
    }
}

/* Frames per second, measured over half-second spans. */
static void count_fps(viewer *v, double now)
{
    v->fps_n++;
    if (now - v->fps_t >= 0.5) {
        v->fps = (float)(v->fps_n / (now - v->fps_t));
        v->fps_n = 0;
        v->fps_t = now;
    }
}

static void close_viewer(viewer *v)
{
    stop_recording(v);
    stop_replay(v);
    game_destroy(v->game);
    demo_level_close(&v->lv);
    glfwDestroyWindow(v->win);
    glfwTerminate();
    free(v);
}

int demo_viewer_run(const demo_viewer_opts *o)
{
    int status;
    viewer *v = open_viewer_window(o, &status);
    if (!v)
        return status;
    demo_viewer_opts oo = *o;
    v->o = &oo;
    set_start_view(v, o);
    build_grid_texture(v);
    if (!open_level(v, o->level ? o->level : "showcase")) {
        glfwDestroyWindow(v->win);
        glfwTerminate();
        free(v);
        return DEMO_EXIT_ERROR;
    }
    if (o->screenshot && (o->trace || o->record))
        (o->trace ? start_replay : start_recording)(v);   /* the replay's 90th frame, or the 90 recorded */
    if (!o->screenshot) {
        v->captured = true;
        glfwSetInputMode(v->win, GLFW_CURSOR, GLFW_CURSOR_DISABLED);
    }
    double acc = 0.0, prev = glfwGetTime();
    v->fps_t = prev;
    const uint32_t shot_frames = 90;   /* --screenshot: walk forward 1.5 s, then save */
    while (!glfwWindowShouldClose(v->win)) {
        glfwPollEvents();
        double now = glfwGetTime();
        if (v->captured)
            follow_mouse(v);
        if (o->screenshot)
            step(v, true);   /* fixed frames, independent of the clock */
        else
            step_with_clock(v, &acc, now - prev);
        prev = now;
        int w, h;
        glfwGetFramebufferSize(v->win, &w, &h);
        render(v, w, h);
        v->frame++;
        save_due_screenshot(v, w, h, shot_frames);
        glfwSwapBuffers(v->win);
        count_fps(v, now);
    }
    close_viewer(v);
    return 0;
}
