/* jsonpatch.h -- RFC 6902 JSON Patch (RFC 6901 pointers) on jansson documents */
#ifndef GVW_SIM_JSONPATCH_H
#define GVW_SIM_JSONPATCH_H

#include <stddef.h>

#include <jansson.h>

/* Why a patch failed, mapped by the caller onto the API server's answers. */
enum jsonpatch_error {
    JP_OK = 0,
    JP_BAD_PATCH = -1, /* not a patch document (400 BadRequest) */
    JP_NOT_APPLIED =
        -2, /* a well-formed op that does not apply: missing path, failed test (422) */
};

/*
 * Applies patch (an array of operations: add, remove, replace, test, move,
 * copy) to *doc. On failure *doc may be half-patched, so pass a copy. Returns
 * JP_OK, or an error with a reason in err.
 */
int jsonpatch_apply(json_t *doc, const json_t *patch, char *err, size_t errlen);

#endif
