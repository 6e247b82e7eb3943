#!/usr/bin/env bash
# podlist_rss.sh -- peak RSS (VmHWM) of serve (one decision) and of the exporter (two lists
# read, the first held while the second is parsed) on pod lists as large as the 32 MiB body
# cap allows (SPEC "Hostile input"): both stay under the shipped 64 Mi memory limits.
# The lists: 5,000 running pods (the most pods_json.h's POD_LIST_MAX allows) then Succeeded
# pods up to the cap; the same with names as long as POD_LIST_MAX_TEXT allows; and two that
# are refused as too large (65,000 running pods; 520,000 tiny ones).
# Needs a build without sanitizers (ASan's shadow and quarantine inflate RSS):
#   tests/fault/podlist_rss.sh [BUILD_DIR]   builds BUILD_DIR (default build-rss)
# or, from ctest, GVW_BINARY/GVW_FAULTKIT/GVW_STUB_NVML set (then nothing is built).
# Prints a figures table (BENCHMARKS.md "Pod lists at the body cap").
SRC=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "${GVW_BINARY:-}" ]; then
    BUILD=${1:-$SRC/build-rss}
    cmake -S "$SRC" -B "$BUILD" -DGVW_SANITIZE=OFF >/dev/null || exit 2
    cmake --build "$BUILD" -j"$(nproc)" --target gpu-vram-watchdog gvw-faultkit gvw-stub-nvml \
        >"$BUILD/podlist-rss-build.log" 2>&1 || { tail -20 "$BUILD/podlist-rss-build.log"; exit 2; }
    export GVW_BINARY=$BUILD/gpu-vram-watchdog GVW_FAULTKIT=$BUILD/gvw-faultkit
    export GVW_STUB_NVML=$BUILD/stub-nvml/libnvidia-ml.so.1
fi
source "$SRC/tests/lib/harness.sh"
if ldd "$GVW_BINARY" 2>/dev/null | grep -q 'libasan\|libtsan'; then
    echo "SKIP: $GVW_BINARY is sanitized: its RSS means nothing here"
    exit 77
fi
LIMIT_KIB=65536
CAP=33554432
NODE=gpu-node-1

# gen SHAPE LIVE PAD OUT: LIVE running pods (names padded by PAD bytes), then Succeeded
# ones until the body reaches the cap. SHAPE real: a ReplicaSet's pod with a budget, an
# IP and a container; tiny: metadata alone. prom OUT N PAD: a used-bytes answer for the
# first N real pods, one of them far over its budget.
gen() {
    python3 - "$@" <<'PY'
import sys
shape, live, pad, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
cap = 33554432
def item(i, phase):
    if shape == "tiny":
        return '{"metadata":{"name":"p%d","namespace":"n","uid":"u%d"},"status":{"phase":"%s"}}' % (i, i, phase)
    return ('{"metadata":{"name":"w-%07d%s","namespace":"ns-%d","uid":"00000000-0000-4000-8000-%012d",'
            '"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"w","uid":"x","controller":true}]},'
            '"spec":{"containers":[{"name":"c","resources":{"limits":{"viktorbarzin.me/gpumem":"100"}}}]},'
            '"status":{"phase":"%s","startTime":"2026-01-01T00:00:00Z","podIP":"10.0.%d.%d",'
            '"containerStatuses":[{"name":"c","containerID":"containerd://%064x"}]}}'
            % (i, "x" * pad, i % 50, i, phase, (i >> 8) & 255, i & 255, i))
with open(out, "w") as f:
    n = f.write('{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[')
    i = 0
    while True:
        s = ("," if i else "") + item(i, "Running" if i < live else "Succeeded")
        if n + len(s) + 2 > cap:
            break
        n += f.write(s)
        i += 1
    f.write("]}")
PY
}
prom() {
    python3 - "$@" <<'PY'
import json, sys
out, n, pad = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
res = [{"metric": {"namespace": "ns-%d" % (i % 50), "pod": "w-%07d%s" % (i, "x" * pad)},
        "value": [1767225600, "100000"]} for i in range(n)]
res[1]["value"][1] = "14000000000"
json.dump({"status": "success", "data": {"resultType": "vector", "result": res}}, open(out, "w"))
PY
}

