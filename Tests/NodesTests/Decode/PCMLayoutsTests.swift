import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

/// Every PCM sample format and container GStreamer reads decodes to the samples ffmpeg decodes
/// from the same file: the same count, channel for channel, within the format's precision. Each
/// channel carries its own tone at nearly full scale, so a swapped channel, a wrong sign, byte
/// order or offset shows. The files are made by ffmpeg at test time, with a sample count that is
/// odd (an odd-length data chunk for 8-bit and 24-bit mono).
@Suite(.media) struct PCMLayoutsTests {
    struct Case: Sendable, CustomStringConvertible {
        let file: String
        let codec: String
        var muxer: [String] = []
        var channels = 1
        var description: String { "\(file) \(codec) \(channels) ch" }
    }

    static let cases: [Case] = [
        // WAV: little-endian, 8-bit unsigned.
        Case(file: "u8.wav", codec: "pcm_u8"), Case(file: "s16.wav", codec: "pcm_s16le", channels: 2),
        Case(file: "s24.wav", codec: "pcm_s24le"), Case(file: "s32.wav", codec: "pcm_s32le", channels: 2),
        Case(file: "f32.wav", codec: "pcm_f32le"), Case(file: "f64.wav", codec: "pcm_f64le", channels: 2),
        // WAVE_FORMAT_EXTENSIBLE with a 5.1 channel mask, and 7.1.
        Case(file: "s16-51.wav", codec: "pcm_s16le", channels: 6), Case(file: "s24-71.wav", codec: "pcm_s24le", channels: 8),
        // AIFF: big-endian, 8-bit signed; AIFF-C for floats and little-endian (sowt).
        Case(file: "s8.aiff", codec: "pcm_s8"), Case(file: "s16be.aiff", codec: "pcm_s16be", channels: 2),
        Case(file: "s24be.aiff", codec: "pcm_s24be"), Case(file: "s32be.aiff", codec: "pcm_s32be", channels: 2),
        Case(file: "f32be.aiff", codec: "pcm_f32be"), Case(file: "f64be.aiff", codec: "pcm_f64be"),
        Case(file: "s16le.aifc", codec: "pcm_s16le", muxer: ["-f", "aiff"], channels: 2),
        Case(file: "s16be-51.aiff", codec: "pcm_s16be", channels: 6),
        // RF64, the 64-bit WAV (Wave64 is refused: see below).
        Case(file: "s16.rf64.wav", codec: "pcm_s16le", muxer: ["-rf64", "always"], channels: 2),
        Case(file: "s24.rf64.wav", codec: "pcm_s24le", muxer: ["-rf64", "always"]),
        Case(file: "f32.rf64.wav", codec: "pcm_f32le", muxer: ["-rf64", "always"]),
    ]

    static let frames = 8_001

    /// One tone per channel (220 Hz apart), at 0.9 of full scale.
    static func make(_ c: Case, in folder: URL) throws -> String {
        let path = folder.appendingPathComponent(c.file).path
        let tones = (0..<c.channels).map { "sin(2*PI*\(440 + 220 * $0)*t)*0.9" }.joined(separator: "|")
        let layout = [1: "mono", 2: "stereo", 6: "5.1", 8: "7.1"][c.channels]!
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "aevalsrc=\(tones):s=48000:c=\(layout)",
                                             "-af", "atrim=end_sample=\(frames)", "-c:a", c.codec] + c.muxer + [path])
        return path
    }

    static func ffmpegSamples(_ path: String) throws -> [Float] {
        let raw = path + ".f32"
        defer { try? FileManager.default.removeItem(atPath: raw) }
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-i", path, "-f", "f32le", raw])
        return try Data(contentsOf: URL(fileURLWithPath: raw)).withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    static func graphKitSamples(_ path: String) throws -> (samples: [Float], format: MediaFormat?) {
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(path)" } },
              "dec": { "type": "decode", "params": { "sampleFormat": "f32le" } }, "out": { "type": "sink.app" } },
              "edges": [ "src.out -> dec.in", "dec.audio -> out.in" ] }
            """)
        let run = try GraphRun(graph)
        try run.start()
        var samples: [Float] = []
        var format: MediaFormat?
        while let b = try run.output("out").copyNextSampleBuffer() {
            format = b.format
            samples += b.withAudioSamples(as: Float.self) { Array($0) }
        }
        let report = run.wait()
        #expect(report.status == .completed, "\(path): \(report.error?.description ?? "")")
        return (samples, format)
    }

    @Test(arguments: cases)
    func decodesAsFFmpegDoes(_ c: Case) throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try Self.make(c, in: folder)
        let expected = try Self.ffmpegSamples(path)
        let (got, format) = try Self.graphKitSamples(path)
        #expect(format == .pcm(.init(sampleRate: 48_000, channels: c.channels, sampleFormat: .f32le)), "\(c)")
        #expect(expected.count == Self.frames * c.channels)
        #expect(got.count == expected.count, "\(c): \(got.count / c.channels) frames, ffmpeg \(expected.count / c.channels)")
        // The same value per sample and channel: 8-bit formats are exact in float, and so is
        // everything up to 24 bits; 32-bit integers and doubles round to float the same way.
        var worst: Float = 0
        for (a, b) in zip(got, expected) { worst = max(worst, abs(a - b)) }
        #expect(worst <= 1e-6, "\(c): largest difference \(worst)")
        // Each channel is its own tone at 0.9 of full scale, so the comparison above could not
        // pass on silence.
        let peak = got.prefix(c.channels * 2000).map(abs).max() ?? 0
        #expect(peak > 0.85, "\(c): peak \(peak)")
    }

    /// GStreamer 1.22 reads Sony Wave64 only through libsndfile (sfdec), which gave float files
    /// at 0.56 for 0.9, padded counts, 16-bit samples and, once in a few runs, a stall: the file
    /// is refused before the run, naming it and the conversion that works (exit 69).
    @Test func wave64IsRefusedWithTheWayOut() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try Self.make(Case(file: "f32.w64", codec: "pcm_f32le", muxer: ["-f", "w64"]), in: folder)
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(path)" } },
              "dec": { "type": "decode" }, "out": { "type": "sink.app" } },
              "edges": [ "src.out -> dec.in", "dec.audio -> out.in" ] }
            """)
        let run = try GraphRun(graph)
        do {
            try run.start()
            Issue.record("a Wave64 file started a run")
        } catch {
            #expect(error.code == .missingPlugin)
            #expect(error.description.contains("\"\(path)\" is a Sony Wave64 file"), "\(error)")
        }
    }

    /// GStreamer 1.22 has no demuxer for Apple's CAF: the run fails naming the file and the
    /// format, and writes nothing; it never succeeds with nothing.
    @Test func cafIsRefusedByName() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try Self.make(Case(file: "s16.caf", codec: "pcm_s16le"), in: folder)
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(path)" } },
              "dec": { "type": "decode" }, "out": { "type": "sink.app" } },
              "edges": [ "src.out -> dec.in", "dec.audio -> out.in" ] }
            """)
        let run = try GraphRun(graph)
        try run.start()
        while try run.output("out").copyNextSampleBuffer() != nil {}
        let report = run.wait()
        #expect(report.status == .failed)
        let message = report.error?.description ?? ""
        #expect(message.contains("Core Audio Format") && message.contains(path), "\(message)")
    }
}
