#!/usr/bin/env bash
# test_port_retry.sh -- start_on_free_port (tests/lib/harness.sh) when a parallel test took the port.
#
# A real Prometheus plays the other test's server on the port free_port hands out
# first: our Prometheus and our Alertmanager must notice that the "ready" is not
# theirs (theirs exited on the bind) and come up on another port; with every port
# taken the helper says "NAME becomes ready" failed. 127.0.0.1 only.
source "$(dirname "$0")/../lib/harness.sh"

for tool in prometheus prometheus-alertmanager curl jq; do
    command -v "$tool" >/dev/null || { fail "tool $tool is installed" "install it (scripts/install-deps.sh)"; finish; exit 1; }
done

printf 'global: {scrape_interval: 1s}\n' >"$TMP/other.yml"
start_on_free_port "the other test's Prometheus" "$TMP/other.log" \
    prometheus --config.file="$TMP/other.yml" --storage.tsdb.path="$TMP/other" \
    --web.listen-address=127.0.0.1:@PORT@ || { finish; exit 1; }
TAKEN=$STARTED_PORT

# free_port hands out the taken port first (or always, with ALWAYS_TAKEN=1).
eval "real_$(declare -f free_port)"
echo 0 >"$TMP/handed"
free_port() {
    local n
    n=$(cat "$TMP/handed")
    echo $((n + 1)) >"$TMP/handed"
    if [ "$n" -eq 0 ] || [ "${ALWAYS_TAKEN:-0}" = 1 ]; then echo "$TAKEN"; else real_free_port; fi
}

printf 'global: {scrape_interval: 1s}\n' >"$TMP/ours.yml"
start_on_free_port Prometheus "$TMP/prom.log" \
    prometheus --config.file="$TMP/ours.yml" --storage.tsdb.path="$TMP/ours" \
    --web.listen-address=127.0.0.1:@PORT@
expect_eq "Prometheus was offered the taken port, then another" 2 "$(cat "$TMP/handed")"
expect_eq "Prometheus runs on the other port" "true true" \
    "$([ "${STARTED_PORT:-$TAKEN}" != "$TAKEN" ] && echo true) $(kill -0 "${STARTED_PID:-0}" 2>/dev/null && echo true)"
expect_eq "and the server there is ours (its storage path)" "$TMP/ours" \
    "$(curl -s "http://127.0.0.1:${STARTED_PORT:-1}/api/v1/status/flags" | jq -r '.data["storage.tsdb.path"]')"

echo 0 >"$TMP/handed"
cat >"$TMP/am.yml" <<YML
route: {receiver: port-retry-$$}
receivers: [{name: port-retry-$$}]
YML
start_on_free_port Alertmanager "$TMP/am.log" \
    prometheus-alertmanager --config.file="$TMP/am.yml" --storage.path="$TMP/am" \
    --web.listen-address=127.0.0.1:@PORT@ --cluster.listen-address=
expect_eq "Alertmanager was offered the taken port, then another" 2 "$(cat "$TMP/handed")"
expect_contains "and the Alertmanager there is ours (its receiver)" "port-retry-$$" \
    "$(curl -s "http://127.0.0.1:${STARTED_PORT:-1}/api/v2/status" | jq -r .config.original)"

echo 0 >"$TMP/handed"
out=$(ALWAYS_TAKEN=1 start_on_free_port Prometheus "$TMP/prom3.log" \
    prometheus --config.file="$TMP/ours.yml" --storage.tsdb.path="$TMP/ours3" \
    --web.listen-address=127.0.0.1:@PORT@ 2>/dev/null; echo "rc $?")
expect_eq "with every port taken it gives up after 3 ports" 3 "$(cat "$TMP/handed")"
expect_contains "and says Prometheus did not become ready" "FAIL - Prometheus becomes ready" "$out"
expect_contains "and returns 1" "rc 1" "$out"
finish
