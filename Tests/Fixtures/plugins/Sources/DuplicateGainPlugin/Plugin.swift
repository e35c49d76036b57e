import GraphKit

/// Registers "effect.gain", a type name that another origin already provides.
final class DuplicateGainNode: ElementNode, Sendable {
    static let descriptor = NodeDescriptor(type: "effect.gain", category: .effect, summary: "a second effect.gain",
                                           example: #"{ "type": "effect.gain" }"#)
    init(context: NodeContext) throws(GraphError) {}
    func build(in bin: BinBuilder) throws(GraphError) {}
}

@_cdecl("graphkit_plugin_descriptor")
public func graphkitPluginDescriptor() -> UnsafeRawPointer {
    GraphKitPlugin.descriptor(name: "dupgain", version: "0.0.1") { plugin in plugin.register(DuplicateGainNode.self) }
}
