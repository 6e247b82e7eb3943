#!/usr/bin/env bash
# test_controlplane.sh -- serve, exporter, advertise, check and budgets against a REAL
# Kubernetes control plane (tests/controlplane/cluster.sh: etcd, kube-apiserver
# with RBAC and an audit log, kube-controller-manager, kube-scheduler, kwok),
# with deploy/ applied by `kubectl apply -k` and every process of ours using
# its own ServiceAccount's TokenRequest token, so the shipped RBAC is what is
# tested. The GPUs are the stub NVML's, kept by tests/controlplane/gpunode.py
# from the real pods on each kwok node; Debian's Prometheus scrapes the real
# exporters; the webhook is posted by the test. One cluster, one kwok GPU node
# (and namespace) per scenario:
#   a deploy/ applied; RBAC: no 401/403 for either ServiceAccount, no unused grant
#   b the incident: the runaway evicted through the Eviction API, gone, replaced
#   c PodDisruptionBudgets: 429 -> next candidate; all refused -> blocked; two PDBs (500)
#   d DRY_RUN with ACTION=evict and ACTION=delete: the pod unchanged
#   e the Events, as `kubectl events --for pod/NAME` shows them
#   f capacity: advertise --once, then the real scheduler seats by it
#   g a bound token rotated under serve
#   h Succeeded/Failed pods are no tenants (budgets, the exporter)
#   i the API server shedding load (429 text/plain) is retried, same victim
#   j a StatefulSet pod replaced between decision and eviction is never evicted
# CP_ONLY="b d" runs only those scenarios (a and the RBAC checks always run).
source "$(dirname "$0")/../lib/harness.sh"
source "$(dirname "$0")/../controlplane/cluster.sh"
CPS=$GVW_SOURCE_DIR/tests/controlplane
GVW_STUB_NVML=${GVW_STUB_NVML:-$(dirname "$GVW_BINARY")/stub-nvml/libnvidia-ml.so.1}
T_START=$(date +%s)
RES=viktorbarzin.me/gpumem
CP_TIMINGS=${GVW_CP_TIMINGS:-$TMP/timings}

want() { [ -z "${CP_ONLY:-}" ] || [[ " $CP_ONLY " == *" $1 "* ]]; }
timing() { echo "$1 $2" >>"$CP_TIMINGS"; stamp "timing: $1 = $2"; }

for tool in curl jq openssl python3 prometheus; do
    command -v "$tool" >/dev/null || cp_abort "tool $tool is installed" "scripts/install-deps.sh"
done
[ -f "$GVW_STUB_NVML" ] || cp_abort "the stub NVML library is built" "$GVW_STUB_NVML (target gvw-stub-nvml)"

# --- the control plane -----------------------------------------------------------
cp_up
pass "the control plane is up (etcd, kube-apiserver, controller manager, scheduler, kwok)"
timing cluster_up_ms "$CP_UP_MS"
CA=$CP_DIR/pki/ca.crt

# --- (a) deploy/ as shipped --------------------------------------------------------
if out=$(kc apply -k "$GVW_SOURCE_DIR/deploy" 2>&1); then
    pass "kubectl apply -k deploy/ succeeds against the real API server"
else
    fail "kubectl apply -k deploy/ succeeds" "$out"
fi
printf '%s\n' "$out" >"$TMP/apply.out"
want_objs=$(kc kustomize "$GVW_SOURCE_DIR/deploy" | grep -c '^kind:')
got_objs=$(kc get -k "$GVW_SOURCE_DIR/deploy" -o name 2>&1 | grep -c /)
expect_eq "every object deploy/ renders is stored ($want_objs)" "$want_objs" "$got_objs"
# Warnings the server gave (Pod Security on the exporter's hostPID) are shown, not failed.
grep -i '^warning' "$TMP/apply.out" | sed 's/^/  server: /'

cp_sa_token gpu-vram-watchdog gpu-vram-watchdog "$TMP/serve.token" ||
    cp_abort "a TokenRequest token for serve's ServiceAccount" "$(cat "$TMP/serve.token")"
cp_sa_token gpu-vram-watchdog-exporter gpu-vram-watchdog-exporter "$TMP/exporter.token" ||
    cp_abort "a TokenRequest token for the exporter's ServiceAccount" "$(cat "$TMP/exporter.token")"
pass "TokenRequest tokens for both ServiceAccounts (kubectl create token)"
printf 'cp-webhook-%s\n' "$RANDOM$RANDOM" >"$TMP/webhook.token"

# --- GPU nodes (kwok), their cards (gpunode.py), exporters, Prometheus ------------
NODES=(gpu-b gpu-c1 gpu-c2 gpu-c3 gpu-d gpu-f gpu-g gpu-h gpu-i gpu-j)
# gpu-j's pods get loopback addresses, so a test server can be a tenant's
# release endpoint (SPEC "Cooperative release"); the octets differ per run.
J_NET=127.$((100 + RANDOM % 100)).$((RANDOM % 250))
for n in "${NODES[@]}"; do
    if [ "$n" = gpu-j ]; then cp_gpu_node "$n" "$J_NET.0/24"; else cp_gpu_node "$n"; fi ||
        cp_abort "the API server accepts GPU node $n"
done
node_ready() { [ "$(kc get node "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]; }
for n in "${NODES[@]}"; do
    wait_for 30 node_ready "$n" || cp_abort "kwok makes node $n Ready" "$(tail -20 "$CP_DIR/kwok.log")"
done
pass "kwok plays ${#NODES[@]} GPU nodes (Ready)"

node_args=()
for n in "${NODES[@]}"; do node_args+=(--node "$n:15360:300"); done
mkdir -p "$TMP/nodes"
python3 "$CPS/gpunode.py" --api "$CP_API" --ca "$CA" --cert "$CP_DIR/pki/kwok.crt" \
    --key "$CP_DIR/pki/kwok.key" --dir "$TMP/nodes" "${node_args[@]}" >"$TMP/gpunode.out" 2>"$TMP/gpunode.log" &
PIDS+=($!)
wait_for 10 grep -q '^ready' "$TMP/gpunode.out" || cp_abort "gpunode.py starts" "$(cat "$TMP/gpunode.log")"

