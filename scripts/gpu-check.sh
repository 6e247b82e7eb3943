#!/usr/bin/env bash
# gpu-check.sh -- replays the 2026-06-02 incident on a real NVIDIA card (issue 26).
#
# Real NVML, pod cgroups made under the host's cgroup v2 tree (the systemd
# driver's kubepods.slice names the exporter parses), CUDA tenants (a tiny holder
# built with nvcc; PyTorch when nvcc is missing), a host process outside any pod,
# the node exporter, real Prometheus and Alertmanager with the shipped rules and
# route, `serve` with the shipped settings, and tests/sim's API server as the
# Kubernetes API: a watcher SIGTERMs a pod's processes when its eviction arrives.
# Prints: exporter vs nvidia-smi per pod and per device, dip -> eviction,
# eviction -> VRAM back, and `exporter --once`. Tenants are sized from the free
# figure nvidia-smi gives; the runaway never asks for more than the card has free.
#
# Needs root (cgroups). Without an NVIDIA GPU it prints a SKIPPED line and exits
# 0 (ctest shows it skipped). Binaries: GVW_BINARY, GVW_SIM (default build/),
# PROMETHEUS, ALERTMANAGER (default: on PATH), NVCC (default nvcc, then
# /usr/local/cuda/bin/nvcc). scripts/gpu-bundle.sh gathers them for a bare box.
set -uo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD

skip() { echo "gpu-check: SKIPPED: $*"; exit 0; }
die() { echo "gpu-check: FAILED: $*" >&2; exit 1; }

command -v nvidia-smi >/dev/null || skip "no NVIDIA GPU (nvidia-smi not found)"
nvidia-smi -L 2>/dev/null | grep -q '^GPU 0' || skip "no NVIDIA GPU (nvidia-smi lists none)"
[ "$(id -u)" = 0 ] || skip "needs root (it makes pod cgroups under /sys/fs/cgroup)"

GVW_BINARY=${GVW_BINARY:-$SRC/build/gpu-vram-watchdog}
GVW_SIM=${GVW_SIM:-$(dirname "$GVW_BINARY")/gvw-sim}
PROMETHEUS=${PROMETHEUS:-$(command -v prometheus || true)}
ALERTMANAGER=${ALERTMANAGER:-$(command -v prometheus-alertmanager || command -v alertmanager || true)}
NVCC=${NVCC:-$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null || true)}
FLOOR=1536
# GPU_CHECK_PREDICT=true: serve decides on GPUVRAMExhaustionPredicted too (issue
# 29's real-card figure: starvation seconds with and without it).
PREDICT=${GPU_CHECK_PREDICT:-false}
case $PREDICT in true | false) ;; *) die "GPU_CHECK_PREDICT must be true or false" ;; esac
for f in "$GVW_BINARY" "$GVW_SIM" "$PROMETHEUS" "$ALERTMANAGER"; do
    [ -n "$f" ] && [ -x "$f" ] || die "missing binary '$f' (set GVW_BINARY, GVW_SIM, PROMETHEUS, ALERTMANAGER)"
done
for t in curl jq; do command -v $t >/dev/null || die "$t is needed"; done

TMP=$(mktemp -d /tmp/gvw-gpu-check.XXXXXX)
PIDS=() CGROUPS=()
cleanup() {
    local p c
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    for c in "${CGROUPS[@]}"; do rmdir "$c" 2>/dev/null; done
    rm -rf "$TMP"
}
trap cleanup EXIT
now() { date +%s.%N; }
smi() { nvidia-smi -i 0 --query-gpu="$1" --format=csv,noheader,nounits | tr -d ' '; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo $((20000 + RANDOM % 20000)); }

echo "gpu-check: $(nvidia-smi -i 0 --query-gpu=name,driver_version,memory.total --format=csv,noheader)"
FREE0=$(smi memory.free) TOTAL=$(smi memory.total) UUID=$(smi uuid)
echo "gpu-check: free ${FREE0} of ${TOTAL} MiB before anything starts"
[ "$FREE0" -ge 6144 ] || die "needs at least 6144 MiB free, nvidia-smi says $FREE0"

