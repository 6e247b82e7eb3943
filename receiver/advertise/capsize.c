/* capsize.c -- GPUMEM_CAPACITY_MIB=auto: a node's seats from its GPUs' sizes (no I/O) */
#include "capsize.h"

#include "decimal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define MIB 1048576.0

/* One GPU's seats, checked: size must be above the reserve. */
static int
gpu_seats(int64_t size_mib, int64_t reserve_mib, const char *what, int64_t *seats,
          char *err, size_t errlen)
{
    if (size_mib <= reserve_mib) {
        snprintf(
            err, errlen,
            "%s: size %lld MiB is not above GPUMEM_RESERVE_MIB=%lld, so it has no seats "
            "to advertise",
            what, (long long)size_mib, (long long)reserve_mib);
        return -1;
    }
    *seats = size_mib - reserve_mib;
    return 0;
}

/* Adds a to *sum; -1 when the sum would pass what a node could hold. */
static int
add_checked(int64_t *sum, int64_t a)
{
    if (a > DEVICE_MAX_GPU_MIB * DEVICE_MAX_GPUS - *sum)
        return -1;
    *sum += a;
    return 0;
}

int
capsize_from_series(const struct usage_reading *r, const char *node, int64_t reserve_mib,
                    int64_t *mib, char *err, size_t errlen)
{
    int64_t sum = 0, seats;
    size_t found = 0;
    char what[300];

    if (r == NULL || node == NULL)
        return 0;
    for (size_t i = 0; i < r->ur_count; i++) {
        const struct usage_series *s = &r->ur_series[i];
        double b = s->us_bytes;
        int dup = 0;

        if (s->us_namespace == NULL || strcmp(s->us_namespace, node) != 0)
            continue;
        found++;
        if (s->us_gpu == NULL || s->us_gpu[0] == '\0') {
            snprintf(err, errlen,
                     "a gpu_memory_total_bytes series of the node names no GPU, so its "
                     "GPUs cannot be told apart");
            return -1;
        }
        snprintf(what, sizeof(what), "GPU %s", s->us_gpu);
        if (isnan(b) || isinf(b) || b <= 0 || b / MIB > (double)DEVICE_MAX_GPU_MIB) {
            snprintf(err, errlen, "%s: gpu_memory_total_bytes is %g, which no card has",
                     what, b);
            return -1;
        }
        /* The same GPU twice (two scrapes of one exporter): one card, if they agree. */
        for (size_t j = 0; j < i && !dup; j++) {
            const struct usage_series *t = &r->ur_series[j];

            if (t->us_namespace == NULL || strcmp(t->us_namespace, node) != 0 ||
                t->us_gpu == NULL || strcmp(t->us_gpu, s->us_gpu) != 0)
                continue;
            if (t->us_bytes != b) {
                snprintf(err, errlen,
                         "%s: two different gpu_memory_total_bytes (%g and %g)", what,
                         t->us_bytes, b);
                return -1;
            }
            dup = 1;
        }
        if (dup)
            continue;
        if (gpu_seats((int64_t)floor(b / MIB), reserve_mib, what, &seats, err, errlen) ==
            -1)
            return -1;
        if (add_checked(&sum, seats) == -1) {
            snprintf(err, errlen, "the GPUs' sizes add up to more than any node holds");
            return -1;
        }
    }
    if (found == 0)
        return 0;
    *mib = sum;
    return 1;
}

/* A label value that must be a plain positive decimal integer up to max. */
static int
label_int(const char *name, const char *v, int64_t max, int64_t *out, char *err,
          size_t errlen)
{
    int64_t n = 0;
    int rc = decimal_parse(v, max, &n);

    if (rc == -2) {
        snprintf(err, errlen, "label %s=\"%.64s\" is beyond any real GPU (at most %lld)",
                 name, v, (long long)max);
        return -1;
    }
    if (rc != 0 || n == 0)
        goto bad;
    *out = n;
    return 0;
bad:
    snprintf(err, errlen, "label %s=\"%.64s\" is not a positive whole number%s", name, v,
             strcmp(name, CAPSIZE_GFD_MEMORY) == 0 ? " of MiB" : "");
    return -1;
}

int
capsize_from_gfd(const char *memory, const char *count, int64_t reserve_mib, int64_t *mib,
                 char *err, size_t errlen)
{
    int64_t size, n, seats;

    if (memory == NULL && count == NULL)
        return 0;
    if (memory == NULL || count == NULL) {
        snprintf(err, errlen, "label %s is there but %s is not",
                 memory ? CAPSIZE_GFD_MEMORY : CAPSIZE_GFD_COUNT,
                 memory ? CAPSIZE_GFD_COUNT : CAPSIZE_GFD_MEMORY);
        return -1;
    }
    if (label_int(CAPSIZE_GFD_MEMORY, memory, DEVICE_MAX_GPU_MIB, &size, err, errlen) ==
            -1 ||
        label_int(CAPSIZE_GFD_COUNT, count, DEVICE_MAX_GPUS, &n, err, errlen) == -1 ||
        gpu_seats(size, reserve_mib, "each GPU (" CAPSIZE_GFD_MEMORY ")", &seats, err,
                  errlen) == -1)
        return -1;
    *mib = seats * n; /* both bounded: no overflow */
    return 1;
}
