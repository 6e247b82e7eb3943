/* expo.c -- Prometheus text exposition (format 0.0.4): headers, escaped labels, samples
 */
#include "expo.h"

#include <string.h>

#include "utf8.h"

int
expo_header(struct buf *out, const char *name, const char *type, const char *help)
{
    return buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

int
expo_escape(struct buf *out, const char *v)
{
    size_t n = strlen(v), k;

    for (const char *p = v; *p; p += k) {
        const char *rep = NULL;
        size_t rlen = 2;
        k = 1;
        if (*p == '\\')
            rep = "\\\\";
        else if (*p == '"')
            rep = "\\\"";
        else if (*p == '\n')
            rep = "\\n";
        else if ((unsigned char)*p >= 0x80 &&
                 (k = utf8_char_len(p, n - (size_t)(p - v))) == 0)
            rep = UTF8_REPLACEMENT, rlen = 3, k = 1; /* the exposition is UTF-8 */
        if ((rep ? buf_append(out, rep, rlen) : buf_append(out, p, k)) == -1)
            return -1;
    }
    return 0;
}

int
expo_sample(struct buf *out, const char *name, const struct expo_label *labels,
            size_t nlabels, double value)
{
    if (buf_append(out, name, strlen(name)) == -1)
        return -1;
    for (size_t i = 0; i < nlabels; i++) {
        const char *v = labels[i].el_value ? labels[i].el_value : "";
        if (buf_printf(out, "%s%s=\"", i == 0 ? "{" : ",", labels[i].el_name) == -1 ||
            expo_escape(out, v) == -1 || buf_append(out, "\"", 1) == -1)
            return -1;
    }
    return buf_printf(out, "%s %.17g\n", nlabels > 0 ? "}" : "", value);
}
