/* suggest_print.c -- `budgets --suggest` as a table, JSON or strategic-merge patches
 *
 * JSON (one object):
 *   window_s, step_s, headroom_pct, query   what was read, and how
 *   workloads   by namespace/Kind/name:
 *     namespace, kind (null: a pod without a controller), name,
 *     pods          live pods holding a seat
 *     pods_seen     pods (live or gone) with samples in the window
 *     declared      "declared", "none", "mixed" (live pods differ), "unreadable"
 *     declared_mib  the per-pod budget declared (mixed: the largest), or null
 *     samples, history_s   samples, and steps with a sample x step
 *     p99_mib, max_mib     of the samples, or null without any
 *     suggested_mib, change_mib   or null, with why_not: "too_little_history",
 *                   "no_controller", "no_samples"
 *   nodes:  node, capacity_mib (null: capacity_error says why),
 *     declared_mib        its live pods' budgets as declared
 *     suggested_seats_mib the same with every suggestion applied (a workload
 *                         without one keeps its pods' declared budgets)
 *     fits                suggested seats <= capacity (null when unknown)
 *     over_mib            by how much they do not fit (0 when they do)
 *     cut                 what to move off the node until it fits:
 *                         {workload, seat_mib}
 *   unclaimed   pods in Prometheus no live workload claims (not counted):
 *               {pod: "namespace/pod", samples}
 */
#include "suggest_print.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "audit_format.h"
#include "json_build.h"
#include "termtext.h"

int
sg_workload_shown(const struct sg_workload *w)
{
    return w->w_declared != SG_DECLARED_NONE || w->w_hist.h_n > 0;
}

static const char *
why_not(const struct sg_workload *w)
{
    if (w->w_suggested)
        return NULL;
    if (w->w_hist.h_n == 0)
        return "no_samples";
    return w->w_kind == NULL ? "no_controller" : "too_little_history";
}

static const char *
declared_word(enum sg_declared d)
{
    static const char *const words[] = {"none", "declared", "mixed", "unreadable"};
    return words[d];
}

static int
cmp_label(const void *a, const void *b)
{
    const struct sg_workload *x = *(const struct sg_workload *const *)a;
    const struct sg_workload *y = *(const struct sg_workload *const *)b;
    return strcmp(x->w_label, y->w_label);
}

/* The shown workloads, by label (caller frees). NULL only when out of memory. */
static const struct sg_workload **
sorted(const struct sg_acc *a, size_t *n)
{
    const struct sg_workload **v = malloc((a->a_wl_count + 1) * sizeof(*v));

    *n = 0;
    if (v == NULL)
        return NULL;
    for (size_t i = 0; i < a->a_wl_count; i++)
        if (sg_workload_shown(&a->a_wl[i]))
            v[(*n)++] = &a->a_wl[i];
    qsort(v, *n, sizeof(*v), cmp_label);
    return v;
}

int
sg_patch_split(const struct sg_workload *w, int64_t **mib, size_t *n)
{
    const struct pod *p = w->w_template;
    int64_t total = 0, given = 0, *v;
    size_t declaring = 0, best = SIZE_MAX;
    int known = 1;

    if (p == NULL || p->p_decl_count == 0)
        return -1;
    *n = p->p_decl_count;
    if ((v = *mib = calloc(*n, sizeof(*v))) == NULL)
        return -1;
    for (size_t i = 0; i < *n; i++) {
        const struct pod_decl *c = &p->p_decls[i];
        if (!c->pd_declares)
            continue;
        declaring++;
        if (c->pd_mib < 0)
            known = 0;
        else
            total += c->pd_mib;
        if (best == SIZE_MAX || c->pd_mib > p->p_decls[best].pd_mib)
            best = i;
    }
    if (declaring == 0) {
        v[0] = w->w_suggested_mib;
        return 0;
    }
    for (size_t i = 0; i < *n; i++) {
        const struct pod_decl *c = &p->p_decls[i];
        if (!c->pd_declares)
            continue;
        /* v = S * share / total, in 128 bits: S and shares are MiB. */
        v[i] = known && total > 0
                   ? (int64_t)((__int128)w->w_suggested_mib * c->pd_mib / total)
                   : w->w_suggested_mib / (int64_t)declaring;
        given += v[i];
    }
    v[best] += w->w_suggested_mib - given;
    return 0;
}

