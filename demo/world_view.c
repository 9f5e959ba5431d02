/* demo/world_view.c: a world trace (kcc-trace 2, docs/traces.md) as the viewer and the headless
 * picture show it (demo/world_view.h): the library's parse (kcc_world_trace_load) and its recorded
 * frames (kcc_world_trace_frames) laid out as one row of body poses and character centres a step,
 * and each body's level read for drawing. */
#include "world_view.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Level l's triangles for drawing: OBJ and generated levels (a heightfield level stays empty, with a
 * note in err: kcc-replay replays it). */
static void read_level(const kcc_world_trace *t, uint32_t l, demo_world_view *v, char *err, size_t err_size)
{
    kcc_trace_level_kind kind;
    const char *spec = kcc_world_trace_level_spec(t, l, &kind);
    char lerr[256];
    kcc_status s;
    if (kind == KCC_TRACE_LEVEL_OBJ) {
        snprintf(v->level_names[l], KCC_TRACE_LEVEL_MAX, "obj %s", spec);
        s = kcc_level_load_obj_geometry(spec, &v->levels[l], lerr, sizeof(lerr));
    } else if (kind == KCC_TRACE_LEVEL_GEN) {
        snprintf(v->level_names[l], KCC_TRACE_LEVEL_MAX, "gen %s", spec);
        s = kcc_level_generate(spec, &v->levels[l], lerr, sizeof(lerr));
    } else {
        snprintf(v->level_names[l], KCC_TRACE_LEVEL_MAX, "hf %s", spec);
        snprintf(lerr, sizeof(lerr), "a heightfield level is not drawn here (kcc-replay replays the trace)");
        s = KCC_ERR_PARSE;
    }
    if (s != KCC_OK)
        snprintf(err, err_size, "level %u: %s", l + 1, lerr);
}

/* kcc_world_trace_frames' callback: the frame into its row; a live character's half extents kept. */
static void store_frame(const kcc_world_trace_frame *f, void *user)
{
    demo_world_view *v = user;
    memcpy(v->poses + (size_t)f->step * v->body_count * 7, f->poses, sizeof(float) * 7 * v->body_count);
    memcpy(v->centres + (size_t)f->step * v->character_count * 3, f->centres,
           sizeof(float) * 3 * v->character_count);
    memcpy(v->flags + (size_t)f->step * v->character_count, f->flags, sizeof(uint32_t) * v->character_count);
    for (uint32_t c = 0; c < v->character_count; ++c)
        if (!isnan(f->centres[c][0]))
            memcpy(v->half_extents + 3 * (size_t)c, f->half_extents[c], sizeof(float) * 3);
}

static kcc_status allocate(demo_world_view *v)
{
    const size_t rows = (size_t)v->steps + 1;
    v->levels = calloc(v->level_count + 1, sizeof(kcc_level));
    v->level_names = calloc(v->level_count + 1, sizeof(*v->level_names));
    v->bodies = calloc(v->body_count + 1, sizeof(demo_world_body));
    v->poses = malloc(sizeof(float) * 7 * (rows * v->body_count + 1));
    v->centres = malloc(sizeof(float) * 3 * (rows * v->character_count + 1));
    v->flags = calloc(rows * v->character_count + 1, sizeof(uint32_t));
    v->half_extents = calloc(3 * (size_t)v->character_count + 1, sizeof(float));
    return v->levels && v->level_names && v->bodies && v->poses && v->centres && v->flags && v->half_extents
               ? KCC_OK
               : KCC_ERR_OUT_OF_MEMORY;
}

/* The counts, the rows and the bodies of a parsed trace. */
static kcc_status fill(demo_world_view *v, const kcc_world_trace *t)
{
    v->steps = kcc_world_trace_step_count(t);
    kcc_world_trace_counts(t, &v->level_count, &v->body_count, &v->character_count);
    kcc_status s = allocate(v);
    if (s == KCC_OK)
        s = kcc_world_trace_frames(t, store_frame, v);
    for (uint32_t b = 0; s == KCC_OK && b < v->body_count; ++b)
        kcc_world_trace_body(t, b, &v->bodies[b].level, &v->bodies[b].kinematic, &v->bodies[b].sensor);
    return s;
}

