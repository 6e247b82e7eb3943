/* lease_json.h -- the coordination.k8s.io/v1 Lease as JSON: an answer read, a PUT or
 * POST body written (jansson; no I/O) */
#ifndef GVW_LEASE_JSON_H
#define GVW_LEASE_JSON_H

#include <stddef.h>

#include <jansson.h>

#include "election.h"

/* The annotations this project keeps on the Lease (SPEC "High availability"). */
#define LEASE_ANN_LAST_ACT "gpu-vram-watchdog/last-act" /* the act last fenced */
#define LEASE_ANN_BRAKES "gpu-vram-watchdog/brakes"     /* SETTLE windows, the hour */
#define LEASE_BODY_MAX (1024u * 1024)                   /* an answer larger is refused */

/* A Lease as the API server returned it. */
struct lease_obj {
    struct lease_record lo_record; /* its spec, checked (see lease_obj_parse) */
    char lo_rv[LEASE_RV_MAX];      /* metadata.resourceVersion, never empty */
    json_t *lo_json;               /* owned: the whole object, so a PUT keeps what
                                      others put in its metadata (labels, owners) */
};

/*
 * Reads an answer of len bytes (need not be NUL-terminated) into out. The
 * answer must be a JSON object of kind Lease (when it says), with a
 * metadata.resourceVersion of printable text, and a spec whose fields have
 * their types: holderIdentity a string of at most 253 bytes, the times
 * MicroTimes (RFC 3339; another text is read as absent), leaseDurationSeconds
 * and leaseTransitions integers (a negative one is 0, a duration over
 * LEASE_DURATION_MAX_S that). Absent fields are empty. Returns 0 (free out
 * with lease_obj_free()), or -1 with the reason in err and nothing allocated.
 */
int lease_obj_parse(const char *body, size_t len, struct lease_obj *out, char *err,
                    size_t errlen);

/* Frees what out holds; safe twice, and on a zeroed object. */
void lease_obj_free(struct lease_obj *o);

/* The annotation key's value (borrowed from o), or NULL when absent or not a
 * string. */
const char *lease_obj_annotation(const struct lease_obj *o, const char *key);

/*
 * The body of a write of rec: with base (the object last read, borrowed) a
 * copy of it whose metadata names ns/name with resourceVersion rv and whose
 * spec is rec (client-go's LeaseLock.Update); without base a new Lease
 * (Create; rv ignored). Each annotation given (brakes, last_act; NULL = left
 * as it is) is set. An empty time in rec is left out. Returns an owned,
 * NUL-terminated string (free()), or NULL when out of memory.
 */
char *lease_body(const struct lease_obj *base, const char *ns, const char *name,
                 const struct lease_record *rec, const char *rv, const char *brakes,
                 const char *last_act);

#endif
