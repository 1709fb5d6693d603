/* rock.c -- redis-rock: lifecycle of the SSD tier and its configuration.
 *
 * The top layer (with rock_report.c). This file owns:
 *   - start-up: resolving rock-dir, taking its lock, wiping the previous
 *     RocksDB folder and having a fresh one opened (RocksDB is an extension
 *     of RAM, never a source of truth: RDB/AOF are), then starting the
 *     layers below and registering the functions they call back
 *     (rockWriteStart(): the periodic work and the writer's completions);
 *   - the periodic work (rockCron()) and the L0 trigger policy;
 *   - FLUSHALL's store reset and shutdown;
 *   - validation and live application of the rock-* config options (the
 *     values themselves live in rock_conf.c, at the bottom, for every layer
 *     to read).
 *
 * Every failure at start-up logs one clear line and exits with status 1,
 * as upstream does for a bad `dir`. */

#include "server.h"
#include "rock_readers.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <sys/stat.h>
#include <sys/types.h>

static int rockResetStoreFrom(rockStoreFillProc *fill);

static void rockCron(void);

static int rock_lock_fd = -1; /* fcntl-locked rock-dir/redis-rock.lock */
static int rock_l0_trigger;   /* L0 trigger last asked of RocksDB (rockTuneL0()) */
static char *rock_abs_dir;    /* rock-dir resolved at startup */
static char *rock_db_path;    /* rock_abs_dir/rocksdb */

/* ---------------------------------------------------------------------------
 * rock-dir preparation
 * ------------------------------------------------------------------------ */

/* Resolve rock-dir against the current working directory, which at start-up
 * is the server's `dir`. */
static char *rockResolveDir(const char *dir) {
    if (dir[0] == '/') return zstrdup(dir);
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof(cwd)) == NULL)
        rockFatal("can't resolve rock-dir '%s': getcwd failed: %s", dir, strerror(errno));
    size_t len = strlen(cwd) + 1 + strlen(dir) + 1;
    char *abs = zmalloc(len);
    snprintf(abs, len, "%s/%s", cwd, dir);
    return abs;
}

/* Make sure rock-dir exists, is a directory, is writable and is not used by
 * another running server. Leaves the lock held in rock_lock_fd. */
static void rockPrepareDir(void) {
    struct stat st;
    const char *dir = rock_abs_dir;

    if (stat(dir, &st) == -1) {
        if (errno != ENOENT && errno != ENOTDIR)
            rockFatal("rock-dir '%s' is not accessible: %s", dir, strerror(errno));
        if (rockMkdirs(dir) == -1)
            rockFatal("rock-dir '%s' does not exist and can't be created: %s", dir, strerror(errno));
        if (stat(dir, &st) == -1)
            rockFatal("rock-dir '%s' is not accessible after creating it: %s", dir, strerror(errno));
    }
    if (!S_ISDIR(st.st_mode))
        rockFatal("rock-dir '%s' exists but is not a directory", dir);

    /* The lock file doubles as the writability probe: root ignores mode bits,
     * so only an actual create tells whether the folder is writable. */
    sds lockpath = sdscatfmt(sdsempty(), "%s/%s", dir, ROCK_LOCK_FILE);
    int fd = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd == -1)
        rockFatal("rock-dir '%s' is not writable: can't create %s: %s", dir, ROCK_LOCK_FILE, strerror(errno));

    /* POSIX record locks are not inherited by fork(), so a lingering child of
     * a dead server never blocks its restart. */
    struct flock fl = {0};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    if (fcntl(fd, F_SETLK, &fl) == -1) {
        if (errno == EACCES || errno == EAGAIN)
            rockFatal("rock-dir '%s' is in use by another running server; give each server its own rock-dir", dir);
        rockFatal("rock-dir '%s': can't lock %s: %s", dir, ROCK_LOCK_FILE, strerror(errno));
    }
    sds pid = sdsfromlonglong((long long)getpid());
    if (ftruncate(fd, 0) == -1 || write(fd, pid, sdslen(pid)) != (ssize_t)sdslen(pid))
        rockFatal("rock-dir '%s' is not writable: can't write %s: %s", dir, ROCK_LOCK_FILE, strerror(errno));
    sdsfree(pid);
    sdsfree(lockpath);
    rock_lock_fd = fd;
    rockWarmChoose(dir);

    /* Wipe the previous RocksDB folder, but only if it is ours: a folder
     * named like ours that holds someone else's files is left alone. */
    sds dbpath = sdscatfmt(sdsempty(), "%s/%s", dir, ROCK_DB_SUBDIR);
    sds marker = sdscatfmt(sdsempty(), "%s/%s", dbpath, ROCK_MARKER_FILE);
    if (stat(dbpath, &st) == 0) {
        if (!S_ISDIR(st.st_mode) || (access(marker, F_OK) == -1 && !rockDirIsEmpty(dbpath)))
            rockFatal("rock-dir '%s' holds a '%s' entry that redis-rock did not create; refusing to wipe it",
                      dir, ROCK_DB_SUBDIR);
        if (rockRemoveTree(dbpath) == -1)
            rockFatal("can't wipe the previous RocksDB folder '%s': %s", dbpath, strerror(errno));
    }
    if (mkdir(dbpath, 0755) == -1)
        rockFatal("rock-dir '%s' is not writable: can't create %s: %s", dir, ROCK_DB_SUBDIR, strerror(errno));
    int mfd = open(marker, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (mfd == -1)
        rockFatal("rock-dir '%s' is not writable: can't create %s: %s", dir, marker, strerror(errno));
    close(mfd);
    sdsfree(marker);
    rockWarmPopulate(dbpath);
    rock_db_path = zstrdup(dbpath);
    sdsfree(dbpath);
}

