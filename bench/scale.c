/* scale.c -- gvw-scale: one decision's CPU work on a big node, from the bodies the
 * API server and Prometheus would send (bench/gen_scale.sh makes them).
 *
 *   gvw-scale PODS.json PROM.json [ROUNDS]
 *
 * Each round: pods_json_parse + prom_json_parse_vector + policy_decide, each timed
 * on CLOCK_MONOTONIC, everything freed. Prints the median and the slowest round,
 * the outcome, and the memory: peak RSS (ru_maxrss) before the first round (the
 * bodies read in, as curl would hold them) and after the last. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "pods_json.h"
#include "policy.h"
#include "prom_json.h"
#include "usage.h"

static double
now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static long
maxrss_kib(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static char *
slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *b;
    long n;

    if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 ||
        fseek(f, 0, SEEK_SET) != 0 || (b = malloc((size_t)n + 1)) == NULL ||
        fread(b, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "gvw-scale: cannot read %s\n", path);
        exit(2);
    }
    fclose(f);
    b[n] = '\0';
    *len = (size_t)n;
    return b;
}

static int
cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

#define MAX_ROUNDS 1000

int
main(int argc, char **argv)
{
    static double t_pods[MAX_ROUNDS], t_prom[MAX_ROUNDS], t_pol[MAX_ROUNDS],
        t_all[MAX_ROUNDS];
    size_t plen, qlen;
    char *pods_body, *prom_body, err[512];
    int rounds = argc > 3 ? atoi(argv[3]) : 21;
    long rss0, rss1;
    const char *excl[] = {"kube-system"};
    struct pod_parse_opts po = {
        .po_resource = "viktorbarzin.me/gpumem",
        .po_protect_annotation = "gpu-vram-watchdog/protected",
    };
    struct policy_params pp = {
        .pp_floor_mib = 1536,
        .pp_total_mib = 15360,
        .pp_min_runtime_s = 120,
        .pp_exclude_namespaces = excl,
        .pp_exclude_count = 1,
        .pp_now = (int64_t)time(NULL),
    };
    struct policy_answer last;
    size_t npods = 0, nseries = 0;

    if (argc < 3 || rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "usage: gvw-scale PODS.json PROM.json [ROUNDS<=%d]\n",
                MAX_ROUNDS);
        return 2;
    }
    pods_body = slurp(argv[1], &plen);
    prom_body = slurp(argv[2], &qlen);
    rss0 = maxrss_kib();
    memset(&last, 0, sizeof(last));
    for (int r = 0; r < rounds; r++) {
        struct pod_list pl;
        struct usage_reading ur;
        struct policy_answer res;
        struct policy_input in = {.pi_pods = &pl, .pi_usage = &ur};
        double t0, t1, t2, t3;

        memset(&res, 0, sizeof(res));
        t0 = now_ms();
        if (pods_json_parse(pods_body, plen, &po, &pl, err, sizeof(err)) == -1) {
            fprintf(stderr, "gvw-scale: pods: %s\n", err);
            return 1;
        }
        t1 = now_ms();
        if (prom_json_parse_vector(prom_body, qlen, "namespace", "pod", &ur, err,
                                   sizeof(err)) == -1) {
            fprintf(stderr, "gvw-scale: prom: %s\n", err);
            return 1;
        }
        t2 = now_ms();
        policy_decide(&pp, &in, &res);
        t3 = now_ms();
        t_pods[r] = t1 - t0;
        t_prom[r] = t2 - t1;
        t_pol[r] = t3 - t2;
        t_all[r] = t3 - t0;
        npods = pl.pl_count;
        nseries = ur.ur_count;
        if (r == rounds - 1) {
            last = res; /* keep the last outcome to print */
            memset(&res, 0, sizeof(res));
        }
        policy_answer_free(&res);
        usage_reading_free(&ur);
        pod_list_free(&pl);
    }
    rss1 = maxrss_kib();
    qsort(t_pods, (size_t)rounds, sizeof(double), cmpd);
    qsort(t_prom, (size_t)rounds, sizeof(double), cmpd);
    qsort(t_pol, (size_t)rounds, sizeof(double), cmpd);
    qsort(t_all, (size_t)rounds, sizeof(double), cmpd);
    printf("SCALE pods=%zu series=%zu body_kib=%zu rounds=%d\n", npods, nseries,
           (plen + qlen) / 1024, rounds);
    printf("SCALE median_ms pods_parse=%.2f prom_parse=%.2f policy=%.2f total=%.2f\n",
           t_pods[rounds / 2], t_prom[rounds / 2], t_pol[rounds / 2], t_all[rounds / 2]);
    printf("SCALE max_ms pods_parse=%.2f prom_parse=%.2f policy=%.2f total=%.2f\n",
           t_pods[rounds - 1], t_prom[rounds - 1], t_pol[rounds - 1], t_all[rounds - 1]);
    printf("SCALE outcome=%s candidates=%zu ranked=%zu victim=%s/%s\n",
           last.pr_outcome == POLICY_VICTIM
               ? "victim"
               : decision_result_name(policy_outcome_result(last.pr_outcome)),
           last.pr_candidate_count, last.pr_ranked_count,
           last.pr_ranked_count ? last.pr_candidates[0].pc_namespace : "-",
           last.pr_ranked_count ? last.pr_candidates[0].pc_name : "-");
    printf("SCALE maxrss_kib bodies_loaded=%ld after=%ld peak_delta=%ld\n", rss0, rss1,
           rss1 - rss0);
    policy_answer_free(&last);
    free(pods_body);
    free(prom_body);
    return 0;
}
