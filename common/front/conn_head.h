/* conn_head.h -- parses a complete request head for the guard's checks (no I/O) */
#ifndef GVW_CONN_HEAD_H
#define GVW_CONN_HEAD_H

#include <stddef.h>
#include <stdint.h>

/* A complete request head, borrowed for the call. */
struct guard_head {
    const char *gh_method; /* not NUL-terminated: use the lengths */
    size_t gh_method_len;
    const char *gh_path; /* the target's path, without query or scheme://host */
    size_t gh_path_len;
    const char *gh_auth; /* first Authorization value, trimmed; NULL if absent */
    size_t gh_auth_len;
    int64_t gh_content_length; /* -1 when absent */
};

/*
 * Parses the head in buf[0..len) (request line, header lines, the empty
 * line; CRLF or bare LF). gh points into buf. Returns 0, or the status to
 * refuse it with (400, or 411 for Transfer-Encoding) and a reason in *why.
 * Two Content-Length headers that differ are a 400; identical ones count
 * as one.
 */
int conn_head_parse(const char *buf, size_t len, struct guard_head *gh, const char **why);

#endif
