/* kube_event.h -- the events.k8s.io/v1 Event the watchdog writes on a victim pod */
#ifndef GVW_KUBE_EVENT_H
#define GVW_KUBE_EVENT_H

#include <stdint.h>

#include "decision_result.h"

/* The API server refuses a longer note (events.k8s.io/v1 validation). */
#define KUBE_EVENT_NOTE_MAX 1024
/* Nor a longer reportingInstance, reason or action. */
#define KUBE_EVENT_FIELD_MAX 128

/* One Event; every string is borrowed. */
struct kube_event {
    const char *ke_namespace; /* the pod's: the Event lives there */
    const char *ke_pod;       /* regarding.name */
    const char *ke_uid;       /* regarding.uid; NULL or "" = left out */
    const char *ke_reason;    /* GPUVRAMRecycled, ... */
    const char *ke_action;    /* what was done: evict, delete, release */
    const char *ke_note;      /* the decision's reason; " (audit N)" is appended */
    int64_t ke_audit_id;      /* N */
    const char *ke_instance;  /* reportingInstance: the daemon's pod (hostname) */
    int64_t ke_time_us;       /* eventTime, unix microseconds */
};

/*
 * The Event as the API server takes it: apiVersion events.k8s.io/v1, kind
 * Event, metadata {name, namespace}, eventTime (MicroTime,
 * "2026-06-02T10:00:00.123456Z"), reportingController gpu-vram-watchdog,
 * reportingInstance, type Warning, reason, action, note, regarding {kind Pod,
 * apiVersion v1, namespace, name, uid}. metadata.name is the pod's name, a dot
 * and the time and audit id in hex, cut so it stays a 253-character DNS
 * subdomain; the note is cut (at a character boundary, before the audit
 * suffix) to KUBE_EVENT_NOTE_MAX bytes and instance/reason/action to
 * KUBE_EVENT_FIELD_MAX. Returns compact JSON (caller frees), or NULL when out
 * of memory.
 */
char *kube_event_json(const struct kube_event *ev);

/* The Event reason for a decision's result, or NULL when that result writes
 * no Event (rate_limited, coalesced, the skips, in_progress). */
const char *kube_event_reason(enum decision_result result);

#endif
