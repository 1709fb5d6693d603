/* rock_read.c -- redis-rock: paging values back without blocking the event loop.
 *
 * This file owns the read path:
 *   - rockPrepareCommand(), called by processCommand() right before call():
 *     it finds the keys the command (or, at EXEC, every queued command) will
 *     touch (for SORT BY/GET, also the keys its patterns name, once the
 *     sorted value is in RAM); for each cold key whose value the command needs it queues a read
 *     and blocks the client (BLOCKED_ROCK). The command re-runs from the start
 *     of processCommand() once every read is back;
 *   - completions: the reader pool (rock_readers.c, a layer below) hands
 *     each job back to rockCompleteAny(), registered at start; the value is
 *     restored and the waiting clients unblocked. Several clients waiting
 *     for one key share one read; a voided read's result is thrown away;
 *   - pinning the values paged in until their command has run;
 *   - waiting for the writer when it is far behind.
 * Below it in the keyspace layer: rock_inflight.c (jobs in flight, pins,
 * per-client state), rock_order.c (arrival order: the per-key queues a
 * waiting command holds its place in), rock_point.c (point reads) and
 * rock_ahead.c (read-ahead of a pipeline's next commands); rock_read.h holds
 * what they share.
 * A value that can't be read fails the command with an error before it runs:
 * never a wrong answer. */

#include "server.h"
#include "rock_read.h"


static void rockResumeRead(client *c);
static void rockWaitWriterQueue(client *c);
static int rockPrepare(client *c);

/* ---------------------------------------------------------------------------
 * Client state and pins
 * ------------------------------------------------------------------------ */

/* freeClient(): the client's blocked state was already undone by
 * unblockClient(); release its pins and state. */
void rockFreeClient(client *c) {
    if (c->rock == NULL) return;
    rockUnpinAll(c);
    rockLeaveQueues(c);
    rockPointDrop(c);
    listRelease(c->rock->places);
    listRelease(c->rock->pins);
    sdsfree(c->rock->failed_key);
    zfree(c->rock);
    c->rock = NULL;
}

/* replicationCacheMaster(): the master link dropped while its client had a
 * command to re-run after a disk read (unblocked, not yet re-run; a master
 * still blocked is freed, not cached). The command goes with the discarded
 * query buffer (PSYNC resends it: the applied offset does not include it),
 * so it must not stay pending: processInputBuffer() would never parse the
 * resurrected master's stream again. */
void rockCacheMaster(client *c) {
    c->flags &= ~CLIENT_PENDING_COMMAND;
    if (c->rock == NULL) return;
    rockResumeRead(c);
    rockUnpinAll(c);
    rockLeaveQueues(c);
    rockPointDrop(c);
    sdsfree(c->rock->failed_key);
    c->rock->failed_key = NULL;
}

/* freeClient() of the master client, before it decides whether to cache it
 * for a partial resync: a master blocked on anything is not cached (a full
 * resync follows). A wait for a disk read is dropped instead, with the
 * command, which PSYNC resends. */
void rockMasterLinkLost(client *c) {
    if ((c->flags & CLIENT_BLOCKED) && c->btype == BLOCKED_ROCK) unblockClient(c);
}

/* commandProcessed(): the client's command is over (run, or rejected when it
 * re-ran: -OOM, -NOPERM, -BUSY, a redirect...); it no longer holds places,
 * and the values paged in for it are evictable again. A rejected re-run
 * never reaches rockPrepareCommand(), which unpins a command that runs: a
 * client whose every command gets -OOM would otherwise keep its values in
 * RAM for good. */
void rockCommandProcessed(client *c) {
    if (c->rock == NULL) return;
    rockResumeRead(c);
    rockPointDrop(c);
    if (listLength(c->rock->places)) rockLeaveQueues(c);
    if (listLength(c->rock->pins)) rockUnpinAll(c);
}

