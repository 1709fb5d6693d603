/* rock_report.c -- redis-rock: what operators see of the SSD tier.
 *
 * Layer 4 (top; docs/architecture.md, "Layers").
 *
 * This file owns the ROCK command (REPORT, EVICT, LOAD, STATUS, HELP), the
 * `INFO rock` section and the tier's counters and read-latency histogram.
 * Both render the same list of figures, collected once by
 * rockCollectFigures(): REPORT names a figure `name`, INFO names it
 * `rock_name`. Adding a figure to the list adds it to both. */

#include "server.h"
#include "rock_readers.h"

#include <dirent.h>
#include <math.h>

typedef struct rockFigure {
    const char *name;
    long long value;
    double percent;     /* used instead of value when is_percent (a percent
                         * or a ratio: printed with two decimals) */
    int is_percent;
} rockFigure;

#define ROCK_MAX_FIGURES 128

/* ---------------------------------------------------------------------------
 * Counters and latency
 * ------------------------------------------------------------------------ */

/* Bytes RocksDB's background threads (threads named rocksdb:*, which run
 * its flushes and compactions and write its blob files) have written to
 * disk: the write_bytes of each one's /proc/self/task/TID/io. With the WAL
 * off and no other writes of RocksDB's own, that is every byte RocksDB
 * writes. -1 when /proc can't tell. */
static long long rockBackgroundWriteBytes(void) {
    DIR *d = opendir("/proc/self/task");
    if (d == NULL) return -1;
    long long sum = 0;
    int found = 0;
    struct dirent *e;
    char path[64], buf[512];
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
        FILE *fp = fopen(path, "r");
        if (fp == NULL) continue;
        int ours = fgets(buf, sizeof(buf), fp) && strncmp(buf, "rocksdb", 7) == 0;
        fclose(fp);
        if (!ours) continue;
        snprintf(path, sizeof(path), "/proc/self/task/%s/io", e->d_name);
        if ((fp = fopen(path, "r")) == NULL) continue;
        while (fgets(buf, sizeof(buf), fp)) {
            if (strncmp(buf, "write_bytes:", 12) == 0) {
                sum += strtoll(buf + 12, NULL, 10);
                found = 1;
            }
        }
        fclose(fp);
    }
    closedir(d);
    return found ? sum : -1;
}

/* RocksDB's threads' disk writes at the last CONFIG RESETSTAT. */
static long long rock_bg_write_base;

/* Every layer's counters added up. */
static void rockStatsTotal(rockStats *s) {
    const rockStats *parts[3] = {&rock_store_stats, &rock_write_stats, &rock_ks_stats};
    long long *sum = (long long *)s;
    memset(s, 0, sizeof(*s));
    for (int p = 0; p < 3; p++) {
        const long long *v = (const long long *)parts[p];
        for (size_t i = 0; i < sizeof(*s) / sizeof(long long); i++) sum[i] += v[i];
    }
}

/* CONFIG RESETSTAT. */
void rockResetStats(void) {
    rockStoreResetStats();
    rockWriteResetStats();
    rockKeysResetStats();
    rockSizingResetStats();
    /* At start-up (resetServerStats()) RocksDB has no threads yet: 0. */
    long long bg = rockBackgroundWriteBytes();
    rock_bg_write_base = bg > 0 ? bg : 0;
    for (int i = 0; i < ROCK_BLK_COUNTS; i++) atomicSet(rock_store.blocks[i], 0);
    rockReadLatencyReset();
}

/* A size the model suggests, raised to the maxmemory floor: under it the
 * policy deletes keys or refuses writes, whatever the model says of reads. */
static long long rockSizingOverFloor(long long size) {
    long long floor = rockFloor();
    return size < floor ? floor : size;
}

