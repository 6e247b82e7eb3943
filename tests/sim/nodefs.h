/* nodefs.h -- the node as the exporter sees it: the stub NVML state file and a fake /proc
 */
#ifndef GVW_SIM_NODEFS_H
#define GVW_SIM_NODEFS_H

#include <stddef.h>

#include "world.h"

/*
 * Mirrors the world into the two files the real exporter reads on the
 * node (tests/stub_nvml's state file, see STUB-NVML contract in
 * tests/sim/README.md, and PROC_ROOT/<pid>/cgroup), so that
 * `gpu-vram-watchdog exporter` runs against the simulator unchanged.
 *
 * Every write is atomic (a temporary file renamed over the old one): a
 * reader sees the old world or the new one, never half of each. Order keeps
 * a reader from seeing a PID it cannot place: a new process's cgroup file is
 * written before the NVML state names it, and a gone process's cgroup file
 * is removed after the state stops naming it.
 */
struct nodefs;

/* nvml_state and proc_root are the first node's files, each may be NULL (that half is
 * not written). node_dir, when not NULL, holds every simulated node's pair as
 * node_dir/<node>/nvml.state and node_dir/<node>/proc/ (made here). NULL with the reason
 * in err on failure. The caller frees it with nodefs_free(). */
struct nodefs *nodefs_new(struct world *w, const char *nvml_state, const char *proc_root,
                          const char *node_dir, char *err, size_t errlen);

/* Frees it; the files stay as last written. nodefs_free(NULL) is a no-op. */
void nodefs_free(struct nodefs *nf);

/* Advances the world and rewrites whatever changed since the last call. 0, or -1
 * with the reason in err (the previous files stay as they were). */
int nodefs_sync(struct nodefs *nf, char *err, size_t errlen);

/* The NVML state file's text for the world at w_clock: a new string the caller
 * frees, or NULL on allocation failure. Exposed for GET /sim/nvml. */
char *nodefs_render_nvml(const struct world *w);

/* The same for simulated node node (an index into the scenario's nodes). */
char *nodefs_render_nvml_node(const struct world *w, int node);

#endif
