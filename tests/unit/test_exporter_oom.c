/* test_exporter_oom.c -- every allocation of the exporter's core fails once: clean
 * errors, nothing half-built, no leaks */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/oom.h"
#include "lib/testdata.h"

#include "attribute.h"
#include "cgroup.h"
#include "expo_render.h"
#include "nvml.h"
#include "podlist.h"

/*
 * The link redirects malloc, calloc, realloc and strdup of this program's own
 * objects (the test and the static libraries gvw_exporter_core, gvw_json,
 * gvw_expo, gvw_util) to tests/lib/oom.c. The exporter's core
 * allocates through nothing else: jscan reads in place (js_strdup is a
 * malloc), buf grows with realloc, no jansson. NVML's stub is a shared
 * library, so its own allocations are not counted. When armed, allocation
 * number N (counting from 0) returns NULL.
 */

/* ---- the pod list ---- */

/* Escaped strings (decoded into a fresh copy), init containers, a container
 * not started yet, a null status: every allocating path of the reader. */
static const char pods_inline[] =
    "{\"kind\":\"PodList\",\"items\":["
    "{\"metadata\":{\"uid\":\"0a1b2c3d-0000-4000-8000-000000000001\",\"namespace\":\"m\\u006c\","
    "\"name\":\"llm-\\\"0\\\"\"},\"status\":{\"initContainerStatuses\":[{\"name\":\"fetch\","
    "\"containerID\":\"cri-o://aaaaaaaaaaaaaaaaaaaaaaaa\"}],\"containerStatuses\":["
    "{\"name\":\"server\",\"containerID\":\"containerd://bbbbbbbbbbbbbbbbbbbbbbbb\"},"
    "{\"name\":\"waiting\"},{\"containerID\":\"docker://cccccccccccccccccccccccc\","
    "\"name\":\"side\\/car\"}]}},"
    "{\"status\":null,\"metadata\":{\"name\":\"render-1\",\"namespace\":\"web\","
    "\"uid\":\"0a1b2c3d-0000-4000-8000-000000000002\"}}]}";

static void
assert_same_pods(const struct pod_list *a, const struct pod_list *b)
{
    assert_int_equal(a->pl_count, b->pl_count);
    for (size_t i = 0; i < a->pl_count; i++) {
        const struct pod *p = &a->pl_pods[i], *q = &b->pl_pods[i];
        assert_string_equal(p->p_uid, q->p_uid);
        assert_string_equal(p->p_namespace, q->p_namespace);
        assert_string_equal(p->p_name, q->p_name);
        assert_int_equal(p->p_container_count, q->p_container_count);
        for (size_t j = 0; j < p->p_container_count; j++) {
            assert_string_equal(p->p_containers[j].pk_id, q->p_containers[j].pk_id);
            assert_string_equal(p->p_containers[j].pk_name, q->p_containers[j].pk_name);
        }
    }
}

static void
podlist_oom(const char *what, const char *body, size_t len, size_t want_pods)
{
    struct pod_list want, l;
    char err[256];
    long n;
    int rc;

    assert_int_equal(podlist_parse(body, len, NULL, &want, err, sizeof(err)), 0);
    assert_int_equal(want.pl_count, want_pods);
    for (n = 0;; n++) {
        oom_arm(n);
        rc = podlist_parse(body, len, NULL, &l, err, sizeof(err));
        if (!oom_disarm()) {
            assert_int_equal(rc, 0);
            assert_same_pods(&l, &want);
            pod_list_free(&l);
            break;
        }
        /* Each failure is told, and nothing half-read is handed back. */
        if (rc != -1)
            fail_msg("%s: allocation %ld failed, yet the parse gave %zu pods", what, n,
                     l.pl_count);
        if (strcmp(err, "out of memory") != 0)
            fail_msg("%s: allocation %ld: %s", what, n, err);
        assert_null(l.pl_pods);
        assert_int_equal(l.pl_count, 0);
        pod_list_free(&l);
    }
    print_message("podlist_parse %s: %ld allocations failed in turn (%zu pods)\n", what,
                  n, want.pl_count);
    pod_list_free(&want);
}

static void
test_podlist(void **state)
{
    static const char *const files[] = {"pods-incident.json", "kube-pods-node.json"};
    static const size_t pods[] = {6, 2};
    char *body;
    size_t len;

    for (size_t i = 0; i < 2; i++) {
        body = test_data_load(files[i], &len);
        podlist_oom(files[i], body, len, pods[i]);
        free(body);
    }
    podlist_oom("inline", pods_inline, sizeof(pods_inline) - 1, 2);
}

/* ---- the poll's inputs: cgroup files, a snapshot, the pods ---- */

