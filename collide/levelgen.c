/* levelgen.c: named procedural levels (kcc_level_generate, kcc_level_names): the spec parser, the
 * closed-solid helpers every generator uses, and the "arena", "terrain" and "flat" generators
 * ("showcase" lives in showcase.c). Deterministic: an integer PRNG (splitmix64) seeded from the
 * spec and plain float arithmetic (+ - * / only, no libm), so one spec gives the same triangles
 * bit for bit with any compiler. Allocates only the level; no global mutable state. */
#include "level_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------ */
/* Generator helpers                                                                          */
/* ------------------------------------------------------------------------------------------ */

void kcc_gen_init(kcc_gen *g, float scale)
{
    memset(g, 0, sizeof(*g));
    kcc_lb_init(&g->b);
    g->scale = scale;
}

uint32_t kcc_gen_vertex(kcc_gen *g, float x, float y, float z)
{
    return kcc_lb_vertex(&g->b, x * g->scale, y * g->scale, z * g->scale);
}

/* Adds triangle abc wound so that its normal points away from `centre` (the solid's centre):
 * outward, counter-clockwise seen from outside, for every convex solid. */
void kcc_gen_tri_out(kcc_gen *g, uint32_t a, uint32_t b, uint32_t c, const float centre[3])
{
    if (g->b.status != KCC_OK)
        return;
    const float *p = g->b.level.positions;
    const float *pa = p + 3u * (size_t)a, *pb = p + 3u * (size_t)b, *pc = p + 3u * (size_t)c;
    double e1[3], e2[3], n[3], d = 0.0;
    for (int k = 0; k < 3; ++k) {
        e1[k] = (double)pb[k] - pa[k];
        e2[k] = (double)pc[k] - pa[k];
    }
    n[0] = e1[1] * e2[2] - e1[2] * e2[1];
    n[1] = e1[2] * e2[0] - e1[0] * e2[2];
    n[2] = e1[0] * e2[1] - e1[1] * e2[0];
    for (int k = 0; k < 3; ++k)
        d += n[k] * (((double)pa[k] + pb[k] + pc[k]) / 3.0 - (double)centre[k] * g->scale);
    if (d >= 0.0)
        kcc_lb_triangle(&g->b, a, b, c);
    else
        kcc_lb_triangle(&g->b, a, c, b);
}

static void add_solid_bounds(kcc_gen *g, const float lo[3], const float hi[3])
{
    if (g->solid_count == g->solid_cap) {
        uint32_t nc = g->solid_cap ? g->solid_cap * 2u : 64u;
        float *s = realloc(g->solids, (size_t)nc * 6u * sizeof(float));
        if (!s) {
            g->b.status = KCC_ERR_OUT_OF_MEMORY;
            return;
        }
        g->solids = s;
        g->solid_cap = nc;
    }
    float *s = g->solids + 6u * (size_t)g->solid_count++;
    for (int k = 0; k < 3; ++k) {
        s[k] = lo[k];
        s[3 + k] = hi[k];
    }
}

void kcc_gen_prism(kcc_gen *g, const float (*base)[3], int n, const float e[3])
{
    if (g->b.status != KCC_OK || n < 3 || n > 16)
        return;
    uint32_t lo[16], hi[16];
    float centre[3] = {0, 0, 0}, bmin[3], bmax[3];
    for (int k = 0; k < 3; ++k)
        bmin[k] = bmax[k] = base[0][k];
    for (int i = 0; i < n; ++i) {
        lo[i] = kcc_gen_vertex(g, base[i][0], base[i][1], base[i][2]);
        hi[i] = kcc_gen_vertex(g, base[i][0] + e[0], base[i][1] + e[1], base[i][2] + e[2]);
        for (int k = 0; k < 3; ++k) {
            float a = base[i][k], b = base[i][k] + e[k];
            centre[k] += a + b;
            bmin[k] = a < bmin[k] ? a : bmin[k];
            bmin[k] = b < bmin[k] ? b : bmin[k];
            bmax[k] = a > bmax[k] ? a : bmax[k];
            bmax[k] = b > bmax[k] ? b : bmax[k];
        }
    }
    for (int k = 0; k < 3; ++k)
        centre[k] /= (float)(2 * n);
    for (int i = 1; i + 1 < n; ++i) {
        kcc_gen_tri_out(g, lo[0], lo[i], lo[i + 1], centre);
        kcc_gen_tri_out(g, hi[0], hi[i], hi[i + 1], centre);
    }
    for (int i = 0; i < n; ++i) {
        int j = (i + 1) % n;
        kcc_gen_tri_out(g, lo[i], lo[j], hi[j], centre);
        kcc_gen_tri_out(g, lo[i], hi[j], hi[i], centre);
    }
    add_solid_bounds(g, bmin, bmax);
}