/* ---------------------------------------------------------------------------
 * RocksDB open / close
 * ------------------------------------------------------------------------ */

/* L0 compaction trigger by write rate.
 *
 * Values evicted from a uniform keyspace make every L0 file span the whole
 * key range, so each L0 compaction rewrites the whole base level: with
 * RocksDB's default trigger of 4 files, cold overwrites (bench 8) spent
 * 14-15 us of compaction CPU per SET, at a write amplification of 6. At 12
 * files each rewrite of the base level absorbs three times as much: 6.5 us,
 * write amplification 2.5. But each cold read probes every L0 file (a
 * filter check each, and a disk read for each false positive): with up to
 * 11 L0 files left a cold GET cost the readers about 2 us more (bench 7).
 * So the high trigger holds only while writes come fast: while RocksDB
 * gets more than one memtable of records a minute. After
 * ROCK_L0_QUIET_SECS seconds below that the trigger drops back to 4, and
 * the L0 files left over are compacted for the reads that follow: RocksDB
 * compacts L0 only when it holds the trigger's count of files, so the up to
 * 3 files a burst leaves under 4 would stay, each a probe per cold read (and
 * DeleteFilesInRange, which gives a flushed database's disk back, skips L0).
 * The trigger is ROCK_L0_TRIGGER_DRAIN, one file, from the end of a burst
 * until L0 is empty. Only then: at 1 in steady trickling writes, each
 * memtable flush would rewrite the base level. Checked once a second from
 * rockCron(); the change itself is made by the writer thread.
 *
 * More L0 files also mean more disk held at once: a compaction keeps its
 * input files until its output is complete. So the high trigger is used
 * only while rock-dir has room, over rock-min-free-disk, for twice the L0
 * files it lets pile up (on a small rock-dir the reserve is sized for
 * RocksDB's default).
 *
 * A load that moves values to disk (an RDB, an AOF, a full sync) writes
 * the whole dataset at once, and nothing reads meanwhile: the trigger is
 * ROCK_L0_TRIGGER_LOAD then, with RocksDB's slowdown and stop at 5 and 7.5
 * times it (rockStoreSetL0Trigger()), when rock-dir has room for 8 times
 * its files; and after a load whose compactions waited for its end
 * (rockCompactionsCheck()), until fewer L0 files than that are left (a
 * lower trigger's slowdown and stop, under the files the load left, would
 * hold writes back until they are compacted). Checked from the loading
 * path too (no timer runs while loading: rockWriteTick()). */
