/* kcc_level.h: level geometry as plain arrays: a small OBJ reader (v and f lines), spawn-point files,
 * and named procedural levels that tests, traces and the demo share. Allocates; not for per-frame use. */
#ifndef KCC_LEVEL_H
#define KCC_LEVEL_H

#include "kcc_collide.h"

#ifdef __cplusplus
extern "C" {
#endif

/// A triangle soup plus spawn points, owned by the struct (free with kcc_level_free).
typedef struct kcc_level {
    float    *positions;       ///< x y z per vertex (m)
    uint32_t  vertex_count;
    uint32_t *indices;         ///< 3 per triangle
    uint32_t  triangle_count;
    float    *spawns;          ///< x y z per spawn point: the feet of a standing character (m)
    uint32_t  spawn_count;
} kcc_level;

/// Parses OBJ text: `v x y z [w]` and `f` lines (polygons fan-triangulated; `i`, `i/t`, `i//n`, `i/t/n`
/// and negative indices); other statements are ignored. Refuses what is not an OBJ level: NUL bytes
/// or a statement keyword that is not UTF-8 text (binary data), no face at all
/// (KCC_ERR_NO_TRIANGLES), and a last vertex that no face uses (a file cut short). On failure writes
/// "line N: what" into err (if non-NULL) and returns the status (KCC_ERR_PARSE unless noted),
/// leaving out untouched.
KCC_API kcc_status kcc_level_parse_obj(const char *text, size_t length, kcc_level *out,
                               char *err, size_t err_size);
/// Reads and parses an OBJ file, then its spawn points (kcc_level_load_spawns); errors name the file
/// ("path:N: what"). A bad spawn file fails the whole load with an error naming the spawn file;
/// kcc_level_load_obj_geometry then still loads the geometry alone.
KCC_API kcc_status kcc_level_load_obj(const char *path, kcc_level *out, char *err, size_t err_size);
/// Reads and parses an OBJ file without its spawn file (spawn_count 0). The file is read once in
/// 1 MiB pieces: a line longer than that fails (KCC_ERR_TOO_LARGE) unless it holds a comment,
/// whose rest is skipped, so memory stays bounded whatever the comments.
KCC_API kcc_status kcc_level_load_obj_geometry(const char *path, kcc_level *out, char *err,
                                       size_t err_size);
/// Reads the spawn file beside the OBJ file at path (the same stem, extension .spawns: one `x y z`
/// a line) into level, replacing its spawn points. No such file: KCC_OK, level unchanged. Errors
/// name the spawn file ("dir/name.spawns:N: what") and leave level unchanged.
KCC_API kcc_status kcc_level_load_spawns(const char *path, kcc_level *level, char *err, size_t err_size);

/// Generates a named procedural level. spec is the name followed by optional `key=value` parameters,
/// e.g. "arena seed=3", "terrain seed=7 size=48", "showcase". Unknown names or keys: KCC_ERR_NOT_FOUND;
/// bad values: KCC_ERR_BAD_DESC (err says which). Same spec, same triangles, bit for bit.
KCC_API kcc_status kcc_level_generate(const char *spec, kcc_level *out, char *err, size_t err_size);
/// The "terrain" generator's ground as a heightfield: "terrain seed=<seed> size=<size>" without its
/// walls, and with every cell split along one diagonal (kcc_heightfield_build's) where the level
/// alternates them. Writes (size + 1)^2 heights (m) to out_heights (the caller's) and a desc over
/// them (1 m spacing, the level's origin, malloc/free) to out_desc. size in 16..16384 (the level
/// itself takes 16..256). KCC_ERR_NULL_ARGUMENT, KCC_ERR_BAD_DESC (size out of range).
KCC_API kcc_status kcc_level_terrain_heights(uint64_t seed, uint32_t size, float *out_heights,
                                             kcc_heightfield_desc *out_desc);
/// The names kcc_level_generate knows, NULL-terminated.
KCC_API const char *const *kcc_level_names(void);

/// Builds a mesh over the level's triangles.
KCC_API kcc_status kcc_level_build_mesh(const kcc_level *level, kcc_mesh **out_mesh);
/// A content hash of the level's triangles: 64-bit FNV-1a over the bit patterns (little-endian) of
/// the nine corner coordinates of every triangle, in order. The same triangles give the same hash
/// whatever their indexing and spawn points; traces store it to notice a level that changed.
KCC_API uint64_t kcc_level_hash(const kcc_level *level);
/// Frees what the level owns and zeroes it. NULL is fine.
KCC_API void kcc_level_free(kcc_level *level);

#ifdef __cplusplus
}
#endif
#endif
