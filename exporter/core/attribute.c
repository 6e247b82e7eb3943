/* attribute.c -- GPU memory per container: NVML's processes joined to their pods (pure)
 */
#include "attribute.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
attr_tally_free(struct attr_tally *r)
{
    if (r == NULL)
        return;
    free(r->ar_series);
    free(r->ar_devices);
    memset(r, 0, sizeof(*r));
}

static const struct attr_pid *
find_pid(const struct attr_pid *pids, size_t npids, uint32_t pid)
{
    for (size_t i = 0; i < npids; i++)
        if (pids[i].ap_pid == pid)
            return &pids[i];
    return NULL;
}

/* Adds bytes to the series (device, pod, container), creating it. */
static int
add_series(struct attr_tally *r, size_t *cap, size_t dev, const struct pod *pod,
           const char *container, uint64_t bytes)
{
    struct attr_series *s;

    for (size_t i = 0; i < r->ar_nseries; i++) {
        s = &r->ar_series[i];
        if (s->as_device == dev && s->as_pod == pod->p_name &&
            s->as_namespace == pod->p_namespace &&
            strcmp(s->as_container, container) == 0) {
            s->as_bytes = attr_add_sat(s->as_bytes, bytes);
            return 0;
        }
    }
    if (r->ar_nseries == *cap) {
        size_t ncap = *cap ? *cap * 2 : 16;
        struct attr_series *grown = realloc(r->ar_series, ncap * sizeof(*grown));
        if (grown == NULL)
            return -1;
        r->ar_series = grown;
        *cap = ncap;
    }
    s = &r->ar_series[r->ar_nseries++];
    s->as_device = dev;
    s->as_namespace = pod->p_namespace;
    s->as_pod = pod->p_name;
    s->as_container = container;
    s->as_bytes = bytes;
    return 0;
}

static void
note_unknown(struct attr_tally *r, const char *key, int (*is_asked)(const char *, void *),
             void *arg)
{
    if (r->ar_unknown_seen || (is_asked != NULL && is_asked(key, arg)))
        return;
    r->ar_unknown_seen = 1;
    snprintf(r->ar_unknown, sizeof(r->ar_unknown), "%s", key);
}

/* The figure of process i of d once its duplicates are folded in; 0 when an
 * earlier entry has the same PID (it was counted there). The figure is the
 * largest one NVML reports in either list: a process listed with a figure
 * in one list and without in the other has its memory reported. */
static int
first_of_pid(const struct nvml_device *d, size_t i, uint64_t *used, int *known)
{
    for (size_t j = 0; j < i; j++)
        if (d->nd_procs[j].np_pid == d->nd_procs[i].np_pid)
            return 0;
    *used = 0;
    *known = 0;
    for (size_t j = i; j < d->nd_nprocs; j++)
        if (d->nd_procs[j].np_pid == d->nd_procs[i].np_pid && d->nd_procs[j].np_known) {
            if (!*known || d->nd_procs[j].np_used > *used)
                *used = d->nd_procs[j].np_used;
            *known = 1;
        }
    return 1;
}

enum attr_why
attribute_process(const struct nvml_device *d, size_t i, const struct attr_pid *pids,
                  size_t npids, const struct pod_list *pods, uint64_t *used,
                  const struct pod **pod, const char **container,
                  const struct attr_pid **apout)
{
    const struct attr_pid *ap;
    int known;

    *pod = NULL;
    *container = NULL;
    *used = 0;
    ap = find_pid(pids, npids, d->nd_procs[i].np_pid);
    if (apout != NULL)
        *apout = ap;
    if (!first_of_pid(d, i, used, &known))
        return ATTR_DUPLICATE;
    if (!known)
        return ATTR_NO_MEMORY;
    if (ap == NULL || !ap->ap_found)
        return ATTR_NO_POD_CGROUP; /* a host process, or gone: unattributed */
    if ((*pod = podlist_find(pods, ap->ap_id.cg_pod_uid)) == NULL)
        return ATTR_POD_UNKNOWN;
    *container = ap->ap_id.cg_container_id[0] != '\0'
                     ? podlist_container(*pod, ap->ap_id.cg_container_id)
                     : NULL;
    return ATTR_POD;
}

int
attribute(const struct nvml_snapshot *snap, const struct attr_pid *pids, size_t npids,
          const struct pod_list *pods, int (*is_asked)(const char *key, void *arg),
          void *arg, struct attr_tally *out)
{
    size_t cap = 0;

    memset(out, 0, sizeof(*out));
    if (snap->ns_count > 0 &&
        (out->ar_devices = calloc(snap->ns_count, sizeof(*out->ar_devices))) == NULL)
        return -1;
    for (size_t dv = 0; dv < snap->ns_count; dv++) {
        const struct nvml_device *d = &snap->ns_devices[dv];
        uint64_t attributed = 0;

        out->ar_devices[dv].ad_used =
            d->nd_total > d->nd_free ? d->nd_total - d->nd_free : 0;
        for (size_t i = 0; i < d->nd_nprocs; i++) {
            const struct attr_pid *ap;
            const struct pod *pod;
            const char *container;
            char key[sizeof(out->ar_unknown)];
            uint64_t used;
            enum attr_why why =
                attribute_process(d, i, pids, npids, pods, &used, &pod, &container, &ap);

            if (why == ATTR_POD_UNKNOWN)
                note_unknown(out, ap->ap_id.cg_pod_uid, is_asked, arg);
            if (why != ATTR_POD)
                continue;
            if (container == NULL && ap->ap_id.cg_container_id[0] != '\0') {
                snprintf(key, sizeof(key), "%s/%s", ap->ap_id.cg_pod_uid,
                         ap->ap_id.cg_container_id);
                note_unknown(out, key, is_asked, arg);
            }
            if (add_series(out, &cap, dv, pod, container ? container : "", used) == -1) {
                attr_tally_free(out);
                return -1;
            }
            attributed = attr_add_sat(attributed, used);
        }
        out->ar_devices[dv].ad_unattributed =
            out->ar_devices[dv].ad_used > attributed
                ? out->ar_devices[dv].ad_used - attributed
                : 0;
    }
    return 0;
}