/* w's source, when it is not GPUMEM_RESOURCE's: "hami", "kai", "dra", else NULL. */
static const char *
other_source(const struct sg_workload *w)
{
    const char *s = w->w_template != NULL ? w->w_template->p_budget_source : NULL;

    return s != NULL && strcmp(s, "resource") != 0 ? s : NULL;
}

/* HAMi: the MiB per GPU each HAMi container gets (*per), over *gpus GPUs. */
static int
hami_per_gpu(const struct sg_workload *w, int64_t *per)
{
    int64_t gpus = 0;

    for (size_t i = 0; i < w->w_template->p_decl_count; i++)
        if (w->w_template->p_decls[i].pd_hami)
            gpus += w->w_template->p_decls[i].pd_gpus;
    if (gpus <= 0)
        return -1;
    *per = (w->w_suggested_mib + gpus - 1) / gpus;
    return 0;
}

static int64_t
kai_memory(const struct sg_workload *w)
{
    int64_t n = w->w_template->p_kai_devices > 0 ? w->w_template->p_kai_devices : 1;

    return (w->w_suggested_mib + n - 1) / n;
}

int
sg_declaration(const struct sg_workload *w, char *buf, size_t len)
{
    const char *src = other_source(w);
    int64_t per;
    size_t off = 0;
    int n;

    if (src == NULL || !w->w_suggested)
        return 0;
    if (strcmp(src, "hami") == 0) {
        if (hami_per_gpu(w, &per) == -1) {
            snprintf(buf, len, "no HAMi container is given a GPU");
            return -1;
        }
        for (size_t i = 0; i < w->w_template->p_decl_count; i++) {
            const struct pod_decl *c = &w->w_template->p_decls[i];
            if (!c->pd_hami || c->pd_gpus <= 0)
                continue;
            n = snprintf(buf + off, len - off,
                         "%scontainer \"%s\": " HAMI_GPUMEM ": %" PRId64, off ? "; " : "",
                         c->pd_name, per);
            if (n < 0 || (size_t)n >= len - off)
                break;
            off += (size_t)n;
        }
        return 1;
    }
    if (strcmp(src, "kai") == 0) {
        snprintf(buf, len, "annotation " KAI_GPU_MEMORY ": \"%" PRId64 "\"",
                 kai_memory(w));
        return 1;
    }
    snprintf(buf, len, "claim request capacity.requests.memory: %" PRId64 "Mi",
             w->w_suggested_mib);
    return 1;
}

/* The patch for w in its own source's form (HAMi: the containers' limits; KAI:
 * the template's annotations), or NULL with *why. */
static json_t *
source_patch(const struct sg_workload *w, const char *src, const char *api,
             const char **why)
{
    json_t *doc = NULL, *containers = NULL, *spec = NULL;
    char val[32];
    int64_t per;

    if (strcmp(src, "dra") == 0) {
        *why = "a DRA budget is the claim's request: set capacity.requests.memory in its "
               "ResourceClaim or ResourceClaimTemplate";
        return NULL;
    }
    if (strcmp(src, "hami") == 0) {
        if (hami_per_gpu(w, &per) == -1) {
            *why = "no HAMi container is given a GPU";
            return NULL;
        }
        snprintf(val, sizeof(val), "%" PRId64, per);
        if ((containers = json_array()) == NULL)
            goto fail;
        for (size_t i = 0; i < w->w_template->p_decl_count; i++) {
            const struct pod_decl *c = &w->w_template->p_decls[i];
            json_t *ct;
            if (!c->pd_hami || c->pd_gpus <= 0)
                continue;
            ct = json_pack("{s:s, s:{s:{s:s}}}", "name", c->pd_name, "resources",
                           "limits", HAMI_GPUMEM, val);
            if (ct == NULL || json_array_append_new(containers, ct) == -1)
                goto fail;
        }
        spec = json_pack("{s:{s:{s:O}}}", "template", "spec", "containers", containers);
    } else {
        snprintf(val, sizeof(val), "%" PRId64, kai_memory(w));
        /* gpu-fraction removed: both annotations at once are unreadable */
        spec = json_pack("{s:{s:{s:{s:s, s:n}}}}", "template", "metadata", "annotations",
                         KAI_GPU_MEMORY, val, KAI_GPU_FRACTION);
    }
    if (spec == NULL || (doc = json_object()) == NULL ||
        jb_set(doc, "apiVersion", json_string(api)) ||
        jb_set(doc, "kind", json_string(w->w_kind)) ||
        jb_set(doc, "metadata",
               json_pack("{s:s, s:s}", "name", w->w_name, "namespace", w->w_namespace)) ||
        jb_set(doc, "spec", json_incref(spec)))
        goto fail;
    json_decref(spec);
    json_decref(containers);
    return doc;
fail:
    json_decref(spec);
    json_decref(containers);
    json_decref(doc);
    return NULL;
}