declare -A EXP_PORT
EXP_TARGETS=()
start_exporter() {
    local n=$1 port pid
    for _ in 1 2 3; do
        port=$(free_port)
        env NODE_NAME="$n" NVML_LIBRARY="$GVW_STUB_NVML" GVW_STUB_NVML_STATE="$TMP/nodes/$n/nvml.state" \
            PROC_ROOT="$TMP/nodes/$n/proc" KUBE_API_URL="$CP_API" KUBE_TOKEN_FILE="$TMP/exporter.token" \
            KUBE_CA_FILE="$CA" EXPORTER_LISTEN_ADDR="127.0.0.1:$port" POLL_INTERVAL=500ms \
            "$GVW_BINARY" exporter 2>"$TMP/exporter-$n.log" &
        pid=$!
        PIDS+=("$pid")
        if wait_for 10 sh -c "! kill -0 $pid || curl -sf http://127.0.0.1:$port/healthz" && kill -0 "$pid" 2>/dev/null; then
            EXP_PORT[$n]=$port
            EXP_TARGETS+=("\"127.0.0.1:$port\"")
            return 0
        fi
        kill "$pid" 2>/dev/null
    done
    cp_abort "the exporter for $n starts" "$(tail -5 "$TMP/exporter-$n.log")"
}
for n in "${NODES[@]}"; do start_exporter "$n"; done
cat >"$TMP/prometheus.yml" <<YML
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: gpu-vram-watchdog-exporter
    honor_labels: true
    static_configs: [{targets: [$(IFS=,; echo "${EXP_TARGETS[*]}")]}]
YML
start_on_free_port Prometheus "$TMP/prom.log" prometheus --config.file="$TMP/prometheus.yml" \
    --storage.tsdb.path="$TMP/prom" --web.listen-address=127.0.0.1:@PORT@ || cp_abort "Prometheus starts"
PROM_PORT=$STARTED_PORT
PROM=http://127.0.0.1:$PROM_PORT

# prom QUERY -- the first sample's value, or nothing.
prom() { curl -s "$PROM/api/v1/query" --data-urlencode "query=$1" | jq -r '.data.result[0].value[1] // empty'; }
prom_is() { [ "$(prom "$1")" = "$2" ]; }
wait_for 30 prom_is "count(gpu_vram_exporter_up == 1)" "${#NODES[@]}" ||
    cp_abort "Prometheus scrapes every exporter reading NVML" "$(prom 'count(gpu_vram_exporter_up == 1)')"
pass "Prometheus scrapes ${#NODES[@]} exporters, each reading its node's (stub) NVML"

# The settings every command of ours runs with: the API server over TLS with
# serve's own ServiceAccount token, Prometheus, the shipped USED_QUERY.
KENV=(KUBE_API_URL="$CP_API" KUBE_TOKEN_FILE="$TMP/serve.token" KUBE_CA_FILE="$CA"
    PROMETHEUS_URL="$PROM" USED_QUERY='sum by (namespace, pod, uuid) (gpu_pod_memory_used_bytes{node="$node"})')

# --- (f, part 1) capacity: advertise --once patches nodes/status --------------------
if out=$(env "${KENV[@]}" "$GVW_BINARY" advertise --once 2>&1); then
    pass "advertise --once (serve's ServiceAccount) exits 0"
else
    fail "advertise --once exits 0" "$out"
fi
allocatable_is() { [ "$(kc get node "$1" -o json | jq -r --arg r "$RES" '"\(.status.capacity[$r]) \(.status.allocatable[$r])"')" = "13312 13312" ]; }
bad=
for n in "${NODES[@]}"; do wait_for 20 allocatable_is "$n" || bad="$bad $n"; done
expect_eq "every GPU node's status has $RES 13312 (auto: 15360 - 2048), allocatable too" "" "$bad"

# --- helpers for the scenarios -------------------------------------------------------

