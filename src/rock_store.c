/* rock_store.c -- redis-rock: how values are laid out in RocksDB.
 *
 * The storage layer (layer 1). This file owns its state (rock_store):
 *   - the RocksDB handle: options, open, close, reopen empty, live changes
 *     of the block cache, memtable size and compression, and RocksDB's memory
 *     as counted against maxmemory; in a forked child, letting go of the
 *     data files the child inherited open;
 *   - the cold sentinels: one shared object per Redis type (and per module
 *     type) that stands in the main dict for a value living in RocksDB (no
 *     per-key heap object);
 *   - each database's storage id;
 *   - the record format: key = [storage id, 4 bytes big endian][key bytes],
 *     value = [format byte][encoding byte][LRU/LFU field, 3 bytes big
 *     endian][RDB type byte][rdbSaveObject payload], so that loading is
 *     rdbLoadObject and persistence can copy the payload as is. The encoding
 *     and access field are those the value had in RAM: a value paged back
 *     gets both again (OBJECT ENCODING, IDLETIME and FREQ, and the eviction
 *     policies, see the value as it was, not as a fresh load would make it);
 *   - the merge operator that updates a record's LRU/LFU field, and the
 *     reader threads' block counters.
 * It calls nothing above it: reads and writes of values are the layers
 * above (rock_readers.c, rock_write.c, rock_keys.c).
 *
 * Storage ids are per database, not db indexes: SWAPDB swaps two ids, and
 * FLUSHDB gives the database a fresh id and drops the old id's range, so no
 * data ever moves and a read still in flight for a flushed key finds nothing
 * under the new id. */

#include "server.h"
#include "rdb.h"

#include <dirent.h>

/* ---------------------------------------------------------------------------
 * Sentinels and per-db state
 * ------------------------------------------------------------------------ */

char rock_module_cold_marker;
struct rockStore rock_store;
rockStats rock_store_stats; /* the storage layer's counters (rock.h) */

void rockStoreResetStats(void) {
    memset(&rock_store_stats, 0, sizeof(rock_store_stats));
}

static list *rock_module_sentinels; /* one per module type met so far */

static robj *rockCreateSentinel(int type, int encoding) {
    robj *o = createObject(type, NULL);
    o->encoding = encoding;
    makeObjectShared(o);
    return o;
}

void rockStoreInit(void) {
    memset(rock_store.cold, 0, sizeof(rock_store.cold));
    rock_store.cold[OBJ_STRING] = rockCreateSentinel(OBJ_STRING, OBJ_ENCODING_RAW);
    rock_store.cold[OBJ_LIST] = rockCreateSentinel(OBJ_LIST, OBJ_ENCODING_QUICKLIST);
    rock_store.cold[OBJ_SET] = rockCreateSentinel(OBJ_SET, OBJ_ENCODING_HT);
    rock_store.cold[OBJ_ZSET] = rockCreateSentinel(OBJ_ZSET, OBJ_ENCODING_SKIPLIST);
    rock_store.cold[OBJ_HASH] = rockCreateSentinel(OBJ_HASH, OBJ_ENCODING_HT);
    rock_store.cold[OBJ_STREAM] = rockCreateSentinel(OBJ_STREAM, OBJ_ENCODING_STREAM);
    /* Module types get theirs on first eviction: rockSentinelOf(). */
    rock_module_sentinels = listCreate();

    rock_store.sids = zmalloc(sizeof(uint32_t) * server.dbnum);
    for (int j = 0; j < server.dbnum; j++) rock_store.sids[j] = j;
    rock_store.next_split_version = 1;
    rock_store.next_sid = server.dbnum;
    rock_store.decode_client = createClient(NULL);
    rock_store.wopts = rocksdb_writeoptions_create();
    rocksdb_writeoptions_disable_WAL(rock_store.wopts, 1);
    rock_store.ropts = rocksdb_readoptions_create();
    /* The block cache holds data blocks only (the table readers hold index
     * and filter blocks). A value read is paged into RAM anyway, and under
     * uniform random reads its block is as good as never read again (1.3%
     * hits at 95% cold), while caching it costs the readers some µs per
     * read. But reads of neighbouring keys (a pipeline read ahead, an MGET,
     * a batch job in key order) find most values in the block just read:
     * such reads fill the cache (ropts), lone reads leave it alone
     * (ropts_nofill). See docs/write-path.md "RocksDB setup". */
    rocksdb_readoptions_set_fill_cache(rock_store.ropts, 1);
    rock_store.ropts_nofill = rocksdb_readoptions_create();
    rocksdb_readoptions_set_fill_cache(rock_store.ropts_nofill, 0);
}

/* The sentinel that stands for `val` once on disk, or NULL when values of its
 * type stay in RAM (a module type that can't save and load itself). */
robj *rockSentinelOf(robj *val) {
    if (val->type != OBJ_MODULE) return val->type < ROCK_OBJ_TYPES ? rock_store.cold[val->type] : NULL;
    return rockModuleSentinel(((moduleValue *)val->ptr)->type);
}

/* The cold sentinel of module type `mt` (NULL: its values stay in RAM). */
robj *rockModuleSentinel(moduleType *mt) {
    if (mt->rdb_save == NULL || mt->rdb_load == NULL) return NULL;
    listIter li;
    listNode *ln;
    listRewind(rock_module_sentinels, &li);
    while ((ln = listNext(&li)) != NULL) {
        robj *o = listNodeValue(ln);
        if (((moduleValue *)o->ptr)->type == mt) return o;
    }
    robj *o = createModuleObject(mt, &rock_module_cold_marker);
    makeObjectShared(o);
    listAddNodeTail(rock_module_sentinels, o);
    return o;
}

/* ---------------------------------------------------------------------------
 * Record format
 * ------------------------------------------------------------------------ */

/* FLUSHDB/FLUSHALL: database `dbid` gets a new, empty storage id. Returns
 * the old one, whose records the caller has deleted. */
uint32_t rockStoreRenewSid(int dbid) {
    uint32_t old = rock_store.sids[dbid];
    rock_store.sids[dbid] = rock_store.next_sid++;
    return old;
}

/* SWAPDB: the storage ids follow the databases' contents. */
void rockStoreSwapSids(int id1, int id2) {
    uint32_t tmp = rock_store.sids[id1];
    rock_store.sids[id1] = rock_store.sids[id2];
    rock_store.sids[id2] = tmp;
}

/* The version of a new split write (element keys carry it: rock_split.c). */
uint64_t rockSplitNewVersion(void) {
    return rock_store.next_split_version++;
}

void rockPutSid(unsigned char *p, uint32_t sid) {
    p[0] = sid >> 24; p[1] = sid >> 16; p[2] = sid >> 8; p[3] = sid;
}

