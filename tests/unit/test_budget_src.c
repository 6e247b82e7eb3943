/* test_budget_src.c -- budgets from HAMi, KAI/Run:ai and DRA declarations (SPEC "Where
 * budgets come from"), on pods shaped as those projects write them */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/testdata.h"

#include "budget_src.h"
#include "device.h"
#include "pods_json.h"
#include "policy.h"
#include "prom_json.h"

#define RES "viktorbarzin.me/gpumem"

static const struct pod_parse_opts opts = {
    RES, "gpu-vram-watchdog/protected", NULL, NULL, NULL, 0};

static struct bsrc_order
order(const char *list)
{
    struct bsrc_order o;
    char err[160];

    assert_int_equal(bsrc_order_parse(list, &o, err, sizeof(err)), 0);
    return o;
}

static void
parse(const char *file, const char *sources, struct pod_list *l)
{
    struct bsrc_order o = order(sources);
    char err[256], *body;
    size_t len;

    body = test_data_load(file, &len);
    if (pods_json_parse_sources(body, len, &opts, &o, l, err, sizeof(err)) != 0)
        fail_msg("%s: %s", file, err);
    free(body);
}

static const struct pod *
find(const struct pod_list *l, const char *name)
{
    for (size_t i = 0; i < l->pl_count; i++)
        if (strcmp(l->pl_pods[i].p_name, name) == 0)
            return &l->pl_pods[i];
    return NULL;
}

static const struct pod *
must(const struct pod_list *l, const char *name)
{
    const struct pod *p = find(l, name);

    if (p == NULL)
        fail_msg("pod %s not in the list", name);
    return p;
}

static void
ok(const struct pod_list *l, const char *name, const char *source, int64_t mib,
   const char *decl)
{
    const struct pod *p = must(l, name);

    if (p->p_budget_state != BUDGET_OK)
        fail_msg("%s: state %d (%s)", name, (int)p->p_budget_state,
                 p->p_budget_error ? p->p_budget_error : "");
    assert_int_equal(p->p_budget_mib, mib);
    assert_string_equal(p->p_budget_source, source);
    assert_string_equal(p->p_budget_decl, decl);
}

static void
bad(const struct pod_list *l, const char *name, const char *source, const char *why)
{
    const struct pod *p = must(l, name);

    assert_int_equal(p->p_budget_state, BUDGET_BAD);
    assert_string_equal(p->p_budget_source, source);
    assert_non_null(p->p_budget_error);
    if (strstr(p->p_budget_error, why) == NULL)
        fail_msg("%s: \"%s\" does not say \"%s\"", name, p->p_budget_error, why);
}

static void
test_order_parse(void **state)
{
    struct bsrc_order o;
    char err[160];

    (void)state;
    o = order("resource");
    assert_int_equal(o.bo_count, 1);
    assert_int_equal(o.bo_src[0], BSRC_RESOURCE);
    o = order(" hami , kai,dra,resource ");
    assert_int_equal(o.bo_count, 4);
    assert_int_equal(o.bo_src[0], BSRC_HAMI);
    assert_int_equal(o.bo_src[3], BSRC_RESOURCE);
    assert_int_equal(bsrc_order_parse("gpu", &o, err, sizeof(err)), -1);
    assert_string_equal(err, "'gpu' is not a budget source (resource, hami, kai, dra)");
    assert_int_equal(bsrc_order_parse("kai,hami,kai", &o, err, sizeof(err)), -1);
    assert_string_equal(err, "'kai' is listed twice");
    assert_int_equal(bsrc_order_parse("resource,", &o, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "empty word"));
    assert_int_equal(bsrc_order_parse("", &o, err, sizeof(err)), -1);
    assert_int_equal(bsrc_order_parse("HAMI", &o, err, sizeof(err)), -1);
}

/* HAMi's per-container resources, as its webhook leaves a pod (quantities as the
 * API server canonicalises them: 4000 -> "4k"). */
static void
test_hami(void **state)
{
    struct pod_list l;

    (void)state;
    parse("budget-hami.json", "hami,resource", &l);
    ok(&l, "vllm-small-7d9f8c6b5-abcde", "hami", 4000, "nvidia.com/gpumem: 4000");
    /* MiB per GPU: two GPUs of 4000 are 8000 */
    ok(&l, "trainer-5c6d7e8f9-bcdef", "hami", 8000,
       "nvidia.com/gpu: 2, nvidia.com/gpumem: 4000");
    /* requests when no limits, as HAMi reads them */
    ok(&l, "requests-only-7c8d9e0f1-defgh", "hami", 3000, "nvidia.com/gpumem: 3000");
    ok(&l, "two-ctr-8d9e0f1a2-efghi", "hami", 3500,
       "\"model\": nvidia.com/gpumem: 2000; \"embed\": nvidia.com/gpumem: 1500");
    /* the first listed source the pod declares wins */
    ok(&l, "both-sources-9e0f1a2b3-fghij", "hami", 6000, "nvidia.com/gpumem: 6000");
    /* a whole GPU and nothing else is no HAMi share */
    assert_int_equal(must(&l, "plain-gpu-0f1a2b3c4-ghijk")->p_budget_state, BUDGET_NONE);
    assert_null(must(&l, "plain-gpu-0f1a2b3c4-ghijk")->p_budget_source);
    /* a percentage waits for the GPU's total */
    bad(&l, "half-card-6b7c8d9e0-cdefg", "hami", BSRC_NEEDS_TOTAL);
    assert_string_equal(must(&l, "half-card-6b7c8d9e0-cdefg")->p_budget_decl,
                        "nvidia.com/gpumem-percentage: 50");
    bad(&l, "mem-abc-1a2b3c4d5-hijkl", "hami",
        "container \"app\": limit nvidia.com/gpumem \"abc\" is not a whole number of MiB");
    bad(&l, "pct-150-2b3c4d5e6-ijklm", "hami",
        "nvidia.com/gpumem-percentage \"150\" is not a whole percentage from 1 to 100");
    bad(&l, "pct-0-3c4d5e6f7-jklmn", "hami", "\"0\" is not a whole percentage");
    bad(&l, "mem-neg-4d5e6f7a8-klmno", "hami", "\"-4k\" is not a whole number of MiB");
    bad(&l, "gpu-frac-5e6f7a8b9-lmnop", "hami",
        "nvidia.com/gpu \"500m\" is not a whole number");
    bad(&l, "mem-number-6f7a8b9c0-mnopq", "hami", "not a whole number of MiB");
    pod_list_free(&l);

    /* resource first: the pod declaring both keeps its GPUMEM_RESOURCE budget */
    parse("budget-hami.json", "resource,hami", &l);
    ok(&l, "both-sources-9e0f1a2b3-fghij", "resource", 5000, RES ": 5000");
    ok(&l, "vllm-small-7d9f8c6b5-abcde", "hami", 4000, "nvidia.com/gpumem: 4000");
    pod_list_free(&l);
}

