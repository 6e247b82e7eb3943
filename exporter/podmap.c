/* podmap.c -- the pods of this node, cached, re-listed when a process names an unknown
 * one */
#include "podmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cgroup.h"
#include "clock.h"
#include "log.h"
#include "pods_claims.h"

#define ASKED_MAX 64
#define ASKED_TTL 60.0 /* a key still unknown a minute after its list may ask again */
#define FAILED_BACKOFF 5.0
#define RESYNC 60.0 /* list at least this often: budgets of pods that hold no VRAM */
#define KEY_MAX (CGROUP_UID_MAX + CGROUP_CID_MAX)

struct asked {
    char a_key[KEY_MAX];
    double a_at;
};

struct podmap {
    struct kubec *pm_kube;        /* owned; NULL = no API server */
    char *pm_node;                /* owned */
    char *pm_resource;            /* owned: GPUMEM_RESOURCE */
    struct bsrc_order pm_sources; /* BUDGET_SOURCES */
    char *pm_driver; /* owned: DRA_DRIVER with dra listed (its claims are read); else
                        NULL */
    char **pm_told;  /* owned: UIDs whose unresolved share was logged */
    size_t pm_ntold, pm_captold;
    struct pod_list pm_pods;
    double pm_listed_at; /* monotonic seconds the last list started */
    char **pm_bad;       /* owned: UIDs of pods whose budget was unreadable last list */
    size_t pm_nbad;
    uint64_t pm_budget_errors; /* pods whose budget was unreadable, each counted once */
    int pm_budgets_logged;     /* the list-wide budget failure was logged */
    int pm_inflight;
    int pm_failed_logged;    /* the failure was logged; the next success says so */
    char pm_last_error[512]; /* why the last list failed */
    int pm_ok;               /* the last list that ended worked */
    int pm_listed_ok;        /* some list worked: pm_pods is the last good one */
    double pm_failed_at;     /* monotonic seconds of the last failed list; 0 = none */
    struct asked pm_asked[ASKED_MAX];
    size_t pm_nasked;
    podmap_changed_fn pm_changed;
    void *pm_arg;
};

static int
was_bad(const struct podmap *pm, const char *uid)
{
    for (size_t i = 0; i < pm->pm_nbad; i++)
        if (strcmp(pm->pm_bad[i], uid) == 0)
            return 1;
    return 0;
}

static void
free_bad(char **bad, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(bad[i]);
    free(bad);
}

/* Logs and counts each pod whose budget is unreadable once, not once per
 * list: the UIDs of the last list's bad pods are remembered (a pod gone from
 * the list is forgotten, so the set stays as small as the node). */
static void
note_bad_budgets(struct podmap *pm, const struct pod_list *fresh)
{
    char **bad = NULL;
    size_t nbad = 0;

    if (fresh->pl_budgets_error != NULL) {
        if (!pm->pm_budgets_logged)
            log_event(LOG_LEVEL_WARN, "no pod budget could be read from the pod list",
                      "node", pm->pm_node, "error", fresh->pl_budgets_error,
                      (char *)NULL);
        pm->pm_budgets_logged = 1;
    } else {
        pm->pm_budgets_logged = 0;
    }
    for (size_t i = 0; i < fresh->pl_count; i++)
        if (podlist_budget(&fresh->pl_pods[i]) == PL_BUDGET_BAD)
            nbad++;
    if (nbad > 0 && (bad = calloc(nbad, sizeof(*bad))) == NULL)
        nbad = 0; /* out of memory: at worst a pod is logged again */
    for (size_t i = 0, k = 0; i < fresh->pl_count && k < nbad; i++) {
        const struct pod *p = &fresh->pl_pods[i];
        if (podlist_budget(p) != PL_BUDGET_BAD)
            continue;
        if (!was_bad(pm, p->p_uid)) {
            pm->pm_budget_errors++;
            log_event(LOG_LEVEL_WARN,
                      "a pod's GPU memory budget is unreadable: no budget series for it",
                      "node", pm->pm_node, "namespace", p->p_namespace, "pod", p->p_name,
                      "resource", pm->pm_resource, "source",
                      p->p_budget_source ? p->p_budget_source : "", "error",
                      p->p_budget_error, (char *)NULL);
        }
        bad[k++] = strdup(p->p_uid); /* NULL (out of memory) is only forgotten */
    }
    free_bad(pm->pm_bad, pm->pm_nbad);
    pm->pm_bad = bad;
    pm->pm_nbad = nbad;
}

/* pods_claims_parse_fn: claims are those read for this list (dra), else NULL. */
static int
parse_list(const char *body, size_t len, const struct dra_claims *claims, char *err,
           size_t errlen, void *arg)
{
    struct podmap *pm = arg;
    struct pod_list fresh;

    if (podlist_parse_claims(body, len, pm->pm_resource, &pm->pm_sources, claims, &fresh,
                             err, errlen) == -1)
        return -1;
    note_bad_budgets(pm, &fresh);
    free_bad(pm->pm_told, pm->pm_ntold); /* a new list: each may be told again */
    pm->pm_told = NULL;
    pm->pm_ntold = pm->pm_captold = 0;
    pod_list_free(&pm->pm_pods);
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
        pm->pm_ok = 0;
        snprintf(pm->pm_last_error, sizeof(pm->pm_last_error), "%s",
                 a->kr_error ? a->kr_error : "the pod list failed");
        pm->pm_nasked = 0; /* nothing was learned: the keys may ask again */
        if (!pm->pm_failed_logged)
            log_event(LOG_LEVEL_WARN,
                      pm->pm_listed_ok
                          ? "pod list failed; the last good list stays in use"
                          : "pod list failed; processes stay unattributed",
                      "node", pm->pm_node, "error", a->kr_error, (char *)NULL);
        pm->pm_failed_logged = 1;
        return;
    }
    if (pm->pm_failed_logged)
        log_event(LOG_LEVEL_INFO, "pod list works again", "node", pm->pm_node,
                  (char *)NULL);
    pm->pm_failed_logged = 0;
    pm->pm_failed_at = 0;
    pm->pm_ok = 1;
    pm->pm_listed_ok = 1;
    if (pm->pm_changed != NULL)
        pm->pm_changed(pm->pm_arg);
}

