// Times a file claims, turned from seconds into ticks: a Double past what the integer holds
// (or NaN) stops the program when converted with `Int64(_:)`, so every such conversion of a
// time that comes from a file or an argument goes through these.

extension Int64 {
    /// `value` rounded to nearest, or the nearest of `Int64.min` and `Int64.max` past them; NaN
    /// is 0.
    package init(saturating value: Double) {
        let r = value.rounded()
        if r.isNaN { self = 0 } else if r >= 9.223372036854775807e18 { self = .max } else if r < -9.223372036854775807e18 { self = .min } else { self = Int64(r) }
    }
}

extension UInt64 {
    /// `value` rounded to nearest, 0 below 0 (and NaN), `UInt64.max` past it.
    package init(saturating value: Double) {
        let r = value.rounded()
        if r.isNaN || r <= 0 { self = 0 } else if r >= 1.8446744073709551615e19 { self = .max } else { self = UInt64(r) }
    }
}

extension Int64 {
    /// `self + other`, or the nearest of `Int64.min` and `Int64.max` past them.
    package func addingSaturated(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }
}
