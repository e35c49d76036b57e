import Foundation
import Testing
import GraphKit
import GraphKitTesting
import TestSupport

/// `graphctl batch` end to end, on WAV files made here: every input through
/// graphs/waveform.json, skipping what is done, recording failures, surviving a hang, a crash and
/// a SIGKILL of the batch itself.
@Suite(.media) struct BatchTests {
    static let waveform = Graphctl.graph("waveform.json")

    /// A folder `in` with `count` short WAVs (copies of one, made with GStreamer) named
    /// `a000.wav`…, and the folder.
    static func inputs(_ count: Int, seconds: Double = 0.3) throws -> URL {
        let folder = try TestMedia.temporaryFolder()
        let input = folder.appendingPathComponent("in")
        try FileManager.default.createDirectory(at: input, withIntermediateDirectories: true)
        let seed = folder.appendingPathComponent("seed.wav").path
        try TestMedia.writeWAV(seed, seconds: seconds, sampleRate: 8000, channels: 1)
        for i in 0..<count {
            try FileManager.default.copyItem(atPath: seed, toPath: input.appendingPathComponent(name(i)).path)
        }
        return folder
    }

    static func name(_ i: Int) -> String { "a" + String(repeating: "0", count: max(0, 3 - String(i).count)) + "\(i).wav" }

    /// The batch command for `folder`: waveform JSON per input in `out`, no picture.
    static func batch(_ folder: URL, _ extra: [String] = [], inputs: String = "in") -> [String] {
        ["batch", waveform, "--inputs", folder.appendingPathComponent(inputs).path, "--map", "src.path={input}",
         "--map", "wave.json=\(folder.path)/out/{stem}.json", "--map", "wave.png="] + extra
    }

    static func summary(_ path: URL) throws -> JSONValue {
        try JSONParser.parse(try String(contentsOf: path, encoding: .utf8))
    }

    static func files(in folder: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
    }

    static func count(_ summary: JSONValue, _ key: String) -> Int {
        if case .number(let n)? = summary["totals"]?[key] { return Int(n) }
        return -1
    }

    static func entries(_ summary: JSONValue) -> [JSONValue] {
        if case .array(let a)? = summary["inputs"] { return a }
        return []
    }

    static func string(_ v: JSONValue?) -> String? {
        if case .string(let s)? = v { return s }
        return nil
    }

    @Test func runsEveryInputThenSkipsWhatIsDone() throws {
        let folder = try Self.inputs(6)
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("out"), summary = folder.appendingPathComponent("s.json")
        var r = try Graphctl.start(Self.batch(folder, ["--jobs", "2", "--summary", summary.path])).wait()
        #expect(r.status == 0, "\(r.stderr)")
        #expect(Self.files(in: out) == (0..<6).map { Self.name($0).replacingOccurrences(of: ".wav", with: ".json") })
        var s = try Self.summary(summary)
        #expect(Self.count(s, "completed") == 6 && Self.count(s, "failed") == 0 && Self.count(s, "skipped") == 0)
        #expect(Self.entries(s).allSatisfy { Self.string($0["status"]) == "completed" && $0["exitCode"] == 0 })
        #expect(Self.entries(s).map { $0["outputs"] } == (0..<6).map { JSONValue.array([.string("\(out.path)/a00\($0).json")]) })

        // The same file `graphctl run` writes for that input, byte for byte.
        let single = folder.appendingPathComponent("single.json").path
        let one = try Graphctl.run("run", Self.waveform, "--set", "src.path=\(folder.path)/in/a003.wav",
                                   "--set", "wave.json=\(single)", "--set", "wave.png=")
        #expect(one.status == 0, "\(one.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: single)) == Data(contentsOf: out.appendingPathComponent("a003.json")))

        // Again: everything is there, nothing runs.
        r = try Graphctl.start(Self.batch(folder, ["--summary", summary.path])).wait()
        #expect(r.status == 0, "\(r.stderr)")
        s = try Self.summary(summary)
        #expect(Self.count(s, "skipped") == 6 && Self.count(s, "completed") == 0)

        // One output gone: that input alone runs. --force runs them all.
        try FileManager.default.removeItem(at: out.appendingPathComponent("a004.json"))
        r = try Graphctl.start(Self.batch(folder, ["--summary", summary.path])).wait()
        s = try Self.summary(summary)
        #expect(r.status == 0 && Self.count(s, "skipped") == 5 && Self.count(s, "completed") == 1, "\(r.stderr)")
        #expect(Self.entries(s).filter { Self.string($0["status"]) == "completed" }.map { Self.string($0["input"]) } == ["\(folder.path)/in/a004.wav"])
        r = try Graphctl.start(Self.batch(folder, ["--summary", summary.path, "--force"])).wait()
        s = try Self.summary(summary)
        #expect(r.status == 0 && Self.count(s, "completed") == 6, "\(r.stderr)")
    }