/* The default reads GPUMEM_RESOURCE alone, as before. */
static void
test_default_is_resource(void **state)
{
    struct pod_list l;
    char err[256], *body;
    size_t len;

    (void)state;
    body = test_data_load("budget-hami.json", &len);
    assert_int_equal(pods_json_parse(body, len, &opts, &l, err, sizeof(err)), 0);
    free(body);
    ok(&l, "both-sources-9e0f1a2b3-fghij", "resource", 5000, RES ": 5000");
    assert_int_equal(must(&l, "vllm-small-7d9f8c6b5-abcde")->p_budget_state, BUDGET_NONE);
    assert_int_equal(must(&l, "mem-abc-1a2b3c4d5-hijkl")->p_budget_state, BUDGET_NONE);
    assert_null(must(&l, "mem-abc-1a2b3c4d5-hijkl")->p_budget_source);
    pod_list_free(&l);
}

/* KAI Scheduler's and Run:ai's annotations; their reservation pods are no tenants. */
static void
test_kai(void **state)
{
    struct pod_list l;

    (void)state;
    parse("budget-kai.json", "kai", &l);
    bad(&l, "infer-half-7d9f8c6b5-abcde", "kai", BSRC_NEEDS_TOTAL);
    assert_string_equal(must(&l, "infer-half-7d9f8c6b5-abcde")->p_budget_decl,
                        "gpu-fraction: \"0.5\"");
    ok(&l, "infer-mem-5c6d7e8f9-bcdef", "kai", 2000, "gpu-memory: \"2000\"");
    ok(&l, "infer-multi-6b7c8d9e0-cdefg", "kai", 2048,
       "gpu-memory: \"1024\", gpu-fraction-num-devices: \"2\"");
    bad(&l, "jupyter-0", "kai", BSRC_NEEDS_TOTAL);
    assert_null(find(&l, "gpu-reservation-gpu-h100-1-x7k2p"));
    assert_null(find(&l, "runai-reservation-gpu-0-abcde"));
    bad(&l, "frac-0-1a2b3c4d5-hijkl", "kai",
        "gpu-fraction \"0\" is not a fraction above 0 and at most 1");
    bad(&l, "frac-1-5-2b3c4d5e6-ijklm", "kai", "gpu-fraction \"1.5\" is not a fraction");
    bad(&l, "frac-abc-3c4d5e6f7-jklmn", "kai", "gpu-fraction \"abc\" is not a fraction");
    bad(&l, "mem-gi-4d5e6f7a8-klmno", "kai", "gpu-memory \"2Gi\" is not a whole number");
    bad(&l, "mem-neg-5e6f7a8b9-lmnop", "kai", "gpu-memory \"-100\" is negative");
    bad(&l, "both-6f7a8b9c0-mnopq", "kai", "declares both gpu-fraction and gpu-memory");
    bad(&l, "devices-zero-7a8b9c0d1-nopqr", "kai", "gpu-fraction-num-devices \"0\"");
    assert_int_equal(l.pl_count, 11);
    pod_list_free(&l);

    /* Without kai in the list the reservation pod is a pod like any other. */
    parse("budget-kai.json", "resource", &l);
    ok(&l, "gpu-reservation-gpu-h100-1-x7k2p", "resource", 80000, RES ": 80000");
    assert_int_equal(must(&l, "infer-mem-5c6d7e8f9-bcdef")->p_budget_state, BUDGET_NONE);
    pod_list_free(&l);
}

