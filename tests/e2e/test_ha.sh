#!/usr/bin/env bash
# test_ha.sh -- two `serve` replicas behind one Lease (SPEC "High availability"), on
# loopback: gvw-sim plays the API server (its Leases: tests/fake/lease_api.c, with
# faults on demand) and a GPU node short of VRAM from the start (tests/sim/scenarios/
# ha.json), the real exporter reads it, real Prometheus scrapes it.
#
# Asserted: exactly one replica leads and the other's /readyz is 503 naming it
# (/healthz 200 on both); a webhook that reaches the follower is stored and answered
# and decides nothing; a fencing write that fails means no eviction (the decision
# ends failed, naming the Lease); a fence that succeeds evicts, and the Lease records
# the act and the brakes; SIGTERM hands over within the retry period; the new leader
# holds the node back inside the old leader's SETTLE window; `audit --db A --db B`
# is one history naming each replica. 127.0.0.1 only.
source "$(dirname "$0")/../lib/harness.sh"
source "$(dirname "$0")/../lib/stack.sh"

SCENARIO="$GVW_SOURCE_DIR/tests/sim/scenarios/ha.json"
ML=immich-ml-7d9c6b5f4d-x8k2p
NS=gpu-vram-watchdog
LEASE="$NS/gpu-vram-watchdog"

for tool in prometheus curl jq; do
    command -v "$tool" >/dev/null || { echo "skipped: $tool is not installed"; exit 77; }
done

stack_sim "$SCENARIO"
stack_exporter gpu-node-1
stack_prometheus
promq() { curl -s "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$1"; }
scraped() { promq 'gpu_memory_free_bytes{node="gpu-node-1"}' | jq -e '.data.result | length == 1'; }
wait_for 30 scraped || fail "Prometheus scrapes the exporter" "$(tail -3 "$TMP/prom.log")"

# replica NAME -- one `serve` with leader election; sets PORT_<NAME>, PID_<NAME>.
replica() {
    start_serve "$TMP/$1.log" WEBHOOK_AUTH=none AUDIT_DB="$TMP/$1.db" DRY_RUN=false \
        SETTLE=30s KUBE_API_URL="$SIM" PROMETHEUS_URL="http://127.0.0.1:$PROM_PORT" \
        USED_QUERY='sum by (namespace, pod) (gpu_pod_memory_used_bytes{node="$node"})' \
        ADVERTISE_INTERVAL=0 LEADER_ELECTION=true POD_NAME="$1" POD_NAMESPACE="$NS" ||
        { finish; exit 1; }
    printf -v "PORT_${1//-/_}" %s "$SERVE_PORT"
    printf -v "PID_${1//-/_}" %s "$SERVE_PID"
}
port() { local v="PORT_${1//-/_}"; echo "${!v}"; }
pid() { local v="PID_${1//-/_}"; echo "${!v}"; }
code() { curl -s -o "$TMP/body" -w '%{http_code}' "http://127.0.0.1:$(port "$1")$2"; }
metric() { curl -s "http://127.0.0.1:$(port "$1")/metrics" | awk -v m="$2" '$1 == m { print $2 }'; }
lease() { curl -s "$SIM/sim/lease" | jq -c --arg k "$LEASE" '.[$k]'; }
webhook() { # REPLICA: one firing GPUVRAMLow for gpu-node-1
    curl -s -o "$TMP/body" -w '%{http_code}' -H 'Content-Type: application/json' \
        --data '{"version":"4","status":"firing","alerts":[{"status":"firing","labels":{"alertname":"GPUVRAMLow","node":"gpu-node-1","severity":"critical"},"fingerprint":"5e1f0c0ffee0ba11"}]}' \
        "http://127.0.0.1:$(port "$1")/webhook"
}
rows() { "$GVW_BINARY" audit --db "$TMP/$1.db" --format json --limit 0; }
finished() { rows "$1" | jq -e --argjson n "$2" '[.[] | select(.result != "in_progress")] | length >= $n'; }
evictions() { curl -s "$SIM/sim/events" | jq '[.[] | select(.path | endswith("/eviction"))] | length'; }

