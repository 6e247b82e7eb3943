#!/usr/bin/env bash
# smoke.sh -- sim_smoke: gvw-sim answers like an API server and an exporter, recycles a
# pod, respawns it, and exits cleanly. Usage: smoke.sh path/to/gvw-sim scenario.json
set -u

SIM=${1:?usage: smoke.sh GVW_SIM SCENARIO}
if ! command -v curl >/dev/null; then
  echo "skipped: curl is not installed"
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

# --- the main instance, ten times faster than the scenario ----------------
start main --time-scale 0.1
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

req GET /metrics
cp "$TMP/body" "$TMP/metrics1"
if command -v promtool >/dev/null; then
  check "promtool check metrics" promtool check metrics <"$TMP/metrics1"
fi
check "exporter has immich-ml's process" has "$TMP/metrics1" "pod=\"$ML\",pid=\"2411\"}"
check "llama-swap exports two processes" [ "$(grep -c 'pod="llama-swap-' "$TMP/metrics1")" -eq 2 ]

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

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
