/* world_trace_hf.c: heightfield levels in world traces (docs/traces.md, "Heightfield levels"):
 * reads an `hf terrain seed=S size=N` or `hf file <path>` spec, builds a terrain's heightfield, and
 * hashes a mesh's triangles. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collide_internal.h" /* kcc_fnv_float: the hash kcc_level_hash makes */
#include "world_trace_internal.h"

/// Reads a decimal whole number in [lo, hi] from text[0..length): true when it is one.
static bool read_decimal(const char *text, size_t length, uint64_t lo, uint64_t hi, uint64_t *out)
{
    if (length == 0 || length > 20)
        return false;
    uint64_t value = 0;
    for (size_t i = 0; i < length; ++i) {
        if (text[i] < '0' || text[i] > '9')
            return false;
        const uint64_t digit = (uint64_t)(text[i] - '0');
        if (value > (UINT64_MAX - digit) / 10u)
            return false;
        value = value * 10u + digit;
    }
    *out = value;
    return value >= lo && value <= hi;
}

/// Reads one `seed=S` or `size=N` word into spec; false with why filled on a mistake.
static bool read_hf_key(const char *word, size_t length, kcc_wt_hf_spec *spec, unsigned *seen,
                        char *why, size_t why_size)
{
    const bool is_seed = length > 5 && memcmp(word, "seed=", 5) == 0;
    const bool is_size = length > 5 && memcmp(word, "size=", 5) == 0;
    if (!is_seed && !is_size) {
        snprintf(why, why_size, "'%.*s': a heightfield takes seed=S and size=N", (int)length, word);
        return false;
    }
    const unsigned bit = is_seed ? 1u : 2u;
    if (*seen & bit) {
        snprintf(why, why_size, "'%.*s': given twice", (int)length, word);
        return false;
    }
    *seen |= bit;
    uint64_t value;
    if (is_seed && !read_decimal(word + 5, length - 5, 0, UINT64_MAX, &value)) {
        snprintf(why, why_size, "'%.*s': seed must be an unsigned 64-bit decimal integer",
                 (int)length, word);
        return false;
    }
    if (is_size && !read_decimal(word + 5, length - 5, KCC_WT_HF_MIN_SIZE, KCC_WT_HF_MAX_SIZE,
                                 &value)) {
        snprintf(why, why_size, "'%.*s': size must be a whole number from %u to %u", (int)length,
                 word, (unsigned)KCC_WT_HF_MIN_SIZE, (unsigned)KCC_WT_HF_MAX_SIZE);
        return false;
    }
    if (is_seed)
        spec->seed = value;
    else
        spec->size = (uint32_t)value;
    return true;
}

/// `file <path>`: the path runs to the end of the line (spaces allowed, as an OBJ level's).
static bool parse_hf_file(const char *text, size_t length, kcc_wt_hf_spec *out,
                          size_t *path_offset, char *why, size_t why_size)
{
    size_t at = 4;
    while (at < length && (text[at] == ' ' || text[at] == '\t'))
        ++at;
    if (at == 4 || at == length) {
        snprintf(why, why_size, "expected 'hf file <path>'");
        return false;
    }
    *out = (kcc_wt_hf_spec){0, 0, true};
    *path_offset = at;
    return true;
}

bool kcc_wt_parse_hf(const char *text, size_t length, kcc_wt_hf_spec *out, size_t *path_offset,
                     char *why, size_t why_size)
{
    if (length >= 4 && memcmp(text, "file", 4) == 0)
        return parse_hf_file(text, length, out, path_offset, why, why_size);
    const char *end = text + length;
    kcc_wt_hf_spec spec = {0, 0, false};
    unsigned seen = 0;
    bool named = false;
    for (const char *at = text; at < end;) {
        while (at < end && (*at == ' ' || *at == '\t'))
            at++;
        const char *word = at;
        while (at < end && *at != ' ' && *at != '\t')
            at++;
        const size_t n = (size_t)(at - word);
        if (n == 0)
            break;
        if (!named) {
            if (n != 7 || memcmp(word, "terrain", 7) != 0) {
                snprintf(why, why_size, "'%.*s': a heightfield is 'terrain seed=S size=N' or "
                         "'file <path>'", (int)n, word);
                return false;
            }
            named = true;
        } else if (!read_hf_key(word, n, &spec, &seen, why, why_size)) {
            return false;
        }
    }
    if (!named || seen != 3u) {
        snprintf(why, why_size, "expected 'hf terrain seed=S size=N'");
        return false;
    }
    *out = spec;
    return true;
}

kcc_status kcc_wt_build_hf(const kcc_wt_hf_spec *spec, kcc_mesh **out_mesh)
{
    const size_t samples = ((size_t)spec->size + 1u) * ((size_t)spec->size + 1u);
    float *heights = malloc(samples * sizeof *heights);
    if (!heights)
        return KCC_ERR_OUT_OF_MEMORY;
    kcc_heightfield_desc desc;
    kcc_status st = kcc_level_terrain_heights(spec->seed, spec->size, heights, &desc);
    if (st == KCC_OK)
        st = kcc_heightfield_build(&desc, out_mesh);
    free(heights);
    return st;
}

uint64_t kcc_trace_mesh_hash(const kcc_mesh *mesh)
{
    uint64_t h = KCC_FNV_BASIS;
    const uint32_t count = mesh ? kcc_mesh_triangle_count(mesh) : 0;
    for (uint32_t id = 0; id < count; ++id) {
        vec3 corners[3];
        if (!kcc_mesh_triangle(mesh, id, corners))
            continue;                                   /* a heightfield's hole */
        for (int c = 0; c < 3; ++c)
            for (int k = 0; k < 3; ++k)
                h = kcc_fnv_float(h, corners[c][k]);
    }
    return h;
}

bool kcc_wt_hf_level_ok(const char *level)
{
    const size_t n = strlen(level);
    if (n < 4 || n >= KCC_TRACE_LEVEL_MAX || memcmp(level, "hf ", 3) != 0 || level[3] == ' ')
        return false;
    for (size_t i = 0; i < n; ++i)
        if ((unsigned char)level[i] < 0x20)
            return false;
    kcc_wt_hf_spec spec;
    size_t path_offset;
    char why[128];
    return kcc_wt_parse_hf(level + 3, n - 3, &spec, &path_offset, why, sizeof why);
}
