import Assets
import Foundation
import GraphKit
import GraphKitTesting
import Testing

/// A composition exported with the passthrough preset (AssetExportSession(asset: composition)):
/// the container library's join (MP4Join), on files ffmpeg makes here.
@Suite(.timeLimit(.minutes(10))) struct CompositionExportTests {
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
