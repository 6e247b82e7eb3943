#!/usr/bin/env bash
# set-image.sh -- points the kustomization at your image: the `images:` entry
# for gpu-vram-watchdog in deploy/base/kustomization.yaml gets newName/newTag.
#
#   scripts/set-image.sh registry.example/gvw:0.1.0 [KUSTOMIZATION_DIR]
#
# Uses `kustomize edit set image` when kustomize is installed, else rewrites
# the two lines with sed and says so. No public image exists: build and push
# yours first (IMAGE=... scripts/image.sh does both and then calls this).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ref=${1:-}
dir=${2:-$root/deploy/base}
file=$dir/kustomization.yaml
case $ref in
*/*:* | *:*) ;;
*) echo "set-image: '$ref' is no image reference with a tag (registry.example/gvw:0.1.0)" >&2; exit 2 ;;
esac
name=${ref%:*}
tag=${ref##*:}
if [ -z "$name" ] || [ -z "$tag" ] || [[ $tag == */* ]] || [[ $ref =~ [[:space:]\"\'] ]]; then
    echo "set-image: '$ref' is no image reference with a tag (registry.example/gvw:0.1.0)" >&2
    exit 2
fi
[ -f "$file" ] || { echo "set-image: no $file" >&2; exit 2; }
if command -v kustomize >/dev/null 2>&1; then
    (cd "$dir" && kustomize edit set image "gpu-vram-watchdog=$name:$tag")
    echo "set-image: $file: gpu-vram-watchdog -> $name:$tag (kustomize edit set image)"
    exit 0
fi
# The images: entry this repository ships: `- name: gpu-vram-watchdog`,
# then newName and newTag lines.
grep -q '^  - name: gpu-vram-watchdog$' "$file" || {
    echo "set-image: $file has no '  - name: gpu-vram-watchdog' images entry to edit; add newName/newTag by hand" >&2
    exit 1
}
sed -i -E "/^  - name: gpu-vram-watchdog\$/,/newTag:/ {
    s|^(    newName: ).*|\\1$name|
    s|^(    newTag: ).*|\\1\"$tag\"|
}" "$file"
echo "set-image: $file: gpu-vram-watchdog -> $name:$tag (no kustomize here: newName/newTag rewritten with sed; review with git diff)"
