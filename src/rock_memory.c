/* rock_memory.c -- redis-rock: the RSS that maxmemory does not see.
 *
 * Keyspace layer (with rock_evict.c, which moves values out under
 * maxmemory). Moving values out keeps used_memory under maxmemory, but RSS
 * also holds what the allocator keeps after those values are freed; this
 * file owns the three duties that hold RSS to the tier's bound,
 * maxmemory x 1.15 + 64 MB (docs/memory.md, "The RSS bound"):
 *   - freed pages: jemalloc's dirty pages given back at once over a limit
 *     (rockPurgeCheck(), the purge itself on the writer thread);
 *   - fragmentation: upstream's active defrag started and driven by the
 *     fragmented bytes over an allowance (rockDefragEnabled(),
 *     rockDefragEffort(), patch 0037), and the bound itself (rockRssBound());
 *   - forks: a fork no client waits on holds while defrag takes back a
 *     burst, so the child does not keep those pages (rockForkWait(),
 *     patches 0038 and 0039).
 * It uses the store (is RocksDB open), the writer (its purge job) and
 * upstream's allocator figures; nothing above it. */

#include "server.h"

/* ---------------------------------------------------------------------------
 * Freed pages
 * ------------------------------------------------------------------------ */

/* Moving values out frees memory all the time, and jemalloc keeps freed
 * pages resident ("dirty") until they age out (dirty_decay_ms, rock.c): in
 * bursts (a restart's load, a reload of the dataset, a maxmemory cut) tens
 * of MB of them even at 100 ms of aging, RSS that maxmemory does not see.
 * Over a limit, max(maxmemory / 16, 4 MB), the writer thread gives them all
 * back at once. Checked every 100 ms from rockCron() (which the loading
 * path runs too: rockWriteTick()). */
#define ROCK_PURGE_CHECK_US 100000
#define ROCK_PURGE_MIN_BYTES (4 << 20)

void rockPurgeCheck(void) {
#if defined(USE_JEMALLOC)
    static monotime last;
    if (!rock_store.db || !server.maxmemory) return;
    monotime now = getMonotonicUs();
    if (now - last < ROCK_PURGE_CHECK_US) return;
    last = now;

    /* jemalloc's statistics as serverCron() (whileBlockedCron() while
     * loading) last refreshed them, at most 100 ms ago: no refresh here. */
    static size_t page;
    size_t pdirty = 0, sz = sizeof(page);
    if (page == 0 && je_mallctl("arenas.page", &page, &sz, NULL, 0) != 0) return;
    sz = sizeof(pdirty);
    if (je_mallctl("stats.arenas." STRINGIFY(MALLCTL_ARENAS_ALL) ".pdirty", &pdirty, &sz, NULL, 0) != 0) return;
    size_t limit = server.maxmemory / 16;
    if (limit < ROCK_PURGE_MIN_BYTES) limit = ROCK_PURGE_MIN_BYTES;
    if (pdirty * page > limit) rockWriteRequestPurge();
#endif
}

/* ---------------------------------------------------------------------------
 * Fragmentation
 * ------------------------------------------------------------------------ */

/* Keys stay in RAM while their values move out, so the slabs of the values'
 * size classes are left thinly used: a value moved out frees its slot, and
 * with memory at the limit nothing refills it. A big collection paged in
 * and moved out again (its thousands of small allocations scattered into
 * the holes, room made for it by moving other values out) leaves 20-35 MB
 * of pages held for freed slots at a 48 MB maxmemory within 2-3 s (soak).
 * That is RSS maxmemory does not see. Upstream's active defrag moves live
 * allocations out of sparse slabs, but its start check runs once a second,
 * at percentages of the heap, and it is off by default. With rock-defrag
 * (default yes) the tier starts it whatever `activedefrag` says, checks
 * every 100 ms (each serverCron() call), and asks for an effort that grows
 * with the fragmented bytes over an allowance: 5% of the event loop just
 * over it, 25% (upstream's default maximum, 25 ms slices at hz 10) from
 * twice it.
 *
 * The allowance follows the RSS bound the tier promises, maxmemory x 1.15
 * + 64 MB (docs/memory.md, "The RSS bound"): while RSS (serverCron()'s
 * sample, 100 ms old at most) is more than 16 MB under it, max(maxmemory
 * / 4, 8 MB); within 16 MB of the bound, 8 MB, at the full 25%: a burst
 * is taken back before RSS gets there. Steady eviction keeps 10-20% of
 * maxmemory fragmented, and defrag can't win against it: a scan of a
 * 300,000-key keyspace at 25% takes 3-4 s and leaves as much behind as it
 * found, for 10-15% more event-loop CPU per request (a first cut started
 * at a 16th of maxmemory, and at 4 MB within 32 MB of the bound). So defrag
 * is kept for bursts and for RSS near the bound. defrag.c takes the larger
 * of this and upstream's own effort, and as upstream does, never runs
 * while a forked child exists (moving memory then would copy pages the
 * child shares). */