kcc_status demo_world_view_load(const char *path, demo_world_view *out, char *err, size_t err_size)
{
    memset(out, 0, sizeof(*out));
    if (err_size)
        err[0] = '\0';
    kcc_world_trace *t = NULL;
    kcc_status s = kcc_world_trace_load(path, &t, err, err_size);
    if (s == KCC_OK)
        s = fill(out, t);
    for (uint32_t l = 0; s == KCC_OK && l < out->level_count; ++l)
        read_level(t, l, out, err, err_size);
    kcc_world_trace_free(t);
    if (s != KCC_OK)
        demo_world_view_free(out);
    return s;
}

void demo_world_view_free(demo_world_view *v)
{
    for (uint32_t l = 0; v->levels && l < v->level_count; ++l)
        kcc_level_free(&v->levels[l]);
    free(v->levels);
    free(v->level_names);
    free(v->bodies);
    free(v->poses);
    free(v->centres);
    free(v->flags);
    free(v->half_extents);
    memset(v, 0, sizeof(*v));
}

const float *demo_world_view_pose(const demo_world_view *v, uint32_t step, uint32_t body)
{
    if (step > v->steps || body >= v->body_count)
        return NULL;
    const float *p = v->poses + ((size_t)step * v->body_count + body) * 7;
    return isnan(p[0]) ? NULL : p;
}

const float *demo_world_view_centre(const demo_world_view *v, uint32_t step, uint32_t character)
{
    if (step > v->steps || character >= v->character_count)
        return NULL;
    const float *p = v->centres + ((size_t)step * v->character_count + character) * 3;
    return isnan(p[0]) ? NULL : p;
}

uint32_t demo_world_view_level_body(const demo_world_view *v)
{
    uint32_t best = UINT32_MAX, most = 0;
    for (uint32_t b = 0; b < v->body_count; ++b) {
        const demo_world_body *body = &v->bodies[b];
        uint32_t n = v->levels[body->level].triangle_count;
        if (!body->kinematic && !body->sensor && n > most) {
            most = n;
            best = b;
        }
    }
    return best;
}

void demo_world_view_place(const demo_world_view *v, uint32_t level, const float pose[7], float *out)
{
    const kcc_level *lv = &v->levels[level];
    const float x = pose[3], y = pose[4], z = pose[5], w = pose[6];
    const float len = sqrtf(x * x + y * y + z * z + w * w);
    const float qx = len > 0.0f ? x / len : 0.0f, qy = len > 0.0f ? y / len : 0.0f,
                qz = len > 0.0f ? z / len : 0.0f, qw = len > 0.0f ? w / len : 1.0f;
    for (uint32_t i = 0; i < lv->vertex_count; ++i) {
        const float *p = lv->positions + 3 * (size_t)i;
        /* p + 2 w (q x p) + 2 q x (q x p) */
        float tx = 2.0f * (qy * p[2] - qz * p[1]), ty = 2.0f * (qz * p[0] - qx * p[2]),
              tz = 2.0f * (qx * p[1] - qy * p[0]);
        out[3 * i + 0] = p[0] + qw * tx + (qy * tz - qz * ty) + pose[0];
        out[3 * i + 1] = p[1] + qw * ty + (qz * tx - qx * tz) + pose[1];
        out[3 * i + 2] = p[2] + qw * tz + (qx * ty - qy * tx) + pose[2];
    }
}

bool demo_world_view_place_body(const demo_world_view *v, uint32_t step, uint32_t body, float *out,
                                float box[2][3])
{
    const float *pose = demo_world_view_pose(v, step, body);
    const kcc_level *lv = body < v->body_count ? &v->levels[v->bodies[body].level] : NULL;
    if (!pose || !lv || lv->vertex_count == 0)
        return false;
    demo_world_view_place(v, v->bodies[body].level, pose, out);
    for (int k = 0; k < 3; ++k) {
        box[0][k] = INFINITY;
        box[1][k] = -INFINITY;
    }
    for (uint32_t i = 0; i < lv->vertex_count; ++i)
        for (int k = 0; k < 3; ++k) {
            box[0][k] = fminf(box[0][k], out[3 * i + k]);
            box[1][k] = fmaxf(box[1][k], out[3 * i + k]);
        }
    return true;
}
