/* base.c: status names and the default allocator. No state. */
#include <stdlib.h>

#include "collide_internal.h"

static void *default_alloc(size_t bytes, size_t align, void *user)
{
    (void)user;
    return aligned_alloc(align, (bytes + align - 1) / align * align);
}

static void default_free(void *ptr, void *user)
{
    (void)user;
    free(ptr);
}

kcc_allocator kcc_allocator_or_default(const kcc_allocator *allocator)
{
    if (allocator->alloc)
        return *allocator;
    kcc_allocator al = {default_alloc, default_free, NULL};
    return al;
}

const char *kcc_status_str(kcc_status s)
{
    switch (s) {
    case KCC_OK: return "ok";
    case KCC_ERR_NULL_ARGUMENT: return "a required pointer is NULL";
    case KCC_ERR_NO_TRIANGLES: return "no triangles";
    case KCC_ERR_NO_VERTICES: return "no vertices";
    case KCC_ERR_BAD_STRIDE: return "vertex stride must be 0 or a multiple of 4 that is at least 12";
    case KCC_ERR_INDEX_OUT_OF_RANGE: return "a triangle index is out of range";
    case KCC_ERR_NON_FINITE: return "a coordinate or parameter is NaN or infinite";
    case KCC_ERR_TOO_LARGE: return "input too large";
    case KCC_ERR_OUT_OF_MEMORY: return "out of memory";
    case KCC_ERR_BAD_DESC: return "a descriptor field is out of range";
    case KCC_ERR_OVERLAP: return "the shape would overlap the level";
    case KCC_ERR_IO: return "file could not be read or written";
    case KCC_ERR_PARSE: return "malformed file";
    case KCC_ERR_VERSION: return "unsupported format version";
    case KCC_ERR_NOT_FOUND: return "not found";
    case KCC_ERR_BUFFER_TOO_SMALL: return "buffer too small";
    case KCC_ERR_CORRUPT: return "a built object fails its consistency check";
    case KCC_ERR_LEVEL_CHANGED: return "the level changed since the trace was recorded";
    case KCC_STATUS_COUNT: break;
    }
    return "unknown status";
}
