import Foundation
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport
import Testing

/// A pass-through node may send buffers of its own on its output, such as the tail an effect
/// still holds when its input ends.
@Suite(.media) struct ProcessingHostTests {
    final class Tail: ProcessingNode, @unchecked Sendable {
        static let descriptor = NodeDescriptor(
            type: "test.tail", category: .effect, summary: "passes PCM on, then one buffer of its own",
            inputs: [PortDescriptor("in", .pcm([.s16le]), help: "")], outputs: [PortDescriptor("out", .pcm([.s16le]), help: "")],
            example: #"{ "type": "test.tail" }"#)
        static let bufferFlow = BufferFlow.passThrough
        var host: ProcessingHost?
        var format: MediaFormat?
        var end: MediaTime?
        init(context: NodeContext) throws(GraphError) {}
        func attach(_ host: ProcessingHost) { self.host = host }
        func formatDidChange(to format: MediaFormat) throws(GraphError) { self.format = format }
        func process(_ buffer: inout SampleBuffer) throws(GraphError) -> Bool {
            if let pts = buffer.presentationTime, let d = buffer.duration { end = pts + d }
            return true
        }
        func endOfStream() throws(GraphError) {
            let tail = SampleBuffer(format: format, bytes: [UInt8](repeating: 0x11, count: 64), presentationTime: end,
                                    duration: MediaTime(value: 32, timescale: 44_100))
            try host?.emit(tail)
        }
    }

    @Test(.timeLimit(.minutes(10)))
    func aPassThroughNodeEmitsATailAtTheEnd() throws {
        var registry = NodeRegistry.builtIn
        registry.register(Tail.self)
        let h = try NodeHarness(#"{ "type": "test.tail" }"#, registry: registry)
        let input = TestMedia.pcm(frames: 1024 * 3) { frame, _ in Int16(truncatingIfNeeded: frame) }
        try h.push(input)
        let out = try h.pullAll()
        #expect(out.count == input.count + 1)
        // Compared as flags, not bytes: a failure must not print kilobytes of samples.
        #expect(out.last?.bytes == [UInt8](repeating: 0x11, count: 64), "the last buffer is the tail")
        let passedUnchanged = zip(out, input).allSatisfy { $0.bytes == $1.bytes }
        #expect(passedUnchanged, "the input passed through unchanged, and the tail was not processed again")
        let result = try h.finish()
        #expect(result.report.nodes.first { $0.id == "node" }?.buffersOut == input.count + 1)
    }
}

/// A Swift node's input is held to the formats it declares: a converter before it (decode's)
/// gives it one of them; a format nothing converts fails the run where it enters, naming the
/// node. Before, a node declaring 16-bit PCM sat on a bare identity and took 32-bit floats from
/// a decoder as 16-bit samples: "completed", 7 to 10 dB loud and a third of the length.
@Suite(.media, .timeLimit(.minutes(10))) struct DeclaredInputFormatTests {
    /// Runs `graph` (JSON nodes and edges) to its end; the buffers `drain` received.
    static func run(_ nodes: String, _ edges: String) throws -> (buffers: [SampleBuffer], report: RunReport) {
        let graph = try GraphLoader(registry: Takes<TakesS16>.registry).load(json: #"{ "version": 1, "nodes": { \#(nodes) }, "edges": [ \#(edges) ] }"#)
        let run = try GraphRun(graph)
        try run.start()
        var buffers: [SampleBuffer] = []
        while let b = try run.output("drain").copyNextSampleBuffer() { buffers.append(b) }
        return (buffers, run.wait())
    }

    static func tone(_ path: String, _ arguments: [String]) throws {
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=2",
                                         "-af", "volume=-6dB"] + arguments + [path])
    }

