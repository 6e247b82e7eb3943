/* events.h -- a Kubernetes Event on the victim pod for every decision that names one */
#ifndef GVW_EVENTS_H
#define GVW_EVENTS_H

#include <stdint.h>

#include "config.h"
#include "gather.h"
#include "store.h"

struct kube;

/*
 * Writes the Event for a finished decision d (audit row audit_id) when
 * EVENTS is on, an API server is configured, d names a victim and its result
 * is recycled, released, would_recycle, blocked or failed (rate_limited and
 * coalesced write none). gr (may be NULL) is the evidence the decision was
 * taken on: it gives the victim's UID. Fire and forget: everything is copied,
 * and a failure is logged and counted in gpu_vram_watchdog_events_errors_total,
 * never reported back, so the decision stays as it was.
 */
void events_on_decision(struct kube *kube, const struct config *cfg,
                        const struct store_decision *d, int64_t audit_id,
                        const struct gather_answer *gr);

#endif
