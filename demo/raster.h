/* demo/raster.h: the demo's software renderer for headless pictures: an RGB image with a depth buffer,
 * an orthographic 3/4 view that frames a box, z-buffered flat-shaded triangles, 3D lines, boxes, a
 * bitmap-font label, and a PNG writer (libpng). No window, no GPU; allocates only in raster_image_init. */
#ifndef KCC_DEMO_RASTER_H
#define KCC_DEMO_RASTER_H

#include "kcc.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct raster_image {
    uint32_t width, height;  ///< pixels
    uint8_t *rgb;            ///< width * height * 3 bytes, row 0 at the top
    float   *depth;          ///< width * height, distance along the view direction (m); +inf is empty
} raster_image;

/// An orthographic view: screen x = dot(p - centre, right) * scale + width/2, y likewise with up
/// (downwards on screen), depth = dot(p - centre, forward).
typedef struct raster_view {
    float centre[3];         ///< m, world point at the middle of the image
    float right[3], up[3], forward[3];
    float scale;             ///< pixels per metre
    float width, height;     ///< pixels
    float cut_y;             ///< m; geometry above this height is not drawn (roofs); +inf: none
    float light[3];          ///< unit direction towards the light
    float shade_lo, shade_hi;///< m; the height range the floor colour ramp spans
} raster_view;

/// Allocates a width x height image (each in [1, 16384]) filled with bg. KCC_ERR_BAD_DESC on bad sizes.
kcc_status raster_image_init(raster_image *img, uint32_t width, uint32_t height, const uint8_t bg[3]);
void raster_image_free(raster_image *img);

/// Sets shade_lo/shade_hi to the height range of the walkable-ish (|n.y| >= 0.7) triangles below cut_y.
void raster_view_shade_range(raster_view *v, const float *positions, const uint32_t *indices,
                             uint32_t triangle_count);

/// A view from yaw (degrees, around +Y; 0 looks along -Z) and pitch (degrees below the horizon; 90 is
/// top-down) that frames the box `bounds` in the image with a margin of `margin` pixels.
void raster_view_frame(raster_view *v, const float bounds[2][3], float yaw_deg, float pitch_deg,
                       uint32_t width, uint32_t height, float margin);

/// Projects p (m) to screen x, y (pixels) and depth (m).
void raster_project(const raster_view *v, const float p[3], float out[3]);

/// Draws triangles (indices NULL: vertices 3i..3i+2), flat-shaded: walkable-ish faces (|n.y| >= 0.7)
/// coloured by height with a 1 m grid, the rest light grey, lit by the view's light, both faces.
void raster_draw_mesh(raster_image *img, const raster_view *v, const float *positions,
                      const uint32_t *indices, uint32_t triangle_count);
/// Darkens pixels where the depth jumps by more than `step` (m) to a neighbour: outlines of edges,
/// ledges and silhouettes. Call after the triangles, before lines and text.
void raster_outline(raster_image *img, float step);
/// One triangle in a given colour (same shading, no floor ramp).
void raster_draw_triangle(raster_image *img, const raster_view *v, const float a[3], const float b[3],
                          const float c[3], const uint8_t rgb[3]);

/// A 3D line `thickness` pixels wide. Where the level hides it, it is drawn at half strength.
void raster_draw_line(raster_image *img, const raster_view *v, const float a[3], const float b[3],
                      const uint8_t rgb[3], int thickness);
/// The twelve edges of an axis-aligned box (m).
void raster_draw_box(raster_image *img, const raster_view *v, const float box[2][3], const uint8_t rgb[3],
                     int thickness);
/// Text at pixel (x, y) (top-left), 6x10 font scaled by an integer factor, on a dark backing.
void raster_draw_text(raster_image *img, int x, int y, const char *text, const uint8_t rgb[3], int scale);

/// Writes the image as an 8-bit RGB PNG. KCC_ERR_IO when the file cannot be written.
kcc_status raster_write_png(const raster_image *img, const char *path);

#ifdef __cplusplus
}
#endif
#endif
