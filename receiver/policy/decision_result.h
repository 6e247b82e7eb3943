/* decision_result.h -- the decision results (SPEC's words), one enum and one name table
 * (no I/O) */
#ifndef GVW_DECISION_RESULT_H
#define GVW_DECISION_RESULT_H

/* In SPEC's order; the names are what the store, the metrics, the audit, the
 * page and the log show. in_progress is a row's result until it finishes. */
enum decision_result {
    RESULT_RECYCLED,
    RESULT_RELEASED,
    RESULT_WOULD_RECYCLE,
    RESULT_SKIPPED_RECOVERED,
    RESULT_SKIPPED_NO_CANDIDATE,
    RESULT_SKIPPED_TELEMETRY,
    RESULT_SKIPPED_KUBE,
    RESULT_BLOCKED,
    RESULT_RATE_LIMITED,
    RESULT_COALESCED,
    RESULT_FAILED,
    RESULT_IN_PROGRESS,
    RESULT_COUNT /* not a result: the number of them */
};

/* The word for r (static storage); "failed" for a value out of range (can't happen). */
const char *decision_result_name(enum decision_result r);

/* 0 and *out when word is one of the names; -1 otherwise. */
int decision_result_parse(const char *word, enum decision_result *out);

#endif
