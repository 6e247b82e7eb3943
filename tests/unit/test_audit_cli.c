/* test_audit_cli.c -- `audit` end to end: a real database, argv in, stdout out */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <sqlite3.h>

#include "audit_cli.h"
#include "lib/terminal_safe.h"
#include "audit_format.h"
#include "store.h"

#define T0 1717322400123LL /* 2024-06-02T10:00:00.123Z */
#define HOUR_MS 3600000LL
#define END ((const char *)NULL) /* ends run()'s words */

struct fx {
    char f_dir[64];
    char f_db[128];
    char *f_out; /* owned: stdout of the last run */
    char *f_err; /* owned: stderr of the last run */
};

static void
rm_tree(const char *dir)
{
    char p[512];
    struct dirent *e;
    DIR *d = opendir(dir);

    while (d != NULL && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
        unlink(p);
    }
    if (d != NULL)
        closedir(d);
    rmdir(dir);
}

static int64_t
now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const struct store_candidate cands[] = {
    {"ml", "onnx-1", 10700, 1, 2000, 1, NULL},
    {"llm", "vllm-0", 3000, 1, 4000, 0, "within_budget"},
};
static const struct store_victim v_ml = {"ml", "onnx-1", 10700, 1, 2000, 8700};
static const struct store_victim v_batch = {
    "batch", "trainer-with-a-very-long-name-0", 5000, 0, 0, 0};

/*
 * The database every test reads (ids in insert order):
 *   alert 1  T0-1s   firing   GPUVRAMLow          alert 2  now-10m resolved Other
 *   1 T0       gpu-1 recycled           victim ml/onnx-1, verify, alert 1
 *   2 T0+60s   gpu-2 skipped_telemetry  free unknown, an error
 *   3 T0+120s  gpu-1 would_recycle      victim batch/... (no budget), dry run
 *   4 now-1h   gpu-1 skipped_recovered
 *   5 now-48h  gpu-2 coalesced
 *   6 now-30m  gpu-1 in_progress        interrupted by a restart
 */
static void
seed(const char *path)
{
    char err[256];
    int64_t now = now_ms(), a1, id;
    struct store *s = store_open(path, STORE_READWRITE, err, sizeof(err));
    struct store_alert alerts[] = {
        {T0 - 1000, "GPUVRAMLow", "firing", "3f2a9c", "2024-06-02T09:59:00Z",
         "0001-01-01T00:00:00Z", "{\"alertname\":\"GPUVRAMLow\",\"node\":\"gpu-1\"}",
         "{\"summary\":\"free VRAM low\"}"},
        {now - 600000, "Other", "resolved", "", NULL, NULL, NULL, NULL},
    };
    struct store_decision d[] = {
        {.sd_time_ms = T0,
         .sd_node = "gpu-1",
         .sd_trigger = "GPUVRAMLow",
         .sd_fingerprint = "3f2a9c",
         .sd_result = "recycled",
         .sd_reason = "ml/onnx-1 is 8700 MiB over its budget",
         .sd_free_known = 1,
         .sd_free_mib = 512,
         .sd_floor_mib = 1536,
         .sd_action = "evict",
         .sd_victim = &v_ml,
         .sd_candidates = cands,
         .sd_candidate_count = 2,
         .sd_verified = 1,
         .sd_verify_free_mib = 9000,
         .sd_verify_seconds = 12.25,
         .sd_free_source = "device"},
        {.sd_time_ms = T0 + 60000,
         .sd_node = "gpu-2",
         .sd_trigger = "GPUVRAMLow",
         .sd_result = "skipped_telemetry",
         .sd_reason = "Prometheus could not be asked",
         .sd_floor_mib = 1536,
         .sd_action = "none",
         .sd_error = "connect to prometheus:9090: connection refused"},
        {.sd_time_ms = T0 + 120000,
         .sd_node = "gpu-1",
         .sd_trigger = "GPUVRAMLow",
         .sd_result = "would_recycle",
         .sd_reason = "largest user (fallback)",
         .sd_free_known = 1,
         .sd_free_mib = 100,
         .sd_floor_mib = 1536,
         .sd_dry_run = 1,
         .sd_action = "evict",
         .sd_victim = &v_batch},
        {.sd_time_ms = now - HOUR_MS,
         .sd_node = "gpu-1",
         .sd_trigger = "GPUVRAMLow",
         .sd_result = "skipped_recovered",
         .sd_free_known = 1,
         .sd_free_mib = 4000,
         .sd_floor_mib = 1536,
         .sd_free_source = "computed"},
        {.sd_time_ms = now - 48 * HOUR_MS,
         .sd_node = "gpu-2",
         .sd_trigger = "GPUVRAMLow",
         .sd_result = "coalesced",
         .sd_floor_mib = 1536},
    };
    size_t i;

    assert_non_null(s);
    assert_int_equal(store_add_alert(s, &alerts[0], &a1, err, sizeof(err)), 0);
    assert_int_equal(store_add_alert(s, &alerts[1], NULL, err, sizeof(err)), 0);
    d[0].sd_alert_id = a1;
    for (i = 0; i < sizeof(d) / sizeof(d[0]); i++)
        assert_int_equal(store_decision_record(s, &d[i], NULL, err, sizeof(err)), 0);
    d[3].sd_time_ms = now - HOUR_MS / 2;
    d[3].sd_result = "recycled";
    assert_int_equal(store_decision_start(s, &d[3], &id, err, sizeof(err)), 0);
    store_close(s);
    /* The daemon restarts: decision 6 is now visibly interrupted. */
    s = store_open(path, STORE_READWRITE, err, sizeof(err));
    assert_non_null(s);
    store_close(s);
}

static int
setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));

    if (f == NULL)
        return -1;
    snprintf(f->f_dir, sizeof(f->f_dir), "/tmp/gvw-audit-XXXXXX");
    if (mkdtemp(f->f_dir) == NULL) {
        free(f);
        return -1;
    }
    snprintf(f->f_db, sizeof(f->f_db), "%s/audit.db", f->f_dir);
    seed(f->f_db);
    unsetenv("AUDIT_DB");
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    struct fx *f = *state;

    rm_tree(f->f_dir);
    free(f->f_out);
    free(f->f_err);
    free(f);
    unsetenv("AUDIT_DB");
    return 0;
}

static char *
slurp(const char *path)
{
    FILE *fp = fopen(path, "r");
    char *buf;
    long n;

    assert_non_null(fp);
    fseek(fp, 0, SEEK_END);
    n = ftell(fp);
    rewind(fp);
    buf = calloc(1, (size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, fp), (size_t)n);
    fclose(fp);
    return buf;
}

/* Points fd at path and returns a copy of the old fd. */
static int
redirect(int fd, const char *path)
{
    int saved = dup(fd), nfd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

    assert_true(saved >= 0 && nfd >= 0);
    dup2(nfd, fd);
    close(nfd);
    return saved;
}

