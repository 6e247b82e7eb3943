# cluster.sh -- a real Kubernetes control plane on loopback for one test (sourced after
# tests/lib/harness.sh): etcd, kube-apiserver (RBAC, ServiceAccount tokens, an
# audit log), kube-controller-manager, kube-scheduler and kwok, built from the
# pinned sources by tests/controlplane/build.sh. Everything runs as this
# test's child processes on ports it picks, writes under $TMP/cp, and is
# stopped by PID when the test exits; the logs are printed if a check failed.
#
#   cp_up                 start it all and wait until it is ready (sets CP_API, KUBECONFIG)
#   kc ARGS...            kubectl as the cluster admin
#   cp_sa_token NS SA F   a TokenRequest token of that ServiceAccount into file F
#   cp_gpu_node NAME ...  a GPU node kwok plays (labels nvidia.com/gpu.present=true)
#   cp_audit_json         the API server's audit log so far (one JSON event a line)
#
# GVW_CP_BIN names the bin folder build.sh printed; unset, build.sh is run (it
# answers at once when the cache has the binaries). A test may set, before cp_up,
# CP_FEATURE_GATES (--feature-gates for the API server, the controller manager
# and the scheduler alike) and append to CP_CONTROLLERS.
CP_SRC_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CP_DIR=$TMP/cp
CP_PIDS=()
CP_PID_NAMES=()
# The ServiceAccounts deploy/ creates; the audit policy logs what they do.
CP_SA_SERVE=system:serviceaccount:gpu-vram-watchdog:gpu-vram-watchdog
CP_SA_EXPORTER=system:serviceaccount:gpu-vram-watchdog-exporter:gpu-vram-watchdog-exporter

cp_abort() {
    fail "$1" "${2:-}"
    finish
    exit 1
}

# cp_bin -- finds (or builds) the control plane binaries; sets CP_BIN.
cp_bin() {
    local b
    [ -z "${GVW_CP_BUILD_ERROR:-}" ] ||
        cp_abort "the pinned control plane builds (scripts/test.sh ran tests/controlplane/build.sh)" "$GVW_CP_BUILD_ERROR"
    if [ -z "${GVW_CP_BIN:-}" ]; then
        GVW_CP_BIN=$("$CP_SRC_DIR/build.sh") ||
            cp_abort "the pinned control plane builds (tests/controlplane/build.sh)" "see its output above"
    fi
    for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok; do
        [ -x "$GVW_CP_BIN/$b" ] || cp_abort "control plane binary $b is in GVW_CP_BIN" "$GVW_CP_BIN/$b missing"
    done
    CP_BIN=$GVW_CP_BIN
}

kc() { "$CP_BIN/kubectl" --kubeconfig="$CP_DIR/admin.kubeconfig" "$@"; }

# cp_spawn NAME CMD... -- runs CMD in the background, its output in $CP_DIR/NAME.log.
cp_spawn() {
    local name=$1
    shift
    "$@" >"$CP_DIR/$name.log" 2>&1 &
    CP_PIDS+=("$!")
    CP_PID_NAMES+=("$name")
    PIDS+=("$!")
    CP_LAST_PID=$!
}

# cp_start NAME CHECK CMD... -- like start_on_free_port: every @PORT@ in CMD is a
# free port; waits (60 s) until `CHECK PORT` succeeds while CMD lives. A port
# taken by a parallel test between the pick and the bind makes CMD exit: then
# up to 3 ports are tried. Sets CP_PORT.
cp_start() {
    local name=$1 check=$2 port pid try
    shift 2
    for try in 1 2 3; do
        port=$(free_port) || break
        cp_spawn "$name" "${@//@PORT@/$port}"
        pid=$CP_LAST_PID
        local deadline=$(($(date +%s) + 60))
        while [ "$(date +%s)" -lt "$deadline" ] && kill -0 "$pid" 2>/dev/null; do
            if "$check" "$port" >/dev/null 2>&1; then
                CP_PORT=$port
                return 0
            fi
            sleep 0.2
        done
        echo "$name on port $port: not ready (try $try): $(tail -3 "$CP_DIR/$name.log")" >&2
        kill "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        mv "$CP_DIR/$name.log" "$CP_DIR/$name.try$try.log"
    done
    cp_abort "$name starts and becomes ready" "$(tail -20 "$CP_DIR/$name.log" 2>/dev/null)"
}

