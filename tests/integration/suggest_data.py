#!/usr/bin/env python3
"""suggest_data.py -- writes the suggest test's world and computes what `budgets --suggest` must say.

gen DIR END     writes DIR/metrics.om (8 days of 1-minute samples, OpenMetrics, for
                promtool backfill), DIR/api/ (the fake API's nodes and pods) and
                DIR/truth.json (which pod belongs to which workload, by the test's own
                table, not by name matching)
expect DIR GEN_END END NODE...   prints the expected JSON for a window of 7d ending
                at END (the world as `gen DIR GEN_END` wrote it),
                computed here from the raw samples, independently of the C code:
                a pod's value at step t is its latest raw sample in (t-5m, t] (the
                Prometheus lookback) summed over its series; MiB rounded up; p99 is
                nearest-rank (k = ceil(0.99 N)) over all the workload's samples.
"""
import json, math, os, random, sys

RES = "viktorbarzin.me/gpumem"
MIB = 1048576
DAY = 86400

def pod(ns, name, node, owner=None, hash_=None, containers=(), phase="Running"):
    meta = {"name": name, "namespace": ns, "uid": "uid-" + name, "labels": {}}
    if hash_:
        meta["labels"]["pod-template-hash"] = hash_
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": owner[0], "name": owner[1],
                                    "uid": "o", "controller": True}]
    cs = []
    for cname, lim, req in containers:
        r = {}
        if lim is not None:
            r["limits"] = {RES: lim, "cpu": "1"}
        if req is not None:
            r["requests"] = {RES: req}
        cs.append({"name": cname, "image": "x", "resources": r})
    return {"metadata": meta, "spec": {"nodeName": node, "containers": cs},
            "status": {"phase": phase, "startTime": "2026-01-01T00:00:00Z"}}

def world(end):
    """The pods (live), the series (raw samples) and the truth table."""
    start = end - 8 * DAY
    rnd = random.Random(28)
    series = []  # (labels, [(ts, bytes)])
    def add(node, ns, p, container, t0, t1, lo_mib, hi_mib, spike=None, value=None):
        pts = []
        t = t0 - t0 % 60 + 30
        while t <= t1:
            if value is not None:
                v = value
            else:
                v = rnd.randint(lo_mib * MIB, hi_mib * MIB)
                if spike and rnd.random() < spike[0]:
                    v = spike[1] * MIB + rnd.randint(0, MIB)
            pts.append((t, v))
            t += 60
        series.append(({"node": node, "namespace": ns, "pod": p, "container": container,
                        "gpu": "0", "uuid": "GPU-" + node}, pts))
    now = end - 120
    # ml/Deployment/llm: two live pods of two containers, and a gone pod of an older ReplicaSet.
    for p in ("llm-5d9f8c7b6-abcde", "llm-5d9f8c7b6-fghij"):
        add("gpu-1", "ml", p, "main", now - 5 * DAY, now, 4000, 4700, spike=(0.003, 5300))
        add("gpu-1", "ml", p, "side", now - 5 * DAY, now, 500, 900)
    add("gpu-1", "ml", "llm-7c8d9e6f5-zzzzz", "main", start, now - 5 * DAY - 600, 3000, 3500)
    # ml/StatefulSet/db: over its budget now and then.
    add("gpu-1", "ml", "db-0", "db", start, now, 1500, 2300, spike=(0.02, 2900))
    # ml/DaemonSet/agent
    add("gpu-1", "ml", "agent-x7k2p", "agent", start, now, 100, 200)
    # ml/Deployment/new: 40 minutes only.
    add("gpu-1", "ml", "new-6b7c8d9f4-qwert", "app", now - 2400 + 60, now, 700, 800)
    # a gone pod no live workload claims
    add("gpu-1", "ml", "old-thing-abc12", "x", start, start + DAY, 100, 110)
    # gpu-2: a bare pod (no controller)
    add("gpu-2", "ml", "scratch", "s", start, now, 300, 350)
    # gpu-nan: a NaN reading
    add("gpu-nan", "ml", "nan-0", "n", now - 3 * DAY, now, 0, 0, value=float("nan"))
    pods = {
        "gpu-1": [
            pod("ml", "llm-5d9f8c7b6-abcde", "gpu-1", ("ReplicaSet", "llm-5d9f8c7b6"), "5d9f8c7b6",
                [("main", "5k", None), ("side", None, "1024")]),
            pod("ml", "llm-5d9f8c7b6-fghij", "gpu-1", ("ReplicaSet", "llm-5d9f8c7b6"), "5d9f8c7b6",
                [("main", "5k", None), ("side", None, "1024")]),
            pod("ml", "db-0", "gpu-1", ("StatefulSet", "db"), None, [("db", "2k", "2000")]),
            pod("ml", "agent-x7k2p", "gpu-1", ("DaemonSet", "agent"), None, [("agent", None, "300")]),
            pod("ml", "new-6b7c8d9f4-qwert", "gpu-1", ("ReplicaSet", "new-6b7c8d9f4"), "6b7c8d9f4",
                [("app", "1k", None)]),
            pod("ml", "web-0", "gpu-1", ("StatefulSet", "web"), None, [("web", None, None)]),
        ],
        "gpu-2": [pod("ml", "scratch", "gpu-2", None, None, [("s", "500", None)])],
        "gpu-3": [pod("ml", "idle-0", "gpu-3", ("StatefulSet", "idle"), None, [("i", "100", None)])],
        "gpu-nan": [pod("ml", "nan-0", "gpu-nan", ("StatefulSet", "nan"), None, [("n", "100", None)])],
    }
    truth = {"ml/llm-5d9f8c7b6-abcde": "ml/Deployment/llm", "ml/llm-5d9f8c7b6-fghij": "ml/Deployment/llm",
             "ml/llm-7c8d9e6f5-zzzzz": "ml/Deployment/llm", "ml/db-0": "ml/StatefulSet/db",
             "ml/agent-x7k2p": "ml/DaemonSet/agent", "ml/new-6b7c8d9f4-qwert": "ml/Deployment/new",
             "ml/scratch": "ml/scratch", "ml/nan-0": "ml/StatefulSet/nan"}
    return series, pods, truth

