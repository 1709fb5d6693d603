#!/usr/bin/env bash
# scripts/check-patches.sh -- check that patches/ applies, in order and with no
# fuzz, to a pristine Redis 7.0.15 tree unpacked from the verified tarball.
set -euo pipefail

tarball=$1
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

tar xzf "$tarball" -C "$tmp" --strip-components=1
n=0
for p in "$top"/patches/*.patch; do
    [ -f "$p" ] || continue
    if ! out=$(patch -d "$tmp" -p1 -F0 -N --no-backup-if-mismatch -s < "$p" 2>&1); then
        echo "check-patches: $(basename "$p") does not apply cleanly:" >&2
        echo "$out" >&2
        exit 1
    fi
    n=$((n + 1))
done
if find "$tmp" -name '*.rej' -o -name '*.orig' | grep -q .; then
    echo "check-patches: rejects or fuzz left behind" >&2
    exit 1
fi
echo "check-patches: all $n patches apply cleanly to pristine Redis 7.0.15"
