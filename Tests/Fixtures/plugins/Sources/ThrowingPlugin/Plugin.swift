import GraphKit

/// Its registration fails: it needs a licence file that is not there.
final class LicensedNode: ElementNode, Sendable {
    static let descriptor = NodeDescriptor(type: "effect.licensed", category: .effect, summary: "needs a licence",
                                           example: #"{ "type": "effect.licensed" }"#)
    init(context: NodeContext) throws(GraphError) {}
    func build(in bin: BinBuilder) throws(GraphError) {}
}

@_cdecl("graphkit_plugin_descriptor")
public func graphkitPluginDescriptor() -> UnsafeRawPointer {
    GraphKitPlugin.descriptor(name: "licensed", version: "2.1.0") { plugin in
        plugin.register(LicensedNode.self)
        throw GraphError(.pluginUnusable, "no licence file at /etc/licensed.key")
    }
}
