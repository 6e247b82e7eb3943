/* testdata.h -- reads a canned document from tests/data for cmocka tests */
#ifndef GVW_TESTDATA_H
#define GVW_TESTDATA_H

#include <stdio.h>
#include <stdlib.h>

/* Reads $GVW_TEST_DATA/name whole, NUL-terminated (the length excludes the
 * NUL). Fails the test when it cannot. The caller frees the result. */
static inline char *
test_data_load(const char *name, size_t *len)
{
    const char *dir = getenv("GVW_TEST_DATA");
    char path[1024];
    FILE *f;
    char *data;
    long n;

    snprintf(path, sizeof(path), "%s/%s", dir ? dir : "tests/data", name);
    if ((f = fopen(path, "rb")) == NULL)
        fail_msg("cannot open %s", path);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    n = ftell(f);
    assert_true(n >= 0);
    rewind(f);
    data = malloc((size_t)n + 1);
    assert_non_null(data);
    assert_int_equal(fread(data, 1, (size_t)n, f), (size_t)n);
    data[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return data;
}

#endif
