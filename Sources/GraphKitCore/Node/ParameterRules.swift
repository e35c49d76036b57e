/// A statement about a node's parameters, as data: the loader evaluates it, `graphctl inspect`
/// prints it and `graphctl schema` turns it into JSON Schema.
///
/// ```swift
/// .given(width)                 // the graph gives width
/// .equals(profile, .baseline)   // profile is "baseline" (given, or by default)
/// .nonEmpty(text)               // text is not ""
/// !.given(image)
/// ```
public struct ParameterCondition: Sendable, Hashable, CustomStringConvertible {
    public enum Test: Sendable, Hashable {
        /// The graph (or a `--set`) gives the parameter.
        case given(String)
        /// The parameter's value, given or by default, is this one.
        case equals(String, ParameterValue)
        /// The parameter's value, given or by default, is a string other than "".
        case nonEmpty(String)
    }

    public let test: Test
    /// Whether the condition is the test's negation (`!.given(image)`).
    public let negated: Bool

    public init(_ test: Test, negated: Bool = false) {
        self.test = test
        self.negated = negated
    }

    public static func given(_ parameter: some ParameterDeclaration) -> Self { Self(.given(parameter.name)) }

    public static func equals<Value>(_ parameter: Parameter<Value>, _ value: Value) -> Self {
        Self(.equals(parameter.name, value.parameterValue))
    }

    public static func nonEmpty(_ parameter: Parameter<String>) -> Self { Self(.nonEmpty(parameter.name)) }

    public static prefix func ! (condition: Self) -> Self { Self(condition.test, negated: !condition.negated) }

    /// The parameter it reads, where a problem is reported.
    public var parameter: String {
        switch test {
        case .given(let p), .equals(let p, _), .nonEmpty(let p): p
        }
    }

    public func holds(in p: Parameters) -> Bool {
        let holds = switch test {
        case .given(let name): p.explicit.contains(name)
        case .equals(let name, let value): p[name] == value
        case .nonEmpty(let name): if case .string(let s)? = p[name] { !s.isEmpty } else { false }
        }
        return holds != negated
    }

    /// As a statement: `profile is "baseline"`.
    public var description: String {
        switch (test, negated) {
        case (.given(let p), false): "\(p) is given"
        case (.given(let p), true): "\(p) is not given"
        case (.equals(let p, let v), false): "\(p) is \(v)"
        case (.equals(let p, let v), true): "\(p) is not \(v)"
        case (.nonEmpty(let p), false): "\(p) is not empty"
        case (.nonEmpty(let p), true): "\(p) is empty"
        }
    }

    /// As a demand: `bframes must be 0`.
    public var requirement: String {
        switch (test, negated) {
        case (.given(let p), false): "\(p) is required"
        case (.given(let p), true): "\(p) must be left out"
        case (.equals(let p, let v), false): "\(p) must be \(v)"
        case (.equals(let p, let v), true): "\(p) must not be \(v)"
        case (.nonEmpty(let p), false): "\(p) must not be empty"
        case (.nonEmpty(let p), true): "\(p) must be empty"
        }
    }
}

