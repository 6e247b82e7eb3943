#!/usr/bin/env bash
# test_two_gpus.sh -- end to end on a 2-GPU node (issue #15): only the short GPU's tenant is recycled.
#
# gvw-sim plays gpu-node-2 with two T4s (tests/sim/scenarios/two-gpus.json):
# on GPU 0 immich-ml's arena grows until GPU 0 is short; GPU 1 keeps 2560 MiB
# free although comfyui there is further over its budget than immich-ml. The
# real `gpu-vram-watchdog exporter` reads the node through the stub NVML, real
# Prometheus and Alertmanager run the shipped rules, and `serve` enforces with
# the per-GPU USED_QUERY (SPEC "GPU scope"). Asserted: GPUVRAMLow fires for
# GPU 0 only, with its uuid; immich-ml and only immich-ml is evicted; the audit
# row names GPU 0; comfyui is untouched; the alert resolves. 127.0.0.1 only.
source "$(dirname "$0")/../lib/harness.sh"
source "$(dirname "$0")/../lib/stack.sh"

SCENARIO="$GVW_SOURCE_DIR/tests/sim/scenarios/two-gpus.json"
GPU0=GPU-0a6f3c2e-51d4-4b8e-9f17-3d2c8e4a6b01
GPU1=GPU-1b7e4d3f-62e5-4c9f-8a28-4e3d9f5b7c12
USED_QUERY='sum by (namespace, pod, uuid) (gpu_pod_memory_used_bytes{node="$node"})'

stack_require_tools
# GPU scope (SPEC) comes with `audit --gpu`; a build without it cannot pass this test.
if "$GVW_BINARY" audit --db "$TMP/probe.db" --gpu "$GPU0" 2>&1 | grep -qiE 'unknown|unrecognized|invalid option'; then
    echo "skipped: this gpu-vram-watchdog has no GPU scope (audit --gpu is unknown)"
    exit 77
fi

# 1. The simulated 2-GPU node and the node exporter reading it.
stack_sim "$SCENARIO"
stamp "simulator (gpu-node-2, 2 GPUs) up at $SIM"

stack_exporter gpu-node-2
emetrics() { curl -s "http://127.0.0.1:$EXP_PORT/metrics"; }
llama_on_both() { [ "$(emetrics | grep -c '^gpu_pod_memory_used_bytes{.*pod="llama-swap-6b8f7c9d5-q4w7n"')" -eq 2 ]; }
if wait_for 10 llama_on_both; then
    pass "the exporter reports llama-swap once per GPU it uses"
else
    fail "the exporter reports llama-swap on both GPUs" "$(emetrics | grep llama-swap)"
fi
expect_eq "two GPUs in the device series" 2 "$(emetrics | grep -c '^gpu_memory_free_bytes{')"
expect_contains "comfyui's memory is on GPU 1" "uuid=\"$GPU1\"" "$(emetrics | grep 'pod="comfyui-')"

# 2. The watchdog, enforcing, per GPU.
stack_prometheus
stack_serve USED_QUERY="$USED_QUERY"
stamp "gpu-vram-watchdog serve up on port $SERVE_PORT (DRY_RUN=false, per-GPU USED_QUERY)"

# 3. Real Alertmanager, and Prometheus loads the shipped rules, short intervals.
stack_alerting
stamp "Prometheus (127.0.0.1:$PROM_PORT) and Alertmanager (127.0.0.1:$AM_PORT) up"

promq() { curl -s "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$1"; }
low_alerts() { curl -s "http://127.0.0.1:$PROM_PORT/api/v1/alerts" | jq -c '[.data.alerts[] | select(.labels.alertname == "GPUVRAMLow")]'; }
firing() { low_alerts | jq -e 'any(.[]; .state == "firing")' >/dev/null; }
if wait_for 120 firing; then
    stamp "GPUVRAMLow firing"
    pass "GPUVRAMLow fires when GPU 0 runs short"
else
    fail "GPUVRAMLow fires" "$(low_alerts)"
fi
expect_eq "one GPUVRAMLow, for GPU 0 of gpu-node-2" "gpu-node-2 0 $GPU0" \
    "$(low_alerts | jq -r 'map("\(.labels.node) \(.labels.gpu) \(.labels.uuid)") | join(",")')"

stack_wait_eviction
ev=$(evictions)
expect_eq "exactly one eviction" 1 "$(echo "$ev" | jq 'length')"
expect_eq "of immich-ml, the worst offender on the short GPU" \
    "/api/v1/namespaces/immich/pods/immich-ml-7d9c6b5f4d-x8k2p/eviction" "$(echo "$ev" | jq -r '.[0].path')"
expect_eq "with its UID as the precondition" "3f6c2a1e-8b4d-4e7a-9c2f-5d1b7e9a0c34" \
    "$(echo "$ev" | jq -r '.[0].body.deleteOptions.preconditions.uid')"

recycled() { "$GVW_BINARY" audit --db "$DB" --format json --result recycled | jq -e '.[0].verify != null' >/dev/null; }
wait_for 40 recycled && stamp "the decision is complete: free VRAM on GPU 0 verified"
d=$("$GVW_BINARY" audit --db "$DB" --format json --result recycled | jq '.[0]')
expect_eq "the audit records a recycle on gpu-node-2" "recycled gpu-node-2" "$(echo "$d" | jq -r '"\(.result) \(.node)"')"
expect_eq "  ... on GPU 0 (its uuid)" "$GPU0" "$(echo "$d" | jq -r '.gpu')"
expect_eq "  ... victim immich/immich-ml" "immich/immich-ml-7d9c6b5f4d-x8k2p" "$(echo "$d" | jq -r '.victim | "\(.namespace)/\(.pod)"')"
expect_eq "  ... free on GPU 0 was below the floor" true "$(echo "$d" | jq '.free_mib != null and .free_mib < 1536')"
expect_eq "only immich-ml was eligible: comfyui, worse but on GPU 1 only, was not" "immich-ml-7d9c6b5f4d-x8k2p" \
    "$(echo "$d" | jq -r '[(.candidates // [])[] | select(.eligible)] | map(.pod) | join(",")')"
