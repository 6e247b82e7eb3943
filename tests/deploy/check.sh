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

# kubectl: the pinned one the real-control-plane tier builds
# ($GVW_CP_BIN/kubectl; scripts/test.sh exports it), else the one on PATH.
# A path, never the bare name: the function below would call itself forever
# (bash overflows its stack and dies of SIGSEGV) without GVW_CP_BIN.
KUBECTL=$(command -v kubectl || echo /nonexistent/kubectl)
[ -n "${GVW_CP_BIN:-}" ] && [ -x "$GVW_CP_BIN/kubectl" ] && KUBECTL=$GVW_CP_BIN/kubectl
kubectl() { "$KUBECTL" "$@"; }
for tool in "$KUBECTL" node npm; do
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

# validate NAME RENDERED [OPTIONAL] -- validate.mjs on a rendering, its counts added.
validate() {
    node "$MODS/validate.mjs" "$2" ${3:+"$3"} >"$TMP/good.out" 2>&1
    sed '$d' "$TMP/good.out" | sed "s|^\(ok   - \|FAIL - \)|\1$1: |"
    read -r p _ f _ < <(tail -n1 "$TMP/good.out")
    if [[ "$p" =~ ^[0-9]+$ && "$f" =~ ^[0-9]+$ ]]; then
        passed=$((passed + p)) failed=$((failed + f))
    else
        bad "$1: validate.mjs ran" "$(tail -n1 "$TMP/good.out")"
    fi
}

