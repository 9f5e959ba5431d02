/* record_goldens.c: writes the golden traces of test/traces/ (and the small OBJ scenes they walk on)
 * by driving the controller with scripted input and recording it through the kcc_trace_* API, the
 * way an engine would. `make goldens` runs it; `make test` then replays every trace with kcc-replay.
 *   kcc-record-goldens [OUTDIR [NAME-SUBSTRING]]      (OUTDIR defaults to test/traces) */
#include "kcc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ------------------------------------------------------------------------------- OBJ scenes

#define MAX_V 4096
#define MAX_F 4096

typedef struct scene {
    float    v[MAX_V][3];
    uint32_t nv;
    uint32_t f[MAX_F][4];   // quads (1-based OBJ indices); triangles have f[i][3] == 0
    uint32_t nf;
    int      up_axis;       // the world's up (kcc_character_desc.up_axis; 0: +Y): scenes are
                            // authored Y-up and turned by authored_to_world when written
} scene;

static uint32_t sv(scene *s, float x, float y, float z)
{
    if (s->nv == MAX_V) {
        fprintf(stderr, "scene too large\n");
        exit(2);
    }
    s->v[s->nv][0] = x;
    s->v[s->nv][1] = y;
    s->v[s->nv][2] = z;
    return ++s->nv;
}

static void quad(scene *s, uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
    if (s->nf == MAX_F) {
        fprintf(stderr, "scene too large\n");
        exit(2);
    }
    uint32_t *q = s->f[s->nf++];
    q[0] = a, q[1] = b, q[2] = c, q[3] = d;
}

// Horizontal quad at height y over [x0,x1] x [z0,z1], facing up.
static void floor_quad(scene *s, float x0, float z0, float x1, float z1, float y)
{
    quad(s, sv(s, x0, y, z0), sv(s, x0, y, z1), sv(s, x1, y, z1), sv(s, x1, y, z0));
}

// Axis-aligned box, faces outward.
static void box(scene *s, float x0, float y0, float z0, float x1, float y1, float z1)
{
    uint32_t c[8];
    for (int i = 0; i < 8; ++i)
        c[i] = sv(s, i & 1 ? x1 : x0, i & 2 ? y1 : y0, i & 4 ? z1 : z0);
    quad(s, c[0], c[4], c[6], c[2]);
    quad(s, c[1], c[3], c[7], c[5]);
    quad(s, c[0], c[1], c[5], c[4]);
    quad(s, c[2], c[6], c[7], c[3]);
    quad(s, c[0], c[2], c[3], c[1]);
    quad(s, c[4], c[5], c[7], c[6]);
}

// Authored Y-up coordinates into a world whose up is up_axis, by an exact proper rotation:
// +Z up (2): (x, y, z) -> (x, -z, y); +X up (3): (x, y, z) -> (y, -x, z); -Y up (-1):
// (x, y, z) -> (-x, -y, z). Any other value (0, 1): unchanged.
static void authored_to_world(int up_axis, float v[3])
{
    const float x = v[0], y = v[1], z = v[2];
    if (up_axis == 2)
        v[1] = -z, v[2] = y;
    else if (up_axis == 3)
        v[0] = y, v[1] = -x;
    else if (up_axis == -1)
        v[0] = -x, v[1] = -y;
}

static void write_scene(const char *dir, const char *name, const scene *s, const char *what)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(2);
    }
    fprintf(f, "# %s: %s\n# written by test/traces/record_goldens.c (make goldens)\n", name, what);
    for (uint32_t i = 0; i < s->nv; ++i) {
        float p[3] = {s->v[i][0], s->v[i][1], s->v[i][2]};
        authored_to_world(s->up_axis, p);
        fprintf(f, "v %.9g %.9g %.9g\n", (double)p[0], (double)p[1], (double)p[2]);
    }
    for (uint32_t i = 0; i < s->nf; ++i)
        if (s->f[i][3])
            fprintf(f, "f %u %u %u %u\n", s->f[i][0], s->f[i][1], s->f[i][2], s->f[i][3]);
        else
            fprintf(f, "f %u %u %u\n", s->f[i][0], s->f[i][1], s->f[i][2]);
    if (fclose(f) != 0) {
        perror(path);
        exit(2);
    }
}

// Each build_* fills a cleared scene; write_scenes names and describes it.

static void build_flat(scene *s)
{
    floor_quad(s, -20, -20, 20, 20, 0);
}

