/* ray.c: owns the ray queries: the watertight ray/triangle test (Woop, Benthin, Wald 2013; scalar and
 * four-triangle SSE, bit-identical) and the closest-hit mesh ray cast (ordered stack traversal with
 * robust slab tests). No state, no allocation. */
#include <math.h>
#include <string.h>

#include "collide_internal.h"
#include "heightfield_internal.h"

static void ray_setup(const float org[3], const float dir[3], kcc_ray_pre *r)
{
    memcpy(r->org, org, sizeof r->org);
    /* kz is the axis of the largest |dir| component (ties: x before z, y before z, x before y),
     * kx and ky the next two, swapped when dir[kz] < 0 to keep the winding (only the sign of det
     * depends on it). Chosen from flags, without branches: a ray's direction is anything, and a
     * branch here mispredicts about once a setup. */
    const float ax = fabsf(dir[0]), ay = fabsf(dir[1]), az = fabsf(dir[2]);
    const int xy = ax >= ay, xz = ax >= az, yz = ay >= az;
    const int kz = 2 - 2 * (xy & xz) - ((xy ^ 1) & yz);
    static const int next[3] = {1, 2, 0};
    int kx = next[kz], ky = next[kx];
    const int swap = (kx ^ ky) & -(dir[kz] < 0.0f);
    kx ^= swap;
    ky ^= swap;
    r->kx = kx;
    r->ky = ky;
    r->kz = kz;
    r->sx = dir[kx] / dir[kz];
    r->sy = dir[ky] / dir[kz];
    r->sz = 1.0f / dir[kz];
}

/* The watertight test. Vertices are transformed the same way whichever triangle they belong to,
 * and an edge function of a shared edge is computed from the same two products with the operands
 * swapped, so the two neighbours see exactly opposite values: no ray slips between them. A triangle
 * with a zero or tiny edge function is decided in double (kcc_edge_hit_exact). */
KCC_HOT bool ray_tri(const kcc_ray_pre *r, const float a[3], const float b[3], const float c[3],
                           float max_t, float *out_t)
{
    const int kx = r->kx, ky = r->ky, kz = r->kz;
    float A[3] = {a[0] - r->org[0], a[1] - r->org[1], a[2] - r->org[2]};
    float B[3] = {b[0] - r->org[0], b[1] - r->org[1], b[2] - r->org[2]};
    float C[3] = {c[0] - r->org[0], c[1] - r->org[1], c[2] - r->org[2]};
    float Ax = A[kx] - r->sx * A[kz], Ay = A[ky] - r->sy * A[kz];
    float Bx = B[kx] - r->sx * B[kz], By = B[ky] - r->sy * B[kz];
    float Cx = C[kx] - r->sx * C[kz], Cy = C[ky] - r->sy * C[kz];
    float Az = r->sz * A[kz], Bz = r->sz * B[kz], Cz = r->sz * C[kz];
    float U = Cx * By - Cy * Bx;
    float V = Ax * Cy - Ay * Cx;
    float W = Bx * Ay - By * Ax;
    float t;
    if (kcc_edge_tiny(U) || kcc_edge_tiny(V) || kcc_edge_tiny(W)) {
        const float x[3] = {Ax, Bx, Cx}, y[3] = {Ay, By, Cy}, z[3] = {Az, Bz, Cz};
        if (!kcc_edge_hit_exact(x, y, z, NULL, &t))
            return false;
    } else {
        if ((U < 0.0f || V < 0.0f || W < 0.0f) && (U > 0.0f || V > 0.0f || W > 0.0f))
            return false;
        float det = U + V + W;
        if (det == 0.0f)
            return false;
        float T = U * Az + V * Bz + W * Cz;
        t = T / det;
    }
    if (!(t >= 0.0f) || !(t <= max_t))
        return false;
    *out_t = t;
    return true;
}

#if KCC_SSE
/* The test of ray_tri4 on the four triangles' corners va, vb, vc (as kcc_mesh_tri4_load gives
 * them), its corners read as `read` says where a lane is redone. */
