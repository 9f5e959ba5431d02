/* demo/q3bsp.h: the Quake 3 BSP (version 46) importer of the demo tools (not part of the library):
 * turns the brushes and patches a player collides with into a kcc_level (Y-up metres) and writes
 * levels as OBJ + .spawns files. Allocates freely; bounds-checks every lump of the input. */
#ifndef KCC_DEMO_Q3BSP_H
#define KCC_DEMO_Q3BSP_H

#include "kcc.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Quake content flags that block a player (the game's MASK_PLAYERSOLID without bodies).
#define Q3BSP_CONTENTS_SOLID      0x1u
#define Q3BSP_CONTENTS_PLAYERCLIP 0x10000u
/// Quake units per metre (the player box is 32 x 56 units, 1 x 1.75 m).
#define Q3BSP_UNITS_PER_METRE 32.0

/// What an import did, for the tool's summary and for tests.
typedef struct q3bsp_stats {
    uint32_t brushes;          ///< brushes of the world model
    uint32_t brushes_solid;    ///< of those, solid or player-clip
    uint32_t brush_faces;      ///< non-degenerate faces of the solid brushes
    uint32_t brush_triangles;
    uint32_t patches;          ///< solid curved patches of the world model
    uint32_t patch_triangles;
    uint32_t spawns;
} q3bsp_stats;

/// Import options (q3bsp_default_options()).
typedef struct q3bsp_options {
    uint32_t contents_mask;    ///< brush/patch contents kept; default SOLID | PLAYERCLIP
    uint32_t patch_level;      ///< subdivisions per 3x3 patch along each direction; default 4; [1, 64]
} q3bsp_options;

q3bsp_options q3bsp_default_options(void);

/// Imports a BSP held in memory. On success fills out (positions in metres, Y up: (x, z, -y) / 32;
/// indices; spawns = player feet) with malloc'd arrays (free with kcc_level_free or q3bsp_level_free)
/// and stats (may be NULL). Errors: KCC_ERR_NULL_ARGUMENT, KCC_ERR_PARSE (err says which lump and why),
/// KCC_ERR_VERSION (not IBSP 46), KCC_ERR_NO_TRIANGLES, KCC_ERR_OUT_OF_MEMORY. out is untouched on error.
kcc_status q3bsp_import(const uint8_t *data, size_t size, const q3bsp_options *opt, kcc_level *out,
                        q3bsp_stats *stats, char *err, size_t err_size);
/// Reads a file and imports it (errors name the file).
kcc_status q3bsp_load(const char *path, const q3bsp_options *opt, kcc_level *out, q3bsp_stats *stats,
                      char *err, size_t err_size);

/// Frees what q3bsp_import allocated (the same as kcc_level_free; usable without the level module).
void q3bsp_level_free(kcc_level *level);

/// Writes `v x y z` / `f a b c` lines (1-based) after one comment line (header may be NULL).
kcc_status q3bsp_write_obj(const kcc_level *level, const char *path, const char *header,
                           char *err, size_t err_size);
/// Writes one `x y z` spawn point a line.
kcc_status q3bsp_write_spawns(const kcc_level *level, const char *path, char *err, size_t err_size);

#ifdef __cplusplus
}
#endif
#endif
