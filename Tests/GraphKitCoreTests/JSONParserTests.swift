import Testing
@testable import GraphKitCore
import GraphKit

@Suite struct JSONParserTests {
    @Test func keepsOrderAndDuplicateKeys() throws {
        let v = try JSONParser.parse(#"{"b": 1, "a": [true, null, -2.5e1], "b": "x\u00e9\n"}"#)
        guard case .object(let members) = v else { Issue.record("not an object"); return }
        #expect(members.map(\.key) == ["b", "a", "b"])
        #expect(members[1].value == [true, nil, -25.0])
        #expect(members[2].value == .string("xé\n"))
        #expect(v.description == #"{"b":1,"a":[true,null,-25],"b":"xé\n"}"#)
    }

    @Test(arguments: [
        ("{\n  \"a\": 1,\n}", 3, 1, "expected a key in double quotes, found '}'"),
        ("{\"a\" 1}", 1, 6, "expected ':' after key \"a\", found '1'"),
        ("[1, 2", 1, 6, "expected ',' or ']', found end of input"),
        ("{\"a\": 01}", 1, 7, "leading zeros are not allowed in numbers"),
        ("{\"a\": \"x}", 1, 7, "unterminated string"),
        ("nul", 1, 1, "expected a value, found 'n'"),
        ("{} x", 1, 4, "unexpected text after the JSON value"),
    ])
    func reportsLineAndColumn(_ text: String, _ line: Int, _ column: Int, _ message: String) {
        #expect(throws: JSONParser.SyntaxError(line: line, column: column, message: message)) {
            try JSONParser.parse(text)
        }
    }
    /// A UTF-8 byte-order mark first (some editors write one) is not text: accepted, as common
    /// JSON parsers accept it, and columns count from after it. Anywhere else it is an error.
    @Test func aByteOrderMarkFirstIsAccepted() throws {
        let mark: [UInt8] = [0xEF, 0xBB, 0xBF]
        #expect(try JSONParser.parse(bytes: mark + Array(#"{"a": [1]}"#.utf8)) == .object([("a", [1.0])]))
        #expect(throws: JSONParser.SyntaxError(line: 1, column: 7, message: "leading zeros are not allowed in numbers")) {
            try JSONParser.parse(bytes: mark + Array("{\"a\": 01}".utf8))
        }
        #expect(throws: JSONParser.SyntaxError(line: 1, column: 7, message: "expected a value, found byte 0xef")) {
            try JSONParser.parse(bytes: Array("{\"a\": ".utf8) + mark + Array("1}".utf8))
        }
    }
}

@Suite struct JSONParserFastPathTests {
    /// Whole numbers of up to 15 characters are read without text; the rest as before.
    @Test(arguments: ["0", "-0", "7", "-123", "999999999999999", "-99999999999999", "1234567890123456",
                      "9007199254740993", "1.5", "-2.5e3", "1E2", "0.1", "123456789012345678901234567890"])
    func numbersReadAsDoubleReadsThem(_ text: String) throws {
        let v = try JSONParser.parse(text)
        #expect(v == .number(Double(text)!))
        if case .number(let n) = v { #expect(n.sign == Double(text)!.sign) }
    }

    @Test func stringsWithAndWithoutEscapes() throws {
        #expect(try JSONParser.parse(#"["plain", "é ü", "a\"b", "tab\there", "\u00e9", ""]"#)
                == ["plain", "é ü", "a\"b", "tab\there", "é", ""])
    }

    @Test func invalidUTF8AndControlCharactersAreSyntaxErrors() {
        #expect(throws: JSONParser.SyntaxError(line: 1, column: 2, message: "invalid UTF-8 in string")) {
            try JSONParser.parse(bytes: Array("[\"ab".utf8) + [0xC3, 0x28] + Array("\"]".utf8))
        }
        #expect(throws: JSONParser.SyntaxError(line: 1, column: 4, message: "control character in string")) {
            try JSONParser.parse(bytes: Array("[\"a".utf8) + [0x01] + Array("\"]".utf8))
        }
        #expect(throws: JSONParser.SyntaxError(line: 1, column: 2, message: "expected a value, found 't'")) {
            try JSONParser.parse("[tru]")
        }
    }
}
