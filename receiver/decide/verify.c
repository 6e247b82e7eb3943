/* verify.c -- after a recycle, free VRAM read back until the floor (a prediction: what
 * ends it) or SETTLE's end */
#include <stdio.h>
#include <time.h>

#include <event2/event.h>

#include "metrics.h"
#include "remedy_int.h"

void
verify_schedule(struct decision *d)
{
    double settle = ((double)d->d_r->r_cfg->c_settle_ms / 1000.0);
    double every = settle / 10.0;
    struct timeval tv;

    if (every < 0.2)
        every = 0.2;
    if (every > 2.0)
        every = 2.0;
    tv.tv_sec = (time_t)every;
    tv.tv_usec = (suseconds_t)((every - (double)tv.tv_sec) * 1e6);
    evtimer_add(d->d_verify_ev, &tv);
}

static void
verify_cb(struct gather *g, const struct gather_answer *gr, void *arg)
{
    struct decision *d = arg;
    double now = clock_mono_s();
    int64_t free_mib;
    char why[512];
    /* Read as the decision read it (as the release does): a device figure
     * gone since is no figure. */
    int known =
        gather_reread(gr, d->d_gr->gr_policy.pr_free_source, &free_mib, why, sizeof(why));

    if (gr->gr_status == GATHER_CANCELLED) {
        d->d_vg = NULL;
        gather_free(g);
        decision_interrupt(d);
        return;
    }
    d->d_vg = NULL;
    gather_free(g);
    if (!known && why[0] != '\0' && !d->d_verify_vanished) {
        d->d_verify_vanished = 1; /* said once, however often it is seen */
        verdict_reason_append(&d->d_v, "verify: %s", why);
    }
    if (known) {
        d->d_v.vd_d.sd_verified = 1;
        d->d_v.vd_d.sd_verify_free_mib = free_mib;
        d->d_v.vd_d.sd_verify_seconds = now - d->d_recycled_at;
        /* gr died with g above: the decision's own copy names the GPU. */
        metrics_free_vram_gpu(d->d_v.vd_d.sd_node, d->d_v.vd_d.sd_gpu, free_mib);
        if (free_mib >= decision_free_target(d)) {
            verdict_reason_append(&d->d_v, "free VRAM back to %lld MiB after %.1f s",
                                  (long long)free_mib, now - d->d_recycled_at);
            decision_finish(d, RESULT_RECYCLED);
            return;
        }
    }
    if (now >= d->d_verify_deadline) {
        char below[64];
        free_target_words(decision_free_target(d), d->d_r->r_cfg->c_floor_mib, below,
                          sizeof(below));
        if (d->d_v.vd_d.sd_verified)
            verdict_reason_append(&d->d_v,
                                  "free VRAM still %lld MiB, below %s, when SETTLE "
                                  "(%llds) ran out",
                                  (long long)d->d_v.vd_d.sd_verify_free_mib, below,
                                  (long long)(d->d_r->r_cfg->c_settle_ms / 1000));
        else
            verdict_reason_append(&d->d_v,
                                  "free VRAM could not be read back within SETTLE");
        decision_finish(d, RESULT_RECYCLED);
        return;
    }
    verify_schedule(d);
}

void
verify_tick(evutil_socket_t fd, short what, void *arg)
{
    struct decision *d = arg;
    struct remedy *r = d->d_r;

    /* Verification reads Prometheus only: no pod list. */
    d->d_vg = gather_start_reread(r->r_base, r->r_cfg, r->r_prom, d->d_v.vd_d.sd_node,
                                  d->d_v.vd_d.sd_gpu, verify_cb, d);
    if (d->d_vg == NULL) {
        verdict_reason_append(&d->d_v, "verification could not start (out of memory)");
        decision_finish(d, RESULT_RECYCLED);
    }
}
