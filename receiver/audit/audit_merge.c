/* audit_merge.c -- `audit --db A --db B` and `audit --merge -`: the decisions of several
 * replicas as one history, newest first, each row naming its replica
 *
 * Every source -- a database, or a JSON listing another replica printed with
 * `audit --format json` -- becomes decision objects (SPEC's, with "replica"),
 * filtered alike, sorted by time (then replica, then id, newest first) and
 * cut to --limit. A source's newest --limit rows are all the merge can need,
 * so a database is read no further. A listing's object that cannot be read is
 * reported on stderr and skipped, never the end of the listing. */
#include "audit_merge.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "audit_cli.h"
#include "audit_format.h"
#include "rfc3339.h"
#include "store.h"
#include "termtext.h"

#define LISTING_MAX (256u * 1024 * 1024) /* bytes of JSON read from one --merge */

struct row {
    int64_t r_time_ms;
    int64_t r_id;  /* 0 when null */
    json_t *r_obj; /* owned */
};

struct rows {
    struct row *rs_v;
    size_t rs_n, rs_cap;
    const struct store_filter *rs_filter;
    int rs_bad; /* objects skipped */
    const char *rs_fail;
};

static int
push(struct rows *rs, json_t *obj, int64_t time_ms, int64_t id)
{
    if (rs->rs_n == rs->rs_cap) {
        size_t cap = rs->rs_cap ? rs->rs_cap * 2 : 256;
        struct row *v = realloc(rs->rs_v, cap * sizeof(*v));
        if (v == NULL) {
            json_decref(obj);
            rs->rs_fail = "out of memory";
            return -1;
        }
        rs->rs_v = v;
        rs->rs_cap = cap;
    }
    rs->rs_v[rs->rs_n++] = (struct row){time_ms, id, obj};
    return 0;
}

static const char *
str_member(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);

    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* A database row: its SPEC object, "replica" always there (null when the row
 * names none: written without leader election). */
static int
on_db_row(int64_t id, const struct store_decision *d, void *arg)
{
    struct rows *rs = arg;
    json_t *o = audit_decision_json(d, id);

    if (o == NULL || (json_object_get(o, "replica") == NULL &&
                      json_object_set_new(o, "replica", json_null()) == -1)) {
        json_decref(o);
        rs->rs_fail = "out of memory";
        return -1;
    }
    return push(rs, o, d->sd_time_ms, id);
}

static int
read_db(const char *path, struct rows *rs, char *err, size_t errlen)
{
    struct store *s = store_open(path, STORE_READONLY, err, errlen);
    int64_t n;

    if (s == NULL)
        return -1;
    n = store_query_decisions(s, rs->rs_filter, on_db_row, rs, err, errlen);
    store_close(s);
    if (n == -1 && rs->rs_fail != NULL)
        snprintf(err, errlen, "%s: %s", path, rs->rs_fail);
    return n == -1 ? -1 : 0;
}

/* Whether o (a decision object of a listing) passes the filter. */
static int
wanted(json_t *o, int64_t time_ms, const struct store_filter *f)
{
    json_t *victim = json_object_get(o, "victim");
    const char *ns = json_is_object(victim) ? str_member(victim, "namespace") : NULL;
    const char *node = str_member(o, "node"), *result = str_member(o, "result");
    const char *gpu = str_member(o, "gpu");

    return (f->sf_since_ms == 0 || time_ms >= f->sf_since_ms) &&
           (f->sf_node == NULL || (node && strcmp(node, f->sf_node) == 0)) &&
           (f->sf_namespace == NULL || (ns && strcmp(ns, f->sf_namespace) == 0)) &&
           (f->sf_result == NULL || (result && strcmp(result, f->sf_result) == 0)) &&
           (f->sf_gpu == NULL || (gpu && strcmp(gpu, f->sf_gpu) == 0));
}

