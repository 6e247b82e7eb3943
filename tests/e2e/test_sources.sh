#!/usr/bin/env bash
# test_sources.sh SOURCE -- end to end with real servers: the 2026-06-02 incident replayed
# with the runaway's budget declared through one source (issue 36), BUDGET_SOURCES
# the same on the exporter and serve. Each run: serve evicts immich-ml, and only
# it, and the audit names where every budget came from.
#   hami      incident-sources.json, hami,kai,resource: immich-ml declares HAMi's
#             nvidia.com/gpumem 3000, llama-swap a KAI gpu-fraction of 0.5
#   kai       incident-kai.json, kai,resource: immich-ml the annotation
#             gpu-memory "3000", llama-swap gpu-fraction 0.5, and Run:ai's
#             reservation pod, over its own fraction, is never a tenant
#   dra       incident-dra.json, dra,resource: immich-ml's claim from a template
#             (3000Mi), llama-swap's named claim (6Gi), portal-stt and the
#             Pending portal-tts sharing one (2Gi); the claims read from the
#             simulated API server as the real one serves them
#   resource  incident-2026-06-02.json, the default: what a cluster using
#             GPUMEM_RESOURCE saw before (budget_source "resource" named)
source "$(dirname "$0")/../lib/harness.sh"
source "$(dirname "$0")/../lib/stack.sh"

SOURCE=${1:?usage: test_sources.sh hami|kai|dra|resource}
SC=$GVW_SOURCE_DIR/tests/sim/scenarios
ML=immich-ml-7d9c6b5f4d-x8k2p
LS=llama-swap-6b8f7c9d5-q4w7n
RESERVATION=runai-reservation-gpu-gpu-node-1-x7k2p
# BUDGETS: `budgets --format json`'s tenants "NS/POD SOURCE BUDGET", SEATS its
# budgets_mib, read before the incident. EXPORTED: each pod's gpu_pod_memory_budget_bytes (MiB) the exporter must show
# ("-": none). CANDIDATES: the audit's candidates that declare a budget, "NS/POD
# SOURCE BUDGET" sorted (the pod names cut at their ReplicaSet hash; the Pending
# portal-tts is one, not_running; the device plugin declares none).
case $SOURCE in
hami)
    SCENARIO=$SC/incident-sources.json
    BUDGETS="frigate/frigate resource 2000, immich/immich-ml hami 3000, immich/immich-server resource 1800, llm/llama-swap kai 7680, portal/portal-stt resource 1500, portal/portal-tts resource 700"
    SEATS=16680
    export BUDGET_SOURCES=hami,kai,resource
    EXPORTED="$ML=3000 $LS=7680"
    CANDIDATES="frigate/frigate resource 2000, immich/immich-ml hami 3000, immich/immich-server resource 1800, llm/llama-swap kai 7680, portal/portal-stt resource 1500, portal/portal-tts resource 700"
    ;;
kai)
    SCENARIO=$SC/incident-kai.json
    BUDGETS="frigate/frigate resource 2000, immich/immich-ml kai 3000, immich/immich-server resource 1800, llm/llama-swap kai 7680, portal/portal-stt resource 1500, portal/portal-tts resource 700"
    SEATS=16680
    export BUDGET_SOURCES=kai,resource
    EXPORTED="$ML=3000 $LS=7680 $RESERVATION=-"
    CANDIDATES="frigate/frigate resource 2000, immich/immich-ml kai 3000, immich/immich-server resource 1800, llm/llama-swap kai 7680, portal/portal-stt resource 1500, portal/portal-tts resource 700"
    ;;
dra)
    SCENARIO=$SC/incident-dra.json
    BUDGETS="frigate/frigate resource 2000, immich/immich-ml dra 3000, immich/immich-server resource 1800, llm/llama-swap dra 6144, portal/portal-stt dra 2048, portal/portal-tts dra 2048"
    # A claim shared is one seat: portal-stt and portal-tts share portal-gpu
    # (2048), counted once.
    SEATS=14992
    export BUDGET_SOURCES=dra,resource
    EXPORTED="$ML=3000 $LS=6144"
    CANDIDATES="frigate/frigate resource 2000, immich/immich-ml dra 3000, immich/immich-server resource 1800, llm/llama-swap dra 6144, portal/portal-stt dra 2048, portal/portal-tts dra 2048"
    ;;