/* unblockClient() of a BLOCKED_ROCK client: when reads are still pending
 * (the client is being freed or force-unblocked), stop waiting for them.
 * A client whose reads are all back stays unread until its command re-runs
 * (rockPrepareCommand()): read in between, the rest of its pipeline would
 * pile up in the query buffer after all. */
void rockUnblockClient(client *c) {
    if (c->rock == NULL) return;
    /* Still waiting (freed, force-unblocked): no re-run will resume it. */
    if (c->rock->pending || c->rock->write_wait) rockResumeRead(c);
    if (c->rock->write_wait) {
        listDelNode(rock_io.write_waiters, c->rock->write_wait);
        c->rock->write_wait = NULL;
    }
    if (c->rock->pending == 0) return;
    listIter li;
    listNode *ln;
    listRewind(rock_io.jobs, &li);
    while ((ln = listNext(&li)) != NULL) {
        rockReadJob *job = listNodeValue(ln);
        listNode *w;
        while ((w = listSearchKey(job->waiters, c)) != NULL) listDelNode(job->waiters, w);
    }
    c->rock->pending = 0;
}

/* ---------------------------------------------------------------------------
 * Requests, voiding, completions
 * ------------------------------------------------------------------------ */

static void rockRequestRead(client *c, redisDb *db, sds key) {
    sds skey = rockStorageKey(db->id, key);
    rockReadJob *job = dictFetchValue(rock_io.inflight, skey);
    rockClientState *st = rockClient(c);
    if (job == NULL) {
        job = rockNewJob(db, key, skey);
        job->fill = st->pending > 0; /* not the command's first read */
        rockReadersStage(job);
    } else {
        sdsfree(skey);
    }
    if (listSearchKey(job->waiters, c) == NULL) {
        listAddNodeTail(job->waiters, c);
        st->pending++;
    }
}

/* A value read ahead counts as accessed now: the command it is for is about
 * to run, and eviction must not take it back out first. */
static void rockMarkAccessed(robj *val) {
    if (server.maxmemory_policy & MAXMEMORY_FLAG_LFU)
        val->lru = (LFUGetTimeInMinutes() << 8) | (val->lru & 255);
    else
        val->lru = LRU_CLOCK();
}

static void rockCompleteJob(rockReadJob *job) {
    if (!job->voided) dictDelete(rock_io.inflight, job->skey);
    listDelNode(rock_io.jobs, job->node);

    int applied = 0, failed = 0, dropped = 0, ahead_settled = 0;
    redisDb *db = job->voided ? NULL : rockDbBySid(job->sid);
    dictEntry *de = db ? dictFind(db->dict, job->key) : NULL;
    if (de && rockIsCold(dictGetVal(de))) {
        /* Not voided and still cold: this result is the current value. */
        if (job->status == ROCK_READ_OK) {
            rock_ks_stats.reads++;
            rock_ks_stats.read_bytes += sdslen(job->rec);
            if (job->elements) {
                rock_ks_stats.split_loads++;
                rock_ks_stats.element_reads += job->elements;
                rock_ks_stats.reads += job->elements;
            }
            if (job->has_access) rockRecordSetAccess(job->rec, job->access);
            robj *val = rockDeserialize(job->rec, job->key, db->id);
            /* A read-ahead value over its client's byte cap stays on disk. */
            if (val && job->ahead) {
                ahead_settled = 1;
                if (!rockAheadKeep(job, val, db->id)) {
                    decrRefCount(val);
                    val = NULL;
                    dropped = 1;
                }
            }
            if (val) {
                rockRecordReadLatency(getMonotonicUs() - job->start);
                /* Read ahead for a command about to run: accessed now, so
                 * that eviction does not take it straight back out. */
                rockRestoreValue(db, de, val); /* first: it notes the record's field */
                if (job->ahead && val->refcount != OBJ_SHARED_REFCOUNT) rockMarkAccessed(val);
                applied = 1;
            } else if (!dropped) {
                rock_ks_stats.errors++;
                serverLog(LL_WARNING, "rock: value of cold key '%s' is malformed in RocksDB", job->key);
                failed = 1;
            }
        } else {
            rock_ks_stats.errors++;
            if (job->status == ROCK_READ_NOTFOUND)
                serverLog(LL_WARNING, "rock: value of cold key '%s' is missing from RocksDB", job->key);
            failed = 1;
        }
    }

    if (job->ahead && !ahead_settled) rockAheadKeep(job, NULL, 0); /* its bookkeeping only */

    listIter li;
    listNode *ln;
    listRewind(job->waiters, &li);
    while ((ln = listNext(&li)) != NULL) {
        client *c = listNodeValue(ln);
        rockClientState *st = rockClient(c);
        if (applied) rockPin(c, job->skey);
        if (failed && st->failed_key == NULL) st->failed_key = sdsdup(job->key);
        st->pending--;
        rockMaybeWake(c);
    }
    listRelease(job->waiters);
    sdsfree(job->skey);
    sdsfree(job->key);
    sdsfree(job->rec);
    zfree(job);
}

