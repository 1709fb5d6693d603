// Loader owns filling the server before a measured phase: FLUSHALL, then
// every key of the KeySpace written by --load-threads connections in
// pipelined batches (SET for mode1, SETEX with the key's warm-up TTL for
// mode2), with progress lines, stopping at the first error reply.
package io.redisrock.metric;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Pipeline;

public final class Loader {
    /** The load could not complete (an error reply or a lost connection). */
    public static final class LoadFailed extends Exception {
        public LoadFailed(String msg) { super(msg); }
    }

    private static final int BATCH = 200;           // commands per pipelined round trip

    private final Server server;
    private final KeySpace ks;
    private final int threads;
    private final double progressSeconds;
    private final long ttlMin, ttlMax;              // ttlMin <= 0: plain SET

    public Loader(Server server, KeySpace ks, int threads, double progressSeconds, long ttlMin, long ttlMax) {
        this.server = server;
        this.ks = ks;
        this.threads = threads;
        this.progressSeconds = progressSeconds;
        this.ttlMin = ttlMin;
        this.ttlMax = ttlMax;
    }

    /** FLUSHALL then write every key; returns the seconds the writing took. */
    public double run() throws LoadFailed, InterruptedException {
        try (Jedis admin = server.open()) {
            admin.flushAll();
        }
        String what = ttlMin > 0 ? "SETEX" : "SET";
        Report.say("loading " + ks.count() + " keys (" + what + ", " + threads + " connections, pipelined "
            + BATCH + ")");
        List<Jedis> conns = new ArrayList<>();
        try {
            int n = (int) Math.min(threads, Math.max(1, (ks.count() + BATCH - 1) / BATCH));
            for (int i = 0; i < n; i++) conns.add(server.open());
            return load(conns);
        } finally {
            for (Jedis j : conns) {
                try { j.close(); } catch (RuntimeException ignored) { }
            }
        }
    }

    private double load(List<Jedis> conns) throws LoadFailed, InterruptedException {
        AtomicLong cursor = new AtomicLong();
        AtomicLong written = new AtomicLong();
        AtomicReference<String> failure = new AtomicReference<>();
        List<Thread> workers = new ArrayList<>();
        long start = System.nanoTime();
        for (Jedis j : conns) {
            Thread t = new Thread(() -> {
                try {
                    long first;
                    while (failure.get() == null && (first = cursor.getAndAdd(BATCH)) < ks.count()) {
                        long end = Math.min(first + BATCH, ks.count());
                        Pipeline p = j.pipelined();
                        for (long i = first; i < end; i++) {
                            if (ttlMin > 0) p.setex(ks.key(i), ks.warmupTtl(i, ttlMin, ttlMax), ks.value(i));
                            else p.set(ks.key(i), ks.value(i));
                        }
                        List<Object> replies = p.syncAndReturnAll();
                        for (int r = 0; r < replies.size(); r++) {
                            if (replies.get(r) instanceof Exception e) {
                                failure.compareAndSet(null, "key " + ks.keyText(first + r) + ": " + e.getMessage());
                                return;
                            }
                        }
                        written.addAndGet(end - first);
                    }
                } catch (RuntimeException e) {
                    failure.compareAndSet(null, Server.rootMessage(e));
                }
            }, "load-" + workers.size());
            workers.add(t);
            t.start();
        }
        long nextReport = start + (long) (progressSeconds * 1e9);
        for (Thread t : workers) {
            while (t.isAlive()) {
                long wait = Math.max(1, (nextReport - System.nanoTime()) / 1_000_000);
                t.join(wait);
                if (System.nanoTime() >= nextReport) {
                    double el = (System.nanoTime() - start) / 1e9;
                    long w = written.get();
                    Report.say("loading: " + w + "/" + ks.count() + " keys, " + Report.fmt1(el) + "s, "
                        + Report.fmt1(w / el) + " keys/s");
                    nextReport += (long) (progressSeconds * 1e9);
                }
            }
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        if (failure.get() != null) {
            String why = failure.get();
            if (why.contains("OOM"))
                why += " (hint: keys and their TTLs always stay in RAM, on redis-rock too: raise maxmemory or load fewer keys)";
            throw new LoadFailed(why);
        }
        Report.say("loaded " + written.get() + " keys in " + Report.fmt1(seconds) + "s ("
            + Report.fmt1(written.get() / seconds) + " keys/s)");
        return seconds;
    }
}
