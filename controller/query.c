/* query.c: the controller's local triangle cache: one bounds query on the tree per move gathers the
 * triangles near the character, then rays, overlaps and sweeps run on that short list with a bounds
 * test first. When the neighbourhood overflows the cache, each probe queries the tree instead. */
#include <math.h>
#include <string.h>
#include <cglm/cglm.h>

#include "controller_internal.h"

static bool tri_setup(kcc_local_tri *t, const vec3 v[3], uint32_t index)
{
    vec3 e1, e2, n;
    glm_vec3_sub((float *)v[1], (float *)v[0], e1);
    glm_vec3_sub((float *)v[2], (float *)v[0], e2);
    glm_vec3_cross(e1, e2, n);
    float len = sqrtf(glm_vec3_dot(n, n));
    if (!(len > 0.0f) || !isfinite(len))
        return false; /* degenerate: never part of any answer */
    for (int i = 0; i < 3; ++i) {
        glm_vec3_copy((float *)v[i], t->v[i]);
        t->lo[i] = kcc_minf(v[0][i], kcc_minf(v[1][i], v[2][i]));
        t->hi[i] = kcc_maxf(v[0][i], kcc_maxf(v[1][i], v[2][i]));
        t->n[i] = n[i] / len;
    }
    t->d = glm_vec3_dot(t->n, t->v[0]);
    t->index = index;
    return true;
}

void kcc_local_gather(kcc_local *L, const kcc_mesh *mesh, const vec3 region[2])
{
    uint32_t ids[KCC_LOCAL_MAX];
    L->mesh = mesh;
    L->count = 0;
    uint32_t total = kcc_mesh_query_bounds(mesh, region, ids, KCC_LOCAL_MAX);
    L->overflow = total > KCC_LOCAL_MAX;
    if (L->overflow)
        return;
    for (uint32_t i = 0; i < total; ++i) {
        vec3 v[3];
        if (kcc_mesh_triangle(mesh, ids[i], v) && tri_setup(&L->tris[L->count], (const vec3 *)v, ids[i]))
            L->count++;
    }
}

static inline bool bounds_overlap(const vec3 alo, const vec3 ahi, const vec3 blo, const vec3 bhi)
{
    return alo[0] <= bhi[0] && ahi[0] >= blo[0] && alo[1] <= bhi[1] && ahi[1] >= blo[1] &&
           alo[2] <= bhi[2] && ahi[2] >= blo[2];
}

/* Iterates the candidates for a query whose reach is `region`: the cached list, or in overflow mode
 * the tree's answer for that region (in a scratch list of the same size). Returns false when even
 * that overflows, so the caller must fall back to a whole-mesh query. */
typedef struct cand_iter {
    uint32_t             count;
    const kcc_local_tri *list;
} cand_iter;

static bool cand_begin(cand_iter *it, const kcc_local *L, const vec3 region[2], kcc_local *scratch)
{
    if (!L->overflow) {
        it->list = L->tris;
        it->count = L->count;
        return true;
    }
    kcc_local_gather(scratch, L->mesh, region);
    it->list = scratch->tris;
    it->count = scratch->count;
    return !scratch->overflow;
}

/* Edge function of the edge (p, q) seen from the ray: zero means the ray passes exactly through the
 * edge's line, where the float value may have the wrong sign: recompute it in double, where the
 * products of these float differences are exact. */
static inline float edge_fn(float px, float py, float qx, float qy)
{
    float e = px * qy - py * qx;
    if (e == 0.0f)
        e = (float)((double)px * (double)qy - (double)py * (double)qx);
    return e;
}