/* ---------------------------------------------------------------------------
 * Before a command runs
 * ------------------------------------------------------------------------ */

/* One cold key a command needs: restore it now if its value is still in the
 * pending buffer, else queue a read. Returns 1 when a read was queued. */
static int rockNeedKey(client *c, redisDb *db, dictEntry *de, sds key) {
    /* A split collection with point writes not committed yet: paged in
     * once they are (every batch the writer hands back re-runs it). */
    rockSplitInfo *si = rockSplitLookup(db->id, key);
    if (si && si->ops > 0) {
        rockWaitWriterQueue(c);
        return 1;
    }
    sds skey = rockStorageKey(db->id, key);
    int queued = 0;
    if (rockPendingGet(skey)) {
        /* Its write is not committed yet: the value is still in RAM.
         * Restore it now, and pin it in case another key blocks us. */
        if (rockLoadEntry(db, de)) {
            rockPin(c, skey);
        } else {
            /* Logged and counted by the load: fail the command before it
             * runs, as for a failed disk read. */
            rockClientState *st = rockClient(c);
            if (st->failed_key == NULL) st->failed_key = sdsdup(key);
        }
    } else {
        rockRequestRead(c, db, key);
        queued = 1;
    }
    sdsfree(skey);
    return queued;
}

/* SORT ... BY/GET <pattern>: once the sorted value is in RAM, the keys its
 * elements name through the patterns are known; queue those that are cold,
 * so that SORT does not page them in one by one on the event loop. */
static int rockPatternKey(client *c, redisDb *db, sds pat, const char *ele, size_t elen) {
    char *star = strchr(pat, '*');
    char *arrow = strstr(star + 1, "->");
    size_t prefix = star - pat;
    size_t postfix = (arrow && arrow[2] != '\0') ? (size_t)(arrow - star - 1) : sdslen(pat) - prefix - 1;
    sds key = sdsnewlen(pat, prefix);
    key = sdscatlen(key, ele, elen);
    key = sdscatlen(key, star + 1, postfix);
    int queued = 0;
    dictEntry *de = dictFind(db->dict, key);
    if (de && rockIsCold(dictGetVal(de))) queued = rockNeedKey(c, db, de, key);
    sdsfree(key);
    return queued;
}

