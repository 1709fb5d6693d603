/* rock.h -- redis-rock: the SSD tier's interface to the upstream tree.
 *
 * This header is included at the end of server.h (patch 0002), so every
 * upstream file sees the rock hooks and the `rock` global. It owns:
 *   - the rock configuration values (bound to the upstream config table);
 *   - the process-wide rock state (RocksDB handles, the rock-dir lock);
 *   - the prototypes of every hook the patch series calls;
 *   - what each tier file offers the others, in sections by file (the
 *     read path's and the reader pool's in rock_read.h, rock_readers.h).
 * All logic lives in src/rock_*.c; the patches only call into it. Which
 * file may call which is the layering (docs/architecture.md, "Layers"),
 * checked by `make check-layers`. */

#ifndef __REDIS_ROCK_H
#define __REDIS_ROCK_H

#include <rocksdb/c.h>

/* rock-compression values. */
#define ROCK_COMPRESSION_NONE 0
#define ROCK_COMPRESSION_LZ4 1
#define ROCK_COMPRESSION_ZSTD 2
#define ROCK_COMPRESSION_LZ4_ZSTD 3 /* LZ4 on upper levels, ZSTD at the bottom. */

/* Name of the RocksDB folder inside rock-dir, and of the files beside it. */
#define ROCK_DB_SUBDIR "rocksdb"
#define ROCK_LOCK_FILE "redis-rock.lock"
#define ROCK_MARKER_FILE "REDIS-ROCK-DATA"

#define ROCK_OBJ_TYPES 7 /* OBJ_STRING .. OBJ_STREAM */

/* Record formats (rock_store.c, rock_split.c): every record starts with a
 * format byte, the encoding the value had in RAM and its LRU/LFU field. */
#define ROCK_FORMAT_V2 2    /* a whole value: RDB type byte + payload */
#define ROCK_FORMAT_SPLIT 3 /* a collection's metadata; elements apart */
#define ROCK_HEADER_LEN 5   /* format, encoding, LRU/LFU field */
#define ROCK_FORMAT_LFU 0x40 /* format byte flag: the field is LFU data */
#define ROCK_FIELD_TAG_LFU (1u << 24) /* the same, on a field passed around
                                       * with its kind (rockFieldTag()) */
#define ROCK_SPLIT_BIT 0x80000000u /* storage ids of element records */
#define ROCK_SPLIT_META_LEN (ROCK_HEADER_LEN + 1 + 16) /* a split metadata record */

/* rockEvictEntry() results. */
#define ROCK_EVICT_OK 0       /* moved to disk (or dropped: clean copy on disk) */
#define ROCK_EVICT_ALREADY 1  /* already cold */
#define ROCK_EVICT_SMALL 2    /* under rock-min-value-size: stays in RAM */
#define ROCK_EVICT_TYPE 3     /* a type that stays in RAM (module values) */
#define ROCK_EVICT_PINNED 4   /* paged in for a command that has not run yet */
#define ROCK_EVICT_ERROR 5    /* RocksDB refused the write (logged) */
#define ROCK_EVICT_DISABLED 6 /* rock-enabled no */

/* A key whose disk copy is a split collection (rock_split.c): the version
 * of its elements, how many there are, and the element writes of point
 * commands (rock_point.c) queued for it and not yet committed. Shared by
 * the db's split dict and those queued writes (refs); freed with the last. */
typedef struct rockSplitInfo {
    uint64_t version;
    uint64_t count;
    unsigned char header[ROCK_HEADER_LEN + 1]; /* the metadata record's header
                        * and RDB type byte: point writes rewrite the record
                        * from it, reading nothing (rockSplitMeta()) */
    long long ops;     /* element/metadata writes queued, not yet committed */
    uint64_t writes;   /* point writes so far (a sequence number) */
    dict *written;     /* element -> the sequence number of its last point
                        * write: an element read before it is stale
                        * (rock_point.c); NULL until the first write */
    uint64_t forgotten;/* writes up to this one may have left `written` */
    int readers;       /* point jobs and stashes holding elements read of it
                        * (they alone need `written`: with none, it is
                        * emptied and writes are not noted) */
    dict *dirty;       /* paged in whole and still clean: the elements point
                        * writes changed in RAM since (rock_point.c), which
                        * its next eviction writes alone; NULL if none */
    int refs;
} rockSplitInfo;

void rockSplitInfoRelease(rockSplitInfo *si);

/* Per-database tier state; SWAPDB swaps these along with the dicts. */
typedef struct rockDb {
    dict *clean;       /* hot keys whose disk copy is still valid (hot-clean),
                        * each with a u64: rockCleanStamp() and the LRU/LFU
                        * field its disk copy holds (rockCleanDiskField()) */
    dict *stale;       /* hot keys whose disk copy is outdated and not yet
                        * deleted (overwritten or modified since): the put
                        * of their next eviction supersedes it; a delete or
                        * expiry of the key deletes it */
    long long cold;    /* keys whose value is on disk */
    dict *split;       /* keys whose disk copy (committed or pending) is
                        * stored element by element -> rockSplitInfo */
} rockDb;

