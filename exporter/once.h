/* once.h -- `exporter --once`: one poll printed for a person on the node, every MiB
 * explained */
#ifndef GVW_ONCE_H
#define GVW_ONCE_H

#include "exporter_config.h"
#include "kubec.h"

/*
 * Reads NVML and the processes' cgroups once, lists the node's pods (ko NULL:
 * no API server; the list then counts as unavailable) and prints, per GPU,
 * total, free, used and unattributed memory and every process with its pod
 * or why it has none: a table, or with json one JSON object (README).
 * Returns 0, or 1 with one line on stderr when NVML cannot be read.
 */
int exporter_once(const struct exporter_config *cfg, const struct kube_opts *ko,
                  int json);

#endif
