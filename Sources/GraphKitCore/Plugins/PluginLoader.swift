import CGraphKitPlugin
import FoundationEssentials
import Glibc

/// A plugin that was loaded: who it says it is, where it came from, and what it added.
public struct LoadedPlugin: Sendable, Equatable {
    public var name: String
    public var version: String
    public var summary: String
    /// The shared object, as a canonical path.
    public var path: String
    /// The GraphKit version and Swift compiler the plugin was built with.
    public var graphKitVersion: String
    public var compilerVersion: String
    /// The node types it registered.
    public var types: [String]
}

/// Loads plugins into a registry, like GStreamer's registry loads `GST_PLUGIN_PATH`: shared
/// objects named on the command line or found in directories, each checked by its C descriptor
/// before any of its Swift code runs. A plugin that fails any check registers nothing; plugins
/// are never unloaded (Swift type metadata cannot be); the same file reached twice is loaded once.
public enum PluginLoader {
    /// The environment variable listing plugin directories, colon-separated.
    public static let pathVariable = "GRAPHKIT_PLUGIN_PATH"

    /// Loads every plugin named by `paths` (a shared object, or a directory of them), then those
    /// in the directories of `GRAPHKIT_PLUGIN_PATH`, then those in `defaultDirectories` (an
    /// installation's plugin folder). Records where it looked, for unknown-type messages.
    public static func load(paths: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
                            defaultDirectories: [String] = [], into registry: inout NodeRegistry) throws(GraphError) {
        let fromVariable = (environment[pathVariable] ?? "").split(separator: ":").map(String.init).filter { !$0.isEmpty }
        registry.pluginSearchPaths = paths + fromVariable + defaultDirectories.filter { FileManager.default.fileExists(atPath: $0) }
        for path in paths { try load(path, explicitly: true, into: &registry) }
        for dir in fromVariable { try load(dir, explicitly: false, into: &registry) }
        for dir in defaultDirectories where FileManager.default.fileExists(atPath: dir) {
            try load(dir, explicitly: false, into: &registry)
        }
    }

