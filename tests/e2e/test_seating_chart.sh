#!/usr/bin/env bash
# test_seating_chart.sh -- what tenants and operators see, against the incident scenario:
# `budgets` (table and JSON), GET / on `serve` loaded by a real headless Chromium
# (the DOM it builds, and a screenshot kept in the build folder), and the
# Kubernetes Events a decision writes.
#
# The simulator plays gpu-node-1 (API + exporter), Debian's real Prometheus
# scrapes it, `serve` runs in dry run (the default) and a GPUVRAMLow webhook is
# posted by hand once immich-ml is over its budget. Everything is on 127.0.0.1.
source "$(dirname "$0")/../lib/harness.sh"

GVW_SIM=${GVW_SIM:-$(dirname "$GVW_BINARY")/gvw-sim}
SCENARIO="$GVW_SOURCE_DIR/tests/sim/scenarios/incident-2026-06-02.json"
SHOTS=${GVW_SHOT_DIR:-$(dirname "$GVW_BINARY")/seating-chart}
USED='sum by (namespace, pod) (gpu_pod_memory_used_bytes{node="$node"})'

for tool in prometheus curl jq; do
    command -v "$tool" >/dev/null || { fail "tool $tool is installed" "install it (scripts/install-deps.sh)"; finish; exit 1; }
done

# 1. The node (time runs 10x: immich-ml's arena is at 10.7 GiB after 3 s) and Prometheus.
"$GVW_SIM" --scenario "$SCENARIO" --listen 127.0.0.1:0 --time-scale 0.1 \
    >"$TMP/sim.out" 2>"$TMP/sim.log" &
PIDS+=($!)
wait_for 10 grep -q '^listening' "$TMP/sim.out" || { fail "simulator starts" "$(cat "$TMP/sim.log")"; finish; exit 1; }
SIM=http://$(sed -n 's/^listening //p' "$TMP/sim.out")
cat >"$TMP/prometheus.yml" <<YML
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: gpu-exporter
    static_configs: [{targets: ["${SIM#http://}"]}]
YML
start_on_free_port Prometheus "$TMP/prom.log" \
    prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/prom" \
    --web.listen-address=127.0.0.1:@PORT@
PROM=http://127.0.0.1:${STARTED_PORT:-1}
ENVS=(PROMETHEUS_URL="$PROM" KUBE_API_URL="$SIM" USED_QUERY="$USED")

# 2. serve, in dry run: it advertises the capacity at start-up.
printf 'seating-token\n' >"$TMP/token"
DB="$TMP/audit.db"
start_serve "$TMP/serve.log" "${ENVS[@]}" WEBHOOK_TOKEN_FILE="$TMP/token" AUDIT_DB="$DB" \
    ADVERTISE_INTERVAL=0 || { finish; exit 1; }
wait_for 10 sh -c "curl -s '$SIM/api/v1/nodes/gpu-node-1' | grep -q gpumem" ||
    fail "serve advertises the capacity"

over() {
    curl -s "$PROM/api/v1/query" --data-urlencode \
        'query=sum by (pod) (gpu_pod_memory_used_bytes{pod=~"immich-ml.*"}) > 10000 * 1048576' |
        jq -e '.data.result | length == 1' >/dev/null
}
wait_for 60 over || fail "immich-ml's arena grows past 10000 MiB in Prometheus"

# 3. budgets: the seating chart as JSON and as a table.
out=$(env "${ENVS[@]}" "$GVW_BINARY" budgets --node gpu-node-1 --format json)
expect_eq "budgets --node prints one object for the node" "object gpu-node-1" \
    "$(echo "$out" | jq -r '"\(type) \(.node)"')"
expect_eq "the advertised capacity, read from the node" "13312 advertised" \
    "$(echo "$out" | jq -r '"\(.capacity_mib) \(.capacity)"')"
expect_eq "the sum of the declared budgets" \
    "$(curl -s "$SIM/api/v1/pods" | jq '[.items[] | .spec.containers[].resources.limits["viktorbarzin.me/gpumem"] // empty | if endswith("k") then (.[:-1] | tonumber * 1000) else tonumber end] | add')" \
    "$(echo "$out" | jq -r '.budgets_mib')"
