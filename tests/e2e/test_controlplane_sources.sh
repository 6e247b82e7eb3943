#!/usr/bin/env bash
# test_controlplane_sources.sh -- BUDGET_SOURCES=hami and =kai end to end on the REAL
# control plane (issue 36; SPEC "Where budgets come from", "A real API server"). The
# cluster is tests/controlplane/cluster.sh's; deploy/ applied as is (both sources
# read only the pods serve already lists). Two kwok GPU nodes, one 80 GiB card each
# (gpunode.py, the driver keeps 500 MiB), an exporter each, one Prometheus:
#   gpu-hami  its status capacity carries nvidia.com/gpu 10 (HAMi's device plugin
#             splits a card 10 ways), nvidia.com/gpumem 81920 and
#             nvidia.com/gpumem-percentage 100. On a HAMi cluster its scheduler
#             extender accounts for gpumem; the stock scheduler here needs them on
#             the node to seat the pods. Tenants (limits only: the API server
#             copies them to requests, and canonicalises 4000 to "4k"):
#               vision/detect  nvidia.com/gpu 1, nvidia.com/gpumem 4000
#               llm/chat       nvidia.com/gpu 1, nvidia.com/gpumem-percentage 25
#                              (25 % of the 81920 MiB the exporter reports: 20480)
#               llm/embed      nvidia.com/gpu 1, nvidia.com/gpumem 6000
#   gpu-kai   tenants declare through KAI/Run:ai pod annotations:
#               train/trainer  gpu-memory "8000"
#               serve/llm      gpu-fraction "0.25" (of 81920: 20480)
#             and Run:ai's reservation pod (namespace runai-reservation, a
#             Deployment: it has a controller) gpu-fraction "0.05" (4096) holding
#             40000 MiB: were it a tenant, its overshoot would be the largest.
# The REAL scheduler binds every pod; detect's and trainer's use runs away; a
# serve per node (BUDGET_SOURCES=hami, =kai; deploy/'s ServiceAccount token)
# recycles exactly that pod through the Eviction API, and `check`/`budgets`/the
# audit name the source. `check` with the default BUDGET_SOURCES (resource) sees
# no budget on these pods: nothing changes for a cluster using `resource`.
source "$(dirname "$0")/../lib/harness.sh"
source "$(dirname "$0")/../controlplane/cluster.sh"
CPS=$GVW_SOURCE_DIR/tests/controlplane
GVW_STUB_NVML=${GVW_STUB_NVML:-$(dirname "$GVW_BINARY")/stub-nvml/libnvidia-ml.so.1}
T_START=$(date +%s)
CP_TIMINGS=${GVW_CP_TIMINGS:-$TMP/timings}
HAMI=gpu-hami
KAI=gpu-kai
timing() { echo "$1 $2" >>"$CP_TIMINGS"; stamp "timing: $1 = $2"; }

for tool in curl jq openssl python3 prometheus; do
    command -v "$tool" >/dev/null || cp_abort "tool $tool is installed" "scripts/install-deps.sh"
done
[ -f "$GVW_STUB_NVML" ] || cp_abort "the stub NVML library is built" "$GVW_STUB_NVML (target gvw-stub-nvml)"

cp_up
pass "the control plane is up (API server, controller manager, scheduler, kwok)"
timing sources_cluster_up_ms "$CP_UP_MS"
CA=$CP_DIR/pki/ca.crt

if out=$(kc apply -k "$GVW_SOURCE_DIR/deploy" 2>&1); then
    pass "kubectl apply -k deploy/ succeeds against the real API server"
else
    cp_abort "kubectl apply -k deploy/ succeeds" "$out"
fi
cp_sa_token gpu-vram-watchdog gpu-vram-watchdog "$TMP/serve.token" ||
    cp_abort "a TokenRequest token for serve's ServiceAccount" "$(cat "$TMP/serve.token")"
cp_sa_token gpu-vram-watchdog-exporter gpu-vram-watchdog-exporter "$TMP/exporter.token" ||
    cp_abort "a TokenRequest token for the exporter's ServiceAccount"
printf 'cp-webhook-%s\n' "$RANDOM$RANDOM" >"$TMP/webhook.token"

