import ArgumentParser
import GraphKit

/// Every number graphctl takes on its command line, read one way: a finite number within the
/// range its option takes, or a usage error (64) naming the option, the range and what was given.
/// ArgumentParser's own `Double` reads `nan`, `inf` and `1e400` (infinity) as numbers: a NaN
/// `--start` stopped the process (a NaN has no media time), and a `--segment-duration` of 1e-20
/// made the segment cut loop for ever. Options declare `transform: NumberArgument.seconds(…)`, so
/// each is checked before the command runs. (Whole-number options, `--jobs`, are ArgumentParser's
/// `Int`, which refuses what is not one, and are checked in their command's `validate()`.)
enum NumberArgument {
    /// Why a number was refused, as ArgumentParser prints it after "The value 'X' is invalid for
    /// '--option <value>'".
    struct Refusal: Error, CustomStringConvertible {
        var description: String
    }

    /// `text` as a number of seconds from `range.lowerBound` to `range.upperBound`.
    static func seconds(_ option: String, in range: ClosedRange<Double>) -> @Sendable (String) throws -> Double {
        { text in try number(text, option: option, in: range, unit: " seconds") }
    }

    /// `text` as a number within the range a node's parameter declares (its descriptor's: the
    /// option and the graph take the same values).
    static func range(_ option: String, of parameter: Parameter<Double>) -> @Sendable (String) throws -> Double {
        guard case .number(let range) = parameter.descriptor.kind else { preconditionFailure("\(parameter.descriptor.name) is not a number") }
        return { text in try number(text, option: option, in: range) }
    }

    /// `text` as a finite number within `range`; `unit` follows the bounds in the message.
    static func number(_ text: String, option: String, in range: ClosedRange<Double>, unit: String = "") throws -> Double {
        let shown = { (v: Double) in v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(v) }
        let bounds = range.upperBound == .greatestFiniteMagnitude
            ? "\(shown(range.lowerBound))\(unit) or more" : "from \(shown(range.lowerBound)) to \(shown(range.upperBound))\(unit)"
        // Swift's Double(String) reads "nan", "inf", "infinity" and hexadecimal floats, and
        // rounds 1e400 to infinity: only a finite result counts.
        guard let n = Double(text), n.isFinite else {
            throw Refusal(description: "\(option) takes a finite number \(bounds)")
        }
        guard range.contains(n) else { throw Refusal(description: "\(option) takes a number \(bounds)") }
        return n
    }
}
