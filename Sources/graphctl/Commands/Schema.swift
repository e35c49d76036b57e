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
        case .integer(let r): s += [("type", "integer"), ("minimum", .number(Double(r.lowerBound))), ("maximum", .number(Double(r.upperBound)))]
        case .number(let r): s += [("type", "number"), ("minimum", .number(r.lowerBound)), ("maximum", .number(r.upperBound))]
        case .boolean: s.append(("type", "boolean"))
        case .string: s.append(("type", "string"))
        case .enumeration(let names): s.append(("enum", .array(names.map { .string($0) })))
        case .numbers(let n): s += [("type", "array"), ("items", ["type": "number"]), ("minItems", .number(Double(n))), ("maxItems", .number(Double(n)))]
        }
        if let d = p.defaultValue { s.append(("default", d.json)) }
        if p.acceptsAuto { return .object([("anyOf", .array([.object(s), ["const": "auto"]]))]) }
        return .object(s)
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
            let node: [(key: String, value: JSONValue)] = [
                ("description", .string(d.summary)), ("type", "object"),
                ("properties", .object([("type", .object([("const", .string(d.type))])), ("params", .object(params))])),
                ("required", .array(required.isEmpty ? ["type"] : ["type", "params"])),
                ("additionalProperties", false),
            ]
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
