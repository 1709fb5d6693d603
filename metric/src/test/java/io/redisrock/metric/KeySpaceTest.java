// Tests for KeySpace: determinism, sizes, unique keys, and that validation
// catches a single changed byte.
package io.redisrock.metric;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class KeySpaceTest {
    @Test
    void sameSeedSameData() {
        KeySpace a = new KeySpace(7, 1000), b = new KeySpace(7, 1000);
        for (long i = 0; i < 1000; i += 37) {
            assertArrayEquals(a.key(i), b.key(i));
            assertArrayEquals(a.value(i), b.value(i));
            assertEquals(a.warmupTtl(i, 60, 60000), b.warmupTtl(i, 60, 60000));
        }
    }

    @Test
    void otherSeedOtherValues() {
        KeySpace a = new KeySpace(1, 100), b = new KeySpace(2, 100);
        assertFalse(a.matches(5, b.value(5)) && a.valueLength(5) == b.valueLength(5)
            && java.util.Arrays.equals(a.value(5), b.value(5)));
    }

    @Test
    void sizesInRangeAndKeysUnique() {
        KeySpace ks = new KeySpace(1, 20000);
        Set<String> keys = new HashSet<>();
        int minK = Integer.MAX_VALUE, maxK = 0, minV = Integer.MAX_VALUE, maxV = 0;
        for (long i = 0; i < ks.count(); i++) {
            byte[] k = ks.key(i);
            String text = new String(k, StandardCharsets.US_ASCII);
            assertTrue(text.startsWith("k:" + i + ":"), text);
            assertTrue(keys.add(text));
            int vl = ks.valueLength(i);
            assertEquals(vl, ks.value(i).length);
            minK = Math.min(minK, k.length); maxK = Math.max(maxK, k.length);
            minV = Math.min(minV, vl); maxV = Math.max(maxV, vl);
        }
        assertTrue(minK >= 20 && maxK <= 200 && minK < 25 && maxK > 195, minK + ".." + maxK);
        assertTrue(minV >= 200 && maxV <= 2000 && minV < 210 && maxV > 1990, minV + ".." + maxV);
    }

    @Test
    void matchesDetectsAnyChange() {
        KeySpace ks = new KeySpace(3, 10);
        byte[] v = ks.value(4);
        assertTrue(ks.matches(4, v));
        assertFalse(ks.matches(4, null));
        assertFalse(ks.matches(5, v));
        byte[] shorter = java.util.Arrays.copyOf(v, v.length - 1);
        assertFalse(ks.matches(4, shorter));
        v[v.length - 1] ^= 1;
        assertFalse(ks.matches(4, v));
    }

    @Test
    void ttlInRange() {
        KeySpace ks = new KeySpace(1, 5000);
        for (long i = 0; i < ks.count(); i++) {
            long t = ks.warmupTtl(i, 60, 70);
            assertTrue(t >= 60 && t <= 70);
        }
        assertThrows(IndexOutOfBoundsException.class, () -> ks.key(5000));
    }
}