KCC_HOT int ray_tri4_test(const kcc_ray_pre *r, const kcc_mesh *mesh, uint32_t s0,
                          const uint32_t *slots, uint32_t n, kcc_vertex_read read, float max_t,
                          float out_t[4], const __m128 va[3], const __m128 vb[3],
                          const __m128 vc[3])
{
    const int kx = r->kx, ky = r->ky, kz = r->kz;
    const __m128 ox = _mm_set1_ps(r->org[kx]), oy = _mm_set1_ps(r->org[ky]);
    const __m128 oz = _mm_set1_ps(r->org[kz]);
    const __m128 sx = _mm_set1_ps(r->sx), sy = _mm_set1_ps(r->sy), sz = _mm_set1_ps(r->sz);
    __m128 Akx = _mm_sub_ps(va[kx], ox), Aky = _mm_sub_ps(va[ky], oy), Akz = _mm_sub_ps(va[kz], oz);
    __m128 Bkx = _mm_sub_ps(vb[kx], ox), Bky = _mm_sub_ps(vb[ky], oy), Bkz = _mm_sub_ps(vb[kz], oz);
    __m128 Ckx = _mm_sub_ps(vc[kx], ox), Cky = _mm_sub_ps(vc[ky], oy), Ckz = _mm_sub_ps(vc[kz], oz);
    __m128 Ax = _mm_sub_ps(Akx, _mm_mul_ps(sx, Akz)), Ay = _mm_sub_ps(Aky, _mm_mul_ps(sy, Akz));
    __m128 Bx = _mm_sub_ps(Bkx, _mm_mul_ps(sx, Bkz)), By = _mm_sub_ps(Bky, _mm_mul_ps(sy, Bkz));
    __m128 Cx = _mm_sub_ps(Ckx, _mm_mul_ps(sx, Ckz)), Cy = _mm_sub_ps(Cky, _mm_mul_ps(sy, Ckz));
    __m128 U = _mm_sub_ps(_mm_mul_ps(Cx, By), _mm_mul_ps(Cy, Bx));
    __m128 V = _mm_sub_ps(_mm_mul_ps(Ax, Cy), _mm_mul_ps(Ay, Cx));
    __m128 W = _mm_sub_ps(_mm_mul_ps(Bx, Ay), _mm_mul_ps(By, Ax));
    const __m128 zero = _mm_setzero_ps();
    const int active = (1 << n) - 1;
    int zmask = kcc_edge_tiny4(U, V, W) & active;
    __m128 neg = _mm_or_ps(_mm_or_ps(_mm_cmplt_ps(U, zero), _mm_cmplt_ps(V, zero)), _mm_cmplt_ps(W, zero));
    __m128 pos = _mm_or_ps(_mm_or_ps(_mm_cmpgt_ps(U, zero), _mm_cmpgt_ps(V, zero)), _mm_cmpgt_ps(W, zero));
    __m128 det = _mm_add_ps(_mm_add_ps(U, V), W);
    __m128 T = _mm_add_ps(_mm_add_ps(_mm_mul_ps(U, _mm_mul_ps(sz, Akz)), _mm_mul_ps(V, _mm_mul_ps(sz, Bkz))),
                          _mm_mul_ps(W, _mm_mul_ps(sz, Ckz)));
    __m128 tv = _mm_div_ps(T, det);
    __m128 ok = _mm_andnot_ps(_mm_and_ps(neg, pos), _mm_cmpneq_ps(det, zero));
    ok = _mm_and_ps(ok, _mm_and_ps(_mm_cmpge_ps(tv, zero), _mm_cmple_ps(tv, _mm_set1_ps(max_t))));
    _mm_storeu_ps(out_t, tv);
    int mask = _mm_movemask_ps(ok) & active & ~zmask;
    while (zmask) {
        int l = zmask & -zmask;
        int i = (l >> 1) - (l >> 3);
        zmask &= zmask - 1;
        float buf[3][3];
        const float *v[3];
        kcc_mesh_corners(mesh, slots ? slots[i] : s0 + (uint32_t)i, read, buf, v);
        if (ray_tri(r, v[0], v[1], v[2], max_t, &out_t[i]))
            mask |= l;
    }
    return mask;
}

/* Up to four triangles of a mesh of float vertices at once: slots s0 .. s0 + n - 1, or slots[0 ..
 * n - 1] when slots is not NULL. Lane by lane the same float operations in the same order as
 * ray_tri (so bit-identical results); a lane with a zero or tiny edge function is redone by ray_tri
 * (decided in double). Returns the mask of hit lanes; out_t holds their t. A function of its own
 * beside ray_tri4_tables: with the coding as a parameter gcc's clone for the leaves' slot runs
 * took both loads, 7 instructions more a call on the float walk. */
