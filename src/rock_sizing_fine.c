/* rock_sizing_fine.c -- redis-rock: the RAM sizing model's fine caches.
 *
 * Layer 3 (keyspace; docs/architecture.md, "Layers"), a part of the sizing
 * model whose method rock_sizing.c's head comment describes; rock_sizing.h
 * is what the two share.
 *
 * At 1 key in 128, the model's smallest miniature cache follows about 6
 * keys, and which hot keys the sample holds moves its share by 10 points
 * either way. The ROCK_SIZING_FINE smallest caches are therefore replayed a
 * second time here, from a sample ROCK_SIZING_FINE_DENSITY times as dense
 * (keys whose hash falls under rock_sizing_fine_threshold). A fine cache
 * keeps only its residents (a key out of every cache needs no state: its
 * field is in its object), so the denser sample costs memory only for what
 * the small caches hold; one that outgrows what was allocated for it is not
 * used until the model starts over. They run while values are on disk
 * under a maxmemory, and count from when they start: where one has counted
 * enough, its miss share stands for its cache's (rockSizingFineMissShare()). */

#include "server.h"
#include "rock_sizing.h"

#include <math.h>

#define ROCK_SIZING_FINE_ROOM 1.5 /* residents allocated per expected resident */

/* A resident of a fine cache (the key's own entry: it is in no other). */
typedef struct rockSizingFineKey {
    uint64_t id;       /* hash of db and name (first: rockSizingIndex) */
    uint32_t size;     /* RAM bytes of the value */
    uint32_t field;    /* its LRU/LFU field */
    uint8_t paged;     /* paged in (it has a hot-clean entry) */
    uint8_t entry;     /* its hot-clean entry's bytes / 8 */
} rockSizingFineKey;

/* One of the smallest caches again, over the denser sample. */
typedef struct rockSizingFine {
    rockSizingFineKey *res; /* the residents */
    rockSizingIndex index;
    uint32_t count, max;
    uint64_t used;     /* their value bytes */
    double misses;     /* estimated misses of all keys since the reset */
    int overflowed;    /* outgrew max since it started: not used */
} rockSizingFine;

static struct {
    rockSizingFine c[ROCK_SIZING_FINE]; /* c[f]: cache ROCK_SIZING_CACHES - ROCK_SIZING_FINE + f */
    int live;       /* they run (rockSizingFineCheck()) */
    long long base; /* value accesses already counted when they started */
    uint64_t sample_threshold; /* the sample's own (rock_sizing_threshold) */
    double share[ROCK_SIZING_FINE]; /* c[f]'s share of the bytes (its cache's) */
} rsf;

/* Keys are in the fine sample when (rockSizingHash() & 0xffffffff) < this
 * (rock.h asks); the sample's own threshold while they do not run. */
uint64_t rock_sizing_fine_threshold;

/* Are the fine caches on? Not when the sample holds every key already. */
int rockSizingFineOn(void) {
    return rsf.c[0].res != NULL && rock_sizing_fine_threshold > rsf.sample_threshold;
}

static int rockSizingInFine(uint64_t id) {
    return (id & 0xffffffffULL) < rock_sizing_fine_threshold;
}

/* The fine caches' bytes stand for all the values' as the sample's do
 * (`bytes`: its movable values'), at their own rate: cache j's share of
 * the sample's bytes, that many times over. */
static double rockSizingFineCap(int f, double bytes) {
    double density = (double)rock_sizing_fine_threshold / (double)rsf.sample_threshold;
    return rsf.share[f] * bytes * density;
}

static uint64_t rockSizingFineCost(const rockSizingFineKey *e) {
    return e->size + (uint64_t)e->paged * 8u * e->entry;
}

/* Take the resident at table slot `slot` out of fine cache c. */
static void rockSizingFineDel(rockSizingFine *c, uint32_t slot) {
    uint32_t i = c->index.table[slot] - 1, last = --c->count;
    c->used -= rockSizingFineCost(&c->res[i]);
    rockSizingIndexDelete(&c->index, slot);
    if (i != last) {
        c->index.table[rockSizingIndexSlot(&c->index, c->res[last].id)] = i + 1;
        c->res[i] = c->res[last];
    }
}

