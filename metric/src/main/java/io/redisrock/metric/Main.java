// Main owns the entry point: parse the command line, run mode1 or mode2, and
// map the outcome to the exit status (0 no error, 1 validation or command
// errors, 2 usage or connection errors), with no stack trace for the
// expected failures.
package io.redisrock.metric;

import java.io.IOException;
import redis.clients.jedis.exceptions.JedisException;

public final class Main {
    private Main() { }

    public static void main(String[] args) {
        int status = run(args);
        System.out.flush();
        System.exit(status);
    }

    static int run(String[] args) {
        Options o;
        try {
            o = Options.parse(args);
        } catch (Options.UsageException e) {
            if (e.getMessage() == null) {        // --help
                System.out.println(Options.USAGE);
                return 0;
            }
            System.err.println("error: " + e.getMessage());
            System.err.println(Options.USAGE);
            return 2;
        }
        try {
            return o.mode == Options.Mode.MODE1 ? new Mode1(o).run() : new Mode2(o).run();
        } catch (Server.Unreachable e) {
            System.err.println("error: " + e.getMessage());
            return 2;
        } catch (JedisException e) {
            System.err.println("error: redis at " + o.host + ":" + o.port + ": " + Server.rootMessage(e));
            return 2;
        } catch (IOException e) {
            System.err.println("error: " + e.getMessage());
            return 2;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            System.err.println("error: interrupted");
            return 2;
        } catch (Exception e) {
            System.err.println("error: " + e);
            return 2;
        }
    }
}