static void
restore(int fd, int saved)
{
    dup2(saved, fd);
    close(saved);
}

/* Runs audit_main with the NULL-terminated words after "audit"; any "DB"
 * word is replaced with the fixture's database. Captures stdout and stderr. */
static int
run(struct fx *f, ...)
{
    char *argv[32], out[160], err[160];
    va_list ap;
    int argc = 0, rc, so, se;
    const char *w;

    argv[argc++] = "audit";
    va_start(ap, f);
    while ((w = va_arg(ap, const char *)) != NULL && argc < 31)
        argv[argc++] = strcmp(w, "DB") == 0 ? f->f_db : (char *)w;
    va_end(ap);
    argv[argc] = NULL;
    snprintf(out, sizeof(out), "%s/stdout", f->f_dir);
    snprintf(err, sizeof(err), "%s/stderr", f->f_dir);
    fflush(stdout);
    fflush(stderr);
    so = redirect(1, out);
    se = redirect(2, err);
    rc = audit_main(argc, argv);
    fflush(stdout);
    fflush(stderr);
    restore(1, so);
    restore(2, se);
    free(f->f_out);
    free(f->f_err);
    f->f_out = slurp(out);
    f->f_err = slurp(err);
    unlink(out);
    unlink(err);
    return rc;
}

/* stdout as JSON (caller decrefs). */
static json_t *
out_json(struct fx *f)
{
    json_error_t je;
    json_t *j = json_loads(f->f_out, 0, &je);

    if (j == NULL)
        fail_msg("stdout is not JSON (%s): %s", je.text, f->f_out);
    return j;
}

/* The ids of a JSON array on stdout, as "[6,4,5]". */
static void
assert_ids(struct fx *f, const char *want)
{
    json_t *a = out_json(f), *ids = json_array();
    size_t i;
    char *got;

    assert_true(json_is_array(a));
    for (i = 0; i < json_array_size(a); i++)
        json_array_append(ids, json_object_get(json_array_get(a, i), "id"));
    got = json_dumps(ids, JSON_COMPACT);
    if (strcmp(got, want) != 0)
        fail_msg("ids %s, want %s", got, want);
    free(got);
    json_decref(ids);
    json_decref(a);
}

static void
assert_json_equal_text(json_t *got, const char *want_text)
{
    json_error_t je;
    json_t *want = json_loads(want_text, 0, &je);

    if (want == NULL)
        fail_msg("bad expected JSON: %s", je.text);
    if (!json_equal(got, want)) {
        char *g = json_dumps(got, JSON_COMPACT);
        print_error("got  %s\nwant %s\n", g, want_text);
        free(g);
        fail();
    }
    json_decref(want);
}

/* A usage or runtime error: the code, nothing on stdout, one line on stderr. */
static void
assert_one_error(struct fx *f, int rc, int want_rc, const char *needle)
{
    size_t len = strlen(f->f_err);

    if (rc != want_rc || strstr(f->f_err, needle) == NULL)
        fail_msg("rc %d (want %d), stderr \"%s\" lacks \"%s\"", rc, want_rc, f->f_err,
                 needle);
    assert_string_equal(f->f_out, "");
    assert_true(len > 0 && f->f_err[len - 1] == '\n');
    assert_ptr_equal(strchr(f->f_err, '\n'), f->f_err + len - 1);
}

static const char decision1[] =
    "{\"id\":1,\"time\":\"2024-06-02T10:00:00.123Z\",\"node\":\"gpu-1\","
    "\"trigger\":\"GPUVRAMLow\",\"fingerprint\":\"3f2a9c\",\"result\":\"recycled\","
    "\"reason\":\"ml/onnx-1 is 8700 MiB over its "
    "budget\",\"free_mib\":512,\"floor_mib\":1536,"
    "\"dry_run\":false,\"action\":\"evict\","
    "\"victim\":{\"namespace\":\"ml\",\"pod\":\"onnx-1\",\"used_mib\":10700,"
    "\"budget_mib\":2000,\"overshoot_mib\":8700},"
    "\"candidates\":[{\"namespace\":\"ml\",\"pod\":\"onnx-1\",\"used_mib\":10700,"
    "\"budget_mib\":2000,\"eligible\":true,\"why_not\":null},"
    "{\"namespace\":\"llm\",\"pod\":\"vllm-0\",\"used_mib\":3000,\"budget_mib\":4000,"
    "\"eligible\":false,\"why_not\":\"within_budget\"}],"
    "\"error\":null,\"verify\":{\"free_mib\":9000,\"seconds\":12.25},"
    "\"gpu\":null,\"release\":null,\"free_source\":\"device\",\"prediction\":null}";

/* ---- listings ---- */

static void
test_list_json_all(void **state)
{
    struct fx *f = *state;
    json_t *a;

    assert_int_equal(run(f, "--db", "DB", "--format", "json", END), 0);
    assert_string_equal(f->f_err, "");
    assert_ids(f, "[6,4,5,3,2,1]");
    a = out_json(f);
    assert_json_equal_text(json_array_get(a, 5), decision1);
    assert_json_equal_text(
        json_array_get(a, 4),
        "{\"id\":2,\"time\":\"2024-06-02T10:01:00.123Z\",\"node\":\"gpu-2\","
        "\"trigger\":\"GPUVRAMLow\",\"fingerprint\":\"\","
        "\"result\":\"skipped_telemetry\","
        "\"reason\":\"Prometheus could not be asked\",\"free_mib\":null,"
        "\"floor_mib\":1536,\"dry_run\":false,\"action\":\"none\","
        "\"victim\":null,\"candidates\":[],"
        "\"error\":\"connect to prometheus:9090: connection refused\","
        "\"verify\":null,\"gpu\":null,\"release\":null,\"free_source\":null,\"prediction\":null}");
    /* A fallback victim without a budget: budget and overshoot are null. */
    assert_json_equal_text(
        json_object_get(json_array_get(a, 3), "victim"),
        "{\"namespace\":\"batch\",\"pod\":\"trainer-with-a-very-long-name-0\","
        "\"used_mib\":5000,\"budget_mib\":null,\"overshoot_mib\":null}");
    assert_true(json_is_true(json_object_get(json_array_get(a, 3), "dry_run")));
    /* The interrupted decision says so. */
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(a, 0), "result")),
        "in_progress");
    assert_string_equal(json_string_value(json_object_get(json_array_get(a, 0), "error")),
                        STORE_INTERRUPTED_ERROR);
    json_decref(a);
}

