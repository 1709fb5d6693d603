/* rock_read.h -- redis-rock: what the read path's files share.
 *
 * Included by the keyspace layer's read side: rock_inflight.c (jobs in
 * flight, pins, client state), rock_order.c (arrival order), rock_point.c,
 * rock_ahead.c (read-ahead) and rock_read.c (the page-in path), in that
 * order from the bottom: each calls only the ones before it. The read job
 * itself is the reader pool's (rock_readers.h). Everything else stays static
 * in its file; the hooks the rest of the server calls are in rock.h. */

#ifndef __REDIS_ROCK_READ_H
#define __REDIS_ROCK_READ_H

#include "server.h"

#include "rock_readers.h"

/* object.c (MEMORY USAGE): the RAM of a value, sampled. Read-ahead's byte
 * cap and the pinned values' memory count with it. */
size_t objectComputeSize(robj *key, robj *o, size_t sample_size, int dbid);


/* Per-client read state, allocated on first use, freed with the client. */
typedef struct rockClientState {
    int pending;       /* reads this client still waits for */
    sds failed_key;    /* a read failed: the command gets an error */
    list *pins;        /* skeys pinned for this client's next run */
    int waiting;       /* blocked for the disk or the writer, or unblocked and
                        * not yet re-run: its connection is not to be read */
    int read_paused;   /* ...and its read handler is off (data came meanwhile) */
    list *places;      /* lock keys of the per-key queues it stands in */
    listNode *write_wait; /* in rock_io.write_waiters: its write waits for the writer */
    int ahead_inflight;   /* its read-ahead jobs not yet completed */
    long long ahead_bytes; /* bytes read ahead for it in this window (rock_ahead.c) */
    struct rockPointStash *point; /* elements read for its next run (rock_point.c) */
} rockClientState;

/* The read path's state, defined in rock_read.c. */
typedef struct rockReadIo {
    /* Main thread only; the reader threads are rock_readers.c's. */
    dict *inflight;           /* skey -> job, for jobs not voided */
    list *jobs;               /* every job not yet completed */
    dict *pinned;             /* skey -> pin count */
    dict *queues;             /* lock key -> list of waiting clients, in arrival order */
    list *write_waiters;      /* clients whose write waits for the writer thread */
} rockReadIo;

extern rockReadIo rock_io;

/* rock_inflight.c: client state, jobs in flight, pins, the db SELECT
 * switches to. */
void rockInflightInit(void);
rockClientState *rockClient(client *c);
rockReadJob *rockNewJob(redisDb *db, sds key, sds skey);
redisDb *rockSelectedDb(robj *index);
redisDb *rockDbBySid(uint32_t sid);
void rockPin(client *c, sds skey);
void rockUnpinAll(client *c);


/* rock_order.c: arrival order, one FIFO of waiting clients per key. */
sds rockLockKey(redisDb *db, sds key);
sds rockBarrierKey(void);
int rockIsBarrierCommand(struct redisCommand *cmd);
int rockIsDataCommand(struct redisCommand *cmd);
int rockSomeoneAhead(client *c, sds lk);
void rockTakePlace(client *c, sds lk);
int rockFirstEverywhere(client *c);
void rockMaybeWake(client *c);
void rockLeaveQueues(client *c);

/* rock_point.c: point reads of collections stored element by element. */
int rockPointPrepare(client *c, redisDb *db, struct redisCommand *cmd, robj **argv, int argc, dictEntry *de);
void rockPointReadBatch(rockReadJob **jobs, int njobs);
void rockPointComplete(rockReadJob *job);
void rockPointDrop(client *c);

/* rock_ahead.c: read-ahead of a waiting client's pipeline. */
void rockReadAhead(client *c);
int rockAheadKeep(rockReadJob *job, robj *val, int dbid);

#endif /* __REDIS_ROCK_READ_H */