# --- the GPU nodes, their cards, the exporters, Prometheus ------------------------------
node_ready() { [ "$(kc get node "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]; }
for n in "$HAMI" "$KAI"; do
    cp_gpu_node "$n" || cp_abort "the API server accepts GPU node $n"
done
for n in "$HAMI" "$KAI"; do
    wait_for 30 node_ready "$n" || cp_abort "kwok makes $n Ready" "$(tail -20 "$CP_DIR/kwok.log")"
done
# HAMi's resources on its node's status (kwok's node-allocatable stage copies
# capacity to allocatable, as the kubelet's next sync would).
hami_res='"nvidia.com/gpu":"10","nvidia.com/gpumem":"81920","nvidia.com/gpumem-percentage":"100"'
if out=$(kc patch node "$HAMI" --subresource=status --type=merge \
    -p "{\"status\":{\"capacity\":{$hami_res},\"allocatable\":{$hami_res}}}" 2>&1); then
    pass "$HAMI's status carries HAMi's nvidia.com/gpu, gpumem and gpumem-percentage"
else
    cp_abort "the node status patch is accepted" "$out"
fi
mkdir -p "$TMP/nodes"
python3 "$CPS/gpunode.py" --api "$CP_API" --ca "$CA" --cert "$CP_DIR/pki/kwok.crt" \
    --key "$CP_DIR/pki/kwok.key" --dir "$TMP/nodes" --node "$HAMI:81920:500" --node "$KAI:81920:500" \
    >"$TMP/gpunode.out" 2>"$TMP/gpunode.log" &
PIDS+=($!)
wait_for 10 grep -q '^ready' "$TMP/gpunode.out" || cp_abort "gpunode.py starts" "$(cat "$TMP/gpunode.log")"
# exporter NODE -- the node's exporter on a free port; sets EXP_PORT.
exporter() {
    local pid
    for _ in 1 2 3; do
        EXP_PORT=$(free_port)
        env NODE_NAME="$1" NVML_LIBRARY="$GVW_STUB_NVML" GVW_STUB_NVML_STATE="$TMP/nodes/$1/nvml.state" \
            PROC_ROOT="$TMP/nodes/$1/proc" KUBE_API_URL="$CP_API" KUBE_TOKEN_FILE="$TMP/exporter.token" \
            KUBE_CA_FILE="$CA" EXPORTER_LISTEN_ADDR="127.0.0.1:$EXP_PORT" POLL_INTERVAL=500ms \
            "$GVW_BINARY" exporter 2>"$TMP/exporter-$1.log" &
        pid=$!
        PIDS+=("$pid")
        if wait_for 10 sh -c "! kill -0 $pid || curl -sf http://127.0.0.1:$EXP_PORT/healthz" && kill -0 "$pid" 2>/dev/null; then
            return 0
        fi
        kill "$pid" 2>/dev/null
    done
    cp_abort "the exporter for $1 starts" "$(tail -5 "$TMP/exporter-$1.log")"
}
exporter "$HAMI"
EXP_HAMI=$EXP_PORT
exporter "$KAI"
EXP_KAI=$EXP_PORT
cat >"$TMP/prometheus.yml" <<YML
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: gpu-vram-watchdog-exporter
    honor_labels: true
    static_configs: [{targets: ["127.0.0.1:$EXP_HAMI", "127.0.0.1:$EXP_KAI"]}]
YML
start_on_free_port Prometheus "$TMP/prom.log" prometheus --config.file="$TMP/prometheus.yml" \
    --storage.tsdb.path="$TMP/prom" --web.listen-address=127.0.0.1:@PORT@ || cp_abort "Prometheus starts"
PROM=http://127.0.0.1:$STARTED_PORT
prom() { curl -s "$PROM/api/v1/query" --data-urlencode "query=$1" | jq -r '.data.result[0].value[1] // empty'; }

# --- the tenants ---------------------------------------------------------------------------
for ns in vision llm train serve runai-reservation; do
    kc create namespace "$ns" >/dev/null && wait_for 20 kc get serviceaccount default -n "$ns" ||
        cp_abort "namespace $ns"
