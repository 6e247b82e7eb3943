/* test_store.c -- the audit store: files, schema, transactions, decisions, queries */
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
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <sqlite3.h>

#include "store.h"
#include "clock.h"
#include "store_int.h" /* the FULL and query-plan tests reach the handle */
#include "store_json.h"

struct fx {
    char f_dir[64];
    char f_path[128];
    char f_err[512];
};

static int
setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));

    if (f == NULL)
        return -1;
    snprintf(f->f_dir, sizeof(f->f_dir), "/tmp/gvw-store-XXXXXX");
    if (mkdtemp(f->f_dir) == NULL) {
        free(f);
        return -1;
    }
    snprintf(f->f_path, sizeof(f->f_path), "%s/audit.db", f->f_dir);
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    struct fx *f = *state;
    char p[512];
    struct dirent *e;
    DIR *d = opendir(f->f_dir);

    while (d != NULL && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(p, sizeof(p), "%s/%s", f->f_dir, e->d_name);
        unlink(p);
    }
    if (d != NULL)
        closedir(d);
    rmdir(f->f_dir);
    free(f);
    return 0;
}

static struct store *
open_rw(struct fx *f)
{
    struct store *s = store_open(f->f_path, STORE_READWRITE, f->f_err, sizeof(f->f_err));

    if (s == NULL)
        fail_msg("store_open: %s", f->f_err);
    return s;
}

static struct store *
open_ro(struct fx *f)
{
    struct store *s = store_open(f->f_path, STORE_READONLY, f->f_err, sizeof(f->f_err));

    if (s == NULL)
        fail_msg("store_open readonly: %s", f->f_err);
    return s;
}

