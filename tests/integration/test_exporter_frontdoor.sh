#!/usr/bin/env bash
# test_exporter_frontdoor.sh -- the exporter's front door under hostile clients (issue 27):
# a POST with a 200 MiB body, 9 KiB of headers, slow headers, 1,500 connections. Each
# attack runs with /healthz probed all along (tests/integration/exporter_attack.py);
# what a user sees is asserted: the refusal, /healthz answering, memory flat.
. "$(dirname "$0")/../lib/harness.sh"
GVW_STUB_NVML=${GVW_STUB_NVML:?the stub libnvidia-ml.so.1}
ATTACK="python3 $GVW_SOURCE_DIR/tests/integration/exporter_attack.py"
command -v python3 >/dev/null || { echo "skipped: no python3"; exit 0; }
mkdir -p "$TMP/proc"
printf 'gpu 0 GPU-0aaa 16106127360 6442450944 Tesla T4\n' >"$TMP/nvml.state"
env NODE_NAME=gpu-node-1 NVML_LIBRARY="$GVW_STUB_NVML" GVW_STUB_NVML_STATE="$TMP/nvml.state" \
    PROC_ROOT="$TMP/proc" KUBE_API_URL= EXPORTER_LISTEN_ADDR=127.0.0.1:0 \
    "$GVW_BINARY" exporter 2>"$TMP/exporter.log" &
EXP_PID=$!
PIDS+=("$EXP_PID")
PORT=
for _ in $(seq 1 100); do
    PORT=$(sed -n 's/.*"msg":"exporter listening".*"port":"\([0-9]*\)".*/\1/p' "$TMP/exporter.log")
    [ -n "$PORT" ] && break
    sleep 0.05
done
[ -n "$PORT" ] || { cat "$TMP/exporter.log"; fail "the exporter starts"; finish; exit 1; }
URL=http://127.0.0.1:$PORT
kib() { awk -v k="$1" '$1 == k":" { print $2 }' "/proc/$EXP_PID/status"; }
field() { jq -r ".$1" <<<"$2"; }

# The ordinary paths still work: GET, HEAD (same length, no body), keep-alive.
len_get=$(curl -s "$URL/metrics" | wc -c)
head=$(curl -s -I "$URL/metrics")
expect_contains "HEAD /metrics: 200" "HTTP/1.1 200" "$head"
expect_contains "with the GET's length" "Content-Length: $len_get" "$head"
expect_eq "two scrapes on one keep-alive connection" "1 0" \
    "$(curl -s -o /dev/null -o /dev/null -w '%{num_connects} ' "$URL/metrics" "$URL/healthz" | xargs)"
expect_eq "an unknown path: 404" 404 "$(curl -s -o /dev/null -w '%{http_code}' "$URL/nope")"
expect_eq "an absolute-form target (RFC 9112 3.2.2) is the same scrape: 200, not 404" \
    "HTTP/1.1 200 OK|EOF|" \
    "$(python3 "$GVW_SOURCE_DIR/tests/lib/raw_http.py" "$PORT" \
        "b'GET http://127.0.0.1/metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'" | tr '\n' '|')"
expect_eq "DELETE: 405" 405 "$(curl -s -o /dev/null -w '%{http_code}' -X DELETE "$URL/metrics")"
expect_contains "which says what is allowed" "Allow: GET, HEAD" "$(curl -s -i -X PUT "$URL/metrics")"
expect_eq "a GET that announces a body: 400, the body unread" 400 \
    "$(curl -s -o /dev/null -w '%{http_code}' -X GET --data-binary 'x=1' "$URL/metrics")"
expect_eq "two differing Content-Length headers: 400" 400 \
    "$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Length: 0' -H 'Content-Length: 5' "$URL/healthz")"
expect_contains "HTTP/1.0 is answered too" "HTTP/1.0 200" "$(curl -s -i -0 "$URL/healthz")"
# Pipelined: the 405 decided from a later request's headers waits for the
# earlier answers (it once went out first and the scrape's answer was dropped).
expect_eq "pipelined GET /metrics, GET /healthz, POST: 200, 200, then the 405" \
    "HTTP/1.1 200 OK|HTTP/1.1 200 OK|HTTP/1.1 405 Method Not Allowed|EOF|" \
    "$(python3 "$GVW_SOURCE_DIR/tests/lib/raw_http.py" "$PORT" \
        "b'GET /metrics HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\nPOST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n'" |
        tr '\n' '|')"

# attack NAME SECONDS: runs it; sets OUT (its JSON) and PEAK (KiB above the RSS before it).
attack() {
    local before
    echo 5 >"/proc/$EXP_PID/clear_refs" 2>/dev/null # VmHWM from now (where permitted)
    before=$(kib VmRSS)
    OUT=$($ATTACK "$PORT" "$1" "$2")
    PEAK=$(($(kib VmHWM) - before))
    echo "# $1: $OUT; RSS before ${before} KiB, peak +${PEAK} KiB"
    kill -0 "$EXP_PID" 2>/dev/null || fail "the exporter survives $1"
}
healthy() { # healthy NAME: /healthz answered every probe during the attack
    expect_eq "$1: /healthz answered every probe" 0 "$(field healthz_failed "$OUT")"
    check_gt "$1: and answered at all" "$(field healthz_ok "$OUT")" 0
}
check_gt() { if [ "$2" -gt "$3" ]; then pass "$1"; else fail "$1" "$2 <= $3"; fi; }
check_le() { if [ "$2" -le "$3" ]; then pass "$1"; else fail "$1" "$2 > $3"; fi; }

# Before: a POST with a 200 MiB body took RSS from 18.8 to 277 MB.
attack post-big 5
expect_eq "POST /metrics with a 200 MiB body: 405 from the headers" \
    "HTTP/1.1 405 Method Not Allowed" "$(field status "$OUT")"
check_le "its body is never held: RSS peak within 16 MiB of before" "$PEAK" 16384
healthy "POST 200 MiB"

attack big-headers 2
expect_eq "9 KiB of headers: refused 431" "HTTP/1.1 431 Request Header Fields Too Large" \
    "$(field status "$OUT")"
healthy "9 KiB headers"

# A header line every 2 s kept evhttp's idle timer alive for ever; the
# deadline is 10 s from the request's first byte.
attack slow-headers 14
expect_eq "slow headers: every connection closed by the server" \
    "$(field opened "$OUT")" "$(field closed_by_server "$OUT")"
check_le "within the 10 s deadline of its first byte (+ the guard's 0.5 s sweep)" \
    "$(field closed_after_max_s "$OUT" | cut -d. -f1)" 11
expect_eq "each told why: 408" "$(field opened "$OUT")" \
    "$(field '"answers"."HTTP/1.1 408 Request Timeout" // 0' "$OUT")"
healthy "slow headers"

attack many 3
check_gt "1,500 connections were opened" "$(field opened "$OUT")" 1000
healthy "1,500 connections"
check_le "their memory is bounded: RSS peak within 32 MiB of before" "$PEAK" 32768
expect_eq "after all that, /metrics answers" 200 "$(curl -s -o /dev/null -w '%{http_code}' "$URL/metrics")"

out=$(NODE_NAME=n EXPORTER_MAX_CONNECTIONS=0 "$GVW_BINARY" exporter 2>&1); rc=$?
expect_eq "EXPORTER_MAX_CONNECTIONS=0 stops start-up" 2 "$rc"
expect_contains "naming it" "EXPORTER_MAX_CONNECTIONS" "$out"
kill -TERM "$EXP_PID"
wait "$EXP_PID"
expect_eq "SIGTERM: exit 0" 0 "$?"
finish
