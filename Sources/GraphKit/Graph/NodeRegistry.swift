/// The node types a loader knows: one explicit list of built-ins, plus what code registers.
public struct NodeRegistry: Sendable {
    public private(set) var types: [any Node.Type] = []

    public init(_ types: [any Node.Type] = []) {
        for t in types { register(t) }
    }

    /// Adds a node type; a later registration of the same type name replaces the earlier one,
    /// so an application can override a built-in.
    public mutating func register(_ type: any Node.Type) {
        types.removeAll { $0.descriptor.type == type.descriptor.type }
        types.append(type)
    }

    public func lookup(_ typeName: String) -> (any Node.Type)? {
        types.first { $0.descriptor.type == typeName }
    }

    /// The registered type name closest to a misspelt one.
    public func suggestion(for typeName: String) -> String? {
        closestMatch(to: typeName, in: types.map { $0.descriptor.type })
    }

    public var typeNames: [String] { types.map { $0.descriptor.type }.sorted() }

    /// The node types GraphKit itself provides: the app endpoints that code pushes into and
    /// pulls from.
    public static let core = NodeRegistry([AppSourceNode.self, AppSinkNode.self])

    public static func + (a: NodeRegistry, b: NodeRegistry) -> NodeRegistry {
        var r = a
        for t in b.types { r.register(t) }
        return r
    }
}