static void build_stairs(scene *s)
{
    floor_quad(s, -20, -5, 20, 5, 0);
    for (int i = 0; i < 10; ++i)   // 0.2 m rise, 0.3 m run, from x = 0
        box(s, 0.3f * (float)i, 0, -2, 0.3f * (float)(i + 1), 0.2f * (float)(i + 1), 2);
    box(s, 3, 0, -2, 8, 2, 2);    // landing at 2 m
    for (int i = 0; i < 4; ++i)    // 0.45 m rise beside: too high to step
        box(s, 0.5f * (float)i, 0, 3, 0.5f * (float)(i + 1), 0.45f * (float)(i + 1), 5);
}

static void build_ledge(scene *s)
{
    floor_quad(s, -20, -20, 20, 20, 0);
    box(s, 2, 0, -6, 6, 0.3f, -2);     // climbable ledge
    box(s, 2, 0, 2, 6, 0.5f, 6);       // too high to step
    box(s, -8, 0, -4, -2, 2, 4);       // platform to walk off
}

static void build_walls(scene *s)
{
    floor_quad(s, -20, -20, 20, 20, 0);
    box(s, 5, 0, -20, 5.5f, 3, 20);                      // wall across +x
    quad(s, sv(s, -10, 0, 5), sv(s, -10, 3, 5), sv(s, 0, 3, 10), sv(s, 0, 0, 10));  // 26.6 deg
    box(s, -10, 0, -10, -9.5f, 3, -4);                   // corner: two walls at 90 degrees
    box(s, -10, 0, -10.5f, -4, 3, -10);
}

static void build_beam(scene *s)
{
    floor_quad(s, -20, -20, 20, 20, 0);
    box(s, -10, 0, -0.1f, 10, 1, 0.1f);                  // 0.2 m wide beam, 1 m high
}

static void build_ceiling(scene *s)
{
    floor_quad(s, -20, -20, 20, 20, 0);
    box(s, -20, 2.2f, -20, 0, 2.5f, 20);                 // ceiling at 2.2 m over x < 0
    box(s, 4, 1.5f, -3, 6, 3, 3);                        // lintel: 1.5 m clearance at x in [4,6]
}

static void build_thin_wall(scene *s)
{
    floor_quad(s, -20, -20, 20, 20, 0);
    quad(s, sv(s, 3, 0, -5), sv(s, 3, 4, -5), sv(s, 3, 4, 5), sv(s, 3, 0, 5));
}

static void build_block(scene *s)
{
    floor_quad(s, -20, -20, 20, 20, 0);
    box(s, -1, 0, -1, 1, 1, 1);                          // block the character starts inside
}

// A 24 m floor of 1 m cells split into triangles with alternating diagonals, and a 20 m x 3 m
// wall at x = 6 made of 0.25 m cells: many small triangles, many shared edges.
static void build_grid(scene *s)
{
    uint32_t g[25][25];
    for (int i = 0; i <= 24; ++i)
        for (int k = 0; k <= 24; ++k)
            g[i][k] = sv(s, (float)(i - 12), 0, (float)(k - 12));
    for (int i = 0; i < 24; ++i)
        for (int k = 0; k < 24; ++k) {
            uint32_t a = g[i][k], b = g[i][k + 1], c = g[i + 1][k + 1], d = g[i + 1][k];
            if ((i + k) % 2)
                quad(s, a, b, c, 0), quad(s, a, c, d, 0);
            else
                quad(s, a, b, d, 0), quad(s, b, c, d, 0);
        }
    uint32_t w[13][81];
    for (int j = 0; j <= 12; ++j)
        for (int k = 0; k <= 80; ++k)
            w[j][k] = sv(s, 6, 0.25f * (float)j, -10 + 0.25f * (float)k);
    for (int j = 0; j < 12; ++j)
        for (int k = 0; k < 80; ++k) {
            quad(s, w[j][k], w[j + 1][k], w[j + 1][k + 1], 0);
            quad(s, w[j][k], w[j + 1][k + 1], w[j][k + 1], 0);
        }
}

static void build_wedge(scene *s)
{
    floor_quad(s, -20, -20, 20, 20, 0);
    const float c = 10.0f * 0.96592583f, sn = 10.0f * 0.25881905f;   // 10 m at 15 degrees
    quad(s, sv(s, 5, 0, 0), sv(s, 5, 3, 0), sv(s, 5 - c, 3, sn), sv(s, 5 - c, 0, sn));
    quad(s, sv(s, 5, 0, 0), sv(s, 5 - c, 0, -sn), sv(s, 5 - c, 3, -sn), sv(s, 5, 3, 0));
}

