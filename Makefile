# redis-rock top-level Makefile.
#
#   make                  build bin/redis-server and friends (patched Redis 7.0.15)
#   make run              build, then run the server on ./redis.conf (rock enabled, data in ./data)
#   make test             build, then run every test suite; ends with "N passed, N failed"
#   make test-evict-all   the upstream suite with every value going to disk after every command
#   make test-diff        differential test against stock 7.0.15 (SEED=, MODE=off|on|big|both|all)
#   make test-diff-long   the same, longer: SEED=... N=... (commands per mode)
#   make stock            build the pristine tarball, no patches, into bin/stock/
#   make metric           build the Java load harness: metric/target/redis-rock-metric.jar
#   make metric-smoke     tiny mode1/mode2 runs against stock and redis-rock
#   make bench            every benchmark against stock 7.0.15 (bench/), then
#                         build/bench/results/summary.md (hours: see bench/README.md)
#   make bench-fio bench-1 .. bench-11  one benchmark (results in build/bench/results/)
#   make bench-plots      gnuplot PNGs from bench 2's results
#   make bench-smoke      every benchmark in smoke mode; ends with "bench: N passed, N failed"
#   make install PREFIX=  install like upstream (default /usr/local)
#   make check-patches    check patches/ applies cleanly to a pristine tree
#   make check-layers     build, then check the tier's layering (docs/architecture.md)
#   make check-docs       the docs name every figure, option and make target that exists
#   make refresh-patches  regenerate patches/ from the commits in build/redis
#   make clean-tree       drop build/redis (and any unrefreshed edits in it)
#   make clean            remove build products
#
# See docs/development.md for the edit-build-refresh loop.

REDIS_VERSION := 7.0.15
TOP := $(CURDIR)
TARBALL := deps/cache/redis_$(REDIS_VERSION).orig.tar.gz
TREE := build/redis
STOCK_TREE := build/stock
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
PREFIX ?= /usr/local
BINS := redis-server redis-cli redis-benchmark redis-check-rdb redis-check-aof redis-sentinel

.PHONY: test-soak all build run test test-upstream-off test-bulk test-evict-all test-diff test-diff-long stock metric metric-smoke bench bench-deps bench-fio bench-1 bench-2 bench-3 bench-4 bench-5 bench-6 bench-7 bench-8 bench-9 bench-10 bench-11 bench-plots bench-smoke install check-patches check-layers check-docs refresh-patches clean clean-tree deps fetch tree

all: build

deps:
	@deps/install-deps.sh

fetch: deps
	@deps/fetch-redis.sh

tree: fetch
	@scripts/prepare-tree.sh $(TARBALL) $(TREE)

build: tree
	@$(MAKE) --no-print-directory -C $(TREE)/src -j$(JOBS) all >build/make.log 2>&1 || { tail -40 build/make.log; echo "build failed, full log in build/make.log"; exit 1; }
	@mkdir -p bin
	@for b in $(BINS); do install -C -m 755 $(TREE)/src/$$b bin/$$b; done
	@echo "redis-rock built: bin/redis-server ($$(bin/redis-server --version | cut -d' ' -f3))"

run: build
	@mkdir -p data
	bin/redis-server redis.conf

test: build check-docs
	@tests/run.sh

# The reference pages name every ROCK REPORT / INFO rock figure, every
# rock-* option and only make targets that exist (scripts/check-docs.py).
check-docs:
	@python3 scripts/check-docs.py

# The upstream suite with rock-enabled no (~9 minutes): not in `make test`,
# which runs it with the tier on (every hook with the store open) and stays
# under 45 minutes; CI runs it after `make test` when there is room.
test-upstream-off: build
	@SUITES=upstream-rock-off tests/run.sh

# The bulk runs (2M keys written and verified; redis-benchmark 4M
# requests) against maxmemory 256mb: ~10 minutes on 2 cores.
test-bulk: build
	@tests/bulk/run.sh

# The soak (tests/soak/): a redis-rock master and replica under a
# seeded random mixed load over a mostly-cold dataset, faults injected at
# random times (kill -9, SIGTERM, full rock-dir, BGSAVE/BGREWRITEAOF,
# maxmemory swings, DEBUG RELOAD, FLUSHDB), every reply checked against a
# model. DURATION= seconds of load (default 7200), SEED= (default 0: a
# random one, printed). Needs root (a tmpfs for the rock-dir). `make test`
# runs a 5-minute form.
test-soak: build
	@tests/soak/run.sh --duration $(or $(DURATION),7200) --seed $(or $(SEED),0)

