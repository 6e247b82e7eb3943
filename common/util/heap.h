/* heap.h -- keep the heap a big decision used, for the next one */
#ifndef GVW_HEAP_H
#define GVW_HEAP_H

/*
 * A decision on a big node (5,000 pods, 20,000 series) allocates a few MiB
 * of arrays and pooled strings and frees them all at its end; glibc then
 * trims the heap top back to the kernel, and the next decision takes a page
 * fault for every page it touches again (gvw-scale: 12,000 faults over 21
 * rounds, 12 -> 17.5 ms a round). Asking glibc to keep 4 MiB of padding at
 * the top keeps those pages. Pad that was never touched costs no RSS, so an
 * idle daemon is unchanged. Call once, at start-up.
 */
void heap_keep_top(void);

#endif
