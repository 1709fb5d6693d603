/* rock.h -- redis-rock: the SSD tier's interface to the upstream tree.
 *
 * This header is included at the end of server.h (patch 0002), so every
 * upstream file sees the rock hooks and the `rock` global. It owns:
 *   - the rock configuration values (bound to the upstream config table);
 *   - the process-wide rock state (RocksDB handles, the rock-dir lock);
 *   - the prototypes of every hook the patch series calls.
 * All logic lives in src/rock_*.c; the patches only call into it. */

#ifndef __REDIS_ROCK_H
#define __REDIS_ROCK_H

#include <rocksdb/c.h>

/* rock-compression values. */
#define ROCK_COMPRESSION_NONE 0
#define ROCK_COMPRESSION_LZ4 1
#define ROCK_COMPRESSION_ZSTD 2
#define ROCK_COMPRESSION_LZ4_ZSTD 3 /* LZ4 on upper levels, ZSTD at the bottom. */

/* Name of the RocksDB folder inside rock-dir, and of the files beside it. */
#define ROCK_DB_SUBDIR "rocksdb"
#define ROCK_LOCK_FILE "redis-rock.lock"
#define ROCK_MARKER_FILE "REDIS-ROCK-DATA"

struct rockState {
    /* Configuration (see docs/configuration.md). */
    int enabled;                     /* rock-enabled */
    char *dir;                       /* rock-dir as configured */
    long long min_value_size;        /* rock-min-value-size */
    int io_threads;                  /* rock-io-threads */
    unsigned long long block_cache_size; /* rock-block-cache-size */
    int direct_io;                   /* rock-direct-io */
    int compression;                 /* rock-compression */

    /* Start-up-only options as they were when the server started. */
    struct {
        int enabled, io_threads, direct_io;
        char *dir;
    } started;

    /* Runtime state, valid while `db` is not NULL. */
    char *abs_dir;                   /* rock-dir resolved at startup */
    char *db_path;                   /* abs_dir/rocksdb */
    int lock_fd;                     /* fcntl-locked rock-dir/redis-rock.lock */
    rocksdb_t *db;
    rocksdb_options_t *opts;
    rocksdb_block_based_table_options_t *table_opts;
    rocksdb_cache_t *cache;
    rocksdb_filterpolicy_t *filter;
    long long opened_at;             /* unix time (ms) of the open */
};

extern struct rockState rock;
extern configEnum rock_compression_enum[];

/* rock.c: lifecycle and configuration. */
void rockStartup(void);
void rockShutdown(void);
int rockApplyStartupOnly(const char **err);
int rockApplyBlockCacheSize(const char **err);
int rockApplyCompression(const char **err);
int rockIsValidDir(char *val, const char **err);
const char *rockCompressionConfigName(int mode);

/* rock_report.c: operator-facing figures. */
sds rockGenInfoString(sds info);
void rockCommand(client *c);

#endif /* __REDIS_ROCK_H */
