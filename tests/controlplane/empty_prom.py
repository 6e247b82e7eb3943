#!/usr/bin/env python3
"""empty_prom.py -- a Prometheus HTTP API on loopback that knows no series: every
instant or range query answers success with an empty result, so `serve` can
start, lead and look at ALERTS without a Prometheus and its scrapes.

  empty_prom.py --log FILE

Listens on 127.0.0.1 on a port the kernel picks; prints "listening PORT" once
it accepts. FILE gets one line per query: the path and the PromQL asked.
"""
import argparse
import http.server
import json
import sys
import urllib.parse


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--log", required=True)
    a = ap.parse_args()
    log = open(a.log, "a", buffering=1)

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def answer(self, query):
            u = urllib.parse.urlsplit(self.path)
            params = urllib.parse.parse_qs(u.query)
            params.update(urllib.parse.parse_qs(query))
            log.write("%s %s\n" % (u.path, params.get("query", [""])[0]))
            if u.path == "/api/v1/query":
                data = {"resultType": "vector", "result": []}
            elif u.path == "/api/v1/query_range":
                data = {"resultType": "matrix", "result": []}
            else:
                self.send_error(404)
                return
            body = json.dumps({"status": "success", "data": data}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            self.answer("")

        def do_POST(self):
            n = int(self.headers.get("Content-Length") or 0)
            self.answer(self.rfile.read(n).decode("utf-8", "replace"))

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print("listening %d" % srv.server_address[1], flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
