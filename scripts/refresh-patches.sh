#!/usr/bin/env bash
# scripts/refresh-patches.sh -- regenerate patches/ from the commits in the
# build tree (build/redis): one patch per commit after the `pristine` tag.
#
#   edit build/redis/src/foo.c
#   git -C build/redis commit -a --fixup=<commit of the hook>   # or a new commit
#   git -C build/redis rebase -i --autosquash pristine           # when fixing up
#   make refresh-patches
set -euo pipefail

tree=$1
top=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "refresh-patches: $*" >&2; exit 1; }

[ -d "$tree/.git" ] || die "no build tree at $tree (run make first)"
g() { git -C "$tree" "$@"; }

[ -z "$(g status --porcelain --untracked-files=no)" ] || die "$tree has uncommitted edits:
$(g status --short --untracked-files=no)
commit them first (git -C $tree commit -a, or --fixup=<commit> to fold into an existing patch)"
if g log --format=%s pristine..HEAD | grep -q '^fixup! '; then
    die "fold the fixup commits first: git -C $tree rebase -i --autosquash pristine"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
g format-patch -q --zero-commit --no-signature --no-stat --full-index -o "$tmp" pristine..HEAD
rm -f "$top"/patches/*.patch
mkdir -p "$top/patches"
cp "$tmp"/*.patch "$top/patches/"
# The series now matches the tree: record that, so the next make keeps it.
id=$({ sha256sum "$top"/deps/cache/redis_7.0.15.orig.tar.gz | awk '{print $1}'
       cat "$top"/patches/*.patch; } | sha256sum | awk '{print $1}')
echo "$id $(g rev-parse HEAD)" > "$tree/.rock-series"
ls "$top/patches"