# --- the tenant: holds N MiB, grows by up to M MiB/s after D s, never past what
# leaves LEAVE MiB free (cudaMemGetInfo), until SIGTERM.
HOLDER=
if [ -n "$NVCC" ]; then
    cat >"$TMP/holder.cu" <<'CU'
// holder.cu -- a CUDA tenant: cudaMalloc N MiB, then M MiB/s after D s, never below LEAVE MiB free.
#include <cuda_runtime.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static volatile sig_atomic_t stop;
static void on_term(int s) { (void)s; stop = 1; }
int main(int argc, char **argv) {
    size_t n = argc > 1 ? strtoul(argv[1], 0, 10) : 0, m = argc > 2 ? strtoul(argv[2], 0, 10) : 0;
    unsigned d = argc > 3 ? (unsigned)atoi(argv[3]) : 0;
    size_t leave = argc > 4 ? strtoul(argv[4], 0, 10) : 1024, fr, tot, held = 0, step;
    void *p;
    signal(SIGTERM, on_term);
    cudaFree(0); /* the context first: what a tenant costs before its first byte */
    if (n > 0 && cudaMalloc(&p, n << 20) == cudaSuccess) { cudaMemset(p, 1, n << 20); held = n; }
    printf("ready %zu\n", held); fflush(stdout);
    for (unsigned t = 0; !stop; t++) {
        sleep(1);
        if (m == 0 || t < d || cudaMemGetInfo(&fr, &tot) != cudaSuccess || (fr >> 20) < leave + 16) continue;
        step = (fr >> 20) - leave < m ? (fr >> 20) - leave : m; /* never more than is free */
        if (cudaMalloc(&p, step << 20) == cudaSuccess) { cudaMemset(p, 1, step << 20); held += step; }
    }
    return 0; /* exit frees everything, as a recycled pod's does */
}
CU
    "$NVCC" -O2 -o "$TMP/holder" "$TMP/holder.cu" >"$TMP/nvcc.log" 2>&1 && HOLDER="$TMP/holder"
fi
if [ -z "$HOLDER" ]; then
    python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null ||
        die "no nvcc and no PyTorch with CUDA to build a tenant"
    cat >"$TMP/holder.py" <<'PY'
# holder.py -- the PyTorch fallback of holder.cu (same arguments)
import signal, sys, time, torch
# Missing arguments take their own defaults (N M D LEAVE = 0 0 0 1024).
n, m, d, leave = (int(a) for a in (sys.argv[1:5] + ["0", "0", "0", "1024"][len(sys.argv[1:5]):]))
stop = []
signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
torch.cuda.init(); torch.zeros(1, device="cuda")
held = [torch.ones(n << 18, dtype=torch.float32, device="cuda")] if n else []
print("ready", n, flush=True); t = 0
while not stop:
    time.sleep(1); t += 1
    room = (torch.cuda.mem_get_info()[0] >> 20) - leave  # never more than is free
    if m and t > d and room >= 16:
        held.append(torch.ones(min(m, room) << 18, dtype=torch.float32, device="cuda"))
PY
    HOLDER="python3 $TMP/holder.py"
fi
echo "gpu-check: tenant: $HOLDER"

# start_holder NAME ARGS... -- starts a tenant; its PID in HPID once it holds its memory.
start_holder() {
    local name=$1
    shift
    $HOLDER "$@" >"$TMP/$name.out" 2>&1 &
    HPID=$!
    PIDS+=("$HPID")
    for _ in $(seq 1 100); do grep -q '^ready' "$TMP/$name.out" && return 0; sleep 0.2; done
    die "tenant $name did not start: $(tail -3 "$TMP/$name.out")"
}

# --- sizes from the free figure: two steady tenants, a runaway, a host process
UNIT=$((FREE0 / 10))
A=$UNIT B=$UNIT R0=$UNIT HOSTMIB=1024
GROW=$(((FREE0 / 40) > 64 ? FREE0 / 40 : 64)) # ~25 s from the start to the floor
LEAVE=$((FLOOR / 3))                           # the runaway stops with ~500 MiB free
NODE=gpu-check-node
echo "gpu-check: sizes (MiB): tenants $A and $B, runaway $R0 + $GROW/s, host $HOSTMIB"

start_holder host "$HOSTMIB" # outside any pod: stays in this shell's cgroup
HOST_PID=$HPID

