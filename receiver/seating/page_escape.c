/* page_escape.c -- HTML escaping for every string the seating page shows */
#include "page_escape.h"

#include <string.h>

int
page_html_escape(struct buf *out, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        const char *rep = *p == '&'                 ? "&amp;"
                          : *p == '<'               ? "&lt;"
                          : *p == '>'               ? "&gt;"
                          : *p == '"'               ? "&quot;"
                          : *p == '\''              ? "&#39;"
                          : *p < 0x20 || *p == 0x7f ? "?"
                                                    : NULL;
        if ((rep ? buf_append(out, rep, strlen(rep)) : buf_append(out, p, 1)) == -1)
            return -1;
    }
    return 0;
}
