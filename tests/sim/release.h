/* release.h -- tenants' release endpoints: one listener per annotated pod, on its own
 * loopback IP */
#ifndef GVW_SIM_RELEASE_H
#define GVW_SIM_RELEASE_H

#include <stddef.h>

#include <event2/event.h>

#include "nodefs.h"
#include "world.h"

/* The annotation a tenant declares its release route with (SPEC "Cooperative release").
 */
#define SIM_RELEASE_ANNOTATION "gpu-vram-watchdog/release"

struct releases;

/*
 * For every scenario pod whose SIM_RELEASE_ANNOTATION is a valid "PORT/PATH", binds
 * PORT on a loopback address no one else holds (127.0.0.21 first, then upwards), makes
 * that address the pod's status.podIP, and answers `POST PATH` there by releasing the
 * pod's memory (world_release_pod) with 200. Other values are left alone: the pod keeps
 * its 10.244.1.N address and nobody listens. nf (borrowed, may be NULL) is synced at
 * once when a release frees memory without delay. Returns the set (free it with
 * releases_free()), or NULL with a reason in err.
 */
struct releases *releases_new(struct event_base *base, struct world *w, struct nodefs *nf,
                              char *err, size_t errlen);

/* Stops listening and frees. releases_free(NULL) is a no-op. */
void releases_free(struct releases *rs);

#endif
