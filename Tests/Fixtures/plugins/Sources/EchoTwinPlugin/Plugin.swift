import GraphKit

/// Registers "effect.echo", a type name that another origin already provides.
final class EchoTwinNode: ElementNode, Sendable {
    static let descriptor = NodeDescriptor(type: "effect.echo", category: .effect, summary: "a second effect.echo",
                                           example: #"{ "type": "effect.echo" }"#)
    init(context: NodeContext) throws(GraphError) {}
    func build(in bin: BinBuilder) throws(GraphError) {}
}

@_cdecl("graphkit_plugin_descriptor")
public func graphkitPluginDescriptor() -> UnsafeRawPointer {
    GraphKitPlugin.descriptor(name: "echo-twin", version: "0.0.1") { plugin in plugin.register(EchoTwinNode.self) }
}