# 1. Both start at once: exactly one leads.
replica gvw-a
replica gvw-b
one_leads() { [ "$(code gvw-a /readyz)$(code gvw-b /readyz)" = 200503 ] || [ "$(code gvw-a /readyz)$(code gvw-b /readyz)" = 503200 ]; }
if wait_for 15 one_leads; then
    stamp "one replica leads"
    pass "exactly one replica is ready (leads)"
else
    fail "exactly one replica leads" "$(code gvw-a /readyz) $(code gvw-b /readyz)"
fi
if [ "$(code gvw-a /readyz)" = 200 ]; then L=gvw-a F=gvw-b; else L=gvw-b F=gvw-a; fi
expect_eq "the Lease names the leader" "$L" "$(lease | jq -r .spec.holderIdentity)"
expect_eq "with client-go's lease duration" 15 "$(lease | jq -r .spec.leaseDurationSeconds)"
expect_eq "renewTime a MicroTime with six fractional digits" true \
    "$(lease | jq '.spec.renewTime | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{6}Z$")')"
code "$F" /readyz >/dev/null
expect_eq "the follower's /readyz names the leader" "not ready: following; the leader is $L" "$(cat "$TMP/body")"
expect_eq "/healthz is 200 on the leader" 200 "$(code "$L" /healthz)"
expect_eq "/healthz is 200 on the follower" 200 "$(code "$F" /healthz)"
expect_eq "gpu_vram_watchdog_leader is 1 on the leader" 1 "$(metric "$L" gpu_vram_watchdog_leader)"
expect_eq "and 0 on the follower" 0 "$(metric "$F" gpu_vram_watchdog_leader)"
rv1=$(lease | jq -r .metadata.resourceVersion)
sleep 2.5
expect_eq "the leader renews (a PUT with the version it read: the version moves)" true \
    "$([ "$(lease | jq -r .metadata.resourceVersion)" -gt "$rv1" ] && echo true || echo false)"
# The new leader looked at the alerts still firing (none: no rules loaded).
expect_contains "the new leader read ALERTS from Prometheus" '"msg":"new leader: deciding afresh for the alerts still firing","firing":"0"' \
    "$(cat "$TMP/$L.log")"

# 2. A webhook that reaches the follower is stored, answered, and decides nothing.
expect_eq "the follower answers the webhook 200" 200 "$(webhook "$F")"
expect_eq "as usual" '{"accepted":1}' "$(cat "$TMP/body")"
sleep 2
expect_eq "the follower stored the alert" 1 \
    "$("$GVW_BINARY" audit alerts --db "$TMP/$F.db" --format json | jq length)"
expect_eq "and decided nothing" 0 "$(rows "$F" | jq length)"
expect_eq "nothing was evicted" 0 "$(evictions)"
expect_contains "it says why" "alert not decided: this replica follows" "$(cat "$TMP/$F.log")"

# 3. The fencing write fails: no eviction.
curl -s --data 'fence:500' "$SIM/sim/lease-fault" >/dev/null
expect_eq "the leader answers the webhook" 200 "$(webhook "$L")"
wait_for 20 finished "$L" 1 || fail "the leader's decision finishes" "$(tail -3 "$TMP/$L.log")"
d=$(rows "$L" | jq '.[0]')
expect_eq "the decision failed" failed "$(echo "$d" | jq -r .result)"
expect_contains "its error names the Lease" "lease: the act could not be recorded in Lease $LEASE" "$(echo "$d" | jq -r .error)"
expect_contains "and says nothing was sent" "was not sent" "$(echo "$d" | jq -r .reason)"
expect_eq "it names the replica" "$L" "$(echo "$d" | jq -r .replica)"
expect_eq "no eviction reached the API server" 0 "$(evictions)"
curl -s --data 'none' "$SIM/sim/lease-fault" >/dev/null
still() { [ "$(code "$L" /readyz)" = 200 ]; }
wait_for 5 still && pass "the leader still leads after the failed fence" ||
    fail "the leader still leads after the failed fence" "$(cat "$TMP/body")"

