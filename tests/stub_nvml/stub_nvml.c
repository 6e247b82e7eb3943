/* stub_nvml.c -- a stand-in libnvidia-ml.so.1 whose GPUs come from a text file
 *
 * The state file is named by GVW_STUB_NVML_STATE and re-read whenever its
 * mtime or size changes (checked at nvmlInit* and nvmlDeviceGetCount*); a
 * writer replaces it atomically (write a temp file, rename over it). Format
 * (one record a line, single spaces, '#' comments, blank lines ignored):
 *     init ok|fail
 *     gpu INDEX UUID TOTAL_BYTES FREE_BYTES NAME...
 *     proc INDEX PID USED_BYTES|na compute|graphics|both
 *     lost INDEX
 *     slow INDEX MILLISECONDS   (nvmlDeviceGetMemoryInfo of that GPU sleeps
 *                                that long first: a driver call that hangs)
 *     card INDEX UUID MODEL     a real card, its free memory following from its
 *                                processes: MODEL T4, A10, L4, A100-40GB,
 *                                A100-80GB or H100 gives NVML's name and total
 *                                (15360 to 81559 MiB) and what the driver
 *                                reserves (300 to 480 MiB); each process is
 *                                reported with its CUDA context added (500 MiB
 *                                unless "context" says otherwise), and free =
 *                                total - reserve - the processes' figures, so
 *                                used is more than the processes hold
 *     reserve INDEX MIB         that card's driver reserve instead
 *     context INDEX MIB         that card's context per process instead
 * On a card, "proc ... USED" is what the process allocated itself.
 * A missing or unreadable file makes nvmlInit fail with
 * NVML_ERROR_DRIVER_NOT_LOADED; so does "init fail", and once it appears in
 * a running process nvmlDeviceGetCount* answers the same (the driver went
 * away), so the caller has to init again. A malformed line is reported on stderr and
 * ignored. Signatures and codes are NVIDIA's public ones.
 *
 * GVW_STUB_NVML_EVIL (read at every call; a comma list, or "all") makes the
 * library misbehave the ways a buggy or hostile driver could, to prove the
 * caller trusts nothing it should not:
 *     overcount     a process list filled into a buffer answers SUCCESS with a
 *                   count 1000 past the buffer's size
 *     size-success  the size query (no buffer) answers SUCCESS with the count,
 *                   writing nothing, instead of NVML_ERROR_INSUFFICIENT_SIZE
 *     huge          every process reports 2^63 bytes (the file's figure ignored;
 *                   "na" stays na)
 *     badname       names and UUIDs carry invalid UTF-8 (a lone continuation,
 *                   0xFF, an overlong '/', a surrogate, a cut sequence) and the
 *                   characters the exposition must escape (" \ newline) */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;

#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_DRIVER_NOT_LOADED 9
#define NVML_ERROR_GPU_IS_LOST 15
#define NVML_VALUE_NOT_AVAILABLE (~0ULL)

typedef struct {
    unsigned long long total, free, used;
} nvmlMemory_t;

typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlProcessInfo_t;

typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;

#define MAX_GPUS 16
#define MAX_PROCS 64

struct proc {
    unsigned pid;
    unsigned long long used;
    int compute, graphics;
};

/* The device handle is a pointer to its record (NVML's are opaque pointers). */
struct nvmlDevice_st {
    int present, lost;
    unsigned long long slow_ms;
    char uuid[96], name[96];
    unsigned long long total, free;
    struct proc procs[MAX_PROCS];
    int nprocs;
    int card;                            /* a "card" record: free follows the processes */
    unsigned long long reserve, context; /* bytes, on a card */
    int has_reserve, has_context;        /* set by their own records */
};

#define MIB 1048576ULL

/* Real cards as NVML names them and nvidia-smi counts their memory; the
 * reserve is about what the driver keeps (SPEC: ~300 MiB on a T4, ~480 on an
 * H100). */
