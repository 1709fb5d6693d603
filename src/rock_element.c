/* rock_element.c -- redis-rock: element writes of split collections.
 *
 * Layer 3 (keyspace; docs/architecture.md, "Layers").
 *
 * Below the keyspace side's key handling (rock_keys.c) and point commands
 * (rock_point.c), which both write single elements of a collection stored
 * element by element (rock_split.c):
 *   - the written marks: an element a point write changed must not be
 *     served from a read made before that write (rockSplitInfo.written);
 *   - an element's record value taken from a collection in RAM;
 *   - the clean drop of a collection point writes changed while it was in
 *     RAM: only those elements are written (rockPointFlushDirty()). */

#include "server.h"

/* Elements written since, each with its write's sequence number, are
 * remembered up to this many per key; past it the table starts over, and
 * elements read before that are all taken for stale. */
#define ROCK_POINT_WRITTEN_MAX 4096

/* A point write changed `ele`: later reads of it must not use a value read
 * before. Only reads outstanding now can have read it before: with none,
 * nothing is kept (a read made later sees the write). */
void rockPointNoteWritten(rockSplitInfo *si, sds ele) {
    if (si->readers == 0) {
        if (si->written) {
            dictRelease(si->written);
            si->written = NULL;
        }
        return;
    }
    if (si->written == NULL) si->written = dictCreate(&setDictType);
    if (dictSize(si->written) >= ROCK_POINT_WRITTEN_MAX) {
        dictEmpty(si->written, NULL);
        si->forgotten = si->writes;
    }
    dictEntry *existing, *de = dictAddRaw(si->written, ele, &existing);
    if (de) dictSetKey(si->written, de, sdsdup(ele));
    else de = existing;
    dictSetUnsignedIntegerVal(de, si->writes);
}

/* The record value of element `ele` of stand-in `o`, or NULL when absent. */
sds rockPointValueOf(robj *o, sds ele) {
    if (o->type == OBJ_ZSET) {
        dictEntry *de = dictFind(((zset *)o->ptr)->dict, ele);
        if (de == NULL) return NULL;
        double score = *(double *)dictGetVal(de);
        memrev64ifbe(&score);
        return sdsnewlen(&score, 8);
    }
    dictEntry *de = dictFind((dict *)o->ptr, ele);
    if (de == NULL) return NULL;
    return o->type == OBJ_HASH ? sdsdup(dictGetVal(de)) : sdsempty();
}

/* The clean drop of `key` (value `val`, split state `si`): queue the
 * elements point writes changed while it was in RAM, each as one record
 * put or delete, then the metadata record with the new count. Returns 1
 * when there was anything to write (counted by the caller). */
int rockPointFlushDirty(redisDb *db, sds key, robj *val, rockSplitInfo *si) {
    if (si->dirty == NULL) return 0;
    sds skey = rockStorageKey(db->id, key);
    si->writes++;
    dictIterator *di = dictGetIterator(si->dirty);
    dictEntry *de;
    while ((de = dictNext(di)) != NULL) {
        sds ele = dictGetKey(de);
        rockPointNoteWritten(si, ele);
        sds ekey = rockSplitElementKey(NULL, skey, sdslen(skey), si->version, ele, sdslen(ele));
        rockWriteElement(ekey, rockPointValueOf(val, ele), si, 1);
    }
    dictReleaseIterator(di);
    dictRelease(si->dirty);
    si->dirty = NULL;
    si->count = (uint64_t)rockCollectionSize(val);
    rockWriteElement(sdsdup(skey), rockSplitMeta(si), si, 0);
    sdsfree(skey);
    return 1;
}
