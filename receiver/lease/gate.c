/* gate.c -- what this replica may do now: everything, unless leader election is on */
#include "gate.h"

#include <stdio.h>

static struct gate_ops ops;
static int installed;

void
gate_install(const struct gate_ops *o)
{
    installed = o != NULL;
    if (o != NULL)
        ops = *o;
}

int
gate_leading(void)
{
    return !installed || ops.go_leading(ops.go_arg);
}

enum gate_answer
gate_fence(const struct gate_act *a, gate_fence_fn cb, void *arg, struct gate_wait **w,
           char *why, size_t whylen)
{
    *w = NULL;
    if (!installed)
        return GATE_GO;
    if ((*w = ops.go_fence(a, cb, arg, why, whylen, ops.go_arg)) == NULL)
        return GATE_REFUSED;
    return GATE_WAIT;
}

void
gate_forget(struct gate_wait *w)
{
    if (w != NULL && installed)
        ops.go_forget(w, ops.go_arg);
}