# The overlays read the webhook token from a file the operator generates
# (gitignored); a stand-in while rendering, removed after.
made_tokens=()
for o in deploy/overlays/*/; do
    [ -e "$o/webhook-token" ] && continue
    printf 'check-%s\n' "$RANDOM$RANDOM" >"$o/webhook-token"
    made_tokens+=("$o/webhook-token")
done
trap 'rm -rf "$TMP"; rm -f "${made_tokens[@]:-}"' EXIT

# ACTION=delete's one extra grant lives in deploy/components/action-delete:
# rendered with the base, it must grant delete on pods and set ACTION=delete.
mkdir -p "$TMP/tree/deploy/overlays/with-delete"
cp -r deploy/base deploy/components "$TMP/tree/deploy/"
printf 'resources: [../../base]\ncomponents: [../../components/action-delete]\n' \
    >"$TMP/tree/deploy/overlays/with-delete/kustomization.yaml"
if kubectl kustomize "$TMP/tree/deploy/overlays/with-delete" >"$TMP/with-delete.yaml" 2>"$TMP/kustomize.err"; then
    ok "deploy/base + components/action-delete renders"
    if python3 - "$TMP/with-delete.yaml" <<'PY'
import sys, yaml
objs = [o for o in yaml.safe_load_all(open(sys.argv[1])) if o]
grants = any(r.get("apiGroups") == [""] and "pods" in r.get("resources", []) and "delete" in r.get("verbs", [])
             for o in objs if o["kind"] == "ClusterRole" for r in o.get("rules", []))
bound = any(o["kind"] == "ClusterRoleBinding" and o["roleRef"]["name"] == "gpu-vram-watchdog-delete"
            and any(s.get("name") == "gpu-vram-watchdog" for s in o.get("subjects", [])) for o in objs)
env = [e for o in objs if o["kind"] == "StatefulSet" for c in o["spec"]["template"]["spec"]["containers"]
       for e in c.get("env", []) if e["name"] == "ACTION"]
sys.exit(0 if grants and bound and [e.get("value") for e in env] == ["delete"] else 1)
PY
    then
        ok "components/action-delete grants delete on pods and sets ACTION=delete"
        COMPONENT_CALLS=/pods:delete
    else
        bad "components/action-delete grants delete on pods and sets ACTION=delete"
        COMPONENT_CALLS=
    fi
    # The other component's call is excused here; each is checked in its own rendering.
    GVW_CALLS_FROM_COMPONENTS=resource.k8s.io/resourceclaims:get validate "base+action-delete" "$TMP/with-delete.yaml"
else
    bad "deploy/base + components/action-delete renders" "$(cat "$TMP/kustomize.err")"
    COMPONENT_CALLS=
fi
if grep -A6 'resources:' deploy/base/rbac.yaml | grep -q -- 'verbs: \["delete"\]'; then
    bad "the base grants no delete on pods (the default ACTION is evict)"
else
    ok "the base grants no delete on pods (the default ACTION is evict)"
fi
# BUDGET_SOURCES=dra's one extra grant lives in deploy/components/dra: rendered
# with the base, it must grant get on resourceclaims to the watchdog and to the
# exporter (both read the claims: common/kube/pods_claims.c).
mkdir -p "$TMP/tree/deploy/overlays/with-dra"
printf 'resources: [../../base]\ncomponents: [../../components/dra]\n' \
    >"$TMP/tree/deploy/overlays/with-dra/kustomization.yaml"
if kubectl kustomize "$TMP/tree/deploy/overlays/with-dra" >"$TMP/with-dra.yaml" 2>"$TMP/kustomize.err" &&
    python3 - "$TMP/with-dra.yaml" <<'PY'
import sys, yaml
objs = [o for o in yaml.safe_load_all(open(sys.argv[1])) if o]
grants = any(r.get("apiGroups") == ["resource.k8s.io"] and r.get("resources") == ["resourceclaims"]
             and r.get("verbs") == ["get"]
             for o in objs if o["kind"] == "ClusterRole" for r in o.get("rules", []))
bound = lambda sa: any(o["kind"] == "ClusterRoleBinding" and any(s.get("name") == sa
            for s in o.get("subjects", [])) and o["roleRef"]["name"].endswith("dra") for o in objs)
sys.exit(0 if grants and bound("gpu-vram-watchdog") and bound("gpu-vram-watchdog-exporter") else 1)
PY
then
    ok "components/dra grants get on resourceclaims (nothing more) to the watchdog and the exporter"
    COMPONENT_CALLS=${COMPONENT_CALLS:+$COMPONENT_CALLS,}resource.k8s.io/resourceclaims:get
    GVW_CALLS_FROM_COMPONENTS=/pods:delete validate "base+dra" "$TMP/with-dra.yaml"
else
    bad "deploy/base + components/dra renders and grants get on resourceclaims to the watchdog and the exporter" "$(cat "$TMP/kustomize.err")"
fi
export GVW_CALLS_FROM_COMPONENTS=$COMPONENT_CALLS

# The real thing: the default kustomization, and each overlay with its
# CRD-backed objects (validated offline; no CRD needed to render).
if ! kubectl kustomize deploy/ >"$TMP/rendered.yaml" 2>"$TMP/kustomize.err"; then
    bad "kubectl kustomize deploy/" "$(cat "$TMP/kustomize.err")"
    finish
fi
ok "kubectl kustomize deploy/ renders"
validate "deploy/" "$TMP/rendered.yaml"
for o in prometheus-operator plain-prometheus; do
    if kubectl kustomize "deploy/overlays/$o" >"$TMP/$o.yaml" 2>"$TMP/kustomize.err"; then
        ok "kubectl kustomize deploy/overlays/$o renders"
        validate "overlays/$o" "$TMP/$o.yaml"
    else
        bad "kubectl kustomize deploy/overlays/$o renders" "$(cat "$TMP/kustomize.err")"
    fi
done
po=$TMP/prometheus-operator.yaml
for kind in ServiceMonitor PrometheusRule AlertmanagerConfig NetworkPolicy; do
    grep -q "^kind: $kind\$" "$po" && ok "prometheus-operator: has a $kind" || bad "prometheus-operator: has a $kind"
done
grep -q 'honorLabels: true' "$po" && ok "prometheus-operator: the exporter's ServiceMonitor keeps its labels (honorLabels)" ||
    bad "prometheus-operator: honorLabels on the exporter's ServiceMonitor"
# The AlertmanagerConfig reads the watchdog's own Secret: same namespace,
# same (hash-suffixed) name the StatefulSet mounts, key token.
secret=$(awk '/^kind: Secret$/ { s = 1 } s && /^  name: / { print $2; exit }' "$po")
sts_secret=$(sed -n 's/^ *secretName: \([^ ]*\).*/\1/p' "$po" | head -n1)
amc_secret=$(grep -A2 'credentials:$' "$po" | sed -n 's/.*name: \([^ ]*\).*/\1/p' | head -n1)
amc_ns=$(awk '/^kind: AlertmanagerConfig$/ { a = 1 } a && /^  namespace: / { print $2; exit }' "$po")
if [ -n "$secret" ] && [ "$secret" = "$sts_secret" ] && [ "$secret" = "$amc_secret" ] && [ "$amc_ns" = gpu-vram-watchdog ]; then
    ok "prometheus-operator: the AlertmanagerConfig's webhook reads the watchdog's own Secret ($secret), no copy"
