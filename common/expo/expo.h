/* expo.h -- Prometheus text exposition (format 0.0.4): headers, escaped labels, samples
 */
#ifndef GVW_EXPO_H
#define GVW_EXPO_H

#include <stddef.h>

#include "buf.h"

/* One label of a sample. Both borrowed. */
struct expo_label {
    const char *el_name;  /* a valid label name, written as is */
    const char *el_value; /* any text; escaped; NULL is written as "" */
};

/* Appends "# HELP name help" and "# TYPE name type" (once per family, before
 * its samples). 0, or -1 when out is full or out of memory. */
int expo_header(struct buf *out, const char *name, const char *type, const char *help);

/* Appends v with \ as \\, " as \" and a newline as \n, and each byte that is
 * not part of well-formed UTF-8 as U+FFFD: the exposition stays valid UTF-8
 * whatever a label's source holds. 0 or -1. */
int expo_escape(struct buf *out, const char *v);

/* Appends one sample line: name{l1="v1",...} value (no braces when nlabels is
 * 0; the value as %.17g, so integers up to 2^53 print exactly). 0 or -1. */
int expo_sample(struct buf *out, const char *name, const struct expo_label *labels,
                size_t nlabels, double value);

#endif