    /// AAC decodes to 32-bit floats; with sampleFormat auto, decode's converter gives the
    /// 16-bit node 16-bit samples: every one of them (2 s), at the source's level. A 16-bit WAV
    /// into a float node: floats, the same values.
    @Test(arguments: [("s16le", "m4a", ["-c:a", "aac"]), ("f32le", "wav", ["-c:a", "pcm_s16le"])])
    func aPCMNodeIsGivenItsSampleFormatByTheDecoder(_ format: String, _ ext: String, _ arguments: [String]) throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("tone.\(ext)").path
        try Self.tone(file, arguments)
        let (buffers, report) = try Self.run("""
            "src": { "type": "source.file", "params": { "path": "\(file)" } }, "dec": { "type": "decode", "params": { "sampleFormat": "auto" } },
            "take": { "type": "test.takes-\(format)" }, "drain": { "type": "sink.app" }
            """, #""src.out -> dec.in", "dec.audio -> take.in", "take.out -> drain.in""#)
        #expect(report.status == .completed, "\(String(describing: report.error))")
        let wanted = try #require(SampleFormat(rawValue: format))
        #expect(buffers.allSatisfy { if case .pcm(let f)? = $0.format { f.sampleFormat == wanted } else { false } })
        var samples: [Float] = []
        for b in buffers {
            if wanted == .s16le { samples += b.withAudioSamples(as: Int16.self) { $0.map { Float($0) / 32768 } } }
            else { samples += b.withAudioSamples(as: Float.self) { Array($0) } }
        }
        #expect(samples.count == 88_200, "\(samples.count) samples for 2 s")
        // ffmpeg's sine is at 1/8 of full scale, -18.1 dB; 6 dB less: -24.1 dB.
        let peak = 20 * log10(Double(samples.map(abs).max() ?? 0)), source = 20 * log10(1.0 / 8) - 6
        #expect(abs(peak - source) < 0.5, "peak \(peak) dB for \(source) dB")
    }

    /// A video node is given frames in its pixel format by decode (which converts to its
    /// pixelFormat). generate.frames converts nothing: a graph in which it gives another is
    /// refused at load, at its pixelFormat. Frames appended by code that nothing converts fail
    /// the run at the node, saying what it takes and what it was given.
    @Test(arguments: PixelFormat.eightBit.sorted { $0.rawValue < $1.rawValue })  // 10 bits: TenBitVideoTests
    func aVideoNodeTakesItsPixelFormatOnly(_ pixels: PixelFormat) throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("clip.mp4").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=160x120:r=10:d=1", "-c:v", "libx264", file])
        let (buffers, report) = try Self.run("""
            "src": { "type": "source.file", "params": { "path": "\(file)" } }, "dec": { "type": "decode", "params": { "pixelFormat": "\(pixels)" } },
            "take": { "type": "test.takes-\(pixels)" }, "drain": { "type": "sink.app" }
            """, #""src.out -> dec.in", "dec.video -> take.in", "take.out -> drain.in""#)
        #expect(report.status == .completed, "\(String(describing: report.error))")
        #expect(buffers.count == 10)
        #expect(buffers.allSatisfy { if case .rawVideo(let v)? = $0.format { v.pixelFormat == pixels && v.width == 160 } else { false } })

        let other = pixels == .bgra ? PixelFormat.i420 : .bgra
        #expect {
            try Self.run("""
                "gen": { "type": "generate.frames", "params": { "width": 64, "height": 48, "frames": 3, "pixelFormat": "\(other)" } },
                "take": { "type": "test.takes-\(pixels)" }, "drain": { "type": "sink.app" }
                """, #""gen.out -> take.in", "take.out -> drain.in""#)
        } throws: { error in
            let e = error as? GraphError
            return e?.code == .invalidGraph && e?.problems.first?.location == "nodes.gen.params.pixelFormat"
        }
        let graph = try GraphLoader(registry: Takes<TakesS16>.registry).load(json: """
            { "version": 1, "nodes": { "feed": { "type": "source.app" }, "take": { "type": "test.takes-\(pixels)" }, "drain": { "type": "sink.app" } },
              "edges": [ "feed.out -> take.in", "take.out -> drain.in" ] }
            """)
        let run = try GraphRun(graph)
        try run.start()
        let frame = MediaFormat.VideoFormat(pixelFormat: other, width: 64, height: 48, frameRate: FrameRate(30))
        let input = try run.input("feed")
        let bytes = other == .bgra ? 64 * 48 * 4 : 64 * 48 * 3 / 2  // one frame of BGRA, of I420
        try? input.appendWaiting(SampleBuffer(format: .rawVideo(frame), byteCount: bytes, presentationTime: .zero))
        input.markAsFinished()
        var none: [SampleBuffer] = []
        while let b = try? run.output("drain").copyNextSampleBuffer() { none.append(b) }
        let refused = run.wait()
        #expect(refused.status == .failed && none.isEmpty)
        #expect(refused.error?.code == .runFailed && refused.error?.node == "take")
        #expect(refused.error?.message == "its input takes video/raw \(pixels.gstName), and was given video/raw \(other.gstName) 64x48 30 fps, "
                + "which nothing before it converts (decode converts to what its sampleFormat, sampleRate, channels and pixelFormat say)",
                "\(String(describing: refused.error))")
        #expect(refused.error?.problems.first?.location == "node \"take\" (test.takes-\(pixels))")
    }

