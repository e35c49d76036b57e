/// Pass 4a: every input a node declares `always` is connected, and a node that needs one of its
/// inputs (a muxer) has one. A node a rejected edge names is not judged: its missing input is
/// most likely that edge, already reported.
enum RequiredInputs {
    static func run(_ nodes: NodeTable, _ edges: EdgeTable) -> [GraphError.Problem] {
        var problems = Problems()
        for k in nodes.indices {
            guard let kind = nodes.kind(k), edges.touchedByBadEdges.isEmpty || !edges.touchedByBadEdges.contains(nodes.ids[k]) else { continue }
            let slots = edges.slots.slots(of: k)
            for (j, input) in kind.descriptor.inputs.enumerated() where input.presence == .always && edges.connectedBy[slots.lowerBound + j] == nil {
                problems.add("nodes.\(nodes.ids[k])", "input \"\(input.name)\" of \(kind.descriptor.type) is not connected")
            }
            if kind.descriptor.requiresAnInput, slots.allSatisfy({ edges.connectedBy[$0] == nil }) {
                let names = kind.descriptor.inputs.map(\.name).joined(separator: ", ")
                problems.add("nodes.\(nodes.ids[k])", "\(kind.descriptor.type) needs at least one of its inputs connected (\(names))")
            }
        }
        return problems.list
    }
}

/// Pass 4b: a consumer that needs a stream of known length (a waveform fitted to a width) is fed,
/// through any path, by no source that runs until stopped (a capture with no duration); each such
/// source is reported at the consumer's parameter that asks for it. Searched from whichever side
/// has fewer nodes, so a graph with few of either costs one pass per such node, and one with none
/// of either costs nothing.
enum BoundedInputs {
    static func run(_ nodes: NodeTable, _ edges: EdgeTable) -> [GraphError.Problem] {
        /// The consumers, each with the parameter that makes it need a bounded stream.
        var needing: [(node: Int, parameter: String)] = []
        /// The sources that run until stopped, with their type (for the message).
        var unbounded: [(node: Int, type: String)] = []
        for k in nodes.indices {
            guard let kind = nodes.kind(k) else { continue }
            if let c = kind.descriptor.needsBoundedInputWhen, let parameters = nodes.parameters(k), c.holds(in: parameters) {
                needing.append((k, c.parameter))
            }
            if let c = kind.descriptor.unboundedWhen, let parameters = nodes.parameters(k), c.holds(in: parameters) {
                unbounded.append((k, kind.descriptor.type))
            }
        }
        guard !needing.isEmpty, !unbounded.isEmpty else { return [] }
        let connections = edges.connections
        /// The last search that reached node k (none yet: nil).
        var mark = [Int?](repeating: nil, count: nodes.count)
        func search(_ start: Int, _ id: Int, _ runs: Runs, _ next: (Int) -> Int) {
            var frontier = [start]
            while let k = frontier.popLast() {
                for e in runs[k] {
                    let n = next(Int(e))
                    if mark[n] != id { mark[n] = id; frontier.append(n) }
                }
            }
        }
        var feeding: [[(node: Int, type: String)]]   // by position in `needing`: the endless sources upstream, in document order
        if needing.count <= unbounded.count {
            let incoming = Runs(count: nodes.count, connections.lazy.map(\.to))
            feeding = needing.enumerated().map { (s, n) in
                search(n.node, s, incoming) { connections[$0].from }
                return unbounded.filter { mark[$0.node] == s }
            }
        } else {
            feeding = Array(repeating: [], count: needing.count)
            for (s, u) in unbounded.enumerated() {
                search(u.node, s, edges.outgoing) { connections[$0].to }
                for (p, n) in needing.enumerated() where mark[n.node] == s { feeding[p].append(u) }
            }
        }
        var problems = Problems()
        for (p, n) in needing.enumerated() {
            for u in feeding[p] {
                problems.add("nodes.\(nodes.ids[n.node]).params.\(n.parameter)",
                             "\(n.parameter) needs a stream of known length, but \"\(nodes.ids[u.node])\" (\(u.type)) runs until stopped")
            }
        }
        return problems.list
    }
}

/// Pass 4c: data flows one way. Kahn's algorithm on node numbers, linear in nodes and edges:
/// the nodes that were resolved, sources first; a cycle is a problem naming its nodes.
enum TopologicalOrder {
    static func run(_ nodes: NodeTable, _ edges: EdgeTable) -> Passed<[Int]> {
        let connections = edges.connections
        var indegree = [Int](repeating: 0, count: nodes.count)
        for c in connections { indegree[c.to] += 1 }
        var order: [Int] = []
        order.reserveCapacity(nodes.count)
        var resolved = 0
        for k in nodes.indices where nodes.kind(k) != nil {
            resolved += 1
            if indegree[k] == 0 { order.append(k) }
        }
        var next = 0
        while next < order.count {
            let k = order[next]
            next += 1
            for e in edges.outgoing[k] {
                let target = connections[Int(e)].to
                indegree[target] -= 1
                if indegree[target] == 0 { order.append(target) }
            }
        }
        var problems = Problems()
        if order.count < resolved {
            var placed = [Bool](repeating: false, count: nodes.count)
            for k in order { placed[k] = true }
            let inCycle = nodes.indices.filter { nodes.kind($0) != nil && !placed[$0] }.map { "\"\(nodes.ids[$0])\"" }
            problems.add("edges", "the graph has a cycle through \(inCycle.joined(separator: ", ")); data must flow one way")
        }
        return Passed(result: order, problems: problems.list)
    }
}
