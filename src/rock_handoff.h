/* rock_handoff.h -- redis-rock: the hand-off between the event loop and a
 * tier thread pool (layer 2, rock_handoff.c).
 *
 * Both of the tier's thread kinds, the writer (rock_write.c) and the reader
 * pool (rock_readers.c), work the same way, as upstream's bio.c does: the
 * main thread queues work under a lock and signals a condition; a thread
 * takes work, does it without the lock, and hands the result back on a
 * `done` list; a pipe wakes the event loop, which drains that list on the
 * main thread. This is that mechanism, written once. What a thread does with
 * its work, and what the main thread does with a result, stay with the pool.
 * `queue` and `stop` are guarded by `lock`, as are any fields of the pool's
 * own that its thread loop reads together with them. */

#ifndef __REDIS_ROCK_HANDOFF_H
#define __REDIS_ROCK_HANDOFF_H

#include "server.h"

#include <pthread.h>

typedef void rockHandoffCompleteProc(void *result);
typedef void rockHandoffDrainedProc(void);

typedef struct rockHandoff {
    const char *name;          /* "reader", "writer": in fatal log lines */
    pthread_mutex_t lock;      /* guards queue, done, stop */
    pthread_cond_t work;       /* queue has work, or stop (or the pool's own ask) */
    pthread_cond_t done_cond;  /* a result was handed back */
    pthread_cond_t stop_cond;  /* wakes a thread's sleep early: stop only */
    list *queue;               /* work waiting for a thread */
    list *done;                /* results waiting for the main thread */
    int stop;
    int pipe_rd, pipe_wr;      /* wakes the event loop */
    pthread_t *threads;        /* NULL: not running (or a forked child) */
    int nthreads;
    void *(*main)(void *);
    rockHandoffCompleteProc *complete; /* main thread: each result */
    rockHandoffDrainedProc *drained;   /* main thread: after a wake-up's pass, or NULL */
} rockHandoff;

void rockHandoffInit(rockHandoff *h, const char *name, rockHandoffCompleteProc *complete,
                     rockHandoffDrainedProc *drained);
void rockHandoffStart(rockHandoff *h, int nthreads, void *(*main)(void *));
void rockHandoffStop(rockHandoff *h);
int rockHandoffRunning(rockHandoff *h);
void rockHandoffDetachChild(rockHandoff *h);
void rockHandoffGiveBack(rockHandoff *h, void **results, int n);
int rockHandoffSleep(rockHandoff *h, long long ms);
void rockHandoffDrain(rockHandoff *h);

#endif /* __REDIS_ROCK_HANDOFF_H */
