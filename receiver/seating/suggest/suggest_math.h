/* suggest_math.h -- the arithmetic of `budgets --suggest`: p99, rounding, fit, cut list
 * (no I/O)
 *
 * Definitions (docs/guide.md "Budgets from measured use" says the same):
 * - a sample is one pod's use at one query step, its series summed, in whole
 *   MiB rounded up (a partial MiB is a MiB the card must hold);
 * - a workload's p99 is the nearest-rank 99th percentile of all its pods'
 *   samples together: sorted ascending x_1..x_N, p99 = x_k with k = ceil(0.99 N);
 * - its max is x_N;
 * - suggested = max(ceil(p99 * (1 + headroom)), max), rounded up to a
 *   multiple of 100 MiB.
 */
#ifndef GVW_SUGGEST_MATH_H
#define GVW_SUGGEST_MATH_H

#include <stddef.h>
#include <stdint.h>

#define SG_ROUND_MIB 100
#define SG_MIN_HISTORY_S 3600        /* under this, no suggestion */
#define SG_MAX_WINDOW_S (90 * 86400) /* longer windows are refused */
#define SG_MAX_HEADROOM_BP 100000    /* 1000% in basis points */

/* Exact distribution of whole-MiB samples: value -> count, kept sparse (an
 * open-addressing table), so memory follows the distinct values seen (at
 * most the card's size in MiB), not the number of samples. */
struct sg_hist {
    uint32_t *h_mib;   /* owned; key + 1 (0 = empty slot) */
    uint64_t *h_count; /* owned */
    size_t h_cap;      /* slots, a power of two (0 until the first add) */
    size_t h_used;     /* distinct values */
    uint64_t h_n;      /* samples */
    uint32_t h_max;
};

/* Adds one sample of mib (0 .. UINT32_MAX - 1). 0, or -1 out of memory. */
int sg_hist_add(struct sg_hist *h, uint32_t mib);
/* Frees it and leaves it empty; an empty one is a no-op. */
void sg_hist_free(struct sg_hist *h);
/* The nearest-rank p-th percentile (pct 1..100) of the samples into *out. 0,
 * or -1 when there are none or out of memory (the sort needs the keys). */
int sg_hist_percentile(const struct sg_hist *h, unsigned pct, uint32_t *out);

/* Bytes of a sample into whole MiB, rounded up. -1 when bytes is not a
 * finite number in 0 .. 2^32 - 2 MiB (NaN, infinite, negative, absurd). */
int sg_bytes_to_mib(double bytes, uint32_t *mib);

/* The suggested budget from p99 and max (MiB) with headroom in basis points
 * (1000 = 10%): max(ceil(p99 * (10000 + bp) / 10000), max), rounded up to
 * SG_ROUND_MIB. Exact integer arithmetic. */
int64_t sg_suggest_mib(uint32_t p99, uint32_t max, uint32_t headroom_bp);

/* "10%", "12.5%", "0%" (up to two decimals, '%' required: "0.1" is refused as
 * ambiguous) into basis points, at most SG_MAX_HEADROOM_BP. 0, or -1 with
 * one line in err. */
int sg_parse_headroom(const char *s, uint32_t *bp, char *err, size_t errlen);

/* A --window ("7d", "36h", "90m") into seconds: at least SG_MIN_HISTORY_S,
 * at most SG_MAX_WINDOW_S, whole minutes. 0, or -1 with one line in err. */
int sg_parse_window(const char *s, int64_t *seconds, char *err, size_t errlen);

/* One seat on a node, for the cut list. */
struct sg_seat {
    const char *ss_name; /* borrowed: "ns/Kind/name", for ties and the output */
    int64_t ss_mib;      /* the workload's seats on the node (pods x budget) */
    int ss_cut;          /* out: 1 when the cut list names it */
};

/*
 * When the seats (sum of ss_mib) exceed capacity_mib, marks which to move off
 * the node until the rest fit: the smallest single seat that alone covers
 * the excess, if one does; otherwise the largest seat, then again with what
 * is left. Ties go to the name in byte order. Returns the number marked (0
 * when they fit).
 */
size_t sg_cut_list(struct sg_seat *seats, size_t n, int64_t capacity_mib);

#endif
