// Meter owns what the worker threads measure: latencies (HdrHistogram
// Recorders, safe to record into from many threads and drained per interval
// by the main thread), request/nil/error counts, and printing the first few
// errors.
package io.redisrock.metric;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

public final class Meter {
    public static final int ERRORS_PRINTED = 10;

    private final Recorder latency = new Recorder(3);   // microseconds, auto-resizing
    private final Recorder service = new Recorder(3);
    private final LongAdder requests = new LongAdder();
    private final LongAdder nils = new LongAdder();
    private final AtomicLong errors = new AtomicLong();

    /** The latency that is reported (mode2: measured from the intended start). */
    public void latency(long micros) { latency.recordValue(Math.max(0, micros)); }

    /** mode2 only: the bare round trip of a pipeline, from when it was really sent. */
    public void service(long micros) { service.recordValue(Math.max(0, micros)); }

    public void done(long n) { requests.add(n); }
    public void nil() { nils.increment(); }

    public long requests() { return requests.sum(); }
    public long nils() { return nils.sum(); }
    public long errors() { return errors.get(); }

    /** Counts an error; the first ERRORS_PRINTED are printed. */
    public void error(String what) {
        long n = errors.incrementAndGet();
        if (n <= ERRORS_PRINTED) {
            Report.say("ERROR " + what);
            if (n == ERRORS_PRINTED) Report.say("(further errors are counted, not printed)");
        }
    }

    /** A validation failure: the reply was not the value regenerated from (seed, index). */
    public void mismatch(KeySpace ks, long index, byte[] got) {
        String gotLen = got == null ? "nil" : Integer.toString(got.length);
        error("value mismatch: key=" + ks.keyText(index) + " expected_len=" + ks.valueLength(index)
            + " got_len=" + gotLen);
    }

    /** Latencies recorded since the last call (the recycled histogram may be null). */
    public Histogram drainLatency(Histogram recycle) { return latency.getIntervalHistogram(recycle); }
    public Histogram drainService(Histogram recycle) { return service.getIntervalHistogram(recycle); }
}
