#!/usr/bin/env bash
# test_exporter_nvml.sh -- the exporter against an NVML that lies (SPEC "Hostile input":
# counts never trusted beyond the buffer given, sums saturate, never wrap; the exposition
# stays valid UTF-8 whatever NVML names a GPU). The stub NVML's GVW_STUB_NVML_EVIL modes:
# a process count past the buffer, SUCCESS on the size query, 2^63 bytes a process,
# invalid UTF-8 in names. Each run: the exporter stays up, /metrics passes
# `promtool check metrics`, `exporter --once --format json` is JSON; then the receiver
# reads a saturated series as impossible.
. "$(dirname "$0")/../lib/harness.sh"
GVW_STUB_NVML=${GVW_STUB_NVML:?the stub libnvidia-ml.so.1}
GVW_FAKE_KUBE=${GVW_FAKE_KUBE:?the fake API server}
GVW_FAULTKIT=${GVW_FAULTKIT:?gvw-faultkit}
command -v promtool >/dev/null || { fail "promtool" "missing (Debian package: prometheus)"; finish; exit 1; }
GIB=1073741824
UID_A=0b3c7f52-1d5e-4a58-9c1e-2f4b7d8e9a01
CID=$(printf '%064d' 0 | tr 0 a)
for p in 101 102 103; do
    mkdir -p "$TMP/proc/$p"
    printf '0::/kubepods/burstable/pod%s/%s\n' "$UID_A" "$CID" >"$TMP/proc/$p/cgroup"
done
mkdir -p "$TMP/proc/401"
echo "0::/system.slice/ollama.service" >"$TMP/proc/401/cgroup"
cat >"$TMP/pods.json" <<JSON
{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"llm-0","namespace":"ml","uid":"$UID_A"},
 "status":{"phase":"Running","containerStatuses":[{"name":"server","containerID":"containerd://$CID"}]}}]}
JSON
"$GVW_FAKE_KUBE" "$TMP/pods.json" "$TMP/kube.log" >"$TMP/kube.port" &
PIDS+=($!)
for _ in $(seq 1 50); do [ -s "$TMP/kube.port" ] && break; sleep 0.05; done
export NODE_NAME=gpu-node-1 NVML_LIBRARY="$GVW_STUB_NVML" GVW_STUB_NVML_STATE="$TMP/nvml.state"
export PROC_ROOT="$TMP/proc" KUBE_API_URL="http://127.0.0.1:$(awk '{print $2}' "$TMP/kube.port")"
export KUBE_TOKEN_FILE= KUBE_CA_FILE= EXPORTER_LISTEN_ADDR=127.0.0.1:0 POLL_INTERVAL=200ms
state() { printf '%s\n' "$@" >"$TMP/state.tmp" && mv "$TMP/state.tmp" "$TMP/nvml.state"; }
SERIES='gpu_pod_memory_used_bytes{node="gpu-node-1",namespace="ml",pod="llm-0",container="server",gpu="0"'

# run_exporter EVIL: starts the exporter with GVW_STUB_NVML_EVIL=EVIL, waits for llm-0's
# series; sets EXP_PID and EXP_PORT, and M (the /metrics text).
run_exporter() {
    local log="$TMP/exporter-$1.log"
    GVW_STUB_NVML_EVIL=$1 "$GVW_BINARY" exporter 2>"$log" &
    EXP_PID=$!
    PIDS+=("$EXP_PID")
    EXP_PORT=
    for _ in $(seq 1 100); do
        EXP_PORT=$(sed -n 's/.*"msg":"exporter listening".*"port":"\([0-9]*\)".*/\1/p' "$log")
        [ -n "$EXP_PORT" ] && break
        sleep 0.05
    done
    M=
    for _ in $(seq 1 100); do
        M=$(curl -s "http://127.0.0.1:$EXP_PORT/metrics")
        case "$M" in *"$SERIES"*) break ;; esac
        sleep 0.05
    done
    printf '%s\n' "$M" >"$TMP/metrics-$1.txt"
}
stop_exporter() { # stop_exporter EVIL: it must still be alive (no crash), then stop it
    expect_eq "$1: the exporter is still running" 1 "$(kill -0 "$EXP_PID" 2>/dev/null && echo 1)"
    kill "$EXP_PID" 2>/dev/null
    wait "$EXP_PID" 2>/dev/null
    if grep -q 'ERROR: AddressSanitizer\|runtime error' "$TMP/exporter-$1.log"; then
        fail "$1: no sanitizer report" "$(grep -m3 'ERROR\|runtime error' "$TMP/exporter-$1.log")"
    fi
}
promtool_ok() { # promtool_ok NAME FILE
    if promtool check metrics <"$2" >"$TMP/promtool.out" 2>&1; then pass "$1: promtool check metrics"; else
        fail "$1: promtool check metrics" "$(head -c 400 "$TMP/promtool.out")"; fi
}
once_json() { GVW_STUB_NVML_EVIL=$1 "$GVW_BINARY" exporter --once --format json 2>"$TMP/once.err"; }

