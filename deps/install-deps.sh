#!/usr/bin/env bash
# deps/install-deps.sh -- make sure the Debian packages redis-rock builds and
# tests with are installed.
#
#   deps/install-deps.sh          build and test packages
#   deps/install-deps.sh metric   also what the Java load harness (metric/) needs
#   deps/install-deps.sh bench    also what the benchmarks need (metric's included)
#
# As root it installs what is missing with a non-interactive apt-get; as any
# other user it stops and names the packages to install.
set -euo pipefail

# Packages (tool or library -> Debian package; py:MODULE:PACKAGE for a python3
# module: ensurepip, which "python3 -m venv" needs for tests/diff/).
need=(gcc make pkg-config patch git tclsh:tcl python3 py:ensurepip:python3-venv ps:procps
      lib:librocksdb-dev lib:liblz4-dev lib:libzstd-dev)
metric=(mvn:maven java:openjdk-17-jdk-headless javac:openjdk-17-jdk-headless)
case "${1:-}" in
metric) need+=("${metric[@]}") ;;
bench)  need+=(fio gnuplot:gnuplot-nox "${metric[@]}") ;;
esac

missing=()
for item in "${need[@]}"; do
    case "$item" in
    lib:*) pkg=${item#lib:}
           dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed' || missing+=("$pkg") ;;
    py:*)  mod=${item#py:}; mod=${mod%%:*}; pkg=${item##*:}   # a python3 module (venv needs ensurepip)
           python3 -c "import $mod" >/dev/null 2>&1 || missing+=("$pkg") ;;
    *:*)   tool=${item%%:*}; pkg=${item#*:}
           command -v "$tool" >/dev/null || missing+=("$pkg") ;;
    *)     command -v "$item" >/dev/null || missing+=("$item") ;;
    esac
done

[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != 0 ]; then
    echo "install-deps: missing Debian packages: ${missing[*]}" >&2
    echo "install-deps: run as root: apt-get install -y ${missing[*]}" >&2
    exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
