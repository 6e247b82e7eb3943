/* pods_budget.c -- collects HAMi's resources and KAI's annotations during the PodList
 * walk, then asks budget_src which source gives the pod its budget */
#include "pods_budget.h"

#include <stdlib.h>
#include <string.h>

#include "pods_opts.h"
#include "strpool.h"

void
pods_budget_init(struct pods_budget *b, const struct bsrc_order *order,
                 struct strpool *pool, unsigned keep)
{
    memset(b, 0, sizeof(*b));
    if (order != NULL && order->bo_count > 0) {
        b->pb_order = *order;
    } else {
        b->pb_order.bo_src[0] = BSRC_RESOURCE;
        b->pb_order.bo_count = 1;
    }
    b->pb_hami = bsrc_order_has(&b->pb_order, BSRC_HAMI);
    b->pb_kai = bsrc_order_has(&b->pb_order, BSRC_KAI);
    b->pb_all = (keep & POD_KEEP_WORKLOAD) != 0;
    b->pb_lean = (keep & POD_LEAN) != 0;
    b->pb_pool = pool;
}

void
pods_budget_free(struct pods_budget *b)
{
    free(b->pb_claims);
    free(b->pb_judged);
    b->pb_claims = NULL;
    b->pb_judged = NULL;
    b->pb_nclaims = b->pb_capclaims = 0;
    free(b->pb_ctrs);
    b->pb_ctrs = NULL;
    b->pb_count = b->pb_cap = 0;
}

void
pods_budget_pod(struct pods_budget *b)
{
    b->pb_count = 0;
    b->pb_fraction = b->pb_memory = b->pb_devices = NULL;
    b->pb_drop = 0;
    b->pb_nclaims = 0;
}

int
pods_budget_container(struct pods_budget *b)
{
    struct bsrc_container *grown;

    if (!b->pb_hami && !b->pb_all)
        return 0;
    if (b->pb_count == b->pb_cap) {
        size_t cap = b->pb_cap ? b->pb_cap * 2 : 4;
        if (cap > SIZE_MAX / sizeof(*grown) ||
            (grown = realloc(b->pb_ctrs, cap * sizeof(*grown))) == NULL)
            return -1;
        b->pb_ctrs = grown;
        b->pb_cap = cap;
    }
    memset(&b->pb_ctrs[b->pb_count++], 0, sizeof(*grown));
    return 0;
}

int
pods_budget_container_name(struct pods_budget *b, const struct js_held *name)
{
    int nul = 0;

    if ((!b->pb_hami && !b->pb_all) || b->pb_count == 0 || name->h_type != JS_STRING)
        return 0;
    b->pb_ctrs[b->pb_count - 1].bc_name = js_strdup_pool(&name->h_str, b->pb_pool, &nul);
    return b->pb_ctrs[b->pb_count - 1].bc_name == NULL && !nul ? -1 : 0;
}

/* The value at s into *dst: a string kept in the pool, or BSRC_NOT_STRING. */
static int
read_value(struct pods_budget *b, struct js_scan *s, const char **dst)
{
    struct js_str v;
    int nul = 0;
    char *copy;

    if (js_peek(s) != JS_STRING) {
        *dst = BSRC_NOT_STRING;
        return js_skip(s);
    }
    if (js_string(s, &v) == -1)
        return -1;
    if ((copy = js_strdup_pool(&v, b->pb_pool, &nul)) == NULL && !nul)
        return -1;
    *dst = copy != NULL ? copy : BSRC_NOT_STRING; /* U+0000 inside: no quantity */
    return 0;
}

int
pods_budget_resource(struct pods_budget *b, struct js_scan *s, const struct js_str *key,
                     int k)
{
    struct bsrc_container *c;

    if ((!b->pb_hami && !b->pb_all) || b->pb_count == 0 || k < 0 || k > 1)
        return 0;
    c = &b->pb_ctrs[b->pb_count - 1];
    if (js_str_eq(key, HAMI_GPU))
        return read_value(b, s, &c->bc_gpu[k]) == -1 ? -1 : 1;
    if (js_str_eq(key, HAMI_GPUMEM))
        return read_value(b, s, &c->bc_mem[k]) == -1 ? -1 : 1;
    if (js_str_eq(key, HAMI_GPUMEM_PCT))
        return read_value(b, s, &c->bc_pct[k]) == -1 ? -1 : 1;
    return 0;
}

/* Whether the pod named claim name already (in its spec and its status both). */
static int
named(const struct pods_budget *b, const char *name)
{
    for (size_t i = 0; i < b->pb_nclaims; i++)
        if (strcmp(b->pb_claims[i], name) == 0)
            return 1;
    return 0;
}

