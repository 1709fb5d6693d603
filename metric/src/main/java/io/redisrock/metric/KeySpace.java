// KeySpace owns the data set: every key, value and warm-up TTL is a pure
// function of (seed, index), so any thread can regenerate and check a value
// without the JVM ever holding the data set.
package io.redisrock.metric;

import java.nio.charset.StandardCharsets;

public final class KeySpace {
    public static final int KEY_MIN = 20, KEY_MAX = 200;
    public static final int VALUE_MIN = 200, VALUE_MAX = 2000;

    private static final long GOLDEN = 0x9e3779b97f4a7c15L;
    // Separate streams per purpose so a key's filler never correlates with its value.
    private static final long KEY_STREAM = 0x6b6579L, VALUE_STREAM = 0x76616cL, TTL_STREAM = 0x74746cL;
    private static final byte[] FILLER =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".getBytes(StandardCharsets.US_ASCII);

    private final long seed;
    private final long count;

    public KeySpace(long seed, long count) {
        if (count <= 0) throw new IllegalArgumentException("key count must be positive");
        this.seed = seed;
        this.count = count;
    }

    public long count() { return count; }
    public long seed() { return seed; }

    /** splitmix64's finaliser: a good 64-bit mixing function. */
    public static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    /** A small splitmix64 stream; its start depends on (seed, index, purpose). */
    static final class Stream {
        private long state;
        Stream(long seed, long index, long purpose) {
            state = mix(mix(seed * GOLDEN + purpose) ^ (index * 0xd1b54a32d192ed03L + 1));
        }
        long next() {
            state += GOLDEN;
            return mix(state);
        }
        /** Uniform in [0, n) for n well below 2^32. */
        int below(int n) {
            return (int) (((next() >>> 32) * n) >>> 32);
        }
    }

    private void checkIndex(long index) {
        if (index < 0 || index >= count) throw new IndexOutOfBoundsException("key index " + index);
    }

    /** The key: "k:<index>:" followed by deterministic filler up to 20..200 bytes. */
    public byte[] key(long index) {
        checkIndex(index);
        Stream s = new Stream(seed, index, KEY_STREAM);
        int len = KEY_MIN + s.below(KEY_MAX - KEY_MIN + 1);
        byte[] prefix = ("k:" + index + ":").getBytes(StandardCharsets.US_ASCII);
        byte[] key = new byte[Math.max(len, prefix.length)];
        System.arraycopy(prefix, 0, key, 0, prefix.length);
        for (int i = prefix.length; i < key.length; i++) key[i] = FILLER[s.below(FILLER.length)];
        return key;
    }

    public String keyText(long index) {
        return new String(key(index), StandardCharsets.US_ASCII);
    }

    /** Length of the value at index, 200..2000 bytes. */
    public int valueLength(long index) {
        return VALUE_MIN + new Stream(seed, index, VALUE_STREAM).below(VALUE_MAX - VALUE_MIN + 1);
    }

    /** The value: valueLength(index) bytes of a deterministic (incompressible) stream. */
    public byte[] value(long index) {
        checkIndex(index);
        Stream s = new Stream(seed, index, VALUE_STREAM);
        byte[] v = new byte[VALUE_MIN + s.below(VALUE_MAX - VALUE_MIN + 1)];
        int i = 0;
        while (i < v.length) {
            long r = s.next();
            for (int b = 0; b < 8 && i < v.length; b++, r >>>= 8) v[i++] = (byte) r;
        }
        return v;
    }

    /** True when got is exactly value(index), checked without allocating it. */
    public boolean matches(long index, byte[] got) {
        checkIndex(index);
        if (got == null) return false;
        Stream s = new Stream(seed, index, VALUE_STREAM);
        int len = VALUE_MIN + s.below(VALUE_MAX - VALUE_MIN + 1);
        if (got.length != len) return false;
        int i = 0;
        while (i < len) {
            long r = s.next();
            for (int b = 0; b < 8 && i < len; b++, r >>>= 8) {
                if (got[i++] != (byte) r) return false;
            }
        }
        return true;
    }

    /** Warm-up TTL of the key at index, uniform in [ttlMin, ttlMax] seconds. */
    public long warmupTtl(long index, long ttlMin, long ttlMax) {
        checkIndex(index);
        long span = ttlMax - ttlMin + 1;
        return ttlMin + Long.remainderUnsigned(new Stream(seed, index, TTL_STREAM).next(), span);
    }
}
