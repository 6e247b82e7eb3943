#!/usr/bin/env bash
# test_pod_lists.sh -- pod lists as a real API server sends them (SPEC "A decision" step 2,
# "The node exporter", "Hostile input"): Succeeded/Failed pods are no tenant of `check`,
# `budgets` or the exporter; a list past POD_LIST_MAX pods that have not finished is refused
# clearly (`check`: skipped_kube saying so; the exporter logs it and keeps its last good
# list). A fake API server (tests/fake/suggest_kube.py) and a fixed Prometheus answer
# (gvw-faultkit upstream reply) on loopback; the exporter on the stub NVML and a fake /proc.
source "$(dirname "$0")/../lib/harness.sh"
GVW_FAULTKIT=${GVW_FAULTKIT:?gvw-faultkit}
GVW_STUB_NVML=${GVW_STUB_NVML:?the stub libnvidia-ml.so.1}
RES=viktorbarzin.me/gpumem
NODE=gpu-node-1
GIB=1073741824
KUBE="$TMP/kube"
mkdir -p "$KUBE"

# pod NAME PHASE BUDGET UID: one PodList item of a ReplicaSet, running since 2026-01-01.
pod() {
    printf '{"metadata":{"name":"%s","namespace":"ml","uid":"%s","ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"rs-1","controller":true}]},"spec":{"nodeName":"%s","containers":[{"name":"c","resources":{"limits":{"%s":"%s"}}}]},"status":{"phase":"%s","startTime":"2026-01-01T00:00:00Z","containerStatuses":[{"name":"c","containerID":"containerd://%064d"}]}}' \
        "$1" "$4" "$NODE" "$RES" "$3" "$2" 0
}
# The node's list: two tenants that run, one that waits (no VRAM), and three that
# finished (a Job's pod, a replica that failed, one whose budget is unreadable).
pods_json() {
    printf '{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[%s,%s,%s,%s,%s,%s]}' \
        "$(pod llm Running 4k "$UID_LLM")" "$(pod done Succeeded 6k "${U}2")" \
        "$(pod crashed Failed 3k "${U}3")" "$(pod web Running 2k "${U}4")" \
        "$(pod broken-done Succeeded 5q "${U}5")" "$(pod waiting Pending 1k "${U}6")"
}
# A list of N running tiny pods (Python: a shell loop takes too long for 5,001).
many_running() {
    python3 -c 'import sys
n = int(sys.argv[1])
items = ",".join("{\"metadata\":{\"name\":\"p%d\",\"namespace\":\"bulk\",\"uid\":\"bulk-%d\"},\"status\":{\"phase\":\"Running\"}}" % (i, i) for i in range(n))
sys.stdout.write("{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"items\":[%s]}" % items)' "$1"
}
U=a0a0a0a0-0000-4000-8000-00000000000
UID_LLM=${U}1
put() { cat >"$KUBE/$1.tmp" && mv "$KUBE/$1.tmp" "$KUBE/$1"; } # atomically

cp "$GVW_TEST_DATA/kube-nodes-gpu.json" "$KUBE/nodes"
printf '{"kind":"Node","apiVersion":"v1","metadata":{"name":"%s"},"status":{"capacity":{"%s":"14000"}}}' \
    "$NODE" "$RES" | put "node-$NODE"
pods_json | put "pods-$NODE"
# Prometheus: llm uses 7000 MiB, web 1000 MiB (every query gets this answer).
cat >"$TMP/prom.json" <<'JSON'
{"status":"success","data":{"resultType":"vector","result":[
 {"metric":{"namespace":"ml","pod":"llm"},"value":[1767225600,"7340032000"]},
 {"metric":{"namespace":"ml","pod":"web"},"value":[1767225600,"1048576000"]}]}}
JSON

python3 "$GVW_SOURCE_DIR/tests/fake/suggest_kube.py" "$KUBE" "$TMP/kube.log" >"$TMP/kube.out" &
PIDS+=($!)
"$GVW_FAULTKIT" upstream reply 200 "$TMP/prom.json" >"$TMP/prom.out" 2>/dev/null &
PIDS+=($!)
wait_for 10 grep -q '^port' "$TMP/kube.out" || { fail "the fake API server starts"; finish; exit 1; }
wait_for 10 grep -q '^listening' "$TMP/prom.out" || { fail "the fake Prometheus starts"; finish; exit 1; }
KUBE_URL=http://127.0.0.1:$(sed -n 's/^port //p' "$TMP/kube.out")
export KUBE_API_URL=$KUBE_URL KUBE_TOKEN_FILE= KUBE_CA_FILE= FREE_QUERY=
export PROMETHEUS_URL=http://127.0.0.1:$(sed -n 's/^listening //p' "$TMP/prom.out")

