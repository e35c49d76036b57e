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
/// objects named on the command line or found in directories. Each is reached through
/// descriptors with its owner and permissions checked (`PluginPath`), its note read from the
/// file before any of its code runs (`PluginNote`), and only then that very file loaded and its
/// C descriptor checked. A plugin that fails any check registers nothing; plugins are never
/// unloaded (Swift type metadata cannot be); the same file reached twice is loaded once.
public enum PluginLoader {
    /// The environment variable listing plugin directories, colon-separated, each absolute.
    public static let pathVariable = "GRAPHKIT_PLUGIN_PATH"

    /// Loads every plugin named by `paths` (a shared object, or a directory of them; a relative
    /// path is taken from the current directory, once, as any file named on a command line),
    /// then those in the directories of `GRAPHKIT_PLUGIN_PATH` (which must be absolute: an entry
    /// kept in the environment would otherwise load code from whatever folder a later command
    /// starts in), then those in `defaultDirectories` (an installation's plugin folder). Records
    /// where it looked, for unknown-type messages.
    public static func load(paths: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
                            defaultDirectories: [String] = [], into registry: inout NodeRegistry) throws(GraphError) {
        let fromVariable = (environment[pathVariable] ?? "").split(separator: ":").map(String.init).filter { !$0.isEmpty }
        if let relative = fromVariable.first(where: { !$0.hasPrefix("/") }) {
            throw GraphError(.pluginUnusable, at: pathVariable,
                             "the entry \"\(relative)\" is relative: it would load code from whatever folder a command starts in; give an absolute path (for example \"$PWD/\(relative)\")")
        }
        let named = paths.map(absolute)
        registry.pluginSearchPaths = named + fromVariable + defaultDirectories.filter { FileManager.default.fileExists(atPath: $0) }
        for path in named { try load(path, explicitly: true, into: &registry) }
        for dir in fromVariable { try load(dir, explicitly: false, into: &registry) }
        for dir in defaultDirectories { try load(dir, explicitly: false, into: &registry) }
    }

