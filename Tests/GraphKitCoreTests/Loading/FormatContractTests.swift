import Testing
import TestSupport
@testable import GraphKitCore
import GraphKit
import Nodes

/// Pass 5 alone: formats followed from each output through the graph, in topological order.
@Suite struct FormatContractTests {
    func problems(_ nodes: String, _ edges: String, _ overrides: [String] = []) throws -> [String] {
        guard case .object(let members) = try JSONParser.parse(nodes) else { throw GraphError(.usage, "not an object") }
        let resolved = ResolveNodes.run(members, overrides: try overrides.map { try GraphLoader.Override(parsing: $0) },
                                        registry: Takes<TakesS16>.registry)
        let table = resolved.result
        let edges = ResolveEdges.run(try JSONParser.parse(edges), nodes: table)
        let order = TopologicalOrder.run(table, edges.result)
        #expect(resolved.problems.isEmpty && edges.problems.isEmpty && order.problems.isEmpty)
        return FormatContract.run(table, edges.result, order: order.result).map(\.description)
    }

    static let decode = #""src": { "type": "source.file", "params": { "path": "in.m4a" } }, "dec": { "type": "decode", "params": { "sampleFormat": "f32le" } }"#

    /// A format decided by a parameter travels through effects (each carries what reaches its
    /// input) and is refused where it cannot go on, at the parameter; an output that meets
    /// every input it feeds is no problem.
    @Test func aFormatIsFollowedThroughEffectsToWhereItIsRefused() throws {
        let f32 = "audio/pcm F32LE 1-768000 Hz 1-64 ch", s16 = "audio/pcm S16LE 1-768000 Hz 1-64 ch"
        #expect(try problems("{ \(Self.decode), \"g1\": { \"type\": \"effect.gain\" }, \"g2\": { \"type\": \"effect.gain\" }, \"take\": { \"type\": \"test.takes-s16le\" } }",
                             #"["g2.out -> take.in", "g1.out -> g2.in", "dec.audio -> g1.in", "src.out -> dec.in"]"#) == [
            #"nodes.dec.params.sampleFormat: "dec.audio" carries \#(f32) as sampleFormat is "f32le", through "g2.out", which "take.in" (test.takes-s16le) does not take: it takes \#(s16) (edges[0]: "g2.out -> take.in")"#,
        ])
        #expect(try problems("{ \(Self.decode), \"g1\": { \"type\": \"effect.gain\" }, \"take\": { \"type\": \"test.takes-f32le\" } }",
                             #"["src.out -> dec.in", "dec.audio -> g1.in", "g1.out -> take.in"]"#).isEmpty)
    }

    /// Once refused, a format is not followed further: what comes after is judged by its
    /// declarations alone, so one mistake is reported once.
    @Test func aRefusedFormatIsReportedOnce() throws {
        let found = try problems("{ \(Self.decode), \"take\": { \"type\": \"test.takes-s16le\" }, \"also\": { \"type\": \"test.takes-s16le\" } }",
                                 #"["src.out -> dec.in", "dec.audio -> take.in", "take.out -> also.in"]"#)
        #expect(found.count == 1)
        #expect(found.first?.hasPrefix("nodes.dec.params.sampleFormat:") == true)
    }
}
