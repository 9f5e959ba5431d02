/* demo/q3bsp.c: Quake 3 BSP v46 -> triangle soup: brushes of the world model intersected into closed
 * convex polyhedra, curved patches tessellated, spawn points from the entities. Every lump is bounds-
 * checked before use; malformed input gets KCC_ERR_PARSE with a message, never a crash. */
#include "q3bsp.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    LUMP_ENTITIES = 0, LUMP_SHADERS = 1, LUMP_PLANES = 2, LUMP_MODELS = 7, LUMP_BRUSHES = 8,
    LUMP_BRUSHSIDES = 9, LUMP_DRAWVERTS = 10, LUMP_SURFACES = 13, LUMP_COUNT = 17
};
/* On-disk record sizes (bytes), from the game's qfiles.h. */
enum {
    SZ_SHADER = 72, SZ_PLANE = 16, SZ_MODEL = 40, SZ_BRUSH = 12, SZ_BRUSHSIDE = 8,
    SZ_DRAWVERT = 44, SZ_SURFACE = 104
};
#define HEADER_BYTES (8 + LUMP_COUNT * 8)
#define MST_PATCH 2
/* Polygon clipping tolerance (Quake units): q3map's ON_EPSILON order of magnitude. */
#define CLIP_EPS 0.01
/* Vertices this close to an integer coordinate (units) are snapped to it: brush corners of axial
 * brushes are integers in the editor, the intersection only adds rounding noise. */
#define SNAP_EPS 0.01
/* Faces smaller than this (units^2) are bevel planes touching the brush along an edge. */
#define AREA_EPS 0.05
/* Caps that keep malformed counts from asking for absurd memory. */
#define MAX_BRUSH_SIDES 1024
#define MAX_PATCH_SIDE  1025

typedef struct lump { const uint8_t *p; uint32_t count; } lump;

typedef struct builder {
    float    *pos;  size_t nv, cap_v;
    uint32_t *idx;  size_t ni, cap_i;
    float    *spawn; size_t ns, cap_s;
    uint32_t *hash; size_t hash_cap;     /* vertex index + 1, 0 = empty */
    bool      oom;
} builder;

static void set_err(char *err, size_t err_size, const char *fmt, ...)
{
    if (!err || err_size == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_size, fmt, ap);
    va_end(ap);
}

static int32_t rd_i32(const uint8_t *p)
{
    uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    int32_t v;
    memcpy(&v, &u, 4);
    return v;
}

static float rd_f32(const uint8_t *p)
{
    uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    float v;
    memcpy(&v, &u, 4);
    return v;
}

q3bsp_options q3bsp_default_options(void)
{
    q3bsp_options o;
    o.contents_mask = Q3BSP_CONTENTS_SOLID | Q3BSP_CONTENTS_PLAYERCLIP;
    o.patch_level = 4;
    return o;
}

/* ------------------------------------------------------------------ output building */

static bool grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t n = *cap ? *cap : 256;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * elem);
    if (!q)
        return false;
    *p = q;
    *cap = n;
    return true;
}

static uint32_t hash3(const uint32_t k[3])
{
    uint32_t h = 2166136261u;
    for (int i = 0; i < 3; ++i) {
        h ^= k[i];
        h *= 16777619u;
        h ^= h >> 15;
    }
    return h;
}

static bool rehash(builder *b, size_t cap)
{
    uint32_t *t = calloc(cap, sizeof(uint32_t));
    if (!t)
        return false;
    for (size_t v = 0; v < b->nv; ++v) {
        uint32_t k[3];
        memcpy(k, b->pos + 3 * v, 12);
        size_t h = hash3(k) & (cap - 1);
        while (t[h])
            h = (h + 1) & (cap - 1);
        t[h] = (uint32_t)v + 1;
    }
    free(b->hash);
    b->hash = t;
    b->hash_cap = cap;
    return true;
}

/* Index of the vertex at (x, y, z) metres, welding exact duplicates. */
static uint32_t add_vertex(builder *b, const float v[3])
{
    if (b->oom)
        return 0;
    float c[3];
    for (int i = 0; i < 3; ++i)
        c[i] = v[i] == 0.0f ? 0.0f : v[i];     /* -0 and +0 weld */
    if ((b->nv + 1) * 2 > b->hash_cap && !rehash(b, b->hash_cap ? b->hash_cap * 2 : 4096)) {
        b->oom = true;
        return 0;
    }
    uint32_t k[3];
    memcpy(k, c, 12);
    size_t h = hash3(k) & (b->hash_cap - 1);
    while (b->hash[h]) {
        uint32_t i = b->hash[h] - 1;
        if (memcmp(b->pos + 3 * (size_t)i, c, 12) == 0)
            return i;
        h = (h + 1) & (b->hash_cap - 1);
    }
    if (b->nv >= UINT32_MAX - 1 || !grow((void **)&b->pos, &b->cap_v, (b->nv + 1) * 3, sizeof(float))) {
        b->oom = true;
        return 0;
    }
    memcpy(b->pos + 3 * b->nv, c, 12);
    b->hash[h] = (uint32_t)b->nv + 1;
    return (uint32_t)b->nv++;
}

static void add_triangle(builder *b, uint32_t i0, uint32_t i1, uint32_t i2)
{
    if (b->oom || i0 == i1 || i1 == i2 || i2 == i0)
        return;
    if (!grow((void **)&b->idx, &b->cap_i, b->ni + 3, sizeof(uint32_t))) {
        b->oom = true;
        return;
    }
    b->idx[b->ni++] = i0;
    b->idx[b->ni++] = i1;
    b->idx[b->ni++] = i2;
}

/* Quake units, Z up -> metres, Y up: (x, z, -y) / 32. A rotation, so windings keep their sense. */
void q3bsp_to_metres(const double q[3], float out[3])
{
    out[0] = (float)(q[0] / Q3BSP_UNITS_PER_METRE);
    out[1] = (float)(q[2] / Q3BSP_UNITS_PER_METRE);
    out[2] = (float)(-q[1] / Q3BSP_UNITS_PER_METRE);
    for (int i = 0; i < 3; ++i)
        out[i] = out[i] == 0.0f ? 0.0f : out[i];   /* no "-0" in the files */
}

static void builder_free(builder *b)
{
    free(b->pos);
    free(b->idx);
    free(b->spawn);
    free(b->hash);
    memset(b, 0, sizeof(*b));
}

/* ------------------------------------------------------------------ brushes */

