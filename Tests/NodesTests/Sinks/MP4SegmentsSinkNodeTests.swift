import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

/// sink.mp4segments on media ffmpeg makes here: the files cut on the video's key frames at each
/// multiple of the segment duration, each playing alone, every packet in one of them; the
/// numbers going on after an earlier run's, past whatever holds a name; the path's pattern checked.
@Suite(.media, .timeLimit(.minutes(5))) struct MP4SegmentsSinkNodeTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }
    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// `seconds` of 320x240 H.264 at 25 fps, a key frame every second and B-frames, and 48 kHz AAC.
    func movie(seconds: Int) throws -> String {
        let p = path("in.mp4")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=\(seconds)", "-f", "lavfi", "-i",
                                         "sine=sample_rate=48000:d=\(seconds)", "-c:v", "libx264", "-g", "25", "-keyint_min", "25",
                                         "-sc_threshold", "0", "-bf", "2", "-c:a", "aac", p])
        return p
    }

    /// `source → demux → sink.mp4segments` with `params`, run to its end.
    func record(_ source: String, _ params: String, audio: Bool = true, video: Bool = true) throws -> RunReport {
        let edges = [audio ? #""demux.audio -> file.audio""# : nil, video ? #""demux.video -> file.video""# : nil].compactMap { $0 }
        return try GraphRun(try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": {
                "src": { "type": "source.file", "params": { "path": "\(source)" } },
                "demux": { "type": "demux" },
                "file": { "type": "sink.mp4segments", "params": { \(params) } } },
              "edges": [ "src.out -> demux.in", \(edges.joined(separator: ", ")) ] }
            """)).run()
    }

    /// One stream's packets in a file: each one's size and hash (framemd5's), and whether it is a
    /// key frame, in decode order.
    func packets(_ file: String, _ stream: String) throws -> [(key: Bool, hash: String)] {
        let hashes = try RemuxChecks.packets(file, stream)
        let flags = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", stream, "-show_entries", "packet=flags", "-of", "csv=p=0", file])
            .split(separator: "\n").filter { !$0.isEmpty }
        return hashes.enumerated().map { (i, hash) in (i < flags.count && flags[i].hasPrefix("K"), hash) }
    }

    /// A stream's duration and start in a file, as ffprobe reads them (seconds).
    func timing(_ file: String, _ stream: String) throws -> (start: Double, duration: Double) {
        let fields = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", stream, "-show_entries", "stream=start_time,duration",
                                                       "-of", "csv=p=0", file]).trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",")
        return (Double(fields.first ?? "") ?? .nan, Double(fields.last ?? "") ?? .nan)
    }

    /// 7 s cut every 2 s: four files, each starting with a key frame (the one at 0, 2, 4 and 6 s)
    /// and decoding alone to every frame it holds; every video packet of the source in exactly one
    /// of them, in order; the sound cut where the pictures are (each file's sound within an AAC
    /// frame of its pictures' span), every sound packet the demuxer gives in one of them.
    @Test func eachFileStartsOnAKeyFrameAndPlaysAlone() throws {
        let source = try movie(seconds: 7)
        let report = try record(source, #""path": "\#(path("cam/rec-%05d.mp4"))", "segmentDuration": 2"#)
        #expect(report.status == .completed, "\(String(describing: report.error))")
        let names = (0..<4).map { path(String(format: "cam/rec-%05d.mp4", $0)) }
        #expect(report.outputs.map(\.path) == names && report.outputs.allSatisfy { $0.status == .completed }, "\(report.outputs)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: path("cam")).sorted() == names.map { URL(fileURLWithPath: $0).lastPathComponent })
        var video: [String] = [], audio: [String] = []
        for (i, file) in names.enumerated() {
            let v = try packets(file, "v")
            #expect(v.first?.key == true, "\(file) starts with a key frame")
            #expect(v.count == (i < 3 ? 50 : 25), "\(file): \(v.count) frames")
            let decoded = try TestMedia.runTool("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v", "-show_entries", "stream=nb_read_frames",
                                                            "-of", "csv=p=0", file]).trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(decoded == "\(v.count)", "\(file) decodes alone to \(decoded) of its \(v.count) frames")
            let (pictures, sound) = (try timing(file, "v"), try timing(file, "a"))
            #expect(abs(pictures.start) < 0.001 && abs(pictures.duration - (i < 3 ? 2 : 1)) < 0.001, "\(file): pictures \(pictures)")
            #expect(sound.start >= 0 && sound.start < 0.0214 && abs(sound.start + sound.duration - pictures.duration) < 0.0214, "\(file): sound \(sound)")
            video += v.map(\.hash)
            audio += try packets(file, "a").map(\.hash)
        }
        let sent = try packets(source, "v").map(\.hash)
        #expect(video == sent, "\(video.count) video packets of \(sent.count)")
        // The demuxer leaves out the encoder's priming packet, and GStreamer 1.22's the one past
        // the track's edit too (1.26 keeps it).
        let served = try packets(source, "a").map(\.hash)
        #expect(audio.count >= served.count - 2 && audio == Array(served.dropFirst().prefix(audio.count)), "\(audio.count) sound packets of \(served.count)")
    }

    /// A second run to the same pattern goes on after the first's last file, leaving the first's
    /// as they were; a link planted at the next name is passed over (not followed: its target is
    /// untouched), and so is a name whose temporary name something holds (a pipe); a file the
    /// run reads that is named as one of the series is never written.
    @Test func aRecorderStartedAgainNeverReplacesARecording() throws {
        let source = try movie(seconds: 3)
        let pattern = path("rec-%d.mp4")
        #expect(try record(source, #""path": "\#(pattern)", "segmentDuration": 1"#).status == .completed)
        let first = try (0..<3).map { try Data(contentsOf: URL(fileURLWithPath: path("rec-\($0).mp4"))) }
        let victim = path("victim.txt")
        try Data("keep".utf8).write(to: URL(fileURLWithPath: victim))
        try FileManager.default.createSymbolicLink(atPath: path("rec-3.mp4"), withDestinationPath: victim)
        #expect(mkfifo(path(".rec-4.mp4.partial"), 0o644) == 0)
        // The source itself, named as the first file of the series.
        try FileManager.default.copyItem(atPath: source, toPath: path("rec-5.mp4"))
        let again = try record(path("rec-5.mp4"), #""path": "\#(pattern)", "segmentDuration": 1"#)
        #expect(again.status == .completed, "\(String(describing: again.error))")
        #expect(again.outputs.map(\.path) == (6..<9).map { path("rec-\($0).mp4") }, "\(again.outputs)")
        #expect(try (0..<3).map { try Data(contentsOf: URL(fileURLWithPath: path("rec-\($0).mp4"))) } == first)
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "keep")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: path("rec-3.mp4")) == victim)
        #expect(try packets(path("rec-5.mp4"), "v").map(\.hash) == (try packets(source, "v")).map(\.hash))
        #expect(try packets(path("rec-6.mp4"), "v").first?.key == true)
    }

    /// Without video the sound is cut at the multiples themselves: 5 s of AAC every 2 s is
    /// three M4A files of 2, 2 and 1 s.
    @Test func soundAloneIsCutAtTheMultiples() throws {
        let source = try movie(seconds: 5)
        let report = try record(source, #""path": "\#(path("talk-%03d.m4a"))", "segmentDuration": 2"#, video: false)
        #expect(report.status == .completed, "\(String(describing: report.error))")
        #expect(report.outputs.map(\.path) == (0..<3).map { path(String(format: "talk-%03d.m4a", $0)) })
        for (i, output) in report.outputs.enumerated() {
            let sound = try timing(output.path, "a")
            #expect(abs(sound.duration - (i < 2 ? 2 : 1)) < 0.043, "\(output.path): \(sound)")
            let brand = try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "format_tags=major_brand", "-of", "csv=p=0", output.path])
            #expect(brand.hasPrefix("M4A"), "\(brand)")
        }
    }

    /// A live camera and microphone encoded into files of a second: the sound in each file starts
    /// with its pictures and lasts as long (within the AAC frames' rounding), the last file's too
    /// (the encoder's priming, measured at the end, is not cut from it), and every frame and
    /// every AAC packet encoded is in one of the files (the last packet once was not: a track's
    /// end reached the writer before its held samples).
    @Test func aCameraAndMicrophoneStayTogetherInEveryFile() throws {
        let report = try GraphRun(try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": {
                "camera": { "type": "capture.video", "params": { "width": 320, "height": 240, "fps": 30, "duration": 4 } },
                "mic": { "type": "capture.audio", "params": { "sampleRate": 48000, "channels": 1, "duration": 4 } },
                "h264": { "type": "encode.h264", "params": { "keyframeInterval": 15 } },
                "aac": { "type": "encode.aac" },
                "file": { "type": "sink.mp4segments", "params": { "path": "\(path("live-%02d.mp4"))", "segmentDuration": 1 } } },
              "edges": [ "camera.out -> h264.in", "h264.out -> file.video", "mic.out -> aac.in", "aac.out -> file.audio" ] }
            """)).run()
        #expect(report.status == .completed, "\(String(describing: report.error))")
        #expect(report.outputs.count == 4, "\(report.outputs)")
        var (frames, sounds) = (0, 0)
        for output in report.outputs {
            let (pictures, sound) = (try timing(output.path, "v"), try timing(output.path, "a"))
            // The sound starts within an AAC frame of the pictures, and ends within two: the encoder's
            // priming (1024 samples, 21.3 ms) is not cut by an edit list (known only at the end).
            #expect(abs(sound.start - pictures.start) < 0.0214 && abs(sound.start + sound.duration - pictures.start - pictures.duration) < 0.0427,
                    "\(output.path): pictures \(pictures), sound \(sound)")
            frames += try packets(output.path, "v").count
            sounds += try packets(output.path, "a").count
        }
        let encoded = { (id: String) in report.nodes.first { $0.id == id }?.buffersOut ?? -1 }
        #expect(frames == encoded("h264") && sounds == encoded("aac"), "\(frames) frames, \(sounds) AAC packets; encoded \(encoded("h264")), \(encoded("aac"))")
    }

    /// A path that is not one number in a file's name is refused when the graph loads (65),
    /// at the parameter, saying why.
    @Test func aPathWithoutOneNumberInItsNameIsRefused() throws {
        for (pattern, words) in [("rec.mp4", "needs a number in its name"), ("rec-%d-%d.mp4", "more than one %"), ("rec-%s.mp4", "not a number"),
                                 ("%d/rec.mp4", "in its folder"), (".rec-%d.mp4", "hidden"), ("%05d", "a number alone"), ("rec-%5d.mp4", "not a number")] {
            let error = #expect(throws: GraphError.self) {
                _ = try GraphRun(try GraphLoader(registry: .builtIn).load(json: """
                    { "version": 1, "nodes": { "cam": { "type": "generate.frames", "params": { "frames": 10 } }, "h264": { "type": "encode.h264" },
                      "file": { "type": "sink.mp4segments", "params": { "path": "\(path(pattern))" } } },
                      "edges": [ "cam.out -> h264.in", "h264.out -> file.video" ] }
                    """))
            }
            #expect(error?.code == .invalidGraph && error?.description.contains("nodes.file.params.path") == true
                    && error?.description.contains(words) == true, "\(pattern): \(String(describing: error?.description.prefix(300)))")
        }
    }

    /// A recording that runs until stopped: stopped, its last file is finished and every file
    /// holds whole groups of pictures, every frame encoded in one of them; cancelled, it removes
    /// every file it wrote.
    @Test func aStopFinishesTheLastFileAndACancelRemovesThemAll() throws {
        func start(_ pattern: String) throws -> GraphRun {
            let run = try GraphRun(try GraphLoader(registry: .builtIn).load(json: """
                { "version": 1, "nodes": { "cam": { "type": "generate.frames", "params": { "duration": 0, "width": 160, "height": 120, "fps": 25 } },
                  "h264": { "type": "encode.h264", "params": { "keyframeInterval": 10 } },
                  "file": { "type": "sink.mp4segments", "params": { "path": "\(path(pattern))", "segmentDuration": 1 } } },
                  "edges": [ "cam.out -> h264.in", "h264.out -> file.video" ] }
                """))
            try run.start()
            let deadline = Date().addingTimeInterval(20)
            while (try? FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix(String(pattern.prefix(4))) && !$0.hasPrefix(".") }.count) ?? 0 < 3,
                  Date() < deadline { usleep(20_000) }
            return run
        }
        let stopped = try start("stop-%02d.mp4")
        stopped.stop()
        let report = try #require(RemuxChecks.ended(stopped, within: 10))
        #expect(report.status == .stopped, "\(String(describing: report.error))")
        #expect(report.outputs.count >= 4 && report.outputs.allSatisfy { $0.status == .completed }, "\(report.outputs)")
        var frames = 0
        for output in report.outputs {
            let v = try packets(output.path, "v")
            #expect(v.first?.key == true && (v.count % 10 == 0 || output == report.outputs.last), "\(output.path): \(v.count) frames")
            frames += v.count
        }
        let encoded = report.nodes.first { $0.id == "h264" }?.buffersOut ?? -1
        #expect(frames == encoded, "\(frames) frames in the files, \(encoded) encoded")
        #expect(!(try FileManager.default.contentsOfDirectory(atPath: folder.path).contains { $0.hasSuffix(".partial") }))

        let cancelled = try start("drop-%02d.mp4")
        cancelled.cancel()
        let dropped = try #require(RemuxChecks.ended(cancelled, within: 10))
        #expect(dropped.status == .cancelled)
        #expect(!(try FileManager.default.contentsOfDirectory(atPath: folder.path).contains { $0.hasPrefix("drop-") || $0.hasPrefix(".drop-") }))
    }
}