# tenant KIND NS NAME NODE BUDGET VRAM [ANNOTATION=VALUE...] -- a workload of one
# replica on NODE declaring BUDGET MiB, whose pods hold VRAM MiB ("N,M": processes).
tenant() {
    local kind=$1 ns=$2 name=$3 node=$4 budget=$5 vram=$6 a ann sts=
    shift 6
    ann="gvw.test/vram-mib: \"$vram\""
    for a in "$@"; do ann="$ann, ${a%%=*}: \"${a#*=}\""; done
    [ "$kind" = StatefulSet ] && sts="serviceName: $name"
    kc apply -f - >/dev/null <<EOF
apiVersion: apps/v1
kind: $kind
metadata: {name: $name, namespace: $ns}
spec:
  replicas: 1
  $sts
  selector: {matchLabels: {app: $name}}
  template:
    metadata:
      labels: {app: $name}
      annotations: {$ann}
    spec:
      nodeSelector: {kubernetes.io/hostname: $node}
      terminationGracePeriodSeconds: 5
      containers:
        - name: main
          image: registry.invalid/gvw-tenant:1
          resources:
            limits: {nvidia.com/gpu: "1", $RES: "$budget"}
EOF
}
namespace() { kc create namespace "$1" >/dev/null && wait_for 20 kc get serviceaccount default -n "$1"; }
# pod_of NS APP -- the name of APP's live (not terminating) pod.
pod_of() { local p; p=$(kc get pods -n "$1" -l "app=$2" -o json | jq -r '[.items[] | select(.metadata.deletionTimestamp == null)][0].metadata.name // empty'); echo "$p"; [ -n "$p" ]; }
uid_of() { kc get pod -n "$1" "$2" -o jsonpath='{.metadata.uid}' 2>/dev/null; }
rv_of() { kc get pod -n "$1" "$2" -o jsonpath='{.metadata.resourceVersion}' 2>/dev/null; }
# npods_is NS N [M] -- NS has N (or M) pods.
npods_is() { local n; n=$(kc get pods -n "$1" -o name | wc -l); [ "$n" = "$2" ] || [ "$n" = "${3:-x}" ]; }
ready_all() { kc wait --for=condition=Ready pod --all -n "$1" --timeout="${2:-60}s" >/dev/null; }
# The exporter has the node's pods and Prometheus the VRAM they hold.
node_used_is() { [ "$(prom "sum(gpu_pod_memory_used_bytes{node=\"$1\"}) / 1048576")" = "$2" ]; }
free_below() { awk -v f="$(prom "gpu_memory_free_bytes{node=\"$1\"} / 1048576")" 'BEGIN { exit !(f != "" && f < 1536) }'; }
wait_seated() { # wait_seated NODE TOTAL_MIB DESC
    if wait_for 40 node_used_is "$1" "$2"; then pass "$3"; else
        fail "$3" "Prometheus says $(prom "sum(gpu_pod_memory_used_bytes{node=\"$1\"}) / 1048576") MiB; gpunode: $(cat "$TMP/nodes/$1/pods.json")"
    fi
}

# serve_up NAME [ENV=VALUE...] -- serve enforcing for one node (GPU_NODE_SELECTOR
# gvw.test/node=NAME's node), its audit in $TMP/NAME.db; sets PORT_<NAME>.
declare -A SPORT SPID D_ID
serve_up() {
    local name=$1
    shift
    start_serve "$TMP/serve-$name.log" "${KENV[@]}" WEBHOOK_TOKEN_FILE="$TMP/webhook.token" \
        AUDIT_DB="$TMP/$name.db" DRY_RUN=false MIN_RUNTIME=0s SETTLE=15s ADVERTISE_INTERVAL=0 \
        "$@" || cp_abort "serve ($name) starts"
    SPORT[$name]=$SERVE_PORT
    SPID[$name]=$SERVE_PID
}
serve_down() { kill "${SPID[$1]}" 2>/dev/null; wait "${SPID[$1]}" 2>/dev/null; }

# post_alert NAME [NODE] -- GPUVRAMLow firing (for NODE, else every GPU node) to serve NAME.
post_alert() {
    local labels='{"alertname":"GPUVRAMLow","severity":"critical"}' code
    [ -n "${2:-}" ] && labels=$(jq -cn --arg n "$2" '{alertname:"GPUVRAMLow",severity:"critical",node:$n}')
    code=$(jq -cn --argjson l "$labels" --arg f "$(printf '%016x' $((RANDOM * RANDOM * RANDOM)))" \
        --arg t "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
        '{version:"4",status:"firing",receiver:"gpu-vram-watchdog",groupLabels:{},commonLabels:{},
          commonAnnotations:{},externalURL:"",groupKey:"cp",truncatedAlerts:0,
          alerts:[{status:"firing",labels:$l,annotations:{},startsAt:$t,endsAt:"0001-01-01T00:00:00Z",
                   generatorURL:"",fingerprint:$f}]}' |
        curl -s -o "$TMP/webhook.body" -w '%{http_code}' -H "Authorization: Bearer $(cat "$TMP/webhook.token")" \
            -H 'Content-Type: application/json' --data-binary @- "http://127.0.0.1:${SPORT[$1]}/webhook")
    [ "$code" = 200 ] || fail "the webhook accepts GPUVRAMLow ($1)" "HTTP $code $(cat "$TMP/webhook.body")"
}
audit_json() { "$GVW_BINARY" audit --db "$TMP/$1.db" --format json --limit 0 2>/dev/null; }
decided() { audit_json "$1" | jq -e 'length > 0 and all(.[]; .result != "in_progress" and (.result != "recycled" or .verify != null))' >/dev/null; }
# decision NAME -- waits (SETTLE + 30 s) for serve NAME's decisions to end; prints the newest.
decision() {
    wait_for 45 decided "$1" || fail "serve $1's decision ends" "$(audit_json "$1" | jq -c '.[0] | {result, reason, error}')"
    audit_json "$1" | jq '.[0]'
}
# kube_calls -- what serve's ServiceAccount asked, from the API server's audit log.
kube_calls() { python3 "$CPS/kaudit.py" calls "$CP_DIR/audit.log" "$CP_SA_SERVE"; }
evictions_of() { kube_calls | awk -v p="/namespaces/$1/pods/$2/eviction" 'index($4, p) { print $1 }' | paste -sd' '; }
events_for() { kc events --for "pod/$2" -n "$1" 2>&1; }

# --- (g, setup) a bound token under serve: rotated now, checked at the end ----------
# serve re-reads KUBE_TOKEN_FILE when its copy is 60 s old (common/http/token.c,
# HTTPC_TOKEN_MAX_AGE_MS; a 401 does not make it re-read sooner), so the
# rotation happens first and serve's next call is made after that minute.
jti_of() { cut -d. -f2 "$1" | python3 -c 'import base64,json,sys; s=sys.stdin.read().strip(); print(json.loads(base64.urlsafe_b64decode(s + "=" * (-len(s) % 4)))["jti"])'; }
if want g; then
    kc create secret generic gvw-g-holder-1 -n gpu-vram-watchdog >/dev/null
    kc create secret generic gvw-g-holder-2 -n gpu-vram-watchdog >/dev/null
    cp_sa_token gpu-vram-watchdog gpu-vram-watchdog "$TMP/g.token" --bound-object-kind Secret \
        --bound-object-name gvw-g-holder-1 || fail "a token bound to a Secret"
    cp "$TMP/g.token" "$TMP/g.token.old"
    G_JTI_OLD=$(jti_of "$TMP/g.token.old")
    serve_up g KUBE_TOKEN_FILE="$TMP/g.token" GPU_NODE_SELECTOR=gvw.test/node=gpu-g
    G_STARTED=$(date +%s)
    # Its first call (the start-up capacity patch) is made with the old token.
    g_first() { grep -q "\"JTI=$G_JTI_OLD\"" "$CP_DIR/audit.log"; }
    if wait_for 20 g_first; then pass "serve (g) calls the API server with the bound token"; else
        fail "serve (g) calls the API server with the bound token" "$(tail -5 "$TMP/serve-g.log")"
    fi
    cp_sa_token gpu-vram-watchdog gpu-vram-watchdog "$TMP/g.token.new" --bound-object-kind Secret \
        --bound-object-name gvw-g-holder-2 || fail "a second bound token"
    G_JTI_NEW=$(jti_of "$TMP/g.token.new")
    mv "$TMP/g.token.new" "$TMP/g.token" # the kubelet's rotation: a new file in place
    kc delete secret gvw-g-holder-1 -n gpu-vram-watchdog >/dev/null
    old_rejected() { [ "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$CA" -H "Authorization: Bearer $(cat "$TMP/g.token.old")" "$CP_API/api/v1/nodes")" = 401 ]; }
    # The API server caches a token's authentication for 10 s.
    for _ in $(seq 1 30); do old_rejected && break; sleep 1; done
    if old_rejected; then
        pass "with its Secret deleted, the old bound token gets 401"
    else
        fail "the old bound token gets 401 once its Secret is gone"
    fi
fi

# --- (b) the incident, end to end -------------------------------------------------
if want b; then
    for ns in immich llm frigate portal; do namespace "$ns"; done
    tenant Deployment immich immich-ml gpu-b 3000 1950
    tenant Deployment immich immich-server gpu-b 1800 640
    tenant Deployment llm llama-swap gpu-b 5000 500
    tenant Deployment frigate frigate gpu-b 2000 1150,310
    tenant Deployment portal portal-stt gpu-b 1500 1100
    for ns in immich llm frigate portal; do
        wait_for 60 npods_is "$ns" 1 2
        ready_all "$ns" || fail "the $ns tenants run on gpu-b" "$(kc get pods -n "$ns" -o wide)"
    done
    wait_seated gpu-b 5650 "the exporter attributes every tenant's VRAM on gpu-b to its real pod"
    ML=$(pod_of immich immich-ml)
    ML_UID=$(uid_of immich "$ML")
    gpu_b_uids() { kc get pods -A -o json | jq -r '.items[] | select(.spec.nodeName == "gpu-b") | .metadata.uid' | sort; }
    gpu_b_uids | grep -vx "$ML_UID" >"$TMP/b.others"
    serve_up b GPU_NODE_SELECTOR=gvw.test/node=gpu-b
    # immich-ml's onnxruntime arena runs away: 1950 -> 10957 MiB.
    kc annotate pod -n immich "$ML" gvw.test/vram-mib=10957 --overwrite >/dev/null
    if wait_for 30 free_below gpu-b; then pass "the device's free VRAM on gpu-b drops below the floor"; else
        fail "free VRAM on gpu-b drops below the floor" "$(prom 'gpu_memory_free_bytes{node="gpu-b"}')"
    fi
    kc wait --for=delete "pod/$ML" -n immich --timeout=90s >/dev/null 2>&1 &
    waiter=$!
    sleep 0.5 # the watch is open
    t0=$(date +%s%3N)
    post_alert b gpu-b
    if wait "$waiter"; then
        ms=$(($(date +%s%3N) - t0))
        pass "immich-ml's pod is really gone from the API server"
        timing webhook_to_pod_deleted_ms "$ms"
    else
        fail "immich-ml's pod is deleted" "$(kc get pod -n immich "$ML" -o yaml | head -30)"
    fi
    d=$(decision b)
    expect_eq "the audit records recycled, immich/$ML, evicted" "recycled immich/$ML evict" \
        "$(echo "$d" | jq -r '"\(.result) \(.victim.namespace)/\(.victim.pod) \(.action)"')"
    expect_eq "its verify is recorded and saw the memory back" true "$(echo "$d" | jq '.verify != null and .verify.free_mib >= 1536')"
    expect_eq "the eviction went through the real Eviction API once, 201" 201 "$(evictions_of immich "$ML")"
    new_ml() { local p; p=$(pod_of immich immich-ml); [ -n "$p" ] && [ "$p" != "$ML" ] && ready_all immich 1; }
    if wait_for 30 new_ml; then
        pass "its Deployment brought a new replica ($(pod_of immich immich-ml))"
    else
        fail "a new immich-ml replica appears" "$(kc get pods -n immich -o wide)"
    fi
    expect_eq "no other tenant was touched (every other pod's UID is still there)" "" "$(comm -23 "$TMP/b.others" <(gpu_b_uids) | paste -sd' ')"
    B_ID=$(echo "$d" | jq -r .id)
    # check, budgets and the page with serve's token, after the recycle.
    out=$(env "${KENV[@]}" "$GVW_BINARY" check --node gpu-b --format json 2>"$TMP/check.err")
    expect_eq "check --node gpu-b sees the recovery" skipped_recovered "$(echo "$out" | jq -r 'if type == "array" then .[0].result else .result end')"
    out=$(env "${KENV[@]}" "$GVW_BINARY" budgets --node gpu-b --format json 2>"$TMP/budgets.err")
    expect_eq "budgets --node gpu-b: the advertised capacity, read from the node" 13312 \
        "$(echo "$out" | jq -r '.. | objects | .capacity_mib? // empty' | head -1)"
    page=$(curl -s "http://127.0.0.1:${SPORT[b]}/")
    expect_contains "the seating chart names gpu-b's tenants" "llama-swap" "$page"
    serve_down b
fi

# --- (k) the same incident on the simulator: both audits record the same decision ---
# SPEC "A real API server": where a simulator stays (the fast tests, the demo), it
# answers as the real server does, and one test runs the same scenario on both and
# compares what the audit records. gvw-sim plays gpu-b as (b) left it just before
# the webhook (the same card, reserve, tenants, budgets and VRAM), behind the same
# exporter, Prometheus and serve settings; the two decisions must agree on
# everything but the names the real controllers made up (pod-template hashes,
# UIDs, the GPU's UUID).
if want b && [ -n "${B_ID:-}" ]; then
    jq -n '{description: "gpu-b of the real-control-plane tier at the webhook of (b)",
        node: {name: "gpu-b", labels: {"kubernetes.io/hostname": "gpu-b", "nvidia.com/gpu.present": "true",
               "gvw.test/node": "gpu-b"}, capacity: {"nvidia.com/gpu": "1", pods: "110"}},
        gpu_total_mib: 15360, gpus: [{model: "T4", total_mib: 15360, reserved_mib: 300, context_mib: 0}],
        gpumem_resource: "viktorbarzin.me/gpumem", time_scale: 1.0, seed: 1,
        pods: [
          {namespace: "immich", name: "immich-ml-5f6d8c7b9-aaaaa", budget: 3000, started_ago: 3600,
           labels: {app: "immich-ml"}, processes: [{pid: 4101, comm: "python3", mib: 10957}]},
          {namespace: "immich", name: "immich-server-6b8f7c9d5-bbbbb", budget: 1800, started_ago: 3600,
           labels: {app: "immich-server"}, processes: [{pid: 4102, comm: "immich", mib: 640}]},
          {namespace: "llm", name: "llama-swap-7d9c6b5f4-ccccc", budget: 5000, started_ago: 3600,
           labels: {app: "llama-swap"}, processes: [{pid: 4103, comm: "llama-server", mib: 500}]},
          {namespace: "frigate", name: "frigate-5c7b9d6f8-ddddd", budget: 2000, started_ago: 3600,
           labels: {app: "frigate"}, processes: [{pid: 4104, comm: "frigate", mib: 1150},
                                                 {pid: 4105, comm: "ffmpeg", mib: 310}]},
          {namespace: "portal", name: "portal-stt-8e6f7a5b4-eeeee", budget: 1500, started_ago: 3600,
           labels: {app: "portal-stt"}, processes: [{pid: 4106, comm: "python3", mib: 1100}]}]}' \
        >"$TMP/k-scenario.json"
    # In a subshell: the simulator stack's names (TMP, PIDS, PROM_PORT ...) stay its own.
    (
        OUTER_TMP=$TMP TMP=$TMP/k
        mkdir -p "$TMP"
        PIDS=()
        source "$GVW_SOURCE_DIR/tests/lib/stack.sh"
        stack_abort() { kill "${PIDS[@]}" 2>/dev/null; exit 1; }
        stack_sim "$OUTER_TMP/k-scenario.json"
        stack_exporter gpu-b
        stack_prometheus
        ready() { curl -s "http://127.0.0.1:$PROM_PORT/api/v1/query" \
            --data-urlencode 'query=sum(gpu_pod_memory_used_bytes{node="gpu-b"}) / 1048576' |
            jq -e '.data.result[0].value[1] == "14657"' >/dev/null; }
        wait_for 40 ready || stack_abort
        stack_serve MIN_RUNTIME=0s SETTLE=15s GPU_NODE_SELECTOR=gvw.test/node=gpu-b \
            USED_QUERY='sum by (namespace, pod, uuid) (gpu_pod_memory_used_bytes{node="$node"})'
        tok=$(cat "$TMP/token")
        jq -cn --arg t "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
            '{version:"4",status:"firing",receiver:"gpu-vram-watchdog",groupLabels:{},commonLabels:{},
              commonAnnotations:{},externalURL:"",groupKey:"k",truncatedAlerts:0,
              alerts:[{status:"firing",labels:{alertname:"GPUVRAMLow",severity:"critical",node:"gpu-b"},
                       annotations:{},startsAt:$t,endsAt:"0001-01-01T00:00:00Z",generatorURL:"",
                       fingerprint:"00000000000000kk"}]}' |
            curl -s -o /dev/null -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' \
                --data-binary @- "http://127.0.0.1:$SERVE_PORT/webhook"
        done_k() { "$GVW_BINARY" audit --db "$DB" --format json --limit 1 2>/dev/null |
            jq -e 'length == 1 and .[0].result != "in_progress" and (.[0].result != "recycled" or .[0].verify != null)' >/dev/null; }
        wait_for 45 done_k
        "$GVW_BINARY" audit --db "$DB" --format json --limit 1 >"$OUTER_TMP/k-sim.json" 2>/dev/null
        kill "${PIDS[@]}" 2>/dev/null
        wait 2>/dev/null
    ) >"$TMP/k.out" 2>&1
    audit_json b | jq --argjson id "$B_ID" '[.[] | select(.id == $id)]' >"$TMP/k-real.json"
    # The fields a reader compares, with the names real controllers invent cut
    # to their workload (pod-template hash and suffix gone).
    k_norm='.[0] | def w: sub("-[a-z0-9]+-[a-z0-9]+$"; "");
        {result, action, dry_run, node, floor_mib, free_mib, free_source, gpu_scope: (.gpu != null),
         victim: (.victim | if . == null then null else {namespace, workload: (.pod | w), used_mib, budget_mib, overshoot_mib} end),
         candidates: ([.candidates[] | {namespace, workload: (.pod | w), used_mib, budget_mib, eligible, why_not}]
                      | sort_by(.namespace, .workload)),
         verified: (.verify != null and .verify.free_mib >= .floor_mib), error}'
    real=$(jq -S "$k_norm" "$TMP/k-real.json" 2>/dev/null)
    sim=$(jq -S "$k_norm" "$TMP/k-sim.json" 2>/dev/null)
    if [ -n "$real" ] && [ "$real" = "$sim" ]; then
        pass "the same incident on gvw-sim and on the real API server: the audits record the same decision ($(echo "$real" | jq -r '"\(.result) \(.victim.namespace)/\(.victim.workload)"'))"
    else
        fail "the same incident on gvw-sim and on the real API server: the audits agree" \
            "$(diff <(echo "$real") <(echo "$sim") | head -30) | sim side: $(tail -5 "$TMP/k.out")"
    fi
fi

# --- (d) dry run: evict and delete, nothing changes ---------------------------------
if want d; then
    namespace d
    tenant Deployment d hog gpu-d 1000 9600
    tenant Deployment d steady gpu-d 4000 4000
    wait_for 60 npods_is d 2
    ready_all d || fail "the d tenants run"
    wait_seated gpu-d 13600 "Prometheus sees gpu-d's tenants (hog over budget)"
    HOG=$(pod_of d hog)
    for action in evict delete; do
        # ACTION=delete's grant is not in deploy/: its component adds it.
        [ "$action" = delete ] && kc apply -k "$GVW_SOURCE_DIR/deploy/components/action-delete/rbac" >/dev/null
        uid=$(uid_of d "$HOG")
        rv=$(rv_of d "$HOG")
        serve_up "d-$action" GPU_NODE_SELECTOR=gvw.test/node=gpu-d DRY_RUN=true ACTION=$action
        post_alert "d-$action" gpu-d
        d=$(decision "d-$action")
        expect_eq "DRY_RUN ACTION=$action: would_recycle d/$HOG" "would_recycle d/$HOG $action true" \
            "$(echo "$d" | jq -r '"\(.result) \(.victim.namespace)/\(.victim.pod) \(.action) \(.dry_run)"')"
        sleep 2 # a delete the server took would show by now (kwok removes the pod at once)
        expect_eq "DRY_RUN ACTION=$action: the pod's UID and resourceVersion are unchanged" "$uid $rv" \
            "$(uid_of d "$HOG") $(rv_of d "$HOG")"
        expect_contains "DRY_RUN ACTION=$action: the reason records the server's dry-run answer" \
            "dry-run" "$(echo "$d" | jq -r .reason)"
        D_ID[$action]=$(echo "$d" | jq -r .id)
        serve_down "d-$action"
        # A pod the server did delete comes back under a new name: the next round needs it.
        HOG=$(pod_of d hog)
        [ -n "$HOG" ] || { wait_for 20 pod_of d hog; HOG=$(pod_of d hog); }
    done
    calls=$(kube_calls | grep -E ' /api/v1/namespaces/d/pods/')
    expect_contains "the dry-run eviction asked the server with ?dryRun=All" "pods/eviction /api/v1/namespaces/d/pods/" "$(echo "$calls" | grep 'dryRun=All')"
fi

# --- (c) PodDisruptionBudgets, kept by the real disruption controller ----------------
# pdb NS NAME APP -- minAvailable 1 over one replica: disruptionsAllowed 0.
pdb() {
    kc apply -f - >/dev/null <<EOF
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: $2, namespace: $1}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: $3}}
EOF
}
pdb_observed() { kc get pdb -n "$1" "$2" -o json | jq -e '.status.observedGeneration == .metadata.generation and .status.currentHealthy == 1 and .status.disruptionsAllowed == 0' >/dev/null; }
# pdb_case N -- namespace cN on gpu-cN: a (over by 5000), b (over by 3000), filler (within).
pdb_case() {
    namespace "c$1"
    tenant Deployment "c$1" a "gpu-c$1" 1000 6000
    tenant Deployment "c$1" b "gpu-c$1" 1000 4000
    tenant Deployment "c$1" filler "gpu-c$1" 4000 3800
    wait_for 60 npods_is c$1 3
    ready_all "c$1" || fail "the c$1 tenants run"
}
if want c; then
    for i in 1 2 3; do pdb_case $i; done
    pdb c1 pdb-a a
    pdb c2 pdb-a a
    pdb c2 pdb-b b
    pdb c3 pdb-a1 a
    pdb c3 pdb-a2 a
    for p in c1/pdb-a c2/pdb-a c2/pdb-b c3/pdb-a1 c3/pdb-a2; do
        if wait_for 30 pdb_observed "${p%/*}" "${p#*/}"; then :; else
            fail "the disruption controller observes PDB $p" "$(kc get pdb -n "${p%/*}" "${p#*/}" -o json | jq -c .status)"
        fi
    done
    pass "the disruption controller has observed every PDB (disruptionsAllowed 0)"
    for i in 1 2 3; do
        wait_seated "gpu-c$i" 13800 "Prometheus sees gpu-c$i's tenants"
        CA_POD[$i]=$(pod_of "c$i" a)
        CB_POD[$i]=$(pod_of "c$i" b)
        CA_UID[$i]=$(uid_of "c$i" "${CA_POD[$i]}")
        CB_UID[$i]=$(uid_of "c$i" "${CB_POD[$i]}")
        serve_up "c$i" GPU_NODE_SELECTOR="gvw.test/node=gpu-c$i"
        post_alert "c$i" "gpu-c$i"
    done
    # c1: a's PDB refuses (429, cause DisruptionBudget): b, the next candidate, goes.
    d=$(decision c1)
    expect_eq "c1: a refused by its PDB (429), then b evicted (201)" "429 201" \
        "$(evictions_of c1 "${CA_POD[1]}") $(evictions_of c1 "${CB_POD[1]}")"
    expect_eq "c1: the audit records recycled c1/${CB_POD[1]}" "recycled c1/${CB_POD[1]}" \
        "$(echo "$d" | jq -r '"\(.result) \(.victim.namespace)/\(.victim.pod)"')"
    expect_eq "c1: a is untouched" "${CA_UID[1]}" "$(uid_of c1 "${CA_POD[1]}")"
    # c2: both refused: blocked, quoting the server.
    d=$(decision c2)
    expect_eq "c2: every candidate refused -> blocked" blocked "$(echo "$d" | jq -r .result)"
    expect_contains "c2: the reason quotes the API server's refusal" \
        "Cannot evict pod as it would violate the pod's disruption budget" "$(echo "$d" | jq -r '"\(.reason) \(.error)"')"
    expect_eq "c2: both pods untouched" "${CA_UID[2]} ${CB_UID[2]}" "$(uid_of c2 "${CA_POD[2]}") $(uid_of c2 "${CB_POD[2]}")"
    # c3: two PDBs select a: the server answers 500; that is a refusal too (SPEC step 6).
    d=$(decision c3)
    expect_eq "c3: a's eviction is answered 500 (two PDBs)" 500 "$(evictions_of c3 "${CA_POD[3]}")"
    expect_eq "c3: two PDBs on a (500) -> the next candidate b is recycled" "recycled c3/${CB_POD[3]}" \
        "$(echo "$d" | jq -r '"\(.result) \(.victim.namespace)/\(.victim.pod)"')"
    expect_eq "c3: a is untouched" "${CA_UID[3]}" "$(uid_of c3 "${CA_POD[3]}")"
    for i in 1 2 3; do serve_down "c$i"; done
