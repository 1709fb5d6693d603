#!/usr/bin/env python3
"""bench/bigcoll.py -- big hashes: the load and the timed HGET/HSET mix of
bench 9. Standard library only, raw RESP over sockets
(as pipeget.py and stalls.py): one client for both servers.

    bigcoll.py load HASHES FIELDS VALUE_SIZE [--batch 500] [--seed 9]
        RESP on stdout for redis-cli --pipe: HSET hash:%04d with BATCH
        field/value pairs per command, hash after hash (replies:
        HASHES x ceil(FIELDS / BATCH)). Fields "field:%06d", values of
        VALUE_SIZE letters and digits (as gen.py --data random: barely
        compressible).

    bigcoll.py run PORT HASHES FIELDS VALUE_SIZE SECONDS CLIENTS
                   [--write-pct 10] [--seed 1]
        CLIENTS connections, one command in flight on each; every command
        picks a random hash and a random field (uniform): HSET (a new value
        of VALUE_SIZE bytes) with probability WRITE_PCT %, else HGET. Sends
        for SECONDS, then waits for the replies in flight. Every reply is
        checked: an HGET must answer a bulk string of VALUE_SIZE bytes (the
        field exists), an HSET ":0" (it overwrote a field); anything else
        (nil, an error, ":1") counts as an error. Prints one line:
          RESULT ops=N seconds=S ops_per_sec=R p50_ms=.. p99_ms=.. hget=N hset=N errors=N
        Latency: from the send of a command to its whole reply, per command.

    --type set|zset (both commands) does the same with sets set:%04d of
    members "field:%06d" (SISMEMBER, which must answer 1; SADD of a member
    "new:%06d" of a second range of 1,024, which answers 0 or 1) or sorted
    sets zset:%04d (member "field:%06d" with score j: ZSCORE, any score;
    ZADD of a new score for an existing member, ":0"). VALUE_SIZE is then
    unused; the hset/hget counts are the write and read counts.
"""
import argparse
import array
import random
import select
import socket
import string
import sys
import time


KEY_PREFIX = {"hash": b"hash", "set": b"set", "zset": b"zset"}


def key_name(i, kind="hash"):
    return b"%s:%04d" % (KEY_PREFIX[kind], i)


def field_name(j):
    return b"field:%06d" % j


def bulk(b):
    return b"$%d\r\n%s\r\n" % (len(b), b)


def value_pool(rng, size, count):
    alphabet = string.ascii_letters + string.digits
    return ["".join(rng.choices(alphabet, k=size)).encode() for _ in range(count)]


def do_load(a):
    rng = random.Random(a.seed)
    pool = value_pool(rng, a.value_size, 4096)
    out = sys.stdout.buffer
    for i in range(a.hashes):
        k = bulk(key_name(i, a.type))
        for start in range(0, a.fields, a.batch):
            n = min(a.batch, a.fields - start)
            if a.type == "hash":
                parts = [b"*%d\r\n$4\r\nHSET\r\n" % (2 + 2 * n), k]
            elif a.type == "set":
                parts = [b"*%d\r\n$4\r\nSADD\r\n" % (2 + n), k]
            else:
                parts = [b"*%d\r\n$4\r\nZADD\r\n" % (2 + 2 * n), k]
            for j in range(start, start + n):
                if a.type == "zset":
                    parts.append(bulk(b"%d" % j))
                parts.append(bulk(field_name(j)))
                if a.type == "hash":
                    parts.append(bulk(pool[rng.randrange(len(pool))]))
            out.write(b"".join(parts))
    out.flush()


class Conn:
    __slots__ = ("sock", "buf", "kind", "t0")


