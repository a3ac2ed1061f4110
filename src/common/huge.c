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
