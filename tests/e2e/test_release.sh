#!/usr/bin/env bash
# test_release.sh -- end to end, the second act: llama-swap runs away, is asked to unload, and stays.
#
# gvw-sim plays gpu-node-1 after the incident (tests/sim/scenarios/llama-swap-release.json):
# llama-swap declares its real unload route (gpu-vram-watchdog/release:
# 8080/api/models/unload, as deploy/examples/llama-swap.yaml does) and the sim serves
# it on the pod's own loopback IP. Its chat model grows past its 5000 MiB budget
# until free VRAM is below the floor. The real exporter, Prometheus and
# Alertmanager (shipped rules, short `for:`) deliver GPUVRAMLow to `serve`
# (enforcing), which asks llama-swap to release (SPEC "Cooperative release").
# Asserted: the POST reaches the pod IP, the memory comes back, the audit says
# `released` with the release {url, status 200, freed_mib > 0, seconds}, and the
# pod is NOT evicted (no eviction call, same UID). Everything stays on loopback.
#
# E2E_NARRATE=1 prints the narration (scripts/demo.sh uses it).
source "$(dirname "$0")/../lib/harness.sh"
source "$(dirname "$0")/../lib/stack.sh"

SCENARIO="$GVW_SOURCE_DIR/tests/sim/scenarios/llama-swap-release.json"
LLAMA=llama-swap-6b8f7c9d5-q4w7n
LLAMA_UID=8d2e4f6a-1b3c-4d5e-9f7a-2c4e6a8b0d13
stack_require_tools

# 1. The node, with llama-swap's unload route served on its pod IP.
say "Same node, an hour later. llama-swap now declares how to free VRAM without a restart:
  gpu-vram-watchdog/release: \"8080/api/models/unload\"  (llama-swap's own unload route)."
stack_sim "$SCENARIO"
llama_slot() { curl -s "$SIM/sim/state" | jq --arg n "$LLAMA" '.pods[] | select(.name == $n)'; }
POD_IP=$(llama_slot | jq -r .pod_ip)
URL="http://$POD_IP:8080/api/models/unload"
expect_eq "the sim serves llama-swap's unload route on its pod IP" "$URL" "$(llama_slot | jq -r .release.url)"
expect_eq "the API shows that loopback address as status.podIP" "$POD_IP" \
    "$(curl -s "$SIM/api/v1/namespaces/llm/pods/$LLAMA" | jq -r .status.podIP)"
stamp "simulator up at $SIM; llama-swap's pod IP is $POD_IP"

stack_exporter gpu-node-1
exporter_sees() { curl -s "http://127.0.0.1:$EXP_PORT/metrics" | grep -q "$1"; }
wait_for 10 exporter_sees "pod=\"$LLAMA\"" || fail "the exporter attributes llama-swap's VRAM"

# 2. serve, enforcing, with the default RELEASE_WAIT (20s).
stack_prometheus
stack_serve
stamp "gpu-vram-watchdog serve up on port $SERVE_PORT (DRY_RUN=false, RELEASE_WAIT 20s)"

# 3. Real Alertmanager, and Prometheus loads the shipped rules, short intervals.
stack_alerting
stamp "Prometheus (127.0.0.1:$PROM_PORT) and Alertmanager (127.0.0.1:$AM_PORT) up"
say "Now llama-swap loads a long context: its llama-server grows from 4300 towards 9000 MiB (budget 5000)..."

stack_wait_firing "GPUVRAMLow fires when llama-swap runs past its budget"

asked() { [ "$(llama_slot | jq '.release.asks')" -ge 1 ]; }
if wait_for 40 asked; then
    stamp "the watchdog asked: POST $URL"
    pass "the watchdog POSTs to llama-swap's pod IP"
else
    fail "the watchdog asks llama-swap to release" "$(tail -5 "$TMP/serve.log")"
fi
say "Before recycling anything, the watchdog asked llama-swap itself: POST $URL."

done_row() { "$GVW_BINARY" audit --db "$DB" --format json | jq -e '.[0].result != "in_progress"'; }
wait_for 40 done_row || fail "the decision completes" "$(tail -5 "$TMP/serve.log")"
d=$("$GVW_BINARY" audit --db "$DB" --format json --limit 0 |
    jq '[.[] | select(.trigger == "GPUVRAMLow" and .result != "coalesced")] | last')