# 4. The fence succeeds: one eviction, recorded in the Lease with the brakes.
expect_eq "the leader answers a second webhook" 200 "$(webhook "$L")"
wait_for 40 finished "$L" 2 || fail "the second decision finishes" "$(tail -3 "$TMP/$L.log")"
d=$(rows "$L" | jq '.[0]')
expect_eq "recycled" recycled "$(echo "$d" | jq -r .result)"
expect_eq "one eviction" 1 "$(evictions)"
act=$(lease | jq -r '.metadata.annotations["gpu-vram-watchdog/last-act"]')
expect_eq "the Lease records the act" "$L evict immich/$ML gpu-node-1" \
    "$(echo "$act" | jq -r '"\(.replica) \(.act) \(.namespace)/\(.pod) \(.node)"')"
brakes=$(lease | jq -r '.metadata.annotations["gpu-vram-watchdog/brakes"]')
expect_eq "and the SETTLE window it opened" "gpu-node-1 immich/$ML" \
    "$(echo "$brakes" | jq -r '.settle[0] | "\(.node) \(.victim)"')"
expect_eq "and the hour's recycle" 1 "$(echo "$brakes" | jq '.recycles_ms | length')"

# 5. SIGTERM: the leader releases the Lease and the other takes over at once.
t0=$(date +%s%N)
kill -TERM "$(pid "$L")"
took_over() { [ "$(code "$F" /readyz)" = 200 ]; }
if wait_for 10 took_over; then
    ms=$((($(date +%s%N) - t0) / 1000000))
    stamp "$F took over ${ms} ms after SIGTERM"
    [ "$ms" -le 3000 ] && pass "SIGTERM hands over within the retry period (${ms} ms)" ||
        fail "SIGTERM hands over within the retry period" "${ms} ms"
else
    fail "the follower takes over after SIGTERM" "$(code "$F" /readyz) $(cat "$TMP/body")"
fi
wait "$(pid "$L")" 2>/dev/null
expect_contains "the old leader released it" '"msg":"releasing the Lease"' "$(cat "$TMP/$L.log")"
expect_eq "the Lease names the new leader" "$F" "$(lease | jq -r .spec.holderIdentity)"
expect_eq "one more transition" 1 "$(lease | jq -r .spec.leaseTransitions)"
expect_eq "gpu_vram_watchdog_leader_transitions_total counts it" 1 \
    "$(metric "$F" gpu_vram_watchdog_leader_transitions_total)"

# 6. The brakes survived: the new leader holds the node back.
expect_eq "the new leader answers a webhook" 200 "$(webhook "$F")"
wait_for 20 finished "$F" 1 || fail "the new leader decides" "$(tail -3 "$TMP/$F.log")"
d=$(rows "$F" | jq '.[0]')
expect_eq "coalesced" coalesced "$(echo "$d" | jq -r .result)"
expect_contains "inside the old leader's SETTLE window" "inside the SETTLE window after recycling immich/$ML" \
    "$(echo "$d" | jq -r .reason)"
expect_eq "still one eviction in all" 1 "$(evictions)"

# 7. One history: both replicas' decisions, newest first, each naming its replica.
h=$("$GVW_BINARY" audit --db "$TMP/gvw-a.db" --db "$TMP/gvw-b.db" --format json)
expect_eq "audit --db A --db B lists both replicas' decisions, newest first" \
    "$F:coalesced $L:recycled $L:failed" "$(echo "$h" | jq -r 'map("\(.replica):\(.result)") | join(" ")')"
t=$("$GVW_BINARY" audit --db "$TMP/gvw-a.db" --db "$TMP/gvw-b.db")
expect_contains "the table has a REPLICA column" "REPLICA" "$t"
# The kubectl pipeline of the README: another replica's listing on stdin.
h=$("$GVW_BINARY" audit --db "$TMP/$L.db" --format json | "$GVW_BINARY" audit --db "$TMP/$F.db" --merge - --format json)
expect_eq "audit --merge - reads another replica's listing" 3 "$(echo "$h" | jq length)"

finish
