/* fuzz_prom.c -- libFuzzer target: Prometheus query answers, then the usage summary */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "fuzz_check.h"
#include "prom_json.h"
#include "usage.h"

/* GPUs judged per input, at most (the index is built whatever their number). */
#define MAX_JUDGED 64

/* The card sizes a summary is judged against: the default, and one so large
 * that only negative or non-finite values can be implausible. */
static const int64_t totals[] = {15360, INT64_MAX / 2};

static void
check_summary(const struct usage_reading *r, int64_t total_mib)
{
    struct usage_summary sum;
    char err[512];
    double pods = 0;
    size_t i;
    int c;

    err[0] = '\0';
    if (usage_summarise(r, total_mib, &sum, err, sizeof(err)) == -1) {
        FUZZ_CHECK_REASON(err, sizeof(err));
        FUZZ_CHECK(sum.us_pods == NULL && sum.us_count == 0,
                   "a refused summary kept pods");
        usage_summary_free(&sum);
        return;
    }
    FUZZ_CHECK(r->ur_count > 0, "an empty reading summarised");
    for (i = 0; i < sum.us_count; i++) {
        const struct pod_usage *p = &sum.us_pods[i];
        FUZZ_CHECK(p->pu_namespace != NULL && p->pu_namespace[0] != '\0' &&
                       p->pu_pod != NULL && p->pu_pod[0] != '\0',
                   "pods[%zu] without a name", i);
        FUZZ_CHECK(isfinite(p->pu_bytes) && p->pu_bytes >= 0 &&
                       p->pu_bytes <= (double)total_mib * 1048576.0,
                   "pods[%zu] %g bytes passed as plausible", i, p->pu_bytes);
        if (i > 0) {
            /* "sorted by namespace then pod", one entry per pod */
            c = strcmp(sum.us_pods[i - 1].pu_namespace, p->pu_namespace);
            if (c == 0)
                c = strcmp(sum.us_pods[i - 1].pu_pod, p->pu_pod);
            FUZZ_CHECK(c < 0, "pods[%zu] out of order or repeated", i);
        }
        pods += p->pu_bytes;
    }
    FUZZ_CHECK(sum.us_unattributed_bytes >= 0 && sum.us_total_bytes >= pods &&
                   sum.us_total_bytes <= (double)total_mib * 1048576.0,
               "totals: %g attributed, %g in all", pods, sum.us_total_bytes);
    usage_summary_free(&sum);
    FUZZ_CHECK(sum.us_pods == NULL && sum.us_count == 0, "usage_summary_free left state");
}

/* GPU scope: the reading indexed once, each GPU judged on it (SPEC "GPU
 * scope"); what passes is plausible on its GPU and keeps its pods ordered. */
static void
check_gpus(const struct usage_reading *r)
{
    struct usage_limits lim = {15360, NULL, NULL};
    struct usage_index *ix = usage_index_new(r, &lim);
    struct usage_summary sum;
    const char **gpus;
    size_t n, i, k;
    char err[1024];

    if (ix == NULL)
        return; /* out of memory */
    if (usage_gpus(r, &gpus, &n) == -1) {
        usage_index_free(ix);
        return;
    }
    FUZZ_CHECK(usage_index_gpu_count(ix) == n,
               "the index names %zu GPUs, the reading %zu", usage_index_gpu_count(ix), n);
    for (i = 0; i < n && i < MAX_JUDGED; i++) {
        FUZZ_CHECK(i == 0 || strcmp(gpus[i - 1], gpus[i]) < 0,
                   "GPUs not sorted, distinct");
        err[0] = '\0';
        if (usage_summarise_gpu_ix(ix, gpus[i], &sum, err, sizeof(err)) == -1) {
            FUZZ_CHECK_REASON(err, sizeof(err));
            continue;
        }
        for (k = 0; k < sum.us_count; k++) {
            const struct pod_usage *p = &sum.us_pods[k];
            FUZZ_CHECK(isfinite(p->pu_gpu_bytes) && p->pu_gpu_bytes > 0 &&
                           p->pu_gpu_bytes <= 15360.0 * 1048576.0,
                       "GPU %zu: pods[%zu] %g bytes passed", i, k, p->pu_gpu_bytes);
            FUZZ_CHECK(isfinite(p->pu_bytes) && p->pu_bytes >= p->pu_gpu_bytes,
                       "GPU %zu: pods[%zu] a total of %g bytes passed", i, k,
                       p->pu_bytes);
        }
        FUZZ_CHECK(sum.us_total_bytes <= 15360.0 * 1048576.0, "GPU %zu: %g bytes in all",
                   i, sum.us_total_bytes);
        usage_summary_free(&sum);
    }
    free(gpus);
    usage_index_free(ix);
}

