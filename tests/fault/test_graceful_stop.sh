#!/usr/bin/env bash
# test_graceful_stop.sh -- issue #20: a stop never leaves a decision open, and a
# recycle is in the audit the moment it happens. Enforcing against the simulated
# node, with a Prometheus that keeps reporting the incident (so the verify window,
# SETTLE=60s, stays open): the eviction reaches the API server, then
# - SIGTERM inside the verify window: serve exits promptly and `audit --format
#   json` names the victim and the action, result recycled, the verify cut short;
# - kill -9 inside the verify window: the row already names the victim; the next
#   start counts it among the interrupted decisions and the audit says so;
# - SIGTERM while the decision still gathers (Prometheus holds the query): the row
#   ends failed, "interrupted", nothing recycled.
source "$(dirname "$0")/../lib/harness.sh"
source "$(dirname "$0")/lib.sh"

DATA="$GVW_SOURCE_DIR/tests/fault/data"
NODE=gpu-node-1
UNVERIFIED="interrupted: the daemon stopped before the verify finished; the recycle itself happened"
INTERRUPTED="interrupted: the daemon stopped before this decision finished"
printf 'sim-token-%s\n' "$RANDOM$RANDOM" >"$TMP/kube-token"
start_sim --token-file "$TMP/kube-token" || { fail "the simulator starts" "$(cat "$TMP/sim.log")"; finish; exit 1; }
start_upstream prom-incident reply 200 "$DATA/prom-sim-incident.json"
PROM_INCIDENT=$UP_URL
start_upstream prom-hold hold
PROM_HOLD=$UP_URL

evictions() {
    curl -s "$SIM/sim/events" |
        jq '[.[] | select(.method == "POST" and (.path | endswith("/eviction")))] | length'
}

# serve_on NAME DB PROMETHEUS_URL -- enforcing serve on the simulator.
serve_on() {
    start_serve "$TMP/serve-$1.log" WEBHOOK_TOKEN_FILE="$TMP/token" AUDIT_DB="$2" \
        DRY_RUN=false SETTLE=60s ADVERTISE_INTERVAL=0 HTTP_TIMEOUT=5s \
        PROMETHEUS_URL="$3" KUBE_API_URL="$SIM" KUBE_TOKEN_FILE="$TMP/kube-token"
}

# row DB FP -- the decision of trigger FP.
row() { decisions "$1" | jq -c ".[] | select(.fingerprint == \"$2\")"; }

# --- 1. SIGTERM inside the verify window ------------------------------------
serve_on term "$TMP/term.db" "$PROM_INCIDENT" || exit 1
trigger_json "$TMP/t1.json" "$NODE" stop-term
expect_eq "term: the trigger is accepted" 200 "$(post "$TMP/t1.json")"
wait_for 15 sh -c "[ \"\$(curl -s '$SIM/sim/events' | jq '[.[] | select(.path | endswith(\"/eviction\"))] | length')\" -ge 1 ]"
expect_eq "term: the eviction reached the API server" 1 "$(evictions)"
wait_for 5 sh -c "'$GVW_BINARY' audit --db '$TMP/term.db' --format json | jq -e '.[0].result == \"recycled\"'"
d=$(row "$TMP/term.db" stop-term)
expect_eq "term: before any verify, the row already reads recycled" recycled "$(jq -r .result <<<"$d")"
expect_eq "term: ... names the victim" immich "$(jq -r '.victim.namespace // "null"' <<<"$d")"
expect_eq "term: ... and its verify is still null" null "$(jq -c .verify <<<"$d")"
alive "$SERVE_PID" && pass "term: serve is still inside the verify window" ||
    fail "term: serve is still inside the verify window"
t0=$(date +%s%N)
kill -TERM "$SERVE_PID"
wait "$SERVE_PID" 2>/dev/null
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
expect_eq "term: SIGTERM exits 0" 0 "$rc"
[ "$ms" -lt 5000 ] && pass "term: and promptly (${ms} ms)" || fail "term: and promptly" "${ms} ms"
d=$(row "$TMP/term.db" stop-term)
echo "#   $(jq -r '"\(.result): \(.reason) | error: \(.error)"' <<<"$d" | head -c 400)"
expect_eq "term: result recycled, not in_progress" recycled "$(jq -r .result <<<"$d")"
expect_eq "term: action evict" evict "$(jq -r .action <<<"$d")"
expect_contains "term: the victim is named" '"pod":"immich-ml' "$(jq -c .victim <<<"$d")"
expect_contains "term: the reason says the verify was cut short" "verify cut short" "$(jq -r .reason <<<"$d")"
expect_contains "term: ... because the daemon stopped" "the daemon stopped" "$(jq -r .reason <<<"$d")"
expect_eq "term: the verify keeps the free VRAM seen so far" true \
    "$(jq '.verify == null or (.verify.free_mib | type == "number")' <<<"$d")"