static void
test_list_filters(void **state)
{
    struct fx *f = *state;
    char dbopt[200];

    snprintf(dbopt, sizeof(dbopt), "--db=%s", f->f_db);

    assert_int_equal(run(f, "--db", "DB", "--format=json", "--node", "gpu-2", END), 0);
    assert_ids(f, "[5,2]");
    assert_int_equal(run(f, dbopt, "--format=json", "--node=gpu-1", END), 0);
    assert_ids(f, "[6,4,3,1]");
    /* AUDIT_DB's setting flag is --audit-db (SPEC: FLOOR_MIB = --floor-mib). */
    assert_int_equal(run(f, "--audit-db", "DB", "--format=json", "--node=gpu-1", END), 0);
    assert_ids(f, "[6,4,3,1]");
    assert_int_equal(run(f, "--db", "DB", "--format=json", "--namespace", "ml", END), 0);
    assert_ids(f, "[1]");
    assert_int_equal(
        run(f, "--db", "DB", "--format=json", "--result", "would_recycle", END), 0);
    assert_ids(f, "[3]");
    assert_int_equal(run(f, "--db", "DB", "--format=json", "--result=in_progress", END),
                     0);
    assert_ids(f, "[6]");
    assert_int_equal(run(f, "--db", "DB", "--format=json", "--since", "24h", END), 0);
    assert_ids(f, "[6,4]");
    assert_int_equal(run(f, "--db", "DB", "--format=json", "--since=50m", END), 0);
    assert_ids(f, "[6]");
    assert_int_equal(run(f, "--db", "DB", "--format=json", "--since", "3d", END), 0);
    assert_ids(f, "[6,4,5]");
    assert_int_equal(run(f, "--db", "DB", "--format=json", "--since", "7200s", END), 0);
    assert_ids(f, "[6,4]");
    /* SPEC: durations accept ms, s, m, h, d. 50 minutes in ms: */
    assert_int_equal(run(f, "--db", "DB", "--format=json", "--since", "3000000ms", END),
                     0);
    assert_ids(f, "[6]");
    assert_int_equal(
        run(f, "--db", "DB", "--format=json", "--since", "2024-06-02T10:01:00.123Z", END),
        0);
    assert_ids(f, "[6,4,5,3,2]");
    /* The same instant with an offset, and a fraction past milliseconds. */
    assert_int_equal(run(f, "--db", "DB", "--format=json", "--since",
                         "2024-06-02T12:01:00.1239+02:00", END),
                     0);
    assert_ids(f, "[6,4,5,3,2]");
    assert_int_equal(run(f, "--db", "DB", "--format=json", "--node", "gpu-1", "--result",
                         "recycled", END),
                     0);
    assert_ids(f, "[1]");
    assert_int_equal(run(f, "--db", "DB", "--format=json", "--node", "gpu-9", END), 0);
    assert_string_equal(f->f_out, "[]\n");
}

static void
test_list_limit(void **state)
{
    struct fx *f = *state;
    char err[256];
    struct store *s = store_open(f->f_db, STORE_READWRITE, err, sizeof(err));
    struct store_decision d = {
        .sd_node = "gpu-3", .sd_result = "coalesced", .sd_floor_mib = 1536};
    json_t *a;
    int i;

    assert_non_null(s);
    assert_int_equal(store_begin(s, err, sizeof(err)), 0);
    for (i = 0; i < 150; i++) {
        d.sd_time_ms = T0 - 1000000 + i;
        assert_int_equal(store_decision_record(s, &d, NULL, err, sizeof(err)), 0);
    }
    assert_int_equal(store_commit(s, err, sizeof(err)), 0);
    store_close(s);

    assert_int_equal(run(f, "--db", "DB", "--format", "json", "--node", "gpu-3", END), 0);
    a = out_json(f);
    assert_int_equal(json_array_size(a), 100); /* the default */
    json_decref(a);
    assert_int_equal(
        run(f, "--db", "DB", "--format", "json", "--node", "gpu-3", "--limit", "0", END),
        0);
    a = out_json(f);
    assert_int_equal(json_array_size(a), 150);
    json_decref(a);
    assert_int_equal(run(f, "--limit=2", "--db", "DB", "--format", "json", END), 0);
    assert_ids(f, "[6,4]");
}

/* Every table line fits in 80 columns (counting UTF-8 code points). */
static void
assert_fits_80(const char *text)
{
    size_t cols = 0;
    const unsigned char *p;

    for (p = (const unsigned char *)text; *p != '\0'; p++) {
        if (*p == '\n') {
            cols = 0;
            continue;
        }
        if ((*p & 0xC0) != 0x80 && ++cols > 80)
            fail_msg("line wider than 80 columns in:\n%s", text);
    }
}

/* stdout contains needle; on failure shows the whole output. */
static void
assert_out_has(struct fx *f, const char *needle)
{
    if (strstr(f->f_out, needle) == NULL)
        fail_msg("stdout lacks \"%s\":\n%s", needle, f->f_out);
}

/* Decision tables fit in 80 columns but for a long victim: a line may only
 * be wider when everything past the victim's column is that one name. */
static void
assert_fits_80_but_victim(const char *text)
{
    const char *line = text, *nl;
    size_t cols;

    for (; *line != '\0'; line = nl + 1) {
        const char *p;

        nl = strchr(line, '\n');
        assert_non_null(nl);
        for (cols = 0, p = line; p < nl; p++)
            cols += ((unsigned char)*p & 0xC0) != 0x80;
        if (cols <= 80)
            continue;
        for (cols = 0, p = line; p < nl && cols < 66; p++)
            cols += ((unsigned char)*p & 0xC0) != 0x80;
        if (p == line || p[-1] != ' ' || memchr(p, ' ', (size_t)(nl - p)) != NULL)
            fail_msg("line wider than 80 columns before the victim in:\n%s", text);
    }
}

static void
test_list_table(void **state)
{
    struct fx *f = *state;

    assert_int_equal(run(f, "--db", "DB", END), 0);
    assert_fits_80_but_victim(f->f_out);
    assert_out_has(f, "ID TIME (UTC)");
    assert_out_has(f, "FREE/FLOOR");
    assert_out_has(f, "      1 06-02 10:00 gpu-1        recycled                512/1536"
                      " ml/onnx-1\n");
    /* Computed (GPU_TOTAL_MIB - used) is marked; the device's is not. */
    assert_out_has(f, " skipped_recovered     4000*/1536 -\n");
    assert_out_has(f, "?/1536");
    /* The victim is the last column: never cut, however long. */
    assert_out_has(f, " batch/trainer-with-a-very-long-name-0\n");
    assert_out_has(f, "in_progress");

    assert_int_equal(run(f, "--db", "DB", "--node", "nope", END), 0);
    assert_string_equal(f->f_out, "no decisions\n");
}

/* Column (in code points) where needle starts on the line that holds it. */
static size_t
column_of(const char *text, const char *needle)
{
    const char *hit = strstr(text, needle), *p;
    size_t col = 0;

    if (hit == NULL)
        fail_msg("no \"%s\" in:\n%s", needle, text);
    for (p = hit; p > text && p[-1] != '\n'; p--)
        ;
    for (; p < hit; p++)
        col += ((unsigned char)*p & 0xC0) != 0x80;
    return col;
}

/* The longest names Kubernetes allows (a 63-character DNS label for the
 * namespace, a 253-character DNS subdomain for the pod) come out whole, in
 * the table and in show, and the table stays aligned. */