json_t *
sg_patch_json(const struct sg_workload *w, const char *resource, const char **why)
{
    static const char *const apps[] = {"Deployment", "StatefulSet", "DaemonSet",
                                       "ReplicaSet"};
    const char *api = NULL;
    json_t *doc = NULL, *containers = NULL;
    int64_t *mib = NULL;
    size_t n = 0;
    char val[32];
    int none = 1;

    *why = NULL;
    for (size_t i = 0; w->w_kind != NULL && i < 4; i++)
        if (strcmp(w->w_kind, apps[i]) == 0)
            api = "apps/v1";
    if (w->w_kind != NULL && strcmp(w->w_kind, "ReplicationController") == 0)
        api = "v1";
    if (api == NULL) {
        *why = w->w_kind == NULL ? "no controller to patch"
               : strcmp(w->w_kind, "Job") == 0
                   ? "a Job's pod template cannot be changed: change what creates it"
                   : "its kind has no pod template this command knows";
        return NULL;
    }
    if (other_source(w) != NULL)
        return source_patch(w, other_source(w), api, why);
    if (sg_patch_split(w, &mib, &n) == -1) {
        *why = "no container to set it on";
        return NULL;
    }
    if ((doc = json_object()) == NULL || (containers = json_array()) == NULL)
        goto fail;
    for (size_t i = 0; i < n; i++)
        if (w->w_template->p_decls[i].pd_declares)
            none = 0;
    for (size_t i = 0; i < n; i++) {
        const struct pod_decl *c = &w->w_template->p_decls[i];
        json_t *ct;
        if (!c->pd_declares && !(none && i == 0))
            continue;
        snprintf(val, sizeof(val), "%" PRId64, mib[i]);
        ct = json_pack("{s:s, s:{s:{s:s}, s:{s:s}}}", "name", c->pd_name, "resources",
                       "limits", resource, val, "requests", resource, val);
        if (ct == NULL || json_array_append_new(containers, ct) == -1)
            goto fail;
    }
    if (jb_set(doc, "apiVersion", json_string(api)) ||
        jb_set(doc, "kind", json_string(w->w_kind)) ||
        jb_set(doc, "metadata",
               json_pack("{s:s, s:s}", "name", w->w_name, "namespace", w->w_namespace)) ||
        jb_set(doc, "spec",
               json_pack("{s:{s:{s:O}}}", "template", "spec", "containers", containers)))
        goto fail;
    json_decref(containers);
    free(mib);
    return doc;
fail:
    json_decref(containers);
    json_decref(doc);
    free(mib);
    return NULL;
}

