// The Swift API's benchmarks (scripts/bench.py, job swiftapi): a program as an app using
// GraphKit would be, without Foundation (which costs a process about 7 MB and its start-up), so
// that the figures are GraphKit's.
//
//   graphkit-api-bench adaptor OUT.mp4 [bgra|i420]
//   graphkit-api-bench reader FILE.wav
//   graphkit-api-bench start          (GStreamer started, nothing read: the process's fixed cost)
//   graphkit-api-bench metadata FILE...  (every file's tags, in one process: the metadata-read job)
//   graphkit-api-bench join OUT.mp4 IN.mp4...  (a passthrough join of whole files: the join job)
//   graphkit-api-bench composition IN.mp4 OUT.mp4  (a centred 1280x720 crop faded in and out: the composition job)
@_spi(Engine) import Assets
import Glibc
import GraphKit

do {
    switch CommandLine.arguments.dropFirst().first {
    case "adaptor":
        try await benchmarkAdaptor(Array(CommandLine.arguments.dropFirst(2)))
    case "reader":
        try benchmarkReader(Array(CommandLine.arguments.dropFirst(2)))
    case "start":
        try GStreamer.start()
    case "metadata":
        benchmarkMetadata(Array(CommandLine.arguments.dropFirst(2)))
    case "join":
        try await benchmarkJoin(Array(CommandLine.arguments.dropFirst(2)))
    case "composition":
        try await benchmarkComposition(Array(CommandLine.arguments.dropFirst(2)))
    default:
        print("usage: graphkit-api-bench adaptor OUT.mp4 [bgra|i420] | reader FILE | start | metadata FILE... | join OUT IN... | composition IN OUT")
        exit(64)
    }
} catch {
    print("error: \(error)")
    exit(70)
}

/// Reads every file's tags as `Asset.metadata` and `graphctl probe` do (the container library,
/// through the file's descriptor), and prints how many files had a title: a check that the
/// work was done.
func benchmarkMetadata(_ paths: [String]) {
    var titled = 0
    for path in paths {
        guard let bytes = FileBytes(path: path), let tags = try? MediaMetadata.read(from: bytes) else {
            print("error: cannot read the tags of \(path)")
            exit(66)
        }
        if tags.title != nil { titled += 1 }
    }
    print("\(paths.count) files, \(titled) with a title")
}

/// A passthrough join of whole files: a composition of each file in turn, exported with the
/// passthrough preset (what `AVMutableComposition` into `AVAssetExportSession` does): the
/// container library joins the samples by byte range, one edit per piece.
func benchmarkJoin(_ arguments: [String]) async throws {
    guard arguments.count >= 2 else {
        print("usage: graphkit-api-bench join OUT.mp4 IN.mp4...")
        exit(64)
    }
    let composition = MutableComposition()
    for path in arguments.dropFirst() {
        let asset = try Asset(path: path)
        try composition.insertTimeRange(MediaTimeRange(start: .zero, duration: asset.duration), of: asset, at: composition.duration)
    }
    let session = try AssetExportSession(asset: composition.composition, preset: .passthrough)
    session.outputPath = arguments[0]
    try await session.export()
}

/// An export with a video composition (AVFoundation's crop and fades, through Assets' own
/// values): the source's centre 1280x720, faded in over its first second and out over its last,
/// with the HighestQuality preset (H.264 at the render size, AAC), the index last.
func benchmarkComposition(_ arguments: [String]) async throws {
    guard arguments.count == 2 else {
        print("usage: graphkit-api-bench composition IN.mp4 OUT.mp4")
        exit(64)
    }
    let asset = try Asset(path: arguments[0])
    guard let track = asset.tracks(withMediaType: .video).first, let width = track.stream.width, let height = track.stream.height else {
        print("error: \(arguments[0]) has no video track")
        exit(65)
    }
    let second = MediaTime(value: 1, timescale: 1)
    var layer = VideoComposition.Layer(trackID: track.trackID)
    layer.transform.set(LayerTransform(a: 1, b: 0, c: 0, d: 1, tx: Double(-(width - 1280) / 2), ty: Double(-(height - 720) / 2)), at: .zero)
    layer.opacity.ramp(from: 0, to: 1, over: MediaTimeRange(start: .zero, duration: second))
    layer.opacity.ramp(from: 1, to: 0, over: MediaTimeRange(start: asset.duration - second, duration: second))
    let session = try AssetExportSession(asset: asset, preset: .highestQuality)
    session.videoComposition = VideoComposition(renderSize: (1280, 720), frameDuration: MediaTime(value: 1, timescale: 30), instructions: [
        VideoComposition.Instruction(timeRange: MediaTimeRange(start: .zero, duration: asset.duration), layers: [layer]),
    ])
    session.outputPath = arguments[1]
    try await session.export()
}