typedef struct dplane { double n[3]; double d; } dplane;

static double dot3(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* A large square on plane p (q3map's BaseWindingForPlane), counter-clockwise seen from +n. */
static int base_winding(const dplane *p, double (*w)[3])
{
    int axis = 0;
    double best = -1.0;
    for (int i = 0; i < 3; ++i) {
        if (fabs(p->n[i]) > best) {
            best = fabs(p->n[i]);
            axis = i;
        }
    }
    double up[3] = {0, 0, 0};
    if (axis == 2)
        up[0] = 1.0;
    else
        up[2] = 1.0;
    double v = dot3(up, p->n);
    for (int i = 0; i < 3; ++i)
        up[i] -= v * p->n[i];
    double len = sqrt(dot3(up, up));
    for (int i = 0; i < 3; ++i)
        up[i] /= len;
    double right[3] = {up[1] * p->n[2] - up[2] * p->n[1], up[2] * p->n[0] - up[0] * p->n[2],
                       up[0] * p->n[1] - up[1] * p->n[0]};
    const double size = 262144.0;   /* units: well past the largest map (+-65536) */
    double org[3] = {p->n[0] * p->d, p->n[1] * p->d, p->n[2] * p->d};
    static const double sr[4] = {-1, 1, 1, -1}, su[4] = {1, 1, -1, -1};
    for (int k = 0; k < 4; ++k)
        for (int i = 0; i < 3; ++i)
            w[k][i] = org[i] + size * (sr[k] * right[i] + su[k] * up[i]);
    /* Make it counter-clockwise seen from +n: (w1 - w0) x (w2 - w0) along n. */
    double e1[3], e2[3];
    for (int i = 0; i < 3; ++i) {
        e1[i] = w[1][i] - w[0][i];
        e2[i] = w[2][i] - w[0][i];
    }
    double cr[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
    if (dot3(cr, p->n) < 0.0) {
        double t[3];
        memcpy(t, w[1], sizeof(t));
        memcpy(w[1], w[3], sizeof(t));
        memcpy(w[3], t, sizeof(t));
    }
    return 4;
}

/* Keeps the part of polygon in (n points) with dot(n, x) - d <= CLIP_EPS. Returns the new count. */
static int clip_polygon(double (*in)[3], int n, const dplane *p, double (*out)[3], int cap)
{
    int m = 0;
    for (int i = 0; i < n; ++i) {
        const double *a = in[i], *b = in[(i + 1) % n];
        double da = dot3(p->n, a) - p->d, db = dot3(p->n, b) - p->d;
        if (da <= CLIP_EPS) {
            if (m >= cap)
                return -1;
            memcpy(out[m++], a, sizeof(double[3]));
        }
        if ((da < -CLIP_EPS && db > CLIP_EPS) || (da > CLIP_EPS && db < -CLIP_EPS)) {
            double t = da / (da - db);
            if (m >= cap)
                return -1;
            for (int k = 0; k < 3; ++k)
                out[m][k] = a[k] + t * (b[k] - a[k]);
            ++m;
        }
    }
    return m;
}

static double snap(double x)
{
    double r = floor(x + 0.5);
    return fabs(x - r) < SNAP_EPS ? r : x;
}

/* One brush: each side clipped by all others; emits the non-degenerate faces as triangle fans. */
static void emit_brush(builder *b, const dplane *planes, int n, double (*w0)[3], double (*w1)[3],
                       int cap, q3bsp_stats *st)
{
    for (int i = 0; i < n; ++i) {
        bool dup = false;
        for (int j = 0; j < i && !dup; ++j)
            dup = dot3(planes[i].n, planes[j].n) > 1.0 - 1e-9 && fabs(planes[i].d - planes[j].d) < CLIP_EPS;
        if (dup)
            continue;
        int m = base_winding(&planes[i], w0);
        for (int j = 0; j < n && m >= 3; ++j) {
            if (j == i)
                continue;
            if (dot3(planes[i].n, planes[j].n) > 1.0 - 1e-9 && fabs(planes[i].d - planes[j].d) < CLIP_EPS)
                continue;
            m = clip_polygon(w0, m, &planes[j], w1, cap);
            if (m < 0)
                break;
            memcpy(w0, w1, (size_t)m * sizeof(double[3]));
        }
        if (m < 3)
            continue;
        /* Snap, then drop repeated points. */
        int k = 0;
        for (int v = 0; v < m; ++v) {
            double q[3] = {snap(w0[v][0]), snap(w0[v][1]), snap(w0[v][2])};
            if (k > 0) {
                double dd[3] = {q[0] - w0[k - 1][0], q[1] - w0[k - 1][1], q[2] - w0[k - 1][2]};
                if (dot3(dd, dd) < SNAP_EPS * SNAP_EPS)
                    continue;
            }
            memcpy(w0[k++], q, sizeof(q));
        }
        while (k > 1) {
            double dd[3] = {w0[0][0] - w0[k - 1][0], w0[0][1] - w0[k - 1][1], w0[0][2] - w0[k - 1][2]};
            if (dot3(dd, dd) >= SNAP_EPS * SNAP_EPS)
                break;
            --k;
        }
        if (k < 3)
            continue;
        /* Area along the plane normal (Newell); bevel planes leave slivers of ~zero area. */
        double area2 = 0.0;
        for (int v = 1; v + 1 < k; ++v) {
            double e1[3], e2[3];
            for (int c = 0; c < 3; ++c) {
                e1[c] = w0[v][c] - w0[0][c];
                e2[c] = w0[v + 1][c] - w0[0][c];
            }
            double cr[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                            e1[0] * e2[1] - e1[1] * e2[0]};
            area2 += dot3(cr, planes[i].n);
        }
        if (area2 * 0.5 < AREA_EPS)
            continue;
        uint32_t first = 0, prev = 0;
        uint32_t before = (uint32_t)(b->ni / 3);
        for (int v = 0; v < k; ++v) {
            float mv[3];
            q3bsp_to_metres(w0[v], mv);
            uint32_t id = add_vertex(b, mv);
            if (v == 0)
                first = id;
            else if (v >= 2)
                add_triangle(b, first, prev, id);
            prev = id;
        }
        st->brush_faces++;
        st->brush_triangles += (uint32_t)(b->ni / 3) - before;
    }
}

/* ------------------------------------------------------------------ patches */

/* Biquadratic Bezier on a 3x3 grid of control points c[row][col], at (u, v) in [0, 1]. */
static void bezier3x3(double c[3][3][3], double u, double v, double out[3])
{
    double bu[3] = {(1 - u) * (1 - u), 2 * u * (1 - u), u * u};
    double bv[3] = {(1 - v) * (1 - v), 2 * v * (1 - v), v * v};
    for (int k = 0; k < 3; ++k) {
        double s = 0.0;
        for (int r = 0; r < 3; ++r)
            for (int q = 0; q < 3; ++q)
                s += bv[r] * bu[q] * c[r][q][k];
        out[k] = s;
    }
}

/* ------------------------------------------------------------------ entities */

/* Reads the next quoted string or brace; returns its kind ('"', '{', '}', 0 at end, -1 on error). */
static int next_token(const char *s, size_t n, size_t *pos, size_t *start, size_t *len)
{
    size_t i = *pos;
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
        ++i;
    if (i >= n || s[i] == '\0') {
        *pos = i;
        return 0;
    }
    if (s[i] == '{' || s[i] == '}') {
        *pos = i + 1;
        return s[i];
    }
    if (s[i] != '"')
        return -1;
    size_t j = i + 1;
    while (j < n && s[j] != '"' && s[j] != '\0')
        ++j;
    if (j >= n || s[j] != '"')
        return -1;
    *start = i + 1;
    *len = j - i - 1;
    *pos = j + 1;
    return '"';
}

static bool is_spawn_class(const char *s)
{
    static const char *const names[] = {
        "info_player_deathmatch", "info_player_start", "team_CTF_redplayer", "team_CTF_blueplayer",
        "team_CTF_redspawn", "team_CTF_bluespawn",
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); ++i)
        if (strcmp(names[i], s) == 0)
            return true;
    return false;
}

static bool add_pair(q3bsp_entities *e, size_t *cap, char **cursor, const char *s, size_t ks, size_t kl,
                     size_t vs, size_t vl)
{
    if (!grow((void **)&e->pairs, cap, (size_t)e->pair_count + 1, sizeof(q3bsp_pair)))
        return false;
    char *k = *cursor;
    memcpy(k, s + ks, kl);
    k[kl] = '\0';
    char *v = k + kl + 1;
    memcpy(v, s + vs, vl);
    v[vl] = '\0';
    *cursor = v + vl + 1;
    e->pairs[e->pair_count].key = k;
    e->pairs[e->pair_count].value = v;
    e->pair_count++;
    return true;
}

/* One `{ ... }` block after its '{': its pairs appended to e. */
static kcc_status parse_entity_block(q3bsp_entities *e, size_t *pair_cap, char **cursor, const char *s,
                                     size_t n, size_t *pos, char *err, size_t err_size)
{
    size_t st = 0, len = 0;
    for (;;) {
        int t = next_token(s, n, pos, &st, &len);
        if (t == '}')
            return KCC_OK;
        if (t != '"') {
            set_err(err, err_size, "entities: expected a key or '}' at byte %zu", *pos);
            return KCC_ERR_PARSE;
        }
        size_t ks = st, kl = len;
        t = next_token(s, n, pos, &st, &len);
        if (t != '"') {
            set_err(err, err_size, "entities: key without a value at byte %zu", *pos);
            return KCC_ERR_PARSE;
        }
        if (!add_pair(e, pair_cap, cursor, s, ks, kl, st, len))
            return KCC_ERR_OUT_OF_MEMORY;
    }
}

kcc_status q3bsp_parse_entities(const char *s, size_t n, q3bsp_entities *out, char *err, size_t err_size)
{
    if (!s || !out) {
        set_err(err, err_size, "NULL argument");
        return KCC_ERR_NULL_ARGUMENT;
    }
    q3bsp_entities e;
    memset(&e, 0, sizeof(e));
    size_t pair_cap = 0, ent_cap = 0, pos = 0, st = 0, len = 0;
    /* Every key and value is shorter than the text that quotes it, NUL included: one buffer of n + 1
     * bytes holds them all, so the pairs' pointers never move. */
    e.strings = malloc(n + 1);
    char *cursor = e.strings;
    kcc_status status = e.strings ? KCC_OK : KCC_ERR_OUT_OF_MEMORY;
    while (status == KCC_OK) {
        int t = next_token(s, n, &pos, &st, &len);
        if (t == 0)
            break;
        if (t != '{') {
            set_err(err, err_size, "entities: expected '{' at byte %zu", pos);
            status = KCC_ERR_PARSE;
        } else if (!grow((void **)&e.entities, &ent_cap, (size_t)e.count + 1, sizeof(q3bsp_entity))) {
            status = KCC_ERR_OUT_OF_MEMORY;
        } else {
            e.entities[e.count].first_pair = e.pair_count;
            status = parse_entity_block(&e, &pair_cap, &cursor, s, n, &pos, err, err_size);
            e.entities[e.count].pair_count = e.pair_count - e.entities[e.count].first_pair;
            e.count++;
        }
    }
    if (status != KCC_OK) {
        if (status == KCC_ERR_OUT_OF_MEMORY)
            set_err(err, err_size, "out of memory");
        q3bsp_entities_free(&e);
        return status;
    }
    *out = e;
    return KCC_OK;
}

void q3bsp_entities_free(q3bsp_entities *ents)
{
    if (!ents)
        return;
    free(ents->entities);
    free(ents->pairs);
    free(ents->strings);
    memset(ents, 0, sizeof(*ents));
}

const char *q3bsp_entity_value(const q3bsp_entities *ents, uint32_t entity, const char *key)
{
    if (!ents || !key || entity >= ents->count)
        return NULL;
    const q3bsp_entity *en = &ents->entities[entity];
    for (uint32_t i = en->first_pair; i < en->first_pair + en->pair_count; ++i)
        if (strcmp(ents->pairs[i].key, key) == 0)
            return ents->pairs[i].value;
    return NULL;
}

const char *q3bsp_entity_class(const q3bsp_entities *ents, uint32_t entity)
{
    const char *c = q3bsp_entity_value(ents, entity, "classname");
    return c ? c : "";
}

bool q3bsp_entity_vec3(const q3bsp_entities *ents, uint32_t entity, const char *key, double out[3])
{
    const char *v = q3bsp_entity_value(ents, entity, key);
    double q[3];
    char tail;
    if (!v || sscanf(v, "%lf %lf %lf %c", &q[0], &q[1], &q[2], &tail) != 3)
        return false;
    if (!isfinite(q[0]) || !isfinite(q[1]) || !isfinite(q[2]) || fabs(q[0]) > 1e6 || fabs(q[1]) > 1e6 ||
        fabs(q[2]) > 1e6)
        return false;
    memcpy(out, q, sizeof(q));
    return true;
}

double q3bsp_entity_float(const q3bsp_entities *ents, uint32_t entity, const char *key, double fallback)
{
    const char *v = q3bsp_entity_value(ents, entity, key);
    double x;
    char tail;
    if (!v || sscanf(v, "%lf %c", &x, &tail) != 1 || !isfinite(x) || fabs(x) > 1e6)
        return fallback;
    return x;
}

uint32_t q3bsp_entity_find(const q3bsp_entities *ents, const char *name, const char *classname)
{
    if (!ents || !name)
        return UINT32_MAX;
    for (uint32_t i = 0; i < ents->count; ++i) {
        const char *tn = q3bsp_entity_value(ents, i, "targetname");
        if (tn && strcmp(tn, name) == 0 && (!classname || strcmp(q3bsp_entity_class(ents, i), classname) == 0))
            return i;
    }
    return UINT32_MAX;
}

/* Spawn points: the game puts the player's origin 9 units above the entity's origin and the box
 * reaches 24 units below its origin, so the feet are at origin z - 15 units. */
static kcc_status add_spawns(builder *b, const q3bsp_entities *ents)
{
    for (uint32_t i = 0; i < ents->count; ++i) {
        double org[3];
        if (!is_spawn_class(q3bsp_entity_class(ents, i)) || !q3bsp_entity_vec3(ents, i, "origin", org))
            continue;
        org[2] += 9.0 - 24.0;
        if (!grow((void **)&b->spawn, &b->cap_s, (b->ns + 1) * 3, sizeof(float))) {
            b->oom = true;
            return KCC_ERR_OUT_OF_MEMORY;
        }
        q3bsp_to_metres(org, b->spawn + 3 * b->ns);
        b->ns++;
    }
    return KCC_OK;
}

/* ------------------------------------------------------------------ the importer */

static kcc_status get_lump(const uint8_t *data, size_t size, int which, uint32_t elem, lump *out,
                           char *err, size_t err_size)
{
    static const char *const names[LUMP_COUNT] = {
        "entities", "shaders", "planes", "nodes", "leafs", "leaffaces", "leafbrushes", "models",
        "brushes", "brushsides", "drawverts", "drawindexes", "fogs", "surfaces", "lightmaps",
        "lightgrid", "visibility",
    };
    int32_t off = rd_i32(data + 8 + 8 * which), len = rd_i32(data + 12 + 8 * which);
    if (off < 0 || len < 0 || (uint64_t)off + (uint64_t)len > (uint64_t)size) {
        set_err(err, err_size, "lump %d (%s): offset %d length %d outside the %zu-byte file", which,
                names[which], (int)off, (int)len, size);
        return KCC_ERR_PARSE;
    }
    if (elem > 1 && (uint32_t)len % elem != 0) {
        set_err(err, err_size, "lump %d (%s): length %d is not a multiple of %u", which, names[which],
                (int)len, elem);
        return KCC_ERR_PARSE;
    }
    out->p = data + off;
    out->count = (uint32_t)len / elem;
    return KCC_OK;
}

static kcc_status import_brushes(builder *b, const lump *shaders, const lump *planes_l, const lump *brushes,
                                 const lump *sides, uint32_t first, uint32_t count, uint32_t mask,
                                 q3bsp_stats *st, char *err, size_t err_size)
{
    dplane *planes = malloc(sizeof(dplane) * MAX_BRUSH_SIDES);
    const int cap = MAX_BRUSH_SIDES + 8;
    double (*w0)[3] = malloc(sizeof(double[3]) * (size_t)cap);
    double (*w1)[3] = malloc(sizeof(double[3]) * (size_t)cap);
    kcc_status s = KCC_OK;
    if (!planes || !w0 || !w1) {
        s = KCC_ERR_OUT_OF_MEMORY;
        goto done;
    }
    for (uint32_t bi = first; bi < first + count; ++bi) {
        const uint8_t *br = brushes->p + (size_t)bi * SZ_BRUSH;
        int32_t fs = rd_i32(br), ns = rd_i32(br + 4), sh = rd_i32(br + 8);
        if (sh < 0 || (uint32_t)sh >= shaders->count) {
            set_err(err, err_size, "brush %u: shader %d out of range (%u shaders)", bi, (int)sh, shaders->count);
            s = KCC_ERR_PARSE;
            goto done;
        }
        st->brushes++;
        uint32_t contents = (uint32_t)rd_i32(shaders->p + (size_t)sh * SZ_SHADER + 68);
        if (!(contents & mask))
            continue;
        if (fs < 0 || ns < 0 || ns > MAX_BRUSH_SIDES || (uint64_t)fs + (uint64_t)ns > sides->count) {
            set_err(err, err_size, "brush %u: sides %lld..%lld out of range (%u brush sides, at most %d a brush)",
                    bi, (long long)fs, (long long)fs + ns, sides->count, MAX_BRUSH_SIDES);
            s = KCC_ERR_PARSE;
            goto done;
        }
        for (int32_t k = 0; k < ns; ++k) {
            int32_t pn = rd_i32(sides->p + (size_t)(fs + k) * SZ_BRUSHSIDE);
            if (pn < 0 || (uint32_t)pn >= planes_l->count) {
                set_err(err, err_size, "brush side %d: plane %d out of range (%u planes)", (int)(fs + k),
                        (int)pn, planes_l->count);
                s = KCC_ERR_PARSE;
                goto done;
            }
            const uint8_t *pp = planes_l->p + (size_t)pn * SZ_PLANE;
            double len2 = 0.0;
            for (int c = 0; c < 3; ++c) {
                planes[k].n[c] = rd_f32(pp + 4 * c);
                len2 += planes[k].n[c] * planes[k].n[c];
            }
            planes[k].d = rd_f32(pp + 12);
            if (!isfinite(len2) || !isfinite(planes[k].d) || fabs(planes[k].d) > 1e6 || len2 < 0.5 || len2 > 1.5) {
                set_err(err, err_size, "plane %d: not a finite unit-normal plane", (int)pn);
                s = KCC_ERR_PARSE;
                goto done;
            }
            len2 = sqrt(len2);
            for (int c = 0; c < 3; ++c)
                planes[k].n[c] /= len2;
        }
        st->brushes_solid++;
        emit_brush(b, planes, ns, w0, w1, cap, st);
        if (b->oom) {
            s = KCC_ERR_OUT_OF_MEMORY;
            goto done;
        }
    }
done:
    free(planes);
    free(w0);
    free(w1);
    return s;
}

/* Surface index's patch header: its first vertex and its width x height of control points (odd,
 * 3..MAX_PATCH_SIDE, all within the drawverts); KCC_ERR_PARSE, saying why, otherwise. */
static kcc_status patch_header(const lump *verts, const uint8_t *sf, uint32_t index, int32_t *fv, int32_t *pw,
                               int32_t *ph, char *err, size_t err_size)
{
    int32_t nv = rd_i32(sf + 16);
    *fv = rd_i32(sf + 12);
    *pw = rd_i32(sf + 96);
    *ph = rd_i32(sf + 100);
    if (*fv < 0 || nv < 0 || (uint64_t)*fv + (uint64_t)nv > verts->count) {
        set_err(err, err_size, "surface %u: vertices %lld..%lld out of range (%u drawverts)", index,
                (long long)*fv, (long long)*fv + nv, verts->count);
        return KCC_ERR_PARSE;
    }
    if (*pw < 3 || *ph < 3 || *pw > MAX_PATCH_SIDE || *ph > MAX_PATCH_SIDE || *pw % 2 == 0 || *ph % 2 == 0 ||
        (int64_t)*pw * *ph != nv) {
        set_err(err, err_size, "surface %u: patch size %d x %d does not fit its %d vertices", index, (int)*pw,
                (int)*ph, (int)nv);
        return KCC_ERR_PARSE;
    }
    return KCC_OK;
}

/* The 3x3 control points of the patch piece at (px, py) and the sum of their vertex normals; false
 * when a control point is not finite or lies beyond 1e6 units. */
static bool patch_piece_controls(const lump *verts, int32_t fv, int32_t pw, int32_t px, int32_t py,
                                 double c[3][3][3], double nsum[3])
{
    bool ok = true;
    nsum[0] = nsum[1] = nsum[2] = 0.0;
    for (int r = 0; r < 3; ++r) {
        for (int q = 0; q < 3; ++q) {
            const uint8_t *v = verts->p + (size_t)(fv + (py + r) * pw + px + q) * SZ_DRAWVERT;
            for (int k = 0; k < 3; ++k) {
                c[r][q][k] = rd_f32(v + 4 * k);
                nsum[k] += rd_f32(v + 28 + 4 * k);
                if (!isfinite(c[r][q][k]) || fabs(c[r][q][k]) > 1e6)
                    ok = false;
            }
        }
    }
    return ok;
}

/* Whether the (level+1)^2 grid's triangles, wound as emitted, face against the control points'
 * summed vertex normal nsum: their summed cross products point away from it. */
static bool patch_grid_faces_away(double (*pts)[3], uint32_t level, const double nsum[3])
{
    const uint32_t L = level;
    double area[3] = {0, 0, 0};
    for (uint32_t j = 0; j < L; ++j) {
        for (uint32_t i = 0; i < L; ++i) {
            const double *a = pts[j * (L + 1) + i], *bb = pts[j * (L + 1) + i + 1],
                         *d = pts[(j + 1) * (L + 1) + i + 1];
            double e1[3] = {bb[0] - a[0], bb[1] - a[1], bb[2] - a[2]};
            double e2[3] = {d[0] - a[0], d[1] - a[1], d[2] - a[2]};
            area[0] += e1[1] * e2[2] - e1[2] * e2[1];
            area[1] += e1[2] * e2[0] - e1[0] * e2[2];
            area[2] += e1[0] * e2[1] - e1[1] * e2[0];
        }
    }
    return dot3(area, nsum) < 0.0;
}

/* Adds the grid's vertices (in metres) and two triangles per cell, wound the other way when flip;
 * KCC_ERR_OUT_OF_MEMORY when the builder ran out. */
static kcc_status emit_patch_grid(builder *b, double (*pts)[3], uint32_t *ids, uint32_t level, bool flip,
                                  q3bsp_stats *st)
{
    const uint32_t L = level;
    for (size_t g = 0; g < (size_t)(L + 1) * (L + 1); ++g) {
        float mv[3];
        q3bsp_to_metres(pts[g], mv);
        ids[g] = add_vertex(b, mv);
    }
    uint32_t before = (uint32_t)(b->ni / 3);
    for (uint32_t j = 0; j < L; ++j) {
        for (uint32_t i = 0; i < L; ++i) {
            uint32_t a = ids[j * (L + 1) + i], bb = ids[j * (L + 1) + i + 1];
            uint32_t cc = ids[(j + 1) * (L + 1) + i + 1], d = ids[(j + 1) * (L + 1) + i];
            if (flip) {
                add_triangle(b, a, cc, bb);
                add_triangle(b, a, d, cc);
            } else {
                add_triangle(b, a, bb, cc);
                add_triangle(b, a, cc, d);
            }
        }
    }
    st->patch_triangles += (uint32_t)(b->ni / 3) - before;
    return b->oom ? KCC_ERR_OUT_OF_MEMORY : KCC_OK;
}

/* A patch surface tessellated at `level` steps per 3x3 piece. A piece whose vertex normals do not
 * sum to a finite vector ends its row of pieces (the next row goes on). */
static kcc_status import_patch(builder *b, const lump *verts, const uint8_t *sf, uint32_t index, uint32_t level,
                               q3bsp_stats *st, char *err, size_t err_size)
{
    int32_t fv, pw, ph;
    kcc_status s = patch_header(verts, sf, index, &fv, &pw, &ph, err, err_size);
    if (s != KCC_OK)
        return s;
    st->patches++;
    const uint32_t L = level;
    const size_t grid = (size_t)(L + 1) * (L + 1);
    uint32_t *ids = malloc(sizeof(uint32_t) * grid);
    double (*pts)[3] = malloc(sizeof(double[3]) * grid);
    if (!ids || !pts) {
        free(ids);
        free(pts);
        return KCC_ERR_OUT_OF_MEMORY;
    }
    for (int32_t py = 0; py + 2 < ph && s == KCC_OK; py += 2) {
        for (int32_t px = 0; px + 2 < pw && s == KCC_OK; px += 2) {
            double c[3][3][3], nsum[3];
            if (!patch_piece_controls(verts, fv, pw, px, py, c, nsum)) {
                set_err(err, err_size, "surface %u: non-finite patch control point", index);
                s = KCC_ERR_PARSE;
                break;
            }
            if (!isfinite(nsum[0] + nsum[1] + nsum[2]))
                break;
            for (uint32_t j = 0; j <= L; ++j)
                for (uint32_t i = 0; i <= L; ++i)
                    bezier3x3(c, (double)i / L, (double)j / L, pts[j * (L + 1) + i]);
            /* Wind the triangles so their normals agree with the control points' vertex normals. */
            s = emit_patch_grid(b, pts, ids, L, patch_grid_faces_away(pts, L, nsum), st);
        }
    }
    free(ids);
    free(pts);
    return s;
}

typedef struct bsp_lumps {
    lump ents, shaders, planes, models, brushes, sides, verts, surfs;
} bsp_lumps;

static kcc_status read_lumps(const uint8_t *data, size_t size, bsp_lumps *l, char *err, size_t err_size)
{
    if (size < 4 || memcmp(data, "IBSP", 4) != 0) {
        set_err(err, err_size, "not a Quake 3 BSP (no IBSP header)");
        return KCC_ERR_PARSE;
    }
    if (size < HEADER_BYTES) {
        set_err(err, err_size, "truncated: %zu bytes, the header alone has %d", size, HEADER_BYTES);
        return KCC_ERR_PARSE;
    }
    int32_t version = rd_i32(data + 4);
    if (version != 46) {
        set_err(err, err_size, "BSP version %d, only 46 (Quake 3) is supported", (int)version);
        return KCC_ERR_VERSION;
    }
    kcc_status s;
    if ((s = get_lump(data, size, LUMP_ENTITIES, 1, &l->ents, err, err_size)) ||
        (s = get_lump(data, size, LUMP_SHADERS, SZ_SHADER, &l->shaders, err, err_size)) ||
        (s = get_lump(data, size, LUMP_PLANES, SZ_PLANE, &l->planes, err, err_size)) ||
        (s = get_lump(data, size, LUMP_MODELS, SZ_MODEL, &l->models, err, err_size)) ||
        (s = get_lump(data, size, LUMP_BRUSHES, SZ_BRUSH, &l->brushes, err, err_size)) ||
        (s = get_lump(data, size, LUMP_BRUSHSIDES, SZ_BRUSHSIDE, &l->sides, err, err_size)) ||
        (s = get_lump(data, size, LUMP_DRAWVERTS, SZ_DRAWVERT, &l->verts, err, err_size)) ||
        (s = get_lump(data, size, LUMP_SURFACES, SZ_SURFACE, &l->surfs, err, err_size)))
        return s;
    if (l->models.count == 0) {
        set_err(err, err_size, "models lump is empty (no world model)");
        return KCC_ERR_PARSE;
    }
    return KCC_OK;
}

/* The solid brushes and patches of brush model `model` (0: the world) into b. */
static kcc_status import_model(builder *b, const bsp_lumps *l, uint32_t model, const q3bsp_options *o,
                               q3bsp_stats *st, char *err, size_t err_size)
{
    const uint8_t *m = l->models.p + (size_t)model * SZ_MODEL;
    int32_t first_surf = rd_i32(m + 24), num_surf = rd_i32(m + 28);
    int32_t first_brush = rd_i32(m + 32), num_brush = rd_i32(m + 36);
    char name[32];
    if (model == 0)
        snprintf(name, sizeof(name), "world model");
    else
        snprintf(name, sizeof(name), "model *%u", model);
    if (first_brush < 0 || num_brush < 0 || (uint64_t)first_brush + (uint64_t)num_brush > l->brushes.count) {
        set_err(err, err_size, "%s: brushes %lld..%lld out of range (%u brushes)", name, (long long)first_brush,
                (long long)first_brush + num_brush, l->brushes.count);
        return KCC_ERR_PARSE;
    }
    if (first_surf < 0 || num_surf < 0 || (uint64_t)first_surf + (uint64_t)num_surf > l->surfs.count) {
        set_err(err, err_size, "%s: surfaces %lld..%lld out of range (%u surfaces)", name, (long long)first_surf,
                (long long)first_surf + num_surf, l->surfs.count);
        return KCC_ERR_PARSE;
    }
    kcc_status s = import_brushes(b, &l->shaders, &l->planes, &l->brushes, &l->sides, (uint32_t)first_brush,
                                  (uint32_t)num_brush, o->contents_mask, st, err, err_size);
    for (int32_t i = first_surf; s == KCC_OK && i < first_surf + num_surf; ++i) {
        const uint8_t *sf = l->surfs.p + (size_t)i * SZ_SURFACE;
        if (rd_i32(sf + 8) != MST_PATCH)
            continue;
        int32_t sh = rd_i32(sf);
        if (sh < 0 || (uint32_t)sh >= l->shaders.count) {
            set_err(err, err_size, "surface %d: shader %d out of range (%u shaders)", (int)i, (int)sh,
                    l->shaders.count);
            return KCC_ERR_PARSE;
        }
        uint32_t contents = (uint32_t)rd_i32(l->shaders.p + (size_t)sh * SZ_SHADER + 68);
        if (contents & o->contents_mask)
            s = import_patch(b, &l->verts, sf, (uint32_t)i, o->patch_level, st, err, err_size);
    }
    if (s == KCC_OK && b->oom)
        s = KCC_ERR_OUT_OF_MEMORY;
    return s;
}

/* Brush model `index` (>= 1) of the map: its triangles and the models lump's bounds. */
static kcc_status import_brush_model(const bsp_lumps *l, uint32_t index, const q3bsp_options *o,
                                     q3bsp_model *out, char *err, size_t err_size)
{
    const uint8_t *m = l->models.p + (size_t)index * SZ_MODEL;
    double lo[3], hi[3];
    for (int k = 0; k < 3; ++k) {
        lo[k] = rd_f32(m + 4 * k);
        hi[k] = rd_f32(m + 12 + 4 * k);
        if (!isfinite(lo[k]) || !isfinite(hi[k]) || fabs(lo[k]) > 1e6 || fabs(hi[k]) > 1e6) {
            set_err(err, err_size, "model *%u: non-finite bounds", index);
            return KCC_ERR_PARSE;
        }
    }
    /* (x, z, -y): the min corner takes -max y. */
    double qmin[3] = {lo[0], hi[1], lo[2]}, qmax[3] = {hi[0], lo[1], hi[2]};
    q3bsp_to_metres(qmin, out->bounds[0]);
    q3bsp_to_metres(qmax, out->bounds[1]);
    builder b;
    memset(&b, 0, sizeof(b));
    q3bsp_stats st;
    memset(&st, 0, sizeof(st));
    kcc_status s = import_model(&b, l, index, o, &st, err, err_size);
    if (s != KCC_OK) {
        builder_free(&b);
        return s;
    }
    out->positions = b.pos;
    out->vertex_count = (uint32_t)b.nv;
    out->indices = b.idx;
    out->triangle_count = (uint32_t)(b.ni / 3);
    free(b.hash);
    free(b.spawn);
    return KCC_OK;
}

void q3bsp_map_free(q3bsp_map *map)
{
    if (!map)
        return;
    kcc_level_free(&map->world);
    q3bsp_entities_free(&map->entities);
    for (uint32_t i = 0; map->models && i < map->model_count; ++i) {
        free(map->models[i].positions);
        free(map->models[i].indices);
    }
    free(map->models);
    memset(map, 0, sizeof(*map));
}

static kcc_status import_world(const bsp_lumps *l, const q3bsp_options *o, q3bsp_map *map, q3bsp_stats *st,
                               char *err, size_t err_size)
{
    builder b;
    memset(&b, 0, sizeof(b));
    kcc_status s = import_model(&b, l, 0, o, st, err, err_size);
    if (s == KCC_OK)
        s = q3bsp_parse_entities((const char *)l->ents.p, l->ents.count, &map->entities, err, err_size);
    if (s == KCC_OK)
        s = add_spawns(&b, &map->entities);
    if (s == KCC_ERR_OUT_OF_MEMORY)
        set_err(err, err_size, "out of memory");
    if (s == KCC_OK && b.ni == 0) {
        set_err(err, err_size, "no solid brushes or patches in the world model");
        s = KCC_ERR_NO_TRIANGLES;
    }
    if (s != KCC_OK) {
        builder_free(&b);
        return s;
    }
    st->spawns = (uint32_t)b.ns;
    map->world.positions = b.pos;
    map->world.vertex_count = (uint32_t)b.nv;
    map->world.indices = b.idx;
    map->world.triangle_count = (uint32_t)(b.ni / 3);
    map->world.spawns = b.spawn;
    map->world.spawn_count = (uint32_t)b.ns;
    free(b.hash);
    return KCC_OK;
}

kcc_status q3bsp_import_map(const uint8_t *data, size_t size, const q3bsp_options *opt, q3bsp_map *out,
                            q3bsp_stats *stats, char *err, size_t err_size)
{
    if (!data || !out) {
        set_err(err, err_size, "NULL argument");
        return KCC_ERR_NULL_ARGUMENT;
    }
    q3bsp_options o = opt ? *opt : q3bsp_default_options();
    if (o.patch_level < 1 || o.patch_level > 64) {
        set_err(err, err_size, "patch level %u outside [1, 64]", o.patch_level);
        return KCC_ERR_BAD_DESC;
    }
    bsp_lumps l;
    kcc_status s = read_lumps(data, size, &l, err, err_size);
    if (s != KCC_OK)
        return s;
    q3bsp_map map;
    memset(&map, 0, sizeof(map));
    q3bsp_stats st;
    memset(&st, 0, sizeof(st));
    s = import_world(&l, &o, &map, &st, err, err_size);
    if (s == KCC_OK) {
        map.models = calloc(l.models.count, sizeof(q3bsp_model));
        map.model_count = map.models ? l.models.count : 0;
        if (!map.models) {
            set_err(err, err_size, "out of memory");
            s = KCC_ERR_OUT_OF_MEMORY;
        }
    }
    for (uint32_t i = 1; s == KCC_OK && i < map.model_count; ++i)
        s = import_brush_model(&l, i, &o, &map.models[i], err, err_size);
    if (s != KCC_OK) {
        q3bsp_map_free(&map);
        return s;
    }
    *out = map;
    if (stats)
        *stats = st;
    return KCC_OK;
}

/* Keeps a map's world level in out and frees the rest. */
static void keep_world(q3bsp_map *map, kcc_level *out)
{
    *out = map->world;
    memset(&map->world, 0, sizeof(map->world));
    q3bsp_map_free(map);
}

kcc_status q3bsp_import(const uint8_t *data, size_t size, const q3bsp_options *opt, kcc_level *out,
                        q3bsp_stats *stats, char *err, size_t err_size)
{
    if (!out) {
        set_err(err, err_size, "NULL argument");
        return KCC_ERR_NULL_ARGUMENT;
    }
    q3bsp_map map;
    kcc_status s = q3bsp_import_map(data, size, opt, &map, stats, err, err_size);
    if (s == KCC_OK)
        keep_world(&map, out);
    return s;
}

uint32_t q3bsp_entity_model(const q3bsp_map *map, uint32_t entity)
{
    const char *m = map ? q3bsp_entity_value(&map->entities, entity, "model") : NULL;
    if (!m || m[0] != '*')
        return UINT32_MAX;
    char *end;
    unsigned long n = strtoul(m + 1, &end, 10);
    if (end == m + 1 || *end != '\0' || n < 1 || n >= map->model_count)
        return UINT32_MAX;
    return (uint32_t)n;
}

static kcc_status read_whole_file(const char *path, uint8_t **out, size_t *out_size, char *err, size_t err_size)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        set_err(err, err_size, "%s: cannot open", path);
        return KCC_ERR_IO;
    }
    uint8_t *data = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            size_t nc = cap ? cap * 2 : (size_t)1 << 20;
            if (nc > ((size_t)1 << 31)) {
                free(data);
                fclose(f);
                set_err(err, err_size, "%s: larger than 2 GiB", path);
                return KCC_ERR_TOO_LARGE;
            }
            uint8_t *q = realloc(data, nc);
            if (!q) {
                free(data);
                fclose(f);
                set_err(err, err_size, "%s: out of memory", path);
                return KCC_ERR_OUT_OF_MEMORY;
            }
            data = q;
            cap = nc;
        }
        size_t r = fread(data + n, 1, cap - n, f);
        n += r;
        if (r == 0)
            break;
    }
    bool bad = ferror(f) != 0;
    fclose(f);
    if (bad) {
        free(data);
        set_err(err, err_size, "%s: read error", path);
        return KCC_ERR_IO;
    }
    *out = data;
    *out_size = n;
    return KCC_OK;
}