stop() { kill "$1" 2>/dev/null; wait "$1" 2>/dev/null; }
hwm_kib() { awk '/^VmHWM:/ { print $2 }' "/proc/$1/status"; }
FIGURES=()
# judge NAME PROGRAM KIB DETAIL
judge() {
    FIGURES+=("$(printf '| %-52s | %-8s | %8s | %s |' "$1" "$2" "$3" "$4")")
    if [ -n "$3" ] && [ "$3" -lt "$LIMIT_KIB" ]; then pass "$2, $1: VmHWM $3 KiB < 64 MiB"; else
        fail "$2, $1: VmHWM under 64 MiB" "$3 KiB"; fi
}

# serve_case NAME PODS PROM WANT: one decision over PODS; its result must be WANT.
serve_case() {
    local name=$1 dir="$TMP/kube-$RANDOM" db="$TMP/audit-$RANDOM.db" pid port r="" hwm
    mkdir -p "$dir"
    cp "$GVW_SOURCE_DIR/tests/data/kube-nodes-gpu.json" "$dir/nodes"
    ln -s "$2" "$dir/pods-$NODE"
    python3 "$GVW_SOURCE_DIR/tests/fake/suggest_kube.py" "$dir" "$dir/kube.log" >"$dir/kube.out" &
    PIDS+=($!)
    local kpid=$!
    "$GVW_FAULTKIT" upstream reply 200 "$3" >"$dir/prom.out" 2>/dev/null &
    PIDS+=($!)
    local ppid=$!
    wait_for 10 grep -q '^port' "$dir/kube.out" && wait_for 10 grep -q '^listening' "$dir/prom.out" ||
        { fail "$name: the fakes start"; return; }
    start_serve "$dir/serve.log" WEBHOOK_AUTH=none AUDIT_DB="$db" EVENTS=false FREE_QUERY= \
        KUBE_API_URL="http://127.0.0.1:$(sed -n 's/^port //p' "$dir/kube.out")" \
        KUBE_TOKEN_FILE= KUBE_CA_FILE= GPUMEM_CAPACITY_MIB=14000 \
        PROMETHEUS_URL="http://127.0.0.1:$(sed -n 's/^listening //p' "$dir/prom.out")" ||
        { fail "$name: serve starts"; return; }
    pid=$SERVE_PID
    printf '{"version":"4","status":"firing","receiver":"w","groupKey":"{}","alerts":[{"status":"firing","labels":{"alertname":"GPUVRAMLow","node":"%s"},"annotations":{},"startsAt":"2026-06-02T10:00:00Z","endsAt":"0001-01-01T00:00:00Z","fingerprint":"f1"}]}' \
        "$NODE" >"$dir/alert.json"
    curl -s -o /dev/null -H 'Content-Type: application/json' --data-binary @"$dir/alert.json" \
        "http://127.0.0.1:$SERVE_PORT/webhook"
    for _ in $(seq 1 600); do
        r=$("$GVW_BINARY" audit --db "$db" --format json 2>/dev/null | jq -r '.[0].result // empty')
        [ -n "$r" ] && [ "$r" != in_progress ] && break
        sleep 0.2
    done
    hwm=$(hwm_kib "$pid")
    expect_eq "serve, $name: the decision is $4" "$4" "$r"
    judge "$name" serve "$hwm" "$r"
    stop "$pid"
    stop "$kpid"
    stop "$ppid"
}

