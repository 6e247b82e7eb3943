/* verdict.h -- a decision as the audit stores and prints it: its result, reason and
 * figures (docs/glossary.md "Result, outcome, verdict") */
#ifndef GVW_VERDICT_H
#define GVW_VERDICT_H

#include <stdint.h>

#include "config.h"
#include "gather.h"
#include "policy.h"
#include "store.h"
#include "decision_result.h"

struct verdict {
    struct store_decision vd_d;       /* borrows from the members below, the strings
                                         given to verdict_init, and the policy's answer */
    struct store_victim vd_victim;    /* vd_d.sd_victim points here when set */
    struct store_candidate *vd_cands; /* owned */
    const char **vd_sources;          /* owned array (static words): each candidate's
                                         budget_source, vd_d.sd_budget_sources */
    char vd_reason[2048];
    char vd_error[1024];
};

/* Starts an empty verdict (result "in_progress", action "none"). Strings are
 * borrowed and must outlive v. */
void verdict_init(struct verdict *v, const struct config *cfg, const char *node,
                  const char *trigger, const char *fingerprint, int64_t alert_id);

/* Takes the candidates and free VRAM from p (borrowed: keep p alive while v is
 * used). 0, or -1 when out of memory (then no candidates are listed). */
int verdict_set_policy(struct verdict *v, const struct policy_answer *p);

/* Names the victim (borrowed) and the action taken or intended. */
void verdict_set_victim(struct verdict *v, const struct policy_candidate *c,
                        const char *action);

void verdict_set_result(struct verdict *v, enum decision_result result);
void verdict_reason(struct verdict *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Appends "; " and the text to the reason. */
void verdict_reason_append(struct verdict *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void verdict_error(struct verdict *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Fills v's candidates, free VRAM, reason and error from what a gather found
 * (not GATHER_CANCELLED), the same for `serve` and `check`, and its GPU
 * (gr->gr_gpu, borrowed; NULL in node scope). Returns the result:
 * skipped_telemetry, skipped_kube, or the policy's (would_recycle when
 * it chose a victim, which the caller then names). gr is borrowed as by
 * verdict_set_policy(). */
enum decision_result verdict_from_gather(struct verdict *v,
                                         const struct gather_answer *gr,
                                         const struct config *cfg);

void verdict_free(struct verdict *v);

#endif
