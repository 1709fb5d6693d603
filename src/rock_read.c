/* rock_read.c -- redis-rock: paging values back before a command runs.
 *
 * This file owns rockPrepareCommand(), called by processCommand() right
 * before call(): it finds the keys the command (or, at EXEC, every queued
 * command) will touch, and makes sure each one whose value the command needs
 * is in RAM before the command starts. A value that can't be read fails the
 * command with an error before it runs: never a wrong answer. */

#include "server.h"

/* Collect the keys of one command that need paging in. */
static int rockPrepareOne(client *c, redisDb *db, struct redisCommand *cmd, robj **argv, int argc) {
    getKeysResult result = GETKEYS_RESULT_INIT;
    int n = getKeysFromCommandWithSpecs(cmd, argv, argc, GET_KEYSPEC_DEFAULT, &result);
    int ret = C_OK;
    for (int j = 0; j < n && ret == C_OK; j++) {
        robj *key = argv[result.keys[j].pos];
        if (!sdsEncodedObject(key)) continue;
        dictEntry *de = dictFind(db->dict, key->ptr);
        if (de == NULL || !rockIsCold(dictGetVal(de))) continue;
        if (!rockKeyNeedsValue(cmd, argv, argc, key->ptr)) continue;
        if (rockLoadEntry(db, de) == NULL) {
            addReplyErrorFormat(c, "rock: can't read the value of '%s' from disk (see the server log)",
                                (char *)key->ptr);
            ret = C_ERR;
        }
    }
    getKeysFreeResult(&result);
    return ret;
}

/* Returns C_OK when the command can run now, C_ERR when it was answered
 * with an error and must not run. */
int rockPrepareCommand(client *c) {
    if (!rock.db || rockColdKeys() == 0) return C_OK;
    int ret;
    if (c->cmd->proc == execCommand && (c->flags & CLIENT_MULTI)) {
        /* All keys of the transaction, before EXEC runs any of it. SELECT
         * inside the transaction moves later keys to another db. */
        redisDb *db = c->db;
        ret = C_OK;
        for (int j = 0; j < c->mstate.count && ret == C_OK; j++) {
            multiCmd *mc = &c->mstate.commands[j];
            if (mc->cmd->proc == selectCommand && mc->argc == 2) {
                long long id;
                if (getLongLongFromObject(mc->argv[1], &id) == C_OK && id >= 0 && id < server.dbnum)
                    db = server.db + id;
                continue;
            }
            ret = rockPrepareOne(c, db, mc->cmd, mc->argv, mc->argc);
        }
        if (ret == C_ERR) discardTransaction(c);
    } else {
        ret = rockPrepareOne(c, c->db, c->cmd, c->argv, c->argc);
    }
    return ret;
}
