@testable import Assets
import Foundation
import GraphKit
import GraphKitTesting
import Testing
import TestSupport

/// Chapters carried through exports, on files ffmpeg makes here with a QuickTime chapter track
/// and a Nero list: a transcode writes the source's chapters, a passthrough trim (MP4Trim) and a
/// composition's join (MP4Join) write them cut to the range and moved to the new timeline;
/// ffprobe reads the result.
@Suite(.media, .timeLimit(.minutes(10))) struct ExportChaptersTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// `seconds` of 160x120 H.264 (a keyframe a second) and AAC, with `chapters` (start
    /// seconds and title, each to the next, the last to the end).
    func movie(_ name: String, seconds: Int, chapters: [(Double, String)]) throws -> String {
        let list = path("\(name).chapters.txt")
        var text = ";FFMETADATA1\ntitle=With chapters\n"
        for (i, (start, title)) in chapters.enumerated() {
            let end = i + 1 < chapters.count ? chapters[i + 1].0 : Double(seconds)
            text += "[CHAPTER]\nTIMEBASE=1/1000\nSTART=\(Int(start * 1000))\nEND=\(Int(end * 1000))\ntitle=\(title)\n"
        }
        try text.write(toFile: list, atomically: true, encoding: .utf8)
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=25:duration=\(seconds)",
                                         "-f", "lavfi", "-i", "sine=sample_rate=44100:duration=\(seconds)", "-i", list,
                                         "-map", "0", "-map", "1", "-map_metadata", "2", "-map_chapters", "2",
                                         "-c:v", "libx264", "-g", "25", "-keyint_min", "25", "-sc_threshold", "0", "-pix_fmt", "yuv420p",
                                         "-c:a", "aac", path(name)])
        return path(name)
    }

    static let chapters: [(Double, String)] = [(0, "Opening"), (1, "Middle – 中"), (2, "End")]

    /// ffprobe's chapters of `file`: (start, title), starts to the millisecond.
    static func chapters(_ file: String) throws -> [(Double, String)] {
        try MediaProbe(file).chapters.map { (($0.start * 1000).rounded() / 1000, $0.title) }
    }

    static func same(_ a: [(Double, String)], _ b: [(Double, String)]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { abs($0.0 - $1.0) < 0.002 && $0.1 == $1.1 }
    }

    /// A re-encode of 0.5-2.5 s: the chapter under way at 0.5 s starts the file, the others
    /// follow moved by 0.5 s; the whole file keeps all three. GraphKit's reader agrees.
    @Test func aTranscodeWritesTheRangesChapters() async throws {
        let source = try movie("source.mp4", seconds: 3, chapters: Self.chapters)
        let session = try AssetExportSession(asset: try Asset(path: source), preset: .sd640x480)
        session.outputPath = path("range.mp4")
        session.timeRange = MediaTimeRange(start: MediaTime(seconds: 0.5), end: MediaTime(seconds: 2.5))
        try await session.export()
        let expected: [(Double, String)] = [(0, "Opening"), (0.5, "Middle – 中"), (1.5, "End")]
        let theirs = try Self.chapters(path("range.mp4"))
        #expect(Self.same(theirs, expected), "ffprobe: \(theirs)")
        let ours = try Asset(path: path("range.mp4")).chapters.map { ($0.start.seconds, $0.title) }
        #expect(Self.same(ours, expected), "\(ours)")

        let whole = try AssetExportSession(asset: try Asset(path: source), preset: .sd640x480)
        whole.outputPath = path("whole.mp4")
        try await whole.export()
        #expect(Self.same(try Self.chapters(path("whole.mp4")), Self.chapters))
    }

    /// A passthrough trim of 1.2-2.6 s (copied from the keyframe at 1 s, shown from 1.2 s): the
    /// chapters from the range's start, on the new timeline; only the Nero list is written (the
    /// source's chapter track is not copied), so ffprobe reads each chapter once.
    @Test func aPassthroughTrimCutsTheChaptersToItsRange() async throws {
        let source = try movie("source.mp4", seconds: 3, chapters: Self.chapters)
        let session = try AssetExportSession(asset: try Asset(path: source), preset: .passthrough)
        session.outputPath = path("trim.mp4")
        session.timeRange = MediaTimeRange(start: MediaTime(seconds: 1.2), end: MediaTime(seconds: 2.6))
        try await session.export()
        let theirs = try Self.chapters(path("trim.mp4"))
        #expect(Self.same(theirs, [(0, "Middle – 中"), (0.8, "End")]), "ffprobe: \(theirs)")
        let probe = try MediaProbe(path("trim.mp4"))
        #expect(probe.streams.count == 2 && abs(probe.duration - 1.4) < 0.05, "\(probe.streams.map(\.codecType)) \(probe.duration)")
    }

    /// A join of two files' ranges: each piece's chapters in order on the joined timeline; a
    /// chapter that goes on from one piece into the next (two ranges of one file that follow on)
    /// is one chapter.
    @Test func aJoinWritesTheChaptersOfEveryPiece() async throws {
        let a = try Asset(path: try movie("a.mp4", seconds: 3, chapters: Self.chapters))
        let b = try Asset(path: try movie("b.mp4", seconds: 2, chapters: [(0, "B one"), (1, "B two")]))
        let composition = MutableComposition()
        let track = try #require(composition.addMutableTrack(withMediaType: .video))
        func seconds(_ s: Double) -> MediaTime { MediaTime(seconds: s, preferredTimescale: 25) }
        // a 0.6-1.4, a 1.4-2.0 (the same Middle chapter goes on), b 0.4-2.0.
        try track.insertTimeRange(MediaTimeRange(start: seconds(0.6), end: seconds(1.4)), of: try a.track(withMediaType: .video), in: a, at: .zero)
        try track.insertTimeRange(MediaTimeRange(start: seconds(1.4), end: seconds(2)), of: try a.track(withMediaType: .video), in: a, at: seconds(0.8))
        try track.insertTimeRange(MediaTimeRange(start: seconds(0.4), end: seconds(2)), of: try b.track(withMediaType: .video), in: b, at: seconds(1.4))
        let session = try AssetExportSession(asset: composition.composition, preset: .passthrough)
        session.outputPath = path("joined.mp4")
        try await session.export()
        let theirs = try Self.chapters(path("joined.mp4"))
        #expect(Self.same(theirs, [(0, "Opening"), (0.4, "Middle – 中"), (1.4, "B one"), (2.0, "B two")]), "ffprobe: \(theirs)")
    }
}
