/*
 * huge.c - large zeroed tables in huge pages.
 *
 * The encoder's piece table, its arrays and a model's prefilled piece
 * table are touched at random. On Linux each is an anonymous mapping of
 * whole 2 MB pages, aligned to 2 MB, with transparent huge pages asked
 * for: the kernel hands out zeroed pages on first touch (no memset of
 * memory that may never be used), and a handful of page faults and TLB
 * entries cover it instead of thousands (a 4 KB page's first touch costs
 * microseconds on virtual machines). Elsewhere, calloc.
 */
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "common.h"

#define HUGE_PAGE ((size_t)2 << 20)

void *simdbpe__huge_map(size_t bytes, void **base, size_t *mapped)
{
#if defined(__linux__) && defined(MAP_ANONYMOUS)
    /* Whole huge pages: the part of a region past its last whole one
     * would be faulted in 4 KB at a time. */
    if (bytes > SIZE_MAX - 2 * HUGE_PAGE)
        return NULL;
    bytes = (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    size_t len = bytes + HUGE_PAGE;
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    uintptr_t at = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
#if defined(MADV_HUGEPAGE)
    madvise((void *)at, bytes, MADV_HUGEPAGE);
#endif
    *base = p;
    *mapped = len;
    return (void *)at;
#else
    if (bytes > SIZE_MAX - 64)
        return NULL;
    void *p = calloc(1, bytes + 64);
    *base = p;
    *mapped = 0;
    return p ? (void *)(((uintptr_t)p + 63) & ~(uintptr_t)63) : NULL;
#endif
}

void simdbpe__huge_unmap(void *base, size_t mapped)
{
#if defined(__linux__) && defined(MAP_ANONYMOUS)
    if (base)
        munmap(base, mapped);
#else
    (void)mapped;
    free(base);
#endif
}

void *simdbpe__huge_grow(void *old_base, size_t old_mapped, void *at, size_t keep, size_t bytes,
                         void **base, size_t *mapped)
{
    void *to = simdbpe__huge_map(bytes, base, mapped);
    if (!to)
        return NULL;
#if defined(__linux__) && defined(MREMAP_FIXED)
    /* The old region's whole huge pages moved over the new one's first
     * part: page tables change hands, no byte is copied, the huge pages
     * stay aligned. Then the old mapping's head and tail go, by their
     * ranges: the moved range may already belong to another mapping. */
    size_t whole = (keep + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    uint8_t *o = old_base, *a = at;
    if (keep > 0 && ((uintptr_t)a & (HUGE_PAGE - 1)) == 0 && a + whole <= o + old_mapped &&
        mremap(a, whole, whole, MREMAP_MAYMOVE | MREMAP_FIXED, to) != MAP_FAILED) {
        if (a > o)
            munmap(o, (size_t)(a - o));
        if (a + whole < o + old_mapped)
            munmap(a + whole, (size_t)(o + old_mapped - (a + whole)));
        return to;
    }
#endif
    memcpy(to, at, keep);
    simdbpe__huge_unmap(old_base, old_mapped);
    return to;
}
