// Server owns how the harness reaches redis: opening connections with the
// harness's timeouts, and reading the rock tier's cold share (INFO rock),
// which is simply absent on stock Redis.
package io.redisrock.metric;

import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.exceptions.JedisException;

public final class Server {
    /** Raised when the server cannot be reached at all: a usage/connection error, exit 2. */
    public static final class Unreachable extends RuntimeException {
        public Unreachable(String msg) { super(msg); }
    }

    private final HostAndPort address;
    private final JedisClientConfig config;

    public Server(String host, int port) {
        this.address = new HostAndPort(host, port);
        // Generous read timeout: a cold GET may wait on the SSD, and FLUSHALL or
        // a big pipelined batch on a busy 2-core box can take seconds.
        this.config = DefaultJedisClientConfig.builder()
            .connectionTimeoutMillis(5_000)
            .socketTimeoutMillis(60_000)
            .clientName("redis-rock-metric")
            .build();
    }

    public String address() { return address.toString(); }

    /** A connected, PINGed connection; Unreachable when that fails. */
    public Jedis open() {
        Jedis j = null;
        try {
            j = new Jedis(address, config);
            j.ping();
            return j;
        } catch (JedisException e) {
            if (j != null) {
                try { j.close(); } catch (RuntimeException ignored) { }
            }
            throw new Unreachable("cannot reach redis at " + address + ": " + rootMessage(e));
        }
    }

    static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) t = t.getCause();
        String m = t.getMessage();
        if (t != e && e.getMessage() != null && m != null && !e.getMessage().contains(m))
            return e.getMessage() + " (" + m + ")";
        return m != null ? m : t.toString();
    }

    /**
     * The cold share in percent from INFO rock (field rock_cold_percent), or
     * null when the server has no rock section (stock Redis) or cannot answer.
     */
    public static Double coldPercent(Jedis j) {
        String info;
        try {
            info = j.info("rock");
        } catch (JedisException e) {
            return null;
        }
        for (String line : info.split("\r?\n")) {
            if (line.startsWith("rock_cold_percent:")) {
                try {
                    return Double.parseDouble(line.substring("rock_cold_percent:".length()).trim());
                } catch (NumberFormatException e) {
                    return null;
                }
            }
        }
        return null;
    }

    public static String coldText(Double pct) {
        return pct == null ? "NA" : Report.fmt1(pct);
    }
}
