/* store_json_text.c -- the candidates column written straight as JSON text (no jansson
 * tree) */
#include "store_json_text.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "json_str.h"

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

static int
candidate_text(struct buf *b, const struct store_candidate *c, const char *src)
{
    if (PUT_LIT(b, "{\"namespace\":") == -1 ||
        json_str_put(b, c->sc_namespace ? c->sc_namespace : "") == -1 ||
        PUT_LIT(b, ",\"pod\":") == -1 ||
        json_str_put(b, c->sc_pod ? c->sc_pod : "") == -1 ||
        PUT_LIT(b, ",\"used_mib\":") == -1 || put_int(b, c->sc_used_mib) == -1 ||
        PUT_LIT(b, ",\"budget_mib\":") == -1 ||
        (c->sc_has_budget ? put_int(b, c->sc_budget_mib) : PUT_LIT(b, "null")) == -1)
        return -1;
    if (src != NULL &&
        (PUT_LIT(b, ",\"budget_source\":") == -1 || json_str_put(b, src) == -1))
        return -1;
    if (c->sc_eligible)
        return PUT_LIT(b, ",\"eligible\":true,\"why_not\":null}");
    if (PUT_LIT(b, ",\"eligible\":false,\"why_not\":") == -1 ||
        (c->sc_why_not == NULL ? PUT_LIT(b, "null") : json_str_put(b, c->sc_why_not)) ==
            -1)
        return -1;
    return PUT_LIT(b, "}");
}

char *
store_candidates_text(const struct store_candidate *c, size_t n, size_t *len_out)
{
    return store_candidates_text_src(c, NULL, n, len_out);
}

char *
store_candidates_text_src(const struct store_candidate *c, const char *const *src,
                          size_t n, size_t *len_out)
{
    struct buf b;
    size_t i;

    buf_init(&b, 0);
    /* ~120 bytes a candidate: one allocation for a typical list. */
    if (buf_reserve(&b, n < SIZE_MAX / 256 ? 128 * n + 2 : 0) == -1 ||
        PUT_LIT(&b, "[") == -1)
        goto fail;
    for (i = 0; i < n; i++)
        if ((i > 0 && PUT_LIT(&b, ",") == -1) ||
            candidate_text(&b, &c[i], src ? src[i] : NULL) == -1)
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
