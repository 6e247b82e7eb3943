/* alert.h -- the Alertmanager webhook payload (version 4), parsed and checked */
#ifndef GVW_ALERT_H
#define GVW_ALERT_H

#include <stddef.h>

#include <jansson.h>

/* One alert of a delivery. Judged by its own status, never the payload's. */
struct alert {
    char *a_alertname;       /* owned; labels.alertname, never empty */
    int a_firing;            /* status == "firing" (else "resolved") */
    char *a_fingerprint;     /* owned; "" when absent */
    char *a_starts_at;       /* owned; as sent, "" when absent */
    char *a_ends_at;         /* owned; as sent, "" when absent */
    char *a_labels_json;     /* owned; compact JSON object, keys sorted */
    char *a_annotations_json; /* owned; compact JSON object ("{}" when absent) */
    json_t *a_labels;        /* owned reference; every value a string */
};

struct alert_batch {
    struct alert *ab_alerts; /* owned array */
    size_t ab_count;
};

/*
 * Parses a webhook body of len bytes. Returns 0 and fills out (the caller
 * frees it with alert_batch_free()), or -1 with a reason fit for a 400 answer
 * in err ("alerts[2].status: 'pending' is not firing or resolved"); then
 * nothing is allocated. Unknown fields are ignored (newer Alertmanagers add
 * some); a missing "version" is accepted, any other than "4" is not.
 */
int alert_batch_parse(const char *body, size_t len, struct alert_batch *out, char *err,
                      size_t errlen);

void alert_batch_free(struct alert_batch *b);

/* The value of label name, or NULL. Borrowed from a. */
const char *alert_label(const struct alert *a, const char *name);

const char *alert_status_name(const struct alert *a);

#endif