/* Counters reset by CONFIG RESETSTAT (every field a long long: they are
 * added up field by field, rockStatsTotal() in rock_report.c). */
typedef struct rockStats {
    long long evictions;    /* values moved out of RAM */
    long long clean_drops;  /* ...of which dropped without a write (clean) */
    long long loads;        /* values paged back in */
    long long sync_loads;   /* ...of which on the event loop (safety net) */
    long long reads, read_bytes;   /* RocksDB reads */
    long long writes, write_bytes; /* RocksDB value writes */
    long long lzf_skipped;  /* string values stored without trying LZF
                             * (recent ones did not compress) */
    long long deletes;      /* RocksDB deletes of single keys */
    long long access_updates; /* LRU/LFU fields updated on disk (clean drops) */
    long long errors;       /* RocksDB errors and bad records */
    long long write_errors; /* failed write batches (values kept in RAM) */
    long long write_batches;/* committed write batches */
    long long pending_hits; /* values read back from the pending buffer */
    long long write_waits;  /* event loop waited for the writer (backlog) */
    long long write_postponed; /* commands that waited for the writer (backlog) */
    long long store_resets; /* RocksDB replaced by an empty one (FLUSHALL) */
    long long read_ahead;   /* reads queued ahead for a pipeline's next commands */
    long long read_ahead_dropped; /* ...whose value was not paged in: over the
                                   * byte cap, or its client gone */
    long long master_resyncs; /* master links dropped: a read for its command failed */
    long long external_overshoots; /* eviction calls that found memory over
                                    * maxmemory by RocksDB's own memory only */
    long long eviction_samples; /* keys eviction looked at for a value to move */
    long long nothing_movable_deletes; /* keys the policy deleted: no value could move */
    long long split_writes;     /* collections written element by element */
    long long element_writes;   /* ...their element records */
    long long split_loads;      /* split collections paged in whole */
    long long split_renames;    /* RENAMEs of cold split collections (no page-in) */
    long long dirty_flushes;    /* clean drops of split collections writing the
                                 * elements point writes changed in RAM */
    long long element_reads;    /* element records read (page-ins, point reads) */
    long long point_reads;      /* commands served from element records
                                 * without paging the collection in */
    long long loading_spills;   /* collections spilled to disk while loading */
    long long loading_peak_memory; /* highest used_memory sampled while loading */
    long long value_hits_ram;  /* value accesses served from RAM ... */
    long long value_hits_disk; /* ...and from disk (rock_hooks.c, rockValueAccessed()) */
    long long fork_waits;      /* background forks held for defrag (rockForkWait()) */
    long long warm_reused;     /* cold values a warm start took from its checkpoint */
    long long warm_dropped;    /* ...whose records it deleted (keys expired while down) */
    long long warm_saves;      /* save points written as pairs (rock-warm-saves) */
    long long warm_save_failures; /* ...and those whose pair was not committed */
} rockStats;

/* Block-cache hits and block reads of the reader threads' RocksDB reads, by
 * kind (rock_store.c); added by the readers, reset by CONFIG RESETSTAT.
 * Shown as rocksdb_<name> (rockBlockCountName()). */
enum {
    ROCK_BLK_INDEX_HITS, ROCK_BLK_INDEX_READS,
    ROCK_BLK_FILTER_HITS, ROCK_BLK_FILTER_READS,
    ROCK_BLK_DATA_HITS, ROCK_BLK_DATA_READS,
    ROCK_BLK_READ_BYTES,   /* bytes of all blocks read from disk */
    ROCK_BLK_FILTER_SKIPS, /* files a filter said to skip */
    ROCK_BLK_BLOB_READS,   /* records read from blob files (>= 256 KB) */
    ROCK_BLK_BLOB_READ_BYTES,
    ROCK_BLK_COUNTS
};

/* The rock-* configuration (rock_conf.c, layer 1, so that every layer can
 * read it). Written only by config.c (the config file, CONFIG SET) and the
 * apply functions of rock.c. */
struct rockConfig {
    int enabled;                     /* rock-enabled */
    char *dir;                       /* rock-dir as configured ("": rock-<port>) */
    long long min_value_size;        /* rock-min-value-size */
    long long split_min_elements;    /* rock-split-min-elements */
    int io_threads;                  /* rock-io-threads */
    int read_ahead;                  /* rock-read-ahead */
    unsigned long long block_cache_size; /* rock-block-cache-size */
    int direct_io;                   /* rock-direct-io */
    int compression;                 /* rock-compression */
    long long min_free_disk;         /* rock-min-free-disk */
    int debug_read_delay_ms;         /* rock-debug-read-delay (tests only) */
    int debug_write_delay_ms;        /* rock-debug-write-delay (tests only) */
    int debug_evict_all;             /* rock-debug-evict-all */
    long long sizing_memory;         /* rock-sizing-memory (0: ROCK SIZING off) */
    long long sizing_sample_every;   /* rock-sizing-sample-every */
    int defrag;                      /* rock-defrag */
    int warm_restart;                /* rock-warm-restart */
    int warm_saves;                  /* rock-warm-saves */

