/* test_cgroup.c -- the cgroup line parser over every kubelet layout, and malformed lines
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "cgroup.h"

#define UID "0b3c7f52-1d5e-4a58-9c1e-2f4b7d8e9a01"
#define UIDU "0b3c7f52_1d5e_4a58_9c1e_2f4b7d8e9a01"
#define CID "4f9a0c2b7e1d3a5c6b8e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e"

struct row {
    const char *r_line;
    int r_rc;          /* cgroup_parse_line's answer */
    const char *r_uid; /* when 1 */
    const char *r_cid;
};

static const struct row rows[] = {
    /* cgroup v2, systemd driver: containerd, CRI-O, Docker; each QoS class */
    {"0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UIDU
     ".slice/cri-containerd-" CID ".scope",
     1, UID, CID},
    {"0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UIDU
     ".slice/crio-" CID ".scope",
     1, UID, CID},
    {"0::/kubepods.slice/kubepods-pod" UIDU ".slice/docker-" CID ".scope", 1, UID, CID},
    /* seen from an exporter in its own cgroup namespace (hostPID, private
     * cgroupns): paths are relative to its root and climb with .. */
    {"0::/../../kubepods-burstable-pod" UIDU ".slice/cri-containerd-" CID ".scope", 1,
     UID, CID},
    {"0::/../besteffort/pod" UID "/" CID, 1, UID, CID},
    /* cgroup v1, cgroupfs driver: with and without a QoS level */
    {"11:memory:/kubepods/besteffort/pod" UID "/" CID, 1, UID, CID},
    {"4:cpu,cpuacct:/kubepods/burstable/pod" UID "/" CID, 1, UID, CID},
    {"7:devices:/kubepods/pod" UID "/" CID, 1, UID, CID},
    /* CRI-O with the cgroupfs driver: "crio-<id>", no .scope; conmon beside it */
    {"0::/kubepods/burstable/pod" UID "/crio-" CID, 1, UID, CID},
    {"10:memory:/kubepods/pod" UID "/crio-" CID, 1, UID, CID},
    {"0::/kubepods/besteffort/pod" UID "/crio-conmon-" CID, 1, UID, ""},
    /* v1 systemd with containerd's "slice:prefix:id" */
    {"3:pids:/system.slice/containerd.service/kubepods-burstable-pod" UIDU
     ".slice:cri-containerd:" CID,
     1, UID, CID},
    /* v2 cgroupfs, a nested sub-cgroup inside the container */
    {"0::/kubepods/burstable/pod" UID "/" CID "/init", 1, UID, CID},
    /* the pod's own cgroup, or conmon: the pod without a container */
    {"0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UIDU ".slice",
     1, UID, ""},
    {"0::/kubepods.slice/kubepods-pod" UIDU ".slice/crio-conmon-" CID ".scope", 1, UID,
     ""},
    /* trailing newline tolerated */
    {"0::/kubepods/pod" UID "/" CID "\n", 1, UID, CID},
    /* well-formed, no pod */
    {"0::/", 0, NULL, NULL},
    {"0::/system.slice/ollama.service", 0, NULL, NULL},
    {"1:name=systemd:/user.slice/user-1000.slice/session-2.scope", 0, NULL, NULL},
    {"0::/kubepods.slice/kubepods-burstable.slice", 0, NULL, NULL},
    {"0::/kubepods/besteffort/podXYZ/" CID, 0, NULL, NULL},   /* not a UID */
    {"0::/kubepods.slice/kubepods-pod.slice", 0, NULL, NULL}, /* empty UID */
    /* malformed */
    {"", -1, NULL, NULL},
    {"garbage", -1, NULL, NULL},
    {"0:/kubepods/pod" UID, -1, NULL, NULL},       /* one colon */
    {"x::/kubepods/pod" UID, -1, NULL, NULL},      /* hierarchy not a number */
    {":memory:/kubepods/pod" UID, -1, NULL, NULL}, /* no hierarchy */
    {"0::kubepods/pod" UID, -1, NULL, NULL},       /* path not absolute */
    {"0::", -1, NULL, NULL},                       /* no path */
};

static void
test_table(void **state)
{
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct cgroup_id id;
        int rc = cgroup_parse_line(rows[i].r_line, strlen(rows[i].r_line), &id);
        if (rc != rows[i].r_rc)
            fail_msg("row %zu (%s): got %d, want %d", i, rows[i].r_line, rc,
                     rows[i].r_rc);
        if (rc == 1) {
            assert_string_equal(id.cg_pod_uid, rows[i].r_uid);
            assert_string_equal(id.cg_container_id, rows[i].r_cid);
        }
    }
}

static void
test_file_v1(void **state)
{
    const char *text = "13:misc:/\n"
                       "12:garbage\n"
                       "11:memory:/kubepods/burstable/pod" UID "/" CID "\n"
                       "0::/\n";
    struct cgroup_id id;

    assert_int_equal(cgroup_parse_file(text, strlen(text), &id), 1);
    assert_string_equal(id.cg_pod_uid, UID);
    assert_string_equal(id.cg_container_id, CID);
}

static void
test_file_without_pod(void **state)
{
    const char *text = "0::/system.slice/sshd.service\n\nnot a line\n";
    struct cgroup_id id;

    assert_int_equal(cgroup_parse_file(text, strlen(text), &id), 0);
    assert_int_equal(cgroup_parse_file("", 0, &id), 0);
}

static void
test_long_values_refused(void **state)
{
    char line[1024];
    struct cgroup_id id;

    /* A "UID" longer than any real one is not a pod. */
    snprintf(line, sizeof(line), "0::/kubepods/pod%s%s%s/%s", UID, UID, UID, CID);
    assert_int_equal(cgroup_parse_line(line, strlen(line), &id), 0);
    /* A container ID longer than the buffer: the pod, without a container. */
    snprintf(line, sizeof(line), "0::/kubepods/pod%s/%s%s%s", UID, CID, CID, CID);
    assert_int_equal(cgroup_parse_line(line, strlen(line), &id), 1);
    assert_string_equal(id.cg_container_id, "");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_file_v1),
        cmocka_unit_test(test_file_without_pod),
        cmocka_unit_test(test_long_values_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
