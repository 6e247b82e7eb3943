/* budget_src.c -- a pod's budget from the first source it declares: HAMi's resources,
 * KAI's annotations or DRA claims read as those projects read them (no I/O) */
#include "budget_src.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "decimal.h"
#include "quantity.h"

#define MIB (1024.0 * 1024.0)
#define SHOW 72 /* a value as shown: 16 bytes, each at most 4 characters, and "..." */

const char BSRC_NOT_STRING[] = "(not a string)";

/* Marks b unreadable and leaves the judging function. */
#define BAD(...)                                                                         \
    do {                                                                                 \
        bad(__VA_ARGS__);                                                                \
        return;                                                                          \
    } while (0)

static const char *const words[] = {NULL, "resource", "hami", "kai", "dra"};

const char *
bsrc_name(enum bsrc s)
{
    return s > BSRC_NONE && s <= BSRC_DRA ? words[s] : NULL;
}

int
bsrc_driver_check(const char *d, char *err, size_t errlen)
{
    size_t i, n = strlen(d);

    for (i = 0; i < n; i++)
        if (!((d[i] >= 'a' && d[i] <= 'z') || (d[i] >= '0' && d[i] <= '9') ||
              ((d[i] == '-' || d[i] == '.') && i > 0 && i + 1 < n && d[i - 1] != '.' &&
               d[i + 1] != '.')))
            break;
    if (i < n || n > 253) {
        snprintf(err, errlen,
                 "DRA_DRIVER: '%.64s' is not a driver name (a DNS subdomain, e.g. "
                 "gpu.nvidia.com)",
                 d);
        return -1;
    }
    return 0;
}

int
bsrc_order_parse(const char *list, struct bsrc_order *out, char *err, size_t errlen)
{
    const char *p = list, *end;
    size_t len, k;
    int s;

    memset(out, 0, sizeof(*out));
    if (list == NULL)
        list = p = "";
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        end = strchr(p, ',');
        len = end != NULL ? (size_t)(end - p) : strlen(p);
        while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t'))
            len--;
        for (s = BSRC_RESOURCE; s <= BSRC_DRA; s++)
            if (strlen(words[s]) == len && memcmp(words[s], p, len) == 0)
                break;
        if (s > BSRC_DRA) {
            if (len == 0)
                snprintf(err, errlen,
                         "an empty word in '%.64s' (resource, hami, kai, dra)", list);
            else
                snprintf(err, errlen,
                         "'%.*s' is not a budget source (resource, hami, kai, dra)",
                         (int)(len > 32 ? 32 : len), p);
            return -1;
        }
        for (k = 0; k < out->bo_count; k++)
            if (out->bo_src[k] == (enum bsrc)s) {
                snprintf(err, errlen, "'%s' is listed twice", words[s]);
                return -1;
            }
        out->bo_src[out->bo_count++] = (enum bsrc)s;
        if (end == NULL)
            return 0;
        p = end + 1;
    }
}

int
bsrc_order_has(const struct bsrc_order *o, enum bsrc s)
{
    for (size_t i = 0; i < o->bo_count; i++)
        if (o->bo_src[i] == s)
            return 1;
    return 0;
}

int
bsrc_reservation_namespace(const char *ns)
{
    return ns != NULL && (strcmp(ns, "kai-resource-reservation") == 0 ||
                          strcmp(ns, "runai-reservation") == 0);
}

/* v as a message shows it: printable ASCII as is, the rest as \xNN, cut. */
static void
show(const char *v, char *out)
{
    size_t i, o = 0;

    if (v == BSRC_NOT_STRING) {
        snprintf(out, SHOW, "%s", v);
        return;
    }
    for (i = 0; i < 16 && v[i] != '\0'; i++) {
        unsigned char c = (unsigned char)v[i];
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, SHOW - o, "\\x%02x", c);
    }
    if (v[i] != '\0') {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
}

