#!/usr/bin/env python3
"""relief_driver.py -- the GPU nodes and the API server of bench/relief.sh.

    relief_driver.py DIR PORT NODES MODE START_AT SPREAD_S [RATE_MIB_S] [SPIKE_S]

For each node bench-0 .. bench-(NODES-1) it keeps DIR/<node>/nvml.state (the stub
NVML's state file, tests/stub_nvml; rewritten atomically when it changes, checked every 100 ms) and
DIR/<node>/proc/<pid>/cgroup (the fake /proc the exporter reads), and serves on
127.0.0.1:PORT the Kubernetes API the exporter and the daemon use: the pod list
of a node (fieldSelector spec.nodeName), evictions (201, recorded), Events (201)
and an empty node list. Each node has one 15360 MiB GPU and two pods:
steady-N (6000 MiB of a 8000 MiB budget) and grower-N (6000 MiB of 4000 at the
start). Free VRAM starts at 3360 MiB, above the 1536 MiB floor.

MODE relief: at START_AT + a random offset in [0, SPREAD_S) seconds, grower-N
starts to grow by RATE_MIB_S MiB a second (default 256: a model or a KV cache
filling up) up to 8600 MiB (free 760 MiB) and stays there. The moment the free
VRAM written to the state file first drops below the floor is the node's t0.
MODE spike: at the same moment grower-N jumps to 8600 MiB for SPIKE_S seconds
and then back to 6000 MiB (a transient allocation, e.g. a warm-up batch).
An eviction of grower-N removes its process from the state file (the pod is
gone), so the daemon's verify sees the VRAM come back.

Writes DIR/events.jsonl: {"node", "kind": "t0"|"evicted"|"spike_end", "t": unix s}.
Runs until killed (SIGTERM).
"""
import json
import os
import random
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlparse

MIB = 1048576
TOTAL = 15360
FLOOR = 1536
STEADY, GROW0, GROW_MAX = 6000, 6000, 8600

DIR, PORT, NODES, MODE = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
START_AT, SPREAD = float(sys.argv[5]), float(sys.argv[6])
RATE = float(sys.argv[7]) if len(sys.argv) > 7 else 256.0
SPIKE_S = float(sys.argv[8]) if len(sys.argv) > 8 else 30.0

lock = threading.Lock()
events = open(os.path.join(DIR, "events.jsonl"), "a", buffering=1)


def event(node, kind, t):
    with lock:
        events.write(json.dumps({"node": node, "kind": kind, "t": t}) + "\n")


def ident(i, which):
    k = 1 if which == "steady" else 2
    uid = "7b1f0c3e-%04x-4d2a-9c51-%012x" % (i, k)
    cid = ("%02x%06x" % (k, i)) * 8
    return uid, cid, 4000 + 2 * i + k


class Node:
    def __init__(self, i):
        self.i = i
        self.name = "bench-%d" % i
        self.dir = os.path.join(DIR, self.name)
        self.start = START_AT + random.uniform(0, SPREAD)
        self.evicted = False
        self.t0 = None
        self.spike_done = False
        os.makedirs(self.dir, exist_ok=True)
        for which in ("steady", "grower"):
            uid, cid, pid = ident(i, which)
            d = os.path.join(self.dir, "proc", str(pid))
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, "cgroup"), "w") as f:
                f.write("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod%s"
                        ".slice/cri-containerd-%s.scope\n" % (uid.replace("-", "_"), cid))

    def grower_mib(self, now):
        if now < self.start:
            return GROW0
        if MODE == "spike":
            if now < self.start + SPIKE_S:
                return GROW_MAX
            if not self.spike_done:
                self.spike_done = True
                event(self.name, "spike_end", now)
            return GROW0
        return min(GROW_MAX, GROW0 + RATE * (now - self.start))

    def write(self, now):
        grower = self.grower_mib(now)
        used = STEADY + (0 if self.evicted else grower)
        free = TOTAL - used
        lines = ["gpu 0 GPU-%08x-0000-4000-8000-%012x %d %d Bench GPU 16GB" %
                 (self.i, self.i, TOTAL * MIB, int(free * MIB))]
        lines.append("proc 0 %d %d compute" % (ident(self.i, "steady")[2], STEADY * MIB))
        if not self.evicted:
            lines.append("proc 0 %d %d compute" % (ident(self.i, "grower")[2], int(grower * MIB)))
        text = "\n".join(lines) + "\n"
        if text == getattr(self, "last", None):
            return
        self.last = text
        tmp = os.path.join(self.dir, "nvml.state.tmp")
        with open(tmp, "w") as f:
            f.write(text)
        os.rename(tmp, os.path.join(self.dir, "nvml.state"))
        # t0: the first state written with free VRAM below the floor.
        if self.t0 is None and free < FLOOR:
            self.t0 = now
            event(self.name, "t0", now)


nodes = [Node(i) for i in range(NODES)]


def writer():
    while True:
        now = time.time()
        for n in nodes:
            n.write(now)
        # t0 is the write time of the first file below the floor, whatever the
        # tick; 100 ms at 256 MiB/s is a 25 MiB step.
        time.sleep(0.1)


def pod_json(n, which):
    uid, cid, _ = ident(n.i, which)
    name = "%s-%d" % (which, n.i)
    budget = "8000" if which == "steady" else "4000"
    return {
        "metadata": {"name": name, "namespace": "tenants", "uid": uid,
                     "creationTimestamp": "2020-01-01T00:00:00Z",
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                          "name": name + "-rs", "uid": uid[:-4] + "ffff",
                                          "controller": True}]},
        "spec": {"nodeName": n.name, "containers": [
            {"name": "main", "resources": {"limits": {"viktorbarzin.me/gpumem": budget}}}]},
        "status": {"phase": "Running", "startTime": "2020-01-01T00:00:00Z",
                   "containerStatuses": [{"name": "main", "ready": True,
                                          "containerID": "containerd://" + cid}]},
    }


class Api(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def answer(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        u = urlparse(self.path)
        q = parse_qs(u.query)
        if u.path == "/api/v1/pods":
            fs = unquote(q.get("fieldSelector", [""])[0])
            items = []
            for n in nodes:
                if fs and fs != "spec.nodeName=" + n.name:
                    continue
                items.append(pod_json(n, "steady"))
                if not n.evicted:
                    items.append(pod_json(n, "grower"))
            self.answer(200, {"kind": "PodList", "apiVersion": "v1",
                              "metadata": {"resourceVersion": "1"}, "items": items})
        elif u.path == "/api/v1/nodes":
            self.answer(200, {"kind": "NodeList", "apiVersion": "v1", "metadata": {},
                              "items": []})
        else:
            self.answer(404, {"kind": "Status", "status": "Failure", "code": 404,
                              "reason": "NotFound", "message": "not here"})

    def do_POST(self):
        t = time.time()
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        parts = urlparse(self.path).path.split("/")
        if parts[-1] == "eviction" and len(parts) >= 7:
            pod = parts[-2]
            for n in nodes:
                if pod == "grower-%d" % n.i and not n.evicted:
                    n.evicted = True
                    event(n.name, "evicted", t)
            event(pod, "eviction_request", t)
            self.answer(201, {"kind": "Status", "status": "Success", "code": 201})
        else:
            self.answer(201, {"kind": "Event", "apiVersion": "v1"})

    def do_PATCH(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self.answer(200, {})


threading.Thread(target=writer, daemon=True).start()
for n in nodes:
    n.write(time.time())
ThreadingHTTPServer(("127.0.0.1", PORT), Api).serve_forever()
