/* kube_event.c -- the events.k8s.io/v1 Event the watchdog writes on a victim pod */
#include "kube_event.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "utf8.h"

#define NAME_MAX_LEN 253 /* a DNS subdomain */

const char *
kube_event_reason(enum decision_result result)
{
    static const char *const reasons[RESULT_COUNT] = {
        [RESULT_RECYCLED] = "GPUVRAMRecycled",
        [RESULT_RELEASED] = "GPUVRAMReleased",
        [RESULT_WOULD_RECYCLE] = "GPUVRAMWouldRecycle",
        [RESULT_BLOCKED] = "GPUVRAMRecycleBlocked",
        [RESULT_FAILED] = "GPUVRAMRecycleFailed",
    };

    return (unsigned)result < RESULT_COUNT ? reasons[result] : NULL;
}

/* The length of s cut to at most max bytes, never inside a UTF-8 character. */
static size_t
cut_len(const char *s, size_t max)
{
    size_t n = strlen(s);

    if (n <= max)
        return n;
    n = max;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    return n;
}

/* The first cut_len(s, max) bytes of s as a JSON string, any byte that is not
 * well-formed UTF-8 shown as '?': jansson (and the API server) refuse such a
 * string, and the Event would be lost for one stray byte in a quoted message. */
static json_t *
str_cut(const char *s, size_t max)
{
    char *copy;
    json_t *j;

    s = s ? s : "";
    if ((copy = strndup(s, cut_len(s, max))) == NULL)
        return NULL;
    j = json_string(utf8_scrub(copy));
    free(copy);
    return j;
}

/* "<pod>.<time hex><id hex>": unique per pod and decision, kept a valid
 * DNS subdomain (the pod's name is one; a cut may not end in '-' or '.'). */
static void
event_name(const struct kube_event *ev, char *out, size_t outlen)
{
    char suffix[48];
    size_t keep;

    snprintf(suffix, sizeof(suffix), ".%" PRIx64 "%04" PRIx64, (uint64_t)ev->ke_time_us,
             (uint64_t)ev->ke_audit_id);
    keep = strlen(ev->ke_pod);
    if (keep > NAME_MAX_LEN - strlen(suffix))
        keep = NAME_MAX_LEN - strlen(suffix);
    while (keep > 0 && (ev->ke_pod[keep - 1] == '-' || ev->ke_pod[keep - 1] == '.'))
        keep--;
    snprintf(out, outlen, "%.*s%s", (int)keep, ev->ke_pod, suffix);
}

/* MicroTime: RFC 3339 UTC with exactly six fraction digits. */
static void
micro_time(int64_t us, char *out, size_t outlen)
{
    time_t sec = (time_t)(us / 1000000);
    int64_t frac = us % 1000000;
    struct tm tm;
    size_t n;

    if (frac < 0) {
        frac += 1000000;
        sec -= 1;
    }
    if (gmtime_r(&sec, &tm) == NULL ||
        (n = strftime(out, outlen, "%Y-%m-%dT%H:%M:%S", &tm)) == 0) {
        snprintf(out, outlen, "1970-01-01T00:00:00.000000Z"); /* can't happen */
        return;
    }
    snprintf(out + n, outlen - n, ".%06" PRId64 "Z", frac);
}

char *
kube_event_json(const struct kube_event *ev)
{
    char name[NAME_MAX_LEN + 1], when[48], suffix[40], *out = NULL;
    char note[KUBE_EVENT_NOTE_MAX + 1];
    json_t *regarding, *root;
    size_t keep;

    event_name(ev, name, sizeof(name));
    micro_time(ev->ke_time_us, when, sizeof(when));
    snprintf(suffix, sizeof(suffix), " (audit %" PRId64 ")", ev->ke_audit_id);
    keep = cut_len(ev->ke_note ? ev->ke_note : "", KUBE_EVENT_NOTE_MAX - strlen(suffix));
    snprintf(note, sizeof(note), "%.*s%s", (int)keep, ev->ke_note ? ev->ke_note : "",
             suffix);
    utf8_scrub(note); /* a message quoted into the reason may be cut mid-character */
    regarding = json_pack("{s:s, s:s, s:s, s:s}", "kind", "Pod", "apiVersion", "v1",
                          "namespace", ev->ke_namespace, "name", ev->ke_pod);
    if (regarding != NULL && ev->ke_uid != NULL && ev->ke_uid[0] != '\0' &&
        json_object_set_new(regarding, "uid", json_string(ev->ke_uid)) == -1) {
        json_decref(regarding);
        return NULL;
    }
    /* "o" steals each reference, also when json_pack fails. */
    root = json_pack("{s:s, s:s, s:{s:s, s:s}, s:s, s:s, s:o, s:s, s:o, s:o, s:o, s:s}",
                     "apiVersion", "events.k8s.io/v1", "kind", "Event", "metadata",
                     "name", name, "namespace", ev->ke_namespace, "eventTime", when,
                     "reportingController", "gpu-vram-watchdog", "reportingInstance",
                     str_cut(ev->ke_instance, KUBE_EVENT_FIELD_MAX), "type", "Warning",
                     "reason", str_cut(ev->ke_reason, KUBE_EVENT_FIELD_MAX), "action",
                     str_cut(ev->ke_action, KUBE_EVENT_FIELD_MAX), "regarding", regarding,
                     "note", note);
    if (root != NULL) {
        out = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
        json_decref(root);
    }
    return out;
}
