#!/usr/bin/env bash
# test_suggest.sh -- `budgets --suggest` against a real Prometheus whose TSDB is backfilled
# with 8 days of known samples (promtool tsdb create-blocks-from openmetrics), and a fake
# read-only API server. p99, max, history, the suggestion, the seats and the cut list are
# computed again by suggest_data.py from the same raw samples (docs/guide.md "Budgets from
# measured use"), never by the C code; then each bad input's line and exit code.
source "$(dirname "$0")/../lib/harness.sh"
HERE=$GVW_SOURCE_DIR/tests/integration
for tool in prometheus promtool python3 jq; do
    command -v "$tool" >/dev/null || { fail "needs $tool" "not installed"; finish; exit 1; }
done

# The world: written for "now" (whole minutes), so the window's 7 days lie inside the 8.
gen_end=$(( $(date +%s) / 60 * 60 ))
python3 "$HERE/suggest_data.py" gen "$TMP" "$gen_end"
promtool tsdb create-blocks-from openmetrics --max-block-duration=240h \
    "$TMP/metrics.om" "$TMP/tsdb" >"$TMP/promtool.log" 2>&1 ||
    { fail "backfill" "$(tail -3 "$TMP/promtool.log")"; finish; exit 1; }
printf 'global:\n  scrape_interval: 1h\n' >"$TMP/prometheus.yml"
start_on_free_port prometheus "$TMP/prom.log" prometheus --config.file="$TMP/prometheus.yml" \
    --storage.tsdb.path="$TMP/tsdb" --storage.tsdb.retention.time=30d \
    --web.listen-address=127.0.0.1:@PORT@ || { finish; exit 1; }
PROM=http://127.0.0.1:$STARTED_PORT
python3 "$GVW_SOURCE_DIR/tests/fake/suggest_kube.py" "$TMP/api" "$TMP/kube.log" >"$TMP/kube.out" 2>&1 &
PIDS+=("$!")
wait_for 10 grep -q '^port ' "$TMP/kube.out"
KUBE=http://127.0.0.1:$(sed -n 's/^port //p' "$TMP/kube.out")

# suggest ARGS... -- runs it; stdout in $TMP/out, stderr in $TMP/err, exit code in RC;
# WIN_END is the window's end it used (the minute it ran in, checked unchanged after).
suggest() {
    local m0 m1
    for _ in 1 2 3; do
        while [ $(( $(date +%s) % 60 )) -gt 55 ]; do sleep 1; done
        m0=$(( $(date +%s) / 60 ))
        env PROMETHEUS_URL="$PROM" KUBE_API_URL="$KUBE" LOG_FORMAT=json \
            "$GVW_BINARY" budgets --suggest "$@" >"$TMP/out" 2>"$TMP/err"
        RC=$?
        m1=$(( $(date +%s) / 60 ))
        [ "$m0" = "$m1" ] && break
    done
    WIN_END=$((m0 * 60))
}
# The tool's figures, reshaped like suggest_data.py's.
shape='{workloads: (.workloads | map(select(.samples > 0) | {key: (if .kind then "\(.namespace)/\(.kind)/\(.name)" else "\(.namespace)/\(.name)" end), value: {p99_mib, max_mib, samples, history_s, pods_seen, suggested_mib}}) | from_entries), unclaimed, nodes: (.nodes | map({key: .node, value: {suggested_seats_mib, fits, cut}}) | from_entries)}'

suggest --node gpu-1 --format json
expect_eq "gpu-1: exit 0" 0 "$RC"
expect_eq "gpu-1: p99, max, samples, history, suggestion, seats and cut list as computed independently" \
    "$(python3 "$HERE/suggest_data.py" expect "$TMP" "$gen_end" "$WIN_END" gpu-1 | jq -S .)" \
    "$(jq -S "$shape" "$TMP/out")"
expect_eq "declared budgets by the decision's rules (5k + 1024 over two containers, 2k, 300, 1k)" \
    '6024 2000 300 1000' \
    "$(jq -r '[.workloads[] | select(.name=="llm" or .name=="db" or .name=="agent" or .name=="new") | .declared_mib] | "\(.[1]) \(.[3]) \(.[0]) \(.[2])"' "$TMP/out")"
expect_eq "40 minutes of history: no suggestion, and why" 'null too_little_history' \
    "$(jq -r '.workloads[] | select(.name=="new") | "\(.suggested_mib) \(.why_not)"' "$TMP/out")"
expect_eq "the suggestion is at least 10% over p99 and never below the max" ok \
    "$(jq -r '[.workloads[] | select(.suggested_mib) | .suggested_mib >= .max_mib and .suggested_mib * 10 >= .p99_mib * 11 and .suggested_mib % 100 == 0] | if all then "ok" else "no" end' "$TMP/out")"
expect_eq "the gone pod of llm's older ReplicaSet counts for llm (3 pods seen)" 3 \
    "$(jq -r '.workloads[] | select(.name=="llm") | .pods_seen' "$TMP/out")"
