/* nodefs.c -- writes the world as the stub NVML state file and a fake /proc tree */
#include "nodefs.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/buffer.h>

#define MIB 1048576.0

/* One process the node runs on a GPU, as /proc would show it. */
struct nf_proc {
    long np_pid;
    char np_cgroup[256]; /* the cgroup file's one line, newline included */
};

/* One node's pair of files. */
struct nf_target {
    int nt_node;         /* index into the scenario's nodes */
    char *nt_nvml_state; /* owned; NULL = not written */
    char *nt_proc_root;  /* owned; NULL = not written */
    char *nt_last_nvml;  /* owned: the text last written, NULL before the first */
    long *nt_pids;       /* owned: PIDs whose PROC_ROOT/<pid>/cgroup exists */
    size_t nt_npids;
};

struct nodefs {
    struct world *nf_world;    /* borrowed */
    struct nf_target *nf_tgts; /* owned */
    size_t nf_ntgts;
};

static char *
dup_or_null(const char *s)
{
    return s == NULL ? NULL : strdup(s);
}

static int
add_target(struct nodefs *nf, int node, const char *nvml_state, const char *proc_root)
{
    struct nf_target *t = &nf->nf_tgts[nf->nf_ntgts];

    t->nt_node = node;
    t->nt_nvml_state = dup_or_null(nvml_state);
    t->nt_proc_root = dup_or_null(proc_root);
    nf->nf_ntgts++;
    return (nvml_state != NULL && t->nt_nvml_state == NULL) ||
                   (proc_root != NULL && t->nt_proc_root == NULL)
               ? -1
               : 0;
}

struct nodefs *
nodefs_new(struct world *w, const char *nvml_state, const char *proc_root,
           const char *node_dir, char *err, size_t errlen)
{
    struct nodefs *nf = calloc(1, sizeof(*nf));
    const struct scenario *sc = w->w_sc;
    char dir[4096], state[4200], proc[4200];
    size_t i;

    if (nf == NULL ||
        (nf->nf_tgts = calloc(sc->sc_nnodes + 1, sizeof(*nf->nf_tgts))) == NULL)
        goto oom;
    nf->nf_world = w;
    if ((nvml_state != NULL || proc_root != NULL) &&
        add_target(nf, 0, nvml_state, proc_root) != 0)
        goto oom;
    for (i = 0; node_dir != NULL && i < sc->sc_nnodes; i++) {
        /* DIR/<node>/nvml.state and DIR/<node>/proc/: one exporter per node reads them.
         */
        if (snprintf(dir, sizeof(dir), "%s/%s", node_dir, sc->sc_nodes[i].nd_name) >=
            (int)sizeof(dir)) {
            snprintf(err, errlen, "%s: path too long", node_dir);
            nodefs_free(nf);
            return NULL;
        }
        snprintf(state, sizeof(state), "%s/nvml.state", dir);
        snprintf(proc, sizeof(proc), "%s/proc", dir);
        if ((mkdir(dir, 0755) != 0 && errno != EEXIST) ||
            (mkdir(proc, 0755) != 0 && errno != EEXIST)) {
            snprintf(err, errlen, "%s: %s", dir, strerror(errno));
            nodefs_free(nf);
            return NULL;
        }
        if (add_target(nf, (int)i, state, proc) != 0)
            goto oom;
    }
    return nf;
oom:
    snprintf(err, errlen, "out of memory");
    nodefs_free(nf);
    return NULL;
}

void
nodefs_free(struct nodefs *nf)
{
    size_t i;

    if (nf == NULL)
        return;
    for (i = 0; i < nf->nf_ntgts; i++) {
        free(nf->nf_tgts[i].nt_nvml_state);
        free(nf->nf_tgts[i].nt_proc_root);
        free(nf->nf_tgts[i].nt_last_nvml);
        free(nf->nf_tgts[i].nt_pids);
    }
    free(nf->nf_tgts);
    free(nf);
}

/* Whole bytes, as the driver counts them. */
static long long
bytes(double mib)
{
    return (long long)llround(mib * MIB);
}

/* 1 when process i of sp runs on node now (a process at 0 MiB has exited). */
static int
proc_running(const struct world *w, const struct sim_pod *sp, size_t i, int node)
{
    return sp->sp_state == POD_ALIVE && sp->sp_spec->po_node_idx == node &&
           bytes(world_proc_mib(w, sp, i)) > 0;
}

