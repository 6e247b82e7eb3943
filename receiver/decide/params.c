/* params.c -- the policy's settings as the configuration gives them */
#include "params.h"

#include <string.h>

void
policy_params_from_config(const struct config *cfg, const char *starving_ns, int64_t now,
                          struct policy_params *pp)
{
    memset(pp, 0, sizeof(*pp));
    pp->pp_floor_mib = cfg->c_floor_mib;
    pp->pp_total_mib = cfg->c_gpu_total_mib;
    pp->pp_min_runtime_s = cfg->c_min_runtime_s;
    pp->pp_fallback_largest = cfg->c_fallback == FALLBACK_LARGEST;
    pp->pp_exclude_namespaces = (const char *const *)cfg->c_exclude_namespaces.sl_items;
    pp->pp_exclude_count = cfg->c_exclude_namespaces.sl_count;
    pp->pp_starving_namespace = starving_ns;
    pp->pp_now = now;
}
