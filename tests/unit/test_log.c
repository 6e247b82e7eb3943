/* test_log.c -- log records: one valid JSON object a line, whatever the values */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/terminal_safe.h"
#include "log.h"

/* Runs fn with stderr sent to a temporary file and returns what it wrote. */
static char *
capture(void (*fn)(void))
{
    char path[] = "/tmp/gvw-test-log-XXXXXX";
    int fd = mkstemp(path), saved = dup(STDERR_FILENO);
    char *text;
    off_t n;

    assert_true(fd >= 0 && saved >= 0);
    unlink(path);
    dup2(fd, STDERR_FILENO);
    fn();
    dup2(saved, STDERR_FILENO);
    close(saved);
    n = lseek(fd, 0, SEEK_END);
    text = calloc(1, (size_t)n + 1);
    assert_non_null(text);
    assert_int_equal(pread(fd, text, (size_t)n, 0), n);
    close(fd);
    return text;
}

/* Checks every line of text is a JSON object and returns how many. */
static size_t
json_lines(char *text, json_t **last)
{
    size_t count = 0;

    for (char *line = strtok(text, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        json_error_t err;
        json_t *obj = json_loads(line, 0, &err);
        if (!json_is_object(obj))
            fail_msg("not a JSON object (%s): %.200s", err.text, line);
        json_decref(*last);
        *last = obj;
        count++;
    }
    return count;
}

static void
log_awkward(void)
{
    log_init(LOG_FORMAT_JSON, LOG_LEVEL_INFO);
    log_event(LOG_LEVEL_INFO, "quote \" backslash \\ newline \n tab \t bell \a", "key",
              "\x01\x1f value \"x\"", "empty", "", "null", (char *)NULL, (char *)NULL);
    log_debug("%s", "below the level: not written");
    log_warn("%s: failing on purpose", "log_awkward");
}

static void
test_awkward_values_stay_json(void **state)
{
    char *text = capture(log_awkward);
    json_t *last = NULL;

    assert_int_equal(json_lines(text, &last), 2);
    assert_string_equal(json_string_value(json_object_get(last, "level")), "warn");
    assert_non_null(strstr(json_string_value(json_object_get(last, "msg")),
                           "log_awkward: failing on purpose: "));
    json_decref(last);
    free(text);
}

static void
log_broken_utf8(void)
{
    log_init(LOG_FORMAT_JSON, LOG_LEVEL_INFO);
    /* A client's text cut mid-character, a stray continuation byte, an
     * overlong form, a surrogate, and good UTF-8 around them. */
    log_event(LOG_LEVEL_WARN, "rejected", "error", "status '\xc3\xa9\xc3' x", "b",
              "\x80\xc0\xaf\xed\xa0\x80 caf\xc3\xa9 \xf0\x9f\x98\x80", (char *)NULL);
}

/* jansson (the test's reader) refuses invalid UTF-8: the lines load only if
 * the logger replaced each bad byte, and kept the good characters. */
static void
test_broken_utf8_stays_json(void **state)
{
    char *text = capture(log_broken_utf8);
    json_t *last = NULL;

    assert_int_equal(json_lines(text, &last), 1);
    assert_string_equal(json_string_value(json_object_get(last, "error")),
                        "status '\xc3\xa9?' x");
    assert_string_equal(json_string_value(json_object_get(last, "b")),
                        "?????? caf\xc3\xa9 \xf0\x9f\x98\x80");
    json_decref(last);
    free(text);
}

static char huge[64 * 1024];

static void
log_huge(void)
{
    memset(huge, 'x', sizeof(huge) - 1);
    /* A multi-byte character straddles the cut point. */
    memcpy(huge + 4094, "\xc3\xa9\xc3\xa9", 4);
    log_init(LOG_FORMAT_JSON, LOG_LEVEL_INFO);
    log_event(LOG_LEVEL_INFO, "huge", "a", huge, "b", huge, "c", huge, "d", huge, "e",
              huge, "tail", "kept?", (char *)NULL);
    /* Control bytes escape six-fold: the line must still close. */
    memset(huge, '\x01', sizeof(huge) - 1);
    log_event(LOG_LEVEL_INFO, "controls", "a", huge, "b", huge, "c", huge, (char *)NULL);
}

static void
test_huge_values_are_cut_not_broken(void **state)
{
    char *text = capture(log_huge);
    json_t *last = NULL;
    size_t lines;

    lines = json_lines(text, &last);
    assert_int_equal(lines, 2);
    assert_string_equal(json_string_value(json_object_get(last, "msg")), "controls");
    json_decref(last);
    free(text);
}

static void
log_text(void)
{
    log_init(LOG_FORMAT_TEXT, LOG_LEVEL_DEBUG);
    log_event(LOG_LEVEL_INFO, "decision", "node", "gpu-node-1", "result", "recycled",
              (char *)NULL);
    log_debug("%s", "debug shown");
    log_init(LOG_FORMAT_JSON, LOG_LEVEL_INFO);
}

static void
test_text_format(void **state)
{
    char *text = capture(log_text);

    assert_non_null(strstr(text, " info  decision node=gpu-node-1 result=recycled\n"));
    assert_non_null(strstr(text, " debug debug shown\n"));
    free(text);
}

/* An alertname (a webhook's label) that tries to forge a line, recolour the
 * terminal and reverse what follows. */
static const char forged[] = "GPUVRAMLow\n2026-06-02T10:00:00.000Z info  decision "
                             "node=gpu-1 result=recycled\x1b[31m \xc2\x9b"
                             "2J\xe2\x80\xae"
                             "deyalp\xe2\x80\xa8x\x7f\x9b";

static void
log_text_hostile(void)
{
    log_init(LOG_FORMAT_TEXT, LOG_LEVEL_INFO);
    log_event(LOG_LEVEL_INFO, "alert recorded", "alertname", forged, "status", "firing",
              "empty", "", "spaced", "a b=c \"d\"", (char *)NULL);
    log_warnx("intake: %s", forged);
    log_init(LOG_FORMAT_JSON, LOG_LEVEL_INFO);
}

/* LOG_FORMAT=text: one record, one line, whatever a value holds; controls
 * and bidi overrides show as escapes; a value with a space is quoted. */
static void
test_text_values_cannot_forge_lines(void **state)
{
    char *text = capture(log_text_hostile), *nl;
    size_t lines = 0;

    (void)state;
    for (nl = text; (nl = strchr(nl, '\n')) != NULL; nl++)
        lines++;
    assert_int_equal(lines, 2);
    assert_true(terminal_safe(text));
    assert_non_null(strstr(text,
                           " alertname=\"GPUVRAMLow\\n2026-06-02T10:00:00.000Z info  "
                           "decision node=gpu-1 result=recycled\\x1b[31m \\u{009B}2J"
                           "\\u{202E}deyalp\\u{2028}x\\x7f\\x9b\" status=firing "
                           "empty=\"\" spaced=\"a b=c \\\"d\\\"\"\n"));
    assert_non_null(strstr(text, " warn  intake: GPUVRAMLow\\n2026-"));
    free(text);
}

static void
log_json_hostile(void)
{
    log_init(LOG_FORMAT_JSON, LOG_LEVEL_INFO);
    log_event(LOG_LEVEL_INFO, "alert recorded", "alertname", forged, "tag",
              "\xf3\xa0\x81\x81", (char *)NULL);
}

/* JSON lines: the same text reads back exactly, yet the line itself holds
 * no raw C1, bidi override or line separator (`kubectl logs` shows it). */
static void
test_json_escapes_terminal_controls(void **state)
{
    char *text = capture(log_json_hostile), *copy = strdup(text);
    json_t *last = NULL;

    (void)state;
    assert_non_null(copy);
    assert_true(terminal_safe(copy));
    assert_non_null(strstr(copy, "\\u202e"));
    assert_int_equal(json_lines(text, &last), 1);
    /* The invalid byte at the end reads back as '?' (it always did). */
    assert_memory_equal(json_string_value(json_object_get(last, "alertname")), forged,
                        sizeof(forged) - 2);
    assert_string_equal(json_string_value(json_object_get(last, "tag")),
                        "\xf3\xa0\x81\x81");
    json_decref(last);
    free(copy);
    free(text);
}

static void
log_text_huge(void)
{
    log_init(LOG_FORMAT_TEXT, LOG_LEVEL_INFO);
    memset(huge, '\x1b', sizeof(huge) - 1); /* escapes four-fold */
    log_event(LOG_LEVEL_INFO, "huge", "a", huge, "b", huge, "c", huge, "d", huge, "e",
              huge, "tail", "kept?", (char *)NULL);
    log_init(LOG_FORMAT_JSON, LOG_LEVEL_INFO);
}

/* A text line is bounded and cut between escapes, never inside one. */
static void
test_text_huge_values_are_cut_between_escapes(void **state)
{
    char *text = capture(log_text_huge), *p;

    (void)state;
    assert_true(strlen(text) <= 16384);
    assert_ptr_equal(strchr(text, '\n'), text + strlen(text) - 1);
    p = strstr(text, " a=");
    assert_non_null(p);
    p += 3;
    while (strncmp(p, "\\x1b", 4) == 0)
        p += 4;
    assert_true(strncmp(p, "... ", 4) == 0);
    free(text);
}

/* Held lines: nothing reaches stderr until log_release(); then every line,
 * whole and in order, even when they overflow the hold buffer. */
static int held_seen_before_release = -1;

static void
log_held_burst(void)
{
    off_t before;

    log_init(LOG_FORMAT_JSON, LOG_LEVEL_INFO);
    before = lseek(STDERR_FILENO, 0, SEEK_CUR);
    log_hold();
    for (int i = 0; i < 3; i++)
        log_event(LOG_LEVEL_INFO, "held", "seq",
                  i == 0   ? "0"
                  : i == 1 ? "1"
                           : "2",
                  (char *)NULL);
    held_seen_before_release = lseek(STDERR_FILENO, 0, SEEK_CUR) != before;
    log_release();
}

static void
test_held_lines_come_out_at_release(void **state)
{
    char *text = capture(log_held_burst);
    json_t *last = NULL;

    (void)state;
    assert_int_equal(held_seen_before_release, 0);
    assert_non_null(strstr(text, "\"seq\":\"0\""));
    assert_true(strstr(text, "\"seq\":\"0\"") < strstr(text, "\"seq\":\"1\""));
    assert_true(strstr(text, "\"seq\":\"1\"") < strstr(text, "\"seq\":\"2\""));
    assert_int_equal(json_lines(text, &last), 3);
    json_decref(last);
    free(text);
}

static void
log_held_overflow(void)
{
    char big[3000], seq[16];

    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    log_init(LOG_FORMAT_JSON, LOG_LEVEL_INFO);
    log_hold();
    for (int i = 0; i < 100; i++) { /* ~300 KB: many times the hold buffer */
        snprintf(seq, sizeof(seq), "%d", i);
        log_event(LOG_LEVEL_INFO, "held", "seq", seq, "pad", big, (char *)NULL);
    }
    log_release();
    log_event(LOG_LEVEL_INFO, "after", (char *)NULL); /* not held any more */
}

static void
test_held_overflow_keeps_every_line_in_order(void **state)
{
    char *text = capture(log_held_overflow);
    json_t *last = NULL, *obj;
    int expect = 0;

    (void)state;
    for (char *line = strtok(text, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        obj = json_loads(line, 0, NULL);
        assert_true(json_is_object(obj));
        if (expect < 100) {
            char want[16];
            snprintf(want, sizeof(want), "%d", expect);
            assert_string_equal(json_string_value(json_object_get(obj, "seq")), want);
            assert_int_equal(strlen(json_string_value(json_object_get(obj, "pad"))),
                             2999);
        } else {
            assert_string_equal(json_string_value(json_object_get(obj, "msg")), "after");
        }
        expect++;
        json_decref(obj);
    }
    assert_int_equal(expect, 101);
    json_decref(last);
    free(text);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_awkward_values_stay_json),
        cmocka_unit_test(test_huge_values_are_cut_not_broken),
        cmocka_unit_test(test_text_format),
        cmocka_unit_test(test_text_values_cannot_forge_lines),
        cmocka_unit_test(test_json_escapes_terminal_controls),
        cmocka_unit_test(test_text_huge_values_are_cut_between_escapes),
        cmocka_unit_test(test_broken_utf8_stays_json),
        cmocka_unit_test(test_held_lines_come_out_at_release),
        cmocka_unit_test(test_held_overflow_keeps_every_line_in_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
