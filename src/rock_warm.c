/* rock_warm.c -- redis-rock: warm restart, a keyspace snapshot paired with a
 * RocksDB checkpoint.
 *
 * Top layer (lifecycle, with rock.c). A clean stop that saves (SHUTDOWN
 * with save points, SHUTDOWN SAVE, SIGTERM), with rock-warm-restart yes and
 * appendonly no, writes instead of a stock RDB:
 *
 *   1. every queued RocksDB write committed (the writer drained);
 *   2. a RocksDB checkpoint, rock-dir/checkpoint-<pair>: the memtables
 *      flushed, the table files hard-linked (never copied: rock-dir and its
 *      rocksdb/ folder must share a filesystem), a ROCK-PAIR file naming the
 *      pair id and the snapshot's path;
 *   3. the keyspace snapshot, <dir>/<dbfilename>.rock-snapshot, written by
 *      rdbSave() (temp file, fsync, rename) with cold values as references
 *      (rock_snapshot.c), carrying the pair id and the identity (size,
 *      mtime, inode) of the stock-format RDB it supersedes;
 *   4. the checkpoints of earlier pairs removed.
 *
 * A crash at any step leaves the previous pair (or the stock RDB) valid:
 * the snapshot is the commit point, and a checkpoint no snapshot names is
 * removed at the next start. The stock RDB (dump.rdb) is not touched, so
 * SHUTDOWN NOSAVE after a warm start still brings back the last saved
 * state: the pair stays valid, for any number of starts, until a stock RDB
 * is written after it.
 *
 * At start-up (rockWarmChoose(), before RocksDB opens) the newest durable
 * state wins: the snapshot when its header is sound, its checkpoint is
 * there and the stock RDB is the one it superseded; the stock RDB (full
 * load, RocksDB emptied as always) when that was written after the
 * snapshot, which is then removed with its checkpoint. Anything else
 * (checkpoint missing, damaged header, appendonly yes, rock-enabled no, a
 * checkpoint in rock-dir paired with a snapshot this server does not use)
 * refuses to start with a message saying what to do. The checkpoint may be
 * in another rock-dir than this start's (the default rock-<port> of another
 * port): the snapshot names it, and its files are linked from there, that
 * rock-dir locked meanwhile. A warm start rebuilds
 * rock-dir/rocksdb from the checkpoint (table files linked, the rest
 * copied: RocksDB appends to its MANIFEST), so the checkpoint stays as it
 * was, then loadDataFromDisk() loads the snapshot (patch 0042): keys and
 * hot values only. */

#include "server.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <sys/stat.h>

#define ROCK_SNAPSHOT_SUFFIX ".rock-snapshot"
#define ROCK_CHECKPOINT_PREFIX "checkpoint-"
#define ROCK_PAIR_FILE "ROCK-PAIR"
#define ROCK_WARM_DRAIN_MS 2000

static struct {
    char *snap_path;  /* absolute path of this server's snapshot */
    char *abs_dir;    /* rock-dir */
    char *pair;       /* the pair this start uses (NULL: full load) */
    sds source;       /* its checkpoint, when in another rock-dir (NULL: ours) */
    int source_lock;  /* that rock-dir's lock, held until its files are linked */
    sds supersedes;   /* ...and the stock RDB its snapshot superseded */
    long long start_us;
    long long cp_bytes;     /* the checkpoint's files (rockWarmCron()) */
    long long cp_own_bytes; /* ...of them, the table and blob files the live
                             * RocksDB no longer links (compacted away
                             * since): disk the checkpoint alone holds */
    /* A save point's pair while its child runs (rockSavePointSnapshot()).
     * bg_pair and bg_cp are read by the writer thread's barrier; the main
     * thread changes them only once bg_state is not 0. */
    char *bg_pair;
    sds bg_cp, bg_supersedes;
    int bg_aof;             /* ...an AOF rewrite's base, not a save point's */
    int bg_fds[2];          /* the pipe, between prepare and fork */
    pid_t bg_child;
    int bg_wfd;             /* the pipe's end the barrier writes its result to */
    redisAtomic int bg_state; /* 0: checkpoint not made yet, 1: made, -1: failed */
    sds bg_err;             /* why it failed (set before bg_state) */
    long long bg_cp_us;     /* how long the writer spent making it (set
                             * before bg_state): writes waited that long */
    /* The AOF's base, when it is a keyspace snapshot (an AOF rewrite with
     * rock-warm-saves yes): its pair, kept while the manifest names it. */
    char *aof_pair;
    sds manifest_path;      /* this server's AOF manifest, absolute */
    int aof_start;          /* this start loads the AOF with aof_pair's checkpoint */
    int aof_loaded;         /* ...and has loaded that base */
} rock_warm;

static void rockWarmSaveResolve(void);

/* ---------------------------------------------------------------------------
 * Files
 * ------------------------------------------------------------------------ */

/* Which stock-format RDB is on disk: size, mtime and inode, or "none". */
static sds rockRdbIdentity(const char *path) {
    struct stat st;
    if (stat(path, &st) == -1) return sdsnew("none");
    return sdscatprintf(sdsempty(), "%lld:%lld.%09ld:%llu", (long long)st.st_size, (long long)st.st_mtim.tv_sec,
                        st.st_mtim.tv_nsec, (unsigned long long)st.st_ino);
}

static char *rockSnapshotPath(void) {
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof(cwd)) == NULL) rockFatal("getcwd failed: %s", strerror(errno));
    return sdscatfmt(sdsempty(), "%s/%s%s", cwd, server.rdb_filename, ROCK_SNAPSHOT_SUFFIX);
}

static sds rockCheckpointPath(const char *pair) {
    return sdscatfmt(sdsempty(), "%s/%s%s", rock_warm.abs_dir, ROCK_CHECKPOINT_PREFIX, pair);
}

static int rockHasSuffix(const char *name, const char *suffix) {
    size_t n = strlen(name), s = strlen(suffix);
    return n >= s && !strcmp(name + n - s, suffix);
}