/* Checks what the table and the sort read of an object of a listing. */
static int
readable(json_t *o, int64_t *time_ms, int64_t *id)
{
    json_t *idv = json_object_get(o, "id"), *free_mib = json_object_get(o, "free_mib");
    json_t *victim = json_object_get(o, "victim"), *rep = json_object_get(o, "replica");
    const char *t = str_member(o, "time");

    if (!json_is_object(o) || t == NULL || rfc3339_parse_ms(t, 0, time_ms) == -1 ||
        !(json_is_integer(idv) || json_is_null(idv)) || str_member(o, "node") == NULL ||
        str_member(o, "result") == NULL ||
        !json_is_integer(json_object_get(o, "floor_mib")) ||
        !(json_is_integer(free_mib) || json_is_null(free_mib)) ||
        !(json_is_null(victim) || victim == NULL ||
          (json_is_object(victim) && str_member(victim, "namespace") != NULL &&
           str_member(victim, "pod") != NULL)) ||
        !(rep == NULL || json_is_null(rep) || json_is_string(rep)))
        return 0;
    *id = json_is_integer(idv) ? (int64_t)json_integer_value(idv) : 0;
    return 1;
}

/* One listing: a JSON array of decision objects, or several one after another. */
static int
read_listing(const char *name, struct rows *rs, char *err, size_t errlen)
{
    FILE *in = strcmp(name, "-") == 0 ? stdin : fopen(name, "r");
    char *text = NULL;
    size_t len = 0, cap = 0, off = 0, got;
    json_error_t jerr;
    int rc = -1;

    if (in == NULL) {
        snprintf(err, errlen, "--merge %s: cannot open it", name);
        return -1;
    }
    do { /* read it whole, up to LISTING_MAX */
        if (len + 65536 + 1 > cap) {
            char *t;
            cap = cap ? cap * 2 : 131072;
            if (cap > LISTING_MAX + 65536 + 1 || (t = realloc(text, cap)) == NULL) {
                snprintf(err, errlen, "--merge %s: over %u bytes, or out of memory", name,
                         LISTING_MAX);
                goto out;
            }
            text = t;
        }
        got = fread(text + len, 1, 65536, in);
        len += got;
    } while (got > 0);
    if (ferror(in)) {
        snprintf(err, errlen, "--merge %s: cannot read it", name);
        goto out;
    }
    while (off < len) {
        json_t *arr;
        size_t i;

        while (off < len && (text[off] == ' ' || text[off] == '\n' || text[off] == '\r' ||
                             text[off] == '\t'))
            off++;
        if (off == len)
            break;
        arr = json_loadb(text + off, len - off, JSON_DISABLE_EOF_CHECK, &jerr);
        if (!json_is_array(arr)) {
            json_decref(arr);
            snprintf(err, errlen, "--merge %s: not an `audit --format json` listing: %s",
                     name, arr == NULL ? jerr.text : "not a JSON array");
            goto out;
        }
        off += jerr.position;
        for (i = 0; i < json_array_size(arr); i++) {
            json_t *o = json_array_get(arr, i);
            int64_t t, id;
            if (!readable(o, &t, &id)) {
                fprintf(stderr,
                        AUDIT_PROG ": --merge %s: element %zu is not a decision; "
                                   "skipped\n",
                        name, i);
                rs->rs_bad++;
                continue;
            }
            if (!wanted(o, t, rs->rs_filter))
                continue;
            if (json_object_get(o, "replica") == NULL)
                json_object_set_new(o, "replica", json_null());
            if (push(rs, json_incref(o), t, id) == -1) {
                json_decref(arr);
                snprintf(err, errlen, "out of memory");
                goto out;
            }
        }
        json_decref(arr);
    }
    rc = 0;
out:
    free(text);
    if (in != stdin)
        fclose(in);
    return rc;
}

/* Newest first; then by replica name, then by id, newest first. */
static int
cmp_rows(const void *pa, const void *pb)
{
    const struct row *a = pa, *b = pb;
    const char *ra = str_member(a->r_obj, "replica"),
               *rb = str_member(b->r_obj, "replica");
    int c;

    if (a->r_time_ms != b->r_time_ms)
        return a->r_time_ms > b->r_time_ms ? -1 : 1;
    if ((c = strcmp(ra ? ra : "", rb ? rb : "")) != 0)
        return c;
    return a->r_id > b->r_id ? -1 : a->r_id < b->r_id;
}

#define REPLICA_CELL_MAX 63 /* a pod name's longest label; longer ones are cut */

/* The replica's name as a table cell of width w: printable ASCII only. */
static void
replica_cell(FILE *out, const char *r, int w)
{
    size_t shown;

    /* A replica name read from another file is outside text: cleaned like
     * every other cell (termtext.h), padded by the columns it shows. */
    shown = termtext_put(out, r == NULL ? "-" : r, (size_t)w);
    fprintf(out, "%*s ", (int)((size_t)w - shown), "");
}