#define ROCK_L0_TRIGGER_READS ROCK_L0_TRIGGER_DEFAULT
#define ROCK_L0_TRIGGER_WRITES 12
#define ROCK_L0_TRIGGER_DRAIN 1
#define ROCK_L0_QUIET_SECS 5
static int rock_l0_after_load; /* rockCron(): a load ended with its compactions held */
static void rockTuneL0(void) {
    static long long last_bytes, last_moves;
    static int quiet, draining;
    long long bytes = rock_write_stats.write_bytes;
    long long rate = bytes >= last_bytes ? bytes - last_bytes : 0; /* RESETSTAT */
    last_bytes = bytes;
    /* While loading, the writer's completions are handled only every 2 MB
     * of the file read (processEventsWhileBlocked()), so the bytes written
     * lag: values moved out since the last check say it instead. */
    int moving = server.loading && rock_ks_stats.evictions != last_moves;
    last_moves = rock_ks_stats.evictions;
    if (rock_l0_after_load && rockStoreL0Files() < ROCK_L0_TRIGGER_LOAD) rock_l0_after_load = 0;
    int after_load = rock_l0_after_load, loadlike = server.loading || after_load;
    int want = rock_l0_trigger, fast = loadlike ? ROCK_L0_TRIGGER_LOAD : ROCK_L0_TRIGGER_WRITES;
    long long wbs = (long long)rockStoreWriteBufferSize(), free_disk = rockWriteDiskFree();
    int room = free_disk < 0 || free_disk - rock.min_free_disk >= (loadlike ? 8 : 2) * fast * wbs;
    if (!room) {
        quiet = draining = 0;
        want = ROCK_L0_TRIGGER_READS;
    } else if (rate * 60 >= wbs || moving || after_load) {
        quiet = draining = 0;
        want = fast;
    } else if (++quiet >= ROCK_L0_QUIET_SECS) {
        if (rock_l0_trigger > ROCK_L0_TRIGGER_READS) draining = 1;
        if (draining && rockStoreL0Files() == 0) draining = 0;
        want = draining ? ROCK_L0_TRIGGER_DRAIN : ROCK_L0_TRIGGER_READS;
    }
    if (want != rock_l0_trigger) {
        rock_l0_trigger = want;
        rockWriteRequestL0Trigger(want);
    }
}

/* RocksDB was just opened (or reopened empty) with rock_store.opts' trigger, the
 * writer not running: rockTuneL0() starts from there. */
static void rockL0TriggerOpened(void) {
    rock_l0_trigger = ROCK_L0_TRIGGER_READS;
}

/* Compactions held for a load.
 *
 * RocksDB opens, and reopens empty, with its automatic compactions off
 * (rockStoreOpenDb()): what follows is usually a load (at start-up, DEBUG
 * RELOAD, a replica's full sync), which writes the dataset at once with
 * nothing reading it. Compacting while it runs merges each batch of L0
 * files into a base level that spans the whole key range, so the base level
 * is rewritten again and again, compressed each time (ZSTD at the bottom),
 * on the core the load needs. Held, the load's L0 files are merged once,
 * after it, while the server serves.
 *
 * RocksDB applies no L0 slowdown or stop while its automatic compactions
 * are off. They are turned on at the first check outside a load
 * (rockCron(): at once after a FLUSHALL); at the first check of a load
 * whose file is bigger than rockL0HoldMax() memtables (or of unknown size:
 * a diskless full sync), as its L0 files would be merged in one compaction
 * as long as the load that goes on meanwhile; in the middle of a load once
 * L0 holds rockL0HoldMax() files all the same, or rock-dir lacks the room,
 * over rock-min-free-disk, to compact them (as much again as they hold, at
 * most a memtable each). Figures in write-path.md ("RocksDB setup"). */
/* Under the load trigger's stop, which holds until they are compacted
 * (rockTuneL0()): writes may be slowed, never stopped, by what a load left. */
#define ROCK_L0_HOLD_MAX 160
#define ROCK_L0_FILE_COMPACTION_COST (64 * 1024)
static int rock_compactions_held;

/* The compaction that merges the held L0 files holds memory outside
 * maxmemory for each of them (its block buffers, and with direct I/O its
 * read-ahead: about 45 KB a file without, measured at maxmemory 100mb): as
 * many files as an eighth of maxmemory covers. */
static long long rockL0HoldMax(void) {
    long long per = ROCK_L0_FILE_COMPACTION_COST + (rock.direct_io ? ROCK_COMPACTION_READAHEAD : 0);
    long long most = server.maxmemory ? (long long)(server.maxmemory / 8) / per : ROCK_L0_HOLD_MAX;
    return most < ROCK_L0_HOLD_MAX ? most : ROCK_L0_HOLD_MAX;
}

static void rockCompactionsHold(void) {
    rock_compactions_held = 1;
}

