import Assets
import Foundation
import GraphKit
import GraphKitTesting
import Nodes
import Synchronization
import TestSupport
import Testing

/// A composition whose pieces cannot be joined as stored, exported by one re-encode
/// (AssetExportSession with any preset but passthrough, or settings of one's own), on files
/// ffmpeg makes here: H.264 and HEVC pieces of two sizes, AAC at two rates and channel counts.
@Suite(.media, .serialized, .timeLimit(.minutes(10))) struct CompositionTranscodeTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// `seconds` of `pattern` at `size`, 25 fps, in `codec` (libx264 or libx265), with a sine of
    /// `tone` Hz as AAC at `rate` Hz and `channels` channels.
    func movie(_ name: String, seconds: Int, pattern: String, size: String, codec: String, tone: Int, rate: Int, channels: Int) throws -> Asset {
        let p = path(name)
        var arguments = ["-v", "error", "-f", "lavfi", "-i", "\(pattern)=size=\(size):rate=25:duration=\(seconds)",
                         "-f", "lavfi", "-i", "sine=frequency=\(tone):sample_rate=\(rate):duration=\(seconds)",
                         "-ac", "\(channels)", "-c:a", "aac", "-c:v", codec, "-g", "25", "-pix_fmt", "yuv420p"]
        if codec == "libx265" { arguments += ["-x265-params", "log-level=error", "-tag:v", "hvc1"] }
        try TestMedia.runTool("ffmpeg", arguments + ["-y", p])
        return try Asset(path: p)
    }

    static func at(_ frames: Int64) -> MediaTime { MediaTime(value: frames, timescale: 25) }

    /// a.mp4 (H.264 160x120, AAC 44.1 kHz mono, 440 Hz) from 0.4 s to 1.6 s, then b.mp4 (HEVC
    /// 320x240, AAC 48 kHz stereo, 660 Hz) from 1 s to 2.2 s: 2.4 s, 60 frames.
    func mixed() throws -> (composition: Composition, a: Asset, b: Asset) {
        let a = try movie("a.mp4", seconds: 2, pattern: "testsrc", size: "160x120", codec: "libx264", tone: 440, rate: 44_100, channels: 1)
        let b = try movie("b.mp4", seconds: 3, pattern: "testsrc2", size: "320x240", codec: "libx265", tone: 660, rate: 48_000, channels: 2)
        let composition = MutableComposition()
        try composition.insertTimeRange(MediaTimeRange(start: Self.at(10), duration: Self.at(30)), of: a, at: .zero)
        try composition.insertTimeRange(MediaTimeRange(start: Self.at(25), duration: Self.at(30)), of: b, at: Self.at(30))
        return (composition.composition, a, b)
    }

    /// Frame `frame` (the nth decoded, in presentation order) of `file` decoded by ffmpeg and
    /// scaled to 160x120, as its luma plane (video range: ffmpeg's `gray` would stretch it).
    func luma(_ file: String, frame: Int) throws -> [UInt8] {
        try luma(file, ["-i", file, "-vf", "select=eq(n\\,\(frame)),scale=160:120"], name: "\(frame)")
    }

    /// The frame shown at `seconds` in `file` (160x120), as its luma plane: the stream made
    /// 25 fps first (a frame shown longer is repeated; `-ss` would skip to the next frame).
    func luma(_ file: String, at seconds: Double) throws -> [UInt8] {
        try luma(file, ["-i", file, "-vf", "fps=25,select=eq(n\\,\(Int((seconds * 25).rounded())))"], name: "at\(seconds)")
    }

    private func luma(_ file: String, _ input: [String], name: String) throws -> [UInt8] {
        let out = path("\(URL(fileURLWithPath: file).lastPathComponent)-\(name).yuv")
        try TestMedia.runTool("ffmpeg", ["-v", "error"] + input + ["-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-y", out])
        return Array([UInt8](try Data(contentsOf: URL(fileURLWithPath: out))).prefix(160 * 120))
    }

    static func meanDifference(_ a: [UInt8], _ b: [UInt8]) -> Double {
        guard a.count == b.count, !a.isEmpty else { return .infinity }
        return Double(zip(a, b).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }) / Double(a.count)
    }

    /// `file`'s sound decoded by ffmpeg (which applies edit lists) to 16-bit mono at `rate` Hz.
    func pcm(_ file: String, rate: Int) throws -> [Int16] {
        let raw = path(URL(fileURLWithPath: file).lastPathComponent + ".pcm")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", file, "-map", "0:a", "-ac", "1", "-ar", "\(rate)", "-f", "s16le", "-y", raw])
        return try Data(contentsOf: URL(fileURLWithPath: raw)).withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }

    /// The tone's frequency over `samples` at `rate` Hz, from its rising zero crossings.
    static func frequency(_ samples: ArraySlice<Int16>, rate: Int) -> Double {
        let rising = zip(samples, samples.dropFirst()).filter { $0.0 < 0 && $0.1 >= 0 }.count
        return Double(rising) * Double(rate) / Double(samples.count)
    }

    /// The largest run of near-silent samples (|s| < 200) in `samples`: a hole in the sound.
    static func longestHush(_ samples: ArraySlice<Int16>) -> Int {
        var longest = 0, run = 0
        for s in samples {
            run = abs(Int(s)) < 200 ? run + 1 : 0
            longest = max(longest, run)
        }
        return longest
    }

    /// H.264 and HEVC pieces of two sizes, with sound at two rates: the passthrough preset names
    /// the piece that differs, and any other preset joins them by one re-encode: one H.264 track
    /// at the first piece's size (the second piece scaled to it), one AAC track at the first
    /// sound piece's rate and channels, as long as the ranges, every frame there, each piece's
    /// pictures where the composition puts them, and the sound continuous across the join.
    @Test func piecesOfAnotherCodecSizeAndRateAreJoinedByOneReencode() async throws {
        let (composition, a, b) = try mixed()
        let refused = #expect(throws: GraphError.self) { try AssetExportSession(asset: composition, preset: .passthrough) }
        #expect(refused?.code == .usage && refused?.description.contains("piece 2 (\"\(b.path)\")") == true, "\(String(describing: refused))")

        let session = try AssetExportSession(asset: composition, preset: .highestQuality)
        #expect(session.supportedFileTypes == [.mp4, .mov])
        let out = path("joined.mp4")
        session.outputPath = out
        try await session.export()
        #expect(session.status == .completed && session.progress == 1)

        let probe = try MediaProbe(out, countFrames: true)
        let video = try #require(probe.stream("video")), audio = try #require(probe.stream("audio"))
        #expect(video.codecName == "h264" && video.width == 160 && video.height == 120)
        #expect(audio.codecName == "aac" && audio.sampleRate == 44_100 && audio.channels == 1)
        #expect(video.frameCount == 60)
        #expect(abs(probe.duration - 2.4) < 0.05 && abs((video.duration ?? 0) - 2.4) < 0.05 && abs((audio.duration ?? 0) - 2.4) < 0.05,
                "format \(probe.duration) s, video \(String(describing: video.duration)) s, audio \(String(describing: audio.duration)) s")

        // Frame 15 (0.6 s) is a's frame 25; frame 45 (1.8 s) is b's frame 40, scaled from 320x240.
        // Encoded once at a small size: the pictures are close, not equal; the other piece's
        // picture is far from each.
        let first = try luma(out, frame: 15), second = try luma(out, frame: 45)
        let (ownFirst, ownSecond) = (try luma(a.path, frame: 25), try luma(b.path, frame: 40))
        #expect(Self.meanDifference(first, ownFirst) < 5, "piece 1: \(Self.meanDifference(first, ownFirst))")
        #expect(Self.meanDifference(second, ownSecond) < 5, "piece 2: \(Self.meanDifference(second, ownSecond))")
        #expect(Self.meanDifference(first, ownSecond) > 15 && Self.meanDifference(second, ownFirst) > 15)

        // The sound: 440 Hz, then 660 Hz, with no hole where they meet (AAC's first and last
        // frames left out of the count: the encoder's own fade).
        let sound = try pcm(out, rate: 44_100)
        #expect(abs(Double(sound.count) / 44_100 - 2.4) < 0.03, "\(sound.count) samples")
        #expect(abs(Self.frequency(sound[4_410..<48_510], rate: 44_100) - 440) < 8)
        #expect(abs(Self.frequency(sound[57_330..<101_430], rate: 44_100) - 660) < 8)
        let hush = Self.longestHush(sound[2_048..<(sound.count - 2_048)])
        #expect(hush < 44, "\(hush) samples of silence: the sound stops between the pieces")
    }

    /// The file type, tags, index place and length limit are the session's, as for an asset: a
    /// QuickTime file with the title set and its index last; an M4A of the sound alone
    /// (appleM4A); settings of one's own (HEVC at 320x240, 48 kHz stereo); a gap between the
    /// pieces black and silent; a length limit that ends a complete file within it.
    @Test func aReencodeWritesTheFileTypeTagsIndexPlaceGapsAndLimit() async throws {
        let (composition, _, _) = try mixed()
        let mov = try AssetExportSession(asset: composition, preset: .sd640x480)
        mov.outputPath = path("joined.mov")
        mov.outputFileType = .mov
        var tags = MediaMetadata()
        tags.title = "Joined"
        mov.metadata = tags
        mov.shouldOptimizeForNetworkUse = false
        try await mov.export()
        let brand = try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "format_tags=major_brand,title", "-of", "default=nw=1", path("joined.mov")])
        #expect(brand.contains("TAG:major_brand=qt  ") && brand.contains("TAG:title=Joined"), "\(brand)")
        let boxes = MediaProbe.boxes(path("joined.mov"))
        #expect((boxes.firstIndex(of: "mdat") ?? .max) < (boxes.firstIndex(of: "moov") ?? -1), "\(boxes)")

        let m4a = try AssetExportSession(asset: composition, preset: .appleM4A)
        #expect(m4a.supportedFileTypes == [.m4a])
        m4a.outputPath = path("joined.m4a")
        try await m4a.export()
        let sound = try MediaProbe(path("joined.m4a"))
        #expect(sound.streams.map(\.codecType) == ["audio"] && abs(sound.duration - 2.4) < 0.05, "\(sound.streams.map(\.codecType)) \(sound.duration)")

        let custom = try AssetExportSession(asset: composition, videoSettings: VideoSettings(codec: .hevc, width: 320, height: 240),
                                            audioSettings: AudioSettings(sampleRate: 48_000, channels: 2))
        custom.outputPath = path("custom.mp4")
        try await custom.export()
        let hevc = try MediaProbe(path("custom.mp4"))
        #expect(hevc.stream("video")?.codecName == "hevc" && hevc.stream("video")?.width == 320 && hevc.stream("video")?.height == 240)
        #expect(hevc.stream("audio")?.sampleRate == 48_000 && hevc.stream("audio")?.channels == 2)

        // Half a second of nothing between the pieces: black and silent, the pieces after it.
        let gapped = MutableComposition()
        for track in composition.tracks {
            let copy = try #require(gapped.addMutableTrack(withMediaType: track.mediaType))
            for piece in track.pieces {
                let at = piece.destinationRange.start > .zero ? piece.destinationRange.start + Self.at(12) : .zero
                try copy.insertTimeRange(piece.sourceRange, of: try #require(piece.sourceTrack), in: try #require(piece.asset), at: at)
            }
        }
        let gap = try AssetExportSession(asset: gapped.composition, preset: .highestQuality)
        gap.outputPath = path("gap.mp4")
        try await gap.export()
        let withGap = try MediaProbe(path("gap.mp4"), countFrames: true)
        #expect(abs(withGap.duration - 2.88) < 0.05, "\(withGap.duration) s")
        let black = try luma(path("gap.mp4"), at: 1.44)  // in the gap
        #expect(black.count == 160 * 120 && black.allSatisfy { abs(Int($0) - 16) <= 2 }, "the gap is not black: \(Set(black).sorted().prefix(8))")
        let pcm = try pcm(path("gap.mp4"), rate: 44_100)
        #expect(pcm[Int(1.26 * 44_100)..<Int(1.62 * 44_100)].allSatisfy { abs(Int($0)) < 200 }, "the gap is not silent")
        #expect(abs(Self.frequency(pcm[Int(1.9 * 44_100)..<Int(2.7 * 44_100)], rate: 44_100) - 660) < 8)

        // A limit of the index's reserve (what sink.mp4 keeps for the boxes besides the samples,
        // an upper bound) and a third of the rest: a shorter file, within it, each stream with its
        // samples, that decodes to its end. (A third of this small file in all, 20 KB, left 4 KB
        // for samples: 0.08 s, and on Debian 13 a stream with none, which ffmpeg 7.1 refuses.)
        let whole = (try FileManager.default.attributesOfItem(atPath: path("gap.mp4"))[.size] as? Int) ?? 0
        let limit = MP4SinkNode.boxReserve + whole / 3
        let limited = try AssetExportSession(asset: gapped.composition, preset: .highestQuality)
        limited.outputPath = path("limited.mp4")
        limited.fileLengthLimit = Int64(limit)
        try await limited.export()
        let size = (try FileManager.default.attributesOfItem(atPath: path("limited.mp4"))[.size] as? Int) ?? .max
        #expect(size <= limit)
        let short = try MediaProbe(path("limited.mp4"))
        #expect(short.duration > 0.3 && short.duration < 2.5, "\(short.duration) s")
        #expect(short.streams.map(\.codecType).sorted() == ["audio", "video"])
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-xerror", "-i", path("limited.mp4"), "-f", "null", "-"])
    }

    /// Cancelled while it encodes (by cancelExport, or by the task awaiting it): the export
    /// wakes with `cancelled` and leaves nothing in the output's folder.
    @Test(arguments: [false, true]) func cancellingAReencodeLeavesNothing(byTask: Bool) async throws {
        let a = try movie("long-a.mp4", seconds: 20, pattern: "testsrc", size: "320x240", codec: "libx264", tone: 440, rate: 44_100, channels: 1)
        let b = try movie("long-b.mp4", seconds: 20, pattern: "testsrc2", size: "320x240", codec: "libx265", tone: 660, rate: 48_000, channels: 2)
        let composition = MutableComposition()
        for asset in [a, b] { try composition.insertTimeRange(MediaTimeRange(start: .zero, duration: asset.duration), of: asset, at: composition.duration) }
        let outputs = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: outputs) }
        let session = try AssetExportSession(asset: composition.composition, preset: .highestQuality)
        session.outputPath = outputs.appendingPathComponent("cancelled.mp4").path
        try await expectCancelledMidExport(session, leaving: outputs) { session, exporting in
            if byTask { exporting.cancel() } else { session.cancelExport() }
        }
    }

    /// A piece whose file went away fails the export naming it, and leaves nothing.
    @Test func aPieceThatCannotBeReadFailsTheExportByName() async throws {
        let (composition, _, b) = try mixed()
        try FileManager.default.removeItem(atPath: b.path)
        let session = try AssetExportSession(asset: composition, preset: .highestQuality)
        session.outputPath = path("failed.mp4")
        let error = await #expect(throws: GraphError.self) { try await session.export() }
        #expect(error?.description.contains(b.path) == true, "\(String(describing: error))")
        #expect(session.status == .failed)
        #expect(!FileManager.default.fileExists(atPath: path("failed.mp4")))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).allSatisfy { !$0.contains("failed") })
    }
}
