# stack.sh -- the end-to-end stack the e2e tests share (sourced after harness.sh):
# gvw-sim, the real exporter on the stub NVML, Prometheus with the shipped rules
# on the test clock, `serve` and Alertmanager, all on 127.0.0.1.
# Call in order: stack_require_tools, stack_sim SCENARIO, stack_exporter NODE,
# stack_prometheus, stack_serve [ENV=VALUE ...], stack_alerting. Each one that
# cannot bring its part up reports the failure and exits the test.
GVW_SIM=${GVW_SIM:-$(dirname "$GVW_BINARY")/gvw-sim}
GVW_STUB_NVML=${GVW_STUB_NVML:-$(dirname "$GVW_BINARY")/stub-nvml/libnvidia-ml.so.1}
TIME_SCALE=${E2E_TIME_SCALE:-0.5}

# say TEXT -- narration, printed only with E2E_NARRATE=1 (scripts/demo.sh).
say() { [ "${E2E_NARRATE:-0}" = 1 ] && printf '\n%s\n' "$*"; return 0; }

stack_abort() { finish; exit 1; }

stack_require_tools() {
    local tool
    for tool in prometheus prometheus-alertmanager curl jq; do
        if ! command -v "$tool" >/dev/null; then
            fail "tool $tool is installed" "install it (scripts/install-deps.sh)"
            stack_abort
        fi
    done
}

# stack_sim SCENARIO -- the simulated GPU node: its API server, its NVML (a
# state file the stub library reads) and its /proc; for a scenario of several
# nodes, each node's pair is also under $TMP/nodes/NODE/. Sets SIM (its URL).
stack_sim() {
    mkdir -p "$TMP/proc" "$TMP/nodes"
    "$GVW_SIM" --scenario "$1" --listen 127.0.0.1:0 --time-scale "$TIME_SCALE" \
        --nvml-state "$TMP/nvml.state" --proc-root "$TMP/proc" --node-dir "$TMP/nodes" \
        >"$TMP/sim.out" 2>"$TMP/sim.log" &
    PIDS+=($!)
    wait_for 10 grep -q '^listening' "$TMP/sim.out" || { fail "simulator starts" "$(cat "$TMP/sim.log")"; stack_abort; }
    SIM=http://$(sed -n 's/^listening //p' "$TMP/sim.out")
}

# stack_exporter NODE [own] -- the node exporter, as the DaemonSet runs it, on
# the simulated node NODE; with "own", reading that node's files under
# $TMP/nodes/NODE/ (one exporter per node of a cluster). Sets EXP_PORT and adds
# it to EXP_TARGETS (what Prometheus scrapes); logs to $TMP/exporter[-NODE].log.
EXP_TARGETS=()
stack_exporter() {
    local state=$TMP/nvml.state proc=$TMP/proc log=$TMP/exporter.log
    [ -f "$GVW_STUB_NVML" ] || { fail "the stub NVML library is built" "$GVW_STUB_NVML (target gvw-stub-nvml)"; stack_abort; }
    if [ "${2:-}" = own ]; then
        state=$TMP/nodes/$1/nvml.state proc=$TMP/nodes/$1/proc log=$TMP/exporter-$1.log
    fi
    # A port free when picked can be taken by a parallel test before the
    # exporter binds it: it then exits, and another port is tried. Its
    # /healthz only counts while it is alive (else the answer is the other's).
    local pid try up=0
    for try in 1 2 3; do
        EXP_PORT=$(free_port)
        env NODE_NAME="$1" NVML_LIBRARY="$GVW_STUB_NVML" GVW_STUB_NVML_STATE="$state" \
            PROC_ROOT="$proc" KUBE_API_URL="$SIM" EXPORTER_LISTEN_ADDR="127.0.0.1:$EXP_PORT" \
            POLL_INTERVAL=500ms "$GVW_BINARY" exporter 2>"$log" &
        pid=$!
        PIDS+=("$pid")
        if wait_for 10 sh -c "! kill -0 $pid || curl -sf http://127.0.0.1:$EXP_PORT/healthz" &&
            kill -0 "$pid" 2>/dev/null; then
            up=1
            break
        fi
        echo "exporter on port $EXP_PORT: not up (try $try): $(tail -1 "$log")" >&2
        kill "$pid" 2>/dev/null
    done
    EXP_TARGETS+=("\"127.0.0.1:$EXP_PORT\"")
    [ "$up" = 1 ] || { fail "the exporter starts" "$(tail -5 "$log")"; stack_abort; }
}

# stack_prometheus -- Prometheus scraping the exporter. It starts before serve
# (whose PROMETHEUS_URL names its port, so the port is settled first) and
# without rules or Alertmanager: stack_alerting loads those once serve and
# Alertmanager are up. Sets PROM_PORT and PROM_PID.
stack_prometheus() {
    # The shipped timing (for: 15s, the group's interval: 5s) shortened to the
    # test's 1 s clock; every for: and interval: line must be rewritten.
    sed -e 's/^\( *\)for: .*/\1for: 2s/' -e 's/^\( *\)interval: .*/\1interval: 1s/' \
        "$GVW_SOURCE_DIR/rules/gpu-vram-watchdog.rules.yml" >"$TMP/rules.yml"
    if ! grep -q '^ *for: 2s$' "$TMP/rules.yml" || ! grep -q '^ *interval: 1s$' "$TMP/rules.yml" ||
        grep -E '^ *(for|interval): ' "$TMP/rules.yml" | grep -qvE '^ *(for: 2s|interval: 1s)$'; then
        fail "the shipped rules' for:/interval: lines are rewritten to the test clock" \
            "$(grep -E '^ *(for|interval): ' "$TMP/rules.yml" | sort | uniq -c | tr '\n' ';')"
        stack_abort
    fi
    cat >"$TMP/prometheus.yml" <<YML
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: gpu-vram-watchdog-exporter
    honor_labels: true
    static_configs: [{targets: [$(IFS=,; echo "${EXP_TARGETS[*]}")]}]
YML
    start_on_free_port Prometheus "$TMP/prom.log" \
        prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/prom" \
        --web.listen-address=127.0.0.1:@PORT@ || stack_abort
    PROM_PORT=$STARTED_PORT
    PROM_PID=$STARTED_PID
    # The demo tells where Prometheus was (and whether it still runs).
    [ -n "${GVW_DEMO_INFO:-}" ] && echo "prometheus 127.0.0.1:$PROM_PORT" >>"$GVW_DEMO_INFO"
    return 0
}