/* The header fields of a snapshot: rock-pair, rock-supersedes,
 * rock-snapshot. Returns C_ERR when the file is not a sound snapshot. */
typedef struct rockSnapHeader {
    sds format, pair, supersedes, checkpoint;
} rockSnapHeader;

static void rockSnapHeaderFree(rockSnapHeader *h) {
    sdsfree(h->format);
    sdsfree(h->pair);
    sdsfree(h->supersedes);
    sdsfree(h->checkpoint);
    memset(h, 0, sizeof(*h));
}

static int rockReadSnapHeader(const char *path, rockSnapHeader *h) {
    memset(h, 0, sizeof(*h));
    FILE *fp = fopen(path, "r");
    if (fp == NULL) return C_ERR;
    rio r;
    char magic[10];
    rioInitWithFile(&r, fp);
    int ok = rioRead(&r, magic, 9) != 0 && memcmp(magic, "REDIS", 5) == 0;
    while (ok) {
        if (rdbLoadType(&r) != RDB_OPCODE_AUX) break;
        robj *k = rdbLoadStringObject(&r), *v = k ? rdbLoadStringObject(&r) : NULL;
        if (v == NULL) {
            ok = 0;
        } else {
            sds *f = !strcasecmp(k->ptr, "rock-snapshot") ? &h->format
                     : !strcasecmp(k->ptr, "rock-pair")   ? &h->pair
                     : !strcasecmp(k->ptr, "rock-supersedes") ? &h->supersedes
                     : !strcasecmp(k->ptr, "rock-checkpoint") ? &h->checkpoint : NULL;
            if (f && *f == NULL) *f = sdsdup(v->ptr);
        }
        if (k) decrRefCount(k);
        if (v) decrRefCount(v);
    }
    fclose(fp);
    if (!ok || h->format == NULL || h->pair == NULL || h->supersedes == NULL || h->checkpoint == NULL) return C_ERR;
    return C_OK;
}

/* A checkpoint's ROCK-PAIR file: its pair id and the snapshot it belongs to. */
static int rockReadPairFile(const char *cpdir, sds *pair, sds *snap) {
    sds path = sdscatfmt(sdsempty(), "%s/%s", cpdir, ROCK_PAIR_FILE);
    FILE *fp = fopen(path, "r");
    sdsfree(path);
    *pair = *snap = NULL;
    if (fp == NULL) return C_ERR;
    char a[256], b[PATH_MAX + 2];
    int ok = fgets(a, sizeof(a), fp) && fgets(b, sizeof(b), fp);
    fclose(fp);
    if (!ok) return C_ERR;
    *pair = sdstrim(sdsnew(a), "\n");
    *snap = sdstrim(sdsnew(b), "\n");
    return C_OK;
}

/* ---------------------------------------------------------------------------
 * Start-up
 * ------------------------------------------------------------------------ */

static sds rockAofSnapshotBase(rockSnapHeader *h, int *sound);

/* The absolute path of this server's AOF manifest (the start-up's working
 * directory is `dir`). */
static sds rockAofManifestPath(void) {
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof(cwd)) == NULL) rockFatal("getcwd failed: %s", strerror(errno));
    return sdscatfmt(sdsempty(), "%s/%s/%s.manifest", cwd, server.aof_dirname, server.aof_filename);
}

/* With rock-enabled no, a snapshot (dump.rdb's or the AOF's base) is a
 * state this server cannot load. */
void rockWarmCheckDisabled(void) {
    char *snap = rockSnapshotPath();
    if (access(snap, F_OK) == 0)
        rockFatal("'%s' is a redis-rock keyspace snapshot, the newest saved state, and loads only with "
                      "rock-enabled yes. To start from the older '%s' instead, remove it (its checkpoint in "
                      "rock-dir goes with it).", snap, server.rdb_filename);
    sdsfree(snap);
    if (server.aof_state == AOF_OFF) return;
    rockSnapHeader h;
    int sound;
    sds base = rockAofSnapshotBase(&h, &sound);
    if (base)
        rockFatal("the AOF's base '%s' is a redis-rock keyspace snapshot and loads only with rock-enabled yes. "
                  "Start with rock-enabled yes (then BGREWRITEAOF with rock-warm-saves no writes a stock base), "
                  "or move the AOF directory away (its writes are lost).", base);
    rockSnapHeaderFree(&h);
}

/* Checkpoints in rock-dir other than `keep`: at start-up (`starting`),
 * those of a snapshot this server does not use and that still names them
 * stop the start (another `dir` or `dbfilename`: wiping would lose that
 * state), at a stop they stay; the others are leftovers, removed. */
static void rockWarmSweepCheckpoints(const char *keep, int starting) {
    DIR *d = opendir(rock_warm.abs_dir);
    if (d == NULL) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, ROCK_CHECKPOINT_PREFIX, strlen(ROCK_CHECKPOINT_PREFIX)) != 0) continue;
        const char *pair = e->d_name + strlen(ROCK_CHECKPOINT_PREFIX);
        if (keep && !strcmp(pair, keep)) continue;
        if (rock_warm.aof_pair && !strcmp(pair, rock_warm.aof_pair)) continue;
        sds cp = sdscatfmt(sdsempty(), "%s/%s", rock_warm.abs_dir, e->d_name), p, snap;
        int read = rockReadPairFile(cp, &p, &snap) == C_OK;
        if (read && rockHasSuffix(snap, ".manifest") && strcmp(snap, rock_warm.manifest_path) != 0) {
            /* Another server's AOF base: kept, whatever this start is. */
            sdsfree(p);
            sdsfree(snap);
            sdsfree(cp);
            continue;
        }
        if (read && !rockHasSuffix(snap, ".manifest") && strcmp(snap, rock_warm.snap_path) != 0) {
            rockSnapHeader h;
            int theirs = rockReadSnapHeader(snap, &h) == C_OK && !strcmp(h.pair, p);
            rockSnapHeaderFree(&h);
            if (theirs && !starting) {
                sdsfree(p);
                sdsfree(snap);
                sdsfree(cp);
                continue;
            }
            if (theirs)
                rockFatal("rock-dir '%s' holds the checkpoint of the keyspace snapshot '%s', which this "
                              "server (snapshot '%s') does not use: start it with the `dir` and `dbfilename` "
                              "that snapshot was written with, or give it another rock-dir, or remove '%s' to "
                              "discard that state.", rock_warm.abs_dir, snap, rock_warm.snap_path, cp);
        }
        sdsfree(p);
        sdsfree(snap);
        if (rockRemoveTree(cp) == -1)
            serverLog(LL_WARNING, "rock: can't remove the leftover checkpoint '%s': %s", cp, strerror(errno));
        else
            serverLog(LL_NOTICE, "rock: removed the checkpoint '%s' (no snapshot uses it)", cp);
        sdsfree(cp);
    }
    closedir(d);
}

