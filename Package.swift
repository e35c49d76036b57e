// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "GraphKit",
    products: [
        // One shared library for everything outside this package: the installed graphctl
        // (tools/graphctl) and every plugin link it, so a process holds one copy of the engine,
        // its type metadata and its registry (docs/PLUGINS.md). Executables inside this package
        // link these targets statically: they load no plugins.
        .library(name: "GraphKit", type: .dynamic, targets: ["GraphKit", "Nodes", "Assets", "GraphKitTesting"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // GStreamer headers and libraries (core, app, audio, video, pbutils).
        .systemLibrary(
            name: "CGStreamer",
            pkgConfig: "gstreamer-1.0",
            providers: [.apt(["libgstreamer1.0-dev", "libgstreamer-plugins-base1.0-dev"])]
        ),
        // zlib compresses waveform PNGs, a row at a time.
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // GraphKit's GStreamer elements, the graphkit plugin: one folder per element, plugin.c
        // registers them. Linked into GraphKit, which registers them in its process at start-up;
        // the Makefile builds the same sources into libgstgraphkit.so for gst-launch-1.0
        // (GST_PLUGIN_PATH), tested alone by Tests/GstGraphKitTests. gkx264enc links libx264.
        .target(name: "GstGraphKit", dependencies: ["CGStreamer"],
                linkerSettings: [.linkedLibrary("gstbase-1.0"), .linkedLibrary("x264")]),
        // Out-of-line C helpers for what Swift cannot import: macros, variadics, hot-path probes.
        .target(name: "CGraphKitGlue", dependencies: ["CGStreamer", "GstGraphKit"],
                linkerSettings: [.linkedLibrary("gstbase-1.0")]),
        // Arithmetic kernels that use AVX2 where the CPU has it (Swift has no per-function target
        // features), with the same numbers as the Swift or SSE2 path elsewhere. No GStreamer.
        .target(name: "CKernels"),
        // The C descriptor a plugin exports (graphkit_plugin.h); no GStreamer.
        .target(name: "CGraphKitPlugin"),
        // The engine: formats, buffers, the Node contract, loader, scheduler, run reports, plugins.
        .target(name: "GraphKit", dependencies: ["CGStreamer", "CGraphKitGlue", "CGraphKitPlugin",
                                                 .product(name: "Logging", package: "swift-log")]),
        // Built-in nodes, one file each, by category. They see GraphKit only, never GStreamer.
        .target(name: "Nodes", dependencies: ["GraphKit", "CZlib", "CKernels"]),
        // AVFoundation's objects over graphs: AssetWriter, AssetReader, the pixel-buffer adaptor.
        .target(name: "Assets", dependencies: ["GraphKit", "Nodes"]),
        // NodeHarness: unit-test one node without writing GStreamer code.
        .target(name: "GraphKitTesting", dependencies: ["GraphKit", "Nodes"]),
        // graphctl (Sources/graphctl) is built by tools/graphctl, against the shared library.
        // Effect throughput benchmark (scripts/bench.py); not a product.
        .executableTarget(name: "graphkit-bench", dependencies: ["GraphKit", "Nodes"]),
        // The Swift API's benchmarks (AssetWriter's adaptor, AssetReader), without Foundation; not a product.
        .executableTarget(name: "graphkit-api-bench", dependencies: ["GraphKit", "Assets"]),
        // Runs 1,000 small graphs in one process and checks that nothing accumulates
        // (Tests/GraphKitTests/SoakTests.swift); not a product.
        // The examples in examples/, built with everything and run by Tests/AssetsTests/ExamplesTests.swift.
        .executableTarget(name: "example-frames-to-movie", dependencies: ["GraphKit", "Assets"], path: "examples/frames-to-movie"),
        .executableTarget(name: "example-peak-level", dependencies: ["GraphKit", "Assets"], path: "examples/peak-level"),
        .executableTarget(name: "example-live-source", dependencies: ["GraphKit", "Assets"], path: "examples/live-source"),
        .executableTarget(name: "example-custom-node", dependencies: ["GraphKit", "Nodes", "GraphKitTesting"], path: "examples/custom-node"),
        .executableTarget(name: "graphkit-soak", dependencies: ["GraphKit", "Nodes", "GraphKitTesting"]),
        // Threads and events for the tests that check that nothing hangs; not a product.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "GraphKitTests", dependencies: ["GraphKit", "Nodes", "GraphKitTesting", "TestSupport", "CGraphKitGlue",
                                                         .product(name: "Logging", package: "swift-log")]),
        // The picture tests read PNGs back with Cairo (libpng underneath), a decoder of its own,
        // and draw the pictures as they were drawn before issue 16 to compare.
        .systemLibrary(name: "CCairo", path: "Tests/CCairo", pkgConfig: "cairo", providers: [.apt(["libcairo2-dev"])]),
        .testTarget(name: "NodesTests", dependencies: ["GraphKit", "Nodes", "GraphKitTesting", "CKernels", "CCairo"]),
        .testTarget(name: "AssetsTests", dependencies: ["GraphKit", "Nodes", "Assets", "GraphKitTesting", "TestSupport"]),
        .testTarget(name: "graphctlTests", dependencies: ["GraphKit", "Nodes", "GraphKitTesting"]),
    ]
)
