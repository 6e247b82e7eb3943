/* alert.c -- the Alertmanager webhook payload (version 4), parsed and checked
 *
 * One pass of the jscan pull reader over the body, no DOM. Members may come
 * in any order, so each alert is collected first and judged when its object
 * closes, in a fixed order (status, labels, alertname, annotations, then the
 * optional strings), and the first alert that fails gives the answer. The
 * walk goes on to the end of the body whatever its shape: a body that is not
 * JSON is always told as such, before anything about its shape.
 *
 * What the reader cannot see, this file checks where it reads: a key twice in
 * one object and a \u0000 in a string (C strings cannot carry it), both
 * "not valid JSON" as jansson called them. Subtrees it skips (groupLabels,
 * generatorURL, ...) are checked by the reader alone.
 */
#include "alert.h"

#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jscan.h"
#include "json_str.h"

#define MEMBERS_INLINE 16 /* members an object may have before its list is malloc'd */
#define SORT_INSERTION 24 /* up to this many members, insertion sort beats qsort */

/* One member of an object the parser reads, as it stands in the body. */
struct member {
    struct js_str m_key; /* borrowed from the body */
    struct js_str m_val; /* borrowed; empty unless the value is a string */
    const char *m_k;     /* the key decoded: m_key's own bytes, or in the scratch */
    size_t m_klen;
};

/* A growable list of members that starts in place, so most bodies need no
 * allocation for it. Never copied: ms_v may point at ms_inline. */
struct members {
    struct member *ms_v;
    size_t ms_n, ms_cap;
    struct member ms_inline[MEMBERS_INLINE];
};

/* What one known member held. */
enum held { H_ABSENT = 0, H_NULL, H_STRING, H_OBJECT, H_ARRAY, H_OTHER };

/* The members of an alert the parser reads, in the order they are judged
 * (the last three are optional strings, null meaning absent). */
static const char *const alert_keys[] = {"status",      "labels",   "annotations",
                                         "fingerprint", "startsAt", "endsAt"};
enum {
    K_STATUS,
    K_LABELS,
    K_ANNOTATIONS,
    K_FINGERPRINT,
    K_STARTS_AT,
    K_ENDS_AT,
    K_COUNT,
    K_OPT_FIRST = K_FINGERPRINT
};

/* One alert as read, judged when its object closes. */
struct alert_in {
    enum held ai_held[K_COUNT];    /* a member seen twice is a duplicate key */
    struct js_str ai_str[K_COUNT]; /* the string values (status and the optional ones) */
    struct member ai_bad[2];       /* the first non-string label, annotation */
    int ai_has_bad[2];
};

struct parse {
    struct js_scan p_s;
    char *p_err; /* the caller's */
    size_t p_errlen;
    int p_oom;           /* an allocation failed: the answer is "out of memory" */
    int p_told;          /* p_err holds why the body is not JSON (else js_err does) */
    int p_alert_failed;  /* p_err holds the first alert's problem */
    size_t p_alerts_cap; /* of out->ab_alerts */
    /* Decoded copies of escaped strings, bump-allocated from one block of the
     * body's size: each body string is decoded here at most once, and its
     * decoded form plus a NUL is no longer than its quoted form, so it
     * cannot run out and pointers into it stay put. */
    char *p_scr;
    size_t p_scr_used, p_scr_cap;
    struct members p_root_keys;  /* unknown keys of the body object */
    struct members p_alert_keys; /* unknown keys of the alert being read */
    struct members p_labels;     /* of the alert being read; sorted once read */
    struct members p_annots;
};

