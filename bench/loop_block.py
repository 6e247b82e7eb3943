#!/usr/bin/env python3
"""loop_block.py -- how long a hostile Prometheus answer blocks serve's event loop.

    bench/loop_block.py --binary build-bench/gpu-vram-watchdog [--scenario NAME ...]
                        [--max-block-ms N] [--timeout S] [--keep DIR]

For each scenario one process plays Prometheus and the Kubernetes API server on
127.0.0.1 and answers with a crafted body (each under the receiver's 8 MiB
answer cap); `serve` (dry run, WEBHOOK_AUTH=none) gets one firing GPUVRAMLow;
meanwhile a client asks GET /healthz back to back. The longest any /healthz
took while the decision ran is how long the event loop was blocked (the loop
answers /healthz between any two pieces of work). Prints per scenario:

  LOOPBLOCK name=N body_bytes=B max_healthz_ms=M healthz_n=K decision_s=S
            rows=R results=a:1,b:2 free_queries=Q max_free_in_flight=F

--max-block-ms: exit 1 when a scenario's longest /healthz exceeds it, or a
scenario does not end as it should (the ctest test_loop_block uses this).
Everything is bounded: a scenario gives up after --timeout seconds (default 180).
"""

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

NODE = "gpu-node-1"
MIB = 1048576
CAP = 8 * MIB

POD_TEMPLATE = {
    "metadata": {
        "name": "",
        "namespace": "",
        "uid": "",
        "ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs",
             "uid": "0c1e4a57-6b1d-4c8e-9f47-1d2a3b4c5d01", "controller": True}
        ],
    },
    "spec": {
        "nodeName": NODE,
        "containers": [{"name": "main", "resources": {
            "limits": {"viktorbarzin.me/gpumem": "1000"}}}],
    },
    "status": {"phase": "Running", "startTime": "2026-06-01T22:14:05Z",
               "podIP": "10.244.1.17"},
}


def vector(series):
    """A Prometheus vector answer from (labels dict, value string) pairs."""
    parts = ['{"status":"success","data":{"resultType":"vector","result":[']
    first = True
    for labels, value in series:
        if not first:
            parts.append(",")
        first = False
        parts.append('{"metric":%s,"value":[1780394400,"%s"]}'
                     % (json.dumps(labels, separators=(",", ":")), value))
    parts.append("]}}")
    return "".join(parts).encode()


EMPTY = vector([])


def pod_list(names):
    items = []
    for i, (ns, name) in enumerate(names):
        p = json.loads(json.dumps(POD_TEMPLATE))
        p["metadata"]["name"] = name
        p["metadata"]["namespace"] = ns
        p["metadata"]["uid"] = "uid-%08d" % i
        items.append(p)
    return json.dumps({"kind": "PodList", "apiVersion": "v1", "metadata": {},
                       "items": items}).encode()


def gpu(i):
    return "GPU-%08x-0000-0000-0000-%012x" % (i, i)


def fill(make, budget=CAP - 4096):
    """series from make(i) for i = 0, 1, ... while the answer stays under budget."""
    out, size = [], 64
    i = 0
    while True:
        labels, value = make(i)
        size += len(json.dumps(labels, separators=(",", ":"))) + len(value) + 40
        if size > budget:
            return out
        out.append((labels, value))
        i += 1


# --- scenarios -------------------------------------------------------------
# Each: settings for serve, the alert's labels, and the answers: used (the
# USED_QUERY), device (the FREE_QUERY=auto device query), free (an explicit
# FREE_QUERY, per GPU), pods. expect: the results the decision rows must hold.

GPU_USED = 'sum by (namespace, pod, uuid) (gpu_pod_memory_used_bytes{node="$node"})'
GPU_FREE = 'gpu_memory_free_bytes{node="$node",uuid="$gpu"}/2^20'