/* The storage id a RocksDB key starts with. */
uint32_t rockGetSid(const unsigned char *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

/* RocksDB key of `key` in database `dbid`, written into `buf` (an sds to
 * reuse, or NULL for a new one). */
sds rockStorageKeyInto(sds buf, int dbid, const sds key) {
    unsigned char prefix[4];
    rockPutSid(prefix, rock_store.sids[dbid]);
    buf = buf ? sdscpylen(buf, (char *)prefix, sizeof(prefix)) : sdsnewlen(prefix, sizeof(prefix));
    return sdscatlen(buf, key, sdslen(key));
}

/* RocksDB key of `key` in database `dbid`. */
sds rockStorageKey(int dbid, const sds key) {
    return rockStorageKeyInto(NULL, dbid, key);
}

/* A fresh iterator with `ro` on the first key after `key` (keys sort
 * bytewise: key + "\0" is the smallest one after it). For walks that let
 * their iterator go while they wait (the fork stream) and pick up after the
 * last key they used. */
rocksdb_iterator_t *rockStoreIterAfter(rocksdb_readoptions_t *ro, const char *key, size_t klen) {
    sds after = sdscatlen(sdsnewlen(key, klen), "\0", 1);
    rocksdb_iterator_t *it = rocksdb_create_iterator(rock_store.db, ro);
    rocksdb_iter_seek(it, after, sdslen(after));
    sdsfree(after);
    return it;
}

/* LZF for string values, as rdbcompression asks, but not where it keeps
 * failing. rdbSaveRawString() runs LZF over every string longer than 20
 * bytes; on values that do not compress (random or already compressed
 * bytes) that is about 1 us per KB on the event loop for nothing, and
 * RocksDB compresses its blocks again anyway. So string values are tried
 * one in ROCK_LZF_PROBE_EVERY once ROCK_LZF_MISSES tries in a row saved
 * less than an eighth; a try that saves more resumes compressing every
 * value. Either form is a valid RDB string: loading and persistence read
 * both (a value stored plain while probing reaches an RDB plain, as stock
 * would write a value LZF could not shrink). Other types (listpacks,
 * elements) always follow rdbcompression. */
#define ROCK_LZF_MISSES 8
#define ROCK_LZF_PROBE_EVERY 32
static struct {
    int misses;         /* tries in a row that saved less than 1/8 */
    unsigned int skips; /* values stored plain since the last try */
} rock_lzf;

/* Should this string value (of `len` bytes) be given to LZF? */
static int rockLzfTry(size_t len) {
    if (!server.rdb_compression || len <= 20) return 0;
    if (rock_lzf.misses < ROCK_LZF_MISSES) return 1;
    if (++rock_lzf.skips < ROCK_LZF_PROBE_EVERY) {
        rock_store_stats.lzf_skipped++;
        return 0;
    }
    rock_lzf.skips = 0;
    return 1;
}

/* Serialize a value as [format][encoding][LRU/LFU][RDB type][RDB payload]. */
sds rockSerialize(robj *key, robj *val, int dbid) {
    unsigned char hdr[ROCK_HEADER_LEN] = {ROCK_FORMAT_V2, val->encoding};
    rockFieldSet(hdr, val->lru);
    size_t slen = 0;
    int string = val->type == OBJ_STRING && val->encoding != OBJ_ENCODING_INT;
    if (string) slen = sdslen(val->ptr);
    int lzf = string && rockLzfTry(slen);
    int saved_compression = server.rdb_compression;
    /* A string's record is about its length: one allocation with room for
     * it spares the buffer's doublings (a 2 KB allocation for 1 KB). */
    sds buf = sdsnewlen(SDS_NOINIT, sizeof(hdr) + (string ? slen + 16 : 0));
    memcpy(buf, hdr, sizeof(hdr));
    sdssetlen(buf, sizeof(hdr));
    rio r;
    rioInitWithBuffer(&r, buf);
    if (string) server.rdb_compression = lzf;
    int ok = rdbSaveObjectType(&r, val) != -1 && rdbSaveObject(&r, val, key, dbid) != -1;
    server.rdb_compression = saved_compression;
    if (!ok) {
        sdsfree(r.io.buffer.ptr);
        return NULL;
    }
    if (lzf) {
        /* Saved an eighth or more? Record, header and type byte aside. */
        size_t payload = sdslen(r.io.buffer.ptr) - ROCK_HEADER_LEN - 1;
        if (payload <= slen - slen / 8) {
            rock_lzf.misses = 0;
            rock_lzf.skips = 0;
        } else if (rock_lzf.misses < ROCK_LZF_MISSES) {
            rock_lzf.misses++;
        }
    }
    /* The record waits in the pending buffer (counted by its allocation)
     * until committed: give back what a compressed string left unused. */
    if (string && sdsavail(r.io.buffer.ptr) > sdslen(r.io.buffer.ptr) / 4)
        r.io.buffer.ptr = sdsRemoveFreeSpace(r.io.buffer.ptr, 0);
    return r.io.buffer.ptr;
}

/* A record of this format, long enough for its header and RDB type byte. */
static int rockRecordValid(const char *rec, size_t len) {
    return len >= ROCK_HEADER_LEN + 1 && (rec[0] & ~ROCK_FORMAT_LFU) == ROCK_FORMAT_V2;
}

/* The RDB type byte and payload of a record, as rdbSaveObjectType() and
 * rdbSaveObject() wrote them. */
int rockRecordRdbPayload(const char *rec, size_t len, const char **payload, size_t *plen) {
    if (!rockRecordValid(rec, len)) return C_ERR;
    *payload = rec + ROCK_HEADER_LEN;
    *plen = len - ROCK_HEADER_LEN;
    return C_OK;
}

/* ---------------------------------------------------------------------------
 * The LRU/LFU field of a record header
 *
 * A header holds the value's robj.lru as it was when the value was written
 * or last dropped clean (an access-field update, below), and in its format
 * byte whether that field is an LRU clock or LFU data: the policy in force
 * then. A field of the other kind (maxmemory-policy changed between LRU and
 * LFU, at run time or over a warm restart) is converted when it is read,
 * keeping the last access: an LRU clock becomes LFU data with that access
 * time and the counter a new key starts with, LFU data the LRU clock of its
 * last access (to the minute). Stock, which keeps no field of the other
 * kind on load, resets such fields to "now" instead.
 * ------------------------------------------------------------------------ */

unsigned long LFUTimeElapsed(unsigned long ldt); /* evict.c, not in its header */

static int rockPolicyLfu(void) {
    return (server.maxmemory_policy & MAXMEMORY_FLAG_LFU) != 0;
}

/* `lru` (a robj.lru read now) tagged with its kind, as rockFieldSet() and
 * the access updates take it. */
unsigned int rockFieldTag(unsigned int lru) {
    return (lru & LRU_CLOCK_MAX) | (rockPolicyLfu() ? ROCK_FIELD_TAG_LFU : 0);
}

/* A field of the other kind, as the policy in force reads it. */
static unsigned int rockFieldConvert(unsigned int field, int from_lfu) {
    if (from_lfu) {
        unsigned long long ticks = (unsigned long long)LFUTimeElapsed(field >> 8) * 60000 / LRU_CLOCK_RESOLUTION;
        return (unsigned int)((LRU_CLOCK() - ticks) & LRU_CLOCK_MAX);
    }
    robj clock = {.lru = field};
    unsigned long long minutes = estimateObjectIdleTime(&clock) / 60000;
    return (unsigned int)(((LFUGetTimeInMinutes() - minutes) & 65535) << 8) | LFU_INIT_VAL;
}

/* The field of header `hdr` (a record's, or a split state's copy of its
 * metadata record's), as the policy in force reads it. */
unsigned int rockFieldGet(const unsigned char *hdr) {
    unsigned int field = ((unsigned int)hdr[2] << 16) | ((unsigned int)hdr[3] << 8) | hdr[4];
    int lfu = (hdr[0] & ROCK_FORMAT_LFU) != 0;
    return lfu == rockPolicyLfu() ? field : rockFieldConvert(field, lfu);
}

/* Store tagged field `tagged` (rockFieldTag()) in header `hdr`. */
void rockFieldSetTagged(unsigned char *hdr, unsigned int tagged) {
    hdr[0] = (tagged & ROCK_FIELD_TAG_LFU) ? (hdr[0] | ROCK_FORMAT_LFU) : (hdr[0] & ~ROCK_FORMAT_LFU);
    hdr[2] = (tagged >> 16) & 0xff;
    hdr[3] = (tagged >> 8) & 0xff;
    hdr[4] = tagged & 0xff;
}

/* Store robj.lru `lru`, read now, in header `hdr`. */
void rockFieldSet(unsigned char *hdr, unsigned int lru) {
    rockFieldSetTagged(hdr, rockFieldTag(lru));
}

/* The LRU clock or LFU data (robj.lru) of the value a record holds. */
unsigned int rockRecordLru(const char *rec) {
    return rockFieldGet((const unsigned char *)rec);
}

/* ---------------------------------------------------------------------------
 * Access-field updates (merge operator)
 *
 * A value paged in and dropped again unchanged writes nothing (a clean
 * drop), but its LRU/LFU field has moved on: accesses while it was in RAM,
 * or a module's RM_SetLRU. The drop then queues a RocksDB merge whose
 * operand is the new field and its kind alone (rockAccessOperand()), and this
 * operator applies it: reads, iterators (the fork stream, DISKKEYS) and
 * compaction all see the record with its header's field replaced. Operands
 * of the same key fold into the last one.
 * ------------------------------------------------------------------------ */

/* The operand: the header's format byte flag, then the 3-byte field. */
#define ROCK_ACCESS_OPERAND_LEN 4

void rockAccessOperand(unsigned int tagged, unsigned char *buf) {
    buf[0] = (tagged & ROCK_FIELD_TAG_LFU) ? ROCK_FORMAT_LFU : 0;
    buf[1] = (tagged >> 16) & 0xff;
    buf[2] = (tagged >> 8) & 0xff;
    buf[3] = tagged & 0xff;
}

/* Set a record's LRU/LFU field (tagged), as an access update queued and not
 * yet seen by a read does (rockPendingAccess()). */
void rockRecordSetAccess(sds rec, unsigned int tagged) {
    if (rockRecordValid(rec, sdslen(rec))) rockFieldSetTagged((unsigned char *)rec, tagged);
}

/* The last well-formed operand of a list, or NULL. */
static const char *rockLastOperand(const char *const *ops, const size_t *lens, int n) {
    for (int j = n - 1; j >= 0; j--)
        if (lens[j] == ROCK_ACCESS_OPERAND_LEN) return ops[j];
    return NULL;
}

static char *rockMergeFull(void *state, const char *key, size_t klen, const char *existing, size_t elen,
                           const char *const *ops, const size_t *lens, int n, unsigned char *success,
                           size_t *newlen) {
    UNUSED(state);
    UNUSED(key);
    UNUSED(klen);
    *success = 1;
    if (existing == NULL) {
        /* No record under it: cannot happen, the drop that queues an update
         * and any delete of the key go through the writer in order. Left as
         * an empty (malformed) record, so a read says so rather than
         * inventing a value. */
        *newlen = 0;
        return zmalloc(1);
    }
    char *out = zmalloc(elen ? elen : 1);
    memcpy(out, existing, elen);
    *newlen = elen;
    const char *field = rockLastOperand(ops, lens, n);
    if (field && (rockRecordValid(existing, elen) || rockSplitIsMeta(existing, elen))) {
        out[0] = (out[0] & ~ROCK_FORMAT_LFU) | field[0];
        memcpy(out + 2, field + 1, ROCK_ACCESS_OPERAND_LEN - 1);
    }
    return out;
}

static char *rockMergePartial(void *state, const char *key, size_t klen, const char *const *ops,
                              const size_t *lens, int n, unsigned char *success, size_t *newlen) {
    UNUSED(state);
    UNUSED(key);
    UNUSED(klen);
    const char *field = rockLastOperand(ops, lens, n);
    if (field == NULL) {
        *success = 0;
        return NULL;
    }
    char *out = zmalloc(ROCK_ACCESS_OPERAND_LEN);
    memcpy(out, field, ROCK_ACCESS_OPERAND_LEN);
    *success = 1;
    *newlen = ROCK_ACCESS_OPERAND_LEN;
    return out;
}

static void rockMergeFree(void *state, const char *value, size_t len) {
    UNUSED(state);
    UNUSED(len);
    zfree((void *)value);
}

static const char *rockMergeName(void *state) {
    UNUSED(state);
    return "redis-rock-access-field";
}

static void rockMergeDestroy(void *state) {
    UNUSED(state);
}

/* The merge operator RocksDB is opened with (owned by the options). */
static rocksdb_mergeoperator_t *rockCreateMergeOperator(void) {
    return rocksdb_mergeoperator_create(NULL, rockMergeDestroy, rockMergeFull, rockMergePartial, rockMergeFree,
                                        rockMergeName);
}

/* rdbLoadObject() picks an encoding from the current *-max-* settings, as a
 * restart would. A value paged back should come back as it left: while it
 * loads, the settings of its type are pushed to the side of the encoding it
 * had (a listpack stays a listpack even if the limits were lowered since; a
 * hash table stays one even if it would fit a listpack). */
typedef struct rockLoadLimits {
    size_t hash_entries, hash_value, zset_entries, zset_value, set_entries;
} rockLoadLimits;

static void rockLimitsSave(rockLoadLimits *l) {
    l->hash_entries = server.hash_max_listpack_entries;
    l->hash_value = server.hash_max_listpack_value;
    l->zset_entries = server.zset_max_listpack_entries;
    l->zset_value = server.zset_max_listpack_value;
    l->set_entries = server.set_max_intset_entries;
}

static void rockLimitsRestore(const rockLoadLimits *l) {
    server.hash_max_listpack_entries = l->hash_entries;
    server.hash_max_listpack_value = l->hash_value;
    server.zset_max_listpack_entries = l->zset_entries;
    server.zset_max_listpack_value = l->zset_value;
    server.set_max_intset_entries = l->set_entries;
}

static void rockLimitsFor(int encoding) {
    const size_t unlimited = SIZE_MAX / 2;
    switch (encoding) {
    case OBJ_ENCODING_LISTPACK:
        server.hash_max_listpack_entries = server.hash_max_listpack_value = unlimited;
        server.zset_max_listpack_entries = server.zset_max_listpack_value = unlimited;
        break;
    case OBJ_ENCODING_INTSET: server.set_max_intset_entries = unlimited; break;
    case OBJ_ENCODING_HT: server.hash_max_listpack_entries = server.set_max_intset_entries = 0; break;
    case OBJ_ENCODING_SKIPLIST: server.zset_max_listpack_entries = 0; break;
    }
}

/* A string comes back from rdbLoadObject() in the most compact encoding it
 * qualifies for; give it the one it had (SETRANGE and APPEND leave raw
 * strings that look like integers or are short). */
static robj *rockStringAs(robj *val, int encoding) {
    if (val->encoding == encoding) return val;
    if (encoding != OBJ_ENCODING_RAW && encoding != OBJ_ENCODING_EMBSTR) return val;
    robj *dec = getDecodedObject(val);
    size_t len = sdslen(dec->ptr);
    robj *o = encoding == OBJ_ENCODING_RAW ? createRawStringObject(dec->ptr, len)
                                           : createStringObject(dec->ptr, len); /* embstr when short enough */
    decrRefCount(dec);
    if (o->encoding != encoding) {
        decrRefCount(o);
        return val;
    }
    decrRefCount(val);
    return o;
}

/* Rebuild a value from a record: its encoding and LRU/LFU field as they were
 * in RAM. Returns NULL on a malformed record. */
robj *rockDeserialize(sds rec, sds key, int dbid) {
    if (!rockRecordValid(rec, sdslen(rec))) return NULL;
    int encoding = (unsigned char)rec[1];
    /* Read the payload in place (no copy of the value). */
    rio r;
    rioInitWithBuffer(&r, rec);
    r.io.buffer.pos = ROCK_HEADER_LEN;
    /* Decode as RESTORE does: a malformed record is reported, never fatal. */
    client *saved = server.current_client;
    if (saved == NULL || saved->id == CLIENT_ID_AOF) server.current_client = rock_store.decode_client;
    int type = rdbLoadObjectType(&r);
    robj *val = NULL;
    if (type != -1) {
        int error = 0;
        rockLoadLimits limits;
        rockLimitsSave(&limits);
        rockLimitsFor(encoding);
        val = rdbLoadObject(type, &r, key, dbid, &error);
        rockLimitsRestore(&limits);
        if (val && (size_t)r.io.buffer.pos != sdslen(rec)) { /* Trailing garbage. */
            decrRefCount(val);
            val = NULL;
        }
    }
    server.current_client = saved;
    if (val == NULL) return NULL;
    if (val->type == OBJ_STRING) val = rockStringAs(val, encoding);
    if (val->refcount != OBJ_SHARED_REFCOUNT) val->lru = rockRecordLru(rec);
    return val;
}

/* ---------------------------------------------------------------------------
 * RocksDB primitives
 * ------------------------------------------------------------------------ */

void rockNoteError(const char *what, char *err) {
    rock_store_stats.errors++;
    serverLog(LL_WARNING, "rock: RocksDB %s failed: %s", what, err);
    rocksdb_free(err);
}

/* Have RocksDB start an L0 compaction at `files` L0 files, slow writes
 * down at 2.5 times that and stop them at 4 times (never below RocksDB's
 * defaults, 20 and 36). At the load trigger, 5 and 7.5 times: nothing reads
 * while a load runs, and a compaction into a base level as big as the
 * dataset loaded so far takes long enough for twice its trigger of L0
 * files to pile up meanwhile; and the stop is above the L0 files a load
 * leaves while its compactions wait (rock.c, up to 160) until they are
 * compacted. SetOptions rewrites RocksDB's OPTIONS file: called by the
 * writer thread, not the event loop (rockWriteRequestL0Trigger()). */
void rockStoreSetL0Trigger(int files) {
    char trigger[16], slowdown[16], stop[16], *err = NULL;
    int slow = files >= ROCK_L0_TRIGGER_LOAD ? files * 5 : files * 5 / 2;
    int halt = files >= ROCK_L0_TRIGGER_LOAD ? files * 15 / 2 : files * 4;
    snprintf(trigger, sizeof(trigger), "%d", files);
    snprintf(slowdown, sizeof(slowdown), "%d", slow < 20 ? 20 : slow);
    snprintf(stop, sizeof(stop), "%d", halt < 36 ? 36 : halt);
    const char *keys[3] = {"level0_file_num_compaction_trigger", "level0_slowdown_writes_trigger",
                           "level0_stop_writes_trigger"};
    const char *vals[3] = {trigger, slowdown, stop};
    rocksdb_set_options(rock_store.db, 3, keys, vals, &err);
    if (err) {
        serverLog(LL_WARNING, "rock: can't set RocksDB's L0 compaction trigger to %d: %s", files, err);
        rocksdb_free(err);
        return;
    }
    atomicSet(rock_store.l0_applied, files);
}

/* ---------------------------------------------------------------------------
 * The RocksDB handle: options, open, close, live changes
 * ------------------------------------------------------------------------ */

/* RocksDB's option-string name of a compression type. */
static const char *rockCompressionName(int type) {
    switch (type) {
    case rocksdb_lz4_compression: return "kLZ4Compression";
    case rocksdb_zstd_compression: return "kZSTD";
    default: return "kNoCompression";
    }
}

/* Map rock-compression to RocksDB's (upper levels, bottom level) types. */
static void rockCompressionTypes(int mode, int *upper, int *bottom) {
    switch (mode) {
    case ROCK_COMPRESSION_LZ4:
        *upper = *bottom = rocksdb_lz4_compression; break;
    case ROCK_COMPRESSION_ZSTD:
        *upper = *bottom = rocksdb_zstd_compression; break;
    case ROCK_COMPRESSION_LZ4_ZSTD:
        *upper = rocksdb_lz4_compression;
        *bottom = rocksdb_zstd_compression;
        break;
    default:
        *upper = *bottom = rocksdb_no_compression; break;
    }
}

/* RocksDB's memory counts against maxmemory (rockExternalMemory()), so with
 * a maxmemory set it is sized from it: the block cache gets at most 1/64 of
 * it (and at most rock-block-cache-size): it holds only data blocks, which
 * help reads in key order (a few hundred recent blocks are enough) and
 * hardly at all uniform random ones, and what it takes is RAM the values
 * can't have. Each of the two memtables gets 1/16 (between 2 MB and 16 MB;
 * smaller ones mean many tiny files and much more compaction). */
static size_t rockStoreCacheSizeAt(unsigned long long maxmemory) {
    unsigned long long size = rock.block_cache_size;
    if (maxmemory && size > maxmemory / 64) size = maxmemory / 64;
    if (size < 1024 * 1024) size = 1024 * 1024;
    return (size_t)size;
}

static size_t rockStoreWriteBufferSizeAt(unsigned long long maxmemory) {
    unsigned long long size = 16 * 1024 * 1024;
    if (maxmemory && size > maxmemory / 16) size = maxmemory / 16;
    if (size < 2 * 1024 * 1024) size = 2 * 1024 * 1024;
    return (size_t)size;
}

size_t rockStoreCacheSize(void) {
    return rockStoreCacheSizeAt(server.maxmemory);
}

size_t rockStoreWriteBufferSize(void) {
    return rockStoreWriteBufferSizeAt(server.maxmemory);
}

/* Resize RocksDB's memory after a change of maxmemory (checked every 100 ms
 * by rockCron()), or at once with `force`. */
void rockSizeToMaxmemory(int force) {
    static unsigned long long sized_for;
    static int sized;
    if (!rock_store.db) return;
    if (!force && sized && sized_for == server.maxmemory) return;
    sized = 1;
    sized_for = server.maxmemory;
    rocksdb_cache_set_capacity(rock_store.cache, rockStoreCacheSize());
    char val[32], *err = NULL;
    snprintf(val, sizeof(val), "%zu", rockStoreWriteBufferSize());
    const char *keys[1] = {"write_buffer_size"};
    const char *vals[1] = {val};
    rocksdb_set_options(rock_store.db, 1, keys, vals, &err);
    if (err) {
        serverLog(LL_WARNING, "rock: can't resize RocksDB's memtables: %s", err);
        rocksdb_free(err);
    }
}

#define ROCK_MEMTABLES 2 /* the active memtable and one being flushed */
#define ROCK_FILTER_BITS 16 /* Bloom filter bits a record */
#define ROCK_DATA_BLOCK 4096 /* RocksDB's default block_size */
#define ROCK_INDEX_ENTRY 24 /* an index entry's bytes, about (rockExternalMemoryProjected()) */
#define ROCK_BLOB_MIN_SIZE (256 * 1024)
#define ROCK_BLOB_FILE_SIZE (64 * 1024 * 1024)

/* rock-compression into the options RocksDB opens with (at start-up, and
 * again for the fresh store a FLUSHALL opens): the upper levels' type for
 * them and for blobs, the bottom level's own. */
static void rockStoreSetCompression(rocksdb_options_t *opts) {
    int upper, bottom;
    rockCompressionTypes(rock.compression, &upper, &bottom);
    rocksdb_options_set_compression(opts, upper);
    rocksdb_options_set_bottommost_compression(opts, bottom);
    rocksdb_options_set_blob_compression_type(opts, upper);
}

/* Open a new, empty RocksDB in db_path (inside abs_dir, rock-dir). Returns
 * C_ERR with *err (RocksDB's, to rocksdb_free()) on failure. */
static int rockStoreOpenDb(char **err);

/* Open RocksDB in db_path: an empty folder, or with `reuse` the files of a
 * warm start's checkpoint (rock_warm.c), automatic compactions off. */
int rockStoreOpen(const char *abs_dir, const char *db_path, int reuse, char **err) {
    rock_store.abs_dir = zstrdup(abs_dir);
    rock_store.db_path = zstrdup(db_path);

    rock_store.cache = rocksdb_cache_create_lru(rockStoreCacheSize());
    /* 16 bits a key: about 0.05% false positives (10 bits: 1%). Only the
     * levels above the last have filters (optimize_filters_for_hits below),
     * about a tenth of the keys, but a cold read probes each of them, and
     * every L0 file: with a dozen L0 files (rockTuneL0()) 10 bits cost
     * about 10% more disk reads per cold GET. */
    rock_store.filter = rocksdb_filterpolicy_create_bloom_full(ROCK_FILTER_BITS);
    rock_store.table_opts = rocksdb_block_based_options_create();
    rocksdb_block_based_options_set_block_cache(rock_store.table_opts, rock_store.cache);
    rocksdb_block_based_options_set_filter_policy(rock_store.table_opts, rock_store.filter);
    /* Index and Bloom filter blocks are held by the table readers, whole,
     * never evicted: a cold read costs one disk read (its data block), not
     * an index or filter read when a cache full of data blocks pushed them
     * out. Their memory (rocksdb_table_readers) counts against maxmemory
     * like the rest of RocksDB's. It is about 1% of the data on disk for
     * values of 1 KB, far less than the keys themselves hold in RAM. Every
     * read is of a key known to be on disk, so the last level (most of the
     * data) needs no filter: optimize_filters_for_hits. */
    rocksdb_block_based_options_set_cache_index_and_filter_blocks(rock_store.table_opts, 0);
    rocksdb_block_based_options_set_format_version(rock_store.table_opts, 5);

    rock_store.opts = rocksdb_options_create();
    rocksdb_options_set_create_if_missing(rock_store.opts, 1);
    rocksdb_options_set_error_if_exists(rock_store.opts, 1);
    rocksdb_options_set_block_based_table_factory(rock_store.opts, rock_store.table_opts);
    rocksdb_options_set_max_background_jobs(rock_store.opts, 2);
    rocksdb_options_set_write_buffer_size(rock_store.opts, rockStoreWriteBufferSize());
    rocksdb_options_set_max_write_buffer_number(rock_store.opts, ROCK_MEMTABLES);
    rocksdb_options_set_level_compaction_dynamic_level_bytes(rock_store.opts, 1);
    rocksdb_options_set_level0_file_num_compaction_trigger(rock_store.opts, ROCK_L0_TRIGGER_DEFAULT);
    rocksdb_options_set_optimize_filters_for_hits(rock_store.opts, 1);
    /* A value dropped clean updates its record's LRU/LFU field (rock_store.c). */
    rocksdb_options_set_merge_operator(rock_store.opts, rockCreateMergeOperator());
    /* RocksDB's info LOG lives in rock-dir. Once a write to it fails (a
     * full disk), RocksDB 7.8 aborts the process at its next log line (an
     * assertion in its file writer): log only what is fatal anyway. Our own
     * log says what matters (write errors, eviction stops). */
    rocksdb_options_set_info_log_level(rock_store.opts, 4 /* FATAL_LEVEL */);
    rocksdb_options_set_max_log_file_size(rock_store.opts, 8 * 1024 * 1024);
    rocksdb_options_set_keep_log_file_num(rock_store.opts, 2);
    rockStoreSetCompression(rock_store.opts);
    /* Records of ROCK_BLOB_MIN_SIZE or more (a big list or string, whole)
     * go to blob files, their SST entry a small reference. An iterator
     * standing on a key holds the data block of every version of it still
     * in a file (one per L0 file and level): four versions of a 3 MB list
     * took the parent's RSS up 27 MB while a BGSAVE's stream passed it, one
     * version 9 MB. A blob is read only for the version the iterator
     * returns (once), and compactions move references, not the values.
     * Garbage (overwritten blobs) is collected as compactions reach the
     * oldest quarter of the blob files, or forced at half garbage. */
    rocksdb_options_set_enable_blob_files(rock_store.opts, 1);
    rocksdb_options_set_min_blob_size(rock_store.opts, ROCK_BLOB_MIN_SIZE);
    rocksdb_options_set_blob_file_size(rock_store.opts, ROCK_BLOB_FILE_SIZE);
    rocksdb_options_set_enable_blob_gc(rock_store.opts, 1);
    rocksdb_options_set_blob_gc_age_cutoff(rock_store.opts, 0.25);
    rocksdb_options_set_blob_gc_force_threshold(rock_store.opts, 0.5);
    if (rock.direct_io) {
        rocksdb_options_set_use_direct_reads(rock_store.opts, 1);
        rocksdb_options_set_use_direct_io_for_flush_and_compaction(rock_store.opts, 1);
        rocksdb_options_compaction_readahead_size(rock_store.opts, ROCK_COMPACTION_READAHEAD);
    }

    /* The live RocksDB is never reopened as it is left (a warm start
     * rebuilds it from a checkpoint, which flushes the memtables itself):
     * never spend a shutdown (or a FLUSHALL's reset) flushing memtables. */
    rocksdb_options_t *o = rocksdb_options_create();
    rocksdb_get_options_from_string(rock_store.opts, "avoid_flush_during_shutdown=true", o, err);
    if (*err != NULL) {
        serverLog(LL_WARNING, "rock: can't set avoid_flush_during_shutdown: %s", *err);
        rocksdb_free(*err);
        *err = NULL;
        rocksdb_options_destroy(o);
    } else {
        rocksdb_options_destroy(rock_store.opts);
        rock_store.opts = o;
    }

    if (!reuse) return rockStoreOpenDb(err);
    rocksdb_options_set_error_if_exists(rock_store.opts, 0);
    int ret = rockStoreOpenDb(err);
    rocksdb_options_set_error_if_exists(rock_store.opts, 1);
    return ret;
}

/* Open RocksDB again with the options of rockStoreOpen(), after
 * rockStoreClose(0) and its files removed (rockResetStore()), or replaced
 * by a checkpoint's (`reuse`). */
int rockStoreReopen(int reuse, char **err) {
    if (reuse) rocksdb_options_set_error_if_exists(rock_store.opts, 0);
    int ret = rockStoreOpenDb(err);
    if (reuse) rocksdb_options_set_error_if_exists(rock_store.opts, 1);
    if (ret == C_ERR) return C_ERR;
    rock_store_stats.store_resets++;
    return C_OK;
}

/* RocksDB opens, and reopens, with its automatic compactions off (set after
 * the open, they would be scheduled already): a load usually follows, and
 * the caller turns them on when it is done (rockStoreResumeCompactions(),
 * rock.c). */
static int rockStoreOpenDb(char **err) {
    *err = NULL;
    rocksdb_options_set_disable_auto_compactions(rock_store.opts, 1);
    rock_store.db = rocksdb_open(rock_store.opts, rock_store.db_path, err);
    rocksdb_options_set_disable_auto_compactions(rock_store.opts, 0);
    if (*err != NULL) {
        rock_store.db = NULL;
        return C_ERR;
    }
    if (rock_store.real_db_path == NULL) {
        char *real = realpath(rock_store.db_path, NULL);
        if (real) {
            rock_store.real_db_path = zstrdup(real);
            zlibc_free(real);
        }
    }
    rock_store.opened_at = mstime();
    atomicSet(rock_store.l0_applied, ROCK_L0_TRIGGER_DEFAULT);
    return C_OK;
}

/* In a forked child, right after fork(): close the files the child
 * inherited from RocksDB (its open-table cache above all). The child never reads
 * them (rock_fork.c), but while it holds them open, every file compaction
 * or a range delete removes in the parent keeps its disk space until the
 * child exits: a BGSAVE under writes held 42 MB of deleted files, the
 * soak's FLUSHDB reload with an AOF rewrite's child about 330 MB, enough to
 * fill rock-dir. Every file directly in the store's directory is closed
 * (tables, blob files, manifest, logs; found in /proc/self/fd, Linux only).
 * RocksDB's LOCK is an fcntl lock, owned by the parent alone: the child's
 * copy of its descriptor holds nothing, and closing it releases nothing. */
void rockStoreCloseFilesInChild(void) {
#ifdef __linux__
    if (rock_store.real_db_path == NULL) return;
    size_t plen = strlen(rock_store.real_db_path);
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL) return;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        char *end;
        long fd = strtol(de->d_name, &end, 10);
        if (*end != '\0' || end == de->d_name || fd == dirfd(d) || fd <= 2) continue;
        char link[64], target[PATH_MAX];
        snprintf(link, sizeof(link), "/proc/self/fd/%ld", fd);
        ssize_t n = readlink(link, target, sizeof(target) - 1);
        if (n <= 0) continue;
        target[n] = '\0';
        /* A file RocksDB had deleted already reads "<path> (deleted)". */
        const char *del = " (deleted)";
        size_t dlen = strlen(del);
        if ((size_t)n > dlen && !strcmp(target + n - dlen, del)) {
            n -= dlen;
            target[n] = '\0';
        }
        if ((size_t)n <= plen + 1 || strncmp(target, rock_store.real_db_path, plen) || target[plen] != '/') continue;
        if (strchr(target + plen + 1, '/')) continue; /* not directly in the store's directory */
        close((int)fd);
    }
    closedir(d);