/* Annotations of the wrong JSON type and a broken container never pass as budgets. */
static void
test_malformed_shapes(void **state)
{
    static const char body[] =
        "{\"kind\":\"PodList\",\"items\":["
        "{\"metadata\":{\"name\":\"a\",\"namespace\":\"n\",\"uid\":\"1\","
        "\"annotations\":{\"gpu-fraction\":0.5}}},"
        "{\"metadata\":{\"name\":\"b\",\"namespace\":\"n\",\"uid\":\"2\"},"
        "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":"
        "{\"nvidia.com/gpu\":\"1\",\"nvidia.com/gpumem-percentage\":[50]}}}]}},"
        "{\"metadata\":{\"name\":\"c\",\"namespace\":\"n\",\"uid\":\"3\","
        "\"annotations\":{\"gpu-memory\":\"12\\u00003\"}}},"
        "{\"metadata\":{\"name\":\"d\",\"namespace\":\"n\",\"uid\":\"4\"},"
        "\"spec\":{\"containers\":[{\"resources\":{\"limits\":"
        "{\"nvidia.com/gpumem\":\"1000\"}}}]}},"
        /* a number strtod reads only the start of: never 0.5 */
        "{\"metadata\":{\"name\":\"e\",\"namespace\":\"n\",\"uid\":\"5\","
        "\"annotations\":{\"gpu-fraction\":\"0.5-\"}}},"
        /* strtod reads hex and " 0.5": KAI's ParseFloat reads neither */
        "{\"metadata\":{\"name\":\"l\",\"namespace\":\"n\",\"uid\":\"12\","
        "\"annotations\":{\"gpu-fraction\":\"0x0.8\"}}},"
        "{\"metadata\":{\"name\":\"m\",\"namespace\":\"n\",\"uid\":\"13\","
        "\"annotations\":{\"gpu-fraction\":\" 0.5\"}}},"
        /* HAMi reads whole MiB (Quantity.AsInt64): a fraction is refused, not
         * rounded */
        "{\"metadata\":{\"name\":\"f\",\"namespace\":\"n\",\"uid\":\"6\"},"
        "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":"
        "{\"nvidia.com/gpu\":\"1\",\"nvidia.com/gpumem\":\"1500.5\"}}}]}},"
        /* nor are nano-units, even where they make a whole number */
        "{\"metadata\":{\"name\":\"g\",\"namespace\":\"n\",\"uid\":\"7\"},"
        "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":"
        "{\"nvidia.com/gpu\":\"1\",\"nvidia.com/gpumem\":\"1000000000n\"}}}]}},"
        /* nor micro-units (2000000u is 2) */
        "{\"metadata\":{\"name\":\"p\",\"namespace\":\"n\",\"uid\":\"15\"},"
        "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":"
        "{\"nvidia.com/gpu\":\"1\",\"nvidia.com/gpumem\":\"2000000u\"}}}]}},"
        /* nor are negative exponents */
        "{\"metadata\":{\"name\":\"j\",\"namespace\":\"n\",\"uid\":\"10\"},"
        "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":"
        "{\"nvidia.com/gpu\":\"1\",\"nvidia.com/gpumem\":\"1000e-3\"}}}]}},"
        "{\"metadata\":{\"name\":\"k\",\"namespace\":\"n\",\"uid\":\"11\"},"
        "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":"
        "{\"nvidia.com/gpu\":\"1\",\"nvidia.com/gpumem\":\"1000E-3\"}}}]}},"
        /* a long value is shown by its first 16 bytes */
        "{\"metadata\":{\"name\":\"o\",\"namespace\":\"n\",\"uid\":\"14\"},"
        "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":"
        "{\"nvidia.com/gpu\":\"1\",\"nvidia.com/gpumem\":\"12345678901234567890\"}}}]}},"
        /* DEL is shown escaped, as every byte that does not print */
        "{\"metadata\":{\"name\":\"h\",\"namespace\":\"n\",\"uid\":\"8\"},"
        "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":"
        "{\"nvidia.com/gpu\":\"1\",\"nvidia.com/gpumem\":\"1\\u007f\"}}}]}},"
        /* no device (gpu "0"): HAMi gives its percentage nothing to apply to */
        "{\"metadata\":{\"name\":\"i\",\"namespace\":\"n\",\"uid\":\"9\"},"
        "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":"
        "{\"nvidia.com/gpu\":\"0\",\"nvidia.com/gpumem-percentage\":\"50\"}}}]}}]}";
    struct bsrc_order o = order("hami,kai");
    struct pod_list l;
    char err[256];

    (void)state;
    assert_int_equal(
        pods_json_parse_sources(body, sizeof(body) - 1, &opts, &o, &l, err, sizeof(err)),
        0);
    bad(&l, "a", "kai", "gpu-fraction \"(not a string)\" is not a fraction");
    bad(&l, "b", "hami", "container \"c\": limit nvidia.com/gpumem-percentage");
    bad(&l, "c", "kai", "is not a whole number");
    bad(&l, "d", "hami", "no container is given an nvidia.com/gpu");
    bad(&l, "e", "kai", "gpu-fraction \"0.5-\" is not a fraction");
    bad(&l, "l", "kai", "gpu-fraction \"0x0.8\" is not a fraction");
    bad(&l, "m", "kai", "gpu-fraction \" 0.5\" is not a fraction");
    bad(&l, "f", "hami", "nvidia.com/gpumem \"1500.5\" is not a whole number of MiB");
    bad(&l, "g", "hami",
        "nvidia.com/gpumem \"1000000000n\" is not a whole number of MiB");
    bad(&l, "h", "hami", "nvidia.com/gpumem \"1\\x7f\" is not a whole number of MiB");
    bad(&l, "i", "hami", "no container is given an nvidia.com/gpu");
    bad(&l, "p", "hami", "nvidia.com/gpumem \"2000000u\" is not a whole number of MiB");
    bad(&l, "j", "hami", "nvidia.com/gpumem \"1000e-3\" is not a whole number of MiB");
    bad(&l, "k", "hami", "nvidia.com/gpumem \"1000E-3\" is not a whole number of MiB");
    bad(&l, "o", "hami",
        "nvidia.com/gpumem \"1234567890123456...\" is not a whole number of MiB");
    pod_list_free(&l);
    /* truncated: not JSON, nothing kept */
    assert_int_equal(pods_json_parse_sources(body, 120, &opts, &o, &l, err, sizeof(err)),
                     -1);
    assert_null(l.pl_pods);
}

/* DRA: consumedCapacity memory of DRA_DRIVER's devices, as a v1 ResourceClaim's
 * status.allocation.devices.results carry it. */