fi

# --- (i) the API server shedding load: 429 text/plain is not a PDB ------------------
if want i; then
    cp_cert shim /CN=shed-proxy 'basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1'
    python3 "$CPS/shed_proxy.py" --listen 127.0.0.1:0 --upstream "$CP_API" --ca "$CA" \
        --cert "$CP_DIR/pki/shim.crt" --key "$CP_DIR/pki/shim.key" --shed 1 --log "$TMP/shim.jsonl" \
        >"$TMP/shim.out" 2>"$TMP/shim.log" &
    PIDS+=($!)
    wait_for 10 grep -q '^listening' "$TMP/shim.out" || fail "the shedding proxy starts" "$(cat "$TMP/shim.log")"
    SHIM=https://127.0.0.1:$(sed -n 's/^listening //p' "$TMP/shim.out")
    namespace i
    tenant Deployment i a gpu-i 1000 6000
    tenant Deployment i b gpu-i 1000 4000
    tenant Deployment i filler gpu-i 4000 3800
    wait_for 60 npods_is i 3
    ready_all i || fail "the i tenants run"
    wait_seated gpu-i 13800 "Prometheus sees gpu-i's tenants"
    IA=$(pod_of i a) IB=$(pod_of i b)
    IB_UID=$(uid_of i "$IB")
    serve_up i GPU_NODE_SELECTOR=gvw.test/node=gpu-i KUBE_API_URL="$SHIM"
    post_alert i gpu-i
    d=$(decision i)
    shim_evictions() { jq -r --arg p "$1" 'select(.method == "POST" and (.path | contains("/pods/" + $p + "/eviction"))) | .code' "$TMP/shim.jsonl" | paste -sd' '; }
    expect_eq "i: a's eviction shed once (429), retried after Retry-After, accepted (201)" "429 201" "$(shim_evictions "$IA")"
    expect_eq "i: b never asked" "" "$(shim_evictions "$IB")"
    expect_eq "i: the audit records recycled i/$IA (the same victim)" "recycled i/$IA" \
        "$(echo "$d" | jq -r '"\(.result) \(.victim.namespace)/\(.victim.pod)"')"
    expect_eq "i: b untouched" "$IB_UID" "$(uid_of i "$IB")"
    serve_down i