static int rockPrepareSort(client *c, redisDb *db, robj **argv, int argc) {
    sds pats[64];
    int npats = 0, queued = 0;
    if (!sdsEncodedObject(argv[1])) return 0;
    for (int j = 2; j + 1 < argc && npats < 64; j++) {
        if (!sdsEncodedObject(argv[j]) || !sdsEncodedObject(argv[j + 1])) continue;
        if (strcasecmp(argv[j]->ptr, "by") && strcasecmp(argv[j]->ptr, "get")) continue;
        sds p = argv[++j]->ptr;
        if (strchr(p, '*') && !(p[0] == '#' && p[1] == '\0')) pats[npats++] = p;
    }
    if (npats == 0 || server.cluster_enabled) return 0;
    dictEntry *de = dictFind(db->dict, argv[1]->ptr);
    if (de == NULL) return 0;
    robj *src = dictGetVal(de);
    if (rockIsCold(src)) return 0; /* paged in first; patterns on the re-run */

    char buf[LONG_STR_SIZE];
    if (src->type == OBJ_LIST) {
        listTypeIterator *li = listTypeInitIterator(src, 0, LIST_TAIL);
        listTypeEntry entry;
        while (listTypeNext(li, &entry)) {
            robj *raw = listTypeGet(&entry);
            robj *e = getDecodedObject(raw);
            for (int p = 0; p < npats; p++) queued += rockPatternKey(c, db, pats[p], e->ptr, sdslen(e->ptr));
            decrRefCount(e);
            decrRefCount(raw);
        }
        listTypeReleaseIterator(li);
    } else if (src->type == OBJ_SET) {
        setTypeIterator *si = setTypeInitIterator(src);
        sds e;
        while ((e = setTypeNextObject(si)) != NULL) {
            for (int p = 0; p < npats; p++) queued += rockPatternKey(c, db, pats[p], e, sdslen(e));
            sdsfree(e);
        }
        setTypeReleaseIterator(si);
    } else if (src->type == OBJ_ZSET && src->encoding == OBJ_ENCODING_LISTPACK) {
        unsigned char *zl = src->ptr, *eptr = lpSeek(zl, 0), *sptr, *vstr;
        unsigned int vlen;
        long long vlong;
        while (eptr) {
            vstr = lpGetValue(eptr, &vlen, &vlong);
            const char *ele = (const char *)vstr;
            size_t elen = vlen;
            if (vstr == NULL) {
                elen = ll2string(buf, sizeof(buf), vlong);
                ele = buf;
            }
            for (int p = 0; p < npats; p++) queued += rockPatternKey(c, db, pats[p], ele, elen);
            sptr = lpNext(zl, eptr);
            eptr = lpNext(zl, sptr);
        }
    } else if (src->type == OBJ_ZSET) {
        zset *zs = src->ptr;
        for (zskiplistNode *ln = zs->zsl->header->level[0].forward; ln; ln = ln->level[0].forward)
            for (int p = 0; p < npats; p++) queued += rockPatternKey(c, db, pats[p], ln->ele, sdslen(ln->ele));
    }
    return queued;
}

/* The head of multi.c's private watchedKey (Redis 7.0.15, the pinned
 * version): the key and its db are all we read. */
typedef struct rockWatchedKey {
    robj *key;
    redisDb *db;
} rockWatchedKey;

/* The keys of one command: reads queued for the cold ones it needs (the
 * return value), and each key's lock key added to `locks`, with *behind set
 * when another client waits ahead on one of them. */
