/* brakes_share.c -- high availability: the brakes (SETTLE windows, the recycles of the
 * last hour) as the Lease carries them, so they survive a failover
 *
 * In the process they are monotonic times; in the Lease they are wall-clock
 * unix milliseconds, the only clock two replicas share. A time read back is
 * turned into "so long from now" on the reader's wall clock and clamped (a
 * window to at most SETTLE, a recycle to the last hour), so a replica whose
 * clock is off can shorten or lengthen a brake by its skew, never turn it
 * into hours. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "remedy_int.h"

#define HOUR_MS 3600000LL
#define SHARE_MAX_WINDOWS 256 /* windows carried; the Lease's annotations are small */
#define SHARE_MAX_TEXT 65536  /* an annotation longer is not read */
#define SHARE_NAME_MAX 253    /* a node name */
#define SHARE_GPU_MAX 256     /* a GPU label value */

static int
add_window(json_t *arr, const char *node, const char *gpu, int64_t until_ms,
           const char *victim, int dry)
{
    json_t *w = json_pack("{s:s, s:I, s:s, s:b}", "node", node, "until_ms",
                          (json_int_t)until_ms, "victim", victim, "dry_run", dry);

    if (w == NULL ||
        (gpu != NULL && json_object_set_new(w, "gpu", json_string(gpu)) == -1)) {
        json_decref(w);
        return -1;
    }
    return json_array_append_new(arr, w);
}

char *
remedy_brakes_export(struct remedy *r, const struct gate_act *pending, int64_t wall_ms)
{
    double now = clock_mono_s();
    json_t *root = NULL, *settle, *recycles;
    char victim[600];
    size_t n = 0;
    char *text = NULL;
    int counted = pending != NULL && (strcmp(pending->ga_verb, "evict") == 0 ||
                                      strcmp(pending->ga_verb, "delete") == 0);

    if ((settle = json_array()) == NULL || (recycles = json_array()) == NULL) {
        json_decref(settle);
        return NULL;
    }
    /* The pending act's window takes a place too: the reader refuses a text
     * of more than SHARE_MAX_WINDOWS (and with it every brake). */
    for (struct node_state *s = r->r_nodes;
         s != NULL && n < SHARE_MAX_WINDOWS - (size_t)counted; s = s->n_next) {
        if (s->n_settle_until <= now)
            continue;
        if (add_window(settle, s->n_name, s->n_gpu,
                       wall_ms + (int64_t)((s->n_settle_until - now) * 1000.0),
                       s->n_last_victim, s->n_last_dry) == -1)
            goto out;
        n++;
    }
    /* The act about to be taken counts already: if this replica dies right
     * after it, the next leader still holds the node back and counts it. */
    if (counted) {
        snprintf(victim, sizeof(victim), "%s/%s", pending->ga_namespace, pending->ga_pod);
        if (add_window(settle, pending->ga_node, pending->ga_gpu,
                       wall_ms + r->r_cfg->c_settle_ms, victim,
                       r->r_cfg->c_dry_run) == -1)
            goto out;
    }
    for (size_t i = 0; i < r->r_recycle_count; i++)
        if (r->r_recycles[i] > now - 3600.0 &&
            json_array_append_new(
                recycles, json_integer(wall_ms - (int64_t)((now - r->r_recycles[i]) *
                                                           1000.0))) == -1)
            goto out;
    if (counted && json_array_append_new(recycles, json_integer(wall_ms)) == -1)
        goto out;
    if ((root = json_pack("{s:i, s:O, s:O}", "v", 1, "settle", settle, "recycles_ms",
                          recycles)) == NULL)
        goto out;
    text = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
out:
    json_decref(root);
    json_decref(settle);
    json_decref(recycles);
    return text;
}