# --- certificates (openssl CLI; EC P-256 keys: fast to make) -----------------

cp_cert() { # cp_cert NAME SUBJECT EXTENSIONS -- NAME.crt/.key signed by the CA
    local n=$CP_DIR/pki/$1
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
        -keyout "$n.key" -out "$n.csr" -subj "$2" 2>/dev/null &&
        printf '%s\n' "$3" >"$n.ext" &&
        openssl x509 -req -in "$n.csr" -CA "$CP_DIR/pki/ca.crt" -CAkey "$CP_DIR/pki/ca.key" \
            -CAcreateserial -days 2 -out "$n.crt" -extfile "$n.ext" 2>/dev/null
}

cp_pki() {
    local p=$CP_DIR/pki client='basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth'
    mkdir -p "$p"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
        -keyout "$p/ca.key" -out "$p/ca.crt" -subj "/CN=gvw-test-ca-$$" -days 2 \
        -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
        2>/dev/null || return 1
    # The serving certificate: what serve and the exporter verify with KUBE_CA_FILE.
    cp_cert apiserver /CN=kube-apiserver 'basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc' || return 1
    cp_cert admin "/O=system:masters/CN=gvw-test-admin" "$client" || return 1
    cp_cert kcm /CN=system:kube-controller-manager "$client" || return 1
    cp_cert scheduler /CN=system:kube-scheduler "$client" || return 1
    # kwok plays every kubelet (node and pod status, deletes): an admin identity.
    cp_cert kwok "/O=system:masters/CN=kwok" "$client" || return 1
    # ServiceAccount token signing keys, new for every run.
    openssl ecparam -name prime256v1 -genkey -noout -out "$p/sa.key" 2>/dev/null &&
        openssl ec -in "$p/sa.key" -pubout -out "$p/sa.pub" 2>/dev/null
}

cp_kubeconfig() { # cp_kubeconfig NAME -- $CP_DIR/NAME.kubeconfig with NAME's client cert
    cat >"$CP_DIR/$1.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: gvw
  cluster: {server: "https://127.0.0.1:$CP_API_PORT", certificate-authority: "$CP_DIR/pki/ca.crt"}
users:
- name: $1
  user: {client-certificate: "$CP_DIR/pki/$1.crt", client-key: "$CP_DIR/pki/$1.key"}
contexts:
- name: gvw
  context: {cluster: gvw, user: $1}
current-context: gvw
EOF
}

# --- readiness checks, each given the component's port -------------------------

cp_etcd_ready() { curl -sf "http://127.0.0.1:$1/health" | grep -q '"health":"true"'; }
cp_api_ready() { curl -sf --cacert "$CP_DIR/pki/ca.crt" "https://127.0.0.1:$1/readyz" | grep -qx ok; }
cp_healthz() { curl -skf "https://127.0.0.1:$1/healthz" | grep -qx ok; }

# --- the components ----------------------------------------------------------

cp_etcd() {
    # The peer port is never dialled (one member) but must be free: pick it first.
    local peer
    peer=$(free_port)
    cp_start etcd cp_etcd_ready "$CP_BIN/etcd" --name gvw --data-dir "$CP_DIR/etcd" \
        --listen-client-urls http://127.0.0.1:@PORT@ --advertise-client-urls http://127.0.0.1:@PORT@ \
        --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
        --initial-cluster "gvw=http://127.0.0.1:$peer" --unsafe-no-fsync --log-level warn
    CP_ETCD_PORT=$CP_PORT
}

cp_audit_policy() {
    # Metadata for what this project's ServiceAccounts do (verb, resource, the
    # answer's code, the token's credential id), nothing else: the RBAC checks
    # read it.
    cat >"$CP_DIR/audit-policy.yaml" <<EOF
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
    users: ["$CP_SA_SERVE", "$CP_SA_EXPORTER"]
  - level: None
EOF
}

