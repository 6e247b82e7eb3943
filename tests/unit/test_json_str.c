/* test_json_str.c -- the one JSON string writer: byte for byte what jansson's json_dumps
 * writes */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "json_str.h"

/* What json_dumps writes for s (valid UTF-8, n bytes, NULs allowed). */
static char *
jansson_text(const char *s, size_t n)
{
    json_t *j = json_stringn(s, n);
    char *t;

    assert_non_null(j);
    t = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
    json_decref(j);
    assert_non_null(t);
    return t;
}

/* Every byte below 0x80 alone, then mixed text: the writer and jansson agree. */
static void
test_matches_jansson(void **state)
{
    static const char *const texts[] = {
        "",
        "plain",
        "quote \" and back\\slash",
        "tab\tnl\ncr\rbs\bff\f",
        "slash / del \x7f",
        "\x01\x1f\x1b[31m",
        "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
        "</script>",
    };
    char in[2], out[64], *want, *end;

    (void)state;
    for (int c = 0; c < 0x80; c++) {
        in[0] = (char)c;
        want = jansson_text(in, 1);
        out[0] = '"';
        end = json_str_escape(out + 1, in, 1);
        *end++ = '"';
        *end = '\0';
        if (strcmp(out, want) != 0)
            fail_msg("byte 0x%02x: got %s, jansson %s", c, out, want);
        free(want);
    }
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        struct buf b;

        buf_init(&b, 0);
        assert_int_equal(json_str_put(&b, texts[i]), 0);
        want = jansson_text(texts[i], strlen(texts[i]));
        assert_string_equal(b.b_data, want);
        free(want);
        buf_free(&b);
    }
}

/* Bytes that are not UTF-8 (jansson refuses the string) become '?', one each. */
static void
test_bad_utf8_becomes_question_marks(void **state)
{
    static const struct {
        const char *in, *want;
    } t[] = {
        {"a\xff"
         "b",
         "\"a?b\""},
        {"\xc3", "\"?\""},                /* cut short */
        {"\xc0\xaf", "\"??\""},           /* overlong */
        {"\xed\xa0\x80", "\"???\""},      /* a surrogate */
        {"\xf4\x90\x80\x80", "\"????\""}, /* past U+10FFFF */
        {"ok \xc3\xa9\x80", "\"ok \xc3\xa9?\""},
    };
    struct buf b;

    (void)state;
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        buf_init(&b, 0);
        assert_int_equal(json_str_put(&b, t[i].in), 0);
        assert_string_equal(b.b_data, t[i].want);
        buf_free(&b);
    }
}

/* The worst case fits JSON_STR_ROOM exactly; a capped buffer refuses and keeps its text.
 */
static void
test_room_and_cap(void **state)
{
    char in[100], out[JSON_STR_ROOM(100)];
    struct buf b;

    (void)state;
    memset(in, 0x01, sizeof(in));
    assert_ptr_equal(json_str_escape(out, in, sizeof(in)), out + sizeof(out));
    buf_init(&b, 16);
    assert_int_equal(json_str_put(&b, "ab"), 0);
    assert_int_equal(json_str_put(&b, "0123456789"), -1);
    assert_string_equal(b.b_data, "\"ab\"");
    buf_free(&b);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matches_jansson),
        cmocka_unit_test(test_bad_utf8_becomes_question_marks),
        cmocka_unit_test(test_room_and_cap),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
