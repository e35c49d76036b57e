import FoundationEssentials
import Glibc

/// Reads a graph document (GRAPH-FORMAT.md) and validates it before anything starts.
///
/// Every problem is collected, each with its path into the document, and thrown together as one
/// ``GraphError`` with code ``GraphError/Code/invalidGraph`` (exit 65).
public struct GraphLoader: Sendable {
    public var registry: NodeRegistry

    public init(registry: NodeRegistry) {
        self.registry = registry
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

    /// Validates a parsed document.
    public func load(_ document: JSONValue, overrides: [Override] = []) throws(GraphError) -> Graph {
        var v = Validation(registry: registry)
        let graph = v.run(document, overrides: overrides)
        if !v.problems.isEmpty { throw GraphError(.invalidGraph, v.problems) }
        return graph!
    }
}

/// One validation pass: collects problems instead of stopping at the first.
///
/// Linear in the document: each node id is hashed once into a table of node numbers (document
/// order), each edge end is looked up once in it, and everything after the edges (inputs,
/// reachability, order) works on those numbers with arrays, not on names.
private struct Validation {
    let registry: NodeRegistry
    var problems: [GraphError.Problem] = []

    var touchedByBadEdges = Set<String>()

    /// Each distinct node id, in document order; its place here is the node's number.
    var ids: [String] = []
    var number: [String: Int] = [:]
    /// By node number: the node, when its type and parameters could be read, and its descriptor.
    var specs: [Graph.NodeSpec?] = []
    var kinds: [Int] = []
    /// The descriptors of the node types met, once each (asking a type for it copies it).
    var descriptors: [NodeDescriptor] = []
    var types: [any Node.Type] = []
    var kindOfType: [String: Int] = [:]
    /// Made when a missing node is first named: suggestions from many thousands of ids.
    var idSuggestions: NameSuggestions?
    /// The files the nodes write (parameters declared `writesFile`), by absolute path: where the
    /// first writer of each is set. Two writers of one file would share its temporary file.
    var writers: [String: String] = [:]
    /// The current folder, asked for when the first such file is met.
    var folder: String?
    /// By node number: where a `--set` gave a parameter (a problem about its value goes there).
    var setAt: [[String: String]] = []
    /// By edge (in `edges`): the output's and the input's place in their descriptors' lists.
    var edgePorts: [(output: Int, input: Int)] = []

    init(registry: NodeRegistry) { self.registry = registry }

    /// The node ids an edge mentions, as far as they can be read.
    static func nodeNames(in item: JSONValue) -> [String] {
        var texts: [Substring] = []
        switch item {
        case .string(let s): texts = splitArrow(s)
        case .object: texts = [item["from"], item["to"]].compactMap { if case .string(let s)? = $0 { return Substring(s) }; return nil }
        default: break
        }
        return texts.compactMap { PortRef($0)?.node }
    }

    /// `text` split at each `->`, like Foundation's `components(separatedBy: "->")`: characters
    /// are compared, so a `>` that a combining mark follows is not an arrow. In ASCII a byte is a
    /// character (CR LF aside, and neither is `-` or `>`), so bytes are compared, faster.
    static func splitArrow(_ text: String) -> [Substring] {
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return split(text, text.utf8, UInt8(ascii: "-"), UInt8(ascii: ">")) }
        return split(text, text, "-", ">")
    }

    private static func split<View: Collection>(_ text: String, _ view: View, _ dash: View.Element, _ greater: View.Element)
        -> [Substring] where View.Index == String.Index, View.Element: Equatable
    {
        var parts: [Substring] = []
        var start = view.startIndex, i = view.startIndex
        while i != view.endIndex {
            let next = view.index(after: i)
            if view[i] == dash, next != view.endIndex, view[next] == greater {
                parts.append(text[start..<i])
                i = view.index(after: next)
                start = i
            } else {
                i = next
            }
        }
        parts.append(text[start...])
        return parts
    }

    mutating func problem(_ location: String, _ message: String) {
        problems.append(.init(location, message))
    }

