import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

/// `source.concat`: files joined as stored, `source.concat → sink.mp4`, on files ffmpeg makes
/// here: the packets are the sources', each piece from the key frame at or before its inpoint to
/// its outpoint, the sound in step; what cannot be joined is refused naming the piece.
@Suite(.media, .timeLimit(.minutes(10))) struct ConcatSourceNodeTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }
    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// `seconds` of testsrc2 at 25 fps, a key frame every `gop` frames (no scene cuts), `codec`
    /// (libx264 or libx265), B-frames as `bframes`, with a sine of `tone` Hz as AAC at 44.1 kHz.
    func movie(_ name: String, seconds: Double, size: String = "320x240", codec: String = "libx264", gop: Int = 50, bframes: Int = 0,
               tone: Int? = 440) throws -> String {
        let p = path(name)
        var arguments = ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=\(size):rate=25:duration=\(seconds)"]
        if let tone { arguments += ["-f", "lavfi", "-i", "sine=frequency=\(tone):sample_rate=44100:duration=\(seconds)", "-c:a", "aac"] }
        arguments += ["-c:v", codec, "-g", "\(gop)", "-keyint_min", "\(gop)", "-bf", "\(bframes)", "-pix_fmt", "yuv420p"]
        arguments += codec == "libx265" ? ["-x265-params", "log-level=error:scenecut=0", "-tag:v", "hvc1"] : ["-sc_threshold", "0"]
        try TestMedia.runTool("ffmpeg", arguments + ["-y", p])
        return p
    }

    /// `source.concat → sink.mp4` (its `ports`) joining `pieces` (JSON) into `out`, the sink's
    /// other parameters `sink` (JSON members), on `plan` (by default the one it gets).
    func joining(_ pieces: String, into out: String, ports: [String] = ["video", "audio"], sink: String = "",
                 plan: RunPlan? = nil) throws -> GraphRun {
        let edges = ports.map { "\"join.\($0) -> file.\($0)\"" }.joined(separator: ", ")
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "join": { "type": "source.concat", "params": { "pieces": \(pieces) } },
              "file": { "type": "sink.mp4", "params": { "path": "\(out)"\(sink.isEmpty ? "" : ", " + sink) } } }, "edges": [ \(edges) ] }
            """)
        return try GraphRun(graph, plan: plan)
    }

    /// The join run to its end.
    func join(_ pieces: String, into out: String, ports: [String] = ["video", "audio"], sink: String = "", plan: RunPlan? = nil) throws -> RunReport {
        let run = try joining(pieces, into: out, ports: ports, sink: sink, plan: plan)
        try run.start()
        return run.wait()
    }

    /// Each video packet of `file` as stored (size and MD5, ffprobe without the edit list).
    func packets(_ file: String, _ stream: String = "v") throws -> [String] {
        try TestMedia.runTool("ffprobe", ["-v", "error", "-ignore_editlist", "1", "-select_streams", stream, "-show_entries", "packet=size,data_hash",
                                          "-show_data_hash", "md5", "-of", "csv=p=0", file]).split(separator: "\n").map(String.init)
    }

    /// Decoded frames' MD5s (ffmpeg's framemd5), in presentation order.
    func frames(_ file: String) throws -> [String] {
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", file, "-map", "0:v:0", "-f", "framemd5", "-"])
            .split(separator: "\n").filter { !$0.hasPrefix("#") }.map { String($0.split(separator: ",").last ?? "").trimmingCharacters(in: .whitespaces) }
    }

    /// `file`'s sound decoded by ffmpeg to 16-bit mono at 44.1 kHz.
    func pcm(_ file: String) throws -> [Int16] {
        let raw = path(URL(fileURLWithPath: file).lastPathComponent + ".pcm")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", file, "-map", "0:a", "-ac", "1", "-f", "s16le", "-y", raw])
        return try Data(contentsOf: URL(fileURLWithPath: raw)).withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }

    /// The tone's frequency over `samples` at 44.1 kHz, from its rising zero crossings.
    static func frequency(_ samples: ArraySlice<Int16>) -> Double {
        Double(zip(samples, samples.dropFirst()).filter { $0.0 < 0 && $0.1 >= 0 }.count) * 44_100 / Double(samples.count)
    }

    /// Whole files: every video packet of each, in order, copied as stored (no decoder, no
    /// encoder); the sound's packets are each file's, and its tone changes where the pictures do.
    /// On both plans: the container path the graph gets, and the pipeline.
    @Test(arguments: RunPlan.allCases) func wholeFilesJoinPacketForPacket(plan: RunPlan) throws {
        let a = try movie("a.mp4", seconds: 2, tone: 440), b = try movie("b.mp4", seconds: 1.6, tone: 660), c = try movie("c.mp4", seconds: 1, tone: 880)
        let out = path("joined.mp4")
        let report = try join(#"[{ "path": "\#(a)" }, { "path": "\#(b)" }, { "path": "\#(c)" }]"#, into: out, plan: plan)
        #expect(report.status == .completed, "\(String(describing: report.error))")
        #expect(try packets(out) == (try packets(a)) + (try packets(b)) + (try packets(c)))
        let probe = try MediaProbe(out)
        #expect(abs(probe.duration - 4.6) < 0.05 && abs((probe.stream("audio")?.duration ?? 0) - 4.6) < 0.03, "\(probe.duration) s")
        // Every sound packet is one of a source's, and each source's come in a run, in order.
        let sources = [try packets(a, "a"), try packets(b, "a"), try packets(c, "a")]
        var rest = try packets(out, "a")[...]
        for (n, own) in sources.enumerated() {
            guard let first = rest.first, let at = own.firstIndex(of: first) else { Issue.record("piece \(n + 1)'s sound is not its file's"); break }
            let run = zip(rest, own[at...]).prefix { $0 == $1 }.count
            #expect(run >= own.count - 3, "piece \(n + 1): \(run) of \(own.count) packets")
            rest = rest.dropFirst(run)
        }
        #expect(rest.isEmpty)
        // The tone changes with the pictures: the last packet before a join holds the earlier
        // tone, and the one packet after it (1,024 samples: 23 ms) is a transition, since an AAC
        // decoder overlaps each packet with the one before it, which is another file's.
        let sound = try pcm(out)
        for (t, tone) in [(1.0, 440.0), (2.8, 660.0), (4.1, 880.0)] {
            #expect(abs(Self.frequency(sound[Int(t * 44_100)..<Int((t + 0.2) * 44_100)]) - tone) < 10, "at \(t) s")
        }
        for (join, before, after) in [(2.0, 440.0, 660.0), (3.6, 660.0, 880.0)] {
            let at = Int(join * 44_100)
            let heard = (Self.frequency(sound[(at - 2_600)..<(at - 600)]), Self.frequency(sound[(at + 1_624)..<(at + 3_624)]))
            // One zero crossing more or less is 22 Hz over 2,000 samples.
            #expect(abs(heard.0 - before) < 30 && abs(heard.1 - after) < 30, "the tone does not change at \(join) s: \(heard)")
        }
    }

    /// Ranges: a piece starts at the key frame at or before its inpoint (a warning says where)
    /// and ends at its outpoint; with B-frames, the frames decoded after one shown past the
    /// outpoint are left out (a few frames before it), the ones kept being the source's.
    @Test(arguments: RunPlan.allCases) func rangesStartAtTheKeyFrameBeforeTheirInpoint(plan: RunPlan) throws {
        let a = try movie("a.mp4", seconds: 6), b = try movie("b.mp4", seconds: 4)
        let out = path("ranges.mp4")
        let report = try join(#"[{ "path": "\#(a)", "inpoint": 2.5, "outpoint": 4.2 }, { "path": "\#(b)", "inpoint": 2, "duration": 1 }]"#, into: out, plan: plan)
        #expect(report.status == .completed, "\(String(describing: report.error))")
        let fa = try frames(a), fb = try frames(b)
        // a from its key frame at 2 s (frame 50) to 4.2 s (frame 105), then b from 2 s to 3 s.
        #expect(try frames(out) == Array(fa[50..<105]) + Array(fb[50..<75]))
        #expect(abs(try MediaProbe(out).duration - 3.2) < 0.05)

        let bframes = try movie("bf.mp4", seconds: 6, bframes: 3, tone: nil)
        let cut = path("bframes.mp4")
        let second = try join(#"[{ "path": "\#(bframes)", "inpoint": 2, "outpoint": 4.2 }, { "path": "\#(bframes)", "inpoint": 0, "outpoint": 1 }]"#,
                              into: cut, ports: ["video"], plan: plan)
        #expect(second.status == .completed, "\(String(describing: second.error))")
        let source = try frames(bframes), joined = try frames(cut)
        // From frame 50, every frame shown until one whose reference shows past 4.2 s; then 0 to 1 s.
        let kept = joined.count - 25
        #expect(kept >= 52 && kept <= 55, "\(kept) frames of the first piece")
        #expect(Array(joined.prefix(kept)) == Array(source[50..<(50 + kept)]))
        #expect(Array(joined.suffix(25)) == Array(source[0..<25]))
    }

    /// HEVC joins as stored too (hvc1, its hvcC in the caps).
    @Test(arguments: RunPlan.allCases) func hevcJoinsAsStored(plan: RunPlan) throws {
        let a = try movie("a.mp4", seconds: 1, codec: "libx265", gop: 25), b = try movie("b.mp4", seconds: 1, codec: "libx265", gop: 25)
        let out = path("hevc.mp4")
        let report = try join(#"[{ "path": "\#(a)" }, { "path": "\#(b)" }]"#, into: out, plan: plan)
        #expect(report.status == .completed, "\(String(describing: report.error))")
        #expect(try MediaProbe(out).stream("video")?.codecName == "hevc")
        #expect(try packets(out) == (try packets(a)) + (try packets(b)))
        #expect(try frames(out) == (try frames(a)) + (try frames(b)))
    }

    /// What cannot be joined is refused before the run plays, naming the piece and its place in
    /// the graph, with the code `graphctl` exits with; nothing is written.
    @Test(arguments: RunPlan.allCases) func whatCannotBeJoinedIsRefusedNamingThePiece(plan: RunPlan) throws {
        let a = try movie("a.mp4", seconds: 2), bigger = try movie("big.mp4", seconds: 1, size: "640x480"), silent = try movie("silent.mp4", seconds: 1, tone: nil)
        let mpeg4 = path("mpeg4.mp4")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=1", "-c:v", "mpeg4", "-y", mpeg4])
        FileManager.default.createFile(atPath: path("notes.txt"), contents: Data("not a movie".utf8))
        let cases: [(pieces: String, ports: [String], code: GraphError.Code, location: String, words: [String])] = [
            (#"[{ "path": "\#(a)" }, { "path": "\#(path("missing.mp4"))" }]"#, ["video"], .inputUnreadable, "pieces[1].path", ["missing.mp4", "no such file"]),
            (#"[{ "path": "\#(path("notes.txt"))" }]"#, ["video"], .inputUnreadable, "pieces[0].path", ["notes.txt", "not an MP4"]),
            (#"[{ "path": "\#(a)", "inpoint": 1, "outpoint": 0.5 }]"#, ["video"], .invalidGraph, "pieces[0].outpoint", ["empty"]),
            (#"[{ "path": "\#(a)", "inpoint": 1, "duration": 0 }]"#, ["video"], .invalidGraph, "pieces[0].duration", ["empty"]),
            (#"[{ "path": "\#(a)" }, { "path": "\#(a)", "outpoint": 3 }]"#, ["video"], .invalidGraph, "pieces[1].outpoint", ["past the file's end"]),
            (#"[{ "path": "\#(a)", "inpoint": 2 }]"#, ["video"], .invalidGraph, "pieces[0].inpoint", ["at or past the file's end"]),
            (#"[{ "path": "\#(a)" }, { "path": "\#(bigger)" }]"#, ["video"], .invalidGraph, "pieces[1].path", ["cannot follow piece 0", "640x480, not 320x240"]),
            (#"[{ "path": "\#(a)" }, { "path": "\#(silent)" }]"#, ["video", "audio"], .invalidGraph, "pieces[1].path", ["no sound track"]),
            (#"[{ "path": "\#(mpeg4)" }]"#, ["video"], .invalidGraph, "pieces[0].path", ["mp4v", "H.264 and HEVC"]),
        ]
        for (n, c) in cases.enumerated() {
            let out = path("refused\(n).mp4")
            let error = #expect(throws: GraphError.self) { _ = try join(c.pieces, into: out, ports: c.ports, plan: plan) }
            #expect(error?.code == c.code, "case \(n): \(String(describing: error))")
            #expect(error?.problems.first?.location == "nodes.join.params.\(c.location)", "case \(n): \(String(describing: error))")
            for word in c.words { #expect(error?.description.contains(word) == true, "case \(n): \"\(word)\" not in \(String(describing: error))") }
            #expect(!FileManager.default.fileExists(atPath: out))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).allSatisfy { !$0.contains("refused") })
    }

    // MARK: The container path

    /// Both plans write the same samples at the same times (the container path reads and writes
    /// them on the run's thread; the pipeline pushes them through GStreamer to the same writer),
    /// and the container path's report counts what crossed each edge as the pipeline's does.
    @Test func bothPlansWriteTheSameSamples() throws {
        let a = try movie("a.mp4", seconds: 3, bframes: 2), b = try movie("b.mp4", seconds: 2, bframes: 2, tone: 550)
        let pieces = #"[{ "path": "\#(a)", "inpoint": 0.5, "outpoint": 2.9 }, { "path": "\#(b)" }]"#
        let copied = path("copied.mp4"), piped = path("piped.mp4")
        let run = try joining(pieces, into: copied)
        #expect(run.plan == .containerPath)
        try run.start()
        let report = run.wait()
        #expect(report.status == .completed, "\(String(describing: report.error))")
        let other = try join(pieces, into: piped, plan: .pipeline)
        #expect(other.status == .completed, "\(String(describing: other.error))")
        func timed(_ file: String, _ stream: String) throws -> [String] {
            try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", stream, "-show_entries", "packet=pts,dts,duration,size,flags,data_hash",
                                              "-show_data_hash", "md5", "-of", "csv=p=0", file]).split(separator: "\n").map(String.init)
        }
        for stream in ["v", "a"] {
            let mine = try timed(copied, stream), theirs = try timed(piped, stream)
            #expect(!mine.isEmpty && mine == theirs, "\(stream): \(mine.count) packets against \(theirs.count)")
        }
        let video = try packets(copied).count, sound = try packets(copied, "a").count
        let join = report.nodes.first { $0.id == "join" }, file = report.nodes.first { $0.id == "file" }
        #expect(join?.buffersOut == video + sound && file?.buffersIn == video + sound, "\(report.nodes)")
        #expect(report.edges.map(\.buffers).sorted() == [sound, video].sorted(), "\(report.edges)")
        #expect(abs(report.mediaSeconds - 4.9) < 0.1, "\(report.mediaSeconds) s")
        #expect(report.outputs.map(\.status) == [.completed])
    }

    /// A long join cancelled midway ends within a second, leaving nothing in the folder; one
    /// stopped midway ends `stopped`, its file complete and playable, shorter than the whole.
    @Test(.timeLimit(.minutes(3))) func aCopyStopsOrCancelsBetweenTwoSamples() throws {
        let a = try movie("a.mp4", seconds: 2)
        // 600 pieces of 2 s: 20 minutes of 320x240, far more than is copied before the ask.
        let pieces = "[" + Array(repeating: #"{ "path": "\#(a)" }"#, count: 600).joined(separator: ", ") + "]"
        for stopping in [false, true] {
            let out = path(stopping ? "stopped.mp4" : "cancelled.mp4")
            let run = try joining(pieces, into: out)
            #expect(run.plan == .containerPath)
            try run.start()
            let started = ContinuousClock.now
            while run.progress.position < 5, run.finalReport == nil, ContinuousClock.now - started < .seconds(60) { usleep(2_000) }
            let asked = ContinuousClock.now
            if stopping { run.stop() } else { run.cancel() }
            let report = run.wait()
            #expect(ContinuousClock.now - asked < .seconds(1), "ended \(ContinuousClock.now - asked) after the ask")
            if stopping {
                #expect(report.status == .stopped, "\(String(describing: report.error))")
                let probe = try MediaProbe(out)
                #expect(probe.duration > 4 && probe.duration < 1_000, "\(probe.duration) s")
                #expect(try frames(out).count == Int((probe.stream("video")?.duration ?? 0) * 25 + 0.5))
            } else {
                #expect(report.status == .cancelled)
                #expect(!FileManager.default.fileExists(atPath: out))
            }
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0 != "a.mp4" && $0 != "stopped.mp4" }
        #expect(left.isEmpty, "\(left)")
    }

    /// A piece cut after the graph read its index fails the run naming the file, and nothing is
    /// left under the output's name; a length limit ends the file complete, within it.
    @Test func aPieceCutWhileCopiedFailsAndALimitEndsTheFileWithinIt() throws {
        let a = try movie("a.mp4", seconds: 4), out = path("cut.mp4")
        let run = try joining(#"[{ "path": "\#(a)" }]"#, into: out)
        #expect(run.plan == .containerPath)
        let size = try #require(FileManager.default.attributesOfItem(atPath: a)[.size] as? Int)
        // faststart: the index first, so the cut takes the last samples' bytes.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: a))
        try handle.truncate(atOffset: UInt64(size / 2))
        try handle.close()
        try run.start()
        let report = run.wait()
        #expect(report.status == .failed)
        #expect(report.error?.description.contains("a.mp4") == true && report.error?.description.contains("cut while it was read") == true,
                "\(String(describing: report.error))")
        // Named as a pipeline names a node that failed: what it was reading.
        #expect(report.error?.problems.first?.location == #"node "join" (source.concat, reading "\#(a)")"#, "\(String(describing: report.error))")
        #expect(!FileManager.default.fileExists(atPath: out))

        let b = try movie("b.mp4", seconds: 4), limited = path("limited.mp4")
        let whole = try #require(FileManager.default.attributesOfItem(atPath: b)[.size] as? Int)
        let capped = try join(#"[{ "path": "\#(b)" }]"#, into: limited, sink: #""fileLengthLimit": \#(whole / 2)"#)
        #expect(capped.status == .completed, "\(String(describing: capped.error))")
        let written = try #require(FileManager.default.attributesOfItem(atPath: limited)[.size] as? Int)
        #expect(written <= whole / 2 && written > whole / 4, "\(written) of \(whole / 2) bytes")
        let probe = try MediaProbe(limited)
        #expect(abs((probe.stream("video")?.duration ?? 0) - (probe.stream("audio")?.duration ?? 0)) < 0.1 && probe.duration > 1.2, "\(probe.duration) s")
    }

    /// As on a pipeline: a stop before anything is written cancels (nothing to complete); a run
    /// let go while it copies is cancelled, nothing left; a start at a position is refused; the
    /// sink's parameters hold (a QuickTime file with its tags, its index first).
    @Test(.timeLimit(.minutes(3))) func theContainerPathKeepsTheRunsRules() throws {
        let a = try movie("a.mp4", seconds: 2)
        // 10 minutes: a copy of seconds, so that the stop finds it running (a machine loaded
        // enough to let it end first gives `completed`, which is no stop's fault).
        let many = "[" + Array(repeating: #"{ "path": "\#(a)" }"#, count: 300).joined(separator: ", ") + "]"
        for plan in RunPlan.allCases {
            let out = path("early-\(plan).mp4")
            let run = try joining(many, into: out, plan: plan)
            try run.start()
            run.stop()
            let report = run.wait()
            // Cancelled (nothing written yet), or stopped with a complete file; never failed.
            #expect([.cancelled, .stopped, .completed].contains(report.status), "\(plan): \(report.status) \(String(describing: report.error))")
            #expect((report.status == .cancelled) != FileManager.default.fileExists(atPath: out))
        }
        do {
            let run = try joining(many, into: path("let-go.mp4"))
            try run.start()
            usleep(100_000)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix(".") || $0.contains("let-go") }.isEmpty)
        let positioned = try joining(#"[{ "path": "\#(a)" }]"#, into: path("positioned.mp4"))
        let refused = #expect(throws: GraphError.self) { try positioned.start(at: .exact(MediaTime(seconds: 1))) }
        #expect(refused?.code == .usage)

        let mov = path("tagged.mov")
        let tagged = try join(#"[{ "path": "\#(a)" }]"#, into: mov, sink: #""title": "Joined", "artist": "GraphKit""#)
        #expect(tagged.status == .completed, "\(String(describing: tagged.error))")
        let format = try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "format=format_name:format_tags=title,artist", "-of", "json", mov])
        #expect(format.contains(#""title": "Joined""#) && format.contains(#""artist": "GraphKit""#), "\(format)")
        let boxes = try Data(contentsOf: URL(fileURLWithPath: mov))
        let moov = boxes.range(of: Data("moov".utf8)), mdat = boxes.range(of: Data("mdat".utf8))
        #expect(moov != nil && mdat != nil && moov!.lowerBound < mdat!.lowerBound, "the index first")
        #expect(boxes[8..<12] == Data("qt  ".utf8), "a QuickTime file")
    }

    /// Pictures smaller than sink.mp4 takes are refused naming the sink and the size.
    @Test func tinyPicturesAreRefusedNamingTheSink() throws {
        let tiny = try movie("tiny.mp4", seconds: 1, size: "8x8", tone: nil)
        let error = #expect(throws: GraphError.self) { _ = try join(#"[{ "path": "\#(tiny)" }]"#, into: path("tiny-out.mp4"), ports: ["video"]) }
        #expect(error?.node == "file" && error?.description.contains("8x8") == true && error?.description.contains("16x16") == true,
                "\(String(describing: error))")
        #expect(!FileManager.default.fileExists(atPath: path("tiny-out.mp4")))
    }

    /// A graph that cannot run on the container path is not given it (a remux of a file that
    /// is not there, which the pipeline reports): asking for it is refused.
    @Test func aGraphThatNeedsAPipelineGetsOne() throws {
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "in.mp4" } }, "demux": { "type": "demux" },
              "file": { "type": "sink.mp4", "params": { "path": "\(path("remux.mp4"))" } } },
              "edges": ["src.out -> demux.in", "demux.video -> file.video"] }
            """)
        #expect(RunPlan(for: graph) == .pipeline)
        let error = #expect(throws: GraphError.self) { _ = try GraphRun(graph, plan: .containerPath) }
        #expect(error?.code == .usage)
    }

    /// The list is checked by the loader like any parameter: each field at its place.
    @Test func thePiecesAreCheckedWhenTheGraphLoads() {
        let loader = GraphLoader(registry: .builtIn)
        func problems(_ pieces: String) -> [String] {
            do {
                _ = try loader.load(json: #"{ "version": 1, "nodes": { "j": { "type": "source.concat", "params": { "pieces": \#(pieces) } }, "o": { "type": "sink.app" } }, "edges": ["j.video -> o.in"] }"#)
                return []
            } catch {
                return error.problems.map(\.description)
            }
        }
        #expect(problems("[]") == ["nodes.j.params.pieces: expected at least one object, got an empty array"])
        #expect(problems(#"[{ "inpoint": 1 }]"#) == [#"nodes.j.params.pieces: [0].path is required (the file, relative to the current folder (MP4 or MOV))"#])
        #expect(problems(#"[{ "path": "a.mp4", "inpiont": 1 }]"#).first?.contains(#"[0]: unknown field "inpiont"; did you mean "inpoint"?"#) == true)
        #expect(problems(#"[{ "path": "a.mp4", "inpoint": -1 }]"#).first?.contains("[0].inpoint: -1 is out of range") == true)
        #expect(problems(#""a.mp4""#).first?.contains("expected array of objects {path, inpoint, outpoint, duration}") == true)
        #expect(problems(#"[{ "path": "a.mp4" }, { "path": "b.mp4", "outpoint": 3 }]"#) == [])
    }
}
