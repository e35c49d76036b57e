import GraphKit

/// A `--map node.param=TEMPLATE`: a `--set` whose value is made from each input. Placeholders
/// are `{input}` (the path as listed), `{name}` (its last component), `{stem}` (the name without
/// its last extension), `{dir}` (the folder it is in, `.` when none) and `{index}` (its place,
/// from 0, in the sorted list of every input, whatever the shard); `{{` and `}}` are braces.
struct InputTemplate: Sendable, Equatable {
    enum Piece: Sendable, Equatable {
        case text(String)
        case placeholder(Placeholder)
    }

    enum Placeholder: String, Sendable, CaseIterable {
        case input, name, stem, dir, index
    }

    /// The `--map` as given, for messages.
    let source: String
    let node: String
    let parameter: String
    let pieces: [Piece]

    var key: String { "\(node).\(parameter)" }

    /// Parses `node.param=TEMPLATE`. A malformed map or an unknown placeholder is an invalid
    /// override (65), as a malformed `--set` is.
    init(parsing text: String) throws(GraphError) {
        source = text
        let override: GraphLoader.Override
        do {
            override = try GraphLoader.Override(parsing: text)
        } catch {
            throw GraphError(.invalidGraph, at: "--map \(text)", "expected node.param=template, such as src.path={input}")
        }
        node = override.node
        parameter = override.parameter
        pieces = try Self.pieces(of: override.value, in: text)
    }

    private static func pieces(of template: String, in text: String) throws(GraphError) -> [Piece] {
        var pieces: [Piece] = []
        var literal = ""
        var i = template.startIndex
        func fail(_ message: String) -> GraphError {
            GraphError(.invalidGraph, at: "--map \(text)", message)
        }
        while i < template.endIndex {
            let c = template[i]
            let next = template.index(after: i)
            if c == "{" {
                if next < template.endIndex, template[next] == "{" {
                    literal.append("{")
                    i = template.index(after: next)
                    continue
                }
                guard let close = template[next...].firstIndex(of: "}") else {
                    throw fail("\"{\" without a closing \"}\"; write {{ for a brace")
                }
                let name = String(template[next..<close])
                guard let placeholder = Placeholder(rawValue: name) else {
                    let known = Placeholder.allCases.map { "{\($0.rawValue)}" }.joined(separator: ", ")
                    var message = "unknown placeholder {\(name)}; the placeholders are \(known)"
                    if let guess = closestMatch(to: name, in: Placeholder.allCases.map(\.rawValue)) {
                        message += "; did you mean {\(guess)}?"
                    }
                    throw fail(message)
                }
                if !literal.isEmpty { pieces.append(.text(literal)); literal = "" }
                pieces.append(.placeholder(placeholder))
                i = template.index(after: close)
            } else if c == "}" {
                guard next < template.endIndex, template[next] == "}" else {
                    throw fail("\"}\" without an opening \"{\"; write }} for a brace")
                }
                literal.append("}")
                i = template.index(after: next)
            } else {
                literal.append(c)
                i = next
            }
        }
        if !literal.isEmpty { pieces.append(.text(literal)) }
        return pieces
    }

    /// The value for one input.
    func expand(for input: BatchInput) -> String {
        var out = ""
        for piece in pieces {
            switch piece {
            case .text(let s): out += s
            case .placeholder(let p): out += input.value(of: p)
            }
        }
        return out
    }

    /// The `--set` for one input.
    func override(for input: BatchInput) -> GraphLoader.Override {
        GraphLoader.Override(node: node, parameter: parameter, value: expand(for: input))
    }
}

/// One input of a batch: its path as listed and its place in the sorted list of all inputs.
/// The path is its bytes; `path` shows them as text (a name that is not UTF-8 with its stray
/// bytes escaped, `caf\xE9.wav`), and is what the placeholders give: an output named after such
/// an input gets the escaped name, and `{input}` alone is read by the input's own bytes (the
/// worker opens them, WorkerJob).
struct BatchInput: Sendable, Equatable {
    let bytes: [UInt8]
    let path: String
    let index: Int

    init(bytes: [UInt8], index: Int) {
        self.bytes = bytes
        self.index = index
        path = InputList.escaped(bytes)
    }

    init(path: String, index: Int) {
        self.init(bytes: Array(path.utf8), index: index)
    }

    /// Whether `path` is not the input's bytes (they are not UTF-8).
    var isEscaped: Bool { !path.utf8.elementsEqual(bytes) }

    var name: String {
        var p = Substring(path)
        while p.count > 1, p.hasSuffix("/") { p = p.dropLast() }
        if let slash = p.lastIndex(of: "/") { return String(p[p.index(after: slash)...]) }
        return String(p)
    }

    var stem: String {
        let n = name
        guard let dot = n.lastIndex(of: "."), dot != n.startIndex else { return n }
        return String(n[..<dot])
    }

    var dir: String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        if slash == path.startIndex { return "/" }
        return String(path[..<slash])
    }

    func value(of placeholder: InputTemplate.Placeholder) -> String {
        switch placeholder {
        case .input: path
        case .name: name
        case .stem: stem
        case .dir: dir
        case .index: String(index)
        }
    }
}
