/* rock_split.c -- redis-rock: big collections stored element by element.
 *
 * Storage layer (below the threads and the keyspace side; calls nothing
 * above it). This file owns the split record format:
 *
 *   - a hash, set or sorted set in a hash-table or skiplist encoding with at
 *     least rock-split-min-elements elements is stored as a metadata record
 *     under the key's usual RocksDB key, plus one record per element:
 *
 *       metadata:  [sid][key] ->
 *                  [format 3][encoding][LRU/LFU 3 bytes][RDB type]
 *                  [version, 8 bytes BE][element count, 8 bytes BE]
 *       element:   [sid | ROCK_SPLIT_BIT][version, 8 bytes BE][element]
 *                  -> value
 *
 *     where the value is the field's value (hash), empty (set), or the
 *     score as the 8 bytes RDB's binary double is (sorted set). A version's
 *     elements are contiguous, sorted by element, and can never collide
 *     with a whole-value record (those have storage ids under the bit).
 *     The key's name is not in them: versions are unique in the process,
 *     so RENAME moves the metadata record alone (rock_keys.c);
 *   - the writer thread turns the whole-value record the event loop queued
 *     (the RDB payload rdbSaveObject() wrote, which is also what the pending
 *     buffer serves meanwhile) into those records (rockSplitBatch()), in
 *     one WriteBatch, so a snapshot never sees half of a collection; the
 *     version it replaces, if any, has its elements range-deleted in the
 *     same batch (rockWritePut()'s old version), and a version forgotten
 *     otherwise (DEL, overwrite) gets a range delete of its own;
 *   - any thread that reads a metadata record turns it back into the
 *     whole-value record (rockSplitAssemble()): readers paging a collection
 *     in, the fork stream, synchronous reads. Everything above the storage
 *     layer keeps seeing one record per key;
 *   - element keys for point reads (rockSplitElementKey()).
 *
 * Versions: every split write gets a new version (a counter of the
 * process, unique across keys: RocksDB is wiped at start-up), so a point
 * read can tell that the elements it found belong to the collection it
 * asked about, and a version's elements belong to one key whatever its
 * name. */

#include "server.h"
#include "rdb.h"
#include "lzf.h"


/* ---------------------------------------------------------------------------
 * Which values split, and their keys
 * ------------------------------------------------------------------------ */

/* Elements of a collection (hash, set, sorted set), or -1 for other types. */
long long rockCollectionSize(robj *val) {
    switch (val->type) {
    case OBJ_HASH: return (long long)hashTypeLength(val);
    case OBJ_SET: return (long long)setTypeSize(val);
    case OBJ_ZSET: return (long long)zsetLength(val);
    default: return -1;
    }
}

/* Is `val` stored element by element? Returns its element count if so, 0
 * if not. Only the encodings stock never
 * converts back from (hash table, skiplist), so that the encoding a
 * collection had when it left RAM is the one it gets back, and the order of
 * its elements (sorted by RocksDB, not by insertion) is never something a
 * reply shows: a listpack's order is, and it stays a whole value. */
int rockSplitEncoding(robj *val) {
    return ((val->type == OBJ_HASH || val->type == OBJ_SET) && val->encoding == OBJ_ENCODING_HT) ||
           (val->type == OBJ_ZSET && val->encoding == OBJ_ENCODING_SKIPLIST);
}

long long rockSplitEligible(robj *val) {
    if (!rockSplitEncoding(val)) return 0;
    long long n = rockCollectionSize(val);
    return n > 0 && n >= rock.split_min_elements ? n : 0;
}

static void rockPutU64(unsigned char *p, uint64_t v) {
    for (int j = 7; j >= 0; j--, v >>= 8) p[j] = v & 0xff;
}

static uint64_t rockGetU64(const unsigned char *p) {
    uint64_t v = 0;
    for (int j = 0; j < 8; j++) v = (v << 8) | p[j];
    return v;
}

/* The prefix of every element record of version `version` of the key
 * whose whole-value RocksDB key is `skey` ([sid][key]: only its storage id
 * is used), written into `buf` (reused, or NULL). */