static int rockPrepareOne(client *c, redisDb *db, struct redisCommand *cmd, robj **argv, int argc,
                          list *locks, int *behind, int point_ok) {
    getKeysResult result = GETKEYS_RESULT_INIT;
    int n = getKeysFromCommandWithSpecs(cmd, argv, argc, GET_KEYSPEC_DEFAULT, &result);
    int queued = 0;
    for (int j = 0; j < n; j++) {
        robj *key = argv[result.keys[j].pos];
        if (!sdsEncodedObject(key)) continue;
        /* ROCK STATUS and ROCK EVICT look at or move a value, never change
         * what clients see: they take no place and wait for no one. */
        if (!rockIsOwnKeyCommand(cmd)) {
            sds lk = rockLockKey(db, key->ptr);
            if (rockSomeoneAhead(c, lk)) *behind = 1;
            listAddNodeTail(locks, lk);
        }
        dictEntry *de = dictFind(db->dict, key->ptr);
        if (de == NULL || !rockIsCold(dictGetVal(de))) continue;
        /* Judged per key reference: O(keys), even for MGET of many keys. */
        if (!rockKeyRefNeedsValue(cmd, result.keys[j].flags)) continue;
        /* RENAME of a cold split collection moves its metadata alone. */
        if (point_ok && rockRenameCold(db, cmd, argv, argc, key->ptr)) continue;
        /* A point read of a collection stored element by element reads
         * those elements only (a command alone, not in a transaction). */
        int point = point_ok ? rockPointPrepare(c, db, cmd, argv, argc, de) : -1;
        if (point >= 0) {
            queued += point;
            continue;
        }
        queued += rockNeedKey(c, db, de, key->ptr);
    }
    getKeysFreeResult(&result);
    if (queued == 0 && (cmd->proc == sortCommand || cmd->proc == sortroCommand) && argc > 2)
        queued = rockPrepareSort(c, db, argv, argc);
    return queued;
}

/* A read for the client's command failed: the command gets an error before
 * it runs, and gives up its pins and places. A replica never skips a write
 * of its master's stream: the link is dropped without being cached for a
 * partial resync (a resync would resend the same command to the same
 * unreadable value), so the next sync is a full one, which also replaces
 * RocksDB with a fresh store. */
static int rockFailCommand(client *c, int is_exec) {
    if (c->flags & CLIENT_MASTER) {
        serverLog(LL_WARNING, "rock: can't read the value of '%s' from disk for a command of the master; "
                  "dropping the link for a full resync rather than skip it", c->rock->failed_key);
        rock_ks_stats.master_resyncs++;
        c->flags |= CLIENT_PROTOCOL_ERROR; /* freeClient() then does not cache it */
        freeClientAsync(c);
    } else {
        rockReplyReadFailed(c, c->rock->failed_key);
    }
    sdsfree(c->rock->failed_key);
    c->rock->failed_key = NULL;
    rockUnpinAll(c);
    rockLeaveQueues(c);
    if (is_exec) discardTransaction(c);
    return C_ERR;
}

/* Block `c` (BLOCKED_ROCK) until its reads are back, or the writer has
 * caught up; its command then re-runs from the start of processCommand(). */
static void rockBlock(client *c) {
    c->bpop.timeout = 0;
    blockClient(c, BLOCKED_ROCK);
    c->flags |= CLIENT_PENDING_COMMAND;
    rockClient(c)->waiting = 1;
}

/* readQueryFromClient(): the socket of a client that waits for a disk read
 * is not read: the rest of a pipeline stays in the kernel (TCP
 * back-pressure) instead of piling up in the query buffer, which counts
 * against maxmemory and which a stock Redis, never pausing a pipeline for
 * I/O, keeps at one read's worth. The master link too: its stream waits in
 * the kernel and, past that, in the master's output buffer for this replica
 * (whose limit ends in a resync, as for any slow replica), not in this
 * process's RAM with no limit at all. The read handler comes off only when
 * data arrives while it waits (then it would fire again and again): a
 * client that sends one command and waits for its reply, the common case,
 * costs no epoll change at all. Blocked clients are never read by I/O
 * threads (postponeClientRead()), so this runs on the main thread. */
int rockPauseRead(client *c) {
    if (c->rock == NULL || !c->rock->waiting || c->conn == NULL) return 0;
    if (io_threads_op != IO_THREADS_OP_IDLE) return 0; /* not from an I/O thread */
    connSetReadHandler(c->conn, NULL);
    c->rock->read_paused = 1;
    return 1;
}

