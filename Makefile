SHELL := /bin/bash
# GraphKit: the two commands are `make run` and `make test`. Each installs what is missing first.
SWIFT ?= swift
GRAPH := $(if $(wildcard graphs/record.json),graphs/record.json,graphs/m4a.json)
# graphctl is built by tools/graphctl against GraphKit's shared library: the build users install.
TOOLS := tools/graphctl
GRAPHCTL_DEBUG := $(TOOLS)/.build/debug/graphctl
GRAPHCTL_RELEASE := $(TOOLS)/.build/release/graphctl
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR := $(DESTDIR)$(PREFIX)/bin
LIBDIR := $(DESTDIR)$(PREFIX)/lib/graphkit

.PHONY: all deps build release run test test-build test-sanitize fuzz bench install install-files uninstall plugin-example clean

# The packages below depend on this one by path; SwiftPM keeps their build plan when a file is
# added here, and then misses it: drop the plans so each build starts from the sources.
replan = rm -f $(1)/.build/debug.yaml $(1)/.build/release.yaml

all: build

deps:
	@bash scripts/install-deps.sh

build: deps
	$(SWIFT) build
	$(call replan,$(TOOLS))
	$(SWIFT) build --package-path $(TOOLS)

release: deps
	$(SWIFT) build -c release
	$(call replan,$(TOOLS))
	$(SWIFT) build -c release --package-path $(TOOLS)

run: build
	$(GRAPHCTL_DEBUG) run $(GRAPH)

# Everything the tests run: the test bundles, graphctl (tools/graphctl), and the plugins they load
# (the example, and the fixtures that must be refused). scripts/stress-test.sh builds this too.
test-build: deps plugin-example
	$(SWIFT) build --build-tests
	$(call replan,$(TOOLS))
	$(SWIFT) build --package-path $(TOOLS)
	$(call replan,Tests/Fixtures/plugins)
	$(SWIFT) build --package-path Tests/Fixtures/plugins

test: test-build
	GRAPHCTL=$(CURDIR)/$(GRAPHCTL_DEBUG) $(SWIFT) test --skip-build 2>&1 | tee .build/test.log; exit $${PIPESTATUS[0]}

# Builds the example plugin (examples/plugin-echo) and leaves it in out/plugins, so that
# GRAPHKIT_PLUGIN_PATH=out/plugins graphctl run examples/plugin-echo/echo.json works from here.
plugin-example: deps
	$(call replan,examples/plugin-echo)
	$(SWIFT) build --package-path examples/plugin-echo
	install -d out/plugins
	install -m 644 examples/plugin-echo/.build/debug/libEchoPlugin.so out/plugins/libEchoPlugin.so

# Installs graphctl, GraphKit's shared library beside it (found through graphctl's rpath, so it
# runs from any folder with no environment set) and the plugin folder graphctl searches.
# CONFIG=debug installs the debug build (the tests do, into a DESTDIR).
CONFIG ?= release
install: deps
	$(call replan,$(TOOLS))
	$(SWIFT) build -c $(CONFIG) --package-path $(TOOLS)
	$(MAKE) install-files

# Copies what is built, building nothing: the tests install this way while other tests run the
# same graphctl (relinking a library that running processes map would crash them).
install-files:
	install -d $(BINDIR) $(LIBDIR)/plugins
	install -m 755 $(TOOLS)/.build/$(CONFIG)/graphctl $(BINDIR)/graphctl
	install -m 644 $(TOOLS)/.build/$(CONFIG)/libGraphKit.so $(LIBDIR)/libGraphKit.so

# Removes exactly what install added (the plugin folder only if nothing else was put in it).
uninstall:
	rm -f $(BINDIR)/graphctl $(LIBDIR)/libGraphKit.so
	-rmdir $(LIBDIR)/plugins $(LIBDIR) 2>/dev/null

# The tests under the address sanitizer (with leaks) and then the thread sanitizer, each in its
# own scratch folder; fails on a failed test or on any sanitizer report (scripts/sanitizers/).
test-sanitize: deps plugin-example
	$(call replan,Tests/Fixtures/plugins)
	$(SWIFT) build --package-path Tests/Fixtures/plugins
	bash scripts/test-sanitize.sh address thread

# libFuzzer targets (Fuzz/): the graph loader fed any bytes, a decode graph fed damaged media.
# Each runs FUZZ_SECONDS (default 600) under the address sanitizer; fails on any finding.
# Built in Fuzz/.build-fuzz, never by build or test. README.md, "Fuzzing".
fuzz: deps
	bash Fuzz/run.sh

# Benchmarks run the CLI as it is installed: release, linked against GraphKit's shared library.
bench: deps
	@bash scripts/install-deps.sh --bench
	$(SWIFT) build -c release
	$(call replan,$(TOOLS))
	$(SWIFT) build -c release --package-path $(TOOLS)
	GRAPHCTL=$(CURDIR)/$(GRAPHCTL_RELEASE) python3 scripts/bench.py

clean:
	rm -rf .build .build-asan .build-tsan $(TOOLS)/.build $(TOOLS)/.build-asan $(TOOLS)/.build-tsan \
	  examples/plugin-echo/.build Tests/Fixtures/plugins/.build out
