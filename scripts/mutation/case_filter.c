/* case_filter.c -- LD_PRELOAD shim for the mutation runner: runs one cmocka case
 * of a test program (GVW_CASE_FILTER=name), or lists its cases (GVW_CASE_LIST=1),
 * so a slow program's cases are mapped and judged one by one. Not product code. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

typedef int (*run_fn)(const char *, const struct CMUnitTest *const, const size_t,
                      CMFixtureFunction, CMFixtureFunction);
typedef void (*filter_fn)(const char *);

int
_cmocka_run_group_tests(const char *group_name, const struct CMUnitTest *const tests,
                        const size_t num_tests, CMFixtureFunction group_setup,
                        CMFixtureFunction group_teardown)
{
    run_fn real = (run_fn)dlsym(RTLD_NEXT, "_cmocka_run_group_tests");
    filter_fn filter = (filter_fn)dlsym(RTLD_NEXT, "cmocka_set_test_filter");
    const char *only = getenv("GVW_CASE_FILTER");

    if (getenv("GVW_CASE_LIST") != NULL) {
        for (size_t i = 0; i < num_tests; i++)
            printf("GVW_CASE %s\n", tests[i].name);
        fflush(stdout);
        return 0;
    }
    if (real == NULL)
        abort();
    if (only != NULL && filter != NULL)
        filter(only);
    return real(group_name, tests, num_tests, group_setup, group_teardown);
}
