import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

/// `demux` on the container path: a remux of an MP4 or MOV into `sink.mp4` needs no pipeline; what
/// the writer would not copy exactly runs as one, as before.
@Suite(.media, .timeLimit(.minutes(10))) struct DemuxStoredTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    static let testsrc = ["-f", "lavfi", "-i", "testsrc=size=320x240:rate=25"]
    static let tone = ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000"]

    /// A file of every codec the writer describes, in MP4 or MOV, 2 s.
    static let copied: [RemuxChecks.Source] = [
        .init(name: "hevc-aac.mp4", arguments: ["-f", "lavfi", "-i", "testsrc=size=320x240:rate=30000/1001"] + tone
              + ["-pix_fmt", "yuv420p", "-c:v", "libx265", "-x265-params", "log-level=error:bframes=3", "-tag:v", "hvc1", "-c:a", "aac", "-ac", "1"]),
        .init(name: "h264-aac.mov", arguments: testsrc + tone + ["-pix_fmt", "yuv420p", "-c:v", "libx264", "-bf", "2", "-c:a", "aac"]),
        .init(name: "vp9.mp4", arguments: testsrc + ["-pix_fmt", "yuv420p", "-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "200k"]),
        .init(name: "av1.mp4", arguments: testsrc + ["-pix_fmt", "yuv420p", "-c:v", "libaom-av1", "-cpu-used", "8", "-b:v", "200k"]),
        .init(name: "opus.mp4", arguments: tone + ["-c:a", "libopus", "-b:a", "64k"]),
        .init(name: "alac.m4a", arguments: tone + ["-c:a", "alac"]),
    ]

    /// Every packet as stored, every picture and sound sample decoding as the source's (the
    /// sound's edit list kept: AAC's priming, Opus's pre-skip), the track's colour kept, and the
    /// run reported as a pipeline's: the file's bytes on its edge, the progress line's length.
    @Test(arguments: copied)
    func everyCodecTheWriterCopiesIsRemuxedWithoutAPipeline(_ source: RemuxChecks.Source) throws {
        let input = try source.make(in: folder)
        let probe = try MediaProbe(input)
        let ports = ["audio", "video"].filter { probe.stream($0) != nil }
        let out = folder.appendingPathComponent("out.mp4").path
        let run = try GraphRun(remux(input, ports: ports, to: out))
        #expect(run.plan == .containerPath)
        #expect(abs((run.node("demux")?.expectedDuration?.seconds ?? 0) - 2) < 0.05)
        try run.start()
        let report = run.wait()
        #expect(report.status == .completed, "\(String(describing: report.error))")
        for port in ports {
            let s = String(port.prefix(1))
            #expect(try RemuxChecks.packets(out, s) == RemuxChecks.packets(input, s), "\(port)")
            if port == "video" {
                #expect(try RemuxChecks.frames(out, s) == RemuxChecks.frames(input, s))
            } else {
                #expect(try RemuxChecks.audio(out) == RemuxChecks.audio(input))
            }
        }
        let read = report.edges.first { $0.from == "src.out" }
        #expect((read?.buffers ?? 0) >= 20, "\(String(describing: read))")
    }

    /// A video on its own clock (23.976 fps on ffmpeg's 24,000 Hz; 29.97 on 30,000) keeps it: every
    /// packet's times and durations tick for tick, one duration in the table as in the source's.
    @Test(arguments: ["24000/1001", "30000/1001"])
    func aVideosClockIsKept(_ rate: String) throws {
        let input = folder.appendingPathComponent("ntsc.mp4").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=\(rate)", "-t", "4", "-c:v", "libx264", "-bf", "2", "-y", input])
        let out = folder.appendingPathComponent("out.mp4").path
        let run = try GraphRun(remux(input, ports: ["video"], to: out))
        #expect(run.plan == .containerPath)
        try run.start()
        #expect(run.wait().status == .completed)
        func times(_ path: String) throws -> String {
            try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "stream=time_base:packet=pts,dts,duration", "-of", "csv=p=0", path])
        }
        let source = try times(input), copied = try times(out)
        #expect(source.contains(rate.hasPrefix("24") ? "1/24000" : "1/30000") && copied == source)
    }

    /// `track` picks among the sound tracks as through a pipeline: the second, at 44.1 kHz and
    /// starting about half a second after the pictures (an empty edit), keeps its samples and its start.
    @Test func theAudioTrackParameterPicksAmongSeveral() throws {
        let input = folder.appendingPathComponent("two.mp4").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=25", "-f", "lavfi", "-i", "sine=sample_rate=48000",
                                         "-itsoffset", "0.5", "-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=44100", "-map", "0", "-map", "1", "-map", "2",
                                         "-t", "2", "-c:v", "libx264", "-c:a", "aac", "-y", input])
        let out = folder.appendingPathComponent("out.mp4").path
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(input)" } }, "demux": { "type": "demux", "params": { "track": 1 } },
              "file": { "type": "sink.mp4", "params": { "path": "\(out)" } } },
              "edges": [ "src.out -> demux.in", "demux.audio -> file.audio", "demux.video -> file.video" ] }
            """)
        let run = try GraphRun(graph)
        #expect(run.plan == .containerPath)
        try run.start()
        #expect(run.wait().status == .completed)
        func audio(_ path: String, _ n: Int) throws -> String {
            try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "a:\(n)", "-show_entries", "stream=sample_rate,start_time", "-of", "csv=p=0", path])
        }
        let second = try audio(input, 1), copied = try audio(out, 0)
        #expect(second.hasPrefix("44100,0.4") && copied == second, "\(second) \(copied)")
        let md5 = try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", input, "-map", "0:a:1", "-f", "md5", "-"])
        #expect(try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", out, "-map", "0:a:0", "-f", "md5", "-"]) == md5)
    }

    /// A picture's colour (`colr`) and HDR boxes and the track's display matrix are the source's.
    @Test func colourAndOrientationAreKept() throws {
        let input = folder.appendingPathComponent("hlg.mp4").path
        // The colour in the stream (x265's VUI) and in the file's `colr` (ffmpeg 7 writes one only
        // when asked, and then from the VUI).
        try TestMedia.runTool("ffmpeg", ["-v", "error"] + Self.testsrc + ["-t", "1", "-pix_fmt", "yuv420p10le", "-c:v", "libx265",
                                         "-x265-params", "log-level=error:colorprim=bt2020:transfer=arib-std-b67:colormatrix=bt2020nc",
                                         "-color_primaries", "bt2020", "-color_trc", "arib-std-b67", "-colorspace", "bt2020nc", "-tag:v", "hvc1",
                                         "-movflags", "+write_colr", "-y", input])
        let turned = folder.appendingPathComponent("turned.mp4").path
        let first = try GraphRun(remux(input, ports: ["video"], to: turned, params: #", "videoTransform": "0 1 -1 0 240 0""#))
        try first.start()
        #expect(first.wait().status == .completed)
        let out = folder.appendingPathComponent("out.mp4").path
        let run = try GraphRun(remux(turned, ports: ["video"], to: out))
        #expect(run.plan == .containerPath)
        try run.start()
        #expect(run.wait().status == .completed)
        let fields = "stream=color_primaries,color_transfer,color_space:stream_side_data=rotation"
        let before = try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", fields, "-of", "compact", turned])
        let after = try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", fields, "-of", "compact", out])
        #expect(before.contains("bt2020") && before.contains("arib-std-b67") && before.contains("rotation="), "\(before)")
        #expect(after == before)
        // The `colr` box itself, code points and range, as the source's.
        func colr(_ path: String) throws -> Data? {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            return bytes.range(of: Data("colrnclx".utf8)).map { bytes[$0.upperBound..<($0.upperBound + 7)] }
        }
        let source = try colr(input), copied = try colr(out)
        #expect(source != nil && copied == source, "\(String(describing: source)) \(String(describing: copied))")
    }

    /// A file cut between key frames (`ffmpeg -ss -c copy`: its edit lists start after the key
    /// frame its pictures need, and inside a sound packet) keeps its edits: it decodes to the same
    /// pictures and sound at the same times. Fragmented, its first fragment's index states the
    /// same edits. (Through GStreamer's demuxer the pictures before the edit were dropped and the
    /// copy started at a picture that cannot be decoded.)
    @Test func aFileCutBetweenKeyFramesShowsWhatItShowed() throws {
        let whole = try RemuxChecks.Source.h264AAC.make(in: folder)
        let cut = folder.appendingPathComponent("cut.mp4").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-ss", "0.7", "-i", whole, "-t", "1", "-c", "copy", "-y", cut])
        var edits: [[(mediaTime: Int64, seconds: Double)]] = []
        for params in ["", #", "fragmentInterval": 0.5"#] {
            let out = folder.appendingPathComponent("out\(edits.count).mp4").path
            let run = try GraphRun(remux(cut, ports: ["audio", "video"], to: out, params: params))
            #expect(run.plan == .containerPath)
            try run.start()
            let report = run.wait()
            #expect(report.status == .completed, "\(String(describing: report.error))")
            let bytes = try #require(FileBytes(path: out))
            let movie = try #require(try MP4File(bytes).movie())
            edits.append(["vide", "soun"].compactMap { handler in
                movie.tracks(handler: handler).first?.track.edits?.last.map { ($0.mediaTime, Double($0.duration) / Double(movie.timescale)) }
            })
            if !params.isEmpty { continue }
            // ffmpeg applies edit lists in whole files (not in fragmented ones).
            for s in ["v", "a"] {
                // Each decoded frame's time and hash.
                func decoded(_ path: String) throws -> [String] {
                    try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", path, "-map", "0:\(s):0", "-f", "framemd5", "-"]).split(separator: "\n")
                        .filter { !$0.hasPrefix("#") }.map { $0.split(separator: ",").enumerated().filter { [1, 5].contains($0.offset) }.map(\.element).joined() }
                }
                let expected = try decoded(cut), copied = try decoded(out)
                #expect(expected.count > 20 && copied == expected, "\(s)")
            }
        }
        #expect(edits.count == 2 && edits[0].count == 2 && edits[1].count == 2)
        #expect(edits[0].map(\.mediaTime) == edits[1].map(\.mediaTime) && edits[0][0].mediaTime > 0 && edits[0][1].mediaTime > 0, "\(edits)")
        // The sound's edit is the same length; the pictures' is written before them, to the end (0).
        #expect(abs(edits[0][1].seconds - edits[1][1].seconds) < 0.002 && edits[1][0].seconds == 0, "\(edits)")
    }

    /// What the writer would not copy exactly runs as a pipeline (the plan says so before the
    /// run): FLAC in MP4 (its entry is written from the stream's end), Matroska, a fragmented
    /// MP4, a named pipe.
    @Test func whatTheWriterDoesNotCopyRunsAsAPipeline() throws {
        let flac = try RemuxChecks.Source(name: "flac.mp4", arguments: Self.tone + ["-c:a", "flac", "-strict", "-2"]).make(in: folder)
        let whole = try RemuxChecks.Source.h264AAC.make(in: folder)
        let mkv = try RemuxChecks.Source.h264Matroska.make(in: folder)
        let fragmented = folder.appendingPathComponent("fragmented.mp4").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", whole, "-c", "copy", "-movflags", "frag_keyframe+empty_moov", "-y", fragmented])
        let fifo = folder.appendingPathComponent("fifo.mp4").path
        try #require(mkfifo(fifo, 0o600) == 0)
        for (input, ports) in [(flac, ["audio"]), (mkv, ["video"]), (fragmented, ["audio", "video"]), (fifo, ["video"])] {
            let graph = try remux(input, ports: ports, to: folder.appendingPathComponent("out.mp4").path)
            #expect(RunPlan(for: graph) == .pipeline, "\(input)")
            #expect(throws: GraphError.self, "\(input)") { _ = try GraphRun(graph, plan: .containerPath) }
        }
    }

    /// A file cut short after its index was read fails the run naming the demuxer and the file,
    /// within the hard limit; nothing is left under the output's name.
    @Test(.timeLimit(.minutes(2))) func aFileCutWhileItIsReadFailsNamingIt() throws {
        let input = try RemuxChecks.Source.h264AAC.make(in: folder)
        let out = folder.appendingPathComponent("out.mp4").path
        let run = try GraphRun(remux(input, ports: ["audio", "video"], to: out))
        #expect(run.plan == .containerPath)
        // ffmpeg writes the index last: the media before it is cut to a tenth.
        try #require(truncate(input, 4_000) == 0)
        try run.start()
        let report = run.wait()
        #expect(report.status == .failed)
        let message = report.error?.description ?? ""
        #expect(report.error?.node == "demux" && message.contains("\"\(input)\""), "\(message)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    /// Cancelled or stopped at once, a long remux ends within a second: cancelled, nothing left;
    /// stopped, the file complete up to where it was.
    @Test(.timeLimit(.minutes(3))) func aLongRemuxStopsAtOnce() throws {
        let input = folder.appendingPathComponent("long.mp4").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=25", "-f", "lavfi", "-i", "sine",
                                         "-t", "600", "-c:v", "libx264", "-preset", "ultrafast", "-g", "250", "-c:a", "aac", "-y", input])
        for stop in [false, true] {
            let out = folder.appendingPathComponent("out-\(stop).mp4").path
            let run = try GraphRun(remux(input, ports: ["audio", "video"], to: out))
            try run.start()
            usleep(20_000)
            let asked = Date()
            if stop { run.stop() } else { run.cancel() }
            let report = run.wait()
            #expect(Date().timeIntervalSince(asked) < 1)
            if stop {
                #expect(report.status == .stopped || report.status == .completed, "\(report.status)")
                // As long as what was copied, not the source's 600 s (its edit lists say 600 s).
                let length = try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "stream=duration", "-of", "csv=p=0", out])
                    .split(whereSeparator: \.isNewline).compactMap { Double($0) }
                #expect(length.count == 2 && length.allSatisfy { $0 < 120 }, "\(length)")
            } else {
                #expect(report.status == .cancelled)
                #expect(!FileManager.default.fileExists(atPath: out))
            }
        }
    }

    /// An MP4 packaged as HLS by a graph (`source.file → demux → sink.hls`) needs no pipeline
    /// either, as `graphctl hls` needs none: every packet of the source in the segments, the
    /// sound's priming kept (the playlist decodes to the source's samples); HEVC, which sink.hls
    /// does not take, goes to the pipeline, which names it.
    @Test func anMP4PackagedAsHLSNeedsNoPipeline() throws {
        let input = try RemuxChecks.Source.h264AAC.make(in: folder)
        let hls = folder.appendingPathComponent("hls")
        func package(_ input: String) throws -> Graph {
            try GraphLoader(registry: .builtIn).load(json: """
                { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(input)" } }, "demux": { "type": "demux" },
                  "hls": { "type": "sink.hls", "params": { "folder": "\(hls.path)", "segmentDuration": 0.5 } } },
                  "edges": [ "src.out -> demux.in", "demux.video -> hls.video", "demux.audio -> hls.audio" ] }
                """)
        }
        let run = try GraphRun(package(input))
        #expect(run.plan == .containerPath)
        try run.start()
        let report = run.wait()
        #expect(report.status == .completed, "\(String(describing: report.error))")
        let playlist = hls.appendingPathComponent("playlist.m3u8").path
        let text = try String(contentsOfFile: playlist, encoding: .utf8)
        #expect(text.components(separatedBy: "#EXTINF").count - 1 >= 3, "\(text)")
        #expect(try RemuxChecks.packets(playlist, "v") == RemuxChecks.packets(input, "v"))
        #expect(try RemuxChecks.packets(playlist, "a") == RemuxChecks.packets(input, "a"))
        #expect(try RemuxChecks.frames(playlist, "v") == RemuxChecks.frames(input, "v"))
        #expect(try RemuxChecks.audio(playlist) == RemuxChecks.audio(input))
        let hevc = try Self.copied[0].make(in: folder)
        #expect(RunPlan(for: try package(hevc)) == .pipeline)
        let refused = try GraphRun(package(hevc))
        #expect(refused.plan == .pipeline)
        try refused.start()
        let failed = refused.wait()
        #expect(failed.status == .failed && failed.error?.description.contains("its video input is HEVC, and sink.hls takes H.264") == true,
                "\(String(describing: failed.error))")
    }

    /// `source.file → demux → sink.mp4` with `ports` connected.
    func remux(_ input: String, ports: [String], to out: String, params: String = "") throws -> Graph {
        let edges = ports.map { "\"demux.\($0) -> file.\($0)\"" }.joined(separator: ", ")
        return try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(input)" } }, "demux": { "type": "demux" },
              "file": { "type": "sink.mp4", "params": { "path": "\(out)"\(params) } } },
              "edges": [ "src.out -> demux.in", \(edges) ] }
            """)
    }
}