static void
test_dra(void **state)
{
    static const char *const eight[] = {"8Gi"};
    static const char *const two[] = {"4Gi", "2048Mi"};
    static const char *const neg[] = {"-1Gi"};
    static const char *const junk[] = {"lots"};
    struct bsrc_order o = order("dra,resource");
    struct bsrc_claim c = {"gpu-claim", 1, 1, eight, 1, 1, NULL};
    struct bsrc_pod p = {.bp_namespace = "llm", .bp_claims = &c, .bp_claim_count = 1};
    struct bsrc_budget b;

    (void)state;
    bsrc_judge(&o, &p, &b);
    assert_int_equal(b.bb_source, BSRC_DRA);
    assert_int_equal(b.bb_state, BSRC_STATE_OK);
    assert_int_equal(b.bb_mib, 8192);
    assert_string_equal(b.bb_decl, "claim llm/gpu-claim: memory 8Gi");
    assert_int_equal(b.bb_shared, 1);

    c.bl_memory = two;
    c.bl_memory_count = 2;
    c.bl_reserved = 3; /* one claim, three pods: one budget */
    bsrc_judge(&o, &p, &b);
    assert_int_equal(b.bb_mib, 6144);
    assert_int_equal(b.bb_shared, 3);
    assert_string_equal(b.bb_decl, "claim llm/gpu-claim: memory 4Gi, 2048Mi");

    c.bl_allocated = 0;
    bsrc_judge(&o, &p, &b);
    assert_int_equal(b.bb_state, BSRC_STATE_BAD);
    assert_string_equal(b.bb_error, "claim llm/gpu-claim has no allocation");
    c.bl_allocated = 1;
    c.bl_fetched = 0;
    bsrc_judge(&o, &p, &b);
    assert_string_equal(b.bb_error, "claim llm/gpu-claim could not be read");
    c.bl_fetched = 1;
    c.bl_memory = neg;
    c.bl_memory_count = 1;
    bsrc_judge(&o, &p, &b);
    assert_string_equal(b.bb_error,
                        "claim gpu-claim: consumedCapacity memory \"-1Gi\" is negative");
    c.bl_memory = junk;
    bsrc_judge(&o, &p, &b);
    assert_string_equal(
        b.bb_error,
        "claim gpu-claim: consumedCapacity memory \"lots\" is not a quantity");
    /* beside one with memory, a claim of another driver's devices adds nothing,
     * to the text or the pods sharing */
    {
        struct bsrc_claim two_claims[2] = {{"gpu-claim", 1, 1, eight, 1, 1, NULL},
                                           {"nic-claim", 1, 1, NULL, 0, 5, NULL}};
        struct bsrc_pod p2 = {
            .bp_namespace = "llm", .bp_claims = two_claims, .bp_claim_count = 2};
        bsrc_judge(&o, &p2, &b);
        assert_int_equal(b.bb_state, BSRC_STATE_OK);
        assert_int_equal(b.bb_mib, 8192);
        assert_string_equal(b.bb_decl, "claim llm/gpu-claim: memory 8Gi");
        assert_int_equal(b.bb_shared, 1);
    }
    /* a claim of another driver's devices (no memory of DRA_DRIVER): the next source */
    c.bl_memory_count = 0;
    p.bp_resource_state = BSRC_STATE_OK;
    p.bp_resource_mib = 700;
    p.bp_resource_name = RES;
    bsrc_judge(&o, &p, &b);
    assert_int_equal(b.bb_source, BSRC_RESOURCE);
    assert_int_equal(b.bb_mib, 700);
    /* a pod claim that needed no claim object counts for nothing */
    c.bl_claim = NULL;
    c.bl_fetched = 0;
    bsrc_judge(&o, &p, &b);
    assert_int_equal(b.bb_source, BSRC_RESOURCE);
}

/* KAI's gpu-fraction-num-devices "1", written out, is one GPU as its default is. */
static void
test_kai_one_device(void **state)
{
    struct bsrc_order o = order("kai");
    struct bsrc_pod p = {.bp_namespace = "n", .bp_memory = "2000", .bp_num_devices = "1"};
    struct bsrc_budget b;

    (void)state;
    bsrc_judge(&o, &p, &b);
    assert_int_equal(b.bb_state, BSRC_STATE_OK);
    assert_int_equal(b.bb_mib, 2000);
    assert_string_equal(b.bb_decl,
                        "gpu-memory: \"2000\", gpu-fraction-num-devices: \"1\"");
}

/* An empty gpumem is no number of MiB. */
static void
test_hami_empty_value(void **state)
{
    struct bsrc_container c = {"c", {"1", NULL}, {"", NULL}, {0}};
    struct bsrc_order o = order("hami");
    struct bsrc_pod p = {
        .bp_namespace = "n", .bp_containers = &c, .bp_container_count = 1};
    struct bsrc_budget b;

    (void)state;
    bsrc_judge(&o, &p, &b);
    assert_int_equal(b.bb_state, BSRC_STATE_BAD);
    assert_string_equal(b.bb_error,
                        "container \"c\": limit nvidia.com/gpumem \"\" is not "
                        "a whole number of MiB");
}

/* HAMi's MiB times its GPUs is kept up to the last MiB an int64 holds; one GPU
 * more and the budget is refused as overflowing, never wrapped. */
static void
test_hami_overflow_edge(void **state)
{
    struct bsrc_container c = {"c", {"4294967298", NULL}, {"2147483647", NULL}, {0}};
    struct bsrc_order o = order("hami");
    struct bsrc_pod p = {
        .bp_namespace = "n", .bp_containers = &c, .bp_container_count = 1};
    struct bsrc_budget b;

    (void)state;
    /* (2^32 + 2) x (2^31 - 1) = 2^63 - 2 */
    bsrc_judge(&o, &p, &b);
    assert_int_equal(b.bb_state, BSRC_STATE_OK);
    assert_int_equal(b.bb_mib, INT64_MAX - 1);
    assert_string_equal(b.bb_decl,
                        "nvidia.com/gpu: 4294967298, nvidia.com/gpumem: 2147483647");
    c.bc_gpu[0] = "4294967299";
    bsrc_judge(&o, &p, &b);
    assert_int_equal(b.bb_state, BSRC_STATE_BAD);
    assert_string_equal(b.bb_error,
                        "the containers' nvidia.com/gpumem together overflow 64 bits");
}

/* A vector answer from "metric-labels=value" pairs. */
static char *
vector(const char *const *items)
{
    static char buf[8192];
    size_t off = 0;

    off += (size_t)snprintf(buf + off, sizeof(buf) - off,
                            "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\","
                            "\"result\":[");
    for (size_t i = 0; items[i] != NULL; i += 2)
        off += (size_t)snprintf(buf + off, sizeof(buf) - off,
                                "%s{\"metric\":{%s},\"value\":[100,\"%s\"]}",
                                i ? "," : "", items[i], items[i + 1]);
    snprintf(buf + off, sizeof(buf) - off, "]}}");
    return buf;
}

static void
reading(const char *const *items, const char *a, const char *b, struct usage_reading *out)
{
    const char *body = vector(items);
    char err[256];

    assert_int_equal(prom_json_parse_vector_gpu(body, strlen(body), a, b, "uuid", out,
                                                err, sizeof(err)),
                     0);
}

static void
device(const char *const *items, struct device_reading *out)
{
    struct usage_reading raw;

    reading(items, "__name__", "gvw_ts", &raw);
    assert_int_equal(device_from_series(&raw, out), 0);
}