cp_apiserver() {
    cp_audit_policy
    # No endpoint reconciler: it refuses a loopback advertise address, and
    # nothing here reaches the API server through the kubernetes Service.
    # TaintNodesByCondition is off: it taints every new Node not-ready until the
    # node-lifecycle controller sees a kubelet's heartbeat, and here kwok plays
    # the kubelets without one (the controller is not run either).
    cp_start kube-apiserver cp_api_ready "$CP_BIN/kube-apiserver" \
        --etcd-servers "http://127.0.0.1:$CP_ETCD_PORT" \
        --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port @PORT@ \
        --tls-cert-file "$CP_DIR/pki/apiserver.crt" --tls-private-key-file "$CP_DIR/pki/apiserver.key" \
        --client-ca-file "$CP_DIR/pki/ca.crt" \
        --service-account-issuer https://kubernetes.default.svc.cluster.local \
        --service-account-key-file "$CP_DIR/pki/sa.pub" \
        --service-account-signing-key-file "$CP_DIR/pki/sa.key" \
        --service-cluster-ip-range 10.96.0.0/16 \
        --authorization-mode RBAC \
        --disable-admission-plugins TaintNodesByCondition \
        --allow-privileged=true \
        --endpoint-reconciler-type none \
        --audit-policy-file "$CP_DIR/audit-policy.yaml" --audit-log-path "$CP_DIR/audit.log" \
        --audit-log-format json --audit-log-mode blocking --audit-log-maxsize 1000 \
        --profiling=false ${CP_FEATURE_GATES:+--feature-gates "$CP_FEATURE_GATES"}
    CP_API_PORT=$CP_PORT
    CP_API=https://127.0.0.1:$CP_API_PORT
}

# The controllers a GPU cluster's story needs: PDB status (disruption), owners
# (garbage collector), namespaces, ServiceAccounts (every namespace's default),
# and the workload controllers that bring a recycled tenant back.
CP_CONTROLLERS=disruption-controller,garbage-collector-controller,namespace-controller,serviceaccount-controller,statefulset-controller,replicaset-controller,deployment-controller

cp_controller_manager() {
    cp_kubeconfig kcm
    cp_start kube-controller-manager cp_healthz "$CP_BIN/kube-controller-manager" \
        --kubeconfig "$CP_DIR/kcm.kubeconfig" --bind-address 127.0.0.1 --secure-port @PORT@ \
        --leader-elect=false --controllers "$CP_CONTROLLERS" \
        --use-service-account-credentials=true --root-ca-file "$CP_DIR/pki/ca.crt" \
        --concurrent-deployment-syncs 10 --concurrent-replicaset-syncs 10 \
        --concurrent-statefulset-syncs 10 --kube-api-qps 200 --kube-api-burst 400 \
        ${CP_FEATURE_GATES:+--feature-gates "$CP_FEATURE_GATES"}
}

cp_scheduler() {
    cp_kubeconfig scheduler
    cp_start kube-scheduler cp_healthz "$CP_BIN/kube-scheduler" \
        --kubeconfig "$CP_DIR/scheduler.kubeconfig" --bind-address 127.0.0.1 --secure-port @PORT@ \
        --leader-elect=false ${CP_FEATURE_GATES:+--feature-gates "$CP_FEATURE_GATES"}
}

cp_kwok_ready() { grep -q 'Watch nodes' "$CP_DIR/kwok.log"; }

cp_kwok() {
    cp_kubeconfig kwok
    # kwok plays the kubelets of the nodes annotated kwok.x-k8s.io/node=fake,
    # driven by the stages in kwok-stages.yaml (no port of its own).
    cp_spawn kwok "$CP_BIN/kwok" --kubeconfig "$CP_DIR/kwok.kubeconfig" \
        --config "$CP_SRC_DIR/kwok-stages.yaml" \
        --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake \
        --node-lease-duration-seconds 0 --cidr 10.244.0.1/16
    CP_KWOK_PID=$CP_LAST_PID
    wait_for 30 cp_kwok_ready || cp_abort "kwok starts" "$(tail -20 "$CP_DIR/kwok.log")"
}

