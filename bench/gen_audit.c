/* gen_audit.c -- gvw-gen-audit: a big audit database, written through the store's own
 * API (so the rows, JSON columns and indexes are exactly what the daemon writes),
 * not through HTTP.
 *
 *   gvw-gen-audit DB DECISIONS [ALERTS]
 *
 * ALERTS (default = DECISIONS) alert rows and DECISIONS decision rows, spread evenly
 * over the 90 days before now (newest last, as the daemon appends them), in
 * transactions of 10,000. Decisions: 20 nodes (gpu-node-0..19); results mixed as a
 * busy dry-run-then-enforce cluster would show them (40% coalesced, 15% recycled,
 * 15% would_recycle, 10% skipped_recovered, 8% skipped_no_candidate, 5%
 * skipped_telemetry, 3% rate_limited, 2% blocked, 1% failed, 1% skipped_kube);
 * victims from 40 namespaces (tenant-0..39); 5 candidates each when the pods were
 * listed. Deterministic (fixed seed). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store.h"

#define BATCH 10000
#define DAY_MS (86400LL * 1000)

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint32_t
rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

static const char *
pick_result(void)
{
    uint32_t r = rnd(100);

    if (r < 40)
        return "coalesced";
    if (r < 55)
        return "recycled";
    if (r < 70)
        return "would_recycle";
    if (r < 80)
        return "skipped_recovered";
    if (r < 88)
        return "skipped_no_candidate";
    if (r < 93)
        return "skipped_telemetry";
    if (r < 96)
        return "rate_limited";
    if (r < 98)
        return "blocked";
    if (r < 99)
        return "failed";
    return "skipped_kube";
}

static int
has_victim(const char *res)
{
    return strcmp(res, "recycled") == 0 || strcmp(res, "would_recycle") == 0 ||
           strcmp(res, "rate_limited") == 0 || strcmp(res, "blocked") == 0 ||
           strcmp(res, "failed") == 0;
}

static int
has_candidates(const char *res)
{
    return has_victim(res) || strcmp(res, "skipped_no_candidate") == 0 ||
           strcmp(res, "skipped_recovered") == 0;
}

static void
die(const char *what, const char *err)
{
    fprintf(stderr, "gvw-gen-audit: %s: %s\n", what, err);
    exit(1);
}

int
main(int argc, char **argv)
{
    struct store *s;
    char err[512];
    long long ndec, nalert;
    int64_t now_ms, span, t0;
    struct timespec ts;

    if (argc < 3) {
        fprintf(stderr, "usage: gvw-gen-audit DB DECISIONS [ALERTS]\n");
        return 2;
    }
    ndec = atoll(argv[2]);
    nalert = argc > 3 ? atoll(argv[3]) : ndec;
    if ((s = store_open(argv[1], STORE_READWRITE, err, sizeof(err))) == NULL)
        die("open", err);
    clock_gettime(CLOCK_REALTIME, &ts);
    now_ms = (int64_t)ts.tv_sec * 1000 - 60000; /* the newest row a minute ago */
    span = 90 * DAY_MS;
    t0 = now_ms - span;

    for (long long i = 0; i < nalert; i++) {
        char labels[256], fp[32], starts[40];
        int64_t t =
            t0 + (int64_t)((double)span * (double)i / (double)(nalert ? nalert : 1));
        struct store_alert a = {
            .sa_received_ms = t,
            .sa_alertname = i % 10 < 3 ? "GPUVRAMLow" : "KubePodCrashLooping",
            .sa_status = i % 2 ? "resolved" : "firing",
            .sa_fingerprint = fp,
            .sa_starts_at = starts,
            .sa_ends_at = "0001-01-01T00:00:00Z",
            .sa_labels_json = labels,
            .sa_annotations_json =
                "{\"runbook_url\":\"https://example/runbooks/GPUVRAMLow.md\","
                "\"summary\":\"free VRAM below the floor\"}",
        };
        time_t sec = (time_t)(t / 1000);
        struct tm tm;

        gmtime_r(&sec, &tm);
        strftime(starts, sizeof(starts), "%Y-%m-%dT%H:%M:%SZ", &tm);
        snprintf(fp, sizeof(fp), "%016llx", (unsigned long long)(i * 2654435761ULL));
        snprintf(
            labels, sizeof(labels),
            "{\"alertname\":\"%s\",\"node\":\"gpu-node-%u\",\"severity\":\"warning\"}",
            a.sa_alertname, rnd(20));
        if (i % BATCH == 0 && store_begin(s, err, sizeof(err)) == -1)
            die("begin", err);
        if (store_add_alert(s, &a, NULL, err, sizeof(err)) == -1)
            die("alert", err);
        if ((i % BATCH == BATCH - 1 || i == nalert - 1) &&
            store_commit(s, err, sizeof(err)) == -1)
            die("commit", err);
    }

    for (long long i = 0; i < ndec; i++) {
        char node[32], ns[5][32], pod[5][64], reason[256], fp[32];
        struct store_candidate c[5];
        struct store_victim v;
        const char *res = pick_result();
        int64_t t = t0 + (int64_t)((double)span * (double)i / (double)ndec);
        int free_mib = 400 + (int)rnd(1100);
        struct store_decision d = {
            .sd_time_ms = t,
            .sd_node = node,
            .sd_trigger = "GPUVRAMLow",
            .sd_fingerprint = fp,
            .sd_result = res,
            .sd_reason = reason,
            .sd_free_known =
                strcmp(res, "skipped_telemetry") != 0 && strcmp(res, "coalesced") != 0,
            .sd_free_mib = free_mib,
            .sd_floor_mib = 1536,
            .sd_dry_run = strcmp(res, "would_recycle") == 0,
            .sd_alert_id =
                nalert ? 1 + (int64_t)((double)i * (double)nalert / (double)ndec) : 0,
        };

        snprintf(node, sizeof(node), "gpu-node-%u", rnd(20));
        snprintf(fp, sizeof(fp), "%016llx", (unsigned long long)(i * 40503ULL));
        snprintf(reason, sizeof(reason),
                 "free %d MiB < floor 1536 MiB; the decision's one sentence, as long as "
                 "a real one",
                 free_mib);
        if (has_candidates(res)) {
            for (int k = 0; k < 5; k++) {
                snprintf(ns[k], sizeof(ns[k]), "tenant-%u", rnd(40));
                snprintf(pod[k], sizeof(pod[k]), "app-%u-5f7c9d8b6-%05u", rnd(200),
                         rnd(100000));
                c[k] = (struct store_candidate){
                    .sc_namespace = ns[k],
                    .sc_pod = pod[k],
                    .sc_used_mib = 500 + rnd(9000),
                    .sc_has_budget = 1,
                    .sc_budget_mib = 1000 + 1000 * rnd(5),
                    .sc_eligible = k < 2,
                    .sc_why_not = k < 2 ? NULL : "within_budget",
                };
            }
            d.sd_candidates = c;
            d.sd_candidate_count = 5;
        }
        if (has_victim(res)) {
            v = (struct store_victim){
                .sv_namespace = ns[0],
                .sv_pod = pod[0],
                .sv_used_mib = c[0].sc_used_mib,
                .sv_has_budget = 1,
                .sv_budget_mib = c[0].sc_budget_mib,
                .sv_overshoot_mib = c[0].sc_used_mib - c[0].sc_budget_mib,
            };
            d.sd_victim = &v;
            d.sd_action = "evict";
        }
        if (strcmp(res, "recycled") == 0) {
            d.sd_verified = 1;
            d.sd_verify_free_mib = 4000 + rnd(5000);
            d.sd_verify_seconds = 1.5 + rnd(20);
        }
        if (strcmp(res, "failed") == 0 || strcmp(res, "skipped_telemetry") == 0)
            d.sd_error = "prometheus: HTTP 503";
        if (i % BATCH == 0 && store_begin(s, err, sizeof(err)) == -1)
            die("begin", err);
        if (store_decision_record(s, &d, NULL, err, sizeof(err)) == -1)
            die("decision", err);
        if ((i % BATCH == BATCH - 1 || i == ndec - 1) &&
            store_commit(s, err, sizeof(err)) == -1)
            die("commit", err);
    }
    store_close(s);
    printf("GEN decisions=%lld alerts=%lld\n", ndec, nalert);
    return 0;
}
