/* metrics.c -- the daemon's Prometheus metrics and their text exposition */
#include "metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expo.h"
#include "metrics_family.h"
#include "log.h"

static const double duration_buckets[] = {0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1,
                                          2.5,   5,    10,   30,  60,   120};
#define NBUCKETS (sizeof(duration_buckets) / sizeof(duration_buckets[0]))

static struct {
    int dry_run;
    struct family requests;  /* code */
    struct family alerts;    /* alertname, status */
    struct family decisions; /* result */
    struct family free_vram; /* node, gpu (NULL in node scope); bytes */
    struct family capacity;  /* node, 0/1 */
    double capacity_errors;
    double event_errors;
    double decisions_queued; /* waiting for MAX_CONCURRENT_DECISIONS */
    int leader;              /* this replica leads (always, without an election) */
    double leader_transitions;
    metrics_collector_fn collector;
    void *collector_arg;
    uint64_t dur_buckets[NBUCKETS];
    uint64_t dur_count;
    double dur_sum;
} m;

void
metrics_cleanup(void)
{
    family_clear(&m.requests);
    family_clear(&m.alerts);
    family_clear(&m.decisions);
    family_clear(&m.free_vram);
    family_clear(&m.capacity);
}

void
metrics_init(int dry_run)
{
    metrics_cleanup();
    memset(&m, 0, sizeof(m));
    m.dry_run = dry_run;
    m.requests.f_name = "gpu_vram_watchdog_webhook_requests_total";
    m.alerts.f_name = "gpu_vram_watchdog_alerts_received_total";
    m.decisions.f_name = "gpu_vram_watchdog_decisions_total";
    m.free_vram.f_name = "gpu_vram_watchdog_free_vram_bytes";
    m.capacity.f_name = "gpu_vram_watchdog_capacity_advertised";
    m.leader = 1;
    m.free_vram.f_l2_optional = 1;
    /* SPEC's results: each decisions_total series exists from start-up at 0, so a
     * rate() or an alert on one result works before that result first happens.
     * in_progress is a row's state, never a finished decision's result. */
    for (int r = 0; r < RESULT_IN_PROGRESS; r++) /* OOM: added on first use */
        (void)family_lookup(&m.decisions, decision_result_name((enum decision_result)r),
                            NULL);
}

void
metrics_webhook_request(int code)
{
    static const char *const common[] = {"200", "400", "401", "405", "413", "503"};
    char buf[16];
    const char *label = buf;

    for (size_t i = 0; i < sizeof(common) / sizeof(common[0]); i++)
        if (atoi(common[i]) == code)
            label = common[i];
    if (label == buf)
        snprintf(buf, sizeof(buf), "%d", code);
    family_add(&m.requests, label, NULL, 1);
}

void
metrics_alert_received(const char *alertname, const char *status)
{
    family_add(&m.alerts, alertname, status, 1);
}

void
metrics_decision(enum decision_result result, double seconds)
{
    family_add(&m.decisions, decision_result_name(result), NULL, 1);
    if (seconds < 0)
        return;
    for (size_t i = 0; i < NBUCKETS; i++)
        if (seconds <= duration_buckets[i])
            m.dur_buckets[i]++;
    m.dur_count++;
    m.dur_sum += seconds;
}

void
metrics_free_vram(const char *node, int64_t free_mib)
{
    family_set(&m.free_vram, node, NULL, (double)free_mib * 1048576.0);
}

void
metrics_free_vram_gpu(const char *node, const char *gpu, int64_t free_mib)
{
    family_set(&m.free_vram, node, gpu, (double)free_mib * 1048576.0);
}

void
metrics_capacity_set(const char *node, int ok)
{
    family_set(&m.capacity, node, NULL, ok ? 1 : 0);
}

void
metrics_capacity_errors_set(uint64_t total)
{
    m.capacity_errors = (double)total;
}

void
metrics_decisions_queued_set(uint64_t queued)
{
    m.decisions_queued = (double)queued;
}

void
metrics_event_error(void)
{
    m.event_errors++;
}

void
metrics_leader_set(int leading)
{
    m.leader = leading != 0;
}

void
metrics_leader_transitions_set(uint64_t total)
{
    m.leader_transitions = (double)total;
}

void
metrics_set_collector(metrics_collector_fn fn, void *arg)
{
    m.collector = fn;
    m.collector_arg = arg;
}