def gen(d, end):
    series, pods, truth = world(end)
    with open(os.path.join(d, "metrics.om"), "w") as f:
        f.write("# TYPE gpu_pod_memory_used_bytes gauge\n")
        for labels, pts in series:
            ls = ",".join('%s="%s"' % kv for kv in sorted(labels.items()))
            for t, v in pts:
                f.write("gpu_pod_memory_used_bytes{%s} %s %d\n" %
                        (ls, "NaN" if v != v else str(v), t))
        f.write("# EOF\n")
    api = os.path.join(d, "api")
    os.makedirs(api, exist_ok=True)
    json.dump({"kind": "NodeList", "items": [{"metadata": {"name": "gpu-1"}}, {"metadata": {"name": "gpu-2"}}]},
              open(os.path.join(api, "nodes"), "w"))
    caps = {"gpu-1": "14000", "gpu-3": "14k", "gpu-nan": "14000"}
    for node, items in pods.items():
        n = {"kind": "Node", "metadata": {"name": node}, "status": {"capacity": {"cpu": "8"}}}
        if node in caps:
            n["status"]["capacity"][RES] = caps[node]
        json.dump(n, open(os.path.join(api, "node-" + node), "w"))
        json.dump({"kind": "PodList", "items": items}, open(os.path.join(api, "pods-" + node), "w"))
    json.dump(truth, open(os.path.join(d, "truth.json"), "w"))

def cut_list(seats, capacity):
    """The README's rule, written again: while over, the smallest seat that alone
    covers the excess, else the largest (ties by name)."""
    left = dict(seats)
    cut = []
    while sum(left.values()) > capacity and left:
        excess = sum(left.values()) - capacity
        covering = sorted((v, k) for k, v in left.items() if v >= excess)
        if covering:
            v, k = covering[0]
        else:
            v, k = sorted(((-v, k) for k, v in left.items()))[0]
            v = -v
        cut.append({"workload": k, "seat_mib": v})
        del left[k]
    return cut

def expect(d, gen_end, end, nodes):
    series, pods, truth = world(gen_end)
    points = 7 * DAY // 60
    first = end - (points - 1) * 60
    # per pod: step -> summed bytes
    use = {}
    for labels, pts in series:
        if labels["node"] not in nodes:
            continue
        key = labels["namespace"] + "/" + labels["pod"]
        row = use.setdefault(key, {})
        j = 0
        for k in range(points):
            t = first + k * 60
            while j < len(pts) and pts[j][0] <= t:
                j += 1
            if j > 0 and pts[j - 1][0] > t - 300:
                row[t] = row.get(t, 0) + pts[j - 1][1]
    wl = {}
    unclaimed = []
    for key, row in sorted(use.items()):
        if not row:
            continue
        w = truth.get(key)
        if w is None:
            unclaimed.append({"pod": key, "samples": len(row)})
            continue
        e = wl.setdefault(w, {"samples": [], "steps": set(), "pods": 0})
        e["pods"] += 1
        for t, v in row.items():
            e["samples"].append(math.ceil(v / MIB))
            e["steps"].add(t)
    out = {}
    for w, e in wl.items():
        s = sorted(e["samples"])
        n = len(s)
        p99 = s[math.ceil(0.99 * n) - 1]
        mx = s[-1]
        hist = len(e["steps"]) * 60
        sug = None
        if hist >= 3600 and w != "ml/scratch":
            v = max((p99 * 11000 + 9999) // 10000, mx)
            sug = (v + 99) // 100 * 100
        out[w] = {"p99_mib": p99, "max_mib": mx, "samples": n, "history_s": hist,
                  "pods_seen": e["pods"], "suggested_mib": sug}
    # The seats of each node with every suggestion applied (else the declared budget).
    declared = {"ml/Deployment/llm": 6024, "ml/StatefulSet/db": 2000, "ml/DaemonSet/agent": 300,
                "ml/Deployment/new": 1000, "ml/scratch": 500, "ml/StatefulSet/web": 0}
    node_out = {}
    for node in nodes:
        seats = {}
        for p in pods.get(node, []):
            w = truth.get("ml/" + p["metadata"]["name"], "ml/StatefulSet/web")
            sug = out.get(w, {}).get("suggested_mib")
            seat = sug if sug is not None else declared[w]
            if seat:
                seats[w] = seats.get(w, 0) + seat
        total = sum(seats.values())
        node_out[node] = {"suggested_seats_mib": total, "fits": total <= 14000,
                          "cut": cut_list(seats, 14000)}
    print(json.dumps({"workloads": out, "unclaimed": unclaimed, "nodes": node_out},
                     sort_keys=True))

if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(sys.argv[2], int(sys.argv[3]))
    else:
        expect(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:])
