/* predict.h -- the predictive trigger's judgement (SPEC "Acting before starvation"). No
 * I/O. */
#ifndef GVW_PREDICT_H
#define GVW_PREDICT_H

#include <stddef.h>
#include <stdint.h>

#include "policy.h"

/*
 * Parses PREDICT_MIN_GROWTH: a non-negative finite number followed by
 * "MiB/s", "GiB/s" or "KiB/s", or no unit (MiB/s). No spaces. 0 with
 * *mib_s, or -1.
 */
int predict_parse_rate(const char *s, double *mib_s);

/* One sample of a pod's use: unix seconds, bytes. */
struct predict_sample {
    double ps_t;
    double ps_bytes;
};

/*
 * A series' growth, least squares, in MiB/s: over all its samples, and over
 * two consecutive segments, [from_t, split_t) and [split_t, end). A segment with fewer
 * than 2 samples (or no spread in time) has a NaN slope; so does every slope of a series
 * with a sample that cannot be true (negative, NaN or infinite).
 */
struct predict_trend {
    double pt_all;
    double pt_first;
    double pt_second;
};
void predict_trend(const struct predict_sample *s, size_t n, double from_t,
                   double split_t, struct predict_trend *out);

/*
 * The sustained growth of a pod from the two segments' slopes summed over
 * its series: the smaller of the two, so a one-off step (it lies in one
 * segment, the other is flat) is not growth, while a drift (both alike) is.
 * NaN when either is unknown: a pod without history in both is never judged
 * growing.
 */
double predict_sustained(double first, double second);

struct predict_params {
    int64_t pp_floor_mib;
    double pp_horizon_s;  /* PREDICT_HORIZON */
    double pp_min_growth; /* PREDICT_MIN_GROWTH, MiB/s */
};

/* The outcome: whom to act on, and the figures the audit records. */
struct predict_outcome {
    int po_act;       /* 1: po_order[0..po_ranked) are the victims, in order */
    size_t *po_order; /* owned: every candidate index, victims first, then the
                         rest in the policy's order */
    size_t po_ranked;
    double po_growth_mib_s;   /* sum of the positive sustained slopes on the GPU */
    double po_projected_mib;  /* free at now + horizon */
    int po_eta_known;         /* 0: the trend never crosses the floor */
    double po_eta_s;          /* seconds until the projection crosses the floor */
    int po_slope_known;       /* 0: no over-budget pod has a known slope */
    double po_slope_mib_s;    /* the victim's (else the fastest eligible pod's) slope */
    const char *po_slope_pod; /* borrowed: that pod's "name" (NULL with !slope_known) */
    const char *po_slope_ns;
    char po_reason[512]; /* why nothing is done (po_act 0), or the victim's line */
};

/*
 * Judges a predicted trigger on a GPU (or node) whose free VRAM free_mib is
 * at or above the floor. cands are the policy's candidates (sorted, eligible
 * first: over budget and past every rule), slopes[i] candidate i's sustained
 * growth in MiB/s (NaN or infinite: unknown, never growing). Projects free
 * at now + horizon as free - horizon x the sum of the known positive slopes
 * of every pod there; acts when that is below the floor and at least one
 * eligible pod grows by PREDICT_MIN_GROWTH or more. Victims: those pods,
 * fastest growth first (ties: the policy's order). where names the GPU or
 * node for the reason ("GPU X" / "node X"). 0, or -1 when out of memory.
 * Free out with predict_outcome_free().
 */
int predict_judge(const struct predict_params *pp, double free_mib,
                  const struct policy_candidate *cands, const double *slopes, size_t n,
                  const char *where, struct predict_outcome *out);

void predict_outcome_free(struct predict_outcome *out);

#endif