expect_eq "node scope: one card, gpu null" "1 null" "$(echo "$out" | jq -r '"\(.gpus | length) \(.gpus[0].gpu)"')"
expect_eq "free VRAM is below the floor" "true 1536" "$(echo "$out" | jq -r '"\(.gpus[0].below_floor) \(.floor_mib)"')"
# The decision's figure: the device's own free (FREE_QUERY=auto), its own total.
pq() { curl -s "$PROM/api/v1/query" --data-urlencode "query=$1" | jq -r "$2"; }
expect_eq "the card's free is the device's own (free_source device)" device "$(echo "$out" | jq -r '.gpus[0].free_source')"
chk=$(env "${ENVS[@]}" "$GVW_BINARY" check --node gpu-node-1 --format json)
expect_eq "check --format json: the decision judged the device's free (free_source device)" \
    "device would_recycle" "$(echo "$chk" | jq -r '"\(.free_source) \(.result)"')"
expect_eq "the card's size is the device's total, not GPU_TOTAL_MIB" \
    "$(pq 'sum(gpu_memory_total_bytes{node="gpu-node-1"})' '(.data.result[0].value[1] | tonumber / 1048576 | floor)')" \
    "$(echo "$out" | jq -r '.gpus[0].total_mib')"
if [ "$(pq 'count(gpu_memory_unattributed_bytes{node="gpu-node-1"})' '.data.result | length')" = 0 ]; then
    expect_eq "no unattributed series exported: unattributed_mib null" null "$(echo "$out" | jq -r '.gpus[0].unattributed_mib')"
else
    expect_eq "the exported unattributed memory is shown" number "$(echo "$out" | jq -r '.gpus[0].unattributed_mib | type')"
fi
ml=$(echo "$out" | jq -c '.gpus[0].tenants[] | select(.pod == "immich-ml-7d9c6b5f4d-x8k2p")')
expect_eq "immich-ml: budget 3000, over budget, eligible" "3000 true true null" \
    "$(echo "$ml" | jq -r '"\(.budget_mib) \(.over_budget) \(.eligible) \(.why_not)"')"
expect_eq "immich-ml's overshoot is its use minus its budget" true \
    "$(echo "$ml" | jq '.overshoot_mib == .used_mib - 3000 and .used_mib > 10000')"
expect_eq "the tenant with a PDB is within its budget" "false within_budget" \
    "$(echo "$out" | jq -r '.gpus[0].tenants[] | select(.pod | startswith("immich-server")) | "\(.over_budget) \(.why_not)"')"
expect_eq "node scope: the Pending seat-holder is on the one card, idle_tenants empty" "0 700 not_running 0" \
    "$(echo "$out" | jq -r '(.gpus[0].tenants[] | select(.pod | startswith("portal-tts-")) | "\(.used_mib) \(.budget_mib) \(.why_not)") + " \(.idle_tenants | length)"')"
expect_eq "the largest user is listed first" "immich-ml-7d9c6b5f4d-x8k2p" "$(echo "$out" | jq -r '.gpus[0].tenants[0].pod')"
out=$(env "${ENVS[@]}" "$GVW_BINARY" budgets --format json)
expect_eq "budgets without --node: an array, one per GPU node" "array 1 gpu-node-1" \
    "$(echo "$out" | jq -r '"\(type) \(length) \(.[0].node)"')"
table=$(env "${ENVS[@]}" "$GVW_BINARY" budgets)
expect_contains "the table says the capacity and the budgets" "13312 MiB advertised" "$table"
expect_contains "the table says the card is below the floor" "BELOW THE FLOOR" "$table"
expect_contains "the table says where free VRAM came from" "MiB free (device), floor" "$table"
expect_contains "the table names immich-ml in full, eligible" "yes                      immich/immich-ml-7d9c6b5f4d-x8k2p" "$table"
out=$(env "${ENVS[@]}" GPUMEM_RESOURCE=example.com/vram "$GVW_BINARY" budgets --node gpu-node-1 --format json)
expect_eq "a resource the node does not advertise is said so" "null not_advertised" \
    "$(echo "$out" | jq -r '"\(.capacity_mib) \(.capacity)"')"
