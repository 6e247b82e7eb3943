/* test_audit_merge.c -- one history of several replicas: `audit --db A --db B` and
 * `audit --merge -`, newest first, each row naming its replica; hostile listings */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "audit_cli.h"
#include "store.h"

#define T0 1764356400000LL /* 2025-11-28T19:00:00.000Z */
#define END ((const char *)NULL)

struct fx {
    char f_dir[64];
    char f_a[128], f_b[128], f_old[128], f_in[128];
    char *f_out, *f_err;
};

static const struct store_victim v_ml = {"ml", "onnx-1", 10700, 1, 2000, 8700};

/* One decision row in path, written by replica (NULL: no leader election). */
static void
add(const char *path, int64_t t, const char *replica, const char *result)
{
    char err[256];
    struct store *s = store_open(path, STORE_READWRITE, err, sizeof(err));
    struct store_decision d = {.sd_time_ms = t,
                               .sd_node = "gpu-1",
                               .sd_trigger = "GPUVRAMLow",
                               .sd_result = result,
                               .sd_reason = "r",
                               .sd_free_known = 1,
                               .sd_free_mib = 512,
                               .sd_floor_mib = 1536,
                               .sd_action = "evict",
                               .sd_victim =
                                   strcmp(result, "recycled") == 0 ? &v_ml : NULL,
                               .sd_replica = replica};

    if (s == NULL)
        fail_msg("%s", err);
    assert_int_equal(store_decision_record(s, &d, NULL, err, sizeof(err)), 0);
    store_close(s);
}

static int
setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));

    if (f == NULL)
        return -1;
    snprintf(f->f_dir, sizeof(f->f_dir), "/tmp/gvw-merge-XXXXXX");
    if (mkdtemp(f->f_dir) == NULL) {
        free(f);
        return -1;
    }
    snprintf(f->f_a, sizeof(f->f_a), "%s/a.db", f->f_dir);
    snprintf(f->f_b, sizeof(f->f_b), "%s/b.db", f->f_dir);
    snprintf(f->f_old, sizeof(f->f_old), "%s/single.db", f->f_dir);
    snprintf(f->f_in, sizeof(f->f_in), "%s/stdin", f->f_dir);
    /* Replica 0 led first, then 1 after a failover, then 0 again. */
    add(f->f_a, T0, "gpu-vram-watchdog-0", "recycled");
    add(f->f_b, T0 + 60000, "gpu-vram-watchdog-1", "coalesced");
    add(f->f_a, T0 + 120000, "gpu-vram-watchdog-0", "skipped_recovered");
    add(f->f_b, T0 + 120000, "gpu-vram-watchdog-1", "failed"); /* same ms: by name */
    add(f->f_old, T0 + 30000, NULL, "would_recycle");
    unsetenv("AUDIT_DB");
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    struct fx *f = *state;
    char p[256];
    const char *names[] = {"a.db",          "a.db-wal", "a.db-shm",  "b.db",
                           "b.db-wal",      "b.db-shm", "single.db", "single.db-wal",
                           "single.db-shm", "stdin",    "out",       "err"};

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        snprintf(p, sizeof(p), "%s/%s", f->f_dir, names[i]);
        unlink(p);
    }
    rmdir(f->f_dir);
    free(f->f_out);
    free(f->f_err);
    free(f);
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
    assert_int_equal(fread(buf, 1, (size_t)n, fp), (size_t)n);
    fclose(fp);
    return buf;
}

/* Runs audit_main on the words after "audit"; "A", "B", "OLD" name the
 * fixture's databases. stdin is the file f_in when it exists. */
static int
run(struct fx *f, ...)
{
    char *argv[32], out[160], err[160];
    va_list ap;
    int argc = 0, rc, so, se, si = -1, fd;
    const char *w;

    argv[argc++] = "audit";
    va_start(ap, f);
    while ((w = va_arg(ap, const char *)) != NULL && argc < 31)
        argv[argc++] = strcmp(w, "A") == 0     ? f->f_a
                       : strcmp(w, "B") == 0   ? f->f_b
                       : strcmp(w, "OLD") == 0 ? f->f_old
                                               : (char *)w;
    va_end(ap);
    argv[argc] = NULL;
    snprintf(out, sizeof(out), "%s/out", f->f_dir);
    snprintf(err, sizeof(err), "%s/err", f->f_dir);
    fflush(stdout);
    fflush(stderr);
    so = dup(1);
    se = dup(2);
    fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 1);
    close(fd);
    fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 2);
    close(fd);
    if ((fd = open(f->f_in, O_RDONLY)) >= 0) {
        si = dup(0);
        dup2(fd, 0);
        close(fd);
        clearerr(stdin);
    }
    rc = audit_main(argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(so, 1);
    dup2(se, 2);
    close(so);
    close(se);
    if (si >= 0) {
        dup2(si, 0);
        close(si);
        clearerr(stdin);
    }
    free(f->f_out);
    free(f->f_err);
    f->f_out = slurp(out);
    f->f_err = slurp(err);
    return rc;
}

