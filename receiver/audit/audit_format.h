/* audit_format.h -- SPEC JSON and 80-column text for decisions, alerts and stats */
#ifndef GVW_AUDIT_FORMAT_H
#define GVW_AUDIT_FORMAT_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "store.h"

/* How every JSON object here is written out (json_dumpf/json_dumps): compact,
 * keys in SPEC order, seconds without binary noise (0.25, not 0.2500000001). */
#define AUDIT_JSON_FLAGS (JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9))

/* Room for any time audit_format_time() writes. */
#define AUDIT_TIME_LEN 40

/* RFC 3339 UTC with milliseconds, "2026-06-02T10:00:00.000Z", into buf. */
void audit_format_time(int64_t ms, char *buf, size_t len);

/* The SPEC decision object: id, time, node, trigger, fingerprint, result,
 * reason, free_mib, floor_mib, dry_run, action, victim, candidates, error,
 * verify, gpu, release, free_source, prediction, and "replica" after them when
 * the row names one (HA). id < 0 gives "id": null (check). Caller owns the
 * result (json_decref). NULL on OOM. */
json_t *audit_decision_json(const struct store_decision *d, int64_t id);
/* One decision in full, human-readable (audit show, check --format table);
 * id < 0 prints it as not recorded. Every stored string is cleaned for the
 * terminal (termtext.h): controls, bidi overrides and bad UTF-8 as escapes. */
void audit_decision_print(FILE *out, const struct store_decision *d, int64_t id);

/* The SPEC alert object: id, received_at, alertname, status, fingerprint,
 * starts_at, ends_at, labels, annotations. Caller owns it; NULL on OOM. */
json_t *audit_alert_json(const struct store_alert *a, int64_t id);

/* One summary line: {"by":"result","key":"recycled","count":3} or
 * {"by":"namespace","key":"ml","result":"recycled","count":2} -- "result"
 * appears only on namespace lines, naming what the decisions that chose a
 * victim in that namespace ended as. Caller owns it; NULL on OOM. */
json_t *audit_stat_json(const struct store_stat *st);

/* 80-column tables: a header, then one line per row. Long cells end in "…",
 * except the last column (the victim, for decisions), which runs to its full
 * width; ids are never cut. */
void audit_decision_table_header(FILE *out);
void audit_decision_table_row(FILE *out, const struct store_decision *d, int64_t id);
void audit_alert_table_header(FILE *out);
void audit_alert_table_row(FILE *out, const struct store_alert *a, int64_t id);
void audit_stat_table_header(FILE *out);
void audit_stat_table_row(FILE *out, const struct store_stat *st);

#endif
