/* suggest_pods.h -- a node's PodList as `budgets --suggest` reads it: the one pod model
 * with owners, per-container declarations and finished pods kept (no I/O) */
#ifndef GVW_SUGGEST_PODS_H
#define GVW_SUGGEST_PODS_H

#include <stddef.h>

#include "budget_src.h"
#include "pods_json.h"

/* What --suggest asks of the PodList reader: each pod's controller, template hash and
 * per-container declarations (a patch sets the budget per container), and the
 * finished and reservation pods too, whose series still count toward their
 * workload's history. */
#define SG_POD_KEEP (POD_KEEP_WORKLOAD | POD_KEEP_FINISHED)

/* A pod kept only for its workload's history (finished, or a KAI/Run:ai reservation
 * pod): it holds no seat and declares no budget (BUDGET_NONE). */
static inline int
sg_pod_gone(const struct pod *p)
{
    return p->p_finished || p->p_reservation;
}

/* Parses a v1 PodList (len bytes) for resource with the one PodList reader and
 * SG_POD_KEEP: each pod's budget by the decision's own rules (so `--suggest` and the
 * watchdog never disagree on a declared figure). Returns 0 and fills out (free with
 * pod_list_free()), or -1 with a reason in err and nothing allocated. */
int sg_pods_parse(const char *body, size_t len, const char *resource,
                  struct pod_list *out, char *err, size_t errlen);

/* The same, each pod's budget from the first of sources (BUDGET_SOURCES; NULL or
 * empty = resource alone) that it declares. With kai, the KAI/Run:ai reservation
 * pods count as gone: no seat, no budget. */
int sg_pods_parse_sources(const char *body, size_t len, const char *resource,
                          const struct bsrc_order *sources, struct pod_list *out,
                          char *err, size_t errlen);

#endif
