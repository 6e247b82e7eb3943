#!/usr/bin/env bash
# test_overload.sh -- webhooks keep arriving (16 connections, distinct alerts) while the
# store stalls: another writer holds SQLite's write lock for 1.5 s mid-load. Every
# request must get an answer; during the stall that answer is 503 (refuse, so
# Alertmanager retries) rather than a 200 for an alert that was not stored; after it,
# 200 again; and the store then holds exactly the alerts answered 200. Then idle
# connections exhaust its file descriptors: it must stay up and recover when they close.
source "$(dirname "$0")/../lib/harness.sh"
source "$(dirname "$0")/lib.sh"

DB="$TMP/audit.db"
start_serve "$TMP/serve.log" WEBHOOK_TOKEN_FILE="$TMP/token" AUDIT_DB="$DB" || exit 1

load --conns 16 --seconds 4 --prefix ov --log "$TMP/load.log" >"$TMP/load.summary" &
LOAD_PID=$!
PIDS+=("$LOAD_PID")
sleep 1
lock_db "$DB" || fail "the external sqlite3 writer holds the lock"
stamp "store locked"
sleep 0.3
health=$(curl -s -o /dev/null -w '%{http_code} %{time_total}' --max-time 5 "http://127.0.0.1:$SERVE_PORT/healthz")
sleep 1.2
unlock_db
stamp "store unlocked"
wait "$LOAD_PID"
echo "# load: $(cat "$TMP/load.summary")"

expect_eq "/healthz answers 200 during the stall" 200 "${health% *}"
echo "# /healthz under load during the stall took ${health#* } s"
alive "$SERVE_PID" && pass "serve is still running" || fail "serve is still running"

codes=$(cut -d' ' -f2 "$TMP/load.log")
n200=$(grep -cx 200 <<<"$codes")
n503=$(grep -cx 503 <<<"$codes")
total=$(wc -l <"$TMP/load.log")
[ "$n200" -gt 0 ] && pass "alerts were accepted around the stall ($n200)" || fail "alerts were accepted around the stall"
[ "$n503" -gt 0 ] && pass "during the stall webhooks got 503 ($n503)" || fail "during the stall webhooks got 503"
expect_eq "every request got a 200 or a 503 (none unanswered, none dropped)" "$total" "$((n200 + n503))"
# The answers after the last 503 are 200s: the store came back by itself.
after=$(awk '$2 == 503 { last = NR } END { print NR - last }' "$TMP/load.log")
[ "$after" -gt 0 ] && pass "after the stall, 200s again without a restart ($after)" ||
    fail "after the stall, 200s again without a restart"

metrics=$(curl -s "http://127.0.0.1:$SERVE_PORT/metrics")
expect_contains "serve counted the same 200s" "gpu_vram_watchdog_webhook_requests_total{code=\"200\"} $n200" "$metrics"
expect_contains "serve counted the same 503s" "gpu_vram_watchdog_webhook_requests_total{code=\"503\"} $n503" "$metrics"

awk '$2 == 200 { print $1 }' "$TMP/load.log" | sort >"$TMP/acked"
stored_fps "$DB" >"$TMP/stored"
missing=$(comm -23 "$TMP/acked" "$TMP/stored" | wc -l)
extra=$(comm -13 "$TMP/acked" "$TMP/stored" | wc -l)
expect_eq "every alert answered 200 is in the store" 0 "$missing"
expect_eq "no alert answered 503 is in the store" 0 "$extra"
expect_eq "the database is intact" ok "$(sqlite3 "$DB" 'PRAGMA integrity_check')"

# Idle connections exhaust the daemon's file descriptors (its soft RLIMIT_NOFILE is
# lowered to 64, and 80 connections are opened and left idle).
ticks() { awk '{ print $14 + $15 }' "/proc/$SERVE_PID/stat"; }
NOFILE_SOFT=$(prlimit --pid "$SERVE_PID" --nofile --output SOFT --noheadings | tr -d ' ')
prlimit --pid "$SERVE_PID" --nofile=64:
lines0=$(wc -l <"$TMP/serve.log")
IDLE=()
for _ in $(seq 1 80); do exec {fd}<>"/dev/tcp/127.0.0.1/$SERVE_PORT" && IDLE+=("$fd"); done
sleep 0.5
c0=$(ticks)
sleep 1
cpu_ms=$((($(ticks) - c0) * 1000 / $(getconf CLK_TCK)))
alive "$SERVE_PID" && pass "out of file descriptors, serve stays up" || fail "out of file descriptors, serve stays up"
for fd in "${IDLE[@]}"; do exec {fd}>&-; done
prlimit --pid "$SERVE_PID" --nofile="$NOFILE_SOFT:"
wait_for 5 curl -sf --max-time 1 "http://127.0.0.1:$SERVE_PORT/healthz"
expect_eq "once the idle connections close, /healthz answers again" 200 "$(get /healthz)"
expect_eq "and webhooks are accepted again" 200 "$(post "$FIXTURE")"
flood=$(($(wc -l <"$TMP/serve.log") - lines0))
echo "# at the fd limit: ${cpu_ms} ms CPU in 1 s, $flood log lines"
if [ "$cpu_ms" -lt 500 ]; then pass "at the fd limit serve does not spin (${cpu_ms} ms CPU in 1 s)"; else
    fail "at the fd limit serve does not spin" "${cpu_ms} ms CPU in 1 s"; fi
if [ "$flood" -lt 100 ]; then pass "at the fd limit the log does not flood ($flood lines)"; else
    fail "at the fd limit the log does not flood" "$flood lines, e.g. $(tail -n1 "$TMP/serve.log" | head -c 200)"; fi
if grep -v '^{.*}$' "$TMP/serve.log" >/dev/null; then
    fail "every log line is JSON, libevent's included" "$(grep -m1 -v '^{.*}$' "$TMP/serve.log" | head -c 200)"
else
    pass "every log line is JSON, libevent's included"
fi

stop "$SERVE_PID"
finish
