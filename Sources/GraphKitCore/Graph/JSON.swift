/// A JSON value that keeps object key order and duplicate keys, so that the loader can report
/// "node id given twice" and print documents in the order their author wrote them.
public enum JSONValue: Sendable, Hashable, CustomStringConvertible {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([(key: String, value: JSONValue)])

    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case let (.bool(x), .bool(y)): return x == y
        case let (.number(x), .number(y)): return x == y
        case let (.string(x), .string(y)): return x == y
        case let (.array(x), .array(y)): return x == y
        case let (.object(x), .object(y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(description)
    }

    /// The value of the first member named `key`, for objects.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members.first { $0.key == key }?.value }
        return nil
    }

    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number(let n): n == n.rounded() ? "an integer" : "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// Compact JSON text.
    public var description: String {
        switch self {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .number(let n):
            // JSON has no NaN or infinity: null, as JavaScript's JSON.stringify writes them.
            guard n.isFinite else { return "null" }
            if n == n.rounded(), abs(n) < 1e15 { return String(Int64(n)) }
            return String(n)
        case .string(let s): return JSONValue.quote(s)
        case .array(let a): return "[" + a.map(\.description).joined(separator: ",") + "]"
        case .object(let m): return "{" + m.map { JSONValue.quote($0.key) + ":" + $0.value.description }.joined(separator: ",") + "}"
        }
    }

    public static func quote(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            // C0 must be escaped (RFC 8259); DEL and C1 may be, and are: JSON printed on a
            // terminal then sends no control character (`graphctl probe --json`).
            case _ where u.value < 0x20 || (0x7F...0x9F).contains(u.value): out += "\\u" + hex4(u.value)
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }
}

private func hex4(_ value: UInt32) -> String {
    let hex = String(value, radix: 16)
    return String(repeating: "0", count: max(0, 4 - hex.count)) + hex
}

/// A strict JSON parser (RFC 8259) that reports the line and column of the first error.
public struct JSONParser {
    public struct SyntaxError: Error, Equatable, CustomStringConvertible {
        public var line: Int
        public var column: Int
        public var message: String
        public var description: String { "line \(line), column \(column): \(message)" }
    }

    private let bytes: [UInt8]
    private var index = 0

    public static func parse(_ text: String) throws(SyntaxError) -> JSONValue {
        var parser = JSONParser(bytes: Array(text.utf8))
        return try parser.parseDocument()
    }

