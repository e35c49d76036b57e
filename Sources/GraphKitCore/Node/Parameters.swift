/// What a string parameter accepts: any string, a non-empty one, or one matching a pattern.
/// The loader checks it, and `graphctl schema` states it (`minLength`, `pattern`).
public struct StringFormat: Sendable, Hashable {
    /// A regular expression the whole string must match, in the syntax Swift's `Regex` and
    /// JSON Schema share (written anchored, ^…$, since JSON Schema's patterns are not).
    public var pattern: String?
    public var minLength: Int
    /// The form, for messages: `#rrggbb or #rrggbbaa`.
    public var expected: String
    /// How a value that does not match is quoted in the message (a URL's credentials, a
    /// passphrase, are never shown).
    public var shown: Shown

    /// How a message quotes a string parameter's value.
    public enum Shown: Sendable, Hashable {
        /// As it is.
        case asIs
        /// As a URL without its credentials (``RedactedURL``).
        case url
        /// As a URL without its credentials and what follows its first path segment (an RTMP
        /// stream key): ``RedactedURL/withoutKey(_:)``.
        case urlWithoutKey
        /// Not at all: a secret.
        case hidden
    }

    public init(pattern: String? = nil, minLength: Int = 0, expected: String, shown: Shown = .asIs) {
        self.pattern = pattern
        self.minLength = minLength
        self.expected = expected
        self.shown = shown
    }

    /// The value as a message may quote it.
    public func quoted(_ s: String) -> String {
        switch shown {
        case .asIs: JSONValue.quote(s)
        case .url: JSONValue.quote(RedactedURL.text(s))
        case .urlWithoutKey: JSONValue.quote(RedactedURL.withoutKey(s))
        case .hidden: "a value of \(s.count) characters"
        }
    }

    /// Any string.
    public static let any = StringFormat(expected: "a string")
    /// A file path: not empty.
    public static let path = StringFormat(minLength: 1, expected: "a path")
    /// A file name in a folder a node writes into: no folder (`/`), not hidden (no leading
    /// `.`), and no control character (C0, DEL, C1). Such names are written into playlists and
    /// manifests as lines of text, where a newline would forge a line (an `#EXT-X-STREAM-INF`
    /// of the attacker's), so a graph with one is refused when it is loaded, at the parameter.
    public static let fileName = pattern(#"^[^/.\x00-\x1F\x7F-\x9F][^/\x00-\x1F\x7F-\x9F]*$"#,
                                         "a file name (no folder, not hidden, no control characters)")

    /// Whether `text` holds a control character (C0, DEL or C1): what ``fileName`` refuses.
    public static func hasControlCharacter(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
    }

    /// Strings matching `regex` (anchored, ^…$), described as `expected` in messages.
    public static func pattern(_ regex: String, _ expected: String) -> StringFormat {
        StringFormat(pattern: regex, minLength: 1, expected: expected)
    }

    public func matches(_ s: String) -> Bool {
        guard s.count >= minLength else { return false }
        guard let pattern else { return true }
        guard let regex = try? Regex(pattern) else { return false }
        return (try? regex.wholeMatch(in: s)) != nil
    }
}

