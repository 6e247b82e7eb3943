/* nvml.c -- NVIDIA's management library, loaded with dlopen: devices, memory, processes
 *
 * Only the calls the exporter needs are declared here, from NVIDIA's public
 * API, so the binary builds and runs on machines with no NVIDIA software. */
#include "nvml.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

/* From NVIDIA's nvml.h (public API). */
typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
#define NVML_SUCCESS 0
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_VALUE_NOT_AVAILABLE (~0ULL)

typedef struct {
    unsigned long long total, free, used;
} nvmlMemory_t;

/* The unversioned process lists fill v1 records; _v2 and _v3 fill the longer
 * record (the same layout in both). */
typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;

typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlProcessInfo_v2_t;

typedef nvmlReturn_t (*procs_fn)(nvmlDevice_t, unsigned int *, void *);

#define MAX_PROCS 4096 /* per list; a GPU never runs this many */
#define RETRIES 4      /* the list may grow between the size answer and the read */

struct nvml {
    void *n_lib; /* dlopen handle */
    nvmlReturn_t (*n_init)(void);
    nvmlReturn_t (*n_shutdown)(void);
    const char *(*n_error_string)(nvmlReturn_t);
    nvmlReturn_t (*n_count)(unsigned int *);
    nvmlReturn_t (*n_handle)(unsigned int, nvmlDevice_t *);
    nvmlReturn_t (*n_uuid)(nvmlDevice_t, char *, unsigned int);
    nvmlReturn_t (*n_name)(nvmlDevice_t, char *, unsigned int);
    nvmlReturn_t (*n_memory)(nvmlDevice_t, nvmlMemory_t *);
    procs_fn n_compute;
    procs_fn n_graphics;
    size_t n_rec_size; /* sizeof the record the chosen lists fill */
    int n_inited;
};

static const char *
why(const struct nvml *n, nvmlReturn_t rc)
{
    const char *s = n->n_error_string ? n->n_error_string(rc) : NULL;
    return s ? s : "unknown error";
}

/* The first symbol of names[] the library has, and its index in *which. */
static void *
first_sym(void *lib, const char *const *names, size_t count, size_t *which)
{
    for (size_t i = 0; i < count; i++) {
        void *f = dlsym(lib, names[i]);
        if (f != NULL) {
            *which = i;
            return f;
        }
    }
    return NULL;
}

