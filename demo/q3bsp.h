/* demo/q3bsp.h: the Quake 3 BSP (version 46) importer of the demo tools (not part of the library):
 * turns the brushes and patches a player collides with into a kcc_level (Y-up metres), reads the
 * entities and the brush models of movers and triggers, and writes levels as OBJ + .spawns (+ .movers). Allocates freely; bounds-checks every lump of the input. */
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
/// indices; spawns = player feet) with malloc'd arrays (free with kcc_level_free)
/// and stats (may be NULL). Errors: KCC_ERR_NULL_ARGUMENT, KCC_ERR_PARSE (err says which lump and why),
/// KCC_ERR_VERSION (not IBSP 46), KCC_ERR_NO_TRIANGLES, KCC_ERR_OUT_OF_MEMORY. out is untouched on error.
kcc_status q3bsp_import(const uint8_t *data, size_t size, const q3bsp_options *opt, kcc_level *out,
                        q3bsp_stats *stats, char *err, size_t err_size);
/// Reads a file and imports it (errors name the file).
kcc_status q3bsp_load(const char *path, const q3bsp_options *opt, kcc_level *out, q3bsp_stats *stats,
                      char *err, size_t err_size);

/* ------------------------------------------------------------------ entities and brush models */

/// One `"key" "value"` pair of an entity (both NUL-terminated, owned by the q3bsp_entities).
typedef struct q3bsp_pair {
    const char *key;
    const char *value;
} q3bsp_pair;

/// One `{ ... }` block of the entity string: its pairs are pairs[first_pair .. first_pair + pair_count).
typedef struct q3bsp_entity {
    uint32_t first_pair;
    uint32_t pair_count;
} q3bsp_entity;

/// Every entity of a map, in file order (entity 0 is the worldspawn).
typedef struct q3bsp_entities {
    q3bsp_entity *entities;
    uint32_t      count;
    q3bsp_pair   *pairs;
    uint32_t      pair_count;
    char         *strings;    ///< the keys and values, one allocation
} q3bsp_entities;

/// Parses a Quake 3 entity string (`{ "key" "value" ... }` blocks; the lump may end with a NUL).
/// Errors: KCC_ERR_NULL_ARGUMENT (text or out), KCC_ERR_PARSE (err names the byte: a missing brace,
/// a key without a value, an unterminated string), KCC_ERR_OUT_OF_MEMORY. out is untouched on error.
kcc_status q3bsp_parse_entities(const char *text, size_t size, q3bsp_entities *out, char *err,
                                size_t err_size);
/// The value of `key` in entity `entity` (the first pair with that key), NULL when absent or when
/// entity is out of range.
const char *q3bsp_entity_value(const q3bsp_entities *ents, uint32_t entity, const char *key);
/// The entity's classname, "" when it has none.
const char *q3bsp_entity_class(const q3bsp_entities *ents, uint32_t entity);
/// Reads `key` as three numbers (an origin, a vector); false (out untouched) when absent or malformed.
bool q3bsp_entity_vec3(const q3bsp_entities *ents, uint32_t entity, const char *key, double out[3]);
/// Reads `key` as one number; `fallback` when absent or malformed.
double q3bsp_entity_float(const q3bsp_entities *ents, uint32_t entity, const char *key, double fallback);
/// The first entity whose `targetname` is `name` and (when classname is not NULL) whose classname is
/// `classname`; UINT32_MAX when there is none.
uint32_t q3bsp_entity_find(const q3bsp_entities *ents, const char *name, const char *classname);
void q3bsp_entities_free(q3bsp_entities *ents);

/// A brush model `*N` of the map (N >= 1: doors, plats, triggers ...), in metres, Y up, in the model's
/// own frame: the game places it at its entity's origin (to_metres of the `origin` key, 0 0 0 when
/// absent), as Quake 3 does.
typedef struct q3bsp_model {
    float    *positions;       ///< the solid brushes and patches turned into triangles as the world's
    uint32_t  vertex_count;
    uint32_t *indices;
    uint32_t  triangle_count;  ///< 0 for a model without solid brushes (a trigger)
    float     bounds[2][3];    ///< m, of every brush of the model whatever its contents (the models
                               ///< lump's mins and maxs): a trigger's volume
} q3bsp_model;

/// A whole map: the world model's level (exactly what q3bsp_import gives), the entities and every
/// brush model. models[0] stands for the world and holds no triangles (they are in `world`).
typedef struct q3bsp_map {
    kcc_level      world;
    q3bsp_entities entities;
    q3bsp_model   *models;
    uint32_t       model_count;
} q3bsp_map;

/// q3bsp_import plus the entities and the brush models. Same errors (a brush model's bad lump ranges
/// are KCC_ERR_PARSE naming the model). out is untouched on error; free with q3bsp_map_free.
kcc_status q3bsp_import_map(const uint8_t *data, size_t size, const q3bsp_options *opt, q3bsp_map *out,
                            q3bsp_stats *stats, char *err, size_t err_size);
/// Reads a file and imports the whole map (errors name the file).
kcc_status q3bsp_load_map(const char *path, const q3bsp_options *opt, q3bsp_map *out, q3bsp_stats *stats,
                          char *err, size_t err_size);
void q3bsp_map_free(q3bsp_map *map);
/// The brush model an entity's `model` key names ("*N" with 1 <= N < model_count), else UINT32_MAX.
uint32_t q3bsp_entity_model(const q3bsp_map *map, uint32_t entity);

/// Quake units, Z up -> metres, Y up: (x, z, -y) / 32 (the importer's conversion).
void q3bsp_to_metres(const double quake[3], float out[3]);

/// Writes a map's movers and triggers as the text sidecar docs/demo.md describes (NAME.movers):
/// one `entity` block per entity that names a brush model or that a mover or trigger targets, with
/// its keys, and one `model` block per brush model with its bounds and triangles.
kcc_status q3bsp_write_movers(const q3bsp_map *map, const char *path, char *err, size_t err_size);


/// Writes `v x y z` / `f a b c` lines (1-based) after one comment line (header may be NULL).
kcc_status q3bsp_write_obj(const kcc_level *level, const char *path, const char *header,
                           char *err, size_t err_size);
/// Writes one `x y z` spawn point a line.
kcc_status q3bsp_write_spawns(const kcc_level *level, const char *path, char *err, size_t err_size);

#ifdef __cplusplus
}
#endif
#endif
