#!/usr/bin/env python3
"""bench/sizing.py -- ROCK SIZING's predictions against the share from RAM
measured at each size; run by bench/10-sizing.sh.

For each maxmemory policy and workload shape, a fresh redis-rock server:

  1. N keys key:%012d with values of VMIN-VMAX random bytes (sizes uniform,
     so that bytes, not keys, decide what fits) written with no maxmemory:
     every value in RAM. used_memory then gives the base size:
     base = max(fixed + 0.3 x values, 4.4 x fixed), fixed being what is not
     values (keys, dicts, RocksDB's readers), so that even 0.25 x base holds
     the keys;
  2. maxmemory set to 4, 2, 1, 0.5 and 0.25 x base, largest first (shrinking
     moves the coldest values out, as the policy would have: each size starts
     near its steady state; growing would leave values the run never touches
     on disk, which is not the steady state a prediction describes);
  3. at each size: a warm-up of W requests (W/10 at 4 x base), CONFIG
     RESETSTAT, the measured run of M requests, and the share from RAM it
     got: value_hits_ram / (value_hits_ram + value_hits_disk). Each phase
     draws its own random requests. W must exceed the policy's
     characteristic time (the requests over which a cache of that size
     turns over: about 800,000 for Zipf 0.99 over 1,000,000 keys at a fifth
     of them), or the measured share is a transient of the shrink;
  4. at 1 x base, right after its measured run: ROCK SIZING at the five
     sizes. Predicted and measured sit side by side in the CSV; so does
     predicted_here, ROCK SIZING asked at each size itself after its own
     measured run (the model's curve without its view from 1 x of what a
     smaller or larger maxmemory leaves the values).

Workloads (GETs, pipelined 100 deep on one connection, every reply's length
checked):
  zipf     Zipf s=0.99 over the N keys (rank -> key through a fixed random
           permutation, so hot keys are spread over the keyspace)
  uniform  uniform over the first N/2 keys (the rest never read)
  shift    zipf, but the measured run's second half draws ranks through a
           second permutation: the working set moves halfway; the warm-up
           uses the first

Values: --value MIN-MAX (sizes uniform in it), or mix (100, 500, 2000 or
8000 bytes, a quarter of the keys each). --base-share F sets the base to F x
used_memory with every value in RAM instead (0.25: "today's maxmemory" holds a
quarter of the data). --start-maxmemory MB starts the server with that
maxmemory, the base, so that the dataset is written under it (values move out
as they are written; list 1 first among the factors to measure there first). Under a volatile-* policy every other key is written
with a TTL far past the run. A row is in range when its size is above the
floor (rock_maxmemory_floor at 1 x base, plus 2%), below the dataset with
every value in RAM, and no key went missing: the sizes the accuracy goal
covers.

    python3 bench/sizing.py --bin bin/redis-server --port 31296 --out DIR
        [--keys 1000000] [--value 2000-6000|mix] [--warmup 1000000]
        [--requests 400000] [--policies allkeys-lru,allkeys-lfu]
        [--workloads zipf,uniform,shift] [--factors 4,2,1,0.5,0.25]
        [--base-share 0] [--seed 29]

Plain sockets (no redis-py): system python3 is enough.
"""
import argparse, atexit, bisect, itertools, os, random, shutil, socket, subprocess, sys, time

ap = argparse.ArgumentParser()
ap.add_argument("--bin", default="bin/redis-server")
ap.add_argument("--port", type=int, default=31296)
ap.add_argument("--out", default="build/bench/results")
ap.add_argument("--dir", default="build/bench/10-sizing")
ap.add_argument("--keys", type=int, default=1000000)
ap.add_argument("--value", default="2000-6000", help="MIN-MAX bytes, or mix (100, 500, 2000, 8000)")
ap.add_argument("--warmup", type=int, default=1000000)
ap.add_argument("--requests", type=int, default=400000)
ap.add_argument("--policies", default="allkeys-lru,allkeys-lfu")
ap.add_argument("--workloads", default="zipf,uniform,shift")
ap.add_argument("--factors", default="4,2,1,0.5,0.25")
ap.add_argument("--seed", type=int, default=29)
ap.add_argument("--base-share", type=float, default=0,
                help="base = this share of used_memory with every value in RAM (0: the formula above)")
ap.add_argument("--extra", default="", help="extra redis-server arguments")
ap.add_argument("--start-maxmemory", type=int, default=0,
                help="MB: the server starts with this maxmemory, which is the base (the dataset is written under it)")
a = ap.parse_args()
MIX = [100, 500, 2000, 8000]
VALUES = a.value.split(",")
FACTORS = [float(f) for f in a.factors.split(",")]
assert 1.0 in FACTORS


def log(*args):
    print("[%s]" % time.strftime("%H:%M:%S"), *args, file=sys.stderr, flush=True)


