/* test_httpc_ca.c -- a rotated KUBE_CA_FILE is trusted at once: the client against a
 * TLS server on the test's loop (libevent_openssl), certificates made here */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/http.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "fake.h"
#include "httpc.h"
#include "log.h"

/* A CA and the server certificate it signed for 127.0.0.1. */
struct pki {
    EVP_PKEY *ca_key, *key;
    X509 *ca, *cert;
    SSL_CTX *ctx; /* the server's, with cert and key */
};

struct env {
    struct event_base *base;
    struct evhttp *http;
    int port;
    struct pki one, two;
    SSL_CTX *serving; /* borrowed: the pki the server shows now */
    size_t handshakes;
    char dir[64], ca_path[96];
    struct httpc *h;
    int done;
    long status;
    char error[512];
};

static void
add_ext(X509 *x, X509V3_CTX *v3, int nid, const char *value)
{
    X509_EXTENSION *ex = X509V3_EXT_conf_nid(NULL, v3, nid, value);

    assert_non_null(ex);
    assert_int_equal(X509_add_ext(x, ex, -1), 1);
    X509_EXTENSION_free(ex);
}

/* A certificate for key named cn: self-signed when issuer is NULL (a CA), else a
 * server certificate for 127.0.0.1 signed by issuer/issuer_key. */
static X509 *
cert_new(EVP_PKEY *key, const char *cn, X509 *issuer, EVP_PKEY *issuer_key)
{
    static long serial = 1;
    X509 *x = X509_new();
    X509_NAME *name;
    X509V3_CTX v3;

    assert_non_null(x);
    assert_int_equal(X509_set_version(x, 2), 1);
    ASN1_INTEGER_set(X509_get_serialNumber(x), serial++);
    X509_gmtime_adj(X509_getm_notBefore(x), -3600);
    X509_gmtime_adj(X509_getm_notAfter(x), 86400);
    assert_int_equal(X509_set_pubkey(x, key), 1);
    name = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1,
                               -1, 0);
    X509_set_issuer_name(x, issuer != NULL ? X509_get_subject_name(issuer) : name);
    X509V3_set_ctx(&v3, issuer != NULL ? issuer : x, x, NULL, NULL, 0);
    if (issuer == NULL) {
        add_ext(x, &v3, NID_basic_constraints, "critical,CA:TRUE");
        add_ext(x, &v3, NID_key_usage, "critical,keyCertSign,cRLSign");
        add_ext(x, &v3, NID_subject_key_identifier, "hash");
    } else {
        add_ext(x, &v3, NID_basic_constraints, "CA:FALSE");
        add_ext(x, &v3, NID_subject_alt_name, "IP:127.0.0.1");
        add_ext(x, &v3, NID_ext_key_usage, "serverAuth");
        add_ext(x, &v3, NID_authority_key_identifier, "keyid");
    }
    assert_true(X509_sign(x, issuer_key != NULL ? issuer_key : key, EVP_sha256()) > 0);
    return x;
}

static void
pki_make(struct pki *p, const char *ca_name)
{
    assert_non_null(p->ca_key = EVP_EC_gen("P-256"));
    assert_non_null(p->key = EVP_EC_gen("P-256"));
    p->ca = cert_new(p->ca_key, ca_name, NULL, NULL);
    p->cert = cert_new(p->key, "127.0.0.1", p->ca, p->ca_key);
    assert_non_null(p->ctx = SSL_CTX_new(TLS_server_method()));
    assert_int_equal(SSL_CTX_use_certificate(p->ctx, p->cert), 1);
    assert_int_equal(SSL_CTX_use_PrivateKey(p->ctx, p->key), 1);
}

static void
pki_free(struct pki *p)
{
    SSL_CTX_free(p->ctx);
    X509_free(p->cert);
    X509_free(p->ca);
    EVP_PKEY_free(p->key);
    EVP_PKEY_free(p->ca_key);
}

/* Replaces the CA file with p's CA, as a rotated Secret's projection does (a new
 * file renamed over the old one). */
static void
ca_write(struct env *e, const struct pki *p)
{
    char tmp[128];
    FILE *fp;

    snprintf(tmp, sizeof(tmp), "%s/ca.tmp", e->dir);
    assert_non_null(fp = fopen(tmp, "w"));
    assert_int_equal(PEM_write_X509(fp, p->ca), 1);
    assert_int_equal(fclose(fp), 0);
    assert_int_equal(rename(tmp, e->ca_path), 0);
}

