import ArgumentParser
import Foundation
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

    func run() throws {
        let registry = NodeRegistry.builtIn
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
                for d in these { print("  \(d.type.padding(toLength: width, withPad: " ", startingAt: 0))  \(d.summary)") }
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
        if json {
            print(d.json.description)
        } else {
            print(d.inspectText, terminator: "")
        }
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
            case .number(let r): members += [("minimum", .number(r.lowerBound)), ("maximum", .number(r.upperBound))]
            case .enumeration(let names): members.append(("values", .array(names.map { .string($0) })))
            case .numbers(let n): members.append(("count", .number(Double(n))))
            default: break
            }
            if let dv = p.defaultValue { members.append(("default", dv.json)) }
            members += [("required", .bool(p.isRequired)), ("acceptsAuto", .bool(p.acceptsAuto)), ("help", .string(p.help))]
            return .object(members)
        }
        return .object([
            ("type", .string(type)), ("category", .string(category.rawValue)), ("summary", .string(summary)),
            ("inputs", ports(inputs)), ("outputs", ports(outputs)), ("parameters", .array(params)),
            ("example", .string(example)),
        ])
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
            if let range = p.rangeDescription { line += p.kind.typeName == "enumeration" ? " (\(range))" : ", \(range)" }
            if p.acceptsAuto { line += ", or \"auto\"" }
            if let dv = p.defaultValue { line += ", default \(dv)" } else if p.isRequired { line += ", required" } else { line += ", optional" }
            out += line + "\n    \(p.help)\n"
        }
        if requiresAnInput { out += "\nAt least one input must be connected.\n" }
        out += "\nExample:\n  \"\(type.replacingOccurrences(of: ".", with: "_"))\": \(example)\n"
        return out
    }
}
