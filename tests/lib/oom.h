/* oom.h -- allocation-failure injection for the *_oom tests
 *
 * A test linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,
 * --wrap=strdup,--wrap=strndup (GVW_OOM_WRAP in tests/CMakeLists.txt) and
 * tests/lib/oom.c sends those calls of its own objects and static libraries
 * here. Shared libraries (libcurl, libevent, SQLite, a stub NVML) allocate
 * on their own and are never failed. */
#ifndef GVW_TEST_OOM_H
#define GVW_TEST_OOM_H

/* From now on allocation number fail_at (counting from 0) returns NULL. */
void oom_arm(long fail_at);

/* Stops failing; returns whether a failure was injected (if not, the run
 * needed fewer allocations than fail_at: the exhaustion is complete). */
int oom_disarm(void);

/* For another allocator routed here (jansson's, through
 * json_set_alloc_funcs): 1 when this allocation is the one to fail. */
int oom_refuse(void);

/* Allocations counted since oom_arm(). */
long oom_calls(void);

#endif
