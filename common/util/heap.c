/* heap.c -- keep the heap a big decision used, for the next one */
#include "heap.h"

#include <malloc.h>

/* 4 MiB: what a 5,000-pod decision's parse and policy take at the top of the
 * heap (gvw-scale's peak delta, 3.6 MiB). Measured: 2 MiB leaves half the
 * faults; 8 MiB was slower than 4 or 16 on this glibc (2.36). */
#define HEAP_TOP_PAD (4 * 1024 * 1024)

void
heap_keep_top(void)
{
    (void)mallopt(M_TOP_PAD, HEAP_TOP_PAD); /* a hint: a failure changes nothing else */
}
