/* serve.h -- the daemon: wires the loop, the front door, the store and timers */
#ifndef GVW_SERVE_H
#define GVW_SERVE_H

#include "config.h"

/* Runs until SIGTERM or SIGINT. Returns the process exit code. */
int serve_main(const struct config *cfg);

#endif
