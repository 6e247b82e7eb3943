/* node_name.h -- what may name a Kubernetes node, and how a name that may not is shown */
#ifndef GVW_NODE_NAME_H
#define GVW_NODE_NAME_H

#include <stddef.h>

/* The longest node name (a DNS-1123 subdomain). */
#define NODE_NAME_MAX 253

/*
 * 1 when s is a Kubernetes node name: a DNS-1123 subdomain of at most
 * NODE_NAME_MAX bytes, lower-case alphanumerics, '-' and '.', each
 * dot-separated label 1..63 bytes that starts and ends alphanumeric. Such a
 * name has one spelling only and nothing in it is selector or PromQL syntax,
 * so it can key the brakes and reach a field selector. NULL is not one.
 */
int node_name_ok(const char *s);

/*
 * s (NULL shows as "(none)") for a sentence, in double quotes: printable
 * ASCII as is, '"', '\\' and every other byte as \xNN, cut after 64 bytes of
 * s with "..." after the quote. out holds at least NODE_NAME_SHOWN bytes.
 * Returns out.
 */
#define NODE_NAME_SHOWN (64 * 4 + sizeof("\"\"..."))
char *node_name_show(const char *s, char *out, size_t len);

#endif
