/* rock_ahead.c -- redis-rock: reading ahead of a waiting client's pipeline.
 *
 * Layer 3 (keyspace; docs/architecture.md, "Layers").
 *
 * This file owns read-ahead, a sibling of the read path (rock_read.c):
 *   - read-ahead (rock-read-ahead): a client about to wait may have more of
 *     its pipeline in its query buffer already. Those commands are parsed
 *     ahead (not consumed) and the cold values they will need are read now,
 *     in parallel, instead of one at a time as each command's turn comes.
 *     Such a read has no waiter; its value is paged in when it arrives, as
 *     if just accessed, and the command finds it in RAM (or joins the read
 *     still in flight). Nothing else changes: order, pins and staleness
 *     work as for any read.
 *   - its byte cap: what read-ahead pages in for one client is capped
 *     (rockAheadByteCap(), in RAM bytes); sizes are known only once read
 *     and decoded, so a value that arrives over the cap is dropped (it stays on disk; its command reads
 *     it again when its turn comes), and no more is read ahead for the
 *     client until its read-ahead reads are all back and it waits again.
 * rockPrepare() (rock_read.c) calls rockReadAhead() when a client is about to
 * wait; the jobs it queues are staged and completed like any other read, and
 * rockCompleteJob() asks rockAheadKeep() whether to page a result in. */

#include "server.h"
#include "rock_read.h"

#define ROCK_AHEAD_MAX_ARGS 256    /* longer commands end the read-ahead */
#define ROCK_AHEAD_MAX_ARG 1024    /* longer arguments (values) are not copied */
#define ROCK_AHEAD_MIN_CAP (1024 * 1024)
#define ROCK_AHEAD_MAX_CAP (64 * 1024 * 1024)


/* Bytes read-ahead may page in for one client at a time: a sixteenth of
 * maxmemory, between 1 MB and 64 MB (64 MB with no maxmemory). Without it
 * a pipeline of 64 GETs of large values would pull them all into RAM before
 * the first reply, far past maxmemory. */
static long long rockAheadByteCap(void) {
    long long cap = server.maxmemory ? (long long)(server.maxmemory / 16) : ROCK_AHEAD_MAX_CAP;
    if (cap < ROCK_AHEAD_MIN_CAP) cap = ROCK_AHEAD_MIN_CAP;
    if (cap > ROCK_AHEAD_MAX_CAP) cap = ROCK_AHEAD_MAX_CAP;
    return cap;
}

/* The RAM a value read ahead takes once paged in (not its record's size:
 * LZF, and the compact encodings a record keeps of a hash-table hash or a
 * skiplist zset, can make that many times smaller). Sampled as MEMORY USAGE
 * does by default. */
static long long rockAheadValueSize(rockReadJob *job, robj *val, int dbid) {
    robj key;
    initStaticStringObject(key, job->key);
    return (long long)objectComputeSize(&key, val, 5, dbid);
}

/* A read-ahead job is back (rockCompleteJob()) with its value decoded (or
 * NULL: voided, failed, or the key is not cold): page the value in? Not when its
 * client is gone, nor when it would take the bytes read ahead for the
 * client over the cap, unless a command already waits for it. Called once
 * per read-ahead job, whatever its outcome. */
int rockAheadKeep(rockReadJob *job, robj *val, int dbid) {
    client *c = lookupClientByID(job->ahead_client);
    rockClientState *st = c ? c->rock : NULL;
    if (st && st->ahead_inflight > 0) st->ahead_inflight--;
    if (val == NULL) return 1;
    if (listLength(job->waiters) > 0) return 1;
    long long bytes = st ? rockAheadValueSize(job, val, dbid) : 0;
    int keep = st && st->ahead_bytes + bytes <= rockAheadByteCap();
    if (st) st->ahead_bytes += bytes;
    if (!keep) rock_ks_stats.read_ahead_dropped++;
    return keep;
}

/* "<c><digits>\r\n" at *pp (the type byte already checked): the number, and
 * *pp moved past the line. 0 when the line is incomplete or malformed. */
static int rockAheadNumber(const char **pp, const char *end, long long *v) {
    const char *p = *pp + 1;
    const char *cr = p < end ? memchr(p, '\r', end - p) : NULL;
    if (cr == NULL || cr + 1 >= end || cr[1] != '\n') return 0;
    if (!string2ll(p, cr - p, v)) return 0;
    *pp = cr + 2;
    return 1;
}

/* Parses one complete RESP multibulk command at *pp without consuming it.
 * Returns argc and sets argv (string objects; an argument over
 * ROCK_AHEAD_MAX_ARG bytes becomes an empty one: it is a value, or a key too
 * long to be worth it) and *pp past the command; -1 when what follows is not
 * a complete multibulk command read-ahead looks at. */