static int rockCollectFigures(rockFigure *f) {
    int n = 0;
    rockStats s;
    if (rock_store.db) rockEvictCountPolicyDeletes();
    rockStatsTotal(&s);
    long long clean_table, clean = rockCleanKeys(&clean_table);
    long long keys = 0, expires = 0, cold = rockColdKeys(), stale = 0, split = 0, cold_sum = 0;
    for (int j = 0; j < server.dbnum; j++) {
        keys += dictSize(server.db[j].dict);
        expires += dictSize(server.db[j].expires);
        if (rock_ks.dbs) {
            cold_sum += rock_ks.dbs[j].cold;
            stale += dictSize(rock_ks.dbs[j].stale);
            split += dictSize(rock_ks.dbs[j].split);
        }
    }
    /* The total every command asks for is kept apart from the per-db
     * counts: every ROCK REPORT and INFO checks they agree (a drift is a
     * bug: logged, counted in rock_errors, which the tests and the soak
     * require to be 0, and mended). */
    if (rock_ks.dbs && cold_sum != cold) {
        serverLog(LL_WARNING, "rock: the cold-key total (%lld) drifted from the per-db counts (%lld); mended",
                  cold, cold_sum);
        rock_ks.cold = cold = cold_sum;
        rock_ks_stats.errors++;
    }
    long long memtables = rockStoreProperty("rocksdb.cur-size-all-mem-tables");
    long long memtables_all = rockStoreProperty("rocksdb.size-all-mem-tables");
    long long pinned = memtables_all > memtables ? memtables_all - memtables : 0;
    long long readers = rockStoreProperty("rocksdb.estimate-table-readers-mem");
    long long cache = rock_store.cache ? (long long)rocksdb_cache_get_usage(rock_store.cache) : 0;

    f[n++] = (rockFigure){"enabled", rock_store.db != NULL};
    f[n++] = (rockFigure){"keys", keys};
    f[n++] = (rockFigure){"expires", expires};
    f[n++] = (rockFigure){"cold_keys", cold};
    f[n++] = (rockFigure){"cold_percent", 0, keys ? 100.0 * cold / keys : 0, 1};
    f[n++] = (rockFigure){"hot_clean_keys", clean};
    f[n++] = (rockFigure){"hot_clean_table_bytes", clean_table};
    f[n++] = (rockFigure){"stale_records", stale};
    f[n++] = (rockFigure){"evictions", s.evictions};
    f[n++] = (rockFigure){"clean_drops", s.clean_drops};
    f[n++] = (rockFigure){"external_overshoots", s.external_overshoots};
    f[n++] = (rockFigure){"maxmemory_floor", rockFloor()};
    f[n++] = (rockFigure){"maxmemory_floor_walks", rockFloorWalks()};
    f[n++] = (rockFigure){"nothing_movable_deletes", s.nothing_movable_deletes};
    f[n++] = (rockFigure){"eviction_samples", s.eviction_samples};
    f[n++] = (rockFigure){"fork_waits", s.fork_waits};
    f[n++] = (rockFigure){"loads", s.loads};
    f[n++] = (rockFigure){"sync_loads", s.sync_loads};
    f[n++] = (rockFigure){"reads", s.reads};
    f[n++] = (rockFigure){"read_bytes", s.read_bytes};
    f[n++] = (rockFigure){"writes", s.writes};
    f[n++] = (rockFigure){"write_bytes", s.write_bytes};
    f[n++] = (rockFigure){"lzf_skipped", s.lzf_skipped};
    f[n++] = (rockFigure){"deletes", s.deletes};
    f[n++] = (rockFigure){"split_keys", split};
    f[n++] = (rockFigure){"split_writes", s.split_writes};
    f[n++] = (rockFigure){"element_writes", s.element_writes};
    f[n++] = (rockFigure){"split_loads", s.split_loads};
    f[n++] = (rockFigure){"split_renames", s.split_renames};
    f[n++] = (rockFigure){"dirty_flushes", s.dirty_flushes};
    f[n++] = (rockFigure){"element_reads", s.element_reads};
    f[n++] = (rockFigure){"point_reads", s.point_reads};
    f[n++] = (rockFigure){"loading_spills", s.loading_spills};
    f[n++] = (rockFigure){"loading_peak_memory", s.loading_peak_memory};
    f[n++] = (rockFigure){"warm_values_reused", s.warm_reused};
    f[n++] = (rockFigure){"warm_records_dropped", s.warm_dropped};
    long long cp_bytes, cp_own;
    rockWarmCheckpointBytes(&cp_bytes, &cp_own);
    f[n++] = (rockFigure){"warm_checkpoint_bytes", cp_bytes};
    f[n++] = (rockFigure){"warm_checkpoint_own_bytes", cp_own};
    f[n++] = (rockFigure){"warm_saves", s.warm_saves};
    f[n++] = (rockFigure){"warm_save_failures", s.warm_save_failures};
    f[n++] = (rockFigure){"value_hits_ram", s.value_hits_ram};
    f[n++] = (rockFigure){"value_hits_disk", s.value_hits_disk};
    const char *why;
    int ready = rockSizingReady(&why);
    f[n++] = (rockFigure){"sizing_maxmemory_90", ready ? rockSizingOverFloor(rockSizingFor(0.90)) : -1};
    f[n++] = (rockFigure){"sizing_maxmemory_99", ready ? rockSizingOverFloor(rockSizingFor(0.99)) : -1};
    f[n++] = (rockFigure){"sizing_maxmemory_999", ready ? rockSizingOverFloor(rockSizingFor(0.999)) : -1};
    f[n++] = (rockFigure){"sizing_sampled_keys", rockSizingKeys()};
    f[n++] = (rockFigure){"sizing_sample_ppm", (long long)(1e6 * rockSizingRate())};
    f[n++] = (rockFigure){"sizing_memory", (long long)rockSizingMemory()};
    f[n++] = (rockFigure){"sizing_estimate_ticks", rockSizingEstimateTicks()};
    f[n++] = (rockFigure){"access_updates", s.access_updates};
    f[n++] = (rockFigure){"errors", s.errors};
    f[n++] = (rockFigure){"write_batches", s.write_batches};
    f[n++] = (rockFigure){"write_errors", s.write_errors};
    f[n++] = (rockFigure){"master_resyncs", s.master_resyncs};
    f[n++] = (rockFigure){"write_waits", s.write_waits};
    f[n++] = (rockFigure){"write_postponed", s.write_postponed};
    f[n++] = (rockFigure){"read_ahead", s.read_ahead};
    f[n++] = (rockFigure){"read_ahead_dropped", s.read_ahead_dropped};
    f[n++] = (rockFigure){"reads_in_flight", rockReadsInFlight()};
    f[n++] = (rockFigure){"waiting_clients", server.blocked_clients_by_type[BLOCKED_ROCK]};
    f[n++] = (rockFigure){"pending_writes", rockPendingCount()};
    f[n++] = (rockFigure){"pending_bytes", rockPendingBytes()};
    f[n++] = (rockFigure){"queued_deletes", rockQueuedDeletes()};
    f[n++] = (rockFigure){"queued_delete_bytes", rockQueuedDeleteBytes()};
    long long trims, trim_us, purges, purge_us;
    rockWriteTrimStats(&trims, &trim_us, &purges, &purge_us);
    f[n++] = (rockFigure){"malloc_trims", trims};
    f[n++] = (rockFigure){"malloc_trim_us", trim_us};
    f[n++] = (rockFigure){"jemalloc_purges", purges};
    f[n++] = (rockFigure){"jemalloc_purge_us", purge_us};
    long long glibc_in_use, glibc_system, glibc_measures, glibc_measure_us;
    rockWriteGlibcHeap(&glibc_in_use, &glibc_system, &glibc_measures, &glibc_measure_us);
    f[n++] = (rockFigure){"glibc_heap_in_use", glibc_in_use};
    f[n++] = (rockFigure){"glibc_heap_system", glibc_system};
    f[n++] = (rockFigure){"glibc_heap_measures", glibc_measures};
    f[n++] = (rockFigure){"glibc_heap_measure_us", glibc_measure_us};
    f[n++] = (rockFigure){"fork_stream_refreshes", rockForkStreamRefreshes()};
    f[n++] = (rockFigure){"pending_hits", s.pending_hits};
    f[n++] = (rockFigure){"store_resets", s.store_resets};
    f[n++] = (rockFigure){"disk_full", rockDiskFull() || rockDiskLow()};
    f[n++] = (rockFigure){"read_latency_p50_us", rockReadLatencyPercentile(50.0)};
    f[n++] = (rockFigure){"read_latency_p99_us", rockReadLatencyPercentile(99.0)};
    f[n++] = (rockFigure){"read_latency_p999_us", rockReadLatencyPercentile(99.9)};
    f[n++] = (rockFigure){"used_memory", (long long)zmalloc_used_memory()};
    f[n++] = (rockFigure){"rss_bound", server.maxmemory ? (long long)rockRssBound() : 0};
    f[n++] = (rockFigure){"rocksdb_memory", memtables + pinned + readers + cache};
    f[n++] = (rockFigure){"rocksdb_memtables", memtables};
    f[n++] = (rockFigure){"rocksdb_memtables_pinned", pinned};
    f[n++] = (rockFigure){"rocksdb_block_cache_usage", cache};
    f[n++] = (rockFigure){"rocksdb_block_cache_capacity", rock_store.cache ? (long long)rocksdb_cache_get_capacity(rock_store.cache) : 0};
    /* Blocks held by reads and iterators in flight: over the capacity,
     * the cache keeps them until they are released. */
    f[n++] = (rockFigure){"rocksdb_block_cache_pinned", rock_store.cache ? (long long)rocksdb_cache_get_pinned_usage(rock_store.cache) : 0};
    f[n++] = (rockFigure){"rocksdb_table_readers", readers};
    for (int i = 0; i < ROCK_BLK_COUNTS; i++) {
        long long v;
        atomicGet(rock_store.blocks[i], v);
        f[n++] = (rockFigure){rockBlockCountName(i), v};
    }
    /* Disk and write amplification. rocksdb_bytes_written: what RocksDB
     * wrote to disk since the last CONFIG RESETSTAT (flushes, compactions,
     * blob files); write_amp: that over the record bytes handed to it
     * (write_bytes). space_amp: disk bytes over the live records' bytes,
     * estimated as (cold + hot-clean keys) x the mean record size written
     * since the reset (stale records are garbage, not live). 0 when not
     * known yet. */
    long long disk = rockStoreProperty("rocksdb.total-sst-files-size") + rockStoreProperty("rocksdb.total-blob-file-size");
    long long bg = rockBackgroundWriteBytes();
    long long bg_written = bg >= rock_bg_write_base ? bg - rock_bg_write_base : 0;
    double live = s.writes ? (double)(cold + clean) * s.write_bytes / s.writes : 0;
    f[n++] = (rockFigure){"rocksdb_disk_bytes", disk};
    f[n++] = (rockFigure){"rocksdb_blob_files", rockStoreProperty("rocksdb.num-blob-files")};
    long long compacted, compacting;
    rockCompactStats(&compacted, &compacting);
    f[n++] = (rockFigure){"flushed_ranges_compacted", compacted};
    f[n++] = (rockFigure){"flushed_ranges_waiting", compacting};
    f[n++] = (rockFigure){"rocksdb_bytes_written", bg_written};
    f[n++] = (rockFigure){"write_amp", 0, s.write_bytes ? (double)bg_written / s.write_bytes : 0, 1};
    f[n++] = (rockFigure){"space_amp", 0, live > 0 ? disk / live : 0, 1};
    f[n++] = (rockFigure){"rocksdb_estimated_keys", rockStoreProperty("rocksdb.estimate-num-keys")};
    f[n++] = (rockFigure){"rocksdb_write_stopped", rockStoreProperty("rocksdb.is-write-stopped")};
    f[n++] = (rockFigure){"rocksdb_l0_files", rockStoreL0Files()};
    int l0_applied;
    atomicGet(rock_store.l0_applied, l0_applied);
    f[n++] = (rockFigure){"rocksdb_l0_compaction_trigger", rock_store.db ? l0_applied : 0};
    f[n++] = (rockFigure){"rocksdb_delayed_write_rate", rockStoreProperty("rocksdb.actual-delayed-write-rate")};
    f[n++] = (rockFigure){"rocksdb_pending_compaction_bytes", rockStoreProperty("rocksdb.estimate-pending-compaction-bytes")};
    f[n++] = (rockFigure){"rocksdb_running_compactions", rockStoreProperty("rocksdb.num-running-compactions")};
    f[n++] = (rockFigure){"rocksdb_running_flushes", rockStoreProperty("rocksdb.num-running-flushes")};
    f[n++] = (rockFigure){"rocksdb_snapshots", rockStoreProperty("rocksdb.num-snapshots")};
    serverAssert(n <= ROCK_MAX_FIGURES);
    return n;
}

