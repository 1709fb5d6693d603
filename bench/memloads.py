#!/usr/bin/env python3
"""bench/memloads.py -- RSS of redis-rock while a dataset ten times maxmemory
is written, rewritten after FLUSHDB, reloaded (DEBUG RELOAD), restarted from
its AOF and its RDB, and fully synced to a replica.

Stands apart from `make bench` (redis-rock alone, no stock row: stock has
no such loads to compare). A soak-like dataset: 300,000 strings of
300-3,000 bytes and 75,000 small hashes and sorted sets (5-20 fields or
members), about 530 MB of values, `maxmemory 48mb`, `allkeys-lru`. RSS is
sampled every 100 ms from /proc during each load and compared with the
tier's bound, maxmemory x 1.15 + 64 MB; after each step jemalloc's allocated,
active and resident bytes are printed. Nothing else writes during the loads.

    build/venv/bin/python bench/memloads.py [--bin bin/redis-server] [--port 31294] [--strings 300-3000] [-- extra server args]
    build/venv/bin/python bench/memloads.py --stock --bin bin/stock/redis-server   # stock deletes keys instead

Needs redis-py (`build/venv`, made by `make test`). Ports PORT and PORT+1
(31294-31295: clear of bench 9, bgsave-rss.sh and dirty-evict.sh);
server dirs under build/bench/memloads-PORT*.
"""
import argparse, os, random, shutil, subprocess, threading, time
import redis

MB = 1 << 20
MAXMEMORY_MB = 48
BOUND = MAXMEMORY_MB * 1.15 + 64

ap = argparse.ArgumentParser()
ap.add_argument("--bin", default="bin/redis-server")
ap.add_argument("--port", type=int, default=31294)
ap.add_argument("--strings", default="300-3000", help="string value sizes, MIN-MAX bytes")
ap.add_argument("--stock", action="store_true", help="a stock server (no rock options): for comparison")
ap.add_argument("extra", nargs="*", help="extra redis-server arguments (after --)")
a = ap.parse_args()
SMIN, SMAX = (int(x) for x in a.strings.split("-"))
CLI = os.path.join(os.path.dirname(a.bin) or ".", "redis-cli")
D = os.path.abspath("build/bench/memloads-%d" % a.port)


def start(port, d, *args):
    os.makedirs(d, exist_ok=True)
    if os.path.exists(d + "/pid"):
        os.remove(d + "/pid")
    rock = [] if a.stock else ["--rock-enabled", "yes"]
    subprocess.check_call([a.bin, "--port", str(port), "--dir", d] + rock + [
                           "--maxmemory", "%dmb" % MAXMEMORY_MB, "--maxmemory-policy", "allkeys-lru",
                           "--save", "", "--enable-debug-command", "yes", "--daemonize", "yes",
                           "--logfile", d + "/log", "--pidfile", d + "/pid"] + list(args) + a.extra)
    for _ in range(200):
        try:
            return int(open(d + "/pid").read())
        except (OSError, ValueError):
            time.sleep(0.05)
    raise SystemExit("server on port %d did not start (%s/log)" % (port, d))


def stop(port, pid):
    subprocess.call([CLI, "-p", str(port), "shutdown", "nosave"], stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL)
    while pid and os.path.exists("/proc/%d" % pid):
        time.sleep(0.05)


def rss_mb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


class Peak:
    """RSS of the process pidf() names, every 100 ms, until end()."""
    def __init__(self, pidf):
        self.pidf, self.max, self.over, self.n, self.stopping = pidf, 0.0, 0, 0, False
        self.t = threading.Thread(target=self.run)
        self.t.start()

    def run(self):
        while not self.stopping:
            v = rss_mb(self.pidf())
            self.n += 1
            self.max = max(self.max, v)
            self.over += v > BOUND
            time.sleep(0.1)

    def end(self):
        self.stopping = True
        self.t.join()
        return "peak RSS %.1f MB, %d of %d samples over %.1f" % (self.max, self.over, self.n, BOUND)


