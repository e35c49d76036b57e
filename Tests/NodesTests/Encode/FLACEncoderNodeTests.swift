import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

@Suite(.media) struct FLACEncoderNodeTests {
    /// Encodes `buffers` with encode.flac and writes what comes out, buffer after buffer, to
    /// `path`: the stream's header then its frames, a native .flac file.
    static func encode(_ buffers: [SampleBuffer], params: String = "", to path: String) throws -> [SampleBuffer] {
        let h = try NodeHarness(#"{ "type": "encode.flac", "params": { \#(params) } }"#)
        try h.push(buffers)
        let out = try h.pullAll()
        var bytes: [UInt8] = []
        for buffer in out { bytes += buffer.bytes }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return out
    }

    /// Lossless and exact: every sample decodes to the input's, bit for bit, and the count is
    /// the input's (an odd one, not a whole block). Each channel carries its own values, so a
    /// swapped channel shows.
    @Test(.timeLimit(.minutes(10)), arguments: [1, 2, 6])
    func decodesBitExactWithTheInputsSampleCount(channels: Int) throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("out.flac").path
        let frames = 44_100 + 777
        var seed: UInt32 = 12345
        let input = TestMedia.pcm(sampleRate: 44_100, channels: channels, frames: frames) { f, c in
            seed = seed &* 1_103_515_245 &+ 12345
            let noise = Double(Int(seed >> 16) % 2001 - 1000)
            return Int16(clamping: Int(12_000 * sin(2 * Double.pi * Double(300 + 200 * c) * Double(f) / 44_100) + noise))
        }
        let out = try Self.encode(input, params: #""compressionLevel": 8"#, to: path)
        #expect(out.first?.format == .audio(.flac, sampleRate: 44_100, channels: channels))
        let facts = try EncodedMediaChecks.probe(path, "a")
        #expect(facts["codec_name"] == "flac" && facts["sample_rate"] == "44100" && facts["channels"] == "\(channels)", "\(facts)")
        let decoded = try EncodedMediaChecks.decode(path, channels: channels)
        let samples = input.flatMap { $0.bytes.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) } }
        #expect(decoded.count == frames * channels, "\(decoded.count / channels) frames for \(frames)")
        #expect(decoded == samples)
    }

    /// Float in: coded in 24 bits (FLAC has no float), so nothing is lost that 24 bits hold;
    /// ffprobe says 24 bits, and a per-channel tone check shows each channel kept its own.
    @Test(.timeLimit(.minutes(10)))
    func floatInputIsCodedIn24BitsEachChannelItsOwn() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("out.flac").path
        // Float PCM made here: 440 Hz left, 1000 Hz right, at half of full scale.
        let format = MediaFormat.pcm(.init(sampleRate: 48_000, channels: 2, sampleFormat: .f32le))
        let pcm = stride(from: 0, to: 48_000, by: 4800).map { start in
            var samples: [Float] = []
            for f in start..<(start + 4800) {
                for tone in [440.0, 1000.0] { samples.append(Float(0.5 * sin(2 * Double.pi * tone * Double(f) / 48_000))) }
            }
            return SampleBuffer(format: format, bytes: samples.withUnsafeBytes { Array($0) },
                                presentationTime: MediaTime(value: Int64(start), timescale: 48_000), duration: MediaTime(value: 4800, timescale: 48_000))
        }
        _ = try Self.encode(pcm, to: path)
        let facts = try EncodedMediaChecks.probe(path, "a")
        #expect(facts["bits_per_raw_sample"] == "24", "\(facts)")
        let decoded = try EncodedMediaChecks.decode(path, channels: 2)
        #expect(decoded.count == 48_000 * 2)
        for (channel, tone, other) in [(0, 440.0, 1000.0), (1, 1000.0, 440.0)] {
            let own = EncodedMediaChecks.power(decoded, channel: channel, of: 2, at: tone, sampleRate: 48_000)
            let leak = EncodedMediaChecks.power(decoded, channel: channel, of: 2, at: other, sampleRate: 48_000)
            #expect(abs(own - -6) < 0.5, "channel \(channel): \(own) dB")
            #expect(leak < own - 60, "channel \(channel): \(leak) dB at \(other) Hz")
        }
    }

    @Test func parametersOutOfRangeAreRefusedAtTheirPath() {
        #expect(EncodedMediaChecks.problems(#"{ "version": 1, "nodes": { "flac": { "type": "encode.flac", "params": { "compressionLevel": 9 } } } }"#)
                    .contains("nodes.flac.params.compressionLevel: 9 is out of range (0 to 8)"))
        #expect(EncodedMediaChecks.problems(#"{ "version": 1, "nodes": { "flac": { "type": "encode.flac", "params": { "bitDepth": 20 } } } }"#)
                    .contains { $0.hasPrefix("nodes.flac.params.bitDepth: 20 ") })
    }
}
