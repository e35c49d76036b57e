/// Builds a graph in code, with typed nodes and parameters, into the same validated ``Graph``
/// the JSON loader makes: ``build(registry:)`` writes the graph document and hands it to
/// ``GraphLoader``, so there is one validation path and the same errors, each located at the
/// document path (`nodes.enc.params.bitrate`, `edges[1].to`).
///
/// ```swift
/// var b = GraphBuilder(name: "frames")
/// let frames = b.add("frames", FrameGeneratorNode.self) { $0[\.width] = 1280; $0[\.height] = 720 }
/// let h264 = b.add("h264", H264EncoderNode.self) { $0[\.keyframeInterval] = 30 }
/// let file = b.add("file", MP4SinkNode.self) { $0[\.path] = "out/frames.mov" }
/// b.connect(frames.output("out"), to: h264.input("in"))
/// b.connect(h264.output("out"), to: file.input("video"))
/// let graph = try b.build(registry: .builtIn)
/// ```
public struct GraphBuilder: Sendable {
    public var name: String?
    public var description: String?
    private var nodes: [(id: String, type: String, parameters: [(name: String, value: ParameterValue)])] = []
    private var edges: [(from: PortRef, to: PortRef, capacity: EdgeCapacity?)] = []

    public init(name: String? = nil, description: String? = nil) {
        self.name = name
        self.description = description
    }

    /// Adds a node of type `N` under `id`; `configure` sets its parameters (the others keep
    /// their defaults). Returns the node, to name its ports by.
    @discardableResult
    public mutating func add<N: Node>(_ id: String, _ type: N.Type, _ configure: (inout NodeSettings<N>) -> Void = { _ in }) -> BuiltNode<N> {
        var settings = NodeSettings<N>()
        configure(&settings)
        nodes.append((id, N.descriptor.type, settings.values))
        return BuiltNode(id: id)
    }

    /// Connects an output port to an input port; `capacity` bounds what the connection holds
    /// (see ``EdgeCapacity``).
    public mutating func connect(_ from: PortRef, to: PortRef, capacity: EdgeCapacity? = nil) {
        edges.append((from, to, capacity))
    }

    /// The graph document, as a graph file holds it.
    public var document: JSONValue {
        Graph.document(name: name, description: description, nodes: nodes,
                       edges: edges.map { ($0.from, $0.to, $0.capacity) })
    }

    /// Validates and returns the graph; throws the loader's `invalidGraph` error, every problem
    /// located, when anything is wrong.
    public func build(registry: NodeRegistry) throws(GraphError) -> Graph {
        try GraphLoader(registry: registry).load(document)
    }
}

/// A node added to a ``GraphBuilder``: its id, and its ports by name.
public struct BuiltNode<N: Node>: Sendable, Hashable {
    public let id: String

    /// One of the node's outputs (`out`, or `audio` and `video` for a decoder).
    public func output(_ port: String = "out") -> PortRef { PortRef(node: id, port: port) }
    /// One of the node's inputs (`in`, or `audio` and `video` for a muxer).
    public func input(_ port: String = "in") -> PortRef { PortRef(node: id, port: port) }
}

/// A node's parameters as code sets them, typed by the node's own declarations:
/// `$0[\.bitrate] = 96_000` (a key path to the node type's static declaration), or
/// `$0[AACEncoderNode.bitrate] = 96_000`.
public struct NodeSettings<N: Node>: Sendable {
    fileprivate(set) var values: [(name: String, value: ParameterValue)] = []

    private mutating func set(_ name: String, _ value: ParameterValue?) {
        values.removeAll { $0.name == name }
        if let value { values.append((name, value)) }
    }

    private func get(_ name: String) -> ParameterValue? {
        values.first { $0.name == name }?.value
    }

    public subscript<V>(_ p: Parameter<V>) -> V? {
        get { get(p.name).flatMap { V(parameterValue: $0) } }
        set { set(p.name, newValue?.parameterValue) }
    }
    public subscript<V>(_ p: OptionalParameter<V>) -> V? {
        get { get(p.name).flatMap { V(parameterValue: $0) } }
        set { set(p.name, newValue?.parameterValue) }
    }
    public subscript<V>(_ p: RequiredParameter<V>) -> V? {
        get { get(p.name).flatMap { V(parameterValue: $0) } }
        set { set(p.name, newValue?.parameterValue) }
    }
    public subscript<V>(_ p: AutoParameter<V>) -> Auto<V>? {
        get { get(p.name).flatMap { $0 == .auto ? .auto : V(parameterValue: $0).map { .value($0) } } }
        set { set(p.name, newValue?.parameterValue) }
    }

