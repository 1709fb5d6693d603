/* tests/modules/rockflags.c -- a test module for redis-rock: what a module
 * sees of the server's memory state. Copied into the upstream tree's
 * tests/modules by tests/run.sh and built there like upstream's test modules.
 *
 *   ROCKFLAGS.OOM  ->  [oom, oom_warning, used_memory_ratio x 1000]
 *
 * from RM_GetContextFlags() (REDISMODULE_CTX_FLAGS_OOM, _OOM_WARNING) and
 * RM_GetUsedMemoryRatio(). Used by unit/rock/maxmemory.tcl. */

#include "redismodule.h"

static int rockflagsOom(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    REDISMODULE_NOT_USED(argv);
    if (argc != 1) return RedisModule_WrongArity(ctx);
    int flags = RedisModule_GetContextFlags(ctx);
    RedisModule_ReplyWithArray(ctx, 3);
    RedisModule_ReplyWithLongLong(ctx, (flags & REDISMODULE_CTX_FLAGS_OOM) != 0);
    RedisModule_ReplyWithLongLong(ctx, (flags & REDISMODULE_CTX_FLAGS_OOM_WARNING) != 0);
    RedisModule_ReplyWithLongLong(ctx, (long long)(RedisModule_GetUsedMemoryRatio() * 1000));
    return REDISMODULE_OK;
}

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc) {
    REDISMODULE_NOT_USED(argv);
    REDISMODULE_NOT_USED(argc);
    if (RedisModule_Init(ctx, "rockflags", 1, REDISMODULE_APIVER_1) == REDISMODULE_ERR) return REDISMODULE_ERR;
    if (RedisModule_CreateCommand(ctx, "rockflags.oom", rockflagsOom, "readonly fast", 0, 0, 0) == REDISMODULE_ERR)
        return REDISMODULE_ERR;
    return REDISMODULE_OK;
}
