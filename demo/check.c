/* demo/check.c: kcc-check LEVEL, the level checker: lists a level's self-intersections (the
 * library's kcc_mesh_self_intersections), degenerate and sliver triangles, open edges and
 * duplicate faces, each with coordinates. Reads OBJ files and Quake 3 BSPs (demo/q3bsp.c, as
 * kcc-bsp2obj reads them). Allocates freely; a tool, not per-frame code. */
#include "check.h"
#include "q3bsp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/// Below this height (m) a triangle is a sliver: too thin for its normal to mean much, and far
/// below anything a character's box resolves.
#define CHECK_SLIVER_DEFAULT 0.001

typedef struct check_ctx {
    const kcc_level *level;
    FILE            *out;
    double           sliver;        ///< m
    bool            *duplicate;     ///< per triangle: a later copy of an earlier face
    uint32_t         counts[5];     ///< per defect kind, in the order of kind_names
} check_ctx;

enum { KIND_CUT, KIND_DEGENERATE, KIND_SLIVER, KIND_OPEN, KIND_DUPLICATE };

static void corners(const kcc_level *l, uint32_t t, float out[3][3])
{
    for (int k = 0; k < 3; ++k)
        memcpy(out[k], l->positions + 3u * l->indices[3u * t + (uint32_t)k], sizeof out[k]);
}

static void print_point(FILE *f, const float p[3])
{
    fprintf(f, "(%g %g %g)", (double)p[0], (double)p[1], (double)p[2]);
}

/* ---- degenerate and sliver triangles ---------------------------------------------------------- */

/// Twice the area (m^2) and the longest edge (m), in double.
static double twice_area(float c[3][3], double *longest)
{
    double e[3][3];
    *longest = 0.0;
    for (int i = 0; i < 3; ++i) {
        double len2 = 0.0;
        for (int k = 0; k < 3; ++k) {
            e[i][k] = (double)c[(i + 1) % 3][k] - c[i][k];
            len2 += e[i][k] * e[i][k];
        }
        *longest = fmax(*longest, sqrt(len2));
    }
    const double n[3] = {e[0][1] * e[1][2] - e[0][2] * e[1][1], e[0][2] * e[1][0] - e[0][0] * e[1][2],
                         e[0][0] * e[1][1] - e[0][1] * e[1][0]};
    return sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
}

static void check_shapes(check_ctx *c)
{
    for (uint32_t t = 0; t < c->level->triangle_count; ++t) {
        float p[3][3];
        corners(c->level, t, p);
        double longest;
        const double area2 = twice_area(p, &longest);
        const char *kind = NULL;
        if (area2 == 0.0) {
            kind = "degenerate";
            c->counts[KIND_DEGENERATE]++;
        } else if (area2 / longest < c->sliver) {
            kind = "sliver";
            c->counts[KIND_SLIVER]++;
        } else {
            continue;
        }
        fprintf(c->out, "%s: triangle %u ", kind, t);
        if (area2 != 0.0)
            fprintf(c->out, "(height %g m) ", area2 / longest);
        for (int k = 0; k < 3; ++k) {
            fputs(k ? " " : "at ", c->out);
            print_point(c->out, p[k]);
        }
        fputc('\n', c->out);
    }
}

/* ---- duplicate faces: the same three corners in any order ----------------------------------- */

typedef struct face_key {
    float    corner[3][3];   ///< sorted
    uint32_t triangle;
} face_key;

static int point_cmp(const float a[3], const float b[3])
{
    for (int k = 0; k < 3; ++k)
        if (a[k] != b[k])
            return a[k] < b[k] ? -1 : 1;
    return 0;
}

static int corner_cmp(const void *x, const void *y)
{
    return point_cmp(x, y);
}

static int face_cmp(const void *x, const void *y)
{
    const face_key *a = x, *b = y;
    for (int i = 0; i < 3; ++i) {
        const int c = point_cmp(a->corner[i], b->corner[i]);
        if (c)
            return c;
    }
    return a->triangle < b->triangle ? -1 : a->triangle > b->triangle;
}