class Conn:
    """A RESP connection: pipelined commands, replies parsed from a buffer."""

    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.pos = 0

    @staticmethod
    def encode(*args):
        out = [b"*%d\r\n" % len(args)]
        for x in args:
            if not isinstance(x, bytes):
                x = str(x).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(x), x))
        return b"".join(out)

    def _fill(self):
        data = self.s.recv(1 << 20)
        if not data:
            raise ConnectionError("server closed the connection")
        if self.pos:
            self.buf = self.buf[self.pos:] + data
            self.pos = 0
        else:
            self.buf += data

    def _line(self):
        while True:
            i = self.buf.find(b"\r\n", self.pos)
            if i >= 0:
                line = self.buf[self.pos:i]
                self.pos = i + 2
                return line
            self._fill()

    def reply(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t == b"+":
            return rest.decode()
        if t == b"-":
            raise RuntimeError(rest.decode())
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) - self.pos < n + 2:
                self._fill()
            v = self.buf[self.pos:self.pos + n]
            self.pos += n + 2
            return v
        if t == b"*":
            n = int(rest)
            return None if n < 0 else [self.reply() for _ in range(n)]
        if t == b",":
            return float(rest)
        raise RuntimeError("bad reply %r" % line)

    def call(self, *args):
        self.s.sendall(self.encode(*args))
        return self.reply()

    def pipeline(self, cmds):
        self.s.sendall(b"".join(cmds))
        return [self.reply() for _ in cmds]


def info(c, section):
    out = {}
    for line in c.call("INFO", section).decode().split("\r\n"):
        if ":" in line and not line.startswith("#"):
            k, v = line.split(":", 1)
            out[k] = v
    return out


def start_server(d):
    try:
        socket.create_connection(("127.0.0.1", a.port)).close()
        raise RuntimeError("port %d is in use: a server left running would be measured instead" % a.port)
    except ConnectionRefusedError:
        pass
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    args = [a.bin, "--port", str(a.port), "--bind", "127.0.0.1", "--dir", d, "--save", "", "--appendonly", "no",
            "--daemonize", "yes", "--logfile", os.path.join(d, "server.log"), "--rock-enabled", "yes"] + a.extra.split()
    if a.start_maxmemory:
        args += ["--maxmemory", "%dmb" % a.start_maxmemory]
    subprocess.run(args, check=True)
    for _ in range(300):
        try:
            c = Conn(a.port)
            if c.call("PING") == "PONG":
                return c
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError("server did not start")


def stop_server(c, d):
    try:
        c.call("SHUTDOWN", "NOSAVE")
    except Exception:
        pass
    time.sleep(0.5)
    shutil.rmtree(os.path.join(d, "rock-%d" % a.port), ignore_errors=True)


rng = random.Random(a.seed)
N = a.keys
SIZES = []
BLOB = os.urandom(max(MIX) + 4096)


def value_sizes(spec):
    """Each key's value size for a --value spec (the same seed: the same sizes)."""
    r = random.Random(a.seed * 7 + 1)
    if spec == "mix":
        return [r.choice(MIX) for _ in range(N)]
    vmin, vmax = (int(x) for x in spec.split("-"))
    return [r.randint(vmin, vmax) for _ in range(N)]
KEYS = [b"key:%012d" % i for i in range(N)]
GETS = [Conn.encode(b"GET", k) for k in KEYS]
PERM1 = list(range(N))
rng.shuffle(PERM1)
PERM2 = list(range(N))
rng.shuffle(PERM2)
# Zipf s=0.99 over N ranks: the cumulative weights, searched with bisect.
CDF = list(itertools.accumulate(1.0 / (r ** 0.99) for r in range(1, N + 1)))
TOTAL = CDF[-1]


def load(c, ttls):
    """Every key; with `ttls`, every other one gets a TTL far past the run."""
    batch = []
    for i in range(N):
        off = (i * 7919) % 4096
        if ttls and i % 2 == 0:
            batch.append(Conn.encode(b"SET", KEYS[i], BLOB[off:off + SIZES[i]], b"EX", 100000000))
        else:
            batch.append(Conn.encode(b"SET", KEYS[i], BLOB[off:off + SIZES[i]]))
        if len(batch) == 1000:
            c.pipeline(batch)
            batch = []
    if batch:
        c.pipeline(batch)


