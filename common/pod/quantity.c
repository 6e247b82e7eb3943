/* quantity.c -- exact parsing of Kubernetes resource quantities, no floating point */
#include "quantity.h"

#include <stdio.h>
#include <string.h>

/* Digits an int64 magnitude can have: anything with 20 integer digits is over. */
#define MAX_INT_DIGITS 19
/* Quantities are short ("1536Mi"); a bound keeps every index and exponent sum
 * far from overflow and the fraction buffer on the stack. */
#define MAX_LEN 1024
/* Larger exponents name no int64 (or round to 0/1 the same way); refusing them
 * keeps the exponent arithmetic in range. */
#define MAX_EXPONENT 100000
/* A reason shows this many bytes of a bad suffix, each at most 4 characters. */
#define SHOW_MAX 16
#define SHOWN_SIZE (SHOW_MAX * 4 + sizeof("..."))

/* The suffixes of resource.Quantity: value = number * 10^pow10 * 2^pow2. */
static const struct {
    const char *name;
    int pow10;
    int pow2;
} suffixes[] = {
    {"", 0, 0},    {"n", -9, 0},  {"u", -6, 0},  {"m", -3, 0},
    {"k", 3, 0},   {"M", 6, 0},   {"G", 9, 0},   {"T", 12, 0},
    {"P", 15, 0},  {"E", 18, 0},  {"Ki", 0, 10}, {"Mi", 0, 20},
    {"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50}, {"Ei", 0, 60},
};

/* The digits of the number, integer part then fraction, read as one sequence. */
struct digits {
    const char *d_int; /* borrowed */
    size_t d_nint;
    const char *d_frac; /* borrowed */
    size_t d_nfrac;
};

static int
digit_at(const struct digits *d, size_t i)
{
    if (i < d->d_nint)
        return d->d_int[i] - '0';
    return d->d_frac[i - d->d_nint] - '0';
}

static int
is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int
fail(char *err, size_t errlen, const char *why)
{
    if (err != NULL && errlen > 0)
        snprintf(err, errlen, "%s", why);
    return -1;
}

/* Writes what the offending suffix looks like into out (SHOWN_SIZE bytes),
 * bytes that would not print as \xNN, so a reason never carries control
 * characters into a log. */
static void
show_suffix(const char *s, size_t len, char *out)
{
    size_t i, o = 0;

    for (i = 0; i < len && i < SHOW_MAX; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, SHOWN_SIZE - o, "\\x%02x", c);
    }
    if (i < len) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
}

/* Parses [+-]?digits+ (the exponent after e/E, len >= 1) into *exp. */
static int
parse_exponent(const char *s, size_t len, int64_t *exp)
{
    size_t i = 0;
    int neg = 0;
    int64_t v = 0;

    if (s[i] == '+' || s[i] == '-')
        neg = s[i++] == '-';
    if (i == len)
        return -1;
    for (; i < len; i++) {
        if (!is_digit(s[i]))
            return -1;
        v = v * 10 + (s[i] - '0');
        if (v > MAX_EXPONENT)
            return -2;
    }
    *exp = neg ? -v : v;
    return 0;
}

/* Reads the suffix into *pow10 and *pow2. */
static int
parse_suffix(const char *s, size_t len, int64_t *pow10, int *pow2, char *err,
             size_t errlen)
{
    size_t i;
    char shown[SHOWN_SIZE], why[160];
    int rc;

    for (i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
        if (strlen(suffixes[i].name) == len && memcmp(suffixes[i].name, s, len) == 0) {
            *pow10 = suffixes[i].pow10;
            *pow2 = suffixes[i].pow2;
            return 0;
        }
    }
    /* A lone "E" is exa and matched above; "e"/"E" with more is an exponent. */
    if (len > 1 && (s[0] == 'e' || s[0] == 'E')) {
        rc = parse_exponent(s + 1, len - 1, pow10);
        if (rc == 0) {
            *pow2 = 0;
            return 0;
        }
        if (rc == -2)
            return fail(err, errlen, "exponent out of range");
    }
    show_suffix(s, len, shown);
    snprintf(why, sizeof(why), "unknown suffix \"%s\"", shown);
    return fail(err, errlen, why);
}

/*
 * ceil(0.f1f2...fn * 2^pow2) for the fraction digits in frac (modified).
 * Doubling the decimal fraction pow2 times moves one bit a time into the
 * integer part, exactly; what is left says whether to round up.
 */
