#!/usr/bin/env bash
# test_check_nodes.sh -- `check` without --node when the GPU nodes cannot be known prints
# the decision serve would record for an alert without a node label (SPEC "A decision":
# "if the nodes cannot be listed: skipped_kube with an empty node"), as one decision
# (JSON: an array), exits 1 (SPEC: "could not look" is not "nothing to do"), and
# records nothing.
source "$(dirname "$0")/../lib/harness.sh"

# One decision of the JSON array: "node result gpu id victim" and the reason.
summary() { jq -r 'if type == "array" then "\(length) \(.[0].node|@json) \(.[0].result) \(.[0].gpu) \(.[0].id) \(.[0].victim)" else "not an array" end'; }

# No API server at all (outside a cluster, KUBE_API_URL unset).
out=$(env -u KUBERNETES_SERVICE_HOST -u KUBE_API_URL PROMETHEUS_URL=http://127.0.0.1:1 \
    "$GVW_BINARY" check --format json 2>"$TMP/err"); rc=$?
expect_eq "no API server: check exits 1 (could not judge)" 1 "$rc"
expect_eq "no API server: one skipped_kube decision with an empty node" \
    '1 "" skipped_kube null null null' "$(printf '%s' "$out" | summary)"
expect_contains "no API server: the reason says why" "no Kubernetes API server" \
    "$(printf '%s' "$out" | jq -r '.[0].reason')"
expect_eq "no API server: stderr says the decision could not be judged" \
    "gpu-vram-watchdog: check: 1 of 1 decisions could not be judged (skipped_telemetry or skipped_kube: see each reason)" \
    "$(cat "$TMP/err")"

# An API server that cannot be reached (a closed loopback port).
port=$(free_port)
out=$(PROMETHEUS_URL=http://127.0.0.1:1 KUBE_API_URL="http://127.0.0.1:$port" \
    HTTP_CONNECT_TIMEOUT=1s HTTP_TIMEOUT=2s "$GVW_BINARY" check --format json 2>"$TMP/err"); rc=$?
expect_eq "nodes cannot be listed: check exits 1" 1 "$rc"
expect_eq "nodes cannot be listed: one skipped_kube decision with an empty node" \
    '1 "" skipped_kube null null null' "$(printf '%s' "$out" | summary)"
expect_contains "nodes cannot be listed: the error is the API's" "127.0.0.1" \
    "$(printf '%s' "$out" | jq -r '.[0].error')"
out=$(PROMETHEUS_URL=http://127.0.0.1:1 KUBE_API_URL="http://127.0.0.1:$port" \
    "$GVW_BINARY" check 2>"$TMP/err"); rc=$?
expect_eq "table: check exits 1" 1 "$rc"
expect_contains "table: the decision is printed" "skipped_kube" "$out"

# An option without its value is a usage error that says so.
for cmd in check budgets; do
    for opt in --node --format; do
        out=$("$GVW_BINARY" $cmd $opt 2>&1); rc=$?
        expect_eq "$cmd $opt without a value: exit 2, one line saying so" \
            "2 gpu-vram-watchdog: $cmd: $opt needs a value" "$rc $out"
    done
done

# No node matches GPU_NODE_SELECTOR (the simulator's node does not carry the label).
if [ -n "${GVW_SIM:-}" ]; then
    "$GVW_SIM" --scenario "$GVW_SOURCE_DIR/tests/sim/scenarios/incident-2026-06-02.json" \
        --listen 127.0.0.1:0 >"$TMP/sim.out" 2>"$TMP/sim.err" &
    PIDS+=("$!")
    wait_for 10 grep -q '^listening' "$TMP/sim.out"
    sim=$(sed -n 's/^listening //p' "$TMP/sim.out")
    out=$(PROMETHEUS_URL=http://127.0.0.1:1 KUBE_API_URL="http://$sim" \
        GPU_NODE_SELECTOR=example.com/none=true "$GVW_BINARY" check --format json 2>"$TMP/err"); rc=$?
    expect_eq "no node matches: check exits 1" 1 "$rc"
    expect_eq "no node matches: one skipped_kube decision with an empty node" \
        '1 "" skipped_kube null null null' "$(printf '%s' "$out" | summary)"
    expect_contains "no node matches: the reason names the selector" \
        "GPU_NODE_SELECTOR=example.com/none=true" "$(printf '%s' "$out" | jq -r '.[0].reason')"
    # With a node, check still looks at it (the simulator is its API server).
    out=$(PROMETHEUS_URL=http://127.0.0.1:1 KUBE_API_URL="http://$sim" \
        "$GVW_BINARY" check --format json 2>"$TMP/err"); rc=$?
    expect_eq "no telemetry: check exits 1" 1 "$rc"
    expect_eq "a matching node is looked at" '1 "gpu-node-1" skipped_telemetry null null null' \
        "$(printf '%s' "$out" | summary)"
    expect_eq "nothing was read: the decision object has free_source null" "true null" \
        "$(printf '%s' "$out" | jq -r '.[0] | "\(has("free_source")) \(.free_source)"')"
else
    fail "no node matches" "GVW_SIM is not set"
fi

finish
