#!/usr/bin/env bash
# smoke.sh -- sim_smoke: gvw-sim answers like an API server, keeps the node's stub NVML
# state file and fake /proc current, recycles a pod, respawns it, plays several GPUs,
# and exits cleanly. Usage: smoke.sh path/to/gvw-sim scenario.json
set -u

SIM=${1:?usage: smoke.sh GVW_SIM SCENARIO}
if ! command -v curl >/dev/null || ! command -v jq >/dev/null; then
  echo "skipped: curl or jq is not installed"
  exit 77 # ctest's SKIP_RETURN_CODE
fi
SCENARIO=${2:?usage: smoke.sh GVW_SIM SCENARIO}
TMP=$(mktemp -d)
PIDS=()
passed=0
failed=0

cleanup() {
  local p
  for p in "${PIDS[@]}"; do
    kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
  done
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

ok() { echo "ok - $1"; passed=$((passed + 1)); }
not_ok() { echo "not ok - $1"; failed=$((failed + 1)); }
check() { # check DESCRIPTION COMMAND...
  local what=$1
  shift
  if "$@"; then ok "$what"; else not_ok "$what"; fi
}
has() { grep -qF -- "$2" "$1"; }
lacks() { ! grep -qF -- "$2" "$1"; }

# start NAME ARGS...: runs the sim in the background, sets PORT (or dies).
start() {
  local name=$1 i
  shift
  "$SIM" --scenario "$SCENARIO" --listen 127.0.0.1:0 "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
  PIDS+=($!)
  LAST_PID=$!
  for i in $(seq 1 100); do
    PORT=$(sed -n 's/^listening 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$TMP/$name.out")
    [ -n "$PORT" ] && return 0
    kill -0 "$LAST_PID" 2>/dev/null || break
    sleep 0.05
  done
  echo "not ok - $name did not start:"
  cat "$TMP/$name.err"
  exit 1
}

# req METHOD PATH [CONTENT-TYPE BODY]: body into $TMP/body, status into CODE.
req() {
  local args=(-s -o "$TMP/body" -w '%{http_code}' -X "$1")
  [ $# -ge 4 ] && args+=(-H "Content-Type: $3" --data-binary "$4")
  CODE=$(curl "${args[@]}" "http://127.0.0.1:$PORT$2") || CODE=000
}

eviction() { # eviction NS NAME UID
  printf '{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"%s","namespace":"%s"},"deleteOptions":{"preconditions":{"uid":"%s"}}}' "$2" "$1" "$3"
}

ML=immich-ml-7d9c6b5f4d-x8k2p
ML_PATH=/api/v1/namespaces/immich/pods/$ML

# --- a bad scenario is refused with exit 2 --------------------------------
echo '{"pods": [{"namespace": "a"}]}' >"$TMP/bad.json"
"$SIM" --scenario "$TMP/bad.json" >/dev/null 2>"$TMP/bad.err"
rc=$?
check "bad scenario exits 2" [ "$rc" -eq 2 ]
check "bad scenario names the problem" has "$TMP/bad.err" "pods[0]"

# --- node files that cannot be written stop start-up (exit 1) -------------
"$SIM" --scenario "$SCENARIO" --proc-root "$TMP/no/such/dir" >"$TMP/noproc.out" 2>"$TMP/noproc.err"
rc=$?
check "an unwritable --proc-root exits 1" [ "$rc" -eq 1 ]
check "  ... naming the path" has "$TMP/noproc.err" "$TMP/no/such/dir"
check "  ... before saying it listens" lacks "$TMP/noproc.out" listening
printf '{"gpus": [{"total_mib": 15360}], "pods": [{"namespace": "a", "name": "b-c", "gpu": 1, "processes": [{"mib": 5}]}]}' >"$TMP/badgpu.json"
"$SIM" --scenario "$TMP/badgpu.json" >/dev/null 2>"$TMP/badgpu.err"
rc=$?
check "a pod on a GPU the node lacks exits 2" [ "$rc" -eq 2 ]
check "  ... naming the GPUs it has" has "$TMP/badgpu.err" "the node has GPUs 0..0"

# --- the node as the exporter sees it: the stub NVML's state file and /proc --
# A frozen clock (1000 real seconds per scenario second): every figure is t=0's.
mkdir "$TMP/proc0"
start files --time-scale 1000 --nvml-state "$TMP/nvml0.state" --proc-root "$TMP/proc0"
req GET "$ML_PATH"
UID_ML=$(jq -r .metadata.uid "$TMP/body")
CID_ML=$(jq -r '.status.containerStatuses[0].containerID' "$TMP/body")
check "immich-ml's container has a containerd ID" grep -qE '^containerd://[0-9a-f]{64}$' <<<"$CID_ML"
req GET /api/v1/namespaces/portal/pods/portal-tts-5c8d7f6b4-k9p2x
check "a Pending pod's container has no ID yet" [ "$(jq -r '.status.containerStatuses[0].containerID // "none"' "$TMP/body")" = none ]
check "the state file was written before the sim listened" [ -s "$TMP/nvml0.state" ]
check "one GPU, a 15360 MiB card" grep -qE '^gpu 0 GPU-[0-9a-f-]{36} 16106127360 [0-9]+ Tesla T4$' "$TMP/nvml0.state"
check "seven pods' processes and the host's ffmpeg on GPU 0" [ "$(grep -c '^proc 0 ' "$TMP/nvml0.state")" -eq 8 ]
check "immich-ml's process at its t=0 2044723200 bytes" grep -qx 'proc 0 2411 2044723200 compute' "$TMP/nvml0.state"
check "the Pending pod and the other node hold nothing" [ "$(grep -c '^proc ' "$TMP/nvml0.state")" -eq 8 ]
check "a T4: device free = 15360 - 300 reserved - the processes (9950 pods + 301 host) = 4809 MiB" \
    grep -qE '^gpu 0 GPU-[0-9a-f-]{36} 16106127360 5042601984 Tesla T4$' "$TMP/nvml0.state"
check "the host process (ffmpeg, 1 MiB + its 300 MiB context) is in NVML's list" grep -qx 'proc 0 1312 315621376 compute' "$TMP/nvml0.state"
check "  ... and its cgroup is the host's service, no pod's" grep -qx '0::/system.slice/jellyfin.service' "$TMP/proc0/1312/cgroup"
check "no temporary file is left beside it" [ "$(ls "$TMP" | grep -c '^nvml0.state')" -eq 1 ]
check "/proc/2411/cgroup names immich-ml's pod and container (systemd driver, containerd)" \
  grep -qx "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${UID_ML//-/_}.slice/cri-containerd-${CID_ML#containerd://}.scope" "$TMP/proc0/2411/cgroup"
check "every process in the state file has a cgroup file" \
  sh -c 'for p in $(awk "/^proc /{print \$3}" "$1"); do [ -f "$2/$p/cgroup" ] || exit 1; done' _ "$TMP/nvml0.state" "$TMP/proc0"
req GET /sim/nvml
check "GET /sim/nvml shows the same world" grep -qx 'proc 0 2411 2044723200 compute' "$TMP/body"

# Its own exporter, read at the same frozen instant.
req GET /metrics
cp "$TMP/body" "$TMP/metrics1"
if command -v promtool >/dev/null; then
  check "promtool check metrics" promtool check metrics <"$TMP/metrics1"
fi
check "exporter has immich-ml's process" has "$TMP/metrics1" "pod=\"$ML\",pid=\"2411\"}"
check "llama-swap exports two processes" [ "$(grep -c 'pod="llama-swap-' "$TMP/metrics1")" -eq 2 ]

kill -TERM "$LAST_PID"
wait "$LAST_PID"

# --- the main instance, ten times faster than the scenario ----------------
mkdir "$TMP/proc"
NVML=$TMP/nvml.state
start main --time-scale 0.1 --nvml-state "$NVML" --proc-root "$TMP/proc"
MAIN_PID=$LAST_PID

req GET "/api/v1/pods?fieldSelector=spec.nodeName%3Dgpu-node-1"
cp "$TMP/body" "$TMP/pods.json"
check "pod list answers 200" [ "$CODE" = 200 ]
check "pod list is a v1 PodList" has "$TMP/pods.json" '"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"'
check "immich-ml listed with its owner" has "$TMP/pods.json" '"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"immich-ml-7d9c6b5f4d"'
for q in '"3k"' '"5k"' '"2k"' '"1800"' '"1500"'; do
  check "a budget reads $q" has "$TMP/pods.json" "\"viktorbarzin.me/gpumem\":$q"
done
check "Running and Pending phases" eval 'has "$TMP/pods.json" "\"phase\":\"Running\"" && has "$TMP/pods.json" "\"phase\":\"Pending\""'
check "pods on other nodes are not listed" lacks "$TMP/pods.json" immich-postgresql-0
req GET "/api/v1/pods?fieldSelector=spec.nodeName=gpu-node-1"
check "unencoded = in the selector works" cmp -s "$TMP/body" "$TMP/pods.json"

req GET "$ML_PATH"
UID_ML=$(grep -o '"uid":"[^"]*"' "$TMP/body" | head -n 1 | cut -d'"' -f4)
check "immich-ml has a uid" [ -n "$UID_ML" ]


req GET "/api/v1/nodes?labelSelector=nvidia.com%2Fgpu.present%3Dtrue"
check "node selector finds gpu-node-1" has "$TMP/body" '"kind":"NodeList"'
check "  ... and lists it" has "$TMP/body" '"name":"gpu-node-1"'
req GET "/api/v1/nodes?labelSelector=nvidia.com%2Fgpu.present%3Dfalse"
check "a selector that does not match lists nothing" has "$TMP/body" '"items":[]'

PATCH='[{"op":"add","path":"/status/capacity/viktorbarzin.me~1gpumem","value":"14000"}]'
req PATCH /api/v1/nodes/gpu-node-1/status application/json-patch+json "$PATCH"
check "capacity patch answers 200" [ "$CODE" = 200 ]
req GET /api/v1/nodes/gpu-node-1
check "capacity reads back canonical" has "$TMP/body" '"viktorbarzin.me/gpumem":"14k"'
req PATCH /api/v1/nodes/gpu-node-1/status application/merge-patch+json "$PATCH"
check "wrong patch content type is 415" [ "$CODE" = 415 ]

req POST "$ML_PATH/eviction" application/json "$(eviction immich $ML 00000000-0000-4000-8000-000000000000)"
check "eviction with a stale uid is 409" [ "$CODE" = 409 ]
check "  ... a Conflict Status" has "$TMP/body" '"reason":"Conflict"'
req POST /api/v1/namespaces/immich/pods/nope/eviction application/json "$(eviction immich nope "$UID_ML")"
check "eviction of an unknown pod is 404" [ "$CODE" = 404 ]
SERVER=immich-server-68c4d9b7f-m5t8v
req POST "/api/v1/namespaces/immich/pods/$SERVER/eviction" application/json "$(eviction immich $SERVER '')"
check "eviction against a PDB is 429" [ "$CODE" = 429 ]
check "  ... with the DisruptionBudget cause" has "$TMP/body" '"causes":[{"reason":"DisruptionBudget"'
req POST "$ML_PATH/eviction?dryRun=All" application/json "$(eviction immich $ML "$UID_ML")"
check "dry-run eviction is 201" [ "$CODE" = 201 ]
req GET "$ML_PATH"
check "  ... and leaves the pod" [ "$CODE" = 200 ]
req POST "$ML_PATH/eviction" application/json "$(eviction immich $ML "$UID_ML")"
check "eviction with the right uid is 201" [ "$CODE" = 201 ]
check "  ... a Success Status" has "$TMP/body" '"status":"Success"'
req GET "$ML_PATH"
check "the evicted pod is gone" [ "$CODE" = 404 ]
req GET /metrics
check "its memory is released" lacks "$TMP/body" "pod=\"$ML\""
check "  ... its process left the NVML state before the answer" lacks "$NVML" 'proc 0 2411 '
check "  ... and /proc" [ ! -e "$TMP/proc/2411" ]

# respawn_after 5 s at time scale 0.1: back within half a second.
NEW=""
for i in $(seq 1 60); do
  req GET /metrics
  NEW=$(grep -o 'pod="immich-ml-7d9c6b5f4d-[a-z0-9]*"' "$TMP/body" | cut -d'"' -f2)
  [ -n "$NEW" ] && break
  sleep 0.05
done
check "a replacement is exported under a new name" [ -n "$NEW" -a "$NEW" != "$ML" ]
check "  ... at its fresh 2000 MiB" grep -qE "pod=\"$NEW\",pid=\"[0-9]+\"} 2097152000$" "$TMP/body"
req GET "/api/v1/namespaces/immich/pods/$NEW"
check "the replacement is a Running pod" has "$TMP/body" '"phase":"Running"'
check "  ... with a new uid" lacks "$TMP/body" "\"uid\":\"$UID_ML\""
NEW_UID=$(jq -r .metadata.uid "$TMP/body")
NEW_CID=$(jq -r '.status.containerStatuses[0].containerID' "$TMP/body")
check "  ... and a new container ID" [ "$NEW_CID" != "$CID_ML" ]
sleep 0.3 # the 10 Hz sync
NEW_PID=$(awk '$4 == 2097152000 {print $3}' "$NVML")
check "its process is in the NVML state at 2000 MiB" [ -n "$NEW_PID" ]
check "  ... and /proc places it in the new pod" \
  grep -q "pod${NEW_UID//-/_}.slice/cri-containerd-${NEW_CID#containerd://}.scope" "$TMP/proc/${NEW_PID:-none}/cgroup"

req GET /sim/events
sed 's/{"time"/\n{"time"/g' "$TMP/body" | grep '"path":"/api/v1/namespaces/immich/pods/immich-ml-7d9c6b5f4d-x8k2p/eviction","query":""' | grep '"code":201' >"$TMP/evictions"
check "events show exactly one real eviction of immich-ml" [ "$(wc -l <"$TMP/evictions")" -eq 1 ]
check "  ... carrying its uid" has "$TMP/evictions" "\"uid\":\"$UID_ML\""
req GET /sim/state
check "state reports the replacement" has "$TMP/body" "\"name\":\"$NEW\""

req POST /sim/quit
check "quit answers 200" [ "$CODE" = 200 ]
wait "$MAIN_PID"
rc=$?
check "quit exits 0" [ "$rc" -eq 0 ]

# --- a second instance: the incident's end state, then SIGTERM -------------
start growth --time-scale 0.05
sleep 1.7 # scenario t = 34 s: the arena is at its 10957 MiB peak
req GET /metrics
check "the arena peaks at 10957 MiB" grep -qE 'pod="immich-ml-7d9c6b5f4d-x8k2p",pid="2411"\} 11489247232$' "$TMP/body"
FREE=$(sed -n 's/^gpu_memory_free_bytes{[^}]*} \([0-9]*\)$/\1/p' "$TMP/body")
check "free VRAM is below the 1536 MiB floor" [ "${FREE:-0}" -lt $((1536 * 1048576)) ]
kill -TERM "$LAST_PID"
wait "$LAST_PID"
rc=$?
check "SIGTERM exits 0" [ "$rc" -eq 0 ]

# --- what NVML cannot attribute: driver reservation, a process it cannot measure --
cat >"$TMP/na.json" <<'JSON'
{"gpus": [{"uuid": "GPU-na", "name": "NVIDIA A10", "total_mib": 1000, "reserved_mib": 100}],
 "pods": [{"namespace": "a", "name": "app-x1", "processes": [{"pid": 10, "mib": 200, "na": true}, {"pid": 11, "mib": 300}]}]}
JSON
mkdir "$TMP/procna"
SCENARIO="$TMP/na.json" start na --time-scale 1000 --nvml-state "$TMP/nvml-na" --proc-root "$TMP/procna"
check "reserved and unmeasurable memory still count as used: 400 MiB free" grep -qx 'gpu 0 GPU-na 1048576000 419430400 NVIDIA A10' "$TMP/nvml-na"
check "a process NVML cannot measure is listed as na" grep -qx 'proc 0 10 na compute' "$TMP/nvml-na"
check "  ... and still has its cgroup file" [ -f "$TMP/procna/10/cgroup" ]
kill -TERM "$LAST_PID"
wait "$LAST_PID"

# --- two GPUs (issue #15) ---------------------------------------------------
mkdir "$TMP/proc2"
SCENARIO=$(dirname "$SCENARIO")/two-gpus.json start two --time-scale 0.05 --nvml-state "$TMP/nvml2" --proc-root "$TMP/proc2"
sleep 1.7 # scenario t = 34 s: immich-ml at its peak on GPU 0
check "two GPUs with their UUIDs" [ "$(grep -cE '^gpu [01] GPU-(0a6f3c2e|1b7e4d3f)-' "$TMP/nvml2")" -eq 2 ]
check "GPU 0 is short: 403 MiB free (the driver's 300 MiB reserve counts as used)" grep -qE '^gpu 0 GPU-0a6f3c2e-51d4-4b8e-9f17-3d2c8e4a6b01 16106127360 422576128 Tesla T4$' "$TMP/nvml2"
check "GPU 1 is not: 2260 MiB free" grep -qE '^gpu 1 GPU-1b7e4d3f-62e5-4c9f-8a28-4e3d9f5b7c12 16106127360 2369781760 Tesla T4$' "$TMP/nvml2"
check "immich-ml's memory is on GPU 0" grep -qx 'proc 0 2411 11489247232 compute' "$TMP/nvml2"
check "comfyui's on GPU 1" grep -qx 'proc 1 5120 8912896000 compute' "$TMP/nvml2"
check "llama-swap on both GPUs" eval 'grep -qx "proc 1 3102 4508876800 compute" "$TMP/nvml2" && grep -qx "proc 0 3150 524288000 compute" "$TMP/nvml2"'
req GET /sim/state
check "/sim/state lists both GPUs" [ "$(jq '.gpus | length' "$TMP/body")" -eq 2 ]
req GET /api/v1/nodes/gpu-node-2
check "the node has 2 nvidia.com/gpu" [ "$(jq -r '.status.capacity["nvidia.com/gpu"]' "$TMP/body")" = 2 ]
kill -TERM "$LAST_PID"
wait "$LAST_PID"

# --- cooperative release: a tenant's own endpoint on its own loopback pod IP --
cat >"$TMP/release.json" <<'JSON'
{"pods": [
  {"namespace": "a", "name": "tenant-x1", "annotations": {"gpu-vram-watchdog/release": "8080/unload"},
   "release_after": 0, "respawn": {"after": 0.3},
   "processes": [{"pid": 20, "mib": 3000, "released_mib": 200}, {"pid": 21, "mib": 1000}]},
  {"namespace": "a", "name": "tenant-y1", "annotations": {"gpu-vram-watchdog/release": "8080/unload"},
   "release_after": 0.4, "processes": [{"pid": 30, "mib": 1000}]},
  {"namespace": "b", "name": "bad-z1", "annotations": {"gpu-vram-watchdog/release": "http://example.com/x"},
   "processes": [{"pid": 40, "mib": 500}]},
  {"namespace": "c", "name": "plain-w1", "processes": [{"pid": 50, "mib": 500}]}]}
JSON
mkdir "$TMP/procrel"
SCENARIO="$TMP/release.json" start rel --time-scale 1 --nvml-state "$TMP/nvml-rel" --proc-root "$TMP/procrel"
req GET /sim/state
cp "$TMP/body" "$TMP/relstate"
ip_of() { jq -r --arg n "$1" '.pods[] | select(.name == $n) | .pod_ip' "$TMP/relstate"; }
X_IP=$(ip_of tenant-x1)
Y_IP=$(ip_of tenant-y1)
X_URL=$(jq -r '.pods[] | select(.name == "tenant-x1") | .release.url' "$TMP/relstate")
Y_URL=$(jq -r '.pods[] | select(.name == "tenant-y1") | .release.url' "$TMP/relstate")
check "an annotated pod's IP is a loopback address of its own" eval '[[ $X_IP == 127.* && $X_IP != 127.0.0.1 ]]'
check "  ... distinct per pod, even on the same port" eval '[[ $Y_IP == 127.* && $Y_IP != "$X_IP" ]]'
check "  ... and the API shows it as status.podIP" eval "curl -s 'http://127.0.0.1:$PORT/api/v1/namespaces/a/pods/tenant-x1' | jq -e --arg ip '$X_IP' '.status.podIP == \$ip' >/dev/null"
check "/sim/state names the endpoint it serves" [ "$X_URL" = "http://$X_IP:8080/unload" ]
check "a value that is not PORT/PATH is not served: the pod keeps a cluster IP" eval '[[ $(ip_of bad-z1) == 10.244.1.* ]] && jq -e ".pods[] | select(.name == \"bad-z1\") | .release == null" "$TMP/relstate" >/dev/null'
check "an unannotated pod keeps a cluster IP" eval '[[ $(ip_of plain-w1) == 10.244.1.* ]]'
check "the sim's log names the endpoint" has "$TMP/rel.err" "a/tenant-x1: release endpoint POST $X_URL"
rcode() { curl -s -o "$TMP/rbody" -w '%{http_code}' "$@"; } # 000: nobody answered
check "GET on the release route is 405" [ "$(rcode "$X_URL")" = 405 ]
check "another path on the pod IP is 404" [ "$(rcode -X POST "http://$X_IP:8080/other")" = 404 ]
check "  ... and neither released anything" grep -qx 'proc 0 21 1048576000 compute' "$TMP/nvml-rel"
check "POST on the release route is 200" [ "$(rcode -X POST "$X_URL")" = 200 ]
check "  ... release_after 0: the node's files show it before the answer" eval "grep -qx 'proc 0 20 209715200 compute' '$TMP/nvml-rel' && ! grep -q '^proc 0 21 ' '$TMP/nvml-rel'"
req GET /sim/state
check "  ... the pod keeps its released_mib (200), the other process exits" [ "$(jq '.pods[] | select(.name == "tenant-x1") | "\(.used_mib) \([.processes[] | select(.mib > 0)] | length) \(.release.asks)"' "$TMP/body")" = '"200 1 1"' ]
check "  ... and it is the same pod (not recycled)" [ "$(jq -r '.pods[] | select(.name == "tenant-x1") | "\(.state) \(.generation)"' "$TMP/body")" = "alive 0" ]
check "a second ask is answered and changes nothing" eval '[ "$(rcode -X POST "$X_URL")" = 200 ] && grep -qx "proc 0 20 209715200 compute" "$TMP/nvml-rel"'
check "release_after 0.4: asked, y1 still holds its memory at once" eval '[ "$(rcode -X POST "$Y_URL")" = 200 ] && curl -s "http://127.0.0.1:$PORT/sim/state" | jq -e ".pods[] | select(.name == \"tenant-y1\") | .used_mib == 1000 and .release.pending" >/dev/null'
sleep 0.8
check "  ... and has let it go 0.4 s later" eval "curl -s 'http://127.0.0.1:$PORT/sim/state' | jq -e '.pods[] | select(.name == \"tenant-y1\") | .used_mib == 0 and .release.pending == false and .release.freed_at_t != null' >/dev/null && ! grep -q '^proc 0 30 ' '$TMP/nvml-rel'"
req POST "/api/v1/namespaces/a/pods/tenant-x1/eviction" application/json "$(eviction a tenant-x1 "$(jq -r '.pods[] | select(.name == "tenant-x1") | .uid' "$TMP/relstate")")"
check "an annotated pod can still be evicted" [ "$CODE" = 201 ]
sleep 0.6
req GET /sim/state
check "its replacement loads again (4000 MiB), same pod IP, not released" [ "$(jq -r --arg ip "$X_IP" '.pods[] | select(.name | startswith("tenant-x1") | not) | select(.namespace == "a" and .pod_ip == $ip) | "\(.used_mib) \(.generation) \(.release.pending)"' "$TMP/body")" = "4000 1 false" ]
kill -TERM "$LAST_PID"
wait "$LAST_PID"
check "the release listener is closed with the sim" [ "$(rcode -X POST "$X_URL")" = 000 ]
echo '{"pods": [{"namespace": "a", "name": "p-1", "processes": [{"mib": 1, "released_mib": -1}]}]}' >"$TMP/badrel.json"
"$SIM" --scenario "$TMP/badrel.json" >/dev/null 2>"$TMP/badrel.err"
rc=$?
check "a negative released_mib is refused (exit 2, named)" eval '[ $rc -eq 2 ] && has "$TMP/badrel.err" released_mib'

# --- DRA: ResourceClaims by name; a pod's claims where the real server writes them --
cat >"$TMP/claims.json" <<'JSON'
{"claims": [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
   "metadata": {"namespace": "ml", "name": "shared"},
   "status": {"allocation": {"devices": {"results": [{"driver": "gpu.nvidia.com",
     "consumedCapacity": {"memory": "16Gi"}}]}}}}],
 "pods": [{"namespace": "ml", "name": "rag-x1",
   "resource_claims": [{"name": "gpu", "resourceClaimName": "shared"}]},
  {"namespace": "ml", "name": "train-x1",
   "resource_claims": [{"name": "gpu", "resourceClaimTemplateName": "t"}],
   "resource_claim_statuses": [{"name": "gpu", "resourceClaimName": "train-x1-gpu-abcde"}]}]}
JSON
SCENARIO="$TMP/claims.json" start claims
CL=/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims
req GET "$CL/shared"
check "GET a scenario's ResourceClaim by name: 200, as given" eval '[ "$CODE" = 200 ] && jq -e ".status.allocation.devices.results[0].consumedCapacity.memory == \"16Gi\"" "$TMP/body" >/dev/null'
req GET "$CL/nope"
check "an unknown claim: the server's 404 Status" eval '[ "$CODE" = 404 ] && jq -e ".reason == \"NotFound\" and .message == \"resourceclaims.resource.k8s.io \\\"nope\\\" not found\"" "$TMP/body" >/dev/null'
req GET "$CL/shared/status"
check "  ... a path below a claim is 404" [ "$CODE" = 404 ]
req DELETE "$CL/shared"
check "  ... any other method 405" [ "$CODE" = 405 ]
req GET /api/v1/namespaces/ml/pods/rag-x1
check "a claim named directly is in spec.resourceClaims, no status entry" eval 'jq -e "(.spec.resourceClaims[0].resourceClaimName == \"shared\") and (.status.resourceClaimStatuses == null)" "$TMP/body" >/dev/null'
req GET /api/v1/namespaces/ml/pods/train-x1
check "a template's claim is named in status.resourceClaimStatuses" eval 'jq -e ".status.resourceClaimStatuses[0].resourceClaimName == \"train-x1-gpu-abcde\"" "$TMP/body" >/dev/null'
kill -TERM "$LAST_PID"
wait "$LAST_PID"
bad_claims() { # bad_claims NAME JSON NEEDLE
  echo "$2" >"$TMP/$1.json"
  "$SIM" --scenario "$TMP/$1.json" >/dev/null 2>"$TMP/$1.err"
  local rc=$?
  check "a bad scenario ($1) is refused (exit 2, named)" eval "[ $rc -eq 2 ] && has '$TMP/$1.err' '$3'"
}
bad_claims claims-not-array '{"claims": {}, "pods": [{"namespace": "a", "name": "p-1"}]}' "claims must be an array"
bad_claims claim-unnamed '{"claims": [{"metadata": {"namespace": "a"}}], "pods": [{"namespace": "a", "name": "p-1"}]}' "claims[0]: needs metadata"
bad_claims claim-twice '{"claims": [{"metadata": {"namespace": "a", "name": "c"}}, {"metadata": {"namespace": "a", "name": "c"}}], "pods": [{"namespace": "a", "name": "p-1"}]}' "claims[1]: a/c is declared twice"
bad_claims pod-claims '{"pods": [{"namespace": "a", "name": "p-1", "resource_claims": ["c"]}]}' "resource_claims and resource_claim_statuses must be arrays of objects"
bad_claims pod-statuses '{"pods": [{"namespace": "a", "name": "p-1", "resource_claim_statuses": {}}]}' "resource_claims and resource_claim_statuses must be arrays of objects"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
