/// The node types a loader knows: one explicit list of built-ins, plus what an application
/// registers and what plugins add, each with where it came from.
public struct NodeRegistry: Sendable {
    /// Where a node type comes from, shown by `graphctl inspect`.
    public enum Origin: Sendable, Hashable, CustomStringConvertible {
        case builtIn
        /// Registered by the application's own code.
        case application
        /// Added by a plugin: its name and the shared object it was loaded from.
        case plugin(name: String, path: String)

        public var description: String {
            switch self {
            case .builtIn: "built-in"
            case .application: "the application"
            case let .plugin(name, path): "plugin \"\(name)\" (\(path))"
            }
        }
    }

    public private(set) var types: [any Node.Type] = []
    private var origins: [String: Origin] = [:]
    /// Each type name's place in `types`: the loader looks up every node's type, and a graph may
    /// have many thousands of nodes (asking each type for its descriptor copies the descriptor).
    private var positions: [String: Int] = [:]
    /// The plugins loaded into this registry, in load order.
    public internal(set) var plugins: [LoadedPlugin] = []
    /// Where plugins were looked for: an unknown node type's message names them.
    public internal(set) var pluginSearchPaths: [String] = []

    public init(_ types: [any Node.Type] = [], origin: Origin = .builtIn) {
        for t in types { register(t, origin: origin) }
    }

    /// Adds a node type; a later registration of the same type name replaces the earlier one,
    /// so an application can override a built-in. (Plugins may not: see ``PluginLoader``.)
    public mutating func register(_ type: any Node.Type, origin: Origin = .application) {
        let name = type.descriptor.type
        types.removeAll { $0.descriptor.type == name }
        types.append(type)
        origins[name] = origin
        positions = [:]
        for (i, t) in types.enumerated() { positions[t.descriptor.type] = i }
    }

    public func lookup(_ typeName: String) -> (any Node.Type)? {
        positions[typeName].map { types[$0] }
    }

    /// Where a registered type comes from.
    public func origin(of typeName: String) -> Origin? { origins[typeName] }

    /// The registered type name closest to a misspelt one.
    public func suggestion(for typeName: String) -> String? {
        closestMatch(to: typeName, in: types.map { $0.descriptor.type })
    }

    public var typeNames: [String] { types.map { $0.descriptor.type }.sorted() }

    public static func + (a: NodeRegistry, b: NodeRegistry) -> NodeRegistry {
        var r = a
        for t in b.types { r.register(t, origin: b.origin(of: t.descriptor.type) ?? .application) }
        r.plugins += b.plugins
        r.pluginSearchPaths += b.pluginSearchPaths
        return r
    }
}
