/* store.h -- the SQLite audit store: every alert received and every decision taken */
#ifndef GVW_STORE_H
#define GVW_STORE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Conventions. Functions return 0 (or a count) on success and -1 on failure,
 * with the reason (sqlite3_errmsg or ours) in err, which the caller owns.
 * SQLITE_FULL, SQLITE_READONLY and SQLITE_IOERR are failures like any other:
 * the daemon answers 503 and Alertmanager retries. After a failure inside
 * store_begin(), call store_rollback(). The store is not thread-safe: one
 * struct store per thread.
 */

struct store; /* opaque */

enum store_mode {
    STORE_READWRITE, /* the daemon: creates (0600), migrates, writes */
    STORE_READONLY,  /* the audit CLI: never creates, never writes, works
                        while the daemon writes */
};

/* The schema version this program writes and reads (PRAGMA user_version). */
#define STORE_SCHEMA_VERSION 5

/* The error an interrupted decision carries. Its result stays "in_progress":
 * that is what it was when the daemon stopped. */
#define STORE_INTERRUPTED_ERROR                                                          \
    "interrupted: the daemon stopped before this decision finished"

/* The error of a recycle recorded before its verify, when the daemon stopped
 * before the verify ended. Its result stays what it was ("recycled"). */
#define STORE_UNVERIFIED_ERROR                                                           \
    "interrupted: the daemon stopped before the verify finished; the recycle itself "    \
    "happened"

/*
 * Opens the database at path. READWRITE creates the file (mode 0600 whatever
 * the umask; the parent directory must exist), turns on WAL, migrates the
 * schema forward, and marks rows a previous run left "in_progress" with
 * STORE_INTERRUPTED_ERROR, and rows it left with a verify pending with
 * STORE_UNVERIFIED_ERROR. READONLY never creates nor migrates: a missing
 * file, an older or a newer schema are errors; it reads the file as
 * untrusted: decisions and alerts must be this project's tables (a view, a
 * virtual table or a generated column in their place is refused), and no
 * step of a query runs longer than a minute. Both modes turn trusted_schema
 * off. Returns an owned store (free with store_close()) or NULL with the
 * reason in err.
 */
struct store *store_open(const char *path, enum store_mode mode, char *err,
                         size_t errlen);
/* Closes the store and its cached statements; NULL is a no-op. */
void store_close(struct store *s);
/* How many rows this READWRITE open marked interrupted, in_progress and
 * verify-pending together (for a log line). */
int64_t store_interrupted_count(const struct store *s);
/* 1 when the database file at the path this store opened has been removed or
 * replaced since: writes would go to the old file, which nothing can read at
 * the path and which is gone at the next restart. Costs one stat(). */
int store_moved(struct store *s);

/* Group commit: BEGIN IMMEDIATE ... COMMIT around every write of one loop
 * turn. On a failed commit the transaction is rolled back before -1. */
int store_begin(struct store *s, char *err, size_t errlen);
int store_commit(struct store *s, char *err, size_t errlen);
/* Rolls back the open transaction; a no-op when none is open. */
void store_rollback(struct store *s);

/* One alert as received. Every pointer is borrowed. */
struct store_alert {
    int64_t sa_received_ms;          /* unix ms */
    const char *sa_alertname;        /* required */
    const char *sa_status;           /* required: "firing" | "resolved" */
    const char *sa_fingerprint;      /* may be NULL or "" (stored as "") */
    const char *sa_starts_at;        /* RFC 3339 as sent; may be NULL */
    const char *sa_ends_at;          /* RFC 3339 as sent; may be NULL */
    const char *sa_labels_json;      /* JSON object text; NULL = "{}" */
    const char *sa_annotations_json; /* JSON object text; NULL = "{}" */
};

/* Inserts an alert; its row id goes to *id_out (may be NULL). */
int store_add_alert(struct store *s, const struct store_alert *a, int64_t *id_out,
                    char *err, size_t errlen);