static int
family(struct buf *out, const char *name, const char *type, const char *help,
       const struct family *f, const char *k1, const char *k2)
{
    if (expo_header(out, name, type, help) == -1)
        return -1;
    for (size_t i = 0; i < f->f_count; i++) {
        const struct series *s = &f->f_series[i];
        struct expo_label l[2] = {{k1, s->s_l1}, {k2, s->s_l2}};
        /* An optional second label is left out where the series has none. */
        size_t nl = k2 != NULL && (s->s_l2 != NULL || !f->f_l2_optional) ? 2 : 1;
        if (expo_sample(out, name, l, nl, s->s_value) == -1)
            return -1;
    }
    return 0;
}

int
metrics_render(struct buf *out)
{
    const char *hist = "gpu_vram_watchdog_decision_duration_seconds";

    if (m.collector != NULL)
        m.collector(m.collector_arg);

    if (expo_header(out, "gpu_vram_watchdog_build_info", "gauge",
                    "Build information; the value is always 1.") == -1 ||
        buf_printf(out, "gpu_vram_watchdog_build_info{version=\"%s\"} 1\n",
                   GVW_VERSION) == -1 ||
        expo_header(out, "gpu_vram_watchdog_dry_run", "gauge",
                    "1 when the watchdog only records what it would recycle.") == -1 ||
        buf_printf(out, "gpu_vram_watchdog_dry_run %d\n", m.dry_run ? 1 : 0) == -1 ||
        family(out, "gpu_vram_watchdog_webhook_requests_total", "counter",
               "Webhook requests answered, by HTTP status code.", &m.requests, "code",
               NULL) == -1 ||
        family(out, "gpu_vram_watchdog_alerts_received_total", "counter",
               "Alerts recorded from Alertmanager, by alertname and status.", &m.alerts,
               "alertname", "status") == -1 ||
        family(out, "gpu_vram_watchdog_decisions_total", "counter",
               "Decisions completed, by result.", &m.decisions, "result", NULL) == -1 ||
        family(out, "gpu_vram_watchdog_free_vram_bytes", "gauge",
               "Free VRAM on the node when last re-verified.", &m.free_vram, "node",
               "gpu") == -1 ||
        family(out, "gpu_vram_watchdog_capacity_advertised", "gauge",
               "1 when the last capacity patch of the node succeeded, else 0.",
               &m.capacity, "node", NULL) == -1 ||
        expo_header(out, "gpu_vram_watchdog_capacity_advertise_errors_total", "counter",
                    "Failed attempts to advertise the gpumem capacity.") == -1 ||
        buf_printf(out, "gpu_vram_watchdog_capacity_advertise_errors_total %.17g\n",
                   m.capacity_errors) == -1 ||
        expo_header(out, hist, "histogram", "Time from a decision's start to its end.") ==
            -1)
        return -1;
    for (size_t i = 0; i < NBUCKETS; i++)
        if (buf_printf(out, "%s_bucket{le=\"%g\"} %llu\n", hist, duration_buckets[i],
                       (unsigned long long)m.dur_buckets[i]) == -1)
            return -1;
    if (buf_printf(out, "%s_bucket{le=\"+Inf\"} %llu\n%s_sum %.17g\n%s_count %llu\n",
                   hist, (unsigned long long)m.dur_count, hist, m.dur_sum, hist,
                   (unsigned long long)m.dur_count) == -1)
        return -1;
    if (expo_header(out, "gpu_vram_watchdog_events_errors_total", "counter",
                    "Kubernetes Events that could not be written.") == -1 ||
        buf_printf(out, "gpu_vram_watchdog_events_errors_total %.17g\n",
                   m.event_errors) == -1 ||
        expo_header(
            out, "gpu_vram_watchdog_decisions_queued", "gauge",
            "Decisions waiting for a slot (MAX_CONCURRENT_DECISIONS in flight).") == -1 ||
        buf_printf(out, "gpu_vram_watchdog_decisions_queued %.17g\n",
                   m.decisions_queued) == -1 ||
        expo_header(out, "gpu_vram_watchdog_leader", "gauge",
                    "1 when this replica leads: it decides and acts (always 1 without "
                    "leader election).") == -1 ||
        buf_printf(out, "gpu_vram_watchdog_leader %d\n", m.leader) == -1 ||
        expo_header(out, "gpu_vram_watchdog_leader_transitions_total", "counter",
                    "Times this replica became the leader.") == -1 ||
        buf_printf(out, "gpu_vram_watchdog_leader_transitions_total %.17g\n",
                   m.leader_transitions) == -1)
        return -1;
    return 0;
}
