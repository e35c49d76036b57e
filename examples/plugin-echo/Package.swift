// swift-tools-version:6.0
import PackageDescription

// A GraphKit plugin in its own package: a node type, effect.echo, that graphctl loads at run
// time (docs/PLUGINS.md walks through it). It depends on GraphKit's shared library product,
// so the plugin and graphctl share one copy of the engine.
let package = Package(
    name: "plugin-echo",
    products: [
        .library(name: "EchoPlugin", type: .dynamic, targets: ["EchoPlugin"]),
    ],
    dependencies: [
        .package(name: "GraphKit", path: "../.."),
    ],
    targets: [
        .target(name: "EchoPlugin", dependencies: [.product(name: "GraphKit", package: "GraphKit")]),
    ]
)
