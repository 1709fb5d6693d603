/* rock_files.c -- redis-rock: files and folders of rock-dir.
 *
 * Storage layer (bottom). Plain file-system helpers the lifecycle files
 * (rock.c, rock_warm.c) share: creating, emptying and removing folders,
 * syncing and copying files, and the fatal start-up error. */

#include "server.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>


/* A start-up failure: one clear line in the log, exit status 1. */
void rockFatal(const char *fmt, ...) {
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    serverLog(LL_WARNING, "Fatal: rock: %s", msg);
    exit(1);
}

/* Create `path` and its missing parents, like `mkdir -p`. */
int rockMkdirs(const char *path) {
    char *p = zstrdup(path);
    int ret = 0;
    for (char *s = p + 1; ; s++) {
        if (*s == '/' || *s == '\0') {
            char saved = *s;
            *s = '\0';
            if (mkdir(p, 0755) == -1 && errno != EEXIST) {
                ret = -1;
                break;
            }
            *s = saved;
            if (saved == '\0') break;
        }
    }
    zfree(p);
    return ret;
}

static int rockRemoveEntry(const char *path, const struct stat *sb, int type, struct FTW *ftw) {
    UNUSED(sb);
    UNUSED(ftw);
    int ret = (type == FTW_DP) ? rmdir(path) : unlink(path);
    if (ret == -1 && errno != ENOENT) return -1;
    return 0;
}

/* Remove `path` recursively. Returns 0 on success (or if it did not exist). */
int rockRemoveTree(const char *path) {
    if (access(path, F_OK) == -1 && errno == ENOENT) return 0;
    return nftw(path, rockRemoveEntry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Remove everything inside the directory `path` but the entry named `keep`.
 * Returns -1 (errno set) on the first failure. */
int rockEmptyDirExcept(const char *path, const char *keep) {
    DIR *d = opendir(path);
    if (!d) return -1;
    struct dirent *de;
    int ret = 0;
    while (ret == 0 && (errno = 0, de = readdir(d)) != NULL) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") || !strcmp(de->d_name, keep)) continue;
        sds entry = sdscatfmt(sdsempty(), "%s/%s", path, de->d_name);
        ret = rockRemoveTree(entry);
        sdsfree(entry);
    }
    if (ret == 0 && errno != 0) ret = -1; /* readdir failed */
    int saved = errno;
    closedir(d);
    errno = saved;
    return ret;
}

/* True if `path` is a directory with no entries. */
int rockDirIsEmpty(const char *path) {
    DIR *d = opendir(path);
    if (!d) return 0;
    struct dirent *de;
    int empty = 1;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
            empty = 0;
            break;
        }
    }
    closedir(d);
    return empty;
}

/* fsync a file, or with `dir` a folder (its entries). */
int rockFsyncPath(const char *path, int dir) {
    int fd = open(path, (dir ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_CLOEXEC);
    if (fd == -1) return -1;
    int ret = fsync(fd);
    close(fd);
    return ret;
}

/* Copy file `src` to `dst` (created or truncated), synced. */
int rockCopyFile(const char *src, const char *dst) {
    int in = open(src, O_RDONLY | O_CLOEXEC), out = -1, ret = -1;
    if (in == -1) return -1;
    out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out != -1) {
        char buf[65536];
        ssize_t n;
        while ((n = read(in, buf, sizeof(buf))) > 0)
            if (write(out, buf, n) != n) break;
        if (n == 0 && fsync(out) == 0) ret = 0;
        close(out);
    }
    close(in);
    return ret;
}
