/* budgets.c -- `budgets`: the seating chart as a table or JSON, acting on nothing
 *
 * JSON (one object per GPU node; an array of them without --node):
 *   node             the node's name
 *   capacity_mib     what the node advertises for GPUMEM_RESOURCE, or null
 *   capacity         "advertised", "not_advertised" or "unknown" (could not read)
 *   capacity_error   why it is unknown, else null
 *   budgets_mib      the sum of the budgets declared by the node's pods, or
 *                    null when the pods could not be listed (error says why);
 *                    it saturates at INT64_MAX, never wraps
 *   bad_budgets      pods whose budget cannot be read (never counted above)
 *   overcommitted    budgets_mib > capacity_mib (false when either is unknown)
 *   floor_mib        FLOOR_MIB
 *   error            why the reading or the pod list is missing, else null
 *   gpus             one card per GPU: node scope has one, with "gpu": null
 *     gpu            the GPU's label value, or null in node scope
 *     total_mib      the card's size: the device's own gpu_memory_total_bytes
 *                    when free_source is "device", else GPU_TOTAL_MIB
 *     free_mib       free VRAM now (the figure a decision would judge), or null
 *                    when it cannot be read
 *     free_source    where free_mib came from, as a decision records it:
 *                    "device" (gpu_memory_free_bytes), "computed"
 *                    (GPU_TOTAL_MIB - used) or "query" (an explicit
 *                    FREE_QUERY); null when nothing was read
 *     unattributed_mib memory no pod accounts for (driver reserve, host
 *                    processes, processes whose pod is unknown), from the
 *                    device's gpu_memory_unattributed_bytes in the same
 *                    reading (node scope: summed over the node's GPUs); null
 *                    when not reported (free_source not "device", or the
 *                    exporter does not export it) or when it cannot be true
 *                    (negative, NaN, above the GPU's total; node scope: on
 *                    any one GPU)
 *     below_floor    free_mib < floor_mib
 *     used_mib       the sum of the tenants' use
 *     tenants        largest use first:
 *     error          GPU scope: why this GPU's reading cannot be used, else null
 *       namespace, pod,
 *       used_mib       live use on this card (this GPU in GPU scope)
 *       total_used_mib over every GPU of the node (= used_mib in node scope):
 *                      the budget is held against this
 *       budget_mib     the declared budget, or null (none, or unreadable)
 *       budget         "declared", "none" or "unreadable"
 *       budget_source  where it comes from: "resource", "hami", "kai", "dra"
 *                      (BUDGET_SOURCES); absent when the pod declares none
 *       overshoot_mib  total_used_mib - budget_mib, or null without a budget
 *       over_budget    overshoot_mib > 0
 *       eligible       the policy would take it as a victim now
 *       why_not        the policy's reason when not eligible, else null
 *   idle_tenants     GPU scope: the pods that hold a seat (budget declared,
 *                    readable or not) but use no GPU, so no card lists them
 *                    (their budget is in budgets_mib all the same); by
 *                    namespace, then pod; the tenants' fields, with used_mib 0,
 *                    eligible false and why_not the policy's rule ("no_gpu_use"
 *                    when only their use without a GPU label is over budget).
 *                    Always [] in node scope: the one card lists them.
 */
#include "budgets.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "audit_format.h"
#include "clients.h"
#include "json_build.h"
#include "kube.h"
#include "prom.h"
#include "termtext.h"

static json_t *
str_or_null(const char *s)
{
    return s != NULL && s[0] != '\0' ? json_string(s) : json_null();
}

static const char *
budget_word(enum budget_state b)
{
    return b == BUDGET_OK ? "declared" : b == BUDGET_BAD ? "unreadable" : "none";
}

