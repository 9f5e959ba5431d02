/* kcc_base.h: status codes, the allocator hook and the debug assert shared by every kcc module.
 * Owns no state; included by every other public header. */
#ifndef KCC_BASE_H
#define KCC_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cglm/types.h>

/// KCC_API marks each public function: libkcc.so is built with -fvisibility=hidden and exports
/// exactly these (make install-check compares its exports with the installed headers). On Windows
/// define KCC_BUILD_DLL to build kcc as a DLL and KCC_DLL to use that DLL; defining KCC_API
/// beforehand replaces all of this.
#ifndef KCC_API
#  if defined(_WIN32) || defined(__CYGWIN__)
#    if defined(KCC_BUILD_DLL)
#      define KCC_API __declspec(dllexport)
#    elif defined(KCC_DLL)
#      define KCC_API __declspec(dllimport)
#    else
#      define KCC_API
#    endif
#  elif defined(__GNUC__) || defined(__clang__)
#    define KCC_API __attribute__((visibility("default")))
#  else
#    define KCC_API
#  endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/// Result of every call that takes data from outside. KCC_OK is zero; every other value names
/// one failure. A failing call leaves its outputs untouched.
typedef enum kcc_status {
    KCC_OK = 0,
    KCC_ERR_NULL_ARGUMENT,      ///< a required pointer was NULL
    KCC_ERR_NO_TRIANGLES,       ///< triangle_count was zero, or every triangle is degenerate
    KCC_ERR_NO_VERTICES,        ///< vertex_count was zero or positions NULL
    KCC_ERR_BAD_STRIDE,         ///< vertex_stride is neither 0 nor >= 12 and a multiple of 4
    KCC_ERR_INDEX_OUT_OF_RANGE, ///< a triangle index is >= vertex_count
    KCC_ERR_NON_FINITE,         ///< a coordinate or parameter is NaN or infinite
    KCC_ERR_TOO_LARGE,          ///< counts whose storage would overflow
    KCC_ERR_OUT_OF_MEMORY,      ///< the allocator returned NULL
    KCC_ERR_BAD_DESC,           ///< a descriptor field is out of its documented range
    KCC_ERR_OVERLAP,            ///< the requested shape would overlap the level
    KCC_ERR_IO,                 ///< a file could not be opened, read or written
    KCC_ERR_PARSE,              ///< a file is malformed (the reader says where)
    KCC_ERR_VERSION,            ///< a file has an unsupported format version
    KCC_ERR_NOT_FOUND,          ///< a named thing (level, field) does not exist
    KCC_ERR_BUFFER_TOO_SMALL,   ///< a caller buffer cannot hold the result
    KCC_ERR_CORRUPT,            ///< a built object fails its consistency check (kcc_mesh_validate)
    KCC_ERR_LEVEL_CHANGED,      ///< a level's content differs from the one a trace was recorded on
    KCC_STATUS_COUNT
} kcc_status;

/// A human-readable name for a status. Never NULL, also for values out of range.
KCC_API const char *kcc_status_str(kcc_status s);

/// Allocator hook: all zero means malloc/free. Only build/create functions allocate.
typedef struct kcc_allocator {
    void *(*alloc)(size_t bytes, size_t align, void *user);
    void  (*free)(void *ptr, void *user);
    void  *user;
} kcc_allocator;

#ifndef KCC_ASSERT
#  ifdef KCC_DEBUG
#    include <assert.h>
#    define KCC_ASSERT(x) assert(x)
#  else
#    define KCC_ASSERT(x) ((void)0)
#  endif
#endif

#ifdef __cplusplus
}
#endif
#endif
