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
    size_t i;

    if (json_unpack_ex(jp, &je, JSON_STRICT,
                       "{s?I, s?s, s?o, s?o, s?s, s?I, s?s, s?b, s?F}", "pid", &pid, "comm",
                       &pr->pr_comm, "mib", &jmib, "timeline", &jtl, "interp", &interp,
                       "gpu", &gpu, "container", &pr->pr_container, "na", &pr->pr_na,
                       "released_mib", &pr->pr_released_mib) != 0)
        return fail(p, "%s: %s", where, je.text);
    if (pid < 0)
        return fail(p, "%s: pid must be positive", where);
    if (!(pr->pr_released_mib >= 0) || !isfinite(pr->pr_released_mib))
        return fail(p, "%s: released_mib must be a number >= 0", where);
    pr->pr_pid = (long)pid;
    if (gpu < 0 || (size_t)gpu >= sc->sc_ngpus)
        return fail(p, "%s: gpu %lld: the node has GPUs 0..%zu", where, (long long)gpu,
                    sc->sc_ngpus - 1);
    pr->pr_gpu = (int)gpu;
    if (pr->pr_container == NULL) {
        pr->pr_container =
            json_string_value(json_object_get(json_array_get(po->po_containers, 0), "name"));
    } else {
        int found = 0;
        json_array_foreach(po->po_containers, i, c)
            found |= strcmp(json_string_value(json_object_get(c, "name")),
                            pr->pr_container) == 0;
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

    snprintf(where, sizeof(where), "pods[%zu]", idx);
    po->po_node = sc->sc_node;
    po->po_phase = "Running";
    po->po_started_ago = DEFAULT_STARTED_AGO;
    po->po_respawns = 1;
    po->po_respawn_after = respawn_after;
    po->po_release_after = DEFAULT_RELEASE_AFTER;
    if (json_unpack_ex(
            jpod, &je, JSON_STRICT,
            "{s:s, s:s, s?s, s?s, s?s, s?F, s?o, s?o, s?o, s?o, s?s, s?s, s?b, s?o, "
            "s?o, s?o, s?o, s?I, s?F}",
            "namespace", &po->po_namespace, "name", &po->po_name, "uid", &po->po_uid,
            "node", &po->po_node, "phase", &po->po_phase, "started_ago",
            &po->po_started_ago, "owner", &jowner, "labels", &po->po_labels,
            "annotations", &po->po_annotations, "budget", &jbudget, "image", &image,
            "container", &cname, "terminating", &po->po_terminating, "containers", &jcont,
            "processes", &jprocs, "pdb", &jpdb, "respawn", &jrespawn, "gpu", &gpu,
            "release_after", &po->po_release_after) != 0)
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
    if (gpu < 0 || (size_t)gpu >= sc->sc_ngpus)
        return fail(p, "%s: gpu %lld: the node has GPUs 0..%zu", where, (long long)gpu,
                    sc->sc_ngpus - 1);
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
        if (json_unpack_ex(jpdb, &je, JSON_STRICT, "{s:s, s?i, s?i}", "name",
                           &po->po_pdb_name, "desired_healthy", &po->po_pdb_desired,
                           "current_healthy", &po->po_pdb_current) != 0)
            return fail(p, "%s: pdb: %s", where, je.text);
    }
    if (parse_procs(p, where, jprocs, sc, po, &po->po_procs, &po->po_nprocs) != 0)
        return -1;
    if (po->po_nprocs > 0 && strcmp(po->po_node, sc->sc_node) != 0)
        return fail(p, "%s: only pods on %s hold its GPU memory", where, sc->sc_node);
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

