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

#endif
