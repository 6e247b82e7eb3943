#!/usr/bin/env bash
# test_kube_tls.sh -- the API server over https, as every real install talks to it:
# KUBE_CA_FILE is the trust, the certificate's name is checked, the bearer token goes
# only to a verified server and never into a log. A fake API server over TLS
# (tests/fake/tls_kube.py) with certificates made here by the openssl CLI.
. "$(dirname "$0")/../lib/harness.sh"

for tool in python3 openssl jq; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "test_kube_tls: '$tool' is missing; scripts/install-deps.sh installs it" >&2
        fail "$tool is installed"
        finish
        exit 1
    fi
done
FAKE="$GVW_SOURCE_DIR/tests/fake/tls_kube.py"
NODE=gpu-node-1
TOKEN="gvw-tls-token-$RANDOM$RANDOM-do-not-log"
printf '%s\n' "$TOKEN" >"$TMP/token"
chmod 600 "$TMP/token"

# --- certificates: a CA, a server cert it signs for 127.0.0.1, one for another
# name, and an unrelated CA.
mkca() { # mkca NAME
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
        -keyout "$TMP/$1.key" -out "$TMP/$1.crt" -days 2 -subj "/CN=gvw test $1" \
        -addext basicConstraints=critical,CA:TRUE \
        -addext keyUsage=critical,keyCertSign,cRLSign 2>>"$TMP/openssl.err"
}
mkcert() { # mkcert NAME SAN -- signed by "ca"
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
        -keyout "$TMP/$1.key" -out "$TMP/$1.csr" -subj "/CN=$1" 2>>"$TMP/openssl.err" &&
        printf 'subjectAltName=%s\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' \
            "$2" >"$TMP/$1.ext" &&
        openssl x509 -req -in "$TMP/$1.csr" -CA "$TMP/ca.crt" -CAkey "$TMP/ca.key" \
            -CAcreateserial -days 2 -extfile "$TMP/$1.ext" -out "$TMP/$1.crt" 2>>"$TMP/openssl.err"
}
if ! { mkca ca && mkca otherca && mkcert server "IP:127.0.0.1,DNS:localhost" &&
    mkcert othername "DNS:other.example"; }; then
    fail "openssl makes the test certificates" "$(tail -5 "$TMP/openssl.err")"
    finish
    exit 1
fi

# --- what the fake API server and Prometheus answer: one GPU node; llm-0 declares
# 4000 MiB and uses 14 GiB, so the card (15360 MiB) has 1024 MiB free, below the floor.
mkdata() { # mkdata DIR
    mkdir -p "$1"
    cat >"$1/nodes.json" <<JSON
{"kind":"NodeList","apiVersion":"v1","items":[{"metadata":{"name":"$NODE",
 "labels":{"nvidia.com/gpu.present":"true"}},
 "status":{"capacity":{"nvidia.com/gpu":"1","viktorbarzin.me/gpumem":"14000"}}}]}
JSON
    cat >"$1/pods.json" <<JSON
{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"llm-0","namespace":"ml",
 "uid":"5d1e0c3a-8f1b-4a52-9b0e-7c6d5e4f3a21","creationTimestamp":"2026-01-01T00:00:00Z",
 "ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":"llm",
  "uid":"6e2f1d4b-9a2c-4b63-8c1f-8d7e6f5a4b32","controller":true}]},
 "spec":{"nodeName":"$NODE","containers":[{"name":"server",
  "resources":{"limits":{"viktorbarzin.me/gpumem":"4k"}}}]},
 "status":{"phase":"Running","startTime":"2026-01-01T00:00:00Z"}}]}
JSON
    cat >"$1/prom.json" <<JSON
{"status":"success","data":{"resultType":"vector","result":[
 {"metric":{"namespace":"ml","pod":"llm-0"},"value":[1780394400.1,"15032385536"]}]}}
JSON
}

# start_fake NAME CERT -- the fake with CERT on ports the kernel picks; sets
# <NAME>_KUBE and <NAME>_PROM (the two ports) and <NAME>_DIR.
start_fake() {
    local dir="$TMP/$1"
    mkdata "$dir"
    python3 "$FAKE" "$TMP/$2.crt" "$TMP/$2.key" "$dir" 2>"$dir/fake.err" &
    PIDS+=("$!")
    wait_for 10 test -s "$dir/ports" || {
        fail "the fake API server ($1) starts" "$(tail -5 "$dir/fake.err")"
        finish
        exit 1
    }
    printf -v "${1}_KUBE" '%s' "$(awk '$1 == "kube" {print $2}' "$dir/ports")"
    printf -v "${1}_PROM" '%s' "$(awk '$1 == "prom" {print $2}' "$dir/ports")"
    printf -v "${1}_DIR" '%s' "$dir"
}
start_fake good server
start_fake wrongname othername

