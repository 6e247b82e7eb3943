/* suggest_math.c -- the arithmetic of `budgets --suggest`: p99, rounding, fit, cut list
 * (no I/O) */
#include "suggest_math.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"

static size_t
slot_of(uint32_t key, size_t cap)
{
    /* Fibonacci hashing: neighbouring MiB values spread over the table. */
    return (size_t)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

static int
grow(struct sg_hist *h)
{
    size_t cap = h->h_cap ? h->h_cap * 2 : 64;
    uint32_t *mib = calloc(cap, sizeof(*mib));
    uint64_t *count = calloc(cap, sizeof(*count));

    if (mib == NULL || count == NULL) {
        free(mib);
        free(count);
        return -1;
    }
    for (size_t i = 0; i < h->h_cap; i++) {
        if (h->h_mib[i] == 0)
            continue;
        size_t j = slot_of(h->h_mib[i], cap);
        while (mib[j] != 0)
            j = (j + 1) & (cap - 1);
        mib[j] = h->h_mib[i];
        count[j] = h->h_count[i];
    }
    free(h->h_mib);
    free(h->h_count);
    h->h_mib = mib;
    h->h_count = count;
    h->h_cap = cap;
    return 0;
}

int
sg_hist_add(struct sg_hist *h, uint32_t mib)
{
    uint32_t key;
    size_t j;

    if (mib == UINT32_MAX)
        return -1; /* can't happen: sg_bytes_to_mib caps it */
    key = mib + 1;
    if ((h->h_used + 1) * 4 > h->h_cap * 3 && grow(h) == -1)
        return -1;
    j = slot_of(key, h->h_cap);
    while (h->h_mib[j] != 0 && h->h_mib[j] != key)
        j = (j + 1) & (h->h_cap - 1);
    if (h->h_mib[j] == 0) {
        h->h_mib[j] = key;
        h->h_used++;
    }
    h->h_count[j]++;
    if (h->h_n == 0 || mib > h->h_max)
        h->h_max = mib;
    h->h_n++;
    return 0;
}

void
sg_hist_free(struct sg_hist *h)
{
    free(h->h_mib);
    free(h->h_count);
    memset(h, 0, sizeof(*h));
}

static int
cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

int
sg_hist_percentile(const struct sg_hist *h, unsigned pct, uint32_t *out)
{
    uint32_t *keys;
    uint64_t rank, seen = 0;
    size_t n = 0, i, j;

    if (h->h_n == 0 || pct == 0 || pct > 100)
        return -1;
    if ((keys = malloc(h->h_used * sizeof(*keys))) == NULL)
        return -1;
    for (i = 0; i < h->h_cap; i++)
        if (h->h_mib[i] != 0)
            keys[n++] = h->h_mib[i];
    qsort(keys, n, sizeof(*keys), cmp_u32);
    /* Nearest rank: the smallest value with at least ceil(pct/100 * N)
     * samples at or below it. */
    rank = (h->h_n * pct + 99) / 100;
    for (i = 0; i < n; i++) {
        j = slot_of(keys[i], h->h_cap);
        while (h->h_mib[j] != keys[i])
            j = (j + 1) & (h->h_cap - 1);
        seen += h->h_count[j];
        if (seen >= rank)
            break;
    }
    *out = keys[i < n ? i : n - 1] - 1;
    free(keys);
    return 0;
}

int
sg_bytes_to_mib(double bytes, uint32_t *mib)
{
    double m;

    if (!isfinite(bytes) || bytes < 0)
        return -1;
    m = ceil(bytes / 1048576.0);
    if (m > (double)(UINT32_MAX - 1))
        return -1;
    *mib = (uint32_t)m;
    return 0;
}

int64_t
sg_suggest_mib(uint32_t p99, uint32_t max, uint32_t headroom_bp)
{
    uint64_t with = ((uint64_t)p99 * (10000u + headroom_bp) + 9999u) / 10000u;

    if (with < max)
        with = max;
    return (int64_t)((with + SG_ROUND_MIB - 1) / SG_ROUND_MIB * SG_ROUND_MIB);
}

int
sg_parse_headroom(const char *s, uint32_t *bp, char *err, size_t errlen)
{
    uint64_t whole = 0, frac = 0;
    unsigned decimals = 0;
    const char *p = s;

    if (s == NULL || !isdigit((unsigned char)*p))
        goto bad;
    for (; isdigit((unsigned char)*p); p++)
        if ((whole = whole * 10 + (uint64_t)(*p - '0')) > SG_MAX_HEADROOM_BP / 100)
            goto range;
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p))
            goto bad;
        for (; isdigit((unsigned char)*p); p++) {
            if (++decimals > 2)
                goto bad;
            frac = frac * 10 + (uint64_t)(*p - '0');
        }
    }
    if (*p != '%' || p[1] != '\0')
        goto bad;
    while (decimals++ < 2)
        frac *= 10;
    if (whole * 100 + frac > SG_MAX_HEADROOM_BP)
        goto range;
    *bp = (uint32_t)(whole * 100 + frac);
    return 0;