def draw(workload, second_half, r):
    if workload == "uniform":
        return r.randrange(N // 2)
    rank = bisect.bisect_left(CDF, r.random() * TOTAL)
    return (PERM2 if second_half else PERM1)[min(rank, N - 1)]


def run(c, workload, n, seed, measured):
    """n GETs; `measured`: the shift workload moves halfway."""
    r = random.Random(seed)
    errors = 0
    done = 0
    while done < n:
        k = min(100, n - done)
        ids = [draw(workload, measured and workload == "shift" and done >= n // 2, r) for _ in range(k)]
        for i, v in zip(ids, c.pipeline([GETS[i] for i in ids])):
            if v is None or len(v) != SIZES[i]:
                errors += 1
        done += k
    return errors


os.makedirs(a.out, exist_ok=True)
csv_path = os.path.join(a.out, "10-sizing.csv")
rows = []
header = ["server", "value", "policy", "workload", "factor", "maxmemory", "predicted", "measured", "diff_pp", "accesses",
          "cold_percent", "sampled_keys", "sample_ppm", "errors", "in_range", "predicted_here"]
with open(csv_path, "w") as f:
    f.write(",".join(header) + "\n")

for spec, policy, workload in itertools.product(VALUES, a.policies.split(","), a.workloads.split(",")):
    SIZES = value_sizes(spec)
    d = os.path.abspath(os.path.join(a.dir, "%s-%s-%s" % (spec, policy, workload)))
    c = start_server(d)
    # A run that stops on an error leaves no server behind on the port.
    atexit.register(stop_server, c, d)
    c.call("CONFIG", "SET", "maxmemory-policy", policy)
    t0 = time.time()
    load(c, policy.startswith("volatile"))
    used = int(info(c, "memory")["used_memory"])
    values = sum(SIZES) + 16 * N  # payloads and their robj headers, about
    fixed = max(used - values, 1)
    base = int(used * a.base_share) if a.base_share > 0 else int(max(fixed + 0.3 * values, 4.4 * fixed))
    if a.start_maxmemory:
        # Written under maxmemory: the dataset with every value in RAM is
        # what is in RAM now and the cold values besides, about.
        base = a.start_maxmemory << 20
        cold = int(info(c, "rock")["rock_cold_keys"])
        used += int(cold * values / N)
    floor = -1
    log("%s %s %s: loaded %d keys in %.0fs, used %d MB, values about %d MB, base %d MB" %
        (spec, policy, workload, N, time.time() - t0, used >> 20, values >> 20, base >> 20))
    predicted = {}
    measured = {}
    results = {}
    here = {}
    for n, factor in enumerate(FACTORS):
        mm = int(base * factor)
        c.call("CONFIG", "SET", "maxmemory", mm)
        # Every phase draws its own requests (a stream that repeated
        # would hand LRU hits at the period). At 4 x base every value
        # stays in RAM: no long warm-up.
        errors = run(c, workload, a.warmup if factor < 4 else a.warmup // 10, a.seed * 101 + 2 * n, False)
        c.call("CONFIG", "RESETSTAT")
        errors += run(c, workload, a.requests, a.seed * 101 + 2 * n + 1, True)
        ri = info(c, "rock")
        ram, disk = int(ri["rock_value_hits_ram"]), int(ri["rock_value_hits_disk"])
        errors += int(info(c, "stats").get("total_error_replies", "0"))
        measured[factor] = ram / max(ram + disk, 1)
        results[factor] = (mm, ram + disk, float(ri["rock_cold_percent"]), ri["rock_sizing_sampled_keys"],
                           ri["rock_sizing_sample_ppm"], errors)
        # Asked at the size itself, over the run just measured there: apart
        # from `predicted` (asked at 1 x for every size), this tells the
        # model's curve from its view of what a smaller maxmemory leaves.
        time.sleep(1)  # the background estimate of the values in RAM
        try:
            here[factor] = float(c.call("ROCK", "SIZING", mm)[0])
        except RuntimeError:
            here[factor] = float("nan")
        if factor == 1.0:
            floor = int(ri.get("rock_maxmemory_floor", "-1"))
            sizes = [int(base * f) for f in FACTORS]
            try:
                for f, v in zip(FACTORS, c.call("ROCK", "SIZING", *sizes)):
                    predicted[f] = float(v)
            except RuntimeError as e:
                log("%s %s %s: no prediction: %s" % (spec, policy, workload, e))
        log("%s %s %s x%g (%d MB): measured %.4f, cold %.1f%%, errors %d" %
            (spec, policy, workload, factor, mm >> 20, measured[factor], results[factor][2], errors))
    stop_server(c, d)
    atexit.unregister(stop_server)
    for factor in FACTORS:
        mm, acc, cold, keys, ppm, errors = results[factor]
        p = predicted.get(factor, float("nan"))
        # The sizes the goal covers: above the floor (no key deleted) and
        # below the dataset with every value in RAM.
        in_range = "yes" if floor > 0 and mm > floor * 1.02 and mm < used and errors == 0 and p == p else "no"
        row = ["rock", spec, policy, workload, "%g" % factor, str(mm), "%.4f" % p, "%.4f" % measured[factor],
               "%+.1f" % (100 * (p - measured[factor])), str(acc), "%.1f" % cold, keys, ppm, str(errors),
               in_range, "%.4f" % here[factor]]
        rows.append(row)
        with open(csv_path, "a") as f:
            f.write(",".join(row) + "\n")

inside = [r for r in rows if r[header.index("in_range")] == "yes"]
worst = max([abs(float(r[header.index("diff_pp")])) for r in inside] or [0])
log("done: %d rows, %d between the floor and the whole dataset, largest difference there %.1f points (the goal: 5)" %
    (len(rows), len(inside), worst))
