#!/usr/bin/env bash
# tests/diff/run.sh -- issue 5's differential test (make test-diff / test-diff-long):
# stock Redis 7.0.15 and redis-rock driven by the same seeded random command
# stream, every reply and the final DEBUG DIGEST compared, with rock's
# rock-debug-evict-all off and on. See tests/diff/diff.py and
# docs/compatibility.md.
#
#   tests/diff/run.sh                         the default bounded run (200,000 commands per mode)
#   tests/diff/run.sh --seed 7 --commands 2000000 --mode on
#   tests/diff/run.sh --help                  every option
#
# Makes build/venv with redis-py (pinned) on first use; later runs reuse it.
# STOCK=... and ROCK=... override the two redis-server binaries.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
venv="$top/build/venv"
redis_py=5.0.8          # redis-py, from PyPI

# Quick when the venv is there already: one python start.
if ! "$venv/bin/python" -c "import redis, sys; sys.exit(redis.__version__ != '$redis_py')" 2>/dev/null; then
    if [ ! -x "$venv/bin/pip" ]; then
        rm -rf "$venv"
        python3 -m venv "$venv" || {
            rm -rf "$venv"
            echo "diff: 'python3 -m venv' failed: install python3-venv (deps/install-deps.sh does)" >&2
            exit 2
        }
    fi
    echo "diff: installing redis-py $redis_py into $venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "redis==$redis_py"
fi

args=()
[ -n "${STOCK:-}" ] && args+=(--stock "$STOCK")
[ -n "${ROCK:-}" ] && args+=(--rock "$ROCK")
exec "$venv/bin/python" "$top/tests/diff/diff.py" "${args[@]}" "$@"
