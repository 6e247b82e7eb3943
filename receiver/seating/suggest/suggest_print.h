/* suggest_print.h -- `budgets --suggest` as a table, JSON or strategic-merge patches */
#ifndef GVW_SUGGEST_PRINT_H
#define GVW_SUGGEST_PRINT_H

#include <stdio.h>

#include <jansson.h>

#include "suggest.h"
#include "suggest_acc.h"

/* Whether a workload is worth a line: it declares a budget or used VRAM. */
int sg_workload_shown(const struct sg_workload *w);

/* The budget per container for a patch of w: an array of n values (caller
 * frees), summing to w_suggested_mib; containers that declare the resource
 * share it in proportion to what they declare now (equally when that is
 * unknown or zero), the remainder to the largest share (the first on a tie);
 * when none declares it, all of it goes to the first container. -1 when the
 * template has no container or out of memory. */
int sg_patch_split(const struct sg_workload *w, int64_t **mib, size_t *n);

/* The patch document for w (caller owns), or NULL when its kind cannot be
 * patched (why in *why, static) or out of memory (*why NULL). */
json_t *sg_patch_json(const struct sg_workload *w, const char *resource,
                      const char **why);

/* The suggestion for w in its budget source's own form, when its pods' budget
 * came from another source than GPUMEM_RESOURCE (SPEC "Where budgets come
 * from"): HAMi's per-GPU nvidia.com/gpumem on each container that declares
 * HAMi memory (the suggestion over the GPUs they are given, rounded up), KAI's
 * gpu-memory annotation (over gpu-fraction-num-devices, rounded up), or a DRA
 * claim's capacity request. 1 with the text in buf, 0 when w has no
 * suggestion or its source is GPUMEM_RESOURCE (or none), -1 when the
 * declaration cannot be made (why in buf). */
int sg_declaration(const struct sg_workload *w, char *buf, size_t len);

/* Prints acc in o->so_format. 0, or -1 out of memory. */
int sg_print(FILE *out, const struct sg_acc *acc, const struct sg_opts *o,
             const char *query, const char *resource);

#endif
