#!/usr/bin/env bash
# rss.sh -- serve's resident memory over 100,000 webhooks (a leak check by measurement).
# Posts 4 x 25,000 distinct non-trigger alerts (4 keep-alive connections, the faultkit
# load client) and samples VmRSS from /proc/PID/status at 0, 25k, 50k, 75k and 100k.
# Needs a build without sanitizers (ASan's quarantine alone grows RSS by design):
#   tests/fault/rss.sh [BUILD_DIR]     builds BUILD_DIR (default build-rss, RelWithDebInfo)
# or, from ctest, GVW_BINARY/GVW_FAULTKIT set (then nothing is built).
# GVW_RSS_ASSERT=1 (the ctest variant): fail when RSS(100k) > RSS(25k) + 2 MiB.
SRC=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "${GVW_BINARY:-}" ]; then
    BUILD=${1:-$SRC/build-rss}
    cmake -S "$SRC" -B "$BUILD" -DGVW_SANITIZE=OFF >/dev/null || exit 2
    cmake --build "$BUILD" -j"$(nproc)" --target gpu-vram-watchdog gvw-sim gvw-faultkit \
        >"$BUILD/rss-build.log" 2>&1 || { tail -20 "$BUILD/rss-build.log"; exit 2; }
    export GVW_BINARY=$BUILD/gpu-vram-watchdog GVW_FAULTKIT=$BUILD/gvw-faultkit
fi
source "$SRC/tests/lib/harness.sh"
source "$SRC/tests/fault/lib.sh"
BATCH=${GVW_RSS_BATCH:-25000}

rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$SERVE_PID/status"; }

DB="$TMP/audit.db"
start_serve "$TMP/serve.log" WEBHOOK_TOKEN_FILE="$TMP/token" AUDIT_DB="$DB" LOG_FORMAT=json || exit 1
expect_eq "one webhook before the first sample" 200 "$(post "$FIXTURE")"
declare -a RSS
RSS[0]=$(rss_kib)
printf '# %-9s %10s %10s %9s %12s\n' requests VmRSS_KiB delta_KiB req/s db_KiB
printf '# %-9s %10s %10s %9s %12s\n' 0 "${RSS[0]}" 0 - "$(($(stat -c %s "$DB") / 1024))"
for i in 1 2 3 4; do
    t0=$(date +%s%N)
    out=$(load --conns 4 --count "$BATCH" --prefix "rss$i")
    ms=$((($(date +%s%N) - t0) / 1000000))
    expect_contains "batch $i: every webhook answered 200" "ok=$BATCH " "$out "
    RSS[$i]=$(rss_kib)
    printf '# %-9s %10s %10s %9s %12s\n' "$((i * BATCH))" "${RSS[$i]}" "$((RSS[i] - RSS[0]))" \
        "$((BATCH * 1000 / (ms > 0 ? ms : 1)))" "$((($(stat -c %s "$DB") + $(stat -c %s "$DB-wal")) / 1024))"
done
status=$(grep -E '^(VmHWM|VmRSS|RssAnon|RssFile|RssShmem)' "/proc/$SERVE_PID/status" | tr -s ' \t' ' ' | tr '\n' ';')
echo "# at the end: $status"
expect_eq "every alert is stored" $((4 * BATCH + 1)) \
    "$("$GVW_BINARY" audit alerts --db "$DB" --limit 0 --format json | jq length)"
growth=$((RSS[4] - RSS[1]))
echo "# RSS growth from $BATCH to $((4 * BATCH)) requests: $growth KiB"
if [ "${GVW_RSS_ASSERT:-0}" = 1 ]; then
    if [ "$growth" -le 2048 ]; then pass "RSS at 100k <= RSS at 25k + 2 MiB ($growth KiB)"; else
        fail "RSS at 100k <= RSS at 25k + 2 MiB" "grew $growth KiB"; fi
fi
stop "$SERVE_PID"
finish
