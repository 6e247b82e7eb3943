/* page_text.c -- the text every part of the seating page writes: names HTML-escaped,
 * times in UTC */
#include "page_text.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

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

void
page_html_utc(int64_t ms, char *buf, size_t len)
{
    time_t sec = (time_t)(ms / 1000);
    struct tm tm;

    if (gmtime_r(&sec, &tm) == NULL || strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm) == 0)
        snprintf(buf, len, "?");
}
