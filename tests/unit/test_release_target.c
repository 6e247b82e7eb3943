/* test_release_target.c -- RELEASE_ANNOTATION: what is accepted, and why each refusal */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "release_target.h"

struct good {
    const char *in;
    unsigned port;
    const char *path;
};

static const struct good goods[] = {
    {"8080/unload", 8080, "/unload"},
    {"8080/api/models/unload", 8080, "/api/models/unload"},
    {"1/", 1, "/"},
    {"65535/x", 65535, "/x"},
    {"11434/release", 11434, "/release"},
    {"80/a-b_c.d~e/f:g", 80, "/a-b_c.d~e/f:g"},
    {"80/v1/unload;all=1,now", 80, "/v1/unload;all=1,now"},
    {"80/.well-known/release", 80, "/.well-known/release"},
    {"80/azAZ09/v0.9", 80, "/azAZ09/v0.9"}, /* each range's first and last byte */
};

struct bad {
    const char *in;
    const char *why; /* a piece of the reason */
};

static const struct bad bads[] = {
    {"", "it is empty"},
    {"http://10.0.0.1:8080/unload", "names a scheme"},
    {"http://evil.example/unload", "names a scheme"},
    {"//evil.example/unload", "does not start with a port"},
    {"evil.example:80/unload", "does not start with a port"},
    {"127.0.0.1:80/unload", "after the port comes '.'"},
    {"8080.evil.example/x", "after the port comes '.'"},
    {"8080:9090/x", "after the port comes ':'"},
    {"user@8080/unload", "'@'"},
    {"8080/unload@evil.example", "'@'"},
    {"8080/un load", "whitespace"},
    {" 8080/unload", "whitespace"},
    {"8080/unload\n", "whitespace"},
    {"8080/unload\t", "whitespace"},
    {"8080/unload\r", "whitespace"},
    {"8080/un\vload", "whitespace"},
    {"8080/un\fload", "whitespace"},
    {"8080/un\x01load", "control character (\\x01)"},
    {"8080/un\x7fload", "control character (\\x7f)"},
    {"8080/\xc3\xa9", "non-ASCII"},
    {"8080/a\x80", "non-ASCII"}, /* the first byte past ASCII */
    {"8080/../admin", "'..'"},
    {"8080/a/..", "'..'"},
    {"8080/a..b", "'..'"},
    {"8080//evil", "empty segment"},
    {"8080/a\\b", "backslash"},
    {"8080/%2e%2e/admin", "percent-escape"},
    {"8080/unload?all=1", "query or fragment ('?')"},
    {"8080/unload#x", "query or fragment ('#')"},
    {"8080/a\"b", "'\"', which a path may not hold"},
    {"8080/a<b>", "'<', which a path may not hold"},
    {"8080/a[b]", "'[', which a path may not hold"},
    {"8080/a|b", "'|', which a path may not hold"},
    {"8080/a{b}", "'{', which a path may not hold"},
    {"8080/a^b", "'^', which a path may not hold"},
    {"8080/a`b", "'`', which a path may not hold"},
    {"0/unload", "port 0 is out of range"},
    {"65536/unload", "port 65536 is out of range"},
    {"99999/unload", "port 99999 is out of range"},
    {"123456/unload", "more than 5 digits"},
    {"08080/unload", "leading zero"},
    {"+8080/unload", "does not start with a port"},
    {"-1/unload", "does not start with a port"},
    {"8080", "no path after the port"},
    {"/unload", "does not start with a port"},
    {"unload", "does not start with a port"},
    {"true", "does not start with a port"},
};

static void
test_accepted(void **state)
{
    struct release_target t;
    char err[256];

    for (size_t i = 0; i < sizeof(goods) / sizeof(goods[0]); i++) {
        err[0] = '\0';
        if (release_annotation_parse(goods[i].in, &t, err, sizeof(err)) != 0)
            fail_msg("\"%s\" refused: %s", goods[i].in, err);
        assert_int_equal(t.rt_port, goods[i].port);
        assert_string_equal(t.rt_path, goods[i].path);
    }
}