/* Whether values can move to disk now, and if not, why. */
static const char *rockEvictionState(void) {
    if (!rock_store.db) return "disabled";
    if (rockDiskFull()) return "stopped (rock-dir is out of space)";
    if (rockWriteError()) return "stopped (RocksDB writes fail)";
    if (rockDiskLow()) return "stopped (free space on rock-dir under rock-min-free-disk)";
    if (rockEvictNothingMovable()) return "nothing-movable";
    return "running";
}

/* ---------------------------------------------------------------------------
 * INFO rock
 * ------------------------------------------------------------------------ */

sds rockGenInfoString(sds info) {
    rockFigure f[ROCK_MAX_FIGURES];
    int n = rockCollectFigures(f);

    info = sdscat(info, "# Rock\r\n");
    info = sdscatprintf(info, "rock_dir:%s\r\n", rock_store.abs_dir ? rock_store.abs_dir : "");
    info = sdscatprintf(info, "rock_compression:%s\r\n", rockCompressionConfigName(rock.compression));
    info = sdscatprintf(info, "rock_eviction:%s\r\n", rockEvictionState());
    info = sdscatprintf(info, "rock_last_write_error:%s\r\n", rockWriteError() ? rockWriteError() : "");
    for (int i = 0; i < n; i++) {
        if (f[i].is_percent)
            info = sdscatprintf(info, "rock_%s:%.2f\r\n", f[i].name, f[i].percent);
        else
            info = sdscatprintf(info, "rock_%s:%lld\r\n", f[i].name, f[i].value);
    }
    for (int j = 0; j < server.dbnum; j++) {
        long long keys = dictSize(server.db[j].dict);
        long long expires = dictSize(server.db[j].expires);
        if (keys || expires)
            info = sdscatprintf(info, "rock_db%d:keys=%lld,expires=%lld,cold_keys=%lld\r\n",
                                j, keys, expires, rock_ks.dbs ? rock_ks.dbs[j].cold : 0);
    }
    return info;
}

