/* kube_status.c -- one readable line from a Kubernetes error answer (a Status object) */
#include "kube_status.h"

#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "buf.h"

/* Appends s with control bytes as spaces: these lines go to logs and the audit.
 * ascii: s is not known to be UTF-8 (not from JSON), so other bytes go too. */
static void
append_clean(struct buf *b, const char *s, size_t len, int ascii)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char u = (unsigned char)s[i];
        char c = (u < 0x20 || u == 0x7f || (ascii && u > 0x7f)) ? ' ' : s[i];
        if (buf_append(b, &c, 1) == -1)
            return;
    }
}

/* Appends " (reason: message; ...)" for the causes that carry a message. */
static void
append_causes(struct buf *b, const json_t *causes)
{
    size_t shown = 0;

    for (size_t i = 0; i < json_array_size(causes); i++) {
        const json_t *cause = json_array_get(causes, i);
        const char *cr = json_string_value(json_object_get(cause, "reason"));
        const char *cm = json_string_value(json_object_get(cause, "message"));

        if (cm == NULL)
            continue;
        buf_append(b, shown++ == 0 ? " (" : "; ", 2);
        if (cr != NULL) {
            append_clean(b, cr, strlen(cr), 0);
            buf_append(b, ": ", 2);
        }
        append_clean(b, cm, strlen(cm), 0);
    }
    if (shown > 0)
        buf_append(b, ")", 1);
}

void
kube_json_status_message(const char *body, size_t len, char *out, size_t outlen)
{
    json_t *root;
    const char *msg;
    struct buf b;

    if (outlen == 0)
        return;
    out[0] = '\0';
    buf_init(&b, outlen - 1); /* appends past it fail: the line is cut, not overrun */
    root = json_loadb(body, len, 0, NULL);
    if ((msg = json_string_value(json_object_get(root, "message"))) != NULL) {
        append_clean(&b, msg, strlen(msg), 0);
        append_causes(&b, json_object_get(json_object_get(root, "details"), "causes"));
    } else if (len > 0) {
        append_clean(&b, body, len < 200 ? len : 200, 1);
    } else {
        buf_append(&b, "(empty body)", 12);
    }
    json_decref(root);
    if (b.b_data != NULL)
        snprintf(out, outlen, "%s", b.b_data);
    buf_free(&b);
}

/* Whether causes[] holds {"reason": "DisruptionBudget"}. */
static int
has_budget_cause(const json_t *causes)
{
    for (size_t i = 0; i < json_array_size(causes); i++) {
        const char *r =
            json_string_value(json_object_get(json_array_get(causes, i), "reason"));
        if (r != NULL && strcmp(r, "DisruptionBudget") == 0)
            return 1;
    }
    return 0;
}

int
kube_status_pdb_refusal(long code, const char *body, size_t len)
{
    json_t *root = json_loadb(body, len, 0, NULL);
    const json_t *details = json_object_get(root, "details");
    const char *kind = json_string_value(json_object_get(details, "kind"));
    const char *msg = json_string_value(json_object_get(root, "message"));
    int yes = 0;

    if (code == 429 || code == 403)
        yes = has_budget_cause(json_object_get(details, "causes"));
    if (code == 403 && kind != NULL)
        yes = yes || strcmp(kind, "poddisruptionbudget") == 0 ||
              strcmp(kind, "poddisruptionbudgets") == 0;
    if (code == 500 && msg != NULL)
        yes = strstr(msg, "more than one PodDisruptionBudget") != NULL;
    json_decref(root);
    return yes;
}

int
kube_status_uid_conflict(const char *body, size_t len)
{
    json_t *root = json_loadb(body, len, 0, NULL);
    const char *msg = json_string_value(json_object_get(root, "message"));
    int yes = msg != NULL && (strstr(msg, "UID in precondition") != NULL ||
                              strstr(msg, "UID in the precondition") != NULL);

    json_decref(root);
    return yes;
}