/* One pod the decision considered. Strings borrowed. */
struct store_candidate {
    const char *sc_namespace;
    const char *sc_pod;
    int64_t sc_used_mib;
    int sc_has_budget;     /* 0: budget_mib is null (none or unreadable) */
    int64_t sc_budget_mib; /* valid when sc_has_budget */
    int sc_eligible;
    const char *sc_why_not; /* NULL when eligible */
};

/* The pod chosen. Strings borrowed. */
struct store_victim {
    const char *sv_namespace;
    const char *sv_pod;
    int64_t sv_used_mib;
    int sv_has_budget;        /* 0: budget and overshoot are null */
    int64_t sv_budget_mib;    /* valid when sv_has_budget */
    int64_t sv_overshoot_mib; /* used - budget; valid when sv_has_budget */
};

/* The cooperative release asked of the victim (SPEC "Cooperative release").
 * Strings borrowed. A dry run records the URL it would ask and nothing else. */
struct store_release {
    const char *sr_url;  /* http://POD_IP:PORT/PATH */
    int sr_status_known; /* 0: status is null (not asked, or no HTTP answer) */
    long sr_status;
    int sr_freed_known;   /* 0: freed_mib is null */
    int64_t sr_freed_mib; /* free VRAM at the end of the wait minus before it */
    int sr_seconds_known; /* 0: seconds is null */
    double sr_seconds;    /* from the POST to the end of the wait */
};

/* A predicted trigger's judgement (SPEC "Acting before starvation"). */
struct store_prediction {
    int sp_slope_known; /* 0: slope_mib_s is null (no over-budget pod's growth known) */
    double sp_slope_mib_s; /* the victim's sustained growth (else the fastest eligible
                              pod's) */
    int sp_eta_known;      /* 0: eta_s is null (the trend never crosses the floor) */
    double sp_eta_s;       /* seconds until the projected crossing of the floor */
    double sp_horizon_s;   /* PREDICT_HORIZON */
};

/* One decision, as SPEC §"A decision" describes it. Everything borrowed. */
struct store_decision {
    int64_t sd_time_ms;         /* decision start, unix ms */
    const char *sd_node;        /* "" when the nodes could not be listed */
    const char *sd_trigger;     /* the alertname */
    const char *sd_fingerprint; /* of the trigger alert; may be NULL/"" */
    const char *sd_result;      /* SPEC result word */
    const char *sd_reason;      /* one sentence */
    int sd_free_known;          /* 0: free_mib is null */
    int64_t sd_free_mib;
    int64_t sd_floor_mib;
    int sd_dry_run;
    const char *sd_action;                /* "evict" | "delete" | "none"; NULL = "none" */
    const struct store_victim *sd_victim; /* NULL = none */
    const struct store_candidate *sd_candidates;
    size_t sd_candidate_count;
    const char *sd_error; /* NULL = none */
    int sd_verified;      /* 0: verify is null */
    int64_t sd_verify_free_mib;
    double sd_verify_seconds;
    int64_t sd_alert_id;      /* the alert row that triggered it; 0 = none */
    int sd_verify_pending;    /* written only: the recycle is done, its verify runs */
    int sd_candidates_stored; /* store_decision_finish(): the row already holds exactly
                                 these candidates, so they are not encoded again */
    const char *sd_gpu;       /* the GPU's label value (GPU scope); NULL in node scope */
    const char *sd_free_source; /* "device", "computed", "query"; NULL when nothing was
                                   read (and for rows older than schema 3) */
    const struct store_release *sd_release;       /* NULL = no release was asked */
    const struct store_prediction *sd_prediction; /* NULL = not a predicted decision
                                   (and rows older than schema 4) */
    const char *const *sd_budget_sources;         /* NULL, or one per candidate: where its
                                           budget comes from ("resource", "hami", "kai", "dra";
                                           NULL = none: the member is left out) */
    const char *sd_victim_budget_source;          /* the victim's, the same way */
    const char *sd_replica; /* HA: POD_NAME of the replica that took it; NULL without
                               leader election (and rows older than schema 5) */
};