struct nvml *
nvml_open(const char *path, char *err, size_t errlen)
{
    static const char *const compute[] = {"nvmlDeviceGetComputeRunningProcesses_v3",
                                          "nvmlDeviceGetComputeRunningProcesses_v2",
                                          "nvmlDeviceGetComputeRunningProcesses"};
    static const char *const graphics[] = {"nvmlDeviceGetGraphicsRunningProcesses_v3",
                                           "nvmlDeviceGetGraphicsRunningProcesses_v2",
                                           "nvmlDeviceGetGraphicsRunningProcesses"};
    struct nvml *n;
    const char *missing = NULL;
    size_t wc = 0, wg = 0;
    nvmlReturn_t rc;

    if ((n = calloc(1, sizeof(*n))) == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if ((n->n_lib = dlopen(path, RTLD_NOW | RTLD_LOCAL)) == NULL) {
        const char *e = dlerror();
        snprintf(err, errlen, "%s", e ? e : "dlopen failed");
        goto fail;
    }
    /* POSIX dlsym returns void *; a function pointer converts from it. */
#define SYM(field, name)                                                                 \
    do {                                                                                 \
        *(void **)(&n->field) = dlsym(n->n_lib, name);                                   \
        if (n->field == NULL && missing == NULL)                                         \
            missing = name;                                                              \
    } while (0)
    SYM(n_init, "nvmlInit_v2");
    SYM(n_shutdown, "nvmlShutdown");
    SYM(n_error_string, "nvmlErrorString");
    SYM(n_count, "nvmlDeviceGetCount_v2");
    SYM(n_handle, "nvmlDeviceGetHandleByIndex_v2");
    SYM(n_uuid, "nvmlDeviceGetUUID");
    SYM(n_name, "nvmlDeviceGetName");
    SYM(n_memory, "nvmlDeviceGetMemoryInfo");
#undef SYM
    *(void **)(&n->n_compute) = first_sym(n->n_lib, compute, 3, &wc);
    *(void **)(&n->n_graphics) = first_sym(n->n_lib, graphics, 3, &wg);
    if (missing == NULL && n->n_compute == NULL)
        missing = compute[2];
    if (missing == NULL && n->n_graphics == NULL)
        missing = graphics[2];
    if (missing != NULL) {
        snprintf(err, errlen, "%s: no symbol %s (not NVML, or too old)", path, missing);
        goto fail;
    }
    if ((wc == 2) != (wg == 2)) { /* one record size for both lists */
        snprintf(err, errlen, "%s: the process lists disagree on their version", path);
        goto fail;
    }
    n->n_rec_size = wc == 2 ? sizeof(nvmlProcessInfo_v1_t) : sizeof(nvmlProcessInfo_v2_t);
    if ((rc = n->n_init()) != NVML_SUCCESS) {
        snprintf(err, errlen, "nvmlInit_v2: %s", why(n, rc));
        goto fail;
    }
    n->n_inited = 1;
    return n;
fail:
    nvml_close(n);
    return NULL;
}

void
nvml_close(struct nvml *n)
{
    if (n == NULL)
        return;
    if (n->n_inited)
        n->n_shutdown();
    if (n->n_lib != NULL)
        dlclose(n->n_lib);
    free(n);
}

void
nvml_snapshot_free(struct nvml_snapshot *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->ns_count; i++)
        free(s->ns_devices[i].nd_procs);
    free(s->ns_devices);
    s->ns_devices = NULL;
    s->ns_count = 0;
}

/* Appends one process list of dev to d->nd_procs. NVML's count is trusted
 * only as far as the buffer given: asked for the size (no buffer), it should
 * answer NVML_ERROR_INSUFFICIENT_SIZE with the count, and then a bigger
 * buffer is tried; a SUCCESS there names records it never wrote, so it is
 * asked again with a buffer too. A SUCCESS with a buffer counts at most the
 * records that buffer holds, and a record left as zeroed (PID 0) is none.
 * Any other code fails the read. */
static int
read_procs(struct nvml *n, procs_fn fn, const char *what, nvmlDevice_t dev,
           struct nvml_device *d, char *err, size_t errlen)
{
    unsigned int count = 0, cap = 0;
    unsigned char *recs = NULL;
    struct nvml_proc *grown;
    nvmlReturn_t rc;

    rc = fn(dev, &count, NULL); /* count = 0: asks for the size */
    for (int attempt = 0; attempt < RETRIES; attempt++) {
        unsigned char *bigger;
        if (rc == NVML_SUCCESS && (cap > 0 || count == 0))
            break;
        if (rc != NVML_SUCCESS && rc != NVML_ERROR_INSUFFICIENT_SIZE)
            break;
        if (count > MAX_PROCS) {
            snprintf(err, errlen, "%s: GPU %u lists %u processes", what, d->nd_index,
                     count);
            goto fail;
        }
        cap = count + 8; /* room for processes that start meanwhile */
        if ((bigger = realloc(recs, (size_t)cap * n->n_rec_size)) == NULL) {
            snprintf(err, errlen, "out of memory");
            goto fail;
        }
        recs = bigger;
        /* Zeroed: a record NVML claims but never wrote reads as PID 0. */
        memset(recs, 0, (size_t)cap * n->n_rec_size);
        count = cap;
        rc = fn(dev, &count, recs);
    }
    if (rc != NVML_SUCCESS) {
        snprintf(err, errlen, "%s: GPU %u: %s", what, d->nd_index, why(n, rc));
        goto fail;
    }
    if (count > cap) /* never past the buffer (cap 0: the size query's SUCCESS) */
        count = cap;
    if (count > 0) {
        if ((grown = realloc(d->nd_procs, (d->nd_nprocs + count) * sizeof(*grown))) ==
            NULL) {
            snprintf(err, errlen, "out of memory");
            goto fail;
        }
        d->nd_procs = grown;
        for (unsigned int i = 0; i < count; i++) {
            unsigned int pid;
            unsigned long long used;
            if (n->n_rec_size == sizeof(nvmlProcessInfo_v1_t)) {
                const nvmlProcessInfo_v1_t *r = (const void *)(recs + i * n->n_rec_size);
                pid = r->pid, used = r->usedGpuMemory;
            } else {
                const nvmlProcessInfo_v2_t *r = (const void *)(recs + i * n->n_rec_size);
                pid = r->pid, used = r->usedGpuMemory;
            }
            if (pid == 0) /* no process has PID 0: a record never written */
                continue;
            grown[d->nd_nprocs].np_pid = pid;
            grown[d->nd_nprocs].np_known = used != NVML_VALUE_NOT_AVAILABLE;
            grown[d->nd_nprocs].np_used = used == NVML_VALUE_NOT_AVAILABLE ? 0 : used;
            d->nd_nprocs++;
        }
    }
    free(recs);
    return 0;
fail:
    free(recs);
    return -1;
}