/* appendonly yes meets a snapshot (written while appendonly was no): the
 * AOF loads when it was written after the snapshot (the snapshot goes),
 * otherwise the start stops. */
static void rockWarmAofCheck(const char *snap) {
    sds manifest = rockAofManifestPath();
    struct stat a, s;
    int aof_newer = stat(manifest, &a) == 0 && stat(snap, &s) == 0 &&
                    (a.st_mtim.tv_sec > s.st_mtim.tv_sec ||
                     (a.st_mtim.tv_sec == s.st_mtim.tv_sec && a.st_mtim.tv_nsec > s.st_mtim.tv_nsec));
    sdsfree(manifest);
    if (!aof_newer)
        rockFatal("'%s' is a redis-rock keyspace snapshot, newer than the AOF that appendonly yes would "
                      "load. Start with appendonly no once (the snapshot loads, warm), then CONFIG SET appendonly "
                      "yes; or remove the snapshot to load the AOF.", snap);
    serverLog(LL_NOTICE, "rock: the AOF was written after the keyspace snapshot '%s': loading it; the snapshot "
              "and its checkpoint are removed", snap);
    if (unlink(snap) == -1) rockFatal("can't remove the outdated snapshot '%s': %s", snap, strerror(errno));
}

/* Is `cp` a complete checkpoint of pair `pair`, paired with snapshot `snap`? */
static int rockCheckpointPaired(const char *cp, const char *pair, const char *snap) {
    sds p, s;
    int ok = rockReadPairFile(cp, &p, &s) == C_OK && !strcmp(p, pair) && !strcmp(s, snap);
    sdsfree(p);
    sdsfree(s);
    return ok;
}

/* Lock the rock-dir that holds the checkpoint a warm start links from, as
 * its own server would: a server running there may be about to replace
 * it. */
static void rockWarmLockSource(void) {
    sds lock = sdsnew(rock_warm.source);
    char *slash = strrchr(lock, '/');
    if (slash) sdsrange(lock, 0, slash - lock - 1);
    lock = sdscatfmt(lock, "/%s", ROCK_LOCK_FILE);
    int fd = open(lock, O_RDWR | O_CLOEXEC);
    struct flock fl = {0};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    if (fd == -1 || fcntl(fd, F_SETLK, &fl) == -1)
        rockFatal("the keyspace snapshot's checkpoint '%s' is in a rock-dir in use by another running server "
                  "(or its lock '%s' can't be taken: %s); stop that server first", rock_warm.source, lock,
                  strerror(errno));
    rock_warm.source_lock = fd;
    sdsfree(lock);
}

/* The AOF's base, when it is a keyspace snapshot: its pair is kept (the
 * manifest names it, whether or not this start loads the AOF), and with
 * appendonly yes this start loads it warm, or refuses when its checkpoint
 * is missing. A stock base (RDB or AOF format) needs nothing. */
aofManifest *aofLoadManifestFromFile(sds am_filepath);

/* The AOF's base when it is a keyspace snapshot (`*sound`: its header is
 * complete, read into `h`), or NULL: no manifest, no base, a stock base. */
static sds rockAofSnapshotBase(rockSnapHeader *h, int *sound) {
    char cwd[PATH_MAX];
    memset(h, 0, sizeof(*h));
    if (getcwd(cwd, sizeof(cwd)) == NULL) rockFatal("getcwd failed: %s", strerror(errno));
    sds manifest = rockAofManifestPath();
    if (access(manifest, F_OK) != 0) {
        sdsfree(manifest);
        return NULL;
    }
    aofManifest *am = aofLoadManifestFromFile(manifest);
    sdsfree(manifest);
    if (am == NULL || am->base_aof_info == NULL) {
        if (am) aofManifestFree(am);
        return NULL;
    }
    sds base = sdscatfmt(sdsempty(), "%s/%s/%s", cwd, server.aof_dirname, am->base_aof_info->file_name);
    aofManifestFree(am);
    *sound = rockReadSnapHeader(base, h) == C_OK;
    if (!*sound && h->format == NULL) {
        rockSnapHeaderFree(h);
        sdsfree(base);
        return NULL;
    }
    return base;
}

static void rockWarmChooseAof(void) {
    rock_warm.manifest_path = rockAofManifestPath();
    rockSnapHeader h;
    int sound;
    sds base = rockAofSnapshotBase(&h, &sound);
    if (base == NULL) return;
    if (server.aof_state == AOF_OFF) {
        /* Not loaded now: its checkpoint is kept for a start that loads it. */
        if (sound) rock_warm.aof_pair = zstrdup(h.pair);
        rockSnapHeaderFree(&h);
        sdsfree(base);
        return;
    }
    if (!sound || strcmp(h.format, ROCK_SNAPSHOT_FORMAT) != 0)
        rockFatal("the AOF's base '%s' is a redis-rock keyspace snapshot that is damaged or of a format this "
                  "build does not read (it reads %s). Start with the redis-rock version that wrote it, or move "
                  "the AOF directory away (its writes are lost) to start from '%s'.", base, ROCK_SNAPSHOT_FORMAT,
                  server.rdb_filename);
    sds cp = rockCheckpointPath(h.pair);
    if (!rockCheckpointPaired(cp, h.pair, rock_warm.manifest_path))
        rockFatal("the AOF's base '%s' is a keyspace snapshot whose values are in the checkpoint '%s', which is "
                  "missing or incomplete (rock-dir is '%s'). Start with the rock-dir the AOF was written with; "
                  "otherwise the AOF can't load (move its directory away, losing its writes, to start from '%s').",
                  base, cp, rock_warm.abs_dir, server.rdb_filename);
    rock_warm.aof_pair = zstrdup(h.pair);
    rock_warm.aof_start = 1;
    serverLog(LL_NOTICE, "rock: the AOF's base is a keyspace snapshot: warm start with the values in checkpoint %s",
              h.pair);
    sdsfree(cp);
    rockSnapHeaderFree(&h);
    sdsfree(base);
}

