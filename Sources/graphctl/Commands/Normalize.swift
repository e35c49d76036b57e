import ArgumentParser
import Dispatch
import FoundationEssentials
import Glibc
import GraphKit
import Nodes

/// `graphctl normalize IN OUT`: loudness normalization of a file's sound, one graph
/// (`source.file → decode → effect.normalize → encoder → sink`, the encoder and sink by OUT's
/// extension), printing the loudness measured before and after. A signal cancels: nothing is
/// left at OUT, and an earlier file there stays as it was.
struct Normalize: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Normalize a file's loudness (EBU R128) to a target in LUFS under a true-peak ceiling.",
        discussion: """
            Two passes by default: the sound is measured whole, then one gain is applied, with a \
            true-peak limiter only where that gain would pass the ceiling (effect.normalize, \
            docs/GRAPH-FORMAT.md). OUT's extension gives its kind: .m4a or .mp4 (AAC, gapless by its \
            edit list), .opus or .ogg (Opus in Ogg), .flac (FLAC, lossless), .mka (FLAC in Matroska), \
            .wav (32-bit float WAV, the normalized samples as they are). Presets: ebu \
            (-23 LUFS), podcast (-16), streaming (-14); --target overrides the preset's.

            Exit status: 0 normalized; 64 an option out of its range (named) or an extension that is \
            not one of these; 65 OUT is IN; 66 IN cannot be read; 70 IN has no sound, or the run \
            failed; 73 OUT cannot be written; 130 cancelled (Ctrl-C: nothing is left at OUT).
            """
    )

    enum Preset: String, CaseIterable, ExpressibleByArgument {
        case ebu, podcast, streaming
        var target: Double { self == .ebu ? -23 : self == .podcast ? -16 : -14 }
    }

    @Argument(help: "The media file whose sound is normalized.")
    var input: String

    @Argument(help: "The file to write: .m4a, .mp4, .opus, .ogg, .flac, .mka or .wav.")
    var output: String

    /// --target (over the preset's) and --true-peak.
    @OptionGroup var loudness: LoudnessOptions
    var target: Double? { loudness.target }
    var truePeak: Double? { loudness.truePeak }

    @Option(help: "ebu (-23 LUFS), podcast (-16) or streaming (-14).")
    var preset: Preset?

    @Flag(help: "One pass (effect.normalize's live mode) instead of two.")
    var live = false

    @Flag(help: "Print JSON for machines: file, output, and effect.normalize's report.")
    var json = false

    /// The encoder (none: the samples as they are) and sink for OUT's extension.
    static func encoding(of path: String) -> (encoder: String?, sink: String)? {
        switch path.split(separator: "/").last?.split(separator: ".").dropFirst().last?.lowercased() {
        case "m4a"?, "mp4"?: return ("encode.aac", "sink.mp4")
        case "opus"?, "ogg"?: return ("encode.opus", "sink.ogg")
        case "flac"?: return ("encode.flac", "sink.flac")
        case "mka"?: return ("encode.flac", "sink.mkv")
        case "wav"?: return (nil, "sink.wav")
        default: return nil
        }
    }

    struct Results: Encodable {
        var file: String
        var output: String
        var report: NormalizationReport
    }

    func run() throws {
        bootstrapLogging(verbose: false, quiet: true)
        guard let encoding = Self.encoding(of: output) else {
            throw report(GraphError(.usage, at: "OUT", "\"\(output)\" does not end in .m4a, .mp4, .opus, .ogg, .flac, .mka or .wav: its extension gives the encoding"))
        }
        do { try InputPath.checkOutput(output, option: "OUT") } catch { throw report(error) }
        guard access(input, R_OK) == 0 else {
            throw report(GraphError(.inputUnreadable, "cannot read \"\(input)\": \(String(cString: strerror(errno)).lowercased())"))
        }
        do throws(GraphError) {
            guard try MediaFileInfo(path: input).streams.contains(where: { $0.kind == .audio }) else {
                throw GraphError(.runFailed, "\"\(input)\" has no audio track: there is no sound to normalize")
            }
        } catch {
            throw report(error)
        }
        let run: GraphRun
        do {
            run = try GraphRun(try GraphLoader(registry: .builtIn).load(graphDocument(encoding)))
        } catch {
            throw report(inCommandTerms(error))
        }
        // One signal cancels: a normalization cut short is not the file's, so nothing is kept.
        let signals = InterruptSignals.shared
        signals.handle { [run] _ in
            run.cancel()
            signals.queue.asyncAfter(deadline: .now() + .seconds(1)) { InterruptSignals.exitNow(saying: nil) }
        }
        defer { signals.stopHandling() }
        do { try run.start() } catch { throw report(inCommandTerms(error)) }
        let result = run.wait()
        if signals.received > 0 {
            throw report(GraphError(.cancelled, "the normalization of \"\(input)\" was cancelled: nothing was written to \"\(output)\""))
        }
        if let error = result.error { throw report(error) }
        guard let normalized = (run.node("norm") as? NormalizeNode)?.report else {
            throw report(GraphError(.runFailed, "\"\(input)\" gave no sound to normalize"))
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(Results(file: input, output: output, report: normalized)), as: UTF8.self))
        } else {
            print(Self.table(normalized), terminator: "")
        }
    }

    /// The graph is the command's own: an output that is the input is said in the command's terms.
    func inCommandTerms(_ error: GraphError) -> GraphError {
        guard error.code == .invalidGraph, error.problems.contains(where: { $0.location == "nodes.out.params.path" }) else { return error }
        return GraphError(.invalidGraph, at: "OUT", "\"\(output)\" is the file being normalized (IN): write the result to another file")
    }

    /// `source.file → decode (float) → effect.normalize → encoder → sink` (no encoder for WAV).
    func graphDocument(_ encoding: (encoder: String?, sink: String)) -> JSONValue {
        var params: [(String, JSONValue)] = [("mode", .string(live ? "live" : "two-pass"))]
        if let target = target ?? preset?.target { params.append(("target", .number(target))) }
        if let truePeak { params.append(("truePeak", .number(truePeak))) }
        func node(_ type: String, _ params: [(String, JSONValue)] = []) -> JSONValue {
            .object([("type", .string(type)), ("params", .object(params))])
        }
        var nodes: [(String, JSONValue)] = [
            ("src", node("source.file", [("path", .string(input))])),
            ("dec", node("decode", [("sampleFormat", .string("f32le"))])),
            ("norm", node("effect.normalize", params)),
            ("out", node(encoding.sink, [("path", .string(output))])),
        ]
        var edges: [JSONValue] = ["src.out -> dec.in", "dec.audio -> norm.in"]
        if let encoder = encoding.encoder {
            nodes.append(("enc", node(encoder)))
            edges += ["norm.out -> enc.in", "enc.out -> out.audio"]
        } else {
            edges.append("norm.out -> out.audio")
        }
        return .object([("version", 1), ("nodes", .object(nodes)), ("edges", .array(edges))])
    }

    /// Before and after, a line each, then the gain and the limiter's share.
    static func table(_ r: NormalizationReport) -> String {
        func value(_ v: Double?, _ unit: String) -> String { v.map { "\(fixed($0, 1)) \(unit)" } ?? "-inf \(unit)" }
        func line(_ name: String, _ m: LoudnessMeasurement) -> String {
            "\(name) integrated \(value(m.integratedLUFS, "LUFS")), range \(fixed(m.loudnessRangeLU, 1)) LU, true peak \(value(m.truePeakDBTP, "dBTP"))\n"
        }
        return line("before    ", r.input) + line("after     ", r.output)
            + "gain       \(fixed(r.gainDB, 2)) dB (\(r.mode), target \(fixed(r.targetLUFS, 1)) LUFS, ceiling \(fixed(r.truePeakCeilingDBTP, 1)) dBTP), "
            + "limited \(fixed(r.limitedSeconds, 3)) s\n"
    }
}
