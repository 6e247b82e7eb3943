#!/usr/bin/env bash
# demo.sh -- the README's demo command: replays the 2026-06-02 incident end to end
# on this machine, narrated. A simulated GPU node read by the real node exporter
# (through a stub NVML library), Debian's real Prometheus and
# Alertmanager with the shipped rules, and gpu-vram-watchdog enforcing; it ends by
# printing what the audit recorded. A second act shows cooperative release: llama-swap
# runs away, is asked to unload its models, and is not restarted. Everything runs on
# loopback (the second act's pod IP is a 127.0.0.x address) and is stopped after,
# except the two audit databases, kept in build/demo/ to explore.
#
# GVW_DEMO_PREBUILT=1 with GVW_BINARY, GVW_SIM and GVW_STUB_NVML set skips the
# install and the build (the ctest e2e_demo runs it that way).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${GVW_DEMO_PREBUILT:-0}" = 1 ]; then
    BIN=$GVW_BINARY SIM=$GVW_SIM NVML=$GVW_STUB_NVML
else
    bash scripts/install-deps.sh
    echo "==> building gpu-vram-watchdog, the GPU-node simulator and the stub NVML (build/)"
    cmake -S . -B build -DGVW_TESTS=ON >/dev/null # the simulator and stub are test targets
    cmake --build build -j"$(nproc)" --target gpu-vram-watchdog gvw-sim gvw-stub-nvml >/dev/null
    BIN=$PWD/build/gpu-vram-watchdog SIM=$PWD/build/gvw-sim NVML=$PWD/build/stub-nvml/libnvidia-ml.so.1
fi
DEMO_DIR=${GVW_DEMO_DIR:-$PWD/build/demo}
mkdir -p "$DEMO_DIR"
rm -f "$DEMO_DIR"/incident-audit.db* "$DEMO_DIR"/release-audit.db* "$DEMO_DIR/info"

# act TEST AUDIT_DB -- one act; the assertions' "ok" lines are left out (a
# reader takes "ok - ... fails when ..." for a failure), a FAIL line is not.
act() {
    GVW_BINARY="$BIN" GVW_SIM="$SIM" GVW_STUB_NVML="$NVML" \
        GVW_SOURCE_DIR="$PWD" GVW_TEST_DATA="$PWD/tests/data" E2E_NARRATE=1 \
        GVW_AUDIT_DB="$2" GVW_DEMO_INFO="$DEMO_DIR/info" \
        bash "$1" 2>&1 | grep -v '^ok   - '
}

cat <<'TXT'

==> The 2026-06-02 incident, replayed

A time-sliced GPU has no memory isolation. Five tenants share a 15360 MiB card,
each with a declared budget (viktorbarzin.me/gpumem): immich-ml 3000, llama-swap
5000, frigate 2000, immich-server 1800, portal-stt 1500. On 2026-06-02 immich-ml's
onnxruntime arena grew from ~2 GB to 10.7 GiB and starved the LLM for hours.
Here the same growth plays out in about 20 seconds, on the card as it really is:
its driver keeps 300 MiB, every CUDA process holds a 300 MiB context, and a host
process outside Kubernetes (jellyfin's ffmpeg) holds 301 MiB. The exporter shows
that unattributed memory (gpu_memory_unattributed_bytes), and free VRAM on the
device is that much lower than 15360 - sum(pods).
TXT
act tests/e2e/test_incident.sh "$DEMO_DIR/incident-audit.db"

cat <<'TXT'

==> Second act: a tenant that can let go

Recycling a pod throws away everything it holds. llama-swap can do better: its own
route POST /api/models/unload stops the models and frees their VRAM while the pod
keeps running. Its Deployment says so with the annotation
gpu-vram-watchdog/release: "8080/api/models/unload" (deploy/examples/llama-swap.yaml).
This time llama-swap is the one running past its budget. Before recycling it the
watchdog asks it, on the pod's own IP, and waits up to RELEASE_WAIT for the memory.
TXT
act tests/e2e/test_release.sh "$DEMO_DIR/release-audit.db"

# The end: what is left to explore, and where.
db=$DEMO_DIR/incident-audit.db
id=$("$BIN" audit --db "$db" --format json --result recycled | jq -r '.[0].id')
prom=$(sed -n 's/^prometheus //p' "$DEMO_DIR/info" | tail -n1)
if [ -n "$prom" ] && curl -sf "http://$prom/-/ready" >/dev/null 2>&1; then
    prom_state="Prometheus: http://$prom (still running)"
else
    prom_state="Prometheus: stopped (it ran at http://${prom:-?}; the demo stops all it started)"
fi
cat <<TXT

==> The demo is over; its audit is kept

Audit database: $db
                (second act: $DEMO_DIR/release-audit.db)
$prom_state

Try next:
  $BIN audit --db $db
  $BIN audit show $id --db $db
  $BIN budgets --help    # then, against a cluster: PROMETHEUS_URL=... $BIN budgets
TXT
