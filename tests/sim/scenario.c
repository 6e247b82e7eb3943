/* scenario.c -- reads and validates the simulator's scenario file (see README.md) */
#include "scenario.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_NODE "gpu-node-1"
#define DEFAULT_RESOURCE "viktorbarzin.me/gpumem"
#define DEFAULT_TOTAL_MIB 15360
#define DEFAULT_RESPAWN_AFTER 5.0
#define DEFAULT_STARTED_AGO 86400.0
#define DEFAULT_RELEASE_AFTER 1.0
/* Replacement names are owner + "-" + 5 characters; keep them a valid pod name. */
#define MAX_OWNER_NAME 200

/* The parser's error state: where we are in the file, for messages that point at it. */
struct sc_parse {
    const char *sp_path;
    char *sp_err;
    size_t sp_errlen;
};

static int __attribute__((format(printf, 2, 3)))
fail(struct sc_parse *p, const char *fmt, ...)
{
    char what[400];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    snprintf(p->sp_err, p->sp_errlen, "scenario %s: %s", p->sp_path, what);
    return -1;
}

int
quantity_canonical_int(long long v, char *buf, size_t len)
{
    static const char *const suffix[] = {"", "k", "M", "G", "T", "P", "E"};
    size_t i = 0;
    int n;

    /* DecimalSI keeps the largest power of 1000 that leaves an integer mantissa. */
    while (v != 0 && v % 1000 == 0 && i + 1 < sizeof(suffix) / sizeof(suffix[0])) {
        v /= 1000;
        i++;
    }
    n = snprintf(buf, len, "%lld%s", v, suffix[i]);
    return (n < 0 || (size_t)n >= len) ? -1 : 0;
}

