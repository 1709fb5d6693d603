// Ramp owns mode2's thread-count decisions at the end of each step: add a
// thread while the server keeps up; the first step that misses the target
// rate (below 95%) or the p99 limit removes one thread and ends the ramp.
package io.redisrock.metric;

public final class Ramp {
    public enum Action { ADD, REMOVE, HOLD }

    public static final double KEEP_UP = 0.95;

    private final int maxThreads;
    private final long p99LimitUs;
    private boolean saturated;
    private String reason = "";

    public Ramp(int maxThreads, long p99LimitUs) {
        this.maxThreads = maxThreads;
        this.p99LimitUs = p99LimitUs;
    }

    public boolean saturated() { return saturated; }

    /** Why the ramp stopped, or "" while it is still going. */
    public String reason() { return reason; }

    /** Decision after a full step run at {@code threads} threads. */
    public Action afterStep(int threads, double targetRps, double achievedRps, long p99Us) {
        if (saturated) return Action.HOLD;
        boolean slow = achievedRps < KEEP_UP * targetRps;
        boolean late = p99Us > p99LimitUs;
        if (slow || late) {
            saturated = true;
            reason = "at " + threads + " threads: " + (slow ? "achieved " + Report.fmt1(achievedRps)
                + " rps < 95% of target " + Report.fmt1(targetRps) : "")
                + (slow && late ? ", " : "") + (late ? "p99 " + p99Us + "us > limit " + p99LimitUs + "us" : "");
            return threads > 1 ? Action.REMOVE : Action.HOLD;
        }
        return threads < maxThreads ? Action.ADD : Action.HOLD;
    }
}
