/* store_json_text.c -- the candidates column written straight as JSON text (no jansson tree) */
#include "store_json_text.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "utf8.h"

#define PUT_LIT(b, lit) buf_append((b), (lit), sizeof(lit) - 1)

/* As jansson's "%lld", without the printf machinery. */
static int
put_int(struct buf *b, int64_t v)
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
    return buf_append(b, tmp + i, sizeof(tmp) - i);
}

/* s as a JSON string the way store_json_str() + json_dumps(JSON_COMPACT) write
 * it: '"' and '\\' escaped, the five short escapes, other control bytes as
 * \u00XX (upper-case hex), everything else (DEL, '/', non-ASCII) as is; a byte
 * that starts no valid UTF-8 sequence becomes '?'. */
static int
put_str(struct buf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    const unsigned char *p = (const unsigned char *)s;
    size_t left = strlen(s), n;
    char *o;

    /* Worst case 6 output bytes per input byte; reserving it once keeps the loop
     * free of checks. */
    if (left > SIZE_MAX / 8 || buf_reserve(b, 6 * left + 2) == -1)
        return -1;
    o = b->b_data + b->b_len;

    *o++ = '"';
    while (left > 0) {
        unsigned char ch = *p;

        if (ch >= 0x20 && ch < 0x80 && ch != '"' && ch != '\\') {
            *o++ = (char)ch;
            p++, left--;
            continue;
        }
        if (ch >= 0x80) {
            n = utf8_char_len((const char *)p, left);
            if (n == 0) {
                *o++ = '?';
                n = 1;
            } else {
                memcpy(o, p, n);
                o += n;
            }
            p += n, left -= n;
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
        p++, left--;
    }
    *o++ = '"';
    b->b_len = (size_t)(o - b->b_data);
    b->b_data[b->b_len] = '\0';
    return 0;
}

static int
candidate_text(struct buf *b, const struct store_candidate *c)
{
    if (PUT_LIT(b, "{\"namespace\":") == -1 ||
        put_str(b, c->sc_namespace ? c->sc_namespace : "") == -1 ||
        PUT_LIT(b, ",\"pod\":") == -1 || put_str(b, c->sc_pod ? c->sc_pod : "") == -1 ||
        PUT_LIT(b, ",\"used_mib\":") == -1 || put_int(b, c->sc_used_mib) == -1 ||
        PUT_LIT(b, ",\"budget_mib\":") == -1 ||
        (c->sc_has_budget ? put_int(b, c->sc_budget_mib) : PUT_LIT(b, "null")) == -1)
        return -1;
    if (c->sc_eligible)
        return PUT_LIT(b, ",\"eligible\":true,\"why_not\":null}");
    if (PUT_LIT(b, ",\"eligible\":false,\"why_not\":") == -1 ||
        (c->sc_why_not == NULL ? PUT_LIT(b, "null") : put_str(b, c->sc_why_not)) == -1)
        return -1;
    return PUT_LIT(b, "}");
}

char *
store_candidates_text(const struct store_candidate *c, size_t n, size_t *len_out)
{
    struct buf b;
    size_t i;

    buf_init(&b, 0);
    /* ~120 bytes a candidate: one allocation for a typical list. */
    if (buf_reserve(&b, n < SIZE_MAX / 256 ? 128 * n + 2 : 0) == -1 || PUT_LIT(&b, "[") == -1)
        goto fail;
    for (i = 0; i < n; i++)
        if ((i > 0 && PUT_LIT(&b, ",") == -1) || candidate_text(&b, &c[i]) == -1)
            goto fail;
    if (PUT_LIT(&b, "]") == -1)
        goto fail;
    if (len_out != NULL)
        *len_out = b.b_len;
    return b.b_data; /* NUL-terminated by buf_append */
fail:
    buf_free(&b);
    return NULL;
}