void kcc_gen_box(kcc_gen *g, float x0, float y0, float z0, float x1, float y1, float z1)
{
    const float base[4][3] = {{x0, y0, z0}, {x1, y0, z0}, {x1, y0, z1}, {x0, y0, z1}};
    const float e[3] = {0.0f, y1 - y0, 0.0f};
    kcc_gen_prism(g, base, 4, e);
}

/* A wedge across x in [x0, x1] whose slope rises by h from (z = z0, y = y0) to z = z1 (z1 may be
 * below z0: then it rises towards -z). Its high end is a vertical face at z1. */
void kcc_gen_ramp(kcc_gen *g, float x0, float x1, float z0, float z1, float y0, float h)
{
    const float base[3][3] = {{x0, y0, z0}, {x0, y0, z1}, {x0, y0 + h, z1}};
    const float e[3] = {x1 - x0, 0.0f, 0.0f};
    kcc_gen_prism(g, base, 3, e);
}

bool kcc_gen_spawn(kcc_gen *g, float x, float y, float z)
{
    /* Keep a box wider and taller than a 0.6 x 1.8 x 0.6 m character clear of every solid's
     * bounds, so a character placed here starts free whatever its exact size. */
    const float r = 0.45f, h = 2.0f;
    for (uint32_t i = 0; i < g->solid_count; ++i) {
        const float *s = g->solids + 6u * (size_t)i;
        if (x - r < s[3] && x + r > s[0] && y < s[4] && y + h > s[1] && z - r < s[5] &&
            z + r > s[2])
            return false;
    }
    kcc_lb_spawn(&g->b, x * g->scale, y * g->scale, z * g->scale);
    return true;
}

kcc_status kcc_gen_finish(kcc_gen *g, kcc_level *out)
{
    free(g->solids);
    g->solids = NULL;
    return kcc_lb_finish(&g->b, out);
}

/* ------------------------------------------------------------------------------------------ */
/* PRNG (splitmix64)                                                                          */
/* ------------------------------------------------------------------------------------------ */

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t rng_next(rng *r)
{
    r->s += 0x9e3779b97f4a7c15ull;
    return mix64(r->s);
}

/* Uniform integer in [lo, hi] (the modulo bias is irrelevant for level layout). */
static int rng_int(rng *r, int lo, int hi)
{
    return lo + (int)(rng_next(r) % (uint64_t)(hi - lo + 1));
}

/* Uniform in [0, 1): 24 random bits, exact in float. */
static float hash01(uint64_t h)
{
    return (float)(uint32_t)(h >> 40) * 0x1p-24f;
}

/* ------------------------------------------------------------------------------------------ */
/* Spec parsing                                                                               */
/* ------------------------------------------------------------------------------------------ */

typedef struct level_params {
    uint64_t seed;
    int      size;     /* m */
    float    scale;
} level_params;

typedef struct level_kind {
    const char *name;
    const char *keys;  /* space-separated keys it takes */
    int size_default, size_min, size_max;
    kcc_status (*gen)(const level_params *p, kcc_level *out);
} level_kind;

static kcc_status gen_arena(const level_params *p, kcc_level *out);
static kcc_status gen_terrain(const level_params *p, kcc_level *out);
static kcc_status gen_flat(const level_params *p, kcc_level *out);
static kcc_status gen_showcase(const level_params *p, kcc_level *out)
{
    return kcc_level_showcase(p->scale, out);
}

static const level_kind kinds[] = {
    {"arena", "seed size", 48, 16, 256, gen_arena},
    {"terrain", "seed size", 64, 16, 256, gen_terrain},
    {"showcase", "scale", 0, 0, 0, gen_showcase},
    {"flat", "size", 32, 4, 1024, gen_flat},
};

static const char *const level_names[] = {"arena", "terrain", "showcase", "flat", NULL};

const char *const *kcc_level_names(void)
{
    return level_names;
}

static void set_err(char *err, size_t err_size, const char *fmt, const char *a, const char *b)
{
    if (err && err_size)
        snprintf(err, err_size, fmt, a, b);
}

