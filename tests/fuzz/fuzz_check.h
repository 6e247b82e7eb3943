/* fuzz_check.h -- the one assertion the fuzz targets share: a broken contract aborts */
#ifndef GVW_FUZZ_CHECK_H
#define GVW_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * A contract the headers promise that the input broke. abort() makes
 * libFuzzer treat it like a sanitizer report: it writes the input as
 * crash-<sha1> and stops with the message and a stack trace.
 */
#define FUZZ_CHECK(cond, ...)                                                            \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "%s:%d: FUZZ_CHECK(%s) failed: ", __FILE__, __LINE__,        \
                    #cond);                                                              \
            fprintf(stderr, __VA_ARGS__);                                                \
            fputc('\n', stderr);                                                         \
            abort();                                                                     \
        }                                                                                \
    } while (0)

/* A reason must be there, and end inside its buffer. */
#define FUZZ_CHECK_REASON(err, errlen)                                                   \
    FUZZ_CHECK((err)[0] != '\0' && memchr((err), '\0', (errlen)) != NULL,                \
               "a failure without a reason")

#endif
