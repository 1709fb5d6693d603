#!/usr/bin/env python3
"""bench/gen.py -- deterministic RESP command streams for redis-cli --pipe.

    gen.py set    N [--start S] [--key-len 10] [--value-size 8 | --value-min A --value-max B] [--seed 1]
    gen.py get    N ...      (GET of the same keys)
    gen.py del    N ...      (DEL of the same keys)
    gen.py setex  N ... --expire SECONDS   (SET k v + EXPIRE k SECONDS per pair)
    gen.py mset   N ... --batch B          (MSET of B pairs per command)

Keys: with --key-len L, "k:" + the index zero-padded to L-2 digits (fixed
length, every key once, in order). With --key-min/--key-max: the index
zero-padded to 8 digits then padded with letters to a length uniform in
[min, max] (unique by their first 8 characters).
Keys for redis-benchmark -r: --bench-keys gives "key:%012d".

Values: slices of a seeded pool: --data random (letters and digits, about
6 bits of entropy per byte: barely compressible) or --data words (random
words from a seeded 5,000-word vocabulary, separated by spaces:
compressible, like text). Lengths fixed (--value-size) or uniform
[--value-min, --value-max]. --seed changes every value (use another seed to
overwrite with different values).
"""
import argparse
import random
import string
import sys

def pool_random(rng, size):
    alphabet = string.ascii_letters + string.digits
    return "".join(rng.choices(alphabet, k=size)).encode()

def pool_words(rng, size):
    vocab = ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 10))) for _ in range(5000)]
    # Zipf-ish word frequencies, like text: a few words are very common.
    weights = [1.0 / (i + 1) for i in range(len(vocab))]
    out, n = [], 0
    while n < size:
        chunk = " ".join(rng.choices(vocab, weights=weights, k=10000)) + " "
        out.append(chunk)
        n += len(chunk)
    return "".join(out)[:size].encode()

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["set", "get", "del", "setex", "mset"])
    ap.add_argument("n", type=int)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--key-len", type=int, default=0)
    ap.add_argument("--key-min", type=int, default=0)
    ap.add_argument("--key-max", type=int, default=0)
    ap.add_argument("--bench-keys", action="store_true")
    ap.add_argument("--value-size", type=int, default=0)
    ap.add_argument("--value-min", type=int, default=0)
    ap.add_argument("--value-max", type=int, default=0)
    ap.add_argument("--data", choices=["random", "words"], default="random")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--expire", type=int, default=3600)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--stats", help="write 'values=N value_bytes=TOTAL' to this file")
    a = ap.parse_args()

    rng = random.Random(a.seed)
    vmax = a.value_size or a.value_max
    need_values = a.cmd in ("set", "setex", "mset")
    if need_values:
        if vmax <= 0:
            sys.exit("gen.py: --value-size or --value-min/--value-max needed")
        psize = max(4 << 20, 64 * vmax)
        pool = pool_words(rng, psize) if a.data == "words" else pool_random(rng, psize)
        span = len(pool) - vmax
    pad_pool = pool_random(random.Random(7), 1 << 16)

    def key(i):
        if a.bench_keys:
            return b"key:%012d" % i
        if a.key_len:
            return b"k:%0*d" % (a.key_len - 2, i)
        if a.key_max:
            k = b"%08d" % i
            ln = rng.randint(a.key_min, a.key_max)
            if ln > 8:
                off = (i * 131) % (len(pad_pool) - ln)
                k += pad_pool[off:off + ln - 8]
            return k
        return b"k:%d" % i

    vstats = [0, 0]

    def value():
        ln = a.value_size or rng.randint(a.value_min, a.value_max)
        vstats[0] += 1
        vstats[1] += ln
        off = rng.randrange(span)
        return pool[off:off + ln]

    def bulk(b):
        return b"$%d\r\n%s\r\n" % (len(b), b)

    out = sys.stdout.buffer
    buf = []
    size = 0
    end = a.start + a.n
    i = a.start
    exp = str(a.expire).encode()
    while i < end:
        if a.cmd == "mset":
            m = min(a.batch, end - i)
            parts = [b"*%d\r\n$4\r\nMSET\r\n" % (1 + 2 * m)]
            for j in range(i, i + m):
                parts.append(bulk(key(j)))
                parts.append(bulk(value()))
            c = b"".join(parts)
            i += m
        else:
            k = key(i)
            if a.cmd == "set":
                c = b"*3\r\n$3\r\nSET\r\n" + bulk(k) + bulk(value())
            elif a.cmd == "setex":
                c = (b"*3\r\n$3\r\nSET\r\n" + bulk(k) + bulk(value()) +
                     b"*3\r\n$6\r\nEXPIRE\r\n" + bulk(k) + bulk(exp))
            elif a.cmd == "get":
                c = b"*2\r\n$3\r\nGET\r\n" + bulk(k)
            else:
                c = b"*2\r\n$3\r\nDEL\r\n" + bulk(k)
            i += 1
        buf.append(c)
        size += len(c)
        if size >= 1 << 20:
            out.write(b"".join(buf))
            buf, size = [], 0
    out.write(b"".join(buf))
    out.flush()
    if a.stats:
        with open(a.stats, "w") as f:
            f.write("values=%d value_bytes=%d\n" % tuple(vstats))

if __name__ == "__main__":
    main()