/* Fills the simulated Node's labels and capacity, defaulting what the file leaves out. */
static int
parse_node(struct sc_parse *p, struct scenario *sc, json_t *root)
{
    json_error_t je;
    json_t *jn = json_object_get(root, "node");

    sc->sc_node = DEFAULT_NODE;
    if (jn == NULL) {
        jn = json_object();
        if (jn == NULL || json_object_set_new(root, "node", jn) != 0)
            return fail(p, "out of memory");
    }
    if (json_unpack_ex(jn, &je, JSON_STRICT, "{s?s, s?o, s?o}", "name", &sc->sc_node,
                       "labels", &sc->sc_node_labels, "capacity",
                       &sc->sc_node_capacity) != 0)
        return fail(p, "node: %s", je.text);
    if (strlen(sc->sc_node) == 0 || strlen(sc->sc_node) > 253)
        return fail(p, "node: bad name");
    if (sc->sc_node_labels == NULL) {
        sc->sc_node_labels =
            json_pack("{s:s, s:s, s:s}", "kubernetes.io/hostname", sc->sc_node,
                      "kubernetes.io/os", "linux", "nvidia.com/gpu.present", "true");
        if (sc->sc_node_labels == NULL ||
            json_object_set_new(jn, "labels", sc->sc_node_labels))
            return fail(p, "out of memory");
    }
    if (sc->sc_node_capacity == NULL) {
        char ngpus[24];
        snprintf(ngpus, sizeof(ngpus), "%zu", sc->sc_ngpus);
        sc->sc_node_capacity = json_pack("{s:s, s:s, s:s, s:s}", "cpu", "8", "memory",
                                         "32Gi", "nvidia.com/gpu", ngpus, "pods", "110");
        if (sc->sc_node_capacity == NULL ||
            json_object_set_new(jn, "capacity", sc->sc_node_capacity) != 0)
            return fail(p, "out of memory");
    }
    if (!json_is_object(sc->sc_node_labels) || !json_is_object(sc->sc_node_capacity))
        return fail(p, "node: labels and capacity must be objects");
    return canonical_map(p, "node.capacity", sc->sc_node_capacity);
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

/* "gpus": absent (one GPU of gpu_total_mib) or [{uuid, name, total_mib, reserved_mib}]. */
static int
parse_gpus(struct sc_parse *p, struct scenario *sc, json_t *jgpus, long total)
{
    json_error_t je;
    json_t *jg;
    size_t i, j, n = jgpus == NULL ? 1 : json_array_size(jgpus);

    if (jgpus != NULL && (!json_is_array(jgpus) || n == 0 || n > 64))
        return fail(p, "gpus must be an array of 1..64 GPUs");
    sc->sc_gpus = calloc(n, sizeof(*sc->sc_gpus));
    if (sc->sc_gpus == NULL)
        return fail(p, "out of memory");
    sc->sc_ngpus = n;
    for (i = 0; i < n; i++) {
        struct sc_gpu *g = &sc->sc_gpus[i];
        json_int_t gt = total, gr = 0;

        g->gp_name = "Tesla T4";
        if (jgpus != NULL) {
            jg = json_array_get(jgpus, i);
            if (json_unpack_ex(jg, &je, JSON_STRICT, "{s?s, s?s, s?I, s?I}", "uuid",
                               &g->gp_uuid, "name", &g->gp_name, "total_mib", &gt,
                               "reserved_mib", &gr) != 0)
                return fail(p, "gpus[%zu]: %s", i, je.text);
        }
        if (gt <= 0 || gt > 1024 * 1024 || gr < 0 || gr > gt)
            return fail(p, "gpus[%zu]: want 0 < total_mib <= 1048576, 0 <= reserved_mib "
                           "<= total_mib", i);
        /* The stub NVML's state file is space-separated: the UUID must be one word. */
        if (g->gp_uuid != NULL && (*g->gp_uuid == '\0' || strpbrk(g->gp_uuid, " \t\n")))
            return fail(p, "gpus[%zu]: uuid must be one non-empty word", i);
        if (strpbrk(g->gp_name, "\n") != NULL || *g->gp_name == '\0')
            return fail(p, "gpus[%zu]: name must be one non-empty line", i);
        if (g->gp_uuid == NULL) {
            gen_gpu_uuid(sc->sc_seed, i, g->gp_uuid_buf, sizeof(g->gp_uuid_buf));
            g->gp_uuid = g->gp_uuid_buf;
        }
        for (j = 0; j < i; j++)
            if (strcmp(sc->sc_gpus[j].gp_uuid, g->gp_uuid) == 0)
                return fail(p, "gpus[%zu]: uuid %s is given twice", i, g->gp_uuid);
        g->gp_total_mib = (long)gt;
        g->gp_reserved_mib = (long)gr;
    }
    sc->sc_total_mib = sc->sc_gpus[0].gp_total_mib;
    return 0;
}

static int
check_unique(struct sc_parse *p, const struct scenario *sc)
{
    size_t i, j;

    for (i = 0; i < sc->sc_npods; i++)
        for (j = 0; j < i; j++)
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
    json_t *jpods = NULL, *jpod, *jnode = NULL, *jgpus = NULL;
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
            sc->sc_root, &je, JSON_STRICT, "{s?s, s?o, s?I, s?s, s?F, s?F, s?I, s:o, s?o}",
            "description", &sc->sc_description, "node", &jnode, "gpu_total_mib", &total,
            "gpumem_resource", &sc->sc_resource, "time_scale", &sc->sc_time_scale,
            "respawn_after", &respawn_after, "seed", &seed, "pods", &jpods, "gpus",
            &jgpus) != 0) {
        fail(&p, "%s", je.text);
        goto fail;
    }
    if (total <= 0 || total > 1024 * 1024) {
        fail(&p, "gpu_total_mib must be 1..1048576");
        goto fail;
    }
    sc->sc_total_mib = (long)total;
    sc->sc_seed = (unsigned long long)seed;
    if (parse_gpus(&p, sc, jgpus, sc->sc_total_mib) != 0)
        goto fail;
    if (!(sc->sc_time_scale > 0) || !isfinite(sc->sc_time_scale) || respawn_after < 0) {
        fail(&p, "time_scale must be > 0 and respawn_after >= 0");
        goto fail;
    }
    if (strchr(sc->sc_resource, '/') == NULL) {
        fail(&p, "gpumem_resource must be domain/name");
        goto fail;
    }
    if (parse_node(&p, sc, sc->sc_root) != 0)
        goto fail;
    if (!json_is_array(jpods) || json_array_size(jpods) == 0) {
        fail(&p, "pods must be a non-empty array");
        goto fail;
    }
    sc->sc_pods = calloc(json_array_size(jpods), sizeof(*sc->sc_pods));
    if (sc->sc_pods == NULL) {
        fail(&p, "out of memory");
        goto fail;
    }
    sc->sc_npods = json_array_size(jpods);
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
    free(sc->sc_gpus);
    json_decref(sc->sc_root);
    free(sc);
}
