/* suggest_acc.c -- `budgets --suggest`'s tally: pods to workloads, samples to
 * distributions, seats (no I/O) */
#include "suggest_acc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suggest_owner.h"

#define NO_WORKLOAD ((size_t)-1)

/* A string-keyed map to indexes (open addressing, FNV-1a). */
struct sg_map {
    char **m_key; /* owned */
    size_t *m_val;
    size_t m_cap, m_used;
};

struct sg_pent {
    size_t pe_wl;    /* workload, or NO_WORKLOAD (gone, unclaimed) */
    size_t pe_gone;  /* index into a_gone when NO_WORKLOAD */
    unsigned pe_gen; /* the chunk whose row pe_row is */
    size_t pe_row;
    int pe_seen; /* has had a sample */
};

static uint64_t
fnv(const char *s)
{
    uint64_t h = 1469598103934665603ull;

    for (; *s != '\0'; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static struct sg_map *
map_new(void)
{
    return calloc(1, sizeof(struct sg_map));
}

static void
map_free(struct sg_map *m)
{
    if (m == NULL)
        return;
    for (size_t i = 0; i < m->m_cap; i++)
        free(m->m_key[i]);
    free(m->m_key);
    free(m->m_val);
    free(m);
}

/* The slot of key: its own, or the empty one where it would go. */
static size_t
map_slot(const struct sg_map *m, const char *key)
{
    size_t j = (size_t)fnv(key) & (m->m_cap - 1);

    while (m->m_key[j] != NULL && strcmp(m->m_key[j], key) != 0)
        j = (j + 1) & (m->m_cap - 1);
    return j;
}

static int
map_get(const struct sg_map *m, const char *key, size_t *val)
{
    size_t j;

    if (m->m_cap == 0)
        return 0;
    j = map_slot(m, key);
    if (m->m_key[j] == NULL)
        return 0;
    *val = m->m_val[j];
    return 1;
}

/* Inserts a new key (not present). 0, or -1 out of memory. */
static int
map_put(struct sg_map *m, const char *key, size_t val)
{
    size_t j;
    char *k;

    if ((m->m_used + 1) * 2 > m->m_cap) {
        size_t cap = m->m_cap ? m->m_cap * 2 : 64;
        struct sg_map n = {calloc(cap, sizeof(char *)), calloc(cap, sizeof(size_t)), cap,
                           0};
        if (n.m_key == NULL || n.m_val == NULL) {
            free(n.m_key);
            free(n.m_val);
            return -1;
        }
        for (size_t i = 0; i < m->m_cap; i++)
            if (m->m_key[i] != NULL) {
                j = map_slot(&n, m->m_key[i]);
                n.m_key[j] = m->m_key[i];
                n.m_val[j] = m->m_val[i];
            }
        free(m->m_key);
        free(m->m_val);
        m->m_key = n.m_key;
        m->m_val = n.m_val;
        m->m_cap = cap;
    }
    if ((k = strdup(key)) == NULL)
        return -1;
    j = map_slot(m, key);
    m->m_key[j] = k;
    m->m_val[j] = val;
    m->m_used++;
    return 0;
}

/* Grows *arr (elements of size) to hold one more; 0, or -1. */
static int
room(void **arr, size_t *cap, size_t count, size_t size)
{
    void *n;
    size_t ncap;

    if (count < *cap)
        return 0;
    ncap = *cap ? *cap * 2 : 16;
    if ((n = realloc(*arr, ncap * size)) == NULL)
        return -1;
    *arr = n;
    *cap = ncap;
    return 0;
}

int
sg_acc_init(struct sg_acc *a, int64_t start, int64_t step, size_t points,
            uint32_t headroom_bp)
{
    memset(a, 0, sizeof(*a));
    a->a_start = start;
    a->a_step = step;
    a->a_points = points;
    a->a_headroom_bp = headroom_bp;
    if ((a->a_wl_map = map_new()) == NULL || (a->a_pod_map = map_new()) == NULL) {
        sg_acc_free(a);
        return -1;
    }
    return 0;
}

void
sg_acc_free(struct sg_acc *a)
{
    for (size_t i = 0; i < a->a_wl_count; i++) {
        free(a->a_wl[i].w_name);
        free(a->a_wl[i].w_label);
        free(a->a_wl[i].w_seen);
        sg_hist_free(&a->a_wl[i].w_hist);
    }
    for (size_t i = 0; i < a->a_node_count; i++) {
        free(a->a_nodes[i].n_capacity_note);
        free(a->a_nodes[i].n_pods);
        free(a->a_nodes[i].n_seats);
        free(a->a_nodes[i].n_seat_workload);
    }
    for (size_t i = 0; i < a->a_gone_count; i++)
        free(a->a_gone[i].g_key);
    free(a->a_wl);
    free(a->a_nodes);
    free(a->a_gone);
    free(a->a_pent);
    free(a->a_rows);
    free(a->a_row_pod);
    map_free(a->a_wl_map);
    map_free(a->a_pod_map);
    memset(a, 0, sizeof(*a));
}

/* The workload (ns, kind, name), made when new. SIZE index, or NO_WORKLOAD. */
static size_t
workload(struct sg_acc *a, const char *ns, const char *kind, const char *name,
         const struct pod *p)
{
    size_t len = strlen(ns) + strlen(kind ? kind : "") + strlen(name) + 3, idx;
    char *key = malloc(len);
    struct sg_workload *w;

    if (key == NULL)
        return NO_WORKLOAD;
    snprintf(key, len, "%s/%s/%s", ns, kind ? kind : "", name);
    if (map_get(a->a_wl_map, key, &idx)) {
        free(key);
        return idx;
    }
    if (room((void **)&a->a_wl, &a->a_wl_cap, a->a_wl_count, sizeof(*a->a_wl)) == -1)
        goto fail;
    w = &a->a_wl[a->a_wl_count];
    memset(w, 0, sizeof(*w));
    w->w_namespace = ns;
    w->w_kind = kind;
    w->w_template = p;
    w->w_name = strdup(name);
    w->w_seen = calloc(a->a_points / 8 + 1, 1);
    if (kind == NULL) /* a bare pod: "ns/pod" */
        snprintf(key, len, "%s/%s", ns, name);
    w->w_label = strdup(key);
    if (kind == NULL)
        snprintf(key, len, "%s//%s", ns, name);
    if (w->w_name == NULL || w->w_seen == NULL || w->w_label == NULL ||
        map_put(a->a_wl_map, key, a->a_wl_count) == -1) {
        free(w->w_name);
        free(w->w_seen);
        free(w->w_label);
        goto fail;
    }
    free(key);
    return a->a_wl_count++;
fail:
    free(key);
    return NO_WORKLOAD;
}

/* A pod entry for key, made when new with wl. Index, or NO_WORKLOAD. */
static size_t
pod_entry(struct sg_acc *a, const char *key, size_t wl)
{
    size_t idx;

    if (map_get(a->a_pod_map, key, &idx))
        return idx;
    if (room((void **)&a->a_pent, &a->a_pent_cap, a->a_pent_count, sizeof(*a->a_pent)) ==
            -1 ||
        map_put(a->a_pod_map, key, a->a_pent_count) == -1)
        return NO_WORKLOAD;
    memset(&a->a_pent[a->a_pent_count], 0, sizeof(struct sg_pent));
    a->a_pent[a->a_pent_count].pe_wl = wl;
    return a->a_pent_count++;
}

/* Adds a live pod's budget to its workload's declared figure. */
static void
declare(struct sg_workload *w, const struct pod *p, int first)
{
    enum sg_declared d = p->p_budget_state == BUDGET_OK    ? SG_DECLARED_OK
                         : p->p_budget_state == BUDGET_BAD ? SG_DECLARED_UNREADABLE
                                                           : SG_DECLARED_NONE;

    if (first) {
        w->w_declared = d;
        w->w_declared_mib = p->p_budget_mib;
        return;
    }
    if (w->w_declared == SG_DECLARED_UNREADABLE || d == SG_DECLARED_UNREADABLE) {
        w->w_declared = SG_DECLARED_UNREADABLE;
    } else if (d != w->w_declared ||
               (d == SG_DECLARED_OK && p->p_budget_mib != w->w_declared_mib)) {
        int64_t mine = d == SG_DECLARED_OK ? p->p_budget_mib : 0;
        if (w->w_declared == SG_DECLARED_NONE)
            w->w_declared_mib = 0;
        if (mine > w->w_declared_mib)
            w->w_declared_mib = mine;
        w->w_declared = SG_DECLARED_MIXED;
    }
}

int
sg_acc_add_node(struct sg_acc *a, const char *node, const struct pod_list *list,
                const char *capacity_note, int64_t capacity_mib)
{
    struct sg_node *n;
    char wname[256], key[600];

    if (room((void **)&a->a_nodes, &a->a_node_cap, a->a_node_count,
             sizeof(*a->a_nodes)) == -1)
        return -1;
    n = &a->a_nodes[a->a_node_count];
    memset(n, 0, sizeof(*n));
    n->n_name = node;
    n->n_capacity_known = capacity_note == NULL;
    n->n_capacity_mib = capacity_mib;
    if (capacity_note != NULL && (n->n_capacity_note = strdup(capacity_note)) == NULL)
        return -1;
    a->a_node_count++;
    if (list->pl_count > 0 &&
        (n->n_pods = calloc(list->pl_count, sizeof(*n->n_pods))) == NULL)
        return -1;
    for (size_t i = 0; i < list->pl_count; i++) {
        const struct pod *p = &list->pl_pods[i];
        const char *kind = NULL;
        size_t wl;
        if (sg_workload_of(p->p_owner_kind, p->p_owner_name, p->p_template_hash, &kind,
                           wname, sizeof(wname)) == -1) {
            kind = NULL; /* no controller: the pod is its own */
            snprintf(wname, sizeof(wname), "%s", p->p_name);
        }
        if ((wl = workload(a, p->p_namespace, kind, wname, p)) == NO_WORKLOAD)
            return -1;
        snprintf(key, sizeof(key), "%s/%s", p->p_namespace, p->p_name);
        if (pod_entry(a, key, wl) == NO_WORKLOAD)
            return -1;
        n->n_pods[n->n_pod_count].np_pod = p;
        n->n_pods[n->n_pod_count++].np_workload = wl;
        struct sg_workload *w = &a->a_wl[wl];
        if (!sg_pod_gone(p)) {
            declare(w, p, w->w_live == 0);
            if (w->w_live++ == 0)
                w->w_template = p;
        }
    }
    return 0;
}

/* The workload a pod seen only in Prometheus belongs to, by its name. */
static size_t
claim(const struct sg_acc *a, const char *ns, const char *pod)
{
    size_t best = NO_WORKLOAD, best_len = 0;

    for (size_t i = 0; i < a->a_wl_count; i++) {
        const struct sg_workload *w = &a->a_wl[i];
        size_t len;
        if (w->w_kind == NULL || strcmp(w->w_namespace, ns) != 0 ||
            !sg_name_matches(w->w_kind, w->w_name, pod))
            continue;
        if ((len = strlen(w->w_name)) > best_len) {
            best = i;
            best_len = len;
        }
    }
    return best;
}

int
sg_acc_chunk_begin(struct sg_acc *a, size_t node, size_t first, size_t points)
{
    a->a_node_now = node;
    if (points != a->a_chunk_points) { /* rows are sized by the chunk's steps */
        free(a->a_rows);
        free(a->a_row_pod);
        a->a_rows = NULL;
        a->a_row_pod = NULL;
        a->a_row_cap = 0;
    }
    a->a_chunk_first = first;
    a->a_chunk_points = points;
    a->a_row_count = 0;
    a->a_gen++;
    return 0;
}

int
sg_acc_sample(void *acc, const char *ns, const char *pod, size_t idx, double bytes)
{
    struct sg_acc *a = acc;
    char key[520];
    size_t e;
    struct sg_pent *pe;
    double *cell;

    if (idx >= a->a_chunk_points)
        return -1; /* can't happen: the parser checks the steps */
    snprintf(key, sizeof(key), "%s/%s", ns, pod);
    if (!map_get(a->a_pod_map, key, &e)) {
        size_t wl = claim(a, ns, pod);
        if ((e = pod_entry(a, key, wl)) == NO_WORKLOAD)
            return -1;
        if (wl == NO_WORKLOAD) {
            if (room((void **)&a->a_gone, &a->a_gone_cap, a->a_gone_count,
                     sizeof(*a->a_gone)) == -1 ||
                (a->a_gone[a->a_gone_count].g_key = strdup(key)) == NULL)
                return -1;
            a->a_gone[a->a_gone_count].g_samples = 0;
            a->a_pent[e].pe_gone = a->a_gone_count++;
        }
    }
    pe = &a->a_pent[e];
    if (pe->pe_gen != a->a_gen) {
        size_t cap = a->a_row_cap;
        if (a->a_row_count == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            double *rows = realloc(a->a_rows, ncap * a->a_chunk_points * sizeof(double));
            size_t *owners;
            if (rows == NULL)
                return -1;
            a->a_rows = rows;
            if ((owners = realloc(a->a_row_pod, ncap * sizeof(size_t))) == NULL)
                return -1;
            a->a_row_pod = owners;
            a->a_row_cap = ncap;
        }
        pe->pe_gen = a->a_gen;
        pe->pe_row = a->a_row_count++;
        a->a_row_pod[pe->pe_row] = e;
        for (size_t i = 0; i < a->a_chunk_points; i++)
            a->a_rows[pe->pe_row * a->a_chunk_points + i] = -1;
    }
    /* Several series of one pod (per container, per GPU) at one step: summed. */
    cell = &a->a_rows[pe->pe_row * a->a_chunk_points + idx];
    *cell = *cell < 0 ? bytes : *cell + bytes;
    return 0;
}

int
sg_acc_chunk_end(struct sg_acc *a, char *err, size_t errlen)
{
    for (size_t r = 0; r < a->a_row_count; r++) {
        struct sg_pent *pe = &a->a_pent[a->a_row_pod[r]];
        const double *row = &a->a_rows[r * a->a_chunk_points];
        struct sg_workload *w = pe->pe_wl == NO_WORKLOAD ? NULL : &a->a_wl[pe->pe_wl];
        for (size_t i = 0; i < a->a_chunk_points; i++) {
            uint32_t mib;
            size_t step = a->a_chunk_first + i;
            if (row[i] < 0)
                continue;
            if (sg_bytes_to_mib(row[i], &mib) == -1) {
                snprintf(err, errlen,
                         "a pod's use at step %zu sums to %g bytes: not a "
                         "possible reading",
                         step, row[i]);
                return -2;
            }
            a->a_samples++;
            a->a_nodes[a->a_node_now].n_samples++;
            if (w == NULL) {
                a->a_gone[pe->pe_gone].g_samples++;
                continue;
            }
            if (sg_hist_add(&w->w_hist, mib) == -1)
                return -1;
            if (step < a->a_points)
                w->w_seen[step / 8] |= (uint8_t)(1u << (step % 8));
            if (!pe->pe_seen) {
                pe->pe_seen = 1;
                w->w_pods_seen++;
            }
        }
    }
    a->a_row_count = 0;
    return 0;
}

static int
cmp_gone(const void *x, const void *y)
{
    return strcmp(((const struct sg_gone *)x)->g_key, ((const struct sg_gone *)y)->g_key);
}

static int
seats_of(struct sg_acc *a, struct sg_node *n, size_t *slot)
{
    for (size_t i = 0; i < n->n_pod_count; i++) {
        const struct pod *p = n->n_pods[i].np_pod;
        size_t wl = n->n_pods[i].np_workload;
        const struct sg_workload *w = &a->a_wl[wl];
        int64_t own = p->p_budget_state == BUDGET_OK ? p->p_budget_mib : 0;
        int64_t seat = w->w_suggested ? w->w_suggested_mib : own;
        if (sg_pod_gone(p))
            continue;
        n->n_declared_mib += own;
        n->n_seats_mib += seat;
        if (slot[wl] == NO_WORKLOAD) {
            if (seat == 0 && !w->w_suggested)
                continue; /* holds no seat, none suggested */
            slot[wl] = n->n_seat_count++;
            n->n_seats[slot[wl]].ss_name = w->w_label;
            n->n_seats[slot[wl]].ss_mib = 0;
            n->n_seat_workload[slot[wl]] = wl;
        }
        n->n_seats[slot[wl]].ss_mib += seat;
    }
    for (size_t i = 0; i < n->n_pod_count; i++)
        slot[n->n_pods[i].np_workload] = NO_WORKLOAD;
    n->n_fits = !n->n_capacity_known || n->n_seats_mib <= n->n_capacity_mib;
    if (n->n_capacity_known)
        sg_cut_list(n->n_seats, n->n_seat_count, n->n_capacity_mib);
    return 0;
}

int
sg_acc_finish(struct sg_acc *a)
{
    size_t *slot;

    for (size_t i = 0; i < a->a_wl_count; i++) {
        struct sg_workload *w = &a->a_wl[i];
        size_t steps = 0;
        for (size_t b = 0; b < a->a_points / 8 + 1; b++)
            steps += (size_t)__builtin_popcount(w->w_seen[b]);
        w->w_history_s = (int64_t)steps * a->a_step;
        if (w->w_hist.h_n == 0)
            continue;
        if (sg_hist_percentile(&w->w_hist, 99, &w->w_p99) == -1)
            return -1;
        w->w_max = w->w_hist.h_max;
        if (w->w_kind != NULL && w->w_history_s >= SG_MIN_HISTORY_S) {
            w->w_suggested = 1;
            w->w_suggested_mib = sg_suggest_mib(w->w_p99, w->w_max, a->a_headroom_bp);
        }
    }
    if (a->a_gone_count > 1)
        qsort(a->a_gone, a->a_gone_count, sizeof(*a->a_gone), cmp_gone);
    if ((slot = malloc((a->a_wl_count + 1) * sizeof(*slot))) == NULL)
        return -1;
    for (size_t i = 0; i < a->a_wl_count; i++)
        slot[i] = NO_WORKLOAD;
    for (size_t i = 0; i < a->a_node_count; i++) {
        struct sg_node *n = &a->a_nodes[i];
        size_t k = n->n_pod_count ? n->n_pod_count : 1;
        if ((n->n_seats = calloc(k, sizeof(*n->n_seats))) == NULL ||
            (n->n_seat_workload = calloc(k, sizeof(size_t))) == NULL) {
            free(slot);
            return -1;
        }
        seats_of(a, n, slot);
    }
    free(slot);
    return 0;
}
