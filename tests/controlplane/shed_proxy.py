#!/usr/bin/env python3
"""shed_proxy.py -- a TLS proxy in front of the real API server that sheds the first
eviction POST(s) as the API server's max-in-flight / priority-and-fairness filter
does, and passes every other request through unchanged.

The shed answer is the filter's own (k8s.io/apiserver's tooManyRequests):
status 429, `Content-Type: text/plain; charset=utf-8`, `Retry-After: 1`, body
"Too many requests, please try again later.\\n" -- not a Status object, and no
DisruptionBudget cause: the server is busy, nobody refused the eviction.

  shed_proxy.py --listen 127.0.0.1:PORT --upstream https://127.0.0.1:APIPORT \
      --ca CA --cert CRT --key KEY --shed N --log FILE

Prints "listening PORT" once it accepts. FILE gets one JSON line per request
(method, path, code, shed). The Authorization header goes upstream as sent, so
the API server sees (and audits) the caller's own identity.
"""
import argparse
import http.client
import http.server
import json
import ssl
import sys
import threading
import urllib.parse

SHED_BODY = b"Too many requests, please try again later.\n"
HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "proxy-connection", "upgrade"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--listen", required=True)
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--ca", required=True)
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--shed", type=int, default=1)
    ap.add_argument("--log", required=True)
    a = ap.parse_args()
    up = urllib.parse.urlsplit(a.upstream)
    up_ctx = ssl.create_default_context(cafile=a.ca)
    lock = threading.Lock()
    state = {"shed_left": a.shed}
    logf = open(a.log, "a", buffering=1)

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):
            pass

        def record(self, code, shed):
            with lock:
                logf.write(json.dumps({"method": self.command, "path": self.path, "code": code,
                                       "shed": shed}) + "\n")

        def handle_any(self):
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n) if n > 0 else None
            path = urllib.parse.urlsplit(self.path).path
            shed = False
            if self.command == "POST" and path.endswith("/eviction"):
                with lock:
                    if state["shed_left"] > 0:
                        state["shed_left"] -= 1
                        shed = True
            if shed:
                self.send_response(429)
                self.send_header("Content-Type", "text/plain; charset=utf-8")
                self.send_header("X-Content-Type-Options", "nosniff")
                self.send_header("Retry-After", "1")
                self.send_header("Content-Length", str(len(SHED_BODY)))
                self.end_headers()
                self.wfile.write(SHED_BODY)
                self.record(429, True)
                return
            conn = http.client.HTTPSConnection(up.hostname, up.port, context=up_ctx, timeout=60)
            try:
                headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP and k.lower() != "host"}
                conn.request(self.command, self.path, body=body, headers=headers)
                r = conn.getresponse()
                data = r.read()
                self.send_response(r.status)
                for k, v in r.getheaders():
                    if k.lower() not in HOP:
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                self.record(r.status, False)
            except Exception as e:  # upstream gone: a 502 the caller sees
                msg = ("proxy: %s\n" % e).encode()
                self.send_response(502)
                self.send_header("Content-Length", str(len(msg)))
                self.end_headers()
                self.wfile.write(msg)
                self.record(502, False)
            finally:
                conn.close()

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = handle_any

    host, port = a.listen.rsplit(":", 1)
    srv = http.server.ThreadingHTTPServer((host, int(port)), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.cert, a.key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    print("listening %d" % srv.server_address[1], flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    sys.exit(0)


if __name__ == "__main__":
    main()