int
pods_budget_claims(struct pods_budget *b, struct js_scan *s)
{
    struct js_str key, v;
    int rc, rc2, nul;

    if (b->pb_table == NULL || !bsrc_order_has(&b->pb_order, BSRC_DRA) ||
        js_peek(s) != JS_ARRAY)
        return js_skip(s);
    if (js_array_begin(s) == -1)
        return -1;
    while ((rc = js_array_next(s)) == 1) {
        const char *name = NULL;
        if (js_peek(s) != JS_OBJECT) {
            if (js_skip(s) == -1)
                return -1;
            continue;
        }
        if (js_object_begin(s) == -1)
            return -1;
        while ((rc2 = js_object_next(s, &key)) == 1) {
            if (!js_str_eq(&key, "resourceClaimName") || name != NULL ||
                js_peek(s) != JS_STRING) {
                if (js_skip(s) == -1)
                    return -1;
                continue;
            }
            nul = 0;
            if (js_string(s, &v) == -1)
                return -1;
            if ((name = js_strdup_pool(&v, b->pb_pool, &nul)) == NULL && !nul)
                return -1;
        }
        if (rc2 == -1)
            return -1;
        if (name == NULL || named(b, name))
            continue; /* no claim object was needed, or listed already */
        if (b->pb_nclaims == b->pb_capclaims) {
            size_t cap = b->pb_capclaims ? b->pb_capclaims * 2 : 4;
            const char **grown = realloc(b->pb_claims, cap * sizeof(*grown));
            struct bsrc_claim *j;
            if (grown == NULL)
                return -1;
            b->pb_claims = grown;
            if ((j = realloc(b->pb_judged, cap * sizeof(*j))) == NULL)
                return -1;
            b->pb_judged = j;
            b->pb_capclaims = cap;
        }
        b->pb_claims[b->pb_nclaims++] = name;
    }
    return rc;
}

int
pods_budget_annotation(struct pods_budget *b, struct js_scan *s, const struct js_str *key)
{
    if (!b->pb_kai && !b->pb_all)
        return 0;
    if (js_str_eq(key, KAI_GPU_FRACTION))
        return read_value(b, s, &b->pb_fraction) == -1 ? -1 : 1;
    if (js_str_eq(key, KAI_GPU_MEMORY))
        return read_value(b, s, &b->pb_memory) == -1 ? -1 : 1;
    if (js_str_eq(key, KAI_NUM_DEVICES))
        return read_value(b, s, &b->pb_devices) == -1 ? -1 : 1;
    return 0;
}

/* Keeps a message or declaration in the pool: 0, or -1 when out of memory. */
static int
keep(struct pods_budget *b, const char *text, char **dst)
{
    *dst = NULL;
    if (text[0] == '\0')
        return 0;
    return (*dst = strpool_dup(b->pb_pool, text, strlen(text))) == NULL ? -1 : 0;
}

static int
claim_name_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int
pods_budget_judge(struct pods_budget *b, const char *resource, struct pod *p)
{
    struct bsrc_budget out;
    struct bsrc_pod in = {
        .bp_namespace = p->p_namespace,
        .bp_resource_state = p->p_budget_state == BUDGET_OK    ? BSRC_STATE_OK
                             : p->p_budget_state == BUDGET_BAD ? BSRC_STATE_BAD
                                                               : BSRC_STATE_NONE,
        .bp_resource_mib = p->p_budget_mib,
        .bp_resource_error = p->p_budget_error,
        .bp_resource_name = resource,
        .bp_containers = b->pb_ctrs,
        .bp_container_count = b->pb_count,
        .bp_fraction = b->pb_fraction,
        .bp_memory = b->pb_memory,
        .bp_num_devices = b->pb_devices,
        .bp_claims = b->pb_judged,
        .bp_claim_count = b->pb_nclaims,
    };

    /* By name, so pods naming one set of claims in any order declare it in one
     * text: the seating chart counts a shared set's seat once by that text. */
    if (b->pb_nclaims > 1)
        qsort(b->pb_claims, b->pb_nclaims, sizeof(*b->pb_claims), claim_name_cmp);
    for (size_t i = 0; i < b->pb_nclaims; i++) {
        const struct dra_claim *c =
            dra_claims_find(b->pb_table, p->p_namespace, b->pb_claims[i]);
        struct bsrc_claim *j = &b->pb_judged[i];
        memset(j, 0, sizeof(*j));
        j->bl_claim = b->pb_claims[i];
        if (c == NULL) {
            j->bl_error = b->pb_table->dl_truncated ? "more than " DRA_CLAIMS_MAX_TEXT
                                                      " claims on the node"
                                                    : "not fetched";
            continue;
        }
        j->bl_fetched = c->dc_fetched;
        j->bl_error = c->dc_error;
        j->bl_allocated = c->dc_allocated;
        j->bl_memory = (const char *const *)c->dc_memory;
        j->bl_memory_count = c->dc_memory_count;
        j->bl_reserved = c->dc_reserved;
    }

    bsrc_judge(&b->pb_order, &in, &out);
    b->pb_drop = out.bb_not_tenant;
    p->p_budget_source = bsrc_name(out.bb_source);
    if (!b->pb_lean && keep(b, out.bb_decl, &p->p_budget_decl) == -1)
        return -1;
    if (out.bb_source == BSRC_RESOURCE || out.bb_source == BSRC_NONE)
        return 0; /* the reader's own verdict stands, message and all */
    p->p_budget_mib = out.bb_mib;
    p->p_budget_gpus = 0;
    p->p_budget_error = NULL;
    if (out.bb_state == BSRC_STATE_BAD) {
        p->p_budget_state = BUDGET_BAD;
        p->p_budget_mib = 0;
        return keep(b, out.bb_error, &p->p_budget_error);
    }
    if (out.bb_gpus > 0) { /* a share of the GPU: MiB once its total is known */
        p->p_budget_state = BUDGET_BAD;
        p->p_budget_gpus = out.bb_gpus;
        p->p_budget_base_mib = out.bb_mib;
        p->p_budget_mib = 0;
        return keep(b, BSRC_NEEDS_TOTAL, &p->p_budget_error);
    }
    p->p_budget_state = BUDGET_OK;
    return 0;
}
