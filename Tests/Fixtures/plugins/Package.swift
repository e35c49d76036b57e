// swift-tools-version:6.0
import PackageDescription

// Plugins that must be refused, for Tests/graphctlTests/PluginTests.swift: one registers a type
// GraphKit has built in, one a type the example plugin registers, one throws from registration.
let package = Package(
    name: "fixture-plugins",
    products: [
        .library(name: "DuplicateGainPlugin", type: .dynamic, targets: ["DuplicateGainPlugin"]),
        .library(name: "EchoTwinPlugin", type: .dynamic, targets: ["EchoTwinPlugin"]),
        .library(name: "ThrowingPlugin", type: .dynamic, targets: ["ThrowingPlugin"]),
    ],
    dependencies: [.package(name: "GraphKit", path: "../../..")],
    targets: [
        .target(name: "DuplicateGainPlugin", dependencies: [.product(name: "GraphKit", package: "GraphKit")]),
        .target(name: "EchoTwinPlugin", dependencies: [.product(name: "GraphKit", package: "GraphKit")]),
        .target(name: "ThrowingPlugin", dependencies: [.product(name: "GraphKit", package: "GraphKit")]),
    ]
)
