/* rock_sizing.h -- redis-rock: what the sizing model's four files share.
 *
 * rock_sizing.c (the sample and the miniature caches) offers
 * rock_sizing_ram.c (the values in RAM now, what a maxmemory leaves the
 * values, and the predictions at a maxmemory) the curve and its
 * measures; rock_sizing_ram.c is the only caller, and rock_sizing.c calls
 * nothing of it. rock_sizing.c calls rock_sizing_fine.c (the smallest
 * caches again, over a denser sample), and both call rock_sizing_cache.c
 * (the index of ids, the victim choice, an entry's weight), which calls
 * neither.
 * The hooks the rest of the server calls are in rock.h. */

#ifndef __REDIS_ROCK_SIZING_H
#define __REDIS_ROCK_SIZING_H

#include "server.h"

#include <math.h>

/* A hot-clean set's table holds 1 to 2 buckets an entry (it doubles when
 * full and shrinks once under a tenth full, rockKeysCron()): one and a half
 * are charged to each entry. */
#define ROCK_SIZING_BUCKET_SHARE (sizeof(dictEntry *) * 3 / 2)

/* The miniature caches: cache j stands for 2^(-0.5 (j+1)) of the bytes;
 * the ROCK_SIZING_FINE smallest are replayed again from a sample
 * ROCK_SIZING_FINE_DENSITY times as dense (rock_sizing_fine.c). */
#define ROCK_SIZING_CACHES 16
#define ROCK_SIZING_SHARE_STEP 0.5
#define ROCK_SIZING_FINE 6
#define ROCK_SIZING_FINE_DENSITY 16
#define ROCK_SIZING_ALL (1ULL << 32) /* the threshold that samples every key */
static inline double rockSizingShare(int j) {
    return exp2(-ROCK_SIZING_SHARE_STEP * (j + 1));
}

/* The curve: points (x, r), x a share of all value bytes from 0 to 1, r
 * the predicted share of value accesses from RAM there. */
#define ROCK_SIZING_POINTS (ROCK_SIZING_CACHES + 2)
int rockSizingCurve(double *x, double *r);

/* All the values' RAM, and their number, as the sample stands for them. */
double rockSizingValueBytes(void);
double rockSizingValueCount(void);

/* What a value in RAM weighs (objectComputeSize()), and whether eviction
 * would move it (*movable) (rock_sizing.c); the hot-clean entry a value
 * paged in has besides (rock_sizing_cache.c). */
size_t rockSizingValueSize(int dbid, sds key, robj *val, int *movable);
size_t rockSizingCleanEntry(sds key);

/* rock_sizing_cache.c: an open-addressing table of ids (index + 1, 0 empty) over an array of
 * records whose first field is the id: the sample's keys, and each fine
 * cache's residents. */
typedef struct rockSizingIndex {
    uint32_t *table;
    uint32_t mask;
    const void *base;  /* the records */
    size_t stride;     /* sizeof one */
} rockSizingIndex;
void rockSizingIndexInit(rockSizingIndex *x, const void *base, size_t stride, size_t max);
uint32_t rockSizingIndexSlot(const rockSizingIndex *x, uint64_t id);
void rockSizingIndexDelete(rockSizingIndex *x, uint32_t i);

/* The victim among `count` residents as the tier picks it (field(p, i):
 * resident i's access field), by the kind of field set last; the picks'
 * random state starts again at each seeding. */
void rockSizingCachePolicy(int lfu);
int rockSizingCacheLfu(void);
void rockSizingCacheSeed(void);
uint32_t rockSizingVictim(uint32_t count, uint32_t (*field)(const void *p, uint32_t i), const void *p);

/* The hot-clean entry a value paged in has besides (rockSizingCleanEntry(),
 * below), in the 8-byte units a cache's record keeps. */
uint8_t rockSizingEntryUnits(sds key);

/* The fine caches (rock_sizing_fine.c). `bytes`: the sample's movable
 * value bytes, which the caches' shares are of; `sample_threshold`: the
 * sample's (rock_sizing_threshold), which the fine sample's follows. */
size_t rockSizingFinePerKey(void);
size_t rockSizingFineAlloc(uint32_t max);
void rockSizingFineFree(void);
int rockSizingFineOn(void);
void rockSizingFineSeen(uint64_t id, sds key, size_t size, int movable, uint32_t field, int enter, int miss, double bytes);
void rockSizingFineForget(uint64_t id);
void rockSizingFineFitAll(double bytes);
void rockSizingFineThreshold(uint64_t sample_threshold);
void rockSizingFineClear(void);
void rockSizingFineCheck(uint64_t sample_threshold);
void rockSizingFineRecount(long long base);
double rockSizingFineMissShare(int j);

/* The model's background work (rockSizingCron() calls it first), and
 * whether it has counted enough to predict (else why not). */
void rockSizingModelCron(void);
int rockSizingModelReady(const char **why);

#endif