bool kcc_local_raycast_down(const kcc_local *L, const vec3 origin, int u, float max_t,
                            kcc_ray_hit *out)
{
    vec3 dir = {0.0f, 0.0f, 0.0f};
    dir[u] = -1.0f;
    if (L->overflow)
        return kcc_mesh_raycast(L->mesh, origin, dir, max_t, out);
    const int kx = u == 0 ? 1 : 0, ky = u == 2 ? 1 : 2;
    const float ox = origin[kx], oy = origin[ky], oz = origin[u];
    bool found = false;
    float best = max_t;
    uint32_t best_i = 0;
    for (uint32_t i = 0; i < L->count; ++i) {
        const kcc_local_tri *t = &L->tris[i];
        if (ox < t->lo[kx] || ox > t->hi[kx] || oy < t->lo[ky] || oy > t->hi[ky] ||
            t->lo[u] > oz || t->hi[u] < oz - best)
            continue;
        /* vertices relative to the origin, the same floats for every triangle sharing them */
        const float ax = t->v[0][kx] - ox, ay = t->v[0][ky] - oy;
        const float bx = t->v[1][kx] - ox, by = t->v[1][ky] - oy;
        const float cx = t->v[2][kx] - ox, cy = t->v[2][ky] - oy;
        const float e0 = edge_fn(bx, by, cx, cy);
        const float e1 = edge_fn(cx, cy, ax, ay);
        const float e2 = edge_fn(ax, ay, bx, by);
        if ((e0 < 0.0f || e1 < 0.0f || e2 < 0.0f) && (e0 > 0.0f || e1 > 0.0f || e2 > 0.0f))
            continue;
        const float det = e0 + e1 + e2;
        if (det == 0.0f)
            continue; /* the triangle is edge-on to the ray */
        /* height of the hit relative to the origin, interpolated; t = -height */
        const float hz = (e0 * (t->v[0][u] - oz) + e1 * (t->v[1][u] - oz) + e2 * (t->v[2][u] - oz)) / det;
        const float th = -hz;
        if (!(th >= 0.0f && th <= best))
            continue;
        if (!found || th < best || (th == best && t->index < L->tris[best_i].index)) {
            found = true;
            best = th;
            best_i = i;
        }
    }
    if (!found)
        return false;
    const kcc_local_tri *t = &L->tris[best_i];
    out->t = best;
    out->triangle = t->index;
    glm_vec3_copy((float *)t->n, out->normal);
    glm_vec3_copy((float *)origin, out->point);
    out->point[u] -= best;
    return true;
}

bool kcc_local_overlaps(const kcc_local *L, const vec3 box[2])
{
    if (L->overflow)
        return kcc_mesh_overlap_aabb(L->mesh, box, NULL, 0) > 0;
    for (uint32_t i = 0; i < L->count; ++i) {
        const kcc_local_tri *t = &L->tris[i];
        if (bounds_overlap(box[0], box[1], t->lo, t->hi) &&
            kcc_tri_overlap_aabb(t->v[0], t->v[1], t->v[2], box))
            return true;
    }
    return false;
}

/* False when the box, anywhere along its sweep, stays clear of the triangle's plane by more than a
 * hair: then the exact test cannot report a contact. Floors under a box walking over them and
 * walls beside it are dropped here, in float, before the exact swept test. */
static inline bool plane_may_touch(const kcc_local_tri *t, const vec3 ctr, const vec3 half,
                                   const vec3 delta)
{
    float r = half[0] * fabsf(t->n[0]) + half[1] * fabsf(t->n[1]) + half[2] * fabsf(t->n[2]);
    float s0 = glm_vec3_dot((float *)t->n, (float *)ctr) - t->d;
    float s1 = s0 + glm_vec3_dot((float *)t->n, (float *)delta);
    float margin = r * 1e-5f + 1e-6f * (fabsf(t->d) + 1.0f);
    return !(kcc_minf(s0, s1) > r + margin || kcc_maxf(s0, s1) < -r - margin);
}

