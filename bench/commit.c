/* commit.c -- gvw-commit: the store's group commit alone, without HTTP.
 *
 *   gvw-commit DB [COMMITS] [ALERTS_PER_COMMIT]
 *
 * Does what commit_pending() in receiver/webhook/httpd.c does for one loop turn --
 * store_begin, ALERTS_PER_COMMIT x store_add_alert (the 1-alert bench payload's
 * columns), store_commit -- COMMITS times (default 20000 x 16), timing each commit on
 * CLOCK_MONOTONIC. The slow tail is what every webhook waiting in that loop turn
 * waits too: WAL checkpoints (page copies + fdatasync) happen inside commits
 * unless the store runs them elsewhere. Prints one line:
 *   COMMIT n=.. per=.. rows_per_s=.. p50_us=.. p99_us=.. p999_us=.. max_us=.. over_1ms=..
 * over_5ms=.. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "store.h"

static int64_t
now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int
cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
    struct store *s;
    char err[512];
    int n = argc > 2 ? atoi(argv[2]) : 20000, per = argc > 3 ? atoi(argv[3]) : 16;
    int64_t *lat, t_start, t_end, slow1 = 0, slow5 = 0;
    struct store_alert a = {
        .sa_alertname = "GPUBenchNoTrigger",
        .sa_status = "firing",
        .sa_fingerprint = "cee90ef7ef51c1b3",
        .sa_starts_at = "2026-11-21T23:41:25.184Z",
        .sa_ends_at = "0001-01-01T00:00:00Z",
        .sa_labels_json =
            "{\"alertname\":\"GPUBenchNoTrigger\",\"severity\":\"warning\"}",
        .sa_annotations_json =
            "{\"runbook_url\":\"https://example/runbooks/GPUVRAMLow.md\","
            "\"summary\":\"free 560\"}",
    };

    if (argc < 2 || n <= 0 || per <= 0) {
        fprintf(stderr, "usage: gvw-commit DB [COMMITS] [ALERTS_PER_COMMIT]\n");
        return 2;
    }
    if ((s = store_open(argv[1], STORE_READWRITE, err, sizeof(err))) == NULL ||
        (lat = calloc((size_t)n, sizeof(*lat))) == NULL) {
        fprintf(stderr, "gvw-commit: %s\n", s ? "out of memory" : err);
        return 1;
    }
    t_start = now_ns();
    for (int i = 0; i < n; i++) {
        int64_t t0 = now_ns();
        int64_t id;

        a.sa_received_ms = t0 / 1000000;
        if (store_begin(s, err, sizeof(err)) == -1)
            goto fail;
        for (int k = 0; k < per; k++)
            if (store_add_alert(s, &a, &id, err, sizeof(err)) == -1)
                goto fail;
        if (store_commit(s, err, sizeof(err)) == -1)
            goto fail;
        lat[i] = now_ns() - t0;
        slow1 += lat[i] > 1000000;
        slow5 += lat[i] > 5000000;
    }
    t_end = now_ns();
    store_close(s);
    qsort(lat, (size_t)n, sizeof(*lat), cmp64);
    printf("COMMIT n=%d per=%d rows_per_s=%.0f p50_us=%lld p99_us=%lld p999_us=%lld "
           "max_us=%lld over_1ms=%lld over_5ms=%lld\n",
           n, per, (double)n * per / ((double)(t_end - t_start) / 1e9),
           (long long)(lat[n / 2] / 1000), (long long)(lat[(int64_t)n * 99 / 100] / 1000),
           (long long)(lat[(int64_t)n * 999 / 1000] / 1000),
           (long long)(lat[n - 1] / 1000), (long long)slow1, (long long)slow5);
    return 0;
fail:
    fprintf(stderr, "gvw-commit: %s\n", err);
    return 1;
}
