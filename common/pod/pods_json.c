/* pods_json.c -- reads a Kubernetes PodList into the one pod model every program reads
 *
 * One pass with the jscan pull reader, no DOM: a 5,000-pod list is ~5 MB and
 * the daemon reads a dozen fields of each pod. Members may come in any order,
 * so what a judgement needs is collected first and judged when its object
 * closes. A wrong shape does not stop the walk (the rest must still be JSON,
 * and kind may come after items); the first such error is reported unless
 * the body turns out not to be JSON at all. Finished pods (Succeeded,
 * Failed) are dropped as they are read, and a list past POD_LIST_MAX pods or
 * POD_LIST_MAX_TEXT bytes of kept strings is refused: the model stays small
 * whatever a body under the HTTP cap holds. The exporter reads the same way,
 * stricter (POD_STRICT), and what only some programs keep is asked for with
 * POD_KEEP_*. This file walks the list and its items; a pod's parts are read in
 * pods_meta.c (metadata), pods_containers.c (the declarations) and pods_status.c. */
#include "pods_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pods_walk.h"
#include "quantity.h"
#include "strpool.h"

/* Records the first shape error of an item. */
static void
item_error(struct walk *w, size_t idx, const char *what)
{
    if (w->w_why[0] == '\0')
        snprintf(w->w_why, sizeof(w->w_why), "not a PodList: items[%zu] %s", idx, what);
}

/* p holds no budget (a finished or reservation pod kept, or the budgets refused). */
static void
no_budget(struct pod *p)
{
    p->p_budget_state = BUDGET_NONE;
    p->p_budget_mib = 0;
    p->p_budget_error = NULL;
    p->p_budget_source = NULL;
    p->p_budget_decl = NULL;
    p->p_budget_gpus = 0;
    p->p_budget_base_mib = 0;
}

/* The item's shape once it closed: 0 when it is a pod, 1 when it is not (the
 * error recorded), -1 under POD_STRICT, which refuses the list. */
static int
item_judged(struct walk *w, size_t idx, const struct pod *p, int have_md)
{
    static const char *const req[] = {"namespace", "name", "uid"};
    const char *const v[] = {p->p_namespace, p->p_name, p->p_uid};
    char what[96];
    int k;

    if (W_STRICT(w)) {
        for (k = 0; k < 3; k++)
            if (v[k] == NULL || v[k][0] == '\0')
                return js_fail(&w->w_s, "an item lacks metadata.uid, namespace or name");
        return 0;
    }
    if (!have_md) {
        item_error(w, idx, "has no metadata object");
        return 1;
    }
    for (k = 0; k < 3; k++)
        if (v[k] == NULL) {
            snprintf(what, sizeof(what), "metadata.%s is missing, empty or not a string",
                     req[k]);
            item_error(w, idx, what);
            return 1;
        }
    return 0;
}

/* One item into p. A wrong shape is recorded and the item skipped: 0; -1 on
 * a read error or out of memory (or, under POD_STRICT, a wrong shape). */
