#!/usr/bin/env python3
"""suggest_gen.py -- data for bench/suggest_scale.sh: PODS pods on one node, DAYS days of
1-minute samples of gpu_pod_memory_used_bytes (OpenMetrics, for promtool backfill), and
the fake API's files (pods in Deployments of 10 replicas, the node advertising capacity).

usage: suggest_gen.py DIR PODS DAYS END"""
import json, os, random, sys

d, pods, days, end = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
RES = "viktorbarzin.me/gpumem"
os.makedirs(os.path.join(d, "api"), exist_ok=True)
rnd = random.Random(5000)
names = []
for i in range(pods):
    dep = "w%04d" % (i // 10)
    names.append((dep, "%s-6b7c8d9f4-%05d" % (dep, i)))
start = end - days * 86400
with open(os.path.join(d, "metrics.om"), "w") as f:
    f.write("# TYPE gpu_pod_memory_used_bytes gauge\n")
    for dep, p in names:
        base = rnd.randint(100, 4000) << 20
        pre = 'gpu_pod_memory_used_bytes{container="c",namespace="bench",node="gpu-1",pod="%s"} ' % p
        lines = []
        for t in range(start + 30, end, 60):
            lines.append("%s%d %d\n" % (pre, base + rnd.randint(0, 256 << 20), t))
        f.write("".join(lines))
    f.write("# EOF\n")
items = []
for dep, p in names:
    items.append({"metadata": {"name": p, "namespace": "bench", "uid": p,
                               "labels": {"pod-template-hash": "6b7c8d9f4"},
                               "ownerReferences": [{"kind": "ReplicaSet", "name": dep + "-6b7c8d9f4",
                                                    "controller": True}]},
                  "spec": {"containers": [{"name": "c", "resources": {"limits": {RES: "4k"}}}]},
                  "status": {"phase": "Running"}})
json.dump({"kind": "PodList", "items": items}, open(os.path.join(d, "api", "pods-gpu-1"), "w"))
json.dump({"kind": "Node", "metadata": {"name": "gpu-1"},
           "status": {"capacity": {RES: "14000"}}}, open(os.path.join(d, "api", "node-gpu-1"), "w"))
json.dump({"kind": "NodeList", "items": [{"metadata": {"name": "gpu-1"}}]},
          open(os.path.join(d, "api", "nodes"), "w"))