#define NDEV 3
#define NPODS 6 /* pods-incident.json */
#define CID_KNOWN "cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd"
#define CID_UNKNOWN "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
#define GIB 1073741824ULL

struct poll_inputs {
    struct pod_list pods;
    struct nvml_device devs[NDEV];
    struct nvml_proc procs[NDEV][2 * NPODS + 6];
    struct nvml_snapshot snap;
    struct attr_pid pids[NDEV * (2 * NPODS) + 4];
    size_t npids;
};

/* Reads one PID's cgroup text as procfs would, with nothing allocated. */
static void
pid_from_cgroup(struct poll_inputs *in, uint32_t pid, const char *text)
{
    struct attr_pid *ap = &in->pids[in->npids++];

    memset(ap, 0, sizeof(*ap));
    ap->ap_pid = pid;
    oom_arm(0);
    ap->ap_found = cgroup_parse_file(text, strlen(text), &ap->ap_id) == 1;
    assert_false(oom_disarm());
    assert_int_equal(oom_calls(), 0); /* the cgroup reader never allocates */
}

/*
 * Per device and pod of pods-incident.json: a process in the pod's known
 * container (cgroup v2, systemd driver) listed in both lists, and one in a
 * container the pod does not list (v1, cgroupfs). Then a host process, a
 * process of an unknown pod, one whose memory NVML cannot report, and one
 * whose cgroup was not read. 36 series: the series array grows three times.
 */
static void
poll_inputs(struct poll_inputs *in)
{
    char err[256], text[1024], uid_[CGROUP_UID_MAX], *body;
    size_t len;

    memset(in, 0, sizeof(*in));
    body = test_data_load("pods-incident.json", &len);
    assert_int_equal(podlist_parse(body, len, NULL, &in->pods, err, sizeof(err)), 0);
    free(body);
    assert_int_equal(in->pods.pl_count, NPODS);
    for (size_t d = 0; d < NDEV; d++) {
        struct nvml_device *dev = &in->devs[d];
        struct nvml_proc *p = in->procs[d];
        size_t np = 0;

        dev->nd_index = (unsigned)d;
        snprintf(dev->nd_uuid, sizeof(dev->nd_uuid), "GPU-%zu-3f1e4d8a", d);
        snprintf(dev->nd_model, sizeof(dev->nd_model), "Tesla \"T4\" #%zu", d);
        dev->nd_total = 16 * GIB;
        dev->nd_free = 2 * GIB;
        for (size_t k = 0; k < NPODS; k++) {
            const char *uid = in->pods.pl_pods[k].p_uid;
            uint32_t pid = (uint32_t)(1000 + d * 100 + k * 10);

            snprintf(uid_, sizeof(uid_), "%s", uid);
            for (char *c = uid_; *c; c++)
                if (*c == '-')
                    *c = '_';
            snprintf(text, sizeof(text),
                     "0::/kubepods.slice/kubepods-burstable.slice/"
                     "kubepods-burstable-pod%s.slice/cri-containerd-" CID_KNOWN
                     ".scope\n",
                     uid_);
            pid_from_cgroup(in, pid, text);
            snprintf(text, sizeof(text),
                     "12:memory:/kubepods/besteffort/pod%s/" CID_UNKNOWN "\n"
                     "11:cpu,cpuacct:/kubepods/besteffort/pod%s/" CID_UNKNOWN "\n",
                     uid, uid);
            pid_from_cgroup(in, pid + 1, text);
            p[np++] = (struct nvml_proc){pid, (k + 1) * 64 * 1048576ULL, 1};
            p[np++] = (struct nvml_proc){pid + 1, 32 * 1048576ULL, 1};
        }
        for (size_t k = 0; k < NPODS; k++) /* the graphics list: the same PIDs again */
            if (k % 2 == 0)
                p[np++] = (struct nvml_proc){(uint32_t)(1000 + d * 100 + k * 10), GIB, 1};
        p[np++] = (struct nvml_proc){9001, GIB / 2, 1}; /* host */
        p[np++] = (struct nvml_proc){9002, GIB / 4, 1}; /* unknown pod */
        p[np++] = (struct nvml_proc){9003, 0, 0};       /* not available */
        p[np++] = (struct nvml_proc){9004, GIB / 8, 1}; /* cgroup not read */
        dev->nd_procs = p;
        dev->nd_nprocs = np;
    }
    pid_from_cgroup(in, 9001, "0::/user.slice/user-1000.slice/session-3.scope\n");
    pid_from_cgroup(
        in, 9002,
        "0::/kubepods.slice/kubepods-pod11111111_2222_4333_8444_555555555555.slice/"
        "cri-containerd-" CID_KNOWN ".scope\n");
    pid_from_cgroup(
        in, 9003,
        "0::/kubepods.slice/kubepods-pod11111111_2222_4333_8444_555555555555.slice\n");
    in->snap.ns_devices = in->devs;
    in->snap.ns_count = NDEV;
}

