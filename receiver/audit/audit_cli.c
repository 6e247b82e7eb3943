/* audit_cli.c -- `gpu-vram-watchdog audit`: arguments and the four read-only commands */
#include "audit_cli.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit_format.h"
#include "store.h"

#define PROG "gpu-vram-watchdog audit"
#define DEFAULT_DB "/var/lib/gpu-vram-watchdog/audit.db"
#define DEFAULT_LIMIT 100

enum command { CMD_LIST, CMD_SHOW, CMD_ALERTS, CMD_STATS };

/* Options seen, so a command can refuse one it would otherwise ignore. */
enum {
    OPT_DB = 1 << 0,
    OPT_SINCE = 1 << 1,
    OPT_NODE = 1 << 2,
    OPT_NAMESPACE = 1 << 3,
    OPT_RESULT = 1 << 4,
    OPT_LIMIT = 1 << 5,
    OPT_FORMAT = 1 << 6,
};

struct args {
    enum command a_cmd;
    int a_have_cmd;
    const char *a_id_text; /* borrowed from argv; show's ID */
    int64_t a_id;
    const char *a_db; /* borrowed from argv or the environment */
    struct store_filter a_filter;
    int a_json;
    int a_help;
    unsigned a_given; /* OPT_* bits */
};

/* The SPEC's result words, and in_progress. */
static const char *const results[] = {
    "recycled",          "would_recycle", "skipped_recovered", "skipped_no_candidate",
    "skipped_telemetry", "skipped_kube",  "blocked",           "rate_limited",
    "coalesced",         "failed",        "in_progress",
};