static void build_tunnel(scene *s)
{
    floor_quad(s, -20, -20, 20, 20, 0);
    box(s, 2, 1.95f, -1.3f, 8, 2.3f, 1.3f);     // roof: 1.95 m clearance
    box(s, 2, 0, 1, 8, 1.95f, 1.3f);            // side walls: 2 m wide inside
    box(s, 2, 0, -1.3f, 8, 1.95f, -1);
}

// Floor, then a ramp rising 3 m along +x at angle_deg, then a plateau.
static void build_slope(scene *s, int angle_deg)
{
    float t = tanf((float)angle_deg * 3.14159265f / 180.0f);
    float h = 3.0f, len = h / t;
    floor_quad(s, -20, -5, 0, 5, 0);
    quad(s, sv(s, 0, 0, -5), sv(s, 0, 0, 5), sv(s, len, h, 5), sv(s, len, h, -5));
    floor_quad(s, len, -5, len + 10, 5, h);
}

// Floor, a 26.6 degree ramp and a wall, authored Y-up (written turned for the scene's up axis).
static void build_turned(scene *s)
{
    floor_quad(s, -20, -20, 20, 20, 0);
    quad(s, sv(s, 2, 0, -3), sv(s, 2, 0, 3), sv(s, 6, 2, 3), sv(s, 6, 2, -3)); // 26.6 deg ramp
    box(s, -6, 0, -20, -5.5f, 3, 20);
}

static void write_scenes(const char *dir)
{
    static scene s;
    static const struct { const char *name, *what; void (*build)(scene *s); } fixed[] = {
        {"flat.obj", "a 40 m square floor at height 0", build_flat},
        {"stairs.obj", "ten 0.2 m stairs up to a 2 m landing (z in [-2,2]); four 0.45 m stairs beside them "
         "(z in [3,5])", build_stairs},
        {"ledge.obj", "a 0.3 m ledge (z<0, x in [2,6]), a 0.5 m ledge (z>0), and a 2 m platform at x in "
         "[-8,-2]", build_ledge},
        {"walls.obj", "a wall at x = 5, a slanted wall along z = 10 + x/2, and a corner at (-9.5, -10)",
         build_walls},
        {"beam.obj", "a 0.2 m wide, 1 m high beam along x", build_beam},
        {"ceiling.obj", "a ceiling at 2.2 m over x < 0, a 1.5 m high passage at x in [4,6]", build_ceiling},
        {"thin_wall.obj", "a zero-thickness one-sided wall at x = 3", build_thin_wall},
        {"block.obj", "a 2 m block at the origin on a floor", build_block},
        {"grid.obj", "a floor of 1 m triangle cells and a wall of 0.25 m triangle cells at x = 6", build_grid},
        {"wedge.obj", "two walls meeting at 30 degrees at (5, 0), opening toward -x", build_wedge},
        {"tunnel.obj", "a 2 m wide, 1.95 m high tunnel along x in [2,8]", build_tunnel},
    };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; ++i) {
        memset(&s, 0, sizeof s);
        fixed[i].build(&s);
        write_scene(dir, fixed[i].name, &s, fixed[i].what);
    }

    static const int angles[] = { 20, 40, 44, 46, 60, 80 };
    for (size_t i = 0; i < sizeof angles / sizeof angles[0]; ++i) {
        memset(&s, 0, sizeof s);
        build_slope(&s, angles[i]);
        char name[64], what[128];
        snprintf(name, sizeof name, "slope_%d.obj", angles[i]);
        snprintf(what, sizeof what, "floor, then a %d degree ramp rising 3 m along +x, then a plateau",
                 angles[i]);
        write_scene(dir, name, &s, what);
    }

    // The same floor, ramp and wall turned for three other up axes.
    static const struct { int up_axis; const char *name, *what; } turned[] = {
        {2, "zup.obj", "Z-up: floor, a ramp rising along +x, a wall at x = -6"},
        {3, "xup.obj", "X-up: floor, a ramp, a wall (the Z-up scene turned so +X is up)"},
        {-1, "negy.obj", "-Y up: floor, a ramp, a wall (the Z-up scene turned so -Y is up)"},
    };
    for (size_t i = 0; i < sizeof turned / sizeof turned[0]; ++i) {
        memset(&s, 0, sizeof s);
        s.up_axis = turned[i].up_axis;
        build_turned(&s);
        write_scene(dir, turned[i].name, &s, turned[i].what);
    }
}

// ------------------------------------------------------------------------------- driving

typedef struct input {
    float wish[3];        // m/s, horizontal (the up component is ignored)
    bool  jump;
} input;

