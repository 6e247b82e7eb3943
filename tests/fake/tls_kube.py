#!/usr/bin/env python3
# tls_kube.py -- a fake Kubernetes API server over TLS on loopback (plus a plain-http
# Prometheus query endpoint), for tests/integration/test_kube_tls.sh.
#
# Usage: tls_kube.py CERT KEY DIR
#   DIR holds the answers: nodes.json (a NodeList), pods.json (a PodList), prom.json
#   (a Prometheus /api/v1/query answer). It binds two loopback ports the kernel
#   picks and writes "kube PORT\nprom PORT\n" to DIR/ports once both listen.
#   Every request, both ports: one line "PORT_KIND METHOD PATH AUTH" appended to
#   DIR/requests.log (AUTH = the Authorization header, "-" when none). Each TLS
#   handshake: "kube HANDSHAKE-OK", or "kube HANDSHAKE-FAILED REASON" (the
#   connection then ends, no request read). A PATCH's Content-Type
#   and body: DIR/patch.log, "CONTENT-TYPE\tBODY" a line. Stops on SIGTERM.
import json
import os
import signal
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

CERT, KEY, DIR = sys.argv[1:4]
LOCK = threading.Lock()


def record(name, line):
    with LOCK, open(os.path.join(DIR, name), "a", encoding="utf-8") as f:
        f.write(line + "\n")


def load(name):
    with open(os.path.join(DIR, name), "rb") as f:
        return f.read()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    kind = "kube"

    def log_message(self, *args):  # quiet: requests.log is the record
        pass

    def answer(self, status, body):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def route(self):
        auth = self.headers.get("Authorization") or "-"
        record("requests.log", f"{self.kind} {self.command} {self.path} {auth}")
        path = urlsplit(self.path).path
        if self.kind == "prom":
            return (200, load("prom.json")) if path == "/api/v1/query" else (404, b"{}")
        if self.command == "GET" and path == "/api/v1/nodes":
            return 200, load("nodes.json")
        if self.command == "GET" and path == "/api/v1/pods":
            return 200, load("pods.json")
        parts = path.split("/")  # "", api, v1, nodes, NAME[, status]
        if len(parts) >= 5 and parts[1:4] == ["api", "v1", "nodes"]:
            node = next((n for n in json.loads(load("nodes.json"))["items"]
                         if n["metadata"]["name"] == parts[4]), None)
            if node is None:
                return 404, b'{"kind":"Status","code":404,"reason":"NotFound"}'
            if self.command == "GET" and len(parts) == 5:
                return 200, json.dumps(node).encode()
            if self.command == "PATCH" and parts[5:] == ["status"]:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode("utf-8", "replace")
                record("patch.log", f"{self.headers.get('Content-Type')}\t{body}")
                return 200, json.dumps(node).encode()
        return 404, b'{"kind":"Status","code":404,"reason":"NotFound"}'

    def handle_one(self):
        status, body = self.route()
        self.answer(status, body)

    do_GET = do_PATCH = do_POST = handle_one


class TLSServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, addr, handler, ctx):
        super().__init__(addr, handler)
        self.ctx = ctx

    def finish_request(self, request, client_address):
        # The handshake runs in the request's thread, so one stuck client
        # cannot stop the others; a failed one is recorded, then dropped.
        request.settimeout(5)
        try:
            tls = self.ctx.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as e:
            record("requests.log", f"kube HANDSHAKE-FAILED {type(e).__name__}")
            return
        record("requests.log", "kube HANDSHAKE-OK")
        try:
            super().finish_request(tls, client_address)
        finally:
            tls.close()


class PromHandler(Handler):
    kind = "prom"


def main():
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(CERT, KEY)
    kube = TLSServer(("127.0.0.1", 0), Handler, ctx)
    prom = ThreadingHTTPServer(("127.0.0.1", 0), PromHandler)
    prom.daemon_threads = True
    for srv in (kube, prom):
        threading.Thread(target=srv.serve_forever, daemon=True).start()
    tmp = os.path.join(DIR, "ports.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(f"kube {kube.server_address[1]}\nprom {prom.server_address[1]}\n")
    os.replace(tmp, os.path.join(DIR, "ports"))
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    while not stop.wait(0.2):
        pass
    for srv in (kube, prom):
        srv.shutdown()


if __name__ == "__main__":
    main()
