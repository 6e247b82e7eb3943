#!/usr/bin/env bash
# test_demo.sh -- scripts/demo.sh as a newcomer runs it (prebuilt binaries): it
# passes, keeps its audit database and ends by saying where it is, whether
# Prometheus still runs, and commands that work; no line reads as a failure,
# and the capacity it tells at start-up is the capacity the seating chart shows.
source "$(dirname "$0")/../lib/harness.sh"

for tool in prometheus prometheus-alertmanager promtool curl jq; do
    command -v "$tool" >/dev/null || { fail "tool $tool is installed" "install it (scripts/install-deps.sh)"; finish; exit 1; }
done

out=$(GVW_DEMO_PREBUILT=1 GVW_DEMO_DIR="$TMP/demo" bash "$GVW_SOURCE_DIR/scripts/demo.sh" 2>&1); rc=$?
expect_eq "the demo exits 0" 0 "$rc"
[ "$rc" -eq 0 ] || printf '%s\n' "$out" | tail -n 40
end=$(printf '%s\n' "$out" | sed -n '/^==> The demo is over/,$p')
db="$TMP/demo/incident-audit.db"
expect_contains "the end names the audit database" "Audit database: $db" "$end"
if [ -s "$db" ]; then pass "the audit database is left behind"; else fail "the audit database is left behind" "$db"; fi
expect_contains "the end says Prometheus stopped (the demo stops what it started)" "Prometheus: stopped (it ran at http://127.0.0.1:" "$end"
cmds=$(printf '%s\n' "$end" | sed -n 's/^  \(.*gpu-vram-watchdog audit .*\)$/\1/p')
expect_eq "two audit commands to try" 2 "$(printf '%s\n' "$cmds" | grep -c .)"
while IFS= read -r c; do
    # shellcheck disable=SC2086 # the printed command, word-split as a shell would
    if o=$($c 2>&1) && printf '%s' "$o" | grep -q 'immich/immich-ml'; then
        pass "'$c' works and shows the recycle"
    else
        fail "'$c' works and shows the recycle" "$o"
    fi
done <<<"$cmds"
expect_contains "and the budgets command to try next" "gpu-vram-watchdog budgets" "$end"
expect_not_contains "no assertion 'ok' line reads as a failure" "ok   - " "$out"
expect_not_contains "no FAIL line" "FAIL" "$out"
told=$(printf '%s\n' "$out" | sed -n 's/^At start-up the watchdog advertised viktorbarzin.me\/gpumem on the node: \([0-9]*\).*/\1/p')
shown=$(printf '%s\n' "$out" | sed -n 's/^  seats *\([0-9]*\) MiB advertised.*/\1/p' | head -n1)
expect_eq "the capacity told is the capacity shown" "13312 13312" "$told $shown"
if printf '%s\n' "$out" | grep -q 'OVER-COMMITTED'; then
    expect_contains "an over-commit shown is explained" "OVER-COMMITTED is expected here" "$out"
fi
finish
