import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

@Suite struct GainNodeTests {
    let s16 = MediaFormat.pcm(.init(sampleRate: 8000, channels: 1, sampleFormat: .s16le))
    let f32 = MediaFormat.pcm(.init(sampleRate: 8000, channels: 1, sampleFormat: .f32le))

    func s16Buffer(_ samples: [Int16]) -> SampleBuffer {
        SampleBuffer(format: s16, bytes: samples.withUnsafeBytes { Array($0) }, presentationTime: .zero)
    }

    @Test(.media) func doublesAndSaturates16BitSamples() throws {
        let h = try NodeHarness(#"{ "type": "effect.gain", "params": { "gain": 2 } }"#)
        try h.push(s16Buffer([1000, -1000, 20000, -20000, 0, 1, -32768]))
        let out = try #require(h.pull())
        #expect(out.withAudioSamples(as: Int16.self) { Array($0) } == [2000, -2000, 32767, -32768, 0, 2, -32768])
        #expect(out.presentationTime == .zero)
        #expect(try !h.finish().hasLeftovers)
    }

    @Test(.media) func decibelsOnFloatSamples() throws {
        let h = try NodeHarness(#"{ "type": "effect.gain", "params": { "db": -6.020599913279624 } }"#)
        let input: [Float] = [1, -0.5, 0.25, 0]
        try h.push(SampleBuffer(format: f32, bytes: input.withUnsafeBytes { Array($0) }))
        let out = try #require(h.pull())
        let values = out.withAudioSamples(as: Float.self) { Array($0) }
        for (v, e) in zip(values, [0.5, -0.25, 0.125, 0] as [Float]) { #expect(abs(v - e) < 1e-6) }
        try h.finish()
    }

    @Test func processesInPlaceWhenTheBufferIsNotShared() throws {
        var b = s16Buffer([100, 200])
        let node = try GainNode(context: NodeContext(id: "g", parameters: Parameters(["gain": .number(3)])))
        let before = b.withUnsafeBytes { $0.baseAddress }
        _ = try node.process(&b)
        #expect(b.withUnsafeBytes { $0.baseAddress } == before)
        let shared = b
        _ = try node.process(&b)
        #expect(b.withUnsafeBytes { $0.baseAddress } != shared.withUnsafeBytes { $0.baseAddress })
        #expect(shared.withAudioSamples(as: Int16.self) { Array($0) } == [300, 600])
        #expect(b.withAudioSamples(as: Int16.self) { Array($0) } == [900, 1800])
    }
}
