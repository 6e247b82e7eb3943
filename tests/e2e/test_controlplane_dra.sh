#!/usr/bin/env bash
# test_controlplane_dra.sh -- BUDGET_SOURCES=dra end to end on the REAL control plane
# (issue 36; SPEC "Where budgets come from", "A real API server"). The cluster is
# tests/controlplane/cluster.sh's, with DRAConsumableCapacity on (beta, on by
# default since v1.36; passed explicitly to the API server, the controller
# manager and the scheduler) and the resourceclaim controller running (it makes
# a pod's claim from its ResourceClaimTemplate and writes the pod's
# status.resourceClaimStatuses). The test plays the DRA driver: it publishes a
# ResourceSlice for gpu.nvidia.com on the kwok GPU node (one 80 GiB GPU whose
# `memory` is consumable capacity, allowMultipleAllocations, a requestPolicy
# that rounds up to whole GiB) and a DeviceClass selecting the driver. The
# tenants are Deployments whose pods ask for memory through ResourceClaims:
#   ml/train     a ResourceClaimTemplate requesting 7800Mi (allocated: 8Gi)
#   ml/infer     a ResourceClaimTemplate requesting 4Gi
#   rag/rag      two replicas sharing one ResourceClaim of 16Gi (named in
#                spec.resourceClaims: no status entry, the claim read by name)
# The REAL scheduler allocates every claim (status.allocation with
# consumedCapacity) and binds the pods; gpunode.py gives them VRAM; train's use
# runs away past its claim; serve (BUDGET_SOURCES=dra, deploy/ with
# components/dra applied, its own ServiceAccount token) recycles exactly that
# pod through the Eviction API, and the audit, `check` and `budgets` name the
# source. The exporter (BUDGET_SOURCES=dra, its own ServiceAccount token) reads the
# claims too: its gpu_pod_memory_budget_bytes is each claim's memory, and
# GPUPodOverBudget's expression picks train alone. `check` with the default BUDGET_SOURCES (resource) sees no budget on
# these pods: nothing changes for a cluster using `resource`.
source "$(dirname "$0")/../lib/harness.sh"
source "$(dirname "$0")/../controlplane/cluster.sh"
CPS=$GVW_SOURCE_DIR/tests/controlplane
GVW_STUB_NVML=${GVW_STUB_NVML:-$(dirname "$GVW_BINARY")/stub-nvml/libnvidia-ml.so.1}
T_START=$(date +%s)
CP_TIMINGS=${GVW_CP_TIMINGS:-$TMP/timings}
NODE=gpu-dra
timing() { echo "$1 $2" >>"$CP_TIMINGS"; stamp "timing: $1 = $2"; }

for tool in curl jq openssl python3 prometheus; do
    command -v "$tool" >/dev/null || cp_abort "tool $tool is installed" "scripts/install-deps.sh"
done
[ -f "$GVW_STUB_NVML" ] || cp_abort "the stub NVML library is built" "$GVW_STUB_NVML (target gvw-stub-nvml)"

CP_FEATURE_GATES=DRAConsumableCapacity=true
CP_CONTROLLERS=$CP_CONTROLLERS,resourceclaim-controller
cp_up
pass "the control plane is up with DRAConsumableCapacity (API server, controller manager, scheduler)"
timing dra_cluster_up_ms "$CP_UP_MS"
CA=$CP_DIR/pki/ca.crt

# --- deploy/ with the dra component, as an overlay would use it ------------------------
mkdir -p "$TMP/overlay"
cat >"$TMP/overlay/kustomization.yaml" <<EOF
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [$(realpath --relative-to="$TMP/overlay" "$GVW_SOURCE_DIR/deploy")]
components: [$(realpath --relative-to="$TMP/overlay" "$GVW_SOURCE_DIR/deploy/components/dra")]
EOF
if out=$(kc apply -k "$TMP/overlay" 2>&1); then
    pass "kubectl apply -k (deploy/ + components/dra) succeeds against the real API server"
else
    cp_abort "kubectl apply -k (deploy/ + components/dra) succeeds" "$out"
fi
cp_sa_token gpu-vram-watchdog gpu-vram-watchdog "$TMP/serve.token" ||
    cp_abort "a TokenRequest token for serve's ServiceAccount" "$(cat "$TMP/serve.token")"
cp_sa_token gpu-vram-watchdog-exporter gpu-vram-watchdog-exporter "$TMP/exporter.token" ||
    cp_abort "a TokenRequest token for the exporter's ServiceAccount"
