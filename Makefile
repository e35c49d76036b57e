SHELL := /bin/bash
# GraphKit: the two commands are `make run` and `make test`. Each installs what is missing first.
SWIFT ?= swift
GRAPH := $(if $(wildcard graphs/record.json),graphs/record.json,graphs/m4a.json)

.PHONY: all deps build release run test test-sanitize bench clean

all: build

deps:
	@bash scripts/install-deps.sh

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

run: build
	$(SWIFT) run --skip-build graphctl run $(GRAPH)

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build 2>&1 | tee .build/test.log; exit $${PIPESTATUS[0]}

# The tests under the address sanitizer (with leaks) and then the thread sanitizer, each in its
# own scratch folder; fails on a failed test or on any sanitizer report (scripts/sanitizers/).
test-sanitize: deps
	bash scripts/test-sanitize.sh address thread

# Benchmarks run the CLI as it ships: release, with the Swift runtime linked statically.
bench: deps
	@bash scripts/install-deps.sh --bench
	$(SWIFT) build -c release --static-swift-stdlib
	python3 scripts/bench.py

clean:
	rm -rf .build .build-asan .build-tsan out
