#!/usr/bin/env bash
# test_serve_http.sh -- `serve` on a loopback port: every status code of SPEC's HTTP table,
# a real Alertmanager delivery recorded and visible to `audit alerts` while serve runs,
# and a clean exit on SIGTERM.
source "$(dirname "$0")/../lib/harness.sh"

printf 's3cret-token\n' >"$TMP/token"
DB="$TMP/audit.db"
start_serve "$TMP/serve.log" WEBHOOK_TOKEN_FILE="$TMP/token" AUDIT_DB="$DB" || exit 1
AUTH=(-H "Authorization: Bearer s3cret-token" -H "Content-Type: application/json")
FIXTURE="$GVW_TEST_DATA/alertmanager-0.25-webhook.json"

expect_eq "GET /healthz is 200" 200 "$(http_code GET /healthz)"
expect_eq "GET /readyz is 200 once the store is open" 200 "$(http_code GET /readyz)"
http_code GET /metrics >/dev/null
expect_contains "decisions_total is there from start-up, at 0 per result" \
    'gpu_vram_watchdog_decisions_total{result="recycled"} 0' "$(cat "$TMP/body")"
expect_contains "with every one of SPEC's results" \
    'gpu_vram_watchdog_decisions_total{result="skipped_no_candidate"} 0' "$(cat "$TMP/body")"

# The seating chart with no decision yet says whether any alert came, and
# whether it was a trigger: "nothing happened" and "Alertmanager never reaches
# us" read differently.
expect_eq "GET / is 200 with no decision" 200 "$(http_code GET /)"
expect_contains "... and says no alert has come since start-up" \
    "No decisions yet; no alert received since start-up (" "$(cat "$TMP/body")"
for a in 'Watchdog firing' 'GPUVRAMLow resolved'; do
    jq -c --arg n "${a% *}" --arg s "${a#* }" \
        '.alerts[0].labels.alertname = $n | .alerts[0].status = $s | .status = $s' \
        "$FIXTURE" >"$TMP/other.json"
    expect_eq "an alert that starts no decision ($a) is taken" 200 \
        "$(http_code POST /webhook "${AUTH[@]}" --data-binary @"$TMP/other.json")"
done
http_code GET / >/dev/null
expect_contains "GET / then counts them, none a trigger" \
    "2 alerts received since start-up" "$(cat "$TMP/body")"
expect_contains "... and names what would be one" "none a firing trigger (GPUVRAMLow).</p>" \
    "$(cat "$TMP/body")"

code=$(http_code POST /webhook "${AUTH[@]}" --data-binary @"$FIXTURE")
expect_eq "a real 0.25 delivery with the token is 200" 200 "$code"
expect_eq "the answer counts the alerts" '{"accepted":1}' "$(cat "$TMP/body")"
expect_eq "the database file is created 0600" 600 "$(stat -c %a "$DB")"

out=$("$GVW_BINARY" audit alerts --db "$DB" --format json)
expect_contains "audit alerts shows it while serve runs" '"fingerprint": "cee90ef7ef51c1b3"' \
    "$(printf '%s' "$out" | sed 's/":"/": "/g')"
expect_contains "audit alerts shows its status" 'firing' "$out"

code=$(http_code POST /webhook -H "Content-Type: application/json" --data-binary @"$FIXTURE")
expect_eq "no token is 401" 401 "$code"
code=$(http_code POST /webhook -H "Authorization: Bearer s3cret-tokeN" --data-binary @"$FIXTURE")
expect_eq "a wrong token is 401" 401 "$code"
code=$(http_code POST /webhook -H "Authorization: Bearer s3cret-token-longer" --data-binary @"$FIXTURE")
expect_eq "a longer token is 401" 401 "$code"
code=$(http_code POST /webhook -H "Authorization: Basic czNjcmV0LXRva2Vu" --data-binary @"$FIXTURE")
expect_eq "basic auth is 401" 401 "$code"
# A flood of bad tokens must not flood the log: the first 401 is logged at
# once, later ones are summed into one line per 10 s (metrics count each).
expect_eq "four 401s in a row log one line, not four" 1 \
    "$(grep -c 'missing or wrong bearer token' "$TMP/serve.log")"
