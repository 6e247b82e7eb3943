#!/usr/bin/env bash
# test_front_door.sh -- serve's front door under hostile clients (issue 27, SPEC "HTTP").
# One attack at a time (tests/fault/attack.py) against one real `serve`; under each, the
# attackers get the answer SPEC promises, /healthz answers, a valid webhook gets 200 and is
# stored, and VmHWM stays under the shipped Deployment's 64 Mi limit. serve runs in a
# 64 MiB memory cgroup (v1 or v2) where this machine lets us make one; else it says so.
# Prints a figures table (VmHWM, /healthz p99 and max per attack) for docs/robustness.md.
# GVW_FRONT_DOOR_DEFAULTS=1 keeps the shipped 10 s / 30 s deadlines (slower: the benchmark).
source "$(dirname "$0")/../lib/harness.sh"
ATTACK="$GVW_SOURCE_DIR/tests/fault/attack.py"
LIMIT_KIB=65536

ulimit -n 8192 2>/dev/null || ulimit -n "$(ulimit -Hn)"
printf 'front-door-token\n' >"$TMP/token"
DB="$TMP/audit.db"
if [ -n "${GVW_FRONT_DOOR_DEFAULTS:-}" ]; then
    DEADLINES=() SLOW_LIMIT=40
else
    DEADLINES=(HTTP_HEADER_TIMEOUT=3s HTTP_BODY_TIMEOUT=6s) SLOW_LIMIT=12
fi
for bad in HTTP_MAX_CONNECTIONS=lots HTTP_MAX_PENDING_MIB=0 HTTP_HEADER_TIMEOUT=soon \
    HTTP_BODY_TIMEOUT=5s; do
    err=$(env "$bad" WEBHOOK_TOKEN_FILE="$TMP/token" AUDIT_DB="$DB" LISTEN_ADDR=127.0.0.1:0 \
        timeout 10 "$GVW_BINARY" serve 2>&1 >/dev/null)
    expect_contains "$bad stops start-up naming the setting" "${bad%%=*}" "$err"
done
expect_contains "serve --help lists the front door's settings" HTTP_MAX_PENDING_MIB \
    "$("$GVW_BINARY" serve --help 2>&1)"
start_serve "$TMP/serve.log" WEBHOOK_TOKEN_FILE="$TMP/token" AUDIT_DB="$DB" \
    "${DEADLINES[@]}" || exit 1
expect_eq "a webhook before the attacks is 200" 200 \
    "$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer front-door-token' \
        --data-binary @"$GVW_TEST_DATA/alertmanager-0.25-webhook.json" \
        "http://127.0.0.1:$SERVE_PORT/webhook")"

# Only a build without sanitizers has a meaningful RSS (ASan's shadow and quarantine).
SANITIZED=
ldd "$GVW_BINARY" 2>/dev/null | grep -q 'libasan\|libtsan' && SANITIZED=1
[ -n "$SANITIZED" ] && echo "# SKIPPED the RSS limit checks and the memory cgroup: $GVW_BINARY is sanitized"

# The shipped limit as a memory cgroup around serve, where we may make one.
CG=
if [ -n "$SANITIZED" ]; then
    :
elif [ -d /sys/fs/cgroup/memory ]; then
    base=/sys/fs/cgroup/memory$(awk -F: '$2 == "memory" { print $3 }' /proc/self/cgroup)
    if mkdir "$base/gvw-front-door-$$" 2>/dev/null; then
        CG=$base/gvw-front-door-$$
        echo $((LIMIT_KIB * 1024)) >"$CG/memory.limit_in_bytes" 2>/dev/null &&
            echo "$SERVE_PID" >"$CG/cgroup.procs" 2>/dev/null || CG=
    fi
elif [ -f /sys/fs/cgroup/cgroup.controllers ]; then
    base=/sys/fs/cgroup$(awk -F: '$1 == "0" { print $3 }' /proc/self/cgroup)
    if mkdir "$base/gvw-front-door-$$" 2>/dev/null; then
        CG=$base/gvw-front-door-$$
        echo $((LIMIT_KIB * 1024)) >"$CG/memory.max" 2>/dev/null &&
            echo "$SERVE_PID" >"$CG/cgroup.procs" 2>/dev/null || CG=
    fi
fi
if [ -n "$CG" ]; then
    echo "# serve runs in memory cgroup $CG (64 MiB)"
elif [ -z "$SANITIZED" ]; then
    echo "# SKIPPED the memory cgroup: this machine does not let the test make one"
fi
cg_cleanup() {
    [ -n "$CG" ] || return 0
    kill "$SERVE_PID" 2>/dev/null
    sleep 0.3
    rmdir "$CG" 2>/dev/null
}