sds rockSplitPrefixInto(sds buf, const char *skey, size_t sklen, uint64_t version) {
    serverAssert(sklen >= 4);
    unsigned char hdr[12];
    rockPutSid(hdr, rockGetSid((const unsigned char *)skey) | ROCK_SPLIT_BIT);
    rockPutU64(hdr + 4, version);
    return buf ? sdscpylen(buf, (char *)hdr, sizeof(hdr)) : sdsnewlen(hdr, sizeof(hdr));
}

/* The first key after every key that starts with `prefix`. */
sds rockSplitPrefixEnd(const sds prefix) {
    sds end = sdsdup(prefix);
    size_t len = sdslen(end);
    while (len > 0 && (unsigned char)end[len - 1] == 0xff) len--;
    serverAssert(len > 0); /* the storage id's first byte has the split bit */
    sdssetlen(end, len);
    end[len] = '\0';
    end[len - 1] = (char)((unsigned char)end[len - 1] + 1);
    return end;
}

/* The RocksDB key of one element of version `version` of the key of
 * `skey`, into `buf` (reused, or NULL). */
sds rockSplitElementKey(sds buf, const char *skey, size_t sklen, uint64_t version, const char *ele, size_t elen) {
    buf = rockSplitPrefixInto(buf, skey, sklen, version);
    return sdscatlen(buf, ele, elen);
}

/* ---------------------------------------------------------------------------
 * Which keys are split (main thread)
 * ------------------------------------------------------------------------ */

void rockSplitInfoRelease(rockSplitInfo *si) {
    if (--si->refs > 0) return;
    if (si->written) dictRelease(si->written);
    if (si->dirty) dictRelease(si->dirty);
    zfree(si);
}

static void rockSplitInfoDestructor(dict *d, void *val) {
    UNUSED(d);
    rockSplitInfoRelease(val);
}

/* A db's split dict: key (sds, owned) -> rockSplitInfo. */
dictType rockSplitDictType = {
    dictSdsHash, NULL, NULL, dictSdsKeyCompare, dictSdsDestructor, rockSplitInfoDestructor, NULL
};

/* ---------------------------------------------------------------------------
 * Metadata records
 * ------------------------------------------------------------------------ */

/* The LRU/LFU field of split state `si` (its header's, as a record's). */
unsigned int rockSplitAccess(const rockSplitInfo *si) {
    return rockFieldGet(si->header);
}

/* The metadata record of split state `si`: its header, version and count
 * as they are now in RAM (the RAM state is the record's: every change of
 * it is queued for the writer in key order). */
sds rockSplitMeta(const rockSplitInfo *si) {
    sds m = sdsnewlen(NULL, ROCK_SPLIT_META_LEN);
    memcpy(m, si->header, ROCK_HEADER_LEN + 1);
    m[0] = ROCK_FORMAT_SPLIT | (si->header[0] & ROCK_FORMAT_LFU);
    rockPutU64((unsigned char *)m + ROCK_HEADER_LEN + 1, si->version);
    rockPutU64((unsigned char *)m + ROCK_HEADER_LEN + 9, si->count);
    return m;
}

/* Version and element count of a metadata record (rockSplitIsMeta()). */
static void rockSplitMetaInfo(const char *rec, uint64_t *version, uint64_t *count) {
    const unsigned char *p = (const unsigned char *)rec + ROCK_HEADER_LEN + 1;
    if (version) *version = rockGetU64(p);
    if (count) *count = rockGetU64(p + 8);
}

/* ---------------------------------------------------------------------------
 * RDB payload reading and writing (thread-safe: no server state)
 * ------------------------------------------------------------------------ */

typedef struct rockCursor {
    const unsigned char *p, *end;
} rockCursor;

static int rockReadLen(rockCursor *c, uint64_t *len, int *encoded) {
    if (c->p >= c->end) return C_ERR;
    unsigned char b = *c->p++;
    int kind = (b & 0xC0) >> 6;
    *encoded = 0;
    if (kind == RDB_ENCVAL) {
        *encoded = 1;
        *len = b & 0x3F;
    } else if (kind == RDB_6BITLEN) {
        *len = b & 0x3F;
    } else if (kind == RDB_14BITLEN) {
        if (c->p >= c->end) return C_ERR;
        *len = ((uint64_t)(b & 0x3F) << 8) | *c->p++;
    } else if (b == RDB_32BITLEN || b == RDB_64BITLEN) {
        int n = b == RDB_32BITLEN ? 4 : 8;
        if (c->end - c->p < n) return C_ERR;
        uint64_t v = 0;
        for (int j = 0; j < n; j++) v = (v << 8) | *c->p++;
        *len = v;
    } else {
        return C_ERR;
    }
    return C_OK;
}