#define FREE(u, v) "\"__name__\":\"gpu_memory_free_bytes\",\"uuid\":\"" u "\"", v
#define TOTAL(u, v) "\"__name__\":\"gpu_memory_total_bytes\",\"uuid\":\"" u "\"", v
#define DTS(u, v) "\"gvw_ts\":\"device\",\"uuid\":\"" u "\"", v
#define UTS(u, v) "\"gvw_ts\":\"used\",\"uuid\":\"" u "\"", v
#define USED(ns, pod, u, v)                                                              \
    "\"namespace\":\"" ns "\",\"pod\":\"" pod "\",\"uuid\":\"" u "\"", v
#define H100 "85520809984" /* 81559 MiB */
#define L4 "24152899584"   /* 23034 MiB */

/* A fraction of the GPU is MiB once the device's total is known; without it the
 * pod is bad_budget and never a victim by budget. */
static void
test_fraction_resolved_in_decision(void **state)
{
    const char *const dev[] = {FREE("GPU-a", "524288000"), TOTAL("GPU-a", H100),
                               DTS("GPU-a", "100"), UTS("GPU-a", "100"), NULL};
    const char *const use[] = {
        USED("team-a", "infer-half-7d9f8c6b5-abcde", "GPU-a",
             "64424509440"), /* 61440 MiB */
        USED("team-a", "infer-mem-5c6d7e8f9-bcdef", "GPU-a", "1048576000"), NULL};
    struct policy_params pp = {
        .pp_floor_mib = 1536, .pp_total_mib = 15360, .pp_now = 1900000000};
    struct device_reading dr;
    struct usage_reading ur;
    struct policy_answer res;
    struct pod_list l;
    struct policy_input in = {.pi_pods = &l, .pi_usage = &ur, .pi_gpu = "GPU-a"};

    (void)state;
    parse("budget-kai.json", "kai", &l);
    reading(use, "namespace", "pod", &ur);
    device(dev, &dr);

    /* No device reading (an explicit FREE_QUERY said 500 MiB free): a fraction
     * cannot be judged. */
    pp.pp_total_mib = 131072;
    in.pi_have_free = 1;
    in.pi_free_mib = 500;
    policy_resolve_budgets(&l, &ur, NULL);
    policy_decide(&pp, &in, &res);
    assert_int_equal(res.pr_outcome, POLICY_SKIPPED_NO_CANDIDATE);
    for (size_t i = 0; i < res.pr_candidate_count; i++)
        if (strcmp(res.pr_candidates[i].pc_name, "infer-half-7d9f8c6b5-abcde") == 0)
            assert_string_equal(res.pr_candidates[i].pc_why_not, "bad_budget");
    policy_answer_free(&res);

    /* With the device's total: half of 81559 MiB, rounded down, and over it. */
    in.pi_device = &dr;
    in.pi_have_free = 0;
    policy_resolve_budgets(&l, &ur, &dr);
    ok(&l, "infer-half-7d9f8c6b5-abcde", "kai", 40779, "gpu-fraction: \"0.5\"");
    policy_decide(&pp, &in, &res);
    assert_int_equal(res.pr_outcome, POLICY_VICTIM);
    assert_string_equal(res.pr_candidates[0].pc_name, "infer-half-7d9f8c6b5-abcde");
    assert_int_equal(res.pr_candidates[0].pc_budget_mib, 40779);
    assert_int_equal(res.pr_candidates[0].pc_overshoot_mib, 61440 - 40779);
    policy_answer_free(&res);
    /* Again: the same answer (resolution starts from the declaration). */
    policy_resolve_budgets(&l, &ur, &dr);
    ok(&l, "infer-half-7d9f8c6b5-abcde", "kai", 40779, "gpu-fraction: \"0.5\"");

    usage_reading_free(&ur);
    device_reading_free(&dr);
    pod_list_free(&l);
}

/* GPUs of two sizes: the GPU the pod's series name decides; with none named,
 * the total cannot be known. */
static void
test_fraction_mixed_gpus(void **state)
{
    const char *const dev[] = {
        FREE("GPU-a", "524288000"), TOTAL("GPU-a", H100),       DTS("GPU-a", "100"),
        UTS("GPU-a", "100"),        FREE("GPU-b", "524288000"), TOTAL("GPU-b", L4),
        DTS("GPU-b", "100"),        UTS("GPU-b", "100"),        NULL};
    /* its series on GPU-b, and one the exporter could not tie to a GPU */
    const char *const use[] = {
        USED("llm", "half-card-6b7c8d9e0-cdefg", "GPU-b", "1048576"),
        "\"namespace\":\"llm\",\"pod\":\"half-card-6b7c8d9e0-cdefg\"", "1048576", NULL};
    struct device_reading dr;
    struct usage_reading ur, none = {0};
    struct pod_list l;

    (void)state;
    parse("budget-hami.json", "hami", &l);
    reading(use, "namespace", "pod", &ur);
    device(dev, &dr);
    policy_resolve_budgets(&l, &none, &dr);
    bad(&l, "half-card-6b7c8d9e0-cdefg", "hami", "the node's GPUs differ in size");
    policy_resolve_budgets(&l, &ur, &dr);
    ok(&l, "half-card-6b7c8d9e0-cdefg", "hami", 11517,
       "nvidia.com/gpumem-percentage: 50");
    usage_reading_free(&ur);
    device_reading_free(&dr);
    pod_list_free(&l);
}

/* A pod whose series name a GPU the device reading does not report has no
 * knowable total, even where another pod's GPU was just resolved. */
static void
test_fraction_on_unreported_gpu(void **state)
{
    const char *const dev[] = {FREE("GPU-a", "524288000"), TOTAL("GPU-a", H100),
                               DTS("GPU-a", "100"), UTS("GPU-a", "100"), NULL};
    const char *const use[] = {
        USED("team-a", "infer-half-7d9f8c6b5-abcde", "GPU-a", "1048576"),
        USED("runai-team-b", "jupyter-0", "GPU-c", "1048576"), NULL};
    struct device_reading dr;
    struct usage_reading ur;
    struct pod_list l;

    (void)state;
    parse("budget-kai.json", "kai", &l);
    reading(use, "namespace", "pod", &ur);
    device(dev, &dr);
    policy_resolve_budgets(&l, &ur, &dr);
    ok(&l, "infer-half-7d9f8c6b5-abcde", "kai", 40779, "gpu-fraction: \"0.5\"");
    bad(&l, "jupyter-0", "kai", BSRC_NEEDS_TOTAL);
    usage_reading_free(&ur);
    device_reading_free(&dr);
    pod_list_free(&l);
}

