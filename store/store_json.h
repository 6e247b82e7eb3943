/* store_json.h -- victim and candidate JSON, shared by the store and the CLI */
#ifndef GVW_STORE_JSON_H
#define GVW_STORE_JSON_H

#include <jansson.h>

#include "store.h"

/* A JSON string for s; NULL gives JSON null. Bytes that are not UTF-8 become
 * '?', so text from outside (an API error body) can never make the encoder
 * fail. Returns a new reference, NULL only on OOM. */
json_t *store_json_str(const char *s);

/* {namespace, pod, used_mib, budget_mib, overshoot_mib} (budget and overshoot
 * null without a budget), or JSON null when v is NULL. New reference; NULL on OOM. */
json_t *store_victim_json(const struct store_victim *v);

/* [{namespace, pod, used_mib, budget_mib, eligible, why_not}, ...]; budget_mib
 * null without a budget, why_not null when eligible. New reference; NULL on OOM. */
json_t *store_candidates_json(const struct store_candidate *c, size_t n);

/* The same with budget_source after budget_mib where src (NULL = none) or its
 * entry is set (SPEC "Where budgets come from"); src has n entries. */
json_t *store_victim_json_src(const struct store_victim *v, const char *src);
json_t *store_candidates_json_src(const struct store_candidate *c, const char *const *src,
                                  size_t n);

/* {url, status, freed_mib, seconds} (unknown figures null), or JSON null
 * when r is NULL. New reference; NULL on OOM. */
json_t *store_release_json(const struct store_release *r);

/* {slope_mib_s, eta_s, horizon_s} (unknown figures null), or JSON null when
 * p is NULL. New reference; NULL on OOM. */
json_t *store_prediction_json(const struct store_prediction *p);

#endif
