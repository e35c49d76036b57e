import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

@Suite(.media) struct OpusEncoderNodeTests {
    /// 44.1 kHz in: Opus codes at 48 kHz, in packets of 20 ms, stamped in rising order.
    @Test func encodesTo48kHzPacketsOf20Milliseconds() throws {
        let h = try NodeHarness(#"{ "type": "encode.opus", "params": { "bitrate": 64000 } }"#)
        try h.push(TestMedia.sine(sampleRate: 44_100, channels: 2, seconds: 1))
        let out = try h.pullAll()
        #expect(out.first?.format == .audio(.opus, sampleRate: 48_000, channels: 2))
        // 1 s is 50 packets of 960 samples, and the lookahead's (312 samples) spills into one more.
        #expect((50...52).contains(out.count), "\(out.count)")
        let times = out.compactMap(\.presentationTime)
        #expect(times.count == out.count)
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 })
        // About 64 kb/s: 8000 bytes a second, give or take VBR.
        let bytes = out.reduce(0) { $0 + $1.byteCount }
        #expect((4000...12000).contains(bytes), "\(bytes)")
    }

    /// In MP4: ffprobe names Opus at 48 kHz, the duration is the input's, each channel keeps
    /// its own tone (left 440 Hz, right 1000 Hz: nothing of one leaks into the other).
    @Test(.timeLimit(.minutes(10))) func inMP4EachChannelKeepsItsTone() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let wav = folder.appendingPathComponent("tones.wav").path, mp4 = folder.appendingPathComponent("tones.mp4").path
        try EncodedMediaChecks.writeTones(wav, frequencies: [440, 1000], sampleRate: 44_100, seconds: 2)
        let report = try EncodedMediaChecks.encode(wav, with: "encode.opus", params: #""bitrate": 128000"#, path: mp4)
        try #require(report.status == .completed, "\(report.error?.description ?? "")")
        let facts = try EncodedMediaChecks.probe(mp4, "a")
        #expect(facts["codec_name"] == "opus" && facts["sample_rate"] == "48000" && facts["channels"] == "2", "\(facts)")
        #expect(abs((facts["duration"].flatMap(Double.init) ?? 0) - 2) < 0.03, "\(facts)")
        let decoded = try EncodedMediaChecks.decode(mp4, channels: 2)
        for (channel, tone, other) in [(0, 440.0, 1000.0), (1, 1000.0, 440.0)] {
            let own = EncodedMediaChecks.power(decoded, channel: channel, of: 2, at: tone, sampleRate: 48_000)
            let leak = EncodedMediaChecks.power(decoded, channel: channel, of: 2, at: other, sampleRate: 48_000)
            #expect(abs(own - -6) < 1.5, "channel \(channel): \(own) dB at \(tone) Hz")  // 0.5 of full scale
            #expect(leak < own - 40, "channel \(channel): \(leak) dB at \(other) Hz against \(own) dB")
        }
    }

    /// Gapless: the encoder's pre-skip (its lookahead) is in the stream's header, and a decoder
    /// that honours it gives back the input aligned to the sample, with at most one packet's
    /// padding at the end. The MP4 `dOps` box's fields are big-endian (the Opus-in-ISOBMFF
    /// mapping; GStreamer 1.22's muxer wrote them in the Ogg header's order, and ffmpeg read a
    /// pre-skip of 14,337 for 312): GraphKit's writer turns the OpusHead around.
    @Test(.timeLimit(.minutes(10))) func preSkipLinesTheDecodedAudioUpWithTheInput() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let wav = folder.appendingPathComponent("noise.wav").path, mp4 = folder.appendingPathComponent("noise.mp4").path
        let count = 48_000 + 123
        try EncodedMediaChecks.writeNoise(wav, channels: 1, sampleRate: 48_000, samples: count)
        let report = try EncodedMediaChecks.encode(wav, with: "encode.opus", params: #""bitrate": 192000"#, path: mp4)
        try #require(report.status == .completed, "\(report.error?.description ?? "")")
        let input = try EncodedMediaChecks.decode(wav, channels: 1), decoded = try EncodedMediaChecks.decode(mp4, channels: 1)
        #expect(input.count == count)
        let preSkip = try Self.preSkip(mp4)
        #expect(preSkip == 312, "dOps pre-skip as read big-endian: \(preSkip)")
        #expect(TestMedia.lag(of: decoded, against: input) == 0)
        #expect((count..<(count + 960)).contains(decoded.count), "\(decoded.count) samples for \(count)")
    }

    /// The MP4 `dOps` box's PreSkip field, read big-endian (as the standard says).
    static func preSkip(_ path: String) throws -> Int {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let at = try #require((0..<(bytes.count - 8)).first { bytes[$0..<$0 + 4].elementsEqual("dOps".utf8) }) + 4
        return Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
    }

    @Test func parametersOutOfRangeAreRefusedAtTheirPath() {
        #expect(EncodedMediaChecks.problems(#"{ "version": 1, "nodes": { "opus": { "type": "encode.opus", "params": { "bitrate": 1000 } } } }"#)
                    .contains("nodes.opus.params.bitrate: 1000 is out of range (6000 to 650000)"))
        #expect(EncodedMediaChecks.problems(#"{ "version": 1, "nodes": { "opus": { "type": "encode.opus", "params": { "frameDuration": 30 } } } }"#)
                    .contains { $0.hasPrefix("nodes.opus.params.frameDuration: ") })
        #expect(EncodedMediaChecks.problems(#"{ "version": 1, "nodes": { "opus": { "type": "encode.opus", "params": { "channels": 9 } } } }"#)
                    .contains("nodes.opus.params.channels: 9 is out of range (1 to 8)"))
    }

    /// 7.1 in, stereo asked for: the node mixes down (its own `channels`, as AVNumberOfChannelsKey).
    /// (Past 8 channels the count check cannot be reached from a file: GStreamer's converter
    /// takes no speaker positions for more than 8 from WAV, so such a stream fails negotiating
    /// before any format reaches the encoder; ALAC's test pins the check, which is shared.)
    @Test(.timeLimit(.minutes(10))) func mixesDownToTheChannelsAsked() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let wav = folder.appendingPathComponent("7.1.wav").path, mp4 = folder.appendingPathComponent("stereo.mp4").path
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=duration=0.5:sample_rate=48000",
                                             "-af", "pan=7.1|c0=c0|c1=c0|c2=c0|c3=c0|c4=c0|c5=c0|c6=c0|c7=c0", wav])
        let report = try EncodedMediaChecks.encode(wav, with: "encode.opus", params: #""channels": 2"#, path: mp4)
        try #require(report.status == .completed, "\(report.error?.description ?? "")")
        #expect(try EncodedMediaChecks.probe(mp4, "a")["channels"] == "2")
    }
}