RUN=0
# libcurl honours the *_proxy variables: none of this may leave loopback.
NOPROXY=(-u https_proxy -u HTTPS_PROXY -u http_proxy -u HTTP_PROXY -u all_proxy -u ALL_PROXY)
WRAP=() # a command to run the binary under (in_store, below)
# gvw PORT CA PROMPORT SUBCOMMAND... -- runs the binary against the fake on PORT trusting CA;
# stdout in $OUT, exit status in $RC, stderr in $TMP/run.N.err (all kept to be
# searched for the token at the end).
gvw() {
    local port=$1 ca=$2 prom=$3
    shift 3
    RUN=$((RUN + 1))
    ERR="$TMP/run.$RUN.err"
    OUT=$(${WRAP[@]+"${WRAP[@]}"} env "${NOPROXY[@]}" -u KUBERNETES_SERVICE_HOST KUBE_API_URL="https://127.0.0.1:$port" \
        KUBE_CA_FILE="$ca" KUBE_TOKEN_FILE="$TMP/token" PROMETHEUS_URL="http://127.0.0.1:$prom" \
        HTTP_CONNECT_TIMEOUT=2s HTTP_TIMEOUT=5s GPUMEM_CAPACITY_MIB=14000 "$GVW_BINARY" "$@" 2>"$ERR")
    RC=$?
    printf '%s\n' "$OUT" >"$TMP/run.$RUN.out"
}
# requests DIR -- the API requests the fake recorded so far (not the handshakes,
# not Prometheus's).
requests() { grep '^kube ' "$1/requests.log" 2>/dev/null | grep -v '^kube HANDSHAKE-'; }
lines() { { wc -l <"$1/requests.log"; } 2>/dev/null || echo 0; }
# requests_since N DIR -- the API requests after the first N lines of the record.
requests_since() { tail -n +$(($1 + 1)) "$2/requests.log" | grep '^kube ' | grep -v '^kube HANDSHAKE-'; }

# --- a trusted server: advertise patches the capacity with the token.
gvw "$good_KUBE" "$TMP/ca.crt" "$good_PROM" advertise --once
expect_eq "trusted CA: advertise --once exits 0" 0 "$RC"
[ "$RC" -eq 0 ] || cat "$ERR"
expect_eq "the PATCH carries the SPEC's content type and body" \
    $'application/json-patch+json\t[{"op":"add","path":"/status/capacity/viktorbarzin.me~1gpumem","value":"14000"}]' \
    "$(cat "$good_DIR/patch.log" 2>/dev/null)"
expect_contains "the PATCH went to the node's status with the bearer token" \
    "kube PATCH /api/v1/nodes/$NODE/status Bearer $TOKEN" "$(requests "$good_DIR")"
expect_contains "the GPU nodes were listed by the selector, with the token" \
    "kube GET /api/v1/nodes?labelSelector=nvidia.com%2Fgpu.present%3Dtrue Bearer $TOKEN" \
    "$(requests "$good_DIR")"
expect_eq "every request the server saw carried the token" "" \
    "$(requests "$good_DIR" | grep -v " Bearer $TOKEN\$")"

# --- budgets reads the node and its pods over TLS.
gvw "$good_KUBE" "$TMP/ca.crt" "$good_PROM" budgets --node "$NODE" --format json
expect_eq "trusted CA: budgets exits 0" 0 "$RC"
[ "$RC" -eq 0 ] || cat "$ERR"
expect_eq "budgets: llm-0's budget (4k = 4000 MiB) came from the pod list over TLS" \
    "4000" "$(printf '%s' "$OUT" | jq -r '[.. | objects | select(.pod? == "llm-0") | .budget_mib?] | map(select(. != null)) | first')"
expect_contains "budgets listed the node's pods with the token" \
    "kube GET /api/v1/pods?fieldSelector=spec.nodeName%3D$NODE Bearer $TOKEN" "$(requests "$good_DIR")"

# --- check: the pods over TLS make the decision.
gvw "$good_KUBE" "$TMP/ca.crt" "$good_PROM" check --node "$NODE" --format json
expect_eq "trusted CA: check decides from the pods it read over TLS" \
    "would_recycle ml/llm-0" "$(printf '%s' "$OUT" | jq -r '"\(.result) \(.victim.namespace)/\(.victim.pod)"')"

# --- in a pod KUBE_API_URL is unset: https://KUBERNETES_SERVICE_HOST:_PORT.
RUN=$((RUN + 1))
before=$(lines "$good_DIR")
env "${NOPROXY[@]}" -u KUBE_API_URL KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT="$good_KUBE" \
    KUBE_CA_FILE="$TMP/ca.crt" KUBE_TOKEN_FILE="$TMP/token" GPUMEM_CAPACITY_MIB=14000 \
    "$GVW_BINARY" advertise --once >"$TMP/run.$RUN.out" 2>"$TMP/run.$RUN.err"
expect_eq "in-cluster default URL: advertise --once exits 0" 0 "$?"
expect_contains "in-cluster default URL: the PATCH arrived over TLS with the token" \
    "kube PATCH /api/v1/nodes/$NODE/status Bearer $TOKEN" \
    "$(requests_since "$before" "$good_DIR")"