def scenario_device85k():
    """The device query names ~85,000 GPUs (device.c searched linearly per series)."""
    dev = fill(lambda i: ({"__name__": "gpu_memory_free_bytes", "node": NODE,
                           "uuid": gpu(i)}, "1"))
    used = [({"namespace": "llm", "pod": "hog"}, str(15000 * MIB))]
    return dict(env={}, labels={"node": NODE}, used=vector(used), device=vector(dev),
                pods=pod_list([("llm", "hog")]), ngpus=len(dev),
                expect={"skipped_telemetry"})


def scenario_taint60k():
    """One pod on ~60,000 GPUs, the alert naming one (the taint check was O(n^2))."""
    used = fill(lambda i: ({"namespace": "llm", "pod": "hog", "uuid": gpu(i)},
                           str(MIB)))
    return dict(env={"USED_QUERY": GPU_USED}, labels={"node": NODE, "uuid": gpu(0)},
                used=vector(used), device=EMPTY, pods=pod_list([("llm", "hog")]),
                ngpus=len(used), expect={"skipped_telemetry"})


def scenario_fanout20k():
    """20,000 GPUs below the floor, the alert naming none (each GPU re-sorted all)."""
    n = 20000
    used = [({"namespace": "t%d" % i, "pod": "p", "uuid": gpu(i)}, str(15000 * MIB))
            for i in range(n)]
    return dict(env={"USED_QUERY": GPU_USED}, labels={"node": NODE},
                used=vector(used), device=EMPTY, pods=pod_list([("t0", "p")]),
                ngpus=n, expect={"skipped_telemetry"})