static void
assert_same_attr(const struct attr_tally *a, const struct attr_tally *b)
{
    assert_int_equal(a->ar_nseries, b->ar_nseries);
    for (size_t i = 0; i < a->ar_nseries; i++) {
        assert_int_equal(a->ar_series[i].as_device, b->ar_series[i].as_device);
        assert_string_equal(a->ar_series[i].as_namespace, b->ar_series[i].as_namespace);
        assert_string_equal(a->ar_series[i].as_pod, b->ar_series[i].as_pod);
        assert_string_equal(a->ar_series[i].as_container, b->ar_series[i].as_container);
        assert_int_equal(a->ar_series[i].as_bytes, b->ar_series[i].as_bytes);
    }
    for (size_t d = 0; d < NDEV; d++) {
        assert_int_equal(a->ar_devices[d].ad_used, b->ar_devices[d].ad_used);
        assert_int_equal(a->ar_devices[d].ad_unattributed,
                         b->ar_devices[d].ad_unattributed);
    }
    assert_int_equal(a->ar_unknown_seen, b->ar_unknown_seen);
    assert_string_equal(a->ar_unknown, b->ar_unknown);
}

static void
test_attribute(void **state)
{
    struct poll_inputs *in = malloc(sizeof(*in));
    struct attr_tally want, r;
    long n;
    int rc;

    assert_non_null(in);
    poll_inputs(in);
    assert_int_equal(
        attribute(&in->snap, in->pids, in->npids, &in->pods, NULL, NULL, &want), 0);
    /* What the poll should say before it is made to fail. */
    assert_int_equal(want.ar_nseries, NDEV * NPODS * 2);
    assert_true(want.ar_unknown_seen);
    assert_string_equal(want.ar_unknown,
                        "9a3c1f2e-6b1d-4c8e-9f47-1d2a3b4c5d01/" CID_UNKNOWN);
    assert_int_equal(want.ar_devices[0].ad_used, 14 * GIB);
    for (n = 0;; n++) {
        oom_arm(n);
        rc = attribute(&in->snap, in->pids, in->npids, &in->pods, NULL, NULL, &r);
        if (!oom_disarm()) {
            assert_int_equal(rc, 0);
            assert_same_attr(&r, &want);
            attr_tally_free(&r);
            break;
        }
        if (rc != -1)
            fail_msg("allocation %ld failed, yet attribute gave %zu series", n,
                     r.ar_nseries);
        assert_null(r.ar_series);
        assert_int_equal(r.ar_nseries, 0);
        assert_null(r.ar_devices);
        assert_false(r.ar_unknown_seen);
        attr_tally_free(&r);
    }
    print_message("attribute: %ld allocations failed in turn (%zu series)\n", n,
                  want.ar_nseries);
    attr_tally_free(&want);
    pod_list_free(&in->pods);
    free(in);
}

/* ---- the exposition ---- */

static void
render_oom(const char *what, const struct expo_status *st,
           const struct nvml_snapshot *snap, const struct attr_tally *attr)
{
    struct buf want, b;
    long n;
    int rc;

    buf_init(&want, 0);
    assert_int_equal(expo_render(&want, st, snap, attr, NULL), 0);
    assert_non_null(strstr(want.b_data, st->es_up ? "\ngpu_vram_exporter_up 1\n"
                                                  : "\ngpu_vram_exporter_up 0\n"));
    for (n = 0;; n++) {
        buf_init(&b, 0);
        oom_arm(n);
        rc = expo_render(&b, st, snap, attr, NULL);
        if (!oom_disarm()) {
            assert_int_equal(rc, 0);
            assert_int_equal(b.b_len, want.b_len);
            assert_memory_equal(b.b_data, want.b_data, want.b_len);
            buf_free(&b);
            break;
        }
        /* The caller throws the partial text away; it must be told to. */
        if (rc != -1)
            fail_msg("%s: allocation %ld failed, yet the render said 0", what, n);
        assert_false(b.b_toobig);
        buf_free(&b);
    }
    print_message("expo_render %s: %ld allocations failed in turn (%zu bytes)\n", what, n,
                  want.b_len);
    buf_free(&want);
}

