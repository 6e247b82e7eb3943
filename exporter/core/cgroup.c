/* cgroup.c -- which pod and container a process belongs to, from its /proc/PID/cgroup */
#include "cgroup.h"

#include <string.h>

static int
is_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* A pod UID: lower-case hex and dashes (underscores in systemd names already
 * turned back into dashes), 8..63 characters, starting and ending in hex. */
static int
copy_uid(const char *s, size_t len, int underscores, struct cgroup_id *out)
{
    if (len < 8 || len >= CGROUP_UID_MAX)
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (underscores && c == '_')
            c = '-';
        if (!is_hex(c) && c != '-')
            return 0;
        if ((i == 0 || i == len - 1) && !is_hex(c))
            return 0;
        out->cg_pod_uid[i] = c;
    }
    out->cg_pod_uid[len] = '\0';
    return 1;
}

/* A container ID: 12..129 lower-case hex characters. */
static int
copy_cid(const char *s, size_t len, struct cgroup_id *out)
{
    if (len < 12 || len >= CGROUP_CID_MAX)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!is_hex(s[i]))
            return 0;
    memcpy(out->cg_container_id, s, len);
    out->cg_container_id[len] = '\0';
    return 1;
}

static int
has_prefix(const char *s, size_t len, const char *p)
{
    size_t n = strlen(p);
    return len >= n && memcmp(s, p, n) == 0;
}

static int
has_suffix(const char *s, size_t len, const char *x)
{
    size_t n = strlen(x);
    return len >= n && memcmp(s + len - n, x, n) == 0;
}

/* The pod's own cgroup: "pod<uid>" (cgroupfs) or "kubepods[-qos]-pod<uid_>.slice"
 * (systemd). 1 when comp is one, with the UID stored. */
static int
pod_component(const char *c, size_t len, struct cgroup_id *out)
{
    if (has_prefix(c, len, "kubepods") && has_suffix(c, len, ".slice")) {
        const char *p = NULL;
        for (size_t i = 0; i + 4 <= len; i++) /* the last "-pod" */
            if (memcmp(c + i, "-pod", 4) == 0)
                p = c + i + 4;
        if (p == NULL)
            return 0;
        return copy_uid(p, (size_t)(c + len - 6 - p), 1, out);
    }
    if (has_prefix(c, len, "pod"))
        return copy_uid(c + 3, len - 3, 0, out);
    return 0;
}

/* A container's cgroup below its pod: "<id>" or "crio-<id>" (cgroupfs),
 * "cri-containerd-<id>.scope", "crio-<id>.scope", "docker-<id>.scope" (systemd). 1 when
 * comp is one. */
static int
container_component(const char *c, size_t len, struct cgroup_id *out)
{
    static const char *const prefixes[] = {"cri-containerd-", "crio-", "docker-",
                                           "containerd-"};

    if (has_suffix(c, len, ".scope")) {
        for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
            size_t n = strlen(prefixes[i]);
            if (has_prefix(c, len, prefixes[i]))
                return copy_cid(c + n, len - n - 6, out);
        }
        return 0; /* crio-conmon-<id>.scope and the like: not the container */
    }
    /* CRI-O's cgroupfs manager names the container's cgroup "crio-<id>"
     * (its conmon "crio-conmon-<id>": copy_cid refuses it, not hex). */
    if (has_prefix(c, len, "crio-"))
        return copy_cid(c + 5, len - 5, out);
    return copy_cid(c, len, out);
}

int
cgroup_parse_line(const char *line, size_t len, struct cgroup_id *out)
{
    const char *c1, *c2, *path, *end = line + len, *p;
    int have_pod = 0;

    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
        end = line + --len;
    if ((c1 = memchr(line, ':', len)) == NULL || c1 == line)
        return -1;
    for (p = line; p < c1; p++)
        if (*p < '0' || *p > '9')
            return -1;
    if ((c2 = memchr(c1 + 1, ':', (size_t)(end - c1 - 1))) == NULL)
        return -1;
    path = c2 + 1;
    if (path >= end || *path != '/')
        return -1;
    memset(out, 0, sizeof(*out));
    /* Walk the components; the one right after the pod's names the container. */
    for (p = path; p < end;) {
        const char *q = p, *colon;
        size_t n;

        while (q < end && *q != '/')
            q++;
        n = (size_t)(q - p);
        /* containerd with systemd on v1:
         * "kubepods-...-pod<uid>.slice:cri-containerd:<id>" */
        if (n > 0 && !have_pod && (colon = memchr(p, ':', n)) != NULL) {
            const char *last = p + n;
            while (last > colon && last[-1] != ':')
                last--;
            if (pod_component(p, (size_t)(colon - p), out))
                return copy_cid(last, (size_t)(p + n - last), out)
                           ? 1
                           : (out->cg_container_id[0] = '\0', 1);
        }
        if (n > 0) {
            if (!have_pod)
                have_pod = pod_component(p, n, out);
            else
                return container_component(p, n, out)
                           ? 1
                           : (out->cg_container_id[0] = '\0', 1);
        }
        p = q + 1;
    }
    return have_pod ? 1 : 0;
}

int
cgroup_parse_file(const char *text, size_t len, struct cgroup_id *out)
{
    const char *p = text, *end = text + len;

    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (n > 0 && cgroup_parse_line(p, n, out) == 1)
            return 1;
        p += n + 1;
    }
    memset(out, 0, sizeof(*out));
    return 0;
}
