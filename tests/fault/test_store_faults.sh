#!/usr/bin/env bash
# test_store_faults.sh -- the audit store fails under a running `serve`:
#   A. an external writer holds SQLite's write lock (commits stall past the busy timeout),
#   B. the filesystem under the database fills up (a small tmpfs; without the right to
#      mount, RLIMIT_FSIZE on the daemon plays the full disk),
#   C. the database file is removed under the daemon,
#   D. the store stalls at the moment a decision completes.
# What a user must see: POST /webhook answers 503 (Alertmanager retries) and stores
# nothing it did not acknowledge, /healthz stays 200, the process stays up, and once
# the fault clears the webhook is accepted again without a restart.
source "$(dirname "$0")/../lib/harness.sh"
source "$(dirname "$0")/lib.sh"

# phase NAME EXPECT COUNT -- posts COUNT distinct alerts (prefix NAME) and checks that
# every answer was EXPECT; the fingerprints answered 200 are appended to $TMP/acked.
phase() {
    local name=$1 expect=$2 count=$3 codes
    load --conns 1 --count "$count" --prefix "$name" --log "$TMP/$name.log" >/dev/null
    codes=$(cut -d' ' -f2 "$TMP/$name.log" | sort | uniq -c | awk '{printf "%s%sx%s", sep, $1, $2; sep=","}')
    expect_eq "$4" "${count}x$expect" "$codes"
    awk '$2 == 200 { print $1 }' "$TMP/$name.log" >>"$TMP/acked"
}

# stored_match DB NAME -- the stored fingerprints are exactly those answered 200.
stored_match() {
    sort "$TMP/acked" >"$TMP/acked.sorted"
    stored_fps "$1" >"$TMP/stored"
    if cmp -s "$TMP/acked.sorted" "$TMP/stored"; then
        pass "$2 ($(wc -l <"$TMP/stored") alerts)"
    else
        fail "$2" "$(diff "$TMP/acked.sorted" "$TMP/stored" | head -5 | tr '\n' ' ')"
    fi
}

# --- A. an external writer holds the write lock ----------------------------------
DB="$TMP/a.db"
: >"$TMP/acked"
start_serve "$TMP/serve-a.log" WEBHOOK_TOKEN_FILE="$TMP/token" AUDIT_DB="$DB" || exit 1
phase a-before 200 5 "A: alerts are accepted before the fault"
lock_db "$DB" || fail "A: the external sqlite3 writer holds the lock"
t0=$(date +%s%N)
phase a-locked 503 5 "A: while another writer holds the lock, every webhook is 503"
elapsed_ms=$((($(date +%s%N) - t0) / 1000000))
if [ "$elapsed_ms" -lt 5000 ]; then pass "A: the 503s come fast (5 in ${elapsed_ms} ms)"; else
    fail "A: the 503s come fast" "5 took ${elapsed_ms} ms"; fi
expect_eq "A: /healthz stays 200 while the store is locked" 200 "$(get /healthz)"
code=$(post "$FIXTURE")
expect_contains "A: the 503 tells Alertmanager to retry" "retry" "$code $(cat "$TMP/body")"
alive "$SERVE_PID" && pass "A: serve is still running" || fail "A: serve is still running"
unlock_db
phase a-after 200 5 "A: once the lock is released, webhooks are accepted again (no restart)"
expect_contains "A: the 503s are counted" 'gpu_vram_watchdog_webhook_requests_total{code="503"} 6' \
    "$(curl -s "http://127.0.0.1:$SERVE_PORT/metrics")"
stored_match "$DB" "A: the store holds exactly the alerts answered 200"
stop "$SERVE_PID"

# --- B. the filesystem fills up -----------------------------------------------------
FS="$TMP/fs"
mkdir -p "$FS"
MOUNTED=0
fs_cleanup() { [ "$MOUNTED" = 1 ] && umount -l "$FS" 2>/dev/null; MOUNTED=0; }
trap 'for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null; done; wait 2>/dev/null; fs_cleanup; cleanup' EXIT
if [ "${GVW_FAULT_NO_MOUNT:-0}" != 1 ] && mount -t tmpfs -o size=2m,mode=0700 gvw-fault "$FS" 2>/dev/null; then
    MOUNTED=1
    HOW="a full 2 MiB tmpfs"
elif command -v prlimit >/dev/null; then
    HOW="RLIMIT_FSIZE (no right to mount a tmpfs here)"
else
    HOW=
fi
if [ -z "$HOW" ]; then
    echo "skip - B: neither mount nor prlimit is available"