static void
test_expo_render(void **state)
{
    struct poll_inputs *in = malloc(sizeof(*in));
    struct expo_status up = {"gpu-node-1", 1, 1700000000.25, 0.0125, 0, NULL, NULL};
    struct expo_status down = {"gpu-node-1", 0, 1700000000.25, 0.5, 0, NULL, NULL};
    struct attr_tally attr;

    assert_non_null(in);
    poll_inputs(in);
    assert_int_equal(
        attribute(&in->snap, in->pids, in->npids, &in->pods, NULL, NULL, &attr), 0);
    render_oom("up", &up, &in->snap, &attr);
    render_oom("down", &down, NULL, NULL);
    attr_tally_free(&attr);
    pod_list_free(&in->pods);
    free(in);
}

/* ---- NVML, through the stub library (its allocations are its own) ---- */

static void
assert_same_snapshot(const struct nvml_snapshot *a, const struct nvml_snapshot *b)
{
    assert_int_equal(a->ns_count, b->ns_count);
    for (size_t i = 0; i < a->ns_count; i++) {
        const struct nvml_device *p = &a->ns_devices[i], *q = &b->ns_devices[i];
        assert_int_equal(p->nd_index, q->nd_index);
        assert_string_equal(p->nd_uuid, q->nd_uuid);
        assert_string_equal(p->nd_model, q->nd_model);
        assert_int_equal(p->nd_total, q->nd_total);
        assert_int_equal(p->nd_free, q->nd_free);
        assert_int_equal(p->nd_nprocs, q->nd_nprocs);
        for (size_t j = 0; j < p->nd_nprocs; j++) {
            assert_int_equal(p->nd_procs[j].np_pid, q->nd_procs[j].np_pid);
            assert_int_equal(p->nd_procs[j].np_used, q->nd_procs[j].np_used);
            assert_int_equal(p->nd_procs[j].np_known, q->nd_procs[j].np_known);
        }
    }
}

static void
test_nvml(void **state)
{
    static const char gpus[] = "init ok\n"
                               "gpu 0 GPU-8c1d 16106127360 2147483648 Tesla T4\n"
                               "gpu 1 GPU-77ab 85899345920 42949672960 NVIDIA A100 80GB\n"
                               "proc 0 1000 4294967296 compute\n"
                               "proc 0 1001 na graphics\n"
                               "proc 0 1002 536870912 both\n"
                               "proc 1 2000 8589934592 compute\n"
                               "proc 1 2001 1073741824 graphics\n";
    const char *lib = getenv("GVW_STUB_NVML");
    char path[] = "/tmp/gvw-oom-nvml-XXXXXX", err[512];
    struct nvml_snapshot want, s;
    struct nvml *nv;
    long n;
    int fd, rc;

    if (lib == NULL || lib[0] == '\0')
        fail_msg("GVW_STUB_NVML is not set (the test's registration sets it)");
    assert_true((fd = mkstemp(path)) != -1);
    assert_int_equal(write(fd, gpus, sizeof(gpus) - 1), (ssize_t)(sizeof(gpus) - 1));
    close(fd);
    setenv("GVW_STUB_NVML_STATE", path, 1);

    for (n = 0;; n++) {
        oom_arm(n);
        nv = nvml_open(lib, err, sizeof(err));
        if (!oom_disarm())
            break;
        assert_null(nv);
        assert_string_equal(err, "out of memory");
    }
    if (nv == NULL)
        fail_msg("nvml_open %s: %s", lib, err);
    print_message("nvml_open: %ld allocations failed in turn\n", n);

    assert_int_equal(nvml_read(nv, &want, err, sizeof(err)), 0);
    assert_int_equal(want.ns_count, 2);
    assert_int_equal(want.ns_devices[0].nd_nprocs, 4); /* compute, then graphics */
    assert_int_equal(want.ns_devices[0].nd_procs[1].np_known, 1);
    for (n = 0;; n++) {
        oom_arm(n);
        rc = nvml_read(nv, &s, err, sizeof(err));
        if (!oom_disarm()) {
            assert_int_equal(rc, 0);
            assert_same_snapshot(&s, &want);
            nvml_snapshot_free(&s);
            break;
        }
        /* A partial read is never reported. */
        if (rc != -1)
            fail_msg("allocation %ld failed, yet nvml_read gave %zu GPUs", n, s.ns_count);
        assert_string_equal(err, "out of memory");
        assert_null(s.ns_devices);
        assert_int_equal(s.ns_count, 0);
        nvml_snapshot_free(&s);
    }
    print_message("nvml_read: %ld allocations failed in turn\n", n);
    nvml_snapshot_free(&want);
    nvml_close(nv);
    unlink(path);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_podlist),
        cmocka_unit_test(test_attribute),
        cmocka_unit_test(test_expo_render),
        cmocka_unit_test(test_nvml),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