# --- the API server: gvw-sim with the three pods (their memory is the real card's)
UID_A=0a1b2c3d-0000-4000-8000-00000000000a UID_B=0a1b2c3d-0000-4000-8000-00000000000b
UID_R=0a1b2c3d-0000-4000-8000-00000000000c
ctx=600 # a CUDA context is ~300-500 MiB: budgets leave room for it
cat >"$TMP/scenario.json" <<JSON
{"node": {"name": "$NODE"}, "gpus": [{"total_mib": $TOTAL}], "pods": [
 {"namespace": "llm", "name": "llama-swap-6b8f7c9d5-q4w7n", "uid": "$UID_A", "budget": $((A + ctx + 1024)), "respawn": false},
 {"namespace": "frigate", "name": "frigate-5f6d8c7b9-h2m5t", "uid": "$UID_B", "budget": $((B + ctx + 1024)), "respawn": false},
 {"namespace": "immich", "name": "immich-ml-7d9c6b5f4d-x8k2p", "uid": "$UID_R", "budget": $((R0 + ctx + 512)), "respawn": false}]}
JSON
"$GVW_SIM" --scenario "$TMP/scenario.json" --listen 127.0.0.1:0 >"$TMP/sim.out" 2>"$TMP/sim.log" &
PIDS+=($!)
for _ in $(seq 1 50); do grep -q '^listening' "$TMP/sim.out" && break; sleep 0.1; done
SIM=http://$(sed -n 's/^listening //p' "$TMP/sim.out")
[ "$SIM" != http:// ] || die "gvw-sim did not start: $(cat "$TMP/sim.log")"

# --- pod cgroups: the systemd driver's names, containerd's scope per container
CGROOT=/sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice
PROC_ROOT=/proc
mkdir -p "$CGROOT" 2>/dev/null && [ -w "$CGROOT" ] || {
    echo "gpu-check: NOTE: cannot make cgroups under /sys/fs/cgroup; using a PROC_ROOT copy with the same cgroup lines"
    PROC_ROOT=$TMP/proc CGROOT=
}
declare -A POD_PID
# place NS NAME UID PID -- puts PID in the pod's container cgroup.
place() {
    local cid dir
    cid=$(curl -s "$SIM/api/v1/namespaces/$1/pods/$2" | jq -r '.status.containerStatuses[0].containerID' | sed 's|.*://||')
    [ ${#cid} = 64 ] || die "no container ID for $1/$2"
    if [ -n "$CGROOT" ]; then
        dir=$CGROOT/kubepods-burstable-pod${3//-/_}.slice
        mkdir -p "$dir/cri-containerd-$cid.scope" && echo "$4" >"$dir/cri-containerd-$cid.scope/cgroup.procs" ||
            die "cannot move $4 into $dir"
        CGROUPS=("$dir/cri-containerd-$cid.scope" "$dir" "${CGROUPS[@]}")
    fi
    POD_PID[$1/$2]=$4
}
start_holder a "$A"
place llm llama-swap-6b8f7c9d5-q4w7n "$UID_A" "$HPID"
start_holder b "$B"
place frigate frigate-5f6d8c7b9-h2m5t "$UID_B" "$HPID"
start_holder r "$R0" "$GROW" 40 "$LEAVE" # grows from t=40 s, once the stack is settled
place immich immich-ml-7d9c6b5f4d-x8k2p "$UID_R" "$HPID"
RUNAWAY=$HPID
if [ "$PROC_ROOT" != /proc ]; then
    for p in "${POD_PID[@]}" "$HOST_PID"; do
        mkdir -p "$PROC_ROOT/$p"
        key=$(for k in "${!POD_PID[@]}"; do [ "${POD_PID[$k]}" = "$p" ] && echo "$k"; done)
        case $key in
        llm/*) u=$UID_A ;; frigate/*) u=$UID_B ;; immich/*) u=$UID_R ;; *) u= ;;
        esac
        if [ -n "$u" ]; then
            cid=$(curl -s "$SIM/api/v1/namespaces/${key%%/*}/pods/${key#*/}" | jq -r '.status.containerStatuses[0].containerID' | sed 's|.*://||')
            echo "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${u//-/_}.slice/cri-containerd-$cid.scope" >"$PROC_ROOT/$p/cgroup"
        else
            cp "/proc/$p/cgroup" "$PROC_ROOT/$p/cgroup"
        fi
    done
fi

# --- exporter, Prometheus (shipped rules), Alertmanager (shipped route), serve
EXP_PORT=$(free_port)
env NODE_NAME=$NODE KUBE_API_URL="$SIM" PROC_ROOT="$PROC_ROOT" EXPORTER_LISTEN_ADDR=127.0.0.1:$EXP_PORT \
    "$GVW_BINARY" exporter 2>"$TMP/exporter.log" &
PIDS+=($!)
printf 'gpu-check-%s\n' "$RANDOM$RANDOM" >"$TMP/token"
SERVE_PORT=$(free_port) PROM_PORT=$(free_port) AM_PORT=$(free_port)
sed -e "s|url: http://.*:9808/webhook|url: http://127.0.0.1:$SERVE_PORT/webhook|" \
    -e "s|credentials_file: .*|credentials_file: $TMP/token|" "$SRC/deploy/alertmanager/alertmanager.yml" >"$TMP/am.yml"
"$ALERTMANAGER" --config.file="$TMP/am.yml" --storage.path="$TMP/am" --web.listen-address=127.0.0.1:$AM_PORT \
    --cluster.listen-address= >"$TMP/am.log" 2>&1 &
PIDS+=($!)
cat >"$TMP/prom.yml" <<YML
global: {scrape_interval: 5s, evaluation_interval: 5s}
rule_files: [$SRC/rules/gpu-vram-watchdog.rules.yml]
alerting: {alertmanagers: [{static_configs: [{targets: ["127.0.0.1:$AM_PORT"]}]}]}
scrape_configs:
  - {job_name: gpu-vram-watchdog-exporter, honor_labels: true, static_configs: [{targets: ["127.0.0.1:$EXP_PORT"]}]}
  - {job_name: gpu-vram-watchdog, static_configs: [{targets: ["127.0.0.1:$SERVE_PORT"]}]}
  # Not job="prometheus": the shipped GPUVRAMLow mutes itself for 300 s after that
  # job's server starts (its start-up guard), longer than this check may run.
  - {job_name: prometheus-self, static_configs: [{targets: ["127.0.0.1:$PROM_PORT"]}]}
YML
"$PROMETHEUS" --config.file="$TMP/prom.yml" --storage.tsdb.path="$TMP/prom" \
    --web.listen-address=127.0.0.1:$PROM_PORT >"$TMP/prom.log" 2>&1 &
PIDS+=($!)
DB=$TMP/audit.db
env -u GPU_TOTAL_MIB -u FREE_QUERY -u GPUMEM_CAPACITY_MIB LISTEN_ADDR=127.0.0.1:$SERVE_PORT \
    DRY_RUN=false KUBE_API_URL="$SIM" PROMETHEUS_URL=http://127.0.0.1:$PROM_PORT \
    WEBHOOK_TOKEN_FILE="$TMP/token" AUDIT_DB="$DB" \
    USED_QUERY='sum by (namespace, pod, uuid) (gpu_pod_memory_used_bytes{node="$node"})' \
    PREDICT="$PREDICT" "$GVW_BINARY" serve 2>"$TMP/serve.log" &
PIDS+=($!)
sleep 12 # two scrapes of everything

# --- figures: exporter vs nvidia-smi, per pod and per device
M=$(curl -s "http://127.0.0.1:$EXP_PORT/metrics")
mib() { awk '{ s += $NF } END { printf "%.1f", s / 1048576 }'; }
echo
echo "== exporter vs nvidia-smi (MiB), before the runaway grows"
smi_apps=$(nvidia-smi -i 0 --query-compute-apps=pid,used_memory --format=csv,noheader,nounits | tr -d ' ')
for k in "${!POD_PID[@]}"; do
    e=$(printf '%s\n' "$M" | grep "^gpu_pod_memory_used_bytes{" | grep "pod=\"${k#*/}\"" | mib)
    s=$(printf '%s\n' "$smi_apps" | awk -F, -v p="${POD_PID[$k]}" '$1 == p { print $2 }')
    printf '  pod %-40s exporter %9s   nvidia-smi %7s\n' "$k" "$e" "${s:-none}"
done
printf '  %-44s exporter %9s   nvidia-smi %7s\n' "device free" "$(printf '%s\n' "$M" | grep '^gpu_memory_free_bytes{' | mib)" "$(smi memory.free)"
printf '  %-44s exporter %9s   nvidia-smi %7s\n' "device used" "$(printf '%s\n' "$M" | grep '^gpu_memory_used_bytes{' | mib)" "$(smi memory.used)"
printf '  %-44s exporter %9s   (host process %s: %s MiB)\n' "unattributed" \
    "$(printf '%s\n' "$M" | grep '^gpu_memory_unattributed_bytes{' | mib)" "$HOST_PID" \
    "$(printf '%s\n' "$smi_apps" | awk -F, -v p="$HOST_PID" '$1 == p { print $2 }')"
echo
echo "== exporter --once"
env NODE_NAME=$NODE KUBE_API_URL="$SIM" PROC_ROOT="$PROC_ROOT" "$GVW_BINARY" exporter --once 2>&1 ||
    echo "  (exporter --once is not in this build)"

# --- the dip, the eviction (the watcher SIGTERMs the pod), VRAM back
echo
echo "== the runaway grows by $GROW MiB/s"
T_DIP= T_EVICT= T_BACK= key= GONE_PID=
deadline=$(($(date +%s) + 240))
while [ "$(date +%s)" -lt "$deadline" ]; do
    f=$(smi memory.free)
    [ -z "$T_DIP" ] && [ "$f" -lt "$FLOOR" ] && T_DIP=$(now) && echo "  t=$T_DIP free $f MiB < $FLOOR"
    if [ -z "$T_EVICT" ] && curl -s "$SIM/sim/events" | jq -e 'any(.[]; .path | endswith("/eviction"))' >/dev/null; then
        T_EVICT=$(now)
        path=$(curl -s "$SIM/sim/events" | jq -r '[.[] | select(.path | endswith("/eviction"))][0].path')
        key=$(echo "$path" | sed -E 's|/api/v1/namespaces/([^/]+)/pods/([^/]+)/eviction|\1/\2|')
        echo "  t=$T_EVICT eviction of $key: SIGTERM to PID ${POD_PID[$key]:-?}"
        [ -n "${POD_PID[$key]:-}" ] && kill -TERM "${POD_PID[$key]}"
        GONE_PID=${POD_PID[$key]:-}
    fi
    if [ -n "$T_EVICT" ] && [ -z "$T_BACK" ] && [ "$f" -ge "$FLOOR" ] &&
        ! nvidia-smi -i 0 --query-compute-apps=pid --format=csv,noheader | grep -qx "${GONE_PID:-x}"; then
        T_BACK=$(now)
        echo "  t=$T_BACK VRAM back: free $f MiB"
        break
    fi
    sleep 0.1
done
echo
echo "== figures (PREDICT=$PREDICT)"
[ -n "$T_DIP" ] && [ -n "$T_EVICT" ] && awk -v a="$T_DIP" -v b="$T_EVICT" 'BEGIN { printf "  dip -> eviction        %.2f s\n", b - a }'
[ -n "$T_EVICT" ] && [ -n "$T_BACK" ] && awk -v a="$T_EVICT" -v b="$T_BACK" 'BEGIN { printf "  eviction -> VRAM back  %.2f s\n", b - a }'
# Starvation: free below the floor until VRAM is back (0 when the eviction
# came first: a prediction that acted in time).
if [ -n "$T_BACK" ]; then
    if [ -n "$T_DIP" ]; then
        awk -v a="$T_DIP" -v b="$T_BACK" 'BEGIN { printf "  starvation             %.2f s\n", b - a }'
    else
        echo "  starvation             0 s (evicted before free reached the floor)"
    fi
fi
echo "  evictions: $(curl -s "$SIM/sim/events" | jq -c '[.[] | select(.path | endswith("/eviction")) | .path]')"
"$GVW_BINARY" audit --db "$DB" --format json --limit 5 |
    jq -c '.[] | {id, result, free_source, free_mib, victim: (.victim.pod // null), reason}'
[ -n "$T_EVICT" ] && [ "$key" = immich/immich-ml-7d9c6b5f4d-x8k2p ] || die "the runaway was not the one evicted (see above)"
echo "gpu-check: PASSED"