fi

# --- (e) the Events, as the tenant reads them -------------------------------------
if want b; then
    ev=$(events_for immich "$ML")
    expect_contains "kubectl events --for pod/$ML: GPUVRAMRecycled" GPUVRAMRecycled "$ev"
    expect_contains "its message names the audit row" "(audit $B_ID)" "$ev"
fi
if want d; then
    ev=$(kc events --for "pod/$(pod_of d hog)" -n d 2>&1; kc events -n d 2>&1)
    expect_contains "kubectl events: GPUVRAMWouldRecycle on the dry run's pod" GPUVRAMWouldRecycle "$ev"
fi

# --- (f, part 2) the real scheduler seats by the advertised capacity ---------------
if want f; then
    namespace f
    bare() { # bare NAME BUDGET
        kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: f}
spec:
  nodeSelector: {kubernetes.io/hostname: gpu-f}
  containers:
    - name: main
      image: registry.invalid/gvw-tenant:1
      resources: {limits: {$RES: "$2"}}
EOF
    }
    bare fits 10000
    sched_of() { kc get pod -n f "$1" -o json | jq -r '"\(.spec.nodeName // "-") \(.status.conditions[]? | select(.type == "PodScheduled") | "\(.status) \(.reason // "")")"'; }
    scheduled_fits() { [ "$(kc get pod -n f fits -o jsonpath='{.spec.nodeName}')" = gpu-f ]; }
    wait_for 30 scheduled_fits
    expect_eq "a pod whose budget fits (10000 of 13312) is scheduled on gpu-f" "gpu-f True " "$(sched_of fits)"
    bare nofit 5000
    unsched() { [ "$(kc get pod -n f nofit -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}')" = Unschedulable ]; }
    wait_for 30 unsched
    expect_eq "one that does not fit (5000 more) stays Pending, unschedulable" "- False Unschedulable" "$(sched_of nofit)"
    expect_contains "the scheduler says why: Insufficient $RES" "Insufficient $RES" \
        "$(kc get pod -n f nofit -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')"