static void rockCompactionsCheck(void) {
    if (!rock_compactions_held) return;
    if (server.loading) {
        long long files = rockStoreL0Files(), free_disk = rockWriteDiskFree(), most = rockL0HoldMax();
        long long wbs = (long long)rockStoreWriteBufferSize(), need = (files + 2) * wbs;
        int fits = server.loading_total_bytes > 0 && (long long)server.loading_total_bytes <= most * wbs;
        if (fits && files < most && (free_disk < 0 || free_disk - rock.min_free_disk >= need)) return;
        serverLog(LL_NOTICE, "rock: RocksDB's compactions start during the load (%lld MB to load, %lld L0 files, "
                  "%lld MB free on rock-dir)", (long long)server.loading_total_bytes / (1024 * 1024), files,
                  free_disk / (1024 * 1024));
    }
    rock_compactions_held = 0;
    rockWriteRequestCompactions();
}

/* Every 100 ms (the writer's timer, while RocksDB is open): join a fork
 * stream thread that has finished, follow maxmemory changes, refresh the
 * RocksDB memory figure that counts against maxmemory, shrink the tier's
 * per-db dicts once sparse (rockKeysCron()), have jemalloc's freed
 * pages purged when too many are resident (rockPurgeCheck()), and once a second
 * have the writer thread hand the free memory of RocksDB's glibc heaps back
 * to the system (rockWriteRequestTrim()) and set the L0 compaction trigger
 * for the write rate (rockTuneL0(); at the end of a load too). */
static void rockCron(void) {
    static int ticks, was_loading;
    if (!rock_store.db) return;
    rockForkStreaming();
    rockSizeToMaxmemory(0);
    rockRefreshExternalMemory();
    rockKeysCron();
    if (!server.loading) {
        rockStaleSweep();
        rockSizingCron();
    }
    rockPurgeCheck();
    rockFloorCron();
    /* At the end of a load whose compactions waited, the trigger is set at
     * once, before its L0 files are compacted (rockTuneL0()). */
    int tuned = 0;
    if (was_loading && !server.loading && rock_compactions_held) {
        rock_l0_after_load = 1;
        rockTuneL0();
        tuned = 1;
    }
    was_loading = server.loading;
    rockCompactionsCheck();
    if (++ticks % 10 == 0) {
        if (!server.loading) rockWarmCron();
        rockWriteRequestTrim();
        if (!tuned) rockTuneL0();
    } else {
        rockWriteRequestMeasure();
    }
}

/* The writer handed batches back (its completions, registered with
 * rockWriteStart()): eviction that stopped for it resumes, and commands
 * that waited for it (a write backlog, a split collection's point writes)
 * re-run; those still held wait again. */
static void rockWritesCommitted(void) {
    rockEvictAfterWrites();
    rockWakeWriteWaiters();
}

/* beforeSleep(), every event-loop pass (also while processing events during
 * loading): hand the disk reads and the writes this pass queued to the
 * reader and writer threads, each with one lock and one wake-up. */
void rockBeforeSleep(void) {
    rockReadersSubmit();
    rockWriteSubmit();
}

/* Called from main() once the configuration is loaded and before the dataset
 * is loaded. Does nothing unless rock-enabled is yes. */
