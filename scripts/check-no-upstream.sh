#!/usr/bin/env bash
# scripts/check-no-upstream.sh -- fail if git tracks any file that exists in
# the upstream Redis 7.0.15 tarball (the project holds only its own files).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
tarball=$top/deps/cache/redis_7.0.15.orig.tar.gz
[ -f "$tarball" ] || { echo "check-no-upstream: no tarball (run make fetch)" >&2; exit 1; }
up=$(mktemp)
trap 'rm -f "$up"' EXIT
tar tzf "$tarball" | sed -n 's|^[^/]*/||p' | grep -v '/$' | grep -v '^$' | sort > "$up"
# Top-level files both projects naturally have (our own README, Makefile,
# redis.conf, .gitignore) are ours unless their content is upstream's.
bad=$(cd "$top" && git ls-files | sort | comm -12 - "$up" | while read -r f; do
    if tar xzf "$tarball" -O "redis-7.0.15/$f" 2>/dev/null | cmp -s - "$f"; then echo "$f"; fi
    case "$f" in README.md|Makefile|redis.conf|.gitignore) ;; *) echo "$f" ;; esac
done | sort -u)
if [ -n "$bad" ]; then
    echo "check-no-upstream: these tracked files are upstream Redis files:" >&2
    echo "$bad" >&2
    exit 1
fi
echo "check-no-upstream: no upstream Redis file is tracked ($(cd "$top" && git ls-files | wc -l) files checked)"
