/* pods_walk.h -- the PodList walk's state and readers, shared by its parts
 * (pods_json.c: the list and its items; pods_meta.c, pods_containers.c, pods_status.c: a
 * pod's metadata, declarations and status; pods_walk.c: the readers). Private to
 * common/pod. */
#ifndef GVW_PODS_WALK_H
#define GVW_PODS_WALK_H

#include <stddef.h>

#include "jscan.h"
#include "pods_budget.h"
#include "pods_opts.h"

/* quote() shows at most QUOTE_MAX bytes, each as at most 4 characters. */
#define QUOTE_MAX 64
#define QUOTED (QUOTE_MAX * 4 + sizeof("..."))
#define WHY 512

/* The walk's state. Shape errors are kept in w_why (the first wins); syntax
 * errors are the reader's (w_s.js_err). */
struct walk {
    struct js_scan w_s;
    const struct pod_parse_opts *w_opts;
    unsigned w_keep;        /* w_opts->po_keep */
    int w_budgets;          /* budgets are read (POD_STRICT without a resource: not) */
    struct strpool *w_pool; /* borrowed: the list's, where its strings go */
    struct pod_list *w_out; /* the list being filled */
    size_t w_ctr_cap, w_decl_cap;     /* w_out's pl_containers, pl_decls allocated */
    size_t w_ctr_count, w_decl_count; /* ... used */
    int w_lenient; /* reading what the decision's reading skips: a repeated key is
                      skipped, not refused */
    int w_oom;
    int w_finished;              /* the item being read is in phase Succeeded or Failed */
    int w_too_large;             /* the list passed POD_LIST_MAX or POD_LIST_MAX_TEXT */
    char w_why[WHY];             /* "" until an item's shape is wrong */
    char w_soft[WHY];            /* POD_STRICT: why the decision's reading would refuse
                                    the list (budgets only), "" until then */
    struct pods_budget w_budget; /* BUDGET_SOURCES: what else a pod declares */
};

#define W_STRICT(w) (((w)->w_keep & POD_STRICT) != 0)

/* js_once() for a key only the budgets read: under POD_STRICT a repeat refuses the
 * budgets (w_soft, as the decision's reading words it) and not the list. 0: read
 * the value; 1: skip it (a repeat); -1. */
int walk_once(struct walk *w, unsigned *seen, unsigned bit, const char *key);

/* Records under POD_STRICT why the decision's reading refuses the list (the first
 * wins); what is "not JSON: ..." or "not a PodList: ...". */
void walk_soft(struct walk *w, const char *what);

/* Copies a string value, decoded, into out (QUOTED bytes) for a message: printable
 * ASCII as is, anything else as \xNN, cut at QUOTE_MAX bytes, so API text never
 * smuggles control bytes into logs. */
void walk_quote_str(const struct js_str *v, char *out);

/* POD_STRICT: opens the object or array that must come next; a value of another
 * type is refused as the shape error what, a byte that starts no value as the
 * reader's syntax error. 0 or -1. */
int walk_shape(struct walk *w, enum js_type want, const char *what);

/* A string value into *v: 1. Another value, or one holding U+0000, is passed over
 * (0), or under POD_STRICT refused as what (-1). */
int walk_read_str(struct walk *w, struct js_str *v, const char *what);

/* v (holding no U+0000) into the pool as *dst: 0, or -1 when out of memory. */
int walk_keep_str(struct walk *w, const struct js_str *v, char **dst);

/* A string value the decision may use (the pod IP, the release annotation) into the
 * pool as *dst, left NULL when it holds U+0000. 0, or -1. */
int walk_read_optional(struct walk *w, char **dst);

/* The pod's metadata at the reader (pods_meta.c): its names, owners, labels
 * (POD_KEEP_WORKLOAD) and annotations. 0, or -1. */
int walk_metadata(struct walk *w, struct pod *p);

/* The pod's status at the reader (pods_status.c): phase (w_finished), start time,
 * IP, DRA claims and (POD_KEEP_IDS) the containers that started. 0, or -1. */
int walk_status(struct walk *w, struct pod *p);

/* The pod's spec at the reader: its budget by GPUMEM_RESOURCE (BUDGET_BAD with a
 * reason when a declaration is broken), hostNetwork, what the other sources read
 * and, with POD_KEEP_WORKLOAD, each container's declaration. 0, or -1 on a read
 * error or out of memory. */
int walk_spec(struct walk *w, struct pod *p);

#endif
