import ArgumentParser
import FoundationEssentials
import Glibc
import Dispatch
import GraphKit
import Nodes

/// Options shared by the commands that load a graph.
struct OverrideOptions: ParsableArguments {
    @Option(name: .customLong("set"), help: ArgumentHelp(
        "Override a node parameter; the value is read by the parameter's type, empty removes it.",
        valueName: "node.param=value"))
    var overrides: [String] = []

    func parsed() throws(GraphError) -> [GraphLoader.Override] {
        var result: [GraphLoader.Override] = []
        for text in overrides { result.append(try GraphLoader.Override(parsing: text)) }
        return result
    }
}

/// Where node types come from, for every command that reads graphs or node types: the built-ins,
/// plugins named with --plugin, those in GRAPHKIT_PLUGIN_PATH's folders, and the installed
/// plugin folder. One registry, so no command sees the built-ins only.
struct PluginOptions: ParsableArguments {
    @Option(name: .customLong("plugin"), help: ArgumentHelp(
        "Load node types from a plugin: a shared object, or a folder of them (repeatable). \(PluginLoader.pathVariable) lists more folders.",
        valueName: "path"))
    var paths: [String] = []

    func registry() throws(GraphError) -> NodeRegistry {
        var registry = NodeRegistry.builtIn
        try PluginLoader.load(paths: paths, defaultDirectories: Self.installedPluginFolder.map { [$0] } ?? [], into: &registry)
        return registry
    }

    func loader() throws(GraphError) -> GraphLoader {
        GraphLoader(registry: try registry())
    }

    /// PREFIX/lib/graphkit/plugins, for a graphctl installed as PREFIX/bin/graphctl.
    static var installedPluginFolder: String? {
        guard let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return nil }
        let prefix = URL(fileURLWithPath: exe).deletingLastPathComponent().deletingLastPathComponent()
        return prefix.appendingPathComponent("lib/graphkit/plugins").path
    }
}
