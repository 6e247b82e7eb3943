/* test_kube_event.c -- the Event body: reasons by result, MicroTime, the API server's
 * length limits */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "kube_event.h"

static json_t *
build(const struct kube_event *ev)
{
    char *s = kube_event_json(ev);
    json_t *j;

    assert_non_null(s);
    j = json_loads(s, 0, NULL);
    free(s);
    assert_non_null(j);
    return j;
}

static const char *
str(json_t *o, const char *path1, const char *path2)
{
    json_t *v = json_object_get(o, path1);

    if (path2 != NULL)
        v = json_object_get(v, path2);
    assert_true(json_is_string(v));
    return json_string_value(v);
}

static void
test_reasons(void **state)
{
    (void)state;
    assert_string_equal(kube_event_reason(RESULT_RECYCLED), "GPUVRAMRecycled");
    assert_string_equal(kube_event_reason(RESULT_RELEASED), "GPUVRAMReleased");
    assert_string_equal(kube_event_reason(RESULT_WOULD_RECYCLE), "GPUVRAMWouldRecycle");
    assert_string_equal(kube_event_reason(RESULT_BLOCKED), "GPUVRAMRecycleBlocked");
    assert_string_equal(kube_event_reason(RESULT_FAILED), "GPUVRAMRecycleFailed");
    assert_null(kube_event_reason(RESULT_RATE_LIMITED));
    assert_null(kube_event_reason(RESULT_COALESCED));
    assert_null(kube_event_reason(RESULT_SKIPPED_NO_CANDIDATE));
    assert_null(kube_event_reason(RESULT_SKIPPED_RECOVERED));
    assert_null(kube_event_reason(RESULT_SKIPPED_TELEMETRY));
    assert_null(kube_event_reason(RESULT_SKIPPED_KUBE));
    assert_null(kube_event_reason(RESULT_IN_PROGRESS));
    assert_null(kube_event_reason(RESULT_COUNT)); /* out of range */
}

static void
test_body(void **state)
{
    struct kube_event ev = {"immich",
                            "immich-ml-0",
                            "uid-1",
                            "GPUVRAMRecycled",
                            "evict",
                            "immich/immich-ml-0 is over its budget",
                            42,
                            "gvw-0",
                            1780394404123456LL};
    json_t *j;

    (void)state;
    j = build(&ev);
    assert_string_equal(str(j, "eventTime", NULL), "2026-06-02T10:00:04.123456Z");
    assert_string_equal(str(j, "note", NULL),
                        "immich/immich-ml-0 is over its budget (audit 42)");
    assert_string_equal(str(j, "metadata", "namespace"), "immich");
    assert_string_equal(str(j, "metadata", "name"), "immich-ml-0.6534260049340002a");
    assert_string_equal(str(j, "regarding", "uid"), "uid-1");
    assert_string_equal(str(j, "regarding", "kind"), "Pod");
    assert_string_equal(str(j, "regarding", "apiVersion"), "v1");
    assert_string_equal(str(j, "type", NULL), "Warning");
    json_decref(j);
    /* No UID known: regarding leaves it out rather than sending "". */
    ev.ke_uid = NULL;
    j = build(&ev);
    assert_null(json_object_get(json_object_get(j, "regarding"), "uid"));
    json_decref(j);
}

/* The longest pod name, a note past 1 KiB with multi-byte characters at the
 * cut, a hostname past 128: the API server's limits hold, the audit id stays. */
static void
test_limits(void **state)
{
    char pod[254], note[3000], host[300];
    struct kube_event ev = {"ns", pod,    "u",  "GPUVRAMRecycleFailed", "evict",
                            note, 123456, host, 1780394404000000LL};
    const char *name, *n;
    json_t *j;
    size_t len;

    (void)state;
    memset(pod, 'a', 253);
    pod[200] = '-'; /* a cut right after a dash must not end the name with it */
    pod[253] = '\0';
    memset(note, 0, sizeof(note)); /* the pairs may stop short of the end */
    for (size_t i = 0; i + 2 < sizeof(note); i += 2)
        memcpy(note + i, "\xc3\xa9", 2); /* é */
    memset(host, 'h', sizeof(host) - 1);
    host[sizeof(host) - 1] = '\0';
    j = build(&ev);
    name = str(j, "metadata", "name");
    assert_true(strlen(name) <= 253);
    assert_true(strchr(name, '.') != NULL && strchr(name, '.')[-1] != '-');
    n = str(j, "note", NULL);
    len = strlen(n);
    assert_true(len <= KUBE_EVENT_NOTE_MAX);
    assert_string_equal(n + len - strlen(" (audit 123456)"), " (audit 123456)");
    assert_int_equal(
        ((unsigned char)n[len - strlen(" (audit 123456)") - 1] & 0xC0) != 0xC0, 1);
    assert_int_equal(strlen(str(j, "reportingInstance", NULL)), KUBE_EVENT_FIELD_MAX);
    json_decref(j);
}

/* Text the API server would refuse as a string (bytes that are not UTF-8: a
 * quoted message cut mid-character, a stray byte) still makes a valid Event,
 * the bad bytes shown as '?', the required fields all there. */
static void
test_not_utf8(void **state)
{
    struct kube_event ev = {"ns",
                            "p-0",
                            "u",
                            "GPUVRAMRecycleBlocked",
                            "evict",
                            "refused: caf\xc3 \xff budget \xe2\x82",
                            7,
                            "host\xfe",
                            1780394404000001LL};
    static const char *const required[] = {
        "reportingController", "reportingInstance", "action", "reason", "type", "note"};
    json_t *j;

    (void)state;
    j = build(&ev);
    assert_string_equal(str(j, "note", NULL), "refused: caf? ? budget ?? (audit 7)");
    assert_string_equal(str(j, "reportingInstance", NULL), "host?");
    for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
        assert_true(strlen(str(j, required[i], NULL)) > 0);
    assert_string_equal(str(j, "eventTime", NULL), "2026-06-02T10:00:04.000001Z");
    assert_string_equal(str(j, "regarding", "name"), "p-0");
    assert_string_equal(str(j, "regarding", "namespace"), "ns");
    json_decref(j);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reasons),
        cmocka_unit_test(test_body),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_not_utf8),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