bad:
    snprintf(err, errlen, "--headroom: '%s' is not a percentage like 10%% or 12.5%%",
             s ? s : "");
    return -1;
range:
    snprintf(err, errlen, "--headroom: '%s' is over %d%%", s, SG_MAX_HEADROOM_BP / 100);
    return -1;
}

int
sg_parse_window(const char *s, int64_t *seconds, char *err, size_t errlen)
{
    int64_t v;

    if (duration_parse_s(s, &v) == -1) {
        snprintf(err, errlen, "--window: '%s' is not a duration like 7d, 36h or 90m",
                 s ? s : "");
        return -1;
    }
    if (v < SG_MIN_HISTORY_S || v > SG_MAX_WINDOW_S) {
        snprintf(err, errlen, "--window: '%s' is outside 1h .. %dd", s,
                 SG_MAX_WINDOW_S / 86400);
        return -1;
    }
    if (v % 60 != 0) {
        snprintf(err, errlen, "--window: '%s' is not whole minutes", s);
        return -1;
    }
    *seconds = v;
    return 0;
}

/* Largest first, then the name. */
static int
cmp_seat(const void *a, const void *b)
{
    const struct sg_seat *x = *(const struct sg_seat *const *)a;
    const struct sg_seat *y = *(const struct sg_seat *const *)b;

    if (x->ss_mib != y->ss_mib)
        return x->ss_mib > y->ss_mib ? -1 : 1;
    return strcmp(x->ss_name, y->ss_name);
}

size_t
sg_cut_list(struct sg_seat *seats, size_t n, int64_t capacity_mib)
{
    int64_t total = 0;
    size_t marked = 0;

    for (size_t i = 0; i < n; i++) {
        seats[i].ss_cut = 0;
        total += seats[i].ss_mib;
    }
    while (total > capacity_mib) {
        struct sg_seat *pick = NULL;
        int64_t excess = total - capacity_mib;
        for (size_t i = 0; i < n; i++) {
            struct sg_seat *s = &seats[i];
            if (s->ss_cut || s->ss_mib <= 0)
                continue;
            /* Prefer the smallest that alone covers the excess; until one is
             * found, the largest so far. */
            if (pick == NULL) {
                pick = s;
            } else if (s->ss_mib >= excess) {
                if (pick->ss_mib < excess || s->ss_mib < pick->ss_mib ||
                    (s->ss_mib == pick->ss_mib && strcmp(s->ss_name, pick->ss_name) < 0))
                    pick = s;
            } else if (pick->ss_mib < excess) {
                const struct sg_seat *pa = pick, *pb = s;
                if (cmp_seat(&pb, &pa) < 0)
                    pick = s;
            }
        }
        if (pick == NULL)
            break; /* only empty seats left: capacity below zero */
        pick->ss_cut = 1;
        total -= pick->ss_mib;
        marked++;
    }
    return marked;
}