# The whole upstream suite with every value going to disk after
# every command (not in `make test` for now: run time not settled).
test-evict-all: build
	@SUITES=upstream-evict-all tests/run.sh

# The differential test (tests/diff/): stock 7.0.15 and redis-rock with
# a 2 MB maxmemory, rock-debug-evict-all off then on, then the big-collection
# mode (big hashes/sets/zsets stored element by element, mostly
# point commands, evict-all on), driven by the same seeded random command
# stream; every reply and DEBUG DIGEST compared, 200,000 commands per mode (80,000 in
# the big mode).
# A divergence prints the seed and a shrunk repro.
# SEED=... (default 1), MODE=off|on|big|both|all (default all = off on big).
test-diff: build stock
	@tests/diff/run.sh --seed $(or $(SEED),1) $(if $(MODE),--mode $(MODE))

# The same, longer: make test-diff-long SEED=42 N=2000000 (N commands per
# mode, default 2,000,000; SEED defaults to a random one, printed; the big
# mode takes ~1 ms per command, so MODE=both leaves it out).
test-diff-long: build stock
	@tests/diff/run.sh --seed $(or $(SEED),random) --commands $(or $(N),2000000) $(if $(MODE),--mode $(MODE))

stock: fetch
	@mkdir -p build; if [ ! -f $(STOCK_TREE)/src/Makefile ]; then \
		rm -rf $(STOCK_TREE) && mkdir -p $(STOCK_TREE) && \
		tar xzf $(TARBALL) -C $(STOCK_TREE) --strip-components=1; fi
	@$(MAKE) --no-print-directory -C $(STOCK_TREE)/src -j$(JOBS) all >build/make-stock.log 2>&1 || { tail -40 build/make-stock.log; exit 1; }
	@mkdir -p bin/stock
	@for b in $(BINS); do install -C -m 755 $(STOCK_TREE)/src/$$b bin/stock/$$b; done
	@echo "stock Redis $(REDIS_VERSION) built: bin/stock/redis-server"

# The load harness (metric/README.md): one runnable jar, built with
# Maven (Jedis and HdrHistogram from Maven Central; its unit tests run too).
metric:
	@deps/install-deps.sh metric
	@mkdir -p metric/target
	@mvn -q -B -f metric/pom.xml package >metric/target/build.log 2>&1 || { tail -60 metric/target/build.log; echo "metric build failed, full log in metric/target/build.log"; exit 1; }
	@echo "metric built: metric/target/redis-rock-metric.jar"

# The harness's smoke test (also a suite of `make test`): tiny mode1 and
# mode2 runs against stock and redis-rock, validation shown to catch errors.
metric-smoke: build stock metric
	@tests/metric/smoke.sh

# The benchmarks (bench/README.md): stock 7.0.15 and redis-rock side by
# side, results in build/bench/results/. REDIS_BIN_DIR= / STOCK_BIN_DIR= run
# other binaries; QUICK=1 shrinks every size.
bench-deps:
	@deps/install-deps.sh bench

bench: build stock metric bench-deps
	@bench/run-all.sh

bench-fio: bench-deps
	@bench/fio.sh

bench-1: build stock
	@bench/1-benchmark.sh

bench-2: build stock metric
	@bench/2-mode1.sh

bench-3: build stock metric
	@bench/3-mode2.sh

bench-4: build stock
	@bench/4-phases.sh

bench-5: build stock
	@bench/5-bulk.sh

bench-6: build stock
	@bench/6-compression.sh

bench-7: build stock
	@bench/7-coldget.sh

bench-8: build stock
	@bench/8-coldwrite.sh

bench-9: build stock
	@bench/9-bigcoll.sh

bench-10: build stock
	@bench/10-sizing.sh

bench-11: build stock
	@bench/11-restart.sh

bench-plots: bench-deps
	@bench/plots.sh

# Every bench script in smoke mode (tiny sizes, about 3 minutes, no
# performance thresholds), results in build/bench/smoke/.
bench-smoke: build stock metric bench-deps
	@bench/smoke.sh

install: build
	$(MAKE) -C $(TREE)/src install PREFIX=$(PREFIX)

check-patches: fetch
	@scripts/check-patches.sh $(TARBALL)

check-layers: build
	@python3 scripts/check-layers.py --self-test
	@python3 scripts/check-layers.py $(TREE)/src

refresh-patches:
	@scripts/refresh-patches.sh $(TREE)

clean-tree:
	rm -rf $(TREE)

clean:
	rm -rf build bin