/* Its command runs (or is done with): the connection is read again. */
static void rockResumeRead(client *c) {
    if (c->rock == NULL || !c->rock->waiting) return;
    c->rock->waiting = 0;
    if (c->rock->read_paused) {
        c->rock->read_paused = 0;
        /* A master being cached for PSYNC has no connection any more; the
         * resurrected one gets its handler anew. */
        if (c->conn) connSetReadHandler(c->conn, readQueryFromClient);
    }
}

/* A command that may grow memory (CMD_DENYOOM, or an EXEC holding one), the
 * kind upstream refuses with -OOM when over maxmemory. */
static int rockMayGrowMemory(client *c, int is_exec) {
    if (getCommandFlags(c) & CMD_DENYOOM) return 1;
    return is_exec && (c->mstate.cmd_flags & CMD_DENYOOM);
}

/* The writer is far behind (rockWriterBehind()): a write waits for it
 * instead of the whole event loop waiting, as it did, for as long as a
 * RocksDB write stall lasts. Reads and deletes go on. */
static int rockWaitForWriter(client *c) {
    rockWaitWriterQueue(c);
    rock_ks_stats.write_postponed++;
    rockBlock(c);
    return C_ERR;
}

/* `c` re-runs once the writer hands back its next batch
 * (rockWakeWriteWaiters()); the caller blocks it. */
static void rockWaitWriterQueue(client *c) {
    rockClientState *rs = rockClient(c);
    if (rs->write_wait) return;
    listAddNodeTail(rock_io.write_waiters, c);
    rs->write_wait = listLast(rock_io.write_waiters);
}

/* The writer handed back a batch (or its queue was dropped): every write
 * that waited for it re-runs; one that finds the writer still behind waits
 * again. */
void rockWakeWriteWaiters(void) {
    if (rock_io.write_waiters == NULL || listLength(rock_io.write_waiters) == 0) return;
    listNode *ln;
    while ((ln = listFirst(rock_io.write_waiters)) != NULL) {
        client *c = listNodeValue(ln);
        listDelNode(rock_io.write_waiters, ln);
        c->rock->write_wait = NULL;
        rockMaybeWake(c);
    }
}

/* Before call(): returns C_OK when the command can run now; C_ERR when it
 * must not run now: it was answered with an error, or the client is blocked
 * until its values are back (it then re-runs from processCommand()). A
 * client that runs (or was answered) has its connection read again. */
int rockPrepareCommand(client *c) {
    int ret = rockPrepare(c);
    if (!(c->flags & CLIENT_BLOCKED)) rockResumeRead(c);
    return ret;
}