static int
read_item(struct walk *w, size_t idx, struct pod *p)
{
    struct js_str key;
    unsigned seen = 0, depth = w->w_s.js_depth;
    int rc, have_md = 0;
    char qerr[64];
    int64_t n;

    pods_budget_pod(&w->w_budget);
    p->p_kai_devices = 1;
    if (W_STRICT(w) && walk_shape(w, JS_OBJECT, "an item is not an object") == -1)
        return -1;
    if (!W_STRICT(w)) {
        if (js_peek(&w->w_s) != JS_OBJECT) {
            item_error(w, idx, "has no metadata object");
            return js_skip(&w->w_s);
        }
        if (js_object_begin(&w->w_s) == -1)
            return -1;
    }
    while ((rc = js_object_next(&w->w_s, &key)) == 1) {
        if (js_str_eq(&key, "metadata")) {
            if (js_once(&w->w_s, &seen, 1, "metadata") == -1)
                return -1;
            if (js_peek(&w->w_s) != JS_OBJECT) {
                if (W_STRICT(w)) /* refused: the value is no object */
                    return walk_shape(w, JS_OBJECT, "metadata is not an object");
                item_error(w, idx, "has no metadata object");
                return js_leave(&w->w_s, depth);
            }
            have_md = 1;
            rc = walk_metadata(w, p);
        } else if (js_str_eq(&key, "spec")) {
            if (!w->w_budgets || (rc = walk_once(w, &seen, 2, "spec")) == 1)
                rc = js_skip(&w->w_s);
            else if (rc == 0)
                rc = walk_spec(w, p);
        } else if (js_str_eq(&key, "status")) {
            rc = js_once(&w->w_s, &seen, 4, "status") == -1 ? -1 : walk_status(w, p);
        } else {
            rc = js_skip(&w->w_s);
        }
        if (rc == -1)
            return -1;
    }
    if (rc == -1)
        return -1;
    if ((rc = item_judged(w, idx, p, have_md)) != 0)
        return rc == -1 ? -1 : 0;
    if ((w->w_keep & POD_KEEP_WORKLOAD) && w->w_budget.pb_devices != NULL &&
        w->w_budget.pb_devices != BSRC_NOT_STRING &&
        quantity_parse(w->w_budget.pb_devices, &n, qerr, sizeof(qerr)) == 0 && n >= 1 &&
        n <= 1024)
        p->p_kai_devices = n;
    if (w->w_budgets && pods_budget_judge(&w->w_budget, w->w_opts->po_resource, p) == -1)
        return w->w_oom = 1, -1;
    return 0;
}

/* The items array into out; the pods array grows by doubling. A finished
 * pod is read (its shape is checked like any other's), then dropped with the
 * strings it kept (or kept, POD_KEEP_FINISHED, counting toward no bound).
 * Past the bounds the walk stops: -1 with w_too_large. */
static int
read_items(struct walk *w, struct pod_list *out)
{
    size_t cap = 0, idx = 0, live = 0, text = 0, before, ctrs, decls;
    struct pod *grown, *p;
    struct strpool_mark mark;
    int rc, drop;

    if (W_STRICT(w) ? walk_shape(w, JS_ARRAY, "items is not an array") == -1
                    : js_array_begin(&w->w_s) == -1)
        return -1;
    for (; (rc = js_array_next(&w->w_s)) == 1; idx++) {
        if (w->w_why[0] != '\0') { /* an item was wrong: only check the rest */
            if (js_skip(&w->w_s) == -1)
                return -1;
            continue;
        }
        if (out->pl_count == cap) {
            cap = cap ? cap * 2 : 16;
            if (cap > SIZE_MAX / sizeof(*grown) ||
                (grown = realloc(out->pl_pods, cap * sizeof(*grown))) == NULL)
                return w->w_oom = 1, -1;
            out->pl_pods = grown;
        }
        /* Counted first, so pod_list_free() sees a half-read pod too. */
        p = &out->pl_pods[out->pl_count++];
        memset(p, 0, sizeof(*p));
        strpool_mark(w->w_pool, &mark);
        before = strpool_used(w->w_pool);
        ctrs = w->w_ctr_count;
        decls = w->w_decl_count;
        w->w_finished = 0;
        if (read_item(w, idx, p) == -1)
            return -1;
        p->p_finished = w->w_finished;
        p->p_reservation = w->w_budget.pb_drop;
        /* A finished pod holds no seat, a KAI/Run:ai reservation pod is no
         * tenant: neither is kept, nor are its strings, unless asked for. */
        drop =
            (p->p_finished && !(w->w_keep & POD_KEEP_FINISHED)) ||
            (p->p_reservation && !(w->w_keep & (POD_KEEP_FINISHED | POD_KEEP_RESERVED)));
        if (drop) {
            out->pl_count--;
            strpool_rewind(w->w_pool, &mark);
            w->w_ctr_count = ctrs;
            w->w_decl_count = decls;
            continue;
        }
        if (p->p_finished || p->p_reservation)
            no_budget(p);
        if (p->p_finished)
            continue;
        live++;
        text += strpool_used(w->w_pool) - before;
        if (live > POD_LIST_MAX || text > POD_LIST_MAX_TEXT) {
            w->w_too_large = live > POD_LIST_MAX ? 1 : 2;
            return -1;
        }
    }
    return rc;
}