    /// Loads one shared object, or every `.so` in a directory (sorted by name).
    /// A path that does not exist is exit 66 when it was named explicitly; a directory from the
    /// path variable that does not exist is skipped, as GStreamer does.
    public static func load(_ path: String, explicitly: Bool = true, into registry: inout NodeRegistry) throws(GraphError) {
        var isDirectory = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            if !explicitly { return }
            throw GraphError(.inputUnreadable, at: path, "no such plugin file or folder")
        }
        if isDirectory {
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).filter { $0.hasSuffix(".so") }.sorted()
            for name in names { try loadFile(URL(fileURLWithPath: path).appendingPathComponent(name).path, into: &registry) }
        } else {
            try loadFile(path, into: &registry)
        }
    }

    /// What each canonical path gave when first loaded in this process.
    nonisolated(unsafe) private static var loaded: [String: (plugin: LoadedPlugin, types: [any Node.Type])] = [:]
    /// Every plugin's descriptor, which the plugin made to be kept for as long as the plugin is
    /// loaded: for ever (held here, and not lost to the leak checker).
    nonisolated(unsafe) private static var descriptors: [UnsafePointer<GraphKitPluginDescriptor>] = []
    private static let lock = Lock()

    private static func loadFile(_ path: String, into registry: inout NodeRegistry) throws(GraphError) {
        let canonical = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        if registry.plugins.contains(where: { $0.path == canonical }) { return }  // reached twice
        let (plugin, types) = try open(canonical, shownAs: path)
        // A type that exists already refuses the whole plugin, naming both origins.
        for type in types {
            let name = type.descriptor.type
            if let existing = registry.origin(of: name) {
                throw GraphError(.pluginUnusable, at: path,
                                 "plugin \"\(plugin.name)\" registers node type \"\(name)\", which \(existing) already provides; nothing from \"\(plugin.name)\" was registered")
            }
        }
        if let twice = Dictionary(grouping: types.map { $0.descriptor.type }, by: { $0 }).first(where: { $0.value.count > 1 }) {
            throw GraphError(.pluginUnusable, at: path, "plugin \"\(plugin.name)\" registers node type \"\(twice.key)\" twice")
        }
        for type in types { registry.register(type, origin: .plugin(name: plugin.name, path: canonical)) }
        registry.plugins.append(plugin)
    }

    /// Opens a shared object and runs its registration, once per process.
    private static func open(_ canonical: String, shownAs path: String) throws(GraphError) -> (LoadedPlugin, [any Node.Type]) {
        lock.lock()
        defer { lock.unlock() }
        if let known = loaded[canonical] { return known }
        guard FileManager.default.isReadableFile(atPath: canonical) else {
            throw GraphError(.inputUnreadable, at: path, "cannot read the plugin file: permission denied")
        }
        // RTLD_LOCAL: a plugin's symbols do not leak into the next plugin; never dlclose'd.
        guard let handle = dlopen(canonical, RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "unknown reason"
            throw GraphError(.pluginUnusable, at: path, "cannot load the plugin: \(reason)")
        }
        guard let symbol = dlsym(handle, GRAPHKIT_PLUGIN_ENTRY_SYMBOL) else {
            throw GraphError(.pluginUnusable, at: path,
                             "not a GraphKit plugin: it exports no \(GRAPHKIT_PLUGIN_ENTRY_SYMBOL) (see docs/PLUGINS.md)")
        }
        let entry = unsafeBitCast(symbol, to: GraphKitPluginEntry.self)
        guard let descriptor = entry() else {
            throw GraphError(.pluginUnusable, at: path, "not a GraphKit plugin: its descriptor is missing")
        }
        descriptors.append(descriptor)
        let d = descriptor.pointee
        let name = d.name.map { String(cString: $0) } ?? "(unnamed)"
        let rebuild = "rebuild the plugin against this GraphKit with this compiler"
        guard d.abi_version == GraphKitInfo.pluginABIVersion else {
            throw GraphError(.pluginUnusable, at: path,
                             "plugin \"\(name)\" was built for plugin ABI \(d.abi_version); this graphctl loads ABI \(GraphKitInfo.pluginABIVersion): \(rebuild)")
        }
        let graphKit = d.graphkit_version.map { String(cString: $0) } ?? "?"
        let compiler = d.compiler_version.map { String(cString: $0) } ?? "?"
        guard graphKit == GraphKitInfo.version else {
            throw GraphError(.pluginUnusable, at: path,
                             "plugin \"\(name)\" was built against GraphKit \(graphKit); this is GraphKit \(GraphKitInfo.version): \(rebuild)")
        }
        guard compiler == GraphKitInfo.compilerVersion else {
            throw GraphError(.pluginUnusable, at: path,
                             "plugin \"\(name)\" was built with Swift \(compiler); this GraphKit with Swift \(GraphKitInfo.compilerVersion): \(rebuild)")
        }
        guard let register = d.register_types else {
            throw GraphError(.pluginUnusable, at: path, "plugin \"\(name)\" has no registration function")
        }
        let sink = PluginRegistration.Sink()
        if let message = register(d.context, Unmanaged.passUnretained(sink).toOpaque()) {
            defer { free(message) }
            throw GraphError(.pluginUnusable, at: path, "plugin \"\(name)\" failed to register its node types: \(String(cString: message))")
        }
        let plugin = LoadedPlugin(name: name, version: d.version.map { String(cString: $0) } ?? "?",
                                  summary: d.summary.map { String(cString: $0) } ?? "", path: canonical,
                                  graphKitVersion: graphKit, compilerVersion: compiler,
                                  types: sink.types.map { $0.descriptor.type })
        loaded[canonical] = (plugin, sink.types)
        return (plugin, sink.types)
    }
}
