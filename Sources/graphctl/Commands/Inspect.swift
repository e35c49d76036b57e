import ArgumentParser
import FoundationEssentials
import Glibc
import Dispatch
import GraphKit
import Nodes

struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List node types, or show one with its ports and parameters (like gst-inspect-1.0)."
    )

    @Argument(help: "A node type, such as encode.aac. Without it, every type is listed.")
    var type: String?

    @Flag(help: "Print JSON for machines.")
    var json = false

    @Flag(help: "List the plugins loaded, with their versions, files and node types.")
    var plugins = false

    @OptionGroup var pluginOptions: PluginOptions

    func run() throws {
        let registry: NodeRegistry
        do {
            registry = try pluginOptions.registry()
        } catch {
            throw report(error)
        }
        if plugins {
            printPlugins(registry)
            return
        }
        guard let type else {
            let all = registry.types.map { $0.descriptor }.sorted { $0.type < $1.type }
            if json {
                print(JSONValue.array(all.map(\.json)).description)
                return
            }
            let width = all.map(\.type.count).max() ?? 0
            for category in NodeCategory.allCases {
                let these = all.filter { $0.category == category }
                guard !these.isEmpty else { continue }
                print("\(category.rawValue):")
                for d in these {
                    var from = ""
                    if case .plugin(let name, _)? = registry.origin(of: d.type) { from = "  [plugin \(name)]" }
                    print("  \(d.type + String(repeating: " ", count: max(0, width - d.type.count)))  \(d.summary)\(from)")
                }
            }
            return
        }
        guard let node = registry.lookup(type) else {
            var message = "error: unknown node type \"\(type)\""
            if let guess = registry.suggestion(for: type) { message += "; did you mean \"\(guess)\"?" }
            printError(message)
            printError("See 'graphctl inspect' for the list.")
            throw ExitCode(GraphError.Code.usage.exitStatus)
        }
        let d = node.descriptor
        let origin = registry.origin(of: type) ?? .builtIn
        if json {
            guard case .object(var members) = d.json else { return }
            members.append(("origin", .string(origin.description)))
            print(JSONValue.object(members).description)
        } else {
            print(d.inspectText, terminator: "")
            print("\nFrom: \(origin)")
        }
    }

    /// `inspect --plugins`: like `gst-inspect-1.0 PLUGIN`, who each plugin says it is.
    func printPlugins(_ registry: NodeRegistry) {
        if json {
            print(JSONValue.array(registry.plugins.map { p in
                ["name": .string(p.name), "version": .string(p.version), "summary": .string(p.summary), "path": .string(p.path),
                 "graphKitVersion": .string(p.graphKitVersion), "compilerVersion": .string(p.compilerVersion),
                 "types": .array(p.types.map { .string($0) })]
            }).description)
            return
        }
        if registry.plugins.isEmpty {
            let searched = registry.pluginSearchPaths.isEmpty ? "nowhere" : registry.pluginSearchPaths.joined(separator: ", ")
            print("No plugins loaded (searched: \(searched)). Load one with --plugin PATH or \(PluginLoader.pathVariable).")
            return
        }
        for p in registry.plugins {
            print("\(p.name) \(p.version)\(p.summary.isEmpty ? "" : ": \(p.summary)")")
            print("  file: \(p.path)")
            print("  built with GraphKit \(p.graphKitVersion), Swift \(p.compilerVersion)")
            print("  node types: \(p.types.joined(separator: ", "))")
        }
    }
}

extension ParameterCondition {
    var json: JSONValue {
        let test: JSONValue = switch test {
        case .given(let p): ["given": .string(p)]
        case .equals(let p, let v): ["parameter": .string(p), "equals": v.json]
        case .nonEmpty(let p): ["nonEmpty": .string(p)]
        }
        return negated ? ["not": test] : test
    }
}

extension ParameterRule {
    var json: JSONValue {
        func names(_ list: [String]) -> JSONValue { .array(list.map { .string($0) }) }
        var members: [(key: String, value: JSONValue)]
        switch kind {
        case .exclusive(let list): members = [("exclusive", names(list))]
        case .allOrNone(let list): members = [("allOrNone", names(list))]
        case .oneOf(let forms): members = [("oneOf", .array(forms.map(names)))]
        case let .implication(condition, requirement, reason):
            members = [("if", condition.json), ("then", requirement.json)]
            if let reason { members.append(("reason", .string(reason))) }
        }
        return .object(members + [("description", .string(description))])
    }
}

