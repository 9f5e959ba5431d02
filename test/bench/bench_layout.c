/* bench_layout.c: the mesh layout's figures: kcc_mesh_memory_bytes per triangle and its parts (from
 * kcc_mesh_get_stats and the mesh's own sizes) for each level given, and a fixed query workload
 * (rays, exact box overlaps, box sweeps) whose answers are folded into a checksum, so two builds of
 * libkcc compared with callgrind (instructions) or farm-bench --vs (paired wall time) are seen to
 * answer alike.
 *   bench_layout [-q|-t] LEVEL.obj|DIR ...   -q: memory figures only; DIR: its levels (levels.txt,
 *                                             or the five shared levels), as `make bench` passes them
 *   -t: each level built with float vertices and with vertex tables (kcc_vertex_coding), the
 *       workload's three kinds timed on both, alternating, ROUNDS rounds: ns a query (medians) and
 *       the median of the rounds' tables / floats ratios; the two meshes' checksums must agree
 * Built by `make bench`, or against any other build's library:
 *   cc -std=c11 -O2 -ffp-contract=off -Itest/bench -Icollide -Icontroller test/bench/bench_layout.c \
 *      build/libkcc.a -lm -o bench_layout */
#include "bench.h"
#include "collide_internal.h" /* struct kcc_mesh: the parts' sizes */

enum { RAYS = 20000, BOXES = 20000, SWEEPS = 10000 };

static uint64_t fold(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; ++i)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* A point inside the mesh's bounds, uniformly. */
static void point_in(bench_rng *r, const vec3 bounds[2], float out[3])
{
    for (int k = 0; k < 3; ++k)
        out[k] = bench_rng_range(r, bounds[0][k], bounds[1][k]);
}

/* The workload: the same queries for every build (the generator's seed is fixed), each kind in a
 * function of its own kept out of line, so callgrind's --toggle-collect can name it (run_rays,
 * run_boxes, run_sweeps). Each returns its answers folded into h. */
__attribute__((noinline)) uint64_t run_rays(const kcc_mesh *mesh, const vec3 bounds[2], bench_rng *r,
                                            uint64_t h)
{
    for (int i = 0; i < RAYS; ++i) {
        float org[3], dir[3];
        point_in(r, bounds, org);
        bench_rng_dir(r, dir);
        kcc_ray_hit hit;
        memset(&hit, 0, sizeof hit);
        if (kcc_mesh_raycast(mesh, org, dir, 64.0f, &hit))
            h = fold(h, &hit, sizeof hit);
    }
    return h;
}