printf 'cp-webhook-%s\n' "$RANDOM$RANDOM" >"$TMP/webhook.token"

# --- the GPU node, its card, the exporter, Prometheus -----------------------------------
cp_gpu_node "$NODE" || cp_abort "the API server accepts GPU node $NODE"
node_ready() { [ "$(kc get node "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]; }
wait_for 30 node_ready "$NODE" || cp_abort "kwok makes $NODE Ready" "$(tail -20 "$CP_DIR/kwok.log")"
mkdir -p "$TMP/nodes"
# An 80 GiB card; the driver keeps 500 MiB.
python3 "$CPS/gpunode.py" --api "$CP_API" --ca "$CA" --cert "$CP_DIR/pki/kwok.crt" \
    --key "$CP_DIR/pki/kwok.key" --dir "$TMP/nodes" --node "$NODE:81920:500" \
    >"$TMP/gpunode.out" 2>"$TMP/gpunode.log" &
PIDS+=($!)
wait_for 10 grep -q '^ready' "$TMP/gpunode.out" || cp_abort "gpunode.py starts" "$(cat "$TMP/gpunode.log")"
for _ in 1 2 3; do
    EXP_PORT=$(free_port)
    env NODE_NAME="$NODE" NVML_LIBRARY="$GVW_STUB_NVML" GVW_STUB_NVML_STATE="$TMP/nodes/$NODE/nvml.state" \
        PROC_ROOT="$TMP/nodes/$NODE/proc" KUBE_API_URL="$CP_API" KUBE_TOKEN_FILE="$TMP/exporter.token" \
        KUBE_CA_FILE="$CA" EXPORTER_LISTEN_ADDR="127.0.0.1:$EXP_PORT" POLL_INTERVAL=500ms \
        BUDGET_SOURCES=dra "$GVW_BINARY" exporter 2>"$TMP/exporter.log" &
    pid=$!
    PIDS+=("$pid")
    if wait_for 10 sh -c "! kill -0 $pid || curl -sf http://127.0.0.1:$EXP_PORT/healthz" && kill -0 "$pid" 2>/dev/null; then
        break
    fi
    kill "$pid" 2>/dev/null
    EXP_PORT=
done
[ -n "$EXP_PORT" ] || cp_abort "the exporter starts" "$(tail -5 "$TMP/exporter.log")"
cat >"$TMP/prometheus.yml" <<YML
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: gpu-vram-watchdog-exporter
    honor_labels: true
    static_configs: [{targets: ["127.0.0.1:$EXP_PORT"]}]
YML
start_on_free_port Prometheus "$TMP/prom.log" prometheus --config.file="$TMP/prometheus.yml" \
    --storage.tsdb.path="$TMP/prom" --web.listen-address=127.0.0.1:@PORT@ || cp_abort "Prometheus starts"
PROM=http://127.0.0.1:$STARTED_PORT
prom() { curl -s "$PROM/api/v1/query" --data-urlencode "query=$1" | jq -r '.data.result[0].value[1] // empty'; }

# --- the driver's part: a ResourceSlice and a DeviceClass -------------------------------
if out=$(kc apply -f - 2>&1 <<EOF
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.nvidia.com}
spec:
  selectors:
    - cel: {expression: 'device.driver == "gpu.nvidia.com"'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: $NODE-gpu.nvidia.com}
spec:
  driver: gpu.nvidia.com
  nodeName: $NODE
  pool: {name: $NODE, generation: 1, resourceSliceCount: 1}
  devices:
    - name: gpu-0
      allowMultipleAllocations: true
      attributes:
        type: {string: gpu}
        productName: {string: NVIDIA H100 80GB HBM3}
      capacity:
        memory:
          value: 80Gi
          requestPolicy:
            default: 1Gi
            validRange: {min: 1Gi, step: 1Gi}
EOF
); then
    pass "the driver's ResourceSlice (80Gi of consumable memory, shared) and DeviceClass are accepted"
else
    cp_abort "the API server accepts a ResourceSlice with consumable capacity" "$out"
fi

# --- the tenants: Deployments whose pods ask for memory through claims ------------------
for ns in ml rag; do
    kc create namespace "$ns" >/dev/null && wait_for 20 kc get serviceaccount default -n "$ns" ||
        cp_abort "namespace $ns"
