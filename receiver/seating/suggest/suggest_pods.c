/* suggest_pods.c -- a node's PodList as `budgets --suggest` reads it: the one PodList
 * reader, asked for owners, declarations and finished pods */
#include "suggest_pods.h"

int
sg_pods_parse(const char *body, size_t len, const char *resource, struct pod_list *out,
              char *err, size_t errlen)
{
    return sg_pods_parse_sources(body, len, resource, NULL, out, err, errlen);
}

int
sg_pods_parse_sources(const char *body, size_t len, const char *resource,
                      const struct bsrc_order *sources, struct pod_list *out, char *err,
                      size_t errlen)
{
    struct pod_parse_opts po = {
        .po_resource = resource, .po_protect_annotation = "", .po_keep = SG_POD_KEEP};

    return pods_json_parse_sources(body, len, &po, sources, out, err, errlen);
}
