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
static void to_metres(const double q[3], float out[3])
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
            to_metres(w0[v], mv);
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

static bool is_spawn_class(const char *s, size_t n)
{
    static const char *const names[] = {
        "info_player_deathmatch", "info_player_start", "team_CTF_redplayer", "team_CTF_blueplayer",
        "team_CTF_redspawn", "team_CTF_bluespawn",
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); ++i)
        if (strlen(names[i]) == n && memcmp(names[i], s, n) == 0)
            return true;
    return false;
}

/* Spawn points: the game puts the player's origin 9 units above the entity's origin and the box
 * reaches 24 units below its origin, so the feet are at origin z - 15 units. */
static kcc_status parse_entities(builder *b, const char *s, size_t n, char *err, size_t err_size)
{
    size_t pos = 0, st = 0, len = 0;
    for (;;) {
        int t = next_token(s, n, &pos, &st, &len);
        if (t == 0)
            return KCC_OK;
        if (t != '{') {
            set_err(err, err_size, "entities: expected '{' at byte %zu", pos);
            return KCC_ERR_PARSE;
        }
        bool spawn = false, has_origin = false;
        double org[3] = {0, 0, 0};
        for (;;) {
            t = next_token(s, n, &pos, &st, &len);
            if (t == '}')
                break;
            if (t != '"') {
                set_err(err, err_size, "entities: expected a key or '}' at byte %zu", pos);
                return KCC_ERR_PARSE;
            }
            size_t ks = st, kl = len;
            t = next_token(s, n, &pos, &st, &len);
            if (t != '"') {
                set_err(err, err_size, "entities: key without a value at byte %zu", pos);
                return KCC_ERR_PARSE;
            }
            if (kl == 9 && memcmp(s + ks, "classname", 9) == 0)
                spawn = is_spawn_class(s + st, len);
            else if (kl == 6 && memcmp(s + ks, "origin", 6) == 0 && len < 128) {
                char buf[128];
                memcpy(buf, s + st, len);
                buf[len] = '\0';
                has_origin = sscanf(buf, "%lf %lf %lf", &org[0], &org[1], &org[2]) == 3 &&
                             isfinite(org[0]) && isfinite(org[1]) && isfinite(org[2]);
            }
        }
        if (spawn && has_origin) {
            org[2] += 9.0 - 24.0;
            if (!grow((void **)&b->spawn, &b->cap_s, (b->ns + 1) * 3, sizeof(float))) {
                b->oom = true;
                return KCC_ERR_OUT_OF_MEMORY;
            }
            to_metres(org, b->spawn + 3 * b->ns);
            b->ns++;
        }
    }
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

static kcc_status import_patch(builder *b, const lump *verts, const uint8_t *sf, uint32_t index, uint32_t level,
                               q3bsp_stats *st, char *err, size_t err_size)
{
    int32_t fv = rd_i32(sf + 12), nv = rd_i32(sf + 16), pw = rd_i32(sf + 96), ph = rd_i32(sf + 100);
    if (fv < 0 || nv < 0 || (uint64_t)fv + (uint64_t)nv > verts->count) {
        set_err(err, err_size, "surface %u: vertices %lld..%lld out of range (%u drawverts)", index, (long long)fv,
                (long long)fv + nv, verts->count);
        return KCC_ERR_PARSE;
    }
    if (pw < 3 || ph < 3 || pw > MAX_PATCH_SIDE || ph > MAX_PATCH_SIDE || pw % 2 == 0 || ph % 2 == 0 ||
        (int64_t)pw * ph != nv) {
        set_err(err, err_size, "surface %u: patch size %d x %d does not fit its %d vertices", index, (int)pw,
                (int)ph, (int)nv);
        return KCC_ERR_PARSE;
    }
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
    kcc_status s = KCC_OK;
    for (int32_t py = 0; py + 2 < ph && s == KCC_OK; py += 2) {
        for (int32_t px = 0; px + 2 < pw && s == KCC_OK; px += 2) {
            double c[3][3][3];
            double nsum[3] = {0, 0, 0};
            for (int r = 0; r < 3; ++r) {
                for (int q = 0; q < 3; ++q) {
                    const uint8_t *v = verts->p + (size_t)(fv + (py + r) * pw + px + q) * SZ_DRAWVERT;
                    for (int k = 0; k < 3; ++k) {
                        c[r][q][k] = rd_f32(v + 4 * k);
                        nsum[k] += rd_f32(v + 28 + 4 * k);
                        if (!isfinite(c[r][q][k]) || fabs(c[r][q][k]) > 1e6) {
                            set_err(err, err_size, "surface %u: non-finite patch control point", index);
                            s = KCC_ERR_PARSE;
                        }
                    }
                }
            }
            if (s != KCC_OK || !isfinite(nsum[0] + nsum[1] + nsum[2]))
                break;
            for (uint32_t j = 0; j <= L; ++j)
                for (uint32_t i = 0; i <= L; ++i)
                    bezier3x3(c, (double)i / L, (double)j / L, pts[j * (L + 1) + i]);
            /* Wind the triangles so their normals agree with the control points' vertex normals. */
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
            bool flip = dot3(area, nsum) < 0.0;
            for (size_t g = 0; g < grid; ++g) {
                float mv[3];
                to_metres(pts[g], mv);
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
            if (b->oom)
                s = KCC_ERR_OUT_OF_MEMORY;
        }
    }
    free(ids);
    free(pts);
    return s;
}

kcc_status q3bsp_import(const uint8_t *data, size_t size, const q3bsp_options *opt, kcc_level *out,
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
    lump ents, shaders, planes, models, brushes, sides, verts, surfs;
    kcc_status s;
    if ((s = get_lump(data, size, LUMP_ENTITIES, 1, &ents, err, err_size)) ||
        (s = get_lump(data, size, LUMP_SHADERS, SZ_SHADER, &shaders, err, err_size)) ||
        (s = get_lump(data, size, LUMP_PLANES, SZ_PLANE, &planes, err, err_size)) ||
        (s = get_lump(data, size, LUMP_MODELS, SZ_MODEL, &models, err, err_size)) ||
        (s = get_lump(data, size, LUMP_BRUSHES, SZ_BRUSH, &brushes, err, err_size)) ||
        (s = get_lump(data, size, LUMP_BRUSHSIDES, SZ_BRUSHSIDE, &sides, err, err_size)) ||
        (s = get_lump(data, size, LUMP_DRAWVERTS, SZ_DRAWVERT, &verts, err, err_size)) ||
        (s = get_lump(data, size, LUMP_SURFACES, SZ_SURFACE, &surfs, err, err_size)))
        return s;
    if (models.count == 0) {
        set_err(err, err_size, "models lump is empty (no world model)");
        return KCC_ERR_PARSE;
    }
    /* The world is model 0. */
    int32_t first_surf = rd_i32(models.p + 24), num_surf = rd_i32(models.p + 28);
    int32_t first_brush = rd_i32(models.p + 32), num_brush = rd_i32(models.p + 36);
    if (first_brush < 0 || num_brush < 0 || (uint64_t)first_brush + (uint64_t)num_brush > brushes.count) {
        set_err(err, err_size, "world model: brushes %lld..%lld out of range (%u brushes)", (long long)first_brush,
                (long long)first_brush + num_brush, brushes.count);
        return KCC_ERR_PARSE;
    }
    if (first_surf < 0 || num_surf < 0 || (uint64_t)first_surf + (uint64_t)num_surf > surfs.count) {
        set_err(err, err_size, "world model: surfaces %lld..%lld out of range (%u surfaces)", (long long)first_surf,
                (long long)first_surf + num_surf, surfs.count);
        return KCC_ERR_PARSE;
    }
    builder b;
    memset(&b, 0, sizeof(b));
    q3bsp_stats st;
    memset(&st, 0, sizeof(st));
    s = import_brushes(&b, &shaders, &planes, &brushes, &sides, (uint32_t)first_brush, (uint32_t)num_brush,
                       o.contents_mask, &st, err, err_size);
    for (int32_t i = first_surf; s == KCC_OK && i < first_surf + num_surf; ++i) {
        const uint8_t *sf = surfs.p + (size_t)i * SZ_SURFACE;
        if (rd_i32(sf + 8) != MST_PATCH)
            continue;
        int32_t sh = rd_i32(sf);
        if (sh < 0 || (uint32_t)sh >= shaders.count) {
            set_err(err, err_size, "surface %d: shader %d out of range (%u shaders)", (int)i, (int)sh,
                    shaders.count);
            s = KCC_ERR_PARSE;
            break;
        }
        uint32_t contents = (uint32_t)rd_i32(shaders.p + (size_t)sh * SZ_SHADER + 68);
        if (contents & o.contents_mask)
            s = import_patch(&b, &verts, sf, (uint32_t)i, o.patch_level, &st, err, err_size);
    }
    if (s == KCC_OK)
        s = parse_entities(&b, (const char *)ents.p, ents.count, err, err_size);
    if (s == KCC_OK && b.oom)
        s = KCC_ERR_OUT_OF_MEMORY;
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
    st.spawns = (uint32_t)b.ns;
    memset(out, 0, sizeof(*out));
    out->positions = b.pos;
    out->vertex_count = (uint32_t)b.nv;
    out->indices = b.idx;
    out->triangle_count = (uint32_t)(b.ni / 3);
    out->spawns = b.spawn;
    out->spawn_count = (uint32_t)b.ns;
    free(b.hash);
    if (stats)
        *stats = st;
    return KCC_OK;
}

kcc_status q3bsp_load(const char *path, const q3bsp_options *opt, kcc_level *out, q3bsp_stats *stats,
                      char *err, size_t err_size)
{
    if (!path || !out) {
        set_err(err, err_size, "NULL argument");
        return KCC_ERR_NULL_ARGUMENT;
    }
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
    char inner[256] = "";
    kcc_status s = q3bsp_import(data, n, opt, out, stats, inner, sizeof(inner));
    free(data);
    if (s != KCC_OK)
        set_err(err, err_size, "%s: %s", path, inner);
    return s;
}

void q3bsp_level_free(kcc_level *level)
{
    if (!level)
        return;
    free(level->positions);
    free(level->indices);
    free(level->spawns);
    memset(level, 0, sizeof(*level));
}

kcc_status q3bsp_write_obj(const kcc_level *level, const char *path, const char *header,
                           char *err, size_t err_size)
{
    if (!level || !path) {
        set_err(err, err_size, "NULL argument");
        return KCC_ERR_NULL_ARGUMENT;
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        set_err(err, err_size, "%s: cannot create", path);
        return KCC_ERR_IO;
    }
    if (header)
        fprintf(f, "# %s\n", header);
    for (uint32_t i = 0; i < level->vertex_count; ++i)
        fprintf(f, "v %.9g %.9g %.9g\n", (double)level->positions[3 * i], (double)level->positions[3 * i + 1],
                (double)level->positions[3 * i + 2]);
    for (uint32_t i = 0; i < level->triangle_count; ++i)
        fprintf(f, "f %u %u %u\n", level->indices[3 * i] + 1, level->indices[3 * i + 1] + 1,
                level->indices[3 * i + 2] + 1);
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0 || bad) {
        set_err(err, err_size, "%s: write error", path);
        return KCC_ERR_IO;
    }
    return KCC_OK;
}

kcc_status q3bsp_write_spawns(const kcc_level *level, const char *path, char *err, size_t err_size)
{
    if (!level || !path) {
        set_err(err, err_size, "NULL argument");
        return KCC_ERR_NULL_ARGUMENT;
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        set_err(err, err_size, "%s: cannot create", path);
        return KCC_ERR_IO;
    }
    for (uint32_t i = 0; i < level->spawn_count; ++i)
        fprintf(f, "%.9g %.9g %.9g\n", (double)level->spawns[3 * i], (double)level->spawns[3 * i + 1],
                (double)level->spawns[3 * i + 2]);
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0 || bad) {
        set_err(err, err_size, "%s: write error", path);
        return KCC_ERR_IO;
    }
    return KCC_OK;
}
