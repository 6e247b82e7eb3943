/* params.h -- the policy's settings as the configuration gives them */
#ifndef GVW_PARAMS_H
#define GVW_PARAMS_H

#include <stdint.h>

#include "config.h"
#include "policy.h"

/*
 * Fills pp from cfg (FLOOR_MIB, GPU_TOTAL_MIB, MIN_RUNTIME, FALLBACK,
 * EXCLUDE_NAMESPACES), the trigger's namespace (NULL = none) and now (unix
 * seconds). pp borrows cfg's and starving_ns's strings. One place, so a
 * decision and the seating chart judge pods by the same rules.
 */
void policy_params_from_config(const struct config *cfg, const char *starving_ns,
                               int64_t now, struct policy_params *pp);

#endif