done
# template NS NAME MEMORY -- a ResourceClaimTemplate asking gpu.nvidia.com for MEMORY.
template() {
    cat <<EOF
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: $2, namespace: $1}
spec:
  spec:
    devices:
      requests:
        - name: gpu
          exactly:
            deviceClassName: gpu.nvidia.com
            capacity: {requests: {memory: $3}}
---
EOF
}
# tenant NS NAME REPLICAS VRAM CLAIMREF -- a Deployment on the node whose pods
# hold VRAM MiB and name their claim by CLAIMREF (resourceClaimTemplateName: X
# or resourceClaimName: X).
tenant() {
    cat <<EOF
apiVersion: apps/v1
kind: Deployment
metadata: {name: $2, namespace: $1}
spec:
  replicas: $3
  selector: {matchLabels: {app: $2}}
  template:
    metadata:
      labels: {app: $2}
      annotations: {gvw.test/vram-mib: "$4"}
    spec:
      nodeSelector: {kubernetes.io/hostname: $NODE}
      terminationGracePeriodSeconds: 5
      resourceClaims: [{name: gpu, $5}]
      containers:
        - name: main
          image: registry.invalid/gvw-tenant:1
          resources: {claims: [{name: gpu}]}
---
EOF
}
if out=$({
    template ml train-gpu 7800Mi
    template ml infer-gpu 4Gi
    cat <<EOF
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: rag-shared, namespace: rag}
spec:
  devices:
    requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
          capacity: {requests: {memory: 16Gi}}
---
EOF
    tenant ml train 1 6000 "resourceClaimTemplateName: train-gpu"
    tenant ml infer 1 3000 "resourceClaimTemplateName: infer-gpu"
    tenant rag rag 2 5000 "resourceClaimName: rag-shared"
} | kc apply -f - 2>&1); then
    pass "the claims, templates and Deployments are accepted"
else
    cp_abort "the tenants are accepted" "$out"
fi
t_sched=$(date +%s%3N)
running() { [ "$(kc get pods -n "$1" -o json | jq '[.items[] | select(.status.phase == "Running")] | length')" = "$2" ]; }
if wait_for 60 running ml 2 && wait_for 30 running rag 2; then
    pass "the real scheduler allocates every claim and binds the four pods to $NODE (kwok runs them)"
    timing dra_scheduled_ms "$(($(date +%s%3N) - t_sched))"
else
    cp_abort "the pods are scheduled and run" "$(kc get pods -A -o wide; kc get resourceclaims -A -o yaml | head -80; tail -20 "$CP_DIR/kube-scheduler.log")"
fi
pod_of() { kc get pods -n "$1" -l "app=$2" -o json | jq -r '[.items[] | select(.metadata.deletionTimestamp == null)][0].metadata.name // empty'; }
TRAIN=$(pod_of ml train)
TRAIN_UID=$(kc get pod -n ml "$TRAIN" -o jsonpath='{.metadata.uid}')
claim_of() { kc get pod -n "$1" "$2" -o json | jq -r '.status.resourceClaimStatuses[0].resourceClaimName // empty'; }
TRAIN_CLAIM=$(claim_of ml "$TRAIN")
# consumed NS CLAIM -- "DRIVER MEMORY" of the claim's allocation result.
consumed() { kc get resourceclaim -n "$1" "$2" -o json | jq -r '.status.allocation.devices.results[] | "\(.driver) \(.consumedCapacity.memory)"'; }
kc get resourceclaims -A -o json >"$TMP/claims.json"
expect_eq "train's claim (from its template, named in its status) is allocated 8Gi on gpu.nvidia.com (7800Mi rounded up by the requestPolicy)" \
    "gpu.nvidia.com 8Gi" "$(consumed ml "$TRAIN_CLAIM")"
expect_eq "infer's claim is allocated 4Gi" "gpu.nvidia.com 4Gi" "$(consumed ml "$(claim_of ml "$(pod_of ml infer)")")"
expect_eq "the shared claim is allocated 16Gi and reserved for both rag pods" "gpu.nvidia.com 16Gi 2" \
    "$(kc get resourceclaim -n rag rag-shared -o json | jq -r '.status.allocation.devices.results[0] | "\(.driver) \(.consumedCapacity.memory)"') $(kc get resourceclaim -n rag rag-shared -o json | jq '.status.reservedFor | length')"
