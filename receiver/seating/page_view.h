/* page_view.h -- what one seating page shows: the facts, the last decisions, the
 * alerts counted (types only, shared by the page's parts) */
#ifndef GVW_PAGE_VIEW_H
#define GVW_PAGE_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "seating.h"

/* Decisions the page lists (the audit store's newest). */
#define PAGE_DECISIONS 20

/* One decision row as the page shows it. */
struct page_decision {
    int64_t pd_id;      /* the audit id (`audit show ID`) */
    int64_t pd_time_ms; /* unix ms */
    char *pd_node;      /* owned */
    char *pd_result;    /* owned */
    char *pd_victim;    /* owned; "namespace/pod", or NULL */
    char *pd_gpu;       /* owned; the GPU in GPU scope, or NULL */
};

/* The alerts the audit store received since start-up, told when there is no
 * decision to show (so "none yet" says whether Alertmanager reaches us). */
struct page_alerts {
    int64_t pa_since_ms;  /* start-up, unix ms: counted from here */
    int64_t pa_count;     /* alerts received since then */
    int pa_capped;        /* pa_count is the limit counted to: there are more */
    int64_t pa_triggers;  /* of them, firing and named by TRIGGER_ALERTS (or the
                             predictive alert with PREDICT=true) */
    int64_t pa_last_ms;   /* when the newest arrived; valid when pa_count > 0 */
    const char *pa_error; /* why they could not be counted, or NULL */
};

/* What one page shows; everything borrowed. */
struct page_view {
    const struct seating *pv_seating;
    const struct page_decision *pv_decisions; /* newest first */
    size_t pv_decision_count;
    const char *pv_decisions_error; /* why there are none to show, or NULL */
    int64_t pv_now_ms;              /* when the facts were gathered */
    int pv_dry_run;
    const struct page_alerts *pv_alerts; /* NULL: not counted (the page says less) */
    const char *pv_triggers;             /* TRIGGER_ALERTS as a comma list, or NULL */
    int pv_leader_election;              /* LEADER_ELECTION: only the leader decides */
};

#endif
