/* alert.h -- the Alertmanager webhook payload (version 4), parsed and checked */
#ifndef GVW_ALERT_H
#define GVW_ALERT_H

#include <stddef.h>

/* One label of an alert. Both strings live in the alert's a_mem. */
struct alert_label {
    const char *al_name;
    const char *al_value;
};

/* One alert of a delivery. Judged by its own status, never the payload's.
 * Every string below is borrowed from a_mem, which the alert owns. */
struct alert {
    char *a_alertname;        /* labels.alertname, never empty */
    int a_firing;             /* status == "firing" (else "resolved") */
    char *a_fingerprint;      /* "" when absent */
    char *a_starts_at;        /* as sent, "" when absent */
    char *a_ends_at;          /* as sent, "" when absent */
    char *a_labels_json;      /* compact JSON object, keys sorted bytewise */
    char *a_annotations_json; /* compact JSON object, keys sorted ("{}" when absent) */
    const struct alert_label *a_labels; /* a_nlabels, sorted by al_name (strcmp) */
    size_t a_nlabels;
    void *a_mem; /* owned: the one allocation all of the above point into */
};

struct alert_batch {
    struct alert *ab_alerts; /* owned array */
    size_t ab_count;
};

/*
 * Parses a webhook body of len bytes (need not be NUL-terminated). Returns 0
 * and fills out (the caller frees it with alert_batch_free()), or -1 with a
 * reason fit for a 400 answer in err ("alerts[2].status: 'pending' is not
 * firing or resolved"); then nothing is allocated. The whole body must be
 * JSON, whatever is wrong with its shape. Unknown fields are ignored (newer
 * Alertmanagers add some); a missing "version" is accepted, any other than
 * "4" is not. The labels and annotations JSON are written as jansson's
 * json_dumps(JSON_COMPACT | JSON_SORT_KEYS) writes them, byte for byte.
 */
int alert_batch_parse(const char *body, size_t len, struct alert_batch *out, char *err,
                      size_t errlen);

/* Frees every alert and the array; b is left empty. b == NULL is a no-op. */
void alert_batch_free(struct alert_batch *b);

/* The value of label name, or NULL. Borrowed from a. */
const char *alert_label(const struct alert *a, const char *name);

const char *alert_status_name(const struct alert *a);

#endif
