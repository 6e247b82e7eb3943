#!/usr/bin/env bash
# test_incident.sh -- end to end with real servers: the 2026-06-02 incident replayed.
#
# The GPU-node simulator plays the node (Kubernetes API, the stub NVML's state
# file, a fake /proc), the real `gpu-vram-watchdog exporter` reads it through the
# stub libnvidia-ml.so.1 built in the tree and serves per-pod, per-GPU VRAM,
# Debian's real Prometheus scrapes the exporter and evaluates the shipped rules
# (with short `for:`), the
# real Alertmanager delivers to `serve` (enforcement on), and every step of the
# story is asserted: the alert fires, Alertmanager delivers, immich-ml and only
# immich-ml is evicted with its UID precondition, free VRAM recovers, the alert
# resolves, and the audit tells the whole story. Everything listens on 127.0.0.1.
#
# E2E_NARRATE=1 prints the narration a newcomer reads (scripts/demo.sh uses it).
source "$(dirname "$0")/../lib/harness.sh"
source "$(dirname "$0")/../lib/stack.sh"

SCENARIO="$GVW_SOURCE_DIR/tests/sim/scenarios/incident-2026-06-02.json"
stack_require_tools

# 1. The simulated GPU node: its API server, its NVML (a state file the stub
# library reads) and its /proc.
say "The simulated GPU node gpu-node-1 (a 15360 MiB T4): five tenants, each within its budget."
stack_sim "$SCENARIO"
stamp "simulator up at $SIM"

# 1b. The node exporter, as the DaemonSet runs it, on the simulated node.
stack_exporter gpu-node-1
exporter_sees() { curl -s "http://127.0.0.1:$EXP_PORT/metrics" | grep -q "$1"; }
if wait_for 10 exporter_sees 'pod="immich-ml-7d9c6b5f4d-x8k2p"'; then
    pass "the exporter attributes immich-ml's VRAM through NVML, /proc and the API"
else
    fail "the exporter attributes immich-ml's VRAM" "$(curl -s "http://127.0.0.1:$EXP_PORT/metrics" | grep -v '^#' | head -20)"
fi
stamp "gpu-vram-watchdog exporter up on port $EXP_PORT"
say "gpu-vram-watchdog exporter reads the node's GPU through NVML and names each process's pod."
# The card as it really is: the driver's 300 MiB reserve and a host ffmpeg (1 MiB
# plus its 300 MiB CUDA context) belong to no pod; the exporter says so.
unattributed() { curl -s "http://127.0.0.1:$EXP_PORT/metrics" | awk '/^gpu_memory_unattributed_bytes\{/ { printf "%d", $NF / 1048576 }'; }
wait_for 10 sh -c "curl -s 'http://127.0.0.1:$EXP_PORT/metrics' | grep -q '^gpu_memory_unattributed_bytes{'"
expect_eq "the exporter shows 601 MiB no pod accounts for (300 reserved + the host's ffmpeg)" 601 "$(unattributed)"
say "Memory no pod accounts for: the driver's reserve and a host process outside Kubernetes.
gpu_memory_unattributed_bytes = $(unattributed) MiB: free VRAM on the card is that much lower than 15360 - sum(pods)."

# 2. The watchdog, enforcing. Prometheus starts first: its URL is a setting.
stack_prometheus
stack_serve
stamp "gpu-vram-watchdog serve up on port $SERVE_PORT (DRY_RUN=false)"
wait_for 10 sh -c "curl -s '$SIM/api/v1/nodes/gpu-node-1' | grep -q gpumem"
capacity=$(curl -s "$SIM/api/v1/nodes/gpu-node-1" | jq -r '.status.capacity["viktorbarzin.me/gpumem"]')
expect_eq "the watchdog advertised the gpumem capacity on the node (auto: 15360 - 2048)" "13312" "$capacity"
say "At start-up the watchdog advertised viktorbarzin.me/gpumem on the node: $capacity (GPUMEM_CAPACITY_MIB=auto: the T4's 15360 MiB less GPUMEM_RESERVE_MIB 2048)."

# 3. Real Alertmanager, and Prometheus loads the shipped rules, short intervals.
stack_alerting
stamp "Prometheus (127.0.0.1:$PROM_PORT) and Alertmanager (127.0.0.1:$AM_PORT) up"
say "Prometheus scrapes the node exporter every second and evaluates GPUVRAMLow (free < 1536 MiB)."
say "Now immich-ml's onnxruntime arena grows from ~2 GB towards 10.7 GiB..."