static json_t *
workload_json(const struct sg_workload *w)
{
    json_t *o = json_object();
    int has = w->w_hist.h_n > 0,
        dec = w->w_declared == SG_DECLARED_OK || w->w_declared == SG_DECLARED_MIXED;
    const char *why = why_not(w);
    char decl[512];

    if (o == NULL || jb_set(o, "namespace", json_string(w->w_namespace)) ||
        jb_set(o, "kind", w->w_kind ? json_string(w->w_kind) : json_null()) ||
        jb_set(o, "name", json_string(w->w_name)) ||
        jb_set(o, "pods", json_integer((json_int_t)w->w_live)) ||
        jb_set(o, "pods_seen", json_integer((json_int_t)w->w_pods_seen)) ||
        jb_set(o, "declared", json_string(declared_word(w->w_declared))) ||
        jb_set(o, "declared_mib", jb_int_or_null(dec, w->w_declared_mib)) ||
        jb_set(o, "samples", json_integer((json_int_t)w->w_hist.h_n)) ||
        jb_set(o, "history_s", json_integer((json_int_t)w->w_history_s)) ||
        jb_set(o, "p99_mib", jb_int_or_null(has, w->w_p99)) ||
        jb_set(o, "max_mib", jb_int_or_null(has, w->w_max)) ||
        jb_set(o, "suggested_mib", jb_int_or_null(w->w_suggested, w->w_suggested_mib)) ||
        jb_set(o, "change_mib",
               jb_int_or_null(w->w_suggested && dec,
                              w->w_suggested_mib - w->w_declared_mib)) ||
        jb_set(o, "why_not", why ? json_string(why) : json_null())) {
        json_decref(o);
        return NULL;
    }
    if (other_source(w) != NULL &&
        (jb_set(o, "budget_source", json_string(other_source(w))) ||
         jb_set(o, "declaration",
                sg_declaration(w, decl, sizeof(decl)) == 1 ? json_string(decl)
                                                           : json_null()))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *
node_json(const struct sg_acc *a, const struct sg_node *n)
{
    json_t *o = json_object(), *cut = json_array();

    if (o == NULL || cut == NULL)
        goto fail;
    for (size_t i = 0; i < n->n_seat_count; i++)
        if (n->n_seats[i].ss_cut &&
            json_array_append_new(cut, json_pack("{s:s, s:I}", "workload",
                                                 n->n_seats[i].ss_name, "seat_mib",
                                                 (json_int_t)n->n_seats[i].ss_mib)) == -1)
            goto fail;
    if (jb_set(o, "node", json_string(n->n_name)) ||
        jb_set(o, "capacity_mib",
               jb_int_or_null(n->n_capacity_known, n->n_capacity_mib)) ||
        jb_set(o, "capacity_error",
               n->n_capacity_note ? json_string(n->n_capacity_note) : json_null()) ||
        jb_set(o, "declared_mib", json_integer((json_int_t)n->n_declared_mib)) ||
        jb_set(o, "suggested_seats_mib", json_integer((json_int_t)n->n_seats_mib)) ||
        jb_set(o, "fits", n->n_capacity_known ? json_boolean(n->n_fits) : json_null()) ||
        jb_set(o, "over_mib",
               jb_int_or_null(n->n_capacity_known,
                              n->n_fits ? 0 : n->n_seats_mib - n->n_capacity_mib)))
        goto fail;
    if (jb_set(o, "cut", cut) == -1) {
        cut = NULL;
        goto fail;
    }
    return o;
fail:
    json_decref(cut);
    json_decref(o);
    return NULL;
}

static int
print_json(FILE *out, const struct sg_acc *a, const struct sg_opts *o, const char *query)
{
    json_t *doc = json_object(), *wl = json_array(), *nodes = json_array(),
           *gone = json_array();
    const struct sg_workload **v = NULL;
    size_t n = 0;
    int rc = -1;

    if (doc == NULL || wl == NULL || nodes == NULL || gone == NULL ||
        (v = sorted(a, &n)) == NULL)
        goto out;
    for (size_t i = 0; i < n; i++)
        if (json_array_append_new(wl, workload_json(v[i])) == -1)
            goto out;
    for (size_t i = 0; i < a->a_node_count; i++)
        if (json_array_append_new(nodes, node_json(a, &a->a_nodes[i])) == -1)
            goto out;
    for (size_t i = 0; i < a->a_gone_count; i++)
        if (json_array_append_new(
                gone, json_pack("{s:s, s:I}", "pod", a->a_gone[i].g_key, "samples",
                                (json_int_t)a->a_gone[i].g_samples)) == -1)
            goto out;
    if (jb_set(doc, "window_s", json_integer((json_int_t)o->so_window_s)) ||
        jb_set(doc, "step_s", json_integer((json_int_t)a->a_step)) ||
        jb_set(doc, "headroom_pct", json_real(o->so_headroom_bp / 100.0)) ||
        jb_set(doc, "query", json_string(query)) ||
        json_object_set(doc, "workloads", wl) || json_object_set(doc, "nodes", nodes) ||
        json_object_set(doc, "unclaimed", gone))
        goto out;
    json_dumpf(doc, out, AUDIT_JSON_FLAGS);
    fputc('\n', out);
    rc = 0;
out:
    free(v);
    json_decref(wl);
    json_decref(nodes);
    json_decref(gone);
    json_decref(doc);
    return rc;
}

/* "10%" or "12.5%". */
static void
pct(char *buf, size_t len, uint32_t bp)
{
    if (bp % 100 == 0)
        snprintf(buf, len, "%u%%", bp / 100);
    else if (bp % 10 == 0)
        snprintf(buf, len, "%u.%u%%", bp / 100, bp % 100 / 10);
    else
        snprintf(buf, len, "%u.%02u%%", bp / 100, bp % 100);
}

static void
print_history(FILE *out, int64_t s)
{
    if (s >= 86400 && s % 86400 < 3600)
        fprintf(out, "%" PRId64 "d", s / 86400);
    else if (s >= 86400)
        fprintf(out, "%" PRId64 "d%" PRId64 "h", s / 86400, s % 86400 / 3600);
    else if (s >= 3600)
        fprintf(out, "%" PRId64 "h%" PRId64 "m", s / 3600, s % 3600 / 60);
    else
        fprintf(out, "%" PRId64 "m", s / 60);
}

static void
print_node(FILE *out, const struct sg_node *n)
{
    int any = 0;

    fputs("node ", out);
    termtext_put(out, n->n_name, SIZE_MAX);
    if (!n->n_capacity_known) {
        fputs(": capacity unknown (", out);
        termtext_put(out, n->n_capacity_note, SIZE_MAX);
        fprintf(out, "); declared %" PRId64 " MiB, suggested seats %" PRId64 " MiB\n",
                n->n_declared_mib, n->n_seats_mib);
        return;
    }
    fprintf(out,
            ": %" PRId64 " MiB advertised, declared %" PRId64
            " MiB, suggested seats %" PRId64 " MiB: ",
            n->n_capacity_mib, n->n_declared_mib, n->n_seats_mib);
    if (n->n_fits) {
        fprintf(out, "fits, %" PRId64 " MiB to spare\n",
                n->n_capacity_mib - n->n_seats_mib);
        return;
    }
    fprintf(out, "DOES NOT FIT by %" PRId64 " MiB\n", n->n_seats_mib - n->n_capacity_mib);
    fputs("  to fit, move off this node (or give it a bigger card): ", out);
    for (size_t i = 0; i < n->n_seat_count; i++) {
        if (!n->n_seats[i].ss_cut)
            continue;
        if (any++)
            fputs(", ", out);
        termtext_put(out, n->n_seats[i].ss_name, SIZE_MAX);
        fprintf(out, " (%" PRId64 " MiB)", n->n_seats[i].ss_mib);
    }
    fputc('\n', out);
}

static int
print_table(FILE *out, const struct sg_acc *a, const struct sg_opts *o)
{
    const struct sg_workload **v;
    size_t n;
    char h[16], dec[24], p99[16], max[16], sug[16], chg[16], decl[512];

    if ((v = sorted(a, &n)) == NULL)
        return -1;
    pct(h, sizeof(h), o->so_headroom_bp);
    fputs("budgets from measured use over ", out);
    print_history(out, o->so_window_s);
    fprintf(out,
            " (%" PRId64 " s steps): p99 nearest-rank of all the workload's samples, "
            "+%s headroom, never below the max, rounded up to %d MiB\n",
            a->a_step, h, SG_ROUND_MIB);
    fprintf(out, "%5s %9s %7s %7s %9s %7s  %s\n", "PODS", "DECLARED", "P99", "MAX",
            "SUGGESTED", "CHANGE", "WORKLOAD");
    for (size_t i = 0; i < n; i++) {
        const struct sg_workload *w = v[i];
        int has = w->w_hist.h_n > 0;
        int d = w->w_declared == SG_DECLARED_OK || w->w_declared == SG_DECLARED_MIXED;
        snprintf(dec, sizeof(dec), d ? "%s%" PRId64 : "%s-",
                 w->w_declared == SG_DECLARED_MIXED ? "~" : "", w->w_declared_mib);
        if (w->w_declared == SG_DECLARED_UNREADABLE)
            snprintf(dec, sizeof(dec), "bad");
        snprintf(p99, sizeof(p99), has ? "%u" : "-", w->w_p99);
        snprintf(max, sizeof(max), has ? "%u" : "-", w->w_max);
        snprintf(sug, sizeof(sug), w->w_suggested ? "%" PRId64 : "-", w->w_suggested_mib);
        snprintf(chg, sizeof(chg), w->w_suggested && d ? "%+" PRId64 : "-",
                 w->w_suggested_mib - w->w_declared_mib);
        fprintf(out, "%5zu %9s %7s %7s %9s %7s  ", w->w_live, dec, p99, max, sug, chg);
        termtext_put(out, w->w_label, SIZE_MAX);
        if (!w->w_suggested) {
            const char *why = why_not(w);
            if (strcmp(why, "too_little_history") == 0) {
                fputs("  (", out);
                print_history(out, w->w_history_s);
                fputs(" of history, under 1h: no suggestion)", out);
            } else {
                fprintf(out, "  (%s)",
                        strcmp(why, "no_samples") == 0
                            ? "no samples in the window: no suggestion"
                            : "no controller: no suggestion");
            }
        }
        fputc('\n', out);
        if (sg_declaration(w, decl, sizeof(decl)) != 0) {
            fprintf(out, "%5s declare [%s]: ", "", other_source(w));
            termtext_put(out, decl, SIZE_MAX);
            fputc('\n', out);
        }
    }
    free(v);
    for (size_t i = 0; i < a->a_node_count; i++)
        print_node(out, &a->a_nodes[i]);
    if (a->a_gone_count > 0) {
        fprintf(out,
                "not counted: %zu gone pod(s) no live workload claims:", a->a_gone_count);
        for (size_t i = 0; i < a->a_gone_count && i < 10; i++) {
            fputc(' ', out);
            termtext_put(out, a->a_gone[i].g_key, SIZE_MAX);
        }
        fputs(a->a_gone_count > 10 ? " ...\n" : "\n", out);
    }
    return 0;
}

static int
print_patches(FILE *out, const struct sg_acc *a, const char *resource)
{
    const struct sg_workload **v;
    size_t n;

    if ((v = sorted(a, &n)) == NULL)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const struct sg_workload *w = v[i];
        const char *why = NULL;
        json_t *doc = NULL;
        fputs("# ", out);
        termtext_put(out, w->w_label, SIZE_MAX);
        if (!w->w_suggested) {
            fprintf(out, ": no suggestion (%s)\n", why_not(w));
            continue;
        }
        fprintf(out, ": p99 %u MiB, max %u MiB: %" PRId64 " MiB per pod", w->w_p99,
                w->w_max, w->w_suggested_mib);
        if ((doc = sg_patch_json(w, resource, &why)) == NULL) {
            if (why == NULL) {
                free(v);
                return -1;
            }
            fprintf(out, "; no patch: %s\n", why);
            continue;
        }
        fputs("\n---\n", out);
        json_dumpf(doc, out, JSON_COMPACT | JSON_PRESERVE_ORDER);
        fputc('\n', out);
        json_decref(doc);
    }
    free(v);
    return 0;
}

int
sg_print(FILE *out, const struct sg_acc *acc, const struct sg_opts *o, const char *query,
         const char *resource)
{
    switch (o->so_format) {
    case SG_FORMAT_JSON:
        return print_json(out, acc, o, query);
    case SG_FORMAT_PATCH:
        return print_patches(out, acc, resource);
    default:
        return print_table(out, acc, o);
    }
}