extension NodeDescriptor {
    var json: JSONValue {
        func ports(_ list: [PortDescriptor]) -> JSONValue {
            .array(list.map { p in
                ["name": .string(p.name), "formats": .string(p.formats.description),
                 "presence": .string(p.presence.rawValue), "help": .string(p.help)]
            })
        }
        let params: [JSONValue] = parameters.map { p in
            var members: [(key: String, value: JSONValue)] = [("name", .string(p.name)), ("type", .string(p.kind.typeName))]
            switch p.kind {
            case .integer(let r): members += [("minimum", .number(Double(r.lowerBound))), ("maximum", .number(Double(r.upperBound)))]
            case .integerChoice(let values): members.append(("values", .array(values.map { .number(Double($0)) })))
            case .number(let r): members += [("minimum", .number(r.lowerBound)), ("maximum", .number(r.upperBound))]
            case .enumeration(let names): members.append(("values", .array(names.map { .string($0) })))
            case .numbers(let n): members.append(("count", .number(Double(n))))
            case .records(let fields): members.append(("fields", .array(fields.map { f in
                    .object([("name", .string(f.name)), ("type", .string(f.kind.typeName)), ("required", .bool(f.isRequired)), ("help", .string(f.help))]
                        + (f.rangeDescription.map { [("range", .string($0))] } ?? []) + (f.defaultValue.map { [("default", $0.json)] } ?? []))
                })))
            case .string(let format):
                if let pattern = format.pattern { members.append(("pattern", .string(pattern))) }
                if format.minLength > 0 { members.append(("minLength", .number(Double(format.minLength)))) }
                if format != .any { members.append(("format", .string(format.expected))) }
            case .boolean: break
            }
            if let dv = p.defaultValue { members.append(("default", dv.json)) }
            members += [("required", .bool(p.isRequired)), ("acceptsAuto", .bool(p.acceptsAuto)), ("help", .string(p.help))]
            return .object(members)
        }
        var members: [(key: String, value: JSONValue)] = [
            ("type", .string(type)), ("category", .string(category.rawValue)), ("summary", .string(summary)),
            ("inputs", ports(inputs)), ("outputs", ports(outputs)), ("parameters", .array(params)),
            ("rules", .array(rules.map(\.json))),
        ]
        if let c = unboundedWhen { members.append(("unboundedWhen", c.json)) }
        if let c = needsBoundedInputWhen { members.append(("needsBoundedInputWhen", c.json)) }
        return .object(members + [("requiresAnInput", .bool(requiresAnInput)), ("example", .string(example))])
    }

    var inspectText: String {
        var out = "\(type): \(summary)\n\nCategory: \(category.rawValue)\n"
        func portLines(_ title: String, _ list: [PortDescriptor]) {
            out += "\n\(title):\n"
            if list.isEmpty { out += "  none\n"; return }
            for p in list {
                let presence = p.presence == .always ? "" : " (\(p.presence.rawValue))"
                out += "  \(p.name)\(presence)\n    formats: \(p.formats)\n    \(p.help)\n"
            }
        }
        portLines("Inputs", inputs)
        portLines("Outputs", outputs)
        out += "\nParameters:\n"
        if parameters.isEmpty { out += "  none\n" }
        for p in parameters {
            var line = "  \(p.name): \(p.kind.typeName)"
            switch p.kind {
            case .enumeration, .integerChoice: line += p.rangeDescription.map { " (\($0))" } ?? ""
            case .string(let format) where format != .any: line += " (\(format.expected))"
            default: line += p.rangeDescription.map { ", \($0)" } ?? ""
            }
            if p.acceptsAuto { line += ", or \"auto\"" }
            if let dv = p.defaultValue { line += ", default \(dv)" } else if p.isRequired { line += ", required" } else { line += ", optional" }
            out += line + "\n    \(p.help)\n"
            if case .records(let fields) = p.kind {
                for f in fields {
                    var field = "    .\(f.name): \(f.kind.typeName)" + (f.rangeDescription.map { ", \($0)" } ?? "")
                    if let dv = f.defaultValue { field += ", default \(dv)" } else if f.isRequired { field += ", required" } else { field += ", optional" }
                    out += field + "\n      \(f.help)\n"
                }
            }
        }
        if !rules.isEmpty {
            out += "\nRules:\n"
            for rule in rules { out += "  \(rule)\n" }
        }
        if let c = unboundedWhen { out += "\nRuns until stopped when \(c).\n" }
        if let c = needsBoundedInputWhen { out += "\nNeeds an input of known length when \(c).\n" }
        if requiresAnInput { out += "\nAt least one input must be connected.\n" }
        out += "\nExample:\n  \"\(type.replacing(".", with: "_"))\": \(example)\n"
        return out
    }
}
