/* rock_sizing_cache.c -- redis-rock: what the sizing model's miniature
 * caches share.
 *
 * Layer 3 (keyspace; docs/architecture.md, "Layers"), the bottom of the RAM
 * sizing model (rock_sizing.c describes the method): the open-addressing
 * index of key ids that the sample and each fine cache keep
 * (rock_sizing_fine.c), the victim a cache evicts (the coldest of
 * maxmemory-samples random residents, by the policy's LRU or LFU field, as
 * rock_evict.c picks), and what a hot-clean entry weighs. It calls neither
 * of the model's other files. */

#include "server.h"
#include "rock_sizing.h"

static struct {
    uint64_t rand; /* xorshift state of the victims' random picks */
    int lfu;       /* the fields are LFU counters */
} rsc = {0x2545F4914F6CDD1DULL, 0};

/* The model starts over with the policy's kind of field. */
void rockSizingCachePolicy(int lfu) {
    rsc.lfu = lfu;
}

/* Are the fields the model keeps LFU counters (else LRU clocks)? */
int rockSizingCacheLfu(void) {
    return rsc.lfu;
}

/* The model is built anew: the same picks for the same accesses. */
void rockSizingCacheSeed(void) {
    rsc.rand = 0x2545F4914F6CDD1DULL;
}

static uint32_t rockSizingRandom(uint32_t n) {
    rsc.rand ^= rsc.rand << 13;
    rsc.rand ^= rsc.rand >> 7;
    rsc.rand ^= rsc.rand << 17;
    return (uint32_t)(rsc.rand % n);
}

static uint64_t rockSizingIdAt(const rockSizingIndex *x, uint32_t i) {
    return *(const uint64_t *)((const char *)x->base + (size_t)i * x->stride);
}

/* The table slot holding `id`, or the empty slot where it would go. */
uint32_t rockSizingIndexSlot(const rockSizingIndex *x, uint64_t id) {
    uint32_t i = (uint32_t)(id >> 32) & x->mask;
    while (x->table[i] && rockSizingIdAt(x, x->table[i] - 1) != id) i = (i + 1) & x->mask;
    return i;
}

/* Empty slot i, moving later entries of its run back (no tombstones). */
void rockSizingIndexDelete(rockSizingIndex *x, uint32_t i) {
    uint32_t j = i;
    for (;;) {
        j = (j + 1) & x->mask;
        if (x->table[j] == 0) break;
        uint32_t home = (uint32_t)(rockSizingIdAt(x, x->table[j] - 1) >> 32) & x->mask;
        int between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!between) {
            x->table[i] = x->table[j];
            i = j;
        }
    }
    x->table[i] = 0;
}

/* A table with room for `max` records at a load of at most a half. */
void rockSizingIndexInit(rockSizingIndex *x, const void *base, size_t stride, size_t max) {
    size_t slots = 1;
    while (slots < 2 * (max + 1)) slots <<= 1;
    x->mask = (uint32_t)(slots - 1);
    x->table = zcalloc(sizeof(uint32_t) * slots);
    x->base = base;
    x->stride = stride;
}

/* How cold a field is under the policy: larger goes first (rock_evict.c's
 * rockColdness(), on a field kept outside an object; `now` the LRU clock). */
static unsigned long long rockSizingColdness(uint32_t field, unsigned int now) {
    if (rsc.lfu) {
        robj o;
        memset(&o, 0, sizeof(o));
        o.lru = field;
        return 255 - LFUDecrAndReturn(&o);
    }
    return now >= field ? now - field : now + (LRU_CLOCK_MAX - field);
}

/* The victim among `count` residents, as the tier picks it: the coldest
 * of maxmemory-samples random ones; field(p, i) is resident i's field. */
uint32_t rockSizingVictim(uint32_t count, uint32_t (*field)(const void *p, uint32_t i), const void *p) {
    int samples = server.maxmemory_samples < 1 ? 1 : server.maxmemory_samples;
    unsigned int now = LRU_CLOCK();
    uint32_t best = 0;
    unsigned long long best_score = 0;
    for (int s = 0; s < samples; s++) {
        uint32_t i = rockSizingRandom(count);
        unsigned long long score = rockSizingColdness(field(p, i), now);
        if (s == 0 || score > best_score) {
            best = i;
            best_score = score;
        }
    }
    return best;
}

/* What the allocator hands out for a request of `n` bytes. */
static size_t rockSizingAlloc(size_t n) {
#if defined(USE_JEMALLOC)
    return je_nallocx(n, 0);
#else
    return (n + 15) & ~(size_t)15;
#endif
}

/* The hot-clean entry a value paged in costs besides the value: a dict
 * entry, a copy of the key (sdsdup(): a 1-byte header under 32 bytes), as
 * the allocator sizes them (24 and 8 bytes for a 6-byte key, where
 * 24 + 16 overcharged each by 8: 100 KB over 12,000 entries, a third of
 * the room 300 KB above the floor), and its share of the set's table
 * (ROCK_SIZING_BUCKET_SHARE). */
size_t rockSizingCleanEntry(sds key) {
    size_t len = sdslen(key), header = len < 32 ? 1 : len < 256 ? 3 : len < 65536 ? 5 : 9;
    return rockSizingAlloc(sizeof(dictEntry)) + rockSizingAlloc(header + len + 1) + ROCK_SIZING_BUCKET_SHARE;
}

/* The hot-clean entry `key`'s value would have, in the 8-byte units a
 * key's record keeps. */
uint8_t rockSizingEntryUnits(sds key) {
    size_t entry = (rockSizingCleanEntry(key) + 7) / 8;
    return entry > UINT8_MAX ? UINT8_MAX : (uint8_t)entry;
}