fi

# --- (j) a StatefulSet pod replaced between the decision and the eviction ----------
# j_case NAME CORDON -- serve NAME decides on cache-0 and first asks it to release;
# the release endpoint holds its answer while the test deletes cache-0 and the
# StatefulSet recreates it (same name, new UID); then the answer (503) lets
# the eviction go, with the old UID. CORDON=1: the node is cordoned first, so
# the replacement stays Pending and the server retries the conflict for ~10 s
# before its 409; CORDON=0: the replacement runs and the 409 comes at once.
# Either way the replacement must be untouched.
j_eviction_seconds() {
    python3 - "$CP_DIR/audit.log" "$CP_SA_SERVE" "$1" <<'PY'
import json, sys
from datetime import datetime
f = lambda s: datetime.strptime(s[:26].rstrip("Z"), "%Y-%m-%dT%H:%M:%S.%f")
for l in open(sys.argv[1]):
    e = json.loads(l)
    if (e.get("stage") == "ResponseComplete" and e["user"]["username"] == sys.argv[2]
            and e["requestURI"].endswith("/namespaces/j/pods/cache-0/eviction")
            and f(e["requestReceivedTimestamp"]) >= f(sys.argv[3])):
        print("%d %.1f" % (e["responseStatus"]["code"], (f(e["stageTimestamp"]) - f(e["requestReceivedTimestamp"])).total_seconds()))
PY
}
j_case() {
    local name=$1 cordon=$2 ip old new_uid new_rv d since ev rpid
    wait_for 60 ready_all j 1
    wait_seated gpu-j 14600 "$name: Prometheus sees gpu-j's tenants (cache-0 over budget, ballast protected)"
    ip=$(kc get pod -n j cache-0 -o jsonpath='{.status.podIP}')
    old=$(uid_of j cache-0)
    python3 "$CPS/slow_release.py" --listen "$ip:18080" --asked "$TMP/$name.asked" --go "$TMP/$name.go" \
        >"$TMP/$name-release.out" 2>"$TMP/$name-release.log" &
    rpid=$!
    PIDS+=("$rpid")
    wait_for 10 grep -q '^listening' "$TMP/$name-release.out" ||
        fail "$name: the slow release endpoint listens on cache-0's IP $ip" "$(cat "$TMP/$name-release.log")"
    since=$(date -u +%Y-%m-%dT%H:%M:%S.%6N)
    serve_up "$name" GPU_NODE_SELECTOR=gvw.test/node=gpu-j RELEASE_WAIT=20s
    post_alert "$name" gpu-j
    if wait_for 30 test -f "$TMP/$name.asked"; then
        pass "$name: serve chose cache-0 and asks it to release first (the answer is held)"
    else
        fail "$name: serve asks cache-0 to release" "$(tail -5 "$TMP/serve-$name.log")"
    fi
    [ "$cordon" = 1 ] && kc cordon gpu-j >/dev/null
    kc delete pod -n j cache-0 --wait=true --timeout=30s >/dev/null
    j_replaced() { local u; u=$(uid_of j cache-0); [ -n "$u" ] && [ "$u" != "$old" ]; }
    wait_for 30 j_replaced || fail "$name: the StatefulSet recreates cache-0"
    [ "$cordon" = 1 ] || wait_for 30 ready_all j 1 || fail "$name: the replacement runs"
    new_uid=$(uid_of j cache-0)
    new_rv=$(rv_of j cache-0)
    touch "$TMP/$name.go" # the release answers 503: on to the eviction, with the old UID
    d=$(decision "$name")
    ev=$(j_eviction_seconds "$since")
    timing "${name}_eviction_code_and_server_seconds" "$(echo "$ev" | paste -sd,)"
    expect_eq "$name: the eviction against the old UID was answered 409, once" 409 "$(echo "$ev" | awk '{ print $1 }' | paste -sd' ')"
    expect_eq "$name: the replacement is untouched (same UID and resourceVersion, not terminating)" \
        "$new_uid $new_rv null" "$(kc get pod -n j cache-0 -o json | jq -r '"\(.metadata.uid) \(.metadata.resourceVersion) \(.metadata.deletionTimestamp)"')"
    expect_eq "$name: serve read the server's 409 (the decision did not fail)" "not failed" \
        "$(echo "$d" | jq -r 'if .result == "failed" then "failed: \(.error)" elif .result == null then "no decision" else "not failed" end')"
    expect_eq "$name: serve is still running" yes "$(kill -0 "${SPID[$name]}" 2>/dev/null && echo yes || tail -3 "$TMP/serve-$name.log")"
    [ "$cordon" = 1 ] && kc uncordon gpu-j >/dev/null
    kill "$rpid" 2>/dev/null # the replacement may get the same address
    wait "$rpid" 2>/dev/null
    serve_down "$name"
}
if want j; then
    namespace j
    tenant Deployment j ballast gpu-j 12800 13600 gpu-vram-watchdog/protected=true
    tenant StatefulSet j cache gpu-j 500 1000 gpu-vram-watchdog/release=18080/release
    wait_for 60 npods_is j 2
    j_case j1 1
    j_case j2 0