def scenario_fanout256():
    """The most a node's reading may name: 256 GPUs, ~80,000 series (300+ pods a
    GPU), every GPU below the floor, the alert naming none: accepted, judged."""
    def make(i):
        return ({"namespace": "ns%d" % (i % 97), "pod": "p%d" % (i // 256),
                 "uuid": gpu(i % 256)}, str(60 * MIB))
    used = fill(make)
    return dict(env={"USED_QUERY": GPU_USED}, labels={"node": NODE},
                used=vector(used), device=EMPTY,
                pods=pod_list([("ns%d" % k, "p0") for k in range(97)]), ngpus=256,
                expect={"would_recycle", "skipped_no_candidate", "coalesced"})


def scenario_taint256():
    """One pod on all 256 GPUs, one GPU's reading impossible (NaN): every GPU
    that pod uses is tainted (SPEC "GPU scope"), ~80,000 series in all."""
    def make(i):
        if i < 256:
            return ({"namespace": "llm", "pod": "hog", "uuid": gpu(i)}, str(40 * MIB))
        return ({"namespace": "ns%d" % (i % 97), "pod": "p%d" % (i // 256),
                 "uuid": gpu(i % 256)}, "NaN" if i == 511 else str(MIB))
    used = fill(make)
    return dict(env={"USED_QUERY": GPU_USED}, labels={"node": NODE},
                used=vector(used), device=EMPTY, pods=pod_list([("llm", "hog")]),
                ngpus=256, expect={"skipped_telemetry", "coalesced"})


def scenario_freequery2000():
    """An explicit FREE_QUERY naming $gpu and 2,000 GPUs (1,506 queries at once)."""
    n = 2000
    used = [({"namespace": "t%d" % i, "pod": "p", "uuid": gpu(i)}, str(MIB))
            for i in range(n)]
    return dict(env={"USED_QUERY": GPU_USED, "FREE_QUERY": GPU_FREE},
                labels={"node": NODE}, used=vector(used), device=EMPTY,
                pods=pod_list([("t0", "p")]), ngpus=n, free_delay=0.05,
                expect={"skipped_telemetry"})


def scenario_freequery200():
    """FREE_QUERY naming $gpu on 200 GPUs: asked MAX_CONCURRENT_DECISIONS at a time."""
    n = 200
    used = [({"namespace": "t%d" % i, "pod": "p", "uuid": gpu(i)}, str(MIB))
            for i in range(n)]
    return dict(env={"USED_QUERY": GPU_USED, "FREE_QUERY": GPU_FREE},
                labels={"node": NODE}, used=vector(used), device=EMPTY,
                pods=pod_list([("t0", "p")]), ngpus=n, free_delay=0.05,
                max_free_in_flight=16, expect={"skipped_recovered"})


SCENARIOS = {
    "device85k": scenario_device85k,
    "taint60k": scenario_taint60k,
    "fanout20k": scenario_fanout20k,
    "fanout256": scenario_fanout256,
    "taint256": scenario_taint256,
    "freequery2000": scenario_freequery2000,
    "freequery200": scenario_freequery200,
}


# --- the fake --------------------------------------------------------------

class Fake:
    def __init__(self, sc):
        self.sc = sc
        self.lock = threading.Lock()
        self.free_queries = 0
        self.free_in_flight = 0
        self.max_free_in_flight = 0
        self.other = 0


def handler_for(fake):
    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def answer(self, code, body):
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # serve stopped mid-answer (the scenario's end)

        def do_GET(self):
            u = urlparse(self.path)
            q = parse_qs(u.query).get("query", [""])[0]
            sc = fake.sc
            if u.path == "/api/v1/query":
                if "gvw_ts" in q:
                    return self.answer(200, sc["device"])
                if "gpu_memory_free_bytes" in q:
                    with fake.lock:
                        fake.free_queries += 1
                        fake.free_in_flight += 1
                        fake.max_free_in_flight = max(fake.max_free_in_flight,
                                                      fake.free_in_flight)
                    time.sleep(sc.get("free_delay", 0))
                    with fake.lock:
                        fake.free_in_flight -= 1
                    return self.answer(200, vector([({}, "15000")]))
                return self.answer(200, sc["used"])
            if u.path == "/api/v1/pods":
                return self.answer(200, sc["pods"])
            with fake.lock:
                fake.other += 1
            return self.answer(404, b'{"kind":"Status","code":404}')

        def do_POST(self):
            n = int(self.headers.get("Content-Length", "0"))
            self.rfile.read(n)
            return self.answer(201, b'{"kind":"Status","status":"Success","code":201}')

    return H


class Poller(threading.Thread):
    """GET /healthz back to back; the longest wait."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.url = "http://127.0.0.1:%d/healthz" % port
        self.stop = threading.Event()
        self.max_ms = 0.0
        self.n = 0
        self.errors = 0

    def run(self):
        while not self.stop.is_set():
            t0 = time.monotonic()
            try:
                with urllib.request.urlopen(self.url, timeout=300) as r:
                    r.read()
            except Exception:
                self.errors += 1
            ms = (time.monotonic() - t0) * 1000
            self.max_ms = max(self.max_ms, ms)
            self.n += 1
            time.sleep(0.002)


def rows(db):
    try:
        c = sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=1)
        try:
            r = c.execute("SELECT result FROM decisions").fetchall()
        finally:
            c.close()
        return [x[0] for x in r]
    except sqlite3.Error:
        return None


def run(binary, name, timeout, keep):
    sc = SCENARIOS[name]()
    tmp = tempfile.mkdtemp(prefix="gvw-loopblock-")
    fake = Fake(sc)
    srv = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(fake))
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    furl = "http://127.0.0.1:%d" % srv.server_address[1]
    db = os.path.join(tmp, "audit.db")
    log = open(os.path.join(tmp, "serve.log"), "w")
    env = dict(os.environ)
    for k in list(env):
        if k.lower().endswith("_proxy"):
            del env[k]
    env.update({
        "LISTEN_ADDR": "127.0.0.1:0", "PROMETHEUS_URL": furl, "KUBE_API_URL": furl,
        "KUBE_TOKEN_FILE": "", "KUBE_CA_FILE": "", "AUDIT_DB": db,
        "WEBHOOK_AUTH": "none", "DRY_RUN": "true", "EVENTS": "false",
        "ADVERTISE_INTERVAL": "0", "GPUMEM_CAPACITY_MIB": "14000", "MIN_RUNTIME": "0",
        "RELEASE_WAIT": "0", "LOG_FORMAT": "json", "HTTP_TIMEOUT": "60s",
    })
    env.update(sc["env"])
    p = subprocess.Popen([binary, "serve"], env=env, stderr=log, stdout=subprocess.DEVNULL)
    out = {"name": name, "ok": False}
    try:
        port = None
        for _ in range(400):
            with open(os.path.join(tmp, "serve.log")) as f:
                for line in f:
                    if '"msg":"serving"' in line:
                        port = int(json.loads(line)["port"])
            if port or p.poll() is not None:
                break
            time.sleep(0.05)
        if not port:
            raise RuntimeError("serve did not start: " +
                               open(os.path.join(tmp, "serve.log")).read()[-2000:])
        poller = Poller(port)
        poller.start()
        time.sleep(0.2)
        labels = dict(sc["labels"], alertname="GPUVRAMLow")
        body = json.dumps({"version": "4", "status": "firing", "alerts": [{
            "status": "firing", "labels": labels, "annotations": {},
            "startsAt": "2026-06-02T09:30:00Z", "fingerprint": "4f1c2b9e8d7a6c5b"}]})
        t0 = time.monotonic()
        req = urllib.request.Request("http://127.0.0.1:%d/webhook" % port,
                                     data=body.encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
        urllib.request.urlopen(req, timeout=300).read()
        got = None
        while time.monotonic() - t0 < timeout:
            got = rows(db)
            if got and "in_progress" not in got:
                break
            time.sleep(0.05)
        dt = time.monotonic() - t0
        time.sleep(0.3)  # the tail of the work (a queued decision, a late write)
        poller.stop.set()
        poller.join(timeout=300)
        got = rows(db) or []
        results = {}
        for r in got:
            results[r] = results.get(r, 0) + 1
        out.update(body_bytes=max(len(sc["used"]), len(sc["device"])),
                   max_healthz_ms=round(poller.max_ms, 1), healthz_n=poller.n,
                   decision_s=round(dt, 2), rows=len(got), results=results,
                   free_queries=fake.free_queries,
                   max_free_in_flight=fake.max_free_in_flight,
                   finished=bool(got) and "in_progress" not in got)
        out["ok"] = out["finished"] and set(results) <= sc["expect"] and \
            fake.max_free_in_flight <= sc.get("max_free_in_flight", 1 << 30)
    finally:
        p.terminate()
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        srv.shutdown()
        log.close()
        if keep:
            shutil.copytree(tmp, os.path.join(keep, name), dirs_exist_ok=True)
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", required=True)
    ap.add_argument("--scenario", action="append", choices=sorted(SCENARIOS))
    ap.add_argument("--max-block-ms", type=float)
    ap.add_argument("--timeout", type=float, default=180)
    ap.add_argument("--keep")
    a = ap.parse_args()
    bad = 0
    for name in a.scenario or list(SCENARIOS):
        r = run(a.binary, name, a.timeout, a.keep)
        print("LOOPBLOCK name=%s body_bytes=%s max_healthz_ms=%s healthz_n=%s "
              "decision_s=%s rows=%s results=%s free_queries=%s max_free_in_flight=%s"
              % (name, r.get("body_bytes"), r.get("max_healthz_ms"), r.get("healthz_n"),
                 r.get("decision_s"), r.get("rows"),
                 ",".join("%s:%d" % kv for kv in sorted(r.get("results", {}).items())),
                 r.get("free_queries"), r.get("max_free_in_flight")), flush=True)
        if a.max_block_ms is not None:
            if not r["ok"]:
                print("FAIL %s: did not end as expected" % name)
                bad += 1
            elif r["max_healthz_ms"] > a.max_block_ms:
                print("FAIL %s: /healthz waited %.0f ms, more than %.0f" %
                      (name, r["max_healthz_ms"], a.max_block_ms))
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