expect_eq "GET /webhook is 405" 405 "$(http_code GET /webhook "${AUTH[@]}")"
expect_eq "PUT /webhook is 405" 405 "$(http_code PUT /webhook "${AUTH[@]}" --data-binary '{}')"
expect_eq "POST /metrics is 405" 405 "$(http_code POST /metrics --data-binary x)"
# Every method but GET/HEAD on a read path is 405, not evhttp's 501 for the
# ones it does not route (TRACE, CONNECT, a made-up method).
for m in TRACE CONNECT FROB DELETE; do
    for p in /metrics /healthz /readyz /; do
        expect_eq "$m $p is 405" 405 "$(http_code "$m" "$p")"
    done
done
expect_contains "its Allow names GET and HEAD" "Allow: GET, HEAD" \
    "$(curl -s -i -X TRACE "http://127.0.0.1:$SERVE_PORT/healthz")"
expect_eq "FROB on an unknown path is 404" 404 "$(http_code FROB /nope)"
expect_eq "a GET with a body is 400, not 405 'use GET'" 400 \
    "$(http_code GET /healthz --data-binary x)"
expect_contains "and says why" "a GET or HEAD carries no body" "$(cat "$TMP/body")"


code=$(http_code POST /webhook "${AUTH[@]}" --data-binary 'not json')
expect_eq "garbage is 400" 400 "$code"
expect_contains "the 400 names the problem" '"error":"body is not valid JSON' "$(cat "$TMP/body")"
code=$(http_code POST /webhook "${AUTH[@]}" --data-binary '{"version":"3","alerts":[]}')
expect_eq "version 3 is 400" 400 "$code"
code=$(http_code POST /webhook "${AUTH[@]}" --data-binary '')
expect_eq "an empty body is 400" 400 "$code"
code=$(http_code POST /webhook "${AUTH[@]}" \
    --data-binary '{"alerts":[{"status":"pending","labels":{"alertname":"X"}}]}')
expect_eq "an unknown alert status is 400" 400 "$code"
expect_contains "the 400 says which alert" "alerts[0].status" "$(cat "$TMP/body")"
# The message quotes 64 bytes of the status: that cut lands inside an "é" (2 bytes
# each, the 33rd starts at byte 65). The answer is still the reason, as valid JSON.
status=$(printf 'x%.0s' 1; printf '\u00e9%.0s' $(seq 1 40))
code=$(http_code POST /webhook "${AUTH[@]}" \
    --data-binary "{\"alerts\":[{\"status\":\"$status\",\"labels\":{\"alertname\":\"X\"}}]}")
expect_eq "a long non-ASCII status is 400" 400 "$code"
expect_eq "its 400 is JSON naming the field" "alerts[0].status" \
    "$(jq -r '.error | split(":")[0]' "$TMP/body")"

head -c $((1024 * 1024 + 10)) /dev/zero | tr '\0' ' ' >"$TMP/big"
code=$(http_code POST /webhook "${AUTH[@]}" --data-binary @"$TMP/big")
expect_eq "a body over 1 MiB is 413" 413 "$code"
expect_eq "unknown paths are 404" 404 "$(http_code GET /nope)"

# Resolved and firing alerts of one delivery are both recorded.
code=$(http_code POST /webhook "${AUTH[@]}" --data-binary @"$GVW_TEST_DATA/alertmanager-0.27-webhook.json")
expect_eq "a newer delivery with extra fields is 200" 200 "$code"
expect_eq "both its alerts are accepted" '{"accepted":2}' "$(cat "$TMP/body")"

expect_eq "still healthy after malformed requests" 200 "$(http_code GET /healthz)"
code=$(http_code GET /metrics)
expect_eq "GET /metrics is 200" 200 "$code"
cp "$TMP/body" "$TMP/metrics"
expect_contains "metrics count the 401s" 'gpu_vram_watchdog_webhook_requests_total{code="401"} 4' "$(cat "$TMP/metrics")"
expect_contains "metrics count alerts by name and status" \
    'gpu_vram_watchdog_alerts_received_total{alertname="GPUVRAMLow",status="firing"} 2' "$(cat "$TMP/metrics")"
if command -v promtool >/dev/null; then
    if promtool check metrics <"$TMP/metrics" >"$TMP/promtool.out" 2>&1; then
        pass "promtool check metrics is clean"
    else
        fail "promtool check metrics is clean" "$(cat "$TMP/promtool.out")"
    fi
