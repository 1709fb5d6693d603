#!/usr/bin/env python3
"""bench/pipeget.py -- pipelined GETs of keys "k:%0*d" (as bench/gen.py
--key-len writes them), each key once, in order, with a bounded window of
commands in flight; every value has the same known size: a reply that is not
a bulk string of that size (nil, error, other) counts as an error.

    pipeget.py PORT START N KEY_LEN VALUE_SIZE [--batch 500] [--window 4000]

Prints "seconds errors replies".

Why not redis-cli --pipe: its reply loop reads 16 KB per reply parsed, so
with 1 KB replies its buffer grows and every parsed reply memmoves it:
quadratic (20,000 GETs of 1 KB took 8 s against stock).
"""
import socket
import sys
import time
import argparse

ap = argparse.ArgumentParser()
ap.add_argument("port", type=int)
ap.add_argument("start", type=int)
ap.add_argument("n", type=int)
ap.add_argument("key_len", type=int)
ap.add_argument("value_size", type=int)
ap.add_argument("--batch", type=int, default=500)
ap.add_argument("--window", type=int, default=4000)
a = ap.parse_args()

head = b"$%d\r\n" % a.value_size
hl = len(head)
reply_len = hl + a.value_size + 2
cmd_head = b"*2\r\n$3\r\nGET\r\n$%d\r\n" % a.key_len
digits = a.key_len - 2

s = socket.create_connection(("127.0.0.1", a.port))
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
pending = b""          # bytes received, not parsed yet
replies = 0            # replies parsed (GETs and the final PING)
errors = 0             # replies that were not a value of the expected size
pong = False

def parse(data):
    """Count complete replies in data; return the unparsed rest."""
    global replies, errors, pong
    pos, n = 0, len(data)
    while pos < n:
        if data.startswith(head, pos):                 # the expected value
            if pos + reply_len > n:
                break
            pos += reply_len
            replies += 1
            continue
        eol = data.find(b"\r\n", pos)
        if eol < 0:
            break
        t = data[pos:pos + 1]
        if t == b"$":
            ln = int(data[pos + 1:eol])
            end = eol + 2 + (ln + 2 if ln >= 0 else 0)
            if end > n:
                break
            errors += 1                                # nil or another size
            pos = end
        else:
            if data[pos:eol] == b"+PONG":
                pong = True
            else:
                errors += 1                            # error or other reply
            pos = eol + 2
        replies += 1
    return data[pos:]

def pump():
    global pending
    chunk = s.recv(4 << 20)
    if not chunk:
        sys.exit("pipeget: connection closed")
    pending = parse(pending + chunk if pending else chunk)

sent = 0
end = a.start + a.n
i = a.start
t0 = time.monotonic()
while i < end:
    while sent - replies >= a.window:      # at most `window` GETs in flight
        pump()
    m = min(a.batch, end - i)
    s.sendall(b"".join(cmd_head + b"k:%0*d\r\n" % (digits, k) for k in range(i, i + m)))
    i += m
    sent += m
s.sendall(b"*1\r\n$4\r\nPING\r\n")
while not pong:
    pump()
t1 = time.monotonic()
s.close()
print("%.3f %d %d" % (t1 - t0, errors, replies - 1))
