import ArgumentParser
import GraphKit
import Nodes

struct Schema: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the graph file format as JSON Schema, with every node type and its parameters."
    )

    @OptionGroup var plugins: PluginOptions

    func run() throws {
        do {
            print(Self.schema(try plugins.registry()).description)
        } catch {
            throw report(error)
        }
    }

    static func parameterSchema(_ p: ParameterDescriptor) -> JSONValue {
        var s: [(key: String, value: JSONValue)] = [("description", .string(p.help))]
        switch p.kind {
        case .integer(let r):
            s += [("type", "integer"), ("minimum", .number(Double(r.lowerBound))), ("maximum", .number(Double(r.upperBound)))]
            if p.multipleOf > 1 { s.append(("multipleOf", .number(Double(p.multipleOf)))) }
        case .integerChoice(let values): s += [("type", "integer"), ("enum", .array(values.map { .number(Double($0)) }))]
        case .number(let r): s += [("type", "number"), ("minimum", .number(r.lowerBound)), ("maximum", .number(r.upperBound))]
        case .boolean: s.append(("type", "boolean"))
        case .string(let format):
            s.append(("type", "string"))
            if format.minLength > 0 { s.append(("minLength", .number(Double(format.minLength)))) }
            if let pattern = format.pattern { s.append(("pattern", .string(pattern))) }
        case .enumeration(let names): s.append(("enum", .array(names.map { .string($0) })))
        case .numbers(let n): s += [("type", "array"), ("items", ["type": "number"]), ("minItems", .number(Double(n))), ("maxItems", .number(Double(n)))]
        case .records(let fields):
            let item: JSONValue = .object([("type", "object"), ("properties", .object(fields.map { ($0.name, parameterSchema($0)) })),
                                           ("required", .array(fields.filter(\.isRequired).map { .string($0.name) })), ("additionalProperties", .bool(false))])
            s += [("type", "array"), ("items", item), ("minItems", 1)]
        }
        if let d = p.defaultValue { s.append(("default", d.json)) }
        if p.acceptsAuto { return .object([("anyOf", .array([.object(s), ["const": "auto"]]))]) }
        return .object(s)
    }

    /// A condition on a `params` object. A parameter left out takes its default, so a test of
    /// its value also holds when it is absent if the default passes it, and needs it present if not.
    static func conditionSchema(_ c: ParameterCondition, _ d: NodeDescriptor) -> JSONValue {
        func value(_ name: String, _ schema: JSONValue, defaultPasses: Bool) -> JSONValue {
            let properties: (key: String, value: JSONValue) = ("properties", .object([(name, schema)]))
            return defaultPasses ? .object([properties]) : .object([("required", [.string(name)]), properties])
        }
        let test: JSONValue
        switch c.test {
        case .given(let name):
            test = ["required": [.string(name)]]
        case .equals(let name, let v):
            test = value(name, ["const": v.json], defaultPasses: d.parameter(name)?.defaultValue == v)
        case .nonEmpty(let name):
            var defaultPasses = false
            if case .string(let s)? = d.parameter(name)?.defaultValue { defaultPasses = !s.isEmpty }
            test = value(name, ["type": "string", "minLength": 1], defaultPasses: defaultPasses)
        }
        return c.negated ? ["not": test] : test
    }

    /// The node's rules across parameters, as schemas every `params` object must match.
    static func ruleSchemas(_ d: NodeDescriptor) -> [JSONValue] {
        func required(_ names: [String]) -> JSONValue { ["required": .array(names.map { .string($0) })] }
        var schemas: [JSONValue] = []
        var together: [(key: String, value: JSONValue)] = []
        func allOrNone(_ names: [String]) {
            guard names.count > 1 else { return }
            for n in names { together.append((n, .array(names.filter { $0 != n }.map { .string($0) }))) }
        }
        for rule in d.rules {
            switch rule.kind {
            case .exclusive(let names):
                var pairs: [JSONValue] = []
                for (i, a) in names.enumerated() { for b in names[(i + 1)...] { pairs.append(required([a, b])) } }
                schemas.append(["not": ["anyOf": .array(pairs)]])
            case .allOrNone(let names):
                allOrNone(names)
            case .oneOf(let forms):
                // Exactly one form: any parameter of a form means that form, complete.
                schemas.append(["oneOf": .array(forms.map { form in
                    .object([("anyOf", .array(form.map { required([$0]) }))])
                })])
                forms.forEach(allOrNone)
            case let .implication(condition, requirement, _):
                schemas.append(.object([("if", conditionSchema(condition, d)), ("then", conditionSchema(requirement, d))]))
            }
        }
        if !together.isEmpty { schemas.append(["dependentRequired": .object(together)]) }
        return schemas
    }

    static func schema(_ registry: NodeRegistry) -> JSONValue {
        let nodeSchemas: [JSONValue] = registry.types.map { $0.descriptor }.sorted { $0.type < $1.type }.map { d in
            let required = d.parameters.filter(\.isRequired).map { JSONValue.string($0.name) }
            var params: [(key: String, value: JSONValue)] = [
                ("type", "object"),
                ("properties", .object(d.parameters.map { ($0.name, parameterSchema($0)) })),
                ("additionalProperties", false),
            ]
            if !required.isEmpty { params.append(("required", .array(required))) }
            let rules = ruleSchemas(d)
            if !rules.isEmpty { params.append(("allOf", .array(rules))) }
            // `params` may be left out only when the defaults alone satisfy every rule.
            let defaults = Parameters(Dictionary(uniqueKeysWithValues: d.parameters.compactMap { p in p.defaultValue.map { (p.name, $0) } }),
                                      explicit: [])
            let needsParams = !required.isEmpty || d.rules.contains { !$0.problems(in: defaults).isEmpty }
            var node: [(key: String, value: JSONValue)] = [
                ("description", .string(d.summary)), ("type", "object"),
                ("properties", .object([("type", .object([("const", .string(d.type))])), ("params", .object(params))])),
                ("required", .array(needsParams ? ["type", "params"] : ["type"])),
                ("additionalProperties", false),
            ]
            var notes: [String] = []
            if let c = d.unboundedWhen { notes.append("runs until stopped when \(c)") }
            if let c = d.needsBoundedInputWhen { notes.append("needs an input of known length when \(c)") }
            if !notes.isEmpty { node.append(("$comment", .string(notes.joined(separator: "; ")))) }
            return .object(node)
        }
        let edgeObject: JSONValue = .object([
            ("type", "object"),
            ("properties", .object([
                ("from", ["type": "string", "pattern": "^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$"]),
                ("to", ["type": "string", "pattern": "^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$"]),
                ("capacity", .object([
                    ("type", "object"),
                    ("properties", .object([
                        ("buffers", ["type": "integer", "minimum": 1]),
                        ("bytes", ["type": "integer", "minimum": 1]),
                        ("seconds", ["type": "number", "exclusiveMinimum": 0, "maximum": 3600]),
                    ])),
                    ("minProperties", 1), ("additionalProperties", false),
                ])),
            ])),
            ("required", ["from", "to"]), ("additionalProperties", false),
        ])
        return .object([
            ("$schema", "https://json-schema.org/draft/2020-12/schema"),
            ("title", "GraphKit graph"),
            ("type", "object"),
            ("properties", .object([
                ("version", ["const": 1]),
                ("name", ["type": "string"]),
                ("description", ["type": "string"]),
                ("nodes", .object([
                    ("type", "object"), ("minProperties", 1),
                    ("patternProperties", .object([("^[A-Za-z0-9_-]+$", .object([("oneOf", .array(nodeSchemas))]))])),
                    ("additionalProperties", false),
                ])),
                ("edges", .object([
                    ("type", "array"),
                    ("items", .object([("oneOf", .array([
                        ["type": "string", "pattern": "^\\s*[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\s*->\\s*[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\s*$"],
                        edgeObject,
                    ]))])),
                ])),
            ])),
            ("required", ["version", "nodes"]),
            ("additionalProperties", false),
        ])
    }
}
