// Tests for Ramp: mode2's add / remove-and-stop decisions.
package io.redisrock.metric;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.Test;

class RampTest {
    @Test
    void addsWhileKeepingUpThenRemovesOnce() {
        Ramp r = new Ramp(64, 50_000);
        assertEquals(Ramp.Action.ADD, r.afterStep(1, 1000, 990, 800));
        assertEquals(Ramp.Action.ADD, r.afterStep(2, 2000, 1960, 900));
        assertEquals(Ramp.Action.REMOVE, r.afterStep(3, 3000, 2500, 900));
        assertTrue(r.saturated());
        assertTrue(r.reason().contains("95%"), r.reason());
        assertEquals(Ramp.Action.HOLD, r.afterStep(2, 2000, 1000, 900));
    }

    @Test
    void p99LimitStopsTheRamp() {
        Ramp r = new Ramp(64, 50_000);
        assertEquals(Ramp.Action.REMOVE, r.afterStep(4, 4000, 4000, 60_000));
        assertTrue(r.reason().contains("p99"), r.reason());
    }

    @Test
    void capAndSingleThread() {
        Ramp r = new Ramp(2, 50_000);
        assertEquals(Ramp.Action.HOLD, r.afterStep(2, 2000, 2000, 10));
        Ramp one = new Ramp(8, 50_000);
        assertEquals(Ramp.Action.HOLD, one.afterStep(1, 1000, 10, 10));
        assertTrue(one.saturated());
    }
}