#endif
}

/* Close RocksDB; with `all`, free its options and block cache too
 * (shutdown), else keep them for rockStoreReopen(). */
void rockStoreClose(int all) {
    if (rock_store.db) rocksdb_close(rock_store.db);
    rock_store.db = NULL;
    if (!all) return;
    rocksdb_options_destroy(rock_store.opts);
    rocksdb_block_based_options_destroy(rock_store.table_opts);
    rocksdb_cache_destroy(rock_store.cache);
    rock_store.opts = NULL;
    rock_store.table_opts = NULL;
    rock_store.cache = NULL;
    rock_store.filter = NULL; /* Owned and freed by the table options. */
}

/* rock-block-cache-size changed (CONFIG SET). */
void rockStoreApplyCacheSize(void) {
    if (rock_store.cache) rocksdb_cache_set_capacity(rock_store.cache, rockStoreCacheSize());
}

/* Turn RocksDB's automatic compactions on: RocksDB opens without them
 * (rockStoreOpenDb()). SetOptions writes a file: the writer thread calls
 * this (rockWriteRequestCompactions()), not the event loop. */
void rockStoreResumeCompactions(void) {
    if (!rock_store.db) return;
    char *err = NULL;
    const char *keys[1] = {"disable_auto_compactions"};
    const char *vals[1] = {"false"};
    rocksdb_set_options(rock_store.db, 1, keys, vals, &err);
    if (err) {
        serverLog(LL_WARNING, "rock: can't turn RocksDB's automatic compactions on: %s", err);
        rocksdb_free(err);
    }
}