static void
test_table_longest_names(void **state)
{
    struct fx *f = *state;
    char err[256], ns[64], pod[254], want[400], *line;
    struct store_victim v = {ns, pod, 12000, 1, 2000, 10000};
    struct store_candidate c = {ns, pod, 12000, 1, 2000, 1, NULL};
    struct store_decision d = {.sd_time_ms = T0 + 180000,
                               .sd_node = "gpu-long",
                               .sd_trigger = "GPUVRAMLow",
                               .sd_result = "recycled",
                               .sd_free_known = 1,
                               .sd_free_mib = 300,
                               .sd_floor_mib = 1536,
                               .sd_action = "evict",
                               .sd_victim = &v,
                               .sd_candidates = &c,
                               .sd_candidate_count = 1};
    struct store *s = store_open(f->f_db, STORE_READWRITE, err, sizeof(err));
    size_t i;

    memset(ns, 'n', 63);
    ns[0] = 'x'; /* the first and last characters show a cut at either end */
    ns[62] = 'z';
    ns[63] = '\0';
    for (i = 0; i < 253; i++) /* a DNS subdomain: labels of <= 63, dots between */
        pod[i] = i % 64 == 63 ? '.' : (char)('a' + i % 26);
    pod[252] = 'Z';
    pod[253] = '\0';
    assert_non_null(s);
    assert_int_equal(store_decision_record(s, &d, NULL, err, sizeof(err)), 0);
    store_close(s);

    assert_int_equal(run(f, "--db", "DB", "--node", "gpu-long", END), 0);
    snprintf(want, sizeof(want), " %s/%s\n", ns, pod);
    assert_out_has(f, want);
    assert_null(strstr(f->f_out, "\xe2\x80\xa6"));
    /* Aligned: the victim starts under its header, and one header line and
     * one row line is all there is. */
    assert_int_equal(column_of(f->f_out, "VICTIM"), column_of(f->f_out, want + 1));
    line = strchr(f->f_out, '\n');
    assert_non_null(line);
    assert_string_equal(strchr(line + 1, '\n'), "\n");

    /* With the seeded rows: every victim column starts at the same place. */
    assert_int_equal(run(f, "--db", "DB", END), 0);
    assert_int_equal(column_of(f->f_out, want + 1), column_of(f->f_out, "VICTIM"));
    assert_int_equal(column_of(f->f_out, "ml/onnx-1"), column_of(f->f_out, "VICTIM"));
    assert_int_equal(column_of(f->f_out, "batch/trainer"), column_of(f->f_out, "VICTIM"));

    assert_int_equal(run(f, "--db", "DB", "show", "7", END), 0);
    snprintf(want, sizeof(want), "victim      %s/%s: used 12000 MiB", ns, pod);
    assert_out_has(f, want);
    snprintf(want, sizeof(want), "yes                      %s/%s\n", ns, pod);
    assert_out_has(f, want);

    /* stats: the namespace is the last column, whole, under its header. */
    assert_int_equal(run(f, "--db", "DB", "stats", "--node", "gpu-long", END), 0);
    snprintf(want, sizeof(want), " %s\n", ns);
    assert_out_has(f, want);
    assert_null(strstr(f->f_out, "\xe2\x80\xa6"));
    assert_int_equal(column_of(f->f_out, "KEY"), column_of(f->f_out, want + 1));
}

/* Stored text that tries to take over the terminal: a newline that forges
 * the next row, ESC and C1 CSI that recolour or clear, RLO that reverses
 * what follows, a line separator, and a byte that is not UTF-8. */
#define HOSTILE_NODE                                                                     \
    "gpu-1\x1b[2J\xc2\x9b"                                                               \
    "31m"
#define HOSTILE_REASON                                                                   \
    "over budget\n      99 06-02 10:00 gpu-9       recycled\xe2\x80\xae"                 \
    "evil\x9b"
#define HOSTILE_NS "ml\xe2\x80\xa8x"
#define HOSTILE_POD "onnx\xe2\x81\xa6-1\x7f"

static const struct store_victim v_hostile = {HOSTILE_NS, HOSTILE_POD, 10700,
                                              1,          2000,        8700};
static const struct store_candidate c_hostile[] = {
    {HOSTILE_NS, HOSTILE_POD, 10700, 1, 2000, 1, NULL}};
static const struct store_decision d_hostile = {.sd_time_ms = T0 + 240000,
                                                .sd_node = HOSTILE_NODE,
                                                .sd_trigger = "GPUVRAMLow\r\x1b]0;x\a",
                                                .sd_result = "recycled",
                                                .sd_reason = HOSTILE_REASON,
                                                .sd_free_known = 1,
                                                .sd_free_mib = 300,
                                                .sd_floor_mib = 1536,
                                                .sd_action = "evict",
                                                .sd_victim = &v_hostile,
                                                .sd_candidates = c_hostile,
                                                .sd_candidate_count = 1,
                                                .sd_error = "\xe2\x80\x8f\xd8\x9c"
                                                            "err",
                                                .sd_gpu = "GPU-\xe2\x80\xab"};

/* Every listing of it (table, show, check's table, alerts) reaches the
 * terminal as one line a row, escapes instead of controls, still aligned. */
