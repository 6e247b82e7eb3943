/* world.c -- the simulated cluster's state, advanced lazily from the clock per request */
#include "world.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Kubernetes' own alphabet for generated name suffixes (no vowels, no 0/1/3). */
static const char suffix_alphabet[] = "bcdfghjklmnpqrstvwxz2456789";

static double
clock_sec(clockid_t id)
{
    struct timespec ts;

    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double
world_now(const struct world *w)
{
    return clock_sec(CLOCK_MONOTONIC) - w->w_start_mono;
}

/* splitmix64: deterministic from the seed, so a scenario replays the same uids. */
static unsigned long long
rng_next(struct world *w)
{
    unsigned long long z = (w->w_rng += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* A version-4 UUID, as the API server assigns to every object. */
static void
gen_uid(struct world *w, char out[37])
{
    unsigned long long a = rng_next(w), b = rng_next(w);

    a = (a & ~0xf000ULL) | 0x4000ULL;       /* version 4 */
    b = (b & ~(3ULL << 62)) | (2ULL << 62); /* RFC 4122 variant */
    snprintf(out, 37, "%08llx-%04llx-%04llx-%04llx-%012llx", a >> 32, (a >> 16) & 0xffff,
             a & 0xffff, b >> 48, b & 0xffffffffffffULL);
}

void
world_fmt_time(double t, int millis, char *buf, size_t len)
{
    time_t secs = (time_t)t;
    struct tm tm;
    char base[32];

    gmtime_r(&secs, &tm);
    strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
    if (millis)
        snprintf(buf, len, "%s.%03dZ", base, (int)((t - (double)secs) * 1000.0));
    else
        snprintf(buf, len, "%sZ", base);
}

unsigned long long
world_next_rv(struct world *w)
{
    return ++w->w_rv;
}

/* Starts incarnation gen of slot sp at real time born (seconds since start). */
static int
incarnate(struct world *w, struct sim_pod *sp, double born)
{
    const struct sc_pod *po = sp->sp_spec;
    size_t i;

    free(sp->sp_pids);
    sp->sp_pids = NULL;
    free(sp->sp_cids);
    sp->sp_cids = NULL;
    sp->sp_ncids = json_array_size(po->po_containers);
    /* A new incarnation runs new containers: the runtime gives each a fresh id. */
    sp->sp_cids = calloc(sp->sp_ncids, sizeof(*sp->sp_cids));
    if (sp->sp_cids == NULL)
        return -1;
    for (i = 0; i < sp->sp_ncids; i++)
        snprintf(sp->sp_cids[i], sizeof(sp->sp_cids[i]), "%016llx%016llx%016llx%016llx",
                 rng_next(w), rng_next(w), rng_next(w), rng_next(w));
    sp->sp_procs = sp->sp_generation == 0 ? po->po_procs : po->po_rprocs;
    sp->sp_nprocs = sp->sp_generation == 0 ? po->po_nprocs : po->po_nrprocs;
    if (sp->sp_nprocs > 0) {
        sp->sp_pids = calloc(sp->sp_nprocs, sizeof(*sp->sp_pids));
        if (sp->sp_pids == NULL)
            return -1;
    }
    for (i = 0; i < sp->sp_nprocs; i++)
        sp->sp_pids[i] = (sp->sp_generation == 0 && sp->sp_procs[i].pr_pid > 0)
                             ? sp->sp_procs[i].pr_pid
                             : w->w_next_pid++;
    if (sp->sp_generation == 0) {
        snprintf(sp->sp_name, sizeof(sp->sp_name), "%s", po->po_name);
        if (po->po_uid != NULL)
            snprintf(sp->sp_uid, sizeof(sp->sp_uid), "%s", po->po_uid);
        else
            gen_uid(w, sp->sp_uid);
        sp->sp_created = w->w_start_wall - po->po_started_ago;
    } else {
        /* A StatefulSet's replacement keeps the name; other controllers pick a new
         * suffix. */
        if (strcmp(po->po_owner_kind, "StatefulSet") == 0) {
            snprintf(sp->sp_name, sizeof(sp->sp_name), "%s", po->po_name);
        } else {
            char sfx[6];
            for (i = 0; i < 5; i++)
                sfx[i] = suffix_alphabet[rng_next(w) % (sizeof(suffix_alphabet) - 1)];
            sfx[5] = '\0';
            snprintf(sp->sp_name, sizeof(sp->sp_name), "%s-%s", po->po_owner_name, sfx);
        }
        gen_uid(w, sp->sp_uid);
        sp->sp_created = w->w_start_wall + born;
    }
    sp->sp_born = born;
    sp->sp_release_due = -1; /* a new incarnation loads its models again */
    sp->sp_state = POD_ALIVE;
    sp->sp_rv = world_next_rv(w);
    return 0;
}

struct world *
world_new(const struct scenario *sc, double time_scale, char *err, size_t errlen)
{
    struct world *w;
    json_t *alloc;
    long maxpid = 0;
    size_t i, j;
    char uid[37], created[40];

    w = calloc(1, sizeof(*w));
    if (w == NULL)
        goto oom;
    w->w_sc = sc;
    w->w_scale = time_scale;
    w->w_start_mono = clock_sec(CLOCK_MONOTONIC);
    w->w_start_wall = clock_sec(CLOCK_REALTIME);
    w->w_rv = 4200;
    w->w_rng = sc->sc_seed;
    w->w_throttle_left = sc->sc_throttle_count;
    for (i = 0; i < sc->sc_npods; i++)
        for (j = 0; j < sc->sc_pods[i].po_nprocs; j++)
            if (sc->sc_pods[i].po_procs[j].pr_pid > maxpid)
                maxpid = sc->sc_pods[i].po_procs[j].pr_pid;
    /* Fresh pids sit well above the scenario's, as a busy host's would. */
    w->w_next_pid = maxpid + 1000;
    w->w_events = json_array();
    w->w_counts = json_object();
    w->w_pods = calloc(sc->sc_npods, sizeof(*w->w_pods));
    if (w->w_events == NULL || w->w_counts == NULL || w->w_pods == NULL)
        goto oom;
    w->w_npods = sc->sc_npods;
    for (i = 0; i < sc->sc_npods; i++) {
        w->w_pods[i].sp_spec = &sc->sc_pods[i];
        gen_uid(w, w->w_pods[i].sp_owner_uid);
        snprintf(w->w_pods[i].sp_ip, sizeof(w->w_pods[i].sp_ip), "10.244.1.%zu", i + 10);
        if (incarnate(w, &w->w_pods[i], 0.0) != 0)
            goto oom;
    }
    w->w_nodes = calloc(sc->sc_nnodes, sizeof(*w->w_nodes));
    if (w->w_nodes == NULL)
        goto oom;
    w->w_nnodes = sc->sc_nnodes;
    world_fmt_time(w->w_start_wall - 400 * 86400.0, 0, created, sizeof(created));
    for (i = 0; i < sc->sc_nnodes; i++) {
        const struct sc_node *nd = &sc->sc_nodes[i];
        char cidr[48];
        gen_uid(w, uid);
        snprintf(cidr, sizeof(cidr), "10.244.%zu.0/24", i + 1);
        alloc = json_deep_copy(nd->nd_capacity);
        w->w_nodes[i] = json_pack(
            "{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:O}, s:{s:s}, s:{s:O, s:o, s:[{s:s, s:s, "
            "s:s, s:s}], "
            "s:{s:s, s:s, s:s}}}",
            "kind", "Node", "apiVersion", "v1", "metadata", "name", nd->nd_name, "uid",
            uid, "resourceVersion", "0", "creationTimestamp", created, "labels",
            nd->nd_labels, "spec", "podCIDR", cidr, "status", "capacity", nd->nd_capacity,
            "allocatable", alloc, "conditions", "type", "Ready", "status", "True",
            "reason", "KubeletReady", "message", "kubelet is posting ready status",
            "nodeInfo", "kubeletVersion", "v1.30.4", "operatingSystem", "linux",
            "architecture", "amd64");
        if (w->w_nodes[i] == NULL)
            goto oom;
        snprintf(uid, sizeof(uid), "%llu", world_next_rv(w));
        if (json_object_set_new(json_object_get(w->w_nodes[i], "metadata"),
                                "resourceVersion", json_string(uid)) != 0)
            goto oom;
    }
    return w;
oom:
    snprintf(err, errlen, "world_new: out of memory");
    world_free(w);
    return NULL;
}

void
world_free(struct world *w)
{
    size_t i;

    if (w == NULL)
        return;
    for (i = 0; i < w->w_npods && w->w_pods != NULL; i++) {
        free(w->w_pods[i].sp_pids);
        free(w->w_pods[i].sp_cids);
    }
    free(w->w_pods);
    for (i = 0; i < w->w_nnodes && w->w_nodes != NULL; i++)
        json_decref(w->w_nodes[i]);
    free(w->w_nodes);
    json_decref(w->w_events);
    json_decref(w->w_counts);
    free(w);
}

void
world_advance(struct world *w)
{
    size_t i;

    w->w_clock = world_now(w);
    for (i = 0; i < w->w_npods; i++) {
        struct sim_pod *sp = &w->w_pods[i];
        if (sp->sp_state != POD_RESPAWNING || w->w_clock < sp->sp_due)
            continue;
        sp->sp_generation++;
        /* The replacement is born when it was due, not when someone first looked. */
        if (incarnate(w, sp, sp->sp_due) != 0) {
            fprintf(stderr, "gvw-sim: %s: out of memory; %s stays gone\n", __func__,
                    sp->sp_spec->po_name);
            sp->sp_state = POD_GONE;
        }
    }
}

struct sim_pod *
world_find_pod(struct world *w, const char *ns, const char *name)
{
    size_t i;

    for (i = 0; i < w->w_npods; i++) {
        struct sim_pod *sp = &w->w_pods[i];
        if (sp->sp_state == POD_ALIVE && !sp->sp_spec->po_host &&
            strcmp(sp->sp_spec->po_namespace, ns) == 0 && strcmp(sp->sp_name, name) == 0)
            return sp;
    }
    return NULL;
}

const struct sc_gpu *
world_proc_gpu(const struct world *w, const struct sim_pod *sp, size_t i)
{
    if (sp->sp_spec->po_node_idx < 0 || i >= sp->sp_nprocs)
        return NULL;
    return &w->w_sc->sc_nodes[sp->sp_spec->po_node_idx].nd_gpus[sp->sp_procs[i].pr_gpu];
}

double
world_proc_mib(const struct world *w, const struct sim_pod *sp, size_t i)
{
    const struct sc_gpu *g = world_proc_gpu(w, sp, i);
    double mib;

    if (sp->sp_state != POD_ALIVE || g == NULL)
        return 0;
    if (sp->sp_release_due >= 0 && w->w_clock >= sp->sp_release_due)
        mib = sp->sp_procs[i].pr_released_mib;
    else
        mib = sc_proc_mib(&sp->sp_procs[i], (w->w_clock - sp->sp_born) / w->w_scale);
    /* A running process also holds its CUDA context; one at 0 MiB has exited. */
    return mib > 0 ? mib + (double)g->gp_context_mib : 0;
}

double
world_pod_mib(const struct world *w, const struct sim_pod *sp)
{
    double sum = 0;
    size_t i;

    for (i = 0; i < sp->sp_nprocs; i++)
        sum += world_proc_mib(w, sp, i);
    return sum;
}

double
world_used_mib(const struct world *w)
{
    double sum = 0;
    size_t i;

    for (i = 0; i < w->w_npods; i++)
        if (!w->w_pods[i].sp_spec->po_host)
            sum += world_pod_mib(w, &w->w_pods[i]);
    return sum;
}

double
world_gpu_used_mib(const struct world *w, int node, int gpu)
{
    double sum = (double)w->w_sc->sc_nodes[node].nd_gpus[gpu].gp_reserved_mib;
    size_t i, j;

    for (i = 0; i < w->w_npods; i++)
        for (j = 0; j < w->w_pods[i].sp_nprocs; j++)
            if (w->w_pods[i].sp_spec->po_node_idx == node &&
                w->w_pods[i].sp_procs[j].pr_gpu == gpu)
                sum += world_proc_mib(w, &w->w_pods[i], j);
    return sum;
}

const char *
world_proc_cid(const struct sim_pod *sp, size_t i)
{
    const char *want = sp->sp_procs[i].pr_container;
    json_t *c;
    size_t k;

    json_array_foreach(sp->sp_spec->po_containers, k, c)
    {
        if (k < sp->sp_ncids && want != NULL &&
            strcmp(json_string_value(json_object_get(c, "name")), want) == 0)
            return sp->sp_cids[k];
    }
    return NULL;
}

void
world_release_pod(struct world *w, struct sim_pod *sp)
{
    sp->sp_release_asks++;
    if (sp->sp_release_due < 0)
        sp->sp_release_due = w->w_clock + sp->sp_spec->po_release_after * w->w_scale;
    sp->sp_rv = world_next_rv(w);
}

void
world_remove_pod(struct world *w, struct sim_pod *sp)
{
    const struct sc_pod *po = sp->sp_spec;

    world_next_rv(w);
    if (!po->po_respawns) {
        sp->sp_state = POD_GONE;
        return;
    }
    sp->sp_state = POD_RESPAWNING;
    sp->sp_due = w->w_clock + po->po_respawn_after * w->w_scale;
}

/* ownerReferences[0].apiVersion for a controller kind. */
static const char *
owner_api_version(const char *kind)
{
    if (strcmp(kind, "Job") == 0 || strcmp(kind, "CronJob") == 0)
        return "batch/v1";
    if (strcmp(kind, "Node") == 0)
        return "v1";
    return "apps/v1";
}

/* metadata of a pod; NULL on allocation failure. */
static json_t *
pod_metadata(const struct world *w, const struct sim_pod *sp)
{
    const struct sc_pod *po = sp->sp_spec;
    char created[40], rv[24], gen[260];
    json_t *md;

    world_fmt_time(sp->sp_created, 0, created, sizeof(created));
    snprintf(rv, sizeof(rv), "%llu", sp->sp_rv);
    md = json_pack("{s:s, s:s, s:s, s:s, s:s, s:O, s:O}", "name", sp->sp_name,
                   "namespace", po->po_namespace, "uid", sp->sp_uid, "resourceVersion",
                   rv, "creationTimestamp", created, "labels", po->po_labels,
                   "annotations", po->po_annotations);
    if (md == NULL)
        return NULL;
    if (po->po_owner_kind != NULL) {
        json_t *ref =
            json_pack("[{s:s, s:s, s:s, s:s, s:b, s:b}]", "apiVersion",
                      owner_api_version(po->po_owner_kind), "kind", po->po_owner_kind,
                      "name", po->po_owner_name, "uid", sp->sp_owner_uid, "controller", 1,
                      "blockOwnerDeletion", 1);
        if (strcmp(po->po_owner_kind, "StatefulSet") != 0) {
            snprintf(gen, sizeof(gen), "%s-", po->po_owner_name);
            if (json_object_set_new(md, "generateName", json_string(gen)) != 0)
                goto fail;
        }
        if (json_object_set_new(md, "ownerReferences", ref) != 0)
            goto fail;
    }
    if (po->po_terminating) {
        world_fmt_time(w->w_start_wall, 0, created, sizeof(created));
        if (json_object_set_new(md, "deletionTimestamp", json_string(created)) != 0 ||
            json_object_set_new(md, "deletionGracePeriodSeconds", json_integer(30)) != 0)
            goto fail;
    }
    return md;
fail:
    json_decref(md);
    return NULL;
}

/* status of a pod: phase, startTime, one containerStatus per container. */
static json_t *
pod_status(const struct world *w, const struct sim_pod *sp)
{
    const struct sc_pod *po = sp->sp_spec;
    int running = strcmp(po->po_phase, "Running") == 0;
    char started[40];
    json_t *st, *cs, *c;
    size_t i;

    world_fmt_time(sp->sp_created, 0, started, sizeof(started));
    cs = json_array();
    if (cs == NULL)
        return NULL;
    json_array_foreach(po->po_containers, i, c)
    {
        json_t *state =
            running ? json_pack("{s:{s:s}}", "running", "startedAt", started)
                    : json_pack("{s:{s:s}}", "waiting", "reason", "ContainerCreating");
        json_t *one = json_pack(
            "{s:O, s:o, s:b, s:i, s:O, s:b}", "name", json_object_get(c, "name"), "state",
            state, "ready", running, "restartCount", 0, "image",
            json_object_get(c, "image") ? json_object_get(c, "image") : json_null(),
            "started", running);
        char cid[80];
        /* Only a started container has an ID (a waiting one has none yet). */
        if (one != NULL && running && i < sp->sp_ncids) {
            snprintf(cid, sizeof(cid), "containerd://%s", sp->sp_cids[i]);
            if (json_object_set_new(one, "containerID", json_string(cid)) != 0) {
                json_decref(one);
                one = NULL;
            }
        }
        if (json_array_append_new(cs, one) != 0) {
            json_decref(cs);
            return NULL;
        }
    }
    st =
        json_pack("{s:s, s:[{s:s, s:s}], s:s, s:s, s:s, s:o, s:s}", "phase", po->po_phase,
                  "conditions", "type", "Ready", "status", running ? "True" : "False",
                  "hostIP", "10.0.0.21", "podIP", sp->sp_ip, "startTime", started,
                  "containerStatuses", cs, "qosClass", "Burstable");
    /* The claims made from templates, as the resourceclaim controller names them. */
    if (st != NULL && po->po_claim_statuses != NULL &&
        json_object_set(st, "resourceClaimStatuses", po->po_claim_statuses) != 0) {
        json_decref(st);
        return NULL;
    }
    return st;
}

json_t *
world_pod_json(const struct world *w, const struct sim_pod *sp, int with_kind)
{
    const struct sc_pod *po = sp->sp_spec;
    json_t *pod, *md, *st;

    md = pod_metadata(w, sp);
    st = pod_status(w, sp);
    if (md == NULL || st == NULL) {
        json_decref(md);
        json_decref(st);
        return NULL;
    }
    /* json_pack steals md and st even when it fails. */
    pod = json_pack("{s:o, s:{s:O, s:s, s:s, s:s, s:s}, s:o}", "metadata", md, "spec",
                    "containers", po->po_containers, "nodeName", po->po_node,
                    "restartPolicy", "Always", "schedulerName", "default-scheduler",
                    "serviceAccountName", "default", "status", st);
    if (pod != NULL && po->po_claims != NULL &&
        json_object_set(json_object_get(pod, "spec"), "resourceClaims", po->po_claims) !=
            0) {
        json_decref(pod);
        return NULL;
    }
    if (pod == NULL || !with_kind)
        return pod;
    if (json_object_set_new(pod, "apiVersion", json_string("v1")) != 0 ||
        json_object_set_new(pod, "kind", json_string("Pod")) != 0) {
        json_decref(pod);
        return NULL;
    }
    return pod;
}

void
world_record(struct world *w, json_t *ev)
{
    if (ev == NULL || json_array_append_new(w->w_events, ev) != 0)
        fprintf(stderr, "gvw-sim: %s: out of memory; event lost\n", __func__);
}

void
world_count(struct world *w, const char *key)
{
    json_int_t n = json_integer_value(json_object_get(w->w_counts, key));

    if (json_object_set_new(w->w_counts, key, json_integer(n + 1)) != 0)
        fprintf(stderr, "gvw-sim: %s: out of memory\n", __func__);
}

static const char *
state_name(enum sim_pod_state s)
{
    return s == POD_ALIVE ? "alive" : s == POD_RESPAWNING ? "respawning" : "gone";
}

/* One pod slot for /sim/state; NULL on allocation failure. */
static json_t *
slot_json(const struct world *w, const struct sim_pod *sp)
{
    json_t *o, *procs;
    size_t i;

    procs = json_array();
    if (procs == NULL)
        return NULL;
    for (i = 0; sp->sp_state == POD_ALIVE && i < sp->sp_nprocs; i++) {
        const char *comm = sp->sp_procs[i].pr_comm;
        if (json_array_append_new(
                procs, json_pack("{s:i, s:s?, s:f, s:i, s:s?, s:b}", "pid",
                                 (int)sp->sp_pids[i], "comm", comm, "mib",
                                 world_proc_mib(w, sp, i), "gpu", sp->sp_procs[i].pr_gpu,
                                 "container", sp->sp_procs[i].pr_container, "na",
                                 sp->sp_procs[i].pr_na)) != 0) {
            json_decref(procs);
            return NULL;
        }
    }
    o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:f, s:o}", "namespace",
                  sp->sp_spec->po_namespace, "name", sp->sp_name, "uid", sp->sp_uid,
                  "node", sp->sp_spec->po_node, "phase", sp->sp_spec->po_phase, "state",
                  state_name(sp->sp_state), "generation", (int)sp->sp_generation,
                  "used_mib", world_pod_mib(w, sp), "processes", procs);
    if (o != NULL && json_object_set_new(o, "pod_ip", json_string(sp->sp_ip)) != 0) {
        json_decref(o);
        return NULL;
    }
    if (o != NULL && sp->sp_release_url[0] != '\0' &&
        json_object_set_new(
            o, "release",
            json_pack("{s:s, s:i, s:b, s:o}", "url", sp->sp_release_url, "asks",
                      (int)sp->sp_release_asks, "pending",
                      sp->sp_release_due >= 0 && w->w_clock < sp->sp_release_due,
                      "freed_at_t",
                      sp->sp_release_due >= 0 && w->w_clock >= sp->sp_release_due
                          ? json_real(sp->sp_release_due)
                          : json_null())) != 0) {
        json_decref(o);
        return NULL;
    }
    if (o != NULL && sp->sp_state == POD_RESPAWNING &&
        json_object_set_new(o, "respawn_in", json_real(sp->sp_due - w->w_clock)) != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* MiB on GPU gpu of node held by pods' processes (host 0) or host processes (host 1). */
static double
held_mib(const struct world *w, int node, int gpu, int host)
{
    double sum = 0;
    size_t i, j;

    for (i = 0; i < w->w_npods; i++)
        for (j = 0; j < w->w_pods[i].sp_nprocs; j++)
            if (w->w_pods[i].sp_spec->po_node_idx == node &&
                w->w_pods[i].sp_spec->po_host == host &&
                w->w_pods[i].sp_procs[j].pr_gpu == gpu)
                sum += world_proc_mib(w, &w->w_pods[i], j);
    return sum;
}

/* One GPU for /sim/state: the device's figures and what makes them up. */
static json_t *
gpu_json(const struct world *w, int node, int gpu)
{
    const struct sc_gpu *g = &w->w_sc->sc_nodes[node].nd_gpus[gpu];
    double used = world_gpu_used_mib(w, node, gpu);

    return json_pack(
        "{s:i, s:s, s:s, s:I, s:f, s:f, s:I, s:I, s:f, s:f}", "index", gpu, "uuid",
        g->gp_uuid, "name", g->gp_name, "total_mib", (json_int_t)g->gp_total_mib,
        "used_mib", used, "free_mib", (double)g->gp_total_mib - used, "reserved_mib",
        (json_int_t)g->gp_reserved_mib, "context_mib", (json_int_t)g->gp_context_mib,
        "pods_mib", held_mib(w, node, gpu, 0), "host_mib", held_mib(w, node, gpu, 1));
}

/* Every simulated node for /sim/state: name, capacity, GPUs. */
static json_t *
nodes_json(const struct world *w)
{
    json_t *nodes = json_array(), *gpus, *o;
    size_t n, g;

    for (n = 0; nodes != NULL && n < w->w_nnodes; n++) {
        const struct sc_node *nd = &w->w_sc->sc_nodes[n];
        gpus = json_array();
        for (g = 0; gpus != NULL && g < nd->nd_ngpus; g++)
            if (json_array_append_new(gpus, gpu_json(w, (int)n, (int)g)) != 0) {
                json_decref(gpus);
                gpus = NULL;
            }
        o = gpus == NULL
                ? NULL
                : json_pack("{s:s, s:O, s:o}", "name", nd->nd_name, "capacity",
                            json_object_get(json_object_get(w->w_nodes[n], "status"),
                                            "capacity"),
                            "gpus", gpus);
        if (json_array_append_new(nodes, o) != 0) {
            json_decref(nodes);
            nodes = NULL;
        }
    }
    return nodes;
}

json_t *
world_state_json(struct world *w)
{
    double used, now;
    json_t *st, *pods, *gpus, *hosts, *nodes;
    size_t i;

    world_advance(w);
    now = w->w_clock;
    pods = json_array();
    hosts = json_array();
    gpus = json_array();
    nodes = nodes_json(w);
    if (pods == NULL || gpus == NULL || hosts == NULL || nodes == NULL)
        goto oom;
    for (i = 0; i < w->w_sc->sc_ngpus; i++)
        if (json_array_append_new(gpus, gpu_json(w, 0, (int)i)) != 0)
            goto oom;
    for (i = 0; i < w->w_npods; i++)
        if (json_array_append_new(w->w_pods[i].sp_spec->po_host ? hosts : pods,
                                  slot_json(w, &w->w_pods[i])) != 0)
            goto oom;
    /* used_mib/free_mib: the pods' processes on the first node's GPU 0 against its
     * total (what total - sum(used) computes); "gpus" and "nodes" have each GPU's own
     * device figures, the driver's reserve and host processes included. */
    used = held_mib(w, 0, 0, 0);
    st = json_pack("{s:s, s:f, s:f, s:f, s:I, s:f, s:f, s:o, s:o, s:o, s:o, s:O?, s:O}",
                   "node", w->w_sc->sc_node, "t", now, "scenario_t", now / w->w_scale,
                   "time_scale", w->w_scale, "gpu_total_mib",
                   (json_int_t)w->w_sc->sc_total_mib, "used_mib", used, "free_mib",
                   (double)w->w_sc->sc_total_mib - used, "gpus", gpus, "nodes", nodes,
                   "pods", pods, "host_processes", hosts, "node_capacity",
                   json_object_get(json_object_get(w->w_nodes[0], "status"), "capacity"),
                   "requests", w->w_counts);
    return st;
oom:
    json_decref(pods);
    json_decref(hosts);
    json_decref(gpus);
    json_decref(nodes);
    return NULL;
}
