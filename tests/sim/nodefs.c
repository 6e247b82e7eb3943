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

struct nodefs {
    struct world *nf_world;     /* borrowed */
    const char *nf_nvml_state;  /* borrowed; NULL = not written */
    const char *nf_proc_root;   /* borrowed; NULL = not written */
    char *nf_last_nvml;         /* owned: the text last written, NULL before the first */
    long *nf_pids;              /* owned: PIDs whose PROC_ROOT/<pid>/cgroup exists */
    size_t nf_npids;
};

struct nodefs *
nodefs_new(struct world *w, const char *nvml_state, const char *proc_root)
{
    struct nodefs *nf = calloc(1, sizeof(*nf));

    if (nf == NULL)
        return NULL;
    nf->nf_world = w;
    nf->nf_nvml_state = nvml_state;
    nf->nf_proc_root = proc_root;
    return nf;
}

void
nodefs_free(struct nodefs *nf)
{
    if (nf == NULL)
        return;
    free(nf->nf_last_nvml);
    free(nf->nf_pids);
    free(nf);
}

/* Whole bytes, as the driver counts them. */
static long long
bytes(double mib)
{
    return (long long)llround(mib * MIB);
}

/* 1 when process i of sp runs on the node now (a process at 0 MiB has exited). */
static int
proc_running(const struct world *w, const struct sim_pod *sp, size_t i)
{
    return sp->sp_state == POD_ALIVE &&
           strcmp(sp->sp_spec->po_node, w->w_sc->sc_node) == 0 &&
           bytes(world_proc_mib(w, sp, i)) > 0;
}

char *
nodefs_render_nvml(const struct world *w)
{
    const struct scenario *sc = w->w_sc;
    struct evbuffer *out = evbuffer_new();
    char *text = NULL;
    size_t g, i, j, len;
    int bad = out == NULL;

    /* No clock in the text: an unchanged world must render the same bytes. */
    if (!bad)
        bad = evbuffer_add_printf(out, "# gvw-sim: node %s\ninit ok\n", sc->sc_node) < 0;
    for (g = 0; g < sc->sc_ngpus && !bad; g++) {
        const struct sc_gpu *gp = &sc->sc_gpus[g];
        long long total = bytes((double)gp->gp_total_mib);
        long long used = bytes((double)gp->gp_reserved_mib);
        for (i = 0; i < w->w_npods; i++)
            for (j = 0; j < w->w_pods[i].sp_nprocs; j++)
                if (w->w_pods[i].sp_procs[j].pr_gpu == (int)g &&
                    proc_running(w, &w->w_pods[i], j))
                    used += bytes(world_proc_mib(w, &w->w_pods[i], j));
        bad = evbuffer_add_printf(out, "gpu %zu %s %lld %lld %s\n", g, gp->gp_uuid, total,
                                  total - used > 0 ? total - used : 0, gp->gp_name) < 0;
    }
    for (g = 0; g < sc->sc_ngpus && !bad; g++)
        for (i = 0; i < w->w_npods && !bad; i++) {
            const struct sim_pod *sp = &w->w_pods[i];
            for (j = 0; j < sp->sp_nprocs && !bad; j++) {
                if (sp->sp_procs[j].pr_gpu != (int)g || !proc_running(w, sp, j))
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

    if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof(tmp)) {
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

/* The processes running now, with their cgroup lines. *out is owned by the caller. */
static int
collect_procs(const struct world *w, struct nf_proc **out, size_t *n)
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
            if (!proc_running(w, sp, j))
                continue;
            cid = world_proc_cid(sp, j);
            /* The systemd driver writes the pod UID with '_' for '-' (a dash is the
             * slice hierarchy separator). */
            snprintf(uid, sizeof(uid), "%s", sp->sp_uid);
            for (k = 0; uid[k] != '\0'; k++)
                if (uid[k] == '-')
                    uid[k] = '_';
            v[*n].np_pid = sp->sp_pids[j];
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
add_procs(struct nodefs *nf, const struct nf_proc *v, size_t n, char *err, size_t errlen)
{
    char dir[4096], file[4200];
    size_t i;

    for (i = 0; i < n; i++) {
        if (has_pid(nf->nf_pids, nf->nf_npids, v[i].np_pid))
            continue;
        snprintf(dir, sizeof(dir), "%s/%ld", nf->nf_proc_root, v[i].np_pid);
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
drop_procs(struct nodefs *nf, const struct nf_proc *v, size_t n)
{
    char dir[4096], file[4200];
    size_t i;

    for (i = 0; i < nf->nf_npids; i++) {
        if (has_proc(v, n, nf->nf_pids[i]))
            continue;
        snprintf(dir, sizeof(dir), "%s/%ld", nf->nf_proc_root, nf->nf_pids[i]);
        snprintf(file, sizeof(file), "%s/cgroup", dir);
        if ((unlink(file) != 0 && errno != ENOENT) || (rmdir(dir) != 0 && errno != ENOENT))
            fprintf(stderr, "gvw-sim: %s: cannot remove %s: %s\n", __func__, dir,
                    strerror(errno));
    }
}

int
nodefs_sync(struct nodefs *nf, char *err, size_t errlen)
{
    struct nf_proc *v = NULL;
    char *text = NULL;
    long *pids = NULL;
    size_t n = 0, i;
    int rc = -1;

    world_advance(nf->nf_world);
    if (nf->nf_proc_root != NULL) {
        if (collect_procs(nf->nf_world, &v, &n) != 0)
            goto oom;
        if (add_procs(nf, v, n, err, errlen) != 0)
            goto done;
    }
    if (nf->nf_nvml_state != NULL) {
        text = nodefs_render_nvml(nf->nf_world);
        if (text == NULL)
            goto oom;
        if (nf->nf_last_nvml == NULL || strcmp(text, nf->nf_last_nvml) != 0) {
            if (write_atomic(nf->nf_nvml_state, text, err, errlen) != 0)
                goto done;
            free(nf->nf_last_nvml);
            nf->nf_last_nvml = text;
            text = NULL;
        }
    }
    if (nf->nf_proc_root != NULL) {
        if (n > 0 && (pids = calloc(n, sizeof(*pids))) == NULL)
            goto oom;
        drop_procs(nf, v, n);
        for (i = 0; i < n; i++)
            pids[i] = v[i].np_pid;
        free(nf->nf_pids);
        nf->nf_pids = pids;
        nf->nf_npids = n;
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