/* "replica:id" of each row of the JSON array on stdout, joined by spaces. */
static void
assert_rows(struct fx *f, const char *want)
{
    json_t *a = json_loads(f->f_out, 0, NULL);
    char got[1024] = "";
    size_t len = 0;

    if (!json_is_array(a))
        fail_msg("stdout is not a JSON array: %s", f->f_out);
    for (size_t i = 0; i < json_array_size(a); i++) {
        json_t *o = json_array_get(a, i), *r = json_object_get(o, "replica");
        assert_non_null(r); /* a merged listing names the replica of every row */
        len += (size_t)snprintf(got + len, sizeof(got) - len, "%s%s:%lld", i ? " " : "",
                                json_is_string(r) ? json_string_value(r) : "null",
                                (long long)json_integer_value(json_object_get(o, "id")));
    }
    json_decref(a);
    if (strcmp(got, want) != 0)
        fail_msg("rows '%s', want '%s'", got, want);
}

static void
write_in(struct fx *f, const char *text)
{
    FILE *fp = fopen(f->f_in, "w");

    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static void
test_two_databases_one_history(void **state)
{
    struct fx *f = *state;

    assert_int_equal(run(f, "--db", "A", "--db", "B", "--format", "json", END), 0);
    assert_rows(f, "gpu-vram-watchdog-0:2 gpu-vram-watchdog-1:2 gpu-vram-watchdog-1:1 "
                   "gpu-vram-watchdog-0:1");
    /* Filters and --limit apply to the merged listing. */
    assert_int_equal(
        run(f, "--db", "A", "--db", "B", "--format", "json", "--limit", "2", END), 0);
    assert_rows(f, "gpu-vram-watchdog-0:2 gpu-vram-watchdog-1:2");
    assert_int_equal(
        run(f, "--db", "B", "--db", "A", "--format=json", "--result", "recycled", END),
        0);
    assert_rows(f, "gpu-vram-watchdog-0:1");
    /* A row written without leader election names no replica (null). */
    assert_int_equal(run(f, "--db", "A", "--db", "OLD", "--format", "json", END), 0);
    assert_rows(f, "gpu-vram-watchdog-0:2 null:1 gpu-vram-watchdog-0:1");
}

static void
test_table_names_the_replica(void **state)
{
    struct fx *f = *state;

    assert_int_equal(run(f, "--db", "A", "--db", "B", END), 0);
    assert_non_null(strstr(f->f_out, "REPLICA"));
    /* Newest first: the first row under the header is replica 0's. */
    char *first = strchr(f->f_out, '\n');
    assert_non_null(first);
    assert_int_equal(strncmp(first + 1, "gpu-vram-watchdog-0", 19), 0);
    assert_non_null(strstr(f->f_out, "ml/onnx-1"));
    /* One database alone lists as before: no REPLICA column, no "replica" key
     * for rows without one. */
    assert_int_equal(run(f, "--db", "OLD", END), 0);
    assert_null(strstr(f->f_out, "REPLICA"));
    assert_int_equal(run(f, "--db", "OLD", "--format", "json", END), 0);
    assert_null(strstr(f->f_out, "replica"));
    assert_int_equal(run(f, "--db", "A", "--format", "json", END), 0);
    assert_non_null(strstr(f->f_out, "\"replica\":\"gpu-vram-watchdog-0\""));
    assert_int_equal(run(f, "show", "1", "--db", "A", END), 0);
    assert_non_null(strstr(f->f_out, "replica"));
}

/* The kubectl pipeline: another replica's JSON listing on standard input. */
static void
test_merge_a_listing_from_stdin(void **state)
{
    struct fx *f = *state;

    assert_int_equal(run(f, "--db", "B", "--format", "json", END), 0);
    write_in(f, f->f_out);
    assert_int_equal(run(f, "--db", "A", "--merge", "-", "--format", "json", END), 0);
    assert_rows(f, "gpu-vram-watchdog-0:2 gpu-vram-watchdog-1:2 gpu-vram-watchdog-1:1 "
                   "gpu-vram-watchdog-0:1");
    /* Several listings one after another, and the table. */
    char *one = strdup(f->f_out), *two;
    assert_int_equal(run(f, "--db", "OLD", "--format", "json", END), 0);
    size_t n = strlen(one) + strlen(f->f_out) + 1;
    two = malloc(n);
    assert_non_null(two);
    snprintf(two, n, "%s%s", one, f->f_out);
    write_in(f, two);
    free(one);
    free(two);
    assert_int_equal(run(f, "--db", "A", "--merge", "-", "--format", "json", END), 0);
    /* A's rows came twice (its own file, and in the listing): both are shown. */
    assert_rows(
        f, "gpu-vram-watchdog-0:2 gpu-vram-watchdog-0:2 gpu-vram-watchdog-1:2 "
           "gpu-vram-watchdog-1:1 null:1 gpu-vram-watchdog-0:1 gpu-vram-watchdog-0:1");
}

/* A listing's object that is not a decision is reported and skipped; a
 * listing that is not one is an error naming it. */
static void
test_hostile_listing(void **state)
{
    struct fx *f = *state;

    write_in(f, "[{\"id\":9,\"time\":\"2025-11-28T19:05:00.000Z\",\"node\":\"gpu-1\","
                "\"result\":\"recycled\",\"floor_mib\":1536,\"free_mib\":null,"
                "\"victim\":{\"namespace\":\"a\",\"pod\":\"b\"},"
                "\"replica\":\"evil\\u001b[31m\"},"
                "{\"id\":10,\"time\":\"yesterday\",\"node\":\"gpu-1\",\"result\":\"x\","
                "\"floor_mib\":1},"
                "{\"id\":11,\"time\":\"2025-11-28T19:06:00.000Z\",\"node\":7},"
                "42,"
                "{\"id\":12,\"time\":\"2025-11-28T19:07:00.000Z\",\"node\":\"gpu-1\","
                "\"result\":\"failed\",\"floor_mib\":1536,\"victim\":[1]}]");
    assert_int_equal(run(f, "--db", "A", "--merge", "-", END), 0);
    assert_non_null(strstr(f->f_err, "element 1 is not a decision; skipped"));
    assert_non_null(strstr(f->f_err, "element 2 is not a decision"));
    assert_non_null(strstr(f->f_err, "element 3 is not a decision"));
    assert_non_null(strstr(f->f_err, "element 4 is not a decision"));
    /* The escape never reaches the terminal raw. */
    assert_null(strchr(f->f_out, '\033'));
    assert_non_null(strstr(f->f_out, "evil\\x1b[31m")); /* termtext: ESC as \\x1b */
    assert_non_null(strstr(f->f_out, "a/b"));
    write_in(f, "{\"not\":\"a listing\"}");
    assert_int_equal(run(f, "--db", "A", "--merge", "-", END), AUDIT_EXIT_RUNTIME);
    assert_non_null(strstr(f->f_err, "--merge -: not an `audit --format json` listing"));
    write_in(f, "[1,2");
    assert_int_equal(run(f, "--db", "A", "--merge", "-", END), AUDIT_EXIT_RUNTIME);
    write_in(f, "");
    assert_int_equal(run(f, "--db", "A", "--merge", "-", "--format", "json", END), 0);
    assert_rows(f, "gpu-vram-watchdog-0:2 gpu-vram-watchdog-0:1");
    unlink(f->f_in);
    assert_int_equal(run(f, "--db", "A", "--merge", "/nonexistent/listing", END),
                     AUDIT_EXIT_RUNTIME);
    assert_non_null(strstr(f->f_err, "cannot open it"));
    /* A missing database is an error, as for a single one. */
    assert_int_equal(run(f, "--db", "A", "--db", "/nonexistent/x.db", END),
                     AUDIT_EXIT_RUNTIME);
}

static void
test_usage(void **state)
{
    struct fx *f = *state;

    assert_int_equal(run(f, "stats", "--db", "A", "--db", "B", END), AUDIT_EXIT_USAGE);
    assert_non_null(strstr(f->f_err, "merge the decision listing only"));
    assert_int_equal(run(f, "alerts", "--db", "A", "--merge", "-", END),
                     AUDIT_EXIT_USAGE);
    assert_int_equal(run(f, "--merge", "-", "--merge", "-", END), AUDIT_EXIT_USAGE);
    assert_int_equal(run(f, "--merge", "", END), AUDIT_EXIT_USAGE);
    assert_int_equal(run(f, "--help", END), 0);
    assert_non_null(strstr(f->f_out, "--merge FILE"));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_two_databases_one_history, setup, teardown),
        cmocka_unit_test_setup_teardown(test_table_names_the_replica, setup, teardown),
        cmocka_unit_test_setup_teardown(test_merge_a_listing_from_stdin, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostile_listing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_usage, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