    /// The graph, or nil when anything is wrong (each problem recorded).
    mutating func run(_ document: JSONValue, overrides: [GraphLoader.Override]) -> Graph? {
        guard case .object(let top) = document else {
            problem("(document)", "expected a JSON object, got \(document.typeName)")
            return nil
        }
        let topKeys = ["version", "name", "description", "nodes", "edges"]
        checkKeys(top, allowed: topKeys, at: nil)
        switch document["version"] {
        case .number(1)?: break
        case nil: problem("version", "missing; this format is version 1")
        case let v?: problem("version", "expected 1, got \(v)")
        }
        var name: String?, description: String?
        if let n = document["name"] {
            if case .string(let s) = n { name = s } else { problem("name", "expected a string, got \(n.typeName)") }
        }
        if let d = document["description"] {
            if case .string(let s) = d { description = s } else { problem("description", "expected a string, got \(d.typeName)") }
        }

        // Nodes.
        switch document["nodes"] {
        case .object(let members)?:
            if members.isEmpty { problem("nodes", "a graph needs at least one node") }
            ids.reserveCapacity(members.count)
            number.reserveCapacity(members.count)
            specs.reserveCapacity(members.count)
            kinds.reserveCapacity(members.count)
            let overridesOf = Dictionary(grouping: overrides, by: \.node)
            for (id, value) in members {
                if let first = number.updateValue(ids.count, forKey: id) {
                    number[id] = first
                    problem("nodes.\(id)", "node id \"\(id)\" is given twice")
                    continue
                }
                ids.append(id)
                if id.isEmpty || !id.unicodeScalars.allSatisfy(Self.isIDCharacter) {
                    problem("nodes.\(id)", "node id \"\(id)\" may use only letters, digits, _ and -")
                }
                let read = node(id: id, value, overrides: overridesOf.isEmpty ? [] : overridesOf[id] ?? [])
                specs.append(read?.spec)
                kinds.append(read?.kind ?? -1)
                setAt.append(read?.setAt ?? [:])
            }
        case nil: problem("nodes", "missing; a graph needs at least one node")
        case let v?: problem("nodes", "expected an object of node id to node, got \(v.typeName)")
        }
        for o in overrides where number[o.node] == nil {
            problem(o.location, "no node \"\(o.node)\" in the graph" + suggestion(forNode: o.node))
        }

        // Inputs, numbered: node k's input j is slot inputBase[k] + j.
        var inputBase = [Int](repeating: 0, count: ids.count + 1)
        for k in ids.indices { inputBase[k + 1] = inputBase[k] + (kinds[k] < 0 ? 0 : descriptors[kinds[k]].inputs.count) }
        /// The first edge (its place in `edges` of the document) to reach each input: it owns it.
        var firstInto = [Int](repeating: -1, count: inputBase[ids.count])
        var firstFrom = [(node: Int, port: Int)](repeating: (-1, -1), count: inputBase[ids.count])

        // Edges.
        var edges: [Graph.Edge] = []
        var ends: [(from: Int, to: Int)] = []
        switch document["edges"] {
        case .array(let items)?:
            edges.reserveCapacity(items.count)
            ends.reserveCapacity(items.count)
            /// The later pairs into an input already reached (rare): output and input slot.
            var laterPairs: [PairKey: Int] = [:]
            for (i, item) in items.enumerated() {
                let before = problems.count
                guard let r = self.edge(i, item) else {
                    // Whatever a rejected edge names, its connections are not judged again below.
                    if problems.count > before { touchedByBadEdges.formUnion(Self.nodeNames(in: item)) }
                    continue
                }
                let slot = inputBase[r.to] + r.input
                let owner = firstInto[slot]
                if owner < 0 {
                    firstInto[slot] = i
                    firstFrom[slot] = (r.from, r.output)
                    edges.append(r.edge)
                    ends.append((r.from, r.to))
                    edgePorts.append((r.output, r.input))
                    continue
                }
                let pair = PairKey(node: r.from, output: r.output, slot: slot)
                if let first = firstFrom[slot] == (r.from, r.output) ? owner : laterPairs[pair] {
                    problem("edges[\(i)]", "duplicate of edges[\(first)] (\"\(r.edge.from) -> \(r.edge.to)\")")
                    continue
                }
                laterPairs[pair] = i
                problem("edges[\(i)]", "input \"\(r.edge.to)\" is already connected by edges[\(owner)]; an input takes one connection (an output may feed several)")
            }
        case nil: break
        case let v?: problem("edges", "expected an array, got \(v.typeName)")
        }

        // Required inputs.
        for k in ids.indices where kinds[k] >= 0 && (touchedByBadEdges.isEmpty || !touchedByBadEdges.contains(ids[k])) {
            let d = descriptors[kinds[k]]
            let slots = inputBase[k]..<inputBase[k + 1]
            for (j, input) in d.inputs.enumerated() where input.presence == .always && firstInto[slots.lowerBound + j] < 0 {
                problem("nodes.\(ids[k])", "input \"\(input.name)\" of \(d.type) is not connected")
            }
            if d.requiresAnInput, slots.allSatisfy({ firstInto[$0] < 0 }) {
                let names = d.inputs.map(\.name).joined(separator: ", ")
                problem("nodes.\(ids[k])", "\(d.type) needs at least one of its inputs connected (\(names))")
            }
        }

        let (outStart, outEdges) = Graph.runs(count: ids.count, ends.lazy.map(\.from))
        boundedInputs(ends, outStart, outEdges)

        // Cycles, and topological order.
        let order = topologicalOrder(ends, outStart, outEdges)
        // Formats, from the sources down: only on a whole graph, where each node's inputs are known.
        if problems.isEmpty { formatsReachInputs(order, ends, edges, outStart, outEdges) }
        guard problems.isEmpty else { return nil }
        // No problem: every id has its node, so node numbers are the document's nodes.
        var place = [Int](repeating: 0, count: ids.count)
        for (p, k) in order.enumerated() { place[k] = p }
        return Graph(name: name, description: description, nodes: order.map { specs[$0]! }, edges: edges,
                     nodeIndex: number.mapValues { place[$0] }, endpoints: ends.map { (place[$0.from], place[$0.to]) })
    }

