#!/usr/bin/env bash
# payloads.sh OUTDIR -- the webhook bodies the intake benchmark POSTs, made from the
# real Alertmanager 0.25 delivery in tests/data with the alertname changed to one
# that is not a trigger (so each request is parse + durable record, no decision).
#   OUTDIR/one.json  1 alert
#   OUTDIR/ten.json  10 alerts (distinct fingerprints and an instance label each)
set -euo pipefail
out=${1:?usage: payloads.sh OUTDIR}
src="$(cd "$(dirname "$0")/.." && pwd)/tests/data/alertmanager-0.25-webhook.json"
mkdir -p "$out"
rename='(.. | objects | select(has("alertname")) | .alertname) |= "GPUBenchNoTrigger"
        | .groupKey = "{}:{alertname=\"GPUBenchNoTrigger\"}"'
jq -c "$rename" "$src" >"$out/one.json"
jq -c "$rename"' | .alerts = [range(10) as $i | .alerts[0]
        | .labels.instance = "bench-\($i)" | .fingerprint = "cee90ef7ef51c1\($i + 10)"]' \
    "$src" >"$out/ten.json"