static void
test_refused(void **state)
{
    struct release_target t;
    char err[256];

    for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
        err[0] = '\0';
        memset(&t, 0x55, sizeof(t));
        if (release_annotation_parse(bads[i].in, &t, err, sizeof(err)) != -1)
            fail_msg("\"%s\" accepted as port %u path %s", bads[i].in, t.rt_port,
                     t.rt_path);
        if (strstr(err, bads[i].why) == NULL)
            fail_msg("\"%s\": reason \"%s\" lacks \"%s\"", bads[i].in, err, bads[i].why);
        assert_int_equal(t.rt_port, 0); /* nothing half-filled */
        assert_string_equal(t.rt_path, "");
    }
}

/* The length bound, at the boundary. */
static void
test_length(void **state)
{
    char v[RELEASE_ANNOTATION_MAX + 2], err[256];
    struct release_target t;

    memset(v, 'a', sizeof(v));
    memcpy(v, "80/", 3);
    v[RELEASE_ANNOTATION_MAX] = '\0';
    assert_int_equal(release_annotation_parse(v, &t, err, sizeof(err)), 0);
    assert_int_equal(strlen(t.rt_path), RELEASE_ANNOTATION_MAX - 2);
    v[RELEASE_ANNOTATION_MAX] = 'a';
    v[RELEASE_ANNOTATION_MAX + 1] = '\0';
    assert_int_equal(release_annotation_parse(v, &t, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "longer than 256 bytes"));
    assert_int_equal(release_annotation_parse(NULL, &t, err, sizeof(err)), -1);
    /* no error buffer: refused all the same, nothing written */
    assert_int_equal(release_annotation_parse("8080/a b", &t, NULL, sizeof(err)), -1);
    assert_non_null(strstr(err, "empty"));
}

static void
test_url(void **state)
{
    struct release_target t;
    char url[RELEASE_URL_MAX], err[256];

    assert_int_equal(
        release_annotation_parse("8080/api/models/unload", &t, err, sizeof(err)), 0);
    assert_int_equal(release_url("10.42.0.17", &t, url, sizeof(url), err, sizeof(err)),
                     0);
    assert_string_equal(url, "http://10.42.0.17:8080/api/models/unload");
    /* A buffer one byte short of the URL: refused, never sent cut. */
    assert_int_equal(release_url("10.42.0.17", &t, url,
                                 strlen("http://10.42.0.17:8080/api/models/unload"), err,
                                 sizeof(err)),
                     -1);
    assert_string_equal(err, "the release URL is too long");
    assert_int_equal(release_url("fd00::17", &t, url, sizeof(url), err, sizeof(err)), 0);
    assert_string_equal(url, "http://[fd00::17]:8080/api/models/unload");
    /* Only an IP literal: never a name to resolve. */
    assert_int_equal(release_url("evil.example", &t, url, sizeof(url), err, sizeof(err)),
                     -1);
    assert_non_null(strstr(err, "not an IP address"));
    assert_int_equal(release_url("10.0.0.1:80", &t, url, sizeof(url), err, sizeof(err)),
                     -1);
    assert_int_equal(release_url("fe80::1%eth0", &t, url, sizeof(url), err, sizeof(err)),
                     -1);
    assert_int_equal(release_url("", &t, url, sizeof(url), err, sizeof(err)), -1);
    assert_non_null(strstr(err, "no IP"));
    assert_int_equal(release_url(NULL, &t, url, sizeof(url), err, sizeof(err)), -1);
    /* The longest path still fits. */
    memset(t.rt_path, 'a', RELEASE_ANNOTATION_MAX);
    t.rt_path[0] = '/';
    t.rt_path[RELEASE_ANNOTATION_MAX] = '\0';
    t.rt_port = 65535;
    assert_int_equal(release_url("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", &t, url,
                                 sizeof(url), err, sizeof(err)),
                     0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accepted),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_length),
        cmocka_unit_test(test_url),
    };

    return cmocka_run_group_tests_name("release_target", tests, NULL, NULL);
}