    /* Start-up-only options as they were when the server started. */
    struct {
        int enabled, io_threads, direct_io;
        char *dir;
    } started;
};

extern struct rockConfig rock;
/* Each layer counts in its own rockStats (a field it does not count stays
 * 0); ROCK REPORT and INFO rock add the three up, CONFIG RESETSTAT resets
 * each through its layer's function. */
extern rockStats rock_store_stats;   /* rock_store.c, rock_split.c */
extern rockStats rock_write_stats;   /* rock_write.c */
extern rockStats rock_ks_stats;      /* the keyspace layer */
void rockStoreResetStats(void);
void rockWriteResetStats(void);
void rockKeysResetStats(void);

/* The storage layer's state (rock_store.c): the RocksDB handle and options,
 * and what the record format needs. Changed only by rock_store.c's
 * functions; other layers read it. */
struct rockStore {
    char *abs_dir;                   /* rock-dir resolved at startup */
    char *db_path;                   /* abs_dir/rocksdb */
    char *real_db_path;              /* db_path, symlinks resolved (or NULL) */
    rocksdb_t *db;                   /* NULL: closed (or could not reopen) */
    rocksdb_options_t *opts;
    rocksdb_block_based_table_options_t *table_opts;
    rocksdb_cache_t *cache;
    rocksdb_filterpolicy_t *filter;
    long long opened_at;             /* unix time (ms) of the open */
    redisAtomic int l0_applied;      /* L0 files that start a compaction, as
                                      * RocksDB has it: set by the writer
                                      * thread once SetOptions took it */
    rocksdb_writeoptions_t *wopts;   /* WAL off */
    rocksdb_readoptions_t *ropts;    /* fills the block cache */
    rocksdb_readoptions_t *ropts_nofill; /* leaves it alone */
    robj *cold[ROCK_OBJ_TYPES];      /* the shared sentinel of each type */
    client *decode_client;           /* context for decoding records */
    uint32_t *sids;                  /* per db: its storage id (key prefix) */
    uint32_t next_sid;               /* next unused storage id */
    uint64_t next_split_version;     /* version of the next split write */
    redisAtomic long long blocks[ROCK_BLK_COUNTS];
};

extern struct rockStore rock_store;

/* The keyspace layer's state (rock_keys.c). */
struct rockKeyspace {
    rockDb *dbs;                     /* server.dbnum entries */
    client *executing_client;        /* client whose command call() runs */
    int existence_only;              /* lookups only ask whether a key exists */
    robj *point_value;               /* a cold collection's named elements,
                                      * standing in for it while a point
                                      * read runs (rock_point.c) */
    long long cold;                  /* cold keys of all dbs (the sum of
                                      * rockDb.cold: asked by every command) */
#define ROCK_COUNTED_MAX 8
    robj *counted[ROCK_COUNTED_MAX]; /* values the running command's lookups
                                      * counted (value_hits_*): XREAD, PFMERGE,
                                      * LMOVE k k look a key up twice; reset
                                      * by rockCallEnter/Leave() */
    int ncounted;
};

extern struct rockKeyspace rock_ks;
extern configEnum rock_compression_enum[];
const char *rockCompressionConfigName(int mode);

/* rock_files.c: files and folders of rock-dir. */
void rockFatal(const char *fmt, ...);
int rockMkdirs(const char *path);
int rockRemoveTree(const char *path);
int rockEmptyDirExcept(const char *path, const char *keep);
int rockDirIsEmpty(const char *path);
int rockFsyncPath(const char *path, int dir);
int rockCopyFile(const char *src, const char *dst);

/* rock.c: lifecycle and configuration. */
void rockBeforeSleep(void);
void rockStartup(void);
void rockShutdown(void);
typedef sds rockStoreFillProc(const char *db_path);
void rockEmptyDbs(redisDb *dbarray, int dbnum);
int rockApplyStartupOnly(const char **err);
int rockApplyBlockCacheSize(const char **err);
int rockApplyCompression(const char **err);
int rockApplySizingMemory(const char **err);

/* A module value whose data pointer is this marker is a cold sentinel (one
 * shared per module type, so TYPE and OBJECT still see the module type). */
extern char rock_module_cold_marker;

/* Every thread of the tier starts with this: its name (as in `top -H`),
 * and SIGALRM blocked, as upstream's bio.c does, so that the watchdog's
 * signal always lands on the main thread and reports its stack. */
static inline void rockThreadInit(const char *title) {
    redis_set_thread_title(title);
    sigset_t sigset;
    sigemptyset(&sigset);
    sigaddset(&sigset, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &sigset, NULL);
}

/* rock_element.c: element writes of split collections. */
void rockPointNoteWritten(rockSplitInfo *si, sds ele);
sds rockPointValueOf(robj *o, sds ele);
int rockPointFlushDirty(redisDb *db, sds key, robj *val, rockSplitInfo *si);