/* One RDB string (plain, integer-encoded or LZF) into `*out` (reused). */
static int rockReadString(rockCursor *c, sds *out) {
    uint64_t len;
    int encoded;
    if (rockReadLen(c, &len, &encoded) == C_ERR) return C_ERR;
    if (!encoded) {
        if ((uint64_t)(c->end - c->p) < len) return C_ERR;
        *out = sdscpylen(*out, (const char *)c->p, len);
        c->p += len;
        return C_OK;
    }
    if (len == RDB_ENC_INT8 || len == RDB_ENC_INT16 || len == RDB_ENC_INT32) {
        int n = len == RDB_ENC_INT8 ? 1 : len == RDB_ENC_INT16 ? 2 : 4;
        if (c->end - c->p < n) return C_ERR;
        long long v;
        if (n == 1) v = (int8_t)c->p[0];
        else if (n == 2) v = (int16_t)(c->p[0] | (c->p[1] << 8));
        else v = (int32_t)((uint32_t)c->p[0] | ((uint32_t)c->p[1] << 8) | ((uint32_t)c->p[2] << 16) | ((uint32_t)c->p[3] << 24));
        c->p += n;
        char buf[LONG_STR_SIZE];
        int blen = ll2string(buf, sizeof(buf), v);
        *out = sdscpylen(*out, buf, blen);
        return C_OK;
    }
    if (len != RDB_ENC_LZF) return C_ERR;
    uint64_t clen, ulen;
    if (rockReadLen(c, &clen, &encoded) == C_ERR || encoded) return C_ERR;
    if (rockReadLen(c, &ulen, &encoded) == C_ERR || encoded) return C_ERR;
    if ((uint64_t)(c->end - c->p) < clen) return C_ERR;
    sdsclear(*out);
    *out = sdsMakeRoomFor(*out, ulen);
    if (ulen && lzf_decompress(c->p, clen, *out, ulen) != ulen) return C_ERR;
    sdssetlen(*out, ulen);
    (*out)[ulen] = '\0';
    c->p += clen;
    return C_OK;
}

static sds rockCatLen(sds s, uint64_t len) {
    unsigned char buf[9];
    size_t n;
    if (len < (1 << 6)) {
        buf[0] = (len & 0xFF) | (RDB_6BITLEN << 6);
        n = 1;
    } else if (len < (1 << 14)) {
        buf[0] = ((len >> 8) & 0xFF) | (RDB_14BITLEN << 6);
        buf[1] = len & 0xFF;
        n = 2;
    } else if (len <= UINT32_MAX) {
        buf[0] = RDB_32BITLEN;
        for (int j = 0; j < 4; j++) buf[1 + j] = (len >> (24 - 8 * j)) & 0xff;
        n = 5;
    } else {
        buf[0] = RDB_64BITLEN;
        rockPutU64(buf + 1, len);
        n = 9;
    }
    return sdscatlen(s, buf, n);
}

static sds rockCatString(sds s, const char *p, size_t len) {
    s = rockCatLen(s, len);
    return sdscatlen(s, p, len);
}

/* ---------------------------------------------------------------------------
 * Writer thread: a whole-value record becomes metadata + elements
 * ------------------------------------------------------------------------ */

/* Add to `wb` the records of version `version` of the value whose
 * whole-value record `rec` is queued under `skey`: each element, the
 * metadata. Returns C_ERR (nothing
 * added) when `rec` is not a collection this format holds. Sets *elements
 * to the number of element records added. */