expect_eq "term: no decision is left in_progress" 0 \
    "$(decisions "$TMP/term.db" | jq '[.[] | select(.result == "in_progress")] | length')"
expect_contains "term: the log says the row was completed" '"result":"recycled"' \
    "$(grep '"msg":"decision"' "$TMP/serve-term.log")"

# --- 2. kill -9 inside the verify window ------------------------------------
# A fresh node: the evicted pod is gone from the first one.
kill "$SIM_PID" 2>/dev/null
wait "$SIM_PID" 2>/dev/null
start_sim --token-file "$TMP/kube-token" || { fail "the simulator restarts" "$(cat "$TMP/sim.log")"; finish; exit 1; }
serve_on kill "$TMP/kill.db" "$PROM_INCIDENT" || exit 1
trigger_json "$TMP/t2.json" "$NODE" stop-kill
expect_eq "kill: the trigger is accepted" 200 "$(post "$TMP/t2.json")"
wait_for 15 sh -c "'$GVW_BINARY' audit --db '$TMP/kill.db' --format json | jq -e '.[0].result == \"recycled\"'"
expect_eq "kill: the eviction reached the API server" 1 "$(evictions)"
kill -9 "$SERVE_PID"
wait "$SERVE_PID" 2>/dev/null
d=$(row "$TMP/kill.db" stop-kill)
expect_eq "kill: after kill -9 the row reads recycled" recycled "$(jq -r .result <<<"$d")"
expect_contains "kill: ... and names the victim" '"pod":"immich-ml' "$(jq -c .victim <<<"$d")"
expect_eq "kill: ... with action evict" evict "$(jq -r .action <<<"$d")"
serve_on kill-restart "$TMP/kill.db" "$PROM_INCIDENT" || exit 1
expect_contains "kill: the restart counts it among the interrupted decisions" \
    '"interrupted_decisions":"1"' "$(grep '"msg":"audit store open"' "$TMP/serve-kill-restart.log")"
stop "$SERVE_PID"
d=$(row "$TMP/kill.db" stop-kill)
expect_eq "kill: the audit says the verify never finished" "$UNVERIFIED" "$(jq -r .error <<<"$d")"
expect_eq "kill: and still names the victim" immich "$(jq -r '.victim.namespace // "null"' <<<"$d")"
expect_contains "kill: the table shows it too" "$UNVERIFIED" \
    "$("$GVW_BINARY" audit show "$(jq -r .id <<<"$d")" --db "$TMP/kill.db")"

# --- 3. SIGTERM while the decision gathers ----------------------------------
serve_on gather "$TMP/gather.db" "$PROM_HOLD" || exit 1
trigger_json "$TMP/t3.json" "$NODE" stop-gather
expect_eq "gather: the trigger is accepted" 200 "$(post "$TMP/t3.json")"
wait_for 5 grep -q '^GET /api/v1/query' "$UP_OUT"
t0=$(date +%s%N)
kill -TERM "$SERVE_PID"
wait "$SERVE_PID" 2>/dev/null
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
expect_eq "gather: SIGTERM exits 0" 0 "$rc"
[ "$ms" -lt 2000 ] && pass "gather: at once (${ms} ms)" || fail "gather: at once" "${ms} ms"
d=$(row "$TMP/gather.db" stop-gather)
expect_eq "gather: the decision ends failed, not in_progress" failed "$(jq -r .result <<<"$d")"
expect_eq "gather: it says it was interrupted" "$INTERRUPTED" "$(jq -r .error <<<"$d")"
expect_contains "gather: and that nothing was recycled" "nothing was recycled" "$(jq -r .reason <<<"$d")"
expect_eq "gather: no victim" null "$(jq -c .victim <<<"$d")"
finish
