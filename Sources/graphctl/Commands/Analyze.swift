import ArgumentParser
import FoundationEssentials
import Glibc
import GraphKit
import Nodes

/// `graphctl analyze FILE`: measures a media file with a graph of its own, one node a
/// measurement (`source.file → decode → analysis.loudness, analysis.silence` for the sound,
/// `analysis.black, analysis.scenes` for the picture, as `graphs/analyze.json`), and prints a
/// table, or with `--json` the nodes' typed results under one object. The thresholds are the
/// nodes' parameters, checked against the ranges the nodes declare before anything runs.
struct Analyze: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure a media file: EBU R128 loudness, silences, black stretches, scene cuts.",
        discussion: """
            Each measurement is a node of a graph (graphs/analyze.json is the same graph): loudness \
            and silence measure the sound, black and scenes the picture; without --only, every one \
            the file's tracks allow. JSON keys (--json): file, and loudness, silence, black, scenes \
            as the nodes write them (docs/GRAPH-FORMAT.md, "Measuring").

            Exit status: 0 measured; 64 a threshold or duration out of its range (the option named), \
            or --only naming an unknown measurement; 66 the file cannot be read; 70 the file has no \
            track for a measurement asked for with --only (the file named: loudness of a file with \
            no sound), or the measurement failed; 130 cancelled.
            """
    )

    enum Measurement: String, CaseIterable, ExpressibleByArgument {
        case loudness, silence, black, scenes
        var needsAudio: Bool { self == .loudness || self == .silence }
    }

    @Argument(help: "The media file.")
    var file: String

    @Flag(help: "Print JSON for machines.")
    var json = false

    @Option(help: "Only these measurements (comma-separated: loudness, silence, black, scenes).",
            transform: { text in
                guard text.contains(where: { $0 != "," }) else {
                    throw NumberArgument.Refusal(description: "--only takes loudness, silence, black or scenes, comma-separated")
                }
                return try text.split(separator: ",").map { name in
                    guard let m = Measurement(rawValue: String(name)) else {
                        throw NumberArgument.Refusal(description: "--only takes loudness, silence, black or scenes, comma-separated")
                    }
                    return m
                }
            })
    var only: [Measurement]?

    @Option(help: "dBFS under which sound is silent (analysis.silence's threshold).",
            transform: NumberArgument.range("--silence-threshold", of: SilenceNode.threshold))
    var silenceThreshold: Double?

    @Option(help: "Seconds: the shortest silence reported.", transform: NumberArgument.range("--silence-duration", of: SilenceNode.minimumDuration))
    var silenceDuration: Double?

    @Option(help: "0 to 1: how far from black to white a black pixel may be (analysis.black's threshold).",
            transform: NumberArgument.range("--black-threshold", of: BlackNode.threshold))
    var blackThreshold: Double?

    @Option(help: "Seconds: the shortest black stretch reported.", transform: NumberArgument.range("--black-duration", of: BlackNode.minimumDuration))
    var blackDuration: Double?

    @Option(help: "0 to 100: the score from which a frame is a cut (analysis.scenes' threshold).",
            transform: NumberArgument.range("--scene-threshold", of: ScenesNode.threshold))
    var sceneThreshold: Double?

    /// What the command prints with --json.
    struct Results: Encodable {
        var file: String
        var loudness: LoudnessMeasurement?
        var silence: SilenceReport?
        var black: BlackReport?
        var scenes: ScenesReport?
    }

    func run() throws {
        bootstrapLogging(verbose: false, quiet: true)
        guard access(file, R_OK) == 0 else {
            throw report(GraphError(.inputUnreadable, "cannot read \"\(file)\": \(String(cString: strerror(errno)).lowercased())"))
        }
        let info: MediaFileInfo
        do {
            info = try MediaFileInfo(path: file)
        } catch {
            throw report(error)
        }
        let hasAudio = info.streams.contains { $0.kind == .audio }, hasVideo = info.streams.contains { $0.kind == .video }
        var measurements = only ?? Measurement.allCases.filter { $0.needsAudio ? hasAudio : hasVideo }
        measurements = Measurement.allCases.filter(measurements.contains)
        if let missing = measurements.first(where: { $0.needsAudio ? !hasAudio : !hasVideo }) {
            throw report(GraphError(.runFailed, "\"\(file)\" has no \(missing.needsAudio ? "audio" : "video") track: \(missing.rawValue) measures its \(missing.needsAudio ? "sound" : "picture")"))
        }
        guard !measurements.isEmpty else {
            throw report(GraphError(.runFailed, "\"\(file)\" has neither an audio nor a video track: nothing to measure"))
        }

        var template = [UInt8]("/tmp/graphctl-analyze-XXXXXX".utf8CString.map { UInt8(bitPattern: $0) })
        guard let made = template.withUnsafeMutableBufferPointer({ p in p.baseAddress!.withMemoryRebound(to: CChar.self, capacity: p.count) { mkdtemp($0) } }) else {
            throw report(GraphError(.outputUnwritable, "cannot make a temporary folder: \(String(cString: strerror(errno)).lowercased())"))
        }
        let folder = String(cString: made)
        defer {
            for name in ["loudness.json", "silence.json", "black.json", "scenes.json"] { unlink(folder + "/" + name) }
            rmdir(folder)
        }
        let graph: Graph
        do {
            graph = try GraphLoader(registry: .builtIn).load(graphDocument(measurements, folder: folder))
        } catch {
            throw report(error)
        }
        let run: GraphRun
        do {
            run = try GraphRun(graph)
        } catch {
            throw report(error)
        }
        let interrupts = InterruptHandler(run: run, quiet: true)
        interrupts.install()
        do {
            try run.start()
        } catch {
            throw report(error)
        }
        let result = run.wait()
        interrupts.uninstall()
        if let error = result.error { throw report(error) }
        if interrupts.stopRequested {
            // A stop finishes the nodes' files with what was read: a measure of part of the file,
            // which must not pass for the file's.
            throw report(GraphError(.cancelled, "the analysis of \"\(file)\" was interrupted: nothing measured is printed"))
        }

        func decoded<T: Decodable>(_ m: Measurement, as type: T.Type) -> T? {
            guard measurements.contains(m) else { return nil }
            let fd = open(folder + "/\(m.rawValue).json", O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { return nil }
            defer { close(fd) }
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while true {
                let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
                if n <= 0 { break }
                bytes += chunk[0..<n]
            }
            return try? JSONDecoder().decode(T.self, from: Data(bytes))
        }
        let results = Results(file: file, loudness: decoded(.loudness, as: LoudnessMeasurement.self),
                              silence: decoded(.silence, as: SilenceReport.self), black: decoded(.black, as: BlackReport.self),
                              scenes: decoded(.scenes, as: ScenesReport.self))
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(results), as: UTF8.self))
        } else {
            print(Self.table(results), terminator: "")
        }
    }

    /// The graph: the file decoded once, each measurement a node writing into `folder`.
    func graphDocument(_ measurements: [Measurement], folder: String) -> JSONValue {
        var nodes: [(String, JSONValue)] = [
            ("src", .object([("type", .string("source.file")), ("params", .object([("path", .string(file))]))])),
            ("dec", .object([("type", .string("decode")), ("params", .object([("sampleFormat", .string("f32le")), ("pixelFormat", .string("i420")),
                                                            // black and scenes only read the pictures: no copy of each.
                                                            ("readOnlyFrames", .bool(true))]))])),
        ]
        var edges: [JSONValue] = [.string("src.out -> dec.in")]
        for m in measurements {
            var params: [(String, JSONValue)] = [("json", .string(folder + "/\(m.rawValue).json"))]
            func add(_ name: String, _ value: Double?) { if let value { params.append((name, .number(value))) } }
            let type: String
            switch m {
            case .loudness: type = "analysis.loudness"
            case .silence: type = "analysis.silence"; add("threshold", silenceThreshold); add("minimumDuration", silenceDuration)
            case .black: type = "analysis.black"; add("threshold", blackThreshold); add("minimumDuration", blackDuration)
            case .scenes: type = "analysis.scenes"; add("threshold", sceneThreshold)
            }
            nodes.append((m.rawValue, .object([("type", .string(type)), ("params", .object(params))])))
            edges.append(.string("dec.\(m.needsAudio ? "audio" : "video") -> \(m.rawValue).in"))
        }
        return .object([("version", 1), ("nodes", .object(nodes)), ("edges", .array(edges))])
    }

    /// The results as a table a person reads: a line a measurement, then its events indented.
    static func table(_ r: Results) -> String {
        func value(_ v: Double?, _ unit: String) -> String { v.map { "\(fixed($0, 1)) \(unit)" } ?? "-inf \(unit)" }
        func span(_ start: Double, _ end: Double) -> String { "    \(fixed(start, 3)) – \(fixed(end, 3)) s (\(fixed(end - start, 3)) s)\n" }
        var out = "file       \(TerminalText.escaped(r.file))\n"
        if let l = r.loudness {
            out += "loudness   integrated \(value(l.integratedLUFS, "LUFS")), range \(fixed(l.loudnessRangeLU, 1)) LU, "
                + "true peak \(value(l.truePeakDBTP, "dBTP")), sample peak \(value(l.samplePeakDBFS, "dBFS"))\n"
        }
        if let s = r.silence {
            out += "silence    \(s.silences.count) (under \(fixed(s.thresholdDB, 1)) dBFS for \(fixed(s.minimumDuration, 3)) s or more)\n"
            for e in s.silences { out += span(e.start, e.end) }
        }
        if let b = r.black {
            out += "black      \(b.blacks.count) (luma within \(fixed(b.threshold, 2)) of black for \(fixed(b.minimumDuration, 3)) s or more)\n"
            for e in b.blacks { out += span(e.start, e.end) }
        }
        if let s = r.scenes {
            out += "scenes     \(s.cuts.count) cuts (score \(fixed(s.threshold, 1)) or more)\n"
            for c in s.cuts { out += "    \(fixed(c.time, 3)) s (score \(fixed(c.score, 1)))\n" }
        }
        return out
    }
}
