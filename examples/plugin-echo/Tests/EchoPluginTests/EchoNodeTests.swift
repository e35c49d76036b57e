import EchoPlugin
import GraphKit
import GraphKitTesting
import Nodes
import Testing

/// effect.echo tested the way a plugin author tests a node: NodeHarness from the GraphKitTesting
/// product, no GStreamer code, the node registered beside the built-ins.
@Suite struct EchoNodeTests {
    static var registry: NodeRegistry {
        var r = NodeRegistry.builtIn
        r.register(EchoNode.self)
        return r
    }

    /// A click at frame 0 comes back `delay` later at `mix`, then at `mix × feedback` another
    /// `delay` on; after the input ends the tail is emitted until it fades.
    @Test(.timeLimit(.minutes(10)))
    func aClickEchoes() throws {
        let h = try NodeHarness(#"{ "type": "effect.echo", "params": { "delay": 10, "feedback": 0.5, "mix": 0.5 } }"#,
                                registry: Self.registry)
        // 8000 Hz: 10 ms is 80 frames. 200 frames with a full-scale click at 0.
        try h.push(TestMedia.pcm(sampleRate: 8000, frames: 200) { frame, _ in frame == 0 ? 16384 : 0 })
        let out = try h.pullAll()
        try h.finish()
        let samples = out.flatMap { $0.withAudioSamples(as: Int16.self) { Array($0) } }
        #expect(samples[0] == 16384)
        #expect(samples[80] == 8192)     // the first repeat: mix
        #expect(samples[160] == 4096)    // the second: mix × feedback
        #expect(samples[1...79].allSatisfy { $0 == 0 })
        // The tail goes on past the input's 200 frames, until 60 dB down.
        #expect(samples.count > 200)
        #expect(samples[240] == 2048)
    }
}
