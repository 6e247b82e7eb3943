#!/usr/bin/env bash
# install-deps.sh -- installs the Debian packages the build, tests and demo need,
# only when some are missing: apt-get as root, else sudo, else a clear message.
set -euo pipefail

PACKAGES=(build-essential cmake pkg-config curl ca-certificates
          libevent-dev libjansson-dev libcurl4-openssl-dev libsqlite3-dev libcmocka-dev
          sqlite3 jq prometheus prometheus-alertmanager clang libclang-rt-14-dev
          chromium python3 openssl clang-format cppcheck)

missing=()
for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}" >&2
if [ "$(id -u)" -eq 0 ]; then
    SUDO=()
elif command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
else
    echo "install-deps: not root and no sudo; please install: ${missing[*]}" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq
# Debian's prometheus packages start their services on install; the tests run
# their own instances on loopback ports, so those are not needed (and may not
# start in a container without systemd, which is harmless).
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
