/// An edge that can be made: its nodes by number, its output and input by their place in their
/// descriptors' lists.
struct Connection {
    var edge: Graph.Edge
    var from: Int, output: Int
    var to: Int, input: Int
}

/// Edge numbers grouped by node number (a counting sort, stable): `self[k]` is the run of
/// connections that leave (or enter) node k, in document order.
struct Runs {
    private let start: [Int]
    private let items: [Int32]

    init(count: Int, _ places: some Collection<Int>) {
        (start, items) = Graph.runs(count: count, places)
    }

    subscript(node: Int) -> ArraySlice<Int32> { items[start[node]..<start[node + 1]] }
}

/// Every input of every node, numbered: node k's input j is slot `base[k] + j`.
struct InputSlots {
    private let base: [Int]

    init(_ nodes: NodeTable) {
        var base = [Int](repeating: 0, count: nodes.count + 1)
        for k in nodes.indices { base[k + 1] = base[k] + (nodes.kind(k)?.descriptor.inputs.count ?? 0) }
        self.base = base
    }

    var count: Int { base[base.count - 1] }
    func slot(node: Int, input: Int) -> Int { base[node] + input }
    func slots(of node: Int) -> Range<Int> { base[node]..<base[node + 1] }
}

/// The graph's connections.
struct EdgeTable {
    /// The edges accepted, in document order.
    var connections: [Connection] = []
    /// By input slot: the document index of the edge that connects it (the first to reach it).
    var connectedBy: [Int?]
    var slots: InputSlots
    /// The ids a rejected edge names: their inputs are not judged again (a missing input there
    /// is most likely that edge).
    var touchedByBadEdges: Set<String> = []
    /// The connections leaving each node, by node number.
    var outgoing: Runs

    init(slots: InputSlots) {
        self.slots = slots
        connectedBy = Array(repeating: nil, count: slots.count)
        outgoing = Runs(count: 0, [])
    }
}

/// Pass 3: `edges`, an array of `"node.port -> node.port"` or `{from, to, capacity}`: each end
/// names a node of the graph and one of its ports (with the nearest name when it does not), the
/// output's formats meet the input's, no node feeds itself, a capacity bounds only a media stream,
/// and each input takes one connection (a repeat is reported as a duplicate).
struct ResolveEdges {
    private let nodes: NodeTable
    private var problems = Problems()
    private var suggestions: NodeIDSuggestions

    static func run(_ edges: JSONValue?, nodes: NodeTable) -> Passed<EdgeTable> {
        var pass = ResolveEdges(nodes: nodes)
        let table = pass.resolve(edges)
        return Passed(result: table, problems: pass.problems.list)
    }

    private init(nodes: NodeTable) {
        self.nodes = nodes
        suggestions = NodeIDSuggestions(nodes.ids)
    }

    /// An output (node and port numbers) and an input slot: one connection.
    private struct PairKey: Hashable {
        var node: Int, output: Int, slot: Int
    }

    private mutating func resolve(_ value: JSONValue?) -> EdgeTable {
        var table = EdgeTable(slots: InputSlots(nodes))
        switch value {
        case .array(let items)?:
            table.connections.reserveCapacity(items.count)
            /// By input slot: the output of the edge that connects it.
            var firstFrom = [(node: Int, port: Int)?](repeating: nil, count: table.slots.count)
            /// The later pairs into an input already reached (rare): output and input slot.
            var laterPairs: [PairKey: Int] = [:]
            for (i, item) in items.enumerated() {
                let before = problems.count
                guard let c = connection(i, item) else {
                    // Whatever a rejected edge names, its connections are not judged again.
                    if problems.count > before { table.touchedByBadEdges.formUnion(Self.nodeNames(in: item)) }
                    continue
                }
                let slot = table.slots.slot(node: c.to, input: c.input)
                guard let owner = table.connectedBy[slot] else {
                    table.connectedBy[slot] = i
                    firstFrom[slot] = (c.from, c.output)
                    table.connections.append(c)
                    continue
                }
                let pair = PairKey(node: c.from, output: c.output, slot: slot)
                if let first = firstFrom[slot].map({ $0 == (c.from, c.output) }) == true ? owner : laterPairs[pair] {
                    problems.add("edges[\(i)]", "duplicate of edges[\(first)] (\"\(c.edge.from) -> \(c.edge.to)\")")
                    continue
                }
                laterPairs[pair] = i
                problems.add("edges[\(i)]", "input \"\(c.edge.to)\" is already connected by edges[\(owner)]; an input takes one connection (an output may feed several)")
            }
        case nil: break
        case let v?: problems.add("edges", "expected an array, got \(v.typeName)")
        }
        table.outgoing = Runs(count: nodes.count, table.connections.lazy.map(\.from))
        return table
    }

