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
        let u = text.utf8
        if u.allSatisfy({ $0 < 0x80 }) {
            // ASCII, the usual case: a byte is a character (CR LF aside, which is neither a space,
            // a tab nor a dot), so the same answer as below without breaking the text into characters.
            func space(_ b: UInt8) -> Bool { b == UInt8(ascii: " ") || b == UInt8(ascii: "\t") }
            var lo = u.startIndex, hi = u.endIndex
            while lo != hi, space(u[lo]) { lo = u.index(after: lo) }
            while hi != lo, space(u[u.index(before: hi)]) { hi = u.index(before: hi) }
            guard let dot = u[lo..<hi].lastIndex(of: UInt8(ascii: ".")), dot != lo, u.index(after: dot) != hi else { return nil }
            node = String(text[lo..<dot])
            port = String(text[u.index(after: dot)..<hi])
            return
        }
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
    /// nodes must not be searched from the start each time. One table by id; the edges leaving
    /// and entering each node as runs of edge numbers (`edgesFrom[fromStart[i]..<fromStart[i+1]]`
    /// for `nodes[i]`), in document order, rather than an array and a hash entry per node.
    private let nodeIndex: [String: Int]
    private let fromStart: [Int], edgesFrom: [Int32]
    private let intoStart: [Int], edgesInto: [Int32]

    /// `nodeIndex` maps every id to its place in `nodes`, and `endpoints` gives each edge's two
    /// nodes as places in `nodes`, when the caller has them (the loader); else they are made here.
    init(name: String?, description: String?, nodes: [NodeSpec], edges: [Edge],
         nodeIndex: [String: Int]? = nil, endpoints: [(from: Int, to: Int)]? = nil) {
        self.name = name
        self.description = description
        self.nodes = nodes
        self.edges = edges
        let index: [String: Int]
        if let nodeIndex {
            index = nodeIndex
        } else {
            var made: [String: Int] = [:]
            made.reserveCapacity(nodes.count)
            for (i, n) in nodes.enumerated() where made[n.id] == nil { made[n.id] = i }
            index = made
        }
        self.nodeIndex = index
        let ends = endpoints ?? edges.map { (index[$0.from.node] ?? -1, index[$0.to.node] ?? -1) }
        (fromStart, edgesFrom) = Self.runs(count: nodes.count, ends.lazy.map(\.from))
        (intoStart, edgesInto) = Self.runs(count: nodes.count, ends.lazy.map(\.to))
    }

    /// Edge numbers grouped by node place (a counting sort, stable): where each node's run starts,
    /// and the runs. An edge whose node is not in the graph (-1) is in no run.
    static func runs(count: Int, _ places: some Collection<Int>) -> ([Int], [Int32]) {
        var start = [Int](repeating: 0, count: count + 1)
        for p in places where p >= 0 { start[p + 1] += 1 }
        for i in 0..<count { start[i + 1] += start[i] }
        var next = start
        var runs = [Int32](repeating: 0, count: start[count])
        for (e, p) in places.enumerated() where p >= 0 {
            runs[next[p]] = Int32(e)
            next[p] += 1
        }
        return (start, runs)
    }

    public func node(_ id: String) -> NodeSpec? { nodeIndex[id].map { nodes[$0] } }
    public func edges(from node: String) -> [Edge] {
        guard let i = nodeIndex[node] else { return [] }
        return edgesFrom[fromStart[i]..<fromStart[i + 1]].map { edges[Int($0)] }
    }
    public func edges(into node: String) -> [Edge] {
        guard let i = nodeIndex[node] else { return [] }
        return edgesInto[intoStart[i]..<intoStart[i + 1]].map { edges[Int($0)] }
    }

    /// Makes each node as a run would, building nothing: a node's `init` checks what only it
    /// can (a duration under half a frame at its rate, say). Throws the invalid-graph problems
    /// found, so that `graphctl validate` refuses what `run` would; other errors (a device to
    /// open, a display) are the run's to find.
    public func checkNodes() throws(GraphError) {
        var problems: [GraphError.Problem] = []
        for spec in nodes {
            let context = NodeContext(id: spec.id, parameters: spec.parameters,
                                      connectedInputs: Set(edges(into: spec.id).map(\.to.port)),
                                      connectedOutputs: Set(edges(from: spec.id).map(\.from.port)))
            do {
                _ = try spec.type.init(context: context)
            } catch where error.code == .invalidGraph {
                problems += error.problems
            } catch {}
        }
        if !problems.isEmpty { throw GraphError(.invalidGraph, problems) }
    }
}

extension Substring {
    func trimmingSpaces() -> Substring {
        var s = self
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return s
    }
}
