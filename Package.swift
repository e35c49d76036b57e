// swift-tools-version:6.0
import PackageDescription

// The engine's targets, the layers from Assets down (docs/ARCHITECTURE.md).
let engine = ["GraphKit", "GraphKitCore", "MediaContainers", "GraphKitRuntime", "Nodes", "Assets"]

let package = Package(
    name: "GraphKit",
    products: [
        // What an application adds by URL (README, "Add it to your package"). SwiftPM links these
        // into the program that depends on them, each target once whatever the combination, so a
        // program holds one engine: the engine and its modules (GraphKit, Nodes, Assets, ...);
        // Apple's modules by Apple's names (`import AVFoundation`, with CoreMedia and CoreVideo;
        // `import ImageIO`, `import UniformTypeIdentifiers`);
        // the test helpers (NodeHarness, TestMedia, MediaProbe) for the program's own tests.
        .library(name: "GraphKit", targets: engine),
        .library(name: "AVFoundation", targets: ["CoreGraphics", "_Testing_CoreGraphics", "CoreVideo", "CoreMedia", "AVFoundation", "UniformTypeIdentifiers", "ImageIO",
                                                 "CoreImage", "_Testing_CoreImage", "AudioToolbox", "CoreText"]),
        .library(name: "GraphKitTesting", targets: ["GraphKitTesting"]),
        // One shared library for what loads plugins: the installed graphctl (tools/graphctl) and
        // every plugin link it, so graphctl and the plugins it opens hold one engine, one type
        // metadata and one node registry (docs/PLUGINS.md). A plugin's tests import
        // GraphKitTesting from it too. Apple's modules are not in it: they bring full Foundation,
        // about 8 MB in every process that loads them (BENCHMARKS.md), and graphctl needs none.
        // Within one package SwiftPM links a target that another target depends on statically,
        // so a product cannot reach the engine inside this library: a program takes either the
        // products above or this one, never both (the plugin loader refuses a second engine).
        .library(name: "GraphKitShared", type: .dynamic, targets: engine + ["GraphKitTesting"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // `make docs`: the DocC catalogs of the AVFoundation compatibility modules (a plugin
        // only: nothing of it is linked).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // GStreamer headers and libraries (core, app, audio, video, pbutils).
        .systemLibrary(
            name: "CGStreamer",
            pkgConfig: "gstreamer-1.0",
            providers: [.apt(["libgstreamer1.0-dev", "libgstreamer-plugins-base1.0-dev"])]
        ),
        // Cairo draws CoreGraphics' CGContext (issue 52); the picture tests read PNGs back with it
        // (libpng underneath, a decoder of their own) and draw the pictures of before issue 16.
        .systemLibrary(name: "CCairo", pkgConfig: "cairo", providers: [.apt(["libcairo2-dev"])]),
        // Pango over Cairo lays out and draws CoreText's lines (shaping, kerning, font fallback
        // through fontconfig); HarfBuzz, which it brings, reads a face's names.
        .systemLibrary(name: "CPangoCairo", pkgConfig: "pangocairo", providers: [.apt(["libpango1.0-dev"])]),
        // zlib compresses waveform PNGs, a row at a time.
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // GraphKit's GStreamer elements, the graphkit plugin: one folder per element, plugin.c
        // registers them. Linked into GraphKit, which registers them in its process at start-up;
        // the Makefile builds the same sources into libgstgraphkit.so for gst-launch-1.0
        // (GST_PLUGIN_PATH), tested alone by Tests/GstGraphKitTests. gkx264enc links libx264;
        // gkavdec loads libavcodec when it first starts (gkavdec/libav.h), so it is not linked.
        .target(name: "GstGraphKit", dependencies: ["CGStreamer", "CGraphKitPlugin"],
                linkerSettings: [.linkedLibrary("gstbase-1.0"), .linkedLibrary("x264"), .linkedLibrary("dl"),
                                 // gkwhipsink: webrtcbin's descriptions, SDP, and GIO's sockets and TLS
                                 .linkedLibrary("gstwebrtc-1.0"), .linkedLibrary("gstsdp-1.0"), .linkedLibrary("gio-2.0")]),
        // Out-of-line C helpers for what Swift cannot import: macros, variadics, hot-path probes.
        // PipeWire's headers for CGraphKitGlue's own listing of PipeWire's nodes; nothing linked
        // (libpipewire is opened at run time).
        .systemLibrary(name: "CPipeWire", pkgConfig: "libpipewire-0.3", providers: [.apt(["libpipewire-0.3-dev"])]),
        .target(name: "CGraphKitGlue", dependencies: ["CGStreamer", "GstGraphKit", "CPipeWire"],
                linkerSettings: [.linkedLibrary("gstbase-1.0"), .linkedLibrary("gio-2.0")]),
        // Arithmetic kernels that use AVX2 where the CPU has it (Swift has no per-function target
        // features), with the same numbers as the Swift or SSE2 path elsewhere. No GStreamer.
        .target(name: "CKernels"),
        // The C descriptor a plugin exports (graphkit_plugin.h); no GStreamer.
        .target(name: "CGraphKitPlugin"),
        // The layers, each a target, so the compiler keeps them apart (docs/ARCHITECTURE.md):
        // MediaContainers: what media files' own bytes say (ISO-BMFF boxes read and edited, a
        // damaged file's diagnosis); no GStreamer, no engine.
        .target(name: "MediaContainers"),
        // GraphKitCore: media types, the node contract, parameters, the graph loader and the
        // registry. It cannot import GStreamer: it has no such dependency.
        .target(name: "GraphKitCore", dependencies: ["MediaContainers", "CGraphKitPlugin",
                                                     .product(name: "Logging", package: "swift-log")]),
        // GraphKitRuntime: everything that knows GStreamer: the pipeline a graph compiles to,
        // the run, the elements nodes build, the ends code pushes into and pulls from.
        .target(name: "GraphKitRuntime", dependencies: ["GraphKitCore", "MediaContainers", "CGStreamer", "CGraphKitGlue",
                                                        .product(name: "Logging", package: "swift-log")]),
        // `import GraphKit`: the three above, as one module for applications and plugins.
        .target(name: "GraphKit", dependencies: ["GraphKitCore", "MediaContainers", "GraphKitRuntime"]),
        // Built-in nodes, one file each, by category. They see GraphKit's Swift API, never GStreamer.
        .target(name: "Nodes", dependencies: ["GraphKitCore", "MediaContainers", "ImageCodecs", "CImageCodecs", "GraphKitRuntime", "CZlib", "CKernels"]),
        // AVFoundation's objects over graphs: AssetWriter, AssetReader, the pixel-buffer adaptor.
        .target(name: "Assets", dependencies: ["GraphKitCore", "GraphKitRuntime", "Nodes"]),
        // AVFoundation source compatibility (issue 30): Apple's modules by Apple's names, so code
        // written for Apple's platforms compiles here with its imports unchanged. A thin layer
        // over Assets. CoreVideo (with the CoreFoundation/CoreGraphics names such code uses) ←
        // CoreMedia ← AVFoundation, each re-exporting the one below, as on Apple's platforms.
        // CoreGraphics at the bottom (issue 52): CGImage, CGColor, CGAffineTransform, the
        // CoreFoundation names, and CGContext's drawing, done by Cairo (CCairo) with Apple's
        // bottom-left origin. CoreVideo re-exports it, as on Apple's platforms.
        .target(name: "CoreGraphics", dependencies: ["GraphKitCore", "CCairo"]),
        // Swift Testing's overlay for a module named CoreGraphics, which Linux's toolchain
        // declares but lacks: empty, so tests importing Testing and AVFoundation compile.
        .target(name: "_Testing_CoreGraphics", dependencies: ["CoreGraphics"]),
        .target(name: "CoreVideo", dependencies: ["CoreGraphics", "GraphKitCore"]),
        .target(name: "CoreMedia", dependencies: ["CoreVideo", "GraphKitCore"]),
        // AudioToolbox (issue 52): AudioConverter's PCM → AAC over the engine's encode.aac, pulled
        // through Apple's input callback. Swift Testing declares no overlay for it on Linux.
        .target(name: "AudioToolbox", dependencies: ["CoreMedia", "GraphKitCore", "GraphKitRuntime", "Nodes"]),
        // UniformTypeIdentifiers: UTType and CoreServices' kUTType* identifiers, a table of the
        // common types (AVFoundation re-exports it, as its headers do on Apple's platforms).
        .target(name: "UniformTypeIdentifiers"),
        // CoreImage for the CIFilter video compositions (AVAsynchronousCIImageFilteringRequest).
        .target(name: "AVFoundation", dependencies: ["CoreMedia", "CoreVideo", "CoreImage", "AudioToolbox", "UniformTypeIdentifiers", "Assets",
                                                     "GraphKitCore", "GraphKitRuntime", "MediaContainers"]),
        // The image codecs (issue 72), beside the container library and with no GStreamer: HEIF
        // and AVIF through libheif (opened on first use: it links the HEVC and AV1 codecs),
        // WebP, GIF, TIFF and JPEG through libwebp, giflib, libtiff and libjpeg-turbo, each
        // picture decoded in a child process of its own (CImageCodecs: fork, a memory bound, a
        // time bound), so hostile bytes that crash a C library cost that picture, not the
        // caller's process; JPEG files written from pictures GraphKit made (Nodes' JPEGEncoder).
        .target(name: "CImageCodecs", linkerSettings: [.linkedLibrary("dl"), .linkedLibrary("webpdemux"), .linkedLibrary("webp"),
                                                     .linkedLibrary("gif"), .linkedLibrary("tiff"), .linkedLibrary("jpeg")]),
        .target(name: "ImageCodecs", dependencies: ["CImageCodecs", "MediaContainers"]),
        // ImageIO: CGImageDestination and CGImageSource: JPEG and PNG written by GraphKit's own
        // encoders (Nodes); PNG decoded by a graph (GStreamer's pngdec); HEIC, AVIF, WebP, GIF,
        // TIFF and JPEG read through the image codecs.
        .target(name: "ImageIO", dependencies: ["CoreVideo", "UniformTypeIdentifiers", "GraphKitCore", "GraphKitRuntime", "MediaContainers", "Nodes",
                                                "ImageCodecs"]),
        // CoreImage: CIImage recipes, CIFilter by name and typed, CIContext rendering into pixel
        // buffers and bitmaps on the CPU (colour filters through CKernels in one pass). ImageIO for
        // CGImagePropertyOrientation, as Apple's CoreImage imports ImageIO.
        .target(name: "CoreImage", dependencies: ["CoreVideo", "ImageIO", "CKernels"]),
        // The same stand-in for Swift Testing's CoreImage overlay (see _Testing_CoreGraphics).
        .target(name: "_Testing_CoreImage", dependencies: ["CoreImage"]),
        // CoreText: CTFont and CTLine drawn into a CGContext by Pango over Cairo (CPangoCairo), with
        // Apple's font names mapped to fontconfig's families. Swift Testing declares no overlay for it.
        .target(name: "CoreText", dependencies: ["CoreGraphics", "CCairo", "CPangoCairo"]),
        // NodeHarness, TestMedia, MediaProbe: testing nodes and media without GStreamer code.
        .target(name: "GraphKitTesting", dependencies: ["GraphKit", "Nodes"]),
        // graphctl (Sources/graphctl) is built by tools/graphctl, against the shared library.
        // Effect throughput benchmark (scripts/bench.py); not a product.
        .executableTarget(name: "graphkit-bench", dependencies: ["GraphKit", "Nodes", "CoreImage"]),
        // The Swift API's benchmarks (AssetWriter's adaptor, AssetReader), without Foundation; not a product.
        .executableTarget(name: "graphkit-api-bench", dependencies: ["GraphKit", "Assets"]),
        // The same adaptor benchmark through AVFoundation's names (issue 30); not a product.
        .executableTarget(name: "graphkit-avf-bench", dependencies: ["AVFoundation", "ImageIO"]),
        // Runs 1,000 small graphs in one process and checks that nothing accumulates
        // (Tests/GraphKitTests/SoakTests.swift); not a product.
        // The examples in examples/, built with everything and run by Tests/AssetsTests/ExamplesTests.swift.
        .executableTarget(name: "example-frames-to-movie", dependencies: ["GraphKit", "Assets"], path: "examples/frames-to-movie"),
        .executableTarget(name: "example-peak-level", dependencies: ["GraphKit", "Assets"], path: "examples/peak-level"),
        .executableTarget(name: "example-live-source", dependencies: ["GraphKit", "Assets"], path: "examples/live-source"),
        .executableTarget(name: "example-custom-node", dependencies: ["GraphKit", "Nodes", "GraphKitTesting"], path: "examples/custom-node"),
        // AVFoundation code as written for Apple's platforms (issue 30), Swift 5 mode as most app code is.
        .executableTarget(name: "example-avfoundation-frames-to-movie", dependencies: ["AVFoundation", "CoreGraphics"],
                          path: "examples/avfoundation-frames-to-movie", swiftSettings: [.swiftLanguageMode(.v5)]),
        .executableTarget(name: "example-avfoundation-waveform", dependencies: ["AVFoundation", "ImageIO"],
                          path: "examples/avfoundation-waveform", swiftSettings: [.swiftLanguageMode(.v5)]),
        .executableTarget(name: "example-avfoundation-audio-to-m4a", dependencies: ["AVFoundation"],
                          path: "examples/avfoundation-audio-to-m4a", swiftSettings: [.swiftLanguageMode(.v5)]),
        .executableTarget(name: "example-avfoundation-rosywriter", dependencies: ["AVFoundation", "CoreImage"],
                          path: "examples/avfoundation-rosywriter", swiftSettings: [.swiftLanguageMode(.v5)]),
        .executableTarget(name: "graphkit-soak", dependencies: ["GraphKit", "Nodes", "GraphKitTesting"]),
        // Threads and events for the tests that check that nothing hangs; not a product.
        .target(name: "TestSupport", dependencies: ["GraphKit", "Nodes", "GraphKitTesting", "MediaContainers"], path: "Tests/TestSupport"),
        // Tests mirror the targets they test.
        .testTarget(name: "MediaContainersTests", dependencies: ["MediaContainers", "GraphKit", "GraphKitTesting", "TestSupport"]),
        .testTarget(name: "ImageCodecsTests", dependencies: ["ImageCodecs", "MediaContainers", "GraphKitTesting", "TestSupport"]),
        .testTarget(name: "GraphKitCoreTests", dependencies: ["GraphKitCore", "GraphKit", "Nodes", "GraphKitTesting", "TestSupport"]),
        .testTarget(name: "GraphKitRuntimeTests", dependencies: ["GraphKitRuntime", "GraphKit", "Nodes", "GraphKitTesting", "TestSupport",
                                                                "CGStreamer", "CGraphKitGlue",
                                                                .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "NodesTests", dependencies: ["GraphKit", "Nodes", "GraphKitTesting", "TestSupport", "CKernels", "CCairo"]),
        .testTarget(name: "AssetsTests", dependencies: ["GraphKit", "Nodes", "Assets", "GraphKitTesting", "TestSupport"]),
        // The compat modules' tests; AppleCorpus/ holds code written for Apple's platforms,
        // compiled unchanged (Swift 5 mode, as most app code is) and run by the tests.
        .testTarget(name: "AVFoundationTests", dependencies: ["AVFoundation", "_Testing_CoreGraphics", "ImageIO", "CCairo", "CoreImage", "_Testing_CoreImage",
                                                          "CoreText", "CPangoCairo",
                                                          "CKernels", "GraphKitTesting", "TestSupport"],
                    swiftSettings: [.swiftLanguageMode(.v5)]),
        .testTarget(name: "AudioToolboxTests", dependencies: ["AudioToolbox", "AVFoundation", "GraphKitTesting", "TestSupport"],
                    swiftSettings: [.swiftLanguageMode(.v5)]),
        .testTarget(name: "graphctlTests", dependencies: ["GraphKit", "Nodes", "GraphKitTesting", "TestSupport"]),
    ]
)