# stack_serve [ENV=VALUE ...] -- serve, enforcing, against the simulator and
# Prometheus; the arguments add or override settings (a per-GPU USED_QUERY,
# ...). Sets SERVE_PORT, DB (its audit) and $TMP/token (its webhook token).
stack_serve() {
    printf 'e2e-token-%s\n' "$RANDOM$RANDOM" >"$TMP/token"
    DB=${GVW_AUDIT_DB:-$TMP/audit.db} # GVW_AUDIT_DB: the demo keeps its audit
    start_serve "$TMP/serve.log" WEBHOOK_TOKEN_FILE="$TMP/token" AUDIT_DB="$DB" \
        DRY_RUN=false SETTLE=20s KUBE_API_URL="$SIM" PROMETHEUS_URL="http://127.0.0.1:$PROM_PORT" \
        USED_QUERY='sum by (namespace, pod) (gpu_pod_memory_used_bytes{node="$node"})' \
        ADVERTISE_INTERVAL=0 "$@" || stack_abort
}

# The full configuration is loaded: the rules, Alertmanager and serve's target.
prometheus_configured() {
    curl -sf "http://127.0.0.1:$PROM_PORT/api/v1/status/config" | jq -r .data.yaml | grep -q "127.0.0.1:$AM_PORT" &&
        curl -sf "http://127.0.0.1:$PROM_PORT/api/v1/rules" | jq -e '.data.groups | length > 0' &&
        curl -sf "http://127.0.0.1:$PROM_PORT/api/v1/alertmanagers" | jq -e '.data.activeAlertmanagers | length > 0'
}

# stack_alerting -- Alertmanager delivering to serve with the bearer token, and
# Prometheus reloaded (SIGHUP) with the shipped rules, Alertmanager and a
# scrape of serve. Sets AM_PORT.
stack_alerting() {
    cat >"$TMP/alertmanager.yml" <<YML
route:
  receiver: gpu-vram-watchdog
  group_by: [alertname, node]
  group_wait: 1s
  group_interval: 2s
  repeat_interval: 1h
receivers:
  - name: gpu-vram-watchdog
    webhook_configs:
      - url: http://127.0.0.1:$SERVE_PORT/webhook
        send_resolved: true
        http_config:
          authorization:
            credentials_file: $TMP/token
YML
    start_on_free_port Alertmanager "$TMP/am.log" \
        prometheus-alertmanager --config.file="$TMP/alertmanager.yml" --storage.path="$TMP/am" \
        --web.listen-address=127.0.0.1:@PORT@ --cluster.listen-address= || stack_abort
    AM_PORT=$STARTED_PORT
    cat >"$TMP/prometheus.yml" <<YML
global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [$TMP/rules.yml]
alerting:
  alertmanagers: [{static_configs: [{targets: ["127.0.0.1:$AM_PORT"]}]}]
scrape_configs:
  - job_name: gpu-vram-watchdog-exporter
    honor_labels: true
    static_configs: [{targets: [$(IFS=,; echo "${EXP_TARGETS[*]}")]}]
  - job_name: gpu-vram-watchdog
    static_configs: [{targets: ["127.0.0.1:$SERVE_PORT"]}]
YML
    kill -HUP "$PROM_PID"
    wait_for 30 prometheus_configured ||
        { fail "Prometheus loads the rules and Alertmanager" "$(tail -5 "$TMP/prom.log")"; stack_abort; }
}

# alert_state -- GPUVRAMLow's state in Prometheus (the first one's), or "inactive".
alert_state() {
    curl -s "http://127.0.0.1:$PROM_PORT/api/v1/alerts" |
        jq -r '[.data.alerts[] | select(.labels.alertname == "GPUVRAMLow") | .state] | first // "inactive"'
}

# stack_wait_firing DESC -- passes DESC once GPUVRAMLow fires (120 s at most).
stack_wait_firing() {
    low_firing() { [ "$(alert_state)" = firing ]; }
    if wait_for 120 low_firing; then
        stamp "GPUVRAMLow firing in Prometheus"
        pass "$1"
    else
        fail "GPUVRAMLow fires" "state $(alert_state)"
    fi
}

# evictions -- the eviction calls the simulated API server received, as JSON.
evictions() { curl -s "$SIM/sim/events" | jq '[.[] | select(.path | endswith("/eviction"))]'; }

# stack_wait_eviction -- waits (30 s at most) for an eviction and says which.
stack_wait_eviction() {
    evicted() { [ "$(evictions | jq 'length')" -ge 1 ]; }
    if wait_for 30 evicted; then
        stamp "the watchdog evicted $(evictions | jq -r '.[0].path')"
    else
        fail "an eviction reaches the API server" "$(tail -5 "$TMP/serve.log")"
    fi
}