static const char usage_text[] =
    "usage: gpu-vram-watchdog audit [show ID | alerts | stats] [options]\n"
    "\n"
    "Reads the audit store (read-only; works while the daemon writes).\n"
    "  audit            decisions, newest first\n"
    "  audit show ID    one decision in full\n"
    "  audit alerts     alerts received, newest first\n"
    "  audit stats      decisions counted by result and by victim namespace\n"
    "\n"
    "options (before or after the word; --opt value or --opt=value):\n"
    "  --db PATH            the database (default $AUDIT_DB, else\n"
    "                       " DEFAULT_DB ")\n"
    "  --since WHEN         24h, 90m, 7d, 30s, or an RFC 3339 time (default: all)\n"
    "  --node N             decisions on node N\n"
    "  --namespace NS       decisions whose victim is in NS\n"
    "  --result R           decisions that ended R (recycled, would_recycle,\n"
    "                       skipped_recovered, skipped_no_candidate,\n"
    "                       skipped_telemetry, skipped_kube, blocked,\n"
    "                       rate_limited, coalesced, failed, in_progress)\n"
    "  --limit N            at most N rows, newest first (default 100, 0 = all;\n"
    "                       stats counts every match unless --limit is given)\n"
    "  --format table|json  output (default table; json is one array)\n"
    "  --help               this text\n"
    "\n"
    "exit status: 0 ok (also when nothing matches), 1 runtime error, 2 usage error\n";

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* One line on stderr; returns the usage exit code. */
static int
usage_error(const char *fmt, ...)
{
    va_list ap;

    fputs(PROG ": ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs(" (see " PROG " --help)\n", stderr);
    return AUDIT_EXIT_USAGE;
}

static int64_t
now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A whole number >= 0 in decimal, digits only. 0 or -1. */
static int
parse_count(const char *s, int64_t *out)
{
    int64_t v = 0;

    if (*s == '\0')
        return -1;
    for (; *s != '\0'; s++) {
        if (!isdigit((unsigned char)*s) || v > (INT64_MAX - (*s - '0')) / 10)
            return -1;
        v = v * 10 + (*s - '0');
    }
    *out = v;
    return 0;
}

/* "90m": a count with an optional s/m/h/d suffix, as seconds. 0 or -1. */
static int
parse_duration(const char *s, int64_t *secs)
{
    char num[24];
    size_t len = strlen(s);
    int64_t v, unit = 1;

    if (len == 0 || len >= sizeof(num))
        return -1;
    memcpy(num, s, len + 1);
    switch (num[len - 1]) {
    case 's':
        unit = 1;
        num[--len] = '\0';
        break;
    case 'm':
        unit = 60;
        num[--len] = '\0';
        break;
    case 'h':
        unit = 3600;
        num[--len] = '\0';
        break;
    case 'd':
        unit = 86400;
        num[--len] = '\0';
        break;
    default:
        break;
    }
    if (parse_count(num, &v) == -1 || v > INT64_MAX / 1000 / unit)
        return -1;
    *secs = v * unit;
    return 0;
}

/* Exactly n decimal digits at *p. */
static int
fixed_digits(const char **p, int n, int *out)
{
    int v = 0;

    for (; n > 0; n--, (*p)++) {
        if (!isdigit((unsigned char)**p))
            return -1;
        v = v * 10 + (**p - '0');
    }
    *out = v;
    return 0;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * days_from_civil: timegm() is not POSIX). */
static int64_t
days_from_civil(int64_t y, int m, int d)
{
    int64_t era, yoe, doy, doe;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;
    doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int
days_in_month(int y, int m)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

    return days[m - 1] + (m == 2 && leap);
}

/* ".123" (any number of digits; milliseconds kept) at *p, if present. */
static int
parse_fraction(const char **p, int *ms)
{
    int n = 0;

    *ms = 0;
    if (**p != '.')
        return 0;
    (*p)++;
    if (!isdigit((unsigned char)**p))
        return -1;
    for (; isdigit((unsigned char)**p); (*p)++, n++)
        if (n < 3)
            *ms = *ms * 10 + (**p - '0');
    for (; n < 3; n++)
        *ms *= 10;
    return 0;
}

/* "Z" or "+hh:mm" / "-hh:mm" at *p, as minutes east of UTC. */
static int
parse_offset(const char **p, int *minutes)
{
    int sign, hh, mm;

    if (**p == 'Z' || **p == 'z') {
        (*p)++;
        *minutes = 0;
        return 0;
    }
    if (**p != '+' && **p != '-')
        return -1;
    sign = **p == '-' ? -1 : 1;
    (*p)++;
    if (fixed_digits(p, 2, &hh) == -1 || *(*p)++ != ':' ||
        fixed_digits(p, 2, &mm) == -1 || hh > 23 || mm > 59)
        return -1;
    *minutes = sign * (hh * 60 + mm);
    return 0;
}

/* RFC 3339 date-time ("2026-06-02T10:00:00Z", "...T12:00:00.5+02:00") as
 * unix ms. 0 or -1. */
static int
parse_rfc3339(const char *s, int64_t *ms)
{
    int y, mo, d, h, mi, sec, frac, off;
    const char *p = s;

    if (fixed_digits(&p, 4, &y) == -1 || *p++ != '-' || fixed_digits(&p, 2, &mo) == -1 ||
        *p++ != '-' || fixed_digits(&p, 2, &d) == -1)
        return -1;
    if (*p != 'T' && *p != 't' && *p != ' ')
        return -1;
    p++;
    if (fixed_digits(&p, 2, &h) == -1 || *p++ != ':' || fixed_digits(&p, 2, &mi) == -1 ||
        *p++ != ':' || fixed_digits(&p, 2, &sec) == -1)
        return -1;
    if (parse_fraction(&p, &frac) == -1 || parse_offset(&p, &off) == -1 || *p != '\0')
        return -1;
    if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 ||
        sec > 60) /* 60: a leap second */
        return -1;
    *ms = ((days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec) - off * 60) *
              1000 +
          frac;
    return 0;
}

static int
set_since(struct args *a, const char *v)
{
    int64_t secs, at;

    if (parse_duration(v, &secs) == 0)
        at = now_ms() - secs * 1000;
    else if (parse_rfc3339(v, &at) == -1)
        return usage_error("bad --since \"%s\": want a duration (90m, 24h, 7d)"
                           " or an RFC 3339 time (2026-06-02T10:00:00Z)",
                           v);
    /* Every row is after 1970, and 0 means "no bound". */
    a->a_filter.sf_since_ms = at > 0 ? at : 0;
    return 0;
}

static int
set_result(struct args *a, const char *v)
{
    size_t i;

    for (i = 0; i < sizeof(results) / sizeof(results[0]); i++) {
        if (strcmp(v, results[i]) == 0) {
            a->a_filter.sf_result = results[i];
            return 0;
        }
    }
    return usage_error("unknown --result \"%s\": want one of recycled, would_recycle,"
                       " skipped_recovered, skipped_no_candidate, skipped_telemetry,"
                       " skipped_kube, blocked, rate_limited, coalesced, failed,"
                       " in_progress",
                       v);
}

