import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

@Suite(.media) struct ALACEncoderNodeTests {
    /// In M4A: ffprobe names ALAC; the decoded samples are the input's, bit for bit, and as
    /// many (an odd count: the last frame is short, and the edit list ends where the input does).
    @Test(.timeLimit(.minutes(10)), arguments: [1, 2])
    func decodesBitExactWithTheInputsSampleCount(channels: Int) throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let wav = folder.appendingPathComponent("noise.wav").path, m4a = folder.appendingPathComponent("noise.m4a").path
        let count = 44_100 + 4_321
        try EncodedMediaChecks.writeNoise(wav, channels: channels, sampleRate: 44_100, samples: count)
        let report = try EncodedMediaChecks.encode(wav, with: "encode.alac", path: m4a)
        try #require(report.status == .completed, "\(report.error?.description ?? "")")
        let facts = try EncodedMediaChecks.probe(m4a, "a")
        #expect(facts["codec_name"] == "alac" && facts["sample_rate"] == "44100" && facts["channels"] == "\(channels)", "\(facts)")
        let input = try EncodedMediaChecks.decode(wav, channels: channels), decoded = try EncodedMediaChecks.decode(m4a, channels: channels)
        #expect(input.count == count * channels)
        #expect(decoded.count == input.count, "\(decoded.count / channels) frames for \(count)")
        #expect(decoded == input)
    }

    /// Each channel keeps its own tone (left 440 Hz, right 1000 Hz).
    @Test(.timeLimit(.minutes(10)))
    func eachChannelKeepsItsTone() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let wav = folder.appendingPathComponent("tones.wav").path, m4a = folder.appendingPathComponent("tones.m4a").path
        try EncodedMediaChecks.writeTones(wav, frequencies: [440, 1000], sampleRate: 48_000, seconds: 1)
        let report = try EncodedMediaChecks.encode(wav, with: "encode.alac", path: m4a)
        try #require(report.status == .completed, "\(report.error?.description ?? "")")
        let decoded = try EncodedMediaChecks.decode(m4a, channels: 2)
        for (channel, tone, other) in [(0, 440.0, 1000.0), (1, 1000.0, 440.0)] {
            let own = EncodedMediaChecks.power(decoded, channel: channel, of: 2, at: tone, sampleRate: 48_000)
            let leak = EncodedMediaChecks.power(decoded, channel: channel, of: 2, at: other, sampleRate: 48_000)
            #expect(abs(own - -6) < 0.5, "channel \(channel): \(own) dB")
            #expect(leak < own - 60, "channel \(channel): \(leak) dB at \(other) Hz")
        }
    }

    /// 5.1 in: gst-libav's ALAC encoder takes mono and stereo. The run fails naming the node
    /// and how to mix down, and writes nothing.
    @Test(.timeLimit(.minutes(10)))
    func moreChannelsThanTheEncoderTakesFailNamingTheNode() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let wav = folder.appendingPathComponent("six.wav").path, m4a = folder.appendingPathComponent("six.m4a").path
        try EncodedMediaChecks.writeTones(wav, frequencies: Array(repeating: 440, count: 6), sampleRate: 48_000, seconds: 0.5)
        let report = try EncodedMediaChecks.encode(wav, with: "encode.alac", path: m4a)
        #expect(report.status == .failed)
        let message = report.error?.description ?? ""
        #expect(message.contains(#"node "enc" (encode.alac"#) && message.contains("6-channel audio cannot be encoded: avenc_alac takes 1 to 2 channels"),
                "\(message)")
        #expect(!FileManager.default.fileExists(atPath: m4a))
    }

    @Test func parametersOutOfRangeAreRefusedAtTheirPath() {
        #expect(EncodedMediaChecks.problems(#"{ "version": 1, "nodes": { "alac": { "type": "encode.alac", "params": { "channels": 3 } } } }"#)
                    .contains("nodes.alac.params.channels: 3 is out of range (1 to 2)"))
        #expect(EncodedMediaChecks.problems(#"{ "version": 1, "nodes": { "alac": { "type": "encode.alac", "params": { "sampleRate": 192000 } } } }"#)
                    .contains("nodes.alac.params.sampleRate: 192000 is out of range (4000 to 96000)"))
    }
}