static json_t *
tenant_json(const struct seating_node *n, const struct seating_tenant *t)
{
    const char *src = seating_budget_source(n, t->st_namespace, t->st_pod);
    json_t *o = json_object();
    int has = t->st_budget_state == BUDGET_OK;

    if (o == NULL || jb_set(o, "namespace", json_string(t->st_namespace)) ||
        jb_set(o, "pod", json_string(t->st_pod)) ||
        jb_set(o, "used_mib", json_integer((json_int_t)t->st_used_mib)) ||
        jb_set(o, "total_used_mib", json_integer((json_int_t)t->st_total_used_mib)) ||
        jb_set(o, "budget_mib", jb_int_or_null(has, t->st_budget_mib)) ||
        jb_set(o, "budget", json_string(budget_word(t->st_budget_state))) ||
        jb_set(o, "overshoot_mib", jb_int_or_null(has, t->st_overshoot_mib)) ||
        jb_set(o, "over_budget", json_boolean(has && t->st_overshoot_mib > 0)) ||
        jb_set(o, "eligible", json_boolean(t->st_eligible)) ||
        jb_set(o, "why_not", str_or_null(t->st_why_not)) ||
        (src != NULL && jb_set(o, "budget_source", json_string(src)))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *
card_json(const struct seating_node *n, const struct seating_card *c)
{
    json_t *o = json_object(), *tenants = json_array();

    if (o == NULL || tenants == NULL)
        goto fail;
    for (size_t i = 0; i < c->sc_tenant_count; i++)
        if (json_array_append_new(tenants, tenant_json(n, &c->sc_tenants[i])) == -1)
            goto fail;
    if (jb_set(o, "gpu", c->sc_gpu != NULL ? json_string(c->sc_gpu) : json_null()) ||
        jb_set(o, "total_mib", json_integer((json_int_t)c->sc_total_mib)) ||
        jb_set(o, "free_mib", jb_int_or_null(c->sc_free_known, c->sc_free_mib)) ||
        jb_set(o, "free_source", str_or_null(free_source_name(c->sc_free_source))) ||
        jb_set(o, "unattributed_mib",
               jb_int_or_null(c->sc_unattributed_known, c->sc_unattributed_mib)) ||
        jb_set(o, "below_floor", json_boolean(seating_card_below_floor(n, c))) ||
        jb_set(o, "used_mib", json_integer((json_int_t)c->sc_used_mib)) ||
        jb_set(o, "error", str_or_null(c->sc_error)))
        goto fail;
    if (jb_set(o, "tenants", tenants) == -1) {
        tenants = NULL; /* jb_set() took it */
        goto fail;
    }
    return o;
fail:
    json_decref(tenants);
    json_decref(o);
    return NULL;
}

json_t *
budgets_node_json(const struct seating_node *n)
{
    json_t *o = json_object(), *gpus = json_array(), *idle = json_array();

    if (o == NULL || gpus == NULL || idle == NULL)
        goto fail;
    for (size_t i = 0; i < n->sn_card_count; i++)
        if (json_array_append_new(gpus, card_json(n, &n->sn_cards[i])) == -1)
            goto fail;
    for (size_t i = 0; i < n->sn_idle_count; i++)
        if (json_array_append_new(idle, tenant_json(n, &n->sn_idle[i])) == -1)
            goto fail;
    if (jb_set(o, "node", json_string(n->sn_node)) ||
        jb_set(
            o, "capacity_mib",
            jb_int_or_null(n->sn_capacity == SEATING_CAPACITY_OK, n->sn_capacity_mib)) ||
        jb_set(o, "capacity", json_string(seating_capacity_name(n->sn_capacity))) ||
        jb_set(o, "capacity_error", str_or_null(n->sn_capacity_error)) ||
        jb_set(o, "budgets_mib",
               jb_int_or_null(n->sn_budgets_known, n->sn_budgets_mib)) ||
        jb_set(o, "bad_budgets", json_integer((json_int_t)n->sn_bad_budgets)) ||
        jb_set(o, "overcommitted", json_boolean(n->sn_overcommitted)) ||
        jb_set(o, "floor_mib", json_integer((json_int_t)n->sn_floor_mib)) ||
        jb_set(o, "error", str_or_null(n->sn_reading_ok ? NULL : n->sn_error)))
        goto fail;
    if (jb_set(o, "gpus", gpus) == -1) {
        gpus = NULL;
        goto fail;
    }
    gpus = NULL; /* o holds it */
    if (jb_set(o, "idle_tenants", idle) == -1) {
        idle = NULL;
        goto fail;
    }
    return o;
fail:
    json_decref(idle);
    json_decref(gpus);
    json_decref(o);
    return NULL;
}

/* Writes s cleaned for the terminal (termtext.h), so an API string cannot
 * move the cursor, fake a line or reorder the chart. */
static void
put_clean(FILE *out, const char *s)
{
    termtext_put(out, s, SIZE_MAX);
}

/* "N MiB of budgets declared", or that they are unknown (no pod list). */
static void
print_budgets(FILE *out, const struct seating_node *n)
{
    if (n->sn_budgets_known)
        fprintf(out, "%" PRId64 " MiB of budgets declared", n->sn_budgets_mib);
    else
        fputs("budgets unknown (the pods could not be listed)", out);
}

/* The node's seat line: capacity against the declared budgets, said plainly. */
static void
print_seats(FILE *out, const struct seating_node *n)
{
    fprintf(out, "  seats     ");
    switch (n->sn_capacity) {
    case SEATING_CAPACITY_OK:
        fprintf(out, "%" PRId64 " MiB advertised, ", n->sn_capacity_mib);
        print_budgets(out, n);
        if (!n->sn_budgets_known)
            fputc('\n', out);
        else if (n->sn_overcommitted)
            fprintf(out, ": OVER-COMMITTED by %" PRId64 " MiB\n",
                    n->sn_budgets_mib - n->sn_capacity_mib);
        else
            fprintf(out, ": %" PRId64 " MiB unseated\n",
                    n->sn_capacity_mib - n->sn_budgets_mib);
        break;
    case SEATING_CAPACITY_NOT_ADVERTISED:
        fputs("capacity NOT ADVERTISED on the node (run `advertise`), ", out);
        print_budgets(out, n);
        fputc('\n', out);
        break;
    case SEATING_CAPACITY_UNKNOWN:
        fprintf(out, "capacity unknown (");
        put_clean(out, n->sn_capacity_error);
        fputs("), ", out);
        print_budgets(out, n);
        fputc('\n', out);
        break;
    }
    if (n->sn_bad_budgets > 0)
        fprintf(out,
                "            %zu pod(s) declare a budget that cannot be read "
                "(not counted)\n",
                n->sn_bad_budgets);
}

static void
print_tenant(FILE *out, const struct seating_node *n, int gpu_scope,
             const struct seating_tenant *t)
{
    const char *src = seating_budget_source(n, t->st_namespace, t->st_pod);
    char budget[32], over[32], eligible[64];

    if (t->st_budget_state == BUDGET_OK) {
        snprintf(budget, sizeof(budget), "%" PRId64, t->st_budget_mib);
        snprintf(over, sizeof(over), "%+" PRId64, t->st_overshoot_mib);
    } else {
        snprintf(budget, sizeof(budget), "%s",
                 t->st_budget_state == BUDGET_BAD ? "bad" : "-");
        snprintf(over, sizeof(over), "-");
    }
    if (t->st_eligible)
        snprintf(eligible, sizeof(eligible), "yes");
    else
        snprintf(eligible, sizeof(eligible), "no: %s",
                 t->st_why_not ? t->st_why_not : "?");
    if (gpu_scope)
        fprintf(out, "    %7" PRId64, t->st_used_mib);
    fprintf(out, "%s%7" PRId64 " %7s %7s  %-24s ", gpu_scope ? " " : "    ",
            t->st_total_used_mib, budget, over, eligible);
    put_clean(out, t->st_namespace);
    fputc('/', out);
    put_clean(out, t->st_pod);
    /* A budget from elsewhere than GPUMEM_RESOURCE says where (BUDGET_SOURCES). */
    if (src != NULL && strcmp(src, "resource") != 0)
        fprintf(out, " [%s]", src);
    fputc('\n', out);
}

static void
print_header(FILE *out, int gpu_scope)
{
    if (gpu_scope)
        fprintf(out, "    %7s %7s %7s %7s  %-24s %s\n", "HERE", "USED", "BUDGET", "OVER",
                "ELIGIBLE", "NAMESPACE/POD");
    else
        fprintf(out, "    %7s %7s %7s  %-24s %s\n", "USED", "BUDGET", "OVER", "ELIGIBLE",
                "NAMESPACE/POD");
}

static void
print_card(FILE *out, const struct seating_node *n, const struct seating_card *c)
{
    fprintf(out, "  %-10s", c->sc_gpu ? "gpu" : "card");
    if (c->sc_gpu != NULL) {
        put_clean(out, c->sc_gpu);
        fputs(": ", out);
    }
    fprintf(out, "%" PRId64 " MiB, ", c->sc_total_mib);
    if (c->sc_free_known)
        fprintf(out, "%" PRId64 " MiB free (%s), floor %" PRId64 " MiB: %s\n",
                c->sc_free_mib, seating_free_source_words(c->sc_free_source),
                n->sn_floor_mib,
                seating_card_below_floor(n, c) ? "BELOW THE FLOOR" : "above the floor");
    else
        fprintf(out, "free VRAM unknown, floor %" PRId64 " MiB\n", n->sn_floor_mib);
    if (c->sc_unattributed_known)
        fprintf(out,
                "    %7" PRId64 " MiB no pod accounts for (driver, host processes, "
                "unknown pods)\n",
                c->sc_unattributed_mib);
    if (c->sc_error[0] != '\0') {
        fputs("    reading   ", out);
        put_clean(out, c->sc_error);
        fputc('\n', out);
    }
    if (c->sc_tenant_count == 0) {
        /* Without a reading nobody is known to be there: not "no tenants". */
        fputs(n->sn_reading_ok && c->sc_error[0] == '\0'
                  ? "    no tenants\n"
                  : "    tenants unknown (the reading is incomplete)\n",
              out);
        return;
    }
    /* GPU scope: a budget is held against the use over every GPU (SPEC), so
     * USED is that; HERE is the use on this GPU. */
    print_header(out, c->sc_gpu != NULL);
    for (size_t i = 0; i < c->sc_tenant_count; i++)
        print_tenant(out, n, c->sc_gpu != NULL, &c->sc_tenants[i]);
}

/* GPU scope: the seats held by pods on no card, so every budget counted in
 * the seat line is found on the chart. */
static void
print_idle(FILE *out, const struct seating_node *n)
{
    if (n->sn_idle_count == 0)
        return;
    fprintf(out,
            "  seated, using no GPU: %zu pod(s) hold a budget and run nothing on any "
            "GPU\n",
            n->sn_idle_count);
    print_header(out, 1);
    for (size_t i = 0; i < n->sn_idle_count; i++)
        print_tenant(out, n, 1, &n->sn_idle[i]);
}

void
budgets_node_print(FILE *out, const struct seating_node *n)
{
    fputs("node ", out);
    put_clean(out, n->sn_node);
    fputc('\n', out);
    print_seats(out, n);
    if (!n->sn_reading_ok) {
        fputs("  reading   ", out);
        put_clean(out, n->sn_error);
        fputc('\n', out);
    }
    for (size_t i = 0; i < n->sn_card_count; i++)
        print_card(out, n, &n->sn_cards[i]);
    print_idle(out, n);
}

struct budgets_run {
    struct event_base *b_base; /* borrowed */
    int b_json, b_single, b_done, b_rc;
};

static void
looked(const struct seating *s, void *arg)
{
    struct budgets_run *b = arg;

    b->b_done = 1;
    event_base_loopbreak(b->b_base);
    if (s->s_error[0] != '\0' && s->s_node_count == 0) {
        termtext_line(stderr, "gpu-vram-watchdog: budgets: ", s->s_error);
        return;
    }
    if (b->b_json) {
        json_t *arr = json_array();
        for (size_t i = 0; arr != NULL && i < s->s_node_count; i++)
            if (json_array_append_new(arr, budgets_node_json(&s->s_nodes[i])) == -1) {
                json_decref(arr);
                arr = NULL;
            }
        if (arr == NULL) {
            fprintf(stderr, "gpu-vram-watchdog: budgets: out of memory\n");
            return;
        }
        json_dumpf(b->b_single && s->s_node_count == 1 ? json_array_get(arr, 0) : arr,
                   stdout, AUDIT_JSON_FLAGS);
        fputc('\n', stdout);
        json_decref(arr);
    } else {
        for (size_t i = 0; i < s->s_node_count; i++) {
            if (i > 0)
                fputc('\n', stdout);
            budgets_node_print(stdout, &s->s_nodes[i]);
        }
    }
    if (s->s_error[0] != '\0') /* some nodes shown, then out of memory */
        termtext_line(stderr, "gpu-vram-watchdog: budgets: ", s->s_error);
    else
        b->b_rc = 0;
}

int
budgets_main(const struct config *cfg, const char *node, int json)
{
    struct budgets_run b = {.b_json = json, .b_single = node != NULL, .b_rc = 1};
    struct prom *prom = NULL;
    struct kube *kube = NULL;
    char err[512];

    if ((b.b_base = event_base_new()) == NULL ||
        clients_new(b.b_base, cfg, &prom, &kube, err, sizeof(err)) == -1) {
        termtext_line(stderr, "gpu-vram-watchdog: budgets: ",
                      b.b_base ? err : "cannot create the event loop");
        goto done;
    }
    if (seating_look_start(b.b_base, cfg, prom, kube, node, looked, &b) == NULL) {
        fprintf(stderr, "gpu-vram-watchdog: budgets: out of memory\n");
        goto done;
    }
    while (!b.b_done && event_base_dispatch(b.b_base) == 0)
        ;
done:
    kube_free(kube);
    prom_free(prom);
    if (b.b_base != NULL)
        event_base_free(b.b_base);
    return b.b_rc;
}
