/* metrics_family.c -- one labelled metric family: its series, bounded, found by a hash
 * index */
#include "metrics_family.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

void
family_clear(struct family *f)
{
    for (size_t i = 0; i < f->f_count; i++) {
        free(f->f_series[i].s_l1);
        free(f->f_series[i].s_l2);
    }
    f->f_count = 0;
    memset(f->f_index, 0, sizeof(f->f_index));
}

static int
eq(const char *a, const char *b)
{
    if (a == NULL || b == NULL)
        return a == b;
    return strcmp(a, b) == 0;
}

/* FNV-1a over l1, a separator, and l2 (NULL hashes apart from ""). */
static uint32_t
label_hash(const char *l1, const char *l2)
{
    uint32_t h = 2166136261u;

    if (l1 == NULL)
        h = (h ^ 0xfeu) * 16777619u;
    else
        for (const unsigned char *p = (const unsigned char *)l1; *p; p++)
            h = (h ^ *p) * 16777619u;
    h = (h ^ 0xffu) * 16777619u;
    if (l2 == NULL)
        return (h ^ 0xfeu) * 16777619u;
    for (const unsigned char *p = (const unsigned char *)l2; *p; p++)
        h = (h ^ *p) * 16777619u;
    return h;
}

/* The index slot holding (l1, l2), or the empty slot where it would go. */
static uint16_t *
index_slot(struct family *f, const char *l1, const char *l2)
{
    uint32_t i = label_hash(l1, l2) & (INDEX_SLOTS - 1);

    for (;; i = (i + 1) & (INDEX_SLOTS - 1)) {
        uint16_t *slot = &f->f_index[i];
        const struct series *s;
        if (*slot == 0)
            return slot; /* never full: at most half the slots are used */
        s = &f->f_series[*slot - 1];
        if (eq(s->s_l1, l1) && eq(s->s_l2, l2))
            return slot;
    }
}

static int
too_long(const char *v)
{
    return v != NULL && strnlen(v, MAX_LABEL_BYTES + 1) > MAX_LABEL_BYTES;
}

struct series *
family_lookup(struct family *f, const char *l1, const char *l2)
{
    struct series *s;
    uint16_t *slot;
    char max[16];

    if (too_long(l1) || too_long(l2)) {
        if (!f->f_long_said) {
            f->f_long_said = 1;
            log_event(LOG_LEVEL_WARN,
                      "metric label value over 256 bytes: counted as _other", "family",
                      f->f_name != NULL ? f->f_name : "?", (char *)NULL);
        }
        l1 = "_other";
        l2 = l2 ? "_other" : NULL;
    }
    slot = index_slot(f, l1, l2);
    if (*slot != 0)
        return &f->f_series[*slot - 1];
    if (f->f_count == METRICS_MAX_SERIES - 1 && !f->f_full_said) {
        /* Said once: a full family stays full until the daemon restarts. */
        f->f_full_said = 1;
        snprintf(max, sizeof(max), "%d", METRICS_MAX_SERIES);
        log_event(LOG_LEVEL_WARN,
                  "metric family full: further label sets count as _other", "family",
                  f->f_name != NULL ? f->f_name : "?", "max_series", max, (char *)NULL);
    }
    if (f->f_count == METRICS_MAX_SERIES - 1) {
        /* The last slot collects everything past the cap. */
        l1 = "_other";
        l2 = l2 ? "_other" : NULL;
        slot = index_slot(f, l1, l2);
        if (*slot != 0)
            return &f->f_series[*slot - 1];
    } else if (f->f_count == METRICS_MAX_SERIES) {
        return &f->f_series[METRICS_MAX_SERIES - 1];
    }
    s = &f->f_series[f->f_count];
    s->s_l1 = strdup(l1);
    s->s_l2 = l2 ? strdup(l2) : NULL;
    if (s->s_l1 == NULL || (l2 != NULL && s->s_l2 == NULL)) {
        free(s->s_l1);
        free(s->s_l2);
        return NULL;
    }
    s->s_value = 0;
    *slot = (uint16_t)(f->f_count + 1);
    f->f_count++;
    return s;
}

void
family_add(struct family *f, const char *l1, const char *l2, double v)
{
    struct series *s = family_lookup(f, l1, l2);

    if (s != NULL)
        s->s_value += v;
}

void
family_set(struct family *f, const char *l1, const char *l2, double v)
{
    struct series *s = family_lookup(f, l1, l2);

    if (s != NULL)
        s->s_value = v;
}
