import GraphKit
import Nodes

/// The client's own node: flips the sign of 16-bit PCM samples (README, "Write a node").
public final class InvertNode: ProcessingNode, Sendable {
    public static let descriptor = NodeDescriptor(
        type: "effect.invert", category: .effect, summary: "Flips the sign of PCM samples",
        inputs: [PortDescriptor("in", .pcm([.s16le]), help: "16-bit PCM")],
        outputs: [PortDescriptor("out", .pcm([.s16le]), help: "the same, inverted")],
        parameters: [enabled],
        example: #"{ "type": "effect.invert" }"#)
    public static let bufferFlow = BufferFlow.passThrough
    static let enabled = Parameter<Bool>("enabled", default: true, help: "off passes audio through")

    let enabled: Bool
    public init(context: NodeContext) throws(GraphError) { enabled = context.parameters[Self.enabled] }

    public func process(_ buffer: inout SampleBuffer) throws(GraphError) -> Bool {
        guard enabled else { return true }
        buffer.withMutableAudioSamples(as: Int16.self) { s in
            for i in s.indices { s[i] = s[i] == .min ? .max : -s[i] }
        }
        return true
    }
}

extension NodeRegistry {
    /// GraphKit's built-in nodes and this package's.
    public static var withEffects: NodeRegistry {
        var registry = NodeRegistry.builtIn
        registry.register(InvertNode.self)
        return registry
    }
}
