import GraphKit

/// A plugin built against the GraphKit product, which a program links into itself, instead of the
/// shared library: the library carries an engine of its own, with its own registry and type
/// metadata. Its note and descriptor are right; the loader must refuse it before its entry runs.
final class OwnEngineNode: ElementNode, Sendable {
    static let descriptor = NodeDescriptor(type: "effect.ownEngine", category: .effect, summary: "from a second engine",
                                           example: #"{ "type": "effect.ownEngine" }"#)
    init(context: NodeContext) throws(GraphError) {}
    func build(in bin: BinBuilder) throws(GraphError) {}
}

@_cdecl("graphkit_plugin_descriptor")
public func graphkitPluginDescriptor() -> UnsafeRawPointer {
    GraphKitPlugin.descriptor(name: "own-engine", version: "1.0.0") { plugin in
        plugin.register(OwnEngineNode.self)
    }
}