# --- a KUBE_CA_FILE that is no certificate: refused, the file named, no token.
printf 'not a certificate\n' >"$TMP/garbage.crt"
before=$(lines "$good_DIR")
gvw "$good_KUBE" "$TMP/garbage.crt" "$good_PROM" advertise --once
expect_eq "a CA file that is not PEM: advertise fails (exit 1)" 1 "$RC"
expect_contains "a CA file that is not PEM: the error names the file" "$TMP/garbage.crt" "$(cat "$ERR")"
expect_eq "a CA file that is not PEM: the server saw no request" "" \
    "$(requests_since "$before" "$good_DIR")"

# --- an unrelated CA: no request, no token, a clear error.
before=$(lines "$good_DIR")
gvw "$good_KUBE" "$TMP/otherca.crt" "$good_PROM" advertise --once
expect_eq "unrelated CA: advertise fails (exit 1)" 1 "$RC"
expect_contains "unrelated CA: the error names the certificate problem" \
    "certificate" "$(tr 'A-Z' 'a-z' <"$ERR")"
new=$(tail -n +$((before + 1)) "$good_DIR/requests.log")
expect_contains "unrelated CA: the client did reach the server (the handshake failed there)" \
    "HANDSHAKE-FAILED" "$new"
expect_eq "unrelated CA: the server saw no request, so no token" "" \
    "$(requests_since "$before" "$good_DIR")"

before=$(lines "$good_DIR")
gvw "$good_KUBE" "$TMP/otherca.crt" "$good_PROM" check --node "$NODE" --format json
expect_eq "unrelated CA: check exits 1 with skipped_kube (never acts blind, says it could not look)" \
    "1 skipped_kube null" "$RC $(printf '%s' "$OUT" | jq -r '"\(.result) \(.victim)"')"
expect_contains "unrelated CA: check's error names the certificate problem" \
    "certificate" "$(printf '%s' "$OUT" | jq -r '.error // ""' | tr 'A-Z' 'a-z')"
expect_eq "unrelated CA: check sent no request to the API server" "" \
    "$(requests_since "$before" "$good_DIR")"

# --- a certificate from the trusted CA, for another name.
gvw "$wrongname_KUBE" "$TMP/ca.crt" "$wrongname_PROM" advertise --once
expect_eq "certificate for another name: advertise fails (exit 1)" 1 "$RC"
expect_contains "certificate for another name: the error names the mismatch" \
    "certificate" "$(tr 'A-Z' 'a-z' <"$ERR")"
expect_contains "certificate for another name: the client did reach the server" \
    "HANDSHAKE-" "$(cat "$wrongname_DIR/requests.log" 2>/dev/null)"
expect_eq "certificate for another name: the server saw no request, so no token" "" \
    "$(requests "$wrongname_DIR")"
gvw "$wrongname_KUBE" "$TMP/ca.crt" "$wrongname_PROM" check --node "$NODE" --format json
expect_eq "certificate for another name: check ends skipped_kube, exit 1" \
    "1 skipped_kube" "$RC $(printf '%s' "$OUT" | jq -r '.result')"

# --- KUBE_CA_FILE is the only trust: a server the system store trusts but the
# named CA did not sign is refused (libcurl also looks in its build-time CA
# directory, /etc/ssl/certs, unless told not to). The system store is faked
# with a private mount namespace: /etc/ssl/certs holds only our CA there.
store="$TMP/sysstore"
mkdir -p "$store"
cp "$TMP/ca.crt" "$store/$(openssl x509 -hash -noout -in "$TMP/ca.crt").0"
cp "$TMP/ca.crt" "$store/ca-certificates.crt"
# in_store CMD... -- CMD with $store mounted on /etc/ssl/certs, for it alone.
in_store() {
    unshare -Urm sh -c 'mount --bind "$0" /etc/ssl/certs && exec "$@"' "$store" "$@"
}
if in_store true 2>/dev/null; then
    WRAP=(in_store)
    gvw "$good_KUBE" "" "$good_PROM" advertise --once
    expect_eq "system store (faked) trusts the server: advertise with no KUBE_CA_FILE exits 0" 0 "$RC"
    before=$(lines "$good_DIR")
    gvw "$good_KUBE" "$TMP/otherca.crt" "$good_PROM" advertise --once
    expect_eq "KUBE_CA_FILE names another CA: the system store does not count (exit 1)" 1 "$RC"
    expect_eq "KUBE_CA_FILE names another CA: the server saw no request, so no token" "" \
        "$(requests_since "$before" "$good_DIR")"
    WRAP=()
else
    # Not silent: the line says what was not checked and why.
    echo "skip - KUBE_CA_FILE as the only trust: 'unshare -Urm' (a private mount namespace) is not permitted here"
fi

# --- the token is in no log line of any run (stderr and stdout).
leaks=$(grep -lF -- "$TOKEN" "$TMP"/run.*.err "$TMP"/run.*.out 2>/dev/null)
expect_eq "the token appears in no run's output or log ($RUN runs)" "" "$leaks"

finish
