/* procfs.c -- reads PROC_ROOT/PID/cgroup for the processes NVML lists */
#include "procfs.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CGROUP_FILE_MAX 16384 /* v1 lists ~15 short lines; more is not a cgroup file */

void
procfs_pid_cgroup(const char *root, uint32_t pid, struct attr_pid *out)
{
    char path[4096], text[CGROUP_FILE_MAX];
    size_t len = 0;
    ssize_t n;
    int fd, w;

    memset(out, 0, sizeof(*out));
    out->ap_pid = pid;
    w = snprintf(path, sizeof(path), "%s/%u/cgroup", root, (unsigned)pid);
    if (w < 0 || (size_t)w >= sizeof(path) ||
        (fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
        return;
    while (len < sizeof(text) && (n = read(fd, text + len, sizeof(text) - len)) > 0)
        len += (size_t)n;
    close(fd);
    out->ap_found = cgroup_parse_file(text, len, &out->ap_id) == 1;
}
