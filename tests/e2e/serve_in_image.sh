#!/usr/bin/env bash
# serve_in_image.sh -- `gpu-vram-watchdog serve` inside the image, for GVW_SERVE_CMD.
# tests/lib/harness.sh runs this instead of "$GVW_BINARY serve", with the same
# environment. It passes on every setting the image's binary knows (the names
# its --help lists) that is set here, bind-mounts the files settings name at
# the same path (read-only), and AUDIT_DB's directory read-write, handed to the
# image's user (podman :U). The container runs like deploy/base/statefulset.yaml
# runs it: its own non-root user, read-only root, a tmpfs /tmp, no
# capabilities, no privilege escalation; host network, so loopback is shared.
# Needs GVW_IMAGE (the image) and CONTAINERS_CONF when the engine needs it;
# scripts/image.sh sets both.
set -euo pipefail
: "${GVW_IMAGE:?GVW_IMAGE names the image to run}"

# GVW_IMAGE_SETTINGS: the names, when the caller has read them already
# (each podman run costs a second or more).
names=${GVW_IMAGE_SETTINGS:-$(podman run --rm --network=none "$GVW_IMAGE" --help |
    sed -n 's/^  \([A-Z][A-Z0-9_]*\)  *--.*/\1/p')}
[ -n "$names" ] || { echo "serve_in_image: no settings in the image's --help" >&2; exit 1; }
args=()
# GVW_SERVE_CIDFILE: where podman writes the container's ID (proof it ran).
if [ -n "${GVW_SERVE_CIDFILE:-}" ]; then args+=(--cidfile "$GVW_SERVE_CIDFILE"); fi
for name in $names KUBERNETES_SERVICE_HOST KUBERNETES_SERVICE_PORT; do
    [ -n "${!name+set}" ] || continue
    value=${!name}
    args+=(-e "$name=$value")
    case $name in
    AUDIT_DB)
        dir=$(dirname "$value")
        args+=(-v "$dir:$dir:U") ;;
    *_FILE | NVML_LIBRARY)
        if [ -f "$value" ]; then args+=(-v "$value:$value:ro"); fi ;;
    esac
done

# exec: the harness stops serve by signalling this PID; podman run forwards
# the signal to the daemon (--sig-proxy, the default) and removes the container.
exec podman run --rm --network=host --read-only --read-only-tmpfs=false \
    --tmpfs /tmp:rw,size=16m --cap-drop=ALL --security-opt=no-new-privileges \
    "${args[@]}" "$GVW_IMAGE" serve "$@"
