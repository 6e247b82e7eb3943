/* kube_json.h -- the JSON kube.c sends and the small answers it reads itself */
#ifndef GVW_KUBE_JSON_H
#define GVW_KUBE_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "kube_status.h" /* kube_json_status_message, now shared */

/*
 * Reads items[].metadata.name from a v1 NodeList body (len bytes, need not be
 * NUL-terminated). Returns 0 and sets *names to an owned array of *count owned
 * strings (free with kube_node_names_free(); zero items gives NULL and 0), or
 * -1 with a reason in err and nothing allocated.
 */
int kube_json_node_names(const char *body, size_t len, char ***names, size_t *count,
                         char *err, size_t errlen);

void kube_node_names_free(char **names, size_t count);

/* The same, also copying each node's GPU feature discovery labels
 * nvidia.com/gpu.memory and nvidia.com/gpu.count into *gpu_memory and
 * *gpu_count (arrays parallel to *names; an entry is NULL when the label is
 * absent or not a string; free with kube_node_labels_free()). Either may be
 * NULL: not read. The values are raw: capsize_from_gfd() judges them. */
int kube_json_nodes(const char *body, size_t len, char ***names, char ***gpu_memory,
                    char ***gpu_count, size_t *count, char *err, size_t errlen);
void kube_node_labels_free(char **values, size_t count);

/* Request bodies, compact JSON. Each returns an owned string (free()), or NULL
 * when out of memory. Arguments are borrowed. dry_run adds "dryRun":["All"] to
 * the DeleteOptions (the eviction's deleteOptions), beside preconditions.uid. */
char *kube_json_eviction(const char *ns, const char *pod, const char *uid, int dry_run);
char *kube_json_delete_options(const char *uid, int dry_run);
/* [{"op":"add","path":"/status/capacity/<escaped resource>","value":"<mib>"}] */
char *kube_json_capacity_patch(const char *resource, int64_t mib);

/* Appends s escaped as one RFC 6901 JSON Pointer token (~ -> ~0, / -> ~1).
 * 0, or -1 when b is full. */
int kube_json_pointer_escape(struct buf *b, const char *s);

#endif