int rockSplitBatch(rocksdb_writebatch_t *wb, const char *skey, size_t sklen, const char *rec, size_t len,
                   uint64_t version, long long *elements) {
    if (len < ROCK_HEADER_LEN + 1 || (rec[0] & ~ROCK_FORMAT_LFU) != ROCK_FORMAT_V2) return C_ERR;
    int type = (unsigned char)rec[ROCK_HEADER_LEN];
    if (type != RDB_TYPE_HASH && type != RDB_TYPE_SET && type != RDB_TYPE_ZSET_2) return C_ERR;
    rockCursor c = {(const unsigned char *)rec + ROCK_HEADER_LEN + 1, (const unsigned char *)rec + len};
    uint64_t count;
    int encoded;
    if (rockReadLen(&c, &count, &encoded) == C_ERR || encoded) return C_ERR;

    /* Parse it all first: a malformed record adds nothing. */
    rockCursor check = c;
    sds a = sdsempty(), b = sdsempty();
    int ok = 1;
    for (uint64_t j = 0; ok && j < count; j++) {
        ok = rockReadString(&check, &a) == C_OK;
        if (ok && type == RDB_TYPE_HASH) ok = rockReadString(&check, &b) == C_OK;
        if (ok && type == RDB_TYPE_ZSET_2) {
            ok = check.end - check.p >= 8;
            check.p += 8;
        }
    }
    if (!ok || check.p != check.end) {
        sdsfree(a);
        sdsfree(b);
        return C_ERR;
    }

    sds prefix = rockSplitPrefixInto(NULL, skey, sklen, version);
    size_t plen = sdslen(prefix);
    for (uint64_t j = 0; j < count; j++) {
        rockReadString(&c, &a);
        const char *val = "";
        size_t vlen = 0;
        if (type == RDB_TYPE_HASH) {
            rockReadString(&c, &b);
            val = b;
            vlen = sdslen(b);
        } else if (type == RDB_TYPE_ZSET_2) {
            val = (const char *)c.p;
            vlen = 8;
            c.p += 8;
        }
        sdssetlen(prefix, plen);
        prefix = sdscatlen(prefix, a, sdslen(a));
        rocksdb_writebatch_put(wb, prefix, sdslen(prefix), val, vlen);
    }
    unsigned char meta[ROCK_SPLIT_META_LEN];
    memcpy(meta, rec, ROCK_HEADER_LEN + 1);
    meta[0] = ROCK_FORMAT_SPLIT | (rec[0] & ROCK_FORMAT_LFU);
    rockPutU64(meta + ROCK_HEADER_LEN + 1, version);
    rockPutU64(meta + ROCK_HEADER_LEN + 9, count);
    rocksdb_writebatch_put(wb, skey, sklen, (const char *)meta, sizeof(meta));
    sdsfree(prefix);
    sdsfree(a);
    sdsfree(b);
    *elements = (long long)count;
    return C_OK;
}

/* ---------------------------------------------------------------------------
 * Any thread: metadata + elements become the whole-value record again
 * ------------------------------------------------------------------------ */

/* The whole-value record of the collection whose metadata record `meta` was
 * read under `skey`, its elements read with `ro` (a snapshot's options for
 * the fork stream). Returns NULL with *err set (a static message, or one to
 * free with rocksdb_free() when *err_owned) when the elements can't be read
 * or do not match the metadata.
 *
 * With a `sink`, the record is not kept whole: each piece of about
 * ROCK_SPLIT_PIECE bytes goes to sink(ctx, piece, len) as soon as it is
 * built, in order, and an empty sds is returned on success (the fork stream:
 * a collection of many MB is never all in the parent's memory). A sink that
 * returns -1 stops the walk: NULL, with *err rockSplitRefused. */
