/* selector.c -- query strings and label/field selectors, read as the API server does */
#include "selector.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static int
hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = tolower(c);
    return (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
}

int
query_get(const char *query, const char *key, char *buf, size_t len)
{
    size_t klen = strlen(key), o;
    const char *p = query, *end;

    while (p != NULL && *p != '\0') {
        end = strchr(p, '&');
        if (end == NULL)
            end = p + strlen(p);
        if ((size_t)(end - p) >= klen && strncmp(p, key, klen) == 0 &&
            (p[klen] == '=' || p + klen == end)) {
            p += klen + (p[klen] == '=');
            for (o = 0; p < end; o++) {
                if (o + 1 >= len)
                    return -1;
                if (*p == '+') {
                    buf[o] = ' ';
                    p++;
                } else if (*p == '%' && p + 2 < end + 1 && hexval(p[1]) >= 0 &&
                           hexval(p[2]) >= 0) {
                    buf[o] = (char)(hexval(p[1]) * 16 + hexval(p[2]));
                    p += 3;
                } else {
                    buf[o] = *p++;
                }
            }
            buf[o] = '\0';
            return 1;
        }
        p = *end == '&' ? end + 1 : end;
    }
    return 0;
}

int
label_lookup(const void *labels, const char *key, const char **val)
{
    json_t *v = labels ? json_object_get((const json_t *)labels, key) : NULL;

    *val = json_string_value(v);
    return *val != NULL;
}

static char *
trim(char *s)
{
    char *e;

    while (isspace((unsigned char)*s))
        s++;
    e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

/*
 * Evaluates a selector ("k=v", "k==v", "k!=v", and for labels "k", "!k",
 * comma-separated, all must hold) against obj. 1 match, 0 no match, -1 with
 * err set for syntax the sim does not support or an unknown field.
 */
int
selector_match(const char *sel, int is_field, lookup_fn lookup, const void *obj,
               char *err, size_t errlen)
{
    char copy[MAX_SELECTOR], *term, *save = NULL, *key, *val, *op;
    const char *have;
    int neg, found, match = 1;

    if (snprintf(copy, sizeof(copy), "%s", sel) >= (int)sizeof(copy)) {
        snprintf(err, errlen, "selector too long");
        return -1;
    }
    for (term = strtok_r(copy, ",", &save); term != NULL;
         term = strtok_r(NULL, ",", &save)) {
        term = trim(term);
        if (*term == '\0')
            continue;
        if (strchr(term, '(') != NULL || strchr(term, ' ') != NULL) {
            snprintf(err, errlen,
                     "unable to parse requirement: the sim supports only k=v, "
                     "k==v, k!=v, k and !k: \"%s\"",
                     term);
            return -1;
        }
        neg = 0;
        val = NULL;
        op = strstr(term, "!=");
        if (op != NULL) {
            neg = 1;
            *op = '\0';
            val = op + 2;
        } else if ((op = strchr(term, '=')) != NULL) {
            *op = '\0';
            val = op + 1 + (op[1] == '=');
        } else if (is_field) {
            snprintf(err, errlen, "invalid selector: '%s'; can't understand '%s'", sel,
                     term);
            return -1;
        } else if (term[0] == '!') {
            neg = 1;
            term++;
        }
        key = trim(term);
        if (val != NULL)
            val = trim(val);
        found = lookup(obj, key, &have);
        if (found < 0) {
            snprintf(err, errlen, "field label not supported: %s", key);
            return -1;
        }
        if (obj == NULL)
            continue;
        if (val == NULL)
            match &= neg ? !found : found;
        else
            match &= neg ? !(found && strcmp(have, val) == 0)
                         : (found && strcmp(have, val) == 0);
    }
    return match;
}
