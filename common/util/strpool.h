/* strpool.h -- many small strings allocated together and freed at once */
#ifndef GVW_STRPOOL_H
#define GVW_STRPOOL_H

#include <stddef.h>

/*
 * A parse of a big body keeps tens of thousands of short names (a 20,000-series
 * answer: 40,000 namespace and pod labels). One malloc and one free each cost
 * more than the copy; a pool carves them out of 64 KiB chunks and frees the
 * chunks together. Strings cannot be freed one by one.
 */
struct strpool;

/* An empty pool (nothing allocated until the first string), or NULL when out
 * of memory. The caller frees it with strpool_free(). */
struct strpool *strpool_new(void);

/* n bytes of the pool (uninitialised, not aligned: for characters), valid
 * until strpool_free(); NULL when out of memory or n is 0. */
char *strpool_alloc(struct strpool *p, size_t n);

/* A copy of the len bytes at s with a NUL after them (borrowed from the pool,
 * valid until strpool_free()); NULL when out of memory. */
char *strpool_dup(struct strpool *p, const char *s, size_t len);

/* A point in the pool's history, for a reader that drops what it kept of an
 * item it turns out not to want (a finished pod). */
struct strpool_mark {
    void *m_head;  /* the chunk being filled then (opaque) */
    void *m_next;  /* the chunk behind it then */
    size_t m_fill; /* its bytes used then */
    size_t m_used; /* the pool's bytes handed out then */
};

/* Records where the pool stands now. */
void strpool_mark(const struct strpool *p, struct strpool_mark *m);

/* Forgets every string handed out since m (they must no longer be used),
 * freeing the chunks made since. m must come from this pool, and no rewind
 * to an earlier mark may have happened since it was taken. */
void strpool_rewind(struct strpool *p, const struct strpool_mark *m);

/* Bytes handed out so far (for tests and figures). */
size_t strpool_used(const struct strpool *p);

/* Frees every string of the pool and the pool; NULL is a no-op. */
void strpool_free(struct strpool *p);

#endif
