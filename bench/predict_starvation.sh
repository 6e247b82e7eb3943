#!/usr/bin/env bash
# predict_starvation.sh -- starvation seconds with and without PREDICT (issue #29).
#
#   GVW_BINARY=build/gpu-vram-watchdog GVW_SIM=build/gvw-sim \
#   GVW_STUB_NVML=build/stub-nvml/libnvidia-ml.so.1 bench/predict_starvation.sh [CASES...]
#
# CASES: 20, 50, 200 (a drift of that many MiB/s) and jump (a one-off jump of
# 6000 MiB); default all four. Each case runs twice, PREDICT=false then
# PREDICT=true, each on a fresh stack (tests/lib/stack.sh: the simulator, the
# real exporter on the stub NVML, Prometheus with the shipped rules at the test
# clock -- scrape and evaluation 1 s, every for: 2s -- Alertmanager, serve
# enforcing). One 15360 MiB T4 (300 MiB driver reserve); the runaway tenant
# (budget 3000) is joined by a steady one; the device's free starts 40 s of
# drift above the 1536 MiB floor (the jump: at t=20 s, to 560 MiB free).
# Starvation is measured on the simulator's own device figure, sampled five
# times a second: the seconds with free < floor until it is back above it
# (the run ends 8 s after the eviction, or after 90 s without one).
# Prints one table row per case.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CASES=("$@")
[ ${#CASES[@]} -eq 0 ] && CASES=(20 50 200 jump)

one() { # CASE PREDICT -> "starvation_s eviction_t min_free"
    (
        export E2E_TIME_SCALE=1 GVW_SOURCE_DIR=$ROOT
        source "$ROOT/tests/lib/harness.sh" >/dev/null
        source "$ROOT/tests/lib/stack.sh"
        local rate=$1 predict=$2 timeline start
        if [ "$rate" = jump ]; then
            timeline='[[0, 3000], [20, 3000], [20.01, 11900]]'
        else
            # free at t=0 = 15360 - 300 - (3300 + 2300 + 300) + ... : start the
            # runaway so the floor is 40 s of drift away.
            start=$(awk -v r="$rate" 'BEGIN { printf "%d", 15360 - 300 - 2300 - 300 - 1536 - r * 40 }')
            timeline="[[0, $start], [400, $((start + rate * 400))]]"
        fi
        cat >"$TMP/scenario.json" <<JSON
{"description": "bench: runaway $rate", "gpus": [{"uuid": "GPU-be0c0000-0000-4000-8000-000000000000", "model": "T4"}],
 "respawn_after": 5, "seed": 29,
 "pods": [
  {"namespace": "ml", "name": "runaway-6c9d8f7b5-a1b2c", "budget": 3000,
   "processes": [{"pid": 3001, "comm": "python3", "timeline": $timeline, "interp": "linear"}]},
  {"namespace": "web", "name": "steady-5b6c7d8e9-g5h6i", "budget": 2500,
   "processes": [{"pid": 3002, "comm": "python3", "mib": 2000}]}]}
JSON
        stack_sim "$TMP/scenario.json" >/dev/null
        ( while :; do curl -s "$SIM/sim/state" | jq -r '"\(.t) \(.gpus[0].free_mib)"' 2>/dev/null; sleep 0.2; done >"$TMP/free.log" ) &
        PIDS+=($!)
        stack_exporter gpu-node-1 >/dev/null
        stack_prometheus >/dev/null
        stack_serve PREDICT="$predict" \
            USED_QUERY='sum by (namespace, pod, uuid) (gpu_pod_memory_used_bytes{node="$node"})' >/dev/null
        stack_alerting >/dev/null
        evicted() { [ "$(evictions | jq 'length')" -ge 1 ]; }
        wait_for 90 evicted
        ev_t=$(evictions | jq -r '.[0].t // "none"')
        [ "$ev_t" != none ] && sleep 8
        # The decisions, for the record (stderr).
        "$GVW_BINARY" audit --db "$DB" --format json --limit 0 |
            jq -r --arg p "$predict" '.[] | "PREDICT=\($p) #\(.id) \(.trigger) \(.result): \(.reason)"' >&2
        awk -v f=1536 -v ev="$ev_t" '
            $2 == "null" { next }
            { if (n++ && pf < f) starve += $1 - pt; pt = $1; pf = $2; if (min == "" || $2 < min) min = $2 }
            END { printf "%.1f %s %.0f\n", starve, ev, min }' "$TMP/free.log"
    )
}

printf '| case | PREDICT=false: starvation s | eviction at s | PREDICT=true: starvation s | eviction at s | min free (true) MiB |\n'
printf '|---|---|---|---|---|---|\n'
for c in "${CASES[@]}"; do
    read -r s0 e0 _ < <(one "$c" false)
    read -r s1 e1 m1 < <(one "$c" true)
    label=$([ "$c" = jump ] && echo "jump to 560 MiB free at t=20 s" || echo "drift $c MiB/s")
    printf '| %s | %s | %s | %s | %s | %s |\n' "$label" "$s0" "$e0" "$s1" "$e1" "$m1"
done
