#!/usr/bin/env bash
# answers.sh -- sim_answers: gvw-sim answers evictions and deletes as a real API server
# does (SPEC "A real API server"): a DELETE's options from its body alone, the forms a
# PodDisruptionBudget refuses in (429, 403, 500), load shedding as plain text with
# Retry-After. Usage: answers.sh path/to/gvw-sim
set -u

SIM=${1:?usage: answers.sh GVW_SIM}
if ! command -v curl >/dev/null || ! command -v jq >/dev/null; then
  echo "skipped: curl or jq is not installed"
  exit 77 # ctest's SKIP_RETURN_CODE
fi
TMP=$(mktemp -d)
PID=""
passed=0
failed=0
cleanup() {
  [ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

ok() { echo "ok - $1"; passed=$((passed + 1)); }
not_ok() { echo "not ok - $1"; failed=$((failed + 1)); }
check() { # check DESCRIPTION COMMAND...
  local what=$1
  shift
  if "$@"; then ok "$what"; else not_ok "$what"; fi
}

cat >"$TMP/scenario.json" <<'JSON'
{"time_scale": 1000, "throttle": {"count": 2, "retry_after": "3"},
 "pods": [
  {"namespace": "a", "name": "plain-x1", "uid": "00000000-0000-4000-8000-00000000000a"},
  {"namespace": "a", "name": "budget-x1", "pdb": {"name": "budget-pdb", "desired_healthy": 2, "current_healthy": 2}},
  {"namespace": "a", "name": "processing-x1", "pdb": {"name": "processing-pdb", "refuse": "processing"}},
  {"namespace": "a", "name": "negative-x1", "pdb": {"name": "negative-pdb", "refuse": "negative"}},
  {"namespace": "a", "name": "unconfirmed-x1", "pdb": {"name": "unconfirmed-pdb", "refuse": "unconfirmed"}},
  {"namespace": "a", "name": "multiple-x1", "pdb": {"name": "multiple-pdb", "refuse": "multiple"}}]}
JSON
"$SIM" --scenario "$TMP/scenario.json" --listen 127.0.0.1:0 >"$TMP/sim.out" 2>"$TMP/sim.err" &
PID=$!
PORT=""
for _ in $(seq 1 100); do
  PORT=$(sed -n 's/^listening 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$TMP/sim.out")
  [ -n "$PORT" ] && break
  sleep 0.05
done
[ -n "$PORT" ] || { echo "not ok - the sim did not start: $(cat "$TMP/sim.err")"; exit 1; }
API=http://127.0.0.1:$PORT/api/v1/namespaces/a/pods

# req METHOD PATH [BODY]: body in $TMP/body, headers in $TMP/head, status in CODE.
req() {
  local args=(-s -D "$TMP/head" -o "$TMP/body" -w '%{http_code}' -X "$1")
  [ $# -ge 3 ] && args+=(-H 'Content-Type: application/json' --data-binary "$3")
  CODE=$(curl "${args[@]}" "$API$2") || CODE=000
}
header() { tr -d '\r' <"$TMP/head" | sed -n "s/^$1: //Ip"; }
eviction() { # eviction NAME [DELETEOPTIONS-EXTRA]
  printf '{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"%s","namespace":"a"},"deleteOptions":{%s}}' "$1" "${2:-}"
}
rv() { curl -s "$API/plain-x1" | jq -r .metadata.resourceVersion; }
alive() { [ "$(curl -s -o /dev/null -w '%{http_code}' "$API/plain-x1")" = 200 ]; }

# --- load shedding: the first two evictions or DELETEs, whatever they name -----
req POST /plain-x1/eviction "$(eviction plain-x1)"
check "load shedding: 429" [ "$CODE" = 429 ]
check "  ... in plain text, as max-in-flight and APF write it" \
  [ "$(cat "$TMP/body")" = "Too many requests, please try again later." ]
check "  ... Content-Type text/plain" [ "$(header Content-Type)" = "text/plain; charset=utf-8" ]
check "  ... Retry-After as the scenario says" [ "$(header Retry-After)" = 3 ]
req DELETE /plain-x1
check "a DELETE is shed too" [ "$CODE" = 429 ]
check "  ... and nothing was touched" alive
req GET /plain-x1
check "reads are never shed" [ "$CODE" = 200 ]

# --- a DELETE's options come from its body alone when it has one ---------------
before=$(rv)
req DELETE /plain-x1 '{"apiVersion":"v1","kind":"DeleteOptions","dryRun":["All"],"preconditions":{"uid":"00000000-0000-4000-8000-00000000000a"}}'
check "DELETE, dryRun in the body, no query: 200" [ "$CODE" = 200 ]
check "  ... the pod is untouched (same resourceVersion)" [ "$(rv)" = "$before" ]
req "DELETE" "/plain-x1?dryRun=All"
check "DELETE ?dryRun=All without a body is a dry run too" eval '[ "$CODE" = 200 ] && [ "$(rv)" = "$before" ]'
req "DELETE" "/plain-x1?dryRun=All" '{"apiVersion":"v1","kind":"DeleteOptions","dryRun":["Bogus"]}'
check "a body's bad dryRun is refused (400), even with a good query" [ "$CODE" = 400 ]
req POST "/plain-x1/eviction?dryRun=All" "$(eviction plain-x1 '"dryRun":["All"]')"
check "an eviction with dryRun in both the query and deleteOptions: 201" [ "$CODE" = 201 ]
check "  ... and still a dry run" alive

# --- PodDisruptionBudget refusals, in each form eviction.go writes --------------
req POST /budget-x1/eviction "$(eviction budget-x1)"
check "budget: 429 with the DisruptionBudget cause" eval \
  '[ "$CODE" = 429 ] && jq -e ".reason == \"TooManyRequests\" and .details.causes[0].reason == \"DisruptionBudget\" and (.details.causes[0].message | contains(\"needs 2 healthy pods and has 2 currently\"))" "$TMP/body" >/dev/null'
check "  ... and no Retry-After (retryAfterSeconds 0)" [ -z "$(header Retry-After)" ]
req POST /processing-x1/eviction "$(eviction processing-x1)"
check "processing: 429, still being processed, Retry-After 10" eval \
  '[ "$CODE" = 429 ] && [ "$(header Retry-After)" = 10 ] && jq -e ".details.retryAfterSeconds == 10 and (.details.causes[0].message | contains(\"is still being processed\"))" "$TMP/body" >/dev/null'
req POST /negative-x1/eviction "$(eviction negative-x1)"
check "negative: 403 naming the poddisruptionbudget" eval \
  '[ "$CODE" = 403 ] && jq -e ".reason == \"Forbidden\" and .details.kind == \"poddisruptionbudget\" and .details.group == \"policy\" and (.message | contains(\"pdb disruptions allowed is negative\"))" "$TMP/body" >/dev/null'
req POST /unconfirmed-x1/eviction "$(eviction unconfirmed-x1)"
check "unconfirmed: 403, too many evictions not confirmed" eval \
  '[ "$CODE" = 403 ] && jq -e "(.message | contains(\"too many evictions not confirmed\")) and .details.causes[0].reason == \"DisruptionBudget\"" "$TMP/body" >/dev/null'
req POST /multiple-x1/eviction "$(eviction multiple-x1)"
check "multiple: 500 more than one PodDisruptionBudget" eval \
  '[ "$CODE" = 500 ] && jq -e ".message == \"This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.\" and .code == 500" "$TMP/body" >/dev/null'
req DELETE /negative-x1
check "a DELETE meets no budget" [ "$CODE" = 200 ]

# --- the query alone is ignored when a body is sent: this one really deletes ----
req "DELETE" "/plain-x1?dryRun=All" '{"apiVersion":"v1","kind":"DeleteOptions","preconditions":{"uid":"00000000-0000-4000-8000-00000000000a"}}'
check "DELETE ?dryRun=All with a body that does not say dryRun: 200" [ "$CODE" = 200 ]
check "  ... and the pod is gone, as on a real server" eval '! alive'

printf '{"pods": [{"namespace": "a", "name": "p-1", "pdb": {"name": "x", "refuse": "maybe"}}]}' >"$TMP/bad.json"
"$SIM" --scenario "$TMP/bad.json" >/dev/null 2>"$TMP/bad.err"
rc=$?
check "an unknown pdb.refuse is refused (exit 2, named)" eval '[ $rc -eq 2 ] && grep -q refuse "$TMP/bad.err"'

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
