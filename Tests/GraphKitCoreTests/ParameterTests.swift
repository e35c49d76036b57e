import GraphKit
import Nodes
import Testing

/// One declaration gives a parameter's descriptor and its typed reading: they cannot disagree.
@Suite struct ParameterTests {
    enum Speed: String, ParameterEnum { case slow, fast }

    static let count = Parameter<Int>("count", 1...10, default: 3, help: "")
    static let ratio = OptionalParameter<Double>("ratio", 0...1, help: "")
    static let speed = Parameter<Speed>("speed", default: .fast, help: "")
    static let rate = AutoParameter<Int>("rate", 1...100, default: .auto, help: "")
    static let path = RequiredParameter<String>("path", help: "")

    @Test func theDescriptorComesFromTheDeclaration() {
        #expect(Self.count.descriptor.kind == .integer(1...10))
        #expect(Self.count.descriptor.defaultValue == .integer(3))
        #expect(Self.speed.descriptor.kind == .enumeration(["slow", "fast"]))
        #expect(Self.rate.descriptor.acceptsAuto && Self.rate.descriptor.defaultValue == .auto)
        #expect(Self.ratio.descriptor.optional && !Self.ratio.descriptor.isRequired)
        #expect(Self.path.descriptor.isRequired)
    }

    @Test func readingGivesTheValueOrTheDefaultTyped() throws {
        let given = Parameters(["count": .integer(7), "ratio": .number(0.5), "speed": .string("slow"), "rate": .integer(42), "path": .string("a.wav")])
        #expect(given[Self.count] == 7)
        #expect(given[Self.ratio] == 0.5)
        #expect(given[Self.speed] == .slow)
        #expect(given[Self.rate] == .value(42))
        #expect(try given.value(Self.path) == "a.wav")
        let none = Parameters()
        #expect(none[Self.count] == 3)
        #expect(none[Self.ratio] == nil)
        #expect(none[Self.speed] == .fast)
        #expect(none[Self.rate] == .auto)
        // Only Parameters made by hand can lack a required one; the read says which.
        #expect(throws: GraphError.self) { try none.value(Self.path) }
    }

    /// Every built-in node: each default is valid for its own declaration, and no parameter is
    /// declared twice.
    @Test(arguments: NodeRegistry.builtIn.typeNames)
    func everyBuiltInDeclarationIsConsistent(_ type: String) throws {
        let d = try #require(NodeRegistry.builtIn.lookup(type)).descriptor
        for p in d.parameters {
            if let value = p.defaultValue {
                guard case .success(let checked) = p.validate(value.json) else {
                    Issue.record("\(type).\(p.name): the default \(value) does not validate against its own kind")
                    continue
                }
                #expect(checked == value, "\(type).\(p.name)")
            }
        }
        let names = Set(d.parameters.map(\.name))
        #expect(names.count == d.parameters.count, "\(type) declares a parameter twice")
    }
    /// The rule kinds no built-in node uses yet, for plugin authors: all-or-none, and a negated
    /// condition, each reported at the parameter to change.
    @Test func allOrNoneAndNegatedConditionsAreEnforced() {
        let x = OptionalParameter<Int>("x", 0...10, help: "x"), y = OptionalParameter<Int>("y", 0...10, help: "y")
        let together = ParameterRule.allOrNone(x, y)
        #expect(together.problems(in: Parameters([:])).isEmpty)
        #expect(together.problems(in: Parameters(["x": .integer(1), "y": .integer(2)])).isEmpty)
        let missing = together.problems(in: Parameters(["x": .integer(1)]))
        #expect(missing.map(\.parameter) == ["y"])
        #expect(missing.map(\.message) == ["give all of x and y, or none (missing: y)"])

        let image = OptionalParameter<String>("image", help: "a picture")
        let notBoth = ParameterRule.when(.given(x), require: !ParameterCondition.given(image))
        #expect(notBoth.problems(in: Parameters(["x": .integer(1)])).isEmpty)
        #expect(notBoth.problems(in: Parameters(["image": .string("a.png")])).isEmpty)
        let both = notBoth.problems(in: Parameters(["x": .integer(1), "image": .string("a.png")]))
        #expect(both.map(\.parameter) == ["image"])
        #expect(both.map(\.message) == ["image must be left out when x is given"])
        #expect(!(!ParameterCondition.given(image)) == .given(image))
    }
}
