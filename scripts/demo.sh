#!/usr/bin/env bash
# demo.sh -- the README's demo command. Interim version: builds the daemon, starts
# `serve` in dry-run on a loopback port with an example configuration, delivers a
# real Alertmanager webhook, and shows what the audit recorded.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DGVW_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" >/dev/null

work=$(mktemp -d /tmp/gvw-demo.XXXXXX)
trap 'kill "$pid" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
head -c 24 /dev/urandom | base64 >"$work/token"

echo "==> starting gpu-vram-watchdog serve (DRY_RUN=true, example configuration)"
LISTEN_ADDR=127.0.0.1:0 WEBHOOK_TOKEN_FILE="$work/token" AUDIT_DB="$work/audit.db" \
    PROMETHEUS_URL=http://127.0.0.1:1 LOG_FORMAT=text \
    ./build/gpu-vram-watchdog serve 2>"$work/serve.log" &
pid=$!
port=
for _ in $(seq 1 100); do
    port=$(sed -n 's/.* serving .*port=\([0-9]*\).*/\1/p' "$work/serve.log" | head -n1)
    [ -n "$port" ] && break
    sleep 0.05
done
[ -n "$port" ] || { cat "$work/serve.log"; exit 1; }
echo "    listening on 127.0.0.1:$port"

echo "==> delivering a captured Alertmanager 0.25 webhook (GPUVRAMLow firing)"
curl -sS -H "Authorization: Bearer $(cat "$work/token")" -H 'Content-Type: application/json' \
    --data-binary @tests/data/alertmanager-0.25-webhook.json "http://127.0.0.1:$port/webhook"
echo
echo "==> the daemon's log"
cat "$work/serve.log"
echo "==> gpu-vram-watchdog audit alerts"
./build/gpu-vram-watchdog audit alerts --db "$work/audit.db"