/* The API server's quantity grammar, sign and all: digits[.digits] then one suffix. */
static int
quantity_valid(const char *s)
{
    static const char *const suffixes[] = {"",  "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n",
                                           "u", "m",  "k",  "M",  "G",  "T",  "P",  "E"};
    size_t digits = 0, i;

    if (*s == '+' || *s == '-')
        s++;
    while (isdigit((unsigned char)*s) || *s == '.') {
        digits += isdigit((unsigned char)*s) != 0;
        s++;
    }
    if (digits == 0)
        return 0;
    if (*s == 'e' || *s == 'E') {
        const char *e = s + 1;
        if (*e == '+' || *e == '-')
            e++;
        if (isdigit((unsigned char)*e)) {
            while (isdigit((unsigned char)*e))
                e++;
            return *e == '\0';
        }
    }
    for (i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
        if (strcmp(s, suffixes[i]) == 0)
            return 1;
    return 0;
}

json_t *
quantity_canonical_json(const json_t *v)
{
    char buf[32];
    const char *s;
    long long n = 0;

    if (json_is_integer(v)) {
        n = json_integer_value(v);
    } else if (json_is_string(v)) {
        s = json_string_value(v);
        if (!quantity_valid(s))
            return NULL;
        if (strspn(s, "0123456789") != strlen(s) || strlen(s) > 15)
            return json_string(s);
        n = strtoll(s, NULL, 10);
    } else {
        return NULL;
    }
    if (n < 0 || quantity_canonical_int(n, buf, sizeof(buf)) != 0)
        return NULL;
    return json_string(buf);
}

double
sc_proc_mib(const struct sc_proc *pr, double t)
{
    size_t i;

    if (t <= pr->pr_points[0].pt_t)
        return pr->pr_points[0].pt_mib;
    for (i = 1; i < pr->pr_npoints; i++) {
        const struct sc_point *a = &pr->pr_points[i - 1], *b = &pr->pr_points[i];
        if (t < b->pt_t) {
            if (pr->pr_step)
                return a->pt_mib;
            return a->pt_mib +
                   (b->pt_mib - a->pt_mib) * (t - a->pt_t) / (b->pt_t - a->pt_t);
        }
    }
    return pr->pr_points[pr->pr_npoints - 1].pt_mib;
}

/* The index of the simulated node called name, or -1. */
static int
node_index(const struct scenario *sc, const char *name)
{
    size_t i;

    for (i = 0; i < sc->sc_nnodes; i++)
        if (strcmp(sc->sc_nodes[i].nd_name, name) == 0)
            return (int)i;
    return -1;
}

static void
procs_free(struct sc_proc *procs, size_t n)
{
    size_t i;

    for (i = 0; i < n && procs != NULL; i++)
        free(procs[i].pr_points);
    free(procs);
}

/* Parses one process: {"pid", "comm", "mib"} or {"pid", "comm", "timeline", "interp"},
 * each with the optional "gpu", "container", "na" and "released_mib". */
static int
parse_proc(struct sc_parse *p, const char *where, json_t *jp, struct sc_proc *pr,
           const struct scenario *sc, const struct sc_pod *po)
{
    json_error_t je;
    json_t *jmib = NULL, *jtl = NULL, *pt, *c;
    json_int_t pid = 0, gpu = po->po_gpu;
    const char *interp = "linear";
    size_t i, ngpus = sc->sc_nodes[po->po_node_idx >= 0 ? po->po_node_idx : 0].nd_ngpus;

    if (json_unpack_ex(jp, &je, JSON_STRICT,
                       "{s?I, s?s, s?o, s?o, s?s, s?I, s?s, s?b, s?F}", "pid", &pid,
                       "comm", &pr->pr_comm, "mib", &jmib, "timeline", &jtl, "interp",
                       &interp, "gpu", &gpu, "container", &pr->pr_container, "na",
                       &pr->pr_na, "released_mib", &pr->pr_released_mib) != 0)
        return fail(p, "%s: %s", where, je.text);
    if (pid < 0)
        return fail(p, "%s: pid must be positive", where);
    if (!(pr->pr_released_mib >= 0) || !isfinite(pr->pr_released_mib))
        return fail(p, "%s: released_mib must be a number >= 0", where);
    pr->pr_pid = (long)pid;
    if (gpu < 0 || (size_t)gpu >= ngpus)
        return fail(p, "%s: gpu %lld: the node has GPUs 0..%zu", where, (long long)gpu,
                    ngpus - 1);
    pr->pr_gpu = (int)gpu;
    if (pr->pr_container == NULL) {
        pr->pr_container = json_string_value(
            json_object_get(json_array_get(po->po_containers, 0), "name"));
    } else {
        int found = 0;
        json_array_foreach(po->po_containers, i, c) found |=
            strcmp(json_string_value(json_object_get(c, "name")), pr->pr_container) == 0;
        if (!found)
            return fail(p, "%s: no container named \"%s\" in the pod", where,
                        pr->pr_container);
    }
    if ((jmib == NULL) == (jtl == NULL))
        return fail(p, "%s: give exactly one of \"mib\" or \"timeline\"", where);
    if (strcmp(interp, "linear") != 0 && strcmp(interp, "step") != 0)
        return fail(p, "%s: interp must be \"linear\" or \"step\", not \"%s\"", where,
                    interp);
    pr->pr_step = strcmp(interp, "step") == 0;
    if (jmib != NULL) {
        if (!json_is_number(jmib) || json_number_value(jmib) < 0)
            return fail(p, "%s: mib must be a number >= 0", where);
        pr->pr_points = calloc(1, sizeof(*pr->pr_points));
        if (pr->pr_points == NULL)
            return fail(p, "%s: out of memory", where);
        pr->pr_npoints = 1;
        pr->pr_points[0].pt_mib = json_number_value(jmib);
        return 0;
    }
    if (!json_is_array(jtl) || json_array_size(jtl) == 0)
        return fail(p, "%s: timeline must be a non-empty array of [seconds, mib]", where);
    pr->pr_points = calloc(json_array_size(jtl), sizeof(*pr->pr_points));
    if (pr->pr_points == NULL)
        return fail(p, "%s: out of memory", where);
    pr->pr_npoints = json_array_size(jtl);
    json_array_foreach(jtl, i, pt)
    {
        struct sc_point *sp = &pr->pr_points[i];
        if (json_unpack_ex(pt, &je, JSON_STRICT, "[FF]", &sp->pt_t, &sp->pt_mib) != 0)
            return fail(p, "%s: timeline[%zu]: want [seconds, mib]: %s", where, i,
                        je.text);
        if (sp->pt_t < 0 || sp->pt_mib < 0 || !isfinite(sp->pt_t) ||
            !isfinite(sp->pt_mib))
            return fail(p, "%s: timeline[%zu]: seconds and mib must be >= 0", where, i);
        if (i > 0 && sp->pt_t <= pr->pr_points[i - 1].pt_t)
            return fail(p, "%s: timeline[%zu]: seconds must strictly increase", where, i);
    }
    return 0;
}

/* Parses a "processes" array into a new array (*out, *n); on error frees what it made. */
static int
parse_procs(struct sc_parse *p, const char *where, json_t *ja, const struct scenario *sc,
            const struct sc_pod *po, struct sc_proc **out, size_t *n)
{
    char sub[320];
    json_t *jp;
    size_t i;

    *out = NULL;
    *n = 0;
    if (ja == NULL)
        return 0;
    if (!json_is_array(ja))
        return fail(p, "%s: processes must be an array", where);
    if (json_array_size(ja) == 0)
        return 0;
    *out = calloc(json_array_size(ja), sizeof(**out));
    if (*out == NULL)
        return fail(p, "%s: out of memory", where);
    *n = json_array_size(ja);
    json_array_foreach(ja, i, jp)
    {
        snprintf(sub, sizeof(sub), "%s: processes[%zu]", where, i);
        if (parse_proc(p, sub, jp, &(*out)[i], sc, po) != 0) {
            procs_free(*out, *n);
            *out = NULL;
            *n = 0;
            return -1;
        }
    }
    return 0;
}

/* The replacement's default footprint: each process flat at its t=0 value. */
static int
fresh_procs(struct sc_parse *p, const char *where, const struct sc_pod *po,
            struct sc_proc **out, size_t *n)
{
    size_t i;

    *out = NULL;
    *n = 0;
    if (po->po_nprocs == 0)
        return 0;
    *out = calloc(po->po_nprocs, sizeof(**out));
    if (*out == NULL)
        return fail(p, "%s: out of memory", where);
    *n = po->po_nprocs;
    for (i = 0; i < po->po_nprocs; i++) {
        (*out)[i].pr_comm = po->po_procs[i].pr_comm;
        (*out)[i].pr_gpu = po->po_procs[i].pr_gpu;
        (*out)[i].pr_na = po->po_procs[i].pr_na;
        (*out)[i].pr_container = po->po_procs[i].pr_container;
        (*out)[i].pr_released_mib = po->po_procs[i].pr_released_mib;
        (*out)[i].pr_points = calloc(1, sizeof(struct sc_point));
        if ((*out)[i].pr_points == NULL)
            return fail(p, "%s: out of memory", where);
        (*out)[i].pr_npoints = 1;
        (*out)[i].pr_points[0].pt_mib = po->po_procs[i].pr_points[0].pt_mib;
    }
    return 0;
}

/* Canonicalises a resources map in place, as the API server stores quantities. */
static int
canonical_map(struct sc_parse *p, const char *where, json_t *map)
{
    const char *k;
    json_t *v, *c;

    if (map == NULL)
        return 0;
    if (!json_is_object(map))
        return fail(p, "%s: limits/requests must be objects", where);
    json_object_foreach(map, k, v)
    {
        c = quantity_canonical_json(v);
        if (c == NULL)
            return fail(p, "%s: %s: not a quantity", where, k);
        if (json_object_set_new(map, k, c) != 0)
            return fail(p, "%s: out of memory", where);
    }
    return 0;
}

/*
 * Builds or normalises spec.containers: the "budget" shorthand makes one
 * container with nvidia.com/gpu 1 and the budget; given containers get the
 * API server's defaulting (requests copied from limits where unset).
 */
static int
parse_containers(struct sc_parse *p, const char *where, const struct scenario *sc,
                 json_t *jpod, json_t *jbudget, const char *image, const char *cname)
{
    json_t *conts = json_object_get(jpod, "containers"), *c, *res, *lim, *req, *q;
    const char *k;
    size_t i;

    if (conts != NULL && (jbudget != NULL || image != NULL || cname != NULL))
        return fail(p, "%s: \"containers\" excludes \"budget\", \"image\", \"container\"",
                    where);
    if (conts == NULL) {
        lim = json_object();
        if (lim == NULL)
            return fail(p, "%s: out of memory", where);
        if (jbudget != NULL) {
            q = quantity_canonical_json(jbudget);
            if (q == NULL) {
                json_decref(lim);
                return fail(p, "%s: budget must be a quantity (3000 or \"3k\")", where);
            }
            if (json_object_set_new(lim, "nvidia.com/gpu", json_string("1")) != 0 ||
                json_object_set_new(lim, sc->sc_resource, q) != 0) {
                json_decref(lim);
                return fail(p, "%s: out of memory", where);
            }
        }
        conts = json_pack("[{s:s, s:s, s:{s:o}}]", "name", cname ? cname : "main",
                          "image", image ? image : "registry.local/app:latest",
                          "resources", "limits", lim);
        if (conts == NULL || json_object_set_new(jpod, "containers", conts) != 0)
            return fail(p, "%s: out of memory", where);
    }
    if (!json_is_array(conts) || json_array_size(conts) == 0)
        return fail(p, "%s: containers must be a non-empty array", where);
    json_array_foreach(conts, i, c)
    {
        if (!json_is_object(c) || !json_is_string(json_object_get(c, "name")))
            return fail(p, "%s: containers[%zu] needs a name", where, i);
        res = json_object_get(c, "resources");
        if (res == NULL) {
            if (json_object_set_new(c, "resources", json_object()) != 0)
                return fail(p, "%s: out of memory", where);
            continue;
        }
        if (!json_is_object(res))
            return fail(p, "%s: containers[%zu].resources must be an object", where, i);
        lim = json_object_get(res, "limits");
        req = json_object_get(res, "requests");
        if (canonical_map(p, where, lim) != 0 || canonical_map(p, where, req) != 0)
            return -1;
        if (lim == NULL || json_object_size(lim) == 0)
            continue;
        if (req == NULL) {
            req = json_object();
            if (req == NULL || json_object_set_new(res, "requests", req) != 0)
                return fail(p, "%s: out of memory", where);
        }
        json_object_foreach(lim, k, q)
        {
            if (json_object_get(req, k) == NULL && json_object_set(req, k, q) != 0)
                return fail(p, "%s: out of memory", where);
        }
    }
    return 0;
}

/* "owner": absent (ReplicaSet named after the pod), null (bare pod), or {kind, name}. */
static int
parse_owner(struct sc_parse *p, const char *where, json_t *jpod, struct sc_pod *po)
{
    json_error_t je;
    json_t *jo = json_object_get(jpod, "owner");
    const char *dash;
    char rs[256];

    if (jo == NULL) {
        /* A Deployment's pod is <replicaset>-<5 chars>: strip the suffix. */
        dash = strrchr(po->po_name, '-');
        if (dash == NULL || dash == po->po_name)
            return fail(p, "%s: cannot derive a ReplicaSet from the name; give \"owner\"",
                        where);
        snprintf(rs, sizeof(rs), "%.*s", (int)(dash - po->po_name), po->po_name);
        jo = json_pack("{s:s, s:s}", "kind", "ReplicaSet", "name", rs);
        if (jo == NULL || json_object_set_new(jpod, "owner", jo) != 0)
            return fail(p, "%s: out of memory", where);
    }
    if (json_is_null(jo))
        return 0;
    if (json_unpack_ex(jo, &je, JSON_STRICT, "{s:s, s:s}", "kind", &po->po_owner_kind,
                       "name", &po->po_owner_name) != 0)
        return fail(p, "%s: owner: %s", where, je.text);
    if (strlen(po->po_owner_name) == 0 || strlen(po->po_owner_name) > MAX_OWNER_NAME)
        return fail(p, "%s: owner name must be 1..%d characters", where, MAX_OWNER_NAME);
    return 0;
}

/* Whether v is absent or an array of objects. */
static int
objects(const json_t *v)
{
    const json_t *e;
    size_t i;

    if (v == NULL)
        return 1;
    if (!json_is_array(v))
        return 0;
    json_array_foreach(v, i, e) if (!json_is_object(e)) return 0;
    return 1;
}

/* "claims": ResourceClaims served as given, each named once by metadata. */
static int
parse_claims(struct sc_parse *p, json_t *jclaims)
{
    const json_t *c, *c2;
    const char *ns, *name, *ns2, *name2;
    json_error_t je;
    size_t i, j;

    if (jclaims == NULL)
        return 0;
    if (!json_is_array(jclaims))
        return fail(p, "claims must be an array");
    json_array_foreach(jclaims, i, c)
    {
        if (json_unpack_ex((json_t *)c, &je, 0, "{s:{s:s, s:s}}", "metadata", "namespace",
                           &ns, "name", &name) != 0 ||
            *ns == '\0' || *name == '\0')
            return fail(p, "claims[%zu]: needs metadata.namespace and metadata.name", i);
        for (j = 0; j < i; j++) {
            c2 = json_array_get(jclaims, j);
            if (json_unpack((json_t *)c2, "{s:{s:s, s:s}}", "metadata", "namespace", &ns2,
                            "name", &name2) == 0 &&
                strcmp(ns, ns2) == 0 && strcmp(name, name2) == 0)
                return fail(p, "claims[%zu]: %s/%s is declared twice", i, ns, name);
        }
    }
    return 0;
}

json_t *
scenario_claim(const struct scenario *sc, const char *ns, const char *name)
{
    json_t *c;
    const char *cns, *cname;
    size_t i;

    json_array_foreach(sc->sc_claims, i, c)
    {
        if (json_unpack(c, "{s:{s:s, s:s}}", "metadata", "namespace", &cns, "name",
                        &cname) == 0 &&
            strcmp(cns, ns) == 0 && strcmp(cname, name) == 0)
            return c;
    }
    return NULL;
}

static int
parse_pod(struct sc_parse *p, struct scenario *sc, size_t idx, json_t *jpod,
          double respawn_after)
{
    struct sc_pod *po = &sc->sc_pods[idx];
    json_error_t je;
    json_t *jbudget = NULL, *jprocs = NULL, *jpdb = NULL, *jrespawn = NULL,
           *jrprocs = NULL;
    json_t *jowner = NULL, *jcont = NULL;
    json_int_t gpu = 0;
    const char *image = NULL, *cname = NULL;
    char where[320];
    size_t ngpus;

    snprintf(where, sizeof(where), "pods[%zu]", idx);
    po->po_node = sc->sc_nodes[0].nd_name;
    po->po_phase = "Running";
    po->po_started_ago = DEFAULT_STARTED_AGO;
    po->po_respawns = 1;
    po->po_respawn_after = respawn_after;
    po->po_release_after = DEFAULT_RELEASE_AFTER;
    if (json_unpack_ex(
            jpod, &je, JSON_STRICT,
            "{s:s, s:s, s?s, s?s, s?s, s?F, s?o, s?o, s?o, s?o, s?s, s?s, s?b, s?o, "
            "s?o, s?o, s?o, s?I, s?F, s?o, s?o}",
            "namespace", &po->po_namespace, "name", &po->po_name, "uid", &po->po_uid,
            "node", &po->po_node, "phase", &po->po_phase, "started_ago",
            &po->po_started_ago, "owner", &jowner, "labels", &po->po_labels,
            "annotations", &po->po_annotations, "budget", &jbudget, "image", &image,
            "container", &cname, "terminating", &po->po_terminating, "containers", &jcont,
            "processes", &jprocs, "pdb", &jpdb, "respawn", &jrespawn, "gpu", &gpu,
            "release_after", &po->po_release_after, "resource_claims", &po->po_claims,
            "resource_claim_statuses", &po->po_claim_statuses) != 0)
        return fail(p, "%s: %s", where, je.text);
    snprintf(where, sizeof(where), "pods[%zu] (%s/%s)", idx, po->po_namespace,
             po->po_name);
    if (strlen(po->po_name) == 0 || strlen(po->po_name) > 253 ||
        strlen(po->po_namespace) == 0 || strlen(po->po_namespace) > 63)
        return fail(p, "%s: bad name or namespace length", where);
    if (strcmp(po->po_phase, "Running") != 0 && strcmp(po->po_phase, "Pending") != 0)
        return fail(p, "%s: phase must be Running or Pending", where);
    if (po->po_started_ago < 0)
        return fail(p, "%s: started_ago must be >= 0", where);
    if (!(po->po_release_after >= 0) || !isfinite(po->po_release_after))
        return fail(p, "%s: release_after must be >= 0", where);
    if (!objects(po->po_claims) || !objects(po->po_claim_statuses))
        return fail(p,
                    "%s: resource_claims and resource_claim_statuses must be arrays of "
                    "objects",
                    where);
    po->po_node_idx = node_index(sc, po->po_node);
    ngpus = sc->sc_nodes[po->po_node_idx >= 0 ? po->po_node_idx : 0].nd_ngpus;
    if (gpu < 0 || (size_t)gpu >= ngpus)
        return fail(p, "%s: gpu %lld: the node has GPUs 0..%zu", where, (long long)gpu,
                    ngpus - 1);
    po->po_gpu = (int)gpu;
    if ((po->po_labels != NULL && !json_is_object(po->po_labels)) ||
        (po->po_annotations != NULL && !json_is_object(po->po_annotations)))
        return fail(p, "%s: labels and annotations must be objects", where);
    /* Defaults go into the document so every borrowed pointer lives as long as sc_root.
     */
    if (po->po_labels == NULL) {
        po->po_labels = json_object();
        if (po->po_labels == NULL ||
            json_object_set_new(jpod, "labels", po->po_labels) != 0)
            return fail(p, "%s: out of memory", where);
    }
    if (po->po_annotations == NULL) {
        po->po_annotations = json_object();
        if (po->po_annotations == NULL ||
            json_object_set_new(jpod, "annotations", po->po_annotations) != 0)
            return fail(p, "%s: out of memory", where);
    }
    if (parse_owner(p, where, jpod, po) != 0 ||
        parse_containers(p, where, sc, jpod, jbudget, image, cname) != 0)
        return -1;
    po->po_containers = json_object_get(jpod, "containers");
    if (jpdb != NULL) {
        po->po_pdb_desired = 1;
        po->po_pdb_current = 1;
        po->po_pdb_refuse = "budget";
        if (json_unpack_ex(jpdb, &je, JSON_STRICT, "{s:s, s?i, s?i, s?s}", "name",
                           &po->po_pdb_name, "desired_healthy", &po->po_pdb_desired,
                           "current_healthy", &po->po_pdb_current, "refuse",
                           &po->po_pdb_refuse) != 0)
            return fail(p, "%s: pdb: %s", where, je.text);
        if (strcmp(po->po_pdb_refuse, "budget") != 0 &&
            strcmp(po->po_pdb_refuse, "processing") != 0 &&
            strcmp(po->po_pdb_refuse, "negative") != 0 &&
            strcmp(po->po_pdb_refuse, "unconfirmed") != 0 &&
            strcmp(po->po_pdb_refuse, "multiple") != 0)
            return fail(p,
                        "%s: pdb: refuse must be budget, processing, negative, "
                        "unconfirmed or multiple",
                        where);
    }
    if (parse_procs(p, where, jprocs, sc, po, &po->po_procs, &po->po_nprocs) != 0)
        return -1;
    if (po->po_nprocs > 0 && po->po_node_idx < 0)
        return fail(p, "%s: only pods on a simulated node (%s, ...) hold GPU memory",
                    where, sc->sc_nodes[0].nd_name);
    if (po->po_nprocs > 0 && strcmp(po->po_phase, "Running") != 0)
        return fail(p, "%s: a Pending pod holds no GPU memory", where);
    po->po_respawns = po->po_owner_kind != NULL;
    if (jrespawn != NULL && json_is_false(jrespawn)) {
        po->po_respawns = 0;
    } else if (jrespawn != NULL) {
        if (json_unpack_ex(jrespawn, &je, JSON_STRICT, "{s?F, s?o}", "after",
                           &po->po_respawn_after, "processes", &jrprocs) != 0)
            return fail(p, "%s: respawn: %s (want false or {after, processes})", where,
                        je.text);
        if (po->po_owner_kind == NULL)
            return fail(p, "%s: a bare pod (owner null) cannot respawn", where);
        if (po->po_respawn_after < 0)
            return fail(p, "%s: respawn.after must be >= 0", where);
    }
    if (jrprocs != NULL)
        return parse_procs(p, where, jrprocs, sc, po, &po->po_rprocs, &po->po_nrprocs);
    return fresh_procs(p, where, po, &po->po_rprocs, &po->po_nrprocs);
}

/* Fills a simulated Node's name, labels and capacity from jn (an object in sc_root, or
 * NULL for all defaults, then made at key in parent), defaulting what it leaves out. */
static int
parse_node(struct sc_parse *p, struct sc_node *nd, json_t *jn, json_t *parent,
           const char *key, const char *where)
{
    json_error_t je;
    json_t *jgpus = NULL; /* the caller's */

    nd->nd_name = DEFAULT_NODE;
    if (jn == NULL) {
        jn = json_object();
        if (jn == NULL || json_object_set_new(parent, key, jn) != 0)
            return fail(p, "out of memory");
    }
    if (json_unpack_ex(jn, &je, JSON_STRICT, "{s?s, s?o, s?o, s?o}", "name", &nd->nd_name,
                       "labels", &nd->nd_labels, "capacity", &nd->nd_capacity, "gpus",
                       &jgpus) != 0)
        return fail(p, "%s: %s", where, je.text);
    if (strlen(nd->nd_name) == 0 || strlen(nd->nd_name) > 253 ||
        strpbrk(nd->nd_name, "/ \t\n") != NULL)
        return fail(p, "%s: bad name", where);
    if (nd->nd_labels == NULL) {
        nd->nd_labels =
            json_pack("{s:s, s:s, s:s}", "kubernetes.io/hostname", nd->nd_name,
                      "kubernetes.io/os", "linux", "nvidia.com/gpu.present", "true");
        if (nd->nd_labels == NULL || json_object_set_new(jn, "labels", nd->nd_labels))
            return fail(p, "out of memory");
    }
    if (nd->nd_capacity == NULL) {
        char ngpus[24];
        snprintf(ngpus, sizeof(ngpus), "%zu", nd->nd_ngpus);
        nd->nd_capacity = json_pack("{s:s, s:s, s:s, s:s}", "cpu", "8", "memory", "32Gi",
                                    "nvidia.com/gpu", ngpus, "pods", "110");
        if (nd->nd_capacity == NULL ||
            json_object_set_new(jn, "capacity", nd->nd_capacity) != 0)
            return fail(p, "out of memory");
    }
    if (!json_is_object(nd->nd_labels) || !json_is_object(nd->nd_capacity))
        return fail(p, "%s: labels and capacity must be objects", where);
    return canonical_map(p, where, nd->nd_capacity);
}

/* A stable "GPU-<uuid>" for GPU idx when the file names none (splitmix64 of the seed). */
static void
gen_gpu_uuid(unsigned long long seed, size_t idx, char *out, size_t len)
{
    unsigned long long z[2];
    size_t k;

    for (k = 0; k < 2; k++) {
        unsigned long long x = seed + 0x9e3779b97f4a7c15ULL * (2 * idx + k + 1);
        x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
        x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
        z[k] = x ^ (x >> 31);
    }
    snprintf(out, len, "GPU-%08llx-%04llx-%04llx-%04llx-%012llx", z[0] >> 32,
             (z[0] >> 16) & 0xffff, z[0] & 0xffff, z[1] >> 48, z[1] & 0xffffffffffffULL);
}

/* The cards a scenario can name by "model", as measured (issue 26): what NVML calls
 * it, its framebuffer, what the driver keeps for itself, and what one CUDA context costs
 * each process. The A100's reserve and context are estimates between the other two. */
static const struct gpu_model {
    const char *gm_model, *gm_name;
    long gm_total, gm_reserved, gm_context;
} gpu_models[] = {
    {"T4", "Tesla T4", 15360, 300, 300},
    {"A100-40G", "NVIDIA A100-SXM4-40GB", 40960, 400, 400},
    {"H100-80G", "NVIDIA H100 80GB HBM3", 81559, 480, 500},
};

/* nd's GPUs from "gpus": absent (one GPU of gpu_total_mib) or
 * [{model, uuid, name, total_mib, reserved_mib, context_mib}]. uuid_base keeps the
 * generated UUIDs of different nodes apart. */
static int
parse_gpus(struct sc_parse *p, const struct scenario *sc, struct sc_node *nd,
           json_t *jgpus, long total, size_t uuid_base, const char *where)
{
    json_error_t je;
    json_t *jg;
    size_t i, k, n = jgpus == NULL ? 1 : json_array_size(jgpus);

    if (jgpus != NULL && (!json_is_array(jgpus) || n == 0 || n > 64))
        return fail(p, "%s: gpus must be an array of 1..64 GPUs", where);
    nd->nd_gpus = calloc(n, sizeof(*nd->nd_gpus));
    if (nd->nd_gpus == NULL)
        return fail(p, "out of memory");
    nd->nd_ngpus = n;
    for (i = 0; i < n; i++) {
        struct sc_gpu *g = &nd->nd_gpus[i];
        /* Without a model: an idealised card of the file's gpu_total_mib, named as a
         * T4, whose driver and contexts hold nothing unless the file says so. */
        static const struct gpu_model idealised = {NULL, "Tesla T4", 0, 0, 0};
        const struct gpu_model *gm = &idealised;
        const char *model = NULL;
        json_int_t gt = -1, gr = -1, gc = -1;

        if (jgpus != NULL) {
            jg = json_array_get(jgpus, i);
            if (json_unpack_ex(jg, &je, JSON_STRICT, "{s?s, s?s, s?s, s?I, s?I, s?I}",
                               "model", &model, "uuid", &g->gp_uuid, "name", &g->gp_name,
                               "total_mib", &gt, "reserved_mib", &gr, "context_mib",
                               &gc) != 0)
                return fail(p, "%s: gpus[%zu]: %s", where, i, je.text);
        }
        if (model != NULL) {
            for (k = 0; k < sizeof(gpu_models) / sizeof(gpu_models[0]); k++)
                if (strcmp(gpu_models[k].gm_model, model) == 0)
                    break;
            if (k == sizeof(gpu_models) / sizeof(gpu_models[0]))
                return fail(p,
                            "%s: gpus[%zu]: model \"%s\": want T4, A100-40G or H100-80G",
                            where, i, model);
            gm = &gpu_models[k];
        }
        if (gt < 0)
            gt = model != NULL ? gm->gm_total : total;
        if (gr < 0)
            gr = gm->gm_reserved;
        if (gc < 0)
            gc = gm->gm_context;
        if (g->gp_name == NULL)
            g->gp_name = gm->gm_name;
        if (gt <= 0 || gt > 1024 * 1024 || gr > gt || gc > gt)
            return fail(p,
                        "%s: gpus[%zu]: want 0 < total_mib <= 1048576, 0 <= "
                        "reserved_mib, context_mib <= total_mib",
                        where, i);
        /* The stub NVML's state file is space-separated: the UUID must be one word. */
        if (g->gp_uuid != NULL && (*g->gp_uuid == '\0' || strpbrk(g->gp_uuid, " \t\n")))
            return fail(p, "%s: gpus[%zu]: uuid must be one non-empty word", where, i);
        if (strpbrk(g->gp_name, "\n") != NULL || *g->gp_name == '\0')
            return fail(p, "%s: gpus[%zu]: name must be one non-empty line", where, i);
        if (g->gp_uuid == NULL) {
            gen_gpu_uuid(sc->sc_seed, uuid_base + i, g->gp_uuid_buf,
                         sizeof(g->gp_uuid_buf));
            g->gp_uuid = g->gp_uuid_buf;
        }
        for (k = 0; k < i; k++)
            if (strcmp(nd->nd_gpus[k].gp_uuid, g->gp_uuid) == 0)
                return fail(p, "%s: gpus[%zu]: uuid %s is given twice", where, i,
                            g->gp_uuid);
        g->gp_total_mib = (long)gt;
        g->gp_reserved_mib = (long)gr;
        g->gp_context_mib = (long)gc;
    }
    return 0;
}

/* The simulated nodes: "nodes": [{name, labels, capacity, gpus}], or the one node of
 * "node" and "gpus". */
static int
parse_nodes(struct sc_parse *p, struct scenario *sc, json_t *root, json_t *jnodes,
            json_t *jnode, json_t *jgpus, long total)
{
    size_t i, j, n = jnodes == NULL ? 1 : json_array_size(jnodes), base = 0;
    char where[64];

    if (jnodes != NULL && (jnode != NULL || jgpus != NULL))
        return fail(p, "give \"nodes\", or \"node\" and \"gpus\", not both");
    if (jnodes != NULL && (!json_is_array(jnodes) || n == 0 || n > 16))
        return fail(p, "nodes must be an array of 1..16 nodes");
    sc->sc_nodes = calloc(n, sizeof(*sc->sc_nodes));
    if (sc->sc_nodes == NULL)
        return fail(p, "out of memory");
    sc->sc_nnodes = n;
    for (i = 0; i < n; i++) {
        struct sc_node *nd = &sc->sc_nodes[i];
        json_t *jn = jnodes != NULL ? json_array_get(jnodes, i) : jnode;
        json_t *jg = jnodes != NULL ? json_object_get(jn, "gpus") : jgpus;

        if (jnodes != NULL && !json_is_object(jn))
            return fail(p, "nodes[%zu] must be an object", i);
        if (jnodes == NULL && json_object_get(jn, "gpus") != NULL)
            return fail(p, "node: gpus go at the top level (or use \"nodes\")");
        snprintf(where, sizeof(where), jnodes != NULL ? "nodes[%zu]" : "node", i);
        if (parse_gpus(p, sc, nd, jg, total, base, where) != 0 ||
            parse_node(p, nd, jn, root, "node", where) != 0)
            return -1;
        base += nd->nd_ngpus;
        for (j = 0; j < i; j++)
            if (strcmp(sc->sc_nodes[j].nd_name, nd->nd_name) == 0)
                return fail(p, "%s: node %s is given twice", where, nd->nd_name);
    }
    sc->sc_node = sc->sc_nodes[0].nd_name;
    sc->sc_gpus = sc->sc_nodes[0].nd_gpus;
    sc->sc_ngpus = sc->sc_nodes[0].nd_ngpus;
    sc->sc_total_mib = sc->sc_gpus[0].gp_total_mib;
    return 0;
}

/* "host_processes": [{node, gpu, pid, comm, mib|timeline, interp, na, cgroup}]: processes
 * outside any pod (a node daemon holding a CUDA context), kept as pods with po_host set
 * after the real ones, from index first. */
static int
parse_hosts(struct sc_parse *p, struct scenario *sc, json_t *jhosts, size_t first)
{
    json_error_t je;
    json_t *jh, *copy;
    size_t i;
    char where[64];

    json_array_foreach(jhosts, i, jh)
    {
        struct sc_pod *po = &sc->sc_pods[first + i];
        const char *node = sc->sc_nodes[0].nd_name, *cgroup = NULL, *comm = "host-daemon";
        json_int_t gpu = 0;

        snprintf(where, sizeof(where), "host_processes[%zu]", i);
        if (!json_is_object(jh) ||
            json_unpack_ex(jh, &je, 0, "{s?s, s?s, s?s, s?I}", "node", &node, "cgroup",
                           &cgroup, "comm", &comm, "gpu", &gpu) != 0)
            return fail(p, "%s: must be an object", where);
        po->po_host = 1;
        po->po_namespace = "";
        po->po_name = comm;
        po->po_node = node;
        po->po_phase = "Running";
        po->po_node_idx = node_index(sc, node);
        if (po->po_node_idx < 0)
            return fail(p, "%s: node %s is not a simulated node", where, node);
        po->po_gpu = (int)gpu;
        po->po_containers = json_array();
        if (po->po_containers == NULL ||
            json_object_set_new(jh, "containers_", po->po_containers))
            return fail(p, "out of memory");
        /* Not in any pod's cgroup: a systemd service of the host, by default. */
        if (cgroup == NULL) {
            char line[300];
            json_t *js;
            snprintf(line, sizeof(line), "0::/system.slice/%s.service", comm);
            js = json_string(line);
            if (js == NULL || json_object_set_new(jh, "cgroup_", js) != 0)
                return fail(p, "out of memory");
            cgroup = json_string_value(js);
        }
        if (strchr(cgroup, '\n') != NULL || strlen(cgroup) > 250)
            return fail(p, "%s: cgroup must be one line of at most 250 bytes", where);
        po->po_host_cgroup = cgroup;
        /* The process itself is parsed as a pod's would be, without the host's keys. */
        copy = json_deep_copy(jh);
        if (copy == NULL || json_object_set_new(jh, "process_", copy) != 0)
            return fail(p, "out of memory");
        json_object_del(copy, "node");
        json_object_del(copy, "cgroup");
        json_object_del(copy, "containers_");
        json_object_del(copy, "cgroup_");
        po->po_procs = calloc(1, sizeof(*po->po_procs));
        if (po->po_procs == NULL)
            return fail(p, "out of memory");
        po->po_nprocs = 1;
        if (parse_proc(p, where, copy, po->po_procs, sc, po) != 0)
            return -1;
        /* A host daemon is not a controller's: it never goes, so never comes back. */
        po->po_respawns = 0;
    }
    return 0;
}

static int
check_unique(struct sc_parse *p, const struct scenario *sc)
{
    size_t i, j;

    for (i = 0; i < sc->sc_npods; i++)
        for (j = 0; j < i && !sc->sc_pods[i].po_host; j++)
            if (strcmp(sc->sc_pods[i].po_namespace, sc->sc_pods[j].po_namespace) == 0 &&
                strcmp(sc->sc_pods[i].po_name, sc->sc_pods[j].po_name) == 0)
                return fail(p, "pods[%zu]: %s/%s is declared twice", i,
                            sc->sc_pods[i].po_namespace, sc->sc_pods[i].po_name);
    return 0;
}

int
scenario_load(const char *path, struct scenario **out, char *err, size_t errlen)
{
    struct sc_parse p = {path, err, errlen};
    struct scenario *sc;
    json_error_t je;
    json_t *jpods = NULL, *jpod, *jnode = NULL, *jgpus = NULL, *jnodes = NULL,
           *jhosts = NULL, *jthrottle = NULL;
    json_int_t throttle = 0;
    json_int_t total = DEFAULT_TOTAL_MIB, seed = 1;
    double respawn_after = DEFAULT_RESPAWN_AFTER;
    size_t i;

    *out = NULL;
    sc = calloc(1, sizeof(*sc));
    if (sc == NULL)
        return fail(&p, "out of memory");
    sc->sc_root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (sc->sc_root == NULL) {
        if (je.line < 0) /* not a syntax error: the file itself could not be read */
            fail(&p, "%s", je.text);
        else
            fail(&p, "line %d column %d: %s", je.line, je.column, je.text);
        goto fail;
    }
    sc->sc_resource = DEFAULT_RESOURCE;
    sc->sc_time_scale = 1.0;
    if (json_unpack_ex(
            sc->sc_root, &je, JSON_STRICT,
            "{s?s, s?o, s?I, s?s, s?F, s?F, s?I, s:o, s?o, s?o, s?o, s?o, s?o}",
            "description", &sc->sc_description, "node", &jnode, "gpu_total_mib", &total,
            "gpumem_resource", &sc->sc_resource, "time_scale", &sc->sc_time_scale,
            "respawn_after", &respawn_after, "seed", &seed, "pods", &jpods, "gpus",
            &jgpus, "nodes", &jnodes, "host_processes", &jhosts, "throttle", &jthrottle,
            "claims", &sc->sc_claims) != 0) {
        fail(&p, "%s", je.text);
        goto fail;
    }
    if (parse_claims(&p, sc->sc_claims) != 0)
        goto fail;
    sc->sc_throttle_retry_after = "1";
    if (jthrottle != NULL &&
        json_unpack_ex(jthrottle, &je, JSON_STRICT, "{s:I, s?s}", "count", &throttle,
                       "retry_after", &sc->sc_throttle_retry_after) != 0) {
        fail(&p, "throttle: %s", je.text);
        goto fail;
    }
    if (throttle < 0 || throttle > 1000000) {
        fail(&p, "throttle: count must be 0..1000000");
        goto fail;
    }
    sc->sc_throttle_count = (long)throttle;
    if (total <= 0 || total > 1024 * 1024) {
        fail(&p, "gpu_total_mib must be 1..1048576");
        goto fail;
    }
    sc->sc_total_mib = (long)total;
    sc->sc_seed = (unsigned long long)seed;
    if (parse_nodes(&p, sc, sc->sc_root, jnodes, jnode, jgpus, sc->sc_total_mib) != 0)
        goto fail;
    if (!(sc->sc_time_scale > 0) || !isfinite(sc->sc_time_scale) || respawn_after < 0) {
        fail(&p, "time_scale must be > 0 and respawn_after >= 0");
        goto fail;
    }
    if (strchr(sc->sc_resource, '/') == NULL) {
        fail(&p, "gpumem_resource must be domain/name");
        goto fail;
    }
    if (!json_is_array(jpods) || json_array_size(jpods) == 0) {
        fail(&p, "pods must be a non-empty array");
        goto fail;
    }
    if (jhosts != NULL && !json_is_array(jhosts)) {
        fail(&p, "host_processes must be an array");
        goto fail;
    }
    sc->sc_pods =
        calloc(json_array_size(jpods) + json_array_size(jhosts), sizeof(*sc->sc_pods));
    if (sc->sc_pods == NULL) {
        fail(&p, "out of memory");
        goto fail;
    }
    sc->sc_npods = json_array_size(jpods) + json_array_size(jhosts);
    if (jhosts != NULL && parse_hosts(&p, sc, jhosts, json_array_size(jpods)) != 0)
        goto fail;
    json_array_foreach(jpods, i, jpod)
    {
        if (!json_is_object(jpod)) {
            fail(&p, "pods[%zu] must be an object", i);
            goto fail;
        }
        if (parse_pod(&p, sc, i, jpod, respawn_after) != 0)
            goto fail;
    }
    if (check_unique(&p, sc) != 0)
        goto fail;
    *out = sc;
    return 0;
fail:
    scenario_free(sc);
    return -1;
}

void
scenario_free(struct scenario *sc)
{
    size_t i;

    if (sc == NULL)
        return;
    for (i = 0; i < sc->sc_npods && sc->sc_pods != NULL; i++) {
        procs_free(sc->sc_pods[i].po_procs, sc->sc_pods[i].po_nprocs);
        procs_free(sc->sc_pods[i].po_rprocs, sc->sc_pods[i].po_nrprocs);
    }
    free(sc->sc_pods);
    for (i = 0; i < sc->sc_nnodes && sc->sc_nodes != NULL; i++)
        free(sc->sc_nodes[i].nd_gpus);
    free(sc->sc_nodes);
    json_decref(sc->sc_root);
    free(sc);
}
