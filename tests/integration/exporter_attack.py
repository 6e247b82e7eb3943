#!/usr/bin/env python3
# exporter_attack.py -- hostile clients against the exporter's front door, with /healthz
# probed all along. usage: exporter_attack.py PORT ATTACK SECONDS
#   post-big      one POST /metrics with a 200 MiB body, sent as fast as the server takes it
#   big-headers   GET /metrics with 9 KiB of headers
#   slow-headers  300 connections sending one header line every 2 s (never finishing); the
#                 server's answer (a 408) or its close ends each, timed when it arrives
#   many          1,500 connections each holding half a request line
# Prints one JSON object: what the attack saw (status lines, connections the server
# closed and after how long) and /healthz: ok, failed, p99_ms, max_ms.
import json, select, socket, sys, threading, time

port, attack, seconds = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
result = {"attack": attack}


def connect():
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def status_line(s):
    data = b""
    try:
        while b"\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    return data.split(b"\r\n", 1)[0].decode("latin-1")


def post_big():
    s = connect()
    total = 200 << 20
    s.sendall(b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % total)
    chunk, sent = b"x" * 65536, 0
    s.settimeout(2)
    try:
        while sent < total:
            sent += s.send(chunk)
    except OSError:
        pass
    result["body_sent_mib"] = round(sent / 1048576, 1)
    s.settimeout(5)
    result["status"] = status_line(s)
    s.close()


def big_headers():
    s = connect()
    head = b"GET /metrics HTTP/1.1\r\nHost: x\r\n" + b"".join(
        b"X-Pad-%d: %s\r\n" % (i, b"a" * 90) for i in range(96)) + b"\r\n"
    result["header_bytes"] = len(head)
    try:
        s.sendall(head)
    except OSError:
        pass
    result["status"] = status_line(s)
    s.close()


def slow_headers(n=300, every=2.0):
    conns, started, closed_after, first_byte = [], time.monotonic(), [], {}
    for _ in range(n):
        try:
            c = connect()
            c.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
            first_byte[c] = time.monotonic()
            c.setblocking(False)
            conns.append(c)
        except OSError:
            pass
    result["opened"] = len(conns)
    answers = {}

    def ended(c):  # the server answered (its 408) or closed: seen when it happened,
        closed_after.append(time.monotonic() - first_byte[c])  # from the request's first byte
        conns.remove(c)
        c.close()

    next_step = started + every
    while conns and time.monotonic() - started < seconds:
        wait = next_step - time.monotonic()
        if wait > 0:
            readable, _, _ = select.select(conns, [], [], wait)
            for c in readable:
                try:
                    got = c.recv(4096)
                except BlockingIOError:
                    continue
                except OSError:
                    got = b""
                if got:
                    line = got.split(b"\r\n", 1)[0].decode("latin-1")
                    answers[line] = answers.get(line, 0) + 1
                ended(c)
            continue
        next_step += every
        for c in list(conns):  # one more header line each, never the end
            try:
                c.send(b"X-Slow: 1\r\n")
            except BlockingIOError:
                continue
            except OSError:
                ended(c)
    result["answers"] = answers
    result["closed_by_server"] = len(closed_after)
    result["closed_after_max_s"] = round(max(closed_after), 1) if closed_after else None
    for c in conns:
        c.close()


def many(n=1500):
    conns = []
    for _ in range(n):
        try:
            c = connect()
            c.sendall(b"GET /metr")
            conns.append(c)
        except OSError:
            pass
    result["opened"] = len(conns)
    time.sleep(seconds)
    for c in conns:
        c.close()


def probe(stop):
    lat, failed = [], 0
    while not stop.is_set():
        t0 = time.monotonic()
        try:
            s = connect()
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            ok = status_line(s).startswith("HTTP/1.1 200")
            s.close()
        except OSError:
            ok = False
        if ok:
            lat.append((time.monotonic() - t0) * 1000)
        else:
            failed += 1
        time.sleep(0.05)
    lat.sort()
    result["healthz_ok"], result["healthz_failed"] = len(lat), failed
    result["healthz_p99_ms"] = round(lat[int(len(lat) * 0.99) - 1 if len(lat) > 1 else 0], 1) if lat else None
    result["healthz_max_ms"] = round(lat[-1], 1) if lat else None


stop = threading.Event()
prober = threading.Thread(target=probe, args=(stop,))
prober.start()
{"post-big": post_big, "big-headers": big_headers, "slow-headers": slow_headers,
 "many": many}[attack]()
stop.set()
prober.join()
print(json.dumps(result))
