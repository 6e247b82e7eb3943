/* audit_merge.h -- `audit --db A --db B` and `audit --merge -`: the decisions of several
 * replicas as one history, newest first, each row naming its replica */
#ifndef GVW_AUDIT_MERGE_H
#define GVW_AUDIT_MERGE_H

#include "audit_args.h"

/*
 * Lists the decisions of a->aa_db, of every a->aa_more_dbs, and of every JSON
 * listing in a->aa_merge (files, or "-" for standard input: the array `audit
 * --format json` prints, several one after another allowed), filtered by
 * a->aa_filter, newest first (ties: replica name, then id, newest first), at
 * most sf_limit rows (0 = all). JSON: one array of decision objects, each
 * with "replica" (null when its row names none); table: a REPLICA column
 * before the usual ones. Returns the process exit code (AUDIT_EXIT_*), after
 * one line on stderr when it is not 0.
 */
int audit_merge_run(const struct audit_args *a);

#endif
