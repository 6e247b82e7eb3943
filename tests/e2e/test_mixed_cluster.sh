#!/usr/bin/env bash
# test_mixed_cluster.sh -- issue 26 end to end: a T4 node and an H100 node, each
# card holding 1.5-2 GiB no pod owns (the driver's reserve, a host process, a CUDA
# context in every process), judged by `serve` with the SHIPPED settings: no
# GPU_TOTAL_MIB, no FREE_QUERY, no capacity number. Only the loopback URLs, the
# audit db, the token, enforcement (DRY_RUN=false) and the README's multi-node
# USED_QUERY are set; Prometheus runs the shipped rules with the stack's short for:.
# A runaway on each card must be evicted, alone, within 30 s of the DEVICE's free
# falling below the floor (total - sum(pods) never does), timed on the simulator's
# own clock, never on this machine's speed.
source "$(dirname "$0")/../lib/harness.sh"
source "$(dirname "$0")/../lib/stack.sh"

SCENARIO="$GVW_SOURCE_DIR/tests/sim/scenarios/mixed-cluster.json"
FLOOR=1536
stack_require_tools
# Nothing of the environment may name the card or the free figure.
unset GPU_TOTAL_MIB FREE_QUERY GPUMEM_CAPACITY_MIB GPUMEM_RESERVE_MIB FLOOR_MIB

stack_sim "$SCENARIO"
stack_exporter gpu-t4-1 own
stack_exporter gpu-h100-1 own
stack_prometheus

printf 'e2e-token-%s\n' "$RANDOM$RANDOM" >"$TMP/token"
DB="$TMP/audit.db"
start_serve "$TMP/serve.log" WEBHOOK_TOKEN_FILE="$TMP/token" AUDIT_DB="$DB" DRY_RUN=false \
    KUBE_API_URL="$SIM" PROMETHEUS_URL="http://127.0.0.1:$PROM_PORT" \
    USED_QUERY='sum by (namespace, pod, uuid) (gpu_pod_memory_used_bytes{node="$node"})' || stack_abort
stack_alerting

# The simulator's clock and each card's device free, sampled every 0.2 s:
# "t free_t4 free_h100" (t: the sim's real seconds since its start).
(
    while :; do
        curl -s "$SIM/sim/state" |
            jq -r '"\(.t) \(.nodes[] | select(.name == "gpu-t4-1") | .gpus[0].free_mib) \(.nodes[] | select(.name == "gpu-h100-1") | .gpus[0].free_mib)"' \
            >>"$TMP/samples" 2>/dev/null
        sleep 0.2
    done
) &
PIDS+=($!)

two_evictions() { [ "$(evictions | jq 'length')" -ge 2 ]; }
if wait_for 120 two_evictions; then
    pass "an eviction on each card"
else
    fail "an eviction on each card" "$(evictions | jq -c 'map(.path)'); serve: $(tail -3 "$TMP/serve.log")"
fi
sleep 3 # anything else serve would wrongly do has time to show

ev=$(evictions)
expect_eq "exactly two evictions: the runaway on each card, nobody else" \
    "/api/v1/namespaces/ml/pods/embedder-6c9d8f7b5-a1b2c/eviction /api/v1/namespaces/train/pods/finetune-9e8d7c6b5-p9q2r/eviction" \
    "$(echo "$ev" | jq -r 'map(.path) | sort | join(" ")')"
expect_eq "both accepted by the API server" "201 201" "$(echo "$ev" | jq -r 'map(.code) | map(tostring) | join(" ")')"
expect_eq "no delete, no other write than evictions, node patches and Events" 0 \
    "$(curl -s "$SIM/sim/events" | jq '[.[] | select(.method != "PATCH" and (.path | endswith("/eviction") | not) and (.path | startswith("/apis/events.k8s.io/") | not))] | length')"

# Dip -> eviction, per card, on the sim's clock. The dip is bounded by the last
# sample still at or above the floor (so the figure can only be overstated).
for card in "gpu-t4-1 2 ml/embedder" "gpu-h100-1 3 train/finetune"; do
    set -- $card
    node=$1 col=$2 pod=$3
    above=$(awk -v c="$col" -v f="$FLOOR" '$c >= f { last = $1 } $c < f { print last; exit }' "$TMP/samples")
    below=$(awk -v c="$col" -v f="$FLOOR" '$c < f { print $1; exit }' "$TMP/samples")
    at=$(echo "$ev" | jq -r --arg p "/namespaces/${pod%%/*}/pods/${pod#*/}" '[.[] | select(.path | contains($p))][0].t // empty')
    if [ -z "$above" ] || [ -z "$below" ] || [ -z "$at" ]; then
        fail "$node: the dip and the eviction are both on the sim's clock" "above=$above below=$below evicted_at=$at"
        continue
    fi
    secs=$(awk -v a="$at" -v b="$above" 'BEGIN { printf "%.1f", a - b }')
    echo "# $node: device free < $FLOOR MiB between t=$above and t=$below s; $pod evicted at t=$at s: ${secs} s after the dip"
    if awk -v s="$secs" 'BEGIN { exit !(s >= 0 && s <= 30) }'; then
        pass "$node: $pod evicted within 30 s of the device's free falling below the floor (${secs} s)"
    else
        fail "$node: $pod evicted within 30 s of the dip" "${secs} s"
    fi
done

# What the audit says: each decision judged the device's own free figure.
recycled() { [ "$("$GVW_BINARY" audit --db "$DB" --format json --result recycled | jq length)" -ge 2 ]; }
wait_for 30 recycled
rows=$("$GVW_BINARY" audit --db "$DB" --format json --result recycled)
expect_eq "two recycles in the audit, one per node" "gpu-h100-1 gpu-t4-1" "$(echo "$rows" | jq -r 'map(.node) | sort | join(" ")')"
expect_eq "free_source is \"device\" on both" "device device" "$(echo "$rows" | jq -r 'map(.free_source) | join(" ")')"
expect_eq "free was below the floor on both when they acted" true "$(echo "$rows" | jq 'all(.[]; .free_mib < .floor_mib)')"
expect_eq "each decision names its card's GPU" true "$(echo "$rows" | jq 'all(.[]; .gpu != null)')"
expect_eq "nothing was judged on a made-up total: no skipped_telemetry" 0 \
    "$("$GVW_BINARY" audit --db "$DB" --format json --result skipped_telemetry | jq length)"

# Capacity auto: each node its own seats, from its exporter's total (size - 2048).
cap() { curl -s "$SIM/api/v1/nodes/$1" | jq -r '.status.capacity["viktorbarzin.me/gpumem"] // empty'; }
both_patched() { [ -n "$(cap gpu-t4-1)" ] && [ -n "$(cap gpu-h100-1)" ]; }
wait_for 45 both_patched
expect_eq "the T4 node advertises 15360 - 2048" 13312 "$(cap gpu-t4-1)"
expect_eq "the H100 node advertises 81559 - 2048" 79511 "$(cap gpu-h100-1)"
finish