static bool check_duplicates(check_ctx *c)
{
    const uint32_t n = c->level->triangle_count;
    face_key *keys = malloc(sizeof *keys * (n ? n : 1));
    if (!keys)
        return false;
    for (uint32_t t = 0; t < n; ++t) {
        face_key *k = &keys[t];
        corners(c->level, t, k->corner);
        k->triangle = t;
        qsort(k->corner, 3, sizeof k->corner[0], corner_cmp);
    }
    qsort(keys, n, sizeof *keys, face_cmp);
    for (uint32_t i = 1, first = 0; i < n; ++i) {
        if (memcmp(keys[i].corner, keys[first].corner, sizeof keys[i].corner) != 0 ||
            twice_area(keys[i].corner, &(double){0}) == 0.0) {
            first = i;
            continue;
        }
        c->duplicate[keys[i].triangle] = true;
        c->counts[KIND_DUPLICATE]++;
        fprintf(c->out, "duplicate: triangle %u repeats triangle %u at ", keys[i].triangle,
                keys[first].triangle);
        for (int k = 0; k < 3; ++k) {
            print_point(c->out, keys[i].corner[k]);
            fputs(k < 2 ? " " : "\n", c->out);
        }
    }
    free(keys);
    return true;
}

/* ---- open edges: an edge (by its corners' coordinates) that only one face uses --------------- */

typedef struct edge_key {
    float    end[2][3];     ///< sorted
    uint32_t triangle;
    uint32_t edge;          ///< corner edge .. edge + 1 of the triangle
} edge_key;

static int edge_cmp(const void *x, const void *y)
{
    const edge_key *a = x, *b = y;
    int c = point_cmp(a->end[0], b->end[0]);
    c = c ? c : point_cmp(a->end[1], b->end[1]);
    if (c)
        return c;
    return a->triangle != b->triangle ? (a->triangle < b->triangle ? -1 : 1)
                                      : (a->edge < b->edge ? -1 : a->edge > b->edge);
}

static int edge_order_cmp(const void *x, const void *y)
{
    const edge_key *a = x, *b = y;
    if (a->triangle != b->triangle)
        return a->triangle < b->triangle ? -1 : 1;
    return a->edge < b->edge ? -1 : a->edge > b->edge;
}

/// Open edges of the non-degenerate faces, listed in triangle order.
static bool check_open_edges(check_ctx *c)
{
    const uint32_t n = c->level->triangle_count;
    edge_key *edges = malloc(sizeof *edges * 3 * (n ? n : 1));
    if (!edges)
        return false;
    uint32_t m = 0;
    for (uint32_t t = 0; t < n; ++t) {
        float p[3][3];
        corners(c->level, t, p);
        double longest;
        if (twice_area(p, &longest) == 0.0)
            continue;
        for (uint32_t e = 0; e < 3; ++e, ++m) {
            const float *a = p[e], *b = p[(e + 1) % 3];
            const bool swap = point_cmp(a, b) > 0;
            memcpy(edges[m].end[0], swap ? b : a, sizeof edges[m].end[0]);
            memcpy(edges[m].end[1], swap ? a : b, sizeof edges[m].end[1]);
            edges[m].triangle = t, edges[m].edge = e;
        }
    }
    qsort(edges, m, sizeof *edges, edge_cmp);
    uint32_t open = 0;
    for (uint32_t i = 0; i < m;) {
        uint32_t j = i + 1;
        while (j < m && memcmp(edges[j].end, edges[i].end, sizeof edges[i].end) == 0)
            ++j;
        if (j == i + 1)
            edges[open++] = edges[i];
        i = j;
    }
    qsort(edges, open, sizeof *edges, edge_order_cmp);
    for (uint32_t i = 0; i < open; ++i) {
        float p[3][3];
        corners(c->level, edges[i].triangle, p);
        fprintf(c->out, "open edge: triangle %u ", edges[i].triangle);
        print_point(c->out, p[edges[i].edge]);
        fputs(" - ", c->out);
        print_point(c->out, p[(edges[i].edge + 1) % 3]);
        fputc('\n', c->out);
    }
    c->counts[KIND_OPEN] = open;
    free(edges);
    return true;
}

/* ---- self-intersections --------------------------------------------------------------------- */

