#!/usr/bin/env bash
# tsan.sh -- ThreadSanitizer over the tests that run the program's threads (the
# store's checkpoint thread in serve, the exporter's NVML thread):
#   1. builds a Debug tree with -fsanitize=thread (default /tmp/gvw-build-tsan;
#      ASan and TSan cannot share a build),
#   2. runs the ctest programs that start serve or the exporter, and the store's
#      own tests, with TSAN_OPTIONS writing every report to a log directory,
#   3. fails when a test fails or any report was written.
# Not part of ctest (a second full build): run it by hand after touching a thread.
# Usage: tests/fault/tsan.sh [BUILD_DIR]. Results: docs/robustness.md.
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-/tmp/gvw-build-tsan}
LOGS=$BUILD/tsan-logs
cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Debug -DGVW_SANITIZE=OFF \
    -DCMAKE_C_FLAGS="-fsanitize=thread -g -O1" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" \
    -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=thread" >/dev/null || exit 2
cmake --build "$BUILD" -j"$(nproc)" >"$BUILD/tsan-build.log" 2>&1 ||
    { tail -20 "$BUILD/tsan-build.log"; exit 2; }
rm -rf "$LOGS" && mkdir -p "$LOGS"
export TSAN_OPTIONS="halt_on_error=0 second_deadlock_stack=1 log_path=$LOGS/report"
(cd "$BUILD" && ctest -j2 --output-on-failure \
    -R 'test_store|test_exporter$|serve_http|fault_|e2e_incident|e2e_release|e2e_two_gpus|kube_tls')
rc=$?
reports=$(find "$LOGS" -type f | wc -l)
if [ "$reports" -gt 0 ]; then
    grep -h -E 'WARNING: ThreadSanitizer|SUMMARY' "$LOGS"/* | sort | uniq -c
    echo "tsan.sh: $reports report(s) in $LOGS" >&2
    exit 1
fi
[ "$rc" -eq 0 ] && echo "tsan.sh: no ThreadSanitizer report; every test passed"
exit "$rc"