static int
set_option(struct args *a, unsigned bit, const char *v)
{
    switch (bit) {
    case OPT_DB:
        if (*v == '\0')
            return usage_error("--db is empty");
        a->a_db = v;
        return 0;
    case OPT_SINCE:
        return set_since(a, v);
    case OPT_NODE:
        a->a_filter.sf_node = v;
        return 0;
    case OPT_NAMESPACE:
        a->a_filter.sf_namespace = v;
        return 0;
    case OPT_RESULT:
        return set_result(a, v);
    case OPT_LIMIT:
        if (parse_count(v, &a->a_filter.sf_limit) == -1)
            return usage_error("bad --limit \"%s\": want a whole number, 0 for no limit",
                               v);
        return 0;
    case OPT_FORMAT:
        if (strcmp(v, "table") != 0 && strcmp(v, "json") != 0)
            return usage_error("unknown --format \"%s\": want table or json", v);
        a->a_json = strcmp(v, "json") == 0;
        return 0;
    default:
        return usage_error("internal: option %u", bit); /* can't happen */
    }
}

static const struct {
    const char *o_name;
    unsigned o_bit;
} options[] = {
    {"db", OPT_DB},         {"since", OPT_SINCE},
    {"node", OPT_NODE},     {"namespace", OPT_NAMESPACE},
    {"result", OPT_RESULT}, {"limit", OPT_LIMIT},
    {"format", OPT_FORMAT},
};

/* "--name=value" or "--name value" at argv[*i]; advances *i past a value. */
static int
parse_option(struct args *a, int argc, char **argv, int *i)
{
    const char *arg = argv[*i] + 2, *eq = strchr(arg, '='), *value;
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg), k;

    for (k = 0; k < sizeof(options) / sizeof(options[0]); k++)
        if (strlen(options[k].o_name) == len && strncmp(arg, options[k].o_name, len) == 0)
            break;
    if (k == sizeof(options) / sizeof(options[0]))
        return usage_error("unknown option %.*s", (int)(len + 2), argv[*i]);
    if (eq != NULL)
        value = eq + 1;
    else if (*i + 1 < argc)
        value = argv[++*i];
    else
        return usage_error("option --%s needs a value", options[k].o_name);
    a->a_given |= options[k].o_bit;
    return set_option(a, options[k].o_bit, value);
}

/* The words: show ID, alerts, stats (at most one). */
static int
parse_word(struct args *a, const char *w)
{
    if (a->a_have_cmd && a->a_cmd == CMD_SHOW && a->a_id_text == NULL) {
        a->a_id_text = w;
        if (parse_count(w, &a->a_id) == -1 || a->a_id == 0)
            return usage_error("bad decision ID \"%s\": want a number from the listing",
                               w);
        return 0;
    }
    if (a->a_have_cmd)
        return usage_error("unexpected argument \"%s\"", w);
    if (strcmp(w, "show") == 0)
        a->a_cmd = CMD_SHOW;
    else if (strcmp(w, "alerts") == 0)
        a->a_cmd = CMD_ALERTS;
    else if (strcmp(w, "stats") == 0)
        a->a_cmd = CMD_STATS;
    else
        return usage_error("unknown command \"%s\": want show, alerts or stats", w);
    a->a_have_cmd = 1;
    return 0;
}

/* Refuses options that mean nothing to the command, rather than ignore a
 * filter and show more than was asked for. */
static int
check_applicable(const struct args *a)
{
    static const struct {
        unsigned c_bit;
        const char *c_name;
    } filters[] = {
        {OPT_SINCE, "--since"},   {OPT_NODE, "--node"},   {OPT_NAMESPACE, "--namespace"},
        {OPT_RESULT, "--result"}, {OPT_LIMIT, "--limit"},
    };
    unsigned refused = 0;
    const char *cmd = a->a_cmd == CMD_SHOW ? "show" : "alerts";
    size_t i;

    if (a->a_cmd == CMD_SHOW)
        refused = OPT_SINCE | OPT_NODE | OPT_NAMESPACE | OPT_RESULT | OPT_LIMIT;
    else if (a->a_cmd == CMD_ALERTS)
        refused = OPT_NODE | OPT_NAMESPACE | OPT_RESULT;
    for (i = 0; i < sizeof(filters) / sizeof(filters[0]); i++)
        if (a->a_given & refused & filters[i].c_bit)
            return usage_error("%s does not apply to %s", filters[i].c_name, cmd);
    if (a->a_cmd == CMD_SHOW && a->a_id_text == NULL)
        return usage_error("show needs a decision ID");
    return 0;
}