/* The top level must be a PodList; a Status (an API error) says why not. */
static int
kind_error(const struct js_held *kind, const struct js_held *message, char *why)
{
    char shown[QUOTED];

    if (kind->h_type != JS_STRING || js_str_eq(&kind->h_str, "PodList"))
        return 0;
    if (js_str_eq(&kind->h_str, "Status") && message->h_type == JS_STRING) {
        walk_quote_str(&message->h_str, shown);
        snprintf(why, WHY, "not a PodList: the API server answered \"%s\"", shown);
    } else {
        walk_quote_str(&kind->h_str, shown);
        snprintf(why, WHY, "not a PodList: kind is \"%s\"", shown);
    }
    return -1;
}

/* kind or message at the top: held, or skipped when repeated under POD_STRICT. */
static int
read_top_str(struct walk *w, unsigned *seen, unsigned bit, const char *key,
             struct js_held *h)
{
    int rc = walk_once(w, seen, bit, key);

    return rc == -1 ? -1 : rc == 0 ? js_hold(&w->w_s, h) : js_skip(&w->w_s);
}

/* Walks the whole body. 0 when it is JSON (why may then hold a shape
 * error), -1 when it is not or memory ran out. Under POD_STRICT a document that
 * is not a PodList is -1, and what only the budgets need goes to w_soft. */
static int
walk_top(struct walk *w, struct pod_list *out, char *why)
{
    struct js_held kind = {JS_ERROR, {NULL, 0, 0}, 0}, message = kind;
    enum js_type t = js_peek(&w->w_s);
    char soft[WHY];
    struct js_str key;
    unsigned seen = 0;
    int rc, items = 0;

    if (W_STRICT(w) && walk_shape(w, JS_OBJECT, "not a PodList: not an object") == -1)
        return -1;
    if (!W_STRICT(w) && t != JS_OBJECT) {
        if (t == JS_ARRAY && js_skip(&w->w_s) == 0 && js_end(&w->w_s) == 0) {
            snprintf(why, WHY, "not a PodList: the document is a JSON array");
            return 0;
        }
        /* Like any JSON library taking only an object or array at the top. */
        return t == JS_ARRAY ? -1 : js_fail(&w->w_s, "expected an object");
    }
    if (!W_STRICT(w) && js_object_begin(&w->w_s) == -1)
        return -1;
    while ((rc = js_object_next(&w->w_s, &key)) == 1) {
        if (js_str_eq(&key, "items")) {
            if (js_once(&w->w_s, &seen, 1, "items") == -1)
                return -1;
            if (W_STRICT(w) || js_peek(&w->w_s) == JS_ARRAY) {
                items = 1;
                rc = read_items(w, out);
            } else {
                rc = js_skip(&w->w_s);
            }
        } else if (js_str_eq(&key, "kind")) {
            rc = read_top_str(w, &seen, 2, "kind", &kind);
        } else if (js_str_eq(&key, "message")) {
            rc = read_top_str(w, &seen, 4, "message", &message);
        } else {
            rc = js_skip(&w->w_s);
        }
        if (rc == -1)
            return -1;
    }
    if (rc == -1 || js_end(&w->w_s) == -1)
        return -1;
    if (W_STRICT(w)) {
        if (!items)
            return js_fail(&w->w_s, "not a PodList: no items array");
        if (kind_error(&kind, &message, soft) == -1)
            walk_soft(w, soft);
        return 0;
    }
    /* Judged in this order: what the document is, then what it holds. */
    if (kind_error(&kind, &message, why) == -1)
        return 0;
    if (!items)
        snprintf(why, WHY, "not a PodList: no items array");
    else if (w->w_why[0] != '\0')
        snprintf(why, WHY, "%s", w->w_why);
    return 0;
}

/* The list read whole: budgets refused under POD_STRICT, and each pod pointed at its
 * containers and declarations. 0, or -1 when out of memory. */
