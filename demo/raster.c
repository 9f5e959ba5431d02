/* demo/raster.c: the software renderer of the headless demo: orthographic projection, edge-function
 * triangle fill with a depth buffer, flat Lambert shading, thick 3D lines, text from the 6x10 font,
 * and PNG output through libpng. Owns nothing but the image buffers it allocates. */
#include "raster.h"
#include "font6x10.h"

#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

kcc_status raster_image_init(raster_image *img, uint32_t width, uint32_t height, const uint8_t bg[3])
{
    if (!img || !bg)
        return KCC_ERR_NULL_ARGUMENT;
    if (width < 1 || height < 1 || width > 16384 || height > 16384)
        return KCC_ERR_BAD_DESC;
    size_t n = (size_t)width * height;
    uint8_t *rgb = malloc(n * 3);
    float *depth = malloc(n * sizeof(float));
    if (!rgb || !depth) {
        free(rgb);
        free(depth);
        return KCC_ERR_OUT_OF_MEMORY;
    }
    for (size_t i = 0; i < n; ++i) {
        memcpy(rgb + 3 * i, bg, 3);
        depth[i] = INFINITY;
    }
    img->width = width;
    img->height = height;
    img->rgb = rgb;
    img->depth = depth;
    return KCC_OK;
}

void raster_image_free(raster_image *img)
{
    if (!img)
        return;
    free(img->rgb);
    free(img->depth);
    memset(img, 0, sizeof(*img));
}