static inline int ray_tri4(const kcc_ray_pre *r, const kcc_mesh *mesh, uint32_t s0,
                           const uint32_t *slots, uint32_t n, float max_t, float out_t[4])
{
    __m128 va[3], vb[3], vc[3];
    if (slots)
        kcc_mesh_tri4_load_slots(mesh, slots, n, KCC_READ_FLOATS, va, vb, vc);
    else
        kcc_mesh_tri4_load(mesh, s0, n, KCC_READ_FLOATS, va, vb, vc);
    return ray_tri4_test(r, mesh, s0, slots, n, KCC_READ_FLOATS, max_t, out_t, va, vb, vc);
}

/* ray_tri4 on a mesh with vertex tables. */
static inline int ray_tri4_tables(const kcc_ray_pre *r, const kcc_mesh *mesh, uint32_t s0,
                                  const uint32_t *slots, uint32_t n, float max_t, float out_t[4])
{
    __m128 va[3], vb[3], vc[3];
    if (slots)
        kcc_mesh_tri4_load_slots(mesh, slots, n, KCC_READ_TABLES, va, vb, vc);
    else
        kcc_mesh_tri4_load(mesh, s0, n, KCC_READ_TABLES, va, vb, vc);
    return ray_tri4_test(r, mesh, s0, slots, n, KCC_READ_TABLES, max_t, out_t, va, vb, vc);
}
#endif

static bool finite3(const float v[3])
{
    return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]);
}

static bool ray_args_valid(const float origin[3], const float dir[3], float max_t)
{
    if (!finite3(origin) || !finite3(dir))
        return false;
    if (dir[0] == 0.0f && dir[1] == 0.0f && dir[2] == 0.0f)
        return false;
    return max_t >= 0.0f; /* false for NaN; +inf allowed (unbounded) */
}

/* The reported distance of a hit the watertight test accepted. The watertight test decides hit or
 * miss exactly, but its t = T / det carries the rounding of products of vertex coordinates: for a
 * large triangle and a short ray that is ~1e-7 of the triangle's size, not of t (1e-4 relative
 * error at t = 0.09 m on a 50 m floor). The plane intersection in double, t = n.(a - o) / n.d
 * with n = (b - a) x (c - a), is accurate to double rounding; it is clamped to [0, max_t], the
 * range the watertight test accepted. */
static inline float refine_t(const float a[3], const float b[3], const float c[3],
                             const float o[3], const float d[3], float woop_t, float max_t)
{
    double e0[3] = {(double)b[0] - a[0], (double)b[1] - a[1], (double)b[2] - a[2]};
    double e1[3] = {(double)c[0] - a[0], (double)c[1] - a[1], (double)c[2] - a[2]};
    double n[3] = {e0[1] * e1[2] - e0[2] * e1[1], e0[2] * e1[0] - e0[0] * e1[2],
                   e0[0] * e1[1] - e0[1] * e1[0]};
    double den = n[0] * d[0] + n[1] * d[1] + n[2] * d[2];
    if (!(den != 0.0))
        return woop_t;
    double t = (n[0] * ((double)a[0] - o[0]) + n[1] * ((double)a[1] - o[1]) +
                n[2] * ((double)a[2] - o[2])) / den;
    if (!(t > 0.0))
        return 0.0f;
    if (!(t < (double)max_t))
        return max_t;
    return (float)t;
}

bool kcc_tri_raycast(const vec3 a, const vec3 b, const vec3 c, const vec3 origin, const vec3 dir,
                     float max_t, float *out_t)
{
    if (!a || !b || !c || !origin || !dir || !ray_args_valid(origin, dir, max_t))
        return false;
    if (!finite3(a) || !finite3(b) || !finite3(c) || kcc_tri_is_degenerate(a, b, c))
        return false;
    kcc_ray_pre r;
    ray_setup(origin, dir, &r);
    float t;
    if (!ray_tri(&r, a, b, c, max_t, &t))
        return false;
    if (out_t)
        *out_t = refine_t(a, b, c, origin, dir, t, max_t);
    return true;
}

/* ------------------------------------------------------------------------------------------------
 * Mesh ray cast: kcc_walk_nearest with the best hit so far as its limit. */