expect_eq "one log line on stderr, with the query count" 1 \
    "$(grep -c '"msg":"suggest read".*"range_queries"' "$TMP/err")"

suggest --node gpu-1
expect_eq "table: exit 0" 0 "$RC"
expect_contains "table: the node does not fit, said plainly" "DOES NOT FIT by" "$(cat "$TMP/out")"
expect_contains "table: what to move" "to fit, move off this node" "$(cat "$TMP/out")"
expect_contains "table: too little history" "ml/Deployment/new  (" "$(cat "$TMP/out")"
expect_contains "table: gone pods no workload claims" "ml/old-thing-abc12" "$(cat "$TMP/out")"

suggest --node gpu-1 --format patch --headroom 25%
expect_eq "patch: exit 0" 0 "$RC"
grep '^{' "$TMP/out" >"$TMP/docs"
S=$(python3 - "$TMP" "$gen_end" "$WIN_END" <<'PY'
import json, os, subprocess, sys
# llm's suggestion with 25% headroom, from the independent p99/max.
e = json.loads(subprocess.check_output(
    ["python3", os.environ["GVW_SOURCE_DIR"] + "/tests/integration/suggest_data.py",
     "expect", sys.argv[1], sys.argv[2], sys.argv[3], "gpu-1"]))
w = e["workloads"]["ml/Deployment/llm"]
v = max((w["p99_mib"] * 12500 + 9999) // 10000, w["max_mib"])
print((v + 99) // 100 * 100)
PY
)
side=$(( S * 1024 / 6024 )); main=$(( S - side ))
expect_eq "patch: llm's budget split over its two containers as declared (5000:1024)" \
    "Deployment llm ml main $main $main side $side $side" \
    "$(jq -r 'select(.metadata.name=="llm") | "\(.kind) \(.metadata.name) \(.metadata.namespace) " + ([.spec.template.spec.containers[] | "\(.name) \(.resources.limits["viktorbarzin.me/gpumem"]) \(.resources.requests["viktorbarzin.me/gpumem"])"] | join(" "))' "$TMP/docs")"
expect_eq "patch: a document per suggested workload (agent, llm, db)" "3 apps/v1" \
    "$(jq -s -r '"\(length) \(map(.apiVersion) | unique | join(","))"' "$TMP/docs")"
expect_contains "patch: no suggestion is a comment" "# ml/Deployment/new: no suggestion (too_little_history)" \
    "$(cat "$TMP/out")"

# Bad input: one line on stderr, its own exit code, nothing on stdout.
bad() { # NAME RC NEEDLE
    expect_eq "$1: exit $2, nothing on stdout, one line on stderr" "$2 0 1" \
        "$RC $(wc -c <"$TMP/out") $(grep -vc '^{"ts"' "$TMP/err")"
    expect_contains "$1: the line says why" "$3" "$(grep -v '^{"ts"' "$TMP/err")"
}
PROM_SAVED=$PROM
PROM=http://127.0.0.1:$(free_port); suggest --node gpu-1
bad "Prometheus down" 3 "prometheus"
PROM=$PROM_SAVED
suggest --node gpu-3
bad "a window with no data" 4 "no samples of any pod"
suggest --node gpu-nan
bad "a NaN sample" 5 '"NaN"'
for w in 10x 30m 91d ""; do
    suggest --node gpu-1 --window "$w"; bad "--window '$w'" 2 "--window"
done
for h in 0.1 abc% -5% 10.555% 2000%; do
    suggest --node gpu-1 --headroom "$h"; bad "--headroom '$h'" 2 "--headroom"
done
suggest --node gpu-1 --format yaml; bad "--format yaml" 2 "--format"
# A mistyped --node: the API server has no such node (and, as a real one does, lists
# no pods on it): said so, not "no samples".
echo '{"kind":"PodList","items":[]}' >"$TMP/api/pods-gpu-typo"
suggest --node gpu-typo
bad "--node naming no node" 1 "--node gpu-typo: no such node"
KUBE_SAVED=$KUBE; KUBE=http://127.0.0.1:$(free_port); suggest --node gpu-1
bad "API server down" 1 "127.0.0.1"
KUBE=$KUBE_SAVED

# A pod without a controller (gpu-2's): the rest is printed, one line names it, exit 6.
suggest
expect_eq "no controller: exit 6, one line on stderr naming the pod" "6 1" \
    "$RC $(grep -v '^{"ts"' "$TMP/err" | grep -c 'no controller.*ml/scratch')"
expect_contains "no controller: the others are still suggested" "ml/Deployment/llm" "$(cat "$TMP/out")"
expect_contains "no controller: the bare pod is listed without a suggestion" \
    "ml/scratch  (no controller: no suggestion)" "$(cat "$TMP/out")"

# Read-only: the API server saw only GETs.
expect_eq "nothing written: only GET requests reached the API server" 0 \
    "$(grep -vc '^GET ' "$TMP/kube.log")"
finish
