#!/usr/bin/env bash
# test_durability.sh -- `kill -9` under sustained webhook load, three times over, then a
# SIGTERM under load, each time restarting on the same AUDIT_DB. The first round also has a decision in flight
# (its Prometheus query held open by an upstream that never answers). After the last
# restart: every alert that was answered 200 is in the store, the database passes
# PRAGMA integrity_check, and the interrupted decision reads in_progress with the
# "interrupted" error in `audit --format json`.
source "$(dirname "$0")/../lib/harness.sh"
source "$(dirname "$0")/lib.sh"

DB="$TMP/audit.db"
SIGNALS=(KILL KILL KILL TERM)
DELAYS=(0.5 0.7 0.9 0.6) # seconds of load before the signal
ROUNDS=${#SIGNALS[@]}
INTERRUPTED="interrupted: the daemon stopped before this decision finished"
start_upstream prom-hold hold || { fail "the silent Prometheus starts"; finish; exit 1; }
: >"$TMP/all.log"

for round in $(seq 1 $ROUNDS); do
    start_serve "$TMP/serve-$round.log" WEBHOOK_TOKEN_FILE="$TMP/token" AUDIT_DB="$DB" \
        PROMETHEUS_URL="$UP_URL" HTTP_TIMEOUT=60s || exit 1
    expect_eq "round $round: serve is ready on the database the last one left" 200 "$(get /readyz)"
    load --conns 8 --seconds 20 --prefix "r$round" --log "$TMP/load-$round.log" \
        >"$TMP/load-$round.summary" &
    LOAD_PID=$!
    PIDS+=("$LOAD_PID")
    if [ "$round" = 1 ]; then
        sleep 0.3
        trigger_json "$TMP/trigger.json" gpu-node-1 durability-trigger
        expect_eq "round 1: the trigger alert is accepted under load" 200 "$(post "$TMP/trigger.json")"
        wait_for 10 sh -c "'$GVW_BINARY' audit --db '$DB' --format json |
            jq -e '.[] | select(.fingerprint == \"durability-trigger\" and .result == \"in_progress\")'"
        wait_for 5 grep -q '^GET /api/v1/query' "$UP_OUT"
        expect_contains "round 1: the decision is waiting on Prometheus" "GET /api/v1/query" "$(cat "$UP_OUT")"
    fi
    # Kill at a different moment of the load each round.
    sleep "${DELAYS[$((round - 1))]}"
    sig=${SIGNALS[$((round - 1))]}
    if alive "$LOAD_PID"; then pass "round $round: the load is running when serve gets SIG$sig"; else
        fail "round $round: the load is running when serve gets SIG$sig"; fi
    t0=$(date +%s%N)
    kill -"$sig" "$SERVE_PID"
    wait "$SERVE_PID" 2>/dev/null
    rc=$?
    stamp "round $round: serve stopped by SIG$sig (exit $rc)"
    if [ "$sig" = TERM ]; then
        expect_eq "round $round: SIGTERM under load exits 0" 0 "$rc"
        ms=$((($(date +%s%N) - t0) / 1000000))
        [ "$ms" -lt 2000 ] && pass "round $round: and within 2 s (${ms} ms)" ||
            fail "round $round: and within 2 s" "${ms} ms"
    fi
    wait "$LOAD_PID"
    echo "# round $round: $(cat "$TMP/load-$round.summary")"
    cat "$TMP/load-$round.log" >>"$TMP/all.log"
done

start_serve "$TMP/serve-final.log" WEBHOOK_TOKEN_FILE="$TMP/token" AUDIT_DB="$DB" || exit 1
expect_eq "after the last kill, serve starts and is ready" 200 "$(get /readyz)"

for round in $(seq 1 $ROUNDS); do
    awk '$2 != 200 { print $1 }' "$TMP/load-$round.log" | sort >"$TMP/unacked-$round"
    echo "# round $round (SIG${SIGNALS[$((round - 1))]}): $(wc -l <"$TMP/unacked-$round") requests unanswered," \
        "$(stored_fps "$DB" | comm -12 "$TMP/unacked-$round" - | wc -l) of them stored"
done
awk '$2 == 200 { print $1 }' "$TMP/all.log" | sort >"$TMP/acked"
awk '$2 != 200 { print $1 }' "$TMP/all.log" | sort >"$TMP/unacked"
stored_fps "$DB" >"$TMP/stored"
n_acked=$(wc -l <"$TMP/acked")
missing=$(comm -23 "$TMP/acked" "$TMP/stored" | wc -l)
unacked_stored=$(comm -12 "$TMP/unacked" "$TMP/stored" | wc -l)
echo "# $n_acked alerts answered 200 over $ROUNDS rounds (${SIGNALS[*]}); $(wc -l <"$TMP/unacked") got no answer" \
    "(of which $unacked_stored were stored anyway: committed, then killed before the answer)"
[ "$n_acked" -gt 100 ] && pass "the load was sustained ($n_acked alerts answered 200)" ||
    fail "the load was sustained" "only $n_acked alerts answered 200"
expect_eq "every alert answered 200 is in the store after the kills" 0 "$missing"
comm -23 "$TMP/acked" "$TMP/stored" | head -3
expect_eq "no fingerprint is stored twice" "" "$(uniq -d "$TMP/stored" | head -3)"
expect_eq "unanswered requests were only those in flight at a kill (none refused)" "" \
    "$(awk '$2 != 200 && $2 != 0' "$TMP/all.log" | head -3)"

d=$(decisions "$DB" | jq -c '.[] | select(.fingerprint == "durability-trigger")')
expect_eq "the interrupted decision still reads in_progress" in_progress "$(jq -r .result <<<"$d")"
expect_eq "and says why it never finished" "$INTERRUPTED" "$(jq -r .error <<<"$d")"
expect_eq "it is the only decision" 1 "$(decisions "$DB" | jq length)"

expect_eq "a webhook after the restarts is accepted" 200 "$(post "$FIXTURE")"
expect_eq "the database is intact" ok "$(sqlite3 "$DB" 'PRAGMA integrity_check')"
stop "$SERVE_PID"
expect_eq "the database is intact after a clean stop" ok "$(sqlite3 "$DB" 'PRAGMA integrity_check')"
finish