/* What the table prints of an object, as a decision (borrowing from it). */
static void
row_view(json_t *o, int64_t time_ms, struct store_decision *d, struct store_victim *v)
{
    json_t *victim = json_object_get(o, "victim"),
           *free_mib = json_object_get(o, "free_mib");

    memset(d, 0, sizeof(*d));
    d->sd_time_ms = time_ms;
    d->sd_node = str_member(o, "node");
    d->sd_gpu = str_member(o, "gpu");
    d->sd_result = str_member(o, "result");
    d->sd_free_known = json_is_integer(free_mib);
    d->sd_free_mib = d->sd_free_known ? (int64_t)json_integer_value(free_mib) : 0;
    d->sd_floor_mib = (int64_t)json_integer_value(json_object_get(o, "floor_mib"));
    d->sd_free_source = str_member(o, "free_source");
    if (json_is_object(victim)) {
        memset(v, 0, sizeof(*v));
        v->sv_namespace = str_member(victim, "namespace");
        v->sv_pod = str_member(victim, "pod");
        d->sd_victim = v;
    }
}

static int
print_rows(const struct rows *rs, size_t n, int json)
{
    struct store_decision d;
    struct store_victim v;
    int w = (int)strlen("REPLICA");

    for (size_t i = 0; i < n; i++) { /* the column is as wide as its longest name */
        const char *r = str_member(rs->rs_v[i].r_obj, "replica");
        size_t len = r ? termtext_width(r) : 1;
        if ((int)len > w)
            w = len > REPLICA_CELL_MAX ? REPLICA_CELL_MAX : (int)len;
    }
    for (size_t i = 0; i < n; i++) {
        const struct row *r = &rs->rs_v[i];
        if (json) {
            char *text = json_dumps(r->r_obj, AUDIT_JSON_FLAGS);
            if (text == NULL)
                return -1;
            fputs(i == 0 ? "[\n" : ",\n", stdout);
            fputs(text, stdout);
            free(text);
        } else {
            if (i == 0) {
                fprintf(stdout, "%-*s ", w, "REPLICA");
                audit_decision_table_header(stdout);
            }
            replica_cell(stdout, str_member(r->r_obj, "replica"), w);
            row_view(r->r_obj, r->r_time_ms, &d, &v);
            audit_decision_table_row(stdout, &d, r->r_id);
        }
        if (ferror(stdout))
            return -1;
    }
    if (json)
        fputs(n == 0 ? "[]\n" : "\n]\n", stdout);
    else if (n == 0)
        fputs("no decisions\n", stdout);
    return 0;
}

int
audit_merge_run(const struct audit_args *a)
{
    struct rows rs = {.rs_filter = &a->aa_filter};
    char err[768];
    size_t n, i;
    int rc = AUDIT_EXIT_RUNTIME;

    err[0] = '\0';
    if (read_db(a->aa_db, &rs, err, sizeof(err)) == -1)
        goto out;
    for (i = 0; i < a->aa_nmore_dbs; i++)
        if (read_db(a->aa_more_dbs[i], &rs, err, sizeof(err)) == -1)
            goto out;
    for (i = 0; i < a->aa_nmerge; i++)
        if (read_listing(a->aa_merge[i], &rs, err, sizeof(err)) == -1)
            goto out;
    if (rs.rs_n > 1)
        qsort(rs.rs_v, rs.rs_n, sizeof(*rs.rs_v), cmp_rows);
    n = a->aa_filter.sf_limit > 0 && (size_t)a->aa_filter.sf_limit < rs.rs_n
            ? (size_t)a->aa_filter.sf_limit
            : rs.rs_n;
    if (print_rows(&rs, n, a->aa_json) == -1 || fflush(stdout) != 0 || ferror(stdout)) {
        snprintf(err, sizeof(err), "cannot write the output");
        goto out;
    }
    rc = AUDIT_EXIT_OK;
out:
    if (rc != AUDIT_EXIT_OK)
        fprintf(stderr, AUDIT_PROG ": %s\n", err[0] ? err : "out of memory");
    for (i = 0; i < rs.rs_n; i++)
        json_decref(rs.rs_v[i].r_obj);
    free(rs.rs_v);
    return rc;
}
