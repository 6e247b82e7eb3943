#!/usr/bin/env python3
"""attack.py -- hostile HTTP clients against serve's front door (issue 27).

Usage: attack.py MODE --port P --pid PID --token T [--conns N]
Runs one attack while a prober asks /healthz every 50 ms and, once the
hostile connections are in place, posts one valid webhook. Prints one JSON
object: what the hostile clients saw (statuses, closes), the valid webhook's
status, /healthz latency (p50/p99/max ms, failures) and serve's VmHWM (KiB).
"""
import argparse
import json
import resource
import socket
import threading
import time

ALERT = ('{"version":"4","status":"firing","receiver":"gvw","alerts":[{"status":"firing",'
         '"labels":{"alertname":"AttackProbe","node":"n1","run":"%s"},"annotations":{},'
         '"startsAt":"2026-06-02T10:00:00Z","fingerprint":"%s"}]}')


def vmhwm(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return -1


def connect(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    return s


def status_of(data):
    """The status code of an HTTP answer's first line, or 0."""
    try:
        return int(data.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return 0


def read_answer(s, timeout=10.0):
    s.settimeout(timeout)
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                n = int(line.split(b":")[1])
                while len(body) < n:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    body += chunk
        return status_of(data), body
    except OSError:
        return status_of(data), b""


def webhook(port, token, tag):
    body = (ALERT % (tag, tag)).encode()
    try:
        s = connect(port)
        s.sendall(b"POST /webhook HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
                  b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                  % (token.encode(), len(body), body))
        code, _ = read_answer(s)
        s.close()
        return code
    except OSError:
        return 0


class Prober(threading.Thread):
    """GET /healthz every 50 ms on a fresh connection; latencies in ms."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.port, self.lat, self.fail, self.stop = port, [], 0, threading.Event()

    def run(self):
        while not self.stop.is_set():
            t = time.monotonic()
            try:
                s = connect(self.port)
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                code, _ = read_answer(s, 5)
                s.close()
            except OSError:
                code = 0
            if code == 200:
                self.lat.append((time.monotonic() - t) * 1000)
            else:
                self.fail += 1
            time.sleep(0.05)

    def summary(self):
        lat = sorted(self.lat) or [0.0]
        pick = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))]
        return {"n": len(self.lat), "fail": self.fail, "p50_ms": round(pick(0.5), 2),
                "p99_ms": round(pick(0.99), 2), "max_ms": round(lat[-1], 2)}


def closed(s):
    """True once the server has answered or closed this connection."""
    s.setblocking(False)
    try:
        return s.recv(65536, socket.MSG_PEEK) is not None
    except BlockingIOError:
        return False
    except OSError:
        return True


def unauth(a, out):
    """N connections: Content-Length 1 MiB, 1 MiB - 1 body bytes, no token."""
    head = b"POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n"
    socks = [connect(a.port) for _ in range(a.conns)]
    chunk = b"x" * 65536
    for s in socks:
        s.sendall(head)
    for s in socks:  # as much of the body as the server will take
        s.setblocking(False)
        left = 1048575
        try:
            while left > 0:
                left -= s.send(chunk[:min(left, len(chunk))])
        except OSError:
            pass
    out["tag"] = "unauth"
    out["webhook"] = webhook(a.port, a.token, out["tag"])
    codes = {}
    for s in socks:
        s.setblocking(True)
        code, _ = read_answer(s, 10)
        codes[code] = codes.get(code, 0) + 1
        s.close()
    out["statuses"] = codes


def slow(a, out, body):
    """N connections trickling a header line (or, authorised, a body byte) every second."""
    socks = []
    for _ in range(a.conns):
        s = connect(a.port)
        if body:
            s.sendall(b"POST /webhook HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
                      b"Content-Length: 100000\r\n\r\n{" % a.token.encode())
        else:
            s.sendall(b"GET /healthz HTTP/1.1\r\n")
        socks.append(s)
    t0, open_ = time.monotonic(), set(range(len(socks)))
    out["tag"] = "slow-body" if body else "slow-head"
    out["webhook"] = webhook(a.port, a.token, out["tag"])
    codes, last = {}, 0.0
    while open_ and time.monotonic() - t0 < a.limit:
        for i in list(open_):
            if closed(socks[i]):
                socks[i].setblocking(True)
                code, _ = read_answer(socks[i], 2)
                codes[code] = codes.get(code, 0) + 1
                last = time.monotonic() - t0
                open_.discard(i)
                continue
            try:
                socks[i].setblocking(True)
                socks[i].sendall(b" " if body else b"X-Trickle: 1\r\n")
            except OSError:
                pass
        time.sleep(1.0)
    out["statuses"], out["still_open"], out["last_close_s"] = codes, len(open_), round(last, 1)
    for s in socks:
        s.close()


def conns(a, out):
    """N connections each holding 4 KiB of an unfinished head, kept open."""
    part = b"GET / HTTP/1.1\r\nX-Pad: " + b"a" * 4000 + b"\r\n"
    socks = []
    for _ in range(a.conns):
        try:
            s = connect(a.port)
            s.sendall(part)
            socks.append(s)
        except OSError:
            out["connect_errors"] = out.get("connect_errors", 0) + 1
    out["tag"] = "conns"
    out["webhook"] = webhook(a.port, a.token, out["tag"])
    time.sleep(2)
    out["dropped_by_server"] = sum(1 for s in socks if closed(s))
    for s in socks:
        s.close()


def pending(a, out):
    """Authorised requests each announcing 512 KiB and sending half of it."""
    codes, socks = {}, []
    for _ in range(a.conns):
        s = connect(a.port)
        s.sendall(b"POST /webhook HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
                  b"Content-Length: 524288\r\n\r\n%s" % (a.token.encode(), b"{" * 262144))
        socks.append(s)
    time.sleep(0.5)
    for s in socks:
        if closed(s):
            s.setblocking(True)
            code, _ = read_answer(s, 2)
            codes[code] = codes.get(code, 0) + 1
    out["statuses"] = codes
    for s in socks:
        s.close()
    out["tag"] = "pending"
    out["webhook"] = webhook(a.port, a.token, out["tag"])


def dupcl(a, out):
    """Two Content-Length headers that differ, with a valid token and alert."""
    body = (ALERT % ("dupcl", "dupcl")).encode()
    s = connect(a.port)
    s.sendall(b"POST /webhook HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
              b"Content-Length: %d\r\nContent-Length: %d\r\n\r\n%s"
              % (a.token.encode(), len(body), len(body) - 5, body))
    code, answer = read_answer(s)
    s.close()
    out["statuses"] = {code: 1}
    out["answer"] = answer.decode(errors="replace")
    out["tag"] = "dupcl-valid"
    out["webhook"] = webhook(a.port, a.token, out["tag"])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["unauth", "slowhead", "slowbody", "conns", "pending",
                                    "dupcl"])
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--token", required=True)
    p.add_argument("--conns", type=int, default=80)
    p.add_argument("--limit", type=float, default=20.0)
    a = p.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    prober, out = Prober(a.port), {"mode": a.mode}
    prober.start()
    time.sleep(0.2)
    {"unauth": unauth, "conns": conns, "pending": pending, "dupcl": dupcl,
     "slowhead": lambda a, o: slow(a, o, False),
     "slowbody": lambda a, o: slow(a, o, True)}[a.mode](a, out)
    time.sleep(0.3)
    prober.stop.set()
    prober.join()
    out["healthz"] = prober.summary()
    out["vmhwm_kib"] = vmhwm(a.pid)
    out["statuses"] = {str(k): v for k, v in out.get("statuses", {}).items()}
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main()
