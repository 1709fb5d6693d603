#!/usr/bin/env python3
"""bench/floorcost.py -- what eviction costs at and below the maxmemory floor.

redis-rock alone (stock has no floor). The floor (`rock_maxmemory_floor`) is
the smallest maxmemory at which the policy never has to delete a key or
refuse a write for want of a value that can move. Under it nothing in RAM
can move, and eviction should say so and get out of the way, not sample the
keyspace at every command. Per policy, a fresh server:

  1. N keys key:%012d with values of V random bytes, written with no
     maxmemory; then maxmemory = used_memory / 4 until the values are on
     disk and RocksDB's compactions are done, then 1.3 x the floor a walk
     gives with no client, and there the floor F read while C clients'
     GETs run (their buffers count: about 2 MB for 50);
  2. at each level L (of F): CONFIG SET maxmemory L x F, a warm-up of W
     GETs, then the measured run: redis-benchmark -c C -n M -r N
     GET key:__rand_int__ (uniform over every key, so nearly every GET
     pages a value in);
  3. per level: GETs/s, keys looked at by eviction per GET
     (`eviction_samples`), keys the policy deleted (`evicted_keys`, in the
     measured run and in the warm-up that settles the level), the
     event loop's CPU per GET (utime + stime of the main thread, from
     /proc/PID/task/PID/stat), `rock_eviction` after the run.

The issue that asked for this set the bar: 10% under the floor, samples per
GET no more than 1.2 x those at the floor, and GETs/s at least 0.8 x.

    python3 bench/floorcost.py --bin bin/redis-server --benchmark bin/redis-benchmark
        [--port 31297] [--keys 500000] [--value 1000] [--levels 1.05,1,0.9]
        [--policies allkeys-lru,noeviction] [--warmup 50000] [--requests 200000]
        [--clients 50] [--out DIR]

Writes DIR/floorcost.csv. Plain sockets (no redis-py): system python3 is
enough.
"""
import argparse, os, shutil, socket, subprocess, sys, time

ap = argparse.ArgumentParser()
ap.add_argument("--bin", default="bin/redis-server")
ap.add_argument("--benchmark", default="bin/redis-benchmark")
ap.add_argument("--port", type=int, default=31297)
ap.add_argument("--dir", default="build/bench/floorcost")
ap.add_argument("--out", default="build/bench/results")
ap.add_argument("--keys", type=int, default=500000)
ap.add_argument("--value", type=int, default=1000)
ap.add_argument("--levels", default="1.05,1,0.9")
ap.add_argument("--policies", default="allkeys-lru,noeviction")
ap.add_argument("--warmup", type=int, default=50000)
ap.add_argument("--requests", type=int, default=200000)
ap.add_argument("--clients", type=int, default=50)
a = ap.parse_args()


def log(*args):
    print("[%s]" % time.strftime("%H:%M:%S"), *args, file=sys.stderr, flush=True)


def encode(*args):
    out = [b"*%d\r\n" % len(args)]
    for x in args:
        x = x if isinstance(x, bytes) else str(x).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(x), x))
    return b"".join(out)


class Conn:
    """One RESP connection; replies read whole (simple and bulk ones only)."""

    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.f = self.s.makefile("rb")

    def reply(self):
        line = self.f.readline()[:-2]
        t, rest = line[:1], line[1:]
        if t == b"-":
            raise RuntimeError(rest.decode())
        if t in (b"+", b":"):
            return rest.decode()
        if t == b"$":
            n = int(rest)
            return None if n < 0 else self.f.read(n + 2)[:-2].decode(errors="replace")
        if t == b"*":
            n = int(rest)
            return [self.reply() for _ in range(n)]
        raise RuntimeError("unexpected reply %r" % line)

    def call(self, *args):
        self.s.sendall(encode(*args))
        return self.reply()

    def pipeline(self, cmds):
        self.s.sendall(b"".join(cmds))
        for _ in cmds:
            self.reply()


def fields(text):
    out = {}
    for line in text.splitlines():
        if ":" in line and not line.startswith("#"):
            k, v = line.split(":", 1)
            out[k] = v
    return out


def info(c, section):
    return fields(c.call("INFO", section))


def report(c):
    r = c.call("ROCK", "REPORT")
    return dict(zip(r[0::2], r[1::2]))


def wait_for(what, cond, timeout=300):
    end = time.time() + timeout
    while not cond():
        if time.time() > end:
            raise RuntimeError("timed out waiting for " + what)
        time.sleep(0.2)


def main_thread_cpu(pid):
    """utime + stime of the event loop's thread, in clock ticks."""
    with open("/proc/%d/task/%d/stat" % (pid, pid)) as f:
        parts = f.read().rsplit(")", 1)[1].split()
    return int(parts[11]) + int(parts[12])


def start_server(d, policy):
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    subprocess.run([a.bin, "--port", str(a.port), "--bind", "127.0.0.1", "--dir", d, "--save", "",
                    "--appendonly", "no", "--daemonize", "yes", "--pidfile", os.path.join(d, "pid"),
                    "--logfile", os.path.join(d, "server.log"), "--rock-enabled", "yes",
                    "--maxmemory-policy", policy], check=True)
    for _ in range(300):
        try:
            c = Conn(a.port)
            if c.call("PING") == "PONG":
                with open(os.path.join(d, "pid")) as f:
                    return c, int(f.read())
        except (OSError, ValueError):
            pass
        time.sleep(0.1)
    raise RuntimeError("server did not start")


