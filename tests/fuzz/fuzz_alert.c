/* fuzz_alert.c -- libFuzzer target: the Alertmanager webhook payload parser */
#include <stdint.h>
#include <string.h>

#include <jansson.h>

#include "alert.h"
#include "fuzz_check.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct alert_batch b;
    char err[512];
    const struct alert *a;
    json_t *labels;
    size_t i;

    err[0] = '\0';
    if (alert_batch_parse((const char *)data, size, &b, err, sizeof(err)) == -1) {
        FUZZ_CHECK_REASON(err, sizeof(err));
        /* "then nothing is allocated" */
        FUZZ_CHECK(b.ab_alerts == NULL && b.ab_count == 0,
                   "a failed parse left %zu alerts", b.ab_count);
        alert_batch_free(&b);
        return 0;
    }
    for (i = 0; i < b.ab_count; i++) {
        a = &b.ab_alerts[i];
        FUZZ_CHECK(a->a_alertname != NULL && a->a_alertname[0] != '\0',
                   "alerts[%zu]: empty alertname accepted", i);
        FUZZ_CHECK(a->a_fingerprint != NULL && a->a_starts_at != NULL &&
                       a->a_ends_at != NULL && a->a_annotations_json != NULL,
                   "alerts[%zu]: a string member left NULL", i);
        FUZZ_CHECK(json_is_object(a->a_labels), "alerts[%zu]: labels not an object", i);
        FUZZ_CHECK(alert_label(a, "alertname") != NULL &&
                       strcmp(alert_label(a, "alertname"), a->a_alertname) == 0,
                   "alerts[%zu]: alertname and labels.alertname differ", i);
        FUZZ_CHECK(strcmp(alert_status_name(a), "firing") == 0 ||
                       strcmp(alert_status_name(a), "resolved") == 0,
                   "alerts[%zu]: status", i);
        /* The stored JSON is what the audit keeps: it must read back as the
         * same labels. */
        labels = json_loads(a->a_labels_json, 0, NULL);
        FUZZ_CHECK(labels != NULL && json_equal(labels, a->a_labels),
                   "alerts[%zu]: labels_json does not read back: %s", i,
                   a->a_labels_json);
        json_decref(labels);
        labels = json_loads(a->a_annotations_json, 0, NULL);
        FUZZ_CHECK(json_is_object(labels), "alerts[%zu]: annotations_json: %s", i,
                   a->a_annotations_json);
        json_decref(labels);
    }
    alert_batch_free(&b);
    FUZZ_CHECK(b.ab_alerts == NULL && b.ab_count == 0, "alert_batch_free left state");
    alert_batch_free(&b); /* twice is harmless */
    return 0;
}