stack_wait_firing "GPUVRAMLow fires when immich-ml's arena eats the floor"

delivered() { "$GVW_BINARY" audit alerts --db "$DB" --format json | jq -e 'any(.[]; .alertname == "GPUVRAMLow" and .status == "firing")'; }
if wait_for 30 delivered; then
    stamp "Alertmanager delivered the firing alert to the watchdog"
    pass "Alertmanager delivers the firing alert with the bearer token"
else
    fail "Alertmanager delivers the firing alert" "$(tail -5 "$TMP/am.log")"
fi

stack_wait_eviction
ev=$(evictions)
expect_eq "exactly one eviction" 1 "$(echo "$ev" | jq 'length')"
expect_eq "of immich-ml" "/api/v1/namespaces/immich/pods/immich-ml-7d9c6b5f4d-x8k2p/eviction" "$(echo "$ev" | jq -r '.[0].path')"
expect_eq "with its UID as the precondition" "3f6c2a1e-8b4d-4e7a-9c2f-5d1b7e9a0c34" \
    "$(echo "$ev" | jq -r '.[0].body.deleteOptions.preconditions.uid')"
expect_eq "as a policy/v1 Eviction" "policy/v1 Eviction" "$(echo "$ev" | jq -r '.[0].body | "\(.apiVersion) \(.kind)"')"
expect_eq "which the API server accepted" 201 "$(echo "$ev" | jq -r '.[0].code')"
expect_eq "not a dry run" "" "$(echo "$ev" | jq -r '.[0].query // ""')"

recycled() { "$GVW_BINARY" audit --db "$DB" --format json --result recycled | jq -e '.[0].verify != null'; }
if wait_for 40 recycled; then
    stamp "the decision is complete: free VRAM verified"
fi
d=$("$GVW_BINARY" audit --db "$DB" --format json --result recycled | jq '.[0]')
expect_eq "the audit records a recycle" recycled "$(echo "$d" | jq -r '.result')"
expect_eq "on gpu-node-1" gpu-node-1 "$(echo "$d" | jq -r '.node')"
expect_eq "triggered by GPUVRAMLow" GPUVRAMLow "$(echo "$d" | jq -r '.trigger')"
expect_eq "victim immich/immich-ml" "immich/immich-ml-7d9c6b5f4d-x8k2p" "$(echo "$d" | jq -r '.victim | "\(.namespace)/\(.pod)"')"
expect_eq "its budget as declared (\"3k\")" 3000 "$(echo "$d" | jq -r '.victim.budget_mib')"
expect_eq "overshoot = used - budget" true "$(echo "$d" | jq '.victim.overshoot_mib == .victim.used_mib - 3000 and .victim.overshoot_mib > 5000')"
expect_eq "free was below the floor" true "$(echo "$d" | jq '.free_mib < .floor_mib and .floor_mib == 1536')"
tenants='["immich-ml-7d9c6b5f4d-x8k2p","llama-swap-6b8f7c9d5-q4w7n","frigate-5f6d8c7b9-h2m5t","immich-server-68c4d9b7f-m5t8v","portal-stt-77f5c6d8b9-r2w6z"]'
expect_eq "every tenant on the card was considered" 5 "$(echo "$d" | jq --argjson t "$tenants" '[.candidates[] | select(.pod as $p | $t | index($p))] | length')"
expect_eq "the pending tenant is not a victim" not_running "$(echo "$d" | jq -r '.candidates[] | select(.pod | startswith("portal-tts")) | .why_not')"
expect_eq "only immich-ml was eligible" "immich-ml-7d9c6b5f4d-x8k2p" "$(echo "$d" | jq -r '[.candidates[] | select(.eligible)] | map(.pod) | join(",")')"
expect_eq "action evict, enforcing" "evict false" "$(echo "$d" | jq -r '"\(.action) \(.dry_run)"')"
expect_eq "the memory came back" true "$(echo "$d" | jq '.verify.free_mib >= 1536 and .verify.seconds >= 0')"

resolved() { "$GVW_BINARY" audit alerts --db "$DB" --format json | jq -e 'any(.[]; .alertname == "GPUVRAMLow" and .status == "resolved")'; }
if wait_for 60 resolved; then
    stamp "GPUVRAMLow resolved and Alertmanager delivered the resolution"
    pass "the alert resolves after the recycle"
else
    fail "the alert resolves" "Prometheus state: $(alert_state)"