# --- sums saturate, never wrap: 2^63 + 2^63 + 5 GiB in one container ---------------
state "gpu 0 GPU-0aaa 16106127360 6442450944 Tesla T4" \
    "proc 0 101 9223372036854775808 compute" "proc 0 102 9223372036854775808 compute" \
    "proc 0 103 $((5 * GIB)) compute" "proc 0 401 $GIB compute"
run_exporter none
expect_contains "saturated: the series is UINT64_MAX, not 5 GiB" "$SERIES,uuid=\"GPU-0aaa\"} 1.8446744073709552e+19" "$M"
expect_contains "saturated: unattributed stays 0, never wraps" \
    'gpu_memory_unattributed_bytes{node="gpu-node-1",gpu="0",uuid="GPU-0aaa"} 0' "$M"
promtool_ok saturated "$TMP/metrics-none.txt"
stop_exporter none
out=$(once_json none)
expect_eq "saturated: --once --format json says pods_bytes past 2^64 - 2, never negative" \
    "true true" "$(printf '%s' "$out" | jq -r '.gpus[0] | "\(.pods_bytes > 1.8e19) \([.processes[].bytes] | all(. >= 0))"')"

# --- the lies, one at a time, then all together -------------------------------------
state "gpu 0 GPU-0aaa 16106127360 6442450944 Tesla T4" \
    "proc 0 101 $((4 * GIB)) compute" "proc 0 102 $GIB graphics" "proc 0 401 $GIB both"
for evil in size-success overcount; do
    run_exporter "$evil"
    expect_contains "$evil: llm-0's processes are read right (4 + 1 GiB)" \
        "$SERIES,uuid=\"GPU-0aaa\"} $((5 * GIB))" "$M"
    expect_contains "$evil: the exporter is up" $'\ngpu_vram_exporter_up 1\n' "$M"
    promtool_ok "$evil" "$TMP/metrics-$evil.txt"
    stop_exporter "$evil"
    out=$(once_json "$evil")
    expect_eq "$evil: --once lists the 3 processes, none made up" "101 102 401" \
        "$(printf '%s' "$out" | jq -r '[.gpus[0].processes[].pid] | sort | map(tostring) | join(" ")')"
done

run_exporter badname
FFFD=$'\xef\xbf\xbd'
expect_contains "badname: the model label holds U+FFFD for each bad byte, escapes intact" \
    "model=\"${FFFD}Tesla T4 ${FFFD}${FFFD}${FFFD}${FFFD}${FFFD}${FFFD} \\\"q\\\" b\\\\s\\nl ${FFFD}${FFFD}\"" "$M"
expect_contains "badname: llm-0's series is there, under the cleaned UUID" \
    "$SERIES,uuid=\"${FFFD}GPU-0aaa" "$M"
promtool_ok badname "$TMP/metrics-badname.txt"
stop_exporter badname
out=$(once_json badname); rc=$?
expect_eq "badname: --once --format json exits 0 (was: out of memory)" "0 " "$rc $(cat "$TMP/once.err")"
expect_eq "badname: its model is the cleaned name" \
    "${FFFD}Tesla T4 ${FFFD}${FFFD}${FFFD}${FFFD}${FFFD}${FFFD} \"q\" b\\s"$'\n'"l ${FFFD}${FFFD}" \
    "$(printf '%s' "$out" | jq -r '.gpus[0].model')"

