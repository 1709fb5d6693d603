#!/usr/bin/env python3
"""bench/childshift.py -- pages held for freed slots when the values read
change size while a forked child lives.

No defrag runs while a child lives. This loads 40,000 values of 700 bytes
and 8,000 of 3,000 bytes at `maxmemory 32mb` (most on disk), reads every
700-byte value back (the hot set), lets defrag settle, starts a BGSAVE kept
alive by `rdb-key-save-delay`, and reads every 3,000-byte value while the
child lives. jemalloc's active less allocated bytes ("frag") and RSS are
sampled every 100 ms until the child is gone; printed: before, after the
reads, and the peak while the child lived. redis-rock alone (stock keeps
every value in RAM: nothing to compare).

    build/venv/bin/python bench/childshift.py [--bin bin/redis-server] [--port 31298] [--runs 3]

Needs redis-py (`build/venv`, made by `make test`). Server dir under
build/bench/childshift-PORT.
"""
import argparse, os, random, shutil, subprocess, threading, time
import redis

MB = 1 << 20
ap = argparse.ArgumentParser()
ap.add_argument("--bin", default="bin/redis-server")
ap.add_argument("--port", type=int, default=31298)
ap.add_argument("--runs", type=int, default=3)
a = ap.parse_args()


def frag(i):
    return (i["allocator_active"] - i["allocator_allocated"]) / MB


def fill(c, prefix, n, size):
    pl = c.pipeline(transaction=False)
    for k in range(n):
        pl.set("%s:%d" % (prefix, k), os.urandom(size // 2).hex()[:size])
        if k % 500 == 499:
            pl.execute()
    pl.execute()


def read_all(c, prefix, n, rnd):
    keys = list(range(n))
    rnd.shuffle(keys)
    pl = c.pipeline(transaction=False)
    for j, k in enumerate(keys):
        pl.get("%s:%d" % (prefix, k))
        if j % 100 == 99:
            for v in pl.execute():
                assert v is not None
    pl.execute()


def one_run(run):
    d = os.path.abspath("build/bench/childshift-%d" % a.port)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    p = subprocess.Popen([a.bin, "--port", str(a.port), "--dir", d, "--maxmemory", "32mb",
                          "--maxmemory-policy", "noeviction", "--rock-enabled", "yes",
                          "--rock-dir", d + "/rock", "--save", "", "--appendonly", "no",
                          "--logfile", d + "/log", "--rock-io-threads", "4"])
    try:
        c = redis.Redis(port=a.port)
        for _ in range(100):
            try:
                c.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.1)
        rnd = random.Random(run)
        fill(c, "a", 40000, 700)
        fill(c, "b", 8000, 3000)
        read_all(c, "a", 40000, rnd)
        time.sleep(4)  # active defrag takes back what the load left
        i = c.info("all")
        before = (i["used_memory_rss"] / MB, frag(i))
        c.config_set("rdb-key-save-delay", 250)
        c.bgsave()
        peak = [0.0, 0.0]
        stop = threading.Event()

        def sample():
            s = redis.Redis(port=a.port)
            while not stop.is_set():
                j = s.info("all")
                peak[0] = max(peak[0], frag(j))
                peak[1] = max(peak[1], j["used_memory_rss"] / MB)
                time.sleep(0.1)

        t = threading.Thread(target=sample)
        t.start()
        read_all(c, "b", 8000, rnd)
        i = c.info("all")
        child = i["rdb_bgsave_in_progress"]
        after = (i["used_memory_rss"] / MB, frag(i))
        c.config_set("rdb-key-save-delay", 0)
        while c.info("persistence")["rdb_bgsave_in_progress"]:
            time.sleep(0.05)
        stop.set()
        t.join()
        print("run %d: frag MB before %.1f, after the reads %.1f (child alive: %s), peak %.1f; "
              "RSS MB before %.1f, after %.1f, peak %.1f"
              % (run, before[1], after[1], "yes" if child else "no", peak[0], before[0], after[0], peak[1]))
    finally:
        p.terminate()
        p.wait()


for r in range(1, a.runs + 1):
    one_run(r)
