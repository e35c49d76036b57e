/// A graph document's top level, read: what the later passes start from.
struct GraphDocument {
    var name: String?
    var description: String?
    /// The members of `nodes`, in document order (empty when it is missing or not an object,
    /// which is reported).
    var nodes: [(key: String, value: JSONValue)]
    /// `edges` as given: its shape is the edges pass's to judge, so that its problems follow the
    /// nodes' as a reader meets them.
    var edges: JSONValue?
}

/// Pass 1: the top level. An object with `version` 1, an optional `name` and `description`
/// (strings), a `nodes` object with at least one member, and no other keys. Nil when the
/// document is not an object at all: nothing else can be read from it.
enum ReadDocument {
    static let keys = ["version", "name", "description", "nodes", "edges"]

    static func run(_ document: JSONValue) -> Passed<GraphDocument?> {
        var problems = Problems()
        guard case .object(let top) = document else {
            problems.add("(document)", "expected a JSON object, got \(document.typeName)")
            return Passed(result: nil, problems: problems.list)
        }
        problems.checkKeys(top, allowed: keys, at: nil)
        switch document["version"] {
        case .number(1)?: break
        case nil: problems.add("version", "missing; this format is version 1")
        case let v?: problems.add("version", "expected 1, got \(v)")
        }
        var read = GraphDocument(nodes: [], edges: document["edges"])
        if let n = document["name"] {
            if case .string(let s) = n { read.name = s } else { problems.add("name", "expected a string, got \(n.typeName)") }
        }
        if let d = document["description"] {
            if case .string(let s) = d { read.description = s } else { problems.add("description", "expected a string, got \(d.typeName)") }
        }
        switch document["nodes"] {
        case .object(let members)?:
            if members.isEmpty { problems.add("nodes", "a graph needs at least one node") }
            read.nodes = members
        case nil: problems.add("nodes", "missing; a graph needs at least one node")
        case let v?: problems.add("nodes", "expected an object of node id to node, got \(v.typeName)")
        }
        return Passed(result: read, problems: problems.list)
    }
}