/* The pod list, and with dra the claims its pods name (pods_claims.h). */
static int
start_list(struct podmap *pm)
{
    struct pods_claims_call q;
    int rc;

    memset(&q, 0, sizeof(q));
    q.pq_node = pm->pm_node;
    q.pq_driver = pm->pm_driver;
    q.pq_parse = parse_list;
    q.pq_done = listed;
    q.pq_arg = pm;
    pm->pm_listed_at = clock_mono_s();
    if ((rc = pods_claims_list(pm->pm_kube, &q)) == 0)
        pm->pm_inflight = 1;
    return rc;
}

struct podmap *
podmap_new(struct event_base *base, const struct kube_opts *o, const char *node,
           const char *resource, const struct bsrc_order *sources, const char *driver,
           podmap_changed_fn changed, void *arg, char *err, size_t errlen)
{
    struct podmap *pm;
    int dra = sources != NULL && bsrc_order_has(sources, BSRC_DRA);

    if ((pm = calloc(1, sizeof(*pm))) == NULL || (pm->pm_node = strdup(node)) == NULL ||
        (pm->pm_resource = strdup(resource)) == NULL ||
        (dra && (pm->pm_driver = strdup(driver != NULL && driver[0] != '\0'
                                            ? driver
                                            : BSRC_DRA_DRIVER_DEFAULT)) == NULL)) {
        snprintf(err, errlen, "out of memory");
        podmap_free(pm);
        return NULL;
    }
    if (sources != NULL)
        pm->pm_sources = *sources;
    pm->pm_changed = changed;
    pm->pm_arg = arg;
    if (o == NULL)
        return pm;
    if ((pm->pm_kube = kubec_new(base, o, err, errlen)) == NULL) {
        podmap_free(pm);
        return NULL;
    }
    if (start_list(pm) == -1) {
        pm->pm_failed_at = clock_mono_s();
        pm->pm_ok = 0;
        snprintf(pm->pm_last_error, sizeof(pm->pm_last_error),
                 "cannot start the pod list");
    }
    return pm;
}

void
podmap_free(struct podmap *pm)
{
    if (pm == NULL)
        return;
    kubec_free(pm->pm_kube); /* a list in flight ends cancelled */
    pod_list_free(&pm->pm_pods);
    free_bad(pm->pm_bad, pm->pm_nbad);
    free_bad(pm->pm_told, pm->pm_ntold);
    free(pm->pm_resource);
    free(pm->pm_driver);
    free(pm->pm_node);
    free(pm);
}

const struct pod_list *
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
        if (now - pm->pm_asked[i].a_at < ASKED_TTL &&
            strcmp(pm->pm_asked[i].a_key, key) == 0)
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
        memmove(&pm->pm_asked[0], &pm->pm_asked[1],
                (ASKED_MAX - 1) * sizeof(pm->pm_asked[0]));
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

void
podmap_refresh(struct podmap *pm)
{
    double now = clock_mono_s();

    if (pm->pm_kube == NULL || pm->pm_inflight || now - pm->pm_listed_at < RESYNC ||
        (pm->pm_failed_at > 0 && now - pm->pm_failed_at < FAILED_BACKOFF))
        return;
    if (start_list(pm) == -1)
        pm->pm_failed_at = now;
}

int
podmap_state(const struct podmap *pm, const char **why)
{
    if (pm->pm_kube == NULL) {
        *why = "no API server configured (KUBE_API_URL)";
        return PODMAP_NONE;
    }
    if (pm->pm_ok) {
        *why = "";
        return PODMAP_OK;
    }
    if (pm->pm_failed_at > 0) {
        *why = pm->pm_last_error;
        return PODMAP_FAILED;
    }
    if (pm->pm_inflight) {
        *why = "the pod list has not arrived yet";
        return PODMAP_LISTING;
    }
    *why = "";
    return PODMAP_OK;
}

uint64_t
podmap_budget_errors(const struct podmap *pm)
{
    return pm->pm_budget_errors;
}

void
podmap_share_unresolved(const struct pod *p, const char *why, void *arg)
{
    struct podmap *pm = arg;
    char **grown, *uid;

    for (size_t i = 0; i < pm->pm_ntold; i++)
        if (strcmp(pm->pm_told[i], p->p_uid) == 0)
            return;
    log_event(LOG_LEVEL_WARN,
              "a pod's GPU memory budget is a share of its GPU, whose total is not "
              "known this poll: no budget series for it",
              "node", pm->pm_node, "namespace", p->p_namespace, "pod", p->p_name,
              "source", p->p_budget_source ? p->p_budget_source : "", "error", why,
              (char *)NULL);
    if (pm->pm_ntold == pm->pm_captold) {
        size_t cap = pm->pm_captold ? pm->pm_captold * 2 : 8;
        if ((grown = realloc(pm->pm_told, cap * sizeof(*grown))) == NULL)
            return; /* out of memory: at worst it is logged again */
        pm->pm_told = grown;
        pm->pm_captold = cap;
    }
    if ((uid = strdup(p->p_uid)) != NULL)
        pm->pm_told[pm->pm_ntold++] = uid;
}
