/* fuzz_quantity.c -- libFuzzer target: Kubernetes quantities against a reference parser
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "quantity.h"

/* What the reference makes of a string. */
enum ref_verdict {
    REF_MALFORMED, /* not the grammar of quantity.h */
    REF_VALUE,     /* the exact value, rounded up as Quantity.Value() does */
    REF_TOO_BIG,   /* the grammar, but the value does not fit in int64_t */
    REF_UNKNOWN,   /* the grammar, too many significant digits to compute here */
};

static int
is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/*
 * An independent, deliberately plain reading of the grammar in quantity.h:
 * [+-] digits [. digits] then a suffix or e/E[+-]digits, with the documented
 * limits (1024 bytes, |exponent| <= 100000). The value is computed with
 * 128-bit integers when the significant digits fit in 18, so every rounding
 * quantity.c does by hand is checked against plain division.
 */
static enum ref_verdict
ref_parse(const char *s, size_t len, int64_t *out)
{
    static const struct {
        const char *name;
        int pow10, pow2;
    } sfx[] = {{"", 0, 0},    {"n", -9, 0},  {"u", -6, 0},  {"m", -3, 0},
               {"k", 3, 0},   {"M", 6, 0},   {"G", 9, 0},   {"T", 12, 0},
               {"P", 15, 0},  {"E", 18, 0},  {"Ki", 0, 10}, {"Mi", 0, 20},
               {"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50}, {"Ei", 0, 60}};
    char dig[1100];
    size_t pos = 0, nint = 0, nfrac = 0, ndig = 0, first, last, i, slen;
    const char *suffix;
    int neg = 0, pow2 = -1, eneg = 0;
    long pow10 = 0, e10;
    unsigned __int128 m, div;

    if (len == 0 || len > 1024 || memchr(s, '\0', len) != NULL)
        return REF_MALFORMED;
    if (s[pos] == '+' || s[pos] == '-')
        neg = s[pos++] == '-';
    for (; pos < len && is_digit(s[pos]); pos++, nint++)
        dig[ndig++] = s[pos];
    if (pos < len && s[pos] == '.')
        for (pos++; pos < len && is_digit(s[pos]); pos++, nfrac++)
            dig[ndig++] = s[pos];
    if (ndig == 0)
        return REF_MALFORMED;
    suffix = s + pos;
    slen = len - pos;
    for (i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++)
        if (strlen(sfx[i].name) == slen && memcmp(sfx[i].name, suffix, slen) == 0) {
            pow10 = sfx[i].pow10;
            pow2 = sfx[i].pow2;
        }
    if (pow2 < 0) {
        /* "e"/"E" then [+-]digits; a lone "E" was exa, above. */
        if (slen < 2 || (suffix[0] != 'e' && suffix[0] != 'E'))
            return REF_MALFORMED;
        i = 1;
        if (suffix[i] == '+' || suffix[i] == '-')
            eneg = suffix[i++] == '-';
        if (i == slen)
            return REF_MALFORMED;
        for (; i < slen; i++) {
            if (!is_digit(suffix[i]))
                return REF_MALFORMED;
            pow10 = pow10 * 10 + (suffix[i] - '0');
            if (pow10 > 100000)
                return REF_MALFORMED; /* "exponent out of range" */
        }
        if (eneg)
            pow10 = -pow10;
        pow2 = 0;
    }

    for (first = 0; first < ndig && dig[first] == '0'; first++)
        ;
    if (first == ndig) {
        *out = 0;
        return REF_VALUE;
    }
    for (last = ndig; dig[last - 1] == '0'; last--)
        ;
    /* value = D * 10^e10 * 2^pow2, D = dig[first..last) */
    e10 = pow10 - (long)nfrac + (long)(ndig - last);
    if (last - first > 18)
        return REF_UNKNOWN;
    for (m = 0, i = first; i < last; i++)
        m = m * 10 + (unsigned)(dig[i] - '0');
    m <<= pow2; /* < 10^18 * 2^60 < 2^120 */
    if (e10 >= 0) {
        if (e10 > 19)
            return REF_TOO_BIG; /* >= 10^20 */
        /* Stop once over INT64_MAX, so m * 10 never leaves 128 bits. */
        for (; e10 > 0 && m <= (unsigned __int128)INT64_MAX; e10--)
            m *= 10;
    } else if (-e10 > 37) {
        m = 1; /* 0 < value < 2^120 / 10^38 < 1: rounds up to 1 */
    } else {
        for (div = 1; e10 < 0; e10++)
            div *= 10;
        m = m / div + (m % div != 0);
    }
    if (m > (unsigned __int128)INT64_MAX)
        return REF_TOO_BIG;
    *out = neg ? -(int64_t)m : (int64_t)m;
    return REF_VALUE;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    char err[256], tiny[8], *copy;
    int64_t v = 0, v2 = 0, want = 0;
    int rc, rc2;
    enum ref_verdict ref;

    err[0] = '\0';
    rc = quantity_parse_n(s, size, &v, err, sizeof(err));
    if (rc == -1)
        FUZZ_CHECK_REASON(err, sizeof(err));
    else
        FUZZ_CHECK(rc == 0, "quantity_parse_n returned %d", rc);

    ref = ref_parse(s, size, &want);
    switch (ref) {
    case REF_MALFORMED:
        FUZZ_CHECK(rc == -1, "accepted a malformed quantity as %lld", (long long)v);
        break;
    case REF_VALUE:
        FUZZ_CHECK(rc == 0, "refused a quantity (%s); the reference reads %lld", err,
                   (long long)want);
        FUZZ_CHECK(v == want, "read %lld, the reference reads %lld", (long long)v,
                   (long long)want);
        break;
    case REF_TOO_BIG:
        FUZZ_CHECK(rc == -1, "accepted an out-of-range quantity as %lld", (long long)v);
        FUZZ_CHECK(strcmp(err, "value does not fit in 64 bits") == 0,
                   "out of range, but the reason is \"%s\"", err);
        break;
    case REF_UNKNOWN:
        FUZZ_CHECK(rc == 0 || strcmp(err, "value does not fit in 64 bits") == 0,
                   "refused a well-formed quantity: %s", err);
        break;
    }

    /* No error buffer, and one too small for any reason: same verdict. */
    rc2 = quantity_parse_n(s, size, &v2, NULL, 0);
    FUZZ_CHECK(rc2 == rc && (rc == -1 || v2 == v), "the verdict depends on err");
    rc2 = quantity_parse_n(s, size, &v2, tiny, sizeof(tiny));
    FUZZ_CHECK(rc2 == rc && (rc == -1 || v2 == v), "the verdict depends on errlen");
    if (rc2 == -1)
        FUZZ_CHECK(memchr(tiny, '\0', sizeof(tiny)) != NULL, "reason overran errlen");

    /* The NUL-terminated form agrees whenever the bytes hold no NUL. */
    if ((copy = malloc(size + 1)) == NULL)
        return 0;
    memcpy(copy, data, size);
    copy[size] = '\0';
    rc2 = quantity_parse(copy, &v2, err, sizeof(err));
    if (memchr(data, '\0', size) == NULL)
        FUZZ_CHECK(rc2 == rc && (rc == -1 || v2 == v),
                   "quantity_parse and quantity_parse_n disagree");
    else
        FUZZ_CHECK(rc == -1, "quantity_parse_n accepted an embedded NUL");
    free(copy);
    return 0;
}
