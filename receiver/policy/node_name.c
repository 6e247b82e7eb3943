/* node_name.c -- what may name a Kubernetes node, and how a name that may not is shown */
#include "node_name.h"

#include <stdio.h>
#include <string.h>

#define LABEL_MAX 63
#define SHOWN_BYTES 64

static int
alnum(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

int
node_name_ok(const char *s)
{
    size_t i, len, label = 0;

    if (s == NULL || (len = strnlen(s, NODE_NAME_MAX + 1)) == 0 || len > NODE_NAME_MAX)
        return 0;
    for (i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '.') {
            /* A label ends here: it must have ended alphanumeric (and so be
             * non-empty), and the next must start so. */
            if (label == 0 || !alnum((unsigned char)s[i - 1]))
                return 0;
            label = 0;
            continue;
        }
        if (!alnum(c) && c != '-')
            return 0;
        if (label == 0 && !alnum(c))
            return 0;
        if (++label > LABEL_MAX)
            return 0;
    }
    return alnum((unsigned char)s[len - 1]);
}

char *
node_name_show(const char *s, char *out, size_t len)
{
    size_t i, o = 0;
    int n;

    if (len == 0)
        return out;
    out[0] = '\0';
    if (s == NULL) {
        snprintf(out, len, "(none)");
        return out;
    }
    /* Room is checked per piece: a piece that does not fit ends the text. */
    if (len < 2)
        return out;
    out[o++] = '"';
    for (i = 0; i < SHOWN_BYTES && s[i] != '\0'; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
            if (o + 2 >= len)
                break;
            out[o++] = (char)c;
        } else {
            if (o + 5 >= len)
                break;
            n = snprintf(out + o, len - o, "\\x%02x", c);
            o += (size_t)n;
        }
    }
    if (o + 1 < len)
        out[o++] = '"';
    out[o] = '\0';
    if (s[i] != '\0' && o + 4 <= len) {
        memcpy(out + o, "...", 4);
        o += 3;
    }
    return out;
}
