/* rock_conf.c -- redis-rock: the configuration values and the counters.
 *
 * This file owns what every layer of the tier reads, kept at the bottom so
 * that no layer reaches up for it:
 *   - `rock`: the rock-* configuration values, bound to upstream's config
 *     table (patch 0003). Written by config.c (the config file, CONFIG SET)
 *     and, for the start-up-only options, by rockStartup(); the tier only
 *     reads them;
 *   - the names of rock-compression's values.
 * (Each layer keeps its own counters: rock_store_stats, rock_write_stats,
 * rock_ks_stats; ROCK REPORT adds them up.) */

#include "server.h"

struct rockConfig rock;

configEnum rock_compression_enum[] = {
    {"none", ROCK_COMPRESSION_NONE},
    {"lz4", ROCK_COMPRESSION_LZ4},
    {"zstd", ROCK_COMPRESSION_ZSTD},
    {"lz4-zstd", ROCK_COMPRESSION_LZ4_ZSTD},
    {NULL, 0}
};

/* Name of a rock-compression value, as written in redis.conf. */
const char *rockCompressionConfigName(int mode) {
    for (configEnum *ce = rock_compression_enum; ce->name; ce++)
        if (ce->val == mode) return ce->name;
    return "unknown";
}
