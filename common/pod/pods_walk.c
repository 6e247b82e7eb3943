/* pods_walk.c -- the PodList walk's shared readers: a string checked and kept, a shape
 * required (POD_STRICT), a key read once, a refusal of the budgets alone, a quote */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pods_walk.h"
#include "strpool.h"

/* Copies len bytes of s into out (QUOTED bytes) for a message: printable
 * ASCII as is, anything else as \xNN, cut at QUOTE_MAX bytes, so API text
 * never smuggles control bytes into logs. */
static void
quote(const char *s, size_t len, char *out)
{
    size_t i, o = 0;

    for (i = 0; i < len && i < QUOTE_MAX; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, QUOTED - o, "\\x%02x", c);
    }
    if (i < len) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
}

void
walk_quote_str(const struct js_str *v, char *out)
{
    char head[QUOTE_MAX + 8];
    size_t full = js_str_copy(v, head, sizeof(head));

    quote(head, full, out);
}

void
walk_soft(struct walk *w, const char *what)
{
    if (W_STRICT(w) && w->w_budgets && w->w_soft[0] == '\0')
        snprintf(w->w_soft, sizeof(w->w_soft), "%s", what);
}

int
walk_once(struct walk *w, unsigned *seen, unsigned bit, const char *key)
{
    struct js_scan at;
    char msg[sizeof(at.js_err) + 16];

    if (!(*seen & bit)) {
        *seen |= bit;
        return 0;
    }
    if (w->w_lenient)
        return 1;
    if (!W_STRICT(w))
        return js_once(&w->w_s, seen, bit, key);
    /* The decision's reading stops here: its words, position and all. */
    at = w->w_s;
    js_once(&at, seen, bit, key);
    snprintf(msg, sizeof(msg), "not JSON: %s", at.js_err);
    walk_soft(w, msg);
    return 1;
}

/* POD_STRICT: opens the object or array that must come next; a value of another
 * type is told as the shape error what, a byte that starts no value as the reader's
 * syntax error. 0 or -1. */
int
walk_shape(struct walk *w, enum js_type want, const char *what)
{
    enum js_type t = js_peek(&w->w_s);

    if (t != want && t != JS_ERROR)
        return js_fail(&w->w_s, what);
    return want == JS_OBJECT ? js_object_begin(&w->w_s) : js_array_begin(&w->w_s);
}

/* 1 when v decodes to a string that holds U+0000, 0 when not, -1 when out of
 * memory. jscan refuses a raw control byte, so only an escape can hold one. */
static int
has_nul(const struct js_str *v)
{
    char small[64], *heap;
    size_t n;
    int nul;

    if (!v->jv_escaped)
        return 0;
    if ((n = js_str_copy(v, small, sizeof(small))) < sizeof(small))
        return strlen(small) != n;
    if ((heap = malloc(n + 1)) == NULL)
        return -1;
    js_str_decode(v, heap);
    nul = strlen(heap) != n;
    free(heap);
    return nul;
}

/* A string value into *v: 1. Another value, or one holding U+0000, is passed over
 * (0), or under POD_STRICT refused as what (-1). */
int
walk_read_str(struct walk *w, struct js_str *v, const char *what)
{
    int nul;

    if (js_peek(&w->w_s) != JS_STRING)
        return W_STRICT(w) ? js_fail(&w->w_s, what) : js_skip(&w->w_s);
    if (js_string(&w->w_s, v) == -1)
        return -1;
    if ((nul = has_nul(v)) == -1) {
        w->w_oom = 1;
        return js_fail(&w->w_s, "out of memory");
    }
    if (nul)
        return W_STRICT(w) ? js_fail(&w->w_s, what) : 0;
    return 1;
}

/* v into the pool as *dst (v holds no U+0000): 0, or -1 when out of memory. */
int
walk_keep_str(struct walk *w, const struct js_str *v, char **dst)
{
    int nul = 0;

    if ((*dst = js_strdup_pool(v, w->w_pool, &nul)) != NULL || nul)
        return 0;
    w->w_oom = 1;
    return js_fail(&w->w_s, "out of memory");
}

/* A string value the decision may use (the pod IP, the release annotation):
 * kept as is, or left NULL when it holds U+0000. */
int
walk_read_optional(struct walk *w, char **dst)
{
    struct js_str v;
    int nul = 0;

    if (js_string(&w->w_s, &v) == -1)
        return -1;
    /* js_once refused a repeat, so *dst was NULL; the pool owns the string. */
    if ((*dst = js_strdup_pool(&v, w->w_pool, &nul)) == NULL && !nul)
        return w->w_oom = 1, -1;
    return 0;
}
