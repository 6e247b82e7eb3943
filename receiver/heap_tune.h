/* heap_tune.h -- the daemon's malloc settings: a big decision's memory is reused, not refaulted
 *
 * A decision on a 5,000-pod node allocates ~6 MB (pods, series, names,
 * candidates) and frees it all at the end. With glibc's defaults the heap top
 * is trimmed after each such decision and the next one faults every page in
 * again: ~800 page faults, about a third of the decision's wall time on the
 * shared 2-CPU bench machine (BENCHMARKS.md section 9, issue #19). Keeping
 * freed memory (up to HEAP_TRIM_BYTES at the top of the heap) and serving
 * blocks below HEAP_MMAP_BYTES from the heap makes the next decision reuse
 * resident pages. The cost: after a big decision RSS stays at its peak until
 * the next one reuses it; a small node's decisions never grow the heap this
 * far. Header-only so the scale benchmark runs with the daemon's settings.
 */
#ifndef GVW_HEAP_TUNE_H
#define GVW_HEAP_TUNE_H

#include <malloc.h>

#define HEAP_TRIM_BYTES (32 * 1024 * 1024)
#define HEAP_MMAP_BYTES (16 * 1024 * 1024)

/* Applies the settings; call once, before the first allocation that matters.
 * 0, or -1 when the C library refused one (the defaults then stay). */
static inline int
heap_tune(void)
{
#if defined(__GLIBC__)
    if (mallopt(M_TRIM_THRESHOLD, HEAP_TRIM_BYTES) != 1 ||
        mallopt(M_MMAP_THRESHOLD, HEAP_MMAP_BYTES) != 1)
        return -1;
#endif
    return 0;
}

#endif