/* rock-compression changed (CONFIG SET): C_ERR when RocksDB refused it
 * (logged). */
int rockStoreApplyCompression(void) {
    if (rock_store.opts) rockStoreSetCompression(rock_store.opts); /* for a reopen */
    if (!rock_store.db) return C_OK;
    int upper, bottom;
    char *dberr = NULL;
    rockCompressionTypes(rock.compression, &upper, &bottom);
    const char *keys[3] = {"compression", "bottommost_compression", "blob_compression_type"};
    const char *vals[3] = {rockCompressionName(upper), rockCompressionName(bottom), rockCompressionName(upper)};
    rocksdb_set_options(rock_store.db, 3, keys, vals, &dberr);
    if (dberr) {
        serverLog(LL_WARNING, "rock: can't change rock-compression: %s", dberr);
        rocksdb_free(dberr);
        return C_ERR;
    }
    return C_OK;
}

/* ---------------------------------------------------------------------------
 * RocksDB's memory
 * ------------------------------------------------------------------------ */

/* Read an integer RocksDB property, 0 if unavailable. */
long long rockStoreProperty(const char *prop) {
    uint64_t v = 0;
    if (!rock_store.db || rocksdb_property_int(rock_store.db, prop, &v) != 0) return 0;
    return (long long)v;
}

