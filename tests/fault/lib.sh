# shellcheck shell=bash disable=SC2034  # variables are used by the sourcing test
# lib.sh -- helpers shared by the fault tests (sourced after tests/lib/harness.sh).
GVW_SIM=${GVW_SIM:-$(dirname "$GVW_BINARY")/gvw-sim}
GVW_FAULTKIT=${GVW_FAULTKIT:-$(dirname "$GVW_BINARY")/gvw-faultkit}
FIXTURE="$GVW_TEST_DATA/alertmanager-0.25-webhook.json"

for tool in curl jq sqlite3; do
    if ! command -v "$tool" >/dev/null; then
        echo "SKIP: $tool is not installed (scripts/install-deps.sh installs it)"
        exit 77
    fi
done
if [ ! -x "$GVW_FAULTKIT" ]; then
    echo "SKIP: $GVW_FAULTKIT is not built (cmake --build BUILD --target gvw-faultkit)"
    exit 77
fi

printf 'fault-token-%s\n' "$RANDOM$RANDOM" >"$TMP/token"
AUTH=(-H "Authorization: Bearer $(cat "$TMP/token")" -H "Content-Type: application/json")

# post FILE -- POSTs a webhook body to serve; prints the status code (body in $TMP/body).
post() { http_code POST /webhook --max-time 10 "${AUTH[@]}" --data-binary @"$1"; }

# get PATH -- prints the status code of a GET (bounded at 5 s; 000 = no answer).
get() { http_code GET "$1" --max-time 5; }

# alive PID -- the process exists (and is not a zombie).
alive() { [ -e "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }

# trigger_json FILE NODE FINGERPRINT -- a firing GPUVRAMLow for NODE.
trigger_json() {
    cat >"$1" <<JSON
{"version":"4","status":"firing","receiver":"gpu-vram-watchdog","groupKey":"{}:{alertname=\"GPUVRAMLow\"}",
 "alerts":[{"status":"firing","labels":{"alertname":"GPUVRAMLow","node":"$2","severity":"critical"},
 "annotations":{"summary":"free VRAM below the floor"},"startsAt":"2026-06-02T10:00:00Z",
 "endsAt":"0001-01-01T00:00:00Z","fingerprint":"$3"}]}
JSON
}

# load ARGS... -- the webhook load client against the current serve.
load() { "$GVW_FAULTKIT" post --port "$SERVE_PORT" --token-file "$TMP/token" "$@"; }

# start_upstream NAME MODE [ARGS] -- a misbehaving upstream; sets UP_URL, UP_OUT.
start_upstream() {
    local name=$1
    shift
    UP_OUT="$TMP/upstream-$name.out"
    # Emptied here, not by the redirection below: that runs in the child, so
    # a restart could otherwise read the previous run's "listening" line.
    : >"$UP_OUT"
    "$GVW_FAULTKIT" upstream "$@" >"$UP_OUT" 2>"$TMP/upstream-$name.err" &
    PIDS+=($!)
    UP_URL=
    wait_for 5 grep -q '^listening' "$UP_OUT" || return 1
    UP_URL=http://127.0.0.1:$(sed -n 's/^listening //p' "$UP_OUT")
}

# start_sim [ARGS] -- the simulated GPU node; sets SIM (its base URL).
start_sim() {
    : >"$TMP/sim.out" # as in start_upstream: never the previous run's port
    "$GVW_SIM" --scenario "$GVW_SOURCE_DIR/tests/sim/scenarios/incident-2026-06-02.json" \
        --listen 127.0.0.1:0 "$@" >"$TMP/sim.out" 2>"$TMP/sim.log" &
    SIM_PID=$!
    PIDS+=("$SIM_PID")
    SIM=
    wait_for 10 grep -q '^listening' "$TMP/sim.out" || return 1
    SIM=http://$(sed -n 's/^listening //p' "$TMP/sim.out")
}

# stop PID -- SIGTERM, then wait for it.
stop() { kill "$1" 2>/dev/null; wait "$1" 2>/dev/null; }

# The external writer: an sqlite3 shell holding the database's write lock.
# lock_db DB -- returns once the lock is held; unlock_db releases it.
lock_db() {
    coproc LOCKER { sqlite3 "$1" 2>&1; }
    PIDS+=("$LOCKER_PID")
    LOCKER_IN=${LOCKER[1]}
    LOCKER_OUT=${LOCKER[0]}
    printf "%s\n" ".timeout 10000" "BEGIN IMMEDIATE;" "SELECT 'locked';" >&"$LOCKER_IN"
    local line=
    read -r -t 10 line <&"$LOCKER_OUT"
    [ "$line" = locked ]
}
unlock_db() {
    echo "COMMIT;" >&"$LOCKER_IN"
    exec {LOCKER_IN}>&-
    wait "$LOCKER_PID" 2>/dev/null
}

# stored_fps DB -- every stored alert's fingerprint, sorted.
stored_fps() {
    "$GVW_BINARY" audit alerts --db "$1" --limit 0 --format json | jq -r '.[].fingerprint' | sort
}

# decisions DB -- the audit's decisions as JSON (newest first).
decisions() { "$GVW_BINARY" audit --db "$1" --limit 0 --format json; }

# known NAME DETAIL -- a known daemon bug (docs/robustness.md): reported, not counted.
known() { echo "KNOWN - $1${2:+: $2}"; }