kcc_status q3bsp_load_map(const char *path, const q3bsp_options *opt, q3bsp_map *out, q3bsp_stats *stats,
                          char *err, size_t err_size)
{
    if (!path || !out) {
        set_err(err, err_size, "NULL argument");
        return KCC_ERR_NULL_ARGUMENT;
    }
    uint8_t *data = NULL;
    size_t n = 0;
    kcc_status s = read_whole_file(path, &data, &n, err, err_size);
    if (s != KCC_OK)
        return s;
    char inner[256] = "";
    s = q3bsp_import_map(data, n, opt, out, stats, inner, sizeof(inner));
    free(data);
    if (s != KCC_OK)
        set_err(err, err_size, "%s: %s", path, inner);
    return s;
}

kcc_status q3bsp_load(const char *path, const q3bsp_options *opt, kcc_level *out, q3bsp_stats *stats,
                      char *err, size_t err_size)
{
    if (!path || !out) {
        set_err(err, err_size, "NULL argument");
        return KCC_ERR_NULL_ARGUMENT;
    }
    q3bsp_map map;
    kcc_status s = q3bsp_load_map(path, opt, &map, stats, err, err_size);
    if (s == KCC_OK)
        keep_world(&map, out);
    return s;
}

/* Opens path for writing; `given` is whether the caller has what to write (false, or no path:
 * KCC_ERR_NULL_ARGUMENT). */