/* L0 files. "rocksdb.num-files-at-level<N>" is a string property (the int
 * form fails for it). */
long long rockStoreL0Files(void) {
    if (!rock_store.db) return 0;
    char *v = rocksdb_property_value(rock_store.db, "rocksdb.num-files-at-level0");
    long long n = v ? strtoll(v, NULL, 10) : 0;
    if (v) rocksdb_free(v);
    return n;
}

/* RocksDB's own memory (memtables, table readers, block cache), counted
 * against maxmemory by getMaxmemoryState(), less a fixed working floor:
 * RocksDB's memtable grows in arena blocks of up to 1 MB, so with a tiny
 * maxmemory (a few MB, as in tests) its first blocks alone would push every
 * value out and let allkeys-* policies delete keys. Property reads take a
 * RocksDB mutex: the figure is refreshed by rockCron() every 100 ms, and
 * getMaxmemoryState(), on every command, only reads it. */
#define ROCK_MEMORY_FLOOR (4LL * 1024 * 1024)
static size_t rock_external_memory;
static size_t rock_table_readers_memory; /* its table readers' part */
static long long rock_memtables_memory;  /* its memtables' part */
static long long rock_external_raw;      /* the sum, before the floor */

void rockRefreshExternalMemory(void) {
    long long readers = rockStoreProperty("rocksdb.estimate-table-readers-mem");
    /* size-all: with the memtables flushed but still held by an iterator
     * (a fork stream's), which cur-size-all leaves out. */
    long long memtables = rockStoreProperty("rocksdb.size-all-mem-tables");
    long long sum = memtables + readers + (rock_store.cache ? (long long)rocksdb_cache_get_usage(rock_store.cache) : 0);
    rock_external_memory = sum > ROCK_MEMORY_FLOOR ? (size_t)(sum - ROCK_MEMORY_FLOOR) : 0;
    rock_table_readers_memory = readers > 0 ? (size_t)readers : 0;
    rock_memtables_memory = memtables > 0 ? memtables : 0;
    rock_external_raw = sum > 0 ? sum : 0;
}