static bool word_in(const char *list, const char *w, size_t wl)
{
    const char *p = list;
    while (*p) {
        const char *e = strchr(p, ' ');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == wl && memcmp(p, w, n) == 0)
            return true;
        if (!e)
            break;
        p = e + 1;
    }
    return false;
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Decimal unsigned integer spanning [s, e) exactly, no overflow. */
static bool parse_u64(const char *s, const char *e, uint64_t *out)
{
    if (s >= e)
        return false;
    uint64_t v = 0;
    for (; s < e; ++s) {
        if (*s < '0' || *s > '9')
            return false;
        uint64_t d = (uint64_t)(*s - '0');
        if (v > (UINT64_MAX - d) / 10u)
            return false;
        v = v * 10u + d;
    }
    *out = v;
    return true;
}

/* The level kind named by [name, name + len), or NULL. */
static const level_kind *find_kind(const char *name, size_t len)
{
    const level_kind *kind = NULL;
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); ++i)
        if (strlen(kinds[i].name) == len && memcmp(kinds[i].name, name, len) == 0)
            kind = &kinds[i];
    return kind;
}

/* The value of `size` in [v, te) into prm, within the kind's range. */
static kcc_status parse_size(const level_kind *kind, const char *v, const char *te,
                             const char *tok, level_params *prm, char *err, size_t err_size)
{
    uint64_t s = 0;
    bool ok = parse_u64(v, te, &s) && s >= (uint64_t)kind->size_min &&
              s <= (uint64_t)kind->size_max;
    prm->size = (int)s;
    if (ok)
        return KCC_OK;
    char range[48];
    snprintf(range, sizeof(range), "an integer from %d to %d", kind->size_min, kind->size_max);
    set_err(err, err_size, "%s: size must be %s", tok, range);
    return KCC_ERR_BAD_DESC;
}

/* One key=value token [p, te) of level `name` into prm; *seen collects the keys given, each once. */
static kcc_status parse_param(const level_kind *kind, const char *name, const char *p,
                              const char *te, level_params *prm, unsigned *seen, char *err,
                              size_t err_size)
{
    const char *eq = memchr(p, '=', (size_t)(te - p));
    char tok[48];
    snprintf(tok, sizeof(tok), "%.*s", (int)((te - p) < 47 ? (te - p) : 47), p);
    if (!eq) {
        set_err(err, err_size, "%s: expected key=value, found '%s'", name, tok);
        return KCC_ERR_BAD_DESC;
    }
    size_t kl = (size_t)(eq - p);
    if (!word_in(kind->keys, p, kl)) {
        char key[32], msg[96];
        snprintf(key, sizeof(key), "%.*s", (int)(kl < 31 ? kl : 31), p);
        snprintf(msg, sizeof(msg), "%s (it takes: %s)", name, kind->keys);
        set_err(err, err_size, "unknown parameter '%s' for level %s", key, msg);
        return KCC_ERR_NOT_FOUND;
    }
    const char *v = eq + 1;
    unsigned bit;
    if (kl == 4 && memcmp(p, "seed", 4) == 0) {
        bit = 1;
        if (!parse_u64(v, te, &prm->seed)) {
            set_err(err, err_size, "%s: seed must be an unsigned 64-bit decimal integer%s", tok,
                    "");
            return KCC_ERR_BAD_DESC;
        }
    } else if (kl == 4 && memcmp(p, "size", 4) == 0) {
        bit = 2;
        if (parse_size(kind, v, te, tok, prm, err, err_size) != KCC_OK)
            return KCC_ERR_BAD_DESC;
    } else {
        bit = 4;
        if (!(kcc_text_to_float(v, te, 0, &prm->scale) == KCC_NUM_OK && prm->scale >= 0.01f &&
              prm->scale <= 100.0f)) {
            set_err(err, err_size, "%s: scale must be a number from 0.01 to 100%s", tok, "");
            return KCC_ERR_BAD_DESC;
        }
    }
    if (*seen & bit) {
        set_err(err, err_size, "%s: parameter given twice%s", tok, "");
        return KCC_ERR_BAD_DESC;
    }
    *seen |= bit;
    return KCC_OK;
}