/// A rule across a node's parameters, as data. The loader reports each broken rule at the JSON
/// path of the parameter to change; `graphctl schema` states it in JSON Schema.
///
/// ```swift
/// rules: [
///     .exclusive(gain, db),                                  // at most one
///     .allOrNone(x, y, width, height),                       // together or not at all
///     .oneOf([aspect], [x, y, width, height]),               // exactly one form
///     .when(.equals(profile, .baseline), require: .equals(bframes, 0), because: "…"),
/// ]
/// ```
public struct ParameterRule: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// At most one of these is given.
        case exclusive([String])
        /// All of these are given, or none.
        case allOrNone([String])
        /// The parameters given are exactly one of these forms, complete.
        case oneOf([[String]])
        /// When the first condition holds, so must the second.
        case implication(ParameterCondition, ParameterCondition, reason: String?)
    }

    public let kind: Kind

    public init(_ kind: Kind) { self.kind = kind }

    public static func exclusive(_ parameters: any ParameterDeclaration...) -> Self {
        Self(.exclusive(parameters.map(\.name)))
    }

    public static func allOrNone(_ parameters: any ParameterDeclaration...) -> Self {
        Self(.allOrNone(parameters.map(\.name)))
    }

    public static func oneOf(_ forms: [any ParameterDeclaration]...) -> Self {
        Self(.oneOf(forms.map { $0.map(\.name) }))
    }

    public static func when(_ condition: ParameterCondition, require requirement: ParameterCondition,
                            because reason: String? = nil) -> Self {
        Self(.implication(condition, requirement, reason: reason))
    }

    /// Every parameter the rule names.
    public var parameters: [String] {
        switch kind {
        case .exclusive(let names), .allOrNone(let names): names
        case .oneOf(let forms): forms.flatMap { $0 }
        case .implication(let c, let r, _): [c.parameter, r.parameter]
        }
    }

    /// The parameters a `--set` of `name` replaces when the graph file gave them: the rest of
    /// its exclusive group, or the other forms.
    public func replaced(bySetting name: String) -> [String] {
        switch kind {
        case .exclusive(let names) where names.contains(name): names.filter { $0 != name }
        case .oneOf(let forms) where forms.contains { $0.contains(name) }: forms.filter { !$0.contains(name) }.flatMap { $0 }
        default: []
        }
    }

    /// What breaks the rule, each with the parameter to change (nil: the node as a whole).
    public func problems(in p: Parameters) -> [(parameter: String?, message: String)] {
        switch kind {
        case .exclusive(let names):
            let given = names.filter(p.explicit.contains)
            guard given.count > 1 else { return [] }
            let message = given.count == 2 ? "give \(given[0]) or \(given[1]), not both"
                : "give only one of \(ParameterDescriptor.list(given, "and"))"
            return [(given[1], message)]
        case .allOrNone(let names):
            let missing = names.filter { !p.explicit.contains($0) }
            guard !missing.isEmpty, missing.count < names.count else { return [] }
            return [(missing[0], "give all of \(ParameterDescriptor.list(names, "and")), or none (missing: \(missing.joined(separator: ", ")))")]
        case .oneOf(let forms):
            let touched = forms.filter { $0.contains(where: p.explicit.contains) }
            if touched.count > 1 {
                let first = touched[1].first(where: p.explicit.contains)
                return [(first, "give \(Self.describe(touched[0])), or \(Self.describe(touched[1])), not both")]
            }
            let choices = Self.describe(forms)
            guard let form = touched.first else { return [(nil, "give \(choices)")] }
            let missing = form.filter { !p.explicit.contains($0) }
            guard let first = missing.first else { return [] }
            return [(first, "give \(choices) (missing: \(missing.joined(separator: ", ")))")]
        case let .implication(condition, requirement, reason):
            guard condition.holds(in: p), !requirement.holds(in: p) else { return [] }
            return [(requirement.parameter, "\(requirement.requirement) when \(condition)" + (reason.map { " (\($0))" } ?? ""))]
        }
    }

    /// `x, y, width and height`.
    static func describe(_ form: [String]) -> String { ParameterDescriptor.list(form, "and") }

    /// `aspect, or all of x, y, width and height`.
    static func describe(_ forms: [[String]]) -> String {
        forms.map { $0.count == 1 ? $0[0] : "all of \(describe($0))" }.joined(separator: ", or ")
    }

    public var description: String {
        switch kind {
        case .exclusive(let names): "at most one of \(ParameterDescriptor.list(names, "and"))"
        case .allOrNone(let names): "all of \(ParameterDescriptor.list(names, "and")), or none"
        case .oneOf(let forms): "exactly one of: \(Self.describe(forms))"
        case let .implication(c, r, reason): "\(r.requirement) when \(c)" + (reason.map { " (\($0))" } ?? "")
        }
    }
}
