/* audit_args.c -- the `audit` command line: words, options and --since times */
#include "audit_args.h"

#include <ctype.h>
#include <stdarg.h>
#include <string.h>

#include "audit_cli.h"
#include "duration.h"
#include "rfc3339.h"
#include "decision_result.h"

/* Options seen, so a command can refuse one it would otherwise ignore. */
enum {
    OPT_DB = 1 << 0,
    OPT_SINCE = 1 << 1,
    OPT_NODE = 1 << 2,
    OPT_NAMESPACE = 1 << 3,
    OPT_RESULT = 1 << 4,
    OPT_LIMIT = 1 << 5,
    OPT_FORMAT = 1 << 6,
    OPT_GPU = 1 << 7,
    OPT_MERGE = 1 << 8,
};

/* The parser's state around what it fills in. */
struct parse {
    struct audit_args p_a;
    int p_have_cmd;
    const char *p_id_text; /* show's ID as written */
    unsigned p_given;      /* OPT_* bits */
    int64_t p_now_ms;      /* --since durations count back from here */
    int p_ndb;             /* --db given so far */
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
    "  --db PATH            the database (also --audit-db; default $AUDIT_DB, else\n"
    "                       " AUDIT_DEFAULT_DB ")\n"
    "  --since WHEN         24h, 90m, 7d, 30s, 500ms, or an RFC 3339 time\n"
    "                       (default: all)\n"
    "  --node N             decisions on node N\n"
    "  --namespace NS       decisions whose victim is in NS\n"
    "  --gpu G              decisions about GPU G (its label value, GPU scope)\n"
    "  --result R           decisions that ended R (recycled, released,\n"
    "                       would_recycle, skipped_recovered, skipped_no_candidate,\n"
    "                       skipped_telemetry, skipped_kube, blocked,\n"
    "                       rate_limited, coalesced, failed, in_progress)\n"
    "  --limit N            at most N rows, newest first (default 100, 0 = all;\n"
    "                       stats counts every match unless --limit is given)\n"
    "  --format table|json  output (default table; json is one array)\n"
    "\n"
    "high availability (several replicas, each its own database): one listing of\n"
    "decisions, newest first, each row naming its replica:\n"
    "  --db PATH            again: also read that database (up to 16 in all)\n"
    "  --merge FILE         also read FILE, the `audit --format json` listing of\n"
    "                       another replica (\"-\" = standard input; several listings\n"
    "                       one after another are fine)\n"
    "  --help               this text\n"
    "\n"
    "exit status: 0 ok (also when nothing matches), 1 runtime error, 2 usage error\n";

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* One line on stderr; returns the usage exit code. */
static int
usage_error(const char *fmt, ...)
{
    va_list ap;

    fputs(AUDIT_PROG ": ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs(" (see " AUDIT_PROG " --help)\n", stderr);
    return AUDIT_EXIT_USAGE;
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

static int
set_since(struct parse *p, const char *v)
{
    int64_t ago_ms, at;

    /* The audit has always taken a duration of 23 characters at most. */
    if (strlen(v) < 24 && duration_parse_ms(v, &ago_ms) == 0)
        at = p->p_now_ms - ago_ms;
    else if (rfc3339_parse_ms(v, RFC3339_SPACE, &at) == -1)
        return usage_error("bad --since \"%s\": want a duration (90m, 24h, 7d)"
                           " or an RFC 3339 time (2026-06-02T10:00:00Z)",
                           v);
    /* Every row is after 1970, and 0 means "no bound". */
    p->p_a.aa_filter.sf_since_ms = at > 0 ? at : 0;
    return 0;
}

static int
set_result(struct parse *p, const char *v)
{
    enum decision_result r;
    char want[512];
    size_t off = 0;

    if (decision_result_parse(v, &r) == 0) {
        p->p_a.aa_filter.sf_result = decision_result_name(r);
        return 0;
    }
    want[0] = '\0';
    for (int i = 0; i < RESULT_COUNT && off < sizeof(want); i++) {
        int n = snprintf(want + off, sizeof(want) - off, "%s%s", i > 0 ? ", " : "",
                         decision_result_name((enum decision_result)i));
        if (n < 0)
            break;
        off += (size_t)n;
    }
    return usage_error("unknown --result \"%s\": want one of %s", v, want);
}

static int
set_option(struct parse *p, unsigned bit, const char *v)
{
    switch (bit) {
    case OPT_DB:
        if (*v == '\0')
            return usage_error("--db is empty");
        if (p->p_ndb++ == 0) { /* the first replaces the default */
            p->p_a.aa_db = v;
            return 0;
        }
        if (p->p_a.aa_nmore_dbs + p->p_a.aa_nmerge + 1 >= AUDIT_MAX_SOURCES)
            return usage_error("too many --db and --merge (at most %d)",
                               AUDIT_MAX_SOURCES);
        p->p_a.aa_more_dbs[p->p_a.aa_nmore_dbs++] = v;
        return 0;
    case OPT_MERGE:
        if (*v == '\0')
            return usage_error("--merge is empty");
        if (p->p_a.aa_nmore_dbs + p->p_a.aa_nmerge + 1 >= AUDIT_MAX_SOURCES)
            return usage_error("too many --db and --merge (at most %d)",
                               AUDIT_MAX_SOURCES);
        for (size_t i = 0; i < p->p_a.aa_nmerge; i++)
            if (strcmp(v, "-") == 0 && strcmp(p->p_a.aa_merge[i], "-") == 0)
                return usage_error("--merge - (standard input) is given twice");
        p->p_a.aa_merge[p->p_a.aa_nmerge++] = v;
        return 0;
    case OPT_SINCE:
        return set_since(p, v);
    case OPT_NODE:
        p->p_a.aa_filter.sf_node = v;
        return 0;
    case OPT_NAMESPACE:
        p->p_a.aa_filter.sf_namespace = v;
        return 0;
    case OPT_GPU:
        p->p_a.aa_filter.sf_gpu = v;
        return 0;
    case OPT_RESULT:
        return set_result(p, v);
    case OPT_LIMIT:
        if (parse_count(v, &p->p_a.aa_filter.sf_limit) == -1)
            return usage_error("bad --limit \"%s\": want a whole number, 0 for no limit",
                               v);
        return 0;
    case OPT_FORMAT:
        if (strcmp(v, "table") != 0 && strcmp(v, "json") != 0)
            return usage_error("unknown --format \"%s\": want table or json", v);
        p->p_a.aa_json = strcmp(v, "json") == 0;
        return 0;
    default:
        return usage_error("internal: option %u", bit); /* can't happen */
    }
}

static const struct {
    const char *o_name;
    unsigned o_bit;
} options[] = {
    {"db", OPT_DB},
    {"merge", OPT_MERGE},
    {"since", OPT_SINCE},
    {"node", OPT_NODE},
    {"namespace", OPT_NAMESPACE},
    {"result", OPT_RESULT},
    {"limit", OPT_LIMIT},
    {"format", OPT_FORMAT},
    {"gpu", OPT_GPU},
    /* The AUDIT_DB setting's own flag (SPEC: a setting's flag is its name in
     * lower case with dashes), the same as --db. */
    {"audit-db", OPT_DB},
};

/* "--name=value" or "--name value" at argv[*i]; advances *i past a value. */
static int
parse_option(struct parse *p, int argc, char **argv, int *i)
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
    p->p_given |= options[k].o_bit;
    return set_option(p, options[k].o_bit, value);
}

/* The words: show ID, alerts, stats (at most one). */
static int
parse_word(struct parse *p, const char *w)
{
    if (p->p_have_cmd && p->p_a.aa_cmd == AUDIT_SHOW && p->p_id_text == NULL) {
        p->p_id_text = w;
        if (parse_count(w, &p->p_a.aa_id) == -1 || p->p_a.aa_id == 0)
            return usage_error("bad decision ID \"%s\": want a number from the listing",
                               w);
        return 0;
    }
    if (p->p_have_cmd)
        return usage_error("unexpected argument \"%s\"", w);
    if (strcmp(w, "show") == 0)
        p->p_a.aa_cmd = AUDIT_SHOW;
    else if (strcmp(w, "alerts") == 0)
        p->p_a.aa_cmd = AUDIT_ALERTS;
    else if (strcmp(w, "stats") == 0)
        p->p_a.aa_cmd = AUDIT_STATS;
    else
        return usage_error("unknown command \"%s\": want show, alerts or stats", w);
    p->p_have_cmd = 1;
    return 0;
}

/* Refuses options that mean nothing to the command, rather than ignore a
 * filter and show more than was asked for. */
static int
check_applicable(const struct parse *p)
{
    static const struct {
        unsigned c_bit;
        const char *c_name;
    } filters[] = {
        {OPT_SINCE, "--since"},   {OPT_NODE, "--node"},   {OPT_NAMESPACE, "--namespace"},
        {OPT_RESULT, "--result"}, {OPT_LIMIT, "--limit"}, {OPT_GPU, "--gpu"},
    };
    unsigned refused = 0;
    const char *cmd = p->p_a.aa_cmd == AUDIT_SHOW ? "show" : "alerts";
    size_t i;

    if (p->p_a.aa_cmd == AUDIT_SHOW)
        refused = OPT_SINCE | OPT_NODE | OPT_NAMESPACE | OPT_RESULT | OPT_LIMIT | OPT_GPU;
    else if (p->p_a.aa_cmd == AUDIT_ALERTS)
        refused = OPT_NODE | OPT_NAMESPACE | OPT_RESULT | OPT_GPU;
    for (i = 0; i < sizeof(filters) / sizeof(filters[0]); i++)
        if (p->p_given & refused & filters[i].c_bit)
            return usage_error("%s does not apply to %s", filters[i].c_name, cmd);
    if (p->p_a.aa_cmd == AUDIT_SHOW && p->p_id_text == NULL)
        return usage_error("show needs a decision ID");
    if (p->p_a.aa_cmd != AUDIT_LIST && (p->p_a.aa_nmore_dbs > 0 || p->p_a.aa_nmerge > 0))
        return usage_error("several --db, or --merge, merge the decision listing only "
                           "(show, alerts and stats read one database)");
    return 0;
}

static int
parse_argv(struct parse *p, int argc, char **argv)
{
    int i, words_only = 0;

    for (i = 1; i < argc; i++) {
        const char *arg = argv[i];
        int rc = 0;

        if (!words_only && strcmp(arg, "--") == 0)
            words_only = 1;
        else if (!words_only && (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0))
            p->p_a.aa_help = 1;
        else if (!words_only && strncmp(arg, "--", 2) == 0)
            rc = parse_option(p, argc, argv, &i);
        else if (!words_only && arg[0] == '-' && arg[1] != '\0')
            return usage_error("unknown option %s", arg);
        else
            rc = parse_word(p, arg);
        if (rc != 0)
            return rc;
        if (p->p_a.aa_help)
            return 0;
    }
    return check_applicable(p);
}

void
audit_print_usage(FILE *out)
{
    fputs(usage_text, out);
}

int
audit_parse_args(struct audit_args *a, int argc, char **argv, const char *env_db,
                 int64_t now_ms)
{
    struct parse p;
    int rc;

    memset(&p, 0, sizeof(p));
    p.p_a.aa_cmd = AUDIT_LIST;
    p.p_a.aa_db = env_db ? env_db : AUDIT_DEFAULT_DB;
    p.p_a.aa_filter.sf_limit = AUDIT_DEFAULT_LIMIT;
    p.p_now_ms = now_ms;
    if ((rc = parse_argv(&p, argc, argv)) != 0)
        return rc;
    /* A summary counts everything unless a limit was asked for. */
    if (p.p_a.aa_cmd == AUDIT_STATS && !(p.p_given & OPT_LIMIT))
        p.p_a.aa_filter.sf_limit = 0;
    if (!p.p_a.aa_help && *p.p_a.aa_db == '\0') /* AUDIT_DB="" (--db "" is refused) */
        return usage_error("AUDIT_DB is empty");
    *a = p.p_a;
    return 0;
}