stamp "the decision ended $(echo "$d" | jq -r .result)"
expect_eq "the audit records a release, not a recycle" released "$(echo "$d" | jq -r .result)"
expect_eq "victim llm/llama-swap" "llm/$LLAMA" "$(echo "$d" | jq -r '.victim | "\(.namespace)/\(.pod)"')"
expect_eq "its budget as declared (\"5k\")" 5000 "$(echo "$d" | jq -r .victim.budget_mib)"
expect_eq "free was below the floor" true "$(echo "$d" | jq '.free_mib < .floor_mib and .floor_mib == 1536')"
expect_eq "only llama-swap was eligible" "$LLAMA" "$(echo "$d" | jq -r '[.candidates[] | select(.eligible)] | map(.pod) | join(",")')"
expect_eq "release.url is the pod's own IP and the annotated route" "$URL" "$(echo "$d" | jq -r .release.url)"
expect_eq "release.status 200" 200 "$(echo "$d" | jq -r .release.status)"
expect_eq "release.freed_mib > 0 and free is back above the floor" true \
    "$(echo "$d" | jq '.release.freed_mib > 0 and .free_mib + .release.freed_mib >= .floor_mib')"
expect_eq "release.seconds is within RELEASE_WAIT" true "$(echo "$d" | jq '.release.seconds >= 0 and .release.seconds <= 20')"
expect_eq "enforcing, action as configured, verify null (nothing was recycled)" "evict false null" \
    "$(echo "$d" | jq -r '"\(.action) \(.dry_run) \(.verify)"')"

ev=$(curl -s "$SIM/sim/events")
expect_eq "no eviction or delete reached the API server" 0 \
    "$(echo "$ev" | jq '[.[] | select((.path | endswith("/eviction")) or .method == "DELETE")] | length')"
slot=$(llama_slot)
expect_eq "llama-swap is the same pod (same UID, never replaced)" "$LLAMA_UID alive 0" \
    "$(echo "$slot" | jq -r '"\(.uid) \(.state) \(.generation)"')"
expect_eq "asked once" 1 "$(echo "$slot" | jq -r .release.asks)"
expect_eq "and holds no VRAM now: its models are unloaded" 0 "$(echo "$slot" | jq -r '.used_mib | floor')"
# Events (SPEC "Kubernetes Events"): the sim logs every write, answered or not (it
# serves no events.k8s.io, so 404); if the receiver writes one, it says the release.
evs=$(echo "$ev" | jq '[.[] | select(.path | test("/events$"))]')
if [ "$(echo "$evs" | jq length)" -gt 0 ]; then
    expect_eq "the Event on llama-swap says GPUVRAMReleased" "GPUVRAMReleased $LLAMA" \
        "$(echo "$evs" | jq -r '.[0].body | "\(.reason) \(.regarding.name)"')"
fi

resolved() { "$GVW_BINARY" audit alerts --db "$DB" --format json | jq -e 'any(.[]; .alertname == "GPUVRAMLow" and .status == "resolved")'; }
if wait_for 60 resolved; then
    stamp "GPUVRAMLow resolved and Alertmanager delivered the resolution"
    pass "the alert resolves after the release"
else
    fail "the alert resolves" "Prometheus state: $(alert_state)"
fi
expect_eq "still no eviction after the alert resolved" 0 \
    "$(curl -s "$SIM/sim/events" | jq '[.[] | select(.path | endswith("/eviction"))] | length')"
expect_eq "no decision recycled anything" 0 "$("$GVW_BINARY" audit --db "$DB" --format json --result recycled | jq length)"
expect_contains "metrics count the release" 'gpu_vram_watchdog_decisions_total{result="released"} 1' \
    "$(curl -s "http://127.0.0.1:$SERVE_PORT/metrics")"

say "llama-swap unloaded its models and kept running: no restart, same pod. The audit:"
if [ "${E2E_NARRATE:-0}" = 1 ]; then
    "$GVW_BINARY" audit --db "$DB"
    echo
    "$GVW_BINARY" audit show "$(echo "$d" | jq -r .id)" --db "$DB"
fi
finish