/* Keeps the hit of slot s at watertight distance woop_t if it is the best so far: its accurate
 * distance (refine_t, as kcc_tri_raycast reports it) is the smallest, equal distances going to the
 * lowest input index. */
KCC_HOT void ray_offer(kcc_ray_walk *w, uint32_t s, kcc_vertex_read read, float woop_t)
{
    float buf[3][3];
    const float *v[3];
    kcc_mesh_corners(w->mesh, s, read, buf, v);
    float tr = refine_t(v[0], v[1], v[2], w->origin, w->dir, woop_t, w->max_t);
    uint32_t id = kcc_mesh_tri_id(w->mesh, s);
    if (tr < w->best || (tr == w->best && id < w->best_id)) {
        w->best = tr;
        w->best_slot = s;
        w->best_id = id;
    }
}

/* Every triangle of slots first .. first + count - 1 (or, slots not NULL, slots[0 .. count - 1])
 * that the watertight test accepts within [0, max_t] is offered. Returns the best distance. */
KCC_HOT float ray_run(kcc_ray_walk *w, uint32_t first, const uint32_t *slots, uint32_t count,
                      kcc_vertex_read read)
{
#if KCC_SSE
    for (uint32_t s = first, end = first + count; s < end; s += 4) {
        const uint32_t n = end - s < 4 ? end - s : 4;
        const uint32_t *run = slots ? slots + (s - first) : NULL;
        float th[4];
        int hits = read == KCC_READ_TABLES
                       ? ray_tri4_tables(&w->pre, w->mesh, s, run, n, w->max_t, th)
                       : ray_tri4(&w->pre, w->mesh, s, run, n, w->max_t, th);
        for (uint32_t i = 0; hits != 0; ++i, hits >>= 1)
            if (hits & 1)
                ray_offer(w, run ? run[i] : s + i, read, th[i]);
    }
#else
    for (uint32_t i = 0; i < count; ++i) {
        const uint32_t s = slots ? slots[i] : first + i;
        float buf[3][3];
        const float *v[3];
        kcc_mesh_corners(w->mesh, s, read, buf, v);
        float th;
        if (ray_tri(&w->pre, v[0], v[1], v[2], w->max_t, &th))
            ray_offer(w, s, read, th);
    }
#endif
    return w->best;
}

/* The mesh ray cast's leaf visit: ray_run over the leaf's slots, of float vertices (the tree
 * meshes without tables, a heightfield's view) or of vertex tables. */
KCC_HOT float ray_leaf(void *ctx, uint32_t first, uint32_t count)
{
    return ray_run(ctx, first, NULL, count, KCC_READ_FLOATS);
}

KCC_HOT float ray_leaf_tables(void *ctx, uint32_t first, uint32_t count)
{
    return ray_run(ctx, first, NULL, count, KCC_READ_TABLES);
}

/* The walk of a mesh with vertex tables, out of line: the float walk stays as it is without it. */
KCC_TABLES_WALK void ray_walk_tables(const kcc_mesh *mesh, const kcc_pray *slab, float limit,
                                     kcc_ray_walk *w)
{
    kcc_mesh_walk_nearest(mesh, slab, limit, ray_leaf_tables, w);
}

/* The hit record of the best triangle t: its normal from the cross product in double. */
static void ray_hit_write(const kcc_ray_walk *w, const kcc_tri *t, kcc_ray_hit *hit)
{
    float e0[3] = {t->v[1][0] - t->v[0][0], t->v[1][1] - t->v[0][1], t->v[1][2] - t->v[0][2]};
    float e1[3] = {t->v[2][0] - t->v[0][0], t->v[2][1] - t->v[0][1], t->v[2][2] - t->v[0][2]};
    double n[3] = {(double)e0[1] * e1[2] - (double)e0[2] * e1[1],
                   (double)e0[2] * e1[0] - (double)e0[0] * e1[2],
                   (double)e0[0] * e1[1] - (double)e0[1] * e1[0]};
    double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    hit->t = w->best;
    for (int k = 0; k < 3; ++k) {
        hit->point[k] = w->origin[k] + w->best * w->dir[k];
        hit->normal[k] = (float)(n[k] / len);
    }
    hit->triangle = w->best_id;
}

