#!/usr/bin/env python3
"""bench/procwatch.py -- run a server in the foreground and watch it.

    procwatch.py OUT -- redis-server ARGS... (with --daemonize no)

While the process lives, every 100 ms: its RSS (VmRSS), the largest so far
written to OUT.rss (one number, KB, rewritten each sample) so that a script
can read the peak of a phase while the process goes on. When it exits: OUT
gets "status write_bytes" (the exit status, and the bytes the process and
all its threads caused to be written to storage over its whole life, from
wait4()'s ru_oublock: the same accounting as /proc/PID/io write_bytes, which
vanishes with the process; subtract a reading of that taken before a phase
to get the phase's bytes).
"""
import os
import subprocess
import sys
import threading


def rss_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def main():
    out = sys.argv[1]
    assert sys.argv[2] == "--"
    p = subprocess.Popen(sys.argv[3:], stdin=subprocess.DEVNULL)
    done = threading.Event()

    def sample():
        peak = 0
        while not done.wait(0.1):
            r = rss_kb(p.pid)
            if r > peak:
                peak = r
                with open(out + ".rss.tmp", "w") as f:
                    f.write("%d\n" % peak)
                os.replace(out + ".rss.tmp", out + ".rss")

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    _, status, ru = os.wait4(p.pid, 0)
    done.set()
    t.join()
    with open(out + ".tmp", "w") as f:
        f.write("%d %d\n" % (os.waitstatus_to_exitcode(status), ru.ru_oublock * 512))
    os.replace(out + ".tmp", out)


if __name__ == "__main__":
    main()