fi
sleep 3 # the replacement comes back; nothing else may be touched
expect_eq "no other pod was touched" 1 "$(curl -s "$SIM/sim/events" | jq '[.[] | select(.method != "PATCH" and (.path | startswith("/apis/events.k8s.io/") | not))] | length')"
# The tenant is told (kubectl describe pod): one Event on immich-ml. (The
# simulator has no events.k8s.io group and answers 404; serve counts that.)
ev=$(curl -s "$SIM/sim/events" | jq -c '[.[] | select(.path | startswith("/apis/events.k8s.io/"))]')
expect_eq "one Event, on immich-ml, in its namespace" \
    "1 /apis/events.k8s.io/v1/namespaces/immich/events immich-ml-7d9c6b5f4d-x8k2p GPUVRAMRecycled evict" \
    "$(echo "$ev" | jq -r '"\(length) \(.[0].path) \(.[0].body.regarding.name) \(.[0].body.reason) \(.[0].body.action)"')"
expect_contains "its note names the audit row" "(audit $(echo "$d" | jq -r .id))" "$(echo "$ev" | jq -r '.[0].body.note')"
back=$(curl -s "$SIM/sim/state" | jq -r '[.pods[] | select(.namespace == "immich" and (.name | startswith("immich-ml")))] | length')
expect_eq "the controller brought immich-ml back" 1 "$back"

# check: the same decision, printed; nothing acted on or recorded.
rows_before=$("$GVW_BINARY" audit --db "$DB" --format json --limit 0 | jq length)
CHECK_ENV=(PROMETHEUS_URL="http://127.0.0.1:$PROM_PORT" KUBE_API_URL="$SIM"
    USED_QUERY='sum by (namespace, pod) (gpu_pod_memory_used_bytes{node="$node"})')
out=$(env "${CHECK_ENV[@]}" "$GVW_BINARY" check --format json)
expect_eq "check (every GPU node) prints an array of decisions" "array 1" "$(echo "$out" | jq -r '"\(type) \(length)"')"
expect_eq "check sees the recovery, with id null" "gpu-node-1 skipped_recovered null" \
    "$(echo "$out" | jq -r '.[0] | "\(.node) \(.result) \(.id)"')"
out=$(env "${CHECK_ENV[@]}" FLOOR_MIB=15000 "$GVW_BINARY" check --node gpu-node-1 --format json)
expect_eq "check --node: below a higher floor nobody is over budget" "skipped_no_candidate none" \
    "$(echo "$out" | jq -r '"\(.result) \(.action)"')"
out=$(env "${CHECK_ENV[@]}" FLOOR_MIB=15000 FALLBACK=largest "$GVW_BINARY" check --node gpu-node-1 --format json)
expect_eq "check --node with FALLBACK=largest prints the victim it would recycle" \
    "would_recycle evict frigate/frigate-5f6d8c7b9-h2m5t" \
    "$(echo "$out" | jq -r '"\(.result) \(.action) \(.victim.namespace)/\(.victim.pod)"')"
