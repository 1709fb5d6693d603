# redis-rock top-level Makefile.
#
#   make                  build bin/redis-server and friends (patched Redis 7.0.15)
#   make run              build, then run the server on ./redis.conf (rock enabled, data in ./data)
#   make test             build, then run every test suite; ends with "N passed, N failed"
#   make stock            build the pristine tarball, no patches, into bin/stock/
#   make install PREFIX=  install like upstream (default /usr/local)
#   make check-patches    check patches/ applies cleanly to a pristine tree
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

.PHONY: all build run test test-bulk stock install check-patches refresh-patches clean clean-tree deps fetch tree

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

test: build
	@tests/run.sh

# Issue 3's bulk runs (2M keys written and verified; redis-benchmark 4M
# requests) against maxmemory 256mb: ~10 minutes on 2 cores.
test-bulk: build
	@tests/bulk/run.sh

stock: fetch
	@mkdir -p build; if [ ! -f $(STOCK_TREE)/src/Makefile ]; then \
		rm -rf $(STOCK_TREE) && mkdir -p $(STOCK_TREE) && \
		tar xzf $(TARBALL) -C $(STOCK_TREE) --strip-components=1; fi
	@$(MAKE) --no-print-directory -C $(STOCK_TREE)/src -j$(JOBS) all >build/make-stock.log 2>&1 || { tail -40 build/make-stock.log; exit 1; }
	@mkdir -p bin/stock
	@for b in $(BINS); do install -C -m 755 $(STOCK_TREE)/src/$$b bin/stock/$$b; done
	@echo "stock Redis $(REDIS_VERSION) built: bin/stock/redis-server"

install: build
	$(MAKE) -C $(TREE)/src install PREFIX=$(PREFIX)

check-patches: fetch
	@scripts/check-patches.sh $(TARBALL)

refresh-patches:
	@scripts/refresh-patches.sh $(TREE)

clean-tree:
	rm -rf $(TREE)

clean:
	rm -rf build bin