done
# tenant NS NAME NODE VRAM ANNOTATIONS LIMITS -- a one-replica Deployment on NODE
# whose pod holds VRAM MiB; ANNOTATIONS and LIMITS are YAML flow maps' insides.
tenant() {
    cat <<EOF
apiVersion: apps/v1
kind: Deployment
metadata: {name: $2, namespace: $1}
spec:
  replicas: 1
  selector: {matchLabels: {app: $2}}
  template:
    metadata:
      labels: {app: $2}
      annotations: {gvw.test/vram-mib: "$4"${5:+, $5}}
    spec:
      nodeSelector: {kubernetes.io/hostname: $3}
      terminationGracePeriodSeconds: 5
      containers:
        - name: main
          image: registry.invalid/gvw-tenant:1
          resources: {limits: {${6:-}}}
---
EOF
}
if out=$({
    tenant vision detect "$HAMI" 3000 "" '"nvidia.com/gpu": 1, "nvidia.com/gpumem": 4000'
    tenant llm chat "$HAMI" 15000 "" '"nvidia.com/gpu": 1, "nvidia.com/gpumem-percentage": 25'
    tenant llm embed "$HAMI" 5000 "" '"nvidia.com/gpu": 1, "nvidia.com/gpumem": 6000'
    tenant train trainer "$KAI" 7000 'gpu-memory: "8000"'
    tenant serve llm "$KAI" 15000 'gpu-fraction: "0.25"'
    tenant runai-reservation "runai-reservation-gpu-$KAI" "$KAI" 40000 'gpu-fraction: "0.05"'
} | kc apply -f - 2>&1); then
    pass "the six Deployments are accepted"
else
    cp_abort "the tenants are accepted" "$out"
fi
t_sched=$(date +%s%3N)
# on_node NODE N -- N pods Running on NODE.
on_node() { [ "$(kc get pods -A -o json | jq --arg n "$1" '[.items[] | select(.spec.nodeName == $n and .status.phase == "Running")] | length')" = "$2" ]; }
if wait_for 60 on_node "$HAMI" 3 && wait_for 30 on_node "$KAI" 3; then
    pass "the real scheduler binds the HAMi pods (nvidia.com/gpu and gpumem seated) and the KAI pods; kwok runs them"
    timing sources_scheduled_ms "$(($(date +%s%3N) - t_sched))"
else
    cp_abort "the pods are scheduled and run" "$(kc get pods -A -o wide; tail -20 "$CP_DIR/kube-scheduler.log")"
fi
expect_eq "the API server stores detect's gpumem 4000 as \"4k\", in limits and (copied) requests" "4k 4k" \
    "$(kc get pods -n vision -o json | jq -r '.items[0].spec.containers[0].resources | "\(.limits["nvidia.com/gpumem"]) \(.requests["nvidia.com/gpumem"])"')"
expect_eq "the scheduler counted the HAMi pods against $HAMI's extended resources" "3 10000 25" \
    "$(kc get pods -A -o json | jq -r --arg n "$HAMI" '[.items[] | select(.spec.nodeName == $n) | .spec.containers[0].resources.requests] |
        "\(map(.["nvidia.com/gpu"] | tonumber) | add) \(map(.["nvidia.com/gpumem"] // "0" | sub("k$"; "000") | tonumber) | add) \(map(.["nvidia.com/gpumem-percentage"] // "0" | tonumber) | add)"')"
pod_of() { kc get pods -n "$1" -l "app=$2" -o json | jq -r '[.items[] | select(.metadata.deletionTimestamp == null)][0].metadata.name // empty'; }
uid_of() { kc get pod -n "$1" "$2" -o jsonpath='{.metadata.uid}'; }
DETECT=$(pod_of vision detect)
TRAINER=$(pod_of train trainer)
RESERVATION=$(pod_of runai-reservation "runai-reservation-gpu-$KAI")

