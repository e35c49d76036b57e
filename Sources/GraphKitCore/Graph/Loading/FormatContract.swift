/// Pass 5: declared formats are a contract at both ends. Each output's formats, as its node's
/// parameters and inputs make them (``PortDescriptor/Carriage``), must meet what every input it
/// feeds takes, and an output that feeds several must carry one format that all of them take
/// (a tee negotiates one). A refusal is reported at the parameter that decides the format when
/// there is one (`nodes.dec.params.sampleFormat`, or the `--set` that gave it), else at the edge.
/// In topological order, so each node's inputs are known before its outputs are worked out; run
/// only on a graph the passes before found whole.
struct FormatContract {
    /// What an output offers: the formats it can carry in this graph, and the node and the
    /// parameters that decide them (kept as the formats pass through effects).
    private struct Offer {
        var formats: FormatSet
        var origin: (node: Int, port: Int)
        var decidedBy: [FormatSet.Aspect: String]
    }

    /// What reaches an input: the formats its output gives everything it feeds, and the offer
    /// they came from.
    private struct Arrival {
        var formats: FormatSet
        var offer: Offer
    }

    private let nodes: NodeTable
    private let edges: EdgeTable
    private var problems = Problems()

    static func run(_ nodes: NodeTable, _ edges: EdgeTable, order: [Int]) -> [GraphError.Problem] {
        var pass = FormatContract(nodes: nodes, edges: edges)
        pass.follow(order)
        return pass.problems.list
    }

    private init(nodes: NodeTable, edges: EdgeTable) {
        self.nodes = nodes
        self.edges = edges
    }

    private mutating func follow(_ order: [Int]) {
        let connections = edges.connections
        /// By node number, then by the input's place in its descriptor: what reaches it.
        var arriving = [[Arrival?]](repeating: [], count: nodes.count)
        for k in nodes.indices {
            if let kind = nodes.kind(k) { arriving[k] = Array(repeating: nil, count: kind.descriptor.inputs.count) }
        }
        for k in order {
            guard let kind = nodes.kind(k) else { continue }
            let edgesOut = edges.outgoing[k].map(Int.init)
            guard !edgesOut.isEmpty else { continue }
            for (j, port) in kind.descriptor.outputs.enumerated() {
                let feeding = edgesOut.filter { connections[$0].output == j }
                guard !feeding.isEmpty else { continue }
                let offer = self.offer(of: port, k, j, kind: kind, arriving: arriving[k])
                guard let common = common(offer, feeding) else { continue }
                for e in feeding {
                    arriving[connections[e].to][connections[e].input] = Arrival(formats: common, offer: offer)
                }
            }
        }
    }

    /// What output `j` of node `k` offers, given what reaches the node's inputs.
    private func offer(of port: PortDescriptor, _ k: Int, _ j: Int, kind: NodeKind, arriving: [Arrival?]) -> Offer {
        switch port.carriage {
        case .formats:
            return Offer(formats: port.formats, origin: (k, j), decidedBy: [:])
        case .parameters(let decidedBy, _):
            return Offer(formats: port.carried(with: nodes.parameters(k) ?? Parameters()) { _ in nil }, origin: (k, j), decidedBy: decidedBy)
        case .input(let name):
            guard let i = kind.descriptor.inputs.firstIndex(where: { $0.name == name }), let upstream = arriving[i] else {
                return Offer(formats: port.formats, origin: (k, j), decidedBy: [:])
            }
            var offer = upstream.offer
            offer.formats = upstream.formats.intersection(port.formats)
            return offer
        }
    }

    /// The formats `offer` can give every input of `feeding` (connection numbers) at once, each
    /// refusal reported; nil when there is none (what follows is judged by its declarations alone).
    private mutating func common(_ offer: Offer, _ feeding: [Int]) -> FormatSet? {
        let connections = edges.connections
        var common: FormatSet? = offer.formats
        for e in feeding {
            let c = connections[e]
            guard let target = nodes.kind(c.to)?.descriptor else { continue }
            let accepted = target.inputs[c.input].formats
            if !offer.formats.intersects(accepted) {
                let aspects = offer.formats.differences(from: accepted)
                report(offer, at: c.edge, decidedBy: aspects.compactMap { offer.decidedBy[$0] },
                       "which \"\(c.edge.to)\" (\(target.type)) does not take: it takes \(accepted)")
                common = nil
            } else if let before = common {
                let narrowed = before.intersection(accepted)
                common = narrowed
                if narrowed.isEmpty {
                    // Each takes some of it, but not one format in common with those before.
                    let earlier = feeding.prefix { $0 != e }.map { "\"\(connections[$0].edge.to)\"" }
                    let aspects = before.differences(from: accepted)
                    report(offer, at: c.edge, decidedBy: aspects.compactMap { offer.decidedBy[$0] },
                           "which \(ParameterDescriptor.list(earlier + ["\"\(c.edge.to)\""], "and")) take in no one format in common "
                           + "(an output gives everything it feeds one format)")
                    common = nil
                }
            }
        }
        return common
    }

    /// A format that cannot go on along `edge`: `"dec.audio" carries audio/pcm F32LE … as
    /// sampleFormat is "f32le", through "gain.out", which "s16.in" … does not take …`, at the
    /// first of `parameters` (where its value was given), else at the edge.
    private mutating func report(_ offer: Offer, at edge: Graph.Edge, decidedBy parameters: [String], _ consequence: String) {
        guard let origin = nodes[offer.origin.node] else { return }
        let output = "\"\(origin.id).\(origin.descriptor.outputs[offer.origin.port].name)\""
        var text = "\(output) carries \(offer.formats)"
        if !parameters.isEmpty {
            text += " as " + ParameterDescriptor.list(parameters.map { name in
                "\(name) is " + (origin.spec.parameters[name].map(\.description) ?? "not given")
            }, "and")
        }
        if edge.from.node != origin.id { text += ", through \"\(edge.from)\"" }
        text += ", " + consequence
        if let parameter = parameters.first {
            problems.add(origin.location(of: parameter), text + " (edges[\(edge.index)]: \"\(edge.from) -> \(edge.to)\")")
        } else {
            problems.add("edges[\(edge.index)]", text)
        }
    }
}
