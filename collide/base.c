/* base.c: status names and the default allocator (on Linux a block spanning a huge page starts on
 * one and is advised onto transparent huge pages). No state. */
#if defined(__linux__) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE /* posix_memalign, madvise */
#endif
#include <stdlib.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

#include "collide_internal.h"

/// A transparent huge page on x86-64 and on arm64 with 4 KB pages. A block of at least this many
/// bytes starts on such a boundary and its whole huge pages are advised MADV_HUGEPAGE, so that a
/// big mesh's, heightfield's or world's random reads miss the TLB far less (docs/collide.md,
/// "Huge pages": the 1M-triangle mesh's rays about a quarter faster; docs/world.md, "World
/// queries"). The tail past the last whole huge page stays on small pages: no memory beyond the
/// alignment's unused address space (under 2 MiB, never touched). Smaller blocks are left alone: a
/// huge page would hold one at up to hundreds of times its size. The advice is only advice: where
/// the kernel refuses it or has no huge pages, the block is an ordinary one
/// (`the_default_allocator_puts_a_world_on_huge_pages`).
#define HUGE_PAGE_BYTES ((size_t)2 << 20)

static void *default_alloc(size_t bytes, size_t align, void *user)
{
    (void)user;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (bytes >= HUGE_PAGE_BYTES && align <= HUGE_PAGE_BYTES) {
        void *block = NULL;
        if (posix_memalign(&block, HUGE_PAGE_BYTES, bytes) != 0)
            return NULL;
        (void)madvise(block, bytes / HUGE_PAGE_BYTES * HUGE_PAGE_BYTES, MADV_HUGEPAGE);
        return block;
    }
#endif
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