/* The pod's GPU is found among a busy node's series (131: more than a page of
 * pointers, an odd count), not only in a handful. */
static void
test_fraction_among_many_series(void **state)
{
    const char *const dev[] = {
        FREE("GPU-a", "524288000"), TOTAL("GPU-a", H100),       DTS("GPU-a", "100"),
        UTS("GPU-a", "100"),        FREE("GPU-b", "524288000"), TOTAL("GPU-b", L4),
        DTS("GPU-b", "100"),        UTS("GPU-b", "100"),        NULL};
    enum { OTHERS = 130 };
    static char names[OTHERS][16];
    struct usage_series series[OTHERS + 1];
    struct usage_reading ur = {.ur_series = series, .ur_count = OTHERS + 1};
    struct device_reading dr;
    struct pod_list l;

    (void)state;
    for (size_t i = 0; i < OTHERS; i++) {
        snprintf(names[i], sizeof(names[i]), "batch-%03zu", i);
        series[i] = (struct usage_series){"batch", names[i], "GPU-a", 1048576};
    }
    series[OTHERS] =
        (struct usage_series){"llm", "half-card-6b7c8d9e0-cdefg", "GPU-b", 1048576};
    parse("budget-hami.json", "hami", &l);
    device(dev, &dr);
    policy_resolve_budgets(&l, &ur, &dr);
    ok(&l, "half-card-6b7c8d9e0-cdefg", "hami", 11517,
       "nvidia.com/gpumem-percentage: 50");
    device_reading_free(&dr);
    pod_list_free(&l);
}

/* Resolving the shares leaves every other budget as declared: MiB stay MiB
 * without a device reading, and an unreadable one keeps its own words even
 * where the device's total is known. */
static void
test_resolve_leaves_other_budgets(void **state)
{
    const char *const dev[] = {FREE("GPU-a", "524288000"), TOTAL("GPU-a", H100),
                               DTS("GPU-a", "100"), UTS("GPU-a", "100"), NULL};
    const char *const use[] = {
        USED("team-a", "infer-half-7d9f8c6b5-abcde", "GPU-a", "1048576"), NULL};
    struct device_reading dr;
    struct usage_reading ur;
    struct pod_list l;

    (void)state;
    parse("budget-kai.json", "kai", &l);
    reading(use, "namespace", "pod", &ur);
    device(dev, &dr);
    for (int pass = 0; pass < 2; pass++) {
        policy_resolve_budgets(&l, &ur, pass == 0 ? NULL : &dr);
        ok(&l, "infer-mem-5c6d7e8f9-bcdef", "kai", 2000, "gpu-memory: \"2000\"");
        ok(&l, "infer-multi-6b7c8d9e0-cdefg", "kai", 2048,
           "gpu-memory: \"1024\", gpu-fraction-num-devices: \"2\"");
        bad(&l, "frac-0-1a2b3c4d5-hijkl", "kai",
            "gpu-fraction \"0\" is not a fraction above 0 and at most 1");
        bad(&l, "mem-gi-4d5e6f7a8-klmno", "kai",
            "gpu-memory \"2Gi\" is not a whole number");
    }
    ok(&l, "infer-half-7d9f8c6b5-abcde", "kai", 40779, "gpu-fraction: \"0.5\"");
    /* no series names jupyter-0's GPU: the node's one size serves */
    ok(&l, "jupyter-0", "kai", 20389, "gpu-fraction: \"0.25\"");
    usage_reading_free(&ur);
    device_reading_free(&dr);
    pod_list_free(&l);
}

static void
test_resolve_pure(void **state)
{
    struct bsrc_budget b = {.bb_source = BSRC_HAMI,
                            .bb_state = BSRC_STATE_OK,
                            .bb_mib = 100,
                            .bb_gpus = 0.25};
    char why[128];
    int64_t mib = 0;

    (void)state;
    /* an unreadable budget, or none, resolves to nothing, saying why */
    b.bb_state = BSRC_STATE_BAD;
    snprintf(b.bb_error, sizeof(b.bb_error), "gpu-fraction \"x\" is not a fraction");
    assert_int_equal(bsrc_resolve(&b, 1, 16106127360.0, &mib, why, sizeof(why)), -1);
    assert_string_equal(why, "gpu-fraction \"x\" is not a fraction");
    b.bb_state = BSRC_STATE_NONE;
    assert_int_equal(bsrc_resolve(&b, 1, 16106127360.0, &mib, why, sizeof(why)), -1);
    assert_string_equal(why, "no budget");
    b.bb_state = BSRC_STATE_OK;
    /* MiB alone need no GPU total */
    b.bb_gpus = 0;
    assert_int_equal(bsrc_resolve(&b, 0, 0, &mib, why, sizeof(why)), 0);
    assert_int_equal(mib, 100);
    b.bb_gpus = 0.25;
    assert_int_equal(bsrc_resolve(&b, 0, 0, &mib, why, sizeof(why)), -1);
    assert_string_equal(why, BSRC_NEEDS_TOTAL);
    assert_int_equal(bsrc_resolve(&b, 1, 16106127360.0, &mib, why, sizeof(why)), 0);
    assert_int_equal(mib, 100 + 3840);
    assert_int_equal(bsrc_resolve(&b, 1, -1.0, &mib, why, sizeof(why)), -1);
    /* MiB plus the share up to exactly INT64_MAX is kept; past it, refused */
    b.bb_mib = INT64_MAX - ((int64_t)1 << 40);
    b.bb_gpus = 1;
    assert_int_equal(bsrc_resolve(&b, 1, 0x1p60, &mib, why, sizeof(why)), 0);
    assert_int_equal(mib, INT64_MAX);
    b.bb_mib++;
    assert_int_equal(bsrc_resolve(&b, 1, 0x1p60, &mib, why, sizeof(why)), -1);
    assert_string_equal(why, "the budget overflows 64 bits");
}

