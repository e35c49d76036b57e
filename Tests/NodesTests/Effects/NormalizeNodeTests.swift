import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

/// effect.normalize's `gain` (NormalizeNode.swift): one pass at a gain measured before, the
/// sound sent as it comes (not held to its end), every sample at that gain where no peak passes
/// the ceiling, and the times kept. (The modes that measure are tried on real media by
/// NormalizeCommandTests and the export's by ExportNormalizeCommandTests.)
@Suite(.media) struct NormalizeNodeTests {
    let format = MediaFormat.pcm(.init(sampleRate: 48_000, channels: 2, sampleFormat: .f32le))

    /// `frames` of a 997 Hz stereo sine at `amplitude`, from `start` frames in.
    func sine(frames: Int, from start: Int, amplitude: Float) -> SampleBuffer {
        var samples = [Float](repeating: 0, count: frames * 2)
        for i in 0..<frames {
            let v = amplitude * Float(sin(2 * Double.pi * 997 * Double(start + i) / 48_000))
            samples[2 * i] = v
            samples[2 * i + 1] = -v
        }
        return SampleBuffer(format: format, bytes: samples.withUnsafeBytes { Array($0) },
                            presentationTime: MediaTime(value: Int64(start), timescale: 48_000),
                            duration: MediaTime(value: Int64(frames), timescale: 48_000))
    }

    @Test func aGivenGainIsAppliedAsTheSoundStreams() throws {
        let h = try NodeHarness(#"{ "type": "effect.normalize", "params": { "target": -16, "gain": -6.020599913279624 } }"#)
        let chunk = 4_800
        var input: [Float] = []
        for n in 0..<10 {
            let b = sine(frames: chunk, from: n * chunk, amplitude: 0.5)
            input += b.withAudioSamples(as: Float.self) { Array($0) }
            try h.push(b)
        }
        // Before the input ends: two passes would send nothing yet.
        let first = try #require(h.pull(timeout: 5), "nothing was sent before the input ended")
        #expect(first.presentationTime == .zero)
        try h.endInput()
        var output = first.withAudioSamples(as: Float.self) { Array($0) }
        var end = (first.presentationTime ?? .zero) + (first.duration ?? .zero)
        for b in try h.pullAll() {
            #expect(b.presentationTime == end, "the times run on without a gap")
            end = (b.presentationTime ?? .zero) + (b.duration ?? .zero)
            output += b.withAudioSamples(as: Float.self) { Array($0) }
        }
        #expect(output.count == input.count)
        let worst = zip(output, input).map { abs($0 - $1 / 2) }.max() ?? 1
        #expect(worst < 1e-5, "every sample at half its level (the peaks are far under the ceiling): \(worst)")
        let report = try #require((h.node as? NormalizeNode)?.report)
        #expect(report.mode == "gain" && abs(report.gainDB + 6.02) < 0.01 && report.limitedSeconds == 0)
        try h.finish()
    }

    @Test func aGainThatPassesTheCeilingIsLimited() throws {
        let h = try NodeHarness(#"{ "type": "effect.normalize", "params": { "truePeak": -3, "gain": 12 } }"#)
        for n in 0..<10 { try h.push(sine(frames: 4_800, from: n * 4_800, amplitude: 0.5)) }
        try h.endInput()
        let peak = try h.pullAll().map { b in b.withAudioSamples(as: Float.self) { $0.map(abs).max() ?? 0 } }.max() ?? 0
        #expect(20 * log10(Double(peak)) <= -3, "\(peak)")
        #expect(((h.node as? NormalizeNode)?.report?.limitedSeconds ?? 0) > 0.5)
        try h.finish()
    }

    @Test func aGainWithLiveModeIsRefusedNamingTheParameter() throws {
        #expect {
            _ = try NodeHarness(#"{ "type": "effect.normalize", "params": { "mode": "live", "gain": 3 } }"#)
        } throws: { error in
            guard let error = error as? GraphError else { return false }
            return error.code == .invalidGraph && "\(error)".contains("gain") && "\(error)".contains("live")
        }
    }
}