/// A parameter a node declares: name, type, range, default and help. `graphctl validate` and
/// `graphctl inspect` read these without building the node.
public struct ParameterDescriptor: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case integer(ClosedRange<Int>)
        /// An integer that is one of these (a sample width: 8 or 16).
        case integerChoice([Int])
        case number(ClosedRange<Double>)
        case boolean
        case string(StringFormat)
        case enumeration([String])
        /// A fixed-length array of numbers, such as a colour-matrix row.
        case numbers(count: Int)
        /// A non-empty array of objects, each with these fields (each a scalar parameter of its
        /// own: its kind, default, whether it is required): a list of files with ranges.
        case records(fields: [ParameterDescriptor])

        public var typeName: String {
            switch self {
            case .integer, .integerChoice: "integer"
            case .number: "number"
            case .boolean: "boolean"
            case .string: "string"
            case .enumeration: "enumeration"
            case .numbers(let n): "array of \(n) numbers"
            case .records(let fields): "array of objects {\(fields.map(\.name).joined(separator: ", "))}"
            }
        }
    }

    public var name: String
    public var kind: Kind
    /// Nil means required, unless `optional` is set.
    public var defaultValue: ParameterValue?
    /// Whether the parameter also takes the string `auto`.
    public var acceptsAuto: Bool
    /// Whether the parameter may be left out with no default (an output that is off, say).
    public var optional: Bool
    /// Whether the value is the path of a file the node writes by ``OutputFile``'s rule (a
    /// temporary name, renamed when complete), so that a file under that path is a complete one.
    /// `graphctl batch` reads it to find each input's outputs, to skip those already done.
    public var writesFile: Bool
    /// For an integer: its values are multiples of this (2: even, a 4:2:0 picture's sides).
    public var multipleOf: Int
    public var help: String

    public init(_ name: String, _ kind: Kind, default defaultValue: ParameterValue? = nil,
                acceptsAuto: Bool = false, optional: Bool = false, writesFile: Bool = false,
                multipleOf: Int = 1, help: String) {
        self.name = name
        self.kind = kind
        self.multipleOf = max(1, multipleOf)
        self.defaultValue = defaultValue
        self.acceptsAuto = acceptsAuto
        self.optional = optional
        self.writesFile = writesFile
        self.help = help
    }

    public var isRequired: Bool { defaultValue == nil && !optional }

    /// The range or choices, for messages and `inspect`.
    public var rangeDescription: String? {
        switch kind {
        case .integer(let r): "\(r.lowerBound) to \(r.upperBound)" + (multipleOf == 1 ? "" : multipleOf == 2 ? ", even" : ", a multiple of \(multipleOf)")
        case .integerChoice(let values): Self.list(values.map(String.init), "or")
        case .number(let r): "\(ParameterValue.number(r.lowerBound)) to \(ParameterValue.number(r.upperBound))"
        case .enumeration(let names): names.joined(separator: ", ")
        default: nil
        }
    }

    /// Checks a value from a graph document. Returns the typed value or a message saying what
    /// was expected.
    public func validate(_ json: JSONValue) -> Result<ParameterValue, ParameterError> {
        if acceptsAuto, case .string("auto") = json { return .success(.auto) }
        let expected = acceptsAuto ? "\(kind.typeName) or \"auto\"" : kind.typeName
        switch (kind, json) {
        case let (.integer(range), .number(n)):
            guard n == n.rounded(), abs(n) < 9.2e18 else { return .failure(.init("expected an integer, got \(json)")) }
            let i = Int(n)
            guard range.contains(i) else { return .failure(.init("\(i) is out of range (\(rangeDescription!))")) }
            guard i % multipleOf == 0 else {
                return .failure(.init(multipleOf == 2 ? "\(i) is odd; expected an even integer (\(rangeDescription!))"
                                      : "\(i) is not a multiple of \(multipleOf) (\(rangeDescription!))"))
            }
            return .success(.integer(i))
        case let (.number(range), .number(n)):
            guard range.contains(n) else {
                return .failure(.init("\(ParameterValue.number(n)) is out of range (\(rangeDescription!))"))
            }
            return .success(.number(n))
        case let (.boolean, .bool(b)):
            return .success(.boolean(b))
        case let (.integerChoice(values), .number(n)):
            guard n == n.rounded(), abs(n) < 9.2e18, values.contains(Int(n)) else {
                return .failure(.init("expected \(rangeDescription ?? ""), got \(json)"))
            }
            return .success(.integer(Int(n)))
        case let (.string(format), .string(s)):
            guard format.matches(s) else {
                return .failure(.init(s.isEmpty && format.minLength > 0 && optional
                                      ? "expected \(format.expected), got \"\"; leave the parameter out instead"
                                      : "expected \(format.expected), got \(format.quoted(s))"))
            }
            return .success(.string(s))
        case let (.enumeration(names), .string(s)):
            guard names.contains(s) else {
                var message = "\"\(s)\" is not one of \(names.map { "\"\($0)\"" }.joined(separator: ", "))"
                if let guess = closestMatch(to: s, in: names) { message += "; did you mean \"\(guess)\"?" }
                return .failure(.init(message))
            }
            return .success(.string(s))
        case let (.numbers(count), .array(items)):
            var values: [Double] = []
            for item in items {
                guard case .number(let n) = item else { return .failure(.init("expected \(kind.typeName), got \(json)")) }
                values.append(n)
            }
            guard values.count == count else {
                return .failure(.init("expected \(count) numbers, got \(values.count)"))
            }
            return .success(.numbers(values))
        case let (.records(fields), .array(items)):
            return Self.validate(records: items, fields: fields)
        default:
            return .failure(.init(json == .null ? "expected \(expected), got null" : "expected \(expected), got \(json.typeName) \(json)"))
        }
    }

    /// An array of objects, each checked field by field: a field's problem is said at its place
    /// (`[1].inpoint: …`), a field a record does not declare is refused (with the nearest name),
    /// a required one must be there, and the others take their defaults.
    private static func validate(records items: [JSONValue], fields: [ParameterDescriptor]) -> Result<ParameterValue, ParameterError> {
        guard !items.isEmpty else { return .failure(.init("expected at least one object, got an empty array")) }
        var records: [[String: ParameterValue]] = []
        var problems: [String] = []
        for (i, item) in items.enumerated() {
            guard case .object(let members) = item else {
                problems.append("[\(i)]: expected an object with \(list(fields.map { "\"\($0.name)\"" }, "and")), got \(item.typeName)")
                continue
            }
            var record: [String: ParameterValue] = [:]
            for (key, value) in members {
                guard let field = fields.first(where: { $0.name == key }) else {
                    var message = "[\(i)]: unknown field \"\(key)\""
                    if let guess = closestMatch(to: key, in: fields.map(\.name)) { message += "; did you mean \"\(guess)\"?" }
                    problems.append(message + " (it takes: \(fields.map(\.name).joined(separator: ", ")))")
                    continue
                }
                guard record[key] == nil else {
                    problems.append("[\(i)].\(key): given twice")
                    continue
                }
                switch field.validate(value) {
                case .success(let v): record[key] = v
                case .failure(let e): problems.append("[\(i)].\(key): \(e.message)")
                }
            }
            for field in fields where record[field.name] == nil && !members.contains(where: { $0.key == field.name }) {
                if let dv = field.defaultValue { record[field.name] = dv } else if field.isRequired { problems.append("[\(i)].\(field.name) is required (\(field.help))") }
            }
            records.append(record)
        }
        return problems.isEmpty ? .success(.records(records)) : .failure(.init(problems.joined(separator: "; ")))
    }

    /// `a, b or c`.
    package static func list(_ items: [String], _ conjunction: String) -> String {
        guard let last = items.last, items.count > 1 else { return items.joined() }
        return items.dropLast().joined(separator: ", ") + " \(conjunction) " + last
    }

    /// Reads a `--set` value by this parameter's declared type.
    public func parseOverride(_ text: String) -> Result<JSONValue, ParameterError> {
        if acceptsAuto, text == "auto" { return .success(.string("auto")) }
        switch kind {
        case .integer, .integerChoice:
            guard let i = Int(text) else { return .failure(.init("expected an integer, got \"\(text)\"")) }
            return .success(.number(Double(i)))
        case .number:
            guard let d = Double(text), d.isFinite else { return .failure(.init("expected a number, got \"\(text)\"")) }
            return .success(.number(d))
        case .boolean:
            switch text {
            case "true": return .success(.bool(true))
            case "false": return .success(.bool(false))
            default: return .failure(.init("expected true or false, got \"\(text)\""))
            }
        case .string, .enumeration:
            return .success(.string(text))
        case .numbers:
            guard let json = try? JSONParser.parse(text) else {
                return .failure(.init("expected a JSON array such as [1,0,0,0], got \"\(text)\""))
            }
            return .success(json)
        case .records(let fields):
            guard let json = try? JSONParser.parse(text) else {
                return .failure(.init("expected a JSON array of objects such as [{\"\(fields.first?.name ?? "name")\": …}], got \"\(text)\""))
            }
            return .success(json)
        }
    }
}

