/* test_strpool.c -- the string pool: copies intact, big strings, free at once */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "strpool.h"

static void
test_dup_keeps_every_copy(void **state)
{
    struct strpool *p = strpool_new();
    char *got[20000], want[32];
    size_t i, total = 0;

    (void)state;
    assert_non_null(p);
    assert_int_equal(strpool_used(p), 0);
    /* Enough to fill several chunks: none may overwrite another. */
    for (i = 0; i < 20000; i++) {
        int n = snprintf(want, sizeof(want), "tenant-%zu/app-%zu", i % 97, i);
        assert_non_null(got[i] = strpool_dup(p, want, (size_t)n));
        total += (size_t)n + 1;
    }
    for (i = 0; i < 20000; i++) {
        snprintf(want, sizeof(want), "tenant-%zu/app-%zu", i % 97, i);
        assert_string_equal(got[i], want);
    }
    assert_int_equal(strpool_used(p), total);
    strpool_free(p);
    strpool_free(NULL);
}

static void
test_dup_copies_only_len_bytes(void **state)
{
    struct strpool *p = strpool_new();
    char *s;

    (void)state;
    assert_non_null(p);
    s = strpool_dup(p, "podname\"rest", 7); /* a slice of a longer text */
    assert_string_equal(s, "podname");
    s = strpool_dup(p, "", 0);
    assert_non_null(s);
    assert_string_equal(s, "");
    assert_null(strpool_alloc(p, 0));
    strpool_free(p);
}

static void
test_big_strings_between_small_ones(void **state)
{
    struct strpool *p = strpool_new();
    size_t big = 300 * 1024;
    char *text = malloc(big), *a, *b, *c, *d;

    (void)state;
    assert_non_null(p);
    assert_non_null(text);
    memset(text, 'x', big);
    assert_non_null(a = strpool_dup(p, "before", 6));
    /* Bigger than a chunk: its own, and the small ones keep filling theirs. */
    assert_non_null(b = strpool_dup(p, text, big));
    assert_non_null(c = strpool_dup(p, "after", 5));
    assert_non_null(d = strpool_dup(p, text, big - 1));
    assert_string_equal(a, "before");
    assert_string_equal(c, "after");
    assert_int_equal(strlen(b), big);
    assert_int_equal(strlen(d), big - 1);
    assert_true(memcmp(b, text, big) == 0);
    /* The small ones share a chunk: c follows a in memory. */
    assert_ptr_equal(c, a + 7);
    free(text);
    strpool_free(p);
}

static void
test_size_overflow_refused(void **state)
{
    struct strpool *p = strpool_new();

    (void)state;
    assert_non_null(p);
    assert_null(strpool_dup(p, "x", SIZE_MAX));
    assert_null(strpool_alloc(p, SIZE_MAX));
    assert_null(strpool_alloc(p, SIZE_MAX - 8));
    assert_non_null(strpool_dup(p, "still works", 11));
    strpool_free(p);
}

/* A rewind forgets what came after the mark, frees the chunks made since
 * (ASan's leak check sees any it kept), and the pool goes on from there:
 * small and big strings, a mark on an empty pool and one mid-chunk. */
static void
test_rewind_drops_what_came_after(void **state)
{
    struct strpool *p = strpool_new();
    struct strpool_mark empty, mid;
    size_t big = 100 * 1024;
    char *text = malloc(big), *keep, *again, name[32];

    (void)state;
    assert_non_null(p);
    assert_non_null(text);
    memset(text, 'y', big);
    strpool_mark(p, &empty);
    assert_non_null(strpool_dup(p, text, big)); /* the first chunk is a big one */
    assert_non_null(strpool_dup(p, "gone", 4));
    strpool_rewind(p, &empty);
    assert_int_equal(strpool_used(p), 0);
    assert_non_null(keep = strpool_dup(p, "kept", 4));
    strpool_mark(p, &mid);
    for (int round = 0; round < 3; round++) {
        /* Several chunks of small ones and big ones behind the head. */
        for (int i = 0; i < 20000; i++) {
            int n = snprintf(name, sizeof(name), "finished-pod-%d", i);
            assert_non_null(strpool_dup(p, name, (size_t)n));
            if (i % 5000 == 0)
                assert_non_null(strpool_dup(p, text, big));
        }
        assert_non_null(strpool_dup(p, text, big));
        strpool_rewind(p, &mid);
        assert_int_equal(strpool_used(p), 5);
        assert_string_equal(keep, "kept");
    }
    /* The next string goes right where the dropped ones began. */
    assert_non_null(again = strpool_dup(p, "next", 4));
    assert_ptr_equal(again, keep + 5);
    assert_string_equal(keep, "kept");
    free(text);
    strpool_free(p);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dup_keeps_every_copy),
        cmocka_unit_test(test_dup_copies_only_len_bytes),
        cmocka_unit_test(test_big_strings_between_small_ones),
        cmocka_unit_test(test_size_overflow_refused),
        cmocka_unit_test(test_rewind_drops_what_came_after),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