typedef struct scenario scenario;
typedef void (*script_fn)(const scenario *sc, int frame, const kcc_character *ch, input *in,
                          kcc_character_desc *retune, bool *do_retune, uint32_t *rng);

struct scenario {
    const char *name;
    const char *level;        // trace level line ("obj flat.obj", "gen arena seed=1")
    const char *what;         // comment
    float       hz;
    int         frames;
    float       start[3];     // centre (authored Y-up; swapped for up_axis 2)
    int         up_axis;
    float       wish[3];      // constant wish velocity for the simple scripts (m/s)
    script_fn   script;
    uint32_t    seed;
};

static uint32_t rng(uint32_t *s)
{
    uint32_t x = *s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *s = x;
}

static float rngf(uint32_t *s)   // [0, 1)
{
    return (float)(rng(s) >> 8) * (1.0f / 16777216.0f);
}

static void walk(const scenario *sc, int frame, const kcc_character *ch, input *in,
                 kcc_character_desc *retune, bool *do_retune, uint32_t *r)
{
    (void)frame, (void)ch, (void)retune, (void)do_retune, (void)r;
    memcpy(in->wish, sc->wish, sizeof in->wish);
}

static void walk_then_stop(const scenario *sc, int frame, const kcc_character *ch, input *in,
                           kcc_character_desc *retune, bool *do_retune, uint32_t *r)
{
    walk(sc, frame, ch, in, retune, do_retune, r);
    if (frame >= sc->frames * 2 / 3)
        memset(in->wish, 0, sizeof in->wish);
}

static void walk_and_jump(const scenario *sc, int frame, const kcc_character *ch, input *in,
                          kcc_character_desc *retune, bool *do_retune, uint32_t *r)
{
    walk(sc, frame, ch, in, retune, do_retune, r);
    in->jump = frame % (int)sc->hz == (int)sc->hz / 4;
}

static void walk_with_bad_input(const scenario *sc, int frame, const kcc_character *ch, input *in,
                                kcc_character_desc *retune, bool *do_retune, uint32_t *r)
{
    walk(sc, frame, ch, in, retune, do_retune, r);
    if (frame % 37 == 20)
        in->wish[0] = frame % 2 ? NAN : INFINITY;
}

static void walk_then_reverse(const scenario *sc, int frame, const kcc_character *ch, input *in,
                              kcc_character_desc *retune, bool *do_retune, uint32_t *r)
{
    walk(sc, frame, ch, in, retune, do_retune, r);
    if (frame >= sc->frames / 2) {
        in->wish[0] = -sc->wish[0];
        in->wish[2] = -0.5f * sc->wish[2];
    }
}

// Crouch (half height 0.5), walk under the 1.5 m passage and try to stand up there (refused: overlap),
// walk out and stand; retune step height, slope limit, skin width and snap along the way; an
// out-of-range slope (refused); a wider box; back to the defaults.
static void crouch_and_retune(const scenario *sc, int frame, const kcc_character *ch, input *in,
                              kcc_character_desc *d, bool *do_retune, uint32_t *r)
{
    (void)r, (void)ch;
    memcpy(in->wish, sc->wish, sizeof in->wish);
    kcc_character_desc def = kcc_character_default_desc();
    switch (frame) {
    case 10: d->half_extents[1] = 0.5f; *do_retune = true; break;                  // crouch
    case 130: d->half_extents[1] = def.half_extents[1]; *do_retune = true; break;  // under the lintel
    case 160: d->step_height = 0.1f; d->max_slope_deg = 30.0f; *do_retune = true; break;
    case 180: d->skin_width = 0.01f; d->ground_snap = 0.05f; *do_retune = true; break;
    case 200: d->max_slope_deg = 120.0f; *do_retune = true; break;                 // out of range
    case 240: d->half_extents[1] = def.half_extents[1]; *do_retune = true; break;  // out: stand
    case 260: d->half_extents[0] = d->half_extents[2] = 0.5f; *do_retune = true; break;
    case 280: *d = def; *do_retune = true; break;
    default: break;
    }
}

// Random walk: new heading and speed every 0.5-2 s, jumps, occasional crouches, respawn after a fall.
static void wander(const scenario *sc, int frame, const kcc_character *ch, input *in,
                   kcc_character_desc *d, bool *do_retune, uint32_t *r)
{
    (void)sc, (void)ch;
    if (frame % 45 == 0 && rngf(r) < 0.7f) {
        float a = rngf(r) * 6.2831853f, speed = 1.0f + 6.0f * rngf(r);
        in->wish[0] = cosf(a) * speed;
        in->wish[1] = 0.0f;
        in->wish[2] = sinf(a) * speed;
    }
    in->jump = rngf(r) < 1.0f / 90.0f;
    if (frame % 300 == 150) {
        d->half_extents[1] = d->half_extents[1] < 0.8f ? 0.9f : 0.6f;   // crouch / stand
        *do_retune = true;
    }
}


