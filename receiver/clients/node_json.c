/* node_json.c -- a v1 Node's advertised capacity of one extended resource
 *
 * One pass with the jscan pull reader down status.capacity[resource]; the
 * rest of the Node (labels, images, conditions) is only checked and skipped. */
#include "node_json.h"

#include <stdio.h>
#include <string.h>

#include "jscan.h"
#include "quantity.h"

#define VALUE_MAX 64 /* a quantity longer than this is not one we advertised */

/* What the walk found, judged when the document is read whole. */
struct cap_walk {
    struct js_scan cw_s;
    const char *cw_resource;
    int cw_found;
    int64_t cw_mib;
    char cw_why[256]; /* a shape error; "" when none */
};

static int
shape(struct cap_walk *w, const char *why)
{
    if (w->cw_why[0] == '\0')
        snprintf(w->cw_why, sizeof(w->cw_why), "%s", why);
    return 0; /* keep walking: the rest must still be JSON */
}

/* capacity: {"cpu":"8", "<resource>":"14k", ...} */
static int
read_capacity(struct cap_walk *w)
{
    struct js_scan *s = &w->cw_s;
    struct js_str key, val;
    char text[VALUE_MAX + 1], qerr[128], why[256];
    unsigned seen = 0;
    int rc;

    if (js_peek(s) != JS_OBJECT)
        return js_peek(s) == JS_ERROR
                   ? -1
                   : (shape(w, "status.capacity is not an object"), js_skip(s));
    if (js_object_begin(s) == -1)
        return -1;
    while ((rc = js_object_next(s, &key)) == 1) {
        if (!js_str_eq(&key, w->cw_resource)) {
            if (js_skip(s) == -1)
                return -1;
            continue;
        }
        if (js_once(s, &seen, 1, w->cw_resource) == -1)
            return -1;
        if (js_peek(s) != JS_STRING) {
            if (js_skip(s) == -1)
                return -1;
            snprintf(why, sizeof(why), "status.capacity[\"%s\"] is not a string",
                     w->cw_resource);
            shape(w, why);
            continue;
        }
        if (js_string(s, &val) == -1)
            return -1;
        if (js_str_copy(&val, text, sizeof(text)) >= sizeof(text) ||
            quantity_parse(text, &w->cw_mib, qerr, sizeof(qerr)) == -1) {
            snprintf(why, sizeof(why), "status.capacity[\"%s\"] is not a quantity",
                     w->cw_resource);
            shape(w, why);
        } else if (w->cw_mib < 0) {
            snprintf(why, sizeof(why), "status.capacity[\"%s\"] is negative",
                     w->cw_resource);
            shape(w, why);
        } else {
            w->cw_found = 1;
        }
    }
    return rc;
}

/* status: {..., "capacity": {...}, ...} */
static int
read_status(struct cap_walk *w)
{
    struct js_scan *s = &w->cw_s;
    struct js_str key;
    unsigned seen = 0;
    int rc;

    if (js_peek(s) == JS_NULL)
        return js_skip(s);
    if (js_peek(s) != JS_OBJECT)
        return js_peek(s) == JS_ERROR ? -1
                                      : (shape(w, "status is not an object"), js_skip(s));
    if (js_object_begin(s) == -1)
        return -1;
    while ((rc = js_object_next(s, &key)) == 1) {
        if (!js_str_eq(&key, "capacity"))
            rc = js_skip(s);
        else if ((rc = js_once(s, &seen, 1, "capacity")) == 0)
            rc = js_peek(s) == JS_NULL ? js_skip(s) : read_capacity(w);
        if (rc == -1)
            return -1;
    }
    return rc;
}

int
node_json_capacity(const char *body, size_t len, const char *resource,
                   enum node_capacity_state *state, int64_t *mib, char *err,
                   size_t errlen)
{
    struct cap_walk w;
    struct js_str key;
    unsigned seen = 0;
    int rc;

    memset(&w, 0, sizeof(w));
    w.cw_resource = resource;
    js_init(&w.cw_s, body, len);
    if (js_object_begin(&w.cw_s) == -1) {
        snprintf(err, errlen, "cannot read the Node: %s", w.cw_s.js_err);
        return -1;
    }
    while ((rc = js_object_next(&w.cw_s, &key)) == 1) {
        if (!js_str_eq(&key, "status"))
            rc = js_skip(&w.cw_s);
        else if ((rc = js_once(&w.cw_s, &seen, 1, "status")) == 0)
            rc = read_status(&w);
        if (rc == -1)
            break;
    }
    if (rc == -1 || js_end(&w.cw_s) == -1) {
        snprintf(err, errlen, "cannot read the Node: %s", w.cw_s.js_err);
        return -1;
    }
    if (w.cw_why[0] != '\0') {
        snprintf(err, errlen, "%s", w.cw_why);
        return -1;
    }
    *state = w.cw_found ? NODE_CAPACITY_OK : NODE_CAPACITY_ABSENT;
    if (w.cw_found)
        *mib = w.cw_mib;
    return 0;
}