/* rockExternalMemory() as it will be once the table readers added since
 * they held `base` bytes have grown `scale` times, and hold at least
 * `records` records of `record_bytes` each (a load's end, `base` its
 * start's): the table readers grow with the data, the memtables are
 * counted full (a load fills them as fast as it reads, and each flush
 * empties one: as they are, they swing by megabytes from one refresh to the
 * next), the block cache as it is.
 *
 * The table readers hold each file's filter (ROCK_FILTER_BITS a record:
 * while a load holds compactions back, every file is in L0 and has one) and
 * its index, an entry per data block (ROCK_INDEX_ENTRY bytes a 4 KB block:
 * a shortened separator key and a block handle). Nothing is on disk yet
 * when a load has to decide what it keeps in RAM, so the records' count
 * gives a floor: 27.4 MB for 3.6M records of 1 KB measured, 29 MB by it. */
size_t rockExternalMemoryProjected(size_t base, double scale, uint64_t records, double record_bytes) {
    if (!rock_store.db) return 0;
    long long full = (long long)rockStoreWriteBufferSize() * ROCK_MEMTABLES;
    long long readers = (long long)rock_table_readers_memory;
    long long sum = rock_external_raw - rock_memtables_memory - readers +
                    (rock_memtables_memory > full ? rock_memtables_memory : full);
    double blocks = record_bytes >= ROCK_DATA_BLOCK ? 1 : record_bytes / ROCK_DATA_BLOCK;
    double added = readers > (long long)base ? (double)(readers - (long long)base) : 0;
    double floor = (double)records * (ROCK_FILTER_BITS / 8.0 + blocks * ROCK_INDEX_ENTRY);
    double grown = scale > 1 ? scale * added : added;
    if (grown < floor) grown = floor;
    sum += (long long)base + (long long)grown;
    return sum > ROCK_MEMORY_FLOOR ? (size_t)(sum - ROCK_MEMORY_FLOOR) : 0;
}

