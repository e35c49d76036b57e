import Testing
@testable import GraphKitCore
import GraphKit
import Nodes

/// Pass 2 alone: ids, types, parameters and `--set`s, into a table of nodes by number.
@Suite struct ResolveNodesTests {
    func resolve(_ nodes: String, _ overrides: [String] = []) throws -> Passed<NodeTable> {
        guard case .object(let members) = try JSONParser.parse(nodes) else { throw GraphError(.usage, "not an object") }
        return ResolveNodes.run(members, overrides: try overrides.map { try GraphLoader.Override(parsing: $0) }, registry: .builtIn)
    }

    /// Each type is asked for its descriptor once, however many nodes have it; an id given
    /// twice keeps its first number; a node whose type is unknown keeps its number, unresolved.
    @Test func nodesAreNumberedInDocumentOrderAndTypesMetOnce() throws {
        let pass = try resolve(#"{ "g1": { "type": "effect.gain" }, "x": { "type": "effect.gian" }, "g2": { "type": "effect.gain" }, "g1": { "type": "decode" } }"#)
        let table = pass.result
        #expect(table.ids == ["g1", "x", "g2"])
        #expect(table.number == ["g1": 0, "x": 1, "g2": 2])
        #expect(table.kind(1) == nil)
        let first = try #require(table.kind(0)), second = try #require(table.kind(2))
        #expect(first === second)
        #expect(first.descriptor.type == "effect.gain")
        #expect(table.specs(in: [0, 2]) == nil)  // not every node: no graph can be made
        #expect(pass.problems.map(\.location) == ["nodes.x.type", "nodes.g1"])
    }

    /// A `--set` replaces the file's value and is remembered as the place of that parameter;
    /// one naming no node is reported after the nodes, with the nearest id.
    @Test func overridesAreAppliedAndRemembered() throws {
        let pass = try resolve(#"{ "w": { "type": "analysis.waveform", "params": { "json": "a.json", "width": 100 } } }"#,
                               ["w.json=b.json", "v.width=3"])
        let node = try #require(pass.result[0])
        #expect(node.spec.parameters["json"] == .string("b.json"))
        #expect(node.location(of: "json") == "--set w.json")
        #expect(node.location(of: "width") == "nodes.w.params.width")
        #expect(pass.problems.map(\.description) == [#"--set v.width: no node "v" in the graph; did you mean "w"?"#])
    }

    /// A value refused is reported, and the node is still resolved (its other problems follow).
    @Test func aRefusedValueLeavesTheNodeResolved() throws {
        let pass = try resolve(#"{ "mic": { "type": "capture.audio", "params": { "channels": 9, "sampleRte": 1 } } }"#)
        #expect(pass.result.kind(0)?.descriptor.type == "capture.audio")
        #expect(pass.result.parameters(0)?["channels"] == nil)
        #expect(pass.problems.map(\.location) == ["nodes.mic.params.channels", "nodes.mic.params.sampleRte"])
    }

    /// The parameters that name a file the node writes, found once per type.
    @Test func aTypeKnowsWhichParametersWriteFiles() {
        #expect(NodeKind(MP4SinkNode.self).writtenFiles == ["path"])
        #expect(NodeKind(GainNode.self).writtenFiles.isEmpty)
        #expect(Set(NodeKind(WaveformNode.self).writtenFiles).isSuperset(of: ["json", "png"]))
    }
}
