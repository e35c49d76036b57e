import Testing
@testable import GraphKitCore
import GraphKit
import Nodes

/// Passes 4a-c alone: required inputs, bounded inputs, and the order (or a cycle).
@Suite struct GraphChecksTests {
    func tables(_ nodes: String, _ edges: String) throws -> (NodeTable, EdgeTable) {
        guard case .object(let members) = try JSONParser.parse(nodes) else { throw GraphError(.usage, "not an object") }
        let table = ResolveNodes.run(members, overrides: [], registry: .builtIn).result
        return (table, ResolveEdges.run(try JSONParser.parse(edges), nodes: table).result)
    }

    /// Sources first, whatever the document's order of nodes and edges; a node whose type is
    /// unknown has no place.
    @Test func theOrderPutsEveryResolvedNodeAfterWhatFeedsIt() throws {
        let (nodes, edges) = try tables(
            #"{ "file": { "type": "sink.mp4", "params": { "path": "a.m4a" } }, "aac": { "type": "encode.aac" }, "x": { "type": "nope" }, "mic": { "type": "capture.audio" } }"#,
            #"["aac.out -> file.audio", "mic.out -> aac.in"]"#)
        let order = TopologicalOrder.run(nodes, edges)
        #expect(order.problems.isEmpty)
        #expect(order.result.map { nodes.ids[$0] } == ["mic", "aac", "file"])
    }

    @Test func aCycleIsNamedAndLeftOutOfTheOrder() throws {
        let (nodes, edges) = try tables(#"{ "mic": { "type": "capture.audio" }, "a": { "type": "effect.gain" }, "b": { "type": "effect.gain" } }"#,
                                        #"["a.out -> b.in", "b.out -> a.in"]"#)
        let order = TopologicalOrder.run(nodes, edges)
        #expect(order.result == [0])
        #expect(order.problems.map(\.description) == [#"edges: the graph has a cycle through "a", "b"; data must flow one way"#])
    }

    /// A node a rejected edge names is not judged again; the others are.
    @Test func requiredInputsSkipWhatABadEdgeNamed() throws {
        let (nodes, edges) = try tables(#"{ "g": { "type": "effect.gain" }, "h": { "type": "effect.gain" }, "file": { "type": "sink.mp4", "params": { "path": "a.m4a" } } }"#,
                                        #"["nope.out -> g.in"]"#)
        #expect(edges.touchedByBadEdges == ["nope", "g"])
        #expect(RequiredInputs.run(nodes, edges).map(\.description) == [
            #"nodes.h: input "in" of effect.gain is not connected"#,
            "nodes.file: sink.mp4 needs at least one of its inputs connected (audio, video)",
        ])
    }

    /// An endless source upstream of a consumer that needs a known length, through a node
    /// between them; a bounded one (a capture with a duration) is not named.
    @Test func boundedInputsNameEachEndlessSourceUpstream() throws {
        let (nodes, edges) = try tables(
            #"{ "live": { "type": "capture.audio", "params": { "duration": 0 } }, "short": { "type": "capture.audio", "params": { "duration": 1 } }, "g": { "type": "effect.gain" }, "w": { "type": "analysis.waveform", "params": { "width": 10 } }, "v": { "type": "analysis.waveform", "params": { "width": 10 } } }"#,
            #"["live.out -> g.in", "g.out -> w.in", "short.out -> v.in"]"#)
        #expect(BoundedInputs.run(nodes, edges).map(\.description) == [
            #"nodes.w.params.width: width needs a stream of known length, but "live" (capture.audio) runs until stopped"#,
        ])
    }
}
