# tests/venv.sh -- sourced by the Python test runners (tests/diff/run.sh,
# tests/soak/run.sh): makes build/venv with redis-py (pinned) on first use;
# later runs reuse it. Sets $venv.
venv="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build/venv"
redis_py=5.0.8          # redis-py, from PyPI

# Quick when the venv is there already: one python start.
if ! "$venv/bin/python" -c "import redis, sys; sys.exit(redis.__version__ != '$redis_py')" 2>/dev/null; then
    if [ ! -x "$venv/bin/pip" ]; then
        rm -rf "$venv"
        python3 -m venv "$venv" || {
            rm -rf "$venv"
            echo "venv: 'python3 -m venv' failed: install python3-venv (deps/install-deps.sh does)" >&2
            exit 2
        }
    fi
    echo "venv: installing redis-py $redis_py into $venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "redis==$redis_py"
fi