#define ROCK_SPLIT_PIECE (64 * 1024)
const char rockSplitRefused[] = "write refused";
sds rockSplitAssembleTo(const char *skey, size_t sklen, const char *meta, size_t mlen, rocksdb_readoptions_t *ro,
                        rockSplitSink *sink, void *ctx, char **err, int *err_owned, long long *elements) {
    *err = NULL;
    *err_owned = 0;
    if (!rockSplitIsMeta(meta, mlen) || rock_store.db == NULL) {
        *err = "malformed metadata record";
        return NULL;
    }
    uint64_t version, count;
    rockSplitMetaInfo(meta, &version, &count);
    int type = (unsigned char)meta[ROCK_HEADER_LEN];
    sds rec = sdsnewlen(meta, ROCK_HEADER_LEN + 1);
    rec[0] = ROCK_FORMAT_V2 | (meta[0] & ROCK_FORMAT_LFU);
    rec = rockCatLen(rec, count);

    sds prefix = rockSplitPrefixInto(NULL, skey, sklen, version);
    size_t plen = sdslen(prefix);
    rocksdb_iterator_t *it = rocksdb_create_iterator(rock_store.db, ro);
    uint64_t seen = 0;
    int refused = 0;
    rocksdb_iter_seek(it, prefix, plen);
    while (rocksdb_iter_valid(it)) {
        size_t klen, vlen;
        const char *k = rocksdb_iter_key(it, &klen);
        if (klen < plen || memcmp(k, prefix, plen) != 0) break;
        const char *val = rocksdb_iter_value(it, &vlen);
        if (++seen > count) break;
        rec = rockCatString(rec, k + plen, klen - plen);
        if (type == RDB_TYPE_HASH) {
            rec = rockCatString(rec, val, vlen);
        } else if (type == RDB_TYPE_ZSET_2) {
            if (vlen != 8) {
                seen = count + 1; /* malformed */
                break;
            }
            rec = sdscatlen(rec, val, 8);
        }
        if (sink && sdslen(rec) >= ROCK_SPLIT_PIECE) {
            /* The sink may wait (a pipe to a slow child): no iterator is
             * held meanwhile (its blocks and read-ahead buffers); a fresh
             * one on the same snapshot seeks past this element after. */
            char *e = NULL;
            sds last = sdsnewlen(k, klen);
            rocksdb_iter_get_error(it, &e);
            rocksdb_iter_destroy(it);
            it = NULL;
            if (!e && sink(ctx, rec, sdslen(rec)) == 0) it = rockStoreIterAfter(ro, last, sdslen(last));
            sdsfree(last);
            sdsclear(rec);
            if (it) continue;
            if (e) *err = e;
            else refused = 1;
            break;
        }
        rocksdb_iter_next(it);
    }
    if (it) {
        rocksdb_iter_get_error(it, err);
        rocksdb_iter_destroy(it);
    }
    sdsfree(prefix);
    if (*err) {
        *err_owned = 1;
    } else if (refused) {
        *err = (char *)rockSplitRefused;
    } else if (seen != count) {
        *err = "element records do not match the metadata record";
    } else if (sink && sdslen(rec) && sink(ctx, rec, sdslen(rec)) == -1) {
        *err = (char *)rockSplitRefused;
    }
    if (*err) {
        sdsfree(rec);
        return NULL;
    }
    if (sink) sdsclear(rec);
    if (elements) *elements = (long long)count;
    return rec;
}

sds rockSplitAssemble(const char *skey, size_t sklen, const char *meta, size_t mlen, rocksdb_readoptions_t *ro,
                      char **err, int *err_owned, long long *elements) {
    return rockSplitAssembleTo(skey, sklen, meta, mlen, ro, NULL, NULL, err, err_owned, elements);
}

/* Read a record. Returns an sds (caller frees), or NULL with *found = 0 when
 * the key has no record, or NULL with *found = 1 on a RocksDB error. */
sds rockDbGet(const sds skey, int *found) {
    char *err = NULL;
    size_t len;
    if (rock_store.db == NULL) {
        /* A forked child (rockForkDetachChild()): RocksDB belongs to the
         * parent and its threads, none of which exist here. */
        rock_store_stats.errors++;
        serverLog(LL_WARNING, "rock: a forked child can't read a cold value from RocksDB");
        *found = 1;
        return NULL;
    }
    char *v = rocksdb_get(rock_store.db, rock_store.ropts, skey, sdslen(skey), &len, &err);
    if (err) {
        rockNoteError("read", err);
        *found = 1;
        return NULL;
    }
    *found = v != NULL;
    if (!v) return NULL;
    sds rec;
    rock_store_stats.reads++;
    if (rockSplitIsMeta(v, len)) {
        /* A collection stored element by element: read them all. */
        int owned;
        long long elements = 0;
        rec = rockSplitAssemble(skey, sdslen(skey), v, len, rock_store.ropts_nofill, &err, &owned, &elements);
        rocksdb_free(v);
        if (rec == NULL) {
            rock_store_stats.errors++;
            serverLog(LL_WARNING, "rock: RocksDB read of a collection's elements failed: %s", err);
            if (owned) rocksdb_free(err);
            return NULL; /* *found = 1: an error, not a missing value */
        }
        rock_store_stats.split_loads++;
        rock_store_stats.element_reads += elements;
        rock_store_stats.reads += elements;
    } else {
        rec = sdsnewlen(v, len);
        rocksdb_free(v);
    }
    rock_store_stats.read_bytes += sdslen(rec);
    return rec;
}