static int rockAheadParse(const char **pp, const char *end, robj **argv) {
    const char *p = *pp;
    long long argc, len;
    if (p >= end || *p != '*' || !rockAheadNumber(&p, end, &argc) ||
        argc <= 0 || argc > ROCK_AHEAD_MAX_ARGS) return -1;
    for (int j = 0; j < argc; j++) {
        if (p >= end || *p != '$' || !rockAheadNumber(&p, end, &len) || len < 0 ||
            end - p < len + 2 || p[len] != '\r' || p[len + 1] != '\n') {
            while (j--) decrRefCount(argv[j]);
            return -1;
        }
        argv[j] = createStringObject(p, len <= ROCK_AHEAD_MAX_ARG ? len : 0);
        p += len + 2;
    }
    *pp = p;
    return (int)argc;
}

/* Queue reads for the cold values the commands after the current one in c's
 * query buffer will need (at most rock-read-ahead commands), skipping those
 * the client's ACL refuses. Called when c is
 * about to wait for the disk. Stops at anything it does not understand:
 * inline commands, unknown commands, wrong arity, a command that changes
 * keys it does not name (FLUSHALL, SWAPDB, ...). */
void rockReadAhead(client *c) {
    if (rock.read_ahead == 0 || c->querybuf == NULL || (c->flags & CLIENT_MASTER)) return;
    /* A new window once everything read ahead before is back (paged in or
     * dropped) and the client waits again: it has run the commands whose
     * values were kept, or most of them (values kept and not yet used are
     * not counted against the new window: the cap bounds one window, and
     * eviction bounds what windows leave behind). */
    rockClientState *st = rockClient(c);
    if (st->ahead_inflight == 0) st->ahead_bytes = 0;
    if (st->ahead_bytes >= rockAheadByteCap()) return;
    const char *p = c->querybuf + c->qb_pos, *end = c->querybuf + sdslen(c->querybuf);
    redisDb *db = c->db;
    robj *argv[ROCK_AHEAD_MAX_ARGS];
    for (int cmds = 0; cmds < rock.read_ahead && p < end; cmds++) {
        int argc = rockAheadParse(&p, end, argv);
        if (argc < 0) break;
        struct redisCommand *cmd = lookupCommand(argv, argc);
        int stop = cmd == NULL || (cmd->arity > 0 && cmd->arity != argc) || argc < -cmd->arity ||
                   rockIsBarrierCommand(cmd);
        /* A command the client's ACL refuses will not run: it reads
         * nothing ahead (no value of a key the client may not touch comes
         * into RAM on its behalf); a refused SELECT would leave the
         * database as it is, so it ends the read-ahead. */
        int aclpos, allowed = stop || ACLCheckAllUserCommandPerm(c->user, cmd, argv, argc, &aclpos) == ACL_OK;
        if (!stop && cmd->proc == selectCommand) {
            redisDb *to = allowed ? rockSelectedDb(argv[1]) : NULL;
            if (to) db = to;
            else stop = 1;
        } else if (!stop && allowed && (cmd->flags & CMD_MODULE) == 0) {
            getKeysResult result = GETKEYS_RESULT_INIT;
            int n = getKeysFromCommandWithSpecs(cmd, argv, argc, GET_KEYSPEC_DEFAULT, &result);
            for (int j = 0; j < n; j++) {
                robj *key = argv[result.keys[j].pos];
                if (sdslen(key->ptr) == 0) continue;
                dictEntry *de = dictFind(db->dict, key->ptr);
                if (de == NULL || !rockIsCold(dictGetVal(de))) continue;
                if (!rockKeyRefNeedsValue(cmd, result.keys[j].flags)) continue;
                /* A collection stored element by element is big: not paged
                 * in whole ahead of a command that may read one element. */
                dict *split = rock_ks.dbs[db->id].split;
                if (dictSize(split) && dictFind(split, key->ptr)) continue;
                sds skey = rockStorageKey(db->id, key->ptr);
                if (dictFind(rock_io.inflight, skey) || rockPendingGet(skey)) {
                    /* In flight already, or in RAM in the pending buffer. */
                    sdsfree(skey);
                    continue;
                }
                rockReadJob *job = rockNewJob(db, key->ptr, skey);
                job->ahead = job->fill = 1;
                job->ahead_client = c->id;
                st->ahead_inflight++;
                rockReadersStage(job);
                rock_ks_stats.read_ahead++;
            }
            getKeysFreeResult(&result);
        }
        for (int j = 0; j < argc; j++) decrRefCount(argv[j]);
        if (stop) break;
    }
}
