import Testing
@testable import GraphKitCore
import GraphKit
import Nodes

/// Pass 3 alone: edges over a table of nodes.
@Suite struct ResolveEdgesTests {
    static let nodes = #"{ "mic": { "type": "capture.audio" }, "g": { "type": "effect.gain" }, "x": { "type": "effect.gian" }, "aac": { "type": "encode.aac" } }"#

    func resolve(_ edges: String) throws -> (NodeTable, Passed<EdgeTable>) {
        guard case .object(let members) = try JSONParser.parse(Self.nodes) else { throw GraphError(.usage, "not an object") }
        let table = ResolveNodes.run(members, overrides: [], registry: .builtIn).result
        return (table, ResolveEdges.run(try JSONParser.parse(edges), nodes: table))
    }

    /// Each accepted edge becomes a connection by node and port number, owns its input, and is
    /// found among the connections leaving its node.
    @Test func edgesBecomeConnectionsByNumber() throws {
        let (nodes, pass) = try resolve(#"["g.out -> aac.in", { "from": "mic.out", "to": "g.in", "capacity": { "buffers": 4 } }]"#)
        #expect(pass.problems.isEmpty)
        let table = pass.result
        #expect(table.connections.map { "\($0.from).\($0.output) -> \($0.to).\($0.input)" } == ["1.0 -> 3.0", "0.0 -> 1.0"])
        #expect(table.connections[1].edge.capacity == EdgeCapacity(buffers: 4))
        #expect(table.connections[1].edge.index == 1)
        #expect(table.connectedBy[table.slots.slot(node: nodes.number["g"] ?? -1, input: 0)] == 1)
        #expect(table.connectedBy[table.slots.slot(node: nodes.number["aac"] ?? -1, input: 0)] == 0)
        #expect(Array(table.outgoing[0]) == [1] && Array(table.outgoing[1]) == [0] && table.outgoing[3].isEmpty)
        // The unresolved node has no inputs: its slots are empty.
        #expect(table.slots.slots(of: 2).isEmpty)
    }

    /// A rejected edge names its nodes (so their inputs are not judged again); an edge to a node
    /// whose type is unknown is dropped without a second problem (its type was reported).
    @Test func rejectedEdgesMarkTheirNodes() throws {
        let (_, pass) = try resolve(#"["mic.out -> g.inn", "mic.out -> x.in", "g.out -> g.in"]"#)
        #expect(pass.result.connections.isEmpty)
        #expect(pass.result.touchedByBadEdges == ["mic", "g"])
        #expect(pass.problems.map(\.description) == [
            #"edges[0]: effect.gain node "g" has no input "inn" (its inputs: in); did you mean "in"?"#,
            #"edges[2]: node "g" is connected to itself"#,
        ])
    }

    @Test func edgesThatAreNoArrayAreReportedHere() throws {
        let (_, pass) = try resolve(#"{ "a": 1 }"#)
        #expect(pass.problems.map(\.description) == ["edges: expected an array, got an object"])
    }
}
