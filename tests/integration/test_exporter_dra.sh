#!/usr/bin/env bash
# test_exporter_dra.sh -- `gpu-vram-watchdog exporter` with BUDGET_SOURCES=dra,resource
# against gvw-sim's API server, which serves each ResourceClaim as the real one does:
# the /metrics budget series a user reads for a template claim, a named claim two
# pods share, a claim that 404s (no series, one warning naming it) and a claim of
# another driver only (the next source, GPUMEM_RESOURCE). The claims are read by
# name, each once per list; without dra none is read.
source "$(dirname "$0")/../lib/harness.sh"
source "$(dirname "$0")/../lib/stack.sh"
command -v jq >/dev/null || { fail "jq is installed" "scripts/install-deps.sh"; finish; exit 1; }

ML=immich-ml-7d9c6b5f4d-x8k2p       # a claim made from a template (status), 3000Mi
STT=portal-stt-77f5c6d8b9-r2w6z     # portal-gpu, named in the spec, shared: 2Gi
TTS=portal-tts-5c8d7f6b4-k9p2x      # the same claim, Pending
GHOST=ghost-6c5d4b3a2-z9y8x         # names a claim that is not there (404); budget 900
NIC=nic-5d4c3b2a1-w8v7u             # a claim of net.example.com only; budget 1500
FRIGATE=frigate-5f6d8c7b9-h2m5t     # no claim: GPUMEM_RESOURCE 2000

# incident-dra.json plus the two pods and the other driver's claim.
jq --arg ghost "$GHOST" --arg nic "$NIC" '
  .pods += [
    {namespace: "lab", name: $ghost, started_ago: 600, container: "c", image: "x", budget: 900,
     resource_claims: [{name: "gpu", resourceClaimName: "gone-claim"}]},
    {namespace: "lab", name: $nic, started_ago: 600, container: "c", image: "x", budget: 1500,
     resource_claims: [{name: "net", resourceClaimName: "nic-claim"}]}]
  | .claims += [
    {apiVersion: "resource.k8s.io/v1", kind: "ResourceClaim",
     metadata: {namespace: "lab", name: "nic-claim"},
     status: {allocation: {devices: {results: [
       {request: "net", driver: "net.example.com", pool: "gpu-node-1", device: "nic-0",
        consumedCapacity: {memory: "1Gi"}}]}},
      reservedFor: [{resource: "pods", name: $nic, uid: "n-1"}]}}]' \
    "$GVW_SOURCE_DIR/tests/sim/scenarios/incident-dra.json" >"$TMP/scenario.json"

stack_sim "$TMP/scenario.json"
metrics() { curl -s "http://127.0.0.1:$EXP_PORT/metrics"; }
budget_of() { metrics | awk -v p="pod=\"$1\"" '/^gpu_pod_memory_budget_bytes\{/ && index($0, p) { printf "%d", $NF / 1048576; f = 1 } END { if (!f) printf "-" }'; }
claim_gets() {
    curl -s "$SIM/sim/state" | jq -r '[.requests | to_entries[] | select(.key | contains("/resourceclaims/")) | "\(.key | sub(".*/namespaces/"; "") | sub("/resourceclaims/"; "/"))=\(.value)"] | sort | join(" ")'
}

export BUDGET_SOURCES=dra,resource
stack_exporter gpu-node-1
wait_for 10 sh -c "curl -s 'http://127.0.0.1:$EXP_PORT/metrics' | grep -q 'gpu_pod_memory_budget_bytes{.*pod=\"$FRIGATE\"} [0-9]'"
for e in "$ML=3000" "$STT=2048" "$TTS=2048" "$GHOST=-" "$NIC=1500" "$FRIGATE=2000"; do
    expect_eq "dra,resource: the budget series of ${e%%=*} (MiB, - for none)" "${e#*=}" "$(budget_of "${e%%=*}")"
done
expect_contains "a shared claim: each sharer's series is the whole claim's memory, in bytes" \
    "gpu_pod_memory_budget_bytes{node=\"gpu-node-1\",namespace=\"portal\",pod=\"$TTS\"} 2147483648" "$(metrics)"
# The unreadable claim: one warning naming the pod and the API's answer, and it
# is counted once (each list re-reads the claim; the warning is not repeated).
wait_for 10 grep -q '"pod":"'"$GHOST"'"' "$TMP/exporter.log"
warn=$(grep "unreadable" "$TMP/exporter.log" | grep "\"pod\":\"$GHOST\"")
expect_contains "the 404 claim: a warning names the pod" "no budget series for it" "$warn"
expect_contains "the 404 claim: ... and its source" '"source":"dra"' "$warn"
expect_contains "the 404 claim: the reason quotes the claim and the API's answer" \
    'claim lab/gone-claim could not be read: ' "$warn"
expect_contains "the 404 claim: ... the server's not found" 'not found' "$warn"
expect_contains "budget_errors_total counts the pod" "gpu_vram_exporter_budget_errors_total 1" "$(metrics)"
expect_eq "each claim the pods name was read, by name" \
    "immich/immich-ml-7d9c6b5f4d-x8k2p-gpu-q8d5n lab/gone-claim lab/nic-claim llm/llama-swap-gpu portal/portal-gpu" \
    "$(claim_gets | tr ' ' '\n' | sed 's/=.*//' | paste -sd' ')"
expect_eq "the 404 pod is warned of once" 1 \
    "$(grep "unreadable" "$TMP/exporter.log" | grep -c "\"pod\":\"$GHOST\"")"
kill "${PIDS[-1]}" 2>/dev/null
wait "${PIDS[-1]}" 2>/dev/null

# Without dra no claim is read, and a claim's pod falls to its GPUMEM_RESOURCE.
gets_before=$(claim_gets)
export BUDGET_SOURCES=resource
stack_exporter gpu-node-1
wait_for 10 sh -c "curl -s 'http://127.0.0.1:$EXP_PORT/metrics' | grep -q 'gpu_pod_memory_budget_bytes{.*pod=\"$FRIGATE\"} [0-9]'"
expect_eq "resource alone: the ghost's GPUMEM_RESOURCE, no claim read" "900 $gets_before" \
    "$(budget_of "$GHOST") $(claim_gets)"

# DRA_DRIVER is read and checked as serve checks it.
out=$(NODE_NAME=n BUDGET_SOURCES=dra DRA_DRIVER=GPU.nvidia.com "$GVW_BINARY" exporter 2>&1)
rc=$?
expect_eq "a bad DRA_DRIVER stops the exporter's start-up" 2 "$rc"
expect_contains "naming it as serve does" "DRA_DRIVER: 'GPU.nvidia.com' is not a driver name" "$out"
finish