    /// decode mixes channels when its `channels` says so, never to suit a node downstream: six
    /// channels into a node that takes one fail at that node, saying the count (the converter
    /// would have mixed them down unasked); with `channels: 1` the node is given mono.
    @Test func decodeMixesChannelsOnlyWhenTheGraphSaysSo() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let wav = folder.appendingPathComponent("six.wav").path
        try Self.tone(wav, ["-ac", "6", "-c:a", "pcm_s16le"])
        let nodes = """
            "src": { "type": "source.file", "params": { "path": "\(wav)" } }, "dec": { "type": "decode", "params": { PARAMS } },
            "take": { "type": "test.takes-mono" }, "drain": { "type": "sink.app" }
            """, edges = #""src.out -> dec.in", "dec.audio -> take.in", "take.out -> drain.in""#
        let (none, refused) = try Self.run(nodes.replacingOccurrences(of: "PARAMS", with: ""), edges)
        #expect(refused.status == .failed && none.isEmpty)
        #expect(refused.error?.node == "take")
        #expect(refused.error?.message == "\"\(wav)\" has 6 audio channels, and its input \"in\" takes channel counts of 1", "\(String(describing: refused.error))")
        let (mono, report) = try Self.run(nodes.replacingOccurrences(of: "PARAMS", with: #""channels": 1"#), edges)
        #expect(report.status == .completed, "\(String(describing: report.error))")
        #expect(mono.reduce(0) { $0 + $1.byteCount } == 88_200 * 2)
    }

    /// Samples appended in one format to a node that takes another: nothing converts them, and
    /// the run fails at the node (they were read as the other format).
    @Test(arguments: [("s16le", SampleFormat.f32le), ("f32le", .s16le)])
    func appendedPCMOfAnotherFormatFailsAtTheNode(_ node: String, _ appended: SampleFormat) async throws {
        let graph = try GraphLoader(registry: Takes<TakesS16>.registry).load(json: """
            { "version": 1, "nodes": { "feed": { "type": "source.app" }, "take": { "type": "test.takes-\(node)" }, "drain": { "type": "sink.app" } },
              "edges": [ "feed.out -> take.in", "take.out -> drain.in" ] }
            """)
        let run = try GraphRun(graph)
        try run.start()
        let format = MediaFormat.pcm(.init(sampleRate: 8_000, channels: 1, sampleFormat: appended))
        try? run.input("feed").appendImmediately(SampleBuffer(format: format, bytes: [UInt8](repeating: 0, count: 800), presentationTime: .zero))
        try run.input("feed").markAsFinished()
        let report = await run.report()
        #expect(report.status == .failed)
        #expect(report.error?.node == "take")
        #expect(report.error?.message.hasPrefix("its input takes audio/pcm \(node.uppercased()) 1-768000 Hz 1-64 ch, and was given audio/pcm \(appended.gstName) 8000 Hz 1 ch") == true,
                "\(String(describing: report.error))")
    }

    /// Peaks from analysis.waveform reach a node that takes peaks; PCM appended to it does not.
    @Test func aPeaksNodeTakesPeaks() async throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let wav = folder.appendingPathComponent("tone.wav").path
        try Self.tone(wav, ["-c:a", "pcm_s16le"])
        let (buffers, report) = try Self.run("""
            "src": { "type": "source.file", "params": { "path": "\(wav)" } }, "dec": { "type": "decode" },
            "wave": { "type": "analysis.waveform", "params": { "samplesPerPixel": 441 } }, "take": { "type": "test.takes-peaks" },
            "drain": { "type": "sink.app" }
            """, #""src.out -> dec.in", "dec.audio -> wave.in", "wave.out -> take.in", "take.out -> drain.in""#)
        #expect(report.status == .completed, "\(String(describing: report.error))")
        #expect(!buffers.isEmpty && buffers.allSatisfy { if case .peaks(441, 1)? = $0.format { true } else { false } })

        let graph = try GraphLoader(registry: Takes<TakesS16>.registry).load(json: """
            { "version": 1, "nodes": { "feed": { "type": "source.app" }, "take": { "type": "test.takes-peaks" }, "drain": { "type": "sink.app" } },
              "edges": [ "feed.out -> take.in", "take.out -> drain.in" ] }
            """)
        let run = try GraphRun(graph)
        try run.start()
        try? run.input("feed").appendImmediately(TestMedia.sine(sampleRate: 8_000, seconds: 0.1)[0])
        try run.input("feed").markAsFinished()
        let refused = await run.report()
        #expect(refused.status == .failed && refused.error?.node == "take")
        #expect(refused.error?.message.hasPrefix("its input takes peaks, and was given audio/pcm S16LE 8000 Hz 1 ch") == true, "\(String(describing: refused.error))")
    }
}
