/* audit_cli.c -- `gpu-vram-watchdog audit`: runs the four read-only commands */
#include "audit_cli.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit_args.h"
#include "audit_format.h"
#include "audit_merge.h"
#include "clock.h"
#include "store.h"
#include "termtext.h"

/* Where output goes and how far it got. */
struct out {
    FILE *o_file;
    int o_json;
    int64_t o_rows;
    int64_t o_skipped;  /* rows the store could not read (each said on stderr) */
    const char *o_fail; /* why a callback stopped, for the error line */
};

/* A row the store cannot read: one line on stderr, and the listing goes on. */
static void
on_unreadable(const char *table, int64_t id, const char *why, void *arg)
{
    struct out *o = arg;
    char line[256];

    o->o_skipped++;
    snprintf(line, sizeof(line), "%s row %" PRId64 " cannot be read (%s): skipped",
             strcmp(table, "alerts") == 0 ? "alert" : "decision", id, why);
    termtext_line(stderr, AUDIT_PROG ": ", line);
}

/* A callback's answer: stop at the first failed write (a full disk, a
 * closed pipe with SIGPIPE ignored) instead of reading a million more rows. */
static int
out_check(struct out *o)
{
    if (!ferror(o->o_file))
        return 0;
    o->o_fail = "cannot write the output";
    return -1;
}

/* Writes j after prefix; consumes j. One string and one write per object:
 * json_dumpf() writes token by token, several times slower on big listings. */
static int
write_json(struct out *o, const char *prefix, json_t *j)
{
    char *text = j ? json_dumps(j, AUDIT_JSON_FLAGS) : NULL;

    json_decref(j);
    if (text == NULL) {
        o->o_fail = "out of memory";
        return -1;
    }
    fputs(prefix, o->o_file);
    fputs(text, o->o_file);
    free(text);
    return out_check(o);
}

/* One element of the JSON array. */
static int
emit_json(struct out *o, json_t *j)
{
    return write_json(o, o->o_rows++ == 0 ? "[\n" : ",\n", j);
}

static int
on_decision(int64_t id, const struct store_decision *d, void *arg)
{
    struct out *o = arg;

    if (o->o_json)
        return emit_json(o, audit_decision_json(d, id));
    if (o->o_rows++ == 0)
        audit_decision_table_header(o->o_file);
    audit_decision_table_row(o->o_file, d, id);
    return out_check(o);
}

static int
on_alert(int64_t id, const struct store_alert *al, void *arg)
{
    struct out *o = arg;

    if (o->o_json)
        return emit_json(o, audit_alert_json(al, id));
    if (o->o_rows++ == 0)
        audit_alert_table_header(o->o_file);
    audit_alert_table_row(o->o_file, al, id);
    return out_check(o);
}

static int
on_stat(const struct store_stat *st, void *arg)
{
    struct out *o = arg;

    if (o->o_json)
        return emit_json(o, audit_stat_json(st));
    if (o->o_rows++ == 0)
        audit_stat_table_header(o->o_file);
    audit_stat_table_row(o->o_file, st);
    return out_check(o);
}

static int
on_show(int64_t id, const struct store_decision *d, void *arg)
{
    struct out *o = arg;

    o->o_rows++;
    if (!o->o_json) {
        audit_decision_print(o->o_file, d, id);
        return out_check(o);
    }
    if (write_json(o, "", audit_decision_json(d, id)) == -1)
        return -1;
    fputc('\n', o->o_file);
    return out_check(o);
}

/* Runs the command; returns rows written or -1 with err. */
static int64_t
run(struct store *s, const struct audit_args *a, struct out *o, char *err, size_t errlen)
{
    switch (a->aa_cmd) {
    case AUDIT_SHOW:
        return store_get_decision(s, a->aa_id, on_show, o, err, errlen);
    case AUDIT_ALERTS:
        return store_query_alerts(s, &a->aa_filter, on_alert, o, err, errlen);
    case AUDIT_STATS:
        return store_query_stats(s, &a->aa_filter, on_stat, o, err, errlen);
    case AUDIT_LIST:
        break;
    }
    return store_query_decisions(s, &a->aa_filter, on_decision, o, err, errlen);
}

/* Closes the JSON array, or says that nothing matched. */
static void
finish_output(const struct audit_args *a, const struct out *o)
{
    static const char *const none[] = {
        [AUDIT_LIST] = "no decisions",
        [AUDIT_ALERTS] = "no alerts",
        [AUDIT_STATS] = "no decisions",
    };

    if (a->aa_cmd == AUDIT_SHOW)
        return;
    if (o->o_json)
        fputs(o->o_rows == 0 ? "[]\n" : "\n]\n", o->o_file);
    else if (o->o_rows == 0)
        fprintf(o->o_file, "%s\n", none[a->aa_cmd]);
}

static int
execute(const struct audit_args *a)
{
    struct out o = {.o_file = stdout, .o_json = a->aa_json};
    char err[512];
    struct store *s;
    int64_t n;

    if ((s = store_open(a->aa_db, STORE_READONLY, err, sizeof(err))) == NULL) {
        termtext_line(stderr, AUDIT_PROG ": ", err);
        return AUDIT_EXIT_RUNTIME;
    }
    store_on_unreadable(s, on_unreadable, &o);
    n = run(s, a, &o, err, sizeof(err));
    store_close(s);
    if (n == -1) {
        termtext_line(stderr, AUDIT_PROG ": ", o.o_fail ? o.o_fail : err);
        return AUDIT_EXIT_RUNTIME;
    }
    if (a->aa_cmd == AUDIT_SHOW && n == 0 && o.o_skipped > 0)
        return AUDIT_EXIT_RUNTIME; /* it is there, and said unreadable */
    if (a->aa_cmd == AUDIT_SHOW && n == 0) {
        fprintf(stderr, AUDIT_PROG ": no decision %" PRId64 " in %s\n", a->aa_id,
                a->aa_db);
        return AUDIT_EXIT_RUNTIME;
    }
    finish_output(a, &o);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, AUDIT_PROG ": cannot write the output\n");
        return AUDIT_EXIT_RUNTIME;
    }
    /* Every readable row is out and the JSON array closed; the status still
     * tells a script that the listing is not the whole store. */
    return o.o_skipped > 0 ? AUDIT_EXIT_RUNTIME : AUDIT_EXIT_OK;
}

int
audit_main(int argc, char **argv)
{
    struct audit_args a;
    int rc;

    if ((rc = audit_parse_args(&a, argc, argv, getenv("AUDIT_DB"), clock_wall_ms())) != 0)
        return rc;
    if (a.aa_help) {
        audit_print_usage(stdout);
        return fflush(stdout) == 0 ? AUDIT_EXIT_OK : AUDIT_EXIT_RUNTIME;
    }
    if (a.aa_nmore_dbs > 0 || a.aa_nmerge > 0) /* HA: several replicas' histories */
        return audit_merge_run(&a);
    return execute(&a);
}
