# harness.sh -- shared helpers for the shell-driven integration tests (sourced).
# Each test script: source this, call `check NAME CMD...` / `expect_eq`, end with `finish`.
set -u
GVW_BINARY=${GVW_BINARY:-$(pwd)/build/gpu-vram-watchdog}
GVW_SOURCE_DIR=${GVW_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
GVW_TEST_DATA=${GVW_TEST_DATA:-$GVW_SOURCE_DIR/tests/data}
PASSED=0
FAILED=0
TMP=$(mktemp -d /tmp/gvw-test.XXXXXX)
PIDS=()

cleanup() {
    for pid in "${PIDS[@]:-}"; do
        [ -n "$pid" ] && kill "$pid" 2>/dev/null
    done
    wait 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT

pass() { PASSED=$((PASSED + 1)); echo "ok   - $1"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL - $1${2:+: $2}"; }

# expect_eq NAME EXPECTED ACTUAL
expect_eq() {
    if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "expected '$2', got '$3'"; fi
}

# expect_contains NAME NEEDLE HAYSTACK
expect_contains() {
    case "$3" in
    *"$2"*) pass "$1" ;;
    *) fail "$1" "'$2' not in: $(printf '%s' "$3" | head -c 400)" ;;
    esac
}

# expect_not_contains NAME NEEDLE HAYSTACK
expect_not_contains() {
    case "$3" in
    *"$2"*) fail "$1" "'$2' found in: $(printf '%s' "$3" | head -c 400)" ;;
    *) pass "$1" ;;
    esac
}

# start_serve LOGFILE [ENV=VALUE ...] -- starts serve on a free loopback port;
# sets SERVE_PID and SERVE_PORT (read from its "serving" log line).
start_serve() {
    local log=$1 cmd=("$GVW_BINARY" serve)
    shift
    # GVW_SERVE_CMD runs instead, with the same environment (the image test
    # points it at tests/e2e/serve_in_image.sh).
    [ -n "${GVW_SERVE_CMD:-}" ] && cmd=("$GVW_SERVE_CMD")
    env LISTEN_ADDR=127.0.0.1:0 "$@" "${cmd[@]}" 2>"$log" &
    SERVE_PID=$!
    PIDS+=("$SERVE_PID")
    SERVE_PORT=
    for _ in $(seq 1 100); do
        SERVE_PORT=$(sed -n 's/.*"msg":"serving".*"port":"\([0-9]*\)".*/\1/p' "$log" | head -n1)
        [ -n "$SERVE_PORT" ] && return 0
        kill -0 "$SERVE_PID" 2>/dev/null || break
        sleep 0.05
    done
    echo "serve did not start; its log:" >&2
    cat "$log" >&2
    return 1
}

# http_code METHOD PATH [curl args...] -- prints the status code; body in $TMP/body
http_code() {
    local method=$1 path=$2
    shift 2
    curl -s -o "$TMP/body" -w '%{http_code}' -X "$method" "$@" \
        "http://127.0.0.1:$SERVE_PORT$path"
}

finish() {
    echo "$PASSED passed, $FAILED failed"
    [ "$FAILED" -eq 0 ]
}

# free_port -- prints a loopback TCP port nobody listens on right now.
# Picked below the kernel's ephemeral range: a port inside it can be taken
# as the local end of any test's outgoing connection between our check and
# the server's bind (CI saw exactly that: "Address already in use").
free_port() {
    local p lo=32768 span
    read -r lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || lo=32768
    span=$((lo - 10000))
    [ "$span" -ge 1000 ] || span=1000
    for _ in $(seq 1 200); do
        p=$((10000 + RANDOM % span))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
            echo "$p"
            return 0
        fi
    done
    return 1
}

# wait_for SECONDS CMD... -- polls CMD every 0.25 s until it succeeds.
wait_for() {
    local deadline=$(($(date +%s) + $1))
    shift
    while [ "$(date +%s)" -lt "$deadline" ]; do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.25
    done
    return 1
}

# ready_or_gone PORT PID -- PORT answers /-/ready, or process PID has exited.
ready_or_gone() { curl -sf "http://127.0.0.1:$1/-/ready" || ! kill -0 "$2" 2>/dev/null; }

# start_on_free_port NAME LOG CMD... -- runs CMD with every "@PORT@" in its
# arguments replaced by a free loopback port, until its /-/ready answers.
# A port free when picked can be taken by a parallel test before CMD binds it;
# then "ready" would be the other test's server, so CMD must still run 1 s
# later. Up to 3 ports are tried. Sets STARTED_PORT and STARTED_PID.
start_on_free_port() {
    local name=$1 log=$2 port pid
    shift 2
    for _ in 1 2 3; do
        port=$(free_port) || break
        "${@//@PORT@/$port}" >"$log" 2>&1 &
        pid=$!
        PIDS+=("$pid")
        # Ours exiting (its bind failed) ends the wait too: no 30 s on a
        # port another server holds without answering /-/ready.
        if wait_for 30 ready_or_gone "$port" "$pid" && sleep 1 && kill -0 "$pid" 2>/dev/null &&
            curl -sf "http://127.0.0.1:$port/-/ready" >/dev/null; then
            STARTED_PORT=$port
            STARTED_PID=$pid
            return 0
        fi
        echo "$name on port $port: not ready, or exited; its log: $(tail -3 "$log")" >&2
        kill "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null # its storage lock is free for the next try
    done
    fail "$name becomes ready" "$(tail -5 "$log")"
    return 1
}

# Timeline: milliseconds since the test began, for narration.
T0_MS=$(date +%s%3N)
stamp() { awk -v now="$(date +%s%3N)" -v t0="$T0_MS" -v msg="$*" 'BEGIN { printf "[+%6.1fs] %s\n", (now - t0) / 1000, msg }'; }
