/* release_target.h -- the tenant's RELEASE_ANNOTATION ("PORT/PATH") read into a URL
 * that can only name the pod itself. Pure: no I/O. */
#ifndef GVW_RELEASE_TARGET_H
#define GVW_RELEASE_TARGET_H

#include <stddef.h>

/* The longest annotation value accepted, in bytes. */
#define RELEASE_ANNOTATION_MAX 256
/* Room for "http://[IPv6]:65535" and the longest path, with the terminator. */
#define RELEASE_URL_MAX (RELEASE_ANNOTATION_MAX + 64)

struct release_target {
    unsigned rt_port;                         /* 1..65535 */
    char rt_path[RELEASE_ANNOTATION_MAX + 2]; /* starts with '/' */
};

/*
 * Reads an annotation value "PORT/PATH" (for example "8080/unload" or
 * "8080/api/models/unload"). The value is tenant-controlled, so only a
 * decimal port (1-65535, no sign, no leading zero) and a path are accepted:
 * no scheme, host, userinfo ('@'), whitespace, control or non-ASCII bytes,
 * backslash, percent-escape, query or fragment, no ".." anywhere, no empty
 * segment ("//"), at most RELEASE_ANNOTATION_MAX bytes, and only the
 * characters RFC 3986 allows in a path. Returns 0 and fills out, or -1 with
 * one sentence in err ("port 0 is out of range (1-65535)", ...), quoting at
 * most the offending byte, escaped.
 */
int release_annotation_parse(const char *value, struct release_target *out, char *err,
                             size_t errlen);

/*
 * "http://IP:PORT/PATH" into out, IP being the pod's own status.podIP, which
 * must be an IPv4 or IPv6 literal (IPv6 goes in brackets); anything else
 * (a host name, an empty string) is -1 with a reason in err.
 */
int release_url(const char *pod_ip, const struct release_target *t, char *out,
                size_t outlen, char *err, size_t errlen);

#endif
