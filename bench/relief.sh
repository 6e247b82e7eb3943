#!/usr/bin/env bash
# relief.sh -- time to relief (issue #19): from free VRAM crossing the floor on a
# node to the eviction reaching the API server, through every real hop.
#
#   bench/relief.sh [-n NODES] [-s SCRAPE] [-e EVAL] [-f FOR] [-g GROUP_WAIT]
#                   [-m relief|spike] [-S SPIKE_S] [-r RATE_MIB_S] [-w SPREAD_S] [-o OUT]
#
# Starts on 127.0.0.1 only, all stopped at the end: Debian's Prometheus with the
# rules of rules/gpu-vram-watchdog.rules.yml, Debian's Alertmanager with
# deploy/alertmanager/alertmanager.yml (its URL and token file pointed at the
# daemon), one `gpu-vram-watchdog exporter` per node on the stub NVML
# (tests/stub_nvml) and a fake /proc, `gpu-vram-watchdog serve` enforcing, and
# bench/relief_driver.py (the nodes' VRAM over time and a fake API server that
# records when the eviction arrives). NODES nodes (default 20) are measured at
# once: each is its own Alertmanager group (group_by alertname, node), its own
# exporter and pods, and its tenant starts growing at its own random moment in a
# SPREAD_S window (default 60 s), so each run meets the scrape and evaluation
# clocks at a random phase, as one node alone would. Nothing is time-compressed.
#
# Defaults are the shipped ones: the exporter's POLL_INTERVAL 1s, scrape 5s
# (the exporter's ServiceMonitor), the rule group's own `interval:`, the rule's
# own `for:` and the route's own group_wait. -e, -f and -g rewrite a copy of
# the rules / route (the shipped files are never changed). The defaults before
# issue #19: -s 15s -e 30s -f 1m -g 10s. The daemon runs with MAX_RECYCLES_PER_HOUR=0
# (NODES recycles in a few minutes would trip the hourly brake; it is not a hop)
# and USED_QUERY restricted to the alert's node ({node="$node"}), as any
# Prometheus holding more than one GPU node needs.
# The rule's start-up guard needs a job="prometheus" self-scrape, which this
# Prometheus does not have, so the guard is inert (it fails open, as its comment
# says) and nothing waits 5 minutes after Prometheus starts.
#
# Per node: t0 (the driver writes the first NVML state below the floor), the first
# scrape that saw it (the grower's sample in Prometheus), the evaluation that made
# GPUVRAMLow pending and the one that made it firing (ALERTS), the webhook's
# arrival (the audit DB's received_ms) and the eviction's arrival (the fake API
# server). Prints one RELIEF line per node and a table of p50/p95 per hop.
# MODE spike: the tenant jumps below the floor for SPIKE_S seconds and back; the
# bench reports how many nodes were recycled (the answer must be none when
# SPIKE_S < for - scrape - evaluation).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NODES=20 SCRAPE=5s EVAL= FOR= GW= MODE=relief SPIKE=5 RATE=256 SPREAD=60 OUT=
while getopts n:s:e:f:g:m:S:r:w:o: o; do
    case $o in
    n) NODES=$OPTARG ;; s) SCRAPE=$OPTARG ;; e) EVAL=$OPTARG ;; f) FOR=$OPTARG ;;
    g) GW=$OPTARG ;; m) MODE=$OPTARG ;; S) SPIKE=$OPTARG ;; r) RATE=$OPTARG ;;
    w) SPREAD=$OPTARG ;; o) OUT=$OPTARG ;; *) exit 2 ;;
    esac
done
BUILD=$ROOT/build-bench
BIN=$BUILD/gpu-vram-watchdog
NVML=$BUILD/stub-nvml/libnvidia-ml.so.1
if [ ! -x "$BIN" ] || [ ! -f "$NVML" ]; then
    cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DGVW_TESTS=ON >/dev/null
    cmake --build "$BUILD" -j2 --target gpu-vram-watchdog gvw-stub-nvml >/dev/null
