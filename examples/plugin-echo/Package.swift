// swift-tools-version:6.0
import PackageDescription

// A GraphKit plugin in its own package: a node type, effect.echo, that graphctl loads at run
// time (docs/PLUGINS.md walks through it). It depends on GraphKit's shared library product,
// GraphKitShared, so the plugin and graphctl share one copy of the engine; its tests import
// GraphKitTesting (NodeHarness) from the same library. EchoPluginNote is a C file that puts the
// plugin's note (GRAPHKIT_PLUGIN_NOTE) into the library: graphctl reads it from the file before
// it loads it.
let package = Package(
    name: "plugin-echo",
    products: [
        .library(name: "EchoPlugin", type: .dynamic, targets: ["EchoPlugin"]),
    ],
    dependencies: [
        // Or .package(url: "https://…/graphkit.git", from: "0.5.0").
        .package(name: "GraphKit", path: "../.."),
    ],
    targets: [
        .target(name: "EchoPluginNote", dependencies: [.product(name: "GraphKitShared", package: "GraphKit")], publicHeadersPath: "."),
        .target(name: "EchoPlugin", dependencies: ["EchoPluginNote", .product(name: "GraphKitShared", package: "GraphKit")]),
        .testTarget(name: "EchoPluginTests", dependencies: ["EchoPlugin", .product(name: "GraphKitShared", package: "GraphKit")]),
    ]
)
