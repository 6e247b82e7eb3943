#!/usr/bin/env bash
# run.sh -- runs one fuzz target over a copy of its seed corpus.
#
#   tests/fuzz/run.sh TARGET SECONDS|-runs=N [libFuzzer flags...]
#
# TARGET is alert, quantity, prom, pods, jscan or termtext (or fuzz_alert, ...). The
# corpus is copied into a temporary directory, so the repository's corpus is
# never written; inputs found on the way are dropped afterwards unless
# FUZZ_KEEP=1.
# Exits 0 when the run ends clean; non-zero on a crash, leak, timeout or
# out-of-memory, printing the reproducer's path (kept, with the log).
#
# FUZZ_BUILD_DIR  where the targets are (default build-fuzz/); they are
#                 (re)built by build.sh when missing or older than a source.
# FUZZ_TMP        parent of the temporary directory (default $TMPDIR or /tmp).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=${FUZZ_BUILD_DIR:-$ROOT/build-fuzz}

usage() {
    echo "usage: tests/fuzz/run.sh alert|quantity|prom|pods|jscan|termtext SECONDS|-runs=N [libFuzzer flags...]" >&2
    exit 2
}
[ $# -ge 2 ] || usage
t=${1#fuzz_}
case $t in alert | quantity | prom | pods | jscan | termtext) ;; *) usage ;; esac
if [[ $2 =~ ^-runs=[0-9]+$ ]]; then
    limit=("$2")
elif [[ $2 =~ ^[0-9]+$ ]]; then
    limit=("-max_total_time=$2")
else
    usage
fi
shift 2

bin=$BUILD/fuzz_$t
if [ ! -x "$bin" ] ||
    [ -n "$(find "$HERE" "$ROOT/common/pod" "$ROOT/receiver/webhook" "$ROOT/receiver/clients" \
        "$ROOT/receiver/policy" "$ROOT/common/json" "$ROOT/common/util" -name '*.[ch]' -newer "$bin" 2>/dev/null | head -1)" ]; then
    bash "$HERE/build.sh" "$BUILD" >&2
fi

work=$(mktemp -d "${FUZZ_TMP:-${TMPDIR:-/tmp}}/gvw-fuzz-$t.XXXXXX")
mkdir "$work/corpus" "$work/artifacts"
cp -R "$HERE/corpus/$t/." "$work/corpus/"

# Leaks are findings too; UBSan is fatal already (-fno-sanitize-recover).
export ASAN_OPTIONS=${FUZZ_ASAN_OPTIONS:-detect_leaks=1:symbolize=1}
export UBSAN_OPTIONS=${FUZZ_UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
if [ -z "${ASAN_SYMBOLIZER_PATH:-}" ] && command -v llvm-symbolizer >/dev/null 2>&1; then
    ASAN_SYMBOLIZER_PATH=$(command -v llvm-symbolizer)
    export ASAN_SYMBOLIZER_PATH
fi

echo "fuzz/run.sh: $bin ${limit[*]} $* over $work/corpus" >&2
set +e
"$bin" -dict="$HERE/dict/$t.dict" -artifact_prefix="$work/artifacts/" \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "${limit[@]}" "$@" \
    "$work/corpus" 2>&1 | tee "$work/fuzz.log"
rc=${PIPESTATUS[0]}
set -e

found=$(find "$work/artifacts" -type f | head -1)
if [ "$rc" -ne 0 ] || [ -n "$found" ]; then
    echo "fuzz/run.sh: $t FAILED (exit $rc); log: $work/fuzz.log" >&2
    if [ -n "$found" ]; then
        echo "fuzz/run.sh: reproducer: $found" >&2
        echo "fuzz/run.sh: reproduce with: $bin $found" >&2
    fi
    exit 1
fi
echo "fuzz/run.sh: $t passed; corpus now $(find "$work/corpus" -type f | wc -l) inputs" >&2
if [ "${FUZZ_KEEP:-0}" = 1 ]; then
    echo "fuzz/run.sh: kept $work" >&2
else
    rm -rf "$work"
fi