/* The device query's answer: bounded at USAGE_MAX_GPUS, sorted, every GPU found. */
static void
check_device(const char *body, size_t size)
{
    struct usage_reading raw;
    struct device_reading d;
    int rc;

    if (prom_json_parse_vector_gpu(body, size, "__name__", "gvw_ts", "uuid", &raw, NULL,
                                   0) == -1)
        return;
    rc = device_from_series(&raw, &d);
    FUZZ_CHECK(rc == 0 || rc == -1 || rc == DEVICE_TOO_MANY_GPUS, "device rc %d", rc);
    FUZZ_CHECK(rc == 0 || d.dr_count == 0, "a refused device answer kept GPUs");
    FUZZ_CHECK(d.dr_count <= USAGE_MAX_GPUS, "%zu GPUs kept", d.dr_count);
    for (size_t i = 0; i < d.dr_count; i++) {
        FUZZ_CHECK(i == 0 || strcmp(d.dr_gpus[i - 1].dg_gpu, d.dr_gpus[i].dg_gpu) < 0,
                   "device GPUs not sorted, distinct");
        FUZZ_CHECK(device_find(&d, d.dr_gpus[i].dg_gpu) == &d.dr_gpus[i],
                   "device GPU %zu not found", i);
    }
    device_reading_free(&d);
    usage_reading_free(&raw);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *body = (const char *)data;
    struct usage_reading r;
    char err[512];
    double v;
    size_t i;

    err[0] = '\0';
    if (prom_json_parse_vector(body, size, "namespace", "pod", &r, err, sizeof(err)) ==
        -1) {
        FUZZ_CHECK_REASON(err, sizeof(err));
        FUZZ_CHECK(r.ur_series == NULL && r.ur_count == 0, "a failed parse kept series");
    } else {
        for (i = 0; i < r.ur_count; i++)
            FUZZ_CHECK(
                (r.ur_series[i].us_namespace == NULL ||
                 r.ur_series[i].us_namespace[0] != '\0') &&
                    (r.ur_series[i].us_pod == NULL || r.ur_series[i].us_pod[0] != '\0'),
                "result[%zu]: an empty label kept as a name", i);
        for (i = 0; i < sizeof(totals) / sizeof(totals[0]); i++)
            check_summary(&r, totals[i]);
    }
    usage_reading_free(&r);
    FUZZ_CHECK(r.ur_series == NULL && r.ur_count == 0, "usage_reading_free left state");

    /* GPU scope, and the device query, on the same bytes. */
    if (prom_json_parse_vector_gpu(body, size, "namespace", "pod", "uuid", &r, NULL, 0) ==
        0) {
        check_gpus(&r);
        usage_reading_free(&r);
    }
    check_device(body, size);

    /* Another pair of label names (exporters differ), and no error buffer. */
    if (prom_json_parse_vector(body, size, "exported_namespace", "exported_pod", &r, NULL,
                               0) == 0)
        usage_reading_free(&r);

    err[0] = '\0';
    if (prom_json_parse_scalar(body, size, &v, err, sizeof(err)) == -1)
        FUZZ_CHECK_REASON(err, sizeof(err));
    return 0;
}
