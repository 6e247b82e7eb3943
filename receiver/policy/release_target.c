/* release_target.c -- the tenant's RELEASE_ANNOTATION ("PORT/PATH") read into a URL
 * that can only name the pod itself. Pure: no I/O. */
#include "release_target.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

/* A byte for a message: itself when printable, else \xNN. */
static void
shown(unsigned char c, char out[8])
{
    if (c > 0x20 && c < 0x7f && c != '\'' && c != '\\')
        snprintf(out, 8, "%c", c);
    else
        snprintf(out, 8, "\\x%02x", c);
}

/* RFC 3986 pchar without pct-encoded and '@': unreserved, sub-delims, ':'. */
static int
path_char(unsigned char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
        return 1;
    return c != '\0' && strchr("-._~!$&'()*+,;=:/", c) != NULL;
}

/* The first byte that rules the whole value out, judged in an order that
 * names the likeliest mistake first. 0 when none. */
static int
check_bytes(const char *v, size_t len, char *err, size_t errlen)
{
    char b[8];

    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)v[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') {
            snprintf(err, errlen, "it contains whitespace");
            return -1;
        }
        if (c < 0x20 || c == 0x7f) {
            shown(c, b);
            snprintf(err, errlen, "it contains a control character (%s)", b);
            return -1;
        }
        if (c >= 0x80) {
            snprintf(err, errlen, "it contains a non-ASCII byte");
            return -1;
        }
    }
    if (strstr(v, "://") != NULL) {
        snprintf(err, errlen, "it names a scheme; give only PORT/PATH");
        return -1;
    }
    if (strchr(v, '@') != NULL) {
        snprintf(err, errlen, "it contains '@' (userinfo or a host)");
        return -1;
    }
    return 0;
}

static int
parse_port(const char *v, unsigned *port, size_t *used, char *err, size_t errlen)
{
    unsigned long n = 0;
    size_t i = 0;
    char b[8];

    while (v[i] >= '0' && v[i] <= '9') {
        if (i >= 5) {
            snprintf(err, errlen, "the port has more than 5 digits");
            return -1;
        }
        n = n * 10 + (unsigned long)(v[i] - '0');
        i++;
    }
    if (i == 0) {
        snprintf(err, errlen, "it does not start with a port (PORT/PATH)");
        return -1;
    }
    if (v[0] == '0') {
        snprintf(err, errlen,
                 i == 1 ? "port 0 is out of range (1-65535)"
                        : "the port has a leading zero");
        return -1;
    }
    if (n > 65535) {
        snprintf(err, errlen, "port %lu is out of range (1-65535)", n);
        return -1;
    }
    if (v[i] != '/') {
        if (v[i] == '\0') {
            snprintf(err, errlen, "it has no path after the port (PORT/PATH)");
        } else {
            shown((unsigned char)v[i], b);
            snprintf(err, errlen,
                     "after the port comes '%s', not '/' (a host is not allowed)", b);
        }
        return -1;
    }
    *port = (unsigned)n;
    *used = i;
    return 0;
}

static int
check_path(const char *p, char *err, size_t errlen)
{
    char b[8];

    if (strstr(p, "..") != NULL) {
        snprintf(err, errlen, "the path contains '..'");
        return -1;
    }
    if (strstr(p, "//") != NULL) {
        snprintf(err, errlen, "the path contains an empty segment ('//')");
        return -1;
    }
    for (const unsigned char *c = (const unsigned char *)p; *c; c++) {
        if (*c == '\\') {
            snprintf(err, errlen, "the path contains a backslash");
            return -1;
        }
        if (*c == '%') {
            snprintf(err, errlen, "the path contains a percent-escape");
            return -1;
        }
        if (*c == '?' || *c == '#') {
            snprintf(err, errlen, "the path contains a query or fragment ('%c')", *c);
            return -1;
        }
        if (!path_char(*c)) {
            shown(*c, b);
            snprintf(err, errlen, "the path contains '%s', which a path may not hold", b);
            return -1;
        }
    }
    return 0;
}

int
release_annotation_parse(const char *value, struct release_target *out, char *err,
                         size_t errlen)
{
    char why[160];
    size_t len, used = 0;

    memset(out, 0, sizeof(*out));
    if (value == NULL || value[0] == '\0') {
        snprintf(why, sizeof(why), "it is empty");
        goto fail;
    }
    len = strlen(value);
    if (len > RELEASE_ANNOTATION_MAX) {
        snprintf(why, sizeof(why), "it is longer than %d bytes", RELEASE_ANNOTATION_MAX);
        goto fail;
    }
    if (check_bytes(value, len, why, sizeof(why)) == -1 ||
        parse_port(value, &out->rt_port, &used, why, sizeof(why)) == -1 ||
        check_path(value + used, why, sizeof(why)) == -1)
        goto fail;
    memcpy(out->rt_path, value + used, len - used + 1);
    return 0;
fail:
    memset(out, 0, sizeof(*out));
    if (err != NULL && errlen > 0)
        snprintf(err, errlen, "%s", why);
    return -1;
}

int
release_url(const char *pod_ip, const struct release_target *t, char *out, size_t outlen,
            char *err, size_t errlen)
{
    unsigned char addr[16];
    int n;

    if (pod_ip == NULL || pod_ip[0] == '\0') {
        snprintf(err, errlen, "the pod has no IP");
        return -1;
    }
    if (inet_pton(AF_INET, pod_ip, addr) == 1)
        n = snprintf(out, outlen, "http://%s:%u%s", pod_ip, t->rt_port, t->rt_path);
    else if (inet_pton(AF_INET6, pod_ip, addr) == 1)
        n = snprintf(out, outlen, "http://[%s]:%u%s", pod_ip, t->rt_port, t->rt_path);
    else {
        snprintf(err, errlen, "the pod's IP is not an IP address");
        return -1;
    }
    if (n < 0 || (size_t)n >= outlen) { /* can't happen with RELEASE_URL_MAX */
        snprintf(err, errlen, "the release URL is too long");
        return -1;
    }
    return 0;
}