fi

# --- (h) finished pods hold no seat ----------------------------------------------
if want h; then
    namespace h
    finished() { # finished NAME BUDGET PHASE VRAM
        kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $1
  namespace: h
  annotations: {gvw.test/vram-mib: "$4", gvw.test/finish: "$3"}
spec:
  nodeSelector: {kubernetes.io/hostname: gpu-h}
  restartPolicy: Never
  containers:
    - name: main
      image: registry.invalid/gvw-tenant:1
      resources: {limits: {$RES: "$2"}}
EOF
    }
    finished done 5000 Succeeded 0
    finished crashed 5000 Failed 0
    tenant Deployment h live gpu-h 3000 2000
    phases() { kc get pods -n h -o json | jq -r '[.items[] | "\(.metadata.name | sub("-.*"; ""))=\(.status.phase)"] | sort | join(" ")'; }
    phases_are() { [ "$(phases)" = "crashed=Failed done=Succeeded live=Running" ]; }
    if wait_for 60 phases_are; then pass "h: kwok ends done (Succeeded) and crashed (Failed); live runs"; else
        fail "h: the pods reach their phases" "$(phases)"
    fi
    wait_seated gpu-h 2000 "Prometheus sees gpu-h's live tenant"
    out=$(env "${KENV[@]}" "$GVW_BINARY" budgets --node gpu-h --format json 2>"$TMP/budgets-h.err")
    echo "$out" >"$TMP/budgets-h.json"
    expect_eq "h: budgets counts only the live pod's budget (3000)" 3000 \
        "$(echo "$out" | jq -r '[.. | objects | .budgets_mib? // empty] | first')"
    expect_not_contains "h: budgets lists no finished pod as a tenant" '"done"' "$(echo "$out" | jq -c '[.. | objects | .pod? // empty]')"
    expect_not_contains "h: ... nor the Failed one" '"crashed"' "$(echo "$out" | jq -c '[.. | objects | .pod? // empty]')"
    budget_series() { curl -s "http://127.0.0.1:${EXP_PORT[gpu-h]}/metrics" | grep '^gpu_pod_memory_budget_bytes{' | grep -o 'pod="[^"]*"' | sort | paste -sd' '; }
    wait_for 10 sh -c "curl -s http://127.0.0.1:${EXP_PORT[gpu-h]}/metrics | grep -q 'pod=\"live-'"
    expect_eq "h: the exporter's budget series: the live pod only" "pod=\"$(pod_of h live)\"" "$(budget_series)"
