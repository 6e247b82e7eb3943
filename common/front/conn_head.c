/* conn_head.c -- parses a complete request head for the guard's checks (no I/O) */
#include "conn_head.h"

#include <string.h>

static int
lower_eq(const char *a, size_t alen, const char *lit)
{
    size_t n = strlen(lit);

    if (alen != n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = a[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c != lit[i])
            return 0;
    }
    return 1;
}

static int
tchar(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* The next line of [p, end): its length without the CRLF or LF; *next after it. */
static size_t
line_at(const char *p, const char *end, const char **next)
{
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t len;

    if (nl == NULL) {
        *next = end;
        return (size_t)(end - p);
    }
    *next = nl + 1;
    len = (size_t)(nl - p);
    if (len > 0 && p[len - 1] == '\r')
        len--;
    return len;
}

/* The path of a request target: origin form, or absolute form's after scheme://host. */
static void
target_path(const char *t, size_t len, const char **path, size_t *plen)
{
    const char *end = t + len, *p = t;

    if (len > 0 && t[0] != '/') {
        const char *sep = len >= 3 ? memchr(t, ':', len) : NULL;
        if (sep != NULL && end - sep >= 3 && sep[1] == '/' && sep[2] == '/') {
            p = sep + 3;
            while (p < end && *p != '/' && *p != '?' && *p != '#')
                p++;
        }
    }
    *path = p;
    while (p < end && *p != '?' && *p != '#')
        p++;
    *plen = (size_t)(p - *path);
}

/* Strict decimal: digits only, no sign, no more than 18 of them. */
static int
parse_length(const char *v, size_t len, int64_t *out)
{
    int64_t n = 0;

    if (len == 0 || len > 18)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (v[i] < '0' || v[i] > '9')
            return -1;
        n = n * 10 + (v[i] - '0');
    }
    *out = n;
    return 0;
}

int
conn_head_parse(const char *buf, size_t len, struct guard_head *gh, const char **why)
{
    const char *end = buf + len, *p = buf, *next, *sp1, *sp2;
    size_t n = line_at(p, end, &next);
    int te = 0;

    memset(gh, 0, sizeof(*gh));
    gh->gh_content_length = -1;
    /* Request line: METHOD SP target SP HTTP/x.y */
    sp1 = memchr(p, ' ', n);
    sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(p + n - sp1 - 1)) : NULL;
    if (sp1 == NULL || sp2 == NULL || sp1 == p || sp2 == sp1 + 1 ||
        (size_t)(p + n - sp2 - 1) < 8 || memcmp(sp2 + 1, "HTTP/", 5) != 0) {
        *why = "malformed request line";
        return 400;
    }
    for (const char *c = p; c < sp1; c++) {
        if (!tchar(*c)) {
            *why = "malformed request line";
            return 400;
        }
    }
    gh->gh_method = p;
    gh->gh_method_len = (size_t)(sp1 - p);
    target_path(sp1 + 1, (size_t)(sp2 - sp1 - 1), &gh->gh_path, &gh->gh_path_len);

    for (p = next; p < end; p = next) {
        const char *colon, *v, *ve;

        n = line_at(p, end, &next);
        if (n == 0)
            break; /* the empty line that ends the head */
        if (p[0] == ' ' || p[0] == '\t') {
            *why = "obsolete header line folding is not accepted";
            return 400;
        }
        colon = memchr(p, ':', n);
        if (colon == NULL || colon == p) {
            *why = "malformed header line";
            return 400;
        }
        for (const char *c = p; c < colon; c++) {
            if (!tchar(*c)) { /* whitespace before the colon included (RFC 9112) */
                *why = "malformed header line";
                return 400;
            }
        }
        v = colon + 1;
        ve = p + n;
        while (v < ve && (*v == ' ' || *v == '\t'))
            v++;
        while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
            ve--;
        if (lower_eq(p, (size_t)(colon - p), "content-length")) {
            int64_t cl;
            if (parse_length(v, (size_t)(ve - v), &cl) == -1) {
                *why = "bad Content-Length";
                return 400;
            }
            /* Two that differ would let a proxy and us frame the body differently. */
            if (gh->gh_content_length >= 0 && gh->gh_content_length != cl) {
                *why = "two Content-Length headers that differ";
                return 400;
            }
            gh->gh_content_length = cl;
        } else if (lower_eq(p, (size_t)(colon - p), "transfer-encoding")) {
            te = 1;
        } else if (lower_eq(p, (size_t)(colon - p), "authorization") &&
                   gh->gh_auth == NULL) {
            gh->gh_auth = v;
            gh->gh_auth_len = (size_t)(ve - v);
        }
    }
    if (te && gh->gh_content_length >= 0) {
        *why = "both Transfer-Encoding and Content-Length";
        return 400;
    }
    if (te) {
        *why =
            "a request body needs a Content-Length (Transfer-Encoding is not accepted)";
        return 411;
    }
    return 0;
}
