/* suggest_owner.c -- which workload (controller) a pod belongs to, live or gone (no I/O)
 */
#include "suggest_owner.h"

#include <stdio.h>
#include <string.h>

int
sg_workload_of(const char *owner_kind, const char *owner_name, const char *hash,
               const char **kind, char *out, size_t cap)
{
    size_t n, h;

    if (owner_kind == NULL || owner_name == NULL || owner_name[0] == '\0' ||
        strcmp(owner_kind, "Node") == 0)
        return -1;
    n = strlen(owner_name);
    if (strcmp(owner_kind, "ReplicaSet") == 0 && hash != NULL && (h = strlen(hash)) > 0 &&
        n > h + 1 && owner_name[n - h - 1] == '-' &&
        strcmp(owner_name + n - h, hash) == 0) {
        *kind = "Deployment";
        n -= h + 1;
    } else {
        *kind = owner_kind;
    }
    if (n >= cap)
        return -1;
    memcpy(out, owner_name, n);
    out[n] = '\0';
    return 0;
}

/* s is 1..max characters of [a-z0-9] up to its end or a '-'; returns the
 * length, 0 when not. */
static size_t
alnum_run(const char *s, size_t max)
{
    size_t i = 0;

    while ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9'))
        i++;
    return i >= 1 && i <= max ? i : 0;
}

int
sg_name_matches(const char *kind, const char *name, const char *pod)
{
    size_t n = strlen(name), i;
    const char *rest;

    if (kind == NULL || strncmp(pod, name, n) != 0 || pod[n] != '-')
        return 0;
    rest = pod + n + 1;
    if (strcmp(kind, "Deployment") == 0) {
        if ((i = alnum_run(rest, 10)) == 0 || rest[i] != '-')
            return 0;
        rest += i + 1;
        return alnum_run(rest, 5) == 5 && rest[5] == '\0';
    }
    if (strcmp(kind, "StatefulSet") == 0) {
        for (i = 0; rest[i] >= '0' && rest[i] <= '9'; i++)
            ;
        return i > 0 && rest[i] == '\0' && (i == 1 || rest[0] != '0');
    }
    if (strcmp(kind, "DaemonSet") == 0 || strcmp(kind, "ReplicaSet") == 0 ||
        strcmp(kind, "Job") == 0)
        return alnum_run(rest, 5) == 5 && rest[5] == '\0';
    return 0;
}
