#!/usr/bin/env python3
"""suggest_kube.py -- a read-only fake API server for the `budgets --suggest` test.

usage: suggest_kube.py DIR LOG
Serves DIR/nodes for GET /api/v1/nodes?..., DIR/node-N for GET /api/v1/nodes/N and
DIR/pods-N for GET /api/v1/pods?fieldSelector=spec.nodeName=N; 404 otherwise. Every
request's method and path go to LOG. Prints "port N" once listening on 127.0.0.1."""
import os, sys, urllib.parse
from http.server import BaseHTTPRequestHandler, HTTPServer

DIR, LOG = sys.argv[1], sys.argv[2]

class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def answer(self):
        with open(LOG, "a") as f:
            f.write("%s %s\n" % (self.command, self.path))
        u = urllib.parse.urlsplit(self.path)
        q = urllib.parse.parse_qs(u.query)
        name = None
        if self.command == "GET" and u.path == "/api/v1/nodes":
            name = "nodes"
        elif self.command == "GET" and u.path.startswith("/api/v1/nodes/"):
            name = "node-" + u.path[len("/api/v1/nodes/"):]
        elif self.command == "GET" and u.path == "/api/v1/pods":
            sel = q.get("fieldSelector", [""])[0]
            if sel.startswith("spec.nodeName="):
                name = "pods-" + sel[len("spec.nodeName="):]
        path = os.path.join(DIR, name) if name and "/" not in name else None
        if path is None or not os.path.exists(path):
            body = b'{"kind":"Status","status":"Failure","message":"not found","code":404}'
            self.send_response(404)
        else:
            body = open(path, "rb").read()
            self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = answer

s = HTTPServer(("127.0.0.1", 0), H)
print("port %d" % s.server_address[1], flush=True)
s.serve_forever()