    /// A batch transcode (graphs/transcode-audio.json, two workers) keeps each source's tags,
    /// cover, chapters and language, as `graphctl run` does (issue 71: metadata through every path).
    @Test(.timeLimit(.minutes(10))) func aBatchTranscodeKeepsEachSourcesTags() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("in")
        try FileManager.default.createDirectory(at: input, withIntermediateDirectories: true)
        for name in ["one.m4a", "two.m4a", "three.m4a"] { _ = try TaggedMedia.m4a(in: input, name: name) }
        for made in ["cover.jpg", "chapters.txt"] { try FileManager.default.removeItem(at: input.appendingPathComponent(made)) }
        let r = try Graphctl.start(["batch", Graphctl.graph("transcode-audio.json"), "--inputs", input.path, "--jobs", "2",
                                    "--map", "src.path={input}", "--map", "file.path=\(folder.path)/out/{stem}.m4a"]).wait()
        #expect(r.status == 0, "\(r.stderr)")
        for stem in ["one", "two", "three"] {
            let p = try TaggedMedia.probe(folder.appendingPathComponent("out/\(stem).m4a").path)
            #expect(p.tags["title"] == TaggedMedia.title && p.tags["artist"] == TaggedMedia.artist && p.tags["album"] == TaggedMedia.album, "\(stem): \(p.tags)")
            #expect(p.tags["date"]?.hasPrefix(TaggedMedia.date) == true, "\(stem): \(p.tags)")
            #expect(p.hasCover && p.language(of: "audio") == "fra", "\(stem): \(p.streams)")
            #expect(p.chapters.map(\.title) == TaggedMedia.chapters.map(\.title), "\(stem): \(p.chapters)")
        }
    }

    /// Ten damaged files among 1,000 inputs: 990 outputs, the ten errors in the summary, each
    /// naming its file and why, exit 70, and no temporary file left anywhere.
    @Test(.timeLimit(.minutes(10))) func damagedInputsAreRecordedAndTheRestComplete() throws {
        let folder = try Self.inputs(990, seconds: 0.1)
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("in")
        let good = try Data(contentsOf: input.appendingPathComponent("a000.wav"))
        let m4a = folder.appendingPathComponent("whole.m4a").path
        try TestMedia.gstLaunch("audiotestsrc num-buffers=40 ! audio/x-raw,rate=44100,channels=1 ! audioconvert ! avenc_aac ! mp4mux faststart=false ! filesink location=\(m4a)")
        let m4aBytes = try Data(contentsOf: URL(fileURLWithPath: m4a))
        var random = SplitMix(seed: 17)
        let noise = Data((0..<4096).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        let damaged: [(String, Data)] = [
            ("d-empty.wav", Data()),
            ("d-text.wav", Data("this is not audio\n".utf8)),
            ("d-header.wav", good.prefix(20)),
            ("d-json.mp3", Data(#"{"version": 1}"#.utf8)),
            ("d-noise.bin", noise),
            ("d-zeros.flac", Data(count: 4096)),
            ("d-unfinished.m4a", m4aBytes.prefix(m4aBytes.count / 2)),
            ("d-html.ogg", Data("<html><body>404</body></html>".utf8)),
            ("d-png.wav", Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 0, count: 64))),
            ("d-cut-data.m4a", m4aBytes.prefix(64)),
        ]
        for (name, bytes) in damaged { try bytes.write(to: input.appendingPathComponent(name)) }
        let out = folder.appendingPathComponent("out"), summary = folder.appendingPathComponent("s.json")
        let r = try Graphctl.start(Self.batch(folder, ["--summary", summary.path])).wait()
        #expect(r.status == 70, "\(r.stderr.suffix(3000))")
        let written = Self.files(in: out)
        #expect(written.count == 990)
        #expect(written.allSatisfy { $0.hasPrefix("a") && $0.hasSuffix(".json") })
        #expect(!written.contains { $0.hasSuffix(".partial") })
        let s = try Self.summary(summary)
        #expect(Self.count(s, "inputs") == 1000 && Self.count(s, "completed") == 990 && Self.count(s, "failed") == 10)
        let failures = Self.entries(s).filter { Self.string($0["status"]) == "failed" }
        #expect(failures.map { Self.string($0["input"]) ?? "" }.sorted() == damaged.map { "\(input.path)/\($0.0)" }.sorted())
        for f in failures {
            let path = Self.string(f["input"]) ?? "?", error = Self.string(f["error"]) ?? ""
            #expect(error.contains(path), "the error names the file: \(error)")
            #expect(error.count > path.count + 20, "and says why: \(error)")
            #expect(f["exitCode"] == 70 || f["exitCode"] == 69 || f["exitCode"] == 66, "\(error)")
            // Printed as it happened, too.
            #expect(r.stderr.contains(error), "\(error)")
        }
    }

    /// The workers run the graph the batch read and checked, sent to them: a graph from a pipe
    /// (which only the batch can read, once) runs every input, and a graph file changed once the
    /// batch has started changes nothing (a worker never reads the file again by its name).
    @Test(.timeLimit(.minutes(10))) func workersRunTheGraphTheBatchRead() throws {
        let folder = try Self.inputs(3)
        defer { try? FileManager.default.removeItem(at: folder) }
        let graphctl = Graphctl.executable.path
        let args = Self.batch(folder, ["--quiet", "--jobs", "2"]).dropFirst(2).map { "'\($0)'" }.joined(separator: " ")
        let piped = try Graphctl.runCommand("/bin/bash", ["-c", "cat '\(Self.waveform)' | '\(graphctl)' batch /dev/stdin \(args)"])
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(Self.files(in: folder.appendingPathComponent("out")) == ["a000.json", "a001.json", "a002.json"])

        // A graph file rewritten under the batch: what ran is what was read first (JSON at 8 bits
        // per value, where the file now says 16).
        let graph = folder.appendingPathComponent("g.json")
        let text = try String(contentsOfFile: Self.waveform, encoding: .utf8)
        try text.replacingOccurrences(of: #""wave": { "type": "analysis.waveform", "params": {"#,
                                      with: #""wave": { "type": "analysis.waveform", "params": { "bits": 8,"#)
            .write(to: graph, atomically: false, encoding: .utf8)
        #expect(try String(contentsOf: graph, encoding: .utf8).contains(#""bits": 8"#), "the graph's wave node changed its shape")
        let slow = try Self.inputs(6, seconds: 2)
        defer { try? FileManager.default.removeItem(at: slow) }
        var arguments = Self.batch(slow, ["--quiet", "--jobs", "1"])
        arguments[1] = graph.path
        let running = try Graphctl.start(arguments)
        // Once the first input's output exists the batch has read its graph, whatever the
        // machine's speed (half a second was not enough under the address sanitizer); five
        // inputs of two seconds each are still to run.
        let first = slow.appendingPathComponent("out/a000.json").path
        while !FileManager.default.fileExists(atPath: first), running.process.isRunning { Thread.sleep(forTimeInterval: 0.01) }
        try text.write(to: graph, atomically: true, encoding: .utf8)  // 16 bits from now on
        let r = running.wait()
        #expect(r.status == 0, "\(r.stderr)")
        for name in Self.files(in: slow.appendingPathComponent("out")) {
            let json = try Self.summary(slow.appendingPathComponent("out/\(name)"))
            #expect(json["bits"] == 8, "\(name)")
        }
    }

    @Test func aBadTemplateFailsTheBatchBeforeAnythingRuns() throws {
        let folder = try Self.inputs(3)
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("out")
        let dir = folder.appendingPathComponent("in").path
        func batch(_ maps: String...) throws -> Graphctl.Result {
            try Graphctl.start(["batch", Self.waveform, "--inputs", dir] + maps.flatMap { ["--map", $0] }).wait()
        }
        var r = try batch("src.path={input}", "wave.json=\(out.path)/{stm}.json", "wave.png=")
        #expect(r.status == 65)
        #expect(r.stderr.contains("--map wave.json=\(out.path)/{stm}.json: unknown placeholder {stm}"), "\(r.stderr)")
        #expect(r.stderr.contains("did you mean {stem}?"), "\(r.stderr)")

        // A value the parameter cannot take, for every input: each named.
        r = try batch("src.path={input}", "wave.json=\(out.path)/{stem}.json", "wave.png=", "wave.width={stem}")
        #expect(r.status == 65)
        for i in 0..<3 {
            #expect(r.stderr.contains("--map wave.width={stem}: for input \"\(dir)/a00\(i).wav\": expected an integer, got \"a00\(i)\""), "\(r.stderr)")
        }
        // An output every input would write.
        r = try batch("src.path={input}", "wave.json=\(out.path)/{stem}.json")
        #expect(r.status == 65)
        #expect(r.stderr.contains("nodes.wave.params.png: wave.png writes \"out/waveform.png\" for every input"), "\(r.stderr)")
        r = try batch("src.path={input}", "wave.json=\(out.path)/all.json", "wave.png=")
        #expect(r.status == 65 && r.stderr.contains("wave.json writes \"\(out.path)/all.json\" for every input"), "\(r.stderr)")
        // Two inputs of one name in two folders: the suggestion is not the template that collided.
        let other = folder.appendingPathComponent("in2")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: "\(dir)/a000.wav", toPath: other.appendingPathComponent("a000.wav").path)
        r = try Graphctl.start(["batch", Self.waveform, "--inputs", dir, "--inputs", other.path, "--map", "src.path={input}",
                                "--map", "wave.json=\(out.path)/{stem}.json", "--map", "wave.png="]).wait()
        #expect(r.status == 65 && r.stderr.contains("such as --map wave.json=out/{dir}/{stem}.json"), "\(r.stderr)")
        try FileManager.default.removeItem(at: other)
        // An output that would overwrite its own input.
        r = try batch("src.path={input}", "wave.json={input}", "wave.png=")
        #expect(r.status == 65 && r.stderr.contains("--map wave.json: for input \"\(dir)/a000.wav\": \"\(dir)/a000.wav\" is also read by --map src.path"),
                "\(r.stderr)")
        // Unknown node, malformed map.
        r = try batch("src.path={input}", "wav.json=\(out.path)/{stem}.json", "wave.png=")
        #expect(r.status == 65 && r.stderr.contains("wav"), "\(r.stderr)")
        r = try batch("src.path={input}", "json", "wave.png=")
        #expect(r.status == 65 && r.stderr.contains("--map json: expected node.param=template"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out.path), "nothing ran")

        // Usage: bad shards, no inputs, no map using the input.
        r = try Graphctl.start(Self.batch(folder, ["--shard", "3/3"])).wait()
        #expect(r.status == 64 && r.stderr.contains("--shard 3/3"), "\(r.stderr)")
        r = try Graphctl.start(Self.batch(folder, ["--jobs", "0"])).wait()
        #expect(r.status == 64, "\(r.stderr)")
        r = try Graphctl.start(["batch", Self.waveform, "--inputs", dir, "--map", "wave.json=\(out.path)/x.json"]).wait()
        #expect(r.status == 64 && r.stderr.contains("No --map uses the input"), "\(r.stderr)")
        r = try Graphctl.start(Self.batch(folder, inputs: "nowhere")).wait()
        #expect(r.status == 66 && r.stderr.contains("nowhere: no such file or folder"), "\(r.stderr)")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("empty"), withIntermediateDirectories: true)
        r = try Graphctl.start(Self.batch(folder, inputs: "empty")).wait()
        #expect(r.status == 66 && r.stderr.contains("no inputs"), "\(r.stderr)")
    }

    /// Every file the batch writes (each input's outputs, the summary) against every file it
    /// reads (every input, the graph file, the manifests), by what the paths lead to: an output
    /// that is another input through a symbolic or a hard link, and a summary that is an input,
    /// a link to one, the graph file, a manifest or an output, are refused before anything runs
    /// (65), naming both. Nothing is written, the inputs stay as they were.
    @Test func aBatchNeverWritesAFileItReads() throws {
        let folder = try Self.inputs(3)
        defer { try? FileManager.default.removeItem(at: folder) }
        let fm = FileManager.default
        let dir = folder.appendingPathComponent("in").path, out = folder.appendingPathComponent("out")
        let graph = folder.appendingPathComponent("waveform.json").path
        try fm.copyItem(atPath: Self.waveform, toPath: graph)
        try fm.createDirectory(at: out, withIntermediateDirectories: false)
        let original = try Data(contentsOf: URL(fileURLWithPath: "\(dir)/a001.wav"))
        func batch(_ extra: [String], inputs: String = dir) throws -> Graphctl.Result {
            try Graphctl.start(["batch", graph, "--inputs", inputs, "--map", "src.path={input}",
                                "--map", "wave.json=\(out.path)/{stem}.json", "--map", "wave.png="] + extra).wait()
        }
        // An output that is another input: through a symbolic link, then a hard link.
        try fm.createSymbolicLink(atPath: out.appendingPathComponent("a000.json").path, withDestinationPath: "\(dir)/a001.wav")
        var r = try batch([])
        #expect(r.status == 65 && r.stderr.contains("--map wave.json: for input \"\(dir)/a000.wav\", wave.json would overwrite the input \"\(dir)/a001.wav\""),
                "\(r.stderr)")
        try fm.removeItem(atPath: out.appendingPathComponent("a000.json").path)
        #expect(link("\(dir)/a001.wav", out.appendingPathComponent("a000.json").path) == 0)
        r = try batch([])
        #expect(r.status == 65 && r.stderr.contains("would overwrite the input \"\(dir)/a001.wav\""), "\(r.stderr)")
        try fm.removeItem(atPath: out.appendingPathComponent("a000.json").path)

        // The summary.
        let manifest = folder.appendingPathComponent("list.txt").path
        try "in/a000.wav\nin/a001.wav\n".write(toFile: manifest, atomically: true, encoding: .utf8)
        let hard = folder.appendingPathComponent("hard.wav").path
        #expect(link("\(dir)/a001.wav", hard) == 0)
        let cases: [(summary: String, problem: String)] = [
            ("\(dir)/a001.wav", "--summary: \"\(dir)/a001.wav\" is also read by the input \"\(dir)/a001.wav\""),
            (hard, "--summary: \"\(hard)\" is, through a link, the file read by the input \"\(dir)/a001.wav\""),
            (graph, "--summary: \"\(graph)\" is also read by the graph file"),
            ("\(out.path)/a002.json", "--summary: \"\(out.path)/a002.json\" is also written by --map wave.json for input \"\(dir)/a002.wav\""),
        ]
        for (summary, problem) in cases {
            r = try batch(["--summary", summary])
            #expect(r.status == 65 && r.stderr.contains(problem), "\(summary): \(r.stderr)")
        }
        r = try batch(["--summary", manifest], inputs: manifest)
        #expect(r.status == 65 && r.stderr.contains("--summary: \"\(manifest)\" is also read by --inputs \(manifest)"), "\(r.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: "\(dir)/a001.wav")) == original)
        #expect(Self.files(in: out) == [], "nothing ran")
    }

    /// Symbolic links planted at an input's outputs do not make it done (it was `skipped`, exit
    /// 0): it runs, and is refused (73) since its outputs' names are links; the files they
    /// name are not touched.
    @Test func linksAtTheOutputsAreNotOutputs() throws {
        let folder = try Self.inputs(2)
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("out"), summary = folder.appendingPathComponent("s.json")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: false)
        let victim = folder.appendingPathComponent("victim").path
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
        try FileManager.default.createSymbolicLink(atPath: out.appendingPathComponent("a000.json").path, withDestinationPath: victim)
        let r = try Graphctl.start(Self.batch(folder, ["--summary", summary.path])).wait()
        #expect(r.status == 70, "\(r.stderr)")
        #expect(r.stderr.contains("cannot write \"\(out.path)/a000.json\": it is a symbolic link"), "\(r.stderr)")
        let s = try Self.summary(summary)
        #expect(Self.count(s, "completed") == 1 && Self.count(s, "failed") == 1 && Self.count(s, "skipped") == 0)
        #expect(Self.entries(s).first { Self.string($0["input"])?.hasSuffix("a000.wav") == true }?["exitCode"] == 73)
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
    }

    /// Success means output: an input whose file holds no media (a WAV with a header and no
    /// samples) fails (70, the input and the cause named), and the summary lists only files that
    /// were written: none for it, where it said `completed` with outputs that did not exist.
    @Test func theSummaryListsOnlyFilesWritten() throws {
        let folder = try Self.inputs(1)
        defer { try? FileManager.default.removeItem(at: folder) }
        let empty = folder.appendingPathComponent("in/empty.wav").path
        try WaveformGraphTests.writeEmptyWAV(empty)
        let out = folder.appendingPathComponent("out"), summary = folder.appendingPathComponent("s.json")
        let r = try Graphctl.start(Self.batch(folder, ["--summary", summary.path])).wait()
        #expect(r.status == 70, "\(r.stderr)")
        #expect(r.stderr.contains("nothing to write: no media reached it from \"\(empty)\""), "\(r.stderr)")
        let s = try Self.summary(summary)
        let entries = Self.entries(s)
        #expect(entries.first { Self.string($0["input"]) == empty }?["outputs"] == .array([]))
        #expect(entries.first { Self.string($0["input"]) == empty }.map { Self.string($0["status"]) } == "failed")
        #expect(entries.first { Self.string($0["input"])?.hasSuffix("a000.wav") == true }?["outputs"] == .array([.string("\(out.path)/a000.json")]))
        #expect(Self.files(in: out) == ["a000.json"])
    }

    /// Names are bytes: a folder's files whose names are not UTF-8 are inputs too (three inputs,
    /// where the batch saw one), shown with their stray bytes escaped, read by their own bytes,
    /// and writing outputs under the escaped name. A manifest's lines may end with CRLF.
    @Test func namesAreBytesAndManifestsTakeCRLF() throws {
        let folder = try Self.inputs(1)
        defer { try? FileManager.default.removeItem(at: folder) }
        let dir = folder.appendingPathComponent("in").path
        for byte in [0xE9, 0xE8] as [UInt8] {
            let name = Array("\(dir)/caf".utf8) + [byte] + Array(".wav".utf8) + [0]
            #expect(name.withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { link("\(dir)/a000.wav", $0.baseAddress!) } } == 0)
        }
        let out = folder.appendingPathComponent("out"), summary = folder.appendingPathComponent("s.json")
        var r = try Graphctl.start(Self.batch(folder, ["--summary", summary.path])).wait()
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("batch: 3 inputs"), "\(r.stderr)")
        #expect(Self.files(in: out) == ["a000.json", "caf\\xE8.json", "caf\\xE9.json"])
        let inputs = Self.entries(try Self.summary(summary)).compactMap { Self.string($0["input"]) }
        #expect(inputs == ["\(dir)/a000.wav", "\(dir)/caf\\xE8.wav", "\(dir)/caf\\xE9.wav"], "\(inputs)")

        let manifest = folder.appendingPathComponent("list.txt").path
        try FileManager.default.copyItem(atPath: "\(dir)/a000.wav", toPath: "\(dir)/b.wav")
        try Data("in/a000.wav\r\nin/b.wav\r\n".utf8).write(to: URL(fileURLWithPath: manifest))
        r = try Graphctl.start(Self.batch(folder, ["--force"], inputs: "list.txt")).wait()
        #expect(r.status == 0 && r.stderr.contains("batch: 2 inputs"), "\(r.stderr)")
        #expect(Self.files(in: out).contains("b.json"))
    }

    /// `--jobs -1` is a usage error that says so (it said "Missing value"); more jobs than the
    /// CPUs this process may use run on that many, with a warning.
    @Test func jobsAreFromOneToTheCPUs() throws {
        let folder = try Self.inputs(3)
        defer { try? FileManager.default.removeItem(at: folder) }
        var r = try Graphctl.start(Self.batch(folder, ["--jobs", "-1"])).wait()
        #expect(r.status == 64, "\(r.stderr)")
        #expect(r.stderr.contains("--jobs must be at least 1 (got -1)"), "\(r.stderr)")
        r = try Graphctl.start(Self.batch(folder, ["--jobs", "100000"])).wait()
        #expect(r.status == 0, "\(r.stderr)")
        let cores = r.stderr.split(separator: "\n").first { $0.hasPrefix("warning: --jobs 100000 is more than the ") }
            .flatMap { Int($0.dropFirst("warning: --jobs 100000 is more than the ".count).prefix { $0.isNumber }) }
        #expect(cores != nil && cores! < 100000, "\(r.stderr)")
        #expect(r.stderr.contains("running 3 on \(min(3, cores ?? 0)) worker"), "\(r.stderr)")
    }

    /// A manifest of three WAVs and a named pipe nobody writes: opening it blocks for ever.
    static func withPipe() throws -> URL {
        let folder = try Self.inputs(3)
        let pipe = folder.appendingPathComponent("in/zz-pipe.wav").path
        #expect(mkfifo(pipe, 0o644) == 0)
        try "a000.wav\na001.wav\n# a comment\n\na002.wav\nzz-pipe.wav\n".write(to: folder.appendingPathComponent("in/list.txt"), atomically: true, encoding: .utf8)
        return folder
    }

    @Test(.timeLimit(.minutes(10))) func aHungInputIsStoppedByTheTimeLimitAndTheBatchGoesOn() throws {
        let folder = try Self.withPipe()
        defer { try? FileManager.default.removeItem(at: folder) }
        let summary = folder.appendingPathComponent("s.json")
        // Behaviour, not wall time: the batch ends (a hang is the suite's time limit), the hung
        // input is timed out by name, and the other inputs ran.
        let r = try Graphctl.start(Self.batch(folder, ["--timeout", "2", "--jobs", "2", "--summary", summary.path], inputs: "in/list.txt")).wait()
        #expect(r.status == 70, "\(r.stderr)")
        #expect(r.stderr.contains("zz-pipe.wav\": did not finish within 2.0 s (--timeout); stopped"), "\(r.stderr)")
        let s = try Self.summary(summary)
        #expect(Self.count(s, "completed") == 3 && Self.count(s, "failed") == 1)
        let hung = try #require(Self.entries(s).first { Self.string($0["status"]) == "timedOut" })
        #expect(Self.string(hung["input"])?.hasSuffix("in/zz-pipe.wav") == true)
        #expect(Self.files(in: folder.appendingPathComponent("out")) == ["a000.json", "a001.json", "a002.json"])
    }

    /// The children of a process, from /proc.
    static func children(of pid: pid_t) -> [pid_t] {
        let all = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return all.compactMap { Int32($0) }.filter { p in
            guard let stat = try? String(contentsOfFile: "/proc/\(p)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return false }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 2 && Int32(fields[1]) == pid
        }
    }

    static func isGone(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return true }
        return stat[stat.index(after: close)...].split(separator: " ").first == "Z"  // a zombie: ended, not yet collected
    }

    /// Whether `pid` has `path` open (a descriptor of its own on it).
    static func hasOpen(_ pid: pid_t, _ path: String) -> Bool {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        return fds.contains { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)")) == path }
    }

    static func waitFor(_ what: String, seconds: Double = 60, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            if Date() > deadline { throw RunningGraphctl.Timeout(description: "\(what) did not happen within \(seconds) s") }
            usleep(10_000)
        }
    }

    @Test(.timeLimit(.minutes(10))) func aWorkerThatCrashesCostsOneInput() throws {
        let folder = try Self.withPipe()
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("out"), summary = folder.appendingPathComponent("s.json")
        let batch = try Graphctl.start(Self.batch(folder, ["--jobs", "1", "--timeout", "60", "--summary", summary.path], inputs: "in/list.txt"))
        // One worker, inputs in order: with the three WAVs done (their outputs under their
        // names, not the hidden .partial of one still running), it goes on to the pipe, where
        // nothing comes (a FIFO with no writer): seen as the worker's descriptor on it.
        try Self.waitFor("the three WAVs' outputs") { Self.files(in: out).filter { !$0.hasPrefix(".") }.count == 3 }
        let pipe = folder.appendingPathComponent("in/zz-pipe.wav").resolvingSymlinksInPath().path
        try Self.waitFor("a worker reading the pipe") { Self.children(of: batch.processIdentifier).contains { Self.hasOpen($0, pipe) } }
        let workers = Self.children(of: batch.processIdentifier)
        #expect(workers.count == 1)
        for w in workers { kill(w, SIGSEGV) }
        let r = batch.wait()
        #expect(r.status == 70, "\(r.stderr)")
        #expect(r.stderr.contains("zz-pipe.wav\": the worker process running it was killed by signal 11 (Segmentation fault)"), "\(r.stderr)")
        let s = try Self.summary(summary)
        let crashed = try #require(Self.entries(s).first { Self.string($0["status"]) == "crashed" })
        #expect(Self.string(crashed["input"])?.hasSuffix("zz-pipe.wav") == true && crashed["exitCode"] == 70)
        #expect(Self.count(s, "completed") == 3)
    }

    /// One SIGINT lets the running input finish and starts no other; a second kills it: 130, the
    /// summary saying which inputs were cancelled, no temporary file left.
    @Test(.timeLimit(.minutes(10))) func interruptsStopThenCancel() throws {
        let folder = try Self.inputs(3)
        defer { try? FileManager.default.removeItem(at: folder) }
        // A pipe nobody writes, sorted before the WAVs: the one worker hangs on it first.
        #expect(mkfifo(folder.appendingPathComponent("in/a-pipe.wav").path, 0o644) == 0)
        try "a-pipe.wav\na000.wav\na001.wav\na002.wav\n".write(to: folder.appendingPathComponent("in/list.txt"), atomically: true, encoding: .utf8)
        let summary = folder.appendingPathComponent("s.json")
        let batch = try Graphctl.start(Self.batch(folder, ["--jobs", "1", "--timeout", "0", "--summary", summary.path], inputs: "in/list.txt"))
        // A worker exists only once its slot has taken the first input.
        try Self.waitFor("a worker") { !Self.children(of: batch.processIdentifier).isEmpty }
        batch.send(SIGINT)
        try batch.wait(until: "the batch says it is stopping") { $0.contains("stopping: no new input starts") }
        batch.send(SIGINT)
        let r = batch.wait()
        #expect(r.status == 130, "\(r.stderr)")
        let s = try Self.summary(summary)
        #expect(Self.count(s, "completed") == 0 && Self.count(s, "cancelled") == 4, "\(r.stderr)")
        #expect(Self.entries(s).allSatisfy { Self.string($0["status"]) == "cancelled" && $0["exitCode"] == 130 })
        #expect(Self.files(in: folder.appendingPathComponent("out")).isEmpty, "nothing written, nothing half-written")
    }

    /// SIGKILL the batch half-way: its workers go too, nothing is left under a final name that
    /// is not complete, and the same command finishes the rest with the same files a batch that
    /// was never killed writes.
    @Test(.timeLimit(.minutes(10))) func aBatchKilledHalfWayResumesToTheSameOutputs() throws {
        let folder = try Self.inputs(40, seconds: 2)
        defer { try? FileManager.default.removeItem(at: folder) }
        // Different inputs, so that a file written for the wrong input would show.
        for i in 0..<40 {
            try TestMedia.gstLaunch("audiotestsrc num-buffers=\(10 + i) freq=\(200 + 20 * i) ! audio/x-raw,rate=8000,channels=1 ! wavenc ! filesink location=\(folder.path)/in/\(Self.name(i))")
        }
        let out = folder.appendingPathComponent("out"), summary = folder.appendingPathComponent("s.json")
        let batch = try Graphctl.start(Self.batch(folder, ["--jobs", "2"]))
        try Self.waitFor("five outputs") { Self.files(in: out).filter { $0.hasSuffix(".json") }.count >= 5 }
        let workers = Self.children(of: batch.processIdentifier)
        batch.send(SIGKILL)
        #expect(batch.wait().status == 9 || batch.wait().status == 137 || batch.process.terminationReason == .uncaughtSignal)
        try Self.waitFor("the workers to end with their batch", seconds: 30) { workers.allSatisfy(Self.isGone) }
        let left = Self.files(in: out).filter { !$0.hasPrefix(".") }
        #expect(left.count < 40, "the batch was killed before the end")
        for name in left {
            #expect((try? JSONParser.parse(String(contentsOf: out.appendingPathComponent(name), encoding: .utf8))) != nil, "\(name) is complete")
        }

        let r = try Graphctl.start(Self.batch(folder, ["--jobs", "2", "--summary", summary.path])).wait()
        #expect(r.status == 0, "\(r.stderr)")
        let s = try Self.summary(summary)
        #expect(Self.count(s, "skipped") == left.count && Self.count(s, "completed") == 40 - left.count)
        #expect(Self.files(in: out) == (0..<40).map { Self.name($0).replacingOccurrences(of: ".wav", with: ".json") }, "no .partial left")

        // The same bytes as a batch never interrupted.
        let again = try Graphctl.start(["batch", Self.waveform, "--inputs", folder.appendingPathComponent("in").path,
                                        "--map", "src.path={input}", "--map", "wave.json=\(folder.path)/fresh/{stem}.json", "--map", "wave.png="]).wait()
        #expect(again.status == 0, "\(again.stderr)")
        for i in 0..<40 {
            let name = Self.name(i).replacingOccurrences(of: ".wav", with: ".json")
            #expect(try Data(contentsOf: out.appendingPathComponent(name)) == Data(contentsOf: folder.appendingPathComponent("fresh/\(name)")), "\(name)")
        }
    }

    @Test func progressIsShownOnATerminalOrWhenAsked() throws {
        let folder = try Self.inputs(4)
        defer { try? FileManager.default.removeItem(at: folder) }
        var r = try Graphctl.start(Self.batch(folder)).wait()
        #expect(r.status == 0 && !r.stderr.contains("\r"), "not a terminal: no progress line\n\(r.stderr)")
        #expect(r.stderr.contains("batch: 4 completed, 0 skipped, 0 failed"), "\(r.stderr)")
        r = try Graphctl.start(Self.batch(folder, ["--force", "--progress", "always", "--jobs", "1"])).wait()
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("[4/4]"), "\(r.stderr)")
        r = try Graphctl.start(Self.batch(folder, ["--force", "--quiet"])).wait()
        #expect(r.status == 0 && r.stderr.isEmpty, "\(r.stderr)")
    }
}