static int
read_device(struct nvml *n, unsigned int i, struct nvml_device *d, char *err,
            size_t errlen)
{
    char uuid[NVML_TEXT_MAX], model[NVML_TEXT_MAX];
    nvmlDevice_t dev;
    nvmlMemory_t mem;
    nvmlReturn_t rc;

    d->nd_index = i;
    if ((rc = n->n_handle(i, &dev)) != NVML_SUCCESS) {
        snprintf(err, errlen, "nvmlDeviceGetHandleByIndex_v2: GPU %u: %s", i, why(n, rc));
        return -1;
    }
    memset(uuid, 0, sizeof(uuid));
    memset(model, 0, sizeof(model));
    if ((rc = n->n_uuid(dev, uuid, sizeof(uuid))) != NVML_SUCCESS ||
        (rc = n->n_name(dev, model, sizeof(model))) != NVML_SUCCESS ||
        (rc = n->n_memory(dev, &mem)) != NVML_SUCCESS) {
        snprintf(err, errlen, "GPU %u: %s", i, why(n, rc));
        return -1;
    }
    /* NVML promises neither a terminator nor an encoding: the exposition and
     * --once's JSON must be UTF-8, so a bad byte becomes U+FFFD here, once. */
    uuid[sizeof(uuid) - 1] = '\0';
    model[sizeof(model) - 1] = '\0';
    utf8_clean(uuid, d->nd_uuid, sizeof(d->nd_uuid));
    utf8_clean(model, d->nd_model, sizeof(d->nd_model));
    d->nd_total = mem.total;
    d->nd_free = mem.free;
    if (read_procs(n, n->n_compute, "compute processes", dev, d, err, errlen) == -1 ||
        read_procs(n, n->n_graphics, "graphics processes", dev, d, err, errlen) == -1)
        return -1;
    return 0;
}

int
nvml_read(struct nvml *n, struct nvml_snapshot *out, char *err, size_t errlen)
{
    unsigned int count = 0;
    nvmlReturn_t rc;

    memset(out, 0, sizeof(*out));
    if ((rc = n->n_count(&count)) != NVML_SUCCESS) {
        snprintf(err, errlen, "nvmlDeviceGetCount_v2: %s", why(n, rc));
        return -1;
    }
    if (count > 64) {
        snprintf(err, errlen, "nvmlDeviceGetCount_v2: %u GPUs is not believable", count);
        return -1;
    }
    if (count > 0 &&
        (out->ns_devices = calloc(count, sizeof(*out->ns_devices))) == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    out->ns_count = count;
    for (unsigned int i = 0; i < count; i++)
        if (read_device(n, i, &out->ns_devices[i], err, errlen) == -1) {
            nvml_snapshot_free(out);
            return -1;
        }
    return 0;
}