/* ---------------------------------------------------------------------------
 * ROCK command
 * ------------------------------------------------------------------------ */

static void rockReportCommand(client *c) {
    rockFigure f[ROCK_MAX_FIGURES];
    int n = rockCollectFigures(f);
    int dbs = 0;
    for (int j = 0; j < server.dbnum; j++)
        if (dictSize(server.db[j].dict) || dictSize(server.db[j].expires)) dbs++;

    addReplyMapLen(c, n + 5);
    addReplyBulkCString(c, "dir");
    addReplyBulkCString(c, rock_store.abs_dir ? rock_store.abs_dir : "");
    addReplyBulkCString(c, "eviction");
    addReplyBulkCString(c, rockEvictionState());
    addReplyBulkCString(c, "last_write_error");
    addReplyBulkCString(c, rockWriteError() ? rockWriteError() : "");
    addReplyBulkCString(c, "compression");
    addReplyBulkCString(c, rockCompressionConfigName(rock.compression));
    for (int i = 0; i < n; i++) {
        addReplyBulkCString(c, f[i].name);
        if (f[i].is_percent) {
            char buf[32];
            snprintf(buf, sizeof(buf), "%.2f", f[i].percent);
            addReplyBulkCString(c, buf);
        } else {
            addReplyLongLong(c, f[i].value);
        }
    }
    addReplyBulkCString(c, "dbs");
    addReplyMapLen(c, dbs);
    for (int j = 0; j < server.dbnum; j++) {
        long long keys = dictSize(server.db[j].dict);
        long long expires = dictSize(server.db[j].expires);
        if (!keys && !expires) continue;
        addReplyBulkSds(c, sdscatfmt(sdsempty(), "db%i", j));
        addReplyMapLen(c, 3);
        addReplyBulkCString(c, "keys");
        addReplyLongLong(c, keys);
        addReplyBulkCString(c, "expires");
        addReplyLongLong(c, expires);
        addReplyBulkCString(c, "cold_keys");
        addReplyLongLong(c, rock_ks.dbs ? rock_ks.dbs[j].cold : 0);
    }
}

