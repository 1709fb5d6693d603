#!/usr/bin/env bash
# tests/diff/run.sh -- the differential test (make test-diff / test-diff-long):
# stock Redis 7.0.15 and redis-rock driven by the same seeded random command
# stream, every reply and the final DEBUG DIGEST compared, with rock's
# rock-debug-evict-all off and on, then the big-collection mode.
# See tests/diff/diff.py and docs/compatibility.md.
#
#   tests/diff/run.sh                         the default bounded run (modes off, on: 200,000 commands each; big: 80,000)
#   tests/diff/run.sh --seed 7 --commands 2000000 --mode on
#   tests/diff/run.sh --mode big --big-sizes 1000,2000   the big-collection mode alone, smaller keys
#   tests/diff/run.sh --help                  every option
#
# Makes build/venv with redis-py (tests/venv.sh) on first use.
# STOCK=... and ROCK=... override the two redis-server binaries.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
source "$top/tests/venv.sh"

args=()
[ -n "${STOCK:-}" ] && args+=(--stock "$STOCK")
[ -n "${ROCK:-}" ] && args+=(--rock "$ROCK")
exec "$venv/bin/python" "$top/tests/diff/diff.py" "${args[@]}" "$@"
