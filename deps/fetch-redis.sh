#!/usr/bin/env bash
# deps/fetch-redis.sh -- get the pinned upstream Redis 7.0.15 tarball and verify it.
#
# Result: deps/cache/redis_7.0.15.orig.tar.gz, whose SHA-256 is listed in
# deps/redis-7.0.15.sha256. Sources, in order:
#   1. $REDIS_TARBALL, a tarball the user supplies (any system);
#   2. the cached copy, re-verified;
#   3. Debian's source package (`apt-get source --download-only redis`), with
#      deb-src entries derived from the machine's own apt sources, kept in a
#      private apt state folder so no system file is written.
# Debian's own patches are never applied: only the .orig tarball is kept.
set -euo pipefail

VERSION=7.0.15
here=$(cd "$(dirname "$0")" && pwd)
sums="$here/redis-$VERSION.sha256"
cache="$here/cache"
out="$cache/redis_$VERSION.orig.tar.gz"

die() { echo "fetch-redis: $*" >&2; exit 1; }

known_hash() { awk -v h="$1" '!/^#/ && $1 == h {found = 1} END {exit !found}' "$sums"; }

verify() {
    local f=$1 sha
    sha=$(sha256sum "$f" | awk '{print $1}')
    known_hash "$sha" || die "$f has SHA-256 $sha, which is not a Redis $VERSION tarball this project lists in ${sums#$PWD/}; refusing to build from it"
    # The hash pins the content; still say clearly if the top folder is not 7.0.15.
    local top
    top=$(tar tzf "$f" | sed -n '1s|/.*||p')
    [ "$top" = "redis-$VERSION" ] || die "$f unpacks to '$top', not redis-$VERSION"
}

mkdir -p "$cache"

if [ -n "${REDIS_TARBALL:-}" ]; then
    [ -f "$REDIS_TARBALL" ] || die "REDIS_TARBALL=$REDIS_TARBALL: no such file"
    verify "$REDIS_TARBALL"
    if ! cmp -s "$REDIS_TARBALL" "$out" 2>/dev/null; then
        cp "$REDIS_TARBALL" "$out.tmp" && mv "$out.tmp" "$out"
        echo "fetch-redis: using $REDIS_TARBALL"
    fi
    exit 0
fi

if [ -f "$out" ]; then
    verify "$out"
    exit 0
fi

command -v apt-get >/dev/null || die "no apt-get here: download the Redis $VERSION source tarball yourself and run with REDIS_TARBALL=/path/to/redis-$VERSION.tar.gz"

# A private apt state: deb-src twins of every enabled deb source of this machine.
apt_dir=$(mktemp -d)
trap 'rm -rf "$apt_dir"' EXIT
mkdir -p "$apt_dir/parts" "$apt_dir/lists/partial" "$apt_dir/archives/partial"
: > "$apt_dir/sources.list"
if [ -f /etc/apt/sources.list ]; then
    sed -n 's/^[[:space:]]*deb[[:space:]]/deb-src /p' /etc/apt/sources.list >> "$apt_dir/sources.list"
fi
for f in /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    sed -n 's/^[[:space:]]*deb[[:space:]]/deb-src /p' "$f" >> "$apt_dir/sources.list"
done
for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    sed 's/^Types:.*/Types: deb-src/' "$f" > "$apt_dir/parts/$(basename "$f")"
done

apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list"
          -o "Dir::Etc::SourceParts=$apt_dir/parts"
          -o "Dir::State::Lists=$apt_dir/lists"
          -o "Dir::Cache::Archives=$apt_dir/archives"
          -o "Dir::Cache::pkgcache=" -o "Dir::Cache::srcpkgcache="
          -o "Debug::NoLocking=1" -o "APT::Sandbox::User=root")
[ "$(id -u)" = 0 ] || apt_opts+=(-o "APT::Sandbox::User=$(id -un)")

echo "fetch-redis: downloading the Redis $VERSION source package from this machine's Debian mirrors"
apt-get "${apt_opts[@]}" -qq update >"$apt_dir/update.log" 2>&1 || { cat "$apt_dir/update.log" >&2; die "apt-get update (deb-src) failed"; }
(cd "$apt_dir" && apt-get "${apt_opts[@]}" -qq source --download-only redis >"$apt_dir/source.log" 2>&1) \
    || { cat "$apt_dir/source.log" >&2; die "apt-get source redis failed"; }
got=$(find "$apt_dir" -maxdepth 1 -name 'redis_*.orig.tar.gz' | sed -n 1p)
[ -n "$got" ] || die "Debian's redis source package has no .orig tarball"
[ "$(basename "$got")" = "redis_$VERSION.orig.tar.gz" ] \
    || die "Debian's redis source package is $(basename "$got"), not Redis $VERSION; supply REDIS_TARBALL=/path/to/redis-$VERSION.tar.gz"
verify "$got"
mv "$got" "$out"
echo "fetch-redis: $out verified"
