/// The loader's passes (MediaPipe's `ValidatedGraphConfig` shape): each takes what the passes
/// before it made and returns its own result with the problems it found, each at its path in
/// the document. ``GraphLoader`` runs them in this order and throws every problem together:
///
/// ```
///  JSONValue ─► ReadDocument ─► ResolveNodes ─► ResolveEdges ─► RequiredInputs, BoundedInputs,
///               (top level)     (ids, types,    (ports, formats    TopologicalOrder
///                               parameters,     meet, capacities,        │
///                               --set)          one per input)           ▼
///                                    │                          FormatContract (only on a
///                                    ▼                          graph the passes before found
///                               WriterCollisions                whole) ─► Graph
///                               (by file identity; its problems
///                               follow the nodes')
/// ```
///
/// A pass never reads anything but its arguments: the working directory the writers' paths are
/// relative to is one of them.
struct Passed<Result> {
    var result: Result
    var problems: [GraphError.Problem]
}

/// The problems a pass collects, in the order it meets them.
struct Problems {
    private(set) var list: [GraphError.Problem] = []

    var isEmpty: Bool { list.isEmpty }
    var count: Int { list.count }

    mutating func add(_ location: String, _ message: String) {
        list.append(.init(location, message))
    }

    /// The path of an object's member: `base.key`, or `key` at the top. An empty key is written
    /// `""`, so that the place is never empty (found by fuzz-graph: `"": 1` at the top was
    /// reported at an empty place, printed `error: FILE: : unknown key ""`).
    static func member(_ key: String, of base: String?) -> String {
        let k = key.isEmpty ? "\"\"" : key
        return base.map { "\($0).\(k)" } ?? k
    }

    /// Reports each key of an object that is given twice or is not one of `allowed` (with the
    /// nearest allowed one, when one is near).
    mutating func checkKeys(_ members: [(key: String, value: JSONValue)], allowed: [String], at base: String?) {
        let repeated = Self.repeatedKeys(members)
        for (i, (key, _)) in members.enumerated() {
            if repeated?[i] == true {
                add(Self.member(key, of: base), "key \"\(key)\" is given twice")
            } else if !allowed.contains(key) {
                var message = "unknown key \"\(key)\""
                if let guess = closestMatch(to: key, in: allowed) { message += "; did you mean \"\(guess)\"?" }
                add(Self.member(key, of: base), message + " (allowed: \(allowed.joined(separator: ", ")))")
            }
        }
    }

    /// Whether each member's key was given before it in the same object (nil: none was): a
    /// linear search for the few keys a node or edge has, a set past that (a `nodes` object may
    /// have many thousands).
    static func repeatedKeys(_ members: [(key: String, value: JSONValue)]) -> [Bool]? {
        if members.count <= 16 {
            var repeated: [Bool]?
            for i in members.indices where members[..<i].contains(where: { $0.key == members[i].key }) {
                if repeated == nil { repeated = Array(repeating: false, count: members.count) }
                repeated?[i] = true
            }
            return repeated
        }
        var seen = Set<String>(minimumCapacity: members.count)
        let repeated = members.map { !seen.insert($0.key).inserted }
        return repeated.contains(true) ? repeated : nil
    }
}

/// `; did you mean "ID"?` for a node id the graph does not have, from the graph's ids: the
/// table of near names is made when a missing id is first named (many thousands of ids make it
/// worth making once, and a graph with no such mistake never makes it).
struct NodeIDSuggestions {
    private let ids: [String]
    private var table: NameSuggestions?

    init(_ ids: [String]) { self.ids = ids }

    mutating func text(for name: String) -> String {
        if table == nil { table = NameSuggestions(ids) }
        return table?.closest(to: name).map { "; did you mean \"\($0)\"?" } ?? ""
    }
}
