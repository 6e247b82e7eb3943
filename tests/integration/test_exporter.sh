#!/usr/bin/env bash
# test_exporter.sh -- `gpu-vram-watchdog exporter` against the stub NVML, a fake /proc
# and a fake API server on loopback: the /metrics a user reads, NVML going away and
# coming back, a pod whose container shows up only after a re-list.
. "$(dirname "$0")/../lib/harness.sh"
GVW_STUB_NVML=${GVW_STUB_NVML:?the stub libnvidia-ml.so.1}
GVW_FAKE_KUBE=${GVW_FAKE_KUBE:?the fake API server}
absent() { ! printf '%s\n' "$2" | grep -qE -- "$1"; } # absent REGEX TEXT
check() { # check DESCRIPTION COMMAND...
    local name=$1
    shift
    if "$@"; then pass "$name"; else fail "$name"; fi
}

UID_A=0b3c7f52-1d5e-4a58-9c1e-2f4b7d8e9a01 # ml/llm-0, burstable, systemd + containerd
UID_B=7d9e1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b # web/render-1, besteffort, cgroupfs + CRI-O style id
UID_C=c0ffee00-1111-4222-8333-944455556666 # batch/job-2, guaranteed, cgroup v1 systemd + docker
UID_D=d0d0d0d0-0000-4000-8000-000000000004 # ml/idle-3: a budget, no VRAM
UID_E=e0e0e0e0-0000-4000-8000-000000000005 # ml/broken-4: an unreadable budget
UID_F=f0f0f0f0-0000-4000-8000-000000000006 # ml/small-5: "4.5Gi" MiB, the grammar's binary suffix
UID_G=a0a0a0a0-0000-4000-8000-000000000007 # ml/done-6: Succeeded, holds no seat
RES=viktorbarzin.me/gpumem
hex() { printf "%064d" 0 | tr 0 "$1"; }
CID_A=$(hex a) CID_A2=$(hex b) CID_B=$(hex c) CID_C=$(hex d) CID_LATE=$(hex e)
mkproc() { mkdir -p "$TMP/proc/$1"; printf '%s\n' "$2" >"$TMP/proc/$1/cgroup"; }
mkproc 101 "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${UID_A//-/_}.slice/cri-containerd-$CID_A.scope"
mkproc 102 "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${UID_A//-/_}.slice/cri-containerd-$CID_A2.scope"
mkproc 201 "0::/kubepods/besteffort/pod$UID_B/$CID_B"
mkproc 301 "$(printf '12:memory:/kubepods.slice/kubepods-pod%s.slice/docker-%s.scope\n11:cpu,cpuacct:/kubepods.slice/kubepods-pod%s.slice/docker-%s.scope\n0::/' "${UID_C//-/_}" "$CID_C" "${UID_C//-/_}" "$CID_C")"
mkproc 302 "0::/kubepods.slice/kubepods-pod${UID_C//-/_}.slice/cri-containerd-$CID_LATE.scope"
mkproc 401 "0::/system.slice/ollama.service" # a host process
# pid 999 has no /proc entry at all (it ended, or hostPID is off)

pods() { # the PodList the fake API server answers; $1 = also list job-2's late container
    local late=""
    [ "${1:-}" = late ] && late=",{\"name\":\"sidecar\",\"containerID\":\"containerd://$CID_LATE\"}"
    cat >"$TMP/pods.tmp" <<JSON
{"kind":"PodList","apiVersion":"v1","items":[
 {"metadata":{"name":"llm-0","namespace":"ml","uid":"$UID_A"},"spec":{"nodeName":"gpu-node-1",
  "containers":[{"name":"server","resources":{"limits":{"$RES":"5k"}}},
   {"name":"helper","resources":{"requests":{"$RES":"500M"}}}]},
  "status":{"phase":"Running","containerStatuses":[{"name":"server","containerID":"containerd://$CID_A"}],
   "initContainerStatuses":[{"name":"fetch-weights","containerID":"containerd://$CID_A2"}]}},
 {"metadata":{"name":"idle-3","namespace":"ml","uid":"$UID_D"},
  "spec":{"containers":[{"name":"c","resources":{"limits":{"$RES":"1e3"}}}]},"status":{"phase":"Running"}},
 {"metadata":{"name":"small-5","namespace":"ml","uid":"$UID_F"},
  "spec":{"containers":[{"name":"c","resources":{"limits":{"$RES":"4.5Gi"}}}]},"status":{"phase":"Running"}},
 {"metadata":{"name":"done-6","namespace":"ml","uid":"$UID_G"},
  "spec":{"containers":[{"name":"c","resources":{"limits":{"$RES":"2k"}}}]},"status":{"phase":"Succeeded"}},
 {"metadata":{"name":"broken-4","namespace":"ml","uid":"$UID_E"},
  "spec":{"containers":[{"name":"c","resources":{"limits":{"$RES":"5q"}}}]}},
 {"metadata":{"name":"render-1","namespace":"web","uid":"$UID_B"},
  "spec":{"containers":[{"name":"blender","resources":{"limits":{"$RES":"-1"}}}]},
  "status":{"containerStatuses":[{"name":"blender","containerID":"cri-o://$CID_B"}]}},
 {"metadata":{"name":"job-2","namespace":"batch","uid":"$UID_C"},
  "status":{"containerStatuses":[{"name":"main","containerID":"docker://$CID_C"}$late]}}
]}
JSON
    mv "$TMP/pods.tmp" "$TMP/pods.json"
}
state() { printf '%s\n' "$@" >"$TMP/state.tmp" && mv "$TMP/state.tmp" "$TMP/nvml.state"; }

GIB=1073741824
GPUS=("gpu 0 GPU-0aaa 16106127360 6442450944 Tesla T4" \
    "gpu 1 GPU-1bbb 85899345920 75161927680 NVIDIA A100 80GB PCIe" \
    "proc 0 101 $((4 * GIB)) both" \
    "proc 0 102 $((1 * GIB)) compute" \
    "proc 0 201 $((2 * GIB)) graphics" \
    "proc 0 401 $((512 * 1048576)) compute" \
    "proc 0 999 $((256 * 1048576)) compute" \
    "proc 1 301 $((3 * GIB)) compute" \
    "proc 1 201 na compute")
state "# two GPUs" "${GPUS[@]}"
pods

"$GVW_FAKE_KUBE" "$TMP/pods.json" "$TMP/kube.log" >"$TMP/kube.port" &
PIDS+=($!)
for _ in $(seq 1 50); do [ -s "$TMP/kube.port" ] && break; sleep 0.05; done
KUBE_PORT=$(awk '{print $2}' "$TMP/kube.port")

env NODE_NAME=gpu-node-1 NVML_LIBRARY="$GVW_STUB_NVML" GVW_STUB_NVML_STATE="$TMP/nvml.state" \
    PROC_ROOT="$TMP/proc" KUBE_API_URL="http://127.0.0.1:$KUBE_PORT" KUBE_TOKEN_FILE= \
    KUBE_CA_FILE= EXPORTER_LISTEN_ADDR=127.0.0.1:0 POLL_INTERVAL=200ms \
    "$GVW_BINARY" exporter 2>"$TMP/exporter.log" &
EXP_PID=$!
PIDS+=("$EXP_PID")
for _ in $(seq 1 100); do
    SERVE_PORT=$(sed -n 's/.*"msg":"exporter listening".*"port":"\([0-9]*\)".*/\1/p' "$TMP/exporter.log")
    [ -n "$SERVE_PORT" ] && break
    sleep 0.05
done
[ -n "$SERVE_PORT" ] || { cat "$TMP/exporter.log"; fail "the exporter starts"; finish; exit 1; }

metrics() { curl -s "http://127.0.0.1:$SERVE_PORT/metrics"; }
# wait_for PATTERN: up to 5 s for /metrics to show a line matching it
wait_for() {
    for _ in $(seq 1 100); do metrics | grep -q -- "$1" && return 0; sleep 0.05; done
    return 1
}
sample() { metrics | grep -F -- "$1" | awk '{print $NF}'; }

check "/healthz answers 200" [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$SERVE_PORT/healthz")" = 200 ]
check "a POST is refused with 405" [ "$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$SERVE_PORT/metrics")" = 405 ]
wait_for 'container="server"' || true
M=$(metrics)
printf '%s\n' "$M" >"$TMP/metrics.txt"
L='node="gpu-node-1",namespace="ml",pod="llm-0"'
expect_contains "llm-0's server, counted once though in both lists" \
    "gpu_pod_memory_used_bytes{$L,container=\"server\",gpu=\"0\",uuid=\"GPU-0aaa\"} $((4 * GIB))" "$M"
expect_contains "its init container by its own name" \
    "gpu_pod_memory_used_bytes{$L,container=\"fetch-weights\",gpu=\"0\",uuid=\"GPU-0aaa\"} $((1 * GIB))" "$M"
expect_contains "a cgroupfs pod matched by its CRI-O container ID" \
    "gpu_pod_memory_used_bytes{node=\"gpu-node-1\",namespace=\"web\",pod=\"render-1\",container=\"blender\",gpu=\"0\",uuid=\"GPU-0aaa\"} $((2 * GIB))" "$M"
expect_contains "a cgroup v1 guaranteed pod (docker)" \
    "gpu_pod_memory_used_bytes{node=\"gpu-node-1\",namespace=\"batch\",pod=\"job-2\",container=\"main\",gpu=\"1\",uuid=\"GPU-1bbb\"} $((3 * GIB))" "$M"
check "render-1's process without a figure (na) makes no series on GPU 1" \
    absent 'pod="render-1".*gpu="1"' "$M"
check "no series for a made-up pod (host process, unknown pid)" \
    [ "$(grep -c '^gpu_pod_memory_used_bytes' "$TMP/metrics.txt")" -eq 4 ]
expect_contains "device total as NVML reports it, with the model" \
    'gpu_memory_total_bytes{node="gpu-node-1",gpu="1",uuid="GPU-1bbb",model="NVIDIA A100 80GB PCIe"} 85899345920' "$M"
expect_contains "used = total - free" \
    "gpu_memory_used_bytes{node=\"gpu-node-1\",gpu=\"0\",uuid=\"GPU-0aaa\",model=\"Tesla T4\"} $((16106127360 - 6442450944))" "$M"
expect_contains "free as NVML reports it" \
    'gpu_memory_free_bytes{node="gpu-node-1",gpu="0",uuid="GPU-0aaa",model="Tesla T4"} 6442450944' "$M"
# GPU 0: used 9 GiB; pods 4 + 1 + 2 GiB; the host process and pid 999 are in the rest.
expect_contains "GPU 0 unattributed = used - pods (host process, unknown pid, driver)" \
    "gpu_memory_unattributed_bytes{node=\"gpu-node-1\",gpu=\"0\",uuid=\"GPU-0aaa\"} $((16106127360 - 6442450944 - 7 * GIB))" "$M"
expect_contains "the exporter is up" $'\ngpu_vram_exporter_up 1\n' "$M"
B='gpu_pod_memory_budget_bytes{node="gpu-node-1",namespace="ml"'
expect_contains "a budget summed over containers: limit 5k + request 500M MiB, in bytes" \
    "$B,pod=\"llm-0\"} $(((5000 + 500000000) * 1048576))" "$M"
expect_contains "a pod without VRAM has its budget series (1e3 MiB)" "$B,pod=\"idle-3\"} $((1000 * 1048576))" "$M"
expect_contains "a binary suffix read as the API means it (4.5Gi MiB)" \
    "$B,pod=\"small-5\"} $((4831838208 * 1048576))" "$M"
check "a finished pod has none" absent 'pod="done-6"' "$(printf '%s\n' "$M" | grep budget_bytes)"
check "an unreadable budget (5q) has none" absent 'pod="broken-4"' "$M"
check "nor a negative one (-1)" absent 'budget_bytes\{[^}]*pod="render-1"' "$M"
check "nor a pod that declares none" absent 'budget_bytes\{[^}]*pod="job-2"' "$M"
expect_contains "both unreadable budgets are counted" $'\ngpu_vram_exporter_budget_errors_total 2\n' "$M"
expect_contains "and logged with the reason" '"pod":"broken-4"' "$(grep 'budget is unreadable' "$TMP/exporter.log")"
expect_contains "build info" 'gpu_vram_exporter_build_info{version="' "$M"
expect_contains "last poll timestamp" 'gpu_vram_exporter_last_poll_timestamp_seconds ' "$M"

# job-2's sidecar: a process in a container the cached list does not have.
# Its memory must not wait for a periodic refresh: the unknown ID makes the
# exporter list the pods again within the next poll, once.
check "the first list happened" grep -q 'fieldSelector=spec.nodeName%3Dgpu-node-1' "$TMP/kube.log"
expect_eq "and no other while every process was known" 1 "$(wc -l <"$TMP/kube.log")"
pods late
state "${GPUS[@]}" "proc 1 302 $((1 * GIB)) compute"
wait_for 'container="sidecar"' || true
M=$(metrics)
expect_contains "the late container appears under its name after a re-list" \
    "gpu_pod_memory_used_bytes{node=\"gpu-node-1\",namespace=\"batch\",pod=\"job-2\",container=\"sidecar\",gpu=\"1\",uuid=\"GPU-1bbb\"} $GIB" "$M"
sleep 0.6 # three more polls
expect_eq "exactly one re-list, not one per poll" 2 "$(wc -l <"$TMP/kube.log")"
expect_eq "an unreadable budget is logged once per pod, not once per list" 1 \
    "$(grep 'budget is unreadable' "$TMP/exporter.log" | grep -c '"pod":"broken-4"')"
expect_contains "and counted once" $'\ngpu_vram_exporter_budget_errors_total 2\n' "$M"
printf '%s\n' "$M" >"$TMP/metrics.txt"

if command -v promtool >/dev/null; then
    check "promtool check metrics accepts the output" promtool check metrics <"$TMP/metrics.txt"
fi

# exporter --once: the same poll for a person on the node. Its own state adds a
# process of a pod this node does not run (pid 501).
mkproc 501 "0::/kubepods/besteffort/pod11111111-2222-4333-8444-555555555555/$(hex f)"
printf '%s\n' "${GPUS[@]}" "proc 0 501 $((64 * 1048576)) compute" >"$TMP/once.state"
once() {
    env NODE_NAME=gpu-node-1 NVML_LIBRARY="$GVW_STUB_NVML" GVW_STUB_NVML_STATE="$TMP/once.state" \
        PROC_ROOT="$TMP/proc" KUBE_API_URL="http://127.0.0.1:$KUBE_PORT" KUBE_TOKEN_FILE= \
        KUBE_CA_FILE= "$GVW_BINARY" exporter --once "$@"
}
J=$(once --format json); rc=$?
expect_eq "--once --format json: exit 0" 0 "$rc"
jq_() { jq -r "$1" <<<"$J"; }
expect_eq "the pod list was read" true "$(jq_ .pod_list.ok)"
expect_eq "GPU 0: used = total - free" $((16106127360 - 6442450944)) "$(jq_ '.gpus[0].used_bytes')"
expect_eq "GPU 0: used = pods + unattributed, to the byte" "$(jq_ '.gpus[0].used_bytes')" \
    "$(jq_ '.gpus[0].pods_bytes + .gpus[0].unattributed_bytes')"
expect_eq "unattributed = processes without a pod + memory no process holds" \
    "$(jq_ '.gpus[0].unattributed_bytes')" \
    "$(jq_ '.gpus[0].unattributed_process_bytes + .gpus[0].no_process_bytes')"
expect_eq "pods on GPU 0: 4 + 1 + 2 GiB, as /metrics says" $((7 * GIB)) "$(jq_ '.gpus[0].pods_bytes')"
expect_eq "pid 101 listed once (both lists), with its pod and container" "ml llm-0 server $((4 * GIB))" \
    "$(jq_ '[.gpus[0].processes[] | select(.pid == 101)] | if length == 1 then .[0] | "\(.namespace) \(.pod) \(.container) \(.bytes)" else "x" end')"
expect_eq "a host process: no pod cgroup" no_pod_cgroup "$(jq_ '.gpus[0].processes[] | select(.pid == 401) | .why')"
expect_eq "a process gone from /proc: no pod cgroup" no_pod_cgroup "$(jq_ '.gpus[0].processes[] | select(.pid == 999) | .why')"
expect_eq "a pod the node does not run" pod_not_on_node "$(jq_ '.gpus[0].processes[] | select(.pid == 501) | .why')"
expect_eq "NVML without a figure" "memory_unknown null" \
    "$(jq_ '.gpus[1].processes[] | select(.pid == 201) | "\(.why) \(.bytes)"')"
T=$(once); rc=$?
expect_eq "--once (table): exit 0" 0 "$rc"
expect_contains "the table states the sum" \
    "used 9216.0 = pods 7168.0 + unattributed 2048.0 MiB; unattributed = 832.0 in processes without a known pod + 1216.0 held by no listed process" "$T"
expect_contains "a process row names its pod" "ml/llm-0 server" "$T"
expect_contains "and an unattributed one says why" "unattributed: its pod is not on this node" "$T"
# Names from outside reach the table as escapes, never raw (SPEC "Hostile input"):
# a GPU whose UUID and model hold ESC, BEL, a C1 CSI and a right-to-left override.
printf 'gpu 0 GPU-\033]0;x\007 16106127360 6442450944 Tesla\033[2J T4\342\200\256\302\2331m\n' \
    >"$TMP/hostile.state"
T=$(env NODE_NAME=$'gpu-node-1\n' NVML_LIBRARY="$GVW_STUB_NVML" GVW_STUB_NVML_STATE="$TMP/hostile.state" \
    PROC_ROOT="$TMP/proc" KUBE_API_URL= "$GVW_BINARY" exporter --once); rc=$?
expect_eq "--once with hostile names: exit 0" 0 "$rc"
expect_eq "no ESC, BEL, C1 CSI or RLO reaches the terminal" 0 \
    "$(printf '%s' "$T" | LC_ALL=C grep -c $'\033\\|\007\\|\342\200\256\\|\302\233')"
expect_contains "the names are shown with escapes" \
    'GPU 0  GPU-\x1b]0;x\x07  Tesla\x1b[2J T4\u{202E}\u{009B}1m' "$T"
expect_contains "the node's name too" 'node gpu-node-1\n: 1 GPU' "$T"
out=$(env NODE_NAME=n NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 KUBE_API_URL= "$GVW_BINARY" exporter --once 2>&1); rc=$?
expect_eq "--once without NVML: exit 1" 1 "$rc"
expect_eq "with one line saying so" 1 "$(printf '%s\n' "$out" | wc -l)"
expect_contains "naming the cause" "cannot read NVML" "$out"
out=$(env -u NODE_NAME "$GVW_BINARY" exporter --once 2>&1); rc=$?
expect_eq "--once without NODE_NAME: exit 2" 2 "$rc"
expect_contains "naming it" "NODE_NAME: required" "$out"
J=$(env NODE_NAME=gpu-node-1 NVML_LIBRARY="$GVW_STUB_NVML" GVW_STUB_NVML_STATE="$TMP/once.state" \
    PROC_ROOT="$TMP/proc" KUBE_API_URL= "$GVW_BINARY" exporter --once --format=json)
expect_eq "no API server: the pod list is unavailable, said so per process" \
    "false pod_list_unavailable" "$(jq -r '"\(.pod_list.ok) \(.gpus[0].processes[] | select(.pid == 101) | .why)"' <<<"$J")"

# NVML goes away: up 0 and no device or pod series; the reason is logged once.
state "init fail"
for _ in $(seq 1 60); do metrics | grep -q '^gpu_vram_exporter_up 0' && break; sleep 0.05; done
M=$(metrics)
expect_contains "init fail: gpu_vram_exporter_up 0" $'\ngpu_vram_exporter_up 0\n' "$M"
check "and no device or pod series (stale figures never look live)" \
    absent '^gpu_(pod_)?memory' "$M"
sleep 1 # several polls while down
check "the reason is logged once, not every poll" \
    [ "$(grep -c 'NVML unavailable' "$TMP/exporter.log")" -le 2 ]
expect_contains "it says why" "Driver Not Loaded" "$(cat "$TMP/exporter.log")"

# A GPU lost mid-run is the same.
state "gpu 0 GPU-0aaa 16106127360 6442450944 Tesla T4" "lost 0"
sleep 0.5
M=$(metrics)
expect_contains "a lost GPU: up 0" $'\ngpu_vram_exporter_up 0\n' "$M"

# Recovery.
state "gpu 0 GPU-0aaa 16106127360 8589934592 Tesla T4" "proc 0 101 $GIB compute"
wait_for '^gpu_vram_exporter_up 1' || true
M=$(metrics)
expect_contains "back: up 1" $'\ngpu_vram_exporter_up 1\n' "$M"
expect_contains "with fresh figures" \
    "gpu_pod_memory_used_bytes{$L,container=\"server\",gpu=\"0\",uuid=\"GPU-0aaa\"} $GIB" "$M"
check "and no GPU 1 any more" absent 'GPU-1bbb' "$M"
expect_contains "the recovery is logged" "NVML readable again" "$(cat "$TMP/exporter.log")"

# A driver call that hangs (4 s here) must not hold /metrics: it answers at
# once from the last poll, and once the next poll is due with the call still
# out, that poll did not read NVML: up 0, no device or pod series.
state "gpu 0 GPU-0aaa 16106127360 8589934592 Tesla T4" "proc 0 101 $GIB compute" "slow 0 4000"
for _ in $(seq 1 40); do
    curl -s -m 1 "http://127.0.0.1:$SERVE_PORT/metrics" | grep -q '^gpu_vram_exporter_up 0' && break
    sleep 0.05
done
code=$(curl -s -m 1 -o "$TMP/hung.txt" -w '%{http_code}' "http://127.0.0.1:$SERVE_PORT/metrics")
expect_eq "NVML hanging: /metrics still answers at once" 200 "$code"
expect_contains "with up 0" $'\ngpu_vram_exporter_up 0\n' "$(cat "$TMP/hung.txt")"
check "and no device or pod series" absent '^gpu_(pod_)?memory' "$(cat "$TMP/hung.txt")"
expect_eq "/healthz too" 200 "$(curl -s -m 1 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$SERVE_PORT/healthz")"
expect_contains "it says why" "an NVML call has not returned" "$(cat "$TMP/exporter.log")"
state "gpu 0 GPU-0aaa 16106127360 8589934592 Tesla T4" "proc 0 101 $GIB compute"
for _ in $(seq 1 100); do metrics | grep -q '^gpu_vram_exporter_up 1' && break; sleep 0.1; done
expect_contains "when the call returns: up 1 with figures" \
    "gpu_pod_memory_used_bytes{$L,container=\"server\",gpu=\"0\",uuid=\"GPU-0aaa\"} $GIB" "$(metrics)"

