/* demo/docs_images.h: what the pictures of kcc-docs-images share (docs_images.c draws the move's
 * scheme for docs/controller.md, docs_images_world.c the world for docs/world.md): the picture, its
 * colours and the helpers that draw labels, arrows, titles and legends over the software renderer. */
#ifndef KCC_DOCS_IMAGES_H
#define KCC_DOCS_IMAGES_H

#include "raster.h"

#define IMG_W 640
#define IMG_H 400

extern const uint8_t C_TEXT[3], C_DIM[3], C_BEFORE[3], C_AFTER[3];
extern const uint8_t C_WALK[3], C_STEEP[3], C_MISS[3], C_NORMAL[3], C_SLIDE[3], C_P1[3];
extern const uint8_t C_CONTACT[3], C_BAND[3];

typedef struct picture {
    raster_image img;
    raster_view  view;
    int          legend_y;   /* pixels: the next legend line */
} picture;

/* An IMG_W x IMG_H picture of tri_count triangles (positions: three xyz corners each) seen from yaw
 * and pitch (degrees, as raster_view_frame takes them), framing `frame`. */
bool picture_begin(picture *p, const float *positions, uint32_t tri_count, const float frame[2][3],
                   float yaw, float pitch);
/* Writes the picture to dir/name as a PNG and frees it. */
bool picture_end(picture *p, const char *dir, const char *name);
void label(picture *p, const float at[3], int dx, int dy, const char *text, const uint8_t rgb[3]);
void dot(picture *p, const float at[3], const uint8_t rgb[3]);
/* A line from `from` along `dir` (m) with a head drawn in the picture's plane. */
void arrow(picture *p, const float from[3], const float dir[3], const uint8_t rgb[3]);
void title(picture *p, const char *text, const char *sub);
/* Legend lines stack upwards from the bottom-left corner: a colour swatch and its meaning. */
void legend(picture *p, const uint8_t rgb[3], const char *text);
/* The box of a character of desc d centred at centre. */
void box_at(const kcc_character_desc *d, const float centre[3], float out[2][3]);

/* docs_images_world.c: writes dir/world_*.png. */
bool make_world_pictures(const char *dir);

#endif
