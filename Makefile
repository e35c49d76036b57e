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

# The graphkit GStreamer plugin (Sources/GstGraphKit: one folder per element), built with the
# compiler and pkg-config as GStreamer's own plugins are, into out/gstreamer-1.0, so that
# `GST_PLUGIN_PATH=out/gstreamer-1.0 gst-launch-1.0 … ! gkx264enc ! …` works from here. Not a
# SwiftPM library: SwiftPM links one with swiftc, which makes it need the Swift runtime
# (libswiftCore, and a runpath into the toolchain) in every gst-inspect-1.0 and scanner that
# loads it, and exports every symbol. Here only the plugin's descriptor is exported. GraphKit
# itself compiles the same sources in (Package.swift) and registers them in its own process.
# The compiler is the Swift toolchain's clang (SwiftPM's), unless CC is given.
ifeq ($(origin CC),default)
CC := clang
endif
GST_PLUGIN := out/gstreamer-1.0/libgstgraphkit.so
GST_PLUGIN_SOURCES := $(shell find Sources/GstGraphKit -name '*.c')
GST_PLUGIN_HEADERS := $(shell find Sources/GstGraphKit -name '*.h') Sources/CGraphKitPlugin/include/graphkit_plugin.h
GST_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Wno-unused-parameter
# Each element alone in GStreamer's own harness (libgstcheck), one program per element
# (Tests/GstGraphKitTests/ELEMENT.c), loading the plugin file as gst-launch-1.0 does, with a
# registry of their own so that the user's is left as it is.
GST_CHECKS := $(patsubst Tests/GstGraphKitTests/%.c,.build/gst-check/%,$(wildcard Tests/GstGraphKitTests/*.c))
GST_CHECK_ENV := GST_PLUGIN_PATH=$(CURDIR)/out/gstreamer-1.0 GST_REGISTRY=$(CURDIR)/.build/gst-check/registry.bin

DOC_TARGETS := CoreVideo CoreMedia AVFoundation ImageIO UniformTypeIdentifiers Nodes

.PHONY: docs all deps build release run test test-fast test-build test-elements test-plugin-example test-consumer test-api-coverage test-debian13 test-bare-machine image test-sanitize fuzz bench gst-plugin install install-files uninstall plugin-example clean

# The packages below depend on this one by path; SwiftPM keeps their build plan when a file is
# added here, and then misses it: drop the plans so each build starts from the sources.
replan = rm -f $(1)/.build/debug.yaml $(1)/.build/release.yaml
# graphctl, the example plugin and the fixture plugins all build in graphctl's scratch folder:
# GraphKit, a dependency of each with the same flags, is compiled once for the three (apart,
# each compiled it again: about 100 s each on 2 cores). Each build plans anew (replan) first.
SHARED_SCRATCH := $(CURDIR)/$(TOOLS)/.build
build_sharing = $(call replan,$(TOOLS)) && $(SWIFT) build --package-path $(1) --scratch-path $(SHARED_SCRATCH)

all: build

deps:
	@bash scripts/install-deps.sh

build: deps gst-plugin
	$(SWIFT) build
	$(call replan,$(TOOLS))
	$(SWIFT) build --package-path $(TOOLS)

release: deps gst-plugin
	$(SWIFT) build -c release
	$(call replan,$(TOOLS))
	$(SWIFT) build -c release --package-path $(TOOLS)

run: build
	$(GRAPHCTL_DEBUG) run $(GRAPH)

# Everything the tests run: the test bundles, graphctl (tools/graphctl), and the plugins they load
# (the example, the fixtures that must be refused, the GStreamer plugin and its harness tests).
# scripts/stress-test.sh builds this too.
test-build: deps plugin-example gst-plugin $(GST_CHECKS)
	@bash scripts/install-deps.sh --stress  # the real-time writer tests run under `stress --cpu 2` too
	$(SWIFT) build --build-tests
	$(call replan,$(TOOLS))
	$(SWIFT) build --package-path $(TOOLS)
	$(call build_sharing,Tests/Fixtures/plugins)

# CONSUMER_TEST= leaves out the client-package check (test-debian13 does: it builds a package by
# URL with the same toolchain on both platforms, about 150 s cold each time, so it runs once).
CONSUMER_TEST ?= test-consumer
test: test-build test-elements test-plugin-example $(CONSUMER_TEST) test-api-coverage
	source scripts/test-env.sh && GRAPHCTL=$(CURDIR)/$(GRAPHCTL_DEBUG) \
	  bash scripts/run-suite.sh "$$($(SWIFT) build --show-bin-path)" .build/test.log

# The fast tier: the code's own logic, no media (under 90 s on 2 cores; run it after every
# change). Every suite marked `.media` is left out (Tests/TestSupport/TestTier.swift), and the
# rest runs with no GStreamer plugins and no tools to start, so a suite that makes media without
# the mark fails here by name rather than slowing this down.
test-fast: deps
	$(SWIFT) build --build-tests
	source scripts/test-env.sh && empty=$$(mktemp -d) && trap 'rm -rf "$$empty"' EXIT && \
	  GRAPHKIT_TEST_TIER=fast GST_PLUGIN_SYSTEM_PATH_1_0=$$empty GST_PLUGIN_PATH_1_0=$$empty \
	  GST_REGISTRY_1_0=$$empty/registry.bin GST_REGISTRY_FORK=no \
	  bash scripts/run-suite.sh "$$($(SWIFT) build --show-bin-path)" .build/test-fast.log

# The example plugin's own tests: NodeHarness from the shared library (GraphKitShared), as a
# plugin author tests a node.
test-plugin-example: plugin-example
	$(call build_sharing,examples/plugin-echo) --build-tests
	$(SWIFT) test --skip-build --package-path examples/plugin-echo --scratch-path $(SHARED_SCRATCH)

# GraphKit as a client package gets it: a package made with `swift package init` depends on a
# clone of this tree by a file:// URL and the release tag, as README's lines say, builds a program
# that imports AVFoundation and composes a graph in code, runs it, and runs its own `swift test`
# of a node with NodeHarness (scripts/test-consumer.sh; Tests/Consumer holds its files).
test-consumer: deps
	bash scripts/test-consumer.sh

# How much of Apple's API, as real AVFoundation code uses it, compiles against the modules
# (tools/api-coverage: the usage-weighted share of the corpus's names). Fails below the floor,
# the figure README states rounded down: raise it when the figure rises.
API_COVERAGE_FLOOR := 95.5
test-api-coverage: test-build
	python3 tools/api-coverage/check.py --min $(API_COVERAGE_FLOOR) -o .build/api-coverage-failing.tsv

# The whole suite on Debian 13 (trixie: GStreamer 1.26, FFmpeg 7.1), in a root made with
# debootstrap from the host's Debian archive and kept in /var/cache/graphkit/debian13-root, with
# the host's Swift toolchain mounted in; its own build folders, in the root. Needs root.
# scripts/test-debian.sh (README.md, "Platforms").
test-debian13:
	bash scripts/test-debian.sh trixie

# A fresh clone's `make test` in a new minimal Debian 12 root (debootstrap minbase + git + make +
# the toolchain): nothing installed by hand. SUITE=trixie for Debian 13. Needs root.
SUITE ?= bookworm
test-bare-machine:
	bash scripts/test-bare-machine.sh $(SUITE)

# deploy/Containerfile built with podman here, with no registry (its base made from Debian
# packages: deploy/build-image.sh --local), tagged localhost/graphkit:dev, then run as the
# Kubernetes Job runs it and checked against the host's graphctl (Tests/graphctlTests/ImageTests).
image:
	@bash scripts/install-deps.sh --image
	$(MAKE) test-build
	source scripts/test-env.sh && GRAPHCTL=$(CURDIR)/$(GRAPHCTL_DEBUG) \
	  bash scripts/run-suite.sh "$$($(SWIFT) build --show-bin-path)" .build/image-test.log --filter ImageTests
	@podman image inspect --format 'localhost/graphkit:dev: {{.Id}}, {{.Size}} bytes' localhost/graphkit:dev

gst-plugin: deps $(GST_PLUGIN)

$(GST_PLUGIN): $(GST_PLUGIN_SOURCES) $(GST_PLUGIN_HEADERS)
	install -d $(@D)
	$(CC) $(GST_CFLAGS) -shared -fPIC -fvisibility=hidden -ISources/GstGraphKit/include -ISources/CGraphKitPlugin/include $(GST_PLUGIN_SOURCES) \
	  $$(pkg-config --cflags --libs gstreamer-1.0 gstreamer-base-1.0 gstreamer-audio-1.0 gstreamer-video-1.0 gstreamer-pbutils-1.0 gstreamer-sdp-1.0 gstreamer-webrtc-1.0 gio-2.0 x264) \
	  $$(pkg-config --cflags libavcodec) -ldl -lm -Wl,-z,defs -Wl,--as-needed -o $@

.build/gst-check/%: Tests/GstGraphKitTests/%.c $(wildcard Tests/GstGraphKitTests/*.h)
	install -d $(@D)
	$(CC) $(GST_CFLAGS) $< $$(pkg-config --cflags --libs gstreamer-check-1.0 gstreamer-audio-1.0 gstreamer-video-1.0 gstreamer-pbutils-1.0 gstreamer-app-1.0) -lm -o $@

# Runs each element's harness tests (each test in a process of its own, as libcheck does).
test-elements: gst-plugin $(GST_CHECKS)
	@for check in $(GST_CHECKS); do $(GST_CHECK_ENV) $$check || exit 1; done

# Builds the example plugin (examples/plugin-echo) and leaves it in out/plugins, so that
# GRAPHKIT_PLUGIN_PATH=out/plugins graphctl run examples/plugin-echo/echo.json works from here.
plugin-example: deps
	$(call build_sharing,examples/plugin-echo)
	install -d out/plugins
	install -m 644 $(SHARED_SCRATCH)/debug/libEchoPlugin.so out/plugins/libEchoPlugin.so

# Installs graphctl, GraphKit's shared library beside it (found through graphctl's rpath, so it
# runs from any folder with no environment set) and the plugin folder graphctl searches.
# CONFIG=debug installs the debug build (the tests do, into a DESTDIR).
CONFIG ?= release
install: deps gst-plugin
	$(call replan,$(TOOLS))
	$(SWIFT) build -c $(CONFIG) --package-path $(TOOLS)
	$(MAKE) install-files

# Copies what is built, building nothing: the tests install this way while other tests run the
# same graphctl (relinking a library that running processes map would crash them). The GStreamer
# plugin goes to PREFIX/lib/graphkit/gstreamer-1.0, for GST_PLUGIN_PATH (graphctl does not need it).
install-files:
	install -d $(BINDIR) $(LIBDIR)/plugins $(LIBDIR)/gstreamer-1.0
	install -m 755 $(TOOLS)/.build/$(CONFIG)/graphctl $(BINDIR)/graphctl
	install -m 644 $(TOOLS)/.build/$(CONFIG)/libGraphKitShared.so $(LIBDIR)/libGraphKitShared.so
	install -m 644 $(GST_PLUGIN) $(LIBDIR)/gstreamer-1.0/libgstgraphkit.so

# Removes exactly what install added (the plugin folder only if nothing else was put in it).
uninstall:
	rm -f $(BINDIR)/graphctl $(LIBDIR)/libGraphKitShared.so $(LIBDIR)/gstreamer-1.0/libgstgraphkit.so
	-rmdir $(LIBDIR)/gstreamer-1.0 $(LIBDIR)/plugins $(LIBDIR) 2>/dev/null

# The tests under the address sanitizer (with leaks) and then the thread sanitizer, each in its
# own scratch folder; fails on a failed test or on any sanitizer report (scripts/sanitizers/).
test-sanitize: deps plugin-example
	$(call build_sharing,Tests/Fixtures/plugins)
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

# The DocC catalogs of the AVFoundation compatibility modules (issue 30) and of Nodes (the
# analysis API, issue 51), through
# swift-docc-plugin, into .build/docs/TARGET; any warning fails. Not part of `make test`.
docs:
	@mkdir -p .build/docs
	@for t in $(DOC_TARGETS); do \
		echo "documentation for $$t"; \
		$(SWIFT) package --allow-writing-to-directory .build/docs generate-documentation --target $$t \
			--output-path .build/docs/$$t --warnings-as-errors || exit 1; \
	done

clean:
	rm -rf .build .build-asan .build-tsan $(TOOLS)/.build $(TOOLS)/.build-asan $(TOOLS)/.build-tsan \
	  examples/plugin-echo/.build Tests/Fixtures/plugins/.build out