char *
nodefs_render_nvml(const struct world *w)
{
    return nodefs_render_nvml_node(w, 0);
}

char *
nodefs_render_nvml_node(const struct world *w, int node)
{
    const struct sc_node *nd = &w->w_sc->sc_nodes[node];
    struct evbuffer *out = evbuffer_new();
    char *text = NULL;
    size_t g, i, j, len;
    int bad = out == NULL;

    /* No clock in the text: an unchanged world must render the same bytes. */
    if (!bad)
        bad = evbuffer_add_printf(out, "# gvw-sim: node %s\ninit ok\n", nd->nd_name) < 0;
    for (g = 0; g < nd->nd_ngpus && !bad; g++) {
        const struct sc_gpu *gp = &nd->nd_gpus[g];
        long long total = bytes((double)gp->gp_total_mib);
        long long used = bytes((double)gp->gp_reserved_mib);
        for (i = 0; i < w->w_npods; i++)
            for (j = 0; j < w->w_pods[i].sp_nprocs; j++)
                if (w->w_pods[i].sp_procs[j].pr_gpu == (int)g &&
                    proc_running(w, &w->w_pods[i], j, node))
                    used += bytes(world_proc_mib(w, &w->w_pods[i], j));
        bad = evbuffer_add_printf(out, "gpu %zu %s %lld %lld %s\n", g, gp->gp_uuid, total,
                                  total - used > 0 ? total - used : 0, gp->gp_name) < 0;
    }
    for (g = 0; g < nd->nd_ngpus && !bad; g++)
        for (i = 0; i < w->w_npods && !bad; i++) {
            const struct sim_pod *sp = &w->w_pods[i];
            for (j = 0; j < sp->sp_nprocs && !bad; j++) {
                if (sp->sp_procs[j].pr_gpu != (int)g || !proc_running(w, sp, j, node))
                    continue;
                if (sp->sp_procs[j].pr_na)
                    bad = evbuffer_add_printf(out, "proc %zu %ld na compute\n", g,
                                              sp->sp_pids[j]) < 0;
                else
                    bad = evbuffer_add_printf(out, "proc %zu %ld %lld compute\n", g,
                                              sp->sp_pids[j],
                                              bytes(world_proc_mib(w, sp, j))) < 0;
            }
        }
    if (!bad) {
        len = evbuffer_get_length(out);
        text = malloc(len + 1);
        if (text != NULL && evbuffer_remove(out, text, len) == (int)len)
            text[len] = '\0';
        else {
            free(text);
            text = NULL;
        }
    }
    if (out != NULL)
        evbuffer_free(out);
    return text;
}

/* Writes text to path through a temporary file renamed over it. */
static int
write_atomic(const char *path, const char *text, char *err, size_t errlen)
{
    char tmp[4200];
    size_t len = strlen(text);
    FILE *f;
    int ok;

    if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >=
        (int)sizeof(tmp)) {
        snprintf(err, errlen, "%s: path too long", path);
        return -1;
    }
    f = fopen(tmp, "w");
    if (f == NULL) {
        snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
        return -1;
    }
    ok = fwrite(text, 1, len, f) == len;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* The processes running on node now, with their cgroup lines. *out is owned by the
 * caller. */
static int
collect_procs(const struct world *w, int node, struct nf_proc **out, size_t *n)
{
    size_t i, j, cap = 0;
    struct nf_proc *v;

    *out = NULL;
    *n = 0;
    for (i = 0; i < w->w_npods; i++)
        cap += w->w_pods[i].sp_nprocs;
    if (cap == 0)
        return 0;
    v = calloc(cap, sizeof(*v));
    if (v == NULL)
        return -1;
    for (i = 0; i < w->w_npods; i++) {
        const struct sim_pod *sp = &w->w_pods[i];
        char uid[37];
        const char *cid;
        size_t k;

        for (j = 0; j < sp->sp_nprocs; j++) {
            if (!proc_running(w, sp, j, node))
                continue;
            v[*n].np_pid = sp->sp_pids[j];
            if (sp->sp_spec->po_host) {
                snprintf(v[*n].np_cgroup, sizeof(v[*n].np_cgroup), "%s\n",
                         sp->sp_spec->po_host_cgroup);
                (*n)++;
                continue;
            }
            cid = world_proc_cid(sp, j);
            /* The systemd driver writes the pod UID with '_' for '-' (a dash is the
             * slice hierarchy separator). */
            snprintf(uid, sizeof(uid), "%s", sp->sp_uid);
            for (k = 0; uid[k] != '\0'; k++)
                if (uid[k] == '-')
                    uid[k] = '_';
            snprintf(v[*n].np_cgroup, sizeof(v[*n].np_cgroup),
                     "0::/kubepods.slice/kubepods-burstable.slice/"
                     "kubepods-burstable-pod%s.slice/cri-containerd-%s.scope\n",
                     uid, cid != NULL ? cid : "");
            (*n)++;
        }
    }
    *out = v;
    return 0;
}

