/* seating_idle.h -- GPU scope: the seat-holders no card lists (a budget, no GPU used) */
#ifndef GVW_SEATING_IDLE_H
#define GVW_SEATING_IDLE_H

#include "config.h"
#include "seating.h"

/*
 * Fills n->sn_idle with the pods of pods (borrowed; NULL = not listed: none)
 * that declare a budget, readable or not, yet are on none of n's cards and
 * have no non-zero series on any GPU in usage (borrowed; NULL = judge by the
 * cards alone). Call it once n's cards are built, only in GPU scope. Each gets
 * used 0, its use from series without the GPU label as its total, and the
 * policy's why_not (never eligible: no GPU's decision considers it). 0, or -1
 * when out of memory (n->sn_idle then holds what was made; seating_node_free
 * frees it).
 */
int seating_idle_build(struct seating_node *n, const struct pod_list *pods,
                       const struct usage_reading *usage, const struct config *cfg);

#endif
