/* budgets.h -- `budgets`: the seating chart as a table or JSON, acting on nothing */
#ifndef GVW_BUDGETS_H
#define GVW_BUDGETS_H

#include <stdio.h>

#include <jansson.h>

#include "config.h"
#include "seating.h"

/* Looks at node (NULL = every GPU node) and prints the seating chart: one
 * JSON object with a node, an array without; or the table. Reads only.
 * Returns the exit code: 0 when it printed, 1 otherwise (with one line on
 * stderr). */
int budgets_main(const struct config *cfg, const char *node, int json);

/* One node as JSON (the fields are documented in budgets.c). Caller owns it;
 * NULL when out of memory. */
json_t *budgets_node_json(const struct seating_node *n);

/* One node as text; names are printed last on their line and never cut. */
void budgets_node_print(FILE *out, const struct seating_node *n);

#endif