run_exporter all
expect_contains "all: the exporter is up" $'\ngpu_vram_exporter_up 1\n' "$M"
expect_contains "all: llm-0's 2 x 2^63 saturate" "} 1.8446744073709552e+19" \
    "$(printf '%s\n' "$M" | grep '^gpu_pod_memory_used_bytes')"
promtool_ok all "$TMP/metrics-all.txt"
stop_exporter all
out=$(once_json all); rc=$?
expect_eq "all: --once --format json exits 0 with 3 processes" "0 3" \
    "$rc $(printf '%s' "$out" | jq -r '.gpus[0].processes | length')"

# --- a node of a T4 and an H100 as real cards report them --------------------------
# The stub's "card" records: NVML's names and totals, the driver's reserve, and each
# process reported with its CUDA context (500 MiB): used is more than the processes.
MIB=1048576
state "card 0 GPU-t4 T4" "card 1 GPU-h100 H100" \
    "proc 0 101 $((4 * GIB)) compute" "proc 0 401 $GIB compute" "proc 1 102 $((20 * GIB)) both"
run_exporter none-cards
D0='node="gpu-node-1",gpu="0",uuid="GPU-t4"' D1='node="gpu-node-1",gpu="1",uuid="GPU-h100"'
expect_contains "cards: the T4's total and name" \
    "gpu_memory_total_bytes{$D0,model=\"Tesla T4\"} $((15360 * MIB))" "$M"
expect_contains "cards: the H100's total and name" \
    "gpu_memory_total_bytes{$D1,model=\"NVIDIA H100 80GB HBM3\"} $((81559 * MIB))" "$M"
expect_contains "cards: T4 used = reserve 300 + (4 GiB + context) + host (1 GiB + context)" \
    "gpu_memory_used_bytes{$D0,model=\"Tesla T4\"} $(((300 + 4596 + 1524) * MIB))" "$M"
expect_contains "cards: T4 free = total - used" \
    "gpu_memory_free_bytes{$D0,model=\"Tesla T4\"} $(((15360 - 6420) * MIB))" "$M"
expect_contains "cards: llm-0 on the T4 is charged its context" "$SERIES,uuid=\"GPU-t4\"} $((4596 * MIB))" "$M"
expect_contains "cards: T4 unattributed = the driver's reserve + the host process" \
    "gpu_memory_unattributed_bytes{$D0} $(((300 + 1524) * MIB))" "$M"
expect_contains "cards: H100 unattributed = the driver's reserve alone" \
    "gpu_memory_unattributed_bytes{$D1} $((480 * MIB))" "$M"
promtool_ok cards "$TMP/metrics-none-cards.txt"
stop_exporter none-cards
out=$(once_json none)
expect_eq "cards: --once tells the memory no process holds (the reserve) per card" \
    "$((300 * MIB)) $((480 * MIB))" \
    "$(printf '%s' "$out" | jq -r '[.gpus[].no_process_bytes] | map(tostring) | join(" ")')"

# --- the receiver reads a saturated series as impossible ----------------------------
cat >"$TMP/prom.json" <<'JSON'
{"status":"success","data":{"resultType":"vector","result":[
 {"metric":{"namespace":"ml","pod":"llm-0"},"value":[1767225600,"1.8446744073709552e+19"]}]}}
JSON
"$GVW_FAULTKIT" upstream reply 200 "$TMP/prom.json" >"$TMP/prom.out" 2>/dev/null &
PIDS+=($!)
wait_for 10 grep -q '^listening' "$TMP/prom.out"
out=$(PROMETHEUS_URL="http://127.0.0.1:$(sed -n 's/^listening //p' "$TMP/prom.out")" FREE_QUERY= \
    "$GVW_BINARY" check --node gpu-node-1 --format json 2>/dev/null)
expect_eq "receiver: a saturated series is skipped_telemetry" skipped_telemetry \
    "$(printf '%s' "$out" | jq -r .result)"
expect_contains "receiver: because one pod is above the GPU's total" "ml/llm-0 reports 17592186044416 MiB, more than" \
    "$(printf '%s' "$out" | jq -r '.error // .reason')"
finish
