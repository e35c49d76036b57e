import Testing
@testable import Nodes
import GraphKit
import GraphKitTesting


@Suite struct CaptureAudioNodeTests {
    @Test func testDeviceProducesExactlyTheDurationWithExactTimestamps() throws {
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

    @Test func framesPerBufferDividesTheDurationWhenItCan() {
        #expect(CaptureAudioNode.framesPerBuffer(total: 441_000) == 1000)
        #expect(CaptureAudioNode.framesPerBuffer(total: 480_000) == 1000)
        #expect(CaptureAudioNode.framesPerBuffer(total: 102_400) == 1024)
        #expect(CaptureAudioNode.framesPerBuffer(total: 0) == 1024)
        #expect(CaptureAudioNode.framesPerBuffer(total: 1_000_003) == 1024)  // a prime: rounds up instead
    }

    @Test func aMissingDeviceFailsNamingIt() throws {
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