// Builds the scenario's level the way a replay will: through a one-line trace header ("obj FILE" in
// dir, or "gen SPEC"). Returns 1, saying why, when that fails.
static int load_level(const scenario *sc, const char *dir, kcc_level *level, kcc_mesh **mesh)
{
    char err[512];
    memset(level, 0, sizeof *level);
    *mesh = NULL;
    kcc_status st;
    if (strncmp(sc->level, "obj ", 4) == 0) {
        char obj[1024];
        snprintf(obj, sizeof obj, "%s/%s", dir, sc->level + 4);
        st = kcc_level_load_obj(obj, level, err, sizeof err);
    } else {
        st = kcc_level_generate(sc->level + 4, level, err, sizeof err);
    }
    if (st == KCC_OK)
        st = kcc_level_build_mesh(level, mesh);
    if (st != KCC_OK) {
        fprintf(stderr, "%s: level '%s': %s (%s)\n", sc->name, sc->level, err, kcc_status_str(st));
        kcc_level_free(level);
        return 1;
    }
    return 0;
}

// One scenario's run: the character and its trace, and what the driving loop carries between frames.
typedef struct drive {
    const scenario  *sc;
    const kcc_level *level;
    const kcc_mesh  *mesh;
    int              up;       // the up axis (1 for the scenario's 0)
    kcc_character    ch;
    kcc_trace_writer w;
    float            v_up;     // m/s along up
    uint32_t         seed;     // the scripts' random stream
    input            in;
    int              stuck;    // frames in a row flagged STUCK (wander)
} drive;

// +Y and +Z run the default box (for +Z it lies on its side: half extents are world axes); the
// other axes run the default box standing along their up axis. The start is the scenario's, or for
// wander on a level with spawns, its first spawn point; turned into the world's axes.
static kcc_character_desc start_desc(const scenario *sc, const kcc_level *level, int up, float start[3])
{
    kcc_character_desc desc = up == 1 || up == 2 ? kcc_character_default_desc()
                                                 : kcc_character_default_desc_up(up);
    desc.up_axis = up;
    memcpy(start, sc->start, 3 * sizeof(float));
    if (sc->script == wander && level->spawn_count > 0) {
        memcpy(start, level->spawns, 3 * sizeof(float));
        start[1] += desc.half_extents[1] + 0.05f;
    }
    authored_to_world(up, start);
    return desc;
}

// Places the character and begins its trace in f with the scenario's comments; 1, saying why, when
// either fails.
static int begin_drive(drive *dr, FILE *f)
{
    const scenario *sc = dr->sc;
    float start[3];
    kcc_character_desc desc = start_desc(sc, dr->level, dr->up, start);
    kcc_status st = kcc_character_init(&dr->ch, &desc, start);
    if (st == KCC_OK)
        st = kcc_trace_begin(&dr->w, f, sc->level, &desc, start);
    if (st != KCC_OK) {
        fprintf(stderr, "%s: %s\n", sc->name, kcc_status_str(st));
        return 1;
    }
    kcc_trace_comment(&dr->w, sc->what);
    char line[256];
    snprintf(line, sizeof line, "%g Hz, gravity 9.81 m/s^2, jump speed 5 m/s; written by "
             "test/traces/record_goldens.c (make goldens)", (double)sc->hz);
    kcc_trace_comment(&dr->w, line);
    dr->seed = sc->seed ? sc->seed : 1u;
    return 0;
}

// wander: a character that fell below -50 m starts again at a random spawn point (a trace
// restart), and one stuck for more than 30 frames turns back.
static void wander_recover(drive *dr, const kcc_move_result *res)
{
    dr->stuck = (res->flags & KCC_MOVE_STUCK) ? dr->stuck + 1 : 0;
    float h = dr->ch.position[dr->up];
    if (h < -50.0f && dr->level->spawn_count > 0) {
        uint32_t k = rng(&dr->seed) % dr->level->spawn_count;
        const float *sp = dr->level->spawns + 3 * k;
        float p[3] = { sp[0], sp[1] + 1.0f, sp[2] };
        kcc_character_init(&dr->ch, &dr->ch.desc, p);
        kcc_trace_restart(&dr->w, p);
        dr->v_up = 0.0f;
    }
    if (dr->stuck > 30) {
        dr->in.wish[0] = -dr->in.wish[0];
        dr->in.wish[2] = -dr->in.wish[2];
        dr->stuck = 0;
    }
}

