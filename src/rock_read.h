/* rock_read.h -- redis-rock: what the read path's files share.
 *
 * Included only by rock_read.c (the read path proper), rock_order.c (arrival
 * order) and rock_ahead.c (read-ahead), siblings that call one another: the
 * read job, the per-client read state, the read path's state (rock_io), and
 * the functions one of them calls in another. Everything else stays static
 * in its file; the hooks the rest of the server calls are in rock.h. */

#ifndef __REDIS_ROCK_READ_H
#define __REDIS_ROCK_READ_H

#include "server.h"

#include <pthread.h>

#define ROCK_READ_OK 0
#define ROCK_READ_NOTFOUND 1
#define ROCK_READ_ERROR 2

/* object.c (MEMORY USAGE): the RAM of a value, sampled. Read-ahead's byte
 * cap and the pinned values' memory count with it. */
size_t objectComputeSize(robj *key, robj *o, size_t sample_size, int dbid);

typedef struct rockReadJob {
    sds skey;          /* RocksDB key: storage id + key */
    sds key;           /* key name */
    uint32_t sid;      /* storage id of the db at request time */
    sds rec;           /* result, filled by a reader thread */
    int status;        /* ROCK_READ_* */
    int voided;        /* the key changed meanwhile: drop the result */
    int has_access;    /* an access update of the record was queued and not */
    unsigned int access; /* ...handed back when the read was issued: its field */
    int ahead;         /* queued by read-ahead, for a command not yet parsed */
    uint64_t ahead_client; /* ...of this client (id: it may be gone by then) */
    int fill;          /* more reads of this client are due (read-ahead, several
                        * keys of one command): keep its block in the block cache */
    long long elements;/* a split collection read whole: its element records */
    /* A point read (rock_point.c): the element records a command names,
     * without paging the collection in. Never shared, never
     * in rock_io.inflight: its version tells a stale result. */
    int point;
    int nkeys;         /* the element records to read */
    sds *pkeys;
    sds *peles;        /* the elements named, distinct (one per record) */
    sds *pvals;        /* results (NULL: no such record) */
    char *pfixed;      /* 1: pvals[j] came from a queued write, not to be read */
    uint64_t version;  /* the split version the elements were asked of */
    uint64_t writes;   /* ...and its point writes at the time (rockSplitInfo) */
    rockSplitInfo *psi;/* that split state (a reference, and one of its readers) */
    struct redisCommand *cmd;
    int argc;
    list *waiters;     /* clients blocked on this read */
    listNode *node;    /* in rock_io.jobs */
    monotime start;
} rockReadJob;

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
    pthread_t *threads;
    int nthreads;
    pthread_mutex_t lock;     /* guards queue, done, stop */
    pthread_cond_t cond;      /* queue has work, or stop */
    pthread_cond_t stop_cond; /* wakes the debug delay early: stop only */
    list *queue;              /* jobs waiting for a reader */
    int share;                /* how many of them a reader takes at a time */
    list *done;               /* jobs read, waiting for the main thread */
    int stop;
    int pipe_rd, pipe_wr;     /* wakes the event loop */
    /* Main thread only. */
    dict *inflight;           /* skey -> job, for jobs not voided */
    list *jobs;               /* every job not yet completed */
    list *staged;             /* jobs of this event-loop pass, not yet handed over */
    dict *pinned;             /* skey -> pin count */
    dict *queues;             /* lock key -> list of waiting clients, in arrival order */
    list *write_waiters;      /* clients whose write waits for the writer thread */
} rockReadIo;

extern rockReadIo rock_io;

/* rock_read.c: client state, jobs, the db SELECT switches to. */
rockClientState *rockClient(client *c);
rockReadJob *rockNewJob(redisDb *db, sds key, sds skey);
redisDb *rockSelectedDb(robj *index);
redisDb *rockDbBySid(uint32_t sid);
void rockWaitWriterQueue(client *c);

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
void rockPointFreeJob(rockReadJob *job);
void rockPointDrop(client *c);

/* rock_ahead.c: read-ahead of a waiting client's pipeline. */
void rockReadAhead(client *c);
int rockAheadKeep(rockReadJob *job, robj *val, int dbid);

#endif /* __REDIS_ROCK_READ_H */