expect_eq "the rag pods name the shared claim in spec.resourceClaims only (no status entry: no template)" "rag-shared 0" \
    "$(kc get pod -n rag "$(pod_of rag rag)" -o json | jq -r '"\(.spec.resourceClaims[0].resourceClaimName) \(.status.resourceClaimStatuses // [] | length)"')"
expect_eq "the three claims are three shares of the one device (shareID set)" 3 \
    "$(jq '[.items[].status.allocation.devices.results[] | select(.device == "gpu-0" and .shareID != null)] | length' "$TMP/claims.json")"

used_is() { [ "$(prom "sum(gpu_pod_memory_used_bytes{node=\"$NODE\"}) / 1048576")" = "$1" ]; }
wait_for 40 used_is 19000 || fail "Prometheus sees the tenants' 19000 MiB on $NODE" "$(prom "sum(gpu_pod_memory_used_bytes{node=\"$NODE\"}) / 1048576")"

# --- the exporter's budget series: the claims read with its own token ------------------
# exp_budgets -- "NS/DEPLOYMENT MIB" of each gpu_pod_memory_budget_bytes the exporter shows.
exp_budgets() {
    curl -s "http://127.0.0.1:$EXP_PORT/metrics" | awk '/^gpu_pod_memory_budget_bytes\{/ {
        match($0, /namespace="[^"]*"/); ns = substr($0, RSTART + 11, RLENGTH - 12)
        match($0, /pod="[^"]*"/); p = substr($0, RSTART + 5, RLENGTH - 6)
        sub(/-[a-z0-9]+-[a-z0-9]+$/, "", p); printf "%s/%s %d\n", ns, p, $NF / 1048576 }' |
        sort | paste -sd, | sed 's/,/, /g'
}
EXP_BUDGETS="ml/infer 4096, ml/train 8192, rag/rag 16384, rag/rag 16384"
exp_budgets_are() { [ "$(exp_budgets)" = "$EXP_BUDGETS" ]; }
# Within a minute at most: the exporter lists again when a tenant's process appears,
# and at least every 60 s.
wait_for 70 exp_budgets_are
expect_eq "the exporter (BUDGET_SOURCES=dra, its own token, components/dra) exports each DRA tenant's claim as its budget series (a shared claim: the whole claim on each sharer)" \
    "$EXP_BUDGETS" "$(exp_budgets)"
expect_eq "the exporter read each claim by name with get (200), never a list" "get 200" \
    "$(python3 "$CPS/kaudit.py" calls "$CP_DIR/audit.log" "$CP_SA_EXPORTER" | awk '$3 == "resource.k8s.io/resourceclaims" { print $2, $1 }' | sort -u | paste -sd,)"

KENV=(KUBE_API_URL="$CP_API" KUBE_TOKEN_FILE="$TMP/serve.token" KUBE_CA_FILE="$CA"
    PROMETHEUS_URL="$PROM" USED_QUERY='sum by (namespace, pod, uuid) (gpu_pod_memory_used_bytes{node="$node"})'
    MIN_RUNTIME=0s)

# --- budgets and check name the source before anything happens -------------------------
out=$(env "${KENV[@]}" BUDGET_SOURCES=dra "$GVW_BINARY" budgets --node "$NODE" --format json 2>"$TMP/budgets.err")
echo "$out" >"$TMP/budgets.json"
tenants() { jq -r '[.. | objects | select(.pod? and .namespace?) | "\(.namespace)/\(.pod | sub("-[a-z0-9]+-[a-z0-9]+$"; "")) \(.budget_source) \(.budget_mib)"] | sort | join(", ")' "$1"; }
expect_eq "budgets --format json: each tenant's budget from dra, the claim's consumed memory (a shared claim: the whole claim on each sharer)" \
    "ml/infer dra 4096, ml/train dra 8192, rag/rag dra 16384, rag/rag dra 16384" "$(tenants "$TMP/budgets.json")"
expect_eq "budgets --format json: the shared claim is one seat (4096 + 8192 + 16384, as the scheduler allocated)" \
    "28672" "$(jq -r .budgets_mib "$TMP/budgets.json")"
out=$(env "${KENV[@]}" BUDGET_SOURCES=dra "$GVW_BINARY" budgets --node "$NODE" 2>&1)
expect_contains "the budgets table marks a dra budget" "[dra]" "$out"

# serve, before the runaway.
start_serve "$TMP/serve.log" "${KENV[@]}" WEBHOOK_TOKEN_FILE="$TMP/webhook.token" BUDGET_SOURCES=dra \
    AUDIT_DB="$TMP/dra.db" DRY_RUN=false MIN_RUNTIME=0s SETTLE=15s ADVERTISE_INTERVAL=0 \
    GPU_NODE_SELECTOR=gvw.test/node=$NODE || cp_abort "serve starts"
grep -q 'capacity advertising is only for' "$TMP/serve.log" ||
    fail "serve says capacity advertising is only for resource" "$(head -5 "$TMP/serve.log")"

# --- the incident: train's use runs away past its 8Gi claim ------------------------------
kc get pods -A -o json | jq -r --arg n "$NODE" '.items[] | select(.spec.nodeName == $n) | .metadata.uid' | grep -vx "$TRAIN_UID" | sort >"$TMP/others"
# 81920 - 500 - 3000 - 2 x 5000 = 68420: at 67500 the card has 920 MiB free.
kc annotate pod -n ml "$TRAIN" gvw.test/vram-mib=67500 --overwrite >/dev/null
free_below() { awk -v f="$(prom "gpu_memory_free_bytes{node=\"$NODE\"} / 1048576")" 'BEGIN { exit !(f != "" && f < 1536) }'; }
wait_for 30 free_below || fail "the device's free VRAM drops below the floor" "$(prom "gpu_memory_free_bytes{node=\"$NODE\"}")"
# GPUPodOverBudget's expression, as rules/ ships it, on the exporter's series: train
# alone is over its claim (67500 - 8192 MiB); the sharers (5000 of 16384) and infer
# (3000 of 4096) are not.
OVER_EXPR=$(python3 -c 'import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
print(next(r["expr"] for g in d["groups"] for r in g["rules"] if r.get("alert") == "GPUPodOverBudget"))' \
    "$GVW_SOURCE_DIR/rules/gpu-vram-watchdog.rules.yml")
over_budget() { curl -s "$PROM/api/v1/query" --data-urlencode "query=$OVER_EXPR" | jq -r '[.data.result[] | "\(.metric.namespace)/\(.metric.pod) \(.value[1] | tonumber | floor)"] | sort | join(", ")'; }
over_is() { [ "$(over_budget)" = "$1" ]; }
wait_for 20 over_is "ml/$TRAIN 59308"
expect_eq "GPUPodOverBudget's expression (rules/) on the exporter's series: train alone, 59308 MiB over its dra budget" \
    "ml/$TRAIN 59308" "$(over_budget)"
out=$(env "${KENV[@]}" BUDGET_SOURCES=dra "$GVW_BINARY" check --node "$NODE" --format json 2>"$TMP/check.err")
echo "$out" >"$TMP/check.json"
one() { jq 'if type == "array" then .[0] else . end' "$1"; }
expect_eq "check (dra): train is the victim, its budget from dra, 8192 MiB" "would_recycle ml/$TRAIN dra 8192" \
    "$(one "$TMP/check.json" | jq -r '"\(.result) \(.victim.namespace)/\(.victim.pod) \(.victim.budget_source) \(.victim.budget_mib)"')"
cands() { jq -r '[.candidates[] | "\(.namespace)/\(.pod | sub("-[a-z0-9]+-[a-z0-9]+$"; "")) \(.budget_source) \(.budget_mib) \(.used_mib) \(.eligible)"] | sort | join(", ")'; }
CANDS="ml/infer dra 4096 3000 false, ml/train dra 8192 67500 true, rag/rag dra 16384 5000 false, rag/rag dra 16384 5000 false"
expect_eq "check (dra): every candidate's budget names its source; each sharer is held against the whole shared claim" \
    "$CANDS" "$(one "$TMP/check.json" | cands)"
# A cluster using resource: the same pods declare no GPUMEM_RESOURCE, so none is a victim by budget.
out=$(env "${KENV[@]}" "$GVW_BINARY" check --node "$NODE" --format json 2>"$TMP/check-resource.err")
echo "$out" >"$TMP/check-resource.json"
expect_eq "check with the default BUDGET_SOURCES (resource): no budget on a DRA pod, no candidate, no source" \
    "skipped_no_candidate null" \
    "$(one "$TMP/check-resource.json" | jq -r '"\(.result) \([.candidates[]? | .budget_source // empty] | first)"')"

kc wait --for=delete "pod/$TRAIN" -n ml --timeout=60s >/dev/null 2>&1 &
waiter=$!
sleep 0.5
t0=$(date +%s%3N)
labels=$(jq -cn --arg n "$NODE" '{alertname:"GPUVRAMLow",severity:"critical",node:$n}')
code=$(jq -cn --argjson l "$labels" --arg t "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
    '{version:"4",status:"firing",receiver:"gpu-vram-watchdog",groupLabels:{},commonLabels:{},
      commonAnnotations:{},externalURL:"",groupKey:"dra",truncatedAlerts:0,
      alerts:[{status:"firing",labels:$l,annotations:{},startsAt:$t,endsAt:"0001-01-01T00:00:00Z",
               generatorURL:"",fingerprint:"d7a0d7a0d7a0d7a0"}]}' |
    curl -s -o "$TMP/webhook.body" -w '%{http_code}' -H "Authorization: Bearer $(cat "$TMP/webhook.token")" \
        -H 'Content-Type: application/json' --data-binary @- "http://127.0.0.1:$SERVE_PORT/webhook")
expect_eq "the webhook accepts GPUVRAMLow for $NODE" 200 "$code"
if wait "$waiter"; then
    pass "train's pod is really gone from the API server"
    timing dra_webhook_to_pod_deleted_ms "$(($(date +%s%3N) - t0))"
else
    fail "train's pod is deleted" "$(tail -5 "$TMP/serve.log")"
fi
audit_json() { "$GVW_BINARY" audit --db "$TMP/dra.db" --format json --limit 0 2>/dev/null; }
decided() { audit_json | jq -e 'length > 0 and all(.[]; .result != "in_progress" and (.result != "recycled" or .verify != null))' >/dev/null; }
wait_for 45 decided || fail "serve's decision ends" "$(audit_json | jq -c '.[0] | {result, reason, error}')"
d=$(audit_json | jq '.[0]')
echo "$d" >"$TMP/decision.json"
expect_eq "the audit: recycled, ml/$TRAIN evicted, budget_source dra, budget_mib 8192 (the claim's consumed capacity)" \
    "recycled ml/$TRAIN evict dra 8192" \
    "$(echo "$d" | jq -r '"\(.result) \(.victim.namespace)/\(.victim.pod) \(.action) \(.victim.budget_source) \(.victim.budget_mib)"')"
expect_eq "the audit's candidates, as check saw them: only train overshoots its claim" "$CANDS" "$(echo "$d" | cands)"
calls() { python3 "$CPS/kaudit.py" calls "$CP_DIR/audit.log" "$CP_SA_SERVE"; }
expect_eq "the eviction went through the real Eviction API once, 201" 201 \
    "$(calls | awk -v p="/namespaces/ml/pods/$TRAIN/eviction" 'index($4, p) { print $1 }' | paste -sd' ')"
expect_eq "serve read each claim by name with get (200), never a list" "get 200" \
    "$(calls | awk '$3 == "resource.k8s.io/resourceclaims" { print $2, $1 }' | sort -u | paste -sd,)"
gone_others=$(comm -23 "$TMP/others" <(kc get pods -A -o json | jq -r '.items[] | .metadata.uid' | sort) | paste -sd' ')
expect_eq "no other tenant was touched (the sharers of rag-shared and infer keep their UIDs)" "" "$gone_others"
new_train() { local p; p=$(pod_of ml train); [ -n "$p" ] && [ "$p" != "$TRAIN" ] && running ml 2; }
if wait_for 30 new_train; then
    pass "its Deployment brings a new train pod, its new claim allocated again ($(pod_of ml train))"
else
    fail "a new train pod runs" "$(kc get pods -n ml -o wide)"
fi

# --- RBAC: nothing refused; the dra component's grant used -----------------------------
forbidden=$(python3 "$CPS/kaudit.py" forbidden "$CP_DIR/audit.log" "$CP_SA_SERVE" "$CP_SA_EXPORTER")
expect_eq "no request of either ServiceAccount was refused (401/403)" "" "$forbidden"
kc get clusterrole gpu-vram-watchdog-dra -o json >"$TMP/role-dra.json"
expect_eq "components/dra's grant (get resourceclaims) was used by serve" "" \
    "$(python3 "$CPS/kaudit.py" unused "$CP_DIR/audit.log" "$TMP/role-dra.json" "$CP_SA_SERVE")"
expect_eq "components/dra's grant (get resourceclaims) was used by the exporter" "" \
    "$(python3 "$CPS/kaudit.py" unused "$CP_DIR/audit.log" "$TMP/role-dra.json" "$CP_SA_EXPORTER")"
timing dra_tier_seconds "$(($(date +%s) - T_START))"
finish
