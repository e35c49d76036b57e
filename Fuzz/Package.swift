// swift-tools-version:6.0
import PackageDescription

// libFuzzer targets (`make fuzz`, Fuzz/run.sh). A package of their own, so the ordinary
// `swift build` and `make test` never see them: a fuzz target links only when built with
// `--sanitize=fuzzer`, which supplies libFuzzer's main (SwiftPM then compiles executables with
// -parse-as-library, so a target is just its LLVMFuzzerTestOneInput). Built into
// Fuzz/.build-fuzz, against GraphKit's shared library, which the same flags instrument.
let package = Package(
    name: "GraphKitFuzz",
    dependencies: [.package(name: "GraphKit", path: "..")],
    targets: [
        // The graph loader (what `graphctl validate` runs) fed any bytes: a graph or a GraphError.
        .executableTarget(name: "fuzz-graph", dependencies: [
            .product(name: "GraphKit", package: "GraphKit"),
        ]),
        // A decode graph (source.file → decode → sink.app) fed damaged media files: the run ends,
        // completed or with a GraphError, within a time limit.
        .executableTarget(name: "fuzz-decode", dependencies: [
            .product(name: "GraphKit", package: "GraphKit"),
        ]),
        // An RTSP server's answers and packets, any bytes, played on loopback to a recording
        // (source.rtsp → sink.mp4): the run ends, completed or with a GraphError, in time.
        .executableTarget(name: "fuzz-rtsp", dependencies: [
            .product(name: "GraphKit", package: "GraphKit"),
        ]),
        // GraphKit's container library (Sources/MediaContainers: ISO-BMFF read and edited, the
        // diagnosis of damaged files) fed any bytes, in process, no GStreamer. Its sources are
        // compiled here as they are (ContainersUnderFuzz is a link to them): its API is
        // `package`, seen only within a package, and this target builds in release on its own,
        // without the rest of GraphKit.
        .target(name: "ContainersUnderFuzz"),
        .executableTarget(name: "fuzz-containers", dependencies: ["ContainersUnderFuzz"]),
        // The same library's three promises against a hostile file (issue 47), each alone so
        // that libFuzzer's coverage steers toward it: HLS packaging in memory (the plan, every
        // segment, the playlist), join and trim (the new file reads back), and what probe reads
        // (the limits checked before GStreamer, tags, indexed tracks).
        .executableTarget(name: "fuzz-hls", dependencies: ["ContainersUnderFuzz"]),
        .executableTarget(name: "fuzz-join", dependencies: ["ContainersUnderFuzz"]),
        .executableTarget(name: "fuzz-probe", dependencies: ["ContainersUnderFuzz"]),
        // Edit lists of any claim (issue 73) put on an MP4's tracks, then everything GraphKit's
        // own code does with them: the claims, a stored track's priming, the HLS plan, a trim.
        .executableTarget(name: "fuzz-edits", dependencies: ["ContainersUnderFuzz"]),
        // The samples of an HLS transport-stream segment, as a hostile file or peer gives them
        // (issue 73): GraphKit's MPEG-TS writer, its Annex B and ADTS rewriting, its 90 kHz times.
        .executableTarget(name: "fuzz-mpegts", dependencies: ["ContainersUnderFuzz"]),
    ]
)
