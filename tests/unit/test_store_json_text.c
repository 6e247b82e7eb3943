/* test_store_json_text.c -- the candidates column writer gives jansson's bytes exactly */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <sqlite3.h>

#include "store.h"
#include "store_int.h" /* reads the column back through the handle */
#include "store_json.h"
#include "store_json_text.h"

/* What the column held before store_json_text.c: the jansson tree, dumped with
 * the flags bind_json() uses. Owned by the caller. */
static char *
jansson_text(const struct store_candidate *c, size_t n)
{
    json_t *j = store_candidates_json(c, n);
    char *text;

    assert_non_null(j);
    text = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    assert_non_null(text);
    return text;
}

/* Asserts both writers agree, and that the length reported is the text's. */
static void
assert_same(const struct store_candidate *c, size_t n)
{
    char *want = jansson_text(c, n);
    size_t len = 12345;
    char *got = store_candidates_text(c, n, &len);

    assert_non_null(got);
    assert_string_equal(got, want);
    assert_int_equal(len, strlen(want));
    free(got);
    free(want);
}

static void
test_empty(void **state)
{
    struct store_candidate one = {"a", "b", 1, 0, 0, 1, NULL};
    char *got = store_candidates_text(NULL, 0, NULL);

    assert_string_equal(got, "[]");
    free(got);
    assert_same(NULL, 0);
    assert_same(&one, 0);
}

/* A fixed list of what text from outside can hold. */
static void
test_hostile(void **state)
{
    static const char *const strs[] = {
        "",
        "\"",
        "\\",
        "\"\\\"",
        "a\"b\\c",
        "/slash/",
        "\b\f\n\r\t",
        "\x01\x02\x1f\x7f",
        "tab\there",
        "caf\xc3\xa9",
        "\xe2\x82\xac euro",
        "\xf0\x9f\x98\x80 emoji",
        "\xef\xbb\xbf bom",
        "\xe2\x80\xa8 line separator",
        "\xef\xbf\xbf nonchar",
        "\xf4\x8f\xbf\xbf max",
        "\xff\xfe",
        "bad\xc3",
        "\xc3",
        "\xc0\xaf overlong",
        "\xe0\x80\xaf overlong3",
        "\xed\xa0\x80 surrogate",
        "\xf4\x90\x80\x80 too big",
        "\xf5\x80\x80\x80",
        "\x80 lone continuation",
        "\xe2\x82",
        "mixed \xe2\x82\xac\xff\x1b",
        "\xc3\xa9\xc3",
        "x\xf0\x9f\x98",
        "<script>alert(1)</script>",
        "\\u0000",
    };
    static const int64_t nums[] = {
        0, 1, -1, INT64_MAX, INT64_MIN, 1000000, -42, INT64_MAX - 1, INT64_MIN + 1};
    const size_t ns = sizeof(strs) / sizeof(strs[0]), nn = sizeof(nums) / sizeof(nums[0]);
    struct store_candidate c[64];
    size_t i;

    for (i = 0; i < 64; i++) {
        c[i].sc_namespace = i % 7 == 3 ? NULL : strs[i % ns];
        c[i].sc_pod = i % 5 == 4 ? NULL : strs[(i * 7 + 3) % ns];
        c[i].sc_used_mib = nums[i % nn];
        c[i].sc_has_budget = (int)(i % 3);
        c[i].sc_budget_mib = nums[(i + 4) % nn];
        c[i].sc_eligible = i % 4 == 0 ? 0 : i % 4 == 1 ? 1 : i % 4 == 2 ? -7 : 2;
        c[i].sc_why_not = i % 6 == 5 ? NULL : strs[(i * 11 + 1) % ns];
    }
    for (i = 0; i < 64; i++)
        assert_same(&c[i], 1);
    assert_same(c, 64);
}

/* A random string of up to max bytes (no NUL) into out: printable ASCII, control
 * bytes, escapes, valid and broken UTF-8, cut sequences. */
static void
random_str(char *out, size_t max, unsigned *seed)
{
    static const char *const frags[] = {
        "\xc3\xa9",
        "\xe2\x82\xac",
        "\xf0\x9f\x98\x80",
        "\xed\x9f\xbf",
        "\xee\x80\x80",
        "\xed\xa0\x80",
        "\xc0\x80",
        "\xe0\x9f\xbf",
        "\xf0\x8f\xbf\xbf",
        "\xf4\x90\x80\x80",
        "\"",
        "\\",
        "\n",
        "\x1f",
        "\x7f",
        "/",
        "\xc3",
        "\xe2\x82",
        "\xf0\x9f\x98",
    };
    size_t len = 0, want = (size_t)(rand_r(seed) % (int)max);

    while (len < want) {
        int kind = rand_r(seed) % 4;

        if (kind == 0) {
            const char *f = frags[rand_r(seed) % (int)(sizeof(frags) / sizeof(frags[0]))];
            size_t fl = strlen(f);

            if (len + fl > want)
                break;
            memcpy(out + len, f, fl);
            len += fl;
        } else if (kind == 1) {
            out[len++] = (char)(1 + rand_r(seed) % 255); /* any byte but NUL */
        } else {
            out[len++] = (char)(' ' + rand_r(seed) % 95);
        }
    }
    out[len] = '\0';
}