static int rockRequireEnabled(client *c) {
    if (rock_store.db) return 1;
    addReplyError(c, "rock is disabled (rock-enabled no)");
    return 0;
}

/* ROCK EVICT key [key ...]: move values to disk now, committed before the
 * reply (it waits for the writer thread). Replies with the number of values
 * moved; keys already cold, missing, under rock-min-value-size or of a type
 * that stays in RAM are skipped. */
void rockEvictCommand(client *c) {
    if (!rockRequireEnabled(c)) return;
    long long moved = 0;
    for (int j = 2; j < c->argc; j++) {
        dictEntry *de = dictFind(c->db->dict, c->argv[j]->ptr);
        if (de == NULL) continue;
        int ret = rockEvictEntry(c->db, de);
        if (ret == ROCK_EVICT_OK) moved++;
        else if (ret == ROCK_EVICT_ERROR) {
            addReplyErrorFormat(c, "rock: can't move values to disk now: eviction is %s (see the server log)",
                                rockEvictionState());
            return;
        }
    }
    if (moved) rockWriteFlush();
    if (moved && rockWriteError()) {
        addReplyErrorFormat(c, "rock: RocksDB write failed: %s (the values stay in RAM and the write is retried)",
                            rockWriteError());
        return;
    }
    addReplyLongLong(c, moved);
}

