/* metrics_lookup.c -- gvw-metrics-lookup: the cost of counting one alert in
 * gpu_vram_watchdog_alerts_received_total, by how many alertnames the family
 * already holds (it keeps at most METRICS_MAX_SERIES label sets, then "_other").
 *
 *   gvw-metrics-lookup
 *
 * Links receiver/metrics/metrics.c as the daemon does. Prints one line per family size.
 */
#include <stdio.h>
#include <time.h>

#include "metrics.h"

static double
now(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int
main(void)
{
    static char names[300][64];
    int sizes[] = {1, 10, 100, 255, 300};

    for (int i = 0; i < 300; i++)
        snprintf(names[i], sizeof(names[i]), "KubernetesAlertName%03d", i);
    for (int k = 0; k < 5; k++) {
        int n = sizes[k];
        metrics_init(1);
        for (int i = 0; i < n; i++) { /* fill: both statuses of each name */
            metrics_alert_received(names[i], "firing");
            metrics_alert_received(names[i], "resolved");
        }
        double t0 = now(), t1, t2, t3;
        long calls = 0;
        for (int r = 0; r < 2000; r++)
            for (int i = 0; i < n; i++) {
                metrics_alert_received(names[i], (i & 1) ? "firing" : "resolved");
                calls++;
            }
        t1 = now();
        t2 = now();
        for (int r = 0; r < 200000; r++)
            metrics_webhook_request(200);
        t3 = now();
        printf("METRICS alertnames=%d ns_per_alert=%.0f ns_per_webhook_count=%.0f\n", n,
               (t1 - t0) / (double)calls, (t3 - t2) / 200000);
    }
    metrics_cleanup();
    return 0;
}