/* How full the memtables are now, 0 .. 1 (of ROCK_MEMTABLES full ones). */
double rockMemtablesFill(void) {
    if (!rock_store.db) return 0;
    return (double)rock_memtables_memory / ((double)rockStoreWriteBufferSize() * ROCK_MEMTABLES);
}

/* How full the memtables are on average while writes cycle them: the
 * active one from empty to full, none being flushed most of the time. */
double rockMemtablesSteadyFill(void) {
    return 0.5 / ROCK_MEMTABLES;
}

/* rockExternalMemory() as it would be at another `maxmemory`, the workload
 * the same: the block cache and the memtables are sized from maxmemory
 * (rockStoreCacheSize(), rockStoreWriteBufferSize()), so at a smaller one
 * they leave the values more room. The block cache at that size's
 * capacity when it is about full now (reads keep it full), else as it is;
 * the memtables at `memtable_fill` of their size there (a mean the caller
 * keeps: they swing from empty to full between flushes); the table readers
 * as they are (they grow with the data on disk, about all of it once the
 * values have moved out). ROCK SIZING's model (rock_sizing.c) asks. */
size_t rockExternalMemoryAt(unsigned long long maxmemory, double memtable_fill) {
    if (!rock_store.db) return 0;
    double cache = rock_store.cache ? (double)rocksdb_cache_get_usage(rock_store.cache) : 0;
    double capacity = (double)rockStoreCacheSizeAt(maxmemory);
    if (cache >= 0.9 * (double)rockStoreCacheSize() || cache > capacity) cache = capacity;
    double sum = cache + memtable_fill * (double)rockStoreWriteBufferSizeAt(maxmemory) * ROCK_MEMTABLES +
                 (double)rock_table_readers_memory;
    return sum > ROCK_MEMORY_FLOOR ? (size_t)(sum - ROCK_MEMORY_FLOOR) : 0;
}

