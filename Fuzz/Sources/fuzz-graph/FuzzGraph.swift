import GraphKit
import Nodes

/// One input: a graph document, then optionally a NUL byte and `--set` overrides, one a line.
/// Loaded as `graphctl validate` loads a file (`GraphLoader.load(bytes:file:overrides:)`).
/// A finding is a crash, a thrown error that is not an invalid graph or names no place, a graph
/// that breaks what the loader promises, or two loads of the same input that disagree.
let loader = GraphLoader(registry: .builtIn)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGraph(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let document: [UInt8], overrides: [String]
    if let nul = input.firstIndex(of: 0) {
        document = Array(input[..<nul])
        overrides = input[(nul + 1)...].split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }
    } else {
        document = input
        overrides = []
    }
    let first = outcome(document, overrides), second = outcome(document, overrides)
    guard first == second else { fatalError("two loads of one input disagree:\n\(first)\n\(second)") }
    return 0
}

enum Outcome: Equatable {
    case graph([String])
    case error(GraphError)
}

func outcome(_ document: [UInt8], _ overrideTexts: [String]) -> Outcome {
    do {
        var overrides: [GraphLoader.Override] = []
        for text in overrideTexts { overrides.append(try GraphLoader.Override(parsing: text)) }
        let graph = try loader.load(bytes: document, file: "fuzz.json", overrides: overrides)
        return .graph(check(graph))
    } catch {
        check(error)
        return .error(error)
    }
}

/// Everything wrong in a graph is an invalid graph (65), each problem at a place in the
/// document or the command line.
func check(_ error: GraphError) {
    guard error.code == .invalidGraph else { fatalError("a loader error that is not an invalid graph: \(error.code): \(error)") }
    for p in error.problems {
        guard let location = p.location, !location.isEmpty, !p.message.isEmpty else { fatalError("a problem with no place or no message: \(p)") }
    }
}

/// What a loaded graph promises (Graph's documentation): every node once, in an order where each
/// edge goes forward, each edge between ports its nodes have, each input fed once, and the
/// lookups agreeing with the lists. Returns a summary for comparing two loads.
func check(_ graph: Graph) -> [String] {
    var place: [String: Int] = [:]
    for (i, n) in graph.nodes.enumerated() {
        guard place.updateValue(i, forKey: n.id) == nil else { fatalError("node \(n.id) twice") }
        guard graph.node(n.id)?.id == n.id else { fatalError("node(\(n.id)) does not find it") }
        for p in n.descriptor.parameters where p.isRequired {
            guard n.parameters[p.name] != nil else { fatalError("\(n.id): required \(p.name) has no value") }
        }
    }
    var fed = Set<PortRef>()
    var summary = graph.nodes.map { "\($0.id) \($0.descriptor.type)" }
    for (i, e) in graph.edges.enumerated() {
        guard let from = place[e.from.node], let to = place[e.to.node] else { fatalError("edge \(i) names a node not in the graph") }
        guard from < to else { fatalError("edge \(i) (\(e.from) -> \(e.to)) goes backwards in the order") }
        guard graph.nodes[from].descriptor.output(e.from.port) != nil, graph.nodes[to].descriptor.input(e.to.port) != nil else {
            fatalError("edge \(i) names a port its node lacks")
        }
        guard fed.insert(e.to).inserted else { fatalError("input \(e.to) fed twice") }
        guard graph.edges(from: e.from.node).contains(e), graph.edges(into: e.to.node).contains(e) else {
            fatalError("edge \(i) missing from edges(from:) or edges(into:)")
        }
        summary.append("\(e.index): \(e.from) -> \(e.to) \(e.capacity)")
    }
    let listed = graph.nodes.reduce(0) { $0 + graph.edges(from: $1.id).count }
    guard listed == graph.edges.count else { fatalError("edges(from:) lists \(listed) edges of \(graph.edges.count)") }
    return summary
}
