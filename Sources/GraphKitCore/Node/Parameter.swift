/// A node's parameter, declared once: the declaration gives both the descriptor that the loader,
/// `graphctl inspect` and `graphctl schema` read (name, type, range, default, help) and the typed
/// reading of the validated value, so the two cannot disagree and reading needs no unwrap.
///
/// ```swift
/// static let bitrate = Parameter<Int>("bitrate", 8_000...512_000, default: 96_000, help: "bits per second")
/// enum Encoder: String, ParameterEnum { case avenc_aac, voaacenc }
/// static let encoder = Parameter<Encoder>("encoder", default: .avenc_aac, help: "the GStreamer encoder")
/// static let device = OptionalParameter<String>("device", help: "…")          // String?
/// static let bitrate = AutoParameter<Int>("bitrate", 10_000...200_000_000, default: .auto, help: "…")
/// static let path = RequiredParameter<String>("path", help: "…")              // try parameters.value(path)
///
/// public static let descriptor = NodeDescriptor(…, parameters: [bitrate, encoder], …)
/// let rate = context.parameters[Self.bitrate]     // Int
/// ```
public protocol ParameterDeclaration: Sendable {
    var descriptor: ParameterDescriptor { get }
}

extension ParameterDeclaration {
    public var name: String { descriptor.name }
}

extension ParameterDescriptor: ParameterDeclaration {
    public var descriptor: ParameterDescriptor { self }
}

/// A Swift type a parameter's validated value reads as.
public protocol ParameterValueConvertible: Sendable {
    /// The value, if `value` is of this type (the loader only lets such values through).
    init?(parameterValue value: ParameterValue)
    var parameterValue: ParameterValue { get }
}

extension Int: ParameterValueConvertible {
    public init?(parameterValue value: ParameterValue) {
        switch value {
        case .integer(let i): self = i
        case .number(let d) where d == d.rounded() && abs(d) < 9.2e18: self = Int(d)
        case .number, .boolean, .string, .numbers, .records, .auto: return nil
        }
    }
    public var parameterValue: ParameterValue { .integer(self) }
}

extension Double: ParameterValueConvertible {
    public init?(parameterValue value: ParameterValue) {
        switch value {
        case .integer(let i): self = Double(i)
        case .number(let d): self = d
        case .boolean, .string, .numbers, .records, .auto: return nil
        }
    }
    public var parameterValue: ParameterValue { .number(self) }
}

extension Bool: ParameterValueConvertible {
    public init?(parameterValue value: ParameterValue) {
        guard case .boolean(let b) = value else { return nil }
        self = b
    }
    public var parameterValue: ParameterValue { .boolean(self) }
}

extension String: ParameterValueConvertible {
    public init?(parameterValue value: ParameterValue) {
        guard case .string(let s) = value else { return nil }
        self = s
    }
    public var parameterValue: ParameterValue { .string(self) }
}

extension Array: ParameterValueConvertible where Element == Double {
    public init?(parameterValue value: ParameterValue) {
        guard case .numbers(let a) = value else { return nil }
        self = a
    }
    public var parameterValue: ParameterValue { .numbers(self) }
}

/// A list of objects' fields, as a ``ParameterDescriptor/Kind/records(fields:)`` parameter reads:
/// one dictionary of typed values per object, in order (a field left out has its default).
public struct ParameterRecords: ParameterValueConvertible, Sendable, Hashable {
    public var items: [[String: ParameterValue]]
    public init(_ items: [[String: ParameterValue]]) { self.items = items }
    public init?(parameterValue value: ParameterValue) {
        guard case .records(let items) = value else { return nil }
        self.items = items
    }
    public var parameterValue: ParameterValue { .records(items) }
}

/// A parameter whose values are a closed list of names: a Swift enum with `String` raw values.
/// `graphctl inspect` lists the cases; the loader suggests the nearest on a typo.
public protocol ParameterEnum: RawRepresentable, CaseIterable, ParameterValueConvertible where RawValue == String {}

extension ParameterEnum {
    public init?(parameterValue value: ParameterValue) {
        guard case .string(let s) = value else { return nil }
        self.init(rawValue: s)
    }
    public var parameterValue: ParameterValue { .string(rawValue) }
    static var names: [String] { allCases.map(\.rawValue) }
}

/// A parameter that may be `"auto"`, for GraphKit to choose (an encoder's bit rate from the frame
/// size, a decoder's own sample format).
public enum Auto<Value: ParameterValueConvertible>: Sendable {
    case auto
    case value(Value)

    var parameterValue: ParameterValue {
        switch self {
        case .auto: .auto
        case .value(let v): v.parameterValue
        }
    }
}

extension Auto: Equatable where Value: Equatable {}

/// A parameter with a default: reads as its value.
public struct Parameter<Value: ParameterValueConvertible>: ParameterDeclaration {
    public let descriptor: ParameterDescriptor
    let defaultValue: Value

    init(_ descriptor: ParameterDescriptor, default value: Value) {
        self.descriptor = descriptor
        self.defaultValue = value
    }

}

extension Parameter where Value == Int {
    public init(_ name: String, _ range: ClosedRange<Int>, default value: Int, help: String) {
        self.init(ParameterDescriptor(name, .integer(range), default: .integer(value), help: help), default: value)
    }
}

extension Parameter where Value == Int {
    /// An integer that must be one of `choices`.
    public init(_ name: String, oneOf choices: [Int], default value: Int, help: String) {
        self.init(ParameterDescriptor(name, .integerChoice(choices), default: .integer(value), help: help), default: value)
    }
}