static kcc_status create_file(bool given, const char *path, FILE **out, char *err, size_t err_size)
{
    if (!given || !path) {
        set_err(err, err_size, "NULL argument");
        return KCC_ERR_NULL_ARGUMENT;
    }
    *out = fopen(path, "w");
    if (!*out) {
        set_err(err, err_size, "%s: cannot create", path);
        return KCC_ERR_IO;
    }
    return KCC_OK;
}

/* Closes a file create_file opened: KCC_ERR_IO when any write or the close failed. */
static kcc_status close_written(FILE *f, const char *path, char *err, size_t err_size)
{
    const bool bad = ferror(f) != 0;
    if (fclose(f) != 0 || bad) {
        set_err(err, err_size, "%s: write error", path);
        return KCC_ERR_IO;
    }
    return KCC_OK;
}

kcc_status q3bsp_write_obj(const kcc_level *level, const char *path, const char *header,
                           char *err, size_t err_size)
{
    FILE *f;
    const kcc_status opened = create_file(level != NULL, path, &f, err, err_size);
    if (opened != KCC_OK)
        return opened;
    if (header)
        fprintf(f, "# %s\n", header);
    for (uint32_t i = 0; i < level->vertex_count; ++i)
        fprintf(f, "v %.9g %.9g %.9g\n", (double)level->positions[3 * i], (double)level->positions[3 * i + 1],
                (double)level->positions[3 * i + 2]);
    for (uint32_t i = 0; i < level->triangle_count; ++i)
        fprintf(f, "f %u %u %u\n", level->indices[3 * i] + 1, level->indices[3 * i + 1] + 1,
                level->indices[3 * i + 2] + 1);
    return close_written(f, path, err, err_size);
}

