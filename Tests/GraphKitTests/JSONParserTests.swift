import Testing
@testable import GraphKit

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
}
