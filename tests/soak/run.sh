#!/usr/bin/env bash
# tests/soak/run.sh -- the soak (tests/soak/soak.py): a redis-rock
# master and replica under a seeded random mixed load over a mostly-cold
# dataset, with faults injected, every reply checked against a model.
#
#   tests/soak/run.sh                          5 minutes, seed 1 (the form `make test` runs)
#   tests/soak/run.sh --duration 7200 --seed 0 two hours, a random seed (printed)
#   tests/soak/run.sh --help                   every option
#
# Needs root (the master's rock-dir is a tmpfs of its own, filled up as a
# fault). Work folder: build/soak (logs of both servers stay there).
# ROCK=... overrides the redis-server binary.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
source "$top/tests/venv.sh"

exec "$venv/bin/python" -u "$top/tests/soak/soak.py" \
    --server "${ROCK:-$top/build/redis/src/redis-server}" --dir "$top/build/soak" "$@"