static uint64_t
fraction_ceil(unsigned char *frac, size_t n, int pow2)
{
    uint64_t whole = 0;
    size_t i;
    int b, carry, nonzero = 0;

    for (b = 0; b < pow2; b++) {
        carry = 0;
        for (i = n; i-- > 0;) {
            int d = frac[i] * 2 + carry;
            frac[i] = (unsigned char)(d % 10);
            carry = d / 10;
        }
        whole = whole * 2 + (uint64_t)carry;
    }
    for (i = 0; i < n; i++)
        nonzero |= frac[i] != 0;
    return whole + (uint64_t)nonzero;
}

/* |value| = D * 10^exp10 * 2^pow2 rounded up, where D is the significant digits
 * d[first..last]. Returns 0 and the magnitude, or -1 when it exceeds INT64_MAX. */
static int
magnitude(const struct digits *d, size_t first, size_t last, int64_t exp10, int pow2,
          int64_t *out)
{
    unsigned char frac[MAX_INT_DIGITS + MAX_LEN];
    int64_t nsig = (int64_t)(last - first + 1), nint = nsig + exp10;
    uint64_t whole = 0, up = 0, limit = (uint64_t)INT64_MAX;
    size_t nfrac = 0, i;

    if (nint > MAX_INT_DIGITS)
        return -1; /* at least 10^19 > INT64_MAX */
    if (nint <= -MAX_INT_DIGITS) {
        /* Below 10^-19 * 2^60 < 1, and not zero: rounds up to exactly 1. */
        *out = 1;
        return 0;
    }
    for (i = 0; (int64_t)i < nint; i++)
        whole = whole * 10 + (i < (size_t)nsig ? (uint64_t)digit_at(d, first + i) : 0);
    if (nint < 0)
        for (; nfrac < (size_t)-nint; nfrac++)
            frac[nfrac] = 0;
    for (i = nint > 0 ? (size_t)nint : 0; i < (size_t)nsig; i++)
        frac[nfrac++] = (unsigned char)digit_at(d, first + i);
    up = fraction_ceil(frac, nfrac, pow2);
    if (whole > (limit >> pow2))
        return -1;
    whole <<= pow2;
    if (up > limit - whole)
        return -1;
    *out = (int64_t)(whole + up);
    return 0;
}

int
quantity_parse_n(const char *s, size_t len, int64_t *out, char *err, size_t errlen)
{
    struct digits d;
    size_t pos = 0, n, first, last;
    int neg = 0, pow2 = 0;
    int64_t pow10 = 0, exp10, mag;

    if (s == NULL || len == 0)
        return fail(err, errlen, "empty quantity");
    if (len > MAX_LEN)
        return fail(err, errlen, "longer than 1024 characters");
    if (memchr(s, '\0', len) != NULL)
        return fail(err, errlen, "contains a NUL byte");
    if (s[pos] == '+' || s[pos] == '-')
        neg = s[pos++] == '-';
    d.d_int = s + pos;
    while (pos < len && is_digit(s[pos]))
        pos++;
    d.d_nint = (size_t)(s + pos - d.d_int);
    d.d_frac = s + pos;
    d.d_nfrac = 0;
    if (pos < len && s[pos] == '.') {
        d.d_frac = s + ++pos;
        while (pos < len && is_digit(s[pos]))
            pos++;
        d.d_nfrac = (size_t)(s + pos - d.d_frac);
    }
    if (d.d_nint + d.d_nfrac == 0)
        return fail(err, errlen, "no digits");
    if (parse_suffix(s + pos, len - pos, &pow10, &pow2, err, errlen) == -1)
        return -1;

    n = d.d_nint + d.d_nfrac;
    for (first = 0; first < n && digit_at(&d, first) == 0; first++)
        ;
    if (first == n) {
        *out = 0; /* "-0", "0e99999", "0Ei" */
        return 0;
    }
    for (last = n - 1; digit_at(&d, last) == 0; last--)
        ;
    /* D * 10^exp10 with D the digits first..last as an integer. */
    exp10 = pow10 - (int64_t)d.d_nfrac + (int64_t)(n - 1 - last);
    if (magnitude(&d, first, last, exp10, pow2, &mag) == -1)
        return fail(err, errlen, "value does not fit in 64 bits");
    /* The magnitude stops at INT64_MAX, so -INT64_MAX - 1 is refused too:
     * harmless, as no caller wants a negative quantity. */
    *out = neg ? -mag : mag;
    return 0;
}

int
quantity_parse(const char *s, int64_t *out, char *err, size_t errlen)
{
    return quantity_parse_n(s, s != NULL ? strlen(s) : 0, out, err, errlen);
}