/* rock_point.c: point reads of split collections, around call(). */
void rockPointEnter(client *c);
unsigned long rockPointLength(const robj *o);
void rockPointLeave(void);

/* True when `o` is a cold sentinel: the value lives in RocksDB. */
static inline int rockIsCold(const robj *o) {
    if (o->type == OBJ_MODULE)
        return ((const moduleValue *)o->ptr)->value == (void *)&rock_module_cold_marker;
    return o->type < ROCK_OBJ_TYPES && o == rock_store.cold[o->type];
}

/* ...or the stand-in of a cold collection while a point read runs
 * (rock_point.c): for the hooks that drop a key's disk copy. */
static inline int rockIsColdOrPoint(const robj *o) {
    return rockIsCold(o) || o == rock_ks.point_value;
}

/* A hot-clean entry's u64 value: bits 0-23 the stamp the sampling orders by
 * (rock_evict.c; the LRU clock of its page-in, renewed from the value's),
 * bits 32-55 the LRU/LFU field of its disk copy, bit 63 set by TOUCH; a
 * clean drop looks at both to know whether to update the record's field
 * (rockEvictEntry()). */
#define ROCK_CLEAN_TOUCHED (1ULL << 63)
static inline unsigned int rockCleanStamp(dictEntry *ce) {
    return dictGetUnsignedIntegerVal(ce) & 0xffffff;
}
static inline unsigned int rockCleanDiskField(dictEntry *ce) {
    return (dictGetUnsignedIntegerVal(ce) >> 32) & 0xffffff;
}
static inline int rockCleanTouched(dictEntry *ce) {
    return (dictGetUnsignedIntegerVal(ce) & ROCK_CLEAN_TOUCHED) != 0;
}
static inline void rockCleanInit(dictEntry *ce, unsigned int stamp, unsigned int disk_field) {
    dictSetUnsignedIntegerVal(ce, ((uint64_t)(disk_field & 0xffffff) << 32) | (stamp & 0xffffff));
}
static inline void rockCleanSetStamp(dictEntry *ce, unsigned int stamp) {
    dictSetUnsignedIntegerVal(ce, (dictGetUnsignedIntegerVal(ce) & ~0xffffffULL) | (stamp & 0xffffff));
}
static inline void rockCleanMarkTouched(dictEntry *ce) {
    dictSetUnsignedIntegerVal(ce, dictGetUnsignedIntegerVal(ce) | ROCK_CLEAN_TOUCHED);
}

/* rock_store.c: sentinels, record format, RocksDB primitives. */
void rockStoreInit(void);
#define ROCK_L0_TRIGGER_DEFAULT 4 /* RocksDB's; rock.c raises it while writes come fast */
#define ROCK_L0_TRIGGER_LOAD 24   /* rock.c's while a load moves values to disk */
/* With direct I/O, what a compaction reads ahead in each of its input files:
 * memory outside maxmemory, for every input file (RocksDB's default there,
 * 2 MB a file, takes RSS past its bound when a load's L0 files are merged;
 * write-path.md, "RocksDB setup"). */
#define ROCK_COMPACTION_READAHEAD (128 * 1024)
int rockStoreOpen(const char *abs_dir, const char *db_path, int reuse, char **err);
int rockStoreReopen(int reuse, char **err);
void rockStoreClose(int all);
void rockStoreCloseFilesInChild(void);
size_t rockStoreCacheSize(void);
size_t rockStoreWriteBufferSize(void);
void rockStoreApplyCacheSize(void);
void rockStoreResumeCompactions(void);
int rockStoreApplyCompression(void);
int rockSplitIsMeta(const char *rec, size_t len);
unsigned int rockRecordLru(const char *rec);
unsigned int rockFieldTag(unsigned int lru);
unsigned int rockFieldGet(const unsigned char *hdr);
void rockFieldSet(unsigned char *hdr, unsigned int lru);
void rockFieldSetTagged(unsigned char *hdr, unsigned int tagged);
robj *rockSentinelOf(robj *val);
robj *rockModuleSentinel(moduleType *mt);
uint32_t rockStoreRenewSid(int dbid);
void rockStoreSwapSids(int id1, int id2);
uint64_t rockSplitNewVersion(void);
void rockPutSid(unsigned char *p, uint32_t sid);
uint32_t rockGetSid(const unsigned char *p);
sds rockStorageKey(int dbid, const sds key);
rocksdb_iterator_t *rockStoreIterAfter(rocksdb_readoptions_t *ro, const char *key, size_t klen);
sds rockStorageKeyInto(sds buf, int dbid, const sds key);
sds rockSerialize(robj *key, robj *val, int dbid);
robj *rockDeserialize(sds rec, sds key, int dbid);
int rockRecordRdbPayload(const char *rec, size_t len, const char **payload, size_t *plen);
void rockAccessOperand(unsigned int tagged, unsigned char *buf);
void rockRecordSetAccess(sds rec, unsigned int tagged);
void rockNoteError(const char *what, char *err);
void rockStoreSetL0Trigger(int files);
void rockSizeToMaxmemory(int force);
long long rockStoreProperty(const char *prop);
long long rockStoreL0Files(void);
size_t rockExternalMemory(void);
size_t rockTableReadersMemory(void);
double rockMemtablesFill(void);
double rockMemtablesSteadyFill(void);
size_t rockExternalMemoryAt(unsigned long long maxmemory, double memtable_fill);
size_t rockExternalMemoryProjected(size_t base, double scale, uint64_t records, double record_bytes);
void rockRefreshExternalMemory(void);
void rockStoreReaderInit(void);
void rockStoreReaderExit(void);
void rockStoreCountBatch(void);
void rockStoreHarvestBlockCounts(void);
long long rockStoreBlockCountsPending(void);
const char *rockBlockCountName(int i);

