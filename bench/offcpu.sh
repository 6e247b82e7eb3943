#!/usr/bin/env bash
# offcpu.sh -- what the intake's slow requests wait on (issue #19).
#
#   bench/offcpu.sh [-c CONNS] [-n REQUESTS] [-S SLOW_US] [BIN] [ENV=VALUE...]
#
# Starts `serve` (fresh database, as bench/run.sh section 1) on loopback, records
# every context switch of the machine (perf sched, CLOCK_MONOTONIC, kernel stacks)
# while gvw-load sends REQUESTS one-alert webhooks over CONNS connections and
# logs each request slower than SLOW_US, then bench/offcpu_attr.py splits the
# time the daemon's event loop spent off the CPU inside those slow requests by
# cause (runqueue = the machine's load; fdatasync, futex, ... = the daemon's
# own waits). Needs root (perf). Builds nothing: run bench/run.sh once first, or
# give BIN. Wall-clock figures move with the machine's load; the causes do not.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
C=1 N=20000 SLOW=1000
while getopts c:n:S: o; do
    case $o in c) C=$OPTARG ;; n) N=$OPTARG ;; S) SLOW=$OPTARG ;; *) exit 2 ;; esac
done
shift $((OPTIND - 1))
BIN=$ROOT/build-bench/gpu-vram-watchdog
if [ $# -gt 0 ] && [ "${1#*=}" = "$1" ]; then BIN=$1; shift; fi
LOAD=$ROOT/build-bench/bench/gvw-load
T=$(mktemp -d /tmp/gvw-offcpu.XXXXXX)
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
"$ROOT/bench/payloads.sh" "$T/p"
printf 'offcpu-token-0123456789\n' >"$T/token"
PORT=$((20000 + RANDOM % 40000))
env LISTEN_ADDR=127.0.0.1:$PORT WEBHOOK_TOKEN_FILE="$T/token" AUDIT_DB="$T/a.db" \
    PROMETHEUS_URL=http://127.0.0.1:1 KUBE_API_URL= "$@" "$BIN" serve 2>"$T/serve.log" &
PID=$!
for _ in $(seq 1 100); do
    curl -sf -o /dev/null "http://127.0.0.1:$PORT/readyz" && break
    sleep 0.05
done
"$LOAD" -p "$PORT" -n 2000 -c "$C" -f "$T/p/one.json" -t offcpu-token-0123456789 >/dev/null
echo "OFFCPU conns=$C requests=$N slow_us=$SLOW load=$(cut -d' ' -f1-3 /proc/loadavg) bin=$BIN $*"
perf record -q -k CLOCK_MONOTONIC -a -g -e sched:sched_switch -e sched:sched_wakeup \
    -o "$T/perf.data" 2>/dev/null &
REC=$!
sleep 0.3
"$LOAD" -p "$PORT" -n "$N" -c "$C" -f "$T/p/one.json" -t offcpu-token-0123456789 \
    -S "$SLOW" -o "$T/slow.txt"
kill -INT $REC
wait $REC || true
perf sched timehist -i "$T/perf.data" -p "$PID" --max-stack 16 2>/dev/null >"$T/th.txt"
python3 "$ROOT/bench/offcpu_attr.py" "$T/th.txt" "$T/slow.txt" "$PID" "$N"