static void seterr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int not_json(struct parse *p, const char *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int alert_fails(struct parse *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
seterr(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* The body is not JSON for a reason found here, at byte at: told with its
 * line and column as the reader tells its own. Stops the reader; always -1. */
static int
not_json(struct parse *p, const char *at, const char *fmt, ...)
{
    char what[160];
    const char *q;
    int line = 1, col = 1;
    va_list ap;

    if (p->p_s.js_failed)
        return -1;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    for (q = p->p_s.js_start; q < at; q++) {
        if (*q == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    seterr(p->p_err, p->p_errlen, "body is not valid JSON: %s (line %d, column %d)", what,
           line, col);
    p->p_told = 1;
    return js_fail(&p->p_s, what);
}

static int
oom(struct parse *p)
{
    p->p_oom = 1;
    return js_fail(&p->p_s, "out of memory");
}

/* The first problem of any alert is the answer (unless the body is not JSON,
 * or its version is wrong); later ones are not looked at. Always 1, so it
 * can be returned. */
static int
alert_fails(struct parse *p, const char *fmt, ...)
{
    va_list ap;

    if (p->p_alert_failed)
        return 1;
    p->p_alert_failed = 1;
    va_start(ap, fmt);
    vsnprintf(p->p_err, p->p_errlen, fmt, ap);
    va_end(ap);
    return 1;
}

/* n as a printf precision of at most max. */
static int
prec(size_t n, size_t max)
{
    if (max > INT_MAX)
        max = INT_MAX;
    return (int)(n < max ? n : max);
}

/* n bytes of the scratch, or NULL (out of memory). */
static char *
scratch(struct parse *p, size_t n)
{
    char *d;

    if (p->p_scr == NULL) {
        if ((p->p_scr = malloc(p->p_scr_cap)) == NULL)
            return oom(p), NULL;
    }
    if (n > p->p_scr_cap - p->p_scr_used) {
        /* Can't happen: see p_scr. Refused rather than overrun. */
        not_json(p, p->p_s.js_p, "internal error: decoding space exhausted");
        return NULL;
    }
    d = p->p_scr + p->p_scr_used;
    p->p_scr_used += n;
    return d;
}

/* v decoded: its own bytes, or a copy in the scratch. 0, or -1. */
static int
decoded(struct parse *p, const struct js_str *v, const char **s, size_t *n)
{
    char *d;

    if (!v->jv_escaped) {
        *s = v->jv_raw;
        *n = v->jv_len;
        return 0;
    }
    if ((d = scratch(p, v->jv_len + 1)) == NULL)
        return -1;
    *n = js_str_decode(v, d);
    *s = d;
    return 0;
}

/* Whether v has a \u0000 escape (v is already validated). */
static int
has_nul(const struct js_str *v)
{
    const char *q = v->jv_raw, *end = v->jv_raw + v->jv_len;

    if (!v->jv_escaped)
        return 0;
    while (q < end) {
        if (*q != '\\') {
            q++;
        } else if (q[1] == 'u' && memcmp(q + 2, "0000", 4) == 0) {
            return 1;
        } else {
            q += 2; /* the escaped byte: never the start of another escape */
        }
    }
    return 0;
}

/* Reads a string value the parser keeps. 0, or -1. */
static int
read_string(struct parse *p, struct js_str *v)
{
    if (js_string(&p->p_s, v) == -1)
        return -1;
    if (has_nul(v))
        return not_json(p, v->jv_raw - 1, "\\u0000 in a string is not supported");
    return 0;
}

/* js_object_next() for an object the parser reads: its keys carry no NUL. */
static int
next_key(struct parse *p, struct js_str *key)
{
    int rc = js_object_next(&p->p_s, key);

    if (rc == 1 && has_nul(key))
        return not_json(p, key->jv_raw - 1, "\\u0000 in a key is not supported");
    return rc;
}

static void
members_init(struct members *ms)
{
    ms->ms_v = ms->ms_inline;
    ms->ms_n = 0;
    ms->ms_cap = MEMBERS_INLINE;
}

static void
members_free(struct members *ms)
{
    if (ms->ms_v != ms->ms_inline)
        free(ms->ms_v);
    members_init(ms);
}

/* Appends a member with key (its value not read yet); NULL when out of memory. */
static struct member *
members_add(struct parse *p, struct members *ms, const struct js_str *key)
{
    struct member *m, *v;

    if (ms->ms_n == ms->ms_cap) {
        if (ms->ms_cap > SIZE_MAX / 2 / sizeof(*v))
            return oom(p), NULL; /* can't happen: the body is smaller */
        if (ms->ms_v == ms->ms_inline) {
            if ((v = malloc(2 * ms->ms_cap * sizeof(*v))) == NULL)
                return oom(p), NULL;
            memcpy(v, ms->ms_v, ms->ms_n * sizeof(*v));
        } else if ((v = realloc(ms->ms_v, 2 * ms->ms_cap * sizeof(*v))) == NULL) {
            return oom(p), NULL;
        }
        ms->ms_v = v;
        ms->ms_cap *= 2;
    }
    m = &ms->ms_v[ms->ms_n];
    m->m_key = *key;
    memset(&m->m_val, 0, sizeof(m->m_val));
    if (decoded(p, key, &m->m_k, &m->m_klen) == -1)
        return NULL;
    ms->ms_n++;
    return m;
}

/* Bytewise, as strcmp orders NUL-free strings. */
static int
key_cmp(const char *k, size_t klen, const struct member *m)
{
    size_t n = klen < m->m_klen ? klen : m->m_klen;
    int c = n > 0 ? memcmp(k, m->m_k, n) : 0;

    if (c != 0)
        return c;
    return (klen > m->m_klen) - (klen < m->m_klen);
}

/* By key, then by place in the body. */
static int
member_cmp(const struct member *a, const struct member *b)
{
    int c = key_cmp(a->m_k, a->m_klen, b);

    if (c != 0)
        return c;
    return (a->m_key.jv_raw > b->m_key.jv_raw) - (a->m_key.jv_raw < b->m_key.jv_raw);
}

static int
member_qcmp(const void *a, const void *b)
{
    return member_cmp(a, b);
}

static int
same_key(const struct member *a, const struct member *b)
{
    return a->m_klen == b->m_klen && memcmp(a->m_k, b->m_k, a->m_klen) == 0;
}

/* The longest prefix of s (valid UTF-8) of at most max bytes that ends on a
 * character boundary. */
static int
utf8_prefix(const char *s, size_t n, size_t max)
{
    if (n <= max)
        return (int)n;
    while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
        max--;
    return (int)max;
}

/* Sorts ms by key. A key twice is "not valid JSON" (jansson's
 * JSON_REJECT_DUPLICATES), told at its second place in the body. 0, or -1. */
static int
sort_unique(struct parse *p, struct members *ms)
{
    struct member *v = ms->ms_v, t;
    const struct member *dup = NULL;
    size_t n = ms->ms_n, i;

    if (n > SORT_INSERTION) {
        qsort(v, n, sizeof(*v), member_qcmp);
    } else {
        for (i = 1; i < n; i++) {
            if (member_cmp(&v[i - 1], &v[i]) <= 0)
                continue;
            size_t j;

            t = v[i];
            for (j = i; j > 0 && member_cmp(&v[j - 1], &t) > 0; j--)
                v[j] = v[j - 1];
            v[j] = t;
        }
    }
    /* Equal keys sit together in body order: the first repeat in the body
     * is the earliest second-of-a-pair. */
    for (i = 1; i < n; i++)
        if (same_key(&v[i - 1], &v[i]) &&
            (dup == NULL || v[i].m_key.jv_raw < dup->m_key.jv_raw))
            dup = &v[i];
    if (dup != NULL)
        return not_json(p, dup->m_key.jv_raw - 1, "duplicate key '%.*s'",
                        utf8_prefix(dup->m_k, dup->m_klen, 64), dup->m_k);
    return 0;
}

/* The member of sorted ms with key name, or NULL. */
static const struct member *
members_find(const struct members *ms, const char *name)
{
    size_t lo = 0, hi = ms->ms_n, len = strlen(name);

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = key_cmp(name, len, &ms->ms_v[mid]);

        if (c == 0)
            return &ms->ms_v[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

/* Reads an object of strings (labels, annotations) into ms, sorted and with
 * unique keys; the first member whose value is not a string goes to *bad.
 * 0, or -1 (not JSON, out of memory). */
static int
read_map(struct parse *p, struct members *ms, struct member *bad, int *has_bad)
{
    struct member *m;
    struct js_str key;
    int rc;

    ms->ms_n = 0;
    if (js_object_begin(&p->p_s) == -1)
        return -1;
    while ((rc = next_key(p, &key)) == 1) {
        if ((m = members_add(p, ms, &key)) == NULL)
            return -1;
        if (js_peek(&p->p_s) == JS_STRING) {
            if (read_string(p, &m->m_val) == -1)
                return -1;
        } else {
            if (js_skip(&p->p_s) == -1)
                return -1;
            if (!*has_bad) {
                *bad = *m;
                *has_bad = 1;
            }
        }
    }
    if (rc == -1)
        return -1;
    return sort_unique(p, ms);
}

/* Reads a member that may be a string (*v), null, or something else. */
static int
read_opt_string(struct parse *p, struct js_str *v, enum held *held)
{
    switch (js_peek(&p->p_s)) {
    case JS_STRING:
        *held = H_STRING;
        return read_string(p, v);
    case JS_NULL:
        *held = H_NULL;
        return js_literal(&p->p_s, NULL);
    default:
        *held = H_OTHER;
        return js_skip(&p->p_s);
    }
}

/* Reads one known member k of an alert. 0, or -1. */
static int
read_alert_member(struct parse *p, int k, struct alert_in *in)
{
    enum js_type t;

    switch (k) {
    case K_STATUS:
        if (js_peek(&p->p_s) != JS_STRING) {
            in->ai_held[k] = H_OTHER;
            return js_skip(&p->p_s);
        }
        in->ai_held[k] = H_STRING;
        return read_string(p, &in->ai_str[k]);
    case K_LABELS:
    case K_ANNOTATIONS:
        t = js_peek(&p->p_s);
        if (t == JS_OBJECT) {
            in->ai_held[k] = H_OBJECT;
            return read_map(p, k == K_LABELS ? &p->p_labels : &p->p_annots,
                            &in->ai_bad[k - K_LABELS], &in->ai_has_bad[k - K_LABELS]);
        }
        if (t == JS_NULL && k == K_ANNOTATIONS) {
            in->ai_held[k] = H_NULL;
            return js_literal(&p->p_s, NULL);
        }
        in->ai_held[k] = H_OTHER;
        return js_skip(&p->p_s);
    default:
        return read_opt_string(p, &in->ai_str[k], &in->ai_held[k]);
    }
}

/* Appends a string as json_dumps writes it. One without escapes in the body
 * holds no '"', '\\' or control character, so json_dumps writes its bytes as
 * they are; one with escapes is decoded (dec when the caller has it, with its
 * NUL, else into the scratch) and escaped again. Either way it takes no more
 * room than in the body. NULL when out of memory. */
static char *
put_string(struct parse *p, char *o, const struct js_str *v, const char *dec)
{
    size_t n;

    *o++ = '"';
    if (!v->jv_escaped) {
        memcpy(o, v->jv_raw, v->jv_len);
        o += v->jv_len;
    } else {
        if (dec != NULL)
            n = strlen(dec);
        else if (decoded(p, v, &dec, &n) == -1)
            return NULL;
        o = json_str_escape(o, dec, n);
    }
    *o++ = '"';
    return o;
}

/* Room for ms written as a compact JSON object with its NUL: never less
 * than put_map() uses (see put_string()). */
static size_t
map_room(const struct members *ms)
{
    size_t n = 3; /* {} and the NUL */

    for (size_t i = 0; i < ms->ms_n; i++)
        n += ms->ms_v[i].m_key.jv_len + ms->ms_v[i].m_val.jv_len + 6; /* "":"" and , */
    return n;
}

/* Writes sorted ms as json_dumps(JSON_COMPACT | JSON_SORT_KEYS) does, with a
 * NUL. A label map passes its values decoded (vals). NULL when out of memory. */
static char *
put_map(struct parse *p, char *o, const struct members *ms,
        const struct alert_label *vals)
{
    const struct member *m;

    *o++ = '{';
    for (size_t i = 0; i < ms->ms_n; i++) {
        m = &ms->ms_v[i];
        if (i > 0)
            *o++ = ',';
        /* An escaped key's decoded copy in the scratch ends in a NUL. */
        if ((o = put_string(p, o, &m->m_key, m->m_k)) == NULL)
            return NULL;
        *o++ = ':';
        if ((o = put_string(p, o, &m->m_val, vals ? vals[i].al_value : NULL)) == NULL)
            return NULL;
    }
    *o++ = '}';
    *o++ = '\0';
    return o;
}

/* Copies v decoded to o with a NUL; returns past it. */
static char *
put_plain(char *o, const struct js_str *v)
{
    return o + js_str_decode(v, o) + 1;
}

/* Makes a from a judged alert_in: one allocation holds all of it. 0, or -1. */
static int
build(struct parse *p, const struct alert_in *in, struct alert *a)
{
    const struct members *lab = &p->p_labels, *ann = &p->p_annots;
    char **opt[] = {&a->a_fingerprint, &a->a_starts_at, &a->a_ends_at};
    struct alert_label *pairs;
    size_t size, i;
    char *o;

    /* Each term is bounded by the bytes its strings take in the body (a
     * label takes at least 6), so the sum is under 16 times the body. */
    size = lab->ms_n * sizeof(*pairs) + map_room(lab) + 3 + /* {} and its NUL */
           (in->ai_held[K_ANNOTATIONS] == H_OBJECT ? map_room(ann) : 0);
    for (i = 0; i < lab->ms_n; i++)
        size += lab->ms_v[i].m_klen + lab->ms_v[i].m_val.jv_len + 2;
    for (i = K_OPT_FIRST; i < K_COUNT; i++)
        size += (in->ai_held[i] == H_STRING ? in->ai_str[i].jv_len : 0) + 1;
    if ((a->a_mem = malloc(size)) == NULL)
        return oom(p);
    pairs = a->a_mem;
    o = (char *)(pairs + lab->ms_n);
    for (i = 0; i < lab->ms_n; i++) {
        pairs[i].al_name = o;
        memcpy(o, lab->ms_v[i].m_k, lab->ms_v[i].m_klen);
        o += lab->ms_v[i].m_klen;
        *o++ = '\0';
        pairs[i].al_value = o;
        o = put_plain(o, &lab->ms_v[i].m_val);
    }
    a->a_labels = pairs;
    a->a_nlabels = lab->ms_n;
    a->a_alertname = (char *)alert_label(a, "alertname");
    a->a_firing = js_str_eq(&in->ai_str[K_STATUS], "firing");
    for (i = K_OPT_FIRST; i < K_COUNT; i++) {
        *opt[i - K_OPT_FIRST] = o;
        if (in->ai_held[i] == H_STRING)
            o = put_plain(o, &in->ai_str[i]);
        else
            *o++ = '\0';
    }
    a->a_labels_json = o;
    if ((o = put_map(p, o, lab, pairs)) == NULL)
        return -1; /* can't happen: a label map needs no scratch */
    a->a_annotations_json = o;
    if (in->ai_held[K_ANNOTATIONS] != H_OBJECT)
        memcpy(o, "{}", 3);
    else if (put_map(p, o, ann, NULL) == NULL)
        return -1; /* out of memory; the caller clears a */
    return 0;
}

/* A problem of labels or annotations (k), told to alert_fails() (1), or 0. */
static int
map_problem(struct parse *p, size_t idx, const struct alert_in *in, int k)
{
    const char *what = k == K_LABELS ? "labels" : "annotations";
    const struct member *bad = &in->ai_bad[k - K_LABELS];

    if (in->ai_held[k] == H_OTHER)
        return alert_fails(p, "alerts[%zu].%s: must be an object", idx, what);
    if (in->ai_has_bad[k - K_LABELS])
        return alert_fails(p, "alerts[%zu].%s.%.*s: must be a string", idx, what,
                           prec(bad->m_klen, p->p_errlen), bad->m_k);
    return 0;
}

/* Judges a closed alert in the order the answer must follow; 0 when it is
 * fine. A problem goes to alert_fails() (1). -1 only when out of memory. */
static int
judge(struct parse *p, size_t idx, const struct alert_in *in)
{
    const struct member *name;
    const char *s;
    size_t n;

    if (in->ai_held[K_STATUS] != H_STRING)
        return alert_fails(p, "alerts[%zu].status: missing or not a string", idx);
    if (!js_str_eq(&in->ai_str[K_STATUS], "firing") &&
        !js_str_eq(&in->ai_str[K_STATUS], "resolved")) {
        if (decoded(p, &in->ai_str[K_STATUS], &s, &n) == -1)
            return -1;
        return alert_fails(p, "alerts[%zu].status: '%.*s' is not firing or resolved", idx,
                           prec(n, 64), s);
    }
    if (in->ai_held[K_LABELS] == H_ABSENT)
        return alert_fails(p, "alerts[%zu].labels: missing", idx);
    if (map_problem(p, idx, in, K_LABELS))
        return 1;
    name = members_find(&p->p_labels, "alertname");
    if (name == NULL || name->m_val.jv_len == 0)
        return alert_fails(p, "alerts[%zu].labels.alertname: missing or empty", idx);
    if (map_problem(p, idx, in, K_ANNOTATIONS))
        return 1;
    for (int k = K_OPT_FIRST; k < K_COUNT; k++)
        if (in->ai_held[k] == H_OTHER)
            return alert_fails(p, "alerts[%zu].%s: must be a string", idx, alert_keys[k]);
    return 0;
}

/* Appends a zeroed alert to out; NULL when out of memory. */
static struct alert *
add_alert(struct parse *p, struct alert_batch *out)
{
    struct alert *v;

    if (out->ab_count == p->p_alerts_cap) {
        size_t cap = p->p_alerts_cap ? 2 * p->p_alerts_cap : 1;

        if (cap > SIZE_MAX / sizeof(*v) ||
            (v = realloc(out->ab_alerts, cap * sizeof(*v))) == NULL)
            return oom(p), NULL;
        out->ab_alerts = v;
        p->p_alerts_cap = cap;
    }
    v = &out->ab_alerts[out->ab_count];
    memset(v, 0, sizeof(*v));
    return v;
}

static void
alert_clear(struct alert *a)
{
    free(a->a_mem);
    memset(a, 0, sizeof(*a));
}

/* Reads alerts[idx]; a sound one is added to out unless an answer is already
 * known to be a 400. 0, or -1 (not JSON, out of memory). */
static int
read_alert(struct parse *p, size_t idx, struct alert_batch *out)
{
    struct alert_in in;
    struct alert *a;
    struct js_str key;
    int rc, k;

    if (js_peek(&p->p_s) != JS_OBJECT) {
        if (js_skip(&p->p_s) == -1)
            return -1;
        alert_fails(p, "alerts[%zu]: must be an object", idx);
        return 0;
    }
    memset(&in, 0, sizeof(in));
    p->p_alert_keys.ms_n = 0;
    p->p_labels.ms_n = 0;
    p->p_annots.ms_n = 0;
    if (js_object_begin(&p->p_s) == -1)
        return -1;
    while ((rc = next_key(p, &key)) == 1) {
        for (k = 0; k < K_COUNT && !js_str_eq(&key, alert_keys[k]); k++)
            ;
        if (k == K_COUNT) {
            if (members_add(p, &p->p_alert_keys, &key) == NULL || js_skip(&p->p_s) == -1)
                return -1;
            continue;
        }
        if (in.ai_held[k] != H_ABSENT)
            return not_json(p, key.jv_raw - 1, "duplicate key '%s'", alert_keys[k]);
        if (read_alert_member(p, k, &in) == -1)
            return -1;
    }
    if (rc == -1 || sort_unique(p, &p->p_alert_keys) == -1)
        return -1;
    if (p->p_alert_failed)
        return 0; /* the answer is a 400 already: the rest is only checked as JSON */
    if ((rc = judge(p, idx, &in)) != 0)
        return rc == -1 ? -1 : 0;
    if ((a = add_alert(p, out)) == NULL)
        return -1;
    if (build(p, &in, a) == -1) {
        alert_clear(a);
        return -1;
    }
    out->ab_count++;
    return 0;
}

/* Reads the body object, the alerts into out; what "version" (*ver) and
 * "alerts" held goes to *version and *alerts, judged by the caller. 0, or -1
 * (not JSON, out of memory). */
static int
read_body(struct parse *p, struct alert_batch *out, struct js_str *ver,
          enum held *version, enum held *alerts)
{
    struct js_str key;
    size_t idx;
    int rc, arc;

    if (js_object_begin(&p->p_s) == -1)
        return -1;
    while ((rc = next_key(p, &key)) == 1) {
        if (js_str_eq(&key, "alerts")) {
            if (*alerts != H_ABSENT)
                return not_json(p, key.jv_raw - 1, "duplicate key 'alerts'");
            if (js_peek(&p->p_s) != JS_ARRAY) {
                *alerts = H_OTHER;
                if (js_skip(&p->p_s) == -1)
                    return -1;
                continue;
            }
            *alerts = H_ARRAY;
            if (js_array_begin(&p->p_s) == -1)
                return -1;
            for (idx = 0; (arc = js_array_next(&p->p_s)) == 1; idx++)
                if (read_alert(p, idx, out) == -1)
                    return -1;
            if (arc == -1)
                return -1;
        } else if (js_str_eq(&key, "version")) {
            if (*version != H_ABSENT)
                return not_json(p, key.jv_raw - 1, "duplicate key 'version'");
            if (js_peek(&p->p_s) == JS_STRING) {
                *version = H_STRING;
                if (read_string(p, ver) == -1)
                    return -1;
            } else {
                *version = H_OTHER;
                if (js_skip(&p->p_s) == -1)
                    return -1;
            }
        } else if (members_add(p, &p->p_root_keys, &key) == NULL ||
                   js_skip(&p->p_s) == -1) {
            return -1;
        }
    }
    if (rc == -1 || sort_unique(p, &p->p_root_keys) == -1)
        return -1;
    return js_end(&p->p_s);
}

int
alert_batch_parse(const char *body, size_t len, struct alert_batch *out, char *err,
                  size_t errlen)
{
    struct parse ps, *p = &ps;
    struct js_str ver;
    enum held version = H_ABSENT, alerts = H_ABSENT;
    const char *s;
    size_t n;
    int rc = -1;

    memset(out, 0, sizeof(*out));
    if (len == 0)
        return seterr(err, errlen,
                      "empty body: expected an Alertmanager webhook payload"),
               -1;
    /* Can't happen (bodies are capped at 1 MiB): the sizes computed below
     * are a few times the body's and must not wrap. */
    if (len > SIZE_MAX / 16)
        return seterr(err, errlen, "body too large"), -1;
    js_init(&p->p_s, body, len);
    p->p_err = err;
    p->p_errlen = errlen;
    p->p_oom = p->p_told = p->p_alert_failed = 0;
    p->p_alerts_cap = 0;
    p->p_scr = NULL;
    p->p_scr_used = 0;
    p->p_scr_cap = len + 1;
    members_init(&p->p_root_keys);
    members_init(&p->p_alert_keys);
    members_init(&p->p_labels);
    members_init(&p->p_annots);

    if (js_peek(&p->p_s) != JS_OBJECT) {
        if (js_skip(&p->p_s) == 0 && js_end(&p->p_s) == 0) {
            seterr(err, errlen, "body must be a JSON object");
            goto done;
        }
    } else {
        /* Whatever goes wrong in it stops the reader, which is looked at next. */
        (void)read_body(p, out, &ver, &version, &alerts);
    }
    if (p->p_s.js_failed) {
        if (p->p_oom)
            seterr(err, errlen, "out of memory");
        else if (!p->p_told)
            seterr(err, errlen, "body is not valid JSON: %s", p->p_s.js_err);
        goto done;
    }
    if (version == H_OTHER) {
        seterr(err, errlen, "version: must be a string");
        goto done;
    }
    if (version == H_STRING && !js_str_eq(&ver, "4")) {
        if (decoded(p, &ver, &s, &n) == -1) {
            seterr(err, errlen, "out of memory");
            goto done;
        }
        seterr(err, errlen, "version: '%.*s' is not supported (expected \"4\")",
               prec(n, 32), s);
        goto done;
    }
    if (alerts != H_ARRAY) {
        seterr(err, errlen, "alerts: missing or not an array");
        goto done;
    }
    if (!p->p_alert_failed)
        rc = 0;
done:
    if (rc == -1)
        alert_batch_free(out);
    members_free(&p->p_annots);
    members_free(&p->p_labels);
    members_free(&p->p_alert_keys);
    members_free(&p->p_root_keys);
    free(p->p_scr);
    return rc;
}

void
alert_batch_free(struct alert_batch *b)
{
    if (b == NULL)
        return;
    for (size_t i = 0; i < b->ab_count; i++)
        alert_clear(&b->ab_alerts[i]);
    free(b->ab_alerts);
    b->ab_alerts = NULL;
    b->ab_count = 0;
}

const char *
alert_label(const struct alert *a, const char *name)
{
    size_t lo = 0, hi = a->a_nlabels;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(name, a->a_labels[mid].al_name);

        if (c == 0)
            return a->a_labels[mid].al_value;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

const char *
alert_status_name(const struct alert *a)
{
    return a->a_firing ? "firing" : "resolved";
}