void rockStartup(void) {
    rock.started.enabled = rock.enabled;
    rock.started.io_threads = rock.io_threads;
    rock.started.direct_io = rock.direct_io;
    rock.started.dir = zstrdup(rock.dir);
    if (!rock.enabled) {
        rockWarmCheckDisabled();
        return;
    }
#ifdef __GLIBC__
    /* RocksDB allocates with the C library's malloc (Redis uses jemalloc).
     * glibc gives each thread that allocates an arena of its own, up to 8
     * per core, and each keeps freed memory: with a dozen RocksDB threads
     * that is RSS no figure accounts for. Two arenas are enough here.
     * glibc also raises its mmap threshold each time a mapped block is
     * freed (up to 32 MB), after which the large buffers RocksDB takes and
     * frees (a big value read or written, compaction output) come from the
     * heaps and stay in RSS, fragmenting them. A fixed threshold keeps
     * blocks of 256 KB and more mapped, given back at free (soak, 48 MB
     * maxmemory: master RSS p50 117 -> 98 MB, p90 167 -> 108 MB). */
    mallopt(M_ARENA_MAX, 2);
    mallopt(M_MMAP_THRESHOLD, 256 * 1024);
#endif
#if defined(USE_JEMALLOC)
    /* Moving values to disk frees memory all the time. jemalloc gives freed
     * pages back to the system only as they age (10 s by default), so RSS
     * would run well above maxmemory under eviction. Age them out in 100 ms
     * (a 5-minute soak at 48 MB maxmemory, with rockPurgeCheck(): 7 of
     * 1,200 RSS samples over the bound at 1 s, 2 of 1,168 at 100 ms; server
     * CPU per request the same within 1%, under eviction and on the hot
     * path). */
    ssize_t decay_ms = 100;
    unsigned narenas = 0;
    size_t sz = sizeof(narenas);
    je_mallctl("arenas.dirty_decay_ms", NULL, NULL, &decay_ms, sizeof(decay_ms));
    je_mallctl("arenas.narenas", &narenas, &sz, NULL, 0);
    for (unsigned i = 0; i < narenas; i++) {
        char name[64];
        snprintf(name, sizeof(name), "arena.%u.dirty_decay_ms", i);
        je_mallctl(name, NULL, NULL, &decay_ms, sizeof(decay_ms)); /* fails for arenas not yet used */
    }
#endif
    if (rock.dir[0] == '\0') {
        /* Default: rock-<port> inside `dir`, so that servers never share one,
         * not even servers sharing a `dir`. */
        char name[32];
        snprintf(name, sizeof(name), "rock-%d", server.port ? server.port : server.tls_port);
        rock_abs_dir = rockResolveDir(name);
    } else {
        rock_abs_dir = rockResolveDir(rock.dir);
    }
    rockPrepareDir();
    char *err = NULL;
    if (rockStoreOpen(rock_abs_dir, rock_db_path, rockWarmStarting(), &err) == C_ERR) {
        rockFatal("can't open RocksDB in '%s': %s%s", rock_db_path, err,
                  rock.direct_io ? " (rock-direct-io needs a filesystem with O_DIRECT support)" : "");
    }
    rockL0TriggerOpened();
    rockCompactionsHold();
    rockStoreInit();
    rockKeysInit();
    rockEvictInit();
    rockSizingConfigure();
    rockReadStart();
    rockWriteStart(rock_abs_dir, rockCron, rockWritesCommitted);
    rockWarmOpened();
    rockCompactStart();
    serverLog(LL_NOTICE, "rock: RocksDB opened in %s (block cache %llu bytes, compression %s, direct io %s)",
              rock_db_path, (unsigned long long)rockStoreCacheSize(),
              rockCompressionConfigName(rock.compression),
              rock.direct_io ? "yes" : "no");
}

/* Every database was emptied (FLUSHALL, a replica's full sync, DEBUG RELOAD,
 * ...): nothing in RocksDB is live any more. Rather than delete it record by
 * record, start over with an empty RocksDB: its files go at once, even on a
 * full disk, and a RocksDB stuck in an error state (e.g. out of space) is
 * replaced by a healthy one. Queued writes are all for dropped storage ids
 * and are discarded. Runs on the event loop; costs a close and an open. */
static void rockResetStore(void) {
    if (!rockWriteDirty()) return; /* still empty */
    rockResetStoreFrom(NULL);
}

/* loadSingleAppendOnlyFile() (patch 0049), in place of rdbLoadRio() for an
 * RDB-format base: a keyspace snapshot base loads with its checkpoint, the
 * start-up's (rock_warm.c), or for DEBUG LOADAOF, which has just emptied the
 * keyspace and RocksDB, RocksDB rebuilt from it first. */
int rockAofBaseLoad(rio *rdb) {
    int relinked = rockWarmAofReload() && rockResetStoreFrom(rockWarmRelinkAof) == C_OK;
    return rockWarmAofBaseLoad(rdb, relinked);
}

/* rockResetStore() that fills RocksDB's emptied folder with `fill` (a
 * checkpoint's files) before reopening it: for DEBUG LOADAOF of a snapshot
 * base. Returns C_ERR (logged, the tier off until restart) when it could
 * not. */
