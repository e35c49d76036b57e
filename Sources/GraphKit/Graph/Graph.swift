/// A reference to a port: `node.port`.
public struct PortRef: Sendable, Hashable, CustomStringConvertible, Codable {
    public var node: String
    public var port: String
    public init(node: String, port: String) {
        self.node = node
        self.port = port
    }
    /// Parses `node.port`.
    public init?(_ text: Substring) {
        let t = text.trimmingSpaces()
        guard let dot = t.lastIndex(of: "."), dot != t.startIndex, t.index(after: dot) != t.endIndex else { return nil }
        node = String(t[..<dot])
        port = String(t[t.index(after: dot)...])
    }
    public var description: String { "\(node).\(port)" }
}

/// How much one connection may hold before its producer waits (or a live source drops):
/// whichever limit is reached first.
public struct EdgeCapacity: Sendable, Hashable, Codable {
    public var buffers: Int?
    public var bytes: Int?
    public var seconds: Double?

    public init(buffers: Int? = nil, bytes: Int? = nil, seconds: Double? = nil) {
        self.buffers = buffers
        self.bytes = bytes
        self.seconds = seconds
    }

    /// Used where an edge names no capacity and still needs a queue (out of a live source, a
    /// fan-out branch, into a muxer): 32 buffers, 16 MiB or 1 s, the first reached (four 720p
    /// BGRA frames fit). Other edges without a capacity link directly and hold nothing.
    public static let `default` = EdgeCapacity(buffers: 32, bytes: 16 << 20, seconds: 1)
}

/// A validated graph, ready to run: every node type known, every parameter typed, every edge
/// checked. Nodes are in topological order (sources first).
public struct Graph: Sendable {
    public struct NodeSpec: Sendable {
        public var id: String
        public var type: any Node.Type
        public var parameters: Parameters
        public var descriptor: NodeDescriptor { type.descriptor }
    }
    public struct Edge: Sendable, Hashable {
        public var from: PortRef
        public var to: PortRef
        public var capacity: EdgeCapacity
        /// Its index in the document's `edges`.
        public var index: Int
    }

    public let name: String?
    public let description: String?
    public let nodes: [NodeSpec]
    public let edges: [Edge]
    /// Lookups by node id, made once: a run asks them for every edge, so a graph of many
    /// nodes must not be searched from the start each time.
    private let nodeIndex: [String: Int]
    private let edgesFrom: [String: [Edge]]
    private let edgesInto: [String: [Edge]]

    init(name: String?, description: String?, nodes: [NodeSpec], edges: [Edge]) {
        self.name = name
        self.description = description
        self.nodes = nodes
        self.edges = edges
        var index: [String: Int] = [:]
        for (i, n) in nodes.enumerated() where index[n.id] == nil { index[n.id] = i }
        nodeIndex = index
        edgesFrom = Dictionary(grouping: edges, by: \.from.node)
        edgesInto = Dictionary(grouping: edges, by: \.to.node)
    }

    public func node(_ id: String) -> NodeSpec? { nodeIndex[id].map { nodes[$0] } }
    public func edges(from node: String) -> [Edge] { edgesFrom[node] ?? [] }
    public func edges(into node: String) -> [Edge] { edgesInto[node] ?? [] }
}

extension Substring {
    func trimmingSpaces() -> Substring {
        var s = self
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return s
    }
}
