#!/usr/bin/env python3
"""bench/stalls.py -- what the server was doing in a benchmark's slow seconds.

  stalls.py sample PORT OUT.csv [--interval 0.1]
      Until killed (SIGTERM/SIGINT), read INFO rock every interval and append
      a row: unix_ms and the tier's background-work figures (flushes and
      compactions running, L0 files, the writer's backlog and the event
      loop's waits for it). One connection, a few hundred bytes a sample.

  stalls.py report TRACE.csv SAMPLES.csv [--slow-p99-us 5000] [--top 5]
      TRACE is a metric harness --csv trace (one row per second, with
      unix_ms at the second's end). For each second: was a flush running, a
      compaction, did the event loop wait for the writer (write_waits or
      write_postponed grew)? Prints the share of all seconds and of slow
      seconds (p99 over the limit) with each, and the worst seconds by
      p99.9 with what ran in them; the last line is a one-line summary
      (key=value) that bench scripts put in their reports.

A background job "ran in a second" when any sample inside that second, or
the last sample before it, saw it running. Samples are 100 ms apart: a
flush shorter than that can be missed, so the shares are lower bounds.
"""
import argparse
import csv
import signal
import socket
import sys
import time

FIELDS = ["rocksdb_running_flushes", "rocksdb_running_compactions", "rocksdb_l0_files",
          "pending_writes", "write_waits", "write_postponed", "rocksdb_write_stopped",
          "evictions", "loads"]


def info_rock(sock, buf):
    sock.sendall(b"*2\r\n$4\r\nINFO\r\n$4\r\nrock\r\n")
    while b"\r\n" not in buf[0]:
        buf[0] += sock.recv(65536)
    head, rest = buf[0].split(b"\r\n", 1)
    if not head.startswith(b"$"):
        raise RuntimeError("unexpected reply: %r" % head)
    n = int(head[1:])
    while len(rest) < n + 2:
        rest += sock.recv(65536)
    body, buf[0] = rest[:n], rest[n + 2:]
    out = {}
    for line in body.decode().split("\r\n"):
        if line.startswith("rock_") and ":" in line:
            k, v = line[5:].split(":", 1)
            out[k] = v
    return out


def sample(args):
    stop = []
    signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
    signal.signal(signal.SIGINT, lambda *a: stop.append(1))
    sock = socket.create_connection(("127.0.0.1", args.port))
    buf = [b""]
    with open(args.out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["unix_ms"] + FIELDS)
        while not stop:
            try:
                fig = info_rock(sock, buf)
            except (OSError, RuntimeError):
                break
            w.writerow([int(time.time() * 1000)] + [fig.get(k, "") for k in FIELDS])
            f.flush()
            time.sleep(args.interval)


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return 0.0


def report(args):
    with open(args.trace) as f:
        trace = [r for r in csv.DictReader(f) if r.get("unix_ms")]
    with open(args.samples) as f:
        samples = [r for r in csv.DictReader(f)]
    if not trace or not samples:
        print("stalls: no trace rows with unix_ms, or no samples")
        print("stalls_summary seconds=0")
        return
    for s in samples:
        s["t"] = int(s["unix_ms"])
    seconds = []
    j = 0
    for r in trace:
        end = int(r["unix_ms"])
        start = end - 1000
        while j + 1 < len(samples) and samples[j + 1]["t"] <= start:
            j += 1
        inside = [s for s in samples[j:] if s["t"] <= end]
        before = samples[j] if samples[j]["t"] <= start else None
        near = ([before] if before else []) + [s for s in inside if s["t"] > start]
        if not near:
            continue
        first, last = near[0], near[-1]
        sec = {
            "elapsed": r["elapsed_s"], "p99": num(r["p99_us"]), "p999": num(r["p999_us"]),
            "flush": any(num(s["rocksdb_running_flushes"]) > 0 for s in near),
            "compaction": any(num(s["rocksdb_running_compactions"]) > 0 for s in near),
            "l0": max(int(num(s["rocksdb_l0_files"])) for s in near),
            "waits": (num(last["write_waits"]) - num(first["write_waits"])) +
                     (num(last["write_postponed"]) - num(first["write_postponed"])) > 0,
            "stopped": any(num(s["rocksdb_write_stopped"]) > 0 for s in near),
        }
        seconds.append(sec)
    slow = [s for s in seconds if s["p99"] > args.slow_p99_us]

    def share(group, key):
        return 100.0 * sum(1 for s in group if s[key]) / len(group) if group else 0.0

    print("stalls: %d seconds, %d slow (p99 > %d us)" % (len(seconds), len(slow), args.slow_p99_us))
    print("%-26s %8s %8s" % ("", "all %", "slow %"))
    for key, label in (("flush", "a flush running"), ("compaction", "a compaction running"),
                       ("waits", "event loop waited (writer)"), ("stopped", "writes stopped")):
        print("%-26s %8.1f %8.1f" % (label, share(seconds, key), share(slow, key)))
    print("worst seconds by p99.9:")
    for s in sorted(seconds, key=lambda s: -s["p999"])[:args.top]:
        ran = [k for k in ("flush", "compaction", "waits", "stopped") if s[k]]
        print("  %7ss p99 %6d us p99.9 %6d us L0 %2d: %s" %
              (s["elapsed"], s["p99"], s["p999"], s["l0"], ", ".join(ran) or "nothing sampled"))
    worst = max(seconds, key=lambda s: s["p999"])
    ran = "+".join(k for k in ("flush", "compaction", "waits", "stopped") if worst[k]) or "none"
    print("stalls_summary seconds=%d slow=%d flush_all=%.0f flush_slow=%.0f compaction_all=%.0f "
          "compaction_slow=%.0f waits_all=%.0f waits_slow=%.0f worst_at_s=%s worst_ran=%s" %
          (len(seconds), len(slow), share(seconds, "flush"), share(slow, "flush"),
           share(seconds, "compaction"), share(slow, "compaction"),
           share(seconds, "waits"), share(slow, "waits"), worst["elapsed"], ran))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sample")
    s.add_argument("port", type=int)
    s.add_argument("out")
    s.add_argument("--interval", type=float, default=0.1)
    r = sub.add_parser("report")
    r.add_argument("trace")
    r.add_argument("samples")
    r.add_argument("--slow-p99-us", type=int, default=5000)
    r.add_argument("--top", type=int, default=5)
    args = ap.parse_args()
    sample(args) if args.cmd == "sample" else report(args)


if __name__ == "__main__":
    sys.exit(main())
