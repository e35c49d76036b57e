// swift-tools-version:6.0
import PackageDescription

// Apple's AVFoundation, CoreMedia and CoreVideo modules, by Apple's names, for code written for
// Apple's platforms (README.md, "AVFoundation on Linux"). Their sources are GraphKit's own
// (Sources/AVFoundation, Sources/CoreMedia, Sources/CoreVideo, through symbolic links), built here
// against GraphKit's shared library, so that a process holds one copy of the engine. They are
// not in libGraphKit.so: Apple's modules re-export full Foundation (CGSize, NSError, URL...), whose
// libraries cost every process that loads them about 8 MB (BENCHMARKS.md, "After the move"), and
// graphctl and the plugins need none of it.
let package = Package(
    name: "AVFoundationCompat",
    products: [
        .library(name: "AVFoundation", targets: ["CoreVideo", "CoreMedia", "AVFoundation"]),
    ],
    dependencies: [
        .package(name: "GraphKit", path: "../.."),
    ],
    targets: [
        .target(name: "CoreVideo", dependencies: [.product(name: "GraphKit", package: "GraphKit")]),
        .target(name: "CoreMedia", dependencies: ["CoreVideo", .product(name: "GraphKit", package: "GraphKit")]),
        .target(name: "AVFoundation", dependencies: ["CoreMedia", "CoreVideo", .product(name: "GraphKit", package: "GraphKit")]),
        // The product as a client links it (`make test` runs it: test-avfoundation-package).
        .testTarget(name: "AVFoundationCompatTests", dependencies: ["AVFoundation", .product(name: "GraphKit", package: "GraphKit")]),
    ]
)
