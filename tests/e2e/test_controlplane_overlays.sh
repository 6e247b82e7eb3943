#!/usr/bin/env bash
# test_controlplane_overlays.sh -- deploy/ and each of its overlays installed as an
# operator would, on the REAL control plane (tests/controlplane/cluster.sh), one
# fresh cluster each:
#   1 `kubectl kustomize` renders it (a fresh webhook-token, as the README says);
#     what it needs first is there (the prometheus-operator's own CRDs, fetched
#     pinned by tests/controlplane/monitoring.sh; Alertmanager's namespace);
#   2 `kubectl apply --server-side` (strict field validation) accepts every
#     object, and every object rendered is stored, each kind expected there;
#   3 the watchdog runs with exactly the settings the StatefulSet renders: its
#     container's env, only what must point at loopback overridden (the API
#     server and a TokenRequest token of the overlay's own ServiceAccount, an
#     empty Prometheus, the audit file, the port), the webhook token read from
#     the Secret the overlay rendered. It must lead the Lease in the rendered
#     namespace (/readyz 200), log the rendered settings at start-up, hand the
#     Lease back on SIGTERM, and meet no 401/403. With deploy/ alone the
#     placeholder token must stop it, saying so.
#   4 per overlay: its commented-out customisations (the operator's release
#     label, another PROMETHEUS_URL) render, are accepted and do what they
#     say; the AlertmanagerConfig reads the watchdog's own Secret, no
#     copy, and the ServiceMonitors select the Services; plain-prometheus'
#     scrape config passes (upstream) `promtool check config` with the shipped
#     rules, and its Alertmanager Secret is the one its route's credentials_file
#     names, with the same token.
# Pods on kwok nodes never run, so `serve` runs here as the pod would.
source "$(dirname "$0")/../lib/harness.sh"
source "$(dirname "$0")/../controlplane/cluster.sh"
CPS=$GVW_SOURCE_DIR/tests/controlplane
T_START=$(date +%s)

for tool in curl jq openssl python3 base64; do
    command -v "$tool" >/dev/null || cp_abort "tool $tool is installed" "scripts/install-deps.sh"
done
python3 -c 'import yaml' 2>/dev/null || cp_abort "python3 has yaml" "apt-get install python3-yaml"
[ -z "${GVW_MONITORING_ERROR:-}" ] ||
    cp_abort "the pinned CRDs and promtool are fetched (scripts/test.sh ran tests/controlplane/monitoring.sh)" "$GVW_MONITORING_ERROR"
if [ -z "${GVW_MONITORING:-}" ]; then
    GVW_MONITORING=$(bash "$CPS/monitoring.sh") ||
        cp_abort "the pinned CRDs and promtool are fetched (tests/controlplane/monitoring.sh)" "see its output above"
fi
PROMTOOL=$GVW_MONITORING/bin/promtool

