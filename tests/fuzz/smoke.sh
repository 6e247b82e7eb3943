#!/usr/bin/env bash
# smoke.sh -- the fuzz smoke test (ctest fuzz_smoke): builds the six targets
# and runs each for a short while over its seed corpus.
#
#   tests/fuzz/smoke.sh [BUILD_DIR]
#
# BUILD_DIR defaults to a temporary directory (removed afterwards).
# FUZZ_SMOKE_SECONDS sets the time per target (default 18). Ends with the line
# "N passed, M failed" and exits non-zero when M > 0; a failure prints the
# end of the fuzzer's log (the sanitizer report) and the reproducer's path.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SECS=${FUZZ_SMOKE_SECONDS:-18}
TARGETS=(alert quantity prom pods jscan termtext)

if [ $# -ge 1 ]; then
    BUILD=$1
    mkdir -p "$BUILD"
    cleanup=
else
    BUILD=$(mktemp -d "${TMPDIR:-/tmp}/gvw-fuzz-build.XXXXXX")
    cleanup=$BUILD
fi
trap '[ -z "$cleanup" ] || rm -rf "$cleanup"' EXIT

start=$(date +%s)
if ! bash "$HERE/build.sh" "$BUILD"; then
    echo "fuzz smoke: cannot build the targets (see above)." >&2
    echo "fuzz smoke: the Debian packages needed are clang and libclang-rt-14-dev" \
        "(scripts/test.sh installs them)." >&2
    echo "0 passed, ${#TARGETS[@]} failed"
    exit 1
fi

passed=0
failed=0
for t in "${TARGETS[@]}"; do
    log=$BUILD/smoke-$t.log
    if FUZZ_BUILD_DIR=$BUILD bash "$HERE/run.sh" "$t" "$SECS" >"$log" 2>&1; then
        passed=$((passed + 1))
        echo "fuzz smoke: $t ok: $(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1)"
    else
        failed=$((failed + 1))
        echo "fuzz smoke: $t FAILED; the end of $log:"
        # The sanitizer's report and run.sh's reproducer lines.
        grep -v -E '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse)' "$log" | tail -60
        # A temporary build dir goes away; the reproducer (in run.sh's work
        # dir under TMPDIR) and this log stay.
        [ -z "$cleanup" ] || cp "$log" "${TMPDIR:-/tmp}/gvw-fuzz-smoke-$t.log"
    fi
done
echo "fuzz smoke: $(($(date +%s) - start)) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