/* rockStartup(), the lock on rock-dir held and before RocksDB's folder is
 * emptied: decide between a warm start and the full load (see the top of
 * this file). */
void rockWarmChoose(const char *abs_dir) {
    rock_warm.abs_dir = zstrdup(abs_dir);
    rock_warm.snap_path = rockSnapshotPath();
    const char *snap = rock_warm.snap_path;
    rockSnapHeader h = {0};
    int have = access(snap, F_OK) == 0;

    if (have && rockReadSnapHeader(snap, &h) == C_ERR)
        rockFatal("the keyspace snapshot '%s' is damaged or not one this server writes; it is newer than "
                      "'%s'. To start from '%s' instead, remove the snapshot.", snap, server.rdb_filename,
                      server.rdb_filename);
    if (have && strcmp(h.format, ROCK_SNAPSHOT_FORMAT) != 0)
        rockFatal("the keyspace snapshot '%s' has format %s, which this build does not read (it reads %s). "
                      "Start it with the redis-rock version that wrote it and SAVE a stock RDB, or remove it to "
                      "start from the older '%s'.", snap, h.format, ROCK_SNAPSHOT_FORMAT, server.rdb_filename);
    if (have) {
        sds now = rockRdbIdentity(server.rdb_filename);
        if (strcmp(now, h.supersedes) != 0) {
            serverLog(LL_NOTICE, "rock: '%s' was written after the keyspace snapshot '%s': loading it; the "
                      "snapshot and its checkpoint are removed", server.rdb_filename, snap);
            if (unlink(snap) == -1) rockFatal("can't remove the outdated snapshot '%s': %s", snap, strerror(errno));
            have = 0;
        }
        sdsfree(now);
    }
    if (have && server.aof_state != AOF_OFF) {
        rockWarmAofCheck(snap);
        have = 0;
    }
    if (!have) rockSnapHeaderFree(&h);
    if (have) {
        sds cp = rockCheckpointPath(h.pair);
        if (!rockCheckpointPaired(cp, h.pair, snap)) {
            /* The snapshot's checkpoint is in another rock-dir (the default
             * rock-<port> of another port, a rock-dir changed in the
             * config): its files are linked from there, that rock-dir
             * locked meanwhile, when it is the snapshot's own. */
            if (strcmp(h.checkpoint, cp) == 0 || !rockCheckpointPaired(h.checkpoint, h.pair, snap))
                rockFatal("the keyspace snapshot '%s' is the newest saved state, and its values are in the "
                          "checkpoint '%s', which is missing or incomplete (rock-dir is '%s'). Start with the "
                          "rock-dir it was written with, or remove the snapshot to start from the older '%s'.",
                          snap, h.checkpoint, abs_dir, server.rdb_filename);
            rock_warm.source = sdsdup(h.checkpoint);
            rockWarmLockSource();
            serverLog(LL_NOTICE, "rock: the keyspace snapshot's checkpoint is '%s', in another rock-dir: its "
                      "files are linked into '%s'", rock_warm.source, abs_dir);
        }
        sdsfree(cp);
        rock_warm.pair = zstrdup(h.pair);
        rock_warm.supersedes = sdsdup(h.supersedes);
        rockSnapHeaderFree(&h);
    }
    rockWarmChooseAof();
    rockWarmSweepCheckpoints(rock_warm.pair, 1);
}


/* Fill RocksDB's empty folder `db_path` from checkpoint `cp`: table and
 * blob files linked (RocksDB never changes them), the rest (MANIFEST,
 * CURRENT, OPTIONS) copied. Returns NULL, or why it failed. */
static sds rockWarmLink(const char *cp, const char *db_path) {
    DIR *d = opendir(cp);
    if (d == NULL) return sdscatfmt(sdsempty(), "can't open the checkpoint '%s': %s", cp, strerror(errno));
    struct dirent *e;
    sds err = NULL;
    while (err == NULL && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || !strcmp(e->d_name, ROCK_PAIR_FILE)) continue;
        sds src = sdscatfmt(sdsempty(), "%s/%s", cp, e->d_name);
        sds dst = sdscatfmt(sdsempty(), "%s/%s", db_path, e->d_name);
        int linked = rockHasSuffix(e->d_name, ".sst") || rockHasSuffix(e->d_name, ".blob");
        if ((linked ? link(src, dst) : rockCopyFile(src, dst)) == -1)
            err = sdscatfmt(sdsempty(), "can't %s '%s' to '%s' for a warm start: %s%s", linked ? "link" : "copy",
                            src, dst, strerror(errno), errno == EXDEV ? " (a checkpoint is hard links: start with "
                            "the rock-dir it was written in, or remove the snapshot to start from the older RDB)"
                            : "");
        sdsfree(src);
        sdsfree(dst);
    }
    closedir(d);
    if (err == NULL && rockFsyncPath(db_path, 1) == -1)
        err = sdscatfmt(sdsempty(), "can't fsync '%s': %s", db_path, strerror(errno));
    return err;
}

/* rockStartup(): RocksDB's folder is empty (its marker alone). On a warm
 * start, fill it from the checkpoint. */
