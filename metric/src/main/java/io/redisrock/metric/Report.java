// Report owns the harness's output: number formatting (always '.' decimals),
// progress lines on stdout, the optional per-interval CSV file, and the
// final SUMMARY line.
package io.redisrock.metric;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import org.HdrHistogram.Histogram;

public final class Report implements AutoCloseable {
    public static final String CSV_HEADER = "elapsed_s,threads,rps,p50_us,p95_us,p99_us,p999_us,errors,nils,cold_percent,unix_ms";

    private final BufferedWriter csv;

    public Report(String csvFile) throws IOException {
        if (csvFile == null) {
            csv = null;
        } else {
            csv = Files.newBufferedWriter(Path.of(csvFile), StandardCharsets.UTF_8);
            csv.write(CSV_HEADER);
            csv.newLine();
            csv.flush();
        }
    }

    public static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    public static String fmt1(double d) { return String.format(Locale.ROOT, "%.1f", d); }

    public static long pct(Histogram h, double percentile) {
        return h.getTotalCount() == 0 ? 0 : h.getValueAtPercentile(percentile);
    }

    /** p50/p95/p99/p99.9 as "p50_us=.. p95_us=.. p99_us=.. p999_us=..". */
    public static String percentiles(Histogram h) {
        return "p50_us=" + pct(h, 50) + " p95_us=" + pct(h, 95) + " p99_us=" + pct(h, 99)
            + " p999_us=" + pct(h, 99.9);
    }

    /** One interval: a progress line (prefix supplied by the mode) and a CSV row. */
    public void interval(String line, double elapsed, int threads, double rps, Histogram h,
                         long errors, Long nils, Double cold) {
        say(line);
        if (csv == null) return;
        String row = String.join(",",
            fmt1(elapsed), Integer.toString(threads), fmt1(rps),
            Long.toString(pct(h, 50)), Long.toString(pct(h, 95)), Long.toString(pct(h, 99)),
            Long.toString(pct(h, 99.9)), Long.toString(errors),
            nils == null ? "" : Long.toString(nils),
            cold == null ? "" : fmt1(cold),
            /* wall clock at the interval's end: lines the trace up with
             * the server's own logs (RocksDB's flush/compaction events) */
            Long.toString(System.currentTimeMillis()));
        try {
            csv.write(row);
            csv.newLine();
            csv.flush();
        } catch (IOException e) {
            say("warning: cannot write the CSV file: " + e.getMessage());
        }
    }

    @Override
    public void close() throws IOException {
        if (csv != null) csv.close();
    }
}
