#!/usr/bin/env bash
# test_predict.sh -- end to end: the predictive trigger (issue #29) through the
# simulator, the real exporter on the stub NVML, Prometheus with the shipped
# rules (for: shortened), Alertmanager and serve with PREDICT=true.
#
# GPU 0: a tenant drifting at 50 MiB/s is recycled BEFORE the device's free
# memory reaches the floor (the simulator's own figures, sampled throughout,
# never go below it before the eviction). GPU 1: a one-off step that then
# stays flat makes GPUVRAMExhaustionPredicted fire, and nobody is recycled.
export E2E_TIME_SCALE=1 # scenario seconds are real seconds: 50 MiB/s is 50 MiB/s
source "$(dirname "$0")/../lib/harness.sh"
source "$(dirname "$0")/../lib/stack.sh"

SCENARIO="$GVW_SOURCE_DIR/tests/sim/scenarios/predict-drift.json"
GPU0=GPU-9a0b1c2d-0000-4000-8000-000000000000
GPU1=GPU-9a0b1c2d-0000-4000-8000-000000000001
FLOOR=1536
stack_require_tools

stack_sim "$SCENARIO"
# The simulator's own device figures, five times a second, for the whole run.
( while :; do
    curl -s "$SIM/sim/state" | jq -r '"\(.t) \(.gpus[0].free_mib) \(.gpus[1].free_mib)"' 2>/dev/null
    sleep 0.2
  done >"$TMP/free.log" ) &
PIDS+=($!)
stack_exporter gpu-node-1
stack_prometheus
stack_serve PREDICT=true \
    USED_QUERY='sum by (namespace, pod, uuid) (gpu_pod_memory_used_bytes{node="$node"})'
stack_alerting
stamp "stack up: PREDICT=true, rules with for: 2s"

predicted_row() { # GPU [RESULT] -> the first predicted decision on it (with that result), or nothing
    "$GVW_BINARY" audit --db "$DB" --format json --limit 0 |
        jq -c --arg g "$1" --arg r "${2:-}" '[.[] | select(.trigger == "GPUVRAMExhaustionPredicted" and .gpu == $g and .result != "in_progress" and .result != "coalesced" and ($r == "" or .result == $r))] | last // empty'
}
have_row() { [ -n "$(predicted_row "$@")" ]; }

stack_wait_eviction
ev=$(evictions)
expect_eq "the drifting tenant is evicted" "/api/v1/namespaces/ml/pods/runaway-6c9d8f7b5-a1b2c/eviction" \
    "$(echo "$ev" | jq -r '.[0].path')"
ev_t=$(echo "$ev" | jq -r '.[0].t')
min_before=$(awk -v t="$ev_t" '$1 != "null" && $1 <= t { if (min == "" || $2 < min) min = $2 } END { print min }' "$TMP/free.log")
stamp "evicted at t=${ev_t}s; GPU 0's lowest free before it: ${min_before} MiB"
expect_eq "GPU 0's free never reached the floor before the eviction (sim timeline)" 1 \
    "$(awk -v m="$min_before" -v f="$FLOOR" 'BEGIN { print (m != "" && m >= f) ? 1 : 0 }')"

wait_for 30 have_row "$GPU0" recycled
d=$(predicted_row "$GPU0" recycled)
"$GVW_BINARY" audit --db "$DB" --limit 0 >"$TMP/audit.txt"
expect_eq "the predicted decision on GPU 0 recycled" recycled "$(echo "$d" | jq -r .result)"
expect_eq "its victim is the grower, not the larger steady overshoot" runaway-6c9d8f7b5-a1b2c "$(echo "$d" | jq -r .victim.pod)"
expect_eq "the reason says it was predicted to starve the GPU" 1 \
    "$(echo "$d" | jq -r .reason | grep -c "predicted to starve GPU $GPU0 in [0-9]* s")"
expect_eq "prediction.slope_mib_s is the measured drift (40..60 MiB/s)" true \
    "$(echo "$d" | jq '.prediction.slope_mib_s > 40 and .prediction.slope_mib_s < 60')"
expect_eq "prediction.eta_s is set and within the horizon" true \
    "$(echo "$d" | jq '.prediction.eta_s > 0 and .prediction.eta_s <= 120 and .prediction.horizon_s == 120')"
expect_eq "the steady over-budget pod is listed as not_growing" not_growing \
    "$(echo "$d" | jq -r '.candidates[] | select(.pod == "steady-7d8e9f0a1-d3e4f") | .why_not')"

# GPU 1: the step at t=20 makes the rule fire; the daemon finds no growth.
wait_for 45 have_row "$GPU1"
d1=$(predicted_row "$GPU1")
expect_eq "the one-off step is judged: skipped_no_candidate" skipped_no_candidate "$(echo "$d1" | jq -r .result)"
expect_eq "its reason: not predicted to starve" 1 "$(echo "$d1" | jq -r .reason | grep -c "not predicted to starve")"
expect_eq "its prediction is recorded, the trend never crossing" null "$(echo "$d1" | jq -r .prediction.eta_s)"
expect_eq "nobody but the drifter was evicted" 1 "$(evictions | jq 'length')"
stamp "GPU 0: $(echo "$d" | jq -r .reason)"
stamp "GPU 1: $(echo "$d1" | jq -r .reason)"
"$GVW_BINARY" audit --db "$DB" --format json --limit 0 | jq -r ".[] | \"\(.id) \(.result) \(.reason)\"" | cut -c1-400
finish
