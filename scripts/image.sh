#!/usr/bin/env bash
# image.sh -- builds the gpu-vram-watchdog image with podman and checks it as a cluster runs it.
#
#   bash scripts/image.sh            (ctest -L image runs it from a build tree)
#   IMAGE=registry.example/gvw:0.1.0 bash scripts/image.sh
#         the same, then pushes the image to that registry (podman push; log
#         in first with `podman login`) and points deploy/base/kustomization.yaml
#         at it (scripts/set-image.sh). There is no public image: this is how
#         a cluster gets one.
#
# Installs podman, runc, mmdebstrap and containerd when missing (Debian). No
# registry is needed: the debian:bookworm(-slim) base is made locally with
# mmdebstrap once and cached. The image is always rebuilt from the current
# sources; podman's layer cache keys on their content, so an unchanged tree
# rebuilds in seconds. Then: the image's size, its configuration, its files
# (every library resolves, no compiler, no shell), serve as non-root with a
# read-only root and a writable audit volume (/healthz, /readyz, a webhook),
# loading it into containerd the way deploy/README.md says (podman save, ctr
# import), the exporter (once the binary has it), and the incident replay
# (tests/e2e/test_incident.sh) with serve inside the container.
#
# Exit 77 (ctest SKIP_RETURN_CODE) with one line saying why where podman
# cannot run here; any other failure is a failure.
#
# Settings: GVW_IMAGE (tag, default localhost/gpu-vram-watchdog:test-<tree>),
# GVW_IMAGE_CACHE (base tar + containers.conf, default ~/.cache/gpu-vram-watchdog),
# GVW_BINARY and GVW_SIM (host builds for the replay; default build/).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
SKIP=77
skip() { echo "SKIP: $*"; exit $SKIP; }

# One tag per source tree: several checkouts on one machine may run at once.
# IMAGE (the user's registry tag) builds, checks, pushes and sets that one.
PUSH_TO=${IMAGE:-}
IMAGE=${IMAGE:-${GVW_IMAGE:-localhost/gpu-vram-watchdog:test-$(printf '%s' "$ROOT" | sha256sum | cut -c1-8)}}
CACHE=${GVW_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpu-vram-watchdog}
BASE=docker.io/library/debian:bookworm
BASE_SLIM=docker.io/library/debian:bookworm-slim
BASE_TAR=$CACHE/debian-bookworm-minbase.tar

# ------------------------------------------------------------ can podman run?
# Rootful podman only: the checks read the daemon's uid on the host and hand
# volumes to UID 65532, which rootless podman's user namespace would remap.
if [ "$(id -u)" -ne 0 ]; then
    skip "needs root for rootful podman (this is uid $(id -u); rootless user namespaces would remap the UIDs the checks assert)"
