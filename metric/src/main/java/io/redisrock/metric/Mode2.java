// Mode2 owns the cache workload: warm up the key space with SETEX, then run
// paced threads (--rate requests/s each, in pipelines of --pipeline sent on a
// fixed schedule), each request a GET of a random key or, with probability
// write-tenths/10, a SETEX of it. Latency is taken from each pipeline's
// intended start (coordinated-omission correct). Every --step seconds a
// thread is added until the server stops keeping up (see Ramp).
package io.redisrock.metric;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.Response;
import redis.clients.jedis.exceptions.JedisException;

public final class Mode2 {
    private final Options o;
    private final Server server;
    private final KeySpace ks;
    private final Meter meter = new Meter();
    private final long intervalNs;                 // between two pipelines of one thread
    private volatile boolean stopAll;

    public Mode2(Options o) {
        this.o = o;
        this.server = new Server(o.host, o.port);
        this.ks = new KeySpace(o.seed, o.keys);
        this.intervalNs = Math.max(1, Math.round(o.pipeline * 1e9 / o.rate));
    }

    /** One paced connection. */
    private final class Worker extends Thread {
        private final Jedis conn;
        private final SplittableRandom rnd;
        private volatile boolean retire;
        private long intended;                     // intended start of the next pipeline

        Worker(int id, Jedis conn, long scheduleStart) {
            super("mode2-" + id);
            this.conn = conn;
            this.rnd = new SplittableRandom(KeySpace.mix(o.seed * 131 + id + 1));
            // A random phase inside the first interval keeps threads from firing together.
            this.intended = scheduleStart + rnd.nextLong(intervalNs);
        }

        @Override
        public void run() {
            try {
                while (!retire && !stopAll) {
                    long now = System.nanoTime();
                    if (now < intended) {
                        LockSupport.parkNanos(intended - now);
                        continue;
                    }
                    pipeline();
                    // The schedule does not move when we are late: the next pipeline
                    // goes out at once, and its latency includes the lag.
                    intended += intervalNs;
                }
            } catch (JedisException e) {
                meter.error(getName() + ": " + Server.rootMessage(e) + " (thread stopped)");
            } finally {
                try { conn.close(); } catch (RuntimeException ignored) { }
            }
        }

        @SuppressWarnings("unchecked")
        private void pipeline() {
            int depth = o.pipeline;
            long[] index = new long[depth];
            long[] ttl = new long[depth];               // 0: a GET
            byte[][] keys = new byte[depth][], values = new byte[depth][];
            for (int i = 0; i < depth; i++) {           // generated before the clock starts
                index[i] = rnd.nextLong(ks.count());
                keys[i] = ks.key(index[i]);
                if (rnd.nextInt(10) < o.writeTenths) {
                    ttl[i] = o.ttlMin + rnd.nextLong(o.ttlMax - o.ttlMin + 1);
                    values[i] = ks.value(index[i]);
                }
            }
            Response<byte[]>[] gets = new Response[depth];
            Response<String>[] sets = new Response[depth];
            long sent = System.nanoTime();
            Pipeline p = conn.pipelined();
            for (int i = 0; i < depth; i++) {
                if (ttl[i] > 0) sets[i] = p.setex(keys[i], ttl[i], values[i]);
                else gets[i] = p.get(keys[i]);
            }
            p.sync();
            long done = System.nanoTime();
            meter.latency((done - intended) / 1000);
            meter.service((done - sent) / 1000);
            meter.done(depth);
            for (int i = 0; i < depth; i++) {
                try {
                    if (gets[i] != null) {
                        byte[] got = gets[i].get();
                        if (got == null) meter.nil();
                        else if (!ks.matches(index[i], got)) meter.mismatch(ks, index[i], got);
                    } else {
                        sets[i].get();
                    }
                } catch (JedisException e) {
                    meter.error("key " + ks.keyText(index[i]) + ": " + e.getMessage());
                }
            }
        }
    }

    /** Runs the whole mode; returns the exit status (0 clean, 1 errors). */
    public int run() throws Exception {
        try (Jedis monitor = server.open(); Report report = new Report(o.csv)) {
            if (Server.coldPercent(monitor) == null)
                Report.say("rock figures absent (stock Redis? INFO rock has no rock_cold_percent)");
            try {
                new Loader(server, ks, o.loadThreads, o.progress, o.ttlMin, o.ttlMax).run();
            } catch (Loader.LoadFailed e) {
                Report.say("load failed: " + e.getMessage());
                return 1;
            }
            Report.say("cold after warm-up: cold_percent=" + Server.coldText(Server.coldPercent(monitor)));
            return measure(monitor, report);
        }
    }

