import Foundation
import Testing
import GraphKit
import GraphKitTesting
import TestSupport

/// The first graphs, end to end, checked with ffprobe.
@Suite(.media) struct RunCommandTests {
    @Test func m4aGraphRecordsTenSecondsOfAAC() throws {
        let folder = try TestMedia.temporaryFolder()
        let out = folder.appendingPathComponent("capture.m4a").path
        let stats = folder.appendingPathComponent("stats.json").path
        let r = try Graphctl.run("run", Graphctl.graph("m4a.json"), "--set", "mic.live=false", "--set", "file.path=\(out)",
                                 "--stats", stats)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("completed in"))
        let probe = try MediaProbe(out)
        let audio = try #require(probe.stream("audio"))
        #expect(audio.codecName == "aac")
        #expect(audio.sampleRate == 44_100)
        #expect(audio.channels == 1)
        #expect(abs(probe.duration - 10) <= 0.047)  // two AAC frames at 44.1 kHz
        #expect(probe.topLevelBoxes.firstIndex(of: "moov")! < probe.topLevelBoxes.firstIndex(of: "mdat")!)

        let report = try JSONDecoder().decode(RunReport.self, from: Data(contentsOf: URL(fileURLWithPath: stats)))
        #expect(report.status == .completed)
        #expect(report.outputs.first?.status == .completed)
        #expect(report.edges.first { $0.to == "aac.in" }?.capacity == EdgeCapacity(buffers: 64))
        #expect(report.edges.allSatisfy { $0.maxBuffers <= ($0.capacity.buffers ?? .max) })
    }

    @Test func transcodeGraphReencodesAWAV() throws {
        let folder = try TestMedia.temporaryFolder()
        let wav = folder.appendingPathComponent("in.wav").path
        try TestMedia.writeWAV(wav, seconds: 3, sampleRate: 48_000, channels: 2)
        let out = folder.appendingPathComponent("nested/out.m4a").path
        let r = try Graphctl.run("run", Graphctl.graph("transcode-audio.json"), "--quiet",
                                 "--set", "src.path=\(wav)", "--set", "file.path=\(out)")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.isEmpty)
        let probe = try MediaProbe(out)
        #expect(probe.stream("audio")?.codecName == "aac")
        #expect(probe.stream("audio")?.sampleRate == 48_000)
        #expect(probe.stream("audio")?.channels == 2)
        #expect(abs(probe.duration - 3) <= 0.043)
    }

    @Test func relativePathsAreRelativeToTheCurrentFolder() throws {
        let folder = try TestMedia.temporaryFolder()
        try TestMedia.writeWAV(folder.appendingPathComponent("rel.wav").path, seconds: 0.5)
        let r = try Graphctl.run("run", Graphctl.graph("transcode-audio.json"), "--set", "src.path=rel.wav",
                                 "--set", "file.path=o/rel.m4a", in: folder)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("o/rel.m4a").path))
    }

    /// Ctrl-C ends the sources: the file is finalized and the run is a success. The interrupt
    /// comes once the progress line shows two seconds of media, and the file then holds what the
    /// run's statistics say reached it: no clock is read.
    @Test func interruptFinalizesTheFile() throws {
        let folder = try TestMedia.temporaryFolder()
        let out = folder.appendingPathComponent("live.m4a").path, stats = folder.appendingPathComponent("stats.json").path
        let graphctl = try Graphctl.start(["run", Graphctl.graph("m4a.json"), "--set", "mic.duration=0", "--set", "file.path=\(out)",
                                           "--progress", "always", "--stats", stats])
        let shown = try graphctl.waitForPosition(atLeast: 2)
        graphctl.send(SIGINT)
        let r = graphctl.wait()
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("stopping"))
        #expect(r.stderr.contains("stopped in"))
        let report = try JSONDecoder().decode(RunReport.self, from: Data(contentsOf: URL(fileURLWithPath: stats)))
        #expect(report.status == .stopped)
        #expect(report.mediaSeconds >= shown - 0.05)  // the line shows tenths, rounded
        let probe = try MediaProbe(out)
        #expect(probe.stream("audio")?.codecName == "aac")
        #expect(abs(probe.duration - report.mediaSeconds) <= 0.047, "file \(probe.duration) s, run \(report.mediaSeconds) s")  // two AAC frames
    }

    /// graphs/concat.json runs on the container path: Ctrl-C in a long join ends it within a
    /// second with a complete file (exit 0, `stopped`); `--plan pipeline` runs the same graph
    /// through GStreamer, to the same packets.
    @Test(.timeLimit(.minutes(3))) func aJoinOnTheContainerPathStopsOnCtrlCAndRunsAsAPipelineOnRequest() throws {
        let folder = try TestMedia.temporaryFolder()
        let piece = folder.appendingPathComponent("piece.mp4").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25:duration=20", "-f", "lavfi",
                                         "-i", "sine=frequency=440:sample_rate=44100:duration=20", "-c:v", "libx264", "-b:v", "100k", "-g", "25",
                                         "-c:a", "aac", "-b:a", "32k", "-y", piece])
        // 100 minutes: copied at hundreds of times real time, still seconds after the signal.
        let many = "[" + Array(repeating: #"{ "path": "\#(piece)" }"#, count: 300).joined(separator: ", ") + "]"
        let out = folder.appendingPathComponent("long.mp4").path, stats = folder.appendingPathComponent("stats.json").path
        let graphctl = try Graphctl.start(["run", Graphctl.graph("concat.json"), "--set", "join.pieces=\(many)", "--set", "file.path=\(out)",
                                           "--progress", "always", "--stats", stats])
        _ = try graphctl.waitForPosition(atLeast: 2)
        let stop = graphctl.stop(by: SIGINT)
        let r = stop.result
        #expect(stop.taken < 1, "\(stop.description)")
        #expect(r.status == 0, "\(r.stderr)")
        let report = try JSONDecoder().decode(RunReport.self, from: Data(contentsOf: URL(fileURLWithPath: stats)))
        #expect(report.status == .stopped)
        let probe = try MediaProbe(out)
        #expect(probe.duration >= 2 && probe.duration < 6_000 && abs(probe.duration - report.mediaSeconds) < 0.5, "\(probe.duration) s, \(report.mediaSeconds) s")

        let two = #"[{ "path": "\#(piece)" }, { "path": "\#(piece)" }]"#
        var packets: [String] = []
        for plan in ["auto", "pipeline"] {
            let joined = folder.appendingPathComponent("\(plan).mp4").path
            let run = try Graphctl.run("run", Graphctl.graph("concat.json"), "--quiet", "--plan", plan, "--set", "join.pieces=\(two)", "--set", "file.path=\(joined)")
            #expect(run.status == 0, "\(run.stderr)")
            packets.append(try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "packet=stream_index,pts,dts,size,data_hash",
                                                             "-show_data_hash", "md5", "-of", "csv=p=0", joined]))
        }
        #expect(packets[0].split(separator: "\n").count > 2_000 && packets[0] == packets[1])
        let wrong = try Graphctl.run("run", Graphctl.graph("concat.json"), "--plan", "gstreamer")
        #expect(wrong.status == 64, "\(wrong.stderr)")
    }

    /// A list of many cuts from one recording opens it once: 1,500 pieces of one file join under
    /// a limit of 256 descriptors (each piece had its own: "Too many open files" at piece 250 or so).
    @Test func manyCutsOfOneFileHoldOneDescriptor() throws {
        let folder = try TestMedia.temporaryFolder()
        let piece = folder.appendingPathComponent("piece.mp4").path, out = folder.appendingPathComponent("cuts.mp4").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25:duration=2", "-f", "lavfi",
                                         "-i", "sine=frequency=440:sample_rate=44100:duration=2", "-c:v", "libx264", "-g", "25", "-c:a", "aac", "-y", piece])
        // A graph file: the list is longer than one argument may be (128 KiB).
        let cuts = "[" + (0..<1_500).map { n in #"{ "path": "piece.mp4", "inpoint": \#(Double(n % 2)), "duration": 0.5 }"# }.joined(separator: ", ") + "]"
        let graph = folder.appendingPathComponent("cuts.json")
        try Data(#"{ "version": 1, "nodes": { "join": { "type": "source.concat", "params": { "pieces": \#(cuts) } }, "file": { "type": "sink.mp4", "params": { "path": "cuts.mp4" } } }, "edges": ["join.video -> file.video", "join.audio -> file.audio"] }"#.utf8).write(to: graph)
        let r = try Graphctl.runCommand("/bin/sh", ["-c", #"cd "$1" && ulimit -n 256 && exec "$0" run cuts.json --quiet"#, Graphctl.executable.path, folder.path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(abs(try MediaProbe(out).duration - 750) < 1)
    }

    /// SIGTERM is like Ctrl-C, and a second signal while the first is honoured cancels: exit 130
    /// and nothing written. The two are sent while graphctl is stopped (SIGSTOP), so it takes both
    /// at once when it continues, before the pipeline can drain; they are two different signals
    /// (SIGTERM then SIGINT) because the kernel keeps one pending instance of each, and two of
    /// the same kind would merge into one.
    @Test func sigtermIsLikeInterruptAndASecondOneCancels() throws {
        let folder = try TestMedia.temporaryFolder()
        let out = folder.appendingPathComponent("cancel.m4a").path
        let graphctl = try Graphctl.start(["run", Graphctl.graph("m4a.json"), "--set", "mic.duration=0", "--set", "file.path=\(out)",
                                           "--set", "aac.bitrate=64000", "--progress", "always"])
        // Media has reached the file: the signal handlers are installed and the pipeline plays.
        try graphctl.waitForPosition(atLeast: 0.5)
        graphctl.send(SIGSTOP)
        graphctl.send(SIGTERM)
        graphctl.send(SIGINT)
        graphctl.send(SIGCONT)
        let r = graphctl.wait()
        #expect(r.stderr.contains("stopping"))  // printed before the first signal's stop() is called
        // The second signal cancels, even when the end of stream the first one started arrives
        // first: the file is abandoned.
        #expect(r.stderr.contains("cancelling"), "graphctl counted only one of the two signals")
        #expect(r.status == 130, "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent(".cancel.m4a.partial").path))
    }

    /// A run that would write a file it reads is refused before anything runs (65), naming both
    /// parameters, however the two paths lead to one file: the same name, a hard link, a
    /// symbolic link (at the output's name or on its folder's path), another spelling of the
    /// path. The same for --stats against the input, the graph file, a plugin and an output.
    /// The input is left as it was (it used to become JSON, with exit 0).
    @Test func aRunNeverWritesAFileItReads() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let song = folder.appendingPathComponent("song.wav").path
        try TestMedia.writeWAV(song, seconds: 0.5, sampleRate: 8000, channels: 1)
        let original = try Data(contentsOf: URL(fileURLWithPath: song))
        let hard = folder.appendingPathComponent("hard.wav").path, soft = folder.appendingPathComponent("soft.json").path
        #expect(link(song, hard) == 0)
        try FileManager.default.createSymbolicLink(atPath: soft, withDestinationPath: song)
        try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent("here").path, withDestinationPath: folder.path)
        let graph = folder.appendingPathComponent("waveform.json").path
        try FileManager.default.copyItem(atPath: Graphctl.graph("waveform.json"), toPath: graph)
        let waveform = ["run", graph, "--set", "src.path=\(song)", "--set", "wave.png="]
        let cases: [(extra: [String], problem: String)] = [
            (["--set", "wave.json=\(song)"], "--set wave.json: \"\(song)\" is also read by --set src.path"),
            (["--set", "wave.json=\(hard)"], "--set wave.json: \"\(hard)\" is, through a link, the file read by --set src.path (\"\(song)\")"),
            (["--set", "wave.json=\(soft)"], "--set wave.json: \"\(soft)\" is, through a link, the file read by --set src.path"),
            (["--set", "wave.json=\(folder.path)/here/song.wav"], "is, through a link, the file read by --set src.path"),
            (["--set", "wave.json=\(folder.path)/./song.wav"], "--set wave.json: \"\(folder.path)/./song.wav\" is, through a link, the file read by --set src.path"),
            (["--set", "wave.json=\(folder.path)/w.json", "--stats", song], "--stats: \"\(song)\" is also read by --set src.path"),
            (["--set", "wave.json=\(folder.path)/w.json", "--stats", hard], "--stats: \"\(hard)\" is, through a link, the file read by --set src.path"),
            (["--set", "wave.json=\(folder.path)/w.json", "--stats", graph], "--stats: \"\(graph)\" is also read by the graph file"),
            (["--set", "wave.json=\(folder.path)/w.json", "--stats", "\(folder.path)/w.json"],
             "--stats: \"\(folder.path)/w.json\" is also written by --set wave.json: each output needs a file of its own"),
            (["--set", "wave.json=\(folder.path)/w.json", "--stats", "\(folder.path)/.w.json.partial"],
             "--stats: \"\(folder.path)/.w.json.partial\" is the temporary name of the file written by --set wave.json"),
        ]
        for (extra, problem) in cases {
            let r = try Graphctl.run(waveform + extra)
            #expect(r.status == 65, "\(extra): \(r.stderr)")
            #expect(r.stderr.contains(problem), "\(extra): \(r.stderr)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: song)) == original)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["hard.wav", "here", "soft.json", "song.wav", "waveform.json"])
        // The transcode too, and a loaded plugin's file as --stats.
        let t = try Graphctl.run("run", Graphctl.graph("transcode-audio.json"), "--set", "src.path=\(song)", "--set", "file.path=\(song)")
        #expect(t.status == 65 && t.stderr.contains("--set file.path: \"\(song)\" is also read by --set src.path"), "\(t.stderr)")
        let plugin = Graphctl.root.appendingPathComponent("out/plugins/libEchoPlugin.so").path
        if FileManager.default.fileExists(atPath: plugin) {
            let p = try Graphctl.run(waveform + ["--plugin", plugin, "--set", "wave.json=\(folder.path)/w.json", "--stats", plugin])
            #expect(p.status == 65 && p.stderr.contains("--stats: \"\(plugin)\" is also read by the plugin"), "\(p.stderr)")
        }
    }

    /// A symbolic link at an output's name is refused by default (73, naming it and the way
    /// out), and written through with --follow-symlinks: the file it names is replaced, the
    /// link stays.
    @Test func followSymlinksWritesThroughALinkOnRequest() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let wav = folder.appendingPathComponent("in.wav").path
        try TestMedia.writeWAV(wav, seconds: 0.5, sampleRate: 8000, channels: 1)
        let real = folder.appendingPathComponent("real.json").path, link = folder.appendingPathComponent("link.json").path
        try Data("old".utf8).write(to: URL(fileURLWithPath: real))
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "real.json")
        let args = ["run", Graphctl.graph("waveform.json"), "--set", "src.path=\(wav)", "--set", "wave.json=\(link)", "--set", "wave.png="]
        let refused = try Graphctl.run(args)
        #expect(refused.status == 73, "\(refused.stderr)")
        #expect(refused.stderr.contains("error: nodes.wave.params.json: cannot write \"\(link)\": it is a symbolic link (to \"real.json\")"),
                "\(refused.stderr)")
        #expect(try String(contentsOfFile: real, encoding: .utf8) == "old")
        let followed = try Graphctl.run(args + ["--follow-symlinks"])
        #expect(followed.status == 0, "\(followed.stderr)")
        #expect(try String(contentsOfFile: real, encoding: .utf8).hasPrefix("{\"version\":2"))
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == "real.json")
    }

    /// A run blocked on its input (a named pipe whose writer has sent nothing) ends on one
    /// SIGTERM, with 130 (cancelled: it never played), leaving nothing. It used to block in
    /// open(2) while the graph was built, before any handler was installed: SIGTERM killed it
    /// with 143; and with a handler, one SIGTERM was ignored. The signal handlers are now
    /// installed first thing, and the input is opened without blocking (poll waits for data,
    /// and stopping the pipeline ends that wait).
    @Test(.timeLimit(.minutes(10)))
    func oneSignalEndsARunBlockedOnAPipe() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let pipe = folder.appendingPathComponent("in.mp3").path, out = folder.appendingPathComponent("out.m4a").path
        #expect(mkfifo(pipe, 0o644) == 0)
        let graphctl = try Graphctl.start(["run", Graphctl.graph("transcode-audio.json"), "--set", "src.path=\(pipe)", "--set", "file.path=\(out)"])
        // graphctl has the pipe open (a writer's non-blocking open succeeds once a reader has it).
        var writer: Int32 = -1
        while writer < 0 {
            writer = open(pipe, O_WRONLY | O_NONBLOCK)
            if writer < 0 {
                #expect(errno == ENXIO, "\(String(cString: strerror(errno)))")
                #expect(kill(graphctl.processIdentifier, 0) == 0, "graphctl ended before it opened its input: \(graphctl.standardError)")
                usleep(10_000)
            }
        }
        defer { close(writer) }
        graphctl.send(SIGTERM)
        let r = graphctl.wait()
        #expect(r.status == 130, "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["in.mp3"])
    }

    /// What a pipe writes is read: the same run, fed a WAV through the pipe, completes.
    @Test(.timeLimit(.minutes(10)))
    func aPipeIsReadAsItComes() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let wav = folder.appendingPathComponent("in.wav").path
        try TestMedia.writeWAV(wav, seconds: 1, sampleRate: 44_100, channels: 1)
        let pipe = folder.appendingPathComponent("pipe.wav").path, out = folder.appendingPathComponent("out.m4a").path
        #expect(mkfifo(pipe, 0o644) == 0)
        let graphctl = try Graphctl.start(["run", Graphctl.graph("transcode-audio.json"), "--set", "src.path=\(pipe)", "--set", "file.path=\(out)"])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: wav))
        let writer = open(pipe, O_WRONLY)  // waits for graphctl to open it
        #expect(writer >= 0)
        let written = bytes.withUnsafeBytes { Foundation.write(writer, $0.baseAddress, $0.count) }
        close(writer)
        #expect(written == bytes.count)
        let r = graphctl.wait()
        #expect(r.status == 0, "\(r.stderr)")
        #expect(abs(try MediaProbe(out).duration - 1) <= 0.047)
    }

    /// The tests above wait on what the progress line shows; this pins how it is read.
    @Test func progressLinePositionsAreRead() {
        let text = "\r\u{1B}[K0.1 s  0.3x\r\u{1B}[K[===          ] 1.5 / 10.0 s  1.0x\r\u{1B}[K\nstopping: finishing files"
        #expect(RunningGraphctl.positions(in: text) == [0.1, 1.5])
    }
}
