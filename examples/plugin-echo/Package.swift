// swift-tools-version:6.0
import PackageDescription

// A GraphKit plugin in its own package: a node type, effect.echo, that graphctl loads at run
// time (docs/PLUGINS.md walks through it). It depends on GraphKit's shared library product,
// so the plugin and graphctl share one copy of the engine. EchoPluginNote is a C file that puts
// the plugin's note (GRAPHKIT_PLUGIN_NOTE) into the library: graphctl reads it from the file
// before it loads it.
let package = Package(
    name: "plugin-echo",
    products: [
        .library(name: "EchoPlugin", type: .dynamic, targets: ["EchoPlugin"]),
    ],
    dependencies: [
        .package(name: "GraphKit", path: "../.."),
        // NodeHarness, for the plugin's own tests: GraphKit's test helpers, built against the same
        // shared library (one engine in the test process).
        .package(name: "GraphKitTesting", path: "../../Packages/GraphKitTesting"),
    ],
    targets: [
        .target(name: "EchoPluginNote", dependencies: [.product(name: "GraphKit", package: "GraphKit")], publicHeadersPath: "."),
        .target(name: "EchoPlugin", dependencies: ["EchoPluginNote", .product(name: "GraphKit", package: "GraphKit")]),
        .testTarget(name: "EchoPluginTests", dependencies: [
            "EchoPlugin",
            .product(name: "GraphKit", package: "GraphKit"),
            .product(name: "GraphKitTesting", package: "GraphKitTesting"),
        ]),
    ]
)