    private int measure(Jedis monitor, Report report) throws InterruptedException {
        List<Worker> active = new ArrayList<>();
        List<Worker> all = new ArrayList<>();
        Ramp ramp = new Ramp(o.maxThreads, Math.round(o.p99LimitMs * 1000));
        Report.say("mode2: " + o.threads + " threads to start, " + o.rate + " req/s each in pipelines of "
            + o.pipeline + ", writes " + o.writeTenths + "/10, a thread more every " + Report.fmt1(o.step)
            + "s (max " + o.maxThreads + "), " + Report.fmt1(o.durationSeconds()) + "s");
        try {
            List<Jedis> conns = new ArrayList<>();
            for (int t = 0; t < o.threads; t++) conns.add(server.open());
            long start = System.nanoTime();
            for (Jedis j : conns) addWorker(active, all, j, start);
            int peak = active.size();

            long end = start + (long) (o.durationSeconds() * 1e9);
            long tick = (long) (o.progress * 1e9), stepNs = (long) (o.step * 1e9);
            long nextTick = start + tick, lastTick = start, lastCount = 0;
            long nextStep = start + stepNs, stepStart = start, stepCount = 0;
            Histogram total = new Histogram(3), totalService = new Histogram(3);
            Histogram tickHist = new Histogram(3), stepHist = new Histogram(3);
            Histogram interval = null, service = null;
            double lastStepRps = -1;                     // last full step at the current count
            Histogram lastStepHist = null;
            int lastStepThreads = 0;

            while (true) {
                long now = System.nanoTime();
                long wake = Math.min(end, Math.min(nextTick, nextStep));
                if (now < wake) {
                    Thread.sleep(Math.max(1, (wake - now) / 1_000_000));
                    if (System.nanoTime() < wake) continue;
                }
                now = System.nanoTime();
                boolean atEnd = now >= end;
                if (atEnd) {
                    stopAll = true;
                    for (Worker w : all) w.join();
                    now = System.nanoTime();
                }
                interval = meter.drainLatency(interval);
                service = meter.drainService(service);
                total.add(interval);
                totalService.add(service);
                tickHist.add(interval);
                stepHist.add(interval);
                long count = meter.requests();
                int threads = active.size();

                if (now >= nextTick || atEnd) {
                    double secs = (now - lastTick) / 1e9;
                    if (!atEnd || secs >= 0.05) {
                        double rps = secs > 0 ? (count - lastCount) / secs : 0;
                        Double cold = Server.coldPercent(monitor);
                        double el = (now - start) / 1e9;
                        report.interval("[" + Report.fmt1(el) + "s] threads=" + threads
                                + " target_rps=" + (long) threads * o.rate + " rps=" + Report.fmt1(rps)
                                + " p50_us=" + Report.pct(tickHist, 50) + " p99_us=" + Report.pct(tickHist, 99)
                                + " nils=" + meter.nils() + " errors=" + meter.errors()
                                + " cold_percent=" + Server.coldText(cold),
                            el, threads, rps, tickHist, meter.errors(), meter.nils(), cold);
                    }
                    tickHist.reset();
                    lastTick = now;
                    lastCount = count;
                    while (nextTick <= now) nextTick += tick;
                }

                if (now >= nextStep) {                   // a full step ended (the run's end may close one)
                    double secs = (now - stepStart) / 1e9;
                    double achieved = (count - stepCount) / secs;
                    double target = (double) threads * o.rate;
                    long p99 = Report.pct(stepHist, 99);
                    lastStepRps = achieved;
                    lastStepThreads = threads;
                    lastStepHist = stepHist.copy();
                    String line = "step: threads=" + threads + " target_rps=" + Report.fmt1(target)
                        + " achieved_rps=" + Report.fmt1(achieved) + " p99_us=" + p99;
                    if (!atEnd) {
                        boolean wasSaturated = ramp.saturated();
                        Ramp.Action a = ramp.afterStep(threads, target, achieved, p99);
                        if (a == Ramp.Action.ADD) {
                            try {
                                addWorker(active, all, server.open(), now);
                                peak = Math.max(peak, active.size());
                                line += " -> add a thread (" + active.size() + ")";
                            } catch (Server.Unreachable e) {
                                meter.error("cannot open a connection for a new thread: " + e.getMessage());
                            }
                        } else if (a == Ramp.Action.REMOVE) {
                            active.remove(active.size() - 1).retire = true;
                            line += " -> server not keeping up (" + ramp.reason() + "): remove a thread ("
                                + active.size() + "), ramp ends";
                        } else if (ramp.saturated() && !wasSaturated) {
                            line += " -> server not keeping up (" + ramp.reason() + "), ramp ends";
                        }
                    }
                    Report.say(line);
                    stepHist.reset();
                    stepStart = now;
                    stepCount = count;
                    while (nextStep <= now) nextStep += stepNs;
                }

                if (atEnd) {
                    double seconds = (now - start) / 1e9;
                    int finalThreads = active.size();
                    boolean stepAtFinal = lastStepRps >= 0 && lastStepThreads == finalThreads;
                    double sustained = stepAtFinal ? lastStepRps : count / seconds;
                    Report.say("ramp: " + (ramp.saturated() ? "stopped " + ramp.reason()
                        : "not saturated (server kept up at every step)"));
                    Report.say("sustained_rps from " + (stepAtFinal ? "the last full step at " + finalThreads
                        + " threads" : "the whole run (no full step at the final thread count)"));
                    if (stepAtFinal) Report.say("last step latency_us: " + Report.percentiles(lastStepHist));
                    Report.say("service_time_us (pipeline round trip from its real send): "
                        + Report.percentiles(totalService));
                    Report.say("whole run: requests=" + count + " seconds=" + Report.fmt1(seconds)
                        + " rps=" + Report.fmt1(count / seconds));
                    Double cold = Server.coldPercent(monitor);
                    if (cold == null) Report.say("rock figures absent (stock Redis?): cold_percent=NA");
                    Report.say("SUMMARY mode=mode2 keys=" + ks.count() + " write_tenths=" + o.writeTenths
                        + " threads=" + finalThreads + " max_threads=" + peak
                        + " sustained_rps=" + Report.fmt1(sustained) + " " + Report.percentiles(total)
                        + " errors=" + meter.errors() + " nils=" + meter.nils()
                        + " cold_percent=" + Server.coldText(cold));
                    return meter.errors() == 0 ? 0 : 1;
                }
            }
        } finally {
            stopAll = true;
            for (Worker w : all) w.join();
        }
    }

    private void addWorker(List<Worker> active, List<Worker> all, Jedis conn, long scheduleStart) {
        Worker w = new Worker(all.size(), conn, scheduleStart);
        active.add(w);
        all.add(w);
        w.start();
    }
}
