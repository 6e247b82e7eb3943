/* check.h -- `check`: re-verify now and print the decision, acting on nothing */
#ifndef GVW_CHECK_H
#define GVW_CHECK_H

#include "config.h"

/* Runs SPEC steps 1-4 for node (NULL = every GPU node) and prints the
 * decision(s): one object with a node, an array without. Records nothing,
 * changes nothing. Returns the exit code: 0 when it printed, 1 otherwise. */
int check_main(const struct config *cfg, const char *node, int json);

#endif