used_is() { [ "$(prom "sum(gpu_pod_memory_used_bytes{node=\"$1\"}) / 1048576")" = "$2" ]; }
wait_for 40 used_is "$HAMI" 23000 || fail "Prometheus sees the HAMi tenants' 23000 MiB" "$(prom "sum(gpu_pod_memory_used_bytes{node=\"$HAMI\"}) / 1048576")"
wait_for 20 used_is "$KAI" 62000 || fail "Prometheus sees the KAI pods' 62000 MiB" "$(prom "sum(gpu_pod_memory_used_bytes{node=\"$KAI\"}) / 1048576")"

KENV=(KUBE_API_URL="$CP_API" KUBE_TOKEN_FILE="$TMP/serve.token" KUBE_CA_FILE="$CA"
    PROMETHEUS_URL="$PROM" USED_QUERY='sum by (namespace, pod, uuid) (gpu_pod_memory_used_bytes{node="$node"})'
    MIN_RUNTIME=0s)
tenants() { jq -r '[.. | objects | select(.pod? and .namespace?) | "\(.namespace)/\(.pod | sub("-[a-z0-9]+-[a-z0-9]+$"; "")) \(.budget_source) \(.budget_mib)"] | unique | join(", ")' "$1"; }
env "${KENV[@]}" BUDGET_SOURCES=hami "$GVW_BINARY" budgets --node "$HAMI" --format json >"$TMP/budgets-hami.json" 2>"$TMP/budgets-hami.err"
expect_eq "budgets (hami): gpumem as declared, gpumem-percentage 25 of the card's 81920" \
    "llm/chat hami 20480, llm/embed hami 6000, vision/detect hami 4000" "$(tenants "$TMP/budgets-hami.json")"
env "${KENV[@]}" BUDGET_SOURCES=kai "$GVW_BINARY" budgets --node "$KAI" --format json >"$TMP/budgets-kai.json" 2>"$TMP/budgets-kai.err"
expect_eq "budgets (kai): gpu-memory as declared, gpu-fraction 0.25 of 81920; the reservation pod has no source, no budget" \
    "runai-reservation/runai-reservation-gpu-gpu-kai null null, serve/llm kai 20480, train/trainer kai 8000" \
    "$(tenants "$TMP/budgets-kai.json")"
expect_eq "budgets (kai): the reservation pod's VRAM is shown, never eligible" "40000 none false" \
    "$(jq -r --arg p "$RESERVATION" '[.. | objects | select(.pod? == $p) | "\(.used_mib) \(.budget) \(.eligible)"] | unique | join(",")' "$TMP/budgets-kai.json")"
expect_eq "budgets (kai): the reservation pod holds no seat (8000 + 20480)" 28480 "$(jq -r .budgets_mib "$TMP/budgets-kai.json")"

# --- serve, one per node, before the runaways --------------------------------------------
start_serve "$TMP/serve-hami.log" "${KENV[@]}" WEBHOOK_TOKEN_FILE="$TMP/webhook.token" BUDGET_SOURCES=hami \
    AUDIT_DB="$TMP/hami.db" DRY_RUN=false SETTLE=15s ADVERTISE_INTERVAL=0 \
    GPU_NODE_SELECTOR=gvw.test/node=$HAMI || cp_abort "serve (hami) starts"
PORT_HAMI=$SERVE_PORT
start_serve "$TMP/serve-kai.log" "${KENV[@]}" WEBHOOK_TOKEN_FILE="$TMP/webhook.token" BUDGET_SOURCES=kai \
    AUDIT_DB="$TMP/kai.db" DRY_RUN=false SETTLE=15s ADVERTISE_INTERVAL=0 \
    GPU_NODE_SELECTOR=gvw.test/node=$KAI || cp_abort "serve (kai) starts"
PORT_KAI=$SERVE_PORT

# --- the incidents ---------------------------------------------------------------------------
kc get pods -A -o json | jq -r '.items[] | select(.spec.nodeName != null) | .metadata.uid' |
    grep -vx -e "$(uid_of vision "$DETECT")" -e "$(uid_of train "$TRAINER")" | sort >"$TMP/others"
# 81920 - 500 - 15000 - 5000 = 61420: at 60500 the card has 920 MiB free.
kc annotate pod -n vision "$DETECT" gvw.test/vram-mib=60500 --overwrite >/dev/null
# 81920 - 500 - 15000 - 40000 = 26420: at 26000 the card has 420 MiB free.
kc annotate pod -n train "$TRAINER" gvw.test/vram-mib=26000 --overwrite >/dev/null
free_below() { awk -v f="$(prom "gpu_memory_free_bytes{node=\"$1\"} / 1048576")" 'BEGIN { exit !(f != "" && f < 1536) }'; }
wait_for 30 free_below "$HAMI" || fail "$HAMI's free VRAM drops below the floor" "$(prom "gpu_memory_free_bytes{node=\"$HAMI\"}")"
wait_for 30 free_below "$KAI" || fail "$KAI's free VRAM drops below the floor" "$(prom "gpu_memory_free_bytes{node=\"$KAI\"}")"

one() { jq 'if type == "array" then .[0] else . end' "$1"; }
cands() { jq -r '[.candidates[] | "\(.namespace)/\(.pod | sub("-[a-z0-9]+-[a-z0-9]+$"; "")) \(.budget_source) \(.budget_mib) \(.eligible)"] | sort | join(", ")'; }
victim() { jq -r '"\(.result) \(.victim.namespace)/\(.victim.pod) \(.victim.budget_source) \(.victim.budget_mib)"'; }
env "${KENV[@]}" BUDGET_SOURCES=hami "$GVW_BINARY" check --node "$HAMI" --format json >"$TMP/check-hami.json" 2>"$TMP/check-hami.err"
expect_eq "check (hami): detect is the victim, budget from hami, 4000 MiB" "would_recycle vision/$DETECT hami 4000" \
    "$(one "$TMP/check-hami.json" | victim)"
CANDS_HAMI="llm/chat hami 20480 false, llm/embed hami 6000 false, vision/detect hami 4000 true"
expect_eq "check (hami): every candidate's budget names hami" "$CANDS_HAMI" "$(one "$TMP/check-hami.json" | cands)"
env "${KENV[@]}" BUDGET_SOURCES=kai "$GVW_BINARY" check --node "$KAI" --format json >"$TMP/check-kai.json" 2>"$TMP/check-kai.err"
expect_eq "check (kai): trainer is the victim, budget from kai, 8000 MiB" "would_recycle train/$TRAINER kai 8000" \
    "$(one "$TMP/check-kai.json" | victim)"
resv() { jq -r --arg p "$RESERVATION" '[.candidates[] | select(.pod == $p) | "\(.eligible) \(.budget_source) \(.budget_mib)"] | join(",")'; }
expect_eq "check (kai): the reservation pod, the largest overshoot, is never eligible and has no budget" \
    "false null null" "$(one "$TMP/check-kai.json" | resv)"
# A cluster using resource: the same pods declare no GPUMEM_RESOURCE, so none is a victim by budget.
for n in "$HAMI" "$KAI"; do
    env "${KENV[@]}" "$GVW_BINARY" check --node "$n" --format json >"$TMP/check-resource-$n.json" 2>"$TMP/check-resource-$n.err"
    expect_eq "check on $n with the default BUDGET_SOURCES (resource): no budget, no candidate, no source" \
        "skipped_no_candidate 0" \
        "$(one "$TMP/check-resource-$n.json" | jq -r '"\(.result) \([.candidates[]? | select(.budget_source != null or .budget_mib != null)] | length)"')"
done

kc wait --for=delete "pod/$DETECT" -n vision --timeout=60s >/dev/null 2>&1 &
w_hami=$!
kc wait --for=delete "pod/$TRAINER" -n train --timeout=60s >/dev/null 2>&1 &
w_kai=$!
sleep 0.5
# fire NODE PORT -- GPUVRAMLow for NODE to the serve on PORT; prints the status code.
fire() {
    local labels
    labels=$(jq -cn --arg n "$1" '{alertname:"GPUVRAMLow",severity:"critical",node:$n}')
    jq -cn --argjson l "$labels" --arg t "$(date -u +%Y-%m-%dT%H:%M:%SZ)" --arg k "$1" \
        '{version:"4",status:"firing",receiver:"gpu-vram-watchdog",groupLabels:{},commonLabels:{},
          commonAnnotations:{},externalURL:"",groupKey:$k,truncatedAlerts:0,
          alerts:[{status:"firing",labels:$l,annotations:{},startsAt:$t,endsAt:"0001-01-01T00:00:00Z",
                   generatorURL:"",fingerprint:"5015ce5015ce5015"}]}' |
        curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(cat "$TMP/webhook.token")" \
            -H 'Content-Type: application/json' --data-binary @- "http://127.0.0.1:$2/webhook"
}
t0=$(date +%s%3N)
expect_eq "serve (hami) accepts GPUVRAMLow for $HAMI" 200 "$(fire "$HAMI" "$PORT_HAMI")"
expect_eq "serve (kai) accepts GPUVRAMLow for $KAI" 200 "$(fire "$KAI" "$PORT_KAI")"
if wait "$w_hami"; then
    pass "detect's pod is really gone from the API server"
else
    fail "detect's pod is deleted" "$(tail -5 "$TMP/serve-hami.log")"
fi
if wait "$w_kai"; then
    pass "trainer's pod is really gone from the API server"
else
    fail "trainer's pod is deleted" "$(tail -5 "$TMP/serve-kai.log")"
fi
timing sources_webhook_to_pods_deleted_ms "$(($(date +%s%3N) - t0))"
audit_json() { "$GVW_BINARY" audit --db "$1" --format json --limit 0 2>/dev/null; }
decided() { audit_json "$1" | jq -e 'length > 0 and all(.[]; .result != "in_progress" and (.result != "recycled" or .verify != null))' >/dev/null; }
wait_for 45 decided "$TMP/hami.db" || fail "serve (hami)'s decision ends" "$(audit_json "$TMP/hami.db" | jq -c '.[0] | {result, reason, error}')"
wait_for 45 decided "$TMP/kai.db" || fail "serve (kai)'s decision ends" "$(audit_json "$TMP/kai.db" | jq -c '.[0] | {result, reason, error}')"
audit_json "$TMP/hami.db" | jq '.[0]' >"$TMP/decision-hami.json"
audit_json "$TMP/kai.db" | jq '.[0]' >"$TMP/decision-kai.json"
expect_eq "the audit (hami): recycled, vision/$DETECT evicted, budget_source hami, budget_mib 4000" \
    "recycled vision/$DETECT evict hami 4000" \
    "$(jq -r '"\(.result) \(.victim.namespace)/\(.victim.pod) \(.action) \(.victim.budget_source) \(.victim.budget_mib)"' "$TMP/decision-hami.json")"
expect_eq "the audit's candidates (hami), as check saw them" "$CANDS_HAMI" "$(cands <"$TMP/decision-hami.json")"
expect_eq "the audit (kai): recycled, train/$TRAINER evicted, budget_source kai, budget_mib 8000" \
    "recycled train/$TRAINER evict kai 8000" \
    "$(jq -r '"\(.result) \(.victim.namespace)/\(.victim.pod) \(.action) \(.victim.budget_source) \(.victim.budget_mib)"' "$TMP/decision-kai.json")"
expect_eq "the audit (kai): the reservation pod is never eligible and has no budget" "false null null" "$(resv <"$TMP/decision-kai.json")"
calls() { python3 "$CPS/kaudit.py" calls "$CP_DIR/audit.log" "$CP_SA_SERVE"; }
expect_eq "two evictions through the real Eviction API, detect's and trainer's, each once, 201" \
    "201 /namespaces/train/pods/$TRAINER/eviction,201 /namespaces/vision/pods/$DETECT/eviction" \
    "$(calls | awk '$4 ~ /\/eviction/ { sub(/^\/api\/v1/, "", $4); sub(/\?.*/, "", $4); print $1, $4 }' | sort | paste -sd,)"
gone_others=$(comm -23 "$TMP/others" <(kc get pods -A -o json | jq -r '.items[] | .metadata.uid' | sort) | paste -sd' ')
expect_eq "no other pod was touched (chat, embed, llm and the reservation pod keep their UIDs)" "" "$gone_others"
new_pods() {
    local d t
    d=$(pod_of vision detect) t=$(pod_of train trainer)
    [ -n "$d" ] && [ "$d" != "$DETECT" ] && [ -n "$t" ] && [ "$t" != "$TRAINER" ] && on_node "$HAMI" 3 && on_node "$KAI" 3
}
if wait_for 30 new_pods; then
    pass "their Deployments bring new pods, seated again by the scheduler"
else
    fail "new detect and trainer pods run" "$(kc get pods -A -o wide)"
fi
forbidden=$(python3 "$CPS/kaudit.py" forbidden "$CP_DIR/audit.log" "$CP_SA_SERVE" "$CP_SA_EXPORTER")
expect_eq "no request of either ServiceAccount was refused (401/403)" "" "$forbidden"
timing sources_tier_seconds "$(($(date +%s) - T_START))"
finish