/* The table readers' part of it (index and filter blocks held outside the
 * cache): it grows with the data on disk, not with what is in flight. */
size_t rockTableReadersMemory(void) {
    return rock_store.db ? rock_table_readers_memory : 0;
}

size_t rockExternalMemory(void) {
    return rock_store.db ? rock_external_memory : 0;
}

/* ---------------------------------------------------------------------------
 * Block counters of the reader threads
 *
 * What a cold read costs in disk blocks, by kind: RocksDB's per-thread perf
 * context at count level (no timers) on each reader thread gives its
 * block-cache hits and block reads for index, filter and data blocks, and
 * its reads of records kept in blob files (256 KB or more). A
 * reader adds its counts to rock_store.blocks[] (atomics: CONFIG RESETSTAT zeroes
 * them from the event loop) at most every ROCK_BLOCK_HARVEST_US while it
 * works, and once when it goes idle (rockStoreBlockCountsPending() tells it
 * to wait with a timeout), so ROCK REPORT lags the reads by up to that.
 * Reads on the event loop (sync_loads) are not counted.
 * ------------------------------------------------------------------------ */

#define ROCK_BLOCK_HARVEST_US 100000

static __thread rocksdb_perfcontext_t *rock_perf;
static __thread monotime rock_perf_harvested;
static __thread int rock_perf_dirty;

/* The report name of counter ROCK_BLK_* `i`. */
const char *rockBlockCountName(int i) {
    static const char *names[ROCK_BLK_COUNTS] = {
        "rocksdb_index_block_hits", "rocksdb_index_block_reads",
        "rocksdb_filter_block_hits", "rocksdb_filter_block_reads",
        "rocksdb_data_block_hits", "rocksdb_data_block_reads",
        "rocksdb_block_read_bytes", "rocksdb_filter_skips",
        "rocksdb_blob_reads", "rocksdb_blob_read_bytes"};
    return names[i];
}

/* A reader thread calls this once, before its first read. */
void rockStoreReaderInit(void) {
    rocksdb_set_perf_level(rocksdb_enable_count);
    rock_perf = rocksdb_perfcontext_create();
    rocksdb_perfcontext_reset(rock_perf);
    rock_perf_harvested = getMonotonicUs();
}

/* A reader thread calls this as it ends: its last counts, its context. */
void rockStoreReaderExit(void) {
    rockStoreHarvestBlockCounts();
    if (rock_perf) rocksdb_perfcontext_destroy(rock_perf);
    rock_perf = NULL;
}

/* The value of counter `name` in a perf context report ("a = 1, b = 2"). */
static long long rockPerfField(const char *report, const char *name) {
    size_t nlen = strlen(name);
    for (const char *p = report; (p = strstr(p, name)) != NULL; p += nlen) {
        if ((p == report || p[-1] == ' ') && strncmp(p + nlen, " = ", 3) == 0)
            return strtoll(p + nlen + 3, NULL, 10);
    }
    return 0;
}

/* Add this thread's counts to rock_store.blocks and start counting afresh. */
void rockStoreHarvestBlockCounts(void) {
    if (rock_perf == NULL || !rock_perf_dirty) return;
    char *r = rocksdb_perfcontext_report(rock_perf, 1);
    long long hits = rockPerfField(r, "block_cache_hit_count");
    long long reads = rockPerfField(r, "block_read_count");
    long long ihits = rockPerfField(r, "block_cache_index_hit_count");
    long long ireads = rockPerfField(r, "index_block_read_count");
    long long fhits = rockPerfField(r, "block_cache_filter_hit_count");
    long long freads = rockPerfField(r, "filter_block_read_count");
    long long dreads = reads - ireads - freads - rockPerfField(r, "compression_dict_block_read_count");
    atomicIncr(rock_store.blocks[ROCK_BLK_INDEX_HITS], ihits);
    atomicIncr(rock_store.blocks[ROCK_BLK_INDEX_READS], ireads);
    atomicIncr(rock_store.blocks[ROCK_BLK_FILTER_HITS], fhits);
    atomicIncr(rock_store.blocks[ROCK_BLK_FILTER_READS], freads);
    atomicIncr(rock_store.blocks[ROCK_BLK_DATA_HITS], hits - ihits - fhits);
    atomicIncr(rock_store.blocks[ROCK_BLK_DATA_READS], dreads > 0 ? dreads : 0);
    atomicIncr(rock_store.blocks[ROCK_BLK_READ_BYTES], rockPerfField(r, "block_read_byte"));
    atomicIncr(rock_store.blocks[ROCK_BLK_FILTER_SKIPS], rockPerfField(r, "bloom_sst_miss_count"));
    atomicIncr(rock_store.blocks[ROCK_BLK_BLOB_READS], rockPerfField(r, "blob_read_count"));
    atomicIncr(rock_store.blocks[ROCK_BLK_BLOB_READ_BYTES], rockPerfField(r, "blob_read_byte"));
    rocksdb_free(r);
    rocksdb_perfcontext_reset(rock_perf);
    rock_perf_dirty = 0;
    rock_perf_harvested = getMonotonicUs();
}

/* After each batch of reads: harvest when the last harvest is old enough. */
void rockStoreCountBatch(void) {
    rock_perf_dirty = 1;
    if (getMonotonicUs() - rock_perf_harvested >= ROCK_BLOCK_HARVEST_US) rockStoreHarvestBlockCounts();
}

/* Microseconds an idle reader may sleep before it must harvest, or -1 when
 * it has nothing to harvest. */
long long rockStoreBlockCountsPending(void) {
    if (!rock_perf_dirty) return -1;
    long long left = ROCK_BLOCK_HARVEST_US - (long long)(getMonotonicUs() - rock_perf_harvested);
    return left > 0 ? left : 0;
}

int rockSplitIsMeta(const char *rec, size_t len) {
    return len == ROCK_SPLIT_META_LEN && (rec[0] & ~ROCK_FORMAT_LFU) == ROCK_FORMAT_SPLIT;
}