/* rock_split.c: big collections element by element (storage layer). */
extern dictType rockSplitDictType;
sds rockDbGet(const sds skey, int *found);
sds rockSplitMeta(const rockSplitInfo *si);
long long rockCollectionSize(robj *val);
unsigned int rockSplitAccess(const rockSplitInfo *si);
int rockSplitEncoding(robj *val);
long long rockSplitEligible(robj *val);
sds rockSplitPrefixInto(sds buf, const char *skey, size_t sklen, uint64_t version);
sds rockSplitPrefixEnd(const sds prefix);
sds rockSplitElementKey(sds buf, const char *skey, size_t sklen, uint64_t version, const char *ele, size_t elen);
int rockSplitBatch(rocksdb_writebatch_t *wb, const char *skey, size_t sklen, const char *rec, size_t len,
                   uint64_t version, long long *elements);
sds rockSplitAssemble(const char *skey, size_t sklen, const char *meta, size_t mlen, rocksdb_readoptions_t *ro,
                      char **err, int *err_owned, long long *elements);
typedef int rockSplitSink(void *ctx, const char *piece, size_t len);
extern const char rockSplitRefused[];
sds rockSplitAssembleTo(const char *skey, size_t sklen, const char *meta, size_t mlen, rocksdb_readoptions_t *ro,
                        rockSplitSink *sink, void *ctx, char **err, int *err_owned, long long *elements);

/* A lookup that only asks whether the key exists before overwriting it
 * (setKey(), patch 0036): not a value access. Above upstream's LOOKUP_*. */
#define LOOKUP_ROCK_OVERWRITE (1<<7)

/* rockCommandValueClass(): does a command read the values of its keys? */
#define ROCK_READS_NEVER 1  /* existence, TTL or overwrite only */
#define ROCK_READS_ALWAYS 2 /* every key it names */
#define ROCK_READS_SOME 3   /* depends on the key and arguments (rockKeyNeedsValue()) */

/* rock_keys.c: values moving, and the keyspace hooks. */
void rockKeysInit(void);
void rockKeysCron(void);
int rockCommandValueClass(struct redisCommand *cmd);
extern unsigned char *rock_value_class;
extern int rock_value_class_len;
extern unsigned long rock_fresh_count;
int rockFreshTake(robj *val);
int rockIsFresh(robj *val);
void rockFreshForget(robj *val);
void rockFreshReset(void);
typedef void rockKeyNoteProc(redisDb *db, sds key);
void rockKeysOnValueHot(rockKeyNoteProc *proc);
int rockIsOwnKeyCommand(struct redisCommand *cmd);
int rockKeyNeedsValue(struct redisCommand *cmd, robj **argv, int argc, sds key);
int rockRenameCold(redisDb *db, struct redisCommand *cmd, robj **argv, int argc, sds key);
int rockPointNoteDirty(redisDb *db, sds key, robj *val, rockSplitInfo *si);
int rockPrepareNested(client *c, sds *err);
robj *rockEntryValueOrNull(redisDb *db, dictEntry *de);
int rockKeyRefNeedsValue(struct redisCommand *cmd, int flags);
int rockValueTooSmall(robj *val, sds rec);
int rockEvictEntry(redisDb *db, dictEntry *de);
robj *rockLoadEntry(redisDb *db, dictEntry *de);
void rockRestoreValue(redisDb *db, dictEntry *de, robj *val);
robj *rockEntryValueOrReply(client *c, dictEntry *de);
robj *rockEntryValueCopy(redisDb *db, dictEntry *de);
robj *rockLookupCold(redisDb *db, robj *key, robj *val);
void rockValueAccessedSlow(redisDb *db, robj *key, robj *val, int flags);
robj *rockLookupForRouting(redisDb *db, robj *key, int flags);
void rockKeyRemoved(redisDb *db, sds key, robj *val);
void rockKeyOverwritten(redisDb *db, sds key, robj *old, robj *val);
void rockStaleSweep(void);
void rockKeyModified(redisDb *db, robj *key);
void rockSwapDbs(int id1, int id2);
int rockKeysEmptyDbs(redisDb *dbarray, int dbnum);
void rockSplitForget(rockDb *rdb, sds key, sds skey);
client *rockCallEnter(client *c);
void rockCallLeave(client *c, client *prev, long long dirty_before);
long long rockColdKeys(void);
long long rockCleanKeys(long long *table_bytes);
rockSplitInfo *rockSplitLookup(int dbid, sds key);
sds rockReadRecord(int dbid, sds key, int *from_pending, int page_in);
void rockSplitAdopt(int dbid, sds key, rockSplitInfo *si);
void rockSplitDrop(int dbid, sds key);