static void
test_hostile_text(void **state)
{
    struct fx *f = *state;
    char err[256], *text = NULL;
    size_t len = 0, lines = 0;
    struct store_alert al = {T0 + 240000,
                             "GPUVRAMLow\n\xc2\x85"
                             "forged",
                             "firing\xe2\x80\xae",
                             "fp\x1b",
                             NULL,
                             NULL,
                             "{}",
                             "{}"};
    struct store *s = store_open(f->f_db, STORE_READWRITE, err, sizeof(err));
    FILE *mem;

    assert_non_null(s);
    assert_int_equal(store_decision_record(s, &d_hostile, NULL, err, sizeof(err)), 0);
    assert_int_equal(store_add_alert(s, &al, NULL, err, sizeof(err)), 0);
    store_close(s);

    assert_int_equal(run(f, "--db", "DB", END), 0);
    assert_true(terminal_safe(f->f_out));
    for (const char *p = f->f_out; (p = strchr(p, '\n')) != NULL; p++)
        lines++;
    assert_int_equal(lines, 1 + 7);                /* the header and the seven rows */
    assert_out_has(f, "gpu-1\\x1b[2\xe2\x80\xa6"); /* cut in its cell, escapes whole */
    assert_out_has(f, " ml\\u{2028}x/onnx\\u{2066}-1\\x7f\n");
    assert_int_equal(column_of(f->f_out, "ml\\u{2028}x/"), column_of(f->f_out, "VICTIM"));
    assert_int_equal(column_of(f->f_out, "recycled"), column_of(f->f_out, "RESULT"));

    assert_int_equal(run(f, "--db", "DB", "show", "7", END), 0);
    assert_true(terminal_safe(f->f_out));
    assert_out_has(f, "  node        gpu-1\\x1b[2J\\u{009B}31m\n");
    assert_out_has(f, "  gpu         GPU-\\u{202B}\n");
    assert_out_has(f, "  trigger     GPUVRAMLow\\r\\x1b]0;x\\x07\n");
    assert_out_has(f, "  reason      over budget\\n      99 06-02 10:00 gpu-9       "
                      "recycled\\u{202E}evil\\x9b\n");
    assert_out_has(f, "  victim      ml\\u{2028}x/onnx\\u{2066}-1\\x7f: used 10700 MiB");
    assert_out_has(f, "  error       \\u{200F}\\u{061C}err\n");
    assert_out_has(f, "yes                      ml\\u{2028}x/onnx\\u{2066}-1\\x7f\n");

    /* check --format table prints the same way. */
    assert_non_null(mem = open_memstream(&text, &len));
    audit_decision_print(mem, &d_hostile, -1);
    fclose(mem);
    assert_true(terminal_safe(text));
    assert_non_null(strstr(text, "recycled\\u{202E}evil\\x9b\n"));
    free(text);

    assert_int_equal(
        run(f, "--db", "DB", "alerts", "--since", "2024-06-02T10:03:00Z", END), 0);
    assert_true(terminal_safe(f->f_out));
    /* Cut cells end in the ellipsis, padded where an escape did not fit. */
    assert_out_has(f,
                   "firing\xe2\x80\xa6  GPUVRAMLow\\n\\u{0085}for\xe2\x80\xa6 fp\\x1b\n");
    assert_int_equal(column_of(f->f_out, "GPUVRAMLow\\n"),
                     column_of(f->f_out, "ALERTNAME"));

    /* JSON stays JSON, the text exact. */
    assert_int_equal(run(f, "--db", "DB", "show", "7", "--format", "json", END), 0);
    {
        json_t *j = out_json(f);
        assert_string_equal(json_string_value(json_object_get(j, "node")), HOSTILE_NODE);
        json_decref(j);
    }
}

/* ---- a file written by another hand ---- */

/* Runs sql on the fixture's database, as someone editing the file would. */
static void
edit_db(struct fx *f, const char *sql)
{
    sqlite3 *db = NULL;
    char *msg = NULL;

    assert_int_equal(sqlite3_open(f->f_db, &db), SQLITE_OK);
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", sql, msg);
    sqlite3_close(db);
}

/* run() that a hang fails (SIGALRM ends the test program) instead of
 * blocking the suite until ctest's timeout. */
static int
run_bounded(struct fx *f, const char *w1, const char *w2, const char *w3, const char *w4)
{
    int rc;

    alarm(30);
    rc = run(f, "--db", "DB", w1, w2, w3, w4, END);
    alarm(0);
    return rc;
}

/* A `decisions` view whose recursive query never ends (trusted_schema was on,
 * and the view was read as if it were the table): refused at once, with one
 * line and a failure status, in every format and for every listing. So are
 * a view for `alerts`, and a generated column in the table's place. */
static void
test_crafted_schema_refused(void **state)
{
    struct fx *f = *state;

    edit_db(f, "DROP TABLE decisions;"
               "CREATE VIEW decisions AS WITH RECURSIVE r(n) AS"
               " (SELECT 1 UNION ALL SELECT n + 1 FROM r)"
               " SELECT n AS id, n AS time_ms, 'n' AS node, 't' AS trigger_name,"
               " '' AS fingerprint, 'recycled' AS result, 'r' AS reason,"
               " 1 AS free_mib, 1 AS floor_mib, 0 AS dry_run, 'none' AS action,"
               " NULL AS victim_namespace, NULL AS victim_pod, NULL AS victim,"
               " '[]' AS candidates, NULL AS error, NULL AS verify_free_mib,"
               " NULL AS verify_seconds, NULL AS alert_id, 0 AS verify_pending,"
               " NULL AS gpu, NULL AS release, NULL AS free_source, NULL AS prediction"
               " FROM r;");
    assert_one_error(f, run_bounded(f, END, END, END, END), 1, "decisions is a view");
    assert_one_error(f, run_bounded(f, "--format", "json", END, END), 1,
                     "decisions is a view");
    assert_one_error(f, run_bounded(f, "stats", END, END, END), 1, "decisions is a view");
    assert_one_error(f, run_bounded(f, "show", "1", END, END), 1, "not the audit store");
    assert_one_error(f, run_bounded(f, "alerts", END, END, END), 1,
                     "decisions is a view");

    edit_db(f,
            "DROP VIEW decisions;"
            "ALTER TABLE alerts RENAME TO old_alerts;"
            "CREATE TABLE decisions (id INTEGER PRIMARY KEY, time_ms INTEGER,"
            " node TEXT, trigger_name TEXT, fingerprint TEXT, result TEXT, reason TEXT,"
            " free_mib INTEGER, floor_mib INTEGER, dry_run INTEGER, action TEXT,"
            " victim_namespace TEXT, victim TEXT, candidates TEXT, error TEXT,"
            " verify_free_mib INTEGER, verify_seconds REAL, alert_id INTEGER, gpu TEXT,"
            " release TEXT, free_source TEXT, prediction TEXT);"
            "CREATE VIEW alerts AS SELECT * FROM old_alerts;");
    assert_one_error(f, run_bounded(f, "alerts", END, END, END), 1, "alerts is a view");
    edit_db(f, "DROP VIEW alerts;"
               "CREATE TABLE alerts (id INTEGER PRIMARY KEY, received_ms INTEGER,"
               " alertname TEXT, status TEXT, fingerprint TEXT, starts_at TEXT,"
               " ends_at TEXT, annotations TEXT,"
               " labels TEXT GENERATED ALWAYS AS (printf('%.*c', 1000000000, 'x')));");
    assert_one_error(f, run_bounded(f, "alerts", END, END, END), 1,
                     "alerts.labels is generated");
}

/* Rows edited by hand (text where an integer belongs, JSON that does not
 * parse, a blob): each is named on stderr and skipped; every other row is
 * listed, the JSON array closed, and the status says the listing is not
 * whole. */
