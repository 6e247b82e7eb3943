/* metrics_family.h -- one labelled metric family (up to two label values a series):
 * bounded, indexed, its values set or added (private to receiver/metrics) */
#ifndef GVW_METRICS_FAMILY_H
#define GVW_METRICS_FAMILY_H

#include <stddef.h>
#include <stdint.h>

#include "metrics.h" /* METRICS_MAX_SERIES */

/* The longest label value kept as itself (a node name is at most 253 bytes, a
 * GPU name 256); a longer one counts under "_other", so hostile alertnames of a
 * megabyte each cannot hold 256 MiB. */
#define MAX_LABEL_BYTES 256

/* A labelled sample: up to two label values and a number. */
struct series {
    char *s_l1; /* owned */
    char *s_l2; /* owned, may be NULL */
    double s_value;
};

/* Slots of a family's hash index: a power of two, at least twice the series. */
#define INDEX_SLOTS 512
_Static_assert(INDEX_SLOTS >= 2 * METRICS_MAX_SERIES &&
                   (INDEX_SLOTS & (INDEX_SLOTS - 1)) == 0 && METRICS_MAX_SERIES < 65535,
               "index: a power of two, at most half full, entries fit uint16_t");

struct family {
    struct series f_series[METRICS_MAX_SERIES];
    size_t f_count;
    /* Open addressing over f_series: 0 = empty, else series index + 1. A linear
     * scan cost 3 µs an alert with 255 alertnames in the family (bench/NOTES.md);
     * this keeps every alert O(1) whatever names Alertmanager sends. */
    uint16_t f_index[INDEX_SLOTS];
    int f_l2_optional;  /* a series without l2 is written without the second label */
    int f_full_said;    /* the cap was logged (once: a full family stays full) */
    int f_long_said;    /* a value over MAX_LABEL_BYTES was logged (once) */
    const char *f_name; /* for those log lines */
};

/* Frees every series' labels and empties the index; the family may be reused. */
void family_clear(struct family *f);
/* The series for (l1, l2; l2 may be NULL), created on first use; past
 * METRICS_MAX_SERIES, or for a label over MAX_LABEL_BYTES, the "_other" series
 * (said once in the log). NULL when out of memory. */
struct series *family_lookup(struct family *f, const char *l1, const char *l2);
/* Adds v to, or sets v as, (l1, l2)'s value; out of memory drops it. */
void family_add(struct family *f, const char *l1, const char *l2, double v);
void family_set(struct family *f, const char *l1, const char *l2, double v);

#endif