FD0=$(ls "/proc/$SERVE_PID/fd" | wc -l)
TAGS=()
FIGURES=()
field() { python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(eval(sys.argv[2], {}, d))' "$1" "$2"; }

attack() { # NAME MODE [attack.py args]: runs it and checks what every attack must leave
    local name=$1 mode=$2 out
    shift 2
    OUT='{"statuses": {}}'
    out=$(python3 "$ATTACK" "$mode" --port "$SERVE_PORT" --pid "$SERVE_PID" \
        --token front-door-token "$@") || { fail "$name: the attack client failed"; return 1; }
    OUT=$out
    expect_eq "$name: serve is still running" 0 "$(kill -0 "$SERVE_PID" 2>/dev/null; echo $?)"
    expect_eq "$name: a valid webhook meanwhile is 200" 200 "$(field "$out" webhook)"
    [ "$(field "$out" webhook)" = 200 ] && TAGS+=("$(field "$out" tag)")
    expect_eq "$name: /healthz answered every probe" 0 "$(field "$out" "healthz['fail']")"
    if [ -z "$SANITIZED" ]; then
        local hwm
        hwm=$(field "$out" vmhwm_kib)
        expect_eq "$name: VmHWM ($hwm KiB) is under the 64 Mi limit" 1 \
            "$([ "$hwm" -lt "$LIMIT_KIB" ] && echo 1 || echo 0)"
    fi
    FIGURES+=("$(printf '| %-44s | %8s | %8s | %8s |' "$name" "$(field "$out" vmhwm_kib)" \
        "$(field "$out" "healthz['p99_ms']")" "$(field "$out" "healthz['max_ms']")")")
}

attack "80 x 1 MiB bodies without a token" unauth --conns 80
expect_eq "every one is 401, from its headers" 80 "$(field "$OUT" "statuses.get('401', 0)")"

attack "1,100 connections trickling header lines" slowhead --conns 1100 --limit "$SLOW_LIMIT"
expect_eq "none is left open past the header deadline" 0 "$(field "$OUT" still_open)"
expect_eq "each was answered 408, or dropped at the connection bound" 1100 \
    "$(field "$OUT" "statuses.get('408', 0) + statuses.get('0', 0)")"

attack "100 authorised bodies trickling a byte a second" slowbody --conns 100 \
    --limit "$((SLOW_LIMIT + 6))"
expect_eq "none is left open past the body deadline" 0 "$(field "$OUT" still_open)"
expect_eq "each is answered 408" 100 "$(field "$OUT" "statuses.get('408', 0)")"

attack "2,000 connections holding 4 KiB unfinished heads" conns --conns 2000
expect_eq "the oldest beyond HTTP_MAX_CONNECTIONS (1024) are dropped" 1 \
    "$(field "$OUT" "1 if dropped_by_server >= 2000 - 1024 else 0")"

attack "80 authorised 512 KiB bodies held half-sent" pending --conns 80
expect_eq "beyond HTTP_MAX_PENDING_MIB new requests get 503" 1 \
    "$(field "$OUT" "1 if statuses.get('503', 0) > 0 else 0")"

attack "two Content-Length headers that differ" dupcl
expect_eq "it is 400" 1 "$(field "$OUT" "statuses.get('400', 0)")"
expect_contains "naming the problem as JSON" '{"error":"two Content-Length headers that differ"}' \
    "$(field "$OUT" answer)"

sleep 3 # refused connections linger up to 2 s
alerts=$("$GVW_BINARY" audit alerts --db "$DB" --format json --limit 0)
expect_not_contains "the refused duplicate Content-Length alert is not stored" '"run":"dupcl"' \
    "$(printf '%s' "$alerts" | tr -d ' ')"
for tag in "${TAGS[@]}"; do
    expect_contains "the acknowledged webhook '$tag' is stored" "\"run\":\"$tag\"" \
        "$(printf '%s' "$alerts" | tr -d ' ')"
done
FD1=$(ls "/proc/$SERVE_PID/fd" | wc -l)
expect_eq "open descriptors are back to where they were ($FD0, now $FD1)" 1 \
    "$([ "$FD1" -le $((FD0 + 4)) ] && echo 1 || echo 0)"

# Seen once in development, never reproduced: libevent declining to free a socket
# bufferevent. The descriptor check above would catch a leak; say it if it shows.
n=$(grep -c 'too few references' "$TMP/serve.log")
[ "$n" -gt 0 ] && echo "# NOTE: libevent warned 'too few references' $n times (see issue 27 report)"
echo "# figures: VmHWM KiB, /healthz p99 and max ms under each attack"
printf '| %-44s | %8s | %8s | %8s |\n' attack VmHWM p99_ms max_ms
for f in "${FIGURES[@]}"; do echo "$f"; done
cg_cleanup
finish