kill -TERM "$EXP_PID"
wait "$EXP_PID"
expect_eq "SIGTERM: exit 0" 0 "$?"

# Start-up refusals name the setting.
out=$(env -u NODE_NAME "$GVW_BINARY" exporter 2>&1); rc=$?
expect_eq "NODE_NAME missing stops start-up" 2 "$rc"
expect_contains "naming it" "NODE_NAME: required" "$out"
out=$(NODE_NAME=n POLL_INTERVAL=soon "$GVW_BINARY" exporter 2>&1); rc=$?
expect_eq "a bad POLL_INTERVAL stops start-up" 2 "$rc"
expect_contains "naming it" "POLL_INTERVAL: 'soon' is not a duration" "$out"
out=$(NODE_NAME=n BUDGET_SOURCES=hami,gpu "$GVW_BINARY" exporter 2>&1); rc=$?
expect_eq "a bad BUDGET_SOURCES stops the exporter's start-up" 2 "$rc"
expect_contains "naming it" "BUDGET_SOURCES: 'gpu' is not a budget source" "$out"

# No NVML library at all: still serves, up 0.
env NODE_NAME=n NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 PROC_ROOT="$TMP/proc" \
    KUBE_API_URL= EXPORTER_LISTEN_ADDR=127.0.0.1:0 "$GVW_BINARY" exporter 2>"$TMP/exp2.log" &
EXP_PID=$!
PIDS+=("$EXP_PID")
SERVE_PORT=
for _ in $(seq 1 100); do
    SERVE_PORT=$(sed -n 's/.*"msg":"exporter listening".*"port":"\([0-9]*\)".*/\1/p' "$TMP/exp2.log")
    [ -n "$SERVE_PORT" ] && break
    sleep 0.05
done
M=$(metrics)
expect_contains "without the library: up 0" $'\ngpu_vram_exporter_up 0\n' "$M"
expect_contains "and why is logged" "cannot open shared object file" "$(cat "$TMP/exp2.log")"
kill -INT "$EXP_PID"
wait "$EXP_PID"
expect_eq "SIGINT: exit 0" 0 "$?"
finish