static void
test_unreadable_rows_skipped(void **state)
{
    struct fx *f = *state;
    json_t *a;

    edit_db(f, "UPDATE decisions SET time_ms = 'soon' WHERE id = 2;"
               "UPDATE decisions SET candidates = '[{\"namespace\":' WHERE id = 3;"
               "UPDATE decisions SET victim = '{\"namespace\":7}' WHERE id = 1;"
               "UPDATE alerts SET received_ms = x'00' WHERE id = 2;");
    assert_int_equal(run_bounded(f, "--format", "json", END, END), 1);
    assert_ids(f, "[6,4,5]");
    assert_non_null(strstr(f->f_err,
                           "audit: decision row 2 cannot be read (time_ms holds "
                           "text): skipped\n"));
    assert_non_null(strstr(f->f_err,
                           "audit: decision row 3 cannot be read (candidates is "
                           "not the JSON the daemon writes): skipped\n"));
    assert_non_null(strstr(f->f_err, "decision row 1 cannot be read (victim is not"));
    assert_int_equal(run_bounded(f, END, END, END, END), 1);
    assert_out_has(f, "      5 ");
    assert_null(strstr(f->f_out, "      3 "));
    assert_int_equal(run_bounded(f, "show", "3", END, END), 1);
    assert_string_equal(f->f_out, "");
    assert_non_null(strstr(f->f_err, "decision row 3 cannot be read"));
    assert_null(strstr(f->f_err, "no decision"));
    assert_int_equal(run_bounded(f, "show", "4", "--format", "json"), 0);
    assert_int_equal(run_bounded(f, "alerts", "--format", "json", END), 1);
    assert_non_null(
        strstr(f->f_err, "alert row 2 cannot be read (received_ms holds a blob)"));
    a = out_json(f);
    assert_int_equal(json_array_size(a), 1);
    json_decref(a);
}

/* ---- show ---- */

static void
test_show(void **state)
{
    struct fx *f = *state;
    json_t *j;

    assert_int_equal(run(f, "show", "1", "--db", "DB", "--format", "json", END), 0);
    j = out_json(f);
    assert_json_equal_text(j, decision1);
    json_decref(j);
    assert_int_equal(run(f, "--format=json", "--db", "DB", "show", "1", END), 0);
    j = out_json(f);
    assert_json_equal_text(j, decision1);
    json_decref(j);

    assert_int_equal(run(f, "show", "1", "--db", "DB", END), 0);
    assert_fits_80(f->f_out);
    assert_out_has(f, "decision 1\n");
    assert_out_has(f, "2024-06-02T10:00:00.123Z");
    assert_out_has(f, "ml/onnx-1: used 10700 MiB, budget 2000 MiB, "
                      "overshoot +8700 MiB");
    assert_out_has(f, "9000 MiB free after 12.250 s");
    assert_out_has(f, "no: within_budget");

    assert_int_equal(run(f, "show", "6", "--db", "DB", END), 0);
    assert_out_has(f, STORE_INTERRUPTED_ERROR);

    assert_one_error(f, run(f, "show", "999", "--db", "DB", END), 1, "no decision 999");
}

/* ---- alerts ---- */

static void
test_alerts(void **state)
{
    struct fx *f = *state;
    json_t *a;

    assert_int_equal(run(f, "alerts", "--db", "DB", "--format", "json", END), 0);
    assert_ids(f, "[2,1]");
    a = out_json(f);
    assert_json_equal_text(
        json_array_get(a, 1),
        "{\"id\":1,\"received_at\":\"2024-06-02T09:59:59.123Z\","
        "\"alertname\":\"GPUVRAMLow\",\"status\":\"firing\","
        "\"fingerprint\":\"3f2a9c\",\"starts_at\":\"2024-06-02T09:59:00Z\","
        "\"ends_at\":\"0001-01-01T00:00:00Z\","
        "\"labels\":{\"alertname\":\"GPUVRAMLow\",\"node\":\"gpu-1\"},"
        "\"annotations\":{\"summary\":\"free VRAM low\"}}");
    assert_true(json_is_null(json_object_get(json_array_get(a, 0), "starts_at")));
    assert_json_equal_text(json_object_get(json_array_get(a, 0), "labels"), "{}");
    json_decref(a);

    /* --since and --limit apply to alerts too, options before the word. */
    assert_int_equal(
        run(f, "--db", "DB", "--since", "1h", "--format=json", "alerts", END), 0);
    assert_ids(f, "[2]");
    assert_int_equal(run(f, "--db", "DB", "--limit", "1", "--format=json", "alerts", END),
                     0);
    assert_ids(f, "[2]");

    assert_int_equal(run(f, "alerts", "--db", "DB", END), 0);
    assert_fits_80(f->f_out);
    assert_out_has(f, "RECEIVED");
    assert_out_has(f, "firing   GPUVRAMLow");

    assert_int_equal(
        run(f, "alerts", "--db", "DB", "--since", "2099-01-01T00:00:00Z", END), 0);
    assert_string_equal(f->f_out, "no alerts\n");
}

/* ---- stats ---- */

static void
test_stats(void **state)
{
    struct fx *f = *state;
    json_t *a;

    assert_int_equal(run(f, "stats", "--db", "DB", "--format", "json", END), 0);
    a = out_json(f);
    assert_json_equal_text(
        a, "[{\"by\":\"result\",\"key\":\"coalesced\",\"count\":1},"
           "{\"by\":\"result\",\"key\":\"in_progress\",\"count\":1},"
           "{\"by\":\"result\",\"key\":\"recycled\",\"count\":1},"
           "{\"by\":\"result\",\"key\":\"skipped_recovered\",\"count\":1},"
           "{\"by\":\"result\",\"key\":\"skipped_telemetry\",\"count\":1},"
           "{\"by\":\"result\",\"key\":\"would_recycle\",\"count\":1},"
           "{\"by\":\"namespace\",\"key\":\"batch\",\"result\":\"would_recycle\","
           "\"count\":1},"
           "{\"by\":\"namespace\",\"key\":\"ml\",\"result\":\"recycled\",\"count\":1}]");
    json_decref(a);
    assert_int_equal(
        run(f, "--node", "gpu-2", "stats", "--db", "DB", "--format=json", END), 0);
    a = out_json(f);
    assert_json_equal_text(
        a, "[{\"by\":\"result\",\"key\":\"coalesced\",\"count\":1},"
           "{\"by\":\"result\",\"key\":\"skipped_telemetry\",\"count\":1}]");
    json_decref(a);
    /* An explicit --limit summarises the newest N, like the listing. */
    assert_int_equal(run(f, "stats", "--db", "DB", "--limit", "1", "--format=json", END),
                     0);
    a = out_json(f);
    assert_json_equal_text(a,
                           "[{\"by\":\"result\",\"key\":\"in_progress\",\"count\":1}]");
    json_decref(a);

    assert_int_equal(run(f, "stats", "--db", "DB", END), 0);
    assert_fits_80(f->f_out);
    assert_out_has(f, "namespace recycled                      1 ml\n");
    assert_int_equal(run(f, "stats", "--db", "DB", "--result", "failed", END), 0);
    assert_string_equal(f->f_out, "no decisions\n");
    assert_int_equal(
        run(f, "stats", "--db", "DB", "--result", "failed", "--format=json", END), 0);
    assert_string_equal(f->f_out, "[]\n");
}

/* ---- database selection ---- */

