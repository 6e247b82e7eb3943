/* fuzz_alert.c -- libFuzzer target: the Alertmanager webhook payload parser */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "alert.h"
#include "fuzz_check.h"
#include "node_name.h"

/* The node label as remedy.c judges it: a node name is lower-case
 * alphanumerics, '-' and '.'; anything shown is printable ASCII, bounded. */
static void
check_node_label(const char *v)
{
    char shown[NODE_NAME_SHOWN];
    size_t i, len;

    if (node_name_ok(v)) {
        len = strlen(v);
        FUZZ_CHECK(len > 0 && len <= NODE_NAME_MAX, "a node name of %zu bytes", len);
        for (i = 0; i < len; i++)
            FUZZ_CHECK((v[i] >= 'a' && v[i] <= 'z') || (v[i] >= '0' && v[i] <= '9') ||
                           v[i] == '-' || v[i] == '.',
                       "node name byte 0x%02x", (unsigned char)v[i]);
    }
    node_name_show(v, shown, sizeof(shown));
    len = strlen(shown);
    FUZZ_CHECK(len < sizeof(shown), "shown past its buffer");
    for (i = 0; i < len; i++)
        FUZZ_CHECK(shown[i] >= 0x20 && shown[i] < 0x7f, "shown byte 0x%02x",
                   (unsigned char)shown[i]);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct alert_batch b;
    char err[512];
    const struct alert *a;
    json_t *labels, *v;
    char *again;
    size_t i, j;

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
        for (j = 0; j < a->a_nlabels; j++) {
            FUZZ_CHECK(alert_label(a, a->a_labels[j].al_name) == a->a_labels[j].al_value,
                       "alerts[%zu]: label %zu not found by alert_label", i, j);
            FUZZ_CHECK(j == 0 ||
                           strcmp(a->a_labels[j - 1].al_name, a->a_labels[j].al_name) < 0,
                       "alerts[%zu]: labels not sorted or not unique", i);
        }
        if (alert_label(a, "node") != NULL)
            check_node_label(alert_label(a, "node"));
        FUZZ_CHECK(alert_label(a, "alertname") != NULL &&
                       strcmp(alert_label(a, "alertname"), a->a_alertname) == 0,
                   "alerts[%zu]: alertname and labels.alertname differ", i);
        FUZZ_CHECK(strcmp(alert_status_name(a), "firing") == 0 ||
                       strcmp(alert_status_name(a), "resolved") == 0,
                   "alerts[%zu]: status", i);
        /* The stored JSON is what the audit keeps: it must read back as the
         * same labels, and be what json_dumps(JSON_COMPACT | JSON_SORT_KEYS)
         * writes for them. */
        labels = json_loads(a->a_labels_json, 0, NULL);
        FUZZ_CHECK(json_is_object(labels) && json_object_size(labels) == a->a_nlabels,
                   "alerts[%zu]: labels_json does not read back: %s", i,
                   a->a_labels_json);
        for (j = 0; j < a->a_nlabels; j++) {
            v = json_object_get(labels, a->a_labels[j].al_name);
            FUZZ_CHECK(json_is_string(v) &&
                           strcmp(json_string_value(v), a->a_labels[j].al_value) == 0,
                       "alerts[%zu]: labels_json differs at %s: %s", i,
                       a->a_labels[j].al_name, a->a_labels_json);
        }
        again = json_dumps(labels, JSON_COMPACT | JSON_SORT_KEYS);
        FUZZ_CHECK(again != NULL && strcmp(again, a->a_labels_json) == 0,
                   "alerts[%zu]: labels_json is not as jansson writes it: %s", i,
                   a->a_labels_json);
        free(again);
        json_decref(labels);
        labels = json_loads(a->a_annotations_json, 0, NULL);
        FUZZ_CHECK(json_is_object(labels), "alerts[%zu]: annotations_json: %s", i,
                   a->a_annotations_json);
        again = json_dumps(labels, JSON_COMPACT | JSON_SORT_KEYS);
        FUZZ_CHECK(again != NULL && strcmp(again, a->a_annotations_json) == 0,
                   "alerts[%zu]: annotations_json is not as jansson writes it: %s", i,
                   a->a_annotations_json);
        free(again);
        json_decref(labels);
    }
    alert_batch_free(&b);
    FUZZ_CHECK(b.ab_alerts == NULL && b.ab_count == 0, "alert_batch_free left state");
    alert_batch_free(&b); /* twice is harmless */
    return 0;
}
