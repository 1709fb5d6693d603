#!/usr/bin/env bash
# scripts/prepare-tree.sh -- lay out the patched upstream tree for building.
#
#   scripts/prepare-tree.sh TARBALL TREE
#
# TREE (build/redis) is the pristine tarball as a git repository: one commit
# tagged `pristine`, then one commit per file of patches/, applied in order.
# The rock sources (src/rock*, src/commands/rock*.json) are symlinked into
# TREE/src and commands.c is regenerated from the JSON files, so editing them
# in the checkout is enough to rebuild.
#
# The tree is only rebuilt when the tarball or the series changed. Local edits
# in TREE that are not in patches/ are never thrown away: the script stops and
# says how to keep them (make refresh-patches) or drop them (make clean-tree).
set -euo pipefail

tarball=$1
tree=$2
top=$(cd "$(dirname "$0")/.." && pwd)
stamp="$tree/.rock-series"

die() { echo "prepare-tree: $*" >&2; exit 1; }
g() { git -C "$tree" -c user.name=redis-rock -c user.email=build@redis-rock.invalid \
        -c core.autocrlf=false -c advice.detachedHead=false "$@"; }

series_id() {
    { sha256sum "$tarball" | awk '{print $1}'
      cat "$top"/patches/*.patch 2>/dev/null || true; } | sha256sum | awk '{print $1}'
}

apply_series() {
    local p
    for p in "$top"/patches/*.patch; do
        [ -f "$p" ] || continue
        g am -q --keep-cr --whitespace=nowarn "$p" >/dev/null 2>&1 || {
            g am --abort >/dev/null 2>&1 || true
            die "patch $(basename "$p") does not apply to Redis 7.0.15 + the patches before it"
        }
    done
}

link_rock_sources() {
    local f name
    # Drop links whose source is gone, then link every current rock file.
    find "$tree/src" "$tree/src/commands" -maxdepth 1 -type l -name 'rock*' | while read -r f; do
        [ -e "$f" ] || rm -f "$f"
    done
    for f in "$top"/src/rock*.c "$top"/src/rock*.h "$top"/src/rock*.cc; do
        [ -f "$f" ] || continue
        name=$(basename "$f")
        [ "$(readlink "$tree/src/$name" 2>/dev/null)" = "$f" ] || ln -sfn "$f" "$tree/src/$name"
    done
    for f in "$top"/src/commands/rock*.json; do
        [ -f "$f" ] || continue
        name=$(basename "$f")
        [ "$(readlink "$tree/src/commands/$name" 2>/dev/null)" = "$f" ] || ln -sfn "$f" "$tree/src/commands/$name"
    done
}

regen_commands() {
    # commands.c is generated from src/commands/*.json; regenerate when a rock
    # JSON file is newer or the set of links changed since the last run.
    local list="$tree/.rock-commands" cur
    cur=$(for f in "$tree"/src/commands/rock*.json; do
              if [ -e "$f" ]; then stat -L -c '%n %Y' "$f"; fi; done | sha256sum | awk '{print $1}')
    if [ ! -f "$list" ] || [ "$(cat "$list")" != "$cur" ]; then
        (cd "$tree" && python3 utils/generate-command-code.py >/dev/null) || die "utils/generate-command-code.py failed"
        # Never let `git commit -a` sweep the generated file into a patch.
        g update-index --skip-worktree src/commands.c
        echo "$cur" > "$list"
    fi
}

[ -f "$tarball" ] || die "no tarball at $tarball (run deps/fetch-redis.sh)"
want=$(series_id)

if [ -d "$tree/.git" ] && [ -f "$stamp" ]; then
    read -r have_id have_head < "$stamp"
    head=$(g rev-parse HEAD)
    if [ "$have_id" != "$want" ]; then
        if [ "$head" != "$have_head" ] || [ -n "$(g status --porcelain --untracked-files=no)" ]; then
            die "$tree has edits that are not in patches/ and patches/ changed too.
  keep the edits:  commit them in $tree, then 'make refresh-patches'
  drop the edits:  'make clean-tree'"
        fi
        echo "prepare-tree: patch series changed, re-applying it"
        g reset -q --hard pristine
        apply_series
        echo "$want $(g rev-parse HEAD)" > "$stamp"
        rm -f "$tree/.rock-commands"
    fi
else
    echo "prepare-tree: unpacking $(basename "$tarball") into $tree"
    rm -rf "$tree"
    mkdir -p "$tree"
    tar xzf "$tarball" -C "$tree" --strip-components=1
    g init -q
    g add -A
    g commit -q -m "Redis 7.0.15, pristine"
    g tag pristine
    cat >> "$tree/.git/info/exclude" <<'EOF'
# redis-rock: build products and files linked in from the checkout
*.o
*.d
*.a
.make-*
.rock-*
src/rock*
src/commands/rock*.json
src/redis-*
src/Makefile.dep
tests/tmp/
EOF
    apply_series
    echo "$want $(g rev-parse HEAD)" > "$stamp"
fi

link_rock_sources
regen_commands