static void
test_db_from_env_and_flag(void **state)
{
    struct fx *f = *state;
    char missing[256];
    struct stat sb;

    setenv("AUDIT_DB", f->f_db, 1);
    assert_int_equal(run(f, "--format=json", "--limit", "1", END), 0);
    assert_ids(f, "[6]");

    /* The flag wins over the environment. */
    snprintf(missing, sizeof(missing), "%s/missing.db", f->f_dir);
    assert_one_error(f, run(f, "--db", missing, END), 1, "does not exist");
    assert_int_equal(stat(missing, &sb), -1); /* never created */

    setenv("AUDIT_DB", missing, 1);
    assert_one_error(f, run(f, END), 1, "audit database");
    assert_int_equal(run(f, "--db", "DB", "--limit=1", "--format=json", END), 0);
    assert_ids(f, "[6]");
    assert_int_equal(stat(missing, &sb), -1);

    setenv("AUDIT_DB", "", 1);
    assert_one_error(f, run(f, END), 2, "AUDIT_DB is empty");
}

static void
test_empty_database(void **state)
{
    struct fx *f = *state;
    char err[256], path[256];
    struct store *s;

    snprintf(path, sizeof(path), "%s/empty.db", f->f_dir);
    s = store_open(path, STORE_READWRITE, err, sizeof(err));
    assert_non_null(s);
    store_close(s);
    assert_int_equal(run(f, "--db", path, "--format", "json", END), 0);
    assert_string_equal(f->f_out, "[]\n");
    assert_int_equal(run(f, "--db", path, END), 0);
    assert_string_equal(f->f_out, "no decisions\n");
    assert_int_equal(run(f, "alerts", "--db", path, "--format", "json", END), 0);
    assert_string_equal(f->f_out, "[]\n");
}

/* ---- errors ---- */

static void
test_usage_errors(void **state)
{
    struct fx *f = *state;

    assert_one_error(f, run(f, "--db", "DB", "--bogus", END), 2,
                     "unknown option --bogus");
    assert_one_error(f, run(f, "--db", "DB", "--bogus=1", END), 2,
                     "unknown option --bogus");
    assert_one_error(f, run(f, "--db", "DB", "-x", END), 2, "unknown option -x");
    assert_one_error(f, run(f, "--db", "DB", "--limit", "abc", END), 2, "bad --limit");
    assert_one_error(f, run(f, "--db", "DB", "--limit", "-1", END), 2, "bad --limit");
    assert_one_error(f, run(f, "--db", "DB", "--limit=", END), 2, "bad --limit");
    assert_one_error(f, run(f, "--db", "DB", "--limit", "99999999999999999999", END), 2,
                     "bad --limit");
    assert_one_error(f, run(f, "--db", "DB", "--result", "evicted", END), 2,
                     "unknown --result \"evicted\"");
    assert_one_error(f, run(f, "--db", "DB", "--format", "xml", END), 2,
                     "unknown --format");
    assert_one_error(f, run(f, "--db", "DB", "--since", "yesterday", END), 2,
                     "bad --since");
    assert_one_error(f, run(f, "--db", "DB", "--since", "24x", END), 2, "bad --since");
    assert_one_error(f, run(f, "--db", "DB", "--since", "-5m", END), 2, "bad --since");
    assert_one_error(f, run(f, "--db", "DB", "--since", "ms", END), 2, "bad --since");
    assert_one_error(f, run(f, "--db", "DB", "--since", "5mss", END), 2, "bad --since");
    assert_one_error(f, run(f, "--db", "DB", "--since", "2026-13-01T00:00:00Z", END), 2,
                     "bad --since");
    assert_one_error(f, run(f, "--db", "DB", "--since", "2026-02-29T00:00:00Z", END), 2,
                     "bad --since");
    assert_one_error(f, run(f, "--db", "DB", "--since", "2026-06-02T10:00:00", END), 2,
                     "bad --since");
    assert_one_error(f, run(f, "--db", "DB", "--node", END), 2, "--node needs a value");
    assert_one_error(f, run(f, "--db", "", END), 2, "--db is empty");
    assert_one_error(f, run(f, "--db", "DB", "list", END), 2, "unknown command \"list\"");
    assert_one_error(f, run(f, "--db", "DB", "alerts", "stats", END), 2,
                     "unexpected argument \"stats\"");
    assert_one_error(f, run(f, "--db", "DB", "show", END), 2, "show needs a decision ID");
    assert_one_error(f, run(f, "--db", "DB", "show", "abc", END), 2, "bad decision ID");
    assert_one_error(f, run(f, "--db", "DB", "show", "0", END), 2, "bad decision ID");
    assert_one_error(f, run(f, "--db", "DB", "show", "1", "2", END), 2,
                     "unexpected argument");
    assert_one_error(f, run(f, "--db", "DB", "show", "1", "--node", "gpu-1", END), 2,
                     "--node does not apply to show");
    assert_one_error(f, run(f, "--db", "DB", "alerts", "--result", "recycled", END), 2,
                     "--result does not apply to alerts");
    assert_one_error(f, run(f, "--db", "DB", "--namespace", "ml", "alerts", END), 2,
                     "--namespace does not apply to alerts");
}

