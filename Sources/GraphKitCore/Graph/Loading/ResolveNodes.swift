/// A node type met in a graph, asked for its descriptor once (asking a type for its descriptor
/// builds it; a graph may hold many thousands of nodes of one type).
final class NodeKind: Sendable {
    let type: any Node.Type
    let descriptor: NodeDescriptor
    /// The parameters that name a file the node writes (declared `writesFile`).
    let writtenFiles: [String]

    init(_ type: any Node.Type) {
        self.type = type
        descriptor = type.descriptor
        writtenFiles = descriptor.parameters.filter(\.writesFile).map(\.name)
    }
}

/// A node whose type is known and whose parameters were read (each value that was refused is
/// reported, and left out).
struct ResolvedNode {
    var spec: Graph.NodeSpec
    let kind: NodeKind
    /// Where a `--set` gave a parameter: a problem about its value is reported there.
    var setAt: [String: String]

    var id: String { spec.id }
    var descriptor: NodeDescriptor { kind.descriptor }

    /// Where a problem about `parameter`'s value goes: the `--set` that gave it, else its place
    /// in the document.
    func location(of parameter: String) -> String {
        setAt[parameter] ?? "nodes.\(id).params.\(parameter)"
    }
}

/// The graph's nodes by number: each distinct id in document order.
struct NodeTable {
    /// Each distinct node id; its place here is the node's number.
    var ids: [String] = []
    var number: [String: Int] = [:]
    /// By node number: the node, or nil when its type or shape could not be read (reported).
    var nodes: [ResolvedNode?] = []

    var count: Int { ids.count }
    var indices: Range<Int> { ids.indices }
    subscript(k: Int) -> ResolvedNode? { nodes[k] }
    /// Node k's type, when it was resolved: what the passes over every node ask (a node's whole
    /// record is copied only where a problem is reported, so a graph of many thousands of nodes
    /// costs one reference per node and pass).
    func kind(_ k: Int) -> NodeKind? { nodes[k]?.kind }
    func parameters(_ k: Int) -> Parameters? { nodes[k]?.spec.parameters }

    /// The nodes as `order` places them, when it places every node and each was resolved (a
    /// graph can be made of them); else nil.
    func specs(in order: [Int]) -> [Graph.NodeSpec]? {
        guard order.count == nodes.count else { return nil }
        var specs: [Graph.NodeSpec] = []
        specs.reserveCapacity(order.count)
        for k in order {
            guard let spec = nodes[k]?.spec else { return nil }
            specs.append(spec)
        }
        return specs
    }
}

/// Pass 2: each node of `nodes`, in document order: its id (once, of letters, digits, `_` and
/// `-`), its shape (`type` and `params`), its type (known to the registry, or a suggestion and
/// where plugins were looked for), its parameters (the file's, then each `--set` in order, the
/// last winning), each typed by its declaration, the defaults, the required ones, and the rules
/// across them. Then each `--set` that names no node.
struct ResolveNodes {
    let registry: NodeRegistry
    private var problems = Problems()
    /// The node types met, by type name, each asked for its descriptor once.
    private var kinds: [String: NodeKind] = [:]

    static func run(_ members: [(key: String, value: JSONValue)], overrides: [GraphLoader.Override],
                    registry: NodeRegistry) -> Passed<NodeTable> {
        var pass = ResolveNodes(registry: registry)
        let table = pass.resolve(members, overrides: overrides)
        return Passed(result: table, problems: pass.problems.list)
    }

    private init(registry: NodeRegistry) { self.registry = registry }

    private mutating func resolve(_ members: [(key: String, value: JSONValue)], overrides: [GraphLoader.Override]) -> NodeTable {
        var table = NodeTable()
        table.ids.reserveCapacity(members.count)
        table.number.reserveCapacity(members.count)
        table.nodes.reserveCapacity(members.count)
        let overridesOf = Dictionary(grouping: overrides, by: \.node)
        for (id, value) in members {
            if let first = table.number.updateValue(table.ids.count, forKey: id) {
                table.number[id] = first
                problems.add("nodes.\(id)", "node id \"\(id)\" is given twice")
                continue
            }
            table.ids.append(id)
            if id.isEmpty || !id.unicodeScalars.allSatisfy(Self.isIDCharacter) {
                problems.add("nodes.\(id)", "node id \"\(id)\" may use only letters, digits, _ and -")
            }
            table.nodes.append(node(id: id, value, overrides: overridesOf.isEmpty ? [] : overridesOf[id] ?? []))
        }
        var suggestions = NodeIDSuggestions(table.ids)
        for o in overrides where table.number[o.node] == nil {
            problems.add(o.location, "no node \"\(o.node)\" in the graph" + suggestions.text(for: o.node))
        }
        return table
    }

    /// Letters and digits (any script), `_` and `-`.
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

    /// A value for a parameter, and where it came from: nil for the file (its path is made only
    /// for a problem), else the `--set`.
    private typealias Given = (key: String, value: JSONValue, override: String?)

