/* rock_order.c -- redis-rock: commands on a key run in the order they arrived.
 *
 * Layer 3 (keyspace; docs/architecture.md, "Layers").
 *
 * This file owns arrival order, a sibling of the read path (rock_read.c):
 *   - arrival order: a client that waits holds its place on every key its
 *     command names (a FIFO per key); a later command from another client
 *     naming one of those keys waits behind it, even if it needs no value
 *     (DEL, SET, a push that would serve a blocked pop). So commands on a
 *     key run in the order they arrived, as on a stock server, and a read
 *     in flight is never overtaken. FLUSHALL, FLUSHDB and SWAPDB, which
 *     change keys they don't name, wait behind every client waiting when
 *     they arrive, and data commands arriving after them wait behind them.
 * The queues are rock_io.queues (lock key -> clients in arrival order);
 * rockPrepare() (rock_read.c) decides which places a command takes. A client
 * waiting there wakes once its reads are back and it is first everywhere. */

#include "server.h"
#include "rock_read.h"

/* A queue is keyed by db index and key name (not the storage id: a flush
 * must not let later commands overtake earlier ones on the same name). */
sds rockLockKey(redisDb *db, sds key) {
    sds lk = sdsnewlen(NULL, 4 + sdslen(key));
    uint32_t id = (uint32_t)db->id;
    memcpy(lk, &id, 4);
    memcpy(lk + 4, key, sdslen(key));
    return lk;
}

/* The queue of whole-dataset commands (FLUSHALL, FLUSHDB, SWAPDB) that wait
 * behind every client waiting when they arrived, and of the data commands
 * that arrived after one of them: db id UINT32_MAX, no key name. */
sds rockBarrierKey(void) {
    static sds bk = NULL; /* built once: looked up by every data command while anyone waits */
    if (bk == NULL) {
        uint32_t id = UINT32_MAX;
        bk = sdsnewlen(&id, 4);
    }
    return bk;
}

/* A command that changes every key of a db without naming any. */
int rockIsBarrierCommand(struct redisCommand *cmd) {
    return cmd->proc == flushallCommand || cmd->proc == flushdbCommand || cmd->proc == swapdbCommand;
}

/* A command whose result depends on the dataset: it must not overtake a
 * waiting whole-dataset command. (Connection and server commands, INFO,
 * PING, CLIENT..., need not wait.) */
int rockIsDataCommand(struct redisCommand *cmd) {
    return (cmd->flags & (CMD_WRITE | CMD_READONLY | CMD_MAY_REPLICATE)) || cmd->proc == execCommand;
}

/* Is another client ahead of `c` on this key? (Anyone in the queue, when `c`
 * is not in it yet: it would go to the end.) */
int rockSomeoneAhead(client *c, sds lk) {
    if (rock_io.queues == NULL || dictSize(rock_io.queues) == 0) return 0;
    list *q = dictFetchValue(rock_io.queues, lk);
    return q && listLength(q) && listNodeValue(listFirst(q)) != c;
}

/* Take a place at the end of the key's queue. */
void rockTakePlace(client *c, sds lk) {
    list *q = dictFetchValue(rock_io.queues, lk);
    if (q == NULL) {
        q = listCreate();
        dictAdd(rock_io.queues, sdsdup(lk), q);
    }
    listAddNodeTail(q, c);
    listAddNodeTail(rockClient(c)->places, sdsdup(lk));
}

/* Is `c` first on every key it stands in? */
int rockFirstEverywhere(client *c) {
    if (c->rock == NULL) return 1;
    listIter li;
    listNode *ln;
    listRewind(c->rock->places, &li);
    while ((ln = listNext(&li)) != NULL)
        if (rockSomeoneAhead(c, listNodeValue(ln))) return 0;
    return 1;
}

/* A waiting client may re-run once its reads are back and nobody is ahead
 * of it any more. */
void rockMaybeWake(client *c) {
    if ((c->flags & CLIENT_BLOCKED) && c->btype == BLOCKED_ROCK && c->rock &&
        c->rock->pending == 0 && c->rock->write_wait == NULL && rockFirstEverywhere(c))
        unblockClient(c);
}

/* `c` runs (or is gone): leave every queue, and wake whoever is now first. */
void rockLeaveQueues(client *c) {
    if (c->rock == NULL || listLength(c->rock->places) == 0) return;
    list *wake = listCreate();
    listNode *ln;
    while ((ln = listFirst(c->rock->places)) != NULL) {
        sds lk = listNodeValue(ln);
        dictEntry *de = dictFind(rock_io.queues, lk);
        if (de) {
            list *q = dictGetVal(de);
            listNode *me = listSearchKey(q, c);
            if (me) listDelNode(q, me);
            if (listLength(q) == 0) {
                listRelease(q);
                dictDelete(rock_io.queues, lk);
            } else {
                listAddNodeTail(wake, listNodeValue(listFirst(q)));
            }
        }
        listDelNode(c->rock->places, ln);
    }
    while ((ln = listFirst(wake)) != NULL) {
        rockMaybeWake(listNodeValue(ln));
        listDelNode(wake, ln);
    }
    listRelease(wake);
}
