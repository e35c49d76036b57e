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
        "Load node types from a plugin: a shared object, or a folder of them (repeatable). \(PluginLoader.pathVariable) lists more folders (absolute paths). Each file and folder must belong to you or root and not be writable by others.",
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

    /// ``loader()``, a failure reported as graphctl reports errors (the message, the exit code).
    func reportingLoader() throws -> GraphLoader {
        do {
            return try loader()
        } catch {
            throw report(error)
        }
    }

    /// PREFIX/lib/graphkit/plugins, for a graphctl installed as PREFIX/bin/graphctl.
    static var installedPluginFolder: String? {
        guard let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return nil }
        let prefix = URL(fileURLWithPath: exe).deletingLastPathComponent().deletingLastPathComponent()
        return prefix.appendingPathComponent("lib/graphkit/plugins").path
    }
}

/// How outputs treat a symbolic link at their name, for the commands that write them.
struct OutputOptions: ParsableArguments {
    @Flag(name: .customLong("follow-symlinks"), help: ArgumentHelp(
        "Write an output whose name is a symbolic link through the link, replacing the file it points to.",
        discussion: "By default such an output is refused (73): anyone who can write an output's folder can plant a link there and choose which file the run, often root's, replaces."))
    var followSymlinks = false

    func apply() { OutputFile.followsSymbolicLinks = followSymlinks }
}

/// Every file a run of `graph` reads and writes, each named as the user gave it: `--set node.param`
/// (or `--map`, from `overrides`), else its place in the graph file; with the graph file and the
/// plugins loaded, which are read too. `known` gives the file a path shown as text stands for
/// (a batch input whose name is not UTF-8).
func fileRoles(of graph: Graph, overrides: [(option: String, override: GraphLoader.Override)], graphFile: String,
               plugins: [LoadedPlugin], known: [String: FileIdentity] = [:]) -> FileRoles {
    var roles = FileRoles()
    roles.reads(graphFile, as: "the graph file")
    for plugin in plugins { roles.reads(plugin.path, as: "the plugin \(plugin.name)") }
    for f in graph.fileParameters {
        let key = "\(f.node).\(f.parameter)"
        let label = overrides.last { "\($0.override.node).\($0.override.parameter)" == key }.map { "\($0.option) \(key)" }
            ?? "nodes.\(f.node).params.\(f.parameter)"
        if f.writes { roles.writes(f.path, as: label) } else { roles.reads(f.path, as: label, file: known[f.path]) }
    }
    return roles
}