bool kcc_local_sweep(const kcc_local *L, const vec3 box[2], const vec3 delta, float t_slop,
                     kcc_contacts *out)
{
    vec3 region[2], ctr, half;
    for (int i = 0; i < 3; ++i) {
        region[0][i] = box[0][i] + kcc_minf(delta[i], 0.0f);
        region[1][i] = box[1][i] + kcc_maxf(delta[i], 0.0f);
        ctr[i] = 0.5f * (box[0][i] + box[1][i]);
        half[i] = 0.5f * (box[1][i] - box[0][i]);
    }
    kcc_local scratch;
    cand_iter it;
    out->count = 0;
    out->t = 2.0f;
    out->start_overlap = false;
    if (!cand_begin(&it, L, (const vec3 *)region, &scratch)) {
        kcc_sweep_hit h;
        if (!kcc_mesh_sweep_aabb(L->mesh, box, delta, &h))
            return false;
        out->t = h.t;
        out->count = 1;
        out->start_overlap = h.start_overlap;
        glm_vec3_copy(h.normal, out->normal[0]);
        out->triangle[0] = h.triangle;
        return true;
    }
    /* One pass: keep every contact no later than the earliest so far plus the slop; when a
     * strictly earlier one arrives, drop those that fell behind. */
    float th_of[KCC_MAX_CONTACTS];
    for (uint32_t i = 0; i < it.count; ++i) {
        const kcc_local_tri *t = &it.list[i];
        if (!bounds_overlap(region[0], region[1], t->lo, t->hi) || !plane_may_touch(t, ctr, half, delta))
            continue;
        float th;
        vec3 n;
        bool start;
        if (!kcc_tri_sweep_aabb(t->v[0], t->v[1], t->v[2], box, delta, &th, n, &start) ||
            th > out->t + t_slop)
            continue;
        if (th < out->t) {
            out->t = th;
            uint32_t w = 0;
            for (uint32_t k = 0; k < out->count; ++k)
                if (th_of[k] <= th + t_slop) {
                    th_of[w] = th_of[k];
                    glm_vec3_copy(out->normal[k], out->normal[w]);
                    out->triangle[w++] = out->triangle[k];
                }
            out->count = w;
            out->start_overlap = start;
        }
        if (out->count < KCC_MAX_CONTACTS) {
            th_of[out->count] = th;
            glm_vec3_copy(n, out->normal[out->count]);
            out->triangle[out->count++] = t->index;
        }
    }
    return out->count > 0;
}

/* Least-penetration axis of box against one triangle, by the 13 separating axes: the shortest
 * translation of the box that separates it from the triangle. False when they do not overlap. */