/* DRA_DRIVER: a DNS subdomain of up to 253 characters; one more is refused. */
static void
test_driver_name_length(void **state)
{
    char name[256], err[160];

    (void)state;
    memset(name, 'a', sizeof(name));
    name[253] = '\0';
    assert_int_equal(bsrc_driver_check(name, err, sizeof(err)), 0);
    name[253] = 'a';
    name[254] = '\0';
    assert_int_equal(bsrc_driver_check(name, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "is not a driver name (a DNS subdomain"));
    /* every letter a to z */
    assert_int_equal(bsrc_driver_check("gpu.zz.example.com", err, sizeof(err)), 0);
}

/* KAI's gpu-fraction "1" is the whole GPU: at most 1 is allowed. */
static void
test_kai_whole_fraction(void **state)
{
    struct bsrc_order o = order("kai");
    struct bsrc_pod p = {.bp_namespace = "n", .bp_fraction = "1"};
    struct bsrc_budget b;
    char why[128];
    int64_t mib = 0;

    (void)state;
    bsrc_judge(&o, &p, &b);
    assert_int_equal(b.bb_state, BSRC_STATE_OK);
    assert_string_equal(b.bb_decl, "gpu-fraction: \"1\"");
    assert_int_equal(bsrc_resolve(&b, 1, 85520809984.0, &mib, why, sizeof(why)), 0);
    assert_int_equal(mib, 81559); /* the whole H100 */
}

/* A DRA claim consuming 0 bytes of memory is a budget of 0 MiB, not negative. */
static void
test_dra_zero_memory(void **state)
{
    static const char *const zero[] = {"0"};
    struct bsrc_order o = order("dra,resource");
    struct bsrc_claim c = {"gpu-claim", 1, 1, zero, 1, 1, NULL};
    struct bsrc_pod p = {.bp_namespace = "llm", .bp_claims = &c, .bp_claim_count = 1};
    struct bsrc_budget b;

    (void)state;
    bsrc_judge(&o, &p, &b);
    assert_int_equal(b.bb_source, BSRC_DRA);
    assert_int_equal(b.bb_state, BSRC_STATE_OK);
    assert_int_equal(b.bb_mib, 0);
    assert_string_equal(b.bb_decl, "claim llm/gpu-claim: memory 0");
}

/* A share of a GPU whose total is 0 bytes is no budget: the total is needed. */
static void
test_resolve_zero_total(void **state)
{
    struct bsrc_budget b = {
        .bb_source = BSRC_KAI, .bb_state = BSRC_STATE_OK, .bb_mib = 100, .bb_gpus = 0.5};
    char why[128];
    int64_t mib = -1;

    (void)state;
    assert_int_equal(bsrc_resolve(&b, 1, 0.0, &mib, why, sizeof(why)), -1);
    assert_string_equal(why, BSRC_NEEDS_TOTAL);
    assert_int_equal(mib, -1);
}

/* HAMi's gpumem-percentage 100 is the whole GPU: 1 to 100 are percentages. */
static void
test_hami_whole_percentage(void **state)
{
    struct bsrc_container c = {"c", {"1", NULL}, {NULL, NULL}, {"100", NULL}};
    struct bsrc_order o = order("hami");
    struct bsrc_pod p = {
        .bp_namespace = "n", .bp_containers = &c, .bp_container_count = 1};
    struct bsrc_budget b;
    char why[128];
    int64_t mib = 0;

    (void)state;
    bsrc_judge(&o, &p, &b);
    assert_int_equal(b.bb_state, BSRC_STATE_OK);
    assert_string_equal(b.bb_decl, "nvidia.com/gpumem-percentage: 100");
    assert_int_equal(bsrc_resolve(&b, 1, 24152899584.0, &mib, why, sizeof(why)), 0);
    assert_int_equal(mib, 23034); /* the whole L4 */
}

/* BUDGET_SOURCES: a tab around a word is blank, as a space is. */
static void
test_order_parse_tabs(void **state)
{
    struct bsrc_order o;
    char err[160];

    (void)state;
    assert_int_equal(bsrc_order_parse("\tkai\t,hami\t", &o, err, sizeof(err)), 0);
    assert_int_equal(o.bo_count, 2);
    assert_int_equal(o.bo_src[0], BSRC_KAI);
    assert_int_equal(o.bo_src[1], BSRC_HAMI);
}

/* HAMi's gpumem 0 is no MiB figure: the whole GPU, as without one. */
static void
test_hami_gpumem_zero(void **state)
{
    struct bsrc_container c = {"c", {"1", NULL}, {"0", NULL}, {NULL, NULL}};
    struct bsrc_order o = order("hami");
    struct bsrc_pod p = {
        .bp_namespace = "n", .bp_containers = &c, .bp_container_count = 1};
    struct bsrc_budget b;

    (void)state;
    bsrc_judge(&o, &p, &b);
    assert_int_equal(b.bb_state, BSRC_STATE_OK);
    assert_true(b.bb_gpus == 1.0);
    assert_int_equal(b.bb_mib, 0);
}

/* HAMi's containers together may reach exactly INT64_MAX MiB: kept. */
static void
test_hami_sum_exactly_int64_max(void **state)
{
    struct bsrc_container c[] = {
        {"a", {"1", NULL}, {"1", NULL}, {NULL, NULL}},
        {"b", {"4294967298", NULL}, {"2147483647", NULL}, {NULL, NULL}}};
    struct bsrc_order o = order("hami");
    struct bsrc_pod p = {
        .bp_namespace = "n", .bp_containers = c, .bp_container_count = 2};
    struct bsrc_budget b;

    (void)state;
    bsrc_judge(&o, &p, &b);
    assert_int_equal(b.bb_state, BSRC_STATE_OK);
    assert_int_equal(b.bb_mib, INT64_MAX); /* 1 + (2^32 + 2) x (2^31 - 1) */
}

