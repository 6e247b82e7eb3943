/* kube_status.h -- one readable line from a Kubernetes error answer (a Status object) */
#ifndef GVW_KUBE_STATUS_H
#define GVW_KUBE_STATUS_H

#include <stddef.h>

/*
 * One line for an error answer: a Status object's message followed by its
 * details.causes ("msg (DisruptionBudget: The disruption budget ...)");
 * anything else gives a printable excerpt of the body, or "(empty body)".
 * Never fails; the line is truncated to outlen.
 */
void kube_json_status_message(const char *body, size_t len, char *out, size_t outlen);

/*
 * Whether an error answer to an eviction (HTTP code, body of len bytes) is a
 * PodDisruptionBudget's refusal, in the forms a real API server gives: a 429
 * or 403 whose Status details.causes holds the cause DisruptionBudget (Go's
 * StatusCause.Type, "reason" in JSON), a 403 whose details name a
 * poddisruptionbudget (disruptions allowed negative, too many unconfirmed
 * evictions), a 500 "more than one PodDisruptionBudget". A plain-text 429 (load
 * shedding) and anything unreadable are not.
 */
int kube_status_pdb_refusal(long code, const char *body, size_t len);

/* Whether a 409's Status says a UID precondition failed (the generic store's
 * "Precondition failed: UID in precondition: ..." or the eviction's "the UID in
 * the precondition (...) does not match ..."). */
int kube_status_uid_conflict(const char *body, size_t len);

#endif