kcc_status kcc_level_generate(const char *spec, kcc_level *out, char *err, size_t err_size)
{
    if (!spec || !out) {
        set_err(err, err_size, "NULL argument%s%s", "", "");
        return KCC_ERR_NULL_ARGUMENT;
    }
    const char *p = spec;
    while (*p && is_blank(*p))
        p++;
    const char *ne = p;
    while (*ne && !is_blank(*ne))
        ne++;
    char name[32];
    size_t nl = (size_t)(ne - p);
    snprintf(name, sizeof(name), "%.*s", (int)(nl < 31 ? nl : 31), p);
    const level_kind *kind = find_kind(p, nl);
    if (!kind) {
        set_err(err, err_size, "unknown level '%s' (known: arena, terrain, showcase, flat)%s",
                name, "");
        return KCC_ERR_NOT_FOUND;
    }
    level_params prm = {0u, kind->size_default, 1.0f};
    unsigned seen = 0;
    for (p = ne;;) {
        while (*p && is_blank(*p))
            p++;
        if (!*p)
            break;
        const char *te = p;
        while (*te && !is_blank(*te))
            te++;
        kcc_status st = parse_param(kind, name, p, te, &prm, &seen, err, err_size);
        if (st != KCC_OK)
            return st;
        p = te;
    }
    kcc_status st = kind->gen(&prm, out);
    if (st != KCC_OK)
        set_err(err, err_size, "%s: %s", name, kcc_status_str(st));
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* Common pieces                                                                              */
/* ------------------------------------------------------------------------------------------ */

/* Four boxes 1 m thick around [x0, x1] x [z0, z1] from y0 to y1, overlapping at the corners. */
void kcc_gen_walls(kcc_gen *g, float x0, float z0, float x1, float z1, float y0, float y1)
{
    kcc_gen_box(g, x0 - 1.0f, y0, z0 - 1.0f, x1 + 1.0f, y1, z0);
    kcc_gen_box(g, x0 - 1.0f, y0, z1, x1 + 1.0f, y1, z1 + 1.0f);
    kcc_gen_box(g, x0 - 1.0f, y0, z0 - 1.0f, x0, y1, z1 + 1.0f);
    kcc_gen_box(g, x1, y0, z0 - 1.0f, x1 + 1.0f, y1, z1 + 1.0f);
}

/* Floor slabs (top y = 0, 0.5 m thick) covering [x0, x1] x [z0, z1] minus rectangular holes:
 * cut into x strips at every hole edge, each strip into the z runs no hole covers. */
void kcc_gen_floor_with_holes(kcc_gen *g, float x0, float z0, float x1, float z1,
                              const float (*holes)[4], int hole_count)
{
    float xs[2 + 2 * 8];
    int nx = 0;
    if (hole_count > 8)
        hole_count = 8;
    xs[nx++] = x0;
    xs[nx++] = x1;
    for (int i = 0; i < hole_count; ++i) {
        xs[nx++] = holes[i][0];
        xs[nx++] = holes[i][2];
    }
    for (int i = 1; i < nx; ++i)            /* insertion sort */
        for (int j = i; j > 0 && xs[j] < xs[j - 1]; --j) {
            float t = xs[j];
            xs[j] = xs[j - 1];
            xs[j - 1] = t;
        }
    for (int i = 0; i + 1 < nx; ++i) {
        float a = xs[i], b = xs[i + 1];
        if (!(b > a) || a < x0 || b > x1)
            continue;
        float cz = z0;
        for (;;) {
            /* the next hole overlapping this strip that starts at or after cz */
            float next = z1, after = z1;
            for (int h = 0; h < hole_count; ++h) {
                if (holes[h][0] <= a && holes[h][2] >= b && holes[h][3] > cz &&
                    holes[h][1] < next) {
                    next = holes[h][1] > cz ? holes[h][1] : cz;
                    after = holes[h][3];
                }
            }
            if (next > cz)
                kcc_gen_box(g, a, -0.5f, cz, b, 0.0f, next);
            if (next >= z1)
                break;
            cz = after;
            if (cz >= z1)
                break;
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* flat                                                                                       */
/* ------------------------------------------------------------------------------------------ */

static kcc_status gen_flat(const level_params *p, kcc_level *out)
{
    kcc_gen g;
    kcc_gen_init(&g, 1.0f);
    float h = (float)p->size * 0.5f;
    kcc_gen_box(&g, -h, -0.5f, -h, h, 0.0f, h);
    kcc_gen_walls(&g, -h, -h, h, h, -0.5f, 4.0f);
    kcc_gen_spawn(&g, 0.0f, 0.05f, 0.0f);
    return kcc_gen_finish(&g, out);
}

/* ------------------------------------------------------------------------------------------ */
/* arena                                                                                      */
/* ------------------------------------------------------------------------------------------ */

/* tan of the ramp angles the arena picks from (degrees 15 20 25 30 35 40 50), as constants so
 * no libm result enters the geometry. */
static const float ramp_tan[7] = {0.267949194f, 0.363970234f, 0.466307658f, 0.577350269f,
                                  0.700207538f, 0.839099631f, 1.191753593f};

/* The region of a cell one arena feature fills (m; floor at y = 0). */
typedef struct feature_region {
    float x0, z0, x1, z1;
} feature_region;

/* Pillars, some to the ceiling height of the walls. */
static void feature_pillars(kcc_gen *g, rng *r, const feature_region *f)
{
    const float x0 = f->x0, z0 = f->z0;
    const float w = f->x1 - f->x0, d = f->z1 - f->z0;
    int n = rng_int(r, 1, 4);
    for (int i = 0; i < n; ++i) {
        float s = 0.25f * (float)rng_int(r, 2, 4);
        float px = x0 + 0.25f * (float)rng_int(r, 0, (int)((w - s) * 4.0f));
        float pz = z0 + 0.25f * (float)rng_int(r, 0, (int)((d - s) * 4.0f));
        float ph = rng_int(r, 0, 1) ? 6.0f : 0.5f * (float)rng_int(r, 2, 8);
        kcc_gen_box(g, px, 0.0f, pz, px + s, ph, pz + s);
    }
}

/* A flight of stairs up to a platform. */
static void feature_stairs(kcc_gen *g, rng *r, const feature_region *f)
{
    const float x0 = f->x0, z0 = f->z0, z1 = f->z1;
    const float w = f->x1 - f->x0, d = f->z1 - f->z0;
    static const float risers[5] = {0.15f, 0.2f, 0.25f, 0.3f, 0.35f};
    float rise = risers[rng_int(r, 0, 4)];
    float tread = 0.05f * (float)rng_int(r, 6, 8);
    float sw = 0.5f * (float)rng_int(r, 4, (int)(w * 2.0f));
    float sx = x0 + 0.25f * (float)rng_int(r, 0, (int)((w - sw) * 4.0f));
    int n = rng_int(r, 3, 8);
    while (n > 1 && (float)n * tread + 1.5f > d)
        n--;
    float top = (float)n * rise;
    for (int k = 0; k < n; ++k)   /* separate step brushes, touching: coincident faces */
        kcc_gen_box(g, sx, 0.0f, z0 + (float)k * tread, sx + sw, (float)(k + 1) * rise,
                    z0 + (float)(k + 1) * tread);
    float pz = z0 + (float)n * tread;
    kcc_gen_box(g, sx, 0.0f, pz, sx + sw, top, z1);
    if (z1 - pz >= 1.0f && sw >= 1.0f)
        kcc_gen_spawn(g, sx + sw * 0.5f, top + 0.05f, (pz + z1) * 0.5f);
}

/* A ramp up to a platform. */
static void feature_ramp(kcc_gen *g, rng *r, const feature_region *f)
{
    const float x0 = f->x0, z0 = f->z0, z1 = f->z1;
    const float w = f->x1 - f->x0, d = f->z1 - f->z0;
    int a = rng_int(r, 0, 6);
    float h = 0.25f * (float)rng_int(r, 2, 8);
    float run = h / ramp_tan[a];
    while (run + 1.5f > d && h > 0.25f) {
        h -= 0.25f;
        run = h / ramp_tan[a];
    }
    float rw = 0.5f * (float)rng_int(r, 4, (int)(w * 2.0f));
    float rx = x0 + 0.25f * (float)rng_int(r, 0, (int)((w - rw) * 4.0f));
    kcc_gen_ramp(g, rx, rx + rw, z0, z0 + run, 0.0f, h);
    /* the platform shares the ramp's high face (coincident faces, as in real maps) */
    kcc_gen_box(g, rx, 0.0f, z0 + run, rx + rw, h, z1);
    if (z1 - (z0 + run) >= 1.0f && rw >= 1.0f)
        kcc_gen_spawn(g, rx + rw * 0.5f, h + 0.05f, (z0 + run + z1) * 0.5f);
}

/* A low-ceiling passage along z. */
static void feature_passage(kcc_gen *g, rng *r, const feature_region *f)
{
    const float x0 = f->x0, z0 = f->z0, z1 = f->z1;
    const float w = f->x1 - f->x0;
    float clear = 0.05f * (float)rng_int(r, 40, 48);   /* 2.0 .. 2.4 m */
    float pw = 0.5f * (float)rng_int(r, 3, 5);
    float px = x0 + (w - pw) * 0.5f;
    kcc_gen_box(g, px - 0.5f, 0.0f, z0, px, clear, z1);
    kcc_gen_box(g, px + pw, 0.0f, z0, px + pw + 0.5f, clear, z1);
    kcc_gen_box(g, px - 0.5f, clear, z0, px + pw + 0.5f, clear + 0.5f, z1);
}

/* A wall across the cell with a doorway. */
static void feature_doorway(kcc_gen *g, rng *r, const feature_region *f)
{
    const float x0 = f->x0, z0 = f->z0, x1 = f->x1;
    const float w = f->x1 - f->x0, d = f->z1 - f->z0;
    float wz = z0 + 0.25f * (float)rng_int(r, 0, (int)((d - 0.5f) * 4.0f));
    float door = 0.25f * (float)rng_int(r, 5, 8);
    float dx = x0 + 0.25f * (float)rng_int(r, 1, (int)((w - door) * 4.0f) - 1);
    kcc_gen_box(g, x0, 0.0f, wz, dx, 3.0f, wz + 0.5f);
    kcc_gen_box(g, dx + door, 0.0f, wz, x1, 3.0f, wz + 0.5f);
    kcc_gen_box(g, dx - 0.25f, 2.25f, wz, dx + door + 0.25f, 3.0f, wz + 0.5f); /* lintel */
}

/* A table: a slab on four legs, walkable underneath. */
static void feature_table(kcc_gen *g, rng *r, const feature_region *f)
{
    const float x0 = f->x0, z0 = f->z0, x1 = f->x1, z1 = f->z1;
    float ty = 0.25f * (float)rng_int(r, 10, 12);
    float tx0 = x0 + 0.5f, tx1 = x1 - 0.5f, tz0 = z0 + 0.5f, tz1 = z1 - 0.5f;
    kcc_gen_box(g, tx0, ty, tz0, tx1, ty + 0.25f, tz1);
    kcc_gen_box(g, tx0, 0.0f, tz0, tx0 + 0.5f, ty, tz0 + 0.5f);
    kcc_gen_box(g, tx1 - 0.5f, 0.0f, tz0, tx1, ty, tz0 + 0.5f);
    kcc_gen_box(g, tx0, 0.0f, tz1 - 0.5f, tx0 + 0.5f, ty, tz1);
    kcc_gen_box(g, tx1 - 0.5f, 0.0f, tz1 - 0.5f, tx1, ty, tz1);
    kcc_gen_spawn(g, (tx0 + tx1) * 0.5f, ty + 0.25f + 0.05f, (tz0 + tz1) * 0.5f);
}

/* Crates, some stacked and overlapping. */
static void feature_crates(kcc_gen *g, rng *r, const feature_region *f)
{
    const float x0 = f->x0, z0 = f->z0;
    const float w = f->x1 - f->x0, d = f->z1 - f->z0;
    int n = rng_int(r, 2, 6);
    float cy = 0.0f;
    for (int i = 0; i < n; ++i) {
        float s = 0.25f * (float)rng_int(r, 2, 5);
        float cx = x0 + 0.25f * (float)rng_int(r, 0, (int)((w - s) * 4.0f));
        float cz = z0 + 0.25f * (float)rng_int(r, 0, (int)((d - s) * 4.0f));
        float base = (i > 0 && rng_int(r, 0, 2) == 0) ? cy : 0.0f;
        kcc_gen_box(g, cx, base, cz, cx + s, base + s, cz + s);
        cy = base + s;
    }
}

/* One feature inside the region [x0, x1] x [z0, z1] of a cell (floor at y = 0), picked by the
 * generator. Adds spawn points on top of what it builds where there is room. */
static void arena_feature(kcc_gen *g, rng *r, float x0, float z0, float x1, float z1)
{
    static void (*const features[7])(kcc_gen *, rng *, const feature_region *) = {
        feature_pillars, feature_stairs, feature_ramp, feature_passage,
        feature_doorway, feature_table, feature_crates};
    const feature_region f = {x0, z0, x1, z1};
    features[rng_int(r, 0, 6)](g, r, &f);
}

static kcc_status gen_arena(const level_params *p, kcc_level *out)
{
    kcc_gen g;
    kcc_gen_init(&g, 1.0f);
    rng r = {mix64(p->seed ^ 0x6172656e61ull)};
    int n = p->size / 8;                  /* cells per side, each at least 8 m */
    float S = (float)p->size, c = S / (float)n, o = -0.5f * S;
    kcc_gen_walls(&g, o, o, o + S, o + S, -1.0f, 6.0f);

    for (int j = 0; j < n; ++j) {
        for (int i = 0; i < n; ++i) {
            float cx0 = o + (float)i * c, cz0 = o + (float)j * c;
            float cx1 = cx0 + c, cz1 = cz0 + c;
            /* floor: the cell cut into 1-3 slabs along x or z, each stretched by 0 or 0.25 m
             * into its neighbours (coincident tops and T-junctions, as in real maps) */
            int parts = rng_int(&r, 1, 3);
            bool along_x = rng_int(&r, 0, 1) != 0;
            float cuts[4];
            cuts[0] = 0.0f;
            cuts[parts] = c;
            for (int k = 1; k < parts; ++k)    /* >= 2.6 m apart, jittered by up to 0.5 m */
                cuts[k] = 0.25f * (float)((int)(c * 4.0f * (float)k / (float)parts) +
                                          rng_int(&r, -2, 2));
            for (int k = 0; k < parts; ++k) {
                float a = cuts[k] - (k > 0 ? 0.25f * (float)rng_int(&r, 0, 1) : 0.0f);
                if (along_x)
                    kcc_gen_box(&g, cx0 + a, -0.5f, cz0, cx0 + cuts[k + 1], 0.0f, cz1);
                else
                    kcc_gen_box(&g, cx0, -0.5f, cz0 + a, cx1, 0.0f, cz0 + cuts[k + 1]);
            }
            /* the strip z in [cz0, cz0 + 2.5] stays clear: a spawn point on the floor. Two
             * features side by side in the rest, or one across the cell. */
            if (rng_int(&r, 0, 3) == 0) {
                arena_feature(&g, &r, cx0 + 0.5f, cz0 + 2.5f, cx1 - 0.5f, cz1 - 0.5f);
            } else {
                float xm = (cx0 + cx1) * 0.5f;
                arena_feature(&g, &r, cx0 + 0.5f, cz0 + 2.5f, xm - 0.25f, cz1 - 0.5f);
                arena_feature(&g, &r, xm + 0.25f, cz0 + 2.5f, cx1 - 0.5f, cz1 - 0.5f);
            }
            kcc_gen_spawn(&g, (cx0 + cx1) * 0.5f, 0.05f, cz0 + 1.25f);
        }
    }
    return kcc_gen_finish(&g, out);
}

/* ------------------------------------------------------------------------------------------ */
/* terrain                                                                                    */
/* ------------------------------------------------------------------------------------------ */

/* Value noise at integer grid point (x, z): lattice spacing `cell` (a power of two, so the
 * interpolation weights are exact), smoothstep-blended lattice values in [0, 1). */
static float value_noise(uint64_t seed, int x, int z, int cell)
{
    int ix = x / cell, iz = z / cell;
    float u = (float)(x - ix * cell) / (float)cell, v = (float)(z - iz * cell) / (float)cell;
    float su = u * u * (3.0f - 2.0f * u), sv = v * v * (3.0f - 2.0f * v);
    float c[4];
    for (int k = 0; k < 4; ++k) {
        uint64_t key = seed ^ mix64(((uint64_t)(uint32_t)(ix + (k & 1)) << 32) |
                                    (uint32_t)(iz + (k >> 1)));
        c[k] = hash01(mix64(key + (uint64_t)cell));
    }
    float a = c[0] + (c[1] - c[0]) * su, b = c[2] + (c[3] - c[2]) * su;
    return a + (b - a) * sv;
}

static float clamp01(float t)
{
    return t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
}

typedef struct mesa {
    float cx, cz, half, height;
} mesa;

static float terrain_height(uint64_t seed, const mesa *m, int mesa_count, int x, int z)
{
    float h = 6.0f * value_noise(seed, x, z, 16) + 2.0f * value_noise(seed, x, z, 8) +
              0.5f * value_noise(seed, x, z, 4);
    for (int i = 0; i < mesa_count; ++i) {
        float dx = (float)x - m[i].cx, dz = (float)z - m[i].cz;
        dx = dx < 0.0f ? -dx : dx;
        dz = dz < 0.0f ? -dz : dz;
        float dist = dx > dz ? dx : dz;                 /* square mesas: Chebyshev distance */
        h += m[i].height * clamp01(m[i].half - dist);   /* 1 m wide cliff: 60-72 degrees */
    }
    return h;
}

/* The terrain's (S + 1)^2 sample heights, row-major along z (1 m apart), into h; its lowest and
 * highest into *out_min, *out_max. */
static void terrain_grid(uint64_t spec_seed, int S, float *h, float *out_min, float *out_max)
{
    uint64_t seed = mix64(spec_seed ^ 0x74657272ull);
    rng r = {seed};
    mesa m[16];
    int mc = 2 + (S * S) / 1024;
    if (mc > 16)
        mc = 16;
    for (int i = 0; i < mc; ++i) {
        m[i].cx = (float)rng_int(&r, 4, S - 4);
        m[i].cz = (float)rng_int(&r, 4, S - 4);
        m[i].half = (float)rng_int(&r, 2, 5);
        m[i].height = 0.5f * (float)rng_int(&r, 3, 6);
    }
    size_t n1 = (size_t)S + 1u;
    int mid = S / 2;
    float hc = terrain_height(seed, m, mc, mid, mid);
    float hmin = 1e30f, hmax = -1e30f;
    for (int z = 0; z <= S; ++z)
        for (int x = 0; x <= S; ++x) {
            float v = terrain_height(seed, m, mc, x, z);
            int dx = x - mid < 0 ? mid - x : x - mid, dz = z - mid < 0 ? mid - z : z - mid;
            float t = clamp01((float)(5 - (dx > dz ? dx : dz)) * 0.5f);  /* flat centre */
            v = v + (hc - v) * t;
            h[(size_t)z * n1 + (size_t)x] = v;
            hmin = v < hmin ? v : hmin;
            hmax = v > hmax ? v : hmax;
        }
    *out_min = hmin;
    *out_max = hmax;
}

kcc_status kcc_level_terrain_heights(uint64_t seed, uint32_t size, float *out_heights,
                                     kcc_heightfield_desc *out_desc)
{
    if (!out_heights || !out_desc)
        return KCC_ERR_NULL_ARGUMENT;
    if (size < 16u || size > 16384u)
        return KCC_ERR_BAD_DESC;
    float hmin, hmax;
    terrain_grid(seed, (int)size, out_heights, &hmin, &hmax);
    memset(out_desc, 0, sizeof *out_desc);
    out_desc->heights = out_heights;
    out_desc->columns = out_desc->rows = size + 1u;
    out_desc->spacing[0] = out_desc->spacing[1] = 1.0f;
    out_desc->origin[0] = out_desc->origin[2] = -0.5f * (float)size;
    return KCC_OK;
}

static kcc_status gen_terrain(const level_params *p, kcc_level *out)
{
    kcc_gen g;
    kcc_gen_init(&g, 1.0f);
    int S = p->size, mid = S / 2;
    size_t n1 = (size_t)S + 1u;
    float *h = malloc(n1 * n1 * sizeof(float));
    if (!h)
        return KCC_ERR_OUT_OF_MEMORY;
    float hmin, hmax;
    terrain_grid(p->seed, S, h, &hmin, &hmax);
    float o = -0.5f * (float)S;
    uint32_t first = 0;
    for (int z = 0; z <= S; ++z)
        for (int x = 0; x <= S; ++x) {
            uint32_t v = kcc_gen_vertex(&g, o + (float)x, h[(size_t)z * n1 + (size_t)x],
                                        o + (float)z);
            if (x == 0 && z == 0)
                first = v;
        }
    for (int z = 0; z < S; ++z)
        for (int x = 0; x < S; ++x) {
            uint32_t a = first + (uint32_t)((size_t)z * n1 + (size_t)x), b = a + 1u;
            uint32_t d = a + (uint32_t)n1, c = d + 1u;
            /* counter-clockwise seen from above (normal +y); diagonals alternate */
            if ((x + z) & 1) {
                kcc_lb_triangle(&g.b, a, d, c);
                kcc_lb_triangle(&g.b, a, c, b);
            } else {
                kcc_lb_triangle(&g.b, a, d, b);
                kcc_lb_triangle(&g.b, b, d, c);
            }
        }
    kcc_gen_walls(&g, o, o, o + (float)S, o + (float)S, hmin - 2.0f, hmax + 4.0f);

    /* spawns: the centre, then a grid of candidates where the ground under a 0.6 m footprint
     * varies by less than 0.5 m; placed 5 cm above the highest vertex around them */
    for (int k = -1; k < (S / 8) * (S / 8); ++k) {
        int x = k < 0 ? mid : (k % (S / 8)) * 8 + 4;
        int z = k < 0 ? mid : (k / (S / 8)) * 8 + 4;
        if (k >= 0 && x == mid && z == mid)
            continue;
        float lo = 1e30f, hi = -1e30f;
        for (int zz = z - 1; zz <= z + 1; ++zz)
            for (int xx = x - 1; xx <= x + 1; ++xx) {
                float v = h[(size_t)zz * n1 + (size_t)xx];
                lo = v < lo ? v : lo;
                hi = v > hi ? v : hi;
            }
        if (hi - lo < 0.5f)
            kcc_gen_spawn(&g, o + (float)x, hi + 0.05f, o + (float)z);
    }
    free(h);
    return kcc_gen_finish(&g, out);
}