/* evhttp: each new connection speaks TLS with the certificate served now. */
static struct bufferevent *
tls_bev(struct event_base *base, void *arg)
{
    struct env *e = arg;
    SSL *ssl = SSL_new(e->serving);

    e->handshakes++;
    return bufferevent_openssl_socket_new(base, -1, ssl, BUFFEREVENT_SSL_ACCEPTING,
                                          BEV_OPT_CLOSE_ON_FREE);
}

static void
answer(struct evhttp_request *req, void *arg)
{
    struct evbuffer *out = evbuffer_new();

    (void)arg;
    evbuffer_add_printf(out, "{}");
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
                      "application/json");
    /* Every request on a new connection: each one meets the trust afresh. */
    evhttp_add_header(evhttp_request_get_output_headers(req), "Connection", "close");
    evhttp_send_reply(req, 200, "OK", out);
    evbuffer_free(out);
}

static int
setup(void **state)
{
    struct env *e = calloc(1, sizeof(*e));
    struct evhttp_bound_socket *bs;
    struct sockaddr_in sin;
    socklen_t slen = sizeof(sin);
    struct httpc_opts o;
    char err[256];

    assert_non_null(e);
    fake_isolate();
    log_init(LOG_FORMAT_TEXT, LOG_LEVEL_DEBUG);
    snprintf(e->dir, sizeof(e->dir), "/tmp/gvw-ca-XXXXXX");
    assert_non_null(mkdtemp(e->dir));
    snprintf(e->ca_path, sizeof(e->ca_path), "%s/ca.crt", e->dir);
    pki_make(&e->one, "gvw test CA one");
    pki_make(&e->two, "gvw test CA two");
    e->serving = e->one.ctx;
    ca_write(e, &e->one);
    assert_non_null(e->base = event_base_new());
    assert_non_null(e->http = evhttp_new(e->base));
    evhttp_set_bevcb(e->http, tls_bev, e);
    evhttp_set_gencb(e->http, answer, e);
    assert_non_null(bs = evhttp_bind_socket_with_handle(e->http, "127.0.0.1", 0));
    assert_int_equal(
        getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&sin, &slen), 0);
    e->port = ntohs(sin.sin_port);
    memset(&o, 0, sizeof(o));
    o.ho_ca_file = e->ca_path;
    o.ho_timeout_ms = 5000;
    assert_non_null(e->h = httpc_new(e->base, &o, err, sizeof(err)));
    *state = e;
    return 0;
}

static int
teardown(void **state)
{
    struct env *e = *state;

    httpc_free(e->h);
    evhttp_free(e->http);
    event_base_free(e->base);
    pki_free(&e->one);
    pki_free(&e->two);
    unlink(e->ca_path);
    rmdir(e->dir);
    free(e);
    return 0;
}

static void
on_done(const struct httpc_resp *r, void *arg)
{
    struct env *e = arg;

    e->done = 1;
    e->status = r->hr_status;
    snprintf(e->error, sizeof(e->error), "%s", r->hr_error ? r->hr_error : "");
}

/* One GET to the TLS server; its status (0 when the handshake failed). */
static long
get(struct env *e)
{
    char url[64];
    struct httpc_req req = {.hq_method = "GET", .hq_url = url};

    snprintf(url, sizeof(url), "https://127.0.0.1:%d/api/v1/nodes", e->port);
    e->done = 0;
    assert_int_equal(httpc_request(e->h, &req, on_done, e), 0);
    assert_int_equal(fake_run_until(e->base, &e->done, 8000), 0);
    return e->status;
}

/* The cluster CA rotates under a running client: the new CA file is the trust
 * from the next connection on, and the old one is trusted no more. libcurl >=
 * 7.87 would otherwise keep the first file's CAs for 24 hours. */
static void
test_rotated_ca_taken_at_once(void **state)
{
    struct env *e = *state;

    assert_int_equal(get(e), 200);
    assert_string_equal(e->error, "");
    /* The file names the new CA; the server still shows the old one's
     * certificate: refused, so the file is really read again. */
    ca_write(e, &e->two);
    assert_int_equal(get(e), 0);
    assert_non_null(strstr(e->error, "certificate"));
    /* The server rotates too: trusted, on the same client. */
    e->serving = e->two.ctx;
    assert_int_equal(get(e), 200);
    assert_string_equal(e->error, "");
    assert_int_equal(get(e), 200);
    assert_true(e->handshakes >= 4);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_rotated_ca_taken_at_once, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