    /// What an output offers: the formats it can carry in this graph, and the node and the
    /// parameters that decide them (kept as the formats pass through effects).
    struct Offer {
        var formats: FormatSet
        var origin: (node: Int, port: Int)
        var decidedBy: [FormatSet.Aspect: String]
    }

    /// Declared formats are a contract at both ends: each output's formats, as its node's
    /// parameters and inputs make them (``PortDescriptor/Carriage``), must meet what every input
    /// it feeds takes, and an output that feeds several must carry one format that all of them
    /// take (a tee negotiates one). A refusal is reported at the parameter that decides the
    /// format when there is one (`nodes.dec.params.sampleFormat`), else at the edge. In
    /// topological order: each node's inputs are known before its outputs are worked out.
    mutating func formatsReachInputs(_ order: [Int], _ ends: [(from: Int, to: Int)], _ edges: [Graph.Edge],
                                     _ outStart: [Int], _ outEdges: [Int32]) {
        /// By node number: what reaches each input (by its place in the descriptor).
        var incoming = [[FormatSet?]](repeating: [], count: ids.count)
        var incomingOffer = [[Offer?]](repeating: [], count: ids.count)
        for k in ids.indices where kinds[k] >= 0 {
            incoming[k] = Array(repeating: nil, count: descriptors[kinds[k]].inputs.count)
            incomingOffer[k] = incoming[k].map { _ in nil }
        }
        for k in order {
            let d = descriptors[kinds[k]], parameters = specs[k]!.parameters
            let edgesOut = outEdges[outStart[k]..<outStart[k + 1]].map(Int.init)
            guard !edgesOut.isEmpty else { continue }
            for (j, port) in d.outputs.enumerated() {
                let feeding = edgesOut.filter { edgePorts[$0].output == j }
                guard !feeding.isEmpty else { continue }
                var offer: Offer
                switch port.carriage {
                case .formats:
                    offer = Offer(formats: port.formats, origin: (k, j), decidedBy: [:])
                case .parameters(let decidedBy, _):
                    offer = Offer(formats: port.carried(with: parameters) { _ in nil }, origin: (k, j), decidedBy: decidedBy)
                case .input(let name):
                    let i = d.inputs.firstIndex { $0.name == name }
                    if let i, let upstream = incomingOffer[k][i] {
                        offer = upstream
                        offer.formats = incoming[k][i]!.intersection(port.formats)
                    } else {
                        offer = Offer(formats: port.formats, origin: (k, j), decidedBy: [:])
                    }
                }
                var common: FormatSet? = offer.formats
                for e in feeding {
                    let to = ends[e].to, accepted = descriptors[kinds[to]].inputs[edgePorts[e].input].formats
                    if !offer.formats.intersects(accepted) {
                        let aspects = offer.formats.differences(from: accepted)
                        report(offer, at: edges[e], decidedBy: aspects.compactMap { offer.decidedBy[$0] },
                               "which \"\(edges[e].to)\" (\(descriptors[kinds[to]].type)) does not take: it takes \(accepted)")
                        common = nil
                    } else if let before = common {
                        common = before.intersection(accepted)
                        if common!.isEmpty {
                            // Each takes some of it, but not one format in common with those before.
                            let earlier = feeding.prefix { $0 != e }.map { "\"\(edges[$0].to)\"" }
                            let aspects = before.differences(from: accepted)
                            report(offer, at: edges[e], decidedBy: aspects.compactMap { offer.decidedBy[$0] },
                                   "which \(ParameterDescriptor.list(earlier + ["\"\(edges[e].to)\""], "and")) take in no one format in common "
                                   + "(an output gives everything it feeds one format)")
                            common = nil
                        }
                    }
                }
                // Refused: reported, and what follows is judged by its declarations alone.
                guard let common else { continue }
                for e in feeding {
                    incoming[ends[e].to][edgePorts[e].input] = common
                    incomingOffer[ends[e].to][edgePorts[e].input] = offer
                }
            }
        }
    }

    /// A format that cannot go on along `edge`: `"dec.audio" carries audio/pcm F32LE … as
    /// sampleFormat is "f32le", through "gain.out", which "s16.in" … does not take …`, at the
    /// first of `parameters` (where its value was given), else at the edge.
    mutating func report(_ offer: Offer, at edge: Graph.Edge, decidedBy parameters: [String], _ consequence: String) {
        let node = offer.origin.node
        let output = "\"\(ids[node]).\(descriptors[kinds[node]].outputs[offer.origin.port].name)\""
        var text = "\(output) carries \(offer.formats)"
        if !parameters.isEmpty {
            text += " as " + ParameterDescriptor.list(parameters.map { name in
                "\(name) is " + (specs[node]!.parameters[name].map(\.description) ?? "not given")
            }, "and")
        }
        if edge.from.node != ids[node] { text += ", through \"\(edge.from)\"" }
        text += ", " + consequence
        if let parameter = parameters.first {
            problem(setAt[node][parameter] ?? "nodes.\(ids[node]).params.\(parameter)",
                    text + " (edges[\(edge.index)]: \"\(edge.from) -> \(edge.to)\")")
        } else {
            problem("edges[\(edge.index)]", text)
        }
    }

    /// An output (node and port numbers) and an input slot: one connection.
    struct PairKey: Hashable {
        var node: Int, output: Int, slot: Int
    }

    /// A consumer that needs a stream of known length, fed (through any path) by one that never
    /// ends. Searched from whichever side has fewer nodes, so a graph with few of either costs
    /// one pass per such node, and one with none of either costs nothing.
    mutating func boundedInputs(_ ends: [(from: Int, to: Int)], _ outStart: [Int], _ outEdges: [Int32]) {
        var needing: [Int] = [], unbounded: [Int] = []
        for k in ids.indices where kinds[k] >= 0 {
            let d = descriptors[kinds[k]], parameters = specs[k]!.parameters
            if let c = d.needsBoundedInputWhen, c.holds(in: parameters) { needing.append(k) }
            if d.unboundedWhen?.holds(in: parameters) == true { unbounded.append(k) }
        }
        guard !needing.isEmpty, !unbounded.isEmpty else { return }
        /// Whether node k was reached in search number `mark[k]`.
        var mark = [Int](repeating: -1, count: ids.count)
        func search(_ start: Int, _ id: Int, _ runStart: [Int], _ runs: [Int32], _ next: (Int) -> Int) {
            var frontier = [start]
            while let k = frontier.popLast() {
                for e in runs[runStart[k]..<runStart[k + 1]] {
                    let n = next(Int(e))
                    if mark[n] != id { mark[n] = id; frontier.append(n) }
                }
            }
        }
        var feeding: [[Int]]   // by position in `needing`: the endless sources upstream, in document order
        if needing.count <= unbounded.count {
            let (inStart, inEdges) = Graph.runs(count: ids.count, ends.lazy.map(\.to))
            feeding = needing.enumerated().map { (s, n) in
                search(n, s, inStart, inEdges) { ends[$0].from }
                return unbounded.filter { mark[$0] == s }
            }
        } else {
            feeding = Array(repeating: [], count: needing.count)
            for (s, u) in unbounded.enumerated() {
                search(u, s, outStart, outEdges) { ends[$0].to }
                for (p, n) in needing.enumerated() where mark[n] == s { feeding[p].append(u) }
            }
        }
        for (p, n) in needing.enumerated() {
            let parameter = descriptors[kinds[n]].needsBoundedInputWhen!.parameter
            for u in feeding[p] {
                problem("nodes.\(ids[n]).params.\(parameter)",
                        "\(parameter) needs a stream of known length, but \"\(ids[u])\" (\(descriptors[kinds[u]].type)) runs until stopped")
            }
        }
    }

    /// Letters and digits (any script, as before), `_` and `-`.
    static func isIDCharacter(_ c: Unicode.Scalar) -> Bool {
        if c.isASCII {
            // The same answer, without looking up Unicode properties for every character of
            // every id: the ASCII letters are the only alphabetic ASCII, the digits the only numeric.
            switch UInt8(c.value) {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"): return true
            default: return false
            }
        }
        return c.properties.isAlphabetic || c.properties.numericType != nil
    }

    /// Whether each member's key was given before it in the same object: a linear search for
    /// the few keys a node or edge has, a set past that (a `nodes` object may have many thousands).
    static func repeatedKeys(_ members: [(key: String, value: JSONValue)]) -> [Bool]? {
        if members.count <= 16 {
            var repeated: [Bool]?
            for i in members.indices where members[..<i].contains(where: { $0.key == members[i].key }) {
                if repeated == nil { repeated = Array(repeating: false, count: members.count) }
                repeated![i] = true
            }
            return repeated
        }
        var seen = Set<String>(minimumCapacity: members.count)
        let repeated = members.map { !seen.insert($0.key).inserted }
        return repeated.contains(true) ? repeated : nil
    }

    /// The path of an object's member: `base.key`, or `key` at the top. An empty key is written
    /// `""`, so that the place is never empty (found by fuzz-graph: `"": 1` at the top was
    /// reported at an empty place, printed `error: FILE: : unknown key ""`).
    static func member(_ key: String, of base: String?) -> String {
        let k = key.isEmpty ? "\"\"" : key
        return base.map { "\($0).\(k)" } ?? k
    }

    mutating func checkKeys(_ members: [(key: String, value: JSONValue)], allowed: [String], at base: String?) {
        let repeated = Self.repeatedKeys(members)
        for (i, (key, _)) in members.enumerated() {
            if repeated?[i] == true {
                problem(Self.member(key, of: base), "key \"\(key)\" is given twice")
            } else if !allowed.contains(key) {
                var message = "unknown key \"\(key)\""
                if let guess = closestMatch(to: key, in: allowed) { message += "; did you mean \"\(guess)\"?" }
                problem(Self.member(key, of: base), message + " (allowed: \(allowed.joined(separator: ", ")))")
            }
        }
    }

    mutating func node(id: String, _ value: JSONValue, overrides: [GraphLoader.Override])
        -> (spec: Graph.NodeSpec, kind: Int, setAt: [String: String])?
    {
        let at = "nodes.\(id)"
        guard case .object(let members) = value else {
            problem(at, "expected an object with \"type\" and \"params\", got \(value.typeName)")
            return nil
        }
        checkKeys(members, allowed: ["type", "params"], at: at)
        guard case .string(let typeName)? = value["type"] else {
            problem("\(at).type", value["type"] == nil ? "missing; every node names its type" : "expected a string")
            return nil
        }
        let kind: Int
        if let known = kindOfType[typeName] {
            kind = known
        } else if let type = registry.lookup(typeName) {
            kind = descriptors.count
            descriptors.append(type.descriptor)
            types.append(type)
            kindOfType[typeName] = kind
        } else {
            var message = "unknown node type \"\(typeName)\""
            if let guess = registry.suggestion(for: typeName) { message += "; did you mean \"\(guess)\"?" }
            message += " (`graphctl inspect` lists them)"
            // A type from a plugin that was not loaded: say where plugins were looked for.
            if registry.pluginSearchPaths.isEmpty {
                message += "; if a plugin provides it, load it with --plugin PATH or \(PluginLoader.pathVariable) (no plugin was searched for)"
            } else {
                message += "; if a plugin provides it, load it with --plugin PATH (searched: \(registry.pluginSearchPaths.joined(separator: ", ")))"
            }
            problem("\(at).type", message)
            return nil
        }
        let d = descriptors[kind]
        // Where each value came from: nil for the file (nodes.ID.params.NAME, made only for a
        // problem), else the --set.
        var given: [(key: String, value: JSONValue, override: String?)] = []
        switch value["params"] {
        case .object(let params)?:
            if let repeated = Self.repeatedKeys(params) {
                for (i, (k, _)) in params.enumerated() where repeated[i] {
                    problem(Self.member(k, of: "\(at).params"), "parameter \"\(k)\" is given twice")
                }
            }
            given.reserveCapacity(params.count)
            for (k, v) in params { given.append((k, v, nil)) }
        case nil: break
        case let p?: problem("\(at).params", "expected an object, got \(p.typeName)")
        }
        // Overrides: the last --set of a parameter wins; an empty value removes it.
        for o in overrides {
            guard let spec = d.parameter(o.parameter) else {
                unknownParameter(o.parameter, of: d, at: o.location)
                continue
            }
            given.removeAll { $0.key == o.parameter }
            // One of an exclusive group, or of one form, replaces whichever of the others the
            // file gave.
            for rule in d.rules {
                let replaced = rule.replaced(bySetting: o.parameter)
                given.removeAll { replaced.contains($0.key) && $0.override == nil }
            }
            if o.value.isEmpty { continue }
            switch spec.parseOverride(o.value) {
            case .success(let json): given.append((o.parameter, json, o.location))
            case .failure(let e): problem(o.location, e.message)
            }
        }
        var values: [String: ParameterValue] = [:]
        values.reserveCapacity(d.parameters.count)
        var ok = true
        var refused: Set<String> = []
        for (key, json, override) in given {
            guard let spec = d.parameter(key) else {
                unknownParameter(key, of: d, at: override ?? Self.member(key, of: "\(at).params"))
                ok = false
                continue
            }
            switch spec.validate(json) {
            case .success(let v): values[key] = v
            case .failure(let e):
                problem(override ?? Self.member(key, of: "\(at).params"), e.message)
                ok = false
                refused.insert(key)
            }
        }
        let explicit = Set(values.keys)
        // A value refused above was given: it is not missing too.
        for spec in d.parameters where values[spec.name] == nil && !refused.contains(spec.name) {
            if let dv = spec.defaultValue {
                values[spec.name] = dv
            } else if spec.isRequired {
                problem("\(at).params.\(spec.name)", "required parameter of \(d.type) is missing (\(spec.help))")
                ok = false
            }
        }
        for spec in d.parameters where spec.writesFile {
            guard case .string(let path)? = values[spec.name] else { continue }
            let location = given.last(where: { $0.key == spec.name })?.override ?? "\(at).params.\(spec.name)"
            if folder == nil { folder = FileManager.default.currentDirectoryPath }
            let file = OutputFile.absolute(path, from: folder!)
            if let first = writers[file] {
                problem(location, "\"\(path)\" is also written by \(first): each output needs a file of its own")
            } else {
                writers[file] = location
            }
        }
        let parameters = Parameters(values, explicit: explicit)
        if ok {
            for rule in d.rules {
                for (param, message) in rule.problems(in: parameters) {
                    problem(param.map { "\(at).params.\($0)" } ?? "\(at).params", message)
                }
            }
        }
        var setAt: [String: String] = [:]
        for (key, _, override) in given { if let override { setAt[key] = override } }
        return (Graph.NodeSpec(id: id, type: types[kind], parameters: parameters), kind, setAt)
    }

    mutating func unknownParameter(_ name: String, of d: NodeDescriptor, at location: String) {
        var message = "unknown parameter \"\(name)\" for \(d.type)"
        if let guess = closestMatch(to: name, in: d.parameters.map(\.name)) { message += "; did you mean \"\(guess)\"?" }
        let names = d.parameters.map(\.name)
        problem(location, message + (names.isEmpty ? " (it takes none)" : " (it takes: \(names.joined(separator: ", ")))"))
    }

    /// `; did you mean "ID"?` for a node id the graph does not have, or nothing.
    mutating func suggestion(forNode name: String) -> String {
        if idSuggestions == nil { idSuggestions = NameSuggestions(ids) }
        return idSuggestions!.closest(to: name).map { "; did you mean \"\($0)\"?" } ?? ""
    }

    /// An edge that can be made: its nodes by number, its output and input by their place in
    /// the descriptors' lists.
    struct ResolvedEdge {
        var edge: Graph.Edge
        var from: Int, output: Int
        var to: Int, input: Int
    }

    mutating func edge(_ i: Int, _ item: JSONValue) -> ResolvedEdge? {
        let at = "edges[\(i)]"
        var fromText: Substring?, toText: Substring?
        var fromAt = at, toAt = at
        var capacity = EdgeCapacity.default
        switch item {
        case .string(let s):
            let parts = Self.splitArrow(s)
            guard parts.count == 2 else {
                problem(at, "expected \"node.port -> node.port\", got \"\(s)\"")
                return nil
            }
            fromText = parts[0]
            toText = parts[1]
        case .object(let members):
            checkKeys(members, allowed: ["from", "to", "capacity"], at: at)
            fromAt = "\(at).from"
            toAt = "\(at).to"
            if case .string(let f)? = item["from"] { fromText = Substring(f) } else { problem(fromAt, "expected \"node.port\"") }
            if case .string(let t)? = item["to"] { toText = Substring(t) } else { problem(toAt, "expected \"node.port\"") }
            if let c = item["capacity"] { capacity = edgeCapacity(c, at: "\(at).capacity") }
        default:
            problem(at, "expected \"node.port -> node.port\" or an object with from and to, got \(item.typeName)")
            return nil
        }
        guard let fromText, let toText else { return nil }
        guard let from = PortRef(fromText) else {
            problem(fromAt, "expected \"node.port\", got \"\(fromText.trimmingSpaces())\"")
            return nil
        }
        guard let to = PortRef(toText) else {
            problem(toAt, "expected \"node.port\", got \"\(toText.trimmingSpaces())\"")
            return nil
        }
        let fromNumber = number[from.node], toNumber = number[to.node]
        if fromNumber == nil { problem(fromAt, "no node \"\(from.node)\" in the graph" + suggestion(forNode: from.node)) }
        if toNumber == nil { problem(toAt, "no node \"\(to.node)\" in the graph" + suggestion(forNode: to.node)) }
        guard let fromNumber, let toNumber else { return nil }
        // A node whose type was unknown was already reported; its ports cannot be checked.
        guard kinds[fromNumber] >= 0, kinds[toNumber] >= 0 else { return nil }
        let fd = descriptors[kinds[fromNumber]], td = descriptors[kinds[toNumber]]
        guard let output = fd.outputs.firstIndex(where: { $0.name == from.port }) else {
            problem(fromAt, "\(fd.type) node \"\(from.node)\" has no output \"\(from.port)\"" + portList(fd.outputs, "outputs")
                    + suggestion(from.port, fd.outputs))
            return nil
        }
        guard let input = td.inputs.firstIndex(where: { $0.name == to.port }) else {
            problem(toAt, "\(td.type) node \"\(to.node)\" has no input \"\(to.port)\"" + portList(td.inputs, "inputs")
                    + suggestion(to.port, td.inputs))
            return nil
        }
        let out = fd.outputs[output], into = td.inputs[input]
        guard out.formats.intersects(into.formats) else {
            problem(at, "cannot connect \"\(from)\" (\(out.formats)) to \"\(to)\" (\(into.formats))")
            return nil
        }
        if fromNumber == toNumber {
            problem(at, "node \"\(from.node)\" is connected to itself")
            return nil
        }
        if capacity != .default, out.formats == .container {
            // Not silently ignored: the demuxer pulls a file's bytes itself, in large blocks and
            // with seeks, so there is nothing to bound.
            problem("\(at).capacity", "\"\(from)\" carries a file's bytes, which its demuxer reads directly; a capacity bounds only media streams")
            return nil
        }
        return ResolvedEdge(edge: Graph.Edge(from: from, to: to, capacity: capacity, index: i),
                            from: fromNumber, output: output, to: toNumber, input: input)
    }

    func portList(_ ports: [PortDescriptor], _ what: String) -> String {
        ports.isEmpty ? " (it has no \(what))" : " (its \(what): \(ports.map(\.name).joined(separator: ", ")))"
    }

    func suggestion(_ name: String, _ ports: [PortDescriptor]) -> String {
        closestMatch(to: name, in: ports.map(\.name)).map { "; did you mean \"\($0)\"?" } ?? ""
    }

    mutating func edgeCapacity(_ value: JSONValue, at: String) -> EdgeCapacity {
        guard case .object(let members) = value else {
            problem(at, "expected an object with buffers, bytes or seconds, got \(value.typeName)")
            return .default
        }
        checkKeys(members, allowed: ["buffers", "bytes", "seconds"], at: at)
        var c = EdgeCapacity()
        for (key, v) in members {
            switch (key, v) {
            case ("buffers", .number(let n)) where n >= 1 && n == n.rounded() && n <= 1_000_000: c.buffers = Int(n)
            case ("bytes", .number(let n)) where n >= 1 && n == n.rounded() && n <= 4e9: c.bytes = Int(n)
            case ("seconds", .number(let n)) where n > 0 && n <= 3600: c.seconds = n
            case ("buffers", _), ("bytes", _): problem("\(at).\(key)", "expected a whole number of at least 1, got \(v)")
            case ("seconds", _): problem("\(at).\(key)", "expected a number of seconds above 0 (at most 3600), got \(v)")
            default: break
            }
        }
        if members.isEmpty {
            problem(at, "name at least one of buffers, bytes or seconds")
            return .default
        }
        return c
    }

    /// Kahn's algorithm on node numbers, linear in nodes and edges; a cycle is a problem naming
    /// its nodes. The order in which the nodes that were read are placed, sources first.
    mutating func topologicalOrder(_ ends: [(from: Int, to: Int)], _ outStart: [Int], _ outEdges: [Int32]) -> [Int] {
        var indegree = [Int](repeating: 0, count: ids.count)
        for e in ends { indegree[e.to] += 1 }
        var order: [Int] = []
        order.reserveCapacity(ids.count)
        for k in ids.indices where kinds[k] >= 0 && indegree[k] == 0 { order.append(k) }
        var next = 0
        while next < order.count {
            let k = order[next]
            next += 1
            for e in outEdges[outStart[k]..<outStart[k + 1]] {
                let target = ends[Int(e)].to
                indegree[target] -= 1
                if indegree[target] == 0 { order.append(target) }
            }
        }
        let read = kinds.lazy.filter { $0 >= 0 }.count
        if order.count < read {
            var placed = [Bool](repeating: false, count: ids.count)
            for k in order { placed[k] = true }
            let inCycle = ids.indices.filter { kinds[$0] >= 0 && !placed[$0] }.map { ids[$0] }
            problem("edges", "the graph has a cycle through \(inCycle.map { "\"\($0)\"" }.joined(separator: ", ")); data must flow one way")
        }
        return order
    }
}