/* Inserts d with result "in_progress" (whatever sd_result says) and no
 * error, and returns its id. Its own transaction unless inside store_begin(). */
int store_decision_start(struct store *s, const struct store_decision *d, int64_t *id_out,
                         char *err, size_t errlen);
/* Overwrites row id with everything in d. -1 if no such row. */
int store_decision_finish(struct store *s, int64_t id, const struct store_decision *d,
                          char *err, size_t errlen);
/* Records a complete decision in one step (coalesced, rate_limited). */
int store_decision_record(struct store *s, const struct store_decision *d,
                          int64_t *id_out, char *err, size_t errlen);

/* Deletes decisions and alerts older than cutoff_ms (unix ms), in one
 * transaction (a savepoint inside store_begin()). Returns rows deleted or -1. */
int64_t store_prune(struct store *s, int64_t cutoff_ms, char *err, size_t errlen);

/*
 * Queries (the audit CLI). Rows are handed to a callback one at a time,
 * newest first; everything the callback sees is borrowed and valid only
 * during the call. A callback returns 0 to go on, -1 to stop: the query then
 * returns -1 with "stopped by the caller" in err.
 */

/* Which rows. Zero / NULL fields do not filter. */
struct store_filter {
    int64_t sf_since_ms;      /* rows at or after this unix ms; 0 = all */
    const char *sf_node;      /* decision node equals */
    const char *sf_namespace; /* decision victim's namespace equals */
    const char *sf_result;    /* decision result equals */
    const char *sf_gpu;       /* decision GPU equals (never matches node scope) */
    int64_t sf_limit;         /* at most this many rows; 0 = no limit */
};

typedef int (*store_decision_fn)(int64_t id, const struct store_decision *d, void *arg);

/* A row a query cannot read (a value of the wrong type, a JSON column that
 * does not parse: a file edited or damaged by hand) is skipped, never the
 * end of the listing; this is told, with the table ("decisions" or
 * "alerts"), the row's id and one phrase saying why. Without a handler the
 * store logs a warning. arg is borrowed. */
typedef void (*store_unreadable_fn)(const char *table, int64_t id, const char *why,
                                    void *arg);
void store_on_unreadable(struct store *s, store_unreadable_fn cb, void *arg);
typedef int (*store_alert_fn)(int64_t id, const struct store_alert *a, void *arg);

/* One line of a summary. by "result": key is the result, ss_result NULL.
 * by "namespace": key is the victim's namespace, ss_result the result of the
 * decisions that chose a victim there. */
struct store_stat {
    const char *ss_by; /* "result" | "namespace" */
    const char *ss_key;
    const char *ss_result; /* NULL for by "result" */
    int64_t ss_count;
};
typedef int (*store_stat_fn)(const struct store_stat *st, void *arg);

/* Decisions matching f, newest first (time, then id). Returns rows seen or -1. */
int64_t store_query_decisions(struct store *s, const struct store_filter *f,
                              store_decision_fn cb, void *arg, char *err, size_t errlen);
/* Decision id: 1 (cb called once), 0 when there is no such row, -1 on error. */
int store_get_decision(struct store *s, int64_t id, store_decision_fn cb, void *arg,
                       char *err, size_t errlen);
/* Alerts received at or after sf_since_ms, newest first, at most sf_limit.
 * Only sf_since_ms and sf_limit apply. Returns rows seen or -1. */
int64_t store_query_alerts(struct store *s, const struct store_filter *f,
                           store_alert_fn cb, void *arg, char *err, size_t errlen);
/* Counts of the decisions store_query_decisions() would list for f (so with
 * sf_limit 0, every matching decision): first by result (most frequent
 * first), then by victim namespace and result (namespace order). Returns
 * lines seen or -1. */
int64_t store_query_stats(struct store *s, const struct store_filter *f, store_stat_fn cb,
                          void *arg, char *err, size_t errlen);

#endif
