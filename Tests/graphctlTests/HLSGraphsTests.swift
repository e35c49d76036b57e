import Foundation
import GraphKit
import GraphKitTesting
import TestSupport
import Testing

/// The HLS graphs as shipped, run by graphctl: graphs/record-hls.json records the test camera
/// and microphone live (its playlist read over and over while it is written: every read whole
/// and valid, every reload keeping RFC 8216's rules), a full disk ends it with 73 and a playlist
/// that still names only whole segments, and graphs/hls-ladder.json makes its three rungs and
/// their multivariant playlist.
@Suite(.media, .timeLimit(.minutes(10))) struct HLSGraphsTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }
    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// The files in `dir`, sorted.
    func files(_ dir: String) -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).sorted() }

    /// record-hls.json at 320x240, 1-second segments, a window of three: while it runs, the
    /// playlist is read twenty times at each progress report (five a second), each read a whole
    /// playlist that keeps every rule, each change a reload that keeps 6.2.1 and 6.2.2 (one
    /// target duration, segments leaving only from the start with the media sequence, three
    /// target durations kept). Ctrl-C ends it: exit 0, the playlist ended, every segment on a key
    /// frame and within two frames (1/15 s) of a second but the first (from the camera's first
    /// frame to the first cut) and the last; ffmpeg and hlsdemux play every frame listed.
    @Test func recordHLSWritesAPlaylistThatEveryReadFindsWholeAndValid() throws {
        let out = path("live")
        let run = try Graphctl.start(["run", Graphctl.graph("record-hls.json"), "--progress", "always", "--set", "hls.folder=\(out)",
                                      "--set", "camera.width=320", "--set", "camera.height=240",
                                      "--set", "hls.segmentDuration=1", "--set", "hls.windowSize=3"])
        let playlist = out + "/playlist.m3u8"
        var previous: HLSPlaylistCheck?
        var reads = 0, versions = 0
        var durations: [Int: Double] = [:]
        var problems: [String] = []
        func read() {
            guard let text = try? String(contentsOfFile: playlist, encoding: .utf8) else { return }
            reads += 1
            let check = HLSPlaylistCheck(text: text, folder: out)
            problems += check.problems.map { "read \(reads): \($0)" }
            if let p = previous, p.segments != check.segments || p.ended != check.ended {
                versions += 1
                problems += check.reloaded(from: p).map { "read \(reads): \($0)" }
            }
            for (k, s) in check.segments.enumerated() { durations[check.mediaSequence + k] = s.duration }
            previous = check
        }
        try run.wait(until: "the playlist dropped segments and the stream reached 9 s") { text in
            for _ in 0..<20 { read() }
            return (previous?.mediaSequence ?? 0) >= 2 && (RunningGraphctl.positions(in: text).max() ?? 0) >= 9
        }
        run.send(SIGINT)
        let result = run.wait()
        #expect(result.status == 0, "\(result.stderr)")
        read()
        #expect(problems == [])
        #expect(versions >= 6 && reads > 100, "\(versions) versions in \(reads) reads")
        let final = try HLSPlaylistCheck(path: playlist)
        #expect(final.ended && final.targetDuration == 1 && final.segments.count >= 3)
        #expect(try HLSPlaylistCheck.segmentsStartOnKeyFrames(playlist, final) == [])
        let sequence = durations.keys.sorted()
        #expect(sequence == Array(0...(sequence.last ?? 0)), "a segment never listed: \(sequence)")
        let middle = sequence.dropFirst().dropLast().map { durations[$0]! }
        #expect(middle.count >= 6 && middle.allSatisfy { abs($0 - 1) <= 2.0 / 30 + 1e-6 }, "\(middle)")
        // Every segment the last playlist lists plays, in ffmpeg and in hlsdemux, frame for frame.
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-xerror", "-i", playlist, "-f", "null", "-"])
        let counted = try TestMedia.runTool("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v", "-show_entries", "stream=nb_read_frames",
                                                        "-of", "csv=p=0", playlist])
        let frames = Int(counted.split(whereSeparator: \.isNewline).first ?? "") ?? -1
        #expect(frames > 60)
        #expect(try HLSPlaylistCheck.framesThroughHlsdemux(playlist) == frames)
    }

    /// A disk that fills during a live run (a 160 KiB tmpfs, root only): graphctl exits 73
    /// naming the file it could not write and why; the playlist left is valid and lists only
    /// whole segments (each decodes to its end); no temporary file is left.
    @Test(.enabled(if: geteuid() == 0, "mounting a file system needs root"))
    func aFullDiskEndsALiveRunWith73AndAValidPlaylist() throws {
        let disk = folder.appendingPathComponent("disk")
        try FileManager.default.createDirectory(at: disk, withIntermediateDirectories: false)
        try TestMedia.runTool("mount", ["-t", "tmpfs", "-o", "size=160k", "tmpfs", disk.path])
        defer { _ = try? TestMedia.runTool("umount", [disk.path]) }
        let out = disk.path + "/live"
        let result = try Graphctl.run(["run", Graphctl.graph("record-hls.json"), "--set", "hls.folder=\(out)",
                                       "--set", "camera.width=320", "--set", "camera.height=240",
                                       "--set", "hls.segmentDuration=0.5", "--set", "hls.windowSize=1000"])
        #expect(result.status == 73, "\(result.stderr)")
        #expect(result.stderr.contains("cannot write \"\(out)/") && result.stderr.contains("No space left on device"), "\(result.stderr)")
        let names = HLSPackageFiles.list(out)
        #expect(names.allSatisfy { $0 == "init.mp4" || $0 == "playlist.m3u8" || ($0.hasPrefix("segment") && $0.hasSuffix(".m4s")) }, "\(names)")
        let playlist = out + "/playlist.m3u8"
        let check = try HLSPlaylistCheck(path: playlist)
        #expect(check.problems == [])
        #expect(!check.segments.isEmpty && !check.ended)
        for s in check.segments {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: out + "/" + s.uri)))
            #expect(HLSPlaylistCheck.fragmentTimes(bytes) != nil, "\(s.uri) is not a whole media segment")
        }
        // A live playlist without an end: ffmpeg would wait for it to grow (for minutes), so it
        // plays a copy, ended, naming the same segments.
        let ended = path("ended.m3u8")
        let text = try String(contentsOfFile: playlist, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.hasPrefix("#") ? line.replacingOccurrences(of: "URI=\"", with: "URI=\"\(out)/") : line.isEmpty ? String(line) : out + "/" + line
        }.joined(separator: "\n")
        try (text + "#EXT-X-ENDLIST\n").write(toFile: ended, atomically: false, encoding: .utf8)
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-xerror", "-i", ended, "-f", "null", "-"])
    }

    /// One SIGINT ending an event transcode (graphs/transcode-hls.json, 2-second segments) of a
    /// 30-second file: the sound, decoded and encoded faster than the picture, is seconds ahead
    /// when the sources stop, and used to make a last segment past the target duration (exit 70,
    /// no EXT-X-ENDLIST). Now exit 0 (a stop, whose files are finalized), the playlist ended and
    /// valid, every segment it lists there, within the target, and ffmpeg plays it.
    @Test func oneSIGINTEndsAnEventTranscodeWithAnEndedPlaylist() throws {
        let source = path("in.mp4")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=30", "-f", "lavfi", "-i",
                                         "sine=sample_rate=48000:d=30", "-c:v", "libx264", "-g", "25", "-c:a", "aac", source])
        let out = path("event")
        let run = try Graphctl.start(["run", Graphctl.graph("transcode-hls.json"), "--progress", "always", "--set", "src.path=\(source)",
                                      "--set", "hls.folder=\(out)", "--set", "hls.playlistType=event", "--set", "hls.segmentDuration=2"])
        _ = try run.waitForPosition(atLeast: 4)
        run.send(SIGINT)
        let result = run.wait(limit: .seconds(120))
        #expect(result.status == 0, "\(result.stderr)")
        let playlist = out + "/playlist.m3u8"
        let check = try HLSPlaylistCheck(path: playlist)
        #expect(check.problems == [] && check.ended && check.targetDuration == 2, "\(check.problems)")
        #expect(!check.segments.isEmpty && check.segments.allSatisfy { $0.duration.rounded() <= 2 }, "\(check.segments.map(\.duration))")
        for s in check.segments { #expect(FileManager.default.fileExists(atPath: out + "/" + s.uri), "\(s.uri)") }
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-xerror", "-i", playlist, "-f", "null", "-"])
    }

    /// hls-ladder.json on a 4-second file, with 2-second segments: three rungs at the graph's
    /// sizes, each segment starting on a key frame at the same times in every rung, every frame
    /// in each, and a multivariant playlist that keeps RFC 8216's rules.
    @Test func hlsLadderWritesThreeRungsAndTheirMultivariantPlaylist() throws {
        let source = path("in.mp4")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=640x360:r=25:d=4", "-f", "lavfi", "-i",
                                         "sine=sample_rate=48000:d=4", "-c:v", "libx264", "-c:a", "aac", source])
        let out = path("ladder")
        let result = try Graphctl.run(["run", Graphctl.graph("hls-ladder.json"), "--quiet", "--set", "src.path=\(source)", "--set", "hls.folder=\(out)",
                                       "--set", "hls.segmentDuration=2"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(HLSPackageFiles.list(out) == ["master.m3u8", "v0", "v1", "v2"])
        let master = try HLSMultivariantCheck(path: out + "/master.m3u8")
        #expect(master.problems == [])
        #expect(master.variants.map { $0.attributes["RESOLUTION"] } == ["1920x1080", "1280x720", "640x360"])
        for v in master.variants {
            let playlist = out + "/" + v.uri
            let check = try HLSPlaylistCheck(path: playlist)
            #expect(check.segments.count == 2 && check.segments[0].duration == 2, "\(v.uri): \(check.segments)")
            #expect(try HLSPlaylistCheck.segmentsStartOnKeyFrames(playlist, check) == [])
            let counted = try TestMedia.runTool("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v", "-show_entries", "stream=nb_read_frames",
                                                            "-of", "csv=p=0", playlist])
            #expect(counted.split(whereSeparator: \.isNewline).first == "100", "\(v.uri)")
        }
    }
}
