#!/usr/bin/env bash
# tail.sh -- the intake's tail latency beside nginx, interleaved (issue #19).
#
#   bench/tail.sh [-r REPS] [-n REQUESTS] [-d SECS] [-c "1 32"] [-w] [NAME=BIN ...]
#
# For each repetition and each connection count, loads nginx `return 200` and then
# each daemon binary given (default: build-bench's) on a fresh database, one after
# another, so every target sees the same machine. Prints one TAIL line per run
# and then, per target and connection count, the medians of req/s, p50, p99 and
# p99.9 and the p99 as a multiple of nginx's p99 in the same repetition (median
# of those ratios). The load average is printed with every repetition: on a
# shared machine the wall-clock figures move with it, the ratios much less.
# Extra daemon settings: TAIL_ENV="K=V K=V".
#
# The client is gvw-load (bench/load.c, REQUESTS per run, CLOCK_MONOTONIC);
# -w uses wrk for SECS per run instead. On this machine's VMs wrk's percentiles
# disagree with the kernel's own timeline: in a run where wrk reported p99 612
# us over 37,138 requests (371 above it), perf sched showed its worker thread
# off or on the CPU for more than 0.5 ms only 57 times (BENCHMARKS.md section 9),
# and any fsync on the machine moves wrk's p99 of nginx from 0.1 to 1.5 ms while
# gvw-load's stays at 0.1. gvw-load agrees with the scheduler trace.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
REPS=3 SECS=5 CONNS="1 32" REQUESTS=50000 CLIENT=load
while getopts r:n:d:c:w o; do
    case $o in r) REPS=$OPTARG ;; n) REQUESTS=$OPTARG ;; d) SECS=$OPTARG ;; c) CONNS=$OPTARG ;;
        w) CLIENT=wrk ;; *) exit 2 ;; esac
done
shift $((OPTIND - 1))
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=("gvw=$ROOT/build-bench/gpu-vram-watchdog")
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
T=$(mktemp -d /tmp/gvw-tail.XXXXXX)
PIDS=()
cleanup() { for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
"$ROOT/bench/payloads.sh" "$T/p"
TOKEN=tail-token-0123456789
printf '%s\n' "$TOKEN" >"$T/token"
port() { echo $((20000 + RANDOM % 40000)); }
wait_up() { for _ in $(seq 1 100); do curl -sf -o /dev/null "$1" && return 0; sleep 0.05; done; return 1; }
LOAD=$ROOT/build-bench/bench/gvw-load
if [ "$CLIENT" = load ] && [ ! -x "$LOAD" ]; then
    mkdir -p "$(dirname "$LOAD")"
    cc -O2 -Wall -Wextra -o "$LOAD" "$ROOT/bench/load.c"
fi
# client PORT CONNS: one run; prints key=value figures (rps p50_us p99_us p999_us)
client() {
    if [ "$CLIENT" = wrk ]; then
        BENCH_PAYLOAD=$T/p/one.json BENCH_TOKEN=$TOKEN wrk -t1 -c"$2" -d"${SECS}"s --latency \
            --timeout 5s -s "$ROOT/bench/webhook.lua" "http://127.0.0.1:$1/webhook" |
            grep '^BENCH' | tr '\n' ' '
    else
        "$LOAD" -p "$1" -n "$REQUESTS" -c "$2" -f "$T/p/one.json" -t "$TOKEN" | tr '\n' ' '
    fi
}
run_nginx() { # CONNS
    local d=$T/nginx p
    p=$(port)
    mkdir -p "$d"
    cat >"$d/nginx.conf" <<E2
worker_processes 1;
daemon off;
pid $d/nginx.pid;
error_log $d/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $d/body;
    proxy_temp_path $d/proxy;
    fastcgi_temp_path $d/fastcgi;
    uwsgi_temp_path $d/uwsgi;
    scgi_temp_path $d/scgi;
    keepalive_requests 100000000;
    server { listen 127.0.0.1:$p; location / { return 200 '{"accepted":1}'; } }
}
E2
    "$NGINX" -c "$d/nginx.conf" -p "$d" &
    local pid=$!
    PIDS+=("$pid")
    wait_up "http://127.0.0.1:$p/"
    client "$p" "$1"
    kill "$pid"; wait "$pid" 2>/dev/null || true
}
run_gvw() { # BIN CONNS
    local p pid try
    for try in 1 2 3; do # a port another process took: start again elsewhere
        p=$(port)
        rm -f "$T"/a.db*
        # shellcheck disable=SC2086
        env LISTEN_ADDR=127.0.0.1:$p WEBHOOK_TOKEN_FILE="$T/token" AUDIT_DB="$T/a.db" \
            PROMETHEUS_URL=http://127.0.0.1:1 KUBE_API_URL= ${TAIL_ENV:-} "$1" serve 2>"$T/serve.log" &
        pid=$!
        PIDS+=("$pid")
        if wait_up "http://127.0.0.1:$p/readyz"; then
            client "$p" "$2"
            kill "$pid"; wait "$pid" 2>/dev/null || true
            return 0
        fi
        kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
        echo "tail.sh: serve did not come up on port $p (try $try): $(tail -n1 "$T/serve.log")" >&2
    done
    echo "failed=1"
}
: >"$T/all"
for r in $(seq 1 "$REPS"); do
    echo "REP $r load $(cut -d' ' -f1-3 /proc/loadavg)"
    for c in $CONNS; do
        echo "TAIL rep=$r target=nginx conns=$c $(run_nginx "$c")" | tee -a "$T/all"
        for t in "${TARGETS[@]}"; do
            echo "TAIL rep=$r target=${t%%=*} conns=$c $(run_gvw "${t#*=}" "$c")" | tee -a "$T/all"
        done
    done
done
echo "END load $(cut -d' ' -f1-3 /proc/loadavg) client $CLIENT"
python3 - "$T/all" <<'PY'
import re, sys, statistics as st
rows = [dict(re.findall(r"(\w+)=([\w.]+)", l)) for l in open(sys.argv[1])]
rows = [r for r in rows if "rps" in r]  # a run that could not start is left out
med = lambda xs: st.median(xs) if xs else float("nan")
ngx = {(r["rep"], r["conns"]): r for r in rows if r["target"] == "nginx"}
print("| target | conns | req/s | p50 ms | p99 ms | p99.9 ms | req/s ÷ nginx | p99 ÷ nginx p99 |")
print("|---|---|---|---|---|---|---|---|")
for t in dict.fromkeys(r["target"] for r in rows):
    for c in dict.fromkeys(r["conns"] for r in rows):
        rs = [r for r in rows if r["target"] == t and r["conns"] == c]
        if not rs: continue
        n = [ngx[(r["rep"], c)] for r in rs]
        print("| %s | %s | %.0f | %.2f | %.2f | %.2f | %.2f | %.1f |" % (t, c,
            med([float(r["rps"]) for r in rs]), med([int(r["p50_us"]) / 1e3 for r in rs]),
            med([int(r["p99_us"]) / 1e3 for r in rs]), med([int(r["p999_us"]) / 1e3 for r in rs]),
            med([float(r["rps"]) / float(x["rps"]) for r, x in zip(rs, n)]),
            med([int(r["p99_us"]) / int(x["p99_us"]) for r, x in zip(rs, n)])))
PY
