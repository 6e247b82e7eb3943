#!/usr/bin/env python3
"""cut_relay.py -- a TCP relay in front of the API server that the test can cut, to
partition one replica from it (the HA tier: tests/e2e/test_controlplane_ha.sh).

  cut_relay.py --listen 127.0.0.1:0 --upstream 127.0.0.1:APIPORT

Prints "listening PORT" once it accepts. TLS passes through untouched (the
replica verifies the API server's own certificate, and the server sees the
replica's own token). SIGUSR1 cuts: from then on nothing moves in either
direction and a new connection is accepted and never answered, as across a
network partition (the caller's own timeouts fire). SIGUSR2 heals: every
connection held during the cut is closed, never resumed (no request delayed
past the cut reaches the server), and new ones pass again.
"""
import argparse
import select
import signal
import socket
import sys
import threading

state = {"cut": False, "epoch": 0}
lock = threading.Lock()


def pump(client, upstream_addr, born_epoch):
    up = None
    try:
        # A connection opened during the cut is held unanswered until the heal.
        while True:
            with lock:
                cut, epoch = state["cut"], state["epoch"]
            if epoch != born_epoch:
                return
            if not cut:
                break
            select.select([], [], [], 0.1)
        up = socket.create_connection(upstream_addr, timeout=5)
        up.settimeout(None)
        socks = [client, up]
        while True:
            with lock:
                cut, epoch = state["cut"], state["epoch"]
            if epoch != born_epoch:
                return  # healed after a cut: this connection dies with it
            if cut:
                select.select([], [], [], 0.1)  # the partition: move nothing
                continue
            r, _, _ = select.select(socks, [], [], 0.1)
            for s in r:
                data = s.recv(65536)
                if not data:
                    return
                (up if s is client else client).sendall(data)
    except OSError:
        return
    finally:
        for s in (client, up):
            if s is not None:
                try:
                    s.close()
                except OSError:
                    pass


def on_cut(_sig, _frm):
    with lock:
        if not state["cut"]:
            state["cut"] = True
    print("cut", flush=True)


def on_heal(_sig, _frm):
    with lock:
        if state["cut"]:
            state["cut"] = False
            state["epoch"] += 1
    print("healed", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--listen", required=True)
    ap.add_argument("--upstream", required=True)
    a = ap.parse_args()
    lh, lp = a.listen.rsplit(":", 1)
    uh, up = a.upstream.rsplit(":", 1)
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((lh, int(lp)))
    srv.listen(64)
    signal.signal(signal.SIGUSR1, on_cut)
    signal.signal(signal.SIGUSR2, on_heal)
    print("listening %d" % srv.getsockname()[1], flush=True)
    while True:
        try:
            c, _ = srv.accept()
        except InterruptedError:
            continue
        with lock:
            epoch = state["epoch"]
        threading.Thread(target=pump, args=(c, (uh, int(up)), epoch), daemon=True).start()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(0)
