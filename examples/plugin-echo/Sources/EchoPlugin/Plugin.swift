import GraphKit

/// The plugin's one export: graphctl finds this C symbol, checks the descriptor it returns
/// (plugin ABI, GraphKit version, Swift compiler), and only then registers the node types.
@_cdecl("graphkit_plugin_descriptor")
public func graphkitPluginDescriptor() -> UnsafeRawPointer {
    GraphKitPlugin.descriptor(name: "echo", version: "1.0.0", summary: "An echo for PCM audio") { plugin in
        plugin.register(EchoNode.self)
    }
}