fi
need=()
for tool in podman runc mmdebstrap containerd; do command -v "$tool" >/dev/null || need+=("$tool"); done
if [ ${#need[@]} -gt 0 ]; then
    echo "image: installing ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    { apt-get update -qq && apt-get install -y -qq --no-install-recommends podman runc mmdebstrap containerd; } \
        >/tmp/gvw-image-apt.$$ 2>&1 ||
        skip "podman is not installable here: $(tail -n1 /tmp/gvw-image-apt.$$)"
    rm -f /tmp/gvw-image-apt.$$
fi

# This machine's engine settings, in a file of ours, never /etc: hybrid
# cgroups want the cgroupfs manager, a capped open-files limit rejects
# podman's default ulimits, and runc is the runtime Debian ships with podman.
mkdir -p "$CACHE" || { echo "FAIL - cannot create the cache $CACHE (GVW_IMAGE_CACHE)"; exit 1; }
export CONTAINERS_CONF=$CACHE/containers.conf
cat >"$CONTAINERS_CONF" <<'CONF'
[containers]
default_ulimits = []
[engine]
cgroup_manager = "cgroupfs"
runtime = "runc"
CONF
if ! info=$(podman info --format '{{.Host.OCIRuntime.Name}}' 2>&1); then
    skip "podman cannot run here: $(printf '%s\n' "$info" | tail -n1)"
fi

# ------------------------------------------------------------------ the base
t0=$(date +%s)
exec 9>"$CACHE/base.lock"
flock 9   # one run makes the base; a concurrent one waits for it
if ! podman image exists "$BASE"; then
    if [ ! -s "$BASE_TAR" ]; then
        echo "image: making the debian:bookworm base with mmdebstrap (once; cached in $BASE_TAR)"
        mmdebstrap --quiet --variant=minbase --format=tar bookworm "$BASE_TAR.part" ||
            { echo "FAIL - mmdebstrap could not make the base"; exit 1; }
        mv "$BASE_TAR.part" "$BASE_TAR"
    fi
    podman import --quiet "$BASE_TAR" "$BASE" >/dev/null || { echo "FAIL - podman import $BASE_TAR"; exit 1; }
fi
podman image exists "$BASE_SLIM" || podman tag "$BASE" "$BASE_SLIM"
flock -u 9
echo "image: base ready in $(($(date +%s) - t0)) s"

# ------------------------------------------------------------------ the build
VERSION=$(sed -n 's/^project(gpu-vram-watchdog VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
REVISION=$(git rev-parse HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD 2>/dev/null || REVISION="$REVISION-dirty"
old_ids=$(podman image inspect --format '{{.Id}}' "$IMAGE" "$IMAGE-build" 2>/dev/null)
# --label as well as the ARGs: podman 4.3's layer cache ignores build-arg
# values, so a cached LABEL step would keep an older revision.
build() {
    podman build --layers --network=host --ignorefile deploy/Dockerfile.dockerignore \
        --build-arg VERSION="$VERSION" --build-arg REVISION="$REVISION" \
        --label org.opencontainers.image.version="$VERSION" \
        --label org.opencontainers.image.revision="$REVISION" \
        -f deploy/Dockerfile "$@" . >"$TMP_BUILD_LOG" 2>&1 ||
        { tail -n 30 "$TMP_BUILD_LOG"; echo "FAIL - podman build $*"; exit 1; }
}
TMP_BUILD_LOG=$CACHE/build-${IMAGE##*:}.log
t0=$(date +%s)
# The build stage is tagged too: it keeps the compiler layer cached, and lets
# the stale images of an earlier source tree be removed below.
build --target build -t "$IMAGE-build"
build -t "$IMAGE"
echo "image: built $IMAGE in $(($(date +%s) - t0)) s"
new_ids=$(podman image inspect --format '{{.Id}}' "$IMAGE" "$IMAGE-build")
for id in $old_ids; do
    case " $new_ids " in *"$id"*) ;; *) podman rmi "$id" >/dev/null 2>&1 || true ;; esac
done
size=$(podman image inspect --format '{{.Size}}' "$IMAGE")
awk -v s="$size" -v i="$IMAGE" 'BEGIN { printf "image: %s is %d bytes (%.1f MB)\n", i, s, s / 1e6 }'

# ------------------------------------------------------------------ the checks
source "$ROOT/tests/lib/harness.sh"
CTRS=()
stop_containers() {
    for c in "${CTRS[@]:-}"; do [ -n "$c" ] && podman rm -f -t 0 "$c" >/dev/null 2>&1; done
    cleanup
}
trap stop_containers EXIT
run() { podman run --rm --network=none "$@"; }

# Configuration a cluster reads.
expect_eq "--version" "gpu-vram-watchdog $VERSION" "$(run "$IMAGE" --version 2>&1)"
expect_eq "runs as a numeric non-root user" "65532:65532" "$(podman image inspect --format '{{.Config.User}}' "$IMAGE")"
expect_eq "ENTRYPOINT is the binary, CMD serve (so 'IMAGE exporter' works)" \
    "[/usr/local/bin/gpu-vram-watchdog] [serve]" \
    "$(podman image inspect --format '{{.Config.Entrypoint}} {{.Config.Cmd}}' "$IMAGE")"
expect_eq "no HEALTHCHECK (Kubernetes probes do that)" "" \
    "$(podman image inspect --format '{{with .Config.Healthcheck}}{{.Test}}{{end}}' "$IMAGE")"
labels=$(podman image inspect --format '{{json .Config.Labels}}' "$IMAGE")
expect_eq "OCI labels: title, version, revision, source" "gpu-vram-watchdog $VERSION $REVISION true" \
    "$(echo "$labels" | jq -r '"\(."org.opencontainers.image.title") \(."org.opencontainers.image.version") \(."org.opencontainers.image.revision") \(."org.opencontainers.image.source" | startswith("https://"))"')"

# Files: every library resolves (ld.so --list is what ldd runs; the image
# has no shell for ldd itself), and nothing but the runtime is there.
libs=$(run --entrypoint /lib64/ld-linux-x86-64.so.2 "$IMAGE" --list /usr/local/bin/gpu-vram-watchdog 2>&1)
if [ -n "$libs" ] && ! grep -q 'not found' <<<"$libs" && grep -q 'libcurl.so.4 => /' <<<"$libs" &&
    grep -q 'libsqlite3.so.0 => /' <<<"$libs"; then
    pass "ldd in the image: all $(grep -c '=> /' <<<"$libs") libraries resolve"
else
    fail "ldd in the image: every library resolves" "$libs"
fi
# The exporter dlopen()s the node's libnvidia-ml.so.1, whose own
# dependencies must be in the image: glibc's libpthread, libdl, librt, libm.
# ld.so --verify exits 2 for a loadable shared library, 1 when there is none.
for dep in libpthread.so.0 libdl.so.2 librt.so.1 libm.so.6; do
    run --entrypoint /lib64/ld-linux-x86-64.so.2 "$IMAGE" --verify "/lib/x86_64-linux-gnu/$dep" >/dev/null 2>&1
    expect_eq "$dep is in the image for NVML's dlopen (ld.so --verify)" 2 $?
done
cid=$(podman create "$IMAGE")
files=$(podman export "$cid" | tar -t)
podman rm "$cid" >/dev/null
forbidden=$(grep -E '^usr/(local/)?include/|(^|/)(cc|gcc[-0-9.]*|c\+\+|g\+\+|cpp|ld|ld\.bfd|as|make|cmake|sh|bash|dash|apt|apt-get|dpkg)$|\.(a|h|o)$' <<<"$files")
expect_eq "no compiler, headers, shell or package manager in the image" "" "$forbidden"
echo "     ($(grep -vc '/$' <<<"$files") files in the image)"

# logged_port NAME MSG -- waits for container NAME's log line MSG and prints
# the port it bound. Containers listen on port 0 (host network): a port
# picked free beforehand can be taken by a parallel test before the bind.
logged_port() {
    local p
    for _ in $(seq 1 200); do
        p=$(podman logs "$1" 2>&1 | sed -n "s/.*\"msg\":\"$2\".*\"port\":\"\([0-9]*\)\".*/\1/p" | head -n1)
        [ -n "$p" ] && { echo "$p"; return 0; }
        [ "$(podman inspect --format '{{.State.Running}}' "$1" 2>/dev/null)" = true ] || break
        sleep 0.1
    done
    return 1
}

# serve as the Deployment runs it: its user, read-only root, no capabilities,
# no privilege escalation, the audit store on a volume, the token mounted.
TOKEN=e2e-image-$RANDOM$RANDOM
printf '%s\n' "$TOKEN" >"$TMP/token"
chmod 0644 "$TMP/token"
mkdir -p "$TMP/audit"
SECURE=(--network=host --read-only --read-only-tmpfs=false --tmpfs /tmp:rw,size=16m
    --cap-drop=ALL --security-opt=no-new-privileges
    -v "$TMP/token:/etc/gpu-vram-watchdog/webhook/token:ro"
    -e WEBHOOK_TOKEN_FILE=/etc/gpu-vram-watchdog/webhook/token
    -e PROMETHEUS_URL=http://127.0.0.1:1 -e KUBE_API_URL=http://127.0.0.1:1 -e ADVERTISE_INTERVAL=0)
name=gvw-image-serve-$$
CTRS+=("$name")
podman run -d --name "$name" "${SECURE[@]}" -v "$TMP/audit:/var/lib/gpu-vram-watchdog:U" \
    -e LISTEN_ADDR=127.0.0.1:0 "$IMAGE" >/dev/null
SERVE_PORT=$(logged_port "$name" serving)
if [ -n "$SERVE_PORT" ] && wait_for 20 curl -sf "http://127.0.0.1:$SERVE_PORT/readyz"; then
    pass "serve in the container answers /readyz (the audit store opened on the volume)"
else
    fail "serve in the container answers /readyz" "$(podman logs "$name" 2>&1 | tail -n 5)"
fi
expect_eq "/healthz" "200 ok" "$(http_code GET /healthz) $(cat "$TMP/body")"
expect_eq "/readyz" "200 ready" "$(http_code GET /readyz) $(cat "$TMP/body")"
pid=$(podman inspect --format '{{.State.Pid}}' "$name")
expect_eq "the daemon runs as uid 65532, gid 65532" "65532 65532" \
    "$(awk '/^Uid:/ { u = $2 } /^Gid:/ { g = $2 } END { print u, g }' "/proc/$pid/status" 2>/dev/null)"
expect_eq "with no capabilities" "0000000000000000" "$(awk '/^CapEff:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)"
expect_eq "and no_new_privs" 1 "$(awk '/^NoNewPrivs:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)"
expect_eq "running serve" "/usr/local/bin/gpu-vram-watchdog serve" "$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | sed 's/ $//')"
expect_eq "POST /webhook with the mounted token" 200 \
    "$(http_code POST /webhook -H "Authorization: Bearer $TOKEN" --data-binary @"$GVW_SOURCE_DIR/tests/data/alertmanager-0.27-webhook.json")"
expect_eq "the audit store on the volume belongs to 65532, mode 0600" "65532 600" \
    "$(stat -c '%u %a' "$TMP/audit/audit.db" 2>/dev/null)"
podman stop -t 10 "$name" >/dev/null 2>&1
expect_eq "SIGTERM stops serve cleanly (PID 1 in the container)" 0 \
    "$(podman inspect --format '{{.State.ExitCode}}' "$name")"
recorded=$(podman run --rm --network=none -v "$TMP/audit:/var/lib/gpu-vram-watchdog" "$IMAGE" \
    audit alerts --format json 2>&1 | jq -r '[.[].alertname] | sort | unique | join(",")' 2>&1)
expect_contains "'IMAGE audit alerts' reads the alert back from the volume" "GPUVRAMLow" "$recorded"

# The root filesystem really is read-only: without the volume the store's
# directory is the image's own, and the store cannot open.
name=gvw-image-ro-$$
CTRS+=("$name")
podman run -d --name "$name" "${SECURE[@]}" -e LISTEN_ADDR=127.0.0.1:0 "$IMAGE" >/dev/null
SERVE_PORT=$(logged_port "$name" serving)
wait_for 20 curl -s -o /dev/null "http://127.0.0.1:$SERVE_PORT/healthz"
expect_eq "without a volume (read-only root) /readyz is 503" 503 "$(http_code GET /readyz)"
wait_for 10 sh -c "podman logs $name 2>&1 | grep -q 'audit store not open'"
expect_contains "and serve says why" "Read-only file system" "$(podman logs "$name" 2>&1 | grep 'audit store not open' | head -n1)"
podman rm -f -t 0 "$name" >/dev/null

# Into a cluster without a registry, as deploy/README.md says: podman save,
# then `ctr -n k8s.io images import` into containerd (a private instance on
# its own socket, root and state here), and containerd runs it.
CTRD=$TMP/containerd
mkdir -p "$CTRD"
printf 'version = 2\nroot = "%s/root"\nstate = "%s/state"\n[grpc]\naddress = "%s/sock"\n' \
    "$CTRD" "$CTRD" "$CTRD" >"$CTRD/config.toml"
saved=localhost/gpu-vram-watchdog:$VERSION
podman tag "$IMAGE" "$saved"
if podman save -o "$CTRD/image.tar" "$saved" >/dev/null 2>&1; then
    containerd --config "$CTRD/config.toml" >"$CTRD/log" 2>&1 &
    CTRD_PID=$!
    PIDS+=("$CTRD_PID")
    if wait_for 20 ctr -a "$CTRD/sock" version; then
        ctr -a "$CTRD/sock" -n k8s.io images import "$CTRD/image.tar" >"$CTRD/import.out" 2>&1
        expect_contains "ctr -n k8s.io images import of the podman save archive names it $saved" "$saved" \
            "$(ctr -a "$CTRD/sock" -n k8s.io images ls -q 2>&1)"
        expect_eq "containerd runs the imported image" "gpu-vram-watchdog $VERSION" \
            "$(ctr -a "$CTRD/sock" -n k8s.io run --rm "$saved" "gvw-image-$$" /usr/local/bin/gpu-vram-watchdog --version 2>&1)"
    else
        fail "a private containerd starts for the import check" "$(tail -n 3 "$CTRD/log")"
    fi
    kill "$CTRD_PID" 2>/dev/null
    wait "$CTRD_PID" 2>/dev/null
else
    fail "podman save $saved"
fi
podman rmi "$saved" >/dev/null 2>&1

# The exporter: the same image, another subcommand. First without NVML (a
# node with no driver: up 0, no device series), then against the stub NVML
# built here without sanitizers (an ASan-built one cannot load in the image;
# GVW_NVML_STUB names another), driven by a state file: up 1, the device's
# figures, and a process no pod accounts for counted as unattributed.
exporter_check() { # WANT_UP EXTRA_PODMAN_ARGS...
    local want=$1 name port
    shift
    name=gvw-image-exporter-$want-$$
    CTRS+=("$name")
    podman run -d --name "$name" --network=host --read-only --cap-drop=ALL \
        --security-opt=no-new-privileges -e NODE_NAME=image-test-node \
        -e EXPORTER_LISTEN_ADDR=127.0.0.1:0 -e KUBE_API_URL=http://127.0.0.1:1 \
        "$@" "$IMAGE" exporter >/dev/null
    port=$(logged_port "$name" "exporter listening")
    if wait_for 20 sh -c "curl -sf http://127.0.0.1:$port/metrics | grep -q '^gpu_vram_exporter_up $want'"; then
        pass "exporter in the image serves /metrics (gpu_vram_exporter_up $want)"
    else
        fail "exporter in the image serves /metrics with gpu_vram_exporter_up $want" "$(podman logs "$name" 2>&1 | tail -n 5)"
    fi
    curl -sf "http://127.0.0.1:$port/metrics" >"$TMP/exporter-$want.txt" || true
    expect_eq "exporter /healthz (up $want)" 200 "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/healthz")"
    podman rm -f -t 0 "$name" >/dev/null
}
if ! run "$IMAGE" --help 2>&1 | grep -qE '^  exporter( |$)'; then
    echo "skip - exporter in the image: this tree's binary has no 'exporter' subcommand"
else
    exporter_check 0 -e NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1
    if grep -q '^gpu_memory_total_bytes' "$TMP/exporter-0.txt"; then
        fail "without NVML no device series is served"
    else
        pass "without NVML no device series is served"
    fi
    stub_lib=${GVW_NVML_STUB:-}
    if [ -z "$stub_lib" ]; then
        mkdir -p "$TMP/stub"
        stub_lib=$TMP/stub/libnvidia-ml.so.1
        cc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -shared -fPIC -o "$stub_lib" \
            tests/stub_nvml/stub_nvml.c || fail "the stub NVML builds"
    fi
    printf '%s\n' 'gpu 0 GPU-image-0 16106127360 12884901888 Tesla T4' \
        'proc 0 4242 1073741824 compute' >"$TMP/stub/nvml.state"
    exporter_check 1 -v "$stub_lib:/opt/nvml/libnvidia-ml.so.1:ro" \
        -v "$TMP/stub/nvml.state:/opt/nvml/nvml.state:ro" \
        -e NVML_LIBRARY=/opt/nvml/libnvidia-ml.so.1 -e GVW_STUB_NVML_STATE=/opt/nvml/nvml.state
    expect_contains "the exporter reads the device through NVML in the image" \
        'gpu_memory_total_bytes{node="image-test-node",gpu="0",uuid="GPU-image-0",model="Tesla T4"} 16106127360' \
        "$(cat "$TMP/exporter-1.txt")"
    expect_contains "a process no pod accounts for is unattributed" \
        'gpu_memory_unattributed_bytes{node="image-test-node",gpu="0",uuid="GPU-image-0"}' \
        "$(cat "$TMP/exporter-1.txt")"
fi

# The incident replay with serve in the container: real Prometheus and
# Alertmanager, the simulator, the host binary only for audit/check.
BIN=$GVW_BINARY
SIM=${GVW_SIM:-$(dirname "$BIN")/gvw-sim}
if [ ! -x "$BIN" ] || [ ! -x "$SIM" ]; then
    fail "incident replay with serve in the image" "no host build at $BIN / $SIM (build the targets gpu-vram-watchdog and gvw-sim, or set GVW_BINARY and GVW_SIM)"
else
    settings=$(run "$IMAGE" --help | sed -n 's/^  \([A-Z][A-Z0-9_]*\)  *--.*/\1/p' | tr '\n' ' ')
    if env GVW_IMAGE="$IMAGE" GVW_IMAGE_SETTINGS="$settings" GVW_SERVE_CIDFILE="$TMP/replay.cid" \
        GVW_SERVE_CMD="$ROOT/tests/e2e/serve_in_image.sh" GVW_BINARY="$BIN" GVW_SIM="$SIM" \
        GVW_SOURCE_DIR="$ROOT" bash "$ROOT/tests/e2e/test_incident.sh" >"$TMP/replay.out" 2>&1; then
        pass "incident replay with serve in the container ($(tail -n1 "$TMP/replay.out"))"
    else
        fail "incident replay with serve in the container" "$(grep -E '^FAIL|passed,' "$TMP/replay.out" | head -n 20)"
    fi
    if [ -s "$TMP/replay.cid" ]; then
        pass "the replay's serve ran in a container of the image"
    else
        fail "the replay's serve ran in a container of the image" "no container was started (is start_serve still used?)"
    fi
fi

finish || exit 1

# IMAGE=...: the checked image to the user's registry, and the kustomization at it.
if [ -n "$PUSH_TO" ]; then
    echo "image: pushing $IMAGE"
    podman push "$IMAGE" || { echo "FAIL - podman push $IMAGE (log in first: podman login ${IMAGE%%/*})"; exit 1; }
    bash "$ROOT/scripts/set-image.sh" "$IMAGE"
fi