static uint32_t rockSizingFineField(const void *p, uint32_t i) {
    return ((const rockSizingFine *)p)->res[i].field;
}

void rockSizingFineFitAll(double bytes) {
    if (!rockSizingFineOn()) return;
    for (int f = 0; f < ROCK_SIZING_FINE; f++) {
        rockSizingFine *c = &rsf.c[f];
        double cap = rockSizingFineCap(f, bytes);
        while ((double)c->used > cap && c->count) {
            uint32_t i = rockSizingVictim(c->count, rockSizingFineField, c);
            rockSizingFineDel(c, rockSizingIndexSlot(&c->index, c->res[i].id));
        }
    }
}

/* Fine-sample key `id` (named `key`) was read or written: its value, of
 * `size` bytes and access field `field`, is in RAM now. A key each cache
 * holds gets its new size and field, or leaves it if it cannot move (it
 * hits at any size); one it does not hold enters it, on a read as a miss
 * (`miss`), on a write without (a value written is in RAM at any size, and
 * has no hot-clean entry). With `enter` 0, only what the caches hold is
 * changed. */
void rockSizingFineSeen(uint64_t id, sds key, size_t size, int movable, uint32_t field, int enter, int miss, double bytes) {
    if (!rockSizingFineOn() || !rockSizingInFine(id)) return;
    if (size > UINT32_MAX) size = UINT32_MAX;
    double w = (double)ROCK_SIZING_ALL / (double)rock_sizing_fine_threshold;
    for (int f = 0; f < ROCK_SIZING_FINE; f++) {
        rockSizingFine *c = &rsf.c[f];
        uint32_t slot = rockSizingIndexSlot(&c->index, id);
        if (c->index.table[slot]) {
            rockSizingFineKey *e = &c->res[c->index.table[slot] - 1];
            if (!movable) {
                rockSizingFineDel(c, slot);
                continue;
            }
            c->used -= rockSizingFineCost(e);
            e->size = (uint32_t)size;
            e->field = field;
            c->used += rockSizingFineCost(e);
            continue;
        }
        if (!enter || !movable) continue;
        if (miss) c->misses += w;
        if (c->count == c->max) {
            c->overflowed = 1;
            continue;
        }
        rockSizingFineKey *e = &c->res[c->count];
        e->id = id;
        e->size = (uint32_t)size;
        e->field = field;
        e->paged = miss != 0;
        e->entry = rockSizingEntryUnits(key);
        c->index.table[slot] = ++c->count;
        c->used += rockSizingFineCost(e);
    }
    rockSizingFineFitAll(bytes);
}

/* Key `id` left the keyspace, or the fine sample. */
void rockSizingFineForget(uint64_t id) {
    if (!rsf.c[0].res) return;
    for (int f = 0; f < ROCK_SIZING_FINE; f++) {
        rockSizingFine *c = &rsf.c[f];
        uint32_t slot = rockSizingIndexSlot(&c->index, id);
        if (c->index.table[slot]) rockSizingFineDel(c, slot);
    }
}

/* The sample's threshold changed (a reset, a shrink), or the fine caches
 * started or stopped: the fine sample's follows it, and its keys above it
 * leave. Stopped, it is the sample's own (rock.h's test then costs what it
 * did without them). */
void rockSizingFineThreshold(uint64_t sample_threshold) {
    rsf.sample_threshold = sample_threshold;
    uint64_t t = sample_threshold * (rsf.live ? ROCK_SIZING_FINE_DENSITY : 1);
    rock_sizing_fine_threshold = t < ROCK_SIZING_ALL ? t : ROCK_SIZING_ALL;
    if (!rsf.c[0].res) return;
    for (int f = 0; f < ROCK_SIZING_FINE; f++) {
        rockSizingFine *c = &rsf.c[f];
        for (uint32_t i = c->count; i-- > 0;)
            if (!rockSizingInFine(c->res[i].id)) rockSizingFineDel(c, rockSizingIndexSlot(&c->index, c->res[i].id));
    }
}

