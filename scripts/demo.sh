#!/usr/bin/env bash
# demo.sh -- the README's demo command: replays the 2026-06-02 incident end to end
# on this machine, narrated. A simulated GPU node read by the real node exporter
# (through a stub NVML library), Debian's real Prometheus and
# Alertmanager with the shipped rules, and gpu-vram-watchdog enforcing; it ends by
# printing what the audit recorded. Everything runs on 127.0.0.1 and is stopped after.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
echo "==> building gpu-vram-watchdog, the GPU-node simulator and the stub NVML (build/)"
cmake -S . -B build >/dev/null
cmake --build build -j"$(nproc)" --target gpu-vram-watchdog gvw-sim gvw-stub-nvml >/dev/null

cat <<'TXT'

==> The 2026-06-02 incident, replayed

A time-sliced GPU has no memory isolation. Five tenants share a 15360 MiB card,
each with a declared budget (viktorbarzin.me/gpumem): immich-ml 3000, llama-swap
5000, frigate 2000, immich-server 1800, portal-stt 1500. On 2026-06-02 immich-ml's
onnxruntime arena grew from ~2 GB to 10.7 GiB and starved the LLM for hours.
Here the same growth plays out in about 20 seconds.
TXT
GVW_BINARY="$PWD/build/gpu-vram-watchdog" GVW_SIM="$PWD/build/gvw-sim" \
    GVW_STUB_NVML="$PWD/build/stub-nvml/libnvidia-ml.so.1" \
    GVW_SOURCE_DIR="$PWD" GVW_TEST_DATA="$PWD/tests/data" E2E_NARRATE=1 \
    bash tests/e2e/test_incident.sh