extension Parameter where Value == Double {
    public init(_ name: String, _ range: ClosedRange<Double>, default value: Double, help: String) {
        self.init(ParameterDescriptor(name, .number(range), default: .number(value), help: help), default: value)
    }
}

extension Parameter where Value == Bool {
    public init(_ name: String, default value: Bool, help: String) {
        self.init(ParameterDescriptor(name, .boolean, default: .boolean(value), help: help), default: value)
    }
}

extension Parameter where Value == String {
    public init(_ name: String, format: StringFormat = .any, default value: String, help: String) {
        self.init(ParameterDescriptor(name, .string(format), default: .string(value), help: help), default: value)
    }
}

extension Parameter where Value == [Double] {
    public init(_ name: String, count: Int, default value: [Double], help: String) {
        self.init(ParameterDescriptor(name, .numbers(count: count), default: .numbers(value), help: help), default: value)
    }
}

extension Parameter where Value: ParameterEnum {
    public init(_ name: String, default value: Value, help: String) {
        self.init(ParameterDescriptor(name, .enumeration(Value.names), default: value.parameterValue, help: help), default: value)
    }
}

/// A parameter with no default that may be left out (an output that is off): reads as an
/// optional.
public struct OptionalParameter<Value: ParameterValueConvertible>: ParameterDeclaration {
    public let descriptor: ParameterDescriptor
}

extension OptionalParameter where Value == Int {
    /// `multipleOf`: the value must be a multiple of it (2: even).
    public init(_ name: String, _ range: ClosedRange<Int>, multipleOf: Int = 1, help: String) {
        descriptor = ParameterDescriptor(name, .integer(range), optional: true, multipleOf: multipleOf, help: help)
    }
}

extension OptionalParameter where Value == Double {
    public init(_ name: String, _ range: ClosedRange<Double>, help: String) {
        descriptor = ParameterDescriptor(name, .number(range), optional: true, help: help)
    }
}

extension OptionalParameter where Value == String {
    /// `writesFile`: the value is a file the node writes (see ``ParameterDescriptor/writesFile``).
    public init(_ name: String, format: StringFormat = .any, writesFile: Bool = false, help: String) {
        descriptor = ParameterDescriptor(name, .string(format), optional: true, writesFile: writesFile, help: help)
    }
}

/// A parameter that must be given (a file's path): read with `try parameters.value(_:)`, which
/// only a hand-made `Parameters` without it can make throw.
public struct RequiredParameter<Value: ParameterValueConvertible>: ParameterDeclaration {
    public let descriptor: ParameterDescriptor
}

extension RequiredParameter where Value == String {
    /// `writesFile`: the value is a file the node writes (see ``ParameterDescriptor/writesFile``).
    public init(_ name: String, format: StringFormat = .any, writesFile: Bool = false, help: String) {
        descriptor = ParameterDescriptor(name, .string(format), writesFile: writesFile, help: help)
    }
}

extension RequiredParameter where Value == Int {
    public init(_ name: String, _ range: ClosedRange<Int>, multipleOf: Int = 1, help: String) {
        descriptor = ParameterDescriptor(name, .integer(range), multipleOf: multipleOf, help: help)
    }
}

extension RequiredParameter where Value == ParameterRecords {
    /// A non-empty array of objects with `fields` (each a parameter declaration of its own).
    public init(_ name: String, fields: [any ParameterDeclaration], help: String) {
        descriptor = ParameterDescriptor(name, .records(fields: fields.map(\.descriptor)), help: help)
    }
}

/// A parameter that also takes `"auto"`: reads as ``Auto``.
public struct AutoParameter<Value: ParameterValueConvertible>: ParameterDeclaration {
    public let descriptor: ParameterDescriptor
    let defaultValue: Auto<Value>
}

extension AutoParameter where Value == Int {
    public init(_ name: String, _ range: ClosedRange<Int>, default value: Auto<Int>, help: String) {
        descriptor = ParameterDescriptor(name, .integer(range), default: value.parameterValue, acceptsAuto: true, help: help)
        defaultValue = value
    }
}

extension AutoParameter where Value: ParameterEnum {
    public init(_ name: String, default value: Auto<Value>, help: String) {
        descriptor = ParameterDescriptor(name, .enumeration(Value.names), default: value.parameterValue, acceptsAuto: true, help: help)
        defaultValue = value
    }
}

extension Parameters {
    /// A parameter's value: what the graph gave, or its default.
    public subscript<Value>(_ p: Parameter<Value>) -> Value {
        values[p.name].flatMap(Value.init(parameterValue:)) ?? p.defaultValue
    }

    /// An optional parameter's value, nil when the graph left it out.
    public subscript<Value>(_ p: OptionalParameter<Value>) -> Value? {
        values[p.name].flatMap(Value.init(parameterValue:))
    }

    /// An auto parameter's value: `.auto`, or what the graph gave.
    public subscript<Value>(_ p: AutoParameter<Value>) -> Auto<Value> {
        guard let v = values[p.name] else { return p.defaultValue }
        if v == .auto { return .auto }
        return Value(parameterValue: v).map { .value($0) } ?? p.defaultValue
    }

    /// A required parameter's value. The loader never lets a graph through without it; only
    /// `Parameters` made by hand can lack it, and then this says which.
    public func value<Value>(_ p: RequiredParameter<Value>) throws(GraphError) -> Value {
        guard let v = values[p.name].flatMap(Value.init(parameterValue:)) else {
            throw GraphError(.invalidGraph, at: "params.\(p.name)", "required parameter \"\(p.name)\" is missing")
        }
        return v
    }

}
