#!/usr/bin/env bash
# gen_scale.sh OUTDIR [PODS] [SERIES_PER_POD] -- a synthetic big node for the scale bench:
#   OUTDIR/pods.json  a PodList of PODS pods (default 5000) on node big-node, shaped like
#                     the API server's (metadata, ownerReferences, containers, status)
#   OUTDIR/prom.json  a Prometheus vector of PODS * SERIES_PER_POD series (default 4:
#                     20,000), several series per pod (processes), summed by the daemon
# Every pod declares 2 MiB and uses 2.8 MiB (over budget: every pod is ranked); one in
# 50 is protected, one in 100 in kube-system (excluded), one in 200 has a bad budget,
# one in 40 declares a request and no limit. Total use 14000 MiB of 15360: free 1360
# MiB < the 1536 floor, so policy_decide ranks all of them and picks a victim.
set -euo pipefail
out=${1:?usage: gen_scale.sh OUTDIR [PODS] [SERIES_PER_POD]}
pods=${2:-5000}
per=${3:-4}
mkdir -p "$out"
awk -v n="$pods" 'BEGIN {
    printf "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"48213390\"},\"items\":["
    for (i = 0; i < n; i++) {
        ns = (i % 100 == 99) ? "kube-system" : sprintf("tenant-%d", i % 37)
        name = sprintf("app-%d-5f7c9d8b6-%05d", i % 251, i)
        ann = (i % 50 == 49) ? "\"gpu-vram-watchdog/protected\":\"true\"," : ""
        qty = (i % 200 == 199) ? "2q" : "2"
        res = (i % 40 == 39) ? sprintf("\"requests\":{\"cpu\":\"250m\",\"viktorbarzin.me/gpumem\":\"%s\"}", qty) \
            : sprintf("\"limits\":{\"nvidia.com/gpu\":\"1\",\"viktorbarzin.me/gpumem\":\"%s\"},\"requests\":{\"cpu\":\"250m\",\"nvidia.com/gpu\":\"1\",\"viktorbarzin.me/gpumem\":\"%s\"}", qty, qty)
        printf "%s{\"metadata\":{\"name\":\"%s\",\"generateName\":\"app-%d-5f7c9d8b6-\",\"namespace\":\"%s\",\"uid\":\"9a3c1f2e-6b1d-4c8e-9f47-%012d\",\"resourceVersion\":\"48213377\",\"creationTimestamp\":\"2026-06-01T22:14:05Z\",\"labels\":{\"app.kubernetes.io/name\":\"app-%d\",\"pod-template-hash\":\"5f7c9d8b6\"},\"annotations\":{%s\"kubectl.kubernetes.io/restartedAt\":\"2026-06-01T22:14:00Z\"},\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"app-%d-5f7c9d8b6\",\"uid\":\"0c1e4a57-6b1d-4c8e-9f47-%012d\",\"controller\":true,\"blockOwnerDeletion\":true}]},\"spec\":{\"nodeName\":\"big-node\",\"runtimeClassName\":\"nvidia\",\"containers\":[{\"name\":\"main\",\"image\":\"example/app-%d:1\",\"resources\":{%s}},{\"name\":\"sidecar\",\"image\":\"example/sidecar:1\",\"resources\":{\"requests\":{\"cpu\":\"10m\"}}}]},\"status\":{\"phase\":\"Running\",\"startTime\":\"2026-06-01T22:14:05Z\",\"podIP\":\"10.244.%d.%d\",\"qosClass\":\"Burstable\"}}", \
            (i ? "," : ""), name, i % 251, ns, i, i % 251, ann, i % 251, i, i % 251, res, int(i / 250), i % 250
    }
    print "]}"
}' >"$out/pods.json"
# 2.8 MiB per pod, split over its series.
awk -v n="$pods" -v per="$per" 'BEGIN {
    printf "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
    b = 2.8 * 1048576 / per
    k = 0
    for (i = 0; i < n; i++) {
        ns = (i % 100 == 99) ? "kube-system" : sprintf("tenant-%d", i % 37)
        name = sprintf("app-%d-5f7c9d8b6-%05d", i % 251, i)
        for (j = 0; j < per; j++) {
            printf "%s{\"metric\":{\"__name__\":\"gpu_pod_memory_used_bytes\",\"namespace\":\"%s\",\"pod\":\"%s\",\"pid\":\"%d\",\"instance\":\"big-node:9400\"},\"value\":[1780394400.123,\"%.0f\"]}", \
                (k++ ? "," : ""), ns, name, 1000 + j, b + (i % 7) * 1024
        }
    }
    print "]}}"
}' >"$out/prom.json"