else
    bad "prometheus-operator: the AlertmanagerConfig reads the watchdog's own Secret" \
        "secret $secret, mounted $sts_secret, AlertmanagerConfig $amc_secret in $amc_ns"
fi
grep -q 'PLACEHOLDER' "$po" && bad "prometheus-operator: the placeholder token is replaced" ||
    ok "prometheus-operator: the placeholder token is replaced"
grep -q 'priorityClassName: system-node-critical' "$TMP/rendered.yaml" &&
    ok "the exporter DaemonSet is system-node-critical" || bad "the exporter DaemonSet is system-node-critical"
# scripts/set-image.sh (IMAGE=... scripts/image.sh ends with it): the
# rendered StatefulSet and DaemonSet run the image named; a reference without
# a tag (or with spaces, quotes) is refused and the file left alone.
cp -r deploy/base "$TMP/setimg"
if PATH=/usr/bin:/bin bash scripts/set-image.sh registry.example:5000/team/gvw:1.2.3 "$TMP/setimg" >"$TMP/setimg.out" 2>&1 &&
    [ "$(kubectl kustomize "$TMP/setimg" | grep -c 'image: registry.example:5000/team/gvw:1.2.3$')" = 2 ]; then
    ok "set-image.sh points both workloads at the image named ($(cat "$TMP/setimg.out"))"
else
    bad "set-image.sh points both workloads at the image named" "$(cat "$TMP/setimg.out")"
fi
before=$(sha256sum "$TMP/setimg/kustomization.yaml")
for ref in registry.example/gvw "" "registry.example/gvw:1 x" 'a:"b' registry.example:5000/gvw; do
    if bash scripts/set-image.sh "$ref" "$TMP/setimg" >/dev/null 2>&1; then
        bad "set-image.sh refuses '$ref'"
    else
        ok "set-image.sh refuses '$ref'"
    fi
done
[ "$before" = "$(sha256sum "$TMP/setimg/kustomization.yaml")" ] && ok "a refused reference leaves the kustomization alone" ||
    bad "a refused reference leaves the kustomization alone"

# plain-prometheus: its snippets load in the real tools.
pp=deploy/overlays/plain-prometheus
{ echo 'scrape_configs:'; sed 's/^/  /' "$pp/prometheus-scrape.yml"; } >"$TMP/prometheus.yml"
# (Debian's promtool is built without Kubernetes discovery, so the shape is
# checked here: the job names the rules expect, honor_labels on the exporter.)
if python3 - "$TMP/prometheus.yml" <<'PY'
import sys, yaml
jobs = {j["job_name"]: j for j in yaml.safe_load(open(sys.argv[1]))["scrape_configs"]}
e, w = jobs.get("gpu-vram-watchdog-exporter"), jobs.get("gpu-vram-watchdog")
sys.exit(0 if e and w and e.get("honor_labels") is True and e.get("kubernetes_sd_configs") and w.get("kubernetes_sd_configs") else 1)
PY
then
    ok "plain-prometheus: prometheus-scrape.yml has both jobs the rules expect, the exporter's with honor_labels"
else
    bad "plain-prometheus: prometheus-scrape.yml has both jobs, the exporter's with honor_labels"
fi
if command -v amtool >/dev/null; then
    python3 - "$pp/alertmanager-route.yml" >"$TMP/am.yml" <<'PY'
import sys, yaml
s = yaml.safe_load(open(sys.argv[1]))
r = s["route"]; r["receiver"] = "default"
print(yaml.safe_dump({"route": r, "receivers": [{"name": "default"}] + s["receivers"]}))
PY
    amtool check-config "$TMP/am.yml" >"$TMP/amtool.out" 2>&1 &&
        ok "plain-prometheus: alertmanager-route.yml is a valid route and receiver (amtool)" ||
        bad "plain-prometheus: alertmanager-route.yml (amtool)" "$(tail -n 3 "$TMP/amtool.out")"
fi
finish
