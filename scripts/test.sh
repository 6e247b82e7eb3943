#!/usr/bin/env bash
# test.sh -- the README's test command: installs what is missing, builds everything
# with AddressSanitizer + UndefinedBehaviorSanitizer, and runs every test with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh

BUILD=${BUILD_DIR:-build-asan}
cmake -S . -B "$BUILD" -DGVW_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build "$BUILD" -j"$(nproc)"

# The real-control-plane tier (ctest -L controlplane) runs the pinned upstream
# kube-apiserver, etcd, controller manager, scheduler and kwok, built from source
# once per machine into ~/.cache/gvw-controlplane (tests/controlplane/build.sh;
# about 11 minutes cold on 2 cores, instant after). It needs Go; without it the
# build fails and so does that test, loudly: nothing is installed behind your
# back and the tier is never skipped.
if GVW_CP_BIN=$(bash tests/controlplane/build.sh); then
    export GVW_CP_BIN
else
    export GVW_CP_BUILD_ERROR="tests/controlplane/build.sh failed (exit $?): see its output above"
    echo "test.sh: $GVW_CP_BUILD_ERROR; the controlplane test will fail" >&2
fi
# The overlay test (ctest -R controlplane_overlays) applies the prometheus-operator
# overlay on a cluster with the operator's own CRDs and checks plain-prometheus'
# scrape config with upstream promtool: both fetched pinned through the Go module
# proxy once per machine (tests/controlplane/monitoring.sh; promtool's build is
# 10-15 minutes cold on 2 cores), then answered from the cache with no network.
if GVW_MONITORING=$(bash tests/controlplane/monitoring.sh); then
    export GVW_MONITORING
else
    export GVW_MONITORING_ERROR="tests/controlplane/monitoring.sh failed (exit $?): see its output above"
    echo "test.sh: $GVW_MONITORING_ERROR; the controlplane_overlays test will fail" >&2
fi

# Leak checking on (the default under ASan); abort on the first UB report.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
cd "$BUILD"
ctest --output-on-failure -j2 "$@"
