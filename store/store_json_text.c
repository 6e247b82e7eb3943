/* store_json_text.c -- the candidates column written straight as JSON text (no jansson tree) */
#include "store_json_text.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store_json.h"

/* A growable output; jt_failed sticks after the first allocation failure. */
struct jtext {
    char *jt_data; /* owned */
    size_t jt_len;
    size_t jt_size;
    int jt_failed;
};

/* Room for need more bytes (and the terminator); 0 or -1. */
static int
jt_reserve(struct jtext *t, size_t need)
{
    size_t size = t->jt_size ? t->jt_size : 256;
    char *p;

    if (t->jt_failed)
        return -1;
    if (need >= SIZE_MAX / 4 - t->jt_len) {
        t->jt_failed = 1;
        return -1;
    }
    if (t->jt_len + need + 1 <= t->jt_size)
        return 0;
    while (size < t->jt_len + need + 1)
        size *= 2;
    if ((p = realloc(t->jt_data, size)) == NULL) {
        t->jt_failed = 1;
        return -1;
    }
    t->jt_data = p;
    t->jt_size = size;
    return 0;
}

static void
jt_put(struct jtext *t, const char *s, size_t len)
{
    if (jt_reserve(t, len) == -1)
        return;
    memcpy(t->jt_data + t->jt_len, s, len);
    t->jt_len += len;
}

#define JT_LIT(t, lit) jt_put((t), (lit), sizeof(lit) - 1)

/* As jansson's "%lld", without the printf machinery. */
static void
jt_int(struct jtext *t, int64_t v)
{
    char tmp[24];
    size_t i = sizeof(tmp);
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;

    do {
        tmp[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    if (v < 0)
        tmp[--i] = '-';
    jt_put(t, tmp + i, sizeof(tmp) - i);
}

/* s as a JSON string the way store_json_str() + json_dumps(JSON_COMPACT) write
 * it: '"' and '\\' escaped, the five short escapes, other control bytes as
 * \u00XX (upper-case hex), everything else (DEL, '/', non-ASCII) as is; a byte
 * that starts no valid UTF-8 sequence becomes '?'. */
static void
jt_str(struct jtext *t, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    char *o;

    /* Worst case 6 output bytes per input byte; reserving it once keeps the loop
     * free of checks. */
    if (n > SIZE_MAX / 8 || jt_reserve(t, 6 * n + 2) == -1) {
        t->jt_failed = 1;
        return;
    }
    o = t->jt_data + t->jt_len;

    *o++ = '"';
    while (*p != '\0') {
        unsigned char ch = *p;

        if (ch >= 0x20 && ch < 0x80 && ch != '"' && ch != '\\') {
            *o++ = (char)ch;
            p++;
            continue;
        }
        if (ch >= 0x80) {
            n = store_utf8_len(p);
            if (n == 0) {
                *o++ = '?';
                p++;
            } else {
                memcpy(o, p, n);
                o += n;
                p += n;
            }
            continue;
        }
        *o++ = '\\';
        switch (ch) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '\b': *o++ = 'b'; break;
        case '\f': *o++ = 'f'; break;
        case '\n': *o++ = 'n'; break;
        case '\r': *o++ = 'r'; break;
        case '\t': *o++ = 't'; break;
        default:
            *o++ = 'u';
            *o++ = '0';
            *o++ = '0';
            *o++ = hex[ch >> 4];
            *o++ = hex[ch & 0xF];
            break;
        }
        p++;
    }
    *o++ = '"';
    t->jt_len = (size_t)(o - t->jt_data);
}

static void
candidate_text(struct jtext *t, const struct store_candidate *c)
{
    JT_LIT(t, "{\"namespace\":");
    jt_str(t, c->sc_namespace ? c->sc_namespace : "");
    JT_LIT(t, ",\"pod\":");
    jt_str(t, c->sc_pod ? c->sc_pod : "");
    JT_LIT(t, ",\"used_mib\":");
    jt_int(t, c->sc_used_mib);
    JT_LIT(t, ",\"budget_mib\":");
    if (c->sc_has_budget)
        jt_int(t, c->sc_budget_mib);
    else
        JT_LIT(t, "null");
    if (c->sc_eligible) {
        JT_LIT(t, ",\"eligible\":true,\"why_not\":null}");
        return;
    }
    JT_LIT(t, ",\"eligible\":false,\"why_not\":");
    if (c->sc_why_not == NULL)
        JT_LIT(t, "null");
    else
        jt_str(t, c->sc_why_not);
    JT_LIT(t, "}");
}

char *
store_candidates_text(const struct store_candidate *c, size_t n, size_t *len_out)
{
    struct jtext t = {NULL, 0, 0, 0};
    size_t i;

    /* ~120 bytes a candidate: one allocation for a typical list. */
    if (jt_reserve(&t, n < SIZE_MAX / 256 ? 128 * n + 2 : 0) == -1)
        return NULL;
    JT_LIT(&t, "[");
    for (i = 0; i < n && !t.jt_failed; i++) {
        if (i > 0)
            JT_LIT(&t, ",");
        candidate_text(&t, &c[i]);
    }
    JT_LIT(&t, "]");
    if (t.jt_failed) {
        free(t.jt_data);
        return NULL;
    }
    t.jt_data[t.jt_len] = '\0';
    if (len_out != NULL)
        *len_out = t.jt_len;
    return t.jt_data;
}