/* KAI's gpu-memory "0" is no budget: above 0 MiB is asked. */
static void
test_kai_memory_zero(void **state)
{
    struct bsrc_order o = order("kai");
    struct bsrc_pod p = {.bp_namespace = "n", .bp_memory = "0"};
    struct bsrc_budget b;

    (void)state;
    bsrc_judge(&o, &p, &b);
    assert_int_equal(b.bb_state, BSRC_STATE_BAD);
    assert_string_equal(b.bb_error,
                        "gpu-memory \"0\" is not a whole number of MiB above 0");
}

/* A pod claim with no claim object (bl_claim NULL) adds nothing beside one
 * with memory. */
static void
test_dra_claim_without_object(void **state)
{
    static const char *const eight[] = {"8Gi"};
    struct bsrc_order o = order("dra,resource");
    struct bsrc_claim c[] = {{NULL, 0, 0, NULL, 0, 0, NULL},
                             {"gpu-claim", 1, 1, eight, 1, 1, NULL}};
    struct bsrc_pod p = {.bp_namespace = "llm", .bp_claims = c, .bp_claim_count = 2};
    struct bsrc_budget b;

    (void)state;
    bsrc_judge(&o, &p, &b);
    assert_int_equal(b.bb_source, BSRC_DRA);
    assert_int_equal(b.bb_state, BSRC_STATE_OK);
    assert_int_equal(b.bb_mib, 8192);
    assert_string_equal(b.bb_decl, "claim llm/gpu-claim: memory 8Gi");
}

/* A share worth exactly 9e18 MiB is refused as overflowing (the bound a cast
 * to int64 is safe under), never kept. */
static void
test_resolve_share_at_bound(void **state)
{
    struct bsrc_budget b = {
        .bb_source = BSRC_HAMI, .bb_state = BSRC_STATE_OK, .bb_mib = 0, .bb_gpus = 1};
    char why[128];
    int64_t mib = -1;

    (void)state;
    assert_int_equal(bsrc_resolve(&b, 1, 9.0e18 * 1048576.0, &mib, why, sizeof(why)), -1);
    assert_string_equal(why, "the budget overflows 64 bits");
    assert_int_equal(mib, -1);
}

/* Every source listed and none declared: no budget, from no source. */
static void
test_all_sources_none_declared(void **state)
{
    struct bsrc_order o = order("resource,hami,kai,dra");
    struct bsrc_pod p = {.bp_namespace = "n"};
    struct bsrc_budget b;

    (void)state;
    bsrc_judge(&o, &p, &b);
    assert_int_equal(b.bb_source, BSRC_NONE);
    assert_int_equal(b.bb_state, BSRC_STATE_NONE);
    assert_null(bsrc_name(b.bb_source));
}

/* BUDGET_SOURCES with a blank word between commas: an empty word, said so. */
static void
test_order_parse_blank_word(void **state)
{
    struct bsrc_order o;
    char err[160];

    (void)state;
    assert_int_equal(bsrc_order_parse("resource, ,kai", &o, err, sizeof(err)), -1);
    assert_string_equal(err,
                        "an empty word in 'resource, ,kai' (resource, hami, kai, dra)");
}

/* A claim read but not allocated yet, with no memory: DRA, unreadable (it may
 * be the one), not a pod without a budget. */
static void
test_dra_claim_not_allocated(void **state)
{
    struct bsrc_order o = order("dra,resource");
    struct bsrc_claim c = {"gpu-claim", 1, 0, NULL, 0, 0, NULL};
    struct bsrc_pod p = {.bp_namespace = "llm", .bp_claims = &c, .bp_claim_count = 1};
    struct bsrc_budget b;

    (void)state;
    bsrc_judge(&o, &p, &b);
    assert_int_equal(b.bb_source, BSRC_DRA);
    assert_int_equal(b.bb_state, BSRC_STATE_BAD);
    assert_string_equal(b.bb_error, "claim llm/gpu-claim has no allocation");
}

/* DRA memory summing to exactly INT64_MAX bytes is kept (rounded up to MiB). */
static void
test_dra_memory_exactly_int64_max(void **state)
{
    static const char *const two[] = {"9223372036854775806", "1"};
    struct bsrc_order o = order("dra");
    struct bsrc_claim c = {"gpu-claim", 1, 1, two, 2, 1, NULL};
    struct bsrc_pod p = {.bp_namespace = "llm", .bp_claims = &c, .bp_claim_count = 1};
    struct bsrc_budget b;

    (void)state;
    bsrc_judge(&o, &p, &b);
    assert_int_equal(b.bb_state, BSRC_STATE_OK);
    assert_int_equal(b.bb_mib, (INT64_MAX >> 20) + 1);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_parse),
        cmocka_unit_test(test_hami),
        cmocka_unit_test(test_default_is_resource),
        cmocka_unit_test(test_kai),
        cmocka_unit_test(test_malformed_shapes),
        cmocka_unit_test(test_dra),
        cmocka_unit_test(test_hami_overflow_edge),
        cmocka_unit_test(test_kai_one_device),
        cmocka_unit_test(test_hami_empty_value),
        cmocka_unit_test(test_fraction_resolved_in_decision),
        cmocka_unit_test(test_fraction_mixed_gpus),
        cmocka_unit_test(test_fraction_among_many_series),
        cmocka_unit_test(test_fraction_on_unreported_gpu),
        cmocka_unit_test(test_resolve_pure),
        cmocka_unit_test(test_resolve_leaves_other_budgets),
        cmocka_unit_test(test_driver_name_length),
        cmocka_unit_test(test_kai_whole_fraction),
        cmocka_unit_test(test_dra_zero_memory),
        cmocka_unit_test(test_resolve_zero_total),
        cmocka_unit_test(test_hami_whole_percentage),
        cmocka_unit_test(test_order_parse_tabs),
        cmocka_unit_test(test_hami_gpumem_zero),
        cmocka_unit_test(test_hami_sum_exactly_int64_max),
        cmocka_unit_test(test_kai_memory_zero),
        cmocka_unit_test(test_dra_claim_without_object),
        cmocka_unit_test(test_resolve_share_at_bound),
        cmocka_unit_test(test_all_sources_none_declared),
        cmocka_unit_test(test_order_parse_blank_word),
        cmocka_unit_test(test_dra_claim_not_allocated),
        cmocka_unit_test(test_dra_memory_exactly_int64_max),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