void rockSizingFineClear(void) {
    for (int f = 0; f < ROCK_SIZING_FINE && rsf.c[f].res; f++) {
        rockSizingFine *c = &rsf.c[f];
        memset(c->index.table, 0, sizeof(uint32_t) * (c->index.mask + 1));
        c->count = 0;
        c->used = 0;
        c->misses = 0;
        c->overflowed = 0;
    }
}

/* The fine caches run while values are on disk under a maxmemory: they
 * cost about 5% of the instructions of a request served from RAM (a
 * value's size and six small caches for one access in 8), nothing next
 * to a read from disk, and a server with every value in RAM is asked
 * about the sizes near the floor least. Started, they begin empty and
 * count from then on (rockSizingFineAccesses()). Every 100 ms. */
void rockSizingFineCheck(uint64_t sample_threshold) {
    int live = server.maxmemory != 0 && rockColdKeys() > 0;
    if (live == rsf.live) return;
    rsf.live = live;
    rockSizingFineClear();
    rsf.base = rock_ks_stats.value_hits_ram + rock_ks_stats.value_hits_disk;
    rockSizingFineThreshold(sample_threshold);
}

/* The value accesses the fine caches have counted, when enough: the fine
 * sample's share of them is at least ROCK_SIZING_FINE_MIN_SAMPLED. */
#define ROCK_SIZING_FINE_MIN_SAMPLED 1000
static double rockSizingFineAccesses(void) {
    if (!rockSizingFineOn()) return 0;
    long long all = rock_ks_stats.value_hits_ram + rock_ks_stats.value_hits_disk - rsf.base;
    double rate = (double)rock_sizing_fine_threshold / (double)ROCK_SIZING_ALL;
    return all > 0 && (double)all * rate >= ROCK_SIZING_FINE_MIN_SAMPLED ? (double)all : 0;
}

/* Bytes per key of the sample the fine caches take: the residents of each
 * (with up to four table slots) that one key of the sample stands for. */
size_t rockSizingFinePerKey(void) {
    double per = 0;
    for (int j = ROCK_SIZING_CACHES - ROCK_SIZING_FINE; j < ROCK_SIZING_CACHES; j++)
        per += ROCK_SIZING_FINE_ROOM * ROCK_SIZING_FINE_DENSITY * rockSizingShare(j);
    return (size_t)ceil(per * (sizeof(rockSizingFineKey) + 4 * sizeof(uint32_t)));
}

/* Allocate the caches for a sample of `max` keys; returns their bytes. */
size_t rockSizingFineAlloc(uint32_t max) {
    size_t bytes = 0;
    for (int f = 0; f < ROCK_SIZING_FINE; f++) {
        rockSizingFine *c = &rsf.c[f];
        rsf.share[f] = rockSizingShare(ROCK_SIZING_CACHES - ROCK_SIZING_FINE + f);
        double expected = rsf.share[f] * ROCK_SIZING_FINE_DENSITY * max;
        c->max = (uint32_t)ceil(ROCK_SIZING_FINE_ROOM * expected) + 16;
        c->res = zmalloc(sizeof(rockSizingFineKey) * c->max);
        rockSizingIndexInit(&c->index, c->res, sizeof(rockSizingFineKey), c->max);
        bytes += zmalloc_size(c->res) + zmalloc_size(c->index.table);
    }
    return bytes;
}

void rockSizingFineFree(void) {
    for (int f = 0; f < ROCK_SIZING_FINE; f++) {
        zfree(rsf.c[f].res);
        zfree(rsf.c[f].index.table);
    }
    memset(&rsf, 0, sizeof(rsf));
    rock_sizing_fine_threshold = 0;
}

/* The counts start again at `base` value accesses; what the caches hold
 * stays. */
void rockSizingFineRecount(long long base) {
    for (int f = 0; f < ROCK_SIZING_FINE; f++) rsf.c[f].misses = 0;
    rsf.base = base;
}

/* Share of cache j's accesses that miss by its fine cache, -1 when it has
 * none or it has not counted enough (or overflowed). */
double rockSizingFineMissShare(int j) {
    int f = j - (ROCK_SIZING_CACHES - ROCK_SIZING_FINE);
    double fa = f >= 0 && !rsf.c[f].overflowed ? rockSizingFineAccesses() : 0;
    return fa > 0 ? rsf.c[f].misses / fa : -1;
}
