// swift-tools-version:6.0
import PackageDescription

// The graphctl users install (`make install`): the same sources as the repository's graphctl
// (Sources/graphctl, through a symbolic link), linked against GraphKit's shared library so that
// plugins loaded at run time share its one copy of the engine (the GraphKitShared product). An
// executable inside the GraphKit package itself would link GraphKit statically (docs/PLUGINS.md).
let package = Package(
    name: "graphctl",
    dependencies: [
        .package(name: "GraphKit", path: "../.."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        .executableTarget(
            name: "graphctl",
            dependencies: [
                .product(name: "GraphKitShared", package: "GraphKit"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            // Installed as PREFIX/bin/graphctl beside PREFIX/lib/graphkit/libGraphKitShared.so.
            linkerSettings: [.unsafeFlags(["-Xlinker", "-rpath=$ORIGIN/../lib/graphkit"])]
        ),
    ]
)