/* rock_sizing.c: the RAM sizing model (ROCK SIZING). */
extern uint64_t rock_sizing_threshold, rock_sizing_fine_threshold;
void rockSizingConfigure(void);
void rockSizingAccess(redisDb *db, sds key, robj *val, uint64_t id);
void rockSizingHitInRam(redisDb *db, sds key, robj *val);
void rockSizingWrite(redisDb *db, sds key, robj *val, uint64_t id);
void rockSizingRemove(redisDb *db, sds key);
void rockSizingModified(redisDb *db, sds key);
void rockSizingReset(void);
void rockSizingCron(void);

/* The model's hash of a key (db and name) for sampling: words multiplied
 * in, one final mix. Inline: it runs at every value access and write while
 * the model is on, for the few instructions a short key takes. The db and
 * the length go in after the bytes have been mixed once: folded in with
 * them, they shared bits with the bytes (a 5-byte and a 6-byte name such as
 * "k1220" and "k12220" hashed alike, 20 pairs among k0..k23999, and the
 * model took each pair for one key). */
static inline uint64_t rockSizingHash(int dbid, const unsigned char *p, size_t len) {
    const uint64_t m = 0xff51afd7ed558ccdULL;
    uint64_t h = 0x9E3779B97F4A7C15ULL, w;
    if (len >= 8) {
        /* Whole words, then the last 8 bytes (overlapping the one before). */
        const unsigned char *last = p + len - 8;
        for (; p < last; p += 8) {
            memcpy(&w, p, 8);
            h = (h ^ w) * m;
            h ^= h >> 29;
        }
        memcpy(&w, last, 8);
    } else if (len >= 4) {
        uint32_t a, b;
        memcpy(&a, p, 4);
        memcpy(&b, p + len - 4, 4);
        w = ((uint64_t)a << 32) | b;
    } else {
        w = 0;
        for (size_t i = 0; i < len; i++) w = (w << 8) | p[i];
    }
    h = (h ^ w) * m;
    h ^= h >> 32;
    h ^= ((uint64_t)dbid << 32) ^ len;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 29;
    return h;
}

/* Is `key` in the model's samples (the denser one of its smallest caches
 * holds the other)? Sets *id to its hash. */
static inline int rockSizingSampled(int dbid, sds key, uint64_t *id) {
    if (rock_sizing_fine_threshold == 0) return 0;
    *id = rockSizingHash(dbid, (const unsigned char *)key, sdslen(key));
    return (*id & 0xffffffffULL) < rock_sizing_fine_threshold;
}

/* dbAdd() put `val` under a new key (patch 0036): in RAM at any size. */
static inline void rockKeyAdded(redisDb *db, robj *key, robj *val) {
    uint64_t id;
    if (rockSizingSampled(db->id, key->ptr, &id)) rockSizingWrite(db, key->ptr, val, id);
}
void rockSizingResetStats(void);
int rockSizingReady(const char **why);
int rockSizingPredict(long long lo, long long *m, double *ratio, int n);
long long rockSizingFor(double target);
size_t rockSizingMemory(void);
long long rockSizingKeys(void);
double rockSizingRate(void);
int rockSizingEstimateTicks(void);

/* rock_snapshot.c: the keyspace snapshot's contents (cold values as
 * references to their records). */
#define ROCK_SNAPSHOT_FORMAT "2" /* the records its checkpoint holds say
                                  * their field's kind (ROCK_FORMAT_LFU) */
struct rockSnapshotState {
    int writing;       /* rdbSave() writes a keyspace snapshot */
    int loading;       /* rdbLoad() reads the snapshot rock_warm.c paired */
    char *pair;        /* the pair id written / expected */
    char *supersedes;  /* identity of the stock RDB the snapshot supersedes */
    char *checkpoint;  /* absolute path of the checkpoint it is paired with */
    int commit_wait;   /* a save point's child: rename once the pipe says */
    int commit_fds[2]; /* ...the checkpoint was made (rockSnapshotCommitWait()) */
};
extern struct rockSnapshotState rock_snapshot;
ssize_t rockRdbSaveAuxFields(rio *rdb);
ssize_t rockSnapshotSaveRef(rio *rdb, robj *key, int dbid);
ssize_t rockSnapshotSaveHot(rio *rdb, int dbid);
int rockSnapshotIsRef(int type);
robj *rockSnapshotLoadRef(rio *rdb, sds key, int dbid, int *error);
void rockSnapshotKeyDone(redisDb *db);
int rockRdbLoadAux(robj *auxkey, robj *auxval);
const char *rockRdbCheckAux(robj *auxkey);

