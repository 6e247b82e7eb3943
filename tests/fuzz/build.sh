#!/usr/bin/env bash
# build.sh -- builds the libFuzzer targets (clang, ASan + UBSan) into a directory.
#
#   tests/fuzz/build.sh [OUTDIR]      default: build-fuzz/ at the repository root
#
# Compiles the parser sources directly (never through the main CMake build,
# whose compiler is gcc). CLANG picks another clang; JOBS the parallelism.
# Needs the Debian packages clang, libclang-rt-14-dev (the libFuzzer
# runtime), libjansson-dev and pkg-config; fails naming them when one is
# missing.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OUT=${1:-$ROOT/build-fuzz}
CLANG=${CLANG:-clang}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
TARGETS=(fuzz_alert fuzz_quantity fuzz_prom fuzz_pods fuzz_jscan fuzz_termtext)

die() {
    echo "fuzz/build.sh: $*" >&2
    exit 1
}

command -v "$CLANG" >/dev/null 2>&1 ||
    die "$CLANG not found; install the Debian packages: clang libclang-rt-14-dev"
command -v pkg-config >/dev/null 2>&1 ||
    die "pkg-config not found; install the Debian package: pkg-config"
pkg-config --exists jansson ||
    die "jansson not found by pkg-config; install the Debian package: libjansson-dev"
read -r -a JANSSON_CFLAGS <<<"$(pkg-config --cflags jansson)"
read -r -a JANSSON_LIBS <<<"$(pkg-config --libs jansson)"

mkdir -p "$OUT/obj"
OUT=$(cd "$OUT" && pwd)

# A program with no LLVMFuzzerTestOneInput would not link anyway; this one
# tells a missing runtime apart from a compile error in the targets.
probe=$OUT/obj/probe
printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
    'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' \
    >"$probe.c"
if ! "$CLANG" -fsanitize=fuzzer,address,undefined "$probe.c" -o "$probe" 2>"$probe.log"; then
    cat "$probe.log" >&2
    die "$CLANG cannot link a libFuzzer target (libclang_rt.fuzzer missing?); install the Debian packages: clang libclang-rt-14-dev"
fi

# shellcheck disable=SC2054 # the commas are -fsanitize's, not separators
# The project's warnings, with the fuzzer's instrumentation. fuzzer-no-link:
# coverage for the sources; the runtime (and its main) comes at link time.
CFLAGS=(-std=c11 -D_POSIX_C_SOURCE=200809L -g -O1 -fno-omit-frame-pointer
        -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
        -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wvla -Wno-unused-parameter
        -I"$ROOT/common/pod" -I"$ROOT/receiver/policy" -I"$ROOT/receiver/webhook" -I"$ROOT/receiver/clients" -I"$ROOT/common/json" -I"$ROOT/common/util" -I"$ROOT/tests" -I"$HERE" "${JANSSON_CFLAGS[@]}")
# shellcheck disable=SC2054
LDFLAGS=(-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all)

SOURCES=("$ROOT/receiver/webhook/alert.c" "$ROOT/common/json/jscan.c" "$ROOT/common/util/utf8.c"
         "$ROOT/common/util/strpool.c" "$ROOT/common/json/json_str.c" "$ROOT/common/util/buf.c"
         "$ROOT/common/pod/quantity.c" "$ROOT/receiver/policy/usage.c"
         "$ROOT/receiver/policy/policy.c" "$ROOT/receiver/policy/device.c"
         "$ROOT/receiver/policy/decision_result.c" "$ROOT/common/util/rfc3339.c"
         "$ROOT/receiver/clients/prom_json.c" "$ROOT/common/pod/pods_json.c"
         "$ROOT/receiver/policy/node_name.c"
         "$ROOT/common/pod/pods_containers.c" "$ROOT/common/pod/pod.c" "$ROOT/common/pod/pods_walk.c"
         "$ROOT/common/pod/pods_meta.c" "$ROOT/common/pod/pods_status.c"
         "$ROOT/common/pod/pods_budget.c" "$ROOT/common/pod/budget_src.c"
         "$ROOT/common/pod/claim_json.c"
         "$ROOT/receiver/policy/budget_resolve.c" "$ROOT/common/util/decimal.c"
         "$ROOT/common/util/termtext.c")
for t in "${TARGETS[@]}"; do
    SOURCES+=("$HERE/$t.c")
done

# Compile every source once, JOBS at a time.
pids=()
fail=0
for src in "${SOURCES[@]}"; do
    obj=$OUT/obj/$(basename "$src" .c).o
    "$CLANG" "${CFLAGS[@]}" -c "$src" -o "$obj" &
    pids+=($!)
    if [ ${#pids[@]} -ge "$JOBS" ]; then
        wait "${pids[0]}" || fail=1
        pids=("${pids[@]:1}")
    fi
done
for p in "${pids[@]}"; do
    wait "$p" || fail=1
done
[ $fail -eq 0 ] || die "compilation failed"

o=$OUT/obj
link() {
    "$CLANG" "${LDFLAGS[@]}" "$@" "${JANSSON_LIBS[@]}" -lm
}
link -o "$OUT/fuzz_alert" "$o/fuzz_alert.o" "$o/alert.o" "$o/jscan.o" "$o/utf8.o" "$o/strpool.o" "$o/json_str.o" "$o/buf.o" \
    "$o/node_name.o"
link -o "$OUT/fuzz_quantity" "$o/fuzz_quantity.o" "$o/quantity.o"
link -o "$OUT/fuzz_prom" "$o/fuzz_prom.o" "$o/prom_json.o" "$o/jscan.o" "$o/utf8.o" "$o/strpool.o" "$o/usage.o" "$o/device.o"
link -o "$OUT/fuzz_pods" "$o/fuzz_pods.o" "$o/pods_json.o" "$o/jscan.o" "$o/utf8.o" "$o/strpool.o" "$o/rfc3339.o" \
    "$o/policy.o" "$o/usage.o" "$o/device.o" "$o/quantity.o" "$o/decision_result.o" \
    "$o/pods_budget.o" "$o/budget_src.o" "$o/budget_resolve.o" "$o/decimal.o" "$o/claim_json.o" \
    "$o/pods_containers.o" "$o/pod.o" "$o/pods_walk.o" "$o/pods_meta.o" "$o/pods_status.o" "$o/buf.o"
link -o "$OUT/fuzz_jscan" "$o/fuzz_jscan.o" "$o/jscan.o" "$o/utf8.o" "$o/strpool.o"
link -o "$OUT/fuzz_termtext" "$o/fuzz_termtext.o" "$o/termtext.o" "$o/utf8.o"
echo "fuzz/build.sh: built ${TARGETS[*]} in $OUT"