resource)
    SCENARIO=$SC/incident-2026-06-02.json
    BUDGETS="frigate/frigate resource 2000, immich/immich-ml resource 3000, immich/immich-server resource 1800, llm/llama-swap resource 5000, portal/portal-stt resource 1500, portal/portal-tts resource 700"
    SEATS=14000
    unset BUDGET_SOURCES
    EXPORTED="$ML=3000 $LS=5000"
    CANDIDATES="frigate/frigate resource 2000, immich/immich-ml resource 3000, immich/immich-server resource 1800, llm/llama-swap resource 5000, portal/portal-stt resource 1500, portal/portal-tts resource 700"
    ;;
*)
    fail "test_sources.sh knows source $SOURCE" "hami, kai, dra or resource"
    if [ "$SOURCE" = kai ]; then
    # Were it a tenant, its controller, its fraction (768 MiB) and its 1200 MiB
    # would make it eligible; it is not in the pod list, so the decision sees
    # only its usage (a pod it cannot place: not_on_node), with no budget.
    expect_eq "Run:ai's reservation pod is never eligible and has no budget" "false not_on_node null null" \
        "$(echo "$d" | jq -r --arg p "$RESERVATION" '.candidates[] | select(.pod == $p) | "\(.eligible) \(.why_not) \(.budget_source) \(.budget_mib)"')"
fi
if [ "$SOURCE" = dra ]; then
    claim_gets=$(curl -s "$SIM/sim/state" | jq -r '.requests | to_entries[] | select(.key | contains("/resourceclaims/")) | .key' | sed 's|.*/||' | sort | paste -sd' ')
    expect_eq "serve read each claim the node's pods name, by name" \
        "immich-ml-7d9c6b5f4d-x8k2p-gpu-q8d5n llama-swap-gpu portal-gpu" "$claim_gets"
fi
finish
    exit 1
    ;;
esac
VICTIM_BUDGET=$(echo "$CANDIDATES" | tr ',' '\n' | awk '/immich-ml/ { print $2, $3 }')
stamp "the incident with BUDGET_SOURCES=${BUDGET_SOURCES:-(unset: resource)}: $(basename "$SCENARIO")"

stack_require_tools
stack_sim "$SCENARIO"
stack_exporter gpu-node-1
metrics() { curl -s "http://127.0.0.1:$EXP_PORT/metrics"; }
budget_of() { metrics | awk -v p="pod=\"$1\"" '/^gpu_pod_memory_budget_bytes\{/ && index($0, p) { printf "%d", $NF / 1048576; f = 1 } END { if (!f) printf "-" }'; }
wait_for 10 sh -c "curl -s 'http://127.0.0.1:$EXP_PORT/metrics' | grep -q 'gpu_pod_memory_budget_bytes{.*pod=\"frigate-5f6d8c7b9-h2m5t\"} [0-9]'"
for e in $EXPORTED; do
    expect_eq "the exporter's budget series for ${e%%=*} (MiB, - for none)" "${e#*=}" "$(budget_of "${e%%=*}")"
done
expect_eq "a GPUMEM_RESOURCE tenant keeps its budget" 2000 "$(budget_of frigate-5f6d8c7b9-h2m5t)"

stack_prometheus
stack_serve
stack_alerting
if [ "${EXPORTED%% *}" != "$ML=-" ]; then
    over_budget() {
        curl -s "http://127.0.0.1:$PROM_PORT/api/v1/alerts" |
            jq -e --arg p "$ML" 'any(.data.alerts[]; .labels.alertname == "GPUPodOverBudget" and .labels.pod == $p)'
    }
    if wait_for 60 over_budget; then
        pass "GPUPodOverBudget fires for immich-ml against its $SOURCE budget"
    else
        fail "GPUPodOverBudget fires for immich-ml" "$(curl -s "http://127.0.0.1:$PROM_PORT/api/v1/alerts" | jq -c '[.data.alerts[] | .labels]')"
    fi