    public static func parse(bytes: [UInt8]) throws(SyntaxError) -> JSONValue {
        var parser = JSONParser(bytes: bytes)
        return try parser.parseDocument()
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private mutating func parseDocument() throws(SyntaxError) -> JSONValue {
        // A UTF-8 byte-order mark, which some editors write first, is not part of the text
        // (RFC 8259 lets a parser ignore it, and Python's, Foundation's and jq do).
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
        skipWhitespace()
        let value = try parseValue(depth: 0)
        skipWhitespace()
        if index < bytes.count { throw error("unexpected text after the JSON value") }
        return value
    }

    private func error(_ message: String, at position: Int? = nil) -> SyntaxError {
        let end = min(position ?? index, bytes.count)
        var line = 1, column = 1
        var i = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0  // the mark takes no column
        while i < end {
            if bytes[i] == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if bytes[i] & 0xC0 != 0x80 {
                column += 1
            }
            i += 1
        }
        return SyntaxError(line: line, column: column, message: message)
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    private func describeNext() -> String {
        guard index < bytes.count else { return "end of input" }
        let b = bytes[index]
        return b >= 0x20 && b < 0x7F ? "'\(Character(UnicodeScalar(b)))'" : "byte 0x\(String(b, radix: 16))"
    }

    private mutating func parseValue(depth: Int) throws(SyntaxError) -> JSONValue {
        guard depth < 512 else { throw error("nesting too deep") }
        guard index < bytes.count else { throw error("expected a value, found end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth)
        case UInt8(ascii: "["): return try parseArray(depth: depth)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectWord("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectWord("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectWord("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("expected a value, found \(describeNext())")
        }
    }

    private mutating func expectWord(_ word: StaticString) throws(SyntaxError) {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count,
              word.withUTF8Buffer({ w in w.indices.allSatisfy { bytes[index + $0] == w[$0] } }) else {
            throw error("expected a value, found \(describeNext())")
        }
        index += count
    }

    private mutating func parseObject(depth: Int) throws(SyntaxError) -> JSONValue {
        index += 1
        var members: [(key: String, value: JSONValue)] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw error("expected a key in double quotes, found \(describeNext())")
            }
            let key = try parseString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw error("expected ':' after key \"\(key)\", found \(describeNext())")
            }
            index += 1
            skipWhitespace()
            members.append((key, try parseValue(depth: depth + 1)))
            skipWhitespace()
            guard index < bytes.count else { throw error("expected ',' or '}', found end of input") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
            throw error("expected ',' or '}', found \(describeNext())")
        }
    }

    private mutating func parseArray(depth: Int) throws(SyntaxError) -> JSONValue {
        index += 1
        var items: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(items)
        }
        while true {
            skipWhitespace()
            items.append(try parseValue(depth: depth + 1))
            skipWhitespace()
            guard index < bytes.count else { throw error("expected ',' or ']', found end of input") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
            throw error("expected ',' or ']', found \(describeNext())")
        }
    }

    private mutating func parseString() throws(SyntaxError) -> String {
        let start = index
        // Most strings (keys, ids, types) have no escape: made straight from the bytes.
        // ASCII needs no validation (the usual case); other bytes are validated below.
        var end = start + 1, ascii = true
        while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\"), bytes[end] >= 0x20 {
            ascii = ascii && bytes[end] < 0x80
            end += 1
        }
        if ascii, end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            let s = bytes.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[start + 1..<end]), as: UTF8.self) }
            index = end + 1
            return s
        }
        index += 1
        var out = [UInt8]()
        while true {
            guard index < bytes.count else { throw error("unterminated string", at: start) }
            let b = bytes[index]
            if b == UInt8(ascii: "\"") { index += 1; break }
            if b < 0x20 { throw error("control character in string") }
            if b == UInt8(ascii: "\\") {
                index += 1
                guard index < bytes.count else { throw error("unterminated string", at: start) }
                let e = bytes[index]
                index += 1
                switch e {
                case UInt8(ascii: "\""): out.append(0x22)
                case UInt8(ascii: "\\"): out.append(0x5C)
                case UInt8(ascii: "/"): out.append(0x2F)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try parseHex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                            throw error("unpaired surrogate in \\u escape")
                        }
                        index += 2
                        let low = try parseHex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw error("unpaired surrogate in \\u escape") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let u = Unicode.Scalar(scalar) else { throw error("invalid \\u escape") }
                    out.append(contentsOf: Array(String(u).utf8))
                default:
                    throw error("invalid escape '\\\(Character(UnicodeScalar(e)))'", at: index - 2)
                }
            } else {
                out.append(b)
                index += 1
            }
        }
        guard let s = String(validating: out, as: UTF8.self) else { throw error("invalid UTF-8 in string", at: start) }
        return s
    }

    private mutating func parseHex4() throws(SyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("invalid \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let b = bytes[index]
            let d: UInt32
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(b - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(b - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(b - UInt8(ascii: "A") + 10)
            default: throw error("invalid \\u escape")
            }
            v = v * 16 + d
            index += 1
        }
        return v
    }

    private mutating func parseNumber() throws(SyntaxError) -> JSONValue {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        func digits(_ p: inout JSONParser) -> Int {
            let s = p.index
            while p.index < p.bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(p.bytes[p.index]) { p.index += 1 }
            return p.index - s
        }
        guard index < bytes.count else { throw error("expected a digit, found end of input") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                throw error("leading zeros are not allowed in numbers", at: start)
            }
        } else if digits(&self) == 0 {
            throw error("expected a digit, found \(describeNext())")
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            if digits(&self) == 0 { throw error("expected a digit after '.', found \(describeNext())") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            if digits(&self) == 0 { throw error("expected a digit in exponent, found \(describeNext())") }
        }
        // A whole number of up to 15 digits is exact as a Double: no text to make and read.
        if index - start <= 15, !bytes[start..<index].contains(where: { $0 == UInt8(ascii: ".") || $0 | 0x20 == UInt8(ascii: "e") }) {
            var whole = 0
            for b in bytes[start..<index] where b != UInt8(ascii: "-") { whole = whole * 10 + Int(b - UInt8(ascii: "0")) }
            return .number(bytes[start] == UInt8(ascii: "-") ? -Double(whole) : Double(whole))
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard let value = Double(text) else { throw error("invalid number", at: start) }
        return .number(value)
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self = .object(elements.map { ($0.0, $0.1) }) }
    public init(nilLiteral: ()) { self = .null }
}