    public subscript<V>(_ p: KeyPath<N.Type, Parameter<V>>) -> V? {
        get { self[N.self[keyPath: p]] }
        set { self[N.self[keyPath: p]] = newValue }
    }
    public subscript<V>(_ p: KeyPath<N.Type, OptionalParameter<V>>) -> V? {
        get { self[N.self[keyPath: p]] }
        set { self[N.self[keyPath: p]] = newValue }
    }
    public subscript<V>(_ p: KeyPath<N.Type, RequiredParameter<V>>) -> V? {
        get { self[N.self[keyPath: p]] }
        set { self[N.self[keyPath: p]] = newValue }
    }
    public subscript<V>(_ p: KeyPath<N.Type, AutoParameter<V>>) -> Auto<V>? {
        get { self[N.self[keyPath: p]] }
        set { self[N.self[keyPath: p]] = newValue }
    }
}

extension Graph {
    /// The graph as a graph document: what the loader reads back into an equal graph. Only the
    /// parameters given explicitly are written; the others keep their defaults.
    public var document: JSONValue {
        Graph.document(name: name, description: description,
                       nodes: nodes.map { node in
                           (node.id, node.descriptor.type,
                            node.parameters.values.filter { node.parameters.explicit.contains($0.key) }
                                .sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) })
                       },
                       edges: edges.sorted { $0.index < $1.index }.map { ($0.from, $0.to, $0.capacity == .default ? nil : $0.capacity) })
    }

    /// A graph document: the one writer for a graph and a builder.
    static func document(name: String?, description: String?,
                         nodes: [(id: String, type: String, parameters: [(name: String, value: ParameterValue)])],
                         edges: [(from: PortRef, to: PortRef, capacity: EdgeCapacity?)]) -> JSONValue {
        var top: [(key: String, value: JSONValue)] = [("version", 1)]
        if let name { top.append(("name", .string(name))) }
        if let description { top.append(("description", .string(description))) }
        top.append(("nodes", .object(nodes.map { node in
            var members: [(key: String, value: JSONValue)] = [("type", .string(node.type))]
            if !node.parameters.isEmpty { members.append(("params", .object(node.parameters.map { ($0.name, $0.value.json) }))) }
            return (node.id, .object(members))
        })))
        top.append(("edges", .array(edges.map { edgeDocument(from: $0.from, to: $0.to, capacity: $0.capacity) })))
        return .object(top)
    }

    /// The graph document as indented JSON text, for a graph file.
    public var jsonText: String { document.indentedText() + "\n" }

    static func edgeDocument(from: PortRef, to: PortRef, capacity: EdgeCapacity?) -> JSONValue {
        guard let capacity else { return .string("\(from) -> \(to)") }
        var c: [(key: String, value: JSONValue)] = []
        if let b = capacity.buffers { c.append(("buffers", .number(Double(b)))) }
        if let b = capacity.bytes { c.append(("bytes", .number(Double(b)))) }
        if let s = capacity.seconds { c.append(("seconds", .number(s))) }
        return .object([("from", .string(from.description)), ("to", .string(to.description)), ("capacity", .object(c))])
    }
}

extension Graph: Equatable {
    /// Same name, description, nodes (id, type, parameter values and which were given) in the
    /// same order, and edges (ends and capacity) in the same order.
    public static func == (a: Graph, b: Graph) -> Bool {
        guard a.name == b.name, a.description == b.description, a.nodes.count == b.nodes.count, a.edges.count == b.edges.count else { return false }
        for (x, y) in zip(a.nodes, b.nodes) {
            guard x.id == y.id, x.descriptor.type == y.descriptor.type,
                  x.parameters.values == y.parameters.values, x.parameters.explicit == y.parameters.explicit else { return false }
        }
        for (x, y) in zip(a.edges.sorted { $0.index < $1.index }, b.edges.sorted { $0.index < $1.index }) {
            guard x.from == y.from, x.to == y.to, x.capacity == y.capacity else { return false }
        }
        return true
    }
}

extension JSONValue {
    /// JSON text indented by two spaces per level, one member per line; short arrays of
    /// numbers and strings stay on one line.
    public func indentedText(level: Int = 0) -> String {
        let pad = String(repeating: "  ", count: level + 1), end = String(repeating: "  ", count: level)
        switch self {
        case .array(let items) where items.isEmpty: return "[]"
        case .object(let members) where members.isEmpty: return "{}"
        case .array(let items):
            let flat = items.allSatisfy { if case .object = $0 { false } else if case .array = $0 { false } else { true } }
            if flat, description.count <= 80 { return "[" + items.map(\.description).joined(separator: ", ") + "]" }
            return "[\n" + items.map { pad + $0.indentedText(level: level + 1) }.joined(separator: ",\n") + "\n" + end + "]"
        case .object(let members):
            return "{\n" + members.map { pad + JSONValue.quote($0.key) + ": " + $0.value.indentedText(level: level + 1) }.joined(separator: ",\n") + "\n" + end + "}"
        default:
            return description
        }
    }
}
