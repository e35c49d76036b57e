// swift-tools-version:6.0
import PackageDescription

// A client of GraphKit as README's "Add it to your package" has it, made by
// scripts/test-consumer.sh with `swift package init` and then given this manifest, in which the
// script puts the URL of a clone of the tree and its release version. Not built as part of the
// GraphKit package.
let package = Package(
    name: "MediaApp",
    dependencies: [
        .package(url: "@GRAPHKIT_URL@", from: "@GRAPHKIT_VERSION@"),
    ],
    targets: [
        // A node of the client's own, and its unit test with NodeHarness.
        .target(name: "Effects", dependencies: [.product(name: "GraphKit", package: "graphkit")]),
        // AVFoundation code as written for Apple's platforms, and a graph composed in code.
        .executableTarget(name: "MediaApp", dependencies: [
            "Effects",
            .product(name: "AVFoundation", package: "graphkit"),
            .product(name: "GraphKit", package: "graphkit"),
        ], swiftSettings: [.swiftLanguageMode(.v5)]),
        .testTarget(name: "EffectsTests", dependencies: [
            "Effects",
            .product(name: "GraphKit", package: "graphkit"),
            .product(name: "GraphKitTesting", package: "graphkit"),
        ]),
    ]
)
