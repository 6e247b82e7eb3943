#!/usr/bin/env python3
# raw_http.py PORT REQUESTS -- sends REQUESTS (a Python bytes literal: several
# requests pipelined on one connection, in one write) and prints the status
# line of every answer in the order they came, then EOF if the server closed
# (else OPEN after 3 s of quiet). Answers are told apart by Content-Length
# (so no HEAD among them: its answer has a length and no body).
import ast, socket, sys

port, data = int(sys.argv[1]), ast.literal_eval(sys.argv[2])
s = socket.create_connection(("127.0.0.1", port), timeout=3)
s.sendall(data)
buf, out, end = b"", [], "OPEN"
try:
    while True:
        chunk = s.recv(65536)
        if not chunk:
            end = "EOF"
            break
        buf += chunk
except socket.timeout:
    pass
except OSError as e:
    end = "ERROR " + str(e)
while buf:
    head, sep, rest = buf.partition(b"\r\n\r\n")
    if not sep:
        out.append("PARTIAL")
        break
    lines = head.split(b"\r\n")
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    out.append(lines[0].decode("latin-1"))
    buf = rest[length:]
print("\n".join(out + [end]))