/// The library's self-intersections, leaving out later copies of a face (listed as duplicates:
/// their cuts are their original's).
static bool check_cuts(check_ctx *c)
{
    kcc_mesh *mesh = NULL;
    const kcc_status s = kcc_level_build_mesh(c->level, &mesh);
    if (s == KCC_ERR_NO_TRIANGLES)
        return true; /* only degenerate faces: nothing to cut */
    if (s != KCC_OK)
        return false;
    const uint32_t n = kcc_mesh_self_intersections(mesh, NULL, 0);
    kcc_tri_pair *pairs = malloc(sizeof *pairs * (n ? n : 1));
    if (!pairs) {
        kcc_mesh_destroy(mesh);
        return false;
    }
    kcc_mesh_self_intersections(mesh, pairs, n);
    for (uint32_t i = 0; i < n; ++i) {
        const kcc_tri_pair *p = &pairs[i];
        if (c->duplicate[p->a] || c->duplicate[p->b])
            continue;
        c->counts[KIND_CUT]++;
        fprintf(c->out, "self-intersection: triangles %u and %u cut along ", p->a, p->b);
        print_point(c->out, p->segment[0]);
        fputs(" - ", c->out);
        print_point(c->out, p->segment[1]);
        fputc('\n', c->out);
    }
    free(pairs);
    kcc_mesh_destroy(mesh);
    return true;
}

/* ---- the program ---------------------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kcc-check [--sliver M] LEVEL\n"
            "  Lists the defects of a level (OBJ, or a Quake 3 BSP as kcc-bsp2obj imports it),\n"
            "  one a line, with coordinates (m):\n"
            "    self-intersection: two triangles cutting each other (not just sharing an edge or\n"
            "                       a corner), with the segment where they cut\n"
            "    degenerate:        a triangle of zero area\n"
            "    sliver:            a triangle less than M metres high (default 0.001)\n"
            "    open edge:         an edge (by its corners' coordinates) only one face uses\n"
            "    duplicate:         a face with the same three corners as an earlier one\n"
            "  Exit status: 0 clean, 1 defects found, 2 bad input.\n");
}

static kcc_status load(const char *path, kcc_level *level, char *err, size_t err_size)
{
    const size_t n = strlen(path);
    if (n > 4 && strcasecmp(path + n - 4, ".bsp") == 0) {
        q3bsp_options opt = q3bsp_default_options();
        return q3bsp_load(path, &opt, level, NULL, err, err_size);
    }
    return kcc_level_load_obj_geometry(path, level, err, err_size);
}

static int check_level(const char *path, double sliver, FILE *out, FILE *err)
{
    kcc_level level;
    char msg[512];
    kcc_status s = load(path, &level, msg, sizeof msg);
    if (s != KCC_OK) {
        fprintf(err, "kcc-check: %s (%s)\n", msg, kcc_status_str(s));
        return 2;
    }
    check_ctx c = {.level = &level, .out = out, .sliver = sliver};
    c.duplicate = calloc(level.triangle_count ? level.triangle_count : 1, sizeof *c.duplicate);
    const bool ok = c.duplicate && (check_shapes(&c), check_duplicates(&c)) &&
                    check_open_edges(&c) && check_cuts(&c);
    const uint32_t triangles = level.triangle_count;
    free(c.duplicate);
    kcc_level_free(&level);
    if (!ok) {
        fprintf(err, "kcc-check: %s: out of memory\n", path);
        return 2;
    }
    const uint32_t *k = c.counts;
    fprintf(out, "%s: %u triangles: %u self-intersections, %u degenerate, %u slivers, %u open edges, "
                 "%u duplicates\n",
            path, triangles, k[KIND_CUT], k[KIND_DEGENERATE], k[KIND_SLIVER],
            k[KIND_OPEN], k[KIND_DUPLICATE]);
    return k[0] + k[1] + k[2] + k[3] + k[4] ? 1 : 0;
}

int kcc_check_run(int argc, char **argv, FILE *out, FILE *err)
{
    const char *path = NULL;
    double sliver = CHECK_SLIVER_DEFAULT;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--sliver") == 0 && i + 1 < argc) {
            char *end;
            sliver = strtod(argv[++i], &end);
            if (*end || !(sliver >= 0.0)) {
                fprintf(err, "kcc-check: --sliver wants a height in metres, not %s\n", argv[i]);
                return 2;
            }
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(out);
            return 0;
        } else if (argv[i][0] == '-' || path) {
            usage(err);
            return 2;
        } else {
            path = argv[i];
        }
    }
    if (!path) {
        usage(err);
        return 2;
    }
    return check_level(path, sliver, out, err);
}

#ifndef KCC_CHECK_NO_MAIN
int main(int argc, char **argv)
{
    return kcc_check_run(argc, argv, stdout, stderr);
}
#endif
