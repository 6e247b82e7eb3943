#!/usr/bin/env bash
# test_upstream_faults.sh -- Prometheus or the API server broken, as a user sees it.
# Enforcement is on (DRY_RUN=false) and the alert is real: Prometheus down, answering
# garbage or not even HTTP gives skipped_telemetry; the API server down, refusing the
# token (401) or failing (500) gives skipped_kube; /healthz stays 200 and no eviction
# reaches the simulated node. A last case with both upstreams healthy shows the same
# set-up does evict, so "no eviction" above is a real observation.
# (The per-decision matrix is in tests/integration/test_remedy*.c.)
source "$(dirname "$0")/../lib/harness.sh"
source "$(dirname "$0")/lib.sh"

DATA="$GVW_SOURCE_DIR/tests/fault/data"
NODE=gpu-node-1
printf 'sim-token-%s\n' "$RANDOM$RANDOM" >"$TMP/kube-token"
printf 'wrong-token\n' >"$TMP/kube-wrong"
start_sim --token-file "$TMP/kube-token" || { fail "the simulator starts" "$(cat "$TMP/sim.log")"; finish; exit 1; }

start_upstream prom-ok reply 200 "$DATA/prom-sim-incident.json"
PROM_OK=$UP_URL
start_upstream prom-garbage reply 200 "$DATA/garbage.txt"
PROM_GARBAGE=$UP_URL
start_upstream prom-raw raw
PROM_RAW=$UP_URL
start_upstream kube-500 reply 500 "$GVW_TEST_DATA/kube-status-500.json"
KUBE_500=$UP_URL
KUBE_500_OUT=$UP_OUT
CLOSED=http://127.0.0.1:$(free_port)

evictions() {
    curl -s "$SIM/sim/events" |
        jq '[.[] | select((.method == "POST" and (.path | endswith("/eviction"))) or
                          (.method == "DELETE" and (.path | contains("/pods/"))))] | length'
}

# run_case NAME EXPECTED_RESULT PROMETHEUS_URL KUBE_API_URL KUBE_TOKEN_FILE NEEDLE
# (NEEDLE: a piece of the row's reason or error that names the cause)
run_case() {
    local name=$1 expect=$2 fp="fault-$1" row result
    trigger_json "$TMP/trigger-$name.json" "$NODE" "$fp"
    start_serve "$TMP/serve-$name.log" WEBHOOK_TOKEN_FILE="$TMP/token" AUDIT_DB="$TMP/$name.db" \
        DRY_RUN=false SETTLE=2s ADVERTISE_INTERVAL=0 HTTP_TIMEOUT=5s \
        PROMETHEUS_URL="$3" KUBE_API_URL="$4" KUBE_TOKEN_FILE="$5" || return 1
    expect_eq "$name: the trigger is accepted" 200 "$(post "$TMP/trigger-$name.json")"
    wait_for 15 sh -c "'$GVW_BINARY' audit --db '$TMP/$name.db' --format json |
        jq -e '.[0] | .result != \"in_progress\"'"
    row=$(decisions "$TMP/$name.db" | jq -c '.[0]')
    result=$(jq -r .result <<<"$row")
    expect_eq "$name: the decision is $expect" "$expect" "$result"
    expect_contains "$name: the audit row names the cause" "$6" "$(jq -r '"\(.reason) \(.error // "")"' <<<"$row")"
    echo "#   $name: $(jq -r '"\(.result): \(.reason) \(.error // "")"' <<<"$row" | head -c 300)"
    expect_eq "$name: /healthz stays 200" 200 "$(get /healthz)"
    alive "$SERVE_PID" && pass "$name: serve is still running" || fail "$name: serve is still running"
    stop "$SERVE_PID"
}

run_case prometheus-down skipped_telemetry "$CLOSED" "$SIM" "$TMP/kube-token" "connect"
run_case prometheus-garbage skipped_telemetry "$PROM_GARBAGE" "$SIM" "$TMP/kube-token" "not JSON"
run_case prometheus-not-http skipped_telemetry "$PROM_RAW" "$SIM" "$TMP/kube-token" "prometheus:"
run_case apiserver-down skipped_kube "$PROM_OK" "$CLOSED" "$TMP/kube-token" "connect"
run_case apiserver-401 skipped_kube "$PROM_OK" "$SIM" "$TMP/kube-wrong" "HTTP 401"
run_case apiserver-500 skipped_kube "$PROM_OK" "$KUBE_500" "$TMP/kube-token" "HTTP 500"

expect_eq "no eviction or deletion reached the simulated node" 0 "$(evictions)"
expect_eq "none was attempted on the failing API server either" "" \
    "$(grep -E '^(POST .*/eviction|DELETE )' "$KUBE_500_OUT")"

# Control: both upstreams healthy, same alert, same settings -> one eviction.
run_case healthy recycled "$PROM_OK" "$SIM" "$TMP/kube-token" "evicted immich/immich-ml"
expect_eq "control: with healthy upstreams the same alert evicts once" 1 "$(evictions)"
finish