# The operator's copy of deploy/, with the token each overlay wants made as the
# README says (the overlays read the gitignored file webhook-token).
cp -r "$GVW_SOURCE_DIR/deploy" "$TMP/deploy"
for o in "$TMP"/deploy/overlays/*/; do openssl rand -hex 32 >"$o/webhook-token"; done

# A Prometheus API with no series: serve asks it for ALERTS when it leads.
python3 "$CPS/empty_prom.py" --log "$TMP/prom-queries.log" >"$TMP/prom.out" 2>"$TMP/prom.log" &
PIDS+=($!)
wait_for 10 grep -q '^listening' "$TMP/prom.out" || cp_abort "empty_prom.py starts" "$(cat "$TMP/prom.log")"
PROM=http://127.0.0.1:$(sed -n 's/^listening //p' "$TMP/prom.out")

CLUSTERS=0
# discard -- stops the control plane for good. Nothing of it is kept but its
# logs, so no graceful stop (the API server's takes over 10 s): SIGKILL by
# PID, and wait for each.
discard() {
    local pid
    for pid in "${CP_PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null; done
    for pid in "${CP_PIDS[@]}"; do wait "$pid" 2>/dev/null; done
    CP_PIDS=()
    CP_PID_NAMES=()
}
fresh_cluster() { # a new control plane, the previous one discarded
    [ "$CLUSTERS" -eq 0 ] || discard
    CLUSTERS=$((CLUSTERS + 1))
    CP_DIR=$TMP/cp$CLUSTERS
    cp_up
    CA=$CP_DIR/pki/ca.crt
}

# render NAME DIR -- kubectl kustomize DIR into $TMP/NAME.yaml, its objects listed.
render() {
    kc kustomize "$2" >"$TMP/$1.yaml" 2>"$TMP/$1.err" ||
        cp_abort "$1: kubectl kustomize renders it" "$(cat "$TMP/$1.err")"
    python3 "$CPS/rendered.py" objects "$TMP/$1.yaml" >"$TMP/$1.objects" ||
        cp_abort "$1: the rendered objects are read"
    pass "$1: kubectl kustomize renders $(wc -l <"$TMP/$1.objects") objects"
}

# apply NAME KIND... -- server-side apply of the rendered file; every object
# stored, and each KIND named among them.
apply() {
    local name=$1 kind ns obj missing="" kinds out
    shift
    if out=$(kc apply --server-side --field-manager=gvw-overlay-test -f "$TMP/$name.yaml" 2>&1); then
        pass "$name: kubectl apply --server-side accepts every object"
    else
        fail "$name: kubectl apply --server-side accepts every object" "$out"
    fi
    grep -i '^warning' <<<"$out" | sed 's/^/  server: /'
    while read -r kind ns obj; do
        if [ "$ns" = - ]; then
            kc get "$kind" "$obj" -o name >/dev/null 2>&1 || missing+=" $kind/$obj"
        else
            kc get -n "$ns" "$kind" "$obj" -o name >/dev/null 2>&1 || missing+=" $kind/$ns/$obj"
        fi
    done <"$TMP/$name.objects"
    expect_eq "$name: every object rendered is stored" "" "$missing"
    kinds=" $(cut -d' ' -f1 "$TMP/$name.objects" | cut -d. -f1 | sort -u | tr '\n' ' ')"
    missing=""
    for kind in "$@"; do
        [[ "$kinds" == *" $kind "* ]] || missing+=" $kind"
    done
    expect_eq "$name: it has each kind it should ($*)" "" "$missing"
}

# customised NAME -- the overlay with its commented-out customisations taken
# in (each "#: " line uncommented, as its kustomization says): it renders,
# the server accepts it (a dry run), and each does what it says.
customised() {
    local name=$1 d=$TMP/custom/deploy/overlays/$1 out kind
    mkdir -p "$TMP/custom"
    [ -d "$TMP/custom/deploy" ] || cp -r "$TMP/deploy" "$TMP/custom/deploy"
    grep -q '^#: ' "$d/kustomization.yaml" || { fail "$name: its kustomization offers customisations (#: lines)"; return; }
    sed -i 's/^#: //' "$d/kustomization.yaml"
    kc kustomize "$d" >"$TMP/$name-custom.yaml" 2>&1 ||
        { fail "$name: its customisations render" "$(cat "$TMP/$name-custom.yaml")"; return; }
    out=$(kc apply --server-side --dry-run=server --field-manager=gvw-overlay-test -f "$TMP/$name-custom.yaml" 2>&1) &&
        pass "$name: with its customisations uncommented the server accepts it (dry run)" ||
        fail "$name: with its customisations uncommented the server accepts it" "$out"
    python3 "$CPS/rendered.py" env "$TMP/$name-custom.yaml" >"$TMP/$name-custom.env"
    expect_eq "$name: ... its PROMETHEUS_URL patch reaches the StatefulSet" \
        "http://prometheus-server.monitoring.svc:80" \
        "$(tr '\0' '\n' <"$TMP/$name-custom.env" | sed -n 's/^PROMETHEUS_URL=//p')"
    for kind in ServiceMonitor PrometheusRule AlertmanagerConfig; do
        grep -q "^kind: $kind\$" "$TMP/$name-custom.yaml" || continue
        expect_eq "$name: ... every $kind carries the release label the operator selects by" "" \
            "$(python3 -c 'import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d["kind"] == sys.argv[2] and d["metadata"].get("labels", {}).get("release") != "kube-prometheus-stack":
        print(d["metadata"]["name"])' "$TMP/$name-custom.yaml" "$kind")"
    done
}

# setting NAME VAR -- VAR's value in the rendered StatefulSet's env (empty: unset).
setting() { tr '\0' '\n' <"$TMP/$1.env" | sed -n "s/^$2=//p" | head -n1; }

# watchdog NAME -- serve with NAME's rendered settings; sets W_PID, W_PORT, W_LOG, W_NS, W_POD.
watchdog() {
    local name=$1 sa secret key v e
    local -a env=()
    python3 "$CPS/rendered.py" env "$TMP/$name.yaml" >"$TMP/$name.env" ||
        cp_abort "$name: the StatefulSet's env is read"
    read -r W_NS sa W_POD < <(python3 "$CPS/rendered.py" pod "$TMP/$name.yaml")
    cp_sa_token "$W_NS" "$sa" "$TMP/$name.kube-token" ||
        cp_abort "$name: a TokenRequest token of its ServiceAccount $W_NS/$sa" "$(cat "$TMP/$name.kube-token")"
    read -r secret key < <(python3 "$CPS/rendered.py" mount "$TMP/$name.yaml" "$(setting "$name" WEBHOOK_TOKEN_FILE)") ||
        cp_abort "$name: the webhook token's Secret is found"
    kc get secret -n "$W_NS" "$secret" -o json | jq -r --arg k "$key" '.data[$k]' | base64 -d >"$TMP/$name.webhook-token" ||
        cp_abort "$name: the webhook token is read from Secret $W_NS/$secret"
    W_SECRET=$secret
    mkdir -p "$TMP/$name.audit"
    # The rendered env, less what must point here, then that; nothing else
    # from this shell (env -i) but the sanitizers' options.
    while IFS= read -r -d '' e; do
        case "${e%%=*}" in
        KUBE_API_URL | KUBE_TOKEN_FILE | KUBE_CA_FILE | PROMETHEUS_URL | AUDIT_DB | LISTEN_ADDR | WEBHOOK_TOKEN_FILE) ;;
        *) env+=("$e") ;;
        esac
    done <"$TMP/$name.env"
    env+=(KUBE_API_URL="$CP_API" KUBE_TOKEN_FILE="$TMP/$name.kube-token" KUBE_CA_FILE="$CA"
        PROMETHEUS_URL="$PROM" AUDIT_DB="$TMP/$name.audit/audit.db" LISTEN_ADDR=127.0.0.1:0
        WEBHOOK_TOKEN_FILE="$TMP/$name.webhook-token")
    W_LOG=$TMP/$name.serve.log
    env -i PATH="$PATH" ${ASAN_OPTIONS:+ASAN_OPTIONS="$ASAN_OPTIONS"} \
        ${UBSAN_OPTIONS:+UBSAN_OPTIONS="$UBSAN_OPTIONS"} "${env[@]}" "$GVW_BINARY" serve 2>"$W_LOG" &
    W_PID=$!
    PIDS+=("$W_PID")
    W_PORT=
    for _ in $(seq 1 200); do
        W_PORT=$(sed -n 's/.*"msg":"serving".*"port":"\([0-9]*\)".*/\1/p' "$W_LOG" | head -n1)
        [ -n "$W_PORT" ] && return 0
        kill -0 "$W_PID" 2>/dev/null || return 1
        sleep 0.05
    done
    return 1
}
readyz() { [ "$(curl -s -o "$TMP/readyz" -w '%{http_code}' "http://127.0.0.1:$W_PORT/readyz")" = 200 ]; }
holder() { kc get lease -n "$W_NS" "$1" -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
holder_is() { [ "$(holder "$1")" = "$2" ]; }
# refused ACCOUNT -- the API server's 401/403 answers to ACCOUNT so far.
refused() {
    cp_audit_json | jq -r --arg u "$1" 'select(.stage == "ResponseComplete" and .user.username == $u
        and (.responseStatus.code == 401 or .responseStatus.code == 403))
        | "\(.verb) \(.requestURI) \(.responseStatus.code)"' | sort -u
}

# leads NAME -- the watchdog with NAME's settings starts, leads, says its settings, stops.
leads() {
    local name=$1 line lease var field want
    watchdog "$name" || { fail "$name: serve starts with the rendered settings" "$(tail -5 "$W_LOG")"; return; }
    pass "$name: serve starts with the rendered settings ($(tr '\0' '\n' <"$TMP/$name.env" | cut -d= -f1 | tr '\n' ' '))"
    lease=$(setting "$name" LEASE_NAME)
    lease=${lease:-gpu-vram-watchdog}
    expect_eq "$name: leader election is on" true "$(setting "$name" LEADER_ELECTION)"
    if wait_for 30 readyz; then
        pass "$name: /readyz is 200: it leads"
    else
        fail "$name: /readyz becomes 200 (it leads)" "$(cat "$TMP/readyz" 2>/dev/null) $(tail -3 "$W_LOG")"
    fi
    expect_eq "$name: it holds the Lease $lease in the rendered namespace $W_NS as $W_POD" "$W_POD" "$(holder "$lease")"
    wait_for 10 grep -q 'ALERTS' "$TMP/prom-queries.log" &&
        pass "$name: as the new leader it asks Prometheus for the triggers still firing" ||
        fail "$name: as the new leader it asks Prometheus for ALERTS" "$(cat "$TMP/prom-queries.log")"
    : >"$TMP/prom-queries.log"
    # The start-up line names the settings it runs with: the rendered ones.
    line=$(grep -m1 '"msg":"serving"' "$W_LOG")
    for var in DRY_RUN:dry_run FLOOR_MIB:floor_mib USED_QUERY:used_query FREE_QUERY:free_query \
        ACTION:action LEADER_ELECTION:leader_election BUDGET_SOURCES:budget_sources; do
        want=$(setting "$name" "${var%%:*}")
        [ -n "$want" ] || continue
        field=${var#*:}
        expect_eq "$name: the start-up line says $field = the rendered ${var%%:*}" "$want" \
            "$(jq -r --arg f "$field" '.[$f] // "(absent)"' <<<"$line")"
    done
    expect_eq "$name: ... and the Prometheus it was pointed at" "$PROM" "$(jq -r '.prometheus_url' <<<"$line")"
    # Receiving alerts as Alertmanager sends them, with the token the overlay
    # rendered (a non-trigger alert: stored, nothing decided); any other is 401.
    local alert='{"version":"4","status":"firing","receiver":"gvw","groupLabels":{},"commonLabels":{},"commonAnnotations":{},"externalURL":"http://am","groupKey":"{}:{}","alerts":[{"status":"firing","labels":{"alertname":"GPUPodOverBudget","namespace":"ml","pod":"p"},"annotations":{},"startsAt":"2026-11-28T10:00:00Z","endsAt":"0001-01-01T00:00:00Z","fingerprint":"0fa1e0fa1e0fa1e0"}]}'
    expect_eq "$name: the webhook takes Alertmanager's alert with the rendered Secret's token" \
        '200 {"accepted":1}' "$(curl -s -w ' %{http_code}' -H "Authorization: Bearer $(cat "$TMP/$name.webhook-token")" \
        --data-binary "$alert" "http://127.0.0.1:$W_PORT/webhook" | awk '{print $NF, $1}')"
    expect_eq "$name: ... and refuses another token (401)" 401 \
        "$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer not-the-token' \
        --data-binary "$alert" "http://127.0.0.1:$W_PORT/webhook")"
    kill -TERM "$W_PID"
    wait_for 10 holder_is "$lease" "" && pass "$name: SIGTERM hands the Lease back" ||
        fail "$name: SIGTERM hands the Lease back" "holder '$(holder "$lease")'"
    wait "$W_PID"
    expect_eq "$name: serve exits 0 on SIGTERM" 0 "$?"
    expect_eq "$name: no request of its ServiceAccount was refused (401/403)" "" "$(refused "$CP_SA_SERVE")"
}

# --- deploy/ alone: everything applies; its placeholder token stops the watchdog ----
fresh_cluster
render base "$TMP/deploy"
apply base Namespace ServiceAccount Role RoleBinding ClusterRole ClusterRoleBinding Secret Service StatefulSet DaemonSet
if watchdog base; then
    wait_for 10 sh -c "! kill -0 $W_PID" || kill "$W_PID"
fi
wait "$W_PID" 2>/dev/null
rc=$?
if [ "$rc" != 0 ] && grep -q 'holds the placeholder token deploy/ ships' "$W_LOG"; then
    pass "base: the placeholder token stops serve (exit $rc), saying so"
else
    fail "base: the placeholder token stops serve, saying so" "exit $rc: $(tail -3 "$W_LOG")"
fi

# --- the prometheus-operator overlay, on a cluster with the operator's CRDs ----------
fresh_cluster
if out=$(kc apply --server-side -f "$GVW_MONITORING/crds/" 2>&1) &&
    kc wait --for condition=Established --timeout 30s -f "$GVW_MONITORING/crds/" >/dev/null 2>&1; then
    pass "prometheus-operator: the operator's own CRDs ($(basename "$GVW_MONITORING")) are established"
else
    cp_abort "prometheus-operator: the operator's CRDs are established" "$out"
fi
PO=prometheus-operator
render "$PO" "$TMP/deploy/overlays/$PO"
apply "$PO" Namespace ServiceAccount Role RoleBinding ClusterRole ClusterRoleBinding Secret Service \
    StatefulSet DaemonSet NetworkPolicy ServiceMonitor PrometheusRule AlertmanagerConfig
leads "$PO"
customised "$PO"
# The AlertmanagerConfig's webhook reads the Secret the StatefulSet mounts, in
# the same namespace, and the token is stored once in the whole cluster.
amc=$(kc get alertmanagerconfigs.monitoring.coreos.com -A -o json)
expect_eq "$PO: the AlertmanagerConfig's bearer token is the watchdog's own Secret ($W_SECRET)" \
    "$W_NS/$W_SECRET/token" \
    "$(jq -r '.items[0] | "\(.metadata.namespace)/\(.spec.receivers[0].webhookConfigs[0].httpConfig.authorization.credentials | "\(.name)/\(.key)")"' <<<"$amc")"
token_b64=$(base64 -w0 <"$TMP/$PO.webhook-token")
expect_eq "$PO: no copy of the token: one Secret in the cluster holds it" 1 \
    "$(kc get secrets -A -o json | jq --arg t "$token_b64" '[.items[] | select(.data // {} | to_entries | any(.value == $t))] | length')"
# Each ServiceMonitor selects a Service in its namespaces, by a port it has.
for sm in $(kc get servicemonitors.monitoring.coreos.com -A -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name}{"\n"}{end}'); do
    smj=$(kc get servicemonitors.monitoring.coreos.com -n "${sm%/*}" "${sm#*/}" -o json)
    sel=$(jq -r '.spec.selector.matchLabels | to_entries | map("\(.key)=\(.value)") | join(",")' <<<"$smj")
    got=""
    for ns in $(jq -r '.spec.namespaceSelector.matchNames[]' <<<"$smj"); do
        got+=$(kc get services -n "$ns" -l "$sel" -o json |
            jq -r --argjson sm "$smj" '.items[] | select([.spec.ports[].name] | index($sm.spec.endpoints[0].port)) | "\(.metadata.namespace)/\(.metadata.name)"')
    done
    [ -n "$got" ] && pass "$PO: ServiceMonitor $sm selects Service $got by its port $(jq -r '.spec.endpoints[0].port' <<<"$smj")" ||
        fail "$PO: ServiceMonitor $sm selects a Service" "selector $sel"
done
expect_eq "$PO: the exporter's ServiceMonitor keeps the tenants' labels (honorLabels)" true \
    "$(kc get servicemonitors.monitoring.coreos.com -n gpu-vram-watchdog-exporter gpu-vram-watchdog-exporter -o jsonpath='{.spec.endpoints[0].honorLabels}')"
# The PrometheusRule the server stored is what (upstream) promtool accepts.
kc get prometheusrules.monitoring.coreos.com -n gpu-vram-watchdog gpu-vram-watchdog -o json |
    jq '{groups: .spec.groups}' >"$TMP/po-rules.json"
python3 -c 'import json, sys, yaml; yaml.safe_dump(json.load(open(sys.argv[1])), open(sys.argv[2], "w"))' \
    "$TMP/po-rules.json" "$TMP/po-rules.yml"
out=$("$PROMTOOL" check rules "$TMP/po-rules.yml" 2>&1) &&
    pass "$PO: the stored PrometheusRule's groups pass promtool check rules ($(grep -o 'SUCCESS: [0-9]* rules' <<<"$out"))" ||
    fail "$PO: the stored PrometheusRule passes promtool check rules" "$out"

# --- the plain-prometheus overlay, on a cluster that has Alertmanager's namespace ----
fresh_cluster
PP=plain-prometheus
render "$PP" "$TMP/deploy/overlays/$PP"
# Without Alertmanager's namespace the apply fails, as deploy/README.md says
# (a server-side dry run: the cluster stays fresh).
out=$(kc apply --server-side --dry-run=server --field-manager=gvw-overlay-test -f "$TMP/$PP.yaml" 2>&1)
expect_contains "$PP: without Alertmanager's namespace the apply says it is missing" \
    'namespaces "monitoring" not found' "$out"
kc create namespace monitoring >/dev/null || cp_abort "the monitoring namespace (Alertmanager's) is made"
apply "$PP" Namespace ServiceAccount Role RoleBinding ClusterRole ClusterRoleBinding Secret Service \
    StatefulSet DaemonSet NetworkPolicy
leads "$PP"
customised "$PP"
# Alertmanager's Secret: the one the route's credentials_file reads (mounted
# under /etc/alertmanager/secrets/NAME), holding the watchdog's token.
cf=$(python3 -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["receivers"][0]["webhook_configs"][0]["http_config"]["authorization"]["credentials_file"])' \
    "$TMP/deploy/overlays/$PP/alertmanager-route.yml")
am_secret=$(basename "$(dirname "$cf")")
expect_eq "$PP: Alertmanager's Secret (monitoring/$am_secret, the credentials_file's folder) holds the watchdog's token" \
    "$(cat "$TMP/$PP.webhook-token")" \
    "$(kc get secret -n monitoring "$am_secret" -o json 2>&1 | jq -r --arg k "$(basename "$cf")" '.data[$k] // empty' | base64 -d)"
{
    printf 'rule_files: ["%s"]\nscrape_configs:\n' "$GVW_SOURCE_DIR/rules/gpu-vram-watchdog.rules.yml"
    sed 's/^/  /' "$TMP/deploy/overlays/$PP/prometheus-scrape.yml"
} >"$TMP/prometheus.yml"
out=$("$PROMTOOL" check config "$TMP/prometheus.yml" 2>&1) &&
    pass "$PP: prometheus-scrape.yml (with the shipped rules) passes promtool check config ($("$PROMTOOL" --version 2>&1 | head -n1 | cut -d' ' -f1-3))" ||
    fail "$PP: prometheus-scrape.yml passes promtool check config" "$out"

discard
stamp "overlay test done in $(($(date +%s) - T_START)) s, $CLUSTERS clusters"
finish
