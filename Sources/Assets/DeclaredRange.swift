import GraphKitCore

/// An integer parameter's range and step, as its node declares them: what ``AssetWriter`` and
/// ``AssetReader`` check settings against before they build a graph, so that a range is written
/// once, in the node (`graphctl inspect` shows the same).
struct DeclaredRange {
    let range: ClosedRange<Int>
    let multipleOf: Int

    init(_ parameter: some ParameterDeclaration) {
        guard case .integer(let range) = parameter.descriptor.kind else {
            preconditionFailure("\(parameter.name) is declared \(parameter.descriptor.kind.typeName), not an integer range")
        }
        self.range = range
        multipleOf = parameter.descriptor.multipleOf
    }

    func allows(_ value: Int) -> Bool { range.contains(value) && value % multipleOf == 0 }

    var span: String { "\(range.lowerBound) to \(range.upperBound)" }

    /// "an even width from 2 to 7680".
    func phrase(_ noun: String) -> String {
        switch multipleOf {
        case 1: "a \(noun) from \(span)"
        case 2: "an even \(noun) from \(span)"
        default: "a \(noun) from \(span) that is a multiple of \(multipleOf)"
        }
    }
}