static int rockPrepare(client *c) {
    int is_exec = c->cmd->proc == execCommand && (c->flags & CLIENT_MULTI);

    if (c->rock && c->rock->failed_key) return rockFailCommand(c, is_exec);
    if (rockWriterBehind() && rockMayGrowMemory(c, is_exec)) return rockWaitForWriter(c);
    if (!rock_store.db || (rockColdKeys() == 0 && dictSize(rock_io.queues) == 0)) {
        rockUnpinAll(c);
        return C_OK;
    }

    int queued = 0, behind = 0;
    int barrier = rockIsBarrierCommand(c->cmd);
    list *locks = listCreate();
    listSetFreeMethod(locks, (void (*)(void *))sdsfree);
    if (is_exec) {
        /* All keys of the transaction, before EXEC runs any of it (unless it
         * is going to abort anyway). SELECT inside moves later keys. */
        if (!(c->flags & (CLIENT_DIRTY_CAS | CLIENT_DIRTY_EXEC))) {
            redisDb *db = c->db;
            for (int j = 0; j < c->mstate.count; j++) {
                multiCmd *mc = &c->mstate.commands[j];
                if (mc->cmd->proc == selectCommand && mc->argc == 2) {
                    redisDb *to = rockSelectedDb(mc->argv[1]);
                    if (to) db = to;
                    continue;
                }
                if (rockIsBarrierCommand(mc->cmd)) barrier = 1;
                queued += rockPrepareOne(c, db, mc->cmd, mc->argv, mc->argc, locks, &behind, 0);
            }
            /* EXEC's outcome depends on its WATCHed keys too: a later write
             * to one of them must not abort it by overtaking it. */
            listIter li;
            listNode *ln;
            listRewind(c->watched_keys, &li);
            while ((ln = listNext(&li)) != NULL) {
                rockWatchedKey *wk = listNodeValue(ln);
                sds lk = rockLockKey(wk->db, wk->key->ptr);
                if (rockSomeoneAhead(c, lk)) behind = 1;
                listAddNodeTail(locks, lk);
            }
        }
    } else {
        queued = rockPrepareOne(c, c->db, c->cmd, c->argv, c->argc, locks, &behind, 1);
    }

    int holding = c->rock && listLength(c->rock->places);
    if (holding) {
        /* A re-run: it keeps the places it took when it first waited (same
         * command, same keys). Queues made since then belong to commands
         * that arrived after it: they don't count. */
        behind = !rockFirstEverywhere(c);
    } else if (dictSize(rock_io.queues)) {
        if (barrier) {
            /* FLUSHALL, FLUSHDB, SWAPDB: they change keys they don't name,
             * so they wait behind every client waiting now (a place at the
             * end of each queue), and every data command arriving after them
             * waits behind them (the barrier queue). */
            sds bk = rockBarrierKey();
            dictIterator *di = dictGetIterator(rock_io.queues);
            dictEntry *de;
            while ((de = dictNext(di)) != NULL) {
                if (sdscmp(dictGetKey(de), bk) != 0) listAddNodeTail(locks, sdsdup(dictGetKey(de)));
            }
            dictReleaseIterator(di);
            listAddNodeTail(locks, sdsdup(bk));
            behind = 1;
        } else if (rockIsDataCommand(c->cmd) && dictFind(rock_io.queues, rockBarrierKey())) {
            behind = 1;
            listAddNodeTail(locks, sdsdup(rockBarrierKey()));
        }
    }

    if (queued == 0 && c->rock && c->rock->failed_key) {
        /* A value in the pending buffer could not be restored (nothing was
         * queued for it): fail the command now, not run it without its
         * value, nor fail the client's next command instead. */
        listRelease(locks);
        return rockFailCommand(c, is_exec);
    }
    if (queued == 0 && !behind) {
        /* Runs now: make way for whoever waits behind it. */
        listRelease(locks);
        rockUnpinAll(c);
        rockLeaveQueues(c);
        return C_OK;
    }
    /* Waits: hold a place on each of its keys, so that later commands on
     * them wait behind it. On a re-run that waits again it holds them all
     * already (same command, same keys): no O(keys^2) membership check. */
    if (!holding) {
        listIter li;
        listNode *ln;
        listRewind(locks, &li);
        while ((ln = listNext(&li)) != NULL) rockTakePlace(c, listNodeValue(ln));
    }
    listRelease(locks);
    rockReadAhead(c);
    rockBlock(c);
    return C_ERR;
}

/* ---------------------------------------------------------------------------
 * In flight, start
 * ------------------------------------------------------------------------ */

/* A job read: a point job is rock_point.c's, the rest are paged in here. */
static void rockCompleteAny(rockReadJob *job) {
    if (job->point)
        rockPointComplete(job);
    else
        rockCompleteJob(job);
}

/* After a pass of completions. During an async load (repl-diskless-load
 * swapdb) clients are served from processEventsWhileBlocked(), whose
 * beforeSleep() does not re-run unblocked clients: do it here, or a client
 * reading the old dataset would wait for the load to end and then read the
 * new one. */
static void rockCompletionsDrained(void) {
    if (server.async_loading) processUnblockedClients();
}

void rockReadStart(void) {
    rockInflightInit();
    rockReadersStart(rock.io_threads, rockPointReadBatch, rockCompleteAny, rockCompletionsDrained);
}