fi

# --- (g, end) serve's next call, a minute on, uses the new token ------------------
if want g; then
    left=$((G_STARTED + 62 - $(date +%s)))
    [ "$left" -gt 0 ] && sleep "$left"
    post_alert g # no node label: serve lists the GPU nodes first (a Kubernetes call)
    d=$(decision g)
    expect_eq "g: the decision after the rotation reached the API server (not skipped_kube)" "gpu-g not skipped_kube" \
        "$(echo "$d" | jq -r '"\(.node) \(if .result == "skipped_kube" then "skipped_kube: \(.reason)" else "not skipped_kube" end)"')"
    g_new() { grep "\"JTI=$G_JTI_NEW\"" "$CP_DIR/audit.log" | jq -r 'select(.stage == "ResponseComplete") | "\(.verb) \(.objectRef.resource) \(.responseStatus.code)"' | head -1; }
    expect_eq "g: serve's call after the rotation carried the new token and was allowed" "list nodes 200" "$(g_new)"
    serve_down g
fi

# --- RBAC, as the audit log saw it across this whole tier ----------------------
forbidden=$(python3 "$CPS/kaudit.py" forbidden "$CP_DIR/audit.log" "$CP_SA_SERVE" "$CP_SA_EXPORTER")
expect_eq "no request of either ServiceAccount was refused (401/403) anywhere in the tier" "" "$forbidden"
kc get clusterrole gpu-vram-watchdog -o json >"$TMP/role-serve.json"
kc get clusterrole gpu-vram-watchdog-exporter -o json >"$TMP/role-exporter.json"
kc get clusterrole gpu-vram-watchdog-delete -o json >"$TMP/role-delete.json" 2>/dev/null || echo '{"rules":[]}' >"$TMP/role-delete.json"
unused=$(python3 "$CPS/kaudit.py" unused "$CP_DIR/audit.log" "$TMP/role-serve.json" "$CP_SA_SERVE"
    python3 "$CPS/kaudit.py" unused "$CP_DIR/audit.log" "$TMP/role-delete.json" "$CP_SA_SERVE"
    python3 "$CPS/kaudit.py" unused "$CP_DIR/audit.log" "$TMP/role-exporter.json" "$CP_SA_EXPORTER")
if [ -z "${CP_ONLY:-}" ]; then
    expect_eq "every grant in deploy/'s RBAC was used by some test" "" "$unused"
else
    echo "  (CP_ONLY: grants unused by this subset: ${unused:-none})"
fi
python3 "$CPS/kaudit.py" calls "$CP_DIR/audit.log" "$CP_SA_SERVE" "$CP_SA_EXPORTER" |
    awk '{ print $1, $2, $3 }' | sort | uniq -c | sed 's/^/  used: /'
timing tier_seconds "$(($(date +%s) - T_START))"
finish
