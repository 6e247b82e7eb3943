/* test_conn_head.c -- the front door's request-head parser, fed good and malformed heads
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "conn_head.h"

/* Parses a copy in a buffer of exactly its length, so ASan sees any overread. */
static int
parse(const char *head, struct guard_head *gh, const char **why)
{
    size_t len = strlen(head);
    char *copy = malloc(len ? len : 1);
    int code;

    assert_non_null(copy);
    memcpy(copy, head, len);
    *why = NULL;
    code = conn_head_parse(copy, len, gh, why);
    if (code == 0) { /* gh points into copy: compare before freeing via a static copy */
        static char keep[8192];
        assert_true(len < sizeof(keep));
        memcpy(keep, copy, len);
        gh->gh_method = keep + (gh->gh_method - copy);
        gh->gh_path = keep + (gh->gh_path - copy);
        if (gh->gh_auth != NULL)
            gh->gh_auth = keep + (gh->gh_auth - copy);
    }
    free(copy);
    return code;
}

static void
test_webhook_head(void **state)
{
    struct guard_head gh;
    const char *why;

    (void)state;
    assert_int_equal(parse("POST /webhook?x=1 HTTP/1.1\r\nHost: a\r\n"
                           "authorization:  Bearer t0k \r\nContent-Length: 12\r\n\r\n",
                           &gh, &why),
                     0);
    assert_int_equal(gh.gh_method_len, 4);
    assert_memory_equal(gh.gh_method, "POST", 4);
    assert_int_equal(gh.gh_path_len, 8);
    assert_memory_equal(gh.gh_path, "/webhook", 8);
    assert_int_equal(gh.gh_auth_len, 10);
    assert_memory_equal(gh.gh_auth, "Bearer t0k", 10);
    assert_int_equal(gh.gh_content_length, 12);
}

static void
test_absolute_form_and_bare_lf(void **state)
{
    struct guard_head gh;
    const char *why;

    (void)state;
    assert_int_equal(parse("POST http://h:9808/webhook HTTP/1.1\nContent-Length: 1\n"
                           "Content-Length: 1\n\n",
                           &gh, &why),
                     0);
    assert_int_equal(gh.gh_path_len, 8);
    assert_memory_equal(gh.gh_path, "/webhook", 8);
    assert_int_equal(gh.gh_content_length, 1); /* identical duplicates count as one */
    assert_null(gh.gh_auth);
    assert_int_equal(parse("GET / HTTP/1.0\r\n\r\n", &gh, &why), 0);
    assert_int_equal(gh.gh_content_length, -1);
}

static void
test_malformed(void **state)
{
    static const struct {
        const char *head;
        int code;
        const char *why;
    } cases[] = {
        {"POST /webhook HTTP/1.1\r\nContent-Length: 10\r\ncontent-length: 11\r\n\r\n",
         400, "two Content-Length headers that differ"},
        {"POST /webhook HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400,
         "bad Content-Length"},
        {"POST /webhook HTTP/1.1\r\nContent-Length: 1 2\r\n\r\n", 400,
         "bad Content-Length"},
        {"POST /webhook HTTP/1.1\r\nContent-Length: +5\r\n\r\n", 400,
         "bad Content-Length"},
        {"POST /webhook HTTP/1.1\r\nContent-Length:\r\n\r\n", 400, "bad Content-Length"},
        {"POST /webhook HTTP/1.1\r\nContent-Length: 9999999999999999999\r\n\r\n", 400,
         "bad Content-Length"},
        {"POST /webhook HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 411, NULL},
        {"POST /webhook HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n",
         400, "both Transfer-Encoding and Content-Length"},
        {"POST /webhook HTTP/1.1\r\nX: a\r\n  folded\r\n\r\n", 400, NULL},
        {"POST /webhook HTTP/1.1\r\nContent-Length : 3\r\n\r\n", 400,
         "malformed header line"},
        {"POST /webhook HTTP/1.1\r\nno colon here\r\n\r\n", 400, "malformed header line"},
        {"POST /webhook HTTP/1.1\r\n: empty name\r\n\r\n", 400, "malformed header line"},
        {"\r\n\r\n", 400, "malformed request line"},
        {"POST /webhook\r\n\r\n", 400, "malformed request line"},
        {"POST  /webhook HTTP/1.1\r\n\r\n", 400, "malformed request line"},
        {"PO(T /webhook HTTP/1.1\r\n\r\n", 400, "malformed request line"},
        {"POST /webhook FTP/1.1\r\n\r\n", 400, "malformed request line"},
        {"POST /webhook HTTP/1", 400, "malformed request line"},
        {"", 400, "malformed request line"},
    };
    struct guard_head gh;
    const char *why;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int code = parse(cases[i].head, &gh, &why);
        if (code != cases[i].code)
            fail_msg("case %zu: got %d, want %d", i, code, cases[i].code);
        assert_non_null(why);
        if (cases[i].why != NULL)
            assert_string_equal(why, cases[i].why);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_webhook_head),
        cmocka_unit_test(test_absolute_form_and_bare_lf),
        cmocka_unit_test(test_malformed),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
