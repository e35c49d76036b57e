import FoundationEssentials

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
    public func load(contentsOf path: String, overrides: [Override] = []) throws(GraphError) -> Graph {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw GraphError(.inputUnreadable, at: path, "cannot read graph file: \(Self.reason(for: path))")
        }
        let json: JSONValue
        do {
            json = try JSONParser.parse(bytes: Array(data))
        } catch {
            throw GraphError(.invalidGraph, at: "\(path): line \(error.line), column \(error.column)", "malformed JSON: \(error.message)")
        }
        return try load(json, overrides: overrides)
    }

    static func reason(for path: String) -> String {
        var isDir = false
        if !FileManager.default.fileExists(atPath: path, isDirectory: &isDir) { return "no such file" }
        if isDir { return "it is a folder" }
        return "permission denied"
    }

    /// Loads a graph from JSON text.
    public func load(json text: String, overrides: [Override] = []) throws(GraphError) -> Graph {
        let json: JSONValue
        do {
            json = try JSONParser.parse(text)
        } catch {
            throw GraphError(.invalidGraph, at: "line \(error.line), column \(error.column)", "malformed JSON: \(error.message)")
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
private struct Validation {
    let registry: NodeRegistry
    var problems: [GraphError.Problem] = []

    var touchedByBadEdges = Set<String>()

    init(registry: NodeRegistry) { self.registry = registry }

    /// The node ids an edge mentions, as far as they can be read.
    static func nodeNames(in item: JSONValue) -> [String] {
        var texts: [String] = []
        switch item {
        case .string(let s): texts = s.components(separatedBy: "->")
        case .object: texts = [item["from"], item["to"]].compactMap { if case .string(let s)? = $0 { return s }; return nil }
        default: break
        }
        return texts.compactMap { PortRef(Substring($0))?.node }
    }

    mutating func problem(_ location: String, _ message: String) {
        problems.append(.init(location, message))
    }

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
        var nodes: [Graph.NodeSpec] = []
        var nodeEntries: [String: JSONValue] = [:]
        switch document["nodes"] {
        case .object(let members)?:
            if members.isEmpty { problem("nodes", "a graph needs at least one node") }
            var seen = Set<String>()
            for (id, value) in members {
                let at = "nodes.\(id)"
                if !seen.insert(id).inserted { problem(at, "node id \"\(id)\" is given twice"); continue }
                if id.isEmpty || !id.unicodeScalars.allSatisfy(Self.isIDCharacter) {
                    problem(at, "node id \"\(id)\" may use only letters, digits, _ and -")
                }
                nodeEntries[id] = value
                if let spec = node(id: id, value, overrides: overrides.filter { $0.node == id }) { nodes.append(spec) }
            }
        case nil: problem("nodes", "missing; a graph needs at least one node")
        case let v?: problem("nodes", "expected an object of node id to node, got \(v.typeName)")
        }
        for o in overrides where nodeEntries[o.node] == nil {
            var message = "no node \"\(o.node)\" in the graph"
            if let guess = closestMatch(to: o.node, in: Array(nodeEntries.keys)) { message += "; did you mean \"\(guess)\"?" }
            problem(o.location, message)
        }

        // Edges.
        var edges: [Graph.Edge] = []
        switch document["edges"] {
        case .array(let items)?:
            var inputOwner: [PortRef: Int] = [:]
            var pairs: [String: Int] = [:]
            // Made once: looked up for every edge (a graph may have many thousands).
            let known = Set(nodeEntries.keys)
            let byID = Dictionary(nodes.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            for (i, item) in items.enumerated() {
                let before = problems.count
                guard let edge = self.edge(i, item, nodes: byID, known: known) else {
                    // Whatever a rejected edge names, its connections are not judged again below.
                    if problems.count > before { touchedByBadEdges.formUnion(Self.nodeNames(in: item)) }
                    continue
                }
                let key = "\(edge.from)->\(edge.to)"
                if let first = pairs[key] {
                    problem("edges[\(i)]", "duplicate of edges[\(first)] (\"\(edge.from) -> \(edge.to)\")")
                    continue
                }
                pairs[key] = i
                if let first = inputOwner[edge.to] {
                    problem("edges[\(i)]", "input \"\(edge.to)\" is already connected by edges[\(first)]; an input takes one connection (an output may feed several)")
                    continue
                }
                inputOwner[edge.to] = i
                edges.append(edge)
            }
        case nil: break
        case let v?: problem("edges", "expected an array, got \(v.typeName)")
        }

        // Required inputs.
        var connectedInputs: [String: Set<String>] = [:], feeders: [String: [String]] = [:]
        for e in edges {
            connectedInputs[e.to.node, default: []].insert(e.to.port)
            feeders[e.to.node, default: []].append(e.from.node)
        }
        for n in nodes where !touchedByBadEdges.contains(n.id) {
            let connected = connectedInputs[n.id] ?? []
            for input in n.descriptor.inputs where input.presence == .always && !connected.contains(input.name) {
                problem("nodes.\(n.id)", "input \"\(input.name)\" of \(n.descriptor.type) is not connected")
            }
            if n.descriptor.requiresAnInput, connected.isEmpty {
                let names = n.descriptor.inputs.map(\.name).joined(separator: ", ")
                problem("nodes.\(n.id)", "\(n.descriptor.type) needs at least one of its inputs connected (\(names))")
            }
        }

        // A consumer that needs a stream of known length, fed by one that never ends.
        for n in nodes {
            guard let condition = n.descriptor.needsBoundedInputWhen, condition.holds(in: n.parameters) else { continue }
            let parameter = condition.parameter
            var upstream = Set<String>(), frontier = [n.id]
            while let id = frontier.popLast() {
                for from in feeders[id] ?? [] where upstream.insert(from).inserted { frontier.append(from) }
            }
            for u in nodes where upstream.contains(u.id) && u.descriptor.unboundedWhen?.holds(in: u.parameters) == true {
                problem("nodes.\(n.id).params.\(parameter)",
                        "\(parameter) needs a stream of known length, but \"\(u.id)\" (\(u.descriptor.type)) runs until stopped")
            }
        }

        // Cycles, and topological order.
        let ordered = topologicalOrder(nodes, edges)
        return Graph(name: name, description: description, nodes: ordered, edges: edges)
    }

    /// Letters and digits (any script, as before), `_` and `-`.
    static func isIDCharacter(_ c: Unicode.Scalar) -> Bool {
        c.properties.isAlphabetic || c.properties.numericType != nil || c == "_" || c == "-"
    }

    mutating func checkKeys(_ members: [(key: String, value: JSONValue)], allowed: [String], at base: String?) {
        var seen = Set<String>()
        for (key, _) in members {
            let at = base.map { "\($0).\(key)" } ?? key
            if !seen.insert(key).inserted {
                problem(at, "key \"\(key)\" is given twice")
            } else if !allowed.contains(key) {
                var message = "unknown key \"\(key)\""
                if let guess = closestMatch(to: key, in: allowed) { message += "; did you mean \"\(guess)\"?" }
                problem(at, message + " (allowed: \(allowed.joined(separator: ", ")))")
            }
        }
    }

    mutating func node(id: String, _ value: JSONValue, overrides: [GraphLoader.Override]) -> Graph.NodeSpec? {
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
        guard let type = registry.lookup(typeName) else {
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
        let d = type.descriptor
        var given: [(key: String, value: JSONValue, location: String)] = []
        switch value["params"] {
        case .object(let params)?:
            checkParamKeysTwice(params, at: "\(at).params")
            for (k, v) in params { given.append((k, v, "\(at).params.\(k)")) }
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
                given.removeAll { replaced.contains($0.key) && !$0.location.hasPrefix("--set") }
            }
            if o.value.isEmpty { continue }
            switch spec.parseOverride(o.value) {
            case .success(let json): given.append((o.parameter, json, o.location))
            case .failure(let e): problem(o.location, e.message)
            }
        }
        var values: [String: ParameterValue] = [:]
        var ok = true
        for (key, json, location) in given {
            guard let spec = d.parameter(key) else {
                unknownParameter(key, of: d, at: location)
                ok = false
                continue
            }
            switch spec.validate(json) {
            case .success(let v): values[key] = v
            case .failure(let e): problem(location, e.message); ok = false
            }
        }
        let explicit = Set(values.keys)
        for spec in d.parameters where values[spec.name] == nil {
            if let dv = spec.defaultValue {
                values[spec.name] = dv
            } else if spec.isRequired {
                problem("\(at).params.\(spec.name)", "required parameter of \(d.type) is missing (\(spec.help))")
                ok = false
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
        return Graph.NodeSpec(id: id, type: type, parameters: parameters)
    }

    mutating func checkParamKeysTwice(_ members: [(key: String, value: JSONValue)], at base: String) {
        var seen = Set<String>()
        for (k, _) in members where !seen.insert(k).inserted {
            problem("\(base).\(k)", "parameter \"\(k)\" is given twice")
        }
    }

    mutating func unknownParameter(_ name: String, of d: NodeDescriptor, at location: String) {
        var message = "unknown parameter \"\(name)\" for \(d.type)"
        if let guess = closestMatch(to: name, in: d.parameters.map(\.name)) { message += "; did you mean \"\(guess)\"?" }
        let names = d.parameters.map(\.name)
        problem(location, message + (names.isEmpty ? " (it takes none)" : " (it takes: \(names.joined(separator: ", ")))"))
    }

    mutating func edge(_ i: Int, _ item: JSONValue, nodes: [String: Graph.NodeSpec], known: Set<String>) -> Graph.Edge? {
        let at = "edges[\(i)]"
        var fromText: Substring?, toText: Substring?
        var fromAt = at, toAt = at
        var capacity = EdgeCapacity.default
        switch item {
        case .string(let s):
            let parts = s.components(separatedBy: "->")
            guard parts.count == 2 else {
                problem(at, "expected \"node.port -> node.port\", got \"\(s)\"")
                return nil
            }
            fromText = Substring(parts[0])
            toText = Substring(parts[1])
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
        var ok = true
        for (ref, loc) in [(from, fromAt), (to, toAt)] where !known.contains(ref.node) {
            var message = "no node \"\(ref.node)\" in the graph"
            if let guess = closestMatch(to: ref.node, in: Array(known)) { message += "; did you mean \"\(guess)\"?" }
            problem(loc, message)
            ok = false
        }
        guard ok else { return nil }
        // A node whose type was unknown was already reported; its ports cannot be checked.
        guard let fromNode = nodes[from.node], let toNode = nodes[to.node] else { return nil }
        let fd = fromNode.descriptor, td = toNode.descriptor
        guard let out = fd.output(from.port) else {
            problem(fromAt, "\(fd.type) node \"\(from.node)\" has no output \"\(from.port)\"" + portList(fd.outputs, "outputs")
                    + suggestion(from.port, fd.outputs))
            return nil
        }
        guard let input = td.input(to.port) else {
            problem(toAt, "\(td.type) node \"\(to.node)\" has no input \"\(to.port)\"" + portList(td.inputs, "inputs")
                    + suggestion(to.port, td.inputs))
            return nil
        }
        guard out.formats.intersects(input.formats) else {
            problem(at, "cannot connect \"\(from)\" (\(out.formats)) to \"\(to)\" (\(input.formats))")
            return nil
        }
        if from.node == to.node {
            problem(at, "node \"\(from.node)\" is connected to itself")
            return nil
        }
        if capacity != .default, out.formats == .container {
            // Not silently ignored: the demuxer pulls a file's bytes itself, in large blocks and
            // with seeks, so there is nothing to bound.
            problem("\(at).capacity", "\"\(from)\" carries a file's bytes, which its demuxer reads directly; a capacity bounds only media streams")
            return nil
        }
        return Graph.Edge(from: from, to: to, capacity: capacity, index: i)
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

    /// Kahn's algorithm, linear in nodes and edges; a cycle is a problem naming its nodes.
    mutating func topologicalOrder(_ nodes: [Graph.NodeSpec], _ edges: [Graph.Edge]) -> [Graph.NodeSpec] {
        var indegree: [String: Int] = [:]
        var outgoing: [String: [String]] = [:]
        for n in nodes { indegree[n.id] = 0 }
        for e in edges {
            indegree[e.to.node, default: 0] += 1
            outgoing[e.from.node, default: []].append(e.to.node)
        }
        var order = nodes.filter { indegree[$0.id] == 0 }.map(\.id)
        var next = 0
        while next < order.count {
            let id = order[next]
            next += 1
            for target in outgoing[id] ?? [] {
                let left = (indegree[target] ?? 1) - 1
                indegree[target] = left
                if left == 0 { order.append(target) }
            }
        }
        if order.count < nodes.count {
            let placed = Set(order)
            let inCycle = nodes.map(\.id).filter { !placed.contains($0) }
            problem("edges", "the graph has a cycle through \(inCycle.map { "\"\($0)\"" }.joined(separator: ", ")); data must flow one way")
            return nodes
        }
        let byID = Dictionary(nodes.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        return order.compactMap { byID[$0] }
    }
}
