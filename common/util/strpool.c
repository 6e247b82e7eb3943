/* strpool.c -- many small strings allocated together and freed at once */
#include "strpool.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_BYTES (64u * 1024u) /* a chunk's room; a bigger string gets its own */

struct chunk {
    struct chunk *c_next; /* owned: the chunk filled before this one */
    size_t c_used, c_size;
    char c_data[];
};

struct strpool {
    struct chunk *sp_head; /* owned list; the head is the one being filled */
    size_t sp_used;        /* bytes handed out */
};

struct strpool *
strpool_new(void)
{
    return calloc(1, sizeof(struct strpool));
}

static struct chunk *
chunk_new(size_t size)
{
    struct chunk *c;

    if (size > SIZE_MAX - sizeof(*c) || (c = malloc(sizeof(*c) + size)) == NULL)
        return NULL;
    c->c_next = NULL;
    c->c_used = 0;
    c->c_size = size;
    return c;
}

char *
strpool_alloc(struct strpool *p, size_t n)
{
    struct chunk *c = p->sp_head;

    if (n == 0)
        return NULL;
    if (c == NULL || c->c_size - c->c_used < n) {
        if (n > CHUNK_BYTES / 4) {
            /* Its own chunk, behind the head: the head keeps its room. */
            if ((c = chunk_new(n)) == NULL)
                return NULL;
            if (p->sp_head != NULL) {
                c->c_next = p->sp_head->c_next;
                p->sp_head->c_next = c;
            } else {
                p->sp_head = c;
            }
        } else {
            if ((c = chunk_new(CHUNK_BYTES)) == NULL)
                return NULL;
            c->c_next = p->sp_head;
            p->sp_head = c;
        }
    }
    c->c_used += n;
    p->sp_used += n;
    return c->c_data + c->c_used - n;
}

char *
strpool_dup(struct strpool *p, const char *s, size_t len)
{
    char *d;

    if (len == SIZE_MAX || (d = strpool_alloc(p, len + 1)) == NULL)
        return NULL;
    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

void
strpool_mark(const struct strpool *p, struct strpool_mark *m)
{
    m->m_head = p->sp_head;
    m->m_next = p->sp_head != NULL ? p->sp_head->c_next : NULL;
    m->m_fill = p->sp_head != NULL ? p->sp_head->c_used : 0;
    m->m_used = p->sp_used;
}

void
strpool_rewind(struct strpool *p, const struct strpool_mark *m)
{
    struct chunk *c = p->sp_head, *next, *head = m->m_head;

    /* Chunks made since the mark sit in front of its head (new heads, and
     * the big strings put behind them) or right behind its head (big
     * strings put there while it was still the head). */
    for (; c != head; c = next) {
        next = c->c_next;
        free(c);
    }
    if (head != NULL) {
        for (c = head->c_next; c != m->m_next; c = next) {
            next = c->c_next;
            free(c);
        }
        head->c_next = m->m_next;
        head->c_used = m->m_fill;
    }
    p->sp_head = head;
    p->sp_used = m->m_used;
}

size_t
strpool_used(const struct strpool *p)
{
    return p->sp_used;
}

void
strpool_free(struct strpool *p)
{
    struct chunk *c, *next;

    if (p == NULL)
        return;
    for (c = p->sp_head; c != NULL; c = next) {
        next = c->c_next;
        free(c);
    }
    free(p);
}