env "${CHECK_ENV[@]}" FLOOR_MIB=15000 "$GVW_BINARY" check --node gpu-node-1 >"$TMP/check.txt"
expect_contains "check --format table names the node" "gpu-node-1" "$(cat "$TMP/check.txt")"
expect_eq "check records nothing" "$rows_before" "$("$GVW_BINARY" audit --db "$DB" --format json --limit 0 | jq length)"
expect_eq "check acts on nothing" 1 "$(evictions | jq 'length')"
out=$(env "${CHECK_ENV[@]}" PROMETHEUS_URL=http://127.0.0.1:1 "$GVW_BINARY" check --node gpu-node-1 --format json 2>/dev/null); rc=$?
expect_eq "check without Prometheus is skipped_telemetry, exit 1" "skipped_telemetry 1" "$(echo "$out" | jq -r .result) $rc"

# advertise --once patches every GPU node and says so.
if out=$(KUBE_API_URL="$SIM" GPUMEM_CAPACITY_MIB=13824 "$GVW_BINARY" advertise --once 2>&1); then
    pass "advertise --once exits 0 when every node was patched"
else
    fail "advertise --once exits 0" "$out"
fi
expect_eq "the node now advertises the new capacity" 13824 \
    "$(curl -s "$SIM/api/v1/nodes/gpu-node-1" | jq -r '.status.capacity["viktorbarzin.me/gpumem"]')"
if KUBE_API_URL="$SIM" GPU_NODE_SELECTOR=nvidia.com/gpu.present=nope "$GVW_BINARY" advertise --once >/dev/null 2>&1; then
    fail "advertise --once exits non-zero when no node matches"
else
    pass "advertise --once exits non-zero when no node matches"
fi
# Back to the default (auto), so the seating chart below shows the capacity
# the narration told at start-up.
KUBE_API_URL="$SIM" "$GVW_BINARY" advertise --once >/dev/null 2>&1
expect_eq "advertise --once with the default puts back auto's capacity" "$capacity" \
    "$(curl -s "$SIM/api/v1/nodes/gpu-node-1" | jq -r '.status.capacity["viktorbarzin.me/gpumem"]')"

metrics=$(curl -s "http://127.0.0.1:$SERVE_PORT/metrics")
if printf '%s\n' "$metrics" | promtool check metrics >"$TMP/promtool.out" 2>&1; then
    pass "promtool check metrics is clean after a decision (histogram filled)"
else
    fail "promtool check metrics is clean after a decision" "$(cat "$TMP/promtool.out")"
fi
expect_contains "the duration histogram counted the decision" \
    'gpu_vram_watchdog_decision_duration_seconds_count 1' "$metrics"
expect_contains "metrics count the recycle" 'gpu_vram_watchdog_decisions_total{result="recycled"} 1' "$metrics"
expect_contains "metrics show the advertised capacity" 'gpu_vram_watchdog_capacity_advertised{node="gpu-node-1"} 1' "$metrics"
expect_eq "Prometheus sees the watchdog up" 1 "$(curl -s "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode 'query=up{job="gpu-vram-watchdog"}' | jq -r '.data.result[0].value[1]')"
expect_eq "Prometheus sees the exporter reading NVML" 1 "$(curl -s "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode 'query=gpu_vram_exporter_up' | jq -r '.data.result[0].value[1]')"
gpu_uuid=$(curl -s "$SIM/sim/state" | jq -r '.gpus[0].uuid')
expect_eq "the alert named the GPU (its uuid from NVML)" "$gpu_uuid" \
    "$("$GVW_BINARY" audit alerts --db "$DB" --format json | jq -r '[.[] | select(.alertname == "GPUVRAMLow" and .status == "firing")][0].labels.uuid')"
expect_eq "the free VRAM the alert judged is the device's own" 1 \
    "$(curl -s "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode 'query=count(node_gpu:gpu_vram_free_mib:device)' | jq -r '.data.result[0].value[1]')"

# The seating chart (GET /) shows the card as the device reports it: its free
# figure says where it came from, and the memory no pod accounts for (the
# driver's reserve and the host's ffmpeg) is on the card.
page=$(curl -s "http://127.0.0.1:$SERVE_PORT/")
expect_contains "the page says its free figure is the device's" 'free (<span class="free-source">device</span>)' "$page"
expect_contains "the page shows the memory no pod accounts for" "Memory no pod accounts for: $(unattributed) MiB" "$page"
expect_eq "budgets --format json: the same figure, with its source" "device $(unattributed)" \
    "$(KUBE_API_URL="$SIM" PROMETHEUS_URL="http://127.0.0.1:$PROM_PORT" \
        USED_QUERY='sum by (namespace, pod) (gpu_pod_memory_used_bytes{node="$node"})' \
        "$GVW_BINARY" budgets --node gpu-node-1 --format json | jq -r '"\(.gpus[0].free_source) \(.gpus[0].unattributed_mib)"')"
say "The seating chart (GET /) shows the card as the device reports it: $(unattributed) MiB belong to no pod."
if [ "${E2E_NARRATE:-0}" = 1 ]; then
    KUBE_API_URL="$SIM" PROMETHEUS_URL="http://127.0.0.1:$PROM_PORT" \
        USED_QUERY='sum by (namespace, pod) (gpu_pod_memory_used_bytes{node="$node"})' \
        "$GVW_BINARY" budgets --node gpu-node-1
fi
say "OVER-COMMITTED is expected here: portal-tts (700 MiB) is Pending because no seat is free; the budgets keep it off the card (GPUPodPendingOnBudget tells its owner)."

say "What the audit says (gpu-vram-watchdog audit):"
if [ "${E2E_NARRATE:-0}" = 1 ]; then
    "$GVW_BINARY" audit --db "$DB"
    echo
    "$GVW_BINARY" audit alerts --db "$DB"
    echo
    id=$(echo "$d" | jq -r '.id')
    "$GVW_BINARY" audit show "$id" --db "$DB"
fi
finish