fi
for t in prometheus prometheus-alertmanager sqlite3 jq curl python3; do
    command -v $t >/dev/null || { echo "relief.sh: needs $t (apt-get install prometheus prometheus-alertmanager sqlite3 jq curl python3)" >&2; exit 2; }
done

T=$(mktemp -d /tmp/gvw-relief.XXXXXX)
log() { printf '[relief %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
log "working in $T (kept when RELIEF_KEEP is set)"
PIDS=()
cleanup() {
    for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    [ -n "${RELIEF_KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT
log() { printf '[relief %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
used=" "
port() {
    local p
    while :; do
        p=$((20000 + RANDOM % 40000))
        case $used in *" $p "*) continue ;; esac
        (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && continue
        used="$used$p "
        echo "$p"
        return
    done
}
wait_up() { for _ in $(seq 1 200); do curl -sf -o /dev/null "$1" && return 0; sleep 0.1; done; echo "relief.sh: $1 never answered" >&2; return 1; }

P_API=$(port) P_PROM=$(port) P_AM=$(port) P_GVW=$(port)
TOKEN=relief-token-0123456789
printf '%s\n' "$TOKEN" >"$T/token"
printf 'kube-token\n' >"$T/ktoken"

# The rules, as shipped unless -f rewrites GPUVRAMLow's `for:` (-e the group's interval).
cp "$ROOT/rules/gpu-vram-watchdog.rules.yml" "$T/rules.yml"
if [ -n "$FOR" ]; then
    python3 - "$T/rules.yml" "$FOR" <<'PY'
import re, sys
p, v = sys.argv[1], sys.argv[2]
s = open(p).read()
i = s.index("- alert: GPUVRAMLow")
j = s.index("for:", i)
k = s.index("\n", j)
open(p, "w").write(s[:j] + "for: " + v + s[k:])
PY
fi
FOR_SHOWN=$(awk '/- alert: GPUVRAMLow/ {a = 1} a && /for:/ {print $2; exit}' "$T/rules.yml")
[ -z "$EVAL" ] || sed -i "s/^\( *\)interval: .*/\1interval: $EVAL/" "$T/rules.yml"
EVAL_SHOWN=$(awk '/^ *interval:/ {print $2; exit}' "$T/rules.yml")
[ -n "$EVAL_SHOWN" ] || { echo "relief.sh: the rule group has no interval:" >&2; exit 1; }

# The route, as shipped, pointed at this daemon (and -g's group_wait).
sed -e "s#url: http://gpu-vram-watchdog.gpu-vram-watchdog.svc:9808/webhook#url: http://127.0.0.1:$P_GVW/webhook#" \
    -e "s#credentials_file: .*#credentials_file: $T/token#" \
    "$ROOT/deploy/alertmanager/alertmanager.yml" >"$T/am.yml"
if [ -n "$GW" ]; then
    python3 - "$T/am.yml" "$GW" <<'PY'
import sys
p, v = sys.argv[1], sys.argv[2]
s = open(p).read()
i = s.index("alertname=~\"GPUVRAMLow\"")
j = s.index("group_wait:", i)
k = s.index("\n", j)
open(p, "w").write(s[:j] + "group_wait: " + v + s[k:])
PY
fi
GW_SHOWN=$(awk '/GPUVRAMLow/ {a = 1} a && /group_wait:/ {print $2; exit}' "$T/am.yml")
grep -q "127.0.0.1:$P_GVW" "$T/am.yml" || { echo "relief.sh: could not point the route at the daemon" >&2; exit 1; }

START_AT=$(python3 -c "import time; print(time.time() + 45)")
log "nodes=$NODES mode=$MODE scrape=$SCRAPE eval=$EVAL_SHOWN for=$FOR_SHOWN group_wait=$GW_SHOWN rate=${RATE}MiB/s spread=${SPREAD}s spike=${SPIKE}s"
python3 "$ROOT/bench/relief_driver.py" "$T" "$P_API" "$NODES" "$MODE" "$START_AT" "$SPREAD" \
    "$RATE" "$SPIKE" 2>"$T/driver.log" &
PIDS+=($!)
wait_up "http://127.0.0.1:$P_API/api/v1/nodes"

# One exporter per node.
targets=
for i in $(seq 0 $((NODES - 1))); do
    p=$(port)
    env NODE_NAME=bench-$i NVML_LIBRARY="$NVML" GVW_STUB_NVML_STATE="$T/bench-$i/nvml.state" \
        PROC_ROOT="$T/bench-$i/proc" KUBE_API_URL=http://127.0.0.1:$P_API \
        KUBE_TOKEN_FILE="$T/ktoken" EXPORTER_LISTEN_ADDR=127.0.0.1:$p POLL_INTERVAL=1s \
        "$BIN" exporter 2>"$T/exporter-$i.log" &
    PIDS+=($!)
    targets="$targets'127.0.0.1:$p',"
done

cat >"$T/prom.yml" <<EOF
global:
  scrape_interval: $SCRAPE
  evaluation_interval: $EVAL_SHOWN
rule_files: ['$T/rules.yml']
alerting:
  alertmanagers:
    - static_configs: [{targets: ['127.0.0.1:$P_AM']}]
scrape_configs:
  - job_name: gpu-vram-watchdog-exporter
    honor_labels: true
    static_configs: [{targets: [${targets%,}]}]
EOF
promtool check config "$T/prom.yml" >/dev/null
prometheus-alertmanager --config.file="$T/am.yml" --storage.path="$T/am" \
    --web.listen-address=127.0.0.1:$P_AM --cluster.listen-address= 2>"$T/am.log" &
PIDS+=($!)
prometheus --config.file="$T/prom.yml" --storage.tsdb.path="$T/prom" \
    --web.listen-address=127.0.0.1:$P_PROM 2>"$T/prom.log" &
PIDS+=($!)
env LISTEN_ADDR=127.0.0.1:$P_GVW WEBHOOK_TOKEN_FILE="$T/token" AUDIT_DB="$T/audit.db" \
    PROMETHEUS_URL=http://127.0.0.1:$P_PROM KUBE_API_URL=http://127.0.0.1:$P_API \
    KUBE_TOKEN_FILE="$T/ktoken" DRY_RUN=false MAX_RECYCLES_PER_HOUR=0 \
    USED_QUERY='sum by (namespace, pod) (gpu_pod_memory_used_bytes{node="$node"})' \
    "$BIN" serve 2>"$T/serve.log" &
PIDS+=($!)
wait_up "http://127.0.0.1:$P_PROM/-/ready"
wait_up "http://127.0.0.1:$P_AM/-/ready"
wait_up "http://127.0.0.1:$P_GVW/readyz"

# Until every node is recycled (relief) or the spike is long over.
if [ "$MODE" = relief ]; then
    deadline=$(python3 -c "print(int($START_AT + $SPREAD + 300))")
else
    deadline=$(python3 -c "print(int($START_AT + $SPREAD + $SPIKE + 150))")
fi
while [ "$(date +%s)" -lt "$deadline" ]; do
    n=$(grep -c '"evicted"' "$T/events.jsonl" 2>/dev/null || true)
    [ "$MODE" = relief ] && [ "${n:-0}" -ge "$NODES" ] && break
    sleep 2
done
log "collecting"

# Prometheus: the grower's samples, and ALERTS (pending / firing) per node.
q() { curl -sf "http://127.0.0.1:$P_PROM/api/v1/query" --data-urlencode "query=$1"; }
q 'gpu_pod_memory_used_bytes{pod=~"grower-.*"}[30m]' >"$T/samples.json"
q 'ALERTS{alertname="GPUVRAMLow"}[30m]' >"$T/alerts.json"
sqlite3 -json "$T/audit.db" "SELECT received_ms, status, labels AS labels_json FROM alerts WHERE alertname = 'GPUVRAMLow'" >"$T/webhooks.json" 2>/dev/null || echo '[]' >"$T/webhooks.json"
[ -s "$T/webhooks.json" ] || echo '[]' >"$T/webhooks.json"
sqlite3 "$T/audit.db" "SELECT result, count(*) FROM decisions GROUP BY 1" >"$T/decisions.txt" || true

python3 - "$T" "$NODES" "$MODE" "$SCRAPE $EVAL_SHOWN $FOR_SHOWN $GW_SHOWN" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'PY' | tee "$T/report.txt"
import json, os, sys, statistics as st
T, NODES, MODE, SETTINGS, LOAD = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
scrape, ev, fr, gw = SETTINGS.split()
ev_lines = [json.loads(l) for l in open(os.path.join(T, "events.jsonl"))]
t0 = {e["node"]: e["t"] for e in ev_lines if e["kind"] == "t0"}
evicted = {e["node"]: e["t"] for e in ev_lines if e["kind"] == "evicted"}
FLOOR_USED = 15360 - 1536 - 6000  # the grower's MiB at which free < floor
first_seen = {}
for s in json.load(open(os.path.join(T, "samples.json")))["data"]["result"]:
    node = s["metric"].get("node")
    for ts, v in s["values"]:
        if float(v) / 1048576 > FLOOR_USED and node not in first_seen:
            first_seen[node] = float(ts)
pending, firing = {}, {}
for s in json.load(open(os.path.join(T, "alerts.json")))["data"]["result"]:
    node = s["metric"].get("node")
    d = pending if s["metric"]["alertstate"] == "pending" else firing
    d[node] = min(d.get(node, 1e18), float(s["values"][0][0]))
hook = {}
for r in json.load(open(os.path.join(T, "webhooks.json"))):
    if r["status"] != "firing":
        continue
    node = json.loads(r["labels_json"]).get("node")
    hook[node] = min(hook.get(node, 1e18), r["received_ms"] / 1000)
decisions = open(os.path.join(T, "decisions.txt")).read().replace("\n", " ").strip()
print("RELIEF settings: scrape %s, evaluation %s, for %s, group_wait %s; mode %s; load at end %s" %
      (scrape, ev, fr, gw, MODE, LOAD))
print("RELIEF decisions: %s" % (decisions or "none"))
if MODE == "spike":
    print("RELIEF spike: %d of %d nodes went pending, %d firing, %d recycled" %
          (len(pending), NODES, len(firing), len(evicted)))
    sys.exit(0)
hops = {"poll + scrape": [], "scrape -> pending (evaluation)": [], "pending -> firing (for)": [],
        "firing -> webhook (send + group_wait)": [], "webhook -> eviction (decision)": [],
        "total: floor crossed -> eviction": []}
for i in range(NODES):
    n = "bench-%d" % i
    ts = [t0.get(n), first_seen.get(n), pending.get(n), firing.get(n), hook.get(n), evicted.get(n)]
    if any(t is None for t in ts):
        print("RELIEF node=%s incomplete: %s" % (n, ts))
        continue
    d = [ts[k + 1] - ts[k] for k in range(5)] + [ts[5] - ts[0]]
    for (k, v), x in zip(hops.items(), d):
        v.append(x)
    print("RELIEF node=%s " % n + " ".join("%.2f" % x for x in d))
def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]
tot = hops["total: floor crossed -> eviction"]
if tot:
    mean_tot = st.mean(tot)
    print("\n%d runs. | hop | p50 s | p95 s | max s | share of the mean total |" % len(tot))
    print("|---|---|---|---|---|")
    for k, v in hops.items():
        print("| %s | %.1f | %.1f | %.1f | %s |" % (k, pct(v, 50), pct(v, 95), max(v),
              "%.0f%%" % (100 * st.mean(v) / mean_tot) if not k.startswith("total") else "100%"))
PY
[ -n "$OUT" ] && cp "$T/report.txt" "$OUT"
exit 0