// Frame i: the script's input and retune (recorded with its status), gravity and jumps (9.81 m/s^2,
// 5 m/s), the move, recorded.
static void drive_frame(drive *dr, int i)
{
    const scenario *sc = dr->sc;
    const float dt = 1.0f / sc->hz, g = 9.81f, jump_speed = 5.0f;
    kcc_character_desc d2 = dr->ch.desc;
    bool do_retune = false;
    dr->in.jump = false;
    sc->script(sc, i, &dr->ch, &dr->in, &d2, &do_retune, &dr->seed);
    if (do_retune) {
        kcc_status rs = kcc_character_set_desc_checked(&dr->ch, &d2, dr->mesh);   // what a replay calls
        kcc_trace_set_desc(&dr->w, &d2, rs);
    }
    if (dr->in.jump && dr->ch.on_ground)
        dr->v_up = jump_speed;
    dr->v_up -= g * dt;
    float disp[3] = { dr->in.wish[0] * dt, dr->in.wish[1] * dt, dr->in.wish[2] * dt };
    disp[1] = dr->v_up * dt;
    authored_to_world(dr->up, disp);
    kcc_move_result res;
    kcc_character_move(&dr->ch, dr->mesh, disp, &res);
    if ((res.flags & KCC_MOVE_ON_GROUND) && dr->v_up < 0.0f)
        dr->v_up = 0.0f;
    if ((res.flags & KCC_MOVE_HIT_CEILING) && dr->v_up > 0.0f)
        dr->v_up = 0.0f;
    kcc_trace_record(&dr->w, disp, &dr->ch, &res);
    if (sc->script == wander)
        wander_recover(dr, &res);
}

static int run(const scenario *sc, const char *dir)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.trace", dir, sc->name);
    kcc_level level;
    kcc_mesh *mesh;
    if (load_level(sc, dir, &level, &mesh) != 0)
        return 1;
    drive dr;
    memset(&dr, 0, sizeof dr);
    dr.sc = sc;
    dr.level = &level;
    dr.mesh = mesh;
    dr.up = sc->up_axis ? sc->up_axis : 1;
    FILE *f = fopen(path, "w");
    if (!f)
        perror(path);
    if (!f || begin_drive(&dr, f) != 0) {
        if (f)
            fclose(f);
        kcc_mesh_destroy(mesh);
        kcc_level_free(&level);
        return 1;
    }
    for (int i = 0; i < sc->frames; ++i)
        drive_frame(&dr, i);
    kcc_status st = kcc_trace_end(&dr.w);
    if (fclose(f) != 0 && st == KCC_OK)
        st = KCC_ERR_IO;
    kcc_mesh_destroy(mesh);
    kcc_level_free(&level);
    if (st != KCC_OK) {
        fprintf(stderr, "%s: writing the trace: %s\n", path, kcc_status_str(st));
        return 1;
    }
    printf("wrote %s (%d frames)\n", path, sc->frames);
    return 0;
}

// Start centres: the default box is 0.9 m half-height; 0.905 leaves it just above the floor.
#define Y0 0.905f

