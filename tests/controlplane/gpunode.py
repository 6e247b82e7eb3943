#!/usr/bin/env python3
"""gpunode.py -- the GPUs of the kwok nodes: the stub NVML's state file and a fake
/proc per node, kept current from the REAL pods the API server has on each node.

kwok plays each node's kubelet (pod phases, deletes); this plays what the
kubelet cannot: the card. Every Running pod on a node that carries the
annotation gvw.test/vram-mib ("N", or "N,M,..." for several processes) holds
that much VRAM on the node's one GPU, one process per figure, in its first
container; a pod that is gone or terminating holds nothing (its processes
died with it). The node's `gpu-vram-watchdog exporter` reads the files
through the stub libnvidia-ml.so.1 and maps each PID to its pod through
PROC_ROOT/PID/cgroup (cgroup v2, systemd driver, containerd), exactly as on a
node; the container ID there is the one kwok's pod-ready stage wrote
(containerd://sha256("<uid>/<container>")).

  gpunode.py --api URL --ca CA --cert CRT --key KEY --dir DIR \
             --node NAME:TOTAL_MIB:RESERVED_MIB [--node ...] [--interval 0.25]

Writes DIR/NAME/nvml.state and DIR/NAME/proc/<pid>/cgroup (atomically: a
temporary file renamed over; a cgroup file before the state names its PID,
removed after the state stops naming it). DIR/NAME/pods.json lists what it
placed, for a test to read. Stops on SIGTERM.
"""
import argparse
import hashlib
import json
import os
import signal
import ssl
import sys
import time
import urllib.request


def write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def pid_of(uid, i):
    h = int(hashlib.sha256(("%s/%d" % (uid, i)).encode()).hexdigest()[:8], 16)
    return 100000 + h % 3000000


def cgroup_line(uid, container):
    cid = hashlib.sha256(("%s/%s" % (uid, container)).encode()).hexdigest()
    return ("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod%s.slice/"
            "cri-containerd-%s.scope\n" % (uid.replace("-", "_"), cid))


def gpu_uuid(node):
    h = hashlib.sha256(node.encode()).hexdigest()
    return "GPU-%s-%s-%s-%s-%s" % (h[0:8], h[8:12], h[12:16], h[16:20], h[20:32])


def processes(pod):
    """[(pid, mib)] for a pod holding VRAM now, else []."""
    meta, status = pod.get("metadata", {}), pod.get("status", {})
    ann = (meta.get("annotations") or {}).get("gvw.test/vram-mib")
    if not ann or meta.get("deletionTimestamp") or status.get("phase") != "Running":
        return []
    out = []
    for i, part in enumerate(ann.split(",")):
        try:
            mib = int(part.strip())
        except ValueError:
            print("gpunode: %s/%s: bad gvw.test/vram-mib %r" % (meta.get("namespace"), meta.get("name"), ann),
                  file=sys.stderr)
            return []
        if mib > 0:
            out.append((pid_of(meta["uid"], i), mib))
    return out


class Node:
    def __init__(self, root, spec):
        name, total, reserved = spec.split(":")
        self.name, self.total, self.reserved = name, int(total), int(reserved)
        self.dir = os.path.join(root, name)
        self.proc = os.path.join(self.dir, "proc")
        os.makedirs(self.proc, exist_ok=True)
        self.pids = set()
        self.last = None

    def sync(self, pods):
        procs, placed = [], []
        for pod in pods:
            meta = pod["metadata"]
            ps = processes(pod)
            if not ps:
                continue
            container = pod["spec"]["containers"][0]["name"]
            for pid, mib in ps:
                procs.append((pid, mib, meta["uid"], container))
            placed.append({"namespace": meta["namespace"], "pod": meta["name"], "uid": meta["uid"],
                           "mib": sum(m for _, m in ps), "pids": [p for p, _ in ps]})
        used = sum(p[1] for p in procs)
        free = max(self.total - self.reserved - used, 0)
        lines = ["# gpunode.py: node %s" % self.name, "init ok",
                 "gpu 0 %s %d %d Tesla T4" % (gpu_uuid(self.name), self.total << 20, free << 20)]
        lines += ["proc 0 %d %d compute" % (pid, mib << 20) for pid, mib, _, _ in procs]
        state = "\n".join(lines) + "\n"
        if state == self.last:
            return
        now = {p[0] for p in procs}
        for pid, _, uid, container in procs:  # cgroups first: never a PID the reader cannot place
            if pid not in self.pids:
                d = os.path.join(self.proc, str(pid))
                os.makedirs(d, exist_ok=True)
                write_atomic(os.path.join(d, "cgroup"), cgroup_line(uid, container))
        write_atomic(os.path.join(self.dir, "nvml.state"), state)
        for pid in self.pids - now:
            try:
                os.remove(os.path.join(self.proc, str(pid), "cgroup"))
                os.rmdir(os.path.join(self.proc, str(pid)))
            except OSError:
                pass
        self.pids = now
        self.last = state
        write_atomic(os.path.join(self.dir, "pods.json"),
                     json.dumps({"free_mib": free, "used_mib": used, "pods": placed}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--api", required=True)
    ap.add_argument("--ca", required=True)
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--node", action="append", default=[])
    ap.add_argument("--interval", type=float, default=0.25)
    a = ap.parse_args()
    ctx = ssl.create_default_context(cafile=a.ca)
    ctx.load_cert_chain(a.cert, a.key)
    nodes = [Node(a.dir, s) for s in a.node]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    for n in nodes:  # an idle card until the first list arrives
        n.sync([])
    print("ready", flush=True)
    while True:
        try:
            with urllib.request.urlopen(a.api + "/api/v1/pods", context=ctx, timeout=10) as r:
                items = json.load(r).get("items", [])
            by_node = {}
            for pod in items:
                by_node.setdefault(pod.get("spec", {}).get("nodeName"), []).append(pod)
            for n in nodes:
                n.sync(by_node.get(n.name, []))
        except Exception as e:  # the API server restarting: keep the last state
            print("gpunode: %s" % e, file=sys.stderr, flush=True)
        time.sleep(a.interval)


if __name__ == "__main__":
    main()