static int
has_pid(const long *pids, size_t n, long pid)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (pids[i] == pid)
            return 1;
    return 0;
}

static int
has_proc(const struct nf_proc *v, size_t n, long pid)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (v[i].np_pid == pid)
            return 1;
    return 0;
}

/* PROC_ROOT/<pid>/cgroup for every new process. */
static int
add_procs(struct nf_target *t, const struct nf_proc *v, size_t n, char *err,
          size_t errlen)
{
    char dir[4096], file[4200];
    size_t i;

    for (i = 0; i < n; i++) {
        if (has_pid(t->nt_pids, t->nt_npids, v[i].np_pid))
            continue;
        snprintf(dir, sizeof(dir), "%s/%ld", t->nt_proc_root, v[i].np_pid);
        snprintf(file, sizeof(file), "%s/cgroup", dir);
        if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
            snprintf(err, errlen, "%s: %s", dir, strerror(errno));
            return -1;
        }
        if (write_atomic(file, v[i].np_cgroup, err, errlen) != 0)
            return -1;
    }
    return 0;
}

/* Removes the entries of processes that ended: the kernel's /proc forgets them too. */
static void
drop_procs(struct nf_target *t, const struct nf_proc *v, size_t n)
{
    char dir[4096], file[4200];
    size_t i;

    for (i = 0; i < t->nt_npids; i++) {
        if (has_proc(v, n, t->nt_pids[i]))
            continue;
        snprintf(dir, sizeof(dir), "%s/%ld", t->nt_proc_root, t->nt_pids[i]);
        snprintf(file, sizeof(file), "%s/cgroup", dir);
        if ((unlink(file) != 0 && errno != ENOENT) ||
            (rmdir(dir) != 0 && errno != ENOENT))
            fprintf(stderr, "gvw-sim: %s: cannot remove %s: %s\n", __func__, dir,
                    strerror(errno));
    }
}

/* Rewrites one node's files (the world already advanced). */
static int
sync_target(struct nodefs *nf, struct nf_target *t, char *err, size_t errlen)
{
    struct nf_proc *v = NULL;
    char *text = NULL;
    long *pids = NULL;
    size_t n = 0, i;
    int rc = -1;

    if (t->nt_proc_root != NULL) {
        if (collect_procs(nf->nf_world, t->nt_node, &v, &n) != 0)
            goto oom;
        if (add_procs(t, v, n, err, errlen) != 0)
            goto done;
    }
    if (t->nt_nvml_state != NULL) {
        text = nodefs_render_nvml_node(nf->nf_world, t->nt_node);
        if (text == NULL)
            goto oom;
        if (t->nt_last_nvml == NULL || strcmp(text, t->nt_last_nvml) != 0) {
            if (write_atomic(t->nt_nvml_state, text, err, errlen) != 0)
                goto done;
            free(t->nt_last_nvml);
            t->nt_last_nvml = text;
            text = NULL;
        }
    }
    if (t->nt_proc_root != NULL) {
        if (n > 0 && (pids = calloc(n, sizeof(*pids))) == NULL)
            goto oom;
        drop_procs(t, v, n);
        for (i = 0; i < n; i++)
            pids[i] = v[i].np_pid;
        free(t->nt_pids);
        t->nt_pids = pids;
        t->nt_npids = n;
    }
    rc = 0;
    goto done;
oom:
    snprintf(err, errlen, "nodefs_sync: out of memory");
done:
    free(text);
    free(v);
    return rc;
}

int
nodefs_sync(struct nodefs *nf, char *err, size_t errlen)
{
    size_t i;

    world_advance(nf->nf_world);
    for (i = 0; i < nf->nf_ntgts; i++)
        if (sync_target(nf, &nf->nf_tgts[i], err, errlen) != 0)
            return -1;
    return 0;
}
