#!/usr/bin/env bash
# monitoring.sh -- the monitoring side the overlay test needs, pinned and fetched once
# per machine through the Go module proxy into a cache: the prometheus-operator's
# own CRDs (ServiceMonitor, PodMonitor, PrometheusRule, AlertmanagerConfig, as
# the operator's module ships them in example/prometheus-operator-crd/) and
# upstream promtool (Debian's is built without Kubernetes service discovery,
# so it cannot check a scrape config that uses it).
# Prints the cache folder (crds/*.yaml, bin/promtool) on stdout; the rest on stderr.
#   GVW_CP_CACHE   cache root (default ~/.cache/gvw-controlplane), shared with build.sh
set -euo pipefail

PO_MODULE=github.com/prometheus-operator/prometheus-operator
PO_VERSION=v0.85.0
PO_SUM=h1:M5xLCLEoaW2IJfnuCwFzzpL+jSVQu3KGT84Pye+fW8s= # the module zip's, as go.sum has it
PROM_MODULE=github.com/prometheus/prometheus
PROM_VERSION=v0.316.0 # Prometheus 3.16's module version
CRDS="servicemonitors podmonitors prometheusrules alertmanagerconfigs"

if ! command -v go >/dev/null 2>&1; then
  echo "monitoring.sh: go is not installed (the tier needs Go >= 1.26)" >&2
  exit 2
fi
root="${GVW_CP_CACHE:-$HOME/.cache/gvw-controlplane}"
dir="$root/monitoring-$PO_VERSION-$PROM_VERSION"

have_all() {
  local c
  for c in $CRDS; do [ -s "$dir/crds/monitoring.coreos.com_$c.yaml" ] || return 1; done
  [ -x "$dir/bin/promtool" ]
}
if have_all; then
  echo "$dir"
  exit 0
fi
mkdir -p "$root"
exec 9>"$root/.lock" # one fetcher (or builder) at a time per machine
flock 9
if have_all; then
  echo "$dir"
  exit 0
fi

tmp="$root/.tmp-monitoring"
rm -rf "$tmp"
mkdir -p "$tmp/crds" "$tmp/bin" "$tmp/mod"
start=$(date +%s)
# Outside any module: `go mod download` fetches exactly the version named and
# checks it against the checksum database; the pinned sum is checked again here.
echo "monitoring.sh: fetching $PO_MODULE@$PO_VERSION" >&2
info=$(cd "$tmp/mod" && GOFLAGS=-mod=mod go mod download -json "$PO_MODULE@$PO_VERSION")
sum=$(printf '%s' "$info" | sed -n 's/^[[:space:]]*"Sum": "\(.*\)",*$/\1/p')
src=$(printf '%s' "$info" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p')
if [ "$sum" != "$PO_SUM" ]; then
  echo "monitoring.sh: $PO_MODULE@$PO_VERSION has sum '$sum', pinned $PO_SUM" >&2
  exit 1
fi
for c in $CRDS; do
  cp "$src/example/prometheus-operator-crd/monitoring.coreos.com_$c.yaml" "$tmp/crds/"
done
echo "monitoring.sh: building promtool ($PROM_MODULE@$PROM_VERSION)" >&2
(cd "$tmp/mod" && CGO_ENABLED=0 GOFLAGS="-trimpath -buildvcs=false" GOBIN="$tmp/bin" \
  go install -ldflags "-s -w -X github.com/prometheus/common/version.Version=$PROM_VERSION" \
    "$PROM_MODULE/cmd/promtool@$PROM_VERSION")
rm -rf "$dir"
mkdir -p "$dir"
mv "$tmp/crds" "$tmp/bin" "$dir/"
rm -rf "$tmp"
chmod -R u+w "$dir"
echo "monitoring.sh: ready in $(($(date +%s) - start)) s in $dir" >&2
echo "$dir"