void rockWarmPopulate(const char *db_path) {
    const char *pair = rock_warm.aof_start ? rock_warm.aof_pair : rock_warm.pair;
    if (!pair) return;
    sds cp = rock_warm.source ? sdsdup(rock_warm.source) : rockCheckpointPath(pair);
    sds err = rockWarmLink(cp, db_path);
    if (err) rockFatal("%s", err);
    sdsfree(cp);
    if (rock_warm.source) {
        close(rock_warm.source_lock);
        rock_warm.source_lock = -1;
    }
}

/* rockResetStoreFrom()'s fill for DEBUG LOADAOF: the AOF base's checkpoint,
 * into `db_path`. */
sds rockWarmRelinkAof(const char *db_path) {
    sds cp = rockCheckpointPath(rock_warm.aof_pair);
    sds err = rockWarmLink(cp, db_path);
    sdsfree(cp);
    return err;
}

/* The checkpoint the snapshot this server started from names: in its
 * rock-dir, or where it was linked from. */
static sds rockWarmSourcePath(void) {
    return rock_warm.source ? sdsdup(rock_warm.source) : rockCheckpointPath(rock_warm.pair);
}

/* Does this start reuse a checkpoint? */
int rockWarmStarting(void) {
    return rock_warm.pair != NULL || rock_warm.aof_start;
}

/* rockStartup(), RocksDB open: a warm start's RocksDB holds records. */
void rockWarmOpened(void) {
    if (rockWarmStarting()) rockWriteMarkDirty();
}

/* loadDataFromDisk() (patch 0042): the file to load, the snapshot on a warm
 * start. */
const char *rockStartupRdbFile(void) {
    if (!rock_warm.pair || !rock_store.db) return server.rdb_filename;
    rock_snapshot.loading = 1;
    rock_snapshot.pair = rock_warm.pair;
    rock_warm.start_us = ustime();
    serverLog(LL_NOTICE, "rock: warm start: loading the keyspace snapshot '%s' with the values in checkpoint %s",
              rock_warm.snap_path, rock_warm.pair);
    return rock_warm.snap_path;
}

/* ...and loaded (`ret` is rdbLoad()'s). A snapshot that fails to load stops
 * the start: it is the newest state, and the stock RDB is older. */
void rockStartupRdbLoaded(int ret) {
    if (!rock_snapshot.loading) return;
    rock_snapshot.loading = 0;
    rock_snapshot.pair = NULL;
    if (ret != C_OK)
        rockFatal("the keyspace snapshot '%s' failed to load (%s). It is the newest saved state; to start "
                      "from the older '%s' instead, remove it.", rock_warm.snap_path,
                      errno ? strerror(errno) : "see above", server.rdb_filename);
    serverLog(LL_NOTICE, "rock: warm start done in %.3f s: %lld keys, %lld values reused on disk, %lld records "
              "deleted (keys expired while down)", (double)(ustime() - rock_warm.start_us) / 1e6,
              dbTotalServerKeyCount(), rock_ks_stats.warm_reused, rock_ks_stats.warm_dropped);
}

/* Once a second (rockCron()): a stock RDB written since the snapshot this
 * server started from (BGSAVE, a save point, DEBUG RELOAD, a replica's full
 * sync) is the newest saved state now. The snapshot and its checkpoint go,
 * and with them the disk the checkpoint holds (table files the live RocksDB
 * has compacted away since). */
static void rockWarmMeasureDir(sds cp) {
    DIR *d = opendir(cp);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        struct stat st;
        sds f = sdscatfmt(sdsempty(), "%s/%s", cp, e->d_name);
        if (e->d_name[0] != '.' && stat(f, &st) == 0 && S_ISREG(st.st_mode)) {
            rock_warm.cp_bytes += st.st_size;
            int table = rockHasSuffix(e->d_name, ".sst") || rockHasSuffix(e->d_name, ".blob");
            if (table && st.st_nlink == 1) rock_warm.cp_own_bytes += st.st_size;
        }
        sdsfree(f);
    }
    if (d) closedir(d);
    sdsfree(cp);
}

/* The checkpoints of the newest pairs: dump.rdb's snapshot's, the AOF
 * base's. */
static void rockWarmMeasure(void) {
    rock_warm.cp_bytes = rock_warm.cp_own_bytes = 0;
    if (rock_warm.supersedes) rockWarmMeasureDir(rockWarmSourcePath());
    if (rock_warm.aof_pair) rockWarmMeasureDir(rockCheckpointPath(rock_warm.aof_pair));
}

/* The checkpoint's size, for ROCK REPORT (measured once a second). */
void rockWarmCheckpointBytes(long long *bytes, long long *own) {
    *bytes = rock_warm.cp_bytes;
    *own = rock_warm.cp_own_bytes;
}

void rockWarmCron(void) {
    rockWarmSaveResolve();
    rockWarmMeasure();
    if (!rock_warm.supersedes) return;
    sds now = rockRdbIdentity(server.rdb_filename);
    int superseded = strcmp(now, rock_warm.supersedes) != 0;
    sdsfree(now);
    if (!superseded) return;
    rockSnapHeader h;
    if (rockReadSnapHeader(rock_warm.snap_path, &h) == C_OK && !strcmp(h.pair, rock_warm.pair) &&
        unlink(rock_warm.snap_path) == -1)
        serverLog(LL_WARNING, "rock: can't remove the superseded snapshot '%s': %s", rock_warm.snap_path,
                  strerror(errno));
    rockSnapHeaderFree(&h);
    sds cp = rockWarmSourcePath();
    if (rockRemoveTree(cp) == -1)
        serverLog(LL_WARNING, "rock: can't remove the checkpoint '%s': %s", cp, strerror(errno));
    else
        serverLog(LL_NOTICE, "rock: '%s' was saved after the keyspace snapshot '%s': the snapshot and its "
                  "checkpoint are removed", server.rdb_filename, rock_warm.snap_path);
    sdsfree(cp);
    sdsfree(rock_warm.supersedes);
    rock_warm.supersedes = NULL;
    sdsfree(rock_warm.source);
    rock_warm.source = NULL;
    rockWarmMeasure();
}

/* ---------------------------------------------------------------------------
 * Clean stop
 * ------------------------------------------------------------------------ */

