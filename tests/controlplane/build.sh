#!/usr/bin/env bash
# build.sh -- builds the pinned upstream control plane (kube-apiserver, etcd,
# kube-controller-manager, kube-scheduler, kubectl, kwok) from the Go module
# proxy, once per machine, into a cache keyed by the pinned versions.
# Prints the bin directory on stdout; everything else goes to stderr.
#   GVW_CP_CACHE   cache root (default ~/.cache/gvw-controlplane)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
src="$here/src"

if ! command -v go >/dev/null 2>&1; then
  echo "build.sh: go is not installed (the tier needs Go >= 1.26)" >&2
  exit 2
fi

# The key is the pinned module files themselves: change a version, get a new build.
key=$(cat "$src/k8s/go.mod" "$src/k8s/go.sum" "$src/k8s/cmd/etcd/main.go" \
  "$src/kwok/go.mod" "$src/kwok/go.sum" | sha256sum | cut -c1-16)
k8sver=$(awk '$1=="k8s.io/kubernetes"{print $2}' "$src/k8s/go.mod")
root="${GVW_CP_CACHE:-$HOME/.cache/gvw-controlplane}"
bin="$root/$k8sver-$key/bin"
want="etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok"

have_all() {
  local b
  for b in $want; do [ -x "$bin/$b" ] || return 1; done
}
if have_all; then
  echo "$bin"
  exit 0
fi

mkdir -p "$root"
# One builder at a time per machine: two test runs must not race on the cache.
exec 9>"$root/.lock"
flock 9
if have_all; then
  echo "$bin"
  exit 0
fi

tmp="$root/.tmp-$key"
rm -rf "$tmp"
mkdir -p "$tmp"
start=$(date +%s)
export CGO_ENABLED=0 GOFLAGS="-mod=mod -trimpath -buildvcs=false"
# The cache is never inside the checkout, so a copy of the module goes with it.
cp -r "$src/k8s" "$src/kwok" "$tmp/"
# -ldflags "-s -w": no symbol tables; the binaries only have to run here.
(cd "$tmp/k8s" && for c in kube-apiserver kube-controller-manager kube-scheduler kubectl; do
  echo "build.sh: building $c ($k8sver)" >&2
  go build -ldflags "-s -w" -o "$tmp/bin/$c" "k8s.io/kubernetes/cmd/$c"
done
  echo "build.sh: building etcd" >&2
  go build -ldflags "-s -w" -o "$tmp/bin/etcd" ./cmd/etcd)
(cd "$tmp/kwok" && echo "build.sh: building kwok" >&2 &&
  go build -ldflags "-s -w" -o "$tmp/bin/kwok" sigs.k8s.io/kwok/cmd/kwok)
rm -rf "${bin%/bin}"
mkdir -p "${bin%/bin}"
mv "$tmp/bin" "$bin"
rm -rf "$tmp"
echo "build.sh: control plane built in $(($(date +%s) - start)) s into $bin" >&2
echo "$bin"
