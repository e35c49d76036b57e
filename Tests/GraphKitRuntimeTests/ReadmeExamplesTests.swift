import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

// The README's "Write a node" and "Test a node" examples, verbatim, so that they stay true.

public final class InvertNode: ProcessingNode, Sendable {
    public static let descriptor = NodeDescriptor(
        type: "effect.invert", category: .effect, summary: "Flips the sign of PCM samples",
        inputs: [PortDescriptor("in", .pcm([.s16le]), help: "16-bit PCM")],
        outputs: [PortDescriptor("out", .pcm([.s16le]), help: "the same, inverted")],
        parameters: [enabled],
        example: #"{ "type": "effect.invert" }"#)
    public static let bufferFlow = BufferFlow.passThrough   // or .consume: buffers end here
    static let enabled = Parameter<Bool>("enabled", default: true, help: "off passes audio through")

    let enabled: Bool
    public init(context: NodeContext) throws(GraphError) { enabled = context.parameters[Self.enabled] }

    public func process(_ buffer: inout SampleBuffer) throws(GraphError) -> Bool {
        guard enabled else { return true }
        buffer.withMutableAudioSamples(as: Int16.self) { s in
            for i in s.indices { s[i] = s[i] == .min ? .max : -s[i] }
        }
        return true   // false drops the buffer
    }
}

@Suite struct ReadmeExamplesTests {
    @Test(.media) func aUsersNodeRunsInAGraph() throws {
        var registry = NodeRegistry.builtIn
        registry.register(InvertNode.self)
        let h = try NodeHarness(#"{ "type": "effect.invert" }"#, registry: registry)
        try h.push(TestMedia.pcm(frames: 3) { frame, _ in [5, -32768, 0][frame] })
        let out = try #require(h.pull())
        #expect(out.withAudioSamples(as: Int16.self) { Array($0) } == [-5, 32767, 0])
        #expect(try !h.finish().hasLeftovers)
    }

    @Test(.media) func doubles() throws {
        let h = try NodeHarness(#"{ "type": "effect.gain", "params": { "gain": 2 } }"#)
        try h.push(TestMedia.pcm(frames: 4) { frame, _ in Int16(frame * 1000) })
        let out = try #require(h.pull())
        #expect(out.withAudioSamples(as: Int16.self) { Array($0) } == [0, 2000, 4000, 6000])
        #expect(try !h.finish().hasLeftovers)
    }
}