else
    echo "# B: the full disk is $HOW"
    DB="$FS/audit.db"
    : >"$TMP/acked"
    trap '' XFSZ # inherited by serve: a write past RLIMIT_FSIZE fails with EFBIG instead of killing it
    start_serve "$TMP/serve-b.log" WEBHOOK_TOKEN_FILE="$TMP/token" AUDIT_DB="$DB" || exit 1
    trap - XFSZ
    phase b-before 200 5 "B: alerts are accepted before the disk fills"
    if [ "$MOUNTED" = 1 ]; then
        dd if=/dev/zero of="$FS/fill" bs=16k 2>/dev/null
        expect_eq "B: the filesystem is full" 0 "$(df --output=avail -k "$FS" | tail -1 | tr -d ' ')"
    else
        # The soft limit only (raising it back needs no privilege), at the WAL's size.
        FSIZE_SOFT=$(prlimit --pid "$SERVE_PID" --fsize --output SOFT --noheadings | tr -d ' ')
        prlimit --pid "$SERVE_PID" --fsize="$(stat -c %s "$DB-wal"):"
    fi
    phase b-full 503 5 "B: on a full disk every webhook is 503"
    expect_eq "B: /healthz stays 200 on a full disk" 200 "$(get /healthz)"
    alive "$SERVE_PID" && pass "B: serve is still running" || fail "B: serve is still running"
    expect_contains "B: the log names the cause" "webhook batch not stored" "$(cat "$TMP/serve-b.log")"
    if [ "$MOUNTED" = 1 ]; then rm -f "$FS/fill"; else prlimit --pid "$SERVE_PID" --fsize="$FSIZE_SOFT:"; fi
    phase b-after 200 5 "B: once space is back, webhooks are accepted again (no restart)"
    stored_match "$DB" "B: the store holds exactly the alerts answered 200"
    expect_eq "B: the database is intact" ok "$(sqlite3 "$DB" 'PRAGMA integrity_check')"
    stop "$SERVE_PID"
    fs_cleanup
fi

# --- C. the database file is removed under the daemon -------------------------------
mkdir "$TMP/c"
DB="$TMP/c/audit.db"
: >"$TMP/acked"
start_serve "$TMP/serve-c.log" WEBHOOK_TOKEN_FILE="$TMP/token" AUDIT_DB="$DB" || exit 1
phase c-before 200 3 "C: alerts are accepted before the file is removed"
rm -f "$DB" "$DB-wal" "$DB-shm"
: >"$TMP/acked"
# Whatever serve answers now, an alert it answers 200 must be where `audit` looks.
for i in $(seq 1 40); do
    load --conns 1 --count 1 --prefix "c-after-$i" --log "$TMP/c-after.log" >/dev/null
    cat "$TMP/c-after.log" >>"$TMP/c-all.log"
    awk '$2 == 200 { print $1 }' "$TMP/c-after.log" >>"$TMP/acked"
    [ "$(wc -l <"$TMP/acked")" -ge 3 ] && break
    sleep 0.25
done
echo "# C: answers after the removal: $(cut -d' ' -f2 "$TMP/c-all.log" | uniq -c | awk '{printf "%s x%s ", $2, $1}')"
expect_eq "C: after the removal, webhooks are accepted again" 3 "$(wc -l <"$TMP/acked")"
expect_eq "C: every answer was 200 or 503" "" "$(awk '$2 != 200 && $2 != 503' "$TMP/c-all.log")"
expect_contains "C: the log says the file was removed" "reopening it" "$(cat "$TMP/serve-c.log")"
if [ -e "$DB" ]; then
    stored_match "$DB" "C: every alert answered 200 after the removal is in the database at AUDIT_DB"
else
    fail "C: every alert answered 200 after the removal is in the database at AUDIT_DB" \
        "$(wc -l <"$TMP/acked") alerts answered 200, but $DB does not exist"
fi
expect_eq "C: /readyz is 200 again" 200 "$(get /readyz)"
alive "$SERVE_PID" && pass "C: serve is still running" || fail "C: serve is still running"
stop "$SERVE_PID"

# --- D. the store stalls at the moment a decision completes --------------------------
# Prometheus never answers (the query times out after 1 s); meanwhile another writer
# holds the lock, so the decision's completion meets a busy store.
DB="$TMP/d.db"
start_upstream prom-hold hold || fail "D: the silent Prometheus starts"
start_serve "$TMP/serve-d.log" WEBHOOK_TOKEN_FILE="$TMP/token" AUDIT_DB="$DB" \
    PROMETHEUS_URL="$UP_URL" HTTP_TIMEOUT=1s || exit 1
trigger_json "$TMP/trigger.json" gpu-node-1 d-trigger
expect_eq "D: the trigger is accepted" 200 "$(post "$TMP/trigger.json")"
wait_for 5 sh -c "'$GVW_BINARY' audit --db '$DB' --format json | grep -q in_progress"
lock_db "$DB" || fail "D: the external sqlite3 writer holds the lock"
wait_for 5 grep -q '"prometheus query failed"' "$TMP/serve-d.log"
sleep 0.5
unlock_db
wait_for 5 sh -c "'$GVW_BINARY' audit --db '$DB' --format json | jq -e '.[0].result == \"skipped_telemetry\"'"
expect_eq "D: a decision that ended during a store stall is completed in the audit once it clears" \
    skipped_telemetry "$(decisions "$DB" | jq -r '.[0].result')"
expect_eq "D: /healthz is 200" 200 "$(get /healthz)"
stop "$SERVE_PID"

finish