def do_run(a):
    rng = random.Random(a.seed)
    keys = [bulk(key_name(i, a.type)) for i in range(a.hashes)]
    fields = [bulk(field_name(j)) for j in range(a.fields)]
    if a.type == "hash":
        vals = [bulk(v) for v in value_pool(random.Random(a.seed + 1000), a.value_size, 1024)]
        read_name, write_name = "HGET", "HSET"
        hget_head = b"*3\r\n$4\r\nHGET\r\n"
        hset_head = b"*4\r\n$4\r\nHSET\r\n"
    elif a.type == "set":
        # SADD of a member of a second range, absent or added before
        vals = [bulk(b"new:%06d" % j) for j in range(1024)]
        read_name, write_name = "SISMEMBER", "SADD"
        hget_head = b"*3\r\n$9\r\nSISMEMBER\r\n"
        hset_head = b"*3\r\n$4\r\nSADD\r\n"
    else:
        # ZADD of a new score for an existing member
        vals = [bulk(b"%d" % j) for j in range(1024)]
        read_name, write_name = "ZSCORE", "ZADD"
        hget_head = b"*3\r\n$6\r\nZSCORE\r\n"
        hset_head = b"*4\r\n$4\r\nZADD\r\n"
    ok_get_len = len(b"$%d\r\n" % a.value_size) + a.value_size + 2
    ok_get_head = b"$%d\r\n" % a.value_size
    write_frac = a.write_pct / 100.0
    nh, nf, nv = a.hashes, a.fields, len(vals)
    rand = rng.random
    randrange = rng.randrange

    ep = select.epoll()
    conns = {}
    for _ in range(a.clients):
        s = socket.create_connection(("127.0.0.1", a.port))
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.setblocking(False)
        c = Conn()
        c.sock, c.buf, c.kind, c.t0 = s, b"", 0, 0
        conns[s.fileno()] = c
        ep.register(s.fileno(), select.EPOLLIN)

    lat = array.array("q")
    counts = [0, 0]     # hget, hset
    errors = 0
    shown = 0
    now = time.perf_counter_ns

    def send(c):
        if rand() < write_frac:
            c.kind = 1
            if a.type == "hash":
                cmd = hset_head + keys[randrange(nh)] + fields[randrange(nf)] + vals[randrange(nv)]
            elif a.type == "set":
                cmd = hset_head + keys[randrange(nh)] + vals[randrange(nv)]
            else:
                cmd = hset_head + keys[randrange(nh)] + vals[randrange(nv)] + fields[randrange(nf)]
        else:
            c.kind = 0
            cmd = hget_head + keys[randrange(nh)] + fields[randrange(nf)]
        c.t0 = now()
        c.sock.sendall(cmd)   # small: fits the socket buffer

    def reply(c, data):
        """Append data to c's reply; when it is whole, count it and return
        the time it ended, else 0."""
        nonlocal errors, shown
        buf = c.buf + data
        # one command in flight: the buffer holds (part of) one reply
        e = buf.find(b"\r\n")
        if e < 0:
            c.buf = buf
            return 0
        if buf[:1] == b"$":
            n = int(buf[1:e])
            need = e + 2 if n < 0 else e + 4 + n
            if len(buf) < need:
                c.buf = buf
                return 0
            if a.type == "hash":
                good = c.kind == 0 and len(buf) == ok_get_len and buf.startswith(ok_get_head)
            else:  # a score: any number
                good = c.kind == 0 and a.type == "zset" and n > 0
        else:
            need = e + 2
            if a.type == "set":
                good = buf == b":1\r\n" if c.kind == 0 else buf in (b":0\r\n", b":1\r\n")
            else:
                good = c.kind == 1 and buf == b":0\r\n"
        if len(buf) != need:
            sys.stderr.write("bigcoll: unexpected bytes after a reply\n")
            sys.exit(2)
        t_end = now()
        lat.append(t_end - c.t0)
        counts[c.kind] += 1
        c.buf = b""
        if not good:
            errors += 1
            if shown < 3:
                shown += 1
                sys.stderr.write("bigcoll: unexpected reply to %s: %r\n" % (write_name if c.kind else read_name, buf[:80]))
        return t_end

    t_start = now()
    deadline = t_start + int(a.seconds * 1e9)
    t_last = t_start
    if a.clients == 1:
        # one connection: blocking reads, no poll (one syscall less per command)
        (c,) = conns.values()
        ep.unregister(c.sock.fileno())
        c.sock.setblocking(True)
        recv = c.sock.recv
        while True:
            send(c)
            while True:
                data = recv(65536)
                if not data:
                    sys.stderr.write("bigcoll: connection closed by the server\n")
                    sys.exit(2)
                t_end = reply(c, data)
                if t_end:
                    break
            t_last = t_end
            if t_end >= deadline:
                break
        c.sock.close()
    else:
        for c in conns.values():
            send(c)
        active = len(conns)
        while active:
            for fd, _ in ep.poll():
                c = conns[fd]
                data = c.sock.recv(65536)
                if not data:
                    sys.stderr.write("bigcoll: connection closed by the server\n")
                    sys.exit(2)
                t_end = reply(c, data)
                if not t_end:
                    continue
                t_last = t_end
                if t_end < deadline:
                    send(c)
                else:
                    ep.unregister(fd)
                    c.sock.close()
                    active -= 1

    secs = (t_last - t_start) / 1e9
    ops = len(lat)
    sl = sorted(lat)

    def pct(p):
        if not sl:
            return float("nan")
        return sl[min(len(sl) - 1, int(p / 100.0 * len(sl)))] / 1e6

    print("RESULT ops=%d seconds=%.3f ops_per_sec=%.0f p50_ms=%.3f p99_ms=%.3f hget=%d hset=%d errors=%d"
          % (ops, secs, ops / secs if secs > 0 else 0, pct(50), pct(99), counts[0], counts[1], errors))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    lo = sub.add_parser("load")
    lo.add_argument("hashes", type=int)
    lo.add_argument("fields", type=int)
    lo.add_argument("value_size", type=int)
    lo.add_argument("--batch", type=int, default=500)
    lo.add_argument("--seed", type=int, default=9)
    lo.add_argument("--type", choices=["hash", "set", "zset"], default="hash")
    ru = sub.add_parser("run")
    ru.add_argument("port", type=int)
    ru.add_argument("hashes", type=int)
    ru.add_argument("fields", type=int)
    ru.add_argument("value_size", type=int)
    ru.add_argument("seconds", type=float)
    ru.add_argument("clients", type=int)
    ru.add_argument("--write-pct", type=float, default=10)
    ru.add_argument("--seed", type=int, default=1)
    ru.add_argument("--type", choices=["hash", "set", "zset"], default="hash")
    a = ap.parse_args()
    if a.cmd == "load":
        do_load(a)
    else:
        do_run(a)


if __name__ == "__main__":
    main()