# cp_up -- the whole control plane, ready: the API server's /readyz, the
# controller manager's and scheduler's /healthz, kwok watching, and the
# default ServiceAccount made in a new namespace (the controllers act).
cp_up() {
    local t0
    t0=$(date +%s%3N)
    cp_bin
    mkdir -p "$CP_DIR"
    cp_pki || cp_abort "the test's certificates are made (openssl)"
    cp_etcd
    cp_apiserver
    cp_kubeconfig admin
    export KUBECONFIG=$CP_DIR/admin.kubeconfig
    cp_controller_manager
    cp_scheduler
    cp_kwok
    kc create namespace gvw-cp-probe >/dev/null || cp_abort "the API server accepts a namespace"
    wait_for 30 kc get serviceaccount default -n gvw-cp-probe ||
        cp_abort "the controller manager makes the default ServiceAccount" "$(tail -20 "$CP_DIR/kube-controller-manager.log")"
    CP_UP_MS=$(($(date +%s%3N) - t0))
    stamp "control plane up in $((CP_UP_MS / 1000)).$((CP_UP_MS % 1000 / 100)) s (API server https://127.0.0.1:$CP_API_PORT)"
}

# cp_sa_token NS SA FILE [kubectl create token args...] -- a bound token by TokenRequest.
cp_sa_token() {
    local ns=$1 sa=$2 file=$3
    shift 3
    kc create token "$sa" -n "$ns" --duration 2h "$@" >"$file" && [ -s "$file" ]
}

# cp_gpu_node NAME [podCIDR] -- a Node object that kwok plays: a GPU node by
# GPU_NODE_SELECTOR's default label, a time-sliced GPU (nvidia.com/gpu 16: the
# device plugin's replicas), no gpumem capacity yet (advertise puts it).
cp_gpu_node() {
    kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata:
  name: $1
  annotations: {kwok.x-k8s.io/node: fake}
  labels:
    kubernetes.io/hostname: $1
    kubernetes.io/os: linux
    nvidia.com/gpu.present: "true"
    gvw.test/node: $1
spec:
  ${2:+podCIDR: $2}
status:
  capacity: {cpu: "32", memory: 128Gi, pods: "110", nvidia.com/gpu: "16"}
  allocatable: {cpu: "32", memory: 128Gi, pods: "110", nvidia.com/gpu: "16"}
EOF
}

cp_audit_json() { cat "$CP_DIR/audit.log" 2>/dev/null; }

# cp_dump_logs -- every component's last lines (on failure).
cp_dump_logs() {
    local f
    for f in "$CP_DIR"/*.log "$TMP"/*.log; do
        [ -s "$f" ] || continue
        case "$f" in */audit.log | */prom.log) continue ;; esac
        echo "----- $(basename "$f") (last 25 lines)"
        tail -25 "$f"
    done
}

# cp_stop -- SIGTERM every control plane process by PID, SIGKILL what is left after 10 s.
cp_stop() {
    local pid i
    for ((i = ${#CP_PIDS[@]} - 1; i >= 0; i--)); do
        kill "${CP_PIDS[$i]}" 2>/dev/null
    done
    for _ in $(seq 1 50); do
        local alive=0
        for pid in "${CP_PIDS[@]:-}"; do
            [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && alive=1
        done
        [ "$alive" = 0 ] && return 0
        sleep 0.2
    done
    for pid in "${CP_PIDS[@]:-}"; do
        [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
    done
}

# GVW_CP_KEEP=DIR keeps every log and the audit log of a failed run there.
cp_exit() {
    local rc=$?
    if [ "$FAILED" -gt 0 ] || [ "$rc" -ne 0 ]; then
        cp_dump_logs
        if [ -n "${GVW_CP_KEEP:-}" ]; then
            mkdir -p "$GVW_CP_KEEP" && cp "$CP_DIR"/*.log "$TMP"/*.log "$TMP"/*.db "$GVW_CP_KEEP/" 2>/dev/null
            echo "logs kept in $GVW_CP_KEEP"
        fi
    fi
    cp_stop
    cleanup
}
trap cp_exit EXIT
