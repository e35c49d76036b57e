import Foundation
import GraphKit
import GraphKitTesting
import Nodes
import Testing
import TestSupport

/// `effect.mix` on files made here: the mix is the inputs' sum, sample for sample; as long as
/// the longest; inputs of another rate and channel count are converted to the mix's.
@Suite(.media, .timeLimit(.minutes(10))) struct AudioMixNodeTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    /// A sine of `frequency` at a fifth of full scale, 16-bit, `seconds` long.
    func sine(_ name: String, frequency: Int, seconds: Double, rate: Int = 48_000, channels: Int = 1) throws -> String {
        let path = folder.appendingPathComponent(name).path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=frequency=\(frequency):sample_rate=\(rate):duration=\(seconds)",
                                         "-af", "volume=0.4", "-ac", "\(channels)", "-c:a", "pcm_s16le", "-y", path])
        return path
    }

    /// Runs `json`, pulling sink.app "out"; the samples and the run's status.
    func run(_ json: String) throws -> ([Int16], RunStatus) {
        let run = try GraphRun(try GraphLoader(registry: .builtIn).load(json: json))
        try run.start()
        var samples: [Int16] = []
        while let b = try run.output("out").copyNextSampleBuffer() { samples += b.withAudioSamples(as: Int16.self) { Array($0) } }
        return (samples, run.wait().status)
    }

    func decode(_ path: String) throws -> [Int16] {
        try run("""
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(path)" } },
              "dec": { "type": "decode", "params": { "sampleFormat": "s16le" } }, "out": { "type": "sink.app" } },
              "edges": [ "src.out -> dec.in", "dec.audio -> out.in" ] }
            """).0
    }

    func mix(_ paths: [String], ports: [String]) throws -> ([Int16], RunStatus) {
        var nodes = #""mix": { "type": "effect.mix", "params": { "channels": 1 } }, "out": { "type": "sink.app" }"#
        var edges = [#""mix.out -> out.in""#]
        for (i, (path, port)) in zip(paths, ports).enumerated() {
            nodes += #", "src\#(i)": { "type": "source.file", "params": { "path": "\#(path)" } }, "dec\#(i)": { "type": "decode", "params": { "sampleFormat": "s16le", "sampleRate": 48000, "channels": 1 } }"#
            edges += [#""src\#(i).out -> dec\#(i).in""#, #""dec\#(i).audio -> mix.\#(port)""#]
        }
        return try run(#"{ "version": 1, "nodes": { \#(nodes) }, "edges": [ \#(edges.joined(separator: ", ")) ] }"#)
    }

    /// Two tones of different lengths, at in0 and in5: every sample of the mix is the sum of
    /// theirs, and after the shorter ends, the longer's alone.
    @Test func theMixIsTheSumAsLongAsTheLongest() throws {
        let long = try sine("a.wav", frequency: 440, seconds: 1), short = try sine("b.wav", frequency: 1000, seconds: 0.5)
        let a = try decode(long), b = try decode(short)
        #expect(a.count == 48_000 && b.count == 24_000)
        let (mixed, status) = try mix([long, short], ports: ["in0", "in5"])
        #expect(status == .completed)
        #expect(mixed.count == a.count)
        let expected = a.indices.map { Int16(Int(a[$0]) + (($0 < b.count) ? Int(b[$0]) : 0)) }
        let wrong = mixed.indices.filter { mixed[$0] != expected[$0] }
        #expect(wrong.isEmpty, "\(wrong.count) samples differ, the first at \(wrong.first ?? -1)")
    }

    /// Inputs of other rates and channel counts are converted to the mix's format, which the
    /// parameters set, whichever input's format comes first: the output is that format, as long
    /// as the longest input.
    @Test(arguments: [("in0", "in1"), ("in1", "in0")])
    func otherFormatsAreConvertedToTheMixs(ports: (String, String)) throws {
        let mono = try sine("a.wav", frequency: 440, seconds: 0.5), stereo = try sine("b.wav", frequency: 1000, seconds: 1, rate: 44_100, channels: 2)
        let run = try GraphRun(try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "a": { "type": "source.file", "params": { "path": "\(mono)" } }, "da": { "type": "decode" },
              "b": { "type": "source.file", "params": { "path": "\(stereo)" } }, "db": { "type": "decode" },
              "mix": { "type": "effect.mix", "params": { "sampleRate": 32000, "channels": 1, "sampleFormat": "f32le" } }, "out": { "type": "sink.app" } },
              "edges": [ "a.out -> da.in", "b.out -> db.in", "da.audio -> mix.\(ports.0)", "db.audio -> mix.\(ports.1)", "mix.out -> out.in" ] }
            """))
        try run.start()
        var formats: Set<MediaFormat> = [], frames = 0
        while let b = try run.output("out").copyNextSampleBuffer() {
            if let f = b.format { formats.insert(f) }
            frames += b.frameCount
        }
        let report = run.wait()
        #expect(report.status == .completed, "\(String(describing: report.error))")
        #expect(formats == [.pcm(.init(sampleRate: 32_000, channels: 1, sampleFormat: .f32le))])
        #expect(abs(frames - 32_000) <= 32, "\(frames) frames")
    }

    /// One input alone passes as it is.
    @Test func oneInputPassesUnchanged() throws {
        let tone = try sine("a.wav", frequency: 440, seconds: 0.3)
        let (mixed, status) = try mix([tone], ports: ["in3"])
        #expect(status == .completed)
        #expect(mixed == (try decode(tone)))
    }

    /// A graph with the mixer but nothing connected to it is refused by name, as a muxer is.
    @Test func aMixWithNoInputIsRefused() throws {
        #expect(throws: GraphError.self) {
            _ = try GraphLoader(registry: .builtIn).load(json: """
                { "version": 1, "nodes": { "mix": { "type": "effect.mix" }, "out": { "type": "sink.app" } }, "edges": [ "mix.out -> out.in" ] }
                """)
        }
    }
}
