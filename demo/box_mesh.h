/* demo/box_mesh.h: demo_box_mesh, the closed box mesh the demo programs (the game's triggers, the
 * docs pictures' floors, lifts and doors) and the tests build: one definition, header-only so every
 * program that includes it has it without linking another file. */
#ifndef KCC_DEMO_BOX_MESH_H
#define KCC_DEMO_BOX_MESH_H

#include <string.h>

#include "kcc_collide.h"

/// The closed box's 12 triangles as indices into demo_box_corners' eight corners, two a face, each
/// wound so that (b - a) x (c - a) points out of the box; the faces come in the order -x, +x, -y,
/// +y, -z, +z (triangles 2f and 2f + 1 are face f).
static const uint32_t demo_box_indices[36] = {0, 4, 6, 0, 6, 2, 1, 3, 7, 1, 7, 5, 0, 1, 5, 0, 5, 4,
                                              2, 6, 7, 2, 7, 3, 0, 2, 3, 0, 3, 1, 4, 5, 7, 4, 7, 6};

/// The corners of the box [lo, hi]: corner c is at the high side on axis a when bit a of c is set.
static inline void demo_box_corners(const float lo[3], const float hi[3], float corner[8][3])
{
    for (int c = 0; c < 8; ++c)
        for (int a = 0; a < 3; ++a)
            corner[c][a] = c >> a & 1 ? hi[a] : lo[a];
}

/// Builds the closed box [lo, hi] as a mesh of those 12 triangles. Returns kcc_mesh_build's status
/// (lo > hi on an axis makes faces of zero area).
static inline kcc_status demo_box_mesh(const float lo[3], const float hi[3], kcc_mesh **out)
{
    float corner[8][3];
    demo_box_corners(lo, hi, corner);
    kcc_mesh_desc d;
    memset(&d, 0, sizeof d);
    d.positions = &corner[0][0];
    d.vertex_count = 8;
    d.indices = demo_box_indices;
    d.triangle_count = 12;
    return kcc_mesh_build(&d, out);
}

#endif