static void
test_runtime_errors(void **state)
{
    struct fx *f = *state;
    char path[256];
    FILE *fp;

    snprintf(path, sizeof(path), "%s/junk.db", f->f_dir);
    fp = fopen(path, "w");
    assert_non_null(fp);
    fputs("not sqlite at all, and long enough to be read as a header..............\n"
          "........................................................................\n",
          fp);
    fclose(fp);
    assert_one_error(f, run(f, "--db", path, END), 1, "not a database");
    snprintf(path, sizeof(path), "%s/zero.db", f->f_dir);
    fp = fopen(path, "w");
    assert_non_null(fp);
    fclose(fp);
    assert_one_error(f, run(f, "--db", path, END), 1, "schema version 0");
    /* Not a file at all: said so (a directory read as "disk I/O error"; a
     * FIFO blocked the reader forever). */
    assert_one_error(f, run(f, "--db", f->f_dir, END), 1, "is not a regular file");
    snprintf(path, sizeof(path), "%s/fifo.db", f->f_dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    assert_one_error(f, run(f, "alerts", "--db", path, END), 1, "is not a regular file");
    unlink(path);
}

static void
test_help(void **state)
{
    struct fx *f = *state;

    assert_int_equal(run(f, "--help", END), 0);
    assert_out_has(f, "usage: gpu-vram-watchdog audit");
    assert_fits_80(f->f_out);
    assert_string_equal(f->f_err, "");
    assert_int_equal(run(f, "stats", "-h", END), 0);
    assert_out_has(f, "--since");
    /* After "--" everything is a word. */
    assert_one_error(f, run(f, "--db", "DB", "--", "--help", END), 2, "unknown command");
}

/* ---- the formatter the daemon's `check` uses ---- */

static void
test_check_object(void **state)
{
    struct store_decision d = {.sd_time_ms = 0,
                               .sd_node = "gpu-1",
                               .sd_result = "would_recycle",
                               .sd_floor_mib = 1536,
                               .sd_victim = &v_ml,
                               .sd_dry_run = 1};
    json_t *j = audit_decision_json(&d, -1);
    char *text;

    assert_non_null(j);
    assert_true(json_is_null(json_object_get(j, "id")));
    assert_string_equal(json_string_value(json_object_get(j, "time")),
                        "1970-01-01T00:00:00.000Z");
    assert_string_equal(json_string_value(json_object_get(j, "action")), "none");
    assert_string_equal(json_string_value(json_object_get(j, "trigger")), "");
    /* Keys in SPEC order when dumped. */
    text = json_dumps(j, AUDIT_JSON_FLAGS);
    assert_non_null(strstr(text, "{\"id\":null,\"time\":"));
    assert_non_null(strstr(text,
                           "\"error\":null,\"verify\":null,\"gpu\":null,\"release\":null,"
                           "\"free_source\":null,\"prediction\":null}"));
    free(text);
    json_decref(j);
}

/* ---- GPU scope ---- */

static void
test_gpu_filter(void **state)
{
    struct fx *f = *state;
    char err[256];
    struct store *s = store_open(f->f_db, STORE_READWRITE, err, sizeof(err));
    struct store_decision d = {.sd_time_ms = T0 + 180000,
                               .sd_node = "gpu-1",
                               .sd_trigger = "GPUVRAMLow",
                               .sd_result = "would_recycle",
                               .sd_floor_mib = 1536,
                               .sd_free_known = 1,
                               .sd_free_mib = 700,
                               .sd_action = "evict",
                               .sd_victim = &v_ml,
                               .sd_gpu = "GPU-a"};
    json_t *a;

    assert_non_null(s);
    assert_int_equal(store_decision_record(s, &d, NULL, err, sizeof(err)), 0);
    d.sd_gpu = "GPU-b";
    d.sd_time_ms += 1000;
    assert_int_equal(store_decision_record(s, &d, NULL, err, sizeof(err)), 0);
    store_close(s);

    assert_int_equal(run(f, "--db", "DB", "--gpu", "GPU-a", "--format", "json", END), 0);
    assert_ids(f, "[7]");
    a = out_json(f);
    assert_string_equal(json_string_value(json_object_get(json_array_get(a, 0), "gpu")),
                        "GPU-a");
    assert_true(json_is_null(json_object_get(json_array_get(a, 0), "release")));
    json_decref(a);
    assert_int_equal(
        run(f, "--db", "DB", "--gpu=GPU-b", "--node", "gpu-1", "--format", "json", END),
        0);
    assert_ids(f, "[8]");
    assert_int_equal(run(f, "--db", "DB", "--gpu", "GPU-z", END), 0);
    assert_string_equal(f->f_out, "no decisions\n");
    /* the table names the GPU beside the node; show has a line for it */
    assert_int_equal(run(f, "--db", "DB", "--gpu", "GPU-a", END), 0);
    assert_fits_80(f->f_out);
    assert_out_has(f, "      7 06-02 10:03 gpu-1/GPU-a  would_recycle");
    assert_int_equal(run(f, "show", "7", "--db", "DB", END), 0);
    assert_out_has(f, "  gpu         GPU-a\n");
    assert_int_equal(run(f, "show", "1", "--db", "DB", END), 0);
    assert_null(strstr(f->f_out, "  gpu "));
    /* stats count what the listing shows */
    assert_int_equal(
        run(f, "stats", "--db", "DB", "--gpu", "GPU-b", "--format", "json", END), 0);
    a = out_json(f);
    assert_json_equal_text(
        a,
        "[{\"by\":\"result\",\"key\":\"would_recycle\",\"count\":1},"
        "{\"by\":\"namespace\",\"key\":\"ml\",\"result\":\"would_recycle\",\"count\":1}]");
    json_decref(a);
    assert_one_error(f, run(f, "alerts", "--db", "DB", "--gpu", "GPU-a", END), 2,
                     "--gpu does not apply to alerts");
    assert_one_error(f, run(f, "show", "7", "--db", "DB", "--gpu", "GPU-a", END), 2,
                     "--gpu does not apply to show");
}

/* Copies the file src to dst. */
static void
copy_file(const char *src, const char *dst)
{
    char *data = slurp(src);
    struct stat sb;
    FILE *fp;

    assert_int_equal(stat(src, &sb), 0);
    fp = fopen(dst, "w");
    assert_non_null(fp);
    assert_int_equal(fwrite(data, 1, (size_t)sb.st_size, fp), (size_t)sb.st_size);
    assert_int_equal(fclose(fp), 0);
    free(data);
}

/* The database in a directory the reader may not write (a read-only mount,
 * a copy on read-only media), with no daemon on it: SQLite cannot create
 * the -shm file WAL wants, yet `audit` reads it, and writes nothing there.
 * As root the reader runs as nobody, since root may write anywhere. */
static void
test_readonly_directory(void **state)
{
    struct fx *f = *state;
    char dir[] = "/tmp/gvw-audit-ro-XXXXXX", db[64], out[16384];
    int pfd[2], status, entries = 0;
    size_t len = 0;
    ssize_t n;
    pid_t pid;
    DIR *d;

    assert_non_null(mkdtemp(dir));
    snprintf(db, sizeof(db), "%s/audit.db", dir);
    copy_file(f->f_db, db); /* the seed closed its store: no -wal is left */
    if (geteuid() == 0)
        assert_true(chown(db, 65534, 65534) == 0 && chown(dir, 65534, 65534) == 0);
    assert_int_equal(chmod(dir, 0555), 0);
    assert_int_equal(pipe(pfd), 0);
    fflush(stdout);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char *argv[] = {"audit", "--db", db, "--format", "json", "--limit", "0", NULL};

        dup2(pfd[1], 1);
        close(pfd[0]);
        close(pfd[1]);
        if (geteuid() == 0 && (setgid(65534) == -1 || setuid(65534) == -1))
            _exit(99);
        _exit(audit_main(7, argv));
    }
    close(pfd[1]);
    while (len < sizeof(out) - 1 &&
           (n = read(pfd[0], out + len, sizeof(out) - 1 - len)) > 0)
        len += (size_t)n;
    out[len] = '\0';
    close(pfd[0]);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    d = opendir(dir);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        entries += e->d_name[0] != '.';
    closedir(d);
    chmod(dir, 0700);
    unlink(db);
    rmdir(dir);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_non_null(strstr(out, "\"id\":6,"));
    assert_non_null(strstr(out, "\"id\":1,"));
    assert_int_equal(entries, 1); /* audit.db alone */
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_list_json_all, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_filters, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_table, setup, teardown),
        cmocka_unit_test_setup_teardown(test_table_longest_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostile_text, setup, teardown),
        cmocka_unit_test_setup_teardown(test_crafted_schema_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unreadable_rows_skipped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_show, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gpu_filter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_alerts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stats, setup, teardown),
        cmocka_unit_test_setup_teardown(test_db_from_env_and_flag, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty_database, setup, teardown),
        cmocka_unit_test_setup_teardown(test_usage_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_runtime_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_help, setup, teardown),
        cmocka_unit_test_setup_teardown(test_readonly_directory, setup, teardown),
        cmocka_unit_test(test_check_object),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
