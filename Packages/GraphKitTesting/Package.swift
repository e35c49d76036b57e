// swift-tools-version:6.0
import PackageDescription

// NodeHarness, TestMedia and MediaProbe for other packages: a plugin's tests depend on this
// product beside GraphKit's. Its sources are GraphKit's own test helpers (Sources/GraphKitTesting,
// through a symbolic link), built here against GraphKit's shared library, so that a test process
// holds one copy of the engine; a product of the GraphKit package itself would link the engine's
// targets into it a second time (docs/PLUGINS.md). Not in libGraphKit.so: an installation ships
// no test code.
let package = Package(
    name: "GraphKitTesting",
    products: [
        .library(name: "GraphKitTesting", targets: ["GraphKitTesting"]),
    ],
    dependencies: [
        .package(name: "GraphKit", path: "../.."),
    ],
    targets: [
        .target(name: "GraphKitTesting", dependencies: [.product(name: "GraphKit", package: "GraphKit")]),
    ]
)