/* ROCK LOAD key [key ...]: values were paged in before the command ran (its
 * keys are declared with the ACCESS flag); reply with how many of the keys
 * now have their value in RAM. */
void rockLoadCommand(client *c) {
    if (!rockRequireEnabled(c)) return;
    long long hot = 0;
    for (int j = 2; j < c->argc; j++) {
        dictEntry *de = dictFind(c->db->dict, c->argv[j]->ptr);
        if (de == NULL) continue;
        if (rockIsCold(dictGetVal(de)) && rockLoadEntry(c->db, de) == NULL) {
            addReplyErrorFormat(c, "rock: can't read the value of '%s' from disk (see the server log)",
                                (char *)c->argv[j]->ptr);
            return;
        }
        /* Paged in by the operator, not by an access: the next read of it
         * is served from RAM (value_hits_ram). */
        rockFreshForget(dictGetVal(de));
        hot++;
    }
    addReplyLongLong(c, hot);
}

/* ROCK STATUS key: hot, hot-clean (in RAM, same copy on disk) or cold. */
void rockStatusCommand(client *c) {
    dictEntry *de = dictFind(c->db->dict, c->argv[2]->ptr);
    if (de == NULL) {
        addReplyError(c, "no such key");
        return;
    }
    robj *val = dictGetVal(de);
    if (rock_store.db && rockIsCold(val))
        addReplyBulkCString(c, "cold");
    else if (rock_store.db && dictFind(rock_ks.dbs[c->db->id].clean, c->argv[2]->ptr))
        addReplyBulkCString(c, "hot-clean");
    else
        addReplyBulkCString(c, "hot");
}

/* ROCK DISKKEYS: the exact number of records in RocksDB, by iterating them
 * all (O(N)); for checking that disk space is reclaimed. */
void rockDiskkeysCommand(client *c) {
    if (!rockRequireEnabled(c)) return;
    rockWriteFlush(); /* count what is queued too */
    /* DISKKEYS: one record per cold key (a whole value, or a split
     * collection's metadata); DISKELEMENTS: split collections' elements,
     * whose storage ids have ROCK_SPLIT_BIT set (rock_split.c). */
    int elements = !strcasecmp(c->argv[1]->ptr, "diskelements");
    unsigned char bound[4];
    rockPutSid(bound, ROCK_SPLIT_BIT);
    long long n = 0;
    rocksdb_iterator_t *it = rocksdb_create_iterator(rock_store.db, rock_store.ropts);
    if (elements) rocksdb_iter_seek(it, (const char *)bound, sizeof(bound));
    else rocksdb_iter_seek_to_first(it);
    for (; rocksdb_iter_valid(it); rocksdb_iter_next(it)) {
        size_t klen;
        const char *k = rocksdb_iter_key(it, &klen);
        if (!elements && klen >= 1 && (unsigned char)k[0] >= bound[0]) break;
        n++;
    }
    char *err = NULL;
    rocksdb_iter_get_error(it, &err);
    rocksdb_iter_destroy(it);
    if (err) {
        addReplyErrorFormat(c, "rock: RocksDB iteration failed: %s", err);
        rocksdb_free(err);
        return;
    }
    addReplyLongLong(c, n);
}

