#!/usr/bin/env bash
# valgrind.sh -- memcheck over the whole program, outside the sanitizer build:
#   1. builds a Debug tree without sanitizers (default build-valgrind/),
#   2. runs every unit and integration cmocka program under
#      `valgrind --leak-check=full --error-exitcode=1` with its ctest environment,
#   3. runs `serve` under valgrind through two short HTTP exercises (every endpoint
#      and status code, a load of webhooks, decisions through the simulator that
#      evict, coalesce and fan out over nodes; a locked store, a removed database
#      file, a decision still in flight at SIGTERM) and requires exit 0 with
#      "ERROR SUMMARY: 0 errors", plus `audit`, `check`, `advertise --once`,
#      `budgets`, and the exporter on the stub NVML (NVML up, then failing).
# Not part of ctest: it takes minutes. Usage: tests/fault/valgrind.sh [BUILD_DIR]
# Needs valgrind (Debian package valgrind), curl, jq, sqlite3. Results: docs/robustness.md.
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-$SRC/build-valgrind}
if ! command -v valgrind >/dev/null; then
    echo "valgrind.sh: valgrind is not installed (apt-get install valgrind)" >&2
    exit 2
fi
cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Debug -DGVW_SANITIZE=OFF >/dev/null || exit 2
cmake --build "$BUILD" -j"$(nproc)" >"$BUILD/valgrind-build.log" 2>&1 ||
    { tail -20 "$BUILD/valgrind-build.log"; exit 2; }

export GVW_BINARY=$BUILD/gpu-vram-watchdog GVW_SIM=$BUILD/gvw-sim GVW_FAULTKIT=$BUILD/gvw-faultkit
export GVW_SOURCE_DIR=$SRC GVW_TEST_DATA=$SRC/tests/data
source "$SRC/tests/lib/harness.sh"
source "$SRC/tests/fault/lib.sh"
VG=(valgrind --leak-check=full --error-exitcode=1 --errors-for-leak-kinds=definite,possible
    --show-leak-kinds=definite,possible --num-callers=30)
VG_KEEP=${VG_KEEP:-$BUILD/valgrind-logs}
rm -rf "$VG_KEEP"
mkdir -p "$VG_KEEP"

# vg_summary LOG -- "errors=N definitely=B possibly=B" from a valgrind log.
vg_summary() {
    local e d p
    e=$(sed -n 's/.*ERROR SUMMARY: \([0-9,]*\) errors.*/\1/p' "$1" | tail -1)
    d=$(sed -n 's/.*definitely lost: \([0-9,]*\) bytes.*/\1/p' "$1" | tail -1)
    p=$(sed -n 's/.*possibly lost: \([0-9,]*\) bytes.*/\1/p' "$1" | tail -1)
    echo "errors=${e:-?} definitely_lost=${d:-0} possibly_lost=${p:-0}"
}

# --- 1. every cmocka program, with the environment ctest gives it -------------------
ctest --test-dir "$BUILD" --show-only=json-v1 >"$TMP/tests.json"
jq -r '.tests[] | select(.command[0] | endswith("/bash") | not)
       | select([.properties[]? | select(.name == "LABELS") | .value[]] | any(. == "unit" or . == "integration"))
       | .name' "$TMP/tests.json" >"$TMP/programs"