static int rockResetStoreFrom(rockStoreFillProc *fill) {
    char *err = NULL;
    rockForkStreamStop(1); /* its iterator must not outlive the store */
    rockReadersPause();
    rockWriteHalt();
    rockCompactHalt();
    rockWritesCommitted(); /* writes that waited for the dropped queue re-run */
    rockStoreClose(0);
    /* The folder and its marker stay: only RocksDB's files go. A marker
     * removed and not recreated (no file descriptor left, say) would make
     * the next start refuse to wipe the folder. */
    if (rockEmptyDirExcept(rock_db_path, ROCK_MARKER_FILE) == -1) {
        serverLog(LL_WARNING, "rock: can't empty '%s': %s; the SSD tier is off until restart",
                  rock_db_path, strerror(errno));
        rockReadersResume(); /* queued reads (all void) complete as errors */
        return C_ERR;
    }
    sds ferr = fill ? fill(rock_db_path) : NULL;
    if (ferr) {
        serverLog(LL_WARNING, "rock: %s; the SSD tier is off until restart", ferr);
        sdsfree(ferr);
        rockReadersResume();
        return C_ERR;
    }
    if (rockStoreReopen(fill != NULL, &err) == C_ERR) {
        serverLog(LL_WARNING, "rock: can't reopen RocksDB in '%s': %s; the SSD tier is off until restart",
                  rock_db_path, err);
        rocksdb_free(err);
        rockReadersResume(); /* queued reads (all void) complete as errors */
        return C_ERR;
    }
    if (fill) rockWriteMarkDirty();
    rockL0TriggerOpened();
    rockCompactionsHold();
    rockSizeToMaxmemory(1);
    rockRefreshExternalMemory(); /* not the dropped store's figures (a load may follow at once) */
    rockCompactResume();
    rockWriteResume();
    rockReadersResume();
    rockDiskCheck();
    return C_OK;
}

/* emptyData() hook (FLUSHDB, FLUSHALL, a full sync, DEBUG RELOAD, ...): the
 * keyspace side drops the databases' tier state, and when nothing is live
 * any more the store starts over empty. */
void rockEmptyDbs(redisDb *dbarray, int dbnum) {
    if (rockKeysEmptyDbs(dbarray, dbnum)) rockResetStore();
}

/* Called from finishShutdown(), after the final RDB/AOF work is done. */
void rockShutdown(void) {
    if (!rock_store.db) return;
    rockForkStreamStop(1);
    /* Writes still queued are dropped, not committed: RocksDB is wiped at
     * the next start, and whatever persistence the shutdown did is done. A
     * write backlog (a stalled or full disk) must not hold up the exit. */
    long long outstanding = rockWriteOutstanding();
    long long dropped = rockWriteHalt();
    if (outstanding)
        serverLog(LL_NOTICE, "rock: shutdown with %lld RocksDB writes not committed: %lld dropped, "
                  "the rest finished their batch", outstanding, dropped);
    rockCompactHalt();
    rockCompactStop();
    rockReadersPause();
    rockStoreClose(1);
    if (rock_lock_fd != -1) {
        close(rock_lock_fd);
        rock_lock_fd = -1;
    }
    serverLog(LL_NOTICE, "rock: RocksDB closed.");
}

/* ---------------------------------------------------------------------------
 * Config validation and live changes (bound in config.c by patch 0003)
 * ------------------------------------------------------------------------ */

/* Start-up-only options are MODIFIABLE in the config table so that CONFIG SET
 * to the value already in force succeeds (as tools that re-apply a whole
 * config expect), but any actual change is refused here, and config.c then
 * restores the previous value. */
int rockApplyStartupOnly(const char **err) {
    if (rock.started.dir == NULL) return 1; /* Sentinel mode: no tier. */
    if (rock.enabled != rock.started.enabled ||
        rock.io_threads != rock.started.io_threads ||
        rock.direct_io != rock.started.direct_io ||
        strcmp(rock.dir, rock.started.dir) != 0)
    {
        *err = "can't change this rock option at run time; set it in redis.conf and restart";
        return 0;
    }
    return 1;
}

int rockApplyBlockCacheSize(const char **err) {
    UNUSED(err);
    rockStoreApplyCacheSize();
    return 1;
}

/* rock-sizing-memory: the model is rebuilt for the new size (empty). */
int rockApplySizingMemory(const char **err) {
    UNUSED(err);
    if (rock_store.db) rockSizingConfigure();
    return 1;
}

int rockApplyCompression(const char **err) {
    if (rockStoreApplyCompression() == C_ERR) {
        *err = "RocksDB refused the new compression setting (see the log)";
        return 0;
    }
    return 1;
}