# exporter_case NAME PODS: the exporter reads PODS, then again (a process of a pod the
# list lacks asks for it) while it still holds the first.
exporter_case() {
    local name=$1 dir="$TMP/exp-$RANDOM" pid hwm n
    mkdir -p "$dir/proc/101" "$dir/proc/102"
    ln -s "$2" "$dir/pods-$NODE"
    echo "0::/system.slice/ollama.service" >"$dir/proc/101/cgroup"
    printf '0::/kubepods/podb0b0b0b0-0000-4000-8000-000000000001/%064d\n' 1 >"$dir/proc/102/cgroup"
    printf 'gpu 0 GPU-0aaa 16106127360 6442450944 Tesla T4\nproc 0 101 1073741824 compute\nproc 0 102 1073741824 compute\n' \
        >"$dir/state"
    python3 "$GVW_SOURCE_DIR/tests/fake/suggest_kube.py" "$dir" "$dir/kube.log" >"$dir/kube.out" &
    PIDS+=($!)
    local kpid=$!
    wait_for 10 grep -q '^port' "$dir/kube.out" || { fail "$name: the fake starts"; return; }
    env NODE_NAME="$NODE" NVML_LIBRARY="$GVW_STUB_NVML" GVW_STUB_NVML_STATE="$dir/state" \
        PROC_ROOT="$dir/proc" KUBE_API_URL="http://127.0.0.1:$(sed -n 's/^port //p' "$dir/kube.out")" \
        KUBE_TOKEN_FILE= KUBE_CA_FILE= EXPORTER_LISTEN_ADDR=127.0.0.1:0 POLL_INTERVAL=200ms \
        GPUMEM_RESOURCE=viktorbarzin.me/gpumem "$GVW_BINARY" exporter 2>"$dir/exp.log" &
    pid=$!
    PIDS+=("$pid")
    two_lists() { [ "$(grep -c '^GET' "$dir/kube.log" 2>/dev/null)" -ge 2 ]; }
    wait_for 60 two_lists || fail "exporter, $name: the list is read twice"
    sleep 3 # the second answer parsed
    hwm=$(hwm_kib "$pid")
    n=$(grep -c 'pod list too large' "$dir/exp.log")
    judge "$name" exporter "$hwm" "$([ "$n" -gt 0 ] && echo "refused, logged" || echo read)"
    stop "$pid"
    stop "$kpid"
}

stamp "writing the pod lists (32 MiB each)"
gen real 5000 0 "$TMP/finished.json"
gen real 5000 340 "$TMP/long.json"
gen real 5000 290 "$TMP/long-exporter.json" # the exporter also keeps each container's ID
gen real 65000 0 "$TMP/many.json"
gen tiny 520000 0 "$TMP/tiny.json"
prom "$TMP/prom.json" 5000 0
prom "$TMP/prom-long.json" 5000 340
stamp "measuring"
serve_case "5,000 running + Succeeded pods to 32 MiB" "$TMP/finished.json" "$TMP/prom.json" \
    would_recycle
serve_case "5,000 running, names to the 2 MiB bound, + Succeeded" "$TMP/long.json" \
    "$TMP/prom-long.json" would_recycle
serve_case "65,000 running pods (refused: too large)" "$TMP/many.json" "$TMP/prom.json" \
    skipped_kube
serve_case "520,000 tiny running pods (refused: too large)" "$TMP/tiny.json" "$TMP/prom.json" \
    skipped_kube
exporter_case "5,000 running + Succeeded pods to 32 MiB" "$TMP/finished.json"
exporter_case "5,000 running, names to the 2 MiB bound, + Succeeded" "$TMP/long-exporter.json"
exporter_case "65,000 running pods (refused: too large)" "$TMP/many.json"
exporter_case "520,000 tiny running pods (refused: too large)" "$TMP/tiny.json"
echo "# figures: VmHWM KiB (the shipped limits are 64 Mi = 65536 KiB)"
printf '| %-52s | %-8s | %8s | %s |\n' "pod list (32 MiB body)" program VmHWM outcome
for f in "${FIGURES[@]}"; do echo "$f"; done
finish
