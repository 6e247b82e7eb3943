/* kube_json.c -- builds Kubernetes request bodies and reads NodeList and Status answers
 */
#include "kube_json.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

void
kube_node_names_free(char **names, size_t count)
{
    if (names == NULL)
        return;
    for (size_t i = 0; i < count; i++)
        free(names[i]);
    free(names);
}

void
kube_node_labels_free(char **values, size_t count)
{
    kube_node_names_free(values, count);
}

/* metadata.labels[key] of one item, copied into *out (NULL when absent or
 * not a string). 0, or -1 when out of memory. */
static int
label_copy(const json_t *meta, const char *key, char **out)
{
    const char *v =
        json_string_value(json_object_get(json_object_get(meta, "labels"), key));

    *out = NULL;
    return v != NULL && (*out = strdup(v)) == NULL ? -1 : 0;
}

int
kube_json_nodes(const char *body, size_t len, char ***names, char ***gpu_memory,
                char ***gpu_count, size_t *count, char *err, size_t errlen)
{
    json_error_t jerr;
    json_t *root, *items;
    char **out = NULL, **mem = NULL, **cnt = NULL;
    size_t n = 0;

    *names = NULL;
    *count = 0;
    if (gpu_memory != NULL)
        *gpu_memory = NULL;
    if (gpu_count != NULL)
        *gpu_count = NULL;
    if ((root = json_loadb(body, len, 0, &jerr)) == NULL) {
        snprintf(err, errlen, "NodeList is not JSON: %s (line %d)", jerr.text, jerr.line);
        return -1;
    }
    if (!json_is_array(items = json_object_get(root, "items"))) {
        snprintf(err, errlen, "not a NodeList: no items array");
        goto fail;
    }
    if ((n = json_array_size(items)) > 0 &&
        ((out = calloc(n, sizeof(*out))) == NULL ||
         (gpu_memory != NULL && (mem = calloc(n, sizeof(*mem))) == NULL) ||
         (gpu_count != NULL && (cnt = calloc(n, sizeof(*cnt))) == NULL))) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < n; i++) {
        const json_t *meta = json_object_get(json_array_get(items, i), "metadata");
        const char *name = json_string_value(json_object_get(meta, "name"));

        if (name == NULL || name[0] == '\0') {
            snprintf(err, errlen, "NodeList item %zu has no metadata.name", i);
            goto fail;
        }
        if ((out[i] = strdup(name)) == NULL ||
            (mem != NULL && label_copy(meta, "nvidia.com/gpu.memory", &mem[i]) == -1) ||
            (cnt != NULL && label_copy(meta, "nvidia.com/gpu.count", &cnt[i]) == -1)) {
            snprintf(err, errlen, "out of memory");
            goto fail;
        }
    }
    json_decref(root);
    *names = out;
    *count = n;
    if (gpu_memory != NULL)
        *gpu_memory = mem;
    if (gpu_count != NULL)
        *gpu_count = cnt;
    return 0;
fail:
    kube_node_names_free(out, n);
    kube_node_labels_free(mem, n);
    kube_node_labels_free(cnt, n);
    json_decref(root);
    return -1;
}

int
kube_json_node_names(const char *body, size_t len, char ***names, size_t *count,
                     char *err, size_t errlen)
{
    return kube_json_nodes(body, len, names, NULL, NULL, count, err, errlen);
}

/* Dumps and frees root; NULL root (a failed build) gives NULL. */
static char *
dump(json_t *root)
{
    char *s;

    if (root == NULL)
        return NULL;
    s = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    return s;
}

/* {"preconditions":{"uid":UID}[,"dryRun":["All"]]}, the options both bodies carry. */
static json_t *
delete_options(const char *uid, int dry_run)
{
    json_t *o = json_pack("{s:{s:s}}", "preconditions", "uid", uid);

    if (o != NULL && dry_run &&
        json_object_set_new(o, "dryRun", json_pack("[s]", "All")) == -1) {
        json_decref(o);
        return NULL;
    }
    return o;
}

char *
kube_json_eviction(const char *ns, const char *pod, const char *uid, int dry_run)
{
    /* json_pack steals the "o" reference, also when it fails (a NULL one fails it). */
    return dump(json_pack("{s:s, s:s, s:{s:s, s:s}, s:o}", "apiVersion", "policy/v1",
                          "kind", "Eviction", "metadata", "name", pod, "namespace", ns,
                          "deleteOptions", delete_options(uid, dry_run)));
}

char *
kube_json_delete_options(const char *uid, int dry_run)
{
    json_t *o = delete_options(uid, dry_run);

    if (o != NULL &&
        (json_object_set_new(o, "apiVersion", json_string("v1")) == -1 ||
         json_object_set_new(o, "kind", json_string("DeleteOptions")) == -1)) {
        json_decref(o);
        return NULL;
    }
    return dump(o);
}

int
kube_json_pointer_escape(struct buf *b, const char *s)
{
    for (; *s; s++) {
        int rc = *s == '~'   ? buf_append(b, "~0", 2)
                 : *s == '/' ? buf_append(b, "~1", 2)
                             : buf_append(b, s, 1);
        if (rc == -1)
            return -1;
    }
    return 0;
}

char *
kube_json_capacity_patch(const char *resource, int64_t mib)
{
    char value[24];
    char *out = NULL;
    struct buf path;

    buf_init(&path, 1024);
    snprintf(value, sizeof(value), "%" PRId64, mib);
    if (buf_append(&path, "/status/capacity/", 17) == 0 &&
        kube_json_pointer_escape(&path, resource) == 0)
        out = dump(json_pack("[{s:s, s:s, s:s}]", "op", "add", "path", path.b_data,
                             "value", value));
    buf_free(&path);
    return out;
}