/* One integer answer from a separate plain sqlite3 connection. */
static int64_t
sql_int(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int64_t v = -1;

    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

static void
sql_exec(const char *path, const char *sql)
{
    sqlite3 *db = NULL;

    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
}

static int
add_alert(struct fx *f, struct store *s, int64_t ms, const char *name, int64_t *id)
{
    struct store_alert a = {
        .sa_received_ms = ms,
        .sa_alertname = name,
        .sa_status = "firing",
        .sa_fingerprint = "abc123",
        .sa_starts_at = "2026-06-02T09:59:00Z",
        .sa_labels_json = "{\"node\":\"gpu-1\"}",
        .sa_annotations_json = "{}",
    };

    return store_add_alert(s, &a, id, f->f_err, sizeof(f->f_err));
}

static int
count_alerts_cb(int64_t id, const struct store_alert *a, void *arg)
{
    (*(int64_t *)arg)++;
    return 0;
}

static int64_t
count_alerts(struct store *s)
{
    struct store_filter all = {0};
    int64_t n = 0;
    char err[256];
    int64_t rc = store_query_alerts(s, &all, count_alerts_cb, &n, err, sizeof(err));

    assert_int_equal(rc, n);
    return n;
}

/* ---- the decision used throughout ---- */

static const struct store_candidate cands[] = {
    {"ml", "onnx-1", 10700, 1, 2000, 1, NULL},
    {"llm", "vllm-0", 3000, 1, 4000, 0, "within_budget"},
    {"cv", "yolo-2", 900, 0, 0, 0, "bad_budget"},
};
static const struct store_victim victim = {"ml", "onnx-1", 10700, 1, 2000, 8700};

static struct store_decision
full_decision(void)
{
    struct store_decision d = {
        .sd_time_ms = 1717322400123,
        .sd_node = "gpu-1",
        .sd_trigger = "GPUVRAMLow",
        .sd_fingerprint = "abc123",
        .sd_result = "recycled",
        .sd_reason = "ml/onnx-1 used 10700 MiB over a 2000 MiB budget",
        .sd_free_known = 1,
        .sd_free_mib = 512,
        .sd_floor_mib = 1536,
        .sd_dry_run = 0,
        .sd_action = "evict",
        .sd_victim = &victim,
        .sd_candidates = cands,
        .sd_candidate_count = 3,
        .sd_error = NULL,
        .sd_verified = 1,
        .sd_verify_free_mib = 9000,
        .sd_verify_seconds = 12.5,
    };
    return d;
}

static void
assert_str_or_null(const char *want, const char *got)
{
    if (want == NULL)
        assert_null(got);
    else {
        assert_non_null(got);
        assert_string_equal(want, got);
    }
}

static void
assert_decision(const struct store_decision *w, const struct store_decision *g)
{
    size_t i;

    assert_int_equal(w->sd_time_ms, g->sd_time_ms);
    assert_string_equal(w->sd_node, g->sd_node);
    assert_string_equal(w->sd_trigger, g->sd_trigger);
    assert_string_equal(w->sd_fingerprint, g->sd_fingerprint);
    assert_string_equal(w->sd_result, g->sd_result);
    assert_string_equal(w->sd_reason, g->sd_reason);
    assert_int_equal(w->sd_free_known, g->sd_free_known);
    if (w->sd_free_known)
        assert_int_equal(w->sd_free_mib, g->sd_free_mib);
    assert_int_equal(w->sd_floor_mib, g->sd_floor_mib);
    assert_int_equal(w->sd_dry_run, g->sd_dry_run);
    assert_string_equal(w->sd_action, g->sd_action);
    assert_str_or_null(w->sd_error, g->sd_error);
    assert_int_equal(w->sd_verified, g->sd_verified);
    if (w->sd_verified) {
        assert_int_equal(w->sd_verify_free_mib, g->sd_verify_free_mib);
        assert_true(w->sd_verify_seconds == g->sd_verify_seconds);
    }
    assert_int_equal(w->sd_alert_id, g->sd_alert_id);
    assert_str_or_null(w->sd_gpu, g->sd_gpu);
    if (w->sd_release == NULL)
        assert_null(g->sd_release);
    else {
        assert_non_null(g->sd_release);
        assert_string_equal(w->sd_release->sr_url, g->sd_release->sr_url);
        assert_int_equal(w->sd_release->sr_status_known, g->sd_release->sr_status_known);
        assert_int_equal(w->sd_release->sr_status, g->sd_release->sr_status);
        assert_int_equal(w->sd_release->sr_freed_known, g->sd_release->sr_freed_known);
        assert_int_equal(w->sd_release->sr_freed_mib, g->sd_release->sr_freed_mib);
        assert_int_equal(w->sd_release->sr_seconds_known,
                         g->sd_release->sr_seconds_known);
        assert_true(w->sd_release->sr_seconds == g->sd_release->sr_seconds);
    }
    if (w->sd_victim == NULL)
        assert_null(g->sd_victim);
    else {
        assert_non_null(g->sd_victim);
        assert_string_equal(w->sd_victim->sv_namespace, g->sd_victim->sv_namespace);
        assert_string_equal(w->sd_victim->sv_pod, g->sd_victim->sv_pod);
        assert_int_equal(w->sd_victim->sv_used_mib, g->sd_victim->sv_used_mib);
        assert_int_equal(w->sd_victim->sv_has_budget, g->sd_victim->sv_has_budget);
        if (w->sd_victim->sv_has_budget) {
            assert_int_equal(w->sd_victim->sv_budget_mib, g->sd_victim->sv_budget_mib);
            assert_int_equal(w->sd_victim->sv_overshoot_mib,
                             g->sd_victim->sv_overshoot_mib);
        }
    }
    if (w->sd_release == NULL)
        assert_null(g->sd_release);
    else {
        assert_non_null(g->sd_release);
        assert_string_equal(w->sd_release->sr_url, g->sd_release->sr_url);
        assert_int_equal(w->sd_release->sr_status_known, g->sd_release->sr_status_known);
        if (w->sd_release->sr_status_known)
            assert_int_equal(w->sd_release->sr_status, g->sd_release->sr_status);
        assert_int_equal(w->sd_release->sr_freed_known, g->sd_release->sr_freed_known);
        if (w->sd_release->sr_freed_known)
            assert_int_equal(w->sd_release->sr_freed_mib, g->sd_release->sr_freed_mib);
        assert_int_equal(w->sd_release->sr_seconds_known,
                         g->sd_release->sr_seconds_known);
        if (w->sd_release->sr_seconds_known)
            assert_true(w->sd_release->sr_seconds == g->sd_release->sr_seconds);
    }
    assert_int_equal(w->sd_candidate_count, g->sd_candidate_count);
    for (i = 0; i < w->sd_candidate_count; i++) {
        const struct store_candidate *a = &w->sd_candidates[i], *b = &g->sd_candidates[i];

        assert_string_equal(a->sc_namespace, b->sc_namespace);
        assert_string_equal(a->sc_pod, b->sc_pod);
        assert_int_equal(a->sc_used_mib, b->sc_used_mib);
        assert_int_equal(a->sc_has_budget, b->sc_has_budget);
        if (a->sc_has_budget)
            assert_int_equal(a->sc_budget_mib, b->sc_budget_mib);
        assert_int_equal(a->sc_eligible, b->sc_eligible);
        assert_str_or_null(a->sc_why_not, b->sc_why_not);
    }
}

struct expect {
    const struct store_decision *e_want;
    int64_t e_id;
    int e_calls;
};

static int
expect_cb(int64_t id, const struct store_decision *d, void *arg)
{
    struct expect *e = arg;

    e->e_calls++;
    assert_int_equal(e->e_id, id);
    assert_decision(e->e_want, d);
    return 0;
}

static void
assert_stored(struct store *s, int64_t id, const struct store_decision *want)
{
    struct expect e = {.e_want = want, .e_id = id};
    char err[256];

    assert_int_equal(store_get_decision(s, id, expect_cb, &e, err, sizeof(err)), 1);
    assert_int_equal(e.e_calls, 1);
}

/* ---- files, schema, modes ---- */

static void
test_open_creates_0600(void **state)
{
    struct fx *f = *state;
    mode_t old = umask(0);
    struct store *s = open_rw(f);
    struct stat sb;

    umask(old);
    assert_int_equal(stat(f->f_path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    store_close(s);

    /* A umask that takes the owner's write bit must not matter either. */
    unlink(f->f_path);
    old = umask(0277);
    s = open_rw(f);
    umask(old);
    assert_int_equal(stat(f->f_path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    store_close(s);
}

static void
test_existing_file_keeps_mode(void **state)
{
    struct fx *f = *state;
    int fd = open(f->f_path, O_CREAT | O_WRONLY, 0640);
    struct stat sb;

    assert_true(fd >= 0);
    fchmod(fd, 0640);
    close(fd);
    store_close(open_rw(f));
    assert_int_equal(stat(f->f_path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0640);
}

static void
test_wal_and_version(void **state)
{
    struct fx *f = *state;
    struct store *s = open_rw(f);
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;

    assert_int_equal(sql_int(f->f_path, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
    assert_int_equal(sqlite3_open_v2(f->f_path, &db, SQLITE_OPEN_READONLY, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "wal");
    sqlite3_finalize(st);
    sqlite3_close(db);
    store_close(s);
}

static void
test_reopen_preserves_data(void **state)
{
    struct fx *f = *state;
    struct store *s = open_rw(f);
    int64_t id1, id2;

    assert_int_equal(add_alert(f, s, 1000, "GPUVRAMLow", &id1), 0);
    assert_int_equal(add_alert(f, s, 2000, "Other", &id2), 0);
    assert_true(id2 > id1);
    store_close(s);
    s = open_rw(f);
    assert_int_equal(count_alerts(s), 2);
    store_close(s);
    assert_int_equal(sql_int(f->f_path, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
}

static void
test_migrates_empty_file(void **state)
{
    struct fx *f = *state;
    int fd = open(f->f_path, O_CREAT | O_WRONLY, 0600);
    struct store *s;

    assert_true(fd >= 0);
    close(fd);
    /* A reader refuses a file the daemon has not migrated yet. */
    assert_null(store_open(f->f_path, STORE_READONLY, f->f_err, sizeof(f->f_err)));
    assert_non_null(strstr(f->f_err, "older"));

    s = open_rw(f);
    assert_int_equal(add_alert(f, s, 1000, "GPUVRAMLow", NULL), 0);
    store_close(s);
    assert_int_equal(sql_int(f->f_path, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
    /* Idempotent: a second open changes nothing and keeps the row. */
    s = open_rw(f);
    assert_int_equal(count_alerts(s), 1);
    store_close(s);
    assert_int_equal(sql_int(f->f_path,
                             "SELECT COUNT(*) FROM sqlite_master WHERE type='table'"
                             " AND name IN ('alerts','decisions')"),
                     2);
}

static void
test_newer_schema_refused(void **state)
{
    struct fx *f = *state;

    store_close(open_rw(f));
    sql_exec(f->f_path, "PRAGMA user_version = 99");
    assert_null(store_open(f->f_path, STORE_READWRITE, f->f_err, sizeof(f->f_err)));
    assert_non_null(strstr(f->f_err, "newer"));
    assert_null(store_open(f->f_path, STORE_READONLY, f->f_err, sizeof(f->f_err)));
    assert_non_null(strstr(f->f_err, "newer"));
}

static void
test_not_a_database(void **state)
{
    struct fx *f = *state;
    FILE *fp = fopen(f->f_path, "w");

    assert_non_null(fp);
    fputs("this is not an sqlite database, but it is long enough to have a header....\n"
          "....................................................................\n",
          fp);
    fclose(fp);
    assert_null(store_open(f->f_path, STORE_READWRITE, f->f_err, sizeof(f->f_err)));
    assert_non_null(strstr(f->f_err, "not a database"));
    assert_null(store_open(f->f_path, STORE_READONLY, f->f_err, sizeof(f->f_err)));
}

static void
test_missing_parent_dir(void **state)
{
    struct fx *f = *state;
    char p[256];

    snprintf(p, sizeof(p), "%s/nope/audit.db", f->f_dir);
    assert_null(store_open(p, STORE_READWRITE, f->f_err, sizeof(f->f_err)));
    assert_non_null(strstr(f->f_err, "No such file"));
}

static void
test_readonly_missing_not_created(void **state)
{
    struct fx *f = *state;
    struct stat sb;
    char want[256];

    assert_null(store_open(f->f_path, STORE_READONLY, f->f_err, sizeof(f->f_err)));
    snprintf(want, sizeof(want), "audit database %s does not exist", f->f_path);
    assert_string_equal(f->f_err, want);
    assert_int_equal(stat(f->f_path, &sb), -1);
    assert_int_equal(errno, ENOENT);
}

static void
test_readonly_cannot_write(void **state)
{
    struct fx *f = *state;
    struct store *s = open_rw(f), *ro;
    struct store_decision d = full_decision();
    int64_t id = 0;

    store_close(s);
    ro = open_ro(f);
    assert_int_equal(add_alert(f, ro, 1000, "GPUVRAMLow", &id), -1);
    assert_non_null(strstr(f->f_err, "readonly"));
    assert_int_equal(store_decision_record(ro, &d, &id, f->f_err, sizeof(f->f_err)), -1);
    /* SQLite lets a reader BEGIN IMMEDIATE; the write inside still fails. */
    assert_int_equal(store_begin(ro, f->f_err, sizeof(f->f_err)), 0);
    assert_int_equal(add_alert(f, ro, 1000, "GPUVRAMLow", &id), -1);
    store_rollback(ro);
    assert_int_equal(store_prune(ro, 5000, f->f_err, sizeof(f->f_err)), -1);
    store_close(ro);
}

/* SQLITE_FULL (a full disk) must come back as -1, and the store must carry
 * on once there is room again. max_page_count fakes the full disk. */
static void
test_full_disk_fails_cleanly(void **state)
{
    struct fx *f = *state;
    struct store *s = open_rw(f);
    char big[4096];
    struct store_alert a = {
        .sa_received_ms = 1, .sa_alertname = big, .sa_status = "firing"};
    int i, rc = 0;

    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    assert_int_equal(
        sqlite3_exec(s->st_db, "PRAGMA max_page_count = 40", NULL, NULL, NULL),
        SQLITE_OK);
    assert_int_equal(store_begin(s, f->f_err, sizeof(f->f_err)), 0);
    for (i = 0; i < 200 && rc == 0; i++)
        rc = store_add_alert(s, &a, NULL, f->f_err, sizeof(f->f_err));
    assert_int_equal(rc, -1);
    assert_non_null(strstr(f->f_err, "full"));
    store_rollback(s);
    assert_int_equal(count_alerts(s), 0);
    assert_int_equal(
        sqlite3_exec(s->st_db, "PRAGMA max_page_count = 1000000", NULL, NULL, NULL),
        SQLITE_OK);
    assert_int_equal(add_alert(f, s, 1, "GPUVRAMLow", NULL), 0);
    assert_int_equal(count_alerts(s), 1);
    store_close(s);
}

/* ---- transactions ---- */

static void
test_group_commit(void **state)
{
    struct fx *f = *state;
    struct store *s = open_rw(f);
    struct timespec t0, t1;
    int i;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(store_begin(s, f->f_err, sizeof(f->f_err)), 0);
    for (i = 0; i < 5000; i++)
        assert_int_equal(add_alert(f, s, 1000 + i, "GPUVRAMLow", NULL), 0);
    /* Nothing is visible to a reader before the commit. */
    assert_int_equal(sql_int(f->f_path, "SELECT COUNT(*) FROM alerts"), 0);
    assert_int_equal(store_commit(s, f->f_err, sizeof(f->f_err)), 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_int_equal(sql_int(f->f_path, "SELECT COUNT(*) FROM alerts"), 5000);
    print_message("5000 alerts in one transaction: %.1f ms\n",
                  (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
                      (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
    store_close(s);
}

static void
test_rollback_leaves_nothing(void **state)
{
    struct fx *f = *state;
    struct store *s = open_rw(f);
    struct store_decision d = full_decision();
    int i;

    assert_int_equal(store_begin(s, f->f_err, sizeof(f->f_err)), 0);
    for (i = 0; i < 10; i++)
        assert_int_equal(add_alert(f, s, 1000 + i, "GPUVRAMLow", NULL), 0);
    assert_int_equal(store_decision_record(s, &d, NULL, f->f_err, sizeof(f->f_err)), 0);
    store_rollback(s);
    store_rollback(s); /* twice: a no-op */
    assert_int_equal(count_alerts(s), 0);
    assert_int_equal(sql_int(f->f_path, "SELECT COUNT(*) FROM decisions"), 0);
    /* A begin inside a begin is refused, and the outer one still works. */
    assert_int_equal(store_begin(s, f->f_err, sizeof(f->f_err)), 0);
    assert_int_equal(store_begin(s, f->f_err, sizeof(f->f_err)), -1);
    assert_int_equal(add_alert(f, s, 1, "GPUVRAMLow", NULL), 0);
    assert_int_equal(store_commit(s, f->f_err, sizeof(f->f_err)), 0);
    assert_int_equal(count_alerts(s), 1);
    /* A commit with nothing open fails. */
    assert_int_equal(store_commit(s, f->f_err, sizeof(f->f_err)), -1);
    store_close(s);
}

/* ---- decisions ---- */

/* A finish marked sd_candidates_stored leaves the row's candidates as they
 * are (it does not encode them again); everything else is overwritten. */
static void
test_finish_keeps_stored_candidates(void **state)
{
    struct fx *f = *state;
    struct store *s = open_rw(f);
    struct store_decision d = full_decision(), later;
    int64_t id;

    assert_int_equal(store_decision_start(s, &d, &id, f->f_err, sizeof(f->f_err)), 0);
    assert_int_equal(store_decision_finish(s, id, &d, f->f_err, sizeof(f->f_err)), 0);
    later = d;
    later.sd_candidates_stored = 1;
    later.sd_candidates = NULL; /* not read: the stored ones stay */
    later.sd_candidate_count = 0;
    later.sd_reason = "verified later";
    assert_int_equal(store_decision_finish(s, id, &later, f->f_err, sizeof(f->f_err)), 0);
    later.sd_candidates = d.sd_candidates;
    later.sd_candidate_count = d.sd_candidate_count;
    assert_stored(s, id, &later);
    store_close(s);
}

static void
test_decision_start_finish(void **state)
{
    struct fx *f = *state;
    struct store *s = open_rw(f);
    struct store_decision d = full_decision(), started;
    int64_t alert_id, id;

    assert_int_equal(add_alert(f, s, 1000, "GPUVRAMLow", &alert_id), 0);
    d.sd_alert_id = alert_id;
    d.sd_error = "left over";
    assert_int_equal(store_decision_start(s, &d, &id, f->f_err, sizeof(f->f_err)), 0);
    started = d;
    started.sd_result = "in_progress";
    started.sd_error = NULL;
    assert_stored(s, id, &started);

    d.sd_error = "first candidate refused by a PodDisruptionBudget";
    assert_int_equal(store_decision_finish(s, id, &d, f->f_err, sizeof(f->f_err)), 0);
    assert_stored(s, id, &d);
    /* The indexed columns follow the victim. */
    assert_int_equal(sql_int(f->f_path,
                             "SELECT COUNT(*) FROM decisions"
                             " WHERE victim_namespace = 'ml' AND victim_pod = 'onnx-1'"),
                     1);

    assert_int_equal(store_decision_finish(s, id + 100, &d, f->f_err, sizeof(f->f_err)),
                     -1);
    assert_non_null(strstr(f->f_err, "no decision"));
    store_close(s);
}

static void
test_decision_record_nulls(void **state)
{
    struct fx *f = *state;
    struct store *s = open_rw(f);
    struct store_victim nobudget = {"batch", "trainer", 5000, 0, 0, 0};
    struct store_decision d =
                              {
                                  .sd_time_ms = 5,
                                  .sd_node = "",
                                  .sd_trigger = "GPUVRAMLow",
                                  .sd_fingerprint = NULL,
                                  .sd_result = "coalesced",
                                  .sd_reason = NULL,
                                  .sd_floor_mib = 1536,
                                  .sd_action = NULL,
                              },
                          want;
    int64_t id;

    assert_int_equal(store_decision_record(s, &d, &id, f->f_err, sizeof(f->f_err)), 0);
    want = d;
    want.sd_fingerprint = "";
    want.sd_reason = "";
    want.sd_action = "none";
    assert_stored(s, id, &want);

    d.sd_victim = &nobudget;
    d.sd_result = "would_recycle";
    d.sd_dry_run = 1;
    d.sd_action = "evict";
    assert_int_equal(store_decision_record(s, &d, &id, f->f_err, sizeof(f->f_err)), 0);
    want = d;
    want.sd_fingerprint = "";
    want.sd_reason = "";
    assert_stored(s, id, &want);

    /* An alert id that does not exist breaks the foreign key. */
    d.sd_alert_id = 424242;
    assert_int_equal(store_decision_record(s, &d, &id, f->f_err, sizeof(f->f_err)), -1);
    assert_non_null(strstr(f->f_err, "FOREIGN KEY"));
    /* A result is required. */
    d.sd_alert_id = 0;
    d.sd_result = NULL;
    assert_int_equal(store_decision_record(s, &d, &id, f->f_err, sizeof(f->f_err)), -1);
    store_close(s);
}

static void
test_reopen_marks_interrupted(void **state)
{
    struct fx *f = *state;
    struct store *s = open_rw(f);
    struct store_decision d = full_decision(), want;
    int64_t id, done;

    assert_int_equal(store_decision_start(s, &d, &id, f->f_err, sizeof(f->f_err)), 0);
    assert_int_equal(store_decision_record(s, &d, &done, f->f_err, sizeof(f->f_err)), 0);
    assert_int_equal(store_interrupted_count(s), 0);
    store_close(s); /* the daemon stops mid-decision */

    /* A reader sees the row as it was, and marks nothing. */
    s = open_ro(f);
    want = d;
    want.sd_result = "in_progress";
    assert_stored(s, id, &want);
    store_close(s);

    s = open_rw(f);
    assert_int_equal(store_interrupted_count(s), 1);
    want.sd_error = STORE_INTERRUPTED_ERROR;
    assert_stored(s, id, &want);
    assert_stored(s, done, &d); /* finished rows are untouched */
    store_close(s);

    s = open_rw(f);
    assert_int_equal(store_interrupted_count(s), 0);
    assert_stored(s, id, &want);
    store_close(s);
}

/* The release object round-trips: asked (every figure), and a dry run's
 * (the URL only). */
static void
test_release_round_trip(void **state)
{
    struct fx *f = *state;
    struct store *s = open_rw(f);
    struct store_decision d = full_decision();
    struct store_release
        asked = {"http://10.42.0.17:8080/api/models/unload", 1, 200, 1, -5, 1, 2.5},
        dry = {"http://[fd00::1]:8081/release", 0, 0, 0, 0, 0, 0};
    int64_t id;

    d.sd_result = "released";
    d.sd_verified = 0;
    d.sd_release = &asked;
    assert_int_equal(store_decision_record(s, &d, &id, f->f_err, sizeof(f->f_err)), 0);
    assert_stored(s, id, &d);
    d.sd_result = "would_recycle";
    d.sd_release = &dry;
    assert_int_equal(store_decision_record(s, &d, &id, f->f_err, sizeof(f->f_err)), 0);
    assert_stored(s, id, &d);
    store_close(s);
}

/* A database of schema 1 is migrated; a recycle row left with its verify
 * pending is marked at the next start and counted; the row keeps its result. */
static void
test_migrate_and_verify_pending(void **state)
{
    struct fx *f = *state;
    struct store *s = open_rw(f);
    struct store_decision d = full_decision(), want;
    int64_t old, id;

    assert_int_equal(store_decision_start(s, &d, &old, f->f_err, sizeof(f->f_err)), 0);
    store_close(s);
    /* Back to schema 1, as the previous release left it. */
    sql_exec(f->f_path, "DROP INDEX decisions_verify_pending;"
                        "DROP INDEX decisions_by_gpu;"
                        "ALTER TABLE decisions DROP COLUMN verify_pending;"
                        "ALTER TABLE decisions DROP COLUMN gpu;"
                        "ALTER TABLE decisions DROP COLUMN release;"
                        "ALTER TABLE decisions DROP COLUMN free_source;"
                        "ALTER TABLE decisions DROP COLUMN prediction;"
                        "ALTER TABLE decisions DROP COLUMN replica;"
                        "PRAGMA user_version = 1;");
    s = open_rw(f);
    assert_int_equal(sql_int(f->f_path, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
    assert_int_equal(store_interrupted_count(s), 1); /* the old in_progress row */

    /* A recycle recorded before its verify, then the daemon dies. */
    assert_int_equal(store_decision_start(s, &d, &id, f->f_err, sizeof(f->f_err)), 0);
    d.sd_verify_pending = 1;
    d.sd_verified = 0;
    assert_int_equal(store_decision_finish(s, id, &d, f->f_err, sizeof(f->f_err)), 0);
    store_close(s);
    s = open_rw(f);
    assert_int_equal(store_interrupted_count(s), 1);
    want = d;
    want.sd_error = STORE_UNVERIFIED_ERROR;
    assert_stored(s, id, &want);
    store_close(s);
    s = open_rw(f);
    assert_int_equal(store_interrupted_count(s), 0);
    /* A verify that ended clears the mark: nothing to find. */
    d.sd_verify_pending = 0;
    d.sd_error = NULL;
    assert_int_equal(store_decision_finish(s, id, &d, f->f_err, sizeof(f->f_err)), 0);
    store_close(s);
    s = open_rw(f);
    assert_int_equal(store_interrupted_count(s), 0);
    assert_stored(s, id, &d);
    store_close(s);
}

/* ---- pruning ---- */

static void
test_prune(void **state)
{
    struct fx *f = *state;
    struct store *s = open_rw(f);
    struct store_decision d = {.sd_result = "coalesced", .sd_floor_mib = 1};
    int64_t old_alert, new_alert;

    assert_int_equal(add_alert(f, s, 1000, "GPUVRAMLow", &old_alert), 0);
    assert_int_equal(add_alert(f, s, 2000, "GPUVRAMLow", NULL), 0);
    assert_int_equal(add_alert(f, s, 9000, "GPUVRAMLow", &new_alert), 0);
    d.sd_time_ms = 1500;
    assert_int_equal(store_decision_record(s, &d, NULL, f->f_err, sizeof(f->f_err)), 0);
    d.sd_time_ms = 9500; /* a decision that outlives its alert */
    d.sd_alert_id = old_alert;
    assert_int_equal(store_decision_record(s, &d, NULL, f->f_err, sizeof(f->f_err)), 0);

    assert_int_equal(store_prune(s, 5000, f->f_err, sizeof(f->f_err)), 3);
    assert_int_equal(count_alerts(s), 1);
    assert_int_equal(sql_int(f->f_path, "SELECT COUNT(*) FROM decisions"), 1);
    assert_int_equal(
        sql_int(f->f_path, "SELECT COUNT(*) FROM decisions WHERE alert_id IS NULL"), 1);
    assert_int_equal(store_prune(s, 5000, f->f_err, sizeof(f->f_err)), 0);

    /* Inside a group commit it nests, and a rollback undoes it. */
    assert_int_equal(store_begin(s, f->f_err, sizeof(f->f_err)), 0);
    assert_int_equal(store_prune(s, 100000, f->f_err, sizeof(f->f_err)), 2);
    store_rollback(s);
    assert_int_equal(count_alerts(s), 1);

    /* Ids are never reused, even after a prune empties a table. */
    assert_int_equal(store_prune(s, 100000, f->f_err, sizeof(f->f_err)), 2);
    assert_int_equal(add_alert(f, s, 1, "GPUVRAMLow", &old_alert), 0);
    assert_true(old_alert > new_alert);
    store_close(s);
}

/* ---- readers ---- */

static void
test_readonly_while_writer(void **state)
{
    struct fx *f = *state;
    struct store *w = open_rw(f), *r;
    int i;

    assert_int_equal(add_alert(f, w, 1, "GPUVRAMLow", NULL), 0);
    assert_int_equal(store_begin(w, f->f_err, sizeof(f->f_err)), 0);
    for (i = 0; i < 10; i++)
        assert_int_equal(add_alert(f, w, 2 + i, "GPUVRAMLow", NULL), 0);
    /* The writer holds the write lock; a reader opens and reads at once. */
    r = open_ro(f);
    assert_int_equal(count_alerts(r), 1);
    assert_int_equal(store_commit(w, f->f_err, sizeof(f->f_err)), 0);
    assert_int_equal(count_alerts(r), 11);
    store_close(r);
    store_close(w);
}

/* ---- queries ---- */

static int
collect_ids(int64_t id, const struct store_decision *d, void *arg)
{
    json_array_append_new(arg, json_integer(id));
    return 0;
}

/* The ids a filter lists, as "[3,2]" (caller frees). */
static char *
ids_for(struct store *s, const struct store_filter *flt)
{
    json_t *a = json_array();
    char err[256], *out;

    assert_true(store_query_decisions(s, flt, collect_ids, a, err, sizeof(err)) >= 0);
    out = json_dumps(a, JSON_COMPACT);
    json_decref(a);
    return out;
}

static void
assert_ids(struct store *s, const struct store_filter *flt, const char *want)
{
    char *got = ids_for(s, flt);

    assert_string_equal(got, want);
    free(got);
}

/* Decisions 1..6 on two nodes, three results, two victim namespaces. */
static struct store *
seed(struct fx *f)
{
    static const struct store_victim v_ml = {"ml", "onnx-1", 9000, 1, 2000, 7000};
    static const struct store_victim v_cv = {"cv", "yolo", 5000, 1, 4000, 1000};
    static const struct {
        int64_t t;
        const char *node, *result;
        const struct store_victim *v;
    } rows[] = {
        {1000, "gpu-1", "recycled", &v_ml},
        {2000, "gpu-2", "skipped_recovered", NULL},
        {3000, "gpu-1", "would_recycle", &v_cv},
        {3000, "gpu-2", "recycled", &v_ml},
        {5000, "gpu-1", "skipped_recovered", NULL},
        {6000, "gpu-1", "recycled", &v_cv},
    };
    struct store *s = open_rw(f);
    size_t i;

    for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct store_decision d = {.sd_time_ms = rows[i].t,
                                   .sd_node = rows[i].node,
                                   .sd_result = rows[i].result,
                                   .sd_victim = rows[i].v,
                                   .sd_floor_mib = 1536,
                                   .sd_action = "evict"};
        assert_int_equal(store_decision_record(s, &d, NULL, f->f_err, sizeof(f->f_err)),
                         0);
    }
    return s;
}

static void
test_query_filters(void **state)
{
    struct fx *f = *state;
    struct store *s = seed(f);
    struct store_filter flt = {0};

    assert_ids(s, &flt, "[6,5,4,3,2,1]"); /* equal times: higher id first */
    flt.sf_limit = 2;
    assert_ids(s, &flt, "[6,5]");
    flt = (struct store_filter){.sf_node = "gpu-2"};
    assert_ids(s, &flt, "[4,2]");
    flt = (struct store_filter){.sf_namespace = "ml"};
    assert_ids(s, &flt, "[4,1]");
    flt = (struct store_filter){.sf_result = "recycled"};
    assert_ids(s, &flt, "[6,4,1]");
    flt = (struct store_filter){.sf_since_ms = 3000};
    assert_ids(s, &flt, "[6,5,4,3]");
    flt = (struct store_filter){.sf_since_ms = 2000,
                                .sf_node = "gpu-1",
                                .sf_result = "recycled",
                                .sf_namespace = "cv"};
    assert_ids(s, &flt, "[6]");
    flt = (struct store_filter){.sf_node = "nope"};
    assert_ids(s, &flt, "[]");
    store_close(s);
}

static int
stop_cb(int64_t id, const struct store_decision *d, void *arg)
{
    return -1;
}

static void
test_query_get_and_stop(void **state)
{
    struct fx *f = *state;
    struct store *s = seed(f);
    struct store_filter all = {0};
    char err[256];

    assert_int_equal(store_get_decision(s, 99, stop_cb, NULL, err, sizeof(err)), 0);
    assert_int_equal(store_get_decision(s, 1, stop_cb, NULL, err, sizeof(err)), -1);
    assert_int_equal(store_query_decisions(s, &all, stop_cb, NULL, err, sizeof(err)), -1);
    assert_string_equal(err, "stopped by the caller");
    store_close(s);
}

static int
collect_stats(const struct store_stat *st, void *arg)
{
    json_t *o = json_pack("{s:s, s:s, s:I}", "by", st->ss_by, "key", st->ss_key, "count",
                          (json_int_t)st->ss_count);

    if (st->ss_result != NULL)
        json_object_set_new(o, "result", json_string(st->ss_result));
    json_array_append_new(arg, o);
    return 0;
}

static void
assert_stats(struct store *s, const struct store_filter *flt, const char *want_text)
{
    json_t *got = json_array(), *want = json_loads(want_text, 0, NULL);
    char err[256];

    assert_non_null(want);
    assert_int_equal(store_query_stats(s, flt, collect_stats, got, err, sizeof(err)),
                     json_array_size(want));
    if (!json_equal(got, want)) {
        char *g = json_dumps(got, JSON_COMPACT);
        print_error("got %s\n", g);
        free(g);
        fail();
    }
    json_decref(got);
    json_decref(want);
}

static void
test_stats(void **state)
{
    struct fx *f = *state;
    struct store *s = seed(f);
    struct store_filter flt = {0};

    assert_stats(
        s, &flt,
        "[{\"by\":\"result\",\"key\":\"recycled\",\"count\":3},"
        "{\"by\":\"result\",\"key\":\"skipped_recovered\",\"count\":2},"
        "{\"by\":\"result\",\"key\":\"would_recycle\",\"count\":1},"
        "{\"by\":\"namespace\",\"key\":\"cv\",\"result\":\"recycled\",\"count\":1},"
        "{\"by\":\"namespace\",\"key\":\"cv\",\"result\":\"would_recycle\",\"count\":1},"
        "{\"by\":\"namespace\",\"key\":\"ml\",\"result\":\"recycled\",\"count\":2}]");
    flt.sf_node = "gpu-2";
    assert_stats(
        s, &flt,
        "[{\"by\":\"result\",\"key\":\"recycled\",\"count\":1},"
        "{\"by\":\"result\",\"key\":\"skipped_recovered\",\"count\":1},"
        "{\"by\":\"namespace\",\"key\":\"ml\",\"result\":\"recycled\",\"count\":1}]");
    /* With a limit, stats count exactly the rows the listing would show. */
    flt = (struct store_filter){.sf_limit = 2};
    assert_stats(
        s, &flt,
        "[{\"by\":\"result\",\"key\":\"recycled\",\"count\":1},"
        "{\"by\":\"result\",\"key\":\"skipped_recovered\",\"count\":1},"
        "{\"by\":\"namespace\",\"key\":\"cv\",\"result\":\"recycled\",\"count\":1}]");
    flt = (struct store_filter){.sf_result = "failed"};
    assert_stats(s, &flt, "[]");
    store_close(s);
}

static int
alert_fields_cb(int64_t id, const struct store_alert *a, void *arg)
{
    assert_int_equal(a->sa_received_ms, 1234);
    assert_string_equal(a->sa_alertname, "GPUVRAMLow");
    assert_string_equal(a->sa_status, "resolved");
    assert_string_equal(a->sa_fingerprint, "");
    assert_null(a->sa_starts_at);
    assert_string_equal(a->sa_ends_at, "2026-06-02T10:05:00Z");
    assert_string_equal(a->sa_labels_json, "{}");
    assert_string_equal(a->sa_annotations_json, "{\"summary\":\"x\"}");
    (*(int *)arg)++;
    return 0;
}

static void
test_alert_roundtrip(void **state)
{
    struct fx *f = *state;
    struct store *s = open_rw(f);
    struct store_alert a = {.sa_received_ms = 1234,
                            .sa_alertname = "GPUVRAMLow",
                            .sa_status = "resolved",
                            .sa_ends_at = "2026-06-02T10:05:00Z",
                            .sa_annotations_json = "{\"summary\":\"x\"}"};
    struct store_filter flt = {.sf_since_ms = 1000, .sf_limit = 5};
    int calls = 0;

    assert_int_equal(store_add_alert(s, &a, NULL, f->f_err, sizeof(f->f_err)), 0);
    assert_int_equal(add_alert(f, s, 999, "Old", NULL), 0);
    assert_int_equal(
        store_query_alerts(s, &flt, alert_fields_cb, &calls, f->f_err, sizeof(f->f_err)),
        1);
    assert_int_equal(calls, 1);
    a.sa_alertname = NULL; /* required */
    assert_int_equal(store_add_alert(s, &a, NULL, f->f_err, sizeof(f->f_err)), -1);
    assert_non_null(strstr(f->f_err, "NOT NULL"));
    store_close(s);
}

/* Text from outside that is not UTF-8 still makes valid JSON. */
static void
test_json_not_utf8(void **state)
{
    struct store_candidate c = {"ns", "p\xff\xfeod", 1, 0, 0, 0, "bad\xc3"};
    json_t *j = store_candidates_json(&c, 1);
    json_t *e;

    assert_non_null(j);
    e = json_array_get(j, 0);
    assert_string_equal(json_string_value(json_object_get(e, "pod")), "p??od");
    assert_string_equal(json_string_value(json_object_get(e, "why_not")), "bad?");
    assert_true(json_is_null(json_object_get(e, "budget_mib")));
    json_decref(j);
    /* é is kept; a surrogate is not UTF-8. */
    j = store_json_str("caf\xc3\xa9 \xed\xa0\x80");
    assert_string_equal(json_string_value(j), "caf\xc3\xa9 ???");
    json_decref(j);
}

/* ---- the benchmark's queries use an index and never sort ---- */

struct trace {
    char *t_sql; /* owned: the last SELECT prepared */
};

static int
trace_cb(unsigned type, void *ctx, void *p, void *x)
{
    struct trace *t = ctx;
    const char *sql = sqlite3_sql(p);

    if (type == SQLITE_TRACE_STMT && sql != NULL && strncmp(sql, "SELECT", 6) == 0) {
        free(t->t_sql);
        t->t_sql = strdup(sql);
    }
    return 0;
}

/* The plan of the query the filter produces, as one string of details. */
static char *
plan_for(struct fx *f, struct store *s, const struct store_filter *flt, int alerts)
{
    struct trace t = {NULL};
    sqlite3_stmt *st = NULL;
    char err[256], *q, plan[2048] = "";
    size_t len = 0;

    sqlite3_trace_v2(s->st_db, SQLITE_TRACE_STMT, trace_cb, &t);
    if (alerts) {
        int64_t n = 0;
        store_query_alerts(s, flt, count_alerts_cb, &n, err, sizeof(err));
    } else {
        json_t *ids = json_array();
        store_query_decisions(s, flt, collect_ids, ids, err, sizeof(err));
        json_decref(ids);
    }
    sqlite3_trace_v2(s->st_db, 0, NULL, NULL);
    assert_non_null(t.t_sql);
    q = sqlite3_mprintf("EXPLAIN QUERY PLAN %s", t.t_sql);
    assert_int_equal(sqlite3_prepare_v2(s->st_db, q, -1, &st, NULL), SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW)
        len += (size_t)snprintf(plan + len, sizeof(plan) - len, "%s; ",
                                (const char *)sqlite3_column_text(st, 3));
    sqlite3_finalize(st);
    sqlite3_free(q);
    free(t.t_sql);
    return strdup(plan);
}

static void
assert_plan(struct fx *f, struct store *s, const struct store_filter *flt, int alerts,
            const char *index)
{
    char *plan = plan_for(f, s, flt, alerts);

    if (strstr(plan, index) == NULL || strstr(plan, "TEMP B-TREE") != NULL)
        fail_msg("plan \"%s\" does not use %s without a sort", plan, index);
    free(plan);
}

static void
test_query_plans(void **state)
{
    struct fx *f = *state;
    struct store *s = seed(f);
    struct store_filter flt = {.sf_limit = 100};

    assert_plan(f, s, &flt, 0, "decisions_by_time");
    flt.sf_node = "gpu-1";
    assert_plan(f, s, &flt, 0, "decisions_by_node");
    flt = (struct store_filter){.sf_namespace = "ml", .sf_limit = 100};
    assert_plan(f, s, &flt, 0, "decisions_by_namespace");
    flt = (struct store_filter){.sf_result = "recycled"};
    assert_plan(f, s, &flt, 0, "decisions_by_result");
    flt = (struct store_filter){.sf_since_ms = 3000, .sf_node = "gpu-1"};
    assert_plan(f, s, &flt, 0, "decisions_by_node");
    flt = (struct store_filter){.sf_since_ms = 3000};
    assert_plan(f, s, &flt, 0, "decisions_by_time");
    assert_plan(f, s, &flt, 1, "alerts_by_time");
    store_close(s);
}

/* ---- GPU scope and the release field (schema 2) ---- */

/* A decision about one GPU, with a release asked, reads back whole; one
 * without either reads back with both null. */
static void
test_gpu_and_release_roundtrip(void **state)
{
    static const struct store_release rel = {
        "http://10.0.0.7:8080/unload", 1, 200, 1, 3000, 1, 1.5};
    static const struct store_release dry = {
        "http://10.0.0.7:8080/unload", 0, 0, 0, 0, 0, 0};
    struct fx *f = *state;
    struct store *s = open_rw(f);
    struct store_decision d = full_decision(), plain = full_decision(), d2;
    struct expect e = {0};
    json_t *j;
    int64_t id = 0, id2 = 0, id3 = 0;

    d.sd_gpu = "GPU-5b1c";
    d.sd_release = &rel;
    assert_int_equal(store_decision_record(s, &d, &id, f->f_err, sizeof(f->f_err)), 0);
    assert_int_equal(store_decision_record(s, &plain, &id2, f->f_err, sizeof(f->f_err)),
                     0);
    d2 = plain;
    d2.sd_release = &dry;
    assert_int_equal(store_decision_start(s, &d2, &id3, f->f_err, sizeof(f->f_err)), 0);
    d2.sd_gpu = "GPU-x";
    assert_int_equal(store_decision_finish(s, id3, &d2, f->f_err, sizeof(f->f_err)), 0);
    store_close(s);

    s = open_ro(f);
    e = (struct expect){.e_want = &d, .e_id = id};
    assert_int_equal(store_get_decision(s, id, expect_cb, &e, f->f_err, sizeof(f->f_err)),
                     1);
    e = (struct expect){.e_want = &plain, .e_id = id2};
    assert_int_equal(
        store_get_decision(s, id2, expect_cb, &e, f->f_err, sizeof(f->f_err)), 1);
    e = (struct expect){.e_want = &d2, .e_id = id3};
    assert_int_equal(
        store_get_decision(s, id3, expect_cb, &e, f->f_err, sizeof(f->f_err)), 1);
    store_close(s);
    assert_int_equal(
        sql_int(f->f_path, "SELECT count(*) FROM decisions WHERE gpu IS NULL"), 1);
    /* the release column holds SPEC's object */
    j = store_release_json(&dry);
    assert_non_null(j);
    {
        char *t = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
        assert_string_equal(t, "{\"url\":\"http://10.0.0.7:8080/unload\",\"status\":null,"
                               "\"freed_mib\":null,\"seconds\":null}");
        free(t);
    }
    json_decref(j);
    assert_true(json_is_null(j = store_release_json(NULL)));
    json_decref(j);
}

/* The schema as version 1 shipped it, with one decision and one alert in it. */
static const char schema_v1[] =
    "CREATE TABLE alerts (id INTEGER PRIMARY KEY AUTOINCREMENT, received_ms INTEGER NOT "
    "NULL, alertname TEXT NOT NULL, status TEXT NOT NULL, fingerprint TEXT NOT NULL, "
    "starts_at TEXT, ends_at TEXT, labels TEXT NOT NULL, annotations TEXT NOT NULL);"
    "CREATE INDEX alerts_by_time ON alerts(received_ms);"
    "CREATE TABLE decisions (id INTEGER PRIMARY KEY AUTOINCREMENT, time_ms INTEGER NOT "
    "NULL, node TEXT NOT NULL, trigger_name TEXT NOT NULL, fingerprint TEXT NOT NULL, "
    "result TEXT NOT NULL, reason TEXT NOT NULL, free_mib INTEGER, floor_mib INTEGER NOT "
    "NULL, dry_run INTEGER NOT NULL, action TEXT NOT NULL, victim_namespace TEXT, "
    "victim_pod TEXT, victim TEXT, candidates TEXT NOT NULL, error TEXT, verify_free_mib "
    "INTEGER, verify_seconds REAL, alert_id INTEGER REFERENCES alerts(id) ON DELETE SET "
    "NULL);"
    "CREATE INDEX decisions_by_time ON decisions(time_ms);"
    "CREATE INDEX decisions_by_node ON decisions(node, time_ms);"
    "CREATE INDEX decisions_by_result ON decisions(result, time_ms);"
    "CREATE INDEX decisions_by_namespace ON decisions(victim_namespace, time_ms);"
    "CREATE INDEX decisions_by_victim_result ON decisions(victim_namespace, result, "
    "time_ms) WHERE victim_namespace IS NOT NULL;"
    "CREATE INDEX decisions_by_alert ON decisions(alert_id);"
    "INSERT INTO alerts VALUES (1, 1000, 'GPUVRAMLow', 'firing', 'fp', NULL, NULL, '{}', "
    "'{}');"
    "INSERT INTO decisions VALUES (1, 1717322400123, 'gpu-1', 'GPUVRAMLow', 'fp', "
    "'recycled', 'old row', 512, 1536, 0, 'evict', 'ml', 'onnx-1', "
    "'{\"namespace\":\"ml\",\"pod\":\"onnx-1\",\"used_mib\":9000,\"budget_mib\":2000,"
    "\"overshoot_mib\":7000}', '[]', NULL, 9000, 2.5, 1);"
    "PRAGMA user_version = 1;";

static int
old_row_cb(int64_t id, const struct store_decision *d, void *arg)
{
    (*(int *)arg)++;
    assert_int_equal(id, 1);
    assert_string_equal(d->sd_reason, "old row");
    assert_string_equal(d->sd_victim->sv_pod, "onnx-1");
    assert_null(d->sd_gpu);
    assert_null(d->sd_release);
    assert_null(
        d->sd_free_source); /* before schema 3: nothing says where free came from */
    assert_null(d->sd_prediction); /* before schema 4: no prediction */
    assert_null(d->sd_replica);    /* before schema 5: no replica */
    return 0;
}

static int
replica_cb(int64_t id, const struct store_decision *d, void *arg)
{
    assert_string_equal(d->sd_replica, (const char *)arg);
    return 0;
}

/* A version 4 file: migrated to 5 in place, its rows naming no replica, new
 * rows naming the one that took them (HA). */
static void
test_migrates_v4_file_replica(void **state)
{
    struct fx *f = *state;
    struct store *s = open_rw(f);
    struct store_decision d = full_decision();
    int64_t old, id;
    int calls = 0;

    d.sd_reason = "old row";
    assert_int_equal(store_decision_record(s, &d, &old, f->f_err, sizeof(f->f_err)), 0);
    store_close(s);
    sql_exec(f->f_path, "ALTER TABLE decisions DROP COLUMN replica;"
                        "PRAGMA user_version = 4;");
    assert_null(store_open(f->f_path, STORE_READONLY, f->f_err, sizeof(f->f_err)));
    assert_non_null(strstr(f->f_err, "schema version 4 is older than 5"));
    s = open_rw(f);
    assert_int_equal(sql_int(f->f_path, "PRAGMA user_version"), 5);
    d.sd_free_source = NULL;
    d.sd_prediction = NULL;
    assert_int_equal(
        store_get_decision(s, old, old_row_cb, &calls, f->f_err, sizeof(f->f_err)), 1);
    d.sd_reason = "new row";
    d.sd_replica = "gpu-vram-watchdog-1";
    assert_int_equal(store_decision_start(s, &d, &id, f->f_err, sizeof(f->f_err)), 0);
    assert_int_equal(store_get_decision(s, id, replica_cb, "gpu-vram-watchdog-1",
                                        f->f_err, sizeof(f->f_err)),
                     1);
    d.sd_replica = "gpu-vram-watchdog-0"; /* finish writes it too */
    assert_int_equal(store_decision_finish(s, id, &d, f->f_err, sizeof(f->f_err)), 0);
    assert_int_equal(store_get_decision(s, id, replica_cb, "gpu-vram-watchdog-0",
                                        f->f_err, sizeof(f->f_err)),
                     1);
    store_close(s);
}

static int
new_row_cb(int64_t id, const struct store_decision *d, void *arg)
{
    (*(int *)arg)++;
    assert_int_equal(id, 2);
    assert_string_equal(d->sd_free_source, "device");
    assert_non_null(d->sd_prediction);
    assert_true(d->sd_prediction->sp_slope_known);
    assert_true(d->sd_prediction->sp_slope_mib_s > 49.99 &&
                d->sd_prediction->sp_slope_mib_s < 50.01);
    assert_false(d->sd_prediction->sp_eta_known);
    assert_true(d->sd_prediction->sp_horizon_s == 120);
    return 0;
}

static int
computed_row_cb(int64_t id, const struct store_decision *d, void *arg)
{
    (*(int *)arg)++;
    assert_string_equal(d->sd_free_source, "computed");
    return 0;
}

/* A version 1 file opened by this daemon: migrated to the current schema in place, its
 * rows kept (node scope: gpu null), and the read-only CLI refuses it until then. */
static void
test_migrates_v1_file(void **state)
{
    struct fx *f = *state;
    struct store_filter flt = {.sf_gpu = "GPU-a"};
    struct store_decision d = full_decision();
    struct store *s;
    sqlite3 *db = NULL;
    int calls = 0;

    assert_int_equal(sqlite3_open(f->f_path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, schema_v1, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    assert_null(store_open(f->f_path, STORE_READONLY, f->f_err, sizeof(f->f_err)));
    assert_non_null(strstr(f->f_err, "schema version 1 is older than 5"));

    s = open_rw(f);
    assert_int_equal(sql_int(f->f_path, "PRAGMA user_version"), 5);
    d.sd_gpu = "GPU-a";
    d.sd_free_source = "device";
    d.sd_prediction = &(struct store_prediction){
        .sp_slope_known = 1, .sp_slope_mib_s = 50.004, .sp_horizon_s = 120};
    assert_int_equal(store_decision_record(s, &d, NULL, f->f_err, sizeof(f->f_err)), 0);
    assert_ids(s, &(struct store_filter){0}, "[2,1]");
    assert_ids(s, &flt, "[2]");
    assert_int_equal(
        store_get_decision(s, 1, old_row_cb, &calls, f->f_err, sizeof(f->f_err)), 1);
    assert_int_equal(calls, 1);
    calls = 0;
    assert_int_equal(
        store_get_decision(s, 2, new_row_cb, &calls, f->f_err, sizeof(f->f_err)), 1);
    assert_int_equal(calls, 1);
    store_close(s);
    s = open_ro(f); /* now current for the CLI too */
    store_close(s);
}

/* A version 2 file (the previous release): migrated to 3 in place, its rows
 * reading free_source null, new rows keeping theirs. */
static void
test_migrates_v2_file(void **state)
{
    struct fx *f = *state;
    struct store *s = open_rw(f);
    struct store_decision d = full_decision();
    int64_t id;
    int calls = 0;

    d.sd_reason = "old row";
    assert_int_equal(store_decision_record(s, &d, &id, f->f_err, sizeof(f->f_err)), 0);
    store_close(s);
    sql_exec(f->f_path, "ALTER TABLE decisions DROP COLUMN free_source;"
                        "ALTER TABLE decisions DROP COLUMN prediction;"
                        "ALTER TABLE decisions DROP COLUMN replica;"
                        "PRAGMA user_version = 2;");
    assert_null(store_open(f->f_path, STORE_READONLY, f->f_err, sizeof(f->f_err)));
    assert_non_null(strstr(f->f_err, "schema version 2 is older than 5"));
    s = open_rw(f);
    assert_int_equal(sql_int(f->f_path, "PRAGMA user_version"), 5);
    assert_int_equal(
        store_get_decision(s, id, old_row_cb, &calls, f->f_err, sizeof(f->f_err)), 1);
    assert_int_equal(calls, 1);
    d.sd_free_source = "computed";
    assert_int_equal(store_decision_record(s, &d, &id, f->f_err, sizeof(f->f_err)), 0);
    calls = 0;
    assert_int_equal(
        store_get_decision(s, id, computed_row_cb, &calls, f->f_err, sizeof(f->f_err)),
        1);
    assert_int_equal(calls, 1);
    store_close(s);
}

/* --gpu: only that GPU's rows, never node-scope ones; with an index. */
static void
test_query_gpu_filter(void **state)
{
    struct fx *f = *state;
    struct store *s = seed(f);
    struct store_filter flt = {.sf_gpu = "GPU-a"};
    struct store_decision d = {.sd_time_ms = 7000,
                               .sd_node = "gpu-1",
                               .sd_result = "would_recycle",
                               .sd_floor_mib = 1536,
                               .sd_action = "evict",
                               .sd_gpu = "GPU-a"};

    assert_ids(s, &flt, "[]");
    assert_int_equal(store_decision_record(s, &d, NULL, f->f_err, sizeof(f->f_err)), 0);
    d.sd_gpu = "GPU-b";
    d.sd_time_ms = 8000;
    assert_int_equal(store_decision_record(s, &d, NULL, f->f_err, sizeof(f->f_err)), 0);
    assert_ids(s, &flt, "[7]");
    flt.sf_gpu = "GPU-b";
    assert_ids(s, &flt, "[8]");
    flt.sf_node = "gpu-2";
    assert_ids(s, &flt, "[]");
    flt = (struct store_filter){.sf_gpu = "GPU-a", .sf_limit = 100};
    assert_plan(f, s, &flt, 0, "decisions_by_gpu");
    store_close(s);
}

/* A READONLY store bounds every step of a query: one that would run forever
 * (a recursive query, as a crafted view holds) is interrupted at the limit,
 * and the store stays usable. trusted_schema is off in both modes. */
static void
test_readonly_step_limit(void **state)
{
    struct fx *f = *state;
    struct store *s = store_open(f->f_path, STORE_READWRITE, f->f_err, sizeof(f->f_err));
    sqlite3_stmt *st = NULL;
    int on = -1;
    double t0;

    assert_non_null(s);
    assert_int_equal(sqlite3_db_config(s->st_db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, -1, &on),
                     SQLITE_OK);
    assert_int_equal(on, 0);
    store_close(s);
    s = store_open(f->f_path, STORE_READONLY, f->f_err, sizeof(f->f_err));
    assert_non_null(s);
    assert_int_equal(sqlite3_db_config(s->st_db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, -1, &on),
                     SQLITE_OK);
    assert_int_equal(on, 0);
    assert_true(s->st_step_limit_s >= 10);
    s->st_step_limit_s = 0.2;
    assert_int_equal(sqlite3_prepare_v2(s->st_db,
                                        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL"
                                        " SELECT n + 1 FROM r) SELECT count(*) FROM r",
                                        -1, &st, NULL),
                     SQLITE_OK);
    t0 = clock_mono_s();
    store_arm(s);
    assert_int_equal(sqlite3_step(st), SQLITE_INTERRUPT);
    assert_true(clock_mono_s() - t0 < 5);
    sqlite3_finalize(st);
    s->st_step_limit_s = STORE_STEP_LIMIT_S;
    {
        struct store_filter all = {0};
        int64_t n = 0;
        assert_int_equal(
            store_query_alerts(s, &all, count_alerts_cb, &n, f->f_err, sizeof(f->f_err)),
            0);
    }
    store_close(s);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_open_creates_0600, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gpu_and_release_roundtrip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_migrates_v1_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_migrates_v2_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_query_gpu_filter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_existing_file_keeps_mode, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wal_and_version, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reopen_preserves_data, setup, teardown),
        cmocka_unit_test_setup_teardown(test_migrates_empty_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_newer_schema_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_a_database, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_parent_dir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_readonly_missing_not_created, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_readonly_cannot_write, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_disk_fails_cleanly, setup, teardown),
        cmocka_unit_test_setup_teardown(test_group_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rollback_leaves_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_decision_start_finish, setup, teardown),
        cmocka_unit_test_setup_teardown(test_decision_record_nulls, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reopen_marks_interrupted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_release_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_migrate_and_verify_pending, setup, teardown),
        cmocka_unit_test_setup_teardown(test_migrates_v4_file_replica, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finish_keeps_stored_candidates, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_prune, setup, teardown),
        cmocka_unit_test_setup_teardown(test_readonly_while_writer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_query_filters, setup, teardown),
        cmocka_unit_test_setup_teardown(test_query_get_and_stop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stats, setup, teardown),
        cmocka_unit_test_setup_teardown(test_alert_roundtrip, setup, teardown),
        cmocka_unit_test(test_json_not_utf8),
        cmocka_unit_test_setup_teardown(test_query_plans, setup, teardown),
        cmocka_unit_test_setup_teardown(test_readonly_step_limit, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