    /// `path` made absolute against the current directory (unchanged when absolute already).
    static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        return FileManager.default.currentDirectoryPath + "/" + path
    }

    /// Loads one shared object, or every `.so` in a directory (sorted by name); a relative path
    /// is taken from the current directory. A path that does not exist is exit 66 when it was
    /// named explicitly; a directory from the path variable that does not exist is skipped, as
    /// GStreamer does. A path that breaks the ownership and permission rules of `PluginPath` is
    /// refused (78), naming the file or folder and the permission.
    public static func load(_ path: String, explicitly: Bool = true, into registry: inout NodeRegistry) throws(GraphError) {
        let target: PluginPath.Target
        do {
            target = try PluginPath.open(absolute(path))
        } catch {
            switch error {
            case .missing:
                if !explicitly { return }
                throw GraphError(.inputUnreadable, at: path, "no such plugin file or folder")
            case .unreadable:
                throw GraphError(.inputUnreadable, at: path, "cannot read the plugin file or folder: permission denied")
            case .refused(let why):
                throw GraphError(.pluginUnusable, at: path, "refused: \(why)")
            }
        }
        switch target {
        case .file(let fd, let resolved, let status):
            try loadFile(PluginFile(fd: fd, path: resolved, status: status), shownAs: path, into: &registry)
        case .folder(let folder):
            for name in folder.sharedObjects() {
                let shown = URL(fileURLWithPath: path).appendingPathComponent(name).path
                let entry: PluginPath.Target
                do {
                    entry = try folder.open(name)
                } catch {
                    switch error {
                    case .missing: continue  // removed while the folder was read
                    case .unreadable: throw GraphError(.inputUnreadable, at: shown, "cannot read the plugin file: permission denied")
                    case .refused(let why): throw GraphError(.pluginUnusable, at: shown, "refused: \(why)")
                    }
                }
                switch entry {
                case .file(let fd, let resolved, let status):
                    try loadFile(PluginFile(fd: fd, path: resolved, status: status), shownAs: shown, into: &registry)
                case .folder:
                    throw GraphError(.pluginUnusable, at: shown, "refused: a folder named like a shared object")
                }
            }
        }
    }

    /// A plugin file open for reading, checked: where it was reached, and what it is.
    struct PluginFile {
        var fd: Int32
        var path: String
        var status: stat
        var identity: String { "\(status.st_dev):\(status.st_ino)" }
    }

    /// What each file (by device and inode) gave when first loaded in this process. The
    /// descriptor a library was loaded through is never closed, as the library is never
    /// unloaded: its name (/proc/self/fd/N) must never name another file, since the dynamic
    /// loader hands back the library already loaded under a name it is asked for again.
    private struct Loaded {
        var files: [String: (plugin: LoadedPlugin, types: [any Node.Type])] = [:]
        /// Every plugin's descriptor, which the plugin made to be kept for as long as the plugin
        /// is loaded: for ever (held here, and not lost to the leak checker).
        var descriptors: [UnsafePointer<GraphKitPluginDescriptor>] = []
    }
    private static let loaded = Guarded(Loaded())

    private static func loadFile(_ file: PluginFile, shownAs path: String, into registry: inout NodeRegistry) throws(GraphError) {
        let (plugin, types) = try open(file, shownAs: path)
        if registry.plugins.contains(where: { $0.path == plugin.path }) { return }  // reached twice
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
        for type in types { registry.register(type, origin: .plugin(name: plugin.name, path: plugin.path)) }
        registry.plugins.append(plugin)
    }

    /// Checks a plugin's note, then loads that very file and runs its registration, once per
    /// process. Takes the file's descriptor: closed when refused before loading, else kept.
    private static func open(_ file: PluginFile, shownAs path: String) throws(GraphError) -> (LoadedPlugin, [any Node.Type]) {
        try loaded.withLock { (loaded) throws(GraphError) in try open(file, shownAs: path, loaded: &loaded) }
    }

    /// ``open(_:shownAs:)``, with what this process loaded so far.
    private static func open(_ file: PluginFile, shownAs path: String, loaded: inout Loaded) throws(GraphError) -> (LoadedPlugin, [any Node.Type]) {
        if let known = loaded.files[file.identity] {
            close(file.fd)
            return known
        }
        let rebuild = "rebuild the plugin against this GraphKit with this compiler"
        // 1. The note, read from the file: nothing of the plugin has run yet.
        let note: PluginNote
        switch PluginNote.read(from: file.fd) {
        case .success(let n): note = n
        case .failure(let problem):
            close(file.fd)
            throw GraphError(.pluginUnusable, at: path, "not a GraphKit plugin: \(problem.description); it was not loaded")
        }
        let refusedUnloaded: (String) -> GraphError = { why in
            close(file.fd)
            return GraphError(.pluginUnusable, at: path, "\(why): \(rebuild) (it was not loaded)")
        }
        guard note.abiVersion == GraphKitInfo.pluginABIVersion else {
            throw refusedUnloaded("plugin \"\(note.name)\" was built for plugin ABI \(note.abiVersion); this graphctl loads ABI \(GraphKitInfo.pluginABIVersion)")
        }
        guard note.graphKitVersion == GraphKitInfo.version else {
            throw refusedUnloaded("plugin \"\(note.name)\" was built against GraphKit \(note.graphKitVersion); this is GraphKit \(GraphKitInfo.version)")
        }
        guard note.toolchain == GraphKitPlugin.toolchain else {
            throw refusedUnloaded("plugin \"\(note.name)\" was compiled by \(note.toolchain); this GraphKit by \(GraphKitPlugin.toolchain)")
        }

        // 2. That very file, through the descriptor checked (not its name, which may have
        // changed since). From here its constructors run. RTLD_LOCAL: a plugin's symbols do not
        // leak into the next plugin; never dlclose'd, and the descriptor stays open with it.
        let name = "/proc/self/fd/\(file.fd)"
        guard let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) else {
            let reason = (dlerror().map { String(cString: $0) } ?? "unknown reason").replacing(name, with: file.path)
            close(file.fd)
            throw GraphError(.pluginUnusable, at: path, "cannot load the plugin: \(reason)")
        }
        // 3. One engine: the library must reach GraphKit through the engine this process runs,
        // before anything of its own is called.
        if let problem = secondEngine(in: handle, plugin: note.name) {
            throw GraphError(.pluginUnusable, at: path, problem)
        }
        guard let symbol = dlsym(handle, GRAPHKIT_PLUGIN_ENTRY_SYMBOL) else {
            throw GraphError(.pluginUnusable, at: path,
                             "not a GraphKit plugin: it exports no \(GRAPHKIT_PLUGIN_ENTRY_SYMBOL) (see docs/PLUGINS.md)")
        }
        let entry = unsafeBitCast(symbol, to: GraphKitPluginEntry.self)
        guard let descriptor = entry() else {
            throw GraphError(.pluginUnusable, at: path, "not a GraphKit plugin: its descriptor is missing")
        }
        loaded.descriptors.append(descriptor)
        let d = descriptor.pointee
        let pluginName = d.name.map { String(cString: $0) } ?? "(unnamed)"
        let version = d.version.map { String(cString: $0) } ?? "?"
        guard d.abi_version == GraphKitInfo.pluginABIVersion else {
            throw GraphError(.pluginUnusable, at: path,
                             "plugin \"\(pluginName)\" was built for plugin ABI \(d.abi_version); this graphctl loads ABI \(GraphKitInfo.pluginABIVersion): \(rebuild)")
        }
        guard pluginName == note.name, version == note.version else {
            throw GraphError(.pluginUnusable, at: path,
                             "its note says plugin \"\(note.name)\" \(note.version), its descriptor \"\(pluginName)\" \(version): GRAPHKIT_PLUGIN_NOTE and GraphKitPlugin.descriptor must name the same plugin")
        }
        let graphKit = d.graphkit_version.map { String(cString: $0) } ?? "?"
        let compiler = d.compiler_version.map { String(cString: $0) } ?? "?"
        guard graphKit == GraphKitInfo.version else {
            throw GraphError(.pluginUnusable, at: path,
                             "plugin \"\(pluginName)\" was built against GraphKit \(graphKit); this is GraphKit \(GraphKitInfo.version): \(rebuild)")
        }
        guard compiler == GraphKitInfo.compilerVersion else {
            throw GraphError(.pluginUnusable, at: path,
                             "plugin \"\(pluginName)\" was built with Swift \(compiler); this GraphKit with Swift \(GraphKitInfo.compilerVersion): \(rebuild)")
        }
        guard let register = d.register_types else {
            throw GraphError(.pluginUnusable, at: path, "plugin \"\(pluginName)\" has no registration function")
        }
        let sink = PluginRegistration.Sink()
        if let message = register(d.context, Unmanaged.passUnretained(sink).toOpaque()) {
            defer { free(message) }
            throw GraphError(.pluginUnusable, at: path, "plugin \"\(pluginName)\" failed to register its node types: \(String(cString: message))")
        }
        let plugin = LoadedPlugin(name: pluginName, version: version,
                                  summary: d.summary.map { String(cString: $0) } ?? "", path: file.path,
                                  graphKitVersion: graphKit, compilerVersion: compiler,
                                  types: sink.types.map { $0.descriptor.type })
        loaded.files[file.identity] = (plugin, sink.types)
        return (plugin, sink.types)
    }

    /// Why a loaded library would bring a second engine into the process, or nil. A plugin links
    /// the GraphKitShared library, as graphctl does; one that links the GraphKit product instead
    /// carries an engine of its own (its own registry and type metadata: the types it registers
    /// would not be this process's), and a program that links the GraphKit product has its
    /// engine inside itself, where a plugin cannot reach it. Told apart by where a symbol of the
    /// engine's resolves from the library (itself first, then what it needs) and here.
    /// A library that reaches no engine at all has nothing to share, and goes on to the checks
    /// after this one.
    private static func secondEngine(in handle: UnsafeMutableRawPointer, plugin: String) -> String? {
        var image: UnsafePointer<CChar>?
        guard graphkit_engine_reach(handle, &image) == GRAPHKIT_ENGINE_OTHER else { return nil }
        if let image, String(cString: image).hasSuffix("/\(sharedLibrary)") {
            return "plugin \"\(plugin)\" carries an engine of its own: it links the GraphKit product, which programs link into themselves; a plugin depends on the GraphKitShared product (docs/PLUGINS.md)"
        }
        return "plugin \"\(plugin)\" cannot be loaded into this program: the program links GraphKit into itself (the GraphKit product), and plugins share the engine of a program linked with the GraphKitShared product, as graphctl is (docs/PLUGINS.md)"
    }

    /// The file name of the library graphctl and plugins share (the GraphKitShared product).
    public static let sharedLibrary = "libGraphKitShared.so"
}
