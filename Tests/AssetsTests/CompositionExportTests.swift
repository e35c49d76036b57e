import Assets
import Foundation
import GraphKit
import GraphKitTesting
import Testing
import TestSupport

/// A composition exported with the passthrough preset (AssetExportSession(asset: composition)):
/// the container library's join (MP4Join), on files ffmpeg makes here.
@Suite(.media, .timeLimit(.minutes(10))) struct CompositionExportTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// An H.264 (+ AAC when `sound`) MP4 at 25 fps, 1 s GOP, B-frames, tagged BT.709 (so that
    /// files of any pattern join as stored).
    func movie(_ name: String, seconds: Double, pattern: String = "testsrc", size: String = "160x120", sound: Int? = nil) throws -> Asset {
        let p = path(name)
        var arguments = ["-v", "error", "-f", "lavfi", "-i", "\(pattern)=size=\(size):rate=25:duration=\(seconds)"]
        if let sound { arguments += ["-f", "lavfi", "-i", "sine=frequency=\(sound):sample_rate=44100:duration=\(seconds)", "-c:a", "aac"] }
        arguments += ["-c:v", "libx264", "-g", "25", "-bf", "2", "-pix_fmt", "yuv420p",
                      "-colorspace", "bt709", "-color_primaries", "bt709", "-color_trc", "bt709", "-color_range", "tv", "-y", p]
        try TestMedia.runTool("ffmpeg", arguments)
        return try Asset(path: p)
    }

    /// Decoded frames' MD5s (ffmpeg's framemd5, which honours edit lists), in presentation order.
    func frames(_ path: String) throws -> [String] {
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", path, "-map", "0:v:0", "-f", "framemd5", "-"])
            .split(separator: "\n").filter { !$0.hasPrefix("#") }.map { String($0.split(separator: ",").last ?? "").trimmingCharacters(in: .whitespaces) }
    }

    static func at(_ frames: Int64) -> MediaTime { MediaTime(value: frames, timescale: 25) }

    func export(_ composition: Composition, to out: String) async throws -> AssetExportSession {
        let session = try AssetExportSession(asset: composition, preset: .passthrough)
        session.outputPath = out
        try await session.export()
        return session
    }

    /// Ranges of three files, one starting between keyframes: the join shows exactly the frames
    /// of the ranges, in order (the frames from the keyframe before a range's start are decoded,
    /// not shown: one edit per piece), and the stream's packets are copied as stored.
    @Test func aPassthroughExportShowsExactlyTheRanges() async throws {
        let a = try movie("a.mp4", seconds: 3), b = try movie("b.mp4", seconds: 3, pattern: "smptebars"), c = try movie("c.mp4", seconds: 2, pattern: "testsrc2")
        let composition = MutableComposition()
        let track = try #require(composition.addMutableTrack(withMediaType: .video))
        try track.insertTimeRange(MediaTimeRange(start: Self.at(25), duration: Self.at(50)), of: try a.track(withMediaType: .video), in: a, at: .zero)
        try track.insertTimeRange(MediaTimeRange(start: .zero, duration: Self.at(25)), of: try b.track(withMediaType: .video), in: b, at: Self.at(50))
        try track.insertTimeRange(MediaTimeRange(start: Self.at(30), duration: Self.at(15)), of: try c.track(withMediaType: .video), in: c, at: Self.at(75))
        let out = path("joined.mp4")
        let session = try await export(composition.composition, to: out)
        #expect(session.status == .completed && session.progress == 1)
        let (fa, fb, fc) = (try frames(a.path), try frames(b.path), try frames(c.path))
        let expected = Array(fa[25..<75]) + Array(fb[0..<25]) + Array(fc[30..<45])
        let joined = try frames(out)
        #expect(joined == expected, "\(joined.count) frames, \(expected.count) expected; first difference at \(String(describing: zip(joined, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset))")
        let probe = try MediaProbe(out)
        #expect(abs((probe.stream("video")?.duration ?? 0) - 3.6) < 0.05, "\(String(describing: probe.stream("video")?.duration))")
    }

    /// Whole files of pictures and sound: every packet of every file, in order, and the sound
    /// stays with the pictures from piece to piece.
    @Test func aPassthroughExportOfWholeFilesKeepsEveryPacket() async throws {
        var assets: [Asset] = []
        for n in 0..<3 { assets.append(try movie("av\(n).mp4", seconds: 1.3, pattern: n == 1 ? "smptebars" : "testsrc", sound: 300 + 100 * n)) }
        let composition = MutableComposition()
        for asset in assets { try composition.insertTimeRange(MediaTimeRange(start: .zero, duration: asset.duration), of: asset, at: composition.duration) }
        let out = path("joined-av.mp4")
        _ = try await export(composition.composition, to: out)
        for stream in ["v:0", "a:0"] {
            // As stored (-ignore_editlist): FFmpeg rereads a track from a key frame at each edit.
            let probe = { (p: String) in try TestMedia.runTool("ffprobe", ["-v", "error", "-ignore_editlist", "1", "-select_streams", stream, "-show_entries", "packet=size,data_hash",
                                                                           "-show_data_hash", "md5", "-of", "csv=p=0", p]) }
            let sources = try assets.map { try probe($0.path).split(separator: "\n") }
            let joined = try probe(out).split(separator: "\n")
            if stream == "v:0" {
                #expect(joined == Array(sources.joined()))
            } else {
                // Each piece's sound ends with the packet holding its last sample shown: the
                // packets after it (the encoder's padding, at most two) are not copied.
                var rest = joined[...]
                for (n, packets) in sources.enumerated() {
                    let kept = zip(rest, packets).prefix { $0 == $1 }.count
                    #expect(kept >= packets.count - 2, "piece \(n + 1): \(kept) of \(packets.count) packets")
                    rest = rest.dropFirst(kept)
                }
                #expect(rest.isEmpty, "\(rest.count) packets more")
            }
        }
        // Where each track ends: within a frame of the composition's duration, together.
        let probe = try MediaProbe(out)
        let total = composition.duration.seconds
        let video = try #require(probe.stream("video")?.duration), audio = try #require(probe.stream("audio")?.duration)
        #expect(abs(video - total) < 0.05 && abs(audio - total) < 0.05, "video \(video) s, audio \(audio) s, composition \(total) s")
    }

    /// `file`'s sound decoded by ffmpeg to 16-bit mono at its own 44.1 kHz: with its edit list
    /// applied (a source's priming skipped), or every packet as stored (`ignoringEdits`).
    func pcm(_ file: String, ignoringEdits: Bool = false) throws -> [Int16] {
        let raw = path(URL(fileURLWithPath: file).lastPathComponent + (ignoringEdits ? ".stored" : "") + ".pcm")
        try TestMedia.runTool("ffmpeg", ["-v", "error"] + (ignoringEdits ? ["-ignore_editlist", "1"] : []) + ["-i", file, "-map", "0:a", "-f", "s16le", "-ac", "1", "-y", raw])
        return try Data(contentsOf: URL(fileURLWithPath: raw)).withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }

    /// Ranges of three AAC files (noise without PNS, whose decoding draws random numbers, so that
    /// a shift of even one sample shows and decoding is the same wherever a packet lands), two
    /// starting and ending inside a packet, joined in passthrough, as an M4A. The edits are on
    /// the sound's own clock (the sources count the movie in milliseconds: 44.1 samples).
    ///
    /// Sample-exact: every packet of the join decoded as stored (ffmpeg, no edit list), then the
    /// join's edit list applied, is each source's decoded sound over its range, sample for
    /// sample, across every edit: the same decoder on the same packets (each piece starts with
    /// the packet before its first, whose overlap the decoder needs), so the tolerance is 0.
    ///
    /// ffmpeg applying the edit list itself cuts the first edit to the sample but a later one
    /// only to within an AAC frame (FFmpeg 5.1 here put pieces 2 and 3 84 and 332 samples off
    /// their places): there each piece is the source's sound sample for sample, within 1,024
    /// samples (a frame) of its place, and the first exactly at it.
    @Test func aPassthroughJoinsSoundIsTheSourcesSoundToTheSample() async throws {
        var assets: [Asset] = []
        for n in 0..<3 {
            let p = path("noise\(n).m4a")
            try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "anoisesrc=color=pink:seed=\(n + 7):sample_rate=44100:duration=2",
                                             "-ac", "1", "-c:a", "aac", "-aac_pns", "0", "-b:a", "96k", "-y", p])
            assets.append(try Asset(path: p))
        }
        let rate = Int64(44_100)
        func at(_ samples: Int64) -> MediaTime { MediaTime(value: samples, timescale: Int32(rate)) }
        // In samples: a's [13_000, 48_517), b's [30_001, 60_000), c from 0 to its end.
        let ranges: [(from: Int64, to: Int64)] = [(13_000, 48_517), (30_001, 60_000), (0, 88_200)]
        let composition = MutableComposition()
        let track = try #require(composition.addMutableTrack(withMediaType: .audio))
        var placed: Int64 = 0
        for (asset, range) in zip(assets, ranges) {
            try track.insertTimeRange(MediaTimeRange(start: at(range.from), end: at(range.to)), of: try asset.track(withMediaType: .audio), in: asset, at: at(placed))
            placed += range.to - range.from
        }
        let out = path("joined.m4a")
        let session = try AssetExportSession(asset: composition.composition, preset: .passthrough)
        #expect(session.supportedFileTypes.first == .m4a)
        session.outputPath = out
        try await session.export()
        let sources = try zip(assets, ranges).map { asset, range in Array(try pcm(asset.path)[Int(range.from)..<Int(range.to)]) }

        // The join's edits, read by the container library, applied to its sound as stored.
        let bytes = try #require(FileBytes(path: out))
        let movie = try #require(try MP4File(bytes).movie())
        #expect(movie.timescale == 44_100)
        let edits = try #require(movie.tracks(handler: "soun").first?.track.edits)
        #expect(edits.count == 3 && edits.map(\.duration) == ranges.map { UInt64($0.to - $0.from) }, "\(edits)")
        let stored = try pcm(out, ignoringEdits: true)
        for (n, (edit, expected)) in zip(edits, sources).enumerated() {
            let from = Int(edit.mediaTime), to = from + Int(edit.duration)
            let shown = stored[min(from, stored.count)..<min(to, stored.count)]
            let first = zip(shown, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            #expect(shown.count == expected.count && first == nil,
                    "piece \(n + 1): \(shown.count) of \(expected.count) samples; first difference at \(String(describing: first))")
        }

        // ffmpeg's own reading of the edits: each piece's middle second of a second, sample for
        // sample, within a frame of its place; the first piece exactly at it.
        let played = try pcm(out)
        var place = 0
        for (n, expected) in sources.enumerated() {
            let probe = Array(expected[(expected.count / 2)..<(expected.count / 2 + 1_000)])
            let wanted = place + expected.count / 2
            let near = max(0, wanted - 1_024)...max(0, min(played.count - probe.count, wanted + 1_024))
            let found = near.filter { played[$0..<($0 + probe.count)].elementsEqual(probe) }.min { abs($0 - wanted) < abs($1 - wanted) }
            #expect(found != nil, "piece \(n + 1): its sound is not within 1,024 samples of \(wanted) in ffmpeg's decoding")
            if n == 0 { #expect(found == wanted) }
            place += expected.count
        }
        #expect(abs(played.count - Int(placed)) <= 2 * 1_024, "\(played.count) samples, \(placed) placed")
    }

    /// Pieces that cannot follow one another as stored, a range past the end and a preset with
    /// nothing to encode are refused, naming what is at fault; nothing is left under the output's name.
    @Test func whatCannotBeJoinedIsRefusedAndNothingIsLeft() async throws {
        let a = try movie("a.mp4", seconds: 1), bigger = try movie("bigger.mp4", seconds: 1, size: "320x240")
        let composition = MutableComposition()
        try composition.insertTimeRange(MediaTimeRange(start: .zero, duration: Self.at(25)), of: a, at: .zero)
        try composition.insertTimeRange(MediaTimeRange(start: .zero, duration: Self.at(25)), of: bigger, at: Self.at(25))
        let differs = #expect(throws: GraphError.self) { try AssetExportSession(asset: composition.composition, preset: .passthrough) }
        #expect(differs?.code == .usage && differs?.description.contains("piece 2 (\"\(bigger.path)\")") == true, "\(String(describing: differs))")
        #expect(differs?.message.contains("320x240, not 160x120") == true)

        // A preset that re-encodes takes them (CompositionTranscodeTests); one with nothing to
        // encode is refused, naming the preset.
        let sound = #expect(throws: GraphError.self) { try AssetExportSession(asset: composition.composition, preset: .appleM4A) }
        #expect(sound?.code == .usage && sound?.message.contains("no sound track") == true, "\(String(describing: sound))")

        let scaled = MutableComposition()
        try scaled.insertTimeRange(MediaTimeRange(start: .zero, duration: Self.at(25)), of: a, at: .zero)
        try scaled.scaleTimeRange(MediaTimeRange(start: .zero, duration: Self.at(25)), toDuration: Self.at(50))
        let slow = try AssetExportSession(asset: scaled.composition, preset: .passthrough)
        slow.outputPath = path("slow.mp4")
        let scaledError = await #expect(throws: GraphError.self) { try await slow.export() }
        #expect(scaledError?.code == .usage && scaledError?.description.contains("piece 1 (\"\(a.path)\")") == true
                && scaledError?.message.contains("scaled") == true, "\(String(describing: scaledError))")
        #expect(!FileManager.default.fileExists(atPath: path("slow.mp4")))

        let fine = MutableComposition()
        try fine.insertTimeRange(MediaTimeRange(start: .zero, duration: Self.at(25)), of: a, at: .zero)
        let session = try AssetExportSession(asset: fine.composition, preset: .passthrough)
        let out = path("late.mp4")
        session.outputPath = out
        session.timeRange = MediaTimeRange(start: Self.at(50), duration: Self.at(10))
        let late = await #expect(throws: GraphError.self) { try await session.export() }
        #expect(late?.code == .usage && late?.message.contains("past the end of the composition") == true, "\(String(describing: late))")
        #expect(session.status == .failed)
        #expect(!FileManager.default.fileExists(atPath: out))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).allSatisfy { !$0.contains("late") })
    }
}
