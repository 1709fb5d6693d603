/* rock_sizing.h -- redis-rock: what the sizing model's two files share.
 *
 * rock_sizing.c (the sample and the miniature caches) offers
 * rock_sizing_ram.c (the values in RAM now, what a maxmemory leaves the
 * values, and the predictions at a maxmemory) the curve and its
 * measures; rock_sizing_ram.c is the only caller, and rock_sizing.c calls
 * nothing of it. The hooks the rest of the server calls are in rock.h. */

#ifndef __REDIS_ROCK_SIZING_H
#define __REDIS_ROCK_SIZING_H

#include "server.h"

/* A hot-clean set's table holds 1 to 2 buckets an entry (it doubles when
 * full and shrinks once under a tenth full, rockKeysCron()): one and a half
 * are charged to each entry. */
#define ROCK_SIZING_BUCKET_SHARE (sizeof(dictEntry *) * 3 / 2)

/* The miniature caches: cache j stands for 2^(-0.5 (j+1)) of the bytes. */
#define ROCK_SIZING_CACHES 16

/* The curve: points (x, r), x a share of all value bytes from 0 to 1, r
 * the predicted share of value accesses from RAM there. */
#define ROCK_SIZING_POINTS (ROCK_SIZING_CACHES + 2)
int rockSizingCurve(double *x, double *r);

/* All the values' RAM, and their number, as the sample stands for them. */
double rockSizingValueBytes(void);
double rockSizingValueCount(void);

/* What a value in RAM weighs (objectComputeSize()), and whether eviction
 * would move it (*movable); the hot-clean entry a value paged in has besides. */
size_t rockSizingValueSize(int dbid, sds key, robj *val, int *movable);
size_t rockSizingCleanEntry(sds key);

/* The model's background work (rockSizingCron() calls it first), and
 * whether it has counted enough to predict (else why not). */
void rockSizingModelCron(void);
int rockSizingModelReady(const char **why);

#endif
