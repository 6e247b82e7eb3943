/* test_node_name.c -- what may name a node (DNS-1123 subdomain), and how what may not is
 * shown */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "node_name.h"

/* n bytes of 'a' with a dot every label+1 bytes. */
static void
name_of(char *buf, size_t n, size_t label)
{
    memset(buf, 'a', n);
    buf[n] = '\0';
    for (size_t i = label; i < n; i += label + 1)
        buf[i] = '.';
}

static void
test_names(void **state)
{
    static const char *const good[] = {
        "gpu-node-1",      "a",  "0", "node.example.com", "a-b-c", "1-2.3-4",
        "ip-10-0-0-1.ec2", "z9", /* each range's last byte */
    };
    static const char *const bad[] = {
        "",
        "=gpu-1",
        "gpu-1,metadata.namespace=x",
        "GPU-1",
        "gpu_1",
        "gpu 1",
        "-gpu",
        "gpu-",
        ".gpu",
        "gpu.",
        "gpu..1",
        "gpu.-1",
        "gpu-.1",
        "gpu%2d1",
        "gpu\n1",
        "gpu\xc3\xa9",
    };
    char buf[300];

    (void)state;
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        if (!node_name_ok(good[i]))
            fail_msg("refused %s", good[i]);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (node_name_ok(bad[i]))
            fail_msg("took %s", bad[i]);
    assert_false(node_name_ok(NULL));
    /* The bounds exactly: 253 bytes in all, 63 a label. */
    name_of(buf, 253, 63);
    assert_true(node_name_ok(buf));
    name_of(buf, 254, 63);
    assert_false(node_name_ok(buf));
    name_of(buf, 63, 63);
    assert_true(node_name_ok(buf));
    name_of(buf, 64, 64);
    assert_false(node_name_ok(buf));
    name_of(buf, 130, 64); /* 64, dot, 65 */
    assert_false(node_name_ok(buf));
}

static void
test_show(void **state)
{
    char out[NODE_NAME_SHOWN], big[200], small[8];

    (void)state;
    assert_string_equal(node_name_show("=gpu-1", out, sizeof(out)), "\"=gpu-1\"");
    assert_string_equal(node_name_show("a\"b\\c\x07\xc3\xa9", out, sizeof(out)),
                        "\"a\\x22b\\x5cc\\x07\\xc3\\xa9\"");
    assert_string_equal(node_name_show(NULL, out, sizeof(out)), "(none)");
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    node_name_show(big, out, sizeof(out));
    assert_int_equal(strlen(out), 1 + 64 + 1 + 3);
    assert_string_equal(out + 66, "...");
    /* Every byte escaped, cut at 64 of them: the buffer is just enough. */
    memset(big, 0x01, sizeof(big) - 1);
    node_name_show(big, out, sizeof(out));
    assert_int_equal(strlen(out), 1 + 64 * 4 + 1 + 3);
    /* A small buffer is never overrun. */
    node_name_show("abcdefghij", small, sizeof(small));
    assert_true(strlen(small) < sizeof(small));
    /* Room for one byte between the quotes: the quotes stay whole. */
    assert_string_equal(node_name_show("abc", small, 4), "\"a\"");
    /* A space prints as itself; DEL does not. */
    assert_string_equal(node_name_show("a b\x7f", out, sizeof(out)), "\"a b\\x7f\"");
    /* No room at all: nothing written. */
    memset(small, 'z', sizeof(small));
    node_name_show("ab", small, 0);
    assert_int_equal(small[0], 'z');
    /* An escape, the closing quote and the NUL need 6 bytes past the opening
     * one: with 6 in all the escape is left out, and "..." says so. */
    memset(small, 'z', sizeof(small));
    assert_string_equal(node_name_show("\x01", small, 6), "\"\"...");
    assert_int_equal(small[6], 'z');
    /* One byte: only the NUL; an escape that does not fit is left out whole. */
    memset(small, 'z', sizeof(small));
    assert_string_equal(node_name_show("ab", small, 1), "");
    assert_int_equal(small[1], 'z');
    memset(small, 'z', sizeof(small));
    assert_string_equal(node_name_show("\x01", small, 4), "\"\"");
    for (size_t i = 3; i < sizeof(small); i++)
        assert_int_equal(small[i], 'z');
    /* Room for the opening quote alone: no closing one past the end. */
    memset(small, 'z', sizeof(small));
    assert_string_equal(node_name_show("ab", small, 2), "\"");
    assert_int_equal(small[2], 'z');
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_show),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