def main_cpu_s(pid):
    """utime + stime of the server's main thread (/proc/PID/task/PID/stat)."""
    with open("/proc/%d/task/%d/stat" % (pid, pid)) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def mem(r):
    i = r.info("memory")
    return "used %.1f allocated %.1f active %.1f resident %.1f rss %.1f MB" % tuple(
        i[k] / MB for k in ("used_memory", "allocator_allocated", "allocator_active",
                            "allocator_resident", "used_memory_rss"))


def wait_loaded(r):
    while True:
        try:
            if r.info("persistence")["loading"] == 0:
                return
        except (redis.exceptions.BusyLoadingError, redis.exceptions.ConnectionError):
            pass
        time.sleep(0.05)


def write_dataset(r):
    rnd = random.Random(1)
    p = r.pipeline(transaction=False)
    n = 0
    for i in range(300000):
        p.set("s:%d" % i, "x" * rnd.randint(SMIN, SMAX))
        n += 1
        if i % 4 == 0:
            j = i // 4
            p.hset("h:%d" % j, mapping={"f%d" % f: "v" * rnd.randint(20, 60) for f in range(rnd.randint(5, 20))})
            p.zadd("z:%d" % j, {"m%d:%s" % (m, "y" * rnd.randint(10, 30)): m for m in range(rnd.randint(5, 20))})
            n += 2
        if n >= 2000:
            p.execute()
            n = 0
    p.execute()


def step(name, text):
    print("%-22s %s" % (name, text), flush=True)


shutil.rmtree(D, ignore_errors=True)
shutil.rmtree(D + "-replica", ignore_errors=True)
pid = start(a.port, D, "--appendonly", "yes")
r = redis.Redis(port=a.port)
try:
    pk = Peak(lambda: pid)
    write_dataset(r)
    time.sleep(1)
    step("written:", pk.end() + " | " + mem(r))
    r.flushdb()
    time.sleep(1)
    pk = Peak(lambda: pid)
    write_dataset(r)
    time.sleep(1)
    step("written after FLUSHDB:", pk.end() + " | " + mem(r))
    time.sleep(10)
    step("10 s later:", mem(r) + ", main thread CPU %.2f s so far" % main_cpu_s(pid))
    pk = Peak(lambda: pid)
    r.execute_command("debug", "reload")
    step("DEBUG RELOAD:", pk.end() + " | " + mem(r))
    r.save()
    r.bgrewriteaof()
    while r.info("persistence")["aof_rewrite_in_progress"]:
        time.sleep(0.1)
    step("dataset:", "%d keys, %.1f%% on disk, RDB %.0f MB" % (
        r.dbsize(), float(r.info("rock").get("rock_cold_percent", 0)), os.path.getsize(D + "/dump.rdb") / MB))
    for kind, args in (("restart from AOF:", ["--appendonly", "yes"]),
                       ("restart from RDB:", ["--appendonly", "no"])):
        stop(a.port, pid)
        pid = start(a.port, D, *args)
        pk = Peak(lambda: pid)
        wait_loaded(r)
        time.sleep(1)
        step(kind, pk.end() + " | " + mem(r))
    rd = D + "-replica"
    rpid = start(a.port + 1, rd)
    rr = redis.Redis(port=a.port + 1)
    pk, mpk = Peak(lambda: rpid), Peak(lambda: pid)
    rr.replicaof("127.0.0.1", a.port)
    while rr.info("replication").get("master_link_status") != "up" or rr.info("persistence")["loading"]:
        time.sleep(0.1)
    time.sleep(1)
    step("full sync, replica:", pk.end() + " | " + mem(rr))
    step("full sync, master:", mpk.end() + " | " + mem(r))
    stop(a.port + 1, rpid)
finally:
    stop(a.port, pid)