void kcc_ray_walk_init(kcc_ray_walk *w, const kcc_mesh *mesh, const float origin[3],
                       const float dir[3], float max_t)
{
    *w = (kcc_ray_walk){.mesh = mesh, .origin = origin, .dir = dir, .max_t = max_t, .best = max_t,
                        .best_slot = UINT32_MAX, .best_id = UINT32_MAX};
    ray_setup(origin, dir, &w->pre);
}

/* A run of a mesh with vertex tables (the world's static-tree entries), out of line: the float
 * runs of kcc_ray_walk_leaf and kcc_ray_walk_slots stay as they are without it. */
KCC_TABLES_WALK float ray_run_tables(kcc_ray_walk *w, uint32_t first, const uint32_t *slots,
                                     uint32_t count)
{
    return ray_run(w, first, slots, count, KCC_READ_TABLES);
}

float kcc_ray_walk_leaf(kcc_ray_walk *w, uint32_t first, uint32_t count)
{
    if (w->mesh->tables)
        return ray_run_tables(w, first, NULL, count);
    return ray_leaf(w, first, count);
}

float kcc_ray_walk_slots(kcc_ray_walk *w, const uint32_t *slots, uint32_t count)
{
    if (w->mesh->tables)
        return ray_run_tables(w, 0, slots, count);
    return ray_run(w, 0, slots, count, KCC_READ_FLOATS);
}

void kcc_ray_walk_hit(const kcc_ray_walk *w, kcc_ray_hit *hit)
{
    kcc_tri best;
    kcc_mesh_tri(w->mesh, w->best_slot, &best);
    ray_hit_write(w, &best, hit);
}

bool kcc_mesh_raycast_internal(const kcc_mesh *mesh, const float origin[3], const float dir[3],
                               float max_t, float limit, kcc_ray_hit *hit)
{
    if (mesh->quad_count == 0 && !mesh->hf)
        return false;
    kcc_ray_walk w;
    kcc_ray_walk_init(&w, mesh, origin, dir, max_t);
    w.best = limit;
    /* The triangle test, in float, may count a triangle the ray passes by a hair: one whose face
       the ray lies on (its other components underflow beside its largest: fuzz_heightfield corpus
       regress-hf-ray-along-a-cell-face.bin), or one beside the ray along an axis whose offset the
       shear x - sx z rounds away at the size of the other axes (cells 1.3e-33 m wide on a grid
       385 km long: hf_ray_beside_cells_below_float_resolution_hits_as_the_triangle_test_does).
       So the slab grows on every axis by 2^-20 of the largest coordinate of any axis, and every
       triangle the test may count is tested, in the tree's leaves as in a heightfield's cells. */
    float size = 0.0f;
    for (int k = 0; k < 3; ++k)
        size = kcc_maxf(size, fabsf(origin[k]) +
                                  kcc_maxf(fabsf(mesh->bounds[0][k]), fabsf(mesh->bounds[1][k])));
    const float grow[3] = {0x1p-20f * size, 0x1p-20f * size, 0x1p-20f * size};
    kcc_pray slab;
    kcc_pray_setup(&slab, origin, dir, grow);
    if (mesh->hf) { /* the visitor reads the heightfield's triangles batch by batch from the view */
        kcc_hf_view view;
        w.mesh = kcc_hf_view_init(&view, mesh);
        kcc_hf_walk_nearest(mesh, &view, &slab, limit, ray_leaf, &w);
    } else if (mesh->tables) {
        ray_walk_tables(mesh, &slab, limit, &w);
    } else {
        kcc_mesh_walk_nearest(mesh, &slab, limit, ray_leaf, &w);
    }
    if (w.best_slot == UINT32_MAX)
        return false;
    if (mesh->hf) {
        kcc_tri best;
        kcc_hf_triangle(mesh, w.best_id, &best);
        ray_hit_write(&w, &best, hit);
    } else {
        w.mesh = mesh;
        kcc_ray_walk_hit(&w, hit);
    }
    return true;
}

bool kcc_mesh_raycast(const kcc_mesh *mesh, const vec3 origin, const vec3 dir, float max_t,
                      kcc_ray_hit *hit)
{
    KCC_ISA_DISPATCH(mesh_raycast, mesh, origin, dir, max_t, hit);
    if (!mesh || !origin || !dir || !hit || !ray_args_valid(origin, dir, max_t))
        return false;
    return kcc_mesh_raycast_internal(mesh, origin, dir, max_t, max_t, hit);
}
