import Testing
@testable import GraphKitCore
import GraphKit
import Nodes
import TestSupport

/// Generated graphs of many thousands of nodes load as small ones do (the loader is linear in
/// the document; the figure for 100,000 nodes is in BENCHMARKS.md, not asserted here), and a
/// problem in one still names its node and place in the document.
@Suite struct GraphLoaderScaleTests {
    let loader = GraphLoader(registry: .builtIn)

    /// A file decoded, then `chain` gains one after another into an AAC encoder and an M4A; and
    /// `fan` gains fed side by side by the decoder, each into a waveform. Edges as strings, in
    /// the order given (`shuffled` reverses them, so the document's order is not the flow's).
    static func document(chain: Int, fan: Int, shuffled: Bool = false,
                         change: (inout [(String, String)], inout [String]) -> Void = { _, _ in }) -> String {
        var nodes: [(String, String)] = [
            ("src", #"{ "type": "source.file", "params": { "path": "in.wav" } }"#),
            ("dec", #"{ "type": "decode" }"#),
        ]
        var edges = ["src.out -> dec.in"]
        var previous = "dec.audio"
        for i in 0..<chain {
            nodes.append(("g\(i)", #"{ "type": "effect.gain", "params": { "gain": 1.5 } }"#))
            edges.append("\(previous) -> g\(i).in")
            previous = "g\(i).out"
        }
        nodes.append(("aac", #"{ "type": "encode.aac" }"#))
        nodes.append(("file", #"{ "type": "sink.mp4", "params": { "path": "out.m4a" } }"#))
        edges += ["\(previous) -> aac.in", "aac.out -> file.audio"]
        for i in 0..<fan {
            nodes.append(("f\(i)", #"{ "type": "effect.gain", "params": { "db": -3 } }"#))
            nodes.append(("w\(i)", #"{ "type": "analysis.waveform" }"#))
            edges += ["dec.audio -> f\(i).in", "f\(i).out -> w\(i).in"]
        }
        change(&nodes, &edges)
        if shuffled { edges.reverse() }
        let n = nodes.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ",\n")
        let e = edges.map { "\"\($0)\"" }.joined(separator: ",\n")
        return "{ \"version\": 1, \"nodes\": {\n\(n)\n}, \"edges\": [\n\(e)\n] }"
    }

    func problems(_ text: String) -> [String] {
        do {
            _ = try loader.load(json: text)
            Issue.record("the graph loaded")
            return []
        } catch {
            #expect(error.code == .invalidGraph)
            return error.problems.map(\.description)
        }
    }

    @Test(.timeLimit(.minutes(10)))
    func twentyThousandNodesLoadInOrderWithTheirEdges() throws {
        let chain = 12_000, fan = 4_000
        let graph = try loader.load(json: Self.document(chain: chain, fan: fan, shuffled: true))
        #expect(graph.nodes.count == 4 + chain + 2 * fan)
        #expect(graph.edges.count == 3 + chain + 2 * fan)
        // Topological: every edge goes forward, and the chain's order is the flow's.
        var place: [String: Int] = [:]
        for (i, n) in graph.nodes.enumerated() { place[n.id] = i }
        #expect(place.count == graph.nodes.count)
        #expect(graph.nodes.first?.id == "src")
        #expect(graph.edges.allSatisfy { place[$0.from.node]! < place[$0.to.node]! })
        #expect(place["g0"]! < place["g5000"]! && place["g5000"]! < place["g11999"]! && place["g11999"]! < place["aac"]!)
        // The lookups: the decoder feeds the chain and every fan branch; each node is found.
        #expect(graph.edges(from: "dec").count == 1 + fan)
        #expect(graph.edges(from: "dec").map(\.to.node).contains("f3999"))
        #expect(graph.edges(into: "g7000").map(\.from.description) == ["g6999.out"])
        #expect(graph.edges(from: "file").isEmpty && graph.edges(into: "src").isEmpty)
        #expect(graph.node("w1234")?.descriptor.type == "analysis.waveform")
        #expect(graph.node("g11999")?.parameters[GainNode.gain] == 1.5)
        #expect(graph.node("nope") == nil)
        // Edges keep their place in the document (reversed above).
        #expect(graph.edges.first { $0.to.node == "dec" }?.index == 3 + chain + 2 * fan - 1)
    }

    @Test(.timeLimit(.minutes(10)))
    func problemsInAHugeGraphNameTheirNodeAndPlace() {
        let text = Self.document(chain: 15_000, fan: 2_500) { nodes, edges in
            nodes[9_002].1 = #"{ "type": "effect.gain", "params": { "gain": 2, "db": 6 } }"#     // g9000
            nodes[12_002].1 = #"{ "type": "effect.gian" }"#                                    // g12000
            nodes.append(("g77", #"{ "type": "effect.gain" }"#))                              // given twice
            nodes.append(("c1", #"{ "type": "effect.gain" }"#))
            nodes.append(("c2", #"{ "type": "effect.gain" }"#))
            edges[14_001] = "g13999.out -> h14000.in"                                          // a typo
            edges += ["c1.out -> c2.in", "c2.out -> c1.in"]                                    // a cycle
            edges.append("dec.audio -> g5.in")                                                // a second feed
        }
        #expect(problems(text) == [
            "nodes.g9000.params.db: give gain or db, not both",
            #"nodes.g12000.type: unknown node type "effect.gian"; did you mean "effect.gain"? (`graphctl inspect` lists them); if a plugin provides it, load it with --plugin PATH or GRAPHKIT_PLUGIN_PATH (no plugin was searched for)"#,
            #"nodes.g77: node id "g77" is given twice"#,
            #"edges[14001]: no node "h14000" in the graph; did you mean "g14000"?"#,
            #"edges[20005]: input "g5.in" is already connected by edges[6]; an input takes one connection (an output may feed several)"#,
            // The edge from the node of unknown type could not be checked, so its input is open.
            #"nodes.g12001: input "in" of effect.gain is not connected"#,
            #"nodes.g14000: input "in" of effect.gain is not connected"#,
            #"edges: the graph has a cycle through "c1", "c2"; data must flow one way"#,
        ])
    }

    @Test func anEndlessSourceIsNamedAtEveryConsumerThatNeedsALength() {
        // More consumers than endless sources, and fewer: the search runs from either side, and
        // the problems come in the document's order either way.
        let mic = #"{ "type": "capture.audio", "params": { "duration": 0 } }"#
        let wave = #"{ "type": "analysis.waveform", "params": { "width": 100 } }"#
        let fanOut = """
            { "version": 1, "nodes": { "w1": \(wave), "mic": \(mic), "g": { "type": "effect.gain" }, "w2": \(wave), "w3": \(wave) },
              "edges": [ "mic.out -> g.in", "g.out -> w2.in", "g.out -> w1.in", "mic.out -> w3.in" ] }
            """
        #expect(problems(fanOut) == ["w1", "w2", "w3"].map {
            #"nodes.\#($0).params.width: width needs a stream of known length, but "mic" (capture.audio) runs until stopped"#
        })
        let sources = """
            { "version": 1, "nodes": { "m3": \(mic), "w": \(wave), "m1": \(mic), "m2": \(mic), "v": \(wave),
                                       "aac": { "type": "encode.aac" }, "file": { "type": "sink.mp4", "params": { "path": "x.m4a" } } },
              "edges": [ "m2.out -> w.in", "m1.out -> v.in", "m3.out -> aac.in", "aac.out -> file.audio" ] }
            """
        #expect(problems(sources) == [
            #"nodes.w.params.width: width needs a stream of known length, but "m2" (capture.audio) runs until stopped"#,
            #"nodes.v.params.width: width needs a stream of known length, but "m1" (capture.audio) runs until stopped"#,
        ])
    }
}
