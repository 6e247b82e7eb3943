#!/usr/bin/env bash
# check.sh -- deploy/ checked as a cluster would: kustomize renders, every object
# validates against the Kubernetes OpenAPI schema (offline), workloads are
# hardened and probed, references resolve, RBAC is exactly the allow-list.
#
#   bash tests/deploy/check.sh          (ctest -L deploy)
#
# Needs kubectl (for kustomize) and node + npm. The schema packages pinned in
# tests/deploy/package-lock.json are installed with `npm ci` once into a cache
# (GVW_DEPLOY_CACHE, default ~/.cache/gpu-vram-watchdog/deploy-checks), keyed
# by the lock file. First the checks must reject tests/deploy/bad.yaml.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cd "$ROOT"

for tool in kubectl node npm; do
    command -v "$tool" >/dev/null || { echo "FAIL - $tool is installed (kubectl for kustomize; Debian nodejs, npm)"; echo "0 passed, 1 failed"; exit 1; }
done

CACHE=${GVW_DEPLOY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpu-vram-watchdog/deploy-checks}
key=$(cat "$HERE/package.json" "$HERE/package-lock.json" | sha256sum | cut -c1-16)
MODS=$CACHE/$key
if [ ! -d "$MODS/node_modules" ]; then
    mkdir -p "$MODS.part"
    cp "$HERE/package.json" "$HERE/package-lock.json" "$MODS.part/"
    if ! (cd "$MODS.part" && npm ci --no-audit --no-fund --loglevel=error >npm.log 2>&1); then
        echo "FAIL - npm ci of the schema packages: $(grep -v '^npm warn' "$MODS.part/npm.log" | tail -n 3)"
        echo "0 passed, 1 failed"
        exit 1
    fi
    rm -rf "$MODS" && mv "$MODS.part" "$MODS"
    # Installs for other lock files, a day old (another checkout may be using one now).
    find "$CACHE" -mindepth 1 -maxdepth 1 -type d ! -name "$key" ! -name "$key.part" -mtime +1 -exec rm -rf {} +
fi
cp "$HERE/validate.mjs" "$MODS/validate.mjs"   # resolves its imports from $MODS/node_modules

TMP=$(mktemp -d /tmp/gvw-deploy.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok   - $1"; }
bad() { failed=$((failed + 1)); echo "FAIL - $1${2:+: $2}"; }
finish() { echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit $?; }

# The checks can fail: the bad fixture must be rejected, for each reason.
node "$MODS/validate.mjs" "$HERE/bad.yaml" >"$TMP/bad.out" 2>&1
bad_rc=$?
for want in 'schema: Deployment/bad/wrong-type.*spec/replicas must be integer' \
    'DaemonSet/bad/unhardened container c: resource requests.*no cpu request' \
    'DaemonSet/bad/unhardened container c: liveness.*no livenessProbe' \
    'DaemonSet/bad/unhardened container c: securityContext.*readOnlyRootFilesystem' \
    'DaemonSet/bad/unhardened: pod-level Pod Security.*hostPID: true.*volume proc is hostPath' \
    "fields: Deployment/bad/wrong-type .*'readOnlyRootFileSystem' does not exist in type 'ISecurityContext'" \
    'Service/bad/orphan.*matches no workload' \
    'allow-list.*/pods:watch .*/secrets:get ' \
    'calls the daemon makes are granted.*/nodes/status:patch missing' \
    'every call in the code .* is granted.*/nodes:get missing'; do
    if [ $bad_rc -ne 0 ] && grep -E "^FAIL - .*$want" "$TMP/bad.out" >/dev/null; then
        ok "bad.yaml is rejected: $want"
    else
        bad "bad.yaml is rejected: $want"
    fi
done

# The real thing: the default kustomization, and the CRD-backed extras.
if ! kubectl kustomize deploy/ >"$TMP/rendered.yaml" 2>"$TMP/kustomize.err"; then
    bad "kubectl kustomize deploy/" "$(cat "$TMP/kustomize.err")"
    finish
fi
ok "kubectl kustomize deploy/ renders"
mkdir -p "$TMP/optional"
cp deploy/servicemonitor.yaml deploy/prometheusrule.yaml "$TMP/optional/"
printf 'resources:\n- servicemonitor.yaml\n- prometheusrule.yaml\n' >"$TMP/optional/kustomization.yaml"
if kubectl kustomize "$TMP/optional" >"$TMP/optional.yaml" 2>"$TMP/kustomize.err"; then
    ok "the optional manifests (ServiceMonitor, PrometheusRule) render"
else
    bad "the optional manifests render" "$(cat "$TMP/kustomize.err")"
fi
# deploy/ with every component (deploy/components/*): it renders, and then
# every call in the code is granted, the components' optional ones included.
mkdir -p "$TMP/withcomp"
cp -r deploy "$TMP/withcomp/deploy"
mkdir -p "$TMP/withcomp/overlay"
{ printf 'resources:\n- ../deploy\ncomponents:\n'
  for c in deploy/components/*/; do printf -- '- ../deploy/components/%s\n' "$(basename "$c")"; done
} >"$TMP/withcomp/overlay/kustomization.yaml"
if kubectl kustomize "$TMP/withcomp/overlay" >"$TMP/withcomp.yaml" 2>"$TMP/kustomize.err"; then
    ok "deploy/ with its components (deploy/components/*) renders"
    GVW_WITH_COMPONENTS=1 node "$MODS/validate.mjs" "$TMP/withcomp.yaml" >"$TMP/comp.out" 2>&1
    if grep -q '^FAIL - RBAC' "$TMP/comp.out"; then
        bad "deploy/ with its components: RBAC" "$(grep '^FAIL - RBAC' "$TMP/comp.out")"
    else
        ok "deploy/ with its components grants every call in the code, nothing beyond"
    fi
else
    bad "deploy/ with its components renders" "$(cat "$TMP/kustomize.err")"
fi
node "$MODS/validate.mjs" "$TMP/rendered.yaml" "$TMP/optional.yaml" >"$TMP/good.out" 2>&1
sed '$d' "$TMP/good.out"
read -r p _ f _ < <(tail -n1 "$TMP/good.out")
if [[ "$p" =~ ^[0-9]+$ && "$f" =~ ^[0-9]+$ ]]; then
    passed=$((passed + p)) failed=$((failed + f))
else
    bad "validate.mjs ran" "$(tail -n1 "$TMP/good.out")"
fi
finish