kcc_status q3bsp_write_spawns(const kcc_level *level, const char *path, char *err, size_t err_size)
{
    FILE *f;
    const kcc_status opened = create_file(level != NULL, path, &f, err, err_size);
    if (opened != KCC_OK)
        return opened;
    for (uint32_t i = 0; i < level->spawn_count; ++i)
        fprintf(f, "%.9g %.9g %.9g\n", (double)level->spawns[3 * i], (double)level->spawns[3 * i + 1],
                (double)level->spawns[3 * i + 2]);
    return close_written(f, path, err, err_size);
}

/* The entities the sidecar keeps: those that name a brush model, and the points movers and triggers
 * aim at (train corners, jump pad targets, teleporter destinations). */
static bool sidecar_keeps(const q3bsp_map *map, uint32_t entity)
{
    static const char *const points[] = {"path_corner", "target_position", "misc_teleporter_dest",
                                         "info_notnull"};
    if (q3bsp_entity_model(map, entity) != UINT32_MAX)
        return true;
    const char *c = q3bsp_entity_class(&map->entities, entity);
    for (size_t i = 0; i < sizeof(points) / sizeof(points[0]); ++i)
        if (strcmp(c, points[i]) == 0)
            return true;
    return false;
}

static void write_model(FILE *f, const q3bsp_model *m, uint32_t index)
{
    fprintf(f, "model %u bounds %.9g %.9g %.9g %.9g %.9g %.9g vertices %u triangles %u\n", index,
            (double)m->bounds[0][0], (double)m->bounds[0][1], (double)m->bounds[0][2], (double)m->bounds[1][0],
            (double)m->bounds[1][1], (double)m->bounds[1][2], m->vertex_count, m->triangle_count);
    for (uint32_t i = 0; i < m->vertex_count; ++i)
        fprintf(f, "v %.9g %.9g %.9g\n", (double)m->positions[3 * i], (double)m->positions[3 * i + 1],
                (double)m->positions[3 * i + 2]);
    for (uint32_t i = 0; i < m->triangle_count; ++i)
        fprintf(f, "f %u %u %u\n", m->indices[3 * i] + 1, m->indices[3 * i + 1] + 1, m->indices[3 * i + 2] + 1);
}

kcc_status q3bsp_write_movers(const q3bsp_map *map, const char *path, char *err, size_t err_size)
{
    FILE *f;
    const kcc_status opened = create_file(map != NULL, path, &f, err, err_size);
    if (opened != KCC_OK)
        return opened;
    fprintf(f, "# kcc movers 1: entities (Quake keys, Quake units) and brush models (metres, Y up)\n");
    for (uint32_t e = 0; e < map->entities.count; ++e) {
        if (!sidecar_keeps(map, e))
            continue;
        fprintf(f, "entity %u", e);
        const q3bsp_entity *en = &map->entities.entities[e];
        for (uint32_t i = en->first_pair; i < en->first_pair + en->pair_count; ++i)
            fprintf(f, " \"%s\" \"%s\"", map->entities.pairs[i].key, map->entities.pairs[i].value);
        fprintf(f, "\n");
    }
    for (uint32_t m = 1; m < map->model_count; ++m)
        write_model(f, &map->models[m], m);
    return close_written(f, path, err, err_size);
}