else
    fail "promtool check metrics" "promtool missing (Debian package: prometheus)"
fi

# Pipelined on one connection, answers come in request order: a refusal the
# front door decides from a later request's headers waits for the earlier
# answers (it once went out first, read by the client as the answer to the
# first request, whose real answer was then dropped).
pipe() { python3 "$GVW_SOURCE_DIR/tests/lib/raw_http.py" "$SERVE_PORT" "$1" | tr '\n' '|'; }
B4='{"version":"4","alerts":[]}'
expect_eq "pipelined GET, GET, PUT: 200, 200, then the 405" \
    "HTTP/1.1 200 OK|HTTP/1.1 200 OK|HTTP/1.1 405 Method Not Allowed|EOF|" \
    "$(pipe "b'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /readyz HTTP/1.1\r\nHost: x\r\n\r\nPUT /healthz HTTP/1.1\r\nHost: x\r\n\r\n'")"
expect_eq "pipelined webhook with the token, then one without: 200, then the 401" \
    "HTTP/1.1 200 OK|HTTP/1.1 401 Unauthorized|EOF|" \
    "$(pipe "b'POST /webhook HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret-token\r\nContent-Length: ${#B4}\r\n\r\n${B4}POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}'")"
expect_eq "pipelined webhook, then one over 1 MiB: 200, then the 413" \
    "HTTP/1.1 200 OK|HTTP/1.1 413 Payload Too Large|EOF|" \
    "$(pipe "b'POST /webhook HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret-token\r\nContent-Length: ${#B4}\r\n\r\n${B4}POST /webhook HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret-token\r\nContent-Length: 2000000\r\n\r\n'")"
expect_eq "a POST body followed by CRLF, then a GET: the empty line is ignored (RFC 9112 2.2)" \
    "HTTP/1.1 200 OK|HTTP/1.1 200 OK|EOF|" \
    "$(pipe "b'POST /webhook HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret-token\r\nContent-Length: ${#B4}\r\n\r\n${B4}\r\nGET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'")"
expect_eq "a bare LF before the request line too" "HTTP/1.1 200 OK|EOF|" \
    "$(pipe "b'\nGET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'")"
expect_eq "but two empty lines are a malformed head: 400" "HTTP/1.1 400 Bad Request|EOF|" \
    "$(pipe "b'\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'")"
expect_eq "pipelined GET, then a malformed request line: 200, then the 400" \
    "HTTP/1.1 200 OK|HTTP/1.1 400 Bad Request|EOF|" \
    "$(pipe "b'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGARBAGE\r\n\r\n'")"

# HEAD: the GET's headers, its length, and no body. evhttp sent the body
# without a length, and on a kept-alive connection the next answer was read
# after those stray bytes ("Excess found" in curl).
head_then_get() { # head_then_get PATH: HEAD then GET pipelined; prints what came
    python3 - "$SERVE_PORT" "$1" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=3)