static int64_t
random_num(unsigned *seed)
{
    uint64_t u = ((uint64_t)(unsigned)rand_r(seed) << 33) ^
                 ((uint64_t)(unsigned)rand_r(seed) << 11) ^
                 (uint64_t)(unsigned)rand_r(seed);

    switch (rand_r(seed) % 5) {
    case 0:
        return INT64_MIN + rand_r(seed) % 3;
    case 1:
        return INT64_MAX - rand_r(seed) % 3;
    case 2:
        return (int64_t)(rand_r(seed) % 200000) - 100000;
    default:
        return (int64_t)u;
    }
}

#define RSTR 48

static void
test_random(void **state)
{
    unsigned seed = 19;
    static char text[32][3][RSTR + 1];
    struct store_candidate c[32];
    int round;

    for (round = 0; round < 3000; round++) {
        size_t n = (size_t)(rand_r(&seed) % 33), i;

        for (i = 0; i < n; i++) {
            random_str(text[i][0], RSTR, &seed);
            random_str(text[i][1], RSTR, &seed);
            random_str(text[i][2], RSTR, &seed);
            c[i].sc_namespace = rand_r(&seed) % 10 == 0 ? NULL : text[i][0];
            c[i].sc_pod = rand_r(&seed) % 10 == 0 ? NULL : text[i][1];
            c[i].sc_used_mib = random_num(&seed);
            c[i].sc_has_budget = rand_r(&seed) % 2;
            c[i].sc_budget_mib = random_num(&seed);
            c[i].sc_eligible = rand_r(&seed) % 3 - 1;
            c[i].sc_why_not = rand_r(&seed) % 4 == 0 ? NULL : text[i][2];
        }
        assert_same(c, n);
    }
}

/* A 5,000-pod list of long names: the buffer grows past its first guess. */
static void
test_big(void **state)
{
    enum { N = 5000 };
    struct store_candidate *c = calloc(N, sizeof(*c));
    static char names[N][200];
    size_t i;

    assert_non_null(c);
    for (i = 0; i < N; i++) {
        memset(names[i], 'a' + (int)(i % 26), sizeof(names[i]) - 1);
        names[i][sizeof(names[i]) - 1] = '\0';
        if (i % 9 == 0)
            names[i][i % 150] = '\n'; /* each one an escape longer */
        c[i] = (struct store_candidate){
            "tenant-0", names[i], (int64_t)i, 1, 3000, i % 2, "over budget by \"a lot\""};
    }
    assert_same(c, N);
    free(c);
}

/* What the store writes to the column is jansson's text, on insert and on finish. */
static void
test_column(void **state)
{
    char dir[] = "/tmp/gvw-jtext-XXXXXX", path[64], err[512];
    struct store_candidate c[3] = {
        {"ns\"1", "p\xff\xfeod", 100, 1, 50, 0, "over \\ budget\n"},
        {"", "", INT64_MAX, 0, 0, 1, NULL},
        {"caf\xc3\xa9", "\x01", INT64_MIN, 1, -1, 0, NULL},
    };
    struct store_decision d = {0};
    struct store *s;
    sqlite3_stmt *st;
    int64_t id = 0;
    char *want;
    int pass;

    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/audit.db", dir);
    s = store_open(path, STORE_READWRITE, err, sizeof(err));
    assert_non_null(s);
    d.sd_time_ms = 1;
    d.sd_node = "n";
    d.sd_trigger = "GPUVRAMLow";
    d.sd_result = "recycled";
    d.sd_reason = "r";
    d.sd_candidates = c;
    d.sd_candidate_count = 3;
    assert_int_equal(store_decision_start(s, &d, &id, err, sizeof(err)), 0);
    assert_int_equal(sqlite3_prepare_v2(s->st_db,
                                        "SELECT candidates FROM decisions WHERE id = ?",
                                        -1, &st, NULL),
                     SQLITE_OK);
    for (pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            d.sd_candidate_count = 2; /* finish with other candidates */
            assert_int_equal(store_decision_finish(s, id, &d, err, sizeof(err)), 0);
        }
        want = jansson_text(c, d.sd_candidate_count);
        sqlite3_bind_int64(st, 1, id);
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        assert_string_equal((const char *)sqlite3_column_text(st, 0), want);
        assert_int_equal(sqlite3_column_bytes(st, 0), (int)strlen(want));
        sqlite3_reset(st);
        free(want);
    }
    sqlite3_finalize(st);
    store_close(s);
    unlink(path);
    snprintf(path, sizeof(path), "%s/audit.db-wal", dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/audit.db-shm", dir);
    unlink(path);
    assert_int_equal(rmdir(dir), 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),  cmocka_unit_test(test_hostile),
        cmocka_unit_test(test_random), cmocka_unit_test(test_big),
        cmocka_unit_test(test_column),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