public struct ParameterError: Error, Sendable, Equatable {
    public var message: String
    public init(_ message: String) { self.message = message }
}

/// A validated parameter value.
public enum ParameterValue: Sendable, Hashable, CustomStringConvertible {
    case integer(Int)
    case number(Double)
    case boolean(Bool)
    case string(String)
    case numbers([Double])
    /// An array of objects (``ParameterDescriptor/Kind/records(fields:)``), each field typed.
    case records([[String: ParameterValue]])
    case auto

    public var description: String {
        switch self {
        case .integer(let i): String(i)
        case .number(let d): d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d)
        case .boolean(let b): String(b)
        case .string(let s): JSONValue.quote(s)
        case .numbers(let a): "[" + a.map { ParameterValue.number($0).description }.joined(separator: ",") + "]"
        case .records(let items):
            "[" + items.map { r in "{" + r.keys.sorted().map { "\(JSONValue.quote($0)): \(r[$0]!)" }.joined(separator: ", ") + "}" }.joined(separator: ", ") + "]"
        case .auto: "\"auto\""
        }
    }

    public var json: JSONValue {
        switch self {
        case .integer(let i): .number(Double(i))
        case .number(let d): .number(d)
        case .boolean(let b): .bool(b)
        case .string(let s): .string(s)
        case .numbers(let a): .array(a.map { .number($0) })
        case .records(let items): .array(items.map { r in .object(r.keys.sorted().map { ($0, r[$0]!.json) }) })
        case .auto: .string("auto")
        }
    }
}

/// A node's validated parameters: every declared parameter with a value or default, typed.
public struct Parameters: Sendable {
    public private(set) var values: [String: ParameterValue]
    /// Which parameters the graph (or a `--set`) gave explicitly, not by default.
    public private(set) var explicit: Set<String>

    public init(_ values: [String: ParameterValue] = [:], explicit: Set<String>? = nil) {
        self.values = values
        self.explicit = explicit ?? Set(values.keys)
    }

    public subscript(name: String) -> ParameterValue? { values[name] }

}

/// The closest of `candidates` to `word` by edit distance, if close enough to be a typo.
public func closestMatch(to word: String, in candidates: [String]) -> String? {
    func distance(_ a: [Character], _ b: [Character]) -> Int {
        var previous = Array(0...b.count)
        for (i, ca) in a.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for (j, cb) in b.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (ca == cb ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
    let w = Array(word.lowercased())
    let scored = candidates.map { ($0, distance(w, Array($0.lowercased()))) }
    guard let best = scored.min(by: { $0.1 < $1.1 }) else { return nil }
    return best.1 <= max(2, word.count / 2) ? best.0 : nil
}