expect_eq "llama-swap's use is summed over both GPUs (4800 MiB, within its 5000)" "4800 false" \
    "$(echo "$d" | jq -r '(.candidates // [])[] | select(.pod | startswith("llama-swap")) | "\(.used_mib | round) \(.eligible)"')"
expect_eq "no decision acted on GPU 1" 0 \
    "$("$GVW_BINARY" audit --db "$DB" --format json --limit 0 | jq --arg g "$GPU1" '[.[] | select(.gpu == $g and (.result == "recycled" or .result == "would_recycle"))] | length')"
expect_eq "audit --gpu filters by GPU" "$GPU0" \
    "$("$GVW_BINARY" audit --db "$DB" --format json --gpu "$GPU0" --result recycled | jq -r '.[0].gpu')"

resolved() { "$GVW_BINARY" audit alerts --db "$DB" --format json | jq -e 'any(.[]; .alertname == "GPUVRAMLow" and .status == "resolved")' >/dev/null; }
if wait_for 60 resolved; then
    pass "the alert resolves after the recycle"
else
    fail "the alert resolves" "$(low_alerts)"
fi
sleep 3 # the replacement comes back; nothing else may be touched
expect_eq "no other pod was touched" 1 "$(curl -s "$SIM/sim/events" | jq '[.[] | select(.method != "PATCH" and (.path | startswith("/apis/events.k8s.io/") | not))] | length')"
expect_eq "comfyui still runs, far over its budget on the comfortable GPU" 1 \
    "$(curl -s "$SIM/sim/state" | jq '[.pods[] | select(.name == "comfyui-6c9f8d7b5-t7r4x" and .state == "alive")] | length')"
# The seating chart in GPU scope: one card per GPU, comfyui over its budget on GPU 1.
out=$(PROMETHEUS_URL="http://127.0.0.1:$PROM_PORT" KUBE_API_URL="$SIM" USED_QUERY="$USED_QUERY" \
    "$GVW_BINARY" budgets --format json)
expect_eq "budgets shows one card per GPU" "$GPU0 $GPU1" "$(echo "$out" | jq -r '[.[0].gpus[].gpu] | join(" ")')"
expect_eq "comfyui is over its budget on GPU 1's card" true \
    "$(echo "$out" | jq --arg g "$GPU1" '[.[0].gpus[] | select(.gpu == $g) | .tenants[] | select(.pod | startswith("comfyui-")) | .over_budget] == [true]')"
# Seats held by pods that use no GPU (piper-tts Pending, embedder idle) are on
# no card; they are listed once for the node, so every declared budget is found.
expect_eq "seats on no GPU are listed once for the node (idle_tenants)" \
    "search/embedder-7f9b6c5d8-w3n6q 0 800 false within_budget,voice/piper-tts-5c8d7f6b4-k9p2s 0 1200 false not_running" \
    "$(echo "$out" | jq -r '[.[0].idle_tenants[] | "\(.namespace)/\(.pod) \(.used_mib) \(.budget_mib) \(.eligible) \(.why_not)"] | join(",")')"
expect_eq "  ... and on no GPU's card" 0 \
    "$(echo "$out" | jq '[.[0].gpus[].tenants[] | select(.pod | test("^(piper-tts|embedder)-"))] | length')"
expect_eq "  ... so the budgets on the chart add up to the node's sum (15800)" "15800 15800" \
    "$(echo "$out" | jq -r '"\(.[0].budgets_mib) \([.[0].gpus[].tenants[], .[0].idle_tenants[] | select(.budget_mib != null) | {k: "\(.namespace)/\(.pod)", b: .budget_mib}] | unique_by(.k) | map(.b) | add)"')"
table=$(PROMETHEUS_URL="http://127.0.0.1:$PROM_PORT" KUBE_API_URL="$SIM" USED_QUERY="$USED_QUERY" \
    "$GVW_BINARY" budgets --node gpu-node-2)
expect_contains "the table lists them under the node, labelled" \
    "seated, using no GPU: 2 pod(s) hold a budget and run nothing on any GPU" "$table"
expect_contains "  ... piper-tts with its budget and the policy's word" \
    "      0       0    1200   -1200  no: not_running          voice/piper-tts-5c8d7f6b4-k9p2s" "$table"
page=$(curl -s "http://127.0.0.1:$SERVE_PORT/")
expect_eq "GET / lists both under the node's cards" 2 "$(grep -o '<tr class="idle-tenant">' <<<"$page" | wc -l)"
expect_contains "  ... embedder's row" \
    '<td class="name">search/embedder-7f9b6c5d8-w3n6q</td><td class="n">0</td><td class="n">0</td><td class="n">800</td><td>no: within_budget</td>' "$page"
expect_contains "GET /'s decision row names the GPU beside the node" \
    "<td>gpu-node-2/$GPU0</td><td class=\"result\">recycled</td>" "$page"
expect_eq "GPU 1 never alerted" 0 \
    "$(promq "count(count_over_time(ALERTS{alertname=\"GPUVRAMLow\",uuid=\"$GPU1\"}[15m]))" | jq '.data.result | length')"
finish