static const scenario scenarios[] = {
    { "flat_walk_60hz", "obj flat.obj", "walk +x at 5 m/s on a flat floor", 60, 180, { 0, Y0, 0 }, 1, { 5, 0, 0 }, walk, 0 },
    { "flat_walk_120hz", "obj flat.obj", "walk +x at 5 m/s on a flat floor", 120, 360, { 0, Y0, 0 }, 1, { 5, 0, 0 }, walk, 0 },
    { "flat_walk_240hz", "obj flat.obj", "walk diagonally at 5 m/s on a flat floor", 240, 720, { 0, Y0, 0 }, 1, { 3, 0, 4 }, walk, 0 },
    { "flat_idle", "obj flat.obj", "stand still (gravity only), starting 0.5 m in the air", 60, 120, { 1, 1.4f, 1 }, 1, { 0, 0, 0 }, walk, 0 },
    { "flat_jump", "obj flat.obj", "walk and jump once a second", 60, 240, { -5, Y0, 0 }, 1, { 3, 0, 0 }, walk_and_jump, 0 },
    { "flat_sprint", "obj flat.obj", "run at 12 m/s then stop", 60, 150, { -15, Y0, -5 }, 1, { 12, 0, 6 }, walk_then_stop, 0 },
    { "bad_input", "obj flat.obj", "walk with a NaN or infinite displacement now and then", 60, 150, { 0, Y0, 0 }, 1, { 4, 0, 1 }, walk_with_bad_input, 0 },
    { "slope_20_up", "obj slope_20.obj", "walk up a 20 degree ramp and stop on the plateau", 60, 300, { -3, Y0, 0 }, 1, { 4, 0, 0 }, walk_then_stop, 0 },
    { "slope_40_up", "obj slope_40.obj", "walk up a 40 degree ramp", 60, 240, { -3, Y0, 0 }, 1, { 4, 0, 0 }, walk_then_stop, 0 },
    { "slope_44_up", "obj slope_44.obj", "walk up a 44 degree ramp (just walkable)", 60, 240, { -3, Y0, 0 }, 1, { 4, 0, 0 }, walk_then_stop, 0 },
    { "slope_46_up", "obj slope_46.obj", "try to walk up a 46 degree ramp (just too steep)", 60, 240, { -3, Y0, 0 }, 1, { 4, 0, 0 }, walk_then_stop, 0 },
    { "slope_60_up", "obj slope_60.obj", "try to walk up a 60 degree ramp", 60, 180, { -3, Y0, 0 }, 1, { 4, 0, 0 }, walk, 0 },
    { "slope_80_up", "obj slope_80.obj", "try to walk up an 80 degree ramp", 60, 120, { -3, Y0, 0 }, 1, { 4, 0, 0 }, walk, 0 },
    { "slope_40_down", "obj slope_40.obj", "walk down a 40 degree ramp from the plateau", 60, 180, { 5, 3 + Y0, 0 }, 1, { -4, 0, 0 }, walk_then_stop, 0 },
    { "slope_60_stand", "obj slope_60.obj", "stand on a 60 degree ramp (slides down)", 60, 150, { 0.9f, 2.6f, 0 }, 1, { 0, 0, 0 }, walk, 0 },
    { "slope_20_stand_120hz", "obj slope_20.obj", "stand still on a 20 degree ramp", 120, 240, { 4, 2.5f, 0 }, 1, { 0, 0, 0 }, walk, 0 },
    { "stairs_up", "obj stairs.obj", "walk up ten 0.2 m stairs", 60, 180, { -2, Y0, 0 }, 1, { 3, 0, 0 }, walk_then_stop, 0 },
    { "stairs_down", "obj stairs.obj", "walk down the stairs from the landing (snaps down)", 60, 180, { 5, 2 + Y0, 0 }, 1, { -3, 0, 0 }, walk, 0 },
    { "stairs_too_high", "obj stairs.obj", "walk into 0.45 m stairs (blocked)", 60, 120, { -2, Y0, 4 }, 1, { 3, 0, 0 }, walk, 0 },
    { "stairs_up_240hz", "obj stairs.obj", "walk up the stairs at 240 Hz", 240, 600, { -2, Y0, 0 }, 1, { 3, 0, 0 }, walk, 0 },
    { "ledge_climb", "obj ledge.obj", "step onto a 0.3 m ledge", 60, 120, { 0, Y0, -4 }, 1, { 4, 0, 0 }, walk, 0 },
    { "ledge_blocked", "obj ledge.obj", "walk into a 0.5 m ledge (too high)", 60, 120, { 0, Y0, 4 }, 1, { 4, 0, 0 }, walk, 0 },
    { "ledge_walk_off", "obj ledge.obj", "walk off a 2 m platform and land", 60, 150, { -5, 2 + Y0, 0 }, 1, { 4, 0, 0 }, walk, 0 },
    { "wall_head_on", "obj walls.obj", "walk straight into a wall", 60, 120, { 2, Y0, 0 }, 1, { 5, 0, 0 }, walk, 0 },
    { "wall_slide", "obj walls.obj", "walk into a wall at 45 degrees and slide along it", 60, 150, { 2, Y0, -3 }, 1, { 4, 0, 4 }, walk, 0 },
    { "wall_slanted", "obj walls.obj", "walk into a slanted wall", 60, 150, { -5, Y0, 4 }, 1, { 0, 0, 5 }, walk, 0 },
    { "corner", "obj walls.obj", "walk into a 90 degree corner (stuck)", 60, 150, { -7, Y0, -7 }, 1, { -3, 0, -3 }, walk, 0 },
    { "beam_walk", "obj beam.obj", "walk along a 0.2 m wide beam, then off its side", 60, 180, { -8, 1 + Y0, 0 }, 1, { 3, 0, 0.5f }, walk, 0 },
    { "ceiling_jump", "obj ceiling.obj", "jump under a 2.2 m ceiling", 60, 180, { -5, Y0, 0 }, 1, { 0.5f, 0, 0 }, walk_and_jump, 0 },
    { "low_passage", "obj ceiling.obj", "walk into a 1.5 m high passage (blocked at head height)", 60, 120, { 1, Y0, 0 }, 1, { 4, 0, 0 }, walk, 0 },
    { "thin_wall_fast", "obj thin_wall.obj", "run at 30 m/s into a zero-thickness wall", 60, 60, { 0, Y0, 0 }, 1, { 30, 0, 0 }, walk, 0 },
    { "tall_fall", "obj flat.obj", "fall from 100 m and land", 60, 300, { 0, 100, 0 }, 1, { 0, 0, 0 }, walk, 0 },
    { "start_inside", "obj block.obj", "start overlapping a block (pushed out) and walk away", 60, 120, { 0.5f, 0.95f, 0 }, 1, { 2, 0, 0 }, walk, 0 },
    { "retune", "obj ceiling.obj", "crouch into a low passage, refused stand-up, retune step/slope/skin/snap, stand, grow", 60, 300, { 2, Y0, 0 }, 1, { 1.2f, 0, 0 }, crouch_and_retune, 0 },
    { "grid_floor_walk", "obj grid.obj", "walk diagonally over a floor of many triangles", 60, 240, { -10, Y0, -9 }, 1, { 4, 0, 3.5f }, walk, 0 },
    { "grid_wall_slide", "obj grid.obj", "slide along a wall of many small triangles", 60, 240, { 4, Y0, -9 }, 1, { 3, 0, 4 }, walk, 0 },
    { "wedge_acute", "obj wedge.obj", "walk into a 30 degree wedge", 60, 180, { -4, Y0, 0.2f }, 1, { 4, 0, 0 }, walk, 0 },
    { "corner_escape", "obj walls.obj", "walk into the corner, then back out", 60, 180, { -7, Y0, -7 }, 1, { -3, 0, -3 }, walk_then_reverse, 0 },
    { "tunnel_fits", "obj tunnel.obj", "walk through a tunnel the box just fits", 60, 240, { -1, Y0, 0 }, 1, { 3, 0, 0 }, walk, 0 },
    { "stairs_up_30hz", "obj stairs.obj", "walk up the stairs at 30 Hz", 30, 90, { -2, Y0, 0 }, 1, { 3, 0, 0 }, walk, 0 },
    { "slope_20_down", "obj slope_20.obj", "walk down a 20 degree ramp from the plateau", 60, 240, { 11, 3 + Y0, 0 }, 1, { -4, 0, 0 }, walk_then_stop, 0 },
    { "zup_walk", "obj zup.obj", "Z-up level and character: walk up a ramp, then into a wall", 60, 300, { 0, Y0, 0 }, 2, { 4, 0, 0 }, walk_then_stop, 0 },
    { "zup_back", "obj zup.obj", "Z-up: walk back into the wall and jump", 60, 180, { 0, Y0, 1 }, 2, { -4, 0, 0 }, walk_and_jump, 0 },
    { "xup_walk", "obj xup.obj", "X-up level and character: walk up a ramp, then into a wall", 60, 300, { 0, Y0, 0 }, 3, { 4, 0, 0 }, walk_then_stop, 0 },
    { "negy_back", "obj negy.obj", "-Y up level and character: walk back into the wall and jump", 60, 180, { 0, Y0, 1 }, -1, { -4, 0, 0 }, walk_and_jump, 0 },
    { "wander_arena_1", "gen arena seed=1", "random walk with jumps and crouches", 60, 2400, { 0, 5, 0 }, 1, { 0, 0, 0 }, wander, 11 },
    { "wander_arena_2", "gen arena seed=2", "random walk with jumps and crouches", 60, 2400, { 0, 5, 0 }, 1, { 0, 0, 0 }, wander, 22 },
    { "wander_terrain_7", "gen terrain seed=7", "random walk over terrain", 60, 2400, { 0, 30, 0 }, 1, { 0, 0, 0 }, wander, 33 },
    { "wander_showcase", "gen showcase", "random walk through the showcase", 60, 2400, { 0, 5, 0 }, 1, { 0, 0, 0 }, wander, 44 },
};

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "test/traces";
    const char *only = argc > 2 ? argv[2] : NULL;
    write_scenes(dir);
    int failed = 0;
    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; ++i)
        if (!only || strstr(scenarios[i].name, only))
            failed += run(&scenarios[i], dir);
    return failed ? 1 : 0;
}
