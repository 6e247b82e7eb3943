/* gpu_nodes.c -- the one fan-out over the GPU nodes: the list, then one call per node */
#include "gpu_nodes.h"

#include <stdlib.h>

#include "kube.h"

struct listing {
    gpu_nodes_each_fn li_each;
    gpu_nodes_done_fn li_done;
    void *li_arg;
};

static void
listed(struct kube_answer *a, void *arg)
{
    struct listing li = *(struct listing *)arg;

    free(arg);
    if (a->ka_cancelled) {
        li.li_done(GPU_NODES_CANCELLED, a->ka_error, li.li_arg);
    } else if (a->ka_class != KUBE_OK) {
        li.li_done(GPU_NODES_FAILED, a->ka_error, li.li_arg);
    } else if (a->ka_node_count == 0) {
        li.li_done(GPU_NODES_NONE, NULL, li.li_arg);
    } else {
        for (size_t i = 0; i < a->ka_node_count; i++)
            if (li.li_each(a->ka_nodes[i], li.li_arg) == -1)
                break;
        li.li_done(GPU_NODES_LISTED, NULL, li.li_arg);
    }
}

int
gpu_nodes_each(struct kube *kube, const char *selector, gpu_nodes_each_fn each,
               gpu_nodes_done_fn done, void *arg)
{
    struct listing *li = malloc(sizeof(*li));

    if (li == NULL)
        return -1;
    *li = (struct listing){each, done, arg};
    if (kube_list_nodes(kube, selector, listed, li) == -1) {
        free(li);
        return -1;
    }
    return 0;
}
