// swift-tools-version:6.0
import PackageDescription

// Plugins that must be refused, for Tests/graphctlTests/PluginTests.swift: one registers a type
// GraphKit has built in, one a type the example plugin registers, one throws from registration,
// one carries an engine of its own (it links the GraphKit product, which programs link, instead
// of the shared library).
// Each carries its note (a C target of its own, GRAPHKIT_PLUGIN_NOTE), so each gets as far as
// the check it is there for.
let package = Package(
    name: "fixture-plugins",
    products: [
        .library(name: "DuplicateGainPlugin", type: .dynamic, targets: ["DuplicateGainPlugin"]),
        .library(name: "EchoTwinPlugin", type: .dynamic, targets: ["EchoTwinPlugin"]),
        .library(name: "ThrowingPlugin", type: .dynamic, targets: ["ThrowingPlugin"]),
        .library(name: "OwnEnginePlugin", type: .dynamic, targets: ["OwnEnginePlugin"]),
    ],
    dependencies: [.package(name: "GraphKit", path: "../../..")],
    targets: [
        .target(name: "DuplicateGainNote", dependencies: [.product(name: "GraphKitShared", package: "GraphKit")], publicHeadersPath: "."),
        .target(name: "DuplicateGainPlugin", dependencies: ["DuplicateGainNote", .product(name: "GraphKitShared", package: "GraphKit")]),
        .target(name: "EchoTwinNote", dependencies: [.product(name: "GraphKitShared", package: "GraphKit")], publicHeadersPath: "."),
        .target(name: "EchoTwinPlugin", dependencies: ["EchoTwinNote", .product(name: "GraphKitShared", package: "GraphKit")]),
        .target(name: "ThrowingNote", dependencies: [.product(name: "GraphKitShared", package: "GraphKit")], publicHeadersPath: "."),
        .target(name: "ThrowingPlugin", dependencies: ["ThrowingNote", .product(name: "GraphKitShared", package: "GraphKit")]),
        .target(name: "OwnEngineNote", dependencies: [.product(name: "GraphKit", package: "GraphKit")], publicHeadersPath: "."),
        .target(name: "OwnEnginePlugin", dependencies: ["OwnEngineNote", .product(name: "GraphKit", package: "GraphKit")]),
    ]
)