fi
# budgets, before the incident (every pod alive), as a user reads it.
budgets_json() {
    env KUBE_API_URL="$SIM" PROMETHEUS_URL="http://127.0.0.1:$PROM_PORT" "$GVW_BINARY" budgets --node gpu-node-1 --format json 2>"$TMP/budgets.err"
}
tenants() { jq -r '[.. | objects | select(.pod? and .namespace? and .budget_mib?) | "\(.namespace)/\(.pod | sub("-[a-z0-9]+-[a-z0-9]+$"; "")) \(.budget_source) \(.budget_mib)"] | unique | join(", ")'; }
wait_for 20 sh -c "env KUBE_API_URL='$SIM' PROMETHEUS_URL='http://127.0.0.1:$PROM_PORT' '$GVW_BINARY' budgets --node gpu-node-1 --format json 2>/dev/null | jq -e '.gpus[0].tenants | length > 0'"
out=$(budgets_json)
echo "$out" >"$TMP/budgets.json"
expect_eq "budgets --format json: the tenants' budgets and sources" "$BUDGETS" "$(tenants <"$TMP/budgets.json")"
expect_eq "budgets: the seats are the tenants' budgets" "$SEATS" "$(jq -r .budgets_mib "$TMP/budgets.json")"
if [ "$SOURCE" = kai ]; then
    expect_eq "budgets: Run:ai's reservation pod holds no seat and no budget (its VRAM shown, never eligible)" \
        "null none false" "$(jq -r --arg p "$RESERVATION" '.. | objects | select(.pod? == $p) | "\(.budget_mib) \(.budget) \(.eligible)"' "$TMP/budgets.json")"
fi
stack_wait_firing "GPUVRAMLow fires when immich-ml's arena eats the floor"
stack_wait_eviction
ev=$(evictions)
expect_eq "exactly one eviction, of immich-ml" "1 /api/v1/namespaces/immich/pods/$ML/eviction" \
    "$(echo "$ev" | jq -r '"\(length) \(.[0].path)"')"
recycled() { "$GVW_BINARY" audit --db "$DB" --format json --result recycled | jq -e 'length > 0'; }
wait_for 40 recycled
d=$("$GVW_BINARY" audit --db "$DB" --format json --result recycled | jq '.[0]')
expect_eq "the victim is immich-ml, its budget from $SOURCE" "$ML $VICTIM_BUDGET" \
    "$(echo "$d" | jq -r '.victim | "\(.pod) \(.budget_source) \(.budget_mib)"')"
expect_eq "every candidate's budget names its source" "$CANDIDATES" \
    "$(echo "$d" | jq -r '[.candidates[] | select(.budget_source != null) | "\(.namespace)/\(.pod | sub("-[a-z0-9]+-[a-z0-9]+$"; "")) \(.budget_source) \(.budget_mib)"] | sort | join(", ")')"
if [ "$SOURCE" = kai ]; then
    # Were it a tenant, its controller, its fraction (768 MiB) and its 1200 MiB
    # would make it eligible; it is not in the pod list, so the decision sees
    # only its usage (a pod it cannot place: not_on_node), with no budget.
    expect_eq "Run:ai's reservation pod is never eligible and has no budget" "false not_on_node null null" \
        "$(echo "$d" | jq -r --arg p "$RESERVATION" '.candidates[] | select(.pod == $p) | "\(.eligible) \(.why_not) \(.budget_source) \(.budget_mib)"')"
fi
if [ "$SOURCE" = dra ]; then
    claim_gets=$(curl -s "$SIM/sim/state" | jq -r '.requests | to_entries[] | select(.key | contains("/resourceclaims/")) | .key' | sed 's|.*/||' | sort | paste -sd' ')
    expect_eq "serve read each claim the node's pods name, by name" \
        "immich-ml-7d9c6b5f4d-x8k2p-gpu-q8d5n llama-swap-gpu portal-gpu" "$claim_gets"
fi
finish
