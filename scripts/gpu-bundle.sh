#!/usr/bin/env bash
# gpu-bundle.sh -- gathers what scripts/gpu-check.sh needs on a GPU box without
# Debian packages into one directory (under 64 MiB): the built binaries, the
# shared libraries they load except glibc's, Prometheus, Alertmanager, promtool
# and amtool (xz-compressed), Alertmanager's web assets, the rules, the shipped
# Alertmanager route, jq and curl, and the check itself. Usage: scripts/gpu-bundle.sh [OUT]
# (default build/gpu-bundle; build it first, a release build is smallest). On the
# box: `OUT/run.sh` unpacks and runs the check.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-build/gpu-bundle}
BIN=${GVW_BINARY:-build/gpu-vram-watchdog}
SIM=${GVW_SIM:-$(dirname "$BIN")/gvw-sim}
for f in "$BIN" "$SIM"; do [ -x "$f" ] || { echo "gpu-bundle: build $f first" >&2; exit 1; }; done
rm -rf "$OUT"
mkdir -p "$OUT/bin" "$OUT/lib" "$OUT/scripts" "$OUT/rules" "$OUT/deploy/alertmanager" "$OUT/share"
cp "$BIN" "$SIM" "$OUT/bin/"
# The check's own tools: a bare GPU box may lack them.
tools=()
for t in jq curl; do
    p=$(command -v "$t") || { echo "gpu-bundle: $t not found" >&2; exit 1; }
    cp "$p" "$OUT/bin/"
    tools+=("$p")
done
# Every library they load but glibc's own (libc, libm, libpthread, libdl, librt,
# the loader): those come with the box, and a copied one would not match its loader.
for f in "$BIN" "$SIM" "${tools[@]}"; do
    ldd "$f" | awk '/=> \// { print $3 }'
done | sort -u | grep -vE '/(libc|libm|libpthread|libdl|librt|libresolv|ld-linux[^/]*)\.so' |
    while read -r lib; do cp -L "$lib" "$OUT/lib/"; done
for t in prometheus promtool amtool; do
    p=$(command -v "$t") || { echo "gpu-bundle: $t not found" >&2; exit 1; }
    xz -T0 -9 -c "$p" >"$OUT/bin/$t.xz"
done
am=$(command -v prometheus-alertmanager || command -v alertmanager) || { echo "gpu-bundle: alertmanager not found" >&2; exit 1; }
xz -T0 -9 -c "$am" >"$OUT/bin/alertmanager.xz"
[ -d /usr/share/prometheus/alertmanager ] && cp -r /usr/share/prometheus/alertmanager "$OUT/share/"
# Shipped compressed: the bundle must stay under 64 MiB (a sanitizer build's libs alone
# are ~30 MiB); run.sh unpacks them.
tar -C "$OUT" -cJf "$OUT/lib.tar.xz" lib && rm -rf "$OUT/lib"
for f in "$OUT/bin/gpu-vram-watchdog" "$OUT/bin/gvw-sim"; do xz -T0 -9 "$f"; done
cp scripts/gpu-check.sh "$OUT/scripts/"
cp rules/gpu-vram-watchdog.rules.yml "$OUT/rules/"
cp deploy/alertmanager/alertmanager.yml "$OUT/deploy/alertmanager/"
cat >"$OUT/run.sh" <<'RUN'
#!/usr/bin/env bash
# run.sh -- unpacks the tools and runs gpu-check.sh from this bundle (as root).
set -euo pipefail
cd "$(dirname "$0")"
[ -d lib ] || tar -xJf lib.tar.xz
for x in bin/*.xz; do [ -x "${x%.xz}" ] || { xz -dc "$x" >"${x%.xz}"; chmod +x "${x%.xz}"; }; done
[ -e /usr/share/prometheus/alertmanager ] || { mkdir -p /usr/share/prometheus && cp -r share/alertmanager /usr/share/prometheus/; } 2>/dev/null || true
export LD_LIBRARY_PATH=$PWD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export GVW_BINARY=$PWD/bin/gpu-vram-watchdog GVW_SIM=$PWD/bin/gvw-sim PROMETHEUS=$PWD/bin/prometheus \
    ALERTMANAGER=$PWD/bin/alertmanager PATH=$PWD/bin:$PATH
# Twice: as shipped (PREDICT=false), then with the predictive trigger.
rc=0
GPU_CHECK_PREDICT=false bash scripts/gpu-check.sh || rc=1
GPU_CHECK_PREDICT=true bash scripts/gpu-check.sh || rc=1
exit $rc
RUN
chmod +x "$OUT/run.sh"
size=$(du -sm "$OUT" | cut -f1)
echo "gpu-bundle: $OUT: ${size} MiB"
[ "$size" -lt 64 ] || { echo "gpu-bundle: over 64 MiB" >&2; exit 1; }
