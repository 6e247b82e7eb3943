/* engine_harness.h -- the decision engine's integration harness: settings, a
 * loopback fake, the audit database, webhook delivery and the audit's JSON */
#ifndef GVW_ENGINE_HARNESS_H
#define GVW_ENGINE_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <jansson.h>

#include "config.h"
#include "fake.h"
#include "kube.h"
#include "prom.h"
#include "remedy.h"
#include "store.h"

/* The fingerprint of every alert deliver_n() sends. */
#define FINGERPRINT "4f1c2b9e8d7a6c5b"

/* One setting; a list ends with {NULL, NULL}. */
struct kv {
    const char *k, *v; /* v NULL = unset */
};

/* One test's world. The event loop, the fake and the scratch directory live
 * from env_init() to env_fini(); the settings, clients, store and engine from
 * engine_start() (or env_config()/env_clients()) to engine_stop(). */
struct env {
    struct event_base *base; /* owned */
    struct fake *fake;       /* owned */
    char dir[64];            /* mkdtemp scratch directory, removed by env_fini() */
    char db[96];             /* dir/audit.db, the AUDIT_DB every test gets */
    struct config cfg;       /* valid while cfg_loaded */
    int cfg_loaded;
    struct prom *prom;         /* owned */
    struct kube *kube;         /* owned */
    struct store *store;       /* owned; NULL until engine_start() */
    struct remedy *r;          /* owned; NULL until engine_start() */
    const struct kv *base_env; /* borrowed: the program's settings, below a test's */
    const struct kv *extra;    /* borrowed, only while the settings load */
};

/* Runs the loop for ms. (Not fake_run_for: its wake timer can fire before its
 * own clock says the time is up, libevent's clock being coarser, and the next
 * EVLOOP_ONCE then sleeps with nothing to wake it.) */
void run_ms(struct event_base *base, long ms);

/* The event loop, the fake (proxies unset) and a scratch directory. base_env
 * (borrowed, may be NULL) is the program's settings: every load consults a
 * test's extra first, then base_env, then the wiring every test shares
 * (PROMETHEUS_URL and KUBE_API_URL = the fake, AUDIT_DB = db,
 * WEBHOOK_AUTH=none, LOG_FORMAT=text). Fails the test on error. */
void env_init(struct env *e, const struct kv *base_env);

/* Shutdown in the documented order: clients, engine (asserted idle), store,
 * settings. Safe to call twice; env_init()'s parts stay. */
void engine_stop(struct env *e);

/* engine_stop(), then the fake, the loop and the scratch directory. */
void env_fini(struct env *e);

/* cmocka fixtures: a new env_init()ed env in *state, and its end. */
int env_setup(void **state, const struct kv *base_env);
int env_teardown(void **state);

/* Loads the settings (extra, borrowed, may be NULL, consulted first). */
void env_config(struct env *e, const struct kv *extra);

/* The Prometheus and Kubernetes clients of the loaded settings. */
void env_clients(struct env *e);

/* env_config(), env_clients(), the store and the engine on it.
 * http_timeout_ms > 0 overrides the Kubernetes client's HTTP_TIMEOUT (the
 * setting has whole seconds); 0 keeps the setting. */
void engine_start(struct env *e, const struct kv *extra, long http_timeout_ms);

/* The device query (FREE_QUERY=auto) finds no device series: free is
 * computed (GPU_TOTAL_MIB - used). */
void route_no_device(struct env *e);

/* Records every alert of a webhook body and hands each to the engine, as
 * serve does. Returns how many alerts the body held. */
size_t deliver_body(struct env *e, const char *body);

/* One Alertmanager delivery of copies identical alerts (fingerprint
 * FINGERPRINT). labels: extra label members ("\"node\":\"gpu-node-1\"") or "". */
void deliver_n(struct env *e, const char *alertname, const char *status,
               const char *labels, int copies);

/* One firing GPUVRAMLow with labels. */
void deliver(struct env *e, const char *labels);

/* A store_query_decisions() callback (arg: size_t n[2]) that adds each
 * finished row to n[0] and every row to n[1]. */
int count_rows_cb(int64_t id, const struct store_decision *d, void *arg);

/* Whether request r's query parameter holds needle. */
int query_has(const struct fake_req *r, const char *needle);

/* How many requests the fake got whose query parameter holds needle. */
size_t count_queries(struct env *e, const char *needle);

/* Decision rows: finished ones in n[0], all in n[1]. */
void count_rows(struct env *e, size_t n[2]);

/* Runs the loop until exactly want decisions are finished and nothing is in
 * flight (failing after timeout_ms), then grace_ms longer so that an extra
 * decision would show. */
void wait_rows_then(struct env *e, size_t want, long timeout_ms, long grace_ms);

/* wait_rows_then() with 60 ms of grace. */
void wait_rows(struct env *e, size_t want, long timeout_ms);

/* Runs `audit [word] --db DB --format json --limit 0` in-process and parses
 * its stdout (an array; the caller decrefs it). */
json_t *audit_json(struct env *e, const char *word);

/* The decisions the audit lists, oldest first (it prints newest first); the
 * caller decrefs the array. */
json_t *decisions(struct env *e);

/* --- assertions on a JSON object: each fails the test with what it found -- */

json_t *jget(json_t *o, const char *k); /* o[k], borrowed; must be there */
void jstr(json_t *o, const char *k, const char *want);
void jint(json_t *o, const char *k, long long want);
void jnull(json_t *o, const char *k);
void jbool(json_t *o, const char *k, int want);
void jhas(json_t *o, const char *k, const char *needle); /* a string holding needle */

/* The member of d's "candidates" for pod (borrowed); fails if none. */
json_t *candidate(json_t *d, const char *pod);

#endif
