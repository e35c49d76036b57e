/// A rational media time, `value / timescale` seconds, like `CMTime`.
///
/// Exact for audio sample counts (timescale = sample rate) and frame rates (timescale = fps
/// numerator). Converts to GStreamer's nanoseconds only at the engine boundary.
public struct MediaTime: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    public var value: Int64
    public var timescale: Int32

    public static let zero = MediaTime(value: 0, timescale: 1)
    /// The nanosecond timescale GStreamer uses.
    public static let nanosecondTimescale: Int32 = 1_000_000_000

    public init(value: Int64, timescale: Int32) {
        precondition(timescale > 0, "MediaTime timescale must be positive")
        self.value = value
        self.timescale = timescale
    }

    /// Later than any time (`CMTime.positiveInfinity`): a range's duration "to the end".
    public static let positiveInfinity = MediaTime(value: .max, timescale: 1)
    /// Earlier than any time (`CMTime.negativeInfinity`).
    public static let negativeInfinity = MediaTime(value: -.max, timescale: 1)

    /// Whether this is neither ``positiveInfinity`` nor ``negativeInfinity``.
    public var isFinite: Bool { value != .max && value != -.max }

    /// `seconds` in `preferredTimescale` units, rounded to nearest. Infinite seconds, or more than
    /// the timescale can count, give ``positiveInfinity`` or ``negativeInfinity``; NaN has no
    /// time and stops the program, as `Int(Double.nan)` does.
    public init(seconds: Double, preferredTimescale: Int32 = 1_000_000_000) {
        precondition(!seconds.isNaN, "MediaTime(seconds:) of NaN")
        precondition(preferredTimescale > 0, "MediaTime timescale must be positive")
        let units = (seconds * Double(preferredTimescale)).rounded()
        if units >= 9.2e18 {
            self = .positiveInfinity
        } else if units <= -9.2e18 {
            self = .negativeInfinity
        } else {
            self.init(value: Int64(units), timescale: preferredTimescale)
        }
    }

    public init(nanoseconds: UInt64) {
        self.init(value: Int64(clamping: nanoseconds), timescale: Self.nanosecondTimescale)
    }

    public var seconds: Double { Double(value) / Double(timescale) }

    /// Nanoseconds, rounded to nearest (what GStreamer timestamps hold). GStreamer's stamps
    /// cannot be negative: a negative time gives 0 (a writer refuses such a sample before it
    /// gets here).
    public var nanoseconds: UInt64 {
        value <= 0 ? 0 : UInt64(Self.rescale(value, from: Int64(timescale), to: 1_000_000_000))
    }

    /// This time in another timescale, rounded to nearest.
    public func converted(to newTimescale: Int32) -> MediaTime {
        MediaTime(value: Self.rescale(value, from: Int64(timescale), to: Int64(newTimescale)), timescale: newTimescale)
    }

    /// `value * to / from`, rounded half away from zero, without intermediate overflow; a result
    /// past what Int64 holds saturates.
    static func rescale(_ value: Int64, from: Int64, to: Int64) -> Int64 {
        if from == to { return value }
        let (hi, lo) = value.magnitude.multipliedFullWidth(by: UInt64(to))
        // A quotient past 64 bits saturates (to an infinity's value).
        guard hi < UInt64(from) else { return value < 0 ? -.max : .max }
        let (q, r) = UInt64(from).dividingFullWidth((hi, lo))
        let rounded = r >= (UInt64(from) + 1) / 2 && q < .max ? q + 1 : q
        let magnitude = Int64(clamping: rounded)
        return value < 0 ? -magnitude : magnitude
    }

    /// The sum; an infinity, or a sum past what the timescale can count, saturates to one.
    public static func + (a: MediaTime, b: MediaTime) -> MediaTime {
        if !a.isFinite || !b.isFinite { return !a.isFinite ? a : b }
        let ts = max(a.timescale, b.timescale)
        let (sum, overflow) = a.converted(to: ts).value.addingReportingOverflow(b.converted(to: ts).value)
        if overflow || sum == .max || sum == -.max { return a.value < 0 ? .negativeInfinity : .positiveInfinity }
        return MediaTime(value: sum, timescale: ts)
    }

    public static func - (a: MediaTime, b: MediaTime) -> MediaTime {
        a + MediaTime(value: b.value == .min ? .max : -b.value, timescale: b.timescale)
    }

    public static func < (a: MediaTime, b: MediaTime) -> Bool {
        // Cross-multiplication in 128 bits: exact for any two timescales.
        let l = a.value.multipliedFullWidth(by: Int64(b.timescale))
        let r = b.value.multipliedFullWidth(by: Int64(a.timescale))
        return l.high != r.high ? l.high < r.high : l.low < r.low
    }

    public static func == (a: MediaTime, b: MediaTime) -> Bool {
        !(a < b) && !(b < a)
    }

    public func hash(into hasher: inout Hasher) {
        // Equal times in different timescales must hash alike: hash the reduced fraction.
        var g = Self.gcd(value.magnitude, UInt64(timescale))
        if g == 0 { g = 1 }
        hasher.combine(value / Int64(g))
        hasher.combine(Int64(timescale) / Int64(g))
    }

    static func gcd(_ a: UInt64, _ b: UInt64) -> UInt64 {
        var (a, b) = (a, b)
        while b != 0 { (a, b) = (b, a % b) }
        return a
    }

    public var description: String {
        "\(value)/\(timescale) (\(seconds) s)"
    }
}
