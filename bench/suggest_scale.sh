#!/usr/bin/env bash
# suggest_scale.sh -- the query cost of `budgets --suggest`: PODS pods on one node, DAYS days
# of 1-minute samples backfilled into a real Prometheus with promtool, then one run of
# `budgets --suggest --window DAYSd --node gpu-1 --format json`: its wall time, its peak RSS,
# the range queries and bytes it read (its own log line), and the samples Prometheus read
# (prometheus_engine_query_samples_total before and after, and one stats=all query over the
# whole window for comparison).
# usage: bench/suggest_scale.sh [PODS=500] [DAYS=7] [BINARY=build/gpu-vram-watchdog]
set -eu
PODS=${1:-500}
DAYS=${2:-7}
BIN=$(realpath "${3:-build/gpu-vram-watchdog}")
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d /tmp/gvw-suggest-bench.XXXXXX)
PIDS=()
trap 'for p in "${PIDS[@]:-}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$T"' EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

end=$(( $(date +%s) / 60 * 60 ))
s0=$(date +%s.%N)
python3 "$HERE/suggest_gen.py" "$T" "$PODS" "$DAYS" "$end"
s1=$(date +%s.%N)
promtool tsdb create-blocks-from openmetrics --max-block-duration=240h "$T/metrics.om" "$T/tsdb" >/dev/null
s2=$(date +%s.%N)
rm -f "$T/metrics.om"
P=$(port)
printf 'global:\n  scrape_interval: 1h\n' >"$T/prom.yml"
prometheus --config.file="$T/prom.yml" --storage.tsdb.path="$T/tsdb" --storage.tsdb.retention.time=30d \
    --web.listen-address=127.0.0.1:$P >"$T/prom.log" 2>&1 &
PIDS+=("$!")
python3 "$HERE/../tests/fake/suggest_kube.py" "$T/api" "$T/kube.log" >"$T/kube.out" 2>&1 &
PIDS+=("$!")
for _ in $(seq 1 120); do curl -sf "http://127.0.0.1:$P/-/ready" >/dev/null && break; sleep 0.5; done
sleep 1
K=$(sed -n 's/^port //p' "$T/kube.out")
samples() { curl -s "http://127.0.0.1:$P/metrics" | awk '/^prometheus_engine_query_samples_total /{print $2}'; }
before=$(samples)
/usr/bin/time -f '%e s wall, %M KiB max RSS' -o "$T/time" env PROMETHEUS_URL=http://127.0.0.1:$P \
    KUBE_API_URL=http://127.0.0.1:$K "$BIN" budgets --suggest --window "${DAYS}d" --node gpu-1 \
    --format json >"$T/out" 2>"$T/err"
after=$(samples)
q='sum by (namespace, pod) (gpu_pod_memory_used_bytes{node="gpu-1"})'
st=$(curl -s -G "http://127.0.0.1:$P/api/v1/query_range" --data-urlencode "query=$q" \
    --data-urlencode "start=$((end - DAYS * 86400 + 60))" --data-urlencode "end=$((end - 60))" \
    --data-urlencode step=60 --data-urlencode stats=all -o "$T/full" -w '%{time_total}')
echo "pods=$PODS days=$DAYS samples_stored=$((PODS * DAYS * 1440))"
echo "generate: $(echo "$s1 - $s0" | bc) s, backfill: $(echo "$s2 - $s1" | bc) s"
echo "suggest: $(cat "$T/time")"
grep -o '"range_queries".*"elapsed_ms":"[0-9]*"' "$T/err" | sed 's/^/suggest log: /'
if [ -n "$before" ]; then
    echo "prometheus samples read by suggest: $(awk -v a="$after" -v b="$before" 'BEGIN{printf "%.0f", a-b}')"
else
    echo "prometheus samples read by suggest: no prometheus_engine_query_samples_total in this Prometheus ($(prometheus --version 2>&1 | head -1 | cut -d' ' -f3)); see stats=all below"
fi
echo "one unchunked query over the window: ${st} s, $(stat -c %s "$T/full") bytes," \
    "stats: $(jq -c '.data.stats.samples | {totalQueryableSamples, peakSamples}' "$T/full" 2>/dev/null)"
echo "workloads suggested: $(jq '[.workloads[] | select(.suggested_mib)] | length' "$T/out")"
