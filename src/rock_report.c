/* rock_report.c -- redis-rock: what operators see of the SSD tier.
 *
 * This file owns the ROCK command (REPORT, HELP) and the `INFO rock` section.
 * Both render the same list of figures, collected once by
 * rockCollectFigures(): REPORT names a figure `name`, INFO names it
 * `rock_name`. Adding a figure to the list adds it to both. */

#include "server.h"

typedef struct rockFigure {
    const char *name;
    long long value;
} rockFigure;

#define ROCK_MAX_FIGURES 32

/* Read an integer RocksDB property, 0 if unavailable. */
static long long rockDbProperty(const char *prop) {
    uint64_t v = 0;
    if (!rock.db || rocksdb_property_int(rock.db, prop, &v) != 0) return 0;
    return (long long)v;
}

static int rockCollectFigures(rockFigure *f) {
    int n = 0;
    long long keys = 0, expires = 0;
    for (int j = 0; j < server.dbnum; j++) {
        keys += dictSize(server.db[j].dict);
        expires += dictSize(server.db[j].expires);
    }
    long long memtables = rockDbProperty("rocksdb.cur-size-all-mem-tables");
    long long readers = rockDbProperty("rocksdb.estimate-table-readers-mem");
    long long cache = rock.cache ? (long long)rocksdb_cache_get_usage(rock.cache) : 0;

    f[n++] = (rockFigure){"enabled", rock.db != NULL};
    f[n++] = (rockFigure){"keys", keys};
    f[n++] = (rockFigure){"expires", expires};
    f[n++] = (rockFigure){"used_memory", (long long)zmalloc_used_memory()};
    f[n++] = (rockFigure){"rocksdb_memory", memtables + readers + cache};
    f[n++] = (rockFigure){"rocksdb_memtables", memtables};
    f[n++] = (rockFigure){"rocksdb_block_cache_usage", cache};
    f[n++] = (rockFigure){"rocksdb_block_cache_capacity", rock.cache ? (long long)rocksdb_cache_get_capacity(rock.cache) : 0};
    f[n++] = (rockFigure){"rocksdb_table_readers", readers};
    f[n++] = (rockFigure){"rocksdb_disk_bytes", rockDbProperty("rocksdb.total-sst-files-size")};
    f[n++] = (rockFigure){"rocksdb_estimated_keys", rockDbProperty("rocksdb.estimate-num-keys")};
    f[n++] = (rockFigure){"rocksdb_write_stopped", rockDbProperty("rocksdb.is-write-stopped")};
    f[n++] = (rockFigure){"rocksdb_delayed_write_rate", rockDbProperty("rocksdb.actual-delayed-write-rate")};
    f[n++] = (rockFigure){"rocksdb_pending_compaction_bytes", rockDbProperty("rocksdb.estimate-pending-compaction-bytes")};
    f[n++] = (rockFigure){"rocksdb_running_compactions", rockDbProperty("rocksdb.num-running-compactions")};
    serverAssert(n <= ROCK_MAX_FIGURES);
    return n;
}

/* ---------------------------------------------------------------------------
 * INFO rock
 * ------------------------------------------------------------------------ */

sds rockGenInfoString(sds info) {
    rockFigure f[ROCK_MAX_FIGURES];
    int n = rockCollectFigures(f);

    info = sdscat(info, "# Rock\r\n");
    info = sdscatprintf(info, "rock_dir:%s\r\n", rock.abs_dir ? rock.abs_dir : "");
    info = sdscatprintf(info, "rock_compression:%s\r\n", rockCompressionConfigName(rock.compression));
    for (int i = 0; i < n; i++)
        info = sdscatprintf(info, "rock_%s:%lld\r\n", f[i].name, f[i].value);
    for (int j = 0; j < server.dbnum; j++) {
        long long keys = dictSize(server.db[j].dict);
        long long expires = dictSize(server.db[j].expires);
        if (keys || expires)
            info = sdscatprintf(info, "rock_db%d:keys=%lld,expires=%lld\r\n", j, keys, expires);
    }
    return info;
}

/* ---------------------------------------------------------------------------
 * ROCK command
 * ------------------------------------------------------------------------ */

static void rockReportCommand(client *c) {
    rockFigure f[ROCK_MAX_FIGURES];
    int n = rockCollectFigures(f);
    int dbs = 0;
    for (int j = 0; j < server.dbnum; j++)
        if (dictSize(server.db[j].dict) || dictSize(server.db[j].expires)) dbs++;

    addReplyMapLen(c, n + 3);
    addReplyBulkCString(c, "dir");
    addReplyBulkCString(c, rock.abs_dir ? rock.abs_dir : "");
    addReplyBulkCString(c, "compression");
    addReplyBulkCString(c, rockCompressionConfigName(rock.compression));
    for (int i = 0; i < n; i++) {
        addReplyBulkCString(c, f[i].name);
        addReplyLongLong(c, f[i].value);
    }
    addReplyBulkCString(c, "dbs");
    addReplyMapLen(c, dbs);
    for (int j = 0; j < server.dbnum; j++) {
        long long keys = dictSize(server.db[j].dict);
        long long expires = dictSize(server.db[j].expires);
        if (!keys && !expires) continue;
        addReplyBulkSds(c, sdscatfmt(sdsempty(), "db%i", j));
        addReplyMapLen(c, 2);
        addReplyBulkCString(c, "keys");
        addReplyLongLong(c, keys);
        addReplyBulkCString(c, "expires");
        addReplyLongLong(c, expires);
    }
}

void rockCommand(client *c) {
    if (c->argc == 2 && !strcasecmp(c->argv[1]->ptr, "help")) {
        const char *help[] = {
"REPORT",
"    Return figures of the SSD tier: keys, memory split, RocksDB memory, disk",
"    usage and write-stall state, and per-database key counts.",
NULL
        };
        addReplyHelp(c, help);
    } else if (c->argc == 2 && !strcasecmp(c->argv[1]->ptr, "report")) {
        rockReportCommand(c);
    } else {
        addReplySubcommandSyntaxError(c);
    }
}
