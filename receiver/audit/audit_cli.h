/* audit_cli.h -- `gpu-vram-watchdog audit`: read-only queries of the audit store */
#ifndef GVW_AUDIT_CLI_H
#define GVW_AUDIT_CLI_H

/* Exit codes of audit_main(). */
#define AUDIT_EXIT_OK 0 /* success, also when nothing matched */
/* database missing, unreadable or not the audit store, no such id, a write
 * error; or a row could not be read (the listing is whole but for it) */
#define AUDIT_EXIT_RUNTIME 1
#define AUDIT_EXIT_USAGE 2 /* bad option, value or command */

/*
 * Runs the audit command; argv[0] is "audit". Usage:
 *   audit [show ID | alerts | stats] [--db PATH] [--since 24h|RFC3339]
 *         [--node N] [--namespace NS] [--result R] [--limit N]
 *         [--format table|json] [--help]
 * Options may come before or after the words, as --opt value or --opt=value.
 * --db defaults to $AUDIT_DB, else /var/lib/gpu-vram-watchdog/audit.db.
 * Results go to stdout; one line on stderr says what went wrong, and one
 * line names each row that cannot be read and is skipped. Opens the
 * database read-only and never creates it. Returns the process exit code.
 */
int audit_main(int argc, char **argv);

#endif