    /// The node ids an edge mentions, as far as they can be read.
    static func nodeNames(in item: JSONValue) -> [String] {
        var texts: [Substring] = []
        switch item {
        case .string(let s): texts = splitArrow(s)
        case .object: texts = [item["from"], item["to"]].compactMap { if case .string(let s)? = $0 { return Substring(s) }; return nil }
        default: break
        }
        return texts.compactMap { PortRef($0)?.node }
    }

    /// `text` split at each `->`, like Foundation's `components(separatedBy: "->")`: characters
    /// are compared, so a `>` that a combining mark follows is not an arrow. In ASCII a byte is a
    /// character (CR LF aside, and neither is `-` or `>`), so bytes are compared, faster.
    static func splitArrow(_ text: String) -> [Substring] {
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return split(text, text.utf8, UInt8(ascii: "-"), UInt8(ascii: ">")) }
        return split(text, text, "-", ">")
    }

    private static func split<View: Collection>(_ text: String, _ view: View, _ dash: View.Element, _ greater: View.Element)
        -> [Substring] where View.Index == String.Index, View.Element: Equatable
    {
        var parts: [Substring] = []
        var start = view.startIndex, i = view.startIndex
        while i != view.endIndex {
            let next = view.index(after: i)
            if view[i] == dash, next != view.endIndex, view[next] == greater {
                parts.append(text[start..<i])
                i = view.index(after: next)
                start = i
            } else {
                i = next
            }
        }
        parts.append(text[start...])
        return parts
    }

    /// Edge `i` as a connection, or nil (reported, unless an end's node was already reported:
    /// a node whose type is unknown has no ports to check).
    private mutating func connection(_ i: Int, _ item: JSONValue) -> Connection? {
        let at = "edges[\(i)]"
        var fromText: Substring?, toText: Substring?
        var fromAt = at, toAt = at
        var capacity = EdgeCapacity.default
        switch item {
        case .string(let s):
            let parts = Self.splitArrow(s)
            guard parts.count == 2 else {
                problems.add(at, "expected \"node.port -> node.port\", got \"\(s)\"")
                return nil
            }
            fromText = parts[0]
            toText = parts[1]
        case .object(let members):
            problems.checkKeys(members, allowed: ["from", "to", "capacity"], at: at)
            fromAt = "\(at).from"
            toAt = "\(at).to"
            if case .string(let f)? = item["from"] { fromText = Substring(f) } else { problems.add(fromAt, "expected \"node.port\"") }
            if case .string(let t)? = item["to"] { toText = Substring(t) } else { problems.add(toAt, "expected \"node.port\"") }
            if let c = item["capacity"] { capacity = edgeCapacity(c, at: "\(at).capacity") }
        default:
            problems.add(at, "expected \"node.port -> node.port\" or an object with from and to, got \(item.typeName)")
            return nil
        }
        guard let fromText, let toText else { return nil }
        guard let from = PortRef(fromText) else {
            problems.add(fromAt, "expected \"node.port\", got \"\(fromText.trimmingSpaces())\"")
            return nil
        }
        guard let to = PortRef(toText) else {
            problems.add(toAt, "expected \"node.port\", got \"\(toText.trimmingSpaces())\"")
            return nil
        }
        let fromNumber = nodes.number[from.node], toNumber = nodes.number[to.node]
        if fromNumber == nil { problems.add(fromAt, "no node \"\(from.node)\" in the graph" + suggestions.text(for: from.node)) }
        if toNumber == nil { problems.add(toAt, "no node \"\(to.node)\" in the graph" + suggestions.text(for: to.node)) }
        guard let fromNumber, let toNumber else { return nil }
        // A node whose type was unknown was already reported; its ports cannot be checked.
        guard let fd = nodes.kind(fromNumber)?.descriptor, let td = nodes.kind(toNumber)?.descriptor else { return nil }
        guard let output = fd.outputs.firstIndex(where: { $0.name == from.port }) else {
            problems.add(fromAt, "\(fd.type) node \"\(from.node)\" has no output \"\(from.port)\"" + Self.portList(fd.outputs, "outputs")
                         + Self.suggestion(from.port, fd.outputs))
            return nil
        }
        guard let input = td.inputs.firstIndex(where: { $0.name == to.port }) else {
            problems.add(toAt, "\(td.type) node \"\(to.node)\" has no input \"\(to.port)\"" + Self.portList(td.inputs, "inputs")
                         + Self.suggestion(to.port, td.inputs))
            return nil
        }
        let out = fd.outputs[output], into = td.inputs[input]
        guard out.formats.intersects(into.formats) else {
            problems.add(at, "cannot connect \"\(from)\" (\(out.formats)) to \"\(to)\" (\(into.formats))")
            return nil
        }
        if fromNumber == toNumber {
            problems.add(at, "node \"\(from.node)\" is connected to itself")
            return nil
        }
        if capacity != .default, out.formats == .container {
            // Not silently ignored: the demuxer pulls a file's bytes itself, in large blocks and
            // with seeks, so there is nothing to bound.
            problems.add("\(at).capacity", "\"\(from)\" carries a file's bytes, which its demuxer reads directly; a capacity bounds only media streams")
            return nil
        }
        return Connection(edge: Graph.Edge(from: from, to: to, capacity: capacity, index: i),
                          from: fromNumber, output: output, to: toNumber, input: input)
    }

    private static func portList(_ ports: [PortDescriptor], _ what: String) -> String {
        ports.isEmpty ? " (it has no \(what))" : " (its \(what): \(ports.map(\.name).joined(separator: ", ")))"
    }

    private static func suggestion(_ name: String, _ ports: [PortDescriptor]) -> String {
        closestMatch(to: name, in: ports.map(\.name)).map { "; did you mean \"\($0)\"?" } ?? ""
    }

    private mutating func edgeCapacity(_ value: JSONValue, at: String) -> EdgeCapacity {
        guard case .object(let members) = value else {
            problems.add(at, "expected an object with buffers, bytes or seconds, got \(value.typeName)")
            return .default
        }
        problems.checkKeys(members, allowed: ["buffers", "bytes", "seconds"], at: at)
        var c = EdgeCapacity()
        for (key, v) in members {
            switch (key, v) {
            case ("buffers", .number(let n)) where n >= 1 && n == n.rounded() && n <= 1_000_000: c.buffers = Int(n)
            case ("bytes", .number(let n)) where n >= 1 && n == n.rounded() && n <= 4e9: c.bytes = Int(n)
            case ("seconds", .number(let n)) where n > 0 && n <= 3600: c.seconds = n
            case ("buffers", _), ("bytes", _): problems.add("\(at).\(key)", "expected a whole number of at least 1, got \(v)")
            case ("seconds", _): problems.add("\(at).\(key)", "expected a number of seconds above 0 (at most 3600), got \(v)")
            default: break
            }
        }
        if members.isEmpty {
            problems.add(at, "name at least one of buffers, bytes or seconds")
            return .default
        }
        return c
    }
}
