#!/usr/bin/env python3
"""slow_release.py -- a tenant's release endpoint (SPEC "Cooperative release") that
holds its answer until the test says so, so a decision waits at a known point.

  slow_release.py --listen IP:PORT --asked FILE --go FILE [--code 503]

Prints "listening" once it accepts. On a POST it creates the file --asked,
then waits (60 s at most) until the file --go exists, and answers --code
(default 503: the tenant could not free anything, so the recycle goes ahead).
"""
import argparse
import http.server
import os
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--listen", required=True)
    ap.add_argument("--asked", required=True)
    ap.add_argument("--go", required=True)
    ap.add_argument("--code", type=int, default=503)
    a = ap.parse_args()

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, fmt, *args):
            pass

        def do_POST(self):
            with open(a.asked, "w") as f:
                f.write(self.path + "\n")
            deadline = time.time() + 60
            while not os.path.exists(a.go) and time.time() < deadline:
                time.sleep(0.05)
            body = b"busy\n"
            self.send_response(a.code)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    host, port = a.listen.rsplit(":", 1)
    srv = http.server.ThreadingHTTPServer((host, int(port)), Handler)
    print("listening", flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