static int
walk_done(struct walk *w, struct pod_list *out)
{
    size_t i, c = 0, d = 0;

    if (w->w_soft[0] != '\0') {
        for (i = 0; i < out->pl_count; i++)
            no_budget(&out->pl_pods[i]);
        if ((out->pl_budgets_error =
                 strpool_dup(w->w_pool, w->w_soft, strlen(w->w_soft))) == NULL)
            return -1;
    }
    for (i = 0; i < out->pl_count; i++) {
        struct pod *p = &out->pl_pods[i];
        p->p_containers = p->p_container_count > 0 ? out->pl_containers + c : NULL;
        p->p_decls = p->p_decl_count > 0 ? out->pl_decls + d : NULL;
        c += p->p_container_count;
        d += p->p_decl_count;
    }
    return 0;
}

void
pods_json_too_large(int by_text, char *err, size_t errlen)
{
    if (by_text)
        snprintf(err, errlen,
                 POD_LIST_TOO_LARGE ": the names and annotations of its pods that have "
                                    "not finished pass %u MiB (refused to stay within "
                                    "the memory limit)",
                 POD_LIST_MAX_TEXT >> 20);
    else
        snprintf(err, errlen,
                 POD_LIST_TOO_LARGE ": more than %d pods that have not finished "
                                    "(refused to stay within the memory limit)",
                 POD_LIST_MAX);
}

int
pods_json_parse(const char *body, size_t len, const struct pod_parse_opts *opts,
                struct pod_list *out, char *err, size_t errlen)
{
    return pods_json_parse_sources(body, len, opts, NULL, out, err, errlen);
}

int
pods_json_parse_sources(const char *body, size_t len, const struct pod_parse_opts *opts,
                        const struct bsrc_order *sources, struct pod_list *out, char *err,
                        size_t errlen)
{
    unsigned keep = opts != NULL ? opts->po_keep : 0;
    int strict = (keep & POD_STRICT) != 0, budgets;
    struct walk *w = NULL;
    char why[WHY];

    memset(out, 0, sizeof(*out));
    why[0] = '\0';
    budgets = opts != NULL && opts->po_resource != NULL && opts->po_resource[0] != '\0';
    if (!budgets && !strict) {
        snprintf(why, sizeof(why), "no resource name to read budgets from");
        goto fail;
    }
    if (!strict && (body == NULL || len == 0)) {
        snprintf(why, sizeof(why), "not a PodList: empty body");
        goto fail;
    }
    /* On the heap: the reader's frames are a few hundred bytes. */
    if ((w = calloc(1, sizeof(*w))) == NULL || (out->pl_pool = strpool_new()) == NULL) {
        snprintf(why, sizeof(why), "out of memory");
        goto fail;
    }
    w->w_opts = opts;
    w->w_keep = keep;
    w->w_budgets = budgets;
    w->w_pool = out->pl_pool;
    w->w_out = out;
    pods_budget_init(&w->w_budget, budgets ? sources : NULL, out->pl_pool, keep);
    w->w_budget.pb_table = opts->po_claims;
    js_init(&w->w_s, body, len);
    if (walk_top(w, out, why) == -1) {
        if (w->w_oom)
            snprintf(why, sizeof(why), "out of memory");
        else if (w->w_too_large)
            pods_json_too_large(w->w_too_large == 2, why, sizeof(why));
        else if (strict) /* the exporter's words: its reader's own */
            snprintf(why, sizeof(why), "%s", w->w_s.js_err);
        else
            snprintf(why, sizeof(why), "not JSON: %s", w->w_s.js_err);
        goto fail;
    }
    if (why[0] != '\0')
        goto fail;
    if (walk_done(w, out) == -1) {
        snprintf(why, sizeof(why), "out of memory");
        goto fail;
    }
    pods_budget_free(&w->w_budget);
    free(w);
    return 0;

fail:
    if (w != NULL)
        pods_budget_free(&w->w_budget);
    free(w);
    pod_list_free(out);
    if (err != NULL && errlen > 0)
        snprintf(err, errlen, "%s", why);
    return -1;
}
