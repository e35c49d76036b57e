import FoundationEssentials
import Glibc

/// Reads a graph document (GRAPH-FORMAT.md) and validates it before anything starts.
///
/// Every problem is collected, each with its path into the document, and thrown together as one
/// ``GraphError`` with code ``GraphError/Code/invalidGraph`` (exit 65).
public struct GraphLoader: Sendable {
    public var registry: NodeRegistry
    /// The folder relative paths in the graph are relative to (two outputs are one file when
    /// they lead to one place from it). The loader reads nothing else from the process.
    public var workingDirectory: String

    /// A loader of `registry`'s node types; `workingDirectory` defaults to the process's current
    /// folder, as it is when the loader is made.
    public init(registry: NodeRegistry, workingDirectory: String? = nil) {
        self.registry = registry
        self.workingDirectory = workingDirectory ?? FileManager.default.currentDirectoryPath
    }

    /// A `--set node.param=value` override.
    public struct Override: Sendable, Equatable {
        public var node: String
        public var parameter: String
        /// Empty removes the parameter (default, or the output turned off).
        public var value: String

        /// Parses `node.param=value`.
        public init(parsing text: String) throws(GraphError) {
            guard let eq = text.firstIndex(of: "="), let dot = text[..<eq].firstIndex(of: "."),
                  dot != text.startIndex, text.index(after: dot) != eq else {
                throw GraphError(.invalidGraph, at: "--set \(text)", "expected node.param=value")
            }
            node = String(text[..<dot])
            parameter = String(text[text.index(after: dot)..<eq])
            value = String(text[text.index(after: eq)...])
        }

        public init(node: String, parameter: String, value: String) {
            self.node = node
            self.parameter = parameter
            self.value = value
        }

        var location: String { "--set \(node).\(parameter)" }
    }

    /// Loads a graph file. An unreadable file is exit 66; anything wrong inside it is 65.
    /// The file is read to its end, whatever its size says: a pipe (`/dev/stdin`, a shell's
    /// `<(…)`) or a file under /proc holds a graph as well as a regular file does.
    public func load(contentsOf path: String, overrides: [Override] = []) throws(GraphError) -> Graph {
        try load(bytes: try Self.read(path), file: path, overrides: overrides)
    }

    /// The most a graph file may hold: far beyond any graph (100,000 nodes are a few MB), and a
    /// bound on what an endless stream (`/dev/zero`) can make it read.
    public static let largestFile = 64 << 20

    /// The bytes of the graph file at `path`, read through one descriptor until its end (a pipe
    /// too); an unreadable file is exit 66, one past ``largestFile`` 65. For code that reads a
    /// graph file once and loads it several times (`graphctl batch`).
    public static func read(_ path: String) throws(GraphError) -> [UInt8] {
        func failure(_ reason: String) -> GraphError {
            GraphError(.inputUnreadable, at: path, "cannot read graph file: \(reason)")
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw failure(reason(errno)) }
        defer { close(fd) }
        var st = stat()
        if fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFDIR { throw failure("it is a folder") }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw failure(reason(errno))
            }
            if n == 0 { return bytes }
            guard bytes.count + n <= largestFile else {
                throw GraphError(.invalidGraph, at: path, "the graph file holds more than \(largestFile >> 20) MiB: it is no graph (a graph is JSON text)")
            }
            bytes += chunk[..<n]
        }
    }

    /// Why a file cannot be opened or read, in words.
    static func reason(_ code: Int32) -> String {
        switch code {
        case ENOENT: "no such file"
        case EACCES, EPERM: "permission denied"
        case EISDIR: "it is a folder"
        default: String(cString: strerror(code)).lowercased()
        }
    }

    /// Loads a graph from JSON text.
    public func load(json text: String, overrides: [Override] = []) throws(GraphError) -> Graph {
        try load(bytes: Array(text.utf8), overrides: overrides)
    }

    /// Loads a graph from the bytes of a JSON document (any bytes: what is not JSON is reported
    /// with its line and column, after `file` when they were read from one).
    public func load(bytes: [UInt8], file: String? = nil, overrides: [Override] = []) throws(GraphError) -> Graph {
        let json: JSONValue
        do {
            json = try JSONParser.parse(bytes: bytes)
        } catch {
            let place = "line \(error.line), column \(error.column)"
            throw GraphError(.invalidGraph, at: file.map { "\($0): \(place)" } ?? place, "malformed JSON: \(error.message)")
        }
        return try load(json, overrides: overrides)
    }

    /// Validates a parsed document: the passes of ``Passed`` in turn, every problem of each
    /// collected and thrown together.
    public func load(_ document: JSONValue, overrides: [Override] = []) throws(GraphError) -> Graph {
        let read = ReadDocument.run(document)
        guard let top = read.result else { throw GraphError(.invalidGraph, read.problems) }
        let nodes = ResolveNodes.run(top.nodes, overrides: overrides, registry: registry)
        let edges = ResolveEdges.run(top.edges, nodes: nodes.result)
        // Said with the nodes' problems, before the edges', as each node's were before the passes.
        let collisions = WriterCollisions.run(nodes.result, edges.result, workingDirectory: workingDirectory)
        let order = TopologicalOrder.run(nodes.result, edges.result)
        var problems = read.problems + nodes.problems + collisions + edges.problems
        problems += RequiredInputs.run(nodes.result, edges.result)
        problems += BoundedInputs.run(nodes.result, edges.result)
        problems += order.problems
        // Formats, from the sources down: only on a whole graph, where each node's inputs are known.
        if problems.isEmpty { problems += FormatContract.run(nodes.result, edges.result, order: order.result) }
        guard problems.isEmpty, let specs = nodes.result.specs(in: order.result) else {
            throw GraphError(.invalidGraph, problems.isEmpty ? [.init("nodes", "a node could not be read")] : problems)
        }
        return Self.graph(top, specs, nodes.result, edges.result, order: order.result)
    }

    /// The graph of a document in which every pass found nothing wrong: its nodes in
    /// topological order (`specs`, as `order` places them), its edges in document order.
    private static func graph(_ top: GraphDocument, _ specs: [Graph.NodeSpec], _ nodes: NodeTable, _ edges: EdgeTable,
                              order: [Int]) -> Graph {
        var place = [Int](repeating: 0, count: order.count)
        for (p, k) in order.enumerated() { place[k] = p }
        return Graph(name: top.name, description: top.description, nodes: specs,
                     edges: edges.connections.map(\.edge), nodeIndex: nodes.number.mapValues { place[$0] },
                     endpoints: edges.connections.map { (place[$0.from], place[$0.to]) })
    }
}
