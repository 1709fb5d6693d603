// Mode1 owns the read benchmark: load the key space (unless --no-load), then
// <threads> threads, one connection each, GET uniformly random keys for
// --duration seconds or --requests GETs, every reply checked byte for byte
// against the value regenerated from (seed, index). Nil or a different value
// is an error.
package io.redisrock.metric;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisException;

public final class Mode1 {
    private final Options o;
    private final Server server;
    private final KeySpace ks;
    private final Meter meter = new Meter();
    private volatile boolean stop;

    public Mode1(Options o) {
        this.o = o;
        this.server = new Server(o.host, o.port);
        this.ks = new KeySpace(o.seed, o.keys);
    }

    /** Runs the whole mode; returns the exit status (0 clean, 1 errors). */
    public int run() throws Exception {
        try (Jedis monitor = server.open(); Report report = new Report(o.csv)) {
            Double cold0 = Server.coldPercent(monitor);
            if (cold0 == null) Report.say("rock figures absent (stock Redis? INFO rock has no rock_cold_percent)");
            if (o.noLoad) {
                long size = monitor.dbSize();
                Report.say("--no-load: reusing " + size + " keys in the database (expecting " + ks.count() + ")");
                if (size < ks.count()) Report.say("warning: fewer keys than expected; missing ones will count as errors");
            } else {
                try {
                    new Loader(server, ks, o.loadThreads, o.progress, 0, 0).run();
                } catch (Loader.LoadFailed e) {
                    Report.say("load failed: " + e.getMessage());
                    return 1;
                }
            }
            Double cold = Server.coldPercent(monitor);
            Report.say("cold after loading: cold_percent=" + Server.coldText(cold));
            return measure(monitor, report);
        }
    }

    private int measure(Jedis monitor, Report report) throws InterruptedException {
        AtomicLong budget = o.requests == null ? null : new AtomicLong(o.requests);
        List<Jedis> conns = new ArrayList<>();
        List<Thread> workers = new ArrayList<>();
        CountDownLatch exited = new CountDownLatch(o.threads);
        try {
            for (int t = 0; t < o.threads; t++) conns.add(server.open());
            // With --requests and no --duration, the count alone ends the run.
            boolean countOnly = o.requests != null && o.duration == null;
            Report.say("mode1: " + o.threads + " threads, " + ks.count() + " keys, "
                + (countOnly ? o.requests + " GETs"
                   : Report.fmt1(o.durationSeconds()) + "s" + (o.requests != null ? " or " + o.requests + " GETs" : "")));
            long start = System.nanoTime();
            for (int t = 0; t < o.threads; t++) {
                Jedis j = conns.get(t);
                long rseed = KeySpace.mix(o.seed * 31 + t + 1);
                Thread th = new Thread(() -> {
                    try {
                        worker(j, new SplittableRandom(rseed), budget);
                    } finally {
                        exited.countDown();
                    }
                }, "get-" + t);
                workers.add(th);
                th.start();
            }
            long end = countOnly ? Long.MAX_VALUE : start + (long) (o.durationSeconds() * 1e9);
            long tick = (long) (o.progress * 1e9);
            long nextTick = start + tick, lastTick = start, lastCount = 0;
            Histogram total = new Histogram(3), interval = null;
            while (true) {
                long now = System.nanoTime();
                boolean finished = exited.await(Math.max(0, Math.min(nextTick, end) - now), TimeUnit.NANOSECONDS);
                now = System.nanoTime();
                if (!finished && now >= end) {
                    stop = true;
                    exited.await();
                    finished = true;
                }
                if (finished) now = System.nanoTime();
                if (finished || now >= nextTick) {
                    interval = meter.drainLatency(interval);
                    total.add(interval);
                    long count = meter.requests();
                    double secs = (now - lastTick) / 1e9;
                    // The last, partial interval is printed only if it holds anything.
                    if (!finished || secs >= 0.05 || count > lastCount) {
                        double rps = secs > 0 ? (count - lastCount) / secs : 0;
                        Double cold = Server.coldPercent(monitor);
                        double el = (now - start) / 1e9;
                        report.interval("[" + Report.fmt1(el) + "s] rps=" + Report.fmt1(rps)
                                + " p50_us=" + Report.pct(interval, 50) + " p99_us=" + Report.pct(interval, 99)
                                + " errors=" + meter.errors() + " cold_percent=" + Server.coldText(cold),
                            el, o.threads, rps, interval, meter.errors(), null, cold);
                    }
                    lastTick = now;
                    lastCount = count;
                    while (nextTick <= now) nextTick += tick;
                }
                if (finished) return summary(monitor, total, (now - start) / 1e9);
            }
        } finally {
            stop = true;
            for (Thread th : workers) th.join();
            for (Jedis j : conns) {
                try { j.close(); } catch (RuntimeException ignored) { }
            }
        }
    }

    private void worker(Jedis j, SplittableRandom rnd, AtomicLong budget) {
        try {
            while (!stop) {
                if (budget != null && budget.getAndDecrement() <= 0) break;
                long index = rnd.nextLong(ks.count());
                byte[] key = ks.key(index);
                long t0 = System.nanoTime();
                byte[] got = j.get(key);
                long t1 = System.nanoTime();
                meter.latency((t1 - t0) / 1000);
                meter.done(1);
                if (!ks.matches(index, got)) meter.mismatch(ks, index, got);
            }
        } catch (JedisException e) {
            meter.error(Thread.currentThread().getName() + ": " + Server.rootMessage(e) + " (thread stopped)");
        }
    }

    private int summary(Jedis monitor, Histogram total, double seconds) {
        long requests = meter.requests();
        Double cold = Server.coldPercent(monitor);
        if (cold == null) Report.say("rock figures absent (stock Redis?): cold_percent=NA");
        Report.say("latency_us: min=" + (total.getTotalCount() == 0 ? 0 : total.getMinValue())
            + " mean=" + Report.fmt1(total.getTotalCount() == 0 ? 0 : total.getMean())
            + " max=" + (total.getTotalCount() == 0 ? 0 : total.getMaxValue()));
        Report.say("SUMMARY mode=mode1 threads=" + o.threads + " keys=" + ks.count()
            + " requests=" + requests + " seconds=" + Report.fmt1(seconds)
            + " rps=" + Report.fmt1(seconds > 0 ? requests / seconds : 0)
            + " " + Report.percentiles(total)
            + " errors=" + meter.errors() + " cold_percent=" + Server.coldText(cold));
        return meter.errors() == 0 ? 0 : 1;
    }
}