while read -r name; do
    mapfile -t cmd < <(jq -r --arg n "$name" '.tests[] | select(.name == $n) | .command[]' "$TMP/tests.json")
    mapfile -t envs < <(jq -r --arg n "$name" '.tests[] | select(.name == $n) | .properties[]?
        | select(.name == "ENVIRONMENT") | .value[]' "$TMP/tests.json")
    wd=$(jq -r --arg n "$name" '.tests[] | select(.name == $n) | .properties[]?
        | select(.name == "WORKING_DIRECTORY") | .value' "$TMP/tests.json")
    t0=$(date +%s)
    (cd "${wd:-$BUILD}" && env "${envs[@]}" "${VG[@]}" --log-file="$VG_KEEP/$name.vg.log" "${cmd[@]}" \
        >"$VG_KEEP/$name.out" 2>&1 </dev/null)
    rc=$?
    summary="$(vg_summary "$VG_KEEP/$name.vg.log") $(($(date +%s) - t0))s"
    if [ "$rc" -eq 0 ]; then pass "valgrind: $name ($summary)"; else
        fail "valgrind: $name exits $rc ($summary)" "see $VG_KEEP/$name.vg.log and .out"; fi
done <"$TMP/programs"

# --- 2. serve under valgrind ----------------------------------------------------------
cat >"$TMP/vg-gvw" <<SH
#!/bin/sh
exec ${VG[*]} --log-file=$VG_KEEP/serve.%p.vg.log "$GVW_BINARY" "\$@"
SH
chmod +x "$TMP/vg-gvw"

# vg_serve LOG ENV... -- serve under valgrind; sets SERVE_PID and SERVE_PORT.
vg_serve() {
    local log=$1
    shift
    env LISTEN_ADDR=127.0.0.1:0 WEBHOOK_TOKEN_FILE="$TMP/token" "$@" "$TMP/vg-gvw" serve 2>"$log" &
    SERVE_PID=$!
    PIDS+=("$SERVE_PID")
    SERVE_PORT=
    for _ in $(seq 1 300); do
        SERVE_PORT=$(sed -n 's/.*"msg":"serving".*"port":"\([0-9]*\)".*/\1/p' "$log" | head -n1)
        [ -n "$SERVE_PORT" ] && return 0
        alive "$SERVE_PID" || break
        sleep 0.1
    done
    echo "serve under valgrind did not start:" >&2
    cat "$log" >&2
    return 1
}

# vg_stop NAME -- SIGTERM; requires exit 0 (valgrind exits 1 on any error or leak).
vg_stop() {
    kill -TERM "$SERVE_PID"
    wait "$SERVE_PID"
    local rc=$?
    expect_eq "valgrind: serve ($1) exits 0 after SIGTERM: $(vg_summary "$VG_KEEP/serve.$SERVE_PID.vg.log")" 0 "$rc"
}

# wait_decision DB N -- waits until N decisions of the vg- triggers exist, none in_progress.
wait_decision() {
    wait_for 30 sh -c "'$GVW_BINARY' audit --db '$1' --limit 0 --format json |
        jq -e '[.[] | select(.fingerprint | startswith(\"vg-\"))] |
               length >= $2 and all(.result != \"in_progress\")'"
}

start_sim || { fail "the simulator starts"; finish; exit 1; }
start_upstream prom-ok reply 200 "$SRC/tests/fault/data/prom-sim-incident.json"
PROM_OK=$UP_URL

# Exercise 1: every endpoint and code, load, decisions that evict, coalesce, fan out.
DB="$TMP/vg1.db"
vg_serve "$TMP/serve-vg1.log" AUDIT_DB="$DB" DRY_RUN=false SETTLE=1s ADVERTISE_INTERVAL=0 \
    PROMETHEUS_URL="$PROM_OK" KUBE_API_URL="$SIM" || exit 1
expect_eq "serve: /healthz" 200 "$(get /healthz)"
expect_eq "serve: /readyz" 200 "$(get /readyz)"
expect_eq "serve: /metrics" 200 "$(get /metrics)"
# The fixtures are GPUVRAMLow deliveries: renamed, so that only the vg- triggers decide.
sed 's/GPUVRAMLow/FixtureAlert/g' "$FIXTURE" >"$TMP/fixture-25.json"
sed 's/GPUVRAMLow/FixtureAlert/g' "$GVW_TEST_DATA/alertmanager-0.27-webhook.json" >"$TMP/fixture-27.json"
expect_eq "serve: a webhook" 200 "$(post "$TMP/fixture-25.json")"
expect_eq "serve: a newer webhook" 200 "$(post "$TMP/fixture-27.json")"
expect_eq "serve: 401" 401 "$(http_code POST /webhook --data-binary @"$FIXTURE")"
expect_eq "serve: 400" 400 "$(http_code POST /webhook "${AUTH[@]}" --data-binary 'nope')"
expect_eq "serve: 405" 405 "$(http_code GET /webhook)"
expect_eq "serve: 404" 404 "$(http_code GET /nope)"
head -c $((1024 * 1024 + 10)) /dev/zero | tr '\0' ' ' >"$TMP/big"
expect_eq "serve: 413" 413 "$(post "$TMP/big")"
expect_contains "serve: 300 webhooks under load" "ok=300" "$(load --conns 4 --count 300 --prefix vg)"
trigger_json "$TMP/t1.json" gpu-node-1 vg-t1
expect_eq "serve: a trigger" 200 "$(post "$TMP/t1.json")"
expect_eq "serve: a second trigger at once (coalesced)" 200 "$(post "$TMP/t1.json")"
wait_decision "$DB" 2
sed 's/"node":"gpu-node-1",//' "$TMP/t1.json" >"$TMP/t-any.json"
sleep 1.2 # past SETTLE
expect_eq "serve: a trigger without a node (lists the GPU nodes)" 200 "$(post "$TMP/t-any.json")"
wait_decision "$DB" 3
# The third finds immich-ml replaced by a young pod: usually skipped_no_candidate.
results=$(decisions "$DB" | jq -r '.[] | select(.fingerprint | startswith("vg-")) | .result' | sort | tr '\n' ' ')
expect_contains "serve: one eviction ($results)" "recycled" "$results"
expect_contains "serve: one coalesced trigger ($results)" "coalesced" "$results"
vg_stop "exercise 1"

# The CLI on that database, and check / advertise against the simulator.
for args in "audit" "audit --format json" "audit alerts --limit 0" "audit alerts --format json" \
    "audit stats" "audit stats --format json" "audit show 1" "audit show 1 --format json"; do
    # shellcheck disable=SC2086
    "${VG[@]}" --log-file="$VG_KEEP/cli.vg.log" "$GVW_BINARY" $args --db "$DB" >/dev/null 2>&1 </dev/null
    expect_eq "valgrind: $args: $(vg_summary "$VG_KEEP/cli.vg.log")" 0 "$?"
done
PROMETHEUS_URL="$PROM_OK" KUBE_API_URL="$SIM" "${VG[@]}" --log-file="$VG_KEEP/check.vg.log" \
    "$GVW_BINARY" check --node gpu-node-1 --format json >/dev/null 2>&1
expect_eq "valgrind: check --node: $(vg_summary "$VG_KEEP/check.vg.log")" 0 "$?"
PROMETHEUS_URL="$PROM_OK" KUBE_API_URL="$SIM" "${VG[@]}" --log-file="$VG_KEEP/check-all.vg.log" \
    "$GVW_BINARY" check >/dev/null 2>&1
expect_eq "valgrind: check (every node): $(vg_summary "$VG_KEEP/check-all.vg.log")" 0 "$?"
KUBE_API_URL="$SIM" PROMETHEUS_URL="$PROM_OK" "${VG[@]}" --log-file="$VG_KEEP/advertise.vg.log" \
    "$GVW_BINARY" advertise --once >/dev/null 2>&1
expect_eq "valgrind: advertise --once: $(vg_summary "$VG_KEEP/advertise.vg.log")" 0 "$?"
PROMETHEUS_URL="$PROM_OK" KUBE_API_URL="$SIM" "${VG[@]}" --log-file="$VG_KEEP/budgets.vg.log" \
    "$GVW_BINARY" budgets --format json >/dev/null 2>&1
expect_eq "valgrind: budgets: $(vg_summary "$VG_KEEP/budgets.vg.log")" 0 "$?"

# The exporter on the stub NVML: two GPUs, a pod's process, a process NVML
# cannot measure, one in both lists; then NVML fails and comes back.
if [ -e "$BUILD/stub-nvml/libnvidia-ml.so.1" ]; then
    mkdir -p "$TMP/xp/proc/4242"
    printf '%s\n' 'gpu 0 GPU-a 16106127360 12884901888 Tesla T4' \
        'gpu 1 GPU-b 16106127360 15000000000 Tesla T4' 'proc 0 4242 1073741824 compute' \
        'proc 1 4243 na graphics' 'proc 0 4244 5000 both' >"$TMP/xp/nvml.state"
    echo "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1b2c3d4e_aaaa_bbbb_cccc_0123456789ab.slice/cri-containerd-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope" \
        >"$TMP/xp/proc/4242/cgroup"
    XP_PORT=$(free_port)
    NODE_NAME=vg-node NVML_LIBRARY="$BUILD/stub-nvml/libnvidia-ml.so.1" \
        GVW_STUB_NVML_STATE="$TMP/xp/nvml.state" PROC_ROOT="$TMP/xp/proc" KUBE_API_URL="$SIM" \
        EXPORTER_LISTEN_ADDR="127.0.0.1:$XP_PORT" POLL_INTERVAL=200ms \
        "${VG[@]}" --log-file="$VG_KEEP/exporter.vg.log" "$GVW_BINARY" exporter 2>"$TMP/xp/log" &
    XP_PID=$!
    wait_for 60 sh -c "curl -s http://127.0.0.1:$XP_PORT/metrics | grep -q '^gpu_vram_exporter_up 1'"
    expect_contains "exporter under valgrind: device series" "gpu_memory_total_bytes" \
        "$(curl -s "http://127.0.0.1:$XP_PORT/metrics")"
    printf 'init fail\n' >"$TMP/xp/nvml.state.new" && mv "$TMP/xp/nvml.state.new" "$TMP/xp/nvml.state"
    wait_for 30 sh -c "curl -s http://127.0.0.1:$XP_PORT/metrics | grep -q '^gpu_vram_exporter_up 0'"
    expect_contains "exporter under valgrind: up 0 when NVML fails" "gpu_vram_exporter_up 0" \
        "$(curl -s "http://127.0.0.1:$XP_PORT/metrics")"
    kill -TERM "$XP_PID"
    wait "$XP_PID"
    expect_eq "valgrind: exporter exits 0 after SIGTERM: $(vg_summary "$VG_KEEP/exporter.vg.log")" 0 "$?"
fi

# Exercise 2: store faults, then SIGTERM with a decision in flight.
start_upstream prom-hold hold
mkdir "$TMP/vg2"
DB="$TMP/vg2/audit.db"
vg_serve "$TMP/serve-vg2.log" AUDIT_DB="$DB" PROMETHEUS_URL="$UP_URL" HTTP_TIMEOUT=60s \
    KUBE_API_URL="http://127.0.0.1:$(free_port)" || exit 1
expect_eq "serve: a webhook" 200 "$(post "$TMP/fixture-25.json")"
lock_db "$DB"
expect_eq "serve: 503 while another writer holds the lock" 503 "$(post "$TMP/fixture-25.json")"
unlock_db
expect_eq "serve: 200 once it is released" 200 "$(post "$TMP/fixture-25.json")"
rm -f "$DB" "$DB-wal" "$DB-shm"
wait_for 20 sh -c "curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$SERVE_PORT/readyz | grep -qx 200 && test -e '$DB'"
expect_eq "serve: reopened after the file was removed" 200 "$(post "$TMP/fixture-25.json")"
trigger_json "$TMP/t2.json" gpu-node-1 vg-t2
expect_eq "serve: a trigger whose query never returns" 200 "$(post "$TMP/t2.json")"
wait_for 20 grep -q '^GET /api/v1/query' "$UP_OUT"
vg_stop "exercise 2, decision in flight"

finish