static bool tri_mtd(const vec3 a, const vec3 b, const vec3 c, const vec3 box[2], int u,
                    float cos_floor, vec3 out_dir, float *out_depth)
{
    vec3 ctr, h, v[3], e[3];
    for (int i = 0; i < 3; ++i) {
        ctr[i] = 0.5f * (box[0][i] + box[1][i]);
        h[i] = 0.5f * (box[1][i] - box[0][i]);
    }
    glm_vec3_sub((float *)a, ctr, v[0]);
    glm_vec3_sub((float *)b, ctr, v[1]);
    glm_vec3_sub((float *)c, ctr, v[2]);
    glm_vec3_sub(v[1], v[0], e[0]);
    glm_vec3_sub(v[2], v[1], e[1]);
    glm_vec3_sub(v[0], v[2], e[2]);
    vec3 axes[13];
    int na = 0;
    for (int i = 0; i < 3; ++i) {
        glm_vec3_zero(axes[na]);
        axes[na++][i] = 1.0f;
    }
    glm_vec3_cross(e[0], e[1], axes[na++]);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            vec3 unit = {0.0f, 0.0f, 0.0f};
            unit[i] = 1.0f;
            glm_vec3_cross(unit, e[j], axes[na++]);
        }
    float best = INFINITY;
    for (int k = 0; k < na; ++k) {
        float len2 = glm_vec3_dot(axes[k], axes[k]);
        if (!(len2 > 1e-12f))
            continue;
        float inv = 1.0f / sqrtf(len2);
        vec3 ax;
        glm_vec3_scale(axes[k], inv, ax);
        float r = h[0] * fabsf(ax[0]) + h[1] * fabsf(ax[1]) + h[2] * fabsf(ax[2]);
        float p0 = glm_vec3_dot(v[0], ax), p1 = glm_vec3_dot(v[1], ax), p2 = glm_vec3_dot(v[2], ax);
        float pmin = kcc_minf(p0, kcc_minf(p1, p2)), pmax = kcc_maxf(p0, kcc_maxf(p1, p2));
        if (pmin > r || pmax < -r)
            return false;
        float dpos = pmax + r; /* push the box along +ax past the triangle */
        float dneg = r - pmin; /* push it along -ax */
        if (dpos < best) {
            best = dpos;
            glm_vec3_copy(ax, out_dir);
        }
        if (dneg < best) {
            best = dneg;
            glm_vec3_negate_to(ax, out_dir);
        }
    }
    if (!isfinite(best))
        return false;
    /* Ground-like triangles push straight up, never down and never sideways: sideways axes (an
     * edge of one triangle of a floor) or the short way down (a box sunk past half its height into
     * a thin floor) would fight the coplanar neighbours or drop the box through. The depth is the
     * height of the triangle's plane over the box's footprint (at most its highest vertex) above
     * the box bottom. */
    vec3 fn;
    glm_vec3_cross(e[0], e[1], fn);
    float fl = glm_vec3_norm(fn);
    if (fl > 0.0f && fabsf(fn[u]) >= cos_floor * fl) {
        const int kx = u == 0 ? 1 : 0, ky = u == 2 ? 1 : 2;
        float top = -INFINITY;
        for (int i = 0; i < 4; ++i) {
            float x = (i & 1) ? h[kx] : -h[kx], y = (i & 2) ? h[ky] : -h[ky];
            /* the plane through v[0]: fn . (p - v0) = 0, solved for the up coordinate */
            float z = v[0][u] - (fn[kx] * (x - v[0][kx]) + fn[ky] * (y - v[0][ky])) / fn[u];
            top = kcc_maxf(top, z);
        }
        top = kcc_minf(top, kcc_maxf(v[0][u], kcc_maxf(v[1][u], v[2][u])));
        glm_vec3_zero(out_dir);
        out_dir[u] = 1.0f;
        best = kcc_maxf(0.0f, top + h[u]);
    }
    *out_depth = best;
    return true;
}

bool kcc_local_penetration(const kcc_local *L, const vec3 box[2], int u, float cos_floor,
                           vec3 out_push)
{
    kcc_local scratch;
    cand_iter it;
    vec3 dirs[KCC_MAX_CONTACTS * 4];
    float depth[KCC_MAX_CONTACTS * 4];
    uint32_t n = 0;
    const uint32_t cap = KCC_MAX_CONTACTS * 4;
    if (cand_begin(&it, L, box, &scratch)) {
        for (uint32_t i = 0; i < it.count && n < cap; ++i) {
            const kcc_local_tri *t = &it.list[i];
            if (bounds_overlap(box[0], box[1], t->lo, t->hi) &&
                tri_mtd(t->v[0], t->v[1], t->v[2], box, u, cos_floor, dirs[n], &depth[n]))
                n++;
        }
    } else {
        uint32_t ids[KCC_MAX_CONTACTS * 4];
        uint32_t total = kcc_mesh_overlap_aabb(L->mesh, box, ids, cap);
        for (uint32_t i = 0; i < total && i < cap; ++i) {
            vec3 v[3];
            if (kcc_mesh_triangle(L->mesh, ids[i], v) && tri_mtd(v[0], v[1], v[2], box, u, cos_floor, dirs[n], &depth[n]))
                n++;
        }
    }
    if (n == 0)
        return false;
    /* Each triangle asks push . dir >= depth: satisfy the planes in turn a few times
     * (Gauss-Seidel); near-parallel requests merge instead of adding up. */
    glm_vec3_zero(out_push);
    for (int pass = 0; pass < 4; ++pass)
        for (uint32_t i = 0; i < n; ++i) {
            float s = depth[i] - glm_vec3_dot(out_push, dirs[i]);
            if (s > 0.0f)
                glm_vec3_muladds(dirs[i], s, out_push);
        }
    return true;
}
