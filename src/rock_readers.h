/* rock_readers.h -- redis-rock: the reader pool's interface (layer 2).
 *
 * The read job the pool's threads fill, and the pool's functions. Included
 * by rock_read.h (the page-in side above it) and by rock_readers.c. The pool
 * knows nothing of clients or keyspaces: it reads the jobs handed to it and
 * hands them back through the completion function registered at start. */

#ifndef __REDIS_ROCK_READERS_H
#define __REDIS_ROCK_READERS_H

#include "server.h"

#define ROCK_READ_OK 0
#define ROCK_READ_NOTFOUND 1
#define ROCK_READ_ERROR 2

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

/* Registered by the page-in side at start (rockReadersStart()):
 *   point:    on a reader thread, read a batch of point jobs (job->point);
 *   complete: on the main thread, one job read (or failed);
 *   drained:  on the main thread, after a pass of completions. */
typedef void rockReadersPointProc(rockReadJob **jobs, int njobs);
typedef void rockReadersCompleteProc(rockReadJob *job);
typedef void rockReadersDrainedProc(void);

void rockReadersStart(int nthreads, rockReadersPointProc *point, rockReadersCompleteProc *complete,
                      rockReadersDrainedProc *drained);
void rockReadersStage(rockReadJob *job);
void rockReadersSubmit(void);
void rockReadersPause(void);
void rockReadersResume(void);
void rockReadersDetachChild(void);

/* Microseconds per value read (page-ins, point reads, synchronous loads). */
void rockRecordReadLatency(long long us);
long long rockReadLatencyPercentile(double p);
void rockReadLatencyReset(void);

#endif /* __REDIS_ROCK_READERS_H */
