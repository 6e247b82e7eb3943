#!/usr/bin/env bash
# test_sources.sh -- end to end with real servers: the 2026-06-02 incident replayed
# with budgets from other sources (BUDGET_SOURCES=hami,kai,resource, on the
# exporter and serve alike). immich-ml, the runaway, declares HAMi's
# nvidia.com/gpumem; llama-swap a KAI gpu-fraction of 0.5 (which wins over its
# GPUMEM_RESOURCE). The exporter's gpu_pod_memory_budget_bytes carries both
# (the fraction by the T4's own total from NVML), GPUPodOverBudget fires for
# immich-ml, and serve evicts immich-ml, recording the budget's source.
source "$(dirname "$0")/../lib/harness.sh"
source "$(dirname "$0")/../lib/stack.sh"

SCENARIO="$GVW_SOURCE_DIR/tests/sim/scenarios/incident-sources.json"
stack_require_tools
export BUDGET_SOURCES=hami,kai,resource

stack_sim "$SCENARIO"
stack_exporter gpu-node-1
budget_of() {
    curl -s "http://127.0.0.1:$EXP_PORT/metrics" |
        awk -v p="pod=\"$1\"" '/^gpu_pod_memory_budget_bytes\{/ && index($0, p) { printf "%d", $NF / 1048576 }'
}
wait_for 10 sh -c "curl -s 'http://127.0.0.1:$EXP_PORT/metrics' | grep -q 'pod=\"llama-swap-6b8f7c9d5-q4w7n\"} [0-9]'"
expect_eq "the exporter's budget for immich-ml is HAMi's gpumem (MiB)" 3000 "$(budget_of immich-ml-7d9c6b5f4d-x8k2p)"
expect_eq "the exporter's budget for llama-swap is KAI's gpu-fraction 0.5 of the T4's 15360 MiB" 7680 "$(budget_of llama-swap-6b8f7c9d5-q4w7n)"
expect_eq "a GPUMEM_RESOURCE tenant keeps its budget" 2000 "$(budget_of frigate-5f6d8c7b9-h2m5t)"

stack_prometheus
stack_serve
stack_alerting
over_budget() {
    curl -s "http://127.0.0.1:$PROM_PORT/api/v1/alerts" |
        jq -e 'any(.data.alerts[]; .labels.alertname == "GPUPodOverBudget" and .labels.pod == "immich-ml-7d9c6b5f4d-x8k2p")'
}
if wait_for 60 over_budget; then
    pass "GPUPodOverBudget fires for immich-ml against its HAMi budget"
else
    fail "GPUPodOverBudget fires for immich-ml" "$(curl -s "http://127.0.0.1:$PROM_PORT/api/v1/alerts" | jq -c '[.data.alerts[] | .labels]')"
fi
stack_wait_firing "GPUVRAMLow fires when immich-ml's arena eats the floor"
stack_wait_eviction
ev=$(evictions)
expect_eq "exactly one eviction, of immich-ml" "1 /api/v1/namespaces/immich/pods/immich-ml-7d9c6b5f4d-x8k2p/eviction" \
    "$(echo "$ev" | jq -r '"\(length) \(.[0].path)"')"
recycled() { "$GVW_BINARY" audit --db "$DB" --format json --result recycled | jq -e 'length > 0'; }
wait_for 40 recycled
d=$("$GVW_BINARY" audit --db "$DB" --format json --result recycled | jq '.[0]')
expect_eq "the victim is immich-ml, its budget from hami, 3000 MiB" "immich-ml-7d9c6b5f4d-x8k2p hami 3000" \
    "$(echo "$d" | jq -r '.victim | "\(.pod) \(.budget_source) \(.budget_mib)"')"
expect_eq "llama-swap was judged by its KAI fraction" "kai 7680" \
    "$(echo "$d" | jq -r '.candidates[] | select(.pod | startswith("llama-swap")) | "\(.budget_source) \(.budget_mib)"')"
finish
