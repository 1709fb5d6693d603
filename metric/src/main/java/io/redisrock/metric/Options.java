// Options owns the command line: parsing, defaults, checks and the usage text.
// Anything wrong here is a usage error (exit status 2).
package io.redisrock.metric;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;

public final class Options {
    public static final String USAGE = String.join("\n",
        "usage: java -jar redis-rock-metric.jar [options] mode1 <threads> <thousands-of-keys> [port]",
        "       java -jar redis-rock-metric.jar [options] mode2 <millions-of-keys> <start-threads> <write-tenths> [port]",
        "options (before the mode word):",
        "  --host H              server host (default 127.0.0.1)",
        "  --port P              server port (default 6379; the positional [port] overrides it)",
        "  --seed N              keys and values derive from (seed, index) (default 1)",
        "  --duration S          seconds of the measured phase (mode1 default 30, mode2 default 600)",
        "  --requests N          mode1: stop after N GETs in total (with --duration: whichever first)",
        "  --progress S          seconds between progress lines (default 5)",
        "  --csv FILE            one CSV row per progress interval (header first)",
        "  --no-load             mode1: skip FLUSHALL+load, reuse keys loaded with the same seed/count",
        "  --rate N              mode2: requests/s per thread (default 1000)",
        "  --pipeline N          mode2: pipeline depth (default 10)",
        "  --step S              mode2: seconds between adding a thread (default 60)",
        "  --max-threads N       mode2: thread cap (default 64)",
        "  --p99-limit-ms MS     mode2: a step whose p99 exceeds this ends the ramp (default 50)",
        "  --ttl-min S           mode2: SETEX TTL lower bound, seconds (default 60)",
        "  --ttl-max S           mode2: SETEX TTL upper bound, seconds (default 60000)",
        "  --load-threads N      connections used for the pipelined load (default 4)",
        "<thousands-of-keys> and <millions-of-keys> accept decimals: 'mode1 2 0.5' is 500 keys.");

    public static final class UsageException extends Exception {
        public UsageException(String msg) { super(msg); }
    }

    public enum Mode { MODE1, MODE2 }

    public Mode mode;
    public String host = "127.0.0.1";
    public int port = 6379;
    public long seed = 1;
    public Double duration;            // null: the mode's default
    public Long requests;              // mode1 only
    public double progress = 5;
    public String csv;
    public boolean noLoad;
    public int rate = 1000;
    public int pipeline = 10;
    public double step = 60;
    public int maxThreads = 64;
    public double p99LimitMs = 50;
    public long ttlMin = 60, ttlMax = 60000;
    public int loadThreads = 4;

    public long keys;                  // absolute key count
    public int threads;                // mode1 threads / mode2 start threads
    public int writeTenths;            // mode2

    public double durationSeconds() {
        return duration != null ? duration : (mode == Mode.MODE1 ? 30 : 600);
    }

    public static Options parse(String[] args) throws UsageException {
        Options o = new Options();
        List<String> pos = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("-h") || a.equals("--help")) throw new UsageException(null);
            if (!a.startsWith("--")) { pos.add(a); continue; }
            if (a.equals("--no-load")) { o.noLoad = true; continue; }
            if (i + 1 >= args.length) throw new UsageException(a + " needs a value");
            String v = args[++i];
            switch (a) {
                case "--host" -> o.host = v;
                case "--port" -> o.port = port(v);
                case "--seed" -> o.seed = longArg(a, v, Long.MIN_VALUE);
                case "--duration" -> o.duration = positive(a, v);
                case "--requests" -> o.requests = longArg(a, v, 1);
                case "--progress" -> o.progress = positive(a, v);
                case "--csv" -> o.csv = v;
                case "--rate" -> o.rate = intArg(a, v, 1);
                case "--pipeline" -> o.pipeline = intArg(a, v, 1);
                case "--step" -> o.step = positive(a, v);
                case "--max-threads" -> o.maxThreads = intArg(a, v, 1);
                case "--p99-limit-ms" -> o.p99LimitMs = positive(a, v);
                case "--ttl-min" -> o.ttlMin = longArg(a, v, 1);
                case "--ttl-max" -> o.ttlMax = longArg(a, v, 1);
                case "--load-threads" -> o.loadThreads = intArg(a, v, 1);
                default -> throw new UsageException("unknown option " + a);
            }
        }
        if (pos.isEmpty()) throw new UsageException("missing mode (mode1 or mode2)");
        switch (pos.get(0)) {
            case "mode1" -> {
                o.mode = Mode.MODE1;
                if (pos.size() < 3 || pos.size() > 4)
                    throw new UsageException("mode1 takes <threads> <thousands-of-keys> [port]");
                o.threads = intArg("<threads>", pos.get(1), 1);
                o.keys = scaledCount("<thousands-of-keys>", pos.get(2), 1_000);
                if (pos.size() == 4) o.port = port(pos.get(3));
            }
            case "mode2" -> {
                o.mode = Mode.MODE2;
                if (pos.size() < 4 || pos.size() > 5)
                    throw new UsageException("mode2 takes <millions-of-keys> <start-threads> <write-tenths> [port]");
                o.keys = scaledCount("<millions-of-keys>", pos.get(1), 1_000_000);
                o.threads = intArg("<start-threads>", pos.get(2), 1);
                o.writeTenths = intArg("<write-tenths>", pos.get(3), 0);
                if (o.writeTenths > 10) throw new UsageException("<write-tenths> must be 0..10");
                if (pos.size() == 5) o.port = port(pos.get(4));
            }
            default -> throw new UsageException("unknown mode '" + pos.get(0) + "' (mode1 or mode2)");
        }
        if (o.ttlMax < o.ttlMin) throw new UsageException("--ttl-max must be >= --ttl-min");
        if (o.mode == Mode.MODE2 && o.threads > o.maxThreads)
            throw new UsageException("<start-threads> exceeds --max-threads");
        return o;
    }

    /** "0.5" thousands -> 500; rounds to the nearest key, at least one. */
    static long scaledCount(String what, String v, long unit) throws UsageException {
        BigDecimal d;
        try {
            d = new BigDecimal(v);
        } catch (NumberFormatException e) {
            throw new UsageException(what + " must be a number, got '" + v + "'");
        }
        long n;
        try {
            n = d.multiply(BigDecimal.valueOf(unit)).setScale(0, java.math.RoundingMode.HALF_UP).longValueExact();
        } catch (ArithmeticException e) {
            throw new UsageException(what + " is out of range: " + v);
        }
        if (n < 1) throw new UsageException(what + " must give at least one key, got '" + v + "'");
        return n;
    }

    private static int port(String v) throws UsageException {
        int p = intArg("port", v, 1);
        if (p > 65535) throw new UsageException("port must be 1..65535, got " + v);
        return p;
    }

    private static int intArg(String what, String v, int min) throws UsageException {
        long n = longArg(what, v, min);
        if (n > Integer.MAX_VALUE) throw new UsageException(what + " is too large: " + v);
        return (int) n;
    }

    private static long longArg(String what, String v, long min) throws UsageException {
        long n;
        try {
            n = Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new UsageException(what + " must be an integer, got '" + v + "'");
        }
        if (n < min) throw new UsageException(what + " must be >= " + min + ", got " + v);
        return n;
    }

    private static double positive(String what, String v) throws UsageException {
        double d;
        try {
            d = Double.parseDouble(v);
        } catch (NumberFormatException e) {
            throw new UsageException(what + " must be a number, got '" + v + "'");
        }
        if (!(d > 0) || Double.isInfinite(d)) throw new UsageException(what + " must be > 0, got " + v);
        return d;
    }
}
