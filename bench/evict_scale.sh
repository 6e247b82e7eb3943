#!/usr/bin/env bash
# evict_scale.sh -- 200 -> eviction on a 5,000-pod node, binaries interleaved (issue #19).
#
#   bench/evict_scale.sh [-r RUNS] [-n N] [-W WARMUP] [-g GAP_MS] [-d DIR] BINARY...
#
# For each of RUNS rounds, runs every BINARY once (in the order given): gvw-decide
# (build-bench/bench/gvw-decide) answers every pod list and query with the big node's
# bodies (bench/gen_scale.sh DIR 5000 4, written when DIR has none), serve runs as in
# BENCHMARKS.md section 2 (DRY_RUN=false SETTLE=0 MAX_RECYCLES_PER_HOUR=0 MIN_RUNTIME=0).
# -g: gvw-decide waits GAP_MS after each eviction, so a decision's window holds
# none of the previous one's verification and audit writes (0: back to back).
# Prints the load average, the serve's CPU time (user, system, minor page
# faults; start-up included) and each run's DECIDE line, labelled with the binary.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DECIDE=$ROOT/build-bench/bench/gvw-decide
RUNS=3 N=100 W=10 GAP=0 DIR=/tmp/evs
while getopts "r:n:W:g:d:" opt; do
    case $opt in
    r) RUNS=$OPTARG ;;
    n) N=$OPTARG ;;
    W) W=$OPTARG ;;
    g) GAP=$OPTARG ;;
    d) DIR=$OPTARG ;;
    *) echo "usage: bench/evict_scale.sh [-r RUNS] [-n N] [-W WARMUP] [-g GAP_MS] [-d DIR] BINARY..." >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "evict_scale.sh: name at least one gpu-vram-watchdog binary" >&2; exit 2; }
[ -f "$DIR/pods.json" ] || "$ROOT/bench/gen_scale.sh" "$DIR" 5000 4

TMP=$(mktemp -d /tmp/gvw-evs.XXXXXX)
DPID= SPID=
cleanup() {
    [ -n "$SPID" ] && kill "$SPID" 2>/dev/null || true
    [ -n "$DPID" ] && kill "$DPID" 2>/dev/null || true
    wait 2>/dev/null || true
    [ -n "${KEEP:-}" ] && echo "kept $TMP" >&2 || rm -rf "$TMP"
}
trap cleanup EXIT
TOKEN=bench-token-$$-0123456789
printf '%s\n' "$TOKEN" >"$TMP/token"
printf 'kube-token\n' >"$TMP/ktoken"
free_port() {
    local p
    for _ in $(seq 1 200); do
        p=$((20000 + RANDOM % 40000))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
            echo "$p"
            return 0
        fi
    done
    return 1
}

for r in $(seq 1 "$RUNS"); do
    for bin in "$@"; do
        fport=$(free_port)
        sport=$(free_port)
        rm -f "$TMP/d.db"*
        "$DECIDE" -l "$fport" -w "$sport" -t "$TOKEN" -n "$N" -W "$W" -g "$GAP" \
            -P "$DIR/pods.json" -Q "$DIR/prom.json" >"$TMP/out" 2>&1 &
        DPID=$!
        sleep 0.2
        env LISTEN_ADDR=127.0.0.1:$sport WEBHOOK_TOKEN_FILE="$TMP/token" AUDIT_DB="$TMP/d.db" \
            PROMETHEUS_URL=http://127.0.0.1:$fport KUBE_API_URL=http://127.0.0.1:$fport \
            KUBE_TOKEN_FILE="$TMP/ktoken" DRY_RUN=false SETTLE=0 MAX_RECYCLES_PER_HOUR=0 \
            MIN_RUNTIME=0 "$bin" serve 2>"$TMP/serve.log" &
        SPID=$!
        wait "$DPID" || { echo "gvw-decide failed:" >&2; cat "$TMP/out" >&2; }
        DPID=
        cpu=$(awk -v t="$(getconf CLK_TCK)" '{printf "serve_cpu_ms user=%d sys=%d minflt=%d", $14 * 1000 / t, $15 * 1000 / t, $10}' "/proc/$SPID/stat" 2>/dev/null || echo "serve_cpu_ms ?")
        kill "$SPID" 2>/dev/null || true
        wait "$SPID" 2>/dev/null || true
        SPID=
        echo "run $r $bin load $(cut -d' ' -f1-3 /proc/loadavg) $cpu $(grep '^DECIDE' "$TMP/out" || echo 'DECIDE failed')"
    done
done
