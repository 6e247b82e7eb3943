/* podmap.c -- the pods of this node, cached, re-listed when a process names an unknown one */
#include "podmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cgroup.h"
#include "clock.h"
#include "log.h"

#define ASKED_MAX 64
#define ASKED_TTL 60.0 /* a key still unknown a minute after its list may ask again */
#define FAILED_BACKOFF 5.0
#define KEY_MAX (CGROUP_UID_MAX + CGROUP_CID_MAX)

struct asked {
    char a_key[KEY_MAX];
    double a_at;
};

struct podmap {
    struct kubec *pm_kube; /* owned; NULL = no API server */
    char *pm_node;         /* owned */
    struct pl_pods pm_pods;
    int pm_inflight;
    int pm_failed_logged;  /* the failure was logged; the next success says so */
    double pm_failed_at;   /* monotonic seconds of the last failed list; 0 = none */
    struct asked pm_asked[ASKED_MAX];
    size_t pm_nasked;
    podmap_changed_fn pm_changed;
    void *pm_arg;
};


static int
parse_list(const char *body, size_t len, void *arg, char *err, size_t errlen)
{
    struct podmap *pm = arg;
    struct pl_pods fresh;

    if (podlist_parse(body, len, &fresh, err, errlen) == -1)
        return -1;
    podlist_free(&pm->pm_pods);
    pm->pm_pods = fresh;
    return 0;
}

static void
listed(const struct kubec_answer *a, void *arg)
{
    struct podmap *pm = arg;

    pm->pm_inflight = 0;
    if (a->kr_cancelled)
        return;
    if (a->kr_class != KUBE_OK) {
        pm->pm_failed_at = clock_mono_s();
        pm->pm_nasked = 0; /* nothing was learned: the keys may ask again */
        if (!pm->pm_failed_logged)
            log_event(LOG_LEVEL_WARN, "pod list failed; processes stay unattributed",
                      "node", pm->pm_node, "error", a->kr_error, (char *)NULL);
        pm->pm_failed_logged = 1;
        return;
    }
    if (pm->pm_failed_logged)
        log_event(LOG_LEVEL_INFO, "pod list works again", "node", pm->pm_node, (char *)NULL);
    pm->pm_failed_logged = 0;
    pm->pm_failed_at = 0;
    if (pm->pm_changed != NULL)
        pm->pm_changed(pm->pm_arg);
}

static int
start_list(struct podmap *pm)
{
    struct kubec_call c;
    struct buf path;
    char what[320];
    int rc;

    buf_init(&path, 4096);
    kubec_path_add(&path, "/api/v1/pods?fieldSelector=", NULL);
    kubec_path_add(&path, NULL, "spec.nodeName=");
    kubec_path_add(&path, NULL, pm->pm_node);
    snprintf(what, sizeof(what), "list pods on node %s", pm->pm_node);
    memset(&c, 0, sizeof(c));
    c.kq_method = "GET";
    c.kq_path = path.b_toobig ? NULL : path.b_data;
    c.kq_what = what;
    c.kq_parse = parse_list;
    c.kq_done = listed;
    c.kq_arg = pm;
    if ((rc = kubec_call(pm->pm_kube, &c)) == 0)
        pm->pm_inflight = 1;
    buf_free(&path);
    return rc;
}

struct podmap *
podmap_new(struct event_base *base, const struct kube_opts *o, const char *node,
           podmap_changed_fn changed, void *arg, char *err, size_t errlen)
{
    struct podmap *pm;

    if ((pm = calloc(1, sizeof(*pm))) == NULL || (pm->pm_node = strdup(node)) == NULL) {
        snprintf(err, errlen, "out of memory");
        podmap_free(pm);
        return NULL;
    }
    pm->pm_changed = changed;
    pm->pm_arg = arg;
    if (o == NULL)
        return pm;
    if ((pm->pm_kube = kubec_new(base, o, err, errlen)) == NULL) {
        podmap_free(pm);
        return NULL;
    }
    if (start_list(pm) == -1)
        pm->pm_failed_at = clock_mono_s();
    return pm;
}

void
podmap_free(struct podmap *pm)
{
    if (pm == NULL)
        return;
    kubec_free(pm->pm_kube); /* a list in flight ends cancelled */
    podlist_free(&pm->pm_pods);
    free(pm->pm_node);
    free(pm);
}

const struct pl_pods *
podmap_pods(const struct podmap *pm)
{
    return &pm->pm_pods;
}

int
podmap_is_asked(const char *key, void *arg)
{
    struct podmap *pm = arg;
    double now = clock_mono_s();

    if (pm->pm_kube == NULL || pm->pm_inflight)
        return 1;
    for (size_t i = 0; i < pm->pm_nasked; i++)
        if (now - pm->pm_asked[i].a_at < ASKED_TTL && strcmp(pm->pm_asked[i].a_key, key) == 0)
            return 1;
    return 0;
}

void
podmap_relist(struct podmap *pm, const char *key)
{
    double now = clock_mono_s();
    struct asked *slot;

    if (pm->pm_kube == NULL || pm->pm_inflight ||
        (pm->pm_failed_at > 0 && now - pm->pm_failed_at < FAILED_BACKOFF))
        return;
    if (pm->pm_nasked == ASKED_MAX) { /* the oldest goes */
        memmove(&pm->pm_asked[0], &pm->pm_asked[1], (ASKED_MAX - 1) * sizeof(pm->pm_asked[0]));
        pm->pm_nasked--;
    }
    slot = &pm->pm_asked[pm->pm_nasked++];
    snprintf(slot->a_key, sizeof(slot->a_key), "%s", key);
    slot->a_at = now;
    log_event(LOG_LEVEL_DEBUG, "listing pods again", "node", pm->pm_node, "unknown", key,
              (char *)NULL);
    if (start_list(pm) == -1)
        pm->pm_failed_at = now;
}
