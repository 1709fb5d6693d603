// Tests for Options: the command-line contract the bench scripts rely on.
package io.redisrock.metric;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.Test;

class OptionsTest {
    @Test
    void mode1Decimals() throws Exception {
        Options o = Options.parse(new String[] {"mode1", "2", "0.5"});
        assertEquals(Options.Mode.MODE1, o.mode);
        assertEquals(2, o.threads);
        assertEquals(500, o.keys);
        assertEquals(6379, o.port);
        assertEquals(30, o.durationSeconds());
    }

    @Test
    void mode2AndPositionalPort() throws Exception {
        Options o = Options.parse(new String[] {"--port", "1000", "--rate", "200", "mode2", "0.01", "1", "1", "31150"});
        assertEquals(Options.Mode.MODE2, o.mode);
        assertEquals(10_000, o.keys);
        assertEquals(1, o.threads);
        assertEquals(1, o.writeTenths);
        assertEquals(31150, o.port);
        assertEquals(200, o.rate);
        assertEquals(600, o.durationSeconds());
    }

    @Test
    void options() throws Exception {
        Options o = Options.parse(new String[] {"--host", "h", "--seed", "9", "--duration", "2.5", "--requests", "100",
            "--csv", "x.csv", "--no-load", "--load-threads", "2", "--progress", "1", "mode1", "1", "1"});
        assertEquals("h", o.host);
        assertEquals(9, o.seed);
        assertEquals(2.5, o.durationSeconds());
        assertEquals(100L, o.requests);
        assertEquals("x.csv", o.csv);
        assertTrue(o.noLoad);
        assertEquals(2, o.loadThreads);
        assertEquals(1, o.progress);
    }

    @Test
    void usageErrors() {
        String[][] bad = {
            {}, {"mode3"}, {"mode1", "2"}, {"mode1", "x", "1"}, {"mode1", "0", "1"}, {"mode1", "1", "0"},
            {"mode1", "1", "0.0001"}, {"mode2", "1", "1", "11"}, {"mode2", "1", "1"}, {"--bogus", "1", "mode1", "1", "1"},
            {"--ttl-min", "10", "--ttl-max", "5", "mode2", "1", "1", "1"}, {"mode1", "1", "1", "70000"},
            {"--duration", "0", "mode1", "1", "1"}, {"--rate"},
        };
        for (String[] args : bad) {
            assertThrows(Options.UsageException.class, () -> Options.parse(args), String.join(" ", args));
        }
    }
}
