/* pods_claims.c -- a node's pod list, then the ResourceClaims its pods name (one GET
 * each, all at once), then the list parsed with them; for serve and the exporter */
#include "pods_claims.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

#define URL_MAX 4096

/* One list in flight, with its claims; the kubec argument of the list. */
struct pc_call {
    struct kubec *pc_k; /* borrowed */
    char *pc_driver;    /* owned: DRA_DRIVER; NULL = dra not listed */
    pods_claims_parse_fn pc_parse;
    kubec_done_fn pc_done;
    void *pc_arg;
    char *pc_body; /* owned: the list, kept while its claims are read */
    size_t pc_body_len;
    struct dra_claims pc_claims; /* owned */
    size_t pc_pending;           /* claim calls in flight, plus one while starting */
    int pc_cancelled;            /* kubec_free() ran while they were in flight */
    struct kubec_answer pc_list; /* the list's answer (KUBE_OK: no error string) */
};

/* One claim GET; its kubec argument. */
struct claim_call {
    struct pc_call *cc_pc;
    size_t cc_idx; /* into cc_pc->pc_claims */
};

static void
pc_free(struct pc_call *pc)
{
    if (pc == NULL)
        return;
    free(pc->pc_driver);
    free(pc->pc_body);
    dra_claims_free(&pc->pc_claims);
    free(pc);
}

/* kubec_parse_fn of the list: with a driver and claims named, the body waits for
 * them; else it is parsed now. */
static int
list_parse(const char *body, size_t len, char *err, size_t errlen, void *arg)
{
    struct pc_call *pc = arg;

    if (pc->pc_driver == NULL)
        return pc->pc_parse(body, len, NULL, err, errlen, pc->pc_arg);
    if (claim_json_refs(body, len, &pc->pc_claims) == -1) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (pc->pc_claims.dl_count == 0)
        return pc->pc_parse(body, len, &pc->pc_claims, err, errlen, pc->pc_arg);
    if ((pc->pc_body = malloc(len + 1)) == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    memcpy(pc->pc_body, body, len);
    pc->pc_body[len] = '\0';
    pc->pc_body_len = len;
    return 0;
}

static void start_claims(struct pc_call *pc, const struct kubec_answer *r);

static void
list_done(const struct kubec_answer *r, void *arg)
{
    struct pc_call *pc = arg;

    if (r->kr_class == KUBE_OK && pc->pc_body != NULL && !r->kr_cancelled) {
        start_claims(pc, r);
        return;
    }
    pc->pc_done(r, pc->pc_arg);
    pc_free(pc);
}

/* Every claim read (or failed): the list is parsed with them and answered. */
static void
claims_finish(struct pc_call *pc)
{
    struct kubec_answer r = pc->pc_list;
    char err[512];

    err[0] = '\0';
    if (pc->pc_cancelled) {
        r.kr_class = KUBE_ERROR;
        r.kr_cancelled = 1;
        r.kr_error = "cancelled";
    } else if (pc->pc_parse(pc->pc_body, pc->pc_body_len, &pc->pc_claims, err,
                            sizeof(err), pc->pc_arg) == -1) {
        r.kr_class = KUBE_ERROR;
        r.kr_error = err;
    }
    pc->pc_done(&r, pc->pc_arg);
    pc_free(pc);
}

static int
claim_parse(const char *body, size_t len, char *err, size_t errlen, void *arg)
{
    struct claim_call *cc = arg;

    return claim_json_parse(body, len, cc->cc_pc->pc_driver,
                            &cc->cc_pc->pc_claims.dl_items[cc->cc_idx], err, errlen);
}

static void
claim_done(const struct kubec_answer *r, void *arg)
{
    struct claim_call *cc = arg;
    struct pc_call *pc = cc->cc_pc;
    struct dra_claim *c = &pc->pc_claims.dl_items[cc->cc_idx];

    if (r->kr_cancelled)
        pc->pc_cancelled = 1;
    if (r->kr_class != KUBE_OK) {
        c->dc_fetched = 0;
        free(c->dc_error);
        c->dc_error =
            strdup(r->kr_error != NULL ? r->kr_error : kube_class_name(r->kr_class));
    }
    free(cc);
    if (--pc->pc_pending == 0)
        claims_finish(pc);
}

/* GET /apis/resource.k8s.io/v1/namespaces/NS/resourceclaims/NAME for each claim
 * the list's pods name, all at once (at most DRA_CLAIMS_MAX). */
static void
start_claims(struct pc_call *pc, const struct kubec_answer *r)
{
    char what[256];

    pc->pc_list = *r;
    pc->pc_list.kr_error = NULL;
    pc->pc_pending = 1; /* held while starting */
    for (size_t i = 0; i < pc->pc_claims.dl_count; i++) {
        struct dra_claim *c = &pc->pc_claims.dl_items[i];
        struct claim_call *cc = calloc(1, sizeof(*cc));
        struct kubec_call q;
        struct buf path;

        buf_init(&path, URL_MAX);
        kubec_path_add(&path, "/apis/resource.k8s.io/v1/namespaces/", c->dc_namespace);
        kubec_path_add(&path, "/resourceclaims/", c->dc_name);
        snprintf(what, sizeof(what), "get resource.k8s.io resourceclaims in namespace %s",
                 c->dc_namespace);
        memset(&q, 0, sizeof(q));
        q.kq_method = "GET";
        q.kq_path = path.b_toobig ? NULL : path.b_data;
        q.kq_what = what;
        q.kq_parse = claim_parse;
        q.kq_done = claim_done;
        q.kq_arg = cc;
        if (cc != NULL) {
            cc->cc_pc = pc;
            cc->cc_idx = i;
            pc->pc_pending++;
        }
        if (cc == NULL || kubec_call(pc->pc_k, &q) == -1) {
            if (cc != NULL)
                pc->pc_pending--;
            free(cc);
            free(c->dc_error);
            c->dc_error = strdup("the call could not be started");
        }
        buf_free(&path);
    }
    if (--pc->pc_pending == 0)
        claims_finish(pc);
}

int
pods_claims_list(struct kubec *k, const struct pods_claims_call *q)
{
    struct pc_call *pc;
    struct kubec_call c;
    struct buf path;
    char what[320];
    int rc;

    if ((pc = calloc(1, sizeof(*pc))) == NULL ||
        (q->pq_driver != NULL && (pc->pc_driver = strdup(q->pq_driver)) == NULL)) {
        log_warnx("%s: out of memory", __func__);
        pc_free(pc);
        return -1;
    }
    pc->pc_k = k;
    pc->pc_parse = q->pq_parse;
    pc->pc_done = q->pq_done;
    pc->pc_arg = q->pq_arg;
    buf_init(&path, URL_MAX);
    kubec_path_add(&path, "/api/v1/pods?fieldSelector=", NULL);
    kubec_path_add(&path, NULL, "spec.nodeName=");
    kubec_path_add(&path, NULL, q->pq_node);
    snprintf(what, sizeof(what), "list pods on node %s", q->pq_node);
    memset(&c, 0, sizeof(c));
    c.kq_method = "GET";
    c.kq_path = path.b_toobig ? NULL : path.b_data;
    c.kq_what = what;
    c.kq_parse = list_parse;
    c.kq_done = list_done;
    c.kq_arg = pc;
    if ((rc = kubec_call(k, &c)) == -1)
        pc_free(pc);
    buf_free(&path);
    return rc;
}