static int
parse_args(struct args *a, int argc, char **argv)
{
    int i, rc, words_only = 0;

    for (i = 1; i < argc; i++) {
        const char *arg = argv[i];

        rc = 0;
        if (!words_only && strcmp(arg, "--") == 0)
            words_only = 1;
        else if (!words_only && (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0))
            a->a_help = 1;
        else if (!words_only && strncmp(arg, "--", 2) == 0)
            rc = parse_option(a, argc, argv, &i);
        else if (!words_only && arg[0] == '-' && arg[1] != '\0')
            return usage_error("unknown option %s", arg);
        else
            rc = parse_word(a, arg);
        if (rc != 0)
            return rc;
        if (a->a_help)
            return 0;
    }
    return check_applicable(a);
}

/* Where output goes and how far it got. */
struct out {
    FILE *o_file;
    int o_json;
    int64_t o_rows;
    const char *o_fail; /* why a callback stopped, for the error line */
};

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
on_decision(void *arg, int64_t id, const struct store_decision *d)
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
on_alert(void *arg, int64_t id, const struct store_alert *al)
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
on_stat(void *arg, const struct store_stat *st)
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
on_show(void *arg, int64_t id, const struct store_decision *d)
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
run(struct store *s, const struct args *a, struct out *o, char *err, size_t errlen)
{
    switch (a->a_cmd) {
    case CMD_SHOW:
        return store_get_decision(s, a->a_id, on_show, o, err, errlen);
    case CMD_ALERTS:
        return store_query_alerts(s, &a->a_filter, on_alert, o, err, errlen);
    case CMD_STATS:
        return store_query_stats(s, &a->a_filter, on_stat, o, err, errlen);
    case CMD_LIST:
        break;
    }
    return store_query_decisions(s, &a->a_filter, on_decision, o, err, errlen);
}

/* Closes the JSON array, or says that nothing matched. */
static void
finish_output(const struct args *a, const struct out *o)
{
    static const char *const none[] = {"no decisions", "", "no alerts", "no decisions"};

    if (a->a_cmd == CMD_SHOW)
        return;
    if (o->o_json)
        fputs(o->o_rows == 0 ? "[]\n" : "\n]\n", o->o_file);
    else if (o->o_rows == 0)
        fprintf(o->o_file, "%s\n", none[a->a_cmd]);
}

static int
execute(const struct args *a)
{
    struct out o = {.o_file = stdout, .o_json = a->a_json};
    char err[512];
    struct store *s;
    int64_t n;

    if ((s = store_open(a->a_db, STORE_READONLY, err, sizeof(err))) == NULL) {
        fprintf(stderr, PROG ": %s\n", err);
        return AUDIT_EXIT_RUNTIME;
    }
    n = run(s, a, &o, err, sizeof(err));
    store_close(s);
    if (n == -1) {
        fprintf(stderr, PROG ": %s\n", o.o_fail ? o.o_fail : err);
        return AUDIT_EXIT_RUNTIME;
    }
    if (a->a_cmd == CMD_SHOW && n == 0) {
        fprintf(stderr, PROG ": no decision %" PRId64 " in %s\n", a->a_id, a->a_db);
        return AUDIT_EXIT_RUNTIME;
    }
    finish_output(a, &o);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, PROG ": cannot write the output\n");
        return AUDIT_EXIT_RUNTIME;
    }
    return AUDIT_EXIT_OK;
}

int
audit_main(int argc, char **argv)
{
    struct args a;
    const char *env = getenv("AUDIT_DB");
    int rc;

    memset(&a, 0, sizeof(a));
    a.a_cmd = CMD_LIST;
    a.a_db = env ? env : DEFAULT_DB;
    a.a_filter.sf_limit = DEFAULT_LIMIT;
    if ((rc = parse_args(&a, argc, argv)) != 0)
        return rc;
    if (a.a_help) {
        fputs(usage_text, stdout);
        return fflush(stdout) == 0 ? AUDIT_EXIT_OK : AUDIT_EXIT_RUNTIME;
    }
    if (*a.a_db == '\0')
        return usage_error("AUDIT_DB is empty");
    /* A summary counts everything unless a limit was asked for. */
    if (a.a_cmd == CMD_STATS && !(a.a_given & OPT_LIMIT))
        a.a_filter.sf_limit = 0;
    return execute(&a);
}