/* rock_warm.c: warm restart (lifecycle). */
void rockWarmCheckDisabled(void);
void rockWarmChoose(const char *abs_dir);
void rockWarmPopulate(const char *db_path);
int rockWarmStarting(void);
void rockWarmOpened(void);
void rockWarmCron(void);
void rockWarmCheckpointBytes(long long *bytes, long long *own);
const char *rockStartupRdbFile(void);
void rockStartupRdbLoaded(int ret);
int rockShutdownSnapshot(rdbSaveInfo *rsi);
int rockSavePointSnapshot(rdbSaveInfo *rsi);
int rockSnapshotCommitWait(void);
void rockAofRewritePrepare(void);
void rockAofRewriteForked(pid_t pid);
int rockAofBaseLoad(rio *rdb);
int rockWarmAofReload(void);
sds rockWarmRelinkAof(const char *db_path);
int rockWarmAofBaseLoad(rio *rdb, int relinked);

/* rock_load.c: big collections spilled to disk while an RDB loads. */
void rockLoadingSpill(robj *o, sds key, int dbid);
robj *rockLoadingObjectDone(robj *o, sds key, int dbid);
void rockLoadingKeyDone(redisDb *db);
sds rockLoadingTakeLastKey(int *dbid);
void rockLoadingReset(void);
void rockLoadingExpectKeys(uint64_t keys);
long long rockLoadingShareOver(void);

/* rock_compact.c: compacting flushed databases' ranges. */
void rockCompactStart(void);
void rockCompactAsk(const char *start, size_t start_len, const char *end, size_t end_len);
void rockCompactHalt(void);
void rockCompactResume(void);
void rockCompactStop(void);
void rockCompactDetachChild(void);
void rockCompactStats(long long *done, long long *waiting);

/* rock_write.c: the writer thread and the pending buffer. */
typedef void rockWriteCronProc(void);
typedef void rockWriteCommittedProc(void);
void rockWriteStart(const char *dir, rockWriteCronProc *cron, rockWriteCommittedProc *committed);
const char *rockWriteError(void);
int rockDiskFull(void);
int rockDiskLow(void);
long long rockWriteHalt(void);
long long rockWriteOutstanding(void);
void rockWriteRequestTrim(void);
void rockWriteTick(void);
void rockWriteRequestMeasure(void);
void rockWriteRequestPurge(void);
void rockPurgeCheck(void);
int rockDefragEnabled(void);
int rockDefragEffort(size_t frag_bytes);
int rockForkWait(int replication);
size_t rockRssBound(void);
void rockWriteRequestL0Trigger(int files);
void rockWriteRequestCompactions(void);
long long rockWriteDiskFree(void);
void rockWriteDetachChild(void);
void rockWriteResume(void);
int rockWriteDirty(void);
void rockWriteMarkDirty(void);
void rockWritePut(sds skey, sds rec, uint64_t split_version, uint64_t old_split_version);
void rockWriteDeleteElements(sds skey, uint64_t version);
void rockWriteElement(sds rkey, sds val, rockSplitInfo *si, int pending);
sds rockPendingElement(sds ekey, int *found);
long long rockWriteElementOps(void);
void rockWriteDelete(sds skey);
void rockWriteAccess(sds skey, unsigned int lru);
int rockPendingAccess(sds skey, unsigned int *lru);
typedef void rockWriteBarrierProc(void *arg, int run);
int rockWriteBarrier(rockWriteBarrierProc *fn, void *arg);
int rockWriteBarrierWaiting(void);
void rockWriteDeleteSid(uint32_t sid);
void rockWriteSubmit(void);
void rockWriteFlush(void);
int rockWriteDrain(long long ms);
int rockWriteWaitOne(void);
sds rockPendingGet(sds skey);
dictIterator *rockPendingIterator(void);
sds rockPendingRecord(dictEntry *de);
long long rockPendingBytes(void);
long long rockPendingCount(void);
long long rockWriteBacklog(void);
long long rockQueuedDeletes(void);
long long rockQueuedDeleteBytes(void);
void rockWriteTrimStats(long long *trims, long long *us, long long *purges, long long *purge_us);
void rockWriteGlibcHeap(long long *in_use, long long *system, long long *measures, long long *measure_us);
void rockPendingDropSid(uint32_t sid);
int rockDiskHasRoom(void);
void rockDiskCheck(void);

/* rock_evict.c: moving values out under maxmemory. */
#define ROCK_EVICTIONS_RUNNING 2 /* rockPerformEvictions(): out of time, making progress */
int rockPerformEvictions(void);
int rockModuleMaxmemoryState(float *level);
void rockEvictAfterWrites(void);
int rockWriterBehind(void);
void rockTouched(redisDb *db, sds key);
void rockEvictSweepAll(void);
void rockEvictInit(void);
void rockEvictNoteModified(redisDb *db, robj *key);
void rockLoadingMemoryCheck(redisDb *db);
size_t rockEvictionMemory(void);
int rockEvictCandidate(redisDb *db, dictEntry *de);
int rockVolatileOnly(void);
int rockEvictWouldMove(redisDb *db, sds key, robj *val);
size_t rockEvictOwnMemory(void);
size_t rockEvictPolicyMemory(void);
void rockEvictCountPolicyDeletes(void);
int rockEvictNothingMovable(void);
mstime_t rockEvictNothingMovableSince(void);
size_t rockEvictionExcess(size_t upstream_tofree);
void rockReplicaEvictions(void);
void rockCommandDone(void);

