import Testing
@testable import Nodes
import GraphKit
import GraphKitTesting
import TestSupport


@Suite struct CaptureAudioNodeTests {
    @Test(.media) func testDeviceProducesExactlyTheDurationWithExactTimestamps() throws {
        let h = try NodeHarness(#"{ "type": "capture.audio", "params": { "sampleRate": 8000, "channels": 2, "duration": 1.5, "live": false, "frequency": 1000 } }"#)
        let buffers = try h.pullAll()
        let frames = buffers.reduce(0) { $0 + $1.frameCount }
        #expect(frames == 12_000)
        #expect(buffers.first?.format == .pcm(.init(sampleRate: 8000, channels: 2, sampleFormat: .s16le)))
        var expected = MediaTime.zero
        for b in buffers {
            #expect(b.presentationTime == expected)
            expected = expected + MediaTime(value: Int64(b.frameCount), timescale: 8000)
        }
        // A 1 kHz sine crosses zero upwards 1000 times a second.
        var samples: [Int16] = []
        for b in buffers { b.withAudioSamples(as: Int16.self) { s in for i in stride(from: 0, to: s.count, by: 2) { samples.append(s[i]) } } }
        let upward = zip(samples, samples.dropFirst()).filter { $0 < 0 && $1 >= 0 }.count
        #expect((1499...1501).contains(upward))
        #expect(samples.max()! > 10_000)
        try h.finish()
    }

    /// Counts no buffer size near 1024 divides (a prime rate, odd durations) end on the sample:
    /// they were rounded up to whole buffers (44,101 Hz × 1 s gave 45,056), and a duration under
    /// a sample gives one.
    @Test(.media, .timeLimit(.minutes(10)), arguments: [(44_101, 1.0, 44_101), (48_000, 1.23456, 59_259), (22_050, 2.7183, 59_939), (44_100, 0.00001, 1)])
    func anyCountEndsOnTheSample(rate: Int, seconds: Double, expected: Int) throws {
        let h = try NodeHarness(#"{ "type": "capture.audio", "params": { "sampleRate": \#(rate), "duration": \#(seconds), "live": false } }"#)
        let buffers = try h.pullAll()
        #expect(buffers.reduce(0) { $0 + $1.frameCount } == expected)
        let end = buffers.last.flatMap { b in b.presentationTime.map { $0 + MediaTime(value: Int64(b.frameCount), timescale: Int32(rate)) } }
        #expect(abs((end?.seconds ?? 0) - Double(expected) / Double(rate)) < 1e-6)  // stamps are in nanoseconds
        try h.finish()
    }

    @Test(.media) func framesPerBufferDividesTheDurationWhenItCan() {
        #expect(CaptureAudioNode.framesPerBuffer(total: 441_000) == 1000)
        #expect(CaptureAudioNode.framesPerBuffer(total: 480_000) == 1000)
        #expect(CaptureAudioNode.framesPerBuffer(total: 102_400) == 1024)
        #expect(CaptureAudioNode.framesPerBuffer(total: 0) == 1024)
        #expect(CaptureAudioNode.framesPerBuffer(total: 1_000_003) == 1024)  // a prime: rounds up instead
    }

    @Test(.media) func aMissingDeviceFailsNamingIt() throws {
        let h = try NodeHarness(#"{ "type": "capture.audio", "params": { "device": "alsa:hw:99", "duration": 1 } }"#)
        do {
            try h.finish(timeout: 5)
            Issue.record("the run should fail")
        } catch let error as GraphError {
            #expect(error.code == .runFailed)
            #expect(error.node == "node")
            #expect(error.problems[0].location == #"node "node" (capture.audio, reading audio device "alsa:hw:99")"#)
        }
    }
}
