/* decision_result.c -- the decision results' one name table (no I/O: the core, the store
 * and the rest use it) */
#include "decision_result.h"

#include <string.h>

static const char *const names[RESULT_COUNT] = {
    [RESULT_RECYCLED] = "recycled",
    [RESULT_RELEASED] = "released",
    [RESULT_WOULD_RECYCLE] = "would_recycle",
    [RESULT_SKIPPED_RECOVERED] = "skipped_recovered",
    [RESULT_SKIPPED_NO_CANDIDATE] = "skipped_no_candidate",
    [RESULT_SKIPPED_TELEMETRY] = "skipped_telemetry",
    [RESULT_SKIPPED_KUBE] = "skipped_kube",
    [RESULT_BLOCKED] = "blocked",
    [RESULT_RATE_LIMITED] = "rate_limited",
    [RESULT_COALESCED] = "coalesced",
    [RESULT_FAILED] = "failed",
    [RESULT_IN_PROGRESS] = "in_progress",
};

const char *
decision_result_name(enum decision_result r)
{
    if ((unsigned)r >= RESULT_COUNT)
        return names[RESULT_FAILED]; /* can't happen: every caller passes an enum */
    return names[r];
}

int
decision_result_parse(const char *word, enum decision_result *out)
{
    for (int i = 0; i < RESULT_COUNT; i++) {
        if (strcmp(word, names[i]) == 0) {
            *out = (enum decision_result)i;
            return 0;
        }
    }
    return -1;
}