static const struct {
    const char *model, *name;
    unsigned long long total_mib, reserve_mib;
} cards[] = {
    {"T4", "Tesla T4", 15360, 300},
    {"A10", "NVIDIA A10", 23028, 400},
    {"L4", "NVIDIA L4", 23034, 400},
    {"A100-40GB", "NVIDIA A100-PCIE-40GB", 40960, 450},
    {"A100-80GB", "NVIDIA A100 80GB PCIe", 81920, 480},
    {"H100", "NVIDIA H100 80GB HBM3", 81559, 480},
};
#define CONTEXT_MIB 500

/* What NVML reports for process p: on a card, its own memory and its context. */
static unsigned long long
reported(const struct nvmlDevice_st *g, const struct proc *p)
{
    if (p->used == NVML_VALUE_NOT_AVAILABLE || !g->card)
        return p->used;
    return p->used > ~0ULL - 1 - g->context ? ~0ULL - 1 : p->used + g->context;
}

static struct {
    int loaded, init_fail, inited;
    time_t mtime;
    long mtime_ns;
    off_t size;
    struct nvmlDevice_st gpus[MAX_GPUS];
    unsigned ngpus;
} st;

/* Whether GVW_STUB_NVML_EVIL names word (or is "all"). */
static int
evil(const char *word)
{
    const char *e = getenv("GVW_STUB_NVML_EVIL"), *p;
    size_t n = strlen(word);

    if (e == NULL)
        return 0;
    if (strcmp(e, "all") == 0)
        return 1;
    for (p = e; (p = strstr(p, word)) != NULL; p += n)
        if ((p == e || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
            return 1;
    return 0;
}

static int
parse_u64(const char *s, unsigned long long *out)
{
    char *end;

    if (s == NULL || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    *out = strtoull(s, &end, 10);
    return errno == 0 && *end == '\0' ? 0 : -1;
}

static void
bad(const char *path, int lineno, const char *why)
{
    fprintf(stderr, "stub-nvml: %s:%d: %s (line ignored)\n", path, lineno, why);
}

static void
parse_line(const char *path, int lineno, char *line)
{
    char *save = NULL, *word = strtok_r(line, " ", &save);
    unsigned long long idx, a, b;

    if (word == NULL || word[0] == '#')
        return;
    if (strcmp(word, "init") == 0) {
        char *v = strtok_r(NULL, " ", &save);
        if (v != NULL && strcmp(v, "ok") == 0)
            st.init_fail = 0;
        else if (v != NULL && strcmp(v, "fail") == 0)
            st.init_fail = 1;
        else
            bad(path, lineno, "init wants ok or fail");
    } else if (strcmp(word, "gpu") == 0) {
        char *uuid, *name;
        struct nvmlDevice_st *g;
        if (parse_u64(strtok_r(NULL, " ", &save), &idx) == -1 || idx >= MAX_GPUS ||
            (uuid = strtok_r(NULL, " ", &save)) == NULL ||
            parse_u64(strtok_r(NULL, " ", &save), &a) == -1 ||
            parse_u64(strtok_r(NULL, " ", &save), &b) == -1 || save == NULL ||
            *(name = save) == '\0') {
            bad(path, lineno, "gpu INDEX UUID TOTAL FREE NAME...");
            return;
        }
        g = &st.gpus[idx];
        g->present = 1;
        snprintf(g->uuid, sizeof(g->uuid), "%s", uuid);
        snprintf(g->name, sizeof(g->name), "%s", name);
        g->total = a;
        g->free = b;
        if (idx + 1 > st.ngpus)
            st.ngpus = (unsigned)idx + 1;
    } else if (strcmp(word, "proc") == 0) {
        char *used, *kind;
        struct proc *p;
        if (parse_u64(strtok_r(NULL, " ", &save), &idx) == -1 || idx >= MAX_GPUS ||
            parse_u64(strtok_r(NULL, " ", &save), &a) == -1 || a > UINT32_MAX ||
            (used = strtok_r(NULL, " ", &save)) == NULL ||
            (kind = strtok_r(NULL, " ", &save)) == NULL ||
            strtok_r(NULL, " ", &save) != NULL) {
            bad(path, lineno, "proc INDEX PID USED|na compute|graphics|both");
            return;
        }
        if (strcmp(used, "na") == 0)
            b = NVML_VALUE_NOT_AVAILABLE;
        else if (parse_u64(used, &b) == -1) {
            bad(path, lineno, "USED is not a number or na");
            return;
        }
        if (strcmp(kind, "compute") != 0 && strcmp(kind, "graphics") != 0 &&
            strcmp(kind, "both") != 0) {
            bad(path, lineno, "kind is not compute, graphics or both");
            return;
        }
        if (st.gpus[idx].nprocs == MAX_PROCS) {
            bad(path, lineno, "too many processes");
            return;
        }
        p = &st.gpus[idx].procs[st.gpus[idx].nprocs++];
        p->pid = (unsigned)a;
        p->used = b;
        p->compute = strcmp(kind, "graphics") != 0;
        p->graphics = strcmp(kind, "compute") != 0;
    } else if (strcmp(word, "slow") == 0) {
        if (parse_u64(strtok_r(NULL, " ", &save), &idx) == -1 || idx >= MAX_GPUS ||
            parse_u64(strtok_r(NULL, " ", &save), &a) == -1) {
            bad(path, lineno, "slow INDEX MILLISECONDS");
            return;
        }
        st.gpus[idx].slow_ms = a;
    } else if (strcmp(word, "card") == 0) {
        char *uuid, *model;
        size_t k;
        struct nvmlDevice_st *g;
        if (parse_u64(strtok_r(NULL, " ", &save), &idx) == -1 || idx >= MAX_GPUS ||
            (uuid = strtok_r(NULL, " ", &save)) == NULL ||
            (model = strtok_r(NULL, " ", &save)) == NULL) {
            bad(path, lineno, "card INDEX UUID MODEL");
            return;
        }
        for (k = 0; k < sizeof(cards) / sizeof(cards[0]); k++)
            if (strcmp(cards[k].model, model) == 0)
                break;
        if (k == sizeof(cards) / sizeof(cards[0])) {
            bad(path, lineno, "MODEL is not T4, A10, L4, A100-40GB, A100-80GB or H100");
            return;
        }
        g = &st.gpus[idx];
        g->present = g->card = 1;
        snprintf(g->uuid, sizeof(g->uuid), "%s", uuid);
        snprintf(g->name, sizeof(g->name), "%s", cards[k].name);
        g->total = cards[k].total_mib * MIB;
        if (!g->has_reserve)
            g->reserve = cards[k].reserve_mib * MIB;
        if (!g->has_context)
            g->context = CONTEXT_MIB * MIB;
        if (idx + 1 > st.ngpus)
            st.ngpus = (unsigned)idx + 1;
    } else if (strcmp(word, "reserve") == 0 || strcmp(word, "context") == 0) {
        int reserve = strcmp(word, "reserve") == 0;
        if (parse_u64(strtok_r(NULL, " ", &save), &idx) == -1 || idx >= MAX_GPUS ||
            parse_u64(strtok_r(NULL, " ", &save), &a) == -1 || a > (1ULL << 40)) {
            bad(path, lineno, reserve ? "reserve INDEX MIB" : "context INDEX MIB");
            return;
        }
        /* Before or after the card record: either way it wins. */
        if (reserve)
            st.gpus[idx].reserve = a * MIB, st.gpus[idx].has_reserve = 1;
        else
            st.gpus[idx].context = a * MIB, st.gpus[idx].has_context = 1;
    } else if (strcmp(word, "lost") == 0) {
        if (parse_u64(strtok_r(NULL, " ", &save), &idx) == -1 || idx >= MAX_GPUS) {
            bad(path, lineno, "lost INDEX");
            return;
        }
        st.gpus[idx].lost = 1;
    } else {
        bad(path, lineno, "unknown record");
    }
}

/* Re-reads the state file when it changed. 0 = a state is loaded, -1 = none. */
static int
refresh(void)
{
    const char *path = getenv("GVW_STUB_NVML_STATE");
    struct stat sb;
    FILE *f;
    char line[1024];
    int lineno = 0;

    if (path == NULL || stat(path, &sb) == -1) {
        st.loaded = 0;
        return -1;
    }
    if (st.loaded && sb.st_mtim.tv_sec == st.mtime && sb.st_mtim.tv_nsec == st.mtime_ns &&
        sb.st_size == st.size)
        return 0;
    if ((f = fopen(path, "r")) == NULL) {
        st.loaded = 0;
        return -1;
    }
    memset(st.gpus, 0, sizeof(st.gpus));
    st.ngpus = 0;
    st.init_fail = 0;
    while (fgets(line, sizeof(line), f) != NULL) {
        size_t n = strlen(line);
        lineno++;
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = '\0';
        parse_line(path, lineno, line);
    }
    fclose(f);
    st.loaded = 1;
    st.mtime = sb.st_mtim.tv_sec;
    st.mtime_ns = sb.st_mtim.tv_nsec;
    st.size = sb.st_size;
    return 0;
}

EXPORT nvmlReturn_t
nvmlInit_v2(void)
{
    if (refresh() == -1)
        return NVML_ERROR_DRIVER_NOT_LOADED;
    if (st.init_fail)
        return NVML_ERROR_DRIVER_NOT_LOADED;
    st.inited = 1;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t
nvmlInit(void)
{
    return nvmlInit_v2();
}

EXPORT nvmlReturn_t
nvmlShutdown(void)
{
    if (!st.inited)
        return NVML_ERROR_UNINITIALIZED;
    st.inited = 0;
    return NVML_SUCCESS;
}

EXPORT const char *
nvmlErrorString(nvmlReturn_t rc)
{
    switch (rc) {
    case NVML_SUCCESS:
        return "Success";
    case NVML_ERROR_UNINITIALIZED:
        return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
        return "Invalid Argument";
    case NVML_ERROR_INSUFFICIENT_SIZE:
        return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED:
        return "Driver Not Loaded";
    case NVML_ERROR_GPU_IS_LOST:
        return "GPU is lost";
    default:
        return "Unknown Error";
    }
}

EXPORT nvmlReturn_t
nvmlDeviceGetCount_v2(unsigned int *count)
{
    if (!st.inited)
        return NVML_ERROR_UNINITIALIZED;
    if (count == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    refresh();        /* a vanished file keeps the last state */
    if (st.init_fail) /* the driver went away under a running process */
        return NVML_ERROR_DRIVER_NOT_LOADED;
    *count = st.ngpus;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t
nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *dev)
{
    if (!st.inited)
        return NVML_ERROR_UNINITIALIZED;
    if (dev == NULL || index >= st.ngpus || !st.gpus[index].present)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (st.gpus[index].lost)
        return NVML_ERROR_GPU_IS_LOST;
    *dev = &st.gpus[index];
    return NVML_SUCCESS;
}

static nvmlReturn_t
check_dev(nvmlDevice_t dev)
{
    if (!st.inited)
        return NVML_ERROR_UNINITIALIZED;
    if (dev == NULL || dev < &st.gpus[0] || dev >= &st.gpus[MAX_GPUS] || !dev->present)
        return NVML_ERROR_INVALID_ARGUMENT;
    return dev->lost ? NVML_ERROR_GPU_IS_LOST : NVML_SUCCESS;
}

static nvmlReturn_t
copy_text(const char *s, char *out, unsigned int len)
{
    if (out == NULL || strlen(s) + 1 > len)
        return out == NULL ? NVML_ERROR_INVALID_ARGUMENT : NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(out, s, strlen(s) + 1);
    return NVML_SUCCESS;
}

/* s, with badname: wrapped in invalid UTF-8 and characters to escape, as
 * much as fits NVML's 96-byte buffers. */
static const char *
maybe_bad(const char *s, char *buf, size_t len)
{
    if (!evil("badname"))
        return s;
    snprintf(buf, len, "\x80%.40s \xff\xc0\xaf\xed\xa0\x80 \"q\" b\\s\nl \xe2\x82", s);
    return buf;
}

EXPORT nvmlReturn_t
nvmlDeviceGetUUID(nvmlDevice_t dev, char *uuid, unsigned int len)
{
    nvmlReturn_t rc = check_dev(dev);
    char buf[96];

    return rc != NVML_SUCCESS
               ? rc
               : copy_text(maybe_bad(dev->uuid, buf, sizeof(buf)), uuid, len);
}

EXPORT nvmlReturn_t
nvmlDeviceGetName(nvmlDevice_t dev, char *name, unsigned int len)
{
    nvmlReturn_t rc = check_dev(dev);
    char buf[96];

    return rc != NVML_SUCCESS
               ? rc
               : copy_text(maybe_bad(dev->name, buf, sizeof(buf)), name, len);
}

EXPORT nvmlReturn_t
nvmlDeviceGetMemoryInfo(nvmlDevice_t dev, nvmlMemory_t *mem)
{
    nvmlReturn_t rc = check_dev(dev);

    if (rc != NVML_SUCCESS)
        return rc;
    if (mem == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (dev->slow_ms > 0) {
        struct timespec ts = {(time_t)(dev->slow_ms / 1000),
                              (long)(dev->slow_ms % 1000) * 1000000};
        while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
            ;
    }
    mem->total = dev->total;
    mem->free = dev->free;
    if (dev->card) { /* the reserve and each process once, whichever lists it */
        unsigned long long held = dev->reserve;
        for (int i = 0; i < dev->nprocs; i++) {
            unsigned long long r = reported(dev, &dev->procs[i]);
            if (r == NVML_VALUE_NOT_AVAILABLE)
                continue;
            held = held >= dev->total || r >= dev->total - held ? dev->total : held + r;
        }
        mem->free = held < dev->total ? dev->total - held : 0;
    }
    mem->used = dev->total > mem->free ? dev->total - mem->free : 0;
    return NVML_SUCCESS;
}

/* Fills infos (records of size rec) with the processes of one kind. */
static nvmlReturn_t
list(nvmlDevice_t dev, int graphics, unsigned int *count, void *infos, size_t rec)
{
    nvmlReturn_t rc = check_dev(dev);
    unsigned int n = 0, k = 0;

    if (rc != NVML_SUCCESS)
        return rc;
    if (count == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    for (int i = 0; i < dev->nprocs; i++)
        n += graphics ? dev->procs[i].graphics : dev->procs[i].compute;
    if (infos == NULL && n > 0 && evil("size-success")) {
        *count = n; /* "success", and nothing written anywhere */
        return NVML_SUCCESS;
    }
    if (*count < n || (n > 0 && infos == NULL)) {
        *count = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    for (int i = 0; i < dev->nprocs; i++) {
        const struct proc *p = &dev->procs[i];
        unsigned long long used = reported(dev, p);
        if (!(graphics ? p->graphics : p->compute))
            continue;
        if (evil("huge") && used != NVML_VALUE_NOT_AVAILABLE)
            used = 1ULL << 63;
        if (rec == sizeof(nvmlProcessInfo_v1_t)) {
            nvmlProcessInfo_v1_t *r = (nvmlProcessInfo_v1_t *)infos + k;
            r->pid = p->pid;
            r->usedGpuMemory = used;
        } else {
            nvmlProcessInfo_t *r = (nvmlProcessInfo_t *)infos + k;
            memset(r, 0, sizeof(*r));
            r->pid = p->pid;
            r->usedGpuMemory = used;
            r->gpuInstanceId = 0xFFFFFFFFu;
            r->computeInstanceId = 0xFFFFFFFFu;
        }
        k++;
    }
    /* overcount: the buffer's size plus records that were never written */
    *count = evil("overcount") && infos != NULL ? *count + 1000 : n;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t
nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *c,
                                        nvmlProcessInfo_t *p)
{
    return list(d, 0, c, p, sizeof(*p));
}

EXPORT nvmlReturn_t
nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t d, unsigned int *c,
                                        nvmlProcessInfo_t *p)
{
    return list(d, 0, c, p, sizeof(*p));
}

EXPORT nvmlReturn_t
nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t d, unsigned int *c,
                                     nvmlProcessInfo_v1_t *p)
{
    return list(d, 0, c, p, sizeof(*p));
}

EXPORT nvmlReturn_t
nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t d, unsigned int *c,
                                         nvmlProcessInfo_t *p)
{
    return list(d, 1, c, p, sizeof(*p));
}

EXPORT nvmlReturn_t
nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t d, unsigned int *c,
                                         nvmlProcessInfo_t *p)
{
    return list(d, 1, c, p, sizeof(*p));
}

EXPORT nvmlReturn_t
nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t d, unsigned int *c,
                                      nvmlProcessInfo_v1_t *p)
{
    return list(d, 1, c, p, sizeof(*p));
}
