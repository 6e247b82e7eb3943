/* store_json_text.h -- the candidates column written straight as JSON text (no jansson
 * tree) */
#ifndef GVW_STORE_JSON_TEXT_H
#define GVW_STORE_JSON_TEXT_H

#include <stddef.h>

#include "store.h"

/* The compact JSON text of the n candidates: byte for byte what
 * json_dumps(store_candidates_json(c, n), JSON_COMPACT) gives (same key order,
 * escaping, and '?' for bytes that are not UTF-8), without building the tree,
 * which cost ~100 M instructions for a 5,000-pod node. Returns a malloc'd,
 * NUL-terminated string (owned by the caller; free()) and its length in *len_out
 * when len_out is not NULL; NULL only on OOM. */
char *store_candidates_text(const struct store_candidate *c, size_t n, size_t *len_out);

/* The same with each candidate's budget_source (src: NULL, or n entries; see
 * store_candidates_json_src()). */
char *store_candidates_text_src(const struct store_candidate *c, const char *const *src,
                                size_t n, size_t *len_out);

#endif