void rockCommand(client *c) {
    if (c->argc == 2 && !strcasecmp(c->argv[1]->ptr, "help")) {
        const char *help[] = {
"REPORT",
"    Return figures of the SSD tier: keys, cold keys, memory split, RocksDB",
"    memory and disk usage, reads, writes, latency, per-database counts.",
"EVICT <key> [<key> ...]",
"    Move the values of the keys to disk now. Returns how many moved.",
"LOAD <key> [<key> ...]",
"    Page the values of the keys back into RAM. Returns how many are in RAM.",
"DISKKEYS",
"    Count the key records in RocksDB exactly (iterates them all: O(N)).",
"DISKELEMENTS",
"    Count the element records of collections stored element by element.",
"STATUS <key>",
"    Return hot, hot-clean (in RAM and unchanged on disk) or cold (on disk).",
"SIZING [<maxmemory> ...]",
"    Predict the share of value accesses served from RAM at each maxmemory",
"    (bytes, or 512mb, 4gb, ...); with none, [maxmemory, share] pairs from",
"    1/16 of the current maxmemory to the size that holds every value.",
NULL
        };
        addReplyHelp(c, help);
    } else if (c->argc == 2 && !strcasecmp(c->argv[1]->ptr, "report")) {
        rockReportCommand(c);
    } else {
        addReplySubcommandSyntaxError(c);
    }
}

/* ROCK SIZING [maxmemory ...]: the RAM sizing model's predictions
 * (rock_sizing.c). With sizes: the predicted share of value accesses served
 * from RAM at each, in order. Without: [maxmemory, share] pairs, from a
 * sixteenth of maxmemory (of used_memory when maxmemory is 0), or the
 * maxmemory floor when that is more, to the size that holds every value,
 * ROCK_SIZING_DEFAULT_POINTS of them spaced geometrically. */
#define ROCK_SIZING_DEFAULT_POINTS 16
void rockSizingCommand(client *c) {
    if (!rockRequireEnabled(c)) return;
    long long *sizes = zmalloc(sizeof(long long) * (c->argc + ROCK_SIZING_DEFAULT_POINTS));
    for (int j = 2; j < c->argc; j++) {
        int err = 0;
        const char *arg = c->argv[j]->ptr;
        unsigned long long v = memtoull(arg, &err);
        if (err || *arg == '\0' || v == 0 || v > LLONG_MAX) {
            addReplyErrorFormat(c, "ROCK SIZING: '%s' is not a maxmemory size (a positive number of bytes, or "
                                   "one with a unit: 512mb, 4gb)", arg);
            zfree(sizes);
            return;
        }
        sizes[j] = (long long)v;
    }
    const char *why;
    if (!rockSizingReady(&why)) {
        addReplyErrorFormat(c, "ROCK SIZING: %s", why);
        zfree(sizes);
        return;
    }
    int n = c->argc > 2 ? c->argc - 2 : ROCK_SIZING_DEFAULT_POINTS;
    double *ratio = zmalloc(sizeof(double) * n);
    if (c->argc > 2) {
        rockSizingPredict(0, sizes + 2, ratio, n);
        addReplyArrayLen(c, n);
        for (int j = 0; j < n; j++) addReplyDouble(c, ratio[j]);
    } else {
        long long lo = rockSizingOverFloor((long long)(server.maxmemory ? server.maxmemory : zmalloc_used_memory()) / 16);
        n = rockSizingPredict(lo > 0 ? lo : 1, sizes, ratio, n);
        addReplyArrayLen(c, n);
        for (int j = 0; j < n; j++) {
            addReplyArrayLen(c, 2);
            addReplyLongLong(c, sizes[j]);
            addReplyDouble(c, ratio[j]);
        }
    }
    zfree(ratio);
    zfree(sizes);
}