# --- budgets: the seating chart sums the tenants that hold a seat ------------------
out=$("$GVW_BINARY" budgets --node "$NODE" --format json 2>"$TMP/err")
expect_eq "budgets: Σ declared is llm 4000 + web 2000 + waiting 1000 (finished pods hold no seat)" \
    "7000 0 false" "$(printf '%s' "$out" | jq -r '"\(.budgets_mib) \(.bad_budgets) \(.overcommitted)"')"
expect_eq "budgets: the tenants are the pods that have not finished" "llm waiting web" \
    "$(printf '%s' "$out" | jq -r '[.gpus[].tenants[].pod, .idle_tenants[].pod] | sort | join(" ")')"
out=$("$GVW_BINARY" budgets --node "$NODE" 2>&1)
expect_not_contains "budgets table: no finished pod" "done" "$out"
expect_not_contains "budgets table: no unreadable budget of a finished pod" "broken" "$out"

# --- the page: the same seating chart ----------------------------------------------
start_serve "$TMP/serve.log" WEBHOOK_AUTH=none AUDIT_DB="$TMP/audit.db" EVENTS=false \
    GPUMEM_CAPACITY_MIB=14000 || { fail "serve starts"; finish; exit 1; }
code=$(http_code GET / --max-time 20)
expect_eq "the page answers" 200 "$code"
expect_contains "the page: Σ budgets without the finished pods" \
    "14000 MiB advertised, 7000 MiB of budgets declared" "$(cat "$TMP/body")"
expect_contains "the page: llm's seat" "ml/llm: budget 4000 MiB" "$(cat "$TMP/body")"
for gone in done crashed broken-done; do
    expect_not_contains "the page: no seat for the finished ml/$gone" "ml/$gone:" "$(cat "$TMP/body")"
done
kill "$SERVE_PID" 2>/dev/null
wait "$SERVE_PID" 2>/dev/null

# --- check: a decision's candidates are the tenants --------------------------------
out=$(GPU_TOTAL_MIB=9000 "$GVW_BINARY" check --node "$NODE" --format json 2>"$TMP/err")
expect_eq "check: below the floor, llm (3000 MiB over its budget) is the victim" \
    "would_recycle llm" "$(printf '%s' "$out" | jq -r '"\(.result) \(.victim.pod)"')"
expect_eq "check: the candidates are the pods that have not finished" "llm waiting web" \
    "$(printf '%s' "$out" | jq -r '[.candidates[].pod] | sort | join(" ")')"

# --- a list past POD_LIST_MAX pods that have not finished --------------------------
many_running 5001 | put "pods-$NODE"
out=$(GPU_TOTAL_MIB=9000 "$GVW_BINARY" check --node "$NODE" --format json 2>"$TMP/err")
expect_eq "too large: check says skipped_kube" skipped_kube "$(printf '%s' "$out" | jq -r .result)"
expect_contains "too large: the reason says the pod list is too large" \
    "could not be listed (the pod list is too large)" "$(printf '%s' "$out" | jq -r .reason)"
expect_contains "too large: the error names the bound" \
    "pod list too large: more than 5000 pods that have not finished" \
    "$(printf '%s' "$out" | jq -r .error)"
out=$("$GVW_BINARY" budgets --node "$NODE" --format json 2>"$TMP/err")
expect_contains "too large: budgets says why it has no budgets" "pod list too large" \
    "$(printf '%s' "$out" | jq -r '.error // .gpus[0].error // empty')"
# The same 5,001 pods with one finished: 5,000 that have not finished is within bounds.
python3 -c 'import json,sys
d = json.load(open(sys.argv[1])); d["items"][0]["status"]["phase"] = "Succeeded"
json.dump(d, open(sys.argv[1] + ".tmp", "w"))' "$KUBE/pods-$NODE" && mv "$KUBE/pods-$NODE.tmp" "$KUBE/pods-$NODE"
out=$(GPU_TOTAL_MIB=9000 "$GVW_BINARY" check --node "$NODE" --format json 2>"$TMP/err")
expect_eq "5,000 pods that have not finished and one that has: judged" \
    "skipped_no_candidate 5002" \
    "$(printf '%s' "$out" | jq -r '"\(.result) \(.candidates | length)"')"

