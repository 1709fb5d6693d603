#!/usr/bin/env python3
"""tests/bulk/verify.py -- write N keys with distinct, deterministic values
of 200..2000 bytes into a running redis-rock, read every one back in random
order, and check each is intact; then print ROCK REPORT's cold share.

Usage: verify.py [--port P] [--keys N] [--seed S] [--min-cold-percent X]
Exit status 0 only if every value read back equal and the cold share is at
least --min-cold-percent. Standard library only (a minimal RESP client)."""

import argparse
import random
import socket
import sys
import threading
import time


class Resp:
    """A minimal pipelining RESP2 client."""

    def __init__(self, host, port):
        self.sock = socket.create_connection((host, port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()
        self.pos = 0

    @staticmethod
    def encode(*args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            if isinstance(a, str):
                a = a.encode()
            elif isinstance(a, int):
                a = str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        return b"".join(out)

    def send(self, payload):
        self.sock.sendall(payload)

    def _fill(self):
        chunk = self.sock.recv(1 << 20)
        if not chunk:
            raise ConnectionError("server closed the connection")
        if self.pos > (1 << 20):
            del self.buf[:self.pos]
            self.pos = 0
        self.buf += chunk

    def _line(self):
        while True:
            i = self.buf.find(b"\r\n", self.pos)
            if i >= 0:
                line = bytes(self.buf[self.pos:i])
                self.pos = i + 2
                return line
            self._fill()

    def read(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t == b"+":
            return rest.decode()
        if t == b"-":
            return RuntimeError(rest.decode())
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) - self.pos < n + 2:
                self._fill()
            data = bytes(self.buf[self.pos:self.pos + n])
            self.pos += n + 2
            return data
        if t == b"*":
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        raise ValueError("bad reply type %r" % line)

    def call(self, *args):
        self.send(self.encode(*args))
        r = self.read()
        if isinstance(r, RuntimeError):
            raise r
        return r


def key_of(i):
    return b"bulk:%d" % i


def value_of(seed, i):
    rnd = random.Random(seed * 1000003 + i)
    n = rnd.randint(200, 2000)
    return b"%d:" % i + rnd.randbytes(n - len(b"%d:" % i)) if n > 12 else rnd.randbytes(n)


def used_memory(c):
    for line in c.call("INFO", "memory").decode().split("\r\n"):
        if line.startswith("used_memory:"):
            return int(line.split(":")[1])
    raise ValueError("no used_memory in INFO")


def memory_bound_holds(c, max_used, end):
    """used_memory <= max_used, allowing for values handed to the writer
    thread and not yet committed: they are still in RAM (rock's
    pending_bytes, bounded by maxmemory/8) and eviction counts them as freed,
    as upstream counts lazy-free work in progress. So at any instant
    used_memory - pending_bytes must be under the bound, and once the writer
    has caught up (waited for, not slept for) used_memory itself must be."""
    rep = report(c)  # one reply: both figures from the same instant
    used, pending = int(rep["used_memory"]), int(rep["pending_bytes"])
    if used <= max_used:
        return True
    over = used - max_used
    if used - pending > max_used:
        print("FAIL: used_memory %d - pending_bytes %d > %d after %d keys" % (used, pending, max_used, end))
        return False
    deadline = time.time() + 30
    while time.time() < deadline:
        rep = report(c)
        if int(rep["pending_bytes"]) == 0:
            used = int(rep["used_memory"])
            if used <= max_used:
                print("note: used_memory was %d bytes over with %d bytes pending after %d keys; "
                      "%d once the writer caught up" % (over, pending, end, used),
                      flush=True)
                return True
            print("FAIL: used_memory %d > %d after %d keys, nothing pending" % (used, max_used, end))
            return False
        time.sleep(0.01)
    print("FAIL: writer never caught up (pending_bytes > 0 for 30 s) after %d keys" % end)
    return False


def report(c):
    rep = c.call("ROCK", "REPORT")
    it = iter(rep)
    return {k.decode(): (v.decode() if isinstance(v, bytes) else v) for k, v in zip(it, it)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=6379)
    ap.add_argument("--keys", type=int, default=2000000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--batch", type=int, default=500)
    ap.add_argument("--readers", type=int, default=8)
    ap.add_argument("--min-cold-percent", type=float, default=50.0)
    ap.add_argument("--max-used", type=int, default=0,
                    help="fail if used_memory exceeds this (checked every 100,000 keys written)")
    a = ap.parse_args()

    c = Resp(a.host, a.port)
    c.call("FLUSHALL")
    t0 = time.time()
    total_bytes = 0
    peak_used = 0
    for start in range(0, a.keys, a.batch):
        end = min(start + a.batch, a.keys)
        payload = []
        for i in range(start, end):
            v = value_of(a.seed, i)
            total_bytes += len(v)
            payload.append(Resp.encode("SET", key_of(i), v))
        c.send(b"".join(payload))
        for i in range(start, end):
            r = c.read()
            if r != "OK":
                print("FAIL: SET %s -> %r" % (key_of(i).decode(), r))
                return 1
        if a.max_used and (end % 100000 == 0 or end == a.keys):
            if not memory_bound_holds(c, a.max_used, end):
                return 1
            peak_used = max(peak_used, used_memory(c))
        if end % 200000 == 0 or end == a.keys:
            print("wrote %d keys (%.0f MB of values) in %.0f s" % (end, total_bytes / 1e6, time.time() - t0), flush=True)
    wrote = time.time() - t0

    rep = report(c)
    cold_after_write = float(rep["cold_percent"])
    print("after writing: cold %.2f%%, used_memory %d, maxmemory-bound values on disk %d bytes" %
          (cold_after_write, rep["used_memory"], rep["rocksdb_disk_bytes"]), flush=True)

    # Random order, over several connections at once: one connection's
    # pipeline is served one command at a time, each waiting for its read.
    order = list(range(a.keys))
    random.Random(a.seed).shuffle(order)
    t1 = time.time()
    lock = threading.Lock()
    state = {"bad": 0, "done": 0, "next_print": 200000}

    def reader(part):
        rc = Resp(a.host, a.port)
        for start in range(0, len(part), a.batch):
            idx = part[start:start + a.batch]
            rc.send(b"".join(Resp.encode("GET", key_of(i)) for i in idx))
            for i in idx:
                r = rc.read()
                if r != value_of(a.seed, i):
                    with lock:
                        state["bad"] += 1
                        if state["bad"] <= 10:
                            print("FAIL: GET %s -> %s" % (key_of(i).decode(),
                                  r if isinstance(r, (RuntimeError, type(None))) else "%d bytes, differ" % len(r)))
            with lock:
                state["done"] += len(idx)
                if state["done"] >= state["next_print"]:
                    state["next_print"] += 200000
                    print("read %d keys in random order in %.0f s, %d bad" %
                          (state["done"], time.time() - t1, state["bad"]), flush=True)

    threads = [threading.Thread(target=reader, args=(order[j::a.readers],)) for j in range(a.readers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    bad = state["bad"]
    if state["done"] != a.keys:
        print("FAIL: only %d of %d keys were read back" % (state["done"], a.keys))
        return 1
    read = time.time() - t1

    rep = report(c)
    if a.max_used:
        print("used_memory peak seen while writing: %d (limit %d)" % (peak_used, a.max_used))
    print("RESULT keys=%d value_bytes=%d write_s=%.1f (%.0f keys/s) read_s=%.1f (%.0f keys/s) bad=%d "
          "cold_after_write=%.2f%% cold_now=%s%% disk_reads=%d read_p50_us=%d read_p99_us=%d errors=%d" %
          (a.keys, total_bytes, wrote, a.keys / wrote, read, a.keys / read, bad, cold_after_write,
           rep["cold_percent"], rep["reads"], rep["read_latency_p50_us"], rep["read_latency_p99_us"],
           rep["errors"]))
    if bad:
        return 1
    if cold_after_write < a.min_cold_percent:
        print("FAIL: only %.2f%% of values were cold after writing (wanted >= %.1f%%)" %
              (cold_after_write, a.min_cold_percent))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