static float dot3f(const float a[3], const float b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

void raster_project(const raster_view *v, const float p[3], float out[3])
{
    float d[3] = {p[0] - v->centre[0], p[1] - v->centre[1], p[2] - v->centre[2]};
    out[0] = v->width * 0.5f + dot3f(d, v->right) * v->scale;
    out[1] = v->height * 0.5f - dot3f(d, v->up) * v->scale;
    out[2] = dot3f(d, v->forward);
}

void raster_view_frame(raster_view *v, const float bounds[2][3], float yaw_deg, float pitch_deg,
                       uint32_t width, uint32_t height, float margin)
{
    memset(v, 0, sizeof(*v));
    const float yaw = yaw_deg * 3.14159265f / 180.0f, pitch = pitch_deg * 3.14159265f / 180.0f;
    v->forward[0] = -sinf(yaw) * cosf(pitch);
    v->forward[1] = -sinf(pitch);
    v->forward[2] = -cosf(yaw) * cosf(pitch);
    v->right[0] = cosf(yaw);
    v->right[1] = 0.0f;
    v->right[2] = -sinf(yaw);
    /* up = right x forward */
    v->up[0] = v->right[1] * v->forward[2] - v->right[2] * v->forward[1];
    v->up[1] = v->right[2] * v->forward[0] - v->right[0] * v->forward[2];
    v->up[2] = v->right[0] * v->forward[1] - v->right[1] * v->forward[0];
    for (int i = 0; i < 3; ++i)
        v->centre[i] = 0.5f * (bounds[0][i] + bounds[1][i]);
    v->width = (float)width;
    v->height = (float)height;
    v->scale = 1.0f;
    v->cut_y = INFINITY;
    float lx = 0.35f, ly = 0.85f, lz = 0.4f, ll = sqrtf(lx * lx + ly * ly + lz * lz);
    v->light[0] = lx / ll;
    v->light[1] = ly / ll;
    v->light[2] = lz / ll;
    v->shade_lo = bounds[0][1];
    v->shade_hi = bounds[1][1];
    /* Extents of the projected corners at scale 1, then fit them into the image. */
    float lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
    for (int k = 0; k < 8; ++k) {
        float p[3] = {bounds[k & 1][0], bounds[(k >> 1) & 1][1], bounds[(k >> 2) & 1][2]};
        float d[3] = {p[0] - v->centre[0], p[1] - v->centre[1], p[2] - v->centre[2]};
        float x = dot3f(d, v->right), y = dot3f(d, v->up);
        lo[0] = fminf(lo[0], x);
        hi[0] = fmaxf(hi[0], x);
        lo[1] = fminf(lo[1], y);
        hi[1] = fmaxf(hi[1], y);
    }
    float ex = fmaxf(hi[0] - lo[0], 1e-3f), ey = fmaxf(hi[1] - lo[1], 1e-3f);
    float sx = ((float)width - 2.0f * margin) / ex, sy = ((float)height - 2.0f * margin) / ey;
    v->scale = fmaxf(fminf(sx, sy), 1e-3f);
    float mx = 0.5f * (lo[0] + hi[0]), my = 0.5f * (lo[1] + hi[1]);
    for (int i = 0; i < 3; ++i)
        v->centre[i] += mx * v->right[i] + my * v->up[i];
}

/* Floor colour ramp over the view's height range: deep blue, green, sand. */
static void floor_colour(const raster_view *v, float y, float out[3])
{
    float h = v->shade_hi > v->shade_lo ? (y - v->shade_lo) / (v->shade_hi - v->shade_lo) : 0.5f;
    h = fminf(fmaxf(h, 0.0f), 1.0f);
    static const float ramp[3][3] = {{0.32f, 0.46f, 0.68f}, {0.46f, 0.70f, 0.46f}, {0.92f, 0.80f, 0.52f}};
    int i = h < 0.5f ? 0 : 1;
    float t = h < 0.5f ? h * 2.0f : (h - 0.5f) * 2.0f;
    for (int k = 0; k < 3; ++k)
        out[k] = ramp[i][k] + t * (ramp[i + 1][k] - ramp[i][k]);
}

static float edge_fn(const float a[3], const float b[3], float px, float py)
{
    return (b[0] - a[0]) * (py - a[1]) - (b[1] - a[1]) * (px - a[0]);
}

/* Fills one triangle; floor != 0 colours by height and draws the 1 m grid, else uses base. */
static void fill(raster_image *img, const raster_view *v, const float *w[3], const float base[3], bool floor)
{
    float s[3][3];
    for (int i = 0; i < 3; ++i)
        raster_project(v, w[i], s[i]);
    float area = edge_fn(s[0], s[1], s[2][0], s[2][1]);
    if (!(fabsf(area) > 1e-9f))
        return;
    float e1[3] = {w[1][0] - w[0][0], w[1][1] - w[0][1], w[1][2] - w[0][2]};
    float e2[3] = {w[2][0] - w[0][0], w[2][1] - w[0][1], w[2][2] - w[0][2]};
    float n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
    float nl = sqrtf(dot3f(n, n));
    if (!(nl > 0.0f))
        return;
    for (int i = 0; i < 3; ++i)
        n[i] /= nl;
    if (dot3f(n, v->forward) > 0.0f)   /* both faces: light the side we see */
        for (int i = 0; i < 3; ++i)
            n[i] = -n[i];
    float lit = 0.38f + 0.62f * fmaxf(0.0f, dot3f(n, v->light));
    float minx = fminf(fminf(s[0][0], s[1][0]), s[2][0]), maxx = fmaxf(fmaxf(s[0][0], s[1][0]), s[2][0]);
    float miny = fminf(fminf(s[0][1], s[1][1]), s[2][1]), maxy = fmaxf(fmaxf(s[0][1], s[1][1]), s[2][1]);
    if (!(maxx >= 0.0f && maxy >= 0.0f && minx < v->width && miny < v->height))
        return;
    int x0 = (int)fmaxf(floorf(minx), 0.0f), x1 = (int)fminf(ceilf(maxx), v->width - 1.0f);
    int y0 = (int)fmaxf(floorf(miny), 0.0f), y1 = (int)fminf(ceilf(maxy), v->height - 1.0f);
    const float inv = 1.0f / area;
    const float grid_w = 1.2f / v->scale;   /* m: grid lines about one pixel wide */
    for (int py = y0; py <= y1; ++py) {
        for (int px = x0; px <= x1; ++px) {
            float fx = (float)px + 0.5f, fy = (float)py + 0.5f;
            float b0 = edge_fn(s[1], s[2], fx, fy) * inv;
            float b1 = edge_fn(s[2], s[0], fx, fy) * inv;
            float b2 = 1.0f - b0 - b1;
            if (b0 < 0.0f || b1 < 0.0f || b2 < 0.0f)
                continue;
            float z = b0 * s[0][2] + b1 * s[1][2] + b2 * s[2][2];
            size_t at = (size_t)py * img->width + (size_t)px;
            if (!(z < img->depth[at]))
                continue;
            float wp[3];
            for (int k = 0; k < 3; ++k)
                wp[k] = b0 * w[0][k] + b1 * w[1][k] + b2 * w[2][k];
            if (wp[1] > v->cut_y)
                continue;
            float c[3];
            if (floor) {
                floor_colour(v, wp[1], c);
                float gx = wp[0] - floorf(wp[0]), gz = wp[2] - floorf(wp[2]);
                if (gx < grid_w || gz < grid_w)
                    for (int k = 0; k < 3; ++k)
                        c[k] *= 0.82f;
            } else {
                memcpy(c, base, sizeof(c));
            }
            img->depth[at] = z;
            for (int k = 0; k < 3; ++k) {
                float q = c[k] * lit * 255.0f;
                img->rgb[3 * at + k] = (uint8_t)fminf(fmaxf(q, 0.0f), 255.0f);
            }
        }
    }
}

void raster_draw_mesh(raster_image *img, const raster_view *v, const float *positions,
                      const uint32_t *indices, uint32_t triangle_count)
{
    static const float wall[3] = {0.80f, 0.77f, 0.72f};
    for (uint32_t t = 0; t < triangle_count; ++t) {
        const float *w[3];
        for (int k = 0; k < 3; ++k)
            w[k] = positions + 3 * (size_t)(indices ? indices[3 * (size_t)t + k] : 3 * t + (uint32_t)k);
        float e1[3] = {w[1][0] - w[0][0], w[1][1] - w[0][1], w[1][2] - w[0][2]};
        float e2[3] = {w[2][0] - w[0][0], w[2][1] - w[0][1], w[2][2] - w[0][2]};
        float n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
        float nl = sqrtf(dot3f(n, n));
        bool floor = nl > 0.0f && fabsf(n[1]) / nl >= 0.7f;
        fill(img, v, w, wall, floor);
    }
}

void raster_view_shade_range(raster_view *v, const float *positions, const uint32_t *indices,
                             uint32_t triangle_count)
{
    float lo = INFINITY, hi = -INFINITY;
    for (uint32_t t = 0; t < triangle_count; ++t) {
        const float *w[3];
        for (int k = 0; k < 3; ++k)
            w[k] = positions + 3 * (size_t)(indices ? indices[3 * (size_t)t + k] : 3 * t + (uint32_t)k);
        float e1[3] = {w[1][0] - w[0][0], w[1][1] - w[0][1], w[1][2] - w[0][2]};
        float e2[3] = {w[2][0] - w[0][0], w[2][1] - w[0][1], w[2][2] - w[0][2]};
        float n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
        float nl = sqrtf(dot3f(n, n));
        if (!(nl > 0.0f) || fabsf(n[1]) / nl < 0.7f)
            continue;
        for (int k = 0; k < 3; ++k) {
            if (w[k][1] > v->cut_y)
                continue;
            lo = fminf(lo, w[k][1]);
            hi = fmaxf(hi, w[k][1]);
        }
    }
    if (lo <= hi) {
        v->shade_lo = lo;
        v->shade_hi = hi;
    }
}

void raster_outline(raster_image *img, float step)
{
    const uint32_t w = img->width, h = img->height;
    for (uint32_t y = 0; y < h; ++y) {
        for (uint32_t x = 0; x < w; ++x) {
            size_t at = (size_t)y * w + x;
            float z = img->depth[at];
            if (!isfinite(z))
                continue;
            /* Only the nearer side of a jump darkens, so outlines stay one pixel wide. */
            bool edge = (x + 1 < w && img->depth[at + 1] - z > step) || (x > 0 && img->depth[at - 1] - z > step) ||
                        (y + 1 < h && img->depth[at + w] - z > step) || (y > 0 && img->depth[at - w] - z > step);
            if (edge)
                for (int k = 0; k < 3; ++k)
                    img->rgb[3 * at + k] = (uint8_t)(img->rgb[3 * at + k] * 45 / 100);
        }
    }
}

void raster_draw_triangle(raster_image *img, const raster_view *v, const float a[3], const float b[3],
                          const float c[3], const uint8_t rgb[3])
{
    const float *w[3] = {a, b, c};
    float base[3] = {rgb[0] / 255.0f, rgb[1] / 255.0f, rgb[2] / 255.0f};
    fill(img, v, w, base, false);
}

static void plot(raster_image *img, int x, int y, float z, const uint8_t rgb[3], int thickness)
{
    int r0 = -(thickness - 1) / 2, r1 = thickness / 2;
    for (int dy = r0; dy <= r1; ++dy) {
        for (int dx = r0; dx <= r1; ++dx) {
            int px = x + dx, py = y + dy;
            if (px < 0 || py < 0 || px >= (int)img->width || py >= (int)img->height)
                continue;
            size_t at = (size_t)py * img->width + (size_t)px;
            uint8_t *d = img->rgb + 3 * at;
            /* Visible (with a 5 cm bias so lines on the floor show): full colour; hidden: half. */
            if (z <= img->depth[at] + 0.05f) {
                memcpy(d, rgb, 3);
            } else {
                for (int k = 0; k < 3; ++k)
                    d[k] = (uint8_t)((d[k] + rgb[k]) / 2);
            }
        }
    }
}

void raster_draw_line(raster_image *img, const raster_view *v, const float a[3], const float b[3],
                      const uint8_t rgb[3], int thickness)
{
    float sa[3], sb[3];
    raster_project(v, a, sa);
    raster_project(v, b, sb);
    float dx = sb[0] - sa[0], dy = sb[1] - sa[1];
    float len = sqrtf(dx * dx + dy * dy);
    if (!(len < 1e5f))
        return;
    int steps = (int)(len * 2.0f) + 1;
    for (int i = 0; i <= steps; ++i) {
        float t = (float)i / (float)steps;
        plot(img, (int)floorf(sa[0] + t * dx), (int)floorf(sa[1] + t * dy), sa[2] + t * (sb[2] - sa[2]), rgb,
             thickness);
    }
}

void raster_draw_box(raster_image *img, const raster_view *v, const float box[2][3], const uint8_t rgb[3],
                     int thickness)
{
    for (int k = 0; k < 8; ++k) {
        for (int axis = 0; axis < 3; ++axis) {
            if (k & (1 << axis))
                continue;
            int m = k | (1 << axis);
            float p[3] = {box[k & 1][0], box[(k >> 1) & 1][1], box[(k >> 2) & 1][2]};
            float q[3] = {box[m & 1][0], box[(m >> 1) & 1][1], box[(m >> 2) & 1][2]};
            raster_draw_line(img, v, p, q, rgb, thickness);
        }
    }
}

void raster_draw_text(raster_image *img, int x, int y, const char *text, const uint8_t rgb[3], int scale)
{
    if (!text || scale < 1)
        return;
    int n = (int)strlen(text);
    int w = n * FONT_W * scale + 4 * scale, h = FONT_H * scale + 2 * scale;
    for (int py = y - scale; py < y - scale + h; ++py)      /* darkened backing */
        for (int px = x - 2 * scale; px < x - 2 * scale + w; ++px)
            if (px >= 0 && py >= 0 && px < (int)img->width && py < (int)img->height)
                for (int k = 0; k < 3; ++k) {
                    uint8_t *d = img->rgb + 3 * ((size_t)py * img->width + (size_t)px) + k;
                    *d = (uint8_t)(*d * 35 / 100);
                }
    for (int i = 0; i < n; ++i) {
        unsigned char ch = (unsigned char)text[i];
        if (ch < 32 || ch > 126)
            ch = '?';
        const uint8_t *g = font6x10[ch - 32];
        for (int r = 0; r < FONT_H; ++r)
            for (int c = 0; c < FONT_W; ++c)
                if (g[r] & (1u << (FONT_W - 1 - c)))
                    for (int sy = 0; sy < scale; ++sy)
                        for (int sx = 0; sx < scale; ++sx) {
                            int px = x + (i * FONT_W + c) * scale + sx, py = y + r * scale + sy;
                            if (px >= 0 && py >= 0 && px < (int)img->width && py < (int)img->height)
                                memcpy(img->rgb + 3 * ((size_t)py * img->width + (size_t)px), rgb, 3);
                        }
    }
}

kcc_status raster_write_png(const raster_image *img, const char *path)
{
    if (!img || !img->rgb || !path)
        return KCC_ERR_NULL_ARGUMENT;
    FILE *f = fopen(path, "wb");
    if (!f)
        return KCC_ERR_IO;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        png_destroy_write_struct(&png, &info);
        fclose(f);
        return KCC_ERR_OUT_OF_MEMORY;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        fclose(f);
        return KCC_ERR_IO;
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, img->width, img->height, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_compression_level(png, 9);
    png_write_info(png, info);
    for (uint32_t y = 0; y < img->height; ++y)
        png_write_row(png, img->rgb + (size_t)y * img->width * 3);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    return fclose(f) == 0 ? KCC_OK : KCC_ERR_IO;
}