table=$(env "${ENVS[@]}" GPUMEM_RESOURCE=example.com/vram "$GVW_BINARY" budgets --node gpu-node-1)
expect_contains "... in the table too" "NOT ADVERTISED" "$table"
curl -s -X PATCH -H 'Content-Type: application/json-patch+json' "$SIM/api/v1/nodes/gpu-node-1/status" \
    --data '[{"op":"replace","path":"/status/capacity/viktorbarzin.me~1gpumem","value":"10000"}]' >/dev/null
table=$(env "${ENVS[@]}" "$GVW_BINARY" budgets --node gpu-node-1)
expect_contains "budgets over the advertised capacity are said plainly" "OVER-COMMITTED by" "$table"
out=$(env "${ENVS[@]}" "$GVW_BINARY" budgets --node gpu-node-1 --format json)
expect_eq "... and in JSON" "true 10000" "$(echo "$out" | jq -r '"\(.overcommitted) \(.capacity_mib)"')"
curl -s -X PATCH -H 'Content-Type: application/json-patch+json' "$SIM/api/v1/nodes/gpu-node-1/status" \
    --data '[{"op":"replace","path":"/status/capacity/viktorbarzin.me~1gpumem","value":"13312"}]' >/dev/null
out=$(env "${ENVS[@]}" PROMETHEUS_URL=http://127.0.0.1:1 "$GVW_BINARY" budgets --node gpu-node-1 --format json)
expect_contains "without Prometheus the reading's error is shown" "prometheus" "$(echo "$out" | jq -r '.error')"
expect_eq "... and free VRAM is unknown" null "$(echo "$out" | jq -r '.gpus[0].free_mib')"
if env "${ENVS[@]}" KUBE_API_URL= "$GVW_BINARY" budgets >"$TMP/o" 2>"$TMP/e"; then
    fail "budgets without --node or API server fails"
else
    expect_contains "budgets without --node or API server says why" "no Kubernetes API server" "$(cat "$TMP/e")"
fi

# 4. A decision to list: GPUVRAMLow for the node, posted as Alertmanager would.
alert='{"version":"4","status":"firing","receiver":"gvw","groupLabels":{},"commonLabels":{},"commonAnnotations":{},"externalURL":"http://am","groupKey":"{}:{}","alerts":[{"status":"firing","labels":{"alertname":"GPUVRAMLow","node":"gpu-node-1","severity":"critical"},"annotations":{},"startsAt":"2026-06-02T10:00:00Z","endsAt":"0001-01-01T00:00:00Z","fingerprint":"5eed5eed5eed5eed"}]}'
expect_eq "the webhook takes the alert" 200 \
    "$(http_code POST /webhook -H 'Authorization: Bearer seating-token' --data-binary "$alert")"
decided() { "$GVW_BINARY" audit --db "$DB" --format json --result would_recycle | jq -e 'length == 1' >/dev/null; }
wait_for 30 decided || fail "serve decides would_recycle" "$(tail -5 "$TMP/serve.log")"
AUDIT_ID=$("$GVW_BINARY" audit --db "$DB" --format json --result would_recycle | jq -r '.[0].id')

# The dry run tells the tenant too: one Event on immich-ml. The simulator has no
# events.k8s.io group (404): logged, counted, and the decision is unchanged.
wait_for 10 sh -c "curl -s '$SIM/sim/events' | jq -e 'any(.[]; .path | startswith(\"/apis/events.k8s.io/\"))' >/dev/null"
ev=$(curl -s "$SIM/sim/events" | jq -c '[.[] | select(.path | startswith("/apis/events.k8s.io/"))]')
expect_eq "a dry-run Event on immich-ml" "1 immich immich-ml-7d9c6b5f4d-x8k2p GPUVRAMWouldRecycle Warning gpu-vram-watchdog" \
    "$(echo "$ev" | jq -r '"\(length) \(.[0].body.metadata.namespace) \(.[0].body.regarding.name) \(.[0].body.reason) \(.[0].body.type) \(.[0].body.reportingController)"')"
expect_contains "its note ends with the audit id" "(audit $AUDIT_ID)" "$(echo "$ev" | jq -r '.[0].body.note')"
expect_contains "the refused Event is counted" "gpu_vram_watchdog_events_errors_total 1" \
    "$(curl -s "http://127.0.0.1:$SERVE_PORT/metrics")"
expect_eq "and the decision stays as it was" "would_recycle null" \
    "$("$GVW_BINARY" audit --db "$DB" --format json | jq -r '.[0] | "\(.result) \(.error)"')"

# 5. GET / as a text client sees it.
expect_eq "GET / is 200" 200 "$(http_code GET /)"
cp "$TMP/body" "$TMP/page.html"
expect_contains "GET / is HTML" "<!DOCTYPE html>" "$(head -c 200 "$TMP/page.html")"
expect_eq "no script on the page" 0 "$(grep -ci '<script' "$TMP/page.html")"
expect_eq "no outside assets (no src=, no href=)" 0 "$(grep -Eci '(src|href)=' "$TMP/page.html")"
expect_contains "the page says where the card's free VRAM came from" '(<span class="free-source">device</span>)' "$(cat "$TMP/page.html")"
expect_eq "the page draws the decision's own free figure (the device's), as budgets does" \
    "$(env "${ENVS[@]}" "$GVW_BINARY" budgets --node gpu-node-1 --format json | jq -r '.gpus[0] | "\(.free_source) \(.total_mib)"')" \
    "device $(grep -o '[0-9]* MiB on the card' "$TMP/page.html" | head -n1 | cut -d' ' -f1)"
expect_eq "POST / is 405" 405 "$(http_code POST / --data-binary x)"


# 6. A real browser: headless Chromium loads the page from serve, dumps the DOM
# it built and takes a screenshot (kept in the build folder to look at).
CHROME=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROME" ]; then
    echo "skip - browser checks: chromium is not installed (apt-get install chromium)"
else
    chrome() {
        timeout 90 "$CHROME" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
            --disable-background-networking --disable-component-update --disable-sync \
            --user-data-dir="$(mktemp -d "$TMP/chrome.XXXXXX")" "$@" 2>>"$TMP/chrome.log"
    }
    URL="http://127.0.0.1:$SERVE_PORT/"
    chrome --dump-dom "$URL" >"$TMP/dom.html"
    expect_eq "Chromium builds one SVG per GPU" 1 "$(grep -o '<svg class="card"' "$TMP/dom.html" | wc -l)"
    expect_contains "... for gpu-node-1" 'data-node="gpu-node-1"' "$(grep -o '<svg class="card"[^>]*>' "$TMP/dom.html")"
    expect_eq "only immich-ml's segment is marked over budget" "immich-ml-7d9c6b5f4d-x8k2p" \
        "$(grep -o '<g class="tenant over-budget"[^>]*>' "$TMP/dom.html" | sed -n 's/.*data-pod="\([^"]*\)".*/\1/p' | tr '\n' ' ' | sed 's/ $//')"
    expect_eq "its over-budget part is drawn in the warning colour" 1 \
        "$(grep -o '<rect class="over"[^>]*fill="#c62828"' "$TMP/dom.html" | wc -l)"
    expect_contains "the floor line is drawn" '<line class="floor"' "$(cat "$TMP/dom.html")"
    expect_contains "the page opens on the alarm naming immich-ml over its budget" \
        '<h1>GPU seating chart</h1><div class="alarm" role="alert"><p class="over-budget">OVER BUDGET: <span class="name">immich/immich-ml-7d9c6b5f4d-x8k2p</span> on gpu-node-1 uses' \
        "$(cat "$TMP/dom.html")"
    expect_contains "the advertised capacity is drawn" 'advertised capacity 13312 MiB' "$(cat "$TMP/dom.html")"
    row=$(grep -o '<tr class="decision">.*</tr>' "$TMP/dom.html" | sed 's/<\/tr>/&\n/g' | head -n1)
    expect_contains "the decisions table has the audit id" "<td class=\"n\">$AUDIT_ID</td>" "$row"
    expect_contains "... the result and the victim" \
        '<td class="result">would_recycle</td><td class="name">immich/immich-ml-7d9c6b5f4d-x8k2p</td>' "$row"
    expect_eq "no script ran or was there" 0 "$(grep -ci '<script' "$TMP/dom.html")"
    mkdir -p "$SHOTS"
    chrome --screenshot="$SHOTS/seating-chart.png" --window-size=1200,900 "$URL" >/dev/null
    if [ -s "$SHOTS/seating-chart.png" ]; then
        pass "a screenshot is saved: $SHOTS/seating-chart.png"
    else
        fail "Chromium saves a screenshot" "$(tail -3 "$TMP/chrome.log")"
    fi
fi


finish