#define ROCK_DEFRAG_ALLOWANCE_MIN (8 << 20)
#define ROCK_DEFRAG_NEAR_ALLOWANCE (8 << 20)
#define ROCK_DEFRAG_NEAR_MARGIN (16 << 20)
#define ROCK_DEFRAG_MIN_PCT 5
#define ROCK_DEFRAG_MAX_PCT 25

int rockDefragEnabled(void) {
    return rock.defrag && rock_store.db && server.maxmemory;
}

/* The RSS the tier promises to stay under (the soak's and the docs' bound). */
size_t rockRssBound(void) {
    return server.maxmemory + server.maxmemory / 100 * 15 + ((size_t)64 << 20);
}

/* The CPU share (percent of each cron period) active defrag should take
 * for `frag_bytes` (jemalloc's active less allocated bytes); 0: none. */
int rockDefragEffort(size_t frag_bytes) {
    if (!rockDefragEnabled()) return 0;
    if (server.cron_malloc_stats.process_rss + ROCK_DEFRAG_NEAR_MARGIN > rockRssBound())
        return frag_bytes > ROCK_DEFRAG_NEAR_ALLOWANCE ? ROCK_DEFRAG_MAX_PCT : 0;
    size_t allowance = server.maxmemory / 4;
    if (allowance < ROCK_DEFRAG_ALLOWANCE_MIN) allowance = ROCK_DEFRAG_ALLOWANCE_MIN;
    if (frag_bytes <= allowance) return 0;
    double over = (double)(frag_bytes - allowance) / allowance; /* 0 .. 1 at 2x */
    int pct = ROCK_DEFRAG_MIN_PCT + (int)(over * (ROCK_DEFRAG_MAX_PCT - ROCK_DEFRAG_MIN_PCT));
    return pct > ROCK_DEFRAG_MAX_PCT ? ROCK_DEFRAG_MAX_PCT : pct;
}

/* A forked child shares the heap as it is at the fork, and no defrag runs
 * while it lives: pages a load, a read-back or a burst of page-ins left
 * holding freed slots stay resident for the child's whole life (the soak's
 * restart window: 20-38 MB of them when a replica's full-sync child forked
 * during the read-back after a restart). A fork no client waits on (a
 * replica's full sync, a save point's BGSAVE, an automatic AOF rewrite)
 * asks here first (`replication` set for a replica's), and waits while
 * fragmentation is over the tier's allowance, which is what has active
 * defrag run, for at most ROCK_FORK_WAIT_MAX_MS from the first ask; then it
 * goes ahead whatever. A BGSAVE or BGREWRITEAOF a client sends never
 * waits, nor does a fork while loading or after a failed background save
 * (a good save first), nor any without active defrag (HAVE_DEFRAG).
 *
 * The asks for one fork wanted make an episode, over when a fork starts or
 * when no ask came for ROCK_FORK_ASK_GAP_MS plus repl-diskless-sync-delay
 * (replicationCron() asks once a second, after that delay when it applies;
 * serverCron() ten times a second). A replica's full sync that asked in the
 * episode goes first: save points and automatic rewrites wait for it, else
 * the first of their asks after the hold lifts would fork and the replica,
 * which can't join a child that is not for replication, would wait for the
 * whole of it. */
#define ROCK_FORK_WAIT_MAX_MS 5000
#define ROCK_FORK_ASK_GAP_MS 3000

int rockForkWait(int replication) {
#ifndef HAVE_DEFRAG
    UNUSED(replication);
    return 0;
#else
    static long long asked_forks = -1; /* stat_total_forks at the first ask */
    static monotime first_ask, last_ask, last_replica_ask;
    static int logged;
    monotime now = getMonotonicUs();
    monotime gap = ((monotime)ROCK_FORK_ASK_GAP_MS + (monotime)server.repl_diskless_sync_delay * 1000) * 1000;
    if (asked_forks != server.stat_total_forks || now - last_ask > gap) {
        asked_forks = server.stat_total_forks;
        first_ask = now;
        last_replica_ask = 0;
        logged = 0;
    }
    last_ask = now;
    if (replication) last_replica_ask = now;
    else if (last_replica_ask && now - last_replica_ask <= gap) return 1;
    if (server.loading || server.lastbgsave_status != C_OK) return 0;
    size_t active = server.cron_malloc_stats.allocator_active;
    size_t allocated = server.cron_malloc_stats.allocator_allocated;
    if (active <= allocated || !rockDefragEffort(active - allocated)) return 0;
    if (now - first_ask >= (monotime)ROCK_FORK_WAIT_MAX_MS * 1000) return 0;
    if (!logged) {
        logged = 1;
        rock_ks_stats.fork_waits++;
        serverLog(LL_NOTICE, "Holding a background fork for at most %d ms while active defrag takes back "
                  "%zu MB of fragmented memory", ROCK_FORK_WAIT_MAX_MS, (active - allocated) >> 20);
    }
    return 1;
#endif
}