/* One window read back onto its node state. -1 when it is not one. */
static int
import_window(struct remedy *r, json_t *w, int64_t wall_ms, double now)
{
    json_t *node = json_object_get(w, "node"), *gpu = json_object_get(w, "gpu");
    json_t *until = json_object_get(w, "until_ms"),
           *victim = json_object_get(w, "victim");
    json_t *dry = json_object_get(w, "dry_run");
    int64_t left;
    struct node_state *n;

    if (!json_is_string(node) || json_string_length(node) == 0 ||
        json_string_length(node) > SHARE_NAME_MAX ||
        (gpu != NULL &&
         (!json_is_string(gpu) || json_string_length(gpu) > SHARE_GPU_MAX)) ||
        !json_is_integer(until) || !json_is_string(victim) || !json_is_boolean(dry))
        return -1;
    left = (int64_t)json_integer_value(until) - wall_ms;
    if (left <= 0)
        return 0; /* over already */
    if (left > r->r_cfg->c_settle_ms)
        left =
            r->r_cfg->c_settle_ms; /* a clock ahead of ours: never longer than SETTLE */
    /* Another replica's text: an empty "gpu" is read as none (the node), as
     * absent is; inside the process NULL is the only "no GPU". */
    if ((n = brakes_node_get(r, json_string_value(node),
                             gpu != NULL && json_string_length(gpu) > 0
                                 ? json_string_value(gpu)
                                 : NULL)) == NULL)
        return 0; /* full of busy nodes: this window is lost, said by the caller */
    if (n->n_settle_until < now + (double)left / 1000.0) {
        n->n_settle_until = now + (double)left / 1000.0;
        snprintf(n->n_last_victim, sizeof(n->n_last_victim), "%s",
                 json_string_value(victim));
        n->n_last_dry = json_is_true(dry);
    }
    return 0;
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

int
remedy_brakes_import(struct remedy *r, const char *text, int64_t wall_ms, char *err,
                     size_t errlen)
{
    double now = clock_mono_s(), *ring = NULL;
    json_t *root, *settle, *recycles;
    size_t cap, kept = 0, i;

    if (text == NULL)
        return 0; /* the Lease carries none yet: the brakes stay as they are */
    if (strlen(text) > SHARE_MAX_TEXT ||
        (root = json_loads(text, JSON_REJECT_DUPLICATES, NULL)) == NULL) {
        snprintf(err, errlen, "the brakes annotation is not JSON (or over %d bytes)",
                 SHARE_MAX_TEXT);
        return -1;
    }
    settle = json_object_get(root, "settle");
    recycles = json_object_get(root, "recycles_ms");
    if (!json_is_array(settle) || !json_is_array(recycles) ||
        json_array_size(settle) > SHARE_MAX_WINDOWS ||
        json_array_size(recycles) > MAX_BRAKE_RING) {
        snprintf(err, errlen,
                 "the brakes annotation is not a settle and recycles_ms list");
        goto fail;
    }
    for (i = 0; i < json_array_size(recycles); i++)
        if (!json_is_integer(json_array_get(recycles, i))) {
            snprintf(err, errlen, "brakes: recycles_ms[%zu] is not an integer", i);
            goto fail;
        }
    cap = r->r_cfg->c_max_recycles_per_hour > MAX_BRAKE_RING
              ? MAX_BRAKE_RING
              : (size_t)r->r_cfg->c_max_recycles_per_hour;
    if (cap > 0 &&
        (ring = calloc(json_array_size(recycles) + 1, sizeof(*ring))) == NULL) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    /* What the Lease says replaces what this replica remembers: every leader
     * wrote its brakes there, this one's from its earlier terms included. */
    for (struct node_state *n = r->r_nodes; n != NULL; n = n->n_next)
        if (!n->n_busy)
            n->n_settle_until = 0;
    for (i = 0; i < json_array_size(settle); i++)
        if (import_window(r, json_array_get(settle, i), wall_ms, now) == -1) {
            snprintf(err, errlen,
                     "brakes: settle[%zu] is not a window; the rest were read", i);
            free(ring);
            json_decref(root);
            return -1;
        }
    if (cap > 0) {
        for (i = 0; i < json_array_size(recycles); i++) {
            int64_t ago =
                wall_ms - (int64_t)json_integer_value(json_array_get(recycles, i));
            if (ago >= HOUR_MS)
                continue;
            ring[kept++] = now - (ago > 0 ? (double)ago / 1000.0 : 0.0);
        }
        qsort(ring, kept, sizeof(*ring), cmp_double);
        /* The newest ones, if the Lease holds more than this replica's brake. */
        i = kept > cap ? kept - cap : 0;
        memcpy(r->r_recycles, ring + i, (kept - i) * sizeof(*ring));
        r->r_recycle_count = kept - i;
    }
    free(ring);
    json_decref(root);
    return 0;
fail:
    free(ring);
    json_decref(root);
    return -1;
}