def gets(n):
    """n uniform random GETs from redis-benchmark; returns its GETs/s."""
    out = subprocess.run([a.benchmark, "-p", str(a.port), "-c", str(a.clients), "-n", str(n), "-r", str(a.keys),
                          "-q", "GET", "key:__rand_int__"], check=True, capture_output=True, text=True).stdout
    # "GET key:__rand_int__: 12345.67 requests per second, p50=..."
    last = [l for l in out.replace("\r", "\n").splitlines() if "requests per second" in l][-1]
    return float(last.split("requests per second")[0].split()[-1])


os.makedirs(a.out, exist_ok=True)
csv_path = os.path.join(a.out, "floorcost.csv")
with open(csv_path, "w") as f:
    f.write("policy,level,maxmemory,floor,gets_per_s,samples_per_get,evicted_keys,loop_us_per_get,eviction,"
            "evicted_in_warmup\n")
blob = os.urandom(a.value + 4096)
tick = os.sysconf("SC_CLK_TCK")
for policy in a.policies.split(","):
    d = os.path.abspath(os.path.join(a.dir, policy))
    c, pid = start_server(d, policy)
    try:
        t0 = time.time()
        batch = []
        for i in range(a.keys):
            off = (i * 7919) % 4096
            batch.append(encode(b"SET", b"key:%012d" % i, blob[off:off + a.value]))
            if len(batch) == 1000:
                c.pipeline(batch)
                batch = []
        if batch:
            c.pipeline(batch)
        used = int(info(c, "memory")["used_memory"])
        c.call("CONFIG", "SET", "maxmemory", used // 4)
        wait_for("values to move out", lambda: int(report(c)["cold_keys"]) > a.keys * 0.7)
        # RocksDB compacts what the move wrote for a while: the first level
        # measured would pay for it (14,000 GETs/s against 21,000 at the
        # next one when it did not wait).
        wait_for("the writer and compactions to go idle", lambda: all(
            int(report(c)[f]) == 0 for f in ("pending_writes", "rocksdb_running_compactions",
                                             "rocksdb_pending_compaction_bytes", "rocksdb_running_flushes")), 600)
        # maxmemory near the floor first: the shrink from a quarter of the
        # data frees some 95 MB of values, and the seconds after it (freed
        # pages purged, the hot-clean set's table shrunk) are slow ones. The
        # first level measured right after it read 18,700 GETs/s, the same
        # level again 24,800.
        walks = int(report(c)["maxmemory_floor_walks"])
        wait_for("a floor walk", lambda: int(report(c)["maxmemory_floor_walks"]) >= walks + 2)
        c.call("CONFIG", "SET", "maxmemory", int(int(report(c)["maxmemory_floor"]) * 1.3))
        # The floor counts the clients' buffers too (50 clients: about
        # 2 MB), so it is read while the GETs run: the most it says over
        # two walks begun after the values moved out.
        load = subprocess.Popen([a.benchmark, "-p", str(a.port), "-c", str(a.clients), "-n", "100000000", "-r",
                                 str(a.keys), "-q", "GET", "key:__rand_int__"], stdout=subprocess.DEVNULL)
        try:
            walks = int(report(c)["maxmemory_floor_walks"])
            floor = 0
            while int(report(c)["maxmemory_floor_walks"]) < walks + 3:
                floor = max(floor, int(report(c)["maxmemory_floor"]))
                time.sleep(0.2)
        finally:
            load.kill()
            load.wait()
        log("%s: %d keys of %d B written in %.0f s, used %d MB, floor with %d clients %.1f MB" %
            (policy, a.keys, a.value, time.time() - t0, used >> 20, a.clients, floor / 1048576))
        for level in [float(x) for x in a.levels.split(",")]:
            mm = int(floor * level)
            set_at = int(info(c, "stats")["evicted_keys"])
            c.call("CONFIG", "SET", "maxmemory", mm)
            gets(a.warmup)
            r0, s0 = report(c), info(c, "stats")
            cpu0 = main_thread_cpu(pid)
            rps = gets(a.requests)
            cpu1 = main_thread_cpu(pid)
            r1, s1 = report(c), info(c, "stats")
            samples = (int(r1["eviction_samples"]) - int(r0["eviction_samples"])) / a.requests
            evicted = int(s1["evicted_keys"]) - int(s0["evicted_keys"])
            settled = int(s0["evicted_keys"]) - set_at
            loop_us = (cpu1 - cpu0) / tick * 1e6 / a.requests
            row = [policy, "%g" % level, str(mm), str(floor), "%.0f" % rps, "%.2f" % samples, str(evicted),
                   "%.1f" % loop_us, r1["eviction"], str(settled)]
            log("%s at %g x the floor (%.1f MB): %.0f GETs/s, %.2f samples/GET, %d keys deleted (%d in the "
                "warm-up), %.1f us/GET on the event loop, eviction %s" %
                (policy, level, mm / 1048576, rps, samples, evicted, settled, loop_us, r1["eviction"]))
            with open(csv_path, "a") as f:
                f.write(",".join(row) + "\n")
    finally:
        try:
            c.call("SHUTDOWN", "NOSAVE")
        except Exception:
            pass
        time.sleep(0.5)
        shutil.rmtree(d, ignore_errors=True)
