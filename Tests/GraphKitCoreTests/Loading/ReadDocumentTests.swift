import Testing
@testable import GraphKitCore

/// Pass 1 alone: the top level, and nothing below it.
@Suite struct ReadDocumentTests {
    func read(_ text: String) throws -> Passed<GraphDocument?> { ReadDocument.run(try JSONParser.parse(text)) }

    @Test func aDocumentThatIsNoObjectGivesNothingToGoOn() throws {
        let read = try read("[1, 2]")
        #expect(read.result == nil)
        #expect(read.problems.map(\.description) == ["(document): expected a JSON object, got an array"])
    }

    /// The nodes' members are handed on in document order, unread; `edges` as given, whatever
    /// it is: its shape is the edges pass's, so that its problem follows the nodes' problems.
    @Test func nodesAndEdgesAreHandedOnUnjudged() throws {
        let read = try read(#"{ "version": 1, "name": "n", "nodes": { "b": 1, "a": { "type": "x" } }, "edges": 3 }"#)
        #expect(read.problems.isEmpty)
        #expect(read.result?.name == "n")
        #expect(read.result?.nodes.map(\.key) == ["b", "a"])
        #expect(read.result?.edges == 3)
    }

    @Test func everyProblemOfTheTopLevelAtOnce() throws {
        let read = try read(#"{ "name": 2, "description": [], "nodes": {}, "nodez": 1 }"#)
        #expect(read.result?.name == nil)
        #expect(read.problems.map(\.description) == [
            #"nodez: unknown key "nodez"; did you mean "nodes"? (allowed: version, name, description, nodes, edges)"#,
            "version: missing; this format is version 1",
            "name: expected a string, got an integer",
            "description: expected a string, got an array",
            "nodes: a graph needs at least one node",
        ])
    }
}