p = sys.argv[2].encode()
s.sendall(b"HEAD " + p + b" HTTP/1.1\r\nHost: x\r\n\r\nGET " + p + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
data = b""
while True:
    chunk = s.recv(65536)
    if not chunk:
        break
    data += chunk
head, _, rest = data.partition(b"\r\n\r\n")
length = [l.split(b":")[1].strip() for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")]
get_body = rest.partition(b"\r\n\r\n")[2]
print("%s length=%s next=%s get_body=%d" % (head.split(b"\r\n")[0].decode(), length[0].decode() if length else "none",
      rest[:8].decode("latin-1"), len(get_body)))
PY
}
for p in /metrics /healthz /readyz /; do
    out=$(head_then_get "$p")
    len=${out#*length=}
    len=${len%% *}
    expect_contains "HEAD $p: 200 and straight after it the GET's answer, no body between" \
        "HTTP/1.1 200 OK length=$len next=HTTP/1.1" "$out"
    expect_eq "HEAD $p: its Content-Length is the GET's body length" "get_body=$len" "${out##* }"
done

# An alert without startsAt/endsAt (Alertmanager always sends them; hand-made
# senders may not) shows them as null, not as an empty time.
code=$(http_code POST /webhook "${AUTH[@]}" \
    --data-binary '{"version":"4","status":"firing","alerts":[{"status":"firing","labels":{"alertname":"HandMade"}}]}')
expect_eq "an alert without times is 200" 200 "$code"

out=$("$GVW_BINARY" audit alerts --db "$DB" --format json --limit 0)
expect_eq "audit alerts lists all six recorded alerts (two before the first trigger)" 6 "$(printf '%s' "$out" | grep -o '"received_at"' | wc -l)"
newest=$("$GVW_BINARY" audit alerts --db "$DB" --format json --limit 1)
expect_contains "an absent startsAt is null" '"starts_at":null' "$newest"
expect_contains "an absent endsAt is null" '"ends_at":null' "$newest"

# Logs are JSON lines and never carry the token.
if grep -v '^{.*}$' "$TMP/serve.log" >/dev/null; then
    fail "every log line is a JSON object" "$(grep -v '^{.*}$' "$TMP/serve.log" | head -3)"
else
    pass "every log line is a JSON object"
fi
if grep -q 's3cret-token' "$TMP/serve.log"; then fail "the token never appears in logs"; else pass "the token never appears in logs"; fi

start=$(date +%s%N)
kill -TERM "$SERVE_PID"
wait "$SERVE_PID"
rc=$?
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
expect_eq "SIGTERM exits 0" 0 "$rc"
if [ "$elapsed_ms" -lt 1000 ]; then pass "SIGTERM exits within a second"; else fail "SIGTERM exits within a second" "${elapsed_ms} ms"; fi

# A store that cannot open: the receiver runs, but is not ready and refuses with 503.
start_serve "$TMP/serve2.log" WEBHOOK_TOKEN_FILE="$TMP/token" AUDIT_DB="$TMP/missing-dir/audit.db" || exit 1
expect_eq "readyz is 503 while the store cannot open" 503 "$(http_code GET /readyz)"
expect_eq "healthz stays 200" 200 "$(http_code GET /healthz)"
expect_eq "a webhook is 503 so Alertmanager retries" 503 "$(http_code POST /webhook "${AUTH[@]}" --data-binary @"$FIXTURE")"
mkdir "$TMP/missing-dir"
for _ in $(seq 1 80); do [ "$(http_code GET /readyz)" = 200 ] && break; sleep 0.1; done
expect_eq "the store opens by itself once its directory appears" 200 "$(http_code GET /readyz)"
expect_eq "and the webhook is accepted again" 200 "$(http_code POST /webhook "${AUTH[@]}" --data-binary @"$FIXTURE")"

# Start-up refuses a bad setting with one line naming it.
out=$(FLOOR_MIB=abc "$GVW_BINARY" serve 2>&1); rc=$?
expect_eq "a bad setting stops start-up" 2 "$rc"
expect_eq "with one line naming it" "gpu-vram-watchdog: FLOOR_MIB: 'abc' is not a non-negative integer" "$out"
out=$(WEBHOOK_TOKEN_FILE= "$GVW_BINARY" serve 2>&1); rc=$?
expect_contains "bearer auth without a token file stops start-up" "WEBHOOK_TOKEN_FILE: required" "$out"
printf ' \n' >"$TMP/empty.token"
out=$(WEBHOOK_TOKEN_FILE="$TMP/empty.token" "$GVW_BINARY" serve 2>&1); rc=$?
expect_eq "an empty token file stops start-up like any bad setting" 2 "$rc"
expect_eq "with one line naming it" "gpu-vram-watchdog: WEBHOOK_TOKEN_FILE: token file $TMP/empty.token: empty" "$out"
printf 'two words\n' >"$TMP/spaced.token"
out=$(WEBHOOK_TOKEN_FILE="$TMP/spaced.token" "$GVW_BINARY" serve 2>&1); rc=$?
expect_eq "a token no header can carry stops start-up" 2 "$rc"
expect_contains "and the line does not quote the file" "not a token (spaces or control bytes)" "$out"
expect_not_contains "no token content in the line" "words" "$out"

# The start-up line shows the settings in effect, and never a secret: the
# Prometheus URL's password is masked, the webhook token never appears.
kill "$SERVE_PID" 2>/dev/null; wait "$SERVE_PID" 2>/dev/null
start_serve "$TMP/serve3.log" WEBHOOK_TOKEN_FILE="$TMP/token" AUDIT_DB="$TMP/audit3.db" \
    PROMETHEUS_URL="http://watchdog:pr0m-pa55@127.0.0.1:9/prom" FLOOR_MIB=2048 \
    BUDGET_SOURCES=hami,resource || exit 1
line=$(grep '"msg":"serving"' "$TMP/serve3.log")
expect_contains "the start-up line shows the floor" '"floor_mib":"2048"' "$line"
expect_contains "and dry run" '"dry_run":"true"' "$line"
expect_contains "and USED_QUERY in effect (its default here)" \
    '"used_query":"sum by (namespace, pod) (gpu_pod_memory_used_bytes)"' "$line"
expect_contains "and FREE_QUERY" '"free_query":"auto"' "$line"
expect_contains "and the scope" '"scope":"gpu where the used series carry uuid, else node"' "$line"
expect_contains "and BUDGET_SOURCES" '"budget_sources":"hami,resource"' "$line"
expect_contains "and LEADER_ELECTION" '"leader_election":"false"' "$line"
expect_contains "and the Prometheus URL, its password masked" \
    '"prometheus_url":"http://***@127.0.0.1:9/prom"' "$line"
expect_not_contains "no Prometheus password in the log" "pr0m-pa55" "$(cat "$TMP/serve3.log")"
expect_not_contains "no webhook token in the log" "s3cret-token" "$(cat "$TMP/serve3.log")"
kill "$SERVE_PID" 2>/dev/null; wait "$SERVE_PID" 2>/dev/null

out=$("$GVW_BINARY" serve --help); rc=$?
expect_eq "serve --help exits 0" 0 "$rc"
expect_contains "and lists every setting with its default" "FLOOR_MIB" "$out"
expect_contains "with the flag form" "--floor-mib" "$out"
help=$("$GVW_BINARY" --help)
expect_contains "--help opens the settings with what every deployment sets" \
    "$(printf 'Settings (environment variable, or the flag, which wins):\nEvery deployment sets:\n  PROMETHEUS_URL')" "$help"
expect_contains "then what is commonly tuned" "$(printf '\nCommonly tuned:\n  DRY_RUN ')" "$help"
expect_contains "then the rest" "The rest (the defaults suit most clusters):" "$help"
expect_eq "and lists each setting once" "" \
    "$(printf '%s\n' "$help" | awk '/^  [A-Z][A-Z0-9_]+ +--/ {print $1}' | sort | uniq -d)"
for cmd in serve check advertise budgets exporter; do
    out=$("$GVW_BINARY" $cmd --help); rc=$?
    expect_eq "$cmd --help is its own usage, exit 0" "usage: gpu-vram-watchdog $cmd 0" \
        "$(printf '%s' "$out" | head -n1 | cut -d' ' -f1-3) $rc"
done
expect_contains "check --help names its flags" "[--node N] [--format table|json]" "$("$GVW_BINARY" check --help)"
expect_contains "budgets --help names --suggest" "budgets --suggest [--window 7d]" "$("$GVW_BINARY" budgets --help)"
expect_contains "advertise --help names --once" "advertise [--once]" "$("$GVW_BINARY" advertise --help)"
expect_contains "exporter --help lists the exporter's settings" "NODE_NAME" "$("$GVW_BINARY" exporter --help)"
expect_not_contains "and not serve's own" "FLOOR_MIB" "$("$GVW_BINARY" exporter --help)"
expect_eq "--version names the version" "gpu-vram-watchdog" "$("$GVW_BINARY" --version | cut -d' ' -f1)"
version=$("$GVW_BINARY" --version)
for cmd in serve check budgets advertise exporter audit; do
    out=$(env -u WEBHOOK_TOKEN_FILE -u NODE_NAME "$GVW_BINARY" $cmd --version 2>&1); rc=$?
    expect_eq "$cmd --version prints the version and exits 0" "$version 0" "$out $rc"
done
out=$("$GVW_BINARY" frobnicate 2>&1); rc=$?
expect_eq "an unknown command exits 2" 2 "$rc"
expect_contains "and says so" "unknown command 'frobnicate'" "$out"

finish