# --- the exporter ------------------------------------------------------------------
pods_json | put "pods-$NODE"
mkdir -p "$TMP/proc/101" "$TMP/proc/102"
printf '0::/kubepods/pod%s/%064d\n' "$UID_LLM" 0 >"$TMP/proc/101/cgroup"
printf '0::/kubepods/pod%s/%064d\n' b0b0b0b0-0000-4000-8000-000000000001 1 \
    >"$TMP/proc/102/cgroup" # a pod the list does not have yet
state() { printf '%s\n' "$@" >"$TMP/state.tmp" && mv "$TMP/state.tmp" "$TMP/nvml.state"; }
state "gpu 0 GPU-0aaa 16106127360 6442450944 Tesla T4" "proc 0 101 $((4 * GIB)) compute"
env NODE_NAME="$NODE" NVML_LIBRARY="$GVW_STUB_NVML" GVW_STUB_NVML_STATE="$TMP/nvml.state" \
    PROC_ROOT="$TMP/proc" EXPORTER_LISTEN_ADDR=127.0.0.1:0 POLL_INTERVAL=200ms \
    GPUMEM_RESOURCE="$RES" "$GVW_BINARY" exporter 2>"$TMP/exporter.log" &
PIDS+=($!)
EXP_PORT=
for _ in $(seq 1 100); do
    EXP_PORT=$(sed -n 's/.*"msg":"exporter listening".*"port":"\([0-9]*\)".*/\1/p' "$TMP/exporter.log")
    [ -n "$EXP_PORT" ] && break
    sleep 0.05
done
[ -n "$EXP_PORT" ] || { cat "$TMP/exporter.log"; fail "the exporter starts"; finish; exit 1; }
metrics() { curl -s "http://127.0.0.1:$EXP_PORT/metrics"; }
has_llm() { metrics | grep -q 'gpu_pod_memory_used_bytes{node="gpu-node-1",namespace="ml",pod="llm"'; }
wait_for 10 has_llm || fail "the exporter attributes llm's process" "$(metrics | grep pod_memory)"
M=$(metrics)
B="gpu_pod_memory_budget_bytes{node=\"$NODE\",namespace=\"ml\""
expect_eq "exporter: budget series for the pods that have not finished only" "llm waiting web" \
    "$(printf '%s\n' "$M" | sed -n 's/^gpu_pod_memory_budget_bytes{.*pod="\([^"]*\)"}.*/\1/p' | sort | tr '\n' ' ' | sed 's/ $//')"
expect_contains "exporter: llm's budget" "$B,pod=\"llm\"} $((4000 * 1048576))" "$M"
expect_contains "exporter: a finished pod's unreadable budget is no error" \
    $'\ngpu_vram_exporter_budget_errors_total 0\n' "$M"
expect_not_contains "exporter: nor logged" "broken-done" "$(cat "$TMP/exporter.log")"

# Now the list grows past the bound and a process of an unknown pod asks for a re-list.
many_running 5001 | put "pods-$NODE"
state "gpu 0 GPU-0aaa 16106127360 6442450944 Tesla T4" "proc 0 101 $((4 * GIB)) compute" \
    "proc 0 102 $GIB compute"
logged() { grep -q 'pod list too large' "$TMP/exporter.log"; }
wait_for 10 logged || fail "exporter: the refused list is logged" "$(tail -3 "$TMP/exporter.log")"
expect_contains "exporter: the log says the last good list stays in use" \
    "the last good list stays in use" "$(grep 'pod list too large' "$TMP/exporter.log")"
sleep 0.5 # a poll after the refusal
M=$(metrics)
expect_contains "exporter: llm is still attributed from the last good list" \
    "gpu_pod_memory_used_bytes{node=\"$NODE\",namespace=\"ml\",pod=\"llm\",container=\"c\",gpu=\"0\",uuid=\"GPU-0aaa\"} $((4 * GIB))" "$M"
expect_contains "exporter: and its budget series stays" "$B,pod=\"llm\"} $((4000 * 1048576))" "$M"
expect_not_contains "exporter: no pod of the refused list" 'namespace="bulk"' "$M"
finish