static void bad(struct bsrc_budget *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
bad(struct bsrc_budget *b, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(b->bb_error, sizeof(b->bb_error), fmt, ap);
    va_end(ap);
    b->bb_state = BSRC_STATE_BAD;
    b->bb_mib = 0;
    b->bb_gpus = 0;
}

/* A quantity HAMi's Quantity.AsInt64() takes: a whole number (no fraction, no
 * milli-units). 0 and *out, or -1. */
static int
whole_quantity(const char *s, int64_t *out)
{
    char qerr[64];
    size_t n;

    if (s == BSRC_NOT_STRING || strchr(s, '.') != NULL || strstr(s, "e-") != NULL ||
        strstr(s, "E-") != NULL)
        return -1;
    n = strlen(s);
    if (n > 0 && (s[n - 1] == 'm' || s[n - 1] == 'u' || s[n - 1] == 'n'))
        return -1;
    return quantity_parse(s, out, qerr, sizeof(qerr));
}

/* value[0] (limits) else value[1] (requests): HAMi's order. */
static const char *
pick(const char *const v[2], const char **which)
{
    *which = v[0] != NULL ? "limit" : "request";
    return v[0] != NULL ? v[0] : v[1];
}

/* HAMi: per container, nvidia.com/gpu devices each given nvidia.com/gpumem MiB
 * or nvidia.com/gpumem-percentage of the device (gpumem wins when both, as in
 * HAMi's fit); a container with GPUs but neither gets the whole device (HAMi's
 * default without DefaultMemory). The pod declares HAMi when one container
 * names gpumem or gpumem-percentage. */
static void
judge_hami(const struct bsrc_pod *p, struct bsrc_budget *b)
{
    char shown[SHOW], name[SHOW], cname[SHOW + 2], part[160];
    size_t off = 0, i, parts = 0;
    int declared = 0;

    for (i = 0; i < p->bp_container_count; i++) {
        const struct bsrc_container *c = &p->bp_containers[i];
        if (c->bc_mem[0] || c->bc_mem[1] || c->bc_pct[0] || c->bc_pct[1])
            declared = 1;
    }
    if (!declared)
        return;
    b->bb_source = BSRC_HAMI;
    b->bb_state = BSRC_STATE_OK;
    for (i = 0; i < p->bp_container_count; i++) {
        const struct bsrc_container *c = &p->bp_containers[i];
        const char *gv, *mv, *pv, *gw, *mw, *pw;
        int64_t n, mem = 0, pct = 0;

        if (c->bc_name != NULL) {
            show(c->bc_name, name);
            snprintf(cname, sizeof(cname), "\"%s\"", name);
        } else
            snprintf(cname, sizeof(cname), "#%zu", i);
        if ((gv = pick(c->bc_gpu, &gw)) == NULL)
            continue; /* HAMi gives it no device: its gpumem means nothing */
        if (whole_quantity(gv, &n) == -1 || n < 0) {
            show(gv, shown);
            BAD(b, "container %s: %s " HAMI_GPU " \"%s\" is not a whole number", cname,
                gw, shown);
        }
        if (n == 0)
            continue;
        if ((mv = pick(c->bc_mem, &mw)) != NULL &&
            (whole_quantity(mv, &mem) == -1 || mem < 0 || mem > INT32_MAX)) {
            show(mv, shown);
            BAD(b, "container %s: %s " HAMI_GPUMEM " \"%s\" is not a whole number of MiB",
                cname, mw, shown);
        }
        if ((pv = pick(c->bc_pct, &pw)) != NULL) {
            if (whole_quantity(pv, &pct) == -1 || pct <= 0 || pct > 100) {
                show(pv, shown);
                BAD(b,
                    "container %s: %s " HAMI_GPUMEM_PCT
                    " \"%s\" is not a whole percentage from 1 to 100",
                    cname, pw, shown);
            }
        }
        part[0] = '\0';
        if (mem > 0) {
            if (mem > INT64_MAX / n || mem * n > INT64_MAX - b->bb_mib)
                BAD(b, "the containers' " HAMI_GPUMEM " together overflow 64 bits");
            b->bb_mib += mem * n;
            snprintf(part, sizeof(part), HAMI_GPUMEM ": %lld", (long long)mem);
        } else {
            if (pct == 0)
                pct = 100;
            b->bb_gpus += (double)n * (double)pct / 100.0;
            snprintf(part, sizeof(part), HAMI_GPUMEM_PCT ": %lld", (long long)pct);
        }
        text_append(b->bb_decl, sizeof(b->bb_decl), &off, "%s", parts++ ? "; " : "");
        if (p->bp_container_count > 1)
            text_append(b->bb_decl, sizeof(b->bb_decl), &off, "%s: ", cname);
        if (n > 1)
            text_append(b->bb_decl, sizeof(b->bb_decl), &off, HAMI_GPU ": %lld, ",
                        (long long)n);
        text_append(b->bb_decl, sizeof(b->bb_decl), &off, "%s", part);
    }
    if (parts == 0)
        bad(b, HAMI_GPUMEM " is declared but no container is given an " HAMI_GPU);
}

/* strconv.ParseFloat's plain decimal forms only: digits, one point, an
 * exponent. 0 and *out, or -1. */
static int
plain_float(const char *s, double *out)
{
    char *end;

    if (s[0] == '\0' || strspn(s, "0123456789.eE+-") != strlen(s))
        return -1;
    *out = strtod(s, &end);
    return *end == '\0' && isfinite(*out) ? 0 : -1;
}

/* KAI / Run:ai: gpu-fraction (0 < f <= 1 of the GPU) or gpu-memory (MiB), each
 * on gpu-fraction-num-devices GPUs (default 1). */
static void
judge_kai(const struct bsrc_pod *p, struct bsrc_budget *b)
{
    char shown[SHOW], shown2[SHOW];
    int64_t devices = 1, mem = 0;
    size_t off = 0;
    double f = 0;

    if (p->bp_fraction == NULL && p->bp_memory == NULL)
        return;
    b->bb_source = BSRC_KAI;
    b->bb_state = BSRC_STATE_OK;
    if (p->bp_fraction != NULL && p->bp_memory != NULL)
        BAD(b,
            "declares both " KAI_GPU_FRACTION " and " KAI_GPU_MEMORY "; KAI takes one");
    if (p->bp_num_devices != NULL &&
        (decimal_parse(p->bp_num_devices, 1024, &devices) != 0 || devices < 1)) {
        show(p->bp_num_devices, shown);
        BAD(b, KAI_NUM_DEVICES " \"%s\" is not a whole number from 1 to 1024", shown);
    }
    if (p->bp_fraction != NULL) {
        show(p->bp_fraction, shown);
        if (plain_float(p->bp_fraction, &f) == -1 || !(f > 0) || f > 1)
            BAD(b, KAI_GPU_FRACTION " \"%s\" is not a fraction above 0 and at most 1",
                shown);
        b->bb_gpus = f * (double)devices;
        text_append(b->bb_decl, sizeof(b->bb_decl), &off, KAI_GPU_FRACTION ": \"%s\"",
                    shown);
    } else {
        show(p->bp_memory, shown);
        if (p->bp_memory[0] == '-' &&
            decimal_parse(p->bp_memory + 1, INT64_MAX, &mem) == 0)
            BAD(b, KAI_GPU_MEMORY " \"%s\" is negative", shown);
        if (decimal_parse(p->bp_memory, INT32_MAX, &mem) != 0 || mem == 0)
            BAD(b, KAI_GPU_MEMORY " \"%s\" is not a whole number of MiB above 0", shown);
        b->bb_mib = mem * devices;
        text_append(b->bb_decl, sizeof(b->bb_decl), &off, KAI_GPU_MEMORY ": \"%s\"",
                    shown);
    }
    if (p->bp_num_devices != NULL) {
        show(p->bp_num_devices, shown2);
        text_append(b->bb_decl, sizeof(b->bb_decl), &off, ", " KAI_NUM_DEVICES ": \"%s\"",
                    shown2);
    }
}

/* DRA: the consumedCapacity memory of DRA_DRIVER's devices in the pod's claims,
 * summed. The pod declares DRA when one of its claims carries such memory; a
 * claim that cannot be read or is not allocated makes it unreadable (it may
 * be the one). */
static void
judge_dra(const struct bsrc_pod *p, struct bsrc_budget *b)
{
    char shown[SHOW], claim[SHOW];
    const struct bsrc_claim *c;
    size_t i, k, off = 0;
    int64_t bytes, total = 0;
    int declared = 0, unknown = 0;
    char qerr[96];

    for (i = 0; i < p->bp_claim_count; i++) {
        c = &p->bp_claims[i];
        if (c->bl_claim == NULL)
            continue;
        if (!c->bl_fetched || !c->bl_allocated)
            unknown = 1;
        else if (c->bl_memory_count > 0)
            declared = 1;
    }
    if (!declared && !unknown)
        return;
    b->bb_source = BSRC_DRA;
    b->bb_state = BSRC_STATE_OK;
    b->bb_shared = 1;
    for (i = 0; i < p->bp_claim_count; i++) {
        c = &p->bp_claims[i];
        if (c->bl_claim == NULL)
            continue;
        show(c->bl_claim, claim);
        if (!c->bl_fetched)
            BAD(b, "claim %s/%s could not be read%s%.160s",
                p->bp_namespace ? p->bp_namespace : "", claim, c->bl_error ? ": " : "",
                c->bl_error ? c->bl_error : "");
        if (!c->bl_allocated)
            BAD(b, "claim %s/%s has no allocation",
                p->bp_namespace ? p->bp_namespace : "", claim);
        if (c->bl_memory_count == 0)
            continue;
        text_append(b->bb_decl, sizeof(b->bb_decl), &off, "%sclaim %s/%s: memory",
                    off ? "; " : "", p->bp_namespace ? p->bp_namespace : "", claim);
        for (k = 0; k < c->bl_memory_count; k++) {
            const char *m = c->bl_memory[k];
            show(m, shown);
            if (m == BSRC_NOT_STRING ||
                quantity_parse(m, &bytes, qerr, sizeof(qerr)) == -1)
                BAD(b, "claim %s: consumedCapacity memory \"%s\" is not a quantity",
                    claim, shown);
            if (bytes < 0)
                BAD(b, "claim %s: consumedCapacity memory \"%s\" is negative", claim,
                    shown);
            if (bytes > INT64_MAX - total)
                BAD(b, "claim %s: the memory together overflows 64 bits", claim);
            total += bytes;
            text_append(b->bb_decl, sizeof(b->bb_decl), &off, "%s %s", k ? "," : "",
                        shown);
        }
        if (c->bl_reserved > b->bb_shared)
            b->bb_shared = c->bl_reserved;
    }
    /* Bytes to MiB, rounded up: a tenant is never judged over what it was given. */
    b->bb_mib = total / (1024 * 1024) + (total % (1024 * 1024) != 0);
}

void
bsrc_judge(const struct bsrc_order *o, const struct bsrc_pod *p, struct bsrc_budget *out)
{
    size_t i;

    memset(out, 0, sizeof(*out));
    if (bsrc_order_has(o, BSRC_KAI) && bsrc_reservation_namespace(p->bp_namespace)) {
        out->bb_source = BSRC_KAI;
        out->bb_not_tenant = 1;
        return;
    }
    for (i = 0; i < o->bo_count && out->bb_source == BSRC_NONE; i++) {
        switch (o->bo_src[i]) {
        case BSRC_RESOURCE:
            if (p->bp_resource_state == BSRC_STATE_NONE)
                break;
            out->bb_source = BSRC_RESOURCE;
            out->bb_state =
                p->bp_resource_state == BSRC_STATE_OK ? BSRC_STATE_OK : BSRC_STATE_BAD;
            if (out->bb_state == BSRC_STATE_OK) {
                out->bb_mib = p->bp_resource_mib;
                snprintf(out->bb_decl, sizeof(out->bb_decl), "%s: %lld",
                         p->bp_resource_name ? p->bp_resource_name : "resource",
                         (long long)p->bp_resource_mib);
            } else {
                snprintf(out->bb_error, sizeof(out->bb_error), "%s",
                         p->bp_resource_error ? p->bp_resource_error : "unreadable");
            }
            break;
        case BSRC_HAMI:
            judge_hami(p, out);
            break;
        case BSRC_KAI:
            judge_kai(p, out);
            break;
        case BSRC_DRA:
            judge_dra(p, out);
            break;
        default:
            break;
        }
    }
}

int
bsrc_resolve(const struct bsrc_budget *b, int have_total, double total_bytes,
             int64_t *mib, char *why, size_t whylen)
{
    double add;

    if (b->bb_state != BSRC_STATE_OK) {
        snprintf(why, whylen, "%s",
                 b->bb_state == BSRC_STATE_BAD ? b->bb_error : "no budget");
        return -1;
    }
    if (b->bb_gpus <= 0) {
        *mib = b->bb_mib;
        return 0;
    }
    if (!have_total || !(total_bytes > 0) || !isfinite(total_bytes)) {
        snprintf(why, whylen, BSRC_NEEDS_TOTAL);
        return -1;
    }
    add = floor(b->bb_gpus * total_bytes / MIB);
    if (!(add < 9.0e18) || (int64_t)add > INT64_MAX - b->bb_mib) {
        snprintf(why, whylen, "the budget overflows 64 bits");
        return -1;
    }
    *mib = b->bb_mib + (int64_t)add;
    return 0;
}