    private mutating func node(id: String, _ value: JSONValue, overrides: [GraphLoader.Override]) -> ResolvedNode? {
        let at = "nodes.\(id)"
        guard let kind = kind(of: value, at: at) else { return nil }
        let d = kind.descriptor
        var given = fileValues(value["params"], at: at)
        apply(overrides, to: &given, of: d)
        let parameters = typed(given, of: d, at: at)
        var setAt: [String: String] = [:]
        for (key, _, override) in given { if let override { setAt[key] = override } }
        return ResolvedNode(spec: Graph.NodeSpec(id: id, type: kind.type, parameters: parameters), kind: kind, setAt: setAt)
    }

    /// The node's type, from an object with `type` and `params`; nil (reported) when there is none.
    private mutating func kind(of value: JSONValue, at: String) -> NodeKind? {
        guard case .object(let members) = value else {
            problems.add(at, "expected an object with \"type\" and \"params\", got \(value.typeName)")
            return nil
        }
        problems.checkKeys(members, allowed: ["type", "params"], at: at)
        guard case .string(let typeName)? = value["type"] else {
            problems.add("\(at).type", value["type"] == nil ? "missing; every node names its type" : "expected a string")
            return nil
        }
        if let known = kinds[typeName] { return known }
        if let type = registry.lookup(typeName) {
            let kind = NodeKind(type)
            kinds[typeName] = kind
            return kind
        }
        var message = "unknown node type \"\(typeName)\""
        if let guess = registry.suggestion(for: typeName) { message += "; did you mean \"\(guess)\"?" }
        message += " (`graphctl inspect` lists them)"
        // A type from a plugin that was not loaded: say where plugins were looked for.
        if registry.pluginSearchPaths.isEmpty {
            message += "; if a plugin provides it, load it with --plugin PATH or \(PluginLoader.pathVariable) (no plugin was searched for)"
        } else {
            message += "; if a plugin provides it, load it with --plugin PATH (searched: \(registry.pluginSearchPaths.joined(separator: ", ")))"
        }
        problems.add("\(at).type", message)
        return nil
    }

    /// The values `params` gives, each key once (a repeated one reported, and kept in order).
    private mutating func fileValues(_ params: JSONValue?, at: String) -> [Given] {
        switch params {
        case .object(let members)?:
            if let repeated = Problems.repeatedKeys(members) {
                for (i, (k, _)) in members.enumerated() where repeated[i] {
                    problems.add(Problems.member(k, of: "\(at).params"), "parameter \"\(k)\" is given twice")
                }
            }
            return members.map { ($0.key, $0.value, nil) }
        case nil: return []
        case let p?:
            problems.add("\(at).params", "expected an object, got \(p.typeName)")
            return []
        }
    }

    /// The `--set`s of this node, in order, over the file's values: the last of a parameter
    /// wins; one of an exclusive group, or of one form, replaces whichever of the others the
    /// file gave; an empty value removes the parameter.
    private mutating func apply(_ overrides: [GraphLoader.Override], to given: inout [Given], of d: NodeDescriptor) {
        for o in overrides {
            guard let spec = d.parameter(o.parameter) else {
                unknownParameter(o.parameter, of: d, at: o.location)
                continue
            }
            given.removeAll { $0.key == o.parameter }
            for rule in d.rules {
                let replaced = rule.replaced(bySetting: o.parameter)
                given.removeAll { replaced.contains($0.key) && $0.override == nil }
            }
            if o.value.isEmpty { continue }
            switch spec.parseOverride(o.value) {
            case .success(let json): given.append((o.parameter, json, o.location))
            case .failure(let e): problems.add(o.location, e.message)
            }
        }
    }

    /// The parameters, each value typed by its declaration; the defaults of those not given; a
    /// problem for each value refused, each unknown name and each required one missing; then,
    /// when every value was taken, the rules across them.
    private mutating func typed(_ given: [Given], of d: NodeDescriptor, at: String) -> Parameters {
        var values: [String: ParameterValue] = [:]
        values.reserveCapacity(d.parameters.count)
        var ok = true
        var refused: Set<String> = []
        for (key, json, override) in given {
            guard let spec = d.parameter(key) else {
                unknownParameter(key, of: d, at: override ?? Problems.member(key, of: "\(at).params"))
                ok = false
                continue
            }
            switch spec.validate(json) {
            case .success(let v): values[key] = v
            case .failure(let e):
                problems.add(override ?? Problems.member(key, of: "\(at).params"), e.message)
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
                problems.add("\(at).params.\(spec.name)", "required parameter of \(d.type) is missing (\(spec.help))")
                ok = false
            }
        }
        let parameters = Parameters(values, explicit: explicit)
        if ok {
            for rule in d.rules {
                for (param, message) in rule.problems(in: parameters) {
                    problems.add(param.map { "\(at).params.\($0)" } ?? "\(at).params", message)
                }
            }
        }
        return parameters
    }

    private mutating func unknownParameter(_ name: String, of d: NodeDescriptor, at location: String) {
        var message = "unknown parameter \"\(name)\" for \(d.type)"
        let names = d.parameters.map(\.name)
        if let guess = closestMatch(to: name, in: names) { message += "; did you mean \"\(guess)\"?" }
        problems.add(location, message + (names.isEmpty ? " (it takes none)" : " (it takes: \(names.joined(separator: ", ")))"))
    }
}
