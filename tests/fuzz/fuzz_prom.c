/* fuzz_prom.c -- libFuzzer target: Prometheus query answers, then the usage summary */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_check.h"
#include "prom_json.h"
#include "usage.h"

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

    /* Another pair of label names (exporters differ), and no error buffer. */
    if (prom_json_parse_vector(body, size, "exported_namespace", "exported_pod", &r, NULL,
                               0) == 0)
        usage_reading_free(&r);

    err[0] = '\0';
    if (prom_json_parse_scalar(body, size, &v, err, sizeof(err)) == -1)
        FUZZ_CHECK_REASON(err, sizeof(err));
    return 0;
}