static int compare_u32(const void *a, const void *b)
{
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

__attribute__((noinline)) uint64_t run_boxes(const kcc_mesh *mesh, const vec3 bounds[2], bench_rng *r,
                                             uint64_t h, uint32_t *scratch, uint32_t capacity)
{
    for (int i = 0; i < BOXES; ++i) {
        float c[3], e = bench_rng_range(r, 0.25f, 1.5f);
        point_in(r, bounds, c);
        const vec3 box[2] = {{c[0] - e, c[1] - e, c[2] - e}, {c[0] + e, c[1] + e, c[2] + e}};
        uint32_t n = kcc_mesh_overlap_aabb(mesh, box, scratch, capacity);
        qsort(scratch, n < capacity ? n : capacity, sizeof *scratch, compare_u32); /* any order */
        h = fold(h, &n, sizeof n);
        h = fold(h, scratch, sizeof(uint32_t) * (n < capacity ? n : capacity));
    }
    return h;
}

__attribute__((noinline)) uint64_t run_sweeps(const kcc_mesh *mesh, const vec3 bounds[2], bench_rng *r,
                                              uint64_t h)
{
    for (int i = 0; i < SWEEPS; ++i) {
        float c[3], d[3];
        point_in(r, bounds, c);
        bench_rng_dir(r, d);
        const float len = bench_rng_range(r, 0.1f, 4.0f);
        const vec3 box[2] = {{c[0] - 0.47f, c[1] - 0.875f, c[2] - 0.47f}, {c[0] + 0.47f, c[1] + 0.875f, c[2] + 0.47f}};
        vec3 delta = {d[0] * len, d[1] * len, d[2] * len};
        kcc_sweep_hit hit;
        memset(&hit, 0, sizeof hit);
        if (kcc_mesh_sweep_aabb(mesh, box, delta, &hit))
            h = fold(h, &hit, sizeof hit);
    }
    return h;
}

/* Every query of the workload; the checksum of every answer. */
static uint64_t run_queries(const kcc_mesh *mesh, uint32_t *scratch, uint32_t capacity)
{
    vec3 bounds[2];
    kcc_mesh_bounds(mesh, bounds);
    bench_rng r = bench_rng_seed(0x1a70u);
    const vec3 *fixed = (const vec3 *)bounds;
    uint64_t h = run_rays(mesh, fixed, &r, 0xcbf29ce484222325ull);
    h = run_boxes(mesh, fixed, &r, h, scratch, capacity);
    return run_sweeps(mesh, fixed, &r, h);
}

enum { ROUNDS = 21 };

/* ns a query of one kind of the workload (kind 0 rays, 1 box overlaps, 2 sweeps) on mesh; its
 * answers folded into *h. */
static double time_kind(const kcc_mesh *mesh, int kind, uint32_t *scratch, uint32_t capacity, uint64_t *h)
{
    vec3 bounds[2];
    kcc_mesh_bounds(mesh, bounds);
    const vec3 *fixed = (const vec3 *)bounds;
    bench_rng r = bench_rng_seed(0x1a70u + (uint32_t)kind);
    const double t0 = bench_now_ns();
    if (kind == 0)
        *h = run_rays(mesh, fixed, &r, *h);
    else if (kind == 1)
        *h = run_boxes(mesh, fixed, &r, *h, scratch, capacity);
    else
        *h = run_sweeps(mesh, fixed, &r, *h);
    return (bench_now_ns() - t0) / (kind == 0 ? RAYS : kind == 1 ? BOXES : SWEEPS);
}

/* The -t figures of a level's two meshes (floats f, tables t); false when they answer otherwise. */
static bool time_codings(const char *name, const kcc_mesh *f, const kcc_mesh *t, uint32_t *scratch,
                         uint32_t capacity)
{
    static const char *const kinds[3] = {"rays", "box overlaps", "sweeps"};
    bool same = true;
    printf("%-16s", name);
    for (int kind = 0; kind < 3; ++kind) {
        double nf[ROUNDS], nt[ROUNDS], ratio[ROUNDS];
        for (int i = 0; i < ROUNDS; ++i) {
            uint64_t hf = 0, ht = 0;
            if (i % 2 == 0) {
                nf[i] = time_kind(f, kind, scratch, capacity, &hf);
                nt[i] = time_kind(t, kind, scratch, capacity, &ht);
            } else {
                nt[i] = time_kind(t, kind, scratch, capacity, &ht);
                nf[i] = time_kind(f, kind, scratch, capacity, &hf);
            }
            ratio[i] = nt[i] / nf[i];
            same = same && hf == ht;
        }
        printf("  %s %.0f / %.0f ns (x%.3f)", kinds[kind], bench_median(nf, ROUNDS), bench_median(nt, ROUNDS),
               bench_median(ratio, ROUNDS));
    }
    printf("%s\n", same ? "" : "  ANSWERS DIFFER");
    return same;
}

/* One level's figures (and its workload's checksum when queries); false after printing why not. */
static bool report_level(const char *path, int mode, uint32_t *scratch, uint32_t capacity)
{
    const bool queries = mode == 1;
    kcc_level lv;
    char err[256];
    if (kcc_level_load_obj_geometry(path, &lv, err, sizeof err) != KCC_OK) {
        fprintf(stderr, "bench_layout: %s\n", err);
        return false;
    }
    kcc_mesh_desc md;
    memset(&md, 0, sizeof md);
    md.positions = lv.positions;
    md.vertex_count = lv.vertex_count;
    md.indices = lv.indices;
    md.triangle_count = lv.triangle_count;
    kcc_mesh *mesh;
    if (kcc_mesh_build(&md, &mesh) != KCC_OK) {
        fprintf(stderr, "bench_layout: %s: build failed\n", path);
        kcc_level_free(&lv);
        return false;
    }
    const char *name = strrchr(path, '/');
    if (mode == 2) {
        kcc_mesh *t = NULL;
        md.vertex_coding = KCC_VERTEX_FLOATS;
        kcc_mesh_destroy(mesh);
        bool ok = kcc_mesh_build(&md, &mesh) == KCC_OK;
        md.vertex_coding = KCC_VERTEX_TABLES;
        ok = ok && kcc_mesh_build(&md, &t) == KCC_OK &&
             time_codings(name ? name + 1 : path, mesh, t, scratch, capacity);
        kcc_mesh_destroy(t);
        kcc_mesh_destroy(mesh);
        kcc_level_free(&lv);
        return ok;
    }
    kcc_mesh_stats st;
    kcc_mesh_get_stats(mesh, &st);
    const double tris = (double)lv.triangle_count;
    /* The parts (collide_internal.h, struct kcc_mesh): the node groups; tri_id and the back links
     * (slot -> input and the way back, at the mesh's index width) and the duplicate lists (the rest
     * of tree_bytes); of vertex_bytes, 3 B per slot of corner offsets and 4 B per block of slots of
     * bases, the rest the vertices. */
    const double width = mesh->narrow_ids ? 2.0 : 4.0;
    const double groups = (double)sizeof(kcc_qnode4) * mesh->quad_count, tri_id = width * mesh->slot_count;
    const double words = ceil(tris / 64.0);
    const double links = 8.0 * words + 8.0 * ceil(4.0 * kcc_rank_count((uint32_t)words) / 8.0) +
                         width * mesh->link_count;
    const double dups = (double)st.tree_bytes - groups - tri_id - links;
    const double index = 3.0 * mesh->slot_count + 4.0 * ceil(mesh->slot_count / (double)KCC_CORNER_BLOCK);
    printf("%-16s %6u tris %6.2f B/tri: groups %4.2f dups %4.2f tri_id %4.2f links %4.2f vertices %5.2f "
           "(%.3f a tri) offsets+bases %4.2f", name ? name + 1 : path, lv.triangle_count,
           (double)kcc_mesh_memory_bytes(mesh) / tris, groups / tris, dups / tris, tri_id / tris,
           links / tris, ((double)st.vertex_bytes - index) / tris, mesh->vertex_count / tris, index / tris);
    if (st.vertex_coding == KCC_VERTEX_TABLES)
        printf(" tables %u %u %u, %u-byte codes", st.axis_values[0], st.axis_values[1],
               st.axis_values[2], mesh->tables->code_bytes);
    if (queries)
        printf("  answers %016llx", (unsigned long long)run_queries(mesh, scratch, capacity));
    printf("\n");
    kcc_mesh_destroy(mesh);
    kcc_level_free(&lv);
    return true;
}

int main(int argc, char **argv)
{
    int first = 1, mode = 1; /* 0 memory figures only (-q), 1 and the checksum, 2 timing (-t) */
    if (argc > 1 && (strcmp(argv[1], "-q") == 0 || strcmp(argv[1], "-t") == 0)) {
        mode = argv[1][1] == 'q' ? 0 : 2;
        first = 2;
    }
    if (argc <= first) {
        fprintf(stderr, "usage: bench_layout [-q|-t] LEVEL.obj|DIR ...\n");
        return 2;
    }
    if (mode == 2)
        bench_print_load("before");
    const uint32_t capacity = 1u << 16;
    uint32_t *scratch = malloc(sizeof(uint32_t) * capacity);
    static char names[BENCH_MAX_LEVELS][64];
    bool ok = scratch != NULL;
    for (int a = first; ok && a < argc; ++a) {
        const int count = bench_level_list(argv[a], names, BENCH_MAX_LEVELS);
        if (count == 0)
            ok = report_level(argv[a], mode, scratch, capacity);
        for (int i = 0; ok && i < count; ++i) {
            char path[1024];
            ok = snprintf(path, sizeof path, "%s/%s.obj", argv[a], names[i]) < (int)sizeof path &&
                 report_level(path, mode, scratch, capacity);
        }
    }
    if (mode == 2)
        bench_print_load("after");
    free(scratch);
    return ok ? 0 : 1;
}