/* rock_floor.c: the maxmemory floor, and warnings under it. */
void rockFloorCron(void);
long long rockFloor(void);
long long rockFloorWalks(void);

/* rock_read.c: paging in before a command runs, off the event loop. */
int rockPrepareCommand(client *c);
void rockReplyReadFailed(client *c, const char *key);
int rockIsPinned(redisDb *db, sds key);
void rockInflightOnUnpinned(void (*proc)(sds skey));
size_t rockPinnedMemory(void);
unsigned long rockPinnedCount(void);
void rockVoidRead(sds skey);
void rockVoidReadsOfSid(uint32_t sid);
void rockUnblockClient(client *c);
int rockPauseRead(client *c);
void rockWakeWriteWaiters(void);
void rockCommandProcessed(client *c);
void rockCacheMaster(client *c);
void rockMasterLinkLost(client *c);
void rockFreeClient(client *c);
void rockReadStart(void);
long long rockReadsInFlight(void);

/* rock_fork.c: cold values in forked children (BGSAVE, AOF rewrite, sync). */
int rockForkPrepare(int purpose);
void rockForkParent(int childpid);
void rockForkChild(void);
void rockForkStreamStop(int cancel);
int rockForkStreaming(void);
long long rockForkStreamRefreshes(void);
int rockForkDefersValue(robj *val);
ssize_t rockRdbSaveColdDb(rio *rdb, int dbid);
int rockAofRewriteColdDb(rio *aof, int dbid);
ssize_t rockRdbSaveCold(rio *rdb, robj *key, int dbid, int savelru, int savelfu);

/* aof.c (upstream, not in a header): emit one value as commands. */
int rewriteListObject(rio *r, robj *key, robj *o);
int rewriteSetObject(rio *r, robj *key, robj *o);
int rewriteSortedSetObject(rio *r, robj *key, robj *o);
int rewriteHashObject(rio *r, robj *key, robj *o);
int rewriteStreamObject(rio *r, robj *key, robj *o);
int rewriteModuleObject(rio *r, robj *key, robj *o, int dbid);

/* rock_report.c: operator-facing figures and the ROCK command. */
void rockEvictCommand(client *c);
void rockLoadCommand(client *c);
void rockStatusCommand(client *c);
void rockSizingCommand(client *c);
void rockDiskkeysCommand(client *c);
void rockResetStats(void);
sds rockGenInfoString(sds info);
void rockCommand(client *c);

/* lookupKey() found `val` (patch 0036): count one value access, from RAM or
 * disk, and feed the sizing model (rock_hooks.c, rockValueAccessedSlow()).
 * Runs at every lookup: the common case -- a command that always reads its
 * keys, a value in RAM, nothing paged in and unused -- stays inline. */
/* A value in RAM that eviction would move, decided without a call for the
 * common case (a string of rock-min-value-size or more under an allkeys-*
 * policy); 0 means "ask rockEvictWouldMove()". */
static inline int rockSurelyMovable(robj *val) {
    return val->type == OBJ_STRING && val->encoding == OBJ_ENCODING_RAW &&
           (server.maxmemory_policy & MAXMEMORY_FLAG_ALLKEYS) && (long long)sdslen(val->ptr) >= rock.min_value_size;
}

static inline void rockValueAccessed(redisDb *db, robj *key, robj *val, int flags) {
    client *c = rock_ks.executing_client;
    if ((flags & LOOKUP_ROCK_OVERWRITE) || c == NULL || c->cmd == NULL || rock_store.db == NULL) return;
    int cid = c->cmd->id;
    int class = cid >= 0 && cid < rock_value_class_len ? rock_value_class[cid] : 0;
    if (class == ROCK_READS_NEVER) return;
    /* One access per value per command, however many lookups it makes. */
    for (int j = 0; j < rock_ks.ncounted; j++)
        if (rock_ks.counted[j] == val) return;
    if (class == ROCK_READS_ALWAYS && rock_fresh_count == 0 && val != rock_ks.point_value && !rockIsCold(val) &&
        !rock_ks.existence_only && !server.loading) {
        if (rock_ks.ncounted < ROCK_COUNTED_MAX) rock_ks.counted[rock_ks.ncounted++] = val;
        rock_ks_stats.value_hits_ram++;
        uint64_t id;
        if (rock_sizing_threshold && !rockSurelyMovable(val)) rockSizingHitInRam(db, key->ptr, val);
        if (rockSizingSampled(db->id, key->ptr, &id)) rockSizingAccess(db, key->ptr, val, id);
        return;
    }
    rockValueAccessedSlow(db, key, val, flags);
}

#endif /* __REDIS_ROCK_H */