/* A RocksDB checkpoint for pair `pair` in `cp`, with its ROCK-PAIR file
 * naming the snapshot, all synced. Any thread: the writer takes a save
 * point's. Returns NULL, or why it failed (nothing left behind). */
static sds rockWarmMakeCheckpoint(const char *pair, const char *cp, const char *snap) {
    char *err = NULL;
    rocksdb_checkpoint_t *ck = rocksdb_checkpoint_object_create(rock_store.db, &err);
    if (ck) {
        /* log_size_for_flush 0: the memtables are flushed first (the WAL
         * is off, so they hold the only copy of recent writes). */
        rocksdb_checkpoint_create(ck, cp, 0, &err);
        rocksdb_checkpoint_object_destroy(ck);
    }
    if (err) {
        sds msg = sdscatfmt(sdsempty(), "RocksDB checkpoint '%s' failed: %s", cp, err);
        rocksdb_free(err);
        rockRemoveTree(cp);
        return msg;
    }
    sds pf = sdscatfmt(sdsempty(), "%s/%s", cp, ROCK_PAIR_FILE);
    sds body = sdscatfmt(sdsempty(), "%s\n%s\n", pair, snap);
    int fd = open(pf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int ok = fd != -1 && write(fd, body, sdslen(body)) == (ssize_t)sdslen(body) && fsync(fd) == 0;
    if (fd != -1) close(fd);
    ok = ok && rockFsyncPath(cp, 1) == 0 && rockFsyncPath(rock_warm.abs_dir, 1) == 0;
    sds msg = ok ? NULL : sdscatfmt(sdsempty(), "can't write and sync '%s': %s", pf, strerror(errno));
    sdsfree(pf);
    sdsfree(body);
    if (msg) rockRemoveTree(cp);
    return msg;
}

/* Can a pair be written now? `what` names the save for the log. */
static int rockWarmSameFs(const char *what) {
    struct stat a, b;
    if (stat(rock_warm.abs_dir, &a) == -1 || stat(rock_store.db_path, &b) == -1 || a.st_dev != b.st_dev) {
        serverLog(LL_WARNING, "rock: %s: no keyspace snapshot, '%s' and '%s' are on different filesystems "
                  "(a checkpoint is hard links); saving a stock file", what, rock_warm.abs_dir, rock_store.db_path);
        return 0;
    }
    return 1;
}

/* An AOF rewrite's base as a pair needs the RDB format. */
static int rockWarmAofPairable(void) {
    if (!rock_store.db || !rock.warm_restart || !server.aof_use_rdb_preamble) return 0;
    if (rockWriteError()) {
        serverLog(LL_WARNING, "rock: AOF rewrite: no keyspace snapshot, RocksDB writes fail (%s); writing a stock "
                  "base", rockWriteError());
        return 0;
    }
    return rockWarmSameFs("AOF rewrite");
}

static int rockWarmPairable(const char *what) {
    if (!rock_store.db || !rock.warm_restart || server.aof_state != AOF_OFF) return 0;
    if (rockWriteError()) {
        serverLog(LL_WARNING, "rock: %s: no keyspace snapshot, RocksDB writes fail (%s); saving a stock RDB",
                  what, rockWriteError());
        return 0;
    }
    return rockWarmSameFs(what);
}

/* The pair just committed (`pair`, taken; its snapshot superseding
 * `supersedes`, taken) is the newest state: the checkpoints of earlier
 * pairs go, the one in another rock-dir this server started from too. */
static void rockWarmAdopt(char *pair, sds supersedes) {
    zfree(rock_warm.pair);
    rock_warm.pair = pair;
    sdsfree(rock_warm.supersedes);
    rock_warm.supersedes = supersedes;
    rockWarmSweepCheckpoints(pair, 0);
    if (rock_warm.source) {
        /* In another rock-dir: no snapshot names it any more. */
        rockRemoveTree(rock_warm.source);
        sdsfree(rock_warm.source);
        rock_warm.source = NULL;
    }
}

/* ---------------------------------------------------------------------------
 * Save points (rock-warm-saves yes)
 *
 * A save point's BGSAVE writes the keyspace snapshot instead of a stock
 * RDB, so that the newest saved state after a crash is a pair too. The
 * child writes the snapshot from its copy of the keyspace, as at a clean
 * stop; the checkpoint of the same instant is taken by the writer thread,
 * at a barrier queued right after fork() (rockWriteBarrier()): every write
 * queued before the fork is committed then, none queued after it. Nothing
 * else changes RocksDB meanwhile: a FLUSHALL while the barrier waits drops
 * its storage ids with range deletes queued behind it, not by replacing
 * RocksDB. The child renames its file, the commit point, only once the
 * barrier has written '1' (checkpoint made) to a pipe; a checkpoint that
 * fails, or a queue thrown away, writes '0' and the save fails as any
 * BGSAVE does. rockWarmCron() sees the child gone and adopts the pair, or
 * removes the checkpoint of a snapshot that was not committed.
 * ------------------------------------------------------------------------ */

#define ROCK_WARM_COMMIT_WAIT_MS 120000

/* Writer thread (or main, `run` 0: the queue was thrown away). */
static void rockWarmSaveBarrier(void *arg, int run) {
    UNUSED(arg);
    long long start = ustime();
    sds err = run ? rockWarmMakeCheckpoint(rock_warm.bg_pair, rock_warm.bg_cp,
                                           rock_warm.bg_aof ? rock_warm.manifest_path : rock_warm.snap_path)
                  : sdsnew("the queued RocksDB writes were thrown away");
    char c = err ? '0' : '1';
    rock_warm.bg_err = err;
    rock_warm.bg_cp_us = ustime() - start;
    if (write(rock_warm.bg_wfd, &c, 1) != 1) {
        /* The child is gone: rockWarmCron() cleans up. */
    }
    close(rock_warm.bg_wfd);
    atomicSet(rock_warm.bg_state, err ? -1 : 1);
}

/* The AOF base the manifest names now, as a path. */
static sds rockAofBasePath(void) {
    if (!server.aof_manifest || !server.aof_manifest->base_aof_info) return NULL;
    return makePath(server.aof_dirname, server.aof_manifest->base_aof_info->file_name);
}

/* Is `path` a snapshot of pair `pair`? */
static int rockSnapshotOfPair(const char *path, const char *pair) {
    rockSnapHeader h = {0};
    int yes = path && rockReadSnapHeader(path, &h) == C_OK && !strcmp(h.pair, pair);
    rockSnapHeaderFree(&h);
    return yes;
}

static void rockWarmBgForget(void) {
    zfree(rock_warm.bg_pair);
    sdsfree(rock_warm.bg_cp);
    sdsfree(rock_warm.bg_supersedes);
    sdsfree(rock_warm.bg_err);
    rock_warm.bg_pair = NULL;
    rock_warm.bg_cp = rock_warm.bg_supersedes = rock_warm.bg_err = NULL;
}

/* Once the child has ended and the barrier has run: adopt the pair if its
 * snapshot was committed (renamed over dump.rdb's snapshot, or the base the
 * AOF manifest names), otherwise remove the checkpoint. */
static void rockWarmSaveResolve(void) {
    if (!rock_warm.bg_pair) return;
    int state;
    atomicGet(rock_warm.bg_state, state);
    if (state == 0 || (server.child_pid != -1 && server.child_pid == rock_warm.bg_child)) return;
    const char *what = rock_warm.bg_aof ? "AOF rewrite" : "save point";
    sds base = rock_warm.bg_aof ? rockAofBasePath() : sdsnew(rock_warm.snap_path);
    int committed = state == 1 && rockSnapshotOfPair(base, rock_warm.bg_pair);
    if (committed) {
        rock_ks_stats.warm_saves++;
        serverLog(LL_NOTICE, "rock: %s written as the keyspace snapshot '%s' with checkpoint '%s' (made by the "
                  "writer in %lld ms)", what, base, rock_warm.bg_cp, rock_warm.bg_cp_us / 1000);
        if (rock_warm.bg_aof) {
            zfree(rock_warm.aof_pair);
            rock_warm.aof_pair = rock_warm.bg_pair;
            rockWarmSweepCheckpoints(rock_warm.pair, 0);
        } else {
            rockWarmAdopt(rock_warm.bg_pair, rock_warm.bg_supersedes);
            rock_warm.bg_supersedes = NULL;
        }
        rock_warm.bg_pair = NULL;
    } else {
        rock_ks_stats.warm_save_failures++;
        serverLog(LL_WARNING, "rock: the %s's keyspace snapshot was not committed (%s); its checkpoint is "
                  "removed", what, rock_warm.bg_err ? rock_warm.bg_err : "the child failed or was killed");
        if (state == 1) rockRemoveTree(rock_warm.bg_cp);
    }
    sdsfree(base);
    rockWarmBgForget();
}

/* Before fork(): can this save write a pair (`aof`: an AOF rewrite's base)?
 * If so, the child-to-be's snapshot fields and the pipe are set up and 1 is
 * returned; rockWarmBgForked() follows the fork. */
static int rockWarmBgPrepare(int aof) {
    if (!rock.warm_saves) return 0;
    rockWarmSaveResolve();
    if (rock_warm.bg_pair || rockWriteBarrierWaiting()) return 0;
    if (aof ? !rockWarmAofPairable() : !rockWarmPairable("save point")) return 0;
    if (pipe(rock_warm.bg_fds) == -1) {
        serverLog(LL_WARNING, "rock: can't create a pipe for a keyspace snapshot (%s); saving a stock file",
                  strerror(errno));
        return 0;
    }
    char pair[17];
    getRandomHexChars(pair, 16);
    pair[16] = '\0';
    rock_warm.bg_pair = zstrdup(pair);
    rock_warm.bg_cp = rockCheckpointPath(pair);
    rock_warm.bg_supersedes = aof ? sdsnew("aof") : rockRdbIdentity(server.rdb_filename);
    rock_warm.bg_aof = aof;
    rock_warm.bg_err = NULL;
    rock_snapshot.writing = 1;
    rock_snapshot.pair = rock_warm.bg_pair;
    rock_snapshot.supersedes = rock_warm.bg_supersedes;
    rock_snapshot.checkpoint = rock_warm.bg_cp;
    rock_snapshot.commit_wait = 1;
    rock_snapshot.commit_fds[0] = rock_warm.bg_fds[0];
    rock_snapshot.commit_fds[1] = rock_warm.bg_fds[1];
    return 1;
}

/* After fork() (`pid` -1: it failed): queue the barrier that takes the
 * checkpoint. */
static void rockWarmBgForked(pid_t pid) {
    memset(&rock_snapshot, 0, sizeof(rock_snapshot));
    close(rock_warm.bg_fds[0]);
    if (pid == -1) {
        close(rock_warm.bg_fds[1]);
        rockWarmBgForget();
        return;
    }
    rock_warm.bg_child = pid;
    rock_warm.bg_wfd = rock_warm.bg_fds[1];
    atomicSet(rock_warm.bg_state, 0);
    if (rockWriteBarrier(rockWarmSaveBarrier, NULL) == C_ERR) rockWarmSaveBarrier(NULL, 0);
}

/* serverCron()'s save point (patch 0045). Returns 1 when it started (or
 * tried to start) a BGSAVE writing a pair, 0 when the stock BGSAVE runs
 * instead: rock-warm-saves no, a pair can't be written now, or the last
 * pair's checkpoint is still waiting for the writer. */
int rockSavePointSnapshot(rdbSaveInfo *rsi) {
    if (!rockWarmBgPrepare(0)) return 0;
    int ret = rdbSaveBackground(SLAVE_REQ_NONE, rock_warm.snap_path, rsi);
    rockWarmBgForked(ret == C_OK ? server.child_pid : -1);
    return 1;
}

/* rewriteAppendOnlyFileBackground() (patch 0047) before and after its
 * fork: with rock-warm-saves yes and aof-use-rdb-preamble yes the new base
 * is a keyspace snapshot paired with a checkpoint, so that loading the AOF
 * (after a crash too) costs what the keys cost; its incr files replay on
 * top as usual. */
void rockAofRewritePrepare(void) {
    rockWarmBgPrepare(1);
}

void rockAofRewriteForked(pid_t pid) {
    if (rock_snapshot.writing) rockWarmBgForked(pid);
}

/* rockAofBaseLoad() (rock.c), for a load that is not the start-up's
 * (DEBUG LOADAOF, the keyspace and RocksDB just emptied): is the base the
 * snapshot of this server's AOF pair, so that RocksDB must be rebuilt from
 * its checkpoint (rockWarmRelinkAof()) before it loads? */
int rockWarmAofReload(void) {
    if (rock_warm.aof_start && !rock_warm.aof_loaded) return 0; /* the start's own */
    rockWarmSaveResolve(); /* a rewrite that just ended */
    if (!rock_store.db || !rock_warm.aof_pair) return 0;
    sds base = rockAofBasePath();
    int ours = rockSnapshotOfPair(base, rock_warm.aof_pair);
    sdsfree(base);
    return ours;
}

/* The AOF's base in RDB format: a snapshot base loads with its checkpoint,
 * chosen at start-up or (`relinked`) just linked into an emptied RocksDB. */
int rockWarmAofBaseLoad(rio *rdb, int relinked) {
    int warm = rock_store.db && (relinked || (rock_warm.aof_start && !rock_warm.aof_loaded));
    if (warm) {
        rock_snapshot.loading = 1;
        rock_snapshot.pair = rock_warm.aof_pair;
        rock_warm.start_us = ustime();
    }
    int ret = rdbLoadRio(rdb, RDBFLAGS_AOF_PREAMBLE, NULL);
    if (!warm) return ret;
    rock_snapshot.loading = 0;
    rock_snapshot.pair = NULL;
    rock_warm.aof_loaded = 1;
    if (ret != C_OK) serverLog(LL_WARNING, "rock: the AOF's base, a keyspace snapshot, failed to load");
    if (ret == C_OK)
        serverLog(LL_NOTICE, "rock: warm start done in %.3f s: the AOF's base, %lld keys, %lld values reused on "
                  "disk, %lld records deleted (keys expired while down); the incr files follow",
                  (double)(ustime() - rock_warm.start_us) / 1e6, dbTotalServerKeyCount(),
                  rock_ks_stats.warm_reused, rock_ks_stats.warm_dropped);
    return ret;
}

/* rdbSave() (patch 0046) and rewriteAppendOnlyFile() (patch 0048), right
 * before the rename that commits the file: a save point's or an AOF
 * rewrite's child waits for its checkpoint. Returns C_ERR (errno set)
 * when the checkpoint was not made: the snapshot is then not renamed. */
int rockSnapshotCommitWait(void) {
    if (!rock_snapshot.writing || !rock_snapshot.commit_wait) return C_OK;
    close(rock_snapshot.commit_fds[1]); /* the parent's end: EOF if it dies */
    struct pollfd p = {.fd = rock_snapshot.commit_fds[0], .events = POLLIN};
    char c = 0;
    int n = poll(&p, 1, ROCK_WARM_COMMIT_WAIT_MS);
    if (n == 1 && read(p.fd, &c, 1) == 1 && c == '1') return C_OK;
    serverLog(LL_WARNING, "rock: the keyspace snapshot's checkpoint %s (%s): the snapshot is not committed",
              n == 0 ? "took too long" : "was not made", rock_snapshot.checkpoint);
    errno = EIO;
    return C_ERR;
}

/* prepareForShutdown() (patch 0043), in place of the final rdbSave(): write
 * a keyspace snapshot and its checkpoint. Returns C_OK when it did; C_ERR
 * (logged, nothing left behind) lets the stock save run instead. */
int rockShutdownSnapshot(rdbSaveInfo *rsi) {
    if (!rockWarmPairable("shutdown")) return C_ERR;
    long long start = ustime();
    /* A backlog a healthy disk commits in this time; past it (a stalled
     * disk) the stop does not wait: the stock save reads the pending
     * values from RAM. */
    if (!rockWriteDrain(ROCK_WARM_DRAIN_MS) || rockPendingCount()) {
        serverLog(LL_WARNING, "rock: shutdown: no keyspace snapshot, %lld RocksDB writes not committed; saving "
                  "a stock RDB", rockWriteOutstanding() + rockPendingCount());
        return C_ERR;
    }
    char pair[17];
    getRandomHexChars(pair, 16);
    pair[16] = '\0';
    sds cp = rockCheckpointPath(pair);
    sds err = rockWarmMakeCheckpoint(pair, cp, rock_warm.snap_path);
    if (err) {
        serverLog(LL_WARNING, "rock: shutdown: no keyspace snapshot, %s; saving a stock RDB", err);
        sdsfree(err);
        sdsfree(cp);
        return C_ERR;
    }
    sds supersedes = rockRdbIdentity(server.rdb_filename);
    rock_snapshot.writing = 1;
    rock_snapshot.pair = pair;
    rock_snapshot.supersedes = supersedes;
    rock_snapshot.checkpoint = cp;
    int ok = rdbSave(SLAVE_REQ_NONE, rock_warm.snap_path, rsi) == C_OK;
    memset(&rock_snapshot, 0, sizeof(rock_snapshot));
    if (!ok) {
        serverLog(LL_WARNING, "rock: writing the warm-restart snapshot failed; saving a stock RDB");
        rockRemoveTree(cp);
        sdsfree(cp);
        sdsfree(supersedes);
        return C_ERR;
    }
    rockWarmAdopt(zstrdup(pair), supersedes);
    serverLog(LL_NOTICE, "rock: warm-restart snapshot '%s' written with checkpoint '%s' in %.3f s "
              "(%lld keys, %lld of them cold)", rock_warm.snap_path, cp, (double)(ustime() - start) / 1e6,
              dbTotalServerKeyCount(), rockColdKeys());
    sdsfree(cp);
    return C_OK;
}
