#!/usr/bin/env python3
"""offcpu_attr.py -- what the intake's slow requests waited on (bench/offcpu.sh).

    offcpu_attr.py TIMEHIST SLOWFILE MAIN_TID TOTAL_REQUESTS

TIMEHIST is `perf sched timehist -p PID --max-stack 16` over a run recorded with
`perf record -k CLOCK_MONOTONIC -a -g -e sched:sched_switch,sched:sched_wakeup`;
SLOWFILE is gvw-load's "start_ns end_ns" lines (-S/-o). For every slow request,
the daemon's threads' time off the CPU inside it is split by cause: waiting for a
CPU (runnable, preempted or woken but not yet running: the machine's load) or
blocked in the kernel (named by the call that slept: fdatasync, a futex, a write
waiting on the inode lock, ...). Time the event loop spent in epoll_wait inside a
request is 'idle in epoll_wait' (the request was still on its way: client side or
loopback). Prints, per cause, in how many slow requests it appeared and the time
it took there, plus the same totals over the whole run per 10,000 requests.
"""
import re
import sys


def cause_of(stack, preempted):
    if preempted:
        return "runqueue (preempted)"
    if "epoll_wait" in stack:
        return "idle in epoll_wait"
    for key, name in (("fdatasync", "fdatasync"), ("fsync", "fsync"),
                      ("futex", "futex (a mutex/condvar)"),
                      ("rwsem", "inode lock (rwsem)"), ("pwrite", "pwrite"),
                      ("pread", "pread"), ("writev", "writev"), ("write", "write"),
                      ("page_fault", "page fault"), ("io_schedule", "block I/O")):
        if key in stack:
            return name
    return "other: " + stack.split("<-")[0].strip()


def main():
    th, slowf, main_tid, total = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    # Per thread: list of (start_ns, end_ns, cause) off-CPU intervals.
    offs = []
    prev = {}
    line_re = re.compile(r"^\s*(\d+\.\d+)\s+\[\d+\]\s+(\S+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*(.*)$")
    with open(th) as f:
        for line in f:
            m = line_re.match(line)
            if not m:
                continue
            t = float(m.group(1)) * 1e9
            task = m.group(2)
            tid = re.search(r"\[(\d+)", task).group(1)
            wait, delay, run = (float(m.group(i)) * 1e6 for i in (3, 4, 5))
            stack = m.group(6)
            run_start = t - run
            p_stack = prev.get(tid)
            if p_stack is not None:
                preempted = any(k in p_stack for k in ("exit_to_user_mode", "irqentry_exit",
                                                         "__cond_resched", "preempt_schedule"))
                if wait > 0:
                    offs.append((run_start - delay - wait, run_start - delay, tid,
                                 cause_of(p_stack, preempted)))
                if delay > 0:
                    offs.append((run_start - delay, run_start, tid, "runqueue (woken, waiting for a CPU)"
                                 if not preempted else "runqueue (preempted)"))
            prev[tid] = stack
    offs.sort()
    slow = []
    with open(slowf) as f:
        for line in f:
            a, b = line.split()
            slow.append((int(a), int(b)))
    if offs:
        lo, hi = offs[0][0], offs[-1][1]
        slow = [s for s in slow if s[0] >= lo and s[1] <= hi]
    # Totals over the run (main thread), per 10,000 requests.
    tot = {}
    for s, e, tid, c in offs:
        if tid != main_tid:
            continue
        d = tot.setdefault(c, [0, 0.0, 0])
        d[0] += 1
        d[1] += e - s
        if e - s > 500e3:
            d[2] += 1
    # Attribution inside slow requests (main thread only: it answers).
    per = {}
    import bisect
    starts = [o[0] for o in offs]
    for s, e in slow:
        seen = {}
        i = max(0, bisect.bisect_left(starts, s - 1e9))
        while i < len(offs) and offs[i][0] < e:
            os_, oe, tid, c = offs[i]
            i += 1
            if tid != main_tid:
                continue
            ov = min(oe, e) - max(os_, s)
            if ov > 0:
                seen[c] = seen.get(c, 0) + ov
        for c, ov in seen.items():
            d = per.setdefault(c, [0, 0.0])
            d[0] += 1
            d[1] += ov
    tslow = sum(e - s for s, e in slow)
    print("SLOW requests=%d (of %d) total_ms=%.1f" % (len(slow), total, tslow / 1e6))
    for c, (n, ns) in sorted(per.items(), key=lambda kv: -kv[1][1]):
        print("SLOWCAUSE %-40s in %5d slow requests, %8.1f ms (%4.1f%% of their time)" %
              (c, n, ns / 1e6, 100 * ns / tslow if tslow else 0))
    for c, (n, ns, big) in sorted(tot.items(), key=lambda kv: -kv[1][1]):
        print("RUNTOTAL %-40s %7.0f per 10k requests, %7.1f ms per 10k, %5.1f over 0.5 ms per 10k" %
              (c, n * 1e4 / total, ns / 1e6 * 1e4 / total, big * 1e4 / total))


main()
